//! `cargo xtask bench [--mb N]`: load, append and list on generated Claude-Code-shaped
//! transcripts, Mneme and cersei-memory 0.2.6 on the same files in the same run.
//!
//! The files use Cersei's envelope (snake_case `parent_uuid`/`session_id`, Claude Code
//! message bodies): Cersei's reader requires `session_id` and silently drops camelCase
//! lines, while Mneme reads both, so this is the data both load completely. Each row
//! says how many entries the library returned, so a fast row that did no work shows.

use std::alloc::{GlobalAlloc, Layout};
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mneme_core::{Limits, NewEntry, Role, Store, block_on};
use mneme_host::{Durability, FsStorage, HostStorage};

/// Counts live heap bytes and their peak, to report memory per operation, over the
/// allocator the `mneme` CLI uses (see host-native's main.rs).
struct Counting;

static UNDER: mimalloc::MiMalloc = mimalloc::MiMalloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: delegates every call to mimalloc unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let ptr = unsafe { UNDER.alloc(layout) };
        if !ptr.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        ptr
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { UNDER.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let new = unsafe { UNDER.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(live, Ordering::Relaxed);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `op` `runs` times; returns the fastest time, the peak heap above the starting
/// point during any run, and what the last run returned.
fn measure<T>(runs: u32, mut op: impl FnMut() -> T) -> (Duration, usize, T) {
    let mut best = Duration::MAX;
    let mut peak = 0;
    let mut last = None;
    for _ in 0..runs {
        drop(last.take());
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let started = Instant::now();
        let result = op();
        best = best.min(started.elapsed());
        peak = peak.max(PEAK.load(Ordering::Relaxed) - base);
        last = Some(result);
    }
    (best, peak, last.expect("at least one run"))
}

/// The sizes of one run of the index rows.
struct Scale {
    sessions: usize,
    session_bytes: u64,
    keys: usize,
    /// Runs of the listing without an index (each reads every transcript).
    cold_runs: u32,
    /// OpenClaw-style whole-file rewrites to time (each reads and writes the whole index).
    rewrites: u32,
}

/// Listing sessions without and with the index, next to Cersei's list, and updating
/// one key of many next to OpenClaw's whole-file rewrite of the same index.
fn index_rows(dir: &Path, scale: &Scale) -> Vec<Row> {
    let mut rows = Vec::new();
    // List: many ordinary sessions in one project folder.
    let list_root = dir.join("list");
    let list_project = list_root.join("projects/-home-dev-project");
    let mut list_bytes = 0;
    for i in 0..scale.sessions {
        let path = list_project.join(format!("session-{i:04}.jsonl"));
        generate(&path, scale.session_bytes).expect("generate a session");
        list_bytes += fs::metadata(&path).expect("size").len();
    }
    // Cold: no index yet (removed before each run), so every transcript is read.
    let (mneme_cold, _, listed) = measure(scale.cold_runs, || {
        let _ = fs::remove_dir_all(list_root.join("index"));
        block_on(Store::new(FsStorage::new(&list_root)).sessions().list()).expect("mneme list")
    });
    let manager = cersei_memory::manager::MemoryManager::new(Path::new("/home/dev/project")).with_sessions_dir(list_project.clone());
    let (cersei_list, _, cersei_listed) = measure(3, || manager.list_sessions());
    assert_eq!((listed.sessions.len(), cersei_listed.len()), (scale.sessions, scale.sessions));
    rows.push(Row {
        operation: format!("list {} sessions ({} MB), no index yet", scale.sessions, list_bytes / 1_000_000),
        mneme: mneme_cold,
        cersei: cersei_list,
        detail: "Mneme reads every file for counts, title, times and caches them in the index; Cersei only lists names (message_count is always 0)".into(),
    });
    // Warm: a new store (another process) over the index the cold run left.
    let (mneme_warm, _, warm) = measure(5, || block_on(Store::new(FsStorage::new(&list_root)).sessions().list()).expect("mneme list"));
    assert_eq!(warm, listed, "the index gives what reading every file gave");
    rows.push(Row {
        operation: format!("list {} sessions from the index (a new process)", scale.sessions),
        mneme: mneme_warm,
        cersei: cersei_list,
        detail: "the listing of projects/ plus the index's snapshot and log; no transcript is read".into(),
    });

    // A read-only home (`mneme --claude-home`), which has no index of its own: without
    // a cache every command reads every transcript; with the index kept in Mneme's
    // cache folder, a new process answers from it as from a writable store.
    fs::remove_dir_all(list_root.join("index")).expect("remove the index");
    let (home_uncached, _, uncached) =
        measure(3, || block_on(Store::new(FsStorage::read_only(&list_root)).sessions().list()).expect("mneme list"));
    let cached_home = || HostStorage::cached(FsStorage::read_only(&list_root), dir.join("home-cache"));
    block_on(Store::new(cached_home()).sessions().list()).expect("fill the cache");
    let (home_cached, _, cached) = measure(5, || block_on(Store::new(cached_home()).sessions().list()).expect("mneme list"));
    assert_eq!((&uncached, &cached), (&listed, &listed), "a home lists the same, cached or not");
    assert!(!list_root.join("index").exists(), "nothing was written into the home");
    rows.push(Row {
        operation: format!("list {} sessions of a read-only home, no cache (each command)", scale.sessions),
        mneme: home_uncached,
        cersei: cersei_list,
        detail: "what `mneme --claude-home` did before its cache: every transcript read by every command".into(),
    });
    rows.push(Row {
        operation: format!("list {} sessions of a read-only home, its index cached outside it", scale.sessions),
        mneme: home_cached,
        cersei: cersei_list,
        detail: "`mneme --claude-home` now: the index in ~/.cache/mneme/homes/, the home untouched".into(),
    });

    // Updating one key of an index of 1,000: Mneme appends one line; OpenClaw's
    // sessions.json is read, changed and written whole (temp + rename) each time.
    let keys_root = dir.join("keys");
    // Built without fsync (the same files); the updates below are measured with it.
    let build_store = Store::new(FsStorage::new(&keys_root).with_durability(Durability::Buffered));
    let keys_store = Store::new(FsStorage::new(&keys_root));
    let inbound = |i: usize| mneme_core::index::Inbound {
        chat_type: mneme_core::index::ChatType::Group,
        provider: Some("telegram".into()),
        id: Some(format!("-100{i}")),
        text: "hello".into(),
        ..Default::default()
    };
    let policy = mneme_core::index::RoutePolicy::default();
    let keys = scale.keys;
    for i in 0..keys {
        block_on(build_store.index().resolve(&inbound(i), &policy, 1_771_200_000_000, &format!("s{i}"))).expect("resolve");
    }
    let mut tick = 0i64;
    let updates = 200u32;
    let (mneme_update, _, ()) = measure(1, || {
        for n in 0..updates {
            tick += 1;
            block_on(keys_store.index().resolve(&inbound(n as usize * 7 % keys), &policy, 1_771_200_000_000 + tick, "unused"))
                .expect("resolve");
        }
    });
    let openclaw = dir.join("openclaw/sessions.json");
    fs::create_dir_all(openclaw.parent().expect("a folder")).expect("mkdir");
    let entries: serde_json::Map<String, serde_json::Value> = block_on(keys_store.index().keys(&[]))
        .expect("keys")
        .into_iter()
        .map(|e| (e.key.clone(), serde_json::to_value(&e).expect("json")))
        .collect();
    fs::write(&openclaw, serde_json::to_vec(&entries).expect("json")).expect("write sessions.json");
    let (rewrite, _, ()) = measure(1, || {
        for n in 0..scale.rewrites {
            let mut index: serde_json::Map<String, serde_json::Value> =
                serde_json::from_slice(&fs::read(&openclaw).expect("read")).expect("parse");
            if let Some(entry) = index.get_mut(&format!("agent:main:telegram:group:-100{}", n as usize * 7 % keys)) {
                entry["updated_ms"] = serde_json::json!(1_771_200_000_000i64 + i64::from(n));
            }
            let temp = openclaw.with_extension("json.tmp");
            let mut file = fs::File::create(&temp).expect("create");
            file.write_all(&serde_json::to_vec(&index).expect("json")).expect("write");
            file.sync_all().expect("fsync");
            fs::rename(&temp, &openclaw).expect("rename");
        }
    });
    rows.push(Row {
        operation: format!("update one key of {keys} (resolve), per update"),
        mneme: mneme_update / updates,
        cersei: Duration::ZERO,
        detail: format!(
            "one appended line under the index lock, fsync; OpenClaw-style whole-file rewrite of the same index (read, parse, write temp, fsync, rename): {:.2?}",
            rewrite / scale.rewrites
        ),
    });

    rows
}

const SESSION: &str = "bench-session";

/// A Claude-Code-shaped turn in Cersei's envelope: a prompt, a reply with thinking,
/// text and a tool call, and the tool's result.
fn write_turn(out: &mut impl Write, turn: usize, parent: &mut Option<String>) -> std::io::Result<()> {
    let filler = "The quick brown fox jumps over the lazy dog while the build runs; ".repeat(3 + turn % 7);
    let output = "src/lib.rs:42: warning: unused variable `x`\n".repeat(40 + turn % 90);
    let mut line = |kind: &str, message: serde_json::Value| -> std::io::Result<()> {
        let uuid = format!("{turn:08x}-{kind}-4000-8000-{:012x}", turn * 7 + kind.len());
        let entry = serde_json::json!({
            "type": if kind == "result" { "user" } else { kind },
            "uuid": uuid,
            "parent_uuid": parent,
            "timestamp": format!("2026-03-01T10:{:02}:{:02}.{:03}Z", turn / 60 % 60, turn % 60, turn % 1000),
            "session_id": SESSION,
            "cwd": "/home/dev/project",
            "message": message,
            "is_sidechain": false,
        });
        serde_json::to_writer(&mut *out, &entry)?;
        out.write_all(b"\n")?;
        *parent = Some(uuid);
        Ok(())
    };
    line("user", serde_json::json!({ "role": "user", "content": format!("Turn {turn}: please look at the failing test. {filler}") }))?;
    line(
        "assistant",
        serde_json::json!({
            "role": "assistant",
            "id": format!("msg_{turn:016x}"),
            "content": [
                { "type": "thinking", "thinking": format!("Let me think about turn {turn}. {filler}"), "signature": "c2lnbmF0dXJl".repeat(20) },
                { "type": "text", "text": format!("I'll run the tests. {filler}") },
                { "type": "tool_use", "id": format!("toolu_{turn:016x}"), "name": "Bash", "input": { "command": "cargo test --workspace", "description": filler } }
            ]
        }),
    )?;
    line(
        "result",
        serde_json::json!({
            "role": "user",
            "content": [{ "type": "tool_result", "tool_use_id": format!("toolu_{turn:016x}"), "content": output, "is_error": false }]
        }),
    )
}

fn generate(path: &Path, target_bytes: u64) -> std::io::Result<usize> {
    fs::create_dir_all(path.parent().expect("a folder"))?;
    let mut out = std::io::BufWriter::new(fs::File::create(path)?);
    let mut parent = None;
    let mut turn = 0;
    while out.get_ref().metadata()?.len() + (out.buffer().len() as u64) < target_bytes {
        write_turn(&mut out, turn, &mut parent)?;
        turn += 1;
    }
    out.flush()?;
    Ok(turn * 3)
}

/// A pi v3 session of tool-using turns: a header, then per turn a prompt, a reply with
/// thinking, text and a tool call, and its `toolResult`; keys in the order pi writes
/// them (`JSON.stringify` of its objects: the role first), which `json!` would sort.
fn generate_pi(path: &Path, target_bytes: u64) -> std::io::Result<usize> {
    fs::create_dir_all(path.parent().expect("a folder"))?;
    let mut out = std::io::BufWriter::new(fs::File::create(path)?);
    // An object of members whose values are JSON already, in the order given.
    let object = |members: &[(&str, String)]| {
        let members: Vec<String> = members.iter().map(|(key, value)| format!("{}:{value}", serde_json::json!(key))).collect();
        format!("{{{}}}", members.join(","))
    };
    let json = |value: serde_json::Value| value.to_string();
    let header = object(&[
        ("type", json("session".into())),
        ("version", json(3.into())),
        ("id", json("pi-bench".into())),
        ("timestamp", json("2026-03-01T10:00:00.000Z".into())),
        ("cwd", json("/home/dev/project".into())),
    ]);
    writeln!(out, "{header}")?;
    let mut parent: Option<String> = None;
    let mut entries = 0;
    let mut turn = 0usize;
    while out.get_ref().metadata()?.len() + (out.buffer().len() as u64) < target_bytes {
        let filler = "The quick brown fox jumps over the lazy dog while the build runs; ".repeat(3 + turn % 7);
        let output = "src/lib.rs:42: warning: unused variable `x`\n".repeat(40 + turn % 90);
        let text = |text: String| object(&[("type", json("text".into())), ("text", json(text.into()))]);
        let call_id = json(format!("toolu_{turn:016x}").into());
        let messages = [
            object(&[
                ("role", json("user".into())),
                ("content", format!("[{}]", text(format!("Turn {turn}: please look at the failing test. {filler}")))),
                ("timestamp", json(1.into())),
            ]),
            object(&[
                ("role", json("assistant".into())),
                (
                    "content",
                    format!(
                        "[{},{},{}]",
                        object(&[
                            ("type", json("thinking".into())),
                            ("thinking", json(format!("Let me think about turn {turn}. {filler}").into())),
                            ("thinkingSignature", json("c2lnbmF0dXJl".repeat(20).into())),
                        ]),
                        text(format!("I'll run the tests. {filler}")),
                        object(&[
                            ("type", json("toolCall".into())),
                            ("id", call_id.clone()),
                            ("name", json("bash".into())),
                            ("arguments", object(&[("command", json("cargo test --workspace".into()))])),
                        ]),
                    ),
                ),
                ("api", json("anthropic-messages".into())),
                ("provider", json("anthropic".into())),
                ("model", json("claude-sonnet-4-5".into())),
                (
                    "usage",
                    json(
                        serde_json::json!({ "input": 100, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 140, "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0 } }),
                    ),
                ),
                ("stopReason", json("toolUse".into())),
                ("timestamp", json(2.into())),
            ]),
            object(&[
                ("role", json("toolResult".into())),
                ("toolCallId", call_id),
                ("toolName", json("bash".into())),
                ("content", format!("[{}]", text(output))),
                ("isError", json(false.into())),
                ("timestamp", json(3.into())),
            ]),
        ];
        for (k, message) in messages.into_iter().enumerate() {
            let id = format!("{:08x}", turn * 3 + k);
            let entry = object(&[
                ("type", json("message".into())),
                ("id", json(id.clone().into())),
                ("parentId", json(parent.clone().into())),
                ("timestamp", json(format!("2026-03-01T10:{:02}:{:02}.{:03}Z", turn / 60 % 60, turn % 60, k).into())),
                ("message", message),
            ]);
            writeln!(out, "{entry}")?;
            parent = Some(id);
            entries += 1;
        }
        turn += 1;
    }
    out.flush()?;
    Ok(entries)
}

/// pi's own resume of `file`, through `clients/pi-resume.mjs` (the time and the messages).
fn run_pi(file: &Path) -> Result<(Duration, u64), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../clients/pi-resume.mjs");
    let output = std::process::Command::new("node").arg(&script).arg(file).output().map_err(|e| format!("node: {e}"))?;
    if !output.status.success() {
        return Err(format!("pi-resume.mjs failed: {}", String::from_utf8_lossy(&output.stderr).lines().next().unwrap_or("")));
    }
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).map_err(|e| format!("pi-resume.mjs printed no JSON: {e}"))?;
    let ms = result["ms"].as_f64().ok_or("no time")?;
    Ok((Duration::from_secs_f64(ms / 1000.0), result["messages"].as_u64().unwrap_or(0)))
}

/// Entries (and MEMORY.md lines) of the growth rows: each size ten times the last.
const GROWTH: [usize; 3] = [1_000, 10_000, 100_000];

/// `branches`, `usage` and `memory load` at 1k, 10k and 100k: a session with a branch
/// every 100 entries (a rewind three entries back, as an outside campaign grew them),
/// and a MEMORY.md of that many index lines. Each row says how much longer it took
/// than the row ten times smaller: about 10× is linear. The session's `context` (with
/// no compaction it reads and threads every line) shows what linear work costs on this
/// machine as the working set outgrows its caches.
fn growth_rows(dir: &Path) -> Vec<Row> {
    let mut rows: Vec<(usize, Row)> = Vec::new();
    let mut last: [Option<Duration>; 4] = [None; 4];
    for entries in GROWTH {
        let root = dir.join(entries.to_string());
        let project = root.join("projects/-home-dev-project");
        fs::create_dir_all(project.join("memory")).expect("growth folders");
        let mut session = String::new();
        for i in 0..entries {
            let parent = match i {
                0 => "null".to_owned(),
                i if i % 100 == 0 && i > 3 => format!("\"g{}\"", i - 3),
                i => format!("\"g{}\"", i - 1),
            };
            let message = if i % 2 == 0 {
                format!(r#"{{"role":"user","content":"question {i}"}}"#)
            } else {
                format!(
                    r#"{{"role":"assistant","id":"msg_{i}","content":[{{"type":"text","text":"answer {i}"}}],"usage":{{"input_tokens":10,"output_tokens":5}}}}"#
                )
            };
            let kind = if i % 2 == 0 { "user" } else { "assistant" };
            session.push_str(&format!(
                r#"{{"type":"{kind}","uuid":"g{i}","parentUuid":{parent},"sessionId":"growth","cwd":"/home/dev/project","timestamp":"2026-01-01T00:00:00.000Z","message":{message}}}"#
            ));
            session.push('\n');
        }
        fs::write(project.join("growth.jsonl"), session).expect("write the growth session");
        let index: String = (0..entries).map(|i| format!("- [Fact {i}](fact_{i}.md) — what fact {i} is about\n")).collect();
        fs::write(project.join("memory/MEMORY.md"), index).expect("write MEMORY.md");
        let store = Store::new(FsStorage::new(&root));
        let (branches, _, listed) = measure(1, || block_on(store.sessions().branches("growth")).expect("branches"));
        assert_eq!(listed.len(), entries / 100, "a branch every 100 entries");
        let (usage, _, ledger) = measure(1, || block_on(store.sessions().usage("growth", None)).expect("usage"));
        assert_eq!(ledger.replies as usize, entries / 2);
        let (context, _, _) = measure(1, || block_on(store.sessions().context("growth")).expect("context"));
        let scope = mneme_core::memory::store::Scope::Project("-home-dev-project".into());
        let (load, _, loaded) = measure(1, || block_on(store.memory().memory_load(&scope, Default::default())).expect("memory load"));
        assert!(loaded.text.lines().count() <= 201, "MEMORY.md within Claude Code's 200 lines");
        let timed = [("branches", branches), ("usage", usage), ("context", context), ("memory load", load)];
        for (at, (slot, (command, time))) in last.iter_mut().zip(timed).enumerate() {
            let ratio = slot.map_or("the smallest size".to_owned(), |before| {
                format!("{:.1}× the row at a tenth the size", time.as_secs_f64() / before.as_secs_f64())
            });
            let what = if command == "memory load" { "MEMORY.md lines" } else { "entries, a branch every 100" };
            let operation = format!("{command}, {}k {what}", entries / 1000);
            let detail = match command {
                "context" => format!("{ratio}; reads and threads every line: what linear work costs here"),
                _ => format!("{ratio}; Cersei has no {command}"),
            };
            rows.push((at, Row { operation, mneme: time, cersei: Duration::ZERO, detail }));
            *slot = Some(time);
        }
    }
    // Each command's sizes together, so the ratios read down the table.
    rows.sort_by_key(|(at, _)| *at);
    rows.into_iter().map(|(_, row)| row).collect()
}

struct Row {
    operation: String,
    mneme: Duration,
    cersei: Duration,
    detail: String,
}

fn rate(bytes: u64, time: Duration) -> String {
    format!("{:.0} MB/s", bytes as f64 / 1e6 / time.as_secs_f64())
}

const USAGE: &str = "\
usage: cargo xtask bench [--mb N] [--appends N] [--sessions N] [--scale N]

Load, resume, append and list on generated Claude-Code-shaped transcripts, Mneme and
cersei-memory 0.2.6 on the same files in one run; prints a Markdown table.

  --mb N         size of the big transcript, in MB (100)
  --appends N    entries per append row (2000)
  --sessions N   sessions of the listing rows (200)
  --scale N      sessions and keys of the index-at-scale rows; 0 leaves them out (100000)
  -h, --help     this text
";

/// The bench's options; every one has a default.
struct Options {
    megabytes: u64,
    appends: usize,
    sessions: usize,
    scale: usize,
}

impl Options {
    /// `None` when help was asked for.
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
        let mut values = [("--mb", 100), ("--appends", 2000), ("--sessions", 200), ("--scale", 100_000)];
        while let Some(arg) = args.next() {
            if arg == "-h" || arg == "--help" {
                return Ok(None);
            }
            let Some((_, value)) = values.iter_mut().find(|(name, _)| *name == arg) else {
                return Err(format!("unknown option `{arg}`"));
            };
            let given = args.next().ok_or_else(|| format!("`{arg}` needs a number after it"))?;
            *value = given.parse().map_err(|_| format!("`{arg}` needs a whole number, not `{given}`"))?;
        }
        let [megabytes, appends, sessions, scale] = values.map(|(_, value): (&str, u32)| value);
        if megabytes == 0 || appends == 0 || sessions == 0 {
            return Err("`--mb`, `--appends` and `--sessions` need at least 1".into());
        }
        Ok(Some(Options { megabytes: megabytes.into(), appends: appends as usize, sessions: sessions as usize, scale: scale as usize }))
    }
}

fn main() {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            print!("{USAGE}");
            return;
        }
        Err(error) => {
            eprint!("mneme-bench: {error}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    let Options { megabytes, appends, sessions, scale } = options;

    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("store");
    let project = root.join("projects/-home-dev-project");
    let big = project.join(format!("{SESSION}.jsonl"));
    eprintln!("generating a {megabytes} MB transcript…");
    let written = generate(&big, megabytes * 1_000_000).expect("generate");
    let size = fs::metadata(&big).expect("size").len();
    let mut rows = Vec::new();
    let limits = Limits { part_bytes: 1 << 40, total_bytes: 1 << 40 };

    // Load: the whole session, as each library offers it.
    let store = Store::with_limits(FsStorage::new(&root), limits);
    let (mneme_load, mneme_peak, transcript) = measure(3, || block_on(store.sessions().load(SESSION)).expect("mneme load"));
    let (cersei_load, cersei_peak, entries) = measure(3, || cersei_memory::session_storage::load_transcript(&big).expect("cersei load"));
    assert_eq!(transcript.entries.len(), written);
    assert_eq!(entries.len(), written, "cersei read every generated entry");
    rows.push(Row {
        operation: format!("load {} MB ({written} entries)", size / 1_000_000),
        mneme: mneme_load,
        cersei: cersei_load,
        detail: format!(
            "Mneme {} (peak heap {:.2}× file), Cersei {} (peak heap {:.2}× file)",
            rate(size, mneme_load),
            mneme_peak as f64 / size as f64,
            rate(size, cersei_load),
            cersei_peak as f64 / size as f64
        ),
    });
    drop((transcript, entries));
    // Each run without the session index, which would answer from its cache after the
    // first: the row is the scan of the transcript's envelopes.
    let (mneme_scan, scan_peak, info) = measure(3, || {
        let _ = fs::remove_dir_all(root.join("index"));
        block_on(Store::with_limits(FsStorage::new(&root), limits).sessions().list()).expect("mneme list")
    });
    assert_eq!(info.sessions[0].entry_count as usize, written);
    rows.push(Row {
        operation: "scan envelopes (list one big session, no index)".into(),
        mneme: mneme_scan,
        cersei: Duration::ZERO,
        detail: format!(
            "Mneme {} (peak heap {:.2}× file); Cersei has no envelope-only read",
            rate(size, mneme_scan),
            scan_peak as f64 / size as f64
        ),
    });
    let in_memory = fs::read(&big).expect("read the transcript");
    let (reader, reader_peak, report) = measure(3, || mneme_core::load_report(&in_memory));
    assert_eq!(report.entry_count as usize, written);
    rows.push(Row {
        operation: "reader alone (envelopes of bytes in memory)".into(),
        mneme: reader,
        cersei: Duration::ZERO,
        detail: format!("Mneme {} (peak heap {:.2}× file, beyond the bytes)", rate(size, reader), reader_peak as f64 / size as f64),
    });
    drop(in_memory);
    let (mneme_context, context_peak, context) = measure(3, || block_on(store.sessions().context(SESSION)).expect("mneme context"));
    rows.push(Row {
        operation: "resume context".into(),
        mneme: mneme_context,
        cersei: cersei_load,
        detail: format!(
            "{} messages, {} (peak heap {:.2}× file); Cersei's closest is its load",
            context.messages.len(),
            rate(size, mneme_context),
            context_peak as f64 / size as f64
        ),
    });
    // The same resume through the WebAssembly component under wasmtime (the CLI's
    // default engine): the storage import copies the file into the guest.
    let runtime = mneme_host::Runtime::new().expect("wasmtime");
    let mut component = runtime.instantiate(FsStorage::new(&root), limits).expect("instantiate the component");
    let (component_context, _, through) = measure(3, || mneme_core::Engine::context(&mut component, SESSION).expect("component context"));
    assert_eq!(through.messages.len(), context.messages.len());
    rows.push(Row {
        operation: "resume context through the component".into(),
        mneme: component_context,
        cersei: cersei_load,
        detail: format!("{} (wasmtime, the storage import copying the file in)", rate(size, component_context)),
    });
    drop(through);
    // What an agent sends the model next: the context as Anthropic's request body.
    let anthropic = mneme_core::Provider::Anthropic;
    let (request, request_peak, body) =
        measure(3, || block_on(store.sessions().provider_context(SESSION, anthropic, None, &[])).expect("mneme provider context"));
    rows.push(Row {
        operation: "provider context (Anthropic request body)".into(),
        mneme: request,
        cersei: cersei_load,
        detail: format!(
            "{} messages, a {} MB body, {} (peak heap {:.2}× file); Cersei's closest is its load",
            body.message_count,
            body.body.len() / 1_000_000,
            rate(size, request),
            request_peak as f64 / size as f64
        ),
    });
    let (component_request, _, through) = measure(3, || {
        mneme_core::Engine::provider_context(&mut component, SESSION, anthropic, None, &[]).expect("component provider context")
    });
    assert_eq!(through, body);
    rows.push(Row {
        operation: "provider context through the component".into(),
        mneme: component_request,
        cersei: cersei_load,
        detail: format!("{} (wasmtime)", rate(size, component_request)),
    });
    drop((component, through, body));

    // The same session compacted (the newest messages kept): resume reads from its end
    // only as far back as its last compaction.
    let settings = mneme_core::Settings { keep: mneme_core::Keep::RecentMessages(6), ..mneme_core::Settings::default() };
    let plan = block_on(store.compaction().plan_compaction(SESSION, &settings, mneme_core::Mode::Manual)).expect("plan");
    let ids = mneme_core::CompactionIds { boundary: "bench-boundary".into(), summary: "bench-summary".into() };
    block_on(store.compaction().apply_compaction(
        SESSION,
        &plan,
        "What happened before: the tests were run many times.",
        &ids,
        1_800_000_000_000,
    ))
    .expect("compact");
    let compacted = Store::with_limits(FsStorage::new(&root), limits);
    let (mneme_resume, resume_peak, context) = measure(3, || block_on(compacted.sessions().context(SESSION)).expect("mneme context"));
    assert!(context.compacted && context.messages.len() == 7, "{} messages", context.messages.len());
    rows.push(Row {
        operation: format!("resume a compacted {} MB session", size / 1_000_000),
        mneme: mneme_resume,
        cersei: cersei_load,
        detail: format!(
            "{} messages from the end of the file (peak heap {:.4}× file); Cersei has no compaction and loads it all; Claude Code 2.1.330 skips to the boundary too but takes ~0.6 s to start",
            context.messages.len(),
            resume_peak as f64 / size as f64
        ),
    });
    fs::remove_file(&big).expect("remove the big file");

    // A pi session of the same size: resume as pi itself does it (SessionManager.open
    // and buildSessionContext, through node), and as Mneme does, before and after a
    // compaction near its end.
    let pi_root = dir.path().join("pi");
    let pi_file = pi_root.join("projects/p/pi-bench.jsonl");
    let pi_entries = generate_pi(&pi_file, megabytes * 1_000_000).expect("generate the pi session");
    let pi_size = fs::metadata(&pi_file).expect("size").len();
    let pi_store = Store::with_limits(FsStorage::new(&pi_root), limits);
    let (mneme_pi, pi_peak, pi_context) = measure(3, || block_on(pi_store.sessions().context("pi-bench")).expect("mneme pi context"));
    let pi_itself = run_pi(&pi_file);
    rows.push(Row {
        operation: format!("resume a {} MB pi session ({pi_entries} entries)", pi_size / 1_000_000),
        mneme: mneme_pi,
        cersei: Duration::ZERO,
        detail: format!(
            "{} messages, {} (peak heap {:.2}× file); pi 0.73.1 itself: {}",
            pi_context.messages.len(),
            rate(pi_size, mneme_pi),
            pi_peak as f64 / pi_size as f64,
            pi_itself.as_ref().map_or_else(|e| format!("not run ({e})"), |(t, n)| format!("{t:.2?} for {n} messages"))
        ),
    });
    let plan =
        block_on(pi_store.compaction().plan_compaction("pi-bench", &settings, mneme_core::Mode::Manual)).expect("plan the pi session");
    block_on(pi_store.compaction().apply_compaction("pi-bench", &plan, "What happened before.", &ids, 1_800_000_000_000))
        .expect("compact the pi session");
    let (mneme_pi_compacted, _, compacted_context) =
        measure(3, || block_on(pi_store.sessions().context("pi-bench")).expect("mneme pi context"));
    let pi_compacted = run_pi(&pi_file);
    rows.push(Row {
        operation: format!("resume the {} MB pi session, compacted", pi_size / 1_000_000),
        mneme: mneme_pi_compacted,
        cersei: Duration::ZERO,
        detail: format!(
            "{} messages from the end of the file; pi 0.73.1 itself: {}",
            compacted_context.messages.len(),
            pi_compacted.as_ref().map_or_else(|e| format!("not run ({e})"), |(t, n)| format!("{t:.2?} for {n} messages"))
        ),
    });
    fs::remove_file(&pi_file).expect("remove the pi file");

    // Append: one message at a time into a fresh session, each call a full append.
    for durability in [Durability::Buffered, Durability::Fsync] {
        let append_root = dir.path().join(format!("append-{durability:?}"));
        let store = Store::with_limits(FsStorage::new(&append_root).with_durability(durability), limits);
        let cersei_path = append_root.join("cersei/append.jsonl");
        let text = "Please run the test suite again and tell me what fails. ".repeat(4);
        // `appends` messages, one append each; `run` keeps their ids apart.
        let append_all = |run: &str, from_ms: i64| {
            for i in 0..appends {
                let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
                let entry =
                    NewEntry { uuid: format!("{run}-{i}"), now_ms: from_ms + i as i64, role, text: text.clone(), cwd: "/home/dev".into() };
                block_on(store.sessions().append("appended", entry)).expect("mneme append");
            }
        };
        // Each the fastest of three runs: a 2-core VM's noise is larger than an append.
        let mut run: i64 = 0;
        let (mneme_append, _, ()) = measure(3, || {
            run += 1;
            append_all(&format!("uuid{run}"), 1_800_000_000_000 + run * appends as i64)
        });
        let (cersei_append, _, ()) = measure(3, || {
            for _ in 0..appends {
                let message = cersei_types::Message::user(text.clone());
                cersei_memory::session_storage::write_user_entry(&cersei_path, "appended", message, "/home/dev").expect("cersei append");
            }
        });
        let note = match durability {
            Durability::Buffered => "Mneme without fsync, as Cersei (which never fsyncs)",
            Durability::Fsync => "Mneme's default: fsync per entry; Cersei still without",
        };
        rows.push(Row {
            operation: format!("append {appends} entries"),
            mneme: mneme_append / appends as u32,
            cersei: cersei_append / appends as u32,
            detail: format!("per entry; {note}"),
        });

        // The same through a held session: locked once, each write one append.
        block_on(store.sessions().hold("appended")).expect("hold");
        let session = append_root.join("projects/-home-dev/appended.jsonl");
        let session_size = || fs::metadata(&session).expect("the session").len();
        let before_held = session_size();
        let (held, _, ()) = measure(3, || {
            run += 1;
            append_all(&format!("held{run}"), 1_900_000_000_000 + run * appends as i64)
        });
        rows.push(Row {
            operation: format!("append {appends} entries to a held session"),
            mneme: held / appends as u32,
            cersei: cersei_append / appends as u32,
            detail: format!("per entry, `hold` once; {note}"),
        });
        // What the system calls alone cost: the held append's floor, unless it kept
        // acknowledged entries in memory, where a crash would lose them. With fsync,
        // the disk's flush, which bounds the turns' rate too.
        let record = vec![b'x'; ((session_size() - before_held) / (3 * appends as u64)) as usize];
        let mut file = fs::OpenOptions::new().create(true).append(true).open(append_root.join("floor.jsonl")).expect("open");
        let (floor, _, ()) = measure(3, || {
            for _ in 0..appends {
                file.write_all(&record).expect("write");
                if durability == Durability::Fsync {
                    file.sync_data().expect("fdatasync");
                }
            }
        });
        let (calls, what) = match durability {
            Durability::Buffered => ("write(2)", "the system call a held append makes once, its floor"),
            Durability::Fsync => {
                ("write(2) and fdatasync(2)", "what a held append with fsync costs at least, and a turn of 10 at least once")
            }
        };
        rows.push(Row {
            operation: format!("{calls} of {appends} records of an entry's size, alone"),
            mneme: floor / appends as u32,
            cersei: cersei_append / appends as u32,
            detail: format!("per record ({} bytes): {what}", record.len()),
        });
        // Whole turns of 10 entries, one write (one fsync) each.
        let turn: Vec<serde_json::Value> = (0..10)
            .map(|i| serde_json::json!({ "role": if i % 2 == 0 { "user" } else { "assistant" }, "content": text.clone() }))
            .collect();
        let messages = serde_json::Value::Array(turn).to_string();
        let turns = appends / 10;
        let (batched, _, ()) = measure(3, || {
            run += 1;
            for i in 0..turns {
                let turn = mneme_core::Turn {
                    uuid: format!("turn{run}-{i}"),
                    now_ms: 1_950_000_000_000 + run * turns as i64 + i as i64,
                    cwd: "/home/dev".into(),
                    provider: mneme_core::Provider::Anthropic,
                    messages: messages.clone(),
                    parent: None,
                    agent: None,
                };
                block_on(store.sessions().append_turn("appended", turn)).expect("mneme turn");
            }
        });
        block_on(store.sessions().release("appended")).expect("release");
        let per_entry = batched / (turns * 10) as u32;
        rows.push(Row {
            operation: format!("append {turns} turns of 10 entries to a held session"),
            mneme: per_entry,
            cersei: cersei_append / appends as u32,
            detail: format!("per entry: {:.0} entries/s, one write per turn; {note}", 1.0 / per_entry.as_secs_f64()),
        });
    }

    // Paths that were quadratic: the gates over many tool calls, and resuming one reply
    // that Claude Code split over many lines (both linear now).
    let edge_root = dir.path().join("edge");
    let edge_project = edge_root.join("projects/-home-dev-project");
    fs::create_dir_all(&edge_project).expect("create the project folder");
    let mut tools = String::new();
    let mut parent = String::from("null");
    for i in 0..100_000u32 {
        let (kind, content) = if i % 2 == 0 {
            ("assistant", format!(r#"[{{"type":"tool_use","id":"t{i}","name":"Read","input":{{"file_path":"/src/{i}.rs"}}}}]"#))
        } else {
            ("user", format!(r#"[{{"type":"tool_result","tool_use_id":"t{}","content":"fn main() {{}}"}}]"#, i - 1))
        };
        tools += &format!(
            r#"{{"parentUuid":{parent},"type":"{kind}","uuid":"e{i}","sessionId":"tools","timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"{kind}","content":{content}}}}}"#
        );
        tools.push('\n');
        parent = format!("\"e{i}\"");
    }
    fs::write(edge_project.join("tools.jsonl"), &tools).expect("write the tool session");
    let mut split = String::new();
    parent = String::from("null");
    for i in 0..60_000u32 {
        split += &format!(
            r#"{{"parentUuid":{parent},"type":"assistant","uuid":"s{i}","sessionId":"split","timestamp":"2026-01-01T00:00:00.000Z","message":{{"id":"msg_1","role":"assistant","content":[{{"type":"text","text":"part {i} of one long reply"}}]}}}}"#
        );
        split.push('\n');
        parent = format!("\"s{i}\"");
    }
    fs::write(edge_project.join("split.jsonl"), &split).expect("write the split session");
    let store = Store::new(FsStorage::new(&edge_root));
    let (gates, _, decision) = measure(3, || {
        block_on(store.gates().extraction_gate("tools", &mneme_core::gates::ExtractionSettings::default())).expect("extraction gate")
    });
    assert!(decision.reason.contains("50000 tool calls"), "{}", decision.reason);
    rows.push(Row {
        operation: "gates on 50k tool calls".into(),
        mneme: gates,
        cersei: Duration::ZERO,
        detail: format!(
            "extraction gate over {} MB; issue 8 measured 12 s before pairing became linear; Cersei has no gates over transcripts",
            tools.len() / 1_000_000
        ),
    });
    let (merge, _, context) = measure(3, || block_on(store.sessions().context("split")).expect("resume the split reply"));
    assert_eq!(context.messages.len(), 1);
    rows.push(Row {
        operation: "resume one reply split over 60k lines".into(),
        mneme: merge,
        cersei: Duration::ZERO,
        detail: "merged into one message; issue 8 measured 5.1 s before merging became linear".into(),
    });

    rows.extend(growth_rows(&dir.path().join("growth")));
    rows.extend(index_rows(
        &dir.path().join("index"),
        &Scale { sessions, session_bytes: 50_000, keys: 1_000, cold_runs: 3, rewrites: 200 },
    ));
    if scale > 0 {
        eprintln!("the index at scale: {scale} sessions and {scale} keys…");
        let scale = Scale { sessions: scale, session_bytes: 1_000, keys: scale, cold_runs: 1, rewrites: 3 };
        rows.extend(index_rows(&dir.path().join("index-scale"), &scale));
    }

    println!("| operation | Mneme | cersei-memory 0.2.6 | Cersei ÷ Mneme | notes |");
    println!("|---|---|---|---|---|");
    for row in rows {
        let ratio =
            if row.cersei.is_zero() { "–".to_owned() } else { format!("{:.2}×", row.cersei.as_secs_f64() / row.mneme.as_secs_f64()) };
        let cersei = if row.cersei.is_zero() { "–".to_owned() } else { format!("{:.2?}", row.cersei) };
        println!("| {} | {:.2?} | {cersei} | {ratio} | {} |", row.operation, row.mneme, row.detail);
    }
}
