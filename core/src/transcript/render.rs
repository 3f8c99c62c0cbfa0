//! A resumed context rendered for a provider: what to send the model next. Roles
//! alternate, every tool call has its result right after it (an interrupted turn's
//! calls get a synthetic error result, as Claude Code gives them), and injected
//! context sits where the caller put it without ever being written.

use alloc::borrow::Cow;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Value, json};

use crate::dialect::{Interrupted, Replay};
use crate::format::Format;
use crate::message::{Injection, Place, Provider, Speaker};
use crate::support::json;
use crate::transcript::Context;

/// What to send a model to continue a session.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProviderContext {
    pub provider: Provider,
    /// The request's JSON, ready to extend with the model and tools. Anthropic:
    /// `{"system"?: string, "messages": [...]}`; OpenAI: `{"messages": [...]}` with
    /// the system prompt as its first message.
    #[serde(serialize_with = "crate::support::json::as_value::serialize")]
    pub body: String,
    /// Messages in `body` (OpenAI: system and tool messages included).
    pub message_count: u32,
    /// The context starts from a compaction summary.
    pub compacted: bool,
    /// An estimate of the context's tokens (4 characters a token, images 1,200).
    pub tokens: u64,
    /// Calls that had no result (an interrupted turn); each got a synthetic error
    /// result so the provider accepts the request.
    pub interrupted: Vec<String>,
}

struct Turn {
    assistant: bool,
    blocks: Vec<Block>,
}

/// A block of a turn: its JSON as a `Value` of it writes it (each object's keys in
/// byte order: the form Mneme has always sent), and what the turns' rules read of it.
struct Block {
    json: String,
    kind: Kind,
}

enum Kind {
    /// A `tool_use`, and its id when that is a string.
    Call(Option<String>),
    /// A `tool_result`, and the id of the call it answers when that is a string.
    Result(Option<String>),
    /// `thinking` or `redacted_thinking`, and whether it carries its signature (the
    /// Anthropic API refuses thinking without one).
    Thinking {
        signed: bool,
    },
    /// A `text` block of nothing but white space.
    Blank,
    Other,
}

impl Block {
    /// The block whose JSON, written as a `Value` writes it, is `json`.
    fn of(json: String) -> Self {
        let fields =
            json::fields_named(&json, ["type", "id", "tool_use_id", "text", "signature", "cache_control"]).map(|(fields, _)| fields);
        // Where to cache is the request's choice: a session written before Mneme took
        // the marks off as blocks came in still has them, and the API refuses a fifth.
        if let Some([.., Some(_)]) = fields
            && let Ok(Value::Object(mut block)) = serde_json::from_str::<Value>(&json)
            && block.remove("cache_control").is_some()
        {
            return Block::of(Value::Object(block).to_string());
        }
        let string = |value: Option<&str>| value.and_then(|v| json::str_value(v).get().map(String::from));
        let kind = match fields {
            Some([Some("\"tool_use\""), id, ..]) => Kind::Call(string(id)),
            Some([Some("\"tool_result\""), _, tool_use_id, ..]) => Kind::Result(string(tool_use_id)),
            Some([Some("\"thinking\""), _, _, _, signature, _]) => {
                Kind::Thinking { signed: string(signature).is_some_and(|s| !s.is_empty()) }
            }
            Some([Some("\"redacted_thinking\""), ..]) => Kind::Thinking { signed: true },
            Some([Some("\"text\""), _, _, Some(text), ..]) if json::str_value(text).get().is_some_and(|t| t.trim().is_empty()) => {
                Kind::Blank
            }
            _ => Kind::Other,
        };
        Block { json, kind }
    }

    fn text(text: &str) -> Self {
        let mut json = String::with_capacity(text.len() + 32);
        json.push_str("{\"text\":");
        json::push_string(&mut json, text);
        json.push_str(",\"type\":\"text\"}");
        Block::of(json)
    }

    fn is_result(&self) -> bool {
        matches!(self.kind, Kind::Result(_))
    }
}

/// The blocks of a context message's content (a JSON array), each written as a
/// `Value` of it writes it; none when the content is not an array, as a `Value` would
/// have it.
fn blocks_of(content: &str) -> Vec<Block> {
    blocks_by_structure(content).unwrap_or_else(|| blocks_by_value(content))
}

/// [`blocks_of`] with each block rewritten by [`json::push_canonical`]: a tool's output
/// is copied, not decoded into a tree and encoded again. `None` for content it is not
/// sure of, which a `Value` then reads.
fn blocks_by_structure(content: &str) -> Option<Vec<Block>> {
    let mut blocks = Vec::new();
    // Written here first, then copied out at its size: written straight into its own
    // `String`, a long block would grow it by doubling, copying it again each time.
    let mut written = String::new();
    let end = json::walk_array(content, |start| {
        written.clear();
        let len = json::push_canonical(&mut written, content.get(start..)?)?;
        blocks.push(Block::of(written.as_str().into()));
        Some(start + len)
    })?;
    content.get(end..)?.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')).then_some(blocks)
}

