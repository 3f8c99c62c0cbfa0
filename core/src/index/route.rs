//! Routing an inbound message: its session key, and whether the key continues its
//! session or starts a new one (a `/new` or `/reset`, an idle or daily reset, an
//! expired session) — a pure decision with its reason, which the store then records.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::sessionkey::{self, KeyInput};
use super::{ChatType, Field, KeyEntry, Origin, merge_fields};
use crate::error::Error;
use crate::gates::{self, ResetCause, ResetPolicy};

/// How direct messages are bucketed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DmScope {
    /// Every direct chat of an agent continues one conversation (its main key).
    #[default]
    Main,
    /// One conversation per peer.
    // The JavaScript and Python packages give every WIT enum's case in snake_case.
    #[serde(alias = "per_peer")]
    PerPeer,
    /// One conversation per provider and peer.
    #[serde(alias = "per_provider_peer")]
    PerProviderPeer,
}

impl DmScope {
    pub fn as_str(self) -> &'static str {
        match self {
            DmScope::Main => "main",
            DmScope::PerPeer => "per-peer",
            DmScope::PerProviderPeer => "per-provider-peer",
        }
    }

    pub fn parse(text: &str) -> Result<DmScope, Error> {
        [DmScope::Main, DmScope::PerPeer, DmScope::PerProviderPeer].into_iter().find(|s| s.as_str() == text).ok_or_else(|| {
            Error::InvalidArgument(format!("unknown direct-message scope `{text}`: use main, per-peer or per-provider-peer"))
        })
    }
}

/// A message arriving for an agent.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Inbound {
    /// The agent it is for (`main` when none).
    pub agent: Option<String>,
    pub chat_type: ChatType,
    /// The messaging provider (`telegram`, `slack`, …); needed for groups, channels,
    /// rooms and per-provider direct chats.
    pub provider: Option<String>,
    /// Who or where: the peer of a direct chat, the group, channel or room id, the
    /// cron job, the hook id.
    pub id: Option<String>,
    pub thread: Option<String>,
    /// The message: a reset command (`/new`, `/reset`) at its start is taken out.
    pub text: String,
    /// Labels kept on the key (an empty field leaves the key's as it is).
    pub origin: Origin,
    /// Fields the key can be looked up by; set on the key (an empty value removes one).
    pub metadata: Vec<Field>,
}

/// A reset policy for one kind of conversation or one provider.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResetOverride {
    /// Applies to this chat type (`None`: any).
    pub chat_type: Option<ChatType>,
    /// Applies to this provider (`None`: any). A provider's override wins over a chat
    /// type's, which wins over the default.
    pub provider: Option<String>,
    pub policy: ResetPolicy,
}

/// How inbound messages map to keys and when a key starts anew. In JSON, a field
/// left out keeps its default; a `reset` given is whole (what it leaves out is off).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoutePolicy {
    /// The key of an agent's direct chats under [`DmScope::Main`] (`main`).
    pub main_key: String,
    pub dm_scope: DmScope,
    /// When a key's session is left for a new one (OpenClaw's default: daily at 04:00).
    pub reset: ResetPolicy,
    pub overrides: Vec<ResetOverride>,
    /// Commands that start a new session when a message begins with them.
    pub reset_commands: Vec<String>,
}

impl Default for RoutePolicy {
    fn default() -> Self {
        Self {
            main_key: sessionkey::DEFAULT_MAIN_KEY.into(),
            dm_scope: DmScope::Main,
            reset: ResetPolicy { daily_reset_hour: Some(4), ..ResetPolicy::default() },
            overrides: Vec::new(),
            reset_commands: vec!["/new".into(), "/reset".into()],
        }
    }
}

impl RoutePolicy {
    /// The reset policy for a conversation: the provider's override, else the chat
    /// type's, else the default.
    pub fn reset_for(&self, chat_type: ChatType, provider: Option<&str>) -> &ResetPolicy {
        let by_provider = self.overrides.iter().find(|o| {
            o.provider.as_deref().is_some_and(|p| provider.is_some_and(|given| given.eq_ignore_ascii_case(p)))
                && o.chat_type.is_none_or(|t| t == chat_type)
        });
        let by_type = || self.overrides.iter().find(|o| o.provider.is_none() && o.chat_type == Some(chat_type));
        by_provider.or_else(by_type).map_or(&self.reset, |o| &o.policy)
    }
}

/// What happened to the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResolveAction {
    /// The key is new: it starts its first session.
    Created,
    /// The key continues its session.
    Continued,
    /// The message asked for a new session (`/new`, `/reset`), or the caller did.
    Reset,
    /// The session had been idle past the limit.
    Idle,
    /// The daily reset hour passed since the last message.
    Daily,
    /// The session had outlived its time to live.
    Expired,
}

impl From<ResetCause> for ResolveAction {
    fn from(cause: ResetCause) -> Self {
        match cause {
            ResetCause::Expired => ResolveAction::Expired,
            ResetCause::Daily => ResolveAction::Daily,
            ResetCause::Idle => ResolveAction::Idle,
        }
    }
}

/// Where an inbound message goes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Resolution {
    pub key: String,
    /// The session to append the message to (it may not exist yet).
    pub session_id: String,
    pub action: ResolveAction,
    pub reason: String,
    /// The session the key continued before, when this message starts a new one.
    pub previous_session_id: Option<String>,
    /// The message without a reset command at its start.
    pub text: String,
}

