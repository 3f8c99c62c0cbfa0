//! The host's integration tests, one module per area, in one binary: each binary
//! of its own compiled and linked wasmtime and the engine again (minutes of every
//! clean build). `processes` stays apart: it is its own `main`.

/// The `mneme` binary, without this shell's Mneme settings (MNEME_REDACT, a
/// summariser): a developer's environment must not change what a test sees.
pub fn mneme_command() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_mneme"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("MNEME_") {
            command.env_remove(name);
        }
    }
    // A home read with --claude-home keeps its index in the cache folder: the tests' own.
    command.env("XDG_CACHE_HOME", std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-cache"));
    command
}

mod cli;
mod component;
mod concurrency;
mod conformance;
mod corpus;
mod embedder;
mod same_bytes;
mod summarizers;
