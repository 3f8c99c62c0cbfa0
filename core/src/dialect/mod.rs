//! Transcript dialects, one per file behind one trait: how a session's format is
//! recognised, how every line Mneme writes is spelled in it, and how its stored
//! messages read back as canonical ones ([`canonical`]; what only pi writes in
//! `pi::read`). A session is always written in its own dialect; a line a dialect cannot
//! express is a typed refusal ([`crate::Error::Unsupported`]), never a foreign line.

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::Error;
use crate::message::calls::PendingCalls;
use crate::message::items::Items;
use crate::message::{BlockKind, Message};
use crate::scan::{Envelope, Line, LineType};
pub(crate) use crate::support::ids::nth_uuid;
use crate::support::json::Raw;

use crate::format::{Format, Marker};
use crate::message::Role;

pub(crate) mod canonical;
pub(crate) mod claude;
pub(crate) use claude::PreservedSegment;
pub(crate) mod crab;
pub(crate) mod pi;
pub(crate) use canonical::shown_entry_text;

impl Format {
    /// The dialect a session's lines are written in, judged from its first readable
    /// lines (an empty session is Claude Code's). Lines from the middle of a file (a
    /// resume reads from the end) have no pi header, but pi's messages are its
    /// `"type":"message"` entries, a type no other dialect writes: the first message
    /// tells.
    pub(crate) fn detect(lines: &[Line]) -> Format {
        let first_message = lines.iter().find(|line| line.env.is_message()).map(|line| line.env.line_type);
        if lines.first().is_some_and(pi::is_header) || first_message == Some(LineType::Message) {
            Format::Pi
        } else if lines.iter().take(8).any(crab::is_crab_line) {
            Format::Crab
        } else {
            Format::Claude
        }
    }

    pub(crate) fn dialect(self) -> &'static dyn Dialect {
        match self {
            Format::Claude => &claude::Claude,
            Format::Pi => &pi::Pi,
            Format::Crab => &crab::Crab,
        }
    }
}

/// The ids a session's lines have, for a dialect whose ids are short enough to clash
/// (pi's 8 hex digits; pi itself draws again until an id is free). A new line's id is
/// none of them — but the leaf's: a write given again after it landed repeats that
/// id, and the write path refuses it as a repeat.
#[derive(Clone, Copy)]
pub(crate) struct TakenIds<'a> {
    pub ids: &'a BTreeSet<String>,
    pub leaf: Option<&'a str>,
}

impl TakenIds<'_> {
    pub fn clash(&self, id: &str) -> bool {
        self.leaf != Some(id) && self.ids.contains(id)
    }
}

/// What every written line shares: where it goes and what it chains to.
pub(crate) struct Header<'a> {
    pub session_id: &'a str,
    /// The id the line chains to (the conversation's leaf), if any.
    pub parent: Option<&'a str>,
    /// The session is a sub-agent's: its lines are sidechain lines.
    pub sidechain: bool,
    /// The new line's id, as the host supplied it (dialects may shorten it).
    pub uuid: &'a str,
    pub now_ms: i64,
    pub timestamp: &'a str,
    pub cwd: &'a str,
    /// The sub-agent whose transcript the line is in (Claude Code's `agentId`).
    pub agent_id: Option<&'a str>,
    /// The ids a new line's must not be, for dialects that shorten them.
    pub taken: Option<TakenIds<'a>>,
}

impl<'a> Header<'a> {
    /// This header for the lines of one message said at `at` (its ISO `timestamp`),
    /// when the message carries its own time; otherwise unchanged.
    pub fn said_at<'b>(&'b self, at: Option<i64>, timestamp: Option<&'b str>) -> Header<'b> {
        Header { now_ms: at.unwrap_or(self.now_ms), timestamp: timestamp.unwrap_or(self.timestamp), ..*self }
    }
}

/// A message's own time as an ISO timestamp, when it has one.
pub(crate) fn stamp(message: &Message) -> Option<String> {
    message.meta.at.map(crate::support::time::format_millis)
}

/// A summarising compaction, as every dialect needs it.
pub(crate) struct Compaction<'a> {
    /// The summary as the model wrote it.
    pub summary: &'a str,
    /// The id of the second line a dialect writes (Claude: the summary entry).
    pub summary_uuid: &'a str,
    pub first_kept: Option<&'a str>,
    /// The raw lines of the kept messages, for dialects that repeat them (crab).
    pub kept_lines: &'a [&'a str],
    pub manual: bool,
    pub tokens_before: u64,
    pub tokens_after: u64,
}

