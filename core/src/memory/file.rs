//! One memory file, as Claude Code writes them: YAML frontmatter (`name`,
//! `description`, `type`) and a Markdown body. Mneme's own metadata lives in the same
//! frontmatter; keys neither knows are kept as they were written, in their place.
//!
//! ```text
//! ---
//! name: Deploy target
//! description: Where releases go
//! type: project
//! created: 2026-11-22T10:00:00.000Z
//! topics: [deploy, release]
//! ---
//!
//! Releases go to production on Fridays.
//! ```

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::support::time;

/// Claude Code's four memory types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// Who the user is: role, expertise, preferences.
    User,
    /// How the user wants the work done: corrections and confirmations.
    Feedback,
    /// Facts about the project's work, decisions and deadlines.
    Project,
    /// Where to find things outside the project.
    Reference,
}

impl MemoryType {
    pub const ALL: [MemoryType; 4] = [MemoryType::User, MemoryType::Feedback, MemoryType::Project, MemoryType::Reference];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::User => "user",
            MemoryType::Feedback => "feedback",
            MemoryType::Project => "project",
            MemoryType::Reference => "reference",
        }
    }

    pub fn parse(text: &str) -> Option<MemoryType> {
        MemoryType::ALL.into_iter().find(|kind| kind.as_str() == text.trim())
    }
}

/// How one memory relates to others (by file stem).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Links {
    pub relates_to: Vec<String>,
    pub contradicts: Vec<String>,
    pub extends: Vec<String>,
    pub derived_from: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    RelatesTo,
    Contradicts,
    Extends,
    DerivedFrom,
}

impl LinkKind {
    pub const ALL: [LinkKind; 4] = [LinkKind::RelatesTo, LinkKind::Contradicts, LinkKind::Extends, LinkKind::DerivedFrom];

    /// The frontmatter key (and the CLI's word).
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::RelatesTo => "relates_to",
            LinkKind::Contradicts => "contradicts",
            LinkKind::Extends => "extends",
            LinkKind::DerivedFrom => "derived_from",
        }
    }

    pub fn parse(text: &str) -> Option<LinkKind> {
        let text = text.trim().replace('-', "_");
        LinkKind::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

impl Links {
    pub fn get(&self, kind: LinkKind) -> &Vec<String> {
        match kind {
            LinkKind::RelatesTo => &self.relates_to,
            LinkKind::Contradicts => &self.contradicts,
            LinkKind::Extends => &self.extends,
            LinkKind::DerivedFrom => &self.derived_from,
        }
    }

    pub fn get_mut(&mut self, kind: LinkKind) -> &mut Vec<String> {
        match kind {
            LinkKind::RelatesTo => &mut self.relates_to,
            LinkKind::Contradicts => &mut self.contradicts,
            LinkKind::Extends => &mut self.extends,
            LinkKind::DerivedFrom => &mut self.derived_from,
        }
    }

    /// Every linked memory, each once.
    pub fn all(&self) -> Vec<String> {
        let mut all: Vec<String> = LinkKind::ALL.iter().flat_map(|kind| self.get(*kind).iter().cloned()).collect();
        all.sort();
        all.dedup();
        all
    }
}

/// One memory: what Claude Code reads plus Mneme's metadata.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Memory {
    /// The file stem: `user_role` for `user_role.md`. Unique in its scope.
    pub file: String,
    pub name: String,
    pub description: String,
    /// `None` when the file names no type or one Claude Code does not define.
    #[serde(rename = "type")]
    pub type_: Option<MemoryType>,
    pub body: String,
    pub created_ms: Option<i64>,
    pub updated_ms: Option<i64>,
    /// When a host last said the memory was useful (see `Memories::memory_used`); with
    /// `updated`, what MEMORY.md's caps keep first.
    pub used_ms: Option<i64>,
    /// When the fact became true (defaults to when it was written).
    pub valid_from_ms: Option<i64>,
    /// When it stopped being true: set by supersede.
    pub invalid_at_ms: Option<i64>,
    pub superseded_by: Option<String>,
    /// Set by forget: out of MEMORY.md and recall, listed with `all`.
    pub archived_ms: Option<i64>,
    /// 0 to 1, as the writer (a model, a person) judged it.
    pub confidence: Option<f64>,
    pub topics: Vec<String>,
    pub links: Links,
    /// The session and entry it came from.
    pub session: Option<String>,
    pub entry: Option<String>,
    /// Frontmatter lines neither Claude Code nor Mneme defines, kept verbatim.
    pub extra: Vec<String>,
    /// What the write that returned this memory took out of it (see `redact`); empty
    /// for memories read back.
    pub redacted: Vec<crate::redact::Redacted>,
}

