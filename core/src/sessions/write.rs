//! The write path: every line Mneme writes goes through [`Sessions::write`], under the
//! session's lock, in the session's own dialect.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::Sessions;
use super::{OpenSession, Parts, group_sessions, only_last_part_grew, state_of, with_loaded};
use crate::dialect::canonical;
use crate::dialect::{self, Dialect, Header, TakenIds};
use crate::error::Error;
use crate::format::{Format, Marker};
use crate::keys;
use crate::message::Role;
use crate::message::calls::{self, PendingCalls};
use crate::message::{AgentRef, Message, Turn, input};
use crate::scan;
use crate::storage::{Storage, StorageError};
use crate::support::ids::derived_id;
use crate::support::time;
use crate::transcript::Entry;

/// A message to append. The host supplies the id and the time: the core has neither
/// a random source nor a clock.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
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

/// What a write must find under the lock, or be refused as [`Error::StalePlan`]: the
/// session as a plan saw it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Expect<'a> {
    pub bytes: u64,
    pub leaf: Option<&'a str>,
}

/// Where a record goes in the conversation: the id it chains to, whether the
/// conversation is a sub-agent's (its lines are sidechain lines), and the tool calls
/// its results may answer.
#[derive(Clone, Copy)]
pub(crate) struct At<'a> {
    pub parent: Option<&'a str>,
    pub sidechain: bool,
    pub calls: &'a PendingCalls,
    /// The session's ids, in a dialect whose ids may clash.
    pub taken: Option<TakenIds<'a>>,
    /// The folder the session last worked in, for a line given none.
    pub cwd: &'a str,
    /// The sizes of the session's parts before the record, part 1 first: what this
    /// write follows.
    pub sizes: &'a [u64],
}

impl<'a> At<'a> {
    /// The header of a line; `cwd` empty: the session's own (an agent loop that does
    /// not say where it works still works where it did).
    pub fn header(self, session_id: &'a str, uuid: &'a str, now_ms: i64, timestamp: &'a str, cwd: &'a str) -> Header<'a> {
        Header {
            session_id,
            parent: self.parent,
            sidechain: self.sidechain,
            uuid,
            now_ms,
            timestamp,
            cwd: if cwd.is_empty() { self.cwd } else { cwd },
            agent_id: None,
            taken: self.taken,
        }
    }
}

/// How a record is written.
#[derive(Clone, Copy)]
pub(crate) struct WriteOptions<'a> {
    /// The working directory a new session is filed under (none: the session must exist).
    pub cwd: Option<&'a str>,
    /// What the session must look like under the lock (a plan's view of it).
    pub expect: Option<Expect<'a>>,
    /// Chain to an earlier entry instead of the newest leaf.
    pub from: Option<Rewind<'a>>,
    pub kind: Kind,
}

/// Where a rewound turn continues: the entry it chains to, and the calls pending there.
#[derive(Clone, Copy)]
pub(crate) struct Rewind<'a> {
    pub parent: &'a str,
    pub calls: &'a PendingCalls,
}

impl WriteOptions<'_> {
    pub const ENTRY: WriteOptions<'static> = WriteOptions { cwd: None, expect: None, from: None, kind: Kind::Entry };
}

/// What a line is for the write path: a compaction starts what resume loads, so the
/// size cap counts from it and never refuses it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Entry,
    Compaction,
    /// Tool results cleared without a summary: never refused for size, like a
    /// compaction (it shrinks what the model is sent), but the bytes resume loads still
    /// count from the last compaction, as a fresh read counts them.
    Prune,
}

/// What a record is written to: a session's parts (a new one begun past
/// `Limits::part_bytes`), or the one file of a sub-agent's transcript, `key`.
#[derive(Clone, Copy)]
enum Target<'a> {
    Session,
    Agent { key: &'a str, agent: &'a str },
}

