//! A session's parts read as one transcript: tombstones, threading, resume context and
//! consistency checks. Everything here works on the borrowed lines of one read.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::time;
use crate::transcript::{Block, Content, Entry, Line, LoadReport, PartScan, TypeCount, parse_content, parse_message};

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
    pub text: String,
    /// The message content as JSON: a string, or the blocks of every entry that
    /// carried this message (Claude Code splits one reply across several lines).
    pub content: String,
    /// The summary a compaction left in place of the earlier history.
    pub is_compact_summary: bool,
}

/// A problem `check` found in the structure of a transcript.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub part: u32,
    pub line: u32,
    /// The id involved: the missing parent uuid, or the tool call id.
    pub id: String,
}

/// The load report plus structural problems.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CheckReport {
    pub load: LoadReport,
    /// Entries whose `parentUuid` names no entry of the session.
    pub dangling_parents: Vec<Finding>,
    /// `tool_use` blocks with no `tool_result` after them.
    pub orphaned_tool_uses: Vec<Finding>,
    /// `tool_result` blocks with no `tool_use` before them.
    pub orphaned_tool_results: Vec<Finding>,
}

impl CheckReport {
    /// Whether anything needs attention: unreadable lines, a torn tail, glued objects,
    /// invalid UTF-8, dangling parents or unpaired tool calls.
    pub fn has_problems(&self) -> bool {
        let load = &self.load;
        !load.skipped.is_empty()
            || load.torn_tail
            || load.recovered_glued > 0
            || load.invalid_utf8 > 0
            || !self.dangling_parents.is_empty()
            || !self.orphaned_tool_uses.is_empty()
            || !self.orphaned_tool_results.is_empty()
    }
}

/// How pi shows a compaction summary to the model.
pub(crate) const PI_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n<summary>\n";
pub(crate) const PI_SUMMARY_SUFFIX: &str = "\n</summary>";

/// The lines of a resume context (indices into [`Loaded::lines`]).
pub(crate) struct ContextLines {
    /// The last compaction on the chain (a `compact_boundary` or pi `compaction`).
    pub compaction: Option<usize>,
    /// The compaction summaries that follow a `compact_boundary`.
    pub summaries: Vec<usize>,
    /// The messages the model sees after the summary, in order.
    pub lines: Vec<usize>,
    /// Tool results cleared by `microcompact_boundary` entries since the compaction.
    pub cleared: BTreeSet<String>,
}

/// The tool ids a `microcompact_boundary` cleared.
fn cleared_tool_ids(metadata: Option<&serde_json::value::RawValue>) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        #[serde(rename = "compactedToolIds", default)]
        ids: Vec<String>,
    }
    metadata.and_then(|m| serde_json::from_str::<Metadata>(m.get()).ok()).map_or_else(Vec::new, |m| m.ids)
}

/// What a model sees in place of a cleared tool result (Claude Code's wording).
pub(crate) const CLEARED_RESULT: &str = "[Old tool result content cleared]";

/// `(headUuid, tailUuid)` of a boundary's `compactMetadata.preservedSegment`.
fn preserved_segment(metadata: Option<&serde_json::value::RawValue>) -> Option<(String, String)> {
    #[derive(serde::Deserialize)]
    struct Metadata<'a> {
        #[serde(rename = "preservedSegment", borrow)]
        preserved_segment: Option<Segment<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Segment<'a> {
        #[serde(rename = "headUuid", borrow)]
        head: crate::lenient::Str<'a>,
        #[serde(rename = "tailUuid", borrow)]
        tail: crate::lenient::Str<'a>,
    }
    let metadata: Metadata = serde_json::from_str(metadata?.get()).ok()?;
    let segment = metadata.preserved_segment?;
    Some((segment.head.get()?.to_string(), segment.tail.get()?.to_string()))
}

/// All parts of a session, read once.
pub(crate) struct Loaded<'a> {
    pub lines: Vec<Line<'a>>,
    pub report: LoadReport,
    deleted: BTreeSet<String>,
}

