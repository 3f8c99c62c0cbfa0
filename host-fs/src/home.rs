//! Another agent's own session folder read as a Mneme store, read-only: pi's
//! `~/.pi/agent`, OpenClaw's `~/.openclaw`, a crab daemon's folder. (A Claude Code home
//! needs no mapping: Mneme's layout is its layout.) Each maps Mneme's session keys,
//! `projects/<project>/<file>`, onto where that agent keeps its transcripts; there is
//! nothing else in such a folder for Mneme (no index, no memory), and every write is
//! refused, so the agent's files are never touched.

use mneme_core::{KeyInfo, StorageError};

use crate::FsStorage;

const PROJECTS: &str = "projects/";

/// Whose folder it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Home {
    /// `~/.pi/agent`: `sessions/<--cwd-->/<time>_<id>.jsonl`; a project is pi's cwd folder.
    Pi,
    /// `~/.openclaw`: `agents/<agent>/sessions/<id>.jsonl`; a project is an agent.
    OpenClaw,
    /// A crab daemon's folder: a flat `sessions/` of `<agent>_<sender>_<seq>.jsonl`,
    /// listed as the project `crab`.
    Crab,
}

impl Home {
    /// The folder inside the home that must exist, for the error that says it does not.
    pub fn sessions_folder(self) -> &'static str {
        match self {
            Home::Pi | Home::Crab => "sessions",
            Home::OpenClaw => "agents",
        }
    }

    /// The file a session key names in this home, if the key can be in it.
    fn to_path_key(self, key: &str) -> Option<String> {
        let rest = key.strip_prefix(PROJECTS)?;
        match self {
            Home::Pi => Some(format!("sessions/{rest}")),
            Home::OpenClaw => {
                let (agent, file) = rest.split_once('/')?;
                Some(format!("agents/{agent}/sessions/{file}"))
            }
            Home::Crab => rest.strip_prefix("crab/").map(|file| format!("sessions/{file}")),
        }
    }

    /// The session key of a file in this home, if it is in a sessions folder.
    fn to_session_key(self, path_key: &str) -> Option<String> {
        match self {
            Home::Pi => path_key.strip_prefix("sessions/").map(|rest| format!("{PROJECTS}{rest}")),
            Home::OpenClaw => {
                let rest = path_key.strip_prefix("agents/")?;
                let (agent, file) = rest.split_once("/sessions/")?;
                (!agent.contains('/')).then(|| format!("{PROJECTS}{agent}/{file}"))
            }
            Home::Crab => {
                path_key.strip_prefix("sessions/").filter(|file| !file.contains('/')).map(|file| format!("{PROJECTS}crab/{file}"))
            }
        }
    }
}

/// A [`Home`] on a folder, read-only.
#[derive(Debug)]
pub struct HomeStorage {
    folder: FsStorage,
    home: Home,
}

impl HomeStorage {
    pub fn new(root: impl Into<std::path::PathBuf>, home: Home) -> Self {
        Self { folder: FsStorage::read_only(root), home }
    }

    fn list_sync(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        if !prefix.starts_with(PROJECTS) && !PROJECTS.starts_with(prefix) {
            return Ok(Vec::new());
        }
        // A prefix that names its project maps to a folder of its own (a session's
        // parts are looked up that way); a shorter one walks every sessions folder.
        let folder_prefix = self.home.to_path_key(prefix).unwrap_or_else(|| format!("{}/", self.home.sessions_folder()));
        let mut found: Vec<KeyInfo> = self
            .folder
            .list_sync(&folder_prefix)?
            .into_iter()
            .filter_map(|info| Some(KeyInfo { key: self.home.to_session_key(&info.key)?, ..info }))
            .filter(|info| info.key.starts_with(prefix))
            .collect();
        found.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(found)
    }

    fn read_sync(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        let path_key = self.home.to_path_key(key).ok_or_else(|| StorageError::NotFound { key: key.to_owned() })?;
        self.folder.read_sync(&path_key, offset, len).map_err(|e| rename_error(e, key))
    }

    fn refuse<T>(&self, key: &str) -> Result<T, StorageError> {
        Err(StorageError::ReadOnly { key: key.to_owned() })
    }