/// How a compaction line shapes the context a model resumes with, as its dialect
/// writes one: what it keeps of the conversation before it, and where its summary is.
pub(crate) struct CompactionRule<'l> {
    /// The dialect whose compaction line it is.
    pub format: Format,
    pub kept: Kept<'l>,
    /// The summary, when the compaction line holds it (pi's, crab's); `None` when the
    /// lines after it marked as summaries are (Claude Code's `isCompactSummary`).
    pub summary: Option<&'l str>,
}

/// What a compaction keeps of the conversation before it.
pub(crate) enum Kept<'l> {
    /// Nothing: the summary stands for all of it.
    Nothing,
    /// The chain from one entry up to the compaction, the entry named by its id or, in
    /// a dialect whose lines have none, by its line number.
    From { id: Option<&'l str>, line: Option<u64> },
    /// A segment of the conversation, head to tail: before the compaction, or relinked
    /// after its summary.
    Segment(PreservedSegment),
}

/// Every format, in the order their dialects are asked for a compaction's rule.
const FORMATS: [Format; 3] = {
    // A new format fails this match until it is listed.
    match Format::Claude {
        Format::Claude | Format::Pi | Format::Crab => {}
    }
    [Format::Claude, Format::Pi, Format::Crab]
};

/// The rule of compaction line `env`; `None` for a line that is no compaction.
pub(crate) fn compaction_rule<'l>(env: &'l Envelope<'_>) -> Option<CompactionRule<'l>> {
    FORMATS.into_iter().find_map(|format| format.dialect().compaction_rule(env))
}

/// Whether `env` is a compaction line of any dialect: one a context starts after.
pub(crate) fn is_compaction(env: &Envelope<'_>) -> bool {
    FORMATS.into_iter().any(|format| format.dialect().is_compaction(env))
}

/// See [`Dialect::ends_pending_calls`].
pub(crate) fn ends_pending_calls(env: &Envelope<'_>) -> bool {
    FORMATS.into_iter().any(|format| format.dialect().ends_pending_calls(env))
}

/// A compaction line that starts a chain of its own: it names no parent, and the
/// conversation it summarised ends at `logical_parent` (Claude Code's
/// `compact_boundary` and its `logicalParentUuid`). pi's compaction entries stay on
/// their chain; crab's lines have no ids.
pub(crate) struct Boundary<'l> {
    pub logical_parent: Option<&'l str>,
}

/// `env` as a [`Boundary`], if it is one.
pub(crate) fn boundary<'l>(env: &'l Envelope<'_>) -> Option<Boundary<'l>> {
    claude::is_boundary(env).then(|| Boundary { logical_parent: env.rare().logical_parent_uuid.get() })
}

/// The tool calls whose results line `env` cleared, keeping the conversation (Claude
/// Code's `microcompact_boundary`); none for any other line.
pub(crate) fn cleared_tool_ids(env: &Envelope<'_>) -> Vec<String> {
    claude::cleared_tool_ids(env)
}

/// A line after a compaction that holds its summary (Claude Code's
/// `isCompactSummary`), for a compaction whose rule has none of its own.
pub(crate) fn is_summary_entry(env: &Envelope<'_>) -> bool {
    env.is_compact_summary.0
}

/// An entry its dialect shows the model as a user message though it carries no
/// `message` (pi's `custom_message` and `branch_summary`): the line is read whole.
pub(crate) fn is_shown_entry(env: &Envelope<'_>) -> bool {
    pi::is_context_entry(env)
}

/// A line a branch may end at: a message, or an entry shown to the model as one (pi's
/// `/tree` leaves a branch at its summary).
pub(crate) fn ends_a_branch(env: &Envelope<'_>) -> bool {
    env.is_message() || is_shown_entry(env)
}

/// What of `line` the model is given as a message: the whole line for an entry shown
/// as one ([`is_shown_entry`]), else its `message`.
pub(crate) fn shown_message<'l>(line: &Line<'l>) -> Option<Raw<'l>> {
    if is_shown_entry(&line.env) { Some(Raw::valid(line.raw)) } else { line.env.message }
}

