//! Mneme for the browser. The JavaScript package (`web/js/mneme.js`) supplies a
//! storage backend whose methods return promises; this binding wraps it as the core's
//! `Storage`, so the core's orchestration awaits IndexedDB and OPFS for real. The
//! package's API is the one every JavaScript package shares (`js/api.js`); it calls
//! each operation by its WIT name through [`Engine::call`], with mneme-core's JSON, and
//! gets mneme-core's JSON back. Errors reject with `{kind, message, details}`, the kinds
//! being `mneme_core::Error::kind`.

use std::rc::Rc;

use js_sys::{Array, Promise, Reflect, Uint8Array};
use mneme_core::compaction::{Run, Step};
use mneme_core::interchange::{Exported, Import};
use mneme_core::keys::check_key;
use mneme_core::memory::store::{EmbeddingPlan, Near, Scope};
use mneme_core::{Error, KeyInfo, Limits, Storage, StorageError, Store};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise};

#[wasm_bindgen]
extern "C" {
    /// A storage backend from the JavaScript package: every method returns a promise
    /// and rejects with an object carrying a `kind` (`not-found`, `quota-exceeded`, …).
    pub type Backend;

    #[wasm_bindgen(method, catch)]
    fn list(this: &Backend, prefix: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn read(this: &Backend, key: &str, offset: f64, len: Option<f64>) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn append(this: &Backend, key: &str, data: Uint8Array) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn replace(this: &Backend, key: &str, data: Uint8Array, expected_size: Option<f64>) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn truncate(this: &Backend, key: &str, len: f64, expected_size: f64) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn remove(this: &Backend, key: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn rename(this: &Backend, from: &str, to: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn lock(this: &Backend, name: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn unlock(this: &Backend, name: &str) -> Result<Promise, JsValue>;
}

/// The backend as the core's `Storage`.
struct JsStorage(Backend);

async fn settle(key: &str, call: Result<Promise, JsValue>) -> Result<JsValue, StorageError> {
    let promise = call.map_err(|e| storage_error(key, e))?;
    JsFuture::from(promise).await.map_err(|e| storage_error(key, e))
}

/// A rejected backend promise as a `StorageError`, by its `kind`.
fn storage_error(key: &str, error: JsValue) -> StorageError {
    let field = |name: &str| Reflect::get(&error, &name.into()).ok().and_then(|v| v.as_string());
    let key = field("key").unwrap_or_else(|| key.to_owned());
    let message = field("message").or_else(|| error.as_string()).unwrap_or_else(|| "the storage backend failed".to_owned());
    StorageError::from_kind(field("kind").as_deref().unwrap_or("io"), key, message)
}

fn as_u64(value: &JsValue) -> u64 {
    value.as_f64().unwrap_or(0.0) as u64
}

impl Storage for JsStorage {
    async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        let listing = settle(prefix, self.0.list(prefix)).await?;
        let items = Array::from(&listing);
        Ok(items
            .iter()
            .map(|item| KeyInfo {
                key: Reflect::get(&item, &"key".into()).ok().and_then(|k| k.as_string()).unwrap_or_default(),
                size: Reflect::get(&item, &"size".into()).map(|s| as_u64(&s)).unwrap_or(0),
            })
            .collect())
    }
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        check_key(key)?;
        let bytes = settle(key, self.0.read(key, offset as f64, len.map(|l| l as f64))).await?;
        Ok(Uint8Array::new(&bytes).to_vec())
    }
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
        check_key(key)?;
        // A copy the backend owns: a view into wasm memory would be detached if the
        // memory grows while the backend awaits.
        settle(key, self.0.append(key, Uint8Array::from(data))).await.map(|size| as_u64(&size))
    }
    async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
        check_key(key)?;
        settle(key, self.0.replace(key, Uint8Array::from(data), expected_size.map(|s| s as f64))).await.map(drop)
    }
    async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
        check_key(key)?;
        settle(key, self.0.truncate(key, len as f64, expected_size as f64)).await.map(drop)
    }
    async fn remove(&self, key: &str) -> Result<(), StorageError> {
        check_key(key)?;
        settle(key, self.0.remove(key)).await.map(drop)
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), StorageError> {
        check_key(from)?;
        check_key(to)?;
        settle(from, self.0.rename(from, to)).await.map(drop)
    }
    async fn lock(&self, name: &str) -> Result<(), StorageError> {
        check_key(name)?;
        settle(name, self.0.lock(name)).await.map(drop)
    }
    async fn unlock(&self, name: &str) -> Result<(), StorageError> {
        settle(name, self.0.unlock(name)).await.map(drop)
    }
}

