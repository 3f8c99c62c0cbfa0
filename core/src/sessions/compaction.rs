//! The store's side of compaction: plan on a read session, apply a summary atomically
//! in the session's dialect, record failures for the circuit breaker.

use alloc::borrow::{Cow, ToOwned};
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use super::with_loaded;
use super::write::{Expect, Kind, WriteOptions};
use crate::compaction::{self, Action, Due, Mode, Plan, Settings};
use crate::dialect;
use crate::error::Error;
use crate::format::{Format, Marker};
use crate::scan::Line;
use crate::storage::Storage;
use crate::support::time;
use crate::transcript::tokens;

/// Ids for the entries a compaction writes, from the host.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionIds {
    /// The `compact_boundary` entry (pi: the `compaction` entry).
    pub boundary: String,
    /// The summary entry (unused for pi, whose compaction entry holds the summary).
    pub summary: String,
}

/// What applying a compaction wrote.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Applied {
    /// The dialect written: `claude` (a `compact_boundary` and an `isCompactSummary`
    /// entry, or a `microcompact_boundary` for a prune), `pi` (a `compaction` entry) or
    /// `crab` (a `{"compact": …}` marker, then the kept messages again, since crab
    /// loads from its last marker on).
    pub format: Format,
    /// `summarize` or `prune`, as the plan said.
    pub action: Action,
    /// The boundary (`compact_boundary`, `microcompact_boundary`, or pi `compaction`);
    /// empty for crab, whose marker has no id.
    pub boundary_uuid: String,
    pub summary_uuid: Option<String>,
    pub tokens_before: u64,
    /// Estimated tokens of the context after: the summary and what was kept.
    pub tokens_after: u64,
}

/// A store's compaction (the WIT's `compaction` interface): `store.compaction()`.
pub struct Compaction<'s, S> {
    pub(crate) sessions: super::Sessions<'s, S>,
}

