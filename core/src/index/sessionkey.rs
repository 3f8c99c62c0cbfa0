//! The session-key grammar (OpenClaw's): which conversation bucket a message belongs
//! to, spelled so a person can read it.
//!
//! ```text
//! agent:<agent>:<main key>                         direct chats, one bucket per agent (default)
//! agent:<agent>:dm:<peer>                          direct chats, one bucket per peer
//! agent:<agent>:<provider>:dm:<peer>               … per provider and peer
//! agent:<agent>:<provider>:group:<id>              a group chat
//! agent:<agent>:<provider>:channel:<id>            a channel (Slack, Discord)
//! agent:<agent>:<provider>:room:<id>               a room
//! <any of those>:thread:<id>                       a thread or topic inside it
//! cron:<job>                                       a scheduled job
//! hook:<id>                                        a webhook
//! ```
//!
//! Agent ids, main keys and providers are lowercased; peer, group and thread ids are
//! kept as given (some providers' ids are case-sensitive). No part may be empty or
//! contain `:`, whitespace or control characters.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::ChatType;
use super::route::DmScope;
use crate::error::Error;

pub const DEFAULT_AGENT: &str = "main";
pub const DEFAULT_MAIN_KEY: &str = "main";

/// A session key taken apart.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KeyParts {
    pub chat_type: ChatType,
    /// The agent, for `agent:` keys.
    pub agent: Option<String>,
    pub provider: Option<String>,
    /// The peer, group, channel or room id; the job for cron, the id for hooks; the
    /// main key for an agent's main bucket.
    pub id: String,
    pub thread: Option<String>,
}

fn check_part(what: &str, part: &str) -> Result<(), Error> {
    if part.is_empty() {
        return Err(Error::InvalidArgument(format!("the {what} of a session key is empty")));
    }
    if part.chars().any(|c| c == ':' || c.is_whitespace() || c.is_control()) {
        return Err(Error::InvalidArgument(format!(
            "the {what} `{part}` cannot be part of a session key: it contains `:`, a space or a control character"
        )));
    }
    Ok(())
}

fn lower(what: &str, part: &str) -> Result<String, Error> {
    check_part(what, part)?;
    Ok(part.to_lowercase())
}

/// What a key is built from.
#[derive(Clone, Copy, Debug)]
pub struct KeyInput<'a> {
    pub agent: Option<&'a str>,
    pub chat_type: ChatType,
    pub provider: Option<&'a str>,
    pub id: Option<&'a str>,
    pub thread: Option<&'a str>,
    pub main_key: &'a str,
    pub dm_scope: DmScope,
}

/// The key of a conversation.
pub fn build(input: &KeyInput) -> Result<String, Error> {
    let need = |what: &str| -> Result<&str, Error> {
        let id = input.id.filter(|id| !id.is_empty()).ok_or_else(|| {
            Error::InvalidArgument(format!("a {} message needs the {what} id to pick its session key", input.chat_type.as_str()))
        })?;
        check_part(what, id)?;
        Ok(id)
    };
    let provider = || -> Result<String, Error> {
        let provider = input.provider.filter(|p| !p.is_empty()).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "a {} message needs its provider (telegram, slack, …) to pick its session key",
                input.chat_type.as_str()
            ))
        })?;
        lower("provider", provider)
    };
    let agent = lower("agent id", input.agent.filter(|a| !a.is_empty()).unwrap_or(DEFAULT_AGENT))?;
    let mut key = match input.chat_type {
        ChatType::Cron => return Ok(format!("cron:{}", need("job")?)),
        ChatType::Hook => return Ok(format!("hook:{}", need("hook")?)),
        ChatType::Direct => match input.dm_scope {
            DmScope::Main => format!("agent:{agent}:{}", lower("main key", input.main_key)?),
            DmScope::PerPeer => format!("agent:{agent}:dm:{}", need("peer")?),
            DmScope::PerProviderPeer => format!("agent:{agent}:{}:dm:{}", provider()?, need("peer")?),
        },
        kind @ (ChatType::Group | ChatType::Channel | ChatType::Room) => {
            format!("agent:{agent}:{}:{}:{}", provider()?, kind.as_str(), need(kind.as_str())?)
        }
    };
    if let Some(thread) = input.thread.filter(|t| !t.is_empty()) {
        check_part("thread", thread)?;
        key.push_str(":thread:");
        key.push_str(thread);
    }
    Ok(key)
}

