//! The Mneme core as a WebAssembly component. Each export converts its arguments,
//! calls `mneme-core`, and converts the result back; storage calls go out through
//! the imported `storage` interface. No logic lives here.
#![no_std]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;

use mneme_core as core_;

wit_bindgen::generate!({ path: "../wit", world: "engine" });

use exports::mneme::engine::sessions as wit;
use mneme::engine::{storage, types};

#[cfg(all(target_arch = "wasm32", not(test)))]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

#[cfg(all(target_arch = "wasm32", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

/// The host's storage, reached through the component's imports.
struct ImportedStorage;

impl core_::Storage for ImportedStorage {
    async fn list(&self, prefix: &str) -> Result<Vec<core_::KeyInfo>, core_::StorageError> {
        let listing = storage::list(prefix).map_err(storage_error_from_wit)?;
        Ok(listing
            .into_iter()
            .map(|i| core_::KeyInfo {
                key: i.key,
                size: i.size,
            })
            .collect())
    }
    async fn read(
        &self,
        key: &str,
        offset: u64,
        len: Option<u64>,
    ) -> Result<Vec<u8>, core_::StorageError> {
        storage::read(key, offset, len).map_err(storage_error_from_wit)
    }
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, core_::StorageError> {
        storage::append(key, data).map_err(storage_error_from_wit)
    }
    async fn replace(&self, key: &str, data: &[u8]) -> Result<(), core_::StorageError> {
        storage::replace(key, data).map_err(storage_error_from_wit)
    }
    async fn remove(&self, key: &str) -> Result<(), core_::StorageError> {
        storage::remove(key).map_err(storage_error_from_wit)
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), core_::StorageError> {
        storage::rename(from, to).map_err(storage_error_from_wit)
    }
    async fn lock(&self, name: &str) -> Result<(), core_::StorageError> {
        storage::lock(name).map_err(storage_error_from_wit)
    }
    async fn unlock(&self, name: &str) -> Result<(), core_::StorageError> {
        storage::unlock(name).map_err(storage_error_from_wit)
    }
}

struct Component;

impl wit::Guest for Component {
    type Store = Store;
}

struct Store(core_::Store<ImportedStorage>);

impl wit::GuestStore for Store {
    fn new() -> Self {
        Store(core_::Store::new(ImportedStorage))
    }

    fn append(&self, id: String, entry: wit::NewEntry) -> Result<wit::Entry, wit::Error> {
        let role = match entry.role {
            wit::Role::User => core_::Role::User,
            wit::Role::Assistant => core_::Role::Assistant,
        };
        let entry = core_::NewEntry {
            uuid: entry.uuid,
            now_ms: entry.now_ms,
            role,
            text: entry.text,
            cwd: entry.cwd,
        };
        core_::block_on(self.0.append(&id, entry))
            .map(entry_to_wit)
            .map_err(error_to_wit)
    }

    fn load(&self, id: String) -> Result<wit::Transcript, wit::Error> {
        let transcript = core_::block_on(self.0.load(&id)).map_err(error_to_wit)?;
        Ok(wit::Transcript {
            entries: transcript.entries.into_iter().map(entry_to_wit).collect(),
            report: wit::LoadReport {
                skipped: transcript
                    .report
                    .skipped
                    .into_iter()
                    .map(|s| wit::SkippedLine {
                        line: s.line,
                        reason: s.reason,
                    })
                    .collect(),
                torn_tail: transcript.report.torn_tail,
            },
            lines: transcript.lines,
        })
    }

    fn list(&self) -> Result<Vec<wit::SessionInfo>, wit::Error> {
        let sessions = core_::block_on(self.0.list()).map_err(error_to_wit)?;
        Ok(sessions
            .into_iter()
            .map(|s| wit::SessionInfo {
                id: s.id,
                project: s.project,
                key: s.key,
                bytes: s.bytes,
                entries: s.entries,
                messages: s.messages,
                title: s.title,
                created: s.created,
                updated: s.updated,
            })
            .collect())
    }
}

fn entry_to_wit(e: core_::Entry) -> wit::Entry {
    wit::Entry {
        line: e.line,
        kind: e.kind,
        uuid: e.uuid,
        parent_uuid: e.parent_uuid,
        session_id: e.session_id,
        timestamp: e.timestamp,
        role: e.role,
        text: e.text,
        raw: e.raw,
    }
}

fn error_to_wit(e: core_::Error) -> wit::Error {
    use core_::Error as E;
    match e {
        E::Storage(e) => wit::Error::Storage(storage_error_to_wit(e)),
        E::SessionNotFound { id } => wit::Error::SessionNotFound(id),
        E::InvalidSessionId { id, reason } => {
            wit::Error::InvalidSessionId(wit::InvalidName { name: id, reason })
        }
        E::InvalidProject { name, reason } => {
            wit::Error::InvalidProject(wit::InvalidName { name, reason })
        }
        E::AmbiguousSession { id, projects } => {
            wit::Error::AmbiguousSession(wit::Ambiguous { id, projects })
        }
        E::InvalidArgument(message) => wit::Error::InvalidArgument(message),
        other => wit::Error::InvalidArgument(alloc::format!("{other}")),
    }
}

fn storage_error_to_wit(e: core_::StorageError) -> types::StorageError {
    use core_::StorageError as E;
    use types::StorageError as W;
    match e {
        E::NotFound { key } => W::NotFound(key),
        E::AlreadyExists { key } => W::AlreadyExists(key),
        E::InvalidKey { key, reason } => W::InvalidKey(types::InvalidKey { key, reason }),
        E::ReadOnly { key } => W::ReadOnly(key),
        E::Locked { key } => W::Locked(key),
        E::QuotaExceeded { key } => W::QuotaExceeded(key),
        E::Io { key, message } => W::Io(types::IoFailure { key, message }),
        other => W::Io(types::IoFailure {
            key: String::new(),
            message: alloc::format!("{other}"),
        }),
    }
}

fn storage_error_from_wit(e: types::StorageError) -> core_::StorageError {
    use core_::StorageError as E;
    use types::StorageError as W;
    match e {
        W::NotFound(key) => E::NotFound { key },
        W::AlreadyExists(key) => E::AlreadyExists { key },
        W::InvalidKey(types::InvalidKey { key, reason }) => E::InvalidKey { key, reason },
        W::ReadOnly(key) => E::ReadOnly { key },
        W::Locked(key) => E::Locked { key },
        W::QuotaExceeded(key) => E::QuotaExceeded { key },
        W::Io(types::IoFailure { key, message }) => E::Io { key, message },
    }
}

export!(Component);
