//! The catalog: every session key and a cached row per session, kept in one log (see
//! [`log`]). The key index's operations (`index/`) and the session operations
//! (`sessions/`) both read and write it through a [`Catalog`].

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;

use crate::base::Base;
use crate::error::Error;

pub(crate) mod log;

pub use log::IndexHealth;
pub(crate) use log::{Change, IndexState, SessionRow};

/// What kind of conversation a key is for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChatType {
    #[default]
    Direct,
    Group,
    Channel,
    Room,
    Cron,
    Hook,
}

impl ChatType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChatType::Direct => "direct",
            ChatType::Group => "group",
            ChatType::Channel => "channel",
            ChatType::Room => "room",
            ChatType::Cron => "cron",
            ChatType::Hook => "hook",
        }
    }

    pub fn parse(text: &str) -> Result<ChatType, Error> {
        [ChatType::Direct, ChatType::Group, ChatType::Channel, ChatType::Room, ChatType::Cron, ChatType::Hook]
            .into_iter()
            .find(|t| t.as_str() == text)
            .ok_or_else(|| Error::InvalidArgument(format!("unknown chat type `{text}`: use direct, group, channel, room, cron or hook")))
    }
}

/// A name and a value the caller attaches (a toggle, a metadata field).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Field {
    pub name: String,
    pub value: String,
}

/// Where a conversation comes from: the labels a chat UI shows for it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Origin {
    /// The messaging provider (`telegram`, `slack`, `discord`, …).
    pub provider: Option<String>,
    /// The group's or channel's subject line.
    pub subject: Option<String>,
    /// The room or space the conversation is in.
    pub room: Option<String>,
    pub display_name: Option<String>,
}

/// One session key's entry.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeyEntry {
    pub key: String,
    /// The transcript the key continues now.
    pub session_id: String,
    pub created_ms: i64,
    /// The last inbound message routed to the key (what idle and daily resets count from).
    pub updated_ms: i64,
    /// When the current session id was given to the key.
    pub session_started_ms: i64,
    pub chat_type: ChatType,
    #[serde(default)]
    pub origin: Origin,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// Settings the caller keeps per conversation (thinking level, send policy, …).
    #[serde(default)]
    pub toggles: Vec<Field>,
    /// Fields the caller looks keys up by (a campaign id, an agent type).
    #[serde(default)]
    pub metadata: Vec<Field>,
    /// Session ids the key continued before, oldest first: a reset never deletes.
    #[serde(default)]
    pub previous_session_ids: Vec<String>,
    /// Why the key got its current session id.
    #[serde(default)]
    pub reason: String,
}

/// What a session's transcript says about it, cached by the index.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Counters {
    /// Tokens its replies reported, each reply once.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    /// What the last reply reported it was sent (input and cache): how full the
    /// context was.
    pub context_tokens: u64,
    pub compaction_count: u32,
    pub memory_flush_ms: Option<i64>,
    /// Compactions before the last memory flush.
    pub memory_flush_compaction_count: Option<u32>,
    pub extraction_ms: Option<i64>,
}

/// A summary of one session, as `sessions list` shows it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionInfo {
    pub id: String,
    pub project: String,
    /// The storage key of the first part.
    pub key: String,
    pub parts: u32,
    /// All parts together.
    pub bytes: u64,
    /// Readable entries of every type.
    pub entry_count: u32,
    /// Live messages: `user` and `assistant` entries, and pi's tool results (Claude Code
    /// writes a tool's result as a `user` entry: a conversation counts alike in both).
    pub message_count: u32,
    /// The last `custom-title`, else the last `summary` whose leaf is in the file, else
    /// the first user prompt; shortened.
    pub title: Option<String>,
    /// Timestamp of the first entry that has one.
    pub created: Option<String>,
    /// Timestamp of the last entry that has one.
    pub updated: Option<String>,
}

/// The catalog as an area of a store sees it: the shared base and the log's state.
pub(crate) struct Catalog<'s, S> {
    pub base: &'s Base<S>,
    pub state: &'s RefCell<Option<IndexState>>,
}

impl<S> Clone for Catalog<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Catalog<'_, S> {}
