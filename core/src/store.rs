//! The facade: a [`Store`] owns the storage, the size limits and the cache of open
//! sessions, and hands out the operations of `sessions/`. Each concept lives in its own
//! module; this file only ties them together.

use alloc::collections::BTreeMap;
use alloc::rc::Rc;
use alloc::string::String;
use core::cell::{Cell, RefCell};

use crate::error::Error;
use crate::memory::embed::{Embeddings, EmbeddingsInfo};
use crate::redact::Redaction;
use crate::sessions::OpenSession;
use crate::storage::{Storage, StorageError};
use crate::support::hash::FastMap;

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

/// A size as people write one: bytes (`123`), or a number with `K`, `M` or `G`, each
/// binary and with an optional `B` or `iB` (`64KiB`, `50MB`, `2G`), in any case. Every
/// host's options read sizes by this one rule.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 =
        number.parse().map_err(|_| alloc::format!("`{text}` is not a size: write a number of bytes, optionally with KiB, MiB or GiB"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        unit => return Err(alloc::format!("`{text}`: unknown size unit `{unit}`; use KiB, MiB or GiB")),
    };
    number.checked_mul(1 << shift).ok_or_else(|| alloc::format!("`{text}` is too large a size"))
}

/// A size limit ([`Limits`]' fields) as people write one: [`parse_size`], above zero.
pub fn parse_limit(text: &str) -> Result<u64, String> {
    Some(parse_size(text)?).filter(|&n| n > 0).ok_or_else(|| alloc::format!("`{text}`: a limit must be above zero"))
}

/// Sessions over a [`Storage`]. All methods take `&self`: a store is shared by a
/// host's handles, and the storage's locks serialise what must be serialised.
#[derive(Debug)]
pub struct Store<S> {
    pub(crate) storage: S,
    pub(crate) limits: Limits,
    /// A hash map: a held session's state is taken out and put back by every append,
    /// and an ordered map freed and allocated its one node again each time.
    pub(crate) open: RefCell<FastMap<String, OpenSession>>,
    /// The states of sub-agents' transcripts this store wrote, by key.
    pub(crate) agents: RefCell<FastMap<String, OpenSession>>,
    /// Session locks this store holds between calls (see [`Store::hold`]), and whether
    /// an operation of this store is using each right now (a mark beside the name: a
    /// set of names in use allocated a string per operation).
    pub(crate) held: RefCell<FastMap<String, Hold>>,
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
        let before = self.held.borrow().get(&name).copied();
        if before.is_some_and(Hold::is_held) {
            return Ok(());
        }
        self.storage.lock(&name).await?;
        // An operation still running from before a release keeps the session to itself.
        let taken = if before == Some(Hold::Released) { Hold::InUse } else { Hold::Idle };
        self.held.borrow_mut().insert(name.clone(), taken);
        // Read what the session holds now, under the lock, so the next write starts warm.
        if let Err(error) = self.refresh_held(id, &parts.project).await {
            self.let_go(&name);
            let _ = self.storage.unlock(&name).await;
            return Err(error);
        }
        Ok(())
    }

    /// Gives back the lock [`Store::hold`] took; a session not held is left alone.
    pub async fn release(&self, id: &str) -> Result<(), Error> {
        let held: Option<String> = self
            .held
            .borrow()
            .iter()
            .find(|(name, hold)| hold.is_held() && crate::keys::parse_session_key(name).is_some_and(|p| p.id == id))
            .map(|(name, _)| name.clone());
        if let Some(name) = held {
            self.let_go(&name);
            self.storage.unlock(&name).await?;
        }
        Ok(())
    }

    /// Gives back every lock this store holds (hosts call it when a store is closed).
    pub async fn release_all(&self) -> Result<(), Error> {
        let names: alloc::vec::Vec<String> =
            self.held.borrow().iter().filter(|(_, hold)| hold.is_held()).map(|(name, _)| name.clone()).collect();
        for name in &names {
            self.let_go(name);
        }
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
        // Taken for this operation if idle; what it was before, either way.
        let hold = self.held.borrow_mut().get_mut(name).map(|hold| {
            let before = *hold;
            if before == Hold::Idle {
                *hold = Hold::InUse;
            }
            before
        });
        match hold {
            // Holding stands for the lock between calls, not within them: a second
            // operation of this store while one is in flight (on an asynchronous host)
            // is refused as the lock would refuse it.
            Some(Hold::InUse) => return Err(StorageError::Locked { key: name.into() }.into()),
            Some(Hold::Idle) => {
                let _busy = Busy(&self.held, name);
                return work.await;
            }
            Some(Hold::Released) | None => {}
        }
        self.storage.lock(name).await?;
        let result = work.await;
        // Work that landed is reported as landed, whatever the unlock after it says (a
        // connection lost after its commit, whose lock the server dropped with it): a
        // caller told it failed would write it again.
        let _ = self.storage.unlock(name).await;
        result
    }

    /// Forgets held lock `name` (the caller gives it back to the storage); one that
    /// an operation is using is marked released until that operation ends.
    fn let_go(&self, name: &str) {
        let mut held = self.held.borrow_mut();
        match held.get_mut(name) {
            Some(hold @ Hold::InUse) => *hold = Hold::Released,
            _ => {
                held.remove(name);
            }
        }
    }
}

