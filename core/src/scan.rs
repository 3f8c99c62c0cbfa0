//! Reading Claude Code JSONL: tolerant, and never silent about what it skipped.
//!
//! Lines are split with `memchr` and only the envelope (type, ids, timestamps, flags)
//! is read; strings borrow from the input and message bodies stay raw JSON until a
//! caller asks for their text. A line is checked and its envelope read in one pass by
//! [`validate`] when it surely can be (almost every line), and by `serde_json`
//! otherwise, which then says what is wrong with it.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::storage::Job;
use crate::support::json::{self, Raw};
use crate::support::lenient::{Count, Flag, Str};
use crate::support::validate;

/// pi's spelling of Mneme's own lines (a `custom` entry, `customType` `mneme.<kind>`):
/// the reader knows them in every dialect, and pi's dialect writes them.
pub(crate) const CUSTOM_PREFIX: &str = "mneme.";
pub(crate) const TOMBSTONE_TYPE: &str = "mneme.tombstone";

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

/// The fields the core reads from a line, as the line spells them: every alias apart,
/// every field inline. What a line keeps of it is an [`Envelope`], whose fields and
/// [`Rare`]'s say what each is.
#[derive(Default, Deserialize)]
#[cfg_attr(test, derive(Debug, PartialEq))]
struct EnvelopeFields<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Str<'a>,
    #[serde(default, borrow)]
    uuid: Str<'a>,
    #[serde(default, borrow)]
    id: Str<'a>,
    #[serde(rename = "parentUuid", default, borrow)]
    parent_uuid: Str<'a>,
    #[serde(rename = "parent_uuid", default, borrow)]
    parent_uuid_snake: Str<'a>,
    #[serde(rename = "parentId", default, borrow)]
    parent_id: Str<'a>,
    #[serde(rename = "logicalParentUuid", default, borrow)]
    logical_parent_uuid: Str<'a>,
    #[serde(rename = "sessionId", default, borrow)]
    session_id: Str<'a>,
    #[serde(rename = "session_id", default, borrow)]
    session_id_snake: Str<'a>,
    #[serde(default, borrow)]
    timestamp: Str<'a>,
    #[serde(default, borrow)]
    cwd: Str<'a>,
    #[serde(default, borrow)]
    subtype: Str<'a>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Flag,
    #[serde(rename = "isMeta", default)]
    is_meta: Flag,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Flag,
    #[serde(rename = "queueTranscriptOnly", default)]
    queue_transcript_only: Flag,
    #[serde(default, borrow)]
    deleted_uuid: Str<'a>,
    #[serde(rename = "leafUuid", default, borrow)]
    leaf_uuid: Str<'a>,
    #[serde(default, borrow)]
    summary: Str<'a>,
    #[serde(rename = "customTitle", default, borrow)]
    custom_title: Str<'a>,
    #[serde(default, borrow)]
    message: Option<Raw<'a>>,
    #[serde(rename = "compactMetadata", default, borrow)]
    compact_metadata: Option<Raw<'a>>,
    #[serde(rename = "microcompactMetadata", default, borrow)]
    microcompact_metadata: Option<Raw<'a>>,
    #[serde(rename = "firstKeptEntryId", default, borrow)]
    first_kept_entry_id: Str<'a>,
    #[serde(rename = "firstKeptEntryIndex", default)]
    first_kept_entry_index: Count,
    #[serde(default, borrow)]
    role: Str<'a>,
    #[serde(default, borrow)]
    compact: Str<'a>,
    #[serde(default, borrow)]
    name: Str<'a>,
    #[serde(default, borrow)]
    agent: Str<'a>,
    #[serde(rename = "customType", default, borrow)]
    custom_type: Str<'a>,
    #[serde(default, borrow)]
    data: Option<Raw<'a>>,
}

/// What a line keeps of its [`EnvelopeFields`]: the fields every dialect's ordinary line
/// has, the aliases of one field merged, and the rest boxed apart, there only on the
/// lines that have any. A long session's lines are walked many times over (the leaf,
/// the index, the chain): the smaller each, the fewer of them fall out of the cache.
#[derive(Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
pub(crate) struct Envelope<'a> {
    pub kind: Str<'a>,
    /// `uuid`, else pi's `id`.
    uuid: Str<'a>,
    /// `parentUuid`, else Cersei's `parent_uuid`, else pi's `parentId`.
    parent_uuid: Str<'a>,
    /// `sessionId`, else Cersei's `session_id`.
    session_id: Str<'a>,
    pub timestamp: Str<'a>,
    pub cwd: Str<'a>,
    pub message: Option<Raw<'a>>,
    pub is_sidechain: Flag,
    pub is_meta: Flag,
    pub is_compact_summary: Flag,
    /// `kind` as one of the types the core tells apart, set once where the line is
    /// read: the questions asked of every line over and over (a message? a
    /// compaction?) are then answered without going back to the line's text, which
    /// for a long session is out of the cache each time.
    pub line_type: LineType,
    rare: Option<Box<Rare<'a>>>,
}

/// The fields only some lines have: compaction markers, titles, tombstones, pi's
/// custom entries, crab's lines.
#[derive(PartialEq)]
#[cfg_attr(test, derive(Debug))]
pub(crate) struct Rare<'a> {
    pub logical_parent_uuid: Str<'a>,
    pub subtype: Str<'a>,
    pub deleted_uuid: Str<'a>,
    pub leaf_uuid: Str<'a>,
    pub summary: Str<'a>,
    pub custom_title: Str<'a>,
    pub compact_metadata: Option<Raw<'a>>,
    pub microcompact_metadata: Option<Raw<'a>>,
    /// pi's `compaction.firstKeptEntryId`.
    pub first_kept_entry_id: Str<'a>,
    /// pi v1's `compaction.firstKeptEntryIndex`: the kept entry's line, counted from 0
    /// at the header (v1 entries have no ids).
    pub first_kept_entry_index: Count,
    /// crab: a bare message line is `{role, content}`.
    pub role: Str<'a>,
    /// crab: `{"compact": "<summary>"}` marks a compaction.
    pub compact: Str<'a>,
    /// pi: a `session_info` entry's session name.
    pub name: Str<'a>,
    /// crab: the meta line's agent name.
    pub agent: Str<'a>,
    /// pi: a `custom` entry's type (Mneme's are `mneme.<kind>`).
    pub custom_type: Str<'a>,
    /// pi: a `custom` entry's data.
    pub data: Option<Raw<'a>>,
    /// Claude Code 2.1.330: an entry for the transcript, not for the model (its notes,
    /// on resume, of background tasks the last run left unfinished).
    pub queue_transcript_only: Flag,
}

/// What a line without any rare field has of them.
static NO_RARE: Rare<'static> = Rare {
    logical_parent_uuid: Str(None),
    subtype: Str(None),
    deleted_uuid: Str(None),
    leaf_uuid: Str(None),
    summary: Str(None),
    custom_title: Str(None),
    compact_metadata: None,
    microcompact_metadata: None,
    first_kept_entry_id: Str(None),
    first_kept_entry_index: Count(None),
    role: Str(None),
    compact: Str(None),
    name: Str(None),
    agent: Str(None),
    custom_type: Str(None),
    data: None,
    queue_transcript_only: Flag(false),
};

impl<'a> From<EnvelopeFields<'a>> for Envelope<'a> {
    fn from(fields: EnvelopeFields<'a>) -> Self {
        let rare = Rare {
            logical_parent_uuid: fields.logical_parent_uuid,
            subtype: fields.subtype,
            deleted_uuid: fields.deleted_uuid,
            leaf_uuid: fields.leaf_uuid,
            summary: fields.summary,
            custom_title: fields.custom_title,
            compact_metadata: fields.compact_metadata,
            microcompact_metadata: fields.microcompact_metadata,
            first_kept_entry_id: fields.first_kept_entry_id,
            first_kept_entry_index: fields.first_kept_entry_index,
            role: fields.role,
            compact: fields.compact,
            name: fields.name,
            agent: fields.agent,
            custom_type: fields.custom_type,
            data: fields.data,
            queue_transcript_only: fields.queue_transcript_only,
        };
        let first = |a: Str<'a>, b: Str<'a>| if a.0.is_some() { a } else { b };
        Envelope {
            line_type: LineType::of(fields.kind.get()),
            kind: fields.kind,
            uuid: owned(first(fields.uuid, fields.id)),
            parent_uuid: owned(first(first(fields.parent_uuid, fields.parent_uuid_snake), fields.parent_id)),
            session_id: first(fields.session_id, fields.session_id_snake),
            timestamp: fields.timestamp,
            cwd: fields.cwd,
            message: fields.message,
            is_sidechain: fields.is_sidechain,
            is_meta: fields.is_meta,
            is_compact_summary: fields.is_compact_summary,
            rare: (rare != NO_RARE).then(|| Box::new(rare)),
        }
    }
}

/// A line's id or its parent's, copied out of the line while its read has the line in
/// the cache. The walks that link a session's lines (one thread, every line) then find
/// the ids side by side on the heap, not at both ends of each line of the file: for a
/// 100 MB session that was two cache misses a line, 18 of the 20 ms of linking.
fn owned(id: Str<'_>) -> Str<'static> {
    Str(id.0.map(|id| Cow::Owned(id.into_owned())))
}

/// The `type`s of line the core's questions turn on; every other one is `Other`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum LineType {
    /// No `type` (pi v1 and crab lines).
    #[default]
    None,
    /// `"type":""`: a message, when it has one, as a line without a type.
    Empty,
    User,
    Assistant,
    Message,
    System,
    Tombstone,
    Custom,
    Compaction,
    Session,
    Other,
}

impl LineType {
    fn of(kind: Option<&str>) -> Self {
        match kind {
            None => LineType::None,
            Some("") => LineType::Empty,
            Some("user") => LineType::User,
            Some("assistant") => LineType::Assistant,
            Some("message") => LineType::Message,
            Some("system") => LineType::System,
            Some("tombstone") => LineType::Tombstone,
            Some("custom") => LineType::Custom,
            Some("compaction") => LineType::Compaction,
            Some("session") => LineType::Session,
            Some(_) => LineType::Other,
        }
    }

