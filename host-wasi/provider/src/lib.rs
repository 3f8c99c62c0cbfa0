//! `storage` on wasi:filesystem: the CLI's own [`FsStorage`] on the folder the
//! component is given as its current directory (`wasmtime run --dir <folder>::.`).
//! wasi:filesystem has no locks, so a lock here excludes only this instance's other
//! callers; host-wasi/README.md says what that means for two processes.

use std::sync::OnceLock;

use mneme_core::{Mirror, Storage, block_on};
use mneme_fs::FsStorage;

wit_bindgen::generate!({ path: "../../wit", world: "storage-provider" });

use exports::mneme::engine::storage::{Data, Guest};
use mneme::engine::types;

mneme_core::mirror_wit_types!(types; sends_text = false);

fn storage() -> &'static FsStorage {
    static STORAGE: OnceLock<FsStorage> = OnceLock::new();
    STORAGE.get_or_init(|| FsStorage::new("."))
}

struct Provider;

impl Guest for Provider {
    fn wants_text() -> bool {
        // A component passes a byte list in one piece: no decoding.
        false
    }
    fn list(prefix: String) -> Result<Vec<types::KeyInfo>, types::StorageError> {
        block_on(storage().list(&prefix)).mirror()
    }
    fn read(key: String, offset: u64, len: Option<u64>) -> Result<Data, types::StorageError> {
        block_on(storage().read(&key, offset, len)).mirror()
    }
    fn append(key: String, data: Data) -> Result<u64, types::StorageError> {
        block_on(storage().append(&key, data.as_bytes())).mirror()
    }
    fn replace(key: String, data: Data, expected_size: Option<u64>) -> Result<(), types::StorageError> {
        block_on(storage().replace(&key, data.as_bytes(), expected_size)).mirror()
    }
    fn truncate(key: String, len: u64, expected_size: u64) -> Result<(), types::StorageError> {
        block_on(storage().truncate(&key, len, expected_size)).mirror()
    }
    fn remove(key: String) -> Result<(), types::StorageError> {
        block_on(storage().remove(&key)).mirror()
    }
    fn rename(from: String, to: String) -> Result<(), types::StorageError> {
        block_on(storage().rename(&from, &to)).mirror()
    }
    fn lock(name: String) -> Result<(), types::StorageError> {
        block_on(storage().lock(&name)).mirror()
    }
    fn unlock(name: String) -> Result<(), types::StorageError> {
        block_on(storage().unlock(&name)).mirror()
    }
}

export!(Provider);
