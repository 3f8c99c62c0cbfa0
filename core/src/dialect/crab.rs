//! crab's sessions: an optional meta line (`{"agent", …}`), bare `{role, content}`
//! messages without ids, and `{"compact": "<summary>"}` markers that crab loads from.
//! crab has no place for tombstones or Mneme's markers: those are refused.

use alloc::string::{String, ToString};

use alloc::vec::Vec;

use super::{Compaction, CompactionRule, Dialect, Fork, Format, Header, Kept, Marker, json, unsupported};
use crate::error::Error;
use crate::message::Message;
use crate::message::calls::PendingCalls;
use crate::message::items::Items;
use crate::scan::{Envelope, Line, LineType};

pub(crate) struct Crab;

/// A line only crab writes: untyped, with a role, a `compact` summary or the meta
/// line's `agent`.
pub(crate) fn is_crab_line(line: &Line) -> bool {
    line.env.kind.get().is_none()
        && (line.env.rare().role.get().is_some() || line.env.rare().compact.get().is_some() || line.env.rare().agent.get().is_some())
}

impl Dialect for Crab {
    /// One `{role, content}` line per message; crab's messages hold text only.
    fn turn(&self, _: &Header, messages: &[Message], _: &PendingCalls) -> Result<String, Error> {
        #[derive(serde::Serialize)]
        struct Line<'a> {
            role: &'static str,
            content: &'a str,
        }
        let mut out = Vec::new();
        for message in messages {
            let text = message
                .plain_text()
                .ok_or_else(|| unsupported(Format::Crab, "tool calls, thinking and images (crab messages hold text only)"))?;
            out.push(json(&Line { role: message.role.as_str(), content: &text })?);
        }
        Ok(super::record(out))
    }

    fn items(&self, _: &Header, _: &Items, _: &PendingCalls) -> Result<String, Error> {
        Err(unsupported(Format::Crab, "OpenAI Responses items (a session of items is kept in Claude Code's format: start it with them)"))
    }

    fn tombstone(&self, _: &Header, _: &str) -> Result<String, Error> {
        Err(unsupported(Format::Crab, "soft-deleting an entry"))
    }

    fn marker(&self, _: &Header, marker: Marker, _: Option<&str>) -> Result<String, Error> {
        Err(unsupported(Format::Crab, marker.kind()))
    }

    /// The marker, then the kept messages again: crab loads from its last marker on.
    fn compaction(&self, _: &Header, compaction: &Compaction) -> Result<String, Error> {
        let mut out = json(&serde_json::json!({ "compact": compaction.summary }))?;
        for line in compaction.kept_lines {
            out.push('\n');
            out.push_str(line);
        }
        Ok(out)
    }

    /// The `{"compact"}` marker crab loads from; crab has no place for the link (the
    /// key's previous session ids keep it).
    fn rollover(&self, header: &Header, compaction: &Compaction, _: &Fork) -> Result<String, Error> {
        self.compaction(header, compaction)
    }

    fn prune(&self, _: &Header, _: &[&str], _: u64, _: u64) -> Result<String, Error> {
        Err(unsupported(Format::Crab, "clearing tool results without a summary"))
    }

    fn shown_summary(&self, summary: &str) -> String {
        summary.to_string()
    }

    /// crab's `{"compact": …}` marker: everything before it is summarised.
    fn is_compaction(&self, env: &Envelope<'_>) -> bool {
        env.line_type == LineType::None && env.rare().compact.get().is_some()
    }

    /// crab's `{"compact": …}` marker summarises everything before it.
    fn compaction_rule<'l>(&self, env: &'l Envelope<'_>) -> Option<CompactionRule<'l>> {
        self.is_compaction(env).then(|| CompactionRule { format: Format::Crab, kept: Kept::Nothing, summary: env.rare().compact.get() })
    }

    fn agent_link(&self, _: &Header, _: &str, _: &str) -> Result<String, Error> {
        Err(unsupported(Format::Crab, "sub-agent transcripts (crab keeps none)"))
    }

    fn fork(&self, _: &[&Line], _: &Fork) -> Result<String, Error> {
        Err(unsupported(Format::Crab, "forking (crab entries have no ids to branch from)"))
    }
}
