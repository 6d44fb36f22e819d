//! Shared build script of the crates that link libcef (`app`, `cef-bridge`).
//!
//! libcef.so lives in `third_party/cef/` (unpacked by `third_party/fetch-cef`,
//! never downloaded by a crate). Every binary and test that links it gets an
//! rpath to that folder, plus `$ORIGIN` so a binary shipped beside libcef.so
//! also finds it. No wrapper setting LD_LIBRARY_PATH is needed.
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    // Each linking crate sits one level below the workspace root.
    let root = manifest.parent().map(PathBuf::from).unwrap_or(manifest.clone());
    let cef = root.join("third_party").join("cef");
    println!("cargo:rerun-if-changed={}", cef.join("libcef.so").display());
    println!("cargo:rerun-if-env-changed=CEF_PATH");
    let cef = std::env::var_os("CEF_PATH").map(PathBuf::from).unwrap_or(cef);
    let cef = cef.canonicalize().unwrap_or(cef);
    if !cef.join("libcef.so").exists() {
        println!(
            "cargo:warning=libcef.so not found in {}: run third_party/fetch-cef (README's commands do)",
            cef.display()
        );
    }
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", cef.display());
    println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN");
}
