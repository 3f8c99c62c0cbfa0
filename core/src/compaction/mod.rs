//! Compaction: when to compact, what to summarise, what to keep (`plan`, pure over
//! a loaded session), the summariser's bounded prompt (`prompt`), the offline
//! summariser (`summary`) and the sans-IO driver every host steps through (`run`).
//! The host brings the model that writes the summary.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::dialect::{
    self,
    canonical::{self, reported_usage},
};
use crate::format::{Format, Marker};
use crate::message::calls;
use crate::scan::{Block, Content, Line, message_text, parse_message, parse_message_content};
use crate::support::saturating_sum;
use crate::transcript::context::ContextLines;
use crate::transcript::thread::Loaded;
use crate::transcript::tokens;

mod prompt;
mod run;
mod summary;

pub use run::{Run, Step};
pub(crate) use summary::extractive_summary;

/// When a context is full enough to compact. In JSON: `{"fraction": 0.9}` or
/// `{"reserve": {"reserve_tokens": 16384, "floor": 20000}}`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// At this fraction of the context window (Cersei: 0.9).
    Fraction(f64),
    /// When fewer than `max(reserve_tokens, floor)` tokens are left (pi: 16384 with
    /// OpenClaw's floor of 20000).
    Reserve { reserve_tokens: u64, floor: u64 },
}

impl Trigger {
    /// Tokens at which compaction triggers.
    pub fn limit(self, context_window: u64) -> u64 {
        match self {
            Trigger::Fraction(fraction) => (context_window as f64 * fraction.clamp(0.0, 1.0)) as u64,
            Trigger::Reserve { reserve_tokens, floor } => context_window.saturating_sub(reserve_tokens.max(floor)),
        }
    }

    /// Tokens left for the summary: 80% of the headroom the trigger reserves, at
    /// least 256 to say anything, at most a quarter of the window so the summary
    /// cannot refill it.
    fn summary_budget(self, context_window: u64) -> u64 {
        (context_window.saturating_sub(self.limit(context_window)).saturating_mul(4) / 5).max(256).min((context_window / 4).max(64))
    }
}

/// What a compaction keeps verbatim. In JSON: `{"recent_tokens": 20000}` or
/// `{"recent_messages": 10}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// At least this many tokens of the newest messages (pi: 20000).
    RecentTokens(u64),
    /// At least this many of the newest messages (Cersei: 10).
    RecentMessages(u32),
}

/// Why a plan is being asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// After a turn: compact only if the trigger says so.
    Auto,
    /// The user asked (`/compact`): compact now, whatever the trigger says.
    Manual,
    /// The provider refused the request as too long: compact once, then retry.
    Overflow,
}

impl Mode {
    /// Parses `auto`, `manual` or `overflow`, the spelling of every binding.
    pub fn parse(text: &str) -> Result<Mode, crate::Error> {
        match text {
            "auto" => Ok(Mode::Auto),
            "manual" => Ok(Mode::Manual),
            "overflow" => Ok(Mode::Overflow),
            other => Err(crate::Error::InvalidArgument(format!("unknown compaction mode `{other}`: use `auto`, `manual` or `overflow`"))),
        }
    }
}

/// Every knob of planning, with the seeds' defaults (fields missing from JSON keep
/// theirs).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub context_window: u64,
    pub trigger: Trigger,
    pub keep: Keep,
    /// Tool results beyond this many characters in all are truncated, oldest first,
    /// before a summary is needed (Cersei: 50000).
    pub tool_result_budget_chars: u64,
    /// Consecutive failed compactions after which auto-compaction stops (Cersei: 3).
    pub max_failures: u32,
    /// The context window of the model that writes the summary (`None`: the same as
    /// `context_window`). A conversation whose prompt would not fit is summarised in
    /// rolling steps, each carrying the summary so far.
    pub summarizer_window: Option<u64>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            context_window: tokens::DEFAULT_CONTEXT_WINDOW,
            trigger: Trigger::Fraction(0.9),
            keep: Keep::RecentTokens(20_000),
            tool_result_budget_chars: 50_000,
            max_failures: 3,
            summarizer_window: None,
        }
    }
}

