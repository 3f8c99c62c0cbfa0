//! Threading: which entries are live, how they chain, and where the conversation's
//! newest leaf is. ONE rule, used by fresh loads and by the open-session cache alike.

use alloc::collections::{BTreeMap, BTreeSet, BinaryHeap};
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cmp::Reverse;
use core::ops::Range;

use super::{Entry, LoadReport, TypeCount};
use crate::dialect::{self, canonical, relinked_segment};
use crate::message::calls::{self, Activity, PendingCalls};
use crate::scan::{Line, LineType, PartScan};
use crate::support::hash::FastMap;
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

/// No line: a line without an id, or whose parent no line has.
const NO_LINE: usize = usize::MAX;

/// How a session's lines link, found once: the first line of each id, and each line's
/// parent's first line. The walks over a long session (the leaf, the chain) then go by
/// position, not by hashing and comparing ids whose text is out of the cache.
pub(crate) struct Links<'s> {
    /// The first line of each id.
    pub index: FastMap<&'s str, usize>,
    /// Each line's first line of its own id, or [`NO_LINE`].
    pub(super) first: Vec<usize>,
    /// The first line of the id each line continues from ([`Loaded::parent_of`]), or
    /// [`NO_LINE`].
    parent: Vec<usize>,
}

impl Links<'_> {
    /// The parent's line of line `i`, if any.
    pub(super) fn parent(&self, i: usize) -> Option<usize> {
        self.parent.get(i).copied().filter(|&at| at != NO_LINE)
    }

    fn line_of(&self, uuid: Option<&str>) -> Option<usize> {
        uuid.and_then(|uuid| self.index.get(uuid)).copied()
    }
}

/// A walk from a leaf toward the root ([`Loaded::walk_from`]).
pub(crate) struct Walk {
    /// The lines passed, the leaf first.
    pub order: Vec<usize>,
    /// Per line of the session: passed.
    pub seen: Vec<bool>,
    /// The last step at which the walk found a line it had passed, and went another
    /// way than a walk that had not passed it would.
    last_turned: Option<usize>,
}

impl Walk {
    /// Per step: the walk from this line on is the walk of any leaf that comes to it
    /// through lines that continue plainly ([`Loaded::continues_plainly`]). So it is
    /// when every line this walk passed before it continued plainly (nothing
    /// summarised is pending) and no turn at or after it depended on lines before it.
    pub fn settled(&self, loaded: &Loaded, links: &Links) -> Vec<bool> {
        let mut plain_so_far = true;
        self.order
            .iter()
            .enumerate()
            .map(|(step, &i)| {
                let settled = plain_so_far && self.last_turned.is_none_or(|turned| step > turned);
                plain_so_far &= loaded.continues_plainly(i, links);
                settled
            })
            .collect()
    }
}

/// A chain with what hangs off it put back ([`Loaded::with_parallel_results`]).
pub(crate) struct Gathered {
    pub chain: Vec<usize>,
    /// The results put back.
    pub kept: Vec<usize>,
    /// A result was left out because a later one answered the same call.
    pub repeated: bool,
}

/// Where [`Loaded::with_parallel_results`] looks for what hangs off a chain.
pub(crate) enum Hanging<'h> {
    /// Every line of the session; the chain a whole walk's, `walked` per line.
    All { walked: &'h [bool] },
    /// The descendants of the chain's lines; the chain the end of a walk's, from a
    /// prompt on, whose lines `walked` tells. A line the walk passed before the prompt
    /// is never among them but as a compaction boundary (any other line under the end
    /// would lead the walk back to the end), and a boundary is never put back.
    Below { walked: &'h dyn Fn(usize) -> bool, children: &'h Children },
}

impl Hanging<'_> {
    fn walked(&self, i: usize) -> bool {
        match self {
            Hanging::All { walked } => walked.get(i) == Some(&true),
            Hanging::Below { walked, .. } => walked(i),
        }
    }
}

/// Each line's children, by the parent links: lines written before their parent too.
pub(crate) struct Children {
    starts: Vec<usize>,
    lines: Vec<usize>,
}

impl Children {
    pub fn new(links: &Links) -> Self {
        let count = links.parent.len();
        let mut starts = alloc::vec![0; count + 1];
        for &parent in links.parent.iter().filter(|&&parent| parent != NO_LINE) {
            starts[parent + 1] += 1;
        }
        for i in 0..count {
            starts[i + 1] += starts[i];
        }
        let mut next = starts.clone();
        let mut lines = alloc::vec![0; starts[count]];
        for (child, &parent) in links.parent.iter().enumerate().filter(|(_, parent)| **parent != NO_LINE) {
            lines[next[parent]] = child;
            next[parent] += 1;
        }
        Children { starts, lines }
    }

    pub fn of(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let (start, end) = (self.starts.get(i).copied().unwrap_or(0), self.starts.get(i + 1).copied().unwrap_or(0));
        self.lines.get(start..end).unwrap_or_default().iter().copied()
    }
}

/// The lines [`Loaded::with_parallel_results`] considers, in file order.
enum Candidates<'c> {
    All(Range<usize>),
    /// The chain's children, and the children of each line put back after them.
    Below {
        below: BinaryHeap<Reverse<usize>>,
        children: &'c Children,
    },
}

