//! The store's write path over in-memory storage: parts, caps, tombstones, torn tails,
//! several writers, and storage that fails.

use mneme_core::storage::faulty::Faulty;
use mneme_core::{Error, Format, InMemoryStorage, KeyInfo, Limits, NewEntry, Role, Storage, StorageError, Store, block_on};

const T0: i64 = 1_771_267_670_590;

fn entry(uuid: &str, role: Role, text: &str) -> NewEntry {
    NewEntry { uuid: uuid.into(), now_ms: T0, role, text: text.into(), cwd: "/p".into() }
}

fn uuids(store: &Store<impl Storage>, id: &str) -> Vec<String> {
    block_on(store.sessions().load(id)).unwrap().entries.into_iter().filter_map(|e| e.uuid).collect()
}

fn keys(storage: &InMemoryStorage) -> Vec<String> {
    block_on(storage.list("")).unwrap().into_iter().map(|i| i.key).collect()
}

/// The size of the line `append` writes for this entry, measured on a scratch store.
fn line_size(uuid: &str, text: &str, parent: Option<&str>) -> u64 {
    let scratch = InMemoryStorage::new();
    let store = Store::new(&scratch);
    if let Some(parent) = parent {
        block_on(store.sessions().append("s", entry(parent, Role::User, "x"))).unwrap();
    }
    let before: u64 = block_on(scratch.list("")).unwrap().iter().map(|i| i.size).sum();
    block_on(store.sessions().append("s", entry(uuid, Role::User, text))).unwrap();
    let after: u64 = block_on(scratch.list("")).unwrap().iter().map(|i| i.size).sum();
    after - before
}

#[test]
fn rolls_over_to_a_new_part_exactly_past_the_limit() {
    let first = line_size("u1", "hello", None);
    let second = line_size("u2", "hello", Some("u1"));
    // Exactly fits: stays in part 1.
    let storage = InMemoryStorage::new();
    let store = Store::with_limits(&storage, Limits { part_bytes: first + second, total_bytes: 1 << 20 });
    block_on(store.sessions().append("s", entry("u1", Role::User, "hello"))).unwrap();
    let written = block_on(store.sessions().append("s", entry("u2", Role::User, "hello"))).unwrap();
    assert_eq!((written.part, written.line), (1, 2));
    assert_eq!(keys(&storage), ["projects/-p/s.jsonl"]);
    // One byte less: the second entry opens part 2.
    let storage = InMemoryStorage::new();
    let store = Store::with_limits(&storage, Limits { part_bytes: first + second - 1, total_bytes: 1 << 20 });
    block_on(store.sessions().append("s", entry("u1", Role::User, "hello"))).unwrap();
    let written = block_on(store.sessions().append("s", entry("u2", Role::User, "hello"))).unwrap();
    assert_eq!((written.part, written.line, written.parent_uuid.as_deref()), (2, 1, Some("u1")));
    assert_eq!(keys(&storage), ["projects/-p/s.jsonl", "projects/-p/s_part2.jsonl"]);
    let loaded = block_on(store.sessions().load("s")).unwrap();
    assert_eq!(loaded.parts, 2);
    assert_eq!(loaded.chain, [0, 1], "the chain crosses parts");
    let listed = block_on(store.sessions().list()).unwrap();
    assert_eq!((listed.sessions.len(), listed.sessions[0].parts, listed.sessions[0].entry_count), (1, 2, 2));
}

#[test]
fn refuses_past_the_total_cap_and_keeps_what_it_had() {
    let first = line_size("u1", "hello", None);
    let storage = InMemoryStorage::new();
    let store = Store::with_limits(&storage, Limits { part_bytes: 1 << 20, total_bytes: first * 2 - 1 });
    block_on(store.sessions().append("s", entry("u1", Role::User, "hello"))).unwrap();
    let refused = block_on(store.sessions().append("s", entry("u2", Role::User, "hello")));
    match refused {
        Err(error @ Error::SessionFull { .. }) => assert!(error.to_string().contains("compact"), "{error}"),
        other => panic!("expected SessionFull, got {other:?}"),
    }
    assert_eq!(uuids(&store, "s"), ["u1"]);
    // A refusal is not a failed write: the session stays usable for what still fits
    // (a tombstone line is much shorter than a message).
    block_on(store.sessions().tombstone("s", "u1", T0)).unwrap();
    assert_eq!(block_on(store.sessions().load("s")).unwrap().entries.len(), 0);
}

