//! Agent turns: full messages in every block type, validated, written in one write in
//! each dialect, and read back provider-ready.

use mneme_core::storage::faulty::Faulty;
use mneme_core::{Error, InMemoryStorage, Injection, NewEntry, Place, Provider, Role, Speaker, Storage, Store, Turn, block_on};
use serde_json::{Value, json};

const T0: i64 = 1_771_267_670_590;
const KEY: &str = "projects/-p/s.jsonl";

/// An Anthropic-shaped turn of `messages` at `T0` in project `/p` (shared with the other areas' tests).
pub(crate) fn turn(uuid: &str, messages: Value) -> Turn {
    Turn {
        uuid: uuid.into(),
        now_ms: T0,
        cwd: "/p".into(),
        provider: Provider::Anthropic,
        messages: messages.to_string(),
        parent: None,
        agent: None,
    }
}

/// A pi entry line of `kind` with `fields` besides its id, parent and time (shared with
/// the other areas' tests).
pub(crate) fn pi_entry(kind: &str, id: &str, parent: Option<&str>, fields: Value) -> String {
    let mut entry = json!({ "type": kind, "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z" });
    entry.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    entry.to_string()
}

/// A pi session `pi1` in project `-p` with its header alone.
fn new_pi_session(storage: &InMemoryStorage) {
    let header = json!({ "type": "session", "version": 3, "id": "pi1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p" });
    block_on(storage.append("projects/-p/pi1.jsonl", format!("{header}\n").as_bytes())).unwrap();
}

fn lines(storage: &InMemoryStorage, key: &str) -> Vec<Value> {
    let bytes = block_on(storage.read(key, 0, None)).unwrap();
    String::from_utf8(bytes).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn size(storage: &impl Storage) -> u64 {
    block_on(storage.list("")).unwrap().iter().map(|i| i.size).sum()
}

fn body(store: &Store<impl Storage>, provider: Provider, injections: &[Injection]) -> Value {
    let context = block_on(store.sessions().provider_context("s", provider, None, injections)).unwrap();
    serde_json::from_str(&context.body).unwrap()
}

/// A reply with every assistant block, and its results (one an error, one with an image).
fn tool_turn() -> Value {
    json!([
        { "role": "user", "content": [
            { "type": "text", "text": "what is in this picture and folder?" },
            { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo=" } },
            { "type": "document", "source": { "type": "text", "media_type": "text/plain", "data": "notes" } },
        ] },
        { "role": "assistant", "id": "msg_1", "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
          "usage": { "input_tokens": 100, "output_tokens": 30, "cache_read_input_tokens": 50, "cache_creation_input_tokens": 7 },
          "content": [
            { "type": "thinking", "thinking": "list it", "signature": "sig" },
            { "type": "redacted_thinking", "data": "opaque" },
            { "type": "text", "text": "Looking." },
            { "type": "tool_use", "id": "toolu_a", "name": "Bash", "input": { "command": "ls" } },
            { "type": "tool_use", "id": "toolu_b", "name": "Screenshot", "input": {} },
        ] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "toolu_b", "content": [
                { "type": "text", "text": "the screen" },
                { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "AAAA" } },
            ] },
            { "type": "tool_result", "tool_use_id": "toolu_a", "content": "ls: permission denied", "is_error": true },
        ] },
        { "role": "assistant", "id": "msg_2", "content": [{ "type": "text", "text": "Done." }] },
    ])
}

#[test]
fn a_turn_is_written_as_claude_code_writes_it() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let written = block_on(store.sessions().append_turn("s", turn("00000000-0000-4000-8000-000000000001", tool_turn()))).unwrap();
    let lines = lines(&storage, KEY);
    assert_eq!(written.len(), lines.len(), "every line written is returned");
    let shape: Vec<(String, Value)> =
        lines.iter().map(|l| (l["type"].as_str().unwrap().to_owned(), l["message"]["content"][0]["type"].clone())).collect();
    let expected = [
        ("user", Value::Null),
        ("assistant", json!("thinking")),
        ("assistant", json!("redacted_thinking")),
        ("assistant", json!("text")),
        ("assistant", json!("tool_use")),
        ("user", json!("tool_result")),
        ("assistant", json!("tool_use")),
        ("user", json!("tool_result")),
        ("assistant", json!("text")),
    ];
    let expected: Vec<(String, Value)> = expected.into_iter().map(|(t, v)| (t.to_owned(), v)).collect();
    // The prompt holds an image and a document: blocks, not a string.
    assert_eq!(lines[0]["message"]["content"][1]["type"], "image");
    assert_eq!(shape[1..], expected[1..], "one line per block; each call followed by its result");
    assert_eq!(lines[0]["uuid"], "00000000-0000-4000-8000-000000000001", "the first line has the host's id");
    for pair in lines.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"], "the lines chain in order");
    }
    let ids: std::collections::BTreeSet<&str> = lines.iter().map(|l| l["uuid"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), lines.len(), "derived ids are distinct");
    for line in &lines[1..5] {
        assert_eq!(line["message"]["id"], "msg_1", "split lines share message.id");
        assert_eq!(line["message"]["usage"]["cache_read_input_tokens"], 50, "and the reply's usage");
        assert_eq!(line["message"]["model"], "claude-sonnet-4-5");
    }
    assert_eq!(lines[5]["sourceToolAssistantUUID"], lines[4]["uuid"], "a result names the line of its call");
    assert_eq!(lines[5]["message"]["content"][0]["tool_use_id"], "toolu_a");
    assert_eq!(lines[7]["message"]["content"][0]["tool_use_id"], "toolu_b");

    let anthropic = body(&store, Provider::Anthropic, &[]);
    let messages = anthropic["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "prompt, the reply merged, its results together, the answer: {anthropic}");
    assert_eq!(messages[1]["content"].as_array().unwrap().len(), 5);
    let results: Vec<&str> = messages[2]["content"].as_array().unwrap().iter().map(|b| b["tool_use_id"].as_str().unwrap()).collect();
    assert_eq!(results, ["toolu_a", "toolu_b"]);
    assert!(anthropic.get("system").is_none());
    let check = block_on(store.sessions().check("s")).unwrap();
    assert!(!check.has_problems(), "{check:?}");
}

#[test]
fn the_openai_shape_goes_in_and_comes_out() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let messages = json!([
        { "role": "user", "content": [{ "type": "text", "text": "weather?" }, { "type": "image_url", "image_url": { "url": "data:image/png;base64,AAAA" } }] },
        { "role": "assistant", "content": null, "finish_reason": "tool_calls", "model": "gpt-4o",
          "usage": { "prompt_tokens": 40, "completion_tokens": 9, "prompt_tokens_details": { "cached_tokens": 30 } },
          "tool_calls": [{ "id": "call_1", "type": "function", "function": { "name": "weather", "arguments": "{\"city\":\"Oslo\"}" } }] },
        { "role": "tool", "tool_call_id": "call_1", "content": "rain" },
        { "role": "assistant", "content": "It rains in Oslo." },
    ]);
    let t = Turn { provider: Provider::Openai, ..turn("u1", messages) };
    block_on(store.sessions().append_turn("s", t)).unwrap();
    let lines = lines(&storage, KEY);
    assert_eq!(
        lines[1]["message"]["content"][0],
        json!({ "type": "tool_use", "id": "call_1", "name": "weather", "input": { "city": "Oslo" } })
    );
    assert_eq!(lines[1]["message"]["stop_reason"], "tool_use");
    assert_eq!(lines[1]["message"]["usage"]["input_tokens"], 10, "cached prompt tokens are cache reads");
    assert_eq!(lines[0]["message"]["content"][1]["source"], json!({ "type": "base64", "media_type": "image/png", "data": "AAAA" }));
    let openai = body(&store, Provider::Openai, &[Injection { role: Speaker::System, place: Place::Start, text: "be brief".into() }]);
    assert_eq!(
        openai["messages"],
        json!([
            { "role": "system", "content": "be brief" },
            { "role": "user", "content": [
                { "type": "text", "text": "weather?" },
                { "type": "image_url", "image_url": { "url": "data:image/png;base64,AAAA" } },
            ] },
            { "role": "assistant", "content": null, "tool_calls": [
                { "id": "call_1", "type": "function", "function": { "name": "weather", "arguments": "{\"city\":\"Oslo\"}" } },
            ] },
            { "role": "tool", "tool_call_id": "call_1", "content": "rain" },
            { "role": "assistant", "content": "It rains in Oslo." },
        ])
    );
}

