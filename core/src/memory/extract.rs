//! Memory extraction, the way compaction runs: the core plans a prompt over the
//! conversation since the last extraction, listing the memories that exist so the model
//! updates instead of duplicating; the host runs its model; the core reads the answer
//! (one JSON object per line: `add`, `update`, `supersede` or `noop`), checks all of it
//! before writing any of it, writes the memories with their provenance (the session and
//! its newest entry), and records the extraction. An answer that does not read is an
//! [`Error::InvalidAnswer`] and writes nothing; the host records the failure
//! ([`Memories::record_extraction_failure`]) and the next plan counts it.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::Memories;
use super::answer::{self, Operation};
use super::file::{Memory, MemoryType};
use super::store::{Change, Filter, NewMemory, Scope};
use crate::error::Error;
use crate::storage::Storage;

/// How much of the conversation a prompt carries, newest kept (characters).
const CONVERSATION_CHARS: usize = 48_000;
/// How many existing memories a prompt lists, newest first.
const KNOWN_MEMORIES: usize = 200;
/// What the model may write: an answer of this many tokens at most.
const ANSWER_TOKENS: u64 = 4_000;

/// What to ask the model, and what the answer will be checked against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractionPlan {
    /// The session the conversation is from.
    pub id: String,
    /// The whole request: instructions, the memories that exist, the conversation.
    pub prompt: String,
    pub max_tokens: u64,
    /// Messages the prompt covers (0: nothing to extract from).
    pub message_count: u32,
    /// The newest of them: each memory written records it as its `entry`.
    pub entry: Option<String>,
    /// Memory files the prompt lists: what `update` and `supersede` may name.
    pub known: Vec<String>,
    /// Extraction failures recorded since the last extraction.
    pub failures: u32,
}

/// What an extraction wrote.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Extracted {
    pub added: Vec<Memory>,
    pub updated: Vec<Memory>,
    /// Memories replaced by a new one (kept, marked superseded); the new ones are in `added`.
    pub superseded: Vec<String>,
}

/// A checked operation.
enum Step {
    Add(NewMemory),
    Update(String, Change),
    Supersede(String, NewMemory),
}

