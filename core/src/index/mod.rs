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
//! Storage (see `catalog/log.rs`): `index/snapshot-<g>.json` holds every entry as of generation
//! `g`; `index/log-<g>.jsonl` the changes since, one line each. An update appends one
//! line — O(1) in the size of the index, never a rewrite of it — and when the log is
//! longer than the index it describes, a new snapshot starts the next generation.

use alloc::string::String;
use alloc::vec::Vec;

pub mod crab;
pub mod openclaw;
mod ops;
mod rollover;
pub mod route;
pub mod sessionkey;

pub use crate::catalog::{ChatType, Counters, Field, IndexHealth, KeyEntry, Origin};
pub use rollover::RolledOver;
pub use route::{DmScope, Inbound, Resolution, ResolveAction, RoutePolicy};

/// A store's key index (the WIT's `index` interface): `store.index()`. Its operations
/// read and write the catalog, and rollover and crab's sessions write sessions too.
pub struct Index<'s, S> {
    pub(crate) sessions: crate::sessions::Sessions<'s, S>,
}

/// What rebuilding the index did.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RebuildReport {
    /// What reading the index found before (damaged lines, torn bytes, …).
    pub before: IndexHealth,
    /// Sessions read from their transcripts.
    pub session_count: u32,
    /// Sessions the index had no row for.
    pub added: u32,
    /// Rows that differed from what the transcript says.
    pub changed: u32,
    /// Rows of transcripts that are gone.
    pub dropped: u32,
    /// Keys kept as they were.
    pub key_count: u32,
    /// Files that could not be read as a session.
    pub skipped: Vec<crate::SkippedKey>,
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
