//! Gemini CLI chats: the JSONL recording (a metadata line, then message records, where
//! a record written again with the same `id` replaces the earlier one, `$set`
//! metadata patches and `$rewindTo` records), or the older single JSON file
//! `{sessionId, projectHash, startTime, lastUpdated, messages}`.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use super::{Foreign, image, json_lines, millis, text_block, tool_result, tool_use, usage_with_cached_input};
use crate::error::Error;
use crate::message::Role;

pub(crate) fn read(data: &[u8]) -> Result<Foreign, Error> {
    let text = crate::scan::decode(data);
    let mut foreign = Foreign::default();
    let whole = serde_json::from_str::<Value>(&text).ok().filter(|v| v["messages"].is_array());
    let records: Vec<Value> = match whole {
        Some(mut file) => {
            foreign.id = file["sessionId"].as_str().map(String::from);
            match file["messages"].take() {
                Value::Array(records) => records,
                _ => Vec::new(),
            }
        }
        None => replay(json_lines(&text, &mut foreign.skipped), &mut foreign),
    };
    if foreign.id.is_none() && records.is_empty() {
        return Err(Error::InvalidArgument("not a Gemini CLI chat: no `sessionId` and no message record".into()));
    }
    for record in &records {
        message(&mut foreign, record);
    }
    Ok(foreign)
}

/// The records a JSONL recording holds at its end, in the order first written.
fn replay(lines: Vec<Value>, foreign: &mut Foreign) -> Vec<Value> {
    let mut records: Vec<Value> = Vec::new();
    let mut position: BTreeMap<String, usize> = BTreeMap::new();
    for line in lines {
        let id = line.get("id").and_then(Value::as_str).map(String::from);
        if let Some(target) = line.get("$rewindTo").and_then(Value::as_str) {
            // A rewind goes back to before the record named: it and what follows go.
            if let Some(&at) = position.get(target) {
                records.truncate(at);
                position.retain(|_, &mut p| p < at);
            }
        } else if line.get("$set").is_some() {
            // Metadata (`lastUpdated`, a summary): nothing of the conversation.
            continue;
        } else if line.get("type").is_some() {
            let earlier = id.as_ref().and_then(|id| position.get(id)).and_then(|&at| records.get_mut(at));
            match earlier {
                Some(slot) => *slot = line,
                None => {
                    if let Some(id) = id {
                        position.insert(id, records.len());
                    }
                    records.push(line);
                }
            }
        } else if foreign.id.is_none() {
            foreign.id = line["sessionId"].as_str().map(String::from);
        }
    }
    records
}

/// Gemini's `PartListUnion`: a string, a part, or a list of them.
fn parts(content: &Value) -> Vec<&Value> {
    match content {
        Value::Array(list) => list.iter().collect(),
        Value::Null => Vec::new(),
        one => alloc::vec![one],
    }
}

fn message(foreign: &mut Foreign, record: &Value) {
    let at = millis(&record["timestamp"]);
    let role = match record["type"].as_str() {
        Some("user") => Role::User,
        Some("gemini") => Role::Assistant,
        // info, error and warning records are the CLI's notices, not conversation.
        _ => {
            foreign.skipped += 1;
            return;
        }
    };
    if role == Role::Assistant {
        foreign.set_model(record["model"].as_str());
        if record["thoughts"].as_array().is_some_and(|t| !t.is_empty()) {
            foreign.skipped += 1;
        }
    }
    for part in parts(&record["content"]) {
        let block = match part {
            Value::String(text) => text_block(text),
            _ if part["text"].is_string() => text_block(part["text"].as_str().unwrap_or_default()),
            _ if part["inlineData"].is_object() => {
                let data = &part["inlineData"];
                Some(image(data["mimeType"].as_str().unwrap_or("image/png"), data["data"].as_str().unwrap_or_default()))
            }
            _ => {
                foreign.skipped += 1;
                None
            }
        };
        if let Some(block) = block {
            foreign.push(role, block, at);
        }
    }
    let calls = record["toolCalls"].as_array().map(Vec::as_slice).unwrap_or_default();
    for call in calls {
        let (Some(id), Some(name)) = (call["id"].as_str(), call["name"].as_str()) else {
            foreign.skipped += 1;
            continue;
        };
        foreign.push(Role::Assistant, tool_use(id, name, call["args"].clone()), at);
    }
    if role == Role::Assistant && record["tokens"].is_object() {
        let tokens = &record["tokens"];
        let count = |field: &str| tokens[field].as_u64().unwrap_or(0);
        foreign.usage(usage_with_cached_input(count("input"), count("cached"), count("output").saturating_add(count("thoughts"))));
    }
    for call in calls {
        let Some(id) = call["id"].as_str() else { continue };
        let failed = matches!(call["status"].as_str(), Some("error" | "cancelled"));
        foreign.push(Role::User, tool_result(id, &result_text(&call["result"]), failed), millis(&call["timestamp"]).or(at));
    }
}

/// A call's result as text: each `functionResponse`'s `output` (or `error`), else the
/// parts' text.
fn result_text(result: &Value) -> String {
    let texts: Vec<String> = parts(result)
        .into_iter()
        .filter_map(|part| {
            let response = &part["functionResponse"]["response"];
            if let Some(text) = response["output"].as_str().or_else(|| response["error"].as_str()).or_else(|| part["text"].as_str()) {
                Some(text.to_string())
            } else if response.is_object() {
                Some(response.to_string())
            } else {
                part.as_str().map(String::from)
            }
        })
        .collect();
    texts.join("\n")
}
