//! Branches and the token ledger. A rewind or a retry leaves a message with several
//! children: every message no later message descends from ends a branch. The ledger
//! adds up what replies reported in `usage`, once per reply (`message.id`).

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::shorten;
use super::thread::Loaded;
use crate::message::canonical::line_usage;
use crate::message::{Usage, canonical};
use crate::scan::{self, Line};
use crate::support::json::Raw;

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

/// The most each reply reached, kept between calls of [`Reports::usage_of`] with the
/// replies it touched.
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

    /// Usage of the lines at `indices`, each reply counted once however many lines it
    /// was split into. Claude Code writes on each line of a streamed reply the usage
    /// reported so far: the output grows from line to line (1, 1, 104), the rest stays.
    /// A reply's usage is the most each field reached.
    fn usage_of(&self, indices: impl Iterator<Item = usize>, most: &mut Most) -> (Usage, u32) {
        // Only the replies the last call touched are cleared: a session with many short
        // branches would otherwise pay for every reply on each.
        most.reached.resize(self.replies as usize, None);
        for reply in most.touched.drain(..) {
            if let Some(slot) = most.reached.get_mut(reply as usize) {
                *slot = None;
            }
        }
        let mut total = Usage::default();
        let mut replies = 0;
        for (reply, usage) in indices.filter_map(|i| self.lines[i].as_ref()) {
            match most.reached.get_mut(*reply as usize) {
                Some(Some(reached)) => reached.raise_to(usage),
                Some(slot) => {
                    *slot = Some(*usage);
                    most.touched.push(*reply);
                }
                None => {
                    total.add(usage);
                    replies += 1;
                }
            }
        }
        for reply in &most.touched {
            if let Some(Some(usage)) = most.reached.get(*reply as usize) {
                total.add(usage);
                replies += 1;
            }
        }
        (total, replies)
    }
}

impl Loaded<'_> {
    /// The leaves of the conversation: live main-conversation messages that no later
    /// message descends from (through any entries in between), oldest first.
    fn leaf_messages(&self, index: &crate::support::hash::FastMap<&str, usize>) -> Vec<usize> {
        let only_sidechains = self.only_sidechains();
        let is_candidate =
            |l: &Line| self.is_live(l) && l.env.ends_a_branch() && l.env.uuid().is_some() && (only_sidechains || !l.env.is_sidechain.0);
        // Every ancestor of a message has a descendant, by the edges the leaf rule
        // counts (see [`Loaded::leaf`]): parents, and the summary a relinked head
        // continues from. A compaction's logical parent is no edge: the entry it names
        // stays a leaf.
        let parents = |line: &Line| -> Vec<usize> {
            let relinked = self.parent_of(line).filter(|p| Some(*p) != line.env.parent_uuid() && !line.env.is_compact_boundary());
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
        let links = self.links();
        let current_chain = self.chain_in(&links);
        let current_leaf = current_chain.iter().rev().copied().find(|&i| self.lines[i].env.ends_a_branch());
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
        let mut branches: Vec<(usize, Branch)> = Vec::new();
        for leaf in leaves {
            let current = Some(leaf) == current_leaf;
            if !current && covered[leaf] {
                continue;
            }
            let chain = if without_ids == Some(leaf) { current_chain.clone() } else { self.chain_from(leaf, &links) };
            for &i in &chain {
                covered[i] = true;
                gathered_later[i] |= listed[i] && i != leaf;
            }
            listed[leaf] = true;
            let line = &self.lines[leaf];
            // As the context reads the message: a tool result or a call shows as a marker
            // (`[tool_result toolu_…]`), not as nothing.
            let message = if line.env.is_pi_context_entry() { Some(Raw::valid(line.raw)) } else { line.env.message };
            let (role, text) = match canonical::stored(line.env.kind(), message) {
                // A branch's summary shown by its own words, not pi's preamble to them.
                Some(stored) => {
                    let summary = line.env.rare().summary.get().filter(|_| line.env.is_pi_context_entry());
                    (Some(stored.role), summary.map_or(stored.text, Cow::Borrowed).into_owned())
                }
                None => scan::message_text(line.env.message),
            };
            let forks_at = if current {
                None
            } else {
                chain
                    .iter()
                    .rev()
                    .find(|&&i| on_current[i] && self.lines[i].env.is_message())
                    .and_then(|&i| self.lines[i].env.uuid())
                    .map(ToString::to_string)
            };
            let (usage, _) = reports.usage_of(chain.iter().copied(), &mut most);
            let branch = Branch {
                leaf: line.entry_id().into_owned(),
                current,
                role,
                text: shorten(&text),
                timestamp: line.env.timestamp.get().map(ToString::to_string),
                message_count: chain.iter().filter(|&&i| self.lines[i].env.is_message()).count() as u32,
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
