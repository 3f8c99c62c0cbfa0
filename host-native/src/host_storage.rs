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
    /// A read-only home with the index (`index/`: the session rows and the search
    /// index) kept in a writable folder of Mneme's own, so the next command answers
    /// from it instead of reading every transcript again. Nothing is written into the
    /// home.
    Cached(Box<HostStorage>, FsStorage),
    /// A storage whose transcript listings and reads feed the process's progress line
    /// ([`crate::progress`]): the CLI's, so a long first read of a home is not silent.
    Metered(Box<HostStorage>),
}

/// The keys a cached home keeps in its cache: the index's.
const CACHED: &str = "index/";

impl HostStorage {
    /// `home` with its index kept in the folder `cache`.
    pub fn cached(home: impl Into<HostStorage>, cache: impl Into<std::path::PathBuf>) -> Self {
        HostStorage::Cached(Box::new(home.into()), FsStorage::new(cache))
    }
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

/// Calls the same method on whichever storage it is; a cached home's on its cache when
/// `$key` is the index's.
macro_rules! delegate {
    ($self:ident.$method:ident($key:expr $(, $arg:expr)*)) => {
        match $self {
            HostStorage::Fs(storage) => storage.$method($key $(, $arg)*).await,
            HostStorage::Home(storage) => storage.$method($key $(, $arg)*).await,
            HostStorage::Postgres(storage) => storage.$method($key $(, $arg)*).await,
            HostStorage::Cached(_, cache) if $key.starts_with(CACHED) => cache.$method($key $(, $arg)*).await,
            HostStorage::Cached(home, _) => Box::pin(home.$method($key $(, $arg)*)).await,
            HostStorage::Metered(storage) => Box::pin(storage.$method($key $(, $arg)*)).await,
        }
    };
}

impl Storage for HostStorage {
    async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        if let HostStorage::Cached(home, cache) = self
            && CACHED.starts_with(prefix)
            && prefix != CACHED
        {
            // A prefix shorter than the index's ("", "i") spans both.
            let mut both = Box::pin(home.list(prefix)).await?;
            // An index the home has of its own is not the one read: the cache's is.
            both.retain(|info| !info.key.starts_with(CACHED));
            both.extend(cache.list(prefix).await?);
            both.sort_by(|a, b| a.key.cmp(&b.key));
            return Ok(both);
        }
        if let HostStorage::Metered(storage) = self {
            let listed = Box::pin(storage.list(prefix)).await?;
            crate::progress::listed(&listed);
            return Ok(listed);
        }
        delegate!(self.list(prefix))
    }
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        if let HostStorage::Metered(storage) = self {
            let data = Box::pin(storage.read(key, offset, len)).await?;
            crate::progress::read(key, data.len());
            return Ok(data);
        }
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
        if let HostStorage::Cached(..) = self
            && from.starts_with(CACHED) != to.starts_with(CACHED)
        {
            // Between the home and the cache: the home takes no write.
            return Err(StorageError::ReadOnly { key: to.to_owned() });
        }
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
            HostStorage::Cached(home, _) => home.parallelism(),
            HostStorage::Metered(storage) => storage.parallelism(),
        }
    }
    fn run_jobs(&self, jobs: Vec<mneme_core::storage::Job<'_>>) {
        match self {
            HostStorage::Fs(storage) => storage.run_jobs(jobs),
            HostStorage::Home(storage) => storage.run_jobs(jobs),
            HostStorage::Postgres(storage) => storage.run_jobs(jobs),
            HostStorage::Cached(home, _) => home.run_jobs(jobs),
            HostStorage::Metered(storage) => storage.run_jobs(jobs),
        }
    }
}
