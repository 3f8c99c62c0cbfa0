//! Memory operations over storage: add, update, supersede, forget, link, list, show,
//! import and recall, each writing Claude Code's memdir as it is (one Markdown file per
//! memory, MEMORY.md as the index) plus the recall index beside it.
//!
//! The recall index (`.mneme/recall.jsonl`) is derived state: a header line, then one
//! line per memory write (its file size, its frontmatter and its terms), last line per
//! file wins. Writing a memory appends one line; nothing is rebuilt. When the index is
//! first read it is checked against the folder's listing: a memory file missing from
//! it, or whose size differs (a crash between the file write and the index append, or
//! an edit by Claude Code or by hand), is read and indexed again, and the caller gets
//! an [`MemoryIndexReport`] saying which and why — never zero hits in silence.
//!
//! One write order everywhere: memory files, then MEMORY.md, then the index. A crash
//! leaves at worst memory files the index does not know yet, which the next load finds.

use alloc::collections::{BTreeMap, BTreeSet};

use crate::redact::Found;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::Memories;
use super::file::{LinkKind, Links, Memory, MemoryType};
use super::memory_md::{self, Caps, Loaded, Standing};
use crate::error::Error;
use crate::keys;
use crate::recall::embed::{Embeddings, EmbeddingsInfo};
use crate::recall::text;
use crate::recall::{Document, Hit, Query, RecallIndex, Window};
use crate::storage::{Storage, StorageError};

/// Where memories live: one project's memdir, or the global one (`"global"` or
/// `{"project": name}` in JSON).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Global,
    /// A project folder name (as Claude Code derives it from a working directory).
    Project(String),
}

impl Scope {
    pub(super) fn dir(&self) -> String {
        match self {
            Scope::Global => keys::memory_dir(None),
            Scope::Project(project) => keys::memory_dir(Some(project)),
        }
    }

    /// How errors name it: `global`, or the project folder.
    pub fn label(&self) -> String {
        match self {
            Scope::Global => String::from("global"),
            Scope::Project(project) => project.clone(),
        }
    }

    /// A project's scope, or the global one when there is no project.
    pub fn of(project: Option<String>) -> Scope {
        project.map_or(Scope::Global, Scope::Project)
    }

    pub(crate) fn check(&self) -> Result<(), Error> {
        match self {
            Scope::Global => Ok(()),
            Scope::Project(project) => keys::validate_project(project),
        }
    }
}

/// A memory to write.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewMemory {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: MemoryType,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub topics: Vec<String>,
    #[serde(default)]
    pub links: Links,
    #[serde(default)]
    pub confidence: Option<f64>,
    /// The session and entry it came from.
    #[serde(default)]
    pub session: Option<String>,
    #[serde(default)]
    pub entry: Option<String>,
    /// When the fact became true; defaults to the write's time.
    #[serde(default)]
    pub valid_from_ms: Option<i64>,
}

impl NewMemory {
    /// The memory it becomes as file `file`, written at `now_ms`.
    pub(super) fn into_memory(self, file: &str, now_ms: i64) -> Memory {
        let mut memory = Memory::new(file);
        memory.name = self.name;
        memory.type_ = Some(self.type_);
        memory.description = self.description;
        memory.body = as_stored(self.body);
        memory.topics = self.topics;
        memory.links = self.links;
        memory.confidence = self.confidence;
        memory.session = self.session;
        memory.entry = self.entry;
        memory.created_ms = Some(now_ms);
        memory.updated_ms = Some(now_ms);
        memory.valid_from_ms = Some(self.valid_from_ms.unwrap_or(now_ms));
        memory
    }

    /// Records that it replaces memory `file`.
    pub(super) fn derive_from(&mut self, file: &str) {
        if !self.links.derived_from.iter().any(|f| f == file) {
            self.links.derived_from.push(file.to_string());
        }
    }

    pub fn new(name: &str, kind: MemoryType, description: &str, body: &str) -> Self {
        NewMemory {
            name: name.to_string(),
            type_: kind,
            description: description.to_string(),
            body: body.to_string(),
            topics: Vec::new(),
            links: Links::default(),
            confidence: None,
            session: None,
            entry: None,
            valid_from_ms: None,
        }
    }
}

/// Fields to change on a memory; `None` leaves one as it is.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Change {
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub type_: Option<MemoryType>,
    pub description: Option<String>,
    pub body: Option<String>,
    pub topics: Option<Vec<String>>,
    pub confidence: Option<f64>,
}

impl Change {
    pub(super) fn apply(self, memory: &mut Memory, now_ms: i64) {
        if let Some(name) = self.name {
            memory.name = name;
        }
        if let Some(kind) = self.type_ {
            memory.type_ = Some(kind);
        }
        if let Some(description) = self.description {
            memory.description = description;
        }
        if let Some(body) = self.body {
            memory.body = as_stored(body);
        }
        if let Some(topics) = self.topics {
            memory.topics = topics;
        }
        if self.confidence.is_some() {
            memory.confidence = self.confidence;
        }
        memory.updated_ms = Some(now_ms);
    }
}

/// Which memories [`Memories::memory_list`] returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Filter {
    #[serde(rename = "type")]
    pub type_: Option<MemoryType>,
    pub topic: Option<String>,
    pub session: Option<String>,
    /// Superseded and archived ones too.
    pub all: bool,
    /// Only memories holding from a time in it (see [`Window`]); none: any time.
    pub window: Option<Window>,
}

/// The recall index did not match the memory files and was brought up to date.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryIndexReport {
    /// Why: the index was missing, unreadable, of another version, or behind the files.
    pub reason: String,
    /// Memory files indexed again (or taken out, when gone).
    pub files: Vec<String>,
}

/// One recalled memory.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecallHit {
    pub file: String,
    pub name: String,
    pub description: String,
    #[serde(rename = "type")]
    pub type_: Option<MemoryType>,
    /// BM25 plus what neighbours, links and topics passed on; higher is better.
    pub score: f64,
    pub current: bool,
    /// The memory itself matches the query (its words, or its meaning through an
    /// embedding table); false when it was found through the memories around it
    /// (its session's neighbouring turns, its links).
    pub matched: bool,
}

