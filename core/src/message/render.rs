//! A resumed context rendered for a provider: what to send the model next. Roles
//! alternate, every tool call has its result right after it (an interrupted turn's
//! calls get a synthetic error result, as Claude Code gives them), and injected
//! context sits where the caller put it without ever being written.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Value, json};

use super::{Injection, Place, Provider, Speaker};
use crate::transcript::Context;

/// What to send a model to continue a session.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProviderContext {
    pub provider: Provider,
    /// The request's JSON, ready to extend with the model and tools. Anthropic:
    /// `{"system"?: string, "messages": [...]}`; OpenAI: `{"messages": [...]}` with
    /// the system prompt as its first message.
    pub body: String,
    /// Messages in `body` (OpenAI: system and tool messages included).
    pub messages: u32,
    /// The context starts from a compaction summary.
    pub compacted: bool,
    /// An estimate of the context's tokens (4 characters a token, images 1,200).
    pub tokens: u64,
    /// Calls that had no result (an interrupted turn); each got a synthetic error
    /// result so the provider accepts the request.
    pub interrupted: Vec<String>,
}

/// What Claude Code 2.1 puts in place of the result of a call a turn never finished.
pub(crate) const INTERRUPTED_RESULT: &str = "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. Check whether it took effect before relying on it or running it again.]";

/// The reply Claude Code puts after such results when they end the conversation, so
/// the next prompt does not run into them (a context whose last message is a user's,
/// injected or not, has no need of it).
pub(crate) const NO_RESPONSE: &str = "No response requested.";

struct Turn {
    assistant: bool,
    blocks: Vec<Value>,
}

