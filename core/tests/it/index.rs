//! The session index: routing decisions at their boundaries, reset chains, labels,
//! counters derived from transcripts, and recovery after a failure or a crash at any
//! point of an update.

use mneme_core::gates::ResetPolicy;
use mneme_core::index::route::ResetOverride;
use mneme_core::index::{ChatType, Field, Inbound, KeyPatch, ResolveAction, RoutePolicy};
use mneme_core::storage::faulty::Faulty;
use mneme_core::{Error, InMemoryStorage, NewEntry, Role, Storage, Store, block_on};

/// Monday 2026-02-16 00:00 UTC.
const MONDAY: i64 = 1_771_200_000_000;
const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;

fn direct(text: &str) -> Inbound {
    Inbound {
        chat_type: ChatType::Direct,
        provider: Some("telegram".into()),
        id: Some("u1".into()),
        text: text.into(),
        ..Inbound::default()
    }
}

fn group(provider: &str, id: &str) -> Inbound {
    Inbound { chat_type: ChatType::Group, provider: Some(provider.into()), id: Some(id.into()), text: "hi".into(), ..Inbound::default() }
}

#[test]
fn a_key_continues_until_a_reset_and_keeps_every_session_it_had() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let policy = RoutePolicy { reset: ResetPolicy::default(), ..RoutePolicy::default() };
    let first = block_on(store.index().resolve(&direct("hello"), &policy, MONDAY, "s1")).unwrap();
    assert_eq!((first.key.as_str(), first.session_id.as_str(), first.action), ("agent:main:main", "s1", ResolveAction::Created));
    let again = block_on(store.index().resolve(&direct("more"), &policy, MONDAY + MINUTE, "s2")).unwrap();
    assert_eq!((again.session_id.as_str(), again.action, again.previous_session_id), ("s1", ResolveAction::Continued, None));
    let reset = block_on(store.index().resolve(&direct("/new start over"), &policy, MONDAY + 2 * MINUTE, "s2")).unwrap();
    assert_eq!((reset.session_id.as_str(), reset.action), ("s2", ResolveAction::Reset));
    assert_eq!(reset.previous_session_id.as_deref(), Some("s1"));
    assert_eq!(reset.text, "start over", "the command is taken out of the message");
    let manual = block_on(store.index().reset_key("agent:main:main", "s3", MONDAY + 3 * MINUTE)).unwrap();
    assert_eq!(manual.previous_session_ids, ["s1", "s2"]);
    let reused = block_on(store.index().reset_key("agent:main:main", "s1", MONDAY + 4 * MINUTE));
    assert!(matches!(reused, Err(Error::InvalidArgument(_))), "a key never goes back to an id it had: {reused:?}");
    let missing = block_on(store.index().reset_key("agent:main:nope", "s9", MONDAY));
    assert!(matches!(missing, Err(Error::KeyNotFound { .. })), "{missing:?}");

    // A fresh store over the same storage reads the same index.
    let reopened = Store::new(&storage);
    let view = block_on(reopened.index().key("agent:main:main")).unwrap();
    assert_eq!(view.entry.session_id, "s3");
    assert_eq!(view.entry.previous_session_ids, ["s1", "s2"]);
    assert_eq!(view.session, None, "s3 has no transcript yet");
}

