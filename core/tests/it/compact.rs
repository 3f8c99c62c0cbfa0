//! Compaction: the plan's invariants on real and generated transcripts, the
//! triggers' boundaries, the circuit breaker, the loop guard, and crash safety.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use mneme_core::compaction::Due;
use mneme_core::storage::faulty::Faulty;
use mneme_core::{
    Action, CompactionIds, Error, Format, InMemoryStorage, Keep, Mode, NewEntry, Plan, Role, Settings, Storage, Store, Trigger, block_on,
};
use proptest::prelude::*;

use serde_json::{Value, json};

const NOW: i64 = 1_800_000_000_000;
/// The most a summary's wrapping adds (Claude Code's sentence before it).
const WRAPPING_TOKENS: u64 = 40;

fn ids(n: u32) -> CompactionIds {
    CompactionIds { boundary: format!("boundary-{n}"), summary: format!("summary-{n}") }
}

/// Tool call ids used and answered by each entry, from the raw transcript.
fn tool_ids(text: &str) -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    let mut found = BTreeMap::new();
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else { continue };
        let (Some(uuid), Some(blocks)) = (entry["uuid"].as_str(), entry["message"]["content"].as_array()) else { continue };
        let mut uses = Vec::new();
        let mut results = Vec::new();
        for block in blocks {
            match block["type"].as_str() {
                Some("tool_use") => uses.extend(block["id"].as_str().map(str::to_owned)),
                Some("tool_result") => results.extend(block["tool_use_id"].as_str().map(str::to_owned)),
                _ => {}
            }
        }
        found.insert(uuid.to_owned(), (uses, results));
    }
    found
}

/// The plan keeps every tool call and its result on the same side of the cut.
fn assert_pairs_intact(plan: &Plan, text: &str, name: &str) {
    let tools = tool_ids(text);
    let side = |ids: &[String]| -> (BTreeSet<String>, BTreeSet<String>) {
        let mut uses = BTreeSet::new();
        let mut results = BTreeSet::new();
        for id in ids {
            if let Some((u, r)) = tools.get(id) {
                uses.extend(u.iter().cloned());
                results.extend(r.iter().cloned());
            }
        }
        (uses, results)
    };
    let before: Vec<String> = plan.summarize.iter().chain(&plan.turn_prefix).cloned().collect();
    let (old_uses, old_results) = side(&before);
    let (kept_uses, kept_results) = side(&plan.keep);
    for id in &kept_results {
        assert!(!old_uses.contains(id), "{name}: tool_use {id} is summarised but its result is kept");
    }
    for id in &kept_uses {
        assert!(!old_results.contains(id), "{name}: tool_result {id} is summarised but its call is kept");
    }
    assert!(old_results.is_disjoint(&kept_uses) && kept_results.is_disjoint(&old_uses));
}

/// Plans a manual compaction keeping `keep` tokens, checks the invariants, applies it
/// with the offline summary, and checks the context that loads afterwards. Returns
/// whether the "under the target" check applied (the kept part plus the summary fit).
fn compact_and_check(text: &str, keep: u64, name: &str) -> bool {
    let storage = InMemoryStorage::new();
    block_on(storage.replace("projects/p/s.jsonl", text.as_bytes(), None)).unwrap();
    let store = Store::new(&storage);
    let probe = block_on(store.compaction().plan_compaction("s", &Settings::default(), Mode::Manual)).unwrap();
    // A window the session overflows, so the target is meaningful.
    let settings = Settings { context_window: probe.tokens_before.max(1), keep: Keep::RecentTokens(keep), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    assert_pairs_intact(&plan, text, name);
    // What is kept fits in half of the trigger's limit.
    let keep = keep.min(plan.limit / 2).max(1);
    if plan.summarize.is_empty() && plan.turn_prefix.is_empty() {
        assert!(plan.keep_tokens < keep || plan.keep.is_empty() || plan.reason.contains("nothing to summarise"), "{name}: {}", plan.reason);
        return false;
    }
    assert!(plan.keep_tokens >= keep, "{name}: keeps {} tokens, budget {keep}", plan.keep_tokens);
    let context_before = block_on(store.sessions().context("s")).unwrap();
    let summary = block_on(store.compaction().summarize_offline("s", &plan)).unwrap();
    assert!(!summary.trim().is_empty());
    assert!(mneme_core::tokens::text_tokens(&summary) <= plan.summary_budget_tokens, "{name}: the offline summary respects its budget");
    let applied = block_on(store.compaction().apply_compaction("s", &plan, &summary, &ids(1), NOW)).unwrap();

    let reopened = Store::new(&storage);
    let context = block_on(reopened.sessions().context("s")).unwrap();
    assert!(context.compacted, "{name}");
    assert!(context.messages[0].is_compact_summary && context.messages[0].text.contains(&summary), "{name}");
    let kept: BTreeSet<&str> = plan.keep.iter().map(String::as_str).collect();
    for message in &context.messages[1..] {
        assert!(kept.contains(message.uuid.as_str()), "{name}: {} is in the context but not kept", message.uuid);
    }
    let before_kept: Vec<&str> = context_before.messages.iter().map(|m| m.uuid.as_str()).filter(|u| kept.contains(u)).collect();
    let after: Vec<&str> = context.messages[1..].iter().map(|m| m.uuid.as_str()).collect();
    assert_eq!(before_kept, after, "{name}: the kept messages come back in order");
    // Nothing was deleted: the whole history still loads.
    let transcript = block_on(reopened.sessions().load("s")).unwrap();
    for uuid in plan.summarize.iter().chain(&plan.keep) {
        assert!(transcript.entries.iter().any(|e| e.uuid.as_deref() == Some(uuid.as_str())), "{name}: {uuid} was lost");
    }
    let after_plan = block_on(reopened.compaction().plan_compaction("s", &settings, Mode::Auto)).unwrap();
    assert!(
        after_plan.tokens_before <= applied.tokens_after + 64,
        "{name}: {} after, {} expected",
        after_plan.tokens_before,
        applied.tokens_after
    );
    // The summary's wrapping ("This session is being continued…") is outside its budget.
    let fits = plan.keep_tokens + plan.summary_budget_tokens + WRAPPING_TOKENS < after_plan.limit;
    if fits {
        assert!(
            after_plan.tokens_before < after_plan.limit,
            "{name}: {} tokens after compaction, target {}",
            after_plan.tokens_before,
            after_plan.limit
        );
    }
    fits
}

fn corpus_transcripts() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus"), &mut found);
    found.sort();
    found
}