#[test]
fn malformed_messages_are_refused_and_nothing_is_written() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(store.sessions().append_turn("s", turn("u0", json!({ "role": "user", "content": "hi" })))).unwrap();
    let before = size(&storage);
    let cases = [
        (json!([{ "role": "assistant", "content": [{ "type": "tool_use", "id": "t", "name": "x" }] }]), 0, "input"),
        (json!([{ "role": "assistant", "content": [{ "type": "text", "text": "" }] }]), 0, "empty"),
        (json!([{ "role": "user", "content": [{ "type": "thinking", "thinking": "x" }] }]), 0, "belongs in an assistant message"),
        (
            json!([{ "role": "assistant", "content": "ok" }, { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "nope" }] }]),
            1,
            "no pending call",
        ),
        (json!([{ "role": "user", "content": [{ "type": "image", "source": { "type": "file" } }] }]), 0, "source type"),
        (
            json!([{ "role": "user", "content": [{ "type": "image", "source": { "type": "base64", "media_type": "text/plain", "data": "aGVsbG8=" } }] }]),
            0,
            "media type `text/plain`",
        ),
        (
            json!([{ "role": "user", "content": [{ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "@@@ not base64" } }] }]),
            0,
            "a character base64 has not",
        ),
        (
            json!([{ "role": "user", "content": [{ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "AAAA===" } }] }]),
            0,
            "padded wrongly",
        ),
        (
            json!([{ "role": "user", "content": [{ "type": "image", "source": { "type": "url", "url": "/tmp/cat.png" } }] }]),
            0,
            "not an http(s) address",
        ),
        (
            json!([{ "role": "user", "content": [{ "type": "document", "source": { "type": "base64", "media_type": "text/plain", "data": "aGk=" } }] }]),
            0,
            "a PDF",
        ),
        (
            json!([{ "role": "user", "content": [{ "type": "document", "source": { "type": "base64", "media_type": "application/pdf", "data": "!!!" } }] }]),
            0,
            "base64",
        ),
        (
            json!([{ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t", "content": [
                { "type": "image", "source": { "type": "base64", "media_type": "image/bmp", "data": "AAAA" } },
            ] }] }]),
            0,
            "image/bmp",
        ),
        (json!([{ "role": "system", "content": "be brief" }]), 0, "injection"),
        (json!([{ "role": "user", "content": [] }]), 0, "no blocks"),
        (
            json!([{ "role": "assistant", "content": [{ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "AA" } }] }]),
            0,
            "belongs in a user message",
        ),
        (
            json!([
                { "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "ls", "input": {} }] },
                { "role": "user", "content": [
                    { "type": "tool_result", "tool_use_id": "t1", "content": "a" },
                    { "type": "tool_result", "tool_use_id": "t1", "content": "b" },
                ] },
            ]),
            1,
            "a second tool_result",
        ),
        (
            json!([{ "role": "assistant", "content": [
                { "type": "tool_use", "id": "t1", "name": "ls", "input": {} },
                { "type": "tool_use", "id": "t1", "name": "ls", "input": {} },
            ] }]),
            0,
            "id of another call",
        ),
        (
            json!([
                { "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "ls", "input": {} }] },
                { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "a" }] },
                { "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "ls", "input": {} }] },
            ]),
            2,
            "id of another call",
        ),
    ];
    for (messages, index, words) in cases {
        match block_on(store.sessions().append_turn("s", turn("u1", messages.clone()))) {
            Err(Error::InvalidMessage { message, reason }) => {
                assert_eq!(message, index, "{messages}: {reason}");
                assert!(reason.contains(words), "{messages}: `{reason}` should say `{words}`");
            }
            other => panic!("{messages}: {other:?}"),
        }
        assert_eq!(size(&storage), before, "{messages}: nothing was written");
    }
    let openai = Turn {
        provider: Provider::Openai,
        ..turn("u1", json!([{ "role": "assistant", "tool_calls": [{ "id": "c", "function": { "name": "f", "arguments": "{oops" } }] }]))
    };
    assert!(matches!(block_on(store.sessions().append_turn("s", openai)), Err(Error::InvalidMessage { .. })));
    assert_eq!(size(&storage), before);
    // OpenAI's messages are counted as the caller sent them, though a run of `tool`
    // messages becomes one message of results.
    let call = |id: &str| json!({ "id": id, "type": "function", "function": { "name": "f", "arguments": "{}" } });
    let image = |url: &str| json!([{ "role": "user", "content": [{ "type": "image_url", "image_url": { "url": url } }] }]);
    let openai_cases = [
        (
            json!([
                { "role": "assistant", "tool_calls": [call("a"), call("b")] },
                { "role": "tool", "tool_call_id": "a", "content": "ok" },
                { "role": "tool", "tool_call_id": "zz", "content": "ok" },
            ]),
            2,
            "no pending call",
        ),
        (
            json!([
                { "role": "assistant", "tool_calls": [call("a")] },
                { "role": "tool", "tool_call_id": "a", "content": "ok" },
                { "role": "tool", "tool_call_id": "a", "content": "again" },
            ]),
            2,
            "a second tool_result",
        ),
        (image("data:;base64,AAAA"), 0, "media type ``"),
        (image("data:image/svg+xml;base64,AAAA"), 0, "image/jpeg, image/png, image/gif or image/webp"),
        (image("data:image/png;base64,"), 0, "no data"),
        (image("data:image/png,AAAA"), 0, "must be base64"),
        (image("data:image/png;base64,@@@"), 0, "a character base64 has not at byte 0"),
        (image("data:image/png;base64,AAAAA"), 0, "5 characters long"),
        (image("not a url"), 0, "not an http(s) address"),
        (image("data:image/png;base64,\n"), 0, "nothing but line breaks"),
        (json!([{ "role": "user", "content": [{ "type": "text", "text": "" }] }]), 0, "content part 0"),
    ];
    for (messages, index, words) in openai_cases {
        let openai = Turn { provider: Provider::Openai, ..turn("u1", messages.clone()) };
        match block_on(store.sessions().append_turn("s", openai)) {
            Err(Error::InvalidMessage { message, reason }) => {
                assert_eq!(message, index, "{messages}: {reason}");
                assert!(reason.contains(words), "{messages}: `{reason}` should say `{words}`");
            }
            other => panic!("{messages}: {other:?}"),
        }
        assert_eq!(size(&storage), before, "{messages}: nothing was written");
    }
    // A refusal (OpenAI's `refusal`, no content) is the reply's text.
    let refusal =
        json!([{ "role": "user", "content": "help me" }, { "role": "assistant", "content": null, "refusal": "I can't help with that." }]);
    let written = block_on(store.sessions().append_turn("s", Turn { provider: Provider::Openai, ..turn("refusal", refusal) })).unwrap();
    assert_eq!(written[1].text, "I can't help with that.", "{written:?}");
    // A data URL's parameters are not the media type.
    let openai = Turn { provider: Provider::Openai, ..turn("u1", image("data:image/png;charset=utf-8;base64,AAAA")) };
    block_on(store.sessions().append_turn("s", openai)).unwrap();
    let image_line = lines(&storage, KEY).pop().unwrap();
    assert_eq!(image_line["message"]["content"][0]["source"]["media_type"], "image/png", "{image_line}");
    // OpenAI's `image/jpg` and a type or scheme in capitals are taken, stored as Anthropic names them.
    for (url, stored) in [("data:image/jpg;base64,AAAA", "image/jpeg"), ("data:IMAGE/PNG;base64,AAAA", "image/png")] {
        let openai = Turn { provider: Provider::Openai, now_ms: T0 + 2, ..turn(&format!("u-{stored}"), image(url)) };
        block_on(store.sessions().append_turn("s", openai)).unwrap();
        let image_line = lines(&storage, KEY).pop().unwrap();
        assert_eq!(image_line["message"]["content"][0]["source"]["media_type"], stored, "{url}: {image_line}");
    }
    let openai = Turn { provider: Provider::Openai, now_ms: T0 + 3, ..turn("u-https", image("HTTPS://example.com/cat.png")) };
    block_on(store.sessions().append_turn("s", openai)).unwrap();
    // base64 as encoders write it: padded or not, URL-safe, wrapped at 76 columns.
    for data in ["iVBORw0KGgo=", "iVBORw0KGgo", "ab-_", &format!("{}\r\n{}==\n", "A".repeat(76), "QQ")] {
        let source = json!({ "type": "base64", "media_type": "image/webp", "data": data });
        let message = json!({ "role": "user", "content": [{ "type": "image", "source": source }] });
        let written = block_on(store.sessions().append_turn("s", Turn { now_ms: T0 + 1, ..turn(&format!("img-{}", data.len()), message) }));
        assert!(written.is_ok(), "{data:?}: {written:?}");
    }
}

/// Text cut inside an emoji, as `JSON.stringify` writes it: a lone surrogate escape,
/// which JSON has no character for, becomes U+FFFD (as in a plain append's text);
/// a pair, and an escaped backslash before a `u`, are kept.
#[test]
fn a_lone_surrogate_in_a_turn_becomes_a_replacement_character() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let cut = r#"[{"role":"user","content":"log line \ud83d\ude00\ud83d"},{"role":"assistant","content":"a \\ud83d \udc00 b"}]"#;
    let written = block_on(store.sessions().append_turn("s", Turn { messages: cut.into(), ..turn("u0", json!(null)) })).unwrap();
    assert_eq!(written[0].text, "log line \u{1f600}\u{fffd}");
    assert_eq!(written[1].text, "a \\ud83d \u{fffd} b");
    let bad = block_on(
        store.sessions().append_turn("s", Turn { messages: r#"[{"role":"user","content":"\ud83d"#.into(), ..turn("u1", json!(null)) }),
    );
    assert!(matches!(&bad, Err(Error::InvalidArgument(reason)) if reason.contains("not valid JSON")), "{bad:?}");
    // The turn as a whole names no message.
    for (whole, says) in [("[]", "no messages"), ("7", "expected a message object")] {
        let refused = block_on(store.sessions().append_turn("s", Turn { messages: whole.into(), ..turn("u2", json!(null)) }));
        assert!(
            matches!(&refused, Err(Error::InvalidArgument(reason)) if reason.contains(says) && reason.ends_with("nothing was written")),
            "{refused:?}"
        );
    }
}

#[test]
fn results_may_come_in_a_later_write_but_only_for_the_last_reply() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let call = json!({ "role": "assistant", "id": "m1", "content": [{ "type": "tool_use", "id": "t1", "name": "Bash", "input": {} }] });
    let written = block_on(store.sessions().append_turn("s", turn("u1", call))).unwrap();
    let result = json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "ok" }] });
    // A fresh store reads the pending call from storage; the writing store from its cache.
    for (name, store) in [("fresh", &Store::new(&storage)), ("warm", &store)] {
        let scratch_before = size(&storage);
        let again = block_on(store.sessions().append_turn(
            "s",
            turn("u2", json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t9", "content": "x" }] })),
        ));
        assert!(matches!(again, Err(Error::InvalidMessage { .. })), "{name}: {again:?}");
        assert_eq!(size(&storage), scratch_before);
    }
    let answered = block_on(Store::new(&storage).sessions().append_turn("s", turn("u2", result.clone()))).unwrap();
    assert_eq!(answered[0].parent_uuid, written[0].uuid);
    let line = &lines(&storage, KEY)[1];
    assert_eq!(line["sourceToolAssistantUUID"], "u1");
    // Answered once: a second answer has no call to answer (the cache followed the write).
    let twice = block_on(store.sessions().append_turn("s", turn("u3", result)));
    assert!(matches!(twice, Err(Error::InvalidMessage { .. })), "{twice:?}");
}

#[test]
fn an_interrupted_call_gets_a_synthetic_result_and_injections_land_where_asked() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(
        store.sessions().append("s", NewEntry { uuid: "p1".into(), now_ms: T0, role: Role::User, text: "first".into(), cwd: "/p".into() }),
    )
    .unwrap();
    let call = json!({ "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "Bash", "input": {} }] });
    block_on(store.sessions().append_turn("s", turn("u1", call))).unwrap();
    let injections = [
        Injection { role: Speaker::User, place: Place::BeforeLastPrompt, text: "<recall>milk</recall>".into() },
        Injection { role: Speaker::System, place: Place::Start, text: "sys".into() },
        Injection { role: Speaker::User, place: Place::End, text: "<env>cwd=/p</env>".into() },
    ];
    let context = block_on(store.sessions().provider_context("s", Provider::Anthropic, None, &injections)).unwrap();
    assert_eq!(context.interrupted, ["t1"]);
    let body: Value = serde_json::from_str(&context.body).unwrap();
    assert_eq!(body["system"], "sys");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"][0]["text"], "<recall>milk</recall>", "before the newest prompt");
    assert_eq!(messages[0]["content"][1]["text"], "first");
    let results = &messages[2]["content"];
    assert_eq!((results[0]["tool_use_id"].as_str(), results[0]["is_error"].as_bool()), (Some("t1"), Some(true)));
    assert_eq!(results[1]["text"], "<env>cwd=/p</env>", "the result comes first, the injection after it");
    assert_eq!(messages.len(), 3, "{body}");
    // What is sent is counted, the system prompt too: a long one moves the estimate
    // as its text's tokens.
    let long = Injection { role: Speaker::System, place: Place::Start, text: "say less. ".repeat(100) };
    let with_long =
        block_on(store.sessions().provider_context("s", Provider::Anthropic, None, &[injections.to_vec(), vec![long.clone()]].concat()));
    let text_tokens = mneme_core::tokens::text_tokens;
    assert_eq!(with_long.unwrap().tokens - context.tokens, text_tokens(&format!("sys\n\n{}", long.text)) - text_tokens("sys"));
    let written = String::from_utf8(block_on(storage.read(KEY, 0, None)).unwrap()).unwrap();
    assert!(!written.contains("recall") && !written.contains("interrupted"), "injections and synthetic results are never written");
    // Without an injection after them, the synthetic results end the context with
    // Claude Code's "No response requested." so the next prompt alternates.
    let plain = body_of(&store);
    let last = plain["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last, json!({ "role": "assistant", "content": [{ "type": "text", "text": "No response requested." }] }));
    // Several injections at one place keep the order they were given in.
    let at = |place: Place, texts: [&str; 2]| texts.map(|text| Injection { role: Speaker::User, place, text: text.into() });
    for place in [Place::Start, Place::BeforeLastPrompt, Place::End] {
        let placed = self::body(&store, Provider::Anthropic, &at(place, ["one", "two"]));
        let texts: Vec<&str> = placed["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().unwrap())
            .filter_map(|b| b["text"].as_str().filter(|t| ["one", "two"].contains(t)))
            .collect();
        assert_eq!(texts, ["one", "two"], "{place:?}: {placed}");
    }
}

/// What a provider refuses in a request body, found: Anthropic wants roles
/// alternating, no empty message, no blank text, no reply ending in
/// thinking, every call answered first thing in the next message and at most four
/// `cache_control` marks; OpenAI an assistant message with content or calls.
fn refused_by_provider(body: &Value, provider: Provider) -> Option<String> {
    let Some(messages) = body["messages"].as_array() else { return Some(format!("no messages: {body}")) };
    if provider == Provider::Openai {
        // OpenAI's chat API takes call ids of at most 40 characters.
        let long_id = |id: &Value| id.as_str().is_none_or(|id| id.is_empty() || id.chars().count() > 40);
        return messages.iter().find_map(|m| {
            if m["role"] == "assistant" && m["content"].is_null() && m["tool_calls"].is_null() {
                return Some(format!("an assistant message with neither content nor calls: {m}"));
            }
            let calls = m["tool_calls"].as_array().into_iter().flatten().map(|c| &c["id"]);
            (calls.chain(m.get("tool_call_id")).any(long_id)).then(|| format!("a call id the API refuses: {m}"))
        });
    }
    let marks = body.to_string().matches("cache_control").count();
    if marks > 4 {
        return Some(format!("{marks} cache_control marks"));
    }
    let mut ids = std::collections::BTreeSet::new();
    let all_calls = messages.iter().filter_map(|m| m["content"].as_array()).flatten().filter(|b| b["type"] == "tool_use");
    if let Some(twice) = all_calls.map(|b| b["id"].to_string()).find(|id| !ids.insert(id.clone())) {
        return Some(format!("two calls of id {twice}"));
    }
    if messages.first().is_some_and(|first| first["role"] != "user") {
        return Some("the first message is not the user's".into());
    }
    for (n, message) in messages.iter().enumerate() {
        let Some(blocks) = message["content"].as_array() else { return Some(format!("message {n}'s content is no array")) };
        let assistant = message["role"] == "assistant";
        if n > 0 && messages[n - 1]["role"] == message["role"] {
            return Some(format!("message {n} breaks the alternation"));
        }
        if blocks.is_empty() {
            return Some(format!("message {n} is empty"));
        }
        if blocks.iter().any(|b| b["type"] == "text" && b["text"].as_str().is_some_and(|t| t.trim().is_empty())) {
            return Some(format!("message {n} has a blank text block"));
        }
        let thinking = |b: &Value| b["type"] == "thinking" || b["type"] == "redacted_thinking";
        if assistant && blocks.last().is_some_and(thinking) {
            return Some(format!("message {n} ends in thinking"));
        }
        // With thinking on, a last reply must start with its thinking.
        if assistant && blocks.iter().skip_while(|b| thinking(b)).any(thinking) {
            return Some(format!("message {n} has thinking after another block"));
        }
        let calls: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "tool_use").map(|b| &b["id"]).collect();
        let pattern = |id: &&Value| {
            id.as_str().is_some_and(|id| {
                !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            })
        };
        if !calls.iter().all(pattern) {
            return Some(format!("message {n} has a call id the API refuses"));
        }
        let results: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "tool_result").map(|b| &b["tool_use_id"]).collect();
        if results.iter().enumerate().any(|(k, id)| results[..k].contains(id)) {
            return Some(format!("message {n} answers a call twice"));
        }
        if !calls.is_empty() {
            let Some(next) = messages.get(n + 1).and_then(|m| m["content"].as_array()) else {
                return Some(format!("the calls of message {n} are answered by no message"));
            };
            let results: Vec<&Value> = next.iter().take_while(|b| b["type"] == "tool_result").map(|b| &b["tool_use_id"]).collect();
            if calls.iter().any(|call| !results.contains(call)) {
                return Some(format!("a call of message {n} is not answered first in the next"));
            }
        }
    }
    None
}

/// A local OpenAI-compatible server numbers its calls anew in each reply (`call_0`):
/// the second reply's call goes out under an id of its own, and its result with it,
/// in both shapes; the session keeps the ids as written.
#[test]
fn a_call_id_an_earlier_reply_had_goes_out_under_one_of_its_own() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for (n, output) in [(1, "first"), (2, "second")] {
        let messages = json!([
            { "role": "user", "content": format!("question {n}") },
            { "role": "assistant", "content": [{ "type": "tool_use", "id": "call_0", "name": "Bash", "input": { "n": n } }] },
            { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "call_0", "content": output }] },
        ]);
        block_on(store.sessions().append_turn("s", turn(&format!("t{n}"), messages))).unwrap();
    }
    for provider in [Provider::Anthropic, Provider::Openai] {
        let body = body(&store, provider, &[]);
        assert_eq!(refused_by_provider(&body, provider), None, "{body}");
        let text = body.to_string();
        assert_eq!(text.matches("call_0_1").count(), 2, "the second call and its result: {text}");
    }
    let sent = body(&store, Provider::Anthropic, &[]);
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!((messages[3]["content"][0]["id"].as_str(), messages[3]["content"][0]["input"]["n"].as_i64()), (Some("call_0_1"), Some(2)));
    assert_eq!(
        (messages[4]["content"][0]["tool_use_id"].as_str(), messages[4]["content"][0]["content"].as_str()),
        (Some("call_0_1"), Some("second"))
    );
    assert_eq!(lines(&storage, KEY).iter().filter(|l| l.to_string().contains("call_0_1")).count(), 0, "stored as written");
}

