//! A session as a readable Markdown transcript: each message of the conversation it
//! resumes to under its speaker and time, tool calls and results as short markers.

use alloc::format;
use alloc::string::String;

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
        out.push_str(message.text.trim_end());
        out.push('\n');
    }
    out
}
