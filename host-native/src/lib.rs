//! Mneme on the filesystem.
//!
//! - [`FsStorage`]: the core's [`mneme_core::Storage`] on a root directory.
//! - [`ComponentEngine`]: the Mneme WebAssembly component (embedded in this crate) run
//!   by wasmtime, with `storage` imports served by an [`FsStorage`]. This is what the
//!   `mneme` CLI uses by default.
//! - [`NativeEngine`]: the same core linked natively, for Rust programs that don't
//!   want a wasm runtime. Both implement [`Sessions`] and are tested against each other.

mod component;
mod fs_storage;

pub use component::{COMPONENT, ComponentEngine, Runtime};
pub use fs_storage::{Durability, FsStorage};
pub use mneme_core as core;

use mneme_core::{CheckReport, Context, Entry, Limits, NewEntry, RepairReport, SessionInfo, Store, Subagent, Transcript, block_on};

/// Why an engine call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Session(#[from] mneme_core::Error),
    /// The component trapped or could not be loaded: a bug in Mneme, not in the input.
    #[error("the Mneme component failed: {0}")]
    Component(String),
}

/// The session operations, whichever way the core is run. Each mirrors the
/// `mneme_core::Store` method of the same name.
pub trait Sessions {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error>;
    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error>;
    fn load(&mut self, id: &str) -> Result<Transcript, Error>;
    fn context(&mut self, id: &str) -> Result<Context, Error>;
    fn check(&mut self, id: &str) -> Result<CheckReport, Error>;
    /// Checks a transcript that is not in the store (a file given by path).
    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, Error>;
    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, Error>;
    fn remove(&mut self, id: &str) -> Result<Vec<String>, Error>;
    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, Error>;
    fn list(&mut self) -> Result<Vec<SessionInfo>, Error>;
    fn reopen(&mut self, id: &str) -> Result<(), Error>;
}

/// The core linked into this process, over an [`FsStorage`].
pub struct NativeEngine {
    store: Store<FsStorage>,
}

impl NativeEngine {
    pub fn new(storage: FsStorage, limits: Limits) -> Self {
        Self { store: Store::with_limits(storage, limits) }
    }
}

impl Sessions for NativeEngine {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
        Ok(block_on(self.store.append(id, entry))?)
    }
    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error> {
        Ok(block_on(self.store.tombstone(id, uuid, now_ms))?)
    }
    fn load(&mut self, id: &str) -> Result<Transcript, Error> {
        Ok(block_on(self.store.load(id))?)
    }
    fn context(&mut self, id: &str) -> Result<Context, Error> {
        Ok(block_on(self.store.context(id))?)
    }
    fn check(&mut self, id: &str) -> Result<CheckReport, Error> {
        Ok(block_on(self.store.check(id))?)
    }
    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, Error> {
        Ok(mneme_core::check_bytes(data))
    }
    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, Error> {
        Ok(block_on(self.store.subagents(id))?)
    }
    fn remove(&mut self, id: &str) -> Result<Vec<String>, Error> {
        Ok(block_on(self.store.remove(id))?)
    }
    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, Error> {
        Ok(block_on(self.store.repair(id, now_ms))?)
    }
    fn list(&mut self) -> Result<Vec<SessionInfo>, Error> {
        Ok(block_on(self.store.list())?)
    }
    fn reopen(&mut self, id: &str) -> Result<(), Error> {
        self.store.reopen(id);
        Ok(())
    }
}
