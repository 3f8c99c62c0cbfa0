//! The embedded component under wasmtime. Everything here converts between WIT and
//! core types or does I/O; behaviour lives in the component.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

use mneme_core::gates::{Decision, DreamSettings, ExtractionSettings, FlushSettings, Reply, ResetPolicy};
use mneme_core::{
    Applied, CheckReport, CompactionIds, Context, ContextMessage, Entry, Finding, Keep, Limits, LoadReport, Mode, NewEntry, Plan, Pruned,
    RepairReport, SessionInfo, Settings, SkippedLine, StorageError, Subagent, Transcript, Trigger, TypeCount, block_on,
};
use wasmtime::component::{Component, HasSelf, Linker, ResourceAny};
use wasmtime::{Config, Engine as WasmEngine, Store};

use crate::{Error, FsStorage, Sessions};

wasmtime::component::bindgen!({ path: "../wit", world: "engine" });

use exports::mneme::engine::sessions as wit;
use mneme::engine::types as wit_types;

mneme_core::mirror_enum!(mneme_core::Action, wit::Action { None, Prune, Summarize });
mneme_core::mirror_enum!(mneme_core::compaction::Due, wit::Due { Threshold, Overflow, Manual });
mneme_core::mirror_enum!(mneme_core::Format, wit::Format { Claude, Pi, Crab });
mneme_core::mirror_enum!(mneme_core::gates::Reply, wit::Reply { Deliver, Hold, Suppress });
mneme_core::mirror_enum!(mneme_core::Mode, wit::CompactionMode { Auto, Manual, Overflow });
mneme_core::mirror_enum!(mneme_core::Role, wit::Role { User, Assistant });

/// The Mneme component, built by this crate's build script.
pub const COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mneme.component.wasm"));

/// Host state: the storage the component's imports are served from.
struct HostState {
    storage: FsStorage,
}

impl wit_types::Host for HostState {}

impl mneme::engine::storage::Host for HostState {
    fn list(&mut self, prefix: String) -> Result<Vec<wit_types::KeyInfo>, wit_types::StorageError> {
        let listing = block_on(mneme_core::Storage::list(&self.storage, &prefix)).map_err(storage_error_to_wit)?;
        Ok(listing.into_iter().map(|i| wit_types::KeyInfo { key: i.key, size: i.size }).collect())
    }
    fn read(&mut self, key: String, offset: u64, len: Option<u64>) -> Result<Vec<u8>, wit_types::StorageError> {
        block_on(mneme_core::Storage::read(&self.storage, &key, offset, len)).map_err(storage_error_to_wit)
    }
    fn append(&mut self, key: String, data: Vec<u8>) -> Result<u64, wit_types::StorageError> {
        block_on(mneme_core::Storage::append(&self.storage, &key, &data)).map_err(storage_error_to_wit)
    }
    fn replace(&mut self, key: String, data: Vec<u8>) -> Result<(), wit_types::StorageError> {
        block_on(mneme_core::Storage::replace(&self.storage, &key, &data)).map_err(storage_error_to_wit)
    }
    fn truncate(&mut self, key: String, len: u64) -> Result<(), wit_types::StorageError> {
        block_on(mneme_core::Storage::truncate(&self.storage, &key, len)).map_err(storage_error_to_wit)
    }
    fn remove(&mut self, key: String) -> Result<(), wit_types::StorageError> {
        block_on(mneme_core::Storage::remove(&self.storage, &key)).map_err(storage_error_to_wit)
    }
    fn rename(&mut self, from: String, to: String) -> Result<(), wit_types::StorageError> {
        block_on(mneme_core::Storage::rename(&self.storage, &from, &to)).map_err(storage_error_to_wit)
    }
    fn lock(&mut self, name: String) -> Result<(), wit_types::StorageError> {
        block_on(mneme_core::Storage::lock(&self.storage, &name)).map_err(storage_error_to_wit)
    }
    fn unlock(&mut self, name: String) -> Result<(), wit_types::StorageError> {
        block_on(mneme_core::Storage::unlock(&self.storage, &name)).map_err(storage_error_to_wit)
    }
}

