// Written by `cargo xtask codegen` from wit/, the `Engine` trait in core/src/engine.rs
// and the store's views; do not edit.

//! The component's exports: each operation calls the store's view of its interface.

use alloc::string::String;
use alloc::vec::Vec;
use mneme_core::Mirror;
use mneme_core::compaction::{Mode, Plan, Settings};
use mneme_core::gates::{DreamSettings, ExtractionSettings, FlushSettings, ResetPolicy};
use mneme_core::index::{Field, Inbound, KeyPatch, RoutePolicy};
use mneme_core::interchange::{ExportFormat, Import};
use mneme_core::memory::consolidate::ConsolidationPlan;
use mneme_core::memory::extract::ExtractionPlan;
use mneme_core::memory::file::LinkKind;
use mneme_core::memory::instructions::Request;
use mneme_core::memory::memory_md::Caps;
use mneme_core::memory::store::{Change, EmbeddingPlan, Filter, Near, NewMemory, Scope};
use mneme_core::message::{Injection, Provider, Turn};
use mneme_core::recall::Window;
use mneme_core::retention::Retention;
use mneme_core::sessions::{CompactionIds, NewEntry, TranscriptKey};
use mneme_core::transcript::Prices;

use super::{Component, ImportedStorage, Store, compaction, gates, index, memory, own, run, sessions};

impl sessions::Guest for Component {
    type Store = super::Store;
    fn check_bytes(data: sessions::Data) -> sessions::CheckReport {
        mneme_core::sessions::Sessions::<ImportedStorage>::check_bytes(data.as_bytes()).mirror()
    }
    fn project_of(cwd: String) -> String {
        mneme_core::sessions::Sessions::<ImportedStorage>::project_of(&cwd).mirror()
    }
    fn session_id_of(name: String) -> String {
        mneme_core::sessions::Sessions::<ImportedStorage>::session_id_of(&name).mirror()
    }
    fn storage_contract() -> Vec<String> {
        own::storage_contract()
    }
    fn default_limits() -> sessions::Limits {
        own::default_limits()
    }
    fn default_retention() -> sessions::Retention {
        own::default_retention()
    }
    fn explain(error: sessions::Error) -> sessions::Explanation {
        own::explain(error)
    }
}