impl Memory {
    pub fn new(file: &str) -> Self {
        Memory {
            file: file.to_string(),
            name: String::new(),
            description: String::new(),
            type_: None,
            body: String::new(),
            created_ms: None,
            updated_ms: None,
            used_ms: None,
            valid_from_ms: None,
            invalid_at_ms: None,
            superseded_by: None,
            archived_ms: None,
            confidence: None,
            topics: Vec::new(),
            links: Links::default(),
            session: None,
            entry: None,
            extra: Vec::new(),
            redacted: Vec::new(),
        }
    }

    /// In MEMORY.md and default recall: neither superseded nor archived.
    pub fn is_current(&self) -> bool {
        self.invalid_at_ms.is_none() && self.superseded_by.is_none() && self.archived_ms.is_none()
    }

    /// Marks it replaced by memory `successor`: no longer true from `now_ms`, kept.
    pub fn supersede_by(&mut self, successor: &str, now_ms: i64) {
        self.invalid_at_ms = Some(now_ms);
        self.superseded_by = Some(successor.to_string());
        self.updated_ms = Some(now_ms);
    }

    /// Records that it relates to memory `to` in the way `kind` says (once).
    pub fn link(&mut self, kind: LinkKind, to: &str, now_ms: i64) {
        let targets = self.links.get_mut(kind);
        if !targets.iter().any(|t| t == to) {
            targets.push(to.to_string());
        }
        self.updated_ms = Some(now_ms);
    }

    /// Archives it: kept, out of MEMORY.md and default recall.
    pub fn archive(&mut self, now_ms: i64) {
        // Archived already: when it was is kept (a retention counts from it).
        if self.archived_ms.is_some() {
            return;
        }
        self.archived_ms = Some(now_ms);
        self.updated_ms = Some(now_ms);
    }

    /// Records that it was useful at `now_ms` (a later time already recorded stays).
    pub fn mark_used(&mut self, now_ms: i64) {
        self.used_ms = Some(self.used_ms.map_or(now_ms, |used| used.max(now_ms)));
    }

    /// The file as a rollback (or a caller checking what a consolidation wrote)
    /// compares it: being used since is no change.
    pub fn text_without_use(&self) -> String {
        let mut unused = self.clone();
        unused.used_ms = None;
        unused.render()
    }

    /// When it was last useful: used, updated or written, whichever is latest.
    pub fn last_useful_ms(&self) -> i64 {
        self.used_ms.into_iter().chain(self.updated_ms).max().unwrap_or_else(|| self.time_ms())
    }

    /// When it happened, for ordering: valid-from, else created, else updated.
    pub fn time_ms(&self) -> i64 {
        self.valid_from_ms.or(self.created_ms).or(self.updated_ms).unwrap_or(0)
    }

    /// Everything recall searches.
    pub fn searchable_text(&self) -> String {
        let mut text = String::with_capacity(self.name.len() + self.description.len() + self.body.len() + 2);
        for part in [&self.name, &self.description, &self.body] {
            text.push_str(part);
            text.push('\n');
        }
        text
    }

    /// Reads a memory file. Never fails: a file without frontmatter is all body (as
    /// Claude Code reads it), and a value Mneme cannot read is kept as an unknown line.
    pub fn parse(file: &str, source: &str) -> Memory {
        let mut memory = Memory::new(file);
        let Some((front, body)) = split_frontmatter(source) else {
            memory.body = source.to_string();
            return memory;
        };
        memory.body = body.strip_prefix('\n').unwrap_or(body).to_string();
        let lines: Vec<&str> = front.lines().collect();
        let mut i = 0;
        while let Some(&line) = lines.get(i) {
            i += 1;
            // A key's value may continue on indented or `- ` lines (a block list).
            let mut block: Vec<&str> = Vec::new();
            while let Some(&next) = lines.get(i) {
                if next.starts_with(' ') || next.starts_with('\t') || next.starts_with("- ") || next.trim().is_empty() {
                    block.push(next);
                    i += 1;
                } else {
                    break;
                }
            }
            if !memory.read_field(line, &block) {
                memory.extra.push(line.to_string());
                memory.extra.extend(block.iter().map(|l| l.to_string()));
            }
        }
        memory
    }

