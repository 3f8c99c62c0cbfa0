//! Mneme's cross-host conformance suite.
//!
//! The vectors in `tests/vectors/*.json` are data: files to seed a store with, then
//! operations, each with the result it must give. Every host runs the same vectors
//! (the Rust hosts through [`run_all`], the browser host through its own runner over
//! the same JSON), so behaviour that differs between hosts fails here.
//!
//! Vector format (one JSON array of vectors per file):
//!
//! ```json
//! { "name": "…", "files": { "<key>": "<content>" },
//!   "limits": { "part_bytes": 300, "total_bytes": 2000 },      (optional)
//!   "steps": [ { "append": { "id", "uuid", "now_ms", "role", "text", "cwd" }, "expect": … },
//!              { "append_turn": { "id", "uuid", "now_ms", "cwd", "provider"?, "messages", "parent"?, "agent"? }, "expect": … },
//!              { "provider_context": { "id", "provider"?, "model"?, "injections"? }, "expect": … },
//!              { "branches": { "id" } | "usage": { "id", "prices"? }, "expect": … },
//!              { "hold" | "release": { "id" }, "expect": … },
//!              { "set_redaction": { "kinds" }, "expect": … },
//!              { "fork": { "id", "from"?, "to", "now_ms" }, "expect": … },
//!              { "gc": { "policy"?, "now_ms" } | "archive": { "id", "now_ms" } | "archived": {} | "restore": { "id" }, "expect": … },
//!              { "import_session": { "text", "source"?, "id"?, "cwd"?, "origin", "uuid", "now_ms" }, "expect": … },
//!              { "export_session": { "id", "to", "uuid" }, "expect": … } (its bytes as `text`),
//!              { "tombstone": { "id", "uuid", "now_ms" }, "expect": … },
//!              { "load" | "context" | "check" | "subagents" | "remove": { "id" }, "expect": … },
//!              { "repair": { "id", "now_ms" }, "expect": … },
//!              { "check_bytes": { "text" }, "expect": … },
//!              { "project_of": { "cwd" }, "expect": … },
//!              { "session_id_of": { "name" }, "expect": … },
//!              { "list": {}, "expect": … },
//!              { "search": { "query", "limit"?, "project"?, "since_ms"?, "until_ms"? }, "expect": … },
//!              { "stored_keys": { "prefix" }, "expect": … },
//!              { "append_lines": { "key", "lines", "now_ms" } | "read_lines" | "remove_transcript": { "key" }, "expect": … },
//!              { "written_sessions": { "project" } | "subpaths": { "project", "id" }, "expect": … },
//!              { "append_items": { "id", "items", "cwd", "uuid", "now_ms" } | "items": { "id", "limit"? } | "pop_item": { "id", "now_ms" }, "expect": … }
//!              (items as JSON values, not text),
//!              { "memory_add": { "project"?, "memory", "now_ms" } | "memory_add_many": { "project"?, "memories", "now_ms" }, "expect": … },
//!              { "memory_update": { "project"?, "file", "change", "now_ms" }, "expect": … },
//!              { "memory_supersede": { "project"?, "file", "memory", "now_ms" }, "expect": … },
//!              { "memory_forget": { "project"?, "file", "now_ms" } | "memory_link": { "project"?, "from", "kind", "to", "now_ms" }, "expect": … },
//!              { "memory_tool": { "project"?, "input" (the tool_use input, a JSON value), "now_ms" }, "expect": … },
//!              { "memory_list": { "project"?, "filter"? } | "memory_show": { "project"?, "file" }, "expect": … },
//!              { "memory_recall": { "project"?, "query", "limit", "all"?, "since_ms"?, "until_ms"?, "near"? } | "memory_load": { "project"?, "caps"? }, "expect": … },
//!              { "plan_embedding": { "project"?, "model", "limit" } | "apply_embedding": { "project"?, "vectors" } (the last plan's), "expect": … },
//!              { "memory_reindex": { "project"? }, "expect": … },
//!              { "memory_used": { "project"?, "files", "now_ms" } | "set_embeddings": { "table" (text, or null) }, "expect": … },
//!              { "plan_extraction": { "project"?, "id" } | "apply_extraction": { "project"?, "answer", "now_ms" }, "expect": … },
//!              { "record_extraction_failure": { "id", "reason", "now_ms" }, "expect": … },
//!              { "plan_consolidation": { "project"?, "now_ms" }, "expect": … },
//!              { "apply_consolidation": { "project"?, "answer", "now_ms", "dry_run"? }, "expect": … },
//!              { "rollback_consolidation": { "project"?, "id", "now_ms" } | "consolidations": { "project"? }, "expect": … },
//!              { "write_file": { "path", "text" } | "read_file": { "path" } | "remove_file": { "path" }, "expect": … },
//!              { "instructions": { "cwd", "home", "managed"?, "paths"? }, "expect": … },
//!              { "resolve": { "inbound", "policy"?, "now_ms", "new_session_id" } | "key_of": { "inbound", "policy"? }, "expect": … },
//!              { "reset_key": { "key", "new_session_id", "now_ms" } | "update_key": { "key", "patch" }, "expect": … },
//!              { "remove_key" | "key": { "key" } | "keys": { "filter"? } | "index_report": {}, "expect": … },
//!              { "parse_key": { "key" }, "expect": … },
//!              { "import_openclaw_keys": { "text" } | "export_openclaw_keys": {} (its bytes as text), "expect": … },
//!              { "rollover_gate": { "key", "max_context_tokens" } | "rebuild_index": {}, "expect": … },
//!              { "crab_start": { "project"?, "agent", "sender", "created_by"?, "now_ms" } | "crab_latest": { "project"?, "agent", "sender" }, "expect": … },
//!              { "crab_show": { "id" } | "crab_set_title": { "id", "title" } | "crab_add_uptime": { "id", "secs" }, "expect": … },
//!              { "rollover": { "key", "summary", "boundary", "summary_uuid", "new_session_id", "now_ms" }, "expect": … } ] }
//! ```
//!
//! Memory steps name a `project` (its folder name) or, without one, the global scope;
//! memories, changes, filters and caps are the JSON forms of the core's `NewMemory`,
//! `Change`, `Filter` and `Caps` (`tests/vectors/memory.json`).
//!
//! `keys` lists the store's keys under a prefix (through the storage itself), so
//! vectors can pin down which files an operation leaves behind.
//!
//! An expectation is `{"ok": <value>}` or `{"err": "<error kind>"}`. Objects in an
//! expected value match when every key they name matches (keys they omit are not
//! checked); arrays must have the same length; `{"$contains": "…"}` matches a string
//! containing the text (any other value by its JSON, keys sorted and without spaces),
//! `{"$approx": x}` a number within a relative 1e-12 of it.
//! Compaction steps (`plan_compaction`, then `compact`, which
//! applies the last plan with a given or the offline summary) and the gates
//! (`memory_flush_gate`, `extraction_gate`, `reset_gate`, `dream_acquire`, …) are
//! described by `tests/vectors/compaction.json`. The value shapes are the JSON forms
//! of the core's `Entry`, `Transcript` and `Listing`.