#[test]
fn tombstones_apply_across_parts() {
    let storage = InMemoryStorage::new();
    let store = Store::with_limits(&storage, Limits { part_bytes: 300, total_bytes: 1 << 20 });
    for i in 0..6 {
        block_on(
            store.sessions().append("s", entry(&format!("u{i}"), if i % 2 == 0 { Role::User } else { Role::Assistant }, "some words here")),
        )
        .unwrap();
    }
    let parts = block_on(store.sessions().load("s")).unwrap().parts;
    assert!(parts >= 3, "{parts} parts");
    block_on(store.sessions().tombstone("s", "u0", T0)).unwrap();
    block_on(store.sessions().tombstone("s", "u3", T0)).unwrap();
    let loaded = block_on(store.sessions().load("s")).unwrap();
    assert_eq!(loaded.entries.iter().filter_map(|e| e.uuid.clone()).collect::<Vec<_>>(), ["u1", "u2", "u4", "u5"]);
    assert_eq!(loaded.report.tombstoned, 2);
    assert_eq!(loaded.report.by_type.iter().find(|t| t.type_ == "tombstone").map(|t| t.count), Some(2));
    let context = block_on(store.sessions().context("s")).unwrap();
    assert_eq!(context.messages.iter().map(|m| m.uuid.as_str()).collect::<Vec<_>>(), ["u1", "u2", "u4", "u5"]);
    assert!(matches!(block_on(store.sessions().tombstone("s", "u0", T0)), Err(Error::EntryNotFound { .. })), "already deleted");
    assert!(matches!(block_on(store.sessions().tombstone("s", "nope", T0)), Err(Error::EntryNotFound { .. })));
    // The next message still chains to the newest live entry.
    let next = block_on(store.sessions().append("s", entry("u6", Role::User, "more"))).unwrap();
    assert_eq!(next.parent_uuid.as_deref(), Some("u5"));
}

#[test]
fn a_torn_tail_is_moved_aside_before_the_next_append() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(store.sessions().append("s", entry("u1", Role::User, "hello"))).unwrap();
    block_on(storage.append("projects/-p/s.jsonl", b"{\"type\":\"assistant\",\"uuid\":\"torn")).unwrap();
    let reader = Store::new(&storage);
    let loaded = block_on(reader.sessions().load("s")).unwrap();
    assert!(loaded.report.torn_tail);
    assert_eq!(loaded.entries.len(), 1);

    let written = block_on(reader.sessions().append("s", entry("u2", Role::Assistant, "hi"))).unwrap();
    assert_eq!((written.line, written.parent_uuid.as_deref()), (2, Some("u1")));
    let loaded = block_on(reader.sessions().load("s")).unwrap();
    assert!(!loaded.report.torn_tail && loaded.report.skipped.is_empty());
    assert_eq!(uuids(&reader, "s"), ["u1", "u2"]);
    let aside: Vec<KeyInfo> = block_on(storage.list("projects/-p/s.jsonl.torn-")).unwrap();
    assert_eq!(aside.len(), 1);
    assert_eq!(block_on(storage.read(&aside[0].key, 0, None)).unwrap(), b"{\"type\":\"assistant\",\"uuid\":\"torn");
    // The fragment is not a session and not counted as one.
    assert_eq!(block_on(reader.sessions().list()).unwrap().sessions.len(), 1);
}

#[test]
fn a_store_catches_up_with_another_writer() {
    let storage = InMemoryStorage::new();
    let (a, b) = (Store::new(&storage), Store::new(&storage));
    for i in 0..10 {
        let (store, role) = if i % 2 == 0 { (&a, Role::User) } else { (&b, Role::Assistant) };
        let written = block_on(store.sessions().append("s", entry(&format!("u{i}"), role, "turn"))).unwrap();
        assert_eq!(written.line, i + 1);
        let expected_parent = (i > 0).then(|| format!("u{}", i - 1));
        assert_eq!(written.parent_uuid, expected_parent);
    }
    let loaded = block_on(a.sessions().load("s")).unwrap();
    assert_eq!(loaded.chain.len(), 10);
}

#[test]
fn remove_takes_every_part_subagent_and_sidecar_but_nothing_else() {
    let storage = InMemoryStorage::new();
    let store = Store::with_limits(&storage, Limits { part_bytes: 300, total_bytes: 1 << 20 });
    for i in 0..4 {
        block_on(store.sessions().append("s", entry(&format!("u{i}"), Role::User, "some words here"))).unwrap();
    }
    block_on(store.sessions().append("other", entry("o1", Role::User, "keep me"))).unwrap();
    for (key, body) in [
        ("projects/-p/s/subagents/agent-a1.jsonl", "{\"type\":\"user\",\"uuid\":\"x\",\"isSidechain\":true}\n"),
        ("projects/-p/agent-flat.jsonl", "{\"type\":\"user\",\"uuid\":\"y\",\"sessionId\":\"s\"}\n"),
        ("projects/-p/agent-theirs.jsonl", "{\"type\":\"user\",\"uuid\":\"z\",\"sessionId\":\"other\"}\n"),
        ("projects/-p/s.jsonl.torn-99", "{\"frag"),
        ("projects/-p/s_x.jsonl", "{\"type\":\"user\"}\n"),
    ] {
        block_on(storage.replace(key, body.as_bytes(), None)).unwrap();
    }
    let subagents = block_on(store.sessions().subagents("s")).unwrap();
    assert_eq!(
        subagents.iter().map(|s| s.key.as_str()).collect::<Vec<_>>(),
        ["projects/-p/agent-flat.jsonl", "projects/-p/s/subagents/agent-a1.jsonl"]
    );
    let removed = block_on(store.sessions().remove("s")).unwrap();
    assert_eq!(removed.last().map(String::as_str), Some("projects/-p/s.jsonl"), "the first part goes last");
    assert!(removed.len() >= 5, "{removed:?}");
    assert_eq!(keys(&storage), ["projects/-p/agent-theirs.jsonl", "projects/-p/other.jsonl", "projects/-p/s_x.jsonl"]);
    assert!(matches!(block_on(store.sessions().load("s")), Err(Error::SessionNotFound { .. })));
}

