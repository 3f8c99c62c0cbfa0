//! A session as a list of OpenAI Responses items (the OpenAI Agents SDK's `Session`):
//! items come back exactly as added, popped from the end, and the session stays one
//! Mneme reads — context, provider context, search, compaction — with every call and
//! its output in place.

use mneme_core::storage::crash::Crashing;
use mneme_core::storage::faulty::Faulty;
use mneme_core::{CompactionIds, Error, InMemoryStorage, Keep, Mode, Provider, Settings, Storage, Store, Window, block_on};
use serde_json::{Value, json};
use std::cell::{Cell, RefCell};

use crate::hooked::{Call, Hooked};

const T0: i64 = 1_771_200_000_000;
const CWD: &str = "/work/agent";

fn add<S: Storage>(store: &Store<S>, id: &str, items: &Value, n: u32) -> Result<u32, Error> {
    block_on(store.sessions().append_items(id, &items.to_string(), CWD, &format!("00000000-0000-4000-8000-{n:012}"), T0 + i64::from(n)))
}

fn items<S: Storage>(store: &Store<S>, id: &str, limit: Option<u32>) -> Value {
    serde_json::from_str(&block_on(store.sessions().items(id, limit)).unwrap()).unwrap()
}

fn pop<S: Storage>(store: &Store<S>, id: &str) -> Option<Value> {
    block_on(store.sessions().pop_item(id, T0 + 99)).unwrap().map(|item| serde_json::from_str(&item).unwrap())
}

/// A run of an agent with a tool, as `Runner.run` saves it: the prompt, a reasoning
/// item, the call, its output, the answer.
fn run() -> Value {
    json!([
        {"role": "user", "content": "What's the weather in Paris? ünïcödé 😀"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look it up."}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather", "arguments": "{\"city\":\"Paris\"}", "status": "completed"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny, 21°C"},
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "It is sunny in Paris.", "annotations": []}]},
    ])
}

#[test]
fn items_come_back_exactly_as_added_in_order_and_limited_to_the_newest() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    assert_eq!(items(&store, "s", None), json!([]), "a session that does not exist has none");
    assert_eq!(pop(&store, "s"), None);
    assert_eq!(add(&store, "s", &json!([]), 0).unwrap(), 0);
    assert!(block_on(storage.list("projects/")).unwrap().is_empty(), "no items, no session");

    assert_eq!(add(&store, "s", &run(), 1).unwrap(), 5);
    let later = json!([{"role": "user", "content": [{"type": "input_text", "text": "And tomorrow?"}]},
                       {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "paris"}},
                       {"role": "assistant", "content": "Rain."}]);
    assert_eq!(add(&store, "s", &later, 2).unwrap(), 3);
    let all: Vec<Value> = run().as_array().unwrap().iter().chain(later.as_array().unwrap()).cloned().collect();
    assert_eq!(items(&store, "s", None), Value::Array(all.clone()));
    assert_eq!(items(&Store::new(&storage), "s", None), Value::Array(all.clone()), "and from another store");
    assert_eq!(items(&store, "s", Some(2)), Value::Array(all[6..].to_vec()));
    assert_eq!(items(&store, "s", Some(0)), json!([]));
    assert_eq!(items(&store, "s", Some(100)), Value::Array(all.clone()));
    assert_eq!(items(&store, "other", None), json!([]), "sessions are isolated");

    // Where Claude Code keeps a session of the project of the working directory.
    let file = String::from_utf8(block_on(storage.read("projects/-work-agent/s.jsonl", 0, None)).unwrap()).unwrap();
    assert_eq!(file.lines().count(), 8, "a line per item");
    assert!(file.lines().all(|line| serde_json::from_str::<Value>(line).unwrap()["responsesItem"].is_object()));
}

#[test]
fn popping_takes_the_newest_item_and_adding_goes_on_from_the_one_before() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    add(&store, "s", &run(), 1).unwrap();
    let all = run();
    assert_eq!(pop(&store, "s"), Some(all[4].clone()));
    assert_eq!(items(&store, "s", None), json!(all.as_array().unwrap()[..4]));
    assert_eq!(pop(&store, "s"), Some(all[3].clone()), "the call's output");
    let output =
        json!([{"type": "function_call_output", "call_id": "call_1", "output": "cloudy"}, {"role": "assistant", "content": "Cloudy."}]);
    add(&store, "s", &output, 2).unwrap();
    let expected: Vec<Value> = all.as_array().unwrap()[..3].iter().chain(output.as_array().unwrap()).cloned().collect();
    assert_eq!(items(&Store::new(&storage), "s", None), Value::Array(expected));
    let context = block_on(store.sessions().provider_context("s", Provider::Openai, None, &[])).unwrap();
    assert!(context.interrupted.is_empty(), "the new output answers the call: {:?}", context.interrupted);
    assert!(context.body.contains("cloudy") && !context.body.contains("sunny"), "{}", context.body);
    for _ in 0..5 {
        pop(&store, "s");
    }
    assert_eq!(pop(&store, "s"), None);
    assert_eq!(items(&store, "s", None), json!([]));
    add(&store, "s", &json!([{"role": "user", "content": "again"}]), 3).unwrap();
    assert_eq!(items(&store, "s", None), json!([{"role": "user", "content": "again"}]));
}