/// A wasmtime engine with the component compiled and linked, ready to instantiate.
/// Compiling costs ~100 ms, so the compiled form is cached on disk (see [`Runtime::new`]).
pub struct Runtime {
    engine: WasmEngine,
    pre: EnginePre<HostState>,
}

impl Runtime {
    /// Loads the embedded component, from the compiled cache when it is valid.
    ///
    /// The cache lives in `$MNEME_CACHE_DIR` or the user's cache folder
    /// (`~/.cache/mneme` on Linux), keyed by the component's bytes and wasmtime's
    /// compatibility hash, so a new Mneme or wasmtime never loads a stale artifact.
    /// Any cache problem falls back to compiling.
    pub fn new() -> Result<Self, Error> {
        let engine = WasmEngine::new(&Config::new()).map_err(component_error)?;
        let component = load_cached(&engine)?;
        let mut linker = Linker::<HostState>::new(&engine);
        Engine::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |state| state).map_err(component_error)?;
        let pre = EnginePre::new(linker.instantiate_pre(&component).map_err(component_error)?).map_err(component_error)?;
        Ok(Self { engine, pre })
    }

    /// A fresh instance of the component whose storage is `storage`.
    pub fn instantiate(&self, storage: FsStorage, limits: Limits) -> Result<ComponentEngine, Error> {
        let mut store = Store::new(&self.engine, HostState { storage });
        // wasmtime caps what one call may hand the host at 128 MiB, a guard against a
        // hostile guest. This guest is Mneme's own, and a session's context or load is
        // as large as the session: any session the core accepts must come back.
        store.set_hostcall_fuel(usize::MAX);
        let bindings = self.pre.instantiate(&mut store).map_err(component_error)?;
        let limits = wit::Limits { part_bytes: limits.part_bytes, total_bytes: limits.total_bytes };
        let handle = bindings.mneme_engine_sessions().store().call_constructor(&mut store, Some(limits)).map_err(component_error)?;
        Ok(ComponentEngine { store, bindings, handle })
    }

    /// The names of everything the component imports.
    pub fn imports(&self) -> Vec<String> {
        let component = self.pre.instance_pre().component();
        component.component_type().imports(&self.engine).map(|(name, _)| name.to_owned()).collect()
    }
}

fn cache_path(engine: &WasmEngine) -> Option<PathBuf> {
    let dir = std::env::var_os("MNEME_CACHE_DIR").map(PathBuf::from).or_else(|| dirs::cache_dir().map(|d| d.join("mneme")))?;
    let mut hasher = DefaultHasher::new();
    COMPONENT.hash(&mut hasher);
    engine.precompile_compatibility_hash().hash(&mut hasher);
    Some(dir.join(format!("component-{:016x}.cwasm", hasher.finish())))
}

fn load_cached(engine: &WasmEngine) -> Result<Component, Error> {
    let path = cache_path(engine);
    if let Some(path) = &path
        && path.is_file()
    {
        // SAFETY: the file is one this function wrote with `precompile_component` into
        // the user's own cache folder, under a name bound to these exact component
        // bytes and this wasmtime's compatibility hash; wasmtime also checks its header.
        if let Ok(component) = unsafe { Component::deserialize_file(engine, path) } {
            return Ok(component);
        }
    }
    let compiled = engine.precompile_component(COMPONENT).map_err(component_error)?;
    if let Some(path) = &path {
        // A cache that cannot be written only costs the next start a compile.
        let _ = write_atomically(path, &compiled);
    }
    // SAFETY: `compiled` was produced just above by this engine.
    unsafe { Component::deserialize(engine, &compiled) }.map_err(component_error)
}

fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("cache path has no folder"))?;
    std::fs::create_dir_all(dir)?;
    let temp = dir.join(format!(".{}.tmp", std::process::id()));
    std::fs::write(&temp, bytes)?;
    std::fs::rename(&temp, path)
}

