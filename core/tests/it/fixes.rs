//! What real clients and a line-by-line review found in wave 1, one test each: every
//! one of these failed before its fix.

use mneme_core::compaction::{Run, Step};
use mneme_core::gates::{ExtractionSettings, FlushSettings};
use mneme_core::{
    Action, CompactionIds, Error, Format, InMemoryStorage, Keep, Limits, Mode, NewEntry, Role, Settings, Storage, Store, block_on,
};
use serde_json::{Value, json};

use crate::hooked::{Call, Hooked};

const NOW: i64 = 1_800_000_000_000;

fn entry(uuid: &str, at: i64, role: Role, text: &str) -> NewEntry {
    NewEntry { uuid: uuid.into(), now_ms: NOW + at, role, text: text.into(), cwd: "/p".into() }
}

fn append(store: &Store<&InMemoryStorage>, id: &str, uuid: &str, at: i64) -> mneme_core::Entry {
    let role = if at % 2 == 0 { Role::User } else { Role::Assistant };
    block_on(store.sessions().append(id, entry(uuid, at, role, &format!("message {uuid} ").repeat(20)))).unwrap()
}

fn ids(n: u32) -> CompactionIds {
    CompactionIds { boundary: format!("boundary-{n}"), summary: format!("summary-{n}") }
}

