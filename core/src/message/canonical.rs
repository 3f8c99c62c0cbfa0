//! Stored messages of every dialect read back as canonical (Anthropic) blocks: pi's
//! `toolCall`, `thinkingSignature`, `{data, mimeType}` images and `toolResult` messages
//! become `tool_use`, `signature`, base64 `source` and user `tool_result` blocks, so a
//! context says which call every result answers, whatever wrote the session.

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Value, json};

use super::calls::Activity;
use crate::scan::{Block, Content, Line, Message, parse_message_content, parse_message_content_unless_result};
use crate::support::json::{self, Raw};
use crate::support::lenient::{Flag, Str};

/// How pi shows a `branch_summary` (where the conversation came back from a branch).
pub(crate) const PI_BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
pub(crate) const PI_BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// pi's stop reason in Anthropic's words, the inverse of pi.rs's `stop_reason`; `None` for a
/// reply that failed or was aborted, which has no Anthropic name.
pub(crate) fn anthropic_stop_reason(reason: &str) -> Option<&'static str> {
    match reason {
        "toolUse" => Some("tool_use"),
        "length" => Some("max_tokens"),
        "stop" => Some("end_turn"),
        _ => None,
    }
}

/// A stored message: who speaks, its blocks as a JSON array, and what a reader needs
/// of them, from one parse of the line.
pub(crate) struct Stored<'l> {
    pub role: String,
    /// Borrowed from the line when stored as blocks.
    pub blocks: Cow<'l, str>,
    /// Readable text: text blocks, with tool calls and results as short markers.
    /// Borrowed from the line when it is one string without escapes.
    pub text: Cow<'l, str>,
    /// Every block is a tool result.
    pub only_results: bool,
    /// `message.id` (Claude Code's split lines of one reply share it).
    pub id: Option<&'l str>,
    /// The model a reply came from.
    pub model: Option<&'l str>,
}

/// What the stored lines of one reply say about it, in either dialect, in Anthropic's
/// words: its id, model, usage, why it stopped and the API it came from. Claude Code
/// writes a reply as a line per block, each with the usage reported up to it: the
/// last line's usage and stop reason are the reply's whole. What a converted copy
/// (an export to another dialect) keeps of the reply.
pub(crate) fn recorded_meta(lines: &[&Line]) -> super::Meta {
    let mut meta = super::Meta::default();
    for line in lines {
        let Some(message) = line.env.message.and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok()) else { continue };
        let text = |key: &str| message.get(key).and_then(Value::as_str).map(String::from);
        let pi_api = text("api");
        meta.id = text("id").or_else(|| text("responseId")).or(meta.id);
        meta.model = text("model").or(meta.model);
        meta.stop_reason = text("stop_reason")
            .or_else(|| text("stopReason").and_then(|reason| anthropic_stop_reason(&reason)).map(String::from))
            .or(meta.stop_reason);
        meta.usage = line_usage(line).map(|(_, usage)| usage).or(meta.usage);
        meta.api = match pi_api.as_deref() {
            Some(api) if api.starts_with("openai") => Some(super::Provider::Openai),
            Some(api) if api.starts_with("anthropic") => Some(super::Provider::Anthropic),
            Some(_) => meta.api,
            // Claude Code talks to Anthropic's API.
            None if meta.model.is_some() => Some(super::Provider::Anthropic),
            None => meta.api,
        };
    }
    meta
}

/// A block only pi writes: its conversion is needed.
fn is_pi_block(block: &Block) -> bool {
    match block.kind.get() {
        Some("toolCall") => true,
        Some("thinking") => block.thinking_signature.get().is_some(),
        Some("image") => block.mime_type.get().is_some(),
        _ => false,
    }
}

