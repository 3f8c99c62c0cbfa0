//! Threading: which entries are live, how they chain, and where the conversation's
//! newest leaf is. ONE rule, used by fresh loads and by the open-session cache alike.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::context::preserved_segment;
use super::scan::{Line, PartScan};
use super::{Entry, LoadReport, TypeCount};
use crate::message::calls::PendingCalls;
use crate::message::canonical;
use crate::support::hash::{FastMap, FastSet};
use crate::support::time;

/// All parts of a session, read once.
pub(crate) struct Loaded<'a> {
    pub lines: Vec<Line<'a>>,
    pub report: LoadReport,
    deleted: BTreeSet<String>,
    /// Claude Code's relinking: the head of a compaction's preserved segment continues
    /// from the compaction's summary (its `anchorUuid`), not from its old parent.
    relinks: BTreeMap<String, String>,
    /// Where the last part's torn tail starts, if it has one: the next write moves it
    /// aside, so what a write finds ends there.
    pub torn_at: Option<u64>,
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
        let mut torn_at = None;
        for (index, mut scan) in scans.into_iter().enumerate() {
            report.recovered_glued += scan.recovered_glued;
            report.invalid_utf8 += scan.invalid_utf8;
            report.lone_surrogates += scan.lone_surrogates;
            report.skipped.append(&mut scan.skipped);
            if let Some(at) = scan.torn_at {
                if index == last {
                    report.torn_tail = true;
                    torn_at = Some(at);
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
        let mut relinks = BTreeMap::new();
        for line in &lines {
            *by_type.entry(line.env.kind()).or_default() += 1;
            if line.env.is_tombstone()
                && let Some(target) = line.env.tombstone_target()
            {
                deleted.insert(target.into_owned());
            }
            if line.env.is_compact_boundary()
                && let Some(segment) = preserved_segment(line.env.rare().compact_metadata)
                && let Some(anchor) = segment.anchor
            {
                relinks.insert(segment.head, anchor);
            }
        }
        report.entries = lines.len() as u32;
        report.by_type = by_type.into_iter().map(|(kind, count)| TypeCount { kind: kind.to_string(), count }).collect();
        if !relinks.is_empty() {
            // A relink to a summary this session does not have would cut the chain.
            let uuids: BTreeSet<&str> = lines.iter().filter_map(|l| l.env.uuid()).collect();
            relinks.retain(|_, anchor| uuids.contains(anchor.as_str()));
        }
        let mut loaded = Loaded { lines, report, deleted, relinks, torn_at };
        loaded.report.tombstoned = loaded.lines.iter().filter(|l| l.env.uuid().is_some_and(|u| loaded.deleted.contains(u))).count() as u32;
        loaded
    }

    /// Visible to readers: not a tombstone line and not tombstoned.
    pub fn is_live(&self, line: &Line) -> bool {
        !line.env.is_tombstone() && !line.env.uuid().is_some_and(|u| self.deleted.contains(u))
    }

    pub fn index(&self) -> FastMap<&str, usize> {
        let mut index = FastMap::with_capacity_and_hasher(self.lines.len(), Default::default());
        for (i, line) in self.lines.iter().enumerate() {
            if let Some(uuid) = line.env.uuid() {
                index.entry(uuid).or_insert(i);
            }
        }
        index
    }

    /// The summary a relinked head continues from: Claude Code relinks the head of a
    /// segment a compaction preserved to the compaction's summary.
    fn relink<'s>(&'s self, line: &Line) -> Option<&'s str> {
        line.env.uuid().and_then(|u| self.relinks.get(u)).map(String::as_str)
    }

    /// Where the conversation continues from: the summary, for the head of a segment
    /// a compaction preserved (Claude Code relinks it there); else its parent, or across
    /// a compaction boundary (whose `parentUuid` is null) to the entry before it.
    pub fn parent_of<'s>(&'s self, line: &'s Line) -> Option<&'s str> {
        if let Some(anchor) = self.relink(line) {
            return Some(anchor);
        }
        match line.env.parent_uuid() {
            Some(parent) => Some(parent),
            None if line.env.is_compact_boundary() => line.env.rare().logical_parent_uuid.get(),
            None => None,
        }
    }

    /// The newest leaf of the main conversation: the live, non-sidechain entry with a
    /// uuid and no live child, at or after the last compaction line (or named by it as
    /// its logical parent), with the latest timestamp (the later line on a tie). A sub-agent's own file holds only sidechain
    /// entries: then they are the conversation.
    pub fn leaf(&self) -> Option<usize> {
        let mut has_child = FastSet::with_capacity_and_hasher(self.lines.len(), Default::default());
        for line in self.lines.iter().filter(|l| self.is_live(l)) {
            // A compaction boundary's logical parent is not an edge here: the entry it
            // names stays a leaf, as in Claude Code, and the next entry continues the
            // kept messages. A relinked head counts as a child of both its summary and
            // the entry it used to continue (summarised history, never the leaf,
            // whatever the clocks say).
            has_child.extend(line.env.parent_uuid());
            has_child.extend(self.relink(line));
        }
        let only_sidechains = self.lines.iter().all(|l| l.env.is_sidechain.0 || l.env.uuid().is_none());
        // What came before the last compaction is summarised: no entry there is the
        // conversation's leaf but the one the compaction names as its logical parent
        // (the last kept message, where Claude Code chains its next prompt). This is
        // what lets resume read a session from its end.
        let last_compaction = self.lines.iter().rposition(|l| l.env.is_compaction());
        let since = last_compaction.unwrap_or(0);
        let kept_leaf = last_compaction.and_then(|i| self.lines[i].env.rare().logical_parent_uuid.get());
        // pi's `session` header carries an id but stands outside the tree.
        let candidates = self.lines.iter().enumerate().filter(|(i, l)| {
            (*i >= since || (kept_leaf.is_some() && l.env.uuid() == kept_leaf))
                && self.is_live(l)
                && !l.env.is_session_header()
                && (only_sidechains || !l.env.is_sidechain.0)
        });
        let leaves = candidates.filter(|(_, l)| l.env.uuid().is_some_and(|u| !has_child.contains(u)));
        leaves.max_by_key(|(i, l)| (l.env.timestamp.get().and_then(time::parse_millis).unwrap_or(i64::MIN), *i)).map(|(i, _)| i)
    }

    /// The main conversation from its root to the newest leaf, through compaction
    /// boundaries, as indices into `lines` (tombstoned entries left out).
    pub fn chain(&self) -> Vec<usize> {
        self.chain_to(self.leaf())
    }

    /// [`Loaded::chain`] for a leaf already found.
    fn chain_to(&self, leaf: Option<usize>) -> Vec<usize> {
        let Some(leaf) = leaf else {
            // A transcript without ids (pi v1, before pi's own migration gave entries
            // ids) is one conversation in file order.
            let in_chain = |l: &Line| self.is_live(l) && (l.env.is_message() || l.env.is_compaction());
            return (0..self.lines.len()).filter(|&i| in_chain(&self.lines[i])).collect();
        };
        self.chain_from(leaf, &self.index())
    }

    /// The conversation from its root to line `leaf`, by the same walk as [`Loaded::chain`].
    pub fn chain_from(&self, leaf: usize, index: &FastMap<&str, usize>) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut seen = alloc::vec![false; self.lines.len()];
        // Where a relinked head continued before the compaction: once the walk is back
        // at the compaction, the summarised history goes on from there.
        let mut summarised_from: Option<usize> = None;
        let mut current = Some(leaf);
        while let Some(i) = current {
            match seen.get_mut(i) {
                Some(visited) if !*visited => *visited = true,
                _ => break,
            }
            chain.push(i);
            let line = &self.lines[i];
            if self.relink(line).is_some() {
                summarised_from = line.env.parent_uuid().and_then(|p| index.get(p).copied());
            }
            current = self.parent_of(line).and_then(|p| index.get(p).copied());
            if line.env.is_compact_boundary() && current.is_none_or(|next| seen.get(next).is_none_or(|&seen| seen)) {
                current = summarised_from.take();
            }
        }
        chain.reverse();
        chain.retain(|&i| self.is_live(&self.lines[i]));
        chain
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