#[test]
fn plans_on_every_corpus_transcript_keep_pairs_budgets_and_targets() {
    let mut applied = 0;
    let mut under_target = 0;
    for path in corpus_transcripts() {
        let text = String::from_utf8_lossy(&fs::read(&path).unwrap()).into_owned();
        for keep in [500, 5_000, 20_000] {
            let name = format!("{} keep {keep}", path.display());
            let storage = InMemoryStorage::new();
            block_on(storage.replace("projects/p/s.jsonl", text.as_bytes(), None)).unwrap();
            let plan = block_on(Store::new(&storage).compaction().plan_compaction(
                "s",
                &Settings { keep: Keep::RecentTokens(keep), ..Settings::default() },
                Mode::Manual,
            ))
            .unwrap();
            if plan.summarize.is_empty() && plan.turn_prefix.is_empty() {
                continue;
            }
            applied += 1;
            under_target += u32::from(compact_and_check(&text, keep, &name));
        }
    }
    assert!(applied >= 30, "only {applied} corpus compactions ran");
    assert!(under_target >= 20, "the target check applied only {under_target} times");
}

/// A generated Claude Code conversation: turns of a prompt and API rounds, each round
/// an assistant reply split across lines (shared `message.id`) with tool calls, then
/// one user line of tool results.
fn conversation() -> impl Strategy<Value = String> {
    let round = (0usize..3, 1usize..400, any::<bool>());
    let turn = (1usize..400, proptest::collection::vec(round, 1..4));
    proptest::collection::vec(turn, 1..12).prop_map(|turns| {
        let mut lines = Vec::new();
        let mut parent: Option<String> = None;
        let mut n = 0;
        let mut push = |entry: Value, parent: &mut Option<String>, n: &mut usize| {
            *n += 1;
            let uuid = format!("u{n}");
            let mut entry = entry;
            entry["uuid"] = json!(uuid);
            entry["parentUuid"] = json!(parent);
            entry["sessionId"] = json!("s");
            entry["timestamp"] = json!(format!("2026-01-01T00:{:02}:{:02}.000Z", *n / 60 % 60, *n % 60));
            lines.push(entry.to_string());
            *parent = Some(uuid);
        };
        for (t, (prompt_len, rounds)) in turns.into_iter().enumerate() {
            push(json!({"type": "user", "message": {"role": "user", "content": "p".repeat(prompt_len * 4)}}), &mut parent, &mut n);
            for (r, (tools, text_len, split)) in rounds.into_iter().enumerate() {
                let message_id = format!("msg-{t}-{r}");
                let mut blocks = vec![json!({"type": "text", "text": "a".repeat(text_len * 4)})];
                let calls: Vec<String> = (0..tools).map(|k| format!("toolu-{t}-{r}-{k}")).collect();
                blocks.extend(calls.iter().map(|id| json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "ls"}})));
                if split {
                    for block in blocks {
                        push(
                            json!({"type": "assistant", "message": {"id": message_id, "role": "assistant", "content": [block]}}),
                            &mut parent,
                            &mut n,
                        );
                    }
                } else {
                    push(
                        json!({"type": "assistant", "message": {"id": message_id, "role": "assistant", "content": blocks}}),
                        &mut parent,
                        &mut n,
                    );
                }
                if !calls.is_empty() {
                    let results: Vec<Value> = calls
                        .iter()
                        .map(|id| json!({"type": "tool_result", "tool_use_id": id, "content": "r".repeat(text_len * 4)}))
                        .collect();
                    push(json!({"type": "user", "message": {"role": "user", "content": results}}), &mut parent, &mut n);
                }
            }
        }
        lines.join("\n") + "\n"
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn generated_conversations_keep_the_invariants(text in conversation(), keep in 0u64..3000) {
        compact_and_check(&text, keep, "generated");
    }

    #[test]
    fn keeping_messages_keeps_at_least_that_many(text in conversation(), count in 0u32..20) {
        let storage = InMemoryStorage::new();
        block_on(storage.replace("projects/p/s.jsonl", text.as_bytes(), None)).unwrap();
        let settings = Settings { keep: Keep::RecentMessages(count), ..Settings::default() };
        let plan = block_on(Store::new(&storage).compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
        assert_pairs_intact(&plan, &text, "generated");
        if !plan.summarize.is_empty() || !plan.turn_prefix.is_empty() {
            prop_assert!(plan.keep.len() >= count as usize);
        }
    }
}

fn session_of_tokens(store: &Store<&InMemoryStorage>, tokens_each: usize, messages: u32) {
    for i in 0..messages {
        let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
        let entry =
            NewEntry { uuid: format!("m{i}"), now_ms: NOW + i64::from(i), role, text: "x".repeat(tokens_each * 4), cwd: "/p".into() };
        block_on(store.sessions().append("s", entry)).unwrap();
    }
}

#[test]
fn triggers_fire_exactly_at_their_limits() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    session_of_tokens(&store, 100, 10);
    let tokens = block_on(store.compaction().plan_compaction("s", &Settings::default(), Mode::Manual)).unwrap().tokens_before;
    assert_eq!(tokens, 1000);
    let fraction =
        |window| Settings { context_window: window, trigger: Trigger::Fraction(0.5), keep: Keep::RecentMessages(2), ..Settings::default() };
    assert_eq!(
        block_on(store.compaction().plan_compaction("s", &fraction(2000), Mode::Auto)).unwrap().trigger,
        Some(Due::Threshold),
        "at the limit"
    );
    assert_eq!(block_on(store.compaction().plan_compaction("s", &fraction(2002), Mode::Auto)).unwrap().trigger, None, "one below");
    let reserve = |window| Settings {
        context_window: window,
        trigger: Trigger::Reserve { reserve_tokens: 300, floor: 500 },
        keep: Keep::RecentMessages(2),
        ..Settings::default()
    };
    assert_eq!(
        block_on(store.compaction().plan_compaction("s", &reserve(1500), Mode::Auto)).unwrap().trigger,
        None,
        "exactly the reserve left"
    );
    assert_eq!(block_on(store.compaction().plan_compaction("s", &reserve(1499), Mode::Auto)).unwrap().trigger, Some(Due::Threshold));
    let overflow = block_on(store.compaction().plan_compaction("s", &fraction(1_000_000), Mode::Overflow)).unwrap();
    assert_eq!(overflow.trigger, Some(Due::Overflow));
    assert!(overflow.has_work());
}

