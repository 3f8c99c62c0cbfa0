//! Mneme on the filesystem.
//!
//! - [`FsStorage`]: the core's [`mneme_core::Storage`] on a root directory;
//!   [`HostStorage`]: that or a PostgreSQL database ([`mneme_postgres::PgStorage`]).
//! - [`ComponentEngine`]: the Mneme WebAssembly component (embedded in this crate) run
//!   by wasmtime, with `storage` imports served by a [`HostStorage`]. This is what the
//!   `mneme` CLI uses by default.
//! - [`native`]: the same core linked natively (`mneme_core::Store` over a
//!   [`HostStorage`]), for Rust programs that don't want a wasm runtime.
//!
//! Both implement [`mneme_core::Engine`] and are tested against each other.

mod component;
pub mod embedder;
mod host_storage;
mod http;
pub mod progress;
pub mod summarize;

pub use component::{COMPONENT, ComponentEngine, Runtime};
pub use host_storage::HostStorage;
pub use mneme_core as core;
pub use mneme_core::Engine;
pub use mneme_fs::{Durability, FsStorage, Home, HomeStorage};
pub use mneme_postgres::PgStorage;

/// The core linked into this process, over a folder or a database, as an [`Engine`]
/// whose errors are this crate's (so it can stand where a [`ComponentEngine`] does).
/// Rust programs that want the core's `async` API use `mneme_core::Store` directly.
pub fn native(storage: impl Into<HostStorage>, limits: mneme_core::Limits) -> Box<dyn Engine<Error>> {
    Box::new(mneme_core::Store::with_limits(storage.into(), limits))
}

/// Why an engine call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Session(#[from] mneme_core::Error),
    /// The component trapped or could not be loaded: a bug in Mneme, not in the input.
    #[error("the Mneme component failed: {0}")]
    Component(String),
}

impl mneme_core::EngineError for Error {
    fn kind(&self) -> String {
        match self {
            Error::Session(e) => e.kind(),
            Error::Component(_) => "component".to_owned(),
        }
    }
}
