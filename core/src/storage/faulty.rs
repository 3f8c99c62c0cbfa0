//! Storage that fails on purpose, for tests of every write path: fail call number N
//! (1-based), optionally every call after it, only one kind of operation, with an I/O
//! error (outcome unknown) or a quota refusal (nothing written) — or fail *after the
//! effect*: the write lands whole or in part and then reports an I/O error, as a real
//! disk can. Short reads and locks that do not exclude are faults of their own.

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;
use core::cell::Cell;

use super::{KeyInfo, Storage, StorageError};

/// Wraps a storage and fails call number `fail_at` (1-based; 0 never). Unlocks are not
/// counted and succeed (unless [`Faulty::failing_unlocks`]): a real host's lock dies
/// with its holder, and a failed unlock would only wedge the lock for the store a test
/// reopens.
pub struct Faulty<S> {
    pub inner: S,
    pub calls: Cell<u32>,
    pub fail_at: Cell<u32>,
    forever: bool,
    only: Option<&'static str>,
    quota: bool,
    landed: Option<Landed>,
    short_reads: bool,
    lost_locks: bool,
    failing_unlocks: bool,
}

/// What of a failing write reaches storage before the error is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Landed {
    Whole,
    /// An append's first `n` bytes.
    Partial(usize),
}

impl<S: Storage> Faulty<S> {
    pub fn new(inner: S, fail_at: u32) -> Self {
        Self {
            inner,
            calls: Cell::new(0),
            fail_at: Cell::new(fail_at),
            forever: false,
            only: None,
            quota: false,
            landed: None,
            short_reads: false,
            lost_locks: false,
            failing_unlocks: false,
        }
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

    /// The failing write lands whole, then reports an I/O error.
    pub fn landed(mut self) -> Self {
        self.landed = Some(Landed::Whole);
        self
    }

    /// A failing append stores its first `n` bytes, then reports an I/O error (other
    /// writes land whole, as with [`Faulty::landed`]).
    pub fn partial(mut self, n: usize) -> Self {
        self.landed = Some(Landed::Partial(n));
        self
    }

    /// Every read returns at most half of what it would (at least one byte), as a read
    /// interrupted by a signal does; never an error.
    pub fn short_reads(mut self) -> Self {
        self.short_reads = true;
        self
    }

    /// Locks are granted without being taken: another store takes the same one, as
    /// when a lock file is deleted under its holder or a network filesystem drops it.
    pub fn lost_locks(mut self) -> Self {
        self.lost_locks = true;
        self
    }

    /// Every unlock gives the lock back, then reports an I/O error: PostgreSQL's
    /// connection lost after a commit, its lock dropped by the server with it.
    pub fn failing_unlocks(mut self) -> Self {
        self.failing_unlocks = true;
        self
    }

    /// Runs the write, then fails if this is the failing call and the fault lands
    /// before failing; else fails before the effect as [`Faulty::tick`] says.
    async fn write<T>(
        &self,
        operation: &'static str,
        key: &str,
        data: Option<&[u8]>,
        effect: impl AsyncFnOnce(&[u8]) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let failure = self.tick(operation, key);
        let (Err(error), Some(landed)) = (&failure, self.landed) else {
            failure?;
            return effect(data.unwrap_or_default()).await;
        };
        let data = data.unwrap_or_default();
        let part = match landed {
            Landed::Partial(n) if operation == "append" => &data[..n.min(data.len())],
            _ => data,
        };
        if !(operation == "append" && part.is_empty()) {
            let _ = effect(part).await;
        }
        Err(error.clone())
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
        let mut bytes = self.inner.read(key, offset, len).await?;
        if self.short_reads && bytes.len() > 1 {
            bytes.truncate(bytes.len() / 2);
        }
        Ok(bytes)
    }
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
        self.write("append", key, Some(data), async |part| self.inner.append(key, part).await).await
    }
    async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
        self.write("replace", key, Some(data), async |data| self.inner.replace(key, data, expected_size).await).await
    }
    async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
        self.write("truncate", key, None, async |_| self.inner.truncate(key, len, expected_size).await).await
    }
    async fn remove(&self, key: &str) -> Result<(), StorageError> {
        self.write("remove", key, None, async |_| self.inner.remove(key).await).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), StorageError> {
        self.write("rename", from, None, async |_| self.inner.rename(from, to).await).await
    }
    async fn lock(&self, name: &str) -> Result<(), StorageError> {
        self.tick("lock", name)?;
        if self.lost_locks {
            return Ok(());
        }
        self.inner.lock(name).await
    }
    async fn unlock(&self, name: &str) -> Result<(), StorageError> {
        if self.lost_locks {
            return Ok(());
        }
        self.inner.unlock(name).await?;
        if self.failing_unlocks {
            return Err(StorageError::Io { key: name.to_string(), message: "injected fault after the unlock".into() });
        }
        Ok(())
    }
    fn parallelism(&self) -> usize {
        self.inner.parallelism()
    }
    fn run_jobs(&self, jobs: Vec<super::Job<'_>>) {
        self.inner.run_jobs(jobs);
    }
}
