//! A host's embedder over HTTP: an OpenAI-compatible `/embeddings` server answering
//! the core's plans, from the library and from `mneme memory recall`.

use mneme_host::FsStorage;
use mneme_host::core::Limits;
use mneme_host::core::memory::file::MemoryType;
use mneme_host::core::memory::store::{NewMemory, Scope};
use mneme_host::embedder::Embedder;
use serde_json::{Value, json};

use crate::summarizers::{Seen, serve_with};

/// A deterministic model: each text's vector counts its words on three axes of
/// meaning (vehicles, weather, anything else), so "car" is near "automobile".
fn toy_vector(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0f32; 3];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        match word.to_lowercase().as_str() {
            "car" | "automobile" | "sedan" => vector[0] += 1.0,
            "sunny" | "rain" | "weather" => vector[1] += 1.0,
            _ => vector[2] += 0.1,
        }
    }
    vector
}

/// `/v1/embeddings` as OpenAI answers it, items listed last first (each names its index).
fn embeddings(seen: &Seen) -> (u16, Value) {
    let inputs: Vec<&str> = seen.body["input"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": toy_vector(text)}))
        .collect();
    (200, json!({"object": "list", "data": data, "model": seen.body["model"]}))
}

fn scope() -> Scope {
    Scope::Project("-w".into())
}

#[test]
fn the_library_embeds_what_the_plan_asks_then_the_query_and_recall_finds_by_meaning() {
    let (url, seen) = serve_with(2, embeddings);
    let dir = tempfile::tempdir().unwrap();
    let mut engine = mneme_host::native(FsStorage::new(dir.path()), Limits::default());
    engine.memory_add(&scope(), NewMemory::new("Ride", MemoryType::User, "What the user drives", "A red sedan."), 1).unwrap();
    engine.memory_add(&scope(), NewMemory::new("Forecast", MemoryType::Project, "Launch day", "Sunny, no rain."), 2).unwrap();
    let embedder = Embedder { base_url: format!("{url}/v1"), model: "toy".into(), api_key: Some("sk-test".into()) };
    let mut told = Vec::new();
    let near = embedder.near(&mut *engine, &scope(), "automobile", |embedded| told.push(embedded)).unwrap();
    assert_eq!(told, [2]);
    let batch = seen.recv().unwrap();
    assert_eq!((batch.method.as_str(), batch.path.as_str()), ("POST", "/v1/embeddings"));
    assert_eq!(
        batch.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("authorization")).map(|(_, v)| v.as_str()),
        Some("Bearer sk-test")
    );
    assert_eq!(batch.body["model"], "toy");
    assert_eq!(batch.body["input"].as_array().unwrap().len(), 2);
    assert_eq!(seen.recv().unwrap().body["input"], json!(["automobile"]));
    let recalled = engine.memory_recall(&scope(), "automobile", 5, false, Default::default(), Some(&near)).unwrap();
    assert_eq!(recalled.hits.iter().map(|hit| hit.file.as_str()).collect::<Vec<_>>(), ["ride"]);
}

#[test]
fn mneme_memory_recall_with_an_embedder_url_finds_by_meaning_and_embeds_each_memory_once() {
    // Two runs: the first embeds both memories, then the query; the second, only the query.
    let (url, seen) = serve_with(3, embeddings);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let run = |args: &[&str]| crate::mneme_command().args(["--root", root]).args(args).output().unwrap();
    for (name, body) in [("Ride", "A red sedan."), ("Forecast", "Sunny, no rain.")] {
        let added = run(&["memory", "add", "--project", "-w", "--name", name, "--type", "user", "--body", body]);
        assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    }
    let recall =
        ["memory", "recall", "--project", "-w", "automobile", "--json", "--embedder-url", &format!("{url}/v1"), "--embedder-model", "toy"];
    for expected_progress in [true, false] {
        let output = run(&recall);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        assert_eq!(stderr.contains("embedded 2 memories with toy"), expected_progress, "{stderr}");
        let hits: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(hits[0]["file"], "ride", "{hits}");
    }
    assert_eq!(seen.iter().take(3).map(|request| request.body["input"].as_array().unwrap().len()).collect::<Vec<_>>(), [2, 1, 1]);
    assert!(dir.path().join("projects/-w/memory/.mneme/vectors.jsonl").exists());
}

#[test]
fn an_embedder_that_refuses_is_reported_in_the_users_words() {
    let (url, _seen) = serve_with(1, |_| (401, json!({"error": {"message": "Incorrect API key provided"}})));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let run = |args: &[&str]| crate::mneme_command().args(["--root", root]).args(args).output().unwrap();
    assert!(run(&["memory", "add", "--project", "-w", "--name", "Ride", "--type", "user", "--body", "A red sedan."]).status.success());
    let output = run(&["memory", "recall", "--project", "-w", "car", "--embedder-url", &format!("{url}/v1")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("the embedder:") && stderr.contains("answered 401") && stderr.contains("Incorrect API key"), "{stderr}");
    let unkeyed = run(&["memory", "recall", "--project", "-w", "car", "--embedder-url", "https://api.openai.com/v1"]);
    let stderr = String::from_utf8_lossy(&unkeyed.stderr);
    assert!(!unkeyed.status.success() && stderr.contains("no API key for https://api.openai.com/v1: set OPENAI_API_KEY"), "{stderr}");
}