impl Settings {
    /// Refuses what would plan nonsense: a window of no tokens, or a trigger fraction
    /// outside (0, 1] (at 0 or below, or NaN, every turn would compact).
    pub(crate) fn check(&self) -> Result<(), crate::Error> {
        let refuse = |what: String| Err(crate::Error::InvalidArgument(what));
        if self.context_window == 0 || self.summarizer_window == Some(0) {
            return refuse("a context window of 0 tokens: give the model's window in tokens (such as 200000)".into());
        }
        match self.trigger {
            Trigger::Fraction(fraction) if !(fraction > 0.0 && fraction <= 1.0) => {
                refuse(format!("the trigger's fraction of the window is {fraction}: give one above 0 and at most 1 (0.9 compacts at 90%)"))
            }
            _ => Ok(()),
        }
    }
}

/// A tool result the plan would shorten without a model.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pruned {
    /// The entry holding the result.
    pub uuid: String,
    pub tool_use_id: String,
    pub chars: u64,
}

/// Why a compaction is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Due {
    /// The context reached the trigger.
    Threshold,
    /// The provider refused the context as too long.
    Overflow,
    /// Someone asked.
    Manual,
}

/// What applying a plan does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Nothing.
    #[default]
    None,
    /// Clear the tool results in `prune`; no summary needed.
    Prune,
    /// Replace `summarize` with a summary.
    Summarize,
}

/// What to do, as data: the host shows it, has `prompts` summarised one after the
/// other (see [`Run`]), and hands the summary to apply.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Plan {
    /// Why compaction is due; `null` when it is not due.
    pub trigger: Option<Due>,
    /// A sentence on the decision, for people.
    pub reason: String,
    /// Set when auto-compaction is refused: the circuit breaker or the loop guard.
    pub blocked: Option<String>,
    pub action: Action,
    pub context_window: u64,
    /// Tokens at which the trigger fires.
    pub limit: u64,
    /// Tokens of the context now (the provider's last reported usage plus estimates).
    pub tokens_before: u64,
    /// Entries to summarise (`uuid`, or `id` for pi), oldest first.
    pub summarize: Vec<String>,
    /// The start of the current turn, before the cut: summarised separately so the
    /// kept part of the turn still makes sense.
    pub turn_prefix: Vec<String>,
    /// Entries kept verbatim, oldest first.
    pub keep: Vec<String>,
    /// Estimated tokens of `keep`.
    pub keep_tokens: u64,
    /// The oldest tool results over the tool-result budget. With `action` `prune`,
    /// applying clears them (no model needed); otherwise the summary covers them.
    pub prune: Vec<Pruned>,
    /// The summary of the previous compaction as it was written (not wrapped as the
    /// model is shown it), which the new summary must carry on.
    pub previous_summary: Option<String>,
    /// The instruction and the conversation to summarise: the whole prompt when it
    /// fits the summariser's window, else its first step (see `steps`).
    pub prompt: String,
    /// The conversation to summarise in pieces that each fit the summariser's window
    /// with the summary so far: one piece when it all fits. [`Plan::step_prompt`]
    /// turns a piece and the summary so far into a prompt.
    pub steps: Vec<String>,
    /// The prompt for `turn_prefix`, when there is one.
    pub turn_prefix_prompt: Option<String>,
    /// Tokens the summary may use.
    pub summary_budget_tokens: u64,
    /// What the plan was made on: the id of the session's newest entry and its size
    /// in bytes. Applying refuses a plan whose session has changed since.
    pub leaf: Option<String>,
    pub session_bytes: u64,
}

impl Plan {
    /// Whether applying this plan would change anything.
    pub fn has_work(&self) -> bool {
        self.trigger.is_some() && self.blocked.is_none() && self.action != Action::None
    }

    /// Whether applying needs a summary from a model (or the offline summariser).
    pub fn needs_summary(&self) -> bool {
        self.has_work() && self.action == Action::Summarize
    }

