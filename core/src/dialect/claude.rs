//! Claude Code's session JSONL: `uuid` / `parentUuid` entries, `compact_boundary` +
//! `isCompactSummary` compactions, `microcompact_boundary` for cleared tool results.
//! Mneme's own bookkeeping (tombstones, markers) are lines of their own types, which
//! Claude Code skips.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::Write;

use serde::Serialize;
use serde_json::value::RawValue;

use super::{Compaction, CompactionRule, Dialect, Fork, Format, Header, Kept, Marker, Role, json, nth_uuid, stamp};
use crate::error::Error;
use crate::message::calls::PendingCalls;
use crate::message::items::Items;
use crate::message::{Block, BlockKind, Message as Message_, Usage};
use crate::scan::{Envelope, Line, LineType};
use crate::support::json::{Raw, push_string};
use crate::support::lenient::Str;

pub(crate) struct Claude;

/// What Claude Code writes before a compaction summary.
pub(crate) const SUMMARY_PREFIX: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n";

/// A boundary's `compactMetadata.preservedSegment`.
pub(crate) struct PreservedSegment {
    pub head: String,
    pub tail: String,
    /// The summary the head continues from.
    pub anchor: Option<String>,
}

fn preserved_segment(metadata: Option<Raw<'_>>) -> Option<PreservedSegment> {
    #[derive(serde::Deserialize)]
    struct Metadata<'a> {
        #[serde(rename = "preservedSegment", borrow)]
        preserved_segment: Option<Segment<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Segment<'a> {
        #[serde(rename = "headUuid", default, borrow)]
        head: Str<'a>,
        #[serde(rename = "tailUuid", default, borrow)]
        tail: Str<'a>,
        #[serde(rename = "anchorUuid", default, borrow)]
        anchor: Str<'a>,
    }
    let metadata: Metadata = serde_json::from_str(metadata?.get()).ok()?;
    let segment = metadata.preserved_segment?;
    Some(PreservedSegment {
        head: segment.head.get()?.to_string(),
        tail: segment.tail.get()?.to_string(),
        anchor: segment.anchor.get().map(ToString::to_string),
    })
}

/// A message line, in Claude Code's field order. Written by hand, not through serde:
/// every append writes one, and serde's field-by-field escaping cost more than the rest
/// of the append's encoding.
struct MessageLine<'a> {
    parent_uuid: Option<&'a str>,
    is_sidechain: bool,
    user_type: &'static str,
    cwd: &'a str,
    session_id: &'a str,
    version: &'static str,
    entrypoint: &'static str,
    kind: &'static str,
    message: Message<'a>,
    /// Set on the summary a compaction writes (Claude Code marks it both ways).
    is_compact_summary: Option<bool>,
    is_visible_in_transcript_only: Option<bool>,
    /// A sub-agent's line: which sub-agent.
    agent_id: Option<&'a str>,
    /// On a tool result: the entry that holds the call it answers.
    source_tool_assistant_uuid: Option<&'a str>,
    /// The OpenAI Responses item the line was added as, verbatim (valid JSON, one line).
    responses_item: Option<&'a str>,
    uuid: &'a str,
    timestamp: &'a str,
}

struct Message<'a> {
    id: Option<&'a str>,
    kind: Option<&'static str>,
    role: &'static str,
    model: Option<&'a str>,
    content: Content<'a>,
    stop_reason: Option<&'a str>,
    usage: Option<Usage>,
}

