//! Long-session rollover: a key past its token threshold moves to a new session that
//! starts from a summary of the old one, in the old one's dialect and linked to it;
//! the old transcript is untouched, and a failure at any storage call leaves the key
//! on one whole session or the other.

use mneme_core::index::{Inbound, RoutePolicy};
use mneme_core::storage::faulty::Faulty;
use mneme_core::{CompactionIds, Error, Format, InMemoryStorage, NewEntry, Provider, Role, Storage, Store, block_on};

const NOW: i64 = 1_771_200_000_000;
const KEY: &str = "cron:nightly";

fn ids() -> CompactionIds {
    CompactionIds { boundary: "b0000000-0000-4000-8000-000000000001".into(), summary: "b0000000-0000-4000-8000-000000000002".into() }
}

fn cron() -> Inbound {
    Inbound { chat_type: mneme_core::index::ChatType::Cron, id: Some("nightly".into()), text: "run".into(), ..Inbound::default() }
}

/// A key on session `old` with a few hundred tokens of conversation.
fn seeded(storage: &InMemoryStorage, old: &str) {
    let store = Store::new(storage);
    block_on(store.index().resolve(&cron(), &RoutePolicy::default(), NOW, old)).unwrap();
    for i in 0..6 {
        let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
        let text = format!("message {i}: {}", "the campaign brief says more ".repeat(20));
        let entry =
            NewEntry { uuid: format!("a0000000-0000-4000-8000-00000000000{i}"), now_ms: NOW + i, role, text, cwd: "/work/app".into() };
        block_on(store.sessions().append(old, entry)).unwrap();
    }
}

fn bytes(storage: &InMemoryStorage, key: &str) -> Vec<u8> {
    block_on(storage.read(key, 0, None)).unwrap()
}