fn blocks_by_value(content: &str) -> Vec<Block> {
    serde_json::from_str::<Vec<Value>>(content).unwrap_or_default().iter().map(|block| Block::of(block.to_string())).collect()
}

/// `context`, of a session in `format`, in `provider`'s shape. It is let go once its
/// blocks are read: the file's text it shares is not held while the body is written.
///
/// `model`: the model the request goes to, when known; the signed thinking of replies
/// another model wrote is then sent as the session's client sends it (the API refuses
/// their signatures). Without it, signed thinking is sent as recorded.
pub(crate) fn render(
    context: Context,
    format: Format,
    provider: Provider,
    model: Option<&str>,
    injections: &[Injection],
) -> ProviderContext {
    let compacted = context.compacted;
    let dialect = format.dialect();
    let turns: Vec<Turn> = context
        .messages
        .into_iter()
        .map(|m| {
            let assistant = m.role == "assistant";
            let thinking = match (assistant, model) {
                (true, Some(sent_to)) => dialect.replayed_thinking(m.model.as_deref(), sent_to),
                _ => Replay::Kept,
            };
            Turn { assistant, blocks: sendable(blocks_of(&m.content), assistant, provider, thinking) }
        })
        .filter(|t| !t.blocks.is_empty())
        .collect();
    let system: Vec<&str> = injections.iter().filter(|i| i.role == Speaker::System).map(|i| i.text.as_str()).collect();
    let mut merged = merge_roles(place_injections(turns, injections));
    if drop_orphaned_results(&mut merged) {
        merged = merge_roles(merged);
    }
    let interrupted = answer_every_call(&mut merged, &dialect.interrupted_call());
    // The Anthropic API refuses a conversation that opens with a reply ("first message
    // must use the user role"): one whose first prompt was deleted, or that its writer
    // began with the assistant's greeting, opens with a user message saying so.
    if provider == Provider::Anthropic && merged.first().is_some_and(|turn| turn.assistant) {
        merged.insert(0, Turn { assistant: false, blocks: alloc::vec![Block::text(OPENS_WITH_A_REPLY)] });
    }
    for turn in &mut merged {
        // The API wants a reply's results first in the message that follows it, and, with
        // thinking on, a last reply to start with its thinking ("a final `assistant`
        // message must start with a thinking block"): two replies merged, or one given
        // in another order, would not.
        let first = |block: &Block| if turn.assistant { matches!(block.kind, Kind::Thinking { .. }) } else { block.is_result() };
        let (mut leading, rest): (Vec<Block>, Vec<Block>) = core::mem::take(&mut turn.blocks).into_iter().partition(first);
        leading.extend(rest);
        turn.blocks = leading;
    }
    provider_tool_ids(&mut merged, provider);
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    // The system prompt is sent too: a meter or a compaction trigger reading the
    // estimate must count it.
    let tokens = estimate(&merged).saturating_add(system.as_deref().map_or(0, crate::tokens::text_tokens));
    let (body, messages) = match provider {
        Provider::Anthropic => anthropic(&merged, system),
        Provider::Openai => openai(&merged, system),
    };
    ProviderContext { provider, body, message_count: messages, compacted, tokens, interrupted }
}

/// The user message before a conversation that opens with a reply, for Anthropic.
const OPENS_WITH_A_REPLY: &str = "[The conversation opens with the assistant's message that follows.]";

/// A message's blocks without those the Anthropic API refuses in a request: a text
/// block of white space ("text content blocks must contain non-whitespace text") and,
/// in a reply, thinking at its end ("The final block in an assistant message cannot be
/// `thinking`"); a reply cut off while it was thinking is left with nothing, and out.
/// For Anthropic, thinking without a signature (another API's, whose signature pi does
/// not replay) goes as text, as pi sends it. Signed thinking another model wrote goes
/// as `signed` says ([`crate::dialect::Dialect::replayed_thinking`]).
fn sendable(blocks: Vec<Block>, assistant: bool, provider: Provider, signed: Replay) -> Vec<Block> {
    let as_text = |block: &Block| {
        let text = json::fields_named(&block.json, ["thinking"]).and_then(|([thinking], _)| json::str_value(thinking?).0);
        text.filter(|t| !t.trim().is_empty()).map(|t| Block::text(&t))
    };
    let mut blocks: Vec<Block> = blocks
        .into_iter()
        .filter(|block| !matches!(block.kind, Kind::Blank))
        .filter_map(|block| match (&block.kind, signed) {
            (Kind::Thinking { signed: true }, Replay::Dropped) => None,
            (Kind::Thinking { signed: true }, Replay::AsText) => as_text(&block),
            (Kind::Thinking { signed: false }, _) if provider == Provider::Anthropic => as_text(&block),
            _ => Some(block),
        })
        .collect();
    if assistant {
        while blocks.last().is_some_and(|block| matches!(block.kind, Kind::Thinking { .. })) {
            blocks.pop();
        }
    }
    blocks
}

