//! Stored messages of every dialect read back as canonical (Anthropic) blocks, so a
//! context says which call every result answers, whatever wrote the session: Claude
//! Code's are canonical already; what only pi writes is read in `pi::read`.

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use super::pi::read;
use crate::message::Stored;
use crate::message::calls::Activity;
use crate::message::text::blocks_text;
use crate::scan::{Block, Content, Line, Message, parse_message_content, parse_message_content_unless_result};
use crate::support::json::Raw;
use crate::support::lenient::Str;

/// What the stored lines of one reply say about it, in either dialect, in Anthropic's
/// words: its id, model, usage, why it stopped and the API it came from. Claude Code
/// writes a reply as a line per block, each with the usage reported up to it: the
/// last line's usage and stop reason are the reply's whole. What a converted copy
/// (an export to another dialect) keeps of the reply.
pub(crate) fn recorded_meta(lines: &[&Line]) -> crate::message::Meta {
    let mut meta = crate::message::Meta::default();
    for line in lines {
        let Some(message) = line.env.message.and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok()) else { continue };
        let text = |key: &str| message.get(key).and_then(Value::as_str).map(String::from);
        let pi_api = text("api");
        meta.id = text("id").or_else(|| text("responseId")).or(meta.id);
        meta.model = text("model").or(meta.model);
        meta.stop_reason = text("stop_reason")
            .or_else(|| text("stopReason").and_then(|reason| read::anthropic_stop_reason(&reason)).map(String::from))
            .or(meta.stop_reason);
        meta.usage = line_usage(line).map(|(_, usage)| usage).or(meta.usage);
        meta.api = match pi_api.as_deref() {
            Some(api) if api.starts_with("openai") => Some(crate::message::Provider::Openai),
            Some(api) if api.starts_with("anthropic") => Some(crate::message::Provider::Anthropic),
            Some(_) => meta.api,
            // Claude Code talks to Anthropic's API.
            None if meta.model.is_some() => Some(crate::message::Provider::Anthropic),
            None => meta.api,
        };
    }
    meta
}

/// What a dialect shows the model for a line that is no plain message (pi's: a
/// command run with `!`, an extension's message, a branch summary) as the context
/// reads it; `None` for other lines. Counted and summarised as what the model is sent. `role`: the line's
/// message's, read already.
pub(crate) fn shown_entry_text(line: &Line<'_>, role: Option<&str>) -> Option<String> {
    let shown = if super::is_shown_entry(&line.env) {
        stored(line.env.kind(), Some(Raw::valid(line.raw)))
    } else if matches!(role, Some("bashExecution" | "custom")) {
        stored(line.env.kind(), line.env.message)
    } else {
        return None;
    };
    Some(shown.map(|stored| stored.text.into_owned()).unwrap_or_default())
}

/// The message a line of type `kind` carries, in canonical form; `None` for lines
/// without one.
pub(crate) fn stored<'l>(kind: &str, message: Option<Raw<'l>>) -> Option<Stored<'l>> {
    let raw = message?;
    // pi's entries without a message (the line itself is `raw`), which pi shows the
    // model as user messages.
    match kind {
        "branch_summary" => return read::branch_summary(raw),
        "custom_message" => return read::user_message(raw),
        _ => {}
    }
    let (message, content) = parse_message_content_unless_result(raw)?;
    let role = message.role.get().unwrap_or(kind);
    match role {
        "bashExecution" => return read::bash_execution(raw),
        "custom" => return read::user_message(raw),
        _ => {}
    }
    // Message ids and model names are API identifiers without escapes; an id that has
    // them is not merged, a model that has them is no model a request names (as a reply
    // naming none, its thinking is another model's).
    let borrowed = |field: &Str<'l>| match field.0 {
        Some(Cow::Borrowed(value)) => Some(value),
        _ => None,
    };
    let id = borrowed(&message.id);
    let model = borrowed(&message.model);
    // pi replays no reply that failed or was cut off (`transformMessages`).
    if role == "assistant" && matches!(message.stop_reason, Some("\"error\"" | "\"aborted\"")) {
        return None;
    }
    if !read::wrote(role, &message, content.as_ref()) {
        let (text, only_results) = match content {
            Some(Content::Text(text)) => (text, false),
            Some(Content::Blocks(blocks)) => {
                let only_results = !blocks.is_empty() && blocks.iter().all(|b| b.kind.get() == Some("tool_result"));
                (blocks_text(blocks), only_results)
            }
            None => (Cow::Borrowed(""), false),
        };
        return Some(Stored { role: role.to_string(), blocks: as_blocks(message.content), text, only_results, id, model });
    }
    let (role, blocks, text, only_results) = read::message(role, &message, raw)?;
    Some(Stored { role, blocks: Cow::Owned(blocks), text: Cow::Owned(text), only_results, id, model })
}

