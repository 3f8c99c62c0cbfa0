//! Long-term memory: Claude Code's memory files and MEMORY.md index, the instruction
//! hierarchy (CLAUDE.md and its `@` imports), and recall.

mod answer;
pub mod consolidate;
pub mod extract;
pub mod file;
pub mod instructions;
pub mod memory_md;
pub mod store;
pub mod tool;

use alloc::collections::BTreeMap;
use alloc::string::String;
use core::cell::RefCell;

use crate::base::Base;
use crate::sessions::Sessions;

/// What the memory operations keep between calls.
#[derive(Debug, Default)]
pub(crate) struct MemoryState {
    /// The scopes this store has read, by folder.
    pub scopes: RefCell<BTreeMap<String, store::ScopeState>>,
}

/// A store's long-term memory (the WIT's `memory` interface): `store.memory()`.
pub struct Memories<'s, S> {
    pub(crate) base: &'s Base<S>,
    pub(crate) state: &'s MemoryState,
    pub(crate) sessions: Sessions<'s, S>,
}

impl<S> Clone for Memories<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Memories<'_, S> {}