impl sessions::GuestStore for Store {
    fn new(limits: Option<sessions::Limits>) -> Self {
        own::new_store(limits)
    }
    fn append(&self, id: String, entry: sessions::NewEntry) -> Result<sessions::Entry, sessions::Error> {
        let entry: NewEntry = entry.mirror();
        run(self.0.sessions().append(&id, entry))
    }
    fn append_turn(&self, id: String, turn: sessions::Turn) -> Result<Vec<sessions::Entry>, sessions::Error> {
        let turn: Turn = turn.mirror();
        run(self.0.sessions().append_turn(&id, turn))
    }
    fn tombstone(&self, id: String, uuid: String, now_ms: i64) -> Result<(), sessions::Error> {
        run(self.0.sessions().tombstone(&id, &uuid, now_ms))
    }
    fn load(&self, id: String) -> Result<sessions::Transcript, sessions::Error> {
        run(self.0.sessions().load(&id))
    }
    fn context(&self, id: String) -> Result<sessions::Context, sessions::Error> {
        run(self.0.sessions().context(&id))
    }
    fn provider_context(
        &self,
        id: String,
        provider: sessions::Provider,
        model: Option<String>,
        injections: Vec<sessions::Injection>,
    ) -> Result<sessions::ProviderContext, sessions::Error> {
        let provider: Provider = provider.mirror();
        let injections: Vec<Injection> = injections.mirror();
        run(self.0.sessions().provider_context(&id, provider, model.as_deref(), &injections))
    }
    fn branches(&self, id: String) -> Result<Vec<sessions::Branch>, sessions::Error> {
        run(self.0.sessions().branches(&id))
    }
    fn usage(&self, id: String, prices: Option<sessions::Prices>) -> Result<sessions::Ledger, sessions::Error> {
        let prices: Option<Prices> = prices.mirror();
        run(self.0.sessions().usage(&id, prices.as_ref()))
    }
    fn fork(&self, id: String, from: Option<String>, to: sessions::FreshId, now_ms: i64) -> Result<Vec<sessions::Entry>, sessions::Error> {
        run(self.0.sessions().fork(&id, from.as_deref(), &to, now_ms))
    }
    fn import_session(&self, request: sessions::ImportRequest) -> Result<sessions::Imported, sessions::Error> {
        let request: Import = request.mirror();
        run(self.0.sessions().import_session(&request))
    }
    fn export_session(
        &self,
        id: String,
        to: sessions::ExportFormat,
        uuid: sessions::FreshId,
    ) -> Result<sessions::Exported, sessions::Error> {
        let to: ExportFormat = to.mirror();
        run(self.0.sessions().export_session(&id, to, &uuid))
    }
    fn gc(&self, policy: sessions::Retention, now_ms: i64) -> Result<sessions::GcReport, sessions::Error> {
        let policy: Retention = policy.mirror();
        run(self.0.sessions().gc(&policy, now_ms))
    }
    fn archive(&self, id: String, now_ms: i64) -> Result<sessions::ArchivedSession, sessions::Error> {
        run(self.0.sessions().archive(&id, now_ms))
    }
    fn archived(&self) -> Result<Vec<sessions::ArchivedSession>, sessions::Error> {
        run(self.0.sessions().archived())
    }
    fn restore(&self, id: String) -> Result<sessions::ArchivedSession, sessions::Error> {
        run(self.0.sessions().restore(&id))
    }
    fn check(&self, id: String) -> Result<sessions::CheckReport, sessions::Error> {
        run(self.0.sessions().check(&id))
    }
    fn subagents(&self, id: String) -> Result<Vec<sessions::Subagent>, sessions::Error> {
        run(self.0.sessions().subagents(&id))
    }
    fn hold(&self, id: String) -> Result<(), sessions::Error> {
        run(self.0.sessions().hold(&id))
    }
    fn release(&self, id: String) -> Result<(), sessions::Error> {
        run(self.0.sessions().release(&id))
    }
    fn remove(&self, id: String) -> Result<Vec<String>, sessions::Error> {
        run(self.0.sessions().remove(&id))
    }
    fn repair(&self, id: String, now_ms: i64) -> Result<sessions::RepairReport, sessions::Error> {
        run(self.0.sessions().repair(&id, now_ms))
    }
    fn list(&self) -> Result<sessions::Listing, sessions::Error> {
        run(self.0.sessions().list())
    }
    fn search(
        &self,
        query: String,
        limit: u32,
        project: Option<String>,
        window: sessions::Window,
    ) -> Result<Vec<sessions::SearchHit>, sessions::Error> {
        let limit: usize = limit.mirror();
        let window: Window = window.mirror();
        run(self.0.sessions().search(&query, limit, project.as_deref(), window))
    }
    fn reopen(&self, id: String) {
        self.0.sessions().reopen(&id)
    }
    fn set_redaction(&self, kinds: Vec<String>) -> Result<(), sessions::Error> {
        self.0.sessions().set_redaction(&kinds).mirror()
    }
    fn append_lines(&self, key: sessions::TranscriptKey, lines: Vec<String>, now_ms: i64) -> Result<u32, sessions::Error> {
        let key: TranscriptKey = key.mirror();
        run(self.0.sessions().append_lines(&key, &lines, now_ms))
    }
    fn read_lines(&self, key: sessions::TranscriptKey) -> Result<Option<Vec<String>>, sessions::Error> {
        let key: TranscriptKey = key.mirror();
        run(self.0.sessions().read_lines(&key))
    }
    fn written_sessions(&self, project: String) -> Result<Vec<sessions::WrittenSession>, sessions::Error> {
        run(self.0.sessions().written_sessions(&project))
    }
    fn subpaths(&self, project: String, id: String) -> Result<Vec<String>, sessions::Error> {
        run(self.0.sessions().subpaths(&project, &id))
    }
    fn remove_transcript(&self, key: sessions::TranscriptKey) -> Result<(), sessions::Error> {
        let key: TranscriptKey = key.mirror();
        run(self.0.sessions().remove_transcript(&key))
    }
    fn append_items(
        &self,
        id: String,
        items: sessions::Json,
        cwd: String,
        uuid: sessions::FreshId,
        now_ms: i64,
    ) -> Result<u32, sessions::Error> {
        run(self.0.sessions().append_items(&id, &items, &cwd, &uuid, now_ms))
    }
    fn items(&self, id: String, limit: Option<u32>) -> Result<sessions::Json, sessions::Error> {
        run(self.0.sessions().items(&id, limit))
    }
    fn pop_item(&self, id: String, now_ms: i64) -> Result<Option<sessions::Json>, sessions::Error> {
        run(self.0.sessions().pop_item(&id, now_ms))
    }
}

