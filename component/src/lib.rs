//! The Mneme core as a WebAssembly component. Each export converts its arguments,
//! calls `mneme-core`, and converts the result back; storage calls go out through
//! the imported `storage` interface. No logic lives here, and no conversion either:
//! `mneme_core::mirror_wit!` supplies every one.
#![no_std]

extern crate alloc;

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::RefCell;
use core::sync::atomic::{AtomicU8, Ordering};

use mneme_core::keys::check_key;
use mneme_core::{self as core_, Mirror};

wit_bindgen::generate!({ path: "../wit", world: "engine" });

use exports::mneme::engine::{compaction, gates, index, memory, sessions};
use mneme::engine::{storage, types};

core_::mirror_wit!(types, sessions, compaction, gates, memory, index; sends_text = wants_text());

#[cfg(all(target_arch = "wasm32", not(test)))]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

#[cfg(all(target_arch = "wasm32", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

/// The host's storage, reached through the component's imports. Keys are checked by
/// the core's rules before they leave, so no host has to restate them (each adds only
/// its own: reserved folders, platform names).
struct ImportedStorage;

impl core_::Storage for ImportedStorage {
    async fn list(&self, prefix: &str) -> Result<Vec<core_::KeyInfo>, core_::StorageError> {
        storage::list(prefix).mirror()
    }
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, core_::StorageError> {
        check_key(key)?;
        storage::read(key, offset, len).mirror()
    }
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, core_::StorageError> {
        check_key(key)?;
        // An owned copy: wit-bindgen's borrowing bindings would rename every imported type.
        storage::append(key, &data.to_vec().mirror()).mirror()
    }
    async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), core_::StorageError> {
        check_key(key)?;
        storage::replace(key, &data.to_vec().mirror(), expected_size).mirror()
    }
    async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), core_::StorageError> {
        check_key(key)?;
        storage::truncate(key, len, expected_size).mirror()
    }
    async fn remove(&self, key: &str) -> Result<(), core_::StorageError> {
        check_key(key)?;
        storage::remove(key).mirror()
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), core_::StorageError> {
        check_key(from)?;
        check_key(to)?;
        storage::rename(from, to).mirror()
    }
    async fn lock(&self, name: &str) -> Result<(), core_::StorageError> {
        check_key(name)?;
        storage::lock(name).mirror()
    }
    async fn unlock(&self, name: &str) -> Result<(), core_::StorageError> {
        storage::unlock(name).mirror()
    }
}

/// The host's answer to `wants-text`, asked once: 0 not yet, 1 no, 2 yes.
static WANTS_TEXT: AtomicU8 = AtomicU8::new(0);

fn wants_text() -> bool {
    match WANTS_TEXT.load(Ordering::Relaxed) {
        0 => {
            let wants = storage::wants_text();
            WANTS_TEXT.store(if wants { 2 } else { 1 }, Ordering::Relaxed);
            wants
        }
        answer => answer == 2,
    }
}

struct Component;

struct Store(core_::Store<ImportedStorage>);

/// Drives a core future over the synchronous imports and mirrors its outcome.
fn run<T: Mirror<W>, W>(future: impl core::future::Future<Output = Result<T, core_::Error>>) -> Result<W, types::Error> {
    core_::block_on(future).mirror()
}

fn store(handle: sessions::StoreBorrow<'_>) -> &core_::Store<ImportedStorage> {
    &handle.get::<Store>().0
}

impl sessions::Guest for Component {
    type Store = Store;