/// Replies the API would refuse sent back as they are recorded — one cut off while
/// thinking, one with a blank text block, blocks marked for caching — are sent in a
/// form it takes; an injection without text is refused; and injections before the last
/// prompt land before the context's own last prompt whatever order they are listed in.
#[test]
fn what_a_provider_refuses_is_never_sent() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let cached = json!({ "type": "ephemeral" });
    for n in 0..6 {
        let prompt = json!({ "role": "user", "content": [{ "type": "text", "text": format!("prompt {n}"), "cache_control": cached }] });
        block_on(store.sessions().append_turn("s", turn(&format!("p{n}"), prompt))).unwrap();
        let reply = match n {
            0 => json!({ "role": "assistant", "content": [{ "type": "thinking", "thinking": "hm", "signature": "c2ln" }] }),
            1 => json!({ "role": "assistant", "content": [{ "type": "text", "text": "\n\n" }, { "type": "text", "text": "ok" }] }),
            2 => {
                json!({ "role": "assistant", "content": [{ "type": "text", "text": "so" }, { "type": "redacted_thinking", "data": "x" }] })
            }
            3 => json!({ "role": "assistant", "content": [{ "type": "redacted_thinking", "data": "x" }] }),
            _ => json!({ "role": "assistant", "content": "fine" }),
        };
        block_on(store.sessions().append_turn("s", turn(&format!("r{n}"), reply))).unwrap();
    }
    let written = String::from_utf8(block_on(storage.read(KEY, 0, None)).unwrap()).unwrap();
    assert!(!written.contains("cache_control"), "where to cache is the request's, not the session's");
    // A session written with the marks (before Mneme took them off) is sent without them.
    let marked: String = (0..6)
        .map(|n| {
            let (kind, parent) =
                (if n % 2 == 0 { "user" } else { "assistant" }, if n == 0 { Value::Null } else { json!(format!("o{}", n - 1)) });
            let message = json!({ "role": kind, "content": [{ "type": "text", "text": format!("old {n}"), "cache_control": cached }] });
            format!("{}\n", json!({ "type": kind, "uuid": format!("o{n}"), "parentUuid": parent, "sessionId": "old", "message": message }))
        })
        .collect();
    block_on(storage.append("projects/-p/old.jsonl", marked.as_bytes())).unwrap();
    let old = block_on(store.sessions().provider_context("old", Provider::Anthropic, None, &[])).unwrap().body;
    assert!(!old.contains("cache_control") && old.contains("old 5"), "{old}");
    for provider in [Provider::Anthropic, Provider::Openai] {
        let sent = body(&store, provider, &[]);
        assert_eq!(refused_by_provider(&sent, provider), None, "{provider:?}: {sent}");
        assert!(sent.to_string().contains("prompt 0") && sent.to_string().contains("\"ok\""), "{sent}");
    }
    let anthropic = body_of(&store);
    let texts: Vec<String> = anthropic["messages"].as_array().unwrap().iter().map(|m| m["content"].to_string()).collect();
    assert!(texts.iter().any(|t| t.contains("\"so\"") && !t.contains("redacted")), "thinking at a reply's end goes: {texts:?}");
    for blank in ["", " \n"] {
        let injection = [Injection { role: Speaker::User, place: Place::End, text: blank.into() }];
        let refused = block_on(store.sessions().provider_context("s", Provider::Anthropic, None, &injection));
        assert!(matches!(&refused, Err(Error::InvalidArgument(m)) if m.contains("injection 0")), "{refused:?}");
    }
    let injections = [
        Injection { role: Speaker::User, place: Place::End, text: "env".into() },
        Injection { role: Speaker::User, place: Place::BeforeLastPrompt, text: "recall".into() },
    ];
    let placed = body(&store, Provider::Anthropic, &injections);
    let messages = placed["messages"].as_array().unwrap();
    let last = messages.len() - 1;
    assert_eq!(messages[last]["content"], json!([{ "type": "text", "text": "env" }]), "{placed}");
    assert_eq!(messages[last - 2]["content"][0]["text"], "recall", "{placed}");
    assert_eq!(messages[last - 2]["content"][1]["text"], "prompt 5", "{placed}");
}

fn body_of(store: &Store<impl Storage>) -> Value {
    body(store, Provider::Anthropic, &[])
}

#[test]
fn a_rewind_continues_from_an_earlier_message_and_keeps_the_rest() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for (i, text) in ["one", "two", "three"].into_iter().enumerate() {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        block_on(store.sessions().append_turn("s", turn(&format!("u{i}"), json!({ "role": role, "content": text })))).unwrap();
    }
    let rewind = Turn { parent: Some("u1".into()), now_ms: T0 + 1, ..turn("u3", json!({ "role": "user", "content": "three, again" })) };
    block_on(store.sessions().append_turn("s", rewind)).unwrap();
    let texts = |store: &Store<&InMemoryStorage>| -> Vec<String> {
        block_on(store.sessions().context("s")).unwrap().messages.into_iter().map(|m| String::from(m.text)).collect()
    };
    assert_eq!(texts(&store), ["one", "two", "three, again"]);
    assert_eq!(texts(&Store::new(&storage)), ["one", "two", "three, again"], "a fresh read agrees");
    assert_eq!(block_on(store.sessions().load("s")).unwrap().entries.len(), 4, "nothing was deleted");
    let next =
        block_on(store.sessions().append_turn("s", Turn { now_ms: T0 + 2, ..turn("u4", json!({ "role": "assistant", "content": "ok" })) }))
            .unwrap();
    assert_eq!(next[0].parent_uuid.as_deref(), Some("u3"), "the next append continues the new branch");
    let missing = Turn { parent: Some("nope".into()), ..turn("u5", json!({ "role": "user", "content": "x" })) };
    assert!(matches!(block_on(store.sessions().append_turn("s", missing)), Err(Error::EntryNotFound { .. })));
}

/// A rewind to a reply that made a call may answer it again (a retried tool); the
/// calls of the branch left behind are not the rewind's to answer.
#[test]
fn a_rewind_to_a_call_may_answer_it() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let call = |id: &str| json!({ "role": "assistant", "content": [{ "type": "tool_use", "id": id, "name": "Bash", "input": {} }] });
    let result =
        |id: &str, text: &str| json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": id, "content": text }] });
    block_on(store.sessions().append_turn("s", turn("u0", json!([{ "role": "user", "content": "go" }, call("t1")])))).unwrap();
    let t1_entry = block_on(store.sessions().load("s")).unwrap().entries[1].uuid.clone().unwrap();
    block_on(store.sessions().append_turn("s", Turn { now_ms: T0 + 1, ..turn("u1", json!([result("t1", "first"), call("t2")])) })).unwrap();
    let rewind = |uuid: &str, messages: Value| Turn { parent: Some(t1_entry.clone()), now_ms: T0 + 2, ..turn(uuid, messages) };
    let other_branch = block_on(store.sessions().append_turn("s", rewind("u2", result("t2", "not here"))));
    assert!(
        matches!(&other_branch, Err(Error::InvalidMessage { reason, .. }) if reason.contains("the entry the turn continues from")),
        "{other_branch:?}"
    );
    block_on(store.sessions().append_turn("s", rewind("u3", result("t1", "again")))).unwrap();
    let contents: Vec<String> =
        block_on(store.sessions().context("s")).unwrap().messages.into_iter().map(|m| String::from(m.content)).collect();
    assert_eq!(contents.len(), 3, "{contents:?}");
    assert!(contents[2].contains("again") && !contents.iter().any(|c| c.contains("first")), "{contents:?}");
}

/// A rewind to a reply's first line (before its call) goes on from there: the call
/// the reply made on the branch left behind, and its result, are not brought back
/// by the gathering of a reply's lines, and the context is the fork's from there.
#[test]
fn a_rewind_to_a_replys_first_line_leaves_its_later_lines_behind() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let reply = json!({ "role": "assistant", "id": "m1", "content": [
        { "type": "text", "text": "calling" },
        { "type": "tool_use", "id": "t1", "name": "Bash", "input": {} },
    ] });
    let result = json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "old result" }] });
    let written = block_on(store.sessions().append_turn(
        "s",
        turn("u0", json!([{ "role": "user", "content": "go" }, reply, result, { "role": "assistant", "content": "done" }])),
    ))
    .unwrap();
    let first_line = written[1].uuid.clone().unwrap();
    assert!(written[2].text.is_empty() && written[1].text == "calling", "the reply is written as a line per block: {written:?}");
    let rewind =
        Turn { parent: Some(first_line.clone()), now_ms: T0 + 1, ..turn("u1", json!({ "role": "user", "content": "never mind" })) };
    block_on(store.sessions().append_turn("s", rewind)).unwrap();
    for store in [&store, &Store::new(&storage)] {
        let context = block_on(store.sessions().context("s")).unwrap();
        let contents: Vec<&str> = context.messages.iter().map(|m| &*m.content).collect();
        assert_eq!(contents.len(), 3, "{contents:?}");
        assert!(!contents.iter().any(|c| c.contains("t1") || c.contains("old result")), "{contents:?}");
        let body = body_of(store);
        assert_eq!(refused_by_provider(&body, Provider::Anthropic), None, "{body}");
    }
    block_on(store.sessions().fork("s", Some(&first_line), "copy", T0 + 2)).unwrap();
    let forked: Vec<String> =
        block_on(store.sessions().context("copy")).unwrap().messages.into_iter().map(|m| String::from(m.text)).collect();
    assert_eq!(forked, ["go", "calling"], "the fork from the same line");
}

