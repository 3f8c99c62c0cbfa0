//! Crash images: every write path, cut by a power failure at every storage call it
//! makes — an append torn after every byte or zero-filled, any other call before or
//! after it landed — then reopened from what the disk kept. Every acknowledged entry is
//! there, the store opens, the next write works and does not fuse with debris, and a
//! multi-step operation is there whole or not at all.
//!
//! Faults after the effect follow: a write that lands and then fails, a partial append
//! that fails, short reads, and a lock that does not exclude.

use mneme_core::index::{ChatType, Inbound, RoutePolicy};
use mneme_core::memory::file::MemoryType;
use mneme_core::memory::store::{NewMemory, Scope};
use mneme_core::storage::crash::{Crashing, Cut};
use mneme_core::storage::faulty::Faulty;
use mneme_core::{CompactionIds, Error, InMemoryStorage, Keep, Mode, NewEntry, Role, Settings, Storage, Store, Turn, block_on};
use serde_json::json;

const T0: i64 = 1_771_200_000_000;
const SESSION: &str = "projects/-p/s.jsonl";
const KEY: &str = "cron:nightly";

fn entry(uuid: &str, role: Role, text: &str) -> NewEntry {
    NewEntry { uuid: uuid.into(), now_ms: T0, role, text: text.into(), cwd: "/p".into() }
}

fn cron() -> Inbound {
    Inbound { chat_type: ChatType::Cron, id: Some("nightly".into()), text: "run".into(), ..Inbound::default() }
}

/// Three acknowledged entries, and the key `cron:nightly` on their session.
fn seed(storage: &InMemoryStorage) -> Vec<String> {
    let store = Store::new(storage);
    block_on(store.index().resolve(&cron(), &RoutePolicy::default(), T0, "s")).unwrap();
    let mut acknowledged = Vec::new();
    for (i, role) in [Role::User, Role::Assistant, Role::User].into_iter().enumerate() {
        let uuid = format!("a{i}");
        block_on(store.sessions().append("s", entry(&uuid, role, &format!("message {i}: the brief, read again")))).unwrap();
        acknowledged.push(uuid);
    }
    acknowledged
}

fn uuids(store: &Store<&InMemoryStorage>) -> Vec<String> {
    match block_on(store.sessions().load("s")) {
        Ok(transcript) => transcript.entries.into_iter().filter_map(|e| e.uuid).collect(),
        Err(Error::SessionNotFound { .. }) => Vec::new(),
        Err(e) => panic!("the store does not open: {e}"),
    }
}

/// A store whose storage loses power.
type Dying<'a> = Store<&'a Crashing<&'a InMemoryStorage>>;

/// One write path: what it adds to the seeded store, and how to tell it is there whole
/// or not at all after a restart.
struct Path {
    name: &'static str,
    /// Runs the operation; returns the entry uuids it acknowledged.
    run: fn(&Dying) -> Result<Vec<String>, Error>,
    /// Checks the operation's own atomicity on the reopened store.
    whole: fn(&Store<&InMemoryStorage>, &InMemoryStorage) -> Result<(), String>,
    /// Damage a crashed process left before the operation (a torn line, a broken one).
    debris: Option<&'static [u8]>,
}

fn turn() -> Turn {
    let messages = json!([
        { "role": "assistant", "id": "msg_1", "content": [
            { "type": "text", "text": "Listing." },
            { "type": "tool_use", "id": "toolu_a", "name": "Bash", "input": { "command": "ls" } },
        ] },
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "toolu_a", "content": "a.txt" }] },
        { "role": "assistant", "id": "msg_2", "content": [{ "type": "text", "text": "There is a.txt." }] },
    ]);
    Turn { now_ms: T0, ..crate::turns::turn("t0", messages) }
}

fn ids() -> CompactionIds {
    CompactionIds { boundary: "b1".into(), summary: "b2".into() }
}

fn summary_loaded(store: &Store<&InMemoryStorage>) -> bool {
    block_on(store.sessions().context("s")).unwrap().messages.iter().any(|m| m.text.contains("THE SUMMARY"))
}