/// Claude Code writes a user prompt as a plain string and everything else as blocks.
enum Content<'a> {
    Text(&'a str),
    /// Text as a JSON string (quotes included), escaped as `push_string` escapes it.
    Escaped(&'a str),
    /// Each block's JSON, valid by construction (serialised, or checked on input); the
    /// read-back of every record written would refuse a line that is not.
    Blocks(Vec<&'a str>),
}

impl<'a> Message<'a> {
    fn plain(role: Role, content: Content<'a>) -> Self {
        Message { id: None, kind: None, role: role.as_str(), model: None, content, stop_reason: None, usage: None }
    }
}

impl MessageLine<'_> {
    fn json(&self) -> String {
        let content_len = match &self.message.content {
            Content::Text(text) | Content::Escaped(text) => text.len(),
            Content::Blocks(blocks) => blocks.iter().map(|block| block.len() + 1).sum(),
        };
        let mut out = String::with_capacity(400 + content_len + self.cwd.len());
        let field = |out: &mut String, key: &str, value: &str| {
            out.push_str(key);
            push_string(out, value);
        };
        let optional = |out: &mut String, key: &str, value: Option<&str>| {
            if let Some(value) = value {
                field(out, key, value);
            }
        };
        let flag = |out: &mut String, key: &str, value: bool| {
            out.push_str(key);
            out.push_str(if value { "true" } else { "false" });
        };
        out.push_str("{\"parentUuid\":");
        match self.parent_uuid {
            Some(parent) => push_string(&mut out, parent),
            None => out.push_str("null"),
        }
        flag(&mut out, ",\"isSidechain\":", self.is_sidechain);
        field(&mut out, ",\"userType\":", self.user_type);
        field(&mut out, ",\"cwd\":", self.cwd);
        field(&mut out, ",\"sessionId\":", self.session_id);
        field(&mut out, ",\"version\":", self.version);
        field(&mut out, ",\"entrypoint\":", self.entrypoint);
        field(&mut out, ",\"type\":", self.kind);
        let message = &self.message;
        out.push_str(",\"message\":{");
        let mut first = true;
        let mut key = |out: &mut String, key: &str| {
            if !core::mem::take(&mut first) {
                out.push(',');
            }
            out.push_str(key);
        };
        if let Some(id) = message.id {
            key(&mut out, "\"id\":");
            push_string(&mut out, id);
        }
        if let Some(kind) = message.kind {
            key(&mut out, "\"type\":");
            push_string(&mut out, kind);
        }
        key(&mut out, "\"role\":");
        push_string(&mut out, message.role);
        if let Some(model) = message.model {
            key(&mut out, "\"model\":");
            push_string(&mut out, model);
        }
        key(&mut out, "\"content\":");
        match &message.content {
            Content::Text(text) => push_string(&mut out, text),
            Content::Escaped(json) => out.push_str(json),
            Content::Blocks(blocks) => {
                out.push('[');
                for (n, block) in blocks.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    out.push_str(block);
                }
                out.push(']');
            }
        }
        if let Some(reason) = message.stop_reason {
            key(&mut out, "\"stop_reason\":");
            push_string(&mut out, reason);
        }
        if let Some(usage) = &message.usage {
            key(&mut out, "\"usage\":");
            let _ = write!(
                out,
                "{{\"input_tokens\":{},\"cache_creation_input_tokens\":{},\"cache_read_input_tokens\":{},\"output_tokens\":{}}}",
                usage.input, usage.cache_creation, usage.cache_read, usage.output
            );
        }
        out.push('}');
        if let Some(summary) = self.is_compact_summary {
            flag(&mut out, ",\"isCompactSummary\":", summary);
        }
        if let Some(only) = self.is_visible_in_transcript_only {
            flag(&mut out, ",\"isVisibleInTranscriptOnly\":", only);
        }
        optional(&mut out, ",\"agentId\":", self.agent_id);
        optional(&mut out, ",\"sourceToolAssistantUUID\":", self.source_tool_assistant_uuid);
        if let Some(item) = self.responses_item {
            out.push_str(",\"responsesItem\":");
            out.push_str(item);
        }
        field(&mut out, ",\"uuid\":", self.uuid);
        field(&mut out, ",\"timestamp\":", self.timestamp);
        out.push('}');
        out
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SystemLine<'a> {
    parent_uuid: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    logical_parent_uuid: Option<&'a str>,
    is_sidechain: bool,
    user_type: &'static str,
    cwd: &'a str,
    session_id: &'a str,
    version: &'static str,
    entrypoint: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    subtype: &'static str,
    content: &'static str,
    level: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    compact_metadata: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    microcompact_metadata: Option<serde_json::Value>,
    /// A rollover's link to the session it continues, as forks carry it.
    #[serde(skip_serializing_if = "Option::is_none")]
    forked_from: Option<serde_json::Value>,
    uuid: &'a str,
    timestamp: &'a str,
}

impl<'a> MessageLine<'a> {
    fn new(header: &'a Header, role: Role, message: Message<'a>) -> Self {
        MessageLine {
            parent_uuid: header.parent,
            is_sidechain: header.sidechain,
            user_type: "external",
            cwd: header.cwd,
            session_id: header.session_id,
            version: crate::VERSION,
            entrypoint: "mneme",
            kind: role.as_str(),
            message,
            is_compact_summary: None,
            is_visible_in_transcript_only: None,
            agent_id: header.agent_id,
            source_tool_assistant_uuid: None,
            responses_item: None,
            uuid: header.uuid,
            timestamp: header.timestamp,
        }
    }
}

impl<'a> SystemLine<'a> {
    fn new(header: &'a Header, subtype: &'static str, content: &'static str) -> Self {
        SystemLine {
            parent_uuid: header.parent,
            logical_parent_uuid: None,
            is_sidechain: header.sidechain,
            user_type: "external",
            cwd: header.cwd,
            session_id: header.session_id,
            version: crate::VERSION,
            entrypoint: "mneme",
            kind: "system",
            subtype,
            content,
            level: "info",
            compact_metadata: None,
            microcompact_metadata: None,
            forked_from: None,
            uuid: header.uuid,
            timestamp: header.timestamp,
        }
    }
}

/// Claude Code's `compact_boundary`: no parent, `logicalParentUuid` the conversation's
/// leaf before it, and the lines after it marked `isCompactSummary` its summary.
pub(crate) fn is_boundary(env: &Envelope<'_>) -> bool {
    env.line_type == LineType::System && env.rare().subtype.get() == Some("compact_boundary")
}

/// The calls whose results a `microcompact_boundary` cleared (its
/// `compactedToolIds`); none for any other line.
pub(crate) fn cleared_tool_ids(env: &Envelope<'_>) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        #[serde(rename = "compactedToolIds", default)]
        ids: Vec<String>,
    }
    if env.line_type != LineType::System || env.rare().subtype.get() != Some("microcompact_boundary") {
        return Vec::new();
    }
    let metadata = env.rare().microcompact_metadata;
    metadata.and_then(|m| serde_json::from_str::<Metadata>(m.get()).ok()).map_or_else(Vec::new, |m| m.ids)
}