    /// The `type` of a line of this kind (`""` for none), known without going back to
    /// the line's text; `None` for `Other`, whose name only the line has.
    fn name(self) -> Option<&'static str> {
        match self {
            LineType::None | LineType::Empty => Some(""),
            LineType::User => Some("user"),
            LineType::Assistant => Some("assistant"),
            LineType::Message => Some("message"),
            LineType::System => Some("system"),
            LineType::Tombstone => Some("tombstone"),
            LineType::Custom => Some("custom"),
            LineType::Compaction => Some("compaction"),
            LineType::Session => Some("session"),
            LineType::Other => None,
        }
    }
}

impl<'a> Envelope<'a> {
    /// The line's `type` (`""` for none). Asked of every line once the file is read,
    /// when its text is out of the cache: a known type is answered from the line's kind.
    pub fn kind(&self) -> &str {
        self.line_type.name().unwrap_or_else(|| self.kind.get().unwrap_or(""))
    }
    /// pi's header line, which carries an id but stands outside the tree.
    pub fn is_session_header(&self) -> bool {
        self.line_type == LineType::Session
    }
    pub fn uuid(&self) -> Option<&str> {
        self.uuid.get()
    }
    /// Written by the client, not typed by the person: meta text, a compaction's
    /// summary, a sub-agent's prompt (these arrive as user messages too).
    pub fn is_generated(&self) -> bool {
        self.is_meta.0 || self.is_compact_summary.0 || self.is_sidechain.0
    }
    /// In a pi session, an entry of format v1, which has no id (the header aside): a
    /// session holding one is written and forked only once pi has migrated it.
    pub fn predates_pi_ids(&self) -> bool {
        self.uuid().is_none() && !self.is_session_header()
    }
    pub fn parent_uuid(&self) -> Option<&str> {
        self.parent_uuid.get()
    }
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.get()
    }
    /// The fields only some lines have, empty on the others.
    pub fn rare(&self) -> &Rare<'a> {
        self.rare.as_deref().unwrap_or(&NO_RARE)
    }
    /// A Mneme tombstone in any dialect: Claude Code's `tombstone` line, or pi's
    /// `custom` entry of type `mneme.tombstone`.
    pub fn is_tombstone(&self) -> bool {
        self.line_type == LineType::Tombstone
            || (self.line_type == LineType::Custom && self.rare().custom_type.get() == Some(TOMBSTONE_TYPE))
    }
    /// The uuid a tombstone deletes.
    pub fn tombstone_target(&self) -> Option<Cow<'a, str>> {
        #[derive(Deserialize)]
        struct Data<'d> {
            #[serde(default, borrow)]
            deleted_uuid: Str<'d>,
        }
        if let Some(target) = &self.rare().deleted_uuid.0 {
            return Some(target.clone());
        }
        let data: Data = serde_json::from_str(self.rare().data?.get()).ok()?;
        data.deleted_uuid.0
    }
    /// Which of Mneme's bookkeeping markers the line is, in any dialect.
    pub fn marker(&self) -> Option<crate::format::Marker> {
        match self.kind() {
            "custom" => self.rare().custom_type.get()?.strip_prefix(CUSTOM_PREFIX).and_then(crate::format::Marker::parse),
            kind => crate::format::Marker::parse(kind),
        }
    }
    pub fn is_message(&self) -> bool {
        matches!(self.line_type, LineType::User | LineType::Assistant | LineType::Message | LineType::None | LineType::Empty)
            && self.message.is_some()
    }
    /// A message the model is not shown: Claude Code keeps it for the transcript (it
    /// does not send it on resume).
    pub fn is_transcript_only(&self) -> bool {
        self.rare().queue_transcript_only.0
    }
}

/// One readable JSON object of a part.
pub(crate) struct Line<'a> {
    pub part: u32,
    pub line: u32,
    pub raw: &'a str,
    pub env: Envelope<'a>,
}

/// A part, read.
pub(crate) struct PartScan<'a> {
    pub lines: Vec<Line<'a>>,
    pub skipped: Vec<SkippedLine>,
    pub recovered_glued: u32,
    pub invalid_utf8: u32,
    pub lone_surrogates: u32,
    /// Lines in the part, blank, skipped and torn ones included.
    pub line_count: u32,
    /// The part ends in an unreadable fragment with no newline, or in a record written
    /// in one append whose last line never landed (see [`CONTINUED`]): its byte offset.
    pub torn_at: Option<u64>,
    /// Lines from `torn_at` to the end: the fragment, and the lines of its record.
    pub torn_lines: u32,
    /// The part's last line is complete (or blank) but has no newline: the next
    /// append must write one first.
    pub unterminated: bool,
    /// A line read has a UTF-16 surrogate escape, paired or not: a text from
    /// [`decode_utf8`] may need [`repair_lone_surrogates`]. Looked for only in text
    /// read as `unrepaired` (see [`scan_part_on`]).
    pub surrogate_escapes: bool,
}

/// A part's bytes as text. Invalid UTF-8 is replaced with U+FFFD (line boundaries
/// survive: `\n` never occurs inside a multi-byte sequence), and so is a lone UTF-16
/// surrogate escape (`\ud83d` without its pair, as Node writes a cut emoji), which
/// JSON parsers refuse: `\ud83d` becomes `\ufffd`, the same length, so offsets hold.
pub(crate) fn decode(bytes: &[u8]) -> Cow<'_, str> {
    // `from_utf8` validates far faster than the lossy decoder; almost every file is valid.
    let text = match core::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    without_lone_surrogates(text)
}

/// [`decode`] of text already known to be UTF-8 (a record about to be written): only
/// its lone surrogate escapes are repaired.
pub(crate) fn decode_str(text: &str) -> Cow<'_, str> {
    without_lone_surrogates(Cow::Borrowed(text))
}

/// [`decode`] into the bytes' own buffer when they are valid UTF-8 (no copy), its lone
/// surrogates not yet repaired: [`scan_part_on`] tells whether the text has any
/// surrogate escape ([`PartScan::surrogate_escapes`]) as it reads each line, and only
/// then need [`repair_lone_surrogates`] look, and the part be read again.
pub(crate) fn decode_utf8(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(invalid) => String::from_utf8_lossy(invalid.as_bytes()).into_owned(),
    }
}

/// `text` has a UTF-16 surrogate escape (`\ud800` to `\udfff`), paired or not: what
/// [`validate::Checked::surrogate_escape`] says of a line it checks (a backslash that
/// is itself escaped starts none).
fn has_surrogate_escape(text: &[u8]) -> bool {
    let surrogate_at = |at: usize| {
        let escaped = text[..at].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1;
        !escaped && validate::is_surrogate_escape(text.get(at + 2..at + 4).unwrap_or_default())
    };
    // A line or a record is looked at a backslash at a time: a substring searcher's
    // set-up costs more than that. A whole part has too many (every escaped newline).
    if text.len() < 4096 {
        return memchr::memchr_iter(b'\\', text).any(|at| text.get(at + 1) == Some(&b'u') && surrogate_at(at));
    }
    memchr::memmem::Finder::new(b"\\u").find_iter(text).any(surrogate_at)
}

fn without_lone_surrogates(text: Cow<'_, str>) -> Cow<'_, str> {
    if !has_surrogate_escape(text.as_bytes()) {
        return text;
    }
    match repair_lone_surrogates(&text) {
        Some(repaired) => Cow::Owned(repaired),
        None => text,
    }
}

/// `text` with every lone surrogate escape replaced by `\ufffd`; `None` when it has none.
pub(crate) fn repair_lone_surrogates(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        let hex = bytes.get(at + 2..at + 6)?;
        if bytes.get(at + 1) != Some(&b'u') || !hex.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u16::from_str_radix(core::str::from_utf8(hex).ok()?, 16).ok()
    };
    let mut lone = Vec::new();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'\\', &bytes[i..]).map(|at| i + at) {
        match unit(at) {
            Some(high @ 0xd800..=0xdbff) => {
                let _ = high;
                if matches!(bytes.get(at + 6), Some(b'\\')) && matches!(unit(at + 6), Some(0xdc00..=0xdfff)) {
                    i = at + 12;
                } else {
                    lone.push(at);
                    i = at + 6;
                }
            }
            Some(0xdc00..=0xdfff) => {
                lone.push(at);
                i = at + 6;
            }
            Some(_) => i = at + 6,
            // An escaped character (`\\`, `\"`, …): skip both.
            None => i = at + 2,
        }
        if i >= bytes.len() {
            break;
        }
    }
    if lone.is_empty() {
        return None;
    }
    let mut repaired = String::with_capacity(text.len());
    let mut from = 0;
    for at in lone {
        repaired.push_str(&text[from..at]);
        repaired.push_str("\\ufffd");
        from = at + 6;
    }
    repaired.push_str(&text[from..]);
    Some(repaired)
}

/// Who reads a part's lines: `pieces` at once, handed to `run` as jobs (the host's
/// threads, see [`crate::Storage::run_jobs`]), or one after another.
pub(crate) struct Workers<'r> {
    pub pieces: usize,
    /// The fewest bytes worth a piece of their own: below it, threads cost more than
    /// they save.
    pub piece_bytes: usize,
    pub run: &'r dyn RunJobs,
}

/// Runs jobs: a storage by its [`crate::Storage::run_jobs`], or [`InOrder`].
pub(crate) trait RunJobs {
    fn run(&self, jobs: Vec<Job<'_>>);
}

impl<S: crate::Storage> RunJobs for S {
    fn run(&self, jobs: Vec<Job<'_>>) {
        self.run_jobs(jobs);
    }
}

/// Every job here, one after another.
pub(crate) struct InOrder;

impl RunJobs for InOrder {
    fn run(&self, jobs: Vec<Job<'_>>) {
        for job in jobs {
            job();
        }
    }
}

/// Runs the jobs last first, for tests: a piece must not depend on the ones before it.
#[cfg(test)]
pub(crate) struct Backwards;

#[cfg(test)]
impl RunJobs for Backwards {
    fn run(&self, jobs: Vec<Job<'_>>) {
        for job in jobs.into_iter().rev() {
            job();
        }
    }
}

impl Workers<'_> {
    /// One piece, read here.
    pub const HERE: Workers<'static> = Workers { pieces: 1, piece_bytes: usize::MAX, run: &InOrder };

