//! The HTTP summarisers against a local server that speaks each API's wire format.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::thread;

use mneme_host::core::{Keep, Limits, Mode, NewEntry, Role, Settings};
use mneme_host::summarize::{Summarizer, SummaryError};
use mneme_host::{Engine, Error, FsStorage, Runtime};
use serde_json::{Value, json};

/// A request as the server saw it.
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Serves `responses` (status, JSON body) to successive connections; returns the
/// base URL and what each request was.
fn serve(responses: Vec<(u16, Value)>) -> (String, mpsc::Receiver<Seen>) {
    let mut responses = responses.into_iter();
    serve_with(responses.len(), move |_| responses.next().unwrap())
}

/// Serves `connections` requests, each answered by `answer` (status, JSON body) from
/// what it asked; returns the base URL and what each request was.
pub fn serve_with(connections: usize, mut answer: impl FnMut(&Seen) -> (u16, Value) + Send + 'static) -> (String, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        for _ in 0..connections {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let mut parts = request_line.split_whitespace();
            let (method, path) = (parts.next().unwrap().to_owned(), parts.next().unwrap().to_owned());
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (name, value) = line.split_once(':').unwrap();
                headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
            let length: usize =
                headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("content-length")).map_or(0, |(_, v)| v.parse().unwrap());
            let mut raw = vec![0; length];
            reader.read_exact(&mut raw).unwrap();
            let seen = Seen { method, path, headers, body: serde_json::from_slice(&raw).unwrap() };
            let (status, body) = answer(&seen);
            // The test may be gone (it saw what it needed); the answer still goes out.
            let _ = sender.send(seen);
            let text = body.to_string();
            let mut stream = reader.into_inner();
            write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            )
            .unwrap();
        }
    });
    (url, receiver)
}

/// Writes eight turns to session `s` and plans a compaction keeping the last two.
fn plan_eight_turns(engine: &mut dyn Engine<Error>) -> mneme_host::core::Plan {
    for i in 0..8 {
        let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
        engine
            .append("s", NewEntry { uuid: format!("u{i}"), now_ms: 1_800_000_000_000, role, text: format!("turn {i}"), cwd: "/w".into() })
            .unwrap();
    }
    engine.plan_compaction("s", &Settings { keep: Keep::RecentMessages(2), ..Settings::default() }, Mode::Manual).unwrap()
}

/// A store with a session worth compacting, and its plan.
fn planned() -> (tempfile::TempDir, Box<dyn Engine<Error>>, mneme_host::core::Plan) {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = mneme_host::native(FsStorage::new(dir.path()), Limits::default());
    let plan = plan_eight_turns(&mut *engine);
    (dir, engine, plan)
}