#[test]
fn a_session_of_items_is_a_session_mneme_reads() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    add(&store, "s", &run(), 1).unwrap();
    let context = block_on(store.sessions().context("s")).unwrap();
    let roles: Vec<&str> = context.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "assistant", "user", "assistant"]);
    assert_eq!(context.messages[0].text.as_ref(), "What's the weather in Paris? ünïcödé 😀");
    assert_eq!(context.messages[1].text.as_ref(), "[reasoning] Look it up.");
    let call: Value = serde_json::from_str(&context.messages[2].content).unwrap();
    assert_eq!(call, json!([{"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Paris"}}]));
    let output: Value = serde_json::from_str(&context.messages[3].content).unwrap();
    assert_eq!(output, json!([{"type": "tool_result", "tool_use_id": "call_1", "content": "sunny, 21°C"}]));

    for provider in [Provider::Anthropic, Provider::Openai] {
        let request = block_on(store.sessions().provider_context("s", provider, None, &[])).unwrap();
        assert!(request.interrupted.is_empty(), "{provider:?}: every call has its output");
    }
    let hits = block_on(store.sessions().search("sunny Paris", 5, None, Window::default())).unwrap();
    assert_eq!(hits.first().map(|hit| hit.id.as_str()), Some("s"));
    let transcript = block_on(store.sessions().load("s")).unwrap();
    assert_eq!(transcript.entries.len(), 5);
}

#[test]
fn outputs_without_their_call_and_repeated_call_ids_are_kept_as_text() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let given = json!([
        {"type": "function_call_output", "call_id": "gone", "output": [{"type": "input_text", "text": "late"}]},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "not json"},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "one"},
        {"type": "function_call_output", "call_id": "c", "output": "two"},
        {"type": "item_reference", "id": "x"},
        {"role": "developer", "content": ""},
        {"type": "function_call", "call_id": "d", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "d", "output": "first"},
        {"type": "function_call", "call_id": "d", "name": "g", "arguments": "{}"},
    ]);
    assert_eq!(add(&store, "s", &given, 1).unwrap(), 10, "a call id made again in the batch is no refusal");
    assert_eq!(items(&store, "s", None), given);
    let texts: Vec<String> = block_on(store.sessions().context("s")).unwrap().messages.iter().map(|m| m.text.to_string()).collect();
    assert_eq!(texts[0], "[result of gone] late");
    assert!(texts[1].contains("tool_use") && texts[1].contains("f"), "{}", texts[1]);
    assert!(texts[2].starts_with("[call c: f]"), "{}", texts[2]);
    assert!(texts[4].starts_with("[result of c] two"), "{}", texts[4]);
    assert_eq!(&texts[5..7], ["[item_reference]", "[message]"]);
    assert!(texts[9].starts_with("[call d: g]"), "{}", texts[9]);
    let request = block_on(store.sessions().provider_context("s", Provider::Anthropic, None, &[])).unwrap();
    assert!(request.interrupted.is_empty());
}

#[test]
fn parallel_calls_are_answered_in_any_order_across_batches() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    add(&store, "s", &json!([{"role": "user", "content": "two cities"}]), 1).unwrap();
    add(
        &store,
        "s",
        &json!([
            {"type": "function_call", "call_id": "a", "name": "weather", "arguments": "{\"city\":\"A\"}"},
            {"type": "function_call", "call_id": "b", "name": "weather", "arguments": "{\"city\":\"B\"}"},
        ]),
        2,
    )
    .unwrap();
    let pending = block_on(store.sessions().provider_context("s", Provider::Openai, None, &[])).unwrap();
    assert_eq!(pending.interrupted, ["a", "b"], "calls whose outputs are not added yet");
    add(&store, "s", &json!([{"type": "function_call_output", "call_id": "b", "output": "B"}]), 3).unwrap();
    add(&store, "s", &json!([{"type": "function_call_output", "call_id": "a", "output": "A"}]), 4).unwrap();
    let answered = block_on(Store::new(&storage).sessions().provider_context("s", Provider::Openai, None, &[])).unwrap();
    assert!(answered.interrupted.is_empty(), "{:?}", answered.interrupted);
    let text = block_on(store.sessions().context("s")).unwrap().messages.iter().map(|m| m.text.to_string()).collect::<Vec<_>>().join("|");
    assert!(!text.contains("[result of"), "no output was taken for a stray: {text}");
}

