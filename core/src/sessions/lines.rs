//! Transcripts by key, line for line: what a session store of an agent SDK keeps (the
//! Claude Agent SDK's `SessionStore`). The SDK hands over each transcript line Claude
//! Code wrote, keyed by project folder, session id and, for a sub-agent, a subpath
//! (`subagents/agent-<id>`); the lines land where Claude Code keeps them, so the store
//! is a Claude Code home that `mneme` and Claude Code read, and they load back as they
//! were given (but for the secrets the store's redaction takes out).
//!
//! The SDK treats a line's `uuid` as its idempotency key: it retries a batch whose
//! append failed, an append can fail after its bytes landed (a lost connection, a
//! timeout), and it re-imports a transcript to fill a gap. A line whose `uuid` the
//! transcript holds already is not written again. The store keeps, per transcript it
//! appended to, a hash of every id in it and where it ends, and reads only what was
//! appended since; a hash that matches is confirmed against the file before a line
//! is left out.

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::hash::BuildHasher;

use super::{Parts, Sessions};
use crate::error::Error;
use crate::keys::{self, PartName};
use crate::storage::{KeyInfo, Storage, StorageError};
use crate::support::hash::FastSet;
use crate::support::time::parse_millis;
use crate::support::validate;

/// How many transcripts' ends a store keeps (a few hundred KB each for a long one);
/// past it they are forgotten and read again when next appended to.
const TAILS: usize = 16;

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

/// What this store knows of a transcript it appended lines to (all its parts).
#[derive(Debug, Default)]
pub(crate) struct Tail {
    /// The last part's length when this store last read or wrote it.
    size: u64,
    /// How the last part ends.
    end: End,
    /// The hashes of its lines' ids.
    ids: FastSet<u64>,
    /// When this store last used it (a count of uses), to forget the least used.
    used: u64,
}

/// How a transcript's last line ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum End {
    /// With a line break (or the transcript is empty).
    #[default]
    Clean,
    /// Without one, but whole: another program wrote it so. The next line goes on a
    /// line of its own.
    Unterminated,
    /// Cut short (a write a crash tore), from this offset on.
    Torn(u64),
}

impl Tail {
    /// Takes in `bytes`, read from offset `from` to the part's end.
    fn read(&mut self, from: u64, bytes: &[u8]) {
        self.size = from.saturating_add(bytes.len() as u64);
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
        self.hash_ids(bytes.get(..complete).unwrap_or_default());
        let rest = bytes.get(complete..).unwrap_or_default();
        self.end = if rest.is_empty() {
            End::Clean
        } else if self.hash_ids(rest) {
            End::Unterminated
        } else {
            End::Torn(from.saturating_add(complete as u64))
        };
    }

    /// Hashes the ids of the lines of `bytes`; whether its last line is an entry.
    fn hash_ids(&mut self, bytes: &[u8]) -> bool {
        let mut last = false;
        for line in crate::scan::decode(bytes).split('\n') {
            let fields = entry_fields(line.trim());
            last = fields.is_some();
            if let Some(uuid) = fields.and_then(|f| f.uuid) {
                self.ids.insert(id_hash(&uuid));
            }
        }
        last
    }
}