fn paths() -> Vec<Path> {
    vec![
        Path {
            name: "append",
            run: |store| {
                block_on(store.sessions().append("s", entry("n0", Role::Assistant, "a new reply")))
                    .map(|e| vec![e.uuid.unwrap_or_default()])
            },
            whole: |store, _| {
                let loaded = block_on(store.sessions().load("s")).map_err(|e| e.to_string())?;
                match loaded.entries.iter().find(|e| e.uuid.as_deref() == Some("n0")) {
                    Some(e) if e.text != "a new reply" => Err(format!("n0 reads {:?}", e.text)),
                    _ => Ok(()),
                }
            },
            debris: None,
        },
        Path {
            name: "turn",
            run: |store| block_on(store.sessions().append_turn("s", turn())).map(|es| es.into_iter().filter_map(|e| e.uuid).collect()),
            whole: |store, _| {
                let new = block_on(store.sessions().load("s")).map_err(|e| e.to_string())?.entries.len() - 3;
                // The reply's text and call are two lines, then the result, then the answer.
                if new == 0 || new == 4 { Ok(()) } else { Err(format!("{new} of the turn's 4 lines are there")) }
            },
            debris: None,
        },
        Path {
            name: "torn tail moved aside, then an append",
            run: |store| {
                block_on(store.sessions().append("s", entry("n0", Role::Assistant, "after the torn line")))
                    .map(|e| vec![e.uuid.unwrap_or_default()])
            },
            whole: |_, storage| {
                let keys: Vec<String> = block_on(storage.list("projects/-p/")).unwrap().into_iter().map(|i| i.key).collect();
                let file = block_on(storage.read(SESSION, 0, None)).unwrap();
                let torn_in_file = file.windows(6).any(|w| w == b"{\"torn");
                let saved = keys.iter().any(|k| k.contains(".torn-"));
                if torn_in_file || saved { Ok(()) } else { Err(format!("the torn fragment is lost: {keys:?}")) }
            },
            debris: Some(b"{\"torn"),
        },
        Path {
            name: "tombstone",
            run: |store| block_on(store.sessions().tombstone("s", "a1", T0 + 1)).map(|()| Vec::new()),
            // One line: a1 is hidden or not, and nothing of a torn tombstone is read.
            whole: |store, _| {
                let report = block_on(store.sessions().load("s")).map_err(|e| e.to_string())?.report;
                if report.skipped.is_empty() && report.tombstoned <= 1 { Ok(()) } else { Err(format!("{report:?}")) }
            },
            debris: None,
        },
        Path {
            name: "compaction apply",
            run: |store| {
                let settings = Settings { keep: Keep::RecentMessages(1), ..Settings::default() };
                let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual))?;
                block_on(store.compaction().apply_compaction("s", &plan, "THE SUMMARY of the brief", &ids(), T0 + 1)).map(|_| Vec::new())
            },
            whole: |store, _| {
                let context = block_on(store.sessions().context("s")).map_err(|e| e.to_string())?;
                match (summary_loaded(store), context.messages.len()) {
                    // The summary and the one message kept, or the three it replaced.
                    (true, 2) | (false, 3) => Ok(()),
                    (summary, n) => Err(format!("summary {summary} with {n} messages")),
                }
            },
            debris: None,
        },
        Path {
            name: "repair",
            run: |store| block_on(store.sessions().repair("s", T0 + 1)).map(|_| Vec::new()),
            whole: |store, _| {
                let report = block_on(store.sessions().load("s")).map_err(|e| e.to_string())?.report;
                // A repair that landed took the broken line out (kept in its backup).
                if report.skipped.len() <= 1 { Ok(()) } else { Err(format!("{:?}", report.skipped)) }
            },
            debris: Some(b"not json at all\n"),
        },
        Path {
            name: "rollover",
            run: |store| block_on(store.index().rollover(KEY, "THE SUMMARY", &ids(), "s2", T0 + 1)).map(|_| Vec::new()),
            whole: |store, storage| {
                let view = block_on(store.index().key(KEY)).map_err(|e| e.to_string())?;
                let new = block_on(storage.read("projects/-p/s2.jsonl", 0, None));
                match (view.entry.session_id.as_str(), &new) {
                    ("s", _) | ("s2", Ok(_)) => {}
                    (other, _) => return Err(format!("the key is on `{other}` ({new:?})")),
                }
                // A new session the power cut tore reads as no entry at all, never as half.
                let entries = match block_on(store.sessions().load("s2")) {
                    Ok(transcript) => transcript.entries.len(),
                    Err(Error::SessionNotFound { .. }) => 0,
                    Err(e) => return Err(e.to_string()),
                };
                if entries == 0 || entries == 2 { Ok(()) } else { Err(format!("{entries} of the new session's 2 entries")) }
            },
            debris: None,
        },
        Path {
            name: "fork",
            run: |store| block_on(store.sessions().fork("s", Some("a1"), "f1", T0 + 1)).map(|_| Vec::new()),
            whole: |store, _| match block_on(store.sessions().load("f1")) {
                // A fork the cut tore reads as no entry at all, never as part of the chain.
                Ok(fork) if !fork.entries.is_empty() && fork.entries.len() != 2 => {
                    Err(format!("{} of the fork's 2 entries", fork.entries.len()))
                }
                Ok(_) | Err(Error::SessionNotFound { .. }) => Ok(()),
                Err(e) => Err(e.to_string()),
            },
            debris: None,
        },
        Path {
            name: "key reset (index update)",
            run: |store| block_on(store.index().reset_key(KEY, "s3", T0 + 1)).map(|_| Vec::new()),
            whole: |store, _| {
                let view = block_on(store.index().key(KEY)).map_err(|e| e.to_string())?;
                match view.entry.session_id.as_str() {
                    "s" | "s3" => Ok(()),
                    other => Err(format!("the key is on `{other}`")),
                }
            },
            debris: None,
        },
        Path {
            name: "memory add",
            run: |store| {
                let memory = NewMemory::new("Deploy", MemoryType::Reference, "how to deploy", "Run the script.\n");
                block_on(store.memory().memory_add(&Scope::Project("-p".into()), memory, T0 + 1)).map(|_| Vec::new())
            },
            whole: |store, _| {
                let scope = Scope::Project("-p".into());
                let listed = block_on(store.memory().memory_list(&scope, &Default::default())).map_err(|e| e.to_string())?;
                let there = listed.iter().any(|m| m.file == "deploy");
                if there {
                    let shown = block_on(store.memory().memory_show(&scope, "deploy")).map_err(|e| e.to_string())?;
                    if shown.memory.body != "Run the script.\n" {
                        return Err(format!("body {:?}", shown.memory.body));
                    }
                }
                // The next memory write puts a memory the cut left out of MEMORY.md back.
                let next = NewMemory::new("Next", MemoryType::Project, "the next memory", "Written after the restart.\n");
                block_on(store.memory().memory_add(&scope, next, T0 + 2)).map_err(|e| e.to_string())?;
                let index = block_on(store.memory().memory_load(&scope, Default::default())).map_err(|e| e.to_string())?.text;
                match (there, index.contains("(deploy.md)"), index.contains("(next.md)")) {
                    (there, indexed, true) if there == indexed => Ok(()),
                    other => Err(format!("memory there, in MEMORY.md, next in MEMORY.md: {other:?}\n{index}")),
                }
            },
            debris: None,
        },
    ]
}