#[test]
fn a_batch_lands_whole_or_not_at_all() {
    let inner = InMemoryStorage::new();
    let store = Store::new(&inner);
    add(
        &store,
        "s",
        &json!([{"role": "user", "content": "hi"}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]),
        1,
    )
    .unwrap();
    let faulty = Faulty::new(&inner, 1).only("append");
    let failing = Store::new(&faulty);
    let output = json!([{"type": "function_call_output", "call_id": "c", "output": "done"}, {"role": "assistant", "content": "Done."}]);
    assert!(add(&failing, "s", &output, 2).is_err());
    assert_eq!(items(&Store::new(&inner), "s", None).as_array().unwrap().len(), 2, "the call is kept; nothing of the failed batch");
    add(&Store::new(&inner), "s", &output, 3).unwrap();
    assert_eq!(items(&Store::new(&inner), "s", None).as_array().unwrap().len(), 4);
}

#[test]
fn after_a_compaction_the_items_start_with_its_summary() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for n in 0..6u32 {
        let turn = json!([{"role": "user", "content": format!("question {n} {}", "words ".repeat(200))},
                          {"role": "assistant", "content": [{"type": "output_text", "text": format!("answer {n}")}]}]);
        add(&store, "s", &turn, n + 1).unwrap();
    }
    let probe = block_on(store.compaction().plan_compaction("s", &Settings::default(), Mode::Manual)).unwrap();
    let settings = Settings { context_window: probe.tokens_before, keep: Keep::RecentTokens(300), ..Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, Mode::Manual)).unwrap();
    assert!(!plan.summarize.is_empty(), "{}", plan.reason);
    let ids = CompactionIds { boundary: "b".into(), summary: "sum".into() };
    block_on(store.compaction().apply_compaction("s", &plan, "They asked six questions.", &ids, T0 + 50)).unwrap();
    let after = items(&Store::new(&storage), "s", None);
    let list = after.as_array().unwrap();
    assert_eq!(list[0]["role"], "user");
    assert!(list[0]["content"].as_str().unwrap().contains("They asked six questions."));
    assert_eq!(list.len(), 1 + plan.keep.len(), "the summary, then what the compaction kept, as added");
    assert_eq!(list.last().unwrap(), &json!({"role": "assistant", "content": [{"type": "output_text", "text": "answer 5"}]}));
}

#[test]
fn what_is_no_array_of_objects_is_refused_and_pi_sessions_refuse_items() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    assert!(matches!(add(&store, "s", &json!({"role": "user"}), 1), Err(Error::InvalidArgument(_))));
    assert!(matches!(add(&store, "s", &json!([{"role": "user", "content": "a"}, 3]), 1), Err(Error::InvalidMessage { message: 1, .. })));
    let refused = block_on(store.sessions().append_items("s", "[{", CWD, "u", T0));
    assert!(matches!(refused, Err(Error::InvalidArgument(reason)) if reason.contains("a JSON array of items")));
    assert!(block_on(storage.list("projects/")).unwrap().is_empty(), "nothing written");

    let pi = concat!(
        r#"{"type":"session","version":3,"id":"p","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        "\n"
    );
    block_on(storage.replace("projects/-w/p.jsonl", pi.as_bytes(), None)).unwrap();
    let refused = add(&store, "p", &json!([{"role": "user", "content": "more"}]), 2);
    assert!(matches!(refused, Err(Error::Unsupported { .. })), "{refused:?}");
}