    pub fn of<S: crate::Storage>(storage: &S) -> Workers<'_> {
        Workers { pieces: storage.parallelism(), piece_bytes: 1 << 20, run: storage }
    }

    /// How many pieces `len` bytes are read in.
    pub fn pieces_for(&self, len: usize) -> usize {
        self.pieces.min(len / self.piece_bytes.max(1)).clamp(1, 64)
    }
}

/// Reads one part. `bytes` are the part's original bytes (for offsets and UTF-8
/// checks), `text` their [`decode`]d form.
pub(crate) fn scan_part<'a>(part: u32, bytes: &[u8], text: &'a str) -> PartScan<'a> {
    scan_part_on(part, bytes, text, &Workers::HERE, false)
}

/// [`scan_part`], the part read in pieces by `workers`. Two passes: each piece's lines
/// found and their envelopes read (a line is read while the search for its end has
/// just brought it into the cache), then what depends on the order settled — records
/// cut short, unreadable lines, glued objects. `unrepaired`: `text` is from
/// [`decode_utf8`], its lone surrogates not repaired, so each line is also looked at
/// for a surrogate escape ([`PartScan::surrogate_escapes`]); [`decode`]d text needs no
/// look.
pub(crate) fn scan_part_on<'a>(part: u32, bytes: &[u8], text: &'a str, workers: &Workers, unrepaired: bool) -> PartScan<'a> {
    // `decode` borrows exactly when the bytes were valid UTF-8: same address, same
    // length. Text that was repaired is read in one piece: its lines' offsets in the
    // part's bytes are found by walking both.
    let repaired_from = (!core::ptr::eq(text.as_bytes(), bytes)).then_some(bytes);
    let ends = match repaired_from {
        Some(_) => alloc::vec![text.len()],
        None => piece_ends(text, workers.pieces_for(text.len())),
    };
    let mut pieces: Vec<FoundLines<'a>> = ends.iter().map(|_| FoundLines::empty()).collect();
    let starts = core::iter::once(0).chain(ends.iter().copied());
    if let [found] = &mut pieces[..] {
        *found = read_piece(part, text, 0..text.len(), repaired_from, unrepaired);
    } else {
        let jobs: Vec<Job> = pieces
            .iter_mut()
            .zip(starts.zip(ends.iter().copied()))
            .map(|(found, (start, end))| -> Job { Box::new(move || *found = read_piece(part, text, start..end, None, unrepaired)) })
            .collect();
        workers.run.run(jobs);
    }
    let mut found = FoundLines::joined(pieces);
    let mut lines = core::mem::take(&mut found.lines);
    let failed = core::mem::take(&mut found.failed);

    let mut scan = PartScan {
        lines: Vec::new(),
        skipped: Vec::new(),
        recovered_glued: 0,
        invalid_utf8: 0,
        lone_surrogates: 0,
        line_count: found.line_count,
        torn_at: None,
        torn_lines: 0,
        // Only the last line can lack its newline: one that is blank, or read whole.
        unterminated: found.last_blank && !found.last_terminated,
        surrogate_escapes: found.surrogate_escapes,
    };
    // The record written in one append that the lines since this one belong to, while
    // its last line has not been seen: (byte offset, index in `lines`, line number).
    let mut open_record: Option<(usize, usize, u32)> = None;
    let last = lines.len().checked_sub(1);
    let mut failed = failed.into_iter().peekable();
    // The lines kept are moved to the front in place (a part's line index is not
    // copied for an unreadable line); objects read apart from a glued line are put in
    // afterwards, before the kept line they preceded.
    let mut kept = 0;
    let mut glued: Vec<(usize, Vec<Line<'a>>)> = Vec::new();
    let mut inserted = 0;
    for index in 0..lines.len() {
        let terminated = Some(index) != last || found.last_blank || found.last_terminated;
        let final_line = Some(index) == last && !found.last_blank;
        let (raw, line_no) = (lines[index].raw, lines[index].line);
        let start = found.start_of(text, index, &lines[index]);
        let Some((_, error)) = failed.next_if(|(at, _)| *at == index) else {
            if final_line {
                scan.unterminated = !terminated;
            }
            if raw.starts_with(CONTINUED) {
                open_record.get_or_insert((start, kept + inserted, line_no));
            } else {
                open_record = None;
            }
            if kept != index {
                lines.swap(kept, index);
            }
            kept += 1;
            continue;
        };
        let recovered = split_glued(raw);
        if recovered.len() >= 2 {
            open_record = None;
            scan.recovered_glued += recovered.len() as u32;
            if final_line {
                scan.unterminated = !terminated;
            }
            inserted += recovered.len();
            glued.push((kept, recovered.into_iter().map(|(raw, env)| Line { part, line: line_no, raw, env }).collect()));
        } else if !terminated {
            scan.torn_at = Some(start as u64);
            scan.torn_lines = 1;
        } else {
            open_record = None;
            scan.skipped.push(SkippedLine { part, line: line_no, reason: alloc::format!("not a transcript entry: {error}") });
        }
    }
    lines.truncate(kept);
    if !glued.is_empty() {
        let mut merged = Vec::with_capacity(kept + inserted);
        let mut rest = lines.into_iter();
        let mut taken = 0;
        for (before, recovered) in glued {
            merged.extend(rest.by_ref().take(before - taken));
            taken = before;
            merged.extend(recovered);
        }
        merged.extend(rest);
        lines = merged;
    }
    scan.lines = lines;
    // A record cut short takes the lines of it that did land with it: a turn is all
    // there or not at all.
    if let Some((offset, index, first_line)) = open_record {
        scan.torn_lines = scan.line_count + 1 - first_line;
        scan.torn_at = Some(offset as u64);
        scan.lines.truncate(index);
        scan.unterminated = false;
    }
    // Counted among the lines kept: a line dropped or torn off is reported as that.
    let kept_line = |number: &u32| scan.lines.binary_search_by_key(number, |line| line.line).is_ok();
    scan.invalid_utf8 = found.invalid_utf8.iter().filter(|number| kept_line(number)).count() as u32;
    scan.lone_surrogates = found.lone_surrogates.iter().filter(|number| kept_line(number)).count() as u32;
    scan
}

/// A part's lines that are not blank, or those of a piece of it.
struct FoundLines<'a> {
    lines: Vec<Line<'a>>,
    /// The lines that did not read as an entry, by index: (index, why).
    failed: Vec<(usize, serde_json::Error)>,
    /// Each line's byte offset in the part, when the text is not the part's bytes
    /// (invalid UTF-8 was replaced); otherwise found from where the line lies.
    lossy_starts: Vec<usize>,
    line_count: u32,
    /// The numbers of the lines that held invalid UTF-8, and of those that held a lone
    /// surrogate escape, in order.
    invalid_utf8: Vec<u32>,
    lone_surrogates: Vec<u32>,
    /// The last line (blank or not) ends in a newline.
    last_terminated: bool,
    /// The last line is blank (or there is none).
    last_blank: bool,
    surrogate_escapes: bool,
}

impl<'a> FoundLines<'a> {
    /// No line yet: as an empty part reads.
    fn empty() -> Self {
        FoundLines {
            lines: Vec::new(),
            failed: Vec::new(),
            lossy_starts: Vec::new(),
            line_count: 0,
            invalid_utf8: Vec::new(),
            lone_surrogates: Vec::new(),
            last_terminated: true,
            last_blank: true,
            surrogate_escapes: false,
        }
    }

    /// The pieces of a part, in order, as one: their lines numbered in the part.
    fn joined(pieces: Vec<FoundLines<'a>>) -> Self {
        let mut pieces = pieces.into_iter();
        let mut found = pieces.next().unwrap_or_else(FoundLines::empty);
        let rest: Vec<FoundLines> = pieces.collect();
        found.lines.reserve(rest.iter().map(|piece| piece.lines.len()).sum());
        for piece in rest {
            let (lines_before, count_before) = (found.lines.len(), found.line_count);
            found.failed.extend(piece.failed.into_iter().map(|(index, why)| (lines_before + index, why)));
            found.lines.extend(piece.lines.into_iter().map(|line| Line { line: count_before + line.line, ..line }));
            found.invalid_utf8.extend(piece.invalid_utf8.into_iter().map(|line| count_before + line));
            found.line_count += piece.line_count;
            found.lone_surrogates.extend(piece.lone_surrogates.into_iter().map(|line| count_before + line));
            found.lossy_starts.extend(piece.lossy_starts);
            found.surrogate_escapes |= piece.surrogate_escapes;
            if piece.line_count > 0 {
                found.last_terminated = piece.last_terminated;
                found.last_blank = piece.last_blank;
            }
        }
        found
    }

    /// The byte offset in the part of line `index`, `line`.
    fn start_of(&self, text: &str, index: usize, line: &Line) -> usize {
        match self.lossy_starts.get(index) {
            Some(&start) => start,
            None => (line.raw.as_ptr() as usize).saturating_sub(text.as_ptr() as usize),
        }
    }
}

/// Where the pieces of `text` a part is read in end: about equal, each after a newline
/// (never inside a UTF-8 sequence or a JSON string), the last at the text's end.
fn piece_ends(text: &str, pieces: usize) -> Vec<usize> {
    let mut ends: Vec<usize> = Vec::with_capacity(pieces);
    for piece in 1..pieces {
        let from = (text.len() / pieces * piece).max(ends.last().copied().unwrap_or(0));
        match memchr::memchr(b'\n', text.as_bytes().get(from..).unwrap_or_default()) {
            Some(at) if from + at + 1 < text.len() => ends.push(from + at + 1),
            _ => break,
        }
    }
    ends.push(text.len());
    ends
}