mod derived;
pub mod fuzz;

use mneme_core::index::RoutePolicy;
use mneme_core::interchange::{ExportFormat, Exported, Import, Source};
use mneme_core::memory::consolidate::ConsolidationPlan;
use mneme_core::memory::extract::ExtractionPlan;
use mneme_core::memory::store::{EmbeddingPlan, Near, Scope};
use mneme_core::{
    AgentRef, CompactionIds, Engine, EngineError, Injection, Limits, Mode, NewEntry, Plan, Provider, Role, Settings, Turn, Window,
};
use serde_json::{Value, json};

/// Lists the keys in a host's storage under a prefix, sorted.
pub type Keys = Box<dyn FnMut(&str) -> Vec<String>>;

/// A host under test: its engine (any [`Engine`]: the core over some storage, the
/// component under wasmtime, ...) and how to list the keys in its storage, which
/// vectors use to pin down the files an operation leaves behind.
pub struct Subject<H> {
    pub engine: H,
    pub keys: Keys,
}

/// The vector files, embedded so every test binary carries them.
pub const VECTOR_FILES: &[(&str, &str)] = &[
    ("sessions.json", include_str!("../vectors/sessions.json")),
    ("compaction.json", include_str!("../vectors/compaction.json")),
    ("turns.json", include_str!("../vectors/turns.json")),
    ("memory.json", include_str!("../vectors/memory.json")),
    ("index.json", include_str!("../vectors/index.json")),
    ("interchange.json", include_str!("../vectors/interchange.json")),
    ("retention.json", include_str!("../vectors/retention.json")),
];

