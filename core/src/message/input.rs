//! Messages as callers give them, validated and converted to canonical blocks. A
//! malformed message is refused with the index of the message (and block) and what is
//! wrong, before anything is written.

use alloc::borrow::Cow;
use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value, json};

use super::Role;
use super::{Block, BlockKind, Message, Meta, Origin, Provider, Usage};
use crate::error::Error;

/// Parses `json` (one message or an array) in `provider`'s shape.
pub(crate) fn parse(provider: Provider, json: &str) -> Result<Vec<Message>, Error> {
    // What is wrong with the turn as a whole names no message.
    let not_json = |e: serde_json::Error| whole_turn(&format!("the messages are not valid JSON: {e}"));
    // JavaScript's `JSON.stringify` and Python's `json.dumps` escape a lone surrogate
    // (text cut inside an emoji, bytes decoded with `surrogateescape`) where JSON has
    // no character for it: it becomes U+FFFD, as it does in a plain append's text and
    // in a line read back.
    let value: Value = match serde_json::from_str(json) {
        Ok(value) => value,
        Err(error) => match crate::scan::repair_lone_surrogates(json) {
            Some(repaired) => serde_json::from_str(&repaired).map_err(not_json)?,
            None => return Err(not_json(error)),
        },
    };
    let list = match value {
        Value::Array(list) => list,
        one @ Value::Object(_) => alloc::vec![one],
        _ => return Err(whole_turn("expected a message object or an array of them")),
    };
    if list.is_empty() {
        return Err(whole_turn("no messages: a turn needs at least one"));
    }
    match provider {
        Provider::Anthropic => list
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut message = anthropic(m).map_err(|r| invalid(i, &r))?;
                message.meta.origin = Some(Origin::Message(i as u32));
                Ok(message)
            })
            .collect(),
        Provider::Openai => openai(&list),
    }
}

fn whole_turn(reason: &str) -> Error {
    Error::InvalidArgument(format!("{reason}; nothing was written"))
}

fn invalid(message: usize, reason: &str) -> Error {
    Error::InvalidMessage { message: message as u32, reason: reason.to_owned() }
}

fn object<'v>(value: &'v Value, what: &str) -> Result<&'v Map<String, Value>, String> {
    value.as_object().ok_or_else(|| format!("{what} is not a JSON object"))
}

fn string<'v>(map: &'v Map<String, Value>, field: &str, what: &str) -> Result<&'v str, String> {
    match map.get(field) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("{what}: `{field}` is not a string")),
        None => Err(format!("{what}: `{field}` is missing")),
    }
}

fn nonempty<'v>(map: &'v Map<String, Value>, field: &str, what: &str) -> Result<&'v str, String> {
    let s = string(map, field, what)?;
    if s.is_empty() { Err(format!("{what}: `{field}` is empty")) } else { Ok(s) }
}

