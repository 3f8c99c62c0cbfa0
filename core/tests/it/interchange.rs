//! Import and export on real transcripts: every corpus file of every agent imports,
//! kept transcripts resume to what their originals resume to, converted ones keep
//! every message, call and result at its own time, and exports read back.

use std::fs;
use std::path::{Path, PathBuf};

use mneme_core::interchange::{ExportFormat, Import, Source};
use mneme_core::{Error, Format, InMemoryStorage, Provider, Storage, Store, block_on};
use serde_json::Value;

const NOW: i64 = 1_771_200_000_000;
const UUID: &str = "6f1c2a4e-8b3d-4e5f-9a7b-1c2d3e4f5a6b";

fn corpus(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus").join(path)
}

fn request(path: &str) -> Import {
    Import { data: fs::read(corpus(path)).unwrap(), source: None, id: None, cwd: None, origin: path.into(), uuid: UUID.into(), now_ms: NOW }
}

/// Every `{role, content}` of a session's provider context.
fn anthropic(store: &Store<&InMemoryStorage>, id: &str) -> Vec<Value> {
    let context = block_on(store.sessions().provider_context(id, Provider::Anthropic, None, &[])).unwrap();
    let body: Value = serde_json::from_str(&context.body).unwrap();
    body["messages"].as_array().unwrap().clone()
}

fn blocks_of<'v>(messages: &'v [Value], kind: &str) -> Vec<&'v Value> {
    messages.iter().filter_map(|m| m["content"].as_array()).flatten().filter(|b| b["type"] == kind).collect()
}

#[test]
fn every_corpus_transcript_imports_under_its_own_id_and_project() {
    let cases: &[(&str, Source, Option<&str>)] = &[
        ("claude/01-v2.1.39-autocompact/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", Source::Claude, None),
        ("claude/03-v2.1.114-attachments/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl", Source::Claude, None),
        (
            "claude/08-v2.0.42-thinking/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
            Source::Claude,
            None,
        ),
        ("claude/11-v1.0.95-resumed/claude_code.jsonl", Source::Claude, None),
        ("pi/v1/before-compaction.jsonl", Source::Pi, None),
        ("pi/v1-malformed/session.jsonl", Source::Pi, None),
        ("pi/v3/agent-history-session-01.jsonl", Source::Pi, None),
        ("codex/agent-history-codex-0.135.jsonl", Source::Codex, None),
        ("codex/vibecodingtracker-codex-0.39.jsonl", Source::Codex, None),
        ("gemini/vibecodingtracker-gemini.jsonl", Source::Gemini, Some("/work/discordbot")),
        ("gemini/vibecodingtracker-gemini-legacy.json", Source::Gemini, Some("/work/tracker")),
    ];
    for &(path, source, cwd) in cases {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        let original = fs::read(corpus(path)).unwrap();
        let imported = block_on(store.sessions().import_session(&Import { cwd: cwd.map(String::from), ..request(path) }))
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(imported.source, source, "{path}");
        assert!(imported.message_count > 0, "{path}: {imported:?}");
        let listed = block_on(store.sessions().list()).unwrap();
        assert_eq!(listed.sessions.len(), 1, "{path}");
        assert_eq!(
            (listed.sessions[0].id.as_str(), listed.sessions[0].project.as_str()),
            (imported.id.as_str(), imported.project.as_str())
        );
        let stored = block_on(storage.read(&listed.sessions[0].key, 0, None)).unwrap();
        let last = String::from_utf8_lossy(&stored).lines().last().unwrap().to_owned();
        assert!(last.contains("import") && last.contains(path), "{path}: the last line records the origin: {last}");
        if source == Source::Claude || path.contains("v3") {
            assert!(stored.starts_with(&original), "{path}: a transcript in a dialect Mneme writes is kept byte for byte");
        }
        // The provider accepts what every imported session resumes to.
        let messages = anthropic(&store, &imported.id);
        let uses = blocks_of(&messages, "tool_use").len();
        assert_eq!(uses, blocks_of(&messages, "tool_result").len(), "{path}: every call has its result");
    }
}