impl<'a> Loaded<'a> {
    /// Joins the parts in order, counts entries by type and applies tombstones from
    /// any part to entries in any part.
    pub fn assemble(scans: Vec<PartScan<'a>>) -> Self {
        let mut report = LoadReport::default();
        // The first part's index is taken over, not copied: copying would hold two
        // indexes at once.
        let mut lines: Vec<Line<'a>> = Vec::new();
        let last = scans.len().saturating_sub(1);
        for (index, mut scan) in scans.into_iter().enumerate() {
            report.recovered_glued += scan.recovered_glued;
            report.invalid_utf8 += scan.invalid_utf8;
            report.skipped.append(&mut scan.skipped);
            if scan.torn_at.is_some() {
                if index == last {
                    report.torn_tail = true;
                } else {
                    let part = scan.lines.first().map_or(index as u32 + 1, |l| l.part);
                    report.skipped.push(crate::SkippedLine {
                        part,
                        line: scan.line_count,
                        reason: "torn line (cut off mid-write) at the end of an earlier part".into(),
                    });
                }
            }
            if lines.is_empty() {
                core::mem::swap(&mut lines, &mut scan.lines);
            } else {
                lines.append(&mut scan.lines);
            }
        }
        let mut by_type: BTreeMap<&str, u32> = BTreeMap::new();
        let mut deleted = BTreeSet::new();
        for line in &lines {
            *by_type.entry(line.env.kind()).or_default() += 1;
            if line.env.kind() == "tombstone"
                && let Some(target) = line.env.deleted_uuid.get()
            {
                deleted.insert(target.to_string());
            }
        }
        report.entries = lines.len() as u32;
        report.by_type = by_type.into_iter().map(|(kind, count)| TypeCount { kind: kind.to_string(), count }).collect();
        let mut loaded = Loaded { lines, report, deleted };
        loaded.report.tombstoned = loaded.lines.iter().filter(|l| l.env.uuid().is_some_and(|u| loaded.deleted.contains(u))).count() as u32;
        loaded
    }

    /// Visible to readers: not a tombstone line and not tombstoned.
    pub fn is_live(&self, line: &Line) -> bool {
        line.env.kind() != "tombstone" && !line.env.uuid().is_some_and(|u| self.deleted.contains(u))
    }

    pub fn index(&self) -> BTreeMap<&str, usize> {
        let mut index = BTreeMap::new();
        for (i, line) in self.lines.iter().enumerate() {
            if let Some(uuid) = line.env.uuid() {
                index.entry(uuid).or_insert(i);
            }
        }
        index
    }

