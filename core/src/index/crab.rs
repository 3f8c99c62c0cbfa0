//! crab's session files (seed 004), kept by Mneme the way crab names them and without
//! ever rewriting one.
//!
//! A crab session is `{agent}_{sender_slug}_{seq}.jsonl` in a flat folder (here: a
//! project, `crab` unless the caller names another), `_{title_slug}` appended to the
//! name once it has a title. Its first line is the meta line `{"agent", "created_by",
//! "created_at", "title", "uptime_secs"}`. crab rewrites the whole file to update that
//! line (a crash there loses the file); Mneme appends a new meta line instead, and the
//! newest meta line is the session's meta. Naming a session renames its file, which
//! crab does too: a rename is atomic, and nothing in the file changes but the appended
//! meta line.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};

use super::Index;
use crate::error::Error;
use crate::keys;
use crate::sessions::write::WriteOptions;
use crate::storage::Storage;
use crate::support::time;

/// The project crab sessions are kept in when the caller names none.
pub const DEFAULT_PROJECT: &str = "crab";
/// The longest slug a name gets from a sender or a title.
const MAX_SLUG: usize = 40;

/// A crab session: its name's parts and its newest meta line.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CrabSession {
    /// The session id: the file name without `.jsonl`.
    pub id: String,
    pub project: String,
    pub agent: String,
    /// The sender as the name has it (slugged).
    pub sender: String,
    pub seq: u64,
    pub title: String,
    pub created_by: String,
    pub created_at: String,
    pub uptime_secs: u64,
}

#[derive(serde::Serialize, serde::Deserialize, Default)]
#[serde(default)]
struct Meta {
    agent: String,
    created_by: String,
    created_at: String,
    title: String,
    uptime_secs: u64,
}

impl From<&CrabSession> for Meta {
    fn from(session: &CrabSession) -> Self {
        Meta {
            agent: session.agent.clone(),
            created_by: session.created_by.clone(),
            created_at: session.created_at.clone(),
            title: session.title.clone(),
            uptime_secs: session.uptime_secs,
        }
    }
}

/// `text` as a name segment: lowercase ASCII letters and digits, anything else one
/// `-`, none at either end, at most `MAX_SLUG` bytes (`Tg 12345` → `tg-12345`).
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= MAX_SLUG {
            break;
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// The parts of a crab session id: agent, sender slug, seq, title slug.
fn parse_name(id: &str) -> Option<(&str, &str, u64, &str)> {
    let (agent, rest) = id.split_once('_')?;
    let (sender, rest) = rest.split_once('_')?;
    let (seq, title) = rest.split_once('_').unwrap_or((rest, ""));
    let seq = seq.parse().ok().filter(|_| !seq.starts_with('+'))?;
    Some((agent, sender, seq, title))
}

fn check_agent(agent: &str) -> Result<(), Error> {
    if agent.is_empty() || !agent.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(Error::InvalidArgument(format!(
            "crab agent name `{agent}` must be ASCII letters, digits and '-' (it starts the file name, before `_`)"
        )));
    }
    Ok(())
}

fn sender_slug(sender: &str) -> Result<String, Error> {
    let slug = slug(sender);
    if slug.is_empty() {
        return Err(Error::InvalidArgument(format!("sender `{sender}` has no letter or digit to name a crab session by")));
    }
    Ok(slug)
}