/// The message a line of type `kind` carries, in canonical form; `None` for lines
/// without one.
pub(crate) fn stored<'l>(kind: &str, message: Option<Raw<'l>>) -> Option<Stored<'l>> {
    let raw = message?;
    // pi's entries without a message (the line itself is `raw`), which pi shows the
    // model as user messages.
    match kind {
        "branch_summary" => return pi_branch_summary(raw),
        "custom_message" => return pi_user_message(raw),
        _ => {}
    }
    let (message, content) = parse_message_content_unless_result(raw)?;
    let role = message.role.get().unwrap_or(kind);
    match role {
        "bashExecution" => return pi_bash_execution(raw),
        "custom" => return pi_user_message(raw),
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
    // A pi reply names its API; its blocks may carry that API's fields (`textSignature`).
    let pi = role == "toolResult"
        || message.api.get().is_some()
        || matches!(&content, Some(Content::Blocks(blocks)) if blocks.iter().any(is_pi_block));
    if !pi {
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
    let (role, blocks, text, only_results) = pi_stored(role, &message).or_else(|| pi_stored_by_value(role, raw))?;
    Some(Stored { role, blocks: Cow::Owned(blocks), text: Cow::Owned(text), only_results, id, model })
}

/// Whether a pi reply's thinking signatures are Anthropic's, which the Anthropic API
/// checks: those of a reply from another API (OpenAI's reasoning items, Gemini's
/// thought signatures) are not kept, nor its redacted thinking, opaque to any other.
/// A reply without an API (or Mneme's own, given without its model) keeps them.
fn signed_by_anthropic(api: Option<&str>) -> bool {
    api.is_none_or(|api| api == "mneme" || api.starts_with("anthropic") || api.starts_with("bedrock"))
}

/// What pi shows the model for a line that is no plain message — a command run with
/// `!`, an extension's message, a branch summary — as the context reads it; `None` for
/// other lines. Counted and summarised as what the model is sent. `role`: the line's
/// message's, read already.
pub(crate) fn pi_shown_text(line: &Line<'_>, role: Option<&str>) -> Option<String> {
    let shown = if line.env.is_pi_context_entry() {
        stored(line.env.kind(), Some(Raw::valid(line.raw)))
    } else if matches!(role, Some("bashExecution" | "custom")) {
        stored(line.env.kind(), line.env.message)
    } else {
        return None;
    };
    Some(shown.map(|stored| stored.text.into_owned()).unwrap_or_default())
}

/// A pi message (or entry) whose `content` pi sends the model as a user message: an
/// extension's `custom` message or `custom_message` entry.
fn pi_user_message(raw: Raw<'_>) -> Option<Stored<'_>> {
    let (message, _) = parse_message_content_unless_result(raw)?;
    let (_, blocks, text, _) = pi_stored("user", &message).or_else(|| pi_stored_by_value("user", raw))?;
    Some(Stored { role: "user".into(), blocks: Cow::Owned(blocks), text: Cow::Owned(text), only_results: false, id: None, model: None })
}

/// A user message of one text block, as a pi entry without blocks of its own shows.
fn pi_text(text: String) -> Option<Stored<'static>> {
    let blocks = serde_json::to_string(&[json!({ "type": "text", "text": text })]).ok()?;
    Some(Stored { role: "user".into(), blocks: Cow::Owned(blocks), text: Cow::Owned(text), only_results: false, id: None, model: None })
}

/// A `branch_summary` entry as pi shows it.
fn pi_branch_summary(line: Raw<'_>) -> Option<Stored<'static>> {
    #[derive(serde::Deserialize)]
    struct Entry<'a> {
        #[serde(default, borrow)]
        summary: Str<'a>,
    }
    let entry: Entry = serde_json::from_str(line.get()).ok()?;
    let summary = entry.summary.get()?;
    pi_text(alloc::format!("{PI_BRANCH_SUMMARY_PREFIX}{summary}{PI_BRANCH_SUMMARY_SUFFIX}"))
}

/// A command the user ran with pi's `!` as pi shows it (`bashExecutionToText`); `None`
/// for one run with `!!`, which pi keeps out of the context.
fn pi_bash_execution(message: Raw<'_>) -> Option<Stored<'static>> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Run<'a> {
        #[serde(default, borrow)]
        command: Str<'a>,
        #[serde(default, borrow)]
        output: Str<'a>,
        #[serde(default)]
        exit_code: Option<Value>,
        #[serde(default)]
        cancelled: Flag,
        #[serde(default)]
        truncated: Flag,
        #[serde(default, borrow)]
        full_output_path: Str<'a>,
        #[serde(default)]
        exclude_from_context: Flag,
    }
    let run: Run = serde_json::from_str(message.get()).ok()?;
    if run.exclude_from_context.0 {
        return None;
    }
    let mut text = alloc::format!("Ran `{}`\n", run.command.get().unwrap_or_default());
    match run.output.get().filter(|output| !output.is_empty()) {
        Some(output) => text.push_str(&alloc::format!("```\n{output}\n```")),
        None => text.push_str("(no output)"),
    }
    let code = run.exit_code.as_ref().and_then(Value::as_i64).filter(|&code| code != 0);
    if run.cancelled.0 {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = code {
        text.push_str(&alloc::format!("\n\nCommand exited with code {code}"));
    }
    if let Some(path) = run.full_output_path.get().filter(|path| run.truncated.0 && !path.is_empty()) {
        text.push_str(&alloc::format!("\n\n[Output truncated. Full output: {path}]"));
    }
    pi_text(text)
}

/// [`pi_stored`] through a `Value` of the whole message: for what it does not read.
fn pi_stored_by_value(role: &str, raw: Raw<'_>) -> Option<(String, String, String, bool)> {
    let value: Value = serde_json::from_str(raw.get()).ok()?;
    let signed = signed_by_anthropic(value["api"].as_str());
    let (role, blocks) = if role == "toolResult" {
        let mut result = json!({
            "type": "tool_result",
            "tool_use_id": value["toolCallId"].as_str().unwrap_or_default(),
            "content": pi_blocks(&value["content"], true),
        });
        if value["isError"] == Value::Bool(true) {
            result["is_error"] = Value::Bool(true);
        }
        ("user".to_string(), Value::Array(alloc::vec![result]))
    } else {
        (role.to_string(), pi_blocks(&value["content"], signed))
    };
    let text = shown_text(&blocks);
    let only_results = role == "user" && blocks.as_array().is_some_and(|b| b.iter().all(|b| b["type"] == "tool_result"));
    Some((role, blocks.to_string(), text, only_results))
}

/// A pi message in canonical form read by structure: the role, the blocks as JSON, the
/// text for people and whether it holds only tool results, exactly as [`stored`] gets
/// them through a `Value` (keys in `serde_json`'s order, strings escaped as it escapes
/// them) without building one of the whole message: a tool's output is decoded once
/// instead of becoming a tree. `None` for what it does not read (a field of an
/// unexpected type, a repeated key), which the `Value` then reads. (A block's field
/// that it skips may nest deeper than `serde_json` reads a `Value`: such a message is
/// kept here, where the `Value` alone dropped it.)
fn pi_stored(role: &str, message: &Message<'_>) -> Option<(String, String, String, bool)> {
    // Room for what the conversion adds to the content (a result's wrapper and its call's
    // id, a string content's block): a `String` that outgrows it doubles, and a
    // context keeps every message's blocks.
    let added = 96 + message.tool_call_id.get().map_or(0, str::len);
    let mut blocks = String::with_capacity(message.content.map_or(2, |c| c.get().len()) + added);
    if role != "toolResult" {
        let mut texts = Vec::new();
        let signed = signed_by_anthropic(message.api.get());
        let only_results = pi_blocks_by_structure(message.content, &mut blocks, Some(&mut texts), signed)?;
        return Some((role.to_string(), blocks, texts.join("\n"), role == "user" && only_results));
    }
    let tool_use_id = message.tool_call_id.get().unwrap_or_default();
    blocks.push_str("[{\"content\":");
    pi_blocks_by_structure(message.content, &mut blocks, None, true)?;
    if message.is_error == Some("true") {
        blocks.push_str(",\"is_error\":true");
    }
    blocks.push_str(",\"tool_use_id\":");
    json::push_string(&mut blocks, tool_use_id);
    blocks.push_str(",\"type\":\"tool_result\"}]");
    let text = marker("tool_result", None, None, None, Some(tool_use_id)).unwrap_or_default();
    Some(("user".to_string(), blocks, text, true))
}

/// [`pi_blocks`] by structure, appended to `out`, with each block's text for people
/// when `texts` asks for it; whether every block is a tool result.
fn pi_blocks_by_structure(content: Option<Raw<'_>>, out: &mut String, mut texts: Option<&mut Vec<String>>, signed: bool) -> Option<bool> {
    let content = content.map_or("null", Raw::get);
    if content.starts_with('"') {
        out.push_str("[{\"text\":");
        json::push_string_value(out, content)?;
        out.push_str(",\"type\":\"text\"}]");
        if let Some(texts) = texts {
            texts.push(json::str_value(content).0?.into_owned());
        }
        return Some(false);
    }
    if !content.starts_with('[') {
        out.push_str("[]");
        return Some(true);
    }
    let opened = out.len();
    out.push('[');
    let mut only_results = true;
    json::walk_array(content, |start| {
        let before = out.len();
        if before > opened + 1 {
            out.push(',');
        }
        let after_comma = out.len();
        let (is_result, len) = pi_block_by_structure(content.get(start..)?, out, texts.as_deref_mut(), signed)?;
        // A block left out (another API's redacted thinking) leaves no comma behind.
        if out.len() == after_comma {
            out.truncate(before);
        } else {
            only_results &= is_result;
        }
        Some(start + len)
    })?;
    out.push(']');
    Some(only_results)
}

/// [`pi_block`] of the block `json` starts with, by structure, appended to `out`, with
/// its text for people when `texts` asks for it; whether it is a tool result, and its
/// length.
fn pi_block_by_structure(json: &str, out: &mut String, texts: Option<&mut Vec<String>>, signed: bool) -> Option<(bool, usize)> {
    let keys = [
        "type",
        "id",
        "name",
        "arguments",
        "thinking",
        "thinkingSignature",
        "redacted",
        "data",
        "mimeType",
        "text",
        json::SERDE_RAW_VALUE_KEY,
    ];
    let ([kind, id, name, arguments, thinking, signature, redacted, data, mime_type, text, raw_value], len) =
        json::fields_named(json, keys)?;
    // An object a `Value` reads as the JSON in its string: left to the `Value`.
    if raw_value.is_some() {
        return None;
    }
    let block = json.get(..len)?;
    // The fields a block's kind writes must be strings: when one is not, `?` leaves the
    // message to the `Value`.
    let mut text_for_people = None;
    let is_result = match decoded(kind).as_deref() {
        Some("toolCall") => {
            let (id, name) = (decoded(id)?, decoded(name)?);
            out.push_str("{\"id\":");
            json::push_string(out, &id);
            out.push_str(",\"input\":");
            match arguments.filter(|a| a.starts_with('{')) {
                Some(arguments) => out.push_str(&serde_json::from_str::<Value>(arguments).ok()?.to_string()),
                None => out.push_str("{}"),
            }
            out.push_str(",\"name\":");
            json::push_string(out, &name);
            out.push_str(",\"type\":\"tool_use\"}");
            text_for_people = marker("tool_use", None, Some(&name), Some(&id), None);
            false
        }
        Some("thinking") if redacted == Some("true") => {
            if signed {
                out.push_str("{\"data\":");
                json::push_string_value(out, signature?)?;
                out.push_str(",\"type\":\"redacted_thinking\"}");
            }
            false
        }
        Some("thinking") => {
            let thinking = thinking?;
            out.push('{');
            if let Some(signature) = signature.filter(|s| signed && s.starts_with('"')) {
                out.push_str("\"signature\":");
                json::push_string_value(out, signature)?;
                out.push(',');
            }
            out.push_str("\"thinking\":");
            json::push_string_value(out, thinking)?;
            out.push_str(",\"type\":\"thinking\"}");
            false
        }
        Some("image") if data.is_some() => {
            out.push_str("{\"source\":{\"data\":");
            json::push_string_value(out, data?)?;
            out.push_str(",\"media_type\":");
            json::push_string_value(out, mime_type?)?;
            out.push_str(",\"type\":\"base64\"},\"type\":\"image\"}");
            text_for_people = marker("image", None, None, None, None);
            false
        }
        Some("text") => {
            let text = text?;
            out.push_str("{\"text\":");
            json::push_string_value(out, text)?;
            out.push_str(",\"type\":\"text\"}");
            if texts.is_some() {
                text_for_people = Some(json::str_value(text).0?.into_owned());
            }
            false
        }
        // Any other block is kept as it is, as the `Value` writes it.
        _ => {
            let value: Value = serde_json::from_str(block).ok()?;
            out.push_str(&value.to_string());
            text_for_people = value_text(&value);
            value["type"] == "tool_result"
        }
    };
    if let (Some(texts), Some(text)) = (texts, text_for_people) {
        texts.push(text);
    }
    Some((is_result, len))
}

/// A field's value decoded when it is a string.
fn decoded(field: Option<&str>) -> Option<Cow<'_, str>> {
    field.and_then(|value| json::str_value(value).0)
}

