//! Transcripts by key, line for line (what the Claude Agent SDK's `SessionStore`
//! keeps): lines load back as appended, keys are isolated, a session's own transcript
//! takes its sub-agents' with it when removed, a retried batch is written once —
//! whether its first try landed whole, in part, or another writer appended between —
//! and the lines are a session Mneme reads.

use mneme_core::redact::Redaction;
use mneme_core::storage::crash::Crashing;
use mneme_core::storage::faulty::Faulty;
use mneme_core::{Error, InMemoryStorage, Storage, Store, TranscriptKey, WrittenSession, block_on};

const T0: i64 = 1_771_200_000_000;

fn key(project: &str, id: &str, subpath: Option<&str>) -> TranscriptKey {
    TranscriptKey { project: project.into(), id: id.into(), subpath: subpath.map(Into::into) }
}

fn lines(uuids: &[&str]) -> Vec<String> {
    uuids.iter().map(|uuid| format!(r#"{{"type":"user","uuid":"{uuid}","n":{}}}"#, uuid.len())).collect()
}

fn append<S: Storage>(store: &Store<S>, key: &TranscriptKey, given: &[String]) -> u32 {
    block_on(store.sessions().append_lines(key, given, T0)).unwrap()
}

fn read<S: Storage>(store: &Store<S>, key: &TranscriptKey) -> Option<Vec<String>> {
    block_on(store.sessions().read_lines(key)).unwrap()
}

#[test]
fn lines_load_back_in_order_and_keys_are_isolated() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let main = key("proj", "sess", None);
    assert_eq!(read(&store, &main), None, "nothing was written");
    assert_eq!(append(&store, &main, &[]), 0);
    assert_eq!(read(&store, &main), None, "an empty batch leaves no transcript");
    let first = lines(&["b", "a"]);
    let second = vec![r#"{"type":"custom-title","customTitle":"t"}"#.to_owned(), r#"{"type":"x","nested":{"x":[1,2]}}"#.to_owned()];
    assert_eq!(append(&store, &main, &first), 2);
    assert_eq!(append(&store, &main, &second), 2);
    assert_eq!(read(&store, &main), Some([first.clone(), second].concat()));
    assert_eq!(block_on(storage.list("projects/proj/sess.jsonl")).unwrap().len(), 1, "where Claude Code keeps it");

    let agent = key("proj", "sess", Some("subagents/agent-1"));
    assert_eq!(read(&store, &agent), None, "a missing subpath, though the session exists");
    append(&store, &agent, &lines(&["s"]));
    assert_eq!(read(&store, &agent), Some(lines(&["s"])));
    assert!(block_on(storage.read("projects/proj/sess/subagents/agent-1.jsonl", 0, None)).is_ok());
    append(&store, &key("other", "sess", None), &lines(&["o"]));
    assert_eq!(read(&store, &key("other", "sess", None)), Some(lines(&["o"])));
    assert_eq!(read(&store, &main).map(|l| l.len()), Some(4), "another project's session of the same id is its own");
}

#[test]
fn sessions_list_with_their_last_write_and_subpaths_list_sorted() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(store.sessions().append_lines(&key("p", "a", None), &lines(&["1"]), T0)).unwrap();
    block_on(store.sessions().append_lines(&key("p", "a", None), &lines(&["2"]), T0 + 5)).unwrap();
    block_on(store.sessions().append_lines(&key("p", "b", None), &lines(&["3"]), T0 + 1)).unwrap();
    // Sub-agent transcripts only: not a session of its own.
    block_on(store.sessions().append_lines(&key("p", "c", Some("subagents/agent-x")), &lines(&["4"]), T0 + 9)).unwrap();
    block_on(store.sessions().append_lines(&key("q", "d", None), &lines(&["5"]), T0)).unwrap();
    let mut listed = block_on(store.sessions().written_sessions("p")).unwrap();
    listed.sort_by(|x, y| x.id.cmp(&y.id));
    assert_eq!(listed, [WrittenSession { id: "a".into(), updated_ms: T0 + 5 }, WrittenSession { id: "b".into(), updated_ms: T0 + 1 }]);
    assert_eq!(block_on(store.sessions().written_sessions("never")).unwrap(), []);

    for agent in ["agent-2", "agent-1", "workflows/run-1/agent-3"] {
        append(&store, &key("p", "a", Some(&format!("subagents/{agent}"))), &lines(&[agent]));
    }
    // Claude Code's sidecar beside a sub-agent's transcript is not one.
    block_on(storage.append("projects/p/a/subagents/agent-1.meta.json", b"{}")).unwrap();
    assert_eq!(
        block_on(store.sessions().subpaths("p", "a")).unwrap(),
        ["subagents/agent-1", "subagents/agent-2", "subagents/workflows/run-1/agent-3"]
    );
    assert_eq!(block_on(store.sessions().subpaths("p", "b")).unwrap(), Vec::<String>::new());
    assert_eq!(block_on(store.sessions().subpaths("p", "never")).unwrap(), Vec::<String>::new());
}

#[test]
fn a_session_s_removal_takes_its_sub_agents_and_a_sub_agent_s_only_itself() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let main = key("proj", "sess", None);
    for k in [&main, &key("proj", "sess", Some("subagents/agent-1")), &key("proj", "sess", Some("subagents/agent-2"))] {
        append(&store, k, &lines(&["x"]));
    }
    append(&store, &key("proj", "sess2", None), &lines(&["y"]));
    append(&store, &key("other", "sess", None), &lines(&["z"]));

    block_on(store.sessions().remove_transcript(&key("proj", "sess", Some("subagents/agent-1")))).unwrap();
    assert_eq!(read(&store, &key("proj", "sess", Some("subagents/agent-1"))), None);
    assert_eq!(block_on(store.sessions().subpaths("proj", "sess")).unwrap(), ["subagents/agent-2"]);
    assert!(read(&store, &main).is_some());

    block_on(storage.append("projects/proj/sess.jsonl.torn-3", b"{\"cut")).unwrap();
    block_on(store.sessions().remove_transcript(&main)).unwrap();
    assert_eq!(read(&store, &main), None);
    assert_eq!(read(&store, &key("proj", "sess", Some("subagents/agent-2"))), None, "the cascade");
    assert_eq!(block_on(storage.list("projects/proj/sess")).unwrap().len(), 1, "only sess2 is left: no torn line, no sub-agent");
    assert_eq!(block_on(store.sessions().subpaths("proj", "sess")).unwrap(), Vec::<String>::new());
    let listed: Vec<String> = block_on(store.sessions().written_sessions("proj")).unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(listed, ["sess2"]);
    assert_eq!(read(&store, &key("other", "sess", None)), Some(lines(&["z"])));
    block_on(store.sessions().remove_transcript(&key("proj", "never-written", None))).unwrap();

    // Written again after its removal, it starts afresh.
    append(&store, &main, &lines(&["x"]));
    assert_eq!(read(&store, &main), Some(lines(&["x"])));
}

