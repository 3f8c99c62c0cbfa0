//! The conformance vectors through both ways of running the core on the filesystem:
//! natively linked, and inside the component under wasmtime. Both must meet every
//! expectation and give identical outcomes, step for step.

use std::fs;
use std::path::Path;

use mneme_conformance::{Host, Seed, run_all};
use mneme_host::core::gates::{Decision, DreamSettings, ExtractionSettings, FlushSettings, ResetPolicy};
use mneme_host::core::{
    Applied, CheckReport, CompactionIds, Context, Entry, Error, Limits, Mode, NewEntry, Plan, RepairReport, SessionInfo, Settings, Storage,
    Subagent, Transcript, block_on,
};
use mneme_host::{ComponentEngine, Durability, FsStorage, NativeEngine, Runtime, Sessions};

/// An engine and the folder its store lives in, removed when the vector is done.
struct Adapter<S> {
    engine: S,
    dir: tempfile::TempDir,
}

impl<S: Sessions> Host for Adapter<S> {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
        self.engine.append(id, entry).map_err(session_error)
    }
    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error> {
        self.engine.tombstone(id, uuid, now_ms).map_err(session_error)
    }
    fn load(&mut self, id: &str) -> Result<Transcript, Error> {
        self.engine.load(id).map_err(session_error)
    }
    fn context(&mut self, id: &str) -> Result<Context, Error> {
        self.engine.context(id).map_err(session_error)
    }
    fn check(&mut self, id: &str) -> Result<CheckReport, Error> {
        self.engine.check(id).map_err(session_error)
    }
    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, Error> {
        self.engine.check_bytes(data).map_err(session_error)
    }
    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, Error> {
        self.engine.subagents(id).map_err(session_error)
    }
    fn remove(&mut self, id: &str) -> Result<Vec<String>, Error> {
        self.engine.remove(id).map_err(session_error)
    }
    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, Error> {
        self.engine.repair(id, now_ms).map_err(session_error)
    }
    fn list(&mut self) -> Result<Vec<SessionInfo>, Error> {
        self.engine.list().map_err(session_error)
    }
    fn keys(&mut self, prefix: &str) -> Vec<String> {
        let storage = FsStorage::new(self.dir.path());
        block_on(storage.list(prefix)).expect("list the store").into_iter().map(|i| i.key).collect()
    }
    fn plan_compaction(&mut self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, Error> {
        self.engine.plan_compaction(id, settings, mode).map_err(session_error)
    }
    fn summarize_offline(&mut self, id: &str, plan: &Plan) -> Result<String, Error> {
        self.engine.summarize_offline(id, plan).map_err(session_error)
    }
    fn apply_compaction(&mut self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, Error> {
        self.engine.apply_compaction(id, plan, summary, ids, now_ms).map_err(session_error)
    }
    fn record_compaction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        self.engine.record_compaction_failure(id, reason, now_ms).map_err(session_error)
    }
    fn memory_flush_gate(&mut self, id: &str, settings: &FlushSettings) -> Result<Decision, Error> {
        self.engine.memory_flush_gate(id, settings).map_err(session_error)
    }
    fn record_memory_flush(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        self.engine.record_memory_flush(id, now_ms).map_err(session_error)
    }
    fn extraction_gate(&mut self, id: &str, settings: &ExtractionSettings) -> Result<Decision, Error> {
        self.engine.extraction_gate(id, settings).map_err(session_error)
    }
    fn record_extraction(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        self.engine.record_extraction(id, now_ms).map_err(session_error)
    }
    fn reset_gate(&mut self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, Error> {
        self.engine.reset_gate(id, now_ms, policy).map_err(session_error)
    }
    fn dream_gate(&mut self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, Error> {
        self.engine.dream_gate(now_ms, settings).map_err(session_error)
    }
    fn dream_acquire(&mut self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, Error> {
        self.engine.dream_acquire(now_ms, holder, settings).map_err(session_error)
    }
    fn dream_release(&mut self, now_ms: i64, holder: &str, completed: bool) -> Result<(), Error> {
        self.engine.dream_release(now_ms, holder, completed).map_err(session_error)
    }
}

fn session_error(error: mneme_host::Error) -> Error {
    match error {
        mneme_host::Error::Session(e) => e,
        other => panic!("the engine itself failed: {other}"),
    }
}

fn seeded_storage(seed: &Seed) -> (FsStorage, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (key, bytes) in seed {
        let path = dir.path().join(key);
        fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).expect("create seed folder");
        fs::write(&path, bytes).expect("write seed file");
    }
    (FsStorage::new(dir.path()).with_durability(Durability::Buffered), dir)
}

#[test]
fn native_and_component_pass_every_vector_identically() {
    let native = run_all(|seed, limits: Limits| {
        let (storage, dir) = seeded_storage(seed);
        Adapter { engine: NativeEngine::new(storage, limits), dir }
    });
    let runtime = Runtime::new().expect("the embedded component loads");
    let component = run_all(|seed, limits| {
        let (storage, dir) = seeded_storage(seed);
        let engine: ComponentEngine = runtime.instantiate(storage, limits).expect("instantiate");
        Adapter { engine, dir }
    });
    // The browser tests compare their outcomes with these (web/test/run.mjs).
    let outcomes = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("conformance-native.json");
    fs::write(&outcomes, serde_json::to_vec(&native).expect("outcomes are JSON")).expect("write the native outcomes");
    assert_eq!(native.len(), component.len());
    for ((name, native_steps), (_, component_steps)) in native.iter().zip(&component) {
        assert_eq!(native_steps, component_steps, "vector {name}: native and component differ");
    }
}
