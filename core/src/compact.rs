//! Compaction planning: when to compact, what to summarise, what to keep. Pure
//! functions over a loaded session; the host brings the model that writes the summary.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::session::{Loaded, PI_SUMMARY_PREFIX, PI_SUMMARY_SUFFIX};
use crate::tokens;
use crate::transcript::{Block, Content, Line, message_text, parse_content, parse_message};

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
        (context_window.saturating_sub(self.limit(context_window)) * 4 / 5).max(256).min((context_window / 4).max(64))
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// After a turn: compact only if the trigger says so.
    Auto,
    /// The user asked (`/compact`): compact now, whatever the trigger says.
    Manual,
    /// The provider refused the request as too long: compact once, then retry.
    Overflow,
}

/// Every knob of planning, with the seeds' defaults (fields missing from JSON keep
/// theirs).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    pub context_window: u64,
    pub trigger: Trigger,
    pub keep: Keep,
    /// Tool results beyond this many characters in all are truncated, oldest first,
    /// before a summary is needed (Cersei: 50000).
    pub tool_result_budget_chars: u64,
    /// Consecutive failed compactions after which auto-compaction stops (Cersei: 3).
    pub max_failures: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            context_window: tokens::DEFAULT_CONTEXT_WINDOW,
            trigger: Trigger::Fraction(0.9),
            keep: Keep::RecentTokens(20_000),
            tool_result_budget_chars: 50_000,
            max_failures: 3,
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

/// What to do, as data: the host shows it, summarises `summarize` (and
/// `turn_prefix`) with `prompt`, and hands the summary to `apply`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Plan {
    /// Why compaction is due: `threshold`, `overflow` or `manual`; `null` when it is
    /// not due (or blocked).
    pub trigger: Option<String>,
    /// A sentence on the decision, for people.
    pub reason: String,
    /// Set when auto-compaction is refused: the circuit breaker or the loop guard.
    pub blocked: Option<String>,
    /// What applying does: `none`; `prune` (clear the tool results in `prune`, no
    /// summary needed); or `summarize` (replace `summarize` with a summary).
    pub action: String,
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
    /// The summary of the previous compaction, which the new summary must carry on.
    pub previous_summary: Option<String>,
    /// The instruction and the conversation to summarise.
    pub prompt: String,
    /// The prompt for `turn_prefix`, when there is one.
    pub turn_prefix_prompt: Option<String>,
    /// Tokens the summary may use.
    pub summary_budget_tokens: u64,
}

impl Plan {
    /// Whether applying this plan would change anything.
    pub fn has_work(&self) -> bool {
        self.trigger.is_some() && self.blocked.is_none() && matches!(self.action.as_str(), "prune" | "summarize")
    }