/// A conversation that opens with a reply (its writer began with a greeting, or its
/// first prompt was deleted) opens, for Anthropic, with a user message saying so: the
/// API refuses a first message that is not the user's. OpenAI's takes one as it is.
#[test]
fn a_context_that_opens_with_a_reply_opens_with_a_user_message_for_anthropic() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let written = block_on(store.sessions().append_turn(
        "s",
        turn("u0", json!([{ "role": "user", "content": "hi" }, { "role": "assistant", "content": "hello" }, { "role": "user", "content": "go on" }])),
    ))
    .unwrap();
    block_on(store.sessions().tombstone("s", written[0].uuid.as_deref().unwrap(), T0 + 1)).unwrap();
    let body = body_of(&store);
    assert_eq!(refused_by_provider(&body, Provider::Anthropic), None, "{body}");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"][0]["text"], "[The conversation opens with the assistant's message that follows.]", "{body}");
    assert_eq!((messages[1]["role"].as_str(), messages.len()), (Some("assistant"), 3), "{body}");
    let openai = self::body(&store, Provider::Openai, &[]);
    assert_eq!(openai["messages"][0]["role"], "assistant", "{openai}");
    block_on(store.sessions().append(
        "greeted",
        NewEntry { uuid: "g1".into(), now_ms: T0, role: Role::Assistant, text: "How can I help?".into(), cwd: "/p".into() },
    ))
    .unwrap();
    let greeted = block_on(store.sessions().provider_context("greeted", Provider::Anthropic, None, &[])).unwrap();
    let greeted: Value = serde_json::from_str(&greeted.body).unwrap();
    assert_eq!(refused_by_provider(&greeted, Provider::Anthropic), None, "{greeted}");
}

/// A rewind into the segment a compaction kept (relinked after its summary) gives a
/// chain through the summary back to the summarised history, not through the rest of
/// the segment it branched away from; a fork from there copies that chain.
#[test]
fn a_rewind_inside_a_kept_segment_leaves_the_rest_of_it_behind() {
    let storage = InMemoryStorage::new();
    let line = |kind: &str, uuid: &str, parent: Option<&str>, second: u32, extra: Value| {
        let mut line = json!({ "type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": false, "sessionId": "s", "cwd": "/p",
                "timestamp": format!("2026-01-01T00:00:{second:02}.000Z"),
                "message": { "role": kind, "content": format!("{uuid} says") } });
        line.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        line.to_string()
    };
    let boundary = json!({ "type": "system", "subtype": "compact_boundary", "uuid": "B", "parentUuid": null, "logicalParentUuid": "L",
        "isSidechain": false, "sessionId": "s", "timestamp": "2026-01-01T00:00:06.000Z", "content": "Conversation compacted",
        "compactMetadata": { "trigger": "manual", "preservedSegment": { "headUuid": "K", "anchorUuid": "S", "tailUuid": "L" } } });
    let text = [
        line("user", "R", None, 1, json!({})),
        line("assistant", "P", Some("R"), 2, json!({})),
        line("user", "K", Some("P"), 3, json!({})),
        line("assistant", "M", Some("K"), 4, json!({})),
        line("user", "L", Some("M"), 5, json!({})),
        boundary.to_string(),
        line("user", "S", Some("B"), 7, json!({ "isCompactSummary": true })),
    ]
    .join("\n")
        + "\n";
    block_on(storage.append(KEY, text.as_bytes())).unwrap();
    let store = Store::new(&storage);
    let rewind = Turn { parent: Some("M".into()), ..turn("N", json!({ "role": "user", "content": "again from M" })) };
    block_on(store.sessions().append_turn("s", rewind)).unwrap();
    let chain_of = |id: &str| -> Vec<String> {
        let transcript = block_on(store.sessions().load(id)).unwrap();
        transcript.chain.iter().map(|&i| transcript.entries[i as usize].uuid.clone().unwrap()).collect()
    };
    assert_eq!(chain_of("s"), ["R", "P", "B", "S", "K", "M", "N"]);
    block_on(store.sessions().fork("s", Some("N"), "f", T0)).unwrap();
    assert_eq!(chain_of("f"), ["R", "P", "B", "S", "K", "M", "N"], "the fork copies the same chain");
    let branches = block_on(store.sessions().branches("s")).unwrap();
    assert_eq!(branches.len(), 2, "the segment's tail is a branch of its own: {branches:?}");
}

/// A sub-agent's entry written inline in the main conversation (Claude Code before
/// 1.0) is no place to fork or rewind from: its chain is the sub-agent's talk.
#[test]
fn a_sub_agents_inline_entry_is_no_branch_point() {
    let storage = InMemoryStorage::new();
    let line = |uuid: &str, parent: Option<&str>, sidechain: bool, text: &str| {
        json!({ "type": "user", "uuid": uuid, "parentUuid": parent, "isSidechain": sidechain, "sessionId": "s", "cwd": "/p",
                "timestamp": "2026-01-01T00:00:00.000Z", "message": { "role": "user", "content": text } })
        .to_string()
    };
    let text =
        [line("m1", None, false, "main"), line("a1", None, true, "agent task"), line("m2", Some("m1"), false, "more")].join("\n") + "\n";
    block_on(storage.append(KEY, text.as_bytes())).unwrap();
    let store = Store::new(&storage);
    let rewind = Turn { parent: Some("a1".into()), ..turn("u9", json!({ "role": "user", "content": "x" })) };
    let refused = block_on(store.sessions().append_turn("s", rewind));
    assert!(matches!(&refused, Err(Error::InvalidArgument(m)) if m.contains("sub-agent")), "{refused:?}");
    let fork = block_on(store.sessions().fork("s", Some("a1"), "f", T0));
    assert!(matches!(&fork, Err(Error::InvalidArgument(m)) if m.contains("sub-agent")), "{fork:?}");
    block_on(store.sessions().fork("s", Some("m2"), "f", T0)).unwrap();
}

#[test]
fn pi_and_crab_sessions_get_their_own_dialect() {
    let storage = InMemoryStorage::new();
    new_pi_session(&storage);
    block_on(storage.append("projects/-p/crab1.jsonl", b"{\"agent\":\"crab\"}\n")).unwrap();
    let store = Store::new(&storage);
    let refused = block_on(store.sessions().append_turn("pi1", turn("11111111-aaaa-4bbb-8ccc-000000000000", tool_turn())));
    assert!(matches!(refused, Err(Error::Unsupported { .. })), "{refused:?}");
    // pi has no document blocks: the whole turn is refused, nothing written.
    assert_eq!(lines(&storage, "projects/-p/pi1.jsonl").len(), 1);
    let mut messages = tool_turn();
    messages[0]["content"].as_array_mut().unwrap().pop();
    block_on(store.sessions().append_turn("pi1", turn("11111111-aaaa-4bbb-8ccc-000000000000", messages))).unwrap();
    let pi = lines(&storage, "projects/-p/pi1.jsonl");
    let roles: Vec<&str> = pi[1..].iter().map(|l| l["message"]["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "toolResult", "assistant"]);
    assert_eq!(pi[2]["message"]["content"][4], json!({ "type": "toolCall", "id": "toolu_b", "name": "Screenshot", "arguments": {} }));
    assert_eq!(pi[2]["message"]["api"], "anthropic-messages");
    assert_eq!(pi[2]["message"]["usage"]["cacheRead"], 50);
    assert_eq!(pi[2]["message"]["stopReason"], "toolUse");
    assert_eq!((pi[3]["message"]["toolName"].as_str(), pi[3]["message"]["toolCallId"].as_str()), (Some("Screenshot"), Some("toolu_b")));
    assert_eq!(pi[4]["message"]["isError"], true);
    for pair in pi[1..].windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"]);
    }
    // Read back canonical: results say which call they answer.
    let body = block_on(Store::new(&storage).sessions().provider_context("pi1", Provider::Anthropic, None, &[])).unwrap().body;
    assert!(body.contains("\"tool_use_id\":\"toolu_b\"") && body.contains("\"type\":\"tool_use\""), "{body}");
    // A refusal is pi's `error`, which neither pi nor the context replays.
    let refusal =
        json!([{ "role": "user", "content": "and now?" }, { "role": "assistant", "stop_reason": "refusal", "content": "I can't" }]);
    block_on(store.sessions().append_turn("pi1", turn("22222222-aaaa-4bbb-8ccc-000000000000", refusal))).unwrap();
    let refused = lines(&storage, "projects/-p/pi1.jsonl").pop().unwrap();
    assert_eq!(
        (refused["message"]["stopReason"].as_str(), refused["message"]["errorMessage"].as_str()),
        (Some("error"), Some("Provider stop reason: refusal"))
    );
    let body = block_on(Store::new(&storage).sessions().provider_context("pi1", Provider::Anthropic, None, &[])).unwrap().body;
    assert!(body.contains("and now?") && !body.contains("I can't"), "{body}");

    let crab = block_on(store.sessions().append_turn("crab1", turn("c1", tool_turn())));
    assert!(matches!(crab, Err(Error::Unsupported { .. })), "{crab:?}");
    block_on(
        store
            .sessions()
            .append_turn("crab1", turn("c1", json!([{ "role": "user", "content": "hi" }, { "role": "assistant", "content": "hello" }]))),
    )
    .unwrap();
    assert_eq!(
        lines(&storage, "projects/-p/crab1.jsonl")[1..],
        [json!({ "role": "user", "content": "hi" }), json!({ "role": "assistant", "content": "hello" })]
    );
}

#[test]
fn a_turn_is_atomic_when_storage_fails_at_any_call() {
    let mut n = 1;
    loop {
        let storage = Faulty::new(InMemoryStorage::new(), n);
        let store = Store::new(&storage);
        let outcome = block_on(store.sessions().append_turn("s", turn("u1", tool_turn())));
        let stored = block_on(storage.inner.list("projects/")).unwrap();
        let lines = match stored.first() {
            Some(info) => String::from_utf8(block_on(storage.inner.read(&info.key, 0, None)).unwrap()).unwrap().lines().count(),
            None => 0,
        };
        match outcome {
            Ok(written) => {
                assert_eq!(lines, written.len());
                if storage.calls.get() < n {
                    break;
                }
            }
            Err(_) => assert_eq!(lines, 0, "failing call {n}: all or nothing"),
        }
        n += 1;
        assert!(n < 100, "the turn never succeeded");
    }
}

/// The ledger names what each sub-agent's replies reported, priced, apart from the
/// session's own total (a session's work costs both).
#[test]
fn the_ledger_counts_each_sub_agents_replies_apart() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let reply = |id: &str, content: Value, input: u64| json!({ "role": "assistant", "id": id, "content": content, "usage": { "input_tokens": input, "output_tokens": 10 } });
    let call = json!([{ "role": "user", "content": "go" }, reply("m1", json!([{ "type": "tool_use", "id": "task", "name": "Task", "input": {} }]), 1000)]);
    block_on(store.sessions().append_turn("p", turn("p1", call))).unwrap();
    let agent_turn = Turn {
        agent: Some(mneme_core::AgentRef { id: "sub".into(), parent_call: Some("task".into()) }),
        ..turn("s1", json!([{ "role": "user", "content": "look around" }, reply("m2", json!("done"), 300)]))
    };
    block_on(store.sessions().append_turn("p", agent_turn)).unwrap();
    let prices = mneme_core::Prices { input: 3.0, output: 15.0, cache_read: 0.3, cache_creation: 3.75 };
    let ledger = block_on(store.sessions().usage("p", Some(&prices))).unwrap();
    assert_eq!((ledger.total.input, ledger.replies), (1000, 1), "the session's own reply: {ledger:?}");
    assert_eq!(ledger.subagents.len(), 1, "{ledger:?}");
    let sub = &ledger.subagents[0];
    assert_eq!((sub.agent.as_str(), sub.usage.input, sub.usage.output, sub.replies), ("agent-sub", 300, 10, 1));
    assert!((sub.cost.unwrap() - (300.0 * 3.0 + 10.0 * 15.0) / 1e6).abs() < 1e-12, "{sub:?}");
}