/// A store over a JavaScript backend.
#[wasm_bindgen]
pub struct Engine {
    store: Rc<Store<JsStorage>>,
}

/// The rejection value: `{kind, message, details}` (`details`: the error's fields, as JSON).
fn rejection(error: Error) -> JsValue {
    let object = js_sys::Object::new();
    let _ = Reflect::set(&object, &"kind".into(), &error.kind().into());
    let _ = Reflect::set(&object, &"message".into(), &error.to_string().into());
    let _ = Reflect::set(&object, &"details".into(), &error.details().into());
    object.into()
}

fn to_json(value: &impl Serialize) -> Result<JsValue, Error> {
    serde_json::to_string(value).map(JsValue::from).map_err(|e| Error::InvalidArgument(e.to_string()))
}

fn from_json<T: DeserializeOwned>(what: &str, json: &str) -> Result<T, JsValue> {
    serde_json::from_str(json).map_err(|e| rejection(Error::InvalidArgument(format!("{what}: {e}"))))
}

/// An operation's arguments: one JSON value per WIT parameter but the store, in order.
/// The bytes of its `data` values travel beside the JSON (a copy of megabytes
/// as an array of numbers would be slow); each stands in the JSON as its index among
/// them.
struct Args {
    values: std::vec::IntoIter<Value>,
    bytes: Vec<Option<Vec<u8>>>,
}

impl Args {
    fn new(json: &str, bytes: Vec<JsValue>) -> Result<Args, Error> {
        let values: Vec<Value> =
            serde_json::from_str(json).map_err(|e| Error::InvalidArgument(format!("the arguments are no JSON array: {e}")))?;
        let bytes = bytes.iter().map(|b| b.dyn_ref::<Uint8Array>().map(Uint8Array::to_vec)).collect();
        Ok(Args { values: values.into_iter(), bytes })
    }

    /// The next argument, named `name` in what refuses it.
    fn next<T: DeserializeOwned>(&mut self, name: &str) -> Result<T, Error> {
        let value = self.values.next().unwrap_or(Value::Null);
        serde_json::from_value(value).map_err(|e| Error::InvalidArgument(format!("{name}: {e}")))
    }

    /// The bytes a `data` value (`index` in the JSON) stands for.
    fn bytes_at(&mut self, index: Option<usize>, name: &str) -> Result<Option<Vec<u8>>, Error> {
        let Some(index) = index else { return Ok(None) };
        match self.bytes.get_mut(index).and_then(Option::take) {
            Some(bytes) => Ok(Some(bytes)),
            None => Err(Error::InvalidArgument(format!("{name} must be a Uint8Array"))),
        }
    }

    fn bytes(&mut self, name: &str) -> Result<Vec<u8>, Error> {
        let index = self.next(name)?;
        Ok(self.bytes_at(index, name)?.unwrap_or_default())
    }

    fn text(&mut self, name: &str) -> Result<String, Error> {
        self.next(name)
    }

    fn scope(&mut self) -> Result<Scope, Error> {
        self.next("scope")
    }

    fn now(&mut self) -> Result<i64, Error> {
        self.next("now_ms")
    }
}

/// `{format, message_count, verbatim, data}`, `data` a `Uint8Array`, not an array of numbers.
fn exported(exported: Exported) -> JsValue {
    let object = js_sys::Object::new();
    let _ = Reflect::set(&object, &"format".into(), &exported.format.as_str().into());
    let _ = Reflect::set(&object, &"message_count".into(), &exported.message_count.into());
    let _ = Reflect::set(&object, &"verbatim".into(), &exported.verbatim.into());
    let _ = Reflect::set(&object, &"data".into(), &Uint8Array::from(exported.data.as_slice()));
    object.into()
}

