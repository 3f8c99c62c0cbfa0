//! Mneme for the browser. The JavaScript package (`web/js/mneme.js`) supplies a
//! storage backend whose methods return promises; this binding wraps it as the core's
//! `Storage`, so the core's orchestration awaits IndexedDB and OPFS for real. Each
//! export converts its arguments, delegates to `mneme_core::Store`, and returns JSON
//! (parsed by the package); errors reject with `{kind, message}`, the kinds being
//! `mneme_core::Error::kind`.

use std::rc::Rc;

use js_sys::{Array, Promise, Reflect, Uint8Array};
use mneme_core::compaction::{Run, Step};
use mneme_core::index::{Field, Inbound, KeyPatch, RoutePolicy};
use mneme_core::interchange::{ExportFormat, Import, Source};
use mneme_core::keys::check_key;
use mneme_core::memory::consolidate::ConsolidationPlan;
use mneme_core::memory::extract::ExtractionPlan;
use mneme_core::memory::file::LinkKind;
use mneme_core::memory::instructions::Request;
use mneme_core::memory::memory_md::Caps;
use mneme_core::memory::store::{Change, Filter, NewMemory, Scope};
use mneme_core::retention::Retention;
use mneme_core::{
    Applied, CompactionIds, Error, Injection, KeyInfo, Limits, Mode, NewEntry, Plan, Prices, Provider, Role, Settings, Storage,
    StorageError, Store, Turn,
};
use serde::Serialize;
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

/// A store over a JavaScript backend. Methods return promises of JSON text.
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

fn to_json(value: &impl Serialize) -> Result<JsValue, JsValue> {
    serde_json::to_string(value).map(JsValue::from).map_err(|e| rejection(Error::InvalidArgument(e.to_string())))
}

fn from_json<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> Result<T, JsValue> {
    serde_json::from_str(json).map_err(|e| rejection(Error::InvalidArgument(format!("{what}: {e}"))))
}