/// Files to put in a store before a vector's steps run: `(key, bytes)`.
pub type Seed = Vec<(String, Vec<u8>)>;

/// Runs every vector on a fresh host made by `setup` from the vector's seed files and
/// limits,
/// panics with the vector, step and difference on the first mismatch, and returns
/// every step's actual outcome (`{"ok": …}` / `{"err": …}`) so hosts can also be
/// compared with each other in full.
pub fn run_all<E: EngineError, H: Engine<E>>(mut setup: impl FnMut(&Seed, Limits) -> Subject<H>) -> Vec<(String, Vec<Value>)> {
    vectors().iter().map(|(file, vector)| run_vector_in(file, vector, &mut setup)).collect()
}

/// Runs only the vector at `index` (counting across the files, in order), for hosts
/// that give each vector a process of its own; `None` past the last one.
pub fn run_vector<E: EngineError, H: Engine<E>>(
    index: usize,
    mut setup: impl FnMut(&Seed, Limits) -> Subject<H>,
) -> Option<(String, Vec<Value>)> {
    vectors().get(index).map(|(file, vector)| run_vector_in(file, vector, &mut setup))
}

/// Every vector, with the file it is in.
fn vectors() -> Vec<(&'static str, Value)> {
    let mut all = Vec::new();
    for (file, text) in VECTOR_FILES {
        let vectors: Vec<Value> = serde_json::from_str(text).unwrap_or_else(|e| panic!("{file} is not valid JSON: {e}"));
        all.extend(vectors.into_iter().map(|vector| (*file, vector)));
    }
    all
}

fn run_vector_in<E: EngineError, H: Engine<E>>(
    file: &str,
    vector: &Value,
    setup: &mut impl FnMut(&Seed, Limits) -> Subject<H>,
) -> (String, Vec<Value>) {
    let name = vector["name"].as_str().unwrap_or_else(|| panic!("a vector in {file} has no name"));
    let seed: Seed = vector["files"]
        .as_object()
        .map(|files| files.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().as_bytes().to_vec())).collect())
        .unwrap_or_default();
    let defaults = Limits::default();
    let limits = Limits {
        part_bytes: vector["limits"]["part_bytes"].as_u64().unwrap_or(defaults.part_bytes),
        total_bytes: vector["limits"]["total_bytes"].as_u64().unwrap_or(defaults.total_bytes),
    };
    let mut host = setup(&seed, limits);
    let steps = vector["steps"].as_array().unwrap_or_else(|| panic!("vector {name} has no steps"));
    let mut outcomes = Vec::new();
    let mut plans = Plans::default();
    for (index, step) in steps.iter().enumerate() {
        let outcome = run_step(&mut host, step, &mut plans).unwrap_or_else(|e| panic!("{file}: {name}: step {index}: {e}"));
        if let Err(difference) = matches(&step["expect"], &outcome, "") {
            panic!(
                "{file}: {name}: step {index} ({}) differs at {difference}\nexpected: {}\nactual:   {}",
                step_name(step),
                step["expect"],
                serde_json::to_string_pretty(&outcome).unwrap_or_default()
            );
        }
        outcomes.push(outcome);
    }
    (name.to_owned(), outcomes)
}

fn step_name(step: &Value) -> &str {
    step.as_object().and_then(|o| o.keys().find(|k| *k != "expect")).map_or("?", String::as_str)
}

/// A provider from a vector (Anthropic when it names none).
fn provider(value: &Value) -> Result<Provider, String> {
    if value.is_null() {
        return Ok(Provider::Anthropic);
    }
    serde_json::from_value(value.clone()).map_err(|e| format!("bad provider: {e}"))
}

/// Compaction settings from a vector (the defaults for what it does not name).
fn settings(args: &Value) -> Result<Settings, String> {
    if args.is_null() {
        return Ok(Settings::default());
    }
    serde_json::from_value(args.clone()).map_err(|e| format!("bad compaction settings: {e}"))
}

/// A step's time window: its `since_ms` and `until_ms`, either left out.
fn window(args: &Value) -> Result<Window, String> {
    serde_json::from_value(args.clone()).map_err(|e| format!("bad since_ms/until_ms: {e}"))
}

