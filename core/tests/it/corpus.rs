//! Every real transcript in `tests/corpus/` through the store, and torn tails cut at
//! every byte of a real last line.

use std::fs;
use std::path::{Path, PathBuf};

use mneme_core::{Error, InMemoryStorage, NewEntry, Provider, Role, Storage, Store, block_on};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

/// Storage holding `bytes` as the session `s`.
fn storage_of(bytes: &[u8]) -> InMemoryStorage {
    let storage = InMemoryStorage::new();
    block_on(storage.replace("projects/p/s.jsonl", bytes, None)).unwrap();
    storage
}

fn files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { files(&path, found) } else { found.push(path) }
    }
}

#[test]
fn every_corpus_file_loads_threads_and_lists_without_panic() {
    let mut paths = Vec::new();
    files(&corpus(), &mut paths);
    let storage = InMemoryStorage::new();
    let mut ids = Vec::new();
    for (index, path) in paths.iter().enumerate() {
        // Every file, whatever it holds, as a session of its own.
        let id = format!("file{index}");
        block_on(storage.replace(&format!("projects/corpus/{id}.jsonl"), &fs::read(path).unwrap(), None)).unwrap();
        ids.push((id, path));
    }
    let store = Store::new(&storage);
    for (id, path) in &ids {
        let name = path.display();
        let transcript = block_on(store.sessions().load(id)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let context = block_on(store.sessions().context(id)).unwrap();
        let check = block_on(store.sessions().check(id)).unwrap();
        assert_eq!(check.load, transcript.report, "{name}");
        assert!(context.messages.len() <= transcript.entries.len(), "{name}");
        for &i in &transcript.chain {
            assert!((i as usize) < transcript.entries.len(), "{name}");
        }
        if path.extension().is_some_and(|e| e == "jsonl") && transcript.entries.iter().any(|e| e.type_ == "user") {
            assert!(!transcript.chain.is_empty(), "{name}: a conversation has a main chain");
        }
    }
    assert_eq!(block_on(store.sessions().list()).unwrap().sessions.len(), ids.len());
}

/// Claude Code 2.1 chains each parallel call's result to its call's line, so the walk
/// from the leaf passes all but the last by; Claude Code 2.1.330 resuming this file
/// sends every one of them (checked against the real client: the same 157 messages).
#[test]
fn the_results_of_parallel_calls_are_in_the_context() {
    let path = corpus().join("claude/01-v2.1.39-autocompact/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
    let storage = storage_of(&fs::read(path).unwrap());
    let store = Store::new(&storage);
    let context = block_on(store.sessions().provider_context("s", Provider::Anthropic, None, &[])).unwrap();
    assert_eq!(context.interrupted, Vec::<String>::new(), "a call whose result the file holds was sent as interrupted");
    let body: serde_json::Value = serde_json::from_str(&context.body).unwrap();
    let results: Vec<&serde_json::Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .filter(|b| b["type"] == "tool_result" && b["tool_use_id"] == "toolu_01EzMFd6jjXMRC3RuajZugRm")
        .collect();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["content"], "", "the real (empty) output, not a synthetic error");
    assert_eq!(context.message_count, 156);
    // Results gathered after their calls are no branches of their own, nor is the
    // history before the compaction (its boundary names a logical parent the file does
    // not hold; the history goes on from the line before it).
    let branches = block_on(store.sessions().branches("s")).unwrap();
    let leaves: Vec<(&str, bool)> = branches.iter().map(|b| (&b.leaf[..8], b.current)).collect();
    assert_eq!(leaves, [("b090634d", true)]);
}

/// Claude Code 2.1.114 chains a reply's lines one under the other and each result
/// under its call's line; the reply went on under one result, and two of its lines
/// (with their calls) and their results hang off the chain. Claude Code 2.1.330 sends
/// them on resume, the results in file order (clients/run.mjs checks the whole
/// session against the real client).
#[test]
fn the_lines_of_a_reply_off_the_chain_are_in_the_context() {
    let path = corpus().join("claude/03-v2.1.114-attachments/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl");
    let storage = storage_of(&fs::read(path).unwrap());
    let store = Store::new(&storage);
    let context = block_on(store.sessions().provider_context("s", Provider::Anthropic, None, &[])).unwrap();
    let body: serde_json::Value = serde_json::from_str(&context.body).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let ids = |message: &serde_json::Value, kind: &str, field: &str| -> Vec<String> {
        let blocks = message["content"].as_array().map(Vec::as_slice).unwrap_or_default();
        // The ids' ends, as short as tells them apart.
        let end = |id: &str| id[id.len() - 6..].to_owned();
        blocks.iter().filter(|b| b["type"] == kind).map(|b| end(b[field].as_str().unwrap())).collect()
    };
    let (calls, results): (Vec<_>, Vec<_>) = messages
        .windows(2)
        .map(|pair| (ids(&pair[0], "tool_use", "id"), ids(&pair[1], "tool_result", "tool_use_id")))
        .filter(|(calls, _)| calls.len() > 4)
        .unzip();
    assert_eq!(calls[1], ["n6n8Py", "xQAJKd", "y1wo4S", "5X9UUy", "3afGDT", "bEjVrx"]);
    assert_eq!(results[1], ["n6n8Py", "xQAJKd", "y1wo4S", "bEjVrx", "3afGDT", "5X9UUy"]);
    assert_eq!(context.interrupted, Vec::<String>::new());
    // The results off the chain are no branches of their own.
    let branches = block_on(store.sessions().branches("s")).unwrap();
    assert_eq!(branches.len(), 1, "{branches:#?}");
}

#[test]
fn resume_starts_at_the_real_compaction() {
    let path = corpus().join("claude/01-v2.1.39-autocompact/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
    let storage = storage_of(&fs::read(path).unwrap());
    let store = Store::new(&storage);
    let context = block_on(store.sessions().context("s")).unwrap();
    assert!(context.compacted);
    let first = &context.messages[0];
    assert!(first.is_compact_summary && first.text.starts_with("This session is being continued"), "{first:?}");
    // The history reaches back across the boundary to the session's first entry,
    // although the boundary's logical parent (459e838f) is in no line: Claude Code wrote
    // it just after the last line of the history it compacted (ce1910a6, line 753).
    let transcript = block_on(store.sessions().load("s")).unwrap();
    let chain: Vec<&mneme_core::Entry> = transcript.chain.iter().map(|&i| &transcript.entries[i as usize]).collect();
    assert_eq!((chain[0].line, chain[0].parent_uuid.as_deref()), (3, None), "the first entry with an id");
    let boundary = chain.iter().position(|e| e.uuid.as_deref().is_some_and(|u| u.starts_with("dd3cc2e6"))).unwrap();
    assert!(chain[boundary - 1].uuid.as_deref().unwrap().starts_with("ce1910a6"), "{:?}", chain[boundary - 1]);
    assert!(boundary > 200, "only {boundary} entries before the compaction");
}

#[test]
fn a_torn_last_line_at_every_byte_offset_is_reported_and_never_fused() {
    let path = corpus().join("claude/04-v2.1.42-progress/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl");
    let original = fs::read(path).unwrap();
    let body = original.strip_suffix(b"\n").unwrap();
    let last_start = body.iter().rposition(|&b| b == b'\n').unwrap() + 1;
    let full = block_on(async {
        let storage = InMemoryStorage::new();
        storage.replace("projects/p/s.jsonl", &original, None).await.unwrap();
        Store::new(&storage).sessions().load("s").await.unwrap()
    });
    let n = full.report.entry_count;
    let last_uuid = full.entries.last().unwrap().uuid.clone();
    for cut in last_start + 1..body.len() {
        let storage = storage_of(&original[..cut]);
        let store = Store::new(&storage);
        let torn = block_on(store.sessions().load("s")).unwrap();
        assert_eq!(torn.report.entry_count, n - 1, "cut at {cut}");
        assert!(torn.report.torn_tail && torn.report.skipped.is_empty(), "cut at {cut}");
        let entry = NewEntry { uuid: "after".into(), now_ms: 1_800_000_000_000, role: Role::User, text: "next".into(), cwd: "/p".into() };
        let written = block_on(store.sessions().append("s", entry)).unwrap_or_else(|e: Error| panic!("cut at {cut}: {e}"));
        assert_ne!(written.parent_uuid, last_uuid, "cut at {cut}: the torn entry is not a parent");
        let reloaded = block_on(Store::new(&storage).sessions().load("s")).unwrap();
        assert_eq!(reloaded.report.entry_count, n, "cut at {cut}");
        assert!(!reloaded.report.torn_tail && reloaded.report.skipped.is_empty(), "cut at {cut}");
        assert_eq!(reloaded.entries.last().unwrap().uuid.as_deref(), Some("after"));
        let aside = block_on(storage.list("projects/p/s.jsonl.torn-")).unwrap();
        assert_eq!(
            block_on(storage.read(&aside[0].key, 0, None)).unwrap(),
            &original[last_start..cut],
            "cut at {cut}: the fragment is kept"
        );
    }
}

mod arbitrary_input {
    use super::*;
    use proptest::prelude::*;

    /// Lines that look like transcripts often enough to reach the deep paths: pieces
    /// of real entries, glued, cut, with stray bytes between them.
    fn transcript_bytes() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"{\"type\":\"user\",\"uuid\":\"a\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}".to_vec()),
            Just(b"{\"type\":\"assistant\",\"uuid\":\"b\",\"parentUuid\":\"a\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t\"}]}}".to_vec()),
            Just(b"{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"uuid\":\"c\",\"parentUuid\":null,\"logicalParentUuid\":\"b\"}".to_vec()),
            Just(b"{\"type\":\"tombstone\",\"deleted_uuid\":\"a\"}".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
            proptest::collection::vec(any::<u8>(), 0..12),
        ];
        proptest::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn nothing_panics_and_counts_add_up(bytes in transcript_bytes(), cut in any::<proptest::sample::Index>()) {
            let bytes = &bytes[..cut.index(bytes.len() + 1)];
            let storage = storage_of(bytes);
            let store = Store::new(&storage);
            let transcript = block_on(store.sessions().load("s")).unwrap();
            let check = block_on(store.sessions().check("s")).unwrap();
            block_on(store.sessions().context("s")).unwrap();
            prop_assert_eq!(&check.load, &transcript.report);
            let by_type: u32 = transcript.report.by_type.iter().map(|t| t.count).sum();
            prop_assert_eq!(by_type, transcript.report.entry_count);
            prop_assert!(transcript.entries.len() as u32 <= transcript.report.entry_count);
            // Whatever was there, the next append lands intact and chains to a live entry.
            let entry = NewEntry { uuid: "new".into(), now_ms: 0, role: Role::User, text: "x".into(), cwd: "/p".into() };
            let written = block_on(store.sessions().append("s", entry)).unwrap();
            let reloaded = block_on(Store::new(&storage).sessions().load("s")).unwrap();
            prop_assert!(!reloaded.report.torn_tail);
            prop_assert_eq!(reloaded.entries.last().and_then(|e| e.uuid.clone()), Some("new".to_owned()));
            if let Some(parent) = written.parent_uuid {
                prop_assert!(transcript.entries.iter().any(|e| e.uuid.as_deref() == Some(parent.as_str())));
            }
            block_on(store.sessions().repair("s", 1)).unwrap();
        }
    }
}
