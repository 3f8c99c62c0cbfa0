//! The context a model resumes with: the main chain from its last compaction on,
//! with preserved segments, cleared tool results and split replies merged.

use alloc::borrow::Cow;
use alloc::collections::BTreeSet;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::thread::Loaded;
use crate::dialect::{
    Kept, PreservedSegment, boundary, canonical, cleared_tool_ids, compaction_rule, is_shown_entry, is_summary_entry, shown_message,
};
use crate::message::Stored;
use crate::scan::{Workers, parse_block};
use crate::storage::Job;
use crate::support::SharedStr;
use crate::support::json::Raw;
use crate::support::lenient::Str;

/// The entries of a resumed conversation, as a model would receive them.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Context {
    /// The context starts after a compaction boundary: earlier history is summarised.
    pub compacted: bool,
    pub messages: Vec<ContextMessage>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ContextMessage {
    /// The uuid of the (first) entry the message came from.
    pub uuid: String,
    pub role: String,
    /// Readable text: text blocks, with tool calls and results shown as markers.
    pub text: SharedStr,
    /// The message content as JSON: the blocks of every entry that carried this
    /// message (Claude Code splits one reply across several lines).
    #[serde(serialize_with = "crate::support::json::as_value::serialize")]
    pub content: SharedStr,
    /// The summary a compaction left in place of the earlier history.
    pub is_compact_summary: bool,
    /// The model a reply came from, when its entry names one: a request to another
    /// model cannot replay its thinking.
    pub model: Option<String>,
}

/// The lines of a resume context (indices into [`Loaded::lines`]).
pub(crate) struct ContextLines {
    /// The last compaction on the chain (a `compact_boundary` or pi `compaction`).
    pub compaction: Option<usize>,
    /// The compaction summaries that follow a `compact_boundary`.
    pub summaries: Vec<usize>,
    /// The messages the model sees after the summary, in order.
    pub lines: Vec<usize>,
    /// Tool results cleared since the compaction (Claude Code's `microcompact_boundary`).
    pub cleared: BTreeSet<String>,
    /// The main chain these were chosen from (see [`Loaded::chain`]).
    pub chain: Vec<usize>,
}

/// The texts of the parts a [`Loaded`] was read from, whose slices a context shares
/// instead of copying them, and who builds the context's messages.
#[derive(Clone, Copy)]
pub(crate) struct Sources<'s> {
    /// The number of the part `texts[0]` holds.
    pub first_part: u32,
    pub texts: &'s [Arc<String>],
    pub workers: &'s Workers<'s>,
}

impl Default for Sources<'_> {
    fn default() -> Self {
        Sources { first_part: 0, texts: &[], workers: &Workers::HERE }
    }
}

impl Sources<'_> {
    /// `text` of a line of part `part`: shared when borrowed from that part's text.
    fn share(&self, part: u32, text: Cow<'_, str>) -> SharedStr {
        match text {
            Cow::Owned(text) => text.into(),
            Cow::Borrowed(text) => match part.checked_sub(self.first_part).and_then(|at| self.texts.get(at as usize)) {
                Some(source) => SharedStr::slice(source, text),
                None => text.into(),
            },
        }
    }

    /// Copies the context's slices out when they keep less than half of what was read
    /// alive: a context of the end of a long session does not hold all of it.
    fn release_sparse(&self, context: &mut Context) {
        let read = self.texts.iter().fold(0usize, |sum, text| sum.saturating_add(text.len()));
        let fields = || context.messages.iter().flat_map(|m| [&m.text, &m.content]);
        let shared = fields().filter_map(SharedStr::shared_bytes).fold(0usize, usize::saturating_add);
        if shared.saturating_mul(2) < read {
            for message in &mut context.messages {
                message.text.detach();
                message.content.detach();
            }
        }
    }
}

/// What a model sees in place of a cleared tool result (Claude Code's wording).
pub(crate) const CLEARED_RESULT: &str = "[Old tool result content cleared]";

