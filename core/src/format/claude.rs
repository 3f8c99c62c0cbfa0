//! Claude Code's session JSONL: `uuid` / `parentUuid` entries, `compact_boundary` +
//! `isCompactSummary` compactions, `microcompact_boundary` for cleared tool results.
//! Mneme's own bookkeeping (tombstones, markers) are lines of their own types, which
//! Claude Code skips.

use alloc::format;
use alloc::string::String;

use serde::Serialize;

use super::{Compaction, Dialect, Header, Marker, Role, json};
use crate::error::Error;

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
    uuid: &'a str,
    timestamp: &'a str,
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: Content<'a>,
}

/// Claude Code writes a user prompt as a plain string and assistant replies as blocks.
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Blocks([TextBlock<'a>; 1]),
}

#[derive(Serialize)]
struct TextBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
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
    uuid: &'a str,
    timestamp: &'a str,
}

impl<'a> MessageLine<'a> {
    fn new(header: &'a Header, role: Role, content: Content<'a>) -> Self {
        MessageLine {
            parent_uuid: header.parent,
            is_sidechain: header.sidechain,
            user_type: "external",
            cwd: header.cwd,
            session_id: header.session_id,
            version: crate::VERSION,
            entrypoint: "mneme",
            kind: role.as_str(),
            message: Message { role: role.as_str(), content },
            is_compact_summary: None,
            is_visible_in_transcript_only: None,
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
            uuid: header.uuid,
            timestamp: header.timestamp,
        }
    }
}

impl Dialect for Claude {
    fn message(&self, header: &Header, role: Role, text: &str) -> Result<String, Error> {
        let content = match role {
            Role::User => Content::Text(text),
            Role::Assistant => Content::Blocks([TextBlock { kind: "text", text }]),
        };
        json(&MessageLine::new(header, role, content))
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
            ..SystemLine::new(header, "compact_boundary", "Conversation compacted")
        };
        let text = format!("{SUMMARY_PREFIX}{}", compaction.summary);
        let summary_header = Header { parent: Some(header.uuid), uuid: compaction.summary_uuid, ..*header };
        let summary = MessageLine {
            is_compact_summary: Some(true),
            is_visible_in_transcript_only: Some(true),
            ..MessageLine::new(&summary_header, Role::User, Content::Text(&text))
        };
        Ok(format!("{}\n{}", json(&boundary)?, json(&summary)?))
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
}