/// A sub-agent's own file names its parent's session: imported under that id it would
/// take the id from the parent and hold only the sub-agent's side. It is refused,
/// saying what to do; given an id of its own, it imports. Unreadable lines of a kept
/// transcript are counted as skipped.
#[test]
fn a_sub_agents_file_is_not_imported_as_its_parent_and_unreadable_lines_are_counted() {
    let path =
        "claude/05-v2.1.17-subagents-dir/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl";
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let refused = block_on(store.sessions().import_session(&request(path))).unwrap_err();
    assert!(
        refused.to_string().contains("sub-agent's transcript") && refused.to_string().contains("29ccd257-68b1-427f-ae5f-6524b7cb6f20"),
        "{refused}"
    );
    assert!(block_on(store.sessions().list()).unwrap().sessions.is_empty(), "nothing was written");
    let own = block_on(store.sessions().import_session(&Import { id: Some("a2271d1-on-its-own".into()), ..request(path) })).unwrap();
    assert!(own.message_count > 0, "{own:?}");
    assert_eq!(own.skipped, 0);

    let main = "claude/05-v2.1.17-subagents-dir/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl";
    let mut data = fs::read(corpus(main)).unwrap();
    data.extend_from_slice(b"{\"this line\": is not JSON\n{\"type\":\"user\",\"uuid\":\"cut-off");
    let damaged = block_on(store.sessions().import_session(&Import { data, ..request(main) })).unwrap();
    assert_eq!(damaged.skipped, 2, "a broken line and a torn last one: {damaged:?}");
}

#[test]
fn a_gemini_chat_needs_a_working_directory_and_an_id_that_is_free() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let path = "gemini/vibecodingtracker-gemini.jsonl";
    let error = block_on(store.sessions().import_session(&request(path))).unwrap_err().to_string();
    assert!(error.contains("working directory"), "{error}");
    let cwd = Some("/work/discordbot".to_owned());
    block_on(store.sessions().import_session(&Import { cwd: cwd.clone(), ..request(path) })).unwrap();
    let error = block_on(store.sessions().import_session(&Import { cwd, ..request(path) })).unwrap_err();
    assert!(matches!(&error, Error::SessionExists { id } if id == "0ab84937-9fe7-4284-986a-33c832af0b6a"), "{error}");
}

#[test]
fn a_kept_claude_transcript_resumes_as_its_original() {
    let path = "claude/01-v2.1.39-autocompact/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";
    let original = InMemoryStorage::new();
    block_on(original.replace("projects/p/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", &fs::read(corpus(path)).unwrap(), None)).unwrap();
    let imported = InMemoryStorage::new();
    let id = block_on(Store::new(&imported).sessions().import_session(&request(path))).unwrap().id;
    assert_eq!(
        block_on(Store::new(&imported).sessions().context(&id)).unwrap(),
        block_on(Store::new(&original).sessions().context("4d5611e5-241a-462a-8d15-5122611a9569")).unwrap()
    );
}

#[test]
fn a_pi_v1_session_migrates_to_v3_as_pi_migrates_it_and_resumes_the_same() {
    for path in ["pi/v1/before-compaction.jsonl", "pi/v1-malformed/session.jsonl"] {
        let original = InMemoryStorage::new();
        block_on(original.replace("projects/p/s.jsonl", &fs::read(corpus(path)).unwrap(), None)).unwrap();
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        let imported = block_on(store.sessions().import_session(&request(path))).unwrap();
        assert_eq!((imported.format, imported.migrated_from), (Format::Pi, Some(1)), "{path}");
        let key = block_on(store.sessions().list()).unwrap().sessions[0].key.clone();
        let text = String::from_utf8(block_on(storage.read(&key, 0, None)).unwrap()).unwrap();
        let entries: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(entries[0]["version"], 3, "{path}");
        let mut parent = Value::Null;
        for entry in &entries[1..entries.len() - 1] {
            assert_eq!(entry["id"].as_str().map(str::len), Some(8), "{path}: {entry}");
            assert_eq!(entry["parentId"], parent, "{path}: each entry chains to the one before");
            assert!(entry.get("firstKeptEntryIndex").is_none());
            parent = entry["id"].clone();
        }
        for compaction in entries.iter().filter(|e| e["type"] == "compaction") {
            let kept = compaction["firstKeptEntryId"].as_str().unwrap();
            assert!(entries.iter().any(|e| e["id"] == kept), "{path}: the kept entry is named by its new id");
        }
        let before = block_on(Store::new(&original).sessions().context("s")).unwrap();
        let after = block_on(store.sessions().context(&imported.id)).unwrap();
        let texts = |c: &mneme_core::Context| c.messages.iter().map(|m| (m.role.clone(), m.text.clone())).collect::<Vec<_>>();
        let (after, before) = (texts(&after), texts(&before));
        let differs = after.iter().zip(&before).position(|(a, b)| a != b);
        assert!(
            differs.is_none() && after.len() == before.len(),
            "{path}: {} vs {} messages, first difference at {differs:?}: {:?} vs {:?}",
            after.len(),
            before.len(),
            differs.map(|i| &after[i]),
            differs.map(|i| &before[i])
        );
    }
}

