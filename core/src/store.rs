use alloc::borrow::{Cow, ToOwned};
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::RefCell;

use serde::Serialize;

use crate::compact::{self, Mode, Plan, Settings};
use crate::error::Error;
use crate::gates::{self, Decision, DreamSettings, ExtractionSettings, FlushSettings, ResetPolicy};
use crate::layout::{self, PartName};
use crate::session::{CheckReport, Context, Loaded};
use crate::storage::{KeyInfo, Storage, StorageError};
use crate::time;
use crate::transcript::{self, Entry, LoadReport, PartScan, SkippedLine};

/// Who speaks in an appended message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
}

/// A message to append. The host supplies the id and the time: the core has neither
/// a random source nor a clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEntry {
    /// A fresh, unique id (Claude Code uses UUID v4).
    pub uuid: String,
    /// When the message was written, in Unix milliseconds.
    pub now_ms: i64,
    pub role: Role,
    pub text: String,
    /// The agent's working directory. A new session is filed under the project
    /// derived from it, as Claude Code does.
    pub cwd: String,
}

/// Size limits of a session's transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// A part is never grown past this; the next entry starts a new part instead
    /// (an entry larger than the limit gets a part of its own).
    pub part_bytes: u64,
    /// All parts together never pass this: the append is refused with
    /// [`Error::SessionFull`].
    pub total_bytes: u64,
}

impl Default for Limits {
    /// 50 MiB per part, 200 MiB in all (Cersei's defaults).
    fn default() -> Self {
        Self { part_bytes: 50 << 20, total_bytes: 200 << 20 }
    }
}

/// A summary of one session, as `sessions list` shows it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SessionInfo {
    pub id: String,
    pub project: String,
    /// The storage key of the first part.
    pub key: String,
    pub parts: u32,
    /// All parts together.
    pub bytes: u64,
    /// Readable entries of every type.
    pub entries: u32,
    /// Live `user` and `assistant` entries.
    pub messages: u32,
    /// The last `custom-title`, else the last `summary` whose leaf is in the file, else
    /// the first user prompt; shortened.
    pub title: Option<String>,
    /// Timestamp of the first entry that has one.
    pub created: Option<String>,
    /// Timestamp of the last entry that has one.
    pub updated: Option<String>,
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

/// What `repair` changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RepairReport {
    /// Keys of the originals saved before rewriting, one per changed part.
    pub backups: Vec<String>,
    /// Unreadable lines left out of the repaired transcript (kept in the backup).
    pub dropped: Vec<SkippedLine>,
    /// Glued objects now written one per line.
    pub split_glued: u32,
    /// Lines whose invalid UTF-8 was replaced with U+FFFD.
    pub fixed_utf8: u32,
    /// A torn last line was left out (kept in the backup).
    pub dropped_torn_tail: bool,
}

/// The transcript dialect a session is written in, which compaction writes back.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Claude,
    Pi,
    Crab,
}

/// Ids for the entries a compaction writes, from the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactionIds {
    /// The `compact_boundary` entry (pi: the `compaction` entry).
    pub boundary: String,
    /// The summary entry (unused for pi, whose compaction entry holds the summary).
    pub summary: String,
}

/// What applying a compaction wrote.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Applied {
    /// `claude` (a `compact_boundary` and an `isCompactSummary` entry), `pi` (a
    /// `compaction` entry) or `crab` (a `{"compact": …}` marker, then the kept
    /// messages again, since crab loads from its last marker on).
    pub format: String,
    /// `summarize` or `prune`, as the plan said.
    pub action: String,
    /// The boundary (`compact_boundary`, `microcompact_boundary`, or pi `compaction`).
    pub boundary_uuid: String,
    pub summary_uuid: Option<String>,
    pub tokens_before: u64,
    /// Estimated tokens of the context after: the summary and what was kept.
    pub tokens_after: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BoundaryLine<'a> {
    parent_uuid: Option<&'a str>,
    logical_parent_uuid: Option<&'a str>,
    is_sidechain: bool,
    user_type: &'static str,
    cwd: &'a str,
    session_id: &'a str,
    version: &'static str,
    entrypoint: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    subtype: &'static str,
    content: &'static str,
    level: &'static str,
    compact_metadata: serde_json::Value,
    uuid: &'a str,
    timestamp: &'a str,
}

/// What the store knows about a session it has written to, so an append costs one
/// listing and one write instead of a read of the whole transcript.
#[derive(Clone, Debug)]
struct OpenSession {
    /// The project folder that holds the session.
    project: String,
    /// Sizes of the parts when last seen, part 1 first.
    sizes: Vec<u64>,
    /// The uuid the next entry chains to.
    leaf: Option<String>,
    /// Lines in the last part (the number of the last line written).
    last_part_lines: u32,
    /// The last part's last line is complete but lacks its newline.
    unterminated: bool,
    /// The last part ends in a torn fragment at this offset, still to be moved aside.
    torn_at: Option<u64>,
    /// A write failed with an I/O error: its outcome is unknown until the session is
    /// read again.
    poisoned: bool,
}

/// Sessions over a [`Storage`]. All methods take `&self`: a store is shared by a
/// host's handles, and the storage's locks serialise what must be serialised.
#[derive(Debug)]
pub struct Store<S> {
    storage: S,
    limits: Limits,
    open: RefCell<BTreeMap<String, OpenSession>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewLine<'a> {
    parent_uuid: Option<&'a str>,
    is_sidechain: bool,
    user_type: &'static str,
    cwd: &'a str,
    session_id: &'a str,
    version: &'static str,
    entrypoint: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    message: NewMessage<'a>,
    /// Set on the summary a compaction writes (Claude Code marks it both ways).
    #[serde(skip_serializing_if = "Option::is_none")]
    is_compact_summary: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_visible_in_transcript_only: Option<bool>,
    uuid: &'a str,
    timestamp: &'a str,
}