/// Runs `work` on the store and resolves with its result as JSON.
fn spawn<T: Serialize, F: Future<Output = Result<T, Error>> + 'static>(
    store: &Rc<Store<JsStorage>>,
    work: impl FnOnce(Rc<Store<JsStorage>>) -> F,
) -> Promise {
    let future = work(Rc::clone(store));
    future_to_promise(async move { to_json(&future.await.map_err(rejection)?) })
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

    pub fn append(&self, id: String, uuid: String, now_ms: f64, role: String, text: String, cwd: String) -> Promise {
        let role = match Role::parse(&role) {
            Ok(role) => role,
            Err(e) => return Promise::reject(&rejection(e)),
        };
        let entry = NewEntry { uuid, now_ms: now_ms as i64, role, text, cwd };
        spawn(&self.store, |store| async move { store.append(&id, entry).await })
    }

    /// `turn` is JSON (`mneme_core::Turn`: `{uuid, now_ms, cwd, provider, messages, parent}`).
    #[wasm_bindgen(js_name = appendTurn)]
    pub fn append_turn(&self, id: String, turn: String) -> Result<Promise, JsValue> {
        let turn: Turn = from_json("turn", &turn)?;
        Ok(spawn(&self.store, |store| async move { store.append_turn(&id, turn).await }))
    }

    pub fn tombstone(&self, id: String, uuid: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.tombstone(&id, &uuid, now_ms as i64).await })
    }

    pub fn load(&self, id: String) -> Promise {
        spawn(&self.store, |store| async move { store.load(&id).await })
    }

    pub fn context(&self, id: String) -> Promise {
        spawn(&self.store, |store| async move { store.context(&id).await })
    }

    /// `provider` is `anthropic` or `openai`; `model` the model the request goes to;
    /// `injections` JSON (`[{role, place, text}]`).
    #[wasm_bindgen(js_name = providerContext)]
    pub fn provider_context(&self, id: String, provider: String, model: Option<String>, injections: String) -> Result<Promise, JsValue> {
        let provider: Provider = from_json("provider", &serde_json::Value::String(provider).to_string())?;
        let injections: Vec<Injection> = from_json("injections", &injections)?;
        Ok(spawn(&self.store, |store| async move { store.provider_context(&id, provider, model.as_deref(), &injections).await }))
    }

    pub fn branches(&self, id: String) -> Promise {
        spawn(&self.store, |store| async move { store.branches(&id).await })
    }

    /// `prices` is JSON (`{input, output, cache_read, cache_creation}` per million
    /// tokens) or empty for none.
    pub fn usage(&self, id: String, prices: String) -> Result<Promise, JsValue> {
        let prices: Option<Prices> = if prices.is_empty() { None } else { Some(from_json("prices", &prices)?) };
        Ok(spawn(&self.store, |store| async move { store.usage(&id, prices.as_ref()).await }))
    }

    pub fn fork(&self, id: String, from: Option<String>, new_id: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.fork(&id, from.as_deref(), &new_id, now_ms as i64).await })
    }

    /// `policy` is JSON (`mneme_core::retention::Retention`; fields left out keep their defaults).
    pub fn gc(&self, policy: String, now_ms: f64) -> Result<Promise, JsValue> {
        let policy: Retention = from_json("policy", &policy)?;
        Ok(spawn(&self.store, |store| async move { store.gc(&policy, now_ms as i64).await }))
    }

    pub fn archive(&self, id: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.archive(&id, now_ms as i64).await })
    }

    pub fn archived(&self) -> Promise {
        spawn(&self.store, |store| async move { store.archived().await })
    }

    pub fn restore(&self, id: String) -> Promise {
        spawn(&self.store, |store| async move { store.restore(&id).await })
    }

    pub fn check(&self, id: String) -> Promise {
        spawn(&self.store, |store| async move { store.check(&id).await })
    }

    /// `source` is `claude`, `pi`, `codex`, `gemini` or `openai`, or none to tell from
    /// the content; `id` and `cwd` none for the transcript's own.
    #[wasm_bindgen(js_name = importSession)]
    #[allow(clippy::too_many_arguments)]
    pub fn import_session(
        &self,
        data: Vec<u8>,
        source: Option<String>,
        id: Option<String>,
        cwd: Option<String>,
        origin: String,
        uuid: String,
        now_ms: f64,
    ) -> Promise {
        let source = match source.as_deref().map(Source::parse).transpose() {
            Ok(source) => source,
            Err(e) => return Promise::reject(&rejection(e)),
        };
        let request = Import { data, source, id, cwd, origin, uuid, now_ms: now_ms as i64 };
        spawn(&self.store, |store| async move { store.import_session(&request).await })
    }

    /// Resolves with `{format, message_count, verbatim, data}`, `data` a `Uint8Array` (the
    /// bytes as they are, not a JSON array of numbers).
    #[wasm_bindgen(js_name = exportSession)]
    pub fn export_session(&self, id: String, format: String, uuid: String) -> Promise {
        let format = match ExportFormat::parse(&format) {
            Ok(format) => format,
            Err(e) => return Promise::reject(&rejection(e)),
        };
        let store = Rc::clone(&self.store);
        future_to_promise(async move {
            let exported = store.export_session(&id, format, &uuid).await.map_err(rejection)?;
            let object = js_sys::Object::new();
            let _ = Reflect::set(&object, &"format".into(), &exported.format.as_str().into());
            let _ = Reflect::set(&object, &"message_count".into(), &exported.message_count.into());
            let _ = Reflect::set(&object, &"verbatim".into(), &exported.verbatim.into());
            let _ = Reflect::set(&object, &"data".into(), &Uint8Array::from(exported.data.as_slice()));
            Ok(object.into())
        })
    }

    pub fn subagents(&self, id: String) -> Promise {
        spawn(&self.store, |store| async move { store.subagents(&id).await })
    }

    pub fn remove(&self, id: String) -> Promise {
        spawn(&self.store, |store| async move { store.remove(&id).await })
    }

    pub fn repair(&self, id: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.repair(&id, now_ms as i64).await })
    }

    pub fn list(&self) -> Promise {
        spawn(&self.store, |store| async move { store.list().await })
    }

    /// `since_ms` and `until_ms`: the time window (see `mneme_core::Window`), either end open.
    pub fn search(&self, query: String, limit: u32, project: Option<String>, since_ms: Option<f64>, until_ms: Option<f64>) -> Promise {
        let window = window(since_ms, until_ms);
        spawn(&self.store, |store| async move { store.search(&query, limit as usize, project.as_deref(), window).await })
    }

    pub fn reopen(&self, id: String) {
        self.store.reopen(&id);
    }

    #[wasm_bindgen(js_name = setRedaction)]
    pub fn set_redaction(&self, kinds: Vec<String>) -> Result<(), JsValue> {
        let redaction = mneme_core::redact::Redaction::named(&kinds).map_err(rejection)?;
        self.store.set_redaction(redaction);
        Ok(())
    }

    pub fn hold(&self, id: String) -> Promise {
        spawn(&self.store, |store| async move { store.hold(&id).await })
    }

    pub fn release(&self, id: String) -> Promise {
        spawn(&self.store, |store| async move { store.release(&id).await })
    }

    #[wasm_bindgen(js_name = releaseAll)]
    pub fn release_all(&self) -> Promise {
        spawn(&self.store, |store| async move { store.release_all().await })
    }

    /// `settings` is JSON (`mneme_core::Settings`; missing fields take the defaults),
    /// `mode` one of `auto`, `manual`, `overflow`.
    #[wasm_bindgen(js_name = planCompaction)]
    pub fn plan_compaction(&self, id: String, settings: String, mode: String) -> Result<Promise, JsValue> {
        let settings: Settings = from_json("compaction settings", &settings)?;
        let mode = Mode::parse(&mode).map_err(rejection)?;
        Ok(spawn(&self.store, |store| async move { store.plan_compaction(&id, &settings, mode).await }))
    }

    #[wasm_bindgen(js_name = summarizeOffline)]
    pub fn summarize_offline(&self, id: String, plan: String) -> Result<Promise, JsValue> {
        let plan: Plan = from_json("plan", &plan)?;
        Ok(spawn(&self.store, |store| async move { store.summarize_offline(&id, &plan).await }))
    }

    #[wasm_bindgen(js_name = applyCompaction)]
    pub fn apply_compaction(
        &self,
        id: String,
        plan: String,
        summary: String,
        boundary: String,
        summary_uuid: String,
        now_ms: f64,
    ) -> Result<Promise, JsValue> {
        let plan: Plan = from_json("plan", &plan)?;
        let ids = CompactionIds { boundary, summary: summary_uuid };
        Ok(spawn(&self.store, |store| async move { store.apply_compaction(&id, &plan, &summary, &ids, now_ms as i64).await }))
    }

    /// One compaction through the core's driver (`mneme_core::compaction::Run`), the
    /// sequence the CLI steps through too: plan; have `summarize(prompt, maxTokens)`
    /// (a promise of text) answer each request, or without it the offline summary;
    /// apply; or record the failure (a rejection *or* an empty answer), which counts
    /// toward the circuit breaker. Resolves with `{plan, applied, failure}`.
    #[allow(clippy::too_many_arguments)]
    pub fn compact(
        &self,
        id: String,
        settings: String,
        mode: String,
        summarize: Option<js_sys::Function>,
        boundary: String,
        summary_uuid: String,
        now_ms: f64,
    ) -> Result<Promise, JsValue> {
        let settings: Settings = from_json("compaction settings", &settings)?;
        let mode = Mode::parse(&mode).map_err(rejection)?;
        let ids = CompactionIds { boundary, summary: summary_uuid };
        let now = now_ms as i64;
        Ok(spawn(&self.store, |store| async move {
            let plan = store.plan_compaction(&id, &settings, mode).await?;
            let mut run = Run::new(plan.clone());
            let mut applied = None;
            loop {
                match run.next() {
                    Step::Summarize { prompt, max_tokens } => match &summarize {
                        Some(summarize) => run.handle(ask(summarize, &prompt, max_tokens).await),
                        None => run.handle_whole(store.summarize_offline(&id, &plan).await.map_err(|e| e.to_string())),
                    },
                    Step::Apply { summary } => {
                        applied = Some(store.apply_compaction(&id, &plan, &summary, &ids, now).await?);
                        run.finish();
                    }
                    Step::RecordFailure { reason } => {
                        store.record_compaction_failure(&id, &reason, now).await?;
                        run.finish();
                    }
                    Step::Done => break,
                }
            }
            Ok(Compaction { plan, applied, failure: run.failure().map(str::to_owned) })
        }))
    }

    #[wasm_bindgen(js_name = recordCompactionFailure)]
    pub fn record_compaction_failure(&self, id: String, reason: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.record_compaction_failure(&id, &reason, now_ms as i64).await })
    }

    #[wasm_bindgen(js_name = memoryFlushGate)]
    pub fn memory_flush_gate(&self, id: String, settings: String) -> Result<Promise, JsValue> {
        let settings = from_json("flush settings", &settings)?;
        Ok(spawn(&self.store, |store| async move { store.memory_flush_gate(&id, &settings).await }))
    }

    #[wasm_bindgen(js_name = recordMemoryFlush)]
    pub fn record_memory_flush(&self, id: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.record_memory_flush(&id, now_ms as i64).await })
    }

    #[wasm_bindgen(js_name = extractionGate)]
    pub fn extraction_gate(&self, id: String, settings: String) -> Result<Promise, JsValue> {
        let settings = from_json("extraction settings", &settings)?;
        Ok(spawn(&self.store, |store| async move { store.extraction_gate(&id, &settings).await }))
    }

    #[wasm_bindgen(js_name = recordExtraction)]
    pub fn record_extraction(&self, id: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.record_extraction(&id, now_ms as i64).await })
    }

    #[wasm_bindgen(js_name = resetGate)]
    pub fn reset_gate(&self, id: String, now_ms: f64, policy: String) -> Result<Promise, JsValue> {
        let policy = from_json("reset policy", &policy)?;
        Ok(spawn(&self.store, |store| async move { store.reset_gate(&id, now_ms as i64, &policy).await }))
    }

    #[wasm_bindgen(js_name = dreamGate)]
    pub fn dream_gate(&self, now_ms: f64, settings: String) -> Result<Promise, JsValue> {
        let settings = from_json("dream settings", &settings)?;
        Ok(spawn(&self.store, |store| async move { store.dream_gate(now_ms as i64, &settings).await }))
    }

    #[wasm_bindgen(js_name = dreamAcquire)]
    pub fn dream_acquire(&self, now_ms: f64, holder: String, settings: String) -> Result<Promise, JsValue> {
        let settings = from_json("dream settings", &settings)?;
        Ok(spawn(&self.store, |store| async move { store.dream_acquire(now_ms as i64, &holder, &settings).await }))
    }

    #[wasm_bindgen(js_name = dreamRelease)]
    pub fn dream_release(&self, now_ms: f64, holder: String, completed: bool) -> Promise {
        spawn(&self.store, |store| async move { store.dream_release(now_ms as i64, &holder, completed).await })
    }
}

