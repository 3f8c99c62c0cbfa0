//! pi-coding-agent's v3 sessions: a `session` header outside the tree, then entries
//! with 8-character `id`s and `parentId`. Messages are `message` entries; Mneme's
//! bookkeeping (tombstones, markers) are `custom` entries, which pi keeps in the tree
//! and leaves out of the model's context.

use alloc::format;
use alloc::string::String;

use alloc::vec::Vec;

use serde_json::Value;

use super::{Compaction, CompactionRule, Dialect, Fork, Format, Header, Kept, Marker, Role, json, nth_uuid, stamp, tool_name};
use crate::error::Error;
use crate::message::calls::PendingCalls;
use crate::message::items::Items;
use crate::message::{Block, BlockKind, Message, Provider, Usage};
use crate::scan::{CUSTOM_PREFIX, Envelope, Line, LineType, TOMBSTONE_TYPE};

pub(crate) mod read;

pub(crate) struct Pi;

/// How pi 0.73 shows a compaction summary to the model, byte for byte.
const PI_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const PI_SUMMARY_SUFFIX: &str = "\n</summary>";

pub(crate) fn is_header(line: &Line) -> bool {
    line.env.is_session_header()
}

/// pi's entries that reach the model as a user message though they carry no
/// `message`: an extension's `custom_message`, and the `branch_summary` left where the
/// conversation came back from a branch.
pub(crate) fn is_context_entry(env: &Envelope<'_>) -> bool {
    env.line_type == LineType::Other && matches!(env.kind.get(), Some("custom_message" | "branch_summary"))
}

/// pi's usage record (it reads one from every assistant message); Mneme knows no
/// prices, so the cost is zero.
fn usage(usage: Usage) -> Value {
    serde_json::json!({
        "input": usage.input, "output": usage.output, "cacheRead": usage.cache_read, "cacheWrite": usage.cache_creation,
        "totalTokens": usage.total(),
        "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0 },
    })
}

/// Anthropic's stop reason in pi's words, as pi-ai maps it (OpenAI's finish reasons
/// come in as Anthropic's; the one with no Anthropic name, `content_filter`, as it
/// is); a refusal is an `error`, which pi does not replay.
fn stop_reason(reason: Option<&str>) -> &'static str {
    match reason {
        Some("tool_use") => "toolUse",
        Some("max_tokens") => "length",
        Some("refusal" | "sensitive" | "content_filter") => "error",
        _ => "stop",
    }
}

fn refuse(what: &str) -> Error {
    super::unsupported(Format::Pi, &format!("{what} (pi messages have no such content)"))
}

/// A reply's block in pi's shape.
fn assistant_block(block: &Block) -> Result<Value, Error> {
    let value = block.value();
    Ok(match &block.kind {
        BlockKind::Text => serde_json::json!({ "type": "text", "text": value["text"] }),
        BlockKind::Thinking => {
            let mut out = serde_json::json!({ "type": "thinking", "thinking": value["thinking"] });
            if let Some(signature) = value["signature"].as_str() {
                out["thinkingSignature"] = signature.into();
            }
            out
        }
        BlockKind::RedactedThinking => {
            serde_json::json!({ "type": "thinking", "thinking": "", "thinkingSignature": value["data"], "redacted": true })
        }
        BlockKind::ToolUse { id, name } => serde_json::json!({ "type": "toolCall", "id": id, "name": name, "arguments": value["input"] }),
        _ => return Err(refuse("an assistant block other than text, thinking or a tool call")),
    })
}

/// A prompt's or result's block in pi's shape: text, or a base64 image.
fn user_value(value: &Value) -> Result<Value, Error> {
    match value["type"].as_str() {
        Some("text") => Ok(serde_json::json!({ "type": "text", "text": value["text"] })),
        Some("image") if value["source"]["type"] == "base64" => Ok(serde_json::json!({
            "type": "image", "data": value["source"]["data"], "mimeType": value["source"]["media_type"],
        })),
        Some("image") => Err(refuse("an image by URL")),
        _ => Err(refuse("a user block other than text or an image")),
    }
}