impl<S: Storage> Memories<'_, S> {
    /// Records that an extraction from session `id` failed (an `extraction-failure`
    /// entry with the reason); the next plan counts it.
    pub async fn record_extraction_failure(&self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        self.sessions.record_marker(id, crate::format::Marker::ExtractionFailure, Some(reason), now_ms).await
    }

    /// The extraction request for session `id` into `scope`'s memory.
    pub async fn plan_extraction(&self, scope: &Scope, id: &str) -> Result<ExtractionPlan, Error> {
        let since = self.sessions.since_extraction(id).await?;
        let mut known = self.memory_list(scope, &Filter::default()).await?;
        known.truncate(KNOWN_MEMORIES);
        let mut prompt = String::from(INSTRUCTIONS);
        prompt.push_str("\nThe memories that exist (file: name — description):\n");
        if known.is_empty() {
            prompt.push_str("(none yet)\n");
        }
        for memory in &known {
            let kind = memory.type_.map_or("", MemoryType::as_str);
            prompt.push_str(&format!("- {}: {} — {} [{kind}]\n", memory.file, memory.name, memory.description));
        }
        prompt.push_str("\nThe conversation:\n");
        prompt.push_str(&conversation(&since.messages));
        Ok(ExtractionPlan {
            id: id.to_string(),
            prompt,
            max_tokens: ANSWER_TOKENS,
            message_count: u32::try_from(since.messages.len()).unwrap_or(u32::MAX),
            entry: since.entry,
            known: known.into_iter().map(|m| m.file).collect(),
            failures: since.failures,
        })
    }

    /// Writes what the model's `answer` to `plan` says, then records the extraction.
    /// Every line is checked first: one that does not read writes nothing.
    pub async fn apply_extraction(&self, scope: &Scope, plan: &ExtractionPlan, answer: &str, now_ms: i64) -> Result<Extracted, Error> {
        let steps = read_answer(answer, plan)?;
        // A superseded memory is history: neither superseded again nor updated, whether
        // another writer or an earlier line of this answer superseded it.
        let mut superseded_here: Vec<&str> = Vec::new();
        for (line, step) in &steps {
            let reason = match step {
                Step::Update(file, _) | Step::Supersede(file, _) => {
                    let verb = if matches!(step, Step::Supersede(..)) { "supersede" } else { "update" };
                    if superseded_here.contains(&file.as_str()) {
                        Some(format!("memory `{file}` is superseded by an earlier line of this answer: {verb} the memory that line writes"))
                    } else {
                        match self.memory_get(scope, file).await {
                            Err(Error::MemoryNotFound { .. }) => Some(format!("memory `{file}` no longer exists")),
                            Ok(memory) => memory
                                .superseded_by
                                .map(|successor| format!("memory `{file}` is superseded by `{successor}` already: {verb} that one")),
                            Err(_) => None,
                        }
                    }
                }
                Step::Add(_) => None,
            };
            if let Step::Supersede(file, _) = step {
                superseded_here.push(file);
            }
            if let Some(reason) = reason {
                return Err(Error::InvalidAnswer { line: *line, reason });
            }
        }
        let mut extracted = Extracted { added: Vec::new(), updated: Vec::new(), superseded: Vec::new() };
        let additions: Vec<NewMemory> =
            steps.iter().filter_map(|(_, s)| if let Step::Add(m) = s { Some(m.clone()) } else { None }).collect();
        if !additions.is_empty() {
            extracted.added = self.memory_add_many(scope, additions, now_ms).await?;
        }
        for (_, step) in steps {
            match step {
                Step::Add(_) => {}
                Step::Update(file, change) => extracted.updated.push(self.memory_update(scope, &file, change, now_ms).await?),
                Step::Supersede(file, memory) => {
                    extracted.added.push(self.memory_supersede(scope, &file, memory, now_ms).await?);
                    extracted.superseded.push(file);
                }
            }
        }
        self.sessions.gates().record_extraction(&plan.id, now_ms).await?;
        Ok(extracted)
    }
}

const INSTRUCTIONS: &str = "You keep an agent's long-term memory, in Claude Code's memory format. From the \
conversation below, write down only what will still matter in a later session and what the conversation \
itself states — never a guess:
- user: who the user is (role, expertise, preferences);
- feedback: how the user wants the work done (corrections, confirmations);
- project: facts about the work (decisions, deadlines, who does what);
- reference: where things are (URLs, paths, systems).
Prefer changing an existing memory to adding a near-duplicate. When a fact changed, supersede the memory \
that states the old one (it is kept as history).