/// The lines of the piece `range` of a part's `text`, each envelope read as soon as
/// its line is found, while the line is in the cache. `range` starts a line; its line
/// numbers count from its start. `repaired_from`: the part's bytes, when `text` is
/// their [`decode`]d repair (then `range` is all of it, and each line's offset and
/// what was wrong with it are found by walking both). `unrepaired`: as [`scan_part_on`]'s.
fn read_piece<'a>(part: u32, text: &'a str, range: Range<usize>, repaired_from: Option<&[u8]>, unrepaired: bool) -> FoundLines<'a> {
    let piece = &text.as_bytes()[range.clone()];
    // Sized up front: growing by doubling would hold two copies of the index at once.
    // Bounded by the bytes too: a part of blank lines must not reserve an entry per
    // newline (8 MiB of them would ask for gigabytes).
    let capacity = (memchr::memchr_iter(b'\n', piece).count() + 1).min(piece.len() / 64 + 1);
    let mut found = FoundLines { lines: Vec::with_capacity(capacity), ..FoundLines::empty() };
    let (mut start, end) = (range.start, range.end);
    let mut byte_start = start;
    while start < end {
        found.line_count += 1;
        let (line, next) = match memchr::memchr(b'\n', &text.as_bytes()[start..end]) {
            Some(at) => (&text[start..start + at], start + at + 1),
            None => (&text[start..end], end),
        };
        found.last_terminated = next > start + line.len();
        let byte_end = match repaired_from {
            Some(bytes) => {
                let byte_end = memchr::memchr(b'\n', &bytes[byte_start..]).map_or(bytes.len(), |at| byte_start + at);
                match core::str::from_utf8(&bytes[byte_start..byte_end]) {
                    Err(_) => found.invalid_utf8.push(found.line_count),
                    Ok(original) if original != line => found.lone_surrogates.push(found.line_count),
                    Ok(_) => {}
                }
                byte_end
            }
            None => start + line.len(),
        };
        let line_byte_start = byte_start;
        start = next;
        byte_start = byte_end + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        // Blank, but without its newline the next append would land on this line,
        // after bytes (a form feed) that JSON does not accept as whitespace.
        found.last_blank = line.bytes().all(|b| b.is_ascii_whitespace());
        if !found.last_blank {
            let read = read_object(line);
            // The line's check saw every escape; a line serde read (or none could) is looked at.
            if unrepaired && !found.surrogate_escapes {
                let told = read.as_ref().ok().and_then(|(_, surrogate_escape)| *surrogate_escape);
                found.surrogate_escapes = told.unwrap_or_else(|| has_surrogate_escape(line.as_bytes()));
            }
            match read {
                Ok((env, _)) => found.lines.push(Line { part, line: found.line_count, raw: line, env }),
                Err(why) => {
                    found.failed.push((found.lines.len(), why));
                    found.lines.push(Line { part, line: found.line_count, raw: line, env: Envelope::default() });
                }
            }
            if repaired_from.is_some() {
                found.lossy_starts.push(line_byte_start);
            }
        }
    }
    found
}

/// How a line of a record written in one append begins when more lines of the record
/// follow it. JSON ignores the space, so every reader sees the same entries, but Mneme
/// knows a record a crash cut short — the lines that landed begin with it and no line
/// without it ends them — and takes all of it out, not just the torn line: a turn is
/// there whole or not at all. At the start of the line, the mark lands with the first
/// byte of it: a tear anywhere leaves it readable. The last line has no mark.
pub(crate) const CONTINUED: char = ' ';

/// The lines of a record to be written in one append (joined by newlines), every
/// line but the last marked [`CONTINUED`].
pub(crate) fn mark_continued(lines: String) -> String {
    // A line copied from a record written before (a fork's, a compaction's kept ones)
    // may carry that record's mark: only this record's position counts.
    if memchr::memchr(b'\n', lines.as_bytes()).is_none() && !lines.starts_with(CONTINUED) {
        return lines;
    }
    let count = crate::support::split_lines(&lines).count();
    let mut marked = String::with_capacity(lines.len() + count);
    for (n, line) in crate::support::split_lines(&lines).enumerate() {
        if n > 0 {
            marked.push('\n');
        }
        if n + 1 < count {
            marked.push(CONTINUED);
        }
        marked.push_str(line.trim_start_matches(CONTINUED));
    }
    marked
}

/// The lines of a record about to be written (joined by newlines), each read as a
/// part's line is ([`read_object`], a `\r` before the newline left out), numbered from
/// 1; otherwise the reason of the first that is not one JSON object. A part's other
/// cases (blank lines, a torn end, glued objects) cannot be a record's: Mneme builds
/// its lines.
pub(crate) fn read_record(part: u32, text: &str) -> Result<Vec<Line<'_>>, String> {
    crate::support::split_lines(text)
        .zip(1..)
        .map(|(raw, line)| {
            let raw = raw.strip_suffix('\r').unwrap_or(raw);
            match read_object(raw) {
                Ok((env, _)) => Ok(Line { part, line, raw, env }),
                Err(error) => Err(error.to_string()),
            }
        })
        .collect()
}

/// A line's envelope. Only objects are entries: serde would also read a struct from
/// a JSON array, field by field.
fn parse_object(line: &str) -> Result<Envelope<'_>, serde_json::Error> {
    read_object(line).map(|(envelope, _)| envelope)
}

/// [`parse_object`], and whether the line has a surrogate escape when its check told
/// (`None`: serde read it, and the line must be looked at for one).
fn read_object(line: &str) -> Result<(Envelope<'_>, Option<bool>), serde_json::Error> {
    let (fields, surrogate_escape) = match quick_envelope(line) {
        Some((fields, checked)) => (fields, Some(checked.surrogate_escape)),
        None => {
            let fields = serde_json::from_str::<EnvelopeFields>(line)?;
            if !line.trim_start().starts_with('{') {
                return Err(serde::de::Error::custom("a JSON value that is not an object"));
            }
            (fields, None)
        }
    };
    let mut envelope = Envelope::from(fields);
    // crab writes messages bare, `{role, content}`: the line is its own message.
    if envelope.line_type == LineType::None && envelope.message.is_none() && envelope.rare().role.get().is_some() {
        envelope.message = serde_json::from_str(line).ok();
    }
    Ok((envelope, surrogate_escape))
}

/// A line's envelope read on [`validate`]'s fast path: exactly what serde reads, or
/// `None` when only serde can say (the line is not surely valid, a field repeats, a
/// field holds a type whose reading serde decides).
fn quick_envelope(line: &str) -> Option<(EnvelopeFields<'_>, validate::Checked)> {
    enum Slot<'e, 'a> {
        Str(&'e mut Str<'a>),
        Flag(&'e mut Flag),
        Raw(&'e mut Option<Raw<'a>>),
    }
    let mut env = EnvelopeFields::default();
    let mut seen = 0u32;
    let sure = validate::object_members(line, |key, value| {
        let (bit, slot) = match key {
            "type" => (0, Slot::Str(&mut env.kind)),
            "uuid" => (1, Slot::Str(&mut env.uuid)),
            "id" => (2, Slot::Str(&mut env.id)),
            "parentUuid" => (3, Slot::Str(&mut env.parent_uuid)),
            "parent_uuid" => (4, Slot::Str(&mut env.parent_uuid_snake)),
            "parentId" => (5, Slot::Str(&mut env.parent_id)),
            "logicalParentUuid" => (6, Slot::Str(&mut env.logical_parent_uuid)),
            "sessionId" => (7, Slot::Str(&mut env.session_id)),
            "session_id" => (8, Slot::Str(&mut env.session_id_snake)),
            "timestamp" => (9, Slot::Str(&mut env.timestamp)),
            "cwd" => (10, Slot::Str(&mut env.cwd)),
            "subtype" => (11, Slot::Str(&mut env.subtype)),
            "isSidechain" => (12, Slot::Flag(&mut env.is_sidechain)),
            "isMeta" => (13, Slot::Flag(&mut env.is_meta)),
            "isCompactSummary" => (14, Slot::Flag(&mut env.is_compact_summary)),
            "deleted_uuid" => (15, Slot::Str(&mut env.deleted_uuid)),
            "leafUuid" => (16, Slot::Str(&mut env.leaf_uuid)),
            "summary" => (17, Slot::Str(&mut env.summary)),
            "customTitle" => (18, Slot::Str(&mut env.custom_title)),
            "message" => (19, Slot::Raw(&mut env.message)),
            "compactMetadata" => (20, Slot::Raw(&mut env.compact_metadata)),
            "microcompactMetadata" => (21, Slot::Raw(&mut env.microcompact_metadata)),
            "firstKeptEntryId" => (22, Slot::Str(&mut env.first_kept_entry_id)),
            "role" => (23, Slot::Str(&mut env.role)),
            "compact" => (24, Slot::Str(&mut env.compact)),
            "name" => (25, Slot::Str(&mut env.name)),
            "agent" => (26, Slot::Str(&mut env.agent)),
            "customType" => (27, Slot::Str(&mut env.custom_type)),
            "data" => (28, Slot::Raw(&mut env.data)),
            "queueTranscriptOnly" => (29, Slot::Flag(&mut env.queue_transcript_only)),
            // A count, or a key with an escape (serde matches it decoded): serde reads the line.
            "firstKeptEntryIndex" => return false,
            _ => return !key.contains('\\'),
        };
        if seen & (1 << bit) != 0 {
            return false;
        }
        seen |= 1 << bit;
        match (slot, value) {
            (Slot::Str(_) | Slot::Flag(_) | Slot::Raw(_), "null") => true,
            (Slot::Str(slot), string) if string.starts_with('"') => {
                let Some(inner) = string.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else { return false };
                *slot = Str(Some(if inner.contains('\\') {
                    match serde_json::from_str::<String>(string) {
                        Ok(decoded) => Cow::Owned(decoded),
                        Err(_) => return false,
                    }
                } else {
                    Cow::Borrowed(inner)
                }));
                true
            }
            (Slot::Flag(slot), flag @ ("true" | "false")) => {
                *slot = Flag(flag == "true");
                true
            }
            (Slot::Raw(slot), raw) => {
                *slot = Some(Raw::valid(raw));
                true
            }
            _ => false,
        }
    });
    sure.map(|checked| (env, checked))
}

/// The objects of a line holding several JSON objects back to back, if that is all it
/// holds.
fn split_glued(line: &str) -> Vec<(&str, Envelope<'_>)> {
    let mut objects = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(line).into_iter::<&RawValue>();
    for value in stream.by_ref() {
        let Ok(raw) = value else { return Vec::new() };
        let Ok(env) = parse_object(raw.get()) else { return Vec::new() };
        objects.push((raw.get(), env));
    }
    objects
}

/// What is read of a message: found in the line the scan validated (see
/// [`crate::support::json`]), not parsed again.
#[derive(Default)]
pub(crate) struct Message<'a> {
    pub role: Str<'a>,
    pub id: Str<'a>,
    pub content: Option<Raw<'a>>,
    pub usage: Option<Raw<'a>>,
    /// pi: the call a `toolResult` message answers.
    pub tool_call_id: Str<'a>,
    /// pi: whether a `toolResult` message reports a failure (`true`), as written.
    pub is_error: Option<&'a str>,
    /// pi: the API a reply came from (`anthropic-messages`, `openai-responses`, …).
    pub api: Str<'a>,
    /// pi: why a reply stopped (`"stop"`, `"toolUse"`, `"error"`, `"aborted"`), as written.
    pub stop_reason: Option<&'a str>,
    /// The model a reply came from (Claude Code's and pi's replies name it).
    pub model: Str<'a>,
}