    /// Whether applying needs a summary from a model (or the offline summariser).
    pub fn needs_summary(&self) -> bool {
        self.has_work() && self.action == "summarize"
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

/// Tool results are cut to this many characters in the prompt (pi's rule).
const PROMPT_TOOL_RESULT_CHARS: usize = 2000;

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
    let role = line.env.message.and_then(parse_message).and_then(|m| m.role.get().map(ToString::to_string));
    match role.as_deref() {
        Some("assistant") => Part::Assistant,
        Some("toolResult") => Part::ToolResults,
        _ => {
            let message = line.env.message.and_then(parse_message);
            match message.and_then(|m| parse_content(m.content)) {
                Some(Content::Blocks(blocks)) if !blocks.is_empty() && blocks.iter().all(|b| b.kind.get() == Some("tool_result")) => {
                    Part::ToolResults
                }
                _ => Part::Prompt,
            }
        }
    }
}

fn message_id(line: &Line) -> Option<String> {
    line.env.message.and_then(parse_message).and_then(|m| m.id.get().map(ToString::to_string))
}

/// Consecutive failed compactions recorded since the last successful one.
pub(crate) const FAILURE_KIND: &str = "compaction-failure";

/// Plans a compaction of `loaded` now.
pub(crate) fn plan(loaded: &Loaded, settings: &Settings, mode: Mode) -> Plan {
    let context = loaded.context_lines();
    let lines = &loaded.lines;
    let previous_summary = match context.compaction {
        // Counted as the model receives it: wrapped.
        Some(i) if lines[i].env.is_pi_compaction() => lines[i].env.summary.get().map(|s| wrapped_summary(true, s)),
        Some(i) if lines[i].env.is_crab_compaction() => lines[i].env.compact.get().map(ToString::to_string),
        _ => {
            let texts: Vec<String> =
                context.summaries.iter().map(|&i| message_text(lines[i].env.message).1).filter(|t| !t.is_empty()).collect();
            (!texts.is_empty()).then(|| texts.join("\n\n"))
        }
    };
    let units: Vec<&Line> = context.lines.iter().map(|&i| &lines[i]).collect();
    let estimates: Vec<u64> = units.iter().map(|l| tokens::estimate(l, &context.cleared)).collect();
    let (tokens_before, split) = count_tokens(loaded, &context, previous_summary.as_deref(), &units, &estimates);
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
            .saturating_sub(tokens::text_tokens(CLAUDE_SUMMARY_PREFIX))
            .max(64),
        prune: prune(&units, settings.tool_result_budget_chars, &context.cleared),
        action: "none".into(),
        ..Plan::default()
    };

    let over = match settings.trigger {
        Trigger::Fraction(_) => tokens_before >= limit,
        Trigger::Reserve { .. } => tokens_before > limit,
    };
    match mode {
        Mode::Manual => {
            plan.trigger = Some("manual".into());
            plan.reason = format!("compaction requested at {tokens_before} tokens (trigger at {limit})");
        }
        Mode::Overflow => {
            plan.trigger = Some("overflow".into());
            plan.reason = format!("the provider refused the context as too long ({tokens_before} tokens estimated)");
        }
        Mode::Auto if over => {
            plan.trigger = Some("threshold".into());
            plan.reason = format!("{tokens_before} tokens reach the trigger at {limit} of a {} window", settings.context_window);
        }
        Mode::Auto => {
            plan.reason = format!("{tokens_before} tokens are below the trigger at {limit}; nothing to do");
            return plan;
        }
    }
    if mode != Mode::Manual
        && let Some(blocked) = blocked(loaded, &context, settings, mode, units.len() - split)
    {
        plan.blocked = Some(blocked);
        return plan;
    }
    // No model needed when clearing the oldest tool results is enough.
    let saved: u64 = plan.prune.iter().map(|p| (p.chars / 4).saturating_sub(tokens::CLEARED_RESULT_TOKENS)).sum();
    // pi has no entry for cleared results, so its sessions are always summarised.
    let pi = loaded.lines.first().is_some_and(|l| l.env.kind() == "session");
    if mode == Mode::Auto && !pi && !plan.prune.is_empty() && tokens_before.saturating_sub(saved) < limit {
        plan.action = "prune".into();
        plan.reason = format!(
            "{}; clearing the {} oldest tool results frees ~{saved} tokens, enough without a summary",
            plan.reason,
            plan.prune.len()
        );
        plan.keep = ids(&units);
        plan.keep_tokens = estimates.iter().sum::<u64>().saturating_sub(saved);
        return plan;
    }

    if pi && units.iter().any(|l| l.env.uuid().is_none()) {
        plan.reason =
            format!("{}; but this pi session predates entry ids (format v1): open it in pi once so it migrates, then compact", plan.reason);
        return plan;
    }
    let Some(cut) = cut_point(&units, &estimates, settings.keep) else {
        plan.reason = format!("{}; but every message is within what must be kept, so there is nothing to summarise", plan.reason);
        plan.keep = ids(&units);
        plan.keep_tokens = estimates.iter().sum();
        return plan;
    };
    plan.action = "summarize".into();
    let turn_start = if part_of(units[cut]) == Part::Prompt { None } else { units[..cut].iter().rposition(|l| part_of(l) == Part::Prompt) };
    let summarize_end = turn_start.unwrap_or(cut);
    plan.summarize = ids(&units[..summarize_end]);
    plan.turn_prefix = ids(&units[summarize_end..cut]);
    plan.keep = ids(&units[cut..]);
    plan.keep_tokens = estimates[cut..].iter().sum();
    plan.prompt = prompt(SUMMARY_INSTRUCTION, plan.previous_summary.as_deref(), &units[..summarize_end]);
    if summarize_end < cut {
        plan.turn_prefix_prompt = Some(prompt(TURN_PREFIX_INSTRUCTION, None, &units[summarize_end..cut]));
    }
    plan
}