    fn check_bytes(data: types::Data) -> sessions::CheckReport {
        core_::check_bytes(data.as_bytes()).mirror()
    }
    fn project_of(cwd: String) -> String {
        core_::keys::project_dir_name(&cwd)
    }
    fn session_id_of(name: String) -> String {
        core_::keys::session_id_of(&name)
    }
    fn storage_contract() -> Vec<String> {
        core_::block_on(async {
            match core_::Storage::list(&ImportedStorage, "").await {
                Ok(keys) if keys.is_empty() => core_::storage::contract::run(&ImportedStorage, &ImportedStorage).await,
                Ok(_) => alloc::vec!["the store is not empty: run the contract on a fresh, empty store".into()],
                Err(error) => alloc::vec![alloc::format!("listing the store failed: {error}")],
            }
        })
    }
    fn default_limits() -> sessions::Limits {
        core_::Limits::default().mirror()
    }
    fn default_retention() -> sessions::Retention {
        core_::retention::Retention::default().mirror()
    }
    fn explain(error: types::Error) -> sessions::Explanation {
        let error: core_::Error = error.mirror();
        sessions::Explanation { kind: error.kind(), message: error.to_string(), details: error.details() }
    }
}

/// A store dropped by its host gives back the session locks it holds.
impl Drop for Store {
    fn drop(&mut self) {
        let _ = core_::block_on(self.0.release_all());
    }
}

