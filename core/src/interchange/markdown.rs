//! A session as a readable Markdown transcript: each message of the conversation it
//! resumes to under its speaker and time, its text as written, its thinking quoted, and
//! each tool call's input and each result's output in a fenced block.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use crate::transcript::Context;

/// `stamps` are the messages' times, in order.
pub(crate) fn render(id: &str, context: &Context, stamps: &[Option<String>]) -> String {
    let mut out = format!("# Session {id}\n");
    if context.compacted {
        out.push_str("\nEarlier history was compacted into the summary below.\n");
    }
    for (i, message) in context.messages.iter().enumerate() {
        let speaker = match (message.is_compact_summary, message.role.as_str()) {
            (true, _) => "Summary",
            (_, "assistant") => "Assistant",
            _ => "User",
        };
        match stamps.get(i).and_then(Option::as_deref) {
            Some(at) => out.push_str(&format!("\n## {speaker} · {at}\n\n")),
            None => out.push_str(&format!("\n## {speaker}\n\n")),
        }
        match serde_json::from_str::<Value>(&message.content) {
            Ok(Value::Array(blocks)) => {
                let parts: Vec<String> = blocks.iter().map(block).filter(|part| !part.is_empty()).collect();
                out.push_str(&parts.join("\n\n"));
            }
            _ => out.push_str(message.text.trim_end()),
        }
        out.push('\n');
    }
    out
}

/// One content block as Markdown.
fn block(block: &Value) -> String {
    let text = |key: &str| block[key].as_str().unwrap_or_default();
    match text("type") {
        "text" => text("text").trim_end().to_string(),
        "thinking" => quoted(&format!("*Thinking:* {}", text("thinking").trim_end())),
        "redacted_thinking" => "> *Thinking (redacted)*".into(),
        "tool_use" => {
            let input = serde_json::to_string_pretty(&block["input"]).unwrap_or_default();
            format!("**Tool call** `{}` (`{}`):\n\n{}", text("name"), text("id"), fenced(&input, "json"))
        }
        "tool_result" => {
            let failed = if block["is_error"] == Value::Bool(true) { ", failed" } else { "" };
            let output = match &block["content"] {
                Value::String(output) => output.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .map(|part| match part["text"].as_str() {
                        Some(text) if part["type"] == "text" => text.to_string(),
                        _ => crate::message::marker(part["type"].as_str()),
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            format!("**Result** of `{}`{failed}:\n\n{}", text("tool_use_id"), fenced(output.trim_end(), ""))
        }
        other => crate::message::marker(Some(other).filter(|kind| !kind.is_empty())),
    }
}

/// `text` as a blockquote, line by line.
fn quoted(text: &str) -> String {
    text.lines().map(|line| format!("> {line}")).collect::<Vec<_>>().join("\n")
}

/// `text` in a fenced code block whose fence is longer than any run of backticks in it.
fn fenced(text: &str, language: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{language}\n{text}\n{fence}")
}