#[test]
fn a_codex_rollout_keeps_every_message_call_and_result_at_its_own_time() {
    let path = "codex/vibecodingtracker-codex-0.39.jsonl";
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let imported = block_on(store.sessions().import_session(&request(path))).unwrap();
    assert_eq!((imported.id.as_str(), imported.format), ("01996135-afde-7911-97f0-d863511eca56", Format::Claude));
    // 10 reasoning items, none with a summary a model takes back.
    assert_eq!(imported.skipped, 10);
    let messages = anthropic(&store, &imported.id);
    assert_eq!(blocks_of(&messages, "tool_use").len(), 18);
    assert_eq!(blocks_of(&messages, "tool_result").len(), 18);
    let texts: Vec<&str> = blocks_of(&messages, "text").iter().filter_map(|b| b["text"].as_str()).collect();
    assert!(texts.iter().any(|t| t.starts_with("I’ll scan the repo for go.mod")), "{texts:?}");
    let transcript = block_on(store.sessions().load(&imported.id)).unwrap();
    let first = transcript.entries.iter().find(|e| e.type_ == "user").unwrap();
    assert_eq!(first.timestamp.as_deref(), Some("2025-09-19T09:02:12.512Z"), "the first message keeps its time");
    let ledger = block_on(store.sessions().usage(&imported.id, None)).unwrap();
    assert!(ledger.total.output > 0 && ledger.total.cache_read > 0, "token counts carried over: {ledger:?}");
}

#[test]
fn a_gemini_recording_replays_its_rewrites_and_keeps_tool_calls() {
    let path = "gemini/vibecodingtracker-gemini.jsonl";
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let imported = block_on(store.sessions().import_session(&Import { cwd: Some("/work/discordbot".into()), ..request(path) })).unwrap();
    assert_eq!(imported.id, "0ab84937-9fe7-4284-986a-33c832af0b6a");
    let messages = anthropic(&store, &imported.id);
    let calls: Vec<&str> = blocks_of(&messages, "tool_use").iter().filter_map(|b| b["name"].as_str()).collect();
    // Each record written twice (without, then with its calls) counts once.
    let read_file = ["read_file"; 7];
    let expected: Vec<&str> = [&["update_topic"][..], &read_file, &["write_file", "update_topic", "update_topic", "replace"]].concat();
    assert_eq!(calls, expected);
    let texts: Vec<&str> = blocks_of(&messages, "text").iter().filter_map(|b| b["text"].as_str()).collect();
    assert_eq!(texts.iter().filter(|t| t.starts_with("我已經完成了對專案的深入分析")).count(), 1);
}