impl sessions::GuestStore for Store {
    fn new(limits: Option<sessions::Limits>) -> Self {
        Store(core_::Store::with_limits(ImportedStorage, limits.map_or_else(core_::Limits::default, Mirror::mirror)))
    }
    fn append(&self, id: String, entry: sessions::NewEntry) -> Result<sessions::Entry, types::Error> {
        run(self.0.sessions().append(&id, entry.mirror()))
    }
    fn append_turn(&self, id: String, turn: sessions::Turn) -> Result<Vec<sessions::Entry>, types::Error> {
        run(self.0.sessions().append_turn(&id, turn.mirror()))
    }
    fn tombstone(&self, id: String, uuid: String, now_ms: i64) -> Result<(), types::Error> {
        run(self.0.sessions().tombstone(&id, &uuid, now_ms))
    }
    fn load(&self, id: String) -> Result<sessions::Transcript, types::Error> {
        run(self.0.sessions().load(&id))
    }
    fn context(&self, id: String) -> Result<sessions::Context, types::Error> {
        run(self.0.sessions().context(&id))
    }
    fn provider_context(
        &self,
        id: String,
        provider: sessions::Provider,
        model: Option<String>,
        injections: Vec<sessions::Injection>,
    ) -> Result<sessions::ProviderContext, types::Error> {
        let injections: Vec<core_::Injection> = injections.mirror();
        run(self.0.sessions().provider_context(&id, provider.mirror(), model.as_deref(), &injections))
    }
    fn branches(&self, id: String) -> Result<Vec<sessions::Branch>, types::Error> {
        run(self.0.sessions().branches(&id))
    }
    fn usage(&self, id: String, prices: Option<sessions::Prices>) -> Result<sessions::Ledger, types::Error> {
        let prices: Option<core_::Prices> = prices.mirror();
        run(self.0.sessions().usage(&id, prices.as_ref()))
    }
    fn fork(&self, id: String, from: Option<String>, new_id: String, now_ms: i64) -> Result<Vec<sessions::Entry>, types::Error> {
        run(self.0.sessions().fork(&id, from.as_deref(), &new_id, now_ms))
    }
    fn gc(&self, policy: sessions::Retention, now_ms: i64) -> Result<sessions::GcReport, types::Error> {
        run(self.0.sessions().gc(&policy.mirror(), now_ms))
    }
    fn archive(&self, id: String, now_ms: i64) -> Result<sessions::ArchivedSession, types::Error> {
        run(self.0.sessions().archive(&id, now_ms))
    }
    fn archived(&self) -> Result<Vec<sessions::ArchivedSession>, types::Error> {
        run(self.0.sessions().archived())
    }
    fn restore(&self, id: String) -> Result<sessions::ArchivedSession, types::Error> {
        run(self.0.sessions().restore(&id))
    }
    fn import_session(&self, request: sessions::ImportRequest) -> Result<sessions::Imported, types::Error> {
        run(self.0.sessions().import_session(&request.mirror()))
    }
    fn export_session(&self, id: String, format: sessions::ExportFormat, uuid: String) -> Result<sessions::Exported, types::Error> {
        run(self.0.sessions().export_session(&id, format.mirror(), &uuid))
    }
    fn check(&self, id: String) -> Result<sessions::CheckReport, types::Error> {
        run(self.0.sessions().check(&id))
    }
    fn subagents(&self, id: String) -> Result<Vec<sessions::Subagent>, types::Error> {
        run(self.0.sessions().subagents(&id))
    }
    fn remove(&self, id: String) -> Result<Vec<String>, types::Error> {
        run(self.0.sessions().remove(&id))
    }
    fn repair(&self, id: String, now_ms: i64) -> Result<sessions::RepairReport, types::Error> {
        run(self.0.sessions().repair(&id, now_ms))
    }
    fn list(&self) -> Result<sessions::Listing, types::Error> {
        run(self.0.sessions().list())
    }
    fn search(
        &self,
        query: String,
        limit: u32,
        project: Option<String>,
        window: types::Window,
    ) -> Result<Vec<sessions::SearchHit>, types::Error> {
        run(self.0.sessions().search(&query, limit.mirror(), project.as_deref(), window.mirror()))
    }
    fn reopen(&self, id: String) {
        self.0.sessions().reopen(&id)
    }
    fn append_lines(&self, key: sessions::TranscriptKey, lines: Vec<String>, now_ms: i64) -> Result<u32, types::Error> {
        run(self.0.sessions().append_lines(&key.mirror(), &lines, now_ms))
    }
    fn read_lines(&self, key: sessions::TranscriptKey) -> Result<Option<Vec<String>>, types::Error> {
        run(self.0.sessions().read_lines(&key.mirror()))
    }
    fn written_sessions(&self, project: String) -> Result<Vec<sessions::WrittenSession>, types::Error> {
        run(self.0.sessions().written_sessions(&project))
    }
    fn subpaths(&self, project: String, id: String) -> Result<Vec<String>, types::Error> {
        run(self.0.sessions().subpaths(&project, &id))
    }
    fn remove_transcript(&self, key: sessions::TranscriptKey) -> Result<(), types::Error> {
        run(self.0.sessions().remove_transcript(&key.mirror()))
    }
    fn append_items(&self, id: String, items: String, cwd: String, uuid: String, now_ms: i64) -> Result<u32, types::Error> {
        run(self.0.sessions().append_items(&id, &items, &cwd, &uuid, now_ms))
    }
    fn items(&self, id: String, limit: Option<u32>) -> Result<String, types::Error> {
        run(self.0.sessions().items(&id, limit))
    }
    fn pop_item(&self, id: String, now_ms: i64) -> Result<Option<String>, types::Error> {
        run(self.0.sessions().pop_item(&id, now_ms))
    }
    fn set_redaction(&self, kinds: Vec<String>) -> Result<(), types::Error> {
        self.0.sessions().set_redaction(&kinds).mirror()
    }
    fn hold(&self, id: String) -> Result<(), types::Error> {
        run(self.0.sessions().hold(&id))
    }
    fn release(&self, id: String) -> Result<(), types::Error> {
        run(self.0.sessions().release(&id))
    }
}

/// The core's compaction driver; the WIT resource's methods take `&self`.
struct Run(RefCell<core_::Run>);

impl compaction::GuestRun for Run {
    fn new(plan: compaction::Plan) -> Self {
        Run(RefCell::new(core_::Run::new(plan.mirror())))
    }
    fn next(&self) -> compaction::Step {
        self.0.borrow().next().mirror()
    }
    fn answer(&self, answer: Result<String, String>) {
        self.0.borrow_mut().handle(answer)
    }
    fn answer_all(&self, answer: Result<String, String>) {
        self.0.borrow_mut().handle_whole(answer)
    }
    fn finish(&self) {
        self.0.borrow_mut().finish()
    }
    fn failure(&self) -> Option<String> {
        self.0.borrow().failure().map(ToString::to_string)
    }
}