/// The 20,000 recent tokens kept by default do not fit a small window: what is kept is
/// at most half of the trigger's limit, so a compaction brings the context under it
/// (it stayed over, and the loop guard then refused every later compaction).
#[test]
fn what_is_kept_fits_a_small_window() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    session_of_tokens(&store, 300, 60);
    let small = Settings { context_window: 8000, ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &small, Mode::Auto)).unwrap();
    assert_eq!((plan.trigger, plan.action), (Some(Due::Threshold), Action::Summarize));
    assert!(plan.keep_tokens <= plan.limit / 2 + 300, "{} kept of a limit of {}", plan.keep_tokens, plan.limit);
    let applied = block_on(store.compaction().apply_compaction("s", &plan, "what was said", &ids(1), NOW + 100)).unwrap();
    assert!(applied.tokens_after < plan.limit, "{} tokens after, limit {}", applied.tokens_after, plan.limit);
    assert!(block_on(store.compaction().plan_compaction("s", &small, Mode::Auto)).unwrap().trigger.is_none(), "under the trigger now");
}

/// A window of no tokens, or a fraction at or below 0, above 1 or NaN, would compact
/// every turn (or never): refused, with what to give instead.
#[test]
fn settings_that_would_plan_nonsense_are_refused() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    session_of_tokens(&store, 100, 4);
    let refusal = |settings: Settings| match block_on(store.compaction().plan_compaction("s", &settings, Mode::Auto)) {
        Err(Error::InvalidArgument(reason)) => reason,
        other => panic!("{settings:?}: {other:?}"),
    };
    for fraction in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY] {
        let reason = refusal(Settings { trigger: Trigger::Fraction(fraction), ..Settings::default() });
        assert!(reason.contains("above 0 and at most 1"), "{fraction}: {reason}");
    }
    for settings in [Settings { context_window: 0, ..Settings::default() }, Settings { summarizer_window: Some(0), ..Settings::default() }]
    {
        assert!(refusal(settings).contains("window of 0 tokens"));
    }
    let whole = Settings { trigger: Trigger::Fraction(1.0), ..Settings::default() };
    assert_eq!(
        block_on(store.compaction().plan_compaction("s", &whole, Mode::Auto)).unwrap().trigger,
        None,
        "the whole window is a fraction"
    );
}

/// After a compaction, a reply's usage measured the summary and the kept messages
/// too: the count is that usage plus estimates after it, not the summary and the kept
/// messages again. And the results a reply's calls got while it streamed (between its
/// lines, after the request its usage reports on) are counted.
#[test]
fn a_reply_after_a_compaction_is_counted_once_with_the_results_between_its_lines() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    session_of_tokens(&store, 100, 10);
    let settings = Settings { context_window: 100_000, keep: Keep::RecentMessages(4), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    block_on(store.compaction().apply_compaction("s", &plan, &"summary ".repeat(200), &ids(1), NOW)).unwrap();
    let tokens = || block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap().tokens_before;
    use crate::turns::turn;
    let reply = json!([
        { "role": "user", "content": "look" },
        { "role": "assistant", "id": "msg_r", "usage": { "input_tokens": 1000, "output_tokens": 50 }, "content": "seen" },
    ]);
    block_on(store.sessions().append_turn("s", turn("r", reply))).unwrap();
    assert_eq!(tokens(), 1050, "the reply's usage is the whole context it saw and wrote");
    // Written as Claude Code 2.1 writes a reply whose tools ran while it streamed: each
    // result after its call's line, so the first sits between the reply's two lines.
    let calls = json!([
        { "role": "user", "content": "read both" },
        { "role": "assistant", "id": "msg_c", "usage": { "input_tokens": 3000, "output_tokens": 60 }, "content": [
            { "type": "tool_use", "id": "t1", "name": "Read", "input": {} },
            { "type": "tool_use", "id": "t2", "name": "Read", "input": {} },
        ] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "t1", "content": "a".repeat(4000) },
            { "type": "tool_result", "tool_use_id": "t2", "content": "b".repeat(4000) },
        ] },
    ]);
    block_on(store.sessions().append_turn("s", turn("c", calls))).unwrap();
    let with_results = tokens();
    assert!((3060 + 2000..3060 + 2000 + 40).contains(&with_results), "{with_results}");
}

#[test]
fn the_circuit_breaker_stops_auto_compaction_after_three_failures() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    session_of_tokens(&store, 100, 10);
    let settings = Settings { context_window: 1000, keep: Keep::RecentMessages(2), ..Settings::default() };
    for failure in 0..3 {
        let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Auto)).unwrap();
        assert!(plan.has_work(), "after {failure} failures");
        assert!(matches!(block_on(store.compaction().apply_compaction("s", &plan, "  ", &ids(9), NOW)), Err(Error::EmptySummary { .. })));
        block_on(store.compaction().record_compaction_failure("s", "the model returned nothing", NOW)).unwrap();
    }
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Auto)).unwrap();
    assert!(plan.blocked.as_deref().is_some_and(|b| b.contains("circuit breaker")), "{plan:?}");
    assert!(matches!(
        block_on(store.compaction().apply_compaction("s", &plan, "summary", &ids(9), NOW)),
        Err(Error::NothingToCompact { .. })
    ));
    // A manual compaction still runs, and success resets the breaker.
    let manual = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    block_on(store.compaction().apply_compaction("s", &manual, "what happened", &ids(1), NOW)).unwrap();
    for i in 0..2 {
        block_on(
            store
                .sessions()
                .append("s", NewEntry { uuid: format!("late{i}"), now_ms: NOW, role: Role::User, text: "more".into(), cwd: "/p".into() }),
        )
        .unwrap();
    }
    let after = block_on(store.compaction().plan_compaction("s", &settings, Mode::Overflow)).unwrap();
    assert_eq!(after.blocked, None, "a successful compaction resets the breaker");
}

