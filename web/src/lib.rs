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
use mneme_core::{Error, KeyInfo, Limits, Storage, StorageError, Store};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise};

mod operations;

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
/// `js/wit.js`) on `store`: a result as JSON text, or bytes as a `Uint8Array`. The
/// operations are derived (operations.rs); what is here is the functions that are no
/// operation (the defaults) and the operations whose records carry bytes.
async fn dispatch(store: &Store<JsStorage>, key: &str, mut a: Args) -> Result<JsValue, Error> {
    use mneme_core::{gates, index, memory};
    let a = &mut a;
    if let Some(result) = operations::call(store, key, a).await {
        return result;
    }
    match key {
        "sessions.default-retention" => to_json(&mneme_core::retention::Retention::default()),
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
            let (id, to, uuid): (String, _, String) = (a.next("id")?, a.next("to")?, a.next("uuid")?);
            Ok(exported(store.sessions().export_session(&id, to, &uuid).await?))
        }
        "compaction.default-settings" => to_json(&mneme_core::Settings::default()),
        "gates.default-flush-settings" => to_json(&gates::FlushSettings::default()),
        "gates.default-extraction-settings" => to_json(&gates::ExtractionSettings::default()),
        "gates.default-dream-settings" => to_json(&gates::DreamSettings::default()),
        "index.default-route-policy" => to_json(&index::RoutePolicy::default()),
        "index.default-key-patch" => to_json(&index::KeyPatch::default()),
        "gates.default-reset-policy" => to_json(&gates::ResetPolicy::default()),
        "index.export-openclaw-keys" => Ok(Uint8Array::from(store.index().export_openclaw_keys().await?.as_slice()).into()),
        "memory.default-caps" => to_json(&memory::memory_md::Caps::default()),
        _ => Err(Error::InvalidArgument(format!("the browser package has no operation `{key}`"))),
    }
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

/// Runs the storage contract (`mneme_core::storage::contract`) on two handles `a`
/// and `b` of one fresh, empty backend; resolves with the JSON list of what broke it.
#[wasm_bindgen(js_name = storageContract)]
pub fn storage_contract(a: Backend, b: Backend) -> Promise {
    future_to_promise(async move {
        let failures = mneme_core::storage::contract::run(&JsStorage(a), &JsStorage(b)).await;
        to_json(&failures).map_err(rejection)
    })
}