fn text_block(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

fn is_result(block: &Value) -> bool {
    block["type"] == "tool_result"
}

pub(crate) fn render(context: &Context, provider: Provider, injections: &[Injection]) -> ProviderContext {
    let mut turns: Vec<Turn> = context
        .messages
        .iter()
        .map(|m| Turn { assistant: m.role == "assistant", blocks: serde_json::from_str(&m.content).unwrap_or_default() })
        .filter(|t| !t.blocks.is_empty())
        .collect();
    let system: Vec<&str> = injections.iter().filter(|i| i.role == Speaker::System).map(|i| i.text.as_str()).collect();
    for injection in injections.iter().filter(|i| i.role != Speaker::System) {
        let at = match injection.place {
            Place::Start => 0,
            Place::End => turns.len(),
            Place::BeforeLastPrompt => {
                turns.iter().rposition(|t| !t.assistant && t.blocks.iter().any(|b| !is_result(b))).unwrap_or(turns.len())
            }
        };
        let turn = Turn { assistant: injection.role == Speaker::Assistant, blocks: alloc::vec![text_block(&injection.text)] };
        turns.insert(at, turn);
    }
    let mut merged = merge_roles(turns);
    if drop_orphaned_results(&mut merged) {
        merged = merge_roles(merged);
    }
    let interrupted = answer_every_call(&mut merged);
    for turn in merged.iter_mut().filter(|t| !t.assistant) {
        // The API wants a reply's results first in the message that follows it.
        let (mut results, rest): (Vec<Value>, Vec<Value>) = core::mem::take(&mut turn.blocks).into_iter().partition(is_result);
        results.extend(rest);
        turn.blocks = results;
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    let (body, messages) = match provider {
        Provider::Anthropic => anthropic(&merged, system),
        Provider::Openai => openai(&merged, system),
    };
    let body = body.to_string();
    let tokens = estimate(&merged);
    ProviderContext { provider, body, messages, compacted: context.compacted, tokens, interrupted }
}

/// The ids of a reply's tool calls.
fn call_ids(turn: &Turn) -> Vec<String> {
    turn.blocks.iter().filter(|b| b["type"] == "tool_use").filter_map(|b| b["id"].as_str().map(ToString::to_string)).collect()
}

/// Consecutive turns of one role as one message: the providers want roles to alternate.
fn merge_roles(turns: Vec<Turn>) -> Vec<Turn> {
    let mut merged: Vec<Turn> = Vec::with_capacity(turns.len());
    for turn in turns {
        match merged.last_mut() {
            Some(previous) if previous.assistant == turn.assistant => previous.blocks.extend(turn.blocks),
            _ => merged.push(turn),
        }
    }
    merged
}

/// Leaves out every tool result that answers no call of the message before it — its
/// call was deleted, or summarised away, or a file holds it without one (`check`
/// reports those) — and a message left empty: both providers refuse such a result
/// (Anthropic: "Each `tool_result` block must have a corresponding `tool_use` block in
/// the previous message"). Whether a message was left out.
fn drop_orphaned_results(turns: &mut Vec<Turn>) -> bool {
    let mut calls: Vec<String> = Vec::new();
    for turn in turns.iter_mut() {
        if turn.assistant {
            calls = call_ids(turn);
            continue;
        }
        turn.blocks
            .retain(|block| !is_result(block) || block["tool_use_id"].as_str().is_some_and(|id| calls.iter().any(|call| call == id)));
        calls.clear();
    }
    let before = turns.len();
    turns.retain(|turn| !turn.blocks.is_empty());
    turns.len() != before
}

/// Gives every call without a result in the message after it a synthetic error
/// result there; returns the calls it answered.
fn answer_every_call(turns: &mut Vec<Turn>) -> Vec<String> {
    let mut interrupted = Vec::new();
    let mut i = 0;
    while i < turns.len() {
        if !turns[i].assistant {
            i += 1;
            continue;
        }
        let calls = call_ids(&turns[i]);
        if calls.is_empty() {
            i += 1;
            continue;
        }
        if turns.get(i + 1).is_none_or(|next| next.assistant) {
            turns.insert(i + 1, Turn { assistant: false, blocks: Vec::new() });
        }
        let next = &mut turns[i + 1];
        let missing: Vec<String> = calls
            .into_iter()
            .filter(|id| !next.blocks.iter().any(|b| is_result(b) && b["tool_use_id"].as_str() == Some(id.as_str())))
            .collect();
        for id in &missing {
            next.blocks.push(json!({ "type": "tool_result", "tool_use_id": id, "content": INTERRUPTED_RESULT, "is_error": true }));
        }
        // Only results ending the conversation: the next prompt would run into them.
        let only_results = next.blocks.iter().all(is_result);
        let ends = !missing.is_empty() && i + 2 == turns.len() && only_results;
        interrupted.extend(missing);
        if ends {
            turns.push(Turn { assistant: true, blocks: alloc::vec![text_block(NO_RESPONSE)] });
        }
        i += 2;
    }
    interrupted
}

fn anthropic(turns: &[Turn], system: Option<String>) -> (Value, u32) {
    let messages: Vec<Value> =
        turns.iter().map(|t| json!({ "role": if t.assistant { "assistant" } else { "user" }, "content": t.blocks })).collect();
    let count = messages.len() as u32;
    let mut body = json!({ "messages": messages });
    if let Some(system) = system {
        body["system"] = system.into();
    }
    (body, count)
}

/// The text of a result's content for OpenAI's tool message, which holds text only: a
/// string, or its blocks joined, each other block a marker (`[image]`) so the model
/// knows one was there.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b["text"].as_str() {
                Some(text) if b["type"] == "text" => text.to_string(),
                _ => alloc::format!("[{}]", b["type"].as_str().unwrap_or("block")),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn openai_part(block: &Value) -> Option<Value> {
    match block["type"].as_str()? {
        "text" => Some(json!({ "type": "text", "text": block["text"] })),
        // OpenAI's chat messages take a text document as text; anything else (a PDF)
        // as a marker, so the model knows one was there.
        "document" => match block["source"]["data"].as_str() {
            Some(data) if block["source"]["type"] == "text" => Some(json!({ "type": "text", "text": data })),
            _ => Some(json!({ "type": "text", "text": "[document]" })),
        },
        "image" => {
            let source = &block["source"];
            let url = match source["type"].as_str()? {
                "base64" => alloc::format!("data:{};base64,{}", source["media_type"].as_str()?, source["data"].as_str()?),
                _ => source["url"].as_str()?.to_string(),
            };
            Some(json!({ "type": "image_url", "image_url": { "url": url } }))
        }
        _ => None,
    }
}

fn openai(turns: &[Turn], system: Option<String>) -> (Value, u32) {
    let mut messages = Vec::new();
    if let Some(system) = system {
        messages.push(json!({ "role": "system", "content": system }));
    }
    for turn in turns {
        if turn.assistant {
            let text: Vec<&str> = turn.blocks.iter().filter(|b| b["type"] == "text").filter_map(|b| b["text"].as_str()).collect();
            let calls: Vec<Value> = turn
                .blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| {
                    let arguments = b["input"].to_string();
                    json!({ "id": b["id"], "type": "function", "function": { "name": b["name"], "arguments": arguments } })
                })
                .collect();
            let mut message = json!({ "role": "assistant", "content": if text.is_empty() { Value::Null } else { text.join("\n").into() } });
            if !calls.is_empty() {
                message["tool_calls"] = calls.into();
            }
            messages.push(message);
            continue;
        }
        for result in turn.blocks.iter().filter(|b| is_result(b)) {
            messages.push(json!({ "role": "tool", "tool_call_id": result["tool_use_id"], "content": result_text(&result["content"]) }));
        }
        let parts: Vec<Value> = turn.blocks.iter().filter(|b| !is_result(b)).filter_map(openai_part).collect();
        let content = match parts.as_slice() {
            [] => continue,
            [only] if only["type"] == "text" => only["text"].clone(),
            _ => Value::Array(parts),
        };
        messages.push(json!({ "role": "user", "content": content }));
    }
    let count = messages.len() as u32;
    (json!({ "messages": messages }), count)
}

/// The estimate every token count uses ([`crate::tokens`]), over the blocks sent.
fn estimate(turns: &[Turn]) -> u64 {
    let none = alloc::collections::BTreeSet::new();
    crate::tokens::saturating_sum(turns.iter().map(|t| {
        let blocks = Value::Array(t.blocks.clone()).to_string();
        crate::tokens::content_tokens(Some(crate::support::json::Raw::valid(&blocks)), &none)
    }))
}
