//! Sessions over storage: locating a session's parts, the open-session cache, reading
//! and listing. Writing is in `write`, repair and removal in `maintenance`, and the
//! store's side of compaction and the gates in `compaction` and `gates`.

use alloc::borrow::{Cow, ToOwned};
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::cell::RefCell;

use crate::base::Base;
use crate::catalog::Catalog;
use crate::catalog::{Change, Counters, SessionRow};
use crate::dialect;
use crate::error::Error;
use crate::format::{Format, Marker};
use crate::keys::{self, PartName};
use crate::message::{Injection, Provider};
use crate::scan::{self, PartScan};
use crate::storage::{KeyInfo, Storage, StorageError};
use crate::support::hash::FastMap;
use crate::transcript::context::Sources;
use crate::transcript::render::{self, ProviderContext};
use crate::transcript::thread::{Loaded, Tip};
use crate::transcript::{CheckReport, Context, Entry, LoadReport, shorten};

pub(crate) mod branches;
pub(crate) mod compaction;
pub(crate) mod gates;
pub(crate) mod items;
pub(crate) mod lines;
pub(crate) mod maintenance;
pub mod retention;
pub(crate) mod search;
pub(crate) mod write;

pub use compaction::{Applied, CompactionIds};
pub use lines::{TranscriptKey, WrittenSession};
pub use maintenance::{RelinkedLine, RepairReport};
pub use search::SearchHit;
pub use write::NewEntry;

pub use crate::catalog::SessionInfo;
pub use compaction::Compaction;
pub use gates::Gates;

/// What the session operations keep between calls.
#[derive(Debug, Default)]
pub(crate) struct SessionsState {
    /// The sessions this store has open, by id. A hash map: a held session's state is
    /// taken out and put back by every append, and an ordered map freed and allocated
    /// its one node again each time.
    pub open: RefCell<FastMap<String, OpenSession>>,
    /// The states of sub-agents' transcripts this store wrote, by key.
    pub agents: RefCell<FastMap<String, OpenSession>>,
    /// The message index `search` keeps up to date.
    pub search: RefCell<search::SearchState>,
    /// The ends of the transcripts `append_lines` wrote, by key.
    pub tails: RefCell<FastMap<String, lines::Tail>>,
    /// The items `items` read or `append_items` wrote, by session.
    pub items: RefCell<FastMap<String, items::Cached>>,
}

/// A store's sessions (the WIT's `sessions` interface): `store.sessions()`.
pub struct Sessions<'s, S> {
    pub(crate) base: &'s Base<S>,
    pub(crate) state: &'s SessionsState,
    pub(crate) catalog: Catalog<'s, S>,
}

impl<S> Clone for Sessions<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Sessions<'_, S> {}

impl<'s, S> Sessions<'s, S> {
    pub(crate) fn compaction(self) -> Compaction<'s, S> {
        Compaction { sessions: self }
    }

    pub(crate) fn gates(self) -> Gates<'s, S> {
        Gates { sessions: self }
    }
}

/// A file under `projects/` that looks like a session but that this storage cannot
/// serve (its name is not a key here: `aux.jsonl` on Windows, a name that is not
/// UTF-8). Listed apart so one odd file never hides the rest of a store.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkippedKey {
    pub key: String,
    pub reason: String,
}

/// Every session of a store, and what could not be listed as one.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Listing {
    /// Most recently updated first.
    pub sessions: Vec<SessionInfo>,
    pub skipped: Vec<SkippedKey>,
}

/// A loaded session.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Transcript {
    pub id: String,
    pub project: String,
    pub parts: u32,
    /// Every live entry of every part in order (tombstone lines and the entries they
    /// delete are left out; `report` counts them).
    pub entries: Vec<Entry>,
    /// The main conversation from its root to the newest leaf, across compactions:
    /// indices into `entries`.
    pub chain: Vec<u32>,
    pub report: LoadReport,
}

/// A sub-agent transcript that belongs to a session.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Subagent {
    pub key: String,
    pub transcript: Transcript,
}

/// What the store knows about a session it has written to, so an append costs one
/// listing and one write instead of a read of the whole transcript. Every field is
/// what a fresh read of the same bytes would give (see [`Tip`]).
#[derive(Clone, Debug)]
pub(crate) struct OpenSession {
    /// The project folder that holds the session.
    pub project: String,
    /// Sizes of the parts when last seen, part 1 first.
    pub sizes: Vec<u64>,
    /// The dialect the session is written in.
    pub format: Format,
    /// Where the next entry chains to.
    pub tip: Tip,
    /// Lines in the last part (the number of the last line written).
    pub last_part_lines: u32,
    /// The last part's last line is complete but lacks its newline.
    pub unterminated: bool,
    /// The last part ends in a torn fragment at this offset, still to be moved aside.
    pub torn_at: Option<u64>,
    /// The lines from `torn_at` on (the fragment and the landed lines of its record).
    pub torn_lines: u32,
    /// Bytes from the last compaction on (all of them without one): what resume
    /// loads, and what the size cap limits.
    pub since_compaction: u64,
    /// The state must be read again before the next write: a write's lines could not
    /// be followed incrementally, or a write was interrupted (its future dropped).
    pub stale: bool,
    /// A write failed with an I/O error: whether it landed is unknown, so the session
    /// refuses writes until it is reopened.
    pub poisoned: bool,
    /// The ids of a pi session's lines, which a new one's must not repeat (pi's are 8
    /// hex digits); empty in the other dialects.
    pub ids: BTreeSet<String>,
    /// A pi session of format v1, whose entries have no ids: a new one would chain to
    /// nothing and start a conversation of its own, hiding the rest.
    pub without_ids: bool,
    /// The folder the session last worked in (as `Loaded::cwd` reads it): a line
    /// written without one names it.
    pub cwd: String,
}

