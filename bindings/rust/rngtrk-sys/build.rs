// SPDX-License-Identifier: Apache-2.0
//! Finds librngtrk to link, or builds it, in this order:
//! 1. with the `bundled` feature: always the build from sources (step 5);
//! 2. the folder in `RNGTRK_LIB_DIR` (linked dynamically);
//! 3. what the `pkg-config` command answers for rngtrk (an installed
//!    rngtrk: `make install`), when its version is one this crate accepts
//!    (src/version_rule.rs, the Python binding's rule); an installed rngtrk
//!    of another version stops the build with one message (no silent
//!    fallback to the sources);
//! 4. inside an rngtrk checkout, its `build/librngtrk.so` if `make` built it;
//! 5. otherwise the C++ core built from sources into a static library in
//!    OUT_DIR: the crate's vendored `csrc/` (a packaged crate) or the
//!    checkout around the crate (a path or git dependency).  The sources and
//!    flags are read from library.mk (the Makefile's and CMakeLists.txt's
//!    one list), compiled with $CXX (else c++, g++, clang++) on cargo's
//!    NUM_JOBS threads and archived with $AR (else ar).  CPU only.
//!
//! A shared library's folder goes into the test and example binaries' run
//! path, so `cargo test` works with no LD_LIBRARY_PATH.  Crates that depend
//! on this one (`links = "rngtrk"`) get DEP_RNGTRK_LIB_DIR (the folder
//! linked from: the shared library's, or OUT_DIR holding librngtrk.a),
//! DEP_RNGTRK_LINK (`dylib` or `static`) and DEP_RNGTRK_INCLUDE (the
//! folder of rngtrk.h, when known).
use std::collections::HashMap;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::SystemTime;

#[allow(dead_code)]
#[path = "src/version_rule.rs"]
mod version_rule;

const HOW_TO_GET_A_COMPILER: &str = "install g++ (Debian: apt-get install g++) or install rngtrk so pkg-config \
                                     finds it or set RNGTRK_LIB_DIR";

/// Stops the build with one message (cargo shows the build script's
/// stderr when it fails).
fn fail(message: &str) -> ! {
    eprintln!("rngtrk-sys: {}", message);
    std::process::exit(1);
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
}

/// The header's RNGTRK_VERSION_* as bindgen wrote them into src/lib.rs.
fn header_version() -> version_rule::Version {
    let lib = manifest_dir().join("src").join("lib.rs");
    let text = fs::read_to_string(&lib).unwrap_or_else(|e| fail(&format!("{}: {}", lib.display(), e)));
    let constant = |name: &str| -> u32 {
        let prefix = format!("pub const RNGTRK_VERSION_{}: u32 = ", name);
        text.lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .and_then(|rest| rest.trim_end_matches(';').parse().ok())
            .unwrap_or_else(|| fail(&format!("{} has no RNGTRK_VERSION_{}", lib.display(), name)))
    };
    (constant("MAJOR"), constant("MINOR"), constant("PATCH"))
}

fn pkg_config(args: &[&str]) -> Option<String> {
    let output = Command::new("pkg-config").args(args).stderr(Stdio::null()).output().ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()
}

/// The folders of an installed rngtrk that pkg-config finds, if its
/// version is in range; None when pkg-config (or its rngtrk) is not there.
fn from_pkg_config(header: version_rule::Version) -> Option<Vec<String>> {
    let found = pkg_config(&["--modversion", "rngtrk"])?;
    let found = found.trim();
    let libs = pkg_config(&["--libs-only-L", "rngtrk"]).unwrap_or_default();
    // An answer with no -L means the system's default folders.  A folder
    // relative to the .pc file's (`${pcfiledir}/../../lib`) is written
    // plainly into the run path.
    let dirs: Vec<String> = libs
        .split_whitespace()
        .filter_map(|f| f.strip_prefix("-L"))
        .map(|d| Path::new(d).canonicalize().map_or_else(|_| d.to_string(), |p| p.display().to_string()))
        .collect();
    let compatible = version_rule::parse(found).map_or(false, |n| version_rule::is_compatible(n, header));
    if !compatible {
        let place = pkg_config(&["--variable=pcfiledir", "rngtrk"]).map(|d| format!(" ({}/rngtrk.pc)", d.trim()));
        fail(&format!(
            "pkg-config found rngtrk {}{}, but this crate was generated from rngtrk.h {}.{}.{} and needs \
             librngtrk {}: install a matching rngtrk, point PKG_CONFIG_PATH at another rngtrk.pc, set \
             RNGTRK_LIB_DIR to the folder of a matching librngtrk.so, or enable the `bundled` feature to build \
             the library from the crate's sources",
            found,
            place.unwrap_or_default(),
            header.0,
            header.1,
            header.2,
            version_rule::describe_range(header)
        ));
    }
    Some(dirs)
}

