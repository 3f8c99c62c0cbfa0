//! pi's session versions, brought to v3 as pi's own loader migrates them: v1 entries
//! get ids, each chained to the entry before it, and a compaction's
//! `firstKeptEntryIndex` (an index into the file, header included) becomes the
//! `firstKeptEntryId` of that entry; v2's `hookMessage` role becomes `custom`. Lines
//! are read as Mneme reads them: two objects glued on one line are both kept.

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use crate::dialect::pi::entry_id;
use crate::error::Error;
use crate::scan;
use crate::support::ids::nth_uuid;

pub(crate) const CURRENT: u32 = 3;

pub(crate) struct Migrated {
    /// The session at v3 (the bytes given, when they were v3 already).
    pub data: Vec<u8>,
    /// The version migrated from; `None` for a v3 session.
    pub from: Option<u32>,
    /// Unreadable lines left out of a migrated session.
    pub skipped: u32,
}

/// `data` at pi's current version; new entry ids derive from `uuid`.
pub(crate) fn to_current(data: &[u8], uuid: &str) -> Result<Migrated, Error> {
    let text = scan::decode(data);
    let part = scan::scan_part(1, data, &text);
    let mut entries: Vec<Value> = part.lines.iter().filter_map(|l| serde_json::from_str(l.raw).ok()).collect();
    let skipped = part.skipped.len() as u32 + (part.lines.len() - entries.len()) as u32;
    let Some(header) = entries.first().filter(|e| e["type"] == "session") else {
        return Err(Error::InvalidArgument("not a pi session: its first line is no `session` header".into()));
    };
    let version = header["version"].as_u64().map_or(1, |v| u32::try_from(v).unwrap_or(u32::MAX));
    if version >= CURRENT {
        return Ok(Migrated { data: data.to_vec(), from: None, skipped: 0 });
    }
    if version < 2 {
        give_ids(&mut entries, uuid);
    }
    for entry in entries.iter_mut() {
        if entry["type"] == "session" {
            entry["version"] = CURRENT.into();
        } else if entry["type"] == "message" && entry["message"]["role"] == "hookMessage" {
            entry["message"]["role"] = "custom".into();
        }
    }
    let mut out = String::new();
    for entry in &entries {
        out.push_str(&crate::dialect::json(entry)?);
        out.push('\n');
    }
    Ok(Migrated { data: out.into_bytes(), from: Some(version), skipped })
}

/// v1 → v2: ids, each entry's parent the one before it.
fn give_ids(entries: &mut [Value], uuid: &str) {
    let mut taken = BTreeSet::new();
    let mut n = 1u32;
    let mut ids: Vec<Option<String>> = Vec::with_capacity(entries.len());
    let mut previous: Option<String> = None;
    for entry in entries.iter_mut() {
        if entry["type"] == "session" {
            ids.push(None);
            continue;
        }
        let id = loop {
            let candidate = entry_id(&nth_uuid(uuid, n));
            n = n.wrapping_add(1);
            if taken.insert(candidate.clone()) {
                break candidate;
            }
        };
        entry["id"] = id.as_str().into();
        entry["parentId"] = previous.as_deref().into();
        previous = Some(id.clone());
        ids.push(Some(id));
    }
    for entry in entries.iter_mut() {
        let Some(index) = entry.get("firstKeptEntryIndex").and_then(Value::as_u64) else { continue };
        if entry["type"] == "compaction"
            && let Some(Some(id)) = ids.get(index as usize)
        {
            entry["firstKeptEntryId"] = id.as_str().into();
        }
        if let Some(map) = entry.as_object_mut() {
            map.remove("firstKeptEntryIndex");
        }
    }
}
