//! Claude Code's session JSONL: `uuid` / `parentUuid` entries, `compact_boundary` +
//! `isCompactSummary` compactions, `microcompact_boundary` for cleared tool results.
//! Mneme's own bookkeeping (tombstones, markers) are lines of their own types, which
//! Claude Code skips.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;
use serde_json::value::RawValue;

use super::{Compaction, Dialect, Fork, Header, Marker, Role, json, nth_uuid, stamp};
use crate::error::Error;
use crate::message::calls::PendingCalls;
use crate::message::{Block, BlockKind, Message as Message_};
use crate::transcript::scan::Line;

pub(crate) struct Claude;

/// What Claude Code writes before a compaction summary.
pub(crate) const SUMMARY_PREFIX: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MessageLine<'a> {
    parent_uuid: Option<&'a str>,
    is_sidechain: bool,
    user_type: &'static str,
    cwd: &'a str,
    session_id: &'a str,
    version: &'static str,
    entrypoint: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    message: Message<'a>,
    /// Set on the summary a compaction writes (Claude Code marks it both ways).
    #[serde(skip_serializing_if = "Option::is_none")]
    is_compact_summary: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_visible_in_transcript_only: Option<bool>,
    /// A sub-agent's line: which sub-agent.
    #[serde(rename = "agentId", skip_serializing_if = "Option::is_none")]
    agent_id: Option<&'a str>,
    /// On a tool result: the entry that holds the call it answers.
    #[serde(rename = "sourceToolAssistantUUID", skip_serializing_if = "Option::is_none")]
    source_tool_assistant_uuid: Option<&'a str>,
    uuid: &'a str,
    timestamp: &'a str,
}

#[derive(Serialize)]
struct Message<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    content: Content<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<WireUsage>,
}

/// Anthropic's `usage`, as Claude Code stores it on every line of a reply.
#[derive(Serialize)]
struct WireUsage {
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
}

/// Claude Code writes a user prompt as a plain string and everything else as blocks.
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Blocks(Vec<&'a RawValue>),
}

impl<'a> Message<'a> {
    fn plain(role: Role, content: Content<'a>) -> Self {
        Message { id: None, kind: None, role: role.as_str(), model: None, content, stop_reason: None, usage: None }
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
                        let raw = raw_block(&block.json)?;
                        let wire = Message {
                            id: message_id,
                            kind: message_id.map(|_| "message"),
                            model: message.meta.model.as_deref(),
                            stop_reason: message.meta.stop_reason.as_deref(),
                            usage: message.meta.usage.map(|u| WireUsage {
                                input_tokens: u.input,
                                cache_creation_input_tokens: u.cache_creation,
                                cache_read_input_tokens: u.cache_read,
                                output_tokens: u.output,
                            }),
                            ..Message::plain(Role::Assistant, Content::Blocks(alloc::vec![raw]))
                        };
                        out.push(json(&MessageLine::new(&line_header, Role::Assistant, wire))?);
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
                            out.push(result_line(
                                headers.get(i + 1).unwrap_or(header),
                                parent.as_deref(),
                                &result_id,
                                result,
                                Some(&uuid),
                            )?);
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
                                out.push(result_line(header, parent.as_deref(), &result_id, block, source)?);
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
                    let text = message.plain_text().filter(|_| message.blocks.len() == 1);
                    let content = match &text {
                        Some(text) => Content::Text(text),
                        None => Content::Blocks(rest.iter().map(|block| raw_block(&block.json)).collect::<Result<_, _>>()?),
                    };
                    out.push(json(&MessageLine::new(&line_header, Role::User, Message::plain(Role::User, content)))?);
                    parent = Some(uuid);
                }
            }
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
    fn fork(&self, chain: &[&Line], fork: &Fork) -> Result<String, Error> {
        let mut out = Vec::with_capacity(chain.len());
        let mut parent: Option<String> = None;
        for line in chain {
            let mut value: serde_json::Value = serde_json::from_str(line.raw)
                .map_err(|e| Error::InvalidArgument(format!("internal: a line to fork does not parse: {e}")))?;
            let Some(map) = value.as_object_mut() else { continue };
            map.insert("sessionId".into(), fork.id.into());
            map.insert("isSidechain".into(), false.into());
            if line.env.is_compact_boundary() {
                map.insert("parentUuid".into(), serde_json::Value::Null);
                map.insert("logicalParentUuid".into(), parent.clone().into());
            } else {
                map.insert("parentUuid".into(), parent.clone().into());
            }
            if let Some(uuid) = line.env.uuid() {
                map.insert("forkedFrom".into(), serde_json::json!({ "sessionId": fork.origin_id, "messageUuid": uuid }));
                if line.env.kind() != "progress" {
                    parent = Some(uuid.into());
                }
            }
            out.push(json(&value)?);
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
    Ok(format!("{}\n{}", json(&boundary)?, json(&summary)?))
}

fn raw_block(json: &str) -> Result<&RawValue, Error> {
    serde_json::from_str(json).map_err(|e| Error::InvalidArgument(format!("internal: a block does not parse: {e}")))
}

/// A tool result as a user line of its own, chained to `parent`; `source` is the line
/// that holds the call.
fn result_line(header: &Header, parent: Option<&str>, uuid: &str, block: &Block, source: Option<&str>) -> Result<String, Error> {
    let line_header = Header { parent, uuid, ..*header };
    let content = Content::Blocks(alloc::vec![raw_block(&block.json)?]);
    json(&MessageLine {
        source_tool_assistant_uuid: source,
        ..MessageLine::new(&line_header, Role::User, Message::plain(Role::User, content))
    })
}