impl Candidates<'_> {
    fn next(&mut self) -> Option<usize> {
        match self {
            Candidates::All(lines) => lines.next(),
            Candidates::Below { below, .. } => below.pop().map(|Reverse(i)| i),
        }
    }

    /// Line `i` was put back: its children written after it are considered too (a
    /// child written before its parent is not, in either kind of pass).
    fn anchored(&mut self, i: usize) {
        if let Candidates::Below { below, children } = self {
            below.extend(children.of(i).filter(|&child| child > i).map(Reverse));
        }
    }
}

/// A position per line: dense over a whole chain, sparse over the end of one.
enum Marks {
    Dense(Vec<usize>),
    Sparse(FastMap<usize, usize>),
}

impl Marks {
    fn new(hanging: &Hanging, lines: usize) -> Self {
        match hanging {
            Hanging::All { .. } => Marks::Dense(alloc::vec![NO_LINE; lines]),
            Hanging::Below { .. } => Marks::Sparse(FastMap::default()),
        }
    }

    fn get(&self, i: usize) -> usize {
        match self {
            Marks::Dense(marks) => marks.get(i).copied().unwrap_or(NO_LINE),
            Marks::Sparse(marks) => marks.get(&i).copied().unwrap_or(NO_LINE),
        }
    }

    fn set(&mut self, i: usize, at: usize) {
        match self {
            Marks::Dense(marks) => {
                if let Some(mark) = marks.get_mut(i) {
                    *mark = at;
                }
            }
            Marks::Sparse(marks) => {
                marks.insert(i, at);
            }
        }
    }
}

/// Why [`Loaded::branch_point`] found no start.
pub(crate) enum NoBranchPoint {
    Missing,
    Sidechain,
    /// An entry that is no message (Claude Code's `progress`, a marker), of this type.
    NotAMessage(String),
}

impl NoBranchPoint {
    /// The error a caller of session `id` gets for entry `uuid`.
    pub(crate) fn error(self, id: &str, uuid: &str) -> crate::Error {
        match self {
            NoBranchPoint::Missing => crate::Error::EntryNotFound { id: id.into(), uuid: uuid.into() },
            NoBranchPoint::Sidechain => crate::Error::InvalidArgument(alloc::format!(
                "`{uuid}` is an entry of a sub-agent's conversation inside session `{id}`: fork or rewind from an entry of the main conversation"
            )),
            NoBranchPoint::NotAMessage(kind) => crate::Error::InvalidArgument(alloc::format!(
                "`{uuid}` is a `{kind}` entry of session `{id}`, not a message: fork or rewind from a message (`resume --json` lists their uuids)"
            )),
        }
    }
}