/// A sub-agent's first turn is two writes, the session's link to it and then its
/// transcript: whichever storage call fails, the same turn given again completes it
/// (or, when what failed had landed, says so), with the transcript's lines once and
/// the sub-agent linked once from its call.
#[test]
fn a_sub_agents_first_turn_failing_at_any_call_completes_when_given_again() {
    let agent_turn = || Turn {
        agent: Some(mneme_core::AgentRef { id: "sub".into(), parent_call: Some("task".into()) }),
        ..turn("s1", json!([{ "role": "user", "content": "look around" }, { "role": "assistant", "content": "done" }]))
    };
    // A failing write that writes nothing, or (`landed`) one that lands whole and then
    // reports an error: given again, the turn is completed, or refused as landed.
    for (n, landed) in (1..).flat_map(|n| [(n, false), (n, true)]) {
        let storage = if landed { Faulty::new(InMemoryStorage::new(), n).landed() } else { Faulty::new(InMemoryStorage::new(), n) };
        let call = json!([{ "role": "user", "content": "go" }, { "role": "assistant", "content": [{ "type": "tool_use", "id": "task", "name": "Task", "input": {} }] }]);
        block_on(Store::new(&storage.inner).sessions().append_turn("p", turn("p1", call))).unwrap();
        let failed = block_on(Store::new(&storage).sessions().append_turn("p", agent_turn())).is_err();
        if failed {
            match block_on(Store::new(&storage.inner).sessions().append_turn("p", agent_turn())) {
                Ok(_) => {}
                Err(Error::InvalidArgument(message)) if landed && message.contains("landed before") => {}
                Err(error) => panic!("failing call {n}: {error}"),
            }
        }
        let transcript = lines(&storage.inner, "projects/-p/p/subagents/agent-sub.jsonl");
        let texts: Vec<&Value> = transcript.iter().map(|line| &line["message"]["content"]).collect();
        assert_eq!(texts, [&json!("look around"), &json!([{ "type": "text", "text": "done" }])], "failing call {n}, landed {landed}");
        let links = lines(&storage.inner, KEY.replace("/s.", "/p.").as_str())
            .into_iter()
            .filter(|line| line["type"] == "progress" && line["data"]["agentId"] == "sub" && line["parentToolUseID"] == "task")
            .count();
        assert_eq!(links, 1, "failing call {n}, landed {landed}");
        let subagents = block_on(Store::new(&storage.inner).sessions().subagents("p")).unwrap();
        assert_eq!(subagents.len(), 1, "failing call {n}");
        if !failed && landed {
            break;
        }
        assert!(n < 100, "the turn never succeeded");
    }
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(store.sessions().append_turn("p", turn("p1", json!({ "role": "user", "content": "go" })))).unwrap();
    let rewound = Turn { parent: Some("p1".into()), ..agent_turn() };
    assert!(matches!(block_on(store.sessions().append_turn("p", rewound)), Err(Error::InvalidArgument(ref m)) if m.contains("`parent`")));
}

/// A turn read from JSON (the browser's binding) refuses a sub-agent key spelled
/// otherwise: ignored, it would write the sub-agent without its link.
#[test]
fn a_sub_agent_key_spelled_otherwise_is_refused() {
    let turn = |agent: Value| json!({ "uuid": "u", "now_ms": T0, "cwd": "/p", "provider": "anthropic", "messages": "[]", "parent": null, "agent": agent });
    let read = |agent: Value| serde_json::from_value::<Turn>(turn(agent));
    assert_eq!(read(json!({ "id": "a", "parent_call": "c" })).unwrap().agent.unwrap().parent_call.as_deref(), Some("c"));
    let refused = read(json!({ "id": "a", "parentCall": "c" })).unwrap_err().to_string();
    assert!(refused.contains("parentCall"), "{refused}");
}

/// Two sub-agents started by one reply: the first's turn fails after its link landed,
/// the second is linked after it, and the first's turn given again is linked once.
#[test]
fn a_sub_agents_first_turn_given_again_after_another_links_once() {
    let agent_turn = |agent: &str, call: &str| Turn {
        agent: Some(mneme_core::AgentRef { id: agent.into(), parent_call: Some(call.into()) }),
        ..turn(&format!("{agent}-1"), json!([{ "role": "user", "content": "look around" }, { "role": "assistant", "content": "done" }]))
    };
    let mut cases = 0;
    for n in 1.. {
        let storage = Faulty::new(InMemoryStorage::new(), n);
        let calls = json!([
            { "role": "user", "content": "go" },
            { "role": "assistant", "content": [
                { "type": "tool_use", "id": "c1", "name": "Task", "input": {} },
                { "type": "tool_use", "id": "c2", "name": "Task", "input": {} },
            ] },
        ]);
        block_on(Store::new(&storage.inner).sessions().append_turn("p", turn("p1", calls))).unwrap();
        if block_on(Store::new(&storage).sessions().append_turn("p", agent_turn("a", "c1"))).is_ok() {
            break;
        }
        if block_on(storage.inner.list("projects/-p/p/subagents/agent-a.jsonl")).unwrap().len() == 1 {
            continue;
        }
        cases += 1;
        block_on(Store::new(&storage.inner).sessions().append_turn("p", agent_turn("b", "c2"))).unwrap();
        block_on(Store::new(&storage.inner).sessions().append_turn("p", agent_turn("a", "c1"))).unwrap();
        let session = lines(&storage.inner, KEY.replace("/s.", "/p.").as_str());
        for agent in ["a", "b"] {
            let links = session.iter().filter(|line| line["type"] == "progress" && line["data"]["agentId"] == agent).count();
            assert_eq!(links, 1, "failing call {n}, sub-agent {agent}");
        }
        let ids: Vec<&str> = session.iter().filter_map(|line| line["uuid"].as_str()).collect();
        assert!(ids.iter().all(|id| ids.iter().filter(|other| *other == id).count() == 1), "failing call {n}: {ids:?}");
    }
    assert!(cases > 0, "no failing call left the link without the transcript");
}

/// A sub-agent's transcript is capped like a session's: the turn that would take it
/// past `total_bytes` is refused with its own error, writes nothing, and the session
/// itself still takes turns.
#[test]
fn a_sub_agents_transcript_is_capped_at_the_sessions_limit() {
    let storage = InMemoryStorage::new();
    let store = Store::with_limits(&storage, mneme_core::Limits { part_bytes: 1 << 20, total_bytes: 4000 });
    let call = json!([{ "role": "user", "content": "go" }, { "role": "assistant", "content": [{ "type": "tool_use", "id": "task", "name": "Task", "input": {} }] }]);
    block_on(store.sessions().append_turn("p", turn("p1", call))).unwrap();
    let agent_turn = |n: usize| Turn {
        agent: Some(mneme_core::AgentRef { id: "sub".into(), parent_call: Some("task".into()) }),
        ..turn(&format!("a{n}"), json!([{ "role": "user", "content": "x".repeat(600) }, { "role": "assistant", "content": "done" }]))
    };
    let key = "projects/-p/p/subagents/agent-sub.jsonl";
    let mut refused = None;
    for n in 0..10 {
        let before = block_on(storage.read(key, 0, None)).unwrap_or_default();
        match block_on(store.sessions().append_turn("p", agent_turn(n))) {
            Ok(_) => assert!(block_on(storage.read(key, 0, None)).unwrap().len() <= 4000, "turn {n} passed the cap"),
            Err(error) => {
                assert_eq!(block_on(storage.read(key, 0, None)).unwrap(), before, "the refused turn {n} wrote");
                refused = Some(error);
                break;
            }
        }
    }
    let refused = refused.expect("the sub-agent's transcript was never refused");
    assert!(
        matches!(&refused, Error::SubagentFull { id, agent, limit: 4000, bytes } if id == "p" && agent == "sub" && *bytes > 2000),
        "{refused:?}"
    );
    assert_eq!(refused.kind(), "subagent-full");
    assert!(refused.to_string().contains("new sub-agent"), "{refused}");
    let result = json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "task", "content": "ok" }] });
    block_on(store.sessions().append_turn("p", turn("p2", result))).unwrap();
}

