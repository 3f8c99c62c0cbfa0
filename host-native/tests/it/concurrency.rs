//! Two real `mneme` processes appending to one session at the same time.

use std::collections::HashSet;
use std::fs;
use std::process::{Command, Stdio};

use serde_json::Value;

const PER_PROCESS: usize = 1500;

#[test]
fn two_processes_appending_never_interleave_or_lose_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap().to_owned();
    // `mneme append` runs one append per process start; to press on the lock, each
    // writer is a shell loop of appends, both started together.
    let script = format!(
        "for i in $(seq 1 {PER_PROCESS}); do \"$0\" --root \"$1\" append shared --role user --text \"$2 $i\" --cwd /w || exit 1; done"
    );
    let writers: Vec<_> = ["alpha", "beta"]
        .iter()
        .map(|name| {
            Command::new("sh")
                .args(["-c", &script, env!("CARGO_BIN_EXE_mneme"), &root, name])
                .stdout(Stdio::null())
                .spawn()
                .expect("start a writer")
        })
        .collect();
    for mut writer in writers {
        assert!(writer.wait().unwrap().success(), "a writer failed");
    }

    let text = fs::read_to_string(dir.path().join("projects/-w/shared.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 * PER_PROCESS, "every append is one line");
    let mut seen = HashSet::new();
    let mut texts = HashSet::new();
    for (index, line) in lines.iter().enumerate() {
        let entry: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {} is not one intact entry: {e}", index + 1));
        match entry["parentUuid"].as_str() {
            None => assert_eq!(index, 0),
            // Each entry chains to the one written just before it, whoever wrote it.
            Some(parent) => assert_eq!(Some(parent), serde_json::from_str::<Value>(lines[index - 1]).unwrap()["uuid"].as_str()),
        }
        assert!(seen.insert(entry["uuid"].as_str().unwrap().to_owned()));
        texts.insert(entry["message"]["content"].as_str().unwrap().to_owned());
    }
    for name in ["alpha", "beta"] {
        for i in 1..=PER_PROCESS {
            assert!(texts.contains(&format!("{name} {i}")), "{name} {i} is missing");
        }
    }
}

#[test]
fn of_many_stores_racing_for_the_dream_lock_exactly_one_wins() {
    use std::sync::{Arc, Barrier};

    use mneme_host::FsStorage;
    use mneme_host::core::gates::DreamSettings;
    use mneme_host::core::{Limits, NewEntry, Role};

    let dir = tempfile::tempdir().unwrap();
    let mut setup = mneme_host::native(FsStorage::new(dir.path()), Limits::default());
    for i in 0..5 {
        let entry = NewEntry { uuid: format!("u{i}"), now_ms: 1_800_000_000_000, role: Role::User, text: "hi".into(), cwd: "/w".into() };
        setup.append(&format!("s{i}"), entry).unwrap();
    }
    let racers = 8;
    let barrier = Arc::new(Barrier::new(racers));
    let handles: Vec<_> = (0..racers)
        .map(|n| {
            let (root, barrier) = (dir.path().to_owned(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                // Each racer has its own storage, hence its own OS file locks, as a process would.
                let mut engine = mneme_host::native(FsStorage::new(root), Limits::default());
                barrier.wait();
                engine.dream_acquire(1_800_000_100_000, &format!("racer-{n}"), &DreamSettings::default()).unwrap().fire
            })
        })
        .collect();
    let winners = handles.into_iter().map(|h| h.join().unwrap()).filter(|&won| won).count();
    assert_eq!(winners, 1);
}
