//! Retention: what a cleanup pass ([`Sessions::gc`]) may do, and nothing it does is
//! silent or final by default.
//!
//! - A session nobody touched for its time to live is **archived**: its files (parts,
//!   sub-agent transcripts, torn tails, repair backups) move under
//!   `archive/<archived ms>-<id>/`, keeping their keys below that, so
//!   [`Sessions::archived`] lists it and [`Sessions::restore`] puts every file back.
//! - An archived session is deleted only when the caller asks
//!   ([`Retention::delete_archived`]) and only after [`Retention::keep_archived_ms`],
//!   never by the pass that archived it.
//! - Under a disk budget ([`Retention::max_disk_bytes`]) debris (`.torn-*`, `.bak-*`) and
//!   archived sessions are collected oldest first until what is left fits; live
//!   sessions never count and are never collected. Torn tails carry no time and go first.
//!   An archived session is collected only once it has been kept
//!   [`Retention::keep_archived_ms`], and never in the pass that archived it (it was
//!   live when the pass began): what they hold stays over the budget, and the report's
//!   `kept_bytes` says so.
//!
//! A session's time to live: its key's toggle `ttl_days` (a key that continues or
//! continued it), else the TTL of its key's class (the toggle `class`, else the
//! provider part of the key's model, `ollama/llama3` → `ollama`), else the default.
//! Its last activity is the later of its last entry and its key's last inbound message.

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::Sessions;
use crate::catalog::KeyEntry;
use crate::error::Error;
use crate::keys;
use crate::storage::{Storage, StorageError};
use crate::support::time;

/// The key toggle that sets its sessions' time to live, in days.
pub const TTL_TOGGLE: &str = "ttl_days";

/// A time to live toggle's days: a whole number, 0 or more.
pub(crate) fn ttl_days(value: &str) -> Option<i64> {
    value.parse::<i64>().ok().filter(|days| *days >= 0)
}

/// Where archived sessions live.
pub const ARCHIVE: &str = "archive/";
const DAY_MS: i64 = 86_400_000;

/// A time to live for the sessions of one class of keys.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassTtl {
    pub class: String,
    pub ttl_ms: i64,
}

/// What a cleanup pass does.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Retention {
    /// A session untouched this long is archived (default 30 days).
    pub ttl_ms: i64,
    /// Times to live per class (default: `ollama`, 7 days).
    pub classes: Vec<ClassTtl>,
    /// How long an archived session is kept before it may be deleted (default 30 days).
    pub keep_archived_ms: i64,
    /// Delete archived sessions kept longer than `keep_archived_ms` (default: no).
    pub delete_archived: bool,
    /// Keep debris and the archive under this many bytes, oldest first, taking no archived
    /// session kept less than `keep_archived_ms` or archived in this pass (default: no budget).
    pub max_disk_bytes: Option<u64>,
    /// Say what would be done, do nothing.
    pub dry_run: bool,
}

impl Retention {
    /// Refuses a negative time to live or time to keep the archive (a time to live of 0
    /// archives every session now, as asked).
    fn check(&self) -> Result<(), Error> {
        let classes = self.classes.iter().map(|class| (format!("class `{}`", class.class), class.ttl_ms));
        if let Some((name, ttl)) = [("the default".into(), self.ttl_ms)].into_iter().chain(classes).find(|(_, ttl)| *ttl < 0) {
            return Err(Error::InvalidArgument(format!(
                "the time to live of {name} is {ttl} ms: give 0 or more (30 days is {})",
                30 * DAY_MS
            )));
        }
        if self.keep_archived_ms < 0 {
            return Err(Error::InvalidArgument(format!(
                "the time to keep archived sessions is {} ms: give 0 or more",
                self.keep_archived_ms
            )));
        }
        Ok(())
    }
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            ttl_ms: 30 * DAY_MS,
            classes: alloc::vec![ClassTtl { class: "ollama".into(), ttl_ms: 7 * DAY_MS }],
            keep_archived_ms: 30 * DAY_MS,
            delete_archived: false,
            max_disk_bytes: None,
            dry_run: false,
        }
    }
}

/// A session in the archive.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArchivedSession {
    pub id: String,
    pub project: String,
    pub archived_ms: i64,
    pub files: u32,
    pub bytes: u64,
}

/// A session a cleanup pass archived (or would archive).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Expired {
    pub id: String,
    pub project: String,
    pub last_active_ms: i64,
    pub ttl_ms: i64,
    /// Where the time to live came from: the default, a class, a key's `ttl_days`.
    pub reason: String,
}