/// Runs WIT function `key` (`interface.name`, `interface.resource.method`: the keys of
/// `js/wit.js`) on `store`: a result as JSON text, or bytes as a `Uint8Array`.
async fn dispatch(store: &Store<JsStorage>, key: &str, mut a: Args) -> Result<JsValue, Error> {
    use mneme_core::{gates, index, memory, tokens};
    let a = &mut a;
    match key {
        "sessions.default-retention" => to_json(&mneme_core::retention::Retention::default()),
        "sessions.check-bytes" => to_json(&mneme_core::check_bytes(&a.bytes("data")?)),
        "sessions.project-of" => to_json(&mneme_core::keys::project_dir_name(&a.text("cwd")?)),
        "sessions.session-id-of" => to_json(&mneme_core::keys::session_id_of(&a.text("name")?)),
        "sessions.store.append" => to_json(&store.sessions().append(&a.text("id")?, a.next("entry")?).await?),
        "sessions.store.append-turn" => to_json(&store.sessions().append_turn(&a.text("id")?, a.next("turn")?).await?),
        "sessions.store.tombstone" => to_json(&store.sessions().tombstone(&a.text("id")?, &a.text("uuid")?, a.now()?).await?),
        "sessions.store.load" => to_json(&store.sessions().load(&a.text("id")?).await?),
        "sessions.store.context" => to_json(&store.sessions().context(&a.text("id")?).await?),
        "sessions.store.provider-context" => {
            let (id, provider, model, injections): (String, _, Option<String>, Vec<_>) =
                (a.text("id")?, a.next("provider")?, a.next("model")?, a.next("injections")?);
            to_json(&store.sessions().provider_context(&id, provider, model.as_deref(), &injections).await?)
        }
        "sessions.store.branches" => to_json(&store.sessions().branches(&a.text("id")?).await?),
        "sessions.store.usage" => to_json(&store.sessions().usage(&a.text("id")?, a.next::<Option<_>>("prices")?.as_ref()).await?),
        "sessions.store.fork" => {
            let (id, from, new_id): (String, Option<String>, String) = (a.text("id")?, a.next("from")?, a.text("new_id")?);
            to_json(&store.sessions().fork(&id, from.as_deref(), &new_id, a.now()?).await?)
        }
        "sessions.store.import-session" => {
            let mut request: Value = a.next("request")?;
            let Some(fields) = request.as_object_mut() else {
                return Err(Error::InvalidArgument("request must be an object".into()));
            };
            let data = fields.insert("data".into(), Value::Array(Vec::new())).unwrap_or_default();
            let mut request: Import = serde_json::from_value(request).map_err(|e| Error::InvalidArgument(format!("request: {e}")))?;
            request.data = a.bytes_at(serde_json::from_value(data).ok(), "request.data")?.unwrap_or_default();
            to_json(&store.sessions().import_session(&request).await?)
        }
        "sessions.store.export-session" => {
            let (id, format, uuid): (String, _, String) = (a.text("id")?, a.next("format")?, a.text("uuid")?);
            Ok(exported(store.sessions().export_session(&id, format, &uuid).await?))
        }
        "sessions.store.gc" => to_json(&store.sessions().gc(&a.next("policy")?, a.now()?).await?),
        "sessions.store.archive" => to_json(&store.sessions().archive(&a.text("id")?, a.now()?).await?),
        "sessions.store.archived" => to_json(&store.sessions().archived().await?),
        "sessions.store.restore" => to_json(&store.sessions().restore(&a.text("id")?).await?),
        "sessions.store.check" => to_json(&store.sessions().check(&a.text("id")?).await?),
        "sessions.store.subagents" => to_json(&store.sessions().subagents(&a.text("id")?).await?),
        "sessions.store.hold" => to_json(&store.sessions().hold(&a.text("id")?).await?),
        "sessions.store.release" => to_json(&store.sessions().release(&a.text("id")?).await?),
        "sessions.store.remove" => to_json(&store.sessions().remove(&a.text("id")?).await?),
        "sessions.store.repair" => to_json(&store.sessions().repair(&a.text("id")?, a.now()?).await?),
        "sessions.store.list" => to_json(&store.sessions().list().await?),
        "sessions.store.search" => {
            let (query, limit, project): (String, u32, Option<String>) = (a.text("query")?, a.next("limit")?, a.next("project")?);
            to_json(&store.sessions().search(&query, limit as usize, project.as_deref(), a.next("window")?).await?)
        }
        "sessions.store.append-lines" => {
            let (key, lines): (mneme_core::TranscriptKey, Vec<String>) = (a.next("key")?, a.next("lines")?);
            to_json(&store.sessions().append_lines(&key, &lines, a.now()?).await?)
        }
        "sessions.store.read-lines" => to_json(&store.sessions().read_lines(&a.next("key")?).await?),
        "sessions.store.written-sessions" => to_json(&store.sessions().written_sessions(&a.text("project")?).await?),
        "sessions.store.subpaths" => {
            let (project, id) = (a.text("project")?, a.text("id")?);
            to_json(&store.sessions().subpaths(&project, &id).await?)
        }
        "sessions.store.remove-transcript" => to_json(&store.sessions().remove_transcript(&a.next("key")?).await?),
        "sessions.store.append-items" => {
            let (id, items, cwd, uuid) = (a.text("id")?, a.text("items")?, a.text("cwd")?, a.text("uuid")?);
            to_json(&store.sessions().append_items(&id, &items, &cwd, &uuid, a.now()?).await?)
        }
        "sessions.store.items" => {
            let (id, limit): (String, Option<u32>) = (a.text("id")?, a.next("limit")?);
            to_json(&store.sessions().items(&id, limit).await?)
        }
        "sessions.store.pop-item" => to_json(&store.sessions().pop_item(&a.text("id")?, a.now()?).await?),
        "sessions.store.reopen" => {
            store.sessions().reopen(&a.text("id")?);
            to_json(&())
        }
        "sessions.store.set-redaction" => {
            store.sessions().set_redaction(&a.next::<Vec<String>>("kinds")?)?;
            to_json(&())
        }
        "compaction.context-window" => to_json(&tokens::context_window(&a.text("model")?)),
        "compaction.default-settings" => to_json(&mneme_core::Settings::default()),
        "compaction.plan-compaction" => {
            to_json(&store.compaction().plan_compaction(&a.text("id")?, &a.next("settings")?, a.next("mode")?).await?)
        }
        "compaction.summarize-offline" => to_json(&store.compaction().summarize_offline(&a.text("id")?, &a.next("plan")?).await?),
        "compaction.apply-compaction" => {
            let (id, plan, summary): (String, mneme_core::Plan, String) = (a.text("id")?, a.next("plan")?, a.text("summary")?);
            let ids: CompactionIds = a.next("ids")?;
            let ids = mneme_core::CompactionIds { boundary: ids.boundary, summary: ids.summary };
            to_json(&store.compaction().apply_compaction(&id, &plan, &summary, &ids, a.now()?).await?)
        }
        "compaction.record-compaction-failure" => {
            to_json(&store.compaction().record_compaction_failure(&a.text("id")?, &a.text("reason")?, a.now()?).await?)
        }
        "gates.silent-reply" => to_json(&gates::silent_reply(&a.text("text")?)),
        "gates.default-flush-settings" => to_json(&gates::FlushSettings::default()),
        "gates.default-extraction-settings" => to_json(&gates::ExtractionSettings::default()),
        "gates.default-dream-settings" => to_json(&gates::DreamSettings::default()),
        "gates.memory-flush-gate" => to_json(&store.gates().memory_flush_gate(&a.text("id")?, &a.next("settings")?).await?),
        "gates.record-memory-flush" => to_json(&store.gates().record_memory_flush(&a.text("id")?, a.now()?).await?),
        "gates.extraction-gate" => to_json(&store.gates().extraction_gate(&a.text("id")?, &a.next("settings")?).await?),
        "gates.record-extraction" => to_json(&store.gates().record_extraction(&a.text("id")?, a.now()?).await?),
        "gates.reset-gate" => to_json(&store.gates().reset_gate(&a.text("id")?, a.now()?, &a.next("policy")?).await?),
        "gates.dream-gate" => to_json(&store.gates().dream_gate(a.now()?, &a.next("settings")?).await?),
        "gates.dream-acquire" => to_json(&store.gates().dream_acquire(a.now()?, &a.text("holder")?, &a.next("settings")?).await?),
        "gates.dream-release" => to_json(&store.gates().dream_release(a.now()?, &a.text("holder")?, a.next("completed")?).await?),
        "index.default-route-policy" => to_json(&index::RoutePolicy::default()),
        "index.key-of" => to_json(&index::route::key_of(&a.next("inbound")?, &a.next("policy")?)?),
        "index.parse-key" => to_json(&index::sessionkey::parse(&a.text("key")?)?),
        "index.resolve" => {
            let (inbound, policy): (index::Inbound, index::RoutePolicy) = (a.next("inbound")?, a.next("policy")?);
            to_json(&store.index().resolve(&inbound, &policy, a.now()?, &a.text("new_session_id")?).await?)
        }
        "index.reset-key" => to_json(&store.index().reset_key(&a.text("key")?, &a.text("new_session_id")?, a.now()?).await?),
        "index.update-key" => to_json(&store.index().update_key(&a.text("key")?, &a.next("patch")?).await?),
        "index.remove-key" => to_json(&store.index().remove_key(&a.text("key")?).await?),
        "index.key" => to_json(&store.index().key(&a.text("key")?).await?),
        "index.keys" => to_json(&store.index().keys(&a.next::<Vec<_>>("filter")?).await?),
        "index.index-report" => to_json(&store.index().index_report().await?),
        "index.rebuild-index" => to_json(&store.index().rebuild_index().await?),
        "index.import-openclaw-keys" => to_json(&store.index().import_openclaw_keys(&a.bytes("data")?).await?),
        "index.export-openclaw-keys" => Ok(Uint8Array::from(store.index().export_openclaw_keys().await?.as_slice()).into()),
        "index.crab-latest" => {
            let (project, agent, sender): (Option<String>, String, String) = (a.next("project")?, a.text("agent")?, a.text("sender")?);
            to_json(&store.index().crab_latest(project.as_deref(), &agent, &sender).await?)
        }
        "index.crab-start" => {
            let (project, agent, sender): (Option<String>, String, String) = (a.next("project")?, a.text("agent")?, a.text("sender")?);
            to_json(&store.index().crab_start(project.as_deref(), &agent, &sender, &a.text("created_by")?, a.now()?).await?)
        }
        "index.crab-show" => to_json(&store.index().crab_show(&a.text("id")?).await?),
        "index.crab-set-title" => to_json(&store.index().crab_set_title(&a.text("id")?, &a.text("title")?).await?),
        "index.crab-add-uptime" => to_json(&store.index().crab_add_uptime(&a.text("id")?, a.next("secs")?).await?),
        "index.rollover-gate" => to_json(&store.index().rollover_gate(&a.text("key")?, a.next("max_context_tokens")?).await?),
        "index.rollover" => {
            let (key, summary, ids): (String, String, CompactionIds) = (a.text("key")?, a.text("summary")?, a.next("ids")?);
            let ids = mneme_core::CompactionIds { boundary: ids.boundary, summary: ids.summary };
            to_json(&store.index().rollover(&key, &summary, &ids, &a.text("new_session_id")?, a.now()?).await?)
        }
        "memory.default-caps" => to_json(&memory::memory_md::Caps::default()),
        "memory.memory-add" => to_json(&store.memory().memory_add(&a.scope()?, a.next("memory")?, a.now()?).await?),
        "memory.memory-add-many" => to_json(&store.memory().memory_add_many(&a.scope()?, a.next("memories")?, a.now()?).await?),
        "memory.memory-update" => to_json(&store.memory().memory_update(&a.scope()?, &a.text("file")?, a.next("change")?, a.now()?).await?),
        "memory.memory-supersede" => {
            to_json(&store.memory().memory_supersede(&a.scope()?, &a.text("file")?, a.next("replacement")?, a.now()?).await?)
        }
        "memory.memory-forget" => to_json(&store.memory().memory_forget(&a.scope()?, &a.text("file")?, a.now()?).await?),
        "memory.memory-tool" => to_json(&store.memory().memory_tool(&a.scope()?, &a.text("input")?, a.now()?).await?),
        "memory.memory-link" => {
            let (scope, from, kind, to) = (a.scope()?, a.text("from")?, a.next("kind")?, a.text("to")?);
            to_json(&store.memory().memory_link(&scope, &from, kind, &to, a.now()?).await?)
        }
        "memory.memory-list" => to_json(&store.memory().memory_list(&a.scope()?, &a.next("filter")?).await?),
        "memory.memory-show" => to_json(&store.memory().memory_show(&a.scope()?, &a.text("file")?).await?),
        "memory.memory-recall" => {
            let (scope, query, limit, all): (Scope, String, u32, bool) = (a.scope()?, a.text("query")?, a.next("limit")?, a.next("all")?);
            let (window, near): (_, Option<Near>) = (a.next("window")?, a.next("near")?);
            to_json(&store.memory().memory_recall(&scope, &query, limit as usize, all, window, near.as_ref()).await?)
        }
        "memory.plan-embedding" => {
            let (scope, model, limit): (Scope, String, u32) = (a.scope()?, a.text("model")?, a.next("limit")?);
            to_json(&store.memory().plan_embedding(&scope, &model, limit as usize).await?)
        }
        "memory.apply-embedding" => {
            let (scope, plan, vectors): (Scope, EmbeddingPlan, Vec<Vec<f32>>) = (a.scope()?, a.next("plan")?, a.next("vectors")?);
            to_json(&store.memory().apply_embedding(&scope, &plan, &vectors).await?)
        }
        "memory.memory-load" => to_json(&store.memory().memory_load(&a.scope()?, a.next("caps")?).await?),
        "memory.memory-reindex" => to_json(&store.memory().memory_reindex(&a.scope()?).await?),
        "memory.memory-used" => to_json(&store.memory().memory_used(&a.scope()?, &a.next::<Vec<String>>("files")?, a.now()?).await?),
        "memory.set-embeddings" => {
            let index = a.next("table")?;
            to_json(&store.memory().set_embeddings(a.bytes_at(index, "table")?.as_deref())?)
        }
        "memory.plan-extraction" => to_json(&store.memory().plan_extraction(&a.scope()?, &a.text("id")?).await?),
        "memory.apply-extraction" => {
            let (scope, plan, answer): (Scope, _, String) = (a.scope()?, a.next("plan")?, a.text("answer")?);
            to_json(&store.memory().apply_extraction(&scope, &plan, &answer, a.now()?).await?)
        }
        "memory.record-extraction-failure" => {
            to_json(&store.memory().record_extraction_failure(&a.text("id")?, &a.text("reason")?, a.now()?).await?)
        }
        "memory.plan-consolidation" => to_json(&store.memory().plan_consolidation(&a.scope()?, a.now()?).await?),
        "memory.apply-consolidation" => {
            let (scope, plan, answer, now): (Scope, _, String, i64) = (a.scope()?, a.next("plan")?, a.text("answer")?, a.now()?);
            to_json(&store.memory().apply_consolidation(&scope, &plan, &answer, now, a.next("dry_run")?).await?)
        }
        "memory.rollback-consolidation" => to_json(&store.memory().rollback_consolidation(&a.scope()?, &a.text("id")?, a.now()?).await?),
        "memory.consolidations" => to_json(&store.memory().consolidations(&a.scope()?).await?),
        "memory.instructions" => to_json(&store.memory().instructions(&a.next("request")?).await?),
        "memory.write-file" => to_json(&store.memory().write_file(&a.text("path")?, &a.text("text")?).await?),
        "memory.read-file" => to_json(&store.memory().read_file(&a.text("path")?).await?),
        "memory.remove-file" => to_json(&store.memory().remove_file(&a.text("path")?).await?),
        _ => Err(Error::InvalidArgument(format!("the browser package has no operation `{key}`"))),
    }
}