#[test]
fn openai_messages_import_without_their_system_prompt_and_export_back() {
    let messages = serde_json::json!([
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is in the folder?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{\"path\":\".\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "README.md"},
        {"role": "assistant", "content": "A README."}
    ]);
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let import = Import {
        data: messages.to_string().into_bytes(),
        source: None,
        id: Some("chat".into()),
        cwd: Some("/work/chat".into()),
        origin: "chat.json".into(),
        uuid: UUID.into(),
        now_ms: NOW,
    };
    let imported = block_on(store.sessions().import_session(&import)).unwrap();
    assert_eq!((imported.source, imported.message_count, imported.skipped), (Source::Openai, 4, 1));
    let exported = block_on(store.sessions().export_session("chat", ExportFormat::Openai, UUID)).unwrap();
    let back: Value = serde_json::from_slice(&exported.data).unwrap();
    assert_eq!(back, serde_json::Value::Array(messages.as_array().unwrap()[1..].to_vec()));
}

/// An exported chat with an empty reply (ShareGPT-style exports hold them) imports the
/// rest and counts the empty ones skipped; one with nothing but empty messages is
/// refused, saying why. Converted lines are written without their secrets.
#[test]
fn openai_messages_without_content_are_skipped_not_fatal() {
    let messages = serde_json::json!([
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "are you there?"},
        {"role": "assistant", "content": null},
        {"role": "assistant", "content": "Yes."}
    ]);
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let import = |data: &Value, id: &str| Import {
        data: data.to_string().into_bytes(),
        source: None,
        id: Some(id.into()),
        cwd: Some("/work/chat".into()),
        origin: "chat.json".into(),
        uuid: UUID.into(),
        now_ms: NOW,
    };
    let imported = block_on(store.sessions().import_session(&import(&messages, "chat"))).unwrap();
    assert_eq!((imported.message_count, imported.skipped), (3, 2));
    let texts: Vec<String> = anthropic(&store, "chat")
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|b| b["text"].as_str().map(String::from))
        .collect();
    assert_eq!(texts, ["hello", "are you there?", "Yes."]);
    let github = format!("ghp_{}", "a1B2c3D4e5".repeat(4).get(..36).unwrap());
    let secret = serde_json::json!([{"role": "user", "content": format!("my token is {github}")}, {"role": "assistant", "content": "ok"}]);
    block_on(store.sessions().import_session(&import(&secret, "secret"))).unwrap();
    let all: String = block_on(storage.list(""))
        .unwrap()
        .iter()
        .map(|info| String::from_utf8_lossy(&block_on(storage.read(&info.key, 0, None)).unwrap()).into_owned())
        .collect();
    assert!(!all.contains(&github) && all.contains("my token is [REDACTED:github-token]"), "a converted import is redacted");
    let empty = serde_json::json!([{"role": "assistant", "content": ""}, {"role": "user", "content": []}]);
    let refused = block_on(store.sessions().import_session(&import(&empty, "empty"))).unwrap_err();
    assert!(refused.to_string().contains("without content"), "{refused}");
}

#[test]
fn a_session_exported_to_another_dialect_resumes_to_the_same_conversation() {
    let path = "codex/vibecodingtracker-codex-0.39.jsonl";
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let id = block_on(store.sessions().import_session(&request(path))).unwrap().id;
    let before = anthropic(&store, &id);
    let claude = block_on(store.sessions().export_session(&id, ExportFormat::Claude, UUID)).unwrap();
    assert!(claude.verbatim);
    let pi = block_on(store.sessions().export_session(&id, ExportFormat::Pi, UUID)).unwrap();
    assert!(!pi.verbatim);
    let again = InMemoryStorage::new();
    let other = Store::new(&again);
    let back =
        block_on(other.sessions().import_session(&Import { data: pi.data.clone(), id: Some("back".into()), ..request(path) })).unwrap();
    assert_eq!((back.source, back.format), (Source::Pi, Format::Pi));
    // pi spells a result's text as a block and `is_error: false` out; the API reads
    // both the same.
    let strip = |messages: Vec<Value>| -> Vec<Value> {
        messages
            .into_iter()
            .map(|mut m| {
                for block in m["content"].as_array_mut().into_iter().flatten() {
                    if let Some(text) = block["content"].as_str() {
                        block["content"] = serde_json::json!([{ "type": "text", "text": text }]);
                    }
                    if let Some(map) = block.as_object_mut() {
                        map.remove("is_error");
                    }
                }
                m
            })
            .collect()
    };
    let (after, before) = (strip(anthropic(&other, "back")), strip(before));
    let differs = after.iter().zip(&before).position(|(a, b)| a != b);
    assert!(
        differs.is_none() && after.len() == before.len(),
        "{} vs {} messages, first difference at {differs:?}: {:.600} vs {:.600}",
        after.len(),
        before.len(),
        differs.map(|i| after[i].to_string()).unwrap_or_default(),
        differs.map(|i| before[i].to_string()).unwrap_or_default()
    );
    let first_pi_message = String::from_utf8(pi.data).unwrap().lines().nth(1).map(String::from).unwrap();
    assert!(first_pi_message.contains("2025-09-19T09:02:12.512Z"), "messages keep their times: {first_pi_message}");
    let markdown = String::from_utf8(block_on(store.sessions().export_session(&id, ExportFormat::Markdown, UUID)).unwrap().data).unwrap();
    assert!(markdown.starts_with(&format!("# Session {id}\n")) && markdown.contains("## User · 2025-09-19T09:02:12.512Z"), "{markdown}");
}

