//! Any sequence of operations gives the same bytes through the natively linked core and
//! through the WebAssembly component: appends, turns with tool calls, tombstones,
//! compactions, forks, rewinds, memories and keys, run on two folders, compared file by
//! file (proptest, shrinking to the shortest sequence that differs).

use std::collections::BTreeMap;
use std::path::Path;

use mneme_host::core::index::{ChatType, Inbound, RoutePolicy};
use mneme_host::core::memory::file::MemoryType;
use mneme_host::core::memory::store::{NewMemory, Scope};
use mneme_host::core::{CompactionIds, Engine, Keep, Limits, Mode, NewEntry, Provider, Role, Settings, Turn};
use mneme_host::{Error, FsStorage, Runtime};
use proptest::prelude::*;
use serde_json::json;

const T0: i64 = 1_800_000_000_000;

#[derive(Clone, Debug)]
enum Op {
    Append { assistant: bool, words: u8, secret: bool },
    Turn,
    Tombstone(u8),
    Compact(u8),
    Fork(u8),
    Rewind(u8),
    Remember(u8),
    Resolve,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<bool>(), 1..40u8, prop::bool::weighted(0.1)).prop_map(|(assistant, words, secret)| Op::Append { assistant, words, secret }),
        2 => Just(Op::Turn),
        1 => any::<u8>().prop_map(Op::Tombstone),
        1 => (0..4u8).prop_map(Op::Compact),
        1 => any::<u8>().prop_map(Op::Fork),
        1 => any::<u8>().prop_map(Op::Rewind),
        1 => any::<u8>().prop_map(Op::Remember),
        1 => Just(Op::Resolve),
    ]
}