/// The compaction ids as mneme-core's JSON names them (`{boundary, summary}`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactionIds {
    boundary: String,
    summary: String,
}

#[wasm_bindgen]
impl Engine {
    /// A store over `backend` with part and total size limits in bytes (0: the defaults).
    #[wasm_bindgen(constructor)]
    pub fn new(backend: Backend, part_bytes: f64, total_bytes: f64) -> Engine {
        let defaults = Limits::default();
        let limit = |value: f64, default: u64| if value > 0.0 { value as u64 } else { default };
        let limits = Limits { part_bytes: limit(part_bytes, defaults.part_bytes), total_bytes: limit(total_bytes, defaults.total_bytes) };
        Engine { store: Rc::new(Store::with_limits(JsStorage(backend), limits)) }
    }

    /// Calls WIT function `key` with `args`, a JSON array of mneme-core's JSON (one per
    /// parameter but the store), and `bytes`, the `Uint8Array`s of its `data` values
    /// (each an index in the JSON). Resolves with the result as JSON text (bytes as a
    /// `Uint8Array`); rejects with `{kind, message, details}`.
    pub fn call(&self, key: String, args: String, bytes: Vec<JsValue>) -> Promise {
        let store = Rc::clone(&self.store);
        future_to_promise(async move {
            let args = Args::new(&args, bytes).map_err(rejection)?;
            dispatch(&store, &key, args).await.map_err(rejection)
        })
    }

