//! The Mneme core as a WebAssembly component. Each export converts its arguments,
//! calls `mneme-core`, and converts the result back; storage calls go out through
//! the imported `storage` interface. No logic lives here.
#![no_std]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;

use mneme_core as core_;

wit_bindgen::generate!({ path: "../wit", world: "engine" });

use exports::mneme::engine::sessions as wit;
use mneme::engine::{storage, types};

#[cfg(all(target_arch = "wasm32", not(test)))]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

#[cfg(all(target_arch = "wasm32", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

/// The host's storage, reached through the component's imports.
struct ImportedStorage;

impl core_::Storage for ImportedStorage {
    async fn list(&self, prefix: &str) -> Result<Vec<core_::KeyInfo>, core_::StorageError> {
        let listing = storage::list(prefix).map_err(storage_error_from_wit)?;
        Ok(listing.into_iter().map(|i| core_::KeyInfo { key: i.key, size: i.size }).collect())
    }
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, core_::StorageError> {
        storage::read(key, offset, len).map_err(storage_error_from_wit)
    }
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, core_::StorageError> {
        storage::append(key, data).map_err(storage_error_from_wit)
    }
    async fn replace(&self, key: &str, data: &[u8]) -> Result<(), core_::StorageError> {
        storage::replace(key, data).map_err(storage_error_from_wit)
    }
    async fn truncate(&self, key: &str, len: u64) -> Result<(), core_::StorageError> {
        storage::truncate(key, len).map_err(storage_error_from_wit)
    }
    async fn remove(&self, key: &str) -> Result<(), core_::StorageError> {
        storage::remove(key).map_err(storage_error_from_wit)
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), core_::StorageError> {
        storage::rename(from, to).map_err(storage_error_from_wit)
    }
    async fn lock(&self, name: &str) -> Result<(), core_::StorageError> {
        storage::lock(name).map_err(storage_error_from_wit)
    }
    async fn unlock(&self, name: &str) -> Result<(), core_::StorageError> {
        storage::unlock(name).map_err(storage_error_from_wit)
    }
}

core_::mirror_enum!(core_::Action, wit::Action { None, Prune, Summarize });
core_::mirror_enum!(core_::compaction::Due, wit::Due { Threshold, Overflow, Manual });
core_::mirror_enum!(core_::Format, wit::Format { Claude, Pi, Crab });
core_::mirror_enum!(core_::gates::Reply, wit::Reply { Deliver, Hold, Suppress });
core_::mirror_enum!(core_::Mode, wit::CompactionMode { Auto, Manual, Overflow });
core_::mirror_enum!(core_::Role, wit::Role { User, Assistant });

struct Component;

impl wit::Guest for Component {
    type Store = Store;

    fn check_bytes(data: Vec<u8>) -> wit::CheckReport {
        check_to_wit(core_::check_bytes(&data))
    }

    fn context_window(model: String) -> Option<u64> {
        core_::tokens::context_window(&model)
    }

    fn silent_reply(text: String) -> wit::Reply {
        core_::gates::silent_reply(&text).into()
    }
}

struct Store(core_::Store<ImportedStorage>);

impl wit::GuestStore for Store {
    fn new(limits: Option<wit::Limits>) -> Self {
        let limits = limits.map_or_else(core_::Limits::default, |l| core_::Limits { part_bytes: l.part_bytes, total_bytes: l.total_bytes });
        Store(core_::Store::with_limits(ImportedStorage, limits))
    }

    fn append(&self, id: String, entry: wit::NewEntry) -> Result<wit::Entry, wit::Error> {
        let entry = core_::NewEntry { uuid: entry.uuid, now_ms: entry.now_ms, role: entry.role.into(), text: entry.text, cwd: entry.cwd };
        run(self.0.append(&id, entry)).map(entry_to_wit)
    }

    fn tombstone(&self, id: String, uuid: String, now_ms: i64) -> Result<(), wit::Error> {
        run(self.0.tombstone(&id, &uuid, now_ms))
    }

    fn load(&self, id: String) -> Result<wit::Transcript, wit::Error> {
        run(self.0.load(&id)).map(transcript_to_wit)
    }