    fn append_sync(&self, key: &str, _: &[u8]) -> Result<u64, StorageError> {
        self.refuse(key)
    }
    fn replace_sync(&self, key: &str, _: &[u8], _: Option<u64>) -> Result<(), StorageError> {
        self.refuse(key)
    }
    fn truncate_sync(&self, key: &str, _: u64, _: u64) -> Result<(), StorageError> {
        self.refuse(key)
    }
    fn remove_sync(&self, key: &str) -> Result<(), StorageError> {
        self.refuse(key)
    }
    fn rename_sync(&self, from: &str, _: &str) -> Result<(), StorageError> {
        self.refuse(from)
    }
    fn lock_sync(&self, name: &str) -> Result<(), StorageError> {
        self.refuse(name)
    }
    fn unlock_sync(&self, name: &str) -> Result<(), StorageError> {
        self.refuse(name)
    }
}

/// An error about the file a key maps to, said about the key.
fn rename_error(error: StorageError, key: &str) -> StorageError {
    let key = key.to_owned();
    match error {
        StorageError::NotFound { .. } => StorageError::NotFound { key },
        StorageError::Io { message, .. } => StorageError::Io { key, message },
        StorageError::InvalidKey { reason, .. } => StorageError::InvalidKey { key, reason },
        other => other,
    }
}

mneme_core::storage_from_sync!(HomeStorage, threads);

#[cfg(test)]
mod tests {
    use super::*;
    use mneme_core::{Storage, block_on};

    fn write(root: &std::path::Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn each_home_lists_its_sessions_under_projects_and_refuses_writes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "sessions/--work-app--/2026-02-16T00-00-00-000Z_abc.jsonl", "{}\n");
        write(root, "agents/main/sessions/s1.jsonl", "{}\n");
        write(root, "agents/main/sessions/sessions.json", "{}");
        write(root, "agents/main/agent/auth.json", "{}");
        write(root, "sessions/crab_user_1.jsonl", "{}\n");
        let keys = |home| -> Vec<String> {
            block_on(HomeStorage::new(root, home).list("projects/")).unwrap().into_iter().map(|i| i.key).collect()
        };
        assert_eq!(keys(Home::Pi), ["projects/--work-app--/2026-02-16T00-00-00-000Z_abc.jsonl", "projects/crab_user_1.jsonl"]);
        assert_eq!(keys(Home::OpenClaw), ["projects/main/s1.jsonl", "projects/main/sessions.json"]);
        assert_eq!(keys(Home::Crab), ["projects/crab/crab_user_1.jsonl"]);

        // A session's own prefix (how its parts are found) lists just it.
        let listed = |home, prefix| -> Vec<String> {
            block_on(HomeStorage::new(root, home).list(prefix)).unwrap().into_iter().map(|i| i.key).collect()
        };
        assert_eq!(listed(Home::OpenClaw, "projects/main/s1"), ["projects/main/s1.jsonl"]);
        assert_eq!(listed(Home::OpenClaw, "projects/ma"), ["projects/main/s1.jsonl", "projects/main/sessions.json"]);
        assert_eq!(listed(Home::Pi, "projects/--work-app--/2026"), ["projects/--work-app--/2026-02-16T00-00-00-000Z_abc.jsonl"]);
        assert_eq!(listed(Home::Crab, "projects/crab/crab_user"), ["projects/crab/crab_user_1.jsonl"]);
        assert!(listed(Home::Crab, "projects/other/").is_empty());

        let openclaw = HomeStorage::new(root, Home::OpenClaw);
        assert_eq!(block_on(openclaw.read("projects/main/s1.jsonl", 0, None)).unwrap(), b"{}\n");
        assert!(block_on(openclaw.list("index/")).unwrap().is_empty(), "nothing of Mneme's own is there");
        assert!(matches!(block_on(openclaw.read("index/log-0.jsonl", 0, None)), Err(StorageError::NotFound { .. })));
        assert!(
            matches!(block_on(openclaw.read("projects/main/none.jsonl", 0, None)), Err(StorageError::NotFound { key }) if key == "projects/main/none.jsonl")
        );
        assert!(matches!(block_on(openclaw.append("projects/main/s1.jsonl", b"x")), Err(StorageError::ReadOnly { .. })));
        assert!(matches!(block_on(openclaw.lock("projects/main/s1.jsonl")), Err(StorageError::ReadOnly { .. })));
        assert_eq!(std::fs::read(root.join("agents/main/sessions/s1.jsonl")).unwrap(), b"{}\n");
    }
}