impl OpenSession {
    /// Takes what lines read or written after the state was made tell: their ids, the
    /// folder they name.
    pub(crate) fn follow(&mut self, lines: &[scan::Line<'_>]) {
        if let Some(cwd) = crate::transcript::thread::last_cwd(lines)
            && cwd != self.cwd
        {
            cwd.clone_into(&mut self.cwd);
        }
        if self.format == Format::Pi {
            self.ids.extend(lines.iter().filter_map(|l| l.env.uuid()).map(ToOwned::to_owned));
            self.without_ids |= lines.iter().any(|l| l.env.predates_pi_ids());
        }
    }
}

/// The parts of one session found in a listing, in part order.
pub(crate) struct Parts {
    pub project: String,
    pub id: String,
    pub parts: Vec<KeyInfo>,
}

impl Parts {
    fn sizes(&self) -> Vec<u64> {
        self.parts.iter().map(|p| p.size).collect()
    }
    pub(crate) fn base_key(&self) -> String {
        keys::session_key(&self.project, &self.id)
    }
}

/// Groups a listing's main-transcript keys into sessions.
pub(crate) fn group_sessions(listing: &[KeyInfo]) -> BTreeMap<(String, String), Vec<(u32, KeyInfo)>> {
    let mut sessions: BTreeMap<(String, String), Vec<(u32, KeyInfo)>> = BTreeMap::new();
    for info in listing {
        if let Some(PartName { project, id, part }) = keys::parse_session_key(&info.key) {
            sessions.entry((project.to_owned(), id.to_owned())).or_default().push((part, info.clone()));
        }
    }
    for parts in sessions.values_mut() {
        parts.sort_by_key(|(part, _)| *part);
    }
    sessions
}

/// How much of a session's end resume reads first, and how many times more it reads
/// each time that is not enough: a session never compacted is read in full after a
/// 1 MiB and a 16 MiB look at its end (so at most 17 MiB more than its size).
const TAIL_BYTES: u64 = 1 << 20;
const TAIL_GROWTH: u64 = 16;

/// Whether `bytes` may hold a compaction line in any dialect (a quick look at the bytes,
/// not a parse: the type names Claude Code, pi and crab give them).
fn mentions_compaction(bytes: &[u8]) -> bool {
    // One pass for the word all three share: `compact_boundary`, `"compaction"`, `"compact"`.
    memchr::memmem::find_iter(bytes, b"compact").any(|at| {
        let after = bytes.get(at + 7..).unwrap_or_default();
        let quoted = at.checked_sub(1).and_then(|before| bytes.get(before)) == Some(&b'"');
        after.starts_with(b"_boundary") || (quoted && (after.starts_with(b"\"") || after.starts_with(b"ion\"")))
    })
}

/// Reads parts already in memory as one session and hands the result to `f`.
pub(crate) fn with_loaded<B: AsRef<[u8]>, R>(raw: &[B], f: impl FnOnce(&Loaded) -> R) -> R {
    with_loaded_from(1, raw, f)
}

/// [`with_loaded`] for the parts from number `first_part` on.
fn with_loaded_from<B: AsRef<[u8]>, R>(first_part: u32, raw: &[B], f: impl FnOnce(&Loaded) -> R) -> R {
    let texts: Vec<Cow<str>> = raw.iter().map(|bytes| scan::decode(bytes.as_ref())).collect();
    let scans: Vec<PartScan> =
        raw.iter().zip(&texts).zip(first_part..).map(|((bytes, text), part)| scan::scan_part(part, bytes.as_ref(), text)).collect();
    f(&Loaded::assemble(scans))
}

/// [`with_loaded_from`] over parts read into texts that `f` may share slices of (a
/// context's messages): valid UTF-8 is not copied. The load report's UTF-8 counts are
/// not kept: the lines are the same.
fn with_shared<R>(first_part: u32, raw: Vec<Vec<u8>>, workers: &scan::Workers, f: impl FnOnce(Loaded, Sources) -> R) -> R {
    let mut texts: Vec<Arc<String>> = raw.into_iter().map(|bytes| Arc::new(scan::decode_utf8(bytes))).collect();
    fn read<'t>(first_part: u32, texts: &'t [Arc<String>], workers: &scan::Workers) -> Vec<PartScan<'t>> {
        texts.iter().zip(first_part..).map(|(text, part)| scan::scan_part_on(part, text.as_bytes(), text, workers, true)).collect()
    }
    let mut scans = read(first_part, &texts, workers);
    // A lone surrogate escape, which JSON parsers refuse, is repaired as `decode` does,
    // looked for only in a part where a line read had a surrogate escape; the parts
    // are then read again (rare: Node writes one when it cuts an emoji).
    if scans.iter().any(|scan| scan.surrogate_escapes) {
        let repaired: Vec<Option<String>> = texts
            .iter()
            .zip(&scans)
            .map(|(text, scan)| if scan.surrogate_escapes { scan::repair_lone_surrogates(text) } else { None })
            .collect();
        if repaired.iter().any(Option::is_some) {
            drop(scans);
            for (text, repaired) in texts.iter_mut().zip(repaired) {
                if let Some(repaired) = repaired {
                    *text = Arc::new(repaired);
                }
            }
            scans = read(first_part, &texts, workers);
        }
    }
    f(Loaded::assemble(scans), Sources { first_part, texts: &texts, workers })
}

