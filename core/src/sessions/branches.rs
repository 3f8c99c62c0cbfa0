//! The store's side of branching: the ledger and branches of a session, and forks.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::Sessions;
use super::{Parts, with_loaded};
use crate::dialect::Fork;
use crate::error::Error;
use crate::format::Format;
use crate::keys;
use crate::scan::Line;
use crate::storage::{Storage, StorageError};
use crate::support::time;
use crate::transcript::{Branch, Entry, Ledger, Prices};

impl<S: Storage> Sessions<'_, S> {
    /// Every branch of session `id` (the current one first): each leaf message, its
    /// text and time, the messages on it, where it leaves the current branch, and the
    /// tokens its replies reported.
    pub async fn branches(&self, id: &str) -> Result<Vec<Branch>, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| loaded.ledger(None)).branches)
    }

    /// The token ledger of session `id`: what its replies reported in `usage`, each
    /// reply counted once, in all and per branch, and each of its sub-agents'
    /// transcripts apart, priced when `prices` are given.
    pub async fn usage(&self, id: &str, prices: Option<&Prices>) -> Result<Ledger, Error> {
        if let Some(prices) = prices {
            prices.check()?;
        }
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        let mut ledger = with_loaded(&raw, |loaded| loaded.ledger(prices));
        for (key, bytes) in self.subagent_files(id, &parts).await? {
            let agent = keys::transcript_name(&key).to_owned();
            ledger.subagents.push(with_loaded(core::slice::from_ref(&bytes), |loaded| loaded.agent_usage(agent, prices)));
        }
        Ok(ledger)
    }

    /// `session-exists` if session `id` is in the store, live or archived, unless all
    /// there is of it is what a crash left at `key` (see [`Self::write_new_session`]).
    pub(crate) async fn refuse_taken(&self, id: &str, key: &str) -> Result<(), Error> {
        if let Some(parts) = self.locate(id).await?
            && !(parts.base_key() == key && self.is_debris(&parts).await?)
        {
            return Err(Error::SessionExists { id: id.to_owned() });
        }
        self.refuse_archived(id).await
    }

    /// Writes a new session's first bytes at `key` whole or not at all: a crash in the
    /// middle leaves nothing a reader sees, where an append could leave an empty or
    /// half-written file that kept the id from a second try. The bytes go to a file of
    /// their own (`<key>.new`, no session's name), then are renamed into place; a rename
    /// never replaces a file, so one another program (Claude Code, which takes no lock
    /// Mneme sees) made meanwhile is `session-exists`, not overwritten. Debris an older
    /// crash left at `key` (an empty file, or bytes without one whole line) is replaced
    /// only at the size it was seen, so the second try completes. Under the session's
    /// lock.
    pub(crate) async fn write_new_session(&self, id: &str, key: &str, bytes: &[u8]) -> Result<(), Error> {
        self.base
            .locked(key, async {
                match self.locate(id).await? {
                    None => {
                        let staged = format!("{key}.new");
                        self.base.storage.replace(&staged, bytes, None).await?;
                        match self.base.storage.rename(&staged, key).await {
                            Ok(()) => {}
                            Err(StorageError::AlreadyExists { .. }) => {
                                let _ = self.base.storage.remove(&staged).await;
                                return Err(Error::SessionExists { id: id.to_owned() });
                            }
                            Err(error) => return Err(error.into()),
                        }
                    }
                    Some(parts) if parts.base_key() == key && self.is_debris(&parts).await? => {
                        let seen = parts.parts.first().map(|part| part.size);
                        match self.base.storage.replace(key, bytes, seen).await {
                            Ok(()) => {}
                            Err(StorageError::Changed { .. }) => return Err(Error::SessionExists { id: id.to_owned() }),
                            Err(error) => return Err(error.into()),
                        }
                    }
                    Some(_) => return Err(Error::SessionExists { id: id.to_owned() }),
                }
                // What was cached of the debris is not the session now.
                self.reopen(id);
                Ok(())
            })
            .await
    }

    /// Whether all there is of a session is what a crash left as it was being created:
    /// its first part alone, empty or without a single whole line.
    async fn is_debris(&self, parts: &Parts) -> Result<bool, Error> {
        const MOST: u64 = 1 << 16;
        let [part] = parts.parts.as_slice() else { return Ok(false) };
        if part.key != parts.base_key() {
            return Ok(false);
        }
        if part.size == 0 {
            return Ok(true);
        }
        if part.size > MOST {
            return Ok(false);
        }
        Ok(!self.base.storage.read(&part.key, 0, None).await?.contains(&b'\n'))
    }

    /// Forks session `id` into a new session `to` in the same project: the
    /// conversation from its root to entry `from` (the newest leaf when none),
    /// written as the session's own client writes a fork (Claude Code: `forkedFrom` on
    /// every line; pi: a header whose `parentSession` names the original). The original
    /// is not touched. Returns the lines written.
    pub async fn fork(&self, id: &str, from: Option<&str>, to: &str, now_ms: i64) -> Result<Vec<Entry>, Error> {
        keys::validate_session_id(to)?;
        let parts = self.require(id).await?;
        self.refuse_taken(to, &keys::session_key(&parts.project, to)).await?;
        let raw = self.read_parts(&parts).await?;
        let origin_key = parts.base_key();
        let timestamp = time::format_millis(now_ms);
        let content = with_loaded(&raw, |loaded| -> Result<String, Error> {
            let format = Format::detect(&loaded.lines);
            // Its copy would chain its entries to nothing.
            if format == Format::Pi && loaded.lines.iter().any(|l| l.env.predates_pi_ids()) {
                return Err(crate::dialect::unsupported(
                    format,
                    "a fork of a session of pi's format v1, whose entries have no ids (open it in pi once so it migrates, or `mneme import` it, which migrates it)",
                ));
            }
            let links = loaded.links();
            let leaf = match from {
                Some(uuid) => loaded.branch_point(uuid, &links).map_err(|no| no.error(id, uuid))?,
                None => loaded
                    .leaf_in(&links)
                    .ok_or_else(|| Error::InvalidArgument(format!("session `{id}` has no entry with an id to fork from")))?,
            };
            let chain: Vec<&Line> = loaded.chain_from(leaf, &links).into_iter().map(|i| &loaded.lines[i]).collect();
            // The branch's own folder; pi names one only in the session's header.
            let cwd = chain.iter().rev().find_map(|l| l.env.cwd.get()).unwrap_or_else(|| loaded.cwd());
            let fork = Fork { id: to, origin_id: id, origin_key: &origin_key, timestamp: &timestamp, cwd };
            format.dialect().fork(&chain, &fork)
        })?;
        self.create_session(&parts.project, to, &content).await
    }

    /// Writes a new session `id` in `project` whose lines are `content`, in one write;
    /// `session-exists` if the id is taken. Returns its entries.
    pub(crate) async fn create_session(&self, project: &str, id: &str, content: &str) -> Result<Vec<Entry>, Error> {
        keys::validate_session_id(id)?;
        let key = keys::session_key(project, id);
        self.refuse_taken(id, &key).await?;
        let (record, found) = self.record_of(content.to_owned());
        let record = record + "\n";
        self.write_new_session(id, &key, record.as_bytes()).await?;
        let mut entries = self.load(id).await?.entries;
        for entry in &mut entries {
            entry.redacted = crate::redact::report_of(&found, entry.line);
        }
        Ok(entries)
    }
}