fn lines(storage: &InMemoryStorage, key: &str) -> Vec<Value> {
    let bytes = block_on(storage.read(key, 0, None)).unwrap();
    String::from_utf8(bytes).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn context_uuids(store: &Store<&InMemoryStorage>, id: &str) -> Vec<String> {
    block_on(store.sessions().context(id)).unwrap().messages.into_iter().map(|m| m.uuid).collect()
}

/// Item 1: after a Mneme compaction Claude Code chains its next prompt to the last
/// kept message; resume must still start at the compaction, and the next plan must
/// carry the summary on.
#[test]
fn claude_code_continuing_after_a_compaction_keeps_it() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for i in 0..18 {
        append(&store, "s", &format!("m{i}"), i);
    }
    let settings = Settings { keep: Keep::RecentMessages(9), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    block_on(store.compaction().apply_compaction("s", &plan, "the summary", &ids(1), NOW + 100)).unwrap();
    // Claude Code's next prompt, as it writes it: under the tail of the preserved segment.
    let claude_line = json!({
        "parentUuid": "m17", "isSidechain": false, "userType": "external", "cwd": "/p", "sessionId": "s", "version": "2.1.330",
        "type": "user", "message": {"role": "user", "content": "next question"}, "uuid": "cc1", "timestamp": "2027-01-15T08:00:00.000Z",
    });
    block_on(storage.append("projects/-p/s.jsonl", format!("{claude_line}\n").as_bytes())).unwrap();
    let cold = Store::new(&storage);
    let context = context_uuids(&cold, "s");
    assert_eq!(context.len(), 1 + 9 + 1, "summary, the 9 kept, the new prompt: {context:?}");
    assert_eq!(context[0], "summary-1");
    assert_eq!(context.last().map(String::as_str), Some("cc1"));
    let next = block_on(cold.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    assert!(next.previous_summary.as_deref().is_some_and(|s| s.contains("the summary")), "{:?}", next.previous_summary);
    // Mneme's own next append continues the same conversation, warm or cold.
    for store in [&store, &cold] {
        store.sessions().reopen("s");
    }
    let appended = append(&store, "s", "after", 200);
    assert_eq!(appended.parent_uuid.as_deref(), Some("cc1"));
}

/// Item 1, the other way round: a session Claude Code compacted itself (boundary and
/// summary, nothing preserved), then compacted again by Mneme.
#[test]
fn a_claude_code_compaction_followed_by_a_mneme_compaction() {
    let storage = InMemoryStorage::new();
    let mut text = String::new();
    let mut parent = Value::Null;
    for i in 0..6 {
        let uuid = format!("old{i}");
        let (kind, message) = if i % 2 == 0 {
            ("user", json!({"role": "user", "content": "old"}))
        } else {
            ("assistant", json!({"role": "assistant", "content": [{"type": "text", "text": "old"}]}))
        };
        text += &format!(
            "{}\n",
            json!({"parentUuid": parent, "type": kind, "message": message, "uuid": uuid, "timestamp": format!("2026-01-01T00:00:0{i}.000Z"), "sessionId": "s", "cwd": "/p"})
        );
        parent = json!(uuid);
    }
    text += &format!(
        "{}\n",
        json!({"parentUuid": null, "logicalParentUuid": "old5", "type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "manual", "preTokens": 5000}, "uuid": "b", "timestamp": "2026-01-01T00:01:00.000Z", "sessionId": "s", "cwd": "/p"})
    );
    text += &format!(
        "{}\n",
        json!({"parentUuid": "b", "type": "user", "isCompactSummary": true, "message": {"role": "user", "content": "Claude's own summary"}, "uuid": "cs", "timestamp": "2026-01-01T00:01:00.000Z", "sessionId": "s", "cwd": "/p"})
    );
    block_on(storage.replace("projects/-p/s.jsonl", text.as_bytes(), None)).unwrap();
    let store = Store::new(&storage);
    for i in 0..8 {
        append(&store, "s", &format!("n{i}"), 1000 + i);
    }
    let settings = Settings { keep: Keep::RecentMessages(2), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    assert_eq!(plan.previous_summary.as_deref(), Some("Claude's own summary"));
    assert_eq!(plan.summarize.len(), 6);
    block_on(store.compaction().apply_compaction("s", &plan, "Mneme's summary", &ids(2), NOW + 2000)).unwrap();
    assert_eq!(context_uuids(&Store::new(&storage), "s"), ["summary-2", "n6", "n7"]);
}

/// Item 2: a long-lived store and a fresh one must chain the next entry to the same
/// place after every kind of write.
#[test]
fn warm_and_cold_stores_chain_alike_after_every_write() {
    let storage = InMemoryStorage::new();
    let warm = Store::new(&storage);
    append(&warm, "s", "a", 0);
    append(&warm, "s", "b", 1);
    block_on(warm.sessions().tombstone("s", "b", NOW + 2)).unwrap();
    let c = append(&warm, "s", "c", 3);
    assert_eq!(c.parent_uuid.as_deref(), Some("a"), "the tombstoned b is not a parent");
    block_on(warm.gates().record_memory_flush("s", NOW + 4)).unwrap();
    block_on(warm.compaction().record_compaction_failure("s", "timeout", NOW + 5)).unwrap();
    for (i, uuid) in ["d", "e", "f", "g", "h", "i"].into_iter().enumerate() {
        append(&warm, "s", uuid, 6 + i as i64);
    }
    let plan =
        block_on(warm.compaction().plan_compaction("s", &Settings { keep: Keep::RecentMessages(2), ..Settings::default() }, Mode::Manual))
            .unwrap();
    block_on(warm.compaction().apply_compaction("s", &plan, "summary", &ids(1), NOW + 20)).unwrap();
    let warm_next = append(&warm, "s", "j", 21);
    let cold_storage = InMemoryStorage::new();
    let text = block_on(storage.read("projects/-p/s.jsonl", 0, None)).unwrap();
    let without_j = &text[..text.len() - warm_next.raw.len() - 1];
    block_on(cold_storage.replace("projects/-p/s.jsonl", without_j, None)).unwrap();
    let cold_next =
        block_on(Store::new(&cold_storage).sessions().append("s", entry("j", 21, Role::User, &"message j ".repeat(20)))).unwrap();
    assert_eq!(warm_next.parent_uuid, cold_next.parent_uuid);
    assert_eq!(warm_next.parent_uuid.as_deref(), Some("i"), "the next entry continues the kept messages");
}

fn pi_session(storage: &InMemoryStorage, messages: usize) {
    let mut text =
        json!({"type": "session", "version": 3, "id": "sess", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}).to_string() + "\n";
    text +=
        &(json!({"type": "session_info", "id": "info0001", "parentId": null, "timestamp": "2026-01-01T00:00:00.000Z", "name": "pi title"})
            .to_string()
            + "\n");
    let mut parent = "info0001".to_string();
    for i in 0..messages {
        let id = format!("{i:08x}");
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let line = json!({"type": "message", "id": id, "parentId": parent, "timestamp": format!("2026-01-01T00:00:{:02}.000Z", i % 60), "message": {"role": role, "content": [{"type": "text", "text": format!("pi message {i} ").repeat(30)}]}});
        text += &(line.to_string() + "\n");
        parent = id;
    }
    block_on(storage.replace("projects/p/pi1.jsonl", text.as_bytes(), None)).unwrap();
}

/// Item 3: pi sessions get pi lines — messages, tombstones and markers as pi entries
/// in pi's tree — and pi's own summary wrapping, byte for byte.
#[test]
fn pi_sessions_are_written_in_pi_dialect() {
    let storage = InMemoryStorage::new();
    pi_session(&storage, 14);
    let store = Store::new(&storage);
    let written =
        block_on(store.sessions().append("pi1", entry("4d5611e5-241a-462a-8d15-5122611a9569", 100, Role::User, "a pi question"))).unwrap();
    assert_eq!(written.uuid.as_deref(), Some("4d5611e5"), "pi ids are 8 characters, a random UUID's start");
    assert_eq!(written.parent_uuid.as_deref(), Some("0000000d"));
    block_on(store.sessions().tombstone("pi1", "0000000d", NOW + 101)).unwrap();
    block_on(store.gates().record_memory_flush("pi1", NOW + 102)).unwrap();
    let all = lines(&storage, "projects/p/pi1.jsonl");
    for line in &all[1..] {
        assert!(line["id"].is_string() && line.get("parentId").is_some() && line.get("uuid").is_none(), "not a pi entry: {line}");
    }
    assert_eq!(all[16]["type"], "message");
    assert_eq!(all[16]["message"]["content"][0]["text"], "a pi question");
    assert_eq!((all[17]["type"].as_str(), all[17]["customType"].as_str()), (Some("custom"), Some("mneme.tombstone")));
    assert_eq!(all[18]["customType"], "mneme.memory-flush");
    let transcript = block_on(Store::new(&storage).sessions().load("pi1")).unwrap();
    assert_eq!(transcript.report.tombstoned, 1);

    let plan = block_on(store.compaction().plan_compaction(
        "pi1",
        &Settings { keep: Keep::RecentMessages(4), ..Settings::default() },
        Mode::Manual,
    ))
    .unwrap();
    let applied = block_on(store.compaction().apply_compaction("pi1", &plan, "pi summary", &ids(1), NOW + 200)).unwrap();
    assert_eq!(applied.format, Format::Pi);
    let after = append(&store, "pi1", "5e6f7a8b-0000", 201);
    assert_eq!(after.parent_uuid.as_deref(), Some(applied.boundary_uuid.as_str()), "the next entry continues after the compaction");
    let context = block_on(Store::new(&storage).sessions().context("pi1")).unwrap();
    assert_eq!(
        context.messages[0].text,
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\npi summary\n</summary>"
    );
    assert_eq!(context.messages.len(), 1 + 4 + 1);
    let listed = block_on(store.sessions().list()).unwrap();
    assert_eq!((listed.sessions[0].message_count, listed.sessions[0].title.as_deref()), (14 + 1 - 1 + 1, Some("pi title")));
}

/// Item 3: crab has no tombstones or markers: a typed refusal, and nothing written.
#[test]
fn crab_sessions_refuse_what_crab_cannot_hold() {
    let storage = InMemoryStorage::new();
    let text = "{\"agent\":\"crab\",\"created_by\":\"user\",\"created_at\":\"2026-01-01T00:00:00Z\",\"title\":\"\",\"uptime_secs\":0}\n{\"role\":\"user\",\"content\":\"hello crab\"}\n";
    block_on(storage.replace("projects/p/crab_user_1.jsonl", text.as_bytes(), None)).unwrap();
    let store = Store::new(&storage);
    let reply = block_on(store.sessions().append("crab_user_1", entry("x", 1, Role::Assistant, "hi"))).unwrap();
    assert_eq!(reply.raw, r#"{"role":"assistant","content":"hi"}"#);
    let before = block_on(storage.read("projects/p/crab_user_1.jsonl", 0, None)).unwrap();
    for refused in
        [block_on(store.gates().record_memory_flush("crab_user_1", NOW)), block_on(store.gates().record_extraction("crab_user_1", NOW))]
    {
        assert!(matches!(refused, Err(Error::Unsupported { .. })), "{refused:?}");
    }
    assert_eq!(block_on(storage.read("projects/p/crab_user_1.jsonl", 0, None)).unwrap(), before);
    let listed = block_on(store.sessions().list()).unwrap();
    assert_eq!((listed.sessions[0].message_count, listed.sessions[0].title.as_deref()), (2, Some("hello crab")));
}

/// Item 4: a session at its cap can be compacted, and then written again.
#[test]
fn a_full_session_compacts_and_continues() {
    let storage = InMemoryStorage::new();
    let store = Store::with_limits(&storage, Limits { part_bytes: 1 << 20, total_bytes: 8_000 });
    let mut i = 0;
    let full = loop {
        match block_on(
            store
                .sessions()
                .append("s", entry(&format!("m{i}"), i, if i % 2 == 0 { Role::User } else { Role::Assistant }, &"x".repeat(300))),
        ) {
            Ok(_) => i += 1,
            Err(e) => break e,
        }
    };
    assert!(matches!(full, Error::SessionFull { .. }), "{full:?}");
    assert!(!full.to_string().contains("mneme "), "the core speaks the API's words, not the CLI's: {full}");
    let plan =
        block_on(store.compaction().plan_compaction("s", &Settings { keep: Keep::RecentMessages(2), ..Settings::default() }, Mode::Manual))
            .unwrap();
    block_on(store.compaction().apply_compaction("s", &plan, "summary of a full session", &ids(1), NOW + 1000)).unwrap();
    let next = block_on(store.sessions().append("s", entry("after", 1001, Role::User, "and on"))).unwrap();
    assert_eq!(next.uuid.as_deref(), Some("after"));
    // A fresh store measures the cap the same way.
    block_on(Store::with_limits(&storage, store.limits()).sessions().append("s", entry("cold", 1002, Role::Assistant, "still fine")))
        .unwrap();
}

/// Item 5: keeping nothing, and token counts at the edge of u64, plan without a panic
/// and without wrapping.
#[test]
fn edge_values_from_callers_and_files_do_not_panic_or_wrap() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for i in 0..6 {
        append(&store, "s", &format!("m{i}"), i);
    }
    for keep in [Keep::RecentMessages(0), Keep::RecentTokens(0), Keep::RecentMessages(u32::MAX), Keep::RecentTokens(u64::MAX)] {
        let settings = Settings { keep, context_window: u64::MAX, summarizer_window: Some(1), ..Settings::default() };
        let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
        if keep == Keep::RecentMessages(0) {
            assert_eq!((plan.action, plan.summarize.len(), plan.keep.len()), (Action::Summarize, 6, 0));
        }
    }
    let huge = json!({"parentUuid": "m5", "type": "assistant", "uuid": "u", "sessionId": "s", "timestamp": "2027-01-15T08:00:00.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}], "usage": {"input_tokens": u64::MAX, "output_tokens": 5}}});
    block_on(storage.append("projects/-p/s.jsonl", format!("{huge}\n").as_bytes())).unwrap();
    let plan = block_on(Store::new(&storage).compaction().plan_compaction("s", &Settings::default(), Mode::Auto)).unwrap();
    assert_eq!(plan.tokens_before, u64::MAX, "saturates instead of wrapping to a small count");
    assert_eq!(plan.trigger, Some(mneme_core::compaction::Due::Threshold), "{}", plan.reason);
    let flush = block_on(Store::new(&storage).gates().memory_flush_gate("s", &FlushSettings::default())).unwrap();
    assert!(flush.fire, "{}", flush.reason);
    // A window with no room before the flush point (0, or 16k with the default
    // reserves) is refused, not a flush point at 0 that fires on every call.
    for window in [0, 16_000, 24_000] {
        let refused = block_on(
            Store::new(&storage).gates().memory_flush_gate("s", &FlushSettings { context_window: window, ..FlushSettings::default() }),
        );
        assert!(matches!(&refused, Err(Error::InvalidArgument(words)) if words.contains("leaves no room")), "{window}: {refused:?}");
    }
    let small = FlushSettings { context_window: 16_000, reserve_floor: 2_000, soft_threshold: 1_000 };
    assert!(block_on(Store::new(&storage).gates().memory_flush_gate("s", &small)).is_ok());
}

/// Item 7: a lone surrogate (a cut emoji as Node writes it) keeps the text, as U+FFFD,
/// and the report counts it.
#[test]
fn lone_surrogates_keep_their_text() {
    let storage = InMemoryStorage::new();
    let text = concat!(
        r#"{"type":"user","uuid":"a","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"cut emoji \ud83d here"}}"#,
        "\n",
        r#"{"type":"assistant","uuid":"b","parentUuid":"a","sessionId":"s","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"pair \ud83d\ude00 and escaped \\ud83d stay"}]}}"#,
        "\n"
    );
    block_on(storage.replace("projects/p/s.jsonl", text.as_bytes(), None)).unwrap();
    let store = Store::new(&storage);
    let context = block_on(store.sessions().context("s")).unwrap();
    assert_eq!(context.messages[0].text, "cut emoji \u{fffd} here");
    assert_eq!(context.messages[1].text, "pair \u{1f600} and escaped \\ud83d stay");
    let transcript = block_on(store.sessions().load("s")).unwrap();
    assert_eq!(transcript.report.lone_surrogates, 1);
    assert_eq!(block_on(store.sessions().list()).unwrap().sessions[0].title.as_deref(), Some("cut emoji \u{fffd} here"));

    // Claude Code would send the lone escape back and the API refuse every request:
    // `check` calls it a problem, and `repair` writes it as the `\ufffd` it is read as,
    // and only it (a pair, and an escaped backslash before `ud83d`, stay).
    let check = |store: &Store<&InMemoryStorage>| block_on(store.sessions().check("s")).unwrap();
    assert!(check(&store).has_problems());
    let report = block_on(store.sessions().repair("s", NOW)).unwrap();
    assert_eq!((report.fixed_surrogates, report.fixed_utf8, report.backups.len()), (1, 0, 1));
    let repaired = String::from_utf8(block_on(storage.read("projects/p/s.jsonl", 0, None)).unwrap()).unwrap();
    assert_eq!(repaired, text.replacen("cut emoji \\ud83d here", "cut emoji \\ufffd here", 1));
    assert_eq!(block_on(storage.read(&report.backups[0], 0, None)).unwrap(), text.as_bytes());
    let store = Store::new(&storage);
    assert!(!check(&store).has_problems());
    assert_eq!(block_on(store.sessions().context("s")).unwrap().messages[0].text, "cut emoji \u{fffd} here");
    assert_eq!(block_on(store.sessions().repair("s", NOW + 1)).unwrap().backups.len(), 0, "nothing left to repair");
}

/// Item 10: a plan is bound to the session it was made on.
#[test]
fn a_plan_is_refused_on_a_session_that_changed() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for i in 0..8 {
        append(&store, "s", &format!("m{i}"), i);
    }
    let plan =
        block_on(store.compaction().plan_compaction("s", &Settings { keep: Keep::RecentMessages(2), ..Settings::default() }, Mode::Manual))
            .unwrap();
    append(&store, "s", "late", 9);
    let refused = block_on(store.compaction().apply_compaction("s", &plan, "summary", &ids(1), NOW + 10));
    assert!(matches!(refused, Err(Error::StalePlan { .. })), "{refused:?}");
}

/// Item 10: the extraction gate and tool pairs stay linear; the dream gate does not
/// read transcripts inside its interval.
#[test]
fn gates_count_many_tool_calls() {
    let storage = InMemoryStorage::new();
    let mut text = String::new();
    let mut parent = Value::Null;
    for i in 0..20_000 {
        let (kind, message) = if i % 2 == 0 {
            (
                "assistant",
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("t{i}"), "name": "Read", "input": {}}]}),
            )
        } else {
            ("user", json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{}", i - 1), "content": "ok"}]}))
        };
        text +=
            &format!("{}\n", json!({"parentUuid": parent, "type": kind, "message": message, "uuid": format!("e{i}"), "sessionId": "s"}));
        parent = json!(format!("e{i}"));
    }
    block_on(storage.replace("projects/p/s.jsonl", text.as_bytes(), None)).unwrap();
    let decision = block_on(Store::new(&storage).gates().extraction_gate("s", &ExtractionSettings::default())).unwrap();
    assert!(decision.fire && decision.reason.contains("10000 tool calls"), "{}", decision.reason);
}

/// Item 13: a 300k-token conversation planned for a 128k summariser is summarised in
/// rolling steps, each request within the summariser's window, each carrying the
/// summary so far.
#[test]
fn the_summarisers_input_is_bounded() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    // 300 messages of ~1000 tokens.
    for i in 0..300 {
        let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
        block_on(store.sessions().append("s", entry(&format!("m{i}"), i, role, &format!("{i:04} ").repeat(800)))).unwrap();
    }
    let settings =
        Settings { context_window: 1_000_000, keep: Keep::RecentTokens(20_000), summarizer_window: Some(128_000), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    assert!(plan.tokens_before >= 300_000, "{}", plan.tokens_before);
    assert!(plan.steps.len() >= 3, "{} steps", plan.steps.len());
    let mut run = Run::new(plan.clone());
    let mut requests = 0;
    let applied = loop {
        match run.next() {
            Step::Summarize { prompt, max_tokens } => {
                requests += 1;
                assert!(mneme_core::tokens::text_tokens(&prompt) + max_tokens <= 128_000, "request {requests} overflows the summariser");
                if requests > 1 {
                    assert!(prompt.contains(&format!("summary after step {}", requests - 1)), "step {requests} carries the summary so far");
                }
                run.handle(Ok(format!("summary after step {requests}")));
            }
            Step::Apply { summary } => {
                break block_on(store.compaction().apply_compaction("s", run.plan(), &summary, &ids(1), NOW + 1000)).unwrap();
            }
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(requests, plan.steps.len() + usize::from(plan.turn_prefix_prompt.is_some()));
    assert!(applied.tokens_after < 30_000);
    let context = block_on(store.sessions().context("s")).unwrap();
    assert!(context.messages[0].text.contains(&format!("summary after step {}", plan.steps.len())));
}

/// A compaction with nothing before the current turn to summarise (the cut falls in
/// the turn a previous compaction kept the start of) summarises the turn's start only:
/// the summary it applies still carries the previous one, which it replaces.
#[test]
fn a_turn_prefix_alone_carries_the_previous_summary_on() {
    let plan = mneme_core::Plan {
        trigger: Some(mneme_core::compaction::Due::Threshold),
        action: mneme_core::Action::Summarize,
        turn_prefix: vec!["p1".into()],
        turn_prefix_prompt: Some("summarise the turn's start".into()),
        previous_summary: Some("what happened before".into()),
        ..mneme_core::Plan::default()
    };
    let mut run = Run::new(plan);
    let Step::Summarize { prompt, .. } = run.next() else { panic!("the turn's start is summarised") };
    assert_eq!(prompt, "summarise the turn's start");
    run.handle(Ok("the turn so far".into()));
    let Step::Apply { summary } = run.next() else { panic!("then applied") };
    assert!(summary.starts_with("what happened before") && summary.ends_with("the turn so far"), "{summary}");
}

/// The driver records an empty answer as a failure, and the breaker counts it.
#[test]
fn the_driver_records_empty_answers_as_failures() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for i in 0..8 {
        append(&store, "s", &format!("m{i}"), i);
    }
    let settings = Settings { context_window: 300, keep: Keep::RecentMessages(2), ..Settings::default() };
    for attempt in 0..3 {
        let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Auto)).unwrap();
        assert!(plan.has_work(), "attempt {attempt}: {:?}", plan.blocked);
        let mut run = Run::new(plan);
        assert!(matches!(run.next(), Step::Summarize { .. }));
        run.handle(Ok("   ".into()));
        let Step::RecordFailure { reason } = run.next() else { panic!("an empty answer is a failure") };
        block_on(store.compaction().record_compaction_failure("s", &reason, NOW + 100 + attempt)).unwrap();
    }
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Auto)).unwrap();
    assert!(plan.blocked.as_deref().is_some_and(|b| b.contains("circuit breaker")), "{plan:?}");
}

