//! Build orchestration: `cargo xtask <setup|demo|test>`. Each command sets up what it
//! needs (the wasm target) first, so the README's two commands work on a fresh machine.

use std::process::{Command, ExitCode};
use std::time::Instant;

const WASM_TARGET: &str = "wasm32-unknown-unknown";

const USAGE: &str = "usage: cargo xtask <command>

commands:
  setup   install the wasm target if it is missing
  demo    set up, build the component and the host, and run `mneme demo`
  test    set up, then run every check: the no_std core for wasm, every test
          (native core, component under wasmtime, CLI), rustfmt and clippy
  bench   build and run the transcript benchmark against cersei-memory 0.2.6
          (options after `bench` go to it: --mb 100 --appends 2000 --sessions 200)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup(),
        Some("demo") => setup().and_then(|()| demo(&args[1..])),
        Some("test") => setup().and_then(|()| test()),
        Some("bench") => setup().and_then(|()| bench(&args[1..])),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    eprintln!("xtask: running {program} {}", args.join(" "));
    let started = Instant::now();
    let status = Command::new(program).args(args).status().map_err(|e| format!("cannot run {program}: {e}"))?;
    if !status.success() {
        return Err(format!("`{program} {}` failed ({status})", args.join(" ")));
    }
    eprintln!("xtask: done in {:.1?}", started.elapsed());
    Ok(())
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn setup() -> Result<(), String> {
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output();
    match installed {
        Ok(output) if String::from_utf8_lossy(&output.stdout).lines().any(|t| t.trim() == WASM_TARGET) => Ok(()),
        Ok(_) => run("rustup", &["target", "add", WASM_TARGET]),
        Err(e) => Err(format!(
            "rustup is needed to install the {WASM_TARGET} target ({e}); install it from https://rustup.rs or add the target to your toolchain"
        )),
    }
}

fn demo(extra: &[String]) -> Result<(), String> {
    let mut args = vec!["run", "--release", "--package", "mneme-host", "--bin", "mneme", "--", "demo"];
    args.extend(extra.iter().map(String::as_str));
    run(&cargo(), &args)
}

fn bench(extra: &[String]) -> Result<(), String> {
    let mut args = vec!["run", "--release", "--package", "mneme-bench", "--"];
    args.extend(extra.iter().map(String::as_str));
    run(&cargo(), &args)
}

fn test() -> Result<(), String> {
    let cargo = cargo();
    run(&cargo, &["fmt", "--all", "--", "--check"])?;
    run(&cargo, &["build", "--package", "mneme-core", "--no-default-features", "--target", WASM_TARGET])?;
    // The benchmark crate is left out: cersei-memory brings reqwest, TLS and tokio,
    // minutes of compiling that no test needs. `cargo xtask bench` builds it.
    run(&cargo, &["test", "--release", "--workspace", "--exclude", "mneme-bench"])?;
    run(&cargo, &["clippy", "--release", "--workspace", "--exclude", "mneme-bench", "--all-targets", "--", "-D", "warnings"])?;
    eprintln!("xtask: every check passed");
    Ok(())
}
