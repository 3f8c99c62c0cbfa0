//! How the index is kept: a snapshot per generation and an append-only log of changes
//! since it, recovered after a crash at any point.
//!
//! ```text
//! index/snapshot-<g>.json   every key and session row as of generation g
//! index/log-<g>.jsonl       one change per line since that snapshot
//! ```
//!
//! An update takes the index lock, appends its lines to the current log and returns:
//! it never rewrites what is there. A line that was not acknowledged (a crash tore it)
//! has no newline and is not applied; the next writer starts its line on a fresh one,
//! so debris never fuses with a change. When the log holds more lines than the index
//! has entries (at least [`MIN_LOG_LINES`]), the writer saves a snapshot of generation
//! g+1 — the state after the log — and from then on appends to `log-<g+1>`. Files of
//! generations before g are removed then; generation g stays one more round, so a
//! snapshot that cannot be read falls back to the one before it and replays both logs.
//! Whatever a crash leaves (a snapshot without its log, a log whose snapshot was
//! removed, a torn line) reads back as the state before or after the interrupted step.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{Catalog, Counters, KeyEntry, SessionInfo};
use crate::error::Error;
use crate::storage::{Storage, StorageError};

const DIR: &str = "index/";
/// The lock every writer of the index takes (a name, not a file the index reads).
const LOCK: &str = "index/lock";
/// A log shorter than this is never replaced by a snapshot.
pub(crate) const MIN_LOG_LINES: u32 = 256;
const SNAPSHOT_VERSION: u32 = 1;

fn snapshot_key(generation: u64) -> String {
    format!("{DIR}snapshot-{generation}.json")
}

fn log_key(generation: u64) -> String {
    format!("{DIR}log-{generation}.jsonl")
}

/// The generation a file of the index belongs to, and whether it is a snapshot.
fn parse_file(key: &str) -> Option<(u64, bool)> {
    let name = key.strip_prefix(DIR)?;
    let (digits, snapshot) = match name.strip_prefix("snapshot-") {
        Some(rest) => (rest.strip_suffix(".json")?, true),
        None => (name.strip_prefix("log-")?.strip_suffix(".jsonl")?, false),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((digits.parse().ok()?, snapshot))
}

/// A session as the index caches it: valid while its parts have these sizes and it was
/// counted by the rules of [`ROW_RULES`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SessionRow {
    #[serde(with = "stored_info")]
    pub info: SessionInfo,
    pub sizes: Vec<u64>,
    #[serde(default)]
    pub counters: Counters,
    /// The [`ROW_RULES`] it was counted by (0: before there were any).
    #[serde(default)]
    pub rules: u32,
}

/// A session's summary as the index stores it: under the names its counts had before
/// the API named them as counts (`entries`, `messages`), so releases that share a
/// store read each other's index.
mod stored_info {
    use alloc::string::String;

    use crate::catalog::SessionInfo;

    #[derive(serde::Serialize)]
    struct Written<'a> {
        id: &'a str,
        project: &'a str,
        key: &'a str,
        parts: u32,
        bytes: u64,
        entries: u32,
        messages: u32,
        title: &'a Option<String>,
        created: &'a Option<String>,
        updated: &'a Option<String>,
    }

    #[derive(serde::Deserialize)]
    struct Read {
        id: String,
        project: String,
        key: String,
        parts: u32,
        bytes: u64,
        entries: u32,
        messages: u32,
        title: Option<String>,
        created: Option<String>,
        updated: Option<String>,
    }

    pub fn serialize<S: serde::Serializer>(info: &SessionInfo, serializer: S) -> Result<S::Ok, S::Error> {
        let SessionInfo { id, project, key, parts, bytes, entry_count, message_count, title, created, updated } = info;
        let written = Written {
            id,
            project,
            key,
            parts: *parts,
            bytes: *bytes,
            entries: *entry_count,
            messages: *message_count,
            title,
            created,
            updated,
        };
        serde::Serialize::serialize(&written, serializer)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<SessionInfo, D::Error> {
        let Read { id, project, key, parts, bytes, entries, messages, title, created, updated } =
            serde::Deserialize::deserialize(deserializer)?;
        Ok(SessionInfo { id, project, key, parts, bytes, entry_count: entries, message_count: messages, title, created, updated })
    }
}

/// Which rules a row's counts follow; raised when one changes, so that rows of an
/// unchanged session are counted again rather than listed by the old rule (1: a pi tool
/// result counts as a message).
pub(crate) const ROW_RULES: u32 = 1;