/// Where the next entry of a session chains to, as the open-session cache keeps it:
/// exactly what [`Loaded::leaf`] gives for the same bytes, kept up to date by
/// [`Tip::advance`] without reading the session again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tip {
    pub leaf: Option<String>,
    /// The leaf's timestamp (`i64::MIN` without one).
    leaf_ms: i64,
    /// No main-conversation entry with an id yet: sidechain entries are the
    /// conversation (a sub-agent's own file).
    only_sidechains: bool,
    /// The calls of the reply the conversation ends with that no result answers yet.
    pub calls: PendingCalls,
}

impl Loaded<'_> {
    pub fn tip(&self) -> Tip {
        let leaf = self.leaf();
        Tip {
            leaf: leaf.and_then(|i| self.lines[i].env.uuid()).map(ToString::to_string),
            leaf_ms: leaf.and_then(|i| self.lines[i].env.timestamp.get()).and_then(time::parse_millis).unwrap_or(i64::MIN),
            only_sidechains: self.lines.iter().all(|l| l.env.is_sidechain.0 || l.env.uuid().is_none()),
            calls: self.pending_calls(&self.chain_to(leaf)),
        }
    }

    /// The pending calls at the end of the main chain: the fold of [`PendingCalls`]
    /// over the chain, started at its last barrier (a compaction, or a message that
    /// ends every call before it), which gives what folding the whole chain gives.
    fn pending_calls(&self, chain: &[usize]) -> PendingCalls {
        let mut steps = Vec::new();
        for &i in chain.iter().rev() {
            let line = &self.lines[i];
            if line.env.is_compaction() {
                break;
            }
            if let Some(activity) = canonical::activity(line) {
                let ends = !activity.assistant && activity.other;
                steps.push((activity, line.env.uuid()));
                if ends {
                    break;
                }
            }
        }
        let mut calls = PendingCalls::default();
        for (activity, line) in steps.into_iter().rev() {
            calls.step(activity, line);
        }
        calls
    }
}