#[test]
fn idle_and_daily_resets_decide_at_their_boundaries() {
    let idle = RoutePolicy { reset: ResetPolicy { idle_minutes: Some(30), ..ResetPolicy::default() }, ..RoutePolicy::default() };
    let daily_cet = RoutePolicy {
        reset: ResetPolicy { daily_reset_hour: Some(4), utc_offset_minutes: 60, ..ResetPolicy::default() },
        ..RoutePolicy::default()
    };
    // (policy, the last message, the next one, the action)
    let cases = [
        (&idle, MONDAY, MONDAY + 30 * MINUTE - 1, ResolveAction::Continued),
        (&idle, MONDAY, MONDAY + 30 * MINUTE, ResolveAction::Idle),
        // 04:00 in UTC+1 is 03:00 UTC.
        (&daily_cet, MONDAY + 2 * HOUR, MONDAY + 3 * HOUR - 1, ResolveAction::Continued),
        (&daily_cet, MONDAY + 2 * HOUR, MONDAY + 3 * HOUR, ResolveAction::Daily),
        (&daily_cet, MONDAY + 3 * HOUR, MONDAY + 20 * HOUR, ResolveAction::Continued),
        (&daily_cet, MONDAY + 3 * HOUR - 1, MONDAY + 20 * HOUR, ResolveAction::Daily),
        (&daily_cet, MONDAY + 20 * HOUR, MONDAY + 27 * HOUR - 1, ResolveAction::Continued),
        (&daily_cet, MONDAY + 20 * HOUR, MONDAY + 27 * HOUR, ResolveAction::Daily),
        (&daily_cet, MONDAY + 20 * HOUR, MONDAY + 26 * HOUR + 59 * MINUTE - HOUR * 4, ResolveAction::Continued),
    ];
    for (i, (policy, last, next, action)) in cases.into_iter().enumerate() {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        block_on(store.index().resolve(&direct("a"), policy, last, "first")).unwrap();
        let got = block_on(store.index().resolve(&direct("b"), policy, next, "second")).unwrap();
        assert_eq!(got.action, action, "case {i}: {}", got.reason);
        let expected_id = if action == ResolveAction::Continued { "first" } else { "second" };
        assert_eq!(got.session_id, expected_id, "case {i}");
    }
}

#[test]
fn a_provider_override_beats_a_chat_type_override_which_beats_the_default() {
    let policy = RoutePolicy {
        reset: ResetPolicy { idle_minutes: Some(600), ..ResetPolicy::default() },
        overrides: vec![
            ResetOverride {
                chat_type: Some(ChatType::Group),
                provider: None,
                policy: ResetPolicy { idle_minutes: Some(60), ..ResetPolicy::default() },
            },
            ResetOverride {
                chat_type: None,
                provider: Some("slack".into()),
                policy: ResetPolicy { idle_minutes: Some(5), ..ResetPolicy::default() },
            },
        ],
        ..RoutePolicy::default()
    };
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for (inbound, idle_limit) in [(direct("x"), 600), (group("telegram", "g1"), 60), (group("slack", "g2"), 5)] {
        block_on(store.index().resolve(&inbound, &policy, MONDAY, &format!("{}-a", inbound.id.clone().unwrap()))).unwrap();
        let before = block_on(store.index().resolve(&inbound, &policy, MONDAY + (idle_limit - 1) * MINUTE, "unused")).unwrap();
        assert_eq!(before.action, ResolveAction::Continued, "{}", before.key);
        let after = block_on(store.index().resolve(
            &inbound,
            &policy,
            MONDAY + (2 * idle_limit) * MINUTE,
            &format!("{}-b", inbound.id.clone().unwrap()),
        ))
        .unwrap();
        assert_eq!(after.action, ResolveAction::Idle, "{}: {}", after.key, after.reason);
    }
}