/// The contract suite on the reference backend.
#[test]
fn in_memory_storage_keeps_the_contract() {
    let storage = InMemoryStorage::new();
    let failures = block_on(mneme_core::storage::contract::run(&&storage, &&storage));
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Storage on which another program (Claude Code, which takes no lock Mneme sees)
/// writes `extra` to `key` just before Mneme's first cut or rewrite of it.
fn writer_in_between<'a>(inner: &'a InMemoryStorage, key: &'a str, extra: &'a [u8]) -> Hooked<'a, impl Fn(Call, &str) + 'a> {
    let done = std::cell::Cell::new(false);
    let hook = move |call: Call, called: &str| {
        if matches!(call, Call::Replace { checked: true } | Call::Truncate) && called == key && !done.replace(true) {
            block_on(inner.append(key, extra)).unwrap();
        }
    };
    Hooked { inner, hook }
}

/// Item 8: a "torn" last line that another program is still writing is never cut
/// off: the cut is refused when the part grew since it was read, and the next
/// append finds the finished line and chains under it.
#[test]
fn a_torn_tail_move_never_cuts_a_line_finished_meanwhile() {
    let storage = InMemoryStorage::new();
    let key = "projects/-p/s.jsonl";
    append(&Store::new(&storage), "s", "a", 0);
    let half = br#"{"type":"user","parentUuid":"a","uuid":"b","sessionId":"s","message":{"role":"user","#;
    block_on(storage.append(key, half)).unwrap();
    let rest: &'static [u8] = br#""content":"finished by its writer"},"timestamp":"2027-01-15T08:00:00.000Z"}
"#;
    let racing = writer_in_between(&storage, key, rest);
    let store = Store::new(&racing);
    let refused = block_on(store.sessions().append("s", entry("c", 2, Role::User, "mine")));
    assert!(matches!(refused, Err(Error::Storage(mneme_core::StorageError::Changed { .. }))), "{refused:?}");
    let uuids: Vec<Value> = lines(&storage, key).iter().map(|l| l["uuid"].clone()).collect();
    assert_eq!(uuids, [json!("a"), json!("b")], "the finished line is whole, nothing of Mneme's was written");
    assert!(block_on(storage.list(&format!("{key}.torn"))).unwrap().is_empty(), "no copy of a line that was not torn");
    let written = block_on(store.sessions().append("s", entry("c", 2, Role::User, "mine"))).unwrap();
    assert_eq!(written.parent_uuid.as_deref(), Some("b"));
}

