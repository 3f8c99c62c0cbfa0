//! One table of every type that crosses the WIT boundary, written once and expanded
//! by each Rust binding (the component guest and the wasmtime host) over its own
//! generated types, so no binding spells a conversion by hand and a field or variant
//! added to the core fails to compile until the WIT has it too.

use alloc::string::String;
use alloc::vec::Vec;

/// What the WIT's `data` variant carries, as the core keeps it: named here so that
/// [`mirror_wit_types!`](crate::mirror_wit_types) expands alike in `no_std` bindings.
#[doc(hidden)]
pub type MirrorBytes = Vec<u8>;
#[doc(hidden)]
pub type MirrorText = String;

/// A conversion between a core type and a binding's copy of it with the same shape.
/// Bindings get their implementations from [`mirror_wit!`](crate::mirror_wit).
pub trait Mirror<T> {
    fn mirror(self) -> T;
}

macro_rules! mirror_as_itself {
    ($($t:ty),*) => {
        $(impl Mirror<$t> for $t {
            fn mirror(self) -> $t {
                self
            }
        })*
    };
}

mirror_as_itself!((), String, bool, u8, u32, u64, i32, i64, f32, f64);

/// A shared string crosses a boundary as a string of its own.
impl Mirror<String> for super::SharedStr {
    fn mirror(self) -> String {
        self.into()
    }
}

impl Mirror<super::SharedStr> for String {
    fn mirror(self) -> super::SharedStr {
        self.into()
    }
}

/// Counts the core keeps as `usize` cross WIT as fixed-width integers; a count too
/// large for this machine saturates (it could not be allocated anyway).
macro_rules! mirror_count {
    ($($t:ty),*) => {
        $(impl Mirror<$t> for usize {
            fn mirror(self) -> $t {
                <$t>::try_from(self).unwrap_or(<$t>::MAX)
            }
        }
        impl Mirror<usize> for $t {
            fn mirror(self) -> usize {
                usize::try_from(self).unwrap_or(usize::MAX)
            }
        })*
    };
}

mirror_count!(u32, u64);

impl<A: Mirror<B>, B> Mirror<Vec<B>> for Vec<A> {
    fn mirror(self) -> Vec<B> {
        self.into_iter().map(Mirror::mirror).collect()
    }
}

impl<A: Mirror<B>, B, E: Mirror<F>, F> Mirror<Result<B, F>> for Result<A, E> {
    fn mirror(self) -> Result<B, F> {
        self.map(Mirror::mirror).map_err(Mirror::mirror)
    }
}

impl<A: Mirror<B>, B> Mirror<Option<B>> for Option<A> {
    fn mirror(self) -> Option<B> {
        self.map(Mirror::mirror)
    }
}

/// [`Mirror`] both ways between a core enum and a binding's enum with the same
/// variant names.
#[macro_export]
macro_rules! mirror_enum {
    ($core:path, $binding:path { $($variant:ident),+ $(,)? }) => {
        impl $crate::Mirror<$binding> for $core {
            fn mirror(self) -> $binding {
                use $core as C;
                use $binding as B;
                match self {
                    $(C::$variant => B::$variant,)+
                }
            }
        }
        impl $crate::Mirror<$core> for $binding {
            fn mirror(self) -> $core {
                use $core as C;
                use $binding as B;
                match self {
                    $(B::$variant => C::$variant,)+
                }
            }
        }
    };
}

/// [`Mirror`] both ways between a core struct and a binding's record with the same
/// field names; each field is mirrored in turn.
#[macro_export]
macro_rules! mirror_record {
    ($core:path, $binding:path { $($field:ident),+ $(,)? }) => {
        impl $crate::Mirror<$binding> for $core {
            fn mirror(self) -> $binding {
                use $binding as B;
                B { $($field: $crate::Mirror::mirror(self.$field),)+ }
            }
        }
        impl $crate::Mirror<$core> for $binding {
            fn mirror(self) -> $core {
                use $core as C;
                C { $($field: $crate::Mirror::mirror(self.$field),)+ }
            }
        }
    };
}