/// A message's content: a string, or blocks.
pub(crate) enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

#[derive(Default)]
pub(crate) struct Block<'a> {
    pub kind: Str<'a>,
    pub text: Str<'a>,
    pub id: Str<'a>,
    pub name: Str<'a>,
    pub tool_use_id: Str<'a>,
    pub thinking: Str<'a>,
    /// `tool_use.input`.
    pub input: Option<Raw<'a>>,
    /// pi's `toolCall.arguments`.
    pub arguments: Option<Raw<'a>>,
    /// `tool_result.content`: a string or blocks.
    pub content: Option<Raw<'a>>,
    /// pi's `thinking.thinkingSignature`.
    pub thinking_signature: Str<'a>,
    /// pi's `image.mimeType`.
    pub mime_type: Str<'a>,
}

/// A message's fields; `None` for a message that is no object or repeats one of them
/// (as serde refuses a duplicate field).
pub(crate) fn parse_message(raw: Raw<'_>) -> Option<Message<'_>> {
    message_fields(raw.get(), |json, at, _| Some((None::<()>, json::value_end(json.as_bytes(), at)?))).map(|(message, _)| message)
}

/// A message's fields and its content read in the same pass: a message's blocks are
/// walked once, not once to find the content's end and again to read them.
pub(crate) fn parse_message_content(raw: Raw<'_>) -> Option<(Message<'_>, Option<Content<'_>>)> {
    message_fields(raw.get(), |json, at, _| content_at(json, at))
}

/// [`parse_message_content`], except that the content of a pi `toolResult` message
/// whose role comes before it (pi writes the role first) is skipped, not read: its
/// conversion reads the blocks itself, and a tool's output would be decoded for nothing.
pub(crate) fn parse_message_content_unless_result(raw: Raw<'_>) -> Option<(Message<'_>, Option<Content<'_>>)> {
    message_fields(raw.get(), |json, at, role| match role {
        Some("toolResult") => Some((None, json::value_end(json.as_bytes(), at)?)),
        _ => content_at(json, at),
    })
}

/// [`parse_message`], with the content value read by `content` (given the message's
/// JSON, the value's offset and the role if it came before; it returns what it read
/// and the value's end).
fn message_fields<'a, C>(
    json: &'a str,
    mut content: impl FnMut(&'a str, usize, Option<&str>) -> Option<(Option<C>, usize)>,
) -> Option<(Message<'a>, Option<C>)> {
    let (mut role, mut id, mut raw_content, mut read, mut usage, mut tool_call_id) = (None, None, None, None, None, None);
    let (mut is_error, mut api, mut stop_reason, mut model) = (None, None, None, None);
    json::walk_object(json, |key, start| {
        let end = match key {
            "content" => {
                let (value, end) = content(json, start, role.as_ref().and_then(Str::get))?;
                json::once(&mut read, value)?;
                json::once(&mut raw_content, json::raw_value(json.get(start..end)?))?;
                return Some(end);
            }
            _ => json::value_end(json.as_bytes(), start)?,
        };
        let value = json.get(start..end)?;
        match key {
            "role" => json::once(&mut role, json::str_value(value)),
            "id" => json::once(&mut id, json::str_value(value)),
            "usage" => json::once(&mut usage, json::raw_value(value)),
            "toolCallId" => json::once(&mut tool_call_id, json::str_value(value)),
            // As a `Value` reads it: a repeated one counts as the last (the field only
            // marks a result, and refusing the message for it would lose it).
            "isError" => {
                is_error = Some(value);
                Some(())
            }
            // Read as `isError` is: they only say how to replay a reply.
            "api" => {
                api = Some(json::str_value(value));
                Some(())
            }
            "stopReason" => {
                stop_reason = Some(value);
                Some(())
            }
            // Read as `api` is (a repeated one counts as the last): it only tells whether
            // a reply's thinking may be replayed to the model a request goes to.
            "model" => {
                model = Some(json::str_value(value));
                Some(())
            }
            _ => Some(()),
        }?;
        Some(end)
    })?;
    let message = Message {
        role: role.unwrap_or_default(),
        id: id.unwrap_or_default(),
        content: raw_content.flatten(),
        usage: usage.flatten(),
        tool_call_id: tool_call_id.unwrap_or_default(),
        is_error,
        api: api.unwrap_or_default(),
        stop_reason,
        model: model.unwrap_or_default(),
    };
    Some((message, read.flatten()))
}

/// A content block's fields, as [`parse_message`] reads a message's.
pub(crate) fn parse_block(json: &str) -> Option<Block<'_>> {
    block_at(json, 0).map(|(block, _)| block)
}

/// The block whose object starts at `at` in `json`, and the object's end.
fn block_at(json: &str, at: usize) -> Option<(Block<'_>, usize)> {
    let json_from = json.get(at..)?;
    let mut slots: [Option<Str>; 8] = Default::default();
    let (mut input, mut arguments, mut content) = (None, None, None);
    let len = json::walk_object(json_from, |key, start| {
        let end = json::value_end(json_from.as_bytes(), start)?;
        let value = json_from.get(start..end)?;
        let slot = match key {
            "type" => 0,
            "text" => 1,
            "id" => 2,
            "name" => 3,
            "tool_use_id" => 4,
            "thinking" => 5,
            "thinkingSignature" => 6,
            "mimeType" => 7,
            "input" => return json::once(&mut input, json::raw_value(value)).map(|()| end),
            "arguments" => return json::once(&mut arguments, json::raw_value(value)).map(|()| end),
            "content" => return json::once(&mut content, json::raw_value(value)).map(|()| end),
            _ => return Some(end),
        };
        json::once(&mut slots[slot], json::str_value(value)).map(|()| end)
    })?;
    let [kind, text, id, name, tool_use_id, thinking, thinking_signature, mime_type] = slots.map(Option::unwrap_or_default);
    let block = Block {
        kind,
        text,
        id,
        name,
        tool_use_id,
        thinking,
        input: input.flatten(),
        arguments: arguments.flatten(),
        content: content.flatten(),
        thinking_signature,
        mime_type,
    };
    Some((block, at + len))
}

