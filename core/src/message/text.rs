//! A message's text for people: its text blocks as they are, tool calls and results
//! as short markers (`[tool_use Bash toolu_1]`), thinking as nothing. A context's
//! messages read so, and so does every command that shows a conversation.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use crate::scan::Block;

/// The blocks as text for people: text as it is, other blocks as short markers, one
/// per line. A lone text block's text is borrowed; several are written into one string
/// of their exact length (a reply is read for every message of a context).
pub(crate) fn blocks_text(blocks: Vec<Block<'_>>) -> Cow<'_, str> {
    let (count, len) = blocks.iter().filter_map(block_shown).fold((0usize, 0usize), |(count, len), part| (count + 1, len + part.len()));
    match count {
        0 => Cow::Borrowed(""),
        1 => {
            let at = blocks.iter().position(|block| block_shown(block).is_some()).unwrap_or_default();
            match blocks.get(at).and_then(block_shown) {
                // Moved out of its block: borrowed from the line unless it had escapes.
                Some(Shown::Text(_)) => blocks.into_iter().nth(at).and_then(|block| block.text.0).unwrap_or_default(),
                marker => Cow::Owned(marker.map(|part| part.owned()).unwrap_or_default()),
            }
        }
        _ => {
            let mut joined = String::with_capacity(len + count - 1);
            for (n, part) in blocks.iter().filter_map(block_shown).enumerate() {
                if n > 0 {
                    joined.push('\n');
                }
                part.push_to(&mut joined);
            }
            Cow::Owned(joined)
        }
    }
}

/// What a read block shows people (see [`shown`]).
fn block_shown<'b>(block: &'b Block<'_>) -> Option<Shown<'b>> {
    shown(block.kind.get()?, block.text.get(), block.name.get(), block.id.get(), block.tool_use_id.get())
}

/// What a message's content blocks show people, a line each: the text, a marker naming
/// each tool call and result (`[tool_use Bash toolu_1]`, `[tool_result toolu_1]`) and
/// any other block by its type; thinking shows as nothing. A context's messages read
/// so, and so does every command that shows a conversation.
pub fn shown_text(blocks: &Value) -> String {
    blocks.as_array().map(|b| b.iter().filter_map(value_text).collect::<Vec<_>>().join("\n")).unwrap_or_default()
}

pub(crate) fn value_text(block: &Value) -> Option<String> {
    block_marker(
        block["type"].as_str()?,
        block["text"].as_str(),
        block["name"].as_str(),
        block["id"].as_str(),
        block["tool_use_id"].as_str(),
    )
}

/// What a block shows people: its text, or a marker of its kind and up to two of its
/// ids (`[tool_use Bash toolu_1]`); `None` for a block shown as nothing (thinking).
fn shown<'a>(
    kind: &'a str,
    text: Option<&'a str>,
    name: Option<&'a str>,
    id: Option<&'a str>,
    tool_use_id: Option<&'a str>,
) -> Option<Shown<'a>> {
    match kind {
        "text" => text.map(Shown::Text),
        // pi's stored calls are `toolCall` blocks with the same fields.
        "tool_use" | "toolCall" => Some(Shown::Marker(["tool_use", name.unwrap_or("?"), id.unwrap_or("?")], 3)),
        "tool_result" => Some(Shown::Marker(["tool_result", tool_use_id.unwrap_or("?"), ""], 2)),
        "thinking" | "redacted_thinking" => None,
        other => Some(Shown::Marker([other, "", ""], 1)),
    }
}

pub(crate) fn block_marker(
    kind: &str,
    text: Option<&str>,
    name: Option<&str>,
    id: Option<&str>,
    tool_use_id: Option<&str>,
) -> Option<String> {
    shown(kind, text, name, id, tool_use_id).map(|part| part.owned())
}

/// A block's part of a message's text for people (see [`shown`]).
enum Shown<'a> {
    Text(&'a str),
    /// The marker's words: the first `.1` of them.
    Marker([&'a str; 3], usize),
}

impl Shown<'_> {
    fn len(&self) -> usize {
        match self {
            Shown::Text(text) => text.len(),
            Shown::Marker(words, count) => words[..*count].iter().map(|word| word.len() + 1).sum::<usize>() + 1,
        }
    }

    fn owned(&self) -> String {
        let mut text = String::with_capacity(self.len());
        self.push_to(&mut text);
        text
    }

    /// Written by hand: `format!` costs more than the rest of a message's reading.
    fn push_to(&self, out: &mut String) {
        match self {
            Shown::Text(text) => out.push_str(text),
            Shown::Marker(words, count) => {
                out.push('[');
                for (n, word) in words[..*count].iter().enumerate() {
                    if n > 0 {
                        out.push(' ');
                    }
                    out.push_str(word);
                }
                out.push(']');
            }
        }
    }
}
