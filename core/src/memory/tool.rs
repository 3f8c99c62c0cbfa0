//! Claude's memory tool (`memory_20250818`, executed by the client) over a scope's
//! memory files. The model sees `/memories` as a folder of Markdown files, one memory
//! each, and a file's text is the memory's body: what the model wrote (less front
//! matter and secrets) is what it reads back and edits, while the memory's name,
//! description and type (MEMORY.md's line, which recall reads too) come from front
//! matter the model may write, else from the file's name and first line. MEMORY.md,
//! recall, consolidation and every other host keep working on what the model writes.
//! Nothing is lost: `delete` archives, `rename` supersedes, and every write takes the
//! scope's lock and the store's redaction.
//!
//! The answers are the ones the Anthropic SDKs' own file-backed tool gives, so a model
//! reads Mneme's as it reads theirs.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Deserialize;

use super::Memories;
use super::file::{Memory, MemoryType, split_frontmatter};
use super::store::{Filter, Scope, not_found, stem_in};
use crate::error::Error;
use crate::storage::Storage;

/// The folder the model sees.
const ROOT: &str = "/memories";

/// The most a memory file written through the tool may hold.
pub const MAX_FILE_BYTES: usize = 100_000;

/// The most a file's stem may hold.
const MAX_STEM: usize = 100;

/// The most line numbers a refusal of an ambiguous `str_replace` lists.
const MAX_LINES_LISTED: usize = 20;

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
const DEVICES: [&str; 24] = [
    "con", "prn", "aux", "nul", "com0", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8", "com9", "lpt0", "lpt1", "lpt2",
    "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
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

/// The memory a file's text makes: its body, and the fields its front matter sets
/// (each field it leaves out kept from `old`, as is all the model has no say in: when
/// it was made and used, what superseded or archived it, its links, its source, and
/// front matter keys Mneme does not know, which the model cannot see and whose values
/// redaction does not read).
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
    let mut follows = old.is_some_and(|old| !old.description.is_empty() && old.description == first_line(&old.body));
    if split_frontmatter(text).is_some() {
        if !read.name.trim().is_empty() {
            memory.name = read.name;
        }
        if !read.description.trim().is_empty() {
            memory.description = read.description;
            follows = false;
        }
        memory.type_ = read.type_.or(memory.type_);
        if !read.topics.is_empty() {
            memory.topics = read.topics;
        }
        if let Some(confidence) = read.confidence.filter(|c| (0.0..=1.0).contains(c)) {
            memory.confidence = Some(confidence);
        }
    }
    if memory.name.trim().is_empty() {
        memory.name = stem.to_string();
    }
    if memory.description.trim().is_empty() || follows {
        memory.description = first_line(&read.body);
    }
    memory.type_ = memory.type_.or(Some(MemoryType::Reference));
    memory.body = read.body;
    memory.updated_ms = Some(now_ms);
    memory
}

/// A body's first line with words, shortened at a space to 150 characters at most:
/// the description of a memory written without one. (Cut inside a word, a secret's
/// tail could be too short for redaction to know it.)
fn first_line(body: &str) -> String {
    let Some(line) = body.lines().map(str::trim).find(|line| !line.is_empty()) else { return String::new() };
    match line.char_indices().nth(150) {
        None => line.to_string(),
        Some((end, _)) => line[..end].rsplit_once(' ').map_or("", |(kept, _)| kept).trim_end().to_string(),
    }
}

/// What one call of the tool gives the model: its `tool_result`'s content, and whether
/// it is a refusal (`is_error`), named as the block's fields are.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MemoryToolResult {
    pub content: String,
    pub is_error: bool,
}

