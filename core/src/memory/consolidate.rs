//! Memory consolidation (Claude Code's auto-dream: orient, gather, consolidate, prune),
//! run the way extraction is: the core plans a prompt over the memory set and the
//! sessions updated since the last consolidation; the host runs its model; the core
//! reads the answer (one JSON object per line), checks all of it, and stages every
//! change — new memories, updates, supersessions, archives, links — in memory. A dry
//! run returns the staged changes; a real one records them first in the scope's
//! consolidation log (`.mneme/consolidations.jsonl`: every memory before and after),
//! then writes them in one locked write. A plan is applied once. Pruning supersedes or archives, never
//! deletes, and a consolidation can be rolled back from its record.
//!
//! A crash between the record and the write leaves files as they were before; a
//! rollback finds them so and leaves them be. A memory changed after a consolidation
//! (by hand, by another writer) is never overwritten by its rollback: the rollback
//! refuses and names it.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::Memories;
use super::answer::{self, Operation};
use super::file::{LinkKind, Memory, MemoryType};
use super::store::{Change, Filter, NewMemory, Scope, not_found};
use crate::error::Error;
use crate::keys;
use crate::storage::{Storage, StorageError};
use crate::support::time;

/// How much of each memory's body a prompt carries (characters).
const BODY_CHARS: usize = 800;
/// How much of the memory set a prompt carries, newest kept (characters).
const MEMORY_CHARS: usize = 60_000;
/// How much of the recent sessions a prompt carries, newest kept (characters).
const SESSION_CHARS: usize = 24_000;
/// How much of one message a prompt carries (characters).
const MESSAGE_CHARS: usize = 400;
/// What the model may write.
const ANSWER_TOKENS: u64 = 8_000;
/// The scope's consolidation log, beside the recall index.
const LOG: &str = ".mneme/consolidations.jsonl";

/// What to ask the model, and what its answer will be checked against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsolidationPlan {
    /// The consolidation's id: `consolidation-<unix ms>`.
    pub id: String,
    pub prompt: String,
    pub max_tokens: u64,
    /// Memory files the prompt lists: what the answer may change.
    pub known: Vec<String>,
    /// Sessions updated since the last consolidation whose messages the prompt carries.
    pub sessions: Vec<String>,
    /// When the last consolidation completed (`None`: never).
    pub since_ms: Option<i64>,
}

/// What one step of a consolidation did to one memory file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// A new memory (from the sessions, or a merge's result).
    Added,
    Updated,
    /// Replaced by a new memory (a supersede or a merge); kept.
    Superseded,
    /// Pruned: kept, out of MEMORY.md and default recall.
    Archived,
    Linked,
}

/// One memory file's change.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    pub kind: StepKind,
    pub file: String,
    /// The memory before (`None` for an added one).
    pub before: Option<Memory>,
    pub after: Memory,
    /// Why, as the model put it.
    pub reason: Option<String>,
}

/// A consolidation as recorded (or, for a dry run, as it would be).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Consolidation {
    pub id: String,
    pub at_ms: i64,
    pub sessions: Vec<String>,
    pub steps: Vec<Step>,
    /// False for a dry run: nothing was written.
    pub applied: bool,
    pub rolled_back_ms: Option<i64>,
}

/// One line of the consolidation log.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum LogLine {
    Record(Record),
    Rollback { rolled_back: String, at_ms: i64 },
}

/// A consolidation in the log: each memory before and after, as Mneme writes its file
/// (a file Claude Code wrote comes back with the same fields and body, Mneme's layout).
#[derive(Serialize, Deserialize)]
struct Record {
    id: String,
    at_ms: i64,
    sessions: Vec<String>,
    steps: Vec<RecordedStep>,
}

#[derive(Serialize, Deserialize)]
struct RecordedStep {
    kind: StepKind,
    file: String,
    before: Option<String>,
    after: String,
    #[serde(default)]
    reason: Option<String>,
}

/// A checked line of the answer.
struct Proposed {
    line: u32,
    op: Op,
    reason: Option<String>,
}