/// Long-term memory: `project` is a project's folder name, or none for the global
/// memory; memories, changes, filters and caps are JSON (`mneme_core::memory`).
#[wasm_bindgen]
impl Engine {
    #[wasm_bindgen(js_name = memoryAdd)]
    pub fn memory_add(&self, project: Option<String>, memory: String, now_ms: f64) -> Result<Promise, JsValue> {
        let memory: NewMemory = from_json("memory", &memory)?;
        Ok(spawn(&self.store, |store| async move { store.memory_add(&Scope::of(project), memory, now_ms as i64).await }))
    }

    #[wasm_bindgen(js_name = memoryAddMany)]
    pub fn memory_add_many(&self, project: Option<String>, memories: String, now_ms: f64) -> Result<Promise, JsValue> {
        let memories: Vec<NewMemory> = from_json("memories", &memories)?;
        Ok(spawn(&self.store, |store| async move { store.memory_add_many(&Scope::of(project), memories, now_ms as i64).await }))
    }

    #[wasm_bindgen(js_name = memoryUpdate)]
    pub fn memory_update(&self, project: Option<String>, file: String, change: String, now_ms: f64) -> Result<Promise, JsValue> {
        let change: Change = from_json("change", &change)?;
        Ok(spawn(&self.store, |store| async move { store.memory_update(&Scope::of(project), &file, change, now_ms as i64).await }))
    }