/// Tokens of a context: the summary, estimates for what came before the last
/// compaction (usage reported back then measured a context that no longer exists),
/// and the provider's last usage plus estimates for what came after. Also returns
/// where the lines after the compaction start in `units`.
fn count_tokens(
    loaded: &Loaded,
    context: &crate::session::ContextLines,
    summary: Option<&str>,
    units: &[&Line],
    estimates: &[u64],
) -> (u64, usize) {
    let compaction_at = context.compaction.map(|i| (loaded.lines[i].part, loaded.lines[i].line));
    let fresh = |l: &&Line| compaction_at.is_none_or(|at| (l.part, l.line) > at);
    let split = units.iter().position(fresh).unwrap_or(units.len());
    let tokens = summary.map_or(0, tokens::text_tokens)
        + estimates[..split].iter().sum::<u64>()
        + tokens::context_tokens(units[split..].iter().copied(), &context.cleared);
    (tokens, split)
}

/// The tokens a model would receive if the session were resumed now.
pub(crate) fn context_token_count(loaded: &Loaded) -> u64 {
    plan(loaded, &Settings::default(), Mode::Auto).tokens_before
}

fn ids(lines: &[&Line]) -> Vec<String> {
    lines.iter().map(|l| l.entry_id().into_owned()).collect()
}

/// Why auto or overflow compaction must not run now, if it must not.
fn blocked(
    loaded: &Loaded,
    context: &crate::session::ContextLines,
    settings: &Settings,
    mode: Mode,
    new_messages: usize,
) -> Option<String> {
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

/// `(preTokens, postTokens)` of a compaction boundary that recorded both.
fn compaction_tokens(line: &Line) -> Option<(u64, u64)> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        #[serde(rename = "preTokens")]
        pre: Option<u64>,
        #[serde(rename = "postTokens")]
        post: Option<u64>,
    }
    let metadata: Metadata = serde_json::from_str(line.env.compact_metadata?.get()).ok()?;
    Some((metadata.pre?, metadata.post?))
}

/// Failed compactions recorded after the last compaction (of any kind).
pub(crate) fn consecutive_failures(loaded: &Loaded) -> u32 {
    let mut failures = 0;
    for line in loaded.lines.iter().rev() {
        if line.env.is_compaction() {
            break;
        }
        if line.env.kind() == FAILURE_KIND {
            failures += 1;
        }
    }
    failures
}

/// Where the kept part starts: the latest place to cut at or before the point where
/// the newest messages reach the keep budget. Cuts fall only where an API round starts
/// (a prompt, or the first line of an assistant response), never on tool results, so
/// a tool call and its result always stay on the same side.
fn cut_point(units: &[&Line], estimates: &[u64], keep: Keep) -> Option<usize> {
    let must_keep_from = match keep {
        Keep::RecentMessages(n) => units.len().checked_sub(n as usize)?,
        Keep::RecentTokens(budget) => {
            let mut kept = 0;
            let mut from = units.len();
            while from > 0 && kept < budget {
                from -= 1;
                kept += estimates[from];
            }
            if kept < budget {
                return None;
            }
            from
        }
    };
    (1..=must_keep_from).rev().find(|&i| match part_of(units[i]) {
        Part::Prompt => true,
        Part::ToolResults => false,
        Part::Assistant => {
            part_of(units[i - 1]) != Part::Assistant
                || message_id(units[i - 1]).is_none()
                || message_id(units[i - 1]) != message_id(units[i])
        }
    })
}