/// The WIT `types` interface mirrored onto a binding's generated module: what a
/// component that only provides or uses `storage` needs (the WASI storage provider).
/// `$sends_text` says whether bytes leaving as `data` go as text where they are UTF-8
/// (the component guest, for a host whose storage `wants-text`; see the WIT's `data`).
#[macro_export]
macro_rules! mirror_wit_types {
    ($types:ident; sends_text = $sends_text:expr) => {
        impl $types::Data {
            /// The bytes, where they lie.
            pub fn as_bytes(&self) -> &[u8] {
                match self {
                    Self::Text(text) => text.as_bytes(),
                    Self::Bytes(bytes) => bytes,
                }
            }
        }
        impl $crate::Mirror<$crate::MirrorBytes> for $types::Data {
            fn mirror(self) -> $crate::MirrorBytes {
                match self {
                    Self::Text(text) => text.into_bytes(),
                    Self::Bytes(bytes) => bytes,
                }
            }
        }
        impl $crate::Mirror<$types::Data> for $crate::MirrorBytes {
            fn mirror(self) -> $types::Data {
                if !$sends_text {
                    return $types::Data::Bytes(self);
                }
                match $crate::MirrorText::from_utf8(self) {
                    Ok(text) => $types::Data::Text(text),
                    Err(error) => $types::Data::Bytes(error.into_bytes()),
                }
            }
        }

        $crate::mirror_record!($crate::KeyInfo, $types::KeyInfo { key, size });
        $crate::mirror_record!($crate::redact::Redacted, $types::Redacted { kind, count });
        $crate::mirror_record!($crate::Window, $types::Window { since_ms, until_ms });
        $crate::mirror_enum!($crate::Format, $types::Format { Claude, Pi, Crab });

        impl $crate::Mirror<$types::StorageError> for $crate::StorageError {
            fn mirror(self) -> $types::StorageError {
                use $types::StorageError as W;
                match self {
                    Self::NotFound { key } => W::NotFound(key),
                    Self::AlreadyExists { key } => W::AlreadyExists(key),
                    Self::InvalidKey { key, reason } => W::InvalidKey($types::InvalidKey { key, reason }),
                    Self::ReadOnly { key } => W::ReadOnly(key),
                    Self::Locked { key } => W::Locked(key),
                    Self::QuotaExceeded { key } => W::QuotaExceeded(key),
                    Self::Changed { key } => W::Changed(key),
                    Self::Io { key, message } => W::Io($types::IoFailure { key, message }),
                }
            }
        }
        impl $crate::Mirror<$crate::StorageError> for $types::StorageError {
            fn mirror(self) -> $crate::StorageError {
                use $crate::StorageError as C;
                match self {
                    Self::NotFound(key) => C::NotFound { key },
                    Self::AlreadyExists(key) => C::AlreadyExists { key },
                    Self::InvalidKey($types::InvalidKey { key, reason }) => C::InvalidKey { key, reason },
                    Self::ReadOnly(key) => C::ReadOnly { key },
                    Self::Locked(key) => C::Locked { key },
                    Self::QuotaExceeded(key) => C::QuotaExceeded { key },
                    Self::Changed(key) => C::Changed { key },
                    Self::Io($types::IoFailure { key, message }) => C::Io { key, message },
                }
            }
        }

        impl $crate::Mirror<$types::Error> for $crate::Error {
            fn mirror(self) -> $types::Error {
                use $crate::Mirror as _;
                use $types::Error as W;
                match self {
                    Self::Storage(e) => W::Storage(e.mirror()),
                    Self::SessionNotFound { id } => W::SessionNotFound(id),
                    Self::InvalidSessionId { id, reason } => W::InvalidSessionId($types::InvalidName { name: id, reason }),
                    Self::InvalidProject { name, reason } => W::InvalidProject($types::InvalidName { name, reason }),
                    Self::AmbiguousSession { id, projects } => W::AmbiguousSession($types::Ambiguous { id, projects }),
                    Self::EntryNotFound { id, uuid } => W::EntryNotFound($types::EntryRef { id, uuid }),
                    Self::SessionFull { id, bytes, limit } => W::SessionFull($types::SessionFull { id, bytes, limit }),
                    Self::SubagentFull { id, agent, bytes, limit } => W::SubagentFull($types::SubagentFull { id, agent, bytes, limit }),
                    Self::SessionPoisoned { id } => W::SessionPoisoned(id),
                    Self::EmptySummary { id } => W::EmptySummary(id),
                    Self::NothingToCompact { id, reason } => W::NothingToCompact($types::SessionReason { id, reason }),
                    Self::StalePlan { id, uuid } => W::StalePlan($types::EntryRef { id, uuid }),
                    Self::Unsupported { format, operation } => W::Unsupported($types::Unsupported { format: format.mirror(), operation }),
                    Self::InvalidMessage { message, reason } => W::InvalidMessage($types::InvalidMessage { message, reason }),
                    Self::MemoryNotFound { scope, file } => W::MemoryNotFound($types::MemoryRef { scope, file }),
                    Self::InvalidAnswer { line, reason } => W::InvalidAnswer($types::InvalidAnswer { line, reason }),
                    Self::KeyNotFound { key } => W::KeyNotFound(key),
                    Self::SessionExists { id } => W::SessionExists(id),
                    Self::SessionArchived { id } => W::SessionArchived(id),
                    Self::InvalidArgument(message) => W::InvalidArgument(message),
                }
            }
        }
        impl $crate::Mirror<$crate::Error> for $types::Error {
            fn mirror(self) -> $crate::Error {
                use $crate::Error as C;
                use $crate::Mirror as _;
                match self {
                    Self::Storage(e) => C::Storage(e.mirror()),
                    Self::SessionNotFound(id) => C::SessionNotFound { id },
                    Self::InvalidSessionId($types::InvalidName { name, reason }) => C::InvalidSessionId { id: name, reason },
                    Self::InvalidProject($types::InvalidName { name, reason }) => C::InvalidProject { name, reason },
                    Self::AmbiguousSession($types::Ambiguous { id, projects }) => C::AmbiguousSession { id, projects },
                    Self::EntryNotFound($types::EntryRef { id, uuid }) => C::EntryNotFound { id, uuid },
                    Self::SessionFull($types::SessionFull { id, bytes, limit }) => C::SessionFull { id, bytes, limit },
                    Self::SubagentFull($types::SubagentFull { id, agent, bytes, limit }) => C::SubagentFull { id, agent, bytes, limit },
                    Self::SessionPoisoned(id) => C::SessionPoisoned { id },
                    Self::EmptySummary(id) => C::EmptySummary { id },
                    Self::NothingToCompact($types::SessionReason { id, reason }) => C::NothingToCompact { id, reason },
                    Self::StalePlan($types::EntryRef { id, uuid }) => C::StalePlan { id, uuid },
                    Self::Unsupported($types::Unsupported { format, operation }) => C::Unsupported { format: format.mirror(), operation },
                    Self::InvalidMessage($types::InvalidMessage { message, reason }) => C::InvalidMessage { message, reason },
                    Self::MemoryNotFound($types::MemoryRef { scope, file }) => C::MemoryNotFound { scope, file },
                    Self::InvalidAnswer($types::InvalidAnswer { line, reason }) => C::InvalidAnswer { line, reason },
                    Self::KeyNotFound(key) => C::KeyNotFound { key },
                    Self::SessionExists(id) => C::SessionExists { id },
                    Self::SessionArchived(id) => C::SessionArchived { id },
                    Self::InvalidArgument(message) => C::InvalidArgument(message),
                }
            }
        }
    };
}

