// SPDX-License-Identifier: Apache-2.0
//! Loading a checkpoint: one call, [`Tracker::load`], told where the
//! checkpoint is ([`CheckpointSource`]) and how to take it
//! ([`LoadOptions`]), as git2-rs passes an options struct.
use std::path::{Path, PathBuf};
use std::ptr;

use crate::error::{check, Error};
use crate::sys;
use crate::tracker::{path_to_c, Tracker};

/// Where [`Tracker::load`] reads a checkpoint from.  It converts from
/// checkpoint bytes (`&[u8]`, `&Vec<u8>`, `&[u8; N]`) and from a path
/// (`&Path`, `&PathBuf`), so `tracker.load(&bytes, ...)` and
/// `tracker.load(&path, ...)` need no variant named.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckpointSource<'a> {
    /// Checkpoint bytes in memory, as [`Tracker::save`] returns them
    /// (`rngtrk_tracker_load`, `rngtrk_tracker_load_flags`).
    Bytes(&'a [u8]),
    /// A checkpoint file, as [`Tracker::save_file`] writes it
    /// (`rngtrk_tracker_load_file`): its header is checked before the rest
    /// is read, so a foreign file is refused without being read whole.
    File(&'a Path),
}

impl<'a> From<&'a [u8]> for CheckpointSource<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        CheckpointSource::Bytes(bytes)
    }
}

impl<'a> From<&'a Vec<u8>> for CheckpointSource<'a> {
    fn from(bytes: &'a Vec<u8>) -> Self {
        CheckpointSource::Bytes(bytes)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for CheckpointSource<'a> {
    fn from(bytes: &'a [u8; N]) -> Self {
        CheckpointSource::Bytes(bytes)
    }
}

impl<'a> From<&'a Path> for CheckpointSource<'a> {
    fn from(path: &'a Path) -> Self {
        CheckpointSource::File(path)
    }
}

impl<'a> From<&'a PathBuf> for CheckpointSource<'a> {
    fn from(path: &'a PathBuf) -> Self {
        CheckpointSource::File(path)
    }
}

/// How [`Tracker::load`] takes a checkpoint; a builder whose
/// [`LoadOptions::new`] (also `Default`) is a plain load.
///
/// ```
/// use rngtrk::{LoadOptions, ParallelRank, SeedFlags, SeedPolicy, Tracker};
/// let mut writer = Tracker::new()?;
/// writer.seed_rank(SeedPolicy::Megatron, 1234, &ParallelRank { tp: 1, ..Default::default() }, SeedFlags::NONE)?;
/// let checkpoint = writer.save()?;
///
/// let mut reader = Tracker::new()?;
/// reader.seed_rank(SeedPolicy::Megatron, 1234, &ParallelRank::default(), SeedFlags::NONE)?;
/// let refused = reader.load(&checkpoint, &LoadOptions::new()).unwrap_err();
/// assert_eq!(refused.kind(), rngtrk::ErrorKind::WrongRank); // tensor-parallel rank 1's streams
/// reader.load(&checkpoint, &LoadOptions::new().any_rank(true))?;
/// assert_eq!(reader.states()?, writer.states()?);
/// # Ok::<(), rngtrk::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LoadOptions {
    any_rank: bool,
}

impl LoadOptions {
    /// A plain load: the checkpoint must come from a rank with this
    /// tracker's streams.
    pub fn new() -> LoadOptions {
        LoadOptions::default()
    }

    /// Whether to take a checkpoint written by another rank
    /// (`RNGTRK_LOAD_ANY_RANK`; default `false`).  A checkpoint that
    /// records who wrote it (format version 2 or 3) is otherwise refused
    /// with `ErrorKind::WrongRank` when this tracker has an origin whose
    /// streams differ; the message names every coordinate that differs.
    pub fn any_rank(mut self, any_rank: bool) -> LoadOptions {
        self.any_rank = any_rank;
        self
    }

    /// The C load flags.
    fn flags(&self) -> u32 {
        if self.any_rank {
            sys::RNGTRK_LOAD_ANY_RANK
        } else {
            0
        }
    }
}

impl Tracker {
    /// Replaces the default and named states (and the origin) by those of
    /// the checkpoint at `source` — bytes or a file ([`CheckpointSource`])
    /// — as `options` say:
    ///
    /// ```
    /// # use rngtrk::{LoadOptions, Tracker};
    /// # let mut tracker = Tracker::new()?;
    /// let bytes = tracker.save()?;
    /// tracker.load(&bytes, &LoadOptions::new())?;
    /// # let path = std::env::temp_dir().join(format!("rngtrk-load-doc-{}.rtck", std::process::id()));
    /// tracker.save_file(&path)?;
    /// tracker.load(&path, &LoadOptions::new().any_rank(true))?;
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), rngtrk::Error>(())
    /// ```
    ///
    /// Everything is validated first: on any error the tracker is exactly
    /// as before.  Errors: `Corrupt`, `UnsupportedVersion`, `WrongRank`
    /// (see [`LoadOptions::any_rank`]), `ForkOrder` (a fork is open), and
    /// for a file `Io` and `InvalidArgument` (a path with a NUL byte).
    pub fn load<'a, S: Into<CheckpointSource<'a>>>(&mut self, source: S, options: &LoadOptions) -> Result<(), Error> {
        let t = self.raw_mut();
        match (source.into(), options.flags()) {
            (CheckpointSource::Bytes(bytes), flags) => {
                let src = if bytes.is_empty() { ptr::null() } else { bytes.as_ptr() };
                // SAFETY: valid handle; `src` is valid for bytes.len() reads
                // (or NULL with length 0).
                check(unsafe {
                    if flags == 0 {
                        sys::rngtrk_tracker_load(t, src, bytes.len())
                    } else {
                        sys::rngtrk_tracker_load_flags(t, src, bytes.len(), flags)
                    }
                })
            }
            (CheckpointSource::File(path), flags) => {
                let c = path_to_c(path)?;
                // SAFETY: valid handle and NUL-terminated path.
                check(unsafe { sys::rngtrk_tracker_load_file(t, c.as_ptr(), flags) })
            }
        }
    }
}