/// The blocks as text for people: text as it is, other blocks as short markers, one
/// per line. A lone text block's text is borrowed; several are written into one string
/// of their exact length (a reply is read for every message of a context).
fn blocks_text(blocks: Vec<Block<'_>>) -> Cow<'_, str> {
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

fn value_text(block: &Value) -> Option<String> {
    marker(block["type"].as_str()?, block["text"].as_str(), block["name"].as_str(), block["id"].as_str(), block["tool_use_id"].as_str())
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

fn marker(kind: &str, text: Option<&str>, name: Option<&str>, id: Option<&str>, tool_use_id: Option<&str>) -> Option<String> {
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

fn pi_blocks(content: &Value, signed: bool) -> Value {
    match content {
        Value::String(text) => json!([{ "type": "text", "text": text }]),
        Value::Array(blocks) => Value::Array(blocks.iter().filter_map(|block| pi_block(block, signed)).collect()),
        _ => json!([]),
    }
}

/// A pi block as an Anthropic one; `None` for one left out (see [`signed_by_anthropic`]).
fn pi_block(block: &Value, signed: bool) -> Option<Value> {
    Some(match block["type"].as_str() {
        Some("toolCall") => json!({
            "type": "tool_use", "id": block["id"], "name": block["name"],
            "input": if block["arguments"].is_object() { block["arguments"].clone() } else { json!({}) },
        }),
        Some("thinking") if block["redacted"] == Value::Bool(true) => {
            if !signed {
                return None;
            }
            json!({ "type": "redacted_thinking", "data": block["thinkingSignature"] })
        }
        Some("thinking") => {
            let mut out = json!({ "type": "thinking", "thinking": block["thinking"] });
            if let Some(signature) = block["thinkingSignature"].as_str().filter(|_| signed) {
                out["signature"] = signature.into();
            }
            out
        }
        Some("image") if block.get("data").is_some() => json!({
            "type": "image", "source": { "type": "base64", "media_type": block["mimeType"], "data": block["data"] },
        }),
        Some("text") => json!({ "type": "text", "text": block["text"] }),
        _ => block.clone(),
    })
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

/// What a message about to be written does to the pending calls.
pub(crate) fn message_activity(message: &super::Message) -> Activity {
    let assistant = message.role == crate::Role::Assistant;
    let id = message.meta.id.clone().filter(|_| assistant);
    let mut activity = Activity { assistant, id, calls: Vec::new(), answers: Vec::new(), other: false };
    for block in &message.blocks {
        match &block.kind {
            super::BlockKind::ToolUse { id, name } => activity.calls.push((id.clone(), name.clone())),
            super::BlockKind::ToolResult { tool_use_id } => activity.answers.push(tool_use_id.clone()),
            _ => activity.other = true,
        }
    }
    activity
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
    fn usage(&self) -> super::Usage {
        let either = |a: Option<u64>, b: Option<u64>| a.unwrap_or(0).saturating_add(b.unwrap_or(0));
        super::Usage {
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
pub(crate) fn line_usage<'l>(line: &'l Line) -> Option<(Option<alloc::borrow::Cow<'l, str>>, super::Usage)> {
    let message = line.env.message.and_then(crate::scan::parse_message)?;
    let usage: WireUsage = serde_json::from_str(message.usage?.get()).ok()?;
    Some((message.id.0, usage.usage()))
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec;
    use alloc::vec::Vec;
    use core::cell::Cell;

    use proptest::prelude::*;

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

    /// A JSON string's text: escapes of every kind (those a JSON writer uses, and others).
    fn string() -> impl Strategy<Value = String> {
        let pieces = prop_oneof![
            Just("a"),
            Just("run the tests "),
            Just("é"),
            Just("😀"),
            Just("\\n"),
            Just("\\t"),
            Just("\\r\\b\\f"),
            Just("\\u001f"),
            Just("\\u001F"),
            Just("\\u000a"),
            Just("\\u00e9"),
            Just("\\u0041"),
            Just("\\/"),
            Just("\\\""),
            Just("\\\\"),
            Just("\\ud83d\\ude00"),
        ];
        proptest::collection::vec(pieces, 0..6).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
    }

    /// A field's value: mostly a string, sometimes another type.
    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => string(),
            1 => Just(String::from("null")),
            1 => Just(String::from("7")),
            1 => Just(String::from("true")),
            1 => Just(String::from("{\"z\":1,\"a\":[2,{\"y\":\"\\u00e9\",\"b\":null}]}")),
        ]
    }

    /// An object of some of `fields` (a field may repeat), in any order.
    fn object(fields: Vec<(&'static str, BoxedStrategy<String>)>) -> impl Strategy<Value = String> {
        let members: Vec<BoxedStrategy<Option<String>>> = fields
            .into_iter()
            .map(|(key, value)| proptest::option::weighted(0.8, value.prop_map(move |v| format!("\"{key}\":{v}"))).boxed())
            .collect();
        (members, any::<proptest::sample::Index>(), any::<bool>()).prop_map(|(members, turn, repeat)| {
            let mut members: Vec<String> = members.into_iter().flatten().collect();
            if !members.is_empty() {
                let at = turn.index(members.len());
                members.rotate_left(at);
                if repeat && at == 0 {
                    members.push(members[0].clone());
                }
            }
            format!("{{{}}}", members.join(","))
        })
    }

    fn kind(kinds: &'static [&'static str]) -> BoxedStrategy<String> {
        prop_oneof![8 => proptest::sample::select(kinds).prop_map(|k| format!("\"{k}\"")), 1 => value()].boxed()
    }

    fn block() -> impl Strategy<Value = String> {
        let kinds: &'static [&'static str] =
            &["toolCall", "thinking", "image", "text", "tool_result", "tool_use", "other", "tool\\u0043all"];
        object(vec![
            ("type", kind(kinds)),
            ("id", value().boxed()),
            ("name", value().boxed()),
            ("arguments", value().boxed()),
            ("thinking", value().boxed()),
            ("thinkingSignature", value().boxed()),
            ("redacted", prop_oneof![Just(String::from("true")), Just(String::from("false")), value()].boxed()),
            ("data", value().boxed()),
            ("mimeType", value().boxed()),
            ("text", value().boxed()),
            ("tool_use_id", value().boxed()),
        ])
    }

    fn message() -> impl Strategy<Value = String> {
        let content = prop_oneof![
            6 => proptest::collection::vec(block(), 0..4).prop_map(|blocks| format!("[{}]", blocks.join(","))),
            1 => value(),
        ];
        object(vec![
            ("role", kind(&["assistant", "user", "toolResult"])),
            ("content", content.boxed()),
            ("toolCallId", value().boxed()),
            ("isError", prop_oneof![Just(String::from("true")), Just(String::from("false")), value()].boxed()),
            ("id", value().boxed()),
            ("api", kind(&["anthropic-messages", "openai-responses", "mneme", "google-generative-ai"])),
        ])
    }

    /// The pi conversion by structure says what the one through a `Value` says, byte
    /// for byte, whenever it answers; and it answers for most messages.
    #[test]
    fn pi_messages_read_by_structure_as_through_a_value() {
        let (answered, cases) = (Cell::new(0u32), Cell::new(0u32));
        proptest::proptest!(ProptestConfig::with_cases(3000), |(json in message())| {
            prop_assert!(serde_json::from_str::<Value>(&json).is_ok(), "not JSON: {}", json);
            let raw = Raw::valid(&json);
            let Some((message, _)) = parse_message_content(raw) else { return Ok(()) };
            let role = message.role.get().unwrap_or("message");
            cases.set(cases.get() + 1);
            if let Some(by_structure) = pi_stored(role, &message) {
                answered.set(answered.get() + 1);
                prop_assert_eq!(Some(by_structure), pi_stored_by_value(role, raw), "{}", json);
            }
        });
        let (answered, cases) = (answered.get(), cases.get());
        assert!(answered * 3 > cases, "the structure answered {answered} of {cases}");
    }

    /// A block `serde_json` reads as the JSON in its string (its `raw_value` key) is left
    /// to the `Value`, which reads it so.
    #[test]
    fn a_block_a_value_reads_as_the_json_in_its_string_is_left_to_the_value() {
        let json = r#"{"role":"assistant","content":[{"$serde_json::private::RawValue":"{\"type\":\"text\",\"text\":\"hi\"}"}]}"#;
        let raw = Raw::valid(json);
        let (message, _) = parse_message_content(raw).unwrap();
        assert_eq!(pi_stored("assistant", &message), None);
        assert_eq!(pi_stored_by_value("assistant", raw).unwrap().1, r#"[{"text":"hi","type":"text"}]"#);
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

    #[test]
    fn a_string_is_copied_only_when_written_as_push_string_writes_it() {
        for (value, copied) in [
            (r#""plain é 😀""#, true),
            (r#""a\nb\t\"\\ \u001f \b\f\r""#, true),
            (r#""\u001F""#, false),
            (r#""\u000a""#, false),
            (r#""\u00e9""#, false),
            (r#""\/""#, false),
            (r#""\ud83d\ude00""#, false),
        ] {
            let mut out = String::new();
            json::push_string_value(&mut out, value).unwrap();
            let text: String = serde_json::from_str(value).unwrap();
            assert_eq!(out, serde_json::to_string(&text).unwrap(), "{value}");
            assert_eq!(out == value, copied, "{value}");
        }
    }
}