/// Every crash point of every write path, reopened and checked.
#[test]
fn every_write_path_survives_a_power_cut_at_every_storage_call() {
    let mut tried = 0;
    for path in paths() {
        // The calls the operation makes when nothing goes wrong: the crash points.
        let calls = {
            let inner = InMemoryStorage::new();
            seed(&inner);
            if let Some(debris) = path.debris {
                block_on(inner.append(SESSION, debris)).unwrap();
            }
            let recording = Crashing::recording(&inner);
            (path.run)(&Store::new(&recording)).unwrap_or_else(|e| panic!("{}: {e}", path.name));
            recording.calls()
        };
        assert!(calls.iter().any(|c| c.operation != "read" && c.operation != "list"), "{}: writes", path.name);
        for (n, call) in calls.iter().enumerate() {
            for cut in call.cuts() {
                let context = format!("{}: power cut at call {} ({} {}) {cut:?}", path.name, n + 1, call.operation, call.key);
                let inner = InMemoryStorage::new();
                let mut acknowledged = seed(&inner);
                if let Some(debris) = path.debris {
                    block_on(inner.append(SESSION, debris)).unwrap();
                }
                let crashing = Crashing::new(&inner, n as u32 + 1, cut);
                if let Ok(written) = (path.run)(&Store::new(&crashing)) {
                    assert!(!crashing.crashed(), "{context}: acknowledged through a power cut");
                    acknowledged.extend(written);
                }
                if path.name == "tombstone" {
                    acknowledged.retain(|u| u != "a1");
                }

                // The restart.
                let store = Store::new(&inner);
                let present = uuids(&store);
                for uuid in &acknowledged {
                    assert!(present.contains(uuid), "{context}: acknowledged {uuid} lost; present {present:?}");
                }
                (path.whole)(&store, &inner).unwrap_or_else(|e| panic!("{context}: not whole: {e}"));
                block_on(store.sessions().list()).unwrap_or_else(|e| panic!("{context}: list: {e}"));
                block_on(store.index().keys(&[])).unwrap_or_else(|e| panic!("{context}: keys: {e}"));

                // The next write works and stands on its own line.
                block_on(store.sessions().append("s", entry("next", Role::User, "still writable")))
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                let loaded = block_on(store.sessions().load("s")).unwrap();
                assert!(
                    loaded.entries.iter().any(|e| e.uuid.as_deref() == Some("next") && e.text == "still writable"),
                    "{context}: the next write fused with debris: {:?}",
                    loaded.report.skipped
                );
                let present = uuids(&store);
                for uuid in &acknowledged {
                    assert!(present.contains(uuid), "{context}: {uuid} lost after the next write");
                }
                tried += 1;
            }
        }
    }
    assert!(tried > 500, "crash points tried: {tried}");
    eprintln!("crash points tried: {tried}");
}