/// Reads a content value: a string, or blocks (`None` if any block is unreadable).
pub(crate) fn parse_content(raw: Option<Raw<'_>>) -> Option<Content<'_>> {
    content_at(raw?.get(), 0)?.0
}

/// The content value starting at `at` in `json`, read as [`parse_content`] reads it,
/// and the value's end (found even when the content is unreadable).
fn content_at(json: &str, at: usize) -> Option<(Option<Content<'_>>, usize)> {
    let bytes = json.as_bytes();
    if bytes.get(at) != Some(&b'[') {
        let end = json::value_end(bytes, at)?;
        let content = match bytes.get(at) {
            Some(b'"') => json::str_value(json.get(at..end)?).0.map(Content::Text),
            _ => None,
        };
        return Some((content, end));
    }
    let mut blocks = Some(Vec::new());
    let json_from = json.get(at..)?;
    let len = json::walk_array(json_from, |start| match block_at(json_from, start) {
        Some((block, end)) => {
            if let Some(blocks) = &mut blocks {
                blocks.push(block);
            }
            Some(end)
        }
        None => {
            blocks = None;
            json::value_end(json_from.as_bytes(), start)
        }
    })?;
    Some((blocks.map(Content::Blocks), at + len))
}

/// A message's text: its string content, or its `text` blocks joined by newlines.
/// A message of an unexpected shape has no text rather than failing the load.
pub(crate) fn message_text(raw: Option<Raw<'_>>) -> (Option<String>, String) {
    text_of(raw.and_then(parse_message_content).as_ref())
}

/// [`message_text`] of a message already read with [`parse_message_content`].
pub(crate) fn text_of(read: Option<&(Message<'_>, Option<Content<'_>>)>) -> (Option<String>, String) {
    let Some((message, content)) = read else { return (None, String::new()) };
    let text = match content {
        Some(Content::Text(text)) => String::from(&**text),
        Some(Content::Blocks(blocks)) => {
            let texts: Vec<&str> = blocks.iter().filter(|b| b.kind.get() == Some("text")).filter_map(|b| b.text.get()).collect();
            texts.join("\n")
        }
        None => String::new(),
    };
    (message.role.get().map(ToString::to_string), text)
}

impl Line<'_> {
    /// The entry's id: its uuid (pi: `id`), or `@part:line` for formats without ids
    /// (crab, pi v1).
    pub fn entry_id(&self) -> Cow<'_, str> {
        match self.env.uuid() {
            Some(uuid) => Cow::Borrowed(uuid),
            None => Cow::Owned(alloc::format!("@{}:{}", self.part, self.line)),
        }
    }

    pub fn to_entry(&self) -> Entry {
        self.to_entry_read(self.env.message.and_then(parse_message_content).as_ref())
    }

    /// [`Line::to_entry`] with the line's message already read.
    pub(crate) fn to_entry_read(&self, message: Option<&(Message<'_>, Option<Content<'_>>)>) -> Entry {
        let (role, text) = text_of(message);
        Entry {
            part: self.part,
            line: self.line,
            type_: self.env.kind().to_string(),
            uuid: self.env.uuid().map(ToString::to_string),
            parent_uuid: self.env.parent_uuid().map(ToString::to_string),
            session_id: self.env.session_id().map(ToString::to_string),
            timestamp: self.env.timestamp.get().map(ToString::to_string),
            role,
            text,
            is_sidechain: self.env.is_sidechain.0,
            raw: self.raw.to_string(),
            redacted: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(input: &[u8]) -> (Vec<Entry>, PartScan<'static>) {
        let text: &'static str = alloc::boxed::Box::leak(decode(input).into_owned().into_boxed_str());
        let scan = scan_part(1, input, text);
        (scan.lines.iter().map(Line::to_entry).collect(), scan)
    }

    /// Everything a scan says, to compare two.
    fn told(scan: &PartScan) -> String {
        alloc::format!(
            "{:?} {:?} glued {} utf8 {} surrogates {} lines {} torn {:?}+{} unterminated {} surrogate escapes {}",
            scan.lines.iter().map(Line::to_entry).collect::<Vec<_>>(),
            scan.skipped,
            scan.recovered_glued,
            scan.invalid_utf8,
            scan.lone_surrogates,
            scan.line_count,
            scan.torn_at,
            scan.torn_lines,
            scan.unterminated,
            scan.surrogate_escapes
        )
    }

    /// The reader as it was before it read in pieces, one loop over the lines: what it
    /// said of a part is what a part reads as.
    fn one_loop_scan<'a>(part: u32, bytes: &[u8], text: &'a str) -> PartScan<'a> {
        // Sized up front: growing by doubling would hold two copies of the index at once.
        let mut scan = PartScan {
            // Bounded by the bytes too: a part of blank lines must not reserve an entry
            // per newline (8 MiB of them would ask for gigabytes).
            lines: Vec::with_capacity((memchr::memchr_iter(b'\n', bytes).count() + 1).min(bytes.len() / 64 + 1)),
            skipped: Vec::new(),
            recovered_glued: 0,
            invalid_utf8: 0,
            lone_surrogates: 0,
            line_count: 0,
            torn_at: None,
            torn_lines: 0,
            unterminated: false,
            surrogate_escapes: has_surrogate_escape(text.as_bytes()),
        };
        // The record written in one append that the lines since this one belong to, while
        // its last line has not been seen: (byte offset, index in `lines`, line number).
        let mut open_record: Option<(usize, usize, u32)> = None;
        // `decode` borrows exactly when the bytes were valid UTF-8: same address, same length.
        let lossy = !core::ptr::eq(text.as_bytes(), bytes);
        let (mut kept_invalid_utf8, mut kept_lone_surrogates): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        let mut start = 0;
        let mut byte_start = 0;
        while start < text.len() {
            scan.line_count += 1;
            let line_no = scan.line_count;
            let (line, next) = match memchr::memchr(b'\n', &text.as_bytes()[start..]) {
                Some(at) => (&text[start..start + at], start + at + 1),
                None => (&text[start..], text.len()),
            };
            let terminated = next > start + line.len();
            let byte_end = if lossy {
                memchr::memchr(b'\n', &bytes[byte_start..]).map_or(bytes.len(), |at| byte_start + at)
            } else {
                start + line.len()
            };
            let (mut invalid_utf8, mut lone_surrogate) = (false, false);
            if lossy {
                match core::str::from_utf8(&bytes[byte_start..byte_end]) {
                    Err(_) => invalid_utf8 = true,
                    Ok(original) if original != line => lone_surrogate = true,
                    Ok(_) => {}
                }
            }
            let line_byte_start = byte_start;
            start = next;
            byte_start = byte_end + 1;
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.bytes().all(|b| b.is_ascii_whitespace()) {
                // Blank, but without its newline the next append would land on this line,
                // after bytes (a form feed) that JSON does not accept as whitespace.
                scan.unterminated = !terminated;
                continue;
            }
            match parse_object(line) {
                Ok(env) => {
                    scan.unterminated = !terminated;
                    if line.starts_with(CONTINUED) {
                        open_record.get_or_insert((line_byte_start, scan.lines.len(), line_no));
                    } else {
                        open_record = None;
                    }
                    scan.lines.push(Line { part, line: line_no, raw: line, env });
                    kept_invalid_utf8.extend(invalid_utf8.then_some(line_no));
                    kept_lone_surrogates.extend(lone_surrogate.then_some(line_no));
                }
                Err(error) => {
                    let recovered = split_glued(line);
                    if recovered.len() >= 2 {
                        open_record = None;
                        scan.recovered_glued += recovered.len() as u32;
                        scan.unterminated = !terminated;
                        scan.lines.extend(recovered.into_iter().map(|(raw, env)| Line { part, line: line_no, raw, env }));
                        kept_invalid_utf8.extend(invalid_utf8.then_some(line_no));
                        kept_lone_surrogates.extend(lone_surrogate.then_some(line_no));
                    } else if !terminated {
                        scan.torn_at = Some(line_byte_start as u64);
                        scan.torn_lines = 1;
                    } else {
                        open_record = None;
                        scan.skipped.push(SkippedLine { part, line: line_no, reason: alloc::format!("not a transcript entry: {error}") });
                    }
                }
            }
        }
        // A record cut short takes the lines of it that did land with it: a turn is all
        // there or not at all.
        if let Some((offset, index, first_line)) = open_record {
            scan.torn_lines = scan.line_count + 1 - first_line;
            scan.torn_at = Some(offset as u64);
            scan.lines.truncate(index);
            scan.unterminated = false;
            kept_invalid_utf8.retain(|&line| line < first_line);
            kept_lone_surrogates.retain(|&line| line < first_line);
        }
        scan.invalid_utf8 = kept_invalid_utf8.len() as u32;
        scan.lone_surrogates = kept_lone_surrogates.len() as u32;
        scan
    }

    proptest::proptest! {
        /// A part read in pieces reads as read whole, and as the one-loop reader read
        /// it: records cut short at any byte (a piece may end at any line), blank,
        /// unreadable and glued lines, invalid UTF-8, with and without the last newline.
        #[test]
        fn a_part_read_in_pieces_reads_as_read_whole(
            kinds in proptest::collection::vec(0u8..7, 0..24),
            cut in 0usize..2000,
            pieces in 2usize..6,
            invalid_utf8: bool,
        ) {
            let mut text = String::new();
            for (n, kind) in kinds.iter().enumerate() {
                let entry = alloc::format!("{{\"type\":\"user\",\"uuid\":\"u{n}\",\"message\":{{\"role\":\"user\",\"content\":\"m{n}\"}}}}");
                match kind {
                    0 | 1 => text.push_str(&entry),
                    2 => text.push_str(&alloc::format!("{CONTINUED}{entry}")),
                    3 => text.push_str("  "),
                    4 => text.push_str("not json"),
                    5 => text.push_str(&alloc::format!("{entry}{entry}")),
                    _ => text.push_str(&alloc::format!("{CONTINUED}{{\"type\":\"user\",\"message\":\"caf\u{e9} \\ud83d\\ude00\"}}")),
                }
                text.push('\n');
            }
            let mut bytes = text.into_bytes();
            bytes.truncate(cut.min(bytes.len()));
            // Repaired text is read in one piece; valid text in `pieces`.
            if let Some(at) = bytes.iter().position(|&b| b == b'e').filter(|_| invalid_utf8) {
                bytes[at] = 0xff;
            }
            let decoded = decode(&bytes);
            let whole = scan_part_on(1, &bytes, &decoded, &Workers::HERE, true);
            let split = scan_part_on(1, &bytes, &decoded, &Workers { pieces, piece_bytes: 1, run: &Backwards }, true);
            proptest::prop_assert_eq!(told(&split), told(&whole));
            proptest::prop_assert_eq!(told(&whole), told(&one_loop_scan(1, &bytes, &decoded)));
            // Text read as repaired is not looked at for surrogate escapes, and reads the same.
            let mut repaired = scan_part(1, &bytes, &decoded);
            proptest::prop_assert!(!repaired.surrogate_escapes);
            repaired.surrogate_escapes = whole.surrogate_escapes;
            proptest::prop_assert_eq!(told(&repaired), told(&whole));
        }
    }

    /// A line's type is set where the line is read, on the fast path and on serde's (a
    /// tab in the line sends it there) alike, and names exactly the `type` written.
    #[test]
    fn every_line_read_knows_its_type() {
        let types = [
            (None, LineType::None),
            (Some(""), LineType::Empty),
            (Some("user"), LineType::User),
            (Some("assistant"), LineType::Assistant),
            (Some("message"), LineType::Message),
            (Some("system"), LineType::System),
            (Some("tombstone"), LineType::Tombstone),
            (Some("custom"), LineType::Custom),
            (Some("compaction"), LineType::Compaction),
            (Some("session"), LineType::Session),
            (Some("summary"), LineType::Other),
            (Some("Users"), LineType::Other),
            (Some("user "), LineType::Other),
        ];
        for (kind, expected) in types {
            let kind = kind.map_or(String::new(), |kind| alloc::format!("\"type\":\"{kind}\","));
            for space in [" ", "\t"] {
                let line = alloc::format!("{{{kind}\"uuid\":{space}\"a\"}}");
                let envelope = parse_object(&line).unwrap();
                assert_eq!(envelope.line_type, expected, "{line}");
                assert_eq!(LineType::of(envelope.kind.get()), expected, "{line}");
            }
        }
        // A message is one without a type, or of an empty one, as much as a user's.
        for kind in ["", "\"type\":\"\",", "\"type\":\"user\","] {
            let line = alloc::format!("{{{kind}\"uuid\":\"a\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}");
            assert!(parse_object(&line).unwrap().is_message(), "{line}");
        }
        let other = parse_object("{\"type\":\"summary\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}").unwrap();
        assert!(!other.is_message());
    }

    #[test]
    fn reads_entries_and_reports_bad_lines() {
        let input = b"{\"type\":\"user\",\"uuid\":\"a\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n\
            not json\n\
            \n\
            {\"type\":\"assistant\",\"uuid\":\"b\",\"parentUuid\":\"a\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hello\"},{\"type\":\"tool_use\",\"id\":\"t\"}]}}\n\
            [1]\n\
            {\"type\":\"user\",\"uu";
        let (entries, scan) = scan(input);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].text, "hi");
        assert_eq!(entries[1].text, "hello");
        assert_eq!((entries[1].line, entries[1].parent_uuid.as_deref()), (4, Some("a")));
        assert_eq!(scan.skipped.iter().map(|s| s.line).collect::<Vec<_>>(), [2, 5]);
        assert_eq!(scan.torn_at, Some(input.len() as u64 - 18));
        assert_eq!(scan.line_count, 6);
    }

    #[test]
    fn keeps_lines_with_invalid_utf8_and_counts_them() {
        let (entries, read) =
            scan(b"{\"type\":\"user\",\"uuid\":\"a\",\"message\":{\"role\":\"user\",\"content\":\"caf\xe9\"}}\n{\"type\":\"x\"}\n");
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].text, "caf\u{fffd}");
        assert_eq!(read.invalid_utf8, 1);
        assert!(read.skipped.is_empty());
        // A line dropped as unreadable, or torn off, is reported as that alone: no
        // entry kept it, so no invalid UTF-8 was read in its place.
        let (entries, dropped) = scan(b"{\"type\":\"user\",\"uuid\":\"a\"}\n{\"caf\xe9\n{\"type\":\"x\"}\n{\"caf\xe9");
        assert_eq!(entries.len(), 2);
        assert_eq!((dropped.invalid_utf8, dropped.skipped.len(), dropped.torn_lines), (0, 1, 1));
    }

    #[test]
    fn splits_glued_objects() {
        let (entries, scan) = scan(b"{\"type\":\"a\",\"uuid\":\"1\"}{\"type\":\"b\",\"uuid\":\"2\"} \n{\"type\":\"c\"}{oops\n");
        assert_eq!(entries.iter().map(|e| e.type_.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(entries[1].raw, "{\"type\":\"b\",\"uuid\":\"2\"}");
        assert_eq!(scan.recovered_glued, 2);
        assert_eq!(scan.skipped.len(), 1);
    }

    #[test]
    fn a_message_is_read_by_structure_and_refused_as_serde_would() {
        let raw: Raw = serde_json::from_str(
            r#"{"id":null,"role":"assistant","content":[{"type":"text","text":"a \"b\""},{"type":"tool_use","id":"t","input":{"x":[1]}}]}"#,
        )
        .unwrap();
        let message = parse_message(raw).unwrap();
        assert_eq!((message.role.get(), message.id.get()), (Some("assistant"), None));
        let Some(Content::Blocks(blocks)) = parse_content(message.content) else { panic!("blocks") };
        assert_eq!((blocks[0].text.get(), blocks[1].input.map(Raw::get)), (Some("a \"b\""), Some(r#"{"x":[1]}"#)));
        let repeated: Raw = serde_json::from_str(r#"{"role":"user","role":"assistant"}"#).unwrap();
        assert!(parse_message(repeated).is_none());
        assert!(parse_block(r#"{"type":"text","text":"a","text":"b"}"#).is_none());
    }

    /// Reading the content in the message's own pass gives what reading the message and
    /// then its content gives, whatever shape the content has.
    #[test]
    fn a_message_read_in_one_pass_reads_as_in_two() {
        let shown = |content: Option<Content>| match content {
            None => String::from("none"),
            Some(Content::Text(text)) => alloc::format!("text {text}"),
            Some(Content::Blocks(blocks)) => blocks
                .iter()
                .map(|b| alloc::format!("{:?}/{:?}/{:?}/{:?}", b.kind.get(), b.text.get(), b.input.map(Raw::get), b.content.map(Raw::get)))
                .collect::<Vec<_>>()
                .join(";"),
        };
        for json in [
            r#"{"role":"user","content":"plain"}"#,
            r#"{"role":"user","content":"esc\"aped\n"}"#,
            r#"{"content": [ {"type":"text","text":"a"} , {"type":"tool_use","id":"t","input":{"q":["]"]}} ] ,"role":"assistant"}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}]}]}"#,
            r#"{"role":"user","content":[{"type":"text","text":"a"},"not a block",{"type":"text"}]}"#,
            r#"{"role":"user","content":[{"type":"text","type":"again"}]}"#,
            r#"{"role":"user","content":null}"#,
            r#"{"role":"user","content":7}"#,
            r#"{"role":"user","content":[]}"#,
            r#"{"role":"user"}"#,
            r#"{"role":"user","content":"a","content":"b"}"#,
        ] {
            let raw: Raw = serde_json::from_str(json).unwrap();
            let two =
                parse_message(raw).map(|m| (m.role.get().map(String::from), m.content.map(Raw::get), shown(parse_content(m.content))));
            let one = parse_message_content(raw).map(|(m, read)| (m.role.get().map(String::from), m.content.map(Raw::get), shown(read)));
            assert_eq!(one, two, "{json}");
        }
    }

    /// The names serde reads into [`EnvelopeFields`], as its derived code declares them.
    fn envelope_fields() -> &'static [&'static str] {
        struct Names;
        impl<'de> serde::Deserializer<'de> for Names {
            type Error = serde::de::value::Error;
            fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
                Err(serde::de::Error::custom("names only"))
            }
            fn deserialize_struct<V: serde::de::Visitor<'de>>(
                self,
                _: &'static str,
                fields: &'static [&'static str],
                _: V,
            ) -> Result<V::Value, Self::Error> {
                Err(serde::de::Error::custom(fields.join(",")))
            }
            serde::forward_to_deserialize_any! {
                bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
                unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
            }
        }
        let Err(names) = EnvelopeFields::deserialize(Names) else { unreachable!("a struct asks for its fields") };
        alloc::boxed::Box::leak(
            names
                .to_string()
                .split(',')
                .map(String::from)
                .map(|n| &*alloc::boxed::Box::leak(n.into_boxed_str()))
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        )
    }

    /// Every field serde reads, and repeats, nulls, odd types and escapes, read on the fast
    /// path as serde reads them — or left to serde.
    #[test]
    fn the_quick_envelope_reads_every_field_as_serde_does() {
        let fields = envelope_fields();
        assert!(fields.len() >= 30 && fields.contains(&"message") && fields.contains(&"isSidechain"), "{fields:?}");
        let values =
            [r#""text""#, r#""esc\"aped \u00e9""#, "true", "false", "null", "7", r#"{"role":"user","content":"hi"}"#, "[1]", r#""\ud83d""#];
        let mut quick = 0;
        for (n, field) in fields.iter().enumerate() {
            for (m, value) in values.iter().enumerate() {
                let other = fields[(n + m + 1) % fields.len()];
                for line in [
                    alloc::format!(r#"{{"{field}":{value}}}"#),
                    alloc::format!(r#"{{"{other}":"x", "{field}" : {value},"unknown":[{{}}]}}"#),
                    alloc::format!(r#"{{"{field}":{value},"{field}":{value}}}"#),
                    alloc::format!(r#"{{"{field}":{value},"{other}":{value}}}"#),
                ] {
                    let serde = serde_json::from_str::<EnvelopeFields>(&line).ok();
                    if let Some((envelope, _)) = quick_envelope(&line) {
                        quick += 1;
                        assert_eq!(Some(envelope), serde, "{line}");
                    }
                }
            }
        }
        assert!(quick > fields.len() * values.len(), "the fast path read only {quick} lines");
        for key in [r"ty\u0070e", r"other\n"] {
            let line = alloc::format!(r#"{{"{key}":"user"}}"#);
            assert!(quick_envelope(&line).is_none(), "{line}");
        }
    }

    /// Every line real tools wrote reads the same on the fast path as through serde, and
    /// almost every one takes it.
    #[test]
    fn the_corpus_reads_the_same_on_the_fast_path() {
        let paths = crate::support::corpus_files();
        let (mut lines, mut quick) = (0, 0);
        for path in &paths {
            let text = std::fs::read_to_string(path).unwrap();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                lines += 1;
                if let Some((envelope, checked)) = quick_envelope(line) {
                    quick += 1;
                    assert_eq!(Some(envelope), serde_json::from_str::<EnvelopeFields>(line).ok(), "{}: {line}", path.display());
                    assert_eq!(checked.surrogate_escape, has_surrogate_escape(line.as_bytes()));
                }
            }
        }
        assert!(paths.len() >= 20 && quick * 100 >= lines * 95, "{quick} of {lines} lines in {} files took the fast path", paths.len());
    }

    /// The check of a line tells whether it has a surrogate escape, as a look at its bytes
    /// does, and a scan of text not yet repaired says so (then the text is repaired:
    /// `sessions::tests::a_lone_surrogate_in_a_later_part_read_in_pieces_is_repaired`).
    /// A line only serde can read is looked at.
    #[test]
    fn a_lines_check_tells_its_surrogate_escapes() {
        let scanned = |line: &str| {
            let bytes = alloc::format!("{line}\n").into_bytes();
            let text = decode_utf8(bytes);
            scan_part_on(1, text.as_bytes(), &text, &Workers::HERE, true).surrogate_escapes
        };
        for (value, surrogate) in [
            (r#""\ud83d\ude00""#, true),
            (r#""cut \uD83D""#, true),
            (r#""\udfff""#, true),
            (r#""\ud7ff is no surrogate""#, false),
            (r#""\u00e9""#, false),
            (r#""a backslash, then \\ud83d""#, false),
            (r#""two, then one \\\ud83d""#, true),
            (r#"{"\ud83d":1}"#, true),
        ] {
            let line = alloc::format!(r#"{{"type":"user","message":{value}}}"#);
            let (_, checked) = quick_envelope(&line).unwrap_or_else(|| panic!("not sure of {line}"));
            assert_eq!(checked.surrogate_escape, surrogate, "{line}");
            assert_eq!(has_surrogate_escape(line.as_bytes()), surrogate, "{line}");
            // A whole part is searched for `\u` rather than looked at a backslash at a time.
            let long = alloc::format!("{line}{}", " ".repeat(4096));
            assert_eq!(has_surrogate_escape(long.as_bytes()), surrogate, "{line}, then spaces");
            assert_eq!(scanned(&line), surrogate, "{line}");
            // A key with an escape leaves the line to serde: its bytes are looked at.
            let for_serde = alloc::format!(r#"{{"ty\u0070e":"user","message":{value}}}"#);
            assert!(quick_envelope(&for_serde).is_none(), "{for_serde}");
            assert_eq!(scanned(&for_serde), surrogate, "{for_serde}");
        }
    }

    /// A record about to be written reads line for line as a part of the same text
    /// does: every real line, in records of one to three lines as Mneme writes them
    /// (every line but the last marked continued), ended by `\n` or `\r\n`.
    #[test]
    fn a_record_reads_as_a_part_reads_it() {
        for path in crate::support::corpus_files() {
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text.split('\n').filter(|l| !l.trim().is_empty()).collect();
            let (mut at, mut n) = (0, 0);
            while at < lines.len() {
                let size = n % 3 + 1;
                let newline = if n % 2 == 0 { "\n" } else { "\r\n" };
                let record = mark_continued(lines[at..lines.len().min(at + size)].join(newline));
                (at, n) = (at + size, n + 1);
                let part = scan_part(1, record.as_bytes(), &record);
                match read_record(1, &record) {
                    Ok(read) => {
                        assert!(part.skipped.is_empty() && part.torn_at.is_none(), "{}: record {n}", path.display());
                        assert_eq!(read.len(), part.lines.len());
                        for (read, scanned) in read.iter().zip(&part.lines) {
                            assert_eq!((read.line, read.raw, &read.env), (scanned.line, scanned.raw, &scanned.env));
                        }
                    }
                    // What a part reads only by its own rules (glued objects) is refused.
                    Err(_) => assert!(!part.skipped.is_empty() || part.recovered_glued > 0, "{}: record {n}", path.display()),
                }
            }
        }
        assert!(read_record(1, "{\"a\":1}\n\n{\"b\":2}").is_err(), "a blank line is no object");
    }

    /// A line's `type` is the same asked of its kind or of its text, for every kind.
    #[test]
    fn a_lines_kind_names_its_type() {
        for kind in [None, Some(""), Some("user"), Some("assistant"), Some("message"), Some("system"), Some("tombstone"), Some("custom")]
            .into_iter()
            .chain([Some("compaction"), Some("session"), Some("summary"), Some("file-history-snapshot"), Some("usr")])
        {
            let line_type = LineType::of(kind);
            assert_eq!(line_type.name().unwrap_or_else(|| kind.unwrap_or_default()), kind.unwrap_or_default(), "{kind:?}");
            assert_eq!(line_type.name().is_none(), line_type == LineType::Other, "{kind:?}");
        }
        let (entries, _) = scan(b"{\"type\":\"summary\",\"summary\":\"s\"}\n{\"type\":\"user\",\"uuid\":\"u\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n{\"uuid\":\"v\"}\n");
        assert_eq!(entries.iter().map(|e| e.type_.as_str()).collect::<Vec<_>>(), ["summary", "user", ""]);
    }

    #[test]
    fn odd_field_types_do_not_cost_the_line() {
        let (entries, _) = scan(b"{\"type\":\"user\",\"uuid\":7,\"parentUuid\":{\"x\":1},\"isSidechain\":\"yes\",\"message\":\"text\"}\n");
        assert_eq!(entries.len(), 1);
        assert_eq!((entries[0].uuid.as_deref(), entries[0].parent_uuid.as_deref(), entries[0].is_sidechain), (None, None, false));
    }

    /// A field's aliases read as one, the first present in the order Claude Code's,
    /// Cersei's, pi's: one that is null or no string counts as absent.
    #[test]
    fn the_aliases_of_a_field_read_as_one() {
        for (line, uuid, parent, session) in [
            (r#"{"uuid":"u","id":"i","parentUuid":"p","parent_uuid":"q","parentId":"r","sessionId":"s","session_id":"t"}"#, "u", "p", "s"),
            (r#"{"uuid":null,"id":"i","parentUuid":7,"parent_uuid":"q","parentId":"r","sessionId":null,"session_id":"t"}"#, "i", "q", "t"),
            (r#"{"id":"i","parentUuid":null,"parent_uuid":null,"parentId":"r","session_id":"t"}"#, "i", "r", "t"),
        ] {
            let env = parse_object(line).unwrap();
            assert_eq!((env.uuid(), env.parent_uuid(), env.session_id()), (Some(uuid), Some(parent), Some(session)), "{line}");
        }
    }

    /// The fields few lines have are kept apart, and only by the lines that have one:
    /// a long session's lines stay small enough to walk over and over.
    #[test]
    fn only_lines_with_a_rare_field_keep_them() {
        let ordinary = r#"{"parentUuid":"a","isSidechain":false,"type":"user","message":{"role":"user","content":"hi"},"uuid":"b","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s","cwd":"/w","version":"2.1.0","gitBranch":"main","userType":"external"}"#;
        let env = parse_object(ordinary).unwrap();
        assert!(env.rare.is_none() && env.rare() == &NO_RARE);
        let boundary = r#"{"type":"system","subtype":"compact_boundary","uuid":"c","parentUuid":null,"logicalParentUuid":"b"}"#;
        let env = parse_object(boundary).unwrap();
        assert!(env.rare().subtype.get() == Some("compact_boundary") && env.rare().logical_parent_uuid.get() == Some("b"));
        assert!(core::mem::size_of::<Line>() <= 224, "a line takes {} bytes", core::mem::size_of::<Line>());
        // Each rare field alone is kept (`firstKeptEntryIndex` by serde's reading).
        for field in [
            r#""logicalParentUuid":"x""#,
            r#""subtype":"x""#,
            r#""deleted_uuid":"x""#,
            r#""leafUuid":"x""#,
            r#""summary":"x""#,
            r#""customTitle":"x""#,
            r#""compactMetadata":{}"#,
            r#""microcompactMetadata":{}"#,
            r#""firstKeptEntryId":"x""#,
            r#""firstKeptEntryIndex":3"#,
            r#""role":"x""#,
            r#""compact":"x""#,
            r#""name":"x""#,
            r#""agent":"x""#,
            r#""customType":"x""#,
            r#""data":{}"#,
            r#""queueTranscriptOnly":true"#,
        ] {
            let line = alloc::format!(r#"{{"type":"user","uuid":"b",{field}}}"#);
            let env = parse_object(&line).unwrap();
            assert!(env.rare.is_some() && env.rare() != &NO_RARE, "{line}");
        }
    }

    #[test]
    fn reads_cersei_and_pi_ids() {
        let (entries, _) = scan(b"{\"type\":\"user\",\"uuid\":\"b\",\"parent_uuid\":\"a\",\"session_id\":\"s\"}\n{\"type\":\"message\",\"id\":\"c\",\"parentId\":\"b\"}");
        assert_eq!((entries[0].parent_uuid.as_deref(), entries[0].session_id.as_deref()), (Some("a"), Some("s")));
        assert_eq!((entries[1].uuid.as_deref(), entries[1].parent_uuid.as_deref()), (Some("c"), Some("b")));
    }

    #[test]
    fn a_blank_last_line_without_newline_still_needs_one() {
        let (entries, scan) = scan(b"{\"type\":\"a\"}\n\x0c");
        assert_eq!(entries.len(), 1);
        assert!(scan.unterminated && scan.torn_at.is_none() && scan.skipped.is_empty());
    }

    #[test]
    fn a_complete_last_line_without_newline_is_kept() {
        let (entries, scan) = scan(b"{\"type\":\"a\"}\n{\"type\":\"b\"}");
        assert_eq!(entries.len(), 2);
        assert!(scan.unterminated);
        assert_eq!(scan.torn_at, None);
    }

    #[test]
    fn a_record_cut_at_any_byte_reads_whole_or_not_at_all() {
        let before = "{\"type\":\"user\",\"uuid\":\"a\"}\n";
        let record = mark_continued(String::from(
            "{\"type\":\"user\",\"uuid\":\"b\"}\n {\"type\":\"assistant\",\"uuid\":\"c\"}\n{\"type\":\"user\",\"uuid\":\"d\"}",
        ));
        assert_eq!(
            record.lines().filter(|l| l.starts_with(CONTINUED)).count(),
            2,
            "a copied mark is dropped, the last line has none: {record}"
        );
        let file = alloc::format!("{before}{record}\n");
        for cut in before.len()..=file.len() {
            let (entries, scan) = scan(&file.as_bytes()[..cut]);
            let whole = cut >= file.len() - 1;
            assert_eq!(entries.len(), if whole { 4 } else { 1 }, "cut at {cut}");
            // Its mark alone is a blank line: nothing to read, nothing to move aside.
            assert_eq!(scan.torn_at.is_some(), !whole && cut > before.len() + 1, "cut at {cut}");
            if let Some(at) = scan.torn_at {
                assert_eq!(at as usize, before.len());
                assert_eq!(scan.torn_lines, scan.line_count - 1, "cut at {cut}");
            }
        }
    }
}