/// The context's messages with the injections (but the system prompts) among them:
/// those at the start first and those at the end last, each in the order given, and
/// those before the last prompt before the context's own last prompt — found before
/// any injection is placed, so the order they are listed in does not move them.
fn place_injections(mut turns: Vec<Turn>, injections: &[Injection]) -> Vec<Turn> {
    let last_prompt = turns.iter().rposition(|t| !t.assistant && t.blocks.iter().any(|b| !b.is_result())).unwrap_or(turns.len());
    let placed = |place: Place| {
        injections
            .iter()
            .filter(move |i| i.role != Speaker::System && i.place == place)
            .map(|i| Turn { assistant: i.role == Speaker::Assistant, blocks: alloc::vec![Block::text(&i.text)] })
    };
    let from_last_prompt = turns.split_off(last_prompt);
    let mut all: Vec<Turn> = placed(Place::Start).collect();
    all.extend(turns);
    all.extend(placed(Place::BeforeLastPrompt));
    all.extend(from_last_prompt);
    all.extend(placed(Place::End));
    all
}

/// Call ids a provider refuses, rewritten in each call and its result, each to one no
/// other call has: an id of characters or a length the provider refuses, and an id an
/// earlier call of the conversation had already (local OpenAI-compatible servers
/// number their calls anew each reply, `call_0`; Anthropic refuses a request with two
/// calls of one id). The Anthropic API takes `^[a-zA-Z0-9_-]{1,64}$`; OpenAI's chat
/// API ids of at most 40 characters. Other providers write ids of their own: OpenAI's
/// Responses API 450 characters with `|` (pi keeps them), others `.` and `:`. A
/// rewritten id keeps its letters, digits, `_` and `-` (the rest become `_`), cut to
/// the provider's length, with a count when that is taken. A result answers the call
/// of its id in the reply before it (the turns are paired by now).
fn provider_tool_ids(turns: &mut [Turn], provider: Provider) {
    let (max, any_character) = match provider {
        Provider::Anthropic => (64, false),
        Provider::Openai => (40, true),
    };
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let valid = |id: &str| !id.is_empty() && id.chars().count() <= max && (any_character || id.chars().all(plain));
    let id_of = |block: &Block| match &block.kind {
        Kind::Call(Some(id)) | Kind::Result(Some(id)) => Some(id.clone()),
        _ => None,
    };
    let ids: Vec<String> = turns.iter().flat_map(|t| &t.blocks).filter_map(id_of).collect();
    let mut calls: BTreeSet<&str> = BTreeSet::new();
    let repeated = turns.iter().flat_map(|t| &t.blocks).any(|b| matches!(&b.kind, Kind::Call(Some(id)) if !calls.insert(id)));
    if !repeated && ids.iter().all(|id| valid(id)) {
        return;
    }
    let mut taken: BTreeSet<String> = ids.iter().filter(|id| valid(id)).cloned().collect();
    let mut fresh = |id: &str| {
        let mut clean: String = id.chars().map(|c| if plain(c) { c } else { '_' }).take(max).collect();
        if clean.is_empty() {
            clean.push_str("call");
        }
        let mut new = clean.clone();
        for n in 1u32.. {
            if !taken.contains(&new) {
                break;
            }
            let suffix = alloc::format!("_{n}");
            new = alloc::format!("{}{suffix}", &clean[..clean.len().min(max - suffix.len())]);
        }
        taken.insert(new.clone());
        new
    };
    let mut sent: BTreeSet<String> = BTreeSet::new();
    // The ids the last reply's calls went out under, in order, by the id they have.
    let mut answers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for turn in turns.iter_mut() {
        if turn.assistant {
            answers.clear();
        }
        for block in &mut turn.blocks {
            let (field, new) = match &block.kind {
                Kind::Call(Some(id)) => {
                    let new = if valid(id) && sent.insert(id.clone()) { id.clone() } else { fresh(id) };
                    answers.entry(id.clone()).or_default().push(new.clone());
                    ("id", new)
                }
                Kind::Result(Some(id)) => {
                    let Some(new) = answers.get_mut(id).filter(|queue| !queue.is_empty()).map(|queue| queue.remove(0)) else { continue };
                    ("tool_use_id", new)
                }
                _ => continue,
            };
            if id_of(block).as_deref() == Some(new.as_str()) {
                continue;
            }
            if let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(&block.json) {
                object.insert(field.into(), Value::String(new));
                *block = Block::of(Value::Object(object).to_string());
            }
        }
    }
}

