//! `mneme memory …`: long-term memory in Claude Code's memdir layout
//! (`projects/<project>/memory/`), and `mneme memory instructions` (CLAUDE.md files).
//!
//! The memory operations run on the engine `--engine` names (the component by default),
//! through the WIT `memory` interface; `--json` prints the values every host's API
//! returns. `instructions` reads the real filesystem, so it runs the core natively.

use std::io::{BufRead, IsTerminal, Read};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use mneme_host::core::Window;
use mneme_host::core::gates::DreamSettings;
use mneme_host::core::memory::consolidate::{Step, StepKind};
use mneme_host::core::memory::file::{LinkKind, Links, Memory, MemoryType};
use mneme_host::core::memory::instructions::{self, Instructions, Request};
use mneme_host::core::memory::memory_md::{Caps, hook};
use mneme_host::core::memory::store::{Change, Filter, MemoryIndexReport, Near, NewMemory, Recalled, Scope};
use mneme_host::core::storage::StorageError;
use mneme_host::core::{block_on, keys, time};
use mneme_host::embedder::Embedder;
use mneme_host::summarize::Summarizer;
use mneme_host::{Engine, Error};
use serde::{Deserialize, Serialize};
use serde_json::json;

type CliResult = Result<(), String>;

#[derive(Args)]
#[command(next_help_heading = "Memory scope (every memory command)")]
pub struct MemoryArgs {
    /// The project whose memory to use: its folder name under projects/ (as Claude Code
    /// names it, e.g. -home-me-app), or its working directory (a path, e.g. ./app)
    /// [default: the project of --cwd]
    #[arg(long, global = true, value_name = "PROJECT", conflicts_with = "global", allow_hyphen_values = true, value_parser = crate::project_arg)]
    project: Option<String>,
    /// Use the global memory (memory/ at the store's root) instead of a project's
    #[arg(long, global = true)]
    global: bool,
    /// The working directory whose project to use [default: the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    cwd: Option<PathBuf>,
    #[command(subcommand)]
    command: MemoryCommand,
}

impl MemoryArgs {
    /// Whether the command asks a model before it writes: refused up front on a store
    /// only read, or the model's answer would be paid for and thrown away.
    pub fn asks_a_model_to_write(&self) -> bool {
        matches!(self.command, MemoryCommand::Extract { dry_run: false, .. })
    }
}

