//! Real processes on real disks: writers killed with SIGKILL at random points, four
//! processes appending to one session at once, and a tmpfs filled until ENOSPC under
//! every write path. Each ends with a verifier: every acknowledged entry is there, once,
//! the store opens, and the next write works.
//!
//! The writers are this binary started again with `--writer` (the file has its own
//! `main`, no test harness), so every write goes through the real `FsStorage`: flock,
//! append, fsync, rename.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mneme_host::core::memory::file::MemoryType;
use mneme_host::core::memory::store::{NewMemory, Scope};
use mneme_host::core::{CompactionIds, Engine, EngineError, Keep, Limits, Mode, NewEntry, Provider, Role, Settings, Turn};
use mneme_host::{Error, FsStorage};
use serde_json::json;

const T0: i64 = 1_800_000_000_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--writer") {
        writer(&args[2..]);
        return;
    }
    // `cargo test -- --list`, as libtest would answer it.
    if args.iter().any(|a| a == "--list") {
        println!("processes: test");
        return;
    }
    let started = Instant::now();
    four_processes_append_to_one_session_and_every_line_is_one_intact_link_of_one_chain();
    writers_killed_at_random_points_lose_nothing_acknowledged_and_no_turn_is_half_there();
    a_full_disk_refuses_every_write_path_and_loses_nothing();
    the_cli_syncs_every_write_before_it_answers();
    println!("processes: every check passed in {:.1?}", started.elapsed());
}

fn engine(root: &Path) -> Box<dyn Engine<Error>> {
    mneme_host::native(FsStorage::new(root), Limits::default())
}

fn entry(uuid: &str, text: &str) -> NewEntry {
    NewEntry { uuid: uuid.into(), now_ms: T0, role: Role::User, text: text.into(), cwd: "/w".into() }
}

/// A turn whose five lines all carry `id`: a question, the reply's text and tool call,
/// the result, the answer.
fn turn(id: &str) -> Turn {
    let messages = json!([
        { "role": "user", "content": format!("q {id}") },
        { "role": "assistant", "id": format!("msg_{id}"), "content": [
            { "type": "text", "text": format!("a {id}") },
            { "type": "tool_use", "id": format!("toolu_{id}"), "name": "Bash", "input": { "command": "ls" } },
        ] },
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": format!("toolu_{id}"), "content": format!("r {id}") }] },
        { "role": "assistant", "id": format!("msg2_{id}"), "content": format!("done {id}") },
    ]);
    Turn {
        uuid: id.into(),
        now_ms: T0,
        cwd: "/w".into(),
        provider: Provider::Anthropic,
        messages: messages.to_string(),
        parent: None,
        agent: None,
    }
}

/// `--writer ROOT SESSION NAME COUNT (append|turns)`: writes COUNT records, printing
/// each one's id as soon as it is acknowledged.
fn writer(args: &[String]) {
    let [root, session, name, count, mode] = args else { panic!("--writer ROOT SESSION NAME COUNT MODE") };
    let count: usize = count.parse().expect("COUNT is a number");
    let mut engine = engine(Path::new(root));
    let mut out = std::io::stdout().lock();
    for i in 0..count {
        let id = format!("{name}x{i}x");
        match mode.as_str() {
            "append" => engine.append(session, entry(&id, &format!("{name} {i}"))).map(drop),
            _ if i % 2 == 0 => engine.append(session, entry(&id, &format!("{name} {i}"))).map(drop),
            _ => engine.append_turn(session, turn(&id)).map(drop),
        }
        .unwrap_or_else(|e| panic!("{name} {i}: {e}"));
        writeln!(out, "{id}").and_then(|()| out.flush()).expect("stdout");
    }
}

fn spawn_writer(root: &Path, session: &str, name: &str, count: usize, mode: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--writer", root.to_str().unwrap(), session, name, &count.to_string(), mode])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start a writer")
}