impl Tip {
    /// The conversation is made of sidechain entries (a sub-agent's own file), so
    /// what is written to it is too.
    pub fn sidechain_only(&self) -> bool {
        self.only_sidechains && self.leaf.is_some()
    }

    /// Takes lines appended after everything the tip has seen into account. Returns
    /// `false` when only a full read can tell what a fresh load would give (a
    /// tombstone, a relinking compaction, a branch, an older timestamp); the tip is
    /// then unknown. When it returns `true`, the tip equals [`Loaded::leaf`] of all the
    /// lines: a new line takes over only when it continues the leaf, is a candidate
    /// by the same rule, and sorts after the old leaf, which then has a child.
    pub fn advance(&mut self, lines: &[Line]) -> bool {
        for line in lines {
            let env = &line.env;
            if env.is_tombstone()
                || env.is_session_header()
                || (env.is_compact_boundary() && preserved_segment(env.rare().compact_metadata).is_some_and(|s| s.anchor.is_some()))
            {
                return false;
            }
            let parent = env.parent_uuid();
            // An id seen again (a line of the leaf's id, or its own parent's) makes the
            // tree a loop: only a full read can tell.
            if env.uuid().is_some() && (env.uuid() == parent || env.uuid() == self.leaf.as_deref()) {
                return false;
            }
            let continues = parent.is_some() && parent == self.leaf.as_deref();
            let candidate = env.uuid().is_some() && (!env.is_sidechain.0 || self.only_sidechains);
            if !candidate {
                // A line that is no candidate but a child of the leaf takes the leaf's
                // place away without offering one.
                if continues {
                    return false;
                }
                continue;
            }
            let ms = env.timestamp.get().and_then(time::parse_millis).unwrap_or(i64::MIN);
            let first = self.leaf.is_none() && parent.is_none();
            let switches_rule = self.only_sidechains && !env.is_sidechain.0 && self.leaf.is_some();
            if !(continues || first) || switches_rule || ms < self.leaf_ms {
                return false;
            }
            if env.is_compaction() {
                self.calls.barrier();
            } else if let Some(activity) = canonical::activity(line) {
                self.calls.step(activity, env.uuid());
            }
            self.leaf = env.uuid().map(ToString::to_string);
            self.leaf_ms = ms;
            self.only_sidechains &= env.is_sidechain.0;
        }
        true
    }
}
