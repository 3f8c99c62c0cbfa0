use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::RefCell;

use super::{KeyInfo, Storage, StorageError};
use crate::keys::check_key;

/// [`Storage`] in memory: for tests, ephemeral stores and as the reference the
/// conformance suite holds every other host to.
///
/// Locks cannot wait in a single thread, so taking a held lock fails at once with
/// [`StorageError::Locked`].
#[derive(Debug, Default)]
pub struct InMemoryStorage {
    objects: RefCell<BTreeMap<String, Vec<u8>>>,
    locks: RefCell<BTreeSet<String>>,
}

impl InMemoryStorage {
    pub fn new() -> Self {
        Self::default()
    }
}

fn not_found(key: &str) -> StorageError {
    StorageError::NotFound { key: key.to_string() }
}

fn changed(key: &str) -> StorageError {
    StorageError::Changed { key: key.to_string() }
}

impl Storage for InMemoryStorage {
    async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        let objects = self.objects.borrow();
        Ok(objects
            .range::<str, _>((core::ops::Bound::Included(prefix), core::ops::Bound::Unbounded))
            .take_while(|(key, _)| key.starts_with(prefix))
            .map(|(key, data)| KeyInfo { key: key.clone(), size: data.len() as u64 })
            .collect())
    }

    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        check_key(key)?;
        let objects = self.objects.borrow();
        let data = objects.get(key).ok_or_else(|| not_found(key))?;
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(data.len());
        let end = match len {
            Some(len) => start.saturating_add(usize::try_from(len).unwrap_or(usize::MAX)).min(data.len()),
            None => data.len(),
        };
        Ok(data[start..end].to_vec())
    }

    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
        check_key(key)?;
        let mut objects = self.objects.borrow_mut();
        let object = objects.entry(key.to_string()).or_default();
        object.extend_from_slice(data);
        Ok(object.len() as u64)
    }

    async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
        check_key(key)?;
        let mut objects = self.objects.borrow_mut();
        if let Some(expected) = expected_size {
            let object = objects.get(key).ok_or_else(|| not_found(key))?;
            if object.len() as u64 != expected {
                return Err(changed(key));
            }
        }
        objects.insert(key.to_string(), data.to_vec());
        Ok(())
    }

    async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
        check_key(key)?;
        let mut objects = self.objects.borrow_mut();
        let object = objects.get_mut(key).ok_or_else(|| not_found(key))?;
        if object.len() as u64 != expected_size {
            return Err(changed(key));
        }
        object.truncate(usize::try_from(len).unwrap_or(usize::MAX));
        Ok(())
    }

    async fn remove(&self, key: &str) -> Result<(), StorageError> {
        check_key(key)?;
        match self.objects.borrow_mut().remove(key) {
            Some(_) => Ok(()),
            None => Err(not_found(key)),
        }
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), StorageError> {
        check_key(from)?;
        check_key(to)?;
        let mut objects = self.objects.borrow_mut();
        if objects.contains_key(to) {
            return Err(StorageError::AlreadyExists { key: to.to_string() });
        }
        let data = objects.remove(from).ok_or_else(|| not_found(from))?;
        objects.insert(to.to_string(), data);
        Ok(())
    }

    async fn lock(&self, name: &str) -> Result<(), StorageError> {
        check_key(name)?;
        if self.locks.borrow_mut().insert(name.to_string()) { Ok(()) } else { Err(StorageError::Locked { key: name.to_string() }) }
    }

    async fn unlock(&self, name: &str) -> Result<(), StorageError> {
        self.locks.borrow_mut().remove(name);
        Ok(())
    }
}
