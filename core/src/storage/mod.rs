//! The one thing a host must provide: a flat, byte-level key space with the contract
//! written on it. `in_memory` is the reference backend, `faulty` fails on purpose and
//! `crash` loses power for tests, and `contract` is the suite every backend runs.

use alloc::string::String;
use alloc::vec::Vec;

pub mod contract;
pub mod crash;
pub mod faulty;
mod in_memory;

pub use crate::error::StorageError;
pub use in_memory::InMemoryStorage;

/// One stored object, as returned by [`Storage::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyInfo {
    pub key: String,
    pub size: u64,
}

/// What a host must provide: a flat, byte-level key space.
///
/// Keys are logical paths such as `projects/<project>/<session>.jsonl`: segments
/// separated by `/`, never starting with `/`, never containing `.` or `..` segments.
/// Each host maps them under its own root and must refuse any key that would escape
/// it with [`StorageError::InvalidKey`].
///
/// Every method completes or fails as a whole: after an error the object is as it was
/// before the call, except where a method says otherwise. Only [`StorageError::Io`]
/// leaves the outcome unknown (a write that landed, then a failure): every other error
/// is a refusal before anything was written ([`StorageError::wrote_nothing`]).
#[allow(async_fn_in_trait)]
pub trait Storage {
    /// Lists every object whose key starts with `prefix` (a plain string prefix, not
    /// a glob), with its current size in bytes, sorted by key. An empty prefix lists
    /// everything. A prefix that matches nothing gives an empty list, not an error.
    async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError>;

    /// Reads up to `len` bytes starting at byte `offset` (to the end when `len` is
    /// `None`). Reading at or past the end gives an empty vector. A missing object is
    /// [`StorageError::NotFound`].
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError>;

    /// Appends `data` to the object, creating it (and any parent folders) if missing,
    /// and returns the object's new length. Atomic per call: on success all of `data`
    /// is stored contiguously at the old end, on failure none of it is visible to a
    /// later [`Storage::read`]. Durable when it returns, as far as the host can make it.
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, StorageError>;

    /// Replaces the whole object with `data`, creating it if missing. Atomic: a reader
    /// sees either the old or the new content, never a mix (write-then-rename on a
    /// filesystem). With `expected_size`, only an existing object of exactly that size
    /// is replaced; otherwise [`StorageError::Changed`] (or [`StorageError::NotFound`])
    /// and nothing is written: a rewrite never drops what another program (one that
    /// takes no lock Mneme sees, like Claude Code) appended since it was read.
    async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError>;

    /// Cuts the object down to its first `len` bytes (a no-op when it is not longer),
    /// if it is `expected_size` bytes long now; otherwise [`StorageError::Changed`] and
    /// nothing is cut. Used to take a torn last line out of a transcript after saving
    /// it elsewhere, without cutting off a line another program appended meanwhile.
    async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError>;

    /// Removes the object. Removing a missing object is [`StorageError::NotFound`].
    async fn remove(&self, key: &str) -> Result<(), StorageError>;

    /// Renames `from` to `to`, atomically. Fails with [`StorageError::AlreadyExists`]
    /// rather than overwrite an existing `to`.
    async fn rename(&self, from: &str, to: &str) -> Result<(), StorageError>;

    /// Takes the exclusive advisory lock named `name` (by convention the key of the
    /// session it guards), waiting for another holder as long as the host sees fit,
    /// then failing with [`StorageError::Locked`]. Locks exclude other processes and
    /// other `Storage` instances; they are not re-entrant.
    async fn lock(&self, name: &str) -> Result<(), StorageError>;

    /// Releases a lock taken with [`Storage::lock`]. Releasing a lock that is not held
    /// is a no-op.
    async fn unlock(&self, name: &str) -> Result<(), StorageError>;

    /// How many [`Job`]s [`Storage::run_jobs`] runs at once: the cores a host with
    /// threads may use. One by default. (Not I/O, but what the host has to give: the
    /// core reads a long session's lines in that many pieces.)
    fn parallelism(&self) -> usize {
        1
    }

    /// Runs every job to completion before returning, at once where the host can; one
    /// after another by default. A job never panics (the core does not).
    fn run_jobs(&self, jobs: Vec<Job<'_>>) {
        for job in jobs {
            job();
        }
    }
}