    /// The prompt for piece `step` of `steps`, carrying `summary_so_far` (the previous
    /// compaction's summary for the first piece).
    pub fn step_prompt(&self, step: usize, summary_so_far: Option<&str>) -> Option<String> {
        let piece = self.steps.get(step)?;
        Some(prompt::assemble(SUMMARY_INSTRUCTION, summary_so_far, piece))
    }
}

const SUMMARY_INSTRUCTION: &str = "You are summarizing the earlier part of a conversation between a user and an AI assistant, so the assistant can continue the work without it. Write a structured summary with these sections:

## Goal
## Constraints and preferences
## Progress (done, in progress, blocked)
## Key decisions
## Files, commands and code
## Next steps
## Critical context

Be specific: keep file paths, function names, error messages, commands and numbers. Do not continue the conversation; write only the summary.";

const TURN_PREFIX_INSTRUCTION: &str = "The messages below are the beginning of the current turn; the rest of the turn is kept verbatim after your summary. Summarize what the user asked in this turn and what has been done so far, briefly and specifically. Write only the summary.";

/// The role a line plays in API rounds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// A user message a person wrote (text or images): a turn starts here.
    Prompt,
    /// A user message holding only tool results: never a place to cut.
    ToolResults,
    Assistant,
}

fn part_of(line: &Line) -> Part {
    let Some((message, read)) = line.env.message.and_then(parse_message_content) else { return Part::Prompt };
    match (message.role.get(), read) {
        (Some("assistant"), _) => Part::Assistant,
        (Some("toolResult"), _) => Part::ToolResults,
        (_, Some(Content::Blocks(blocks))) if !blocks.is_empty() && blocks.iter().all(|b| b.kind.get() == Some("tool_result")) => {
            Part::ToolResults
        }
        _ => Part::Prompt,
    }
}

fn message_id(line: &Line) -> Option<String> {
    line.env.message.and_then(parse_message).and_then(|m| m.id.get().map(ToString::to_string))
}

/// What a session's context measures, before anything is decided.
struct Measure<'l, 'a> {
    context: ContextLines,
    previous_summary: Option<String>,
    /// The context's messages, oldest first, and their estimated tokens.
    units: Vec<&'l Line<'a>>,
    estimates: Vec<u64>,
    tokens: u64,
    /// Where the messages after the last compaction start in `units`.
    split: usize,
}

fn measure<'l, 'a>(loaded: &'l Loaded<'a>) -> Measure<'l, 'a> {
    let context = loaded.context_lines();
    let lines = &loaded.lines;
    // The previous summary as it was written (the new one carries it on, and is
    // wrapped again when applied), counted as the model receives it: wrapped.
    let held = context.compaction.and_then(|i| {
        let rule = crate::dialect::compaction_rule(&lines[i].env)?;
        Some((rule.format, rule.summary?))
    });
    let (previous_summary, previous_tokens) = match held {
        Some((format, summary)) => (Some(summary.to_string()), tokens::text_tokens(&format.dialect().shown_summary(summary))),
        None => {
            let shown: Vec<String> =
                context.summaries.iter().map(|&i| message_text(lines[i].env.message).1).filter(|t| !t.is_empty()).collect();
            let written: Vec<&str> = shown.iter().map(|t| t.strip_prefix(crate::dialect::claude::SUMMARY_PREFIX).unwrap_or(t)).collect();
            let tokens = tokens::text_tokens(&shown.join("\n\n"));
            ((!written.is_empty()).then(|| written.join("\n\n")), tokens)
        }
    };
    let units: Vec<&Line> = context.lines.iter().map(|&i| &lines[i]).collect();
    let estimates: Vec<u64> = units.iter().map(|l| tokens::estimate(l, &context.cleared)).collect();
    // The provider's last usage since the compaction plus estimates for what came
    // after it: that usage measured the summary and what the compaction kept too.
    // Without one, estimates for the summary and the kept messages (usage reported
    // before the compaction measured a context that no longer exists).
    let compaction_at = context.compaction.map(|i| (lines[i].part, lines[i].line));
    let split = units.iter().position(|l| compaction_at.is_none_or(|at| (l.part, l.line) > at)).unwrap_or(units.len());
    let since = tokens::context_tokens(units[split..].iter().copied(), &context.cleared);
    let tokens = if units[split..].iter().any(|l| reported_usage(l).is_some()) {
        since
    } else {
        previous_tokens.saturating_add(saturating_sum(estimates[..split].iter().copied())).saturating_add(since)
    };
    Measure { context, previous_summary, units, estimates, tokens, split }
}