    fn context(&self, id: String) -> Result<wit::Context, wit::Error> {
        let context = run(self.0.context(&id))?;
        Ok(wit::Context {
            compacted: context.compacted,
            messages: context
                .messages
                .into_iter()
                .map(|m| wit::ContextMessage {
                    uuid: m.uuid,
                    role: m.role,
                    text: m.text,
                    content: m.content,
                    is_compact_summary: m.is_compact_summary,
                })
                .collect(),
        })
    }

    fn check(&self, id: String) -> Result<wit::CheckReport, wit::Error> {
        run(self.0.check(&id)).map(check_to_wit)
    }

    fn subagents(&self, id: String) -> Result<Vec<wit::Subagent>, wit::Error> {
        let subagents = run(self.0.subagents(&id))?;
        Ok(subagents.into_iter().map(|s| wit::Subagent { key: s.key, transcript: transcript_to_wit(s.transcript) }).collect())
    }

    fn remove(&self, id: String) -> Result<Vec<String>, wit::Error> {
        run(self.0.remove(&id))
    }

    fn repair(&self, id: String, now_ms: i64) -> Result<wit::RepairReport, wit::Error> {
        let r = run(self.0.repair(&id, now_ms))?;
        Ok(wit::RepairReport {
            backups: r.backups,
            dropped: r.dropped.into_iter().map(skipped_to_wit).collect(),
            split_glued: r.split_glued,
            fixed_utf8: r.fixed_utf8,
            dropped_torn_tail: r.dropped_torn_tail,
        })
    }

