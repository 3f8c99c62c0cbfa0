//! Transcripts by key, line for line: what a session store of an agent SDK keeps (the
//! Claude Agent SDK's `SessionStore`). The SDK hands over each transcript line Claude
//! Code wrote, keyed by project folder, session id and, for a sub-agent, a subpath
//! (`subagents/agent-<id>`); the lines land where Claude Code keeps them, so the store
//! is a Claude Code home that `mneme` and Claude Code read, and they load back as they
//! were given (but for the secrets the store's redaction takes out).
//!
//! The SDK retries a batch whose append failed, and an append can fail after its
//! bytes landed (a lost connection, a timeout): a line whose `uuid` is among the
//! transcript's last [`RECENT`] lines already is not written again. The SDK's batches
//! hold at most 500 lines, so a retried one is always within reach.

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::Sessions;
use crate::error::Error;
use crate::keys::{self, PartName};
use crate::storage::{KeyInfo, Storage, StorageError};
use crate::support::time::parse_millis;
use crate::support::validate;

/// How many of a transcript's last line ids an append compares a batch with.
const RECENT: usize = 1024;

/// Where a session's lines were last written, per project: one `{"id","ms"}` line per
/// append, since storage keeps no modification times.
const WRITTEN: &str = ".mneme/written.jsonl";

/// A transcript named as the Claude Agent SDK names it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct TranscriptKey {
    /// The project folder (Claude Code's name for the working directory).
    pub project: String,
    /// The session's id.
    pub id: String,
    /// A sub-agent's transcript of the session (`subagents/agent-<id>`); none for the
    /// session's own.
    #[serde(default)]
    pub subpath: Option<String>,
}

/// A session of a project, and when its lines were last written.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WrittenSession {
    pub id: String,
    /// Unix milliseconds: the last append's time, or for a session no append here
    /// wrote (Claude Code's own), its last line's timestamp (0 without one).
    pub updated_ms: i64,
}

/// What this store knows of the end of a transcript it appended lines to.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    /// The transcript's length when this store last read or wrote it.
    size: u64,
    /// Whether it ends with a line break (a torn last line does not).
    ends_clean: bool,
    /// The ids of its last lines, oldest first.
    recent: VecDeque<String>,
}

impl Tail {
    /// Takes in lines read from the transcript's end.
    fn read(&mut self, bytes: &[u8]) {
        self.size += bytes.len() as u64;
        if let Some(&last) = bytes.last() {
            self.ends_clean = last == b'\n';
        }
        for line in bytes.split(|&b| b == b'\n') {
            if let Some(uuid) = core::str::from_utf8(line).ok().and_then(|line| entry_fields(line.trim())).and_then(|f| f.uuid) {
                self.remember(uuid);
            }
        }
    }

    fn remember(&mut self, uuid: String) {
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(uuid);
    }
}

/// What an append reads of a line.
struct EntryFields {
    uuid: Option<String>,
    timestamp: Option<String>,
}

/// The `uuid` and `timestamp` of `line` if it is one JSON object; `None` otherwise.
fn entry_fields(line: &str) -> Option<EntryFields> {
    let mut fields = EntryFields { uuid: None, timestamp: None };
    let as_string = |value: &str| serde_json::from_str::<String>(value).ok();
    let sure = validate::object_members(line, |key, value| {
        match key {
            "uuid" => fields.uuid = as_string(value),
            "timestamp" => fields.timestamp = as_string(value),
            _ => {}
        }
        true
    });
    if sure.is_some() {
        return Some(fields);
    }
    // Not surely valid to the fast check (a control character, deep nesting): serde decides.
    let serde_json::Value::Object(object) = serde_json::from_str::<serde_json::Value>(line).ok()? else { return None };
    let text = |name: &str| object.get(name).and_then(serde_json::Value::as_str).map(ToOwned::to_owned);
    Some(EntryFields { uuid: text("uuid"), timestamp: text("timestamp") })
}

impl TranscriptKey {
    /// The key of the transcript's first part (a sub-agent's has one part).
    fn first_part(&self) -> Result<String, Error> {
        keys::validate_project(&self.project)?;
        keys::validate_session_id(&self.id)?;
        let Some(subpath) = &self.subpath else { return Ok(keys::session_key(&self.project, &self.id)) };
        let refused = |reason: &str| Error::InvalidArgument(format!("invalid subpath `{subpath}`: {reason}"));
        if subpath.is_empty() {
            return Err(refused("it is empty; leave it out for the session's own transcript"));
        }
        if subpath.starts_with('/') || subpath.contains(['\\', '\0']) {
            return Err(refused("use a relative path with `/` between its parts, such as `subagents/agent-1`"));
        }
        if subpath.split('/').any(|part| part.is_empty() || part == "." || part == "..") {
            return Err(refused("its parts must not be empty, `.` or `..`"));
        }
        let key = format!("{}{subpath}{}", keys::session_dir(&self.project, &self.id), keys::TRANSCRIPT_SUFFIX);
        keys::check_key(&key).map_err(|e| refused(&e.to_string()))?;
        Ok(key)
    }
}

