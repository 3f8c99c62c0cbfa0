//! The gates' inputs, derived from transcripts and the consolidation state in storage.

use alloc::borrow::ToOwned;
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{SessionInfo, with_loaded};
use crate::compaction;
use crate::dialect;
use crate::error::Error;
use crate::format::Marker;
use crate::gates::{self, Decision, DreamSettings, ExtractionSettings, FlushSettings, ResetPolicy};
use crate::scan::{self, Content, Line};
use crate::storage::{Storage, StorageError};
use crate::support::time;
use crate::transcript::thread::Loaded;

/// A store's gates (the WIT's `gates` interface): `store.gates()`.
pub struct Gates<'s, S> {
    pub(crate) sessions: super::Sessions<'s, S>,
}

impl<S: Storage> Gates<'_, S> {
    /// [`gates::silent_reply`]: whether an agent's reply says it has nothing to say.
    pub fn silent_reply(text: &str) -> gates::Reply {
        gates::silent_reply(text)
    }

    /// Whether to run the pre-compaction memory flush for session `id` now: its
    /// context is within the soft threshold of the reserve, and no flush was
    /// recorded ([`Gates::record_memory_flush`]) since the last compaction.
    pub async fn memory_flush_gate(&self, id: &str, settings: &FlushSettings) -> Result<Decision, Error> {
        settings.check()?;
        let parts = self.sessions.require(id).await?;
        let raw = self.sessions.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| {
            let flushed = since_last(loaded, |l| dialect::is_compaction(&l.env)).any(|l| l.env.marker() == Some(Marker::MemoryFlush));
            gates::memory_flush(compaction::context_token_count(loaded), settings, flushed)
        }))
    }

    /// Records that the memory flush ran for session `id` (a `memory-flush` entry).
    pub async fn record_memory_flush(&self, id: &str, now_ms: i64) -> Result<(), Error> {
        self.sessions.record_marker(id, Marker::MemoryFlush, None, now_ms).await
    }

    /// Whether to extract memories from session `id` now: enough messages and tool
    /// calls since the last recorded extraction, and no tool call waiting.
    pub async fn extraction_gate(&self, id: &str, settings: &ExtractionSettings) -> Result<Decision, Error> {
        let parts = self.sessions.require(id).await?;
        let raw = self.sessions.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| {
            let since: Vec<&Line> =
                since_last(loaded, |l| l.env.marker() == Some(Marker::MemoryExtraction)).filter(|l| loaded.is_live(l)).collect();
            let messages = since.iter().filter(|l| l.env.is_message()).count() as u32;
            let (calls, pending) = tool_calls(&since);
            gates::extraction(messages, calls, pending, settings)
        }))
    }

    /// Records that memories were extracted from session `id` (a `memory-extraction` entry).
    pub async fn record_extraction(&self, id: &str, now_ms: i64) -> Result<(), Error> {
        self.sessions.record_marker(id, Marker::MemoryExtraction, None, now_ms).await
    }

    /// Whether the next message to session `id` should start a new session instead,
    /// judged from its first timestamp and its last message's. Nothing is deleted.
    pub async fn reset_gate(&self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, Error> {
        policy.check()?;
        let parts = self.sessions.require(id).await?;
        let raw = self.sessions.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| {
            let stamp = |l: &Line| l.env.timestamp.get().and_then(time::parse_millis);
            // Markers Mneme writes (flush, extraction, failures) are not activity.
            let last_message = loaded.lines.iter().rev().filter(|l| l.env.is_message()).find_map(stamp);
            match (loaded.lines.iter().find_map(stamp), last_message) {
                (Some(created), Some(last)) => gates::reset(now_ms, created, last, policy),
                _ => Decision { fire: false, reason: "the session has no timestamps to judge by".into() },
            }
        }))
    }

    /// Whether a memory consolidation ("dream") is due now, without taking it.
    pub async fn dream_gate(&self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, Error> {
        let state = self.dream_state().await?;
        self.dream_decision(now_ms, &state, settings).await
    }

    /// Takes the consolidation for `holder` if its gates pass: checked and recorded
    /// under the store's lock on the consolidation state, so of several processes
    /// asking at once exactly one gets it. Release it with [`Gates::dream_release`].
    pub async fn dream_acquire(&self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, Error> {
        self.sessions
            .base
            .locked(DREAM_STATE_KEY, async {
                let mut state = self.dream_state().await?;
                let decision = self.dream_decision(now_ms, &state, settings).await?;
                if decision.fire {
                    state.lock = Some(DreamLock { holder: holder.to_owned(), since_ms: now_ms });
                    self.save_dream_state(&state).await?;
                }
                Ok(decision)
            })
            .await
    }

    /// Releases the consolidation `holder` took; `completed` records it as the last
    /// consolidation (the time gate counts from now). Releasing a lock someone else
    /// holds is refused.
    pub async fn dream_release(&self, now_ms: i64, holder: &str, completed: bool) -> Result<(), Error> {
        self.sessions
            .base
            .locked(DREAM_STATE_KEY, async {
                let mut state = self.dream_state().await?;
                match &state.lock {
                    Some(lock) if lock.holder == holder => {}
                    Some(lock) => {
                        return Err(Error::InvalidArgument(format!("the consolidation is held by `{}`, not `{holder}`", lock.holder)));
                    }
                    None => return Err(Error::InvalidArgument("no consolidation is running".into())),
                }
                state.lock = None;
                if completed {
                    state.last_ms = Some(now_ms);
                }
                self.save_dream_state(&state).await
            })
            .await
    }

    /// The dream gate, cheapest first: the time since the last consolidation is
    /// judged before any transcript is read.
    async fn dream_decision(&self, now_ms: i64, state: &DreamState, settings: &DreamSettings) -> Result<Decision, Error> {
        let too_soon = state.last_ms.is_some_and(|last| now_ms.saturating_sub(last) < settings.min_interval_ms);
        let new_sessions = if too_soon { 0 } else { self.sessions_since(state.last_ms).await? };
        Ok(gates::dream(now_ms, state.last_ms, new_sessions, state.lock.as_ref().map(|l| l.since_ms), settings))
    }

    async fn dream_state(&self) -> Result<DreamState, Error> {
        match self.sessions.base.storage.read(DREAM_STATE_KEY, 0, None).await {
            // A damaged state file must not wedge consolidation forever: start over.
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).unwrap_or_default()),
            Err(StorageError::NotFound { .. }) => Ok(DreamState::default()),
            Err(e) => Err(e.into()),
        }
    }

    async fn save_dream_state(&self, state: &DreamState) -> Result<(), Error> {
        let bytes = serde_json::to_vec(state).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        Ok(self.sessions.base.storage.replace(DREAM_STATE_KEY, &bytes, None).await?)
    }

    /// Sessions updated after `since_ms` (all of them when never).
    async fn sessions_since(&self, since_ms: Option<i64>) -> Result<u32, Error> {
        let sessions = self.sessions.list().await?.sessions;
        let newer =
            |s: &&SessionInfo| since_ms.is_none_or(|since| s.updated.as_deref().and_then(time::parse_millis).is_some_and(|u| u > since));
        Ok(sessions.iter().filter(newer).count() as u32)
    }
}