    #[wasm_bindgen(js_name = memorySupersede)]
    pub fn memory_supersede(&self, project: Option<String>, file: String, memory: String, now_ms: f64) -> Result<Promise, JsValue> {
        let memory: NewMemory = from_json("memory", &memory)?;
        Ok(spawn(&self.store, |store| async move { store.memory_supersede(&Scope::of(project), &file, memory, now_ms as i64).await }))
    }

    #[wasm_bindgen(js_name = memoryForget)]
    pub fn memory_forget(&self, project: Option<String>, file: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.memory_forget(&Scope::of(project), &file, now_ms as i64).await })
    }

    /// `kind` is `relates_to`, `contradicts`, `extends` or `derived_from`.
    #[wasm_bindgen(js_name = memoryLink)]
    pub fn memory_link(&self, project: Option<String>, from: String, kind: String, to: String, now_ms: f64) -> Result<Promise, JsValue> {
        let kind = LinkKind::parse(&kind).ok_or_else(|| {
            rejection(Error::InvalidArgument(format!("link kind `{kind}` is not one of relates_to, contradicts, extends, derived_from")))
        })?;
        Ok(spawn(&self.store, |store| async move { store.memory_link(&Scope::of(project), &from, kind, &to, now_ms as i64).await }))
    }

    #[wasm_bindgen(js_name = memoryList)]
    pub fn memory_list(&self, project: Option<String>, filter: String) -> Result<Promise, JsValue> {
        let filter: Filter = from_json("filter", &filter)?;
        Ok(spawn(&self.store, |store| async move { store.memory_list(&Scope::of(project), &filter).await }))
    }

    #[wasm_bindgen(js_name = memoryShow)]
    pub fn memory_show(&self, project: Option<String>, file: String) -> Promise {
        spawn(&self.store, |store| async move { store.memory_show(&Scope::of(project), &file).await })
    }

    #[wasm_bindgen(js_name = memoryRecall)]
    pub fn memory_recall(
        &self,
        project: Option<String>,
        query: String,
        limit: u32,
        all: bool,
        since_ms: Option<f64>,
        until_ms: Option<f64>,
    ) -> Promise {
        let window = window(since_ms, until_ms);
        spawn(&self.store, |store| async move { store.memory_recall(&Scope::of(project), &query, limit as usize, all, window).await })
    }

    #[wasm_bindgen(js_name = memoryLoad)]
    pub fn memory_load(&self, project: Option<String>, caps: String) -> Result<Promise, JsValue> {
        let caps: Caps = from_json("caps", &caps)?;
        Ok(spawn(&self.store, |store| async move { store.memory_load(&Scope::of(project), caps).await }))
    }

    #[wasm_bindgen(js_name = memoryReindex)]
    pub fn memory_reindex(&self, project: Option<String>) -> Promise {
        spawn(&self.store, |store| async move { store.memory_reindex(&Scope::of(project)).await })
    }

    #[wasm_bindgen(js_name = memoryUsed)]
    pub fn memory_used(&self, project: Option<String>, files: Vec<String>, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.memory_used(&Scope::of(project), &files, now_ms as i64).await })
    }

    #[wasm_bindgen(js_name = setEmbeddings)]
    pub fn set_embeddings(&self, table: Option<Vec<u8>>) -> Result<JsValue, JsValue> {
        let info = self.store.set_embeddings(table.as_deref()).map_err(rejection)?;
        to_json(&info)
    }

    #[wasm_bindgen(js_name = planExtraction)]
    pub fn plan_extraction(&self, project: Option<String>, id: String) -> Promise {
        spawn(&self.store, |store| async move { store.plan_extraction(&Scope::of(project), &id).await })
    }

    /// `plan` is JSON (`mneme_core::memory::extract::ExtractionPlan`).
    #[wasm_bindgen(js_name = applyExtraction)]
    pub fn apply_extraction(&self, project: Option<String>, plan: String, answer: String, now_ms: f64) -> Result<Promise, JsValue> {
        let plan: ExtractionPlan = from_json("plan", &plan)?;
        Ok(spawn(&self.store, |store| async move { store.apply_extraction(&Scope::of(project), &plan, &answer, now_ms as i64).await }))
    }

    #[wasm_bindgen(js_name = recordExtractionFailure)]
    pub fn record_extraction_failure(&self, id: String, reason: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.record_extraction_failure(&id, &reason, now_ms as i64).await })
    }

    #[wasm_bindgen(js_name = planConsolidation)]
    pub fn plan_consolidation(&self, project: Option<String>, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.plan_consolidation(&Scope::of(project), now_ms as i64).await })
    }

    /// `plan` is JSON (`mneme_core::memory::consolidate::ConsolidationPlan`).
    #[wasm_bindgen(js_name = applyConsolidation)]
    pub fn apply_consolidation(
        &self,
        project: Option<String>,
        plan: String,
        answer: String,
        now_ms: f64,
        dry_run: bool,
    ) -> Result<Promise, JsValue> {
        let plan: ConsolidationPlan = from_json("plan", &plan)?;
        Ok(spawn(&self.store, |store| async move {
            store.apply_consolidation(&Scope::of(project), &plan, &answer, now_ms as i64, dry_run).await
        }))
    }

    #[wasm_bindgen(js_name = rollbackConsolidation)]
    pub fn rollback_consolidation(&self, project: Option<String>, id: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.rollback_consolidation(&Scope::of(project), &id, now_ms as i64).await })
    }

    /// `request` is JSON (`mneme_core::memory::instructions::Request`).
    #[wasm_bindgen(js_name = instructions)]
    pub fn instructions(&self, request: String) -> Result<Promise, JsValue> {
        let request: Request = from_json("request", &request)?;
        Ok(spawn(&self.store, |store| async move { store.instructions(&request).await }))
    }

    #[wasm_bindgen(js_name = writeFile)]
    pub fn write_file(&self, path: String, text: String) -> Promise {
        spawn(&self.store, |store| async move { store.write_file(&path, &text).await })
    }

    #[wasm_bindgen(js_name = readFile)]
    pub fn read_file(&self, path: String) -> Promise {
        spawn(&self.store, |store| async move { store.read_file(&path).await })
    }

    #[wasm_bindgen(js_name = removeFile)]
    pub fn remove_file(&self, path: String) -> Promise {
        spawn(&self.store, |store| async move { store.remove_file(&path).await })
    }

    /// `inbound` and `policy` are JSON (`mneme_core::index::Inbound`, `RoutePolicy`; a
    /// policy's fields left out keep their defaults).
    pub fn resolve(&self, inbound: String, policy: String, now_ms: f64, new_session_id: String) -> Result<Promise, JsValue> {
        let inbound: Inbound = from_json("inbound", &inbound)?;
        let policy: RoutePolicy = from_json("policy", &policy)?;
        Ok(spawn(&self.store, |store| async move { store.resolve(&inbound, &policy, now_ms as i64, &new_session_id).await }))
    }

    #[wasm_bindgen(js_name = resetKey)]
    pub fn reset_key(&self, key: String, new_session_id: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.reset_key(&key, &new_session_id, now_ms as i64).await })
    }

    /// `patch` is JSON (`mneme_core::index::KeyPatch`).
    #[wasm_bindgen(js_name = updateKey)]
    pub fn update_key(&self, key: String, patch: String) -> Result<Promise, JsValue> {
        let patch: KeyPatch = from_json("patch", &patch)?;
        Ok(spawn(&self.store, |store| async move { store.update_key(&key, &patch).await }))
    }

    #[wasm_bindgen(js_name = removeKey)]
    pub fn remove_key(&self, key: String) -> Promise {
        spawn(&self.store, |store| async move { store.remove_key(&key).await })
    }

    pub fn key(&self, key: String) -> Promise {
        spawn(&self.store, |store| async move { store.key(&key).await })
    }

    /// `filter` is JSON: `[{name, value}]`.
    pub fn keys(&self, filter: String) -> Result<Promise, JsValue> {
        let filter: Vec<Field> = from_json("filter", &filter)?;
        Ok(spawn(&self.store, |store| async move { store.keys(&filter).await }))
    }

    /// Resolves with `{imported, existing, refused}` (JSON).
    #[wasm_bindgen(js_name = importOpenclawKeys)]
    pub fn import_openclaw_keys(&self, data: Vec<u8>) -> Promise {
        spawn(&self.store, |store| async move { store.import_openclaw_keys(&data).await })
    }

    /// Resolves with the `sessions.json` bytes as a `Uint8Array`.
    #[wasm_bindgen(js_name = exportOpenclawKeys)]
    pub fn export_openclaw_keys(&self) -> Promise {
        let store = Rc::clone(&self.store);
        future_to_promise(async move {
            let data = store.export_openclaw_keys().await.map_err(rejection)?;
            Ok(Uint8Array::from(data.as_slice()).into())
        })
    }

    /// Resolves with the newest crab session of `agent` with `sender` (`null` if none).
    #[wasm_bindgen(js_name = crabLatest)]
    pub fn crab_latest(&self, project: Option<String>, agent: String, sender: String) -> Promise {
        spawn(&self.store, |store| async move { store.crab_latest(project.as_deref(), &agent, &sender).await })
    }

    #[wasm_bindgen(js_name = crabStart)]
    pub fn crab_start(&self, project: Option<String>, agent: String, sender: String, created_by: String, now_ms: f64) -> Promise {
        spawn(&self.store, |store| async move { store.crab_start(project.as_deref(), &agent, &sender, &created_by, now_ms as i64).await })
    }

    #[wasm_bindgen(js_name = crabSession)]
    pub fn crab_session(&self, id: String) -> Promise {
        spawn(&self.store, |store| async move { store.crab_session(&id).await })
    }

    #[wasm_bindgen(js_name = crabSetTitle)]
    pub fn crab_set_title(&self, id: String, title: String) -> Promise {
        spawn(&self.store, |store| async move { store.crab_set_title(&id, &title).await })
    }

    #[wasm_bindgen(js_name = crabAddUptime)]
    pub fn crab_add_uptime(&self, id: String, secs: f64) -> Promise {
        spawn(&self.store, |store| async move { store.crab_add_uptime(&id, secs as u64).await })
    }

    /// Resolves with `{before, sessions, added, changed, dropped, keys, skipped}`.
    #[wasm_bindgen(js_name = rebuildIndex)]
    pub fn rebuild_index(&self) -> Promise {
        spawn(&self.store, |store| async move { store.rebuild_index().await })
    }

    /// Resolves with `{fire, reason}`: whether `key`'s session context holds
    /// `max_context_tokens` or more.
    #[wasm_bindgen(js_name = rolloverGate)]
    pub fn rollover_gate(&self, key: String, max_context_tokens: f64) -> Promise {
        spawn(&self.store, |store| async move { store.rollover_gate(&key, max_context_tokens as u64).await })
    }

    /// Resolves with `{entry, previous_session_id, format, boundary_uuid, tokens_before, tokens_after}`.
    pub fn rollover(
        &self,
        key: String,
        summary: String,
        boundary: String,
        summary_uuid: String,
        new_session_id: String,
        now_ms: f64,
    ) -> Promise {
        let ids = CompactionIds { boundary, summary: summary_uuid };
        spawn(&self.store, |store| async move { store.rollover(&key, &summary, &ids, &new_session_id, now_ms as i64).await })
    }

    #[wasm_bindgen(js_name = indexReport)]
    pub fn index_report(&self) -> Promise {
        spawn(&self.store, |store| async move { store.index_report().await })
    }

    #[wasm_bindgen(js_name = keyOf)]
    pub fn key_of(&self, inbound: String, policy: String) -> Result<Promise, JsValue> {
        let inbound: Inbound = from_json("inbound", &inbound)?;
        let policy: RoutePolicy = from_json("policy", &policy)?;
        Ok(spawn(&self.store, |_| async move { mneme_core::index::route::key_of(&inbound, &policy) }))
    }

    #[wasm_bindgen(js_name = parseKey)]
    pub fn parse_key(&self, key: String) -> Promise {
        spawn(&self.store, |_| async move { mneme_core::index::sessionkey::parse(&key) })
    }

    #[wasm_bindgen(js_name = consolidations)]
    pub fn consolidations(&self, project: Option<String>) -> Promise {
        spawn(&self.store, |store| async move { store.consolidations(&Scope::of(project)).await })
    }
}