impl<S: Storage> Index<'_, S> {
    /// The newest crab session of `agent` with `sender` in `project` (crab's
    /// `find_latest_session`: the highest seq), if there is one. No project is
    /// [`DEFAULT_PROJECT`].
    pub async fn crab_latest(&self, project: Option<&str>, agent: &str, sender: &str) -> Result<Option<CrabSession>, Error> {
        let project = project.unwrap_or(DEFAULT_PROJECT);
        keys::validate_project(project)?;
        check_agent(agent)?;
        let sender = sender_slug(sender)?;
        let prefix = format!("{}{project}/{agent}_{sender}_", keys::PROJECTS);
        let latest = self
            .sessions
            .base
            .storage
            .list(&prefix)
            .await?
            .into_iter()
            .filter_map(|info| {
                let parsed = keys::parse_session_key(&info.key)?;
                let (a, s, seq, _) = parse_name(parsed.id)?;
                (a == agent && s == sender && parsed.part == 1).then(|| (seq, parsed.id.to_owned()))
            })
            .max();
        match latest {
            Some((_, id)) => Ok(Some(self.crab_show(&id).await?)),
            None => Ok(None),
        }
    }

    /// Starts the next crab session of `agent` with `sender` in `project` (no project:
    /// [`DEFAULT_PROJECT`]): seq one past the latest (1 for the first), its meta line
    /// written.
    pub async fn crab_start(
        &self,
        project: Option<&str>,
        agent: &str,
        sender: &str,
        created_by: &str,
        now_ms: i64,
    ) -> Result<CrabSession, Error> {
        let project = project.unwrap_or(DEFAULT_PROJECT);
        let slug = sender_slug(sender)?;
        let live = self.crab_latest(Some(project), agent, sender).await?.map(|s| s.seq);
        // An archived session keeps its seq: the next one starts past it, not under its
        // id (which would be refused as archived, every time).
        let archived = self
            .sessions
            .archived()
            .await?
            .into_iter()
            .filter(|a| a.project == project)
            .filter_map(|a| parse_name(&a.id).filter(|(a, s, _, _)| *a == agent && *s == slug).map(|(_, _, seq, _)| seq))
            .max();
        let seq = live.max(archived).map_or(1, |seq| seq.saturating_add(1));
        let id = format!("{agent}_{slug}_{seq}");
        let meta =
            Meta { agent: agent.to_owned(), created_by: created_by.to_owned(), created_at: time::format_millis(now_ms), ..Meta::default() };
        let line = serde_json::to_string(&meta).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        self.sessions.create_session(project, &id, &line).await?;
        self.crab_show(&id).await
    }

    /// Crab session `id` as its name and newest meta line say.
    pub async fn crab_show(&self, id: &str) -> Result<CrabSession, Error> {
        let parts = self.sessions.require(id).await?;
        let (agent, sender, seq, _) =
            parse_name(id).ok_or_else(|| Error::InvalidArgument(format!("`{id}` is not a crab session name (<agent>_<sender>_<seq>)")))?;
        let raw = self.sessions.read_parts(&parts).await?;
        // The newest meta line: the last line with an `agent`.
        let meta = raw
            .iter()
            .rev()
            .flat_map(|bytes| bytes.split(|&b| b == b'\n').rev())
            .filter_map(|line| serde_json::from_slice::<Meta>(line).ok())
            .find(|meta| !meta.agent.is_empty())
            .unwrap_or_default();
        Ok(CrabSession {
            id: id.to_owned(),
            project: parts.project,
            agent: agent.to_owned(),
            sender: sender.to_owned(),
            seq,
            title: meta.title,
            created_by: meta.created_by,
            created_at: meta.created_at,
            uptime_secs: meta.uptime_secs,
        })
    }

    /// Titles crab session `id`: its file is renamed `{agent}_{sender}_{seq}_{slug}`
    /// (crab's `set_title`) and a meta line with the title appended. Returns the session
    /// under its new id.
    pub async fn crab_set_title(&self, id: &str, title: &str) -> Result<CrabSession, Error> {
        let session = self.crab_show(id).await?;
        // The title names the file too: a secret in it is taken out before either.
        let redacted = self.sessions.base.redaction().text(title, &mut crate::redact::Found::default());
        let title = redacted.as_deref().unwrap_or(title);
        let title_slug = slug(title);
        let new_id = if title_slug.is_empty() {
            format!("{}_{}_{}", session.agent, session.sender, session.seq)
        } else {
            format!("{}_{}_{}_{title_slug}", session.agent, session.sender, session.seq)
        };
        let parts = self.sessions.require(id).await?;
        if parts.parts.len() > 1 {
            return Err(Error::InvalidArgument(format!("crab session `{id}` has several parts; crab keeps one file per session")));
        }
        // Refused before the title is written, so a refusal changes nothing.
        if new_id != id && self.sessions.locate(&new_id).await?.is_some() {
            return Err(Error::SessionExists { id: new_id });
        }
        self.append_meta(id, &Meta { title: title.to_owned(), ..Meta::from(&session) }).await?;
        if new_id != id {
            let (from, to) = (parts.base_key(), keys::session_key(&parts.project, &new_id));
            self.sessions.base.locked(&from, async { Ok(self.sessions.base.storage.rename(&from, &to).await?) }).await?;
            self.sessions.reopen(id);
        }
        self.crab_show(&new_id).await
    }

    /// Adds `secs` of activity to crab session `id`'s `uptime_secs`, as an appended
    /// meta line with the new total (crab rewrites its first line instead).
    pub async fn crab_add_uptime(&self, id: &str, secs: u64) -> Result<CrabSession, Error> {
        let session = self.crab_show(id).await?;
        self.append_meta(id, &Meta { uptime_secs: session.uptime_secs.saturating_add(secs), ..Meta::from(&session) }).await?;
        self.crab_show(id).await
    }

    /// Through the write path, so a torn tail is moved aside first and the line never
    /// fuses with it.
    async fn append_meta(&self, id: &str, meta: &Meta) -> Result<(), Error> {
        let line = serde_json::to_string(meta).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        self.sessions.write(id, WriteOptions::ENTRY, |_, _| Ok(line)).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_names() {
        assert_eq!(slug("Tg 12345"), "tg-12345");
        assert_eq!(slug("  Plan: the launch!! "), "plan-the-launch");
        assert_eq!(slug("日本"), "");
        assert_eq!(parse_name("crab_tg-1_12"), Some(("crab", "tg-1", 12, "")));
        assert_eq!(parse_name("crab_user_3_plan-the-launch"), Some(("crab", "user", 3, "plan-the-launch")));
        assert_eq!(parse_name("crab_user_x"), None);
        assert_eq!(parse_name("crab_user_+3"), None);
    }
}
