//! Storage on which a test acts between the core's calls, as another program or host
//! would: `hook` runs before each call with what is called and on which key, then the
//! call goes to `inner`.

use mneme_core::{InMemoryStorage, KeyInfo, Storage, StorageError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    List,
    Read,
    Append,
    /// `checked`: the replace names the size it expects to find.
    Replace {
        checked: bool,
    },
    Truncate,
    Remove,
    Rename,
    Lock,
    Unlock,
}

pub struct Hooked<'a, H: Fn(Call, &str)> {
    pub inner: &'a InMemoryStorage,
    pub hook: H,
}

impl<H: Fn(Call, &str)> Storage for Hooked<'_, H> {
    async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        (self.hook)(Call::List, prefix);
        self.inner.list(prefix).await
    }
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        (self.hook)(Call::Read, key);
        self.inner.read(key, offset, len).await
    }
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
        (self.hook)(Call::Append, key);
        self.inner.append(key, data).await
    }
    async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
        (self.hook)(Call::Replace { checked: expected_size.is_some() }, key);
        self.inner.replace(key, data, expected_size).await
    }
    async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
        (self.hook)(Call::Truncate, key);
        self.inner.truncate(key, len, expected_size).await
    }
    async fn remove(&self, key: &str) -> Result<(), StorageError> {
        (self.hook)(Call::Remove, key);
        self.inner.remove(key).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), StorageError> {
        (self.hook)(Call::Rename, from);
        self.inner.rename(from, to).await
    }
    async fn lock(&self, name: &str) -> Result<(), StorageError> {
        (self.hook)(Call::Lock, name);
        self.inner.lock(name).await
    }
    async fn unlock(&self, name: &str) -> Result<(), StorageError> {
        (self.hook)(Call::Unlock, name);
        self.inner.unlock(name).await
    }
}