#[test]
fn every_claude_corpus_session_exports_to_pi_marking_what_pi_cannot_hold() {
    for path in [
        "claude/01-v2.1.39-autocompact/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
        "claude/03-v2.1.114-attachments/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
        "claude/08-v2.0.42-thinking/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
        "claude/11-v1.0.95-resumed/claude_code.jsonl",
    ] {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        let id = block_on(store.sessions().import_session(&request(path))).unwrap().id;
        let pi = block_on(store.sessions().export_session(&id, ExportFormat::Pi, UUID)).unwrap_or_else(|e| panic!("{path}: {e}"));
        let again = InMemoryStorage::new();
        let back = block_on(Store::new(&again).sessions().import_session(&Import {
            data: pi.data.clone(),
            id: Some("back".into()),
            ..request(path)
        }))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!((back.format, back.message_count), (Format::Pi, pi.message_count), "{path}");
        // ToolSearch's results name the tools found as `tool_reference` blocks, which a
        // pi result cannot hold: each stays as its marker, in place.
        let text = String::from_utf8(pi.data).unwrap();
        let markers = text.matches(r#"{"text":"[tool_reference]","type":"text"}"#).count();
        let references = fs::read_to_string(corpus(path)).unwrap().matches(r#""type":"tool_reference""#).count();
        assert!(markers > 0 || !path.contains("/03-"), "{path}: {references} tool references");
        assert!(markers <= references, "{path}: {markers} markers for {references} tool references");
    }
}

/// A reply converted to the other dialect keeps what it says about itself: its model
/// (whether its thinking may be replayed depends on it), its usage (the ledger's
/// totals) and why it stopped. They were written as Mneme's own, with no usage.
#[test]
fn an_export_to_the_other_dialect_keeps_each_replys_model_usage_and_stop_reason() {
    for (path, to) in [
        ("claude/08-v2.0.42-thinking/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl", ExportFormat::Pi),
        ("pi/v3/agent-history-session-01.jsonl", ExportFormat::Claude),
    ] {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        let id = block_on(store.sessions().import_session(&request(path))).unwrap().id;
        let exported = block_on(store.sessions().export_session(&id, to, UUID)).unwrap();
        let again = InMemoryStorage::new();
        let other = Store::new(&again);
        block_on(other.sessions().import_session(&Import { data: exported.data.clone(), id: Some("back".into()), ..request(path) }))
            .unwrap();
        let (before, after) =
            (block_on(store.sessions().usage(&id, None)).unwrap().total, block_on(other.sessions().usage("back", None)).unwrap().total);
        assert!(before.total() > 0, "{path}: {before:?}");
        assert_eq!(after, before, "{path}");
        let models = |store: &Store<&InMemoryStorage>, id: &str| -> Vec<Option<String>> {
            block_on(store.sessions().context(id))
                .unwrap()
                .messages
                .into_iter()
                .filter(|m| m.role == "assistant")
                .map(|m| m.model)
                .collect()
        };
        let original = models(&store, &id);
        assert!(original.iter().all(Option::is_some), "{path}");
        assert_eq!(models(&other, "back"), original, "{path}");
        let text = String::from_utf8(exported.data).unwrap();
        let stop = if to == ExportFormat::Pi { r#""stopReason":"toolUse""# } else { r#""stop_reason":"end_turn""# };
        assert!(text.contains(stop), "{path}: no reply says why it stopped ({stop})");
    }
}

/// A Markdown export shows what the tools were asked and answered, and the thinking:
/// it had only `[tool_use Bash toolu_1]` markers.
#[test]
fn a_markdown_export_shows_tool_inputs_outputs_and_thinking() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let messages = serde_json::json!([
        { "role": "user", "content": "what is here?" },
        { "role": "assistant", "content": [
            { "type": "thinking", "thinking": "List the folder.", "signature": "c2ln" },
            { "type": "tool_use", "id": "toolu_1", "name": "Bash", "input": { "command": "ls ```" } },
        ] },
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "toolu_1", "content": "notes.md", "is_error": true }] },
    ]);
    let turn = mneme_core::Turn {
        uuid: UUID.into(),
        now_ms: NOW,
        cwd: "/w".into(),
        provider: Provider::Anthropic,
        messages: messages.to_string(),
        parent: None,
        agent: None,
    };
    block_on(store.sessions().append_turn("s", turn)).unwrap();
    let markdown = String::from_utf8(block_on(store.sessions().export_session("s", ExportFormat::Markdown, UUID)).unwrap().data).unwrap();
    for expected in [
        "> *Thinking:* List the folder.",
        "**Tool call** `Bash` (`toolu_1`):\n\n````json\n{\n  \"command\": \"ls ```\"\n}\n````",
        "**Result** of `toolu_1`, failed:\n\n```\nnotes.md\n```",
    ] {
        assert!(markdown.contains(expected), "{expected}\n--- in ---\n{markdown}");
    }
}

