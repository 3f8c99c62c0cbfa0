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
//!              { "tombstone": { "id", "uuid", "now_ms" }, "expect": … },
//!              { "load" | "context" | "check" | "subagents" | "remove": { "id" }, "expect": … },
//!              { "repair": { "id", "now_ms" }, "expect": … },
//!              { "check_bytes": { "text" }, "expect": … },
//!              { "list": {}, "expect": … },
//!              { "keys": { "prefix" }, "expect": … } ] }
//! ```
//!
//! `keys` lists the store's keys under a prefix (through the storage itself), so
//! vectors can pin down which files an operation leaves behind.
//!
//! An expectation is `{"ok": <value>}` or `{"err": "<error kind>"}`. Objects in an
//! expected value match when every key they name matches (keys they omit are not
//! checked); arrays must have the same length; `{"$contains": "…"}` matches a string
//! containing the text. Compaction steps (`plan_compaction`, then `compact`, which
//! applies the last plan with a given or the offline summary) and the gates
//! (`memory_flush_gate`, `extraction_gate`, `reset_gate`, `dream_acquire`, …) are
//! described by `tests/vectors/compaction.json`. The value shapes are the JSON forms
//! of the core's `Entry`, `Transcript` and `SessionInfo`.

use mneme_core::gates::{Decision, DreamSettings, ExtractionSettings, FlushSettings, ResetPolicy};
use mneme_core::{
    Applied, CheckReport, CompactionIds, Context, Entry, Error, Limits, Mode, NewEntry, Plan, RepairReport, Role, SessionInfo, Settings,
    Subagent, Transcript,
};
use serde_json::{Value, json};