/// A sub-agent's transcript is read once: its later turns read nothing (their cost
/// does not grow with the transcript), and what another writer appended meanwhile,
/// whole or torn, is still followed.
#[test]
fn a_sub_agents_turns_read_its_transcript_once() {
    let storage = InMemoryStorage::new();
    let reads = Faulty::new(&storage, 0).only("read");
    let store = Store::new(&reads);
    let call = json!([{ "role": "user", "content": "go" }, { "role": "assistant", "content": [{ "type": "tool_use", "id": "task", "name": "Task", "input": {} }] }]);
    block_on(store.sessions().append_turn("p", turn("p1", call))).unwrap();
    let agent_turn = |uuid: &str, n: usize| Turn {
        agent: Some(mneme_core::AgentRef { id: "sub".into(), parent_call: Some("task".into()) }),
        ..turn(
            uuid,
            json!([
                { "role": "user", "content": format!("step {n}") },
                { "role": "assistant", "content": [{ "type": "tool_use", "id": format!("c{n}"), "name": "Read", "input": {} }] },
                { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": format!("c{n}"), "content": "x".repeat(500) }] },
                { "role": "assistant", "content": "done" },
            ]),
        )
    };
    block_on(store.sessions().append_turn("p", agent_turn("a0", 0))).unwrap();
    let before = reads.calls.get();
    for n in 1..30 {
        block_on(store.sessions().append_turn("p", agent_turn(&format!("a{n}"), n))).unwrap();
    }
    assert_eq!(reads.calls.get(), before, "a sub-agent's later turns read storage");
    let key = "projects/-p/p/subagents/agent-sub.jsonl";
    // Another writer's turn, then a torn line: both are found by the next turn.
    block_on(Store::new(&storage).sessions().append_turn("p", agent_turn("other", 30))).unwrap();
    let other_leaf = lines(&storage, key).last().unwrap()["uuid"].clone();
    block_on(storage.append(key, b"{\"type\":\"user\",\"uu")).unwrap();
    block_on(store.sessions().append_turn("p", agent_turn("a31", 31))).unwrap();
    let transcript = lines(&storage, key);
    let first_new = transcript.iter().position(|l| l["uuid"] == "a31").expect("the turn after the other writer's");
    assert_eq!(transcript[first_new]["parentUuid"], other_leaf, "the turn continues from the other writer's");
    assert_eq!(transcript.len(), 32 * 4, "every turn's lines once, the torn one moved aside");
    assert!(block_on(storage.list(&format!("{key}.torn-"))).unwrap().len() == 1, "the torn line is kept beside the transcript");
}

/// A sub-agent's turn whose append failed with an I/O error (here: it landed, then
/// failed) leaves the session refusing turns until it is reopened, as a session's own
/// write does; given again after that, the landed turn is refused as a repeat.
#[test]
fn a_sub_agents_failed_append_poisons_the_session_until_reopened() {
    let storage = InMemoryStorage::new();
    let appends = Faulty::new(&storage, 0).only("append").landed();
    let store = Store::new(&appends);
    let call = json!([{ "role": "user", "content": "go" }, { "role": "assistant", "content": [{ "type": "tool_use", "id": "task", "name": "Task", "input": {} }] }]);
    block_on(store.sessions().append_turn("p", turn("p1", call))).unwrap();
    let agent_turn = |uuid: &str| Turn {
        agent: Some(mneme_core::AgentRef { id: "sub".into(), parent_call: Some("task".into()) }),
        ..turn(uuid, json!([{ "role": "user", "content": format!("step {uuid}") }, { "role": "assistant", "content": "done" }]))
    };
    block_on(store.sessions().append_turn("p", agent_turn("a1"))).unwrap();
    appends.fail_at.set(appends.calls.get() + 1);
    let failed = block_on(store.sessions().append_turn("p", agent_turn("a2")));
    assert!(matches!(failed, Err(Error::Storage(mneme_core::StorageError::Io { .. }))), "{failed:?}");
    let refused = block_on(store.sessions().append_turn("p", agent_turn("a3")));
    assert!(matches!(&refused, Err(Error::SessionPoisoned { id }) if id == "p"), "{refused:?}");
    store.sessions().reopen("p");
    let repeated = block_on(store.sessions().append_turn("p", agent_turn("a2")));
    assert!(matches!(&repeated, Err(Error::InvalidArgument(m)) if m.contains("already ends with")), "{repeated:?}");
    block_on(store.sessions().append_turn("p", agent_turn("a3"))).unwrap();
    let transcript = lines(&storage, "projects/-p/p/subagents/agent-sub.jsonl");
    let uuids: Vec<&str> = transcript.iter().map(|l| l["uuid"].as_str().unwrap()).collect();
    assert_eq!(uuids.len(), 6, "{uuids:?}");
    assert_eq!(transcript[4]["parentUuid"], transcript[3]["uuid"], "the turn after the reopen continues from the landed one");
}

/// What OpenAI's shape has no place for in a user message — an image given as a file, a
/// block of a kind it lacks — is sent as a marker, never dropped unseen.
#[test]
fn what_openai_has_no_place_for_is_marked() {
    let storage = InMemoryStorage::new();
    let content = json!([
        { "type": "text", "text": "look" },
        { "type": "image", "source": { "type": "file", "file_id": "file_1" } },
        { "type": "search_result", "source": "https://example.com", "title": "t", "content": [] },
    ]);
    let line =
        json!({ "type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "s", "message": { "role": "user", "content": content } });
    block_on(storage.append(KEY, format!("{line}\n").as_bytes())).unwrap();
    let store = Store::new(&storage);
    let openai = body(&store, Provider::Openai, &[]);
    let parts: Vec<&str> = openai["messages"][0]["content"].as_array().unwrap().iter().map(|p| p["text"].as_str().unwrap()).collect();
    assert_eq!(parts, ["look", "[image]", "[search_result]"]);
}

/// Call ids other providers write (`functions.bash:0`; OpenAI's Responses API: 450
/// characters with `|`) are sent to each provider rewritten to ids it takes, the same
/// in the call and its result: Anthropic takes neither, OpenAI's chat API takes the
/// first as it is and no id longer than 40 characters.
#[test]
fn call_ids_a_provider_refuses_are_rewritten_for_it() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let long = format!("call_{}|fc_{}", "a".repeat(200), "b".repeat(240));
    let long_too = format!("call_{}|fc_{}", "a".repeat(200), "c".repeat(240));
    let messages = json!([
        { "role": "user", "content": "go" },
        { "role": "assistant", "content": null, "tool_calls": [
            { "id": "functions.bash:0", "type": "function", "function": { "name": "bash", "arguments": "{}" } },
            { "id": long, "type": "function", "function": { "name": "read", "arguments": "{}" } },
            { "id": long_too, "type": "function", "function": { "name": "read", "arguments": "{}" } },
            { "id": "call_ok", "type": "function", "function": { "name": "read", "arguments": "{}" } },
        ] },
        { "role": "tool", "tool_call_id": "functions.bash:0", "content": "one" },
        { "role": "tool", "tool_call_id": long, "content": "two" },
        { "role": "tool", "tool_call_id": long_too, "content": "three" },
        { "role": "tool", "tool_call_id": "call_ok", "content": "four" },
    ]);
    block_on(store.sessions().append_turn("s", Turn { provider: Provider::Openai, ..turn("u", messages) })).unwrap();
    let anthropic = body(&store, Provider::Anthropic, &[]);
    assert_eq!(refused_by_provider(&anthropic, Provider::Anthropic), None, "{anthropic}");
    let calls: Vec<&str> = anthropic["messages"][1]["content"].as_array().unwrap().iter().map(|b| b["id"].as_str().unwrap()).collect();
    let results: Vec<&str> =
        anthropic["messages"][2]["content"].as_array().unwrap().iter().map(|b| b["tool_use_id"].as_str().unwrap()).collect();
    assert_eq!(calls, results);
    assert_eq!(calls[0], "functions_bash_0");
    assert_eq!(calls[3], "call_ok");
    assert!(calls.iter().all(|id| id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')), "{calls:?}");
    assert_ne!(calls[1], calls[2], "two ids cut to the same start stay two");
    let openai = body(&store, Provider::Openai, &[]);
    assert_eq!(refused_by_provider(&openai, Provider::Openai), None, "{openai}");
    let calls: Vec<&str> = openai["messages"][1]["tool_calls"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    let results: Vec<&str> = openai["messages"].as_array().unwrap()[2..6].iter().map(|m| m["tool_call_id"].as_str().unwrap()).collect();
    assert_eq!(calls, results);
    assert_eq!([calls[0], calls[3]], ["functions.bash:0", "call_ok"]);
    assert_ne!(calls[1], calls[2], "two ids cut to the same start stay two");
    // An empty id (in a file some other tool wrote: Mneme refuses one) gets one
    // Anthropic takes.
    let storage = InMemoryStorage::new();
    let lines = [
        json!({ "type": "user", "uuid": "u1", "parentUuid": null, "message": { "role": "user", "content": "go" } }),
        json!({ "type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": { "role": "assistant", "content": [{ "type": "tool_use", "id": "", "name": "bash", "input": {} }] } }),
        json!({ "type": "user", "uuid": "r1", "parentUuid": "a1", "message": { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "", "content": "ok" }] } }),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    block_on(storage.append(KEY, text.as_bytes())).unwrap();
    let anthropic = body(&Store::new(&storage), Provider::Anthropic, &[]);
    assert_eq!(refused_by_provider(&anthropic, Provider::Anthropic), None, "{anthropic}");
    assert_eq!(anthropic["messages"][1]["content"][0]["id"], anthropic["messages"][2]["content"][0]["tool_use_id"]);
}

/// Two replies in a row (a reply given after one that stopped), the second thinking
/// before its call, are one message with the thinking first, as Anthropic takes a last
/// reply when thinking is on.
#[test]
fn two_replies_in_a_row_are_one_message_with_the_thinking_first() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let messages = json!([
        { "role": "user", "content": "go" },
        { "role": "assistant", "content": [{ "type": "text", "text": "Let me look." }] },
        { "role": "assistant", "content": [
            { "type": "thinking", "thinking": "ls first", "signature": "sig" },
            { "type": "tool_use", "id": "t1", "name": "bash", "input": {} },
        ] },
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "a.txt" }] },
    ]);
    block_on(store.sessions().append_turn("s", turn("u", messages))).unwrap();
    let anthropic = body(&store, Provider::Anthropic, &[]);
    assert_eq!(refused_by_provider(&anthropic, Provider::Anthropic), None, "{anthropic}");
    let kinds: Vec<&str> = anthropic["messages"][1]["content"].as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["thinking", "text", "tool_use"]);
}

/// A call whose result a file holds twice (written again, or two result messages in a
/// row merged into one) is answered once, by the later result, in both shapes.
#[test]
fn a_call_answered_twice_is_sent_its_later_result() {
    let storage = InMemoryStorage::new();
    let lines = [
        json!({ "type": "user", "uuid": "u1", "parentUuid": null, "message": { "role": "user", "content": "go" } }),
        json!({ "type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": { "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "bash", "input": {} }] } }),
        json!({ "type": "user", "uuid": "r1", "parentUuid": "a1", "message": { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "first" }] } }),
        json!({ "type": "user", "uuid": "r2", "parentUuid": "r1", "message": { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "second" }] } }),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    block_on(storage.append(KEY, text.as_bytes())).unwrap();
    let store = Store::new(&storage);
    let anthropic = body(&store, Provider::Anthropic, &[]);
    assert_eq!(refused_by_provider(&anthropic, Provider::Anthropic), None, "{anthropic}");
    assert_eq!(anthropic["messages"][2]["content"], json!([{ "type": "tool_result", "tool_use_id": "t1", "content": "second" }]));
    let openai = body(&store, Provider::Openai, &[]);
    let tools: Vec<&Value> = openai["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tools.len(), 1, "{openai}");
    assert_eq!(tools[0]["content"], "second");
}

/// A reply's parallel calls as Claude Code 2.1 chains them: each result under its
/// call's line, the reply's next line under the last result. Resume sends every
/// result; a rewind to the first call may answer it again, and then only the new
/// result is sent.
#[test]
fn parallel_results_are_gathered_but_a_rewinds_result_replaces_them() {
    let storage = InMemoryStorage::new();
    let line = |uuid: &str, parent: &str, kind: &str, message: Value| {
        json!({ "type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "timestamp": "2026-01-01T00:00:00.000Z",
                "isSidechain": false, "cwd": "/p", "message": message })
    };
    let call =
        |id: &str| json!({ "role": "assistant", "id": "m1", "content": [{ "type": "tool_use", "id": id, "name": "Bash", "input": {} }] });
    let result =
        |id: &str, text: &str| json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": id, "content": text }] });
    let lines = [
        json!({ "type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "s", "timestamp": "2026-01-01T00:00:00.000Z", "isSidechain": false, "cwd": "/p", "message": { "role": "user", "content": "go" } }),
        line("a1", "u1", "assistant", call("t1")),
        json!({ "type": "progress", "uuid": "p1", "parentUuid": "a1", "sessionId": "s", "timestamp": "2026-01-01T00:00:00.000Z", "data": { "type": "hook_progress" } }),
        line("a2", "p1", "assistant", call("t2")),
        line("r1", "a1", "user", result("t1", "one")),
        line("r2", "a2", "user", result("t2", "two")),
        line("a3", "r2", "assistant", json!({ "role": "assistant", "id": "m2", "content": [{ "type": "text", "text": "done" }] })),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    block_on(storage.append(KEY, text.as_bytes())).unwrap();
    let store = Store::new(&storage);
    let sent = |store: &Store<&InMemoryStorage>| {
        let context = block_on(store.sessions().provider_context("s", Provider::Anthropic, None, &[])).unwrap();
        let body: Value = serde_json::from_str(&context.body).unwrap();
        let results: Vec<(String, String)> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().unwrap().clone())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| (b["tool_use_id"].as_str().unwrap().to_owned(), b["content"].as_str().unwrap_or("").to_owned()))
            .collect();
        (context.interrupted, results, body)
    };
    let (interrupted, results, body) = sent(&store);
    assert!(interrupted.is_empty(), "{body}");
    assert_eq!(results, [("t1".into(), "one".into()), ("t2".into(), "two".into())], "{body}");
    assert_eq!(refused_by_provider(&body, Provider::Anthropic), None, "{body}");
    // A rewind to the first call retries it: its new result is the chain's, the old one is not sent.
    let retry = Turn { parent: Some("a1".into()), ..turn("retry", result("t1", "again")) };
    block_on(store.sessions().append_turn("s", retry)).unwrap();
    let (interrupted, results, body) = sent(&store);
    assert!(interrupted.is_empty(), "{body}");
    assert_eq!(results, [("t1".into(), "again".into())], "{body}");
    // Back on the first branch, both results for t1 hang off it: one is sent, the later.
    let back = Turn { parent: Some("a3".into()), ..turn("back", json!({ "role": "user", "content": "go on" })) };
    block_on(store.sessions().append_turn("s", back)).unwrap();
    let (interrupted, results, body) = sent(&store);
    assert!(interrupted.is_empty(), "{body}");
    assert_eq!(results, [("t1".into(), "again".into()), ("t2".into(), "two".into())], "{body}");
    assert_eq!(refused_by_provider(&body, Provider::Anthropic), None, "{body}");
}

/// OpenAI's shape has no place for an image in a tool result or for a document: a
/// text document goes as text, the rest as a marker, never silently dropped. Its
/// `developer` prompt, like a system one, is no part of a session.
#[test]
fn what_openai_cannot_hold_is_marked_and_a_developer_prompt_is_refused() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(store.sessions().append_turn("s", turn("u1", tool_turn()))).unwrap();
    let openai = body(&store, Provider::Openai, &[]);
    let messages = openai["messages"].as_array().unwrap();
    assert_eq!(
        messages[0]["content"],
        json!([
            { "type": "text", "text": "what is in this picture and folder?" },
            { "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw0KGgo=" } },
            { "type": "text", "text": "notes" },
        ])
    );
    let screen = messages.iter().find(|m| m["tool_call_id"] == "toolu_b").unwrap();
    assert_eq!(screen["content"], "the screen\n[image]");
    let developer = Turn { provider: Provider::Openai, ..turn("u2", json!({ "role": "developer", "content": "be brief" })) };
    let refused = block_on(store.sessions().append_turn("s", developer));
    assert!(matches!(refused, Err(Error::InvalidMessage { ref reason, .. }) if reason.contains("developer prompt")), "{refused:?}");
}