/// The rngtrk checkout around this crate (bindings/rust/rngtrk-sys), if
/// the crate sits in one.
fn checkout() -> Option<PathBuf> {
    let top = manifest_dir().join("..").join("..").join("..");
    if top.join("c_api").join("rngtrk.h").is_file() && top.join("library.mk").is_file() {
        Some(top.canonicalize().unwrap_or(top))
    } else {
        None
    }
}

/// The checkout's build/ folder, if `make` built the shared library there.
fn checkout_build() -> Option<PathBuf> {
    let build = checkout()?.join("build");
    if build.join("librngtrk.so").exists() {
        println!("cargo:rerun-if-changed={}", build.join("librngtrk.so").display());
        Some(build)
    } else {
        None
    }
}

/// Where `program` is on PATH, if it is.
fn on_path(program: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// The minor version of the rustc cargo runs (1.x), if it says.
fn rustc_minor() -> Option<u32> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    text.split_whitespace().nth(1)?.split('.').nth(1)?.parse().ok()
}

/// library.mk's `NAME := words` lines (a trailing backslash continues a
/// line; comments and blank lines skipped), the format its header states.
fn parse_library_mk(text: &str) -> HashMap<String, Vec<String>> {
    let mut lists = HashMap::new();
    let mut logical = String::new();
    for line in text.lines() {
        if logical.is_empty() && (line.trim_start().starts_with('#') || line.trim().is_empty()) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                logical.push_str(head);
                logical.push(' ');
                continue;
            }
            None => logical.push_str(line),
        }
        if let Some((name, words)) = logical.split_once(":=") {
            let name = name.trim();
            // Only the format library.mk's header states: a `+=` or a
            // `$(...)` would be misread here, so it stops the build.
            if name.contains('+') || words.contains("$(") {
                fail(&format!("library.mk: `{}` is not a plain `NAME := words` line", logical.trim()));
            }
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') {
                lists.insert(name.to_string(), words.split_whitespace().map(String::from).collect());
            }
        }
        logical.clear();
    }
    lists
}

/// The C++ compiler: $CXX (a program and its own arguments) if set, else
/// the first of c++, g++, clang++ on PATH; None when there is none.
fn cxx() -> Option<Vec<String>> {
    let words: Vec<String> = match env::var("CXX") {
        Ok(cxx) if !cxx.trim().is_empty() => cxx.split_whitespace().map(String::from).collect(),
        _ => vec![["c++", "g++", "clang++"].iter().find(|c| on_path(c).is_some())?.to_string()],
    };
    // One that does not run is no compiler either.
    let mut runs = Command::new(&words[0]);
    runs.args(&words[1..]).arg("--version").stdout(Stdio::null()).stderr(Stdio::null());
    runs.status().ok().filter(|s| s.success())?;
    Some(words)
}

fn mtime(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The newest modification time of the files `paths`.
fn newest(paths: &[PathBuf]) -> Option<SystemTime> {
    paths.iter().filter_map(|p| mtime(p)).max()
}

/// The headers (.h, and the .inc files they include) directly in `dir`.
fn headers_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> =
        fs::read_dir(dir).map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path()).collect()).unwrap_or_default();
    found.retain(|p| p.extension().map_or(false, |x| x == "h" || x == "inc"));
    found.sort();
    found
}