    fn list(&self) -> Result<Vec<wit::SessionInfo>, wit::Error> {
        let sessions = run(self.0.list())?;
        Ok(sessions
            .into_iter()
            .map(|s| wit::SessionInfo {
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

    fn reopen(&self, id: String) {
        self.0.reopen(&id)
    }

    fn plan_compaction(&self, id: String, settings: wit::CompactionSettings, mode: wit::CompactionMode) -> Result<wit::Plan, wit::Error> {
        run(self.0.plan_compaction(&id, &settings_from_wit(settings), mode.into())).map(plan_to_wit)
    }

    fn summarize_offline(&self, id: String, plan: wit::Plan) -> Result<String, wit::Error> {
        run(self.0.summarize_offline(&id, &plan_from_wit(plan)))
    }

    fn apply_compaction(
        &self,
        id: String,
        plan: wit::Plan,
        summary: String,
        ids: wit::CompactionIds,
        now_ms: i64,
    ) -> Result<wit::Applied, wit::Error> {
        let ids = core_::CompactionIds { boundary: ids.boundary, summary: ids.summary };
        let a = run(self.0.apply_compaction(&id, &plan_from_wit(plan), &summary, &ids, now_ms))?;
        Ok(wit::Applied {
            format: a.format.into(),
            action: a.action.into(),
            boundary_uuid: a.boundary_uuid,
            summary_uuid: a.summary_uuid,
            tokens_before: a.tokens_before,
            tokens_after: a.tokens_after,
        })
    }

    fn record_compaction_failure(&self, id: String, reason: String, now_ms: i64) -> Result<(), wit::Error> {
        run(self.0.record_compaction_failure(&id, &reason, now_ms))
    }

    fn memory_flush_gate(&self, id: String, s: wit::FlushSettings) -> Result<wit::Decision, wit::Error> {
        let settings = core_::gates::FlushSettings {
            context_window: s.context_window,
            reserve_floor: s.reserve_floor,
            soft_threshold: s.soft_threshold,
        };
        run(self.0.memory_flush_gate(&id, &settings)).map(decision_to_wit)
    }

    fn record_memory_flush(&self, id: String, now_ms: i64) -> Result<(), wit::Error> {
        run(self.0.record_memory_flush(&id, now_ms))
    }

    fn extraction_gate(&self, id: String, s: wit::ExtractionSettings) -> Result<wit::Decision, wit::Error> {
        let settings = core_::gates::ExtractionSettings { min_messages: s.min_messages, min_tool_calls: s.min_tool_calls };
        run(self.0.extraction_gate(&id, &settings)).map(decision_to_wit)
    }

    fn record_extraction(&self, id: String, now_ms: i64) -> Result<(), wit::Error> {
        run(self.0.record_extraction(&id, now_ms))
    }

    fn reset_gate(&self, id: String, now_ms: i64, p: wit::ResetPolicy) -> Result<wit::Decision, wit::Error> {
        let policy = core_::gates::ResetPolicy {
            idle_minutes: p.idle_minutes,
            daily_reset_hour: p.daily_reset_hour,
            utc_offset_minutes: p.utc_offset_minutes,
            ttl_ms: p.ttl_ms,
        };
        run(self.0.reset_gate(&id, now_ms, &policy)).map(decision_to_wit)
    }

    fn dream_gate(&self, now_ms: i64, s: wit::DreamSettings) -> Result<wit::Decision, wit::Error> {
        run(self.0.dream_gate(now_ms, &dream_from_wit(s))).map(decision_to_wit)
    }

    fn dream_acquire(&self, now_ms: i64, holder: String, s: wit::DreamSettings) -> Result<wit::Decision, wit::Error> {
        run(self.0.dream_acquire(now_ms, &holder, &dream_from_wit(s))).map(decision_to_wit)
    }

    fn dream_release(&self, now_ms: i64, holder: String, completed: bool) -> Result<(), wit::Error> {
        run(self.0.dream_release(now_ms, &holder, completed))
    }
}

fn settings_from_wit(s: wit::CompactionSettings) -> core_::Settings {
    core_::Settings {
        context_window: s.context_window,
        trigger: match s.trigger {
            wit::Trigger::Fraction(f) => core_::Trigger::Fraction(f),
            wit::Trigger::Reserve(r) => core_::Trigger::Reserve { reserve_tokens: r.reserve_tokens, floor: r.floor },
        },
        keep: match s.keep {
            wit::Keep::RecentTokens(n) => core_::Keep::RecentTokens(n),
            wit::Keep::RecentMessages(n) => core_::Keep::RecentMessages(n),
        },
        tool_result_budget_chars: s.tool_result_budget_chars,
        max_failures: s.max_failures,
        summarizer_window: s.summarizer_window,
    }
}

fn dream_from_wit(s: wit::DreamSettings) -> core_::gates::DreamSettings {
    core_::gates::DreamSettings { min_interval_ms: s.min_interval_ms, min_new_sessions: s.min_new_sessions, stale_lock_ms: s.stale_lock_ms }
}

fn decision_to_wit(d: core_::gates::Decision) -> wit::Decision {
    wit::Decision { fire: d.fire, reason: d.reason }
}

fn plan_to_wit(p: core_::Plan) -> wit::Plan {
    wit::Plan {
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
        prune: p.prune.into_iter().map(|x| wit::Pruned { uuid: x.uuid, tool_use_id: x.tool_use_id, chars: x.chars }).collect(),
        previous_summary: p.previous_summary,
        prompt: p.prompt,
        steps: p.steps,
        turn_prefix_prompt: p.turn_prefix_prompt,
        summary_budget_tokens: p.summary_budget_tokens,
        leaf: p.leaf,
        session_bytes: p.session_bytes,
    }
}

fn plan_from_wit(p: wit::Plan) -> core_::Plan {
    core_::Plan {
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
        prune: p.prune.into_iter().map(|x| core_::Pruned { uuid: x.uuid, tool_use_id: x.tool_use_id, chars: x.chars }).collect(),
        previous_summary: p.previous_summary,
        prompt: p.prompt,
        steps: p.steps,
        turn_prefix_prompt: p.turn_prefix_prompt,
        summary_budget_tokens: p.summary_budget_tokens,
        leaf: p.leaf,
        session_bytes: p.session_bytes,
    }
}

/// Drives a core future over the synchronous imports and converts its error.
fn run<T>(future: impl core::future::Future<Output = Result<T, core_::Error>>) -> Result<T, wit::Error> {
    core_::block_on(future).map_err(error_to_wit)
}

fn entry_to_wit(e: core_::Entry) -> wit::Entry {
    wit::Entry {
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

fn skipped_to_wit(s: core_::SkippedLine) -> wit::SkippedLine {
    wit::SkippedLine { part: s.part, line: s.line, reason: s.reason }
}

fn report_to_wit(r: core_::LoadReport) -> wit::LoadReport {
    wit::LoadReport {
        entries: r.entries,
        by_type: r.by_type.into_iter().map(|t| wit::TypeCount { kind: t.kind, count: t.count }).collect(),
        skipped: r.skipped.into_iter().map(skipped_to_wit).collect(),
        torn_tail: r.torn_tail,
        recovered_glued: r.recovered_glued,
        invalid_utf8: r.invalid_utf8,
        lone_surrogates: r.lone_surrogates,
        tombstoned: r.tombstoned,
    }
}

fn transcript_to_wit(t: core_::Transcript) -> wit::Transcript {
    wit::Transcript {
        id: t.id,
        project: t.project,
        parts: t.parts,
        entries: t.entries.into_iter().map(entry_to_wit).collect(),
        chain: t.chain,
        report: report_to_wit(t.report),
    }
}

fn findings_to_wit(findings: Vec<core_::Finding>) -> Vec<wit::Finding> {
    findings.into_iter().map(|f| wit::Finding { part: f.part, line: f.line, id: f.id }).collect()
}

fn check_to_wit(c: core_::CheckReport) -> wit::CheckReport {
    wit::CheckReport {
        load: report_to_wit(c.load),
        dangling_parents: findings_to_wit(c.dangling_parents),
        orphaned_tool_uses: findings_to_wit(c.orphaned_tool_uses),
        orphaned_tool_results: findings_to_wit(c.orphaned_tool_results),
    }
}

fn error_to_wit(e: core_::Error) -> wit::Error {
    use core_::Error as E;
    match e {
        E::Storage(e) => wit::Error::Storage(storage_error_to_wit(e)),
        E::SessionNotFound { id } => wit::Error::SessionNotFound(id),
        E::InvalidSessionId { id, reason } => wit::Error::InvalidSessionId(wit::InvalidName { name: id, reason }),
        E::InvalidProject { name, reason } => wit::Error::InvalidProject(wit::InvalidName { name, reason }),
        E::AmbiguousSession { id, projects } => wit::Error::AmbiguousSession(wit::Ambiguous { id, projects }),
        E::EntryNotFound { id, uuid } => wit::Error::EntryNotFound(wit::EntryRef { id, uuid }),
        E::SessionFull { id, bytes, limit } => wit::Error::SessionFull(wit::SessionFull { id, bytes, limit }),
        E::SessionPoisoned { id } => wit::Error::SessionPoisoned(id),
        E::EmptySummary { id } => wit::Error::EmptySummary(id),
        E::NothingToCompact { id, reason } => wit::Error::NothingToCompact(wit::SessionReason { id, reason }),
        E::StalePlan { id, uuid } => wit::Error::StalePlan(wit::EntryRef { id, uuid }),
        E::Unsupported { format, operation } => wit::Error::Unsupported(wit::Unsupported { format, operation }),
        E::InvalidArgument(message) => wit::Error::InvalidArgument(message),
        other => wit::Error::InvalidArgument(alloc::format!("{other}")),
    }
}

fn storage_error_to_wit(e: core_::StorageError) -> types::StorageError {
    use core_::StorageError as E;
    use types::StorageError as W;
    match e {
        E::NotFound { key } => W::NotFound(key),
        E::AlreadyExists { key } => W::AlreadyExists(key),
        E::InvalidKey { key, reason } => W::InvalidKey(types::InvalidKey { key, reason }),
        E::ReadOnly { key } => W::ReadOnly(key),
        E::Locked { key } => W::Locked(key),
        E::QuotaExceeded { key } => W::QuotaExceeded(key),
        E::Io { key, message } => W::Io(types::IoFailure { key, message }),
        other => W::Io(types::IoFailure { key: String::new(), message: alloc::format!("{other}") }),
    }
}

fn storage_error_from_wit(e: types::StorageError) -> core_::StorageError {
    use core_::StorageError as E;
    use types::StorageError as W;
    match e {
        W::NotFound(key) => E::NotFound { key },
        W::AlreadyExists(key) => E::AlreadyExists { key },
        W::InvalidKey(types::InvalidKey { key, reason }) => E::InvalidKey { key, reason },
        W::ReadOnly(key) => E::ReadOnly { key },
        W::Locked(key) => E::Locked { key },
        W::QuotaExceeded(key) => E::QuotaExceeded { key },
        W::Io(types::IoFailure { key, message }) => E::Io { key, message },
    }
}

export!(Component);
