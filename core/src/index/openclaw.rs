//! OpenClaw's `sessions.json` (a map of session key → `SessionEntry`), in and out of
//! the index, so OpenClaw users can move in and back out without losing a field.
//!
//! One rule for every field, both ways:
//! - what the index has a place for is mapped to it: `sessionId`, `updatedAt`,
//!   `sessionStartedAt`, `chatType`, `label` (title), `displayName`, `subject`,
//!   `space` (room), `model`, `origin.provider` (else `channel`);
//! - the per-conversation settings OpenClaw keeps as strings (`thinkingLevel`,
//!   `queueMode`, `modelOverride`, …) become toggles under their own names, so
//!   `keys update` and `keys show` work on them;
//! - everything else (counters, snapshots, delivery contexts, fields a later OpenClaw
//!   adds) is kept verbatim as JSON in the toggle [`KEPT`] and written back on export.
//!
//! On export the counters OpenClaw keeps (`inputTokens`, `totalTokens`,
//! `compactionCount`, `memoryFlushAt`, …) come from the session's transcript when the
//! store has it (the index's one rule: a transcript is the truth for what it can say),
//! else they are the ones imported.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value, json};

use super::Index;
use super::{ChatType, Counters, Field, KeyEntry, Origin, sessionkey};
use crate::catalog::Change;
use crate::error::Error;
use crate::storage::Storage;

/// The toggle holding the `SessionEntry` fields the index has no place for, as JSON.
pub const KEPT: &str = "openclaw";

/// `SessionEntry` fields OpenClaw keeps as strings that are per-conversation settings.
const STRING_SETTINGS: &[&str] = &[
    "thinkingLevel",
    "verboseLevel",
    "reasoningLevel",
    "elevatedLevel",
    "traceLevel",
    "fastMode",
    "sendPolicy",
    "queueMode",
    "queueDrop",
    "groupActivation",
    "responseUsage",
    "ttsAuto",
    "modelProvider",
    "providerOverride",
    "modelOverride",
    "modelOverrideSource",
    "authProfileOverride",
    "authProfileOverrideSource",
    "agentRuntimeOverride",
    "execHost",
    "execSecurity",
    "execAsk",
    "execNode",
    "channel",
    "lastChannel",
    "lastTo",
    "lastAccountId",
    "groupId",
    "spawnedBy",
];

/// An entry of the file that was not imported, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RefusedKey {
    pub key: String,
    pub reason: String,
}

/// What importing a `sessions.json` did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeysImported {
    /// Keys added to the index.
    pub imported: Vec<String>,
    /// Keys the index had already, left as they are.
    pub existing: Vec<String>,
    pub refused: Vec<RefusedKey>,
}

