//! Keeping sessions healthy: finding sub-agent transcripts, removing a session with
//! everything that belongs to it, and repairing damaged parts after a backup.

use alloc::collections::BTreeMap;
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
/// alone rewritten), where the original (the backup) has it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RelinkedLine {
    pub part: u32,
    pub line: u32,
    /// Its new parent: the one the unreadable lines before it name in what is left of
    /// them, else its conversation's entry before them; none when they name none (a
    /// compaction's boundary). Every line that had the same missing parent gets the
    /// same.
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
        let relinks = relinks(&texts, &scans);
        let mut report = RepairReport::default();
        let mut writes = Vec::new();
        for (index, ((bytes, info), scan)) in raw.iter().zip(&parts.parts).zip(&scans).enumerate() {
            let needs_newline = scan.unterminated && scan.torn_at.is_none();
            let sound = scan.skipped.is_empty() && scan.recovered_glued == 0 && scan.invalid_utf8 == 0 && scan.lone_surrogates == 0;
            let mut edits = Vec::new();
            for (&(_, at), &parent) in relinks.range((index, 0)..(index + 1, 0)) {
                let Some((line, relinked)) = scan.lines.get(at).and_then(|line| Some((line, with_parent(line.raw, parent)?))) else {
                    continue;
                };
                report.relinked.push(RelinkedLine { part: line.part, line: line.line, parent: parent.map(String::from) });
                edits.push((at, relinked));
            }
            let readable = sound && scan.torn_at.is_none();
            if readable && !needs_newline && edits.is_empty() {
                continue;
            }
            // A part whose every line reads keeps every byte but those it changes (a
            // relinked line, a missing last newline): its line endings, its blank lines.
            // Any other is written again line by line.
            let spliced = readable.then(|| spliced(&texts[index], &scan.lines, &edits)).flatten();
            let repaired = match spliced {
                Some(mut spliced) => {
                    if needs_newline {
                        spliced.push('\n');
                    }
                    spliced
                }
                None => {
                    let mut repaired = String::with_capacity(bytes.len());
                    let mut edits = edits.iter().peekable();
                    for (at, line) in scan.lines.iter().enumerate() {
                        match edits.next_if(|(edited, _)| *edited == at) {
                            Some((_, relinked)) => repaired.push_str(relinked),
                            None => repaired.push_str(line.raw),
                        }
                        repaired.push('\n');
                    }
                    repaired
                }
            };
            let backup = format!("{}.bak-{now_ms}", info.key);
            report.backups.push(backup.clone());
            report.dropped.extend(scan.skipped.iter().cloned());
            report.split_glued += scan.recovered_glued;
            report.fixed_utf8 += scan.invalid_utf8;
            report.fixed_surrogates += scan.lone_surrogates;
            report.dropped_torn_tail |= scan.torn_at.is_some();
            writes.push((info, bytes, backup, repaired));
        }
        // The last part first: a line chained past an unreadable line of an earlier part
        // is written before that line is dropped, so a write that fails between them
        // leaves the unreadable line for the next repair to read again.
        for (info, bytes, backup, repaired) in writes.into_iter().rev() {
            self.base.storage.replace(&backup, bytes, None).await?;
            // Only the part as read is rewritten: a line appended meanwhile by a
            // program that takes no lock Mneme sees must not be lost.
            self.base.storage.replace(&info.key, repaired.as_bytes(), Some(bytes.len() as u64)).await?;
        }
        Ok(report)
    }
}