/// A time window from JavaScript's numbers (milliseconds, checked whole by the package).
fn window(since_ms: Option<f64>, until_ms: Option<f64>) -> mneme_core::Window {
    mneme_core::Window { since_ms: since_ms.map(|ms| ms as i64), until_ms: until_ms.map(|ms| ms as i64) }
}

/// What [`Engine::compact`] did.
#[derive(Serialize)]
struct Compaction {
    plan: Plan,
    applied: Option<Applied>,
    failure: Option<String>,
}

/// The summariser's answer to one request: the text its promise resolves with, or
/// why it failed.
async fn ask(summarize: &js_sys::Function, prompt: &str, max_tokens: u64) -> Result<String, String> {
    let reason = |error: JsValue| {
        Reflect::get(&error, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
            .or_else(|| error.as_string())
            .unwrap_or_else(|| "the summariser failed".to_owned())
    };
    let returned = summarize.call2(&JsValue::NULL, &prompt.into(), &(max_tokens as f64).into()).map_err(reason)?;
    let answer = JsFuture::from(Promise::resolve(&returned)).await.map_err(reason)?;
    answer.as_string().ok_or_else(|| "the summariser did not resolve with text".to_owned())
}

/// The load report and findings of a transcript given as bytes (a file picked by the user).
#[wasm_bindgen(js_name = checkBytes)]
pub fn check_bytes(data: &[u8]) -> Result<JsValue, JsValue> {
    to_json(&mneme_core::check_bytes(data))
}

/// Runs the storage contract (`mneme_core::storage::contract`) on two handles `a`
/// and `b` of one fresh, empty backend; resolves with the JSON list of what broke it.
#[wasm_bindgen(js_name = storageContract)]
pub fn storage_contract(a: Backend, b: Backend) -> Promise {
    future_to_promise(async move {
        let failures = mneme_core::storage::contract::run(&JsStorage(a), &JsStorage(b)).await;
        to_json(&failures)
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
