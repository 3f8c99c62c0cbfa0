//! Keeping sessions healthy: finding sub-agent transcripts, removing a session with
//! everything that belongs to it, and repairing damaged parts after a backup.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::Sessions;
use super::{Parts, Subagent, transcript_of, with_loaded};
use crate::error::Error;
use crate::keys;
use crate::scan;
use crate::storage::{Storage, StorageError};
use crate::transcript::SkippedLine;

/// What `repair` changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RepairReport {
    /// Keys of the originals saved before rewriting, one per changed part.
    pub backups: Vec<String>,
    /// Unreadable lines left out of the repaired transcript (kept in the backup).
    pub dropped: Vec<SkippedLine>,
    /// Glued objects now written one per line.
    pub split_glued: u32,
    /// Lines whose invalid UTF-8 was replaced with U+FFFD.
    pub fixed_utf8: u32,
    /// Lines whose lone UTF-16 surrogate escapes (`\ud83d` without its pair, as Node
    /// writes a cut emoji) were written as `\ufffd`: strict JSON readers refuse such a
    /// line, and older Claude Code sent it back on resume, which the API refuses.
    pub fixed_surrogates: u32,
    /// A torn last line was left out (kept in the backup).
    pub dropped_torn_tail: bool,
    /// Lines whose parent was among the lines left out, now chained past them: else
    /// a resume, Mneme's or Claude Code's, would begin at such a line and lose the
    /// conversation before it.
    pub relinked: Vec<RelinkedLine>,
}

/// A line `repair` chained to another parent (its `parentUuid`, or pi's `parentId`,
/// alone rewritten).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RelinkedLine {
    pub part: u32,
    pub line: u32,
    /// Its new parent: the one the unreadable line before it named, if what is left of
    /// that line names one the session has, else the conversation's entry before it;
    /// none when nothing readable comes before (it is the conversation's first now).
    pub parent: Option<String>,
}

