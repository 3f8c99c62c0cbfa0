//! Claude's memory tool (`memory_20250818`, executed by the client) over a scope's
//! memory files. The model sees `/memories` as a folder of Markdown files, one memory
//! each, and a file's text is the memory's body: what the model wrote is what it reads
//! back and edits, while the memory's name, description and type (MEMORY.md's line,
//! which recall reads too) come from front matter the model may write, else from the
//! file's name and first line. MEMORY.md, recall, consolidation and every other host
//! keep working on what the model writes. Nothing is lost: `delete` archives, `rename`
//! supersedes, and every write takes the scope's lock and the store's redaction.
//!
//! The answers are the ones the Anthropic SDKs' own file-backed tool gives, so a model
//! reads Mneme's as it reads theirs.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Deserialize;

use super::Memories;
use super::file::{Memory, MemoryType, split_frontmatter};
use super::store::{Filter, Scope, not_found};
use crate::error::Error;
use crate::storage::Storage;

/// The folder the model sees.
const ROOT: &str = "/memories";

/// The most a memory file written through the tool may hold.
pub const MAX_FILE_BYTES: usize = 100_000;

/// The most a file's stem may hold.
const MAX_STEM: usize = 100;

/// Line numbers are right-aligned to this width, as the SDKs' tool shows them.
const NUMBER_WIDTH: usize = 6;

/// One call of the tool: the `input` of its `tool_use` block, every command's fields
/// in one record (an internally tagged enum would cost the component its serde
/// machinery for buffered content).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    command: String,
    path: Option<String>,
    view_range: Option<[i64; 2]>,
    file_text: Option<String>,
    old_str: Option<String>,
    new_str: Option<String>,
    insert_line: Option<i64>,
    insert_text: Option<String>,
    old_path: Option<String>,
    new_path: Option<String>,
}

/// A field `command` needs, or a refusal that names it.
fn needs<T>(value: Option<T>, command: &str, field: &str) -> Result<T, Error> {
    value.ok_or_else(|| refuse(format!("`{command}` needs `{field}`")))
}

/// What a path names.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    Root,
    /// MEMORY.md: the index Mneme keeps of the current memories.
    Index,
    /// A memory file, by stem.
    File(String),
}

/// Device names a Windows host cannot create, whatever follows them.
const DEVICES: [&str; 22] = [
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8", "com9", "lpt1", "lpt2", "lpt3", "lpt4",
    "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

fn refuse(message: String) -> Error {
    Error::InvalidArgument(message)
}

/// What `path` names, or why it names nothing Mneme keeps: one level under
/// `/memories`, Markdown files with stems of lower-case letters, digits, `-` and `_`.
fn target(path: &str) -> Result<Target, Error> {
    let Some(rest) = path.strip_prefix(ROOT) else {
        return Err(refuse(format!("Path must start with {ROOT}, got: {path}")));
    };
    let name = match rest {
        "" | "/" => return Ok(Target::Root),
        rest => rest.strip_prefix('/').ok_or_else(|| refuse(format!("Path must start with {ROOT}/, got: {path}")))?,
    };
    if name.contains('/') || name.contains('\\') {
        return Err(refuse(format!("Path {path} is in a folder under {ROOT}: keep every memory directly in {ROOT}, as {ROOT}/<name>.md")));
    }
    if name.eq_ignore_ascii_case("memory.md") {
        return Ok(Target::Index);
    }
    let Some(stem) = name.strip_suffix(".md") else {
        return Err(refuse(format!("Path {path} is not a Markdown file: name memories {ROOT}/<name>.md")));
    };
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_';
    if stem.is_empty() || stem.len() > MAX_STEM || !stem.chars().all(allowed) {
        return Err(refuse(format!(
            "Path {path} is not a name Mneme keeps: use 1 to {MAX_STEM} lower-case letters, digits, `-` and `_`, then `.md` (as {ROOT}/project_notes.md)"
        )));
    }
    if DEVICES.contains(&stem) {
        return Err(refuse(format!("Path {path} names a device on Windows: choose another name")));
    }
    Ok(Target::File(stem.to_string()))
}

fn file_of(path: &str) -> Result<String, Error> {
    match target(path)? {
        Target::File(stem) => Ok(stem),
        Target::Root => Err(refuse(format!("{path} is the memory folder itself, not a file"))),
        Target::Index => Err(refuse(format!(
            "{path} is the index Mneme keeps of the memories, rewritten on every change: write the memory files instead"
        ))),
    }
}

fn check_size(path: &str, text: &str) -> Result<(), Error> {
    if text.len() > MAX_FILE_BYTES {
        return Err(refuse(format!(
            "{path} would hold {} bytes, more than the {MAX_FILE_BYTES} bytes a memory file may: split it into several files",
            text.len()
        )));
    }
    Ok(())
}

/// `lines` numbered from `first`, as the tool shows a file.
fn numbered<'t>(lines: impl Iterator<Item = &'t str>, first: usize) -> String {
    let numbered: Vec<String> = lines.enumerate().map(|(i, line)| format!("{:>NUMBER_WIDTH$}\t{line}", i + first)).collect();
    numbered.join("\n")
}