/// A host with no model to ask compacts through the driver with the offline summary
/// (`mneme_core::compact_offline`): the summary is the session's own, and resume starts
/// from it.
#[test]
fn a_compaction_with_the_offline_summary_goes_through_the_driver() {
    let storage = InMemoryStorage::new();
    let mut store = Store::new(&storage);
    session_of_tokens(&store, 100, 10);
    let settings = Settings { context_window: 1000, keep: Keep::RecentMessages(2), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Auto)).unwrap();
    let offline = block_on(store.compaction().summarize_offline("s", &plan)).unwrap();
    let applied = mneme_core::compact_offline::<Error>(&mut store, "s", &plan, &ids(1), NOW).unwrap().expect("applied");
    assert_eq!(applied.boundary_uuid, "boundary-1");
    let context = block_on(store.sessions().context("s")).unwrap();
    assert!(context.compacted && context.messages[0].is_compact_summary, "{:?}", context.messages[0]);
    assert!(context.messages[0].text.contains(offline.trim()), "{}", context.messages[0].text);
    assert_eq!(context.messages.len(), 3, "the summary and the two kept messages");
}

#[test]
fn the_loop_guard_refuses_to_compact_what_was_just_compacted() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    session_of_tokens(&store, 100, 10);
    let settings = Settings { context_window: 1000, keep: Keep::RecentMessages(9), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Auto)).unwrap();
    block_on(store.compaction().apply_compaction("s", &plan, &"s".repeat(400), &ids(1), NOW)).unwrap();
    let again = block_on(store.compaction().plan_compaction("s", &settings, Mode::Overflow)).unwrap();
    assert!(again.blocked.as_deref().is_some_and(|b| b.contains("just compacted")), "{again:?}");
    let entry = NewEntry { uuid: "late".into(), now_ms: NOW, role: Role::User, text: "more".into(), cwd: "/p".into() };
    block_on(store.sessions().append("s", entry)).unwrap();
    let auto = block_on(store.compaction().plan_compaction("s", &settings, Mode::Auto)).unwrap();
    assert!(auto.blocked.as_deref().is_some_and(|b| b.contains("free too little")), "{auto:?}");
}

#[test]
fn a_compaction_keeps_going_across_a_second_compaction() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    session_of_tokens(&store, 100, 10);
    let settings = Settings { context_window: 100_000, keep: Keep::RecentMessages(4), ..Settings::default() };
    let first = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    block_on(store.compaction().apply_compaction("s", &first, "first summary", &ids(1), NOW)).unwrap();
    session_of_tokens(&store, 100, 0);
    for i in 10..16 {
        let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
        block_on(
            store.sessions().append("s", NewEntry { uuid: format!("m{i}"), now_ms: NOW, role, text: "y".repeat(400), cwd: "/p".into() }),
        )
        .unwrap();
    }
    let second = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    assert_eq!(second.previous_summary.as_deref(), Some("first summary"), "as written, not as shown (wrapped)");
    assert!(second.prompt.contains("first summary"));
    assert_eq!(second.keep, ["m12", "m13", "m14", "m15"]);
    assert_eq!(second.summarize, ["m6", "m7", "m8", "m9", "m10", "m11"]);
    block_on(store.compaction().apply_compaction("s", &second, "second summary", &ids(2), NOW)).unwrap();
    let context = block_on(store.sessions().context("s")).unwrap();
    let uuids: Vec<&str> = context.messages.iter().map(|m| m.uuid.as_str()).collect();
    assert_eq!(uuids, ["summary-2", "m12", "m13", "m14", "m15"]);
    assert_eq!(block_on(store.sessions().load("s")).unwrap().chain.len(), 16 + 4, "the chain still runs through the whole history");
}

#[test]
fn pi_sessions_get_a_pi_compaction_entry() {
    let mut lines =
        vec![json!({"type": "session", "version": 3, "id": "sess", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}).to_string()];
    let mut parent: Option<String> = None;
    for i in 0..12 {
        let id = format!("{i:08x}");
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let message = json!({"role": role, "content": [{"type": "text", "text": format!("message {i} ").repeat(50)}]});
        lines.push(
            json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z", "message": message})
                .to_string(),
        );
        parent = Some(id);
    }
    let storage = InMemoryStorage::new();
    block_on(storage.replace("projects/p/s.jsonl", (lines.join("\n") + "\n").as_bytes(), None)).unwrap();
    let store = Store::new(&storage);
    let settings = Settings { keep: Keep::RecentMessages(4), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    assert_eq!(plan.keep, ["00000008", "00000009", "0000000a", "0000000b"]);
    let applied = block_on(store.compaction().apply_compaction("s", &plan, "pi summary", &ids(1), NOW)).unwrap();
    assert_eq!(applied.format, Format::Pi);
    let text = String::from_utf8(block_on(storage.read("projects/p/s.jsonl", 0, None)).unwrap()).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        (last["type"].as_str(), last["parentId"].as_str(), last["firstKeptEntryId"].as_str()),
        (Some("compaction"), Some("0000000b"), Some("00000008"))
    );
    assert_eq!(last["summary"], "pi summary");
    let context = block_on(store.sessions().context("s")).unwrap();
    assert!(context.compacted && context.messages[0].text.contains("<summary>\npi summary\n</summary>"));
    let uuids: Vec<&str> = context.messages[1..].iter().map(|m| m.uuid.as_str()).collect();
    assert_eq!(uuids, plan.keep);
}