/// The segment compaction line `env` keeps relinked after its summary (its head
/// continues from the summary, not from its old parent), if it keeps one so.
pub(crate) fn relinked_segment(env: &Envelope<'_>) -> Option<claude::PreservedSegment> {
    match compaction_rule(env)?.kept {
        Kept::Segment(segment) if segment.anchor.is_some() => Some(segment),
        _ => None,
    }
}

/// One transcript dialect: how each line Mneme writes is spelled. Each method returns
/// the JSON of one or more lines (joined by `\n`, no trailing newline), or a typed
/// refusal when the dialect cannot express it.
pub(crate) trait Dialect {
    /// A turn's messages in order, chained from `header.parent`: the first line has
    /// `header.uuid`, the others ids derived from it ([`nth_uuid`]). `calls` are the
    /// session's pending tool calls, which results in the turn may answer (the write
    /// path has checked that every result answers one).
    fn turn(&self, header: &Header, messages: &[Message], calls: &PendingCalls) -> Result<String, Error>;
    /// OpenAI Responses items (see [`crate::message::items`]), chained from
    /// `header.parent`, each kept verbatim; ids as [`Dialect::turn`] gives them.
    fn items(&self, header: &Header, items: &Items, calls: &PendingCalls) -> Result<String, Error>;
    fn tombstone(&self, header: &Header, target: &str) -> Result<String, Error>;
    fn marker(&self, header: &Header, marker: Marker, reason: Option<&str>) -> Result<String, Error>;
    fn compaction(&self, header: &Header, compaction: &Compaction) -> Result<String, Error>;
    /// Clears tool results without a summary.
    fn prune(&self, header: &Header, tool_ids: &[&str], tokens_before: u64, tokens_saved: u64) -> Result<String, Error>;
    /// The summary as the model receives it on resume, with the dialect's wrapping.
    fn shown_summary(&self, summary: &str) -> String;
    /// Whether `env` is a compaction line of this dialect: the one test of it, which
    /// [`Dialect::compaction_rule`] answers by.
    fn is_compaction(&self, env: &Envelope<'_>) -> bool;
    /// Whether compaction line `env` ends the tool calls pending before it: Claude
    /// Code's boundary and crab's marker do (what they keep comes after them, and is
    /// read again); a dialect whose compaction keeps entries before it says otherwise.
    fn ends_pending_calls(&self, env: &Envelope<'_>) -> bool {
        self.is_compaction(env)
    }
    /// The rule of `env` if it is a compaction line of this dialect.
    fn compaction_rule<'l>(&self, env: &'l Envelope<'_>) -> Option<CompactionRule<'l>>;
    /// A new session's content: `chain` (a conversation from its root, in order) as
    /// the session `fork.id`, linked to where it came from.
    fn fork(&self, chain: &[&Line], fork: &Fork) -> Result<String, Error>;
    /// A new session's content for a rollover: `compaction` (which keeps nothing) as
    /// the first lines of the session `fork.id`, linked to the session it continues.
    /// `header.parent` is that session's leaf.
    fn rollover(&self, header: &Header, compaction: &Compaction, fork: &Fork) -> Result<String, Error>;
    /// The line that links a sub-agent's transcript from the tool call that started it.
    fn agent_link(&self, header: &Header, agent_id: &str, call: &str) -> Result<String, Error>;
    /// What the session's own client sends the model for a call whose result was never
    /// recorded (a turn cut short): Claude Code 2.1's, unless the dialect's client
    /// sends something else.
    fn interrupted_call(&self) -> Interrupted {
        Interrupted { result: INTERRUPTED_RESULT, reply: Some(NO_RESPONSE) }
    }
    /// What the session's own client sends of the signed thinking of a reply model
    /// `written_by` wrote (`None`: the reply names none), in a request to model
    /// `sent_to`: a thinking block's signature binds it to the model that wrote it, and
    /// the API refuses it in a request to another ("Invalid signature in thinking
    /// block"). Claude Code 2.1 keeps it for the same model, its name told apart from a
    /// release date, a context tag, case and a version's dot (seen: resumed with
    /// `claude-sonnet-4-5`, a session of `claude-sonnet-4-5-20250929` keeps its
    /// thinking; with `claude-opus-4-5`, none), and drops it for another, as it does
    /// for a reply that names no model. Its catalog's other names of a model (Bedrock's
    /// and Vertex's ids) are not known here: they count as other models.
    fn replayed_thinking(&self, written_by: Option<&str>, sent_to: &str) -> Replay {
        match written_by {
            Some(written_by) if same_model(written_by, sent_to) => Replay::Kept,
            _ => Replay::Dropped,
        }
    }
}

/// See [`Dialect::replayed_thinking`]. Thinking without a signature is none of its
/// business: the API takes it from no model, and it goes as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Replay {
    Kept,
    Dropped,
    /// Its text as a text block (redacted thinking, having none, is dropped).
    AsText,
}