/// What pi shows the model besides its messages: a command run with `!` (not one run
/// with `!!`), an extension's message, and the summary of a branch the conversation
/// came back from, each as a user message in pi's words.
#[test]
fn a_pi_sessions_commands_extension_messages_and_branch_summaries_are_in_its_context() {
    let storage = InMemoryStorage::new();
    let entry = pi_entry;
    let message = |id: &str, parent: &str, message: Value| entry("message", id, Some(parent), json!({ "message": message }));
    let text = [
        json!({ "type": "session", "version": 3, "id": "pi1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p" }).to_string(),
        message("a", "x", json!({ "role": "user", "content": "hello", "timestamp": 1 })).replace("\"parentId\":\"x\"", "\"parentId\":null"),
        message("b", "a", json!({ "role": "bashExecution", "command": "ls", "output": "a.txt", "exitCode": 2, "cancelled": false, "truncated": true, "fullOutputPath": "/tmp/out", "timestamp": 2 })),
        message("c", "b", json!({ "role": "bashExecution", "command": "secret", "output": "x", "exitCode": 0, "cancelled": false, "truncated": false, "excludeFromContext": true, "timestamp": 3 })),
        entry("custom_message", "d", Some("c"), json!({ "customType": "ext", "content": "from an extension", "display": true })),
        message("e", "d", json!({ "role": "custom", "customType": "ext", "content": [{ "type": "text", "text": "custom role" }], "display": false, "timestamp": 4 })),
        entry("branch_summary", "f", Some("e"), json!({ "fromId": "zz", "summary": "tried X, it failed" })),
        message("g", "f", json!({ "role": "assistant", "content": [{ "type": "text", "text": "ok" }], "api": "anthropic-messages", "provider": "anthropic", "model": "m", "usage": { "input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2 }, "stopReason": "stop", "timestamp": 5 })),
    ]
    .join("\n")
        + "\n";
    block_on(storage.append("projects/-p/pi1.jsonl", text.as_bytes())).unwrap();
    let store = Store::new(&storage);
    let context = block_on(store.sessions().context("pi1")).unwrap();
    let seen: Vec<(String, String)> = context.messages.iter().map(|m| (m.role.clone(), String::from(m.text.clone()))).collect();
    let expected = [
        ("user", "hello"),
        ("user", "Ran `ls`\n```\na.txt\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/out]"),
        ("user", "from an extension"),
        ("user", "custom role"),
        (
            "user",
            "The following is a summary of a branch that this conversation came back from:\n\n<summary>\ntried X, it failed</summary>",
        ),
        ("assistant", "ok"),
    ];
    assert_eq!(seen, expected.map(|(role, text)| (role.to_owned(), text.to_owned())));
    let body: Value =
        serde_json::from_str(&block_on(store.sessions().provider_context("pi1", Provider::Anthropic, None, &[])).unwrap().body).unwrap();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "the user's messages are one turn: {body}");
    assert_eq!(messages[0]["content"].as_array().unwrap().len(), 5, "{body}");
}

/// A pi session's replies as pi replays them (`transformMessages`): one that failed or
/// was cut off is left out; another API's blocks lose that API's fields (a
/// `textSignature`, a reasoning item as `thinkingSignature`), its redacted thinking is
/// dropped, and for Anthropic its thinking, unsigned, goes as text.
#[test]
fn a_pi_sessions_replies_from_other_apis_are_replayed_as_pi_replays_them() {
    let storage = InMemoryStorage::new();
    let message = |id: &str, parent: Option<&str>, message: Value| {
        json!({ "type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z", "message": message }).to_string()
    };
    let reply = |api: &str, stop: &str, content: Value| {
        json!({ "role": "assistant", "content": content, "api": api, "provider": "p", "model": "m",
                "usage": { "input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2 }, "stopReason": stop, "timestamp": 2 })
    };
    let text = [
        json!({ "type": "session", "version": 3, "id": "pi1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p" }).to_string(),
        message("a", None, json!({ "role": "user", "content": "hello", "timestamp": 1 })),
        message("b", Some("a"), reply("anthropic-messages", "aborted", json!([{ "type": "thinking", "thinking": "half a tho" }]))),
        message("c", Some("b"), json!({ "role": "user", "content": "again", "timestamp": 3 })),
        message(
            "d",
            Some("c"),
            reply(
                "openai-responses",
                "stop",
                json!([
                    { "type": "thinking", "thinking": "reasoned", "thinkingSignature": "{\"type\":\"reasoning\",\"id\":\"rs_1\"}" },
                    { "type": "thinking", "thinking": "", "thinkingSignature": "opaque", "redacted": true },
                    { "type": "text", "text": "answer", "textSignature": "msg_1" },
                ]),
            ),
        ),
        message("e", Some("d"), json!({ "role": "user", "content": "and?", "timestamp": 4 })),
        message(
            "f",
            Some("e"),
            reply("openai-codex-responses", "stop", json!([{ "type": "text", "text": "done", "textSignature": "msg_2" }])),
        ),
        message("g", Some("f"), json!({ "role": "user", "content": "thanks", "timestamp": 5 })),
        message(
            "h",
            Some("g"),
            reply(
                "anthropic-messages",
                "stop",
                json!([
                    { "type": "thinking", "thinking": "mine", "thinkingSignature": "c2ln" }, { "type": "text", "text": "welcome" },
                ]),
            ),
        ),
    ]
    .join("\n")
        + "\n";
    block_on(storage.append("projects/-p/pi1.jsonl", text.as_bytes())).unwrap();
    let store = Store::new(&storage);
    let sent = |provider| -> Value {
        serde_json::from_str(&block_on(store.sessions().provider_context("pi1", provider, None, &[])).unwrap().body).unwrap()
    };
    let anthropic = sent(Provider::Anthropic);
    let expected = json!([
        { "role": "user", "content": [{ "type": "text", "text": "hello" }, { "type": "text", "text": "again" }] },
        { "role": "assistant", "content": [{ "type": "text", "text": "reasoned" }, { "type": "text", "text": "answer" }] },
        { "role": "user", "content": [{ "type": "text", "text": "and?" }] },
        { "role": "assistant", "content": [{ "type": "text", "text": "done" }] },
        { "role": "user", "content": [{ "type": "text", "text": "thanks" }] },
        { "role": "assistant", "content": [{ "type": "thinking", "thinking": "mine", "signature": "c2ln" }, { "type": "text", "text": "welcome" }] },
    ]);
    assert_eq!(anthropic["messages"], expected);
    let openai = sent(Provider::Openai);
    let contents: Vec<&Value> = openai["messages"].as_array().unwrap().iter().map(|m| &m["content"]).collect();
    let prompts = json!([{ "type": "text", "text": "hello" }, { "type": "text", "text": "again" }]);
    assert_eq!(contents, [&prompts, &json!("answer"), &json!("and?"), &json!("done"), &json!("thanks"), &json!("welcome")]);
}

/// pi's ids are 8 hex digits: a new entry whose id one of the session's entries has
/// already gets another (two entries of one id make pi loop when it opens the file),
/// whether the session was read for the write or is held; a write given again after it
/// landed still repeats the leaf's id, and is refused.
#[test]
fn a_pi_entry_never_takes_an_id_the_session_has() {
    for held in [false, true] {
        let storage = InMemoryStorage::new();
        new_pi_session(&storage);
        let store = Store::new(&storage);
        if held {
            block_on(store.sessions().hold("pi1")).unwrap();
        }
        let say =
            |uuid: &str, text: &str| block_on(store.sessions().append_turn("pi1", turn(uuid, json!({ "role": "user", "content": text }))));
        say("aaaaaaaa-0000-4000-8000-000000000001", "first").unwrap();
        say("bbbbbbbb-0000-4000-8000-000000000002", "second").unwrap();
        // The same first 8 digits as the first entry's id.
        let third = say("aaaaaaaa-0000-4000-8000-000000000003", "third").unwrap();
        let ids: Vec<String> = lines(&storage, "projects/-p/pi1.jsonl")[1..].iter().map(|l| l["id"].as_str().unwrap().to_owned()).collect();
        assert_eq!(ids[..2], ["aaaaaaaa", "bbbbbbbb"], "held {held}");
        assert!(ids[2] != "aaaaaaaa" && ids[2].len() == 8, "held {held}: {ids:?}");
        assert_eq!(third[0].uuid.as_deref(), Some(ids[2].as_str()));
        let chain = block_on(store.sessions().context("pi1")).unwrap();
        let texts: Vec<&str> = chain.messages.iter().map(|m| m.text.as_ref()).collect();
        assert_eq!(texts, ["first", "second", "third"], "held {held}");
        // Given again, the last write repeats its id (the leaf's) and is refused.
        let again = say("aaaaaaaa-0000-4000-8000-000000000003", "third");
        assert!(matches!(&again, Err(Error::InvalidArgument(m)) if m.contains("landed before")), "held {held}: {again:?}");
    }
}

/// Hosts that give time-ordered ids (version 7 UUIDs, the same first 8 digits for a
/// minute) get pi ids of 8 hex digits that differ all the same; a random UUID's start
/// is kept, as pi's own ids are.
#[test]
fn a_pi_sessions_entries_get_ids_of_their_own_from_any_host_ids() {
    let storage = InMemoryStorage::new();
    new_pi_session(&storage);
    let store = Store::new(&storage);
    for (i, uuid) in
        ["019ad2c4-7e10-7a01-8000-000000000001", "019ad2c4-7e10-7a01-8000-000000000002", "3f2b1c4d-1111-4222-8333-444455556666"]
            .into_iter()
            .enumerate()
    {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        block_on(store.sessions().append_turn("pi1", turn(uuid, json!({ "role": role, "content": format!("message {i}") })))).unwrap();
    }
    let ids: Vec<String> = lines(&storage, "projects/-p/pi1.jsonl")[1..].iter().map(|l| l["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(ids.len(), 3);
    assert!(ids.iter().all(|id| id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit())), "{ids:?}");
    assert_ne!(ids[0], ids[1], "{ids:?}");
    assert_eq!(ids[2], "3f2b1c4d", "a random UUID's start");
}

/// A pi session's interrupted call, from pi's own `toolCall` block, gets the synthetic
/// result pi itself sends (pi-ai's `transform-messages.js`; the real pi sends it in
/// `clients/run.mjs`), and no reply after it: pi puts none.
#[test]
fn a_pi_sessions_interrupted_call_is_answered_for_the_provider() {
    let storage = InMemoryStorage::new();
    new_pi_session(&storage);
    let store = Store::new(&storage);
    let call = json!([
        { "role": "user", "content": "look" },
        { "role": "assistant", "content": [{ "type": "tool_use", "id": "toolu_p", "name": "Bash", "input": { "command": "ls" } }] },
    ]);
    block_on(store.sessions().append_turn("pi1", turn("22222222-aaaa-4bbb-8ccc-000000000000", call))).unwrap();
    assert_eq!(lines(&storage, "projects/-p/pi1.jsonl")[2]["message"]["content"][0]["type"], "toolCall");
    let context = block_on(store.sessions().provider_context("pi1", Provider::Anthropic, None, &[])).unwrap();
    assert_eq!(context.interrupted, ["toolu_p"]);
    let body: Value = serde_json::from_str(&context.body).unwrap();
    let result = &body["messages"][2]["content"][0];
    assert_eq!(
        (result["type"].as_str(), result["tool_use_id"].as_str(), result["is_error"].as_bool()),
        (Some("tool_result"), Some("toolu_p"), Some(true))
    );
    assert_eq!(result["content"], "No result provided");
    assert_eq!(body["messages"].as_array().unwrap().len(), 3);
}

#[test]
fn a_session_compacted_last_still_has_its_branch() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for i in 0..8 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        block_on(store.sessions().append_turn("s", turn(&format!("u{i}"), json!({ "role": role, "content": format!("message {i}") }))))
            .unwrap();
    }
    let settings = mneme_core::Settings { keep: mneme_core::Keep::RecentMessages(3), ..mneme_core::Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, mneme_core::Mode::Manual)).unwrap();
    let ids = mneme_core::CompactionIds { boundary: "b".into(), summary: "sum".into() };
    block_on(store.compaction().apply_compaction("s", &plan, "summary", &ids, T0 + 10)).unwrap();
    let branches = block_on(store.sessions().branches("s")).unwrap();
    assert_eq!(branches.len(), 1, "{branches:?}");
    assert!(branches[0].current && branches[0].text == "message 7", "{branches:?}");
}

#[test]
fn a_result_may_answer_any_call_of_a_reply_whose_other_results_came_first() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let calls = json!([
        { "role": "user", "content": "three things" },
        { "role": "assistant", "content": [
            { "type": "tool_use", "id": "t1", "name": "a", "input": {} },
            { "type": "tool_use", "id": "t2", "name": "b", "input": {} },
            { "type": "tool_use", "id": "t3", "name": "c", "input": {} } ] },
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t2", "content": "two" }] },
    ]);
    block_on(store.sessions().append_turn("s", turn("u1", calls))).unwrap();
    // Written as A(t1) A(t2) R(t2) A(t3): t1 and t3 are still pending, for this store
    // and for a fresh one.
    for (name, store) in [("warm", &store), ("fresh", &Store::new(&storage))] {
        let context = block_on(store.sessions().provider_context("s", Provider::Anthropic, None, &[])).unwrap();
        assert_eq!(context.interrupted, ["t1", "t3"], "{name}");
    }
    let rest = json!({ "role": "user", "content": [
        { "type": "tool_result", "tool_use_id": "t1", "content": "one" },
        { "type": "tool_result", "tool_use_id": "t3", "content": "three" } ] });
    block_on(Store::new(&storage).sessions().append_turn("s", turn("u2", rest))).unwrap();
    let body = body_of(&store);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{body}");
    let answered: Vec<&str> = messages[2]["content"].as_array().unwrap().iter().map(|b| b["tool_use_id"].as_str().unwrap()).collect();
    assert_eq!(answered, ["t2", "t1", "t3"]);
}

#[test]
fn review_fixes_retries_pi_forks_and_sub_agent_links() {
    // A retry of a write that landed is refused rather than looping the tree.
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(store.sessions().append_turn("s", turn("u1", json!({ "role": "user", "content": "hi" })))).unwrap();
    let again = block_on(store.sessions().append_turn("s", turn("u1", json!({ "role": "user", "content": "hi" }))));
    assert!(matches!(again, Err(Error::InvalidArgument(ref m)) if m.contains("fresh id")), "{again:?}");

    // A pi fork after a tombstone keeps its chain whole.
    let header = "{\"type\":\"session\",\"version\":3,\"id\":\"pi\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n";
    block_on(storage.append("projects/-p/pi.jsonl", header.as_bytes())).unwrap();
    let messages =
        json!([{ "role": "user", "content": "one" }, { "role": "assistant", "content": "two" }, { "role": "user", "content": "three" }]);
    let written = block_on(store.sessions().append_turn("pi", turn("a1b2c3d4-0000-4000-8000-000000000000", messages))).unwrap();
    block_on(store.sessions().tombstone("pi", written[1].uuid.as_deref().unwrap(), T0 + 1)).unwrap();
    block_on(store.sessions().fork("pi", None, "pi-fork", T0 + 2)).unwrap();
    let texts: Vec<String> =
        block_on(store.sessions().context("pi-fork")).unwrap().messages.into_iter().map(|m| String::from(m.text)).collect();
    assert_eq!(texts, ["one", "three"]);
    let forked = block_on(storage.read("projects/-p/pi-fork.jsonl", 0, None)).unwrap();
    let forked_header: Value = serde_json::from_slice(forked.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(forked_header["cwd"], "/p", "the fork's header names the folder of the session's own: {forked_header}");

    // A sub-agent turn that its new transcript cannot take is refused before the link.
    let call = json!([{ "role": "user", "content": "go" }, { "role": "assistant", "content": [{ "type": "tool_use", "id": "task", "name": "Task", "input": {} }] }]);
    block_on(store.sessions().append_turn("p", turn("p1", call))).unwrap();
    let before = size(&storage);
    let bad = Turn {
        agent: Some(mneme_core::AgentRef { id: "sub".into(), parent_call: Some("task".into()) }),
        ..turn("s1", json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "nope", "content": "x" }] }))
    };
    assert!(matches!(block_on(store.sessions().append_turn("p", bad)), Err(Error::InvalidMessage { .. })));
    assert_eq!(size(&storage), before, "nothing written, not even the link");
}