/// The last plans a vector made, for the steps that apply them.
#[derive(Default)]
struct Plans {
    compaction: Option<Plan>,
    embedding: Option<EmbeddingPlan>,
    extraction: Option<ExtractionPlan>,
    consolidation: Option<ConsolidationPlan>,
}

fn run_step<E: EngineError, H: Engine<E>>(subject: &mut Subject<H>, step: &Value, plans: &mut Plans) -> Result<Value, String> {
    let host = &mut subject.engine;
    let op = step_name(step);
    let args = &step[op];
    let text = |field: &str| args[field].as_str().map(str::to_owned).ok_or_else(|| format!("`{op}` needs a string `{field}`"));
    let now = || args["now_ms"].as_i64().ok_or(format!("`{op}` needs an integer `now_ms`"));
    let outcome = match op {
        "append" => {
            let role = Role::parse(&text("role")?).map_err(|e| e.to_string())?;
            let now_ms = args["now_ms"].as_i64().ok_or("`append` needs an integer `now_ms`")?;
            let entry = NewEntry { uuid: text("uuid")?, now_ms, role, text: text("text")?, cwd: text("cwd")? };
            to_outcome(host.append(&text("id")?, entry))
        }
        "append_turn" => {
            let provider = provider(&args["provider"])?;
            let parent = args["parent"].as_str().map(str::to_owned);
            let agent: Option<AgentRef> = match &args["agent"] {
                Value::Null => None,
                agent => Some(serde_json::from_value(agent.clone()).map_err(|e| format!("bad agent: {e}"))?),
            };
            let turn = Turn {
                uuid: text("uuid")?,
                now_ms: now()?,
                cwd: text("cwd")?,
                provider,
                messages: args["messages"].to_string(),
                parent,
                agent,
            };
            to_outcome(host.append_turn(&text("id")?, turn))
        }
        "provider_context" => {
            let injections: Vec<Injection> = match &args["injections"] {
                Value::Null => Vec::new(),
                list => serde_json::from_value(list.clone()).map_err(|e| format!("bad injections: {e}"))?,
            };
            let model = match &args["model"] {
                Value::Null => None,
                model => Some(model.as_str().ok_or_else(|| format!("bad model: {model} is not a string"))?),
            };
            to_outcome(host.provider_context(&text("id")?, provider(&args["provider"])?, model, &injections))
        }
        "set_redaction" => {
            let kinds: Vec<String> = serde_json::from_value(args["kinds"].clone()).map_err(|e| format!("bad kinds: {e}"))?;
            to_outcome(host.set_redaction(&kinds))
        }
        "import_session" => {
            let source = match args["source"].as_str().map(Source::parse).transpose() {
                Ok(source) => source,
                Err(e) => return Ok(json!({ "err": e.kind() })),
            };
            let request = Import {
                data: text("text")?.into_bytes(),
                source,
                id: args["id"].as_str().map(str::to_owned),
                cwd: args["cwd"].as_str().map(str::to_owned),
                origin: text("origin")?,
                uuid: text("uuid")?,
                now_ms: now()?,
            };
            to_outcome(host.import_session(&request))
        }
        "export_session" => {
            let format = match ExportFormat::parse(&text("to")?) {
                Ok(format) => format,
                Err(e) => return Ok(json!({ "err": e.kind() })),
            };
            exported_outcome(host.export_session(&text("id")?, format, &text("uuid")?))
        }
        "context" => to_outcome(host.context(&text("id")?)),
        "check_bytes" => to_outcome(host.check_bytes(text("text")?.as_bytes())),
        "project_of" => to_outcome(host.project_of(&text("cwd")?)),
        "session_id_of" => to_outcome(host.session_id_of(&text("name")?)),
        "stored_keys" => json!({ "ok": (subject.keys)(&text("prefix")?) }),
        "append_items" => to_outcome(host.append_items(&text("id")?, &args["items"].to_string(), &text("cwd")?, &text("uuid")?, now()?)),
        "plan_compaction" => {
            let mode = Mode::parse(&text("mode")?).map_err(|e| e.to_string())?;
            let plan = host.plan_compaction(&text("id")?, &settings(&args["settings"])?, mode);
            plans.compaction = plan.as_ref().ok().cloned();
            to_outcome(plan)
        }
        "compact" => {
            let plan = plans.compaction.clone().ok_or("`compact` applies the plan of an earlier `plan_compaction` step")?;
            let id = text("id")?;
            let summary = match args["summary"].as_str() {
                Some(summary) => summary.to_owned(),
                None => host.summarize_offline(&id, &plan).map_err(|e| e.to_string())?,
            };
            let ids = CompactionIds { boundary: text("boundary")?, summary: text("summary_uuid")? };
            to_outcome(host.apply_compaction(&id, &plan, &summary, &ids, now()?))
        }
        "memory_add" => to_outcome(host.memory_add(&scope(args), parse(args, "memory")?, now()?)),
        "memory_add_many" => to_outcome(host.memory_add_many(&scope(args), parse(args, "memories")?, now()?)),
        "memory_supersede" => to_outcome(host.memory_supersede(&scope(args), &text("file")?, parse(args, "memory")?, now()?)),
        "memory_list" => to_outcome(host.memory_list(&scope(args), &parse_or_default(args, "filter")?)),
        "memory_recall" => {
            let limit = args["limit"].as_u64().ok_or("`memory_recall` needs an integer `limit`")?;
            let limit = usize::try_from(limit).map_err(|e| e.to_string())?;
            let near: Option<Near> = parse(args, "near")?;
            to_outcome(host.memory_recall(
                &scope(args),
                &text("query")?,
                limit,
                args["all"].as_bool().unwrap_or(false),
                window(args)?,
                near.as_ref(),
            ))
        }
        "plan_embedding" => {
            let limit = args["limit"].as_u64().ok_or("`plan_embedding` needs an integer `limit`")?;
            let plan = host.plan_embedding(&scope(args), &text("model")?, usize::try_from(limit).map_err(|e| e.to_string())?);
            plans.embedding = plan.as_ref().ok().cloned();
            to_outcome(plan)
        }
        "apply_embedding" => {
            let plan = plans.embedding.clone().ok_or("`apply_embedding` applies the plan of an earlier `plan_embedding` step")?;
            to_outcome(host.apply_embedding(&scope(args), &plan, &parse::<Vec<Vec<f32>>>(args, "vectors")?))
        }
        "set_embeddings" => to_outcome(host.set_embeddings(args["table"].as_str().map(str::as_bytes))),
        "plan_extraction" => {
            let plan = host.plan_extraction(&scope(args), &text("id")?);
            plans.extraction = plan.as_ref().ok().cloned();
            to_outcome(plan)
        }
        "apply_extraction" => {
            let plan = plans.extraction.clone().ok_or("`apply_extraction` applies the plan of an earlier `plan_extraction` step")?;
            to_outcome(host.apply_extraction(&scope(args), &plan, &text("answer")?, now()?))
        }
        "plan_consolidation" => {
            let plan = host.plan_consolidation(&scope(args), now()?);
            plans.consolidation = plan.as_ref().ok().cloned();
            to_outcome(plan)
        }
        "apply_consolidation" => {
            let plan =
                plans.consolidation.clone().ok_or("`apply_consolidation` applies the plan of an earlier `plan_consolidation` step")?;
            let dry_run = args["dry_run"].as_bool().unwrap_or(false);
            to_outcome(host.apply_consolidation(&scope(args), &plan, &text("answer")?, now()?, dry_run))
        }
        "instructions" => {
            let request = serde_json::from_value(args.clone()).map_err(|e| format!("bad instructions request: {e}"))?;
            to_outcome(host.instructions(&request))
        }
        "resolve" => {
            let policy: RoutePolicy = parse_or_default(args, "policy")?;
            to_outcome(host.resolve(&parse(args, "inbound")?, &policy, now()?, &text("new_session_id")?))
        }
        "rollover" => {
            let ids = CompactionIds { boundary: text("boundary")?, summary: text("summary_uuid")? };
            to_outcome(host.rollover(&text("key")?, &text("summary")?, &ids, &text("new_session_id")?, now()?))
        }
        "import_openclaw_keys" => to_outcome(host.import_openclaw_keys(text("text")?.as_bytes())),
        "key_of" => {
            let policy: RoutePolicy = parse_or_default(args, "policy")?;
            to_outcome(host.key_of(&parse(args, "inbound")?, &policy))
        }
        "parse_key" => to_outcome(host.parse_key(&text("key")?)),
        // An operation whose method both APIs derive from the WIT is called by the rule it was derived by.
        other => derived::call(host, other, args).ok_or_else(|| format!("unknown operation `{other}`"))??,
    };
    Ok(outcome)
}