impl compaction::Guest for Component {
    type Run = super::Run;
    fn context_window(model: String) -> Option<u64> {
        mneme_core::sessions::Compaction::<ImportedStorage>::context_window(&model).mirror()
    }
    fn default_settings() -> compaction::Settings {
        own::default_settings()
    }
    fn plan_compaction(
        store: compaction::StoreBorrow<'_>,
        id: String,
        settings: compaction::Settings,
        mode: compaction::Mode,
    ) -> Result<compaction::Plan, compaction::Error> {
        let settings: Settings = settings.mirror();
        let mode: Mode = mode.mirror();
        run(store.get::<Store>().0.compaction().plan_compaction(&id, &settings, mode))
    }
    fn summarize_offline(store: compaction::StoreBorrow<'_>, id: String, plan: compaction::Plan) -> Result<String, compaction::Error> {
        let plan: Plan = plan.mirror();
        run(store.get::<Store>().0.compaction().summarize_offline(&id, &plan))
    }
    fn apply_compaction(
        store: compaction::StoreBorrow<'_>,
        id: String,
        plan: compaction::Plan,
        summary: String,
        ids: compaction::CompactionIds,
        now_ms: i64,
    ) -> Result<compaction::Applied, compaction::Error> {
        let plan: Plan = plan.mirror();
        let ids: CompactionIds = ids.mirror();
        run(store.get::<Store>().0.compaction().apply_compaction(&id, &plan, &summary, &ids, now_ms))
    }
    fn record_compaction_failure(
        store: compaction::StoreBorrow<'_>,
        id: String,
        reason: String,
        now_ms: i64,
    ) -> Result<(), compaction::Error> {
        run(store.get::<Store>().0.compaction().record_compaction_failure(&id, &reason, now_ms))
    }
}