/// Any JSON value, shallow, with the field names and values messages use most.
fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let word = prop::sample::select(vec![
        "user",
        "assistant",
        "system",
        "tool",
        "text",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "tool_result",
        "image",
        "document",
        "base64",
        "url",
        "t1",
        "t2",
        "call_1",
        "",
        "x",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        word.clone().prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    let key = prop::sample::select(vec![
        "role",
        "content",
        "type",
        "text",
        "thinking",
        "signature",
        "data",
        "id",
        "name",
        "input",
        "tool_use_id",
        "is_error",
        "source",
        "media_type",
        "url",
        "tool_calls",
        "tool_call_id",
        "function",
        "arguments",
        "image_url",
        "usage",
        "input_tokens",
        "output_tokens",
        "prompt_tokens",
        "model",
        "stop_reason",
        "finish_reason",
    ]);
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

/// Messages that are mostly well formed: the shapes a turn takes, with ids that may or
/// may not answer each other.
fn message() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let id = prop::sample::select(vec!["t1", "t2", "t3"]);
    let text = "[a-z ]{1,8}";
    let block = prop_oneof![
        text.prop_map(|t| json!({ "type": "text", "text": t })),
        text.prop_map(|t| json!({ "type": "text", "text": t, "cache_control": { "type": "ephemeral" } })),
        Just(json!({ "type": "redacted_thinking", "data": "eA==" })),
        text.prop_map(|t| json!({ "type": "thinking", "thinking": t, "signature": "c2ln" })),
        (id.clone(), text).prop_map(|(id, name)| json!({ "type": "tool_use", "id": id, "name": name, "input": {} })),
        (id.clone(), text, any::<bool>())
            .prop_map(|(id, t, e)| json!({ "type": "tool_result", "tool_use_id": id, "content": t, "is_error": e })),
        Just(json!({ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "AAAA" } })),
    ];
    let role = prop::sample::select(vec!["user", "assistant"]);
    let one = (role, prop::collection::vec(block, 1..4)).prop_map(|(role, blocks)| json!({ "role": role, "content": blocks }));
    prop_oneof![4 => prop::collection::vec(one, 1..5).prop_map(Value::Array), 1 => json_value()]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Whatever a caller sends as a turn, in either shape, the core answers with a
    /// result or a typed error, never a panic; and what it accepts resumes, in both
    /// shapes, as valid JSON whose every call is answered.
    #[test]
    fn any_turn_is_written_whole_or_refused_and_resumes(first in message(), second in message(), openai in proptest::prelude::any::<bool>()) {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        let provider = if openai { Provider::Openai } else { Provider::Anthropic };
        for (n, messages) in [first, second].into_iter().enumerate() {
            let before = size(&storage);
            let t = Turn { provider, ..turn(&format!("u{n}"), messages) };
            match block_on(store.sessions().append_turn("s", t)) {
                Ok(written) => proptest::prop_assert!(!written.is_empty()),
                Err(_) => proptest::prop_assert_eq!(size(&storage), before, "a refused turn writes nothing"),
            }
        }
        if size(&storage) > 0 {
            for provider in [Provider::Anthropic, Provider::Openai] {
                let context = block_on(store.sessions().provider_context("s", provider, None, &[])).unwrap();
                let body: Value = serde_json::from_str(&context.body).unwrap();
                proptest::prop_assert!(body["messages"].is_array());
                let refused = refused_by_provider(&body, provider);
                proptest::prop_assert!(refused.is_none(), "{:?}: {:?} in {}", provider, refused, body);
            }
            let check = block_on(store.sessions().check("s")).unwrap();
            proptest::prop_assert!(check.orphaned_tool_results.is_empty(), "{:?}", check);
        }
    }
}

/// A reply's thinking is signed for the model that wrote it, and the API refuses it in
/// a request to another: told the model a request goes to, the context sends another
/// model's thinking as the session's client does — Claude Code leaves it out (its name
/// compared without a release date), pi sends it as text (its exact name).
#[test]
fn another_models_thinking_is_sent_as_the_sessions_client_sends_it() {
    let conversation = json!([
        { "role": "user", "content": "first question" },
        { "role": "assistant", "id": "msg_1", "model": "claude-sonnet-4-5-20250929", "content": [
            { "type": "thinking", "thinking": "first thought", "signature": "sig1" },
            { "type": "redacted_thinking", "data": "opaque" },
            { "type": "text", "text": "first answer" },
        ] },
        { "role": "user", "content": "second question" },
        { "role": "assistant", "id": "msg_2", "model": "claude-opus-4-5", "content": [
            { "type": "thinking", "thinking": "second thought", "signature": "sig2" },
            { "type": "text", "text": "second answer" },
        ] },
        { "role": "user", "content": "third question" },
    ]);
    let storage = InMemoryStorage::new();
    new_pi_session(&storage);
    let store = Store::new(&storage);
    block_on(store.sessions().append_turn("s", turn("11111111-aaaa-4bbb-8ccc-000000000000", conversation.clone()))).unwrap();
    block_on(store.sessions().append_turn("pi1", turn("22222222-aaaa-4bbb-8ccc-000000000000", conversation))).unwrap();
    // Each reply's blocks as (type, text or thinking) pairs.
    let replies = |id: &str, model: Option<&str>| -> Vec<Vec<(String, String)>> {
        let context = block_on(store.sessions().provider_context(id, Provider::Anthropic, model, &[])).unwrap();
        let body: Value = serde_json::from_str(&context.body).unwrap();
        let messages = body["messages"].as_array().unwrap().clone();
        assert_eq!(messages.len(), 5, "{id} {model:?}: {body}");
        let block =
            |b: &Value| (b["type"].as_str().unwrap().to_string(), b["text"].as_str().or(b["thinking"].as_str()).unwrap_or("").to_string());
        messages.iter().filter(|m| m["role"] == "assistant").map(|m| m["content"].as_array().unwrap().iter().map(block).collect()).collect()
    };
    let pair = |kind: &str, text: &str| (kind.to_string(), text.to_string());
    let first_as_written = vec![pair("thinking", "first thought"), pair("redacted_thinking", ""), pair("text", "first answer")];
    let second_as_written = vec![pair("thinking", "second thought"), pair("text", "second answer")];
    for id in ["s", "pi1"] {
        assert_eq!(replies(id, None), [first_as_written.clone(), second_as_written.clone()], "{id}: without a model, as recorded");
    }
    assert_eq!(replies("s", Some("claude-sonnet-4-5")), [first_as_written.clone(), vec![pair("text", "second answer")]]);
    assert_eq!(replies("s", Some("claude-opus-4-5-20251101")), [vec![pair("text", "first answer")], second_as_written.clone()]);
    assert_eq!(replies("s", Some("claude-haiku-4-5")), [vec![pair("text", "first answer")], vec![pair("text", "second answer")]]);
    assert_eq!(
        replies("pi1", Some("claude-opus-4-5")),
        [vec![pair("text", "first thought"), pair("text", "first answer")], second_as_written.clone()]
    );
    assert_eq!(
        replies("pi1", Some("claude-opus-4-5-20251101")),
        [
            vec![pair("text", "first thought"), pair("text", "first answer")],
            vec![pair("text", "second thought"), pair("text", "second answer")]
        ]
    );
}

/// Claude Code counts a reply that names no model as another model's, and leaves only
/// signed thinking out: unsigned thinking, which the API takes from no model, goes as
/// text whatever the model. A model of nothing is refused, not read as "another".
#[test]
fn a_reply_without_a_model_is_another_models_and_unsigned_thinking_goes_as_text() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let conversation = json!([
        { "role": "user", "content": "question" },
        { "role": "assistant", "id": "msg_1", "content": [
            { "type": "thinking", "thinking": "signed thought", "signature": "sig1" },
            { "type": "thinking", "thinking": "unsigned thought" },
            { "type": "text", "text": "answer" },
        ] },
        { "role": "user", "content": "next" },
    ]);
    block_on(store.sessions().append_turn("s", turn("11111111-aaaa-4bbb-8ccc-000000000000", conversation))).unwrap();
    let reply = |model: Option<&str>| -> Value {
        let body: Value =
            serde_json::from_str(&block_on(store.sessions().provider_context("s", Provider::Anthropic, model, &[])).unwrap().body).unwrap();
        body["messages"][1]["content"].clone()
    };
    let signed = json!({ "signature": "sig1", "thinking": "signed thought", "type": "thinking" });
    let unsigned = json!({ "text": "unsigned thought", "type": "text" });
    let answer = json!({ "text": "answer", "type": "text" });
    assert_eq!(reply(None), json!([signed, unsigned, answer]));
    assert_eq!(reply(Some("claude-sonnet-4-5")), json!([unsigned, answer]));
    for blank in ["", "  "] {
        let refused = block_on(store.sessions().provider_context("s", Provider::Anthropic, Some(blank), &[]));
        assert!(matches!(&refused, Err(Error::InvalidArgument(reason)) if reason.contains("the model is empty")), "{refused:?}");
    }
}
