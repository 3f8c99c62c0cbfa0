//! The shell command that continues a session in the client that wrote it (`claude
//! --resume`, `pi --session`), for `search` and `mneme mcp`'s `search_sessions`: found
//! a message, the user (or the model) goes back to that conversation in one step.
//!
//! Only the host knows where the store is on this machine; the core gives each hit its
//! session's dialect and folder. A command is given only where its client will open
//! the session: a store on PostgreSQL has no file a client reads, Claude Code opens
//! only UUID ids in the project its folder names, crab has no resume.

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
}

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
        // A command is run from the session's folder: a relative root would not be found.
        Some(Folder { root: std::path::absolute(&root).ok()?, layout })
    }

    fn resume(&self, hit: &SearchHit) -> Option<String> {
        let cd = hit.cwd.as_deref().map(|cwd| format!("cd {} && ", shell_word(cwd))).unwrap_or_default();
        match hit.format {
            Format::Claude => {
                // Claude Code finds a session under its config folder, in the project
                // its working folder names, and resumes only UUID ids.
                let cwd = hit.cwd.as_deref()?;
                let opens = matches!(self.layout, Layout::Projects)
                    && keys::project_dir_name(cwd) == hit.project
                    && uuid::Uuid::parse_str(&hit.id).is_ok();
                let config =
                    (!is_claude_default(&self.root)).then(|| format!("CLAUDE_CONFIG_DIR={} ", shell_word(&self.root.to_string_lossy())));
                opens.then(|| format!("{cd}{}claude --resume {}", config.unwrap_or_default(), hit.id))
            }
            Format::Pi => {
                let file = self.file(&hit.project, &hit.id);
                file.is_file().then(|| format!("{cd}pi --session {}", shell_word(&file.to_string_lossy())))
            }
            Format::Crab => None,
        }
    }

    /// The file of session `id`'s first part.
    fn file(&self, project: &str, id: &str) -> PathBuf {
        let name = format!("{id}.jsonl");
        match self.layout {
            Layout::Projects => self.root.join("projects").join(project).join(name),
            Layout::Pi => self.root.join("sessions").join(project).join(name),
            Layout::OpenClaw => self.root.join("agents").join(project).join("sessions").join(name),
        }
    }
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

/// `text` as one word of a POSIX shell command.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c));
    if plain { text.to_owned() } else { format!("'{}'", text.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn a_word_a_shell_would_split_or_expand_is_quoted() {
        assert_eq!(shell_word("/home/me/app"), "/home/me/app");
        assert_eq!(shell_word("/home/me/my app"), "'/home/me/my app'");
        assert_eq!(shell_word("/tmp/it's $HOME"), r"'/tmp/it'\''s $HOME'");
        assert_eq!(shell_word(""), "''");
    }
}