fn user_block(block: &Block) -> Result<Value, Error> {
    user_value(&block.value())
}

/// `message` in what a pi session can hold: each block pi has no place for (a tool
/// reference in a result, a document, a server tool's block, an image by URL) as its
/// marker, `[document]`, as OpenAI's shape shows it. An export to pi writes this; an
/// append to a pi session refuses such a block instead, writing nothing.
pub(crate) fn with_markers(message: Message) -> Message {
    let marked = |value: &Value| serde_json::json!({ "type": "text", "text": crate::message::marker(value["type"].as_str()) });
    let blocks = message
        .blocks
        .into_iter()
        .map(|block| match (&block.kind, message.role) {
            (BlockKind::ToolResult { .. }, _) => {
                let mut value = block.value();
                if let Value::Array(content) = &mut value["content"] {
                    for part in content.iter_mut().filter(|part| user_value(part).is_err()) {
                        *part = marked(part);
                    }
                }
                crate::message::input::recorded_block(&value)
            }
            (_, Role::Assistant) if assistant_block(&block).is_ok() => block,
            (_, Role::User) if user_block(&block).is_ok() => block,
            _ => crate::message::input::recorded_block(&marked(&block.value())),
        })
        .collect();
    Message { blocks, ..message }
}

/// pi's ids are 8 hex digits, the start of a random UUID: the host's uuid's start when
/// it is random (a version 4 UUID, as pi's own); else 8 hex digits of its hash, since
/// another id's start need not differ from one entry to the next (a version 7 UUID
/// starts with its clock, the same for a minute).
pub(crate) fn entry_id(uuid: &str) -> String {
    let bytes = uuid.as_bytes();
    let random = bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| if matches!(i, 8 | 13 | 18 | 23) { *b == b'-' } else { b.is_ascii_hexdigit() })
        && bytes[14] == b'4';
    match uuid.get(..8).filter(|_| random) {
        Some(start) => start.into(),
        None => crate::support::ids::short_id(uuid),
    }
}

/// A new entry's id: [`entry_id`] of its uuid, unless one of the session's lines has it
/// (see [`super::TakenIds`]); then 8 hex digits of the uuid's hash with a count, the
/// first that is free (the whole uuid, as pi falls back to, if none of a thousand is).
fn fresh_id(header: &Header) -> String {
    let id = entry_id(header.uuid);
    let Some(taken) = header.taken.filter(|taken| taken.clash(&id)) else { return id };
    (1u32..=1000)
        .map(|n| crate::support::ids::short_id(&alloc::format!("{}#{n}", header.uuid)))
        .find(|id| !taken.clash(id))
        .unwrap_or_else(|| String::from(header.uuid))
}

impl Pi {
    fn entry(&self, header: &Header, kind: &str) -> serde_json::Value {
        serde_json::json!({ "type": kind, "id": fresh_id(header), "parentId": header.parent, "timestamp": header.timestamp })
    }
}