Answer with JSON objects, one per line, and nothing else:
{\"op\":\"add\",\"name\":\"short title\",\"type\":\"user|feedback|project|reference\",\"description\":\"one line\",\"body\":\"the memory\",\"confidence\":0.9}
{\"op\":\"update\",\"file\":\"existing_file\",\"description\":\"…\",\"body\":\"…\"}
{\"op\":\"supersede\",\"file\":\"existing_file\",\"name\":\"…\",\"type\":\"…\",\"description\":\"…\",\"body\":\"the fact as it is now\"}
{\"op\":\"noop\"} when nothing is worth keeping.
";

/// The messages as `role: text` blocks, the oldest dropped first to fit.
fn conversation(messages: &[(String, String)]) -> String {
    let mut blocks: Vec<String> = Vec::new();
    let mut total = 0usize;
    let mut cut = false;
    for (role, text) in messages.iter().rev() {
        let block = format!("{role}: {}\n", text.trim());
        if total + block.len() > CONVERSATION_CHARS && !blocks.is_empty() {
            cut = true;
            break;
        }
        total += block.len();
        blocks.push(block);
    }
    blocks.reverse();
    let mut out = String::new();
    if cut {
        out.push_str("(earlier messages left out)\n");
    }
    if blocks.is_empty() {
        out.push_str("(no messages)\n");
    }
    for block in blocks {
        out.push_str(&block);
    }
    out
}

/// The answer's operations, each checked, with its line number.
fn read_answer(answer: &str, plan: &ExtractionPlan) -> Result<Vec<(u32, Step)>, Error> {
    answer::read(answer, |operation| check(operation, plan))
}

fn check(operation: Operation, plan: &ExtractionPlan) -> Result<Option<Step>, String> {
    let from_session = |mut memory: NewMemory| {
        memory.session = Some(plan.id.clone());
        memory.entry = plan.entry.clone();
        memory
    };
    if operation.files.is_some() || operation.from.is_some() || operation.to.is_some() || operation.link.is_some() {
        return Err(String::from("`files`, `from`, `to` and `link` are consolidation's fields, not an extraction's"));
    }
    match operation.op.as_str() {
        "noop" => Ok(None),
        "add" => Ok(Some(Step::Add(from_session(operation.new_memory()?)))),
        "supersede" => {
            let file = answer::known(operation.file.clone(), "file", &plan.known)?;
            Ok(Some(Step::Supersede(file, from_session(operation.new_memory()?))))
        }
        "update" => {
            let file = answer::known(operation.file.clone(), "file", &plan.known)?;
            let change = operation.change(&file)?;
            Ok(Some(Step::Update(file, change)))
        }
        other => Err(format!("`{other}` is not an operation (add, update, supersede, noop)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> ExtractionPlan {
        ExtractionPlan {
            id: "s".into(),
            prompt: String::new(),
            max_tokens: ANSWER_TOKENS,
            message_count: 2,
            entry: Some("e".into()),
            known: alloc::vec!["deploy".into()],
            failures: 0,
        }
    }

    #[test]
    fn answers_are_read_line_by_line_and_fences_are_ignored() {
        let answer = "```json\n{\"op\":\"add\",\"name\":\"Editor\",\"type\":\"user\",\"body\":\"Helix\"}\n\n{\"op\":\"noop\"}\n{\"op\":\"update\",\"file\":\"deploy\",\"body\":\"Fridays\"}\n```";
        let steps = read_answer(answer, &plan()).unwrap();
        assert_eq!(steps.len(), 2);
        assert!(matches!(&steps[0], (2, Step::Add(m)) if m.session.as_deref() == Some("s") && m.entry.as_deref() == Some("e")));
    }

    #[test]
    fn a_bad_line_names_itself() {
        for (answer, line) in [
            ("{\"op\":\"noop\"}\nsure, here you go", 2),
            ("{\"op\":\"add\",\"name\":\"x\",\"type\":\"person\",\"body\":\"b\"}", 1),
            ("{\"op\":\"update\",\"file\":\"other\",\"body\":\"b\"}", 1),
            ("{\"op\":\"update\",\"file\":\"deploy\"}", 1),
            ("{\"op\":\"add\",\"name\":\"x\",\"type\":\"user\",\"body\":\"b\",\"confidence\":3}", 1),
            ("{\"op\":\"delete\",\"file\":\"deploy\"}", 1),
            ("{\"op\":\"noop\"}\n{\"op\":\"add\",\"name\":\"x\",\"type\":\"user\",\"body\":\"b\",\"files\":[\"deploy\"]}", 2),
            ("\n\n", 1),
        ] {
            match read_answer(answer, &plan()) {
                Err(Error::InvalidAnswer { line: got, .. }) => assert_eq!(got, line, "{answer}"),
                _ => panic!("{answer} was accepted"),
            }
        }
    }

    #[test]
    fn a_long_conversation_keeps_its_newest_messages() {
        let messages: Vec<(String, String)> =
            (0..2000).map(|i| (String::from("user"), format!("message {i} {}", "x".repeat(40)))).collect();
        let text = conversation(&messages);
        assert!(text.starts_with("(earlier messages left out)"));
        assert!(text.contains("message 1999") && !text.contains("message 0 "));
        assert!(text.len() <= CONVERSATION_CHARS + 100);
    }
}