#[derive(Serialize)]
struct NewMessage<'a> {
    role: &'static str,
    content: NewContent<'a>,
}

/// Claude Code writes a user prompt as a plain string and assistant replies as blocks.
#[derive(Serialize)]
#[serde(untagged)]
enum NewContent<'a> {
    Text(&'a str),
    Blocks([TextBlock<'a>; 1]),
}

#[derive(Serialize)]
struct TextBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct TombstoneLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    deleted_uuid: &'a str,
    timestamp: &'a str,
    #[serde(rename = "sessionId")]
    session_id: &'a str,
}

/// The parts of one session found in a listing, in part order.
struct Parts {
    project: String,
    id: String,
    parts: Vec<KeyInfo>,
}

impl Parts {
    fn sizes(&self) -> Vec<u64> {
        self.parts.iter().map(|p| p.size).collect()
    }
    fn base_key(&self) -> String {
        layout::session_key(&self.project, &self.id)
    }
}

/// Groups a listing's main-transcript keys into sessions.
fn group_sessions(listing: &[KeyInfo]) -> BTreeMap<(String, String), Vec<(u32, KeyInfo)>> {
    let mut sessions: BTreeMap<(String, String), Vec<(u32, KeyInfo)>> = BTreeMap::new();
    for info in listing {
        if let Some(PartName { project, id, part }) = layout::parse_session_key(&info.key) {
            sessions.entry((project.to_owned(), id.to_owned())).or_default().push((part, info.clone()));
        }
    }
    for parts in sessions.values_mut() {
        parts.sort_by_key(|(part, _)| *part);
    }
    sessions
}

/// Reads parts already in memory as one session and hands the result to `f`.
fn with_loaded<B: AsRef<[u8]>, R>(raw: &[B], f: impl FnOnce(&Loaded) -> R) -> R {
    let texts: Vec<Cow<str>> = raw.iter().map(|bytes| transcript::decode(bytes.as_ref())).collect();
    let scans: Vec<PartScan> =
        raw.iter().zip(&texts).enumerate().map(|(i, (bytes, text))| transcript::scan_part(i as u32 + 1, bytes.as_ref(), text)).collect();
    f(&Loaded::assemble(scans))
}

/// The append state of a session read in full.
fn state_of(project: &str, raw: &[Vec<u8>]) -> OpenSession {
    let texts: Vec<Cow<str>> = raw.iter().map(|bytes| transcript::decode(bytes)).collect();
    let scans: Vec<PartScan> =
        raw.iter().zip(&texts).enumerate().map(|(i, (bytes, text))| transcript::scan_part(i as u32 + 1, bytes, text)).collect();
    let (last_part_lines, unterminated, torn_at) =
        scans.last().map_or((0, false, None), |s| (s.line_count, s.unterminated && s.torn_at.is_none(), s.torn_at));
    let loaded = Loaded::assemble(scans);
    let leaf = loaded.leaf().and_then(|i| loaded.lines[i].env.uuid()).map(ToString::to_string);
    OpenSession {
        project: project.to_owned(),
        sizes: raw.iter().map(|b| b.len() as u64).collect(),
        leaf,
        last_part_lines,
        unterminated,
        torn_at,
        poisoned: false,
    }
}

/// Whether `now` differs from `before` only by a longer last part.
fn only_last_part_grew(before: &[u64], now: &[u64]) -> bool {
    before.len() == now.len()
        && !now.is_empty()
        && before[..before.len() - 1] == now[..now.len() - 1]
        && now[now.len() - 1] > before[before.len() - 1]
}

impl<S: Storage> Store<S> {
    pub fn new(storage: S) -> Self {
        Self::with_limits(storage, Limits::default())
    }

    pub fn with_limits(storage: S, limits: Limits) -> Self {
        Self { storage, limits, open: RefCell::default() }
    }

    pub fn storage(&self) -> &S {
        &self.storage
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Forgets what the store knows about session `id`, so the next operation reads it
    /// from storage again. This is how a session refused after a failed write (see
    /// [`Error::SessionPoisoned`]) is opened again.
    pub fn reopen(&self, id: &str) {
        self.open.borrow_mut().remove(id);
    }

    /// The parts of session `id`, in whichever project holds it.
    async fn locate(&self, id: &str) -> Result<Option<Parts>, Error> {
        layout::validate_session_id(id)?;
        let known = self.open.borrow().get(id).map(|s| s.project.clone());
        let prefix = match &known {
            Some(project) => format!("{}{project}/{id}", layout::PROJECTS),
            None => layout::PROJECTS.to_owned(),
        };
        let listing = self.storage.list(&prefix).await?;
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

    async fn require(&self, id: &str) -> Result<Parts, Error> {
        self.locate(id).await?.ok_or_else(|| Error::SessionNotFound { id: id.to_owned() })
    }

    async fn read_parts(&self, parts: &Parts) -> Result<Vec<Vec<u8>>, Error> {
        let mut raw = Vec::with_capacity(parts.parts.len());
        for part in &parts.parts {
            match self.storage.read(&part.key, 0, None).await {
                Ok(bytes) => raw.push(bytes),
                Err(StorageError::NotFound { .. }) => return Err(Error::SessionNotFound { id: parts.id.clone() }),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(raw)
    }

    /// Appends a message to session `id`, creating the session under the project of
    /// `entry.cwd` if it does not exist. The entry chains to the conversation's newest
    /// leaf. The session's lock is held from reading its state to the write, so
    /// concurrent writers chain correctly and never interleave.
    pub async fn append(&self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
        if entry.uuid.is_empty() {
            return Err(Error::InvalidArgument("the entry's uuid is empty".into()));
        }
        if entry.text.is_empty() {
            return Err(Error::InvalidArgument("the message text is empty".into()));
        }
        let timestamp = time::format_millis(entry.now_ms);
        let (part, line, json) = self
            .write(id, Some(&entry.cwd), Some(&entry.uuid), |parent| {
                let content = match entry.role {
                    Role::User => NewContent::Text(&entry.text),
                    Role::Assistant => NewContent::Blocks([TextBlock { kind: "text", text: &entry.text }]),
                };
                serde_json::to_string(&NewLine {
                    parent_uuid: parent,
                    is_sidechain: false,
                    user_type: "external",
                    cwd: &entry.cwd,
                    session_id: id,
                    version: crate::VERSION,
                    entrypoint: "mneme",
                    kind: entry.role.as_str(),
                    message: NewMessage { role: entry.role.as_str(), content },
                    is_compact_summary: None,
                    is_visible_in_transcript_only: None,
                    uuid: &entry.uuid,
                    timestamp: &timestamp,
                })
            })
            .await?;
        let text = transcript::decode(json.as_bytes());
        let scan = transcript::scan_part(part, json.as_bytes(), &text);
        let mut written = scan
            .lines
            .first()
            .map(transcript::Line::to_entry)
            .ok_or_else(|| Error::InvalidArgument("internal: the new line does not parse".into()))?;
        written.line = line;
        Ok(written)
    }

    /// Soft-deletes entry `uuid` of session `id` by appending a tombstone; the entry
    /// stays in the file and disappears from every load. Fails with
    /// [`Error::EntryNotFound`] if no live entry has that uuid.
    pub async fn tombstone(&self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        let live = with_loaded(&raw, |loaded| loaded.lines.iter().any(|l| l.env.uuid() == Some(uuid) && loaded.is_live(l)));
        if !live {
            return Err(Error::EntryNotFound { id: id.to_owned(), uuid: uuid.to_owned() });
        }
        let timestamp = time::format_millis(now_ms);
        self.write(id, None, None, |_| {
            serde_json::to_string(&TombstoneLine { kind: "tombstone", deleted_uuid: uuid, timestamp: &timestamp, session_id: id })
        })
        .await?;
        Ok(())
    }

    /// Writes one line to session `id` under its lock: refreshes what the store knows,
    /// moves a torn tail aside, rolls over to a new part or refuses at the cap, then
    /// appends. `line` builds the JSON from the uuid the entry chains to. Returns the
    /// part and line number written, and the JSON.
    async fn write<E: core::fmt::Display>(
        &self,
        id: &str,
        cwd: Option<&str>,
        new_leaf: Option<&str>,
        line: impl FnOnce(Option<&str>) -> Result<String, E>,
    ) -> Result<(u32, u32, String), Error> {
        // A session this store has written to is not looked for again: its project is
        // known, and `refresh` lists its parts under the lock anyway.
        let known = self.open.borrow().get(id).map(|s| s.project.clone());
        let located = match known {
            Some(project) => Some(project),
            None => self.locate(id).await?.map(|parts| parts.project),
        };
        let (project, base) = match located {
            Some(project) => {
                let base = layout::session_key(&project, id);
                (project, base)
            }
            None => {
                let cwd = cwd
                    .filter(|c| !c.is_empty())
                    .ok_or_else(|| Error::InvalidArgument("a new session needs the working directory (cwd) to name its project".into()))?;
                let project = layout::project_dir_name(cwd);
                layout::validate_project(&project)?;
                let base = layout::session_key(&project, id);
                (project, base)
            }
        };
        if self.open.borrow().get(id).is_some_and(|s| s.poisoned) {
            return Err(Error::SessionPoisoned { id: id.to_owned() });
        }
        self.locked(&base, self.write_locked(id, &project, line, new_leaf)).await
    }

    /// Runs `work` holding the lock `name`, and releases it whatever `work` returned.
    async fn locked<T>(&self, name: &str, work: impl core::future::Future<Output = Result<T, Error>>) -> Result<T, Error> {
        self.storage.lock(name).await?;
        let result = work.await;
        let unlocked = self.storage.unlock(name).await;
        let value = result?;
        unlocked?;
        Ok(value)
    }

    async fn write_locked<E: core::fmt::Display>(
        &self,
        id: &str,
        project: &str,
        line: impl FnOnce(Option<&str>) -> Result<String, E>,
        new_leaf: Option<&str>,
    ) -> Result<(u32, u32, String), Error> {
        let mut state = self.refresh(id, project).await?;
        let json = line(state.leaf.as_deref()).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        let separator = if state.unterminated { "\n" } else { "" };
        let record = format!("{separator}{json}\n");
        let total: u64 = state.sizes.iter().sum();
        if total + record.len() as u64 > self.limits.total_bytes {
            return Err(Error::SessionFull { id: id.to_owned(), bytes: total, limit: self.limits.total_bytes });
        }
        let last = state.sizes.len().max(1);
        let last_size = state.sizes.get(last - 1).copied().unwrap_or(0);
        let (part, record) = if last_size > 0 && last_size + record.len() as u64 > self.limits.part_bytes {
            (last as u32 + 1, format!("{json}\n"))
        } else {
            (last as u32, record)
        };
        let key = layout::part_key(project, id, part);
        let line_no = if part as usize > state.sizes.len() { 1 } else { state.last_part_lines + 1 };
        // The state is unknown until the write is known to have landed.
        state.poisoned = true;
        self.open.borrow_mut().insert(id.to_owned(), state.clone());
        let new_size = match self.storage.append(&key, record.as_bytes()).await {
            Ok(size) => size,
            Err(error) => {
                // A typed refusal (quota, read-only, lock) wrote nothing, by the storage
                // contract: the state is still known. Only an I/O error leaves it unknown.
                if !matches!(error, StorageError::Io { .. }) {
                    state.poisoned = false;
                    self.open.borrow_mut().insert(id.to_owned(), state);
                }
                return Err(error.into());
            }
        };
        state.poisoned = false;
        state.sizes.resize(part as usize, 0);
        state.sizes[part as usize - 1] = new_size;
        state.last_part_lines = line_no + json.matches('\n').count() as u32;
        state.unterminated = false;
        if let Some(leaf) = new_leaf {
            state.leaf = Some(leaf.to_owned());
        }
        self.open.borrow_mut().insert(id.to_owned(), state);
        Ok((part, line_no, json))
    }

    /// Brings the store's knowledge of session `id` up to date with storage (another
    /// process may have written) and moves a torn last line aside, keeping it as
    /// `<part>.torn-<offset>`. Called with the session's lock held.
    async fn refresh(&self, id: &str, project: &str) -> Result<OpenSession, Error> {
        let listing = self.storage.list(&format!("{}{project}/{id}", layout::PROJECTS)).await?;
        let parts = group_sessions(&listing).remove(&(project.to_owned(), id.to_owned())).unwrap_or_default();
        let parts = Parts { project: project.to_owned(), id: id.to_owned(), parts: parts.into_iter().map(|(_, info)| info).collect() };
        let sizes = parts.sizes();
        let cached = self.open.borrow().get(id).cloned().filter(|s| !s.poisoned);
        let mut state = match cached {
            Some(state) if state.sizes == sizes => return Ok(state),
            Some(state) if only_last_part_grew(&state.sizes, &sizes) && !state.unterminated => match self.catch_up(&parts, state).await? {
                Some(state) => state,
                None => state_of(project, &self.read_parts(&parts).await?),
            },
            _ => state_of(project, &self.read_parts(&parts).await?),
        };
        if let (Some(offset), Some(part)) = (state.torn_at.take(), parts.parts.last()) {
            let fragment = self.storage.read(&part.key, offset, None).await?;
            // Saved first: a crash in between leaves the fragment in both places, and the
            // next append saves it again under the same name.
            self.storage.replace(&format!("{}.torn-{offset}", part.key), &fragment).await?;
            self.storage.truncate(&part.key, offset).await?;
            if let Some(size) = state.sizes.last_mut() {
                *size = offset;
            }
            state.last_part_lines = state.last_part_lines.saturating_sub(1);
        }
        Ok(state)
    }

    /// Reads only what another writer appended to the last part since `state` and
    /// updates it; `None` when the new lines need a full read (they hold tombstones).
    async fn catch_up(&self, parts: &Parts, mut state: OpenSession) -> Result<Option<OpenSession>, Error> {
        let (Some(last), Some(&old_size)) = (parts.parts.last(), state.sizes.last()) else { return Ok(None) };
        let delta = self.storage.read(&last.key, old_size, None).await?;
        let text = transcript::decode(&delta);
        let scan = transcript::scan_part(parts.parts.len() as u32, &delta, &text);
        if scan.lines.iter().any(|l| l.env.kind() == "tombstone") {
            return Ok(None);
        }
        if let Some(leaf) = scan.lines.iter().rev().filter(|l| !l.env.is_sidechain.0).find_map(|l| l.env.uuid()) {
            state.leaf = Some(leaf.to_owned());
        }
        state.sizes = parts.sizes();
        state.last_part_lines += scan.line_count;
        state.unterminated = scan.unterminated && scan.torn_at.is_none();
        state.torn_at = scan.torn_at.map(|at| old_size + at);
        Ok(Some(state))
    }

    /// Every live entry of session `id`, its main chain, and the load report.
    pub async fn load(&self, id: &str) -> Result<Transcript, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| transcript_of(&parts.project, id, raw.len() as u32, loaded)))
    }

    /// The context a model resumes session `id` with: the main chain's messages from
    /// its last compaction on.
    pub async fn context(&self, id: &str) -> Result<Context, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| loaded.context()))
    }

    /// The load report of session `id` plus dangling parents and orphaned tool calls.
    pub async fn check(&self, id: &str) -> Result<CheckReport, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| loaded.check()))
    }

    /// The sub-agent transcripts of session `id`: `<id>/subagents/agent-*.jsonl`
    /// (Claude Code ≥ 2.1) and flat `agent-*.jsonl` files of its project whose entries
    /// name it as their session (2.0).
    pub async fn subagents(&self, id: &str) -> Result<Vec<Subagent>, Error> {
        let parts = self.require(id).await?;
        let project_prefix = format!("{}{}/", layout::PROJECTS, parts.project);
        let nested_prefix = layout::session_dir(&parts.project, id);
        let mut found = Vec::new();
        for info in self.storage.list(&project_prefix).await? {
            let Some(file) = info.key.rsplit('/').next() else { continue };
            let nested = info.key.starts_with(&nested_prefix) && info.key[nested_prefix.len()..].starts_with("subagents/");
            let flat = !info.key[project_prefix.len()..].contains('/');
            if !(file.starts_with("agent-") && file.ends_with(layout::TRANSCRIPT_SUFFIX) && (nested || flat)) {
                continue;
            }
            let bytes = self.storage.read(&info.key, 0, None).await?;
            let transcript = with_loaded(core::slice::from_ref(&bytes), |loaded| {
                let belongs = nested || loaded.lines.iter().any(|l| l.env.session_id() == Some(id));
                belongs.then(|| transcript_of(&parts.project, file.trim_end_matches(layout::TRANSCRIPT_SUFFIX), 1, loaded))
            });
            if let Some(transcript) = transcript {
                found.push(Subagent { key: info.key.clone(), transcript });
            }
        }
        Ok(found)
    }

    /// Removes session `id`: every part, its sub-agent files and its sidecar files
    /// (moved-aside torn lines, repair backups). Returns the keys removed.
    pub async fn remove(&self, id: &str) -> Result<Vec<String>, Error> {
        let subagents = self.subagents(id).await?;
        let parts = self.require(id).await?;
        let base = parts.base_key();
        let removed = self.locked(&base, self.remove_locked(&parts, subagents)).await;
        self.open.borrow_mut().remove(id);
        removed
    }

    async fn remove_locked(&self, parts: &Parts, subagents: Vec<Subagent>) -> Result<Vec<String>, Error> {
        let mut keys: Vec<String> = subagents.into_iter().map(|s| s.key).collect();
        keys.extend(self.storage.list(&layout::session_dir(&parts.project, &parts.id)).await?.into_iter().map(|i| i.key));
        let sidecars = self.storage.list(&format!("{}{}/{}", layout::PROJECTS, parts.project, parts.id)).await?;
        for info in sidecars {
            let belongs = layout::parse_session_key(&info.key).is_some_and(|p| p.id == parts.id)
                || parts.parts.iter().any(|p| {
                    info.key.strip_prefix(p.key.as_str()).is_some_and(|rest| rest.starts_with(".torn-") || rest.starts_with(".bak-"))
                });
            if belongs {
                keys.push(info.key);
            }
        }
        keys.sort();
        keys.dedup();
        // The first part goes last: until it is gone the session still lists, so an
        // interrupted removal can simply be run again.
        let base = parts.base_key();
        keys.retain(|k| *k != base);
        keys.push(base);
        for key in &keys {
            match self.storage.remove(key).await {
                Ok(()) | Err(StorageError::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(keys)
    }

    /// Rewrites the parts of session `id` that have unreadable lines, glued objects,
    /// invalid UTF-8 or a torn tail: readable entries are kept byte for byte, one per
    /// line; the original of each changed part is saved first as
    /// `<part>.bak-<now_ms>`. Nothing is written when nothing needs repair.
    pub async fn repair(&self, id: &str, now_ms: i64) -> Result<RepairReport, Error> {
        let parts = self.require(id).await?;
        let base = parts.base_key();
        let repaired = self.locked(&base, self.repair_locked(&parts, now_ms)).await;
        self.open.borrow_mut().remove(id);
        repaired
    }

    async fn repair_locked(&self, parts: &Parts, now_ms: i64) -> Result<RepairReport, Error> {
        let raw = self.read_parts(parts).await?;
        let mut report = RepairReport::default();
        for (index, (bytes, info)) in raw.iter().zip(&parts.parts).enumerate() {
            let text = transcript::decode(bytes);
            let scan = transcript::scan_part(index as u32 + 1, bytes, &text);
            let needs_newline = scan.unterminated && scan.torn_at.is_none();
            if scan.skipped.is_empty() && scan.recovered_glued == 0 && scan.invalid_utf8 == 0 && scan.torn_at.is_none() && !needs_newline {
                continue;
            }
            let mut repaired = String::with_capacity(bytes.len());
            for line in &scan.lines {
                repaired.push_str(line.raw);
                repaired.push('\n');
            }
            let backup = format!("{}.bak-{now_ms}", info.key);
            self.storage.replace(&backup, bytes).await?;
            self.storage.replace(&info.key, repaired.as_bytes()).await?;
            report.backups.push(backup);
            report.dropped.extend(scan.skipped);
            report.split_glued += scan.recovered_glued;
            report.fixed_utf8 += scan.invalid_utf8;
            report.dropped_torn_tail |= scan.torn_at.is_some();
        }
        Ok(report)
    }

    /// Plans a compaction of session `id` (see [`Plan`]); writes nothing.
    pub async fn plan_compaction(&self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| compact::plan(loaded, settings, mode)))
    }

    /// A summary of what `plan` summarises, written without a model.
    pub async fn summarize_offline(&self, id: &str, plan: &Plan) -> Result<String, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| compact::extractive_summary(loaded, plan)))
    }

    /// Applies `plan` with the `summary` the host's model wrote: appends, in one
    /// atomic write, a `compact_boundary` (whose `preservedSegment` names the kept
    /// entries) and the summary as an `isCompactSummary` user entry — or, for a pi
    /// session, a `compaction{summary, firstKeptEntryId}` entry. Nothing is deleted;
    /// loading and resuming start at the new boundary. An empty summary is refused.
    pub async fn apply_compaction(&self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, Error> {
        if !plan.has_work() {
            let reason = plan.blocked.clone().unwrap_or_else(|| plan.reason.clone());
            return Err(Error::NothingToCompact { id: id.to_owned(), reason });
        }
        if plan.needs_summary() && summary.trim().is_empty() {
            return Err(Error::EmptySummary { id: id.to_owned() });
        }
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        let (format, cwd, missing, kept_lines) = with_loaded(&raw, |loaded| {
            let pi = loaded.lines.first().is_some_and(|l| l.env.kind() == "session");
            let crab =
                loaded.lines.iter().any(|l| l.env.kind.get().is_none() && (l.env.role.get().is_some() || l.env.is_crab_compaction()));
            let format = if pi {
                Format::Pi
            } else if crab {
                Format::Crab
            } else {
                Format::Claude
            };
            let cwd = loaded.lines.iter().rev().find_map(|l| l.env.cwd.get()).unwrap_or_default().to_owned();
            let live: BTreeMap<alloc::borrow::Cow<str>, &transcript::Line> =
                loaded.lines.iter().filter(|l| loaded.is_live(l)).map(|l| (l.entry_id(), l)).collect();
            let missing = plan.keep.iter().chain(&plan.summarize).find(|id| !live.contains_key(id.as_str())).cloned();
            let kept_lines: Vec<String> = plan.keep.iter().filter_map(|id| live.get(id.as_str())).map(|l| l.raw.to_owned()).collect();
            (format, cwd, missing, kept_lines)
        });
        if let Some(uuid) = missing {
            return Err(Error::StalePlan { id: id.to_owned(), uuid });
        }
        if format == Format::Pi && plan.keep.iter().chain(&plan.summarize).any(|id| id.starts_with('@')) {
            return Err(Error::NothingToCompact {
                id: id.to_owned(),
                reason: "this pi session predates entry ids (format v1); open it in pi once so it migrates, then compact".into(),
            });
        }
        let timestamp = time::format_millis(now_ms);
        if plan.action == "prune" {
            let cleared: Vec<&str> = plan.prune.iter().map(|p| p.tool_use_id.as_str()).collect();
            let saved = plan.tokens_before.saturating_sub(plan.keep_tokens);
            self.write(id, None, Some(&ids.boundary), |leaf| {
                serde_json::to_string(&serde_json::json!({
                    "parentUuid": leaf,
                    "isSidechain": false,
                    "userType": "external",
                    "cwd": cwd,
                    "sessionId": id,
                    "version": crate::VERSION,
                    "entrypoint": "mneme",
                    "type": "system",
                    "subtype": "microcompact_boundary",
                    "content": "Tool results cleared",
                    "level": "info",
                    "microcompactMetadata": { "trigger": "auto", "preTokens": plan.tokens_before, "tokensSaved": saved, "compactedToolIds": cleared },
                    "uuid": ids.boundary,
                    "timestamp": timestamp,
                }))
            })
            .await?;
            return Ok(Applied {
                format: "claude".into(),
                action: "prune".into(),
                boundary_uuid: ids.boundary.clone(),
                summary_uuid: None,
                tokens_before: plan.tokens_before,
                tokens_after: plan.keep_tokens,
            });
        }
        let shown = match format {
            Format::Crab => summary.to_owned(),
            _ => compact::wrapped_summary(format == Format::Pi, summary),
        };
        let tokens_after = crate::tokens::text_tokens(&shown) + plan.keep_tokens;
        let first_kept = plan.keep.first().map(String::as_str);
        let trigger = if plan.trigger.as_deref() == Some("manual") { "manual" } else { "auto" };
        if format == Format::Crab {
            // crab loads from its last marker on, so the kept messages follow the marker.
            self.write(id, None, None, |_| {
                let marker = serde_json::to_string(&serde_json::json!({ "compact": summary }))?;
                Ok::<_, serde_json::Error>([marker].into_iter().chain(kept_lines.iter().cloned()).collect::<Vec<_>>().join("\n"))
            })
            .await?;
            return Ok(Applied {
                format: "crab".into(),
                action: "summarize".into(),
                boundary_uuid: String::new(),
                summary_uuid: None,
                tokens_before: plan.tokens_before,
                tokens_after,
            });
        }
        if format == Format::Pi {
            let entry_id: String = ids.boundary.chars().filter(|c| *c != '-').take(8).collect();
            self.write(id, None, None, |parent| {
                serde_json::to_string(&serde_json::json!({
                    "type": "compaction",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": timestamp,
                    "summary": summary,
                    "firstKeptEntryId": first_kept,
                    "tokensBefore": plan.tokens_before,
                }))
            })
            .await?;
            return Ok(Applied {
                format: "pi".into(),
                action: "summarize".into(),
                boundary_uuid: entry_id,
                summary_uuid: None,
                tokens_before: plan.tokens_before,
                tokens_after,
            });
        }
        let summary_text = compact::claude_summary_text(summary);
        self.write(id, None, Some(&ids.summary), |leaf| {
            let mut metadata = serde_json::json!({ "trigger": trigger, "preTokens": plan.tokens_before, "postTokens": tokens_after });
            if let (Some(head), Some(tail)) = (first_kept, leaf) {
                metadata["preservedSegment"] = serde_json::json!({ "headUuid": head, "anchorUuid": ids.summary, "tailUuid": tail });
            }
            let boundary = serde_json::to_string(&BoundaryLine {
                parent_uuid: None,
                logical_parent_uuid: leaf,
                is_sidechain: false,
                user_type: "external",
                cwd: &cwd,
                session_id: id,
                version: crate::VERSION,
                entrypoint: "mneme",
                kind: "system",
                subtype: "compact_boundary",
                content: "Conversation compacted",
                level: "info",
                compact_metadata: metadata,
                uuid: &ids.boundary,
                timestamp: &timestamp,
            })?;
            let summary = serde_json::to_string(&NewLine {
                parent_uuid: Some(&ids.boundary),
                is_sidechain: false,
                user_type: "external",
                cwd: &cwd,
                session_id: id,
                version: crate::VERSION,
                entrypoint: "mneme",
                kind: "user",
                message: NewMessage { role: "user", content: NewContent::Text(&summary_text) },
                is_compact_summary: Some(true),
                is_visible_in_transcript_only: Some(true),
                uuid: &ids.summary,
                timestamp: &timestamp,
            })?;
            // One append for both lines: a crash leaves neither or both.
            Ok::<_, serde_json::Error>(format!("{boundary}\n{summary}"))
        })
        .await?;
        Ok(Applied {
            format: "claude".into(),
            action: "summarize".into(),
            boundary_uuid: ids.boundary.clone(),
            summary_uuid: Some(ids.summary.clone()),
            tokens_before: plan.tokens_before,
            tokens_after,
        })
    }

    /// Records that a compaction of session `id` failed (the summariser errored or
    /// returned nothing), as a `compaction-failure` entry. After
    /// [`Settings::max_failures`] of them in a row, auto-compaction plans are blocked.
    pub async fn record_compaction_failure(&self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        let timestamp = time::format_millis(now_ms);
        self.write(id, None, None, |_| {
            serde_json::to_string(
                &serde_json::json!({ "type": compact::FAILURE_KIND, "reason": reason, "timestamp": timestamp, "sessionId": id }),
            )
        })
        .await?;
        Ok(())
    }

    /// Whether to run the pre-compaction memory flush for session `id` now: its
    /// context is within the soft threshold of the reserve, and no flush was
    /// recorded ([`Store::record_memory_flush`]) since the last compaction.
    pub async fn memory_flush_gate(&self, id: &str, settings: &FlushSettings) -> Result<Decision, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| {
            let flushed = since_last(loaded, |l| l.env.is_compaction()).any(|l| l.env.kind() == FLUSH_KIND);
            gates::memory_flush(compact::context_token_count(loaded), settings, flushed)
        }))
    }

    /// Records that the memory flush ran for session `id` (a `memory-flush` entry).
    pub async fn record_memory_flush(&self, id: &str, now_ms: i64) -> Result<(), Error> {
        self.record_marker(id, FLUSH_KIND, now_ms).await
    }

    /// Whether to extract memories from session `id` now: enough messages and tool
    /// calls since the last recorded extraction, and no tool call waiting.
    pub async fn extraction_gate(&self, id: &str, settings: &ExtractionSettings) -> Result<Decision, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| {
            let since: Vec<&transcript::Line> =
                since_last(loaded, |l| l.env.kind() == EXTRACTION_KIND).filter(|l| loaded.is_live(l)).collect();
            let messages = since.iter().filter(|l| matches!(l.env.kind(), "user" | "assistant")).count() as u32;
            let (calls, pending) = tool_calls(&since);
            gates::extraction(messages, calls, pending, settings)
        }))
    }

    /// Records that memories were extracted from session `id` (a `memory-extraction` entry).
    pub async fn record_extraction(&self, id: &str, now_ms: i64) -> Result<(), Error> {
        self.record_marker(id, EXTRACTION_KIND, now_ms).await
    }

    /// Whether the next message to session `id` should start a new session instead,
    /// judged from its first timestamp and its last message's. Nothing is deleted.
    pub async fn reset_gate(&self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| {
            let stamp = |l: &transcript::Line| l.env.timestamp.get().and_then(time::parse_millis);
            // Markers Mneme writes (flush, extraction, failures) are not activity.
            let last_message = loaded.lines.iter().rev().filter(|l| l.env.is_message()).find_map(stamp);
            match (loaded.lines.iter().find_map(stamp), last_message) {
                (Some(created), Some(last)) => gates::reset(now_ms, created, last, policy),
                _ => Decision { fire: false, reason: "the session has no timestamps to judge by".into() },
            }
        }))
    }

    async fn record_marker(&self, id: &str, kind: &str, now_ms: i64) -> Result<(), Error> {
        let timestamp = time::format_millis(now_ms);
        self.write(id, None, None, |_| {
            serde_json::to_string(&serde_json::json!({ "type": kind, "timestamp": timestamp, "sessionId": id }))
        })
        .await?;
        Ok(())
    }

    /// Whether a memory consolidation ("dream") is due now, without taking it.
    pub async fn dream_gate(&self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, Error> {
        let state = self.dream_state().await?;
        let new_sessions = self.sessions_since(state.last_ms).await?;
        Ok(gates::dream(now_ms, state.last_ms, new_sessions, state.lock.as_ref().map(|l| l.since_ms), settings))
    }

    /// Takes the consolidation for `holder` if its gates pass: checked and recorded
    /// under the store's lock on the consolidation state, so of several processes
    /// asking at once exactly one gets it. Release it with [`Store::dream_release`].
    pub async fn dream_acquire(&self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, Error> {
        self.locked(DREAM_STATE_KEY, async {
            let mut state = self.dream_state().await?;
            let new_sessions = self.sessions_since(state.last_ms).await?;
            let decision = gates::dream(now_ms, state.last_ms, new_sessions, state.lock.as_ref().map(|l| l.since_ms), settings);
            if decision.fire {
                state.lock = Some(DreamLock { holder: holder.to_owned(), since_ms: now_ms });
                self.save_dream_state(&state).await?;
            }
            Ok(decision)
        })
        .await
    }

    /// Releases the consolidation `holder` took; `completed` records it as the last
    /// consolidation (the time gate counts from now). Releasing a lock someone else
    /// holds is refused.
    pub async fn dream_release(&self, now_ms: i64, holder: &str, completed: bool) -> Result<(), Error> {
        self.locked(DREAM_STATE_KEY, async {
            let mut state = self.dream_state().await?;
            match &state.lock {
                Some(lock) if lock.holder == holder => {}
                Some(lock) => {
                    return Err(Error::InvalidArgument(format!("the consolidation is held by `{}`, not `{holder}`", lock.holder)));
                }
                None => return Err(Error::InvalidArgument("no consolidation is running".into())),
            }
            state.lock = None;
            if completed {
                state.last_ms = Some(now_ms);
            }
            self.save_dream_state(&state).await
        })
        .await
    }

    async fn dream_state(&self) -> Result<DreamState, Error> {
        match self.storage.read(DREAM_STATE_KEY, 0, None).await {
            // A damaged state file must not wedge consolidation forever: start over.
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).unwrap_or_default()),
            Err(StorageError::NotFound { .. }) => Ok(DreamState::default()),
            Err(e) => Err(e.into()),
        }
    }

    async fn save_dream_state(&self, state: &DreamState) -> Result<(), Error> {
        let bytes = serde_json::to_vec(state).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        Ok(self.storage.replace(DREAM_STATE_KEY, &bytes).await?)
    }

    /// Sessions updated after `since_ms` (all of them when never).
    async fn sessions_since(&self, since_ms: Option<i64>) -> Result<u32, Error> {
        let sessions = self.list().await?;
        let newer =
            |s: &&SessionInfo| since_ms.is_none_or(|since| s.updated.as_deref().and_then(time::parse_millis).is_some_and(|u| u > since));
        Ok(sessions.iter().filter(newer).count() as u32)
    }

    /// Every session in the store, most recently updated first. Reads each transcript's
    /// envelopes; message bodies are parsed only for the title.
    pub async fn list(&self) -> Result<Vec<SessionInfo>, Error> {
        let listing = self.storage.list(layout::PROJECTS).await?;
        let mut sessions = Vec::new();
        for ((project, id), parts) in group_sessions(&listing) {
            let parts = Parts { project, id, parts: parts.into_iter().map(|(_, info)| info).collect() };
            let raw = match self.read_parts(&parts).await {
                Ok(raw) => raw,
                // Removed between the listing and the read: it is simply gone.
                Err(Error::SessionNotFound { .. }) => continue,
                Err(e) => return Err(e),
            };
            let info = with_loaded(&raw, |loaded| session_info(&parts, &raw, loaded));
            sessions.push(info);
        }
        sessions.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.key.cmp(&b.key)));
        Ok(sessions)
    }
}