/// An OpenClaw `sessions.json` as its gateway writes one: a main direct chat with
/// settings, counters and nested state, a Telegram group, a cron run and a node key
/// (shapes Mneme's key grammar does not build), and two entries OpenClaw would not load.
fn openclaw_sessions() -> Value {
    serde_json::json!({
        "agent:main:main": {
            "sessionId": "019e963d-6bd6-7ade-8a49-256ac3391bdd",
            "updatedAt": 1_771_200_500_000_i64,
            "sessionStartedAt": 1_771_200_000_000_i64,
            "sessionFile": "/home/u/.openclaw/agents/main/sessions/019e963d-6bd6-7ade-8a49-256ac3391bdd.jsonl",
            "chatType": "direct",
            "label": "daily driver",
            "model": "claude-opus-4-5",
            "modelProvider": "anthropic",
            "thinkingLevel": "high",
            "queueMode": "collect",
            "systemSent": true,
            "inputTokens": 9,
            "totalTokens": 12_000,
            "contextTokens": 200_000,
            "compactionCount": 3,
            "memoryFlushAt": 1_771_200_400_000_i64,
            "memoryFlushCompactionCount": 3,
            "skillsSnapshot": { "prompt": "…", "skills": [{ "name": "git" }] },
            "origin": { "label": "Ana", "provider": "telegram", "from": "telegram:42", "threadId": 7 },
            "deliveryContext": { "channel": "telegram", "to": "42" },
            "aFieldFromALaterOpenClaw": [1, 2, 3]
        },
        "agent:main:telegram:group:-100123": {
            "sessionId": "a1a1a1a1-0000-4000-8000-000000000001",
            "updatedAt": 1_771_100_000_000_i64,
            "chatType": "group",
            "channel": "telegram",
            "groupId": "-100123",
            "subject": "Family",
            "displayName": "telegram:g-family"
        },
        "agent:main:cron:nightly:run:b2b2": { "sessionId": "b2b2b2b2-0000-4000-8000-000000000002", "updatedAt": 1_771_000_000_000_i64 },
        "node-abc": { "sessionId": "c3c3c3c3-0000-4000-8000-000000000003", "updatedAt": 1_770_900_000_000_i64, "chatType": "direct" },
        "agent:main:broken": { "updatedAt": 1 },
        "agent:main:odd": "not an entry"
    })
}