#[test]
fn keys_are_found_by_metadata_and_show_their_sessions_counters() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let policy = RoutePolicy::default();
    for (campaign, agent, id) in [("c1", "copywriter", "j1"), ("c1", "planner", "j2"), ("c2", "copywriter", "j3")] {
        let inbound = Inbound {
            chat_type: ChatType::Cron,
            id: Some(id.into()),
            metadata: vec![
                Field { name: "campaign_id".into(), value: campaign.into() },
                Field { name: "agent_type".into(), value: agent.into() },
            ],
            ..Inbound::default()
        };
        block_on(store.index().resolve(&inbound, &policy, MONDAY, &format!("session-{id}"))).unwrap();
    }
    let wanted =
        [Field { name: "campaign_id".into(), value: "c1".into() }, Field { name: "agent_type".into(), value: "copywriter".into() }];
    let found = block_on(store.index().keys(&wanted)).unwrap();
    assert_eq!(found.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(), ["cron:j1"]);
    assert_eq!(block_on(store.index().keys(&[])).unwrap().len(), 3);

    let patch = KeyPatch { title: Some("Spring campaign".into()), model: Some("claude-sonnet-4-5".into()), ..KeyPatch::default() };
    block_on(store.index().update_key("cron:j1", &patch)).unwrap();
    for (i, text) in ["write the intro", "Here it is."].into_iter().enumerate() {
        let role = if i == 0 { Role::User } else { Role::Assistant };
        let entry = NewEntry { uuid: format!("u{i}"), now_ms: MONDAY + i as i64, role, text: text.into(), cwd: "/p".into() };
        block_on(store.sessions().append("session-j1", entry)).unwrap();
    }
    block_on(store.gates().record_memory_flush("session-j1", MONDAY + 10)).unwrap();
    let view = block_on(store.index().key("cron:j1")).unwrap();
    assert_eq!(view.entry.title.as_deref(), Some("Spring campaign"));
    let session = view.session.expect("the session has a transcript");
    assert_eq!((session.message_count, session.title.as_deref()), (2, Some("write the intro")));
    assert_eq!(view.counters.memory_flush_ms, Some(MONDAY + 10));
    assert_eq!(view.counters.memory_flush_compaction_count, Some(0));
    assert_eq!(view.counters.compaction_count, 0);

    block_on(store.index().remove_key("cron:j2")).unwrap();
    assert_eq!(block_on(store.index().keys(&[])).unwrap().len(), 2);
}

#[test]
fn listing_reads_only_sessions_that_changed() {
    let storage = Faulty::new(InMemoryStorage::new(), 0).only("read");
    let store = Store::new(&storage);
    for s in 0..5 {
        let entry = NewEntry { uuid: format!("e{s}"), now_ms: MONDAY + s, role: Role::User, text: format!("prompt {s}"), cwd: "/p".into() };
        block_on(store.sessions().append(&format!("s{s}"), entry)).unwrap();
    }
    let first = block_on(store.sessions().list()).unwrap();
    assert_eq!(first.sessions.len(), 5);
    // A fresh store (another process) lists from the index: it reads the index, no transcript.
    let other = Store::new(&storage);
    let reads = storage.calls.get();
    assert_eq!(block_on(other.sessions().list()).unwrap(), first);
    assert!(storage.calls.get() - reads <= 2, "{} reads", storage.calls.get() - reads);
    let entry = NewEntry { uuid: "e9".into(), now_ms: MONDAY + 9, role: Role::Assistant, text: "reply".into(), cwd: "/p".into() };
    block_on(store.sessions().append("s3", entry)).unwrap();
    let reads = storage.calls.get();
    let listed = block_on(other.sessions().list()).unwrap();
    assert_eq!(storage.calls.get() - reads, 1, "the one changed session");
    assert_eq!(listed.sessions[0].id, "s3");
    assert_eq!(listed.sessions[0].message_count, 2);
    block_on(store.sessions().remove("s1")).unwrap();
    assert_eq!(block_on(other.sessions().list()).unwrap().sessions.len(), 4);
    assert_eq!(block_on(Store::new(&storage).sessions().list()).unwrap(), block_on(other.sessions().list()).unwrap());
}

/// Every state a reader can see of the index of `storage`.
fn keys_of(storage: &InMemoryStorage) -> Vec<(String, String, Vec<String>)> {
    let store = Store::new(storage);
    block_on(store.index().keys(&[])).unwrap().into_iter().map(|e| (e.key, e.session_id, e.previous_session_ids)).collect()
}

/// With 3 changes in the log the update appends; with 256 it also starts a new
/// generation (a snapshot, then the old generation's files removed).
#[test]
fn an_update_failing_at_any_storage_call_leaves_the_old_or_the_new_state() {
    for changes in [3, 256] {
        update_failing_at_every_call(changes);
    }
}