#[test]
fn repair_backs_up_and_rewrites_only_what_is_broken() {
    let storage = InMemoryStorage::new();
    let good = "{\"type\":\"user\",\"uuid\":\"a\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}";
    let original = format!(
        "{good}\nnot json\n{{\"type\":\"x\",\"uuid\":\"b\"}}{{\"type\":\"y\",\"uuid\":\"c\"}}\n{{\"type\":\"z\",\"text\":\"caf\u{e9}\"}}\n{{\"torn"
    );
    let mut bytes = original.into_bytes();
    let e_acute = bytes.windows(2).position(|w| w == "é".as_bytes()).unwrap();
    bytes.splice(e_acute..e_acute + 2, [0xe9]);
    block_on(storage.replace("projects/-p/s.jsonl", &bytes, None)).unwrap();
    let store = Store::new(&storage);
    let report = block_on(store.sessions().repair("s", T0)).unwrap();
    assert_eq!(report.backups, [format!("projects/-p/s.jsonl.bak-{T0}")]);
    assert_eq!(report.dropped.iter().map(|d| d.line).collect::<Vec<_>>(), [2]);
    assert_eq!((report.split_glued, report.fixed_utf8, report.dropped_torn_tail), (2, 1, true));
    assert_eq!(block_on(storage.read(&report.backups[0], 0, None)).unwrap(), bytes, "the backup is the original, byte for byte");
    let repaired = String::from_utf8(block_on(storage.read("projects/-p/s.jsonl", 0, None)).unwrap()).unwrap();
    assert_eq!(
        repaired,
        format!(
            "{good}\n{{\"type\":\"x\",\"uuid\":\"b\"}}\n{{\"type\":\"y\",\"uuid\":\"c\"}}\n{{\"type\":\"z\",\"text\":\"caf\u{fffd}\"}}\n"
        )
    );
    let check = block_on(store.sessions().check("s")).unwrap();
    assert!(check.load.skipped.is_empty() && !check.load.torn_tail && check.load.recovered_glued == 0);
    assert!(!check.has_problems(), "{check:?}");
    assert!(mneme_core::check_bytes(&bytes).has_problems(), "the original had problems");
    assert_eq!(block_on(store.sessions().repair("s", T0 + 1)).unwrap().backups.len(), 0, "nothing left to repair");

    // A part whose lines all read, its last without a newline: the newline is added,
    // every other byte kept (CRLF, a blank line).
    let unterminated = format!("{good}\r\n\r\n{}", good.replace("\"a\"", "\"b\""));
    block_on(storage.replace("projects/-p/crlf.jsonl", unterminated.as_bytes(), None)).unwrap();
    let report = block_on(store.sessions().repair("crlf", T0)).unwrap();
    assert_eq!(report.backups.len(), 1);
    let repaired = block_on(storage.read("projects/-p/crlf.jsonl", 0, None)).unwrap();
    assert_eq!(String::from_utf8(repaired).unwrap(), unterminated + "\n");
}