/// A checked operation.
enum Op {
    Add(NewMemory),
    Update(String, Change),
    /// The files a new memory replaces (one: a supersede; more: a merge).
    Replace(Vec<String>, NewMemory),
    Archive(String),
    Link(String, LinkKind, String),
}

impl<S: Storage> Memories<'_, S> {
    /// The consolidation request for `scope`'s memory: every current memory, and the
    /// messages of the sessions updated since the last consolidation (in the project,
    /// or every session for the global scope).
    pub async fn plan_consolidation(&self, scope: &Scope, now_ms: i64) -> Result<ConsolidationPlan, Error> {
        scope_checked(scope)?;
        // This scope's last consolidation that stands; one rolled back gathers again.
        let since_ms = self.read_log(&scope.dir()).await?.iter().rev().find(|c| c.rolled_back_ms.is_none()).map(|c| c.at_ms);
        let memories = self.memory_list(scope, &Filter::default()).await?;
        let mut prompt = String::from(INSTRUCTIONS);
        prompt.push_str(&format!("\nToday is {}.\n", date(now_ms)));
        prompt.push_str("\nThe memories (newest first):\n");
        let mut known = Vec::new();
        let mut used = 0usize;
        for listed in &memories {
            let memory = self.memory_get(scope, &listed.file).await?;
            let block = memory_block(&memory);
            if used + block.len() > MEMORY_CHARS && !known.is_empty() {
                prompt.push_str("(older memories left out)\n");
                break;
            }
            used += block.len();
            prompt.push_str(&block);
            known.push(memory.file);
        }
        if known.is_empty() {
            prompt.push_str("(none yet)\n");
        }
        let sessions = self.recent_sessions(scope, since_ms).await?;
        prompt.push_str(&format!("\nSessions since the last consolidation ({}):\n", sessions.len()));
        let mut used = 0usize;
        let mut gathered = Vec::new();
        // Each session gets a share, so one long session cannot crowd out the rest.
        let share = (SESSION_CHARS / sessions.len().max(1)).max(MESSAGE_CHARS + 200);
        let total = sessions.len();
        for (id, title, updated) in sessions {
            let texts = match self.sessions.conversation_texts(&id).await {
                Ok(texts) => texts,
                // Gone since the listing, or an id two projects share: nothing to gather.
                Err(Error::SessionNotFound { .. } | Error::AmbiguousSession { .. }) => continue,
                Err(error) => return Err(error),
            };
            let mut block = format!("## {} ({id}, {})\n", title.as_deref().unwrap_or("untitled"), updated.as_deref().unwrap_or("no time"));
            let mut said: Vec<String> = Vec::new();
            let mut size = block.len();
            for (role, text) in texts.messages.iter().rev().filter(|(role, _)| role == "user") {
                let line = format!("{role}: {}\n", shorten(text.trim(), MESSAGE_CHARS));
                if size + line.len() > share {
                    said.push(String::from("(earlier messages left out)\n"));
                    break;
                }
                size += line.len();
                said.push(line);
            }
            said.reverse();
            block.extend(said);
            if used + block.len() > SESSION_CHARS && !gathered.is_empty() {
                prompt.push_str(&format!("({} older sessions left out)\n", total - gathered.len()));
                break;
            }
            used += block.len();
            prompt.push_str(&block);
            gathered.push(id);
        }
        if gathered.is_empty() {
            prompt.push_str("(none)\n");
        }
        Ok(ConsolidationPlan {
            id: format!("consolidation-{now_ms}"),
            prompt,
            max_tokens: ANSWER_TOKENS,
            known,
            sessions: gathered,
            since_ms,
        })
    }

    /// Stages what the model's `answer` to `plan` says; unless `dry_run`, records it in
    /// the scope's consolidation log and writes it. Every line is checked first: one
    /// that does not read writes nothing.
    pub async fn apply_consolidation(
        &self,
        scope: &Scope,
        plan: &ConsolidationPlan,
        answer: &str,
        now_ms: i64,
        dry_run: bool,
    ) -> Result<Consolidation, Error> {
        let ops = read_answer(answer, plan)?;
        let dir = scope.dir();
        let stage = async |dir: &str| -> Result<Vec<Step>, Error> {
            self.refresh_scope(dir).await?;
            let mut current: BTreeMap<String, Memory> = BTreeMap::new();
            for proposed in &ops {
                let line = &proposed.line;
                for file in proposed.op.files() {
                    match self.memory_get(scope, file).await {
                        // The model answered about the memory as the plan showed it: one
                        // changed since (an update acknowledged while the model thought)
                        // would be written over with what it no longer says.
                        // (The plan showed current memories only: one archived or
                        // superseded since changed too, though its text may read the same.)
                        Ok(memory)
                            if plan.known.iter().any(|known| known == file)
                                && (!memory.is_current() || !plan.prompt.contains(&memory_block(&memory))) =>
                        {
                            return Err(Error::InvalidArgument(format!(
                                "memory `{file}` changed since consolidation `{}` was planned: nothing was written; plan a new consolidation",
                                plan.id
                            )));
                        }
                        Ok(memory) => current.insert(memory.file.clone(), memory),
                        Err(Error::MemoryNotFound { .. }) => {
                            return Err(Error::InvalidAnswer { line: *line, reason: format!("memory `{file}` no longer exists") });
                        }
                        Err(error) => return Err(error),
                    };
                }
            }
            let memories = self.state.scopes.borrow();
            let state = memories.get(dir).ok_or_else(|| super::store::scope_unread(dir))?;
            let mut steps: Vec<Step> = Vec::new();
            for proposed in ops {
                let redaction = self.base.redaction();
                // Named after the name as it will be written: no secret in a file name.
                let free_file = |name: &str, pending: &[Memory]| match redaction.text(name, &mut crate::redact::Found::default()) {
                    Some(clean) => state.free_file(&clean, pending),
                    None => state.free_file(name, pending),
                };
                stage_op(scope, proposed, &mut current, &mut steps, now_ms, free_file)?;
            }
            for step in &mut steps {
                self.redact_memories(core::slice::from_mut(&mut step.after));
            }
            Ok(steps)
        };
        let steps = if dry_run {
            scope_checked(scope)?;
            stage(&dir).await?
        } else {
            self.memory_locked(scope, async |dir| {
                if self.read_log(dir).await?.iter().any(|c| c.id == plan.id) {
                    return Err(Error::InvalidArgument(format!("consolidation `{}` was applied already; plan a new one", plan.id)));
                }
                let steps = stage(dir).await?;
                let record = Record {
                    id: plan.id.clone(),
                    at_ms: now_ms,
                    sessions: plan.sessions.clone(),
                    steps: steps.iter().map(RecordedStep::of).collect(),
                };
                self.append_log(dir, &LogLine::Record(record)).await?;
                self.write_memories(dir, &finals(&steps)).await?;
                Ok(steps)
            })
            .await?
        };
        Ok(Consolidation {
            id: plan.id.clone(),
            at_ms: now_ms,
            sessions: plan.sessions.clone(),
            steps,
            applied: !dry_run,
            rolled_back_ms: None,
        })
    }

    /// Undoes consolidation `id`: each memory it changed gets back its text from before,
    /// each it added is archived. Refuses, writing nothing, when a memory was changed
    /// after it.
    pub async fn rollback_consolidation(&self, scope: &Scope, id: &str, now_ms: i64) -> Result<Consolidation, Error> {
        self.memory_locked(scope, async |dir| {
            self.refresh_scope(dir).await?;
            let log = self.read_log(dir).await?;
            let Some(found) = log.into_iter().find(|c| c.id == id) else {
                return Err(Error::InvalidArgument(format!(
                    "there is no consolidation `{id}` in {} (list them with `mneme memory consolidations`)",
                    scope.label()
                )));
            };
            if let Some(at) = found.rolled_back_ms {
                return Err(Error::InvalidArgument(format!(
                    "consolidation `{id}` was rolled back already, at {}",
                    time::format_millis(at)
                )));
            }
            // Each file ends as it was before its first step; steps later in the list
            // saw the earlier ones' results, so the first step's `before` is the original.
            let mut restore: BTreeMap<String, (Option<&Memory>, &Memory)> = BTreeMap::new();
            for step in found.steps.iter().rev() {
                let last = restore.get(&step.file).map_or(&step.after, |(_, after)| *after);
                restore.insert(step.file.clone(), (step.before.as_ref(), last));
            }
            let mut written = Vec::new();
            for (file, (before, after)) in restore {
                let now = self.read_text(&(String::from(dir) + &file + keys::MEMORY_SUFFIX)).await?;
                let now_memory = now.as_deref().map(|text| Memory::parse(&file, text));
                // Already as the rollback leaves it: never applied (a crash between the
                // record and the write), or restored by a rollback cut short. Written
                // again all the same, so MEMORY.md and the index catch up with the file.
                let restored = match before {
                    Some(before) => Some(before.clone()),
                    None => now_memory.clone().filter(|now| now.archived_ms.is_some() && archived_from(now, after)),
                };
                let used_ms = now_memory.as_ref().and_then(|now| now.used_ms);
                if now_memory.as_ref().map(Memory::text_without_use) == restored.as_ref().map(Memory::text_without_use) {
                    written.extend(restored.map(|memory| with_use(memory, used_ms)));
                    continue;
                }
                if now_memory.as_ref().map(Memory::text_without_use) != Some(after.text_without_use()) {
                    return Err(Error::InvalidArgument(format!(
                        "memory `{file}` changed after consolidation `{id}`; nothing was rolled back (see `mneme memory show {file}`)"
                    )));
                }
                written.push(with_use(
                    match before {
                        Some(before) => before.clone(),
                        None => {
                            let mut added = after.clone();
                            added.archive(now_ms);
                            added
                        }
                    },
                    used_ms,
                ));
            }
            // Files first: a rollback cut short is rolled back again by the next call
            // (the files it restored read as `before` and are left be).
            self.write_memories(dir, &written).await?;
            self.append_log(dir, &LogLine::Rollback { rolled_back: id.to_string(), at_ms: now_ms }).await?;
            Ok(Consolidation { rolled_back_ms: Some(now_ms), ..found })
        })
        .await
    }

    /// The consolidations recorded in `scope`, oldest first.
    pub async fn consolidations(&self, scope: &Scope) -> Result<Vec<Consolidation>, Error> {
        scope_checked(scope)?;
        self.read_log(&scope.dir()).await
    }

    async fn append_log(&self, dir: &str, line: &LogLine) -> Result<(), Error> {
        let text = serde_json::to_string(line).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        // The record holds memories before and after and the model's reasons: no secret
        // reaches the log either.
        let mut text = self.base.redaction().json_line(&text, &mut crate::redact::Found::default()).unwrap_or(text);
        text.push('\n');
        self.base.storage.append(&(String::from(dir) + LOG), text.as_bytes()).await?;
        Ok(())
    }

    async fn read_log(&self, dir: &str) -> Result<Vec<Consolidation>, Error> {
        let bytes = match self.base.storage.read(&(String::from(dir) + LOG), 0, None).await {
            Ok(bytes) => bytes,
            Err(StorageError::NotFound { .. }) => return Ok(Vec::new()),
            Err(error) => return Err(error.into()),
        };
        let mut out: Vec<Consolidation> = Vec::new();
        // A torn last line (a crash while appending) was never acted on: skipped.
        for line in bytes.split(|b| *b == b'\n').filter_map(|l| serde_json::from_slice::<LogLine>(l).ok()) {
            match line {
                LogLine::Record(record) => out.push(record.into_consolidation()),
                LogLine::Rollback { rolled_back, at_ms } => {
                    if let Some(found) = out.iter_mut().find(|c| c.id == rolled_back) {
                        found.rolled_back_ms = Some(at_ms);
                    }
                }
            }
        }
        Ok(out)
    }

    async fn recent_sessions(&self, scope: &Scope, since_ms: Option<i64>) -> Result<Vec<(String, Option<String>, Option<String>)>, Error> {
        let listing = self.sessions.list().await?;
        Ok(listing
            .sessions
            .into_iter()
            .filter(|s| match scope {
                Scope::Global => true,
                Scope::Project(project) => &s.project == project,
            })
            .filter(|s| since_ms.is_none_or(|since| s.updated.as_deref().and_then(time::parse_millis).is_some_and(|u| u > since)))
            .map(|s| (s.id, s.title, s.updated))
            .collect())
    }
}

