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
    #[error("session `{id}` exists in several projects ({projects}); pass the project to choose one")]
    AmbiguousSession { id: String, projects: String },
    #[error("session `{id}` has no entry `{uuid}` (or it is already deleted)")]
    EntryNotFound { id: String, uuid: String },
    #[error("session `{id}` is full: {bytes} bytes of {limit} allowed; compact it (`mneme compact`) or raise the limit")]
    SessionFull { id: String, bytes: u64, limit: u64 },
    #[error(
        "a write to session `{id}` failed, so its state on storage is unknown; reopen the session (a new `mneme` run does) to read it again"
    )]
    SessionPoisoned { id: String },
    #[error("the summary for session `{id}` is empty; nothing was written (the failure counts toward the circuit breaker if recorded)")]
    EmptySummary { id: String },
    #[error("nothing to compact in session `{id}`: {reason}")]
    NothingToCompact { id: String, reason: String },
    #[error("session `{id}` changed since the plan was made (entry `{uuid}` is gone); plan again")]
    StalePlan { id: String, uuid: String },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}
