//! Stored messages of every dialect read back as canonical (Anthropic) blocks: pi's
//! `toolCall`, `thinkingSignature`, `{data, mimeType}` images and `toolResult` messages
//! become `tool_use`, `signature`, base64 `source` and user `tool_result` blocks, so a
//! context says which call every result answers, whatever wrote the session.

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Value, json};

use super::calls::Activity;
use crate::support::json::Raw;
use crate::transcript::scan::{Block, Content, Line, Message, parse_message_content};

/// A stored message: who speaks, its blocks as a JSON array, and what a reader needs
/// of them, from one parse of the line.
pub(crate) struct Stored<'l> {
    pub role: String,
    /// Borrowed from the line when stored as blocks.
    pub blocks: Cow<'l, str>,
    /// Readable text: text blocks, with tool calls and results as short markers.
    /// Borrowed from the line when it is one string without escapes.
    pub text: Cow<'l, str>,
    /// Every block is a tool result.
    pub only_results: bool,
    /// `message.id` (Claude Code's split lines of one reply share it).
    pub id: Option<&'l str>,
}

/// A block only pi writes: its conversion is needed.
fn is_pi_block(block: &Block) -> bool {
    match block.kind.get() {
        Some("toolCall") => true,
        Some("thinking") => block.thinking_signature.get().is_some(),
        Some("image") => block.mime_type.get().is_some(),
        _ => false,
    }
}

/// The message a line of type `kind` carries, in canonical form; `None` for lines
/// without one.
pub(crate) fn stored<'l>(kind: &str, message: Option<Raw<'l>>) -> Option<Stored<'l>> {
    let raw = message?;
    let (message, content) = parse_message_content(raw)?;
    let role = message.role.get().unwrap_or(kind);
    let id = match message.id.0 {
        Some(alloc::borrow::Cow::Borrowed(id)) => Some(id),
        // Message ids are API identifiers without escapes; one that has them is not merged.
        _ => None,
    };
    let pi = role == "toolResult" || matches!(&content, Some(Content::Blocks(blocks)) if blocks.iter().any(is_pi_block));
    if !pi {
        let (text, only_results) = match content {
            Some(Content::Text(text)) => (text, false),
            Some(Content::Blocks(blocks)) => {
                let only_results = !blocks.is_empty() && blocks.iter().all(|b| b.kind.get() == Some("tool_result"));
                (blocks_text(blocks), only_results)
            }
            None => (Cow::Borrowed(""), false),
        };
        return Some(Stored { role: role.to_string(), blocks: as_blocks(message.content), text, only_results, id });
    }
    let value: Value = serde_json::from_str(raw.get()).ok()?;
    let (role, blocks) = if role == "toolResult" {
        let mut result = json!({
            "type": "tool_result",
            "tool_use_id": value["toolCallId"].as_str().unwrap_or_default(),
            "content": pi_blocks(&value["content"]),
        });
        if value["isError"] == Value::Bool(true) {
            result["is_error"] = Value::Bool(true);
        }
        ("user".to_string(), Value::Array(alloc::vec![result]))
    } else {
        (role.to_string(), pi_blocks(&value["content"]))
    };
    let text = blocks.as_array().map(|b| b.iter().filter_map(value_text).collect::<Vec<_>>().join("\n")).unwrap_or_default();
    let only_results = role == "user" && blocks.as_array().is_some_and(|b| b.iter().all(|b| b["type"] == "tool_result"));
    Some(Stored { role, blocks: Cow::Owned(blocks.to_string()), text: Cow::Owned(text), only_results, id })
}