impl gates::Guest for Component {
    fn silent_reply(text: String) -> gates::Reply {
        mneme_core::sessions::Gates::<ImportedStorage>::silent_reply(&text).mirror()
    }
    fn default_flush_settings() -> gates::FlushSettings {
        own::default_flush_settings()
    }
    fn default_extraction_settings() -> gates::ExtractionSettings {
        own::default_extraction_settings()
    }
    fn default_dream_settings() -> gates::DreamSettings {
        own::default_dream_settings()
    }
    fn default_reset_policy() -> gates::ResetPolicy {
        own::default_reset_policy()
    }
    fn memory_flush_gate(
        store: gates::StoreBorrow<'_>,
        id: String,
        settings: gates::FlushSettings,
    ) -> Result<gates::Decision, gates::Error> {
        let settings: FlushSettings = settings.mirror();
        run(store.get::<Store>().0.gates().memory_flush_gate(&id, &settings))
    }
    fn record_memory_flush(store: gates::StoreBorrow<'_>, id: String, now_ms: i64) -> Result<(), gates::Error> {
        run(store.get::<Store>().0.gates().record_memory_flush(&id, now_ms))
    }
    fn extraction_gate(
        store: gates::StoreBorrow<'_>,
        id: String,
        settings: gates::ExtractionSettings,
    ) -> Result<gates::Decision, gates::Error> {
        let settings: ExtractionSettings = settings.mirror();
        run(store.get::<Store>().0.gates().extraction_gate(&id, &settings))
    }
    fn record_extraction(store: gates::StoreBorrow<'_>, id: String, now_ms: i64) -> Result<(), gates::Error> {
        run(store.get::<Store>().0.gates().record_extraction(&id, now_ms))
    }
    fn reset_gate(
        store: gates::StoreBorrow<'_>,
        id: String,
        now_ms: i64,
        policy: gates::ResetPolicy,
    ) -> Result<gates::Decision, gates::Error> {
        let policy: ResetPolicy = policy.mirror();
        run(store.get::<Store>().0.gates().reset_gate(&id, now_ms, &policy))
    }
    fn dream_gate(store: gates::StoreBorrow<'_>, now_ms: i64, settings: gates::DreamSettings) -> Result<gates::Decision, gates::Error> {
        let settings: DreamSettings = settings.mirror();
        run(store.get::<Store>().0.gates().dream_gate(now_ms, &settings))
    }
    fn dream_acquire(
        store: gates::StoreBorrow<'_>,
        now_ms: i64,
        holder: String,
        settings: gates::DreamSettings,
    ) -> Result<gates::Decision, gates::Error> {
        let settings: DreamSettings = settings.mirror();
        run(store.get::<Store>().0.gates().dream_acquire(now_ms, &holder, &settings))
    }
    fn dream_release(store: gates::StoreBorrow<'_>, now_ms: i64, holder: String, completed: bool) -> Result<(), gates::Error> {
        run(store.get::<Store>().0.gates().dream_release(now_ms, &holder, completed))
    }
}

