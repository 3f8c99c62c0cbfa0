//! Branches and the token ledger. A rewind or a retry leaves a message with several
//! children: every message no later message descends from ends a branch. The ledger
//! adds up what replies reported in `usage`, once per reply (`message.id`).

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::shorten;
use super::thread::{Children, Gathered, Hanging, Links, Loaded};
use crate::dialect::{self, canonical, canonical::line_usage};
use crate::message::Usage;
use crate::scan::{self, Line};
use crate::support::hash::FastMap;

/// One branch of a conversation: from its root to a leaf message.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Branch {
    /// The uuid of the branch's last message (`@<part>:<line>` in a transcript without
    /// ids: pi's format v1, crab's).
    pub leaf: String,
    /// The branch resume follows (the newest leaf).
    pub current: bool,
    pub role: Option<String>,
    /// The last message's text, shortened.
    pub text: String,
    pub timestamp: Option<String>,
    /// Messages from the root to the leaf.
    pub message_count: u32,
    /// The newest message this branch shares with the current one (none for the
    /// current branch, or a branch that shares nothing).
    pub forks_at: Option<String>,
    /// Tokens the replies on this branch reported.
    pub usage: Usage,
    /// What those tokens cost, when prices were given.
    pub cost: Option<f64>,
}

/// What a model charges, per million tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_creation: f64,
}

/// Dollars per million tokens: a trillion, times every token a `u64` counts, is finite.
const MAX_PRICE: f64 = 1e12;

impl Prices {
    /// Refuses a price that is not a number, below zero (a host whose caller left one
    /// out may pass NaN) or past a trillion dollars per million tokens, whose cost could
    /// be infinite (JSON writes that as null, as if no price were given).
    pub fn check(&self) -> Result<(), crate::Error> {
        let named =
            [("input", self.input), ("output", self.output), ("cache_read", self.cache_read), ("cache_creation", self.cache_creation)];
        match named.into_iter().find(|(_, price)| !(0.0..=MAX_PRICE).contains(price)) {
            Some((name, price)) => Err(crate::Error::InvalidArgument(alloc::format!(
                "the `{name}` price is {price}: give every price, per million tokens, as a number from 0 to {MAX_PRICE}"
            ))),
            None => Ok(()),
        }
    }

    pub fn cost(&self, usage: &Usage) -> f64 {
        let part = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        part(usage.input, self.input)
            + part(usage.output, self.output)
            + part(usage.cache_read, self.cache_read)
            + part(usage.cache_creation, self.cache_creation)
    }
}

/// A session's token ledger.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Ledger {
    /// Every reply in the session's own files, on any branch, counted once.
    pub total: Usage,
    pub cost: Option<f64>,
    /// Replies counted in `total`.
    pub replies: u32,
    /// Every branch, the current one first.
    pub branches: Vec<Branch>,
    /// What each of its sub-agents' transcripts reported, apart from `total` (Claude
    /// Code's `agent-<id>.jsonl`): the session's work costs these too.
    pub subagents: Vec<AgentUsage>,
}

/// A sub-agent's replies, each counted once, from its own transcript.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct AgentUsage {
    /// The transcript's name: `agent-<id>`.
    pub agent: String,
    pub usage: Usage,
    pub cost: Option<f64>,
    pub replies: u32,
}

/// What each line reported in `usage`, read once for every branch that passes it: a
/// reply's lines share a number, so a branch counts each reply once without hashing
/// its id again.
struct Reports {
    /// Per line: the reply it belongs to ([`NO_REPLY`] when it names none) and its
    /// usage; `None` for a line that reported nothing.
    lines: Vec<Option<(u32, Usage)>>,
    replies: u32,
}

const NO_REPLY: u32 = u32::MAX;

/// The most each reply reached, kept between tallies ([`Reports::tally`]) with the
/// replies the last one touched.
#[derive(Default)]
struct Most {
    reached: Vec<Option<Usage>>,
    touched: Vec<u32>,
}

impl Reports {
    fn read(lines: &[Line]) -> Self {
        let mut numbers: crate::support::hash::FastMap<Cow<str>, u32> = Default::default();
        let lines = lines
            .iter()
            .map(|line| {
                let (id, usage) = line_usage(line)?;
                let next = numbers.len() as u32;
                Some((id.map_or(NO_REPLY, |id| *numbers.entry(id).or_insert(next)), usage))
            })
            .collect();
        Self { lines, replies: numbers.len() as u32 }
    }

    /// A tally of lines' usage, each reply counted once however many lines it was split
    /// into. Claude Code writes on each line of a streamed reply the usage reported so
    /// far: the output grows from line to line (1, 1, 104), the rest stays. A reply's
    /// usage is the most each field reached.
    fn tally<'r>(&'r self, most: &'r mut Most) -> Tally<'r> {
        // Only the replies the last tally touched are cleared: a session with many short
        // branches would otherwise pay for every reply on each.
        most.reached.resize(self.replies as usize, None);
        for reply in most.touched.drain(..) {
            if let Some(slot) = most.reached.get_mut(reply as usize) {
                *slot = None;
            }
        }
        Tally { reports: self, most, total: Usage::default(), replies: 0 }
    }

    /// Usage of the lines at `indices` ([`Reports::tally`]), and how many replies.
    fn usage_of(&self, indices: impl Iterator<Item = usize>, most: &mut Most) -> (Usage, u32) {
        let mut tally = self.tally(most);
        indices.for_each(|i| tally.add(i));
        (tally.total, tally.replies)
    }
}

/// Usage added up line by line ([`Reports::tally`]).
struct Tally<'r> {
    reports: &'r Reports,
    most: &'r mut Most,
    total: Usage,
    replies: u32,
}