/// The blocks as text for people: text as it is, other blocks as short markers, one
/// per line. A lone text block's text is borrowed.
fn blocks_text(blocks: Vec<Block<'_>>) -> Cow<'_, str> {
    let mut texts = blocks.into_iter().filter_map(block_text);
    let Some(first) = texts.next() else { return Cow::Borrowed("") };
    match texts.next() {
        None => first,
        Some(second) => {
            let mut joined = first.into_owned();
            for text in core::iter::once(second).chain(texts) {
                joined.push('\n');
                joined.push_str(&text);
            }
            Cow::Owned(joined)
        }
    }
}

/// A block as text for people: text as it is, other blocks as short markers.
fn block_text(block: Block<'_>) -> Option<Cow<'_, str>> {
    if block.kind.get() == Some("text") {
        return block.text.0;
    }
    marker(block.kind.get()?, block.text.get(), block.name.get(), block.id.get(), block.tool_use_id.get()).map(Cow::Owned)
}

fn value_text(block: &Value) -> Option<String> {
    marker(block["type"].as_str()?, block["text"].as_str(), block["name"].as_str(), block["id"].as_str(), block["tool_use_id"].as_str())
}

fn marker(kind: &str, text: Option<&str>, name: Option<&str>, id: Option<&str>, tool_use_id: Option<&str>) -> Option<String> {
    // Joined by hand: `format!` costs more than the rest of a message's reading.
    let bracketed = |words: &[&str]| {
        let mut marker = String::with_capacity(words.iter().map(|w| w.len() + 1).sum::<usize>() + 1);
        marker.push('[');
        for (n, word) in words.iter().enumerate() {
            if n > 0 {
                marker.push(' ');
            }
            marker.push_str(word);
        }
        marker.push(']');
        marker
    };
    match kind {
        "text" => text.map(ToString::to_string),
        "tool_use" => Some(bracketed(&["tool_use", name.unwrap_or("?"), id.unwrap_or("?")])),
        "tool_result" => Some(bracketed(&["tool_result", tool_use_id.unwrap_or("?")])),
        "thinking" | "redacted_thinking" => None,
        other => Some(bracketed(&[other])),
    }
}

/// A content as a JSON array of blocks (a string content becomes one text block),
/// exactly as stored otherwise.
pub(crate) fn as_blocks(content: Option<Raw<'_>>) -> Cow<'_, str> {
    match content {
        Some(raw) if raw.get().starts_with('[') => Cow::Borrowed(raw.get()),
        Some(raw) if raw.get().starts_with('"') => Cow::Owned(alloc::format!("[{{\"type\":\"text\",\"text\":{}}}]", raw.get())),
        _ => Cow::Borrowed("[]"),
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
    activity_read(line, line.env.message.and_then(parse_message_content).as_ref())
}

/// [`activity`] of a line whose message is already read with [`parse_message_content`].
pub(crate) fn activity_read(line: &Line, read: Option<&(Message<'_>, Option<Content<'_>>)>) -> Option<Activity> {
    if !line.env.is_message() {
        return None;
    }
    let (message, content) = read?;
    let role = message.role.get().unwrap_or(line.env.kind());
    if role == "toolResult" {
        let answers = message.tool_call_id.get().map(String::from).into_iter().collect();
        return Some(Activity { assistant: false, id: None, calls: Vec::new(), answers, other: false });
    }
    let assistant = role == "assistant";
    let id = message.id.get().filter(|_| assistant).map(String::from);
    let mut activity = Activity { assistant, id, calls: Vec::new(), answers: Vec::new(), other: false };
    match content {
        Some(Content::Blocks(blocks)) => {
            for block in blocks {
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
    let assistant = message.role == crate::Role::Assistant;
    let id = message.meta.id.clone().filter(|_| assistant);
    let mut activity = Activity { assistant, id, calls: Vec::new(), answers: Vec::new(), other: false };
    for block in &message.blocks {
        match &block.kind {
            super::BlockKind::ToolUse { id, name } => activity.calls.push((id.clone(), name.clone())),
            super::BlockKind::ToolResult { tool_use_id } => activity.answers.push(tool_use_id.clone()),
            _ => activity.other = true,
        }
    }
    activity
}