/// A memory step's scope: its `project`, or the global memory without one.
fn scope(args: &Value) -> Scope {
    Scope::of(args["project"].as_str().map(str::to_owned))
}

fn parse<T: serde::de::DeserializeOwned>(args: &Value, field: &str) -> Result<T, String> {
    serde_json::from_value(args[field].clone()).map_err(|e| format!("bad `{field}`: {e}"))
}

/// A step's `field` over the defaults of its type, field by field, as the APIs overlay
/// a caller's settings on the core's; left out or null, the defaults.
fn overlaid<T: serde::Serialize + serde::de::DeserializeOwned + Default>(args: &Value, field: &str) -> Result<T, String> {
    let mut value = serde_json::to_value(T::default()).map_err(|e| format!("the defaults of `{field}`: {e}"))?;
    match (&mut value, &args[field]) {
        (_, Value::Null) => {}
        (Value::Object(defaults), Value::Object(given)) => defaults.extend(given.iter().map(|(key, item)| (key.clone(), item.clone()))),
        (_, given) => return Err(format!("bad `{field}`: {given} is no object")),
    }
    serde_json::from_value(value).map_err(|e| format!("bad `{field}`: {e}"))
}

/// Refuses a step that gives an argument its operation does not take: a vector's
/// mistake, which would otherwise run with the argument's default.
fn known(args: &Value, taken: &[&str]) -> Result<(), String> {
    match args.as_object().and_then(|given| given.keys().find(|key| !taken.contains(&key.as_str()))) {
        Some(unknown) => Err(format!("the step gives `{unknown}`, which its operation does not take")),
        None => Ok(()),
    }
}