/// The open state of a session read in full.
pub(crate) fn state_of(project: &str, raw: &[Vec<u8>]) -> OpenSession {
    let texts: Vec<Cow<str>> = raw.iter().map(|bytes| scan::decode(bytes)).collect();
    let scans: Vec<PartScan> = raw.iter().zip(&texts).zip(1u32..).map(|((bytes, text), part)| scan::scan_part(part, bytes, text)).collect();
    let (last_part_lines, unterminated, torn_at, torn_lines) =
        scans.last().map_or((0, false, None, 0), |s| (s.line_count, s.unterminated && s.torn_at.is_none(), s.torn_at, s.torn_lines));
    let loaded = Loaded::assemble(scans);
    // A torn tail is no part of what resume loads: it is moved aside before the next write.
    let torn = torn_at.zip(raw.last()).map_or(0, |(at, last)| (last.len() as u64).saturating_sub(at));
    let total = raw.iter().fold(0u64, |sum, bytes| sum.saturating_add(bytes.len() as u64)).saturating_sub(torn);
    let since_compaction = match loaded.lines.iter().rposition(|l| dialect::is_compaction(&l.env)) {
        Some(at) => loaded.lines[at..].iter().fold(0u64, |sum, l| sum.saturating_add(l.raw.len() as u64 + 1)),
        None => total,
    };
    let mut state = OpenSession {
        project: project.to_owned(),
        sizes: raw.iter().map(|b| b.len() as u64).collect(),
        since_compaction,
        format: Format::detect(&loaded.lines),
        tip: loaded.tip(),
        last_part_lines,
        unterminated,
        torn_at,
        torn_lines,
        stale: false,
        poisoned: false,
        ids: BTreeSet::new(),
        without_ids: false,
        cwd: String::new(),
    };
    state.follow(&loaded.lines);
    state
}

/// Whether `now` differs from `before` only by a longer last part.
pub(crate) fn only_last_part_grew(before: &[u64], now: &[u64]) -> bool {
    before.len() == now.len()
        && !now.is_empty()
        && before[..before.len() - 1] == now[..now.len() - 1]
        && now[now.len() - 1] > before[before.len() - 1]
}

impl<S: Storage> Sessions<'_, S> {
    /// [`crate::check_bytes`]: a transcript that is not in the store. This and the
    /// next two read no store (no `self`); they are here so that this view carries
    /// every operation of its WIT interface under its WIT name: the sync engine and
    /// the component's exports are derived from the views (`cargo xtask codegen`).
    pub fn check_bytes(data: &[u8]) -> CheckReport {
        crate::check_bytes(data)
    }

    /// [`keys::project_dir_name`]: the project a working directory's sessions are in.
    pub fn project_of(cwd: &str) -> String {
        keys::project_dir_name(cwd)
    }

    /// [`keys::session_id_of`]: the session id an agent SDK's session name is kept under.
    pub fn session_id_of(name: &str) -> String {
        keys::session_id_of(name)
    }

    /// Which secrets are taken out before anything is written, store-wide (transcript
    /// lines, memories, crab's titles): kinds by name (see
    /// [`crate::redact::Redaction::named`]; none turns redaction off). The store's
    /// typed form is [`crate::Store::set_redaction`].
    pub fn set_redaction(&self, kinds: &[String]) -> Result<(), Error> {
        self.base.set_redaction(crate::redact::Redaction::named(kinds)?);
        Ok(())
    }
}

