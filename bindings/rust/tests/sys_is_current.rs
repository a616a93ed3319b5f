//! src/sys.rs is what generate_sys.sh (bindgen) writes from c_api/rngtrk.h.
use std::path::PathBuf;
use std::process::Command;

#[test]
fn generated_sys_layer_is_current() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if Command::new("bindgen").arg("--version").output().is_err() {
        println!("SKIPPED: bindgen is not installed (apt-get install bindgen libclang-dev); src/sys.rs not checked");
        return;
    }
    let fresh = std::env::temp_dir().join(format!("rngtrk-sys-{}.rs", std::process::id()));
    let output = Command::new("sh").arg(crate_dir.join("generate_sys.sh")).arg(&fresh).output().unwrap();
    assert!(output.status.success(), "generate_sys.sh failed: {}", String::from_utf8_lossy(&output.stderr));
    let fresh_text = std::fs::read_to_string(&fresh).unwrap();
    std::fs::remove_file(&fresh).unwrap();
    let checked_in = std::fs::read_to_string(crate_dir.join("src").join("sys.rs")).unwrap();
    assert!(fresh_text == checked_in, "src/sys.rs is stale: run `make bindgen`");
}