/// Something a cleanup pass deleted (or would delete): debris, or an archived session.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Removed {
    /// The debris file, or the archived session's folder (`archive/<ms>-<id>`).
    pub key: String,
    pub bytes: u64,
    pub reason: String,
}

/// What a cleanup pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GcReport {
    pub dry_run: bool,
    pub archived: Vec<Expired>,
    pub removed: Vec<Removed>,
    /// Bytes of debris and archive left.
    pub kept_bytes: u64,
}

/// Something the budget may collect, with the time it is ordered by.
struct Collectable {
    at_ms: i64,
    key: String,
    files: Vec<String>,
    bytes: u64,
    what: String,
    /// Counted against the budget, never collected by it: an archived session still in
    /// its time to be kept, or archived in this pass.
    kept: bool,
}

impl<S: Storage> Sessions<'_, S> {
    /// One cleanup pass at `now_ms` under `policy` (see the module docs).
    pub async fn gc(&self, policy: &Retention, now_ms: i64) -> Result<GcReport, Error> {
        policy.check()?;
        let mut report = GcReport { dry_run: policy.dry_run, ..GcReport::default() };
        let keys = self.catalog.read_index(|state| state.keys.values().cloned().collect::<Vec<_>>()).await?;
        for session in self.list().await?.sessions {
            let key_active = keys.iter().filter(|k| k.session_id == session.id).map(|k| k.updated_ms).max();
            let Some(last_active_ms) = session.updated.as_deref().and_then(time::parse_millis).max(key_active) else {
                continue;
            };
            let (ttl_ms, reason) = ttl_of(&session.id, &keys, policy);
            if now_ms.saturating_sub(last_active_ms) < ttl_ms {
                continue;
            }
            if !policy.dry_run {
                self.archive(&session.id, now_ms).await?;
            }
            report.archived.push(Expired { id: session.id, project: session.project, last_active_ms, ttl_ms, reason });
        }

        let mut archive = self.archive_groups().await?;
        // A dry run counts what a run would have moved into the archive by then, so
        // the budget below collects exactly what it would: the files at their sizes,
        // and no longer as debris.
        let mut planned = BTreeSet::new();
        if policy.dry_run {
            let sizes: BTreeMap<String, u64> = self.base.storage.list(keys::PROJECTS).await?.into_iter().map(|i| (i.key, i.size)).collect();
            for expired in &report.archived {
                let parts = self.require(&expired.id).await?;
                let subagents = self.subagents(&expired.id).await?.into_iter().map(|s| s.key).collect();
                let files = self.session_files(&parts, subagents).await?;
                let bytes = files.iter().filter_map(|key| sizes.get(key)).sum();
                let folder = archive_folder(now_ms, &expired.id);
                let moved = files.iter().map(|key| format!("{folder}/{key}")).collect();
                planned.extend(files);
                archive.insert(folder, (now_ms, moved, bytes));
            }
        }
        let archived_now: BTreeSet<String> = report.archived.iter().map(|expired| archive_folder(now_ms, &expired.id)).collect();
        let mut collectable: Vec<Collectable> = archive
            .into_iter()
            .map(|(folder, (at_ms, files, bytes))| Collectable {
                kept: archived_now.contains(&folder) || now_ms.saturating_sub(at_ms) < policy.keep_archived_ms,
                at_ms,
                key: folder,
                files,
                bytes,
                what: "archived session".into(),
            })
            .collect();
        if policy.delete_archived {
            let (due, kept): (Vec<_>, Vec<_>) = collectable.into_iter().partition(|c| !c.kept);
            collectable = kept;
            for item in due {
                let days = now_ms.saturating_sub(item.at_ms) / DAY_MS;
                let reason = format!("archived {days} days ago, kept {} days", policy.keep_archived_ms / DAY_MS);
                self.collect(&item, reason, policy.dry_run, &mut report).await?;
            }
        }
        collectable.extend(self.debris().await?.into_iter().filter(|debris| !planned.contains(&debris.key)));
        let mut total: u64 = collectable.iter().map(|c| c.bytes).sum();
        if let Some(budget) = policy.max_disk_bytes {
            collectable.sort_by(|a, b| a.at_ms.cmp(&b.at_ms).then_with(|| a.key.cmp(&b.key)));
            let mut left = Vec::new();
            for item in collectable {
                if total <= budget || item.kept {
                    left.push(item);
                    continue;
                }
                total -= item.bytes;
                let reason = format!("{} over the disk budget of {budget} bytes, oldest first", item.what);
                self.collect(&item, reason, policy.dry_run, &mut report).await?;
            }
            collectable = left;
        }
        report.kept_bytes = collectable.iter().map(|c| c.bytes).sum();
        Ok(report)
    }

    /// Moves session `id` into the archive (see the module docs).
    pub async fn archive(&self, id: &str, now_ms: i64) -> Result<ArchivedSession, Error> {
        let subagents = self.subagents(id).await?;
        let parts = self.require(id).await?;
        let folder = archive_folder(now_ms, id);
        let moved = self
            .base
            .locked(&parts.base_key(), async {
                for key in self.session_files(&parts, subagents.into_iter().map(|s| s.key).collect()).await? {
                    move_file(&self.base.storage, &key, &format!("{folder}/{key}")).await?;
                }
                let moved = self.base.storage.list(&format!("{folder}/")).await?;
                let bytes = moved.iter().map(|i| i.size).sum();
                Ok::<_, Error>(ArchivedSession {
                    id: id.to_owned(),
                    project: parts.project.clone(),
                    archived_ms: now_ms,
                    files: moved.len() as u32,
                    bytes,
                })
            })
            .await;
        self.reopen(id);
        moved
    }

    /// Every archived session, oldest first.
    pub async fn archived(&self) -> Result<Vec<ArchivedSession>, Error> {
        let mut sessions = Vec::new();
        for (folder, (archived_ms, files, bytes)) in self.archive_groups().await? {
            let id = archive_folder_parts(&folder).map_or("", |(_, id)| id).to_owned();
            let project = files
                .iter()
                .filter_map(|key| key.strip_prefix(&format!("{folder}/")).and_then(keys::parse_session_key))
                .find(|parsed| parsed.id == id)
                .map(|parsed| parsed.project.to_owned())
                .unwrap_or_default();
            sessions.push(ArchivedSession { id, project, archived_ms, files: files.len() as u32, bytes });
        }
        sessions.sort_by(|a, b| a.archived_ms.cmp(&b.archived_ms).then_with(|| a.id.cmp(&b.id)));
        Ok(sessions)
    }

    /// Puts archived session `id` back (its latest archiving, when there are several).
    /// A session that has the id again is `session-exists`: nothing is moved.
    pub async fn restore(&self, id: &str) -> Result<ArchivedSession, Error> {
        let archived = self.archived().await?.into_iter().filter(|a| a.id == id).max_by_key(|a| a.archived_ms);
        let Some(archived) = archived else {
            return Err(match self.require(id).await {
                Ok(_) => {
                    Error::InvalidArgument(format!("session `{id}` is not archived: it is in the store, live, with nothing to restore"))
                }
                Err(error) => error,
            });
        };
        let folder = archive_folder(archived.archived_ms, id);
        let prefix = format!("{folder}/");
        let base = format!("{prefix}{}", keys::session_key(&archived.project, id));
        match self.require(id).await {
            // A restore cut as it put the first part back (a filesystem's rename is a
            // link, then an unlink) left it in both places: this one finishes it.
            Ok(live) if same_bytes(&self.base.storage, &live.base_key(), &base).await? => {}
            Ok(_) => return Err(Error::SessionExists { id: id.to_owned() }),
            Err(Error::SessionNotFound { .. }) => {}
            Err(e) => return Err(e),
        }
        let mut files: Vec<String> = self.base.storage.list(&prefix).await?.into_iter().map(|i| i.key).collect();
        // The first part last: until it is back the session does not list.
        files.sort_by_key(|key| *key == base);
        for key in &files {
            move_file(&self.base.storage, key, &key[prefix.len()..]).await?;
        }
        self.reopen(id);
        Ok(archived)
    }

    /// Refuses a new session the id of an archived one: it would hide the archived
    /// history (an agent back after its idle time would start again from nothing), and
    /// `restore` would then refuse to put it back.
    /// It lists the whole archive (every file of every archived session): a cost paid
    /// only when a session is created.
    pub(crate) async fn refuse_archived(&self, id: &str) -> Result<(), Error> {
        let archived = self.archive_groups().await?.keys().any(|folder| archive_folder_parts(folder).is_some_and(|(_, named)| named == id));
        if archived { Err(Error::SessionArchived { id: id.to_owned() }) } else { Ok(()) }
    }

    /// The archive's folders: `archive/<ms>-<id>` → (ms, files, bytes).
    async fn archive_groups(&self) -> Result<BTreeMap<String, (i64, Vec<String>, u64)>, Error> {
        let mut groups: BTreeMap<String, (i64, Vec<String>, u64)> = BTreeMap::new();
        for info in self.base.storage.list(ARCHIVE).await? {
            let Some(name) = info.key.strip_prefix(ARCHIVE).and_then(|rest| rest.split('/').next()) else { continue };
            let folder = format!("{ARCHIVE}{name}");
            let Some((at_ms, _)) = archive_folder_parts(&folder) else { continue };
            let group = groups.entry(folder).or_insert((at_ms, Vec::new(), 0));
            group.1.push(info.key);
            group.2 += info.size;
        }
        Ok(groups)
    }

    /// Torn tails and repair backups of live sessions.
    async fn debris(&self) -> Result<Vec<Collectable>, Error> {
        let mut found = Vec::new();
        for info in self.base.storage.list(keys::PROJECTS).await? {
            let at_ms = if let Some((_, ms)) = info.key.rsplit_once(".bak-") {
                ms.parse::<i64>().ok()
            } else {
                info.key.contains(".jsonl.torn-").then_some(0)
            };
            if let Some(at_ms) = at_ms {
                let what = if at_ms == 0 { "torn tail" } else { "repair backup" };
                found.push(Collectable {
                    at_ms,
                    key: info.key.clone(),
                    files: alloc::vec![info.key],
                    bytes: info.size,
                    what: what.into(),
                    kept: false,
                });
            }
        }
        Ok(found)
    }

    async fn collect(&self, item: &Collectable, reason: String, dry_run: bool, report: &mut GcReport) -> Result<(), Error> {
        if !dry_run {
            for key in &item.files {
                match self.base.storage.remove(key).await {
                    Ok(()) | Err(StorageError::NotFound { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        report.removed.push(Removed { key: item.key.clone(), bytes: item.bytes, reason });
        Ok(())
    }
}

fn archive_folder(archived_ms: i64, id: &str) -> String {
    format!("{ARCHIVE}{archived_ms}-{id}")
}

/// What [`archive_folder`] made `folder` of: when, and the session's id (which may
/// hold `-` itself; the time has none).
fn archive_folder_parts(folder: &str) -> Option<(i64, &str)> {
    let (ms, id) = folder.strip_prefix(ARCHIVE)?.split_once('-')?;
    Some((ms.parse().ok()?, id))
}

/// A move that finds its source gone was done by an earlier, interrupted pass.
async fn move_file<S: Storage>(storage: &S, from: &str, to: &str) -> Result<(), Error> {
    match storage.rename(from, to).await {
        Ok(()) | Err(StorageError::NotFound { .. }) => Ok(()),
        // A move cut after its copy landed (a filesystem's rename is a link, then an
        // unlink): the file is at both places, and this one finishes it.
        Err(StorageError::AlreadyExists { .. }) if same_bytes(storage, from, to).await? => match storage.remove(from).await {
            Ok(()) | Err(StorageError::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        },
        Err(e) => Err(e.into()),
    }
}

/// Whether two objects are there and hold the same bytes; a missing one holds none.
async fn same_bytes<S: Storage>(storage: &S, a: &str, b: &str) -> Result<bool, Error> {
    let read = async |key: &str| match storage.read(key, 0, None).await {
        Ok(bytes) => Ok(Some(bytes)),
        Err(StorageError::NotFound { .. }) => Ok(None),
        Err(e) => Err(Error::from(e)),
    };
    Ok(match (read(a).await?, read(b).await?) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    })
}

/// Session `id`'s time to live, and where it came from.
fn ttl_of(id: &str, keys: &[KeyEntry], policy: &Retention) -> (i64, String) {
    let holders = keys.iter().filter(|k| k.session_id == id || k.previous_session_ids.iter().any(|p| p == id));
    for key in holders {
        let toggle = |name: &str| key.toggles.iter().find(|t| t.name == name).map(|t| t.value.as_str());
        if let Some(days) = toggle(TTL_TOGGLE).and_then(ttl_days) {
            return (days.saturating_mul(DAY_MS), format!("key {}'s {TTL_TOGGLE}", key.key));
        }
        let class = toggle("class").or_else(|| key.model.as_deref().and_then(|m| m.split_once('/')).map(|(provider, _)| provider));
        if let Some(rule) = class.and_then(|class| policy.classes.iter().find(|c| c.class == class)) {
            return (rule.ttl_ms, format!("the {} class of key {}", rule.class, key.key));
        }
    }
    (policy.ttl_ms, "the default".to_owned())
}