#[derive(Subcommand)]
enum MemoryCommand {
    /// List memories, newest first (current ones; --all adds superseded and archived)
    List {
        /// Only this type
        #[arg(long = "type", value_name = "TYPE", value_enum)]
        type_: Option<TypeArg>,
        /// Only memories with this topic
        #[arg(long)]
        topic: Option<String>,
        /// Only memories that came from this session
        #[arg(long)]
        session: Option<String>,
        /// Superseded and archived memories too
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        window: crate::WindowArgs,
        #[arg(long)]
        json: bool,
    },
    /// Show a memory (by file name, without .md) and the chain of memories it
    /// superseded or that superseded it
    Show {
        /// The memory: its file (as `list` shows it, with or without .md) or its name
        file: String,
        #[arg(long)]
        json: bool,
    },
    /// Write a new memory: its file, its line in MEMORY.md, its index entry
    Add {
        #[command(flatten)]
        memory: NewMemoryArgs,
        #[arg(long)]
        json: bool,
    },
    /// Change fields of a memory in place (use supersede when the fact itself changed)
    Update {
        /// The memory's file, without .md (as `list` shows it)
        file: String,
        /// The new name (the file keeps its own)
        #[arg(long)]
        name: Option<String>,
        #[arg(long = "type", value_name = "TYPE", value_enum)]
        type_: Option<TypeArg>,
        /// The new one-line description: MEMORY.md's hook, which recall reads
        #[arg(long)]
        description: Option<String>,
        /// The new body; `-` reads it from stdin
        #[arg(long)]
        body: Option<String>,
        /// Replaces the topics (repeat the flag for several)
        #[arg(long = "topic")]
        topics: Vec<String>,
        /// How sure the fact is, from 0 to 1
        #[arg(long)]
        confidence: Option<f64>,
        #[arg(long)]
        json: bool,
    },
    /// Replace a memory with a new one. The old one is kept, marked invalid_at and
    /// superseded_by, and leaves MEMORY.md and recall (recall --all still finds it)
    Supersede {
        /// The memory that is no longer true
        file: String,
        #[command(flatten)]
        memory: NewMemoryArgs,
        #[arg(long)]
        json: bool,
    },
    /// Archive a memory: out of MEMORY.md and recall, kept on disk, listed with --all
    Forget {
        /// The memory's file, without .md (as `list` shows it)
        file: String,
    },
    /// Record how one memory relates to another
    Link {
        /// The memory the link is recorded on, without .md
        from: String,
        #[arg(value_enum)]
        kind: LinkArg,
        /// The memory it names, without .md
        to: String,
    },
    /// Find memories by meaning-bearing words (BM25 with stemming, expanded through
    /// sessions, links and topics), best first
    Recall {
        /// What to look for [required unless --queries]
        #[arg(required_unless_present = "queries")]
        query: Option<String>,
        /// A JSONL file of {"query": …} lines: prints one JSON array per line, in order
        #[arg(long, value_name = "FILE", conflicts_with = "query")]
        queries: Option<PathBuf>,
        /// How many memories to return (1 or more)
        #[arg(long, default_value_t = 10, value_parser = crate::at_least_one, allow_negative_numbers = true)]
        limit: usize,
        /// Superseded and archived memories too
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        window: crate::WindowArgs,
        /// Print a JSON array of {name, file, score, description, type, current, matched}
        #[arg(long)]
        json: bool,
        /// A static embedding table to rank by meaning as well as by words: the text form
        /// GloVe, word2vec and fastText publish (a word per line, then its values)
        #[arg(long, value_name = "FILE", env = "MNEME_EMBEDDINGS", conflicts_with = "embedder_url")]
        embeddings: Option<PathBuf>,
        #[command(flatten)]
        embedder: EmbedderFlags,
    },
    /// Record that memories were useful now (a host put them in a model's context, or the
    /// model cited them): `load` keeps the most recently useful first under the caps.
    /// `updated` stays as it was
    Used {
        /// The memories' files (stems, as `list` shows them)
        #[arg(required = true)]
        files: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Import memories from a JSONL file (`-` for stdin), one per line: name, type,
    /// description, body, and optionally time (RFC 3339), session, topics
    Import {
        /// The JSONL file, or `-` for standard input
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Print MEMORY.md as a model should load it: within Claude Code's caps, leaving
    /// out the least recently useful first (used, see `used`, or updated), and saying
    /// what was left out; a line of an archived or superseded memory never loads
    Load {
        /// Lines Claude Code loads
        #[arg(long, default_value_t = 200)]
        lines: usize,
        /// UTF-16 units Claude Code loads
        #[arg(long, default_value_t = 25_000)]
        chars: usize,
    },
    /// Rebuild the recall index from the memory files
    Reindex,
    /// Extract memories from a session's conversation since its last extraction: the
    /// core plans a prompt (listing the memories that exist), a model answers with
    /// add/update/supersede operations, the core checks every line before writing any,
    /// and records the extraction. The offline default extracts nothing (it cannot
    /// justify a memory without a model); a failure is recorded and counted
    Extract {
        /// The session
        id: String,
        #[command(flatten)]
        model: crate::SummarizerFlags,
        /// Print the prompt and the model's answer; write nothing
        #[arg(long)]
        dry_run: bool,
        /// Print what was written as JSON ({added, updated, superseded})
        #[arg(long)]
        json: bool,
    },
    /// Consolidate the memory, as Claude Code's auto-dream does (orient, gather,
    /// consolidate, prune): a model reads every memory and what the user said in the
    /// sessions since the last consolidation, and proposes merges, supersessions,
    /// updates, additions, archives and links; the core checks the whole answer,
    /// records it (`mneme memory rollback ID` undoes it) and writes it. Nothing is
    /// deleted. Holds the store's consolidation lock while it runs; the offline default
    /// changes nothing
    Consolidate {
        #[command(flatten)]
        model: crate::SummarizerFlags,
        /// Print what would change; write nothing
        #[arg(long)]
        dry_run: bool,
        /// Only when the gates say it is due (24 h and 5 sessions since the last one)
        #[arg(long)]
        if_due: bool,
        /// Print the consolidation as JSON ({id, at_ms, sessions, steps, applied, rolled_back_ms})
        #[arg(long)]
        json: bool,
    },
    /// Undo a consolidation: every memory it changed gets its text back, each one it
    /// added is archived. Refuses, changing nothing, when a memory changed since
    Rollback {
        /// The consolidation (see `mneme memory consolidations`)
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// The consolidations recorded, oldest first, with what each changed
    Consolidations {
        #[arg(long)]
        json: bool,
    },
    /// Print the instructions (CLAUDE.md files, rules, @imports) Claude Code would load
    /// for --cwd, in its order, and which files were loaded or skipped and why. Reads
    /// the real filesystem, not the store
    Instructions {
        /// Files the agent is working on, for rules with `paths:`
        #[arg(long = "path")]
        paths: Vec<String>,
        /// The home folder for ~/.claude [default: $HOME]
        #[arg(long, value_name = "DIR")]
        home: Option<PathBuf>,
        /// The managed policy file [default: /etc/claude-code/CLAUDE.md]
        #[arg(long, value_name = "FILE")]
        managed: Option<PathBuf>,
        /// Load the imports outside --cwd that a managed, project or local file makes
        /// (Claude Code asks before loading them; without this they are listed as skipped)
        #[arg(long)]
        external_imports: bool,
        /// Print {text, files: [{path, kind, imported_by, external, loaded, reason}]}
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct NewMemoryArgs {
    /// A short title; the file is named after it
    #[arg(long)]
    name: String,
    #[arg(long = "type", value_name = "TYPE", value_enum)]
    type_: TypeArg,
    /// One line saying what it is about (the MEMORY.md hook)
    #[arg(long, default_value = "")]
    description: String,
    /// The memory's text; `-` reads it from stdin
    #[arg(long, default_value = "")]
    body: String,
    /// A topic (repeat the flag for several)
    #[arg(long = "topic")]
    topics: Vec<String>,
    /// 0 to 1
    #[arg(long)]
    confidence: Option<f64>,
    /// The session it came from
    #[arg(long)]
    session: Option<String>,
    /// The entry (uuid) of that session it came from
    #[arg(long)]
    entry: Option<String>,
    /// When it became true (RFC 3339) [default: now]
    #[arg(long, value_name = "TIME")]
    valid_from: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum TypeArg {
    User,
    Feedback,
    Project,
    Reference,
}

impl From<TypeArg> for MemoryType {
    fn from(type_: TypeArg) -> MemoryType {
        match type_ {
            TypeArg::User => MemoryType::User,
            TypeArg::Feedback => MemoryType::Feedback,
            TypeArg::Project => MemoryType::Project,
            TypeArg::Reference => MemoryType::Reference,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum LinkArg {
    RelatesTo,
    Contradicts,
    Extends,
    DerivedFrom,
}

impl From<LinkArg> for LinkKind {
    fn from(kind: LinkArg) -> LinkKind {
        match kind {
            LinkArg::RelatesTo => LinkKind::RelatesTo,
            LinkArg::Contradicts => LinkKind::Contradicts,
            LinkArg::Extends => LinkKind::Extends,
            LinkArg::DerivedFrom => LinkKind::DerivedFrom,
        }
    }
}

/// Runs a memory command on `engine`, opened on demand: `instructions` needs none.
pub fn run(open: impl FnOnce() -> Result<Box<dyn Engine<Error>>, String>, args: MemoryArgs, now_ms: i64) -> CliResult {
    let cwd = crate::working_dir(args.cwd.clone())?;
    let named_scope = match (&args.project, args.global) {
        (_, true) => Some(Scope::Global),
        (Some(project), false) => Some(Scope::Project(project.clone())),
        (None, false) => None,
    };
    let scope = named_scope.clone().unwrap_or_else(|| Scope::Project(keys::project_dir_name(&cwd.to_string_lossy())));
    if let MemoryCommand::Instructions { paths, home, managed, external_imports, json } = args.command {
        return print_instructions(&cwd, home, managed, paths, external_imports, json);
    }
    let mut engine = open()?;
    let store = engine.as_mut();
    let fail = |e: Error| e.to_string();
    match args.command {
        MemoryCommand::List { type_, topic, session, all, window, json } => {
            let filter = Filter { type_: type_.map(MemoryType::from), topic, session, all, window: Some(window.window()) };
            let memories = store.memory_list(&scope, &filter).map_err(fail)?;
            if json {
                return print_json(&without_bodies(&memories)?);
            }
            if memories.is_empty() {
                println!("no memories in {} (add one with `mneme memory add`)", scope.label());
            }
            for memory in &memories {
                let state = if memory.is_current() { "" } else { " (not current)" };
                let kind = memory.type_.map_or("-", MemoryType::as_str);
                println!("{:<32} {:<9} {}{}", memory.file, kind, crate::shown(&hook(&memory.description)), state);
            }
            Ok(())
        }
        MemoryCommand::Show { file, json } => {
            let file = memory_file(store, &scope, &file)?;
            let shown = store.memory_show(&scope, &file).map_err(fail)?;
            if json {
                return print_json(&shown);
            }
            print!("{}", crate::shown(&shown.memory.render()));
            if shown.history.len() > 1 {
                println!("\nhistory (oldest first):");
                for memory in &shown.history {
                    let mark = if memory.file == shown.memory.file { "*" } else { " " };
                    let until = memory.invalid_at_ms.map(|ms| format!(" until {}", time::format_millis(ms))).unwrap_or_default();
                    println!("{mark} {}{until}: {}", memory.file, crate::shown(&hook(&memory.description)));
                }
            }
            Ok(())
        }
        MemoryCommand::Add { memory, json } => {
            let written = store.memory_add(&scope, memory.into_new()?, now_ms).map_err(fail)?;
            print_written("added", &written, json)
        }
        MemoryCommand::Update { file, name, type_, description, body, topics, confidence, json } => {
            let body = body.map(|body| read_body(&body)).transpose()?;
            let topics = (!topics.is_empty()).then_some(topics);
            let change = Change { name, type_: type_.map(MemoryType::from), description, body, topics, confidence };
            let file = memory_file(store, &scope, &file)?;
            let written = store.memory_update(&scope, &file, change, now_ms).map_err(fail)?;
            print_written("updated", &written, json)
        }
        MemoryCommand::Supersede { file, memory, json } => {
            let file = memory_file(store, &scope, &file)?;
            let written = store.memory_supersede(&scope, &file, memory.into_new()?, now_ms).map_err(fail)?;
            if !json {
                println!("{file} is superseded (kept, marked invalid_at and superseded_by)");
            }
            print_written("added", &written, json)
        }
        MemoryCommand::Forget { file } => {
            let file = memory_file(store, &scope, &file)?;
            let forgotten = store.memory_forget(&scope, &file, now_ms).map_err(fail)?;
            match forgotten.archived_ms.filter(|&at| at != now_ms) {
                Some(at) => println!("{file} was archived already, at {}", time::format_millis(at)),
                None => println!("archived {file}: out of MEMORY.md and recall, kept on disk (`mneme memory list --all` shows it)"),
            }
            Ok(())
        }
        MemoryCommand::Link { from, kind, to } => {
            let (from, to) = (memory_file(store, &scope, &from)?, memory_file(store, &scope, &to)?);
            let kind = LinkKind::from(kind);
            store.memory_link(&scope, &from, kind, &to, now_ms).map_err(fail)?;
            println!("{from} {} {to}", kind.as_str());
            Ok(())
        }
        MemoryCommand::Recall { query, queries, limit, all, window, json, embeddings, embedder } => {
            crate::use_embeddings(store, embeddings.as_deref())?;
            let window = window.window();
            let embedder = embedder.embedder()?;
            match (query, queries) {
                (Some(query), _) => {
                    let near = near(store, &scope, &query, embedder.as_ref())?;
                    let recalled = store.memory_recall(&scope, &query, limit, all, window, near.as_ref()).map_err(fail)?;
                    print_recalled(&recalled, json)
                }
                (None, Some(path)) => recall_many(store, &scope, &path, limit, all, window, embedder.as_ref()),
                (None, None) => Err("give a query, or --queries FILE".to_owned()),
            }
        }
        MemoryCommand::Import { file, json } => import(store, &scope, &file, now_ms, json),
        MemoryCommand::Load { lines, chars } => {
            let loaded = store.memory_load(&scope, Caps { lines, units: chars }).map_err(fail)?;
            print!("{}", crate::shown(&loaded.text));
            Ok(())
        }
        MemoryCommand::Used { files, json } => {
            let used = store.memory_used(&scope, &files, now_ms).map_err(fail)?;
            if json {
                return print_json(&without_bodies(&used)?);
            }
            for memory in &used {
                println!("{}: used {}", memory.file, memory.used_ms.map_or_else(String::new, time::format_millis));
            }
            Ok(())
        }
        MemoryCommand::Reindex => {
            let report = store.memory_reindex(&scope).map_err(fail)?;
            println!("indexed {} memories of {}", report.files.len(), scope.label());
            Ok(())
        }
        MemoryCommand::Extract { id, model, dry_run, json } => {
            // Without --project or --global, memories go to the session's own project.
            let scope = match named_scope {
                Some(scope) => scope,
                None => Scope::Project(store.load(&id).map_err(fail)?.project),
            };
            extract(store, &scope, &id, &model, dry_run, json, now_ms)
        }
        MemoryCommand::Consolidate { model, dry_run, if_due, json } => {
            consolidate(store, &scope, &model, Consolidate { dry_run, if_due, json }, now_ms)
        }
        MemoryCommand::Rollback { id, json } => {
            let undone = store.rollback_consolidation(&scope, &id, now_ms).map_err(fail)?;
            if json {
                return print_json(&undone);
            }
            let files = |added: bool| {
                let mut files: Vec<&str> =
                    undone.steps.iter().filter(|s| (s.kind == StepKind::Added) == added).map(|s| s.file.as_str()).collect();
                files.sort_unstable();
                files.dedup();
                files.join(", ")
            };
            println!("rolled back {id}: back as they were before it: {}", files(false));
            println!("archived (added by it, kept): {}", files(true));
            Ok(())
        }
        MemoryCommand::Consolidations { json } => {
            let all = store.consolidations(&scope).map_err(fail)?;
            if json {
                return print_json(&all);
            }
            if all.is_empty() {
                println!("no consolidations in {} (run one with `mneme memory consolidate`)", scope.label());
            }
            for consolidation in &all {
                let state =
                    consolidation.rolled_back_ms.map_or_else(String::new, |at| format!(", rolled back {}", time::format_millis(at)));
                println!(
                    "{}  {}  {} changes from {} sessions{state}",
                    consolidation.id,
                    time::format_millis(consolidation.at_ms),
                    consolidation.steps.len(),
                    consolidation.sessions.len()
                );
                print_steps(&consolidation.steps);
            }
            Ok(())
        }
        // Answered above, without an engine.
        MemoryCommand::Instructions { .. } => Ok(()),
    }
}

impl NewMemoryArgs {
    fn into_new(self) -> Result<NewMemory, String> {
        let valid_from_ms = self.valid_from.as_deref().map(parse_time).transpose()?;
        Ok(NewMemory {
            name: self.name,
            type_: self.type_.into(),
            description: self.description,
            body: read_body(&self.body)?,
            topics: self.topics,
            links: Links::default(),
            confidence: self.confidence,
            session: self.session,
            entry: self.entry,
            valid_from_ms,
        })
    }
}

fn parse_time(text: &str) -> Result<i64, String> {
    time::parse_millis(text).ok_or_else(|| format!("`{text}` is not an RFC 3339 time such as 2026-11-22T10:00:00Z"))
}

fn read_body(body: &str) -> Result<String, String> {
    if body != "-" {
        return Ok(body.to_owned());
    }
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| format!("cannot read the body from stdin: {e}"))?;
    Ok(text)
}

fn print_written(verb: &str, memory: &Memory, json: bool) -> CliResult {
    if json {
        return print_json(memory);
    }
    println!("{verb} {} ({}.md){}", crate::shown(&memory.name), memory.file, crate::redaction_note(&memory.redacted));
    Ok(())
}

/// Memories as a listing has them: without the body, which a listing does not read
/// (an empty one would read as a blank memory); `memory show` gives it.
fn without_bodies(memories: &[Memory]) -> Result<Vec<serde_json::Value>, String> {
    memories
        .iter()
        .map(|memory| {
            let mut value = serde_json::to_value(memory).map_err(|e| e.to_string())?;
            if let Some(fields) = value.as_object_mut() {
                fields.remove("body");
            }
            Ok(value)
        })
        .collect()
}

fn print_json(value: &impl Serialize) -> CliResult {
    println!("{}", serde_json::to_string(value).map_err(|e| e.to_string())?);
    Ok(())
}

fn report_to_stderr(report: &Option<MemoryIndexReport>) {
    if let Some(report) = report {
        eprintln!("mneme: the recall index was brought up to date ({}): {} memories indexed again", report.reason, report.files.len());
    }
}

/// The file of the memory `given` names: its file (`db_choice`, or `db_choice.md`), or
/// its name as it was added (`"db choice"`, in any case), a current memory's before a
/// superseded or archived one's. A name several memories share is refused with their
/// files.
fn memory_file(store: &mut dyn Engine<Error>, scope: &Scope, given: &str) -> Result<String, String> {
    let file = given.strip_suffix(".md").unwrap_or(given);
    let every = store.memory_list(scope, &Filter { all: true, ..Filter::default() }).map_err(|e| e.to_string())?;
    if every.iter().any(|memory| memory.file == file) {
        return Ok(file.to_owned());
    }
    let named = |current: bool| -> Vec<String> {
        let mut files: Vec<String> = every
            .iter()
            .filter(|memory| (!current || memory.is_current()) && memory.name.to_lowercase() == given.to_lowercase())
            .map(|memory| memory.file.clone())
            .collect();
        files.sort();
        files
    };
    let current = named(true);
    let files = if current.is_empty() { named(false) } else { current };
    match files.as_slice() {
        [file] => Ok(file.clone()),
        [] => Err(format!("no memory `{given}` in {}: give its file or its name as `mneme memory list` shows them", scope.label())),
        files => Err(format!("{} memories are named `{given}`: give one of their files ({})", files.len(), files.join(", "))),
    }
}

fn print_recalled(recalled: &Recalled, json: bool) -> CliResult {
    report_to_stderr(&recalled.report);
    if json {
        return print_json(&recalled.hits);
    }
    if recalled.hits.is_empty() {
        println!("no memory matches (words are matched by stem; stopwords are ignored)");
    }
    for hit in &recalled.hits {
        let state = if hit.current { "" } else { " (not current)" };
        let context = if hit.matched { "" } else { " (context)" };
        println!("{:>7.3}  {:<32} {}{state}{context}", hit.score, hit.file, crate::shown(&hook(&hit.description)));
    }
    Ok(())
}

#[derive(Deserialize)]
struct QueryLine {
    query: String,
}

/// The host's embedder, for `memory recall`: an OpenAI-compatible `/embeddings` API.
#[derive(clap::Args)]
pub struct EmbedderFlags {
    /// Rank by meaning too, with vectors from this OpenAI-compatible API's /embeddings
    /// (https://api.openai.com/v1, Ollama's http://127.0.0.1:11434/v1, vLLM, llama.cpp).
    /// Memories without a vector of the model are embedded first; the vectors are kept
    /// beside the recall index (memory/.mneme/vectors.jsonl) and reused
    #[arg(long, env = "MNEME_EMBEDDER_URL", value_name = "URL")]
    embedder_url: Option<String>,
    /// The embedding model
    #[arg(long, env = "MNEME_EMBEDDER_MODEL", value_name = "NAME", default_value = "text-embedding-3-small", requires = "embedder_url")]
    embedder_model: String,
    /// The environment variable holding the embedder's API key [default: OPENAI_API_KEY]
    #[arg(long, value_name = "VAR", requires = "embedder_url")]
    embedder_key_env: Option<String>,
}

impl EmbedderFlags {
    /// The embedder asked for (see [`crate::api_key`] for its key).
    fn embedder(&self) -> Result<Option<Embedder>, String> {
        let Some(base_url) = self.embedder_url.clone() else { return Ok(None) };
        let named = ("--embedder-key-env", self.embedder_key_env.as_deref());
        let api_key = crate::api_key(named, "OPENAI_API_KEY", &base_url, "api.openai.com")?;
        Ok(Some(Embedder { base_url, model: self.embedder_model.clone(), api_key }))
    }
}

/// The query's vector from `embedder`, the scope's memories embedded first (saying so
/// on standard error when there are any: a large memory takes a while).
fn near(store: &mut dyn Engine<Error>, scope: &Scope, query: &str, embedder: Option<&Embedder>) -> Result<Option<Near>, String> {
    let Some(embedder) = embedder else { return Ok(None) };
    let near = embedder
        .near(store, scope, query, |embedded| eprintln!("mneme: embedded {embedded} memories with {}", embedder.model))
        .map_err(|e| e.to_string())?;
    Ok(Some(near))
}

fn recall_many(
    store: &mut dyn Engine<Error>,
    scope: &Scope,
    path: &Path,
    limit: usize,
    all: bool,
    window: Window,
    embedder: Option<&Embedder>,
) -> CliResult {
    let reader = open_lines(path)?;
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let query: QueryLine = serde_json::from_str(&line)
            .map_err(|e| format!("{} line {}: {e}; each line is {{\"query\": \"…\"}}", path.display(), n + 1))?;
        let near = near(store, scope, &query.query, embedder)?;
        let recalled = store.memory_recall(scope, &query.query, limit, all, window, near.as_ref()).map_err(|e| e.to_string())?;
        report_to_stderr(&recalled.report);
        print_json(&recalled.hits)?;
    }
    Ok(())
}

fn open_lines(path: &Path) -> Result<Box<dyn BufRead>, String> {
    if path == Path::new("-") {
        return Ok(Box::new(std::io::BufReader::new(std::io::stdin())));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    Ok(Box::new(std::io::BufReader::new(file)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportLine {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    body: String,
    time: Option<String>,
    session: Option<String>,
    #[serde(default)]
    topics: Vec<String>,
    confidence: Option<f64>,
}

/// Memories are written in batches, so a long import shows progress and a failure
/// loses at most the batch in flight (what was written stays, and is reported).
const IMPORT_BATCH: usize = 1000;

fn import(store: &mut dyn Engine<Error>, scope: &Scope, path: &Path, now_ms: i64, json: bool) -> CliResult {
    let reader = open_lines(path)?;
    let mut batch = Vec::new();
    let mut imported = 0usize;
    // Progress for a long import, between batches: the last one is the closing line.
    let progress = std::io::stderr().is_terminal() || !json;
    let mut flush = |batch: &mut Vec<NewMemory>, imported: &mut usize, more: bool| -> CliResult {
        if batch.is_empty() {
            return Ok(());
        }
        let count = batch.len();
        store
            .memory_add_many(scope, std::mem::take(batch), now_ms)
            .map_err(|e| format!("{e} (the {imported} memories before this batch of {count} are written)"))?;
        *imported += count;
        if progress && more {
            eprintln!("mneme: imported {imported} memories so far");
        }
        Ok(())
    };
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let where_ = || format!("{} line {}", path.display(), n + 1);
        let parsed: ImportLine = serde_json::from_str(&line).map_err(|e| {
            format!(
                "{}: {e}; each line is {{\"name\", \"type\", \"description\", \"body\", \"time\"?, \"session\"?, \"topics\"?}}",
                where_()
            )
        })?;
        let kind = MemoryType::parse(&parsed.kind)
            .ok_or_else(|| format!("{}: type `{}` is not one of user, feedback, project, reference", where_(), parsed.kind))?;
        let valid_from_ms = parsed.time.as_deref().map(parse_time).transpose().map_err(|e| format!("{}: {e}", where_()))?;
        batch.push(NewMemory {
            name: parsed.name,
            type_: kind,
            description: parsed.description,
            body: parsed.body,
            topics: parsed.topics,
            links: Links::default(),
            confidence: parsed.confidence,
            session: parsed.session,
            entry: None,
            valid_from_ms,
        });
        if batch.len() >= IMPORT_BATCH {
            flush(&mut batch, &mut imported, true)?;
        }
    }
    flush(&mut batch, &mut imported, false)?;
    if json {
        return print_json(&json!({ "imported": imported, "scope": scope.label() }));
    }
    println!("imported {imported} memories into {}", scope.label());
    Ok(())
}

fn extract(
    store: &mut dyn Engine<Error>,
    scope: &Scope,
    id: &str,
    model: &crate::SummarizerFlags,
    dry_run: bool,
    json: bool,
    now_ms: i64,
) -> CliResult {
    let plan = store.plan_extraction(scope, id).map_err(|e| e.to_string())?;
    if plan.message_count == 0 {
        println!("nothing to extract: session {id} has no messages since its last extraction");
        return Ok(());
    }
    // Asked for only now: a missing key is no failure when nothing is to be sent.
    let model = &model.summarizer()?;
    if dry_run {
        println!("{}", plan.prompt);
    }
    if *model == Summarizer::Extractive {
        println!(
            "the offline extractor keeps nothing it cannot justify, so it wrote nothing ({} messages waiting); name a model with --summarizer openai|anthropic|ollama",
            plan.message_count
        );
        return Ok(());
    }
    let fail = |store: &mut dyn Engine<Error>, reason: String| -> CliResult {
        if !dry_run {
            store.record_extraction_failure(id, &reason, now_ms).map_err(|e| e.to_string())?;
        }
        Err(format!("{reason} (recorded: {} failures since the last extraction)", plan.failures + 1))
    };
    let answer = match model.complete(&plan.prompt, plan.max_tokens) {
        Ok(answer) => answer,
        Err(error) => return fail(store, format!("the extraction failed: {error}")),
    };
    if dry_run {
        println!("--- the answer of {} (not applied) ---\n{answer}", model.describe());
        return Ok(());
    }
    let extracted = match store.apply_extraction(scope, &plan, &answer, now_ms) {
        Ok(extracted) => extracted,
        Err(error @ Error::Session(mneme_host::core::Error::InvalidAnswer { .. })) => return fail(store, error.to_string()),
        Err(error) => return Err(error.to_string()),
    };
    if json {
        return print_json(&extracted);
    }
    for memory in &extracted.added {
        println!("added {} ({}.md)", crate::shown(&memory.name), memory.file);
    }
    for memory in &extracted.updated {
        println!("updated {} ({}.md)", crate::shown(&memory.name), memory.file);
    }
    for file in &extracted.superseded {
        println!("superseded {file} (kept, marked invalid_at and superseded_by)");
    }
    if extracted.added.is_empty() && extracted.updated.is_empty() {
        println!("the model found nothing worth keeping in {} messages", plan.message_count);
    }
    Ok(())
}

struct Consolidate {
    dry_run: bool,
    if_due: bool,
    json: bool,
}

fn consolidate(
    store: &mut dyn Engine<Error>,
    scope: &Scope,
    model: &crate::SummarizerFlags,
    options: Consolidate,
    now_ms: i64,
) -> CliResult {
    // Asked for by hand, it runs whenever no other consolidation holds the lock.
    let settings = if options.if_due {
        DreamSettings::default()
    } else {
        DreamSettings { min_interval_ms: 0, min_new_sessions: 0, ..DreamSettings::default() }
    };
    let holder = format!("mneme-{}", std::process::id());
    if options.dry_run {
        let due = store.dream_gate(now_ms, &settings).map_err(|e| e.to_string())?;
        if !due.fire {
            return nothing_done(&format!("not consolidating: {}", due.reason), options.json);
        }
        return consolidate_held(store, scope, &model.summarizer()?, &options, now_ms).map(|_| ());
    }
    let taken = store.dream_acquire(now_ms, &holder, &settings).map_err(|e| e.to_string())?;
    if !taken.fire {
        return nothing_done(&format!("not consolidating: {}", taken.reason), options.json);
    }
    // Asked for only now, once due: a missing key is no failure when nothing is. The
    // lock is given back either way.
    let outcome = model.summarizer().and_then(|model| consolidate_held(store, scope, &model, &options, now_ms));
    let completed = matches!(outcome, Ok(true));
    let released = store.dream_release(now_ms, &holder, completed).map_err(|e| e.to_string());
    outcome.and(released)
}

/// A consolidation that did nothing says why: as text, or with `--json` as
/// `{"applied": false, "reason": …}` (a script reading JSON gets JSON either way).
fn nothing_done(reason: &str, json: bool) -> CliResult {
    if json {
        return print_json(&serde_json::json!({ "applied": false, "reason": reason }));
    }
    println!("{reason}");
    Ok(())
}

/// The consolidation itself, under the lock; true when it wrote.
fn consolidate_held(
    store: &mut dyn Engine<Error>,
    scope: &Scope,
    model: &Summarizer,
    options: &Consolidate,
    now_ms: i64,
) -> Result<bool, String> {
    let plan = store.plan_consolidation(scope, now_ms).map_err(|e| e.to_string())?;
    if plan.known.is_empty() && plan.sessions.is_empty() {
        let reason = format!("nothing to consolidate: {} has no memories and no sessions since the last consolidation", scope.label());
        return nothing_done(&reason, options.json).map(|()| false);
    }
    if *model == Summarizer::Extractive {
        let reason = format!(
            "the offline summariser changes nothing it cannot justify, so nothing changed ({} memories, {} sessions to read); name a model with --summarizer openai|anthropic|ollama",
            plan.known.len(),
            plan.sessions.len()
        );
        return nothing_done(&reason, options.json).map(|()| false);
    }
    let answer = model.complete(&plan.prompt, plan.max_tokens).map_err(|e| format!("the consolidation failed: {e}"))?;
    let done = match store.apply_consolidation(scope, &plan, &answer, now_ms, options.dry_run) {
        Ok(done) => done,
        Err(error @ Error::Session(mneme_host::core::Error::Storage(_))) if !options.dry_run => {
            return Err(cut_short(store, scope, &plan.id, &error));
        }
        Err(error) => return Err(error.to_string()),
    };
    if options.json {
        print_json(&done)?;
        return Ok(done.applied);
    }
    print_steps(&done.steps);
    match (done.steps.is_empty(), done.applied) {
        (true, _) => println!("the model found nothing to change ({} memories, {} sessions read)", plan.known.len(), plan.sessions.len()),
        (false, false) => println!("dry run: {} changes, nothing written", done.steps.len()),
        (false, true) => println!("{}: {} changes written; `mneme memory rollback {}` undoes them", done.id, done.steps.len(), done.id),
    }
    Ok(done.applied)
}

/// What to tell a caller whose consolidation failed at storage: once recorded, some of
/// its files may be written (a full disk stops it between two), and the rollback
/// undoes them. Which ones are written is read back from the files.
fn cut_short(store: &mut dyn Engine<Error>, scope: &Scope, id: &str, error: &Error) -> String {
    let rollback = match scope {
        Scope::Global => format!("mneme memory --global rollback {id}"),
        Scope::Project(project) => format!("mneme memory --project {project} rollback {id}"),
    };
    let then = match error {
        Error::Session(mneme_host::core::Error::Storage(StorageError::QuotaExceeded { .. })) => "once the storage has room",
        _ => "once what stopped it is fixed",
    };
    let recorded = match store.consolidations(scope) {
        Ok(all) => all.into_iter().find(|c| c.id == id),
        Err(read) => {
            return format!(
                "{error}\nwhat consolidation {id} wrote could not be read back ({read}); `mneme memory consolidations` lists it if it was recorded, and `{rollback}` undoes it"
            );
        }
    };
    let Some(recorded) = recorded else { return format!("{error}\nnothing of consolidation {id} was written") };
    let (mut written, mut unread): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    for step in &recorded.steps {
        if written.contains(&step.file.as_str()) || unread.contains(&step.file.as_str()) {
            continue;
        }
        match store.memory_show(scope, &step.file) {
            Ok(shown) if shown.memory.text_without_use() == step.after.text_without_use() => written.push(&step.file),
            Ok(_) | Err(Error::Session(mneme_host::core::Error::MemoryNotFound { .. })) => {}
            Err(_) => unread.push(&step.file),
        }
    }
    let what = if written.is_empty() { "none of its memories".to_owned() } else { written.join(", ") };
    let unknown = if unread.is_empty() { String::new() } else { format!("; could not read back {}", unread.join(", ")) };
    format!(
        "{error}\nconsolidation {id} was cut short after it was recorded: written {what}{unknown} (MEMORY.md may not list them yet); `{rollback}` undoes it, then consolidate again {then}"
    )
}

/// A consolidation's changes as a diff: `+` added, `~` changed, `-` out of MEMORY.md (kept).
fn print_steps(steps: &[Step]) {
    for step in steps {
        let reason = step.reason.as_deref().map_or_else(String::new, |r| format!("  ({r})"));
        let after = &step.after;
        match step.kind {
            StepKind::Added => {
                println!("+ {}: {} — {}{reason}", step.file, crate::shown(&after.name), crate::shown(&hook(&after.description)));
                for line in after.body.lines() {
                    println!("+     {}", crate::shown(line));
                }
            }
            StepKind::Superseded => {
                println!("- {}: superseded by {} (kept){reason}", step.file, after.superseded_by.as_deref().unwrap_or("?"))
            }
            StepKind::Archived => println!("- {}: archived (kept){reason}", step.file),
            StepKind::Linked => println!("~ {}: links {}{reason}", step.file, after.links.all().join(", ")),
            StepKind::Updated => {
                println!("~ {}: {} — {}{reason}", step.file, after.name, crate::shown(&hook(&after.description)));
                if let Some(before) = &step.before {
                    for line in before.body.lines() {
                        println!("~   - {line}");
                    }
                }
                for line in after.body.lines() {
                    println!("~   + {line}");
                }
            }
        }
    }
}

/// The real filesystem, for the instruction files Claude Code reads from disk.
struct Disk;

impl instructions::Source for Disk {
    async fn read(&self, path: &str) -> Result<Option<String>, StorageError> {
        match std::fs::read(path) {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::IsADirectory | std::io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(StorageError::Io { key: path.to_owned(), message: e.to_string() }),
        }
    }

    async fn list_markdown(&self, dir: &str) -> Result<Vec<String>, StorageError> {
        let mut found = Vec::new();
        let mut pending = vec![PathBuf::from(dir)];
        while let Some(folder) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|e| e == "md") {
                    found.push(path.to_string_lossy().into_owned());
                }
            }
        }
        found.sort();
        Ok(found)
    }
}

fn print_instructions(
    cwd: &Path,
    home: Option<PathBuf>,
    managed: Option<PathBuf>,
    paths: Vec<String>,
    external_imports: bool,
    json: bool,
) -> CliResult {
    let (resolved, cwd) = resolve_instructions(cwd, home, managed, paths, external_imports)?;
    if json {
        return print_json(&serde_json::to_value(&resolved).map_err(|e| e.to_string())?);
    }
    print!("{}", resolved.text);
    if !resolved.text.is_empty() && !resolved.text.ends_with('\n') {
        println!();
    }
    if !resolved.files.iter().any(|file| file.loaded) {
        eprintln!("no instructions: Claude Code would load no CLAUDE.md, rule or import for {}", cwd.display());
    }
    eprintln!();
    for file in &resolved.files {
        let mark = match (file.loaded, file.external) {
            (true, _) => "loaded  ",
            (false, true) => "external",
            (false, false) => "        ",
        };
        eprintln!("{mark} {}  ({})", file.path, file.reason);
    }
    Ok(())
}

/// The instructions Claude Code loads in folder `cwd` (CLAUDE.md files up the tree, the
/// user's and the managed one, rules and imports), read from the disk; and the folder
/// as resolved.
pub fn resolve_instructions(
    cwd: &Path,
    home: Option<PathBuf>,
    managed: Option<PathBuf>,
    paths: Vec<String>,
    external_imports: bool,
) -> Result<(Instructions, PathBuf), String> {
    // Claude Code looks up from the folder it runs in: a folder that is not there has
    // no instructions, and is most likely a typing mistake.
    let cwd = std::fs::canonicalize(cwd).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("the working directory {} does not exist: name a folder that does", cwd.display())
        }
        _ => format!("cannot read the working directory {}: {e}", cwd.display()),
    })?;
    let home = home.or_else(dirs::home_dir).ok_or("no home folder is known; pass --home")?;
    let managed = managed.unwrap_or_else(|| PathBuf::from("/etc/claude-code/CLAUDE.md"));
    let request = Request {
        cwd: cwd.to_string_lossy().into_owned(),
        home: home.to_string_lossy().into_owned(),
        managed: Some(managed.to_string_lossy().into_owned()),
        paths,
        external_imports,
    };
    let resolved = block_on(instructions::resolve(&Disk, &request)).map_err(|e| e.to_string())?;
    Ok((resolved, cwd))
}