impl Dialect for Claude {
    /// Claude Code's layout: a reply is one line per block sharing `message.id` (and
    /// its `usage`); each tool call is followed by the line of its result when the turn
    /// has it (as Claude Code writes results of tools it runs while the reply streams),
    /// chained to the call; the rest of a user message follows as one line.
    fn turn(&self, header: &Header, messages: &[Message_], calls: &PendingCalls) -> Result<String, Error> {
        let mut out: Vec<String> = Vec::new();
        let mut parent: Option<String> = header.parent.map(String::from);
        let mut n = 0u32;
        let mut next_id = || {
            n += 1;
            nth_uuid(header.uuid, n - 1)
        };
        let mut call_lines: BTreeMap<String, String> = calls.calls.iter().filter_map(|c| Some((c.id.clone(), c.line.clone()?))).collect();
        let mut written_early: BTreeSet<(usize, usize)> = BTreeSet::new();
        let stamps: Vec<Option<String>> = messages.iter().map(stamp).collect();
        let headers: Vec<Header> = messages.iter().zip(&stamps).map(|(m, s)| header.said_at(m.meta.at, s.as_deref())).collect();
        for (i, (message, header)) in messages.iter().zip(&headers).enumerate() {
            match message.role {
                Role::Assistant => {
                    let derived;
                    let message_id = match (&message.meta.id, message.blocks.len() > 1) {
                        (Some(id), _) => Some(id.as_str()),
                        (None, true) => {
                            derived = format!("msg_mneme_{}", crate::support::ids::derived_id(&[header.uuid], i as i64));
                            Some(derived.as_str())
                        }
                        (None, false) => None,
                    };
                    for block in &message.blocks {
                        let uuid = next_id();
                        let line_header = Header { parent: parent.as_deref(), uuid: &uuid, ..*header };
                        let wire = Message {
                            id: message_id,
                            kind: message_id.map(|_| "message"),
                            model: message.meta.model.as_deref(),
                            stop_reason: message.meta.stop_reason.as_deref(),
                            usage: message.meta.usage,
                            ..Message::plain(Role::Assistant, Content::Blocks(alloc::vec![block.json.as_str()]))
                        };
                        out.push(MessageLine::new(&line_header, Role::Assistant, wire).json());
                        parent = Some(uuid.clone());
                        let BlockKind::ToolUse { id, .. } = &block.kind else { continue };
                        call_lines.insert(id.clone(), uuid.clone());
                        let Some(next) = messages.get(i + 1).filter(|m| m.role == Role::User) else { continue };
                        let answer = next
                            .blocks
                            .iter()
                            .enumerate()
                            .find(|(_, b)| matches!(&b.kind, BlockKind::ToolResult { tool_use_id } if tool_use_id == id));
                        if let Some((j, result)) = answer {
                            let result_id = next_id();
                            out.push(result_line(headers.get(i + 1).unwrap_or(header), parent.as_deref(), &result_id, result, Some(&uuid)));
                            parent = Some(result_id);
                            written_early.insert((i + 1, j));
                        }
                    }
                }
                Role::User => {
                    let mut rest: Vec<&Block> = Vec::new();
                    for (j, block) in message.blocks.iter().enumerate() {
                        if written_early.contains(&(i, j)) {
                            continue;
                        }
                        match &block.kind {
                            BlockKind::ToolResult { tool_use_id } => {
                                let result_id = next_id();
                                let source = call_lines.get(tool_use_id).map(String::as_str);
                                out.push(result_line(header, parent.as_deref(), &result_id, block, source));
                                parent = Some(result_id);
                            }
                            _ => rest.push(block),
                        }
                    }
                    if rest.is_empty() {
                        continue;
                    }
                    let uuid = next_id();
                    let line_header = Header { parent: parent.as_deref(), uuid: &uuid, ..*header };
                    // One text block is written as the content's string: copied from the
                    // block when escaped as it would be written (a block Mneme serialised),
                    // else read and written again.
                    let escaped = match message.blocks.as_slice() {
                        [block] => block.text_json().filter(|json| crate::support::json::escaped_as_written(json)),
                        _ => None,
                    };
                    let text = if escaped.is_none() && message.blocks.len() == 1 { message.plain_text() } else { None };
                    let content = match (escaped, &text) {
                        (Some(json), _) => Content::Escaped(json),
                        (None, Some(text)) => Content::Text(text),
                        (None, None) => Content::Blocks(rest.iter().map(|block| block.json.as_str()).collect()),
                    };
                    out.push(MessageLine::new(&line_header, Role::User, Message::plain(Role::User, content)).json());
                    parent = Some(uuid);
                }
            }
        }
        Ok(super::record(out))
    }

