//! Mneme's engine: everything a host does not have to.
//!
//! The core owns the transcript model (Claude Code's, pi's and crab's JSONL
//! dialects), the session layout, compaction and the gates, and the orchestration of
//! reads and writes over a small byte-level [`Storage`] trait. It has no I/O, no clock
//! and no randomness: hosts pass time and ids in, and supply storage. That is what
//! lets one core run natively, inside a WebAssembly component under wasmtime, and in a
//! browser, with identical results.
//!
//! Orchestration is `async fn` over [`Storage`] so asynchronous hosts (IndexedDB,
//! OPFS) can await real promises; synchronous hosts drive the same futures with
//! [`block_on`].
//!
//! Where each concept lives: `storage/` (the trait, its contract suite, the in-memory
//! and fault-injecting backends), `keys` (the key space), `format` (the dialects'
//! names), `scan` (lines and envelopes), `message/` (canonical messages), `dialect/`
//! (one dialect per file), `transcript/` (thread, context, branches, check, tokens),
//! `compaction/` (plan, prompt, offline summary, the sans-IO driver), `gates`,
//! `recall/` (the recall index), `catalog/` (keys and session rows), `sessions/`,
//! `index/` and `memory/` (each area a view of the store), and `store` (the facade).
//! docs/architecture.md draws the layers.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

mod base;
mod catalog;
pub mod compaction;
mod dialect;
mod engine;
mod error;
pub mod format;
pub mod gates;
pub mod index;
pub mod interchange;
pub mod keys;
pub mod memory;
pub mod message;
pub mod recall;
pub mod redact;
mod scan;
pub mod sessions;
pub mod storage;
mod store;
mod support;
pub mod transcript;

pub use base::{Limits, parse_limit, parse_size};
pub use compaction::{Action, Keep, Mode, Plan, Pruned, Run, Settings, Step, Trigger};
pub use engine::{Engine, EngineError, compact_offline, compact_with};
pub use error::Error;
pub use format::Format;
pub use index::{RebuildReport, crab};
pub use message::{AgentRef, Injection, Place, Provider, Role, Speaker, Turn, Usage};
pub use recall::Window;
pub use sessions::retention;
pub use sessions::{
    Applied, CompactionIds, Listing, NewEntry, RelinkedLine, RepairReport, SearchHit, SessionInfo, SkippedKey, Subagent, Transcript,
    TranscriptKey, WrittenSession, check_bytes, load_report,
};
pub use storage::{InMemoryStorage, KeyInfo, Storage, StorageError};
pub use store::Store;
pub use support::{Mirror, MirrorBytes, MirrorText, SharedStr, block_on, time};
pub use transcript::ProviderContext;
pub use transcript::tokens;
pub use transcript::{AgentUsage, Branch, Ledger, Prices};
pub use transcript::{CheckReport, Context, ContextMessage, Entry, Finding, LoadReport, SkippedLine, TypeCount};

/// The version of Mneme written into the entries it creates.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