/// A line whose parent is unreadable is chained past it by `repair`: to the parent
/// what is left of the unreadable line names, else to the entry before it; and so is
/// every other line that had the same parent. Without that, a resume (Mneme's and
/// Claude Code's, both walking `parentUuid`) begins at the orphan and loses the
/// conversation before it.
#[test]
fn repair_chains_a_line_past_its_unreadable_parent() {
    let line = |uuid: &str, parent: Option<&str>, role: &str| {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        format!(
            "{{\"parentUuid\":{parent},\"type\":\"{role}\",\"uuid\":\"{uuid}\",\"message\":{{\"role\":\"{role}\",\"content\":\"m {uuid}\"}}}}"
        )
    };
    let file = |lines: &[String]| lines.join("\n") + "\n";
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let uuids =
        |id: &str| -> Vec<String> { block_on(store.sessions().context(id)).unwrap().messages.into_iter().map(|m| m.uuid).collect() };

    // u3 rewinds to u1; u4, cut short, answered u2; a file-history snapshot (no id)
    // follows it, then its progress line and the result after it both name it.
    let named = [
        line("u1", None, "user"),
        line("u2", Some("u1"), "assistant"),
        line("u3", Some("u1"), "user"),
        line("u4", Some("u2"), "assistant")[..40].to_string(),
        "{\"type\":\"file-history-snapshot\",\"messageId\":\"u4\",\"snapshot\":{}}".to_string(),
        "{\"parentUuid\":\"u4\",\"type\":\"progress\",\"uuid\":\"p5\",\"data\":{}}".to_string(),
        line("u6", Some("u4"), "user"),
        line("u7", Some("u6"), "assistant"),
    ];
    block_on(storage.replace("projects/-p/named.jsonl", file(&named).as_bytes(), None)).unwrap();
    assert_eq!(uuids("named"), ["u6", "u7"], "before the repair, resume begins at the orphan");
    let check = block_on(store.sessions().check("named")).unwrap();
    assert_eq!(check.dangling_parents.iter().map(|f| f.line).collect::<Vec<_>>(), [6, 7]);
    let report = block_on(store.sessions().repair("named", T0)).unwrap();
    assert_eq!(report.dropped.iter().map(|d| d.line).collect::<Vec<_>>(), [4]);
    let relinked = |part, line, parent: Option<&str>| mneme_core::RelinkedLine { part, line, parent: parent.map(String::from) };
    assert_eq!(report.relinked, [relinked(1, 6, Some("u2")), relinked(1, 7, Some("u2"))], "to the parent u4 named, not to u3 before it");
    assert_eq!(uuids("named"), ["u1", "u2", "u6", "u7"]);
    let repaired = String::from_utf8(block_on(storage.read("projects/-p/named.jsonl", 0, None)).unwrap()).unwrap();
    let relinked_line = |text: &str| text.replacen("\"parentUuid\":\"u4\"", "\"parentUuid\":\"u2\"", 1);
    let expected = [&named[..3], &[named[4].clone(), relinked_line(&named[5]), relinked_line(&named[6])], &named[7..]].concat();
    assert_eq!(repaired, file(&expected), "only the orphans' parents changed, the rest byte for byte");
    assert!(!block_on(store.sessions().check("named")).unwrap().has_problems());

    // Nothing readable names a parent: the entry before; with none before, the line is
    // left naming what it names (it may be a line of the session it was continued from).
    let unnamed = [
        "garbage".to_string(),
        line("u2", Some("u1"), "assistant"),
        "{\"not".to_string(),
        line("u4", Some("u3"), "user"),
        line("u5", Some("u4"), "assistant"),
    ];
    block_on(storage.replace("projects/-p/unnamed.jsonl", file(&unnamed).as_bytes(), None)).unwrap();
    let report = block_on(store.sessions().repair("unnamed", T0)).unwrap();
    assert_eq!(report.relinked, [relinked(1, 4, Some("u2"))]);
    assert_eq!(uuids("unnamed"), ["u2", "u4", "u5"]);
    let check = block_on(store.sessions().check("unnamed")).unwrap();
    assert_eq!(check.dangling_parents.iter().map(|f| f.line).collect::<Vec<_>>(), [1], "u2 still names u1");
    assert_eq!(block_on(store.sessions().repair("unnamed", T0 + 1)).unwrap(), Default::default(), "nothing left to repair");

    // A sub-agent's lines in the main file (sidechain): the main conversation's orphan
    // is chained to the main conversation's entry before the gap, not to the sidechain's.
    let sidechain = |text: String| text.replacen("{", "{\"isSidechain\":true,", 1);
    let sides = [
        line("u1", None, "user"),
        line("u2", Some("u1"), "assistant"),
        sidechain(line("s1", None, "user")),
        sidechain(line("s2", Some("s1"), "assistant")),
        "garbage".to_string(),
        line("u4", Some("u3"), "user"),
    ];
    block_on(storage.replace("projects/-p/sides.jsonl", file(&sides).as_bytes(), None)).unwrap();
    let report = block_on(store.sessions().repair("sides", T0)).unwrap();
    assert_eq!(report.relinked, [relinked(1, 6, Some("u2"))]);
    assert_eq!(uuids("sides"), ["u1", "u2", "u4"]);

    // A compaction's boundary (no parent of its own) is the last line of a part, cut
    // short: the summary that begins the next part begins the conversation, and the
    // history it summarised stays out of the context.
    let boundary =
        "{\"parentUuid\":null,\"logicalParentUuid\":\"u2\",\"type\":\"system\",\"subtype\":\"compact_boundary\",\"uuid\":\"b1\"}";
    let summary = line("s1", Some("b1"), "user").replace("\"type\":\"user\"", "\"type\":\"user\",\"isCompactSummary\":true");
    let part1 = file(&[line("u1", None, "user"), line("u2", Some("u1"), "assistant"), boundary[..60].to_string()]);
    // Part 2 as Windows tools leave it (CRLF, a blank line): it loses no line, and
    // keeps every byte but its relinked parent.
    let part2 = format!("{summary}\r\n\r\n{}\r\n", line("u5", Some("s1"), "user"));
    block_on(storage.replace("projects/-p/parts.jsonl", part1.as_bytes(), None)).unwrap();
    block_on(storage.replace("projects/-p/parts_part2.jsonl", part2.as_bytes(), None)).unwrap();
    let report = block_on(store.sessions().repair("parts", T0)).unwrap();
    assert_eq!(report.relinked, [relinked(2, 1, None)]);
    assert_eq!(report.backups.len(), 2, "the part with the orphan is rewritten too");
    assert_eq!(uuids("parts"), ["s1", "u5"]);
    let repaired = String::from_utf8(block_on(storage.read("projects/-p/parts_part2.jsonl", 0, None)).unwrap()).unwrap();
    assert_eq!(repaired, part2.replacen("\"parentUuid\":\"b1\"", "\"parentUuid\":null", 1));
    assert!(!block_on(store.sessions().check("parts")).unwrap().has_problems());
    // A repair failing at any storage call, then run again, still chains the summary
    // past the boundary: the part losing the unreadable line is written last.
    for fail_at in 1.. {
        let memory = InMemoryStorage::new();
        block_on(memory.replace("projects/-p/parts.jsonl", part1.as_bytes(), None)).unwrap();
        block_on(memory.replace("projects/-p/parts_part2.jsonl", part2.as_bytes(), None)).unwrap();
        let failed = block_on(Store::new(Faulty::new(&memory, fail_at)).sessions().repair("parts", T0)).is_err();
        let again = Store::new(&memory);
        block_on(again.sessions().repair("parts", T0 + 1)).unwrap();
        let check = block_on(again.sessions().check("parts")).unwrap();
        assert!(!check.has_problems(), "fail_at {fail_at}: {check:?}");
        if !failed {
            break;
        }
    }

    // pi's entries chain by `parentId` (a3 rewinds to a1; a4, cut short, named a2).
    let entry = |id: &str, parent: Option<&str>, role: &str| {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"message\":{{\"role\":\"{role}\",\"content\":\"m {id}\"}}}}")
    };
    let pi = [
        "{\"type\":\"session\",\"version\":3,\"id\":\"pi\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}".to_string(),
        entry("a1", None, "user"),
        entry("a2", Some("a1"), "assistant"),
        entry("a3", Some("a1"), "user"),
        entry("a4", Some("a2"), "user")[..50].to_string(),
        entry("a5", Some("a4"), "assistant"),
    ];
    block_on(storage.replace("projects/-p/pi.jsonl", file(&pi).as_bytes(), None)).unwrap();
    let report = block_on(store.sessions().repair("pi", T0)).unwrap();
    assert_eq!(report.relinked, [relinked(1, 6, Some("a2"))]);
    assert_eq!(uuids("pi"), ["a1", "a2", "a5"]);
}

