// Written by `cargo xtask codegen` from wit/, the `Engine` trait in core/src/engine.rs
// and the store's views; do not edit.

//! The component under wasmtime as an [`Engine`]: each operation calls its export.

use mneme_core::compaction::{Mode, Plan, Settings};
use mneme_core::crab::CrabSession;
use mneme_core::gates::{Decision, DreamSettings, ExtractionSettings, FlushSettings, Reply, ResetPolicy};
use mneme_core::index::openclaw::KeysImported;
use mneme_core::index::sessionkey::KeyParts;
use mneme_core::index::{Field, Inbound, IndexHealth, KeyEntry, KeyPatch, KeyView, RebuildReport, Resolution, RolledOver, RoutePolicy};
use mneme_core::interchange::{ExportFormat, Exported, Import, Imported};
use mneme_core::memory::consolidate::{Consolidation, ConsolidationPlan};
use mneme_core::memory::extract::{Extracted, ExtractionPlan};
use mneme_core::memory::file::{LinkKind, Memory};
use mneme_core::memory::instructions::{Instructions, Request};
use mneme_core::memory::memory_md::{Caps, Loaded};
use mneme_core::memory::store::{Change, EmbeddingPlan, Filter, MemoryIndexReport, Near, NewMemory, Recalled, Scope, Shown};
use mneme_core::memory::tool::MemoryToolResult;
use mneme_core::message::{Injection, Provider, Turn};
use mneme_core::recall::Window;
use mneme_core::recall::embed::EmbeddingsInfo;
use mneme_core::retention::{ArchivedSession, GcReport, Retention};
use mneme_core::sessions::{
    Applied, CompactionIds, Listing, NewEntry, RepairReport, SearchHit, Subagent, Transcript, TranscriptKey, WrittenSession,
};
use mneme_core::transcript::{Branch, CheckReport, Context, Entry, Ledger, Prices, ProviderContext};
use mneme_core::{Engine, Mirror};

use super::{ComponentEngine, compaction, gates, index, memory, sessions};
use crate::Error;

