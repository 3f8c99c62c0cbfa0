//! Storage that fails on purpose, for tests of every write path: fail call number N
//! (1-based), optionally every call after it, only one kind of operation, with an I/O
//! error (outcome unknown) or a quota refusal (nothing written).

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;
use core::cell::Cell;

use super::{KeyInfo, Storage, StorageError};

/// Wraps a storage and fails call number `fail_at` (1-based; 0 never). Unlocks always
/// succeed and are not counted: a real host's lock dies with its holder, and a failed
/// unlock would only wedge the lock for the store a test reopens.
pub struct Faulty<S> {
    pub inner: S,
    pub calls: Cell<u32>,
    pub fail_at: Cell<u32>,
    forever: bool,
    only: Option<&'static str>,
    quota: bool,
}

impl<S: Storage> Faulty<S> {
    pub fn new(inner: S, fail_at: u32) -> Self {
        Self { inner, calls: Cell::new(0), fail_at: Cell::new(fail_at), forever: false, only: None, quota: false }
    }

    /// Every call after the failing one fails too.
    pub fn forever(mut self) -> Self {
        self.forever = true;
        self
    }

    /// Counts (and fails) only this operation (`"append"`, `"read"`, …).
    pub fn only(mut self, operation: &'static str) -> Self {
        self.only = Some(operation);
        self
    }

    /// Fails with a quota refusal instead of an I/O error.
    pub fn quota(mut self) -> Self {
        self.quota = true;
        self
    }

    fn tick(&self, operation: &str, key: &str) -> Result<(), StorageError> {
        if self.only.is_some_and(|only| only != operation) {
            return Ok(());
        }
        let n = self.calls.get().saturating_add(1);
        self.calls.set(n);
        let fail_at = self.fail_at.get();
        if fail_at == 0 || n < fail_at || (n > fail_at && !self.forever) {
            return Ok(());
        }
        Err(if self.quota {
            StorageError::QuotaExceeded { key: key.to_string() }
        } else {
            StorageError::Io { key: key.to_string(), message: format!("injected failure at call {n}") }
        })
    }
}

impl<S: Storage> Storage for Faulty<S> {
    async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        self.tick("list", prefix)?;
        self.inner.list(prefix).await
    }
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        self.tick("read", key)?;
        self.inner.read(key, offset, len).await
    }
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
        self.tick("append", key)?;
        self.inner.append(key, data).await
    }
    async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
        self.tick("replace", key)?;
        self.inner.replace(key, data, expected_size).await
    }
    async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
        self.tick("truncate", key)?;
        self.inner.truncate(key, len, expected_size).await
    }
    async fn remove(&self, key: &str) -> Result<(), StorageError> {
        self.tick("remove", key)?;
        self.inner.remove(key).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), StorageError> {
        self.tick("rename", from)?;
        self.inner.rename(from, to).await
    }
    async fn lock(&self, name: &str) -> Result<(), StorageError> {
        self.tick("lock", name)?;
        self.inner.lock(name).await
    }
    async fn unlock(&self, name: &str) -> Result<(), StorageError> {
        self.inner.unlock(name).await
    }
}
