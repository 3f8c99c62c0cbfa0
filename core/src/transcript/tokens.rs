//! Token accounting: estimates per entry, calibrated by the provider's own `usage`
//! when the transcript has it, and the context windows of common models.

use alloc::collections::BTreeSet;
use alloc::string::String;

use crate::support::json::{self, Raw};

use crate::dialect::canonical::reported_usage;
use crate::scan::{Block, Content, Line, parse_content, parse_message, parse_message_content};
use crate::support::saturating_sum;

/// What an image costs, whatever its size (pi's 4800 characters).
pub const IMAGE_TOKENS: u64 = 1200;
/// Characters per token of the estimate (pi's and Claude Code's rule of thumb).
const CHARS_PER_TOKEN: u64 = 4;

/// The context window assumed when the model is unknown.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;

/// The context window of `model`, by the family its name names; `None` for a model
/// the registry doesn't know (use [`DEFAULT_CONTEXT_WINDOW`] or an override then).
pub fn context_window(model: &str) -> Option<u64> {
    let m = String::from(model).to_ascii_lowercase();
    let has = |s: &str| m.contains(s);
    let window = if has("claude") {
        if has("[1m]") || has("-1m") || has("1m-") { 1_000_000 } else { 200_000 }
    } else if has("gpt-4.1") {
        1_047_576
    } else if has("gpt-4o") || has("gpt-4-turbo") || has("o1") || has("o3") || has("o4") {
        128_000
    } else if has("gpt-5") {
        400_000
    } else if has("gemini-1.5-pro") {
        2_097_152
    } else if has("gemini") {
        1_048_576
    } else if has("llama3.1") || has("llama3.2") || has("llama3.3") || has("llama-3.1") || has("llama-3.3") || has("llama4") {
        131_072
    } else if has("llama3") || has("llama-3") {
        8_192
    } else if has("qwen3") {
        40_960
    } else if has("qwen") || has("mistral") || has("mixtral") {
        32_768
    } else if has("deepseek") {
        131_072
    } else {
        return None;
    };
    Some(window)
}

fn chars_to_tokens(chars: u64) -> u64 {
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// Estimated tokens of plain text.
pub fn text_tokens(text: &str) -> u64 {
    chars_to_tokens(text.chars().count() as u64)
}

/// What a cleared tool result still costs: the note that replaced it.
pub const CLEARED_RESULT_TOKENS: u64 = 8;

/// Estimated tokens of one entry's message: text, thinking, tool names and inputs,
/// tool results (those in `cleared` at the cost of their stub); images at a fixed
/// cost. pi's commands run with `!` and its entries the model is shown without a
/// message (an extension's, a branch summary) cost what pi shows; other entries
/// without a message cost nothing.
pub(crate) fn estimate(line: &Line, cleared: &BTreeSet<String>) -> u64 {
    let shown = |role| crate::dialect::shown_entry_text(line, role).map_or(0, |text| text_tokens(&text));
    if crate::dialect::is_shown_entry(&line.env) {
        return shown(None);
    }
    let Some((message, read)) = line.env.message.and_then(parse_message_content) else { return 0 };
    match message.role.get() {
        // Its output is no `content`.
        Some(role @ "bashExecution") => shown(Some(role)),
        _ => read_tokens(message.content, read, cleared),
    }
}

pub(crate) fn content_tokens(content: Option<Raw<'_>>, cleared: &BTreeSet<String>) -> u64 {
    // A string (a tool's output) is counted where it lies, not decoded to be counted.
    match content.and_then(|raw| json::string_chars(raw.get())) {
        Some(chars) => chars_to_tokens(chars as u64),
        None => read_tokens(content, parse_content(content), cleared),
    }
}

/// [`content_tokens`] of a content already read.
fn read_tokens(content: Option<Raw<'_>>, read: Option<Content<'_>>, cleared: &BTreeSet<String>) -> u64 {
    match read {
        Some(Content::Text(text)) => chars_to_tokens(text.chars().count() as u64),
        Some(Content::Blocks(blocks)) => saturating_sum(blocks.iter().map(|b| block_tokens(b, cleared))),
        // Content of an unexpected shape: its JSON size is the best guess.
        None => content.map_or(0, |raw| chars_to_tokens(raw.get().len() as u64)),
    }
}

fn block_tokens(block: &Block, cleared: &BTreeSet<String>) -> u64 {
    let chars = |s: Option<&str>| s.map_or(0, |s| s.chars().count() as u64);
    let raw = |r: Option<Raw>| r.map_or(0, |r| r.get().len() as u64);
    match block.kind.get() {
        Some("image") => IMAGE_TOKENS,
        Some("text") => chars_to_tokens(chars(block.text.get())),
        Some("thinking") => chars_to_tokens(chars(block.thinking.get())),
        Some("tool_use") => chars_to_tokens(chars(block.name.get()).saturating_add(raw(block.input))),
        Some("toolCall") => chars_to_tokens(chars(block.name.get()).saturating_add(raw(block.arguments))),
        Some("tool_result") if block.tool_use_id.get().is_some_and(|id| cleared.contains(id)) => CLEARED_RESULT_TOKENS,
        Some("tool_result") => content_tokens(block.content, cleared),
        _ => chars_to_tokens(chars(block.text.get())),
    }
}

/// Tokens of a context made of `lines` (in order): the last provider-reported usage
/// among them, plus estimates of what came after it; estimates alone without usage.
/// Claude Code writes a response as a line per block, each with the usage reported up
/// to it; the last report is the response's whole.
/// The results of calls a reply ran while it streamed sit between its lines, after the
/// request its usage reports on: they are counted too.
pub(crate) fn context_tokens<'a>(lines: impl DoubleEndedIterator<Item = &'a Line<'a>>, cleared: &BTreeSet<String>) -> u64 {
    let mut after = 0u64;
    let mut earlier = lines.rev();
    while let Some(line) = earlier.next() {
        let Some(reported) = reported_usage(line) else {
            after = after.saturating_add(estimate(line, cleared));
            continue;
        };
        let Some(reply) = reply_id(line) else { return reported.saturating_add(after) };
        // What lies between two lines of the reply; counted once an earlier line of it
        // shows it is inside.
        let mut between = 0u64;
        for line in earlier {
            let activity = crate::dialect::canonical::activity(line);
            if !crate::message::calls::within_reply(activity.as_ref(), Some(&reply)) {
                break;
            }
            if activity.is_some_and(|a| a.assistant) {
                after = after.saturating_add(core::mem::take(&mut between));
            } else {
                between = between.saturating_add(estimate(line, cleared));
            }
        }
        return reported.saturating_add(after);
    }
    after
}

/// The `message.id` of an assistant line.
fn reply_id<'l>(line: &'l Line) -> Option<alloc::borrow::Cow<'l, str>> {
    if line.env.kind() != "assistant" {
        return None;
    }
    line.env.message.and_then(parse_message)?.id.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_knows_the_common_families() {
        assert_eq!(context_window("claude-sonnet-4-5-20250929"), Some(200_000));
        assert_eq!(context_window("claude-sonnet-4-5[1m]"), Some(1_000_000));
        assert_eq!(context_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(context_window("gpt-4.1"), Some(1_047_576));
        assert_eq!(context_window("gemini-2.0-flash"), Some(1_048_576));
        assert_eq!(context_window("llama3.1:8b"), Some(131_072));
        assert_eq!(context_window("qwen2.5-coder:7b"), Some(32_768));
        assert_eq!(context_window("my-own-model"), None);
    }
}