#[test]
fn a_batch_retried_after_it_landed_whole_is_written_once() {
    let inner = InMemoryStorage::new();
    let main = key("p", "s", None);
    block_on(Store::new(&inner).sessions().append_lines(&main, &lines(&["a"]), T0)).unwrap();
    // The next append lands, then reports an I/O error, as a lost connection would.
    let faulty = Faulty::new(&inner, 1).only("append").landed();
    let store = Store::new(&faulty);
    let batch = lines(&["b", "c"]);
    assert!(block_on(store.sessions().append_lines(&main, &batch, T0)).is_err());
    assert_eq!(append(&store, &main, &batch), 0, "the retry finds the batch there");
    assert_eq!(read(&store, &main), Some(lines(&["a", "b", "c"])));
    // A retry that overlaps it writes only what is new; lines without a uuid always land.
    let overlapping = [lines(&["c", "d"]), vec![r#"{"type":"tag","tag":"t"}"#.to_owned()]].concat();
    assert_eq!(append(&store, &main, &overlapping), 2);
    assert_eq!(append(&store, &main, &overlapping[2..]), 1);
    assert_eq!(read(&store, &main).unwrap().len(), 6);
}

#[test]
fn a_batch_retried_after_it_landed_in_part_is_whole_once_and_the_torn_line_is_left_out() {
    let inner = InMemoryStorage::new();
    let main = key("p", "s", None);
    let batch = lines(&["first", "second", "third"]);
    // The first line and part of the second reach the disk.
    let landed = batch[0].len() + 1 + 10;
    let faulty = Faulty::new(&inner, 1).only("append").partial(landed);
    let store = Store::new(&faulty);
    assert!(block_on(store.sessions().append_lines(&main, &batch, T0)).is_err());
    assert_eq!(append(&store, &main, &batch), 2, "the first line is there already");
    assert_eq!(read(&store, &main), Some(batch.clone()));
    let aside: Vec<String> = block_on(inner.list("projects/p/s.jsonl.torn-")).unwrap().into_iter().map(|i| i.key).collect();
    assert_eq!(aside.len(), 1, "the torn line was moved aside: {aside:?}");
    // A fresh store (another process) sees the same, and appends after it cleanly.
    let fresh = Store::new(&inner);
    assert_eq!(append(&fresh, &main, &lines(&["fourth"])), 1);
    assert_eq!(read(&fresh, &main), Some([batch, lines(&["fourth"])].concat()));
}

#[test]
fn a_transcript_imported_again_is_written_once_however_long() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let main = key("p", "s", None);
    let ids: Vec<String> = (0..1500).map(|n| format!("u{n}")).collect();
    let all = lines(&ids.iter().map(String::as_str).collect::<Vec<_>>());
    for batch in all.chunks(500) {
        append(&store, &main, batch);
    }
    assert_eq!(append(&store, &main, &all), 0, "the re-import found every line");
    assert_eq!(append(&Store::new(&storage), &main, &all), 0, "and so does another process");
    assert_eq!(read(&store, &main).map(|l| l.len()), Some(1500));
}

#[test]
fn an_append_reads_none_of_a_transcript_this_store_wrote_and_nobody_else_did() {
    let storage = Crashing::recording(InMemoryStorage::new());
    let store = Store::new(&storage);
    let main = key("p", "s", None);
    for n in 0..20 {
        append(&store, &main, &lines(&[&format!("u{n}"), &format!("v{n}")]));
    }
    let reads = storage.calls().iter().filter(|call| call.operation == "read" && call.key == "projects/p/s.jsonl").count();
    assert_eq!(reads, 0, "each append read the transcript again");
    // Another writer's lines are read once, from where this store left off.
    block_on(storage.inner.append("projects/p/s.jsonl", b"{\"type\":\"x\",\"uuid\":\"w\"}\n")).unwrap();
    assert_eq!(append(&store, &main, &lines(&["x", "y"])), 2);
    let reads = storage.calls().iter().filter(|call| call.operation == "read" && call.key == "projects/p/s.jsonl").count();
    assert_eq!(reads, 1);
    // A line whose id it has seen is confirmed against the file before it is left out.
    assert_eq!(append(&store, &main, &lines(&["w"])), 0);
    let reads = storage.calls().iter().filter(|call| call.operation == "read" && call.key == "projects/p/s.jsonl").count();
    assert_eq!(reads, 2);
}

#[test]
fn a_transcript_removed_and_written_again_by_another_store_takes_the_old_lines_again() {
    let storage = InMemoryStorage::new();
    let main = key("p", "s", None);
    let ours = Store::new(&storage);
    let theirs = Store::new(&storage);
    append(&ours, &main, &lines(&["a", "b", "c"]));
    block_on(theirs.sessions().remove_transcript(&main)).unwrap();
    append(&theirs, &main, &lines(&["z"]));
    assert_eq!(append(&ours, &main, &lines(&["a", "b"])), 2, "what this store remembered is gone from the file");
    assert_eq!(read(&ours, &main), Some(lines(&["z", "a", "b"])));
}

#[test]
fn a_new_transcript_under_an_archived_session_s_id_is_refused() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let main = key("p", "s", None);
    append(&store, &main, &lines(&["a"]));
    block_on(store.sessions().archive("s", T0)).unwrap();
    assert!(matches!(block_on(store.sessions().append_lines(&main, &lines(&["b"]), T0)), Err(Error::SessionArchived { .. })));
    block_on(store.sessions().restore("s")).unwrap();
    assert_eq!(append(&store, &main, &lines(&["b"])), 1);
}