/// A content as a JSON array of blocks (a string content becomes one text block),
/// exactly as stored otherwise.
pub(crate) fn as_blocks(content: Option<Raw<'_>>) -> Cow<'_, str> {
    match content {
        Some(raw) if raw.get().starts_with('[') => Cow::Borrowed(raw.get()),
        Some(raw) if raw.get().starts_with('"') => {
            const OPEN: &str = "[{\"type\":\"text\",\"text\":";
            let mut blocks = String::with_capacity(OPEN.len() + raw.get().len() + 2);
            blocks.push_str(OPEN);
            blocks.push_str(raw.get());
            blocks.push_str("}]");
            Cow::Owned(blocks)
        }
        _ => Cow::Borrowed("[]"),
    }
}

/// What a line does to the pending tool calls; `None` for lines that are no message.
pub(crate) fn activity(line: &Line) -> Option<Activity> {
    if !line.env.is_message() {
        return None;
    }
    activity_read(line, line.env.message.and_then(parse_message_content).as_ref())
}

/// [`activity`] of a line whose message is already read with [`parse_message_content`].
pub(crate) fn activity_read(line: &Line, read: Option<&(Message<'_>, Option<Content<'_>>)>) -> Option<Activity> {
    if !line.env.is_message() {
        return None;
    }
    let (message, content) = read?;
    let role = message.role.get().unwrap_or(line.env.kind());
    if role == "toolResult" {
        let answers = message.tool_call_id.get().map(String::from).into_iter().collect();
        return Some(Activity { assistant: false, id: None, calls: Vec::new(), answers, other: false });
    }
    let assistant = role == "assistant";
    let id = message.id.get().filter(|_| assistant).map(String::from);
    let mut activity = Activity { assistant, id, calls: Vec::new(), answers: Vec::new(), other: false };
    match content {
        Some(Content::Blocks(blocks)) => {
            for block in blocks {
                step_block(&mut activity, block);
            }
        }
        Some(Content::Text(_)) => activity.other = true,
        None => {}
    }
    Some(activity)
}

fn step_block(activity: &mut Activity, block: &Block) {
    match block.kind.get() {
        Some("tool_use" | "toolCall") => {
            if let Some(id) = block.id.get() {
                activity.calls.push((id.to_string(), block.name.get().unwrap_or_default().to_string()));
            }
        }
        Some("tool_result") => activity.answers.extend(block.tool_use_id.get().map(String::from)),
        _ => activity.other = true,
    }
}

/// A provider's token usage, in Anthropic's or pi's field names.
#[derive(Default, serde::Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default, rename = "totalTokens")]
    total_tokens: Option<u64>,
    #[serde(default)]
    input: Option<u64>,
    #[serde(default)]
    output: Option<u64>,
    #[serde(default, rename = "cacheRead")]
    cache_read: Option<u64>,
    #[serde(default, rename = "cacheWrite")]
    cache_write: Option<u64>,
}

impl WireUsage {
    /// The usage in one shape, whichever names the provider wrote.
    fn usage(&self) -> crate::message::Usage {
        let either = |a: Option<u64>, b: Option<u64>| a.unwrap_or(0).saturating_add(b.unwrap_or(0));
        crate::message::Usage {
            input: either(self.input_tokens, self.input),
            output: either(self.output_tokens, self.output),
            cache_read: either(self.cache_read_input_tokens, self.cache_read),
            cache_creation: either(self.cache_creation_input_tokens, self.cache_write),
        }
    }

