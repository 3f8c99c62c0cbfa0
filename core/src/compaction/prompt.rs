//! The summariser's prompt: the conversation as text, bounded so the request itself
//! fits the summariser's window.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::scan::{Block, Content, Line, parse_content, parse_message_content};

/// Tool results are cut to this many characters in the prompt (pi's rule).
const PROMPT_TOOL_RESULT_CHARS: usize = 2000;

/// A piece is never smaller than this, so a tiny window still makes progress.
pub(crate) const MIN_PIECE_TOKENS: u64 = 1024;

/// The instruction, the summary so far and a piece of the conversation as one prompt.
pub(crate) fn assemble(instruction: &str, previous: Option<&str>, piece: &str) -> String {
    let mut out = String::with_capacity(instruction.len() + previous.map_or(0, str::len) + piece.len() + 160);
    out.push_str(instruction);
    if let Some(previous) = previous {
        out.push_str("\n\nThe summary of the conversation before this part, to carry forward and update:\n<previous-summary>\n");
        out.push_str(previous);
        out.push_str("\n</previous-summary>");
    }
    out.push_str("\n\n<conversation>\n");
    out.push_str(piece);
    out.push_str("</conversation>");
    out
}

/// The conversation as text, in pieces of at most `piece_tokens` estimated tokens
/// each (a message longer than that is split across pieces). Always at least one
/// piece.
pub(crate) fn pieces(lines: &[&Line], piece_tokens: u64) -> Vec<String> {
    let max_chars = usize::try_from(piece_tokens.saturating_mul(4)).unwrap_or(usize::MAX).max(1);
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut current_chars = 0usize;
    let mut text = String::new();
    for line in lines {
        text.clear();
        serialize(line, &mut text);
        let mut rest = text.as_str();
        let mut chars = rest.chars().count();
        while chars > 0 {
            let room = max_chars.saturating_sub(current_chars);
            if chars <= room {
                current.push_str(rest);
                current_chars += chars;
                break;
            }
            if current_chars > 0 && (chars <= max_chars || room == 0) {
                // The message fits a piece of its own, or this piece is full: start one.
                pieces.push(core::mem::take(&mut current));
                current_chars = 0;
                continue;
            }
            // Longer than a whole piece: fill this one and carry the rest on.
            let head = clip(rest, room);
            current.push_str(head);
            rest = &rest[head.len()..];
            chars -= room;
            pieces.push(core::mem::take(&mut current));
            current_chars = 0;
        }
    }
    if !current.is_empty() || pieces.is_empty() {
        pieces.push(current);
    }
    pieces
}

pub(crate) fn clip(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

fn serialize(line: &Line, out: &mut String) {
    let parsed = line.env.message.and_then(parse_message_content);
    let role = parsed.as_ref().and_then(|(message, _)| message.role.get());
    if let Some(text) = crate::dialect::shown_entry_text(line, role) {
        if !text.is_empty() {
            out.push_str(&format!("[user]: {text}\n"));
        }
        return;
    }
    let Some((message, read)) = parsed else { return };
    let role = message.role.get().unwrap_or(line.env.kind());
    // pi's tool result is a message of its own: shown as Claude Code's result block is.
    if role == "toolResult" {
        out.push_str(&result_line(read));
        out.push('\n');
        return;
    }
    match read {
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

fn raw_json(value: Option<crate::support::json::Raw<'_>>) -> &str {
    value.map_or("", |r| r.get())
}

/// A tool's result, its text clipped.
fn result_line(content: Option<Content<'_>>) -> String {
    let content = match content {
        Some(Content::Text(text)) => text.into_owned(),
        Some(Content::Blocks(inner)) => inner.iter().filter_map(|b| b.text.get()).collect::<Vec<_>>().join("\n"),
        None => String::new(),
    };
    format!("[tool result]: {}", clip(&content, PROMPT_TOOL_RESULT_CHARS))
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
        "tool_result" => result_line(parse_content(block.content)),
        "image" => format!("[{role}]: [image]"),
        other => format!("[{role}]: [{other}]"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{decode, scan_part};
    use alloc::string::ToString;

    #[test]
    fn pieces_stay_within_their_size_and_lose_nothing() {
        let mut text = String::new();
        for (i, len) in [10, 5000, 30, 9000, 1, 4095].into_iter().enumerate() {
            text += &serde_json::json!({"type": "user", "uuid": format!("u{i}"), "message": {"role": "user", "content": "é".repeat(len)}})
                .to_string();
            text.push('\n');
        }
        let decoded = decode(text.as_bytes());
        let scan = scan_part(1, text.as_bytes(), &decoded);
        let lines: Vec<&Line> = scan.lines.iter().collect();
        let mut whole = String::new();
        for line in &lines {
            serialize(line, &mut whole);
        }
        for piece_tokens in [1, 2, 1024, 100_000] {
            let pieces = pieces(&lines, piece_tokens);
            assert!(pieces.iter().all(|p| p.chars().count() <= (piece_tokens * 4) as usize), "{piece_tokens}");
            assert_eq!(pieces.concat(), whole, "{piece_tokens}: every character, in order");
        }
    }
}
