//! The storages the `mneme` CLI and this crate's engines run on: a folder, or a
//! PostgreSQL database (`mneme --store postgres://…`), behind one [`Storage`].

use mneme_core::{KeyInfo, Storage, StorageError};
use mneme_postgres::PgStorage;

use crate::{FsStorage, HomeStorage};

#[derive(Debug)]
pub enum HostStorage {
    Fs(FsStorage),
    /// Another agent's session folder, read-only.
    Home(HomeStorage),
    /// Boxed: its connection settings are large, and a store holds one storage.
    Postgres(Box<PgStorage>),
}

impl From<FsStorage> for HostStorage {
    fn from(storage: FsStorage) -> Self {
        HostStorage::Fs(storage)
    }
}

impl From<HomeStorage> for HostStorage {
    fn from(storage: HomeStorage) -> Self {
        HostStorage::Home(storage)
    }
}

impl From<PgStorage> for HostStorage {
    fn from(storage: PgStorage) -> Self {
        HostStorage::Postgres(Box::new(storage))
    }
}

/// Calls the same method on whichever storage it is.
macro_rules! delegate {
    ($self:ident.$method:ident($($arg:expr),*)) => {
        match $self {
            HostStorage::Fs(storage) => storage.$method($($arg),*).await,
            HostStorage::Home(storage) => storage.$method($($arg),*).await,
            HostStorage::Postgres(storage) => storage.$method($($arg),*).await,
        }
    };
}

impl Storage for HostStorage {
    async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        delegate!(self.list(prefix))
    }
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        delegate!(self.read(key, offset, len))
    }
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
        delegate!(self.append(key, data))
    }
    async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
        delegate!(self.replace(key, data, expected_size))
    }
    async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
        delegate!(self.truncate(key, len, expected_size))
    }
    async fn remove(&self, key: &str) -> Result<(), StorageError> {
        delegate!(self.remove(key))
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), StorageError> {
        delegate!(self.rename(from, to))
    }
    async fn lock(&self, name: &str) -> Result<(), StorageError> {
        delegate!(self.lock(name))
    }
    async fn unlock(&self, name: &str) -> Result<(), StorageError> {
        delegate!(self.unlock(name))
    }
    fn parallelism(&self) -> usize {
        match self {
            HostStorage::Fs(storage) => storage.parallelism(),
            HostStorage::Home(storage) => storage.parallelism(),
            HostStorage::Postgres(storage) => storage.parallelism(),
        }
    }
    fn run_jobs(&self, jobs: Vec<mneme_core::storage::Job<'_>>) {
        match self {
            HostStorage::Fs(storage) => storage.run_jobs(jobs),
            HostStorage::Home(storage) => storage.run_jobs(jobs),
            HostStorage::Postgres(storage) => storage.run_jobs(jobs),
        }
    }
}
