//! Gates whose state lives in transcripts and storage.

use mneme_core::gates::{DreamSettings, ExtractionSettings, FlushSettings, ResetPolicy};
use mneme_core::{CompactionIds, InMemoryStorage, Keep, Mode, NewEntry, Role, Settings, Store, block_on};
use serde_json::json;

const NOW: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;

fn say(store: &Store<&InMemoryStorage>, id: &str, uuid: &str, role: Role, tokens: usize, now_ms: i64) {
    block_on(store.sessions().append(id, NewEntry { uuid: uuid.into(), now_ms, role, text: "w".repeat(tokens * 4), cwd: "/p".into() }))
        .unwrap();
}

#[test]
fn the_memory_flush_fires_once_per_compaction_cycle() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let settings = FlushSettings { context_window: 10_000, reserve_floor: 2_000, soft_threshold: 1_000 };
    say(&store, "s", "a", Role::User, 6_999, NOW);
    assert!(!block_on(store.gates().memory_flush_gate("s", &settings)).unwrap().fire, "one token short");
    say(&store, "s", "b", Role::Assistant, 1, NOW);
    assert!(block_on(store.gates().memory_flush_gate("s", &settings)).unwrap().fire);
    block_on(store.gates().record_memory_flush("s", NOW)).unwrap();
    let again = block_on(store.gates().memory_flush_gate("s", &settings)).unwrap();
    assert!(!again.fire && again.reason.contains("already flushed"), "{again:?}");
    // A compaction starts a new cycle.
    let plan =
        block_on(store.compaction().plan_compaction("s", &Settings { keep: Keep::RecentMessages(1), ..Settings::default() }, Mode::Manual))
            .unwrap();
    block_on(store.compaction().apply_compaction("s", &plan, "summary", &CompactionIds { boundary: "B".into(), summary: "S".into() }, NOW))
        .unwrap();
    say(&store, "s", "c", Role::User, 7_000, NOW);
    assert!(block_on(store.gates().memory_flush_gate("s", &settings)).unwrap().fire);
}

#[test]
fn extraction_counts_since_the_last_extraction_and_waits_for_tool_results() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let tool_round = |n: usize, answered: bool| {
        let call = format!("toolu-{n}");
        let use_line = json!({"type": "assistant", "uuid": format!("a{n}"), "sessionId": "s", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "Bash", "input": {}}]}});
        let result_line = json!({"type": "user", "uuid": format!("r{n}"), "sessionId": "s", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "ok"}]}});
        let mut text = use_line.to_string() + "\n";
        if answered {
            text += &(result_line.to_string() + "\n");
        }
        block_on(mneme_core::Storage::append(&storage, "projects/-p/s.jsonl", text.as_bytes())).unwrap();
    };
    say(&store, "s", "first", Role::User, 10, NOW);
    for n in 0..3 {
        tool_round(n, true);
    }
    for i in 0..12 {
        say(&store, "s", &format!("m{i}"), if i % 2 == 0 { Role::User } else { Role::Assistant }, 10, NOW);
    }
    let settings = ExtractionSettings::default();
    store.sessions().reopen("s");
    let gate = block_on(store.gates().extraction_gate("s", &settings)).unwrap();
    assert!(!gate.fire && gate.reason.contains("19 messages"), "{gate:?}");
    say(&store, "s", "m12", Role::User, 10, NOW);
    assert!(block_on(store.gates().extraction_gate("s", &settings)).unwrap().fire);
    tool_round(9, false);
    store.sessions().reopen("s");
    let pending = block_on(store.gates().extraction_gate("s", &settings)).unwrap();
    assert!(!pending.fire && pending.reason.contains("waiting"), "{pending:?}");
    block_on(store.gates().record_extraction("s", NOW)).unwrap();
    assert!(block_on(store.gates().extraction_gate("s", &settings)).unwrap().reason.contains("0 messages"));
}

#[test]
fn the_dream_lock_goes_to_exactly_one_holder() {
    let storage = InMemoryStorage::new();
    let (a, b) = (Store::new(&storage), Store::new(&storage));
    let settings = DreamSettings::default();
    for i in 0..4 {
        say(&a, &format!("s{i}"), &format!("u{i}"), Role::User, 1, NOW);
    }
    let too_few = block_on(a.gates().dream_acquire(NOW, "a", &settings)).unwrap();
    assert!(!too_few.fire && too_few.reason.contains("4 sessions"), "{too_few:?}");
    say(&a, "s4", "u4", Role::User, 1, NOW);
    assert!(block_on(a.gates().dream_acquire(NOW, "a", &settings)).unwrap().fire);
    let refused = block_on(b.gates().dream_acquire(NOW + 1, "b", &settings)).unwrap();
    assert!(!refused.fire && refused.reason.contains("holds the lock"), "{refused:?}");
    assert!(block_on(b.gates().dream_release(NOW, "b", true)).is_err(), "b cannot release a's lock");
    // A crashed holder's lock goes stale after an hour.
    assert!(block_on(b.gates().dream_acquire(NOW + HOUR, "b", &settings)).unwrap().fire);
    block_on(b.gates().dream_release(NOW + HOUR, "b", true)).unwrap();
    let soon = block_on(a.gates().dream_gate(NOW + 2 * HOUR, &settings)).unwrap();
    assert!(!soon.fire && soon.reason.contains("ago"), "{soon:?}");
    for i in 5..10 {
        say(&a, &format!("s{i}"), &format!("u{i}"), Role::User, 1, NOW + 20 * HOUR);
    }
    assert!(!block_on(a.gates().dream_gate(NOW + 24 * HOUR, &settings)).unwrap().fire, "24 h from the last run, not from the first lock");
    assert!(block_on(a.gates().dream_gate(NOW + 25 * HOUR, &settings)).unwrap().fire);
}

#[test]
fn reset_is_judged_from_the_sessions_own_timestamps() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    say(&store, "s", "a", Role::User, 1, NOW);
    say(&store, "s", "b", Role::Assistant, 1, NOW + HOUR);
    let idle = ResetPolicy { idle_minutes: Some(60), ..ResetPolicy::default() };
    assert!(!block_on(store.gates().reset_gate("s", NOW + 2 * HOUR - 1, &idle)).unwrap().fire);
    assert!(block_on(store.gates().reset_gate("s", NOW + 2 * HOUR, &idle)).unwrap().fire);
    assert_eq!(block_on(store.sessions().load("s")).unwrap().entries.len(), 2, "a reset decision deletes nothing");
}