/// A file size as `ls -h` and the SDKs' tool give it.
fn size(bytes: usize) -> String {
    const UNITS: [&str; 4] = ["B", "K", "M", "G"];
    let mut unit = 0;
    let mut value = bytes as f64;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if value == (value as u64) as f64 { format!("{}{}", value as u64, UNITS[unit]) } else { format!("{value:.1}{}", UNITS[unit]) }
}

/// The memory a file's text makes: its body, and the fields its front matter gives
/// (the rest kept from `old`, where the model has no say: when it was made and used,
/// what superseded or archived it, its links and its source).
fn edited(stem: &str, text: &str, old: Option<&Memory>, now_ms: i64) -> Memory {
    let read = Memory::parse(stem, text);
    let mut memory = old.cloned().unwrap_or_else(|| {
        let mut fresh = Memory::new(stem);
        fresh.created_ms = Some(now_ms);
        fresh.valid_from_ms = Some(now_ms);
        fresh
    });
    // A description taken from the body's first line follows it, until the model
    // writes one of its own.
    let taken = old.is_some_and(|old| !old.description.is_empty() && old.description == first_line(&old.body));
    if split_frontmatter(text).is_some() {
        if !read.name.trim().is_empty() {
            memory.name = read.name;
        }
        if !read.description.trim().is_empty() {
            memory.description = read.description;
        }
        memory.type_ = read.type_.or(memory.type_);
        memory.topics = read.topics;
        memory.confidence = read.confidence.filter(|c| (0.0..=1.0).contains(c));
        memory.extra = read.extra;
    }
    if memory.name.trim().is_empty() {
        memory.name = stem.to_string();
    }
    let description_taken = taken && old.is_some_and(|old| old.description == memory.description);
    if memory.description.trim().is_empty() || description_taken {
        memory.description = first_line(&read.body);
    }
    memory.type_ = memory.type_.or(Some(MemoryType::Reference));
    memory.body = read.body;
    memory.updated_ms = Some(now_ms);
    memory
}

/// A body's first line with words, shortened: the description of a memory written
/// without one.
fn first_line(body: &str) -> String {
    body.lines().map(str::trim).find(|line| !line.is_empty()).map(|line| line.chars().take(150).collect()).unwrap_or_default()
}

