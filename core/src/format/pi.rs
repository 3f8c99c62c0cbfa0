//! pi-coding-agent's v3 sessions: a `session` header outside the tree, then entries
//! with 8-character `id`s and `parentId`. Messages are `message` entries; Mneme's
//! bookkeeping (tombstones, markers) are `custom` entries, which pi keeps in the tree
//! and leaves out of the model's context.

use alloc::format;
use alloc::string::String;

use super::{Compaction, Dialect, Format, Header, Marker, Role, json};
use crate::error::Error;
use crate::transcript::scan::Line;

pub(crate) struct Pi;

/// How pi 0.73 shows a compaction summary to the model, byte for byte.
pub(crate) const PI_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub(crate) const PI_SUMMARY_SUFFIX: &str = "\n</summary>";

/// `customType` of Mneme's own `custom` entries: `mneme.<kind>`.
pub(crate) const CUSTOM_PREFIX: &str = "mneme.";
pub(crate) const TOMBSTONE_TYPE: &str = "mneme.tombstone";

pub(crate) fn is_header(line: &Line) -> bool {
    line.env.kind() == "session"
}

/// A usage record of zeros: pi reads `usage` from every assistant message.
fn zero_usage() -> serde_json::Value {
    serde_json::json!({
        "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
        "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0 },
    })
}

/// pi's ids are 8 characters (the start of a UUID): the host's uuid without dashes,
/// cut to 8.
pub(crate) fn entry_id(uuid: &str) -> String {
    uuid.chars().filter(|c| *c != '-').take(8).collect()
}

impl Pi {
    fn entry(&self, header: &Header, kind: &str) -> serde_json::Value {
        serde_json::json!({ "type": kind, "id": entry_id(header.uuid), "parentId": header.parent, "timestamp": header.timestamp })
    }
}

impl Dialect for Pi {
    fn message(&self, header: &Header, role: Role, text: &str) -> Result<String, Error> {
        let mut message = serde_json::json!({
            "role": role.as_str(), "content": [{ "type": "text", "text": text }], "timestamp": header.now_ms,
        });
        if role == Role::Assistant {
            message["api"] = "mneme".into();
            message["provider"] = "mneme".into();
            message["model"] = "mneme".into();
            message["usage"] = zero_usage();
            message["stopReason"] = "stop".into();
        }
        let mut line = self.entry(header, "message");
        line["message"] = message;
        json(&line)
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

    fn prune(&self, _: &Header, _: &[&str], _: u64, _: u64) -> Result<String, Error> {
        Err(super::unsupported(Format::Pi, "clearing tool results without a summary (pi has no entry for it)"))
    }

    fn shown_summary(&self, summary: &str) -> String {
        format!("{PI_SUMMARY_PREFIX}{summary}{PI_SUMMARY_SUFFIX}")
    }
}