impl Engine<Error> for ComponentEngine {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
        let entry: sessions::NewEntry = entry.mirror();
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_append(s, h, id, &entry))
    }
    fn append_turn(&mut self, id: &str, turn: Turn) -> Result<Vec<Entry>, Error> {
        let turn: sessions::Turn = turn.mirror();
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_append_turn(s, h, id, &turn))
    }
    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_tombstone(s, h, id, uuid, now_ms))
    }
    fn load(&mut self, id: &str) -> Result<Transcript, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_load(s, h, id))
    }
    fn context(&mut self, id: &str) -> Result<Context, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_context(s, h, id))
    }
    fn provider_context(
        &mut self,
        id: &str,
        provider: Provider,
        model: Option<&str>,
        injections: &[Injection],
    ) -> Result<ProviderContext, Error> {
        let provider: sessions::Provider = provider.mirror();
        let injections: Vec<sessions::Injection> = injections.to_vec().mirror();
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_provider_context(s, h, id, provider, model, &injections))
    }
    fn branches(&mut self, id: &str) -> Result<Vec<Branch>, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_branches(s, h, id))
    }
    fn usage(&mut self, id: &str, prices: Option<&Prices>) -> Result<Ledger, Error> {
        let prices: Option<sessions::Prices> = prices.cloned().mirror();
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_usage(s, h, id, prices))
    }
    fn fork(&mut self, id: &str, from: Option<&str>, to: &str, now_ms: i64) -> Result<Vec<Entry>, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_fork(s, h, id, from, &to.to_owned(), now_ms))
    }
    fn import_session(&mut self, request: &Import) -> Result<Imported, Error> {
        let request: sessions::ImportRequest = request.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_import_session(s, h, &request))
    }
    fn gc(&mut self, policy: &Retention, now_ms: i64) -> Result<GcReport, Error> {
        let policy: sessions::Retention = policy.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_gc(s, h, &policy, now_ms))
    }
    fn archive(&mut self, id: &str, now_ms: i64) -> Result<ArchivedSession, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_archive(s, h, id, now_ms))
    }
    fn archived(&mut self) -> Result<Vec<ArchivedSession>, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_archived(s, h))
    }
    fn restore(&mut self, id: &str) -> Result<ArchivedSession, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_restore(s, h, id))
    }
    fn export_session(&mut self, id: &str, to: ExportFormat, uuid: &str) -> Result<Exported, Error> {
        let to: sessions::ExportFormat = to.mirror();
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_export_session(s, h, id, to, &uuid.to_owned()))
    }
    fn check(&mut self, id: &str) -> Result<CheckReport, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_check(s, h, id))
    }
    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, Error> {
        let data: sessions::Data = data.to_vec().mirror();
        self.call_total(|e, s, _| e.mneme_engine_sessions().call_check_bytes(s, &data))
    }
    fn project_of(&mut self, cwd: &str) -> Result<String, Error> {
        self.call_total(|e, s, _| e.mneme_engine_sessions().call_project_of(s, cwd))
    }
    fn session_id_of(&mut self, name: &str) -> Result<String, Error> {
        self.call_total(|e, s, _| e.mneme_engine_sessions().call_session_id_of(s, name))
    }
    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_subagents(s, h, id))
    }
    fn remove(&mut self, id: &str) -> Result<Vec<String>, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_remove(s, h, id))
    }
    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_repair(s, h, id, now_ms))
    }
    fn list(&mut self) -> Result<Listing, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_list(s, h))
    }
    fn search(&mut self, query: &str, limit: usize, project: Option<&str>, window: Window) -> Result<Vec<SearchHit>, Error> {
        let limit: u32 = limit.mirror();
        let window: sessions::Window = window.mirror();
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_search(s, h, query, limit, project, window))
    }
    fn reopen(&mut self, id: &str) -> Result<(), Error> {
        self.call_total(|e, s, h| e.mneme_engine_sessions().store().call_reopen(s, h, id))
    }
    fn set_redaction(&mut self, kinds: &[String]) -> Result<(), Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_set_redaction(s, h, kinds))
    }
    fn append_lines(&mut self, key: &TranscriptKey, lines: &[String], now_ms: i64) -> Result<u32, Error> {
        let key: sessions::TranscriptKey = key.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_append_lines(s, h, &key, lines, now_ms))
    }
    fn read_lines(&mut self, key: &TranscriptKey) -> Result<Option<Vec<String>>, Error> {
        let key: sessions::TranscriptKey = key.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_read_lines(s, h, &key))
    }
    fn written_sessions(&mut self, project: &str) -> Result<Vec<WrittenSession>, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_written_sessions(s, h, project))
    }
    fn subpaths(&mut self, project: &str, id: &str) -> Result<Vec<String>, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_subpaths(s, h, project, id))
    }
    fn remove_transcript(&mut self, key: &TranscriptKey) -> Result<(), Error> {
        let key: sessions::TranscriptKey = key.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_remove_transcript(s, h, &key))
    }
    fn append_items(&mut self, id: &str, items: &str, cwd: &str, uuid: &str, now_ms: i64) -> Result<u32, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_append_items(s, h, id, &items.to_owned(), cwd, &uuid.to_owned(), now_ms))
    }
    fn items(&mut self, id: &str, limit: Option<u32>) -> Result<String, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_items(s, h, id, limit))
    }
    fn pop_item(&mut self, id: &str, now_ms: i64) -> Result<Option<String>, Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_pop_item(s, h, id, now_ms))
    }
    fn hold(&mut self, id: &str) -> Result<(), Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_hold(s, h, id))
    }
    fn release(&mut self, id: &str) -> Result<(), Error> {
        self.call(|e, s, h| e.mneme_engine_sessions().store().call_release(s, h, id))
    }
    fn plan_compaction(&mut self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, Error> {
        let settings: compaction::Settings = settings.to_owned().mirror();
        let mode: compaction::Mode = mode.mirror();
        self.call(|e, s, h| e.mneme_engine_compaction().call_plan_compaction(s, h, id, settings, mode))
    }
    fn summarize_offline(&mut self, id: &str, plan: &Plan) -> Result<String, Error> {
        let plan: compaction::Plan = plan.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_compaction().call_summarize_offline(s, h, id, &plan))
    }
    fn apply_compaction(&mut self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, Error> {
        let plan: compaction::Plan = plan.to_owned().mirror();
        let ids: compaction::CompactionIds = ids.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_compaction().call_apply_compaction(s, h, id, &plan, summary, &ids, now_ms))
    }
    fn record_compaction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        self.call(|e, s, h| e.mneme_engine_compaction().call_record_compaction_failure(s, h, id, reason, now_ms))
    }
    fn memory_flush_gate(&mut self, id: &str, settings: &FlushSettings) -> Result<Decision, Error> {
        let settings: gates::FlushSettings = settings.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_gates().call_memory_flush_gate(s, h, id, settings))
    }
    fn record_memory_flush(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        self.call(|e, s, h| e.mneme_engine_gates().call_record_memory_flush(s, h, id, now_ms))
    }
    fn extraction_gate(&mut self, id: &str, settings: &ExtractionSettings) -> Result<Decision, Error> {
        let settings: gates::ExtractionSettings = settings.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_gates().call_extraction_gate(s, h, id, settings))
    }
    fn record_extraction(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        self.call(|e, s, h| e.mneme_engine_gates().call_record_extraction(s, h, id, now_ms))
    }
    fn reset_gate(&mut self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, Error> {
        let policy: gates::ResetPolicy = policy.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_gates().call_reset_gate(s, h, id, now_ms, policy))
    }
    fn dream_gate(&mut self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, Error> {
        let settings: gates::DreamSettings = settings.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_gates().call_dream_gate(s, h, now_ms, settings))
    }
    fn dream_acquire(&mut self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, Error> {
        let settings: gates::DreamSettings = settings.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_gates().call_dream_acquire(s, h, now_ms, holder, settings))
    }
    fn dream_release(&mut self, now_ms: i64, holder: &str, completed: bool) -> Result<(), Error> {
        self.call(|e, s, h| e.mneme_engine_gates().call_dream_release(s, h, now_ms, holder, completed))
    }
    fn memory_add(&mut self, scope: &Scope, memory: NewMemory, now_ms: i64) -> Result<Memory, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let memory: memory::NewMemory = memory.mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_add(s, h, &scope, &memory, now_ms))
    }
    fn memory_add_many(&mut self, scope: &Scope, memories: Vec<NewMemory>, now_ms: i64) -> Result<Vec<Memory>, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let memories: Vec<memory::NewMemory> = memories.mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_add_many(s, h, &scope, &memories, now_ms))
    }
    fn memory_update(&mut self, scope: &Scope, file: &str, change: Change, now_ms: i64) -> Result<Memory, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let change: memory::Change = change.mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_update(s, h, &scope, file, &change, now_ms))
    }
    fn memory_supersede(&mut self, scope: &Scope, file: &str, replacement: NewMemory, now_ms: i64) -> Result<Memory, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let replacement: memory::NewMemory = replacement.mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_supersede(s, h, &scope, file, &replacement, now_ms))
    }
    fn memory_forget(&mut self, scope: &Scope, file: &str, now_ms: i64) -> Result<Memory, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_forget(s, h, &scope, file, now_ms))
    }
    fn memory_tool(&mut self, scope: &Scope, input: &str, now_ms: i64) -> Result<MemoryToolResult, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_tool(s, h, &scope, &input.to_owned(), now_ms))
    }
    fn memory_link(&mut self, scope: &Scope, from: &str, kind: LinkKind, to: &str, now_ms: i64) -> Result<Memory, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let kind: memory::LinkKind = kind.mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_link(s, h, &scope, from, kind, to, now_ms))
    }
    fn memory_list(&mut self, scope: &Scope, filter: &Filter) -> Result<Vec<Memory>, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let filter: memory::Filter = filter.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_list(s, h, &scope, &filter))
    }
    fn memory_show(&mut self, scope: &Scope, file: &str) -> Result<Shown, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_show(s, h, &scope, file))
    }
    fn memory_recall(
        &mut self,
        scope: &Scope,
        query: &str,
        limit: usize,
        all: bool,
        window: Window,
        near: Option<&Near>,
    ) -> Result<Recalled, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let limit: u32 = limit.mirror();
        let window: memory::Window = window.mirror();
        let near: Option<memory::Near> = near.cloned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_recall(s, h, &scope, query, limit, all, window, near.as_ref()))
    }
    fn plan_embedding(&mut self, scope: &Scope, model: &str, limit: usize) -> Result<EmbeddingPlan, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let limit: u32 = limit.mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_plan_embedding(s, h, &scope, model, limit))
    }
    fn apply_embedding(&mut self, scope: &Scope, plan: &EmbeddingPlan, vectors: &[Vec<f32>]) -> Result<u32, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let plan: memory::EmbeddingPlan = plan.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_apply_embedding(s, h, &scope, &plan, vectors))
    }
    fn memory_load(&mut self, scope: &Scope, caps: Caps) -> Result<Loaded, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let caps: memory::Caps = caps.mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_load(s, h, &scope, caps))
    }
    fn memory_reindex(&mut self, scope: &Scope) -> Result<MemoryIndexReport, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_reindex(s, h, &scope))
    }
    fn memory_used(&mut self, scope: &Scope, files: &[String], now_ms: i64) -> Result<Vec<Memory>, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_memory_used(s, h, &scope, files, now_ms))
    }
    fn set_embeddings(&mut self, table: Option<&[u8]>) -> Result<Option<EmbeddingsInfo>, Error> {
        let table: Option<memory::Data> = table.map(|table| table.to_vec()).mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_set_embeddings(s, h, table.as_ref()))
    }
    fn plan_extraction(&mut self, scope: &Scope, id: &str) -> Result<ExtractionPlan, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_plan_extraction(s, h, &scope, id))
    }
    fn apply_extraction(&mut self, scope: &Scope, plan: &ExtractionPlan, answer: &str, now_ms: i64) -> Result<Extracted, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let plan: memory::ExtractionPlan = plan.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_apply_extraction(s, h, &scope, &plan, answer, now_ms))
    }
    fn record_extraction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        self.call(|e, s, h| e.mneme_engine_memory().call_record_extraction_failure(s, h, id, reason, now_ms))
    }
    fn plan_consolidation(&mut self, scope: &Scope, now_ms: i64) -> Result<ConsolidationPlan, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_plan_consolidation(s, h, &scope, now_ms))
    }
    fn apply_consolidation(
        &mut self,
        scope: &Scope,
        plan: &ConsolidationPlan,
        answer: &str,
        now_ms: i64,
        dry_run: bool,
    ) -> Result<Consolidation, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let plan: memory::ConsolidationPlan = plan.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_apply_consolidation(s, h, &scope, &plan, answer, now_ms, dry_run))
    }
    fn rollback_consolidation(&mut self, scope: &Scope, id: &str, now_ms: i64) -> Result<Consolidation, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_rollback_consolidation(s, h, &scope, id, now_ms))
    }
    fn consolidations(&mut self, scope: &Scope) -> Result<Vec<Consolidation>, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_consolidations(s, h, &scope))
    }
    fn instructions(&mut self, request: &Request) -> Result<Instructions, Error> {
        let request: memory::InstructionsRequest = request.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_memory().call_instructions(s, h, &request))
    }
    fn write_file(&mut self, path: &str, text: &str) -> Result<(), Error> {
        self.call(|e, s, h| e.mneme_engine_memory().call_write_file(s, h, path, text))
    }
    fn read_file(&mut self, path: &str) -> Result<Option<String>, Error> {
        self.call(|e, s, h| e.mneme_engine_memory().call_read_file(s, h, path))
    }
    fn remove_file(&mut self, path: &str) -> Result<(), Error> {
        self.call(|e, s, h| e.mneme_engine_memory().call_remove_file(s, h, path))
    }
    fn resolve(&mut self, inbound: &Inbound, policy: &RoutePolicy, now_ms: i64, new_session_id: &str) -> Result<Resolution, Error> {
        let inbound: index::Inbound = inbound.to_owned().mirror();
        let policy: index::RoutePolicy = policy.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_index().call_resolve(s, h, &inbound, &policy, now_ms, &new_session_id.to_owned()))
    }
    fn reset_key(&mut self, key: &str, new_session_id: &str, now_ms: i64) -> Result<KeyEntry, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_reset_key(s, h, key, &new_session_id.to_owned(), now_ms))
    }
    fn update_key(&mut self, key: &str, patch: &KeyPatch) -> Result<KeyEntry, Error> {
        let patch: index::KeyPatch = patch.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_index().call_update_key(s, h, key, &patch))
    }
    fn remove_key(&mut self, key: &str) -> Result<KeyEntry, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_remove_key(s, h, key))
    }
    fn key(&mut self, key: &str) -> Result<KeyView, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_key(s, h, key))
    }
    fn keys(&mut self, filter: &[Field]) -> Result<Vec<KeyEntry>, Error> {
        let filter: Vec<index::Field> = filter.to_vec().mirror();
        self.call(|e, s, h| e.mneme_engine_index().call_keys(s, h, &filter))
    }
    fn index_report(&mut self) -> Result<IndexHealth, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_index_report(s, h))
    }
    fn import_openclaw_keys(&mut self, data: &[u8]) -> Result<KeysImported, Error> {
        let data: index::Data = data.to_vec().mirror();
        self.call(|e, s, h| e.mneme_engine_index().call_import_openclaw_keys(s, h, &data))
    }
    fn export_openclaw_keys(&mut self) -> Result<Vec<u8>, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_export_openclaw_keys(s, h))
    }
    fn rebuild_index(&mut self) -> Result<RebuildReport, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_rebuild_index(s, h))
    }
    fn crab_latest(&mut self, project: Option<&str>, agent: &str, sender: &str) -> Result<Option<CrabSession>, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_crab_latest(s, h, project, agent, sender))
    }
    fn crab_start(
        &mut self,
        project: Option<&str>,
        agent: &str,
        sender: &str,
        created_by: &str,
        now_ms: i64,
    ) -> Result<CrabSession, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_crab_start(s, h, project, agent, sender, created_by, now_ms))
    }
    fn crab_show(&mut self, id: &str) -> Result<CrabSession, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_crab_show(s, h, id))
    }
    fn crab_set_title(&mut self, id: &str, title: &str) -> Result<CrabSession, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_crab_set_title(s, h, id, title))
    }
    fn crab_add_uptime(&mut self, id: &str, secs: u64) -> Result<CrabSession, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_crab_add_uptime(s, h, id, secs))
    }
    fn rollover_gate(&mut self, key: &str, max_context_tokens: u64) -> Result<Decision, Error> {
        self.call(|e, s, h| e.mneme_engine_index().call_rollover_gate(s, h, key, max_context_tokens))
    }
    fn rollover(&mut self, key: &str, summary: &str, ids: &CompactionIds, new_session_id: &str, now_ms: i64) -> Result<RolledOver, Error> {
        let ids: index::CompactionIds = ids.to_owned().mirror();
        self.call(|e, s, h| e.mneme_engine_index().call_rollover(s, h, key, summary, &ids, &new_session_id.to_owned(), now_ms))
    }
    fn key_of(&mut self, inbound: &Inbound, policy: &RoutePolicy) -> Result<String, Error> {
        let inbound: index::Inbound = inbound.to_owned().mirror();
        let policy: index::RoutePolicy = policy.to_owned().mirror();
        self.call(|e, s, _| e.mneme_engine_index().call_key_of(s, &inbound, &policy))
    }
    fn parse_key(&mut self, key: &str) -> Result<KeyParts, Error> {
        self.call(|e, s, _| e.mneme_engine_index().call_parse_key(s, key))
    }
    fn context_window(&mut self, model: &str) -> Result<Option<u64>, Error> {
        self.call_total(|e, s, _| e.mneme_engine_compaction().call_context_window(s, model))
    }
    fn silent_reply(&mut self, text: &str) -> Result<Reply, Error> {
        self.call_total(|e, s, _| e.mneme_engine_gates().call_silent_reply(s, text))
    }
}