impl Tally<'_> {
    fn add(&mut self, line: usize) {
        let Some((reply, usage)) = self.reports.lines.get(line).and_then(Option::as_ref) else { return };
        match self.most.reached.get_mut(*reply as usize) {
            Some(Some(reached)) => {
                let was = *reached;
                reached.raise_to(usage);
                // What the reply's most rose by: the total stays the sum of the mosts.
                self.total.add(&Usage {
                    input: reached.input - was.input,
                    output: reached.output - was.output,
                    cache_read: reached.cache_read - was.cache_read,
                    cache_creation: reached.cache_creation - was.cache_creation,
                });
            }
            Some(slot) => {
                *slot = Some(*usage);
                self.most.touched.push(*reply);
                self.total.add(usage);
                self.replies += 1;
            }
            None => {
                self.total.add(usage);
                self.replies += 1;
            }
        }
    }
}

/// What a branch's chain adds up to before one of its lines.
#[derive(Clone, Copy, Default)]
struct Before {
    messages: u32,
    usage: Usage,
    /// The newest message on the current branch.
    on_current: Option<usize>,
}

/// What the branches of one session share. A rewind's branch leaves the conversation
/// at a line another branch goes on from: from the newest prompt they both pass back
/// to the root, their chains are one, and so is all they add up to there. Each branch
/// is then measured from that prompt on, and a session with a branch every hundred
/// lines costs in proportion to its lines, not to their square.
///
/// Only where that is exact: the prompt (which ends every reply before it) settled on
/// the walk that measured it (see [`Loaded::walk_from`]), every line from the leaf to
/// it continuing plainly from the next, no reply of the lines from the prompt on with
/// a line elsewhere, no result put back there for a call that another chain put
/// another result back for, and no result left out as given twice on the chain that
/// measured the prompt. Any other branch is walked whole, as on its own. The property
/// tests below hold both ways to every session they make.
struct Shared {
    children: Children,
    /// For a live prompt a measured chain passed settled: what that chain added up to
    /// before it.
    before: FastMap<usize, Before>,
    /// Per reply: its live lines that are the first of their uuid.
    reply_lines: Vec<u32>,
    /// Each call some measured chain put a result back for, and that result's line
    /// (`None`: chains put back different results for it).
    answered: FastMap<String, Option<usize>>,
    /// The lines the branch being measured walked: those marked `stamp`.
    walked: Vec<u32>,
    stamp: u32,
    only_sidechains: bool,
}

impl Shared {
    fn new(loaded: &Loaded, links: &Links, reports: &Reports) -> Self {
        let mut reply_lines = alloc::vec![0; reports.replies as usize];
        for (i, report) in reports.lines.iter().enumerate() {
            if let Some((reply, _)) = report
                && let Some(count) = reply_lines.get_mut(*reply as usize)
                && links.first.get(i) == Some(&i)
                && loaded.is_live(&loaded.lines[i])
            {
                *count += 1;
            }
        }
        Shared {
            children: Children::new(links),
            before: FastMap::default(),
            reply_lines,
            answered: FastMap::default(),
            walked: alloc::vec![0; loaded.lines.len()],
            stamp: 0,
            only_sidechains: loaded.only_sidechains(),
        }
    }

    /// `leaf`'s chain from the newest prompt a measured chain passed settled, or `None`
    /// where that would not be exact (see [`Shared`]).
    fn end_of_chain(&mut self, loaded: &Loaded, links: &Links, reports: &Reports, leaf: usize) -> Option<(Gathered, Before)> {
        self.stamp += 1;
        let mut order = Vec::new();
        let mut at = leaf;
        let before = loop {
            // Parents that loop come back to a line: a walk whole stops there.
            if self.walked[at] == self.stamp {
                return None;
            }
            self.walked[at] = self.stamp;
            order.push(at);
            if let Some(before) = self.before.get(&at) {
                break *before;
            }
            if !loaded.continues_plainly(at, links) {
                return None;
            }
            at = links.parent(at)?;
        };
        let chain: Vec<usize> = order.iter().rev().copied().filter(|&i| loaded.is_live(&loaded.lines[i])).collect();
        let (stamps, stamp) = (&self.walked, self.stamp);
        let is_walked = |i: usize| stamps.get(i) == Some(&stamp);
        // A branch's chain is all sidechain lines only in a sub-agent's own file.
        let below = Hanging::Below { walked: &is_walked, children: &self.children };
        let gathered = loaded.with_parallel_results(chain, below, self.only_sidechains, links);
        let elsewhere = gathered.kept.iter().any(|&result| {
            answers(loaded, result).iter().any(|call| self.answered.get(call.as_str()).is_some_and(|&line| line != Some(result)))
        });
        let mut replies: FastMap<u32, u32> = FastMap::default();
        for &i in &gathered.chain {
            if let Some(Some((reply, _))) = reports.lines.get(i)
                && *reply != NO_REPLY
            {
                *replies.entry(*reply).or_default() += 1;
            }
        }
        let split = replies.iter().any(|(reply, &count)| self.reply_lines.get(*reply as usize) != Some(&count));
        (!elsewhere && !split).then_some((gathered, before))
    }

    /// Keeps the calls a measured chain put results back for.
    fn record_kept(&mut self, loaded: &Loaded, gathered: &Gathered) {
        for &result in &gathered.kept {
            for call in answers(loaded, result) {
                let line = self.answered.entry(call).or_insert(Some(result));
                if *line != Some(result) {
                    *line = None;
                }
            }
        }
    }

    /// Keeps `before`, what a measured chain adds up to before line `i`, when `i` is a
    /// prompt the chain passed settled.
    fn offer(&mut self, loaded: &Loaded, i: usize, before: Before, settled: bool) {
        if settled && !self.before.contains_key(&i) && loaded.is_prompt(i) {
            self.before.insert(i, before);
        }
    }
}

/// The calls line `result` answers.
fn answers(loaded: &Loaded, result: usize) -> Vec<String> {
    loaded.lines.get(result).and_then(canonical::activity).map(|activity| activity.answers).unwrap_or_default()
}

