use alloc::string::String;

/// Why a [`crate::Store`] operation failed.
///
/// Exhaustive on purpose: every binding matches it without a wildcard, so a new
/// variant fails to compile in each binding until it is mapped there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(untagged)]
pub enum Error {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("no session `{id}` in this store; list the store's sessions to see which exist")]
    SessionNotFound { id: String },
    #[error("invalid session id `{id}`: {reason}")]
    InvalidSessionId { id: String, reason: String },
    #[error("invalid project name `{name}`: {reason}")]
    InvalidProject { name: String, reason: String },
    #[error(
        "session `{id}` exists in several projects ({projects}); a session is found by its id alone: move its file out of all of these projects but one"
    )]
    AmbiguousSession { id: String, projects: String },
    #[error("session `{id}` has no entry `{uuid}` (or it is already deleted)")]
    EntryNotFound { id: String, uuid: String },
    #[error(
        "session `{id}` is full: it holds {bytes} bytes since its last compaction, and this write would pass the {limit} allowed; compact it to continue"
    )]
    SessionFull { id: String, bytes: u64, limit: u64 },
    #[error(
        "sub-agent `{agent}` of session `{id}` is full: it holds {bytes} bytes since its last compaction, and this write would pass the {limit} allowed; continue its work as a new sub-agent"
    )]
    SubagentFull { id: String, agent: String, bytes: u64, limit: u64 },
    #[error("a write to session `{id}` failed, so its state on storage is unknown; reopen the session to read it again before writing")]
    SessionPoisoned { id: String },
    #[error("the summary for session `{id}` is empty; nothing was written (the failure counts toward the circuit breaker if recorded)")]
    EmptySummary { id: String },
    #[error("nothing to compact in session `{id}`: {reason}")]
    NothingToCompact { id: String, reason: String },
    #[error("session `{id}` changed since the plan was made (entry `{uuid}` is gone or no longer its newest): plan again")]
    StalePlan { id: String, uuid: String },
    #[error("{} sessions cannot record this: {operation}; nothing was written", format.as_str())]
    Unsupported { format: crate::Format, operation: String },
    #[error("message {message} is invalid: {reason}; nothing was written")]
    InvalidMessage { message: u32, reason: String },
    #[error("no memory `{file}` in {scope}; list the memories (with archived ones) to see which exist")]
    MemoryNotFound { scope: String, file: String },
    #[error(
        "line {line} of the model's answer is not a memory operation: {reason}; nothing was written (record the failure, then ask again)"
    )]
    InvalidAnswer { line: u32, reason: String },
    #[error("no session key `{key}` in the index; list the keys to see which exist, or resolve a message to create it")]
    KeyNotFound { key: String },
    #[error("a session `{id}` exists already; give the new session another id")]
    SessionExists { id: String },
    #[error(
        "session `{id}` is archived, and a new session under its id would hide it: restore it to continue it, or give the new session another id"
    )]
    SessionArchived { id: String },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

/// Why a storage operation failed. Hosts map their native errors onto these.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(untagged)]
pub enum StorageError {
    #[error("`{key}` does not exist")]
    NotFound { key: String },
    #[error("`{key}` already exists; remove it first or choose another name")]
    AlreadyExists { key: String },
    #[error("refused key `{key}`: {reason}")]
    InvalidKey { key: String, reason: String },
    #[error("`{key}` cannot be written: this store is read-only; open a writable store to change it")]
    ReadOnly { key: String },
    #[error("`{key}` is locked by another writer; retry when it finishes")]
    Locked { key: String },
    #[error("out of storage space writing `{key}`; free space or compact sessions")]
    QuotaExceeded { key: String },
    #[error("`{key}` changed since it was read (another program wrote to it); nothing was done; read it again and retry")]
    Changed { key: String },
    #[error("I/O error on `{key}`: {message}")]
    Io { key: String, message: String },
}

