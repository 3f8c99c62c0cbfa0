//! The transcript model over the lines `scan` read: threading them into a
//! conversation, the resume context and its rendering for a provider, branches,
//! structural checks and token counts. Everything here works on the borrowed lines of
//! one read.

use alloc::string::String;
use alloc::vec::Vec;

pub(crate) mod branches;
pub(crate) mod check;
pub(crate) mod context;
pub(crate) mod render;
pub(crate) mod thread;
pub mod tokens;

pub use crate::scan::{Entry, SkippedLine};
pub use branches::{AgentUsage, Branch, Ledger, Prices};
pub use check::{CheckReport, Finding};
pub use context::{Context, ContextMessage};
pub use render::ProviderContext;

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