/// Item 8: repair rewrites a part only as it read it.
#[test]
fn repair_never_drops_a_line_appended_meanwhile() {
    let storage = InMemoryStorage::new();
    let key = "projects/-p/s.jsonl";
    append(&Store::new(&storage), "s", "a", 0);
    block_on(storage.append(key, b"not json\n")).unwrap();
    let late: &'static [u8] = br#"{"type":"user","parentUuid":"a","uuid":"late","sessionId":"s","message":{"role":"user","content":"late"}}
"#;
    let racing = writer_in_between(&storage, key, late);
    let refused = block_on(Store::new(&racing).sessions().repair("s", NOW));
    assert!(matches!(refused, Err(Error::Storage(mneme_core::StorageError::Changed { .. }))), "{refused:?}");
    let text = String::from_utf8(block_on(storage.read(key, 0, None)).unwrap()).unwrap();
    assert!(text.contains("not json") && text.contains("\"late\""), "the part is untouched: {text}");
}

/// Item 9: a session file the storage will not serve is listed apart, and the rest
/// of the store is listed as usual.
#[test]
fn list_reports_the_files_it_skips() {
    struct RefusesOne(InMemoryStorage);
    impl Storage for RefusesOne {
        async fn list(&self, prefix: &str) -> Result<Vec<mneme_core::KeyInfo>, mneme_core::StorageError> {
            self.0.list(prefix).await
        }
        async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, mneme_core::StorageError> {
            if key.contains("aux") {
                return Err(mneme_core::StorageError::InvalidKey { key: key.into(), reason: "a device name on this host".into() });
            }
            self.0.read(key, offset, len).await
        }
        async fn append(&self, key: &str, data: &[u8]) -> Result<u64, mneme_core::StorageError> {
            self.0.append(key, data).await
        }
        async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), mneme_core::StorageError> {
            self.0.replace(key, data, expected_size).await
        }
        async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), mneme_core::StorageError> {
            self.0.truncate(key, len, expected_size).await
        }
        async fn remove(&self, key: &str) -> Result<(), mneme_core::StorageError> {
            self.0.remove(key).await
        }
        async fn rename(&self, from: &str, to: &str) -> Result<(), mneme_core::StorageError> {
            self.0.rename(from, to).await
        }
        async fn lock(&self, name: &str) -> Result<(), mneme_core::StorageError> {
            self.0.lock(name).await
        }
        async fn unlock(&self, name: &str) -> Result<(), mneme_core::StorageError> {
            self.0.unlock(name).await
        }
    }
    let store = Store::new(RefusesOne(InMemoryStorage::new()));
    block_on(store.sessions().append("ok", entry("a", 0, Role::User, "hello"))).unwrap();
    block_on(store.storage().0.append("projects/-p/aux.jsonl", b"{}\n")).unwrap();
    let listing = block_on(store.sessions().list()).unwrap();
    assert_eq!(listing.sessions.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["ok"]);
    assert_eq!(listing.skipped.len(), 1);
    assert_eq!(listing.skipped[0].key, "projects/-p/aux.jsonl");
    assert!(listing.skipped[0].reason.contains("device"), "{:?}", listing.skipped);
}

