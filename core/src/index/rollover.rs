//! Long-session rollover (seed 003): when a key's session has grown so large that
//! resuming it costs too much, the key moves to a new session that starts from a
//! summary of the old one, linked to it. The old transcript is not touched.
//!
//! Two steps, like compaction: [`Index::rollover_gate`] says when (the session's
//! context past a token threshold), the host has the summary written (the compaction
//! driver: a plan that keeps nothing, then its model or the offline summary), and
//! [`Index::rollover`] writes the new session and moves the key in that order. A crash
//! between the two leaves the key on the old session and an unlinked new one, which a
//! second rollover (with a fresh id) does not reuse: nothing is lost either way.

use alloc::format;
use alloc::string::String;
use alloc::vec;

use super::Index;
use super::KeyEntry;
use super::ops::key_not_found;
use super::route;
use crate::catalog::Change;
use crate::dialect::{Compaction, Fork};
use crate::error::Error;
use crate::format::Format;
use crate::gates::Decision;
use crate::sessions::{CompactionIds, with_loaded};
use crate::storage::Storage;
use crate::support::time;
use crate::transcript::tokens;

/// What a rollover did.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RolledOver {
    /// The key, now on the new session.
    pub entry: KeyEntry,
    pub previous_session_id: String,
    /// The new session's dialect: the old session's.
    pub format: Format,
    /// The line that starts the new session (Claude Code's `compact_boundary`, pi's
    /// `compaction`; empty for crab, whose marker has no id).
    pub boundary_uuid: String,
    /// The context the old session had.
    pub tokens_before: u64,
    /// The new session's context: the summary.
    pub tokens_after: u64,
}

impl<S: Storage> Index<'_, S> {
    /// Whether key `key`'s session should roll over: its context (what resuming it
    /// sends the model, from its last compaction on) holds `max_context_tokens` or more.
    pub async fn rollover_gate(&self, key: &str, max_context_tokens: u64) -> Result<Decision, Error> {
        let entry = self.sessions.catalog.read_index(|state| state.keys.get(key).cloned()).await?.ok_or_else(|| key_not_found(key))?;
        let Some(row) = self.sessions.session_row(&entry.session_id).await? else {
            return Ok(Decision { fire: false, reason: format!("`{key}`'s session `{}` has no message yet", entry.session_id) });
        };
        let tokens = row.counters.context_tokens;
        Ok(if tokens >= max_context_tokens {
            Decision { fire: true, reason: format!("the session's context holds {tokens} tokens; it rolls over at {max_context_tokens}") }
        } else {
            Decision { fire: false, reason: format!("the session's context holds {tokens} of {max_context_tokens} tokens") }
        })
    }

    /// Moves key `key` to a new session `new_session_id` that starts from `summary` (of
    /// the key's current session), written in the old session's dialect as its client
    /// writes a compaction, linked to the old session (Claude Code: `forkedFrom` and
    /// the boundary's `logicalParentUuid`; pi: the header's `parentSession`; the key's
    /// previous session ids everywhere). The new session is written first, in one
    /// write, then the key moves.
    pub async fn rollover(
        &self,
        key: &str,
        summary: &str,
        ids: &CompactionIds,
        new_session_id: &str,
        now_ms: i64,
    ) -> Result<RolledOver, Error> {
        let entry = self.sessions.catalog.read_index(|state| state.keys.get(key).cloned()).await?.ok_or_else(|| key_not_found(key))?;
        let old = entry.session_id.clone();
        if summary.trim().is_empty() {
            return Err(Error::EmptySummary { id: old });
        }
        if ids.boundary.is_empty() || ids.summary.is_empty() {
            return Err(Error::InvalidArgument("the rollover's ids are empty".into()));
        }
        // Checked before anything is written, as the index would refuse it after.
        route::check_fresh(&entry, new_session_id)?;
        let parts = self.sessions.require(&old).await?;
        let raw = self.sessions.read_parts(&parts).await?;
        let origin_key = parts.base_key();
        let timestamp = time::format_millis(now_ms);
        let (format, content, tokens_before, tokens_after) = with_loaded(&raw, |loaded| -> Result<_, Error> {
            let format = Format::detect(&loaded.lines);
            let dialect = format.dialect();
            let leaf = loaded.leaf().and_then(|i| loaded.lines[i].env.uuid());
            let cwd = loaded.cwd();
            let tokens_before = crate::compaction::context_token_count(loaded);
            let tokens_after = tokens::text_tokens(&dialect.shown_summary(summary));
            let header = crate::dialect::Header {
                session_id: new_session_id,
                parent: leaf,
                sidechain: false,
                uuid: &ids.boundary,
                now_ms,
                timestamp: &timestamp,
                cwd,
                agent_id: None,
                taken: None,
            };
            let compaction = Compaction {
                summary,
                summary_uuid: &ids.summary,
                first_kept: None,
                kept_lines: &[],
                manual: false,
                tokens_before,
                tokens_after,
            };
            let fork = Fork { id: new_session_id, origin_id: &old, origin_key: &origin_key, timestamp: &timestamp, cwd };
            Ok((format, dialect.rollover(&header, &compaction, &fork)?, tokens_before, tokens_after))
        })?;
        let written = self.sessions.create_session(&parts.project, new_session_id, &content).await?;
        let boundary_uuid = written.into_iter().next().and_then(|entry| entry.uuid).unwrap_or_default();
        let reason = format!("rolled over from `{old}` at {tokens_before} context tokens, seeded with its summary");
        let entry = self
            .sessions
            .catalog
            .update_index(|state| {
                let mut entry = state.keys.get(key).cloned().ok_or_else(|| key_not_found(key))?;
                route::start_new_session(&mut entry, new_session_id, now_ms, &reason)?;
                entry.updated_ms = entry.updated_ms.max(now_ms);
                Ok((vec![Change::Key { entry: entry.clone() }], entry))
            })
            .await?;
        Ok(RolledOver { entry, previous_session_id: old, format, boundary_uuid, tokens_before, tokens_after })
    }
}
