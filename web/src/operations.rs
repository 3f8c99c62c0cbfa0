// Written by `cargo xtask codegen` from wit/, the `Engine` trait in core/src/engine.rs
// and the store's views; do not edit.

//! The browser binding's operations: each takes its arguments in mneme-core's JSON, in order,
//! runs the store's view of its interface and answers in JSON.

use mneme_core::compaction::{Mode, Plan, Settings};
use mneme_core::gates::{DreamSettings, ExtractionSettings, FlushSettings, ResetPolicy};
use mneme_core::index::{Field, Inbound, KeyPatch, RoutePolicy};
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
use mneme_core::{Error, Store};
use wasm_bindgen::JsValue;

use super::{Args, JsStorage, to_json};

/// Runs operation `key` (its `js/wit.js` key); `None` for a key that is no operation here.
pub(crate) async fn call(store: &Store<JsStorage>, key: &str, a: &mut Args) -> Option<Result<JsValue, Error>> {
    let result = async {
        Ok(Some(match key {
            "sessions.store.append" => {
                let id: String = a.next("id")?;
                let entry: NewEntry = a.next("entry")?;
                to_json(&store.sessions().append(&id, entry).await?)?
            }
            "sessions.store.append-turn" => {
                let id: String = a.next("id")?;
                let turn: Turn = a.next("turn")?;
                to_json(&store.sessions().append_turn(&id, turn).await?)?
            }
            "sessions.store.tombstone" => {
                let id: String = a.next("id")?;
                let uuid: String = a.next("uuid")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.sessions().tombstone(&id, &uuid, now_ms).await?)?
            }
            "sessions.store.load" => {
                let id: String = a.next("id")?;
                to_json(&store.sessions().load(&id).await?)?
            }
            "sessions.store.context" => {
                let id: String = a.next("id")?;
                to_json(&store.sessions().context(&id).await?)?
            }
            "sessions.store.provider-context" => {
                let id: String = a.next("id")?;
                let provider: Provider = a.next("provider")?;
                let model: Option<String> = a.next("model")?;
                let injections: Vec<Injection> = a.next("injections")?;
                to_json(&store.sessions().provider_context(&id, provider, model.as_deref(), &injections).await?)?
            }
            "sessions.store.branches" => {
                let id: String = a.next("id")?;
                to_json(&store.sessions().branches(&id).await?)?
            }
            "sessions.store.usage" => {
                let id: String = a.next("id")?;
                let prices: Option<Prices> = a.next("prices")?;
                to_json(&store.sessions().usage(&id, prices.as_ref()).await?)?
            }
            "sessions.store.fork" => {
                let id: String = a.next("id")?;
                let from: Option<String> = a.next("from")?;
                let to: String = a.next("to")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.sessions().fork(&id, from.as_deref(), &to, now_ms).await?)?
            }
            "sessions.store.gc" => {
                let policy: Retention = a.next("policy")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.sessions().gc(&policy, now_ms).await?)?
            }
            "sessions.store.archive" => {
                let id: String = a.next("id")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.sessions().archive(&id, now_ms).await?)?
            }
            "sessions.store.archived" => to_json(&store.sessions().archived().await?)?,
            "sessions.store.restore" => {
                let id: String = a.next("id")?;
                to_json(&store.sessions().restore(&id).await?)?
            }
            "sessions.store.check" => {
                let id: String = a.next("id")?;
                to_json(&store.sessions().check(&id).await?)?
            }
            "sessions.check-bytes" => {
                let data = a.bytes("data")?;
                to_json(&mneme_core::sessions::Sessions::<JsStorage>::check_bytes(&data))?
            }
            "sessions.project-of" => {
                let cwd: String = a.next("cwd")?;
                to_json(&mneme_core::sessions::Sessions::<JsStorage>::project_of(&cwd))?
            }
            "sessions.session-id-of" => {
                let name: String = a.next("name")?;
                to_json(&mneme_core::sessions::Sessions::<JsStorage>::session_id_of(&name))?
            }
            "sessions.store.subagents" => {
                let id: String = a.next("id")?;
                to_json(&store.sessions().subagents(&id).await?)?
            }
            "sessions.store.remove" => {
                let id: String = a.next("id")?;
                to_json(&store.sessions().remove(&id).await?)?
            }
            "sessions.store.repair" => {
                let id: String = a.next("id")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.sessions().repair(&id, now_ms).await?)?
            }
            "sessions.store.list" => to_json(&store.sessions().list().await?)?,
            "sessions.store.search" => {
                let query: String = a.next("query")?;
                let limit: usize = a.next("limit")?;
                let project: Option<String> = a.next("project")?;
                let window: Window = a.next("window")?;
                to_json(&store.sessions().search(&query, limit, project.as_deref(), window).await?)?
            }
            "sessions.store.reopen" => {
                let id: String = a.next("id")?;
                to_json(&store.sessions().reopen(&id))?
            }
            "sessions.store.set-redaction" => {
                let kinds: Vec<String> = a.next("kinds")?;
                to_json(&store.sessions().set_redaction(&kinds)?)?
            }
            "sessions.store.append-lines" => {
                let key: TranscriptKey = a.next("key")?;
                let lines: Vec<String> = a.next("lines")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.sessions().append_lines(&key, &lines, now_ms).await?)?
            }
            "sessions.store.read-lines" => {
                let key: TranscriptKey = a.next("key")?;
                to_json(&store.sessions().read_lines(&key).await?)?
            }
            "sessions.store.written-sessions" => {
                let project: String = a.next("project")?;
                to_json(&store.sessions().written_sessions(&project).await?)?
            }
            "sessions.store.subpaths" => {
                let project: String = a.next("project")?;
                let id: String = a.next("id")?;
                to_json(&store.sessions().subpaths(&project, &id).await?)?
            }
            "sessions.store.remove-transcript" => {
                let key: TranscriptKey = a.next("key")?;
                to_json(&store.sessions().remove_transcript(&key).await?)?
            }
            "sessions.store.append-items" => {
                let id: String = a.next("id")?;
                let items: String = a.next("items")?;
                let cwd: String = a.next("cwd")?;
                let uuid: String = a.next("uuid")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.sessions().append_items(&id, &items, &cwd, &uuid, now_ms).await?)?
            }
            "sessions.store.items" => {
                let id: String = a.next("id")?;
                let limit: Option<u32> = a.next("limit")?;
                to_json(&store.sessions().items(&id, limit).await?)?
            }
            "sessions.store.pop-item" => {
                let id: String = a.next("id")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.sessions().pop_item(&id, now_ms).await?)?
            }
            "sessions.store.hold" => {
                let id: String = a.next("id")?;
                to_json(&store.sessions().hold(&id).await?)?
            }
            "sessions.store.release" => {
                let id: String = a.next("id")?;
                to_json(&store.sessions().release(&id).await?)?
            }
            "compaction.plan-compaction" => {
                let id: String = a.next("id")?;
                let settings: Settings = a.next("settings")?;
                let mode: Mode = a.next("mode")?;
                to_json(&store.compaction().plan_compaction(&id, &settings, mode).await?)?
            }
            "compaction.summarize-offline" => {
                let id: String = a.next("id")?;
                let plan: Plan = a.next("plan")?;
                to_json(&store.compaction().summarize_offline(&id, &plan).await?)?
            }
            "compaction.apply-compaction" => {
                let id: String = a.next("id")?;
                let plan: Plan = a.next("plan")?;
                let summary: String = a.next("summary")?;
                let ids: CompactionIds = a.next("ids")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.compaction().apply_compaction(&id, &plan, &summary, &ids, now_ms).await?)?
            }
            "compaction.record-compaction-failure" => {
                let id: String = a.next("id")?;
                let reason: String = a.next("reason")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.compaction().record_compaction_failure(&id, &reason, now_ms).await?)?
            }
            "gates.memory-flush-gate" => {
                let id: String = a.next("id")?;
                let settings: FlushSettings = a.next("settings")?;
                to_json(&store.gates().memory_flush_gate(&id, &settings).await?)?
            }
            "gates.record-memory-flush" => {
                let id: String = a.next("id")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.gates().record_memory_flush(&id, now_ms).await?)?
            }
            "gates.extraction-gate" => {
                let id: String = a.next("id")?;
                let settings: ExtractionSettings = a.next("settings")?;
                to_json(&store.gates().extraction_gate(&id, &settings).await?)?
            }
            "gates.record-extraction" => {
                let id: String = a.next("id")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.gates().record_extraction(&id, now_ms).await?)?
            }
            "gates.reset-gate" => {
                let id: String = a.next("id")?;
                let now_ms: i64 = a.next("now_ms")?;
                let policy: ResetPolicy = a.next("policy")?;
                to_json(&store.gates().reset_gate(&id, now_ms, &policy).await?)?
            }
            "gates.dream-gate" => {
                let now_ms: i64 = a.next("now_ms")?;
                let settings: DreamSettings = a.next("settings")?;
                to_json(&store.gates().dream_gate(now_ms, &settings).await?)?
            }
            "gates.dream-acquire" => {
                let now_ms: i64 = a.next("now_ms")?;
                let holder: String = a.next("holder")?;
                let settings: DreamSettings = a.next("settings")?;
                to_json(&store.gates().dream_acquire(now_ms, &holder, &settings).await?)?
            }
            "gates.dream-release" => {
                let now_ms: i64 = a.next("now_ms")?;
                let holder: String = a.next("holder")?;
                let completed: bool = a.next("completed")?;
                to_json(&store.gates().dream_release(now_ms, &holder, completed).await?)?
            }
            "memory.memory-add" => {
                let scope: Scope = a.next("scope")?;
                let memory: NewMemory = a.next("memory")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().memory_add(&scope, memory, now_ms).await?)?
            }
            "memory.memory-add-many" => {
                let scope: Scope = a.next("scope")?;
                let memories: Vec<NewMemory> = a.next("memories")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().memory_add_many(&scope, memories, now_ms).await?)?
            }
            "memory.memory-update" => {
                let scope: Scope = a.next("scope")?;
                let file: String = a.next("file")?;
                let change: Change = a.next("change")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().memory_update(&scope, &file, change, now_ms).await?)?
            }
            "memory.memory-supersede" => {
                let scope: Scope = a.next("scope")?;
                let file: String = a.next("file")?;
                let replacement: NewMemory = a.next("replacement")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().memory_supersede(&scope, &file, replacement, now_ms).await?)?
            }
            "memory.memory-forget" => {
                let scope: Scope = a.next("scope")?;
                let file: String = a.next("file")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().memory_forget(&scope, &file, now_ms).await?)?
            }
            "memory.memory-tool" => {
                let scope: Scope = a.next("scope")?;
                let input: String = a.next("input")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().memory_tool(&scope, &input, now_ms).await?)?
            }
            "memory.memory-link" => {
                let scope: Scope = a.next("scope")?;
                let from: String = a.next("from")?;
                let kind: LinkKind = a.next("kind")?;
                let to: String = a.next("to")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().memory_link(&scope, &from, kind, &to, now_ms).await?)?
            }
            "memory.memory-list" => {
                let scope: Scope = a.next("scope")?;
                let filter: Filter = a.next("filter")?;
                to_json(&store.memory().memory_list(&scope, &filter).await?)?
            }
            "memory.memory-show" => {
                let scope: Scope = a.next("scope")?;
                let file: String = a.next("file")?;
                to_json(&store.memory().memory_show(&scope, &file).await?)?
            }
            "memory.memory-recall" => {
                let scope: Scope = a.next("scope")?;
                let query: String = a.next("query")?;
                let limit: usize = a.next("limit")?;
                let all: bool = a.next("all")?;
                let window: Window = a.next("window")?;
                let near: Option<Near> = a.next("near")?;
                to_json(&store.memory().memory_recall(&scope, &query, limit, all, window, near.as_ref()).await?)?
            }
            "memory.plan-embedding" => {
                let scope: Scope = a.next("scope")?;
                let model: String = a.next("model")?;
                let limit: usize = a.next("limit")?;
                to_json(&store.memory().plan_embedding(&scope, &model, limit).await?)?
            }
            "memory.apply-embedding" => {
                let scope: Scope = a.next("scope")?;
                let plan: EmbeddingPlan = a.next("plan")?;
                let vectors: Vec<Vec<f32>> = a.next("vectors")?;
                to_json(&store.memory().apply_embedding(&scope, &plan, &vectors).await?)?
            }
            "memory.memory-load" => {
                let scope: Scope = a.next("scope")?;
                let caps: Caps = a.next("caps")?;
                to_json(&store.memory().memory_load(&scope, caps).await?)?
            }
            "memory.memory-reindex" => {
                let scope: Scope = a.next("scope")?;
                to_json(&store.memory().memory_reindex(&scope).await?)?
            }
            "memory.memory-used" => {
                let scope: Scope = a.next("scope")?;
                let files: Vec<String> = a.next("files")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().memory_used(&scope, &files, now_ms).await?)?
            }
            "memory.set-embeddings" => {
                let table = a.next("table")?;
                let table = a.bytes_at(table, "table")?;
                to_json(&store.memory().set_embeddings(table.as_deref())?)?
            }
            "memory.plan-extraction" => {
                let scope: Scope = a.next("scope")?;
                let id: String = a.next("id")?;
                to_json(&store.memory().plan_extraction(&scope, &id).await?)?
            }
            "memory.apply-extraction" => {
                let scope: Scope = a.next("scope")?;
                let plan: ExtractionPlan = a.next("plan")?;
                let answer: String = a.next("answer")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().apply_extraction(&scope, &plan, &answer, now_ms).await?)?
            }
            "memory.record-extraction-failure" => {
                let id: String = a.next("id")?;
                let reason: String = a.next("reason")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().record_extraction_failure(&id, &reason, now_ms).await?)?
            }
            "memory.plan-consolidation" => {
                let scope: Scope = a.next("scope")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().plan_consolidation(&scope, now_ms).await?)?
            }
            "memory.apply-consolidation" => {
                let scope: Scope = a.next("scope")?;
                let plan: ConsolidationPlan = a.next("plan")?;
                let answer: String = a.next("answer")?;
                let now_ms: i64 = a.next("now_ms")?;
                let dry_run: bool = a.next("dry_run")?;
                to_json(&store.memory().apply_consolidation(&scope, &plan, &answer, now_ms, dry_run).await?)?
            }
            "memory.rollback-consolidation" => {
                let scope: Scope = a.next("scope")?;
                let id: String = a.next("id")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.memory().rollback_consolidation(&scope, &id, now_ms).await?)?
            }
            "memory.consolidations" => {
                let scope: Scope = a.next("scope")?;
                to_json(&store.memory().consolidations(&scope).await?)?
            }
            "memory.instructions" => {
                let request: Request = a.next("request")?;
                to_json(&store.memory().instructions(&request).await?)?
            }
            "memory.write-file" => {
                let path: String = a.next("path")?;
                let text: String = a.next("text")?;
                to_json(&store.memory().write_file(&path, &text).await?)?
            }
            "memory.read-file" => {
                let path: String = a.next("path")?;
                to_json(&store.memory().read_file(&path).await?)?
            }
            "memory.remove-file" => {
                let path: String = a.next("path")?;
                to_json(&store.memory().remove_file(&path).await?)?
            }
            "index.resolve" => {
                let inbound: Inbound = a.next("inbound")?;
                let policy: RoutePolicy = a.next("policy")?;
                let now_ms: i64 = a.next("now_ms")?;
                let new_session_id: String = a.next("new_session_id")?;
                to_json(&store.index().resolve(&inbound, &policy, now_ms, &new_session_id).await?)?
            }
            "index.reset-key" => {
                let key: String = a.next("key")?;
                let new_session_id: String = a.next("new_session_id")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.index().reset_key(&key, &new_session_id, now_ms).await?)?
            }
            "index.update-key" => {
                let key: String = a.next("key")?;
                let patch: KeyPatch = a.next("patch")?;
                to_json(&store.index().update_key(&key, &patch).await?)?
            }
            "index.remove-key" => {
                let key: String = a.next("key")?;
                to_json(&store.index().remove_key(&key).await?)?
            }
            "index.key" => {
                let key: String = a.next("key")?;
                to_json(&store.index().key(&key).await?)?
            }
            "index.keys" => {
                let filter: Vec<Field> = a.next("filter")?;
                to_json(&store.index().keys(&filter).await?)?
            }
            "index.index-report" => to_json(&store.index().index_report().await?)?,
            "index.import-openclaw-keys" => {
                let data = a.bytes("data")?;
                to_json(&store.index().import_openclaw_keys(&data).await?)?
            }
            "index.rebuild-index" => to_json(&store.index().rebuild_index().await?)?,
            "index.crab-latest" => {
                let project: Option<String> = a.next("project")?;
                let agent: String = a.next("agent")?;
                let sender: String = a.next("sender")?;
                to_json(&store.index().crab_latest(project.as_deref(), &agent, &sender).await?)?
            }
            "index.crab-start" => {
                let project: Option<String> = a.next("project")?;
                let agent: String = a.next("agent")?;
                let sender: String = a.next("sender")?;
                let created_by: String = a.next("created_by")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.index().crab_start(project.as_deref(), &agent, &sender, &created_by, now_ms).await?)?
            }
            "index.crab-show" => {
                let id: String = a.next("id")?;
                to_json(&store.index().crab_show(&id).await?)?
            }
            "index.crab-set-title" => {
                let id: String = a.next("id")?;
                let title: String = a.next("title")?;
                to_json(&store.index().crab_set_title(&id, &title).await?)?
            }
            "index.crab-add-uptime" => {
                let id: String = a.next("id")?;
                let secs: u64 = a.next("secs")?;
                to_json(&store.index().crab_add_uptime(&id, secs).await?)?
            }
            "index.rollover-gate" => {
                let key: String = a.next("key")?;
                let max_context_tokens: u64 = a.next("max_context_tokens")?;
                to_json(&store.index().rollover_gate(&key, max_context_tokens).await?)?
            }
            "index.rollover" => {
                let key: String = a.next("key")?;
                let summary: String = a.next("summary")?;
                let ids: CompactionIds = a.next("ids")?;
                let new_session_id: String = a.next("new_session_id")?;
                let now_ms: i64 = a.next("now_ms")?;
                to_json(&store.index().rollover(&key, &summary, &ids, &new_session_id, now_ms).await?)?
            }
            "index.key-of" => {
                let inbound: Inbound = a.next("inbound")?;
                let policy: RoutePolicy = a.next("policy")?;
                to_json(&mneme_core::index::Index::<JsStorage>::key_of(&inbound, &policy)?)?
            }
            "index.parse-key" => {
                let key: String = a.next("key")?;
                to_json(&mneme_core::index::Index::<JsStorage>::parse_key(&key)?)?
            }
            "compaction.context-window" => {
                let model: String = a.next("model")?;
                to_json(&mneme_core::sessions::Compaction::<JsStorage>::context_window(&model))?
            }
            "gates.silent-reply" => {
                let text: String = a.next("text")?;
                to_json(&mneme_core::sessions::Gates::<JsStorage>::silent_reply(&text))?
            }
            _ => return Ok(None),
        }))
    };
    result.await.transpose()
}
