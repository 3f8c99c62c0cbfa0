//! `search`: messages across every session, ranked by the recall index memories use
//! (`recall`): each message by its words (the user's own counting twice), and each
//! session read as one text too, so the messages of a session that matches as a whole
//! come with its best one.
//!
//! The index is saved in the store (`index/search.jsonl`: a header, then one line per
//! session with its size and its messages' terms) and brought up to date at each
//! search from one listing: a session whose size changed is read again and its line
//! appended, a session gone gets a `gone` line; the rest is not read. So a process
//! that searches once (the CLI) reads only the sessions written since the last search.
//! The file is derived state: a line that does not read (a torn append, another
//! version) makes the next search rewrite it from what did read and the transcripts,
//! and a store that cannot be written (a Claude Code home) keeps it in memory.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::Sessions;
use super::{Parts, group_sessions, transcript_of, with_loaded};
use crate::error::Error;
use crate::format::Format;
use crate::keys;
use crate::recall::text;
use crate::recall::{Document, Query, RecallIndex, Role, Window};
use crate::storage::{Storage, StorageError};
use crate::support::time;

/// One message that matches a search.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SearchHit {
    /// The session's id and project.
    pub id: String,
    pub project: String,
    /// The session's dialect: which client resumes it.
    pub format: Format,
    /// The folder the session works in, where its client resumes it: the one its
    /// project is named after, else the last one it named.
    pub cwd: Option<String>,
    /// The message's entry.
    pub uuid: String,
    pub role: String,
    pub timestamp: Option<String>,
    /// The message's text, shortened.
    pub text: String,
    /// Higher is better.
    pub score: f64,
    /// The message itself matches the query (its words, or its meaning through an
    /// embedding table); false when it was found through its session alone (which
    /// matches the query read as one text).
    pub matched: bool,
}

// 2: each session's format and cwd; 3: the cwd its project is named after; 4: the
// user-role messages the user did not write marked (they count as the user's words).
const VERSION: u32 = 4;

#[derive(Serialize, Deserialize)]
struct Header {
    mneme: String,
    version: u32,
}

/// One session as the saved index keeps it: what a search needs without reading it.
#[derive(Serialize, Deserialize)]
struct SessionLine {
    /// The session's base key.
    session: String,
    #[serde(default, skip_serializing_if = "is_false")]
    gone: bool,
    /// All its parts together, when it was read.
    #[serde(default)]
    size: u64,
    #[serde(default)]
    id: String,
    #[serde(default)]
    project: String,
    #[serde(default)]
    format: Format,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    cwd: String,
    #[serde(default)]
    messages: Vec<MessageLine>,
}

#[derive(Serialize, Deserialize)]
struct MessageLine {
    uuid: String,
    role: String,
    #[serde(default)]
    timestamp: Option<String>,
    /// The snippet a hit shows.
    text: String,
    /// Its terms, as `text::terms` gives them, joined by spaces.
    terms: String,
    /// A user-role line the user did not write (a client's meta text, a compaction's
    /// summary, a sub-agent's prompt): not weighed as the user's own words.
    #[serde(default, skip_serializing_if = "is_false")]
    generated: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// What the store keeps of the search index between calls.
#[derive(Debug, Default)]
pub(crate) struct SearchState {
    index: RecallIndex,
    /// Each indexed session's total size and the index keys of its messages.
    sessions: BTreeMap<String, (u64, Vec<String>)>,
    /// Each message's hit, score left at 0, by index key.
    messages: BTreeMap<String, SearchHit>,
    /// Each session's saved line, for rewriting the file without reading transcripts.
    lines: BTreeMap<String, String>,
    /// Whether this state was read from storage (or found nothing there to read).
    loaded: bool,
    /// The saved file's size as this store last read or wrote it (`None`: no file).
    saved_size: Option<u64>,
    /// Lines in the saved file, and whether it must be rewritten (a line did not read).
    saved_lines: usize,
    rewrite: bool,
}

impl SearchState {
    fn forget(&mut self, session: &str) {
        if let Some((_, keys)) = self.sessions.remove(session) {
            for key in keys {
                self.index.remove(&key);
                self.messages.remove(&key);
            }
        }
        self.lines.remove(session);
    }

