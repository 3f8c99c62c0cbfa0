//! A session as the OpenAI Agents SDK's `Session` sees it: a list of Responses API
//! items, added in batches, read back newest last, popped from the end. Each item is
//! one line of a Claude Code session (see [`crate::message::items`]), so the list is
//! the session's resume context: what a compaction summarised comes back as one user
//! message with the summary, and a soft-deleted line is gone.
//!
//! An agent loop reads the whole list before every run. The store keeps the list it
//! last read or wrote for a session with the sizes of the session's parts then; while
//! the parts are those sizes (only this store's items were added since), the list is
//! that one and nothing is read. Any other write changes a size, and the next read
//! reads the session again.

use alloc::borrow::{Cow, ToOwned};
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use super::write::{Expect, WriteOptions};
use super::{Parts, Sessions, with_loaded};
use crate::error::Error;
use crate::message::calls;
use crate::message::items;
use crate::storage::Storage;
use crate::support::ids::derived_id;
use crate::support::json::fields_named;
use crate::support::time;
use crate::transcript::thread::Loaded;

/// The field of a line that keeps the item it was added as.
const ITEM_FIELD: &str = "responsesItem";

/// How many sessions' lists a store keeps (an agent process serves a few).
const KEPT: usize = 16;

/// How many times a pop reads the session again when another write came between its
/// read and its tombstone.
const POP_TRIES: u32 = 8;

/// A session's items as this store last read or wrote them.
#[derive(Debug)]
pub(crate) struct Cached {
    project: String,
    /// The sizes of the session's parts, part 1 first, when `items` were its items.
    sizes: Vec<u64>,
    items: Vec<String>,
}