impl<S: Storage> Sessions<'_, S> {
    /// Keeps session `id` open for writing: takes its lock and keeps it until
    /// [`Sessions::release`], so every write after this one skips locking and listing
    /// and costs one append. Meanwhile other writers (another store, another process)
    /// wait for the lock and then fail with `locked`, as the storage's lock does. The
    /// session must exist. Programs that take no lock (Claude Code) must not write it
    /// meanwhile.
    pub async fn hold(&self, id: &str) -> Result<(), Error> {
        let parts = self.require(id).await?;
        let name = parts.base_key();
        if !self.base.hold(&name).await? {
            return Ok(());
        }
        // Read what the session holds now, under the lock, so the next write starts warm.
        if let Err(error) = self.refresh_held(id, &parts.project).await {
            let _ = self.base.release(&name).await;
            return Err(error);
        }
        Ok(())
    }

    /// Gives back the lock [`Sessions::hold`] took; a session not held is left alone.
    pub async fn release(&self, id: &str) -> Result<(), Error> {
        match self.base.held_lock(|name| keys::parse_session_key(name).is_some_and(|p| p.id == id)) {
            Some(name) => Ok(self.base.release(&name).await?),
            None => Ok(()),
        }
    }

    /// Forgets what the store knows about session `id` and its sub-agents' transcripts,
    /// so the next operation reads them from storage again. This is how a session
    /// refused after a failed write (see [`Error::SessionPoisoned`]) is opened again.
    pub fn reopen(&self, id: &str) {
        self.state.open.borrow_mut().remove(id);
        self.state.items.borrow_mut().remove(id);
        let folder = format!("/{id}/subagents/");
        self.state.agents.borrow_mut().retain(|key, _| !key.contains(&folder));
        // The ends of its transcripts stored by key (`append_lines`): its own parts and
        // those in its folder (`projects/<project>/<id>/…`).
        self.state.tails.borrow_mut().retain(|key, _| {
            let in_folder = key.strip_prefix(keys::PROJECTS).and_then(|rest| rest.split('/').nth(1)).is_some_and(|folder| folder == id)
                && key.matches('/').count() > 2;
            !(in_folder || keys::parse_session_key(key).is_some_and(|p| p.id == id))
        });
    }

    /// The parts of session `id`, in whichever project holds it.
    pub(crate) async fn locate(&self, id: &str) -> Result<Option<Parts>, Error> {
        keys::validate_session_id(id)?;
        let known = self.state.open.borrow().get(id).map(|s| s.project.clone());
        let prefix = match &known {
            Some(project) => format!("{}{project}/{id}", keys::PROJECTS),
            None => keys::PROJECTS.to_owned(),
        };
        let listing = self.base.storage.list(&prefix).await?;
        let mut found = group_sessions(&listing).into_iter().filter(|((_, sid), _)| sid == id);
        let Some(((project, _), parts)) = found.next() else { return Ok(None) };
        let others: Vec<String> = found.map(|((p, _), _)| p).collect();
        if !others.is_empty() {
            return Err(Error::AmbiguousSession {
                id: id.to_owned(),
                projects: [project].into_iter().chain(others).collect::<Vec<_>>().join(", "),
            });
        }
        Ok(Some(Parts { project, id: id.to_owned(), parts: parts.into_iter().map(|(_, info)| info).collect() }))
    }

    pub(crate) async fn require(&self, id: &str) -> Result<Parts, Error> {
        self.locate(id).await?.ok_or_else(|| Error::SessionNotFound { id: id.to_owned() })
    }

    pub(crate) async fn read_parts(&self, parts: &Parts) -> Result<Vec<Vec<u8>>, Error> {
        let mut raw = Vec::with_capacity(parts.parts.len());
        for part in &parts.parts {
            match self.base.storage.read(&part.key, 0, None).await {
                Ok(bytes) => raw.push(bytes),
                Err(StorageError::NotFound { .. }) => return Err(Error::SessionNotFound { id: parts.id.clone() }),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(raw)
    }

    /// Every live entry of session `id`, its main chain, and the load report.
    pub async fn load(&self, id: &str) -> Result<Transcript, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| transcript_of(&parts.project, id, raw.len() as u32, loaded)))
    }

    /// The context a model resumes session `id` with: the main chain's messages from
    /// its last compaction on. Reads the session from its end, further back only as far
    /// as the context needs (a compacted session of any size costs a read of what
    /// follows its last compaction), and all of it for a session never compacted.
    pub async fn context(&self, id: &str) -> Result<Context, Error> {
        Ok(self.context_from_end(id, TAIL_BYTES).await?.0)
    }

    /// [`Sessions::context`] and the session's dialect, reading `first` bytes from the end
    /// first.
    async fn context_from_end(&self, id: &str, first: u64) -> Result<(Context, Format), Error> {
        let parts = self.require(id).await?;
        let total = parts.parts.iter().fold(0u64, |sum, p| sum.saturating_add(p.size));
        let mut want = first.max(1);
        loop {
            if want >= total {
                let raw = self.read_parts(&parts).await?;
                return Ok(with_shared(1, raw, &scan::Workers::of(&self.base.storage), |loaded, sources| {
                    let plan = loaded.context_lines();
                    let format = Format::detect(&loaded.lines);
                    (loaded.into_context(plan, sources), format)
                }));
            }
            let (first_part, raw) = self.read_tail(&parts, want).await?;
            // Without a compaction in it, no tail is enough: read further before parsing.
            if !raw.iter().any(|bytes| mentions_compaction(bytes)) {
                want = want.saturating_mul(TAIL_GROWTH);
                continue;
            }
            let context = with_shared(first_part, raw, &scan::Workers::of(&self.base.storage), |loaded, sources| {
                let format = Format::detect(&loaded.lines);
                loaded.end_plan().map(|plan| (loaded.into_context(plan, sources), format))
            });
            if let Some(context) = context {
                return Ok(context);
            }
            want = want.saturating_mul(TAIL_GROWTH);
        }
    }

    /// The last `want` bytes (or a little less) of a session's parts, starting at a line
    /// start, and the number of the first part they come from. Line numbers in the
    /// first of them count from the cut.
    async fn read_tail(&self, parts: &Parts, want: u64) -> Result<(u32, Vec<Vec<u8>>), Error> {
        let mut raw = Vec::new();
        let mut remaining = want;
        let mut first_part = 1;
        for (index, part) in parts.parts.iter().enumerate().rev() {
            let from = part.size.saturating_sub(remaining);
            // One byte before the cut tells whether it falls on a line start.
            let offset = from.saturating_sub(1);
            let mut bytes = match self.base.storage.read(&part.key, offset, None).await {
                Ok(bytes) => bytes,
                Err(StorageError::NotFound { .. }) => return Err(Error::SessionNotFound { id: parts.id.clone() }),
                Err(e) => return Err(e.into()),
            };
            if from > 0 {
                let cut = memchr::memchr(b'\n', &bytes).map_or(bytes.len(), |at| at + 1);
                bytes.drain(..cut);
            }
            remaining = remaining.saturating_sub(part.size);
            first_part = index as u32 + 1;
            raw.push(bytes);
            if from > 0 || remaining == 0 {
                break;
            }
        }
        raw.reverse();
        Ok((first_part, raw))
    }

    /// What to send a model to continue session `id`, in `provider`'s shape: the
    /// context (see [`Sessions::context`]) with roles alternating, every call answered
    /// (an interrupted turn's calls get a synthetic error result) and `injections`
    /// placed as asked, never written. `model`, the model the request goes to: the
    /// signed thinking of replies another model wrote is sent as the session's client
    /// sends it (Claude Code's sessions: left out; pi's: as text), since the API refuses
    /// its signature; without it, signed thinking is sent as recorded.
    pub async fn provider_context(
        &self,
        id: &str,
        provider: Provider,
        model: Option<&str>,
        injections: &[Injection],
    ) -> Result<ProviderContext, Error> {
        if let Some(n) = injections.iter().position(|i| i.text.trim().is_empty()) {
            return Err(Error::InvalidArgument(format!(
                "injection {n} has no text: the provider refuses a message of nothing but white space; leave it out"
            )));
        }
        if model.is_some_and(|m| m.trim().is_empty()) {
            return Err(Error::InvalidArgument(
                "the model is empty: name the model the request goes to (e.g. claude-opus-4-5), or leave it out".into(),
            ));
        }
        let (context, format) = self.context_from_end(id, TAIL_BYTES).await?;
        Ok(render::render(context, format, provider, model, injections))
    }

    /// The load report of session `id` plus dangling parents and orphaned tool calls.
    pub async fn check(&self, id: &str) -> Result<CheckReport, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| loaded.check()))
    }

    /// Every session in the store, most recently updated first. Served from the
    /// index's cached rows: only a session whose parts changed size since it was cached
    /// (or that is new) is read, its envelopes parsed and message bodies only for the
    /// title; the index is then brought up to date. Keeping the cache is best effort:
    /// a store the index cannot be written to (read-only, locked) is listed all the same.
    pub async fn list(&self) -> Result<Listing, Error> {
        Ok(self.list_rows().await?.0)
    }

    /// The listing, and the rows behind it by (project, id).
    pub(crate) async fn list_rows(&self) -> Result<(Listing, BTreeMap<(String, String), SessionRow>), Error> {
        let listing = self.base.storage.list(keys::PROJECTS).await?;
        let grouped = group_sessions(&listing);
        let cached_ok = self.catalog.refresh_index().await.is_ok();
        let mut rows: BTreeMap<(String, String), SessionRow> = BTreeMap::new();
        let mut stale = Vec::new();
        {
            let cache = self.catalog.state.borrow();
            let cached = cache.as_ref().filter(|_| cached_ok).map(|state| &state.sessions);
            for (name, parts) in grouped {
                let sizes: Vec<u64> = parts.iter().map(|(_, info)| info.size).collect();
                match cached.and_then(|rows| rows.get(&name)) {
                    Some(row) if row.fresh_for(&sizes) => {
                        rows.insert(name, row.clone());
                    }
                    _ => stale.push(Parts { project: name.0, id: name.1, parts: parts.into_iter().map(|(_, info)| info).collect() }),
                }
            }
        }
        let mut found = Listing::default();
        let (read, skipped) = self.read_rows(stale).await?;
        found.skipped = skipped;
        let mut changes: Vec<Change> = read.values().map(|row| Change::Session { row: row.clone() }).collect();
        rows.extend(read);
        if cached_ok {
            let gone: Vec<Change> = self.catalog.state.borrow().as_ref().map_or_else(Vec::new, |state| {
                state
                    .sessions
                    .keys()
                    .filter(|name| !rows.contains_key(*name))
                    .map(|(project, id)| Change::DropSession { project: project.clone(), id: id.clone() })
                    .collect()
            });
            changes.extend(gone);
            if !changes.is_empty() {
                // The listing is right whether or not the cache could be kept.
                let _ = self.catalog.update_index(|_| Ok((changes, ()))).await;
            }
        }
        found.sessions = rows.values().map(|row| row.info.clone()).collect();
        found.sessions.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.key.cmp(&b.key)));
        Ok((found, rows))
    }

    /// The rows of `sessions`, each read from its transcript, and the files that could
    /// not be read as one.
    pub(crate) async fn read_rows(&self, sessions: Vec<Parts>) -> Result<(BTreeMap<(String, String), SessionRow>, Vec<SkippedKey>), Error> {
        let mut rows = BTreeMap::new();
        let mut skipped = Vec::new();
        for parts in sessions {
            let raw = match self.read_parts(&parts).await {
                Ok(raw) => raw,
                // Removed between the listing and the read: it is simply gone.
                Err(Error::SessionNotFound { .. }) => continue,
                // A file whose name this storage will not take as a key is not a
                // session it can serve; it must not hide every other session.
                Err(Error::Storage(StorageError::InvalidKey { key, reason })) => {
                    skipped.push(SkippedKey { key, reason });
                    continue;
                }
                Err(e) => return Err(e),
            };
            let row = with_loaded(&raw, |loaded| session_row(&parts, &raw, loaded));
            rows.insert((parts.project, parts.id), row);
        }
        Ok((rows, skipped))
    }

    /// The index's row of session `id`, brought up to date; `None` when the session
    /// has no transcript yet.
    pub(crate) async fn session_row(&self, id: &str) -> Result<Option<SessionRow>, Error> {
        let Some(parts) = self.locate(id).await? else { return Ok(None) };
        let sizes: Vec<u64> = parts.parts.iter().map(|p| p.size).collect();
        let name = (parts.project.clone(), parts.id.clone());
        let cached =
            self.catalog.read_index(|state| state.sessions.get(&name).filter(|row| row.fresh_for(&sizes)).cloned()).await.ok().flatten();
        if let Some(row) = cached {
            return Ok(Some(row));
        }
        let raw = self.read_parts(&parts).await?;
        let row = with_loaded(&raw, |loaded| session_row(&parts, &raw, loaded));
        let change = Change::Session { row: row.clone() };
        let _ = self.catalog.update_index(|_| Ok((alloc::vec![change], ()))).await;
        Ok(Some(row))
    }
}

