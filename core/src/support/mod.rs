//! Helpers with no domain knowledge: driving futures, time, lenient field types.

mod executor;
pub(crate) mod hash;
pub(crate) mod ids;
pub(crate) mod json;
pub(crate) mod lenient;
mod mirror;
pub(crate) mod shared;
pub mod time;

pub use executor::block_on;
pub use mirror::Mirror;
pub use shared::SharedStr;