    /// Gives back every session the store holds (its locks).
    #[wasm_bindgen(js_name = releaseAll)]
    pub fn release_all(&self) -> Promise {
        let store = Rc::clone(&self.store);
        future_to_promise(async move { to_json(&store.release_all().await.map_err(rejection)?).map_err(rejection) })
    }
}

/// The core's compaction driver over a plan; its steps as mneme-core's JSON.
#[wasm_bindgen]
pub struct CompactionRun(Run);

#[wasm_bindgen]
impl CompactionRun {
    /// `plan` is JSON (`mneme_core::Plan`).
    #[wasm_bindgen(constructor)]
    pub fn new(plan: &str) -> Result<CompactionRun, JsValue> {
        Ok(CompactionRun(Run::new(from_json("plan", plan)?)))
    }

    /// `{"summarize": {prompt, max_tokens}}`, `{"apply": summary}`, `{"record_failure": reason}` or `"done"`.
    pub fn next(&self) -> String {
        let step = match self.0.next() {
            Step::Summarize { prompt, max_tokens } => serde_json::json!({ "summarize": { "prompt": prompt, "max_tokens": max_tokens } }),
            Step::Apply { summary } => serde_json::json!({ "apply": summary }),
            Step::RecordFailure { reason } => serde_json::json!({ "record_failure": reason }),
            Step::Done => serde_json::json!("done"),
        };
        step.to_string()
    }