/// `text` with the lines at `edits` (places among `lines`, in order) replaced, every
/// other byte as it was; `None` if a line is not a slice of `text`.
fn spliced(text: &str, lines: &[scan::Line], edits: &[(usize, String)]) -> Option<String> {
    let mut out = String::with_capacity(text.len() + edits.len() * 8);
    let mut copied = 0;
    for (at, edited) in edits {
        let raw = lines.get(*at)?.raw;
        let start = (raw.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
        out.push_str(text.get(copied..start)?);
        out.push_str(edited);
        copied = start + raw.len();
    }
    out.push_str(text.get(copied..)?);
    Some(out)
}

/// The lines to chain past unreadable ones, by part and place among its readable
/// lines, each with its new parent (`None`: it begins the conversation now). A line is
/// chained past when its parent is no line of the session and either unreadable lines
/// (a torn record's included) come before it with no entry between them (its parent is
/// most likely among them) or a line chained past already had the same missing parent
/// (Claude Code gives a reply's progress line and its tool result one parent). Its new
/// parent is the one the unreadable line that was its parent names in what is left of
/// it (the one whose text holds the missing id, else the nearest; Claude Code and pi
/// write the parent first), when that comes earlier in the session or is none (a
/// compaction's boundary); else the entry of its conversation (the main one, or a
/// sub-agent's sidechain) before the gap. With no such entry either, it is left as it
/// is: it may name a line of another session it was continued from.
fn relinks<'a>(texts: &'a [alloc::borrow::Cow<'a, str>], scans: &'a [scan::PartScan<'a>]) -> BTreeMap<(usize, usize), Option<&'a str>> {
    let mut place: BTreeMap<&str, usize> = BTreeMap::new();
    for (n, line) in scans.iter().flat_map(|scan| &scan.lines).enumerate() {
        if let Some(id) = line.env.uuid() {
            place.entry(id).or_insert(n);
        }
    }
    let mut relinks = BTreeMap::new();
    // Each missing parent a line was chained past, and what its lines are chained to.
    let mut missing: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    // The newest entry so far of the main conversation and of a sidechain.
    let mut before: [Option<&str>; 2] = [None, None];
    // The unreadable lines since the last entry, across parts.
    let mut gap: Vec<&str> = Vec::new();
    let mut n = 0;
    for (index, (text, scan)) in texts.iter().zip(scans).enumerate() {
        let mut physical = text.split('\n').enumerate();
        let mut skipped = scan.skipped.iter().peekable();
        let mut unreadable = |upto: Option<u32>, gap: &mut Vec<&'a str>| {
            while let Some(line) = skipped.next_if(|skipped| upto.is_none_or(|upto| skipped.line < upto)) {
                let at = line.line.saturating_sub(1) as usize;
                gap.extend(physical.find(|(number, _)| *number == at).map(|(_, text)| text));
            }
        };
        for (at, line) in scan.lines.iter().enumerate() {
            unreadable(Some(line.line), &mut gap);
            let side = usize::from(line.env.is_sidechain.0);
            if let Some(parent) = line.env.parent_uuid().filter(|parent| !place.contains_key(parent)) {
                let chained = match missing.get(parent) {
                    Some(&chained) => Some(chained),
                    None if !gap.is_empty() => named_parent(&gap, parent, &place, n).or(before[side].map(Some)),
                    None => None,
                };
                if let Some(chained) = chained {
                    missing.insert(parent, chained);
                    relinks.insert((index, at), chained);
                }
            }
            // Lines without ids (Claude Code's file-history snapshots) are no entries.
            if line.env.uuid().is_some() || line.env.parent_uuid().is_some() {
                gap.clear();
            }
            let entry = !(line.env.kind() == "progress" || line.env.is_tombstone() || line.env.is_session_header());
            if entry && line.env.uuid().is_some() {
                before[side] = line.env.uuid();
            }
            n += 1;
        }
        unreadable(None, &mut gap);
        gap.extend(scan.torn_at.and_then(|at| text.get(usize::try_from(at).ok()?..)));
    }
    relinks
}

/// The parent the unreadable lines of `gap` name for a line whose parent, `missing`,
/// is among them: the one whose text holds `missing` as its id, else the nearest, or an
/// older one when that names a line that is unreadable too. A parent of the session's
/// before place `n` (`place`: each id's), or none when the line names none (a
/// compaction's boundary); `None` when none of them names one.
fn named_parent<'a>(gap: &[&'a str], missing: &str, place: &BTreeMap<&str, usize>, n: usize) -> Option<Option<&'a str>> {
    let own = ["uuid", "id"].iter().map(|field| format!("\"{field}\":\"{missing}\""));
    let own: Vec<String> = own.collect();
    let end = gap.iter().rposition(|text| own.iter().any(|spelled| text.contains(spelled.as_str()))).map_or(gap.len(), |at| at + 1);
    gap.get(..end)?.iter().rev().find_map(|text| {
        PARENT_FIELDS.iter().find_map(|field| {
            let value = &text[text.find(&format!("\"{field}\":"))? + field.len() + 3..];
            if value.starts_with("null") {
                return Some(None);
            }
            let value = value.strip_prefix('"')?;
            let value = &value[..value.find('"')?];
            place.get(value).is_some_and(|&at| at < n).then_some(Some(value))
        })
    })
}

/// The fields a line names its parent in, in the order the reader takes them: Claude
/// Code's, Cersei's and pi's.
const PARENT_FIELDS: [&str; 3] = ["parentUuid", "parent_uuid", "parentId"];

/// `raw` with the value of its parent field (the first of [`PARENT_FIELDS`] it has, as
/// the reader takes it) replaced by `parent` (null for none), the rest byte for byte;
/// `None` when the line cannot be walked as one object.
fn with_parent(raw: &str, parent: Option<&str>) -> Option<String> {
    let (fields, _) = crate::support::json::fields_named(raw, PARENT_FIELDS)?;
    // The first spelled as a string, as the reader takes it.
    let old = fields.into_iter().flatten().find(|value| value.starts_with('"'))?;
    let at = (old.as_ptr() as usize).checked_sub(raw.as_ptr() as usize)?;
    let mut out = String::with_capacity(raw.len() + 40);
    out.push_str(raw.get(..at)?);
    match parent {
        Some(parent) => crate::support::json::push_string(&mut out, parent),
        None => out.push_str("null"),
    }
    out.push_str(raw.get(at + old.len()..)?);
    Some(out)
}