impl Loaded<'_> {
    /// The leaves of the conversation: live main-conversation messages that no later
    /// message descends from (through any entries in between), oldest first.
    fn leaf_messages(&self, index: &crate::support::hash::FastMap<&str, usize>) -> Vec<usize> {
        let only_sidechains = self.only_sidechains();
        let is_candidate = |l: &Line| {
            self.is_live(l) && dialect::ends_a_branch(&l.env) && l.env.uuid().is_some() && (only_sidechains || !l.env.is_sidechain.0)
        };
        // Every ancestor of a message has a descendant, by the edges the leaf rule
        // counts (see [`Loaded::leaf`]): parents, and the summary a relinked head
        // continues from. A compaction's logical parent is no edge: the entry it names
        // stays a leaf.
        let parents = |line: &Line| -> Vec<usize> {
            let relinked = self.parent_of(line).filter(|p| Some(*p) != line.env.parent_uuid() && dialect::boundary(&line.env).is_none());
            [line.env.parent_uuid(), relinked].into_iter().flatten().filter_map(|p| index.get(p).copied()).collect()
        };
        let mut has_descendant = alloc::vec![false; self.lines.len()];
        for line in self.lines.iter().filter(|l| is_candidate(l)) {
            let mut pending = parents(line);
            while let Some(i) = pending.pop() {
                if has_descendant[i] {
                    continue;
                }
                has_descendant[i] = true;
                pending.extend(parents(&self.lines[i]));
            }
        }
        // A child marks its parent's first line (the one an id is looked up by): a
        // line repeating an id (a resumed session rewrites some) is that first line.
        let first_of = |i: usize| self.lines[i].env.uuid().and_then(|uuid| index.get(uuid).copied()).unwrap_or(i);
        (0..self.lines.len()).filter(|&i| is_candidate(&self.lines[i]) && first_of(i) == i && !has_descendant[i]).collect()
    }

    /// The session's ledger: usage in all, and every branch with its own.
    pub fn ledger(&self, prices: Option<&Prices>) -> Ledger {
        self.ledger_sharing(prices, true)
    }

    /// [`Loaded::ledger`], each branch measured from the prompt where it leaves those
    /// measured already (`share`, see [`Shared`]) or walked whole (the tests' measure
    /// of the other).
    fn ledger_sharing(&self, prices: Option<&Prices>, share: bool) -> Ledger {
        let links = self.links();
        let current_chain = self.chain_in(&links);
        let current_leaf = current_chain.iter().rev().copied().find(|&i| dialect::ends_a_branch(&self.lines[i].env));
        let mut on_current = alloc::vec![false; self.lines.len()];
        for &i in &current_chain {
            on_current[i] = true;
        }
        // A leaf another branch passes through is part of it, not a branch of its own:
        // one the current branch passes (what a compaction summarised), and the result of
        // a parallel call that a branch's chain gathers after its call (see
        // `Loaded::chain_from`). Claude Code writes such a result before the lines that
        // continue its reply, so the leaves are taken newest first, each chain marking
        // the lines it passes. One written after them (another writer, a merged file) was
        // listed before the chain that gathers it: that chain takes it back. Two results
        // of one reply gather each other; the newer is listed, its chain covering the
        // older before that is reached.
        let mut covered = on_current.clone();
        let mut listed = alloc::vec![false; self.lines.len()];
        let mut gathered_later = alloc::vec![false; self.lines.len()];
        let mut leaves = self.leaf_messages(&links.index);
        // A transcript without ids (pi's format v1, crab's) is one conversation in file
        // order: one branch, ending at its last message.
        let without_ids = current_leaf.filter(|&i| self.lines[i].env.uuid().is_none());
        if leaves.is_empty() {
            leaves.extend(without_ids);
        }
        leaves.reverse();
        let reports = Reports::read(&self.lines);
        let mut most = Most::default();
        // One branch shares nothing: then nothing is kept to share.
        let mut shared = (share && leaves.len() > 1).then(|| Shared::new(self, &links, &reports));
        let mut branches: Vec<(usize, Branch)> = Vec::new();
        for leaf in leaves {
            let current = Some(leaf) == current_leaf;
            if !current && covered[leaf] {
                continue;
            }
            // Per line, whether the walk whole passed it settled; `None` when measured
            // from a prompt, every line walked to it settled.
            let (gathered, before, settled) = if without_ids == Some(leaf) {
                let gathered = Gathered { chain: current_chain.clone(), kept: Vec::new(), repeated: false };
                (gathered, Before::default(), Some(Vec::new()))
            } else if let Some((gathered, before)) = shared.as_mut().and_then(|shared| shared.end_of_chain(self, &links, &reports, leaf)) {
                (gathered, before, None)
            } else {
                let walk = self.walk_from(leaf, &links);
                let mut settled = Vec::new();
                if shared.is_some() {
                    settled.resize(self.lines.len(), false);
                    for (&i, is) in walk.order.iter().zip(walk.settled(self, &links)) {
                        settled[i] = is;
                    }
                }
                (self.chain_of(&walk, &links), Before::default(), Some(settled))
            };
            if let Some(shared) = shared.as_mut() {
                shared.record_kept(self, &gathered);
            }
            // A result left out as given twice may be the one a branch measured from a
            // prompt of this chain would keep: none of its prompts is shared.
            let sharing = shared.is_some() && !gathered.repeated;
            let mut sums = before;
            let mut tally = reports.tally(&mut most);
            for &i in &gathered.chain {
                if sharing && let Some(shared) = shared.as_mut() {
                    let settled = settled.as_ref().map_or(shared.walked[i] == shared.stamp, |settled| settled.get(i) == Some(&true));
                    let mut before = sums;
                    before.usage.add(&tally.total);
                    shared.offer(self, i, before, settled);
                }
                covered[i] = true;
                gathered_later[i] |= listed[i] && i != leaf;
                let line = &self.lines[i];
                if line.env.is_message() {
                    sums.messages += 1;
                    if on_current[i] {
                        sums.on_current = Some(i);
                    }
                }
                tally.add(i);
            }
            let mut usage = sums.usage;
            usage.add(&tally.total);
            listed[leaf] = true;
            let line = &self.lines[leaf];
            // As the context reads the message: a tool result or a call shows as a marker
            // (`[tool_result toolu_…]`), not as nothing.
            let (role, text) = match canonical::stored(line.env.kind(), dialect::shown_message(line)) {
                // A branch's summary shown by its own words, not pi's preamble to them.
                Some(stored) => {
                    let summary = line.env.rare().summary.get().filter(|_| dialect::is_shown_entry(&line.env));
                    (Some(stored.role), summary.map_or(stored.text, Cow::Borrowed).into_owned())
                }
                None => scan::message_text(line.env.message),
            };
            let forks_at = sums.on_current.filter(|_| !current).and_then(|i| self.lines[i].env.uuid()).map(ToString::to_string);
            let branch = Branch {
                leaf: line.entry_id().into_owned(),
                current,
                role,
                text: shorten(&text),
                timestamp: line.env.timestamp.get().map(ToString::to_string),
                message_count: sums.messages,
                forks_at,
                cost: prices.map(|p| p.cost(&usage)),
                usage,
            };
            branches.push((leaf, branch));
        }
        // The current branch first, as resume follows it; the rest in file order, so a
        // listing reads as the session grew.
        branches.retain(|(leaf, branch)| branch.current || !gathered_later[*leaf]);
        branches.sort_by_key(|(leaf, branch)| (!branch.current, *leaf));
        let branches: Vec<Branch> = branches.into_iter().map(|(_, branch)| branch).collect();
        let (total, replies) = reports.usage_of((0..self.lines.len()).filter(|&i| self.is_live(&self.lines[i])), &mut most);
        Ledger { total, cost: prices.map(|p| p.cost(&total)), replies, branches, subagents: Vec::new() }
    }

    /// The ledger line of a sub-agent's own transcript, named `agent`.
    pub fn agent_usage(&self, agent: String, prices: Option<&Prices>) -> AgentUsage {
        let (usage, replies) = self.usage_total();
        AgentUsage { agent, cost: prices.map(|p| p.cost(&usage)), usage, replies }
    }

    /// What every live reply reported, each once, and how many replies that is.
    pub(crate) fn usage_total(&self) -> (Usage, u32) {
        let live = (0..self.lines.len()).filter(|&i| self.is_live(&self.lines[i]));
        Reports::read(&self.lines).usage_of(live, &mut Most::default())
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec::Vec;

    use crate::sessions::with_loaded;

    fn line(uuid: &str, parent: Option<&str>, message: &str) -> String {
        let parent = parent.map_or("null".into(), |p| alloc::format!("\"{p}\""));
        alloc::format!(
            "{{\"type\":\"assistant\",\"uuid\":\"{uuid}\",\"parentUuid\":{parent},\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{message}}}\n"
        )
    }

    /// A line of `kind` at millisecond `ms`.
    fn entry(kind: &str, uuid: &str, parent: Option<&str>, message: &str, ms: u32) -> String {
        let parent = parent.map_or("null".into(), |p| alloc::format!("\"{p}\""));
        alloc::format!(
            "{{\"type\":\"{kind}\",\"uuid\":\"{uuid}\",\"parentUuid\":{parent},\"timestamp\":\"2026-01-01T00:00:00.{ms:03}Z\",\"message\":{message}}}\n"
        )
    }

    fn result(call: &str) -> String {
        alloc::format!("{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"{call}\",\"content\":\"ok\"}}]}}")
    }

    /// Claude Code writes a streamed reply as a line per block, each with the usage
    /// reported so far: the reply's usage is where it ended, counted once.
    #[test]
    fn a_streamed_reply_counts_its_final_usage_once() {
        let reply = |block: &str, output: u64| {
            alloc::format!(
                "{{\"role\":\"assistant\",\"id\":\"msg_1\",\"content\":[{block}],\"usage\":{{\"input_tokens\":99,\"output_tokens\":{output},\"cache_read_input_tokens\":15113}}}}"
            )
        };
        let text = [
            line("u1", None, &reply("{\"type\":\"thinking\",\"thinking\":\"hm\",\"signature\":\"s\"}", 1)),
            line("u2", Some("u1"), &reply("{\"type\":\"text\",\"text\":\"hi\"}", 1)),
            line("u3", Some("u2"), &reply("{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"ls\",\"input\":{}}", 104)),
        ]
        .concat();
        let ledger = with_loaded(&[text.as_bytes()], |loaded| loaded.ledger(None));
        assert_eq!((ledger.total.input, ledger.total.output, ledger.total.cache_read, ledger.replies), (99, 104, 15113, 1));
        assert_eq!(ledger.branches.len(), 1);
        assert_eq!(ledger.branches[0].usage, ledger.total);
    }

    /// pi's `/tree` back to an earlier reply leaves a `branch_summary` there, where the
    /// conversation (and its context) now ends: that is the current branch, shown by
    /// its summary; the branch it came back from is listed beside it.
    #[test]
    fn a_pi_branch_summary_ends_the_current_branch() {
        let entry = |kind: &str, id: &str, parent: &str, second: u32, rest: &str| {
            alloc::format!(
                "{{\"type\":\"{kind}\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:0{second}.000Z\",{rest}}}\n"
            )
        };
        let message = |role: &str, text: &str| alloc::format!("\"message\":{{\"role\":\"{role}\",\"content\":\"{text}\"}}");
        let text = [
            String::from("{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n"),
            entry("message", "a0000001", "null", 1, &message("user", "first")),
            entry("message", "b0000001", "\"a0000001\"", 2, &message("assistant", "first reply")),
            entry("message", "c0000001", "\"b0000001\"", 3, &message("user", "second")),
            entry("message", "d0000001", "\"c0000001\"", 4, &message("assistant", "second reply")),
            entry("branch_summary", "e0000001", "\"b0000001\"", 5, "\"fromId\":\"d0000001\",\"summary\":\"tried the second way\""),
        ]
        .concat();
        let ledger = with_loaded(&[text.as_bytes()], |loaded| loaded.ledger(None));
        let listed: Vec<(&str, bool)> = ledger.branches.iter().map(|b| (b.leaf.as_str(), b.current)).collect();
        assert_eq!(listed, [("e0000001", true), ("d0000001", false)], "{:?}", ledger.branches);
        assert!(ledger.branches[0].text.contains("tried the second way"), "{:?}", ledger.branches[0]);
    }

    /// A pi session of format v1 (entries without ids) is one branch, every message on
    /// it, as its context reads it (it listed no branch).
    #[test]
    fn a_transcript_without_ids_is_one_branch() {
        let bytes = include_bytes!("../../../tests/corpus/pi/v1/before-compaction.jsonl");
        let (ledger, context) = with_loaded(&[bytes.as_slice()], |loaded| {
            (loaded.ledger(None), loaded.context(crate::transcript::context::Sources::default()))
        });
        assert_eq!(ledger.branches.len(), 1, "{:?}", ledger.branches);
        let branch = &ledger.branches[0];
        assert!(branch.current && branch.leaf.starts_with('@'), "{branch:?}");
        assert_eq!(branch.usage, ledger.total);
        assert!(branch.message_count as usize >= context.messages.len() && context.messages.len() > 2, "{branch:?}");
    }

    /// A branch left by a rewind whose reply made two calls at once, chained as Claude
    /// Code 2.1 chains them (each result under its call's line, the reply's next line
    /// under the last result): the first result is a leaf, but it is part of that
    /// branch, not a branch of its own.
    #[test]
    fn a_parallel_calls_result_on_an_old_branch_is_no_branch() {
        let call = |id: &str| {
            alloc::format!(
                "{{\"role\":\"assistant\",\"id\":\"msg_1\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"ls\",\"input\":{{}}}}]}}"
            )
        };
        let lines = [
            entry("user", "u1", None, "{\"role\":\"user\",\"content\":\"look\"}", 1),
            entry("assistant", "c1", Some("u1"), &call("t1"), 2),
            entry("assistant", "c2", Some("c1"), &call("t2"), 3),
            entry("user", "r1", Some("c1"), &result("t1"), 4),
            entry("user", "r2", Some("c2"), &result("t2"), 5),
            entry("assistant", "a1", Some("r2"), "{\"role\":\"assistant\",\"id\":\"msg_2\",\"content\":\"both listed\"}", 6),
            // The rewind: another reply to the prompt, now the current branch.
            entry("assistant", "a2", Some("u1"), "{\"role\":\"assistant\",\"id\":\"msg_3\",\"content\":\"again\"}", 7),
        ];
        // As Claude Code writes it, and with the first call's result written after the
        // reply went on (another writer, a merged file).
        let late = [0, 1, 2, 4, 5, 3, 6];
        for order in [[0, 1, 2, 3, 4, 5, 6], late] {
            let text: String = order.iter().map(|&i| lines[i].as_str()).collect();
            let ledger = with_loaded(&[text.as_bytes()], |loaded| loaded.ledger(None));
            let leaves: Vec<(&str, u32)> = ledger.branches.iter().map(|b| (b.leaf.as_str(), b.message_count)).collect();
            assert_eq!(leaves, [("a2", 2), ("a1", 6)], "lines in the order {order:?}");
            assert_eq!(ledger.branches[1].forks_at.as_deref(), Some("u1"));
        }
    }

    /// A reply's two calls answered, and nothing after: the results chain to their
    /// calls' lines and gather each other. One branch, ending in the newer result.
    #[test]
    fn two_results_of_one_reply_left_unanswered_are_one_branch() {
        let calls = "{\"role\":\"assistant\",\"id\":\"msg_1\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"ls\",\"input\":{}},{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"ls\",\"input\":{}}]}";
        let text = [
            entry("user", "u1", None, "{\"role\":\"user\",\"content\":\"look\"}", 1),
            entry("assistant", "c", Some("u1"), calls, 2),
            // The rewind: another reply to the prompt, older than the results.
            entry("assistant", "a", Some("u1"), "{\"role\":\"assistant\",\"id\":\"msg_2\",\"content\":\"hi\"}", 3),
            entry("user", "r1", Some("c"), &result("t1"), 4),
            entry("user", "r2", Some("c"), &result("t2"), 5),
        ]
        .concat();
        let ledger = with_loaded(&[text.as_bytes()], |loaded| loaded.ledger(None));
        let leaves: Vec<(&str, bool, u32)> = ledger.branches.iter().map(|b| (b.leaf.as_str(), b.current, b.message_count)).collect();
        assert_eq!(leaves, [("r2", true, 4), ("a", false, 2)]);
    }

    /// A line repeating an id (resumed sessions rewrite some) is not a branch of its
    /// own: its id's first line is the one its children name.
    #[test]
    fn a_repeated_line_is_no_branch() {
        let message = "{\"role\":\"assistant\",\"content\":\"hi\"}";
        let text = [line("a", None, message), line("b", Some("a"), message), line("b", Some("a"), message), line("c", Some("b"), message)]
            .concat();
        let ledger = with_loaded(&[text.as_bytes()], |loaded| loaded.ledger(None));
        let leaves: Vec<&str> = ledger.branches.iter().map(|b| b.leaf.as_str()).collect();
        assert_eq!(leaves, ["c"]);
    }

    /// The benchmark's shape: a prompt and its reply, over and over, and every hundred
    /// lines a rewind three lines back. Each branch is measured from the prompt where it
    /// leaves the current one, and adds up to what it adds up to walked whole.
    #[test]
    fn branches_measured_from_a_shared_prompt_add_up_as_walked_whole() {
        let mut text = String::new();
        for i in 0..2_000u32 {
            let parent = match i {
                0 => None,
                i if i % 100 == 0 => Some(alloc::format!("g{}", i - 3)),
                i => Some(alloc::format!("g{}", i - 1)),
            };
            let message = if i % 2 == 0 {
                alloc::format!("{{\"role\":\"user\",\"content\":\"question {i}\"}}")
            } else {
                alloc::format!(
                    "{{\"role\":\"assistant\",\"id\":\"msg_{i}\",\"content\":[{{\"type\":\"text\",\"text\":\"answer\"}}],\"usage\":{{\"input_tokens\":{i},\"output_tokens\":5}}}}"
                )
            };
            let kind = if i % 2 == 0 { "user" } else { "assistant" };
            text.push_str(&entry(kind, &alloc::format!("g{i}"), parent.as_deref(), &message, 1));
        }
        let (shared, walked) = with_loaded(&[text.as_bytes()], |loaded| (loaded.ledger(None), loaded.ledger_sharing(None, false)));
        assert_eq!(shared.branches.len(), 20);
        assert_eq!(shared, walked);
    }

    /// A branch is measured from where it leaves another only from a prompt, which
    /// ends every reply before it: from a result, what hangs off the reply above it
    /// depends on what follows. Here a call's first result hangs off its call's line;
    /// one branch goes on with the reply, the other gives the result again further
    /// down: the one that hangs off is the reply's on the first, not on the second.
    #[test]
    fn a_branch_leaving_another_inside_a_reply_is_measured_from_the_prompt_before() {
        let call = |id: &str, output: u32| {
            alloc::format!(
                "{{\"role\":\"assistant\",\"id\":\"msg_1\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"ls\",\"input\":{{}}}}],\"usage\":{{\"input_tokens\":10,\"output_tokens\":{output}}}}}"
            )
        };
        let reply = |id: &str| alloc::format!("{{\"role\":\"assistant\",\"id\":\"{id}\",\"content\":\"done\"}}");
        let text = [
            entry("user", "u1", None, "{\"role\":\"user\",\"content\":\"look\"}", 1),
            entry("assistant", "c1", Some("u1"), &call("t1", 1), 2),
            entry("assistant", "c2", Some("c1"), &call("t2", 2), 3),
            entry("user", "r1", Some("c1"), &result("t1"), 4),
            entry("user", "r2", Some("c2"), &result("t2"), 5),
            entry("user", "x", Some("r2"), &result("t1"), 6),
            entry("assistant", "b", Some("x"), &reply("msg_3"), 7),
            entry("assistant", "a", Some("r2"), &reply("msg_2"), 8),
        ]
        .concat();
        let (shared, walked) = with_loaded(&[text.as_bytes()], |loaded| (loaded.ledger(None), loaded.ledger_sharing(None, false)));
        let counts: Vec<(&str, u32)> = walked.branches.iter().map(|b| (b.leaf.as_str(), b.message_count)).collect();
        assert_eq!(counts, [("a", 6), ("b", 6)], "r1 is a's, not b's");
        assert_eq!(shared, walked);
    }

    /// A walk that came to a compaction's summary through the segment it relinked goes
    /// on where that segment was written; one that came to the summary from below goes
    /// on where the boundary above the summary says. Not shared.
    #[test]
    fn a_branch_under_a_relinked_summary_walks_its_own_way() {
        let reply = |id: &str, input: u32| {
            alloc::format!(
                "{{\"role\":\"assistant\",\"id\":\"{id}\",\"content\":\"r\",\"usage\":{{\"input_tokens\":{input},\"output_tokens\":1}}}}"
            )
        };
        let prompt = "{\"role\":\"user\",\"content\":\"go\"}";
        let boundary = |uuid: &str, logical: &str, segment: &str| {
            alloc::format!(
                "{{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"uuid\":\"{uuid}\",\"parentUuid\":null,\"logicalParentUuid\":\"{logical}\",\"timestamp\":\"2026-01-01T00:00:00.010Z\",\"compactMetadata\":{{{segment}}}}}\n"
            )
        };
        let text = [
            entry("user", "z1", None, prompt, 1),
            entry("assistant", "z2", Some("z1"), &reply("msg_z", 100), 2),
            entry("user", "h1", None, prompt, 3),
            entry("assistant", "h2", Some("h1"), &reply("msg_h", 7), 4),
            boundary("b2", "z2", ""),
            entry("user", "s", Some("b2"), "{\"role\":\"user\",\"content\":\"summary\"}", 11),
            entry("user", "head", Some("h2"), prompt, 12),
            boundary("b1", "head", "\"preservedSegment\":{\"headUuid\":\"head\",\"anchorUuid\":\"s\",\"tailUuid\":\"head\"}"),
            entry("assistant", "l1", Some("s"), &reply("msg_l", 1), 13),
            entry("assistant", "tail", Some("head"), &reply("msg_t", 1), 14),
        ]
        .concat();
        let (shared, walked) = with_loaded(&[text.as_bytes()], |loaded| (loaded.ledger(None), loaded.ledger_sharing(None, false)));
        let inputs: Vec<(&str, u64)> = walked.branches.iter().map(|b| (b.leaf.as_str(), b.usage.input)).collect();
        assert!(inputs.contains(&("l1", 101)) && inputs.contains(&("tail", 8)), "{inputs:?}");
        assert_eq!(shared, walked);
    }

    /// A session of prompts, replies split over lines, calls made at once and their
    /// results, rewinds, sidechains, tombstones, compactions, parents written after
    /// their children and ids given twice.
    fn random_session(lines: &[(u8, u8, u8, u8, u8)]) -> String {
        let mut text = String::new();
        for (n, &(kind, back, reply, call, side)) in lines.iter().enumerate() {
            let uuid = alloc::format!("l{n}");
            let parent = match back {
                0..=5 => n.checked_sub(1),
                6..=9 => n.checked_sub(back as usize - 4),
                10 => Some(n + 1),
                _ => None,
            }
            .map(|p| alloc::format!("\"l{p}\""))
            .unwrap_or_else(|| String::from("null"));
            let sidechain = side == 0;
            let common = alloc::format!(
                "\"uuid\":\"{uuid}\",\"parentUuid\":{parent},\"isSidechain\":{sidechain},\"timestamp\":\"2026-01-01T00:{:02}:{:02}.000Z\"",
                n / 60,
                n % 60
            );
            let usage = alloc::format!("\"usage\":{{\"input_tokens\":{n},\"output_tokens\":{reply}}}");
            // Mostly a reply or a call of a few lines near each other; some of every
            // session's share one id.
            let reply = if reply == 0 { String::from("shared") } else { alloc::format!("{}_{reply}", n / 4) };
            let call_id = |line: usize, call: u8| if call == 0 { String::from("shared") } else { alloc::format!("{}_{call}", line / 4) };
            // A result mostly answers the line before's call.
            let answered = match n.checked_sub(1) {
                Some(before) if call < 3 => call_id(before, lines[before].3),
                _ => call_id(n, call),
            };
            let head = n.saturating_sub(3 + call as usize);
            let call = call_id(n, call);
            let line = match kind {
                0..=2 => alloc::format!("{{\"type\":\"user\",{common},\"message\":{{\"role\":\"user\",\"content\":\"q{n}\"}}}}"),
                3..=5 => alloc::format!(
                    "{{\"type\":\"assistant\",{common},\"message\":{{\"role\":\"assistant\",\"id\":\"msg_{reply}\",\"content\":[{{\"type\":\"text\",\"text\":\"a{n}\"}}],{usage}}}}}"
                ),
                6 | 7 => alloc::format!(
                    "{{\"type\":\"assistant\",{common},\"message\":{{\"role\":\"assistant\",\"id\":\"msg_{reply}\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t{call}\",\"name\":\"ls\",\"input\":{{}}}}],{usage}}}}}"
                ),
                8 | 9 => alloc::format!(
                    "{{\"type\":\"user\",{common},\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t{answered}\",\"content\":\"ok\"}}]}}}}"
                ),
                10 => alloc::format!("{{\"type\":\"tombstone\",\"deleted_uuid\":\"l{}\"}}", n.saturating_sub(back as usize + 1)),
                11 => alloc::format!(
                    "{{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"uuid\":\"{uuid}\",\"parentUuid\":null,\"logicalParentUuid\":{parent},\"timestamp\":\"2026-01-01T00:{:02}:{:02}.000Z\",\"compactMetadata\":{{\"preservedSegment\":{{\"headUuid\":\"l{}\",\"anchorUuid\":\"l{}\",\"tailUuid\":\"l{}\"}}}}}}",
                    n / 60,
                    n % 60,
                    head,
                    n + 1,
                    n.saturating_sub(1)
                ),
                12 => alloc::format!(
                    "{{\"type\":\"user\",{common},\"isCompactSummary\":true,\"message\":{{\"role\":\"user\",\"content\":\"summary {n}\"}}}}"
                ),
                // An id given twice: the line before, written again.
                _ => alloc::format!(
                    "{{\"type\":\"assistant\",\"uuid\":\"l{}\",\"parentUuid\":{parent},\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"assistant\",\"id\":\"msg_{reply}\",\"content\":\"again\",{usage}}}}}",
                    n.saturating_sub(1)
                ),
            };
            text.push_str(&line);
            text.push('\n');
        }
        text
    }

    /// A session as Claude Code 2.1 writes one, turn by turn: a prompt (under the last
    /// line, or a rewind to any earlier one), a reply's calls a line each, their results
    /// under each call (in order, or the last call's first), the next reply under the
    /// last result written; and now and then a line tombstoned, written again, a
    /// result written late or a sidechain line.
    fn claude_session(turns: &[(u8, u8, u8, u8)]) -> String {
        let mut lines: Vec<(String, String)> = Vec::new();
        let mut late: Option<String> = None;
        let mut clock = 0u32;
        let mut push = |lines: &mut Vec<(String, String)>, kind: &str, parent: Option<&str>, message: String| -> String {
            clock += 1;
            let uuid = alloc::format!("u{clock}");
            let parent = parent.map_or("null".into(), |p| alloc::format!("\"{p}\""));
            let line = alloc::format!(
                "{{\"type\":\"{kind}\",\"uuid\":\"{uuid}\",\"parentUuid\":{parent},\"timestamp\":\"2026-01-01T{:02}:{:02}:{:02}.000Z\",\"message\":{message}}}\n",
                clock / 3600,
                clock / 60 % 60,
                clock % 60
            );
            lines.push((uuid.clone(), line));
            uuid
        };
        let mut last: Option<String> = None;
        for (turn, &(rewind, calls, style, noise)) in turns.iter().enumerate() {
            let parent = match (rewind, lines.len()) {
                (0, _) | (_, 0) => last.clone(),
                (back, count) => Some(lines[count - 1 - (back as usize * 3) % count].0.clone()),
            };
            let prompt: String =
                push(&mut lines, "user", parent.as_deref(), alloc::format!("{{\"role\":\"user\",\"content\":\"turn {turn}\"}}"));
            let reply = |id: &str, content: String, output: u32| {
                alloc::format!(
                    "{{\"role\":\"assistant\",\"id\":\"{id}\",\"content\":[{content}],\"usage\":{{\"input_tokens\":{turn},\"output_tokens\":{output}}}}}"
                )
            };
            let id = alloc::format!("msg_{turn}");
            let mut tip = prompt.clone();
            let mut call_lines = Vec::new();
            // A call id given again: the turn before's.
            let calls_of = if noise % 8 == 4 { turn.saturating_sub(1) } else { turn };
            for call in 0..calls % 4 {
                let content = alloc::format!("{{\"type\":\"tool_use\",\"id\":\"t{calls_of}_{call}\",\"name\":\"ls\",\"input\":{{}}}}");
                tip = push(&mut lines, "assistant", Some(&tip), reply(&id, content, call as u32 + 1));
                call_lines.push((call, tip.clone()));
            }
            if style % 2 == 1 {
                call_lines.reverse();
            }
            for (call, line) in call_lines {
                let result = alloc::format!(
                    "{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t{calls_of}_{call}\",\"content\":\"ok\"}}]}}"
                );
                if noise % 8 == 2 && late.is_none() {
                    late = Some(alloc::format!("{}\u{0}{line}", result));
                    continue;
                }
                // A result given twice, the first left hanging.
                if noise % 8 == 5 {
                    push(&mut lines, "user", Some(&line), result.clone());
                }
                tip = push(&mut lines, "user", Some(&line), result);
            }
            let answer = reply(&alloc::format!("msg_{turn}_b"), String::from("{\"type\":\"text\",\"text\":\"done\"}"), 9);
            tip = push(&mut lines, "assistant", Some(&tip), answer);
            if let Some((result, under)) = late.take().as_deref().and_then(|late| late.split_once('\u{0}')) {
                push(&mut lines, "user", Some(under), result.into());
            }
            match noise % 8 {
                0 if lines.len() > 2 => {
                    let gone = lines[lines.len() / 2].0.clone();
                    lines.push((String::new(), alloc::format!("{{\"type\":\"tombstone\",\"deleted_uuid\":\"{gone}\"}}\n")));
                }
                1 => {
                    let again = lines[lines.len() - 2].clone();
                    lines.push(again);
                }
                3 => {
                    let side = push(&mut lines, "user", Some(&tip), String::from("{\"role\":\"user\",\"content\":\"aside\"}"));
                    let line = lines.pop().map(|(_, line)| line.replacen("{\"type\"", "{\"isSidechain\":true,\"type\"", 1));
                    lines.extend(line.map(|line| (side, line)));
                }
                // Compacted, keeping this turn: its prompt continues from the summary,
                // and the next turn from its last line.
                6 => {
                    let (boundary, summary) = (alloc::format!("c{turn}"), alloc::format!("s{turn}"));
                    lines.push((boundary.clone(), alloc::format!(
                        "{{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"uuid\":\"{boundary}\",\"parentUuid\":null,\"logicalParentUuid\":\"{tip}\",\"timestamp\":\"2026-01-01T23:00:{:02}.000Z\",\"compactMetadata\":{{\"preservedSegment\":{{\"headUuid\":\"{prompt}\",\"anchorUuid\":\"{summary}\",\"tailUuid\":\"{tip}\"}}}}}}\n",
                        turn % 60
                    )));
                    lines.push((summary.clone(), alloc::format!(
                        "{{\"type\":\"user\",\"uuid\":\"{summary}\",\"parentUuid\":\"{boundary}\",\"isCompactSummary\":true,\"timestamp\":\"2026-01-01T23:00:{:02}.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"summary\"}}}}\n",
                        turn % 60
                    )));
                }
                _ => {}
            }
            last = Some(tip);
        }
        lines.into_iter().map(|(_, line)| line).collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]

        /// Measuring branches from the prompts they share adds up to what walking each
        /// whole does, on any session.
        #[test]
        fn shared_measures_are_whole_walks(lines in proptest::collection::vec((0u8..14, 0u8..12, 0u8..4, 0u8..5, 0u8..12), 1..48)) {
            let text = random_session(&lines);
            let (shared, walked) = with_loaded(&[text.as_bytes()], |loaded| (loaded.ledger(None), loaded.ledger_sharing(None, false)));
            proptest::prop_assert_eq!(shared, walked, "{}", text);
        }

        /// The same on sessions as Claude Code writes them, with many rewinds.
        #[test]
        fn shared_measures_are_whole_walks_in_claude_sessions(turns in proptest::collection::vec((0u8..5, 0u8..8, 0u8..2, 0u8..16), 1..30)) {
            let text = claude_session(&turns);
            let (shared, walked) = with_loaded(&[text.as_bytes()], |loaded| (loaded.ledger(None), loaded.ledger_sharing(None, false)));
            proptest::prop_assert_eq!(shared, walked, "{}", text);
        }
    }

    /// Every reply in the corpus counted at the usage of its last line, read
    /// independently as JSON values: the ledger's total is their sum.
    #[test]
    fn the_corpus_ledgers_count_each_reply_at_its_last_line() {
        for path in crate::support::corpus_files().into_iter().filter(|p| p.to_string_lossy().contains("/claude/")) {
            let bytes = std::fs::read(&path).unwrap();
            let mut last: alloc::collections::BTreeMap<String, [u64; 4]> = alloc::collections::BTreeMap::new();
            for text in bytes.split(|&b| b == b'\n') {
                let Ok(value) = serde_json::from_slice::<serde_json::Value>(text) else { continue };
                let (Some(id), Some(usage)) = (value["message"]["id"].as_str(), value["message"]["usage"].as_object()) else { continue };
                let field = |name: &str| usage.get(name).and_then(serde_json::Value::as_u64).unwrap_or(0);
                last.insert(
                    id.into(),
                    [field("input_tokens"), field("output_tokens"), field("cache_read_input_tokens"), field("cache_creation_input_tokens")],
                );
            }
            let expected = last.values().fold([0u64; 4], |sum, u| core::array::from_fn(|i| sum[i] + u[i]));
            let total = with_loaded(&[bytes.as_slice()], |loaded| loaded.ledger(None).total);
            assert_eq!([total.input, total.output, total.cache_read, total.cache_creation], expected, "{}", path.display());
        }
    }
}
