//! Long-term memory: Claude Code's memory files and MEMORY.md index, the instruction
//! hierarchy (CLAUDE.md and its `@` imports), and recall.

mod answer;
pub mod consolidate;
pub mod embed;
pub mod extract;
pub mod file;
pub mod instructions;
pub mod memory_md;
pub mod recall;
pub mod store;
pub mod text;
