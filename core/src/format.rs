//! The dialects' names and the kinds of Mneme's own lines: values every layer shares
//! (the errors, the reader, the dialects), so this module imports none of them. Each
//! dialect is detected and written in `dialect/`, and read in `scan` (envelopes) and
//! `dialect::canonical` (messages).

/// A transcript dialect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Claude Code's session JSONL (`uuid` / `parentUuid`); also what new sessions get.
    #[default]
    Claude,
    /// pi-coding-agent's v3 sessions: a `session` header, then `id` / `parentId` entries.
    Pi,
    /// crab: an optional meta line, bare `{role, content}` messages, `{"compact"}` markers.
    Crab,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Claude => "claude",
            Format::Pi => "pi",
            Format::Crab => "crab",
        }
    }
}

/// Mneme's bookkeeping lines: facts about a session that are not conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Marker {
    MemoryFlush,
    MemoryExtraction,
    CompactionFailure,
    ExtractionFailure,
    /// Where an imported session came from.
    Import,
}

impl Marker {
    pub fn kind(self) -> &'static str {
        match self {
            Marker::MemoryFlush => "memory-flush",
            Marker::MemoryExtraction => "memory-extraction",
            Marker::CompactionFailure => "compaction-failure",
            Marker::ExtractionFailure => "extraction-failure",
            Marker::Import => "import",
        }
    }

    pub fn parse(kind: &str) -> Option<Marker> {
        [Marker::MemoryFlush, Marker::MemoryExtraction, Marker::CompactionFailure, Marker::ExtractionFailure, Marker::Import]
            .into_iter()
            .find(|m| m.kind() == kind)
    }
}