fn update_failing_at_every_call(changes: u32) {
    let policy = RoutePolicy::default();
    let seed = |storage: &InMemoryStorage| {
        let store = Store::new(storage);
        for i in 0..changes {
            block_on(store.index().resolve(&group("telegram", &format!("g{}", i % 3)), &policy, MONDAY + i64::from(i), &format!("a{i}")))
                .unwrap();
        }
    };
    let reference = InMemoryStorage::new();
    seed(&reference);
    let before = keys_of(&reference);
    block_on(Store::new(&reference).index().reset_key("agent:main:telegram:group:g1", "b1", MONDAY + 1)).unwrap();
    let after = keys_of(&reference);
    let mut fail_at = 1;
    loop {
        let inner = InMemoryStorage::new();
        seed(&inner);
        let storage = Faulty::new(&inner, fail_at).forever();
        let result = block_on(Store::new(&storage).index().reset_key("agent:main:telegram:group:g1", "b1", MONDAY + 1));
        let seen = keys_of(&inner);
        assert!(seen == before || seen == after, "failing at call {fail_at}: {seen:?}");
        if result.is_ok() {
            // A snapshot that fails is left for the next update: the change is stored.
            assert_eq!(seen, after, "failing at call {fail_at}");
        }
        if storage.calls.get() < fail_at {
            let generation = block_on(Store::new(&inner).index().index_report()).unwrap().generation;
            assert_eq!(generation, u64::from(changes > 255), "{changes} changes before");
            break;
        }
        // The next update over the same bytes works and is read back.
        block_on(Store::new(&inner).index().reset_key("agent:main:telegram:group:g2", "b2", MONDAY + 2)).unwrap();
        assert!(keys_of(&inner).iter().any(|(key, id, _)| key.ends_with("g2") && id == "b2"));
        fail_at += 1;
    }
}

#[test]
fn a_torn_line_at_any_byte_is_ignored_and_never_fuses_with_the_next() {
    let policy = RoutePolicy::default();
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(store.index().resolve(&group("slack", "c1"), &policy, MONDAY, "one")).unwrap();
    let before = keys_of(&storage);
    let log = "index/log-0.jsonl";
    let size = block_on(storage.list(log)).unwrap()[0].size;
    block_on(store.index().reset_key("agent:main:slack:group:c1", "two", MONDAY + 1)).unwrap();
    let full = block_on(storage.read(log, 0, None)).unwrap();
    for cut in size..full.len() as u64 {
        let torn = InMemoryStorage::new();
        block_on(torn.append(log, &full[..cut as usize])).unwrap();
        assert_eq!(keys_of(&torn), before, "torn at byte {cut}");
        let writer = Store::new(&torn);
        let report = block_on(writer.index().index_report()).unwrap();
        assert_eq!(report.torn_bytes, cut - size, "cut at {cut}");
        block_on(writer.index().reset_key("agent:main:slack:group:c1", "three", MONDAY + 2)).unwrap();
        let seen = keys_of(&torn);
        assert_eq!(seen[0].1, "three", "torn at byte {cut}: the next change is read");
        assert_eq!(seen[0].2, ["one"]);
    }
}

#[test]
fn snapshots_bound_the_log_and_a_damaged_one_falls_back_to_the_one_before() {
    let policy = RoutePolicy { reset: ResetPolicy::default(), ..RoutePolicy::default() };
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for i in 0..2_000 {
        let inbound = Inbound { chat_type: ChatType::Hook, id: Some(format!("h{}", i % 50)), ..Inbound::default() };
        block_on(store.index().resolve(&inbound, &policy, MONDAY + i, &format!("s{i}"))).unwrap();
    }
    let report = block_on(store.index().index_report()).unwrap();
    assert!(report.generation >= 5, "{report:?}");
    assert!(report.log_lines <= 257, "{report:?}");
    let files: Vec<String> = block_on(storage.list("index/")).unwrap().into_iter().map(|i| i.key).collect();
    assert!(files.len() <= 4, "two generations at most: {files:?}");
    let expected = keys_of(&storage);
    assert_eq!(expected.len(), 50);

    let newest = files.iter().filter_map(|k| k.strip_prefix("index/snapshot-")?.strip_suffix(".json")?.parse::<u64>().ok()).max().unwrap();
    block_on(storage.replace(&format!("index/snapshot-{newest}.json"), b"{ not json", None)).unwrap();
    let fallback = Store::new(&storage);
    assert_eq!(block_on(fallback.index().index_report()).unwrap().damaged_snapshots, 1);
    assert_eq!(keys_of(&storage), expected, "the older snapshot and both logs give the same state");
}