/// Claude Code 2.1.330, resuming a session whose background shell tasks never
/// finished, writes a note of them as a user entry marked `queueTranscriptOnly`, and
/// chains the next prompt under it; it does not send the note then, nor on the next
/// resume (seen in `clients/run.mjs`, on the corpus's 2.0.x sessions). The note stays
/// in the transcript, out of the context.
#[test]
fn a_note_claude_code_keeps_for_the_transcript_is_not_sent() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    append(&store, "s", "m0", 0);
    append(&store, "s", "m1", 1);
    let note = json!({
        "parentUuid": "m1", "isSidechain": false, "type": "user", "uuid": "note", "timestamp": "2027-01-15T08:00:00.000Z",
        "message": {"role": "user", "content": "<task-notification>\n<task-id>dce0af</task-id>\n<status>stopped</status>\n</task-notification>"},
        "origin": {"kind": "task-notification"}, "promptSource": "system", "queueSkipAttachments": true, "queueTranscriptOnly": true,
        "cwd": "/p", "sessionId": "s", "version": "2.1.330",
    });
    let prompt = json!({
        "parentUuid": "note", "isSidechain": false, "type": "user", "uuid": "prompt", "timestamp": "2027-01-15T08:00:01.000Z",
        "message": {"role": "user", "content": "next question"}, "cwd": "/p", "sessionId": "s", "version": "2.1.330",
    });
    block_on(storage.append("projects/-p/s.jsonl", format!("{note}\n{prompt}\n").as_bytes())).unwrap();
    let cold = Store::new(&storage);
    assert_eq!(context_uuids(&cold, "s"), ["m0", "m1", "prompt"]);
    let transcript = block_on(cold.sessions().load("s")).unwrap();
    assert!(transcript.entries.iter().any(|e| e.uuid.as_deref() == Some("note")), "the note stays in the transcript");
}