/// The message without a leading reset command, if it has one: `/new`, `/new hi`
/// (then `hi` is the message), `/NEW`; not `/newer`.
fn strip_reset_command<'t>(text: &'t str, commands: &[String]) -> Option<&'t str> {
    let trimmed = text.trim_start();
    commands.iter().find_map(|command| {
        let head = trimmed.get(..command.len())?;
        let rest = &trimmed[command.len()..];
        (head.eq_ignore_ascii_case(command) && (rest.is_empty() || rest.starts_with(char::is_whitespace))).then(|| rest.trim_start())
    })
}

/// The session key of an inbound message.
pub fn key_of(inbound: &Inbound, policy: &RoutePolicy) -> Result<String, Error> {
    sessionkey::build(&KeyInput {
        agent: inbound.agent.as_deref(),
        chat_type: inbound.chat_type,
        provider: inbound.provider.as_deref(),
        id: inbound.id.as_deref(),
        thread: inbound.thread.as_deref(),
        main_key: &policy.main_key,
        dm_scope: policy.dm_scope,
    })
}

/// Decides where `inbound` (whose key is `key`, see [`key_of`]) goes given the key's
/// current entry, and the entry to record: `new_session_id` is used when a new
/// session starts.
pub fn decide(
    key: String,
    existing: Option<&KeyEntry>,
    inbound: &Inbound,
    policy: &RoutePolicy,
    now_ms: i64,
    new_session_id: &str,
) -> Result<(Resolution, KeyEntry), Error> {
    let command = strip_reset_command(&inbound.text, &policy.reset_commands);
    let text = command.unwrap_or(&inbound.text).to_owned();
    let (action, reason) = match existing {
        None => (ResolveAction::Created, format!("`{key}` had no session yet")),
        Some(_) if command.is_some() => (ResolveAction::Reset, "the message asked for a new session".to_string()),
        Some(entry) => {
            let reset = policy.reset_for(inbound.chat_type, inbound.provider.as_deref());
            match gates::reset_cause(now_ms, entry.session_started_ms, entry.updated_ms, reset) {
                Some((cause, reason)) => (cause.into(), reason),
                None => (ResolveAction::Continued, format!("`{key}` continues its session")),
            }
        }
    };
    let mut entry = match existing {
        Some(entry) => entry.clone(),
        None => KeyEntry {
            key: key.clone(),
            session_id: String::new(),
            created_ms: now_ms,
            updated_ms: now_ms,
            session_started_ms: now_ms,
            chat_type: inbound.chat_type,
            origin: Origin::default(),
            title: None,
            model: None,
            toggles: Vec::new(),
            metadata: Vec::new(),
            previous_session_ids: Vec::new(),
            reason: String::new(),
        },
    };
    let previous_session_id = match action {
        ResolveAction::Continued => None,
        ResolveAction::Created => {
            crate::keys::validate_session_id(new_session_id)?;
            entry.session_id = new_session_id.to_owned();
            entry.reason = reason.clone();
            None
        }
        _ => Some(start_new_session(&mut entry, new_session_id, now_ms, &reason)?),
    };
    entry.updated_ms = entry.updated_ms.max(now_ms);
    merge_origin(&mut entry.origin, &inbound.origin);
    merge_fields(&mut entry.metadata, &inbound.metadata);
    let resolution = Resolution { key, session_id: entry.session_id.clone(), action, reason, previous_session_id, text };
    Ok((resolution, entry))
}

/// Gives `entry` the session `new_session_id`, keeping the one it had in its history;
/// returns that one.
pub(crate) fn start_new_session(entry: &mut KeyEntry, new_session_id: &str, now_ms: i64, reason: &str) -> Result<String, Error> {
    check_fresh(entry, new_session_id)?;
    let previous = core::mem::replace(&mut entry.session_id, new_session_id.to_owned());
    entry.previous_session_ids.push(previous.clone());
    entry.session_started_ms = now_ms;
    entry.reason = reason.to_owned();
    Ok(previous)
}

/// Whether `new_session_id` can be `entry`'s next session: a valid id the key never had.
pub(crate) fn check_fresh(entry: &KeyEntry, new_session_id: &str) -> Result<(), Error> {
    crate::keys::validate_session_id(new_session_id)?;
    if new_session_id == entry.session_id || entry.previous_session_ids.iter().any(|id| id == new_session_id) {
        return Err(Error::InvalidArgument(format!(
            "`{}` already used session `{new_session_id}`; pass a fresh session id for the new session",
            entry.key
        )));
    }
    Ok(())
}

fn merge_origin(into: &mut Origin, from: &Origin) {
    let set = |into: &mut Option<String>, from: &Option<String>| {
        if let Some(value) = from.as_ref().filter(|v| !v.is_empty()) {
            *into = Some(value.clone());
        }
    };
    set(&mut into.provider, &from.provider);
    set(&mut into.subject, &from.subject);
    set(&mut into.room, &from.room);
    set(&mut into.display_name, &from.display_name);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_commands_are_whole_words_at_the_start() {
        let commands = RoutePolicy::default().reset_commands;
        assert_eq!(strip_reset_command("/new", &commands), Some(""));
        assert_eq!(strip_reset_command("  /NEW  hello there", &commands), Some("hello there"));
        assert_eq!(strip_reset_command("/reset\nagain", &commands), Some("again"));
        assert_eq!(strip_reset_command("/newer", &commands), None);
        assert_eq!(strip_reset_command("please /new", &commands), None);
        assert_eq!(strip_reset_command("/né", &commands), None, "a multi-byte character after the slash is not a command");
    }
}
