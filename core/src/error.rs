use alloc::string::String;

use crate::storage::StorageError;

/// Why a [`crate::Store`] operation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("no session `{id}`; `mneme sessions list` shows the sessions in this store")]
    SessionNotFound { id: String },
    #[error("invalid session id `{id}`: {reason}")]
    InvalidSessionId { id: String, reason: String },
    #[error("invalid project name `{name}`: {reason}")]
    InvalidProject { name: String, reason: String },
    #[error(
        "session `{id}` exists in several projects ({projects}); pass the project to choose one"
    )]
    AmbiguousSession { id: String, projects: String },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}