/// Whether two names are one model's as Claude Code compares them: without a context
/// tag and a release date ([`model_name`]), in any case, a version's dot a dash
/// (`claude-opus-4.5` is `claude-opus-4-5`).
fn same_model(a: &str, b: &str) -> bool {
    let spelled = |name| model_name(name).bytes().map(|b| if b == b'.' { b'-' } else { b.to_ascii_lowercase() });
    spelled(a).eq(spelled(b))
}

/// A model's name without a context tag (`[1m]`) and then a release date (`-20250929`,
/// Vertex's `@20250929`).
fn model_name(model: &str) -> &str {
    let model = match model.rfind('[') {
        Some(at) if model.ends_with(']') => &model[..at],
        _ => model,
    };
    let date = model.len().checked_sub(9).and_then(|at| Some((at, model.get(at..)?)));
    match date {
        Some((at, date)) if date.starts_with(['-', '@']) && date.bytes().skip(1).all(|b| b.is_ascii_digit()) => &model[..at],
        _ => model,
    }
}

/// See [`Dialect::interrupted_call`].
pub(crate) struct Interrupted {
    /// The text of the synthetic error result.
    pub result: &'static str,
    /// The reply put after such results when they end the conversation, if any.
    pub reply: Option<&'static str>,
}

/// What Claude Code 2.1 puts in place of the result of a call a turn never finished.
const INTERRUPTED_RESULT: &str = "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. Check whether it took effect before relying on it or running it again.]";

/// The reply Claude Code puts after such results when they end the conversation, so
/// the next prompt does not run into them (a context whose last message is a user's,
/// injected or not, has no need of it).
const NO_RESPONSE: &str = "No response requested.";

/// A fork: the new session and its origin.
pub(crate) struct Fork<'a> {
    pub id: &'a str,
    pub origin_id: &'a str,
    /// The key of the origin's transcript.
    pub origin_key: &'a str,
    pub timestamp: &'a str,
    pub cwd: &'a str,
}

pub(crate) fn unsupported(format: Format, operation: &str) -> Error {
    Error::Unsupported { format, operation: operation.into() }
}

/// Lines joined into a record; a record of one line is that line, not a copy of it.
pub(crate) fn record(mut lines: Vec<String>) -> String {
    if lines.len() == 1 { lines.pop().unwrap_or_default() } else { lines.join("\n") }
}

pub(crate) fn json(value: &impl serde::Serialize) -> Result<String, Error> {
    serde_json::to_string(value).map_err(|e| Error::InvalidArgument(alloc::format!("the line cannot be written as JSON: {e}")))
}