/// A rewind to the summary of a compaction that kept the last messages: the context is
/// the summary, the kept messages, then the rewind, as Claude Code 2.1.330 sends it (it
/// puts the segment a compaction kept right after its summary, whatever continues the
/// summary: seen resuming this very session). By their links the kept messages are on
/// the branch the rewind left: the chain, the branch list, the usage and a fork from
/// the summary say so.
#[test]
fn a_rewind_to_a_summary_keeps_the_kept_messages_in_the_context_on_their_own_branch() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for i in 1..=3u64 {
        let reply = json!({ "role": "assistant", "id": format!("m{i}"), "usage": { "input_tokens": i * 100, "output_tokens": 1 }, "content": format!("r{i}") });
        let turn = crate::turns::turn(
            &format!("7a1b2c3d-0000-4000-8000-00000000000{i}"),
            json!([{ "role": "user", "content": format!("p{i}") }, reply]),
        );
        block_on(store.sessions().append_turn("s", mneme_core::Turn { now_ms: NOW + i as i64, ..turn })).unwrap();
    }
    let plan =
        block_on(store.compaction().plan_compaction("s", &Settings { keep: Keep::RecentMessages(2), ..Settings::default() }, Mode::Manual))
            .unwrap();
    block_on(store.compaction().apply_compaction("s", &plan, "earlier: p1 p2", &ids(1), NOW + 10)).unwrap();
    let summary = block_on(store.sessions().context("s")).unwrap().messages[0].uuid.clone();
    let rewind = mneme_core::Turn {
        parent: Some(summary.clone()),
        now_ms: NOW + 20,
        ..crate::turns::turn("7a1b2c3d-0000-4000-8000-000000000009", json!({ "role": "user", "content": "after the summary" }))
    };
    block_on(store.sessions().append_turn("s", rewind)).unwrap();
    let texts: Vec<String> = block_on(store.sessions().context("s")).unwrap().messages.into_iter().map(|m| String::from(m.text)).collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(texts[0].contains("earlier: p1 p2"), "{texts:?}");
    assert_eq!(texts[1..], ["p3", "r3", "after the summary"]);
    let chain = block_on(store.sessions().load("s")).unwrap();
    let on_chain: Vec<&str> = chain.chain.iter().map(|&i| chain.entries[i as usize].text.as_str()).collect();
    assert!(!on_chain.contains(&"p3") && !on_chain.contains(&"r3") && on_chain.contains(&"r2"), "{on_chain:?}");
    let branches = block_on(store.sessions().branches("s")).unwrap();
    assert_eq!(branches.len(), 2, "{branches:?}");
    assert!(branches[0].current && branches[0].text == "after the summary", "{branches:?}");
    assert!(!branches[1].current && branches[1].text == "r3", "the kept messages' branch, left: {branches:?}");
    let ledger = block_on(store.sessions().usage("s", None)).unwrap();
    let current = ledger.branches.iter().find(|b| b.current).unwrap();
    assert_eq!(current.usage.input, 100 + 200, "r3's 300 is the left branch's: {ledger:?}");
    block_on(store.sessions().fork("s", Some(&summary), "copy", NOW + 30)).unwrap();
    let forked: Vec<String> =
        block_on(store.sessions().context("copy")).unwrap().messages.into_iter().map(|m| String::from(m.text)).collect();
    assert_eq!(forked.len(), 1, "a fork from the summary is the summary: {forked:?}");
}

/// A prompt the compaction kept last, taken back (an agent loop whose model call
/// failed after it compacted): the context is the summary and the messages kept before
/// the prompt, in a fresh read and in the store that wrote it, and the next prompt
/// continues there. The summary tombstoned too, the kept messages are the context.
#[test]
fn a_tombstoned_kept_message_leaves_the_rest_of_the_kept_messages_in_the_context() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for i in 1..=4u32 {
        let role = if i % 2 == 1 { Role::User } else { Role::Assistant };
        let entry = NewEntry { uuid: format!("m{i}"), now_ms: NOW + i64::from(i), role, text: format!("message {i}"), cwd: "/p".into() };
        block_on(store.sessions().append("s", entry)).unwrap();
    }
    let plan =
        block_on(store.compaction().plan_compaction("s", &Settings { keep: Keep::RecentMessages(3), ..Settings::default() }, Mode::Manual))
            .unwrap();
    block_on(store.compaction().apply_compaction("s", &plan, "earlier: message 1", &ids(1), NOW + 10)).unwrap();
    block_on(store.sessions().tombstone("s", "m4", NOW + 11)).unwrap();
    let texts = |store: &Store<&InMemoryStorage>| -> Vec<String> {
        block_on(store.sessions().context("s")).unwrap().messages.into_iter().map(|m| String::from(m.text)).collect()
    };
    for store in [&store, &Store::new(&storage)] {
        let now = texts(store);
        assert_eq!(now.len(), 3, "{now:?}");
        assert!(now[0].contains("earlier: message 1") && now[1..] == ["message 2", "message 3"], "{now:?}");
        let branches = block_on(store.sessions().branches("s")).unwrap();
        assert!(branches.iter().any(|b| b.current && b.text == "message 3"), "{branches:?}");
    }
    let next = NewEntry { uuid: "m5".into(), now_ms: NOW + 12, role: Role::User, text: "message 5".into(), cwd: "/p".into() };
    block_on(store.sessions().append("s", next)).unwrap();
    assert_eq!(texts(&Store::new(&storage))[1..], ["message 2", "message 3", "message 5"]);

    block_on(store.sessions().tombstone("s", "m5", NOW + 13)).unwrap();
    block_on(store.sessions().tombstone("s", "summary-1", NOW + 14)).unwrap();
    for store in [&store, &Store::new(&storage)] {
        assert_eq!(texts(store), ["message 2", "message 3"], "the boundary, newer, is not their end");
    }
}

