//! pi's stored messages read back as canonical (Anthropic) blocks: `toolCall`,
//! `thinkingSignature`, `{data, mimeType}` images and `toolResult` messages become
//! `tool_use`, `signature`, base64 `source` and user `tool_result` blocks; the entries
//! pi shows the model as user messages (a command run with `!`, an extension's
//! message, a branch summary) as pi frames them.

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Value, json};

use crate::message::Stored;
use crate::message::text::{block_marker, shown_text, value_text};
use crate::scan::{Block, Content, Message, parse_message_content_unless_result};
use crate::support::json::{self, Raw};
use crate::support::lenient::{Flag, Str};

/// How pi shows a `branch_summary` (where the conversation came back from a branch).
const PI_BRANCH_SUMMARY_PREFIX: &str = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const PI_BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// pi's stop reason in Anthropic's words, the inverse of pi.rs's `stop_reason`; `None` for a
/// reply that failed or was aborted, which has no Anthropic name.
pub(in crate::dialect) fn anthropic_stop_reason(reason: &str) -> Option<&'static str> {
    match reason {
        "toolUse" => Some("tool_use"),
        "length" => Some("max_tokens"),
        "stop" => Some("end_turn"),
        _ => None,
    }
}

/// Whether pi wrote message `message` of role `role`: a `toolResult`, a reply naming
/// its API (its blocks may carry that API's fields, `textSignature`), or one with a
/// block only pi writes. Its conversion is needed.
pub(in crate::dialect) fn wrote(role: &str, message: &Message<'_>, content: Option<&Content<'_>>) -> bool {
    role == "toolResult"
        || message.api.get().is_some()
        || matches!(content, Some(Content::Blocks(blocks)) if blocks.iter().any(is_own_block))
}

/// A block only pi writes.
fn is_own_block(block: &Block) -> bool {
    match block.kind.get() {
        Some("toolCall") => true,
        Some("thinking") => block.thinking_signature.get().is_some(),
        Some("image") => block.mime_type.get().is_some(),
        _ => false,
    }
}

/// Whether a pi reply's thinking signatures are Anthropic's, which the Anthropic API
/// checks: those of a reply from another API (OpenAI's reasoning items, Gemini's
/// thought signatures) are not kept, nor its redacted thinking, opaque to any other.
/// A reply without an API (or Mneme's own, given without its model) keeps them.
fn signed_by_anthropic(api: Option<&str>) -> bool {
    api.is_none_or(|api| api == "mneme" || api.starts_with("anthropic") || api.starts_with("bedrock"))
}

/// A pi message (or entry) whose `content` pi sends the model as a user message: an
/// extension's `custom` message or `custom_message` entry.
pub(in crate::dialect) fn user_message(raw: Raw<'_>) -> Option<Stored<'_>> {
    let (message, _) = parse_message_content_unless_result(raw)?;
    let (_, blocks, text, _) = message_by_structure("user", &message).or_else(|| message_by_value("user", raw))?;
    Some(Stored { role: "user".into(), blocks: Cow::Owned(blocks), text: Cow::Owned(text), only_results: false, id: None, model: None })
}

/// A user message of one text block, as a pi entry without blocks of its own shows.
fn text_message(text: String) -> Option<Stored<'static>> {
    let blocks = serde_json::to_string(&[json!({ "type": "text", "text": text })]).ok()?;
    Some(Stored { role: "user".into(), blocks: Cow::Owned(blocks), text: Cow::Owned(text), only_results: false, id: None, model: None })
}

/// A `branch_summary` entry as pi shows it.
pub(in crate::dialect) fn branch_summary(line: Raw<'_>) -> Option<Stored<'static>> {
    #[derive(serde::Deserialize)]
    struct Entry<'a> {
        #[serde(default, borrow)]
        summary: Str<'a>,
    }
    let entry: Entry = serde_json::from_str(line.get()).ok()?;
    let summary = entry.summary.get()?;
    text_message(alloc::format!("{PI_BRANCH_SUMMARY_PREFIX}{summary}{PI_BRANCH_SUMMARY_SUFFIX}"))
}