/// What extraction and consolidation read of a session.
impl<S: Storage> super::Sessions<'_, S> {
    /// The conversation of session `id` since its last recorded extraction: what the
    /// extraction gate counts, as text.
    pub(crate) async fn since_extraction(&self, id: &str) -> Result<SinceExtraction, Error> {
        self.messages_after(id, |l| l.env.marker() == Some(Marker::MemoryExtraction)).await
    }

    /// Every message of session `id` with text (what consolidation gathers).
    pub(crate) async fn conversation_texts(&self, id: &str) -> Result<SinceExtraction, Error> {
        self.messages_after(id, |_| false).await
    }

    /// The messages with text after the last line `marker` matches.
    async fn messages_after(&self, id: &str, marker: impl Fn(&Line) -> bool) -> Result<SinceExtraction, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| {
            let mut since = SinceExtraction::default();
            for line in since_last(loaded, marker).filter(|l| loaded.is_live(l)) {
                if line.env.marker() == Some(Marker::ExtractionFailure) {
                    since.failures += 1;
                }
                if !line.env.is_message() || line.env.is_sidechain.0 {
                    continue;
                }
                let (role, text) = scan::message_text(line.env.message);
                let role = super::message_role(line).map(str::to_owned).or(role).unwrap_or_default();
                if text.trim().is_empty() {
                    continue;
                }
                since.entry = line.env.uuid().map(str::to_owned).or(since.entry);
                since.messages.push((role, text));
            }
            since
        }))
    }
}

/// Consolidation state and lock, beside the memory files.
const DREAM_STATE_KEY: &str = "memory/.consolidation.json";

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct DreamState {
    last_ms: Option<i64>,
    lock: Option<DreamLock>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct DreamLock {
    holder: String,
    since_ms: i64,
}

/// The lines after the last one matching `marker`, in file order.
/// See [`Sessions::since_extraction`](super::Sessions::since_extraction).
#[derive(Debug, Default)]
pub(crate) struct SinceExtraction {
    /// (role, text) of each message with text, oldest first.
    pub messages: Vec<(String, String)>,
    /// The newest of them: the provenance of what is extracted.
    pub entry: Option<String>,
    /// Extraction failures recorded since the last extraction.
    pub failures: u32,
}

fn since_last<'s, 'a>(loaded: &'s Loaded<'a>, marker: impl Fn(&Line) -> bool) -> impl Iterator<Item = &'s Line<'a>> {
    let start = loaded.lines.iter().rposition(marker).map_or(0, |i| i + 1);
    loaded.lines[start..].iter()
}

/// Tool calls among `lines`, and whether one of them still waits for its result.
fn tool_calls(lines: &[&Line]) -> (u32, bool) {
    let mut open: BTreeSet<String> = BTreeSet::new();
    let mut calls = 0u32;
    for line in lines {
        let Some((_, Some(Content::Blocks(blocks)))) = line.env.message.and_then(scan::parse_message_content) else { continue };
        for block in &blocks {
            match (block.kind.get(), block.id.get(), block.tool_use_id.get()) {
                (Some("tool_use"), Some(id), _) => {
                    calls = calls.saturating_add(1);
                    open.insert(id.to_owned());
                }
                (Some("tool_result"), _, Some(id)) => {
                    open.remove(id);
                }
                _ => {}
            }
        }
    }
    (calls, !open.is_empty())
}
