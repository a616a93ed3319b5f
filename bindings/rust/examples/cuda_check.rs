// SPDX-License-Identifier: Apache-2.0
//! `cargo run --example cuda_check`: the Rust CUDA calls on a real GPU.
//! Allocates device memory through the CUDA runtime (opened with dlopen, so
//! the crate keeps no CUDA dependency), runs every `rngtrk::cuda` call and
//! compares the bits with the CPU calls.  Without a GPU it says why and
//! exits 0 (a skip); any difference exits 1.
use std::ffi::{c_void, CString};
use std::os::raw::{c_char, c_int};

use rngtrk::{cuda, Layout, PhiloxState, SampleSpec};

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

type Malloc = unsafe extern "C" fn(*mut *mut c_void, usize) -> c_int;
type Memcpy = unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> c_int;
type Free = unsafe extern "C" fn(*mut c_void) -> c_int;
type DeviceSync = unsafe extern "C" fn() -> c_int;
const TO_HOST: c_int = 2;
const TO_DEVICE: c_int = 1;

struct Runtime {
    malloc: Malloc,
    memcpy: Memcpy,
    free: Free,
    sync: DeviceSync,
}

fn runtime() -> Option<Runtime> {
    for name in ["libcudart.so", "libcudart.so.13", "libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so"] {
        let c = CString::new(name).ok()?;
        // SAFETY: dlopen/dlsym with NUL-terminated names; the symbols have the
        // CUDA runtime's documented signatures.
        unsafe {
            let h = dlopen(c.as_ptr(), 2 /* RTLD_NOW */);
            if h.is_null() {
                continue;
            }
            let sym = |s: &str| {
                let name = CString::new(s).unwrap(); // alive across the call (older rustc's lint asks)
                dlsym(h, name.as_ptr())
            };
            let (m, c, f, s) = (sym("cudaMalloc"), sym("cudaMemcpy"), sym("cudaFree"), sym("cudaDeviceSynchronize"));
            if m.is_null() || c.is_null() || f.is_null() || s.is_null() {
                continue;
            }
            return Some(Runtime {
                malloc: std::mem::transmute::<*mut c_void, Malloc>(m),
                memcpy: std::mem::transmute::<*mut c_void, Memcpy>(c),
                free: std::mem::transmute::<*mut c_void, Free>(f),
                sync: std::mem::transmute::<*mut c_void, DeviceSync>(s),
            });
        }
    }
    None
}

/// A device buffer of `n` elements of T, freed on drop.
struct DeviceBuffer<'r, T> {
    rt: &'r Runtime,
    ptr: *mut T,
    n: usize,
}

impl<'r, T: Copy + Default> DeviceBuffer<'r, T> {
    fn new(rt: &'r Runtime, n: usize) -> DeviceBuffer<'r, T> {
        let mut p = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; checked below.
        assert_eq!(unsafe { (rt.malloc)(&mut p, n * std::mem::size_of::<T>()) }, 0, "cudaMalloc");
        DeviceBuffer { rt, ptr: p.cast(), n }
    }
    fn upload(&self, host: &[T]) {
        // SAFETY: both hold n elements.
        assert_eq!(
            unsafe {
                (self.rt.memcpy)(self.ptr.cast(), host.as_ptr().cast(), self.n * std::mem::size_of::<T>(), TO_DEVICE)
            },
            0
        );
    }
    fn download(&self) -> Vec<T> {
        let mut host = vec![T::default(); self.n];
        // SAFETY: both hold n elements; cudaMemcpy waits for the default stream.
        assert_eq!(
            unsafe {
                (self.rt.memcpy)(host.as_mut_ptr().cast(), self.ptr.cast(), self.n * std::mem::size_of::<T>(), TO_HOST)
            },
            0
        );
        host
    }
}

impl<T> Drop for DeviceBuffer<'_, T> {
    fn drop(&mut self) {
        // SAFETY: allocated by cudaMalloc, freed once.
        unsafe { (self.rt.free)(self.ptr.cast()) };
    }
}