    /// The context the response saw plus what it produced: everything a next request
    /// would carry.
    fn context_tokens(&self) -> u64 {
        if let Some(total) = self.total_tokens.filter(|&t| t > 0) {
            return total;
        }
        [
            self.input_tokens,
            self.output_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
            self.input,
            self.output,
            self.cache_read,
            self.cache_write,
        ]
        .iter()
        .fold(0, |sum, n| sum.saturating_add(n.unwrap_or(0)))
    }
}

fn wire_usage(line: &Line) -> Option<WireUsage> {
    let message = line.env.message.and_then(crate::scan::parse_message)?;
    serde_json::from_str(message.usage?.get()).ok()
}

/// The real context size an assistant entry reported, if it has `message.usage`.
pub(crate) fn reported_usage(line: &Line) -> Option<u64> {
    Some(wire_usage(line)?.context_tokens()).filter(|&t| t > 0)
}

/// What a reply's entry says it cost so far, with the reply's `message.id` (Claude Code
/// writes a reply as a line per block, each with the usage reported up to it: count a
/// reply once per id, at the most it reached).
pub(crate) fn line_usage<'l>(line: &'l Line) -> Option<(Option<alloc::borrow::Cow<'l, str>>, crate::message::Usage)> {
    let message = line.env.message.and_then(crate::scan::parse_message)?;
    let usage: WireUsage = serde_json::from_str(message.usage?.get()).ok()?;
    Some((message.id.0, usage.usage()))
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;

    use super::*;

    /// A message's text for people: nothing for thinking alone, a lone text block's text
    /// (borrowed from the line, decoded when it has escapes), a lone block of another kind
    /// as its marker, several one a line.
    #[test]
    fn a_messages_text_for_people() {
        let text = |content: &str| {
            let message = format!(r#"{{"role":"assistant","content":{content}}}"#);
            let stored = stored("assistant", Some(Raw::valid(&message))).expect("a message");
            let borrowed = matches!(stored.text, Cow::Borrowed(_));
            (stored.text.into_owned(), borrowed)
        };
        let thinking = r#"{"type":"thinking","thinking":"hm","signature":"s"}"#;
        let call = r#"{"type":"tool_use","id":"t1","name":"ls","input":{}}"#;
        assert_eq!(text(&format!("[{thinking}]")), (String::new(), true));
        assert_eq!(text(r#"[{"type":"text","text":"plain"}]"#), ("plain".into(), true));
        assert_eq!(text(r#"[{"type":"text","text":"say \"hi\""}]"#), ("say \"hi\"".into(), false));
        assert_eq!(text(&format!("[{thinking},{call}]")), ("[tool_use ls t1]".into(), false));
        assert_eq!(text(r#"[{"type":"image","source":{}}]"#), ("[image]".into(), false));
        assert_eq!(
            text(&format!(
                r#"[{thinking},{{"type":"text","text":"I'll look."}},{call},{{"type":"tool_result","tool_use_id":"t0","content":"x"}}]"#
            )),
            ("I'll look.\n[tool_use ls t1]\n[tool_result t0]".into(), false)
        );
    }

    /// A `toolResult` whose role comes first (its content skipped when the line is read)
    /// resumes as the same message with its role after the content (read in full).
    #[test]
    fn a_tool_result_reads_the_same_whether_its_role_comes_first_or_last() {
        let fields = [r#""toolCallId":"call_1""#, r#""content":[{"type":"text","text":"line\none"}]"#, r#""isError":true"#];
        let role_first = format!(r#"{{"role":"toolResult",{}}}"#, fields.join(","));
        let role_last = format!(r#"{{{},"role":"toolResult"}}"#, fields.join(","));
        let read = |json: &str| {
            stored("message", Some(Raw::valid(json))).map(|s| (s.role, s.blocks.into_owned(), s.text.into_owned(), s.only_results))
        };
        let first = read(&role_first).unwrap();
        assert_eq!(
            first,
            (
                String::from("user"),
                String::from(
                    r#"[{"content":[{"text":"line\none","type":"text"}],"is_error":true,"tool_use_id":"call_1","type":"tool_result"}]"#
                ),
                String::from("[tool_result call_1]"),
                true
            )
        );
        assert_eq!(read(&role_last), Some(first));
    }
}
