//! Builds the Mneme component and leaves it in OUT_DIR for `include_bytes!`, so the
//! `mneme` binary is one self-contained executable and `cargo build` alone is enough.
//!
//! The guest is compiled by a nested cargo for `wasm32-unknown-unknown` into its own
//! target dir (no lock contention with the outer build), then wrapped into a component
//! with `wit-component`. Set `MNEME_COMPONENT=<path>` to embed a prebuilt component.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const GUEST: &str = "mneme-component";
const WASM_TARGET: &str = "wasm32-unknown-unknown";

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("host-native lives in the workspace").to_path_buf();
    println!("cargo:rerun-if-env-changed=MNEME_COMPONENT");

    let component = match env::var_os("MNEME_COMPONENT") {
        Some(path) => fs::read(&path).unwrap_or_else(|e| fail(&format!("cannot read MNEME_COMPONENT={}: {e}", Path::new(&path).display()))),
        None => {
            for watched in ["core/src", "core/Cargo.toml", "component/src", "component/Cargo.toml", "wit", "Cargo.toml", "Cargo.lock"] {
                println!("cargo:rerun-if-changed={}", workspace.join(watched).display());
            }
            componentize(&build_guest(&workspace))
        }
    };
    fs::write(out.join("mneme.component.wasm"), &component)
        .unwrap_or_else(|e| fail(&format!("cannot write the component to OUT_DIR: {e}")));
    // A stable copy for people and tools that want the component itself (jco, wasmtime run).
    let published = target_root(&workspace).join("mneme.component.wasm");
    let _ = fs::create_dir_all(target_root(&workspace)).and_then(|()| fs::write(&published, &component));
}

fn target_root(workspace: &Path) -> PathBuf {
    env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace.join("target"))
}

fn build_guest(workspace: &Path) -> Vec<u8> {
    let target_dir = target_root(workspace).join("component");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace)
        .args(["build", "--package", GUEST, "--profile", "component-release", "--target", WASM_TARGET, "--target-dir"])
        .arg(&target_dir);
    // Flags meant for the host build (clippy's wrapper, coverage or sanitizer flags)
    // must not leak into the wasm build.
    for var in
        ["RUSTC_WORKSPACE_WRAPPER", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_TARGET_DIR", "CARGO_MAKEFLAGS"]
    {
        command.env_remove(var);
    }
    // SIMD: the core finds line ends and skips strings with memchr, which uses 128-bit
    // vectors where the guest may. Every runtime Mneme runs on has them (wasmtime, V8
    // in Node, workerd and the browser).
    command.env("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-feature=+simd128");
    let status = command.status().unwrap_or_else(|e| fail(&format!("cannot run cargo to build {GUEST}: {e}")));
    if !status.success() {
        fail(&format!(
            "building {GUEST} for {WASM_TARGET} failed (see above). If the target is missing, run \
             `rustup target add {WASM_TARGET}` or `cargo xtask setup`."
        ));
    }
    let module = target_dir.join(WASM_TARGET).join("component-release").join("mneme_component.wasm");
    fs::read(&module).unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", module.display())))
}

fn componentize(module: &[u8]) -> Vec<u8> {
    wit_component::ComponentEncoder::default()
        .module(module)
        .and_then(|encoder| encoder.validate(true).encode())
        .unwrap_or_else(|e| fail(&format!("cannot turn the guest module into a component: {e:#}")))
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}
