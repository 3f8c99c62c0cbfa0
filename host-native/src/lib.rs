//! Mneme on the filesystem.
//!
//! - [`FsStorage`]: the core's [`mneme_core::Storage`] on a root directory.
//! - [`ComponentEngine`]: the Mneme WebAssembly component (embedded in this crate) run
//!   by wasmtime, with `storage` imports served by an [`FsStorage`]. This is what the
//!   `mneme` CLI uses by default.
//! - [`NativeEngine`]: the same core linked natively, for Rust programs that don't
//!   want a wasm runtime. Both implement [`Sessions`] and are tested against each other.

mod component;
mod fs_storage;
pub mod summarize;

pub use component::{COMPONENT, ComponentEngine, Runtime};
pub use fs_storage::{Durability, FsStorage};
pub use mneme_core as core;

use mneme_core::gates::{Decision, DreamSettings, ExtractionSettings, FlushSettings, Reply, ResetPolicy};
use mneme_core::{
    Applied, CheckReport, CompactionIds, Context, Entry, Limits, Mode, NewEntry, Plan, RepairReport, SessionInfo, Settings, Store,
    Subagent, Transcript, block_on,
};

/// Why an engine call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Session(#[from] mneme_core::Error),
    /// The component trapped or could not be loaded: a bug in Mneme, not in the input.
    #[error("the Mneme component failed: {0}")]
    Component(String),
}

/// The session operations, whichever way the core is run. Each mirrors the
/// `mneme_core::Store` method of the same name.
pub trait Sessions {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error>;
    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error>;
    fn load(&mut self, id: &str) -> Result<Transcript, Error>;
    fn context(&mut self, id: &str) -> Result<Context, Error>;
    fn check(&mut self, id: &str) -> Result<CheckReport, Error>;
    /// Checks a transcript that is not in the store (a file given by path).
    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, Error>;
    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, Error>;
    fn remove(&mut self, id: &str) -> Result<Vec<String>, Error>;
    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, Error>;
    fn list(&mut self) -> Result<Vec<SessionInfo>, Error>;
    fn reopen(&mut self, id: &str) -> Result<(), Error>;
    fn plan_compaction(&mut self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, Error>;
    fn summarize_offline(&mut self, id: &str, plan: &Plan) -> Result<String, Error>;
    fn apply_compaction(&mut self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, Error>;
    fn record_compaction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error>;
    fn memory_flush_gate(&mut self, id: &str, settings: &FlushSettings) -> Result<Decision, Error>;
    fn record_memory_flush(&mut self, id: &str, now_ms: i64) -> Result<(), Error>;
    fn extraction_gate(&mut self, id: &str, settings: &ExtractionSettings) -> Result<Decision, Error>;
    fn record_extraction(&mut self, id: &str, now_ms: i64) -> Result<(), Error>;
    fn reset_gate(&mut self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, Error>;
    fn dream_gate(&mut self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, Error>;
    fn dream_acquire(&mut self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, Error>;
    fn dream_release(&mut self, now_ms: i64, holder: &str, completed: bool) -> Result<(), Error>;
    /// The context window of `model` from the core's registry.
    fn context_window(&mut self, model: &str) -> Result<Option<u64>, Error>;
    /// How to handle a streamed reply of a silent turn (see `gates::silent_reply`).
    fn silent_reply(&mut self, text: &str) -> Result<Reply, Error>;
}

/// The core linked into this process, over an [`FsStorage`].
pub struct NativeEngine {
    store: Store<FsStorage>,
}

impl NativeEngine {
    pub fn new(storage: FsStorage, limits: Limits) -> Self {
        Self { store: Store::with_limits(storage, limits) }
    }
}

impl Sessions for NativeEngine {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
        Ok(block_on(self.store.append(id, entry))?)
    }
    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error> {
        Ok(block_on(self.store.tombstone(id, uuid, now_ms))?)
    }
    fn load(&mut self, id: &str) -> Result<Transcript, Error> {
        Ok(block_on(self.store.load(id))?)
    }
    fn context(&mut self, id: &str) -> Result<Context, Error> {
        Ok(block_on(self.store.context(id))?)
    }
    fn check(&mut self, id: &str) -> Result<CheckReport, Error> {
        Ok(block_on(self.store.check(id))?)
    }
    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, Error> {
        Ok(mneme_core::check_bytes(data))
    }
    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, Error> {
        Ok(block_on(self.store.subagents(id))?)
    }
    fn remove(&mut self, id: &str) -> Result<Vec<String>, Error> {
        Ok(block_on(self.store.remove(id))?)
    }
    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, Error> {
        Ok(block_on(self.store.repair(id, now_ms))?)
    }
    fn list(&mut self) -> Result<Vec<SessionInfo>, Error> {
        Ok(block_on(self.store.list())?)
    }
    fn reopen(&mut self, id: &str) -> Result<(), Error> {
        self.store.reopen(id);
        Ok(())
    }
    fn plan_compaction(&mut self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, Error> {
        Ok(block_on(self.store.plan_compaction(id, settings, mode))?)
    }
    fn summarize_offline(&mut self, id: &str, plan: &Plan) -> Result<String, Error> {
        Ok(block_on(self.store.summarize_offline(id, plan))?)
    }
    fn apply_compaction(&mut self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, Error> {
        Ok(block_on(self.store.apply_compaction(id, plan, summary, ids, now_ms))?)
    }
    fn record_compaction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        Ok(block_on(self.store.record_compaction_failure(id, reason, now_ms))?)
    }
    fn memory_flush_gate(&mut self, id: &str, settings: &FlushSettings) -> Result<Decision, Error> {
        Ok(block_on(self.store.memory_flush_gate(id, settings))?)
    }
    fn record_memory_flush(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        Ok(block_on(self.store.record_memory_flush(id, now_ms))?)
    }
    fn extraction_gate(&mut self, id: &str, settings: &ExtractionSettings) -> Result<Decision, Error> {
        Ok(block_on(self.store.extraction_gate(id, settings))?)
    }
    fn record_extraction(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        Ok(block_on(self.store.record_extraction(id, now_ms))?)
    }
    fn reset_gate(&mut self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, Error> {
        Ok(block_on(self.store.reset_gate(id, now_ms, policy))?)
    }
    fn dream_gate(&mut self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, Error> {
        Ok(block_on(self.store.dream_gate(now_ms, settings))?)
    }
    fn dream_acquire(&mut self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, Error> {
        Ok(block_on(self.store.dream_acquire(now_ms, holder, settings))?)
    }
    fn dream_release(&mut self, now_ms: i64, holder: &str, completed: bool) -> Result<(), Error> {
        Ok(block_on(self.store.dream_release(now_ms, holder, completed))?)
    }
    fn context_window(&mut self, model: &str) -> Result<Option<u64>, Error> {
        Ok(mneme_core::tokens::context_window(model))
    }
    fn silent_reply(&mut self, text: &str) -> Result<Reply, Error> {
        Ok(mneme_core::gates::silent_reply(text))
    }
}