/// Lines as the tool counts them: split at line feeds, without the empty one a final
/// line feed leaves.
fn lines_of(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

impl<S: Storage> Memories<'_, S> {
    /// Runs one call of Claude's memory tool: `input` is its `tool_use` input (JSON),
    /// the answer the `tool_result` content. A refusal is an error whose words the
    /// model can act on: give it back as the result, marked as an error.
    pub async fn memory_tool(&self, scope: &Scope, input: &str, now_ms: i64) -> Result<String, Error> {
        let input: Input = serde_json::from_str(input).map_err(|e| {
            refuse(format!(
                "the memory tool's input is not a command it knows ({e}): give `command` (view, create, str_replace, insert, delete or rename) and its fields"
            ))
        })?;
        let command = input.command.as_str();
        match command {
            "view" => self.tool_view(scope, &needs(input.path, command, "path")?, input.view_range).await,
            "create" => {
                let (path, text) = (needs(input.path, command, "path")?, needs(input.file_text, command, "file_text")?);
                self.tool_create(scope, &path, &text, now_ms).await
            }
            "str_replace" => {
                let (path, old_str) = (needs(input.path, command, "path")?, needs(input.old_str, command, "old_str")?);
                let new_str = input.new_str.unwrap_or_default();
                if old_str.is_empty() {
                    return Err(refuse(format!("old_str is empty: give the text in {path} to replace")));
                }
                let mut changed_at = 0;
                self.tool_edit(scope, &path, now_ms, |text| {
                    let at: Vec<usize> = text.match_indices(old_str.as_str()).map(|(at, _)| at).collect();
                    let line = |at: usize| text[..at].matches('\n').count() + 1;
                    match at.as_slice() {
                        [] => Err(refuse(format!("No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}."))),
                        [at] => {
                            changed_at = *at;
                            Ok(text.replacen(old_str.as_str(), &new_str, 1))
                        }
                        several => {
                            let lines: Vec<String> = several.iter().map(|&at| line(at).to_string()).collect();
                            Err(refuse(format!(
                                "No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: {}. Please ensure it is unique",
                                lines.join(", ")
                            )))
                        }
                    }
                })
                .await
                .map(|written| {
                    let lines = lines_of(&written);
                    let changed_line = written.get(..changed_at).map_or(1, |before| before.matches('\n').count() + 1);
                    let from = changed_line.saturating_sub(2).max(1);
                    let to = (changed_line + 2).min(lines.len());
                    let shown = lines.get(from - 1..to).unwrap_or_default();
                    format!(
                        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{}",
                        numbered(shown.iter().copied(), from)
                    )
                })
            }
            "insert" => {
                let path = needs(input.path, command, "path")?;
                let (insert_line, insert_text) =
                    (needs(input.insert_line, command, "insert_line")?, needs(input.insert_text, command, "insert_text")?);
                self.tool_edit(scope, &path, now_ms, |text| {
                    let mut lines = lines_of(text);
                    let at = usize::try_from(insert_line).ok().filter(|&at| at <= lines.len()).ok_or_else(|| {
                        refuse(format!(
                            "Invalid `insert_line` parameter: {insert_line}. It should be within the range [0, {}].",
                            lines.len()
                        ))
                    })?;
                    lines.insert(at, insert_text.trim_end_matches('\n'));
                    Ok(lines.join("\n") + "\n")
                })
                .await
                .map(|_| format!("The file {path} has been edited."))
            }
            "delete" => {
                let path = needs(input.path, command, "path")?;
                let file = file_of(&path)?;
                // Archived or replaced already: not in the folder the model sees.
                self.current(scope, &file, &path).await?;
                self.memory_forget(scope, &file, now_ms).await.map_err(|e| missing(e, &path))?;
                Ok(format!("Successfully deleted {path} (Mneme archives it: it stays in the memory's history)"))
            }
            "rename" => {
                let (old_path, new_path) = (needs(input.old_path, command, "old_path")?, needs(input.new_path, command, "new_path")?);
                self.tool_rename(scope, &old_path, &new_path, now_ms).await
            }
            other => Err(refuse(format!(
                "the memory tool's input is not a command it knows (`{other}`): give `command` (view, create, str_replace, insert, delete or rename) and its fields"
            ))),
        }
    }

    async fn tool_view(&self, scope: &Scope, path: &str, range: Option<[i64; 2]>) -> Result<String, Error> {
        let text = match target(path)? {
            Target::Root => {
                let memories = self.memory_list(scope, &Filter::default()).await?;
                let mut listed: Vec<(usize, String)> = Vec::new();
                let index = self.read_text(&(scope.dir() + crate::keys::MEMORY_INDEX)).await?;
                if let Some(index) = index {
                    listed.push((index.len(), format!("{ROOT}/{}", crate::keys::MEMORY_INDEX)));
                }
                let mut files: Vec<&Memory> = memories.iter().collect();
                files.sort_by(|a, b| a.file.cmp(&b.file));
                for memory in files {
                    // Listed without their bodies: a file's size is its body's, read.
                    let body = self.memory_get(scope, &memory.file).await?.body;
                    listed.push((body.len(), format!("{ROOT}/{}.md", memory.file)));
                }
                let total: usize = listed.iter().map(|(bytes, _)| bytes).sum();
                let mut lines = alloc::vec![format!("{}\t{ROOT}", size(total))];
                lines.extend(listed.into_iter().map(|(bytes, path)| format!("{}\t{path}", size(bytes))));
                return Ok(format!(
                    "Here're the files and directories up to 2 levels deep in {ROOT}, excluding hidden items:\n{}",
                    lines.join("\n")
                ));
            }
            Target::Index => self.read_text(&(scope.dir() + crate::keys::MEMORY_INDEX)).await?.unwrap_or_default(),
            Target::File(stem) => self.current(scope, &stem, path).await?.body,
        };
        let lines: Vec<&str> = text.split('\n').collect();
        let (first, shown) = match range {
            None => (1, &lines[..]),
            Some([from, to]) => {
                let from = usize::try_from(from.max(1)).unwrap_or(1);
                let to = if to == -1 { lines.len() } else { usize::try_from(to).unwrap_or(0).min(lines.len()) };
                (from, lines.get(from - 1..to).unwrap_or_default())
            }
        };
        Ok(format!("Here's the content of {path} with line numbers:\n{}", numbered(shown.iter().copied(), first)))
    }

    async fn tool_create(&self, scope: &Scope, path: &str, text: &str, now_ms: i64) -> Result<String, Error> {
        let stem = file_of(path)?;
        check_size(path, text)?;
        let memory = edited(&stem, text, None, now_ms);
        let written = self
            .with_scope_locked(scope, |state| {
                if state.has(&stem) {
                    return Err(refuse(format!("File {path} already exists")));
                }
                Ok(alloc::vec![memory])
            })
            .await?;
        Ok(format!("File created successfully at: {path}{}", redacted(&written)))
    }

    /// Rewrites a current memory's file through `change` (its text in, the new text
    /// out) and gives back the text written.
    async fn tool_edit(
        &self,
        scope: &Scope,
        path: &str,
        now_ms: i64,
        change: impl FnOnce(&str) -> Result<String, Error>,
    ) -> Result<String, Error> {
        let stem = file_of(path)?;
        let mut written = self
            .with_memory_locked(scope, &[stem.as_str()], |mut found| {
                let old = found.pop().ok_or_else(|| not_found(scope, &stem))?;
                check_current(&old, path)?;
                let text = change(&old.body)?;
                check_size(path, &text)?;
                Ok(alloc::vec![edited(&stem, &text, Some(&old), now_ms)])
            })
            .await
            .map_err(|e| missing(e, path))?;
        written.pop().map(|memory| memory.body).ok_or_else(|| not_found(scope, &stem))
    }

    /// A rename keeps the history: the memory is written under its new name and the old
    /// file is superseded by it.
    async fn tool_rename(&self, scope: &Scope, old_path: &str, new_path: &str, now_ms: i64) -> Result<String, Error> {
        let (old_stem, new_stem) = (file_of(old_path)?, file_of(new_path)?);
        if old_stem == new_stem {
            return Err(refuse(format!("{old_path} and {new_path} are the same file")));
        }
        let old = self.current(scope, &old_stem, old_path).await?;
        self.with_scope_locked(scope, |state| {
            if state.has(&new_stem) {
                return Err(refuse(format!("The destination {new_path} already exists")));
            }
            // Changed since it was read: the rename would write what was there before.
            if state.updated_ms(&old_stem) != Some(old.updated_ms) {
                return Err(refuse(format!("{old_path} changed while it was renamed: view it and rename it again")));
            }
            let mut renamed = old.clone();
            renamed.file = new_stem.clone();
            renamed.updated_ms = Some(now_ms);
            renamed.links.derived_from.retain(|file| *file != old_stem);
            renamed.links.derived_from.push(old_stem.clone());
            let mut superseded = old.clone();
            superseded.supersede_by(&new_stem, now_ms);
            Ok(alloc::vec![renamed, superseded])
        })
        .await?;
        Ok(format!("Successfully renamed {old_path} to {new_path}"))
    }

    /// Memory `stem`, refused unless it is current.
    async fn current(&self, scope: &Scope, stem: &str, path: &str) -> Result<Memory, Error> {
        let memory = self.memory_get(scope, stem).await.map_err(|e| missing(e, path))?;
        check_current(&memory, path)?;
        Ok(memory)
    }
}

/// A superseded or archived memory is history, out of `/memories`.
fn check_current(memory: &Memory, path: &str) -> Result<(), Error> {
    match (&memory.superseded_by, memory.archived_ms) {
        (Some(successor), _) => Err(refuse(format!("{path} was replaced by {ROOT}/{successor}.md: use that file"))),
        (None, Some(_)) => Err(refuse(format!("The path {path} does not exist. Please provide a valid path."))),
        (None, None) => Ok(()),
    }
}

/// A memory the store has no file for, in the tool's words.
fn missing(error: Error, path: &str) -> Error {
    match error {
        Error::MemoryNotFound { .. } => refuse(format!("The path {path} does not exist. Please provide a valid path.")),
        other => other,
    }
}

/// What the store's redaction took out of what was written, for the model to know.
fn redacted(written: &[Memory]) -> String {
    let kinds: Vec<String> = written.iter().flat_map(|m| &m.redacted).map(|r| format!("{} {}", r.count, r.kind)).collect();
    if kinds.is_empty() { String::new() } else { format!(" (secrets taken out before it was written: {})", kinds.join(", ")) }
}