/// One instance of the component and its `store` resource.
pub struct ComponentEngine {
    store: Store<HostState>,
    bindings: Engine,
    handle: ResourceAny,
}

impl ComponentEngine {
    /// Calls a `store` method: `call` gets the resource's functions, the wasmtime
    /// store and the resource handle. Traps become [`Error::Component`].
    fn call<T>(
        &mut self,
        call: impl FnOnce(wit::GuestStore<'_>, &mut Store<HostState>, ResourceAny) -> wasmtime::Result<Result<T, wit::Error>>,
    ) -> Result<T, Error> {
        call(self.bindings.mneme_engine_sessions().store(), &mut self.store, self.handle).map_err(component_error)?.map_err(error_from_wit)
    }
}

impl Sessions for ComponentEngine {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
        let entry = wit::NewEntry { uuid: entry.uuid, now_ms: entry.now_ms, role: entry.role.into(), text: entry.text, cwd: entry.cwd };
        self.call(|api, store, handle| api.call_append(store, handle, id, &entry)).map(entry_from_wit)
    }

    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error> {
        self.call(|api, store, handle| api.call_tombstone(store, handle, id, uuid, now_ms))
    }

    fn load(&mut self, id: &str) -> Result<Transcript, Error> {
        self.call(|api, store, handle| api.call_load(store, handle, id)).map(transcript_from_wit)
    }

    fn context(&mut self, id: &str) -> Result<Context, Error> {
        let context = self.call(|api, store, handle| api.call_context(store, handle, id))?;
        Ok(Context {
            compacted: context.compacted,
            messages: context
                .messages
                .into_iter()
                .map(|m| ContextMessage {
                    uuid: m.uuid,
                    role: m.role,
                    text: m.text,
                    content: m.content,
                    is_compact_summary: m.is_compact_summary,
                })
                .collect(),
        })
    }

    fn check(&mut self, id: &str) -> Result<CheckReport, Error> {
        self.call(|api, store, handle| api.call_check(store, handle, id)).map(check_from_wit)
    }

    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, Error> {
        let report = self.bindings.mneme_engine_sessions().call_check_bytes(&mut self.store, data).map_err(component_error)?;
        Ok(check_from_wit(report))
    }

    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, Error> {
        let subagents = self.call(|api, store, handle| api.call_subagents(store, handle, id))?;
        Ok(subagents.into_iter().map(|s| Subagent { key: s.key, transcript: transcript_from_wit(s.transcript) }).collect())
    }

    fn remove(&mut self, id: &str) -> Result<Vec<String>, Error> {
        self.call(|api, store, handle| api.call_remove(store, handle, id))
    }

    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, Error> {
        let r = self.call(|api, store, handle| api.call_repair(store, handle, id, now_ms))?;
        Ok(RepairReport {
            backups: r.backups,
            dropped: r.dropped.into_iter().map(skipped_from_wit).collect(),
            split_glued: r.split_glued,
            fixed_utf8: r.fixed_utf8,
            dropped_torn_tail: r.dropped_torn_tail,
        })
    }

    fn list(&mut self) -> Result<Vec<SessionInfo>, Error> {
        let sessions = self.call(|api, store, handle| api.call_list(store, handle))?;
        Ok(sessions
            .into_iter()
            .map(|s| SessionInfo {
                id: s.id,
                project: s.project,
                key: s.key,
                parts: s.parts,
                bytes: s.bytes,
                entries: s.entries,
                messages: s.messages,
                title: s.title,
                created: s.created,
                updated: s.updated,
            })
            .collect())
    }

    fn reopen(&mut self, id: &str) -> Result<(), Error> {
        self.call(|api, store, handle| api.call_reopen(store, handle, id).map(Ok))
    }

