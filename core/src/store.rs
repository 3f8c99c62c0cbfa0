use alloc::borrow::ToOwned;
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::RefCell;

use serde::Serialize;

use crate::error::Error;
use crate::layout;
use crate::storage::{Storage, StorageError};
use crate::time;
use crate::transcript::{self, Entry, Transcript};

/// Who speaks in an appended message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// A message to append. The host supplies the id and the time: the core has neither
/// a random source nor a clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEntry {
    /// A fresh, unique id (Claude Code uses UUID v4).
    pub uuid: String,
    /// When the message was written, in Unix milliseconds.
    pub now_ms: i64,
    pub role: Role,
    pub text: String,
    /// The agent's working directory. A new session is filed under the project
    /// derived from it, as Claude Code does.
    pub cwd: String,
}

/// A summary of one session, as `sessions list` shows it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SessionInfo {
    pub id: String,
    pub project: String,
    /// The storage key of the main transcript.
    pub key: String,
    pub bytes: u64,
    pub entries: u32,
    /// `user` and `assistant` entries.
    pub messages: u32,
    /// The first user prompt, shortened.
    pub title: Option<String>,
    /// Timestamp of the first entry that has one.
    pub created: Option<String>,
    /// Timestamp of the last entry that has one.
    pub updated: Option<String>,
}

const TITLE_CHARS: usize = 80;

/// Sessions over a [`Storage`]. All methods take `&self`: a store is shared by a
/// host's handles, and its storage serialises what must be serialised.
#[derive(Debug)]
pub struct Store<S> {
    storage: S,
    /// Session id → transcript key, so appends don't list the whole store.
    known_keys: RefCell<BTreeMap<String, String>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewLine<'a> {
    parent_uuid: Option<&'a str>,
    is_sidechain: bool,
    user_type: &'static str,
    cwd: &'a str,
    session_id: &'a str,
    version: &'static str,
    entrypoint: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    message: NewMessage<'a>,
    uuid: &'a str,
    timestamp: &'a str,
}

#[derive(Serialize)]
struct NewMessage<'a> {
    role: &'static str,
    content: NewContent<'a>,
}