    /// Where the conversation continues from: its parent, or across a compaction
    /// boundary (whose `parentUuid` is null) to the entry before it.
    fn parent_of<'s>(line: &'s Line) -> Option<&'s str> {
        match line.env.parent_uuid() {
            Some(parent) => Some(parent),
            None if line.env.is_compact_boundary() => line.env.logical_parent_uuid.get(),
            None => None,
        }
    }

    /// The newest leaf of the main conversation: the live, non-sidechain entry with a
    /// uuid and no live child, with the latest timestamp (the later line on a tie). A
    /// sub-agent's own file holds only sidechain entries: then they are the conversation.
    pub fn leaf(&self) -> Option<usize> {
        let mut has_child = BTreeSet::new();
        for line in self.lines.iter().filter(|l| self.is_live(l)) {
            if let Some(parent) = Self::parent_of(line) {
                has_child.insert(parent);
            }
        }
        let only_sidechains = self.lines.iter().all(|l| l.env.is_sidechain.0 || l.env.uuid().is_none());
        // pi's `session` header carries an id but stands outside the tree.
        let candidates = self
            .lines
            .iter()
            .enumerate()
            .filter(|(_, l)| self.is_live(l) && l.env.kind() != "session" && (only_sidechains || !l.env.is_sidechain.0));
        let leaves = candidates.filter(|(_, l)| l.env.uuid().is_some_and(|u| !has_child.contains(u)));
        leaves.max_by_key(|(i, l)| (l.env.timestamp.get().and_then(time::parse_millis).unwrap_or(i64::MIN), *i)).map(|(i, _)| i)
    }

    /// The main conversation from its root to the newest leaf, through compaction
    /// boundaries, as indices into `lines` (tombstoned entries left out).
    pub fn chain(&self) -> Vec<usize> {
        let Some(leaf) = self.leaf() else {
            // A transcript without ids (pi v1, before pi's own migration gave entries
            // ids) is one conversation in file order.
            let in_chain = |l: &Line| self.is_live(l) && (l.env.is_message() || l.env.is_compaction());
            return (0..self.lines.len()).filter(|&i| in_chain(&self.lines[i])).collect();
        };
        let index = self.index();
        let mut chain = Vec::new();
        let mut seen = BTreeSet::new();
        let mut current = Some(leaf);
        while let Some(i) = current {
            if !seen.insert(i) {
                break;
            }
            chain.push(i);
            current = Self::parent_of(&self.lines[i]).and_then(|p| index.get(p).copied());
        }
        chain.reverse();
        chain.retain(|&i| self.is_live(&self.lines[i]));
        chain
    }

    /// Which lines make up the context a model resumes with, in order.
    ///
    /// Without compaction: the messages of the main chain. After a Claude Code
    /// `compact_boundary`: the summary that follows it, then the segment the boundary
    /// preserved (`compactMetadata.preservedSegment`, head to tail), then what came
    /// after. After a pi `compaction`: its summary, the chain from `firstKeptEntryId` to
    /// the compaction, then what came after.
    pub fn context_lines(&self) -> ContextLines {
        let chain = self.chain();
        let is_message = |i: &usize| self.lines[*i].env.is_message();
        let compaction = chain.iter().rposition(|&i| self.lines[i].env.is_compaction());
        let cleared = chain[compaction.map_or(0, |at| at + 1)..]
            .iter()
            .filter(|&&i| self.lines[i].env.is_microcompact_boundary())
            .flat_map(|&i| cleared_tool_ids(self.lines[i].env.microcompact_metadata))
            .collect();
        let Some(at) = compaction else {
            return ContextLines {
                compaction: None,
                summaries: Vec::new(),
                lines: chain.into_iter().filter(is_message).collect(),
                cleared,
            };
        };
        let compaction = chain[at];
        let after = &chain[at + 1..];
        let env = &self.lines[compaction].env;
        if env.is_crab_compaction() {
            let lines = after.iter().copied().filter(is_message).collect();
            return ContextLines { compaction: Some(compaction), summaries: Vec::new(), lines, cleared };
        }
        if env.is_pi_compaction() {
            let first_kept =
                env.first_kept_entry_id.get().and_then(|id| chain[..at].iter().position(|&i| self.lines[i].env.uuid() == Some(id)));
            let kept = first_kept.map_or(&chain[..0], |start| &chain[start..at]);
            let lines = kept.iter().chain(after).copied().filter(is_message).collect();
            return ContextLines { compaction: Some(compaction), summaries: Vec::new(), lines, cleared };
        }
        let summary_count = after.iter().take_while(|&&i| self.lines[i].env.is_compact_summary.0).count();
        let preserved = preserved_segment(env.compact_metadata)
            .and_then(|(head, tail)| {
                let tail = chain[..at].iter().rposition(|&i| self.lines[i].env.uuid() == Some(tail.as_str()))?;
                let head = chain[..=tail].iter().rposition(|&i| self.lines[i].env.uuid() == Some(head.as_str()))?;
                Some(&chain[head..=tail])
            })
            .unwrap_or(&[]);
        let kept =
            preserved.iter().copied().filter(|&i| !self.lines[i].env.is_compact_boundary() && !self.lines[i].env.is_compact_summary.0);
        let lines = kept.chain(after[summary_count..].iter().copied()).filter(|i| is_message(i)).collect();
        ContextLines { compaction: Some(compaction), summaries: after[..summary_count].to_vec(), lines, cleared }
    }

    /// The context a model resumes with (see [`Loaded::context_lines`]), split
    /// assistant lines merged by `message.id`.
    pub fn context(&self) -> Context {
        let plan = self.context_lines();
        let mut context = Context { compacted: plan.compaction.is_some(), messages: Vec::new() };
        if let Some(marker) = plan.compaction.map(|i| &self.lines[i]).filter(|l| l.env.is_crab_compaction()) {
            // crab injects its summary as a plain user message.
            let text = marker.env.compact.get().unwrap_or_default().to_string();
            let content = serde_json::to_string(&[serde_json::json!({"type": "text", "text": text})]).unwrap_or_default();
            context.messages.push(ContextMessage {
                uuid: marker.entry_id().into_owned(),
                role: "user".into(),
                text,
                content,
                is_compact_summary: true,
            });
        }
        if let Some(summary) = plan.compaction.and_then(|i| self.lines[i].env.is_pi_compaction().then(|| &self.lines[i])) {
            let text = alloc::format!("{PI_SUMMARY_PREFIX}{}{PI_SUMMARY_SUFFIX}", summary.env.summary.get().unwrap_or_default());
            let content = serde_json::to_string(&[serde_json::json!({"type": "text", "text": text})]).unwrap_or_default();
            context.messages.push(ContextMessage {
                uuid: summary.env.uuid().unwrap_or_default().to_string(),
                role: "user".into(),
                text,
                content,
                is_compact_summary: true,
            });
        }
        let mut last_reply_id: Option<&str> = None;
        for &i in plan.summaries.iter().chain(&plan.lines) {
            let line = &self.lines[i];
            let Some(message) = line.env.message.and_then(parse_message) else { continue };
            let role = message.role.get().unwrap_or(line.env.kind()).to_string();
            let blocks = clear_results(content_blocks(message.content), &plan.cleared);
            let text = readable(message.content);
            let reply_id = if role == "assistant" { message_id(line) } else { None };
            let same_reply = reply_id.is_some() && reply_id == last_reply_id;
            last_reply_id = reply_id;
            match context.messages.last_mut() {
                Some(previous) if same_reply => {
                    previous.content = merge_blocks(&previous.content, &blocks);
                    if !text.is_empty() {
                        if !previous.text.is_empty() {
                            previous.text.push('\n');
                        }
                        previous.text.push_str(&text);
                    }
                }
                _ => context.messages.push(ContextMessage {
                    uuid: line.entry_id().into_owned(),
                    role,
                    text,
                    content: blocks,
                    is_compact_summary: line.env.is_compact_summary.0,
                }),
            }
        }
        context
    }

    /// Dangling parents and tool calls without results (or results without calls).
    pub fn check(&self) -> CheckReport {
        let index = self.index();
        let mut report = CheckReport { load: self.report.clone(), ..CheckReport::default() };
        let mut calls: BTreeMap<String, (u32, u32)> = BTreeMap::new();
        let mut answered: BTreeSet<String> = BTreeSet::new();
        for line in self.lines.iter().filter(|l| self.is_live(l)) {
            if let Some(parent) = line.env.parent_uuid()
                && !index.contains_key(parent)
            {
                report.dangling_parents.push(Finding { part: line.part, line: line.line, id: parent.to_string() });
            }
            let Some(message) = line.env.message.and_then(parse_message) else { continue };
            let Some(Content::Blocks(blocks)) = parse_content(message.content) else { continue };
            for block in &blocks {
                match block.kind.get() {
                    Some("tool_use") => {
                        if let Some(id) = block.id.get() {
                            calls.insert(id.to_string(), (line.part, line.line));
                        }
                    }
                    Some("tool_result") => {
                        let Some(id) = block.tool_use_id.get() else { continue };
                        if calls.contains_key(id) {
                            answered.insert(id.to_string());
                        } else {
                            report.orphaned_tool_results.push(Finding { part: line.part, line: line.line, id: id.to_string() });
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut unanswered: Vec<Finding> =
            calls.into_iter().filter(|(id, _)| !answered.contains(id)).map(|(id, (part, line))| Finding { part, line, id }).collect();
        unanswered.sort_by_key(|f| (f.part, f.line));
        report.orphaned_tool_uses = unanswered;
        report
    }

    /// Live entries in file order, and the main chain as indices into them.
    pub fn entries_and_chain(&self) -> (Vec<Entry>, Vec<u32>) {
        let mut position = alloc::vec![u32::MAX; self.lines.len()];
        let mut entries = Vec::new();
        for (i, line) in self.lines.iter().enumerate() {
            if self.is_live(line) {
                position[i] = entries.len() as u32;
                entries.push(line.to_entry());
            }
        }
        let chain = self.chain().into_iter().map(|i| position[i]).collect();
        (entries, chain)
    }
}

/// `message.id` of an entry, borrowed from the line's text.
fn message_id<'s>(line: &'s Line) -> Option<&'s str> {
    let message = line.env.message.and_then(parse_message)?;
    match message.id.0? {
        alloc::borrow::Cow::Borrowed(id) => Some(id),
        // Message ids are API identifiers without escapes; one that has them is not merged.
        alloc::borrow::Cow::Owned(_) => None,
    }
}

/// A message content as JSON blocks (a string content becomes one text block).
fn content_blocks(content: Option<&serde_json::value::RawValue>) -> String {
    match content {
        Some(raw) if raw.get().starts_with('[') => raw.get().to_string(),
        Some(raw) => alloc::format!("[{{\"type\":\"text\",\"text\":{}}}]", raw.get()),
        None => "[]".to_string(),
    }
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
fn clear_results(blocks: String, cleared: &BTreeSet<String>) -> String {
    if cleared.is_empty() || !blocks.contains("tool_result") {
        return blocks;
    }
    let Ok(raw_blocks) = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(&blocks) else { return blocks };
    let mut changed = false;
    let rewritten: Vec<String> = raw_blocks
        .iter()
        .map(|raw| {
            let Ok(block) = serde_json::from_str::<Block>(raw.get()) else { return raw.get().to_string() };
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
    if changed { alloc::format!("[{}]", rewritten.join(",")) } else { blocks }
}

/// Two JSON block arrays as one.
fn merge_blocks(first: &str, second: &str) -> String {
    let head = first.trim_end().strip_suffix(']').unwrap_or(first).trim_end();
    let tail = second.trim_start().strip_prefix('[').unwrap_or(second).trim_start();
    match (head == "[", tail == "]") {
        (true, _) => second.to_string(),
        (_, true) => first.to_string(),
        _ => alloc::format!("{head},{tail}"),
    }
}

/// Text for people: text blocks as they are, other blocks as short markers.
fn readable(content: Option<&serde_json::value::RawValue>) -> String {
    match parse_content(content) {
        Some(Content::Text(text)) => text.into_owned(),
        Some(Content::Blocks(blocks)) => blocks.iter().filter_map(block_text).collect::<Vec<_>>().join("\n"),
        None => String::new(),
    }
}

fn block_text(block: &Block) -> Option<String> {
    match block.kind.get()? {
        "text" => block.text.get().map(ToString::to_string),
        "tool_use" => Some(alloc::format!("[tool_use {} {}]", block.name.get().unwrap_or("?"), block.id.get().unwrap_or("?"))),
        "tool_result" => Some(alloc::format!("[tool_result {}]", block.tool_use_id.get().unwrap_or("?"))),
        "image" => Some("[image]".to_string()),
        "thinking" | "redacted_thinking" => None,
        other => Some(alloc::format!("[{other}]")),
    }
}