impl compaction::Guest for Component {
    type Run = Run;

    fn context_window(model: String) -> Option<u64> {
        core_::tokens::context_window(&model)
    }
    fn default_settings() -> compaction::Settings {
        core_::Settings::default().mirror()
    }
    fn plan_compaction(
        handle: sessions::StoreBorrow<'_>,
        id: String,
        settings: compaction::Settings,
        mode: compaction::Mode,
    ) -> Result<compaction::Plan, types::Error> {
        run(store(handle).compaction().plan_compaction(&id, &settings.mirror(), mode.mirror()))
    }
    fn summarize_offline(handle: sessions::StoreBorrow<'_>, id: String, plan: compaction::Plan) -> Result<String, types::Error> {
        run(store(handle).compaction().summarize_offline(&id, &plan.mirror()))
    }
    fn apply_compaction(
        handle: sessions::StoreBorrow<'_>,
        id: String,
        plan: compaction::Plan,
        summary: String,
        ids: compaction::CompactionIds,
        now_ms: i64,
    ) -> Result<compaction::Applied, types::Error> {
        run(store(handle).compaction().apply_compaction(&id, &plan.mirror(), &summary, &ids.mirror(), now_ms))
    }
    fn record_compaction_failure(handle: sessions::StoreBorrow<'_>, id: String, reason: String, now_ms: i64) -> Result<(), types::Error> {
        run(store(handle).compaction().record_compaction_failure(&id, &reason, now_ms))
    }
}

impl gates::Guest for Component {
    fn silent_reply(text: String) -> gates::Reply {
        core_::gates::silent_reply(&text).mirror()
    }
    fn default_flush_settings() -> gates::FlushSettings {
        core_::gates::FlushSettings::default().mirror()
    }
    fn default_extraction_settings() -> gates::ExtractionSettings {
        core_::gates::ExtractionSettings::default().mirror()
    }
    fn default_dream_settings() -> gates::DreamSettings {
        core_::gates::DreamSettings::default().mirror()
    }
    fn memory_flush_gate(
        handle: sessions::StoreBorrow<'_>,
        id: String,
        settings: gates::FlushSettings,
    ) -> Result<gates::Decision, types::Error> {
        run(store(handle).gates().memory_flush_gate(&id, &settings.mirror()))
    }
    fn record_memory_flush(handle: sessions::StoreBorrow<'_>, id: String, now_ms: i64) -> Result<(), types::Error> {
        run(store(handle).gates().record_memory_flush(&id, now_ms))
    }
    fn extraction_gate(
        handle: sessions::StoreBorrow<'_>,
        id: String,
        settings: gates::ExtractionSettings,
    ) -> Result<gates::Decision, types::Error> {
        run(store(handle).gates().extraction_gate(&id, &settings.mirror()))
    }
    fn record_extraction(handle: sessions::StoreBorrow<'_>, id: String, now_ms: i64) -> Result<(), types::Error> {
        run(store(handle).gates().record_extraction(&id, now_ms))
    }
    fn reset_gate(
        handle: sessions::StoreBorrow<'_>,
        id: String,
        now_ms: i64,
        policy: gates::ResetPolicy,
    ) -> Result<gates::Decision, types::Error> {
        run(store(handle).gates().reset_gate(&id, now_ms, &policy.mirror()))
    }
    fn dream_gate(handle: sessions::StoreBorrow<'_>, now_ms: i64, settings: gates::DreamSettings) -> Result<gates::Decision, types::Error> {
        run(store(handle).gates().dream_gate(now_ms, &settings.mirror()))
    }
    fn dream_acquire(
        handle: sessions::StoreBorrow<'_>,
        now_ms: i64,
        holder: String,
        settings: gates::DreamSettings,
    ) -> Result<gates::Decision, types::Error> {
        run(store(handle).gates().dream_acquire(now_ms, &holder, &settings.mirror()))
    }
    fn dream_release(handle: sessions::StoreBorrow<'_>, now_ms: i64, holder: String, completed: bool) -> Result<(), types::Error> {
        run(store(handle).gates().dream_release(now_ms, &holder, completed))
    }
}