impl<S: Storage> Sessions<'_, S> {
    /// Appends a message to session `id`, creating the session under the project of
    /// `entry.cwd` if it does not exist: a turn of one text message (see
    /// [`Sessions::append_turn`]).
    pub async fn append(&self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
        let messages = input::text_message(entry.role, &entry.text)?;
        let written = self.write_messages(id, &entry.uuid, entry.now_ms, &entry.cwd, None, &messages).await?;
        written.into_iter().next().ok_or_else(|| Error::InvalidArgument("internal: the message wrote no line".into()))
    }

    /// Appends a turn to session `id` in one write — one lock, one append, one sync —
    /// so all of it lands or none of it does. Creates the session under the project of
    /// `turn.cwd` if it does not exist. The messages chain to the conversation's newest
    /// leaf (or to `turn.parent`), in the session's dialect; every tool result must
    /// answer a call of the reply it follows, in the turn or pending in the session.
    /// Returns every line written, in order.
    pub async fn append_turn(&self, id: &str, turn: Turn) -> Result<Vec<Entry>, Error> {
        let messages = input::parse(turn.provider, &turn.messages)?;
        if let Some(agent) = &turn.agent {
            if turn.parent.is_some() {
                return Err(Error::InvalidArgument(
                    "a sub-agent's turn continues its own transcript: `parent` (a rewind) is for the session's own turns; leave it out"
                        .into(),
                ));
            }
            return self.append_agent_turn(id, agent, &turn, &messages).await;
        }
        let Some(parent) = &turn.parent else {
            return self.write_messages(id, &turn.uuid, turn.now_ms, &turn.cwd, None, &messages).await;
        };
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        let calls = with_loaded(&raw, |loaded| {
            let links = loaded.links();
            loaded.branch_point(parent, &links).map(|at| loaded.calls_at(at, &links)).map_err(|no| no.error(id, parent))
        })?;
        let rewind = Rewind { parent, calls: &calls };
        self.write_messages(id, &turn.uuid, turn.now_ms, &turn.cwd, Some(rewind), &messages).await
    }

    /// A turn of sub-agent `agent` of session `id`, into its own transcript (created
    /// with the first turn, and then linked from the session's call that started it).
    async fn append_agent_turn(&self, id: &str, agent: &AgentRef, turn: &Turn, messages: &[Message]) -> Result<Vec<Entry>, Error> {
        keys::validate_session_id(&agent.id).map_err(|error| match error {
            Error::InvalidSessionId { reason, .. } => Error::InvalidArgument(format!("invalid sub-agent id `{}`: {reason}", agent.id)),
            other => other,
        })?;
        if turn.uuid.is_empty() {
            return Err(Error::InvalidArgument("the entry's uuid is empty".into()));
        }
        let parts = self.require(id).await?;
        // The dialect of a session this store wrote is known; another's is told from its start.
        let known = self.state.open.borrow().get(id).map(|state| state.format);
        let format = match known {
            Some(format) => format,
            None => {
                let first = parts.parts.first().map(|p| p.key.clone()).unwrap_or_default();
                let head = self.base.storage.read(&first, 0, Some(64 << 10)).await?;
                // The window may cut a record short; for telling the dialect, its lines count.
                let head: Vec<u8> = head
                    .split(|&b| b == b'\n')
                    .flat_map(|line| line.strip_prefix(b" ").unwrap_or(line).iter().chain(b"\n"))
                    .copied()
                    .collect();
                with_loaded(core::slice::from_ref(&head), |loaded| Format::detect(&loaded.lines))
            }
        };
        if format != Format::Claude {
            return Err(crate::dialect::unsupported(format, "sub-agent transcripts (only Claude Code keeps them)"));
        }
        let key = format!("{}subagents/agent-{}{}", keys::session_dir(&parts.project, id), agent.id, keys::TRANSCRIPT_SUFFIX);
        let exists = self.base.storage.list(&key).await?.iter().any(|info| info.key == key);
        let timestamp = time::format_millis(turn.now_ms);
        // The link goes first: if the transcript's write then fails, a retry finds no
        // transcript and links again (rather than writing the sub-agent's lines
        // twice) — unless the link landed: its id is the turn's, and a second line of
        // that id would make the session's tree a loop. (Read only for a sub-agent's
        // first turn.)
        if let (false, Some(call)) = (exists, &agent.parent_call) {
            // A new transcript has no pending calls: refuse a turn it could not take
            // before linking it.
            calls::check_turn(messages, &PendingCalls::default(), false)?;
            let link_id = crate::support::ids::nth_uuid(&turn.uuid, u32::MAX);
            let raw = self.read_parts(&parts).await?;
            let linked = raw.iter().any(|bytes| memchr::memmem::find(bytes, link_id.as_bytes()).is_some());
            self.write(id, WriteOptions::ENTRY, |dialect, at| {
                if linked || at.parent == Some(link_id.as_str()) {
                    return Ok(String::new());
                }
                if at.calls.find(call).is_none() {
                    return Err(Error::InvalidArgument(format!(
                        "`{call}` is no pending tool call of session `{id}`: a sub-agent is linked from the call that started it, before its result is written"
                    )));
                }
                dialect.agent_link(&at.header(id, &link_id, turn.now_ms, &timestamp, &turn.cwd), &agent.id, call)
            })
            .await?;
        }
        let entries = self
            .base
            .locked(&key, async {
                let mut state = self.agent_state(&parts, &key).await?;
                // A sub-agent works where its session does: a line given no folder, in a
                // transcript that names none yet, names the session's.
                let session_cwd = if turn.cwd.is_empty() && state.cwd.is_empty() {
                    let raw = self.read_parts(&parts).await?;
                    with_loaded(&raw, |loaded| loaded.cwd().to_owned())
                } else {
                    String::new()
                };
                let cwd = if turn.cwd.is_empty() { session_cwd.as_str() } else { turn.cwd.as_str() };
                let target = Target::Agent { key: &key, agent: &agent.id };
                let written = self
                    .write_state(id, WriteOptions::ENTRY, target, &mut state, |_, at| {
                        calls::check_turn(messages, at.calls, false)?;
                        let header = Header {
                            sidechain: true,
                            agent_id: Some(&agent.id),
                            ..at.header(id, &turn.uuid, turn.now_ms, &timestamp, cwd)
                        };
                        Format::Claude.dialect().turn(&header, messages, at.calls)
                    })
                    .await;
                self.state.agents.borrow_mut().insert(key.clone(), state);
                written
            })
            .await?;
        Ok(entries)
    }

    async fn write_messages(
        &self,
        id: &str,
        uuid: &str,
        now_ms: i64,
        cwd: &str,
        from: Option<Rewind<'_>>,
        messages: &[Message],
    ) -> Result<Vec<Entry>, Error> {
        if uuid.is_empty() {
            return Err(Error::InvalidArgument("the entry's uuid is empty".into()));
        }
        let timestamp = time::format_millis(now_ms);
        let options = WriteOptions { cwd: Some(cwd), from, ..WriteOptions::ENTRY };
        self.write(id, options, |dialect, at| {
            calls::check_turn(messages, at.calls, from.is_some())?;
            dialect.turn(&at.header(id, uuid, now_ms, &timestamp, cwd), messages, at.calls)
        })
        .await
    }

    /// Soft-deletes entry `uuid` of session `id` by appending a tombstone in the
    /// session's dialect; the entry stays in the file and disappears from every load.
    /// Fails with [`Error::EntryNotFound`] if no live entry has that uuid, and with
    /// [`Error::Unsupported`] for a dialect without tombstones (crab).
    pub async fn tombstone(&self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        let live = with_loaded(&raw, |loaded| loaded.lines.iter().any(|l| l.env.uuid() == Some(uuid) && loaded.is_live(l)));
        if !live {
            return Err(Error::EntryNotFound { id: id.to_owned(), uuid: uuid.to_owned() });
        }
        let timestamp = time::format_millis(now_ms);
        self.write(id, WriteOptions::ENTRY, |dialect, at| {
            let line_id = derived_id(&["tombstone", id, uuid, at.parent.unwrap_or_default()], now_ms);
            let header = at.header(id, &line_id, now_ms, &timestamp, "");
            dialect.tombstone(&header, uuid)
        })
        .await?;
        Ok(())
    }

    /// Records one of Mneme's bookkeeping markers in session `id`, in its dialect.
    pub(crate) async fn record_marker(&self, id: &str, marker: Marker, reason: Option<&str>, now_ms: i64) -> Result<(), Error> {
        let timestamp = time::format_millis(now_ms);
        self.write(id, WriteOptions::ENTRY, |dialect, at| {
            let line_id = derived_id(&[marker.kind(), id, at.parent.unwrap_or_default()], now_ms);
            let header = at.header(id, &line_id, now_ms, &timestamp, "");
            dialect.marker(&header, marker, reason)
        })
        .await?;
        Ok(())
    }

    /// Writes one record (one or more lines) to session `id` under its lock: refreshes
    /// what the store knows, moves a torn tail aside, checks `expect`, rolls over to a
    /// new part or refuses at the cap, then appends. `line` builds the JSON in the
    /// session's dialect from the id the record chains to. Returns the record's first
    /// lines as entries.
    pub(crate) async fn write(
        &self,
        id: &str,
        options: WriteOptions<'_>,
        line: impl FnOnce(&dyn Dialect, At) -> Result<String, Error>,
    ) -> Result<Vec<Entry>, Error> {
        // A session this store has written to is not looked for again: its project is
        // known, and `refresh` lists its parts under the lock anyway.
        let known = self.state.open.borrow().get(id).map(|s| s.project.clone());
        let located = match known {
            Some(project) => Some(project),
            None => self.locate(id).await?.map(|parts| parts.project),
        };
        let project = match located {
            Some(project) => project,
            None => {
                let cwd = options
                    .cwd
                    .filter(|c| !c.is_empty())
                    .ok_or_else(|| Error::InvalidArgument("a new session needs the working directory (cwd) to name its project".into()))?;
                let project = keys::project_dir_name(cwd);
                keys::validate_project(&project)?;
                project
            }
        };
        let base = keys::session_key(&project, id);
        self.base.locked(&base, self.write_locked(id, &project, &base, options, line)).await
    }

    /// [`Sessions::write`] with the session's lock (`base`) taken by the caller.
    pub(super) async fn write_locked(
        &self,
        id: &str,
        project: &str,
        base: &str,
        options: WriteOptions<'_>,
        line: impl FnOnce(&dyn Dialect, At) -> Result<String, Error>,
    ) -> Result<Vec<Entry>, Error> {
        // Out of the cache until the write is done: a future dropped mid-append leaves
        // no state behind, and the next write reads the session again.
        let mut state = self.refresh(id, project, base).await?;
        let written = self.write_state(id, options, Target::Session, &mut state, line).await;
        self.state.open.borrow_mut().insert(id.to_owned(), state);
        written
    }

    /// [`Sessions::write_locked`] on the state of `target` (a session, or a sub-agent's
    /// transcript), which it moves past the record.
    async fn write_state(
        &self,
        id: &str,
        options: WriteOptions<'_>,
        target: Target<'_>,
        state: &mut OpenSession,
        line: impl FnOnce(&dyn Dialect, At) -> Result<String, Error>,
    ) -> Result<Vec<Entry>, Error> {
        if state.without_ids {
            return Err(crate::dialect::unsupported(
                Format::Pi,
                "a new entry in a session of pi's format v1, whose entries have no ids to chain to (open it in pi once so it migrates, or `mneme import` it, which migrates it)",
            ));
        }
        let kind = options.kind;
        let total = state.sizes.iter().fold(0u64, |sum, size| sum.saturating_add(*size));
        if let Some(expect) = options.expect
            && (expect.bytes != total || expect.leaf != state.tip.leaf.as_deref())
        {
            return Err(Error::StalePlan { id: id.to_owned(), uuid: expect.leaf.unwrap_or_default().to_owned() });
        }
        let taken = (state.format == Format::Pi).then_some(TakenIds { ids: &state.ids, leaf: state.tip.leaf.as_deref() });
        let at = match options.from {
            Some(from) => At {
                parent: Some(from.parent),
                sidechain: state.tip.sidechain_only(),
                calls: from.calls,
                taken,
                cwd: &state.cwd,
                sizes: &state.sizes,
            },
            None => At {
                parent: state.tip.leaf.as_deref(),
                sidechain: state.tip.sidechain_only(),
                calls: &state.tip.calls,
                taken,
                cwd: &state.cwd,
                sizes: &state.sizes,
            },
        };
        let json = line(state.format.dialect(), at)?;
        if json.is_empty() {
            return Ok(Vec::new());
        }
        // The record is the lines and a newline, after one ending the part's last line
        // if that has none: the lines are a slice of it.
        let (mut record, found) = self.record_of(json);
        let separator = usize::from(state.unterminated);
        if state.unterminated {
            record.insert(0, '\n');
        }
        record.push('\n');
        let json = &record[separator..record.len() - 1];
        let record_len = record.len() as u64;
        let (bytes, limit) = (state.since_compaction, self.base.limits.total_bytes);
        if kind == Kind::Entry && bytes.saturating_add(record_len) > limit {
            return Err(match target {
                Target::Session => Error::SessionFull { id: id.to_owned(), bytes, limit },
                Target::Agent { agent, .. } => Error::SubagentFull { id: id.to_owned(), agent: agent.to_owned(), bytes, limit },
            });
        }
        let last = state.sizes.len().max(1);
        let last_size = state.sizes.get(last - 1).copied().unwrap_or(0);
        let rolls_over =
            matches!(target, Target::Session) && last_size > 0 && last_size.saturating_add(record_len) > self.base.limits.part_bytes;
        // A new part starts with the record's lines: no line of the last part to end.
        let (part, record) = if rolls_over { (last as u32 + 1, &record[separator..]) } else { (last as u32, &record[..]) };
        let key = match target {
            Target::Session => keys::part_key(&state.project, id, part),
            Target::Agent { key, .. } => key.to_owned(),
        };
        let line_no = if part as usize > state.sizes.len() { 1 } else { state.last_part_lines + 1 };
        let text = scan::decode_str(json);
        let written = read_back(part, &text)?;
        let line_count = written.len();
        if kind == Kind::Entry {
            refuse_repeat(id, &written, state.tip.leaf.as_deref())?;
        }
        // A typed refusal (quota, read-only, lock) wrote nothing, by the storage
        // contract: the state is still known. After an I/O error whether the append
        // landed is unknown, and a storage may still complete it later: the session
        // takes no write until it is reopened.
        let new_size = self.base.storage.append(&key, record.as_bytes()).await.inspect_err(|error| {
            state.poisoned |= matches!(error, StorageError::Io { .. });
        })?;
        state.sizes.resize(part as usize, 0);
        state.sizes[part as usize - 1] = new_size;
        state.last_part_lines = line_no.saturating_add((line_count - 1) as u32);
        state.unterminated = false;
        state.since_compaction = match kind {
            Kind::Compaction => json.len() as u64 + 1,
            Kind::Entry | Kind::Prune => state.since_compaction.saturating_add(record_len),
        };
        // The lines just written move the tip by the same rule a fresh load uses; their
        // messages are read once, for the tip and the entries returned.
        state.follow(&written);
        let messages = read_messages(&written);
        state.stale = !state.tip.advance_with(&written, |i, line| canonical::activity_read(line, messages.get(i).and_then(Option::as_ref)));
        Ok(written_entries(&written, &messages, line_no, &found))
    }

    /// The lines of a record as they are written: its secrets taken out, each line but
    /// the last marked as continued; and what was taken out of each line.
    pub(crate) fn record_of(&self, lines: String) -> (String, Vec<crate::redact::Found>) {
        let (clean, found) = self.base.redaction().json_lines(&lines);
        (scan::mark_continued(clean.unwrap_or(lines)), found)
    }

    /// Brings the store's knowledge of session `id` up to date with storage (another
    /// process may have written) and moves a torn last line aside, keeping it as
    /// `<part>.torn-<offset>`. Called with the session's lock held. The state is taken
    /// out of the store's cache; the caller puts it back. `base` is the session's key
    /// (its lock's name).
    async fn refresh(&self, id: &str, project: &str, base: &str) -> Result<OpenSession, Error> {
        if self.state.open.borrow().get(id).is_some_and(|s| s.poisoned) {
            return Err(Error::SessionPoisoned { id: id.to_owned() });
        }
        let cached = self.state.open.borrow_mut().remove(id);
        // A held session has had no other writer since this store last wrote it.
        let cached = match cached {
            Some(state) if !state.stale && state.torn_at.is_none() && self.base.holds(base) => {
                return Ok(state);
            }
            cached => cached,
        };
        let listing = self.base.storage.list(&format!("{}{project}/{id}", keys::PROJECTS)).await?;
        let parts = group_sessions(&listing).remove(&(project.to_owned(), id.to_owned())).unwrap_or_default();
        // A new session, or one this store knew that another process has archived
        // since (a server's cached session, a nightly `gc`): not begun again under an
        // archived id.
        if parts.is_empty() {
            self.refuse_archived(id).await?;
        }
        let parts = Parts { project: project.to_owned(), id: id.to_owned(), parts: parts.into_iter().map(|(_, info)| info).collect() };
        self.catch_up_state(cached, &parts).await
    }

    /// The state of the sub-agent transcript `key` of the session `session`, under the
    /// transcript's lock: the one this store wrote last when the file is still the size
    /// it left it, caught up when only appended to since, read in full otherwise (or
    /// when it is new). A torn tail is moved aside.
    async fn agent_state(&self, session: &Parts, key: &str) -> Result<OpenSession, Error> {
        if self.state.agents.borrow().get(key).is_some_and(|s| s.poisoned) {
            return Err(Error::SessionPoisoned { id: session.id.clone() });
        }
        let cached = self.state.agents.borrow_mut().remove(key);
        let listing = self.base.storage.list(key).await?;
        // Named by the session: a transcript gone since the listing went with it.
        let parts = Parts {
            project: session.project.clone(),
            id: session.id.clone(),
            parts: listing.into_iter().filter(|info| info.key == key).collect(),
        };
        self.catch_up_state(cached, &parts).await
    }

    /// `cached`, the state last known of `parts`, brought up to date with them as
    /// listed now (see [`Sessions::refresh`]).
    async fn catch_up_state(&self, cached: Option<OpenSession>, parts: &Parts) -> Result<OpenSession, Error> {
        let project = parts.project.as_str();
        let sizes = parts.sizes();
        let mut state = match cached.filter(|s| !s.stale) {
            Some(state) if state.sizes == sizes => return Ok(state),
            Some(state) if only_last_part_grew(&state.sizes, &sizes) && !state.unterminated => match self.catch_up(parts, state).await? {
                Some(state) => state,
                None => state_of(project, &self.read_parts(parts).await?),
            },
            _ => state_of(project, &self.read_parts(parts).await?),
        };
        if let (Some(offset), Some(part)) = (state.torn_at.take(), parts.parts.last()) {
            self.move_torn_tail(&part.key, offset, None).await?;
            if let Some(size) = state.sizes.last_mut() {
                *size = offset;
            }
            state.last_part_lines = state.last_part_lines.saturating_sub(state.torn_lines);
        }
        Ok(state)
    }

    /// Reads session `id` into the open-session cache (moving a torn tail aside), for a
    /// session just taken with [`Sessions::hold`].
    pub(crate) async fn refresh_held(&self, id: &str, project: &str) -> Result<(), Error> {
        if let Some(state) = self.state.open.borrow_mut().get_mut(id) {
            state.stale = true;
        }
        let state = self.refresh(id, project, &keys::session_key(project, id)).await?;
        self.state.open.borrow_mut().insert(id.to_owned(), state);
        Ok(())
    }

    /// Saves the fragment from `offset` to the end of `key` (or `len` bytes of it: the
    /// end its caller saw) beside it, then cuts it off. Saved first: a crash in between leaves the fragment in both places, and
    /// the next append finds the same fragment already saved. A different fragment
    /// torn at the same offset later gets a name of its own.
    pub(super) async fn move_torn_tail(&self, key: &str, offset: u64, len: Option<u64>) -> Result<(), Error> {
        let fragment = self.base.storage.read(key, offset, len).await?;
        let base = format!("{key}.torn-{offset}");
        let taken = self.base.storage.list(&base).await?;
        let mut name = base.clone();
        let mut saved_now = false;
        for n in 1u32.. {
            match taken.iter().find(|info| info.key == name) {
                None => {
                    self.base.storage.replace(&name, &fragment, None).await?;
                    saved_now = true;
                    break;
                }
                Some(info) if info.size == fragment.len() as u64 && self.base.storage.read(&name, 0, None).await? == fragment => break,
                Some(_) => name = format!("{base}.{n}"),
            }
        }
        // Programs that take no lock Mneme sees (Claude Code) may still be writing
        // the "torn" line: if the part grew since it was read, nothing is cut.
        let size = offset.saturating_add(fragment.len() as u64);
        let cut = self.base.storage.truncate(key, offset, size).await;
        if saved_now && matches!(cut, Err(StorageError::Changed { .. })) {
            // The copy is of a line that was still being written; it is not torn. (After
            // any other failure the cut may have happened, so the copy stays.)
            let _ = self.base.storage.remove(&name).await;
        }
        Ok(cut?)
    }

    /// Reads only what another writer appended to the last part since `state` and
    /// updates it; `None` when the new lines need a full read to follow.
    async fn catch_up(&self, parts: &Parts, mut state: OpenSession) -> Result<Option<OpenSession>, Error> {
        let (Some(last), Some(&old_size)) = (parts.parts.last(), state.sizes.last()) else { return Ok(None) };
        let delta = self.base.storage.read(&last.key, old_size, None).await?;
        let text = scan::decode(&delta);
        let scan = scan::scan_part(parts.parts.len() as u32, &delta, &text);
        if !state.tip.advance(&scan.lines) || scan.lines.iter().any(|l| dialect::is_compaction(&l.env)) {
            return Ok(None);
        }
        state.follow(&scan.lines);
        state.sizes = parts.sizes();
        state.last_part_lines += scan.line_count;
        state.unterminated = scan.unterminated && scan.torn_at.is_none();
        state.torn_at = scan.torn_at.map(|at| old_size + at);
        state.torn_lines = scan.torn_lines;
        // A torn fragment is moved aside before the next write: what resume loads ends before it.
        let landed = scan.torn_at.unwrap_or(delta.len() as u64);
        state.since_compaction = state.since_compaction.saturating_add(landed);
        Ok(Some(state))
    }
}

