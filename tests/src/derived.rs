// Written by `cargo xtask codegen` from wit/, the `Engine` trait in core/src/engine.rs
// and the store's views; do not edit.

//! The conformance runner's calls of the operations whose methods the JavaScript and
//! Python APIs derive from the WIT (xtask/src/wrappers.rs), by a vector step's names.

use mneme_core::gates::{DreamSettings, ExtractionSettings, FlushSettings, ResetPolicy};
use mneme_core::index::{Field, KeyPatch};
use mneme_core::memory::file::LinkKind;
use mneme_core::memory::memory_md::Caps;
use mneme_core::memory::store::{Change, Scope};
use mneme_core::recall::Window;
use mneme_core::retention::Retention;
use mneme_core::sessions::TranscriptKey;
use mneme_core::transcript::Prices;
use mneme_core::{Engine, EngineError};
use serde_json::Value;

use crate::{json_outcome, json_text, known, overlaid, parse, parse_or, scope, text_outcome, to_outcome, window};

/// Runs operation `op` with a step's `args`; `None` for an operation called otherwise.
pub(crate) fn call<E: EngineError, H: Engine<E>>(host: &mut H, op: &str, args: &Value) -> Option<Result<Value, String>> {
    let mut outcome = || -> Result<Option<Value>, String> {
        Ok(Some(match op {
            "record_compaction_failure" => {
                known(args, &["id", "reason", "now_ms"])?;
                let id: String = parse(args, "id")?;
                let reason: String = parse(args, "reason")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.record_compaction_failure(&id, &reason, now_ms))
            }
            "memory_flush_gate" => {
                known(args, &["id", "settings"])?;
                let id: String = parse(args, "id")?;
                let settings: FlushSettings = overlaid(args, "settings")?;
                to_outcome(host.memory_flush_gate(&id, &settings))
            }
            "record_memory_flush" => {
                known(args, &["id", "now_ms"])?;
                let id: String = parse(args, "id")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.record_memory_flush(&id, now_ms))
            }
            "extraction_gate" => {
                known(args, &["id", "settings"])?;
                let id: String = parse(args, "id")?;
                let settings: ExtractionSettings = overlaid(args, "settings")?;
                to_outcome(host.extraction_gate(&id, &settings))
            }
            "record_extraction" => {
                known(args, &["id", "now_ms"])?;
                let id: String = parse(args, "id")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.record_extraction(&id, now_ms))
            }
            "reset_gate" => {
                known(args, &["id", "policy", "now_ms"])?;
                let id: String = parse(args, "id")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                let policy: ResetPolicy = overlaid(args, "policy")?;
                to_outcome(host.reset_gate(&id, now_ms, &policy))
            }
            "dream_gate" => {
                known(args, &["settings", "now_ms"])?;
                let now_ms: i64 = parse(args, "now_ms")?;
                let settings: DreamSettings = overlaid(args, "settings")?;
                to_outcome(host.dream_gate(now_ms, &settings))
            }
            "dream_acquire" => {
                known(args, &["holder", "settings", "now_ms"])?;
                let now_ms: i64 = parse(args, "now_ms")?;
                let holder: String = parse(args, "holder")?;
                let settings: DreamSettings = overlaid(args, "settings")?;
                to_outcome(host.dream_acquire(now_ms, &holder, &settings))
            }
            "dream_release" => {
                known(args, &["holder", "completed", "now_ms"])?;
                let now_ms: i64 = parse(args, "now_ms")?;
                let holder: String = parse(args, "holder")?;
                let completed: bool = parse(args, "completed")?;
                to_outcome(host.dream_release(now_ms, &holder, completed))
            }
            "reset_key" => {
                known(args, &["key", "new_session_id", "now_ms"])?;
                let key: String = parse(args, "key")?;
                let new_session_id: String = parse(args, "new_session_id")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.reset_key(&key, &new_session_id, now_ms))
            }
            "update_key" => {
                known(args, &["key", "patch"])?;
                let key: String = parse(args, "key")?;
                let patch: KeyPatch = overlaid(args, "patch")?;
                to_outcome(host.update_key(&key, &patch))
            }
            "remove_key" => {
                known(args, &["key"])?;
                let key: String = parse(args, "key")?;
                to_outcome(host.remove_key(&key))
            }
            "key" => {
                known(args, &["key"])?;
                let key: String = parse(args, "key")?;
                to_outcome(host.key(&key))
            }
            "keys" => {
                known(args, &["filter"])?;
                let filter: Vec<Field> = parse_or(args, "filter", serde_json::json!([]))?;
                to_outcome(host.keys(&filter))
            }
            "index_report" => {
                known(args, &[])?;
                to_outcome(host.index_report())
            }
            "rebuild_index" => {
                known(args, &[])?;
                to_outcome(host.rebuild_index())
            }
            "export_openclaw_keys" => {
                known(args, &[])?;
                text_outcome(host.export_openclaw_keys())
            }
            "crab_latest" => {
                known(args, &["agent", "sender", "project"])?;
                let project: Option<String> = parse(args, "project")?;
                let agent: String = parse(args, "agent")?;
                let sender: String = parse(args, "sender")?;
                to_outcome(host.crab_latest(project.as_deref(), &agent, &sender))
            }
            "crab_start" => {
                known(args, &["agent", "sender", "project", "created_by", "now_ms"])?;
                let project: Option<String> = parse(args, "project")?;
                let agent: String = parse(args, "agent")?;
                let sender: String = parse(args, "sender")?;
                let created_by: String = parse_or(args, "created_by", serde_json::json!("user"))?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.crab_start(project.as_deref(), &agent, &sender, &created_by, now_ms))
            }
            "crab_show" => {
                known(args, &["id"])?;
                let id: String = parse(args, "id")?;
                to_outcome(host.crab_show(&id))
            }
            "crab_set_title" => {
                known(args, &["id", "title"])?;
                let id: String = parse(args, "id")?;
                let title: String = parse(args, "title")?;
                to_outcome(host.crab_set_title(&id, &title))
            }
            "crab_add_uptime" => {
                known(args, &["id", "secs"])?;
                let id: String = parse(args, "id")?;
                let secs: u64 = parse(args, "secs")?;
                to_outcome(host.crab_add_uptime(&id, secs))
            }
            "rollover_gate" => {
                known(args, &["key", "max_context_tokens"])?;
                let key: String = parse(args, "key")?;
                let max_context_tokens: u64 = parse(args, "max_context_tokens")?;
                to_outcome(host.rollover_gate(&key, max_context_tokens))
            }
            "memory_update" => {
                known(args, &["project", "file", "change", "now_ms"])?;
                let scope: Scope = scope(args);
                let file: String = parse(args, "file")?;
                let change: Change = parse(args, "change")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.memory_update(&scope, &file, change, now_ms))
            }
            "memory_forget" => {
                known(args, &["project", "file", "now_ms"])?;
                let scope: Scope = scope(args);
                let file: String = parse(args, "file")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.memory_forget(&scope, &file, now_ms))
            }
            "memory_tool" => {
                known(args, &["project", "input", "now_ms"])?;
                let scope: Scope = scope(args);
                let input: String = json_text(args, "input")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.memory_tool(&scope, &input, now_ms))
            }
            "memory_link" => {
                known(args, &["project", "from", "kind", "to", "now_ms"])?;
                let scope: Scope = scope(args);
                let from: String = parse(args, "from")?;
                let kind: LinkKind = parse(args, "kind")?;
                let to: String = parse(args, "to")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.memory_link(&scope, &from, kind, &to, now_ms))
            }
            "memory_show" => {
                known(args, &["project", "file"])?;
                let scope: Scope = scope(args);
                let file: String = parse(args, "file")?;
                to_outcome(host.memory_show(&scope, &file))
            }
            "memory_load" => {
                known(args, &["project", "caps"])?;
                let scope: Scope = scope(args);
                let caps: Caps = overlaid(args, "caps")?;
                to_outcome(host.memory_load(&scope, caps))
            }
            "memory_reindex" => {
                known(args, &["project"])?;
                let scope: Scope = scope(args);
                to_outcome(host.memory_reindex(&scope))
            }
            "memory_used" => {
                known(args, &["project", "files", "now_ms"])?;
                let scope: Scope = scope(args);
                let files: Vec<String> = parse(args, "files")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.memory_used(&scope, &files, now_ms))
            }
            "record_extraction_failure" => {
                known(args, &["id", "reason", "now_ms"])?;
                let id: String = parse(args, "id")?;
                let reason: String = parse(args, "reason")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.record_extraction_failure(&id, &reason, now_ms))
            }
            "rollback_consolidation" => {
                known(args, &["project", "id", "now_ms"])?;
                let scope: Scope = scope(args);
                let id: String = parse(args, "id")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.rollback_consolidation(&scope, &id, now_ms))
            }
            "consolidations" => {
                known(args, &["project"])?;
                let scope: Scope = scope(args);
                to_outcome(host.consolidations(&scope))
            }
            "write_file" => {
                known(args, &["path", "text"])?;
                let path: String = parse(args, "path")?;
                let text: String = parse(args, "text")?;
                to_outcome(host.write_file(&path, &text))
            }
            "read_file" => {
                known(args, &["path"])?;
                let path: String = parse(args, "path")?;
                to_outcome(host.read_file(&path))
            }
            "remove_file" => {
                known(args, &["path"])?;
                let path: String = parse(args, "path")?;
                to_outcome(host.remove_file(&path))
            }
            "tombstone" => {
                known(args, &["id", "uuid", "now_ms"])?;
                let id: String = parse(args, "id")?;
                let uuid: String = parse(args, "uuid")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.tombstone(&id, &uuid, now_ms))
            }
            "load" => {
                known(args, &["id"])?;
                let id: String = parse(args, "id")?;
                to_outcome(host.load(&id))
            }
            "branches" => {
                known(args, &["id"])?;
                let id: String = parse(args, "id")?;
                to_outcome(host.branches(&id))
            }
            "usage" => {
                known(args, &["id", "prices"])?;
                let id: String = parse(args, "id")?;
                let prices: Option<Prices> = parse(args, "prices")?;
                to_outcome(host.usage(&id, prices.as_ref()))
            }
            "fork" => {
                known(args, &["id", "from", "to", "now_ms"])?;
                let id: String = parse(args, "id")?;
                let from: Option<String> = parse(args, "from")?;
                let to: String = parse(args, "to")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.fork(&id, from.as_deref(), &to, now_ms))
            }
            "gc" => {
                known(args, &["policy", "now_ms"])?;
                let policy: Retention = overlaid(args, "policy")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.gc(&policy, now_ms))
            }
            "archive" => {
                known(args, &["id", "now_ms"])?;
                let id: String = parse(args, "id")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.archive(&id, now_ms))
            }
            "archived" => {
                known(args, &[])?;
                to_outcome(host.archived())
            }
            "restore" => {
                known(args, &["id"])?;
                let id: String = parse(args, "id")?;
                to_outcome(host.restore(&id))
            }
            "check" => {
                known(args, &["id"])?;
                let id: String = parse(args, "id")?;
                to_outcome(host.check(&id))
            }
            "subagents" => {
                known(args, &["id"])?;
                let id: String = parse(args, "id")?;
                to_outcome(host.subagents(&id))
            }
            "hold" => {
                known(args, &["id"])?;
                let id: String = parse(args, "id")?;
                to_outcome(host.hold(&id))
            }
            "release" => {
                known(args, &["id"])?;
                let id: String = parse(args, "id")?;
                to_outcome(host.release(&id))
            }
            "remove" => {
                known(args, &["id"])?;
                let id: String = parse(args, "id")?;
                to_outcome(host.remove(&id))
            }
            "repair" => {
                known(args, &["id", "now_ms"])?;
                let id: String = parse(args, "id")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.repair(&id, now_ms))
            }
            "list" => {
                known(args, &[])?;
                to_outcome(host.list())
            }
            "search" => {
                known(args, &["query", "limit", "project", "since_ms", "until_ms"])?;
                let query: String = parse(args, "query")?;
                let limit: usize = parse_or(args, "limit", serde_json::json!(10))?;
                let project: Option<String> = parse(args, "project")?;
                let window: Window = window(args)?;
                to_outcome(host.search(&query, limit, project.as_deref(), window))
            }
            "reopen" => {
                known(args, &["id"])?;
                let id: String = parse(args, "id")?;
                to_outcome(host.reopen(&id))
            }
            "append_lines" => {
                known(args, &["key", "lines", "now_ms"])?;
                let key: TranscriptKey = parse(args, "key")?;
                let lines: Vec<String> = parse(args, "lines")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                to_outcome(host.append_lines(&key, &lines, now_ms))
            }
            "read_lines" => {
                known(args, &["key"])?;
                let key: TranscriptKey = parse(args, "key")?;
                to_outcome(host.read_lines(&key))
            }
            "written_sessions" => {
                known(args, &["project"])?;
                let project: String = parse(args, "project")?;
                to_outcome(host.written_sessions(&project))
            }
            "subpaths" => {
                known(args, &["project", "id"])?;
                let project: String = parse(args, "project")?;
                let id: String = parse(args, "id")?;
                to_outcome(host.subpaths(&project, &id))
            }
            "remove_transcript" => {
                known(args, &["key"])?;
                let key: TranscriptKey = parse(args, "key")?;
                to_outcome(host.remove_transcript(&key))
            }
            "items" => {
                known(args, &["id", "limit"])?;
                let id: String = parse(args, "id")?;
                let limit: Option<u32> = parse(args, "limit")?;
                json_outcome("items", host.items(&id, limit))?
            }
            "pop_item" => {
                known(args, &["id", "now_ms"])?;
                let id: String = parse(args, "id")?;
                let now_ms: i64 = parse(args, "now_ms")?;
                json_outcome("pop_item", host.pop_item(&id, now_ms))?
            }
            _ => return Ok(None),
        }))
    };
    outcome().transpose()
}
