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

use mneme_core::{Entry, NewEntry, SessionInfo, Store, Transcript, block_on};

/// Why an engine call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Session(#[from] mneme_core::Error),
    /// The component trapped or could not be loaded: a bug in Mneme, not in the input.
    #[error("the Mneme component failed: {0}")]
    Component(String),
}

/// The session operations, whichever way the core is run.
pub trait Sessions {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error>;
    fn load(&mut self, id: &str) -> Result<Transcript, Error>;
    fn list(&mut self) -> Result<Vec<SessionInfo>, Error>;
}

/// The core linked into this process, over an [`FsStorage`].
pub struct NativeEngine {
    store: Store<FsStorage>,
}

impl NativeEngine {
    pub fn new(storage: FsStorage) -> Self {
        Self {
            store: Store::new(storage),
        }
    }
}

impl Sessions for NativeEngine {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
        Ok(block_on(self.store.append(id, entry))?)
    }
    fn load(&mut self, id: &str) -> Result<Transcript, Error> {
        Ok(block_on(self.store.load(id))?)
    }
    fn list(&mut self) -> Result<Vec<SessionInfo>, Error> {
        Ok(block_on(self.store.list())?)
    }
}