#[test]
fn a_claude_session_rolls_over_into_a_linked_session_that_resumes_from_the_summary() {
    let storage = InMemoryStorage::new();
    seeded(&storage, "old");
    let store = Store::new(&storage);
    let old_bytes = bytes(&storage, "projects/-work-app/old.jsonl");

    let quiet = block_on(store.index().rollover_gate(KEY, 1_000_000)).unwrap();
    assert!(!quiet.fire, "{}", quiet.reason);
    let due = block_on(store.index().rollover_gate(KEY, 100)).unwrap();
    assert!(due.fire && due.reason.contains("rolls over at 100"), "{}", due.reason);

    let rolled = block_on(store.index().rollover(KEY, "The brief was read six times.", &ids(), "new", NOW + 100)).unwrap();
    assert_eq!((rolled.entry.session_id.as_str(), rolled.previous_session_id.as_str()), ("new", "old"));
    assert_eq!(rolled.entry.previous_session_ids, ["old"]);
    assert!(rolled.entry.reason.contains("rolled over from `old`"), "{}", rolled.entry.reason);
    assert_eq!(rolled.format, Format::Claude);
    assert_eq!(rolled.boundary_uuid, ids().boundary);
    assert!(rolled.tokens_before > rolled.tokens_after, "{rolled:?}");
    assert_eq!(bytes(&storage, "projects/-work-app/old.jsonl"), old_bytes, "the old transcript is untouched");

    // The new session is the boundary and the summary, linked to the old one's last message.
    let text = String::from_utf8(bytes(&storage, "projects/-work-app/new.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["subtype"], "compact_boundary");
    assert_eq!(lines[0]["sessionId"], "new");
    assert_eq!(lines[0]["forkedFrom"]["sessionId"], "old");
    assert_eq!(lines[0]["logicalParentUuid"], "a0000000-0000-4000-8000-000000000005");
    assert_eq!(lines[1]["isCompactSummary"], true);

    let context = block_on(store.sessions().provider_context("new", Provider::Anthropic, None, &[])).unwrap();
    assert!(context.body.contains("The brief was read six times."), "{}", context.body);
    assert!(!context.body.contains("message 0"), "the old conversation stays behind: {}", context.body);
    // The key continues the new session, and an append chains under the summary.
    let next = NewEntry {
        uuid: "c0000000-0000-4000-8000-000000000001".into(),
        now_ms: NOW + 200,
        role: Role::User,
        text: "go on".into(),
        cwd: "/work/app".into(),
    };
    let written = block_on(store.sessions().append("new", next)).unwrap();
    assert_eq!(written.parent_uuid.as_deref(), Some(ids().summary.as_str()));
    assert_eq!(block_on(store.index().key(KEY)).unwrap().entry.session_id, "new");
}

#[test]
fn a_pi_session_rolls_over_into_a_pi_session_that_names_its_parent() {
    let storage = InMemoryStorage::new();
    let pi = [
        r#"{"type":"session","version":3,"id":"pi1","timestamp":"2026-02-16T00:00:00.000Z","cwd":"/work/app"}"#,
        r#"{"type":"message","id":"e1","parentId":null,"timestamp":"2026-02-16T00:00:01.000Z","message":{"role":"user","content":"plan the launch","timestamp":1771200001000}}"#,
        r#"{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-02-16T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Launch on Friday."}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1771200002000}}"#,
    ];
    block_on(storage.append("projects/-work-app/pi1.jsonl", format!("{}\n", pi.join("\n")).as_bytes())).unwrap();
    let store = Store::new(&storage);
    block_on(store.index().resolve(&cron(), &RoutePolicy::default(), NOW, "pi1")).unwrap();

    let rolled = block_on(store.index().rollover(KEY, "Launch is on Friday.", &ids(), "pi2", NOW + 100)).unwrap();
    assert_eq!(rolled.format, Format::Pi);
    let text = String::from_utf8(bytes(&storage, "projects/-work-app/pi2.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!((lines[0]["type"].as_str(), lines[0]["parentSession"].as_str()), (Some("session"), Some("projects/-work-app/pi1.jsonl")));
    assert_eq!((lines[1]["type"].as_str(), lines[1]["parentId"].as_str()), (Some("compaction"), None));
    let context = block_on(store.sessions().provider_context("pi2", Provider::Anthropic, None, &[])).unwrap();
    assert!(context.body.contains("Launch is on Friday."), "{}", context.body);
    assert!(!context.body.contains("plan the launch"), "{}", context.body);

    // pi 0.73 writes a file it loaded with no assistant message in it out again, header
    // and all, when its first reply comes (`_persist`; its own code calls this "the
    // duplicate-header bug"): the new session's two lines twice, then the turn.
    let compaction = lines[1]["id"].as_str().unwrap();
    let turn = [
        format!(
            r#"{{"type":"message","id":"e3","parentId":"{compaction}","timestamp":"2026-02-16T00:00:03.000Z","message":{{"role":"user","content":"and the venue?","timestamp":1771200003000}}}}"#
        ),
        r#"{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-02-16T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"The harbour hall."}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1771200004000}}"#.into(),
    ];
    block_on(storage.append("projects/-work-app/pi2.jsonl", format!("{text}{}\n", turn.join("\n")).as_bytes())).unwrap();
    let reread = Store::new(&storage);
    let context = block_on(reread.sessions().provider_context("pi2", Provider::Anthropic, None, &[])).unwrap();
    assert_eq!(context.body.matches("Launch is on Friday.").count(), 1, "{}", context.body);
    assert_eq!(context.message_count, 2, "the summary with the prompt, then the reply: {}", context.body);
    assert!(context.body.ends_with(r#"{"content":[{"text":"The harbour hall.","type":"text"}],"role":"assistant"}]}"#), "{}", context.body);
    let check = block_on(reread.sessions().check("pi2")).unwrap();
    assert!(!check.has_problems(), "{check:?}");
    let appended =
        NewEntry { uuid: "after-pi".into(), now_ms: NOW + 200, role: Role::User, text: "book it".into(), cwd: "/work/app".into() };
    block_on(reread.sessions().append("pi2", appended)).unwrap();
    let after = String::from_utf8(bytes(&storage, "projects/-work-app/pi2.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(after.lines().last().unwrap()).unwrap();
    assert_eq!(last["parentId"], "e4", "{after}");
}

#[test]
fn a_rollover_refuses_what_it_cannot_do_and_writes_nothing() {
    let storage = InMemoryStorage::new();
    seeded(&storage, "old");
    let store = Store::new(&storage);
    let empty = block_on(store.index().rollover(KEY, "  ", &ids(), "new", NOW));
    assert!(matches!(empty, Err(Error::EmptySummary { .. })), "{empty:?}");
    let reused = block_on(store.index().rollover(KEY, "s", &ids(), "old", NOW));
    assert!(matches!(reused, Err(Error::InvalidArgument(_))), "{reused:?}");
    seeded(&storage, "other");
    let taken = block_on(store.index().rollover(KEY, "s", &ids(), "other", NOW));
    assert!(matches!(taken, Err(Error::SessionExists { .. })), "{taken:?}");
    let missing = block_on(store.index().rollover("cron:none", "s", &ids(), "new", NOW));
    assert!(matches!(missing, Err(Error::KeyNotFound { .. })), "{missing:?}");
    let no_ids = CompactionIds { boundary: String::new(), summary: String::new() };
    assert!(matches!(block_on(store.index().rollover(KEY, "s", &no_ids, "new", NOW)), Err(Error::InvalidArgument(_))));
    assert_eq!(block_on(store.index().key(KEY)).unwrap().entry.session_id, "old", "the key did not move");
    assert!(block_on(store.sessions().load("new")).is_err(), "no session was written");
}

/// A rollover failing at each storage call in turn: the key is on the old session or
/// the new one, and the new one, when it exists, is whole (the boundary and the summary).
#[test]
fn a_rollover_failing_at_any_storage_call_leaves_one_whole_session_under_the_key() {
    let mut fail_at = 1;
    loop {
        let inner = InMemoryStorage::new();
        seeded(&inner, "old");
        let storage = Faulty::new(&inner, fail_at).forever();
        let result = block_on(Store::new(&storage).index().rollover(KEY, "summary", &ids(), "new", NOW + 100));
        let store = Store::new(&inner);
        let view = block_on(store.index().key(KEY)).unwrap();
        let new = block_on(inner.read("projects/-work-app/new.jsonl", 0, None));
        match view.entry.session_id.as_str() {
            "old" => assert!(result.is_err(), "failing at call {fail_at}: the key stayed but the call said it moved"),
            "new" => assert_eq!(view.entry.previous_session_ids, ["old"]),
            other => panic!("failing at call {fail_at}: the key is on `{other}`"),
        }
        if let Ok(new) = &new {
            assert_eq!(new.iter().filter(|&&b| b == b'\n').count(), 2, "failing at call {fail_at}: the new session is whole");
        } else {
            assert_eq!(view.entry.session_id, "old", "failing at call {fail_at}: the key points at no session");
        }
        if storage.calls.get() < fail_at {
            assert!(result.is_ok());
            break;
        }
        fail_at += 1;
    }
    assert!(fail_at > 3, "the rollover made storage calls");
}
