//! The shell command that continues a session in the client that wrote it (`claude
//! --resume`, `pi --session`), for `search` and `mneme mcp`'s `search_sessions`: found
//! a message, the user (or the model) goes back to that conversation in one step.
//!
//! Only the host knows where the store is on this machine; the core gives each hit its
//! session's dialect and folder. A command is given only where its client would open
//! the whole session: a store on PostgreSQL has no file a client reads, Claude Code
//! opens only UUID ids in the project its folder names, a session continued in
//! `<id>_part2.jsonl` is more than the one file a client reads, crab has no resume.
//! The command is for a POSIX shell (sh, bash, zsh); a folder or file name it could not
//! quote safely in every shell (a backslash, a control or bidirectional character) gets
//! none.

use std::path::{Path, PathBuf};

use mneme_host::core::format::Format;
use mneme_host::core::{SearchHit, keys};
use serde::Serialize;

use crate::StoreArgs;

/// A search hit and how to resume its session.
#[derive(Serialize)]
pub struct Found {
    #[serde(flatten)]
    pub hit: SearchHit,
    /// Run in a shell: continues the session in its own client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
}

/// Each hit with the command that resumes its session in the store `store`.
pub fn found(store: &StoreArgs, hits: Vec<SearchHit>) -> Vec<Found> {
    let folder = Folder::of(store);
    hits.into_iter()
        .map(|hit| {
            let resume = folder.as_ref().and_then(|folder| folder.resume(&hit));
            Found { hit, resume }
        })
        .collect()
}

/// Where a folder store keeps its sessions' files.
struct Folder {
    root: PathBuf,
    layout: Layout,
    /// `CLAUDE_CONFIG_DIR=<root> `, unless the root is where Claude Code looks anyway.
    claude_config: String,
}

#[derive(Clone, Copy)]
enum Layout {
    /// Mneme's own layout, which is Claude Code's: `projects/<project>/<id>.jsonl`.
    Projects,
    /// pi's agent folder: `sessions/<project>/<id>.jsonl`.
    Pi,
    /// OpenClaw's home: `agents/<project>/sessions/<id>.jsonl`.
    OpenClaw,
}

impl Folder {
    fn of(store: &StoreArgs) -> Option<Folder> {
        let (root, layout) = if store.store.is_some() || store.crab_home.is_some() {
            return None;
        } else if let Some(home) = &store.pi_home {
            (home.clone(), Layout::Pi)
        } else if let Some(home) = &store.openclaw_home {
            (home.clone(), Layout::OpenClaw)
        } else if let Some(home) = &store.claude_home {
            (home.clone(), Layout::Projects)
        } else {
            (store.root.clone().map_or_else(crate::default_root, Ok).ok()?, Layout::Projects)
        };
        // The command runs from the session's folder: a relative root would not be found.
        let root = std::path::absolute(&root).ok()?;
        // A name that is not UTF-8 would be printed as another name.
        let claude_config = match word(root.to_str()?) {
            _ if is_claude_default(&root) => String::new(),
            Some(root) => format!("CLAUDE_CONFIG_DIR={root} "),
            None => return None,
        };
        Some(Folder { root, layout, claude_config })
    }

    fn resume(&self, hit: &SearchHit) -> Option<String> {
        // `cd -P` would be an option and `cd notes` depends on where it runs: only an
        // absolute folder.
        let cwd = hit.cwd.as_deref().filter(|cwd| cwd.starts_with('/')).and_then(word);
        let file = self.file(&hit.project, &hit.id, 1);
        if self.file(&hit.project, &hit.id, 2).exists() {
            return None;
        }
        match hit.format {
            Format::Claude => {
                // Claude Code finds a session under its config folder, in the project its
                // working folder names, and resumes only UUID ids.
                let opens = matches!(self.layout, Layout::Projects)
                    && hit.cwd.as_deref().is_some_and(|cwd| keys::project_dir_name(cwd) == hit.project)
                    && is_claude_id(&hit.id);
                if !opens {
                    return None;
                }
                Some(format!("cd {} && {}claude --resume {}", cwd?, self.claude_config, hit.id))
            }
            Format::Pi => {
                let session = word(file.to_str()?)?;
                let cd = cwd.map(|cwd| format!("cd {cwd} && ")).unwrap_or_default();
                file.is_file().then(|| format!("{cd}pi --session {session}"))
            }
            Format::Crab => None,
        }
    }

    /// The file of part `part` of session `id` (`<id>.jsonl`, then `<id>_part<N>.jsonl`).
    fn file(&self, project: &str, id: &str, part: u32) -> PathBuf {
        let name = if part == 1 { format!("{id}.jsonl") } else { format!("{id}_part{part}.jsonl") };
        match self.layout {
            Layout::Projects => self.root.join("projects").join(project).join(name),
            Layout::Pi => self.root.join("sessions").join(project).join(name),
            Layout::OpenClaw => self.root.join("agents").join(project).join("sessions").join(name),
        }
    }
}

/// Claude Code's own session ids: a hyphenated lower-case UUID (it writes no other form).
fn is_claude_id(id: &str) -> bool {
    uuid::Uuid::try_parse(id).is_ok_and(|uuid| uuid.hyphenated().to_string() == id)
}

