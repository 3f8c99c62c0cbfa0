//! The keyed session index: which transcript a conversation bucket (a session key such
//! as `agent:main:main` or `cron:nightly`) continues, with the caller's labels, and a
//! cached summary of every session so listing reads no transcript.
//!
//! One rule for what lives where: **the index holds what no transcript can say, and
//! caches what a transcript can.** A key's current session id, its earlier ids, its
//! origin, model, toggles and metadata are the index's own (recovered from its log
//! and snapshot). A session's counts, title, token totals, compaction count and the
//! times of its last memory flush and extraction are derived from the transcript (its
//! marker lines stay the truth) and cached in a row that is valid while the
//! transcript's part sizes are the ones it was computed from; a row whose sizes differ
//! from a listing's is computed again. So the index can always be rebuilt from the
//! transcripts, except for the key bindings, which are the caller's routing decisions.
//!
//! Storage (see [`log`]): `index/snapshot-<g>.json` holds every entry as of generation
//! `g`; `index/log-<g>.jsonl` the changes since, one line each. An update appends one
//! line — O(1) in the size of the index, never a rewrite of it — and when the log is
//! longer than the index it describes, a new snapshot starts the next generation.

use alloc::string::String;
use alloc::vec::Vec;

pub(crate) mod log;
pub mod openclaw;
mod ops;
mod rollover;
pub mod route;
pub mod sessionkey;

pub use log::IndexHealth;
pub use rollover::RolledOver;
pub use route::{ChatType, DmScope, Inbound, Resolution, ResolveAction, RoutePolicy};

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

/// A key with what its current session's transcript says.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KeyView {
    pub entry: KeyEntry,
    /// The current session as the store lists it; `None` until its first message.
    pub session: Option<crate::SessionInfo>,
    pub counters: Counters,
}

/// Changes to a key's labels: what is `Some` (or listed) is set, an origin whole (the
/// fields it leaves out are cleared, not kept: an origin is one place a message came
/// from, not fields to mix from two); an empty value removes a toggle or a metadata
/// field.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct KeyPatch {
    pub title: Option<String>,
    pub model: Option<String>,
    pub origin: Option<Origin>,
    pub toggles: Vec<Field>,
    pub metadata: Vec<Field>,
}

/// Sets or removes `changes` in `fields`, keeping them sorted by name.
pub(crate) fn merge_fields(fields: &mut Vec<Field>, changes: &[Field]) {
    for change in changes {
        fields.retain(|f| f.name != change.name);
        if !change.value.is_empty() {
            fields.push(change.clone());
        }
    }
    fields.sort();
}