/// Every WIT type of `wit/`, mirrored onto a binding's generated modules:
/// `mneme_core::mirror_wit!(types, sessions, compaction, gates, memory, index; sends_text
/// = false);` with each name a module (or `use … as` alias) in scope (`sends_text`: see
/// [`mirror_wit_types!`](crate::mirror_wit_types)).
#[macro_export]
macro_rules! mirror_wit {
    ($types:ident, $sessions:ident, $compaction:ident, $gates:ident, $memory:ident, $index:ident; sends_text = $sends_text:expr) => {
        $crate::mirror_wit_types!($types; sends_text = $sends_text);

        $crate::mirror_record!($crate::index::Field, $index::Field { name, value });
        $crate::mirror_record!($crate::index::Origin, $index::Origin { provider, subject, room, display_name });
        $crate::mirror_enum!($crate::index::ChatType, $index::ChatType { Direct, Group, Channel, Room, Cron, Hook });
        $crate::mirror_enum!($crate::index::DmScope, $index::DmScope { Main, PerPeer, PerProviderPeer });
        $crate::mirror_record!($crate::index::Inbound, $index::Inbound { agent, chat_type, provider, id, thread, text, origin, metadata });
        $crate::mirror_record!($crate::index::route::ResetOverride, $index::ResetOverride { chat_type, provider, policy });
        $crate::mirror_record!($crate::index::RoutePolicy, $index::RoutePolicy { main_key, dm_scope, reset, overrides, reset_commands });
        $crate::mirror_enum!($crate::index::ResolveAction, $index::ResolveAction { Created, Continued, Reset, Idle, Daily, Expired });
        $crate::mirror_record!(
            $crate::index::Resolution,
            $index::Resolution { key, session_id, action, reason, previous_session_id, text }
        );
        $crate::mirror_record!(
            $crate::index::KeyEntry,
            $index::KeyEntry {
                key,
                session_id,
                created_ms,
                updated_ms,
                session_started_ms,
                chat_type,
                origin,
                title,
                model,
                toggles,
                metadata,
                previous_session_ids,
                reason,
            }
        );
        $crate::mirror_record!(
            $crate::index::Counters,
            $index::Counters {
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cache_creation_tokens,
                context_tokens,
                compaction_count,
                memory_flush_ms,
                memory_flush_compaction_count,
                extraction_ms,
            }
        );
        $crate::mirror_record!($crate::index::KeyView, $index::KeyView { entry, session, counters });
        $crate::mirror_record!($crate::index::KeyPatch, $index::KeyPatch { title, model, origin, toggles, metadata });
        $crate::mirror_record!($crate::index::sessionkey::KeyParts, $index::KeyParts { chat_type, agent, provider, id, thread });
        $crate::mirror_record!(
            $crate::index::IndexHealth,
            $index::IndexHealth { generation, key_count, session_count, log_lines, damaged_lines, damaged_snapshots, torn_bytes }
        );
        $crate::mirror_record!($crate::index::openclaw::RefusedKey, $index::RefusedKey { key, reason });
        $crate::mirror_record!($crate::index::openclaw::KeysImported, $index::KeysImported { imported, existing, refused });
        $crate::mirror_record!(
            $crate::crab::CrabSession,
            $index::CrabSession { id, project, agent, sender, seq, title, created_by, created_at, uptime_secs }
        );
        $crate::mirror_record!(
            $crate::RebuildReport,
            $index::RebuildReport { before, session_count, added, changed, dropped, key_count, skipped }
        );
        $crate::mirror_record!(
            $crate::index::RolledOver,
            $index::RolledOver { entry, previous_session_id, format, boundary_uuid, tokens_before, tokens_after }
        );

        $crate::mirror_enum!($crate::memory::file::MemoryType, $memory::MemoryType { User, Feedback, Project, Reference });
        $crate::mirror_enum!($crate::memory::file::LinkKind, $memory::LinkKind { RelatesTo, Contradicts, Extends, DerivedFrom });
        $crate::mirror_record!($crate::memory::file::Links, $memory::Links { relates_to, contradicts, extends, derived_from });
        $crate::mirror_record!(
            $crate::memory::file::Memory,
            $memory::Memory {
                file,
                name,
                description,
                type_,
                body,
                created_ms,
                updated_ms,
                used_ms,
                valid_from_ms,
                invalid_at_ms,
                superseded_by,
                archived_ms,
                confidence,
                topics,
                links,
                session,
                entry,
                extra,
                redacted,
            }
        );
        $crate::mirror_record!(
            $crate::memory::store::NewMemory,
            $memory::NewMemory { name, type_, description, body, topics, links, confidence, session, entry, valid_from_ms }
        );
        $crate::mirror_record!($crate::memory::store::Change, $memory::Change { name, type_, description, body, topics, confidence });
        $crate::mirror_record!($crate::memory::store::Filter, $memory::Filter { type_, topic, session, all, window });
        $crate::mirror_record!($crate::memory::store::MemoryIndexReport, $memory::MemoryIndexReport { reason, files });
        $crate::mirror_record!($crate::recall::embed::EmbeddingsInfo, $memory::EmbeddingsInfo { words, terms, dimensions, skipped });
        $crate::mirror_record!(
            $crate::memory::store::RecallHit,
            $memory::RecallHit { file, name, description, type_, score, current, matched }
        );
        $crate::mirror_record!($crate::memory::store::Recalled, $memory::Recalled { hits, report });
        $crate::mirror_record!($crate::memory::store::EmbeddingPlan, $memory::EmbeddingPlan { model, files, versions, texts });
        $crate::mirror_record!($crate::memory::store::Near, $memory::Near { model, vector });
        $crate::mirror_record!($crate::memory::store::Shown, $memory::Shown { memory, history });
        $crate::mirror_record!($crate::memory::tool::MemoryToolResult, $memory::MemoryToolResult { content, is_error });
        $crate::mirror_record!($crate::memory::memory_md::Caps, $memory::Caps { lines, units });
        $crate::mirror_record!($crate::memory::memory_md::Loaded, $memory::Loaded { text, left_out });
        $crate::mirror_record!(
            $crate::memory::extract::ExtractionPlan,
            $memory::ExtractionPlan { id, prompt, max_tokens, message_count, entry, known, failures }
        );
        $crate::mirror_record!($crate::memory::extract::Extracted, $memory::Extracted { added, updated, superseded });
        $crate::mirror_record!(
            $crate::memory::consolidate::ConsolidationPlan,
            $memory::ConsolidationPlan { id, prompt, max_tokens, known, sessions, since_ms }
        );
        $crate::mirror_record!(
            $crate::memory::instructions::Request,
            $memory::InstructionsRequest { cwd, home, managed, paths, external_imports }
        );
        $crate::mirror_enum!(
            $crate::memory::instructions::Kind,
            $memory::InstructionKind { Managed, User, UserRule, Project, ProjectRule, Local, Import }
        );
        $crate::mirror_record!(
            $crate::memory::instructions::File,
            $memory::InstructionFile { path, kind, imported_by, external, loaded, reason }
        );
        $crate::mirror_record!($crate::memory::instructions::Instructions, $memory::LoadedInstructions { text, files });
        $crate::mirror_enum!($crate::memory::consolidate::StepKind, $memory::StepKind { Added, Updated, Superseded, Archived, Linked });
        $crate::mirror_record!($crate::memory::consolidate::Step, $memory::ConsolidationStep { kind, file, before, after, reason });
        $crate::mirror_record!(
            $crate::memory::consolidate::Consolidation,
            $memory::Consolidation { id, at_ms, sessions, steps, applied, rolled_back_ms }
        );

        impl $crate::Mirror<$memory::Scope> for $crate::memory::store::Scope {
            fn mirror(self) -> $memory::Scope {
                match self {
                    Self::Global => $memory::Scope::Global,
                    Self::Project(project) => $memory::Scope::Project(project),
                }
            }
        }
        impl $crate::Mirror<$crate::memory::store::Scope> for $memory::Scope {
            fn mirror(self) -> $crate::memory::store::Scope {
                match self {
                    Self::Global => $crate::memory::store::Scope::Global,
                    Self::Project(project) => $crate::memory::store::Scope::Project(project),
                }
            }
        }

        $crate::mirror_record!($crate::Limits, $sessions::Limits { part_bytes, total_bytes });
        $crate::mirror_enum!($crate::Role, $sessions::Role { User, Assistant });
        $crate::mirror_record!($crate::NewEntry, $sessions::NewEntry { uuid, now_ms, role, text, cwd });
        $crate::mirror_enum!($crate::Provider, $sessions::Provider { Anthropic, Openai });
        $crate::mirror_enum!($crate::Speaker, $sessions::Speaker { System, User, Assistant });
        $crate::mirror_enum!($crate::Place, $sessions::Place { Start, BeforeLastPrompt, End });
        $crate::mirror_record!($crate::AgentRef, $sessions::AgentRef { id, parent_call });
        $crate::mirror_record!($crate::Turn, $sessions::Turn { uuid, now_ms, cwd, provider, messages, parent, agent });
        $crate::mirror_record!($crate::Injection, $sessions::Injection { role, place, text });
        $crate::mirror_record!($crate::Usage, $sessions::Usage { input, output, cache_read, cache_creation });
        $crate::mirror_record!($crate::Prices, $sessions::Prices { input, output, cache_read, cache_creation });
        $crate::mirror_record!(
            $crate::Branch,
            $sessions::Branch { leaf, current, role, text, timestamp, message_count, forks_at, usage, cost }
        );
        $crate::mirror_record!($crate::AgentUsage, $sessions::AgentUsage { agent, usage, cost, replies });
        $crate::mirror_record!($crate::Ledger, $sessions::Ledger { total, cost, replies, branches, subagents });
        $crate::mirror_record!(
            $crate::ProviderContext,
            $sessions::ProviderContext { provider, body, message_count, compacted, tokens, interrupted }
        );
        $crate::mirror_record!(
            $crate::Entry,
            $sessions::Entry { part, line, type_, uuid, parent_uuid, session_id, timestamp, role, text, is_sidechain, raw, redacted }
        );
        $crate::mirror_record!($crate::SkippedLine, $sessions::SkippedLine { part, line, reason });
        $crate::mirror_record!($crate::TypeCount, $sessions::TypeCount { type_, count });
        $crate::mirror_record!(
            $crate::LoadReport,
            $sessions::LoadReport { entry_count, by_type, skipped, torn_tail, recovered_glued, invalid_utf8, lone_surrogates, tombstoned }
        );
        $crate::mirror_record!($crate::Transcript, $sessions::Transcript { id, project, parts, entries, chain, report });
        $crate::mirror_record!($crate::ContextMessage, $sessions::ContextMessage { uuid, role, text, content, is_compact_summary, model });
        $crate::mirror_record!($crate::Context, $sessions::Context { compacted, messages });
        $crate::mirror_record!($crate::Finding, $sessions::Finding { part, line, id });
        $crate::mirror_record!(
            $crate::CheckReport,
            $sessions::CheckReport { load, dangling_parents, orphaned_tool_uses, orphaned_tool_results }
        );
        $crate::mirror_record!($crate::Subagent, $sessions::Subagent { key, transcript });
        $crate::mirror_record!($crate::RelinkedLine, $sessions::RelinkedLine { part, line, parent });
        $crate::mirror_record!(
            $crate::RepairReport,
            $sessions::RepairReport { backups, dropped, split_glued, fixed_utf8, fixed_surrogates, dropped_torn_tail, relinked }
        );
        $crate::mirror_record!(
            $crate::SessionInfo,
            $sessions::SessionInfo { id, project, key, parts, bytes, entry_count, message_count, title, created, updated }
        );
        $crate::mirror_record!($crate::SkippedKey, $sessions::SkippedKey { key, reason });
        $crate::mirror_record!($crate::Listing, $sessions::Listing { sessions, skipped });
        $crate::mirror_record!(
            $crate::SearchHit,
            $sessions::SearchHit { id, project, format, cwd, uuid, role, timestamp, text, score, matched }
        );
        $crate::mirror_enum!($crate::interchange::Source, $sessions::Source { Claude, Pi, Codex, Gemini, Openai });
        $crate::mirror_enum!($crate::interchange::ExportFormat, $sessions::ExportFormat { Claude, Pi, Openai, Markdown });
        $crate::mirror_record!($crate::interchange::Import, $sessions::ImportRequest { data, source, id, cwd, origin, uuid, now_ms });
        $crate::mirror_record!(
            $crate::interchange::Imported,
            $sessions::Imported { id, project, source, format, message_count, skipped, migrated_from, provenance }
        );
        $crate::mirror_record!($crate::interchange::Exported, $sessions::Exported { format, data, message_count, verbatim });
        $crate::mirror_record!($crate::retention::ClassTtl, $sessions::ClassTtl { class, ttl_ms });
        $crate::mirror_record!(
            $crate::retention::Retention,
            $sessions::Retention { ttl_ms, classes, keep_archived_ms, delete_archived, max_disk_bytes, dry_run }
        );
        $crate::mirror_record!($crate::retention::ArchivedSession, $sessions::ArchivedSession { id, project, archived_ms, files, bytes });
        $crate::mirror_record!($crate::TranscriptKey, $sessions::TranscriptKey { project, id, subpath });
        $crate::mirror_record!($crate::WrittenSession, $sessions::WrittenSession { id, updated_ms });
        $crate::mirror_record!($crate::retention::Expired, $sessions::Expired { id, project, last_active_ms, ttl_ms, reason });
        $crate::mirror_record!($crate::retention::Removed, $sessions::Removed { key, bytes, reason });
        $crate::mirror_record!($crate::retention::GcReport, $sessions::GcReport { dry_run, archived, removed, kept_bytes });

        $crate::mirror_enum!($crate::Mode, $compaction::Mode { Auto, Manual, Overflow });
        $crate::mirror_enum!($crate::compaction::Due, $compaction::Due { Threshold, Overflow, Manual });
        $crate::mirror_enum!($crate::Action, $compaction::Action { None, Prune, Summarize });
        $crate::mirror_record!(
            $crate::Settings,
            $compaction::Settings { context_window, trigger, keep, tool_result_budget_chars, max_failures, summarizer_window }
        );
        $crate::mirror_record!($crate::Pruned, $compaction::Pruned { uuid, tool_use_id, chars });
        $crate::mirror_record!(
            $crate::Plan,
            $compaction::Plan {
                trigger,
                reason,
                blocked,
                action,
                context_window,
                limit,
                tokens_before,
                summarize,
                turn_prefix,
                keep,
                keep_tokens,
                prune,
                previous_summary,
                prompt,
                steps,
                turn_prefix_prompt,
                summary_budget_tokens,
                leaf,
                session_bytes,
            }
        );
        $crate::mirror_record!($crate::CompactionIds, $compaction::CompactionIds { boundary, summary });
        $crate::mirror_record!(
            $crate::Applied,
            $compaction::Applied { format, action, boundary_uuid, summary_uuid, tokens_before, tokens_after }
        );

        $crate::mirror_enum!($crate::gates::Reply, $gates::Reply { Deliver, Hold, Suppress });
        $crate::mirror_record!($crate::gates::Decision, $gates::Decision { fire, reason });
        $crate::mirror_record!($crate::gates::FlushSettings, $gates::FlushSettings { context_window, reserve_floor, soft_threshold });
        $crate::mirror_record!($crate::gates::ExtractionSettings, $gates::ExtractionSettings { min_messages, min_tool_calls });
        $crate::mirror_record!($crate::gates::DreamSettings, $gates::DreamSettings { min_interval_ms, min_new_sessions, stale_lock_ms });
        $crate::mirror_record!(
            $crate::gates::ResetPolicy,
            $gates::ResetPolicy { idle_minutes, daily_reset_hour, utc_offset_minutes, ttl_ms }
        );

        impl $crate::Mirror<$compaction::Trigger> for $crate::Trigger {
            fn mirror(self) -> $compaction::Trigger {
                use $compaction::Trigger as W;
                match self {
                    Self::Fraction(f) => W::Fraction(f),
                    Self::Reserve { reserve_tokens, floor } => W::Reserve($compaction::ReserveTrigger { reserve_tokens, floor }),
                }
            }
        }
        impl $crate::Mirror<$crate::Trigger> for $compaction::Trigger {
            fn mirror(self) -> $crate::Trigger {
                use $crate::Trigger as C;
                match self {
                    Self::Fraction(f) => C::Fraction(f),
                    Self::Reserve($compaction::ReserveTrigger { reserve_tokens, floor }) => C::Reserve { reserve_tokens, floor },
                }
            }
        }
        impl $crate::Mirror<$compaction::Keep> for $crate::Keep {
            fn mirror(self) -> $compaction::Keep {
                use $compaction::Keep as W;
                match self {
                    Self::RecentTokens(n) => W::RecentTokens(n),
                    Self::RecentMessages(n) => W::RecentMessages(n),
                }
            }
        }
        impl $crate::Mirror<$crate::Keep> for $compaction::Keep {
            fn mirror(self) -> $crate::Keep {
                use $crate::Keep as C;
                match self {
                    Self::RecentTokens(n) => C::RecentTokens(n),
                    Self::RecentMessages(n) => C::RecentMessages(n),
                }
            }
        }

        impl $crate::Mirror<$compaction::Step> for $crate::Step {
            fn mirror(self) -> $compaction::Step {
                use $compaction::Step as W;
                match self {
                    Self::Summarize { prompt, max_tokens } => W::Summarize($compaction::SummaryRequest { prompt, max_tokens }),
                    Self::Apply { summary } => W::Apply(summary),
                    Self::RecordFailure { reason } => W::RecordFailure(reason),
                    Self::Done => W::Done,
                }
            }
        }
    };
}