/// The JavaScript SDK's items (`@openai/agents`): `callId`, and a call's output as a
/// `function_call_result` whose output is one part.
#[test]
fn the_javascript_sdks_spelling_of_calls_and_results_reads_the_same() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let given = json!([
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "weather?"}]},
        {"type": "function_call", "callId": "call_9", "name": "weather", "arguments": "{}", "status": "completed", "providerData": {"id": "fc_9"}},
        {"type": "function_call_result", "callId": "call_9", "name": "weather", "status": "completed", "output": {"type": "text", "text": "sunny"}},
        {"type": "hosted_tool_call", "name": "web_search_call", "status": "completed"},
    ]);
    add(&store, "s", &given, 1).unwrap();
    assert_eq!(block_on(store.sessions().items("s", None)).unwrap(), given.to_string(), "the very text");
    let context = block_on(store.sessions().context("s")).unwrap();
    let output: Value = serde_json::from_str(&context.messages[2].content).unwrap();
    assert_eq!(output, json!([{"type": "tool_result", "tool_use_id": "call_9", "content": "sunny"}]));
    assert_eq!(context.messages[3].text.as_ref(), "[hosted_tool_call]");
    assert!(block_on(store.sessions().provider_context("s", Provider::Anthropic, None, &[])).unwrap().interrupted.is_empty());
}

/// The list a store keeps is the list a fresh store reads, whatever happened between:
/// its own batches, another store's, a pop, a compaction, a failed write, a removal.
#[test]
fn the_list_a_store_keeps_is_the_list_a_fresh_store_reads() {
    let inner = InMemoryStorage::new();
    let ours = Store::new(&inner);
    let theirs = Store::new(&inner);
    let agree = |what: &str| {
        let fresh: Value = serde_json::from_str(&block_on(Store::new(&inner).sessions().items("s", None)).unwrap()).unwrap();
        assert_eq!(items(&ours, "s", None), fresh, "after {what}");
    };
    agree("nothing");
    add(&ours, "s", &run(), 1).unwrap();
    agree("the first batch");
    add(&ours, "s", &json!([{"role": "user", "content": "again"}]), 2).unwrap();
    agree("a batch of ours");
    add(&theirs, "s", &json!([{"role": "assistant", "content": "theirs"}]), 3).unwrap();
    agree("a batch of another store");
    add(&ours, "s", &json!([{"role": "user", "content": "key sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaAA"}]), 4).unwrap();
    agree("a batch whose secret was taken out");
    pop(&ours, "s");
    agree("a pop");
    block_on(theirs.sessions().tombstone("s", "00000000-0000-4000-8000-000000000002", T0 + 7)).unwrap();
    agree("another store's tombstone");
    let failing = Faulty::new(&inner, 1).only("append");
    assert!(add(&Store::new(&failing), "s", &json!([{"role": "user", "content": "lost"}]), 5).is_err());
    agree("a failed write");
    block_on(theirs.sessions().remove("s")).unwrap();
    assert_eq!(items(&ours, "s", None), json!([]), "removed by another store");
    add(&ours, "s", &json!([{"role": "user", "content": "new"}]), 6).unwrap();
    agree("a session started again");
}

#[test]
fn a_store_reads_a_session_of_items_once_and_then_only_lists_it() {
    let storage = Crashing::recording(InMemoryStorage::new());
    let store = Store::new(&storage);
    let reads = || storage.calls().iter().filter(|call| call.operation == "read" && call.key.ends_with("/s.jsonl")).count();
    // The reads `items` makes (the write path reads a session again after lines it
    // could not follow, which is not this test's business).
    let read_by_items = |expected: usize| {
        let before = reads();
        let listed = items(&store, "s", None).as_array().unwrap().len();
        assert_eq!(listed, expected);
        reads() - before
    };
    add(&store, "s", &run(), 1).unwrap();
    assert_eq!(read_by_items(5), 0, "the items that began the session are the list");
    block_on(store.sessions().append_turn(
        "s",
        mneme_core::Turn {
            uuid: "t".into(),
            now_ms: T0,
            cwd: String::new(),
            provider: Provider::Anthropic,
            messages: r#"{"role":"user","content":"a prompt written otherwise"}"#.into(),
            parent: None,
            agent: None,
        },
    ))
    .unwrap();
    assert_eq!(read_by_items(5), 1, "read again after another kind of write; the prompt is no item");
    for n in 2..20 {
        add(&store, "s", &json!([{"role": "user", "content": format!("turn {n}")}]), n).unwrap();
        assert_eq!(read_by_items(4 + n as usize), 0, "read again though only this store wrote it");
    }
}

#[test]
fn items_keep_their_key_order_and_lose_only_line_breaks_between_tokens() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let given = "[{\"role\": \"user\",\n  \"content\": \"line one\\nline two\", \"a\": 1},\r\n {\"z\":1,\"type\":\"message\",\"role\":\"assistant\",\"content\":\"cut \\ud83d\"}]";
    assert_eq!(block_on(store.sessions().append_items("s", given, CWD, "u", T0)).unwrap(), 2);
    let back = block_on(store.sessions().items("s", None)).unwrap();
    assert_eq!(
        back,
        "[{\"role\": \"user\",  \"content\": \"line one\\nline two\", \"a\": 1},{\"z\":1,\"type\":\"message\",\"role\":\"assistant\",\"content\":\"cut \\ufffd\"}]",
        "a lone surrogate is U+FFFD"
    );
    assert_eq!(block_on(Store::new(&storage).sessions().items("s", None)).unwrap(), back, "as a fresh store reads them");
}