/// The tokens a model would receive if the session were resumed now.
pub(crate) fn context_token_count(loaded: &Loaded) -> u64 {
    measure(loaded).tokens
}

/// Plans a compaction of `loaded` now.
pub(crate) fn plan(loaded: &Loaded, settings: &Settings, mode: Mode) -> Plan {
    let format = Format::detect(&loaded.lines);
    let Measure { context, previous_summary, units, estimates, tokens: tokens_before, split } = measure(loaded);
    let limit = settings.trigger.limit(settings.context_window);
    let mut plan = Plan {
        context_window: settings.context_window,
        limit,
        tokens_before,
        previous_summary,
        // The wrapping a summary gets when applied comes out of its budget.
        summary_budget_tokens: settings
            .trigger
            .summary_budget(settings.context_window)
            .saturating_sub(tokens::text_tokens(&format.dialect().shown_summary("")))
            .max(64),
        prune: prune(&units, settings.tool_result_budget_chars, &context.cleared),
        leaf: loaded.leaf().map(|i| loaded.lines[i].entry_id().into_owned()),
        ..Plan::default()
    };

    let over = match settings.trigger {
        Trigger::Fraction(_) => tokens_before >= limit,
        Trigger::Reserve { .. } => tokens_before > limit,
    };
    match mode {
        Mode::Manual => {
            plan.trigger = Some(Due::Manual);
            plan.reason = format!("compaction requested at {tokens_before} tokens (trigger at {limit})");
        }
        Mode::Overflow => {
            plan.trigger = Some(Due::Overflow);
            plan.reason = format!("the provider refused the context as too long ({tokens_before} tokens estimated)");
        }
        Mode::Auto if over => {
            plan.trigger = Some(Due::Threshold);
            plan.reason = format!("{tokens_before} tokens reach the trigger at {limit} of a {} window", settings.context_window);
        }
        Mode::Auto => {
            plan.reason = format!("{tokens_before} tokens are below the trigger at {limit}; nothing to do");
            return plan;
        }
    }
    let new_messages = (units.len() - split).saturating_sub(crab_copies(loaded, &context));
    if mode != Mode::Manual
        && let Some(blocked) = blocked(loaded, &context, settings, mode, new_messages)
    {
        plan.blocked = Some(blocked);
        return plan;
    }
    // No model needed when clearing the oldest tool results is enough. Only Claude
    // Code has an entry for cleared results; pi and crab sessions are summarised.
    let saved = saturating_sum(plan.prune.iter().map(|p| (p.chars / 4).saturating_sub(tokens::CLEARED_RESULT_TOKENS)));
    if mode == Mode::Auto && format == Format::Claude && !plan.prune.is_empty() && tokens_before.saturating_sub(saved) < limit {
        plan.action = Action::Prune;
        plan.reason = format!(
            "{}; clearing the {} oldest tool results frees ~{saved} tokens, enough without a summary",
            plan.reason,
            plan.prune.len()
        );
        plan.keep = ids(&units);
        plan.keep_tokens = saturating_sum(estimates.iter().copied()).saturating_sub(saved);
        return plan;
    }

    if format == Format::Pi && units.iter().any(|l| l.env.uuid().is_none()) {
        plan.reason =
            format!("{}; but this pi session predates entry ids (format v1): open it in pi once so it migrates, then compact", plan.reason);
        return plan;
    }
    // What is kept verbatim fits in half of what the trigger allows: 20,000 tokens kept
    // of an 8,000-token window left the context over its limit after every compaction,
    // and the loop guard then refused the next one.
    let keep = match settings.keep {
        Keep::RecentTokens(tokens) => Keep::RecentTokens(tokens.min(limit / 2).max(1)),
        keep => keep,
    };
    let Some(cut) = cut_point(&units, &estimates, keep) else {
        plan.reason = format!("{}; but every message is within what must be kept, so there is nothing to summarise", plan.reason);
        plan.keep = ids(&units);
        plan.keep_tokens = saturating_sum(estimates.iter().copied());
        return plan;
    };
    plan.action = Action::Summarize;
    let turn_start = match units.get(cut) {
        Some(line) if part_of(line) != Part::Prompt => units[..cut].iter().rposition(|l| part_of(l) == Part::Prompt),
        _ => None,
    };
    let summarize_end = turn_start.unwrap_or(cut);
    plan.summarize = ids(&units[..summarize_end]);
    plan.turn_prefix = ids(&units[summarize_end..cut]);
    plan.keep = ids(&units[cut..]);
    plan.keep_tokens = saturating_sum(estimates[cut..].iter().copied());
    // Each request carries the instruction, the summary so far and a piece of the
    // conversation, and leaves room for the answer.
    let window = settings.summarizer_window.unwrap_or(settings.context_window);
    let overhead =
        tokens::text_tokens(SUMMARY_INSTRUCTION).saturating_add(plan.summary_budget_tokens.saturating_mul(2)).saturating_add(512);
    let piece_tokens = window.saturating_sub(overhead).max(prompt::MIN_PIECE_TOKENS);
    plan.steps = prompt::pieces(&units[..summarize_end], piece_tokens);
    plan.prompt = plan.step_prompt(0, plan.previous_summary.as_deref()).unwrap_or_default();
    if summarize_end < cut {
        let prefix = prompt::pieces(&units[summarize_end..cut], piece_tokens);
        // A turn prefix longer than one request keeps its end: the part nearest the cut.
        let prefix = prefix.last().map_or("", String::as_str);
        plan.turn_prefix_prompt = Some(prompt::assemble(TURN_PREFIX_INSTRUCTION, None, prefix));
    }
    plan
}