/// A step's `field`, or `default` (the method's default) when the step leaves it out.
fn parse_or<T: serde::de::DeserializeOwned>(args: &Value, field: &str, default: Value) -> Result<T, String> {
    if args[field].is_null() {
        serde_json::from_value(default).map_err(|e| format!("the default of `{field}`: {e}"))
    } else {
        parse(args, field)
    }
}

fn parse_or_default<T: serde::de::DeserializeOwned + Default>(args: &Value, field: &str) -> Result<T, String> {
    if args[field].is_null() { Ok(T::default()) } else { parse(args, field) }
}

/// An export's outcome with its bytes as `text` (every export format is UTF-8), so
/// vectors can match on what was written and hosts that hand back bytes compare equal.
fn exported_outcome<E: EngineError>(result: Result<Exported, E>) -> Value {
    match result {
        Ok(exported) => json!({ "ok": {
            "format": exported.format,
            "message_count": exported.message_count,
            "verbatim": exported.verbatim,
            "text": String::from_utf8_lossy(&exported.data),
        } }),
        Err(error) => json!({ "err": error.kind() }),
    }
}

/// Bytes as text (every export is UTF-8), as the other runners give them.
fn text_outcome<E: EngineError>(result: Result<Vec<u8>, E>) -> Value {
    match result {
        Ok(data) => json!({ "ok": String::from_utf8_lossy(&data) }),
        Err(error) => json!({ "err": error.kind() }),
    }
}

/// A step's `field`, a JSON value (`null` too, as the other runners give it), as the
/// JSON text the `Engine` takes for WIT's `json`.
fn json_text(args: &Value, field: &str) -> Result<String, String> {
    args.get(field).map(Value::to_string).ok_or_else(|| format!("the step gives no `{field}`"))
}

/// What an operation gives as WIT's `json` (or an option of it), as the value it holds.
trait JsonText {
    fn value(self) -> Result<Value, serde_json::Error>;
}

impl JsonText for String {
    fn value(self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self)
    }
}

impl JsonText for Option<String> {
    fn value(self) -> Result<Value, serde_json::Error> {
        self.map_or(Ok(Value::Null), JsonText::value)
    }
}

fn json_outcome<T: JsonText, E: EngineError>(op: &str, result: Result<T, E>) -> Result<Value, String> {
    match result {
        Ok(text) => Ok(json!({ "ok": text.value().map_err(|e| format!("`{op}` gave no JSON: {e}"))? })),
        Err(error) => Ok(json!({ "err": error.kind() })),
    }
}

