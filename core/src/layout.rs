//! Where things live in the key space: Claude Code's own layout, so a Claude Code home
//! (`~/.claude`) is a valid Mneme store as it is.
//!
//! ```text
//! projects/<project>/<session>.jsonl                       main transcript
//! projects/<project>/agent-<id>.jsonl                      sub-agent (Claude Code 2.0.x)
//! projects/<project>/<session>/subagents/agent-<id>.jsonl  sub-agent (Claude Code ≥ 2.1)
//! ```

use alloc::format;
use alloc::string::String;

use crate::error::Error;

pub const PROJECTS: &str = "projects/";
pub const TRANSCRIPT_SUFFIX: &str = ".jsonl";

/// Claude Code's project folder name for a working directory: every character that is
/// not ASCII alphanumeric becomes `-`; names over 200 characters are cut and suffixed
/// with a hash so they stay unique.
pub fn project_dir_name(cwd: &str) -> String {
    let mangled: String = cwd
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if mangled.len() <= 200 {
        return mangled;
    }
    format!("{}-{}", &mangled[..200], base36(djb2(cwd).unsigned_abs()))
}

fn djb2(text: &str) -> i32 {
    text.encode_utf16().fold(0i32, |hash, unit| {
        hash.wrapping_shl(5)
            .wrapping_sub(hash)
            .wrapping_add(i32::from(unit))
    })
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = alloc::vec::Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The key of a session's main transcript.
pub fn session_key(project: &str, session_id: &str) -> String {
    format!("{PROJECTS}{project}/{session_id}{TRANSCRIPT_SUFFIX}")
}

/// The `(project, session id)` of a main transcript key; `None` for anything else
/// (sub-agent files, nested folders, other files).
pub fn parse_session_key(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix(PROJECTS)?;
    let (project, file) = rest.split_once('/')?;
    let id = file.strip_suffix(TRANSCRIPT_SUFFIX)?;
    (!project.is_empty() && !id.is_empty() && !id.contains('/') && !id.starts_with("agent-"))
        .then_some((project, id))
}

/// Session ids name files, so they are restricted to characters that are safe in a
/// file name on every platform: ASCII letters, digits, `-` and `_`, at most 128.
pub fn validate_session_id(id: &str) -> Result<(), Error> {
    let reason = if id.is_empty() {
        "it is empty"
    } else if id.len() > 128 {
        "it is longer than 128 characters"
    } else if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        "use only ASCII letters, digits, '-' and '_'"
    } else if id.starts_with("agent-") {
        "the prefix `agent-` is reserved for sub-agent transcripts"
    } else {
        return Ok(());
    };
    Err(Error::InvalidSessionId {
        id: id.into(),
        reason: reason.into(),
    })
}

/// Project names are one folder name: not empty, no `/` or `\`, not `.` or `..`.
pub fn validate_project(name: &str) -> Result<(), Error> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if name.len() > 255 {
        "it is longer than 255 bytes"
    } else if name == "." || name == ".." {
        "it is a relative path segment"
    } else if name.contains(['/', '\\', '\0']) {
        "it contains a path separator or NUL"
    } else {
        return Ok(());
    };
    Err(Error::InvalidProject {
        name: name.into(),
        reason: reason.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_names_match_claude_code() {
        assert_eq!(project_dir_name("/home/user/project"), "-home-user-project");
        assert_eq!(
            project_dir_name("/src/experiments/claude_p"),
            "-src-experiments-claude-p"
        );
        let long = format!("/{}", "a".repeat(250));
        let name = project_dir_name(&long);
        assert!(name.starts_with(&format!("-{}", "a".repeat(199))));
        assert!(name.len() > 201 && name.len() <= 208, "{name}");
        assert_eq!(name, project_dir_name(&long), "the hash is deterministic");
    }

    #[test]
    fn session_keys_round_trip_and_skip_subagents() {
        let key = session_key("-home-x", "4d5611e5");
        assert_eq!(key, "projects/-home-x/4d5611e5.jsonl");
        assert_eq!(parse_session_key(&key), Some(("-home-x", "4d5611e5")));
        assert_eq!(parse_session_key("projects/-home-x/agent-a1.jsonl"), None);
        assert_eq!(
            parse_session_key("projects/-home-x/s/subagents/agent-a1.jsonl"),
            None
        );
        assert_eq!(parse_session_key("projects/-home-x/s.json"), None);
        assert_eq!(parse_session_key("todos/x.jsonl"), None);
    }

    #[test]
    fn ids_and_projects_are_validated() {
        assert!(validate_session_id("4d5611e5-241a-462a-8d15-5122611a9569").is_ok());
        assert!(validate_session_id("claude_code").is_ok());
        for bad in ["", "../x", "a/b", "a.b", "agent-1", &"x".repeat(129)] {
            assert!(validate_session_id(bad).is_err(), "{bad}");
        }
        assert!(validate_project("-home-user").is_ok());
        for bad in ["", ".", "..", "a/b", "a\\b"] {
            assert!(validate_project(bad).is_err(), "{bad}");
        }
    }
}