fn id_hash(uuid: &str) -> u64 {
    foldhash::fast::FixedState::default().hash_one(uuid)
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
    /// transcript at `key`, in one storage append. A line whose `uuid` the transcript
    /// holds already is left out, so a batch retried after a failure that had landed,
    /// or a transcript imported again, is written once. Returns how many were written;
    /// none given, nothing is written (not even an empty file).
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
        let written = self.base.locked(&first, self.append_lines_locked(key, &first, lines, fields)).await;
        if key.subpath.is_none() {
            // The session's open state in this store is stale now, as after any writer,
            // whatever the append reports (it may have landed); its tail here is not.
            self.state.open.borrow_mut().remove(&key.id);
        }
        let written = written?;
        if key.subpath.is_none() {
            // Stamped even when every line was there already: the SDK's retry of a batch
            // that landed is a write as far as it knows.
            let stamp = format!("\n{{\"id\":{},\"ms\":{now_ms}}}", json_string(&key.id));
            self.base.storage.append(&keys::written_log(&key.project), stamp.as_bytes()).await?;
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
        // Every part of the transcript (a session Mneme rolled over has several); lines
        // go to the last.
        let mut parts: Vec<KeyInfo> = match &key.subpath {
            None => self.main_parts(&key.project, &key.id).await?,
            Some(_) => self.base.storage.list(first).await?.into_iter().filter(|info| info.key == first).collect(),
        };
        let (target, size) = match parts.pop() {
            Some(last) => (last.key, Some(last.size)),
            None => {
                // A new transcript under the id of an archived session (its own or a
                // sub-agent's) would leave that session unrestorable.
                self.refuse_archived(&key.id).await?;
                (first.to_owned(), None)
            }
        };
        let earlier: Vec<String> = parts.into_iter().map(|part| part.key).collect();
        let mut tail = self.tail(&target, size, &earlier).await?;
        let mut record = String::new();
        match tail.end {
            End::Clean => {}
            End::Unterminated => record.push('\n'),
            End::Torn(at) => {
                // A line cut short (never acknowledged) goes aside, as before any write;
                // if the part grew since it was read, nothing is cut and this fails.
                self.move_torn_tail(&target, at, Some(tail.size.saturating_sub(at))).await?;
                tail.size = at;
            }
        }
        // Ids whose hash the transcript holds are confirmed against its files.
        let hashed: Vec<u64> = fields.iter().map(|f| f.uuid.as_deref().map_or(0, id_hash)).collect();
        let suspects: BTreeSet<&str> =
            fields.iter().zip(&hashed).filter_map(|(f, hash)| f.uuid.as_deref().filter(|_| tail.ids.contains(hash))).collect();
        let present = if suspects.is_empty() { BTreeSet::new() } else { self.ids_among(&earlier, &target, &suspects).await? };
        let mut kept = Vec::with_capacity(lines.len());
        let mut fresh = BTreeSet::new();
        for (at, ((line, fields), hash)) in lines.iter().zip(&fields).zip(&hashed).enumerate() {
            if let Some(uuid) = fields.uuid.as_deref() {
                if present.contains(uuid) || !fresh.insert(uuid) {
                    continue;
                }
                tail.ids.insert(*hash);
            }
            kept.push((at, line.trim()));
        }
        if kept.is_empty() {
            self.keep_tail(target, tail);
            return Ok(0);
        }
        let joined = kept.iter().map(|(_, line)| *line).collect::<Vec<_>>().join("\n");
        let (clean, _found) = self.base.redaction().json_lines(&joined);
        if let Some(clean) = &clean
            && let Some(broken) = clean.split('\n').position(|line| entry_fields(line).is_none())
        {
            let at = kept.get(broken).map_or(broken, |(at, _)| *at);
            return Err(Error::InvalidArgument(format!(
                "line {} of {} is no JSON object once its secrets are taken out; nothing was written",
                at + 1,
                lines.len()
            )));
        }
        record.push_str(clean.as_deref().unwrap_or(&joined));
        record.push('\n');
        tail.size = self.base.storage.append(&target, record.as_bytes()).await?;
        tail.end = End::Clean;
        self.keep_tail(target, tail);
        Ok(u32::try_from(kept.len()).unwrap_or(u32::MAX))
    }

    /// What this store knows of the transcript whose last part is `key`, brought up to
    /// `size` (that part's size in storage now; none when it is not there) and its
    /// `earlier` parts: only what was appended since this store last saw it is read,
    /// unless the part shrank or no longer follows on from what this store saw (it was
    /// rewritten by another program), when it is read again whole.
    async fn tail(&self, key: &str, size: Option<u64>, earlier: &[String]) -> Result<Tail, Error> {
        let cached = self.state.tails.borrow_mut().remove(key);
        let Some(size) = size else { return Ok(Tail::default()) };
        match cached {
            Some(tail) if tail.size == size => return Ok(tail),
            Some(mut tail) if tail.size < size && tail.size > 0 => {
                // What follows on from the clean end this store saw starts after its
                // line break.
                match self.base.storage.read(key, tail.size - 1, None).await {
                    Ok(bytes) if bytes.first() == Some(&b'\n') => {
                        tail.read(tail.size, bytes.get(1..).unwrap_or_default());
                        return Ok(tail);
                    }
                    Ok(_) | Err(StorageError::NotFound { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            _ => {}
        }
        let mut tail = Tail::default();
        for part in earlier {
            match self.base.storage.read(part, 0, None).await {
                Ok(bytes) => {
                    tail.hash_ids(&bytes);
                }
                Err(StorageError::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        match self.base.storage.read(key, 0, None).await {
            Ok(bytes) => tail.read(0, &bytes),
            Err(StorageError::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(tail)
    }

    /// Keeps `tail` for the next append, forgetting the least used one past [`TAILS`].
    fn keep_tail(&self, key: String, mut tail: Tail) {
        let mut tails = self.state.tails.borrow_mut();
        tail.used = tails.values().map(|kept| kept.used).max().unwrap_or(0).saturating_add(1);
        if tails.len() >= TAILS
            && let Some(oldest) = tails.iter().min_by_key(|(_, kept)| kept.used).map(|(key, _)| key.clone())
        {
            tails.remove(&oldest);
        }
        tails.insert(key, tail);
    }

    /// Which of `ids` the lines of the transcript's parts (`earlier`, then `last`) hold.
    async fn ids_among<'a>(&self, earlier: &[String], last: &str, ids: &BTreeSet<&'a str>) -> Result<BTreeSet<&'a str>, Error> {
        let mut found = BTreeSet::new();
        for part in earlier.iter().map(String::as_str).chain(core::iter::once(last)) {
            let bytes = match self.base.storage.read(part, 0, None).await {
                Ok(bytes) => bytes,
                Err(StorageError::NotFound { .. }) => continue,
                Err(e) => return Err(e.into()),
            };
            let text = crate::scan::decode_utf8(bytes);
            found.extend(
                text.split('\n').filter_map(|line| entry_fields(line.trim())?.uuid).filter_map(|uuid| ids.get(uuid.as_str()).copied()),
            );
        }
        Ok(found)
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
        let log = keys::written_log(project);
        let mut latest: BTreeMap<String, i64> = BTreeMap::new();
        let mut stamps = 0usize;
        let read = match self.base.storage.read(&log, 0, None).await {
            Ok(bytes) => Some(bytes),
            Err(StorageError::NotFound { .. }) => None,
            Err(e) => return Err(e.into()),
        };
        for line in read.iter().flat_map(|bytes| bytes.split(|&b| b == b'\n')) {
            #[derive(serde::Deserialize)]
            struct Stamp {
                id: String,
                ms: i64,
            }
            // A stamp cut short by a crash reads as nothing; the next starts on a line
            // of its own.
            if let Ok(stamp) = serde_json::from_slice::<Stamp>(line) {
                stamps += 1;
                let at = latest.entry(stamp.id).or_insert(stamp.ms);
                *at = (*at).max(stamp.ms);
            }
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
        latest.retain(|id, _| found.contains_key(id));
        if stamps > 2 * latest.len() + 64
            && let Some(bytes) = &read
        {
            // One stamp per session left: the log stops growing with every append. If
            // another writer stamped meanwhile (`changed`), or the store is read-only,
            // the log stays as it is; it is only compacted, never needed whole.
            let compacted: String = latest.iter().map(|(id, ms)| format!("\n{{\"id\":{},\"ms\":{ms}}}", json_string(id))).collect();
            let _ = self.base.storage.replace(&log, compacted.as_bytes(), Some(bytes.len() as u64)).await;
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
    /// session with it (its parts, its sub-agents', the torn lines and backups beside
    /// them). Removing what is not there is fine.
    pub async fn remove_transcript(&self, key: &TranscriptKey) -> Result<(), Error> {
        let first = key.first_part()?;
        self.base
            .locked(&first, async {
                let doomed = match &key.subpath {
                    Some(_) => alloc::vec![first.clone()],
                    None => {
                        let parts = Parts {
                            project: key.project.clone(),
                            id: key.id.clone(),
                            parts: self.main_parts(&key.project, &key.id).await?,
                        };
                        let flat = self.subagent_files(&key.id, &parts).await?.into_iter().map(|(key, _)| key).collect();
                        self.session_files(&parts, flat).await?
                    }
                };
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

fn json_string(text: &str) -> String {
    let mut out = String::new();
    crate::support::json::push_string(&mut out, text);
    out
}
