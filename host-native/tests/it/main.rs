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