    /// A line per item, each chained to the one before: the message's one block (a
    /// prompt's text as the content's string, as Claude Code writes it), the item
    /// verbatim beside it as `responsesItem`.
    fn items(&self, header: &Header, items: &Items, calls: &PendingCalls) -> Result<String, Error> {
        let mut out: Vec<String> = Vec::with_capacity(items.messages.len());
        let mut parent: Option<String> = header.parent.map(String::from);
        let mut call_lines: BTreeMap<String, String> = calls.calls.iter().filter_map(|c| Some((c.id.clone(), c.line.clone()?))).collect();
        for (n, (message, item)) in items.messages.iter().zip(&items.json).enumerate() {
            let uuid = nth_uuid(header.uuid, n as u32);
            let line_header = Header { parent: parent.as_deref(), uuid: &uuid, ..*header };
            let text = match (message.role, message.blocks.as_slice()) {
                (Role::User, [block]) if block.kind == BlockKind::Text => message.plain_text(),
                _ => None,
            };
            let content = match &text {
                Some(text) => Content::Text(text),
                None => Content::Blocks(message.blocks.iter().map(|block| block.json.as_str()).collect()),
            };
            let source = message.blocks.iter().find_map(|block| match &block.kind {
                BlockKind::ToolResult { tool_use_id } => call_lines.get(tool_use_id).cloned(),
                _ => None,
            });
            let line = MessageLine {
                source_tool_assistant_uuid: source.as_deref(),
                responses_item: Some(item),
                ..MessageLine::new(&line_header, message.role, Message::plain(message.role, content))
            };
            out.push(line.json());
            for block in &message.blocks {
                if let BlockKind::ToolUse { id, .. } = &block.kind {
                    call_lines.insert(id.clone(), uuid.clone());
                }
            }
            parent = Some(uuid);
        }
        Ok(super::record(out))
    }