/// The ids of a reply's tool calls.
fn call_ids(turn: &Turn) -> Vec<&str> {
    turn.blocks
        .iter()
        .filter_map(|b| match &b.kind {
            Kind::Call(id) => id.as_deref(),
            _ => None,
        })
        .collect()
}

/// Consecutive turns of one role as one message: the providers want roles to alternate.
fn merge_roles(turns: Vec<Turn>) -> Vec<Turn> {
    let mut merged: Vec<Turn> = Vec::with_capacity(turns.len());
    for turn in turns {
        match merged.last_mut() {
            Some(previous) if previous.assistant == turn.assistant => previous.blocks.extend(turn.blocks),
            _ => merged.push(turn),
        }
    }
    merged
}

/// Leaves out every tool result that answers no call of the message before it — its
/// call was deleted, or summarised away, or a file holds it without one (`check`
/// reports those) — and a message left empty: both providers refuse such a result
/// (Anthropic: "Each `tool_result` block must have a corresponding `tool_use` block in
/// the previous message"). Of two results of one call (a result written again, the
/// messages merged), the later is sent: Anthropic refuses a call answered twice.
/// Whether a message was left out.
fn drop_orphaned_results(turns: &mut Vec<Turn>) -> bool {
    let mut calls: Vec<String> = Vec::new();
    for turn in turns.iter_mut() {
        if turn.assistant {
            calls = call_ids(turn).into_iter().map(String::from).collect();
            continue;
        }
        let mut answered: BTreeSet<String> = BTreeSet::new();
        let mut kept: Vec<Block> = core::mem::take(&mut turn.blocks)
            .into_iter()
            .rev()
            .filter(|block| match &block.kind {
                Kind::Result(id) => id.as_deref().is_some_and(|id| calls.iter().any(|call| call == id) && answered.insert(id.into())),
                _ => true,
            })
            .collect();
        kept.reverse();
        turn.blocks = kept;
        calls.clear();
    }
    let before = turns.len();
    turns.retain(|turn| !turn.blocks.is_empty());
    turns.len() != before
}

/// Gives every call without a result in the message after it a synthetic error
/// result there, as the session's client does; returns the calls it answered.
fn answer_every_call(turns: &mut Vec<Turn>, synthetic: &Interrupted) -> Vec<String> {
    let mut interrupted = Vec::new();
    let mut i = 0;
    while i < turns.len() {
        if !turns[i].assistant {
            i += 1;
            continue;
        }
        let calls: Vec<String> = call_ids(&turns[i]).into_iter().map(String::from).collect();
        if calls.is_empty() {
            i += 1;
            continue;
        }
        if turns.get(i + 1).is_none_or(|next| next.assistant) {
            turns.insert(i + 1, Turn { assistant: false, blocks: Vec::new() });
        }
        let next = &mut turns[i + 1];
        let missing: Vec<String> = calls
            .into_iter()
            .filter(|id| !next.blocks.iter().any(|b| matches!(&b.kind, Kind::Result(Some(answered)) if answered == id)))
            .collect();
        for id in &missing {
            let mut result = String::from("{\"content\":");
            json::push_string(&mut result, synthetic.result);
            result.push_str(",\"is_error\":true,\"tool_use_id\":");
            json::push_string(&mut result, id);
            result.push_str(",\"type\":\"tool_result\"}");
            next.blocks.push(Block::of(result));
        }
        // Only results ending the conversation: the next prompt would run into them.
        let only_results = next.blocks.iter().all(Block::is_result);
        let ends = !missing.is_empty() && i + 2 == turns.len() && only_results;
        interrupted.extend(missing);
        if let Some(reply) = synthetic.reply.filter(|_| ends) {
            turns.push(Turn { assistant: true, blocks: alloc::vec![Block::text(reply)] });
        }
        i += 2;
    }
    interrupted
}

/// A turn's blocks as a JSON array at the end of `out`.
fn push_blocks(out: &mut String, blocks: &[Block]) {
    out.push('[');
    for (n, block) in blocks.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(&block.json);
    }
    out.push(']');
}

/// `{"messages": [{"content", "role"}…], "system"?}`, written by hand as a `Value` of
/// it writes it: the blocks are copied, not built into a tree again.
fn anthropic(turns: &[Turn], system: Option<String>) -> (String, u32) {
    let blocks = turns.iter().flat_map(|t| &t.blocks).fold(0usize, |sum, b| sum.saturating_add(b.json.len() + 1));
    let mut body =
        String::with_capacity(blocks.saturating_add(turns.len() * 40).saturating_add(system.as_ref().map_or(0, |s| s.len() + 16) + 16));
    body.push_str("{\"messages\":[");
    for (n, turn) in turns.iter().enumerate() {
        if n > 0 {
            body.push(',');
        }
        body.push_str("{\"content\":");
        push_blocks(&mut body, &turn.blocks);
        body.push_str(if turn.assistant { ",\"role\":\"assistant\"}" } else { ",\"role\":\"user\"}" });
    }
    body.push(']');
    if let Some(system) = system {
        body.push_str(",\"system\":");
        json::push_string(&mut body, &system);
    }
    body.push('}');
    (body, u32::try_from(turns.len()).unwrap_or(u32::MAX))
}