/// A command the user ran with pi's `!` as pi shows it (`bashExecutionToText`); `None`
/// for one run with `!!`, which pi keeps out of the context.
pub(in crate::dialect) fn bash_execution(message: Raw<'_>) -> Option<Stored<'static>> {
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
    text_message(text)
}

/// A pi message of role `role` (its line's `message`, `raw`, already read as
/// `message`) in canonical form: the role, the blocks as JSON, the text for people and
/// whether it holds only tool results.
pub(in crate::dialect) fn message(role: &str, message: &Message<'_>, raw: Raw<'_>) -> Option<(String, String, String, bool)> {
    message_by_structure(role, message).or_else(|| message_by_value(role, raw))
}

/// [`message_by_structure`] through a `Value` of the whole message: for what it does not read.
fn message_by_value(role: &str, raw: Raw<'_>) -> Option<(String, String, String, bool)> {
    let value: Value = serde_json::from_str(raw.get()).ok()?;
    let signed = signed_by_anthropic(value["api"].as_str());
    let (role, blocks) = if role == "toolResult" {
        let mut result = json!({
            "type": "tool_result",
            "tool_use_id": value["toolCallId"].as_str().unwrap_or_default(),
            "content": blocks_by_value(&value["content"], true),
        });
        if value["isError"] == Value::Bool(true) {
            result["is_error"] = Value::Bool(true);
        }
        ("user".to_string(), Value::Array(alloc::vec![result]))
    } else {
        (role.to_string(), blocks_by_value(&value["content"], signed))
    };
    let text = shown_text(&blocks);
    let only_results = role == "user" && blocks.as_array().is_some_and(|b| b.iter().all(|b| b["type"] == "tool_result"));
    Some((role, blocks.to_string(), text, only_results))
}

/// A pi message in canonical form read by structure: the role, the blocks as JSON, the
/// text for people and whether it holds only tool results, exactly as
/// [`message_by_value`] gets them through a `Value` (keys in `serde_json`'s order, strings escaped as it escapes
/// them) without building one of the whole message: a tool's output is decoded once
/// instead of becoming a tree. `None` for what it does not read (a field of an
/// unexpected type, a repeated key), which the `Value` then reads. (A block's field
/// that it skips may nest deeper than `serde_json` reads a `Value`: such a message is
/// kept here, where the `Value` alone dropped it.)
fn message_by_structure(role: &str, message: &Message<'_>) -> Option<(String, String, String, bool)> {
    // Room for what the conversion adds to the content (a result's wrapper and its call's
    // id, a string content's block): a `String` that outgrows it doubles, and a
    // context keeps every message's blocks.
    let added = 96 + message.tool_call_id.get().map_or(0, str::len);
    let mut blocks = String::with_capacity(message.content.map_or(2, |c| c.get().len()) + added);
    if role != "toolResult" {
        let mut texts = Vec::new();
        let signed = signed_by_anthropic(message.api.get());
        let only_results = blocks_by_structure(message.content, &mut blocks, Some(&mut texts), signed)?;
        return Some((role.to_string(), blocks, texts.join("\n"), role == "user" && only_results));
    }
    let tool_use_id = message.tool_call_id.get().unwrap_or_default();
    blocks.push_str("[{\"content\":");
    blocks_by_structure(message.content, &mut blocks, None, true)?;
    if message.is_error == Some("true") {
        blocks.push_str(",\"is_error\":true");
    }
    blocks.push_str(",\"tool_use_id\":");
    json::push_string(&mut blocks, tool_use_id);
    blocks.push_str(",\"type\":\"tool_result\"}]");
    let text = block_marker("tool_result", None, None, None, Some(tool_use_id)).unwrap_or_default();
    Some(("user".to_string(), blocks, text, true))
}

/// [`blocks_by_value`] by structure, appended to `out`, with each block's text for people
/// when `texts` asks for it; whether every block is a tool result.
fn blocks_by_structure(content: Option<Raw<'_>>, out: &mut String, mut texts: Option<&mut Vec<String>>, signed: bool) -> Option<bool> {
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
        let (is_result, len) = block_by_structure(content.get(start..)?, out, texts.as_deref_mut(), signed)?;
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

/// [`block_by_value`] of the block `json` starts with, by structure, appended to `out`, with
/// its text for people when `texts` asks for it; whether it is a tool result, and its
/// length.
fn block_by_structure(json: &str, out: &mut String, texts: Option<&mut Vec<String>>, signed: bool) -> Option<(bool, usize)> {
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
            text_for_people = block_marker("tool_use", None, Some(&name), Some(&id), None);
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
            text_for_people = block_marker("image", None, None, None, None);
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

fn blocks_by_value(content: &Value, signed: bool) -> Value {
    match content {
        Value::String(text) => json!([{ "type": "text", "text": text }]),
        Value::Array(blocks) => Value::Array(blocks.iter().filter_map(|block| block_by_value(block, signed)).collect()),
        _ => json!([]),
    }
}

/// A pi block as an Anthropic one; `None` for one left out (see [`signed_by_anthropic`]).
fn block_by_value(block: &Value, signed: bool) -> Option<Value> {
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

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec;
    use alloc::vec::Vec;
    use core::cell::Cell;

    use proptest::prelude::*;

    use super::*;
    use crate::scan::parse_message_content;

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
            if let Some(by_structure) = message_by_structure(role, &message) {
                answered.set(answered.get() + 1);
                prop_assert_eq!(Some(by_structure), message_by_value(role, raw), "{}", json);
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
        assert_eq!(message_by_structure("assistant", &message), None);
        assert_eq!(message_by_value("assistant", raw).unwrap().1, r#"[{"text":"hi","type":"text"}]"#);
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