/// A write that lands and then reports failure, whole or in part: nothing acknowledged
/// is lost, the session refuses writes until reopened, and a retry with the same id
/// never leaves a second copy a reader would count.
#[test]
fn a_write_that_lands_and_then_fails_poisons_the_session_and_is_never_counted_twice() {
    let mut faults = 0;
    for partial in [None, Some(1), Some(40), Some(usize::MAX)] {
        for fail_at in 1..=12 {
            let inner = InMemoryStorage::new();
            let acknowledged = seed(&inner);
            let faulty = Faulty::new(&inner, fail_at);
            let faulty = match partial {
                None => faulty.landed(),
                Some(n) => faulty.partial(n),
            };
            let store = Store::new(&faulty);
            let first = block_on(store.sessions().append_turn("s", turn()));
            let context = format!("partial {partial:?}, failing call {fail_at}");
            if first.is_err() && faulty.calls.get() >= fail_at {
                faults += 1;
                // Refused until reopened: what landed is unknown to this store.
                if let Err(error) = block_on(store.sessions().append("s", entry("x", Role::User, "refused?"))) {
                    assert!(matches!(error, Error::SessionPoisoned { .. } | Error::Storage(_)), "{context}: {error}");
                }
                store.sessions().reopen("s");
                // The retry: the same turn, the same ids.
                let _ = block_on(store.sessions().append_turn("s", turn()));
            }
            let reopened = Store::new(&inner);
            let loaded = block_on(reopened.sessions().load("s")).unwrap_or_else(|e| panic!("{context}: {e}"));
            let present: Vec<String> = loaded.entries.iter().filter_map(|e| e.uuid.clone()).collect();
            for uuid in &acknowledged {
                assert!(present.contains(uuid), "{context}: {uuid} lost");
            }
            let mut unique = present.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), present.len(), "{context}: an entry is there twice: {present:?}");
            // The context a model is sent holds the turn at most once.
            let context_text: Vec<String> =
                block_on(reopened.sessions().context("s")).unwrap().messages.into_iter().map(|m| String::from(m.text)).collect();
            assert!(context_text.iter().filter(|t| t.contains("There is a.txt.")).count() <= 1, "{context}: {context_text:?}");
        }
    }
    assert!(faults >= 8, "faults after the effect injected: {faults}");
    eprintln!("faults after the effect injected: {faults}");
}

/// Reads that return less than asked never lose or invent an entry: a store that sees
/// a short read may refuse or report damage, but a store reading normally afterwards
/// finds everything acknowledged, and the file was not cut.
#[test]
fn short_reads_never_cut_a_transcript() {
    let inner = InMemoryStorage::new();
    let acknowledged = seed(&inner);
    let before = block_on(inner.read(SESSION, 0, None)).unwrap();
    let short = Faulty::new(&inner, 0).short_reads();
    let store = Store::new(&short);
    let _ = block_on(store.sessions().load("s"));
    let written = block_on(store.sessions().append("s", entry("n0", Role::Assistant, "written over a short read")));
    let _ = block_on(store.sessions().repair("s", T0 + 1));
    let after = block_on(inner.read(SESSION, 0, None)).unwrap();
    assert!(after.starts_with(&before), "bytes already on disk were cut or rewritten");
    let present = uuids(&Store::new(&inner));
    for uuid in &acknowledged {
        assert!(present.contains(uuid), "{uuid} lost");
    }
    if written.is_ok() {
        assert!(present.contains(&"n0".to_owned()));
    }
}