/// A user block as an OpenAI content part. What its shape has no place for (an image
/// given as a file, a search result, a server tool's block) goes as a marker, so the
/// model knows one was there.
fn openai_part(block: &Value) -> Option<Value> {
    let marker = |kind: &str| Some(json!({ "type": "text", "text": crate::message::marker(Some(kind)) }));
    match block["type"].as_str()? {
        "text" => Some(json!({ "type": "text", "text": block["text"] })),
        // OpenAI's chat messages take a text document as text; anything else (a PDF)
        // as a marker, so the model knows one was there.
        "document" => match block["source"]["data"].as_str() {
            Some(data) if block["source"]["type"] == "text" => Some(json!({ "type": "text", "text": data })),
            _ => marker("document"),
        },
        "image" => {
            let source = &block["source"];
            let url = match source["type"].as_str() {
                Some("base64") => source["media_type"]
                    .as_str()
                    .zip(source["data"].as_str())
                    .map(|(media_type, data)| alloc::format!("data:{media_type};base64,{data}")),
                _ => source["url"].as_str().map(ToString::to_string),
            };
            match url {
                Some(url) => Some(json!({ "type": "image_url", "image_url": { "url": url } })),
                None => marker("image"),
            }
        }
        other => marker(other),
    }
}

/// `{"messages": [...]}` in OpenAI's chat shape, written by hand as a `Value` of it
/// writes it, from the blocks' fields: a tool's output is copied, not read into a tree
/// and written again.
fn openai(turns: &[Turn], system: Option<String>) -> (String, u32) {
    let blocks = turns.iter().flat_map(|t| &t.blocks).fold(0usize, |sum, b| sum.saturating_add(b.json.len() + 16));
    let mut body = String::with_capacity(blocks.saturating_add(system.as_ref().map_or(0, |s| s.len() + 32) + 16));
    body.push_str("{\"messages\":[");
    let mut count = 0u32;
    if let Some(system) = system {
        body.push_str("{\"content\":");
        json::push_string(&mut body, &system);
        body.push_str(",\"role\":\"system\"}");
        count = 1;
    }
    for turn in turns {
        count = count.saturating_add(openai_turn(turn, &mut body, count > 0));
    }
    body.push_str("]}");
    (body, count)
}

/// The messages of `turn` in OpenAI's shape at the end of `out` (after a comma when
/// `after` one); how many.
fn openai_turn(turn: &Turn, out: &mut String, after: bool) -> u32 {
    let mut count = 0u32;
    let mut open = |out: &mut String| {
        if after || count > 0 {
            out.push(',');
        }
        count = count.saturating_add(1);
    };
    let fields: Vec<Option<[Option<&str>; 7]>> = turn.blocks.iter().map(openai_fields).collect();
    // The fields of the blocks of `kind`: `type`, `text`, `id`, `name`, `input`,
    // `tool_use_id`, `content`.
    let of_kind = |kind: &'static str| fields.iter().flatten().filter(move |f| f[0] == Some(kind));
    if turn.assistant {
        let texts: Vec<&str> = of_kind("\"text\"").filter_map(|f| f[1]).filter(|text| text.starts_with('"')).collect();
        let calls: Vec<&[Option<&str>; 7]> = of_kind("\"tool_use\"").collect();
        // A reply of nothing OpenAI's shape holds (redacted thinking, a server tool's
        // blocks) would be one with neither content nor calls, which it refuses.
        if texts.is_empty() && calls.is_empty() {
            return count;
        }
        open(out);
        out.push_str("{\"content\":");
        match texts.as_slice() {
            [] => out.push_str("null"),
            [only] => out.push_str(only),
            _ => {
                let decoded: Vec<Cow<'_, str>> = texts.iter().filter_map(|text| json::str_value(text).0).collect();
                json::push_string(out, &decoded.join("\n"));
            }
        }
        out.push_str(",\"role\":\"assistant\"");
        for (n, call) in calls.iter().enumerate() {
            out.push_str(if n == 0 { ",\"tool_calls\":[" } else { "," });
            out.push_str("{\"function\":{\"arguments\":");
            json::push_string(out, call[4].unwrap_or("null"));
            out.push_str(",\"name\":");
            out.push_str(call[3].unwrap_or("null"));
            out.push_str("},\"id\":");
            out.push_str(call[2].unwrap_or("null"));
            out.push_str(",\"type\":\"function\"}");
        }
        if !calls.is_empty() {
            out.push(']');
        }
        out.push('}');
        return count;
    }
    for result in of_kind("\"tool_result\"") {
        open(out);
        out.push_str("{\"content\":");
        push_result_text(out, result[6]);
        out.push_str(",\"role\":\"tool\",\"tool_call_id\":");
        out.push_str(result[5].unwrap_or("null"));
        out.push('}');
    }
    // Each part: its JSON, and its `text` when it is a text part.
    let mut parts: Vec<(String, Option<String>)> = Vec::new();
    for (block, fields) in turn.blocks.iter().zip(&fields) {
        match fields.and_then(|f| f[0]) {
            Some("\"tool_result\"") => {}
            Some("\"text\"") => {
                let text = fields.and_then(|f| f[1]).unwrap_or("null");
                parts.push((alloc::format!("{{\"text\":{text},\"type\":\"text\"}}"), Some(text.into())));
            }
            _ => {
                if let Some(part) = openai_part(&serde_json::from_str(&block.json).unwrap_or_default()) {
                    let text = (part["type"] == "text").then(|| part["text"].to_string());
                    parts.push((part.to_string(), text));
                }
            }
        }
    }
    let content = match parts.as_slice() {
        [] => return count,
        [(_, Some(text))] => text.clone(),
        _ => alloc::format!("[{}]", parts.iter().map(|(part, _)| part.as_str()).collect::<Vec<_>>().join(",")),
    };
    open(out);
    out.push_str("{\"content\":");
    out.push_str(&content);
    out.push_str(",\"role\":\"user\"}");
    count
}

