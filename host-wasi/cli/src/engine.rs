// Written by `cargo xtask codegen` from wit/, the `Engine` trait in core/src/engine.rs
// and the store's views; do not edit.

//! The engine this command is composed with as an [`Engine`]: each operation calls its import.

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

use super::{Composed, compaction, gates, index, memory, sessions};
use mneme_core::Error;

impl Engine<Error> for Composed {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
        let entry: sessions::NewEntry = entry.mirror();
        self.store.append(id, &entry).mirror()
    }
    fn append_turn(&mut self, id: &str, turn: Turn) -> Result<Vec<Entry>, Error> {
        let turn: sessions::Turn = turn.mirror();
        self.store.append_turn(id, &turn).mirror()
    }
    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error> {
        self.store.tombstone(id, uuid, now_ms).mirror()
    }
    fn load(&mut self, id: &str) -> Result<Transcript, Error> {
        self.store.load(id).mirror()
    }
    fn context(&mut self, id: &str) -> Result<Context, Error> {
        self.store.context(id).mirror()
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
        self.store.provider_context(id, provider, model, &injections).mirror()
    }
    fn branches(&mut self, id: &str) -> Result<Vec<Branch>, Error> {
        self.store.branches(id).mirror()
    }
    fn usage(&mut self, id: &str, prices: Option<&Prices>) -> Result<Ledger, Error> {
        let prices: Option<sessions::Prices> = prices.cloned().mirror();
        self.store.usage(id, prices).mirror()
    }
    fn fork(&mut self, id: &str, from: Option<&str>, to: &str, now_ms: i64) -> Result<Vec<Entry>, Error> {
        self.store.fork(id, from, to, now_ms).mirror()
    }
    fn import_session(&mut self, request: &Import) -> Result<Imported, Error> {
        let request: sessions::ImportRequest = request.to_owned().mirror();
        self.store.import_session(&request).mirror()
    }
    fn gc(&mut self, policy: &Retention, now_ms: i64) -> Result<GcReport, Error> {
        let policy: sessions::Retention = policy.to_owned().mirror();
        self.store.gc(&policy, now_ms).mirror()
    }
    fn archive(&mut self, id: &str, now_ms: i64) -> Result<ArchivedSession, Error> {
        self.store.archive(id, now_ms).mirror()
    }
    fn archived(&mut self) -> Result<Vec<ArchivedSession>, Error> {
        self.store.archived().mirror()
    }
    fn restore(&mut self, id: &str) -> Result<ArchivedSession, Error> {
        self.store.restore(id).mirror()
    }
    fn export_session(&mut self, id: &str, to: ExportFormat, uuid: &str) -> Result<Exported, Error> {
        let to: sessions::ExportFormat = to.mirror();
        self.store.export_session(id, to, uuid).mirror()
    }
    fn check(&mut self, id: &str) -> Result<CheckReport, Error> {
        self.store.check(id).mirror()
    }
    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, Error> {
        let data: sessions::Data = data.to_vec().mirror();
        Ok(sessions::check_bytes(&data).mirror())
    }
    fn project_of(&mut self, cwd: &str) -> Result<String, Error> {
        Ok(sessions::project_of(cwd).mirror())
    }
    fn session_id_of(&mut self, name: &str) -> Result<String, Error> {
        Ok(sessions::session_id_of(name).mirror())
    }
    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, Error> {
        self.store.subagents(id).mirror()
    }
    fn remove(&mut self, id: &str) -> Result<Vec<String>, Error> {
        self.store.remove(id).mirror()
    }
    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, Error> {
        self.store.repair(id, now_ms).mirror()
    }
    fn list(&mut self) -> Result<Listing, Error> {
        self.store.list().mirror()
    }
    fn search(&mut self, query: &str, limit: usize, project: Option<&str>, window: Window) -> Result<Vec<SearchHit>, Error> {
        let limit: u32 = limit.mirror();
        let window: sessions::Window = window.mirror();
        self.store.search(query, limit, project, window).mirror()
    }
    fn reopen(&mut self, id: &str) -> Result<(), Error> {
        self.store.reopen(id);
        Ok(())
    }
    fn set_redaction(&mut self, kinds: &[String]) -> Result<(), Error> {
        self.store.set_redaction(kinds).mirror()
    }
    fn append_lines(&mut self, key: &TranscriptKey, lines: &[String], now_ms: i64) -> Result<u32, Error> {
        let key: sessions::TranscriptKey = key.to_owned().mirror();
        self.store.append_lines(&key, lines, now_ms).mirror()
    }
    fn read_lines(&mut self, key: &TranscriptKey) -> Result<Option<Vec<String>>, Error> {
        let key: sessions::TranscriptKey = key.to_owned().mirror();
        self.store.read_lines(&key).mirror()
    }
    fn written_sessions(&mut self, project: &str) -> Result<Vec<WrittenSession>, Error> {
        self.store.written_sessions(project).mirror()
    }
    fn subpaths(&mut self, project: &str, id: &str) -> Result<Vec<String>, Error> {
        self.store.subpaths(project, id).mirror()
    }
    fn remove_transcript(&mut self, key: &TranscriptKey) -> Result<(), Error> {
        let key: sessions::TranscriptKey = key.to_owned().mirror();
        self.store.remove_transcript(&key).mirror()
    }
    fn append_items(&mut self, id: &str, items: &str, cwd: &str, uuid: &str, now_ms: i64) -> Result<u32, Error> {
        self.store.append_items(id, items, cwd, uuid, now_ms).mirror()
    }
    fn items(&mut self, id: &str, limit: Option<u32>) -> Result<String, Error> {
        self.store.items(id, limit).mirror()
    }
    fn pop_item(&mut self, id: &str, now_ms: i64) -> Result<Option<String>, Error> {
        self.store.pop_item(id, now_ms).mirror()
    }
    fn hold(&mut self, id: &str) -> Result<(), Error> {
        self.store.hold(id).mirror()
    }
    fn release(&mut self, id: &str) -> Result<(), Error> {
        self.store.release(id).mirror()
    }
    fn plan_compaction(&mut self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, Error> {
        let settings: compaction::Settings = settings.to_owned().mirror();
        let mode: compaction::Mode = mode.mirror();
        compaction::plan_compaction(&self.store, id, settings, mode).mirror()
    }
    fn summarize_offline(&mut self, id: &str, plan: &Plan) -> Result<String, Error> {
        let plan: compaction::Plan = plan.to_owned().mirror();
        compaction::summarize_offline(&self.store, id, &plan).mirror()
    }
    fn apply_compaction(&mut self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, Error> {
        let plan: compaction::Plan = plan.to_owned().mirror();
        let ids: compaction::CompactionIds = ids.to_owned().mirror();
        compaction::apply_compaction(&self.store, id, &plan, summary, &ids, now_ms).mirror()
    }
    fn record_compaction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        compaction::record_compaction_failure(&self.store, id, reason, now_ms).mirror()
    }
    fn memory_flush_gate(&mut self, id: &str, settings: &FlushSettings) -> Result<Decision, Error> {
        let settings: gates::FlushSettings = settings.to_owned().mirror();
        gates::memory_flush_gate(&self.store, id, settings).mirror()
    }
    fn record_memory_flush(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        gates::record_memory_flush(&self.store, id, now_ms).mirror()
    }
    fn extraction_gate(&mut self, id: &str, settings: &ExtractionSettings) -> Result<Decision, Error> {
        let settings: gates::ExtractionSettings = settings.to_owned().mirror();
        gates::extraction_gate(&self.store, id, settings).mirror()
    }
    fn record_extraction(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        gates::record_extraction(&self.store, id, now_ms).mirror()
    }
    fn reset_gate(&mut self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, Error> {
        let policy: gates::ResetPolicy = policy.to_owned().mirror();
        gates::reset_gate(&self.store, id, now_ms, policy).mirror()
    }
    fn dream_gate(&mut self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, Error> {
        let settings: gates::DreamSettings = settings.to_owned().mirror();
        gates::dream_gate(&self.store, now_ms, settings).mirror()
    }
    fn dream_acquire(&mut self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, Error> {
        let settings: gates::DreamSettings = settings.to_owned().mirror();
        gates::dream_acquire(&self.store, now_ms, holder, settings).mirror()
    }
    fn dream_release(&mut self, now_ms: i64, holder: &str, completed: bool) -> Result<(), Error> {
        gates::dream_release(&self.store, now_ms, holder, completed).mirror()
    }
    fn memory_add(&mut self, scope: &Scope, memory: NewMemory, now_ms: i64) -> Result<Memory, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let memory: memory::NewMemory = memory.mirror();
        memory::memory_add(&self.store, &scope, &memory, now_ms).mirror()
    }
    fn memory_add_many(&mut self, scope: &Scope, memories: Vec<NewMemory>, now_ms: i64) -> Result<Vec<Memory>, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let memories: Vec<memory::NewMemory> = memories.mirror();
        memory::memory_add_many(&self.store, &scope, &memories, now_ms).mirror()
    }
    fn memory_update(&mut self, scope: &Scope, file: &str, change: Change, now_ms: i64) -> Result<Memory, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let change: memory::Change = change.mirror();
        memory::memory_update(&self.store, &scope, file, &change, now_ms).mirror()
    }
    fn memory_supersede(&mut self, scope: &Scope, file: &str, replacement: NewMemory, now_ms: i64) -> Result<Memory, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let replacement: memory::NewMemory = replacement.mirror();
        memory::memory_supersede(&self.store, &scope, file, &replacement, now_ms).mirror()
    }
    fn memory_forget(&mut self, scope: &Scope, file: &str, now_ms: i64) -> Result<Memory, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        memory::memory_forget(&self.store, &scope, file, now_ms).mirror()
    }
    fn memory_tool(&mut self, scope: &Scope, input: &str, now_ms: i64) -> Result<MemoryToolResult, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        memory::memory_tool(&self.store, &scope, input, now_ms).mirror()
    }
    fn memory_link(&mut self, scope: &Scope, from: &str, kind: LinkKind, to: &str, now_ms: i64) -> Result<Memory, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let kind: memory::LinkKind = kind.mirror();
        memory::memory_link(&self.store, &scope, from, kind, to, now_ms).mirror()
    }
    fn memory_list(&mut self, scope: &Scope, filter: &Filter) -> Result<Vec<Memory>, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let filter: memory::Filter = filter.to_owned().mirror();
        memory::memory_list(&self.store, &scope, &filter).mirror()
    }
    fn memory_show(&mut self, scope: &Scope, file: &str) -> Result<Shown, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        memory::memory_show(&self.store, &scope, file).mirror()
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
        memory::memory_recall(&self.store, &scope, query, limit, all, window, near.as_ref()).mirror()
    }
    fn plan_embedding(&mut self, scope: &Scope, model: &str, limit: usize) -> Result<EmbeddingPlan, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let limit: u32 = limit.mirror();
        memory::plan_embedding(&self.store, &scope, model, limit).mirror()
    }
    fn apply_embedding(&mut self, scope: &Scope, plan: &EmbeddingPlan, vectors: &[Vec<f32>]) -> Result<u32, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let plan: memory::EmbeddingPlan = plan.to_owned().mirror();
        memory::apply_embedding(&self.store, &scope, &plan, vectors).mirror()
    }
    fn memory_load(&mut self, scope: &Scope, caps: Caps) -> Result<Loaded, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let caps: memory::Caps = caps.mirror();
        memory::memory_load(&self.store, &scope, caps).mirror()
    }
    fn memory_reindex(&mut self, scope: &Scope) -> Result<MemoryIndexReport, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        memory::memory_reindex(&self.store, &scope).mirror()
    }
    fn memory_used(&mut self, scope: &Scope, files: &[String], now_ms: i64) -> Result<Vec<Memory>, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        memory::memory_used(&self.store, &scope, files, now_ms).mirror()
    }
    fn set_embeddings(&mut self, table: Option<&[u8]>) -> Result<Option<EmbeddingsInfo>, Error> {
        let table: Option<memory::Data> = table.map(|table| table.to_vec()).mirror();
        memory::set_embeddings(&self.store, table.as_ref()).mirror()
    }
    fn plan_extraction(&mut self, scope: &Scope, id: &str) -> Result<ExtractionPlan, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        memory::plan_extraction(&self.store, &scope, id).mirror()
    }
    fn apply_extraction(&mut self, scope: &Scope, plan: &ExtractionPlan, answer: &str, now_ms: i64) -> Result<Extracted, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        let plan: memory::ExtractionPlan = plan.to_owned().mirror();
        memory::apply_extraction(&self.store, &scope, &plan, answer, now_ms).mirror()
    }
    fn record_extraction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        memory::record_extraction_failure(&self.store, id, reason, now_ms).mirror()
    }
    fn plan_consolidation(&mut self, scope: &Scope, now_ms: i64) -> Result<ConsolidationPlan, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        memory::plan_consolidation(&self.store, &scope, now_ms).mirror()
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
        memory::apply_consolidation(&self.store, &scope, &plan, answer, now_ms, dry_run).mirror()
    }
    fn rollback_consolidation(&mut self, scope: &Scope, id: &str, now_ms: i64) -> Result<Consolidation, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        memory::rollback_consolidation(&self.store, &scope, id, now_ms).mirror()
    }
    fn consolidations(&mut self, scope: &Scope) -> Result<Vec<Consolidation>, Error> {
        let scope: memory::Scope = scope.to_owned().mirror();
        memory::consolidations(&self.store, &scope).mirror()
    }
    fn instructions(&mut self, request: &Request) -> Result<Instructions, Error> {
        let request: memory::InstructionsRequest = request.to_owned().mirror();
        memory::instructions(&self.store, &request).mirror()
    }
    fn write_file(&mut self, path: &str, text: &str) -> Result<(), Error> {
        memory::write_file(&self.store, path, text).mirror()
    }
    fn read_file(&mut self, path: &str) -> Result<Option<String>, Error> {
        memory::read_file(&self.store, path).mirror()
    }
    fn remove_file(&mut self, path: &str) -> Result<(), Error> {
        memory::remove_file(&self.store, path).mirror()
    }
    fn resolve(&mut self, inbound: &Inbound, policy: &RoutePolicy, now_ms: i64, new_session_id: &str) -> Result<Resolution, Error> {
        let inbound: index::Inbound = inbound.to_owned().mirror();
        let policy: index::RoutePolicy = policy.to_owned().mirror();
        index::resolve(&self.store, &inbound, &policy, now_ms, new_session_id).mirror()
    }
    fn reset_key(&mut self, key: &str, new_session_id: &str, now_ms: i64) -> Result<KeyEntry, Error> {
        index::reset_key(&self.store, key, new_session_id, now_ms).mirror()
    }
    fn update_key(&mut self, key: &str, patch: &KeyPatch) -> Result<KeyEntry, Error> {
        let patch: index::KeyPatch = patch.to_owned().mirror();
        index::update_key(&self.store, key, &patch).mirror()
    }
    fn remove_key(&mut self, key: &str) -> Result<KeyEntry, Error> {
        index::remove_key(&self.store, key).mirror()
    }
    fn key(&mut self, key: &str) -> Result<KeyView, Error> {
        index::key(&self.store, key).mirror()
    }
    fn keys(&mut self, filter: &[Field]) -> Result<Vec<KeyEntry>, Error> {
        let filter: Vec<index::Field> = filter.to_vec().mirror();
        index::keys(&self.store, &filter).mirror()
    }
    fn index_report(&mut self) -> Result<IndexHealth, Error> {
        index::index_report(&self.store).mirror()
    }
    fn import_openclaw_keys(&mut self, data: &[u8]) -> Result<KeysImported, Error> {
        let data: index::Data = data.to_vec().mirror();
        index::import_openclaw_keys(&self.store, &data).mirror()
    }
    fn export_openclaw_keys(&mut self) -> Result<Vec<u8>, Error> {
        index::export_openclaw_keys(&self.store).mirror()
    }
    fn rebuild_index(&mut self) -> Result<RebuildReport, Error> {
        index::rebuild_index(&self.store).mirror()
    }
    fn crab_latest(&mut self, project: Option<&str>, agent: &str, sender: &str) -> Result<Option<CrabSession>, Error> {
        index::crab_latest(&self.store, project, agent, sender).mirror()
    }
    fn crab_start(
        &mut self,
        project: Option<&str>,
        agent: &str,
        sender: &str,
        created_by: &str,
        now_ms: i64,
    ) -> Result<CrabSession, Error> {
        index::crab_start(&self.store, project, agent, sender, created_by, now_ms).mirror()
    }
    fn crab_show(&mut self, id: &str) -> Result<CrabSession, Error> {
        index::crab_show(&self.store, id).mirror()
    }
    fn crab_set_title(&mut self, id: &str, title: &str) -> Result<CrabSession, Error> {
        index::crab_set_title(&self.store, id, title).mirror()
    }
    fn crab_add_uptime(&mut self, id: &str, secs: u64) -> Result<CrabSession, Error> {
        index::crab_add_uptime(&self.store, id, secs).mirror()
    }
    fn rollover_gate(&mut self, key: &str, max_context_tokens: u64) -> Result<Decision, Error> {
        index::rollover_gate(&self.store, key, max_context_tokens).mirror()
    }
    fn rollover(&mut self, key: &str, summary: &str, ids: &CompactionIds, new_session_id: &str, now_ms: i64) -> Result<RolledOver, Error> {
        let ids: index::CompactionIds = ids.to_owned().mirror();
        index::rollover(&self.store, key, summary, &ids, new_session_id, now_ms).mirror()
    }
    fn key_of(&mut self, inbound: &Inbound, policy: &RoutePolicy) -> Result<String, Error> {
        let inbound: index::Inbound = inbound.to_owned().mirror();
        let policy: index::RoutePolicy = policy.to_owned().mirror();
        index::key_of(&inbound, &policy).mirror()
    }
    fn parse_key(&mut self, key: &str) -> Result<KeyParts, Error> {
        index::parse_key(key).mirror()
    }
    fn context_window(&mut self, model: &str) -> Result<Option<u64>, Error> {
        Ok(compaction::context_window(model).mirror())
    }
    fn silent_reply(&mut self, text: &str) -> Result<Reply, Error> {
        Ok(gates::silent_reply(text).mirror())
    }
}