fn to_outcome<T: serde::Serialize, E: EngineError>(result: Result<T, E>) -> Value {
    match result {
        Ok(value) => json!({ "ok": serde_json::to_value(value).unwrap_or(Value::Null) }),
        Err(error) => json!({ "err": error.kind() }),
    }
}

/// A value's JSON as `$contains` reads it: keys sorted, no spaces.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut fields: Vec<(&String, &Value)> = map.iter().collect();
            fields.sort_by_key(|(key, _)| *key);
            let fields: Vec<String> =
                fields.iter().map(|(key, value)| format!("{}:{}", Value::from(key.as_str()), canonical(value))).collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// Whether `actual` matches `expected` (see the crate docs); on mismatch, the path.
/// `{"$contains": "text"}` matches a string that contains `text` (any other value by
/// its JSON, keys sorted); `{"$approx": x}` a number within a relative 1e-12 of `x`
/// (costs are floating point).
pub fn matches(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    if let Some(wanted) = expected.get("$approx").and_then(Value::as_f64) {
        return match actual.as_f64() {
            Some(got) if (got - wanted).abs() <= 1e-12 * wanted.abs().max(1.0) => Ok(()),
            _ => Err(format!("{path} (expected about {wanted}, got {actual})")),
        };
    }
    if let Some(needle) = expected.get("$contains").and_then(Value::as_str) {
        let text = actual.as_str().map_or_else(|| canonical(actual), str::to_owned);
        return match actual {
            Value::Null => Err(format!("{path} (expected something containing {needle:?}, got null)")),
            _ if text.contains(needle) => Ok(()),
            _ => Err(format!("{path} (expected something containing {needle:?}, got {actual})")),
        };
    }
    match (expected, actual) {
        (Value::Object(expected), Value::Object(actual)) => {
            for (key, value) in expected {
                let inner = format!("{path}.{key}");
                matches(value, actual.get(key).unwrap_or(&Value::Null), &inner)?;
            }
            Ok(())
        }
        (Value::Array(expected), Value::Array(actual)) => {
            if expected.len() != actual.len() {
                return Err(format!("{path} (expected {} items, got {})", expected.len(), actual.len()));
            }
            expected.iter().zip(actual).enumerate().try_for_each(|(i, (e, a))| matches(e, a, &format!("{path}[{i}]")))
        }
        _ if expected == actual => Ok(()),
        _ => Err(format!("{path} (expected {expected}, got {actual})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subset_matching_checks_named_keys_and_array_lengths() {
        let actual = json!({"a": 1, "b": [{"c": 2, "d": 3}]});
        assert!(matches(&json!({"a": 1}), &actual, "").is_ok());
        assert!(matches(&json!({"b": [{"d": 3}]}), &actual, "").is_ok());
        assert_eq!(matches(&json!({"a": 2}), &actual, ""), Err(".a (expected 2, got 1)".into()));
        assert!(matches(&json!({"b": []}), &actual, "").is_err());
        assert!(matches(&json!({"missing": 1}), &actual, "").is_err());
        assert!(matches(&json!({"missing": null}), &actual, "").is_ok());
    }
}

/// Every vector on the core over [`mneme_core::InMemoryStorage`], the reference storage.
#[cfg(test)]
fn reference_outcomes() -> Vec<(String, Vec<Value>)> {
    use mneme_core::{Error, InMemoryStorage, Storage, Store, block_on};
    use std::rc::Rc;
    // The core is an engine for any error type that wraps its own: name it.
    run_all::<Error, _>(|seed, limits| {
        let storage = Rc::new(InMemoryStorage::new());
        for (key, bytes) in seed {
            block_on(storage.append(key, bytes)).expect("memory storage accepts any key");
        }
        let listed = Rc::clone(&storage);
        let keys =
            Box::new(move |prefix: &str| block_on(listed.list(prefix)).expect("memory storage lists").into_iter().map(|i| i.key).collect());
        Subject { engine: Store::with_limits(storage, limits), keys }
    })
}

#[cfg(test)]
mod reference {
    #[test]
    fn memory_storage_passes_every_vector() {
        assert!(super::reference_outcomes().len() >= 6);
    }
}