/// Two stores whose lock does not exclude (it was lost): their appends interleave, but
/// every acknowledged entry is there, each once, on a line of its own.
#[test]
fn a_lost_lock_loses_no_acknowledged_entry() {
    let inner = InMemoryStorage::new();
    let mut acknowledged = seed(&inner);
    let a_storage = Faulty::new(&inner, 0).lost_locks();
    let b_storage = Faulty::new(&inner, 0).lost_locks();
    let (a, b) = (Store::new(&a_storage), Store::new(&b_storage));
    for i in 0..20 {
        for (name, store) in [("A", &a), ("B", &b)] {
            let uuid = format!("{name}{i}");
            if block_on(store.sessions().append("s", entry(&uuid, Role::User, "interleaved"))).is_ok() {
                acknowledged.push(uuid);
            }
        }
    }
    let loaded = block_on(Store::new(&inner).sessions().load("s")).unwrap();
    assert!(loaded.report.skipped.is_empty(), "{:?}", loaded.report.skipped);
    let present: Vec<String> = loaded.entries.iter().filter_map(|e| e.uuid.clone()).collect();
    for uuid in &acknowledged {
        assert_eq!(present.iter().filter(|p| *p == uuid).count(), 1, "{uuid} in {present:?}");
    }
    assert_eq!(acknowledged.len(), 43);
}

#[test]
fn a_crashed_writer_leaves_nothing_locked() {
    let inner = InMemoryStorage::new();
    seed(&inner);
    let crashing = Crashing::new(&inner, 3, Cut::Before);
    assert!(block_on(Store::new(&crashing).sessions().append("s", entry("n0", Role::User, "x"))).is_err());
    block_on(Store::new(&inner).sessions().append("s", entry("n1", Role::User, "y"))).unwrap();
}

/// An import and a fork cut by a power failure at any storage call leave the new
/// session whole or absent, and the same command again completes it: the id is never
/// burnt. Debris an older version's crash left (an empty file, a torn first line) is
/// written over by the next try.
#[test]
fn an_interrupted_import_or_fork_is_completed_by_trying_again() {
    use mneme_core::interchange::Import;
    let import = |store: &Dying| {
        let messages = json!([{ "role": "user", "content": "hello" }, { "role": "assistant", "content": "hi" }]);
        let request = Import {
            data: messages.to_string().into_bytes(),
            source: None,
            id: Some("imp".into()),
            cwd: Some("/p".into()),
            origin: "chat.json".into(),
            uuid: "0b7e4c1d-2a3f-4e5d-8c9b-1a2b3c4d5e6f".into(),
            now_ms: T0,
        };
        block_on(store.sessions().import_session(&request)).map(drop)
    };
    let fork = |store: &Dying| block_on(store.sessions().fork("s", Some("a1"), "imp", T0 + 1)).map(drop);
    let entries = |store: &Store<&InMemoryStorage>| match block_on(store.sessions().load("imp")) {
        Ok(transcript) => transcript.entries.len(),
        Err(Error::SessionNotFound { .. }) => 0,
        Err(e) => panic!("the store does not open: {e}"),
    };
    let mut tried = 0;
    for (name, run, whole) in [("import", import as fn(&Dying) -> Result<(), Error>, 3), ("fork", fork, 2)] {
        let calls = {
            let inner = InMemoryStorage::new();
            seed(&inner);
            let recording = Crashing::recording(&inner);
            run(&Store::new(&recording)).unwrap();
            recording.calls()
        };
        for (n, call) in calls.iter().enumerate() {
            for cut in call.cuts() {
                let context = format!("{name}: power cut at call {} ({} {}) {cut:?}", n + 1, call.operation, call.key);
                let inner = InMemoryStorage::new();
                seed(&inner);
                let crashing = Crashing::new(&inner, n as u32 + 1, cut);
                let _ = run(&Store::new(&crashing));
                let store = Store::new(&inner);
                let found = entries(&store);
                assert!(found == 0 || found == whole, "{context}: {found} of {whole} entries");
                let again = run(&Store::new(&Crashing::recording(&inner)));
                match again {
                    Ok(()) => {}
                    Err(Error::SessionExists { .. }) if found == whole => {}
                    Err(e) => panic!("{context}: trying again: {e}"),
                }
                assert_eq!(entries(&Store::new(&inner)), whole, "{context}: after trying again");
                tried += 1;
            }
        }
        for debris in [&b""[..], b"{\"type\":\"user\",\"mess"] {
            let inner = InMemoryStorage::new();
            seed(&inner);
            block_on(inner.append("projects/-p/imp.jsonl", debris)).unwrap();
            run(&Store::new(&Crashing::recording(&inner))).unwrap_or_else(|e| panic!("{name} over {debris:?}: {e}"));
            assert_eq!(entries(&Store::new(&inner)), whole, "{name} over {debris:?}");
        }
        // A session that is there whole is never written over.
        let inner = InMemoryStorage::new();
        seed(&inner);
        run(&Store::new(&Crashing::recording(&inner))).unwrap();
        assert!(matches!(run(&Store::new(&Crashing::recording(&inner))), Err(Error::SessionExists { .. })), "{name} twice");
    }
    assert!(tried > 10, "crash points tried: {tried}");
}
