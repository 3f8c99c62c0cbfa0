//! `mneme` as a wasi:cli command for `wasmtime run`: argument parsing and printing,
//! with every operation done by the engine component it is composed with (its
//! `sessions`, `compaction` and `gates` exports), whose storage is the WASI provider's
//! folder. `cargo xtask wasi` composes the three into target/mneme-cli.wasm:
//!
//!   wasmtime run --dir ./data::. target/mneme-cli.wasm sessions list

use std::path::Path;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

// Standard output that never panics (a full disk, a closed pipe): see the crate.
#[macro_use]
extern crate mneme_cli_stdout;

use clap::{Parser, Subcommand, ValueEnum};
use mneme_core::compaction::Keep;
use mneme_core::crab::CrabSession;
use mneme_core::gates::{Decision, DreamSettings, ExtractionSettings, FlushSettings, Reply, ResetPolicy};
use mneme_core::index::openclaw::KeysImported;
use mneme_core::index::sessionkey::KeyParts;
use mneme_core::index::{Field, Inbound, KeyEntry, KeyPatch, KeyView, Resolution, RolledOver, RoutePolicy};
use mneme_core::interchange::{ExportFormat, Exported, Import, Imported as ImportedSession};
use mneme_core::memory::consolidate::{Consolidation, ConsolidationPlan};
use mneme_core::memory::extract::{Extracted, ExtractionPlan};
use mneme_core::memory::file::{LinkKind, Memory};
use mneme_core::memory::instructions::{Instructions, Request};
use mneme_core::memory::memory_md::{Caps, Loaded};
use mneme_core::memory::store::{Change, EmbeddingPlan, Filter, MemoryIndexReport, Near, NewMemory, Recalled, Scope, Shown};
use mneme_core::memory::tool::MemoryToolResult;
use mneme_core::recall::embed::EmbeddingsInfo;
use mneme_core::retention::{ArchivedSession, GcReport, Retention};
use mneme_core::{
    AgentRef, Applied, Branch, CheckReport, CompactionIds, Context, Engine, Entry, Error, Injection, Ledger, Limits, Listing, Mirror, Mode,
    NewEntry, Place, Plan, Prices, Provider, ProviderContext, RebuildReport, RepairReport, Role, Settings, Speaker, Subagent, Transcript,
    Turn,
};

wit_bindgen::generate!({ path: "../../wit", world: "driver" });

use mneme::engine::{compaction, gates, index, memory, sessions, types};

mneme_core::mirror_wit!(types, sessions, compaction, gates, memory, index; sends_text = false);

/// Mneme's sessions in the folder `wasmtime run` gives as the current directory
/// (`--dir <folder>::.`), laid out like a Claude Code home.
#[derive(Parser)]
#[command(name = "mneme-cli.wasm", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Size at which a transcript part is closed and `<id>_part<N>.jsonl` begun (e.g. 50MiB)
    #[arg(long, global = true, value_name = "SIZE", value_parser = mneme_core::parse_limit, default_value = "50MiB")]
    part_limit: u64,
    /// Total size past which appends to a session are refused until it is compacted
    #[arg(long, global = true, value_name = "SIZE", value_parser = mneme_core::parse_limit, default_value = "200MiB")]
    total_limit: u64,
    /// Secrets taken out of every line before it is written, replaced by `[REDACTED:<kind>]`: `all`, `none`, or kinds separated by commas (anthropic-api-key, openai-api-key, google-api-key, aws-access-key, github-token, slack-token, bearer-token, private-key, env-secret, jwt, stripe-key, url-password)
    #[arg(long, global = true, value_name = "KINDS", default_value = "all")]
    redact: String,
}