impl memory::Guest for Component {
    fn default_caps() -> memory::Caps {
        core_::memory::memory_md::Caps::default().mirror()
    }
    fn memory_add(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        memory: memory::NewMemory,
        now_ms: i64,
    ) -> Result<memory::Memory, types::Error> {
        run(store(handle).memory().memory_add(&scope.mirror(), memory.mirror(), now_ms))
    }
    fn memory_add_many(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        memories: Vec<memory::NewMemory>,
        now_ms: i64,
    ) -> Result<Vec<memory::Memory>, types::Error> {
        run(store(handle).memory().memory_add_many(&scope.mirror(), memories.mirror(), now_ms))
    }
    fn memory_update(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        file: String,
        change: memory::Change,
        now_ms: i64,
    ) -> Result<memory::Memory, types::Error> {
        run(store(handle).memory().memory_update(&scope.mirror(), &file, change.mirror(), now_ms))
    }
    fn memory_supersede(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        file: String,
        replacement: memory::NewMemory,
        now_ms: i64,
    ) -> Result<memory::Memory, types::Error> {
        run(store(handle).memory().memory_supersede(&scope.mirror(), &file, replacement.mirror(), now_ms))
    }
    fn memory_forget(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        file: String,
        now_ms: i64,
    ) -> Result<memory::Memory, types::Error> {
        run(store(handle).memory().memory_forget(&scope.mirror(), &file, now_ms))
    }
    fn memory_tool(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        input: String,
        now_ms: i64,
    ) -> Result<memory::MemoryToolResult, types::Error> {
        run(store(handle).memory().memory_tool(&scope.mirror(), &input, now_ms))
    }
    fn memory_link(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        from: String,
        kind: memory::LinkKind,
        to: String,
        now_ms: i64,
    ) -> Result<memory::Memory, types::Error> {
        run(store(handle).memory().memory_link(&scope.mirror(), &from, kind.mirror(), &to, now_ms))
    }
    fn memory_list(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        filter: memory::Filter,
    ) -> Result<Vec<memory::Memory>, types::Error> {
        run(store(handle).memory().memory_list(&scope.mirror(), &filter.mirror()))
    }
    fn memory_show(handle: sessions::StoreBorrow<'_>, scope: memory::Scope, file: String) -> Result<memory::Shown, types::Error> {
        run(store(handle).memory().memory_show(&scope.mirror(), &file))
    }
    fn memory_recall(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        query: String,
        limit: u32,
        all: bool,
        window: types::Window,
        near: Option<memory::Near>,
    ) -> Result<memory::Recalled, types::Error> {
        let near: Option<mneme_core::memory::store::Near> = near.mirror();
        run(store(handle).memory().memory_recall(&scope.mirror(), &query, limit.mirror(), all, window.mirror(), near.as_ref()))
    }
    fn plan_embedding(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        model: String,
        limit: u32,
    ) -> Result<memory::EmbeddingPlan, types::Error> {
        run(store(handle).memory().plan_embedding(&scope.mirror(), &model, limit.mirror()))
    }
    fn apply_embedding(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        plan: memory::EmbeddingPlan,
        vectors: Vec<Vec<f32>>,
    ) -> Result<u32, types::Error> {
        run(store(handle).memory().apply_embedding(&scope.mirror(), &plan.mirror(), &vectors))
    }
    fn memory_load(handle: sessions::StoreBorrow<'_>, scope: memory::Scope, caps: memory::Caps) -> Result<memory::Loaded, types::Error> {
        run(store(handle).memory().memory_load(&scope.mirror(), caps.mirror()))
    }
    fn memory_reindex(handle: sessions::StoreBorrow<'_>, scope: memory::Scope) -> Result<memory::MemoryIndexReport, types::Error> {
        run(store(handle).memory().memory_reindex(&scope.mirror()))
    }
    fn memory_used(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        files: Vec<String>,
        now_ms: i64,
    ) -> Result<Vec<memory::Memory>, types::Error> {
        run(store(handle).memory().memory_used(&scope.mirror(), &files, now_ms))
    }
    fn set_embeddings(
        handle: sessions::StoreBorrow<'_>,
        table: Option<types::Data>,
    ) -> Result<Option<memory::EmbeddingsInfo>, types::Error> {
        store(handle).memory().set_embeddings(table.as_ref().map(types::Data::as_bytes)).mirror()
    }
    fn plan_extraction(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        id: String,
    ) -> Result<memory::ExtractionPlan, types::Error> {
        run(store(handle).memory().plan_extraction(&scope.mirror(), &id))
    }
    fn apply_extraction(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        plan: memory::ExtractionPlan,
        answer: String,
        now_ms: i64,
    ) -> Result<memory::Extracted, types::Error> {
        run(store(handle).memory().apply_extraction(&scope.mirror(), &plan.mirror(), &answer, now_ms))
    }
    fn record_extraction_failure(handle: sessions::StoreBorrow<'_>, id: String, reason: String, now_ms: i64) -> Result<(), types::Error> {
        run(store(handle).memory().record_extraction_failure(&id, &reason, now_ms))
    }
    fn plan_consolidation(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        now_ms: i64,
    ) -> Result<memory::ConsolidationPlan, types::Error> {
        run(store(handle).memory().plan_consolidation(&scope.mirror(), now_ms))
    }
    fn apply_consolidation(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        plan: memory::ConsolidationPlan,
        answer: String,
        now_ms: i64,
        dry_run: bool,
    ) -> Result<memory::Consolidation, types::Error> {
        run(store(handle).memory().apply_consolidation(&scope.mirror(), &plan.mirror(), &answer, now_ms, dry_run))
    }
    fn rollback_consolidation(
        handle: sessions::StoreBorrow<'_>,
        scope: memory::Scope,
        id: String,
        now_ms: i64,
    ) -> Result<memory::Consolidation, types::Error> {
        run(store(handle).memory().rollback_consolidation(&scope.mirror(), &id, now_ms))
    }
    fn consolidations(handle: sessions::StoreBorrow<'_>, scope: memory::Scope) -> Result<Vec<memory::Consolidation>, types::Error> {
        run(store(handle).memory().consolidations(&scope.mirror()))
    }
    fn instructions(
        handle: sessions::StoreBorrow<'_>,
        request: memory::InstructionsRequest,
    ) -> Result<memory::LoadedInstructions, types::Error> {
        run(store(handle).memory().instructions(&request.mirror()))
    }
    fn write_file(handle: sessions::StoreBorrow<'_>, path: String, text: String) -> Result<(), types::Error> {
        run(store(handle).memory().write_file(&path, &text))
    }
    fn read_file(handle: sessions::StoreBorrow<'_>, path: String) -> Result<Option<String>, types::Error> {
        run(store(handle).memory().read_file(&path))
    }
    fn remove_file(handle: sessions::StoreBorrow<'_>, path: String) -> Result<(), types::Error> {
        run(store(handle).memory().remove_file(&path))
    }
}