fn four_processes_append_to_one_session_and_every_line_is_one_intact_link_of_one_chain() {
    const WRITERS: usize = 4;
    const EACH: usize = 2_500;
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let writers: Vec<Child> = (0..WRITERS).map(|n| spawn_writer(dir.path(), "shared", &format!("w{n}"), EACH, "append")).collect();
    for mut writer in writers {
        assert!(writer.wait().unwrap().success(), "a writer failed");
    }
    let text = std::fs::read_to_string(dir.path().join("projects/-w/shared.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .enumerate()
        .map(|(n, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {} is not intact: {e}", n + 1)))
        .collect();
    assert_eq!(lines.len(), WRITERS * EACH, "every append is one line");
    let mut seen = HashSet::new();
    for (n, line) in lines.iter().enumerate() {
        let parent = line["parentUuid"].as_str();
        assert_eq!(parent, if n == 0 { None } else { lines[n - 1]["uuid"].as_str() }, "line {} chains to the line before it", n + 1);
        assert!(seen.insert(line["uuid"].as_str().unwrap().to_owned()), "line {} is there twice", n + 1);
    }
    for n in 0..WRITERS {
        for i in 0..EACH {
            assert!(seen.contains(&format!("w{n}x{i}x")), "w{n} {i} is missing");
        }
    }
    println!("4 processes x 2,500 appends: 10,000 lines, one chain, in {:.1?}", started.elapsed());
}

/// A tiny deterministic generator for the kill delays (no randomness crate needed).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn writers_killed_at_random_points_lose_nothing_acknowledged_and_no_turn_is_half_there() {
    const KILLS: usize = 120;
    let dir = tempfile::tempdir().unwrap();
    let mut random = Lcg(0x6d6e656d65);
    let mut acknowledged: Vec<String> = Vec::new();
    let mut killed_mid_run = 0;
    let mut torn_found = 0;
    for round in 0..KILLS {
        let mut child = spawn_writer(dir.path(), "victim", &format!("k{round}"), 1_000, "turns");
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || BufReader::new(stdout).lines().map_while(Result::ok).collect::<Vec<String>>());
        std::thread::sleep(Duration::from_micros(2_000 + random.below(60_000)));
        let finished = child.try_wait().unwrap().is_some();
        // SIGKILL: no destructor, no unlock, no flush — the process is simply gone.
        child.kill().unwrap();
        child.wait().unwrap();
        if !finished {
            killed_mid_run += 1;
        }
        acknowledged.extend(reader.join().unwrap());

        // The verifier, as the next process to open the store.
        let mut engine = engine(dir.path());
        let loaded = engine.load("victim").unwrap_or_else(|e| panic!("round {round}: the store does not open: {e}"));
        assert!(loaded.report.skipped.is_empty(), "round {round}: damaged lines {:?}", loaded.report.skipped);
        torn_found += usize::from(loaded.report.torn_tail);
        let mut lines_of: HashMap<String, usize> = HashMap::new();
        let mut present: HashSet<String> = loaded.entries.iter().filter_map(|e| e.uuid.clone()).collect();
        for e in &loaded.entries {
            for id in record_ids(&e.raw) {
                *lines_of.entry(id.clone()).or_default() += 1;
                present.insert(id);
            }
        }
        for id in &acknowledged {
            assert!(present.contains(id), "round {round}: acknowledged {id} lost");
        }
        for (id, lines) in &lines_of {
            // Odd records are turns of five lines, even ones single appends.
            let turn = id.trim_end_matches('x').rsplit('x').next().and_then(|i| i.parse::<u32>().ok()).is_some_and(|i| i % 2 == 1);
            let whole = if turn { 5 } else { 1 };
            assert_eq!(*lines, whole, "round {round}: {id} has {lines} of its {whole} lines");
        }
        engine
            .append("victim", entry(&format!("after{round}"), "the next write"))
            .unwrap_or_else(|e| panic!("round {round}: the next write fails: {e}"));
        acknowledged.push(format!("after{round}"));
    }
    assert!(killed_mid_run >= 100, "writers killed mid-run: {killed_mid_run} of {KILLS}");
    println!(
        "SIGKILL: {killed_mid_run} writers killed mid-run ({torn_found} left a torn write), {} acknowledged records, none lost",
        acknowledged.len()
    );
}

/// The writer record ids (`k<round>x<i>x`) a line mentions, each once (not the one it
/// chains to).
fn record_ids(raw: &str) -> HashSet<String> {
    let bytes = raw.as_bytes();
    let mut ids = HashSet::new();
    for (start, _) in raw.match_indices('k') {
        let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
        let round = digits(start + 1);
        if round == 0 || bytes.get(start + 1 + round) != Some(&b'x') {
            continue;
        }
        let index = digits(start + 2 + round);
        let end = start + 2 + round + index;
        let parent = raw[..start].ends_with("\"parentUuid\":\"");
        if index > 0 && bytes.get(end) == Some(&b'x') && !parent && (start == 0 || !bytes[start - 1].is_ascii_alphanumeric()) {
            ids.insert(raw[start..=end].to_owned());
        }
    }
    ids
}

/// A tmpfs of 2 MiB, nearly filled: each write path runs until the disk refuses it.
/// (Repair's writes — a backup, then a replace — are the replace every path here makes.)
/// The refusal is `quota-exceeded` (never a generic I/O error, never a panic), nothing
/// acknowledged is lost, and once space is freed the same store writes again.
fn a_full_disk_refuses_every_write_path_and_loses_nothing() {
    type Step = fn(&mut dyn Engine<Error>, usize) -> Result<(), Error>;
    let paths: [(&str, Step); 8] = [
        ("append", |e, i| e.append("s", entry(&format!("e{i}"), &"many words of text ".repeat(40))).map(drop)),
        ("turn", |e, i| e.append_turn("s", turn(&format!("t{i}x"))).map(drop)),
        ("tombstone", |e, i| e.append("s", entry(&format!("d{i}"), "gone soon")).and_then(|_| e.tombstone("s", &format!("d{i}"), T0))),
        ("compaction", |e, i| {
            e.append("s", entry(&format!("c{i}"), &"compact me ".repeat(60)))?;
            let plan = e.plan_compaction("s", &Settings { keep: Keep::RecentMessages(1), ..Settings::default() }, Mode::Manual)?;
            let ids = CompactionIds { boundary: format!("b{i}"), summary: format!("m{i}") };
            e.apply_compaction("s", &plan, &"the summary ".repeat(50), &ids, T0).map(drop)
        }),
        ("fork", |e, i| e.fork("s", None, &format!("fork{i}"), T0).map(drop)),
        ("memory", |e, i| {
            let memory = NewMemory::new(&format!("Fact {i}"), MemoryType::Project, "a fact", &"remembered text ".repeat(60));
            e.memory_add(&Scope::Project("-w".into()), memory, T0).map(drop)
        }),
        ("key reset", |e, i| e.reset_key("cron:nightly", &format!("k{i}"), T0 + i as i64).map(drop)),
        ("rollover", |e, i| {
            let current = e.key("cron:nightly")?.entry.session_id;
            e.append(&current, entry(&format!("o{i}"), &"a long session ".repeat(30)))?;
            let ids = CompactionIds { boundary: format!("rb{i}"), summary: format!("rs{i}") };
            e.rollover("cron:nightly", &"what happened ".repeat(30), &ids, &format!("roll{i}"), T0 + i as i64).map(drop)
        }),
    ];
    let mount = tempfile::tempdir().unwrap();
    let status = Command::new("mount").args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"]).arg(mount.path()).status();
    assert!(
        status.as_ref().is_ok_and(|s| s.success()),
        "mounting a tmpfs failed ({status:?}): this test needs root (CI runs the test command as root)"
    );
    let result = std::panic::catch_unwind(|| {
        for (name, step) in paths {
            let root = mount.path().join(name);
            let mut engine = engine(&root);
            engine.append("s", entry("seed", "the first entry")).unwrap();
            engine
                .resolve(
                    &mneme_host::core::index::Inbound {
                        chat_type: mneme_host::core::index::ChatType::Cron,
                        id: Some("nightly".into()),
                        text: "run".into(),
                        ..Default::default()
                    },
                    &Default::default(),
                    T0,
                    "s",
                )
                .unwrap();
            // Leave a little room, so the path's own writes are what fills the disk.
            let filler = mount.path().join("filler");
            let mut file = std::fs::File::create(&filler).unwrap();
            let chunk = vec![b'x'; 4096];
            while file.write_all(&chunk).and_then(|()| file.sync_all()).is_ok() {}
            drop(file);
            let free_now = std::fs::metadata(&filler).unwrap().len();
            std::fs::OpenOptions::new().write(true).open(&filler).unwrap().set_len(free_now.saturating_sub(48 * 1024)).unwrap();

            let before = engine.load("s").unwrap().entries.len();
            let mut refused = None;
            for i in 0..10_000 {
                match step(engine.as_mut(), i) {
                    Ok(()) => {}
                    Err(error) => {
                        refused = Some(error);
                        break;
                    }
                }
            }
            let error = refused.unwrap_or_else(|| panic!("{name}: the disk never filled"));
            assert_eq!(error.kind(), "storage/quota-exceeded", "{name}: {error}");
            let acknowledged = engine.load("s").unwrap().entries;
            assert!(acknowledged.len() >= before, "{name}");

            // Space again: the same engine and a new one both carry on, and nothing is lost.
            std::fs::remove_file(&filler).unwrap();
            engine.reopen("s").unwrap();
            engine.append("s", entry("after-full", "written once space was freed")).unwrap_or_else(|e| panic!("{name}: {e}"));
            let reloaded = mneme_host::native(FsStorage::new(&root), Limits::default()).load("s").unwrap();
            assert!(reloaded.report.skipped.is_empty(), "{name}: {:?}", reloaded.report.skipped);
            let uuids: HashSet<_> = reloaded.entries.iter().filter_map(|e| e.uuid.clone()).collect();
            for e in &acknowledged {
                if let Some(uuid) = &e.uuid {
                    assert!(uuids.contains(uuid), "{name}: {uuid} lost");
                }
            }
            assert!(uuids.contains("after-full"), "{name}");
            std::fs::remove_dir_all(&root).unwrap();
            println!("ENOSPC: {name} refused with quota-exceeded after filling the disk; nothing lost, writable again");
        }
    });
    let unmounted = Command::new("umount").arg(mount.path()).status();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
    assert!(unmounted.is_ok_and(|s| s.success()), "umount");
}

/// The filesystem host's real sequence of system calls, recorded by strace around
/// `mneme` commands that take every kind of write (a new session in a new project, an
/// append, a memory: temp file, rename, MEMORY.md, the recall index), checked against
/// what survives a power cut: every byte written to the store is synced before the
/// command ends, a temp file is synced before it is renamed, and every new name — file
/// or folder — has its folder synced after it appears.
fn the_cli_syncs_every_write_before_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let root_text = root.to_str().unwrap().to_owned();
    let commands: [&[&str]; 4] = [
        &["append", "s", "--role", "user", "--text", "first", "--cwd", "/w/app"],
        &["append", "s", "--role", "assistant", "--text", "second", "--cwd", "/w/app"],
        &["memory", "add", "--name", "Deploy", "--type", "project", "--description", "how", "--cwd", "/w/app"],
        &["append", "t", "--role", "user", "--text", "a session in a second project", "--cwd", "/w/other"],
    ];
    let mut checked = 0;
    for command in commands {
        let existing = tree(&root);
        let trace = dir.path().join("trace.log");
        let status = Command::new("strace")
            .args([
                "-f",
                "-y",
                "-qq",
                "-e",
                "trace=openat,write,pwrite64,fsync,fdatasync,rename,renameat,renameat2,link,linkat,mkdir,mkdirat,ftruncate",
                "-o",
            ])
            .arg(&trace)
            .arg(env!("CARGO_BIN_EXE_mneme"))
            .args(["--root", &root_text])
            .args(command)
            .stdout(Stdio::null())
            .status()
            .expect("strace runs (the setup installs it)");
        assert!(status.success(), "{command:?} under strace");
        let log = std::fs::read_to_string(&trace).unwrap();
        let problems = unsynced(&log, &root_text, &existing);
        assert!(problems.is_empty(), "{command:?} leaves writes a power cut could take:\n{}\n--- trace ---\n{log}", problems.join("\n"));
        checked += log.lines().filter(|l| l.contains(&root_text)).count();
    }
    println!("syscalls: {checked} store calls of 4 commands checked; every write synced before the answer");
}

/// What in an strace log (`-f -y`) of one command would not survive a power cut: data
/// written to a store file and never synced, a file renamed before it was synced, a new
/// name whose folder was never synced afterwards. Lock files (`<root>/.mneme/`) are not data.
fn unsynced(log: &str, root: &str, existing: &HashSet<String>) -> Vec<String> {
    let mut dirty: HashSet<String> = HashSet::new();
    let mut unsynced_dirs: HashSet<String> = HashSet::new();
    let mut problems = Vec::new();
    let locks = format!("{root}/.mneme");
    let in_store = |path: &str| path.starts_with(root) && !path.starts_with(&locks);
    let parent = |path: &str| path.rsplit_once('/').map_or(String::new(), |(dir, _)| dir.to_owned());
    for line in log.lines() {
        let call = line.split_once("  ").map_or(line, |(_, rest)| rest).trim_start();
        let Some((name, rest)) = call.split_once('(') else { continue };
        if call.contains(" = -1 ") {
            continue;
        }
        // `-y` prints an fd as `5</path>`; paths are the first quoted or bracketed ones.
        let fd_path = rest.split_once('<').and_then(|(_, p)| p.split_once('>')).map(|(p, _)| p.to_owned());
        let quoted: Vec<&str> = rest.split('"').skip(1).step_by(2).collect();
        match name {
            "write" | "pwrite64" | "ftruncate" => {
                if let Some(path) = fd_path.filter(|p| in_store(p)) {
                    dirty.insert(path);
                }
            }
            "fsync" | "fdatasync" => {
                if let Some(path) = fd_path {
                    dirty.remove(&path);
                    unsynced_dirs.remove(&path);
                }
            }
            "openat" if rest.contains("O_CREAT") => {
                if let Some(path) = quoted.first().filter(|p| in_store(p) && !existing.contains(**p)) {
                    unsynced_dirs.insert(parent(path));
                }
            }
            "mkdir" | "mkdirat" => {
                if let Some(path) = quoted.first().filter(|p| in_store(p) && !existing.contains(**p)) {
                    unsynced_dirs.insert(parent(path));
                }
            }
            "rename" | "renameat" | "renameat2" | "link" | "linkat" => {
                if let (Some(from), Some(to)) = (quoted.first(), quoted.get(1)) {
                    if dirty.contains(*from) {
                        problems.push(format!("{from} was renamed to {to} before it was synced"));
                    }
                    if in_store(to) {
                        unsynced_dirs.insert(parent(to));
                    }
                }
            }
            _ => {}
        }
    }
    // Temp files that were renamed away hold nothing any more; what is left is data.
    problems.extend(dirty.into_iter().filter(|p| Path::new(p).exists()).map(|p| format!("{p}: written, never synced")));
    problems.extend(
        unsynced_dirs
            .into_iter()
            .filter(|d| d.starts_with(root) || root.starts_with(d.as_str()))
            .map(|d| format!("{d}/: gained a name, never synced")),
    );
    problems
}

/// Every path under `root` (and `root` itself, when it exists), as strace prints them.
fn tree(root: &Path) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        if !path.exists() {
            continue;
        }
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
        found.insert(path.to_str().unwrap().to_owned());
    }
    found
}
