//! Links NumPy's distributions library (`numpy/random/lib/libnpyrandom.a`, shipped in
//! NumPy's wheels for extensions that draw as `numpy.random.Generator` does) when the
//! build's Python has it, so compiled code can call the very functions `Generator`
//! runs. Without it numba-rs still builds; `np.random.Generator` methods then raise a
//! clear error at compile time.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rustc-check-cfg=cfg(npyrandom)");
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");
    let python = std::env::var("PYO3_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .args([
            "-c",
            "import os, numpy; print(os.path.join(os.path.dirname(numpy.__file__), 'random', 'lib'))",
        ])
        .output();
    let Ok(out) = out else {
        println!("cargo:warning=numba-py: no Python to find NumPy's libnpyrandom with");
        return;
    };
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let lib = dir.join("libnpyrandom.a");
    if !out.status.success() || !lib.exists() {
        println!(
            "cargo:warning=numba-py: NumPy's libnpyrandom.a not found; np.random.Generator is unavailable"
        );
        return;
    }
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static=npyrandom");
    println!("cargo:rustc-cfg=npyrandom");
}