impl<S: Storage> Memories<'_, S> {
    /// Runs one call of Claude's memory tool: `input` is its `tool_use` input (JSON),
    /// the result the `tool_result`'s content. A path, command or edit the tool refuses
    /// is a result marked `is_error`, in words the model can act on; an error is the
    /// caller's or the store's (a project that is no name, a lock not taken in time,
    /// storage that fails).
    pub async fn memory_tool(&self, scope: &Scope, input: &str, now_ms: i64) -> Result<MemoryToolResult, Error> {
        scope.check()?;
        // A model's tool_use input is an object: anything else is the caller's mistake
        // (the input given as its JSON text again, or none), not the model's to read.
        if !input.trim_start().starts_with('{') {
            return Err(Error::InvalidArgument(
                "the memory tool's input must be the tool_use block's input, an object with `command`".into(),
            ));
        }
        match self.run_tool(scope, input, now_ms).await {
            Ok(content) => Ok(MemoryToolResult { content, is_error: false }),
            // Every invalid argument of a call is the model's input: the scope was
            // checked above, and what the store fails at is a storage error.
            Err(Error::InvalidArgument(content)) => Ok(MemoryToolResult { content, is_error: true }),
            Err(error) => Err(error),
        }
    }

    async fn run_tool(&self, scope: &Scope, input: &str, now_ms: i64) -> Result<String, Error> {
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
                let mut changed_line = 1;
                let written = self
                    .tool_edit(scope, &path, now_ms, |text| {
                        // Line numbers in one pass: a short old_str found all over a
                        // long file must not cost its square.
                        let mut lines = Vec::new();
                        let (mut line, mut counted) = (1, 0);
                        for (at, _) in text.match_indices(old_str.as_str()) {
                            line += text.get(counted..at).map_or(0, |between| between.matches('\n').count());
                            counted = at;
                            lines.push(line);
                        }
                        match lines.as_slice() {
                            [] => Err(refuse(format!("No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}."))),
                            [line] => {
                                changed_line = *line;
                                Ok(text.replacen(old_str.as_str(), &new_str, 1))
                            }
                            several => {
                                let shown: Vec<String> = several.iter().take(MAX_LINES_LISTED).map(ToString::to_string).collect();
                                let more = if several.len() > MAX_LINES_LISTED { ", …" } else { "" };
                                Err(refuse(format!(
                                    "No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: {}{more}. Please ensure it is unique",
                                    shown.join(", ")
                                )))
                            }
                        }
                    })
                    .await?;
                let lines: Vec<&str> = written.body.split('\n').collect();
                let from = changed_line.saturating_sub(2).max(1);
                let to = changed_line.saturating_add(2).min(lines.len());
                let shown = lines.get(from - 1..to).unwrap_or_default();
                Ok(format!(
                    "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{}{}",
                    numbered(shown.iter().copied(), from),
                    redacted(core::slice::from_ref(&written))
                ))
            }
            "insert" => {
                let path = needs(input.path, command, "path")?;
                let (insert_line, insert_text) =
                    (needs(input.insert_line, command, "insert_line")?, needs(input.insert_text, command, "insert_text")?);
                let written = self
                    .tool_edit(scope, &path, now_ms, |text| {
                        let mut lines: Vec<&str> = text.split('\n').collect();
                        // The empty line after a final line feed is no line to insert after.
                        if lines.last() == Some(&"") {
                            lines.pop();
                        }
                        let at = usize::try_from(insert_line).ok().filter(|&at| at <= lines.len()).ok_or_else(|| {
                            refuse(format!(
                                "Invalid `insert_line` parameter: {insert_line}. It should be within the range [0, {}].",
                                lines.len()
                            ))
                        })?;
                        lines.insert(at, insert_text.trim_end_matches('\n'));
                        Ok(lines.join("\n") + "\n")
                    })
                    .await?;
                Ok(format!("The file {path} has been edited.{}", redacted(core::slice::from_ref(&written))))
            }
            "delete" => {
                let path = needs(input.path, command, "path")?;
                let file = file_of(&path)?;
                self.with_memory_locked(scope, &[file.as_str()], |mut found| {
                    let mut memory = found.pop().ok_or_else(|| not_found(scope, &file))?;
                    // Archived or replaced already: not in the folder the model sees.
                    check_current(&memory, &path)?;
                    memory.archive(now_ms);
                    Ok(alloc::vec![memory])
                })
                .await
                .map_err(|e| missing(e, &path))?;
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
                // Only the files a path can name (a memory Claude Code or a person
                // named otherwise is not the tool's), and only those still there.
                let mut files: Vec<&Memory> =
                    memories.iter().filter(|m| matches!(target(&path_of(&m.file)), Ok(Target::File(_)))).collect();
                files.sort_by(|a, b| a.file.cmp(&b.file));
                for memory in files {
                    // Listed without their bodies: a file's size is its body's, read.
                    if let Ok(read) = self.memory_get(scope, &memory.file).await {
                        listed.push((read.body.len(), path_of(&memory.file)));
                    }
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
            // As the SDKs read a range: from line `from` (at least 1) to line `to`, -1
            // being the last, and a Python slice's end counting back from the end.
            Some([from, to]) => {
                let from = usize::try_from(from.max(1)).unwrap_or(usize::MAX);
                let to = match to {
                    -1 => lines.len(),
                    to if to < 0 => lines.len().saturating_sub(usize::try_from(to.unsigned_abs()).unwrap_or(usize::MAX)),
                    to => usize::try_from(to).unwrap_or(usize::MAX).min(lines.len()),
                };
                (from, lines.get(from - 1..to).unwrap_or_default())
            }
        };
        Ok(format!("Here's the content of {path} with line numbers:\n{}", numbered(shown.iter().copied(), first)))
    }

    async fn tool_create(&self, scope: &Scope, path: &str, text: &str, now_ms: i64) -> Result<String, Error> {
        let stem = self.new_file(path)?;
        check_size(path, text)?;
        let memory = edited(&stem, text, None, now_ms);
        let written = self
            .memory_locked(scope, async |dir| {
                self.refresh_scope(dir).await?;
                self.check_free(scope, dir, &stem, path).await?;
                let mut written = alloc::vec![memory];
                self.redact_memories(&mut written);
                self.write_memories(dir, &written).await?;
                Ok(written)
            })
            .await?;
        Ok(format!("File created successfully at: {path}{}", redacted(&written)))
    }

    /// Rewrites a current memory's file through `change` (its text in, the new text
    /// out) and gives back the memory written.
    async fn tool_edit(
        &self,
        scope: &Scope,
        path: &str,
        now_ms: i64,
        change: impl FnOnce(&str) -> Result<String, Error>,
    ) -> Result<Memory, Error> {
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
        written.pop().ok_or_else(|| not_found(scope, &stem))
    }

    /// A rename keeps the history: the memory is written under its new name and the old
    /// file is superseded by it, all under the scope's lock.
    async fn tool_rename(&self, scope: &Scope, old_path: &str, new_path: &str, now_ms: i64) -> Result<String, Error> {
        let (old_stem, new_stem) = (file_of(old_path)?, self.new_file(new_path)?);
        if old_stem == new_stem {
            return Err(refuse(format!("{old_path} and {new_path} are the same file")));
        }
        self.memory_locked(scope, async |dir| {
            self.refresh_scope(dir).await?;
            let old = self.memory_get(scope, &old_stem).await.map_err(|e| missing(e, old_path))?;
            check_current(&old, old_path)?;
            self.check_free(scope, dir, &new_stem, new_path).await?;
            let mut renamed = old.clone();
            renamed.file = new_stem.clone();
            // A name that was the file's own follows it.
            if renamed.name == old_stem {
                renamed.name = new_stem.clone();
            }
            renamed.updated_ms = Some(now_ms);
            renamed.links.derived_from.retain(|file| *file != old_stem);
            renamed.links.derived_from.push(old_stem.clone());
            let mut superseded = old;
            superseded.supersede_by(&new_stem, now_ms);
            let mut written = alloc::vec![renamed, superseded];
            self.redact_memories(&mut written);
            self.write_memories(dir, &written).await
        })
        .await?;
        Ok(format!("Successfully renamed {old_path} to {new_path}"))
    }

    /// The stem of a file the model names for a new memory: no secret in a file name.
    fn new_file(&self, path: &str) -> Result<String, Error> {
        let stem = file_of(path)?;
        if self.base.redaction().text(&stem, &mut crate::redact::Found::default()).is_some() {
            return Err(refuse(format!("The name of {path} looks like a secret: choose another name")));
        }
        Ok(stem)
    }

    /// Refuses a new file `stem` where any file of that name is, current or kept as
    /// history, written by this store or another program, in any case (one file on a
    /// case-insensitive filesystem). Storage decides, not the cached state: a file
    /// removed by hand since the cache warmed is free (and the cache is read again, so
    /// the new file counts as created), one another program wrote is not.
    async fn check_free(&self, scope: &Scope, dir: &str, stem: &str, path: &str) -> Result<(), Error> {
        let listing = self.base.storage.list(dir).await?;
        let listed: BTreeSet<&str> = listing.iter().filter_map(|info| stem_in(dir, &info.key)).collect();
        let taken = listed.iter().copied().find(|file| file.eq_ignore_ascii_case(stem));
        let existing = match taken {
            Some(file) if file != stem => {
                return Err(refuse(format!(
                    "{ROOT}/{file}.md exists, the same file as {path} where case is not told apart: choose another name"
                )));
            }
            Some(_) => self.read_text(&(scope.dir() + stem + crate::keys::MEMORY_SUFFIX)).await?.map(|text| Memory::parse(stem, &text)),
            None => None,
        };
        match existing {
            None => {
                // A file removed by hand, of this name or another: MEMORY.md is written
                // from the state, which must not list it again.
                let stale = self.state.scopes.borrow().get(dir).is_some_and(|state| state.holds_any_but(&listed));
                if stale {
                    self.state.scopes.borrow_mut().remove(dir);
                    self.refresh_scope(dir).await?;
                }
                Ok(())
            }
            Some(memory) if memory.is_current() => Err(refuse(format!("File {path} already exists"))),
            Some(memory) => Err(refuse(match memory.superseded_by {
                Some(successor) => format!("{path} was replaced by {ROOT}/{successor}.md and is kept as its history: choose another name"),
                None => format!("{path} was deleted, and Mneme keeps it archived: choose another name"),
            })),
        }
    }

    /// Memory `stem`, refused unless it is current.
    async fn current(&self, scope: &Scope, stem: &str, path: &str) -> Result<Memory, Error> {
        let memory = self.memory_get(scope, stem).await.map_err(|e| missing(e, path))?;
        check_current(&memory, path)?;
        Ok(memory)
    }
}

/// The path the model names memory file `file` by.
fn path_of(file: &str) -> String {
    format!("{ROOT}/{file}.md")
}

/// A superseded or archived memory is history, out of `/memories`.
fn check_current(memory: &Memory, path: &str) -> Result<(), Error> {
    match &memory.superseded_by {
        Some(successor) => Err(refuse(format!("{path} was replaced by {ROOT}/{successor}.md: use that file"))),
        None if !memory.is_current() => Err(refuse(format!("The path {path} does not exist. Please provide a valid path."))),
        None => Ok(()),
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
