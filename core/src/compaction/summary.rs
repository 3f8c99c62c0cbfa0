//! The offline summariser: a summary written without a model, so compaction works
//! on every host with no network.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::Plan;
use super::prompt::clip;
use crate::scan::{Content, Line, parse_message_content};
use crate::transcript::thread::Loaded;

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
        let parsed = line.env.message.and_then(parse_message_content);
        if let Some(shown) = crate::dialect::shown_entry_text(line, parsed.as_ref().and_then(|(m, _)| m.role.get())) {
            // What pi shows the model as the user's: a command's output, an extension's
            // message, a branch's summary (its text on the lines after pi's preamble).
            let flat: Vec<&str> = shown.split_whitespace().collect();
            requests.push(first_sentences(&flat.join(" "), 240));
            continue;
        }
        let Some((message, read)) = parsed else { continue };
        let role = message.role.get().unwrap_or(line.env.kind());
        // pi's tool results are no one's words, as Claude Code's `tool_result` blocks.
        if role == "toolResult" {
            continue;
        }
        match read {
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
