// Written by `cargo xtask codegen` from wit/, the `Engine` trait in core/src/engine.rs
// and the store's views; do not edit.

//! The core itself as an [`Engine`], driving its futures to completion over a synchronous storage.

use super::{Engine, EngineError};
use crate::compaction::{Mode, Plan, Settings};
use crate::crab::CrabSession;
use crate::gates::{Decision, DreamSettings, ExtractionSettings, FlushSettings, Reply, ResetPolicy};
use crate::index::openclaw::KeysImported;
use crate::index::sessionkey::KeyParts;
use crate::index::{Field, Inbound, IndexHealth, KeyEntry, KeyPatch, KeyView, RebuildReport, Resolution, RolledOver, RoutePolicy};
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
use crate::storage::Storage;
use crate::store::Store;
use crate::support::block_on;
use crate::transcript::{Branch, CheckReport, Context, Entry, Ledger, Prices, ProviderContext};
use alloc::string::String;
use alloc::vec::Vec;

impl<S: Storage, E: EngineError> Engine<E> for Store<S> {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, E> {
        Ok(block_on(self.sessions().append(id, entry))?)
    }
    fn append_turn(&mut self, id: &str, turn: Turn) -> Result<Vec<Entry>, E> {
        Ok(block_on(self.sessions().append_turn(id, turn))?)
    }
    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), E> {
        Ok(block_on(self.sessions().tombstone(id, uuid, now_ms))?)
    }
    fn load(&mut self, id: &str) -> Result<Transcript, E> {
        Ok(block_on(self.sessions().load(id))?)
    }
    fn context(&mut self, id: &str) -> Result<Context, E> {
        Ok(block_on(self.sessions().context(id))?)
    }
    fn provider_context(
        &mut self,
        id: &str,
        provider: Provider,
        model: Option<&str>,
        injections: &[Injection],
    ) -> Result<ProviderContext, E> {
        Ok(block_on(self.sessions().provider_context(id, provider, model, injections))?)
    }
    fn branches(&mut self, id: &str) -> Result<Vec<Branch>, E> {
        Ok(block_on(self.sessions().branches(id))?)
    }
    fn usage(&mut self, id: &str, prices: Option<&Prices>) -> Result<Ledger, E> {
        Ok(block_on(self.sessions().usage(id, prices))?)
    }
    fn fork(&mut self, id: &str, from: Option<&str>, to: &str, now_ms: i64) -> Result<Vec<Entry>, E> {
        Ok(block_on(self.sessions().fork(id, from, to, now_ms))?)
    }
    fn import_session(&mut self, request: &Import) -> Result<Imported, E> {
        Ok(block_on(self.sessions().import_session(request))?)
    }
    fn gc(&mut self, policy: &Retention, now_ms: i64) -> Result<GcReport, E> {
        Ok(block_on(self.sessions().gc(policy, now_ms))?)
    }
    fn archive(&mut self, id: &str, now_ms: i64) -> Result<ArchivedSession, E> {
        Ok(block_on(self.sessions().archive(id, now_ms))?)
    }
    fn archived(&mut self) -> Result<Vec<ArchivedSession>, E> {
        Ok(block_on(self.sessions().archived())?)
    }
    fn restore(&mut self, id: &str) -> Result<ArchivedSession, E> {
        Ok(block_on(self.sessions().restore(id))?)
    }
    fn export_session(&mut self, id: &str, to: ExportFormat, uuid: &str) -> Result<Exported, E> {
        Ok(block_on(self.sessions().export_session(id, to, uuid))?)
    }
    fn check(&mut self, id: &str) -> Result<CheckReport, E> {
        Ok(block_on(self.sessions().check(id))?)
    }
    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, E> {
        Ok(crate::sessions::Sessions::<S>::check_bytes(data))
    }
    fn project_of(&mut self, cwd: &str) -> Result<String, E> {
        Ok(crate::sessions::Sessions::<S>::project_of(cwd))
    }
    fn session_id_of(&mut self, name: &str) -> Result<String, E> {
        Ok(crate::sessions::Sessions::<S>::session_id_of(name))
    }
    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, E> {
        Ok(block_on(self.sessions().subagents(id))?)
    }
    fn remove(&mut self, id: &str) -> Result<Vec<String>, E> {
        Ok(block_on(self.sessions().remove(id))?)
    }
    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, E> {
        Ok(block_on(self.sessions().repair(id, now_ms))?)
    }
    fn list(&mut self) -> Result<Listing, E> {
        Ok(block_on(self.sessions().list())?)
    }
    fn search(&mut self, query: &str, limit: usize, project: Option<&str>, window: Window) -> Result<Vec<SearchHit>, E> {
        Ok(block_on(self.sessions().search(query, limit, project, window))?)
    }
    fn reopen(&mut self, id: &str) -> Result<(), E> {
        self.sessions().reopen(id);
        Ok(())
    }
    fn set_redaction(&mut self, kinds: &[String]) -> Result<(), E> {
        Ok(self.sessions().set_redaction(kinds)?)
    }
    fn append_lines(&mut self, key: &TranscriptKey, lines: &[String], now_ms: i64) -> Result<u32, E> {
        Ok(block_on(self.sessions().append_lines(key, lines, now_ms))?)
    }
    fn read_lines(&mut self, key: &TranscriptKey) -> Result<Option<Vec<String>>, E> {
        Ok(block_on(self.sessions().read_lines(key))?)
    }
    fn written_sessions(&mut self, project: &str) -> Result<Vec<WrittenSession>, E> {
        Ok(block_on(self.sessions().written_sessions(project))?)
    }
    fn subpaths(&mut self, project: &str, id: &str) -> Result<Vec<String>, E> {
        Ok(block_on(self.sessions().subpaths(project, id))?)
    }
    fn remove_transcript(&mut self, key: &TranscriptKey) -> Result<(), E> {
        Ok(block_on(self.sessions().remove_transcript(key))?)
    }
    fn append_items(&mut self, id: &str, items: &str, cwd: &str, uuid: &str, now_ms: i64) -> Result<u32, E> {
        Ok(block_on(self.sessions().append_items(id, items, cwd, uuid, now_ms))?)
    }
    fn items(&mut self, id: &str, limit: Option<u32>) -> Result<String, E> {
        Ok(block_on(self.sessions().items(id, limit))?)
    }
    fn pop_item(&mut self, id: &str, now_ms: i64) -> Result<Option<String>, E> {
        Ok(block_on(self.sessions().pop_item(id, now_ms))?)
    }
    fn hold(&mut self, id: &str) -> Result<(), E> {
        Ok(block_on(self.sessions().hold(id))?)
    }
    fn release(&mut self, id: &str) -> Result<(), E> {
        Ok(block_on(self.sessions().release(id))?)
    }
    fn plan_compaction(&mut self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, E> {
        Ok(block_on(self.compaction().plan_compaction(id, settings, mode))?)
    }
    fn summarize_offline(&mut self, id: &str, plan: &Plan) -> Result<String, E> {
        Ok(block_on(self.compaction().summarize_offline(id, plan))?)
    }
    fn apply_compaction(&mut self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, E> {
        Ok(block_on(self.compaction().apply_compaction(id, plan, summary, ids, now_ms))?)
    }
    fn record_compaction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), E> {
        Ok(block_on(self.compaction().record_compaction_failure(id, reason, now_ms))?)
    }
    fn memory_flush_gate(&mut self, id: &str, settings: &FlushSettings) -> Result<Decision, E> {
        Ok(block_on(self.gates().memory_flush_gate(id, settings))?)
    }
    fn record_memory_flush(&mut self, id: &str, now_ms: i64) -> Result<(), E> {
        Ok(block_on(self.gates().record_memory_flush(id, now_ms))?)
    }
    fn extraction_gate(&mut self, id: &str, settings: &ExtractionSettings) -> Result<Decision, E> {
        Ok(block_on(self.gates().extraction_gate(id, settings))?)
    }
    fn record_extraction(&mut self, id: &str, now_ms: i64) -> Result<(), E> {
        Ok(block_on(self.gates().record_extraction(id, now_ms))?)
    }
    fn reset_gate(&mut self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, E> {
        Ok(block_on(self.gates().reset_gate(id, now_ms, policy))?)
    }
    fn dream_gate(&mut self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, E> {
        Ok(block_on(self.gates().dream_gate(now_ms, settings))?)
    }
    fn dream_acquire(&mut self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, E> {
        Ok(block_on(self.gates().dream_acquire(now_ms, holder, settings))?)
    }
    fn dream_release(&mut self, now_ms: i64, holder: &str, completed: bool) -> Result<(), E> {
        Ok(block_on(self.gates().dream_release(now_ms, holder, completed))?)
    }
    fn memory_add(&mut self, scope: &Scope, memory: NewMemory, now_ms: i64) -> Result<Memory, E> {
        Ok(block_on(self.memory().memory_add(scope, memory, now_ms))?)
    }
    fn memory_add_many(&mut self, scope: &Scope, memories: Vec<NewMemory>, now_ms: i64) -> Result<Vec<Memory>, E> {
        Ok(block_on(self.memory().memory_add_many(scope, memories, now_ms))?)
    }
    fn memory_update(&mut self, scope: &Scope, file: &str, change: Change, now_ms: i64) -> Result<Memory, E> {
        Ok(block_on(self.memory().memory_update(scope, file, change, now_ms))?)
    }
    fn memory_supersede(&mut self, scope: &Scope, file: &str, replacement: NewMemory, now_ms: i64) -> Result<Memory, E> {
        Ok(block_on(self.memory().memory_supersede(scope, file, replacement, now_ms))?)
    }
    fn memory_forget(&mut self, scope: &Scope, file: &str, now_ms: i64) -> Result<Memory, E> {
        Ok(block_on(self.memory().memory_forget(scope, file, now_ms))?)
    }
    fn memory_tool(&mut self, scope: &Scope, input: &str, now_ms: i64) -> Result<MemoryToolResult, E> {
        Ok(block_on(self.memory().memory_tool(scope, input, now_ms))?)
    }
    fn memory_link(&mut self, scope: &Scope, from: &str, kind: LinkKind, to: &str, now_ms: i64) -> Result<Memory, E> {
        Ok(block_on(self.memory().memory_link(scope, from, kind, to, now_ms))?)
    }
    fn memory_list(&mut self, scope: &Scope, filter: &Filter) -> Result<Vec<Memory>, E> {
        Ok(block_on(self.memory().memory_list(scope, filter))?)
    }
    fn memory_show(&mut self, scope: &Scope, file: &str) -> Result<Shown, E> {
        Ok(block_on(self.memory().memory_show(scope, file))?)
    }
    fn memory_recall(
        &mut self,
        scope: &Scope,
        query: &str,
        limit: usize,
        all: bool,
        window: Window,
        near: Option<&Near>,
    ) -> Result<Recalled, E> {
        Ok(block_on(self.memory().memory_recall(scope, query, limit, all, window, near))?)
    }
    fn plan_embedding(&mut self, scope: &Scope, model: &str, limit: usize) -> Result<EmbeddingPlan, E> {
        Ok(block_on(self.memory().plan_embedding(scope, model, limit))?)
    }
    fn apply_embedding(&mut self, scope: &Scope, plan: &EmbeddingPlan, vectors: &[Vec<f32>]) -> Result<u32, E> {
        Ok(block_on(self.memory().apply_embedding(scope, plan, vectors))?)
    }
    fn memory_load(&mut self, scope: &Scope, caps: Caps) -> Result<Loaded, E> {
        Ok(block_on(self.memory().memory_load(scope, caps))?)
    }
    fn memory_reindex(&mut self, scope: &Scope) -> Result<MemoryIndexReport, E> {
        Ok(block_on(self.memory().memory_reindex(scope))?)
    }
    fn memory_used(&mut self, scope: &Scope, files: &[String], now_ms: i64) -> Result<Vec<Memory>, E> {
        Ok(block_on(self.memory().memory_used(scope, files, now_ms))?)
    }
    fn set_embeddings(&mut self, table: Option<&[u8]>) -> Result<Option<EmbeddingsInfo>, E> {
        Ok(self.memory().set_embeddings(table)?)
    }
    fn plan_extraction(&mut self, scope: &Scope, id: &str) -> Result<ExtractionPlan, E> {
        Ok(block_on(self.memory().plan_extraction(scope, id))?)
    }
    fn apply_extraction(&mut self, scope: &Scope, plan: &ExtractionPlan, answer: &str, now_ms: i64) -> Result<Extracted, E> {
        Ok(block_on(self.memory().apply_extraction(scope, plan, answer, now_ms))?)
    }
    fn record_extraction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), E> {
        Ok(block_on(self.memory().record_extraction_failure(id, reason, now_ms))?)
    }
    fn plan_consolidation(&mut self, scope: &Scope, now_ms: i64) -> Result<ConsolidationPlan, E> {
        Ok(block_on(self.memory().plan_consolidation(scope, now_ms))?)
    }
    fn apply_consolidation(
        &mut self,
        scope: &Scope,
        plan: &ConsolidationPlan,
        answer: &str,
        now_ms: i64,
        dry_run: bool,
    ) -> Result<Consolidation, E> {
        Ok(block_on(self.memory().apply_consolidation(scope, plan, answer, now_ms, dry_run))?)
    }
    fn rollback_consolidation(&mut self, scope: &Scope, id: &str, now_ms: i64) -> Result<Consolidation, E> {
        Ok(block_on(self.memory().rollback_consolidation(scope, id, now_ms))?)
    }
    fn consolidations(&mut self, scope: &Scope) -> Result<Vec<Consolidation>, E> {
        Ok(block_on(self.memory().consolidations(scope))?)
    }
    fn instructions(&mut self, request: &Request) -> Result<Instructions, E> {
        Ok(block_on(self.memory().instructions(request))?)
    }
    fn write_file(&mut self, path: &str, text: &str) -> Result<(), E> {
        Ok(block_on(self.memory().write_file(path, text))?)
    }
    fn read_file(&mut self, path: &str) -> Result<Option<String>, E> {
        Ok(block_on(self.memory().read_file(path))?)
    }
    fn remove_file(&mut self, path: &str) -> Result<(), E> {
        Ok(block_on(self.memory().remove_file(path))?)
    }
    fn resolve(&mut self, inbound: &Inbound, policy: &RoutePolicy, now_ms: i64, new_session_id: &str) -> Result<Resolution, E> {
        Ok(block_on(self.index().resolve(inbound, policy, now_ms, new_session_id))?)
    }
    fn reset_key(&mut self, key: &str, new_session_id: &str, now_ms: i64) -> Result<KeyEntry, E> {
        Ok(block_on(self.index().reset_key(key, new_session_id, now_ms))?)
    }
    fn update_key(&mut self, key: &str, patch: &KeyPatch) -> Result<KeyEntry, E> {
        Ok(block_on(self.index().update_key(key, patch))?)
    }
    fn remove_key(&mut self, key: &str) -> Result<KeyEntry, E> {
        Ok(block_on(self.index().remove_key(key))?)
    }
    fn key(&mut self, key: &str) -> Result<KeyView, E> {
        Ok(block_on(self.index().key(key))?)
    }
    fn keys(&mut self, filter: &[Field]) -> Result<Vec<KeyEntry>, E> {
        Ok(block_on(self.index().keys(filter))?)
    }
    fn index_report(&mut self) -> Result<IndexHealth, E> {
        Ok(block_on(self.index().index_report())?)
    }
    fn import_openclaw_keys(&mut self, data: &[u8]) -> Result<KeysImported, E> {
        Ok(block_on(self.index().import_openclaw_keys(data))?)
    }
    fn export_openclaw_keys(&mut self) -> Result<Vec<u8>, E> {
        Ok(block_on(self.index().export_openclaw_keys())?)
    }
    fn rebuild_index(&mut self) -> Result<RebuildReport, E> {
        Ok(block_on(self.index().rebuild_index())?)
    }
    fn crab_latest(&mut self, project: Option<&str>, agent: &str, sender: &str) -> Result<Option<CrabSession>, E> {
        Ok(block_on(self.index().crab_latest(project, agent, sender))?)
    }
    fn crab_start(&mut self, project: Option<&str>, agent: &str, sender: &str, created_by: &str, now_ms: i64) -> Result<CrabSession, E> {
        Ok(block_on(self.index().crab_start(project, agent, sender, created_by, now_ms))?)
    }
    fn crab_show(&mut self, id: &str) -> Result<CrabSession, E> {
        Ok(block_on(self.index().crab_show(id))?)
    }
    fn crab_set_title(&mut self, id: &str, title: &str) -> Result<CrabSession, E> {
        Ok(block_on(self.index().crab_set_title(id, title))?)
    }
    fn crab_add_uptime(&mut self, id: &str, secs: u64) -> Result<CrabSession, E> {
        Ok(block_on(self.index().crab_add_uptime(id, secs))?)
    }
    fn rollover_gate(&mut self, key: &str, max_context_tokens: u64) -> Result<Decision, E> {
        Ok(block_on(self.index().rollover_gate(key, max_context_tokens))?)
    }
    fn rollover(&mut self, key: &str, summary: &str, ids: &CompactionIds, new_session_id: &str, now_ms: i64) -> Result<RolledOver, E> {
        Ok(block_on(self.index().rollover(key, summary, ids, new_session_id, now_ms))?)
    }
    fn key_of(&mut self, inbound: &Inbound, policy: &RoutePolicy) -> Result<String, E> {
        Ok(crate::index::Index::<S>::key_of(inbound, policy)?)
    }
    fn parse_key(&mut self, key: &str) -> Result<KeyParts, E> {
        Ok(crate::index::Index::<S>::parse_key(key)?)
    }
    fn context_window(&mut self, model: &str) -> Result<Option<u64>, E> {
        Ok(crate::sessions::Compaction::<S>::context_window(model))
    }
    fn silent_reply(&mut self, text: &str) -> Result<Reply, E> {
        Ok(crate::sessions::Gates::<S>::silent_reply(text))
    }
}