#[derive(Subcommand)]
enum Command {
    /// List and inspect sessions
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Append a message to a session, creating it if it does not exist
    Append {
        id: String,
        #[arg(long, value_enum)]
        role: RoleArg,
        #[arg(long)]
        text: String,
        /// The working directory whose project a new session is filed under (a new
        /// session needs one); left out, the line names the session's own
        #[arg(long)]
        cwd: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Append a whole agent turn in one write: all of it or nothing
    Turn {
        id: String,
        /// A message as JSON, or a JSON array of messages: Anthropic's shape, or OpenAI
        /// chat messages with --provider openai; `-` reads them from standard input (a
        /// turn too large for the command line)
        #[arg(long, value_name = "JSON")]
        messages: String,
        /// The turn's uuid (its later lines derive theirs from it) [default: a new
        /// one]. Give a sub-agent's first turn that failed again with the same one: a
        /// link to it that landed is not written twice
        #[arg(long, value_name = "UUID")]
        uuid: Option<String>,
        /// The shape of --messages
        #[arg(long, value_enum, default_value_t = ProviderArg::Anthropic)]
        provider: ProviderArg,
        /// Continue from this entry instead of the newest message (a rewind: the later
        /// messages stay in the file, on their own branch)
        #[arg(long, value_name = "UUID", conflicts_with = "agent")]
        parent: Option<String>,
        /// Write into this sub-agent's transcript of the session instead
        /// (`<session>/subagents/agent-<ID>.jsonl`, Claude Code sessions)
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
        /// The session's pending tool call that started the sub-agent: its first turn
        /// links it from there, as Claude Code does
        #[arg(long, value_name = "TOOL_USE_ID", requires = "agent")]
        parent_call: Option<String>,
        /// As for `append`
        #[arg(long)]
        cwd: Option<String>,
        /// Print the written entries as JSON
        #[arg(long)]
        json: bool,
    },
    /// Print the request JSON to send a model next
    Context {
        id: String,
        #[arg(long, value_enum, default_value_t = ProviderArg::Anthropic)]
        format: ProviderArg,
        /// The model the request goes to: another model's thinking is then sent as the
        /// session's client sends it (Claude Code's sessions: left out; pi's: as text)
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// A system prompt to put in the request (not written to the session); repeatable
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        system: Vec<String>,
        /// Context to inject just before the newest prompt, e.g. recalled memories (not
        /// written to the session); repeatable
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        inject: Vec<String>,
        /// Print the request with what it was built from ({body, message_count, tokens, …}) instead of the body alone
        #[arg(long)]
        json: bool,
    },
    /// Copy a session's conversation, up to a message, into a new session (as
    /// `claude --fork-session` does); print the lines written as JSON
    Fork {
        id: String,
        /// The last message to copy [default: the newest]
        #[arg(long, value_name = "UUID")]
        from: Option<String>,
        /// The new session's id [default: a new UUID, which Claude Code can resume]
        #[arg(long, value_name = "ID")]
        to: Option<String>,
    },
    /// Print a session's branches as JSON: each leaf message, its time, text and
    /// tokens, and where it leaves the current branch
    Branches { id: String },
    /// Print the tokens a session's replies reported as JSON, in all and per branch,
    /// priced when all four prices are given (dollars per million tokens)
    Usage {
        id: String,
        #[arg(long, value_name = "USD", allow_negative_numbers = true, requires_all = ["output_price", "cache_read_price", "cache_write_price"])]
        input_price: Option<f64>,
        #[arg(long, value_name = "USD", allow_negative_numbers = true, requires_all = ["input_price", "cache_read_price", "cache_write_price"])]
        output_price: Option<f64>,
        #[arg(long, value_name = "USD", allow_negative_numbers = true, requires_all = ["input_price", "output_price", "cache_write_price"])]
        cache_read_price: Option<f64>,
        #[arg(long, value_name = "USD", allow_negative_numbers = true, requires_all = ["input_price", "output_price", "cache_read_price"])]
        cache_write_price: Option<f64>,
    },
    /// Compact a session as `/compact` does, summarised by the core's offline summary
    /// (this build has no network); print {plan, applied} as JSON. Nothing is deleted:
    /// resume starts at the new boundary
    Compact {
        id: String,
        /// Print the plan and write nothing
        #[arg(long)]
        plan: bool,
        /// Compact only if the trigger says the context is full (as after each turn)
        #[arg(long)]
        auto: bool,
        /// The model's context window in tokens
        #[arg(long, value_name = "TOKENS", default_value_t = Settings::default().context_window)]
        context_window: u64,
        /// Keep at least this many tokens of the newest messages
        #[arg(long, value_name = "TOKENS", default_value_t = 20_000)]
        keep_recent_tokens: u64,
    },
    /// Check a session for unreadable lines, a torn tail, dangling parents and unanswered calls; exit 3 on problems
    Check { id: String },
    /// Run one conformance vector (its index across tests/vectors) on this folder, which must be empty; print its outcomes as JSON
    #[command(hide = true)]
    Conformance { vector: usize },
    /// Run the core's storage contract on this folder's storage (the WASI provider), which must be empty; print what broke it
    #[command(hide = true)]
    StorageContract,
}

#[derive(Subcommand)]
enum SessionsCommand {
    /// Every session, newest first
    List {
        #[arg(long)]
        json: bool,
    },
    /// A session's conversation
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum RoleArg {
    User,
    Assistant,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProviderArg {
    Anthropic,
    Openai,
}

impl From<ProviderArg> for Provider {
    fn from(provider: ProviderArg) -> Provider {
        match provider {
            ProviderArg::Anthropic => Provider::Anthropic,
            ProviderArg::Openai => Provider::Openai,
        }
    }
}

/// The engine this component is composed with, as the core's [`Engine`].
struct Imported {
    store: sessions::Store,
}

impl Imported {
    fn new(limits: Limits) -> Self {
        Imported { store: sessions::Store::new(Some(limits.mirror())) }
    }
}

impl Engine<Error> for Imported {
    fn append(&mut self, id: &str, entry: NewEntry) -> Result<Entry, Error> {
        self.store.append(id, &entry.mirror()).mirror()
    }
    fn append_turn(&mut self, id: &str, turn: Turn) -> Result<Vec<Entry>, Error> {
        self.store.append_turn(id, &turn.mirror()).mirror()
    }
    fn tombstone(&mut self, id: &str, uuid: &str, now_ms: i64) -> Result<(), Error> {
        self.store.tombstone(id, uuid, now_ms).mirror()
    }
    fn load(&mut self, id: &str) -> Result<Transcript, Error> {
        self.store.load(id).mirror()
    }
    fn context(&mut self, id: &str) -> Result<Context, Error> {
        self.store.context(id).mirror()
    }
    fn provider_context(
        &mut self,
        id: &str,
        provider: Provider,
        model: Option<&str>,
        injections: &[Injection],
    ) -> Result<ProviderContext, Error> {
        let injections: Vec<sessions::Injection> = injections.to_vec().mirror();
        self.store.provider_context(id, provider.mirror(), model, &injections).mirror()
    }
    fn branches(&mut self, id: &str) -> Result<Vec<Branch>, Error> {
        self.store.branches(id).mirror()
    }
    fn usage(&mut self, id: &str, prices: Option<&Prices>) -> Result<Ledger, Error> {
        self.store.usage(id, prices.cloned().mirror()).mirror()
    }
    fn fork(&mut self, id: &str, from: Option<&str>, new_id: &str, now_ms: i64) -> Result<Vec<Entry>, Error> {
        self.store.fork(id, from, new_id, now_ms).mirror()
    }
    fn gc(&mut self, policy: &Retention, now_ms: i64) -> Result<GcReport, Error> {
        self.store.gc(&policy.clone().mirror(), now_ms).mirror()
    }
    fn archive(&mut self, id: &str, now_ms: i64) -> Result<ArchivedSession, Error> {
        self.store.archive(id, now_ms).mirror()
    }
    fn archived(&mut self) -> Result<Vec<ArchivedSession>, Error> {
        self.store.archived().mirror()
    }
    fn restore(&mut self, id: &str) -> Result<ArchivedSession, Error> {
        self.store.restore(id).mirror()
    }
    fn import_session(&mut self, request: &Import) -> Result<ImportedSession, Error> {
        self.store.import_session(&request.clone().mirror()).mirror()
    }
    fn export_session(&mut self, id: &str, format: ExportFormat, uuid: &str) -> Result<Exported, Error> {
        self.store.export_session(id, format.mirror(), uuid).mirror()
    }
    fn check(&mut self, id: &str) -> Result<CheckReport, Error> {
        self.store.check(id).mirror()
    }
    fn check_bytes(&mut self, data: &[u8]) -> Result<CheckReport, Error> {
        Ok(sessions::check_bytes(&data.to_vec().mirror()).mirror())
    }
    fn project_of(&mut self, cwd: &str) -> Result<String, Error> {
        Ok(sessions::project_of(cwd))
    }
    fn session_id_of(&mut self, name: &str) -> Result<String, Error> {
        Ok(sessions::session_id_of(name))
    }
    fn subagents(&mut self, id: &str) -> Result<Vec<Subagent>, Error> {
        self.store.subagents(id).mirror()
    }
    fn remove(&mut self, id: &str) -> Result<Vec<String>, Error> {
        self.store.remove(id).mirror()
    }
    fn repair(&mut self, id: &str, now_ms: i64) -> Result<RepairReport, Error> {
        self.store.repair(id, now_ms).mirror()
    }
    fn list(&mut self) -> Result<Listing, Error> {
        self.store.list().mirror()
    }
    fn search(
        &mut self,
        query: &str,
        limit: usize,
        project: Option<&str>,
        window: mneme_core::Window,
    ) -> Result<Vec<mneme_core::SearchHit>, Error> {
        self.store.search(query, limit.mirror(), project, window.mirror()).mirror()
    }
    fn reopen(&mut self, id: &str) -> Result<(), Error> {
        self.store.reopen(id);
        Ok(())
    }
    fn set_redaction(&mut self, kinds: &[String]) -> Result<(), Error> {
        self.store.set_redaction(kinds).mirror()
    }
    fn append_lines(&mut self, key: &mneme_core::TranscriptKey, lines: &[String], now_ms: i64) -> Result<u32, Error> {
        self.store.append_lines(&key.clone().mirror(), lines, now_ms).mirror()
    }
    fn read_lines(&mut self, key: &mneme_core::TranscriptKey) -> Result<Option<Vec<String>>, Error> {
        self.store.read_lines(&key.clone().mirror()).mirror()
    }
    fn written_sessions(&mut self, project: &str) -> Result<Vec<mneme_core::WrittenSession>, Error> {
        self.store.written_sessions(project).mirror()
    }
    fn subpaths(&mut self, project: &str, id: &str) -> Result<Vec<String>, Error> {
        self.store.subpaths(project, id).mirror()
    }
    fn remove_transcript(&mut self, key: &mneme_core::TranscriptKey) -> Result<(), Error> {
        self.store.remove_transcript(&key.clone().mirror()).mirror()
    }
    fn append_items(&mut self, id: &str, items: &str, cwd: &str, uuid: &str, now_ms: i64) -> Result<u32, Error> {
        self.store.append_items(id, items, cwd, uuid, now_ms).mirror()
    }
    fn items(&mut self, id: &str, limit: Option<u32>) -> Result<String, Error> {
        self.store.items(id, limit).mirror()
    }
    fn pop_item(&mut self, id: &str, now_ms: i64) -> Result<Option<String>, Error> {
        self.store.pop_item(id, now_ms).mirror()
    }
    fn hold(&mut self, id: &str) -> Result<(), Error> {
        self.store.hold(id).mirror()
    }
    fn release(&mut self, id: &str) -> Result<(), Error> {
        self.store.release(id).mirror()
    }
    fn plan_compaction(&mut self, id: &str, settings: &Settings, mode: Mode) -> Result<Plan, Error> {
        compaction::plan_compaction(&self.store, id, settings.mirror(), mode.mirror()).mirror()
    }
    fn summarize_offline(&mut self, id: &str, plan: &Plan) -> Result<String, Error> {
        compaction::summarize_offline(&self.store, id, &plan.clone().mirror()).mirror()
    }
    fn apply_compaction(&mut self, id: &str, plan: &Plan, summary: &str, ids: &CompactionIds, now_ms: i64) -> Result<Applied, Error> {
        compaction::apply_compaction(&self.store, id, &plan.clone().mirror(), summary, &ids.clone().mirror(), now_ms).mirror()
    }
    fn record_compaction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        compaction::record_compaction_failure(&self.store, id, reason, now_ms).mirror()
    }
    fn memory_flush_gate(&mut self, id: &str, settings: &FlushSettings) -> Result<Decision, Error> {
        gates::memory_flush_gate(&self.store, id, settings.mirror()).mirror()
    }
    fn record_memory_flush(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        gates::record_memory_flush(&self.store, id, now_ms).mirror()
    }
    fn extraction_gate(&mut self, id: &str, settings: &ExtractionSettings) -> Result<Decision, Error> {
        gates::extraction_gate(&self.store, id, settings.mirror()).mirror()
    }
    fn record_extraction(&mut self, id: &str, now_ms: i64) -> Result<(), Error> {
        gates::record_extraction(&self.store, id, now_ms).mirror()
    }
    fn reset_gate(&mut self, id: &str, now_ms: i64, policy: &ResetPolicy) -> Result<Decision, Error> {
        gates::reset_gate(&self.store, id, now_ms, policy.mirror()).mirror()
    }
    fn dream_gate(&mut self, now_ms: i64, settings: &DreamSettings) -> Result<Decision, Error> {
        gates::dream_gate(&self.store, now_ms, settings.mirror()).mirror()
    }
    fn dream_acquire(&mut self, now_ms: i64, holder: &str, settings: &DreamSettings) -> Result<Decision, Error> {
        gates::dream_acquire(&self.store, now_ms, holder, settings.mirror()).mirror()
    }
    fn dream_release(&mut self, now_ms: i64, holder: &str, completed: bool) -> Result<(), Error> {
        gates::dream_release(&self.store, now_ms, holder, completed).mirror()
    }
    fn memory_add(&mut self, scope: &Scope, new: NewMemory, now_ms: i64) -> Result<Memory, Error> {
        memory::memory_add(&self.store, &scope.clone().mirror(), &new.mirror(), now_ms).mirror()
    }
    fn memory_add_many(&mut self, scope: &Scope, memories: Vec<NewMemory>, now_ms: i64) -> Result<Vec<Memory>, Error> {
        let memories: Vec<memory::NewMemory> = memories.mirror();
        memory::memory_add_many(&self.store, &scope.clone().mirror(), &memories, now_ms).mirror()
    }
    fn memory_update(&mut self, scope: &Scope, file: &str, change: Change, now_ms: i64) -> Result<Memory, Error> {
        memory::memory_update(&self.store, &scope.clone().mirror(), file, &change.mirror(), now_ms).mirror()
    }
    fn memory_supersede(&mut self, scope: &Scope, file: &str, replacement: NewMemory, now_ms: i64) -> Result<Memory, Error> {
        memory::memory_supersede(&self.store, &scope.clone().mirror(), file, &replacement.mirror(), now_ms).mirror()
    }
    fn memory_forget(&mut self, scope: &Scope, file: &str, now_ms: i64) -> Result<Memory, Error> {
        memory::memory_forget(&self.store, &scope.clone().mirror(), file, now_ms).mirror()
    }
    fn memory_tool(&mut self, scope: &Scope, input: &str, now_ms: i64) -> Result<MemoryToolResult, Error> {
        memory::memory_tool(&self.store, &scope.clone().mirror(), input, now_ms).mirror()
    }
    fn memory_link(&mut self, scope: &Scope, from: &str, kind: LinkKind, to: &str, now_ms: i64) -> Result<Memory, Error> {
        memory::memory_link(&self.store, &scope.clone().mirror(), from, kind.mirror(), to, now_ms).mirror()
    }
    fn memory_list(&mut self, scope: &Scope, filter: &Filter) -> Result<Vec<Memory>, Error> {
        memory::memory_list(&self.store, &scope.clone().mirror(), &filter.clone().mirror()).mirror()
    }
    fn memory_show(&mut self, scope: &Scope, file: &str) -> Result<Shown, Error> {
        memory::memory_show(&self.store, &scope.clone().mirror(), file).mirror()
    }
    fn memory_recall(
        &mut self,
        scope: &Scope,
        query: &str,
        limit: usize,
        all: bool,
        window: mneme_core::Window,
        near: Option<&Near>,
    ) -> Result<Recalled, Error> {
        let near: Option<memory::Near> = near.cloned().mirror();
        memory::memory_recall(&self.store, &scope.clone().mirror(), query, limit.mirror(), all, window.mirror(), near.as_ref()).mirror()
    }
    fn plan_embedding(&mut self, scope: &Scope, model: &str, limit: usize) -> Result<EmbeddingPlan, Error> {
        memory::plan_embedding(&self.store, &scope.clone().mirror(), model, limit.mirror()).mirror()
    }
    fn apply_embedding(&mut self, scope: &Scope, plan: &EmbeddingPlan, vectors: &[Vec<f32>]) -> Result<u32, Error> {
        memory::apply_embedding(&self.store, &scope.clone().mirror(), &plan.clone().mirror(), vectors).mirror()
    }
    fn memory_load(&mut self, scope: &Scope, caps: Caps) -> Result<Loaded, Error> {
        memory::memory_load(&self.store, &scope.clone().mirror(), caps.mirror()).mirror()
    }
    fn memory_reindex(&mut self, scope: &Scope) -> Result<MemoryIndexReport, Error> {
        memory::memory_reindex(&self.store, &scope.clone().mirror()).mirror()
    }
    fn memory_used(&mut self, scope: &Scope, files: &[String], now_ms: i64) -> Result<Vec<Memory>, Error> {
        memory::memory_used(&self.store, &scope.clone().mirror(), files, now_ms).mirror()
    }
    fn set_embeddings(&mut self, table: Option<&[u8]>) -> Result<Option<EmbeddingsInfo>, Error> {
        let table: Option<types::Data> = table.map(|table| table.to_vec().mirror());
        memory::set_embeddings(&self.store, table.as_ref()).mirror()
    }
    fn plan_extraction(&mut self, scope: &Scope, id: &str) -> Result<ExtractionPlan, Error> {
        memory::plan_extraction(&self.store, &scope.clone().mirror(), id).mirror()
    }
    fn apply_extraction(&mut self, scope: &Scope, plan: &ExtractionPlan, answer: &str, now_ms: i64) -> Result<Extracted, Error> {
        memory::apply_extraction(&self.store, &scope.clone().mirror(), &plan.clone().mirror(), answer, now_ms).mirror()
    }
    fn record_extraction_failure(&mut self, id: &str, reason: &str, now_ms: i64) -> Result<(), Error> {
        memory::record_extraction_failure(&self.store, id, reason, now_ms).mirror()
    }
    fn plan_consolidation(&mut self, scope: &Scope, now_ms: i64) -> Result<ConsolidationPlan, Error> {
        memory::plan_consolidation(&self.store, &scope.clone().mirror(), now_ms).mirror()
    }
    fn apply_consolidation(
        &mut self,
        scope: &Scope,
        plan: &ConsolidationPlan,
        answer: &str,
        now_ms: i64,
        dry_run: bool,
    ) -> Result<Consolidation, Error> {
        memory::apply_consolidation(&self.store, &scope.clone().mirror(), &plan.clone().mirror(), answer, now_ms, dry_run).mirror()
    }
    fn rollback_consolidation(&mut self, scope: &Scope, id: &str, now_ms: i64) -> Result<Consolidation, Error> {
        memory::rollback_consolidation(&self.store, &scope.clone().mirror(), id, now_ms).mirror()
    }
    fn consolidations(&mut self, scope: &Scope) -> Result<Vec<Consolidation>, Error> {
        memory::consolidations(&self.store, &scope.clone().mirror()).mirror()
    }
    fn instructions(&mut self, request: &Request) -> Result<Instructions, Error> {
        memory::instructions(&self.store, &request.clone().mirror()).mirror()
    }
    fn write_file(&mut self, path: &str, text: &str) -> Result<(), Error> {
        memory::write_file(&self.store, path, text).mirror()
    }
    fn read_file(&mut self, path: &str) -> Result<Option<String>, Error> {
        memory::read_file(&self.store, path).mirror()
    }
    fn remove_file(&mut self, path: &str) -> Result<(), Error> {
        memory::remove_file(&self.store, path).mirror()
    }
    fn resolve(&mut self, inbound: &Inbound, policy: &RoutePolicy, now_ms: i64, new_session_id: &str) -> Result<Resolution, Error> {
        index::resolve(&self.store, &inbound.clone().mirror(), &policy.clone().mirror(), now_ms, new_session_id).mirror()
    }
    fn reset_key(&mut self, key: &str, new_session_id: &str, now_ms: i64) -> Result<KeyEntry, Error> {
        index::reset_key(&self.store, key, new_session_id, now_ms).mirror()
    }
    fn update_key(&mut self, key: &str, patch: &KeyPatch) -> Result<KeyEntry, Error> {
        index::update_key(&self.store, key, &patch.clone().mirror()).mirror()
    }
    fn remove_key(&mut self, key: &str) -> Result<KeyEntry, Error> {
        index::remove_key(&self.store, key).mirror()
    }
    fn key(&mut self, key: &str) -> Result<KeyView, Error> {
        index::key(&self.store, key).mirror()
    }
    fn keys(&mut self, filter: &[Field]) -> Result<Vec<KeyEntry>, Error> {
        index::keys(&self.store, &filter.to_vec().mirror()).mirror()
    }
    fn index_report(&mut self) -> Result<mneme_core::index::IndexHealth, Error> {
        index::index_report(&self.store).mirror()
    }
    fn import_openclaw_keys(&mut self, data: &[u8]) -> Result<KeysImported, Error> {
        index::import_openclaw_keys(&self.store, &data.to_vec().mirror()).mirror()
    }
    fn export_openclaw_keys(&mut self) -> Result<Vec<u8>, Error> {
        index::export_openclaw_keys(&self.store).mirror()
    }
    fn crab_latest(&mut self, project: Option<&str>, agent: &str, sender: &str) -> Result<Option<CrabSession>, Error> {
        index::crab_latest(&self.store, project, agent, sender).mirror()
    }
    fn crab_start(
        &mut self,
        project: Option<&str>,
        agent: &str,
        sender: &str,
        created_by: &str,
        now_ms: i64,
    ) -> Result<CrabSession, Error> {
        index::crab_start(&self.store, project, agent, sender, created_by, now_ms).mirror()
    }
    fn crab_show(&mut self, id: &str) -> Result<CrabSession, Error> {
        index::crab_show(&self.store, id).mirror()
    }
    fn crab_set_title(&mut self, id: &str, title: &str) -> Result<CrabSession, Error> {
        index::crab_set_title(&self.store, id, title).mirror()
    }
    fn crab_add_uptime(&mut self, id: &str, secs: u64) -> Result<CrabSession, Error> {
        index::crab_add_uptime(&self.store, id, secs).mirror()
    }
    fn rebuild_index(&mut self) -> Result<RebuildReport, Error> {
        index::rebuild_index(&self.store).mirror()
    }
    fn rollover_gate(&mut self, key: &str, max_context_tokens: u64) -> Result<Decision, Error> {
        index::rollover_gate(&self.store, key, max_context_tokens).mirror()
    }
    fn rollover(&mut self, key: &str, summary: &str, ids: &CompactionIds, new_session_id: &str, now_ms: i64) -> Result<RolledOver, Error> {
        index::rollover(&self.store, key, summary, &ids.clone().mirror(), new_session_id, now_ms).mirror()
    }
    fn key_of(&mut self, inbound: &Inbound, policy: &RoutePolicy) -> Result<String, Error> {
        index::key_of(&inbound.clone().mirror(), &policy.clone().mirror()).mirror()
    }
    fn parse_key(&mut self, key: &str) -> Result<KeyParts, Error> {
        index::parse_key(key).mirror()
    }
    fn context_window(&mut self, model: &str) -> Result<Option<u64>, Error> {
        Ok(compaction::context_window(model))
    }
    fn silent_reply(&mut self, text: &str) -> Result<Reply, Error> {
        Ok(gates::silent_reply(text).mirror())
    }
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// A random (version 4) UUID. The bits come from std's hash seeds, which std draws
/// from wasi:random.
fn new_uuid() -> String {
    use std::hash::{BuildHasher, Hasher};
    let random = || std::collections::hash_map::RandomState::new().build_hasher().finish();
    let (high, low) = (random(), random());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0xfff,
        (low >> 48) & 0x3fff | 0x8000,
        low & 0xffff_ffff_ffff
    )
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = open(&cli).and_then(|engine| run(engine, cli.command));
    let refused = mneme_cli_stdout::refused();
    if let Some(refused) = &refused {
        let done = if outcome.is_ok() { "the command's work was done, but " } else { "" };
        eprintln!("error: {done}its output could not be written to standard output: {refused}");
    }
    match outcome {
        // A command that found problems (`check`: 3) keeps its status; one that did
        // its work says its output was lost.
        Ok(code) if refused.is_some() && code == ExitCode::SUCCESS => ExitCode::FAILURE,
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string_pretty(value).map_err(|e| e.to_string())
}

/// The engine with the limits and redaction the options ask for.
fn open(cli: &Cli) -> Result<Imported, String> {
    let mut engine = Imported::new(Limits { part_bytes: cli.part_limit, total_bytes: cli.total_limit });
    if let Some(kinds) = mneme_core::redact::kinds_named(&cli.redact).map_err(|e| format!("--redact: {e}"))? {
        engine.set_redaction(&kinds).map_err(|e| format!("--redact: {e}"))?;
    }
    Ok(engine)
}

fn run(mut engine: Imported, command: Command) -> Result<ExitCode, String> {
    let fail = |e: Error| e.to_string();
    match command {
        Command::Sessions(SessionsCommand::List { json: as_json }) => {
            let listing = engine.list().map_err(fail)?;
            if as_json {
                println!("{}", json(&listing)?);
            } else {
                for s in &listing.sessions {
                    println!("{}  {}  {} messages  {}", s.id, s.project, s.message_count, s.title.as_deref().unwrap_or(""));
                }
                for skipped in &listing.skipped {
                    eprintln!("skipped {}: {}", skipped.key, skipped.reason);
                }
            }
        }
        Command::Sessions(SessionsCommand::Show { id, json: as_json }) => {
            let context = engine.context(&id).map_err(fail)?;
            if as_json {
                println!("{}", json(&context)?);
            } else {
                for message in &context.messages {
                    println!("{}: {}", message.role, message.text);
                }
            }
        }
        Command::Append { id, role, text, cwd, json: as_json } => {
            let role = match role {
                RoleArg::User => Role::User,
                RoleArg::Assistant => Role::Assistant,
            };
            let entry = engine
                .append(&id, NewEntry { uuid: new_uuid(), now_ms: now_ms(), role, text, cwd: cwd.unwrap_or_default() })
                .map_err(fail)?;
            if as_json {
                println!("{}", json(&entry)?);
            } else {
                println!("appended {} to session {id} (line {})", entry.uuid.unwrap_or_default(), entry.line);
            }
        }
        Command::Turn { id, messages, uuid, provider, parent, agent, parent_call, cwd, json: as_json } => {
            let agent = agent.map(|id| AgentRef { id, parent_call });
            let messages = if messages == "-" {
                let mut read = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut read)
                    .map_err(|e| format!("cannot read the turn from standard input: {e}"))?;
                read
            } else {
                messages
            };
            let uuid = uuid.unwrap_or_else(new_uuid);
            let turn = Turn { uuid, now_ms: now_ms(), cwd: cwd.unwrap_or_default(), provider: provider.into(), messages, parent, agent };
            let entries = engine.append_turn(&id, turn).map_err(fail)?;
            if as_json {
                println!("{}", json(&entries)?);
            } else {
                println!("appended a turn of {} lines to session {id}", entries.len());
            }
        }
        Command::Context { id, format, model, system, inject, json: as_json } => {
            let mut injections: Vec<Injection> =
                system.into_iter().map(|text| Injection { role: Speaker::System, place: Place::Start, text }).collect();
            injections.extend(inject.into_iter().map(|text| Injection { role: Speaker::User, place: Place::BeforeLastPrompt, text }));
            let context = engine.provider_context(&id, format.into(), model.as_deref(), &injections).map_err(fail)?;
            println!("{}", if as_json { json(&context)? } else { context.body });
        }
        Command::Fork { id, from, to } => {
            let new_id = to.unwrap_or_else(new_uuid);
            println!("{}", json(&engine.fork(&id, from.as_deref(), &new_id, now_ms()).map_err(fail)?)?);
        }
        Command::Branches { id } => println!("{}", json(&engine.branches(&id).map_err(fail)?)?),
        Command::Usage { id, input_price, output_price, cache_read_price, cache_write_price } => {
            let prices = match (input_price, output_price, cache_read_price, cache_write_price) {
                (Some(input), Some(output), Some(cache_read), Some(cache_creation)) => {
                    Some(Prices { input, output, cache_read, cache_creation })
                }
                _ => None,
            };
            println!("{}", json(&engine.usage(&id, prices.as_ref()).map_err(fail)?)?);
        }
        Command::Compact { id, plan: only_plan, auto, context_window, keep_recent_tokens } => {
            let settings = Settings { context_window, keep: Keep::RecentTokens(keep_recent_tokens), ..Settings::default() };
            let plan = engine.plan_compaction(&id, &settings, if auto { Mode::Auto } else { Mode::Manual }).map_err(fail)?;
            if only_plan {
                println!("{}", json(&plan)?);
                return Ok(ExitCode::SUCCESS);
            }
            if !plan.has_work() {
                println!("{}", json(&serde_json::json!({ "plan": plan, "applied": null }))?);
                // Asked for outright, a compaction that cannot run is a failure; `--auto`
                // only asks whether one is due.
                let reason = plan.blocked.as_deref().unwrap_or(&plan.reason);
                return if auto { Ok(ExitCode::SUCCESS) } else { Err(format!("nothing was compacted: {reason}")) };
            }
            let ids = CompactionIds { boundary: new_uuid(), summary: new_uuid() };
            let applied = mneme_core::compact_offline(&mut engine, &id, &plan, &ids, now_ms()).map_err(fail)?;
            let applied =
                applied.map_err(|reason| format!("compaction failed, nothing was changed (the failure is recorded): {reason}"))?;
            println!("{}", json(&serde_json::json!({ "plan": plan, "applied": applied }))?);
        }
        Command::Check { id } => {
            let report = engine.check(&id).map_err(fail)?;
            println!("{}", json(&report)?);
            let problems = !report.load.skipped.is_empty()
                || report.load.torn_tail
                || !report.dangling_parents.is_empty()
                || !report.orphaned_tool_uses.is_empty()
                || !report.orphaned_tool_results.is_empty();
            return Ok(if problems { ExitCode::from(3) } else { ExitCode::SUCCESS });
        }
        Command::StorageContract => {
            let broke = sessions::storage_contract();
            println!("{}", json(&broke)?);
            return Ok(if broke.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE });
        }
        Command::Conformance { vector } => {
            let outcome = mneme_conformance::run_vector::<Error, _>(vector, |seed, limits| {
                for (key, bytes) in seed {
                    let path = Path::new(key);
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent).map_err(|e| e.to_string()).expect("create a seed folder");
                    }
                    std::fs::write(path, bytes).expect("write a seed file");
                }
                mneme_conformance::Subject { engine: Imported::new(limits), keys: Box::new(keys_here) }
            })
            .ok_or_else(|| format!("there is no vector {vector}"))?;
            println!("{}", serde_json::to_string(&outcome).map_err(|e| e.to_string())?);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The keys under a prefix in this folder, as the storage names them (Mneme's own
/// `.mneme/` left out).
fn keys_here(prefix: &str) -> Vec<String> {
    fn walk(dir: &Path, base: &str, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if base.is_empty() && name == ".mneme" {
                continue;
            }
            let key = format!("{base}{name}");
            if entry.path().is_dir() {
                walk(&entry.path(), &format!("{key}/"), found);
            } else {
                found.push(key);
            }
        }
    }
    let mut found = Vec::new();
    walk(Path::new("."), "", &mut found);
    found.retain(|key| key.starts_with(prefix));
    found.sort();
    found
}
