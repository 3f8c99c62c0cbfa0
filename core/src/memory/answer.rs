//! A model's answer to a memory plan (extraction, consolidation): one JSON operation
//! per line, Markdown fences ignored, every line checked before any is acted on. The
//! first line that does not read is an [`Error::InvalidAnswer`] naming it.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Deserialize;

use super::file::MemoryType;
use super::store::{Change, NewMemory, check_new};
use crate::error::Error;

/// One line of an answer: every field any plan's operations use. Unknown fields are
/// refused, so a misspelt one is never dropped in silence.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Operation {
    pub op: String,
    pub file: Option<String>,
    pub files: Option<Vec<String>>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub link: Option<String>,
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub description: Option<String>,
    pub body: Option<String>,
    pub confidence: Option<f64>,
    pub topics: Option<Vec<String>>,
    pub reason: Option<String>,
}

/// The operations `check` makes of the answer's lines, each with its line number
/// (`check` gives `None` for a line that asks for nothing, and its error is the line's).
pub(super) fn read<T>(answer: &str, mut check: impl FnMut(Operation) -> Result<Option<T>, String>) -> Result<Vec<(u32, T)>, Error> {
    let mut checked = Vec::new();
    let mut lines = 0;
    for (index, line) in answer.lines().enumerate() {
        let text = line.trim();
        // Models wrap JSON lines in a Markdown fence more often than not.
        if text.is_empty() || text.starts_with("```") {
            continue;
        }
        lines += 1;
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let invalid = |reason: String| Error::InvalidAnswer { line: number, reason };
        let operation: Operation = serde_json::from_str(text).map_err(|e| invalid(format!("not a JSON operation ({e})")))?;
        if let Some(value) = check(operation).map_err(invalid)? {
            checked.push((number, value));
        }
    }
    if lines == 0 {
        return Err(Error::InvalidAnswer {
            line: 1,
            reason: String::from("the answer is empty; `{\"op\":\"noop\"}` says there is nothing to do"),
        });
    }
    Ok(checked)
}

/// `file`, the value of field `field`, if it is one of the memories the plan listed.
pub(super) fn known(file: Option<String>, field: &str, listed: &[String]) -> Result<String, String> {
    let file = file.ok_or_else(|| format!("it names no `{field}`"))?;
    if listed.contains(&file) { Ok(file) } else { Err(format!("`{file}` is not one of the memories listed")) }
}

impl Operation {
    /// The memory an `add`, `supersede` or `merge` writes.
    pub fn new_memory(&self) -> Result<NewMemory, String> {
        let name = self.name.as_deref().filter(|n| !n.trim().is_empty()).ok_or("it has no `name`")?;
        let kind = self.type_.as_deref().ok_or("it has no `type`")?;
        let kind = MemoryType::parse(kind).ok_or_else(|| format!("`{kind}` is not a memory type (user, feedback, project, reference)"))?;
        let mut memory = NewMemory::new(name, kind, self.description.as_deref().unwrap_or(""), self.body.as_deref().unwrap_or(""));
        memory.confidence = self.confidence.map(confidence).transpose()?;
        memory.topics = self.topics.clone().unwrap_or_default();
        check_new(&memory).map_err(|e| e.to_string())?;
        Ok(memory)
    }

    /// The fields an `update` of `file` changes; an update that changes nothing is refused.
    pub fn change(self, file: &str) -> Result<Change, String> {
        let kind = self.type_.map(|k| MemoryType::parse(&k).ok_or_else(|| format!("`{k}` is not a memory type"))).transpose()?;
        let change = Change {
            name: self.name,
            type_: kind,
            description: self.description,
            body: self.body,
            topics: self.topics,
            confidence: self.confidence.map(confidence).transpose()?,
        };
        if change == Change::default() {
            return Err(format!("the update of `{file}` changes nothing"));
        }
        Ok(change)
    }
}

fn confidence(value: f64) -> Result<f64, String> {
    if (0.0..=1.0).contains(&value) { Ok(value) } else { Err(format!("confidence {value} is not between 0 and 1")) }
}