/// The name of the tool a result answers: a call made earlier in the turn, else a
/// pending call of the session.
pub(crate) fn tool_name<'a>(messages: &'a [Message], calls: &'a PendingCalls, id: &str) -> &'a str {
    let in_turn = messages.iter().flat_map(|m| &m.blocks).find_map(|b| match &b.kind {
        BlockKind::ToolUse { id: call, name } if call == id => Some(name.as_str()),
        _ => None,
    });
    in_turn.or_else(|| calls.find(id).map(|c| c.name.as_str())).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::{Format, Replay};
    use crate::sessions::with_loaded;

    /// A resume reads a session from its end: without pi's header, its first message
    /// still tells the dialect; entries that are no message do not.
    #[test]
    fn the_dialect_of_lines_from_the_middle_of_a_file() {
        let detect = |text: &str| with_loaded(&[text.as_bytes()], |loaded| Format::detect(&loaded.lines));
        let pi = concat!(
            "{\"type\":\"model_change\",\"id\":\"a1\",\"parentId\":null,\"provider\":\"anthropic\",\"modelId\":\"m\"}\n",
            "{\"type\":\"message\",\"id\":\"a2\",\"parentId\":\"a1\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        );
        assert_eq!(detect(pi), Format::Pi);
        let claude = concat!(
            "{\"type\":\"summary\",\"summary\":\"s\",\"leafUuid\":\"u1\"}\n",
            "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        );
        assert_eq!(detect(claude), Format::Claude);
    }

    /// Each dialect's compaction lines are ruled by that dialect, as its client writes
    /// them (the corpus, whose pi compactions are format v1's, and a crab marker and a
    /// pi v3 compaction written here, which the corpus lacks), and the lines called
    /// compactions (`is_compaction`, which the leaf and the gates read) are exactly
    /// those the clients write as one, told here from the line's JSON itself.
    #[test]
    fn each_dialect_s_compactions_are_ruled_by_that_dialect() {
        let crab = "{\"role\":\"user\",\"content\":\"hi\"}\n{\"compact\":\"what came before\"}\n{\"role\":\"user\",\"content\":\"next\"}\n";
        let pi = concat!(
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
            "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
            "{\"type\":\"compaction\",\"id\":\"a2\",\"parentId\":\"a1\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"summary\":\"s\",\"firstKeptEntryId\":\"a1\",\"tokensBefore\":9}\n",
        );
        let mut texts: Vec<Vec<u8>> = crate::support::corpus_files().iter().map(|path| std::fs::read(path).unwrap()).collect();
        texts.extend([crab.as_bytes().to_vec(), pi.as_bytes().to_vec()]);
        let mut ruled = alloc::collections::BTreeSet::new();
        for text in &texts {
            with_loaded(&[text.as_slice()], |loaded| {
                let format = Format::detect(&loaded.lines);
                for line in &loaded.lines {
                    let rule = super::compaction_rule(&line.env);
                    let value: serde_json::Value = serde_json::from_str(line.raw).unwrap();
                    let written_as_one = match (value["type"].as_str(), value["subtype"].as_str()) {
                        (Some("system"), Some("compact_boundary")) => true,
                        (Some("compaction"), _) => value["summary"].is_string(),
                        (None, _) => value["compact"].is_string(),
                        _ => false,
                    };
                    assert_eq!(super::is_compaction(&line.env), written_as_one, "{}", line.raw);
                    assert_eq!(rule.is_some(), written_as_one, "{}", line.raw);
                    let Some(rule) = rule else { continue };
                    assert_eq!(rule.format, format, "{}", line.raw);
                    let expected = match (&rule.kept, rule.summary) {
                        (super::Kept::Nothing | super::Kept::Segment(_), None) => format == Format::Claude,
                        (super::Kept::From { id, line }, Some(_)) => format == Format::Pi && (id.is_some() || line.is_some()),
                        (super::Kept::Nothing, Some(_)) => format == Format::Crab,
                        _ => false,
                    };
                    assert!(expected, "{format:?}: an unexpected rule for {}", line.raw);
                    ruled.insert(format.as_str());
                }
            });
        }
        assert_eq!(ruled.into_iter().collect::<Vec<_>>(), ["claude", "crab", "pi"]);
    }

    /// Claude Code replays a reply's thinking to the model that wrote it, however the
    /// name is spelled, and to no other; pi to the very model, and as text to another.
    #[test]
    fn thinking_is_replayed_to_the_model_that_wrote_it() {
        let claude = Format::Claude.dialect();
        let written_by = Some("claude-sonnet-4-5-20250929");
        for same in [
            "claude-sonnet-4-5",
            "claude-sonnet-4-5-20250929",
            "claude-sonnet-4-5-20250929[1m]",
            "claude-sonnet-4-5@20250929",
            "Claude-Sonnet-4-5",
            "claude-sonnet-4.5",
        ] {
            assert_eq!(claude.replayed_thinking(written_by, same), Replay::Kept, "{same}");
        }
        for other in ["claude-opus-4-5", "claude-sonnet-4", "claude-sonnet-4-5-1", "sonnet", "", "[1m]", "é-20250929", "ü[ö]ß@2025092"]
        {
            assert_eq!(claude.replayed_thinking(written_by, other), Replay::Dropped, "{other}");
        }
        assert_eq!(claude.replayed_thinking(None, "claude-sonnet-4-5"), Replay::Dropped, "a reply that names no model");
        let pi = Format::Pi.dialect();
        assert_eq!(pi.replayed_thinking(Some("claude-opus-4-5"), "claude-opus-4-5"), Replay::Kept);
        assert_eq!(pi.replayed_thinking(Some("claude-opus-4-5"), "claude-opus-4-5-20251101"), Replay::AsText);
        assert_eq!(pi.replayed_thinking(None, "claude-opus-4-5"), Replay::AsText);
    }
}