    fn tombstone(&self, header: &Header, target: &str) -> Result<String, Error> {
        json(&serde_json::json!({
            "type": "tombstone", "deleted_uuid": target, "timestamp": header.timestamp, "sessionId": header.session_id,
        }))
    }

    fn marker(&self, header: &Header, marker: Marker, reason: Option<&str>) -> Result<String, Error> {
        let mut line = serde_json::json!({ "type": marker.kind(), "timestamp": header.timestamp, "sessionId": header.session_id });
        if let Some(reason) = reason {
            line["reason"] = reason.into();
        }
        json(&line)
    }

    /// A `compact_boundary` (no parent; `logicalParentUuid` is the old leaf; its
    /// `preservedSegment` names the kept entries) and the summary as an
    /// `isCompactSummary` user entry under it — one record, so a crash leaves neither
    /// or both.
    fn compaction(&self, header: &Header, compaction: &Compaction) -> Result<String, Error> {
        compaction_lines(header, compaction, None)
    }

    /// The compaction's lines, the boundary carrying the link Claude Code's forks
    /// carry (`forkedFrom`: the session and its last message) besides its
    /// `logicalParentUuid`.
    fn rollover(&self, header: &Header, compaction: &Compaction, fork: &Fork) -> Result<String, Error> {
        let forked_from = serde_json::json!({ "sessionId": fork.origin_id, "messageUuid": header.parent });
        compaction_lines(header, compaction, Some(forked_from))
    }

    fn prune(&self, header: &Header, tool_ids: &[&str], tokens_before: u64, tokens_saved: u64) -> Result<String, Error> {
        json(&SystemLine {
            microcompact_metadata: Some(serde_json::json!({
                "trigger": "auto", "preTokens": tokens_before, "tokensSaved": tokens_saved, "compactedToolIds": tool_ids,
            })),
            ..SystemLine::new(header, "microcompact_boundary", "Tool results cleared")
        })
    }

    fn shown_summary(&self, summary: &str) -> String {
        format!("{SUMMARY_PREFIX}{summary}")
    }

    fn is_compaction(&self, env: &Envelope<'_>) -> bool {
        is_boundary(env)
    }

    /// Claude Code's `compact_boundary` keeps the segment its `compactMetadata`
    /// preserved, if any; the summary is the lines after it.
    fn compaction_rule<'l>(&self, env: &'l Envelope<'_>) -> Option<CompactionRule<'l>> {
        let kept = || preserved_segment(env.rare().compact_metadata).map_or(Kept::Nothing, Kept::Segment);
        self.is_compaction(env).then(|| CompactionRule { format: Format::Claude, kept: kept(), summary: None })
    }

    /// Claude Code's link to a running sub-agent: a `progress` entry under the call
    /// that started it, naming the sub-agent.
    fn agent_link(&self, header: &Header, agent_id: &str, call: &str) -> Result<String, Error> {
        json(&serde_json::json!({
            "parentUuid": header.parent, "isSidechain": false, "userType": "external", "cwd": header.cwd,
            "sessionId": header.session_id, "version": crate::VERSION, "entrypoint": "mneme", "type": "progress",
            "data": { "type": "agent_progress", "agentId": agent_id },
            "toolUseID": format!("agent_{agent_id}"), "parentToolUseID": call,
            "uuid": header.uuid, "timestamp": header.timestamp,
        }))
    }