/// A workload touching every write path: appends with rollover, a torn tail to move
/// aside, a tombstone, and a repair.
fn workload(store: &Store<Faulty<&InMemoryStorage>>, acknowledged: &mut Vec<String>) {
    for i in 0..8 {
        let uuid = format!("u{i}");
        if i == 4 {
            // A crashed writer's fragment, as another process would have left it.
            let _ = block_on(store.storage().inner.append("projects/-p/s_part2.jsonl", b"{\"torn"));
        }
        let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
        if block_on(store.sessions().append("s", entry(&uuid, role, "a few words of text"))).is_ok() {
            acknowledged.push(uuid);
        }
    }
    if block_on(store.sessions().tombstone("s", "u1", T0)).is_ok() {
        acknowledged.retain(|u| u != "u1");
    }
    let _ = block_on(store.sessions().repair("s", T0));
}

#[test]
fn every_acknowledged_entry_survives_a_failure_at_any_call() {
    let limits = Limits { part_bytes: 700, total_bytes: 1 << 20 };
    for forever in [false, true] {
        let mut fail_at = 1;
        loop {
            let memory = InMemoryStorage::new();
            let faulty = Faulty::new(&memory, fail_at);
            let store = Store::with_limits(if forever { faulty.forever() } else { faulty }, limits);
            let mut acknowledged = Vec::new();
            workload(&store, &mut acknowledged);
            let calls = store.storage().calls.get();

            let reopened = Store::with_limits(&memory, limits);
            let present = match block_on(reopened.sessions().load("s")) {
                Ok(transcript) => transcript.entries.into_iter().filter_map(|e| e.uuid).collect::<Vec<_>>(),
                Err(Error::SessionNotFound { .. }) => Vec::new(),
                Err(e) => panic!("fail_at {fail_at} forever {forever}: cannot reopen: {e}"),
            };
            for uuid in &acknowledged {
                assert!(present.contains(uuid), "fail_at {fail_at} forever {forever}: acknowledged {uuid} lost; present {present:?}");
            }
            // The reopened store can always write again.
            block_on(reopened.sessions().append("s", entry("after", Role::User, "still writable")))
                .unwrap_or_else(|e| panic!("fail_at {fail_at}: {e}"));
            if fail_at > calls {
                break;
            }
            fail_at += 1;
        }
        assert!(fail_at > 20, "the workload makes enough calls to be worth failing ({fail_at})");
    }
}