impl Dialect for Pi {
    /// pi's layout: a reply is one `message` entry with all its blocks; each tool
    /// result is a `toolResult` message entry of its own; entries chain in order.
    fn turn(&self, header: &Header, messages: &[Message], calls: &PendingCalls) -> Result<String, Error> {
        let mut out = Vec::new();
        let mut parent: Option<String> = header.parent.map(String::from);
        let mut n = 0u32;
        let mut push = |out: &mut Vec<String>, header: &Header, message: Value| -> Result<(), Error> {
            let uuid = nth_uuid(header.uuid, n);
            n += 1;
            let mut line = self.entry(&Header { parent: parent.as_deref(), uuid: &uuid, ..*header }, "message");
            parent = line["id"].as_str().map(String::from);
            line["message"] = message;
            out.push(json(&line)?);
            Ok(())
        };
        for message in messages {
            let stamp = stamp(message);
            let header = &header.said_at(message.meta.at, stamp.as_deref());
            match message.role {
                Role::Assistant => {
                    let content = message.blocks.iter().map(assistant_block).collect::<Result<Vec<_>, _>>()?;
                    // pi names the API a reply came from; a reply given without its model
                    // is Mneme's own.
                    let (api, provider, model) = match (message.meta.api, &message.meta.model) {
                        (Some(Provider::Anthropic), Some(model)) => ("anthropic-messages", "anthropic", model.as_str()),
                        (Some(Provider::Openai), Some(model)) => ("openai-completions", "openai", model.as_str()),
                        _ => ("mneme", "mneme", "mneme"),
                    };
                    let mut wire = serde_json::json!({
                        "role": "assistant", "content": content, "api": api, "provider": provider, "model": model,
                        "usage": usage(message.meta.usage.unwrap_or_default()),
                        "stopReason": stop_reason(message.meta.stop_reason.as_deref().or_else(|| {
                            // A reply given without one (OpenAI's shape has no field for it)
                            // stopped for its calls when it made some: pi reads "stop" as done.
                            message.blocks.iter().any(|b| matches!(b.kind, BlockKind::ToolUse { .. })).then_some("tool_use")
                        })),
                        "timestamp": header.now_ms,
                    });
                    if let Some(id) = &message.meta.id {
                        wire["responseId"] = id.as_str().into();
                    }
                    if wire["stopReason"] == "error" {
                        let reason = message.meta.stop_reason.as_deref().unwrap_or_default();
                        wire["errorMessage"] = alloc::format!("Provider stop reason: {reason}").into();
                    }
                    push(&mut out, header, wire)?;
                }
                Role::User => {
                    let mut rest = Vec::new();
                    for block in &message.blocks {
                        let BlockKind::ToolResult { tool_use_id } = &block.kind else {
                            rest.push(user_block(block)?);
                            continue;
                        };
                        let value = block.value();
                        let content = match &value["content"] {
                            Value::String(text) => serde_json::json!([{ "type": "text", "text": text }]),
                            Value::Array(blocks) => Value::Array(blocks.iter().map(user_value).collect::<Result<_, _>>()?),
                            _ => serde_json::json!([]),
                        };
                        push(
                            &mut out,
                            header,
                            serde_json::json!({
                                "role": "toolResult", "toolCallId": tool_use_id,
                                "toolName": tool_name(messages, calls, tool_use_id),
                                "content": content, "isError": value["is_error"] == Value::Bool(true), "timestamp": header.now_ms,
                            }),
                        )?;
                    }
                    if !rest.is_empty() {
                        push(&mut out, header, serde_json::json!({ "role": "user", "content": rest, "timestamp": header.now_ms }))?;
                    }
                }
            }
        }
        Ok(super::record(out))
    }

    fn items(&self, _: &Header, _: &Items, _: &PendingCalls) -> Result<String, Error> {
        Err(super::unsupported(
            Format::Pi,
            "OpenAI Responses items (a session of items is kept in Claude Code's format: start it with them)",
        ))
    }

    fn tombstone(&self, header: &Header, target: &str) -> Result<String, Error> {
        let mut line = self.entry(header, "custom");
        line["customType"] = TOMBSTONE_TYPE.into();
        line["data"] = serde_json::json!({ "deleted_uuid": target });
        json(&line)
    }

    fn marker(&self, header: &Header, marker: Marker, reason: Option<&str>) -> Result<String, Error> {
        let mut line = self.entry(header, "custom");
        line["customType"] = format!("{CUSTOM_PREFIX}{}", marker.kind()).into();
        line["data"] = match reason {
            Some(reason) => serde_json::json!({ "reason": reason }),
            None => serde_json::json!({}),
        };
        json(&line)
    }

    fn compaction(&self, header: &Header, compaction: &Compaction) -> Result<String, Error> {
        let mut line = self.entry(header, "compaction");
        line["summary"] = compaction.summary.into();
        line["firstKeptEntryId"] = compaction.first_kept.into();
        line["tokensBefore"] = compaction.tokens_before.into();
        json(&line)
    }