impl SessionRow {
    /// Whether the row still describes a session whose parts have `sizes`.
    pub fn fresh_for(&self, sizes: &[u64]) -> bool {
        self.sizes == sizes && self.rules == ROW_RULES
    }
}

/// One line of the log.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub(crate) enum Change {
    Key { entry: KeyEntry },
    DropKey { key: String },
    Session { row: SessionRow },
    DropSession { project: String, id: String },
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Snapshot {
    version: u32,
    generation: u64,
    keys: Vec<KeyEntry>,
    sessions: Vec<SessionRow>,
}

/// What reading the index found.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct IndexHealth {
    pub generation: u64,
    pub key_count: u32,
    pub session_count: u32,
    /// Changes in the current log (what the next snapshot folds in).
    pub log_lines: u32,
    /// Log lines that are not a change this version understands, skipped.
    pub damaged_lines: u32,
    /// Snapshots that could not be read, so an older one and its log were used.
    pub damaged_snapshots: u32,
    /// Bytes at the log's end that a crash left without a newline (never acknowledged).
    pub torn_bytes: u64,
}

/// The index in memory, and how far into its log it has read.
#[derive(Clone, Debug, Default)]
pub(crate) struct IndexState {
    pub generation: u64,
    /// Bytes of the current log applied (up to its last newline).
    read_to: u64,
    /// The current log's size when last seen.
    log_size: u64,
    pub keys: BTreeMap<String, KeyEntry>,
    pub sessions: BTreeMap<(String, String), SessionRow>,
    pub report: IndexHealth,
}

impl IndexState {
    fn apply(&mut self, change: Change) {
        match change {
            Change::Key { entry } => {
                self.keys.insert(entry.key.clone(), entry);
            }
            Change::DropKey { key } => {
                self.keys.remove(&key);
            }
            Change::Session { row } => {
                self.sessions.insert((row.info.project.clone(), row.info.id.clone()), row);
            }
            Change::DropSession { project, id } => {
                self.sessions.remove(&(project, id));
            }
        }
    }

    /// Applies the complete lines of `bytes` (log bytes from `read_to` on).
    fn replay(&mut self, bytes: &[u8]) {
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
        for line in bytes[..complete].split(|&b| b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)) {
            match serde_json::from_slice::<Change>(line) {
                Ok(change) => {
                    self.apply(change);
                    self.report.log_lines = self.report.log_lines.saturating_add(1);
                }
                Err(_) => self.report.damaged_lines = self.report.damaged_lines.saturating_add(1),
            }
        }
        self.read_to = self.read_to.saturating_add(complete as u64);
        self.log_size = self.read_to.saturating_add((bytes.len() - complete) as u64);
        self.report.torn_bytes = (bytes.len() - complete) as u64;
    }

    fn counted(mut self) -> Self {
        self.report.generation = self.generation;
        self.report.key_count = self.keys.len() as u32;
        self.report.session_count = self.sessions.len() as u32;
        self
    }

    fn snapshot_due(&self) -> bool {
        self.report.log_lines > MIN_LOG_LINES.max((self.keys.len() + self.sessions.len()) as u32)
    }
}

