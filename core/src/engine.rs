//! The engine's operations as one synchronous trait: what every Rust host offers
//! (the core linked natively, the component under wasmtime) and what the
//! conformance suite tests, so an operation is declared once for all of them.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::compaction::{Mode, Plan, Run, Settings, Step};
use crate::crab::CrabSession;
use crate::error::Error;
use crate::gates::{Decision, DreamSettings, ExtractionSettings, FlushSettings, Reply, ResetPolicy};
use crate::index::RebuildReport;
use crate::index::openclaw::KeysImported;
use crate::index::sessionkey::KeyParts;
use crate::index::{Field, Inbound, IndexHealth, KeyEntry, KeyPatch, KeyView, Resolution, RolledOver, RoutePolicy};
use crate::interchange::{ExportFormat, Exported, Import, Imported};
use crate::memory::consolidate::{Consolidation, ConsolidationPlan};
use crate::memory::extract::{Extracted, ExtractionPlan};
use crate::memory::file::{LinkKind, Memory};
use crate::memory::instructions::{Instructions, Request};
use crate::memory::memory_md::{Caps, Loaded};
use crate::memory::store::{Change, EmbeddingPlan, Filter, MemoryIndexReport, Near, NewMemory, Recalled, Scope, Shown};
use crate::memory::tool::MemoryToolResult;
use crate::message::{Injection, Provider, Turn};
use crate::recall::Window;
use crate::recall::embed::EmbeddingsInfo;
use crate::retention::{ArchivedSession, GcReport, Retention};
use crate::sessions::{
    Applied, CompactionIds, Listing, NewEntry, RepairReport, SearchHit, Subagent, Transcript, TranscriptKey, WrittenSession,
};
use crate::transcript::ProviderContext;
use crate::transcript::{Branch, CheckReport, Context, Entry, Ledger, Prices};

mod store;

/// An engine's error: the core's [`Error`], or a host's error that wraps it and adds
/// its own failures (a component that trapped).
pub trait EngineError: From<Error> + core::fmt::Display + core::fmt::Debug {
    /// A stable name, as the WIT variants spell it (see [`Error::kind`]).
    fn kind(&self) -> String;
}

impl EngineError for Error {
    fn kind(&self) -> String {
        Error::kind(self)
    }
}