fn mark(marks: &mut [bool], at: Option<usize>) {
    if let Some(mark) = at.and_then(|at| marks.get_mut(at)) {
        *mark = true;
    }
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
        // Counted in a hash map: an ordered map's string compares, on every line, cost
        // more than reading the line did. Sorted by type once counted.
        let mut by_type: FastMap<&str, u32> = FastMap::default();
        let mut deleted = BTreeSet::new();
        let mut relinks = BTreeMap::new();
        for line in &lines {
            *by_type.entry(line.env.kind()).or_default() += 1;
            if line.env.is_tombstone()
                && let Some(target) = line.env.tombstone_target()
            {
                deleted.insert(target.into_owned());
            }
            if let Some(segment) = relinked_segment(&line.env)
                && let Some(anchor) = segment.anchor
            {
                relinks.insert(segment.head, anchor);
            }
        }
        report.entry_count = lines.len() as u32;
        let mut by_type: Vec<(&str, u32)> = by_type.into_iter().collect();
        by_type.sort_unstable_by_key(|&(kind, _)| kind);
        report.by_type = by_type.into_iter().map(|(kind, count)| TypeCount { type_: kind.to_string(), count }).collect();
        if !relinks.is_empty() {
            // A relink to a summary this session does not have would cut the chain.
            let uuids: BTreeSet<&str> = lines.iter().filter_map(|l| l.env.uuid()).collect();
            relinks.retain(|_, anchor| uuids.contains(anchor.as_str()));
        }
        let mut loaded = Loaded { lines, report, deleted, relinks, torn_at };
        if !loaded.deleted.is_empty() {
            loaded.report.tombstoned =
                loaded.lines.iter().filter(|l| l.env.uuid().is_some_and(|u| loaded.deleted.contains(u))).count() as u32;
        }
        loaded
    }

    /// No main-conversation entry with an id: the sidechain entries are the
    /// conversation (a sub-agent's own file).
    pub fn only_sidechains(&self) -> bool {
        self.lines.iter().all(|l| l.env.is_sidechain.0 || l.env.uuid().is_none())
    }

    /// The folder the session last worked in: the newest line naming one (Claude Code
    /// names it on every entry, pi in its header only); empty when none does.
    pub fn cwd(&self) -> &str {
        last_cwd(&self.lines).unwrap_or_default()
    }

    /// The folder project `project` is named after (Claude Code files a session under
    /// the folder it started in, and keeps it when a command moves to a subfolder), else
    /// the folder the session last worked in.
    pub fn home_cwd(&self, project: &str) -> &str {
        let mut tried = "";
        for cwd in self.lines.iter().filter_map(|line| line.env.cwd.get()) {
            if cwd != tried {
                if crate::keys::project_dir_name(cwd) == project {
                    return cwd;
                }
                tried = cwd;
            }
        }
        self.cwd()
    }

    /// Visible to readers: not a tombstone line and not tombstoned.
    pub fn is_live(&self, line: &Line) -> bool {
        !line.env.is_tombstone() && !line.env.uuid().is_some_and(|u| self.deleted.contains(u))
    }

    /// The first line of each id.
    pub fn index(&self) -> FastMap<&str, usize> {
        self.index_each(|_, _, _| {})
    }

    /// [`Loaded::index`], built line by line: `each(i, first, index)` is told, for
    /// every line `i`, the first line of its id ([`NO_LINE`] without one) and the index
    /// so far.
    fn index_each<'s>(&'s self, mut each: impl FnMut(usize, usize, &FastMap<&'s str, usize>)) -> FastMap<&'s str, usize> {
        let mut index = FastMap::with_capacity_and_hasher(self.lines.len(), Default::default());
        for (i, line) in self.lines.iter().enumerate() {
            let first = line.env.uuid().map_or(NO_LINE, |uuid| *index.entry(uuid).or_insert(i));
            each(i, first, &index);
        }
        index
    }

    /// How the lines link, found once for the walks that follow.
    pub fn links(&self) -> Links<'_> {
        let count = self.lines.len();
        let mut first = alloc::vec![NO_LINE; count];
        let mut parent = alloc::vec![NO_LINE; count];
        // A parent is almost always an earlier line, whose id is then in the index
        // already, and the line just read is still in the cache: looked up at once.
        let mut later = Vec::new();
        let index = self.index_each(|i, first_line, index| {
            first[i] = first_line;
            if let Some(of) = self.parent_of(&self.lines[i]) {
                match index.get(of) {
                    Some(&at) => parent[i] = at,
                    None => later.push(i),
                }
            }
        });
        for i in later {
            let of = self.parent_of(&self.lines[i]).filter(|of| index.contains_key(of)).or_else(|| self.unlinked_boundary_parent(i));
            if let Some(&at) = of.and_then(|of| index.get(of)) {
                parent[i] = at;
            }
        }
        Links { index, first, parent }
    }

    /// Where compaction boundary `at` continues from when the logical parent it names is
    /// in no line: the entry written just before it. Claude Code 2.1.39 named an entry
    /// it never wrote (corpus session 01), and the conversation it had compacted, 753
    /// lines, ended at the line before the boundary; without this the history shown
    /// stopped at the boundary. A sidechain's boundary continues its sidechain. `None`
    /// for any other line.
    pub(crate) fn unlinked_boundary_parent(&self, at: usize) -> Option<&str> {
        let line = &self.lines[at];
        let boundary = dialect::boundary(&line.env)?;
        if line.env.parent_uuid().is_some() || self.relink(line).is_some() {
            return None;
        }
        boundary.logical_parent?;
        let side = line.env.is_sidechain.0;
        self.lines[..at].iter().rev().filter(|l| l.env.is_sidechain.0 == side && !l.env.is_tombstone()).find_map(|l| l.env.uuid())
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
            None => dialect::boundary(&line.env)?.logical_parent,
        }
    }

    /// The newest leaf of the main conversation: the live, non-sidechain entry with a
    /// uuid and no live child, at or after the last compaction line (or named by it as
    /// its logical parent), with the latest timestamp (the later line on a tie). A sub-agent's own file holds only sidechain
    /// entries: then they are the conversation.
    pub fn leaf(&self) -> Option<usize> {
        self.leaf_in(&self.links())
    }

    /// [`Loaded::leaf`], the lines' links already found.
    pub fn leaf_in(&self, links: &Links) -> Option<usize> {
        let mut has_child = alloc::vec![false; self.lines.len()];
        for (i, line) in self.lines.iter().enumerate().filter(|(_, l)| self.is_live(l)) {
            // A compaction boundary's logical parent is not an edge here: the entry it
            // names stays a leaf, as in Claude Code, and the next entry continues the
            // kept messages. A relinked head counts as a child of both its summary and
            // the entry it used to continue (summarised history, never the leaf,
            // whatever the clocks say).
            let relinked = self.relink(line).is_some();
            if line.env.parent_uuid().is_some() || relinked {
                mark(&mut has_child, links.parent(i));
            }
            if relinked {
                mark(&mut has_child, links.line_of(line.env.parent_uuid()));
            }
        }
        let only_sidechains = self.only_sidechains();
        // What came before the last compaction is summarised: no entry there is the
        // conversation's leaf but the one the compaction names as its logical parent
        // (the last kept message, where Claude Code chains its next prompt). This is
        // what lets resume read a session from its end.
        let last_compaction = self.lines.iter().rposition(|l| dialect::is_compaction(&l.env));
        let since = last_compaction.unwrap_or(0);
        let kept_leaf = last_compaction.and_then(|i| self.kept_leaf(i, links));
        if let Some(compaction) = last_compaction.filter(|&i| kept_leaf.is_some() && self.keeps_a_relinked_segment(i)) {
            // The conversation goes on from the messages it kept, even with its summary
            // tombstoned: the boundary is never their end. (One that kept none, or kept
            // them before it unrelinked, names the last summarised message instead.)
            mark(&mut has_child, links.first.get(compaction).copied().filter(|&first| first != NO_LINE));
        }
        // pi's `session` header carries an id but stands outside the tree.
        let candidates = self.lines.iter().enumerate().filter(|(i, l)| {
            (*i >= since || kept_leaf.is_some_and(|kept| links.first[*i] == kept))
                && self.is_live(l)
                && !l.env.is_session_header()
                && (only_sidechains || !l.env.is_sidechain.0)
        });
        // A line's id has a child when the first line of that id has one.
        let leaves = candidates.filter(|(i, _)| links.first[*i] != NO_LINE && !has_child[links.first[*i]]);
        leaves.max_by_key(|(i, l)| (l.env.timestamp.get().and_then(time::parse_millis).unwrap_or(i64::MIN), *i)).map(|(i, _)| i)
    }

    /// The line compaction `at` names as its logical parent — the last message it kept,
    /// where the next entry continues — or, that one tombstoned (a prompt taken back
    /// after the compaction kept it), the nearest live message the compaction kept
    /// before it. `None` once the walk would leave what the compaction kept.
    fn kept_leaf(&self, at: usize, links: &Links) -> Option<usize> {
        let env = &self.lines[at].env;
        let mut kept = links.line_of(dialect::boundary(env)?.logical_parent)?;
        if self.is_live(&self.lines[kept]) {
            return Some(kept);
        }
        let head = relinked_segment(env)?.head;
        // Each step goes to an earlier message of the segment: bounded by its length,
        // and by the line count whatever the parent links say.
        for _ in 0..self.lines.len() {
            if self.lines[kept].env.uuid() == Some(head.as_str()) {
                return None;
            }
            kept = links.parent(kept)?;
            if self.is_live(&self.lines[kept]) {
                return (kept < at).then_some(kept);
            }
        }
        None
    }

    /// Whether compaction line `at` kept a segment relinked after its summary (Claude
    /// Code 2.1's, Mneme's): then its logical parent is the last message it kept.
    fn keeps_a_relinked_segment(&self, at: usize) -> bool {
        relinked_segment(&self.lines[at].env).is_some()
    }

    /// The main conversation from its root to the newest leaf, through compaction
    /// boundaries, as indices into `lines` (tombstoned entries left out).
    pub fn chain(&self) -> Vec<usize> {
        self.chain_in(&self.links())
    }

    /// [`Loaded::chain`], the lines' links already found.
    pub fn chain_in(&self, links: &Links) -> Vec<usize> {
        self.chain_to(self.leaf_in(links), links)
    }

    /// [`Loaded::chain`] for a leaf already found.
    fn chain_to(&self, leaf: Option<usize>, links: &Links) -> Vec<usize> {
        let Some(leaf) = leaf else {
            // A transcript without ids (pi v1, before pi's own migration gave entries
            // ids) is one conversation in file order.
            let in_chain = |l: &Line| self.is_live(l) && (l.env.is_message() || dialect::is_compaction(&l.env));
            return (0..self.lines.len()).filter(|&i| in_chain(&self.lines[i])).collect();
        };
        self.chain_from(leaf, links)
    }

    /// The conversation from its root to line `leaf`, by the same walk as [`Loaded::chain`].
    pub fn chain_from(&self, leaf: usize, links: &Links) -> Vec<usize> {
        self.chain_of(&self.walk_from(leaf, links), links).chain
    }

    /// The chain `walk` passed, root first, with what hangs off it.
    pub(crate) fn chain_of(&self, walk: &Walk, links: &Links) -> Gathered {
        let chain: Vec<usize> = walk.order.iter().rev().copied().filter(|&i| self.is_live(&self.lines[i])).collect();
        let sidechains_too = chain.iter().all(|&i| self.lines[i].env.is_sidechain.0);
        self.with_parallel_results(chain, Hanging::All { walked: &walk.seen }, sidechains_too, links)
    }

    /// Line `i` continues from its parent and nothing else: a walk goes on from it to
    /// its parent whatever it passed before.
    pub(crate) fn continues_plainly(&self, i: usize, links: &Links) -> bool {
        let line = &self.lines[i];
        self.relink(line).is_none() && dialect::boundary(&line.env).is_none() && links.parent(i).is_some()
    }

    /// A live prompt: a message that ends any reply before it.
    pub(crate) fn is_prompt(&self, i: usize) -> bool {
        let line = &self.lines[i];
        line.env.line_type != LineType::Assistant
            && self.is_live(line)
            && canonical::activity(line).is_some_and(|activity| !activity.assistant && activity.other)
    }

    /// The walk [`Loaded::chain_from`] takes from `leaf` toward the root, and where
    /// another leaf's walk arriving at one of its lines would go on exactly as it did.
    pub(crate) fn walk_from(&self, leaf: usize, links: &Links) -> Walk {
        let mut order = Vec::new();
        let mut seen = alloc::vec![false; self.lines.len()];
        // The last step at which the walk found a line it had passed: a walk that had
        // not passed it would go another way from there.
        let mut last_turned: Option<usize> = None;
        // Where a relinked head continued before the compaction: once the walk is back
        // at the compaction, the summarised history goes on from there (not at the
        // boundary's logical parent, the segment's tail, which a walk that came in
        // through the head has passed, or left behind when the leaf branched off
        // inside the segment).
        let mut summarised_from: Option<usize> = None;
        let mut current = Some(leaf);
        while let Some(i) = current {
            match seen.get_mut(i) {
                Some(visited) if !*visited => *visited = true,
                _ => {
                    last_turned = order.len().checked_sub(1);
                    break;
                }
            }
            order.push(i);
            let line = &self.lines[i];
            if self.relink(line).is_some() {
                summarised_from = links.line_of(line.env.parent_uuid());
            }
            current = links.parent(i);
            if dialect::boundary(&line.env).is_some() {
                let step = order.len() - 1;
                // (A head whose parent is its summary already, as a fork writes it,
                // continued from nothing else.)
                let mut unseen = |at: Option<usize>| match at {
                    Some(at) if seen.get(at) == Some(&false) => Some(at),
                    Some(_) => {
                        last_turned = Some(step);
                        None
                    }
                    None => None,
                };
                // Come in through the summary alone (a rewind to it), the walk left the
                // segment the compaction kept on the branch it left: the summarised
                // history goes on from where the segment's head was written, not from
                // the segment's tail (the boundary's logical parent).
                let before_segment = || {
                    relinked_segment(&line.env)
                        .and_then(|segment| links.line_of(Some(&segment.head)))
                        .and_then(|head| links.line_of(self.lines[head].env.parent_uuid()))
                };
                current = match unseen(summarised_from.take()) {
                    Some(before) => Some(before),
                    None => unseen(before_segment()).or_else(|| unseen(current)),
                };
            }
        }
        Walk { order, seen, last_turned }
    }

    /// `chain` with the lines of its replies that the walk passed by. Claude Code 2.1
    /// writes a reply as a line per block, each under the one before, and the result
    /// of each call under that call's line; the reply's next line continues under one
    /// of the results (the last call's in 2.1.39, whichever came last in 2.1.114). The
    /// other results hang off the chain — and in 2.1.114 the reply's later lines too,
    /// with their calls — and Claude Code sends them all on resume. Each is put back
    /// after the chain line it hangs from, in file order — unless the chain leaves the
    /// reply at that line (see [`Loaded::leaves_reply_at`]): a rewind to it continues
    /// before them, on a branch of its own. A result is put back only when
    /// it answers calls of the line it hangs under and nothing else, and no line of the
    /// reply on the chain answers the same call (a result given again after a rewind is
    /// the chain's).
    ///
    /// `chain` may be the end of a chain only, from a line that is no part of a reply
    /// (a prompt) on: what hangs off its lines is what hangs off them in the whole.
    /// Which of two results for one call is kept depends on the whole chain: the
    /// ledger's `Shared` checks that it does not differ.
    pub(crate) fn with_parallel_results(&self, chain: Vec<usize>, hanging: Hanging, sidechains_too: bool, links: &Links) -> Gathered {
        let nothing = |chain| Gathered { chain, kept: Vec::new(), repeated: false };
        let Some(&last) = chain.last() else { return nothing(chain) };
        let walked = |i: usize| hanging.walked(i);
        // A line the walk passed by, the first of its uuid, under another than the last.
        let off_chain = |i: usize| !walked(i) && links.first.get(i) == Some(&i);
        let parent_of = |i: usize| links.parent(i).filter(|&parent| parent != last);
        let mut candidates = match &hanging {
            // Most chains have nothing hanging off them: then no index of them is built.
            Hanging::All { .. } => {
                if !(0..self.lines.len()).any(|i| off_chain(i) && parent_of(i).is_some_and(walked)) {
                    return nothing(chain);
                }
                Candidates::All(0..self.lines.len())
            }
            Hanging::Below { children, .. } => {
                // Only a reply's line the chain does not leave holds what hangs off: a
                // line a thousand rewinds went back to is not searched a thousand times.
                let mut below = BinaryHeap::new();
                for (at, &i) in chain.iter().enumerate() {
                    if i != last && self.lines[i].env.line_type == LineType::Assistant && !self.leaves_reply_at(&chain, at) {
                        below.extend(children.of(i).map(Reverse));
                    }
                }
                Candidates::Below { below, children }
            }
        };
        let mut position = Marks::new(&hanging, self.lines.len());
        for (at, &i) in chain.iter().enumerate() {
            position.set(i, at);
        }
        // Where each line put back goes: after the chain line at this position. A line
        // comes after its parent in the file, so one pass finds a reply's later lines
        // and the results under them.
        let mut anchor = Marks::new(&hanging, self.lines.len());
        let mut results: Vec<(usize, usize)> = Vec::new();
        let mut after: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        while let Some(i) = candidates.next() {
            if !off_chain(i) {
                continue;
            }
            let line = &self.lines[i];
            let Some(parent) = parent_of(i) else { continue };
            let on_chain = walked(parent);
            let at = if on_chain { position.get(parent) } else { anchor.get(parent) };
            let candidate = at != NO_LINE
                && !(on_chain && self.leaves_reply_at(&chain, at))
                && self.lines[parent].env.line_type == LineType::Assistant
                && (sidechains_too || !line.env.is_sidechain.0)
                && self.is_live(line);
            if !candidate {
                continue;
            }
            match line.env.line_type {
                LineType::Assistant => {
                    let reply = |line: usize| canonical::activity(&self.lines[line]).and_then(|a| a.id);
                    if reply(i).is_some_and(|id| reply(parent).as_ref() == Some(&id)) {
                        anchor.set(i, at);
                        after.entry(at).or_default().push(i);
                        candidates.anchored(i);
                    }
                }
                LineType::User => results.push((parent, i)),
                _ => {}
            }
        }
        // Of two results answering one call (a result given again off the chain), the
        // later is the one kept.
        let mut answered: BTreeSet<String> = BTreeSet::new();
        let mut kept: Vec<(usize, usize)> = Vec::new();
        let mut repeated = false;
        for (parent, result) in results.into_iter().rev() {
            let at = if walked(parent) { position.get(parent) } else { anchor.get(parent) };
            let (Some(call), Some(answer)) = (canonical::activity(&self.lines[parent]), canonical::activity(&self.lines[result])) else {
                continue;
            };
            let answers_the_call = !answer.other
                && !answer.answers.is_empty()
                && answer.answers.iter().all(|id| call.calls.iter().any(|(called, _)| called == id));
            if !answers_the_call || self.reply_answers(&chain[at..], call.id.as_deref(), &answer.answers) {
                continue;
            }
            if answer.answers.iter().any(|id| answered.contains(id)) {
                repeated = true;
            } else {
                answered.extend(answer.answers);
                kept.push((at, result));
            }
        }
        if after.is_empty() && kept.is_empty() {
            return Gathered { chain, kept: Vec::new(), repeated };
        }
        let kept_results = kept.iter().map(|&(_, result)| result).collect();
        for (at, result) in kept {
            after.entry(at).or_default().push(result);
        }
        let mut gathered = Vec::with_capacity(chain.len() + after.values().map(Vec::len).sum::<usize>());
        for (at, i) in chain.into_iter().enumerate() {
            gathered.push(i);
            if let Some(mut put_back) = after.remove(&at) {
                put_back.sort_unstable();
                gathered.extend(put_back);
            }
        }
        Gathered { chain: gathered, kept: kept_results, repeated }
    }

    /// Whether the conversation leaves, at `chain[at]`, the reply that line is part of:
    /// the chain's first message after it is a prompt or another reply (what a rewind
    /// to a reply's line, or to a line before its calls' results, writes), or the line
    /// is the chain's last. What hangs off such a line is the branch the rewind left,
    /// not lines of a reply the chain goes on with.
    fn leaves_reply_at(&self, chain: &[usize], at: usize) -> bool {
        let Some((&line, after)) = chain.get(at..).and_then(<[usize]>::split_first) else { return true };
        if after.is_empty() {
            return true;
        }
        let reply = canonical::activity(&self.lines[line]).and_then(|activity| activity.id);
        after
            .iter()
            .find_map(|&i| canonical::activity(&self.lines[i]))
            .is_some_and(|next| !calls::within_reply(Some(&next), reply.as_deref()))
    }

    /// Whether a line of the reply that `lines` starts with (its lines sharing
    /// `message.id`, the results between and after them, and lines that are no
    /// message) answers one of the calls `answers` names.
    fn reply_answers(&self, lines: &[usize], reply: Option<&str>, answers: &[String]) -> bool {
        for &i in lines.iter().skip(1) {
            let activity = canonical::activity(&self.lines[i]);
            if !calls::within_reply(activity.as_ref(), reply) {
                return false;
            }
            if activity.is_some_and(|a| a.answers.iter().any(|id| answers.contains(id))) {
                return true;
            }
        }
        false
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
        let links = self.links();
        let leaf = self.leaf_in(&links);
        Tip {
            leaf: leaf.and_then(|i| self.lines[i].env.uuid()).map(ToString::to_string),
            leaf_ms: leaf.and_then(|i| self.lines[i].env.timestamp.get()).and_then(time::parse_millis).unwrap_or(i64::MIN),
            only_sidechains: self.only_sidechains(),
            calls: self.pending_calls(&self.chain_to(leaf, &links)),
        }
    }

    /// The line of entry `uuid` (its id's first line) for a fork or a rewind to start
    /// from: a live entry of the main conversation. A sub-agent's entry inside it
    /// (Claude Code before 1.0 wrote them inline) is no start: its chain is the
    /// sub-agent's talk.
    pub(crate) fn branch_point(&self, uuid: &str, links: &Links) -> Result<usize, NoBranchPoint> {
        let at = links.line_of(Some(uuid)).filter(|&i| self.is_live(&self.lines[i])).ok_or(NoBranchPoint::Missing)?;
        let only_sidechains = self.only_sidechains();
        if self.lines[at].env.is_sidechain.0 && !only_sidechains {
            return Err(NoBranchPoint::Sidechain);
        }
        // A fork ending at a progress entry resumed to nothing of it.
        if canonical::activity(&self.lines[at]).is_none() {
            return Err(NoBranchPoint::NotAMessage(self.lines[at].env.kind().into()));
        }
        Ok(at)
    }

    /// The calls pending after line `at`, on its chain: what a turn continuing from
    /// it (a rewind) may answer.
    pub(crate) fn calls_at(&self, at: usize, links: &Links) -> PendingCalls {
        self.pending_calls(&self.chain_from(at, links))
    }

    /// The pending calls at the end of the main chain: the fold of [`PendingCalls`]
    /// over the chain, started at its last barrier (a compaction that ends them, or a
    /// message that ends every call before it), which gives what folding the whole
    /// chain gives.
    fn pending_calls(&self, chain: &[usize]) -> PendingCalls {
        let mut steps = Vec::new();
        for &i in chain.iter().rev() {
            let line = &self.lines[i];
            if dialect::ends_pending_calls(&line.env) {
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
        self.advance_with(lines, |_, line| canonical::activity(line))
    }

    /// [`Tip::advance`], told what line `i` does to the pending calls by `activity`
    /// (a writer that has read the lines' messages already).
    pub fn advance_with(&mut self, lines: &[Line], mut activity: impl FnMut(usize, &Line) -> Option<Activity>) -> bool {
        for (i, line) in lines.iter().enumerate() {
            let env = &line.env;
            if env.is_tombstone() || env.is_session_header() || relinked_segment(env).is_some() {
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
            if dialect::ends_pending_calls(env) {
                self.calls.barrier();
            } else if let Some(activity) = activity(i, line) {
                self.calls.step(activity, env.uuid());
            }
            self.leaf = env.uuid().map(ToString::to_string);
            self.leaf_ms = ms;
            self.only_sidechains &= env.is_sidechain.0;
        }
        true
    }
}

/// The folder the newest of `lines` to name one names (Claude Code names it on every
/// entry, pi in its header only; an empty one names none): a session's, read whole or
/// line by line as written.
pub(crate) fn last_cwd<'a>(lines: &'a [Line<'a>]) -> Option<&'a str> {
    lines.iter().rev().find_map(|l| l.env.cwd.get().filter(|cwd| !cwd.is_empty()))
}

#[cfg(test)]
mod tests {
    use alloc::collections::BTreeSet;
    use alloc::string::String;
    use alloc::vec::Vec;

    use super::{Line, Loaded};
    use crate::scan::scan_part;
    use crate::support::hash::FastMap;

    /// A compaction boundary's parent by its definition when the logical parent it
    /// names is in no line: the id of the last line before it, of its side (main or
    /// sidechain), that is no tombstone.
    fn written_before<'l>(loaded: &'l Loaded, at: usize) -> Option<&'l str> {
        let line = &loaded.lines[at];
        let unlinked = crate::dialect::boundary(&line.env).is_some_and(|boundary| boundary.logical_parent.is_some())
            && line.env.parent_uuid().is_none()
            && loaded.relink(line).is_none();
        let before = (0..at).rev().map(|j| &loaded.lines[j]);
        before
            .filter(|l| l.env.uuid().is_some() && !l.env.is_tombstone() && l.env.is_sidechain.0 == line.env.is_sidechain.0)
            .find_map(|l| l.env.uuid())
            .filter(|_| unlinked)
    }

    /// The leaf by its definition, with ids compared as text: the live candidate
    /// whose id no live line names as its parent (or its relinked summary).
    fn leaf_by_ids(loaded: &Loaded) -> Option<usize> {
        let live = || loaded.lines.iter().filter(|l| loaded.is_live(l));
        let has_child: BTreeSet<&str> = live().flat_map(|l| [l.env.parent_uuid(), loaded.relink(l)]).flatten().collect();
        let only_sidechains = loaded.lines.iter().all(|l| l.env.is_sidechain.0 || l.env.uuid().is_none());
        let last_compaction = loaded.lines.iter().rposition(|l| crate::dialect::is_compaction(&l.env));
        let first_of = |uuid: &str| loaded.lines.iter().position(|l| l.env.uuid() == Some(uuid));
        // The named message, or the nearest live one above it, not past the segment's
        // head, and before the compaction.
        let kept_leaf = last_compaction.and_then(|at| {
            let env = &loaded.lines[at].env;
            let mut uuid = crate::dialect::boundary(env)?.logical_parent?;
            if loaded.is_live(&loaded.lines[first_of(uuid)?]) {
                return Some(uuid);
            }
            let head = super::relinked_segment(env)?.head;
            let mut visited = BTreeSet::new();
            while uuid != head && visited.insert(uuid) {
                let child = first_of(uuid)?;
                uuid =
                    loaded.parent_of(&loaded.lines[child]).filter(|p| first_of(p).is_some()).or_else(|| written_before(loaded, child))?;
                let line = first_of(uuid)?;
                if loaded.is_live(&loaded.lines[line]) {
                    return (line < at).then_some(uuid);
                }
            }
            None
        });
        let relinked = |at: usize| super::relinked_segment(&loaded.lines[at].env).is_some();
        let compaction_uuid = last_compaction.filter(|&at| kept_leaf.is_some() && relinked(at)).and_then(|at| loaded.lines[at].env.uuid());
        let stamp = |l: &Line| l.env.timestamp.get().and_then(crate::support::time::parse_millis).unwrap_or(i64::MIN);
        (0..loaded.lines.len())
            .filter(|&i| {
                let l = &loaded.lines[i];
                (i >= last_compaction.unwrap_or(0) || (kept_leaf.is_some() && l.env.uuid() == kept_leaf))
                    && loaded.is_live(l)
                    && !l.env.is_session_header()
                    && (only_sidechains || !l.env.is_sidechain.0)
                    && l.env.uuid().is_some_and(|u| !has_child.contains(u) && Some(u) != compaction_uuid)
            })
            .max_by_key(|&i| (stamp(&loaded.lines[i]), i))
    }

    /// The chain by its definition: from the leaf, parent by parent, each looked up by
    /// its id's first line.
    fn chain_by_ids(loaded: &Loaded, leaf: usize) -> Vec<usize> {
        let mut index: FastMap<&str, usize> = FastMap::default();
        for (i, line) in loaded.lines.iter().enumerate() {
            if let Some(uuid) = line.env.uuid() {
                index.entry(uuid).or_insert(i);
            }
        }
        let (mut chain, mut seen, mut current) = (Vec::new(), BTreeSet::new(), Some(leaf));
        let mut summarised_from = None;
        while let Some(i) = current.filter(|&i| seen.insert(i)) {
            chain.push(i);
            let line = &loaded.lines[i];
            if loaded.relink(line).is_some() {
                summarised_from = line.env.parent_uuid().and_then(|p| index.get(p).copied());
            }
            let parent = loaded.parent_of(line).filter(|p| index.contains_key(p)).or_else(|| written_before(loaded, i));
            current = parent.and_then(|p| index.get(p).copied());
            if crate::dialect::boundary(&line.env).is_some() {
                let unseen = |at: &usize| !seen.contains(at);
                let before = summarised_from.take().filter(unseen);
                let segment = super::relinked_segment(&line.env);
                let head_parent =
                    segment.and_then(|s| index.get(s.head.as_str()).copied()).and_then(|head| loaded.lines[head].env.parent_uuid());
                let before_segment = head_parent.and_then(|p| index.get(p).copied()).filter(unseen);
                current = before.or(before_segment).or(current.filter(unseen));
            }
        }
        chain.reverse();
        chain.retain(|&i| loaded.is_live(&loaded.lines[i]));
        chain
    }

    proptest::proptest! {
        /// Walking by position gives the leaf and the chain that comparing ids gives:
        /// repeated ids, parents written after their children, loops, sidechains,
        /// tombstones, compaction boundaries and the summaries they relink to.
        #[test]
        fn links_walk_as_ids_do(lines in proptest::collection::vec((0u8..8, 0u8..9, 0u8..6, 0u8..3), 1..24)) {
            let id = |n: u8| (b'a' + n) as char;
            let mut text = String::new();
            for (uuid, parent, kind, stamp) in lines {
                let parent = if parent == 8 { String::from("null") } else { alloc::format!("\"{}\"", id(parent)) };
                let line = match kind {
                    0 => alloc::format!(r#"{{"type":"tombstone","deleted_uuid":"{}"}}"#, id(uuid)),
                    1 => alloc::format!(
                        r#"{{"type":"system","subtype":"compact_boundary","uuid":"{}","parentUuid":null,"logicalParentUuid":{parent},"compactMetadata":{{"preservedSegment":{{"headUuid":"{}","anchorUuid":"{}","tailUuid":"{}"}}}}}}"#,
                        id(uuid), id(uuid.wrapping_add(1) % 8), id(uuid.wrapping_add(2) % 8), id(uuid.wrapping_add(3) % 8)
                    ),
                    kind => alloc::format!(
                        r#"{{"type":"user","uuid":"{}","parentUuid":{parent},"isSidechain":{},"timestamp":"2026-01-01T00:00:0{stamp}.000Z","message":{{"role":"user","content":"x"}}}}"#,
                        id(uuid), kind == 2
                    ),
                };
                text.push_str(&line);
                text.push('\n');
            }
            let loaded = Loaded::assemble(alloc::vec![scan_part(1, text.as_bytes(), &text)]);
            let leaf = leaf_by_ids(&loaded);
            proptest::prop_assert_eq!(loaded.leaf(), leaf);
            if let Some(leaf) = leaf {
                proptest::prop_assert_eq!(loaded.chain(), chain_by_ids(&loaded, leaf));
            }
        }
    }
}