#[test]
fn an_openclaw_sessions_json_moves_in_and_back_out_without_losing_a_field() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let original = openclaw_sessions();
    let data = serde_json::to_vec(&original).unwrap();
    let report = block_on(store.index().import_openclaw_keys(&data)).unwrap();
    assert_eq!(report.imported.len(), 4, "{report:?}");
    let refused: Vec<_> = report.refused.iter().map(|r| (r.key.as_str(), r.reason.as_str())).collect();
    assert_eq!(refused, [("agent:main:broken", "the entry has no sessionId"), ("agent:main:odd", "the entry is not a JSON object")]);

    // Mapped where the index has a place, settings as toggles, the rest kept.
    let main = block_on(store.index().key("agent:main:main")).unwrap().entry;
    assert_eq!(main.session_id, "019e963d-6bd6-7ade-8a49-256ac3391bdd");
    assert_eq!((main.updated_ms, main.session_started_ms), (1_771_200_500_000, 1_771_200_000_000));
    assert_eq!(main.title.as_deref(), Some("daily driver"));
    assert_eq!(main.model.as_deref(), Some("claude-opus-4-5"));
    assert_eq!(main.origin.provider.as_deref(), Some("telegram"));
    let toggle = |entry: &mneme_core::index::KeyEntry, name: &str| entry.toggles.iter().find(|t| t.name == name).map(|t| t.value.clone());
    assert_eq!(toggle(&main, "thinkingLevel").as_deref(), Some("high"));
    assert_eq!(toggle(&main, "queueMode").as_deref(), Some("collect"));
    assert!(toggle(&main, "openclaw").unwrap().contains("skillsSnapshot"));
    let group = block_on(store.index().key("agent:main:telegram:group:-100123")).unwrap().entry;
    assert_eq!(group.chat_type, mneme_core::index::ChatType::Group);
    assert_eq!((group.origin.provider.as_deref(), group.origin.subject.as_deref()), (Some("telegram"), Some("Family")));
    assert_eq!(toggle(&group, "groupId").as_deref(), Some("-100123"), "a numeric-looking id stays a string");
    assert_eq!(block_on(store.index().key("agent:main:cron:nightly:run:b2b2")).unwrap().entry.chat_type, mneme_core::index::ChatType::Cron);

    // Out again, with no transcript in the store: every field as it came in.
    let exported: Value = serde_json::from_slice(&block_on(store.index().export_openclaw_keys()).unwrap()).unwrap();
    for key in ["agent:main:main", "agent:main:telegram:group:-100123", "agent:main:cron:nightly:run:b2b2", "node-abc"] {
        for (field, value) in original[key].as_object().unwrap() {
            assert_eq!(&exported[key][field], value, "{key}.{field}");
        }
    }
    assert!(exported.get("agent:main:broken").is_none());

    // A second import leaves what the index has.
    let again = block_on(store.index().import_openclaw_keys(&data)).unwrap();
    assert_eq!((again.imported.len(), again.existing.len()), (0, 4));

    // With the transcript in the store (OpenClaw's are pi sessions), the counters
    // are the transcript's, not the ones imported.
    block_on(store.sessions().import_session(&request("pi/v3/agent-history-session-01.jsonl"))).unwrap();
    let view = block_on(store.index().key("agent:main:main")).unwrap();
    let exported: Value = serde_json::from_slice(&block_on(store.index().export_openclaw_keys()).unwrap()).unwrap();
    assert_eq!(exported["agent:main:main"]["inputTokens"], view.counters.input_tokens);
    assert_eq!(exported["agent:main:main"]["compactionCount"], view.counters.compaction_count);
    assert_ne!(exported["agent:main:main"]["inputTokens"], 9, "the transcript's count, not the imported one");
    assert_eq!(exported["agent:main:main"]["contextTokens"], 200_000, "what the transcript cannot say is kept");
}

#[test]
fn a_file_that_is_not_a_sessions_json_is_refused_and_writes_nothing() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for data in [&b"[]"[..], b"{\"a\": 1", b"not json"] {
        let error = block_on(store.index().import_openclaw_keys(data)).unwrap_err();
        assert!(matches!(&error, Error::InvalidArgument(m) if m.contains("not an OpenClaw sessions.json")), "{error}");
    }
    assert!(block_on(store.index().keys(&[])).unwrap().is_empty());
}

/// A transcript in Cersei's envelope (snake_case `session_id` and `parent_uuid`) is read
/// as Mneme reads that envelope everywhere else: it imports under its own session id.
#[test]
fn a_transcript_in_cersei_s_envelope_imports_under_its_own_id() {
    let data = concat!(
        r#"{"type":"user","uuid":"a","parent_uuid":null,"session_id":"cersei-1","cwd":"/w","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}"#,
        "\n",
        r#"{"type":"assistant","uuid":"b","parent_uuid":"a","session_id":"cersei-1","cwd":"/w","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]}}"#,
        "\n"
    );
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let request =
        Import { data: data.into(), source: None, id: None, cwd: None, origin: "cersei.jsonl".into(), uuid: UUID.into(), now_ms: NOW };
    let imported = block_on(store.sessions().import_session(&request)).unwrap();
    assert_eq!((imported.id.as_str(), imported.source, imported.message_count), ("cersei-1", Source::Claude, 2));
    assert_eq!(block_on(store.sessions().context("cersei-1")).unwrap().messages.len(), 2);
}