    /// Takes one saved line in: the session's messages replace what was indexed of it.
    fn apply(&mut self, line: SessionLine, encoded: String) {
        self.forget(&line.session);
        if line.gone {
            return;
        }
        let mut indexed = Vec::with_capacity(line.messages.len());
        for message in line.messages {
            let key = line.session.clone() + "#" + &message.uuid;
            self.index.insert(Document {
                key: key.clone(),
                terms: message.terms.split(' ').filter(|t| !t.is_empty()).map(String::from).collect(),
                topics: Vec::new(),
                session: Some(line.session.clone()),
                time_ms: message.timestamp.as_deref().and_then(time::parse_millis).unwrap_or(0),
                links: Vec::new(),
                current: true,
                role: Some(if message.role == "user" && !message.generated { Role::User } else { Role::Other }),
            });
            let hit = SearchHit {
                id: line.id.clone(),
                project: line.project.clone(),
                format: line.format,
                cwd: Some(line.cwd.clone()).filter(|cwd| !cwd.is_empty()),
                uuid: message.uuid,
                role: message.role,
                timestamp: message.timestamp,
                text: message.text,
                score: 0.0,
                matched: false,
            };
            self.messages.insert(key.clone(), hit);
            indexed.push(key);
        }
        self.lines.insert(line.session.clone(), encoded);
        self.sessions.insert(line.session, (line.size, indexed));
    }

    /// The state a saved file gives: every line up to the first that does not read.
    fn parse(bytes: &[u8]) -> SearchState {
        let mut state = SearchState { loaded: true, saved_size: Some(bytes.len() as u64), ..SearchState::default() };
        let mut lines = bytes.split(|b| *b == b'\n');
        let header_reads = lines
            .next()
            .and_then(|line| serde_json::from_slice::<Header>(line).ok())
            .is_some_and(|header| header.mneme == "search-index" && header.version == VERSION);
        if !header_reads {
            state.rewrite = true;
            return state;
        }
        for line in lines.filter(|line| !line.is_empty()) {
            let Ok(parsed) = serde_json::from_slice::<SessionLine>(line) else {
                state.rewrite = true;
                break;
            };
            state.apply(parsed, String::from_utf8_lossy(line).into_owned());
            state.saved_lines += 1;
        }
        state
    }
}

fn header_line() -> String {
    serde_json::to_string(&Header { mneme: String::from("search-index"), version: VERSION }).unwrap_or_default() + "\n"
}

fn encode(line: &SessionLine) -> String {
    serde_json::to_string(line).unwrap_or_default()
}

impl<S: Storage> Sessions<'_, S> {
    /// The `limit` messages across every session (of `project` only, when named) in
    /// `window` that best match `query`, best first.
    pub async fn search(&self, query: &str, limit: usize, project: Option<&str>, window: Window) -> Result<Vec<SearchHit>, Error> {
        if let Some(project) = project {
            keys::validate_project(project)?;
        }
        let under = project.map(|project| alloc::format!("{}{project}/", keys::PROJECTS));
        let listing = self.base.storage.list(keys::PROJECTS).await?;
        let sessions: BTreeMap<String, Parts> = group_sessions(&listing)
            .into_iter()
            .map(|((project, id), parts)| {
                let parts = Parts { project, id, parts: parts.into_iter().map(|(_, info)| info).collect() };
                (parts.base_key(), parts)
            })
            .collect();
        self.load_search_index().await?;
        let size = |parts: &Parts| parts.parts.iter().fold(0u64, |sum, p| sum.saturating_add(p.size));
        let stale: Vec<(&String, &Parts)> = {
            let state = self.state.search.borrow();
            sessions.iter().filter(|(key, parts)| state.sessions.get(*key).map(|(indexed, _)| *indexed) != Some(size(parts))).collect()
        };
        let mut changed: Vec<SessionLine> = Vec::new();
        for (key, parts) in stale {
            match self.read_parts(parts).await {
                Ok(raw) => {
                    changed.push(with_loaded(&raw, |loaded| {
                        let transcript = transcript_of(&parts.project, &parts.id, 0, loaded);
                        // One flag per live line, as the transcript has one entry per live
                        // line in order (an id may be on two lines: flags by id would not do).
                        let generated: Vec<bool> =
                            loaded.lines.iter().filter(|line| loaded.is_live(line)).map(|line| line.env.is_generated()).collect();
                        let (format, cwd) = (Format::detect(&loaded.lines), loaded.home_cwd(&parts.project));
                        session_line(key, size(parts), transcript, &generated, format, cwd)
                    }));
                }
                // Removed since the listing, or a name this storage cannot serve: not searchable.
                Err(Error::SessionNotFound { .. } | Error::Storage(StorageError::InvalidKey { .. })) => {}
                Err(error) => return Err(error),
            }
        }
        {
            let state = self.state.search.borrow();
            for key in state.sessions.keys().filter(|key| !sessions.contains_key(*key)) {
                changed.push(SessionLine {
                    session: key.clone(),
                    gone: true,
                    size: 0,
                    id: String::new(),
                    project: String::new(),
                    format: Format::default(),
                    cwd: String::new(),
                    messages: Vec::new(),
                });
            }
        }
        let mut appended = String::new();
        {
            let mut state = self.state.search.borrow_mut();
            for line in changed {
                let encoded = encode(&line);
                appended.push_str(&encoded);
                appended.push('\n');
                state.apply(line, encoded);
                state.saved_lines += 1;
            }
        }
        self.save_search_index(&appended).await?;
        let mut state = self.state.search.borrow_mut();
        state.index.embed_with(self.base.embedding_table());
        let hits = state.index.recall(&Query { window, under: under.as_deref(), ..Query::new(query, limit) });
        Ok(hits
            .into_iter()
            .filter_map(|hit| {
                let mut found = state.messages.get(&hit.key)?.clone();
                found.score = f64::from(hit.score);
                found.matched = hit.matched;
                Some(found)
            })
            .collect())
    }