#[test]
fn a_rebuild_reads_every_transcript_again_keeps_the_keys_and_leaves_damage_behind() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(store.index().resolve(&direct("hello"), &RoutePolicy::default(), MONDAY, "s1")).unwrap();
    for (id, text) in [("s1", "first words"), ("s2", "other words")] {
        let entry = NewEntry { uuid: format!("{id}-u"), now_ms: MONDAY, role: Role::User, text: text.into(), cwd: "/p".into() };
        block_on(store.sessions().append(id, entry)).unwrap();
    }
    assert_eq!(block_on(store.sessions().list()).unwrap().sessions.len(), 2, "both rows cached");
    // Behind the index's back: s1 changes at the same size (the cache cannot see it),
    // s2 goes, and a line that is no change lands in the log.
    let s1 = block_on(storage.read("projects/-p/s1.jsonl", 0, None)).unwrap();
    let changed = String::from_utf8(s1.clone()).unwrap().replace("first words", "FIRST WORDS");
    block_on(storage.replace("projects/-p/s1.jsonl", changed.as_bytes(), Some(s1.len() as u64))).unwrap();
    block_on(storage.remove("projects/-p/s2.jsonl")).unwrap();
    block_on(storage.append("index/log-0.jsonl", b"not a change\n")).unwrap();

    let report = block_on(Store::new(&storage).index().rebuild_index()).unwrap();
    assert_eq!(report.before.damaged_lines, 1);
    assert_eq!((report.session_count, report.added, report.changed, report.dropped, report.key_count), (1, 0, 1, 1, 1), "{report:?}");
    let reopened = Store::new(&storage);
    let after = block_on(reopened.index().index_report()).unwrap();
    assert_eq!((after.generation, after.damaged_lines, after.key_count, after.session_count), (1, 0, 1, 1), "{after:?}");
    let listed = block_on(reopened.sessions().list()).unwrap();
    assert_eq!(listed.sessions[0].title.as_deref(), Some("FIRST WORDS"));
    assert_eq!(block_on(reopened.index().key("agent:main:main")).unwrap().entry.session_id, "s1", "the key binding is kept");
}

/// A reset policy that would reset nonsensically is refused, in the default and in an
/// override, and writes nothing: an hour past 23 was read as 23, an idle limit of 0
/// started a new session at every message.
#[test]
fn a_reset_policy_that_would_reset_nonsensically_is_refused() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let late = RoutePolicy { reset: ResetPolicy { daily_reset_hour: Some(25), ..ResetPolicy::default() }, ..RoutePolicy::default() };
    let eager = RoutePolicy {
        overrides: vec![ResetOverride {
            chat_type: Some(ChatType::Direct),
            provider: None,
            policy: ResetPolicy { idle_minutes: Some(0), ..ResetPolicy::default() },
        }],
        ..RoutePolicy::default()
    };
    let far = RoutePolicy { reset: ResetPolicy { utc_offset_minutes: 900, ..ResetPolicy::default() }, ..RoutePolicy::default() };
    for (policy, said) in [(late, "the daily reset hour is 25"), (eager, "of no time"), (far, "the UTC offset is 900 minutes")] {
        match block_on(store.index().resolve(&direct("hello"), &policy, MONDAY, "s1")) {
            Err(Error::InvalidArgument(reason)) => assert!(reason.contains(said), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
    assert!(block_on(storage.list("")).unwrap().is_empty(), "nothing was written");
    block_on(
        store.sessions().append("s", NewEntry { uuid: "u".into(), now_ms: MONDAY, role: Role::User, text: "hi".into(), cwd: "/w".into() }),
    )
    .unwrap();
    let hour = ResetPolicy { daily_reset_hour: Some(24), ..ResetPolicy::default() };
    assert!(matches!(block_on(store.gates().reset_gate("s", MONDAY, &hour)), Err(Error::InvalidArgument(_))));
}
