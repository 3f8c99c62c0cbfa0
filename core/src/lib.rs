//! Mneme's engine: everything a host does not have to.
//!
//! The core owns the transcript model (Claude Code's JSONL session format), the
//! session layout, and the orchestration of reads and writes over a small byte-level
//! [`Storage`] trait. It has no I/O, no clock and no randomness: hosts pass time and
//! ids in, and supply storage. That is what lets one core run natively, inside a
//! WebAssembly component under wasmtime, and in a browser, with identical results.
//!
//! Orchestration is `async fn` over [`Storage`] so asynchronous hosts (IndexedDB,
//! OPFS) can await real promises; synchronous hosts drive the same futures with
//! [`block_on`].
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

mod compact;
mod error;
mod executor;
pub mod gates;
pub mod layout;
mod lenient;
mod memory;
mod session;
mod storage;
mod store;
pub mod time;
pub mod tokens;
mod transcript;

pub use compact::{Keep, Mode, Plan, Pruned, Settings, Trigger};
pub use error::Error;
pub use executor::block_on;
pub use memory::MemoryStorage;
pub use session::{CheckReport, Context, ContextMessage, Finding};
pub use storage::{KeyInfo, Storage, StorageError};
pub use store::{
    Applied, CompactionIds, Limits, NewEntry, RepairReport, Role, SessionInfo, Store, Subagent, Transcript, check_bytes, load_report,
};
pub use transcript::{Entry, LoadReport, SkippedLine, TypeCount};

/// The version of Mneme written into the entries it creates.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