    /// Takes one `key: value` into the memory; false when it is not a field Mneme knows
    /// or its value does not read, so the caller keeps the line as written.
    fn read_field(&mut self, line: &str, block: &[&str]) -> bool {
        let Some((key, value)) = line.split_once(':') else { return false };
        let value = value.trim();
        let has_block = block.iter().any(|l| !l.trim().is_empty());
        let text = || if has_block { None } else { scalar(value) };
        let millis = || text().and_then(|t| time::parse_millis(&t));
        match key.trim() {
            "name" => text().map(|t| self.name = t).is_some(),
            "description" => text().map(|t| self.description = t).is_some(),
            "type" => match text().and_then(|t| MemoryType::parse(&t)) {
                Some(kind) => {
                    self.type_ = Some(kind);
                    true
                }
                None => false,
            },
            "created" => millis().map(|t| self.created_ms = Some(t)).is_some(),
            "updated" => millis().map(|t| self.updated_ms = Some(t)).is_some(),
            "used" => millis().map(|t| self.used_ms = Some(t)).is_some(),
            "valid_from" => millis().map(|t| self.valid_from_ms = Some(t)).is_some(),
            "invalid_at" => millis().map(|t| self.invalid_at_ms = Some(t)).is_some(),
            "archived_at" => millis().map(|t| self.archived_ms = Some(t)).is_some(),
            "superseded_by" => text().map(|t| self.superseded_by = Some(t)).is_some(),
            "session" => text().map(|t| self.session = Some(t)).is_some(),
            "entry" => text().map(|t| self.entry = Some(t)).is_some(),
            "confidence" => match text().and_then(|t| t.parse::<f64>().ok()).filter(|c| (0.0..=1.0).contains(c)) {
                Some(confidence) => {
                    self.confidence = Some(confidence);
                    true
                }
                None => false,
            },
            "topics" => list(value, block).map(|items| self.topics = items).is_some(),
            other => match LinkKind::parse(other) {
                Some(kind) if other == kind.as_str() => list(value, block).map(|items| *self.links.get_mut(kind) = items).is_some(),
                _ => false,
            },
        }
    }

    /// The file's text: Claude Code's keys first, then Mneme's, then the unknown lines.
    pub fn render(&self) -> String {
        let mut out = String::from("---\n");
        let mut field = |key: &str, value: String| {
            out.push_str(key);
            out.push_str(": ");
            out.push_str(&value);
            out.push('\n');
        };
        field("name", quote(&self.name));
        field("description", quote(&self.description));
        if let Some(kind) = self.type_ {
            field("type", kind.as_str().to_string());
        }
        let stamps = [
            ("created", self.created_ms),
            ("updated", self.updated_ms),
            ("used", self.used_ms),
            ("valid_from", self.valid_from_ms),
            ("invalid_at", self.invalid_at_ms),
            ("archived_at", self.archived_ms),
        ];
        for (key, stamp) in stamps {
            if let Some(ms) = stamp {
                field(key, time::format_millis(ms));
            }
        }
        if let Some(successor) = &self.superseded_by {
            field("superseded_by", quote(successor));
        }
        if let Some(confidence) = self.confidence {
            field("confidence", alloc::format!("{confidence}"));
        }
        if !self.topics.is_empty() {
            field("topics", flow_list(&self.topics));
        }
        for kind in LinkKind::ALL {
            let targets = self.links.get(kind);
            if !targets.is_empty() {
                field(kind.as_str(), flow_list(targets));
            }
        }
        if let Some(session) = &self.session {
            field("session", quote(session));
        }
        if let Some(entry) = &self.entry {
            field("entry", quote(entry));
        }
        for line in &self.extra {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("---\n\n");
        out.push_str(&self.body);
        if !self.body.is_empty() && !self.body.ends_with('\n') {
            out.push('\n');
        }
        out
    }
}

/// The frontmatter between a first line `---` and the next `---` line, and the rest.
pub(crate) fn split_frontmatter(source: &str) -> Option<(&str, &str)> {
    let rest = source.strip_prefix("---\n").or_else(|| source.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let front = rest.get(..offset)?;
            let body = rest.get(offset + line.len()..)?;
            return Some((front, body));
        }
        offset += line.len();
    }
    None
}

/// A YAML scalar as Mneme writes and Claude Code reads them: plain, or double-quoted
/// with JSON's escapes (a subset of YAML's), or single-quoted (`''` is a quote).
fn scalar(value: &str) -> Option<String> {
    if value.starts_with('"') {
        return serde_json::from_str::<String>(value).ok();
    }
    if let Some(inner) = value.strip_prefix('\'') {
        return inner.strip_suffix('\'').map(|inner| inner.replace("''", "'"));
    }
    if value.starts_with(['[', '{', '|', '>', '&', '*', '!']) {
        return None;
    }
    Some(value.to_string())
}

/// `[a, b]` or a block of `- a` lines.
fn list(value: &str, block: &[&str]) -> Option<Vec<String>> {
    if let Some(inner) = value.strip_prefix('[') {
        let inner = inner.strip_suffix(']')?;
        if inner.trim().is_empty() {
            return Some(Vec::new());
        }
        return split_flow_items(inner).into_iter().map(|item| scalar(item.trim())).collect();
    }
    if !value.is_empty() {
        return scalar(value).map(|item| alloc::vec![item]);
    }
    block
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.trim_start().strip_prefix("- ").and_then(|item| scalar(item.trim())))
        .collect()
}