impl StorageError {
    /// A stable name for the error, as the WIT variant spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            StorageError::NotFound { .. } => "not-found",
            StorageError::AlreadyExists { .. } => "already-exists",
            StorageError::InvalidKey { .. } => "invalid-key",
            StorageError::ReadOnly { .. } => "read-only",
            StorageError::Locked { .. } => "locked",
            StorageError::QuotaExceeded { .. } => "quota-exceeded",
            StorageError::Changed { .. } => "changed",
            StorageError::Io { .. } => "io",
        }
    }

    /// Whether the call that failed is known to have changed nothing: every error but
    /// an I/O failure is a refusal, while an I/O failure's write may have landed.
    pub fn wrote_nothing(&self) -> bool {
        !matches!(self, StorageError::Io { .. })
    }
}

impl StorageError {
    /// The error a host reported by its [`kind`](StorageError::kind) (hosts whose errors
    /// travel as strings: JavaScript backends). An unknown kind is an I/O failure.
    pub fn from_kind(kind: &str, key: String, message: String) -> StorageError {
        match kind {
            "not-found" => StorageError::NotFound { key },
            "already-exists" => StorageError::AlreadyExists { key },
            "invalid-key" => StorageError::InvalidKey { key, reason: message },
            "read-only" => StorageError::ReadOnly { key },
            "locked" => StorageError::Locked { key },
            "quota-exceeded" => StorageError::QuotaExceeded { key },
            "changed" => StorageError::Changed { key },
            _ => StorageError::Io { key, message },
        }
    }
}

impl Error {
    /// The error's fields as a JSON object (`{"message": 2, "reason": "..."}` for an
    /// invalid message, `{"key": "..."}` for a storage error), for hosts whose errors
    /// travel as a kind and words: a caller reads them instead of parsing the words.
    pub fn details(&self) -> alloc::string::String {
        match serde_json::to_value(self) {
            Ok(value @ serde_json::Value::Object(_)) => alloc::string::ToString::to_string(&value),
            _ => "{}".into(),
        }
    }

    /// A stable name for the error, as the WIT variants spell it (storage errors as
    /// `storage/<kind>`), for hosts whose errors travel as strings (JavaScript).
    pub fn kind(&self) -> alloc::string::String {
        use alloc::string::ToString;
        match self {
            Error::Storage(e) => alloc::format!("storage/{}", e.kind()),
            Error::SessionNotFound { .. } => "session-not-found".to_string(),
            Error::InvalidSessionId { .. } => "invalid-session-id".to_string(),
            Error::InvalidProject { .. } => "invalid-project".to_string(),
            Error::AmbiguousSession { .. } => "ambiguous-session".to_string(),
            Error::EntryNotFound { .. } => "entry-not-found".to_string(),
            Error::SessionFull { .. } => "session-full".to_string(),
            Error::SubagentFull { .. } => "subagent-full".to_string(),
            Error::SessionPoisoned { .. } => "session-poisoned".to_string(),
            Error::EmptySummary { .. } => "empty-summary".to_string(),
            Error::NothingToCompact { .. } => "nothing-to-compact".to_string(),
            Error::StalePlan { .. } => "stale-plan".to_string(),
            Error::Unsupported { .. } => "unsupported".to_string(),
            Error::InvalidMessage { .. } => "invalid-message".to_string(),
            Error::MemoryNotFound { .. } => "memory-not-found".to_string(),
            Error::InvalidAnswer { .. } => "invalid-answer".to_string(),
            Error::KeyNotFound { .. } => "key-not-found".to_string(),
            Error::SessionExists { .. } => "session-exists".to_string(),
            Error::SessionArchived { .. } => "session-archived".to_string(),
            Error::InvalidArgument(_) => "invalid-argument".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What hosts hand their callers besides the words: the fields, as a JSON object.
    #[test]
    fn an_errors_details_are_its_fields() {
        let invalid = Error::InvalidMessage { message: 2, reason: "no".into() };
        assert_eq!(invalid.details(), r#"{"message":2,"reason":"no"}"#);
        assert_eq!(Error::Storage(StorageError::Locked { key: "k".into() }).details(), r#"{"key":"k"}"#);
        assert_eq!(Error::InvalidArgument("words".into()).details(), "{}");
    }
}
