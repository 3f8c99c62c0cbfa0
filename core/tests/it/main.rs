//! The core's integration tests, one module per area, in one binary: each binary
//! of its own compiled and linked the whole engine again (minutes of every clean build).

mod compact;
mod corpus;
mod crab;
mod crash;
mod fixes;
mod gates;
mod hooked;
mod index;
mod interchange;
mod items;
mod lines;
mod memory;
mod memory_tool;
mod redact;
mod retention;
mod rollover;
mod store;
mod turns;