/// Whether `now` is `after` archived (by an earlier rollback), nothing else changed.
fn archived_from(now: &Memory, after: &Memory) -> bool {
    let mut unarchived = now.clone();
    unarchived.archived_ms = after.archived_ms;
    unarchived.updated_ms = after.updated_ms;
    unarchived.text_without_use() == after.text_without_use()
}

/// `memory` carrying the latest use of the file it replaces.
fn with_use(mut memory: Memory, used_ms: Option<i64>) -> Memory {
    if let Some(used) = used_ms {
        memory.mark_used(used);
    }
    memory
}

fn scope_checked(scope: &Scope) -> Result<(), Error> {
    match scope {
        Scope::Global => Ok(()),
        Scope::Project(project) => keys::validate_project(project),
    }
}

impl Op {
    /// The existing memories it reads or changes.
    fn files(&self) -> Vec<&String> {
        match self {
            Op::Add(_) => Vec::new(),
            Op::Update(file, _) | Op::Archive(file) => alloc::vec![file],
            Op::Replace(files, _) => files.iter().collect(),
            Op::Link(from, _, to) => alloc::vec![from, to],
        }
    }
}

/// Applies one operation to the staged memories, recording a step per file it changes.
fn stage_op(
    scope: &Scope,
    Proposed { op, reason, .. }: Proposed,
    current: &mut BTreeMap<String, Memory>,
    steps: &mut Vec<Step>,
    now_ms: i64,
    free_file: impl Fn(&str, &[Memory]) -> String,
) -> Result<(), Error> {
    let change = |current: &mut BTreeMap<String, Memory>, steps: &mut Vec<Step>, kind: StepKind, file: &str, edit: &dyn Fn(&mut Memory)| {
        let memory = current.get_mut(file).ok_or_else(|| not_found(scope, file))?;
        let before = memory.clone();
        edit(memory);
        steps.push(Step { kind, file: file.to_string(), before: Some(before), after: memory.clone(), reason: reason.clone() });
        Ok(())
    };
    let add = |current: &mut BTreeMap<String, Memory>, steps: &mut Vec<Step>, new: NewMemory| {
        let pending: Vec<Memory> = steps.iter().filter(|s| s.kind == StepKind::Added).map(|s| s.after.clone()).collect();
        let file = free_file(&new.name, &pending);
        let memory = new.into_memory(&file, now_ms);
        current.insert(memory.file.clone(), memory.clone());
        steps.push(Step { kind: StepKind::Added, file: memory.file.clone(), before: None, after: memory.clone(), reason: reason.clone() });
        memory.file
    };
    match op {
        Op::Update(file, edit) => change(current, steps, StepKind::Updated, &file, &|m| edit.clone().apply(m, now_ms)),
        Op::Archive(file) => change(current, steps, StepKind::Archived, &file, &|m| m.archive(now_ms)),
        Op::Link(from, kind, to) => change(current, steps, StepKind::Linked, &from, &|m| m.link(kind, &to, now_ms)),
        Op::Add(new) => {
            add(current, steps, new);
            Ok(())
        }
        Op::Replace(files, mut new) => {
            for file in &files {
                new.derive_from(file);
            }
            let successor = add(current, steps, new);
            for file in &files {
                change(current, steps, StepKind::Superseded, file, &|m| m.supersede_by(&successor, now_ms))?;
            }
            Ok(())
        }
    }
}