impl<S: Storage> Index<'_, S> {
    /// Adds the keys of an OpenClaw `sessions.json` to the index in one write; keys the
    /// index has already are left as they are. The transcripts are not touched:
    /// import them with [`Sessions::import_session`](crate::sessions::Sessions::import_session) (they are pi sessions).
    pub async fn import_openclaw_keys(&self, data: &[u8]) -> Result<KeysImported, Error> {
        let file: Map<String, Value> = serde_json::from_slice(data)
            .map_err(|e| Error::InvalidArgument(format!("not an OpenClaw sessions.json (a JSON object of session keys): {e}")))?;
        self.sessions
            .catalog
            .update_index(|state| {
                let mut report = KeysImported::default();
                let mut changes = Vec::new();
                for (key, value) in &file {
                    match entry_of(key, value) {
                        Err(reason) => report.refused.push(RefusedKey { key: key.clone(), reason }),
                        Ok(_) if state.keys.contains_key(key) => report.existing.push(key.clone()),
                        Ok(entry) => {
                            report.imported.push(key.clone());
                            changes.push(Change::Key { entry });
                        }
                    }
                }
                Ok((changes, report))
            })
            .await
    }

    /// Every key as an OpenClaw `sessions.json` (what its `loadSessionStore` reads).
    pub async fn export_openclaw_keys(&self) -> Result<Vec<u8>, Error> {
        let keys = self.keys(&[]).await?;
        let mut file = Map::new();
        for entry in keys {
            let counters = match self.sessions.session_row(&entry.session_id).await {
                Ok(row) => row.map(|row| row.counters),
                Err(Error::SessionNotFound { .. }) => None,
                Err(e) => return Err(e),
            };
            let value = session_entry(&entry, counters.as_ref());
            file.insert(entry.key, value);
        }
        let mut bytes = serde_json::to_vec_pretty(&Value::Object(file)).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// A `SessionEntry` as an index entry, or why it cannot be one.
fn entry_of(key: &str, value: &Value) -> Result<KeyEntry, String> {
    if key.is_empty() || key.chars().any(char::is_control) {
        return Err("a session key is empty or has control characters".to_owned());
    }
    let Value::Object(fields) = value else {
        return Err("the entry is not a JSON object".to_owned());
    };
    let session_id = match fields.get("sessionId") {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        _ => return Err("the entry has no sessionId".to_owned()),
    };
    let updated_ms = fields.get("updatedAt").and_then(Value::as_i64).ok_or("the entry has no updatedAt (Unix milliseconds)")?;
    let started_ms = fields.get("sessionStartedAt").and_then(Value::as_i64).unwrap_or(updated_ms);
    let text = |name: &str| fields.get(name).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
    let origin_provider = fields.get("origin").and_then(|o| o.get("provider")).and_then(Value::as_str).map(str::to_owned);
    let chat_type = match sessionkey::parse(key) {
        Ok(parts) => parts.chat_type,
        Err(_) => match fields.get("chatType").and_then(Value::as_str) {
            Some("group") => ChatType::Group,
            Some("channel") => ChatType::Channel,
            _ if key.starts_with("cron:") || key.contains(":cron:") => ChatType::Cron,
            _ if key.starts_with("hook:") => ChatType::Hook,
            _ => ChatType::Direct,
        },
    };
    let mut toggles = Vec::new();
    let mut kept = Map::new();
    for (name, value) in fields {
        match (name.as_str(), value) {
            ("sessionId" | "updatedAt" | "sessionStartedAt" | "chatType" | "label" | "displayName" | "subject" | "space" | "model", _) => {}
            (name, Value::String(setting)) if STRING_SETTINGS.contains(&name) => {
                toggles.push(Field { name: name.to_owned(), value: setting.clone() })
            }
            (name, value) => {
                kept.insert(name.to_owned(), value.clone());
            }
        }
    }
    // Anything the mapping above dropped (a label that is not a string, …) is kept too.
    for name in ["label", "displayName", "subject", "space", "model", "chatType", "sessionStartedAt"] {
        if let Some(value) = fields.get(name).filter(|v| !v.is_string() && !v.is_i64()) {
            kept.insert(name.to_owned(), value.clone());
        }
    }
    if !kept.is_empty() {
        toggles.push(Field { name: KEPT.to_owned(), value: Value::Object(kept).to_string() });
    }
    toggles.sort();
    Ok(KeyEntry {
        key: key.to_owned(),
        session_id,
        created_ms: started_ms.min(updated_ms),
        updated_ms,
        session_started_ms: started_ms,
        chat_type,
        origin: Origin {
            provider: origin_provider.or_else(|| text("channel")),
            subject: text("subject"),
            room: text("space"),
            display_name: text("displayName"),
        },
        title: text("label"),
        model: text("model"),
        toggles,
        metadata: Vec::new(),
        previous_session_ids: Vec::new(),
        reason: "imported from OpenClaw's sessions.json".to_owned(),
    })
}

/// An index entry as a `SessionEntry`, with the transcript's counters when known.
fn session_entry(entry: &KeyEntry, counters: Option<&Counters>) -> Value {
    let mut fields = entry
        .toggles
        .iter()
        .find(|t| t.name == KEPT)
        .and_then(|t| serde_json::from_str::<Map<String, Value>>(&t.value).ok())
        .unwrap_or_default();
    for toggle in entry.toggles.iter().filter(|t| t.name != KEPT) {
        fields.insert(toggle.name.clone(), Value::String(toggle.value.clone()));
    }
    fields.insert("sessionId".into(), json!(entry.session_id));
    fields.insert("updatedAt".into(), json!(entry.updated_ms));
    fields.insert("sessionStartedAt".into(), json!(entry.session_started_ms));
    match entry.chat_type {
        ChatType::Direct => fields.insert("chatType".into(), json!("direct")),
        ChatType::Group => fields.insert("chatType".into(), json!("group")),
        ChatType::Channel | ChatType::Room => fields.insert("chatType".into(), json!("channel")),
        ChatType::Cron | ChatType::Hook => None,
    };
    let labels = [
        ("label", &entry.title),
        ("displayName", &entry.origin.display_name),
        ("subject", &entry.origin.subject),
        ("space", &entry.origin.room),
        ("model", &entry.model),
    ];
    for (name, value) in labels {
        if let Some(value) = value {
            fields.insert(name.into(), json!(value));
        }
    }
    if let Some(provider) = &entry.origin.provider {
        match fields.get_mut("origin") {
            Some(Value::Object(origin)) => {
                origin.insert("provider".into(), json!(provider));
            }
            _ => {
                fields.insert("origin".into(), json!({ "provider": provider }));
            }
        }
    }
    if let Some(counters) = counters {
        fields.insert("inputTokens".into(), json!(counters.input_tokens));
        fields.insert("outputTokens".into(), json!(counters.output_tokens));
        fields.insert("cacheRead".into(), json!(counters.cache_read_tokens));
        fields.insert("cacheWrite".into(), json!(counters.cache_creation_tokens));
        fields.insert("totalTokens".into(), json!(counters.context_tokens));
        fields.insert("compactionCount".into(), json!(counters.compaction_count));
        if let Some(at) = counters.memory_flush_ms {
            fields.insert("memoryFlushAt".into(), json!(at));
        }
        if let Some(count) = counters.memory_flush_compaction_count {
            fields.insert("memoryFlushCompactionCount".into(), json!(count));
        }
    }
    Value::Object(fields)
}