/// Tool results beyond the budget, oldest first (those already cleared excluded).
fn prune(units: &[&Line], budget: u64, cleared: &alloc::collections::BTreeSet<String>) -> Vec<Pruned> {
    let mut results = Vec::new();
    for line in units {
        let Some(Content::Blocks(blocks)) = line.env.message.and_then(parse_message).and_then(|m| parse_content(m.content)) else {
            continue;
        };
        let live = |b: &&Block| b.kind.get() == Some("tool_result") && !b.tool_use_id.get().is_some_and(|id| cleared.contains(id));
        for block in blocks.iter().filter(live) {
            let chars = block.content.map_or(0, |c| c.get().len() as u64);
            results.push(Pruned {
                uuid: line.entry_id().into_owned(),
                tool_use_id: block.tool_use_id.get().unwrap_or_default().to_string(),
                chars,
            });
        }
    }
    let mut total: u64 = results.iter().map(|r| r.chars).sum();
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

/// The instruction, the previous summary and the conversation as text.
fn prompt(instruction: &str, previous: Option<&str>, lines: &[&Line]) -> String {
    let mut out = String::from(instruction);
    if let Some(previous) = previous {
        out.push_str("\n\nThe summary of the conversation before this part, to carry forward and update:\n<previous-summary>\n");
        out.push_str(previous);
        out.push_str("\n</previous-summary>");
    }
    out.push_str("\n\n<conversation>\n");
    for line in lines {
        serialize(line, &mut out);
    }
    out.push_str("</conversation>");
    out
}

fn clip(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

fn serialize(line: &Line, out: &mut String) {
    let Some(message) = line.env.message.and_then(parse_message) else { return };
    let role = message.role.get().unwrap_or(line.env.kind());
    match parse_content(message.content) {
        Some(Content::Text(text)) => out.push_str(&format!("[{role}]: {text}\n")),
        Some(Content::Blocks(blocks)) => {
            for block in &blocks {
                if let Some(text) = block_line(role, block) {
                    out.push_str(&text);
                    out.push('\n');
                }
            }
        }
        None => {}
    }
}

fn raw_json(value: Option<&serde_json::value::RawValue>) -> &str {
    value.map_or("", |r| r.get())
}

fn block_line(role: &str, block: &Block) -> Option<String> {
    let raw = raw_json;
    Some(match block.kind.get()? {
        "text" => format!("[{role}]: {}", block.text.get()?),
        "thinking" => return None,
        "tool_use" => format!("[{role} calls {}]: {}", block.name.get().unwrap_or("?"), clip(raw(block.input), PROMPT_TOOL_RESULT_CHARS)),
        "toolCall" => {
            format!("[{role} calls {}]: {}", block.name.get().unwrap_or("?"), clip(raw(block.arguments), PROMPT_TOOL_RESULT_CHARS))
        }
        "tool_result" => {
            let content = match parse_content(block.content) {
                Some(Content::Text(text)) => text.into_owned(),
                Some(Content::Blocks(inner)) => inner.iter().filter_map(|b| b.text.get()).collect::<Vec<_>>().join("\n"),
                None => String::new(),
            };
            format!("[tool result]: {}", clip(&content, PROMPT_TOOL_RESULT_CHARS))
        }
        "image" => format!("[{role}]: [image]"),
        other => format!("[{role}]: [{other}]"),
    })
}

/// A summary written without a model: the requests, the first sentence of each
/// reply, the tools used and the files touched, within `budget_tokens`. The default
/// of every host, so compaction works offline.
pub(crate) fn extractive_summary(loaded: &Loaded, plan: &Plan) -> String {
    let wanted: BTreeMap<&str, ()> = plan.summarize.iter().chain(&plan.turn_prefix).map(|id| (id.as_str(), ())).collect();
    let lines: Vec<&Line> = loaded.lines.iter().filter(|l| wanted.contains_key(l.entry_id().as_ref())).collect();
    let mut requests = Vec::new();
    let mut replies = Vec::new();
    let mut tools: BTreeMap<String, u32> = BTreeMap::new();
    let mut files: Vec<String> = Vec::new();
    for line in &lines {
        let Some(message) = line.env.message.and_then(parse_message) else { continue };
        let role = message.role.get().unwrap_or(line.env.kind());
        match parse_content(message.content) {
            Some(Content::Text(text)) if role == "user" => requests.push(first_sentences(&text, 240)),
            Some(Content::Text(text)) => replies.push(first_sentences(&text, 160)),
            Some(Content::Blocks(blocks)) => {
                for block in &blocks {
                    match block.kind.get() {
                        Some("text") if role == "user" => requests.extend(block.text.get().map(|t| first_sentences(t, 240))),
                        Some("text") => replies.extend(block.text.get().map(|t| first_sentences(t, 160))),
                        Some("tool_use" | "toolCall") => {
                            *tools.entry(block.name.get().unwrap_or("?").to_string()).or_default() += 1;
                            let input =
                                block.input.or(block.arguments).and_then(|r| serde_json::from_str::<serde_json::Value>(r.get()).ok());
                            for key in ["file_path", "path", "notebook_path"] {
                                if let Some(path) = input.as_ref().and_then(|v| v.get(key)).and_then(|v| v.as_str())
                                    && !files.iter().any(|f| f == path)
                                {
                                    files.push(path.to_string());
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    requests.retain(|r| !r.is_empty());
    replies.retain(|r| !r.is_empty());
    let mut out = String::from("Summary of the earlier conversation (extracted without a model).\n");
    if let Some(previous) = &plan.previous_summary {
        out.push_str("\n## Before that\n");
        out.push_str(clip(previous, 2000));
        out.push('\n');
    }
    let section = |out: &mut String, title: &str, items: &[String]| {
        if items.is_empty() {
            return;
        }
        out.push_str(&format!("\n## {title}\n"));
        // The first and the latest matter most when there are many.
        let shown: Vec<&String> =
            if items.len() > 12 { items[..4].iter().chain(&items[items.len() - 8..]).collect() } else { items.iter().collect() };
        for (i, item) in shown.iter().enumerate() {
            if items.len() > 12 && i == 4 {
                out.push_str(&format!("- … {} more …\n", items.len() - 12));
            }
            out.push_str(&format!("- {item}\n"));
        }
    };
    section(&mut out, "What the user asked", &requests);
    section(&mut out, "What the assistant said", &replies);
    let tool_list: Vec<String> = tools.iter().map(|(name, n)| format!("{name} ×{n}")).collect();
    if !tool_list.is_empty() {
        out.push_str(&format!("\n## Tools used\n{}\n", tool_list.join(", ")));
    }
    section(&mut out, "Files touched", &files);
    clip(&out, plan.summary_budget_tokens as usize * 4).to_string()
}

fn first_sentences(text: &str, max: usize) -> String {
    let text = text.trim();
    let end = text.find(". ").map_or(text.len(), |at| at + 1).min(text.find('\n').unwrap_or(text.len()));
    let sentence = clip(&text[..end], max);
    if sentence.len() < text.len() { format!("{}…", sentence.trim_end()) } else { sentence.to_string() }
}

/// The text of a Claude Code compaction summary entry.
pub(crate) fn claude_summary_text(summary: &str) -> String {
    format!("{CLAUDE_SUMMARY_PREFIX}{summary}")
}

/// What Claude Code writes before a compaction summary.
const CLAUDE_SUMMARY_PREFIX: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n";

/// The summary as the model receives it, in each format's wrapping.
pub(crate) fn wrapped_summary(format_is_pi: bool, summary: &str) -> String {
    if format_is_pi { format!("{PI_SUMMARY_PREFIX}{summary}{PI_SUMMARY_SUFFIX}") } else { claude_summary_text(summary) }
}