impl memory::Guest for Component {
    fn default_caps() -> memory::Caps {
        own::default_caps()
    }
    fn memory_add(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        memory: memory::NewMemory,
        now_ms: i64,
    ) -> Result<memory::Memory, memory::Error> {
        let scope: Scope = scope.mirror();
        let memory: NewMemory = memory.mirror();
        run(store.get::<Store>().0.memory().memory_add(&scope, memory, now_ms))
    }
    fn memory_add_many(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        memories: Vec<memory::NewMemory>,
        now_ms: i64,
    ) -> Result<Vec<memory::Memory>, memory::Error> {
        let scope: Scope = scope.mirror();
        let memories: Vec<NewMemory> = memories.mirror();
        run(store.get::<Store>().0.memory().memory_add_many(&scope, memories, now_ms))
    }
    fn memory_update(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        file: String,
        change: memory::Change,
        now_ms: i64,
    ) -> Result<memory::Memory, memory::Error> {
        let scope: Scope = scope.mirror();
        let change: Change = change.mirror();
        run(store.get::<Store>().0.memory().memory_update(&scope, &file, change, now_ms))
    }
    fn memory_supersede(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        file: String,
        replacement: memory::NewMemory,
        now_ms: i64,
    ) -> Result<memory::Memory, memory::Error> {
        let scope: Scope = scope.mirror();
        let replacement: NewMemory = replacement.mirror();
        run(store.get::<Store>().0.memory().memory_supersede(&scope, &file, replacement, now_ms))
    }
    fn memory_forget(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        file: String,
        now_ms: i64,
    ) -> Result<memory::Memory, memory::Error> {
        let scope: Scope = scope.mirror();
        run(store.get::<Store>().0.memory().memory_forget(&scope, &file, now_ms))
    }
    fn memory_tool(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        input: memory::Json,
        now_ms: i64,
    ) -> Result<memory::MemoryToolResult, memory::Error> {
        let scope: Scope = scope.mirror();
        run(store.get::<Store>().0.memory().memory_tool(&scope, &input, now_ms))
    }
    fn memory_link(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        from: String,
        kind: memory::LinkKind,
        to: String,
        now_ms: i64,
    ) -> Result<memory::Memory, memory::Error> {
        let scope: Scope = scope.mirror();
        let kind: LinkKind = kind.mirror();
        run(store.get::<Store>().0.memory().memory_link(&scope, &from, kind, &to, now_ms))
    }
    fn memory_list(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        filter: memory::Filter,
    ) -> Result<Vec<memory::Memory>, memory::Error> {
        let scope: Scope = scope.mirror();
        let filter: Filter = filter.mirror();
        run(store.get::<Store>().0.memory().memory_list(&scope, &filter))
    }
    fn memory_show(store: memory::StoreBorrow<'_>, scope: memory::Scope, file: String) -> Result<memory::Shown, memory::Error> {
        let scope: Scope = scope.mirror();
        run(store.get::<Store>().0.memory().memory_show(&scope, &file))
    }
    fn memory_recall(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        query: String,
        limit: u32,
        all: bool,
        window: memory::Window,
        near: Option<memory::Near>,
    ) -> Result<memory::Recalled, memory::Error> {
        let scope: Scope = scope.mirror();
        let limit: usize = limit.mirror();
        let window: Window = window.mirror();
        let near: Option<Near> = near.mirror();
        run(store.get::<Store>().0.memory().memory_recall(&scope, &query, limit, all, window, near.as_ref()))
    }
    fn plan_embedding(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        model: String,
        limit: u32,
    ) -> Result<memory::EmbeddingPlan, memory::Error> {
        let scope: Scope = scope.mirror();
        let limit: usize = limit.mirror();
        run(store.get::<Store>().0.memory().plan_embedding(&scope, &model, limit))
    }
    fn apply_embedding(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        plan: memory::EmbeddingPlan,
        vectors: Vec<Vec<f32>>,
    ) -> Result<u32, memory::Error> {
        let scope: Scope = scope.mirror();
        let plan: EmbeddingPlan = plan.mirror();
        run(store.get::<Store>().0.memory().apply_embedding(&scope, &plan, &vectors))
    }
    fn memory_load(store: memory::StoreBorrow<'_>, scope: memory::Scope, caps: memory::Caps) -> Result<memory::Loaded, memory::Error> {
        let scope: Scope = scope.mirror();
        let caps: Caps = caps.mirror();
        run(store.get::<Store>().0.memory().memory_load(&scope, caps))
    }
    fn memory_reindex(store: memory::StoreBorrow<'_>, scope: memory::Scope) -> Result<memory::MemoryIndexReport, memory::Error> {
        let scope: Scope = scope.mirror();
        run(store.get::<Store>().0.memory().memory_reindex(&scope))
    }
    fn memory_used(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        files: Vec<String>,
        now_ms: i64,
    ) -> Result<Vec<memory::Memory>, memory::Error> {
        let scope: Scope = scope.mirror();
        run(store.get::<Store>().0.memory().memory_used(&scope, &files, now_ms))
    }
    fn set_embeddings(
        store: memory::StoreBorrow<'_>,
        table: Option<memory::Data>,
    ) -> Result<Option<memory::EmbeddingsInfo>, memory::Error> {
        store.get::<Store>().0.memory().set_embeddings(table.as_ref().map(|table| table.as_bytes())).mirror()
    }
    fn plan_extraction(store: memory::StoreBorrow<'_>, scope: memory::Scope, id: String) -> Result<memory::ExtractionPlan, memory::Error> {
        let scope: Scope = scope.mirror();
        run(store.get::<Store>().0.memory().plan_extraction(&scope, &id))
    }
    fn apply_extraction(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        plan: memory::ExtractionPlan,
        answer: String,
        now_ms: i64,
    ) -> Result<memory::Extracted, memory::Error> {
        let scope: Scope = scope.mirror();
        let plan: ExtractionPlan = plan.mirror();
        run(store.get::<Store>().0.memory().apply_extraction(&scope, &plan, &answer, now_ms))
    }
    fn record_extraction_failure(store: memory::StoreBorrow<'_>, id: String, reason: String, now_ms: i64) -> Result<(), memory::Error> {
        run(store.get::<Store>().0.memory().record_extraction_failure(&id, &reason, now_ms))
    }
    fn plan_consolidation(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        now_ms: i64,
    ) -> Result<memory::ConsolidationPlan, memory::Error> {
        let scope: Scope = scope.mirror();
        run(store.get::<Store>().0.memory().plan_consolidation(&scope, now_ms))
    }
    fn apply_consolidation(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        plan: memory::ConsolidationPlan,
        answer: String,
        now_ms: i64,
        dry_run: bool,
    ) -> Result<memory::Consolidation, memory::Error> {
        let scope: Scope = scope.mirror();
        let plan: ConsolidationPlan = plan.mirror();
        run(store.get::<Store>().0.memory().apply_consolidation(&scope, &plan, &answer, now_ms, dry_run))
    }
    fn rollback_consolidation(
        store: memory::StoreBorrow<'_>,
        scope: memory::Scope,
        id: String,
        now_ms: i64,
    ) -> Result<memory::Consolidation, memory::Error> {
        let scope: Scope = scope.mirror();
        run(store.get::<Store>().0.memory().rollback_consolidation(&scope, &id, now_ms))
    }
    fn consolidations(store: memory::StoreBorrow<'_>, scope: memory::Scope) -> Result<Vec<memory::Consolidation>, memory::Error> {
        let scope: Scope = scope.mirror();
        run(store.get::<Store>().0.memory().consolidations(&scope))
    }
    fn instructions(
        store: memory::StoreBorrow<'_>,
        request: memory::InstructionsRequest,
    ) -> Result<memory::LoadedInstructions, memory::Error> {
        let request: Request = request.mirror();
        run(store.get::<Store>().0.memory().instructions(&request))
    }
    fn write_file(store: memory::StoreBorrow<'_>, path: String, text: String) -> Result<(), memory::Error> {
        run(store.get::<Store>().0.memory().write_file(&path, &text))
    }
    fn read_file(store: memory::StoreBorrow<'_>, path: String) -> Result<Option<String>, memory::Error> {
        run(store.get::<Store>().0.memory().read_file(&path))
    }
    fn remove_file(store: memory::StoreBorrow<'_>, path: String) -> Result<(), memory::Error> {
        run(store.get::<Store>().0.memory().remove_file(&path))
    }
}