/// What a host must offer to be tested: the store's operations, plus a listing of
/// the keys in its storage.
pub trait Host {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error>;
    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error>;
    fn load(&mut self, id: &str) -> Result<Transcript, Error>;
    fn context(&mut self, id: &str) -> Result<Context, Error>;
    fn check(&mut self, id: &str) -> Result<CheckReport, Error>;
    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, Error>;
    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, Error>;
    fn remove(&mut self, id: &str) -> Result<Vec<String>, Error>;
    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, Error>;
    fn list(&mut self) -> Result<Vec<SessionInfo>, Error>;
    /// Keys in the host's storage under `prefix`, sorted.
    fn keys(&mut self, prefix: &str) -> Vec<String>;
    fn plan_compaction(&mut self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, Error>;
    fn summarize_offline(&mut self, id: &str, plan: &Plan) -> Result<String, Error>;
    fn apply_compaction(&mut self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, Error>;
    fn record_compaction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error>;
    fn memory_flush_gate(&mut self, id: &str, settings: &FlushSettings) -> Result<Decision, Error>;
    fn record_memory_flush(&mut self, id: &str, now_ms: i64) -> Result<(), Error>;
    fn extraction_gate(&mut self, id: &str, settings: &ExtractionSettings) -> Result<Decision, Error>;
    fn record_extraction(&mut self, id: &str, now_ms: i64) -> Result<(), Error>;
    fn reset_gate(&mut self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, Error>;
    fn dream_gate(&mut self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, Error>;
    fn dream_acquire(&mut self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, Error>;
    fn dream_release(&mut self, now_ms: i64, holder: &str, completed: bool) -> Result<(), Error>;
}

/// The vector files, embedded so every test binary carries them.
pub const VECTOR_FILES: &[(&str, &str)] =
    &[("sessions.json", include_str!("../vectors/sessions.json")), ("compaction.json", include_str!("../vectors/compaction.json"))];

/// Files to put in a store before a vector's steps run: `(key, bytes)`.
pub type Seed = Vec<(String, Vec<u8>)>;

/// Runs every vector on a fresh host made by `setup` from the vector's seed files and
/// limits,
/// panics with the vector, step and difference on the first mismatch, and returns
/// every step's actual outcome (`{"ok": …}` / `{"err": …}`) so hosts can also be
/// compared with each other in full.
pub fn run_all<H: Host>(mut setup: impl FnMut(&Seed, Limits) -> H) -> Vec<(String, Vec<Value>)> {
    let mut results = Vec::new();
    for (file, text) in VECTOR_FILES {
        let vectors: Vec<Value> = serde_json::from_str(text).unwrap_or_else(|e| panic!("{file} is not valid JSON: {e}"));
        for vector in &vectors {
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
            let mut last_plan = None;
            for (index, step) in steps.iter().enumerate() {
                let outcome = run_step(&mut host, step, &mut last_plan).unwrap_or_else(|e| panic!("{file}: {name}: step {index}: {e}"));
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
            results.push((name.to_owned(), outcomes));
        }
    }
    results
}

fn step_name(step: &Value) -> &str {
    step.as_object().and_then(|o| o.keys().find(|k| *k != "expect")).map_or("?", String::as_str)
}

/// Compaction settings from a vector (the defaults for what it does not name).
fn settings(args: &Value) -> Result<Settings, String> {
    if args.is_null() {
        return Ok(Settings::default());
    }
    serde_json::from_value(args.clone()).map_err(|e| format!("bad compaction settings: {e}"))
}

fn run_step<H: Host>(host: &mut H, step: &Value, last_plan: &mut Option<Plan>) -> Result<Value, String> {
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
        "tombstone" => {
            let now_ms = args["now_ms"].as_i64().ok_or("`tombstone` needs an integer `now_ms`")?;
            to_outcome(host.tombstone(&text("id")?, &text("uuid")?, now_ms))
        }
        "load" => to_outcome(host.load(&text("id")?)),
        "context" => to_outcome(host.context(&text("id")?)),
        "check" => to_outcome(host.check(&text("id")?)),
        "check_bytes" => to_outcome(host.check_bytes(text("text")?.as_bytes())),
        "subagents" => to_outcome(host.subagents(&text("id")?)),
        "remove" => to_outcome(host.remove(&text("id")?)),
        "repair" => {
            let now_ms = args["now_ms"].as_i64().ok_or("`repair` needs an integer `now_ms`")?;
            to_outcome(host.repair(&text("id")?, now_ms))
        }
        "list" => to_outcome(host.list()),
        "keys" => json!({ "ok": host.keys(&text("prefix")?) }),
        "plan_compaction" => {
            let mode = Mode::parse(&text("mode")?).map_err(|e| e.to_string())?;
            let plan = host.plan_compaction(&text("id")?, &settings(&args["settings"])?, mode);
            *last_plan = plan.as_ref().ok().cloned();
            to_outcome(plan)
        }
        "compact" => {
            let plan = last_plan.clone().ok_or("`compact` applies the plan of an earlier `plan_compaction` step")?;
            let id = text("id")?;
            let summary = match args["summary"].as_str() {
                Some(summary) => summary.to_owned(),
                None => host.summarize_offline(&id, &plan).map_err(|e| e.to_string())?,
            };
            let ids = CompactionIds { boundary: text("boundary")?, summary: text("summary_uuid")? };
            to_outcome(host.apply_compaction(&id, &plan, &summary, &ids, now()?))
        }
        "record_compaction_failure" => to_outcome(host.record_compaction_failure(&text("id")?, &text("reason")?, now()?)),
        "memory_flush_gate" => {
            let field = |name: &str, default: u64| args[name].as_u64().unwrap_or(default);
            let defaults = FlushSettings::default();
            let settings = FlushSettings {
                context_window: field("context_window", defaults.context_window),
                reserve_floor: field("reserve_floor", defaults.reserve_floor),
                soft_threshold: field("soft_threshold", defaults.soft_threshold),
            };
            to_outcome(host.memory_flush_gate(&text("id")?, &settings))
        }
        "record_memory_flush" => to_outcome(host.record_memory_flush(&text("id")?, now()?)),
        "extraction_gate" => to_outcome(host.extraction_gate(&text("id")?, &ExtractionSettings::default())),
        "record_extraction" => to_outcome(host.record_extraction(&text("id")?, now()?)),
        "reset_gate" => {
            let policy = ResetPolicy {
                idle_minutes: args["idle_minutes"].as_u64().map(|m| m as u32),
                daily_reset_hour: args["daily_reset_hour"].as_u64().map(|h| h as u8),
                utc_offset_minutes: args["utc_offset_minutes"].as_i64().unwrap_or(0) as i32,
                ttl_ms: args["ttl_ms"].as_i64(),
            };
            to_outcome(host.reset_gate(&text("id")?, now()?, &policy))
        }
        "dream_gate" => to_outcome(host.dream_gate(now()?, &DreamSettings::default())),
        "dream_acquire" => to_outcome(host.dream_acquire(now()?, &text("holder")?, &DreamSettings::default())),
        "dream_release" => to_outcome(host.dream_release(now()?, &text("holder")?, args["completed"].as_bool().unwrap_or(false))),
        other => return Err(format!("unknown operation `{other}`")),
    };
    Ok(outcome)
}

fn to_outcome<T: serde::Serialize>(result: Result<T, Error>) -> Value {
    match result {
        Ok(value) => json!({ "ok": serde_json::to_value(value).unwrap_or(Value::Null) }),
        Err(error) => json!({ "err": error.kind() }),
    }
}

/// Whether `actual` matches `expected` (see the crate docs); on mismatch, the path.
/// `{"$contains": "text"}` matches a string that contains `text`.
pub fn matches(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    if let Some(needle) = expected.get("$contains").and_then(Value::as_str) {
        return match actual.as_str() {
            Some(text) if text.contains(needle) => Ok(()),
            _ => Err(format!("{path} (expected a string containing {needle:?}, got {actual})")),
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

#[cfg(test)]
mod reference {
    use super::*;
    use mneme_core::{InMemoryStorage, Storage, Store, block_on};

    /// The core over in-memory storage: the reference every other host must equal.
    struct MemoryHost(Store<InMemoryStorage>);

    impl Host for MemoryHost {
        fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
            block_on(self.0.append(id, entry))
        }
        fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error> {
            block_on(self.0.tombstone(id, uuid, now_ms))
        }
        fn load(&mut self, id: &str) -> Result<Transcript, Error> {
            block_on(self.0.load(id))
        }
        fn context(&mut self, id: &str) -> Result<Context, Error> {
            block_on(self.0.context(id))
        }
        fn check(&mut self, id: &str) -> Result<CheckReport, Error> {
            block_on(self.0.check(id))
        }
        fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, Error> {
            Ok(mneme_core::check_bytes(data))
        }
        fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, Error> {
            block_on(self.0.subagents(id))
        }
        fn remove(&mut self, id: &str) -> Result<Vec<String>, Error> {
            block_on(self.0.remove(id))
        }
        fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, Error> {
            block_on(self.0.repair(id, now_ms))
        }
        fn list(&mut self) -> Result<Vec<SessionInfo>, Error> {
            block_on(self.0.list())
        }
        fn keys(&mut self, prefix: &str) -> Vec<String> {
            block_on(self.0.storage().list(prefix)).expect("memory storage lists").into_iter().map(|i| i.key).collect()
        }
        fn plan_compaction(&mut self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, Error> {
            block_on(self.0.plan_compaction(id, settings, mode))
        }
        fn summarize_offline(&mut self, id: &str, plan: &Plan) -> Result<String, Error> {
            block_on(self.0.summarize_offline(id, plan))
        }
        fn apply_compaction(&mut self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, Error> {
            block_on(self.0.apply_compaction(id, plan, summary, ids, now_ms))
        }
        fn record_compaction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
            block_on(self.0.record_compaction_failure(id, reason, now_ms))
        }
        fn memory_flush_gate(&mut self, id: &str, settings: &FlushSettings) -> Result<Decision, Error> {
            block_on(self.0.memory_flush_gate(id, settings))
        }
        fn record_memory_flush(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
            block_on(self.0.record_memory_flush(id, now_ms))
        }
        fn extraction_gate(&mut self, id: &str, settings: &ExtractionSettings) -> Result<Decision, Error> {
            block_on(self.0.extraction_gate(id, settings))
        }
        fn record_extraction(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
            block_on(self.0.record_extraction(id, now_ms))
        }
        fn reset_gate(&mut self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, Error> {
            block_on(self.0.reset_gate(id, now_ms, policy))
        }
        fn dream_gate(&mut self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, Error> {
            block_on(self.0.dream_gate(now_ms, settings))
        }
        fn dream_acquire(&mut self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, Error> {
            block_on(self.0.dream_acquire(now_ms, holder, settings))
        }
        fn dream_release(&mut self, now_ms: i64, holder: &str, completed: bool) -> Result<(), Error> {
            block_on(self.0.dream_release(now_ms, holder, completed))
        }
    }

    #[test]
    fn memory_storage_passes_every_vector() {
        let results = run_all(|seed, limits| {
            let storage = InMemoryStorage::new();
            for (key, bytes) in seed {
                block_on(storage.append(key, bytes)).expect("memory storage accepts any key");
            }
            MemoryHost(Store::with_limits(storage, limits))
        });
        assert!(results.len() >= 6);
    }
}
