//! Stored messages of every dialect read back as canonical (Anthropic) blocks: pi's
//! `toolCall`, `thinkingSignature`, `{data, mimeType}` images and `toolResult` messages
//! become `tool_use`, `signature`, base64 `source` and user `tool_result` blocks, so a
//! context says which call every result answers, whatever wrote the session.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::calls::Activity;
use crate::transcript::scan::{Block, Content, Line, parse_content, parse_message};

/// A stored message: who speaks, and its blocks as a JSON array.
pub(crate) struct Stored {
    pub role: String,
    pub blocks: String,
}

/// pi's spellings that mark a message as needing conversion.
const PI_MARKS: [&str; 4] = ["\"toolCall\"", "\"thinkingSignature\"", "\"mimeType\"", "\"toolResult\""];

/// The message a line carries, in canonical form; `None` for lines without one.
pub(crate) fn stored(line: &Line) -> Option<Stored> {
    let raw = line.env.message?;
    let message = parse_message(raw)?;
    let role = message.role.get().unwrap_or(line.env.kind());
    if !PI_MARKS.iter().any(|mark| raw.get().contains(mark)) {
        return Some(Stored { role: role.to_string(), blocks: as_blocks(message.content) });
    }
    let value: Value = serde_json::from_str(raw.get()).ok()?;
    if role == "toolResult" {
        let mut result = json!({
            "type": "tool_result",
            "tool_use_id": value["toolCallId"].as_str().unwrap_or_default(),
            "content": pi_blocks(&value["content"]),
        });
        if value["isError"] == Value::Bool(true) {
            result["is_error"] = Value::Bool(true);
        }
        return Some(Stored { role: "user".into(), blocks: Value::Array(alloc::vec![result]).to_string() });
    }
    Some(Stored { role: role.to_string(), blocks: pi_blocks(&value["content"]).to_string() })
}

/// A content as a JSON array of blocks (a string content becomes one text block),
/// exactly as stored otherwise.
pub(crate) fn as_blocks(content: Option<&RawValue>) -> String {
    match content {
        Some(raw) if raw.get().starts_with('[') => raw.get().to_string(),
        Some(raw) if raw.get().starts_with('"') => alloc::format!("[{{\"type\":\"text\",\"text\":{}}}]", raw.get()),
        _ => "[]".to_string(),
    }
}

fn pi_blocks(content: &Value) -> Value {
    match content {
        Value::String(text) => json!([{ "type": "text", "text": text }]),
        Value::Array(blocks) => Value::Array(blocks.iter().map(pi_block).collect()),
        _ => json!([]),
    }
}

fn pi_block(block: &Value) -> Value {
    match block["type"].as_str() {
        Some("toolCall") => json!({
            "type": "tool_use", "id": block["id"], "name": block["name"],
            "input": if block["arguments"].is_object() { block["arguments"].clone() } else { json!({}) },
        }),
        Some("thinking") if block["redacted"] == Value::Bool(true) => {
            json!({ "type": "redacted_thinking", "data": block["thinkingSignature"] })
        }
        Some("thinking") => {
            let mut out = json!({ "type": "thinking", "thinking": block["thinking"] });
            if let Some(signature) = block["thinkingSignature"].as_str() {
                out["signature"] = signature.into();
            }
            out
        }
        Some("image") if block.get("data").is_some() => json!({
            "type": "image", "source": { "type": "base64", "media_type": block["mimeType"], "data": block["data"] },
        }),
        Some("text") => json!({ "type": "text", "text": block["text"] }),
        _ => block.clone(),
    }
}

/// What a line does to the pending tool calls; `None` for lines that are no message.
pub(crate) fn activity(line: &Line) -> Option<Activity> {
    if !line.env.is_message() {
        return None;
    }
    let message = parse_message(line.env.message?)?;
    let role = message.role.get().unwrap_or(line.env.kind());
    if role == "toolResult" {
        let answers = message.tool_call_id.get().map(String::from).into_iter().collect();
        return Some(Activity { assistant: false, calls: Vec::new(), answers, other: false });
    }
    let assistant = role == "assistant";
    let mut activity = Activity { assistant, calls: Vec::new(), answers: Vec::new(), other: false };
    match parse_content(message.content) {
        Some(Content::Blocks(blocks)) => {
            for block in &blocks {
                step_block(&mut activity, block);
            }
        }
        Some(Content::Text(_)) => activity.other = true,
        None => {}
    }
    Some(activity)
}

fn step_block(activity: &mut Activity, block: &Block) {
    match block.kind.get() {
        Some("tool_use" | "toolCall") => {
            if let Some(id) = block.id.get() {
                activity.calls.push((id.to_string(), block.name.get().unwrap_or_default().to_string()));
            }
        }
        Some("tool_result") => activity.answers.extend(block.tool_use_id.get().map(String::from)),
        _ => activity.other = true,
    }
}

/// What a message about to be written does to the pending calls.
pub(crate) fn message_activity(message: &super::Message) -> Activity {
    let mut activity = Activity { assistant: message.role == crate::Role::Assistant, calls: Vec::new(), answers: Vec::new(), other: false };
    for block in &message.blocks {
        match &block.kind {
            super::BlockKind::ToolUse { id, name } => activity.calls.push((id.clone(), name.clone())),
            super::BlockKind::ToolResult { tool_use_id } => activity.answers.push(tool_use_id.clone()),
            _ => activity.other = true,
        }
    }
    activity
}
