//! Where things live in the key space: Claude Code's own layout, so a Claude Code home
//! (`~/.claude`) is a valid Mneme store as it is.
//!
//! ```text
//! projects/<project>/<session>.jsonl                       main transcript (part 1)
//! projects/<project>/<session>_part<N>.jsonl               part N ≥ 2, after rollover
//! projects/<project>/<session>.jsonl.torn-<offset>         a torn last line, moved aside
//! projects/<project>/<session>.jsonl.bak-<unix ms>         the original, before a repair
//! projects/<project>/agent-<id>.jsonl                      sub-agent (Claude Code 2.0.x)
//! projects/<project>/<session>/subagents/agent-<id>.jsonl  sub-agent (Claude Code ≥ 2.1)
//! projects/<project>/memory/MEMORY.md                      the project's memory index
//! projects/<project>/memory/<file>.md                      one memory (Claude Code's memdir)
//! projects/<project>/memory/.mneme/recall.jsonl            the recall index (derived)
//! projects/<project>/.mneme/written.jsonl                  when each session's lines were last appended by key
//! memory/…                                                 the same, for the global scope
//! files/<absolute path>                                    instruction files (CLAUDE.md, rules, imports)
//!                                                          where the host has no filesystem
//! ```

use alloc::format;
use alloc::string::String;
use core::fmt::Write;

use crate::error::{Error, StorageError};

pub const PROJECTS: &str = "projects/";
pub const TRANSCRIPT_SUFFIX: &str = ".jsonl";

/// A transcript's name: its key's last segment without `.jsonl` (`agent-a1` of
/// `projects/p/s/subagents/agent-a1.jsonl`).
pub fn transcript_name(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key).trim_end_matches(TRANSCRIPT_SUFFIX)
}
const PART_MARKER: &str = "_part";

/// Claude Code's project folder name for a working directory: every character that is
/// not ASCII alphanumeric becomes `-`; names over 200 characters are cut and suffixed
/// with a hash so they stay unique.
pub fn project_dir_name(cwd: &str) -> String {
    let mangled: String = cwd.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    if mangled.len() <= 200 {
        return mangled;
    }
    format!("{}-{}", &mangled[..200], base36(djb2(cwd).unsigned_abs()))
}

fn djb2(text: &str) -> i32 {
    text.encode_utf16().fold(0i32, |hash, unit| hash.wrapping_shl(5).wrapping_sub(hash).wrapping_add(i32::from(unit)))
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = String::new();
    loop {
        out.insert(0, char::from(DIGITS[(n % 36) as usize]));
        n /= 36;
        if n == 0 {
            return out;
        }
    }
}

/// The key of part `part` (1-based) of a session's main transcript.
pub fn part_key(project: &str, session_id: &str, part: u32) -> String {
    // Pushed, not `format!`ed: every append names its part, and formatting cost more
    // than the rest of naming it.
    let mut key =
        String::with_capacity(PROJECTS.len() + project.len() + session_id.len() + PART_MARKER.len() + 10 + TRANSCRIPT_SUFFIX.len());
    key.push_str(PROJECTS);
    key.push_str(project);
    key.push('/');
    key.push_str(session_id);
    if part > 1 {
        key.push_str(PART_MARKER);
        let _ = write!(key, "{part}");
    }
    key.push_str(TRANSCRIPT_SUFFIX);
    key
}

/// The key of a session's main transcript (its first part).
pub fn session_key(project: &str, session_id: &str) -> String {
    part_key(project, session_id, 1)
}

/// A main transcript part, named by its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartName<'a> {
    pub project: &'a str,
    pub id: &'a str,
    pub part: u32,
}

/// What a key names if it is a part of a main transcript; `None` for anything else
/// (sub-agent files, nested folders, sidecar files).
pub fn parse_session_key(key: &str) -> Option<PartName<'_>> {
    let rest = key.strip_prefix(PROJECTS)?;
    let (project, file) = rest.split_once('/')?;
    let stem = file.strip_suffix(TRANSCRIPT_SUFFIX)?;
    if project.is_empty() || stem.is_empty() || stem.contains('/') || stem.starts_with("agent-") {
        return None;
    }
    let (id, part) = split_part(stem);
    Some(PartName { project, id, part })
}

fn split_part(stem: &str) -> (&str, u32) {
    if let Some(at) = stem.rfind(PART_MARKER) {
        let digits = &stem[at + PART_MARKER.len()..];
        if !digits.is_empty()
            && !digits.starts_with('0')
            && digits.bytes().all(|b| b.is_ascii_digit())
            && let Ok(part) = digits.parse::<u32>()
            && part >= 2
            && at > 0
        {
            return (&stem[..at], part);
        }
    }
    (stem, 1)
}

/// Where `append-lines` records when each session of `project` was last written
/// (storage keeps no modification times).
pub fn written_log(project: &str) -> String {
    format!("{PROJECTS}{project}/.mneme/written.jsonl")
}