/// Takes a key apart; a key that follows none of the shapes above is refused.
pub fn parse(key: &str) -> Result<KeyParts, Error> {
    let bad = |why: &str| Error::InvalidArgument(format!("`{key}` is not a session key: {why}"));
    let parts: Vec<&str> = key.split(':').collect();
    if parts.iter().any(|p| p.is_empty() || p.chars().any(|c| c.is_whitespace() || c.is_control())) {
        return Err(bad("a part is empty or contains a space or a control character"));
    }
    let simple = |chat_type| KeyParts { chat_type, agent: None, provider: None, id: parts[1..].join(":"), thread: None };
    match parts.as_slice() {
        ["cron", _] => return Ok(simple(ChatType::Cron)),
        ["hook", _] => return Ok(simple(ChatType::Hook)),
        ["agent", _, ..] => {}
        _ => return Err(bad("it starts with none of `agent:`, `cron:`, `hook:`")),
    }
    let (body, thread) = match parts.len() {
        n if n >= 5 && parts[n - 2] == "thread" => (&parts[..n - 2], Some(parts[n - 1].to_string())),
        _ => (&parts[..], None),
    };
    let agent = Some(body[1].to_string());
    let shape = match &body[2..] {
        [main_key] => KeyParts { chat_type: ChatType::Direct, agent, provider: None, id: main_key.to_string(), thread },
        ["dm", peer] => KeyParts { chat_type: ChatType::Direct, agent, provider: None, id: peer.to_string(), thread },
        [provider, kind, id] => {
            let chat_type = match *kind {
                "dm" => ChatType::Direct,
                "group" => ChatType::Group,
                "channel" => ChatType::Channel,
                "room" => ChatType::Room,
                _ => return Err(bad("expected `dm`, `group`, `channel` or `room` after the provider")),
            };
            KeyParts { chat_type, agent, provider: Some(provider.to_string()), id: id.to_string(), thread }
        }
        _ => {
            return Err(bad(
                "an `agent:` key is `agent:<agent>:<main key>`, `agent:<agent>:dm:<peer>` or `agent:<agent>:<provider>:<kind>:<id>`",
            ));
        }
    };
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(chat_type: ChatType, provider: Option<&'static str>, id: Option<&'static str>) -> KeyInput<'static> {
        KeyInput { agent: None, chat_type, provider, id, thread: None, main_key: DEFAULT_MAIN_KEY, dm_scope: DmScope::Main }
    }

    #[test]
    fn keys_follow_the_grammar_and_parse_back() {
        let cases = [
            (input(ChatType::Direct, Some("telegram"), Some("u1")), "agent:main:main"),
            (KeyInput { dm_scope: DmScope::PerPeer, ..input(ChatType::Direct, None, Some("U1")) }, "agent:main:dm:U1"),
            (
                KeyInput { dm_scope: DmScope::PerProviderPeer, ..input(ChatType::Direct, Some("Slack"), Some("U1")) },
                "agent:main:slack:dm:U1",
            ),
            (
                KeyInput { agent: Some("Ops"), ..input(ChatType::Group, Some("telegram"), Some("-100123")) },
                "agent:ops:telegram:group:-100123",
            ),
            (
                KeyInput { thread: Some("42"), ..input(ChatType::Channel, Some("slack"), Some("C024")) },
                "agent:main:slack:channel:C024:thread:42",
            ),
            (input(ChatType::Room, Some("matrix"), Some("r1")), "agent:main:matrix:room:r1"),
            (input(ChatType::Cron, None, Some("nightly")), "cron:nightly"),
            (input(ChatType::Hook, None, Some("9f0c")), "hook:9f0c"),
        ];
        for (input, key) in cases {
            assert_eq!(build(&input).unwrap(), key);
            let parts = parse(key).unwrap();
            assert_eq!(parts.chat_type, input.chat_type, "{key}");
            assert_eq!(parts.thread.as_deref(), input.thread, "{key}");
        }
    }

    #[test]
    fn bad_parts_and_keys_are_refused() {
        assert!(build(&input(ChatType::Group, Some("telegram"), None)).is_err(), "a group needs its id");
        assert!(build(&input(ChatType::Group, None, Some("g"))).is_err(), "a group needs its provider");
        assert!(build(&input(ChatType::Group, Some("telegram"), Some("a:b"))).is_err());
        assert!(build(&input(ChatType::Cron, None, Some("two words"))).is_err());
        for key in ["", "agent:main", "agent::main", "user:1", "agent:main:slack:team:1", "cron:", "agent:main:x:y:z:w"] {
            assert!(parse(key).is_err(), "{key}");
        }
    }
}