    /// As `claude --fork-session` writes a fork: every line of the chain with the new
    /// `sessionId`, chained to the line before it (a compaction boundary keeps no
    /// parent, and continues the line before it as its logical parent; progress lines
    /// are no parent), out of any sidechain, with `forkedFrom` naming the original.
    /// Each field but those is copied as its text, so what a line holds comes back as
    /// it was written (an item's `responsesItem`, key order and all).
    fn fork(&self, chain: &[&Line], fork: &Fork) -> Result<String, Error> {
        let raw = |value: serde_json::Value| {
            serde_json::value::to_raw_value(&value).map_err(|e| Error::InvalidArgument(format!("internal: a forked field: {e}")))
        };
        let mut out = Vec::with_capacity(chain.len());
        let mut parent: Option<String> = None;
        for line in chain {
            let mut map = match serde_json::from_str::<BTreeMap<String, Box<RawValue>>>(line.raw) {
                Ok(map) => map,
                // A line that is JSON but no object is no entry to chain.
                Err(_) if !line.raw.trim_start().starts_with('{') && serde_json::from_str::<&RawValue>(line.raw).is_ok() => continue,
                Err(e) => return Err(Error::InvalidArgument(format!("internal: a line to fork does not parse: {e}"))),
            };
            map.insert("sessionId".into(), raw(fork.id.into())?);
            map.insert("isSidechain".into(), raw(false.into())?);
            if is_boundary(&line.env) {
                map.insert("parentUuid".into(), raw(serde_json::Value::Null)?);
                map.insert("logicalParentUuid".into(), raw(parent.clone().into())?);
            } else {
                map.insert("parentUuid".into(), raw(parent.clone().into())?);
            }
            if let Some(uuid) = line.env.uuid() {
                map.insert("forkedFrom".into(), raw(serde_json::json!({ "sessionId": fork.origin_id, "messageUuid": uuid }))?);
                if line.env.kind() != "progress" {
                    parent = Some(uuid.into());
                }
            }
            out.push(json(&map)?);
        }
        Ok(super::record(out))
    }
}

/// A `compact_boundary` and the `isCompactSummary` entry under it; `forked_from` links
/// a rolled-over session to the one it continues.
fn compaction_lines(header: &Header, compaction: &Compaction, forked_from: Option<serde_json::Value>) -> Result<String, Error> {
    let trigger = if compaction.manual { "manual" } else { "auto" };
    let mut metadata =
        serde_json::json!({ "trigger": trigger, "preTokens": compaction.tokens_before, "postTokens": compaction.tokens_after });
    if let (Some(head), Some(tail)) = (compaction.first_kept, header.parent) {
        metadata["preservedSegment"] = serde_json::json!({ "headUuid": head, "anchorUuid": compaction.summary_uuid, "tailUuid": tail });
    }
    let boundary = SystemLine {
        parent_uuid: None,
        logical_parent_uuid: header.parent,
        compact_metadata: Some(metadata),
        forked_from,
        ..SystemLine::new(header, "compact_boundary", "Conversation compacted")
    };
    let text = format!("{SUMMARY_PREFIX}{}", compaction.summary);
    let summary_header = Header { parent: Some(header.uuid), uuid: compaction.summary_uuid, ..*header };
    let summary = MessageLine {
        is_compact_summary: Some(true),
        is_visible_in_transcript_only: Some(true),
        ..MessageLine::new(&summary_header, Role::User, Message::plain(Role::User, Content::Text(&text)))
    };
    Ok(format!("{}\n{}", json(&boundary)?, summary.json()))
}