#[test]
fn a_failed_write_poisons_the_session_until_reopened() {
    let memory = InMemoryStorage::new();
    block_on(Store::new(&memory).sessions().append("s", entry("u1", Role::User, "one"))).unwrap();
    // A fresh store appending to an existing session: list (locate), lock, list
    // (refresh), read (state), then call 5 is the append itself.
    let store = Store::new(Faulty::new(&memory, 5));
    assert!(matches!(block_on(store.sessions().append("s", entry("u2", Role::User, "two"))), Err(Error::Storage(StorageError::Io { .. }))));
    let refused = block_on(store.sessions().append("s", entry("u3", Role::User, "three")));
    assert!(matches!(refused, Err(Error::SessionPoisoned { .. })), "{refused:?}");
    store.sessions().reopen("s");
    let written = block_on(store.sessions().append("s", entry("u4", Role::User, "four"))).unwrap();
    assert_eq!(written.parent_uuid.as_deref(), Some("u1"));
}

/// An unlock failing after a write landed (PostgreSQL's connection lost after its
/// commit): the write is reported as written, so its caller does not write it again.
#[test]
fn a_write_that_landed_is_reported_whatever_the_unlock_after_it_says() {
    let memory = InMemoryStorage::new();
    let store = Store::new(Faulty::new(&memory, 0).failing_unlocks());
    block_on(store.sessions().append("s", entry("u1", Role::User, "one"))).unwrap();
    let written = block_on(store.sessions().append("s", entry("u2", Role::User, "two"))).unwrap();
    assert_eq!((written.line, written.parent_uuid.as_deref()), (2, Some("u1")));
}

#[test]
fn a_refused_write_leaves_the_session_writable() {
    let memory = InMemoryStorage::new();
    let store = Store::new(Faulty::new(&memory, 2).only("append").quota());
    block_on(store.sessions().append("s", entry("u1", Role::User, "one"))).unwrap();
    assert!(matches!(
        block_on(store.sessions().append("s", entry("u2", Role::User, "two"))),
        Err(Error::Storage(StorageError::QuotaExceeded { .. }))
    ));
    let written = block_on(store.sessions().append("s", entry("u3", Role::User, "three"))).unwrap();
    assert_eq!((written.line, written.parent_uuid.as_deref()), (2, Some("u1")), "space freed: the next append just works");
}

#[test]
fn a_held_session_costs_one_append_per_write_and_keeps_other_writers_out() {
    let memory = InMemoryStorage::new();
    let counted = Faulty::new(&memory, 0).only("list");
    let store = Store::new(&counted);
    block_on(store.sessions().append("s", entry("u0", Role::User, "first"))).unwrap();
    block_on(store.sessions().hold("s")).unwrap();
    let listed = counted.calls.get();
    for i in 1..=20 {
        let role = if i % 2 == 1 { Role::Assistant } else { Role::User };
        block_on(store.sessions().append("s", entry(&format!("u{i}"), role, "again"))).unwrap();
    }
    assert_eq!(counted.calls.get(), listed, "a held session is written without listing");
    // Another store (another process) is kept out while the session is held.
    let other = Store::new(&memory);
    let refused = block_on(other.sessions().append("s", entry("x", Role::User, "intruder")));
    assert!(matches!(refused, Err(Error::Storage(StorageError::Locked { .. }))), "{refused:?}");
    block_on(store.sessions().release("s")).unwrap();
    let written = block_on(other.sessions().append("s", entry("x", Role::User, "after release"))).unwrap();
    assert_eq!(written.parent_uuid.as_deref(), Some("u20"), "the other store chains to what the holder wrote");
    // Writing it again takes the lock per write, and a fresh read agrees with the cache.
    block_on(store.sessions().append("s", entry("u21", Role::Assistant, "last"))).unwrap();
    assert_eq!(uuids(&Store::new(&memory), "s").last().map(String::as_str), Some("u21"));
    block_on(store.sessions().hold("s")).unwrap();
    block_on(store.release_all()).unwrap();
    block_on(other.sessions().append("s", entry("y", Role::User, "free again"))).unwrap();
}

mod search_index {
    use super::*;

    const INDEX: &str = "index/search.jsonl";
    const ID: &str = "11111111-1111-4111-8111-111111111111";

    fn found(store: &Store<&InMemoryStorage>, query: &str) -> Vec<String> {
        block_on(store.sessions().search(query, 10, None, Default::default())).unwrap().into_iter().map(|hit| hit.uuid).collect()
    }

    fn part_key(storage: &InMemoryStorage) -> String {
        block_on(storage.list("projects/")).unwrap().into_iter().find(|k| k.key.ends_with(".jsonl")).unwrap().key
    }