/// The lines of a record about to be written, read as a load will read them. This is
/// also the check that every line is a JSON object (lines are built by hand, blocks
/// copied in as they came): a record with one that is not writes nothing.
fn read_back(part: u32, text: &str) -> Result<Vec<scan::Line<'_>>, Error> {
    scan::read_record(part, text)
        .map_err(|reason| Error::InvalidArgument(format!("internal: a line to write is not a JSON object ({reason}); nothing was written")))
}

/// Refuses a retry of a write that landed (whole, then reported failure): its lines
/// would be there twice, and a second line with the leaf's id would make the tree a
/// loop.
fn refuse_repeat(id: &str, lines: &[scan::Line<'_>], leaf: Option<&str>) -> Result<(), Error> {
    if leaf.is_some() && lines.iter().any(|line| line.env.uuid() == leaf) {
        return Err(Error::InvalidArgument(format!(
            "session `{id}` already ends with an entry of this id: the write landed before, and is not repeated; use fresh ids for a new one"
        )));
    }
    Ok(())
}

/// The entries of lines just written, numbered from `first_line`, each with what
/// redaction took out of it.
fn written_entries(lines: &[scan::Line<'_>], messages: &[ReadMessage<'_>], first_line: u32, found: &[crate::redact::Found]) -> Vec<Entry> {
    lines
        .iter()
        .zip(messages)
        .zip(first_line..)
        .map(|((line, message), number)| Entry {
            line: number,
            redacted: crate::redact::report_of(found, line.line),
            ..line.to_entry_read(message.as_ref())
        })
        .collect()
}

/// A written line's message as [`scan::parse_message_content`] reads it.
type ReadMessage<'a> = Option<(scan::Message<'a>, Option<scan::Content<'a>>)>;

/// The messages of lines just written, each read once.
fn read_messages<'a>(lines: &[scan::Line<'a>]) -> Vec<ReadMessage<'a>> {
    lines.iter().map(|line| line.env.message.and_then(scan::parse_message_content)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::InMemoryStorage;
    use crate::{Storage, block_on};

    /// Lines built by hand are checked by the record's read-back: one that is not a
    /// JSON object writes nothing, and the session takes the next record.
    #[test]
    fn a_record_with_a_line_that_is_not_an_object_writes_nothing() {
        let storage = InMemoryStorage::new();
        let store = crate::Store::new(&storage);
        let options = WriteOptions { cwd: Some("/p"), ..WriteOptions::ENTRY };
        for bad in ["not json", "[1,2]", "{\"type\":\"user\"}\n{\"type\":", "{\"a\":1}{\"b\":2}"] {
            let refused = block_on(store.sessions().write("s", options, |_, _| Ok(String::from(bad))));
            assert!(matches!(&refused, Err(Error::InvalidArgument(m)) if m.contains("not a JSON object")), "{bad}: {refused:?}");
            assert!(block_on(storage.list("projects/")).unwrap().is_empty(), "{bad}: written");
        }
        let written =
            block_on(store.sessions().write("s", options, |_, _| Ok(String::from("{\"type\":\"user\",\"uuid\":\"u1\"}")))).unwrap();
        assert_eq!(written.len(), 1);
    }
}