impl<S: Storage> Sessions<'_, S> {
    /// Appends `lines` (each one JSON object, as the session's client wrote it) to the
    /// transcript at `key`, in one write: all of them land or none. A line whose `uuid`
    /// is among the transcript's last lines already is left out, so a batch retried
    /// after a failure that had landed is not written twice. Returns how many were
    /// written; none given, nothing is written (not even an empty file).
    pub async fn append_lines(&self, key: &TranscriptKey, lines: &[String], now_ms: i64) -> Result<u32, Error> {
        let mut fields = Vec::with_capacity(lines.len());
        for (at, line) in lines.iter().enumerate() {
            let line = line.trim();
            let found = (!line.contains(['\n', '\r'])).then(|| entry_fields(line)).flatten();
            fields.push(found.ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "line {} of {} is not one JSON object on one line: give each line as the JSON text of one object",
                    at + 1,
                    lines.len()
                ))
            })?);
        }
        if lines.is_empty() {
            return Ok(0);
        }
        let first = key.first_part()?;
        let written = self.base.locked(&first, self.append_lines_locked(key, &first, lines, fields)).await?;
        if written > 0 && key.subpath.is_none() {
            // The session's open state in this store is stale now, as after any writer.
            self.reopen(&key.id);
            let mut stamp = String::from("{\"id\":");
            crate::support::json::push_string(&mut stamp, &key.id);
            stamp.push_str(&format!(",\"ms\":{now_ms}}}\n"));
            self.base.storage.append(&written_log(&key.project), stamp.as_bytes()).await?;
        }
        Ok(written)
    }

    async fn append_lines_locked(
        &self,
        key: &TranscriptKey,
        first: &str,
        lines: &[String],
        fields: Vec<EntryFields>,
    ) -> Result<u32, Error> {
        // A session Mneme rolled over takes lines at its last part.
        let target = match &key.subpath {
            None => self.main_parts(&key.project, &key.id).await?.pop().map_or_else(|| first.to_owned(), |part| part.key),
            Some(_) => first.to_owned(),
        };
        let cached = self.state.tails.borrow_mut().remove(&target);
        let mut tail = match cached {
            Some(tail) => tail,
            None => Tail { ends_clean: true, ..Tail::default() },
        };
        match self.base.storage.read(&target, tail.size, None).await {
            Ok(bytes) => tail.read(&bytes),
            Err(StorageError::NotFound { .. }) => tail = Tail { ends_clean: true, ..Tail::default() },
            Err(e) => return Err(e.into()),
        }
        let mut kept = Vec::with_capacity(lines.len());
        let mut fresh = Vec::new();
        for (line, fields) in lines.iter().zip(fields) {
            if let Some(uuid) = fields.uuid {
                if tail.recent.contains(&uuid) || fresh.contains(&uuid) {
                    continue;
                }
                fresh.push(uuid);
            }
            kept.push(line.trim());
        }
        if kept.is_empty() {
            self.state.tails.borrow_mut().insert(target, tail);
            return Ok(0);
        }
        let joined = kept.join("\n");
        let (clean, _found) = self.base.redaction().json_lines(&joined);
        // A torn last line (a write cut short) stays apart from the new lines.
        let mut record = String::from(if tail.ends_clean { "" } else { "\n" });
        record.push_str(clean.as_deref().unwrap_or(&joined));
        record.push('\n');
        tail.size = self.base.storage.append(&target, record.as_bytes()).await?;
        tail.ends_clean = true;
        for uuid in fresh {
            tail.remember(uuid);
        }
        self.state.tails.borrow_mut().insert(target, tail);
        Ok(u32::try_from(kept.len()).unwrap_or(u32::MAX))
    }

    /// The lines of the transcript at `key` as they were appended, oldest first (a
    /// line cut short by a crash, never acknowledged, is left out); none if nothing
    /// was ever written there.
    pub async fn read_lines(&self, key: &TranscriptKey) -> Result<Option<Vec<String>>, Error> {
        let first = key.first_part()?;
        let parts = match &key.subpath {
            None => self.main_parts(&key.project, &key.id).await?.into_iter().map(|part| part.key).collect(),
            Some(_) => alloc::vec![first],
        };
        let mut lines = Vec::new();
        let mut found = false;
        for part in parts {
            let bytes = match self.base.storage.read(&part, 0, None).await {
                Ok(bytes) => bytes,
                Err(StorageError::NotFound { .. }) => continue,
                Err(e) => return Err(e.into()),
            };
            found = true;
            let text = crate::scan::decode_utf8(bytes);
            lines.extend(text.split('\n').map(str::trim).filter(|line| entry_fields(line).is_some()).map(ToOwned::to_owned));
        }
        Ok(found.then_some(lines))
    }

    /// The sessions of `project` that have a transcript of their own (a session with
    /// sub-agent transcripts only is not listed), in no particular order.
    pub async fn written_sessions(&self, project: &str) -> Result<Vec<WrittenSession>, Error> {
        keys::validate_project(project)?;
        let mut latest: BTreeMap<String, i64> = BTreeMap::new();
        match self.base.storage.read(&written_log(project), 0, None).await {
            Ok(bytes) => {
                for line in bytes.split(|&b| b == b'\n') {
                    #[derive(serde::Deserialize)]
                    struct Stamp {
                        id: String,
                        ms: i64,
                    }
                    if let Ok(stamp) = serde_json::from_slice::<Stamp>(line) {
                        let at = latest.entry(stamp.id).or_insert(stamp.ms);
                        *at = (*at).max(stamp.ms);
                    }
                }
            }
            Err(StorageError::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        let mut found: BTreeMap<String, KeyInfo> = BTreeMap::new();
        for info in self.base.storage.list(&format!("{}{project}/", keys::PROJECTS)).await? {
            if let Some(PartName { project: p, id, part }) = keys::parse_session_key(&info.key)
                && p == project
            {
                let newest = found.get(id).is_none_or(|known| keys::parse_session_key(&known.key).is_some_and(|k| k.part < part));
                if newest {
                    found.insert(id.to_owned(), info);
                }
            }
        }
        let mut sessions = Vec::with_capacity(found.len());
        for (id, last_part) in found {
            let updated_ms = match latest.get(&id) {
                Some(&ms) => ms,
                None => self.last_timestamp(&last_part).await?,
            };
            sessions.push(WrittenSession { id, updated_ms });
        }
        Ok(sessions)
    }

    /// The subpaths of session `id`'s other transcripts in `project` (its sub-agents'),
    /// sorted.
    pub async fn subpaths(&self, project: &str, id: &str) -> Result<Vec<String>, Error> {
        keys::validate_project(project)?;
        keys::validate_session_id(id)?;
        let dir = keys::session_dir(project, id);
        let mut found: Vec<String> = self
            .base
            .storage
            .list(&dir)
            .await?
            .into_iter()
            .filter_map(|info| info.key.strip_prefix(&dir)?.strip_suffix(keys::TRANSCRIPT_SUFFIX).map(ToOwned::to_owned))
            .collect();
        found.sort();
        Ok(found)
    }

    /// Removes the transcript at `key`; the session's own takes every file of the
    /// session with it (its parts and its sub-agents'). Removing what is not there is
    /// fine.
    pub async fn remove_transcript(&self, key: &TranscriptKey) -> Result<(), Error> {
        let first = key.first_part()?;
        let doomed = match &key.subpath {
            Some(_) => alloc::vec![first.clone()],
            None => {
                let mut doomed: Vec<String> =
                    self.base.storage.list(&keys::session_dir(&key.project, &key.id)).await?.into_iter().map(|i| i.key).collect();
                // The first part last: until it goes, the session still lists, so an
                // interrupted removal can be run again.
                doomed.extend(self.main_parts(&key.project, &key.id).await?.into_iter().rev().map(|part| part.key));
                doomed
            }
        };
        self.base
            .locked(&first, async {
                for doomed in &doomed {
                    self.state.tails.borrow_mut().remove(doomed);
                    match self.base.storage.remove(doomed).await {
                        Ok(()) | Err(StorageError::NotFound { .. }) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Ok(())
            })
            .await?;
        if key.subpath.is_none() {
            self.reopen(&key.id);
        }
        Ok(())
    }

    /// The parts of session `id`'s own transcript in `project`, first to last.
    async fn main_parts(&self, project: &str, id: &str) -> Result<Vec<KeyInfo>, Error> {
        let mut parts: Vec<(u32, KeyInfo)> = self
            .base
            .storage
            .list(&format!("{}{project}/{id}", keys::PROJECTS))
            .await?
            .into_iter()
            .filter_map(|info| {
                let name = keys::parse_session_key(&info.key)?;
                (name.project == project && name.id == id).then_some((name.part, info))
            })
            .collect();
        parts.sort_by_key(|(part, _)| *part);
        Ok(parts.into_iter().map(|(_, info)| info).collect())
    }

    /// The timestamp of the last line of `part` that has one (read from its last 64
    /// KiB), in Unix milliseconds; 0 without one.
    async fn last_timestamp(&self, part: &KeyInfo) -> Result<i64, Error> {
        let bytes = match self.base.storage.read(&part.key, part.size.saturating_sub(64 * 1024), None).await {
            Ok(bytes) => bytes,
            Err(StorageError::NotFound { .. }) => return Ok(0),
            Err(e) => return Err(e.into()),
        };
        let text = crate::scan::decode_utf8(bytes);
        Ok(text
            .rsplit('\n')
            .filter_map(|line| entry_fields(line.trim())?.timestamp)
            .find_map(|timestamp| parse_millis(&timestamp))
            .unwrap_or(0))
    }
}

fn written_log(project: &str) -> String {
    format!("{}{project}/{WRITTEN}", keys::PROJECTS)
}