/// Claude Code writes a user prompt as a plain string and assistant replies as blocks.
#[derive(Serialize)]
#[serde(untagged)]
enum NewContent<'a> {
    Text(&'a str),
    Blocks([TextBlock<'a>; 1]),
}

#[derive(Serialize)]
struct TextBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

impl<S: Storage> Store<S> {
    pub fn new(storage: S) -> Self {
        Self {
            storage,
            known_keys: RefCell::default(),
        }
    }

    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// The key of session `id`'s main transcript, if it exists in any project.
    pub async fn find(&self, id: &str) -> Result<Option<String>, Error> {
        layout::validate_session_id(id)?;
        if let Some(key) = self.known_keys.borrow().get(id) {
            return Ok(Some(key.clone()));
        }
        let listing = self.storage.list(layout::PROJECTS).await?;
        let mut matches = listing
            .iter()
            .filter(|info| layout::parse_session_key(&info.key).is_some_and(|(_, sid)| sid == id));
        let Some(found) = matches.next() else {
            return Ok(None);
        };
        let others: Vec<&str> = matches
            .filter_map(|info| layout::parse_session_key(&info.key).map(|(p, _)| p))
            .collect();
        if !others.is_empty() {
            let first = layout::parse_session_key(&found.key).map_or("", |(p, _)| p);
            return Err(Error::AmbiguousSession {
                id: id.to_owned(),
                projects: [first]
                    .iter()
                    .chain(&others)
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        self.known_keys
            .borrow_mut()
            .insert(id.to_owned(), found.key.clone());
        Ok(Some(found.key.clone()))
    }

    /// Appends a message to session `id`, creating the session under the project of
    /// `entry.cwd` if it does not exist. The entry's `parentUuid` is the last entry of
    /// the transcript that has a uuid. Holds the session's lock for the whole
    /// read-then-append, so concurrent writers chain correctly.
    pub async fn append(&self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
        if entry.uuid.is_empty() {
            return Err(Error::InvalidArgument("the entry's uuid is empty".into()));
        }
        if entry.text.is_empty() {
            return Err(Error::InvalidArgument("the message text is empty".into()));
        }
        let key = match self.find(id).await? {
            Some(key) => key,
            None => {
                if entry.cwd.is_empty() {
                    return Err(Error::InvalidArgument(
                        "a new session needs the working directory (cwd) to name its project"
                            .into(),
                    ));
                }
                let project = layout::project_dir_name(&entry.cwd);
                layout::validate_project(&project)?;
                layout::session_key(&project, id)
            }
        };
        self.storage.lock(&key).await?;
        let appended = self.append_locked(&key, id, &entry).await;
        let unlocked = self.storage.unlock(&key).await;
        let appended = appended?;
        unlocked?;
        self.known_keys.borrow_mut().insert(id.to_owned(), key);
        Ok(appended)
    }

    async fn append_locked(&self, key: &str, id: &str, entry: &NewEntry) -> Result<Entry, Error> {
        let existing = match self.storage.read(key, 0, None).await {
            Ok(bytes) => transcript::parse(&bytes),
            Err(StorageError::NotFound { .. }) => Transcript::default(),
            Err(e) => return Err(e.into()),
        };
        let parent = existing
            .entries
            .iter()
            .rev()
            .find_map(|e| e.uuid.as_deref());
        let timestamp = time::format_millis(entry.now_ms);
        let content = match entry.role {
            Role::User => NewContent::Text(&entry.text),
            Role::Assistant => NewContent::Blocks([TextBlock {
                kind: "text",
                text: &entry.text,
            }]),
        };
        let line = NewLine {
            parent_uuid: parent,
            is_sidechain: false,
            user_type: "external",
            cwd: &entry.cwd,
            session_id: id,
            version: crate::VERSION,
            entrypoint: "mneme",
            kind: entry.role.as_str(),
            message: NewMessage {
                role: entry.role.as_str(),
                content,
            },
            uuid: &entry.uuid,
            timestamp: &timestamp,
        };
        let json =
            serde_json::to_string(&line).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        // A torn last line stays where it is (reported by every load) and the new entry
        // starts on a line of its own instead of fusing with it.
        let separator = if existing.report.torn_tail { "\n" } else { "" };
        let record = alloc::format!("{separator}{json}\n");
        self.storage.append(key, record.as_bytes()).await?;
        transcript::entry_from_line(&json, existing.lines + 1).map_err(Error::InvalidArgument)
    }

    /// Loads every entry of session `id` in file order, with the load report.
    pub async fn load(&self, id: &str) -> Result<Transcript, Error> {
        let key = self
            .find(id)
            .await?
            .ok_or_else(|| Error::SessionNotFound { id: id.to_owned() })?;
        match self.storage.read(&key, 0, None).await {
            Ok(bytes) => Ok(transcript::parse(&bytes)),
            Err(StorageError::NotFound { .. }) => {
                self.known_keys.borrow_mut().remove(id);
                Err(Error::SessionNotFound { id: id.to_owned() })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Every session in the store, most recently updated first.
    pub async fn list(&self) -> Result<Vec<SessionInfo>, Error> {
        let listing = self.storage.list(layout::PROJECTS).await?;
        let mut sessions = Vec::new();
        for info in &listing {
            let Some((project, id)) = layout::parse_session_key(&info.key) else {
                continue;
            };
            let bytes = match self.storage.read(&info.key, 0, None).await {
                Ok(bytes) => bytes,
                // Removed between the listing and the read: it is simply gone.
                Err(StorageError::NotFound { .. }) => continue,
                Err(e) => return Err(e.into()),
            };
            let transcript = transcript::parse(&bytes);
            let entries = &transcript.entries;
            sessions.push(SessionInfo {
                id: id.to_owned(),
                project: project.to_owned(),
                key: info.key.clone(),
                bytes: bytes.len() as u64,
                entries: entries.len() as u32,
                messages: entries
                    .iter()
                    .filter(|e| e.kind == "user" || e.kind == "assistant")
                    .count() as u32,
                title: entries
                    .iter()
                    .find(|e| e.kind == "user" && !e.text.is_empty())
                    .map(|e| shorten(&e.text)),
                created: entries.iter().find_map(|e| e.timestamp.clone()),
                updated: entries.iter().rev().find_map(|e| e.timestamp.clone()),
            });
        }
        sessions.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.key.cmp(&b.key)));
        Ok(sessions)
    }
}

fn shorten(text: &str) -> String {
    let first_line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    match first_line.char_indices().nth(TITLE_CHARS) {
        Some((cut, _)) => alloc::format!("{}…", &first_line[..cut]),
        None => first_line.to_string(),
    }
}