#[test]
fn openai_compatible_chat_completions() {
    let (url, seen) = serve(vec![(
        200,
        json!({"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "  the summary  "}, "finish_reason": "stop"}]}),
    )]);
    let (_dir, mut engine, plan) = planned();
    let summarizer = Summarizer::OpenAi { base_url: format!("{url}/v1"), model: "local-model".into(), api_key: Some("sk-test".into()) };
    assert_eq!(summarizer.summarize(&mut *engine, "s", &plan).unwrap(), "the summary");
    let request = seen.recv().unwrap();
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(request.body["model"], "local-model");
    assert_eq!(request.body["messages"][0]["role"], "user");
    assert_eq!(request.body["messages"][0]["content"], plan.prompt.as_str());
    assert_eq!(request.body["max_tokens"], plan.summary_budget_tokens);
}

#[test]
fn anthropic_messages() {
    let (url, seen) = serve(vec![(
        200,
        json!({"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "part one, "}, {"type": "text", "text": "part two"}], "stop_reason": "end_turn"}),
    )]);
    let (_dir, mut engine, plan) = planned();
    let summarizer = Summarizer::Anthropic { base_url: url, model: "claude-haiku-4-5".into(), api_key: Some("key".into()) };
    assert_eq!(summarizer.summarize(&mut *engine, "s", &plan).unwrap(), "part one, part two");
    let request = seen.recv().unwrap();
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("key"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.body["max_tokens"], plan.summary_budget_tokens);
    assert_eq!(request.body["messages"][0]["content"], plan.prompt.as_str());
}

#[test]
fn ollama_chat() {
    let (url, seen) =
        serve(vec![(200, json!({"model": "llama3.1", "message": {"role": "assistant", "content": "from ollama"}, "done": true}))]);
    let (_dir, mut engine, plan) = planned();
    let summarizer = Summarizer::Ollama { base_url: url, model: "llama3.1".into() };
    assert_eq!(summarizer.summarize(&mut *engine, "s", &plan).unwrap(), "from ollama");
    let request = seen.recv().unwrap();
    assert_eq!(request.path, "/api/chat");
    assert_eq!(request.body["stream"], false);
    assert_eq!(request.body["options"]["num_predict"], plan.summary_budget_tokens);
}

#[test]
fn errors_say_what_the_server_said() {
    let (url, _seen) = serve(vec![(429, json!({"error": {"message": "rate limited"}})), (200, json!({"choices": []}))]);
    let (_dir, mut engine, plan) = planned();
    let summarizer = Summarizer::OpenAi { base_url: url, model: "m".into(), api_key: None };
    match summarizer.summarize(&mut *engine, "s", &plan) {
        Err(SummaryError::Status { status: 429, body, .. }) => assert!(body.contains("rate limited")),
        other => panic!("expected a 429, got {other:?}"),
    }
    assert!(matches!(summarizer.summarize(&mut *engine, "s", &plan), Err(SummaryError::NoSummary { .. })));
}

#[test]
fn a_summary_from_a_server_compacts_through_the_component() {
    let (url, _seen) = serve(vec![(200, json!({"message": {"role": "assistant", "content": "served summary"}, "done": true}))]);
    let dir = tempfile::tempdir().unwrap();
    let mut engine = Runtime::new().unwrap().instantiate(FsStorage::new(dir.path()), Limits::default()).unwrap();
    let plan = plan_eight_turns(&mut engine);
    let summary = Summarizer::Ollama { base_url: url, model: "m".into() }.summarize(&mut engine, "s", &plan).unwrap();
    let ids = mneme_host::core::CompactionIds { boundary: "b".into(), summary: "sum".into() };
    engine.apply_compaction("s", &plan, &summary, &ids, 1_800_000_000_001).unwrap();
    let context = engine.context("s").unwrap();
    assert!(context.messages[0].text.ends_with("served summary"));
    assert_eq!(context.messages.len(), 3);
}

/// `mneme memory extract` against an OpenAI-compatible server: the prompt carries the
/// conversation, an answer that does not read writes nothing and is recorded, a good one
/// is written into the session's project with its provenance; the offline default
/// writes nothing.
#[test]
fn memory_extract_asks_the_model_and_writes_only_answers_that_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let mneme = |args: &[&str]| crate::mneme_command().args(args).output().unwrap();
    for (role, text) in [("user", "I edit everything in Helix, please remember that."), ("assistant", "Noted: Helix.")] {
        assert!(mneme(&["--root", root, "append", "chat", "--role", role, "--text", text, "--cwd", "/w/app"]).status.success());
    }
    let offline = mneme(&["--root", root, "memory", "extract", "chat"]);
    assert!(String::from_utf8_lossy(&offline.stdout).contains("wrote nothing"), "{offline:?}");

    let good = "{\"op\":\"add\",\"name\":\"Editor\",\"type\":\"user\",\"description\":\"The user's editor\",\"body\":\"Helix\"}";
    let reply = |content: &str| json!({ "choices": [{ "message": { "role": "assistant", "content": content } }] });
    let (url, seen) = serve(vec![(200, reply("The user likes Helix.")), (200, reply(good))]);
    let extract = || mneme(&["--root", root, "memory", "extract", "chat", "--summarizer", "openai", "--summarizer-url", &url, "--json"]);
    let refused = extract();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("line 1 of the model's answer") && stderr.contains("1 failures"), "{stderr}");
    let prompt = seen.recv().unwrap().body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(prompt.contains("user: I edit everything in Helix") && prompt.contains("(none yet)"), "{prompt}");
    let listed = mneme(&["--root", root, "memory", "--project", "-w-app", "list", "--json"]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "[]", "a bad answer writes nothing");

    let written = extract();
    assert!(written.status.success(), "{written:?}");
    let extracted: Value = serde_json::from_slice(&written.stdout).unwrap();
    assert_eq!(extracted["added"][0]["file"], "editor");
    assert_eq!(extracted["added"][0]["session"], "chat", "the memory names the session it came from");
    let transcript = std::fs::read_to_string(dir.path().join("projects/-w-app/chat.jsonl")).unwrap();
    assert!(transcript.contains("\"extraction-failure\"") && transcript.contains("\"memory-extraction\""), "{transcript}");
    let again = mneme(&["--root", root, "memory", "extract", "chat", "--summarizer", "openai", "--summarizer-url", &url]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to extract"), "the next extraction starts after this one");
}

/// A consolidation's answer merging the two memories of [`two_editors`].
const MERGE_EDITORS: &str = "{\"op\":\"merge\",\"files\":[\"editor\",\"editor_choice\"],\"name\":\"Editor\",\"type\":\"user\",\"description\":\"The user's editor\",\"body\":\"Helix (vim before).\",\"reason\":\"same fact, changed\"}";

/// `mneme --root ROOT memory --project -w-app …`, once the project holds two memories
/// of one fact (the user's editor) for a consolidation to merge.
fn two_editors(root: &str) -> impl Fn(&[&str]) -> std::process::Output + '_ {
    let memory = move |args: &[&str]| {
        crate::mneme_command().args([&["--root", root, "memory", "--project", "-w-app"], args].concat()).output().unwrap()
    };
    for (name, body) in [("Editor", "Uses vim."), ("Editor choice", "Edits in vim.")] {
        assert!(memory(&["add", "--name", name, "--type", "user", "--body", body]).status.success());
    }
    memory
}

#[test]
fn memory_consolidate_shows_a_dry_run_writes_with_a_record_and_rolls_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let mneme = |args: &[&str]| crate::mneme_command().args(args).output().unwrap();
    let memory = two_editors(root);
    assert!(
        mneme(&["--root", root, "append", "chat", "--role", "user", "--text", "I switched to Helix.", "--cwd", "/w/app"]).status.success()
    );
    let before = std::fs::read_to_string(dir.path().join("projects/-w-app/memory/editor.md")).unwrap();

    let offline = memory(&["consolidate"]);
    assert!(String::from_utf8_lossy(&offline.stdout).contains("nothing changed"), "{offline:?}");

    let reply = |content: &str| json!({ "choices": [{ "message": { "role": "assistant", "content": content } }] });
    let (url, seen) = serve(vec![(200, reply(MERGE_EDITORS)), (200, reply(MERGE_EDITORS))]);
    let consolidate = |extra: &[&str]| memory(&[&["consolidate", "--summarizer", "openai", "--summarizer-url", &url], extra].concat());

    let dry = consolidate(&["--dry-run"]);
    let shown = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.status.success(), "{dry:?}");
    assert!(shown.contains("+ editor_2: Editor — The user's editor  (same fact, changed)"), "{shown}");
    assert!(shown.contains("- editor: superseded by editor_2 (kept)") && shown.contains("dry run: 3 changes, nothing written"), "{shown}");
    let prompt = seen.recv().unwrap().body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(prompt.contains("user: I switched to Helix.") && prompt.contains("## editor_choice — Editor choice"), "{prompt}");
    assert_eq!(std::fs::read_to_string(dir.path().join("projects/-w-app/memory/editor.md")).unwrap(), before);

    let written = consolidate(&["--json"]);
    assert!(written.status.success(), "{written:?}");
    let done: Value = serde_json::from_slice(&written.stdout).unwrap();
    let id = done["id"].as_str().unwrap().to_owned();
    assert_eq!(done["applied"], true);
    let listed = String::from_utf8_lossy(&memory(&["list"]).stdout).into_owned();
    assert!(listed.starts_with("editor_2 ") && listed.lines().count() == 1, "{listed}");
    let history = String::from_utf8_lossy(&memory(&["consolidations"]).stdout).into_owned();
    assert!(history.contains(&id) && history.contains("3 changes from 1 sessions"), "{history}");
    let state = std::fs::read_to_string(dir.path().join("memory/.consolidation.json")).unwrap();
    assert!(state.contains("\"last_ms\":") && state.contains("\"lock\":null"), "the lock is released and the run recorded: {state}");

    let undone = memory(&["rollback", &id]);
    assert!(undone.status.success(), "{undone:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("projects/-w-app/memory/editor.md")).unwrap(), before);
    let again = memory(&["rollback", &id]);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("rolled back already"), "{again:?}");

    let not_due = memory(&["consolidate", "--if-due"]);
    assert!(String::from_utf8_lossy(&not_due.stdout).contains("not consolidating: the last consolidation was"), "{not_due:?}");
    // With --json, a consolidation that did nothing says so and why in JSON.
    let not_due: serde_json::Value = serde_json::from_slice(&memory(&["consolidate", "--if-due", "--json"]).stdout).expect("JSON");
    assert_eq!(not_due["applied"], false, "{not_due}");
    assert!(not_due["reason"].as_str().is_some_and(|r| r.contains("not consolidating: the last consolidation was")), "{not_due}");
}