/// Every engine operation, called synchronously. Each does what the method of the same
/// name on the store's view of its WIT interface does (`store.sessions().append`,
/// `store.memory().memory_recall`, …). Each method is named, and its parameters named
/// and ordered, as its WIT function: `cargo xtask codegen` derives the implementations
/// (engine/store.rs, the wasmtime host's and the WASI command's) from this trait.
pub trait Engine<E: EngineError = Error> {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, E>;
    fn append_turn(&mut self, id: &str, turn: Turn) -> Result<Vec<Entry>, E>;
    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), E>;
    fn load(&mut self, id: &str) -> Result<Transcript, E>;
    fn context(&mut self, id: &str) -> Result<Context, E>;
    fn provider_context(
        &mut self,
        id: &str,
        provider: Provider,
        model: Option<&str>,
        injections: &[Injection],
    ) -> Result<ProviderContext, E>;
    fn branches(&mut self, id: &str) -> Result<Vec<Branch>, E>;
    fn usage(&mut self, id: &str, prices: Option<&Prices>) -> Result<Ledger, E>;
    fn fork(&mut self, id: &str, from: Option<&str>, to: &str, now_ms: i64) -> Result<Vec<Entry>, E>;
    fn import_session(&mut self, request: &Import) -> Result<Imported, E>;
    fn gc(&mut self, policy: &Retention, now_ms: i64) -> Result<GcReport, E>;
    fn archive(&mut self, id: &str, now_ms: i64) -> Result<ArchivedSession, E>;
    fn archived(&mut self) -> Result<Vec<ArchivedSession>, E>;
    fn restore(&mut self, id: &str) -> Result<ArchivedSession, E>;
    fn export_session(&mut self, id: &str, to: ExportFormat, uuid: &str) -> Result<Exported, E>;
    fn check(&mut self, id: &str) -> Result<CheckReport, E>;
    /// [`crate::check_bytes`]: a transcript that is not in the store.
    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, E>;
    /// [`crate::keys::project_dir_name`]: a working directory's project.
    fn project_of(&mut self, cwd: &str) -> Result<String, E>;
    /// [`crate::keys::session_id_of`]: the session id an agent SDK's name is kept under.
    fn session_id_of(&mut self, name: &str) -> Result<String, E>;
    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, E>;
    fn remove(&mut self, id: &str) -> Result<Vec<String>, E>;
    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, E>;
    fn list(&mut self) -> Result<Listing, E>;
    fn search(&mut self, query: &str, limit: usize, project: Option<&str>, window: Window) -> Result<Vec<SearchHit>, E>;
    fn reopen(&mut self, id: &str) -> Result<(), E>;
    fn set_redaction(&mut self, kinds: &[String]) -> Result<(), E>;
    fn append_lines(&mut self, key: &TranscriptKey, lines: &[String], now_ms: i64) -> Result<u32, E>;
    fn read_lines(&mut self, key: &TranscriptKey) -> Result<Option<Vec<String>>, E>;
    fn written_sessions(&mut self, project: &str) -> Result<Vec<WrittenSession>, E>;
    fn subpaths(&mut self, project: &str, id: &str) -> Result<Vec<String>, E>;
    fn remove_transcript(&mut self, key: &TranscriptKey) -> Result<(), E>;
    fn append_items(&mut self, id: &str, items: &str, cwd: &str, uuid: &str, now_ms: i64) -> Result<u32, E>;
    fn items(&mut self, id: &str, limit: Option<u32>) -> Result<String, E>;
    fn pop_item(&mut self, id: &str, now_ms: i64) -> Result<Option<String>, E>;
    fn hold(&mut self, id: &str) -> Result<(), E>;
    fn release(&mut self, id: &str) -> Result<(), E>;
    fn plan_compaction(&mut self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, E>;
    fn summarize_offline(&mut self, id: &str, plan: &Plan) -> Result<String, E>;
    fn apply_compaction(&mut self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, E>;
    fn record_compaction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), E>;
    fn memory_flush_gate(&mut self, id: &str, settings: &FlushSettings) -> Result<Decision, E>;
    fn record_memory_flush(&mut self, id: &str, now_ms: i64) -> Result<(), E>;
    fn extraction_gate(&mut self, id: &str, settings: &ExtractionSettings) -> Result<Decision, E>;
    fn record_extraction(&mut self, id: &str, now_ms: i64) -> Result<(), E>;
    fn reset_gate(&mut self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, E>;
    fn dream_gate(&mut self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, E>;
    fn dream_acquire(&mut self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, E>;
    fn dream_release(&mut self, now_ms: i64, holder: &str, completed: bool) -> Result<(), E>;
    fn memory_add(&mut self, scope: &Scope, memory: NewMemory, now_ms: i64) -> Result<Memory, E>;
    fn memory_add_many(&mut self, scope: &Scope, memories: Vec<NewMemory>, now_ms: i64) -> Result<Vec<Memory>, E>;
    fn memory_update(&mut self, scope: &Scope, file: &str, change: Change, now_ms: i64) -> Result<Memory, E>;
    fn memory_supersede(&mut self, scope: &Scope, file: &str, replacement: NewMemory, now_ms: i64) -> Result<Memory, E>;
    fn memory_forget(&mut self, scope: &Scope, file: &str, now_ms: i64) -> Result<Memory, E>;
    fn memory_tool(&mut self, scope: &Scope, input: &str, now_ms: i64) -> Result<MemoryToolResult, E>;
    fn memory_link(&mut self, scope: &Scope, from: &str, kind: LinkKind, to: &str, now_ms: i64) -> Result<Memory, E>;
    fn memory_list(&mut self, scope: &Scope, filter: &Filter) -> Result<Vec<Memory>, E>;
    fn memory_show(&mut self, scope: &Scope, file: &str) -> Result<Shown, E>;
    fn memory_recall(
        &mut self,
        scope: &Scope,
        query: &str,
        limit: usize,
        all: bool,
        window: Window,
        near: Option<&Near>,
    ) -> Result<Recalled, E>;
    fn plan_embedding(&mut self, scope: &Scope, model: &str, limit: usize) -> Result<EmbeddingPlan, E>;
    fn apply_embedding(&mut self, scope: &Scope, plan: &EmbeddingPlan, vectors: &[Vec<f32>]) -> Result<u32, E>;
    fn memory_load(&mut self, scope: &Scope, caps: Caps) -> Result<Loaded, E>;
    fn memory_reindex(&mut self, scope: &Scope) -> Result<MemoryIndexReport, E>;
    fn memory_used(&mut self, scope: &Scope, files: &[String], now_ms: i64) -> Result<Vec<Memory>, E>;
    fn set_embeddings(&mut self, table: Option<&[u8]>) -> Result<Option<EmbeddingsInfo>, E>;
    fn plan_extraction(&mut self, scope: &Scope, id: &str) -> Result<ExtractionPlan, E>;
    fn apply_extraction(&mut self, scope: &Scope, plan: &ExtractionPlan, answer: &str, now_ms: i64) -> Result<Extracted, E>;
    fn record_extraction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), E>;
    fn plan_consolidation(&mut self, scope: &Scope, now_ms: i64) -> Result<ConsolidationPlan, E>;
    fn apply_consolidation(
        &mut self,
        scope: &Scope,
        plan: &ConsolidationPlan,
        answer: &str,
        now_ms: i64,
        dry_run: bool,
    ) -> Result<Consolidation, E>;
    fn rollback_consolidation(&mut self, scope: &Scope, id: &str, now_ms: i64) -> Result<Consolidation, E>;
    fn consolidations(&mut self, scope: &Scope) -> Result<Vec<Consolidation>, E>;
    fn instructions(&mut self, request: &Request) -> Result<Instructions, E>;
    fn write_file(&mut self, path: &str, text: &str) -> Result<(), E>;
    fn read_file(&mut self, path: &str) -> Result<Option<String>, E>;
    fn remove_file(&mut self, path: &str) -> Result<(), E>;
    fn resolve(&mut self, inbound: &Inbound, policy: &RoutePolicy, now_ms: i64, new_session_id: &str) -> Result<Resolution, E>;
    fn reset_key(&mut self, key: &str, new_session_id: &str, now_ms: i64) -> Result<KeyEntry, E>;
    fn update_key(&mut self, key: &str, patch: &KeyPatch) -> Result<KeyEntry, E>;
    fn remove_key(&mut self, key: &str) -> Result<KeyEntry, E>;
    fn key(&mut self, key: &str) -> Result<KeyView, E>;
    fn keys(&mut self, filter: &[Field]) -> Result<Vec<KeyEntry>, E>;
    fn index_report(&mut self) -> Result<IndexHealth, E>;
    fn import_openclaw_keys(&mut self, data: &[u8]) -> Result<KeysImported, E>;
    fn export_openclaw_keys(&mut self) -> Result<Vec<u8>, E>;
    fn rebuild_index(&mut self) -> Result<RebuildReport, E>;
    fn crab_latest(&mut self, project: Option<&str>, agent: &str, sender: &str) -> Result<Option<CrabSession>, E>;
    fn crab_start(&mut self, project: Option<&str>, agent: &str, sender: &str, created_by: &str, now_ms: i64) -> Result<CrabSession, E>;
    fn crab_show(&mut self, id: &str) -> Result<CrabSession, E>;
    fn crab_set_title(&mut self, id: &str, title: &str) -> Result<CrabSession, E>;
    fn crab_add_uptime(&mut self, id: &str, secs: u64) -> Result<CrabSession, E>;
    fn rollover_gate(&mut self, key: &str, max_context_tokens: u64) -> Result<Decision, E>;
    fn rollover(&mut self, key: &str, summary: &str, ids: &CompactionIds, new_session_id: &str, now_ms: i64) -> Result<RolledOver, E>;
    /// [`crate::index::route::key_of`].
    fn key_of(&mut self, inbound: &Inbound, policy: &RoutePolicy) -> Result<String, E>;
    /// [`crate::index::sessionkey::parse`].
    fn parse_key(&mut self, key: &str) -> Result<KeyParts, E>;
    /// [`crate::tokens::context_window`].
    fn context_window(&mut self, model: &str) -> Result<Option<u64>, E>;
    /// [`crate::gates::silent_reply`].
    fn silent_reply(&mut self, text: &str) -> Result<Reply, E>;
}

/// Applies `plan` of session `id` through the compaction driver ([`Run`]), the one
/// every Rust host steps: `answer` answers the summariser's requests `run` makes
/// (stopping at a failure, which `run` then asks to have recorded); then the summary is
/// applied, or the failure recorded (the circuit breaker counts it) and returned as the
/// inner `Err`, nothing else changed. `now_ms` is asked once the summariser is done:
/// a model may take minutes.
pub fn compact_with<E: EngineError>(
    engine: &mut dyn Engine<E>,
    id: &str,
    plan: &Plan,
    ids: &CompactionIds,
    now_ms: impl FnOnce() -> i64,
    answer: impl FnOnce(&mut dyn Engine<E>, &mut Run),
) -> Result<Result<Applied, String>, E> {
    let mut run = Run::new(plan.clone());
    answer(engine, &mut run);
    match run.next() {
        Step::Apply { summary } => engine.apply_compaction(id, run.plan(), &summary, ids, now_ms()).map(Ok),
        Step::RecordFailure { reason } => {
            engine.record_compaction_failure(id, &reason, now_ms())?;
            Ok(Err(reason))
        }
        Step::Summarize { .. } => {
            Err(Error::InvalidArgument("the summariser left a request unanswered: nothing was compacted".into()).into())
        }
        Step::Done => {
            Err(Error::InvalidArgument("the plan has nothing to compact: plan again, and compact only a plan that has work".into()).into())
        }
    }
}

/// [`compact_with`] every summary the offline one: for a host with no model to ask.
pub fn compact_offline<E: EngineError>(
    engine: &mut dyn Engine<E>,
    id: &str,
    plan: &Plan,
    ids: &CompactionIds,
    now_ms: i64,
) -> Result<Result<Applied, String>, E> {
    compact_with(
        engine,
        id,
        plan,
        ids,
        || now_ms,
        |engine, run| {
            while let Step::Summarize { .. } = run.next() {
                let summary = engine.summarize_offline(id, run.plan()).map_err(|e| e.to_string());
                run.handle_whole(summary);
            }
        },
    )
}