/// A compaction that kept no relinked segment (Claude Code's classic `/compact`) names
/// the last summarised message as its logical parent: with its summary tombstoned the
/// context is still the compaction's (empty), not the history it summarised.
#[test]
fn a_tombstoned_summary_of_a_classic_compaction_does_not_bring_back_what_it_summarised() {
    let storage = InMemoryStorage::new();
    let line = |json: Value| format!("{json}\n");
    let mut text = String::new();
    for (i, (role, parent)) in [("user", Value::Null), ("assistant", json!("m1")), ("user", json!("m2"))].into_iter().enumerate() {
        let n = i + 1;
        text += &line(
            json!({ "type": role, "uuid": format!("m{n}"), "parentUuid": parent, "sessionId": "s", "timestamp": format!("2026-01-01T00:00:0{n}.000Z"), "message": { "role": role, "content": format!("message {n}") } }),
        );
    }
    text += &line(
        json!({ "type": "system", "subtype": "compact_boundary", "uuid": "b", "parentUuid": null, "logicalParentUuid": "m3", "sessionId": "s", "timestamp": "2026-01-01T00:00:05.000Z", "compactMetadata": { "trigger": "manual", "preTokens": 100 } }),
    );
    text += &line(
        json!({ "type": "user", "uuid": "sum", "parentUuid": "b", "sessionId": "s", "isCompactSummary": true, "timestamp": "2026-01-01T00:00:06.000Z", "message": { "role": "user", "content": "summary of 1-3" } }),
    );
    text += &line(json!({ "type": "tombstone", "deleted_uuid": "sum" }));
    block_on(storage.replace("projects/p/s.jsonl", text.as_bytes(), None)).unwrap();
    let context = block_on(Store::new(&storage).sessions().context("s")).unwrap();
    assert!(context.compacted && context.messages.is_empty(), "{context:?}");
}