/// The items of a flow list, split at commas outside quotes.
fn split_flow_items(inner: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut start = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, c) in inner.char_indices() {
        match quote {
            Some('"') if escaped => escaped = false,
            Some('"') if c == '\\' => escaped = true,
            Some(open) if c == open => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ',' => {
                items.push(inner.get(start..at).unwrap_or_default());
                start = at + 1;
            }
            None => {}
        }
    }
    items.push(inner.get(start..).unwrap_or_default());
    items
}

/// A value written so YAML (and Claude Code) reads it back as the same string.
fn quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value.trim() == value
        && !value.starts_with(|c: char| "-?:,[]{}#&*!|>'\"%@`".contains(c))
        && !value.contains(": ")
        && !value.contains(" #")
        && !value.contains(',')
        && !value.chars().any(char::is_control)
        && !matches!(value, "true" | "false" | "null" | "yes" | "no" | "~")
        && value.parse::<f64>().is_err();
    if plain { value.to_string() } else { serde_json::to_string(value).unwrap_or_default() }
}

fn flow_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|item| quote(item)).collect();
    alloc::format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_claude_code_memory_and_writes_it_back_with_unknown_keys_in_place() {
        let source = "---\nname: User role\ndescription: The user is a data scientist\ntype: user\noriginSessionId: abc\nnested:\n  deep: 1\n---\n\nThe user works on observability.\n";
        let memory = Memory::parse("user_role", source);
        assert_eq!(memory.name, "User role");
        assert_eq!(memory.type_, Some(MemoryType::User));
        assert_eq!(memory.body, "The user works on observability.\n");
        assert_eq!(memory.extra, ["originSessionId: abc", "nested:", "  deep: 1"]);
        let again = Memory::parse("user_role", &memory.render());
        assert_eq!(again, memory);
        assert!(memory.render().contains("originSessionId: abc\nnested:\n  deep: 1\n---\n"));
    }

    #[test]
    fn mneme_metadata_round_trips() {
        let mut memory = Memory::new("deploy");
        memory.name = "Deploy: target".into();
        memory.description = "Where, \"exactly\", releases go # not a comment".into();
        memory.type_ = Some(MemoryType::Project);
        memory.body = "Production.".into();
        memory.created_ms = Some(1_700_000_000_000);
        memory.invalid_at_ms = Some(1_700_000_100_000);
        memory.superseded_by = Some("deploy-2".into());
        memory.confidence = Some(0.75);
        memory.topics = alloc::vec!["deploy".into(), "a, b".into()];
        memory.links.contradicts = alloc::vec!["old".into()];
        memory.session = Some("7f3e".into());
        memory.entry = Some("u-1".into());
        let text = memory.render();
        let mut expected = memory.clone();
        expected.body = "Production.\n".into();
        assert_eq!(Memory::parse("deploy", &text), expected, "{text}");
        assert!(!memory.is_current());
    }

    #[test]
    fn archiving_again_keeps_when_it_was_archived() {
        let mut memory = Memory::new("old");
        memory.archive(1_700_000_000_000);
        memory.archive(1_800_000_000_000);
        assert_eq!((memory.archived_ms, memory.updated_ms), (Some(1_700_000_000_000), Some(1_700_000_000_000)));
    }

    #[test]
    fn block_lists_quotes_and_files_without_frontmatter() {
        let memory = Memory::parse("x", "---\nname: 'It''s'\ntopics:\n  - rust\n  - \"wasm\"\ntype: opinion\n---\nbody");
        assert_eq!(memory.name, "It's");
        assert_eq!(memory.topics, ["rust", "wasm"]);
        assert_eq!(memory.type_, None);
        assert_eq!(memory.extra, ["type: opinion"]);
        let bare = Memory::parse("y", "just text\n---\n");
        assert_eq!(bare.body, "just text\n---\n");
        let unterminated = Memory::parse("z", "---\nname: a\n");
        assert_eq!(unterminated.body, "---\nname: a\n");
    }

    proptest::proptest! {
        #[test]
        fn any_file_parses_and_a_parsed_file_renders_to_the_same_memory(source in "(---\n)?([a-z_]{1,8}: .{0,20}\n|  .{0,10}\n|- .{0,10}\n){0,8}(---\n)?.{0,40}") {
            let memory = Memory::parse("f", &source);
            let again = Memory::parse("f", &memory.render());
            proptest::prop_assert_eq!(Memory::parse("f", &again.render()), again);
        }
    }
}