fn main() {
    if let Err(e) = cuda::available() {
        println!("SKIP: no usable GPU here: {}", e);
        return;
    }
    let rt = runtime().expect("the library sees a GPU, so the CUDA runtime must open");
    let null = std::ptr::null_mut();
    let state = PhiloxState::new(20261123, 16);
    let mut checks = 0;

    // sample, every layout, f32 and u64.
    for layout in [Layout::Stateless, Layout::Nvfuser, Layout::TorchEagerCuda] {
        let spec = SampleSpec::normal(0.5, 2.0).layout(layout);
        let n = 100_003;
        let d = DeviceBuffer::<f32>::new(&rt, n);
        // SAFETY: d holds n f32 of the current device; the default stream; read after a sync.
        unsafe { cuda::sample(&state, &spec, 7, n as u64, d.ptr, null).expect("cuda::sample") };
        let mut cpu = vec![0f32; n];
        rngtrk::sample(&state, &spec, 7, &mut cpu).unwrap();
        assert_eq!(d.download(), cpu, "cuda::sample {:?}", layout);
        checks += 1;
    }
    let d = DeviceBuffer::<u64>::new(&rt, 4097);
    unsafe { cuda::sample(&state, &SampleSpec::bits(), 0, 4097, d.ptr, null).unwrap() };
    let mut cpu = vec![0u64; 4097];
    rngtrk::sample(&state, &SampleSpec::bits(), 0, &mut cpu).unwrap();
    assert_eq!(d.download(), cpu, "cuda::sample u64");
    checks += 1;

    // sample_slice: a box of a (64, 100) tensor.
    let spec = SampleSpec::uniform(-1.0, 1.0);
    let d = DeviceBuffer::<f32>::new(&rt, 10 * 30);
    unsafe { cuda::sample_slice(&state, &spec, &[64, 100], &[20, 55], &[10, 30], d.ptr, null).unwrap() };
    let mut cpu = vec![0f32; 300];
    rngtrk::sample_slice(&state, &spec, &[64, 100], &[20, 55], &[10, 30], &mut cpu).unwrap();
    assert_eq!(d.download(), cpu, "cuda::sample_slice");
    checks += 1;

    // dropout, in place.
    let x: Vec<f32> = (0..50_000).map(|i| i as f32 * 0.25).collect();
    let d = DeviceBuffer::<f32>::new(&rt, x.len());
    d.upload(&x);
    let keep = SampleSpec::bernoulli(0.9);
    unsafe { cuda::dropout(&state, &keep, 3, x.len() as u64, d.ptr, d.ptr, null).unwrap() };
    let mut cpu = vec![0f32; x.len()];
    rngtrk::dropout(&state, &keep, 3, &x, &mut cpu).unwrap();
    assert_eq!(d.download(), cpu, "cuda::dropout");
    checks += 1;

    // Graph-safe: the state read on the device, then advanced there.
    let st = DeviceBuffer::<u64>::new(&rt, 2);
    st.upload(&[state.seed, state.offset]);
    let d = DeviceBuffer::<f32>::new(&rt, 1000);
    unsafe {
        cuda::sample_graphsafe(st.ptr, &spec, 0, 1000, d.ptr, null).unwrap();
        cuda::advance_graphsafe(st.ptr, 1000, null).unwrap();
        (rt.sync)();
    }
    let mut cpu = vec![0f32; 1000];
    rngtrk::sample(&state, &spec, 0, &mut cpu).unwrap();
    assert_eq!(d.download(), cpu, "cuda::sample_graphsafe");
    assert_eq!(st.download(), vec![state.seed, state.offset + 1000], "cuda::advance_graphsafe");
    checks += 2;

    // Misuse is an error before any launch, not a fault.
    let e = unsafe { cuda::sample(&state, &spec, 0, 4, (d.ptr as *mut u8).wrapping_add(1).cast::<f32>(), null) };
    assert_eq!(e.unwrap_err().kind(), rngtrk::ErrorKind::InvalidArgument, "a misaligned pointer is refused");
    checks += 1;
    println!("OK: {} Rust CUDA checks equal the CPU bits", checks);
}