    #[test]
    fn a_search_of_a_store_with_no_session_writes_nothing() {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        assert!(found(&store, "zebras").is_empty());
        assert!(found(&store, "zebras").is_empty());
        assert_eq!(block_on(storage.list("")).unwrap(), []);
        // The first session's search saves the index.
        block_on(store.sessions().append(ID, entry("u1", Role::User, "Where do the zebras graze?"))).unwrap();
        assert_eq!(found(&store, "zebras"), ["u1"]);
        assert!(block_on(storage.list(INDEX)).unwrap().iter().any(|info| info.key == INDEX));
    }

    #[test]
    fn the_user_s_own_words_come_first_not_a_meta_line_or_an_answer_in_their_role() {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        let key = mneme_core::TranscriptKey { project: "-work-app".into(), id: ID.into(), subpath: None };
        let line = |uuid: &str, parent: &str, kind: &str, extra: &str, minute: u32| {
            format!(
                r#"{{"type":"{kind}","uuid":"{uuid}","parentUuid":{parent},"sessionId":"{ID}","timestamp":"2026-05-01T10:{minute:02}:00.000Z"{extra},"message":{{"role":"{kind}","content":"Where do the zebras graze?"}}}}"#
            )
        };
        let lines = [
            line("said", "null", "user", "", 1),
            line("meta", r#""said""#, "user", r#","isMeta":true"#, 2),
            line("answer", r#""meta""#, "assistant", "", 3),
        ];
        assert_eq!(block_on(store.sessions().append_lines(&key, &lines, 0)).unwrap(), 3);
        // The same words in each; ties go to the newer, so only the weight puts the
        // prompt the user wrote first.
        assert_eq!(found(&store, "zebras graze").first().map(String::as_str), Some("said"));
    }

    #[test]
    fn a_hit_names_the_folder_its_project_is_named_after_though_the_session_moved() {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        let at = |uuid: &str, cwd: &str, text: &str| NewEntry { cwd: cwd.into(), ..entry(uuid, Role::User, text) };
        block_on(store.sessions().append(ID, at("u1", "/work/app", "Where do the zebras graze?"))).unwrap();
        block_on(store.sessions().append(ID, at("u2", "/work/app/src", "And the okapis?"))).unwrap();
        let hit = block_on(store.sessions().search("okapis", 1, None, Default::default())).unwrap().remove(0);
        assert_eq!((hit.project.as_str(), hit.cwd.as_deref()), ("-work-app", Some("/work/app")));
    }

    #[test]
    fn the_index_is_saved_so_a_new_store_reads_only_sessions_that_changed() {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        block_on(store.sessions().append(ID, entry("u1", Role::User, "Where do the zebras graze?"))).unwrap();
        block_on(store.sessions().append(ID, entry("a1", Role::Assistant, "On the savanna, near water."))).unwrap();
        assert_eq!(found(&store, "zebras"), ["u1", "a1"]);
        let saved = String::from_utf8(block_on(storage.read(INDEX, 0, None)).unwrap()).unwrap();
        assert!(saved.starts_with("{\"mneme\":\"search-index\",\"version\":4}\n"), "{saved}");
        // An index an earlier version saved, without each session's dialect and folder,
        // is read again.
        let earlier = saved.replacen("\"version\":4", "\"version\":2", 1).replace(",\"format\":\"claude\",\"cwd\":\"/p\"", "");
        assert_ne!(earlier.len(), saved.len(), "{saved}");
        block_on(storage.replace(INDEX, earlier.as_bytes(), None)).unwrap();
        let upgraded = block_on(Store::new(&storage).sessions().search("zebras", 1, None, Default::default())).unwrap().remove(0);
        assert_eq!(upgraded.cwd.as_deref(), Some("/p"));
        assert_eq!(
            String::from_utf8(block_on(storage.read(INDEX, 0, None)).unwrap()).unwrap(),
            saved,
            "and saved as this version saves it"
        );

        // A word swapped for another of the same length leaves the session's size as it
        // was: a new store answers from the saved index, without reading the transcript.
        let key = part_key(&storage);
        let text = String::from_utf8(block_on(storage.read(&key, 0, None)).unwrap()).unwrap();
        block_on(storage.replace(&key, text.replace("zebras", "okapis").as_bytes(), None)).unwrap();
        let fresh = Store::new(&storage);
        assert_eq!(found(&fresh, "zebras"), ["u1", "a1"], "answered from the saved index");
        let hit = block_on(fresh.sessions().search("zebras", 1, None, Default::default())).unwrap().remove(0);
        assert_eq!((hit.format, hit.cwd.as_deref()), (Format::Claude, Some("/p")), "the session's dialect and folder kept with it");
        assert!(found(&fresh, "okapis").is_empty());

        // A session that grew is read again, its line appended.
        block_on(fresh.sessions().append(ID, entry("u2", Role::User, "And the okapis?"))).unwrap();
        let again = Store::new(&storage);
        let mut hits = found(&again, "okapis");
        hits.truncate(2);
        hits.sort();
        assert_eq!(hits, ["u1", "u2"], "both messages with the word, the one that was read again included");
        assert!(found(&again, "zebras").is_empty());
        let saved = String::from_utf8(block_on(storage.read(INDEX, 0, None)).unwrap()).unwrap();
        assert_eq!(saved.lines().count(), 3, "the header and one line per search that changed: {saved}");

        // A session removed is taken out of the saved index too.
        block_on(again.sessions().remove(ID)).unwrap();
        assert!(found(&Store::new(&storage), "okapis").is_empty());
        assert!(String::from_utf8(block_on(storage.read(INDEX, 0, None)).unwrap()).unwrap().contains("\"gone\":true"));
    }

    #[test]
    fn an_index_that_does_not_read_is_rewritten_from_the_transcripts() {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        block_on(store.sessions().append(ID, entry("u1", Role::User, "The vault code is quasar."))).unwrap();
        assert_eq!(found(&store, "quasar"), ["u1"]);
        for broken in [&b"{\"mneme\":\"search-index\",\"version\":1}\n{\"session\":\"projects/-p/1111"[..], b"not json\n", b""] {
            block_on(storage.replace(INDEX, broken, None)).unwrap();
            assert_eq!(found(&Store::new(&storage), "quasar"), ["u1"], "never zero hits in silence");
            let saved = String::from_utf8(block_on(storage.read(INDEX, 0, None)).unwrap()).unwrap();
            assert_eq!(saved.lines().count(), 2, "rewritten whole: {saved}");
        }
    }
}

/// Storage whose appends land and then, while `stall` is set, never return: an
/// asynchronous host whose caller gave up on the write (a dropped future).
struct Stalling<'a> {
    inner: &'a InMemoryStorage,
    stall: std::cell::Cell<bool>,
}

impl Storage for Stalling<'_> {
    async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        self.inner.list(prefix).await
    }
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        self.inner.read(key, offset, len).await
    }
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
        let size = self.inner.append(key, data).await?;
        if self.stall.get() {
            core::future::pending::<()>().await;
        }
        Ok(size)
    }
    async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
        self.inner.replace(key, data, expected_size).await
    }
    async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
        self.inner.truncate(key, len, expected_size).await
    }
    async fn remove(&self, key: &str) -> Result<(), StorageError> {
        self.inner.remove(key).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), StorageError> {
        self.inner.rename(from, to).await
    }
    async fn lock(&self, name: &str) -> Result<(), StorageError> {
        self.inner.lock(name).await
    }
    async fn unlock(&self, name: &str) -> Result<(), StorageError> {
        self.inner.unlock(name).await
    }
}