/// A session is titled by the first prompt a person typed, also when context the client
/// added comes before it in the same message (Claude Code's IDE selection, the
/// environment a Codex rollout opens with); context alone titles it only when nothing
/// else does.
#[test]
fn the_title_is_the_typed_prompt_after_context_blocks_in_its_message() {
    let title_of = |first_message: Value| {
        let storage = InMemoryStorage::new();
        let lines = [
            json!({"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p",
                   "message": first_message}),
            json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "timestamp": "2026-01-01T00:00:01.000Z", "cwd": "/p",
                   "message": {"role": "assistant", "content": [{"type": "text", "text": "on it"}]}}),
        ];
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        block_on(storage.append("projects/-p/s.jsonl", text.as_bytes())).unwrap();
        block_on(Store::new(&storage).sessions().list()).unwrap().sessions[0].title.clone()
    };
    let context = json!({"type": "text", "text": "<ide_selection>fn main() {}</ide_selection>"});
    let typed = json!({"type": "text", "text": "fix the login bug"});
    assert_eq!(title_of(json!({"role": "user", "content": [context, typed]})).as_deref(), Some("fix the login bug"));
    assert_eq!(
        title_of(json!({"role": "user", "content": [context]})).as_deref(),
        Some("<ide_selection>fn main() {}</ide_selection>"),
        "context alone, when nothing else was typed"
    );
    assert_eq!(title_of(json!({"role": "user", "content": "plain prompt"})).as_deref(), Some("plain prompt"));
}