impl<S: Storage> Sessions<'_, S> {
    /// The sub-agent transcripts of session `id`: `<id>/subagents/agent-*.jsonl`
    /// (Claude Code ≥ 2.1) and flat `agent-*.jsonl` files of its project whose entries
    /// name it as their session (2.0).
    pub async fn subagents(&self, id: &str) -> Result<Vec<Subagent>, Error> {
        let parts = self.require(id).await?;
        let mut found = Vec::new();
        for (key, bytes) in self.subagent_files(id, &parts).await? {
            let file = keys::transcript_name(&key);
            let transcript = with_loaded(core::slice::from_ref(&bytes), |loaded| transcript_of(&parts.project, file, 1, loaded));
            found.push(Subagent { key, transcript });
        }
        Ok(found)
    }

    /// The keys and bytes of session `id`'s sub-agent transcripts: Claude Code 2.1's
    /// `<id>/subagents/agent-*.jsonl`, and 2.0's `agent-*.jsonl` beside the session
    /// whose lines name it.
    pub(crate) async fn subagent_files(&self, id: &str, parts: &Parts) -> Result<Vec<(String, Vec<u8>)>, Error> {
        let project_prefix = format!("{}{}/", keys::PROJECTS, parts.project);
        let nested_prefix = keys::session_dir(&parts.project, id);
        let mut found = Vec::new();
        for info in self.base.storage.list(&project_prefix).await? {
            let Some(file) = info.key.rsplit('/').next() else { continue };
            let nested = info.key.starts_with(&nested_prefix) && info.key[nested_prefix.len()..].starts_with("subagents/");
            let flat = !info.key[project_prefix.len()..].contains('/');
            if !(file.starts_with("agent-") && file.ends_with(keys::TRANSCRIPT_SUFFIX) && (nested || flat)) {
                continue;
            }
            let bytes = self.base.storage.read(&info.key, 0, None).await?;
            let belongs =
                nested || with_loaded(core::slice::from_ref(&bytes), |loaded| loaded.lines.iter().any(|l| l.env.session_id() == Some(id)));
            if belongs {
                found.push((info.key, bytes));
            }
        }
        Ok(found)
    }

    /// Removes session `id`: every part, its sub-agent files and its sidecar files
    /// (moved-aside torn lines, repair backups). Returns the keys removed.
    pub async fn remove(&self, id: &str) -> Result<Vec<String>, Error> {
        let subagents = self.subagents(id).await?;
        let parts = self.require(id).await?;
        let base = parts.base_key();
        let removed = self.base.locked(&base, self.remove_locked(&parts, subagents)).await;
        self.reopen(id);
        removed
    }

    async fn remove_locked(&self, parts: &Parts, subagents: Vec<Subagent>) -> Result<Vec<String>, Error> {
        let doomed = self.session_files(parts, subagents.into_iter().map(|s| s.key).collect()).await?;
        for key in &doomed {
            match self.base.storage.remove(key).await {
                Ok(()) | Err(StorageError::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(doomed)
    }

    /// Every file of a session: its parts, sub-agent transcripts, and the torn tails
    /// and repair backups beside them. The first part comes last: until it is moved or
    /// removed the session still lists, so an interrupted removal or archiving can
    /// simply be run again.
    pub(crate) async fn session_files(&self, parts: &Parts, subagents: Vec<String>) -> Result<Vec<String>, Error> {
        let mut files = subagents;
        files.extend(self.base.storage.list(&keys::session_dir(&parts.project, &parts.id)).await?.into_iter().map(|i| i.key));
        let sidecars = self.base.storage.list(&format!("{}{}/{}", keys::PROJECTS, parts.project, parts.id)).await?;
        for info in sidecars {
            let belongs = keys::parse_session_key(&info.key).is_some_and(|p| p.id == parts.id)
                || parts.parts.iter().any(|p| {
                    info.key.strip_prefix(p.key.as_str()).is_some_and(|rest| rest.starts_with(".torn-") || rest.starts_with(".bak-"))
                });
            if belongs {
                files.push(info.key);
            }
        }
        files.sort();
        files.dedup();
        let base = parts.base_key();
        files.retain(|k| *k != base);
        files.push(base);
        Ok(files)
    }

    /// Rewrites the parts of session `id` that have unreadable lines, glued objects,
    /// invalid UTF-8 or a torn tail: readable entries are kept byte for byte, one per
    /// line, but for the parent of a line whose parent was unreadable (see
    /// [`RelinkedLine`]); the original of each changed part is saved first as
    /// `<part>.bak-<now_ms>`. Nothing is written when nothing needs repair.
    pub async fn repair(&self, id: &str, now_ms: i64) -> Result<RepairReport, Error> {
        let parts = self.require(id).await?;
        let base = parts.base_key();
        let repaired = self.base.locked(&base, self.repair_locked(&parts, now_ms)).await;
        self.reopen(id);
        repaired
    }

    async fn repair_locked(&self, parts: &Parts, now_ms: i64) -> Result<RepairReport, Error> {
        let raw = self.read_parts(parts).await?;
        let texts: Vec<_> = raw.iter().map(|bytes| scan::decode(bytes)).collect();
        let scans: Vec<scan::PartScan> =
            raw.iter().zip(&texts).enumerate().map(|(index, (bytes, text))| scan::scan_part(index as u32 + 1, bytes, text)).collect();
        let known: BTreeSet<&str> = scans.iter().flat_map(|scan| &scan.lines).filter_map(|line| line.env.uuid()).collect();
        let mut report = RepairReport::default();
        // The newest entry of the conversation read so far, across parts.
        let mut before: Option<&str> = None;
        for (((bytes, info), text), scan) in raw.iter().zip(&parts.parts).zip(&texts).zip(&scans) {
            let needs_newline = scan.unterminated && scan.torn_at.is_none();
            let sound = scan.skipped.is_empty() && scan.recovered_glued == 0 && scan.invalid_utf8 == 0 && scan.lone_surrogates == 0;
            if sound && scan.torn_at.is_none() && !needs_newline {
                before = scan.lines.iter().rev().find(|line| line.env.ends_a_branch()).and_then(|line| line.env.uuid()).or(before);
                continue;
            }
            let mut repaired = String::with_capacity(bytes.len());
            let mut dropped = scan.skipped.iter().peekable();
            for line in &scan.lines {
                // The unreadable lines just before this one.
                let mut gap = Vec::new();
                while let Some(skipped) = dropped.next_if(|skipped| skipped.line < line.line) {
                    gap.extend(text.split('\n').nth(skipped.line.saturating_sub(1) as usize));
                }
                match relinked(line, &gap, &known, before) {
                    Some((relinked, parent)) => {
                        repaired.push_str(&relinked);
                        report.relinked.push(RelinkedLine { part: line.part, line: line.line, parent: parent.map(String::from) });
                    }
                    None => repaired.push_str(line.raw),
                }
                repaired.push('\n');
                if line.env.ends_a_branch() {
                    before = line.env.uuid().or(before);
                }
            }
            let backup = format!("{}.bak-{now_ms}", info.key);
            self.base.storage.replace(&backup, bytes, None).await?;
            // Only the part as read is rewritten: a line appended meanwhile by a
            // program that takes no lock Mneme sees must not be lost.
            self.base.storage.replace(&info.key, repaired.as_bytes(), Some(bytes.len() as u64)).await?;
            report.backups.push(backup);
            report.dropped.extend(scan.skipped.iter().cloned());
            report.split_glued += scan.recovered_glued;
            report.fixed_utf8 += scan.invalid_utf8;
            report.fixed_surrogates += scan.lone_surrogates;
            report.dropped_torn_tail |= scan.torn_at.is_some();
        }
        Ok(report)
    }
}

/// `line` chained past the unreadable lines of `gap` before it, with its new parent,
/// when its own parent is no line of the session (`known`): most likely the line just
/// before it, which is unreadable. The new parent is the one an unreadable line names
/// in what is left of it (Claude Code and pi write the parent first), nearest first,
/// if the session has it; else `before`, the conversation's entry before the gap.
fn relinked<'a>(line: &scan::Line, gap: &[&'a str], known: &BTreeSet<&str>, before: Option<&'a str>) -> Option<(String, Option<&'a str>)> {
    let parent = line.env.parent_uuid()?;
    if gap.is_empty() || known.contains(parent) {
        return None;
    }
    let named = gap.iter().rev().find_map(|text| named_parent(text).filter(|named| known.contains(named)));
    let new_parent = named.or(before);
    Some((with_parent(line.raw, parent, new_parent)?, new_parent))
}

/// The parent a line's text names, read from its text alone (the line is unreadable).
fn named_parent(text: &str) -> Option<&str> {
    ["\"parentUuid\":\"", "\"parentId\":\""].iter().find_map(|field| {
        let value = &text[text.find(field)? + field.len()..];
        let value = &value[..value.find('"')?];
        (!value.is_empty() && !value.contains('\\')).then_some(value)
    })
}

/// `raw` with its parent field's value `old` replaced by `new` (null for none), the
/// rest byte for byte; `None` when the field is not spelled as Claude Code and pi
/// write it.
fn with_parent(raw: &str, old: &str, new: Option<&str>) -> Option<String> {
    let mut value = String::new();
    match new {
        Some(new) => crate::support::json::push_string(&mut value, new),
        None => value.push_str("null"),
    }
    ["parentUuid", "parentId"].iter().find_map(|field| {
        let spelled = format!("\"{field}\":\"{old}\"");
        let at = raw.find(&spelled)?;
        Some(format!("{}\"{field}\":{value}{}", &raw[..at], &raw[at + spelled.len()..]))
    })
}