/// What a host's embedder is asked to embed: memories of a scope that have no vector
/// of `model` for what they say now. `versions` say what each said, so a memory
/// written again with other words before the vectors come back is not given the old
/// text's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddingPlan {
    pub model: String,
    pub files: Vec<String>,
    /// What each memory said when planned (a hash of its words).
    pub versions: Vec<String>,
    pub texts: Vec<String>,
}

/// A query's vector from a host's embedder, and the model that made it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Near {
    pub model: String,
    pub vector: Vec<f32>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Recalled {
    pub hits: Vec<RecallHit>,
    pub report: Option<MemoryIndexReport>,
}

/// A memory with the chain of memories it superseded and that superseded it, oldest
/// first (the memory itself included).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Shown {
    pub memory: Memory,
    pub history: Vec<Memory>,
}

/// What the store keeps of a scope between calls.
#[derive(Clone, Debug, Default)]
pub(crate) struct ScopeState {
    index: RecallIndex,
    /// Every memory of the scope, bodies left out.
    memories: BTreeMap<String, Memory>,
    /// The index file's size as this store last read or wrote it.
    index_size: u64,
    index_lines: usize,
    /// Each memory file's size when it was indexed: a file of another size changed.
    sizes: BTreeMap<String, u64>,
    /// The model whose vectors the index holds, and the size of the vectors file
    /// they were read at.
    vectors: Option<(String, u64)>,
    /// What each memory says, as a version (a hash of its words): a vector of another
    /// version is out of date. A change of its frontmatter alone (used, links) keeps it.
    said: BTreeMap<String, String>,
}

impl ScopeState {
    /// Whether this state holds a memory file that is not among `listed`.
    pub(super) fn holds_any_but(&self, listed: &BTreeSet<&str>) -> bool {
        self.memories.keys().any(|file| !listed.contains(file.as_str()))
    }

    /// A file stem for a new memory called `name`: its slug, numbered past the files
    /// that exist and those about to be written.
    pub(super) fn free_file(&self, name: &str, pending: &[Memory]) -> String {
        let base = slug(name);
        // `memory.md` is `MEMORY.md` on a case-insensitive filesystem.
        let taken =
            |file: &str| file.eq_ignore_ascii_case("memory") || self.memories.contains_key(file) || pending.iter().any(|m| m.file == file);
        let mut file = base.clone();
        let mut n = 2;
        while taken(&file) {
            file = format!("{base}_{n}");
            n += 1;
        }
        file
    }
}

const INDEX_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Header {
    mneme: String,
    version: u32,
}

#[derive(Serialize, Deserialize)]
struct IndexLine {
    file: String,
    #[serde(default, skip_serializing_if = "is_false")]
    gone: bool,
    #[serde(default)]
    size: u64,
    /// The memory file without its body: its frontmatter, read with the file's own codec.
    #[serde(default)]
    head: String,
    #[serde(default)]
    terms: String,
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn header_line() -> String {
    let header = Header { mneme: String::from("recall-index"), version: INDEX_VERSION };
    serde_json::to_string(&header).unwrap_or_default() + "\n"
}

impl IndexLine {
    fn of(memory: &Memory, size: u64) -> IndexLine {
        let mut head = memory.clone();
        head.body = String::new();
        IndexLine {
            file: memory.file.clone(),
            gone: false,
            size,
            head: head.render(),
            terms: text::terms(&memory.searchable_text()).join(" "),
        }
    }

    fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default() + "\n"
    }
}

fn document(memory: &Memory, terms: &str) -> Document {
    Document {
        key: memory.file.clone(),
        terms: terms.split(' ').filter(|t| !t.is_empty()).map(String::from).collect(),
        topics: memory.topics.clone(),
        session: memory.session.clone(),
        time_ms: memory.time_ms(),
        links: memory.links.all(),
        current: memory.is_current(),
        role: None,
    }
}

/// A body as its file keeps it (ending with a newline), so what a write returns is
/// what a later read gives.
fn as_stored(mut body: String) -> String {
    if !body.is_empty() && !body.ends_with('\n') {
        body.push('\n');
    }
    body
}

/// A file stem from a title: lower-case letters and digits, `_` between words.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
        if out.len() >= 60 {
            break;
        }
    }
    let out = out.trim_end_matches('_');
    if out.is_empty() { String::from("memory") } else { String::from(out) }
}

/// The memory file stem of a key directly inside `dir`.
/// The scope's state was not there right after it was read: the store's failure (its
/// storage changing under it), never the caller's argument.
pub(super) fn scope_unread(dir: &str) -> Error {
    Error::Storage(StorageError::Io { key: String::from(dir), message: String::from("the memory scope could not be read: try again") })
}

pub(super) fn stem_in<'a>(dir: &str, key: &'a str) -> Option<&'a str> {
    let name = key.strip_prefix(dir)?;
    let stem = name.strip_suffix(keys::MEMORY_SUFFIX)?;
    (!stem.is_empty() && !stem.contains('/') && name != keys::MEMORY_INDEX && !stem.starts_with('.')).then_some(stem)
}

