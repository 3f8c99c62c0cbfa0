//! Codex CLI rollouts: `{timestamp, type, payload}` lines (`session_meta`,
//! `turn_context`, `response_item`, `event_msg`), or, before the envelope (2025), a
//! first `{id, timestamp, instructions}` line and bare response items.

use alloc::string::{String, ToString};

use serde_json::Value;

use super::{Foreign, data_url_image, json_lines, millis, text_block, tool_result, tool_use, usage_with_cached_input};
use crate::message::Role;

pub(crate) fn read(data: &[u8]) -> Foreign {
    let text = crate::scan::decode(data);
    let mut foreign = Foreign::default();
    let lines = json_lines(&text, &mut foreign.skipped);
    for (n, line) in lines.iter().enumerate() {
        let at = millis(&line["timestamp"]);
        let (kind, payload) = match (line.get("type").and_then(Value::as_str), line.get("payload")) {
            (Some(kind), Some(payload)) => (kind, payload),
            // The older layout: the first line is the session's, the rest bare items.
            _ if n == 0 && line.get("instructions").is_some() => ("session_meta", line),
            _ if line.get("record_type").is_some() => continue,
            _ => ("response_item", line),
        };
        match kind {
            "session_meta" => {
                foreign.id = foreign.id.take().or_else(|| payload["id"].as_str().map(String::from));
                foreign.cwd = foreign.cwd.take().or_else(|| payload["cwd"].as_str().map(String::from));
            }
            "turn_context" => foreign.set_model(payload["model"].as_str()),
            "response_item" => response_item(&mut foreign, payload, at),
            "event_msg" if payload["type"] == "token_count" => {
                let usage = &payload["info"]["last_token_usage"];
                if usage.is_object() {
                    let count = |field: &str| usage[field].as_u64().unwrap_or(0);
                    let output = count("output_tokens");
                    foreign.usage(usage_with_cached_input(count("input_tokens"), count("cached_input_tokens"), output));
                }
            }
            // The history a compaction replaced: no sample shows one to convert faithfully.
            "compacted" => foreign.skipped += 1,
            // Events repeat the response items (user_message, agent_message) or are the
            // CLI's own bookkeeping.
            _ => {}
        }
    }
    foreign
}

fn response_item(foreign: &mut Foreign, item: &Value, at: Option<i64>) {
    let text_of = |value: &Value| match value {
        Value::String(text) => text.clone(),
        Value::Object(map) => map.get("content").and_then(Value::as_str).map_or_else(|| value.to_string(), String::from),
        other => other.to_string(),
    };
    match item["type"].as_str().unwrap_or_default() {
        "message" => {
            let role = match item["role"].as_str() {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                // Developer and system messages are instructions, not conversation.
                _ => {
                    foreign.skipped += 1;
                    return;
                }
            };
            for part in item["content"].as_array().into_iter().flatten() {
                let block = match part["type"].as_str() {
                    Some("input_text" | "output_text" | "text") => text_block(part["text"].as_str().unwrap_or_default()),
                    Some("input_image") => part["image_url"].as_str().and_then(data_url_image),
                    _ => None,
                };
                match block {
                    Some(block) => foreign.push(role, block, at),
                    None => foreign.skipped += 1,
                }
            }
        }
        "function_call" => {
            let arguments = item["arguments"].as_str().unwrap_or_default();
            let input = serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.into()));
            call(foreign, item, input, at);
        }
        "custom_tool_call" => call(foreign, item, item["input"].clone(), at),
        "local_shell_call" => call(foreign, item, item["action"].clone(), at),
        "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
            let id = item["call_id"].as_str().unwrap_or_default();
            foreign.push(Role::User, tool_result(id, &text_of(&item["output"]), false), at);
        }
        // Reasoning is encrypted or a summary no API takes back; the rest is not
        // conversation this version knows.
        _ => foreign.skipped += 1,
    }
}

fn call(foreign: &mut Foreign, item: &Value, input: Value, at: Option<i64>) {
    let id = item["call_id"].as_str().or_else(|| item["id"].as_str()).unwrap_or_default();
    let name = item["name"].as_str().unwrap_or(match item["type"].as_str() {
        Some("local_shell_call") => "local_shell",
        _ => "tool",
    });
    if id.is_empty() {
        foreign.skipped += 1;
        return;
    }
    foreign.push(Role::Assistant, tool_use(id, name, input), at);
}