fn optional_string(map: &Map<String, Value>, field: &str) -> Result<Option<String>, String> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{field}` is not a string")),
    }
}

fn role(map: &Map<String, Value>) -> Result<Role, String> {
    match string(map, "role", "the message")? {
        "user" => Ok(Role::User),
        "assistant" => Ok(Role::Assistant),
        role @ ("system" | "developer") => {
            Err(format!("a {role} prompt is not part of a session: pass it as a system injection when building the context"))
        }
        other => Err(format!("unknown role `{other}`: use `user` or `assistant`")),
    }
}

/// An Anthropic message (or a whole API response object).
fn anthropic(value: &Value) -> Result<Message, String> {
    let map = object(value, "the message")?;
    let role = role(map)?;
    let blocks = match map.get("content") {
        Some(Value::String(text)) if text.trim().is_empty() => return Err("the content is empty (or only white space)".into()),
        Some(Value::String(text)) => alloc::vec![Block::text(text)],
        Some(Value::Array(blocks)) if blocks.is_empty() => return Err("the content has no blocks".into()),
        Some(Value::Array(blocks)) => {
            blocks.iter().enumerate().map(|(i, b)| block(b, role).map_err(|r| format!("block {i}: {r}"))).collect::<Result<_, _>>()?
        }
        Some(_) => return Err("`content` is neither a string nor an array of blocks".into()),
        None => return Err("`content` is missing".into()),
    };
    let usage = match map.get("usage") {
        None | Some(Value::Null) => None,
        Some(usage) => Some(anthropic_usage(usage)?),
    };
    let meta = Meta {
        id: optional_string(map, "id")?,
        model: optional_string(map, "model")?,
        stop_reason: optional_string(map, "stop_reason")?,
        usage,
        api: Some(Provider::Anthropic),
        at: None,
        origin: None,
    };
    Ok(Message { role, blocks, meta })
}

fn count(map: &Map<String, Value>, field: &str) -> Result<u64, String> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(0),
        Some(v) => v.as_u64().ok_or_else(|| format!("usage: `{field}` is not a non-negative integer")),
    }
}

fn anthropic_usage(value: &Value) -> Result<Usage, String> {
    let map = object(value, "`usage`")?;
    Ok(Usage {
        input: count(map, "input_tokens")?,
        output: count(map, "output_tokens")?,
        cache_read: count(map, "cache_read_input_tokens")?,
        cache_creation: count(map, "cache_creation_input_tokens")?,
    })
}

/// Validates one Anthropic content block of a `role` message; keeps its JSON as given.
fn block(value: &Value, role: Role) -> Result<Block, String> {
    let map = object(value, "the block")?;
    let kind = string(map, "type", "the block")?;
    let only = |allowed: Role| {
        let article = if allowed == Role::Assistant { "an" } else { "a" };
        if role == allowed { Ok(()) } else { Err(format!("a `{kind}` block belongs in {article} {} message", allowed.as_str())) }
    };
    let kind = match kind {
        "text" => {
            nonempty(map, "text", "text block")?;
            BlockKind::Text
        }
        "thinking" => {
            only(Role::Assistant)?;
            string(map, "thinking", "thinking block")?;
            optional_string(map, "signature").map_err(|r| format!("thinking block: {r}"))?;
            BlockKind::Thinking
        }
        "redacted_thinking" => {
            only(Role::Assistant)?;
            string(map, "data", "redacted_thinking block")?;
            BlockKind::RedactedThinking
        }
        "tool_use" => {
            only(Role::Assistant)?;
            let id = nonempty(map, "id", "tool_use block")?.to_owned();
            let name = nonempty(map, "name", "tool_use block")?.to_owned();
            if !map.get("input").is_some_and(Value::is_object) {
                return Err("tool_use block: `input` is not a JSON object".into());
            }
            BlockKind::ToolUse { id, name }
        }
        "tool_result" => {
            only(Role::User)?;
            let tool_use_id = nonempty(map, "tool_use_id", "tool_result block")?.to_owned();
            match map.get("content") {
                None | Some(Value::Null) | Some(Value::String(_)) => {}
                Some(Value::Array(inner)) => {
                    for (i, b) in inner.iter().enumerate() {
                        let inner = block(b, Role::User).map_err(|r| format!("tool_result content block {i}: {r}"))?;
                        if !matches!(inner.kind, BlockKind::Text | BlockKind::Image | BlockKind::Document | BlockKind::Other) {
                            return Err(format!("tool_result content block {i}: only text, image and document blocks go in a result"));
                        }
                    }
                }
                Some(_) => return Err("tool_result block: `content` is neither a string nor an array of blocks".into()),
            }
            if map.get("is_error").is_some_and(|e| !e.is_boolean()) {
                return Err("tool_result block: `is_error` is not a boolean".into());
            }
            BlockKind::ToolResult { tool_use_id }
        }
        "image" | "document" => {
            // The API takes images and documents from the user (and in tool results),
            // never in a reply.
            only(Role::User)?;
            let source = map.get("source").ok_or_else(|| format!("{kind} block: `source` is missing"))?;
            let source = object(source, "the block's `source`")?;
            match string(source, "type", "the block's source")? {
                "base64" => {
                    let media_type = nonempty(source, "media_type", "base64 source")?;
                    if kind == "image" {
                        image_type(media_type)?;
                    } else if media_type != "application/pdf" {
                        return Err(format!(
                            "document block: a base64 document is a PDF (`application/pdf`), not `{media_type}`; give text as a `text` source"
                        ));
                    }
                    base64(nonempty(source, "data", "base64 source")?)?;
                }
                "url" => web_url(nonempty(source, "url", "url source")?)?,
                _ if kind == "document" => {}
                other => return Err(format!("image block: unknown source type `{other}` (use `base64` or `url`)")),
            }
            if kind == "image" { BlockKind::Image } else { BlockKind::Document }
        }
        _ => BlockKind::Other,
    };
    let json = serde_json::to_string(&*without_cache_control(value)).map_err(|e| format!("the block cannot be written: {e}"))?;
    Ok(Block { kind, json })
}

/// A block without `cache_control`, on it or on a result's blocks. Where to cache is
/// the request's choice, not the content's: kept, it would be sent again with every
/// later request, and the API refuses more than four.
fn without_cache_control(value: &Value) -> Cow<'_, Value> {
    let marked = |block: &Value| block.get("cache_control").is_some();
    let in_content = value.get("content").and_then(Value::as_array).is_some_and(|blocks| blocks.iter().any(marked));
    if !marked(value) && !in_content {
        return Cow::Borrowed(value);
    }
    let mut value = value.clone();
    if let Some(map) = value.as_object_mut() {
        map.remove("cache_control");
        if let Some(Value::Array(blocks)) = map.get_mut("content") {
            blocks.iter_mut().filter_map(Value::as_object_mut).for_each(|block| {
                block.remove("cache_control");
            });
        }
    }
    Cow::Owned(value)
}

/// OpenAI chat messages, converted: `tool_calls` become `tool_use` blocks, a run of
/// `tool` messages one user message of `tool_result` blocks.
fn openai(list: &[Value]) -> Result<Vec<Message>, Error> {
    let mut out: Vec<Message> = Vec::new();
    let mut results_open = false;
    for (i, value) in list.iter().enumerate() {
        let fail = |r: String| invalid(i, &r);
        let map = object(value, "the message").map_err(fail)?;
        if string(map, "role", "the message").map_err(fail)? == "tool" {
            let id = nonempty(map, "tool_call_id", "tool message").map_err(fail)?;
            let content = openai_content(map.get("content")).map_err(fail)?;
            let mut result = json!({ "type": "tool_result", "tool_use_id": id, "content": content });
            if map.get("is_error") == Some(&Value::Bool(true)) {
                result["is_error"] = Value::Bool(true);
            }
            let block = Block { kind: BlockKind::ToolResult { tool_use_id: id.to_owned() }, json: result.to_string() };
            match out.last_mut() {
                Some(previous) if results_open => previous.blocks.push(block),
                _ => out.push(Message {
                    role: Role::User,
                    blocks: alloc::vec![block],
                    meta: Meta { origin: Some(Origin::Results(i as u32)), ..Meta::default() },
                }),
            }
            results_open = true;
            continue;
        }
        results_open = false;
        let role = role(map).map_err(fail)?;
        let mut blocks = Vec::new();
        let content = openai_content(map.get("content")).map_err(fail)?;
        match content {
            // Blank text beside calls is no block (a provider refuses one); alone, no message.
            Value::String(text) if !text.trim().is_empty() => blocks.push(Block::text(&text)),
            Value::Array(parts) => {
                for (p, part) in parts.iter().enumerate() {
                    blocks.push(block(part, role).map_err(|r| fail(format!("content part {p}: {r}")))?);
                }
            }
            _ => {}
        }
        // A reply the model refused to give: its words, kept as the reply's text.
        if let (true, Some(Value::String(refusal))) = (blocks.is_empty() && role == Role::Assistant, map.get("refusal"))
            && !refusal.trim().is_empty()
        {
            blocks.push(Block::text(refusal));
        }
        if let Some(calls) = map.get("tool_calls").filter(|c| !c.is_null()) {
            let calls = calls.as_array().ok_or_else(|| fail("`tool_calls` is not an array".into()))?;
            if role != Role::Assistant {
                return Err(fail("only assistant messages make tool calls".into()));
            }
            for (c, call) in calls.iter().enumerate() {
                blocks.push(openai_call(call).map_err(|r| fail(format!("tool call {c}: {r}")))?);
            }
        }
        if blocks.is_empty() {
            return Err(fail("the message has neither content (or only white space) nor tool calls".into()));
        }
        let usage = match map.get("usage") {
            None | Some(Value::Null) => None,
            Some(usage) => Some(openai_usage(usage).map_err(fail)?),
        };
        let stop_reason = optional_string(map, "finish_reason").map_err(fail)?.map(|reason| {
            match reason.as_str() {
                "stop" => "end_turn",
                "length" => "max_tokens",
                "tool_calls" | "function_call" => "tool_use",
                other => other,
            }
            .to_owned()
        });
        let meta = Meta {
            id: optional_string(map, "id").map_err(fail)?,
            model: optional_string(map, "model").map_err(fail)?,
            stop_reason,
            usage,
            api: Some(Provider::Openai),
            at: None,
            origin: Some(Origin::Message(i as u32)),
        };
        out.push(Message { role, blocks, meta });
    }
    Ok(out)
}

/// An OpenAI content (string, null, or parts) as Anthropic: a string, or blocks.
fn openai_content(content: Option<&Value>) -> Result<Value, String> {
    let parts = match content {
        None | Some(Value::Null) => return Ok(Value::String(String::new())),
        Some(Value::String(text)) => return Ok(Value::String(text.clone())),
        Some(Value::Array(parts)) => parts,
        Some(_) => return Err("`content` is neither a string, null nor an array of parts".into()),
    };
    let mut blocks = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let map = object(part, "a content part")?;
        match string(map, "type", "content part")? {
            "text" => blocks
                .push(json!({ "type": "text", "text": nonempty(map, "text", "text part").map_err(|r| format!("content part {i}: {r}"))? })),
            "image_url" => {
                let url = map.get("image_url").and_then(|u| u.get("url")).and_then(Value::as_str);
                let url = url.filter(|u| !u.is_empty()).ok_or_else(|| format!("content part {i}: `image_url.url` is missing"))?;
                let source = image_source(url).map_err(|r| format!("content part {i}: {r}"))?;
                blocks.push(json!({ "type": "image", "source": source }));
            }
            other => return Err(format!("content part {i}: unknown type `{other}` (use `text` or `image_url`)")),
        }
    }
    Ok(Value::Array(blocks))
}

/// An `image_url`'s URL as an Anthropic image source: a `data:` URL's media type
/// (without parameters) and base64 data, or the URL itself.
fn image_source(url: &str) -> Result<Value, String> {
    let Some(data_url) = url.strip_prefix("data:") else {
        web_url(url)?;
        return Ok(json!({ "type": "url", "url": url }));
    };
    let (header, data) = data_url
        .split_once(',')
        .filter(|(header, _)| header.ends_with(";base64"))
        .ok_or("a `data:` URL of an image must be base64 (`data:image/png;base64,...`)")?;
    // OpenAI takes a media type in any case, and `image/jpg`: stored as Anthropic names it.
    let media_type = header.split(';').next().unwrap_or_default().to_ascii_lowercase();
    let media_type = if media_type == "image/jpg" { String::from("image/jpeg") } else { media_type };
    image_type(&media_type)?;
    if data.is_empty() {
        return Err("the `data:` URL holds no data".into());
    }
    base64(data)?;
    Ok(json!({ "type": "base64", "media_type": media_type, "data": data }))
}

/// The image types the model APIs take (Anthropic's four, which OpenAI's include): a
/// block of another is refused by the provider in every later request.
fn image_type(media_type: &str) -> Result<(), String> {
    if matches!(media_type, "image/jpeg" | "image/png" | "image/gif" | "image/webp") {
        Ok(())
    } else {
        Err(format!(
            "the image's media type `{media_type}` is not one the model APIs take: use image/jpeg, image/png, image/gif or image/webp"
        ))
    }
}

/// Checks `data` is base64 (the standard alphabet or the URL-safe one, its padding
/// only at the end), so a payload the provider cannot decode is refused now rather
/// than with every later request. The bytes are not decoded: what they show is the
/// provider's to judge.
fn base64(data: &str) -> Result<(), String> {
    // Encoders that wrap lines (MIME's 76 columns) are read as if they had not.
    let wrapping = |b: &u8| matches!(b, b'\r' | b'\n');
    let text = data.trim_end_matches(['=', '\r', '\n']);
    let padding = data.bytes().skip(text.len()).filter(|b| !wrapping(b)).count();
    let alphabet = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_') || wrapping(b);
    if let Some(at) = text.bytes().position(|b| !alphabet(&b)) {
        return Err(format!(
            "the base64 data has a character base64 has not at byte {at} (a space, a `data:` prefix, another encoding): give the bare base64 text"
        ));
    }
    let length = text.bytes().filter(|b| !wrapping(b)).count();
    if length == 0 {
        return Err("the base64 data holds nothing but line breaks: give the encoded bytes".into());
    }
    if padding > 2 || length % 4 == 1 || (padding > 0 && (length + padding) % 4 != 0) {
        return Err(format!(
            "the base64 data is {} characters long, which no base64 text is: it was cut short or padded wrongly",
            length + padding
        ));
    }
    Ok(())
}

/// Checks an image or document `url` source is a web address the provider can fetch.
fn web_url(url: &str) -> Result<(), String> {
    let scheme = |name: &str| url.get(..name.len()).filter(|s| s.eq_ignore_ascii_case(name)).and_then(|_| url.get(name.len()..));
    let address = scheme("https://").or_else(|| scheme("http://")).unwrap_or_default();
    if address.is_empty() || address.starts_with('/') || address.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
        return Err(format!("the source's url `{url}` is not an http(s) address a provider can fetch"));
    }
    Ok(())
}

fn openai_call(call: &Value) -> Result<Block, String> {
    let map = object(call, "the call")?;
    let id = nonempty(map, "id", "tool call")?;
    let function = object(map.get("function").unwrap_or(&Value::Null), "`function`")?;
    let name = nonempty(function, "name", "tool call function")?;
    let input = match function.get("arguments") {
        Some(Value::String(args)) if args.trim().is_empty() => json!({}),
        Some(Value::String(args)) => {
            serde_json::from_str::<Value>(args).map_err(|e| format!("`function.arguments` is not valid JSON: {e}"))?
        }
        Some(Value::Object(args)) => Value::Object(args.clone()),
        _ => return Err("`function.arguments` is missing".into()),
    };
    if !input.is_object() {
        return Err("`function.arguments` is not a JSON object".into());
    }
    let json = json!({ "type": "tool_use", "id": id, "name": name, "input": input }).to_string();
    Ok(Block { kind: BlockKind::ToolUse { id: id.to_owned(), name: name.to_owned() }, json })
}

fn openai_usage(value: &Value) -> Result<Usage, String> {
    let map = object(value, "`usage`")?;
    let cached = map.get("prompt_tokens_details").and_then(|d| d.get("cached_tokens")).and_then(Value::as_u64).unwrap_or(0);
    let prompt = count(map, "prompt_tokens")?;
    Ok(Usage { input: prompt.saturating_sub(cached), output: count(map, "completion_tokens")?, cache_read: cached, cache_creation: 0 })
}

/// The text of a message, for the simple `append(role, text)` path.
pub(crate) fn text_message(role: Role, text: &str) -> Result<Vec<Message>, Error> {
    // A provider refuses a message of nothing but white space: written, it would leave
    // the session a message its context cannot send.
    if text.trim().is_empty() {
        return Err(Error::InvalidArgument("the message text is empty (or only white space); write some text".into()));
    }
    Ok(alloc::vec![Message::text(role, text)])
}

/// A block as it was stored or recorded elsewhere, taken as it is: its kind read from
/// its fields, nothing validated (a transcript being exported or imported is what it
/// is; refusing one odd block would lose the rest).
pub(crate) fn recorded_block(value: &Value) -> Block {
    let field = |name: &str| value.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
    let kind = match value.get("type").and_then(Value::as_str).unwrap_or_default() {
        "text" => BlockKind::Text,
        "thinking" => BlockKind::Thinking,
        "redacted_thinking" => BlockKind::RedactedThinking,
        "tool_use" => BlockKind::ToolUse { id: field("id"), name: field("name") },
        "tool_result" => BlockKind::ToolResult { tool_use_id: field("tool_use_id") },
        "image" => BlockKind::Image,
        "document" => BlockKind::Document,
        _ => BlockKind::Other,
    };
    Block { kind, json: value.to_string() }
}