/// A fork copies each line's fields as their text: the forked session's items come back
/// as they were written, key order and all (they came back equal but with their keys
/// sorted).
#[test]
fn a_forked_session_gives_its_items_back_as_written() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let written = r#"[{"type":"message","role":"user","content":"zebra first, then apple"},{"type":"function_call","name":"look","call_id":"c1","arguments":"{\"z\":1,\"a\":2}"},{"type":"function_call_output","output":"done","call_id":"c1"}]"#;
    block_on(store.sessions().append_items("s", written, CWD, "00000000-0000-4000-8000-000000000001", T0)).unwrap();
    block_on(store.sessions().fork("s", None, "f", T0 + 1)).unwrap();
    let original = block_on(store.sessions().items("s", None)).unwrap();
    assert_eq!(original, written);
    assert_eq!(block_on(store.sessions().items("f", None)).unwrap(), original);
}

/// Two hosts pop at once: the second waits for the session's lock, which the first
/// holds from its read to its tombstone, then reads and pops the item before, so each
/// item is popped once and none twice.
#[test]
fn two_hosts_popping_at_once_pop_two_items() {
    let storage = InMemoryStorage::new();
    add(&Store::new(&storage), "s", &run(), 1).unwrap();
    // The other host pops as this host asks for the session's lock.
    let popped_by_other = RefCell::new(None);
    let read_before_lock = Cell::new(false);
    let hook = |call: Call, key: &str| {
        let pending = popped_by_other.borrow().is_none();
        if call == Call::Read && key.ends_with(".jsonl") && pending {
            read_before_lock.set(true);
        }
        if call == Call::Lock && pending {
            let popped = pop(&Store::new(&storage), "s");
            *popped_by_other.borrow_mut() = Some(popped);
        }
    };
    let this_host = Store::new(Hooked { inner: &storage, hook });
    let popped_here = pop(&this_host, "s");
    let all = run();
    assert!(!read_before_lock.get(), "this host read the session only under its lock");
    assert_eq!(popped_by_other.borrow().clone().flatten().as_ref(), Some(&all[4]), "the other host popped the newest");
    assert_eq!(popped_here.as_ref(), Some(&all[3]), "this host popped the one before");
    assert_eq!(items(&Store::new(&storage), "s", None), Value::Array(all.as_array().unwrap()[..3].to_vec()));
}

/// A writer that takes no lock adds an item between a pop's read and its tombstone:
/// the pop reads again and takes that item, the newest, not the one it read first.
#[test]
fn a_pop_raced_by_a_writer_that_takes_no_lock_reads_again() {
    let storage = InMemoryStorage::new();
    add(&Store::new(&storage), "s", &run(), 1).unwrap();
    let key = block_on(storage.list("")).unwrap().into_iter().map(|info| info.key).find(|key| key.ends_with("/s.jsonl")).unwrap();
    // The other writer's lines, as they land: the same session with one more item.
    let elsewhere = InMemoryStorage::new();
    add(&Store::new(&elsewhere), "s", &run(), 1).unwrap();
    let meanwhile = json!([{"role": "user", "content": "written meanwhile"}]);
    add(&Store::new(&elsewhere), "s", &meanwhile, 2).unwrap();
    let ours = block_on(storage.read(&key, 0, None)).unwrap().len();
    let foreign = block_on(elsewhere.read(&key, 0, None)).unwrap()[ours..].to_vec();
    // The lines land on the first storage call after the pop read the session: the
    // write's own look at the session, under the lock, before the tombstone.
    let (read, raced) = (Cell::new(false), Cell::new(false));
    let hook = |call: Call, name: &str| {
        if read.get() && !raced.replace(true) {
            block_on(storage.append(&key, &foreign)).unwrap();
        }
        if call == Call::Read && name.ends_with("/s.jsonl") {
            read.set(true);
        }
    };
    let popped = pop(&Store::new(Hooked { inner: &storage, hook }), "s");
    assert!(raced.get(), "the item landed between the pop's read and its tombstone");
    assert_eq!(popped.as_ref(), Some(&meanwhile[0]), "the newest item, read again");
    assert_eq!(items(&Store::new(&storage), "s", None), run(), "the items read first are all there");
}