/// A block's fields that OpenAI's shape is built from, as canonical JSON (see
/// [`Block`]): `type`, `text`, `id`, `name`, `input`, `tool_use_id`, `content`; `None`
/// for a block that is no object.
fn openai_fields(block: &Block) -> Option<[Option<&str>; 7]> {
    json::fields_named(&block.json, ["type", "text", "id", "name", "input", "tool_use_id", "content"]).map(|(fields, _)| fields)
}

/// The text of a result's content for OpenAI's tool message, which holds text only: a
/// string, or its blocks joined, each other block a marker (`[image]`) so the model
/// knows one was there; written as a JSON string at the end of `out`.
fn push_result_text(out: &mut String, content: Option<&str>) {
    match content {
        // Canonical already: the string as it is.
        Some(text) if text.starts_with('"') => out.push_str(text),
        Some(blocks) if blocks.starts_with('[') => {
            let mut texts: Vec<Cow<'_, str>> = Vec::new();
            json::walk_array(blocks, |start| {
                let end = json::value_end(blocks.as_bytes(), start)?;
                let fields = json::fields_named(blocks.get(start..end)?, ["type", "text"]).map(|(fields, _)| fields);
                texts.push(match fields {
                    Some([Some("\"text\""), Some(text)]) if text.starts_with('"') => json::str_value(text).0.unwrap_or_default(),
                    Some([Some(kind), _]) if kind.starts_with('"') => {
                        Cow::Owned(crate::message::marker(Some(&json::str_value(kind).0.unwrap_or_default())))
                    }
                    _ => Cow::Owned(crate::message::marker(None)),
                });
                Some(end)
            });
            json::push_string(out, &texts.join("\n"));
        }
        _ => out.push_str("\"\""),
    }
}

