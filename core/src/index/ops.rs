//! The store's side of the index: resolving inbound messages, resets, labels, and
//! looking keys up.

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::Index;
use super::route::{self, Inbound, Resolution, RoutePolicy};
use super::{Field, IndexHealth, KeyEntry, KeyPatch, KeyView, RebuildReport, merge_fields};
use crate::catalog::Change;
use crate::error::Error;
use crate::keys;
use crate::storage::Storage;

impl<S: Storage> Index<'_, S> {
    /// [`route::key_of`]: the key an inbound message is routed to; reads no storage.
    pub fn key_of(inbound: &Inbound, policy: &RoutePolicy) -> Result<String, Error> {
        route::key_of(inbound, policy)
    }

    /// [`super::sessionkey::parse`]: a session key's parts.
    pub fn parse_key(key: &str) -> Result<super::sessionkey::KeyParts, Error> {
        super::sessionkey::parse(key)
    }

    /// Routes an inbound message: its key, the session it goes to, and why (see
    /// [`route::decide`]). Records the key's activity, and its new session when one
    /// starts; `new_session_id` (a fresh id from the host) is used only then.
    pub async fn resolve(&self, inbound: &Inbound, policy: &RoutePolicy, now_ms: i64, new_session_id: &str) -> Result<Resolution, Error> {
        policy.reset.check()?;
        for rule in &policy.overrides {
            rule.policy.check()?;
        }
        self.sessions
            .catalog
            .update_index(|state| {
                let key = route::key_of(inbound, policy)?;
                let existing = state.keys.get(&key);
                let (resolution, entry) = route::decide(key, existing, inbound, policy, now_ms, new_session_id)?;
                Ok((vec![Change::Key { entry }], resolution))
            })
            .await
    }

    /// Starts a new session for `key` (what `/new` does), keeping the old one in the
    /// key's history. The old transcript is not touched.
    pub async fn reset_key(&self, key: &str, new_session_id: &str, now_ms: i64) -> Result<KeyEntry, Error> {
        self.sessions
            .catalog
            .update_index(|state| {
                let mut entry = state.keys.get(key).cloned().ok_or_else(|| key_not_found(key))?;
                route::start_new_session(&mut entry, new_session_id, now_ms, "reset by the caller")?;
                entry.updated_ms = entry.updated_ms.max(now_ms);
                Ok((vec![Change::Key { entry: entry.clone() }], entry))
            })
            .await
    }

    /// Sets a key's labels (title, model, origin, toggles, metadata).
    pub async fn update_key(&self, key: &str, patch: &KeyPatch) -> Result<KeyEntry, Error> {
        // Read by every cleanup pass: a value it cannot take would be passed over there,
        // without a word, and a negative one would archive the key's sessions at once.
        let ttl = patch.toggles.iter().rev().find(|toggle| toggle.name == crate::retention::TTL_TOGGLE);
        if let Some(days) =
            ttl.map(|toggle| toggle.value.as_str()).filter(|days| !days.is_empty() && crate::retention::ttl_days(days).is_none())
        {
            return Err(Error::InvalidArgument(alloc::format!(
                "the toggle {} is `{days}`: give a whole number of days, 0 or more (an empty value removes it)",
                crate::retention::TTL_TOGGLE
            )));
        }
        self.sessions
            .catalog
            .update_index(|state| {
                let mut entry = state.keys.get(key).cloned().ok_or_else(|| key_not_found(key))?;
                if let Some(title) = &patch.title {
                    entry.title = Some(title.clone()).filter(|t| !t.is_empty());
                }
                if let Some(model) = &patch.model {
                    entry.model = Some(model.clone()).filter(|m| !m.is_empty());
                }
                if let Some(origin) = &patch.origin {
                    entry.origin = origin.clone();
                }
                merge_fields(&mut entry.toggles, &patch.toggles);
                merge_fields(&mut entry.metadata, &patch.metadata);
                Ok((vec![Change::Key { entry: entry.clone() }], entry))
            })
            .await
    }

    /// Forgets a key; its sessions stay in the store. Returns the entry it had.
    pub async fn remove_key(&self, key: &str) -> Result<KeyEntry, Error> {
        self.sessions
            .catalog
            .update_index(|state| {
                let entry = state.keys.get(key).cloned().ok_or_else(|| key_not_found(key))?;
                Ok((vec![Change::DropKey { key: key.to_owned() }], entry))
            })
            .await
    }

    /// Key `key` with what its current session's transcript says (from the index's
    /// cache when the transcript has not changed since).
    pub async fn key(&self, key: &str) -> Result<KeyView, Error> {
        let entry = self.sessions.catalog.read_index(|state| state.keys.get(key).cloned()).await?.ok_or_else(|| key_not_found(key))?;
        let row = match self.sessions.session_row(&entry.session_id).await {
            Ok(row) => row,
            Err(Error::SessionNotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        let (session, counters) = row.map(|row| (Some(row.info), row.counters)).unwrap_or_default();
        Ok(KeyView { entry, session, counters })
    }

    /// Every key whose metadata has all of `filter`'s fields, most recently active first.
    pub async fn keys(&self, filter: &[Field]) -> Result<Vec<KeyEntry>, Error> {
        let mut keys = self
            .sessions
            .catalog
            .read_index(|state| {
                state.keys.values().filter(|entry| filter.iter().all(|f| entry.metadata.contains(f))).cloned().collect::<Vec<_>>()
            })
            .await?;
        keys.sort_by(|a, b| b.updated_ms.cmp(&a.updated_ms).then_with(|| a.key.cmp(&b.key)));
        Ok(keys)
    }

    /// Rebuilds the index from the transcripts: every session is read again, whatever
    /// the cache says, and its rows with the keys as they are become a new generation,
    /// so damaged or torn log lines and an unreadable snapshot are left behind. The key
    /// bindings are the caller's routing decisions, not derived from transcripts: they
    /// are kept as the index has them.
    pub async fn rebuild_index(&self) -> Result<RebuildReport, Error> {
        let listing = self.sessions.base.storage.list(keys::PROJECTS).await?;
        let sessions = crate::sessions::group_sessions(&listing)
            .into_iter()
            .map(|((project, id), parts)| crate::sessions::Parts { project, id, parts: parts.into_iter().map(|(_, info)| info).collect() })
            .collect();
        let (rows, skipped) = self.sessions.read_rows(sessions).await?;
        let (before, old) = self.sessions.catalog.replace_session_rows(rows.clone()).await?;
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Ok(RebuildReport {
            session_count: count(rows.len()),
            added: count(rows.keys().filter(|name| !old.contains_key(*name)).count()),
            changed: count(rows.iter().filter(|(name, row)| old.get(*name).is_some_and(|cached| cached != *row)).count()),
            dropped: count(old.keys().filter(|name| !rows.contains_key(*name)).count()),
            key_count: before.key_count,
            skipped,
            before,
        })
    }

    /// What reading the index found: its generation, sizes, and anything damaged that
    /// was skipped.
    pub async fn index_report(&self) -> Result<IndexHealth, Error> {
        self.sessions.catalog.read_index(|state| state.report.clone()).await
    }
}

pub(crate) fn key_not_found(key: &str) -> Error {
    Error::KeyNotFound { key: String::from(key) }
}