/// A piece of the core's own CPU work, independent of the others, for
/// [`Storage::run_jobs`].
pub type Job<'a> = alloc::boxed::Box<dyn FnOnce() + Send + 'a>;

/// A shared reference to storage is storage, and so is a shared pointer: several
/// stores (or a store and a test) can work on one backend.
macro_rules! forward_storage {
    ($($impl:tt)*) => {
        $($impl)* {
            async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
                (**self).list(prefix).await
            }
            async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
                (**self).read(key, offset, len).await
            }
            async fn append(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
                (**self).append(key, data).await
            }
            async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
                (**self).replace(key, data, expected_size).await
            }
            async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
                (**self).truncate(key, len, expected_size).await
            }
            async fn remove(&self, key: &str) -> Result<(), StorageError> {
                (**self).remove(key).await
            }
            async fn rename(&self, from: &str, to: &str) -> Result<(), StorageError> {
                (**self).rename(from, to).await
            }
            async fn lock(&self, name: &str) -> Result<(), StorageError> {
                (**self).lock(name).await
            }
            async fn unlock(&self, name: &str) -> Result<(), StorageError> {
                (**self).unlock(name).await
            }
            fn parallelism(&self) -> usize {
                (**self).parallelism()
            }
            fn run_jobs(&self, jobs: Vec<Job<'_>>) {
                (**self).run_jobs(jobs)
            }
        }
    };
}

/// [`Storage`] for a host type whose operations are synchronous methods named after
/// them, `list_sync`, `read_sync`, … (a folder, a database connection): each async
/// method returns its twin's result. For std hosts (it names `Vec` from their prelude).
/// `storage_from_sync!(Type, threads)` also runs the core's jobs on the machine's cores.
#[macro_export]
macro_rules! storage_from_sync {
    ($type:ty, threads) => {
        $crate::storage_from_sync!($type, {
            fn parallelism(&self) -> usize {
                static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
                *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
            }
            fn run_jobs(&self, jobs: Vec<$crate::storage::Job<'_>>) {
                // Threads take jobs from one queue and so does this one: a thread the
                // system refuses leaves its share here, not undone.
                let helpers = jobs.len().saturating_sub(1);
                let queue = std::sync::Mutex::new(jobs);
                let work = || loop {
                    // The lock is let go before the job runs.
                    let job = queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop();
                    let Some(job) = job else { break };
                    job();
                };
                std::thread::scope(|scope| {
                    for _ in 0..helpers {
                        if std::thread::Builder::new().spawn_scoped(scope, &work).is_err() {
                            break;
                        }
                    }
                    work();
                });
            }
        });
    };
    ($type:ty) => {
        $crate::storage_from_sync!($type, {});
    };
    ($type:ty, { $($more:tt)* }) => {
        impl $crate::Storage for $type {
            async fn list(&self, prefix: &str) -> Result<Vec<$crate::KeyInfo>, $crate::StorageError> {
                self.list_sync(prefix)
            }
            async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, $crate::StorageError> {
                self.read_sync(key, offset, len)
            }
            async fn append(&self, key: &str, data: &[u8]) -> Result<u64, $crate::StorageError> {
                self.append_sync(key, data)
            }
            async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), $crate::StorageError> {
                self.replace_sync(key, data, expected_size)
            }
            async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), $crate::StorageError> {
                self.truncate_sync(key, len, expected_size)
            }
            async fn remove(&self, key: &str) -> Result<(), $crate::StorageError> {
                self.remove_sync(key)
            }
            async fn rename(&self, from: &str, to: &str) -> Result<(), $crate::StorageError> {
                self.rename_sync(from, to)
            }
            async fn lock(&self, name: &str) -> Result<(), $crate::StorageError> {
                self.lock_sync(name)
            }
            async fn unlock(&self, name: &str) -> Result<(), $crate::StorageError> {
                self.unlock_sync(name)
            }
            $($more)*
        }
    };
}

forward_storage!(impl<T: Storage + ?Sized> Storage for &T);
forward_storage!(impl<T: Storage + ?Sized> Storage for alloc::rc::Rc<T>);