pub(crate) fn transcript_of(project: &str, id: &str, parts: u32, loaded: &Loaded) -> Transcript {
    let (entries, chain) = loaded.entries_and_chain();
    Transcript { id: id.to_owned(), project: project.to_owned(), parts, entries, chain, report: loaded.report.clone() }
}

/// What the index caches of a session: its listing and its counters.
pub(crate) fn session_row(parts: &Parts, raw: &[Vec<u8>], loaded: &Loaded) -> SessionRow {
    SessionRow {
        info: session_info(parts, raw, loaded),
        sizes: parts.parts.iter().map(|p| p.size).collect(),
        counters: counters(loaded),
        rules: crate::catalog::log::ROW_RULES,
    }
}

/// The counters a session's lines say: usage, compactions, the last memory flush and
/// extraction (their marker lines are the truth; the index only caches this).
fn counters(loaded: &Loaded) -> Counters {
    let (usage, _) = loaded.usage_total();
    let stamp = |l: &scan::Line| l.env.timestamp.get().and_then(crate::time::parse_millis);
    let live = || loaded.lines.iter().filter(|l| loaded.is_live(l));
    let compactions_before =
        |at: usize| loaded.lines[..at].iter().filter(|l| loaded.is_live(l) && dialect::is_compaction(&l.env)).count() as u32;
    let flush = loaded.lines.iter().rposition(|l| loaded.is_live(l) && l.env.marker() == Some(Marker::MemoryFlush));
    Counters {
        input_tokens: usage.input,
        output_tokens: usage.output,
        cache_read_tokens: usage.cache_read,
        cache_creation_tokens: usage.cache_creation,
        context_tokens: crate::compaction::context_token_count(loaded),
        compaction_count: live().filter(|l| dialect::is_compaction(&l.env)).count() as u32,
        memory_flush_ms: flush.and_then(|at| stamp(&loaded.lines[at])),
        memory_flush_compaction_count: flush.map(compactions_before),
        extraction_ms: live().rev().filter(|l| l.env.marker() == Some(Marker::MemoryExtraction)).find_map(stamp),
    }
}