    /// The summariser's answer to the request `next` gave: its text, or why it failed.
    pub fn answer(&mut self, text: Option<String>, failure: Option<String>) {
        self.0.handle(text.ok_or_else(|| failure.unwrap_or_default()));
    }

    /// One answer for every request (the offline summary of the whole plan).
    #[wasm_bindgen(js_name = answerAll)]
    pub fn answer_all(&mut self, text: Option<String>, failure: Option<String>) {
        self.0.handle_whole(text.ok_or_else(|| failure.unwrap_or_default()));
    }

    pub fn finish(&mut self) {
        self.0.finish();
    }

    pub fn failure(&self) -> Option<String> {
        self.0.failure().map(str::to_owned)
    }
}

/// A working directory's project, as Claude Code names its folder.
#[wasm_bindgen(js_name = projectOf)]
pub fn project_of(cwd: &str) -> String {
    mneme_core::keys::project_dir_name(cwd)
}

/// The load report and findings of a transcript given as bytes (a file picked by the user).
#[wasm_bindgen(js_name = checkBytes)]
pub fn check_bytes(data: &[u8]) -> Result<JsValue, JsValue> {
    to_json(&mneme_core::check_bytes(data)).map_err(rejection)
}

/// Runs the storage contract (`mneme_core::storage::contract`) on two handles `a`
/// and `b` of one fresh, empty backend; resolves with the JSON list of what broke it.
#[wasm_bindgen(js_name = storageContract)]
pub fn storage_contract(a: Backend, b: Backend) -> Promise {
    future_to_promise(async move {
        let failures = mneme_core::storage::contract::run(&JsStorage(a), &JsStorage(b)).await;
        to_json(&failures).map_err(rejection)
    })
}

/// The context window of `model`, or `undefined` when the registry doesn't know it.
#[wasm_bindgen(js_name = contextWindow)]
pub fn context_window(model: &str) -> Option<f64> {
    mneme_core::tokens::context_window(model).map(|w| w as f64)
}

/// `deliver`, `hold` or `suppress` for a streamed silent-turn reply so far.
#[wasm_bindgen(js_name = silentReply)]
pub fn silent_reply(text: &str) -> String {
    match mneme_core::gates::silent_reply(text) {
        mneme_core::gates::Reply::Deliver => "deliver",
        mneme_core::gates::Reply::Hold => "hold",
        mneme_core::gates::Reply::Suppress => "suppress",
    }
    .into()
}