/// Builds librngtrk.a in OUT_DIR from the sources under `root`; returns
/// OUT_DIR.
fn build_from_sources(root: &Path) -> PathBuf {
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mk_path = root.join("library.mk");
    println!("cargo:rerun-if-changed={}", mk_path.display());
    for var in ["CXX", "CXXFLAGS", "AR"] {
        println!("cargo:rerun-if-env-changed={}", var);
    }
    let mk = fs::read_to_string(&mk_path).unwrap_or_else(|e| fail(&format!("{}: {}", mk_path.display(), e)));
    let lists = parse_library_mk(&mk);
    let list = |name: &str| -> Vec<String> {
        lists.get(name).cloned().unwrap_or_else(|| fail(&format!("{} has no {} line", mk_path.display(), name)))
    };
    let x86_64 = env::var("CARGO_CFG_TARGET_ARCH").map_or(false, |a| a == "x86_64");
    let x86_only = list("X86_64_SOURCES");
    let mut sources: Vec<String> =
        list("LIB_SOURCES").into_iter().filter(|s| x86_64 || !x86_only.contains(s)).collect();
    sources.extend(list("NO_CUDA_SOURCES")); // CPU only: the stub whose calls say so
    let (engine, avx2, avx512) = (list("ENGINE_SOURCES"), list("AVX2_SOURCES"), list("AVX512_SOURCES"));

    let compiler = cxx().unwrap_or_else(|| {
        let which = match env::var("CXX") {
            Ok(cxx) if !cxx.trim().is_empty() => format!("the C++ compiler CXX={} does not run", cxx),
            _ => "no C++ compiler (c++, g++ or clang++) is on PATH".to_string(),
        };
        fail(&format!(
            "librngtrk was not found, and building it from its sources needs a C++ compiler, but {}: {}",
            which, HOW_TO_GET_A_COMPILER
        ))
    });
    let version = Command::new(&compiler[0]).args(&compiler[1..]).arg("--version").output();
    let is_clang = version.map_or(false, |o| String::from_utf8_lossy(&o.stdout).contains("clang"));

    // The Makefile's order: optimisation, warnings, library flags, the
    // user's CXXFLAGS, include folders (C_API_INCLUDES for c_api/, else
    // CORE_INCLUDES), then the engines' own flags.
    let mut common = list("DEFAULT_OPTFLAGS");
    common.extend(list("WARNINGS"));
    common.extend(list("LIB_FLAGS"));
    common.extend(env::var("CXXFLAGS").unwrap_or_default().split_whitespace().map(String::from));
    let includes =
        |names: Vec<String>| -> Vec<String> { names.iter().map(|d| format!("-I{}", root.join(d).display())).collect() };
    let (c_api_includes, core_includes) = (includes(list("C_API_INCLUDES")), includes(list("CORE_INCLUDES")));

    // Headers: a change to any of them recompiles every object.
    let mut headers = Vec::new();
    for dir in ["core", "c_api", "cuda"] {
        headers.extend(headers_in(&root.join(dir)));
    }
    for file in &headers {
        println!("cargo:rerun-if-changed={}", file.display());
    }

    // (source, object, arguments) for every source.
    let mut jobs = Vec::new();
    for source in &sources {
        let path = root.join(source);
        println!("cargo:rerun-if-changed={}", path.display());
        let object = out.join("obj").join(source.replace(".cpp", ".o"));
        let mut args = compiler[1..].to_vec();
        args.extend(common.iter().cloned());
        args.extend(if source.starts_with("c_api/") { c_api_includes.clone() } else { core_includes.clone() });
        if engine.contains(source) {
            args.extend(list("ENGINE_FLAGS"));
            if avx2.contains(source) {
                args.extend(list("AVX2_FLAGS"));
            }
            if avx512.contains(source) {
                args.extend(list("AVX512_FLAGS"));
                if !is_clang {
                    args.extend(list("AVX512_GCC_FLAGS"));
                }
            }
        }
        args.extend(["-c".to_string(), path.display().to_string(), "-o".to_string(), object.display().to_string()]);
        jobs.push((path, object, args));
    }

    // An object is compiled again when it is older than its source, a
    // header or library.mk, or was compiled with other arguments (recorded
    // next to it): the build script also reruns for reasons of its own.
    let mut inputs = headers.clone();
    inputs.push(mk_path.clone());
    let newest_input = newest(&inputs);
    let stale: Vec<&(PathBuf, PathBuf, Vec<String>)> = jobs
        .iter()
        .filter(|(path, object, args)| {
            let built = match mtime(object) {
                Some(t) => t,
                None => return true,
            };
            let recorded = fs::read_to_string(object.with_extension("args")).unwrap_or_default();
            recorded != args.join("\n")
                || mtime(path).map_or(true, |t| t > built)
                || newest_input.map_or(true, |t| t > built)
        })
        .collect();
    let threads = env::var("NUM_JOBS").ok().and_then(|n| n.parse::<usize>().ok()).unwrap_or(1).max(1);
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(stale.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let (_, object, args) = match stale.get(i) {
                    Some(job) => *job,
                    None => break,
                };
                if let Some(dir) = object.parent() {
                    let _ = fs::create_dir_all(dir);
                }
                let result = Command::new(&compiler[0]).args(args).output();
                match result {
                    Ok(o) if o.status.success() => {
                        let _ = fs::write(object.with_extension("args"), args.join("\n"));
                    }
                    Ok(o) => failures.lock().unwrap().push(format!(
                        "{} {}\n{}",
                        compiler[0],
                        args.join(" "),
                        String::from_utf8_lossy(&o.stderr)
                    )),
                    Err(e) => failures.lock().unwrap().push(format!("{}: {}", compiler[0], e)),
                }
                if !failures.lock().unwrap().is_empty() {
                    break;
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    if let Some(first) = failures.first() {
        fail(&format!("compiling librngtrk from {} failed:\n{}", root.display(), first));
    }

    let archive = out.join("librngtrk.a");
    let ar = env::var("AR").ok().filter(|a| !a.trim().is_empty()).unwrap_or_else(|| "ar".to_string());
    let _ = fs::remove_file(&archive);
    let status = Command::new(&ar).arg("crs").arg(&archive).args(jobs.iter().map(|(_, object, _)| object)).status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => fail(&format!("`{} crs {}` failed ({})", ar, archive.display(), s)),
        Err(e) => fail(&format!(
            "the archiver {} does not run ({}): install binutils (Debian: apt-get install binutils) or set AR",
            ar, e
        )),
    }
    out
}

fn main() {
    // tests/sys_is_current.rs runs only where bindgen and rustfmt both are
    // (bindgen formats its output with rustfmt); else it is reported as
    // ignored, with the reason.  Where one is missing, the build script is
    // asked to run again once it appears there.
    if rustc_minor().map_or(false, |minor| minor >= 80) {
        println!("cargo:rustc-check-cfg=cfg(rngtrk_has_bindgen)"); // older cargo warns about the line
    }
    println!("cargo:rerun-if-env-changed=PATH");
    let tools: Vec<Option<PathBuf>> = ["bindgen", "rustfmt"].iter().map(|t| on_path(t)).collect();
    for (tool, found) in ["bindgen", "rustfmt"].iter().zip(&tools) {
        if let Some(path) = found {
            println!("cargo:rerun-if-changed={}", path.display()); // gone: run again
            continue;
        }
        // Missing: run again once it is installed.  A Debian package's
        // files keep the package's old times, which cargo would take for
        // "unchanged since the last run"; dpkg's list of the package's files
        // is written when it is installed.
        println!("cargo:rerun-if-changed={}", Path::new("/usr/bin").join(tool).display());
        if Path::new("/var/lib/dpkg/info").is_dir() {
            println!("cargo:rerun-if-changed=/var/lib/dpkg/info/{}.list", tool);
        }
    }
    if tools.iter().all(Option::is_some) {
        println!("cargo:rustc-cfg=rngtrk_has_bindgen");
    }
    println!("cargo:rerun-if-env-changed=RNGTRK_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_LIBDIR");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed=src/version_rule.rs");

    let header = header_version();
    let bundled = env::var_os("CARGO_FEATURE_BUNDLED").is_some();
    // The checkout around the crate first: a csrc/ left there by
    // vendor_sources.sh would be an old copy of it.  A packed crate has no
    // checkout around it, only csrc/.
    let vendored = manifest_dir().join("csrc");
    let sources = checkout().or_else(|| Some(vendored).filter(|v| v.join("library.mk").is_file()));
    let shared: Option<Vec<String>> = if bundled {
        None
    } else if let Ok(dir) = env::var("RNGTRK_LIB_DIR") {
        // Inside the repository .cargo/config.toml sets it to build/: before
        // `make`, that folder holds no library, which the linker would only
        // report as "unable to find library -lrngtrk".
        if !Path::new(&dir).join("librngtrk.so").exists() {
            fail(&format!(
                "RNGTRK_LIB_DIR is {}, which holds no librngtrk.so: build it (`make lib` in the rngtrk \
                 repository; inside it, .cargo/config.toml names its build/ folder), set RNGTRK_LIB_DIR to the \
                 folder of a librngtrk.so, or enable the `bundled` feature to build the library from its sources",
                dir
            ));
        }
        println!("cargo:rerun-if-changed={}", Path::new(&dir).join("librngtrk.so").display());
        Some(vec![dir])
    } else if let Some(dirs) = from_pkg_config(header) {
        Some(dirs)
    } else {
        checkout_build().map(|build| vec![build.display().to_string()])
    };

    match shared {
        Some(dirs) => {
            for dir in &dirs {
                println!("cargo:rustc-link-search=native={}", dir);
                println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
            }
            println!("cargo:rustc-link-lib=dylib=rngtrk");
            println!("cargo:lib_dir={}", dirs.join(":"));
            println!("cargo:link=dylib");
            if let Some(root) = sources {
                println!("cargo:include={}", root.join("c_api").display());
            }
        }
        None => {
            let root = sources.unwrap_or_else(|| {
                fail(
                    "librngtrk was not found, and this crate holds no sources to build it from (csrc/ is made by \
                     vendor_sources.sh): install rngtrk (`make install` in its repository) so that `pkg-config \
                     rngtrk` finds it, or set RNGTRK_LIB_DIR to the folder holding librngtrk.so",
                )
            });
            let lib_dir = build_from_sources(&root);
            println!("cargo:rustc-link-search=native={}", lib_dir.display());
            println!("cargo:rustc-link-lib=static=rngtrk");
            println!("cargo:rustc-link-lib=dylib=stdc++");
            println!("cargo:rustc-link-lib=dylib=pthread");
            println!("cargo:lib_dir={}", lib_dir.display());
            println!("cargo:link=static");
            println!("cargo:include={}", root.join("c_api").display());
        }
    }
}