impl<S: Storage> Memories<'_, S> {
    /// Makes recall hybrid: `table` is a static embedding table in its text form (see
    /// [`Embeddings::parse`]); memory recall and `search` then also rank by meaning.
    /// `None` goes back to words alone. The table is kept in memory, not in storage: a
    /// host sets it each time it opens a store.
    pub fn set_embeddings(&self, table: Option<&[u8]>) -> Result<Option<EmbeddingsInfo>, Error> {
        let table = table.map(Embeddings::parse).transpose()?.map(Rc::new);
        let info = table.as_ref().map(|table| table.info().clone());
        self.base.set_embedding_table(table);
        Ok(info)
    }

    /// Writes a new memory: its file (named after `name`, made unique), its line in
    /// MEMORY.md, its index line.
    pub async fn memory_add(&self, scope: &Scope, memory: NewMemory, now_ms: i64) -> Result<Memory, Error> {
        let mut added = self.memory_add_many(scope, alloc::vec![memory], now_ms).await?;
        added.pop().ok_or_else(|| Error::InvalidArgument(String::from("nothing was added")))
    }

    /// Writes many new memories with one MEMORY.md write and one index append.
    pub async fn memory_add_many(&self, scope: &Scope, memories: Vec<NewMemory>, now_ms: i64) -> Result<Vec<Memory>, Error> {
        for memory in &memories {
            check_new(memory)?;
        }
        let redaction = self.base.redaction();
        self.with_scope_locked(scope, |state| {
            let mut written: Vec<Memory> = Vec::new();
            for new in memories {
                // Named after the name as it will be written: no secret in a file name.
                let name = redaction.text(&new.name, &mut Found::default()).unwrap_or_else(|| new.name.clone());
                let file = state.free_file(&name, &written);
                written.push(new.into_memory(&file, now_ms));
            }
            Ok(written)
        })
        .await
    }

    /// Changes fields of a memory in place. A superseded memory is refused: it is the
    /// history of a fact, kept as it was (its successor is the one to change).
    pub async fn memory_update(&self, scope: &Scope, file: &str, change: Change, now_ms: i64) -> Result<Memory, Error> {
        // Nothing to change would only move `updated`, and say "updated" of nothing.
        if change == Change::default() {
            return Err(Error::InvalidArgument(String::from(
                "say what to change: its name, type, description, body, topics or confidence",
            )));
        }
        if let Some(confidence) = change.confidence {
            check_confidence(confidence)?;
        }
        let mut written = self
            .with_memory_locked(scope, &[file], |mut found| {
                let mut memory = found.pop().ok_or_else(|| not_found(scope, file))?;
                if let Some(successor) = &memory.superseded_by {
                    return Err(Error::InvalidArgument(format!(
                        "memory `{file}` is superseded by `{successor}`, and kept as it was: update `{successor}`, the current version of it"
                    )));
                }
                change.apply(&mut memory, now_ms);
                Ok(alloc::vec![memory])
            })
            .await?;
        written.pop().ok_or_else(|| not_found(scope, file))
    }

    /// Replaces memory `file` with a new one: the new memory is written first, then the
    /// old one gets `invalid_at` and `superseded_by` and leaves MEMORY.md and default
    /// recall. Nothing is deleted; a crash in between leaves both current. A memory
    /// superseded already is refused: its successor is the current fact, and a second
    /// successor would make two current versions of it and cut the first out of its
    /// history. A replacement without a description or topics keeps the old memory's:
    /// the fact changed, not what it is about, and recall finds a memory by them.
    pub async fn memory_supersede(&self, scope: &Scope, file: &str, replacement: NewMemory, now_ms: i64) -> Result<Memory, Error> {
        check_new(&replacement)?;
        let superseded = |successor: &str| {
            Error::InvalidArgument(format!(
                "memory `{file}` is superseded by `{successor}` already: supersede `{successor}`, the current version of it"
            ))
        };
        let old = self.memory_get(scope, file).await?;
        if let Some(successor) = old.superseded_by {
            return Err(superseded(&successor));
        }
        let mut replacement = replacement;
        if replacement.description.trim().is_empty() {
            replacement.description = old.description;
        }
        if replacement.topics.is_empty() {
            replacement.topics = old.topics;
        }
        replacement.derive_from(file);
        let new = self.memory_add(scope, replacement, now_ms).await?;
        self.with_memory_locked(scope, &[file], |mut found| {
            let mut old = found.pop().ok_or_else(|| not_found(scope, file))?;
            // Superseded meanwhile by another writer: the new memory stands, current
            // beside that one, and the caller is told which to keep.
            if let Some(successor) = old.superseded_by.as_deref() {
                return Err(Error::InvalidArgument(format!(
                    "memory `{file}` was superseded by `{successor}` while `{}` was written: both are current; forget the one not wanted",
                    new.file
                )));
            }
            old.supersede_by(&new.file, now_ms);
            Ok(alloc::vec![old])
        })
        .await?;
        Ok(new)
    }

    /// Archives a memory: it stays on storage, listed with `all`, out of MEMORY.md and
    /// default recall.
    pub async fn memory_forget(&self, scope: &Scope, file: &str, now_ms: i64) -> Result<Memory, Error> {
        let mut written = self
            .with_memory_locked(scope, &[file], |mut found| {
                let mut memory = found.pop().ok_or_else(|| not_found(scope, file))?;
                memory.archive(now_ms);
                Ok(alloc::vec![memory])
            })
            .await?;
        written.pop().ok_or_else(|| not_found(scope, file))
    }

    /// Records that memory `from` relates to `to` in the way `kind` says.
    pub async fn memory_link(&self, scope: &Scope, from: &str, kind: LinkKind, to: &str, now_ms: i64) -> Result<Memory, Error> {
        if from == to {
            return Err(Error::InvalidArgument(format!("a memory cannot link to itself (`{from}`)")));
        }
        let mut written = self
            .with_memory_locked(scope, &[from, to], |found| {
                let mut memory = found.into_iter().find(|m| m.file == from).ok_or_else(|| not_found(scope, from))?;
                memory.link(kind, to, now_ms);
                Ok(alloc::vec![memory])
            })
            .await?;
        written.pop().ok_or_else(|| not_found(scope, from))
    }

    /// Records that memories were useful now — a host calls it for the memories it put
    /// in a model's context, or that a model cited — so MEMORY.md's caps keep them over
    /// memories nobody used. Recall itself records nothing: reading stays reading. One
    /// write for all of them; `updated` is left as it was.
    pub async fn memory_used(&self, scope: &Scope, files: &[String], now_ms: i64) -> Result<Vec<Memory>, Error> {
        let mut files: Vec<&str> = files.iter().map(String::as_str).collect();
        files.sort_unstable();
        files.dedup();
        self.with_memory_locked(scope, &files, |mut found| {
            for memory in &mut found {
                memory.mark_used(now_ms);
            }
            Ok(found)
        })
        .await
    }

    /// Memories of the scope without their bodies, newest first.
    pub async fn memory_list(&self, scope: &Scope, filter: &Filter) -> Result<Vec<Memory>, Error> {
        self.with_scope(scope, |state| {
            let mut out: Vec<Memory> = state
                .memories
                .values()
                .filter(|m| filter.all || m.is_current())
                .filter(|m| filter.type_.is_none_or(|kind| m.type_ == Some(kind)))
                .filter(|m| filter.topic.as_ref().is_none_or(|topic| m.topics.iter().any(|t| t.eq_ignore_ascii_case(topic))))
                .filter(|m| filter.session.as_ref().is_none_or(|session| m.session.as_ref() == Some(session)))
                .filter(|m| filter.window.is_none_or(|window| window.contains(m.time_ms())))
                .cloned()
                .collect();
            out.sort_by(|a, b| b.time_ms().cmp(&a.time_ms()).then_with(|| a.file.cmp(&b.file)));
            out
        })
        .await
        .map(|(list, _)| list)
    }

    /// One memory, read from its file, with its supersession history.
    pub async fn memory_show(&self, scope: &Scope, file: &str) -> Result<Shown, Error> {
        let memory = self.memory_get(scope, file).await?;
        let (chain, _) = self
            .with_scope(scope, |state| {
                let mut before: Vec<String> = Vec::new();
                let mut cursor = file.to_string();
                while let Some(older) =
                    state.memories.values().find(|m| m.superseded_by.as_deref() == Some(cursor.as_str()) && !before.contains(&m.file))
                {
                    before.push(older.file.clone());
                    cursor = older.file.clone();
                }
                before.reverse();
                let mut after: Vec<String> = Vec::new();
                let mut cursor = state.memories.get(file).and_then(|m| m.superseded_by.clone());
                while let Some(newer) = cursor {
                    if after.contains(&newer) || newer == file || before.contains(&newer) {
                        break;
                    }
                    cursor = state.memories.get(&newer).and_then(|m| m.superseded_by.clone());
                    after.push(newer);
                }
                (before, after)
            })
            .await?;
        let mut history = Vec::new();
        for older in &chain.0 {
            history.push(self.memory_get(scope, older).await?);
        }
        history.push(memory.clone());
        for newer in &chain.1 {
            if let Ok(newer) = self.memory_get(scope, newer).await {
                history.push(newer);
            }
        }
        Ok(Shown { memory, history })
    }

    /// The best memories for `query` that hold from a time in `window`, best first, and
    /// a report if the index had to be brought up to date first.
    /// With `near`, the query's vector from a host's embedder, memories rank by the
    /// vectors `apply_embedding` gave them of its model too.
    pub async fn memory_recall(
        &self,
        scope: &Scope,
        query: &str,
        limit: usize,
        all: bool,
        window: Window,
        near: Option<&Near>,
    ) -> Result<Recalled, Error> {
        let near = match near {
            Some(near) => {
                let vector = checked_vector(&near.vector, "the query's vector")?;
                self.load_vectors(scope, &near.model).await?;
                Some(vector)
            }
            None => None,
        };
        let (hits, report) = self
            .with_scope(scope, |state| {
                let hits: Vec<Hit> = state.index.recall(&Query { all, window, near: near.as_deref(), ..Query::new(query, limit) });
                hits.into_iter()
                    .filter_map(|hit| {
                        let memory = state.memories.get(&hit.key)?;
                        Some(RecallHit {
                            file: hit.key,
                            name: memory.name.clone(),
                            description: memory.description.clone(),
                            type_: memory.type_,
                            score: f64::from(hit.score),
                            current: memory.is_current(),
                            matched: hit.matched,
                        })
                    })
                    .collect::<Vec<_>>()
            })
            .await?;
        Ok(Recalled { hits, report })
    }

    /// At most `limit` memories of `scope` that have no vector of `model` for what they
    /// say now, each with its text, for a host's embedder; empty when all have one.
    pub async fn plan_embedding(&self, scope: &Scope, model: &str, limit: usize) -> Result<EmbeddingPlan, Error> {
        if limit == 0 {
            return Err(Error::InvalidArgument(String::from("a plan of 0 memories embeds nothing: give a limit of 1 or more")));
        }
        self.load_vectors(scope, model).await?;
        let missing: Vec<(String, String)> = self
            .state
            .scopes
            .borrow()
            .get(&scope.dir())
            .map(|state| {
                let unembedded = state.memories.keys().filter(|file| !state.index.has_vector(file));
                unembedded.take(limit).map(|file| (file.clone(), state.said.get(file).cloned().unwrap_or_default())).collect()
            })
            .unwrap_or_default();
        let mut plan = EmbeddingPlan { model: String::from(model), ..EmbeddingPlan::default() };
        for (file, version) in missing {
            // Removed behind the index's back (by hand): the next read of the scope
            // drops it; a plan goes on without it.
            let memory = match self.memory_get(scope, &file).await {
                Err(Error::MemoryNotFound { .. }) => continue,
                memory => memory?,
            };
            plan.texts.push(memory.searchable_text());
            plan.files.push(file);
            plan.versions.push(version);
        }
        Ok(plan)
    }

    /// Keeps the vectors a host's embedder made of `plan`'s texts, one per file, in the
    /// order of `plan.texts`, in the scope's vectors file (in memory only, on a
    /// read-only store). A memory that says something else since the plan keeps none.
    /// Returns how many were kept.
    pub async fn apply_embedding(&self, scope: &Scope, plan: &EmbeddingPlan, vectors: &[Vec<f32>]) -> Result<u32, Error> {
        if vectors.len() != plan.files.len() || plan.versions.len() != plan.files.len() {
            return Err(Error::InvalidArgument(format!(
                "the plan names {} memories and {} vectors came back: give one vector per text, in the plan's order",
                plan.files.len(),
                vectors.len()
            )));
        }
        let mut checked = Vec::with_capacity(vectors.len());
        for (vector, file) in vectors.iter().zip(&plan.files) {
            checked.push(checked_vector(vector, &format!("the vector of `{file}`"))?);
        }
        self.load_vectors(scope, &plan.model).await?;
        let dir = scope.dir();
        let mut lines = String::new();
        let mut kept = 0;
        if let Some(state) = self.state.scopes.borrow_mut().get_mut(&dir) {
            let known = state.index.vector_dimensions().or(checked.first().map(Vec::len));
            if let Some(other) = checked.iter().find(|vector| Some(vector.len()) != known) {
                return Err(Error::InvalidArgument(format!(
                    "the vectors of `{}` have {} values, these {}: one model gives them all one length (name a new model to start again)",
                    plan.model,
                    known.unwrap_or_default(),
                    other.len()
                )));
            }
            for ((file, version), vector) in plan.files.iter().zip(&plan.versions).zip(checked) {
                if state.said.get(file) != Some(version) {
                    continue;
                }
                let line = VectorLine { file: file.clone(), model: plan.model.clone(), version: version.clone(), vector };
                lines.push_str(&(serde_json::to_string(&line).unwrap_or_default() + "\n"));
                if state.index.set_vector(file, line.vector) {
                    kept += 1;
                }
            }
        }
        if lines.is_empty() {
            return Ok(kept);
        }
        let key = dir.clone() + keys::MEMORY_VECTORS;
        let size = self.base.storage.list(&key).await?.into_iter().find(|info| info.key == key).map_or(0, |info| info.size);
        let text = match size {
            0 => vectors_header() + &lines,
            // A line a crash cut short is left on its own, not glued to the next.
            size if self.base.storage.read(&key, size - 1, Some(1)).await? != b"\n" => String::from("\n") + &lines,
            _ => lines,
        };
        // What this store read stays what it read unless nobody else appended between:
        // another writer's lines are then read by the next call.
        if let Some(written) = saved(self.base.storage.append(&key, text.as_bytes()).await)?
            && let Some(state) = self.state.scopes.borrow_mut().get_mut(&dir)
            && let Some((_, read_at)) = &mut state.vectors
            && *read_at == size
            && written == size + text.len() as u64
        {
            *read_at = written;
        }
        Ok(kept)
    }

    /// Brings the index's host vectors to those the scope's vectors file holds for
    /// `model` and for what each memory says now: read again when the file grew
    /// (another writer) or another model is asked for.
    async fn load_vectors(&self, scope: &Scope, model: &str) -> Result<(), Error> {
        scope.check()?;
        if model.trim().is_empty() {
            return Err(Error::InvalidArgument(String::from("name the embedder's model: its vectors are kept by it")));
        }
        let dir = scope.dir();
        self.refresh_scope(&dir).await?;
        let key = dir.clone() + keys::MEMORY_VECTORS;
        let size = self.base.storage.list(&key).await?.into_iter().find(|info| info.key == key).map_or(0, |info| info.size);
        let current = self.state.scopes.borrow().get(&dir).and_then(|state| state.vectors.clone());
        if current.is_some_and(|(loaded, read_at)| loaded == model && read_at == size) {
            return Ok(());
        }
        let text = if size > 0 { self.read_text(&key).await?.unwrap_or_default() } else { String::new() };
        let lines = text.lines().count();
        // The newest current line of each memory and model: what a rewrite keeps. A line
        // that does not read (torn by a crash, another version) is skipped: its memory
        // is planned again.
        let mut current: BTreeMap<(String, String), VectorLine> = BTreeMap::new();
        {
            let mut memories = self.state.scopes.borrow_mut();
            let Some(state) = memories.get_mut(&dir) else { return Ok(()) };
            for line in text.lines().filter_map(|line| serde_json::from_str::<VectorLine>(line).ok()) {
                if state.said.get(&line.file) == Some(&line.version) {
                    current.insert((line.file.clone(), line.model.clone()), line);
                }
            }
            state.index.take_vectors();
            for line in current.values().filter(|line| line.model == model) {
                state.index.set_vector(&line.file, line.vector.clone());
            }
            state.vectors = Some((String::from(model), size));
        }
        // Every embedding again and every model adds lines; once most are out of date,
        // the file is written again with the current ones (a derived file: if another
        // writer appended meanwhile, the rewrite is skipped and tried on a later load).
        if lines > 2 * current.len() + VECTORS_SLACK {
            let mut compacted = vectors_header();
            for line in current.values() {
                compacted.push_str(&(serde_json::to_string(line).unwrap_or_default() + "\n"));
            }
            let rewritten =
                self.memory_locked(scope, async |_| Ok(self.base.storage.replace(&key, compacted.as_bytes(), Some(size)).await?)).await;
            match rewritten {
                Ok(()) => {
                    if let Some(state) = self.state.scopes.borrow_mut().get_mut(&dir) {
                        state.vectors = Some((String::from(model), compacted.len() as u64));
                    }
                }
                // Read-only, written meanwhile, or its lock held long: kept as it is.
                Err(Error::Storage(StorageError::ReadOnly { .. } | StorageError::Changed { .. } | StorageError::Locked { .. })) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// MEMORY.md as a model should get it, within Claude Code's caps (see
    /// [`memory_md::for_model`]). A missing MEMORY.md is empty.
    pub async fn memory_load(&self, scope: &Scope, caps: Caps) -> Result<Loaded, Error> {
        let (standings, _) = self
            .with_scope(scope, |state| {
                state
                    .memories
                    .iter()
                    .map(|(file, m)| (file.clone(), Standing { current: m.is_current(), useful_ms: m.last_useful_ms() }))
                    .collect::<BTreeMap<String, Standing>>()
            })
            .await?;
        let text = self.read_text(&(scope.dir() + keys::MEMORY_INDEX)).await?.unwrap_or_default();
        Ok(memory_md::for_model(&text, caps, |file| standings.get(file).copied()))
    }

    /// Reads the memory folder again from scratch and rewrites the recall index.
    pub async fn memory_reindex(&self, scope: &Scope) -> Result<MemoryIndexReport, Error> {
        self.memory_locked(scope, async |dir| self.rebuild_scope(dir, String::from("rebuilt on request")).await).await
    }

    /// One memory with its body, read from its file.
    pub async fn memory_get(&self, scope: &Scope, file: &str) -> Result<Memory, Error> {
        scope.check()?;
        check_file(scope, file)?;
        let key = scope.dir() + file + keys::MEMORY_SUFFIX;
        match self.read_text(&key).await? {
            Some(text) => Ok(Memory::parse(file, &text)),
            None => Err(not_found(scope, file)),
        }
    }

    pub(super) async fn read_text(&self, key: &str) -> Result<Option<String>, Error> {
        match self.base.storage.read(key, 0, None).await {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(StorageError::NotFound { .. }) => Ok(None),
            Err(error) => Err(error.into()),
        }
    }

    /// Runs `read` over the scope's state, brought up to date first.
    pub(super) async fn with_scope<T>(
        &self,
        scope: &Scope,
        read: impl FnOnce(&ScopeState) -> T,
    ) -> Result<(T, Option<MemoryIndexReport>), Error> {
        scope.check()?;
        let dir = scope.dir();
        let report = self.refresh_scope(&dir).await?;
        if let Some(state) = self.state.scopes.borrow_mut().get_mut(&dir) {
            state.index.embed_with(self.base.embedding_table());
        }
        let memories = self.state.scopes.borrow();
        let state = memories.get(&dir).ok_or_else(|| scope_unread(&dir))?;
        Ok((read(state), report))
    }

    /// Under the scope's lock: reads the files named, lets `change` return the memories
    /// to write, writes them.
    pub(super) async fn with_memory_locked(
        &self,
        scope: &Scope,
        files: &[&str],
        change: impl FnOnce(Vec<Memory>) -> Result<Vec<Memory>, Error>,
    ) -> Result<Vec<Memory>, Error> {
        for file in files {
            check_file(scope, file)?;
        }
        self.memory_locked(scope, async |dir| {
            self.refresh_scope(dir).await?;
            let mut found = Vec::new();
            for file in files {
                found.push(self.memory_get(scope, file).await?);
            }
            let mut written = change(found)?;
            self.redact_memories(&mut written);
            self.write_memories(dir, &written).await?;
            Ok(written)
        })
        .await
    }

    /// Under the scope's lock: lets `make` return the memories to write from the scope's
    /// state, writes them.
    pub(super) async fn with_scope_locked(
        &self,
        scope: &Scope,
        make: impl FnOnce(&ScopeState) -> Result<Vec<Memory>, Error>,
    ) -> Result<Vec<Memory>, Error> {
        self.memory_locked(scope, async |dir| {
            self.refresh_scope(dir).await?;
            let mut written = {
                let memories = self.state.scopes.borrow();
                let state = memories.get(dir).ok_or_else(|| scope_unread(dir))?;
                make(state)?
            };
            self.redact_memories(&mut written);
            self.write_memories(dir, &written).await?;
            Ok(written)
        })
        .await
    }

    /// Takes the secrets the store's redaction covers out of each memory's name,
    /// description, body and topics, and says what was taken in its `redacted`.
    pub(super) fn redact_memories(&self, memories: &mut [Memory]) {
        let redaction = self.base.redaction();
        for memory in memories {
            let mut found = crate::redact::Found::default();
            // A description the body holds word for word (the memory tool takes one from
            // the body's first line) is a copy: a secret in both was written once.
            let copied = !memory.description.is_empty() && memory.body.contains(memory.description.as_str());
            let mut in_the_copy = crate::redact::Found::default();
            if let Some(clean) = redaction.text(&memory.description, if copied { &mut in_the_copy } else { &mut found }) {
                memory.description = clean;
            }
            for text in [&mut memory.name, &mut memory.body].into_iter().chain(memory.topics.iter_mut()) {
                if let Some(clean) = redaction.text(text, &mut found) {
                    *text = clean;
                }
            }
            memory.redacted = found.report();
        }
    }

    /// Runs `body` holding the scope's lock; the lock is given back whatever happens.
    pub(super) async fn memory_locked<T>(&self, scope: &Scope, body: impl AsyncFnOnce(&str) -> Result<T, Error>) -> Result<T, Error> {
        scope.check()?;
        let dir = scope.dir();
        self.base.storage.lock(&lock_name(&dir)).await?;
        let outcome = body(&dir).await;
        let unlocked = self.base.storage.unlock(&lock_name(&dir)).await;
        let value = outcome?;
        unlocked?;
        Ok(value)
    }

    /// Files, then MEMORY.md, then the index; the cached state follows. On a failure the
    /// cached state is dropped, so the next call reads storage again.
    pub(super) async fn write_memories(&self, dir: &str, written: &[Memory]) -> Result<(), Error> {
        let outcome = self.write_memories_unchecked(dir, written).await;
        if outcome.is_err() {
            self.state.scopes.borrow_mut().remove(dir);
        }
        outcome
    }

    async fn write_memories_unchecked(&self, dir: &str, written: &[Memory]) -> Result<(), Error> {
        let mut lines = String::new();
        let mut indexed = Vec::new();
        // The files this write creates: taken out again if MEMORY.md cannot be written,
        // so a failed add leaves no memory behind (a retry would make a second one).
        let mut created = Vec::new();
        for memory in written {
            let bytes = memory.render();
            let key = String::from(dir) + &memory.file + keys::MEMORY_SUFFIX;
            let creates = !self.state.scopes.borrow().get(dir).is_some_and(|state| state.memories.contains_key(&memory.file));
            if let Err(error) = self.base.storage.replace(&key, bytes.as_bytes(), None).await {
                // A refused replace wrote nothing: what is at its key (a link the store
                // does not follow, another program's file) is not this write's to take
                // out. A failed one may have landed.
                if creates && !error.wrote_nothing() {
                    created.push(key);
                }
                self.remove_all(&created).await;
                return Err(error.into());
            }
            if creates {
                created.push(key);
            }
            let line = IndexLine::of(memory, bytes.len() as u64);
            lines.push_str(&line.encode());
            indexed.push(line);
        }
        let index_key = String::from(dir) + keys::MEMORY_INDEX;
        let (old, old_size) = match self.base.storage.read(&index_key, 0, None).await {
            Ok(bytes) => {
                let size = bytes.len() as u64;
                (String::from_utf8_lossy(&bytes).into_owned(), Some(size))
            }
            Err(StorageError::NotFound { .. }) => (String::new(), None),
            Err(error) => {
                self.remove_all(&created).await;
                return Err(error.into());
            }
        };
        // A write that failed (or lost power) between a memory's file and MEMORY.md left
        // the index behind the files: a new memory out of it, or one archived or
        // superseded still in it (and loaded into every prompt). The next write of the
        // scope brings it back to what the files say. A memory left out is put back only
        // if Mneme wrote it (it carries `created`): a line someone took out of a Claude
        // Code index stays out.
        let listed: BTreeSet<&str> = old.lines().filter_map(memory_md::linked_file).collect();
        let behind: Vec<Memory> = self
            .state
            .scopes
            .borrow()
            .get(dir)
            .map(|state| {
                state
                    .memories
                    .values()
                    .filter(|m| {
                        let listed = listed.contains(m.file.as_str());
                        if m.is_current() { m.created_ms.is_some() && !listed } else { listed }
                    })
                    .filter(|m| written.iter().all(|w| w.file != m.file))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let refs: Vec<&Memory> = behind.iter().chain(written).collect();
        let new = memory_md::update(&old, &refs);
        if new != old
            && let Err(error) = self.base.storage.replace(&index_key, new.as_bytes(), old_size).await
        {
            self.remove_all(&created).await;
            return Err(error.into());
        }
        let recall_key = String::from(dir) + keys::RECALL_INDEX;
        let index_exists = self.state.scopes.borrow().get(dir).is_some_and(|state| state.index_size > 0);
        if !index_exists {
            lines.insert_str(0, &header_line());
        }
        let size = self.base.storage.append(&recall_key, lines.as_bytes()).await?;
        let compact = {
            let mut memories = self.state.scopes.borrow_mut();
            let state = memories.entry(String::from(dir)).or_default();
            for line in indexed {
                apply_line(state, line);
            }
            state.index_size = size;
            state.index_lines > 2 * state.memories.len() + 64
        };
        if compact {
            self.compact_index(dir).await?;
        }
        Ok(())
    }

    /// Takes out the files a write created before it failed, as far as storage lets it
    /// (what stays is a memory MEMORY.md does not list, which the next write puts back).
    async fn remove_all(&self, created: &[String]) {
        for key in created {
            let _ = self.base.storage.remove(key).await;
        }
    }

    /// Rewrites the index with one line per memory. It keeps no bodies, so the lines
    /// come from the files; a file that cannot be read is left to the next load.
    async fn compact_index(&self, dir: &str) -> Result<(), Error> {
        let files: Vec<String> =
            self.state.scopes.borrow().get(dir).map(|state| state.memories.keys().cloned().collect()).unwrap_or_default();
        let mut text = header_line();
        for file in &files {
            let key = String::from(dir) + file + keys::MEMORY_SUFFIX;
            if let Some(source) = self.read_text(&key).await? {
                text.push_str(&IndexLine::of(&Memory::parse(file, &source), source.len() as u64).encode());
            }
        }
        let recall_key = String::from(dir) + keys::RECALL_INDEX;
        self.base.storage.replace(&recall_key, text.as_bytes(), None).await?;
        if let Some(state) = self.state.scopes.borrow_mut().get_mut(dir) {
            state.index_size = text.len() as u64;
            state.index_lines = files.len();
        }
        Ok(())
    }

    /// Brings the cached state of a scope up to date: nothing to do when the index file
    /// has the size this store last saw; its new lines when it grew (another writer);
    /// a full check against the folder otherwise.
    pub(super) async fn refresh_scope(&self, dir: &str) -> Result<Option<MemoryIndexReport>, Error> {
        let recall_key = String::from(dir) + keys::RECALL_INDEX;
        let size = self.base.storage.list(&recall_key).await?.into_iter().find(|info| info.key == recall_key).map(|info| info.size);
        let known = self.state.scopes.borrow().get(dir).map(|state| state.index_size);
        match (known, size) {
            (Some(known), Some(size)) if known == size => return Ok(None),
            (Some(known), Some(size)) if known < size => {
                let tail = self.base.storage.read(&recall_key, known, None).await?;
                if tail.ends_with(b"\n") && self.apply_lines(dir, &tail, size) {
                    return Ok(None);
                }
            }
            _ => {}
        }
        self.load_scope(dir).await
    }

    /// Applies index lines another writer appended; false if one does not read.
    fn apply_lines(&self, dir: &str, tail: &[u8], size: u64) -> bool {
        let mut parsed = Vec::new();
        for line in tail.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            match serde_json::from_slice::<IndexLine>(line) {
                Ok(line) => parsed.push(line),
                Err(_) => return false,
            }
        }
        let mut memories = self.state.scopes.borrow_mut();
        let Some(state) = memories.get_mut(dir) else { return false };
        for line in parsed {
            apply_line(state, line);
        }
        state.index_size = size;
        true
    }

    /// Reads the index and checks it against the folder; repairs under the lock.
    async fn load_scope(&self, dir: &str) -> Result<Option<MemoryIndexReport>, Error> {
        let recall_key = String::from(dir) + keys::RECALL_INDEX;
        let bytes = match self.base.storage.read(&recall_key, 0, None).await {
            Ok(bytes) => Some(bytes),
            Err(StorageError::NotFound { .. }) => None,
            Err(error) => return Err(error.into()),
        };
        let listing = self.base.storage.list(dir).await?;
        let files: BTreeMap<String, u64> =
            listing.iter().filter_map(|info| Some((stem_in(dir, &info.key)?.to_string(), info.size))).collect();
        let Some(bytes) = bytes else {
            if files.is_empty() {
                self.replace_state(dir, ScopeState::default());
                return Ok(None);
            }
            return self.rebuild_scope(dir, String::from("the recall index was missing")).await.map(Some);
        };
        let Some(mut state) = parse_index(&bytes) else {
            return self.rebuild_scope(dir, String::from("the recall index was unreadable or of another version")).await.map(Some);
        };
        let mut behind: Vec<String> = Vec::new();
        let indexed: BTreeMap<String, u64> = state.memories.keys().map(|file| (file.clone(), state_size(&state, file))).collect();
        for (file, size) in &files {
            if indexed.get(file) != Some(size) {
                behind.push(file.clone());
            }
        }
        for file in indexed.keys() {
            if !files.contains_key(file) {
                behind.push(file.clone());
            }
        }
        state.index_size = bytes.len() as u64;
        if behind.is_empty() {
            self.replace_state(dir, state);
            return Ok(None);
        }
        behind.sort();
        self.replace_state(dir, state);
        self.index_catch_up(dir, behind).await.map(Some)
    }

    /// Indexes again the files the index is behind on, appending their lines.
    async fn index_catch_up(&self, dir: &str, files: Vec<String>) -> Result<MemoryIndexReport, Error> {
        let mut lines = String::new();
        let mut reindexed = Vec::new();
        for file in &files {
            let key = String::from(dir) + file + keys::MEMORY_SUFFIX;
            let line = match self.read_text(&key).await? {
                Some(source) => IndexLine::of(&Memory::parse(file, &source), source.len() as u64),
                None => IndexLine { file: file.clone(), gone: true, size: 0, head: String::new(), terms: String::new() },
            };
            lines.push_str(&line.encode());
            reindexed.push(line);
        }
        let recall_key = String::from(dir) + keys::RECALL_INDEX;
        let saved = saved(self.base.storage.append(&recall_key, lines.as_bytes()).await)?;
        let mut memories = self.state.scopes.borrow_mut();
        let state = memories.entry(String::from(dir)).or_default();
        for line in reindexed {
            apply_line(state, line);
        }
        // Unsaved, the file keeps the size this state was read at, so this store stays warm.
        if let Some(size) = saved {
            state.index_size = size;
        }
        let mut reason = String::from("memory files changed since they were indexed (written, edited or removed outside an index update)");
        if saved.is_none() {
            reason.push_str(UNSAVED);
        }
        Ok(MemoryIndexReport { reason, files })
    }

    /// Writes a fresh index from every memory file of the folder.
    async fn rebuild_scope(&self, dir: &str, reason: String) -> Result<MemoryIndexReport, Error> {
        let listing = self.base.storage.list(dir).await?;
        let mut text = header_line();
        let mut state = ScopeState::default();
        let mut files = Vec::new();
        for info in &listing {
            let Some(file) = stem_in(dir, &info.key) else { continue };
            let Some(source) = self.read_text(&info.key).await? else { continue };
            let line = IndexLine::of(&Memory::parse(file, &source), source.len() as u64);
            text.push_str(&line.encode());
            files.push(file.to_string());
            apply_line(&mut state, line);
        }
        let recall_key = String::from(dir) + keys::RECALL_INDEX;
        let mut reason = reason;
        match saved(self.base.storage.replace(&recall_key, text.as_bytes(), None).await)? {
            Some(()) => state.index_size = text.len() as u64,
            None => reason.push_str(UNSAVED),
        }
        self.replace_state(dir, state);
        Ok(MemoryIndexReport { reason, files })
    }

    /// Puts a scope's state read again in place of the one this store had, keeping the
    /// host vectors of memories that say what they said: a store whose index cannot be
    /// saved (read-only) reads the scope again on every call, and must not lose them.
    fn replace_state(&self, dir: &str, mut state: ScopeState) {
        let mut memories = self.state.scopes.borrow_mut();
        if let Some(mut old) = memories.remove(dir) {
            for (file, vector) in old.index.take_vectors() {
                if old.said.get(&file).is_some_and(|said| state.said.get(&file) == Some(said)) {
                    state.index.set_vector(&file, vector);
                }
            }
            state.vectors = old.vectors;
        }
        memories.insert(String::from(dir), state);
    }
}

/// The index is derived state: a store that cannot be written (a Claude Code home opened
/// read-only) still recalls, from an index built in memory for the call.
fn saved<T>(outcome: Result<T, StorageError>) -> Result<Option<T>, Error> {
    match outcome {
        Ok(value) => Ok(Some(value)),
        Err(StorageError::ReadOnly { .. }) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

const UNSAVED: &str = "; the store is read-only, so the index was built in memory and not saved";

/// Lines past twice the current ones before the vectors file is written again.
const VECTORS_SLACK: usize = 16;

/// One vector a host's embedder gave a memory, as the vectors file keeps it.
#[derive(Serialize, Deserialize)]
struct VectorLine {
    file: String,
    model: String,
    /// What the memory said when its text was embedded.
    version: String,
    vector: Vec<f32>,
}

fn vectors_header() -> String {
    let header = Header { mneme: String::from("memory-vectors"), version: 1 };
    serde_json::to_string(&header).unwrap_or_default() + "\n"
}

/// A vector a caller gave, of unit length; refused unless it has a length, every value
/// finite and a direction.
fn checked_vector(vector: &[f32], name: &str) -> Result<Vec<f32>, Error> {
    if vector.is_empty() || vector.len() > crate::recall::embed::MAX_DIMENSIONS {
        return Err(Error::InvalidArgument(format!(
            "{name} has {} values: an embedding has 1 to {}",
            vector.len(),
            crate::recall::embed::MAX_DIMENSIONS
        )));
    }
    let mut unit = vector.to_vec();
    if vector.iter().any(|value| !value.is_finite()) || !crate::recall::embed::normalise(&mut unit) {
        return Err(Error::InvalidArgument(format!(
            "{name} has a value that is not a finite number, or no length to scale (all zeros, or too large or small to square): embed the text again"
        )));
    }
    Ok(unit)
}

fn state_size(state: &ScopeState, file: &str) -> u64 {
    state.sizes.get(file).copied().unwrap_or(u64::MAX)
}

fn apply_line(state: &mut ScopeState, line: IndexLine) {
    state.index_lines += 1;
    if line.gone {
        state.index.remove(&line.file);
        state.memories.remove(&line.file);
        state.sizes.remove(&line.file);
        state.said.remove(&line.file);
        return;
    }
    let memory = Memory::parse(&line.file, &line.head);
    state.index.insert(document(&memory, &line.terms));
    let said = crate::support::ids::fingerprint(&line.terms);
    if state.said.get(&line.file) != Some(&said) {
        state.index.drop_vector(&line.file);
        state.said.insert(line.file.clone(), said);
    }
    state.sizes.insert(line.file.clone(), line.size);
    state.memories.insert(line.file, memory);
}

/// The state an index file describes, or `None` if its header or a line does not read.
fn parse_index(bytes: &[u8]) -> Option<ScopeState> {
    let mut lines = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty());
    let header: Header = serde_json::from_slice(lines.next()?).ok()?;
    if header.mneme != "recall-index" || header.version != INDEX_VERSION {
        return None;
    }
    if !bytes.ends_with(b"\n") {
        return None;
    }
    let mut state = ScopeState::default();
    for line in lines {
        apply_line(&mut state, serde_json::from_slice(line).ok()?);
    }
    Some(state)
}

fn lock_name(dir: &str) -> String {
    String::from(dir) + keys::MEMORY_INDEX
}

pub(super) fn not_found(scope: &Scope, file: &str) -> Error {
    Error::MemoryNotFound { scope: scope.label(), file: file.to_string() }
}

pub(super) fn check_file(scope: &Scope, file: &str) -> Result<(), Error> {
    if file.is_empty() || file.contains(['/', '\\', '\0']) || file.starts_with('.') || file.len() > 200 {
        return Err(not_found(scope, file));
    }
    Ok(())
}

fn check_confidence(confidence: f64) -> Result<(), Error> {
    if (0.0..=1.0).contains(&confidence) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!("confidence must be between 0 and 1, not {confidence}")))
    }
}

pub(super) fn check_new(memory: &NewMemory) -> Result<(), Error> {
    if memory.name.trim().is_empty() {
        return Err(Error::InvalidArgument(String::from("a memory needs a name")));
    }
    if memory.body.trim().is_empty() && memory.description.trim().is_empty() {
        return Err(Error::InvalidArgument(format!("memory `{}` has neither a description nor a body", memory.name)));
    }
    if let Some(confidence) = memory.confidence {
        check_confidence(confidence)?;
    }
    Ok(())
}