fn ids(lines: &[&Line]) -> Vec<String> {
    lines.iter().map(|l| l.entry_id().into_owned()).collect()
}

/// Why auto or overflow compaction must not run now, if it must not.
fn blocked(loaded: &Loaded, context: &ContextLines, settings: &Settings, mode: Mode, new_messages: usize) -> Option<String> {
    let failures = consecutive_failures(loaded);
    if failures >= settings.max_failures {
        return Some(format!(
            "circuit breaker: the last {failures} compactions of this session failed; auto-compaction is off until one succeeds (compact manually)"
        ));
    }
    let compaction = context.compaction?;
    if new_messages == 0 {
        return Some(match mode {
            Mode::Overflow => "the session was just compacted and is still too long; compacting again would not help".into(),
            _ => "loop guard: nothing was added since the last compaction".into(),
        });
    }
    let (pre, post) = compaction_tokens(&loaded.lines[compaction])?;
    let limit = settings.trigger.limit(settings.context_window);
    (post >= limit || post.saturating_mul(10) > pre.saturating_mul(9)).then(|| {
        format!("loop guard: the last compaction only went from {pre} to {post} tokens; summarising again would free too little (compact manually, or keep fewer recent tokens)")
    })
}

/// How many of the messages after a crab compaction are the ones it kept, written
/// again after its marker (crab loads from its last marker on): the messages of the
/// marker's own record, whose lines but the last Mneme marks as continued (a leading
/// space). They are no new messages for the loop guard.
fn crab_copies(loaded: &Loaded, context: &ContextLines) -> usize {
    let Some(marker) = context.compaction.filter(|&i| Format::Crab.dialect().is_compaction(&loaded.lines[i].env)) else { return 0 };
    let mut copies = 0;
    let mut continued = loaded.lines[marker].raw.starts_with(' ');
    for line in loaded.lines.iter().skip(marker + 1) {
        if !continued {
            break;
        }
        copies += usize::from(line.env.is_message());
        continued = line.raw.starts_with(' ');
    }
    copies
}