/// Each file's last staged state, once.
fn finals(steps: &[Step]) -> Vec<Memory> {
    let mut last: BTreeMap<&str, &Memory> = BTreeMap::new();
    for step in steps {
        last.insert(&step.file, &step.after);
    }
    last.into_values().cloned().collect()
}

impl RecordedStep {
    fn of(step: &Step) -> RecordedStep {
        RecordedStep {
            kind: step.kind,
            file: step.file.clone(),
            before: step.before.as_ref().map(Memory::render),
            after: step.after.render(),
            reason: step.reason.clone(),
        }
    }
}

impl Record {
    fn into_consolidation(self) -> Consolidation {
        let steps = self
            .steps
            .into_iter()
            .map(|s| Step {
                before: s.before.as_deref().map(|text| Memory::parse(&s.file, text)),
                after: Memory::parse(&s.file, &s.after),
                kind: s.kind,
                file: s.file,
                reason: s.reason,
            })
            .collect();
        Consolidation { id: self.id, at_ms: self.at_ms, sessions: self.sessions, steps, applied: true, rolled_back_ms: None }
    }
}

const INSTRUCTIONS: &str = "You tidy an agent's long-term memory, kept in Claude Code's memory format. Read the \
memories and what the user said in the sessions since the last tidy-up, then:
- consolidate: merge memories that say the same thing; when the sessions show a fact changed, supersede the \
memory that states the old one (it is kept as history); write relative dates (\"yesterday\", \"next week\") as dates;
- add what the sessions establish that no memory holds yet — only what the user said, never a guess;
- prune: archive what is no longer useful (it is kept, out of the index). Nothing is ever deleted.
Change nothing that is fine as it is.

Answer with JSON objects, one per line, and nothing else (\"reason\" is optional on each):
{\"op\":\"merge\",\"files\":[\"a\",\"b\"],\"name\":\"…\",\"type\":\"user|feedback|project|reference\",\"description\":\"one line\",\"body\":\"…\",\"reason\":\"…\"}
{\"op\":\"supersede\",\"file\":\"a\",\"name\":\"…\",\"type\":\"…\",\"description\":\"…\",\"body\":\"the fact as it is now\"}
{\"op\":\"update\",\"file\":\"a\",\"description\":\"…\",\"body\":\"…\"}
{\"op\":\"add\",\"name\":\"…\",\"type\":\"…\",\"description\":\"…\",\"body\":\"…\"}
{\"op\":\"archive\",\"file\":\"a\",\"reason\":\"…\"}
{\"op\":\"link\",\"from\":\"a\",\"link\":\"relates_to|contradicts|extends|derived_from\",\"to\":\"b\"}
{\"op\":\"noop\"} when nothing needs doing.
";

fn memory_block(memory: &Memory) -> String {
    let kind = memory.type_.map_or("untyped", MemoryType::as_str);
    let updated = memory.updated_ms.or(memory.created_ms).map_or_else(|| String::from("no date"), date);
    format!(
        "## {} — {} [{kind}, updated {updated}]\n{}\n{}\n",
        memory.file,
        memory.name,
        memory.description,
        shorten(memory.body.trim(), BODY_CHARS)
    )
}

fn date(ms: i64) -> String {
    let stamp = time::format_millis(ms);
    stamp.get(..10).map_or(stamp.clone(), String::from)
}

fn shorten(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// The answer's operations, each checked, with its line number and reason.
fn read_answer(answer: &str, plan: &ConsolidationPlan) -> Result<Vec<Proposed>, Error> {
    let mut changed: Vec<String> = Vec::new();
    let checked = answer::read(answer, |operation| {
        let reason = operation.reason.clone();
        let Some(op) = check(operation, plan)? else { return Ok(None) };
        // One change per memory per consolidation: two would contradict each other.
        let targets: Vec<String> = match &op {
            Op::Update(file, _) | Op::Archive(file) => alloc::vec![file.clone()],
            Op::Replace(files, _) => files.clone(),
            Op::Add(_) | Op::Link(..) => Vec::new(),
        };
        if let Some(twice) = targets.iter().find(|f| changed.contains(f)) {
            return Err(format!("`{twice}` is changed by an earlier line too; change a memory once"));
        }
        changed.extend(targets);
        Ok(Some((op, reason)))
    })?;
    Ok(checked.into_iter().map(|(line, (op, reason))| Proposed { line, op, reason }).collect())
}

fn check(operation: Operation, plan: &ConsolidationPlan) -> Result<Option<Op>, String> {
    let known = |file: Option<String>, field: &str| answer::known(file, field, &plan.known);
    match operation.op.as_str() {
        "noop" => Ok(None),
        "add" => Ok(Some(Op::Add(operation.new_memory()?))),
        "supersede" => {
            let file = known(operation.file.clone(), "file")?;
            Ok(Some(Op::Replace(alloc::vec![file], operation.new_memory()?)))
        }
        "merge" => {
            let mut files = Vec::new();
            for file in operation.files.clone().ok_or("a merge names its `files`")? {
                let file = known(Some(file), "files")?;
                if !files.contains(&file) {
                    files.push(file);
                }
            }
            if files.len() < 2 {
                return Err(String::from("a merge names two memories or more (`supersede` replaces one)"));
            }
            Ok(Some(Op::Replace(files, operation.new_memory()?)))
        }
        "archive" => Ok(Some(Op::Archive(known(operation.file, "file")?))),
        "link" => {
            let from = known(operation.from, "from")?;
            let to = known(operation.to, "to")?;
            let link = operation.link.ok_or("it names no `link`")?;
            let kind =
                LinkKind::parse(&link).ok_or_else(|| format!("`{link}` is not a link (relates_to, contradicts, extends, derived_from)"))?;
            if from == to {
                return Err(format!("`{from}` cannot link to itself"));
            }
            Ok(Some(Op::Link(from, kind, to)))
        }
        "update" => {
            let file = known(operation.file.clone(), "file")?;
            let change = operation.change(&file)?;
            Ok(Some(Op::Update(file, change)))
        }
        other => Err(format!("`{other}` is not an operation (merge, supersede, update, add, archive, link, noop)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> ConsolidationPlan {
        ConsolidationPlan {
            id: "consolidation-1".into(),
            prompt: String::new(),
            max_tokens: ANSWER_TOKENS,
            known: alloc::vec!["a".into(), "b".into(), "c".into()],
            sessions: Vec::new(),
            since_ms: None,
        }
    }

    #[test]
    fn every_operation_reads() {
        let answer = "```\n{\"op\":\"merge\",\"files\":[\"a\",\"b\"],\"name\":\"AB\",\"type\":\"project\",\"body\":\"both\",\"reason\":\"same fact\"}\n{\"op\":\"archive\",\"file\":\"c\"}\n{\"op\":\"link\",\"from\":\"a\",\"link\":\"relates_to\",\"to\":\"c\"}\n{\"op\":\"add\",\"name\":\"N\",\"type\":\"user\",\"body\":\"n\"}\n{\"op\":\"noop\"}\n```";
        let ops = read_answer(answer, &plan()).unwrap();
        assert_eq!(ops.len(), 4);
        assert!(
            matches!(&ops[0], Proposed { line: 2, op: Op::Replace(files, _), reason: Some(reason) } if files.len() == 2 && reason == "same fact")
        );
    }

    #[test]
    fn a_bad_line_names_itself() {
        for (answer, line) in [
            ("{\"op\":\"noop\"}\nok", 2),
            ("{\"op\":\"merge\",\"files\":[\"a\"],\"name\":\"x\",\"type\":\"user\",\"body\":\"b\"}", 1),
            ("{\"op\":\"merge\",\"files\":[\"a\",\"z\"],\"name\":\"x\",\"type\":\"user\",\"body\":\"b\"}", 1),
            ("{\"op\":\"archive\",\"file\":\"a\"}\n{\"op\":\"update\",\"file\":\"a\",\"body\":\"b\"}", 2),
            ("{\"op\":\"link\",\"from\":\"a\",\"link\":\"likes\",\"to\":\"b\"}", 1),
            ("{\"op\":\"link\",\"from\":\"a\",\"link\":\"extends\",\"to\":\"a\"}", 1),
            ("{\"op\":\"delete\",\"file\":\"a\"}", 1),
            ("{\"op\":\"add\",\"name\":\"x\",\"type\":\"user\"}", 1),
            ("", 1),
        ] {
            match read_answer(answer, &plan()) {
                Err(Error::InvalidAnswer { line: got, .. }) => assert_eq!(got, line, "{answer}"),
                _ => panic!("{answer} was accepted"),
            }
        }
    }

    #[test]
    fn shorten_cuts_on_characters() {
        assert_eq!(shorten("héllo wörld", 5), "héllo…");
        assert_eq!(shorten("short", 10), "short");
    }
}