impl<'a> Loaded<'a> {
    /// Which lines make up the context a model resumes with, in order.
    ///
    /// Without compaction: the messages of the main chain. After the last compaction
    /// on it: the summary, what the compaction kept of the conversation before it (as
    /// its dialect's compaction rule says), then what came after.
    pub fn context_lines(&self) -> ContextLines {
        let chain = self.chain();
        // What a model is shown: messages but those kept for the transcript only, and
        // the entries a dialect shows as messages.
        let in_context = |i: &usize| {
            let env = &self.lines[*i].env;
            (env.is_message() && !env.is_transcript_only()) || is_shown_entry(env)
        };
        let last = chain.iter().enumerate().rev().find_map(|(at, &i)| Some((at, compaction_rule(&self.lines[i].env)?)));
        let cleared =
            chain[last.as_ref().map_or(0, |(at, _)| at + 1)..].iter().flat_map(|&i| cleared_tool_ids(&self.lines[i].env)).collect();
        let Some((at, rule)) = last else {
            return ContextLines {
                compaction: None,
                summaries: Vec::new(),
                lines: chain.iter().copied().filter(in_context).collect(),
                cleared,
                chain,
            };
        };
        let before = &chain[..at];
        let after = &chain[at + 1..];
        let summary_count =
            if rule.summary.is_some() { 0 } else { after.iter().take_while(|&&i| is_summary_entry(&self.lines[i].env)).count() };
        let kept = match rule.kept {
            Kept::Nothing => Vec::new(),
            Kept::From { id, line } => {
                let first = match (id, line) {
                    (Some(id), _) => before.iter().position(|&i| self.lines[i].env.uuid() == Some(id)),
                    (None, Some(line)) => before.iter().position(|&i| u64::from(self.lines[i].line) == line),
                    (None, None) => None,
                };
                first.map_or_else(Vec::new, |first| before[first..].to_vec())
            }
            // With an anchor the segment is relinked after the summary: when the
            // conversation goes on from its tail (an automatic compaction) it is already
            // in `after`; when it goes on from the summary itself (`/compact`, whose
            // command lines Claude Code 2.1.330 chains to the summary) the segment stands
            // beside the chain, and Claude Code sends it between the summary and the
            // rest. A segment without an anchor is found before the boundary.
            Kept::Segment(segment) => {
                let preserved = if segment.anchor.is_some() {
                    self.segment_beside(&segment, after)
                } else {
                    (|| {
                        let tail = before.iter().rposition(|&i| self.lines[i].env.uuid() == Some(segment.tail.as_str()))?;
                        let head = before[..=tail].iter().rposition(|&i| self.lines[i].env.uuid() == Some(segment.head.as_str()))?;
                        Some(before[head..=tail].to_vec())
                    })()
                };
                let mut preserved = preserved.unwrap_or_default();
                preserved.retain(|&i| boundary(&self.lines[i].env).is_none() && !is_summary_entry(&self.lines[i].env));
                preserved
            }
        };
        let lines = kept.into_iter().chain(after[summary_count..].iter().copied()).filter(|i| in_context(i)).collect();
        let summaries = after[..summary_count].to_vec();
        ContextLines { compaction: Some(chain[at]), summaries, lines, cleared, chain }
    }

    /// A relinked segment's lines, head to tail, when the chain `after` the compaction
    /// does not pass through it; `None` when it does, or when the segment cannot be
    /// walked whole (a line missing, a parent link that never reaches the head).
    fn segment_beside(&self, segment: &PreservedSegment, after: &[usize]) -> Option<Vec<usize>> {
        let index = self.index();
        let head = *index.get(segment.head.as_str())?;
        if after.contains(&head) {
            return None;
        }
        let mut at = *index.get(segment.tail.as_str())?;
        let mut lines = alloc::vec![at];
        // Each step goes to the line's parent: bounded by the line count whatever the
        // links say.
        for _ in 0..self.lines.len() {
            if at == head {
                lines.retain(|&i| self.is_live(&self.lines[i]));
                lines.reverse();
                return Some(lines);
            }
            at = *index.get(self.lines[at].env.parent_uuid()?)?;
            lines.push(at);
        }
        None
    }