/// A pi session compacted while its last reply's call waits for its result (an agent
/// loop that compacts after every turn): the compaction keeps that reply, so the
/// result still answers it, as in a Claude Code session; a fresh read agrees. Its
/// tool results are summarised as results, not as the assistant's words, and a reply
/// given without a stop reason that made calls is written as stopped for them.
#[test]
fn a_pi_compaction_keeps_the_call_its_kept_reply_waits_on() {
    let storage = InMemoryStorage::new();
    let header = json!({"type": "session", "version": 3, "id": "pi1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"});
    block_on(storage.replace("projects/p/pi1.jsonl", format!("{header}\n").as_bytes(), None)).unwrap();
    let store = Store::new(&storage);
    let call =
        |id: &str| json!({ "role": "assistant", "content": [{ "type": "tool_use", "id": id, "name": "read", "input": { "path": "a" } }] });
    let result = |id: &str| json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": id, "content": "DB_HOST=internal.example. Second sentence." }] });
    let first = json!([{ "role": "user", "content": "go" }, call("t1"), result("t1"), { "role": "assistant", "content": "read it" }, { "role": "user", "content": "again" }, call("tp")]);
    block_on(store.sessions().append_turn("pi1", crate::turns::turn("7a1b2c3d-0000-4000-8000-000000000000", first))).unwrap();
    let text = String::from_utf8(block_on(storage.read("projects/p/pi1.jsonl", 0, None)).unwrap()).unwrap();
    assert!(text.lines().last().unwrap().contains(r#""stopReason":"toolUse""#), "{text}");
    let plan = block_on(store.compaction().plan_compaction(
        "pi1",
        &Settings { keep: Keep::RecentMessages(1), ..Settings::default() },
        Mode::Manual,
    ))
    .unwrap();
    assert!(plan.prompt.contains("[tool result]: DB_HOST") && !plan.prompt.contains("[toolResult]"), "{}", plan.prompt);
    let summary = block_on(store.compaction().summarize_offline("pi1", &plan)).unwrap();
    assert!(!summary.contains("DB_HOST"), "a tool's output is not what the assistant said: {summary}");
    block_on(store.compaction().apply_compaction("pi1", &plan, &summary, &ids(1), NOW)).unwrap();
    let answer = crate::turns::turn("7a1b2c3d-0000-4000-8000-000000000001", result("tp"));
    block_on(store.sessions().append_turn("pi1", mneme_core::Turn { now_ms: NOW + 1, ..answer.clone() })).unwrap();
    let fresh = Store::new(&storage);
    let context = block_on(fresh.sessions().context("pi1")).unwrap();
    assert!(context.compacted && context.messages.last().unwrap().content.contains("DB_HOST"), "{context:?}");
    // A fresh read sees the same: nothing pending, so the result cannot be given twice.
    let twice = block_on(
        fresh
            .sessions()
            .append_turn("pi1", mneme_core::Turn { now_ms: NOW + 2, uuid: "7a1b2c3d-0000-4000-8000-000000000002".into(), ..answer }),
    );
    assert!(matches!(twice, Err(mneme_core::Error::InvalidMessage { .. })), "{twice:?}");
}

/// pi's entries that reach the model without being plain messages — a command run
/// with `!`, an extension's message, a branch summary — are counted and summarised as
/// what the model is sent.
#[test]
fn pi_commands_and_branch_summaries_are_counted_and_summarised() {
    let storage = InMemoryStorage::new();
    let entry = crate::turns::pi_entry;
    let text = [
        json!({ "type": "session", "version": 3, "id": "pi1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p" }).to_string(),
        entry("message", "a", None, json!({ "message": { "role": "user", "content": "hello", "timestamp": 1 } })),
        entry("message", "b", Some("a"), json!({ "message": { "role": "bashExecution", "command": "cat big.log", "output": "line of the log\n".repeat(500), "exitCode": 0, "cancelled": false, "truncated": false, "timestamp": 2 } })),
        entry("branch_summary", "c", Some("b"), json!({ "fromId": "zz", "summary": "tried the other parser, it failed" })),
        entry("message", "d", Some("c"), json!({ "message": { "role": "user", "content": "now what?", "timestamp": 3 } })),
        entry("message", "e", Some("d"), json!({ "message": { "role": "assistant", "content": [{ "type": "text", "text": "let us see" }], "api": "anthropic-messages", "provider": "anthropic", "model": "m", "stopReason": "stop", "timestamp": 4 } })),
    ]
    .join("\n")
        + "\n";
    block_on(storage.append("projects/-p/pi1.jsonl", text.as_bytes())).unwrap();
    let store = Store::new(&storage);
    let settings = Settings { context_window: 100_000, keep: Keep::RecentMessages(1), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("pi1", &settings, Mode::Manual)).unwrap();
    assert!(plan.tokens_before > 2000, "the command's output counts: {}", plan.tokens_before);
    assert!(plan.prompt.contains("Ran `cat big.log`") && plan.prompt.contains("tried the other parser"), "{}", plan.prompt);
    let offline = block_on(store.compaction().summarize_offline("pi1", &plan)).unwrap();
    assert!(offline.contains("tried the other parser"), "{offline}");
}

#[test]
fn pi_v1_files_without_ids_resume_in_file_order() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/pi/v1/before-compaction.jsonl");
    let storage = InMemoryStorage::new();
    block_on(storage.replace("projects/p/s.jsonl", &fs::read(path).unwrap(), None)).unwrap();
    let context = block_on(Store::new(&storage).sessions().context("s")).unwrap();
    assert!(context.messages.len() > 100, "{}", context.messages.len());
}

#[test]
fn a_failure_at_any_step_of_applying_leaves_the_old_or_the_new_state() {
    let mut fail_at = 1;
    loop {
        let memory = InMemoryStorage::new();
        session_of_tokens(&Store::new(&memory), 100, 10);
        let before = block_on(Store::new(&memory).sessions().context("s")).unwrap();
        let store = Store::new(Faulty::new(&memory, fail_at));
        let settings = Settings { keep: Keep::RecentMessages(4), ..Settings::default() };
        let result = block_on(async {
            let plan = store.compaction().plan_compaction("s", &settings, Mode::Manual).await?;
            let summary = store.compaction().summarize_offline("s", &plan).await?;
            store.compaction().apply_compaction("s", &plan, &summary, &ids(1), NOW).await
        });
        let calls = store.storage().calls.get();
        let after = block_on(Store::new(&memory).sessions().context("s")).unwrap();
        match result {
            Ok(_) => assert!(after.compacted && after.messages.len() == 5, "fail_at {fail_at}: {after:?}"),
            Err(_) => assert_eq!(after, before, "fail_at {fail_at}: a failed compaction changed the context"),
        }
        let text = String::from_utf8(block_on(memory.read("projects/-p/s.jsonl", 0, None)).unwrap()).unwrap();
        assert_eq!(
            text.matches("compact_boundary").count(),
            text.matches("isCompactSummary").count(),
            "fail_at {fail_at}: a boundary without its summary"
        );
        if fail_at > calls {
            break;
        }
        fail_at += 1;
    }
    assert!(fail_at > 5);
}

/// Six tool calls with 4000-character results, as Claude Code writes them.
fn tool_session(storage: &InMemoryStorage) {
    let mut lines = Vec::new();
    let mut parent = serde_json::Value::Null;
    for i in 0..6 {
        let call = format!("toolu-{i}");
        let entries = [
            json!({"type": "user", "uuid": format!("p{i}"), "message": {"role": "user", "content": format!("step {i}")}}),
            json!({"type": "assistant", "uuid": format!("a{i}"), "message": {"id": format!("m{i}"), "role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "Read", "input": {}}]}}),
            json!({"type": "user", "uuid": format!("r{i}"), "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "x".repeat(4000)}]}}),
        ];
        for mut entry in entries {
            entry["parentUuid"] = parent.clone();
            parent = entry["uuid"].clone();
            lines.push(entry.to_string());
        }
    }
    block_on(storage.replace("projects/p/s.jsonl", (lines.join("\n") + "\n").as_bytes(), None)).unwrap();
}

#[test]
fn clearing_old_tool_results_comes_before_a_summary() {
    let storage = InMemoryStorage::new();
    tool_session(&storage);
    let store = Store::new(&storage);
    // ~6000 tokens of results; a budget of 10000 characters leaves 2 of 6 results.
    let settings =
        Settings { context_window: 6000, tool_result_budget_chars: 10_000, keep: Keep::RecentMessages(3), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Auto)).unwrap();
    assert_eq!(plan.action, Action::Prune, "{}", plan.reason);
    assert_eq!(plan.prune.iter().map(|p| p.tool_use_id.as_str()).collect::<Vec<_>>(), ["toolu-0", "toolu-1", "toolu-2", "toolu-3"]);
    assert!(!plan.needs_summary());
    let applied = block_on(store.compaction().apply_compaction("s", &plan, "", &ids(1), NOW)).unwrap();
    assert_eq!(applied.action, Action::Prune);
    let context = block_on(store.sessions().context("s")).unwrap();
    let cleared = context.messages.iter().filter(|m| m.content.contains("[Old tool result content cleared]")).count();
    assert_eq!(cleared, 4);
    assert_eq!(context.messages.len(), 18, "nothing else changed");
    let after = block_on(store.compaction().plan_compaction("s", &settings, Mode::Auto)).unwrap();
    assert_eq!((after.action, after.trigger), (Action::None, None), "{}", after.reason);
    assert!(after.tokens_before < after.limit);
}

/// The results after the last reply are the model's still to read: cleared, it would
/// see "[Old tool result content cleared]" for the call it just made. They count
/// toward the budget, but only the older ones are cleared.
#[test]
fn the_results_the_model_has_not_read_are_never_cleared() {
    let storage = InMemoryStorage::new();
    tool_session(&storage);
    // The last call's result, after the last reply, is made larger than the budget.
    let text = String::from_utf8(block_on(storage.read("projects/p/s.jsonl", 0, None)).unwrap()).unwrap();
    let (before, last) = text.trim_end().rsplit_once('\n').unwrap();
    let last = last.replace(&"x".repeat(4000), &"y".repeat(30_000));
    block_on(storage.replace("projects/p/s.jsonl", format!("{before}\n{last}\n").as_bytes(), None)).unwrap();
    let store = Store::new(&storage);
    let settings =
        Settings { context_window: 6000, tool_result_budget_chars: 10_000, keep: Keep::RecentMessages(3), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    let cleared: Vec<&str> = plan.prune.iter().map(|p| p.tool_use_id.as_str()).collect();
    assert_eq!(cleared, ["toolu-0", "toolu-1", "toolu-2", "toolu-3", "toolu-4"], "the newest results stay");
    // A reply of two calls is written a line per call, each result after its call's
    // line: the first result sits before the reply's last line, and is unread too.
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let calls = json!([
        { "role": "user", "content": "read both" },
        { "role": "assistant", "content": [
            { "type": "tool_use", "id": "t1", "name": "Read", "input": {} },
            { "type": "tool_use", "id": "t2", "name": "Read", "input": {} },
        ] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "t1", "content": "a".repeat(8000) },
            { "type": "tool_result", "tool_use_id": "t2", "content": "b".repeat(8000) },
        ] },
    ]);
    block_on(store.sessions().append_turn("s", crate::turns::turn("c", calls))).unwrap();
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    assert!(plan.prune.is_empty(), "{:?}", plan.prune);
}

#[test]
fn clearing_results_frees_no_bytes_for_the_size_cap_warm_or_fresh() {
    let storage = InMemoryStorage::new();
    tool_session(&storage);
    let total: u64 = block_on(storage.list("")).unwrap().iter().map(|i| i.size).sum();
    let limits = mneme_core::Limits { part_bytes: 1 << 30, total_bytes: total + 1000 };
    let settings =
        Settings { context_window: 6000, tool_result_budget_chars: 10_000, keep: Keep::RecentMessages(3), ..Settings::default() };
    let warm = Store::with_limits(&storage, limits);
    let plan = block_on(warm.compaction().plan_compaction("s", &settings, Mode::Auto)).unwrap();
    assert_eq!(plan.action, Action::Prune);
    block_on(warm.compaction().apply_compaction("s", &plan, "", &ids(1), NOW)).unwrap();
    // The prune line took some of the room; what is left is less than this entry.
    let entry = || NewEntry { uuid: "late".into(), now_ms: NOW, role: Role::User, text: "y".repeat(900), cwd: "/p".into() };
    let fresh = Store::with_limits(&storage, limits);
    let from_fresh = block_on(fresh.sessions().append("s", entry()));
    let from_warm = block_on(warm.sessions().append("s", entry()));
    assert!(matches!(from_fresh, Err(mneme_core::Error::SessionFull { .. })), "{from_fresh:?}");
    assert!(matches!(from_warm, Err(mneme_core::Error::SessionFull { .. })), "the store that pruned agrees: {from_warm:?}");
}

/// crab's compaction writes the kept messages again after its marker: they are no new
/// messages, so a context still too long right after it is not compacted again (and
/// the kept messages written again) by every automatic plan.
#[test]
fn a_crab_compaction_s_kept_copies_are_no_new_messages() {
    let mut lines = vec![
        json!({"agent": "crab", "created_by": "user", "created_at": "2026-01-01T00:00:00Z", "title": "", "uptime_secs": 0}).to_string(),
    ];
    for i in 0..8 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        lines.push(json!({"role": role, "content": format!("crab message {i} ").repeat(30)}).to_string());
    }
    let storage = InMemoryStorage::new();
    block_on(storage.replace("projects/p/crab_user_1.jsonl", (lines.join("\n") + "\n").as_bytes(), None)).unwrap();
    let store = Store::new(&storage);
    let settings = Settings { context_window: 300, keep: Keep::RecentMessages(4), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("crab_user_1", &settings, Mode::Auto)).unwrap();
    assert!(plan.has_work(), "{}", plan.reason);
    block_on(store.compaction().apply_compaction("crab_user_1", &plan, "the summary", &ids(1), NOW)).unwrap();
    let again = block_on(store.compaction().plan_compaction("crab_user_1", &settings, Mode::Auto)).unwrap();
    assert!(again.blocked.as_deref().is_some_and(|b| b.contains("loop guard")), "{again:?}");
    // A message after them is new: the guard lets the next plan through.
    let entry = NewEntry { uuid: "n".into(), now_ms: NOW, role: Role::User, text: "one more ".repeat(40), cwd: "/p".into() };
    block_on(store.sessions().append("crab_user_1", entry)).unwrap();
    let next = block_on(store.compaction().plan_compaction("crab_user_1", &settings, Mode::Auto)).unwrap();
    assert!(next.blocked.is_none(), "{next:?}");
}

#[test]
fn crab_sessions_get_a_compact_marker_and_keep_their_recent_messages() {
    let mut lines = vec![
        json!({"agent": "crab", "created_by": "user", "created_at": "2026-01-01T00:00:00Z", "title": "", "uptime_secs": 0}).to_string(),
    ];
    lines.push(json!({"role": "user", "content": "old question"}).to_string());
    lines.push(json!({"compact": "an earlier summary"}).to_string());
    for i in 0..8 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        lines.push(json!({"role": role, "content": format!("crab message {i} ").repeat(20)}).to_string());
    }
    let storage = InMemoryStorage::new();
    block_on(storage.replace("projects/p/crab_user_1.jsonl", (lines.join("\n") + "\n").as_bytes(), None)).unwrap();
    let store = Store::new(&storage);
    let before = block_on(store.sessions().context("crab_user_1")).unwrap();
    assert!(before.compacted && before.messages[0].text == "an earlier summary" && before.messages.len() == 9, "{before:?}");

    let plan = block_on(store.compaction().plan_compaction(
        "crab_user_1",
        &Settings { keep: Keep::RecentMessages(2), ..Settings::default() },
        Mode::Manual,
    ))
    .unwrap();
    assert_eq!(plan.keep, ["@1:10", "@1:11"], "entries without ids are named by position");
    assert_eq!(plan.previous_summary.as_deref(), Some("an earlier summary"));
    let applied = block_on(store.compaction().apply_compaction("crab_user_1", &plan, "the new summary", &ids(1), NOW)).unwrap();
    assert_eq!(applied.format, Format::Crab);
    let text = String::from_utf8(block_on(storage.read("projects/p/crab_user_1.jsonl", 0, None)).unwrap()).unwrap();
    let tail: Vec<&str> = text.lines().skip(11).collect();
    // One record, one append: every line but its last begins with a space (JSON ignores
    // it; Mneme reads a record cut short by it).
    let compact = json!({"compact": "the new summary"}).to_string();
    assert_eq!(tail, [format!(" {compact}"), format!(" {}", lines[9]), lines[10].clone()]);
    let after = block_on(store.sessions().context("crab_user_1")).unwrap();
    let texts: Vec<&str> = after.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts.len(), 3);
    assert_eq!(texts[0], "the new summary");
    assert!(texts[1].starts_with("crab message 6") && texts[2].starts_with("crab message 7"));
    assert_eq!(block_on(store.sessions().load("crab_user_1")).unwrap().report.skipped, [], "every line of a crab file reads");
}