const FLUSH_KIND: &str = "memory-flush";
const EXTRACTION_KIND: &str = "memory-extraction";
/// Consolidation state and lock, beside the memory files.
const DREAM_STATE_KEY: &str = "memory/.consolidation.json";

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct DreamState {
    last_ms: Option<i64>,
    lock: Option<DreamLock>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct DreamLock {
    holder: String,
    since_ms: i64,
}

/// The lines after the last one matching `marker`, in file order.
fn since_last<'s, 'a>(
    loaded: &'s Loaded<'a>,
    marker: impl Fn(&transcript::Line) -> bool,
) -> impl Iterator<Item = &'s transcript::Line<'a>> {
    let start = loaded.lines.iter().rposition(marker).map_or(0, |i| i + 1);
    loaded.lines[start..].iter()
}

/// Tool calls among `lines`, and whether one of them still waits for its result.
fn tool_calls(lines: &[&transcript::Line]) -> (u32, bool) {
    let mut open: Vec<String> = Vec::new();
    let mut calls = 0;
    for line in lines {
        let message = line.env.message.and_then(transcript::parse_message);
        let Some(transcript::Content::Blocks(blocks)) = message.and_then(|m| transcript::parse_content(m.content)) else { continue };
        for block in &blocks {
            match (block.kind.get(), block.id.get(), block.tool_use_id.get()) {
                (Some("tool_use"), Some(id), _) => {
                    calls += 1;
                    open.push(id.to_owned());
                }
                (Some("tool_result"), _, Some(id)) => open.retain(|o| o != id),
                _ => {}
            }
        }
    }
    (calls, !open.is_empty())
}

fn transcript_of(project: &str, id: &str, parts: u32, loaded: &Loaded) -> Transcript {
    let (entries, chain) = loaded.entries_and_chain();
    Transcript { id: id.to_owned(), project: project.to_owned(), parts, entries, chain, report: loaded.report.clone() }
}

const TITLE_CHARS: usize = 80;

fn session_info(parts: &Parts, raw: &[Vec<u8>], loaded: &Loaded) -> SessionInfo {
    let live = || loaded.lines.iter().filter(|l| loaded.is_live(l));
    let custom_title = live().rev().filter(|l| l.env.kind() == "custom-title").find_map(|l| l.env.custom_title.get());
    // Claude Code 1.0 titled sessions with `summary` lines; one copied in from another
    // session names a leaf this file does not have and is ignored.
    let summary = || {
        let mut summaries = live().rev().filter(|l| l.env.kind() == "summary").peekable();
        summaries.peek()?;
        let index = loaded.index();
        summaries.filter(|l| l.env.leaf_uuid.get().is_some_and(|leaf| index.contains_key(leaf))).find_map(|l| l.env.summary.get())
    };
    // The first prompt a person typed: slash commands, IDE context and interruption
    // notices arrive as user messages too (`<command-name>…`, `<ide_selection>…`,
    // `[Request interrupted…`), and are used only when there is nothing else.
    let prompt = || {
        let prompts = live()
            .filter(|l| l.env.kind() == "user" && !l.env.is_meta.0 && !l.env.is_compact_summary.0 && !l.env.is_sidechain.0)
            .map(|l| transcript::message_text(l.env.message).1)
            .filter(|text| !text.trim().is_empty());
        let mut first_tagged = None;
        for text in prompts {
            if !text.trim_start().starts_with(['<', '[']) {
                return Some(text);
            }
            first_tagged.get_or_insert(text);
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
        entries: loaded.report.entries,
        messages: live().filter(|l| matches!(l.env.kind(), "user" | "assistant")).count() as u32,
        title,
        created: loaded.lines.iter().find_map(|l| l.env.timestamp.get()).map(ToString::to_string),
        updated: loaded.lines.iter().rev().find_map(|l| l.env.timestamp.get()).map(ToString::to_string),
    }
}

fn shorten(text: &str) -> String {
    let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    match first_line.char_indices().nth(TITLE_CHARS) {
        Some((cut, _)) => format!("{}…", &first_line[..cut]),
        None => first_line.to_string(),
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