impl index::Guest for Component {
    fn default_route_policy() -> index::RoutePolicy {
        own::default_route_policy()
    }
    fn default_key_patch() -> index::KeyPatch {
        own::default_key_patch()
    }
    fn key_of(inbound: index::Inbound, policy: index::RoutePolicy) -> Result<String, index::Error> {
        let inbound: Inbound = inbound.mirror();
        let policy: RoutePolicy = policy.mirror();
        mneme_core::index::Index::<ImportedStorage>::key_of(&inbound, &policy).mirror()
    }
    fn parse_key(key: String) -> Result<index::KeyParts, index::Error> {
        mneme_core::index::Index::<ImportedStorage>::parse_key(&key).mirror()
    }
    fn resolve(
        store: index::StoreBorrow<'_>,
        inbound: index::Inbound,
        policy: index::RoutePolicy,
        now_ms: i64,
        new_session_id: index::FreshId,
    ) -> Result<index::Resolution, index::Error> {
        let inbound: Inbound = inbound.mirror();
        let policy: RoutePolicy = policy.mirror();
        run(store.get::<Store>().0.index().resolve(&inbound, &policy, now_ms, &new_session_id))
    }
    fn reset_key(
        store: index::StoreBorrow<'_>,
        key: String,
        new_session_id: index::FreshId,
        now_ms: i64,
    ) -> Result<index::KeyEntry, index::Error> {
        run(store.get::<Store>().0.index().reset_key(&key, &new_session_id, now_ms))
    }
    fn update_key(store: index::StoreBorrow<'_>, key: String, patch: index::KeyPatch) -> Result<index::KeyEntry, index::Error> {
        let patch: KeyPatch = patch.mirror();
        run(store.get::<Store>().0.index().update_key(&key, &patch))
    }
    fn remove_key(store: index::StoreBorrow<'_>, key: String) -> Result<index::KeyEntry, index::Error> {
        run(store.get::<Store>().0.index().remove_key(&key))
    }
    fn key(store: index::StoreBorrow<'_>, key: String) -> Result<index::KeyView, index::Error> {
        run(store.get::<Store>().0.index().key(&key))
    }
    fn keys(store: index::StoreBorrow<'_>, filter: Vec<index::Field>) -> Result<Vec<index::KeyEntry>, index::Error> {
        let filter: Vec<Field> = filter.mirror();
        run(store.get::<Store>().0.index().keys(&filter))
    }
    fn index_report(store: index::StoreBorrow<'_>) -> Result<index::IndexHealth, index::Error> {
        run(store.get::<Store>().0.index().index_report())
    }
    fn rebuild_index(store: index::StoreBorrow<'_>) -> Result<index::RebuildReport, index::Error> {
        run(store.get::<Store>().0.index().rebuild_index())
    }
    fn import_openclaw_keys(store: index::StoreBorrow<'_>, data: index::Data) -> Result<index::KeysImported, index::Error> {
        run(store.get::<Store>().0.index().import_openclaw_keys(data.as_bytes()))
    }
    fn export_openclaw_keys(store: index::StoreBorrow<'_>) -> Result<index::Data, index::Error> {
        run(store.get::<Store>().0.index().export_openclaw_keys())
    }
    fn crab_latest(
        store: index::StoreBorrow<'_>,
        project: Option<String>,
        agent: String,
        sender: String,
    ) -> Result<Option<index::CrabSession>, index::Error> {
        run(store.get::<Store>().0.index().crab_latest(project.as_deref(), &agent, &sender))
    }
    fn crab_start(
        store: index::StoreBorrow<'_>,
        project: Option<String>,
        agent: String,
        sender: String,
        created_by: String,
        now_ms: i64,
    ) -> Result<index::CrabSession, index::Error> {
        run(store.get::<Store>().0.index().crab_start(project.as_deref(), &agent, &sender, &created_by, now_ms))
    }
    fn crab_show(store: index::StoreBorrow<'_>, id: String) -> Result<index::CrabSession, index::Error> {
        run(store.get::<Store>().0.index().crab_show(&id))
    }
    fn crab_set_title(store: index::StoreBorrow<'_>, id: String, title: String) -> Result<index::CrabSession, index::Error> {
        run(store.get::<Store>().0.index().crab_set_title(&id, &title))
    }
    fn crab_add_uptime(store: index::StoreBorrow<'_>, id: String, secs: u64) -> Result<index::CrabSession, index::Error> {
        run(store.get::<Store>().0.index().crab_add_uptime(&id, secs))
    }
    fn rollover_gate(store: index::StoreBorrow<'_>, key: String, max_context_tokens: u64) -> Result<index::Decision, index::Error> {
        run(store.get::<Store>().0.index().rollover_gate(&key, max_context_tokens))
    }
    fn rollover(
        store: index::StoreBorrow<'_>,
        key: String,
        summary: String,
        ids: index::CompactionIds,
        new_session_id: index::FreshId,
        now_ms: i64,
    ) -> Result<index::RolledOver, index::Error> {
        let ids: CompactionIds = ids.mirror();
        run(store.get::<Store>().0.index().rollover(&key, &summary, &ids, &new_session_id, now_ms))
    }
}