    /// Reads the saved index when this store has not, or another writer changed it.
    async fn load_search_index(&self) -> Result<(), Error> {
        let saved =
            self.base.storage.list(keys::SEARCH_INDEX).await?.into_iter().find(|info| info.key == keys::SEARCH_INDEX).map(|i| i.size);
        let (loaded, known) = {
            let state = self.state.search.borrow();
            (state.loaded, state.saved_size)
        };
        // Unchanged since this store read or wrote it; or never saved (a read-only store
        // keeps its index in memory between searches).
        if loaded && saved == known {
            return Ok(());
        }
        let nothing_saved = || SearchState { loaded: true, rewrite: true, ..SearchState::default() };
        let state = match saved {
            None => nothing_saved(),
            Some(_) => match self.base.storage.read(keys::SEARCH_INDEX, 0, None).await {
                Ok(bytes) => SearchState::parse(&bytes),
                Err(StorageError::NotFound { .. }) => nothing_saved(),
                Err(error) => return Err(error.into()),
            },
        };
        *self.state.search.borrow_mut() = state;
        Ok(())
    }

    /// Appends the lines of what changed, or rewrites the file — one line per session —
    /// when a line did not read or most lines are stale. A store that cannot be written
    /// keeps the index in memory.
    async fn save_search_index(&self, appended: &str) -> Result<(), Error> {
        let (rewrite, nothing_to_save) = {
            let state = self.state.search.borrow();
            (state.rewrite || state.saved_lines > 2 * state.sessions.len() + 64, state.lines.is_empty() && state.saved_size.is_none())
        };
        // A store with no session yet (a root mistyped, or not written yet) is left as
        // it is: a search does not create it.
        let outcome = if nothing_to_save {
            return Ok(());
        } else if rewrite {
            let text = {
                let state = self.state.search.borrow();
                let mut text = header_line();
                for line in state.lines.values() {
                    text.push_str(line);
                    text.push('\n');
                }
                text
            };
            self.base.storage.replace(keys::SEARCH_INDEX, text.as_bytes(), None).await.map(|()| (text.len() as u64, true))
        } else if appended.is_empty() {
            return Ok(());
        } else {
            self.base.storage.append(keys::SEARCH_INDEX, appended.as_bytes()).await.map(|size| (size, false))
        };
        let mut state = self.state.search.borrow_mut();
        match outcome {
            Ok((size, rewritten)) => {
                state.saved_size = Some(size);
                if rewritten {
                    state.rewrite = false;
                    state.saved_lines = state.sessions.len();
                }
                Ok(())
            }
            // Read-only: the index stays in memory, and is not offered to storage again.
            Err(StorageError::ReadOnly { .. }) => {
                state.rewrite = false;
                Ok(())
            }
            Err(error) => {
                state.saved_size = None;
                Err(error.into())
            }
        }
    }
}

/// A session's saved line: its messages from users and assistants that have text.
fn session_line(session: &str, size: u64, transcript: super::Transcript, generated: &[bool], format: Format, cwd: &str) -> SessionLine {
    let messages = transcript
        .entries
        .into_iter()
        .zip(generated.iter().copied().chain(core::iter::repeat(false)))
        .filter_map(|(entry, generated)| {
            let (Some(uuid), Some(role)) = (entry.uuid, entry.role) else { return None };
            if !matches!(role.as_str(), "user" | "assistant") || entry.text.trim().is_empty() {
                return None;
            }
            Some(MessageLine {
                generated,
                uuid,
                role,
                timestamp: entry.timestamp,
                text: snippet(&entry.text),
                terms: text::terms(&entry.text).join(" "),
            })
        })
        .collect();
    SessionLine {
        session: String::from(session),
        gone: false,
        size,
        id: transcript.id,
        project: transcript.project,
        format,
        cwd: String::from(cwd),
        messages,
    }
}

/// How much of a message a hit carries.
const SNIPPET_CHARS: usize = 240;

/// A message's text on one line (runs of whitespace as one space), cut after
/// [`SNIPPET_CHARS`] characters.
fn snippet(text: &str) -> String {
    let mut out = String::new();
    for (count, word) in text.split_whitespace().enumerate() {
        if count > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if out.chars().count() > SNIPPET_CHARS {
            let cut = out.char_indices().nth(SNIPPET_CHARS).map_or(out.len(), |(at, _)| at);
            out.truncate(cut);
            out.push('…');
            break;
        }
    }
    out
}