#[test]
fn the_log_of_write_times_is_compacted_as_it_grows() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for n in 0..200 {
        block_on(store.sessions().append_lines(&key("p", "s", None), &lines(&[&format!("u{n}")]), T0 + n)).unwrap();
    }
    let log = || block_on(storage.read("projects/p/.mneme/written.jsonl", 0, None)).unwrap();
    assert!(log().len() > 200 * 20);
    assert_eq!(block_on(store.sessions().written_sessions("p")).unwrap(), [WrittenSession { id: "s".into(), updated_ms: T0 + 199 }]);
    assert!(log().len() < 100, "one stamp left: {}", String::from_utf8_lossy(&log()));
    // A stamp cut short by a crash costs only itself.
    block_on(storage.append("projects/p/.mneme/written.jsonl", b"\n{\"id\":\"s\",\"m")).unwrap();
    block_on(store.sessions().append_lines(&key("p", "s", None), &lines(&["late"]), T0 + 500)).unwrap();
    assert_eq!(block_on(store.sessions().written_sessions("p")).unwrap(), [WrittenSession { id: "s".into(), updated_ms: T0 + 500 }]);
}

#[test]
fn a_whole_last_line_without_a_line_break_stays_and_the_next_goes_after_it() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let main = key("p", "s", None);
    let a = lines(&["a"]).remove(0);
    block_on(storage.append("projects/p/s.jsonl", a.as_bytes())).unwrap();
    assert_eq!(append(&store, &main, &lines(&["b"])), 1);
    assert_eq!(read(&store, &main), Some(lines(&["a", "b"])));
    assert!(block_on(storage.list("projects/p/s.jsonl.torn")).unwrap().is_empty(), "a whole line is not torn");
    assert_eq!(append(&store, &main, &lines(&["a"])), 0, "its id counts");
}

