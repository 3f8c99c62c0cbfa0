//! The facade: a [`Store`] owns the storage, the size limits and the cache of open
//! sessions, and hands out the operations of `sessions/`. Each concept lives in its own
//! module; this file only ties them together.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::rc::Rc;
use alloc::string::String;
use core::cell::{Cell, RefCell};

use crate::error::Error;
use crate::memory::embed::{Embeddings, EmbeddingsInfo};
use crate::redact::Redaction;
use crate::sessions::OpenSession;
use crate::storage::{Storage, StorageError};

/// Size limits of a session's transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// A part is never grown past this; the next entry starts a new part instead
    /// (an entry larger than the limit gets a part of its own).
    pub part_bytes: u64,
    /// What a session resumes with (its bytes since its last compaction) never passes
    /// this: the append is refused with [`Error::SessionFull`] (a sub-agent's
    /// transcript, with [`Error::SubagentFull`]).
    pub total_bytes: u64,
}

impl Default for Limits {
    /// 50 MiB per part, 200 MiB in all (Cersei's defaults).
    fn default() -> Self {
        Self { part_bytes: 50 << 20, total_bytes: 200 << 20 }
    }
}

/// Sessions over a [`Storage`]. All methods take `&self`: a store is shared by a
/// host's handles, and the storage's locks serialise what must be serialised.
#[derive(Debug)]
pub struct Store<S> {
    pub(crate) storage: S,
    pub(crate) limits: Limits,
    pub(crate) open: RefCell<BTreeMap<String, OpenSession>>,
    /// The states of sub-agents' transcripts this store wrote, by key.
    pub(crate) agents: RefCell<BTreeMap<String, OpenSession>>,
    /// Session locks this store holds between calls (see [`Store::hold`]).
    pub(crate) held: RefCell<BTreeSet<String>>,
    /// Held session locks an operation of this store is using right now.
    busy: RefCell<BTreeSet<String>>,
    /// Memory scopes this store has read, by folder.
    pub(crate) memories: RefCell<BTreeMap<String, crate::memory::store::ScopeState>>,
    /// The session index as last read (see `index/log.rs`).
    pub(crate) index: RefCell<Option<crate::index::log::IndexState>>,
    /// The message index `search` keeps up to date.
    pub(crate) search: RefCell<crate::sessions::search::SearchState>,
    /// The secrets taken out of every line and memory file before it is written.
    redaction: Cell<Redaction>,
    /// The word vectors recall ranks with besides words (see `memory::embed`).
    pub(crate) embeddings: RefCell<Option<Rc<Embeddings>>>,
}

impl<S: Storage> Store<S> {
    pub fn new(storage: S) -> Self {
        Self::with_limits(storage, Limits::default())
    }

    pub fn with_limits(storage: S, limits: Limits) -> Self {
        Self {
            storage,
            limits,
            open: RefCell::default(),
            agents: RefCell::default(),
            held: RefCell::default(),
            busy: RefCell::default(),
            memories: RefCell::default(),
            index: RefCell::default(),
            search: RefCell::default(),
            redaction: Cell::default(),
            embeddings: RefCell::default(),
        }
    }

    pub fn storage(&self) -> &S {
        &self.storage
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Which secrets are removed before anything is written (every kind by default;
    /// [`Redaction::off`] writes lines exactly as given).
    pub fn set_redaction(&self, redaction: Redaction) {
        self.redaction.set(redaction);
    }

    pub fn redaction(&self) -> Redaction {
        self.redaction.get()
    }

    /// Makes recall hybrid: `table` is a static embedding table in its text form (see
    /// [`Embeddings::parse`]); memory recall and `search` then also rank by meaning.
    /// `None` goes back to words alone. The table is kept in memory, not in storage: a
    /// host sets it each time it opens a store.
    pub fn set_embeddings(&self, table: Option<&[u8]>) -> Result<Option<EmbeddingsInfo>, Error> {
        let table = table.map(Embeddings::parse).transpose()?.map(Rc::new);
        let info = table.as_ref().map(|table| table.info().clone());
        *self.embeddings.borrow_mut() = table;
        Ok(info)
    }

    /// The embedding table recall uses, if any.
    pub(crate) fn embedding_table(&self) -> Option<Rc<Embeddings>> {
        self.embeddings.borrow().clone()
    }

    /// Keeps session `id` open for writing: takes its lock and keeps it until
    /// [`Store::release`], so every write after this one skips locking and listing and
    /// costs one append. Meanwhile other writers (another store, another process) wait
    /// for the lock and then fail with `locked`, as the storage's lock does. The session
    /// must exist. Programs that take no lock (Claude Code) must not write it meanwhile.
    pub async fn hold(&self, id: &str) -> Result<(), Error> {
        let parts = self.require(id).await?;
        let name = parts.base_key();
        if self.held.borrow().contains(&name) {
            return Ok(());
        }
        self.storage.lock(&name).await?;
        self.held.borrow_mut().insert(name.clone());
        // Read what the session holds now, under the lock, so the next write starts warm.
        if let Err(error) = self.refresh_held(id, &parts.project).await {
            self.held.borrow_mut().remove(&name);
            let _ = self.storage.unlock(&name).await;
            return Err(error);
        }
        Ok(())
    }

    /// Gives back the lock [`Store::hold`] took; a session not held is left alone.
    pub async fn release(&self, id: &str) -> Result<(), Error> {
        let held: Option<String> =
            self.held.borrow().iter().find(|name| crate::keys::parse_session_key(name).is_some_and(|p| p.id == id)).cloned();
        if let Some(name) = held {
            self.held.borrow_mut().remove(&name);
            self.storage.unlock(&name).await?;
        }
        Ok(())
    }

    /// Gives back every lock this store holds (hosts call it when a store is closed).
    pub async fn release_all(&self) -> Result<(), Error> {
        let names: alloc::vec::Vec<String> = core::mem::take(&mut *self.held.borrow_mut()).into_iter().collect();
        let mut outcome = Ok(());
        for name in names {
            if let Err(error) = self.storage.unlock(&name).await {
                outcome = Err(error.into());
            }
        }
        outcome
    }

    /// Forgets what the store knows about session `id` and its sub-agents' transcripts,
    /// so the next operation reads them from storage again. This is how a session
    /// refused after a failed write (see [`Error::SessionPoisoned`]) is opened again.
    pub fn reopen(&self, id: &str) {
        self.open.borrow_mut().remove(id);
        let folder = alloc::format!("/{id}/subagents/");
        self.agents.borrow_mut().retain(|key, _| !key.contains(&folder));
    }

    /// Runs `work` holding the lock `name`, and releases it whatever `work` returned (a
    /// lock the store holds already stays held).
    pub(crate) async fn locked<T>(&self, name: &str, work: impl core::future::Future<Output = Result<T, Error>>) -> Result<T, Error> {
        if self.held.borrow().contains(name) {
            // Holding stands for the lock between calls, not within them: a second
            // operation of this store while one is in flight (on an asynchronous host)
            // is refused as the lock would refuse it.
            if !self.busy.borrow_mut().insert(name.into()) {
                return Err(StorageError::Locked { key: name.into() }.into());
            }
            let _busy = Busy(&self.busy, name);
            return work.await;
        }
        self.storage.lock(name).await?;
        let result = work.await;
        let unlocked = self.storage.unlock(name).await;
        let value = result?;
        unlocked?;
        Ok(value)
    }
}

/// Marks a held lock in use until dropped (also when the operation's future is).
struct Busy<'a>(&'a RefCell<BTreeSet<String>>, &'a str);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.borrow_mut().remove(self.1);
    }
}