/// A message of nothing but white space is refused as an empty one is: written, it
/// was left out of the provider context, which could then send no message at all.
#[test]
fn a_message_of_white_space_is_refused_and_nothing_is_written() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let refused = block_on(store.sessions().append("s", entry("u1", NOW, Role::User, "  \n\t ")));
    assert!(matches!(&refused, Err(Error::InvalidArgument(reason)) if reason.contains("only white space")), "{refused:?}");
    let turn = mneme_core::Turn {
        uuid: "u2".into(),
        now_ms: NOW,
        cwd: "/p".into(),
        provider: mneme_core::Provider::Anthropic,
        messages: json!({"role": "user", "content": "   "}).to_string(),
        parent: None,
        agent: None,
    };
    let refused = block_on(store.sessions().append_turn("s", turn.clone()));
    assert!(matches!(&refused, Err(Error::InvalidMessage { reason, .. }) if reason.contains("only white space")), "{refused:?}");
    // In OpenAI's shape too (it was written, and left out of both contexts).
    let openai = mneme_core::Turn { provider: mneme_core::Provider::Openai, ..turn };
    let refused = block_on(store.sessions().append_turn("s", openai));
    assert!(matches!(&refused, Err(Error::InvalidMessage { reason, .. }) if reason.contains("only white space")), "{refused:?}");
    assert!(block_on(storage.list("")).unwrap().is_empty(), "nothing was written");
}