    /// Which lines make up the context, if these lines — the end of a session, read
    /// from a line start — give the context the whole session gives: they hold the
    /// last compaction line, the entry it names as its logical parent (a leaf
    /// candidate), the newest leaf's chain back to that compaction, whatever it keeps
    /// from before it (a preserved segment, pi's first kept entry), and only messages
    /// with ids (line numbers count from the cut).
    pub fn end_plan(&self) -> Option<ContextLines> {
        let last = self.lines.iter().rposition(|l| compaction_rule(&l.env).is_some())?;
        let index = self.index();
        if boundary(&self.lines[last].env).and_then(|b| b.logical_parent).is_some_and(|uuid| !index.contains_key(uuid)) {
            return None;
        }
        let plan = self.context_lines();
        let compaction = &self.lines[plan.compaction?];
        if !plan.lines.iter().chain(&plan.summaries).all(|&i| self.lines[i].env.uuid().is_some()) {
            return None;
        }
        let rule = compaction_rule(&compaction.env)?;
        let on_chain = |uuid: &str| plan.chain.iter().any(|&i| self.lines[i].env.uuid() == Some(uuid));
        // A summary the compaction line holds is a message named by the line's id: a
        // line without one (crab's) is named by where it is, which counts from the cut.
        let named = rule.summary.is_none() || compaction.env.uuid().is_some();
        let whole = named
            && match &rule.kept {
                Kept::Nothing => true,
                Kept::From { id, .. } => id.is_none_or(on_chain),
                Kept::Segment(segment) if segment.anchor.is_some() => index.contains_key(segment.head.as_str()),
                Kept::Segment(segment) => on_chain(&segment.head) && on_chain(&segment.tail),
            };
        whole.then_some(plan)
    }

    /// The context a model resumes with (see [`Loaded::context_lines`]), split
    /// assistant lines merged by `message.id`.
    pub fn context(&self, sources: Sources) -> Context {
        build(self.pick(self.context_lines()), sources)
    }

    /// The context of `plan`'s lines. The lines are let go before the messages are
    /// built: a context of a whole session does not hold both.
    pub fn into_context(self, plan: ContextLines, sources: Sources) -> Context {
        let picked = self.pick(plan);
        drop(self);
        build(picked, sources)
    }

    /// What building the context needs of the lines `plan` chose.
    fn pick(&self, plan: ContextLines) -> Picked<'a> {
        // A summary the compaction line holds, as its dialect's client shows it to the
        // model (crab: a plain user message; pi: framed as pi frames it).
        let compaction = plan.compaction.map(|i| &self.lines[i]);
        let summaries = compaction
            .and_then(|line| {
                let rule = compaction_rule(&line.env)?;
                Some((line.entry_id().into_owned(), rule.format.dialect().shown_summary(rule.summary?)))
            })
            .into_iter()
            .collect();
        let lines = plan
            .summaries
            .iter()
            .chain(&plan.lines)
            .map(|&i| {
                let line = &self.lines[i];
                PickedLine {
                    part: line.part,
                    uuid: line.entry_id().into_owned(),
                    kind: line.env.kind.clone(),
                    message: shown_message(line),
                    is_compact_summary: is_summary_entry(&line.env),
                }
            })
            .collect();
        Picked { compacted: plan.compaction.is_some(), summaries, lines, cleared: plan.cleared }
    }
}

/// The lines a context is built from, taken out of the [`Loaded`] that chose them.
struct Picked<'a> {
    compacted: bool,
    /// The summary a compaction line holds: the line's id and the text.
    summaries: Vec<(String, String)>,
    lines: Vec<PickedLine<'a>>,
    cleared: BTreeSet<String>,
}

struct PickedLine<'a> {
    part: u32,
    uuid: String,
    kind: Str<'a>,
    message: Option<Raw<'a>>,
    is_compact_summary: bool,
}