/// The folder of a session's own files (`<session>/subagents/...`).
pub fn session_dir(project: &str, session_id: &str) -> String {
    format!("{PROJECTS}{project}/{session_id}/")
}

/// The folder of a memory scope: a project's memdir, or the global one.
pub fn memory_dir(project: Option<&str>) -> String {
    match project {
        Some(project) => format!("{PROJECTS}{project}/memory/"),
        None => String::from("memory/"),
    }
}

/// The file Claude Code loads at startup: one line per memory.
pub const MEMORY_INDEX: &str = "MEMORY.md";
/// The recall index inside a memory folder; a dot folder, so no memory can be named so.
pub const RECALL_INDEX: &str = ".mneme/recall.jsonl";
/// The vectors a host's embedder gave a memory folder's memories, beside the recall index.
pub const MEMORY_VECTORS: &str = ".mneme/vectors.jsonl";
pub const MEMORY_SUFFIX: &str = ".md";

/// The saved message index `search` keeps (derived from the transcripts; see
/// `sessions/search.rs`).
pub const SEARCH_INDEX: &str = "index/search.jsonl";

/// Instruction files a host without a filesystem (the browser, the edge) keeps in the
/// store: the file at `/home/me/app/CLAUDE.md` is `files/home/me/app/CLAUDE.md`.
pub const FILES: &str = "files/";

/// The key of the file at absolute path `path` (see [`FILES`]).
pub fn file_key(path: &str) -> Result<String, Error> {
    let relative = path
        .strip_prefix('/')
        .ok_or_else(|| Error::InvalidArgument(format!("`{path}` is not an absolute path; instruction files are named from `/`")))?;
    let key = format!("{FILES}{relative}");
    match check_key(&key) {
        Ok(()) => Ok(key),
        Err(StorageError::InvalidKey { reason, .. }) => Err(Error::InvalidArgument(format!("`{path}` cannot name a file here: {reason}"))),
        Err(error) => Err(error.into()),
    }
}

/// The absolute path of a key under [`FILES`].
pub fn file_path(key: &str) -> Option<String> {
    key.strip_prefix(FILES).map(|relative| format!("/{relative}"))
}

/// Keys are at most this long; segments at most [`MAX_SEGMENT_BYTES`].
pub const MAX_KEY_BYTES: usize = 1024;
pub const MAX_SEGMENT_BYTES: usize = 255;

/// The rules every backend applies to a key, so a key that works on one host works on
/// all: relative, `/`-separated, no empty, `.` or `..` segment, no `\`, no control
/// characters, bounded lengths. Names that are only dangerous on one platform
/// (Windows device names, `:`) are that platform's backend's to refuse.
pub fn check_key(key: &str) -> Result<(), StorageError> {
    // One pass over the bytes and one over the segments (every storage call checks its
    // key), the reasons still in order.
    let (mut backslash, mut control) = (false, false);
    for b in key.bytes() {
        backslash |= b == b'\\';
        control |= b < 0x20 || b == 0x7f;
    }
    let (mut empty, mut dots, mut long) = (false, false, false);
    for segment in key.split('/') {
        empty |= segment.is_empty();
        dots |= segment == "." || segment == "..";
        long |= segment.len() > MAX_SEGMENT_BYTES;
    }
    let reason = if key.is_empty() {
        "the key is empty"
    } else if key.len() > MAX_KEY_BYTES {
        "the key is longer than 1024 bytes"
    } else if key.starts_with('/') {
        "absolute paths are not keys"
    } else if backslash {
        "'\\' is a path separator on Windows; keys use '/'"
    } else if control {
        "keys cannot contain NUL or control characters"
    } else if empty {
        "empty path segment ('//' or a trailing '/')"
    } else if dots {
        "'.' and '..' segments could leave the store"
    } else if long {
        "a path segment is longer than 255 bytes"
    } else {
        return Ok(());
    };
    Err(StorageError::InvalidKey { key: key.into(), reason: reason.into() })
}

/// Session ids name files, so they are restricted to characters that are safe in a
/// file name on every platform: ASCII letters, digits, `-` and `_`, at most 128.
pub fn validate_session_id(id: &str) -> Result<(), Error> {
    let reason = if id.is_empty() {
        "it is empty"
    } else if id.len() > 128 {
        "it is longer than 128 characters"
    } else if !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        "use only ASCII letters, digits, '-' and '_'"
    } else if id.starts_with("agent-") {
        "the prefix `agent-` is reserved for sub-agent transcripts"
    } else if split_part(id).1 != 1 {
        "a suffix `_part<N>` names a part file of another session"
    } else {
        return Ok(());
    };
    Err(Error::InvalidSessionId { id: id.into(), reason: reason.into() })
}