#[test]
fn a_session_mneme_rolled_over_is_deduplicated_across_its_parts() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let main = key("p", "s", None);
    block_on(storage.append("projects/p/s.jsonl", format!("{}\n", lines(&["a", "b"]).join("\n")).as_bytes())).unwrap();
    block_on(storage.append("projects/p/s_part2.jsonl", format!("{}\n", lines(&["c"]).join("\n")).as_bytes())).unwrap();
    assert_eq!(append(&store, &main, &lines(&["a", "c", "d"])), 1, "only d is new");
    assert_eq!(read(&store, &main), Some(lines(&["a", "b", "c", "d"])));
    assert_eq!(
        block_on(storage.read("projects/p/s_part2.jsonl", 0, None)).unwrap(),
        format!("{}\n", lines(&["c", "d"]).join("\n")).into_bytes()
    );
}

#[test]
fn a_new_sub_agent_transcript_of_an_archived_session_is_refused() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    append(&store, &key("p", "s", None), &lines(&["a"]));
    append(&store, &key("p", "s", Some("subagents/agent-1")), &lines(&["x"]));
    block_on(store.sessions().archive("s", T0)).unwrap();
    let refused = block_on(store.sessions().append_lines(&key("p", "s", Some("subagents/agent-1")), &lines(&["y"]), T0));
    assert!(matches!(refused, Err(Error::SessionArchived { .. })), "{refused:?}");
    block_on(store.sessions().restore("s")).unwrap();
}

#[test]
fn a_transcript_another_store_rewrote_larger_is_read_again() {
    let storage = InMemoryStorage::new();
    let main = key("p", "s", None);
    let ours = Store::new(&storage);
    let theirs = Store::new(&storage);
    append(&ours, &main, &lines(&["a", "b"]));
    block_on(theirs.sessions().remove_transcript(&main)).unwrap();
    let others: Vec<String> = (0..20).map(|n| format!("z{n}")).collect();
    append(&theirs, &main, &lines(&others.iter().map(String::as_str).collect::<Vec<_>>()));
    assert_eq!(append(&ours, &main, &lines(&["z0", "c"])), 1, "z0 is in the rewritten file, before where this store had read to");
    assert_eq!(read(&ours, &main).map(|l| l.len()), Some(21));
}

