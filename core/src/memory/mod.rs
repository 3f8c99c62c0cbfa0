//! Long-term memory: Claude Code's memory files and MEMORY.md index, the instruction
//! hierarchy (CLAUDE.md and its `@` imports), and recall.

pub mod file;
pub mod recall;
pub mod text;
