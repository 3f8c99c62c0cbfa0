//! Agent messages: what an agent loop exchanges with a model, in one canonical shape —
//! the Anthropic Messages API's content blocks, Claude Code's native ones. Input in
//! Anthropic's or OpenAI's chat shape is validated and converted here (`input`); the
//! tool calls still waiting for a result are followed by one rule (`calls`); a
//! message's text for people is `text`. Stored lines of every dialect are read back
//! into the same blocks in `dialect::canonical`; a resumed context is rendered for a
//! provider in `transcript/render.rs`.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::Error;

pub(crate) mod calls;
pub(crate) mod input;
pub(crate) mod items;
pub(crate) mod text;

pub use text::shown_text;

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

/// Who speaks in a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    /// Parses `user` or `assistant`, the spelling of every binding.
    pub fn parse(text: &str) -> Result<Role, Error> {
        match text {
            "user" => Ok(Role::User),
            "assistant" => Ok(Role::Assistant),
            other => Err(Error::InvalidArgument(alloc::format!("unknown role `{other}`: use `user` or `assistant`"))),
        }
    }
}

/// A model API's message shape: how turns are given to Mneme and how a context is
/// handed back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// Anthropic's Messages API: `{role, content: [blocks]}`, tool results as
    /// `tool_result` blocks in the next user message.
    #[default]
    Anthropic,
    /// OpenAI's chat completions: assistant `tool_calls`, `tool` role results.
    Openai,
}

/// Messages to append in one write: an assistant reply and the results of the tools it
/// called, or any run of messages. All of it lands, or none of it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Turn {
    /// A fresh unique id (UUID v4) from the host: the first line's; the ids of the
    /// other lines are derived from it, since the core has no randomness.
    pub uuid: String,
    /// When the turn was written, Unix milliseconds.
    pub now_ms: i64,
    /// The agent's working directory; a new session is filed under its project.
    pub cwd: String,
    /// The shape `messages` is written in.
    pub provider: Provider,
    /// One message or a JSON array of them, in `provider`'s shape. Anthropic: the API's
    /// message (or response) objects, with `id`, `model`, `stop_reason` and `usage` kept
    /// on assistant messages. OpenAI: chat messages (`tool_calls`, `tool` role).
    pub messages: String,
    /// Continue from this entry instead of the newest leaf: a rewind. Nothing is
    /// deleted; the old branch stays in the file. Results in the turn then answer calls
    /// pending at that entry or made in the turn.
    pub parent: Option<String>,
    /// Write the turn into this sub-agent's transcript of the session instead.
    pub agent: Option<AgentRef>,
}

/// A sub-agent of a session: its transcript is `<session>/subagents/agent-<id>.jsonl`
/// (Claude Code 2.1's layout), of sidechain lines that carry `agentId`.
// A key spelled otherwise (`parentCall`) is refused, not ignored: the sub-agent would
// be written without its link.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentRef {
    /// Letters, digits, `-` and `_`.
    pub id: String,
    /// The session's pending tool call that started the sub-agent. When the sub-agent's
    /// transcript is created, the session gets a link to it there, as Claude Code
    /// writes one: a `progress` entry (`agent_progress`, the `agentId`) under that call.
    pub parent_call: Option<String>,
}

/// Who speaks in an injected message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Speaker {
    System,
    User,
    Assistant,
}

/// Where an injected message goes in a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// Before the first message (after the system prompt).
    Start,
    /// Just before the newest user prompt: where fresh recall and environment blocks
    /// keep the cached prefix intact.
    BeforeLastPrompt,
    /// After the last message.
    End,
}

/// Ephemeral context (recalled memories, an environment block): placed in the context
/// handed to the model, never written to the session.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Injection {
    pub role: Speaker,
    pub place: Place,
    pub text: String,
}

/// One message in canonical form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Message {
    pub role: Role,
    pub blocks: Vec<Block>,
    pub meta: Meta,
}

