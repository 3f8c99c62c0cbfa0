//! The host's integration tests, one module per area, in one binary: each binary
//! of its own compiled and linked wasmtime and the engine again (minutes of every
//! clean build). `processes` stays apart: it is its own `main`.

mod cli;
mod component;
mod concurrency;
mod conformance;
mod corpus;
mod same_bytes;
mod summarizers;
