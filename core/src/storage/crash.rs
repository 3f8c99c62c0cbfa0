//! Storage that loses power, for crash tests of every write path (redb's crash backend,
//! SQLite's crash VFS): at storage call N the machine goes down, and what survives is
//! the *durable image* a power cut leaves.
//!
//! The wrapped storage is both images. The contract makes every call durable when it
//! returns (an append is synced before it is acknowledged, a replace is a synced
//! temp file renamed), so at any moment the durable image is the live one except for the
//! call in flight. That call lands as [`Cut`] says — not at all, whole (it landed and the
//! caller never heard), torn after any byte, or as zeros where the data should be (ext4
//! after a crash: the file grew, its blocks were never written) — and it and every later
//! call fail: the process is gone. Reopening a store on the wrapped storage is the
//! restart.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use super::{KeyInfo, Storage, StorageError};

/// How the call in flight at the power cut lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Nothing of it reached the disk.
    Before,
    /// All of it did; only the acknowledgement was lost.
    After,
    /// An append: its first `n` bytes reached the disk.
    Torn(usize),
    /// An append: the file grew by `n` bytes that read as zeros.
    Zeroed(usize),
}

/// One storage call, as the crash tests enumerate them: what it was, on which key, and
/// how many bytes an append carried (its tear points).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub operation: &'static str,
    pub key: String,
    pub bytes: usize,
}

impl Call {
    /// Every way a power cut during this call can leave it: an append at every byte and
    /// zero-filled, anything else before or after (each is atomic by the contract).
    pub fn cuts(&self) -> Vec<Cut> {
        match self.operation {
            "append" => {
                let mut cuts = vec![Cut::Before, Cut::After, Cut::Zeroed(self.bytes)];
                cuts.extend((1..self.bytes).map(Cut::Torn));
                cuts
            }
            "replace" | "truncate" | "remove" | "rename" => vec![Cut::Before, Cut::After],
            // Reads, listings and locks change nothing on disk.
            _ => vec![Cut::Before],
        }
    }
}

/// Wraps a storage; call number `crash_at` (1-based; 0 never) is cut by the power
/// failure, and the storage is dead from then on. Without a crash it records every
/// call, so a test can enumerate the crash points of a workload.
pub struct Crashing<S> {
    pub inner: S,
    crash_at: u32,
    cut: Cut,
    calls: Cell<u32>,
    dead: Cell<bool>,
    log: RefCell<Vec<Call>>,
}

impl<S: Storage> Crashing<S> {
    pub fn new(inner: S, crash_at: u32, cut: Cut) -> Self {
        Self { inner, crash_at, cut, calls: Cell::new(0), dead: Cell::new(false), log: RefCell::default() }
    }

    /// Storage that never crashes, recording its calls.
    pub fn recording(inner: S) -> Self {
        Self::new(inner, 0, Cut::Before)
    }

    /// The calls made so far (unlocks are not counted: a lock dies with its process).
    pub fn calls(&self) -> Vec<Call> {
        self.log.borrow().clone()
    }

    pub fn crashed(&self) -> bool {
        self.dead.get()
    }

    /// Counts the call; `Err` if the machine is down, `Ok(Some(cut))` if this call is
    /// the one the power cut interrupts.
    fn tick(&self, operation: &'static str, key: &str, bytes: usize) -> Result<Option<Cut>, StorageError> {
        if self.dead.get() {
            return Err(gone(key));
        }
        let n = self.calls.get().saturating_add(1);
        self.calls.set(n);
        self.log.borrow_mut().push(Call { operation, key: key.to_string(), bytes });
        if n == self.crash_at {
            self.dead.set(true);
            return Ok(Some(self.cut));
        }
        Ok(None)
    }

    /// Runs `effect` unless the cut says nothing landed; an interrupted call always fails.
    async fn atomic<T>(
        &self,
        operation: &'static str,
        key: &str,
        effect: impl AsyncFnOnce() -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        match self.tick(operation, key, 0)? {
            None => effect().await,
            Some(Cut::Before) => Err(gone(key)),
            Some(_) => {
                let _ = effect().await;
                Err(gone(key))
            }
        }
    }
}

fn gone(key: &str) -> StorageError {
    StorageError::Io { key: key.to_string(), message: "power cut".to_string() }
}

impl<S: Storage> Storage for Crashing<S> {
    async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        self.atomic("list", prefix, async || self.inner.list(prefix).await).await
    }
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        self.atomic("read", key, async || self.inner.read(key, offset, len).await).await
    }
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
        match self.tick("append", key, data.len())? {
            None => self.inner.append(key, data).await,
            Some(cut) => {
                let landed = match cut {
                    Cut::Before => Vec::new(),
                    Cut::After => data.to_vec(),
                    Cut::Torn(n) => data[..n.min(data.len())].to_vec(),
                    Cut::Zeroed(n) => vec![0; n],
                };
                if !landed.is_empty() {
                    let _ = self.inner.append(key, &landed).await;
                }
                Err(gone(key))
            }
        }
    }
    async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
        self.atomic("replace", key, async || self.inner.replace(key, data, expected_size).await).await
    }
    async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
        self.atomic("truncate", key, async || self.inner.truncate(key, len, expected_size).await).await
    }
    async fn remove(&self, key: &str) -> Result<(), StorageError> {
        self.atomic("remove", key, async || self.inner.remove(key).await).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), StorageError> {
        self.atomic("rename", from, async || self.inner.rename(from, to).await).await
    }
    async fn lock(&self, name: &str) -> Result<(), StorageError> {
        self.atomic("lock", name, async || self.inner.lock(name).await).await
    }
    async fn unlock(&self, name: &str) -> Result<(), StorageError> {
        // The lock dies with the process either way.
        self.inner.unlock(name).await
    }
    fn parallelism(&self) -> usize {
        self.inner.parallelism()
    }
    fn run_jobs(&self, jobs: Vec<super::Job<'_>>) {
        self.inner.run_jobs(jobs);
    }
}