/// What a provider said about a reply besides its content.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Meta {
    /// The API's message id (`msg_…`): Claude Code's split lines of one reply share it.
    pub id: Option<String>,
    pub model: Option<String>,
    /// Anthropic's spelling: `end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, ...
    pub stop_reason: Option<String>,
    pub usage: Option<Usage>,
    /// The API whose shape the message came in: what produced a reply, for dialects
    /// that record it (pi replays a reply's thinking only to the API that wrote it).
    pub api: Option<Provider>,
    /// When the message was said (Unix milliseconds), for a message that carries its
    /// own time: an imported one keeps it. Otherwise its lines get the turn's time.
    pub at: Option<i64>,
    /// Where the caller put the message in what it sent, for errors about it.
    pub origin: Option<Origin>,
}

/// A message's place in the list a caller sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The message at this index.
    Message(u32),
    /// A run of OpenAI `tool` messages from this index, one result block each.
    Results(u32),
}

impl Message {
    /// The index, in what the caller sent, of the message block `block` of this one
    /// came from; `index` (its place among the converted messages) when not known.
    pub fn origin_of(&self, index: usize, block: usize) -> u32 {
        match self.meta.origin {
            Some(Origin::Message(at)) => at,
            Some(Origin::Results(first)) => first.saturating_add(block as u32),
            None => index as u32,
        }
    }
}

/// Token usage of one model reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_creation: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        crate::support::saturating_sum([self.input, self.output, self.cache_read, self.cache_creation])
    }

    /// Each field raised to `other`'s where that is more (a streamed reply's usage so
    /// far, taken to where it ended).
    pub fn raise_to(&mut self, other: &Usage) {
        self.input = self.input.max(other.input);
        self.output = self.output.max(other.output);
        self.cache_read = self.cache_read.max(other.cache_read);
        self.cache_creation = self.cache_creation.max(other.cache_creation);
    }

    pub fn add(&mut self, other: &Usage) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_creation = self.cache_creation.saturating_add(other.cache_creation);
    }
}

/// One content block: its JSON in the Anthropic shape, and what the write path needs
/// to know about it without parsing it again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    pub kind: BlockKind,
    pub json: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BlockKind {
    Text,
    Thinking,
    RedactedThinking,
    ToolUse {
        id: String,
        name: String,
    },
    ToolResult {
        tool_use_id: String,
    },
    Image,
    Document,
    /// A block type this version does not know (server tools, citations, ...): kept as
    /// given where the dialect can hold it.
    Other,
}

impl Block {
    pub fn text(text: &str) -> Block {
        let mut json = String::with_capacity(text.len() + 32);
        json.push_str(r#"{"type":"text","text":"#);
        crate::support::json::push_string(&mut json, text);
        json.push('}');
        Block { kind: BlockKind::Text, json }
    }

    /// A text block's `text` as its JSON has it (quotes and escapes included).
    pub(crate) fn text_json(&self) -> Option<&str> {
        if self.kind != BlockKind::Text {
            return None;
        }
        let ([text], _) = crate::support::json::fields_named(&self.json, ["text"])?;
        text
    }

    pub fn value(&self) -> serde_json::Value {
        serde_json::from_str(&self.json).unwrap_or_default()
    }
}

/// What stands for a block of type `kind` where a shape has no place for it (OpenAI's
/// tool message, a pi session, a line of text shown to a person): `[document]`, so the
/// reader knows one was there.
pub fn marker(kind: Option<&str>) -> String {
    alloc::format!("[{}]", kind.unwrap_or("block"))
}

impl Message {
    /// A message of one text block.
    pub fn text(role: Role, text: &str) -> Message {
        Message { role, blocks: alloc::vec![Block::text(text)], meta: Meta::default() }
    }

    /// The text of a message made only of text blocks, joined by newlines.
    pub fn plain_text(&self) -> Option<String> {
        let texts: Option<Vec<String>> = self
            .blocks
            .iter()
            .map(|b| match b.kind {
                // The block's JSON is valid (serialised, or checked on input): its text
                // is found by structure, not by building a `Value` of it.
                BlockKind::Text => crate::scan::parse_block(&b.json).and_then(|block| block.text.0).map(Into::into),
                _ => None,
            })
            .collect();
        match texts {
            Some(mut texts) if texts.len() == 1 => texts.pop(),
            texts => texts.map(|t| t.join("\n")),
        }
    }
}