    /// A `session` header whose `parentSession` names the old session (as `/fork`
    /// writes it), then the `compaction` entry as the first entry: pi resumes from it.
    fn rollover(&self, header: &Header, compaction: &Compaction, fork: &Fork) -> Result<String, Error> {
        let entry = self.compaction(&Header { parent: None, ..*header }, compaction)?;
        Ok(format!("{}\n{entry}", json(&forked_header(fork))?))
    }

    fn prune(&self, _: &Header, _: &[&str], _: u64, _: u64) -> Result<String, Error> {
        Err(super::unsupported(Format::Pi, "clearing tool results without a summary (pi has no entry for it)"))
    }

    fn shown_summary(&self, summary: &str) -> String {
        format!("{PI_SUMMARY_PREFIX}{summary}{PI_SUMMARY_SUFFIX}")
    }

    /// pi's `compaction` entry: a summary that replaces everything before
    /// `firstKeptEntryId`.
    fn is_compaction(&self, env: &Envelope<'_>) -> bool {
        env.line_type == LineType::Compaction && env.rare().summary.get().is_some()
    }

    /// What pi keeps from `firstKeptEntryId` on is before the compaction on the chain,
    /// and with it the calls of the reply the conversation ended with: a result may
    /// still answer them.
    fn ends_pending_calls(&self, env: &Envelope<'_>) -> bool {
        self.is_compaction(env) && env.rare().first_kept_entry_id.get().is_none()
    }

    /// pi's `compaction` entry keeps the chain from `firstKeptEntryId` on (format v1,
    /// without ids: from `firstKeptEntryIndex`, which counts lines from 0).
    fn compaction_rule<'l>(&self, env: &'l Envelope<'_>) -> Option<CompactionRule<'l>> {
        let rare = env.rare();
        let kept =
            Kept::From { id: rare.first_kept_entry_id.get(), line: rare.first_kept_entry_index.0.map(|index| index.saturating_add(1)) };
        self.is_compaction(env).then(|| CompactionRule { format: Format::Pi, kept, summary: rare.summary.get() })
    }

    fn agent_link(&self, _: &Header, _: &str, _: &str) -> Result<String, Error> {
        Err(super::unsupported(Format::Pi, "sub-agent transcripts (pi keeps none)"))
    }

    /// pi-ai's (`transform-messages.js`): an error result saying so, and no reply of
    /// its own after it.
    fn interrupted_call(&self) -> super::Interrupted {
        super::Interrupted { result: "No result provided", reply: None }
    }

    /// pi-ai's (`transform-messages.js`): kept for the very model (by its exact name;
    /// pi also asks the provider and API, which a request here does not name), sent as
    /// text to any other.
    fn replayed_thinking(&self, written_by: Option<&str>, sent_to: &str) -> super::Replay {
        if written_by == Some(sent_to) { super::Replay::Kept } else { super::Replay::AsText }
    }

    /// As pi's `/fork` writes one: a new `session` header whose `parentSession` names
    /// the original, then the entries of the path, unchanged (their ids chain already).
    fn fork(&self, chain: &[&Line], fork: &Fork) -> Result<String, Error> {
        let mut out = alloc::vec![json(&forked_header(fork))?];
        // Each entry continues the one before it: an entry left out (tombstoned) must
        // not cut the copy's chain.
        let mut parent: Option<&str> = None;
        for line in chain {
            let mut value: Value = serde_json::from_str(line.raw)
                .map_err(|e| Error::InvalidArgument(format!("internal: a line to fork does not parse: {e}")))?;
            if let Some(map) = value.as_object_mut() {
                map.insert("parentId".into(), parent.into());
            }
            out.push(json(&value)?);
            parent = line.env.uuid().or(parent);
        }
        Ok(super::record(out))
    }
}

/// The `session` header of a session that came from another: `parentSession` names
/// the origin's file, as pi's `/fork` writes it.
fn forked_header(fork: &Fork) -> Value {
    serde_json::json!({
        "type": "session", "version": 3, "id": fork.id, "timestamp": fork.timestamp, "cwd": fork.cwd,
        "parentSession": fork.origin_key,
    })
}