#[test]
fn a_retry_sees_what_another_writer_appended_meanwhile() {
    let storage = InMemoryStorage::new();
    let main = key("p", "s", None);
    let ours = Store::new(&storage);
    let theirs = Store::new(&storage);
    append(&ours, &main, &lines(&["a"]));
    append(&theirs, &main, &lines(&["b"]));
    assert_eq!(append(&ours, &main, &lines(&["b", "c"])), 1);
    assert_eq!(read(&ours, &main), Some(lines(&["a", "b", "c"])));
}

#[test]
fn what_is_no_line_or_no_key_is_refused_and_nothing_is_written() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let main = key("p", "s", None);
    for bad in ["not json", "[1,2]", "\"text\"", "{\"type\":\n\"x\"}", "{\"type\":\"x\""] {
        let given = [lines(&["ok"]), vec![bad.to_owned()]].concat();
        match block_on(store.sessions().append_lines(&main, &given, T0)) {
            Err(Error::InvalidArgument(message)) => assert!(message.contains("line 2 of 2"), "{message}"),
            other => panic!("{bad:?} was not refused: {other:?}"),
        }
    }
    assert_eq!(read(&store, &main), None, "a refused batch wrote nothing");
    for subpath in ["", "/abs", "../up", "a//b", "a/./b", "a\\b"] {
        let refused = block_on(store.sessions().append_lines(&key("p", "s", Some(subpath)), &lines(&["x"]), T0));
        assert!(matches!(refused, Err(Error::InvalidArgument(_))), "{subpath:?}: {refused:?}");
    }
    assert!(matches!(block_on(store.sessions().read_lines(&key("a/b", "s", None))), Err(Error::InvalidProject { .. })));
    assert!(matches!(block_on(store.sessions().read_lines(&key("p", "../s", None))), Err(Error::InvalidSessionId { .. })));
    assert_eq!(block_on(storage.list("")).unwrap(), []);
}

#[test]
fn secrets_are_masked_unless_redaction_is_off() {
    let secret = format!("sk-ant-api03-{}AA", "x".repeat(90));
    let line = format!(r#"{{"type":"user","uuid":"u","message":{{"role":"user","content":"key {secret}"}}}}"#);
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    append(&store, &key("p", "s", None), std::slice::from_ref(&line));
    let loaded = read(&store, &key("p", "s", None)).unwrap();
    assert!(!loaded[0].contains(&secret) && loaded[0].contains("\"uuid\":\"u\""), "{loaded:?}");
    store.set_redaction(Redaction::off());
    append(&store, &key("p", "t", None), std::slice::from_ref(&line));
    assert_eq!(read(&store, &key("p", "t", None)), Some(vec![line]));
}

#[test]
fn claude_code_s_lines_appended_by_key_are_a_session_mneme_reads() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus/claude/04-v2.1.42-progress/-experiments-ideas");
    let file = std::path::Path::new(corpus).join("03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl");
    let id = file.file_stem().unwrap().to_str().unwrap().to_owned();
    let text = std::fs::read_to_string(&file).unwrap();
    let given: Vec<String> = text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect();
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    store.set_redaction(Redaction::off());
    let main = key("-experiments-ideas", &id, None);
    for batch in given.chunks(10) {
        append(&store, &main, batch);
    }
    assert_eq!(read(&store, &main), Some(given.iter().map(|l| l.trim().to_owned()).collect()));
    let context = block_on(store.sessions().context(&id)).unwrap();
    assert!(!context.messages.is_empty());
    let written = block_on(store.sessions().written_sessions("-experiments-ideas")).unwrap();
    assert_eq!(written, [WrittenSession { id, updated_ms: T0 }]);
}