impl<S: Storage> Catalog<'_, S> {
    /// Brings the cached index up to date with storage: nothing is read when its log
    /// has not changed, only the new lines when it grew.
    pub(crate) async fn refresh_index(&self) -> Result<(), Error> {
        let listing = self.base.storage.list(DIR).await?;
        let files: Vec<(u64, bool, u64)> =
            listing.iter().filter_map(|info| parse_file(&info.key).map(|(g, snapshot)| (g, snapshot, info.size))).collect();
        let generation = files.iter().map(|f| f.0).max().unwrap_or(0);
        let log_size = files.iter().find(|f| f.0 == generation && !f.1).map_or(0, |f| f.2);
        let cached = self.state.borrow().as_ref().map(|s| (s.generation, s.read_to, s.log_size));
        match cached {
            Some((g, _, size)) if g == generation && size == log_size => return Ok(()),
            Some((g, read_to, size)) if g == generation && size < log_size => {
                let tail = self.read_index_log(generation, read_to).await?;
                if let Some(state) = self.state.borrow_mut().as_mut() {
                    state.replay(&tail);
                    state.report.key_count = state.keys.len() as u32;
                    state.report.session_count = state.sessions.len() as u32;
                }
                return Ok(());
            }
            _ => {}
        }
        let state = self.load_index(&files, generation).await?;
        *self.state.borrow_mut() = Some(state);
        Ok(())
    }

    async fn read_index_log(&self, generation: u64, from: u64) -> Result<Vec<u8>, Error> {
        match self.base.storage.read(&log_key(generation), from, None).await {
            Ok(bytes) => Ok(bytes),
            Err(StorageError::NotFound { .. }) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }

    /// Reads the index from its newest readable snapshot and the logs after it.
    async fn load_index(&self, files: &[(u64, bool, u64)], generation: u64) -> Result<IndexState, Error> {
        let mut snapshots: Vec<u64> = files.iter().filter(|f| f.1).map(|f| f.0).collect();
        snapshots.sort_unstable_by(|a, b| b.cmp(a));
        let mut state = IndexState::default();
        let mut base = files.iter().filter(|f| !f.1).map(|f| f.0).min().unwrap_or(generation);
        for g in snapshots {
            let bytes = match self.base.storage.read(&snapshot_key(g), 0, None).await {
                Ok(bytes) => bytes,
                Err(StorageError::NotFound { .. }) => continue,
                Err(e) => return Err(e.into()),
            };
            match serde_json::from_slice::<Snapshot>(&bytes) {
                Ok(snapshot) if snapshot.version == SNAPSHOT_VERSION => {
                    state.keys = snapshot.keys.into_iter().map(|e| (e.key.clone(), e)).collect();
                    state.sessions = snapshot.sessions.into_iter().map(|r| ((r.info.project.clone(), r.info.id.clone()), r)).collect();
                    base = g;
                    break;
                }
                _ => state.report.damaged_snapshots += 1,
            }
        }
        for g in base..=generation {
            if !files.iter().any(|f| f.0 == g && !f.1) {
                continue;
            }
            // Only the current log's lines are still to be folded into a snapshot.
            state.report.log_lines = 0;
            state.read_to = 0;
            let bytes = self.read_index_log(g, 0).await?;
            state.replay(&bytes);
        }
        state.generation = generation;
        if !files.iter().any(|f| f.0 == generation && !f.1) {
            state.read_to = 0;
            state.log_size = 0;
            state.report.torn_bytes = 0;
            state.report.log_lines = 0;
        }
        Ok(state.counted())
    }

    /// Runs `decide` on the current index under the index lock and appends the changes
    /// it returns: all of them, or (on an error) none that a reader would apply.
    pub(crate) async fn update_index<R>(&self, decide: impl FnOnce(&IndexState) -> Result<(Vec<Change>, R), Error>) -> Result<R, Error> {
        self.base
            .locked(LOCK, async {
                self.refresh_index().await?;
                let (changes, value) = {
                    let cache = self.state.borrow();
                    let state = cache.as_ref().ok_or_else(|| Error::InvalidArgument("the index could not be read".into()))?;
                    decide(state)?
                };
                if changes.is_empty() {
                    return Ok(value);
                }
                let changes = self.redact_changes(changes);
                let (generation, read_to, log_size) =
                    self.state.borrow().as_ref().map(|s| (s.generation, s.read_to, s.log_size)).unwrap_or_default();
                let mut bytes = Vec::new();
                if log_size > read_to {
                    // A torn line from a crash: start on a line of our own.
                    bytes.push(b'\n');
                }
                for change in &changes {
                    bytes.extend(serde_json::to_vec(change).map_err(|e| Error::InvalidArgument(e.to_string()))?);
                    bytes.push(b'\n');
                }
                let appended = self.base.storage.append(&log_key(generation), &bytes).await;
                let snapshot = self.fold_appended(appended, log_size.saturating_add(bytes.len() as u64), changes)?;
                if let Some(state) = snapshot {
                    // The change is stored; a snapshot that fails is tried again next time.
                    let _ = self.snapshot_index(state).await;
                }
                Ok(value)
            })
            .await
    }

    /// The changes with the secrets the store's redaction covers taken out of the
    /// caller's words on a key (its title, origin, toggles, metadata and reason), before
    /// they are written or applied, so the index read back equals the one kept. The key,
    /// the session ids, the provider and the model are names the caller looks up or
    /// routes by, and are kept as given.
    fn redact_changes(&self, mut changes: Vec<Change>) -> Vec<Change> {
        let redaction = self.base.redaction();
        let mut found = crate::redact::Found::default();
        let mut clean = |text: &mut String| {
            if let Some(redacted) = redaction.text(text, &mut found) {
                *text = redacted;
            }
        };
        for change in &mut changes {
            if let Change::Key { entry } = change {
                let origin = &mut entry.origin;
                for text in [&mut entry.title, &mut origin.subject, &mut origin.room, &mut origin.display_name].into_iter().flatten() {
                    clean(text);
                }
                for field in entry.toggles.iter_mut().chain(entry.metadata.iter_mut()) {
                    clean(&mut field.value);
                }
                clean(&mut entry.reason);
            }
        }
        changes
    }

    /// Replaces every cached session row with `rows` in a new generation (a snapshot
    /// of the keys as they are and these rows), under the index lock; returns the
    /// rows the index had before.
    pub(crate) async fn replace_session_rows(
        &self,
        rows: BTreeMap<(String, String), SessionRow>,
    ) -> Result<(IndexHealth, BTreeMap<(String, String), SessionRow>), Error> {
        self.base
            .locked(LOCK, async {
                self.refresh_index().await?;
                let mut state = self.state.borrow().clone().ok_or_else(|| Error::InvalidArgument("the index could not be read".into()))?;
                let before = state.report.clone();
                let old = core::mem::replace(&mut state.sessions, rows);
                self.snapshot_index(state).await?;
                Ok((before, old))
            })
            .await
    }

    /// Applies appended `changes` to the cache (or drops the cache when the log is not
    /// as expected); returns the state to snapshot when one is due.
    fn fold_appended(&self, appended: Result<u64, StorageError>, expected: u64, changes: Vec<Change>) -> Result<Option<IndexState>, Error> {
        let mut cache = self.state.borrow_mut();
        let new_size = match appended {
            Ok(size) => size,
            Err(e) => {
                // Whether any of it landed is unknown: read the log again next time.
                *cache = None;
                return Err(e.into());
            }
        };
        let Some(state) = cache.as_mut().filter(|_| new_size == expected) else {
            *cache = None;
            return Ok(None);
        };
        for change in changes {
            state.apply(change);
            state.report.log_lines = state.report.log_lines.saturating_add(1);
        }
        state.read_to = new_size;
        state.log_size = new_size;
        state.report.torn_bytes = 0;
        state.report.key_count = state.keys.len() as u32;
        state.report.session_count = state.sessions.len() as u32;
        Ok(state.snapshot_due().then(|| state.clone()))
    }

    /// Saves generation g+1 and removes what generation g no longer needs.
    async fn snapshot_index(&self, state: IndexState) -> Result<(), Error> {
        let next = state.generation.saturating_add(1);
        let snapshot = Snapshot {
            version: SNAPSHOT_VERSION,
            generation: next,
            keys: state.keys.values().cloned().collect(),
            sessions: state.sessions.values().cloned().collect(),
        };
        let bytes = serde_json::to_vec(&snapshot).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        self.base.storage.replace(&snapshot_key(next), &bytes, None).await?;
        {
            let mut cache = self.state.borrow_mut();
            let mut moved = state;
            moved.generation = next;
            moved.read_to = 0;
            moved.log_size = 0;
            moved.report.log_lines = 0;
            moved.report.torn_bytes = 0;
            *cache = Some(moved.counted());
        }
        for info in self.base.storage.list(DIR).await? {
            if let Some((g, _)) = parse_file(&info.key)
                && g.saturating_add(1) < next
            {
                match self.base.storage.remove(&info.key).await {
                    Ok(()) | Err(StorageError::NotFound { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(())
    }

    /// Reads `f` of the current index (after bringing it up to date).
    pub(crate) async fn read_index<R>(&self, f: impl FnOnce(&IndexState) -> R) -> Result<R, Error> {
        self.refresh_index().await?;
        let cache = self.state.borrow();
        let state = cache.as_ref().ok_or_else(|| Error::InvalidArgument("the index could not be read".into()))?;
        Ok(f(state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_files_are_named_by_generation() {
        assert_eq!(parse_file(&snapshot_key(3)), Some((3, true)));
        assert_eq!(parse_file(&log_key(0)), Some((0, false)));
        for other in ["index/lock", "index/log-.jsonl", "index/log-1x.jsonl", "index/snapshot-2.json.tmp", "projects/x"] {
            assert_eq!(parse_file(other), None, "{other}");
        }
    }

    /// A row as an earlier release wrote it reads, and a row is written the same way:
    /// releases that share a store read each other's index.
    #[test]
    fn a_session_row_keeps_the_names_earlier_releases_read() {
        let written = r#"{"info":{"id":"s","project":"-w","key":"projects/-w/s.jsonl","parts":1,"bytes":10,"entries":3,"messages":2,"title":null,"created":null,"updated":null},"sizes":[10],"rules":1}"#;
        let row: SessionRow = serde_json::from_str(written).unwrap();
        assert_eq!((row.info.entry_count, row.info.message_count), (3, 2));
        let again = serde_json::to_string(&row).unwrap();
        assert!(again.contains(r#""entries":3,"messages":2"#), "{again}");
        assert_eq!(serde_json::from_str::<SessionRow>(&again).unwrap(), row);
    }
}