    fn plan_compaction(&mut self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, Error> {
        let mode = mode.into();
        let settings = settings_to_wit(settings);
        self.call(|api, store, handle| api.call_plan_compaction(store, handle, id, settings, mode)).map(plan_from_wit)
    }

    fn summarize_offline(&mut self, id: &str, plan: &Plan) -> Result<String, Error> {
        let plan = plan_to_wit(plan);
        self.call(|api, store, handle| api.call_summarize_offline(store, handle, id, &plan))
    }

    fn apply_compaction(&mut self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, Error> {
        let plan = plan_to_wit(plan);
        let ids = wit::CompactionIds { boundary: ids.boundary.clone(), summary: ids.summary.clone() };
        let a = self.call(|api, store, handle| api.call_apply_compaction(store, handle, id, &plan, summary, &ids, now_ms))?;
        Ok(Applied {
            format: a.format.into(),
            action: a.action.into(),
            boundary_uuid: a.boundary_uuid,
            summary_uuid: a.summary_uuid,
            tokens_before: a.tokens_before,
            tokens_after: a.tokens_after,
        })
    }

    fn record_compaction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        self.call(|api, store, handle| api.call_record_compaction_failure(store, handle, id, reason, now_ms))
    }

    fn memory_flush_gate(&mut self, id: &str, s: &FlushSettings) -> Result<Decision, Error> {
        let settings =
            wit::FlushSettings { context_window: s.context_window, reserve_floor: s.reserve_floor, soft_threshold: s.soft_threshold };
        self.call(|api, store, handle| api.call_memory_flush_gate(store, handle, id, settings)).map(decision_from_wit)
    }

    fn record_memory_flush(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        self.call(|api, store, handle| api.call_record_memory_flush(store, handle, id, now_ms))
    }

    fn extraction_gate(&mut self, id: &str, s: &ExtractionSettings) -> Result<Decision, Error> {
        let settings = wit::ExtractionSettings { min_messages: s.min_messages, min_tool_calls: s.min_tool_calls };
        self.call(|api, store, handle| api.call_extraction_gate(store, handle, id, settings)).map(decision_from_wit)
    }

    fn record_extraction(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        self.call(|api, store, handle| api.call_record_extraction(store, handle, id, now_ms))
    }

    fn reset_gate(&mut self, id: &str, now_ms: i64, p: &ResetPolicy) -> Result<Decision, Error> {
        let policy = wit::ResetPolicy {
            idle_minutes: p.idle_minutes,
            daily_reset_hour: p.daily_reset_hour,
            utc_offset_minutes: p.utc_offset_minutes,
            ttl_ms: p.ttl_ms,
        };
        self.call(|api, store, handle| api.call_reset_gate(store, handle, id, now_ms, policy)).map(decision_from_wit)
    }

    fn dream_gate(&mut self, now_ms: i64, s: &DreamSettings) -> Result<Decision, Error> {
        let settings = dream_to_wit(s);
        self.call(|api, store, handle| api.call_dream_gate(store, handle, now_ms, settings)).map(decision_from_wit)
    }

    fn dream_acquire(&mut self, now_ms: i64, holder: &str, s: &DreamSettings) -> Result<Decision, Error> {
        let settings = dream_to_wit(s);
        self.call(|api, store, handle| api.call_dream_acquire(store, handle, now_ms, holder, settings)).map(decision_from_wit)
    }

    fn dream_release(&mut self, now_ms: i64, holder: &str, completed: bool) -> Result<(), Error> {
        self.call(|api, store, handle| api.call_dream_release(store, handle, now_ms, holder, completed))
    }

    fn context_window(&mut self, model: &str) -> Result<Option<u64>, Error> {
        self.bindings.mneme_engine_sessions().call_context_window(&mut self.store, model).map_err(component_error)
    }

    fn silent_reply(&mut self, text: &str) -> Result<Reply, Error> {
        self.bindings.mneme_engine_sessions().call_silent_reply(&mut self.store, text).map(Reply::from).map_err(component_error)
    }
}

fn settings_to_wit(s: &Settings) -> wit::CompactionSettings {
    wit::CompactionSettings {
        context_window: s.context_window,
        trigger: match s.trigger {
            Trigger::Fraction(f) => wit::Trigger::Fraction(f),
            Trigger::Reserve { reserve_tokens, floor } => wit::Trigger::Reserve(wit::ReserveTrigger { reserve_tokens, floor }),
        },
        keep: match s.keep {
            Keep::RecentTokens(n) => wit::Keep::RecentTokens(n),
            Keep::RecentMessages(n) => wit::Keep::RecentMessages(n),
        },
        tool_result_budget_chars: s.tool_result_budget_chars,
        max_failures: s.max_failures,
        summarizer_window: s.summarizer_window,
    }
}

fn dream_to_wit(s: &DreamSettings) -> wit::DreamSettings {
    wit::DreamSettings { min_interval_ms: s.min_interval_ms, min_new_sessions: s.min_new_sessions, stale_lock_ms: s.stale_lock_ms }
}

fn decision_from_wit(d: wit::Decision) -> Decision {
    Decision { fire: d.fire, reason: d.reason }
}

fn plan_to_wit(p: &Plan) -> wit::Plan {
    wit::Plan {
        trigger: p.trigger.map(Into::into),
        reason: p.reason.clone(),
        blocked: p.blocked.clone(),
        action: p.action.into(),
        context_window: p.context_window,
        limit: p.limit,
        tokens_before: p.tokens_before,
        summarize: p.summarize.clone(),
        turn_prefix: p.turn_prefix.clone(),
        keep: p.keep.clone(),
        keep_tokens: p.keep_tokens,
        prune: p.prune.iter().map(|x| wit::Pruned { uuid: x.uuid.clone(), tool_use_id: x.tool_use_id.clone(), chars: x.chars }).collect(),
        previous_summary: p.previous_summary.clone(),
        prompt: p.prompt.clone(),
        steps: p.steps.clone(),
        turn_prefix_prompt: p.turn_prefix_prompt.clone(),
        summary_budget_tokens: p.summary_budget_tokens,
        leaf: p.leaf.clone(),
        session_bytes: p.session_bytes,
    }
}

fn plan_from_wit(p: wit::Plan) -> Plan {
    Plan {
        trigger: p.trigger.map(Into::into),
        reason: p.reason,
        blocked: p.blocked,
        action: p.action.into(),
        context_window: p.context_window,
        limit: p.limit,
        tokens_before: p.tokens_before,
        summarize: p.summarize,
        turn_prefix: p.turn_prefix,
        keep: p.keep,
        keep_tokens: p.keep_tokens,
        prune: p.prune.into_iter().map(|x| Pruned { uuid: x.uuid, tool_use_id: x.tool_use_id, chars: x.chars }).collect(),
        previous_summary: p.previous_summary,
        prompt: p.prompt,
        steps: p.steps,
        turn_prefix_prompt: p.turn_prefix_prompt,
        summary_budget_tokens: p.summary_budget_tokens,
        leaf: p.leaf,
        session_bytes: p.session_bytes,
    }
}

fn component_error(error: wasmtime::Error) -> Error {
    Error::Component(format!("{error:#}"))
}

fn entry_from_wit(e: wit::Entry) -> Entry {
    Entry {
        part: e.part,
        line: e.line,
        kind: e.kind,
        uuid: e.uuid,
        parent_uuid: e.parent_uuid,
        session_id: e.session_id,
        timestamp: e.timestamp,
        role: e.role,
        text: e.text,
        is_sidechain: e.is_sidechain,
        raw: e.raw,
    }
}

fn skipped_from_wit(s: wit::SkippedLine) -> SkippedLine {
    SkippedLine { part: s.part, line: s.line, reason: s.reason }
}

fn report_from_wit(r: wit::LoadReport) -> LoadReport {
    LoadReport {
        entries: r.entries,
        by_type: r.by_type.into_iter().map(|t| TypeCount { kind: t.kind, count: t.count }).collect(),
        skipped: r.skipped.into_iter().map(skipped_from_wit).collect(),
        torn_tail: r.torn_tail,
        recovered_glued: r.recovered_glued,
        invalid_utf8: r.invalid_utf8,
        lone_surrogates: r.lone_surrogates,
        tombstoned: r.tombstoned,
    }
}

fn transcript_from_wit(t: wit::Transcript) -> Transcript {
    Transcript {
        id: t.id,
        project: t.project,
        parts: t.parts,
        entries: t.entries.into_iter().map(entry_from_wit).collect(),
        chain: t.chain,
        report: report_from_wit(t.report),
    }
}

fn findings_from_wit(findings: Vec<wit::Finding>) -> Vec<Finding> {
    findings.into_iter().map(|f| Finding { part: f.part, line: f.line, id: f.id }).collect()
}

fn check_from_wit(c: wit::CheckReport) -> CheckReport {
    CheckReport {
        load: report_from_wit(c.load),
        dangling_parents: findings_from_wit(c.dangling_parents),
        orphaned_tool_uses: findings_from_wit(c.orphaned_tool_uses),
        orphaned_tool_results: findings_from_wit(c.orphaned_tool_results),
    }
}

fn error_from_wit(e: wit::Error) -> Error {
    use mneme_core::Error as E;
    Error::Session(match e {
        wit::Error::Storage(e) => E::Storage(storage_error_from_wit(e)),
        wit::Error::SessionNotFound(id) => E::SessionNotFound { id },
        wit::Error::InvalidSessionId(n) => E::InvalidSessionId { id: n.name, reason: n.reason },
        wit::Error::InvalidProject(n) => E::InvalidProject { name: n.name, reason: n.reason },
        wit::Error::AmbiguousSession(a) => E::AmbiguousSession { id: a.id, projects: a.projects },
        wit::Error::EntryNotFound(r) => E::EntryNotFound { id: r.id, uuid: r.uuid },
        wit::Error::SessionFull(f) => E::SessionFull { id: f.id, bytes: f.bytes, limit: f.limit },
        wit::Error::SessionPoisoned(id) => E::SessionPoisoned { id },
        wit::Error::EmptySummary(id) => E::EmptySummary { id },
        wit::Error::NothingToCompact(r) => E::NothingToCompact { id: r.id, reason: r.reason },
        wit::Error::StalePlan(r) => E::StalePlan { id: r.id, uuid: r.uuid },
        wit::Error::Unsupported(u) => E::Unsupported { format: u.format, operation: u.operation },
        wit::Error::InvalidArgument(message) => E::InvalidArgument(message),
    })
}

fn storage_error_from_wit(e: wit_types::StorageError) -> StorageError {
    use wit_types::StorageError as W;
    match e {
        W::NotFound(key) => StorageError::NotFound { key },
        W::AlreadyExists(key) => StorageError::AlreadyExists { key },
        W::InvalidKey(k) => StorageError::InvalidKey { key: k.key, reason: k.reason },
        W::ReadOnly(key) => StorageError::ReadOnly { key },
        W::Locked(key) => StorageError::Locked { key },
        W::QuotaExceeded(key) => StorageError::QuotaExceeded { key },
        W::Io(f) => StorageError::Io { key: f.key, message: f.message },
    }
}

fn storage_error_to_wit(e: StorageError) -> wit_types::StorageError {
    use wit_types::StorageError as W;
    match e {
        StorageError::NotFound { key } => W::NotFound(key),
        StorageError::AlreadyExists { key } => W::AlreadyExists(key),
        StorageError::InvalidKey { key, reason } => W::InvalidKey(wit_types::InvalidKey { key, reason }),
        StorageError::ReadOnly { key } => W::ReadOnly(key),
        StorageError::Locked { key } => W::Locked(key),
        StorageError::QuotaExceeded { key } => W::QuotaExceeded(key),
        StorageError::Io { key, message } => W::Io(wit_types::IoFailure { key, message }),
        other => W::Io(wit_types::IoFailure { key: String::new(), message: other.to_string() }),
    }
}