/// What the store knows of a session lock it took with [`Store::hold`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Held; no operation is using it.
    Idle,
    /// Held, and an operation of this store is using it.
    InUse,
    /// Given back while an operation was still using it: that operation keeps the
    /// session to itself until it ends, even if the session is held again meanwhile.
    Released,
}

impl Hold {
    pub(crate) fn is_held(self) -> bool {
        self != Hold::Released
    }
}

/// Marks a held lock in use until dropped (also when the operation's future is).
struct Busy<'a>(&'a RefCell<FastMap<String, Hold>>, &'a str);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        let mut held = self.0.borrow_mut();
        match held.get_mut(self.1) {
            Some(hold @ Hold::InUse) => *hold = Hold::Idle,
            Some(Hold::Released) => {
                held.remove(self.1);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{InMemoryStorage, KeyInfo};
    use crate::{NewEntry, Role, block_on};
    use alloc::vec::Vec;
    use core::pin::pin;
    use core::task::{Context, Poll, Waker};

    #[test]
    fn sizes_are_read_with_binary_units_in_any_spelling() {
        for (text, bytes) in
            [("123", 123), ("0", 0), ("64KiB", 64 << 10), ("50MB", 50 << 20), ("2g", 2 << 30), (" 7 mib ", 7 << 20), ("9b", 9)]
        {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for text in ["", "MiB", "-1", "1.5G", "3TiB", "18446744073709551615K"] {
            assert!(parse_size(text).is_err(), "{text}");
        }
    }

    /// Storage whose appends wait once before they complete, as an asynchronous host's do.
    struct Slow(InMemoryStorage);

    /// Pending on its first poll.
    struct YieldOnce(bool);

    impl core::future::Future for YieldOnce {
        type Output = ();
        fn poll(mut self: core::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
            if core::mem::replace(&mut self.0, true) { Poll::Ready(()) } else { Poll::Pending }
        }
    }

    impl Storage for Slow {
        async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
            self.0.list(prefix).await
        }
        async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
            self.0.read(key, offset, len).await
        }
        async fn append(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
            YieldOnce(false).await;
            self.0.append(key, data).await
        }
        async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
            self.0.replace(key, data, expected_size).await
        }
        async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
            self.0.truncate(key, len, expected_size).await
        }
        async fn remove(&self, key: &str) -> Result<(), StorageError> {
            self.0.remove(key).await
        }
        async fn rename(&self, from: &str, to: &str) -> Result<(), StorageError> {
            self.0.rename(from, to).await
        }
        async fn lock(&self, name: &str) -> Result<(), StorageError> {
            self.0.lock(name).await
        }
        async fn unlock(&self, name: &str) -> Result<(), StorageError> {
            self.0.unlock(name).await
        }
    }

    /// Run to its end, polled as often as it asks.
    fn finish<F: core::future::Future>(future: F) -> F::Output {
        let mut future = pin!(future);
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                return output;
            }
        }
    }

    /// A held session takes one operation at a time: a second while the first is in
    /// flight is refused as the lock refuses it, and once the first is done (or
    /// dropped half way) the next goes ahead.
    #[test]
    fn a_held_session_takes_one_operation_at_a_time() {
        let store = Store::new(Slow(InMemoryStorage::new()));
        let entry = |uuid: &str| NewEntry { uuid: uuid.into(), now_ms: 1, role: Role::User, text: "hi".into(), cwd: "/p".into() };
        finish(store.append("s", entry("a"))).unwrap();
        block_on(store.hold("s")).unwrap();
        let mut first = alloc::boxed::Box::pin(store.append("s", entry("b")));
        assert!(first.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
        let second = finish(store.append("s", entry("c")));
        assert!(matches!(second, Err(Error::Storage(StorageError::Locked { .. }))), "{second:?}");
        assert_eq!(finish(first).unwrap().uuid.as_deref(), Some("b"));
        assert_eq!(finish(store.append("s", entry("d"))).unwrap().parent_uuid.as_deref(), Some("b"));
        // A dropped operation gives the session back too.
        let mut dropped = alloc::boxed::Box::pin(store.append("s", entry("e")));
        assert!(dropped.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
        drop(dropped);
        assert!(finish(store.append("s", entry("f"))).is_ok());
        // Released and held again while one is in flight, the session is still that
        // operation's until it ends.
        let mut running = alloc::boxed::Box::pin(store.append("s", entry("g")));
        assert!(running.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
        block_on(store.release("s")).unwrap();
        block_on(store.hold("s")).unwrap();
        let refused = finish(store.append("s", entry("h")));
        assert!(matches!(refused, Err(Error::Storage(StorageError::Locked { .. }))), "{refused:?}");
        assert!(finish(running).is_ok());
        assert_eq!(finish(store.append("s", entry("i"))).unwrap().parent_uuid.as_deref(), Some("g"));
        block_on(store.release_all()).unwrap();
        assert!(store.held.borrow().is_empty());
    }
}
