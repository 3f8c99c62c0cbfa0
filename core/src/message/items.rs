//! OpenAI Responses API items — what the OpenAI Agents SDK keeps in a session — as
//! canonical messages, one message of one block per item, so a session of items reads
//! like any other (shown, searched, compacted, resumed by Claude Code). Each item is
//! also kept verbatim beside its message: the SDK gets back exactly what it added,
//! including what Anthropic's shape has no block for (reasoning, hosted tool calls),
//! which stands in the conversation as a marker such as `[web_search_call]`.

use alloc::borrow::{Cow, ToOwned};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::calls::PendingCalls;
use super::{Block, BlockKind, Message, Meta, Origin, Role};
use crate::error::Error;

/// Items to append: each one's message and its JSON as it will be kept (compact, one
/// line).
pub(crate) struct Items {
    pub messages: Vec<Message>,
    pub json: Vec<String>,
}

/// Parses `json`, a JSON array of items (objects). Any object is an item: what this
/// version cannot read as a message is kept as a marker, never refused.
pub(crate) fn parse(json: &str) -> Result<Items, Error> {
    let list: Vec<&RawValue> = serde_json::from_str(json).map_err(|e| not_items(&format!("expected a JSON array of items: {e}")))?;
    let mut items = Items { messages: Vec::with_capacity(list.len()), json: Vec::with_capacity(list.len()) };
    for (i, item) in list.iter().enumerate() {
        // JavaScript's `JSON.stringify` and Python's `json.dumps` escape a lone surrogate
        // (text cut inside an emoji) where JSON has no character for it: it becomes
        // U+FFFD, as in a turn's messages.
        let (text, value) = match serde_json::from_str::<Value>(item.get()) {
            Ok(value) => (Cow::Borrowed(item.get()), value),
            Err(error) => {
                let repaired = crate::scan::repair_lone_surrogates(item.get()).ok_or_else(|| invalid_item(i, &error.to_string()))?;
                let value = serde_json::from_str::<Value>(&repaired).map_err(|e| invalid_item(i, &e.to_string()))?;
                (Cow::Owned(repaired), value)
            }
        };
        let Value::Object(map) = value else {
            return Err(invalid_item(i, "an item is a JSON object"));
        };
        let (role, block) = message_of(&map);
        items.messages.push(Message {
            role,
            blocks: alloc::vec![block],
            meta: Meta { origin: Some(Origin::Message(i as u32)), ..Meta::default() },
        });
        // Kept as given, key order and all, on one line: in JSON a line break is only
        // ever white space between tokens (a string escapes its own).
        items.json.push(if text.contains(['\n', '\r']) { text.replace(['\n', '\r'], "") } else { text.into_owned() });
    }
    Ok(items)
}

fn invalid_item(index: usize, reason: &str) -> Error {
    Error::InvalidMessage { message: index as u32, reason: reason.to_owned() }
}

fn not_items(reason: &str) -> Error {
    Error::InvalidArgument(format!("{reason}; nothing was written"))
}

fn text_of(map: &Map<String, Value>, field: &str) -> Option<String> {
    map.get(field).and_then(Value::as_str).map(str::to_owned)
}

/// The text of a content (a string, or parts — or one part — with `text` or
/// `refusal`), other parts as markers; a marker of `kind` when it has none.
fn content_text(content: Option<&Value>, kind: &str) -> String {
    let text = match content {
        Some(Value::String(text)) => text.clone(),
        // One part, as the JavaScript SDK gives an output: `{type: "text", text}`.
        Some(part @ Value::Object(_)) => return content_text(Some(&Value::Array(alloc::vec![part.clone()])), kind),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|part| {
                let field = |name: &str| part.get(name).and_then(Value::as_str);
                match field("text").or_else(|| field("refusal")) {
                    Some(text) => text.to_owned(),
                    None => super::marker(field("type")),
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    if text.trim().is_empty() { super::marker(Some(kind)) } else { text }
}

/// An item's message: who says it and its one block.
fn message_of(map: &Map<String, Value>) -> (Role, Block) {
    let kind = map.get("type").and_then(Value::as_str).unwrap_or("message");
    // The JavaScript SDK spells the id `callId`, and a call's output `function_call_result`.
    let call_id = text_of(map, "call_id").or_else(|| text_of(map, "callId")).filter(|id| !id.is_empty());
    match (kind, call_id) {
        ("message", _) => {
            let role = match map.get("role").and_then(Value::as_str) {
                Some("assistant") => Role::Assistant,
                // System and developer instructions, as the session's other side.
                _ => Role::User,
            };
            (role, Block::text(&content_text(map.get("content"), kind)))
        }
        ("function_call" | "custom_tool_call", Some(id)) => {
            let name = text_of(map, "name").filter(|name| !name.is_empty()).unwrap_or_else(|| kind.to_owned());
            let given = map.get("arguments").or_else(|| map.get("input"));
            let input = match given {
                Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                    Ok(object @ Value::Object(_)) => object,
                    _ => json!({ "input": text }),
                },
                Some(object @ Value::Object(_)) => object.clone(),
                _ => json!({}),
            };
            let block = json!({ "type": "tool_use", "id": id, "name": name, "input": input });
            (Role::Assistant, Block { kind: BlockKind::ToolUse { id, name }, json: block.to_string() })
        }
        ("function_call_output" | "function_call_result" | "custom_tool_call_output", Some(id)) => {
            let content = content_text(map.get("output"), kind);
            let block = json!({ "type": "tool_result", "tool_use_id": id, "content": content });
            (Role::User, Block { kind: BlockKind::ToolResult { tool_use_id: id }, json: block.to_string() })
        }
        ("reasoning", _) => {
            let summary = content_text(map.get("summary"), kind);
            let text = if summary == super::marker(Some(kind)) { summary } else { format!("[reasoning] {summary}") };
            (Role::Assistant, Block::text(&text))
        }
        (other, _) => {
            let role = if other.ends_with("_output") || other.ends_with("_result") { Role::User } else { Role::Assistant };
            (role, Block::text(&super::marker(Some(other))))
        }
    }
}

/// The items' messages made writable after `pending`: a result that answers no call
/// pending at its place (its call was removed, or never added), and a call whose id
/// another pending call has, become text markers with their content, as the session's
/// rule for calls would refuse them. The items themselves are kept as they are.
pub(crate) fn settle(messages: &mut [Message], pending: &PendingCalls) {
    let mut calls = pending.clone();
    let mut made: Vec<String> = Vec::new();
    for message in messages.iter_mut() {
        for block in &mut message.blocks {
            let stray = match &block.kind {
                BlockKind::ToolResult { tool_use_id } => calls.find(tool_use_id).is_none(),
                // As `check_turn` refuses: an id of a call pending, or made in the batch.
                BlockKind::ToolUse { id, .. } => calls.find(id).is_some() || made.contains(id),
                _ => false,
            };
            if stray {
                *block = Block::text(&stray_text(block));
            } else if let BlockKind::ToolUse { id, .. } = &block.kind {
                made.push(id.clone());
            }
        }
        calls.step(super::calls::message_activity(message), None);
    }
}

fn stray_text(block: &Block) -> String {
    let value = block.value();
    let field = |name: &str| value.get(name).and_then(Value::as_str).unwrap_or_default();
    match &block.kind {
        BlockKind::ToolResult { tool_use_id } => format!("[result of {tool_use_id}] {}", field("content")),
        BlockKind::ToolUse { id, name } => format!("[call {id}: {name}] {}", value.get("input").map(Value::to_string).unwrap_or_default()),
        _ => field("text").to_owned(),
    }
}
