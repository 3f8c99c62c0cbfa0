//! The format-independent transcript model: scanning lines into envelopes, threading
//! them into a conversation, the resume context, structural checks and token counts.
//! Everything here works on the borrowed lines of one read.

use alloc::string::String;
use alloc::vec::Vec;

pub(crate) mod branches;
pub(crate) mod check;
pub(crate) mod context;
pub(crate) mod scan;
pub(crate) mod thread;
pub mod tokens;

pub use branches::{AgentUsage, Branch, Ledger, Prices};
pub use check::{CheckReport, Finding};
pub use context::{Context, ContextMessage};

/// One entry of a transcript, with the fields every consumer needs lifted out and the
/// JSON object itself kept verbatim (fields Mneme does not know survive untouched).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// 1 for the session's base file, 2 for `<id>_part2.jsonl`, ...
    pub part: u32,
    /// 1-based line number within the part.
    pub line: u32,
    /// The entry's `type` (`user`, `assistant`, `system`, `summary`, `progress`, ...).
    #[serde(rename = "type")]
    pub type_: String,
    /// `uuid` (or pi's `id`).
    pub uuid: Option<String>,
    /// `parentUuid` (or Cersei's `parent_uuid`, pi's `parentId`).
    pub parent_uuid: Option<String>,
    pub session_id: Option<String>,
    pub timestamp: Option<String>,
    /// `message.role`, for entries that carry a message.
    pub role: Option<String>,
    /// The message's text: a string content, or its `text` blocks joined by newlines.
    pub text: String,
    /// Part of a sub-agent's conversation (`isSidechain`), not the main one.
    pub is_sidechain: bool,
    /// The JSON object exactly as stored (for glued lines, just this object).
    pub raw: String,
    /// What the write that returned this entry took out of it (see `redact`); empty
    /// for entries read back.
    pub redacted: Vec<crate::redact::Redacted>,
}

/// A line the reader could not use, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkippedLine {
    pub part: u32,
    pub line: u32,
    pub reason: String,
}

/// How many entries of one `type` a load found.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TypeCount {
    #[serde(rename = "type")]
    pub type_: String,
    pub count: u32,
}

/// What a load found besides the entries.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LoadReport {
    /// Entries read, of every type, tombstone lines and tombstoned entries included.
    pub entry_count: u32,
    /// `entries` by type, sorted by type name (`""` for entries without a type).
    pub by_type: Vec<TypeCount>,
    /// Lines that could not be read at all.
    pub skipped: Vec<SkippedLine>,
    /// The last part ends in a fragment without a newline: a write cut off mid-line.
    pub torn_tail: bool,
    /// Objects recovered by splitting lines that held several JSON objects glued
    /// together (`{…}{…}`), counting every object on such lines.
    pub recovered_glued: u32,
    /// Lines that held invalid UTF-8; the bad bytes read as U+FFFD and the entry is kept.
    pub invalid_utf8: u32,
    /// Lines that held a lone UTF-16 surrogate escape (`\ud83d` without its pair);
    /// it reads as U+FFFD and the text is kept.
    pub lone_surrogates: u32,
    /// Entries hidden by tombstones.
    pub tombstoned: u32,
}

/// A text's first non-blank line, cut to 80 characters: how titles and branch previews
/// show a message.
pub(crate) fn shorten(text: &str) -> String {
    const CHARS: usize = 80;
    let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    match first_line.char_indices().nth(CHARS) {
        Some((cut, _)) => alloc::format!("{}…", &first_line[..cut]),
        None => first_line.into(),
    }
}