/// `(preTokens, postTokens)` of a compaction boundary that recorded both.
fn compaction_tokens(line: &Line) -> Option<(u64, u64)> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        #[serde(rename = "preTokens")]
        pre: Option<u64>,
        #[serde(rename = "postTokens")]
        post: Option<u64>,
    }
    let metadata: Metadata = serde_json::from_str(line.env.rare().compact_metadata?.get()).ok()?;
    Some((metadata.pre?, metadata.post?))
}

/// Failed compactions recorded after the last compaction (of any kind).
pub(crate) fn consecutive_failures(loaded: &Loaded) -> u32 {
    let mut failures = 0;
    for line in loaded.lines.iter().rev() {
        if dialect::is_compaction(&line.env) {
            break;
        }
        if line.env.marker() == Some(Marker::CompactionFailure) {
            failures += 1;
        }
    }
    failures
}

/// Where the kept part starts: the latest place to cut at or before the point where
/// the newest messages reach the keep budget. Cuts fall only where an API round starts
/// (a prompt, or the first line of an assistant response), never on tool results nor
/// inside a reply, so a tool call and its result always stay on the same side.
fn cut_point(units: &[&Line], estimates: &[u64], keep: Keep) -> Option<usize> {
    let must_keep_from = match keep {
        Keep::RecentMessages(n) => units.len().checked_sub(n as usize)?,
        Keep::RecentTokens(budget) => {
            let mut kept = 0;
            let mut from = units.len();
            while from > 0 && kept < budget {
                from -= 1;
                kept = kept.saturating_add(estimates.get(from).copied().unwrap_or(0));
            }
            if kept < budget {
                return None;
            }
            from
        }
    };
    // Keeping nothing cuts after the last message.
    if must_keep_from >= units.len() {
        return (!units.is_empty()).then_some(units.len());
    }
    (1..=must_keep_from).rev().find(|&i| match part_of(units[i]) {
        Part::Prompt => true,
        Part::ToolResults => false,
        // A line of a reply already under way (the same `message.id`, with at most the
        // results of its calls in between) is no start: context reads it as one message.
        Part::Assistant => {
            let before = units[..i].iter().rev().find(|l| part_of(l) != Part::ToolResults);
            !before.is_some_and(|b| part_of(b) == Part::Assistant && message_id(b).is_some() && message_id(b) == message_id(units[i]))
        }
    })
}

/// Tool results beyond the budget, oldest first (those already cleared excluded, and
/// those after the last reply's first line — between its lines too, where Claude Code
/// writes a call's result: the model has not read them yet, and cleared, it would run
/// the call again).
fn prune(units: &[&Line], budget: u64, cleared: &BTreeSet<String>) -> Vec<Pruned> {
    // Read from the end, only as far as the last reply's first line.
    let last_reply = units.iter().rposition(|line| canonical::activity(line).is_some_and(|a| a.assistant));
    let mut read = last_reply.unwrap_or(0);
    let reply = last_reply.and_then(|at| canonical::activity(units[at])).and_then(|a| a.id);
    while let Some(before) = read.checked_sub(1).filter(|_| reply.is_some()) {
        if !calls::within_reply(canonical::activity(units[before]).as_ref(), reply.as_deref()) {
            break;
        }
        read = before;
    }
    let mut results = Vec::new();
    let mut unread = 0u64;
    for (at, line) in units.iter().enumerate() {
        let Some((_, Some(Content::Blocks(blocks)))) = line.env.message.and_then(parse_message_content) else {
            continue;
        };
        let live = |b: &&Block| b.kind.get() == Some("tool_result") && !b.tool_use_id.get().is_some_and(|id| cleared.contains(id));
        for block in blocks.iter().filter(live) {
            let chars = block.content.map_or(0, |c| c.get().len() as u64);
            if at > read {
                unread = unread.saturating_add(chars);
                continue;
            }
            results.push(Pruned {
                uuid: line.entry_id().into_owned(),
                tool_use_id: block.tool_use_id.get().unwrap_or_default().to_string(),
                chars,
            });
        }
    }
    let mut total = saturating_sum(results.iter().map(|r| r.chars)).saturating_add(unread);
    let mut over = Vec::new();
    for result in results {
        if total <= budget {
            break;
        }
        total -= result.chars;
        over.push(result);
    }
    over
}