/// A pi session of format v1 has no entry ids: an append chained to nothing and the
/// session resumed to that one message, hiding the rest. Refused, as compaction and
/// fork refuse it, and nothing is written.
#[test]
fn a_write_to_a_pi_v1_session_is_refused_and_writes_nothing() {
    let storage = InMemoryStorage::new();
    let key = "projects/pi/before-compaction.jsonl";
    let original = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus/pi/v1/before-compaction.jsonl")).unwrap();
    block_on(storage.replace(key, &original, None)).unwrap();
    let store = Store::new(&storage);
    let before = block_on(store.sessions().context("before-compaction")).unwrap().messages.len();
    let refused = block_on(store.sessions().append("before-compaction", entry("n1", 0, Role::User, "hi")));
    match refused {
        Err(Error::Unsupported { format: Format::Pi, operation }) => assert!(operation.contains("format v1"), "{operation}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(block_on(storage.read(key, 0, None)).unwrap(), original);
    assert_eq!(block_on(Store::new(&storage).sessions().context("before-compaction")).unwrap().messages.len(), before);
    // A fork too, from the resume point or from a line by its `@part:line` name.
    for from in [None, Some("@1:5")] {
        match block_on(store.sessions().fork("before-compaction", from, "copy", 0)) {
            Err(Error::Unsupported { format: Format::Pi, operation }) => assert!(operation.contains("format v1"), "{from:?}: {operation}"),
            other => panic!("{from:?}: {other:?}"),
        }
    }
    assert_eq!(block_on(storage.list("")).unwrap().len(), 1, "no fork was written");
}

/// A fork from an entry that is no message (Claude Code's `progress`) made a session
/// that resumed to nothing; a rewind to one chained a message to it. Both refused,
/// saying what to give instead.
#[test]
fn a_fork_or_rewind_from_an_entry_that_is_no_message_is_refused() {
    let storage = InMemoryStorage::new();
    let original = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/corpus/claude/01-v2.1.39-autocompact/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
    ))
    .unwrap();
    block_on(storage.replace("projects/p/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", &original, None)).unwrap();
    let store = Store::new(&storage);
    let id = "4d5611e5-241a-462a-8d15-5122611a9569";
    let progress = "f2662c95-9973-4599-8e81-cbe3eb734169";
    let refused = block_on(store.sessions().fork(id, Some(progress), "forked", NOW));
    assert!(matches!(&refused, Err(Error::InvalidArgument(reason)) if reason.contains("is a `progress` entry")), "{refused:?}");
    let rewind = mneme_core::Turn {
        uuid: "r1".into(),
        now_ms: NOW,
        cwd: "/p".into(),
        provider: mneme_core::Provider::Anthropic,
        messages: json!({"role": "user", "content": "again"}).to_string(),
        parent: Some(progress.into()),
        agent: None,
    };
    let refused = block_on(store.sessions().append_turn(id, rewind));
    assert!(matches!(&refused, Err(Error::InvalidArgument(reason)) if reason.contains("not a message")), "{refused:?}");
    assert_eq!(block_on(storage.list("")).unwrap().len(), 1, "nothing was written");
}

/// An agent loop that does not say where it works (the Node and Python packages wrote
/// `/` then) still works where the session did: a line written without a folder names
/// the session's, in a store that wrote it and in one that only read it; a new session
/// still needs one.
#[test]
fn a_line_written_without_a_folder_names_the_sessions() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let cwd_of = |entry: &mneme_core::Entry| serde_json::from_str::<Value>(&entry.raw).unwrap()["cwd"].clone();
    let new = block_on(store.sessions().append("s", NewEntry { cwd: String::new(), ..entry("u0", 0, Role::User, "hi") }));
    assert!(matches!(&new, Err(Error::InvalidArgument(m)) if m.contains("needs the working directory")), "{new:?}");
    block_on(store.sessions().append("s", NewEntry { cwd: "/work/app".into(), ..entry("u1", 1, Role::User, "hi") })).unwrap();
    let inherited =
        block_on(store.sessions().append("s", NewEntry { cwd: String::new(), ..entry("u2", 2, Role::Assistant, "hello") })).unwrap();
    assert_eq!(cwd_of(&inherited), "/work/app");
    let turn = mneme_core::Turn {
        uuid: "u3".into(),
        now_ms: NOW + 3,
        cwd: String::new(),
        provider: mneme_core::Provider::Anthropic,
        messages: json!([{ "role": "user", "content": "and now?" }]).to_string(),
        parent: None,
        agent: None,
    };
    assert_eq!(cwd_of(&block_on(store.sessions().append_turn("s", turn)).unwrap()[0]), "/work/app");
    // A folder given moves the session there, for the lines after it too.
    block_on(store.sessions().append("s", NewEntry { cwd: "/work/app/sub".into(), ..entry("u4", 4, Role::User, "cd sub") })).unwrap();
    let fresh = Store::new(&storage);
    let read = block_on(fresh.sessions().append("s", NewEntry { cwd: String::new(), ..entry("u5", 5, Role::Assistant, "ok") })).unwrap();
    assert_eq!(cwd_of(&read), "/work/app/sub");
    // A sub-agent works where its session does, from its first line, in a store that
    // has not written the session too.
    let call = json!([{ "role": "assistant", "content": [{ "type": "tool_use", "id": "task", "name": "Task", "input": {} }] }]);
    let turn = |uuid: &str, messages: Value, agent: Option<mneme_core::AgentRef>| mneme_core::Turn {
        uuid: uuid.into(),
        now_ms: NOW + 6,
        cwd: String::new(),
        provider: mneme_core::Provider::Anthropic,
        messages: messages.to_string(),
        parent: None,
        agent,
    };
    block_on(fresh.sessions().append_turn("s", turn("u6", call, None))).unwrap();
    let sub = || Some(mneme_core::AgentRef { id: "sub".into(), parent_call: Some("task".into()) });
    let first = block_on(Store::new(&storage).sessions().append_turn("s", turn("a1", json!({ "role": "user", "content": "look" }), sub())))
        .unwrap();
    assert_eq!(cwd_of(&first[0]), "/work/app/sub");
    let later =
        block_on(Store::new(&storage).sessions().append_turn("s", turn("a2", json!({ "role": "assistant", "content": "seen" }), sub())))
            .unwrap();
    assert_eq!(cwd_of(&later[0]), "/work/app/sub");
}