impl index::Guest for Component {
    fn default_route_policy() -> index::RoutePolicy {
        core_::index::RoutePolicy::default().mirror()
    }
    fn key_of(inbound: index::Inbound, policy: index::RoutePolicy) -> Result<String, types::Error> {
        core_::index::route::key_of(&inbound.mirror(), &policy.mirror()).mirror()
    }
    fn parse_key(key: String) -> Result<index::KeyParts, types::Error> {
        core_::index::sessionkey::parse(&key).mirror()
    }
    fn resolve(
        handle: sessions::StoreBorrow<'_>,
        inbound: index::Inbound,
        policy: index::RoutePolicy,
        now_ms: i64,
        new_session_id: String,
    ) -> Result<index::Resolution, types::Error> {
        run(store(handle).index().resolve(&inbound.mirror(), &policy.mirror(), now_ms, &new_session_id))
    }
    fn reset_key(
        handle: sessions::StoreBorrow<'_>,
        key: String,
        new_session_id: String,
        now_ms: i64,
    ) -> Result<index::KeyEntry, types::Error> {
        run(store(handle).index().reset_key(&key, &new_session_id, now_ms))
    }
    fn update_key(handle: sessions::StoreBorrow<'_>, key: String, patch: index::KeyPatch) -> Result<index::KeyEntry, types::Error> {
        run(store(handle).index().update_key(&key, &patch.mirror()))
    }
    fn remove_key(handle: sessions::StoreBorrow<'_>, key: String) -> Result<index::KeyEntry, types::Error> {
        run(store(handle).index().remove_key(&key))
    }
    fn key(handle: sessions::StoreBorrow<'_>, key: String) -> Result<index::KeyView, types::Error> {
        run(store(handle).index().key(&key))
    }
    fn keys(handle: sessions::StoreBorrow<'_>, filter: Vec<index::Field>) -> Result<Vec<index::KeyEntry>, types::Error> {
        let filter: Vec<core_::index::Field> = filter.mirror();
        run(store(handle).index().keys(&filter))
    }
    fn index_report(handle: sessions::StoreBorrow<'_>) -> Result<index::IndexHealth, types::Error> {
        run(store(handle).index().index_report())
    }
    fn import_openclaw_keys(handle: sessions::StoreBorrow<'_>, data: types::Data) -> Result<index::KeysImported, types::Error> {
        run(store(handle).index().import_openclaw_keys(data.as_bytes()))
    }
    fn export_openclaw_keys(handle: sessions::StoreBorrow<'_>) -> Result<types::Data, types::Error> {
        run(store(handle).index().export_openclaw_keys())
    }
    fn crab_latest(
        handle: sessions::StoreBorrow<'_>,
        project: Option<String>,
        agent: String,
        sender: String,
    ) -> Result<Option<index::CrabSession>, types::Error> {
        run(store(handle).index().crab_latest(project.as_deref(), &agent, &sender))
    }
    fn crab_start(
        handle: sessions::StoreBorrow<'_>,
        project: Option<String>,
        agent: String,
        sender: String,
        created_by: String,
        now_ms: i64,
    ) -> Result<index::CrabSession, types::Error> {
        run(store(handle).index().crab_start(project.as_deref(), &agent, &sender, &created_by, now_ms))
    }
    fn crab_show(handle: sessions::StoreBorrow<'_>, id: String) -> Result<index::CrabSession, types::Error> {
        run(store(handle).index().crab_show(&id))
    }
    fn crab_set_title(handle: sessions::StoreBorrow<'_>, id: String, title: String) -> Result<index::CrabSession, types::Error> {
        run(store(handle).index().crab_set_title(&id, &title))
    }
    fn crab_add_uptime(handle: sessions::StoreBorrow<'_>, id: String, secs: u64) -> Result<index::CrabSession, types::Error> {
        run(store(handle).index().crab_add_uptime(&id, secs))
    }
    fn rebuild_index(handle: sessions::StoreBorrow<'_>) -> Result<index::RebuildReport, types::Error> {
        run(store(handle).index().rebuild_index())
    }
    fn rollover_gate(handle: sessions::StoreBorrow<'_>, key: String, max_context_tokens: u64) -> Result<gates::Decision, types::Error> {
        run(store(handle).index().rollover_gate(&key, max_context_tokens))
    }
    fn rollover(
        handle: sessions::StoreBorrow<'_>,
        key: String,
        summary: String,
        ids: compaction::CompactionIds,
        new_session_id: String,
        now_ms: i64,
    ) -> Result<index::RolledOver, types::Error> {
        run(store(handle).index().rollover(&key, &summary, &ids.mirror(), &new_session_id, now_ms))
    }
}

export!(Component);