impl<S: Storage> Compaction<'_, S> {
    /// [`tokens::context_window`]: a model's context window, where it is known.
    pub fn context_window(model: &str) -> Option<u64> {
        tokens::context_window(model)
    }

    /// Plans a compaction of session `id` (see [`Plan`]); writes nothing. The plan
    /// records the session's size and leaf, and applying it refuses a session that
    /// has changed since.
    pub async fn plan_compaction(&self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, Error> {
        settings.check()?;
        let parts = self.sessions.require(id).await?;
        let raw = self.sessions.read_parts(&parts).await?;
        let (mut plan, torn_bytes) = with_loaded(&raw, |loaded| {
            let torn = loaded.torn_at.zip(raw.last()).map_or(0, |(at, last)| (last.len() as u64).saturating_sub(at));
            (compaction::plan(loaded, settings, mode), torn)
        });
        // The size a write will find: a torn tail is moved aside before anything is written.
        plan.session_bytes = raw.iter().fold(0u64, |sum, bytes| sum.saturating_add(bytes.len() as u64)).saturating_sub(torn_bytes);
        Ok(plan)
    }

    /// A summary of what `plan` summarises, written without a model.
    pub async fn summarize_offline(&self, id: &str, plan: &Plan) -> Result<String, Error> {
        let parts = self.sessions.require(id).await?;
        let raw = self.sessions.read_parts(&parts).await?;
        Ok(with_loaded(&raw, |loaded| compaction::extractive_summary(loaded, plan)))
    }

    /// Applies `plan` with the `summary` the host's model wrote, in the session's
    /// dialect and in one atomic write: for Claude Code a `compact_boundary` (whose
    /// `preservedSegment` names the kept entries) and the summary as an
    /// `isCompactSummary` user entry; for pi a `compaction{summary, firstKeptEntryId}`
    /// entry; for crab a `{"compact"}` marker and the kept messages. Nothing is
    /// deleted; loading and resuming start at the new boundary. An empty summary is
    /// refused, and so is a plan made on a session that has changed since
    /// ([`Error::StalePlan`]: plan again).
    pub async fn apply_compaction(&self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, Error> {
        if !plan.has_work() {
            let reason = plan.blocked.clone().unwrap_or_else(|| plan.reason.clone());
            return Err(Error::NothingToCompact { id: id.to_owned(), reason });
        }
        if plan.needs_summary() && summary.trim().is_empty() {
            return Err(Error::EmptySummary { id: id.to_owned() });
        }
        if ids.boundary.is_empty() || (plan.action == Action::Summarize && ids.summary.is_empty()) {
            return Err(Error::InvalidArgument("the compaction's ids are empty".into()));
        }
        let parts = self.sessions.require(id).await?;
        let raw = self.sessions.read_parts(&parts).await?;
        let (format, cwd, missing, kept_lines) = with_loaded(&raw, |loaded| {
            let cwd = loaded.cwd().to_owned();
            let live: BTreeMap<Cow<str>, &Line> = loaded.lines.iter().filter(|l| loaded.is_live(l)).map(|l| (l.entry_id(), l)).collect();
            let missing = plan.keep.iter().chain(&plan.summarize).find(|id| !live.contains_key(id.as_str())).cloned();
            let kept_lines: Vec<String> = plan.keep.iter().filter_map(|id| live.get(id.as_str())).map(|l| l.raw.to_owned()).collect();
            (Format::detect(&loaded.lines), cwd, missing, kept_lines)
        });
        if let Some(uuid) = missing {
            return Err(Error::StalePlan { id: id.to_owned(), uuid });
        }
        if format == Format::Pi && plan.keep.iter().chain(&plan.summarize).any(|id| id.starts_with('@')) {
            return Err(Error::NothingToCompact {
                id: id.to_owned(),
                reason: "this pi session predates entry ids (format v1); open it in pi once so it migrates, then compact".into(),
            });
        }
        // What was read above is what gets written on: the write refuses a session
        // that changed in between.
        let expect = Expect { bytes: plan.session_bytes, leaf: plan.leaf.as_deref() };
        let timestamp = time::format_millis(now_ms);
        let dialect = format.dialect();
        let tokens_after = match plan.action {
            Action::Prune => plan.keep_tokens,
            _ => tokens::text_tokens(&dialect.shown_summary(summary)).saturating_add(plan.keep_tokens),
        };
        let kept: Vec<&str> = kept_lines.iter().map(String::as_str).collect();
        let kind = if plan.action == Action::Prune { Kind::Prune } else { Kind::Compaction };
        let first = self
            .sessions
            .write(id, WriteOptions { expect: Some(expect), kind, ..WriteOptions::ENTRY }, |dialect, at| {
                let header = at.header(id, &ids.boundary, now_ms, &timestamp, &cwd);
                match plan.action {
                    Action::Prune => {
                        let cleared: Vec<&str> = plan.prune.iter().map(|p| p.tool_use_id.as_str()).collect();
                        dialect.prune(&header, &cleared, plan.tokens_before, plan.tokens_before.saturating_sub(plan.keep_tokens))
                    }
                    _ => dialect.compaction(
                        &header,
                        &dialect::Compaction {
                            summary,
                            summary_uuid: &ids.summary,
                            first_kept: plan.keep.first().map(String::as_str),
                            kept_lines: &kept,
                            manual: plan.trigger == Some(Due::Manual),
                            tokens_before: plan.tokens_before,
                            tokens_after,
                        },
                    ),
                }
            })
            .await?;
        // The id as written (pi shortens it; crab has none).
        let boundary_uuid = first.into_iter().next().and_then(|entry| entry.uuid).unwrap_or_default();
        let summary_uuid = (format == Format::Claude && plan.action == Action::Summarize).then(|| ids.summary.clone());
        Ok(Applied { format, action: plan.action, boundary_uuid, summary_uuid, tokens_before: plan.tokens_before, tokens_after })
    }

    /// Records that a compaction of session `id` failed (the summariser errored or
    /// returned nothing), as a `compaction-failure` marker. After
    /// [`Settings::max_failures`] of them in a row, auto-compaction plans are blocked.
    pub async fn record_compaction_failure(&self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        self.sessions.record_marker(id, Marker::CompactionFailure, Some(reason), now_ms).await
    }
}