fn build(mut picked: Picked<'_>, sources: Sources) -> Context {
    // At most a message a line: sized once, not grown by doubling (which holds two
    // copies at once).
    let messages = Vec::with_capacity(picked.summaries.len() + picked.lines.len());
    let mut context = Context { compacted: picked.compacted, messages };
    for (uuid, text) in picked.summaries {
        let content = serde_json::to_string(&[serde_json::json!({"type": "text", "text": text})]).unwrap_or_default();
        context.messages.push(ContextMessage {
            uuid,
            role: "user".into(),
            text: text.into(),
            content: content.into(),
            is_compact_summary: true,
            model: None,
        });
    }
    // The reply being merged: its `message.id` and index. Claude Code writes a reply
    // as one line per block, and the result of a tool it ran while the reply
    // streamed right after the call's line; the model got the reply as one message
    // and the results after it, which is how it is read back.
    let mut reply: Option<(&str, usize)> = None;
    // Read a batch at a time: what is read is held until it is merged.
    let stored = picked.lines.chunks_mut(STORED_BATCH).flat_map(|batch| {
        let stored = stored_messages(batch, sources.workers);
        batch.iter_mut().zip(stored)
    });
    for (line, stored) in stored {
        let Some(stored) = stored else { continue };
        let role = stored.role;
        let blocks = clear_results(stored.blocks, &picked.cleared);
        let text = stored.text;
        if role == "assistant"
            && let (Some(id), Some((reply_id, at))) = (stored.id, reply)
            && id == reply_id
            && let Some(previous) = context.messages.get_mut(at)
        {
            append_blocks(previous.content.to_mut(), &blocks);
            if !text.is_empty() {
                if !previous.text.is_empty() {
                    previous.text.to_mut().push('\n');
                }
                previous.text.to_mut().push_str(&text);
            }
            continue;
        }
        match role.as_str() {
            "assistant" => reply = stored.id.map(|id| (id, context.messages.len())),
            _ if stored.only_results => {}
            _ => reply = None,
        }
        context.messages.push(ContextMessage {
            uuid: core::mem::take(&mut line.uuid),
            role,
            text: sources.share(line.part, text),
            content: sources.share(line.part, blocks),
            is_compact_summary: line.is_compact_summary,
            model: stored.model.map(String::from),
        });
    }
    sources.release_sparse(&mut context);
    context
}

/// How many lines' messages are read at once before they are merged.
const STORED_BATCH: usize = 4096;

/// Each line's message in canonical form, read in pieces by `workers`: reading the
/// messages is most of building a context, and each is read on its own.
fn stored_messages<'l>(lines: &[PickedLine<'l>], workers: &Workers) -> Vec<Option<Stored<'l>>> {
    let mut stored = Vec::new();
    stored.resize_with(lines.len(), || None);
    let bytes = lines.iter().fold(0usize, |sum, line| sum.saturating_add(line.message.map_or(0, |m| m.get().len())));
    let per_piece = lines.len().div_ceil(workers.pieces_for(bytes)).max(1);
    let jobs: Vec<Job> = lines
        .chunks(per_piece)
        .zip(stored.chunks_mut(per_piece))
        .map(|(lines, stored)| -> Job {
            alloc::boxed::Box::new(move || {
                for (line, slot) in lines.iter().zip(stored) {
                    *slot = canonical::stored(line.kind.get().unwrap_or_default(), line.message);
                }
            })
        })
        .collect();
    workers.run.run(jobs);
    stored
}

/// A tool result's block once cleared (fields in the API's order).
#[derive(serde::Serialize)]
struct ClearedResult<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    tool_use_id: &'a str,
    content: &'static str,
}

/// The blocks with cleared tool results replaced by a note; every other block keeps
/// its JSON exactly as stored.
fn clear_results<'b>(blocks: Cow<'b, str>, cleared: &BTreeSet<String>) -> Cow<'b, str> {
    if cleared.is_empty() || !blocks.contains("tool_result") {
        return blocks;
    }
    let Ok(raw_blocks) = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(&blocks) else { return blocks };
    let mut changed = false;
    let rewritten: Vec<String> = raw_blocks
        .iter()
        .map(|raw| {
            let Some(block) = parse_block(raw.get()) else { return raw.get().to_string() };
            match block.tool_use_id.get() {
                Some(id) if block.kind.get() == Some("tool_result") && cleared.contains(id) => {
                    changed = true;
                    serde_json::to_string(&ClearedResult { kind: "tool_result", tool_use_id: id, content: CLEARED_RESULT })
                        .unwrap_or_default()
                }
                _ => raw.get().to_string(),
            }
        })
        .collect();
    if changed { Cow::Owned(alloc::format!("[{}]", rewritten.join(","))) } else { blocks }
}

/// Appends the blocks of JSON array `more` to JSON array `blocks`, in place: a reply
/// split over many lines is merged in time linear in its size.
fn append_blocks(blocks: &mut String, more: &str) {
    let tail = more.trim_start().strip_prefix('[').unwrap_or(more).trim_start();
    if tail.starts_with(']') {
        return;
    }
    let kept = blocks.trim_end().len();
    blocks.truncate(kept);
    if !blocks.ends_with(']') {
        *blocks = more.into();
        return;
    }
    blocks.pop();
    if !blocks.trim_end().ends_with('[') {
        blocks.push(',');
    }
    blocks.push_str(tail);
}
