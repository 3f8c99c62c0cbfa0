//! The facade: a [`Store`] owns the storage and every area's state, and hands out the
//! areas as views that mirror the WIT's interfaces: [`Store::sessions`],
//! [`Store::compaction`], [`Store::gates`], [`Store::index`] and [`Store::memory`].
//! Each area owns its state; this file only ties them together.

use core::cell::RefCell;

use crate::base::{Base, Limits};
use crate::catalog::{Catalog, IndexState};
use crate::error::Error;
use crate::index::Index;
use crate::memory::{Memories, MemoryState};
use crate::redact::Redaction;
use crate::sessions::{Compaction, Gates, Sessions, SessionsState};
use crate::storage::Storage;

/// Sessions and memories over a [`Storage`]. All methods take `&self`: a store is
/// shared by a host's handles, and the storage's locks serialise what must be
/// serialised.
#[derive(Debug)]
pub struct Store<S> {
    base: Base<S>,
    /// The catalog (keys and session rows) as last read (see `catalog/log.rs`).
    catalog: RefCell<Option<IndexState>>,
    sessions: SessionsState,
    memory: MemoryState,
}

impl<S: Storage> Store<S> {
    pub fn new(storage: S) -> Self {
        Self::with_limits(storage, Limits::default())
    }

    pub fn with_limits(storage: S, limits: Limits) -> Self {
        Self {
            base: Base::new(storage, limits),
            catalog: RefCell::default(),
            sessions: SessionsState::default(),
            memory: MemoryState::default(),
        }
    }

    pub fn storage(&self) -> &S {
        &self.base.storage
    }

    pub fn limits(&self) -> Limits {
        self.base.limits
    }

    /// Which secrets are removed before anything is written (every kind by default;
    /// [`Redaction::off`] writes lines exactly as given). The WIT's `set-redaction`,
    /// which names the kinds, is [`Sessions::set_redaction`].
    pub fn set_redaction(&self, redaction: Redaction) {
        self.base.set_redaction(redaction);
    }

    /// Gives back every lock this store holds (hosts call it when a store is closed).
    pub async fn release_all(&self) -> Result<(), Error> {
        self.base.release_all().await
    }

    /// Transcripts: appending, reading, listing, searching, keeping.
    pub fn sessions(&self) -> Sessions<'_, S> {
        Sessions { base: &self.base, state: &self.sessions, catalog: Catalog { base: &self.base, state: &self.catalog } }
    }

    /// Compaction's store side: plans, summaries, boundaries.
    pub fn compaction(&self) -> Compaction<'_, S> {
        self.sessions().compaction()
    }

    /// When to flush memory, extract, reset or consolidate, from what a session holds.
    pub fn gates(&self) -> Gates<'_, S> {
        self.sessions().gates()
    }

    /// Session keys: routing, labels, rollover, crab's sessions.
    pub fn index(&self) -> Index<'_, S> {
        Index { sessions: self.sessions() }
    }

    /// Long-term memory: memory files, MEMORY.md, recall, extraction, consolidation,
    /// instruction files.
    pub fn memory(&self) -> Memories<'_, S> {
        Memories { base: &self.base, state: &self.memory, sessions: self.sessions() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{InMemoryStorage, KeyInfo, StorageError};
    use crate::{NewEntry, Role, block_on};
    use alloc::vec::Vec;
    use core::pin::pin;
    use core::task::{Context, Poll, Waker};

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
        let sessions = store.sessions();
        let entry = |uuid: &str| NewEntry { uuid: uuid.into(), now_ms: 1, role: Role::User, text: "hi".into(), cwd: "/p".into() };
        finish(sessions.append("s", entry("a"))).unwrap();
        block_on(sessions.hold("s")).unwrap();
        let mut first = alloc::boxed::Box::pin(sessions.append("s", entry("b")));
        assert!(first.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
        let second = finish(sessions.append("s", entry("c")));
        assert!(matches!(second, Err(Error::Storage(StorageError::Locked { .. }))), "{second:?}");
        assert_eq!(finish(first).unwrap().uuid.as_deref(), Some("b"));
        assert_eq!(finish(sessions.append("s", entry("d"))).unwrap().parent_uuid.as_deref(), Some("b"));
        // A dropped operation gives the session back too.
        let mut dropped = alloc::boxed::Box::pin(sessions.append("s", entry("e")));
        assert!(dropped.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
        drop(dropped);
        assert!(finish(sessions.append("s", entry("f"))).is_ok());
        // Released and held again while one is in flight, the session is still that
        // operation's until it ends.
        let mut running = alloc::boxed::Box::pin(sessions.append("s", entry("g")));
        assert!(running.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
        block_on(sessions.release("s")).unwrap();
        block_on(sessions.hold("s")).unwrap();
        let refused = finish(sessions.append("s", entry("h")));
        assert!(matches!(refused, Err(Error::Storage(StorageError::Locked { .. }))), "{refused:?}");
        assert!(finish(running).is_ok());
        assert_eq!(finish(sessions.append("s", entry("i"))).unwrap().parent_uuid.as_deref(), Some("g"));
        block_on(store.release_all()).unwrap();
        assert!(store.base.held_lock(|_| true).is_none());
    }
}