impl<S: Storage> Sessions<'_, S> {
    /// Appends `items` (a JSON array of Responses API items) to session `id` in one
    /// write, a line each, creating the session under the project of `cwd` if missing.
    /// Line ids are `uuid` and ids derived from it. Returns how many were written.
    pub async fn append_items(&self, id: &str, items: &str, cwd: &str, uuid: &str, now_ms: i64) -> Result<u32, Error> {
        let mut items = items::parse(items)?;
        if items.messages.is_empty() {
            return Ok(0);
        }
        if uuid.is_empty() {
            return Err(Error::InvalidArgument("the items' uuid is empty".into()));
        }
        let timestamp = time::format_millis(now_ms);
        let options = WriteOptions { cwd: Some(cwd), ..WriteOptions::ENTRY };
        let mut before = None;
        let written = self
            .write(id, options, |dialect, at| {
                before = Some(at.sizes.to_vec());
                items::settle(&mut items.messages, at.calls);
                calls::check_turn(&items.messages, at.calls, false)?;
                dialect.items(&at.header(id, uuid, now_ms, &timestamp, cwd), &items, at.calls)
            })
            .await;
        match &written {
            // A secret taken out of a line changed its item: the kept list would differ.
            Ok(entries) if entries.iter().all(|entry| entry.redacted.is_empty()) => self.keep_written(id, before.as_deref(), &items.json),
            _ => drop(self.state.items.borrow_mut().remove(id)),
        }
        Ok(written?.len() as u32)
    }

    /// The items of session `id`'s resume context, oldest first, as a JSON array of
    /// the items as added; only the newest `limit` when given. A compaction's summary
    /// is the item `{"role":"user","content":<summary>}`; messages written otherwise
    /// than as items are not among them. A session that does not exist has none.
    pub async fn items(&self, id: &str, limit: Option<u32>) -> Result<String, Error> {
        let Some(parts) = self.locate(id).await? else {
            self.state.items.borrow_mut().remove(id);
            return Ok("[]".into());
        };
        let sizes: Vec<u64> = parts.parts.iter().map(|part| part.size).collect();
        let fresh = self.state.items.borrow().get(id).is_some_and(|kept| kept.sizes == sizes && kept.project == parts.project);
        if !fresh {
            let listed = self.read_items(&parts).await?;
            self.keep(id, Cached { project: parts.project.clone(), sizes, items: listed });
        }
        let kept = self.state.items.borrow();
        let listed = kept.get(id).map_or(&[][..], |kept| kept.items.as_slice());
        let skip = limit.map_or(0, |limit| listed.len().saturating_sub(limit as usize));
        let mut out = String::with_capacity(2 + listed.iter().skip(skip).map(|item| item.len() + 1).sum::<usize>());
        out.push('[');
        for (n, item) in listed.iter().skip(skip).enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str(item);
        }
        out.push(']');
        Ok(out)
    }

    /// Soft-deletes the newest item of session `id` (its line is tombstoned) and
    /// returns it; none when the session has none (or does not exist). The session's
    /// lock is held from the read to the tombstone, so another Mneme writer (another
    /// pop) waits rather than races. A writer that takes no lock (Claude Code) may
    /// still add a line in between: the tombstone is written only if the session is
    /// still as read, else it reads again; after [`POP_TRIES`] such races,
    /// [`Error::StalePlan`].
    pub async fn pop_item(&self, id: &str, now_ms: i64) -> Result<Option<String>, Error> {
        let Some(parts) = self.locate(id).await? else { return Ok(None) };
        let base = parts.base_key();
        self.base.locked(&base, self.pop_locked(id, &parts.project, &base, now_ms)).await
    }

    async fn pop_locked(&self, id: &str, project: &str, base: &str, now_ms: i64) -> Result<Option<String>, Error> {
        let mut last = Error::StalePlan { id: id.to_owned(), uuid: String::new() };
        for _ in 0..POP_TRIES {
            let Some(parts) = self.locate(id).await? else { return Ok(None) };
            let raw = self.read_parts(&parts).await?;
            let read = with_loaded(&raw, |loaded| {
                let torn = loaded.torn_at.zip(raw.last()).map_or(0, |(at, last)| (last.len() as u64).saturating_sub(at));
                let leaf = loaded.leaf().and_then(|i| loaded.lines.get(i)).map(|line| line.entry_id().into_owned());
                let newest = context_items(loaded)
                    .pop()
                    .and_then(|(line, item)| Some((loaded.lines.get(line)?.env.uuid()?.to_owned(), item.into_owned())));
                (torn, leaf, newest)
            });
            let (torn, leaf, newest) = read;
            let Some((uuid, item)) = newest else { return Ok(None) };
            // The size the write will find: a torn tail is moved aside first.
            let bytes = raw.iter().fold(0u64, |sum, part| sum.saturating_add(part.len() as u64)).saturating_sub(torn);
            self.state.items.borrow_mut().remove(id);
            let timestamp = time::format_millis(now_ms);
            let options = WriteOptions { expect: Some(Expect { bytes, leaf: leaf.as_deref() }), ..WriteOptions::ENTRY };
            // Under the lock taken above; the write lists the session again before it
            // checks `expect` (but for a session the caller holds, which has no other writer).
            let written = self
                .write_locked(id, project, base, options, |dialect, at| {
                    let line_id = derived_id(&["tombstone", id, &uuid, at.parent.unwrap_or_default()], now_ms);
                    dialect.tombstone(&at.header(id, &line_id, now_ms, &timestamp, ""), &uuid)
                })
                .await;
            match written {
                Ok(_) => return Ok(Some(item)),
                Err(stale @ Error::StalePlan { .. }) => last = stale,
                Err(error) => return Err(error),
            }
        }
        // Writers that take no lock kept adding between each read and its tombstone.
        Err(last)
    }

    async fn read_items(&self, parts: &Parts) -> Result<Vec<String>, Error> {
        let raw = self.read_parts(parts).await?;
        Ok(with_loaded(&raw, |loaded| context_items(loaded).into_iter().map(|(_, item)| item.into_owned()).collect()))
    }

    /// After a write of `written` items to session `id`, as given (no secret taken out
    /// of them), that followed `before` bytes (none: nothing was written): the kept
    /// list grows by them if it was the session's list just before (or the session
    /// began with them); otherwise it is forgotten.
    fn keep_written(&self, id: &str, before: Option<&[u64]>, written: &[String]) {
        let mut kept = self.state.items.borrow_mut();
        // A write whose lines the store could not follow (it reads the session again
        // before the next) may have moved the conversation elsewhere: read it again too.
        let after = self.state.open.borrow().get(id).filter(|open| !open.stale).map(|open| (open.project.clone(), open.sizes.clone()));
        // A session these items began has no other items: its list starts here.
        let began = || {
            before.filter(|sizes| sizes.iter().all(|&size| size == 0)).map(|sizes| Cached {
                project: after.as_ref().map(|(project, _)| project.clone()).unwrap_or_default(),
                sizes: sizes.to_vec(),
                items: Vec::new(),
            })
        };
        let Some(cached) = kept.remove(id).or_else(began) else { return };
        let follows = before == Some(cached.sizes.as_slice());
        if let (true, Some((project, sizes))) = (follows, after)
            && project == cached.project
        {
            let mut items = cached.items;
            items.extend(written.iter().cloned());
            drop(kept);
            self.keep(id, Cached { project, sizes, items });
        }
    }

    fn keep(&self, id: &str, cached: Cached) {
        let mut kept = self.state.items.borrow_mut();
        if kept.len() >= KEPT && !kept.contains_key(id) {
            let Some(forgotten) = kept.keys().next().cloned() else { return };
            kept.remove(&forgotten);
        }
        kept.insert(id.to_owned(), cached);
    }
}

/// The context's items and the lines they are on: the summaries, then each message
/// line's kept item.
fn context_items<'l>(loaded: &'l Loaded) -> Vec<(usize, Cow<'l, str>)> {
    let plan = loaded.context_lines();
    let summaries = plan.summaries.iter().filter_map(|&i| Some((i, Cow::Owned(summary_item(loaded.lines[i].raw)?))));
    let kept = plan.lines.iter().filter_map(|&i| {
        let ([item], _) = fields_named(loaded.lines[i].raw, [ITEM_FIELD])?;
        Some((i, Cow::Borrowed(item?)))
    });
    summaries.chain(kept).collect()
}

/// A compaction summary's line as a user message item.
fn summary_item(line: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Summary {
        message: Content,
    }
    #[derive(serde::Deserialize)]
    struct Content {
        content: Value,
    }
    let summary: Summary = serde_json::from_str(line).ok()?;
    let text = match summary.message.content {
        Value::String(text) => text,
        blocks => crate::message::shown_text(&blocks),
    };
    Some(serde_json::json!({ "role": "user", "content": text }).to_string())
}
