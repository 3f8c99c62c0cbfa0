//! `search`: messages across every session, ranked by the recall index memories use
//! (`memory::recall`), each session read as a conversation so a question's answer is
//! found through the question too.
//!
//! The index is kept by the store between calls and brought up to date at each search
//! from one listing: a session whose size changed is read again and its messages
//! replaced, a session gone is taken out; the rest is not read. A process that
//! searches once (the CLI) reads every session once.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use super::{Parts, group_sessions, transcript_of, with_loaded};
use crate::error::Error;
use crate::keys;
use crate::memory::recall::{Document, Query, RecallIndex};
use crate::memory::text;
use crate::storage::{Storage, StorageError};
use crate::store::Store;
use crate::support::time;

/// One message that matches a search.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SearchHit {
    /// The session's id and project.
    pub id: String,
    pub project: String,
    /// The message's entry.
    pub uuid: String,
    pub role: String,
    pub timestamp: Option<String>,
    /// The message's text, shortened.
    pub text: String,
    /// Higher is better.
    pub score: f64,
}

/// What the store keeps of the search index between calls.
#[derive(Debug, Default)]
pub(crate) struct SearchState {
    index: RecallIndex,
    /// Each indexed session's total size and the index keys of its messages.
    sessions: BTreeMap<String, (u64, Vec<String>)>,
    /// Each message's hit, score left at 0, by index key.
    messages: BTreeMap<String, SearchHit>,
}

impl SearchState {
    fn forget(&mut self, session: &str) {
        if let Some((_, keys)) = self.sessions.remove(session) {
            for key in keys {
                self.index.remove(&key);
                self.messages.remove(&key);
            }
        }
    }
}

impl<S: Storage> Store<S> {
    /// The `limit` messages that best match `query`, across every session, best first.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, Error> {
        let listing = self.storage.list(keys::PROJECTS).await?;
        let sessions: BTreeMap<String, Parts> = group_sessions(&listing)
            .into_iter()
            .map(|((project, id), parts)| {
                let parts = Parts { project, id, parts: parts.into_iter().map(|(_, info)| info).collect() };
                (parts.base_key(), parts)
            })
            .collect();
        let size = |parts: &Parts| parts.parts.iter().fold(0u64, |sum, p| sum.saturating_add(p.size));
        let stale: Vec<(&String, &Parts)> = {
            let state = self.search.borrow();
            sessions.iter().filter(|(key, parts)| state.sessions.get(*key).map(|(indexed, _)| *indexed) != Some(size(parts))).collect()
        };
        let mut read = Vec::new();
        for (key, parts) in stale {
            match self.read_parts(parts).await {
                Ok(raw) => {
                    read.push((key.clone(), size(parts), with_loaded(&raw, |loaded| transcript_of(&parts.project, &parts.id, 0, loaded))))
                }
                // Removed since the listing, or a name this storage cannot serve: not searchable.
                Err(Error::SessionNotFound { .. } | Error::Storage(StorageError::InvalidKey { .. })) => {}
                Err(error) => return Err(error),
            }
        }
        let mut state = self.search.borrow_mut();
        let gone: Vec<String> = state.sessions.keys().filter(|key| !sessions.contains_key(*key)).cloned().collect();
        for key in gone {
            state.forget(&key);
        }
        for (session, size, transcript) in read {
            state.forget(&session);
            let mut indexed = Vec::new();
            for entry in transcript.entries {
                let (Some(uuid), Some(role)) = (entry.uuid, entry.role) else { continue };
                if !matches!(role.as_str(), "user" | "assistant") || entry.text.trim().is_empty() {
                    continue;
                }
                let key = session.clone() + "#" + &uuid;
                state.index.insert(Document {
                    key: key.clone(),
                    terms: text::terms(&entry.text),
                    topics: Vec::new(),
                    session: Some(session.clone()),
                    time_ms: entry.timestamp.as_deref().and_then(time::parse_millis).unwrap_or(0),
                    links: Vec::new(),
                    current: true,
                });
                let hit = SearchHit {
                    id: transcript.id.clone(),
                    project: transcript.project.clone(),
                    uuid,
                    role,
                    timestamp: entry.timestamp,
                    text: snippet(&entry.text),
                    score: 0.0,
                };
                state.messages.insert(key.clone(), hit);
                indexed.push(key);
            }
            state.sessions.insert(session, (size, indexed));
        }
        state.index.embed_with(self.embedding_table());
        let hits = state.index.recall(&Query { text: query, limit, all: false });
        Ok(hits
            .into_iter()
            .filter_map(|hit| {
                let mut found = state.messages.get(&hit.key)?.clone();
                found.score = f64::from(hit.score);
                Some(found)
            })
            .collect())
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