#[test]
fn a_write_given_up_after_it_landed_is_read_back_before_the_next_one() {
    use std::future::Future;
    let memory = InMemoryStorage::new();
    let store = Store::new(Stalling { inner: &memory, stall: std::cell::Cell::new(false) });
    block_on(store.sessions().append("s", entry("u1", Role::User, "one"))).unwrap();
    block_on(store.sessions().hold("s")).unwrap();
    store.storage().stall.set(true);
    {
        let sessions = store.sessions();
        let mut write = std::pin::pin!(sessions.append("s", entry("u2", Role::Assistant, "two")));
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(write.as_mut().poll(&mut context).is_pending(), "the append landed and is still waiting");
    }
    store.storage().stall.set(false);
    // Held, the session is not listed again; what the store knew before the lost write
    // must not be used: the next entry continues from the one that landed.
    let written = block_on(store.sessions().append("s", entry("u3", Role::User, "three"))).unwrap();
    assert_eq!(written.parent_uuid.as_deref(), Some("u2"));
    assert_eq!(uuids(&store, "s"), ["u1", "u2", "u3"]);
}

/// A torn line another writer left at the end of a session is moved aside by the next
/// write, and its bytes do not count toward the size cap: caught up incrementally, the
/// session takes what a fresh read of it would.
#[test]
fn a_torn_line_another_writer_left_does_not_count_toward_the_cap() {
    let memory = InMemoryStorage::new();
    let store = Store::with_limits(&memory, Limits { part_bytes: 1 << 20, total_bytes: 4000 });
    block_on(store.sessions().append("s", entry("u1", Role::User, &"one ".repeat(300)))).unwrap();
    let key = "projects/-p/s.jsonl";
    let torn = format!("{{\"type\":\"user\",\"uuid\":\"torn\",\"message\":{{\"content\":\"{}", "x".repeat(2500));
    block_on(memory.append(key, torn.as_bytes())).unwrap();
    let written = block_on(store.sessions().append("s", entry("u2", Role::Assistant, "two"))).unwrap();
    assert_eq!(written.parent_uuid.as_deref(), Some("u1"));
    let listed = block_on(memory.list(&format!("{key}.torn-"))).unwrap();
    assert_eq!(listed.len(), 1, "the torn line is kept beside the session");
}