/// A consolidation stopped by storage after its record (here a folder where its new
/// memory's file goes; a full disk stops it the same way) says what it wrote and how
/// to undo it, and the rollback does.
#[test]
fn a_consolidation_cut_short_by_storage_says_what_it_wrote_and_rolls_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let memory = two_editors(root);
    let folder = dir.path().join("projects/-w-app/memory");
    let read = |file: &str| std::fs::read_to_string(folder.join(format!("{file}.md"))).unwrap();
    let before = [read("editor"), read("editor_choice")];
    std::fs::create_dir_all(folder.join("editor_2.md/in-the-way")).unwrap();

    let reply = json!({ "choices": [{ "message": { "role": "assistant", "content": MERGE_EDITORS } }] });
    let (url, _seen) = serve(vec![(200, reply)]);
    let failed = memory(&["consolidate", "--summarizer", "openai", "--summarizer-url", &url]);
    let said = String::from_utf8_lossy(&failed.stderr).into_owned();
    assert!(!failed.status.success(), "{failed:?}");
    let (_, rest) = said.split_once("consolidation ").expect(&said);
    let (id, rest) = rest.split_once(" was cut short after it was recorded: written ").expect(&said);
    let (written, _) = rest.split_once(" (MEMORY.md").expect(&said);
    for (file, before) in ["editor", "editor_choice"].iter().zip(&before) {
        let changed = read(file) != *before;
        assert_eq!(written.split(", ").any(|w| w == *file), changed, "{file} changed: {changed}; said: {said}");
    }
    assert!(said.contains(&format!("`mneme memory --project -w-app rollback {id}` undoes it")), "{said}");

    std::fs::remove_dir_all(folder.join("editor_2.md")).unwrap();
    let undone = memory(&["rollback", id]);
    assert!(undone.status.success(), "{undone:?}");
    assert_eq!([read("editor"), read("editor_choice")], before);
    let listed = String::from_utf8_lossy(&memory(&["list"]).stdout).into_owned();
    assert!(listed.contains("editor ") && listed.contains("editor_choice ") && !listed.contains("editor_2"), "{listed}");
}