/// A tool result as a user line of its own, chained to `parent`; `source` is the line
/// that holds the call.
fn result_line(header: &Header, parent: Option<&str>, uuid: &str, block: &Block, source: Option<&str>) -> String {
    let line_header = Header { parent, uuid, ..*header };
    let content = Content::Blocks(alloc::vec![block.json.as_str()]);
    MessageLine { source_tool_assistant_uuid: source, ..MessageLine::new(&line_header, Role::User, Message::plain(Role::User, content)) }
        .json()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header<'a>(agent_id: Option<&'a str>) -> Header<'a> {
        Header {
            session_id: "s\"1",
            parent: Some("p"),
            sidechain: true,
            uuid: "u",
            now_ms: 0,
            timestamp: "2026-01-01T00:00:00.000Z",
            cwd: "C:\\dev\n",
            agent_id,
            taken: None,
        }
    }

    /// A user's one text block is the line's string content, whether its JSON is copied
    /// (escaped as it would be written) or read and written again (escaped otherwise).
    #[test]
    fn a_lone_text_block_is_written_as_string_content_copied_or_not() {
        let text = "quote \" backslash \\ newline \n control \u{1} é 😀 \u{7f}";
        let serialised = crate::message::Block::text(text);
        let written_otherwise = crate::message::Block { kind: BlockKind::Text, json: String::from(r#"{"type":"text","text":"\u00e9\/"}"#) };
        for (block, expected) in [(serialised, text), (written_otherwise, "é/")] {
            let message = crate::message::Message { role: Role::User, blocks: alloc::vec![block], meta: Default::default() };
            let record = Claude.turn(&header(None), core::slice::from_ref(&message), &PendingCalls::default()).unwrap();
            let line: serde_json::Value = serde_json::from_str(&record).unwrap();
            assert_eq!(line["message"]["content"], expected, "{record}");
            let mut content = String::new();
            push_string(&mut content, expected);
            assert!(record.contains(&alloc::format!("\"content\":{content}")), "{record}");
        }
    }

    /// The hand-written line is the JSON serde would write for it: every field, in order.
    #[test]
    fn a_message_line_is_the_json_of_its_fields_in_claude_codes_order() {
        let header = header(Some("a1"));
        let usage = Usage { input: 1, output: 2, cache_read: 3, cache_creation: 4 };
        let message = Message {
            id: Some("msg_1"),
            kind: Some("message"),
            model: Some("claude"),
            stop_reason: Some("tool_use"),
            usage: Some(usage),
            ..Message::plain(
                Role::Assistant,
                Content::Blocks(alloc::vec![r#"{"type":"text","text":"a"}"#, r#"{"type":"text","text":"b"}"#]),
            )
        };
        let line = MessageLine {
            is_compact_summary: Some(true),
            is_visible_in_transcript_only: Some(false),
            source_tool_assistant_uuid: Some("src"),
            ..MessageLine::new(&header, Role::Assistant, message)
        };
        let expected = serde_json::json!({
            "parentUuid": "p", "isSidechain": true, "userType": "external", "cwd": "C:\\dev\n", "sessionId": "s\"1",
            "version": crate::VERSION, "entrypoint": "mneme", "type": "assistant",
            "message": {
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
                "content": [{ "type": "text", "text": "a" }, { "type": "text", "text": "b" }],
                "stop_reason": "tool_use",
                "usage": { "input_tokens": 1, "cache_creation_input_tokens": 4, "cache_read_input_tokens": 3, "output_tokens": 2 }
            },
            "isCompactSummary": true, "isVisibleInTranscriptOnly": false, "agentId": "a1", "sourceToolAssistantUUID": "src",
            "uuid": "u", "timestamp": "2026-01-01T00:00:00.000Z"
        });
        let json = line.json();
        assert_eq!(serde_json::from_str::<serde_json::Value>(&json).ok(), Some(expected), "{json}");
        let keys =
            ["parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "entrypoint", "type", "message", "isCompactSummary"];
        let at: Vec<usize> = keys.iter().filter_map(|key| json.find(&alloc::format!("\"{key}\":"))).collect();
        assert!(at.len() == keys.len() && at.is_sorted(), "{json}");
        let tail = ["\"agentId\":", "\"sourceToolAssistantUUID\":", "\"uuid\":", "\"timestamp\":"].map(|key| json.rfind(key));
        assert!(tail.iter().all(Option::is_some) && tail.is_sorted(), "{json}");

        let plain = MessageLine::new(&self::header(None), Role::User, Message::plain(Role::User, Content::Text("hi\u{1}"))).json();
        assert_eq!(
            plain,
            alloc::format!(
                r#"{{"parentUuid":"p","isSidechain":true,"userType":"external","cwd":"C:\\dev\n","sessionId":"s\"1","version":"{}","entrypoint":"mneme","type":"user","message":{{"role":"user","content":"hi\u0001"}},"uuid":"u","timestamp":"2026-01-01T00:00:00.000Z"}}"#,
                crate::VERSION
            )
        );
    }
}