fn session_info(parts: &Parts, raw: &[Vec<u8>], loaded: &Loaded) -> SessionInfo {
    let live = || loaded.lines.iter().filter(|l| loaded.is_live(l));
    // Claude Code's `custom-title`, pi's `session_info` name.
    let custom_title = live()
        .rev()
        .find_map(|l| match l.env.kind() {
            "custom-title" => l.env.rare().custom_title.get(),
            "session_info" => l.env.rare().name.get(),
            _ => None,
        })
        .filter(|title| !title.trim().is_empty());
    // Claude Code 1.0 titled sessions with `summary` lines; one copied in from another
    // session names a leaf this file does not have and is ignored.
    let summary = || {
        let mut summaries = live().rev().filter(|l| l.env.kind() == "summary").peekable();
        summaries.peek()?;
        let index = loaded.index();
        summaries
            .filter(|l| l.env.rare().leaf_uuid.get().is_some_and(|leaf| index.contains_key(leaf)))
            .find_map(|l| l.env.rare().summary.get())
    };
    // The first prompt a person typed: slash commands, IDE context and interruption
    // notices arrive as user messages too (`<command-name>…`, `<ide_selection>…`,
    // `[Request interrupted…`), and are used only when there is nothing else. They may
    // also come as text blocks before the prompt in its own message (Claude Code's IDE
    // context, the environment a Codex rollout opens with): each block is looked at.
    let prompt = || {
        let prompts = live()
            .filter(|l| !l.env.is_generated() && message_role(l) == Some("user"))
            .filter_map(|l| l.env.message.and_then(scan::parse_message_content))
            .map(|(_, content)| match content {
                Some(scan::Content::Text(text)) => alloc::vec![text],
                Some(scan::Content::Blocks(blocks)) => {
                    blocks.into_iter().filter(|b| b.kind.get() == Some("text")).filter_map(|b| b.text.0).collect()
                }
                None => Vec::new(),
            });
        let mut first_tagged = None;
        for texts in prompts {
            if let Some(typed) = texts.iter().find(|text| !text.trim().is_empty() && !text.trim_start().starts_with(['<', '['])) {
                return Some(typed.to_string());
            }
            let whole = texts.join("\n");
            if !whole.trim().is_empty() {
                first_tagged.get_or_insert(whole);
            }
        }
        first_tagged
    };
    let title = custom_title.or_else(summary).map(shorten).or_else(|| prompt().map(|text| shorten(&text)));
    SessionInfo {
        id: parts.id.clone(),
        project: parts.project.clone(),
        key: parts.base_key(),
        parts: parts.parts.len() as u32,
        bytes: raw.iter().map(|b| b.len() as u64).sum(),
        entry_count: loaded.report.entry_count,
        message_count: live().filter(|l| message_role(l).is_some()).count() as u32,
        title,
        created: loaded.lines.iter().find_map(|l| l.env.timestamp.get()).map(ToString::to_string),
        updated: loaded.lines.iter().rev().find_map(|l| l.env.timestamp.get()).map(ToString::to_string),
    }
}