/// The estimate every token count uses ([`crate::tokens`]), over the blocks sent.
fn estimate(turns: &[Turn]) -> u64 {
    let none = alloc::collections::BTreeSet::new();
    let mut blocks = String::new();
    crate::support::saturating_sum(turns.iter().map(|t| {
        blocks.clear();
        push_blocks(&mut blocks, &t.blocks);
        crate::tokens::content_tokens(Some(json::Raw::valid(&blocks)), &none)
    }))
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    use super::*;

    /// What a turn's rules read of blocks: the same by structure as through a `Value`.
    fn read(blocks: &[Block]) -> Vec<(&str, Option<&str>, Option<&str>)> {
        blocks
            .iter()
            .map(|b| match &b.kind {
                Kind::Call(id) => (b.json.as_str(), Some("call"), id.as_deref()),
                Kind::Result(id) => (b.json.as_str(), Some("result"), id.as_deref()),
                Kind::Thinking { signed } => (b.json.as_str(), Some(if *signed { "signed thinking" } else { "thinking" }), None),
                Kind::Blank => (b.json.as_str(), Some("blank"), None),
                Kind::Other => (b.json.as_str(), None, None),
            })
            .collect()
    }

    #[test]
    fn a_claude_code_block_is_read_by_structure_as_through_a_value() {
        let content = r#"[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls","timeout":120}},{"type":"tool_result","tool_use_id":"toolu_1","content":"a\nb\t\"c\" \u00e9\/","is_error":false},{"type":"text","text":"done"}]"#;
        let structure = blocks_by_structure(content).unwrap();
        assert_eq!(read(&structure), read(&blocks_by_value(content)));
        assert_eq!(read(&structure)[1].2, Some("toolu_1"));
        assert_eq!(structure[2].json, r#"{"text":"done","type":"text"}"#);
        // Not an array, or more after it: nothing, as a `Value` reads it.
        for odd in [r#"{"type":"text"}"#, r#"[{"type":"text","text":"a"}] x"#, "[1.5]"] {
            assert_eq!(read(&blocks_of(odd)), read(&blocks_by_value(odd)), "{odd}");
        }
        // An object serde_json reads as the JSON in its string: a tool call, through a `Value`.
        let wrapped = r#"[{"$serde_json::private::RawValue":"{\"type\":\"tool_use\",\"id\":\"x\",\"name\":\"n\",\"input\":{}}"}]"#;
        assert_eq!(read(&blocks_of(wrapped)), read(&blocks_by_value(wrapped)));
        assert_eq!(read(&blocks_of(wrapped))[0].2, Some("x"));
    }

    #[test]
    fn the_corpus_blocks_read_by_structure_as_through_a_value() {
        let paths = crate::support::corpus_files();
        let (mut contents, mut by_structure) = (0, 0);
        for path in &paths {
            for line in std::fs::read_to_string(path).unwrap().lines() {
                let Ok(value) = serde_json::from_str::<Value>(line) else { continue };
                let Some(content) = value["message"]["content"].as_array().map(|_| value["message"]["content"].to_string()) else {
                    continue;
                };
                contents += 1;
                let by_value = blocks_by_value(&content);
                if let Some(blocks) = blocks_by_structure(&content) {
                    by_structure += 1;
                    assert_eq!(read(&blocks), read(&by_value), "{}: {line}", path.display());
                }
            }
        }
        assert!(contents >= 500 && by_structure * 100 >= contents * 95, "{by_structure} of {contents} contents read by structure");
    }

    /// Blocks as writers other than `serde_json` write them: keys in any order, ids of
    /// odd types, escapes, numbers of every form, items that are no object.
    fn any_blocks() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let string = "\"([a-z é/]|\\\\[n\"\\\\/]|\\\\u00e9|\\\\u0041){0,6}\"";
        let kind = prop_oneof![Just("\"tool_use\""), Just("\"tool_result\""), Just("\"text\""), Just("\"tool\\u005fuse\""), Just("7")];
        let scalar = prop_oneof![
            4 => string.prop_map(String::from),
            2 => Just(String::from("12")),
            1 => Just(String::from("0.5")),
            1 => Just(String::from("null"))
        ];
        let input = proptest::collection::vec(("\"[a-c]\"", scalar.clone()), 0..3)
            .prop_map(|members| format!("{{{}}}", members.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(",")));
        let block = (kind, scalar.clone(), scalar.clone(), string, input, proptest::bool::weighted(0.2)).prop_flat_map(
            |(kind, id, answers, text, input, repeat)| {
                let mut members = alloc::vec![
                    format!("\"type\":{kind}"),
                    format!("\"id\":{id}"),
                    format!("\"tool_use_id\":{answers}"),
                    format!("\"text\":{text}"),
                    format!("\"input\" : {input}"),
                    format!("\"content\":[{{\"type\":\"text\",\"text\":{text}}}]"),
                ];
                if repeat {
                    members.push(String::from("\"id\":\"again\""));
                }
                Just(members).prop_shuffle().prop_map(|members| format!("{{{}}}", members.join(",")))
            },
        );
        proptest::collection::vec(prop_oneof![4 => block, 1 => scalar], 0..4).prop_map(|blocks| format!("[{}]", blocks.join(", ")))
    }

    proptest::proptest! {
        #[test]
        fn any_blocks_read_by_structure_as_through_a_value(content in any_blocks()) {
            if let Some(blocks) = blocks_by_structure(&content) {
                let by_value = blocks_by_value(&content);
                proptest::prop_assert_eq!(read(&blocks), read(&by_value));
            }
        }
    }

    /// The text of a result's content for OpenAI's tool message, which holds text only: a
    /// string, or its blocks joined, each other block a marker (`[image]`) so the model
    /// knows one was there.
    fn result_text(content: &Value) -> String {
        match content {
            Value::String(text) => text.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .map(|b| match b["text"].as_str() {
                    Some(text) if b["type"] == "text" => text.to_string(),
                    _ => alloc::format!("[{}]", b["type"].as_str().unwrap_or("block")),
                })
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }

    /// [`openai_turn`] through `Value`s: the messages of `turn`.
    fn openai_turn_by_value(turn: &Turn) -> Vec<Value> {
        let blocks: Vec<Value> = turn.blocks.iter().map(|b| serde_json::from_str(&b.json).unwrap_or_default()).collect();
        if turn.assistant {
            let text: Vec<&str> = blocks.iter().filter(|b| b["type"] == "text").filter_map(|b| b["text"].as_str()).collect();
            let calls: Vec<Value> = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| {
                    let arguments = b["input"].to_string();
                    json!({ "id": b["id"], "type": "function", "function": { "name": b["name"], "arguments": arguments } })
                })
                .collect();
            if text.is_empty() && calls.is_empty() {
                return Vec::new();
            }
            let mut message = json!({ "role": "assistant", "content": if text.is_empty() { Value::Null } else { text.join("\n").into() } });
            if !calls.is_empty() {
                message["tool_calls"] = calls.into();
            }
            return alloc::vec![message];
        }
        let mut messages: Vec<Value> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .map(|result| json!({ "role": "tool", "tool_call_id": result["tool_use_id"], "content": result_text(&result["content"]) }))
            .collect();
        let parts: Vec<Value> = blocks.iter().filter(|b| b["type"] != "tool_result").filter_map(openai_part).collect();
        let content = match parts.as_slice() {
            [] => return messages,
            [only] if only["type"] == "text" => only["text"].clone(),
            _ => Value::Array(parts),
        };
        messages.push(json!({ "role": "user", "content": content }));
        messages
    }

    /// The old rendering of OpenAI's shape, through `Value`s: the oracle the one by
    /// structure is held to.
    fn openai_through_values(turns: &[Turn], system: Option<String>) -> (String, u32) {
        let mut messages = Vec::new();
        if let Some(system) = system {
            messages.push(json!({ "role": "system", "content": system }));
        }
        for turn in turns {
            messages.extend(openai_turn_by_value(turn));
        }
        let count = messages.len() as u32;
        (json!({ "messages": messages }).to_string(), count)
    }

    /// Turns of blocks of every kind OpenAI's shape reads, their keys in any order, their
    /// fields sometimes of another type or absent.
    fn any_turns() -> impl proptest::strategy::Strategy<Value = Vec<(bool, String)>> {
        use proptest::prelude::*;
        let string = "\"([a-z é/\\[\\]]|\\\\[n\"\\\\]|\\\\u00e9){0,6}\"";
        let value = prop_oneof![4 => string.prop_map(String::from), 1 => Just(String::from("7")), 1 => Just(String::from("null"))];
        let object = |members: Vec<(&'static str, String)>| {
            Just(members)
                .prop_shuffle()
                .prop_map(|m| format!("{{{}}}", m.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect::<Vec<_>>().join(",")))
        };
        let text = value.clone().prop_flat_map(move |text| object(alloc::vec![("type", String::from("\"text\"")), ("text", text)]));
        let call =
            (value.clone(), value.clone(), prop_oneof![Just(String::from("{\"b\":[1,\"x\\n\"],\"a\":null}")), Just(String::from("7"))])
                .prop_flat_map(move |(id, name, input)| {
                    object(alloc::vec![("type", String::from("\"tool_use\"")), ("id", id), ("name", name), ("input", input)])
                });
        let item = prop_oneof![
            text.clone(),
            Just(String::from("{\"type\":\"image\",\"source\":{\"type\":\"url\",\"url\":\"u\"}}")),
            Just(String::from("{\"text\":\"t\"}")),
            Just(String::from("3")),
        ];
        let result_content =
            prop_oneof![value.clone(), proptest::collection::vec(item, 0..3).prop_map(|items| format!("[{}]", items.join(","))),];
        let result = (value.clone(), result_content).prop_flat_map(move |(id, content)| {
            object(alloc::vec![("type", String::from("\"tool_result\"")), ("tool_use_id", id), ("content", content)])
        });
        let block = prop_oneof![
            3 => text,
            2 => call,
            2 => result,
            1 => Just(String::from("{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"AAAA\"}}")),
            1 => Just(String::from("{\"type\":\"document\",\"source\":{\"type\":\"text\",\"data\":\"a doc\"}}")),
            1 => Just(String::from("{\"type\":\"thinking\",\"thinking\":\"hm\",\"signature\":\"s\"}")),
            1 => Just(String::from("\"a string item\"")),
        ];
        let turn = (any::<bool>(), proptest::collection::vec(block, 0..4))
            .prop_map(|(assistant, blocks)| (assistant, format!("[{}]", blocks.join(","))));
        proptest::collection::vec(turn, 0..5)
    }

    proptest::proptest! {
        /// OpenAI's shape written by structure is, byte for byte, what `Value`s of the
        /// same turns write.
        #[test]
        fn openai_messages_are_written_as_through_values(turns in any_turns(), system in proptest::option::of("[a-z\"]{0,5}")) {
            let turns: Vec<Turn> = turns.iter().map(|(assistant, content)| Turn { assistant: *assistant, blocks: blocks_of(content) }).collect();
            proptest::prop_assert_eq!(openai(&turns, system.clone()), openai_through_values(&turns, system));
        }
    }
}