/// The session id Mneme keeps a session an agent SDK names `name` under (the OpenAI
/// Agents SDK's `session_id` is any string: `user:42`, an e-mail address). A name that
/// is a session id already is its own id, so sessions made before stay where they are;
/// any other is its first 64 characters, each an id cannot hold turned into `-`, without
/// leading `-` or `_` (a command line would read the id as an option; a leading
/// `agent-`, reserved for sub-agents, becomes `agent_`), then `_` and sixteen hex digits
/// of a hash of the whole name, so two names that read alike keep two sessions:
/// `user:42` is `user-42_` and its hash. A name with nothing left is the hash alone.
pub fn session_id_of(name: &str) -> String {
    if validate_session_id(name).is_ok() {
        return name.into();
    }
    let readable: String = name.chars().take(64).map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
    let readable = readable.trim_start_matches(['-', '_']);
    let hash = crate::support::ids::fingerprint(name);
    match readable.strip_prefix("agent-") {
        _ if readable.is_empty() => hash,
        Some(rest) => format!("agent_{rest}_{hash}"),
        None => format!("{readable}_{hash}"),
    }
}

/// Project names are one folder name: not empty, no `/` or `\`, not `.` or `..`.
pub fn validate_project(name: &str) -> Result<(), Error> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if name.len() > 255 {
        "it is longer than 255 bytes"
    } else if name == "." || name == ".." {
        "it is a relative path segment"
    } else if name.contains('\0') {
        "it contains NUL"
    } else if name.contains(['/', '\\']) {
        "it contains a path separator: a project is one folder under projects/, named after a working directory as project_of (JavaScript: projectOf) names it (/home/me/app is -home-me-app)"
    } else {
        return Ok(());
    };
    Err(Error::InvalidProject { name: name.into(), reason: reason.into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_names_match_claude_code() {
        assert_eq!(project_dir_name("/home/user/project"), "-home-user-project");
        assert_eq!(project_dir_name("/src/experiments/claude_p"), "-src-experiments-claude-p");
        let long = format!("/{}", "a".repeat(250));
        let name = project_dir_name(&long);
        assert!(name.starts_with(&format!("-{}", "a".repeat(199))));
        assert!(name.len() > 201 && name.len() <= 208, "{name}");
        assert_eq!(name, project_dir_name(&long), "the hash is deterministic");
    }

    #[test]
    fn session_and_part_keys_round_trip() {
        let key = session_key("-home-x", "4d5611e5");
        assert_eq!(key, "projects/-home-x/4d5611e5.jsonl");
        assert_eq!(parse_session_key(&key), Some(PartName { project: "-home-x", id: "4d5611e5", part: 1 }));
        let part3 = part_key("-home-x", "4d5611e5", 3);
        assert_eq!(part3, "projects/-home-x/4d5611e5_part3.jsonl");
        assert_eq!(parse_session_key(&part3), Some(PartName { project: "-home-x", id: "4d5611e5", part: 3 }));
        for not_a_part in ["projects/p/x_part1.jsonl", "projects/p/x_part02.jsonl", "projects/p/x_partz.jsonl", "projects/p/_part2.jsonl"] {
            assert_eq!(parse_session_key(not_a_part).map(|p| p.part), Some(1), "{not_a_part}");
        }
        assert_eq!(parse_session_key("projects/-home-x/agent-a1.jsonl"), None);
        assert_eq!(parse_session_key("projects/-home-x/s/subagents/agent-a1.jsonl"), None);
        assert_eq!(parse_session_key("projects/-home-x/s.jsonl.torn-5"), None);
        assert_eq!(parse_session_key("todos/x.jsonl"), None);
    }

    #[test]
    fn any_name_has_a_session_id_and_an_id_is_its_own() {
        for id in ["4d5611e5-241a-462a-8d15-5122611a9569", "conversation_1", "a"] {
            assert_eq!(session_id_of(id), id);
        }
        let user = session_id_of("user:42");
        assert!(user.starts_with("user-42_") && user.len() == "user-42_".len() + 16, "{user}");
        assert_ne!(user, session_id_of("user/42"), "names that read alike keep two sessions");
        assert_eq!(user, session_id_of("user:42"), "the same name, the same session");
        for name in ["", "agent-7", "chat_part2", "ünïcode ✓", "a.b", "../x", &"é".repeat(200), &"x".repeat(129)] {
            let id = session_id_of(name);
            assert!(validate_session_id(&id).is_ok(), "{name:?} gave {id:?}");
        }
        assert!(session_id_of("agent-7").starts_with("agent_7_"));
        assert!(session_id_of("ünï ✓").starts_with("n---_"), "no id starts as an option does");
        assert_eq!(session_id_of("").len(), 16, "nothing readable: the hash alone");
    }

    #[test]
    fn ids_and_projects_are_validated() {
        assert!(validate_session_id("4d5611e5-241a-462a-8d15-5122611a9569").is_ok());
        assert!(validate_session_id("claude_code").is_ok());
        for bad in ["", "../x", "a/b", "a.b", "agent-1", "chat_part2", &"x".repeat(129)] {
            assert!(validate_session_id(bad).is_err(), "{bad}");
        }
        assert!(validate_project("-home-user").is_ok());
        for bad in ["", ".", "..", "a/b", "a\\b"] {
            assert!(validate_project(bad).is_err(), "{bad}");
        }
    }
}