/// Who speaks in a message line: Claude Code says it in the line's type, pi and crab
/// only in the message.
fn message_role<'l>(line: &'l scan::Line) -> Option<&'l str> {
    match line.env.kind() {
        kind @ ("user" | "assistant") => Some(kind),
        "message" | "" if line.env.message.is_some() => {
            let message = line.env.message.and_then(scan::parse_message)?;
            match message.role.get()? {
                "user" => Some("user"),
                "assistant" => Some("assistant"),
                "toolResult" => Some("toolResult"),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The load report of a transcript given as bytes: the envelope-only read that
/// `list` does, without threading or parsing message bodies.
pub fn load_report(bytes: &[u8]) -> LoadReport {
    with_loaded(&[bytes], |loaded| loaded.report.clone())
}

/// The load report and structural findings for a transcript given as bytes (a file
/// outside any store).
pub fn check_bytes(bytes: &[u8]) -> CheckReport {
    with_loaded(&[bytes], |loaded| loaded.check())
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::ToString;

    use crate::compaction::{Keep, Mode, Settings};
    use crate::storage::InMemoryStorage;
    use crate::{CompactionIds, Limits, NewEntry, Provider, Role, Storage, Store, Turn, block_on};

    const NOW: i64 = 1_771_267_670_590;

    fn say(store: &Store<&InMemoryStorage>, id: &str, i: u32, text: &str) {
        let role = if i.is_multiple_of(2) { Role::User } else { Role::Assistant };
        let entry = NewEntry { uuid: format!("{id}-m{i}"), now_ms: NOW + i as i64, role, text: text.to_string(), cwd: "/p".into() };
        block_on(store.sessions().append(id, entry)).unwrap();
    }

    fn compact(store: &Store<&InMemoryStorage>, id: &str, n: u32) {
        let settings = Settings { keep: Keep::RecentMessages(3), ..Settings::default() };
        let plan = block_on(store.compaction().plan_compaction(id, &settings, Mode::Manual)).unwrap();
        let ids = CompactionIds { boundary: format!("{id}-b{n}"), summary: format!("{id}-s{n}") };
        block_on(store.compaction().apply_compaction(id, &plan, &format!("summary {n}"), &ids, NOW + 1000 * n as i64)).unwrap();
    }

    /// The same conversation in pi's dialect and in Claude Code's lists the same number
    /// of messages: a tool's result is one in both (pi's were left out).
    #[test]
    fn a_tool_result_counts_as_a_message_in_either_dialect() {
        let storage = InMemoryStorage::new();
        let pi = [
            r#"{"type":"session","version":3,"id":"pi","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"list files"}}"#,
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"ls","arguments":{}}]}}"#,
            r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"ls","content":[{"type":"text","text":"a.txt"}],"isError":false}}"#,
            r#"{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"one file"}]}}"#,
        ];
        let claude = [
            r#"{"type":"user","uuid":"b1","parentUuid":null,"sessionId":"cc","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"list files"}}"#,
            r#"{"type":"assistant","uuid":"b2","parentUuid":"b1","sessionId":"cc","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"ls","input":{}}]}}"#,
            r#"{"type":"user","uuid":"b3","parentUuid":"b2","sessionId":"cc","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"a.txt"}]}}"#,
            r#"{"type":"assistant","uuid":"b4","parentUuid":"b3","sessionId":"cc","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"one file"}]}}"#,
        ];
        block_on(storage.append("projects/p/pi.jsonl", (pi.join("\n") + "\n").as_bytes())).unwrap();
        block_on(storage.append("projects/p/cc.jsonl", (claude.join("\n") + "\n").as_bytes())).unwrap();
        let counts = || {
            let listed = block_on(Store::new(&storage).sessions().list()).unwrap();
            listed.sessions.iter().map(|s| (s.id.clone(), s.message_count)).collect::<alloc::vec::Vec<_>>()
        };
        let expected = [("cc".to_string(), 4), ("pi".to_string(), 4)];
        assert_eq!(counts(), expected);
        // An index written before the rule cached the pi session's row with 3 (and no
        // `rules`): its file is unchanged, but the row is counted again.
        let logs: alloc::vec::Vec<alloc::string::String> =
            block_on(storage.list("index/")).unwrap().into_iter().map(|k| k.key).filter(|k| k.contains("log")).collect();
        assert!(!logs.is_empty());
        for log in logs {
            let text = alloc::string::String::from_utf8(block_on(storage.read(&log, 0, None)).unwrap()).unwrap();
            assert!(text.contains("\"rules\":1"), "{text}");
            let old = text.replace(",\"rules\":1", "").replace("\"messages\":4", "\"messages\":3");
            block_on(storage.replace(&log, old.as_bytes(), None)).unwrap();
        }
        assert_eq!(counts(), expected);
    }

    /// A lone surrogate escape in a later part, read in pieces run in any order, is
    /// repaired as a whole read repairs it; a paired one is left as it is.
    #[test]
    fn a_lone_surrogate_in_a_later_part_read_in_pieces_is_repaired() {
        let line = |n: u32, text: &str| {
            let parent = if n == 0 { "null".to_string() } else { format!("\"u{}\"", n - 1) };
            format!(
                "{{\"type\":\"user\",\"uuid\":\"u{n}\",\"parentUuid\":{parent},\"sessionId\":\"s\",\"timestamp\":\"2026-01-01T00:00:0{n}.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n"
            )
        };
        let first: alloc::string::String = (0..4).map(|n| line(n, "plain words")).collect();
        let second = [line(4, "a pair \\ud83d\\ude00 stays"), line(5, "plain"), line(6, "a cut \\ud83d emoji"), line(7, "plain")].concat();
        let raw = alloc::vec![first.into_bytes(), second.into_bytes()];
        let whole = super::with_loaded(&raw, |loaded| loaded.context(crate::transcript::context::Sources::default()));
        assert_eq!(whole.messages.len(), 8);
        assert_eq!(whole.messages[4].text, "a pair \u{1f600} stays");
        assert_eq!(whole.messages[6].text, "a cut \u{fffd} emoji");
        let backwards = crate::scan::Workers { pieces: 3, piece_bytes: 1, run: &crate::scan::Backwards };
        let split = super::with_shared(1, raw, &backwards, |loaded, sources| {
            let plan = loaded.context_lines();
            loaded.into_context(plan, sources)
        });
        assert_eq!(split, whole);
    }

    /// A context shares the session's text, a message's blocks and text as the file
    /// holds them; but not when it keeps only a small part of what was read alive.
    #[test]
    fn a_context_shares_the_text_read_unless_it_keeps_little_of_it() {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        let tools = serde_json::json!([
            { "role": "user", "content": "list the files" },
            { "role": "assistant", "id": "msg_1", "content": [{ "type": "tool_use", "id": "t1", "name": "ls", "input": {} }] },
            { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "a.txt ".repeat(400) }] },
            { "role": "assistant", "id": "msg_2", "content": [{ "type": "text", "text": "There is a.txt." }] },
        ]);
        let turn = |id: &str| Turn {
            uuid: format!("{id}-t"),
            now_ms: NOW,
            cwd: "/p".into(),
            provider: Provider::Anthropic,
            messages: tools.to_string(),
            parent: None,
            agent: None,
        };
        block_on(store.sessions().append_turn("s", turn("s"))).unwrap();
        let context = block_on(store.sessions().context("s")).unwrap();
        let result = &context.messages[2];
        assert!(result.content.contains("a.txt a.txt") && result.content.shared_bytes().is_some(), "{result:?}");
        let reply = &context.messages[3];
        assert_eq!((reply.text.as_str(), reply.text.shared_bytes().is_some()), ("There is a.txt.", true));

        block_on(store.sessions().append_turn("c", turn("c"))).unwrap();
        for i in 0..40 {
            say(&store, "c", i, &"words ".repeat(100));
        }
        compact(&store, "c", 1);
        let context = block_on(store.sessions().context("c")).unwrap();
        assert!(context.compacted);
        assert!(context.messages.iter().all(|m| m.text.shared_bytes().is_none() && m.content.shared_bytes().is_none()), "{context:?}");
    }

    #[test]
    fn a_compaction_is_seen_in_the_bytes_in_every_dialect_and_only_then() {
        for text in [r#"{"subtype":"compact_boundary"}"#, r#"{"type":"compaction"}"#, r#"{"compact":"summary"}"#] {
            assert!(super::mentions_compaction(text.as_bytes()), "{text}");
        }
        for text in [r#"{"text":"compact it"}"#, r#"{"text":"compacted"}"#, r#"compaction""#, "compact"] {
            assert!(!super::mentions_compaction(text.as_bytes()), "{text}");
        }
    }

    /// Resume from the end gives what a read of the whole session gives, wherever the
    /// first read cuts: compactions (Claude Code's with a preserved segment, pi's with a
    /// first kept entry), tool turns, tombstones, parts, a rewind to before a compaction.
    #[test]
    fn resume_from_the_end_equals_a_full_read_at_every_cut() {
        let storage = InMemoryStorage::new();
        let store = Store::with_limits(&storage, Limits { part_bytes: 4000, total_bytes: 1 << 30 });
        for i in 0..20 {
            say(&store, "c", i, &"words ".repeat(10 + i as usize));
        }
        compact(&store, "c", 1);
        let tools = serde_json::json!([
            { "role": "user", "content": "use a tool" },
            { "role": "assistant", "id": "msg_t", "content": [{ "type": "text", "text": "ok" }, { "type": "tool_use", "id": "t1", "name": "ls", "input": {} }] },
            { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "a\nb" }] },
        ]);
        let turn = Turn {
            uuid: "c-t".into(),
            now_ms: NOW + 5000,
            cwd: "/p".into(),
            provider: Provider::Anthropic,
            messages: tools.to_string(),
            parent: None,
            agent: None,
        };
        block_on(store.sessions().append_turn("c", turn)).unwrap();
        for i in 20..30 {
            say(&store, "c", i, &"more ".repeat(i as usize));
        }
        block_on(store.sessions().tombstone("c", "c-m25", NOW + 6000)).unwrap();
        compact(&store, "c", 2);
        say(&store, "c", 30, "after the second compaction");

        // A rewind to before the compactions: its chain reaches none, so all is read.
        for i in 0..12 {
            say(&store, "r", i, &"x".repeat(50));
        }
        compact(&store, "r", 1);
        let back = Turn {
            uuid: "r-back".into(),
            now_ms: NOW + 9000,
            cwd: "/p".into(),
            provider: Provider::Anthropic,
            messages: "{\"role\":\"user\",\"content\":\"again\"}".into(),
            parent: Some("r-m3".into()),
            agent: None,
        };
        block_on(store.sessions().append_turn("r", back)).unwrap();

        let header = "{\"type\":\"session\",\"version\":3,\"id\":\"pi\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n";
        block_on(storage.append("projects/-p/pi.jsonl", header.as_bytes())).unwrap();
        for i in 0..16 {
            say(&store, "pi", i, &"pi words ".repeat(5 + i as usize));
        }
        compact(&store, "pi", 1);
        say(&store, "pi", 16, "after");

        // Never compacted: no tail is enough, the whole session is read.
        for i in 0..30 {
            say(&store, "n", i, &"plain ".repeat(20));
        }

        for id in ["c", "r", "pi", "n"] {
            let parts = block_on(store.sessions().require(id)).unwrap();
            let raw = block_on(store.sessions().read_parts(&parts)).unwrap();
            let full = super::with_loaded(&raw, |loaded| loaded.context(crate::transcript::context::Sources::default()));
            assert_eq!(full.compacted, id != "r" && id != "n", "{id}");
            // Read and built in pieces, run in any order, it is the same.
            let backwards = crate::scan::Workers { pieces: 3, piece_bytes: 1, run: &crate::scan::Backwards };
            let split = super::with_shared(1, raw.clone(), &backwards, |loaded, sources| {
                let plan = loaded.context_lines();
                loaded.into_context(plan, sources)
            });
            assert_eq!(split, full, "{id} in pieces");
            let total: u64 = parts.parts.iter().map(|p| p.size).sum();
            // A third of the session from its end is enough, except for the rewind and the
            // session never compacted.
            let (first_part, tail) = block_on(store.sessions().read_tail(&parts, total / 3)).unwrap();
            let enough = super::with_loaded_from(first_part, &tail, |loaded| loaded.end_plan().is_some());
            assert_eq!(enough, id != "r" && id != "n", "{id}: {} parts, the tail from part {first_part}", parts.parts.len());
            for first in (1..=total + 1).step_by(13) {
                let (context, _) = block_on(store.sessions().context_from_end(id, first)).unwrap();
                assert_eq!(context, full, "{id}: first read of {first} of {total} bytes");
            }
        }
    }
}