/// Runs the operations; each outcome (its error kind, or ok) is part of what is compared.
fn run(engine: &mut dyn Engine<Error>, ops: &[Op]) -> Vec<String> {
    let mut outcomes = Vec::new();
    let mut uuids: Vec<String> = Vec::new();
    for (n, op) in ops.iter().enumerate() {
        let now = T0 + n as i64 * 1_000;
        let pick = |i: u8, uuids: &[String]| uuids.get(i as usize % uuids.len().max(1)).cloned().unwrap_or_default();
        let outcome = match op {
            Op::Append { assistant, words, secret } => {
                let mut text = "word ".repeat(*words as usize);
                if *secret {
                    text.push_str("ghp_aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xYaB3d");
                }
                let role = if *assistant { Role::Assistant } else { Role::User };
                let entry = NewEntry { uuid: format!("u{n}"), now_ms: now, role, text, cwd: "/w".into() };
                engine.append("s", entry).map(|e| uuids.extend(e.uuid))
            }
            Op::Turn => {
                let messages = json!([
                    { "role": "assistant", "id": format!("msg{n}"), "content": [
                        { "type": "text", "text": "calling" },
                        { "type": "tool_use", "id": format!("toolu{n}"), "name": "Bash", "input": { "command": "ls" } },
                    ] },
                    { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": format!("toolu{n}"), "content": "a.txt", "is_error": n % 3 == 0 }] },
                ]);
                let turn = Turn {
                    uuid: format!("t{n}"),
                    now_ms: now,
                    cwd: "/w".into(),
                    provider: Provider::Anthropic,
                    messages: messages.to_string(),
                    parent: None,
                    agent: None,
                };
                engine.append_turn("s", turn).map(|es| uuids.extend(es.into_iter().filter_map(|e| e.uuid)))
            }
            Op::Tombstone(i) => engine.tombstone("s", &pick(*i, &uuids), now),
            Op::Compact(keep) => {
                let settings = Settings { keep: Keep::RecentMessages(u32::from(*keep)), ..Settings::default() };
                engine.plan_compaction("s", &settings, Mode::Manual).and_then(|plan| {
                    let summary = engine.summarize_offline("s", &plan)?;
                    let ids = CompactionIds { boundary: format!("b{n}"), summary: format!("m{n}") };
                    engine.apply_compaction("s", &plan, &summary, &ids, now).map(drop)
                })
            }
            Op::Fork(i) => engine.fork("s", Some(&pick(*i, &uuids)), &format!("f{n}"), now).map(drop),
            Op::Rewind(i) => {
                let turn = Turn {
                    uuid: format!("r{n}"),
                    now_ms: now,
                    cwd: "/w".into(),
                    provider: Provider::Anthropic,
                    messages: json!([{ "role": "user", "content": "again, from there" }]).to_string(),
                    parent: Some(pick(*i, &uuids)),
                    agent: None,
                };
                engine.append_turn("s", turn).map(|es| uuids.extend(es.into_iter().filter_map(|e| e.uuid)))
            }
            Op::Remember(i) => {
                let memory = NewMemory::new(&format!("Fact {}", i % 5), MemoryType::Project, "a fact", &format!("fact number {i}\n"));
                engine.memory_add(&Scope::Project("-w".into()), memory, now).map(drop)
            }
            Op::Resolve => {
                let inbound = Inbound { chat_type: ChatType::Cron, id: Some("nightly".into()), text: "run".into(), ..Inbound::default() };
                engine.resolve(&inbound, &RoutePolicy::default(), now, &format!("k{n}")).map(drop)
            }
        };
        outcomes.push(match outcome {
            Ok(()) => "ok".to_owned(),
            Err(error) => mneme_host::core::EngineError::kind(&error),
        });
    }
    outcomes
}

/// Every file under `root`, by path relative to it. Lock files are not data.
fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if relative.starts_with(".mneme") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                found.insert(relative, std::fs::read(&path).unwrap());
            }
        }
    }
    found
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_of_operations_writes_the_same_bytes_natively_and_through_the_component(ops in prop::collection::vec(op(), 1..24)) {
        let runtime = Runtime::new().unwrap();
        let (native_dir, component_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let native = run(mneme_host::native(FsStorage::new(native_dir.path()), Limits::default()).as_mut(), &ops);
        let component = run(&mut runtime.instantiate(FsStorage::new(component_dir.path()), Limits::default()).unwrap(), &ops);
        prop_assert_eq!(&native, &component, "the outcomes differ");
        let (native_files, component_files) = (files(native_dir.path()), files(component_dir.path()));
        prop_assert_eq!(native_files.keys().collect::<Vec<_>>(), component_files.keys().collect::<Vec<_>>(), "the files differ");
        for (path, bytes) in &native_files {
            prop_assert!(bytes == &component_files[path], "{} differs:\nnative:    {}\ncomponent: {}", path, String::from_utf8_lossy(bytes), String::from_utf8_lossy(&component_files[path]));
        }
    }
}

/// The generated sequences are not vacuous: a sequence of every operation succeeds on
/// both engines, writes sessions, a fork, memories and keys, and the bytes agree.
#[test]
fn every_operation_succeeds_on_both_engines_and_writes_the_same_bytes() {
    let ops = [
        Op::Append { assistant: false, words: 5, secret: true },
        Op::Append { assistant: true, words: 9, secret: false },
        Op::Turn,
        Op::Append { assistant: false, words: 3, secret: false },
        Op::Tombstone(1),
        Op::Fork(0),
        Op::Rewind(0),
        Op::Compact(1),
        Op::Remember(3),
        Op::Resolve,
        Op::Turn,
    ];
    let runtime = Runtime::new().unwrap();
    let (native_dir, component_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let native = run(mneme_host::native(FsStorage::new(native_dir.path()), Limits::default()).as_mut(), &ops);
    let component = run(&mut runtime.instantiate(FsStorage::new(component_dir.path()), Limits::default()).unwrap(), &ops);
    assert!(native.iter().all(|o| o == "ok"), "{native:?}");
    assert_eq!(native, component);
    let files = files(native_dir.path());
    assert_eq!(files, self::files(component_dir.path()));
    assert!(files.keys().any(|k| k.ends_with("f5.jsonl")) && files.keys().any(|k| k.contains("memory/")), "{:?}", files.keys());
    assert!(files.values().all(|bytes| !String::from_utf8_lossy(bytes).contains("ghp_aB3d")), "the secret was redacted on both");
}