/// Whether `root` is the folder Claude Code reads without being told: $CLAUDE_CONFIG_DIR,
/// else ~/.claude.
fn is_claude_default(root: &Path) -> bool {
    let default = std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from).or_else(|| dirs::home_dir().map(|home| home.join(".claude")));
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    default.is_some_and(|default| same(&default, root))
}

/// `text` as one word of a POSIX shell command, or `None` when it holds what no quoting
/// makes safe in every shell: a backslash (fish reads one inside single quotes), a
/// control character (a line break ends the command), a bidirectional or invisible
/// formatting character (the command would read otherwise than it runs).
fn word(text: &str) -> Option<String> {
    let unsafe_char = |c: char| {
        c == '\\'
            || c.is_control()
            || matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
    };
    if text.is_empty() || text.chars().any(unsafe_char) {
        return None;
    }
    let plain = text.chars().all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c));
    Some(if plain { text.to_owned() } else { format!("'{}'", text.replace('\'', "'\"'\"'")) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mneme_host::core::format::Format;

    fn hit(id: &str, project: &str, format: Format, cwd: Option<&str>) -> SearchHit {
        SearchHit {
            id: id.into(),
            project: project.into(),
            format,
            cwd: cwd.map(String::from),
            uuid: "u".into(),
            role: "user".into(),
            timestamp: None,
            text: String::new(),
            score: 1.0,
            matched: true,
        }
    }

    const ID: &str = "6f1c2a9e-4b7d-4e21-9c3a-0d5e8f7a1b2c";

    fn folder(root: &Path, layout: Layout) -> Folder {
        Folder { root: root.to_owned(), layout, claude_config: format!("CLAUDE_CONFIG_DIR={} ", word(root.to_str().unwrap()).unwrap()) }
    }

    #[test]
    fn a_word_is_quoted_for_every_shell_or_refused() {
        assert_eq!(word("/home/me/app").unwrap(), "/home/me/app");
        assert_eq!(word("/home/me/my app").unwrap(), "'/home/me/my app'");
        assert_eq!(word("/tmp/it's $HOME").unwrap(), r#"'/tmp/it'"'"'s $HOME'"#);
        for refused in
            ["", "/tmp/a\\';touch x;#", "/tmp/a\nrm -rf ~", "/tmp/\u{202E}evil", "/tmp/\u{1b}[2J", "/tmp/a\u{200F}b", "/tmp/\u{FEFF}"]
        {
            assert_eq!(word(refused), None, "{refused:?}");
        }
    }

    #[test]
    fn claude_code_gets_a_command_only_for_a_session_it_would_open_whole() {
        let root = tempfile::tempdir().unwrap();
        let store = folder(root.path(), Layout::Projects);
        let config = format!("CLAUDE_CONFIG_DIR={} ", word(root.path().to_str().unwrap()).unwrap());
        let at_home = hit(ID, "-home-me-app", Format::Claude, Some("/home/me/app"));
        assert_eq!(store.resume(&at_home).unwrap(), format!("cd /home/me/app && {config}claude --resume {ID}"));
        let elsewhere = hit(ID, "-home-me-app", Format::Claude, Some("/home/me/app/src"));
        assert_eq!(store.resume(&elsewhere), None, "Claude Code would look in -home-me-app-src");
        assert_eq!(store.resume(&hit("chat-1", "-home-me-app", Format::Claude, Some("/home/me/app"))), None, "not a UUID");
        assert_eq!(store.resume(&hit(&ID.replace('-', ""), "-home-me-app", Format::Claude, Some("/home/me/app"))), None, "not hyphenated");
        assert_eq!(store.resume(&hit(ID, "-home-me-app", Format::Claude, None)), None, "no folder to run in");
        assert_eq!(store.resume(&hit(ID, "app", Format::Claude, Some("app"))), None, "a relative folder");
        assert_eq!(store.resume(&hit(ID, "crab", Format::Crab, Some("/home/me/app"))), None);
        assert_eq!(folder(root.path(), Layout::Pi).resume(&at_home), None, "Claude Code reads no pi home");
        // Continued in a second part: Claude Code would read only the first.
        let project = root.path().join("projects/-home-me-app");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join(format!("{ID}_part2.jsonl")), "").unwrap();
        assert_eq!(store.resume(&at_home), None);
    }

    #[test]
    fn pi_gets_its_session_file_when_it_is_there() {
        let root = tempfile::tempdir().unwrap();
        let sessions = root.path().join("sessions/--home-me-app--");
        std::fs::create_dir_all(&sessions).unwrap();
        let id = "2026-12-01T10-00-00-000Z_0b6f0e8a";
        let found = hit(id, "--home-me-app--", Format::Pi, Some("/home/me/app"));
        let pi_home = folder(root.path(), Layout::Pi);
        assert_eq!(pi_home.resume(&found), None, "no file yet");
        std::fs::write(sessions.join(format!("{id}.jsonl")), "{}\n").unwrap();
        let file = word(sessions.join(format!("{id}.jsonl")).to_str().unwrap()).unwrap();
        assert_eq!(pi_home.resume(&found).unwrap(), format!("cd /home/me/app && pi --session {file}"));
        assert_eq!(pi_home.resume(&hit(id, "--home-me-app--", Format::Pi, None)).unwrap(), format!("pi --session {file}"));
    }
}
