//! The facade: a [`Store`] owns the storage, the size limits and the cache of open
//! sessions, and hands out the operations of `sessions/`. Each concept lives in its own
//! module; this file only ties them together.

use alloc::collections::BTreeMap;
use alloc::string::String;
use core::cell::RefCell;

use crate::error::Error;
use crate::sessions::OpenSession;
use crate::storage::Storage;

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

/// Sessions over a [`Storage`]. All methods take `&self`: a store is shared by a
/// host's handles, and the storage's locks serialise what must be serialised.
#[derive(Debug)]
pub struct Store<S> {
    pub(crate) storage: S,
    pub(crate) limits: Limits,
    pub(crate) open: RefCell<BTreeMap<String, OpenSession>>,
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

    /// Runs `work` holding the lock `name`, and releases it whatever `work` returned.
    pub(crate) async fn locked<T>(&self, name: &str, work: impl core::future::Future<Output = Result<T, Error>>) -> Result<T, Error> {
        self.storage.lock(name).await?;
        let result = work.await;
        let unlocked = self.storage.unlock(name).await;
        let value = result?;
        unlocked?;
        Ok(value)
    }
}
