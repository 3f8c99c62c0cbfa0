//! `mneme`: agent sessions on the filesystem, run through the Mneme component.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::{Args, Parser, Subcommand, ValueEnum};

// Standard output that a full disk (`mneme gc >> log` from cron) can refuse without a
// panic, in every module of the CLI: `main` reports the refusal and fails.
#[macro_use]
extern crate mneme_cli_stdout;

mod client_resume;
mod crab_cli;
mod interchange_cli;
mod keys_cli;
mod mcp_cli;
mod memory_cli;
mod retention_cli;
use mneme_host::core::gates::{Decision, DreamSettings, ExtractionSettings, FlushSettings, ResetPolicy};
use mneme_host::core::time;
use mneme_host::core::{
    Action, AgentRef, Applied, Branch, CheckReport, CompactionIds, Context, Entry, Injection, Keep, Ledger, Limits, Listing, LoadReport,
    Mode, NewEntry, Place, Plan, Prices, Provider, RepairReport, Role, SessionInfo, Settings, Speaker, Subagent, Transcript, Trigger, Turn,
};
use mneme_host::summarize::Summarizer;
use mneme_host::{Engine, Error, FsStorage, Home, HomeStorage, HostStorage, PgStorage, Runtime};

/// A long session's context is built on every core (`--engine native`), each thread
/// allocating for every message; with glibc's malloc the threads waited on its arena
/// locks (futex calls were a sixth of that work) and a 100 MB context took a fifth
/// longer. mimalloc gives each thread a heap of its own.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "mneme", version, about = "Session and memory engine for LLM agents", long_about = LONG_ABOUT)]
struct Cli {
    #[command(flatten)]
    store: StoreArgs,
    #[command(subcommand)]
    command: Command,
}

const LONG_ABOUT: &str = "Session and memory engine for LLM agents.

Mneme keeps agent conversations as Claude Code JSONL transcripts \
(projects/<project>/<session>.jsonl under the store's root). By default every command \
runs the Mneme core inside its WebAssembly component, embedded in this binary.

Start with `mneme demo`, or point it at your own Claude Code sessions:
  mneme --claude-home ~/.claude sessions list";

// Every command takes these: each command's help lists them apart from its own.
#[derive(Args, Clone)]
#[command(next_help_heading = "Store options (every command)")]
struct StoreArgs {
    /// The store's root folder [default: $MNEME_ROOT, else the per-user data folder, e.g. ~/.local/share/mneme]
    #[arg(long, global = true, value_name = "DIR", conflicts_with = "claude_home")]
    root: Option<PathBuf>,
    /// Read a Claude Code home (such as ~/.claude) as the store, read-only
    #[arg(long, global = true, value_name = "DIR", conflicts_with_all = ["pi_home", "openclaw_home", "crab_home"])]
    claude_home: Option<PathBuf>,
    /// Read pi's sessions (a pi agent folder such as ~/.pi/agent, holding sessions/) as the store, read-only; each cwd folder is a project
    #[arg(long, global = true, value_name = "DIR", conflicts_with_all = ["root", "openclaw_home", "crab_home"])]
    pi_home: Option<PathBuf>,
    /// Read OpenClaw's sessions (an OpenClaw home such as ~/.openclaw, holding agents/<id>/sessions/) as the store, read-only; each agent is a project
    #[arg(long, global = true, value_name = "DIR", conflicts_with_all = ["root", "crab_home"])]
    openclaw_home: Option<PathBuf>,
    /// Read a crab daemon's folder (holding a flat sessions/ of <agent>_<sender>_<seq>.jsonl) as the store, read-only; its sessions are the project `crab`
    #[arg(long, global = true, value_name = "DIR", conflicts_with = "root")]
    crab_home: Option<PathBuf>,
    /// A PostgreSQL database as the store (postgres://user:password@host/db, or libpq's `host=… dbname=…`): sessions and memory live in its `mneme` schema, shared by every process on every machine that names it
    #[arg(long, global = true, value_name = "URL", conflicts_with_all = ["root", "claude_home", "pi_home", "openclaw_home", "crab_home"])]
    store: Option<String>,
    /// How to run the core: inside the WebAssembly component, or linked natively
    #[arg(long, global = true, value_enum, default_value_t = EngineKind::Component)]
    engine: EngineKind,
    /// Size at which a transcript part is closed and `<id>_part<N>.jsonl` begun (e.g. 50MiB)
    #[arg(long, global = true, value_name = "SIZE", value_parser = mneme_host::core::parse_limit, default_value = "50MiB")]
    part_limit: u64,
    /// Total size past which appends to a session are refused until it is compacted
    #[arg(long, global = true, value_name = "SIZE", value_parser = mneme_host::core::parse_limit, default_value = "200MiB")]
    total_limit: u64,
    /// Secrets taken out of every line and memory file before it is written, replaced by `[REDACTED:<kind>]`: `all`, `none`, or kinds separated by commas (anthropic-api-key, openai-api-key, google-api-key, aws-access-key, github-token, slack-token, bearer-token, private-key, env-secret, jwt, stripe-key, url-password)
    #[arg(long, global = true, value_name = "KINDS", env = "MNEME_REDACT", default_value = "all")]
    redact: String,
}

impl StoreArgs {
    /// No agent's own folder is named as the store (those are read-only).
    fn writable_root(&self) -> bool {
        [&self.claude_home, &self.pi_home, &self.openclaw_home, &self.crab_home].iter().all(|home| home.is_none())
    }
}

/// The refusal of a command that would `change` a store only read, refused before it
/// starts (a paid model's summary would be thrown away), saying what only `looks`.
fn read_only(change: &str, looks: &str) -> String {
    format!(
        "the store is read-only (a --claude-home, --pi-home, --openclaw-home or --crab-home is only read), so nothing can {change} \
         here ({looks}); name the folder with --root to write there"
    )
}

/// A count of results: 0 would show nothing and say nothing matched.
pub(crate) fn at_least_one(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("0 shows nothing: give 1 or more".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a whole number: give 1 or more")),
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum EngineKind {
    /// The Mneme component under wasmtime (the product)
    Component,
    /// The same core linked into this binary, without wasm
    Native,
}

#[derive(Subcommand)]
enum Command {
    /// List and inspect sessions
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Long-term memory: Claude Code's memory files (projects/<project>/memory/),
    /// MEMORY.md, recall, and the CLAUDE.md instructions a session loads
    Memory(memory_cli::MemoryArgs),
    /// The session index: which session each conversation key (an agent's main chat,
    /// a group, a cron job, a webhook) continues, resets, and the labels on it
    Keys(keys_cli::KeysArgs),
    /// crab's sessions: <agent>_<sender>_<seq>.jsonl with its meta line — start, find
    /// the latest, title (renames the file), add uptime — appended, never rewritten
    Crab(crab_cli::CrabArgs),
    /// Import other agents' transcripts as sessions: Claude Code and pi files (pi v1
    /// and v2 migrated to v3, as pi does), Codex CLI rollouts, Gemini CLI chats and
    /// OpenAI message arrays. The files are only read; each new session's last line
    /// records where it came from. A session id the store has already is not imported
    /// again
    Import(interchange_cli::ImportArgs),
    /// Write a session out as Claude Code or pi JSONL, OpenAI chat messages or
    /// Markdown: as stored when it is in that dialect already, else as the
    /// conversation it resumes to
    Export(interchange_cli::ExportArgs),
    /// Clean up: archive sessions past their time to live (default 30 days; moved under
    /// archive/, listed by `sessions archived`, brought back by `sessions restore`),
    /// delete archived ones only with --delete-archived, and keep debris and the archive
    /// under --max-disk. Meant to run nightly; --dry-run says what it would do
    Gc(retention_cli::GcArgs),
    /// Find messages across every session: words matched by stem (stopwords ignored),
    /// the user's own counting twice, each session read as one text too
    Search {
        /// What to look for
        query: String,
        /// How many messages to show (1 or more)
        #[arg(long, default_value_t = 10, value_parser = at_least_one, allow_negative_numbers = true)]
        limit: usize,
        /// Only the sessions of this project: its folder name under projects/ (e.g.
        /// -home-me-app), or its working directory (a path, e.g. ./app)
        #[arg(long, value_name = "PROJECT", allow_hyphen_values = true, value_parser = project_arg)]
        project: Option<String>,
        #[command(flatten)]
        window: WindowArgs,
        /// Print a JSON array of {id, project, format, cwd, uuid, role, timestamp, text, score, matched, resume}, best first (`resume`: the shell command that reopens the session in its client, when there is one)
        #[arg(long)]
        json: bool,
        /// A static embedding table to rank by meaning as well as by words: the text form
        /// GloVe, word2vec and fastText publish (a word per line, then its values)
        #[arg(long, value_name = "FILE", env = "MNEME_EMBEDDINGS")]
        embeddings: Option<PathBuf>,
    },
    /// Append a message or a whole turn to a session, creating the session if it does
    /// not exist. A turn (`--message`, `--turn`) is written in one write: all of it or
    /// nothing
    Append {
        /// The session id (letters, digits, '-' and '_'; Claude Code resumes only UUIDs,
        /// so use one for a session you will open in `claude --resume`)
        id: String,
        #[command(flatten)]
        what: AppendArgs,
        #[command(flatten)]
        agent: AgentArgs,
        /// Continue from this entry instead of the newest message (a rewind: the later
        /// messages stay in the file, on their own branch)
        #[arg(long, value_name = "UUID")]
        parent: Option<String>,
    },
    /// Continue a session from an earlier message: append there instead of after the
    /// newest message. Nothing is deleted; the later messages stay on their own branch
    /// (see `branches`)
    Rewind {
        /// The session id
        id: String,
        /// The entry to continue from
        #[arg(value_name = "UUID")]
        to: String,
        #[command(flatten)]
        what: AppendArgs,
    },
    /// Copy a session's conversation, up to a message, into a new session (as
    /// `claude --fork-session` and pi's `/fork` do); the original is untouched
    Fork {
        /// The session to fork
        id: String,
        /// The last message to copy [default: the newest]
        #[arg(long, value_name = "UUID")]
        from: Option<String>,
        /// The new session's id [default: a new UUID, which Claude Code can resume]
        #[arg(long, value_name = "ID")]
        to: Option<String>,
        /// Print the lines written as JSON
        #[arg(long)]
        json: bool,
    },
    /// List a session's branches: each leaf message, its time, text and tokens, and
    /// where it leaves the current branch
    Branches {
        /// The session id
        id: String,
        /// Print JSON ([{leaf, current, role, text, timestamp, message_count, forks_at, usage, cost}])
        #[arg(long)]
        json: bool,
    },
    /// Show the tokens a session's replies reported (each reply once), in all and per
    /// branch, and what they cost when prices are given
    Usage {
        /// The session id
        id: String,
        /// Dollars per million input tokens (all four prices or none: one left out
        /// would count its tokens as free; 0 for what is free)
        #[arg(long, value_name = "USD", allow_negative_numbers = true, requires_all = ["output_price", "cache_read_price", "cache_write_price"])]
        input_price: Option<f64>,
        /// Dollars per million output tokens
        #[arg(long, value_name = "USD", allow_negative_numbers = true, requires_all = ["input_price", "cache_read_price", "cache_write_price"])]
        output_price: Option<f64>,
        /// Dollars per million cache-read tokens
        #[arg(long, value_name = "USD", allow_negative_numbers = true, requires_all = ["input_price", "output_price", "cache_write_price"])]
        cache_read_price: Option<f64>,
        /// Dollars per million cache-write tokens
        #[arg(long, value_name = "USD", allow_negative_numbers = true, requires_all = ["input_price", "output_price", "cache_read_price"])]
        cache_write_price: Option<f64>,
        /// Print JSON ({total, cost, replies, branches, subagents})
        #[arg(long)]
        json: bool,
    },
    /// Print the context a model would get when resuming a session: the main
    /// conversation from its last compaction on
    #[command(override_usage = "mneme resume <ID> [--json]\n       mneme resume --latest [--json]")]
    Resume {
        /// The session id
        #[arg(required_unless_present = "latest", conflicts_with = "latest")]
        id: Option<String>,
        /// Resume the most recently updated session
        #[arg(long)]
        latest: bool,
        /// Print JSON ({compacted, messages: [{uuid, role, text, content: [blocks], is_compact_summary, model}]})
        #[arg(long)]
        json: bool,
    },
    /// Print what to send a model to continue a session, as the request JSON of a
    /// provider: roles alternating, split replies merged, every tool call answered
    Context {
        /// The session id
        id: String,
        /// The provider's message shape
        #[arg(long, value_enum, default_value_t = ProviderArg::Anthropic)]
        format: ProviderArg,
        /// The model the request goes to (its API name, e.g. claude-opus-4-5): the signed
        /// thinking of replies another model wrote is then sent as the session's client
        /// sends it (Claude Code's sessions: left out; pi's: as text), since the API
        /// refuses its signature ("Invalid signature in thinking block"). Without it,
        /// signed thinking is sent as recorded
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// A system prompt to put in the request (not written to the session); repeatable
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        system: Vec<String>,
        /// Context to inject just before the newest prompt, e.g. recalled memories (not
        /// written to the session); repeatable
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        inject: Vec<String>,
        /// Print the whole record ({provider, body, message_count, compacted, tokens,
        /// interrupted}) instead of the request body. `tokens` estimates this body (4
        /// characters a token); `compact --plan`'s `tokens_before` is what the trigger
        /// weighs: the provider's last reported usage, plus estimates of what came after
        #[arg(long)]
        json: bool,
    },
    /// Check a session (or a transcript file) for unreadable lines, a torn tail, glued
    /// objects, dangling parents and unanswered tool calls. Exits with status 3 when it
    /// finds problems
    Check {
        /// A session id, or the path of a transcript (one with a `/` or ending in .jsonl:
        /// `./notes` for a file `notes` here)
        target: String,
        /// Print JSON (see the README)
        #[arg(long)]
        json: bool,
    },
    /// Repair a session's broken lines: back the original up, rewrite it, print what changed
    Repair {
        /// The session id
        id: String,
        /// Print JSON ({backups, dropped, split_glued, fixed_utf8, fixed_surrogates, dropped_torn_tail, relinked})
        #[arg(long)]
        json: bool,
    },
    /// Compact a session: summarise its older part and keep the recent part, as
    /// `/compact` does. Nothing is deleted; resume starts at the new boundary
    Compact(CompactArgs),
    /// Show the background-work gates of a session: memory flush, memory extraction,
    /// session reset, and the store's memory consolidation
    Gates(GatesArgs),
    /// Run a scripted conversation, then an agent loop (an offline model calling two tools,
    /// auto-compacting), into a fresh store through the component, and show what happened
    Demo {
        /// Where to create the demo store [default: a new folder in the system temp dir]
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Serve the store to MCP clients on stdio (Claude Code: `claude mcp add mneme --
    /// mneme mcp`): tools memory (Claude's memory tool over the memory files), recall,
    /// search_sessions, list_sessions, show_session and instructions, and the project's
    /// and the global MEMORY.md as resources; --http serves streamable HTTP on 127.0.0.1
    Mcp(mcp_cli::McpArgs),
}

#[derive(Args)]
struct CompactArgs {
    /// A session id, or the path of a transcript, one with a `/` or ending in .jsonl
    /// (`<root>/projects/<project>/<id>.jsonl`; a file outside a store can only be planned)
    target: String,
    /// Print the plan and write nothing (plans a manual compaction, whatever the trigger says)
    #[arg(long)]
    plan: bool,
    /// Compact only if the trigger says the context is full (as after each turn)
    #[arg(long, conflicts_with = "overflow")]
    auto: bool,
    /// The provider refused the context as too long: compact once so the request can be retried
    #[arg(long)]
    overflow: bool,
    /// Print JSON: the plan with --plan, else {plan, applied}
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    settings: CompactionFlags,
    #[command(flatten)]
    summarizer: SummarizerFlags,
}

#[derive(Args)]
struct CompactionFlags {
    /// The model's context window in tokens [default: from --model, else 200000]
    #[arg(long, value_name = "TOKENS")]
    context_window: Option<u64>,
    /// The model the session talks to, to look its context window up
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Trigger at this fraction of the window
    #[arg(long, value_name = "F", default_value_t = 0.9, conflicts_with = "reserve_tokens")]
    threshold: f64,
    /// Trigger instead when fewer than this many tokens are left (pi's reserveTokens)
    #[arg(long, value_name = "TOKENS")]
    reserve_tokens: Option<u64>,
    /// The least headroom a reserve trigger leaves (OpenClaw's floor)
    #[arg(long, value_name = "TOKENS", default_value_t = 20_000)]
    reserve_floor: u64,
    /// Keep at least this many tokens of the newest messages
    #[arg(long, value_name = "TOKENS", default_value_t = 20_000, conflicts_with = "keep_messages", allow_negative_numbers = true)]
    keep_recent_tokens: u64,
    /// Keep at least this many of the newest messages instead
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    keep_messages: Option<u32>,
    /// Clear the oldest tool results past this many characters before summarising
    #[arg(long, value_name = "CHARS", default_value_t = 50_000)]
    tool_result_budget: u64,
    /// Consecutive failed compactions after which --auto stops compacting
    #[arg(long, value_name = "N", default_value_t = 3)]
    max_failures: u32,
    /// The summariser's own context window; a longer conversation is summarised in
    /// rolling steps [default: the session's window]
    #[arg(long, value_name = "TOKENS")]
    summarizer_window: Option<u64>,
}

impl CompactionFlags {
    fn settings(&self) -> Settings {
        let window = self.context_window.or_else(|| self.model.as_deref().and_then(mneme_host::core::tokens::context_window));
        Settings {
            context_window: window.unwrap_or(mneme_host::core::tokens::DEFAULT_CONTEXT_WINDOW),
            trigger: match self.reserve_tokens {
                Some(reserve_tokens) => Trigger::Reserve { reserve_tokens, floor: self.reserve_floor },
                None => Trigger::Fraction(self.threshold),
            },
            keep: match self.keep_messages {
                Some(n) => Keep::RecentMessages(n),
                None => Keep::RecentTokens(self.keep_recent_tokens),
            },
            tool_result_budget_chars: self.tool_result_budget,
            max_failures: self.max_failures,
            summarizer_window: self.summarizer_window,
        }
    }
}

/// The API key for a model API at `base_url`: from the variable `flag` names, or
/// `default`. A key is optional (a local server takes none), but a vendor's own API
/// (`own_host`) refuses every request without one, and a variable named with the flag
/// must hold one: either is said before anything is sent.
pub(crate) fn api_key(
    (flag, named): (&str, Option<&str>),
    default: &str,
    base_url: &str,
    own_host: &str,
) -> Result<Option<String>, String> {
    let variable = named.unwrap_or(default);
    match std::env::var(variable).ok().filter(|key| !key.is_empty()) {
        Some(key) => Ok(Some(key)),
        None if named.is_some() => Err(format!("{flag} names {variable}, which holds no API key")),
        None if mneme_host::summarize::host_of(base_url).eq_ignore_ascii_case(own_host) => {
            Err(format!("no API key for {base_url}: set {variable} (or name the variable that holds it with {flag})"))
        }
        None => Ok(None),
    }
}

#[derive(Args)]
pub(crate) struct SummarizerFlags {
    /// Who writes the summary (or extracts memories)
    #[arg(long, value_enum, env = "MNEME_SUMMARIZER", default_value_t = SummarizerKind::Extractive)]
    summarizer: SummarizerKind,
    /// The summariser's base URL [defaults: https://api.openai.com/v1, https://api.anthropic.com, http://127.0.0.1:11434]
    #[arg(long, env = "MNEME_SUMMARIZER_URL", value_name = "URL")]
    summarizer_url: Option<String>,
    /// The summariser's model [defaults: gpt-4o-mini, claude-haiku-4-5, llama3.1]
    #[arg(long, env = "MNEME_SUMMARIZER_MODEL", value_name = "NAME")]
    summarizer_model: Option<String>,
    /// The environment variable holding the API key [defaults: OPENAI_API_KEY, ANTHROPIC_API_KEY]
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SummarizerKind {
    /// Offline: requests, first sentences of replies, tools and files (no network)
    Extractive,
    /// An OpenAI-compatible /chat/completions API (OpenAI, vLLM, llama.cpp, LM Studio)
    Openai,
    /// The Anthropic Messages API
    Anthropic,
    /// Ollama's /api/chat
    Ollama,
}

impl SummarizerFlags {
    /// The summariser asked for. A key is optional (a local OpenAI-compatible server
    /// takes none), but OpenAI's and Anthropic's own APIs refuse every request without
    /// one, and a variable named with --api-key-env must hold one: either is said
    /// before anything is sent.
    pub(crate) fn summarizer(&self) -> Result<Summarizer, String> {
        let url = |default: &str| self.summarizer_url.clone().unwrap_or_else(|| default.to_owned());
        let model = |default: &str| self.summarizer_model.clone().unwrap_or_else(|| default.to_owned());
        let key = |default: &str, base_url: &str, own_host: &str| {
            api_key(("--api-key-env", self.api_key_env.as_deref()), default, base_url, own_host)
        };
        Ok(match self.summarizer {
            SummarizerKind::Extractive => Summarizer::Extractive,
            SummarizerKind::Openai => {
                let base_url = url("https://api.openai.com/v1");
                let api_key = key("OPENAI_API_KEY", &base_url, "api.openai.com")?;
                Summarizer::OpenAi { base_url, model: model("gpt-4o-mini"), api_key }
            }
            SummarizerKind::Anthropic => {
                let base_url = url("https://api.anthropic.com");
                let api_key = key("ANTHROPIC_API_KEY", &base_url, "api.anthropic.com")?;
                Summarizer::Anthropic { base_url, model: model("claude-haiku-4-5"), api_key }
            }
            SummarizerKind::Ollama => Summarizer::Ollama { base_url: url("http://127.0.0.1:11434"), model: model("llama3.1") },
        })
    }
}

#[derive(Args)]
struct GatesArgs {
    /// The session id
    id: String,
    /// The model's context window in tokens, for the memory flush
    #[arg(long, value_name = "TOKENS", default_value_t = 200_000)]
    context_window: u64,
    /// Tokens the runtime keeps free before compaction: the flush runs before them
    #[arg(long, value_name = "TOKENS", default_value_t = FlushSettings::default().reserve_floor)]
    reserve_floor: u64,
    /// How far before the reserve the memory flush runs
    #[arg(long, value_name = "TOKENS", default_value_t = FlushSettings::default().soft_threshold)]
    soft_threshold: u64,
    /// Start a new session after this many idle minutes
    #[arg(long, value_name = "MINUTES")]
    idle_minutes: Option<u32>,
    /// Start a new session daily at this hour (local time of --utc-offset)
    #[arg(long, value_name = "HOUR", value_parser = clap::value_parser!(u8).range(0..24))]
    daily_reset_hour: Option<u8>,
    /// Minutes east of UTC for --daily-reset-hour
    #[arg(long, value_name = "MINUTES", default_value_t = 0, allow_hyphen_values = true)]
    utc_offset: i32,
    /// Start a new session when it is older than this many days
    #[arg(long, value_name = "DAYS")]
    ttl_days: Option<u32>,
    /// Print JSON ({memory_flush, extraction, reset, dream}, each {fire, reason})
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum SortBy {
    Updated,
    Created,
    Messages,
    Bytes,
}

/// `--since` and `--until`: a date, an RFC 3339 timestamp, or an age before now.
fn parse_since(text: &str) -> Result<i64, String> {
    let text = text.trim();
    // Unsigned: `-5d` would be five days ahead, a time nothing in a store is from yet.
    let age =
        |digits: &str, unit_ms: i64| digits.parse::<u32>().ok().map(|n| now_ms().saturating_sub(i64::from(n).saturating_mul(unit_ms)));
    let parsed = match text.char_indices().last() {
        Some((at, 'd')) if at > 0 => age(&text[..at], 86_400_000),
        Some((at, 'h')) if at > 0 => age(&text[..at], 3_600_000),
        _ if text.len() == 10 => time::parse_millis(&format!("{text}T00:00:00.000Z")),
        _ => time::parse_millis(text),
    };
    parsed.ok_or_else(|| {
        format!("`{text}` is not a date (2026-11-01), a timestamp (2026-11-01T08:00:00Z) or an age counted back from now (36h, 7d)")
    })
}

/// A time window of `search`, `memory recall` and `memory list`.
#[derive(Args)]
pub(crate) struct WindowArgs {
    /// Only what is from then on: a date (2026-11-01), a timestamp, or an age (36h, 7d)
    #[arg(long, value_name = "WHEN", value_parser = parse_since)]
    since: Option<i64>,
    /// Only what is from before then: a date (2026-12-01: up to the end of November), a timestamp, or an age
    #[arg(long, value_name = "WHEN", value_parser = parse_since)]
    until: Option<i64>,
}

impl WindowArgs {
    pub(crate) fn window(&self) -> mneme_host::core::Window {
        mneme_host::core::Window { since_ms: self.since, until_ms: self.until }
    }
}

#[derive(Subcommand)]
enum SessionsCommand {
    /// List the sessions in the store, most recently updated first. Served from the
    /// session index: only sessions whose files changed since the last listing are read
    List {
        /// Order by this, largest or newest first
        #[arg(long, value_enum, default_value_t = SortBy::Updated)]
        sort: SortBy,
        /// Only sessions of this project: its folder name under projects/ (e.g.
        /// -home-me-app), or its working directory (a path, e.g. ./app)
        #[arg(long, value_name = "PROJECT", allow_hyphen_values = true, value_parser = project_arg)]
        project: Option<String>,
        /// Only sessions updated since then: a date (2026-11-01), a timestamp, or an age (36h, 7d)
        #[arg(long, value_name = "WHEN", value_parser = parse_since)]
        since: Option<i64>,
        /// Print JSON ({sessions, skipped}; see docs/cli.md)
        #[arg(long)]
        json: bool,
    },
    /// Show a session's conversation (the main chain) and what the load had to skip
    Show {
        /// The session id
        id: String,
        /// Show every entry: all branches, sidechains and sub-agent transcripts
        #[arg(long)]
        all: bool,
        /// Print JSON ({id, project, parts, entries, chain, report}; with --all also subagents; see the README)
        #[arg(long)]
        json: bool,
    },
    /// Remove a session: every part, its sub-agent transcripts and sidecar files
    Rm {
        /// The session id
        id: String,
        /// Do not ask for confirmation
        #[arg(long, short)]
        yes: bool,
    },
    /// Move a session into the archive now (every file of it; `restore` brings it back)
    Archive {
        /// The session id
        id: String,
    },
    /// List archived sessions, oldest first
    Archived {
        /// Print JSON (an array of {id, project, archived_ms, files, bytes})
        #[arg(long)]
        json: bool,
    },
    /// Bring an archived session back, every file as it was
    Restore {
        /// The session id
        id: String,
    },
    /// Soft-delete one entry: it stays in the file but no longer loads
    Tombstone {
        /// The session id
        id: String,
        /// The uuid of the entry to delete (see `sessions show --json`)
        uuid: String,
    },
}

/// What to append: a text, a message or a turn.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["text", "message", "turn"])))]
struct AppendArgs {
    /// Who speaks (with --text)
    #[arg(long, value_enum, requires = "text", conflicts_with_all = ["message", "turn"])]
    role: Option<RoleArg>,
    /// The message text
    #[arg(long, requires = "role", allow_hyphen_values = true)]
    text: Option<String>,
    /// A message as JSON, or a JSON array of messages: Anthropic message (or API
    /// response) objects with content blocks, or OpenAI chat messages with
    /// --provider openai
    #[arg(long, value_name = "JSON", conflicts_with = "turn")]
    message: Option<String>,
    /// A file of messages, one JSON message per line (JSONL) or one JSON array; `-`
    /// reads standard input
    #[arg(long, value_name = "FILE")]
    turn: Option<PathBuf>,
    /// The shape of --message / --turn
    #[arg(long, value_enum, default_value_t = ProviderArg::Anthropic)]
    provider: ProviderArg,
    /// The working directory recorded in the entry; a new session is filed under the
    /// project folder derived from it [default: the current directory]
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print the written entries as JSON
    #[arg(long)]
    json: bool,
    /// The written entry's uuid (a turn's later lines derive theirs from it)
    /// [default: a new UUID]. Give a sub-agent's first turn that failed again with the
    /// same one: a link to it that landed is not written twice
    #[arg(long, value_name = "UUID")]
    uuid: Option<String>,
}

/// Where a sub-agent's turn goes (append only: a rewind is of the session's own turns).
#[derive(Args)]
struct AgentArgs {
    /// Write into this sub-agent's transcript of the session instead
    /// (`<session>/subagents/agent-<ID>.jsonl`, Claude Code sessions)
    #[arg(long, value_name = "ID", conflicts_with = "parent")]
    agent: Option<String>,
    /// The session's pending tool call that started the sub-agent: its first turn links
    /// it from there, as Claude Code does (read on that turn only: later turns may give
    /// it again, and it changes nothing)
    #[arg(long, value_name = "TOOL_USE_ID", requires = "agent")]
    parent_call: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
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

#[derive(Clone, Copy, ValueEnum)]
enum RoleArg {
    User,
    Assistant,
}

/// Not an error of the command: `check` found problems in what it checked.
const PROBLEMS_FOUND: &str = "problems found";

fn main() -> ExitCode {
    restore_default_sigpipe();
    let cli = Cli::parse();
    // A server's reads are its clients' requests, over its whole life: no line to end.
    if !matches!(cli.command, Command::Mcp(_)) {
        mneme_host::progress::install();
    }
    let outcome = run(cli);
    mneme_host::progress::finish();
    let refused = mneme_cli_stdout::refused();
    if let Some(refused) = &refused {
        let done = if outcome.is_ok() { "the command's work was done, but " } else { "" };
        eprintln!("error: {done}its output could not be written to standard output: {refused}");
    }
    match outcome {
        Ok(()) if refused.is_some() => ExitCode::FAILURE,
        Ok(()) => ExitCode::SUCCESS,
        Err(message) if message == PROBLEMS_FOUND => ExitCode::from(3),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

type CliResult = Result<(), String>;

/// Rust ignores SIGPIPE, which turns `mneme … | head` into a panic on the next print.
/// A command-line tool should simply stop when its reader goes away.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists; SIG_DFL is a
    // valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The store's sessions, newest first. Files that look like sessions but cannot be
/// read as one are named on stderr, so they are neither fatal nor silent.
fn list_sessions(engine: &mut dyn Engine<Error>) -> Result<Listing, String> {
    let listing = engine.list().map_err(|e| e.to_string())?;
    for skipped in &listing.skipped {
        eprintln!("mneme: skipped {}: {}", skipped.key, skipped.reason);
    }
    Ok(listing)
}

fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Demo { .. } if cli.store.root.is_some() => {
            Err("`demo` writes a fresh store of its own and never an existing one: give its folder with `mneme demo --dir DIR`".into())
        }
        Command::Demo { dir } => demo(dir, cli.store.engine),
        Command::Mcp(args) => mcp_cli::run(&cli.store, args),
        Command::Memory(args) if args.asks_a_model_to_write() && !cli.store.writable_root() => {
            Err(read_only("extract memories", "`memory extract --dry-run` only looks"))
        }
        Command::Memory(args) => memory_cli::run(|| open(&cli.store), args, now_ms()),
        // A read-only home's keys would live in Mneme's cache folder, which is no store.
        Command::Keys(args) if args.changes_keys() && !cli.store.writable_root() => {
            Err(read_only("record or change a key", "`keys list` and `keys show` only look"))
        }
        Command::Keys(args) => keys_cli::run(|| open(&cli.store), args, now_ms()),
        Command::Crab(args) => crab_cli::run(|| open(&cli.store), args, now_ms()),
        // Sessions would be refused one by one, and keys kept in the cache folder.
        Command::Import(_) if !cli.store.writable_root() => Err(read_only("import", "`sessions list` shows what is there")),
        Command::Import(args) => interchange_cli::import(&mut *open(&cli.store)?, args, now_ms()),
        Command::Export(args) => interchange_cli::export(&mut *open(&cli.store)?, args),
        Command::Gc(args) if !args.dry_run && !cli.store.writable_root() => {
            Err(read_only("archive or delete", "`gc --dry-run` only looks"))
        }
        Command::Gc(args) => retention_cli::gc(&mut *open(&cli.store)?, args, now_ms()),
        Command::Sessions(SessionsCommand::Archive { id }) => retention_cli::archive(&mut *open(&cli.store)?, &id, now_ms()),
        Command::Sessions(SessionsCommand::Archived { json }) => retention_cli::archived(&mut *open(&cli.store)?, json),
        Command::Sessions(SessionsCommand::Restore { id }) => retention_cli::restore(&mut *open(&cli.store)?, &id),
        Command::Search { query, limit, project, window, json, embeddings } => {
            let mut engine = open(&cli.store)?;
            use_embeddings(engine.as_mut(), embeddings.as_deref())?;
            let hits = engine.search(&query, limit, project.as_deref(), window.window()).map_err(|e| e.to_string())?;
            let found = client_resume::found(&cli.store, hits);
            if json {
                return print_json(&found);
            }
            if found.is_empty() {
                println!("no message matches (words are matched by stem; stopwords are ignored)");
                absent_root_hint(&cli.store);
            }
            for client_resume::Found { hit, .. } in &found {
                let when = hit.timestamp.as_deref().unwrap_or("-");
                // A message found through its session, not its own words.
                let context = if hit.matched { "" } else { " (context)" };
                println!("{:>7.3}  {}  {when}  {}  {}{context}: {}", hit.score, hit.id, hit.project, hit.role, shown(&hit.text));
            }
            print_resume_commands(&found);
            Ok(())
        }
        Command::Sessions(SessionsCommand::List { sort, project, since, json }) => {
            let Listing { mut sessions, skipped } = list_sessions(&mut *open(&cli.store)?)?;
            let stamp = |t: &Option<String>| t.as_deref().and_then(time::parse_millis);
            let stored = sessions.len();
            sessions
                .retain(|s| project.as_ref().is_none_or(|p| &s.project == p) && since.is_none_or(|since| stamp(&s.updated) >= Some(since)));
            if sessions.is_empty() && stored > 0 && !json {
                println!("none of the store's sessions ({stored}) matches --project/--since");
                return Ok(());
            }
            match sort {
                SortBy::Updated => {}
                SortBy::Created => sessions.sort_by(|a, b| b.created.cmp(&a.created)),
                SortBy::Messages => sessions.sort_by_key(|s| std::cmp::Reverse(s.message_count)),
                SortBy::Bytes => sessions.sort_by_key(|s| std::cmp::Reverse(s.bytes)),
            }
            if json {
                return print_json(&Listing { sessions, skipped });
            }
            print_sessions(&sessions)?;
            if sessions.is_empty() {
                absent_root_hint(&cli.store);
            }
            Ok(())
        }
        Command::Sessions(SessionsCommand::Show { id, all, json }) => {
            let mut sessions = open(&cli.store)?;
            let id = session_id(&mut *sessions, id)?;
            let transcript = sessions.load(&id).map_err(|e| e.to_string())?;
            let subagents = if all { sessions.subagents(&id).map_err(|e| e.to_string())? } else { Vec::new() };
            match (json, all) {
                (true, false) => print_json(&transcript),
                (true, true) => print_json(&serde_json::json!({ "transcript": transcript, "subagents": subagents })),
                (false, _) => print_transcript(&transcript, all, &subagents),
            }
        }
        // Removing and deleting take a whole id: a start that named another session
        // than the one meant would remove it without a question under --yes.
        Command::Sessions(SessionsCommand::Rm { id, yes }) => remove(&mut *open(&cli.store)?, &id, yes),
        Command::Sessions(SessionsCommand::Tombstone { id, uuid }) => {
            open(&cli.store)?.tombstone(&id, &uuid, now_ms()).map_err(|e| e.to_string())?;
            println!("deleted entry {uuid} of session {id} (a tombstone was appended; the entry stays in the file)");
            Ok(())
        }
        Command::Resume { id, latest, json } => {
            let mut sessions = open(&cli.store)?;
            let id = match (id, latest) {
                (Some(id), _) => session_id(&mut *sessions, id)?,
                (None, _) => {
                    list_sessions(&mut *sessions)?.sessions.into_iter().next().map(|s| s.id).ok_or("the store has no sessions to resume")?
                }
            };
            let context = sessions.context(&id).map_err(|e| e.to_string())?;
            if json { print_json(&context) } else { print_context(&id, &context) }
        }
        Command::Check { target, json } => {
            let mut sessions = open(&cli.store)?;
            let path = transcript_path(&target)?;
            let report = if let Some(path) = path {
                let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                sessions.check_bytes(&bytes)
            } else {
                let id = session_id(&mut *sessions, target.clone())?;
                sessions.check(&id)
            }
            .map_err(|e| e.to_string())?;
            if json {
                print_json(&report)?
            } else {
                print_check(&target, &report)
            }
            if report.has_problems() { Err(PROBLEMS_FOUND.to_owned()) } else { Ok(()) }
        }
        Command::Compact(args) => compact(&cli.store, args),
        Command::Gates(args) => {
            let mut sessions = open(&cli.store)?;
            let id = session_id(&mut *sessions, args.id.clone())?;
            let policy = ResetPolicy {
                idle_minutes: args.idle_minutes,
                daily_reset_hour: args.daily_reset_hour,
                utc_offset_minutes: args.utc_offset,
                ttl_ms: args.ttl_days.map(|d| i64::from(d) * 86_400_000),
            };
            let flush = FlushSettings {
                context_window: args.context_window,
                reserve_floor: args.reserve_floor,
                soft_threshold: args.soft_threshold,
            };
            let now = now_ms();
            let e = |e: mneme_host::Error| e.to_string();
            let gates = [
                ("memory_flush", sessions.memory_flush_gate(&id, &flush).map_err(e)?),
                ("extraction", sessions.extraction_gate(&id, &ExtractionSettings::default()).map_err(e)?),
                ("reset", sessions.reset_gate(&id, now, &policy).map_err(e)?),
                ("dream", sessions.dream_gate(now, &DreamSettings::default()).map_err(e)?),
            ];
            if args.json {
                print_json(&gates.iter().map(|(name, d)| (*name, d)).collect::<std::collections::BTreeMap<&str, &Decision>>())
            } else {
                for (name, decision) in &gates {
                    println!("{:<13} {}  {}", name.replace('_', " "), if decision.fire { "yes" } else { "no " }, decision.reason);
                }
                Ok(())
            }
        }
        Command::Repair { id, json } => {
            let mut sessions = open(&cli.store)?;
            let id = session_id(&mut *sessions, id)?;
            let report = sessions.repair(&id, now_ms()).map_err(|e| e.to_string())?;
            if json { print_json(&report) } else { print_repair(&id, &report) }
        }
        Command::Append { id, what, agent, parent } => append(&mut *open(&cli.store)?, &id, what, agent, parent),
        Command::Rewind { id, to, what } => {
            append(&mut *open(&cli.store)?, &id, what, AgentArgs { agent: None, parent_call: None }, Some(to))
        }
        Command::Fork { id, from, to, json } => {
            let new_id = to.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            let mut sessions = open(&cli.store)?;
            let id = session_id(&mut *sessions, id)?;
            let entries = sessions.fork(&id, from.as_deref(), &new_id, now_ms()).map_err(|e| e.to_string())?;
            note_unresumable(&new_id, entries.first());
            if json {
                print_json(&entries)
            } else {
                println!("forked session {id} into {new_id} ({} entries)", entries.len());
                Ok(())
            }
        }
        Command::Branches { id, json } => {
            let mut sessions = open(&cli.store)?;
            let id = session_id(&mut *sessions, id)?;
            let branches = sessions.branches(&id).map_err(|e| e.to_string())?;
            if json { print_json(&branches) } else { print_branches(&branches) }
        }
        Command::Usage { id, input_price, output_price, cache_read_price, cache_write_price, json } => {
            // The parser takes all four or none.
            let prices = match (input_price, output_price, cache_read_price, cache_write_price) {
                (Some(input), Some(output), Some(cache_read), Some(cache_creation)) => {
                    Some(Prices { input, output, cache_read, cache_creation })
                }
                _ => None,
            };
            let mut sessions = open(&cli.store)?;
            let id = session_id(&mut *sessions, id)?;
            let ledger = sessions.usage(&id, prices.as_ref()).map_err(|e| e.to_string())?;
            if json { print_json(&ledger) } else { print_ledger(&ledger) }
        }
        Command::Context { id, format, model, system, inject, json } => {
            let mut injections: Vec<Injection> =
                system.into_iter().map(|text| Injection { role: Speaker::System, place: Place::Start, text }).collect();
            injections.extend(inject.into_iter().map(|text| Injection { role: Speaker::User, place: Place::BeforeLastPrompt, text }));
            let mut sessions = open(&cli.store)?;
            let id = session_id(&mut *sessions, id)?;
            let context = sessions.provider_context(&id, format.into(), model.as_deref(), &injections).map_err(|e| e.to_string())?;
            if json {
                print_json(&context)
            } else {
                println!("{}", context.body);
                Ok(())
            }
        }
    }
}

/// `--cwd` (or the current directory) as Claude Code records a working directory,
/// absolute: a project's folder is named after it, and `claude --resume` looks there
/// from the folder it runs in.
pub(crate) fn working_dir(cwd: Option<PathBuf>) -> Result<PathBuf, String> {
    match cwd {
        Some(cwd) => absolute_dir(&cwd, "--cwd"),
        None => std::env::current_dir().map_err(|e| format!("cannot read the current directory ({e}); pass --cwd")),
    }
}

/// `dir` (given as `option`) absolute, from the current directory, as the operating
/// system gives a working directory: no `.` or `..` segments (each `..` takes the
/// folder before it away, as a shell's `cd` does) and no trailing separator (`app/`
/// is `app`).
fn absolute_dir(dir: &Path, option: &str) -> Result<PathBuf, String> {
    use std::path::Component;
    let absolute = std::path::absolute(dir).map_err(|e| format!("cannot make {option} `{}` absolute: {e}", dir.display()))?;
    let mut resolved = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                resolved.pop();
            }
            Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    Ok(resolved)
}

/// A `--project` value: a project's folder name under projects/ (`-home-me-app`, also
/// with a trailing separator, as a shell completes it), or a working directory given as
/// a path (anything else with a separator: `/home/me/app`, `./app`, `app/`), which names
/// its project as Claude Code does. A folder name never holds a separator.
pub(crate) fn project_arg(value: &str) -> Result<String, String> {
    let folder = value.trim_end_matches(std::path::is_separator);
    if !folder.contains(std::path::is_separator) && (folder.len() == value.len() || folder.starts_with('-')) {
        return Ok(folder.to_owned());
    }
    Ok(mneme_host::core::keys::project_dir_name(&absolute_dir(Path::new(value), "--project")?.to_string_lossy()))
}

fn append(sessions: &mut dyn Engine<Error>, id: &str, what: AppendArgs, agent: AgentArgs, parent: Option<String>) -> CliResult {
    let AppendArgs { role, text, message, turn, provider, cwd, json, uuid } = what;
    let uuid = uuid.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let AgentArgs { agent, parent_call } = agent;
    let cwd = working_dir(cwd)?;
    let role = role.map(|role| match role {
        RoleArg::User => Role::User,
        RoleArg::Assistant => Role::Assistant,
    });
    let (messages, lines) = match (role, text, message, turn) {
        (Some(role), Some(text), _, _) if parent.is_none() && agent.is_none() => {
            let entry = NewEntry { uuid, now_ms: now_ms(), role, text, cwd: cwd.to_string_lossy().into_owned() };
            let entry = sessions.append(id, entry).map_err(|e| e.to_string())?;
            note_unresumable(id, Some(&entry));
            return if json { print_json(&entry) } else { print_appended(id, std::slice::from_ref(&entry)) };
        }
        (Some(role), Some(text), _, _) => (serde_json::json!({ "role": role.as_str(), "content": text }).to_string(), None),
        (_, _, Some(message), _) => (message, None),
        (_, _, _, Some(path)) => read_turn(&path)?,
        _ => return Err("say what to append: --role and --text, --message JSON or --turn FILE".into()),
    };
    // A sub-agent's new transcript starts at its line 1: no new session for the note.
    let into_session = agent.is_none();
    let turn = Turn {
        uuid,
        now_ms: now_ms(),
        cwd: cwd.to_string_lossy().into_owned(),
        provider: provider.into(),
        messages,
        parent,
        agent: agent.map(|id| AgentRef { id, parent_call }),
    };
    let entries = sessions.append_turn(id, turn).map_err(|e| match (&e, &lines) {
        // A message of a JSONL file is named by its line, as a line that is no JSON is.
        (Error::Session(mneme_host::core::Error::InvalidMessage { message, reason }), Some(lines)) => {
            match lines.numbers.get(*message as usize) {
                Some(line) => format!("line {line} of {} is invalid: {reason}; nothing was written", lines.name),
                None => e.to_string(),
            }
        }
        _ => e.to_string(),
    })?;
    if into_session {
        note_unresumable(id, entries.first());
    }
    if json { print_json(&entries) } else { print_appended(id, &entries) }
}

/// Where the messages of a JSONL turn file came from: its name and each one's line.
struct TurnLines {
    name: String,
    numbers: Vec<usize>,
}

fn print_branches(branches: &[Branch]) -> CliResult {
    for branch in branches {
        let mark = if branch.current { "*" } else { " " };
        let forks = branch.forks_at.as_deref().map(|at| format!(", leaves the current branch after {at}")).unwrap_or_default();
        println!(
            "{mark} {} {} {} messages, {} tokens{forks}",
            branch.leaf,
            branch.timestamp.as_deref().unwrap_or("-"),
            branch.message_count,
            branch.usage.total()
        );
        println!("    {}: {}", branch.role.as_deref().unwrap_or("?"), shown(&branch.text));
    }
    Ok(())
}

fn print_ledger(ledger: &Ledger) -> CliResult {
    let line = |usage: &mneme_host::core::Usage, cost: Option<f64>| {
        let cost = cost.map(|c| format!(", ${c:.4}")).unwrap_or_default();
        format!(
            "input {}, output {}, cache read {}, cache write {} (total {}){cost}",
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_creation,
            usage.total()
        )
    };
    println!("{}: {}", replies(ledger.replies), line(&ledger.total, ledger.cost));
    for branch in &ledger.branches {
        let mark = if branch.current { "current branch" } else { "branch" };
        println!("  {mark} {}: {}", branch.leaf, line(&branch.usage, branch.cost));
    }
    for agent in &ledger.subagents {
        println!("  sub-agent {} ({}, not in the total above): {}", agent.agent, replies(agent.replies), line(&agent.usage, agent.cost));
    }
    Ok(())
}

/// Claude Code's `--resume` finds only sessions whose id is a UUID: said when a command
/// has just created a Claude Code session (its first line carries the `sessionId`)
/// under another id, on standard error, so `--json` output stays as it is.
fn note_unresumable(id: &str, first: Option<&mneme_host::core::Entry>) {
    let created_for_claude = first.is_some_and(|entry| entry.part == 1 && entry.line == 1 && entry.session_id.is_some());
    let hyphenated_uuid = id.len() == 36 && uuid::Uuid::try_parse(id).is_ok();
    if created_for_claude && !hyphenated_uuid {
        eprintln!(
            "note: `claude --resume` opens only sessions whose id is a UUID, and `{id}` is not one: use a UUID (as `uuidgen` prints) for a \
             session you will open in Claude Code"
        );
    }
}

fn print_appended(id: &str, entries: &[mneme_host::core::Entry]) -> CliResult {
    for entry in entries {
        // A crab line has no id: the line number says where it went.
        let what = entry.uuid.as_deref().map_or_else(|| format!("line {}", entry.line), |uuid| format!("{uuid} (line {})", entry.line));
        println!("appended {what} to session {id}{}", redaction_note(&entry.redacted));
    }
    Ok(())
}

fn replies(n: u32) -> String {
    if n == 1 { "1 reply".into() } else { format!("{n} replies") }
}

/// What a write took out, for a person: ` (secrets removed: 1 github-token, 2 env-secret)`.
fn redaction_note(redacted: &[mneme_host::core::redact::Redacted]) -> String {
    if redacted.is_empty() {
        return String::new();
    }
    let kinds: Vec<String> = redacted.iter().map(|r| format!("{} {}", r.count, r.kind)).collect();
    format!(" (secrets removed: {})", kinds.join(", "))
}

/// A turn file: one JSON message or array of them (pretty-printed or not), or JSONL
/// with a message per line (`-`: stdin), and then the line of each message.
fn read_turn(path: &Path) -> Result<(String, Option<TurnLines>), String> {
    let stdin = path == Path::new("-");
    let text = if stdin {
        if std::io::stdin().is_terminal() {
            eprintln!("reading the turn from standard input (a JSON message per line); end it with Ctrl-D");
        }
        std::io::read_to_string(std::io::stdin()).map_err(|e| format!("cannot read the turn from standard input: {e}"))?
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?
    };
    // Windows PowerShell writes UTF-8 files with a byte-order mark.
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    if serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok() {
        return Ok((trimmed.to_owned(), None));
    }
    let name = if stdin { "standard input".to_owned() } else { path.display().to_string() };
    // Counted in the file as it is, before the byte-order mark and blank lines go.
    let text = text.trim_start_matches('\u{feff}');
    let (mut lines, mut numbers) = (Vec::new(), Vec::new());
    for (number, line) in text.lines().enumerate().map(|(i, line)| (i + 1, line.trim())).filter(|(_, l)| !l.is_empty()) {
        serde_json::from_str::<serde::de::IgnoredAny>(line).map_err(|e| {
            format!("line {number} of {name} is not a JSON message ({e}): give one JSON message per line, or one JSON array")
        })?;
        lines.push(line);
        numbers.push(number);
    }
    Ok((format!("[{}]", lines.join(",")), Some(TurnLines { name, numbers })))
}

/// `$MNEME_ROOT`, unless unset or empty: an empty one (a script's way of unsetting it)
/// would put the store in whatever folder the command runs in.
fn env_root() -> Option<PathBuf> {
    std::env::var_os("MNEME_ROOT").filter(|root| !root.is_empty()).map(PathBuf::from)
}

fn default_root() -> Result<PathBuf, String> {
    if let Some(root) = env_root() {
        return Ok(root);
    }
    dirs::data_dir()
        .map(|dir| dir.join("mneme"))
        .ok_or_else(|| "no per-user data folder is known on this system; pass --root DIR".to_owned())
}

/// Under the hits, how to go back to each session found, once per session.
fn print_resume_commands(found: &[client_resume::Found]) {
    let mut seen = std::collections::BTreeSet::new();
    let commands: Vec<(&str, &str)> =
        found.iter().filter_map(|f| Some((f.hit.id.as_str(), f.resume.as_deref()?))).filter(|(_, command)| seen.insert(*command)).collect();
    if !commands.is_empty() {
        println!("\nresume in its client:");
        for (id, command) in commands {
            println!("  {id}: {command}");
        }
    }
}

/// Says on standard error when the store's root folder does not exist: a read found
/// nothing because nothing was ever written there, perhaps a mistyped `--root`.
fn absent_root_hint(args: &StoreArgs) {
    let homes = [&args.claude_home, &args.pi_home, &args.openclaw_home, &args.crab_home];
    if args.store.is_some() || homes.iter().any(|home| home.is_some()) {
        return;
    }
    if let Some(root) = args.root.clone().map_or_else(|| default_root().ok(), Some).filter(|root| !root.exists()) {
        eprintln!(
            "mneme: the store's root {} does not exist: nothing has been written there yet (is --root or $MNEME_ROOT right?)",
            root.display()
        );
    }
}

fn open(args: &StoreArgs) -> Result<Box<dyn Engine<Error>>, String> {
    let storage = HostStorage::Metered(Box::new(storage(args)?));
    open_on(args, storage, Limits { part_bytes: args.part_limit, total_bytes: args.total_limit })
}

/// The engine the store arguments ask for, on `storage`, with their redaction.
fn open_on(args: &StoreArgs, storage: impl Into<HostStorage>, limits: Limits) -> Result<Box<dyn Engine<Error>>, String> {
    let mut sessions = engine(args.engine, storage, limits)?;
    if let Some(kinds) = mneme_host::core::redact::kinds_named(&args.redact).map_err(|e| format!("--redact (or $MNEME_REDACT): {e}"))? {
        sessions.set_redaction(&kinds).map_err(|e| format!("--redact: {e}"))?;
    }
    Ok(sessions)
}

/// Sets the embedding table at `path` on `engine`, if one is named.
pub fn use_embeddings(engine: &mut dyn Engine<Error>, path: Option<&Path>) -> Result<(), String> {
    let Some(path) = path else { return Ok(()) };
    let table = std::fs::read(path).map_err(|e| format!("cannot read the embedding table {}: {e}", path.display()))?;
    engine.set_embeddings(Some(&table)).map_err(|e| format!("the embedding table {}: {e}", path.display()))?;
    Ok(())
}

/// A read-only home, its index kept in Mneme's cache folder
/// (`~/.cache/mneme/homes/<kind>-<hash of the home's path>`, `$XDG_CACHE_HOME` on
/// Linux), never inside the home; without a cache folder it can write, the home alone
/// (each command then reads every transcript again).
fn with_cache(home: impl Into<HostStorage>, path: &Path, kind: &str) -> HostStorage {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    // FNV-1a: the folder must be the same for every build of mneme.
    let hash = canonical
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3));
    let cache = dirs::cache_dir().map(|dir| dir.join("mneme").join("homes").join(format!("{kind}-{hash:016x}")));
    // A folder that exists but this user cannot write (made by another user) would
    // fail every command that writes the index, where the home alone only reads.
    let writable = |cache: &PathBuf| {
        let probe = cache.join(format!(".probe-{}", std::process::id()));
        std::fs::create_dir_all(cache).is_ok() && std::fs::write(&probe, b"").is_ok() && std::fs::remove_file(&probe).is_ok()
    };
    match cache.filter(writable) {
        Some(cache) => HostStorage::cached(home, cache),
        None => home.into(),
    }
}

fn storage(args: &StoreArgs) -> Result<HostStorage, String> {
    if let Some(url) = &args.store {
        return PgStorage::open(url, mneme_postgres::DEFAULT_SCHEMA).map(Into::into).map_err(|e| e.to_string());
    }
    for (home, kind, name, example) in [
        (&args.pi_home, Home::Pi, "pi", "a pi agent folder such as ~/.pi/agent"),
        (&args.openclaw_home, Home::OpenClaw, "openclaw", "an OpenClaw home such as ~/.openclaw"),
        (&args.crab_home, Home::Crab, "crab", "a crab daemon's folder"),
    ] {
        if let Some(home) = home {
            if !home.join(kind.sessions_folder()).is_dir() {
                return Err(format!("{} has no {}/ folder; is it {example}?", home.display(), kind.sessions_folder()));
            }
            return Ok(with_cache(HomeStorage::new(home, kind), home, name));
        }
    }
    Ok(match (&args.claude_home, &args.root) {
        (Some(home), _) => {
            if !home.join("projects").is_dir() {
                return Err(format!("{} has no projects/ folder; is it a Claude Code home such as ~/.claude?", home.display()));
            }
            with_cache(FsStorage::read_only(home), home, "claude")
        }
        (None, root) => {
            let root = match root {
                Some(root) => root.clone(),
                None => default_root()?,
            };
            // A root that is a file would have every write refused as if its session
            // existed, and every read find an empty store.
            if root.exists() && !root.is_dir() {
                return Err(format!(
                    "the store's root {} is not a folder: name a folder with --root or $MNEME_ROOT (it is made on the first write)",
                    root.display()
                ));
            }
            FsStorage::new(root).into()
        }
    })
}

fn engine(kind: EngineKind, storage: impl Into<HostStorage>, limits: Limits) -> Result<Box<dyn Engine<Error>>, String> {
    Ok(match kind {
        EngineKind::Native => mneme_host::native(storage, limits),
        EngineKind::Component => Box::new(Runtime::new().and_then(|rt| rt.instantiate(storage, limits)).map_err(|e| e.to_string())?),
    })
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

fn new_entry(role: Role, text: String, cwd: &Path) -> NewEntry {
    NewEntry { uuid: uuid::Uuid::new_v4().to_string(), now_ms: now_ms(), role, text, cwd: cwd.to_string_lossy().into_owned() }
}

/// A transcript path inside a store (`<root>/projects/<project>/<id>.jsonl`): the
/// store's root and the session id.
fn store_of(path: &Path) -> Option<(PathBuf, String)> {
    let id = path.file_stem()?.to_str()?.to_owned();
    let projects = path.parent()?.parent()?;
    (projects.file_name()? == "projects").then(|| (projects.parent().unwrap_or(Path::new(".")).to_path_buf(), id))
}

/// The transcript file a command's `<id|file>` target names, or `None` for a session
/// id. A path is told by its look alone, a separator or `.jsonl`: a bare word is an id
/// even when a file or folder of that name sits in the current directory (`mneme check
/// notes` in a folder holding `notes/` meant the session). One that reads as a path but
/// names no file is refused for what it is, not taken for an id it never meant to be.
fn transcript_path(target: &str) -> Result<Option<&Path>, String> {
    let path = Path::new(target);
    if !target.contains(['/', std::path::MAIN_SEPARATOR]) && !target.ends_with(".jsonl") {
        return Ok(None);
    }
    if path.is_dir() {
        return Err(format!("{target} is a folder: name a transcript (.jsonl) in it, or a session id"));
    }
    if !path.is_file() {
        return Err(format!("no file {target}: name an existing transcript (.jsonl), or a session id"));
    }
    Ok(Some(path))
}

fn compact(store: &StoreArgs, args: CompactArgs) -> CliResult {
    let limits = Limits { part_bytes: store.part_limit, total_bytes: store.total_limit };
    // A transcript outside any store is copied into a scratch store, so it can be planned.
    let mut scratch = None;
    let (mut sessions, id) = if let Some(path) = transcript_path(&args.target)? {
        match store_of(path) {
            // A path never opens a store for writing that the user did not name as one:
            // the file may sit in ~/.claude, where Claude Code writes without Mneme's locks.
            Some((root, id)) => {
                let named = store.root.clone().or_else(env_root);
                let same = |named: &Path| named.canonicalize().ok().zip(root.canonicalize().ok()).is_some_and(|(a, b)| a == b);
                match named {
                    Some(named) if store.writable_root() && same(&named) => (open_on(store, FsStorage::new(root), limits)?, id),
                    Some(named) if store.writable_root() => {
                        return Err(format!(
                            "{} is in the store {}, but --root names {}; name the store the file is in",
                            path.display(),
                            root.display(),
                            named.display()
                        ));
                    }
                    _ if args.plan => (engine(store.engine, FsStorage::read_only(root), limits)?, id),
                    _ => {
                        return Err(format!(
                            "{} is in the store {}, which was not named as one to write to; pass `--root {}` to compact it there, or `--plan` to only look",
                            path.display(),
                            root.display(),
                            root.display()
                        ));
                    }
                }
            }
            None => {
                if !args.plan {
                    return Err(format!(
                        "{} is not inside a store (<root>/projects/<project>/<id>.jsonl); only --plan works on it",
                        path.display()
                    ));
                }
                let dir = std::env::temp_dir().join(format!("mneme-plan-{}", uuid::Uuid::new_v4().simple()));
                let copy = dir.join("projects/file/transcript.jsonl");
                std::fs::create_dir_all(copy.parent().unwrap_or(&dir))
                    .and_then(|()| std::fs::copy(path, &copy))
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                scratch = Some(dir.clone());
                (engine(store.engine, FsStorage::read_only(dir), limits)?, "transcript".to_owned())
            }
        }
    } else if !store.writable_root() && !args.plan {
        // Refused before the summariser runs: a paid model's summary would be thrown away.
        return Err(read_only("compact", "`compact --plan` only looks"));
    } else {
        let mut sessions = open(store)?;
        let id = session_id(&mut *sessions, args.target.clone())?;
        (sessions, id)
    };
    let result = run_compaction(&mut *sessions, &id, &args);
    if let Some(dir) = scratch {
        let _ = std::fs::remove_dir_all(dir);
    }
    result
}

fn run_compaction(sessions: &mut dyn Engine<Error>, id: &str, args: &CompactArgs) -> CliResult {
    let mode = if args.overflow {
        Mode::Overflow
    } else if args.auto {
        Mode::Auto
    } else {
        Mode::Manual
    };
    let plan = sessions.plan_compaction(id, &args.settings.settings(), mode).map_err(|e| e.to_string())?;
    if args.plan {
        return if args.json { print_json(&plan) } else { print_plan(&plan) };
    }
    if !plan.has_work() {
        let reason = plan.blocked.as_deref().unwrap_or(&plan.reason);
        if args.json {
            print_json(&serde_json::json!({ "plan": plan, "applied": null }))?;
        } else if let Some(blocked) = plan.blocked.as_deref().filter(|_| mode == Mode::Auto) {
            println!("not compacting: {blocked}");
        } else if mode == Mode::Auto {
            println!("{reason}");
        }
        // Asked for outright, a compaction that cannot run is a failure, as Claude
        // Code's `/compact` on too short a conversation is; `--auto` only asks whether
        // one is due.
        return if mode == Mode::Auto { Ok(()) } else { Err(format!("nothing was compacted: {reason}")) };
    }
    // A prune sends nothing: a missing key is no failure then.
    let summarizer = if plan.needs_summary() { args.summarizer.summarizer()? } else { Summarizer::Extractive };
    if plan.needs_summary() && !args.json {
        eprintln!("summarising {} entries with {}…", plan.summarize.len() + plan.turn_prefix.len(), summarizer.describe());
    }
    let applied = match compact_by(sessions, id, plan.clone(), &summarizer, !args.json)? {
        Ok(applied) => applied,
        Err(reason) => return Err(format!("compaction failed, nothing was changed (the failure is recorded): {reason}")),
    };
    if args.json {
        return print_json(&serde_json::json!({ "plan": plan, "applied": applied }));
    }
    match applied.action {
        Action::Prune => {
            println!("cleared {} old tool results: {} → {} tokens", plan.prune.len(), applied.tokens_before, applied.tokens_after)
        }
        _ => println!(
            "compacted session {id}: summarised {} entries, kept {}: {} → {} tokens (boundary {})",
            plan.summarize.len() + plan.turn_prefix.len(),
            plan.keep.len(),
            applied.tokens_before,
            applied.tokens_after,
            applied.boundary_uuid
        ),
    }
    if applied.tokens_after >= applied.tokens_before {
        eprintln!(
            "mneme: the context did not shrink: what replaced the entries is no shorter than they were (a conversation this short gains nothing from compaction; keep more of it with --keep-messages or --keep-recent-tokens)"
        );
    }
    Ok(())
}

/// Compacts through the core's driver with `summarizer` answering each request,
/// telling each model request when `progress`. `Ok(Err(reason))` is a recorded failure.
fn compact_by(
    sessions: &mut dyn Engine<Error>,
    id: &str,
    plan: Plan,
    summarizer: &Summarizer,
    progress: bool,
) -> Result<Result<Applied, String>, String> {
    let ids = CompactionIds { boundary: uuid::Uuid::new_v4().to_string(), summary: uuid::Uuid::new_v4().to_string() };
    let outcome = mneme_core::compact_with(sessions, id, &plan, &ids, now_ms, |sessions, run| {
        // A failure needs no handling here: the driver asks for it to be recorded.
        summarizer.answer(sessions, id, run, |asked, total| {
            if progress && total > 1 {
                eprintln!("  summariser request {asked} of {total}…");
            }
        });
    });
    outcome.map_err(|e| e.to_string())
}

fn print_plan(plan: &Plan) -> CliResult {
    println!("{}", plan.reason);
    if let Some(blocked) = &plan.blocked {
        println!("blocked: {blocked}");
    }
    println!("context: {} tokens; trigger at {} of a {} window", plan.tokens_before, plan.limit, plan.context_window);
    println!("action: {}", serde_json::to_value(plan.action).unwrap_or_default().as_str().unwrap_or("?"));
    if plan.steps.len() > 1 {
        println!("summariser requests: {} rolling steps (the conversation exceeds its window)", plan.steps.len());
    }
    println!(
        "summarise: {} entries{}",
        plan.summarize.len(),
        if plan.turn_prefix.is_empty() { String::new() } else { format!(" + a turn prefix of {}", plan.turn_prefix.len()) }
    );
    println!("keep: {} entries (~{} tokens)", plan.keep.len(), plan.keep_tokens);
    if !plan.prune.is_empty() {
        println!("tool results over the budget: {}", plan.prune.len());
    }
    println!("summary budget: {} tokens", plan.summary_budget_tokens);
    Ok(())
}

fn remove(sessions: &mut dyn Engine<Error>, id: &str, yes: bool) -> CliResult {
    if !yes {
        let transcript = sessions.load(id).map_err(|e| e.to_string())?;
        let subagents = sessions.subagents(id).map_err(|e| e.to_string())?;
        if !io::stdin().is_terminal() {
            return Err(format!("refusing to remove session {id} without confirmation; pass --yes"));
        }
        eprint!(
            "Remove session {id} ({} part(s), {} entries, {} sub-agent transcript(s))? This cannot be undone. [y/N] ",
            transcript.parts,
            transcript.report.entry_count,
            subagents.len()
        );
        let mut answer = String::new();
        io::stdin().lock().read_line(&mut answer).map_err(|e| e.to_string())?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Err("nothing removed".into());
        }
    }
    let removed = sessions.remove(id).map_err(|e| e.to_string())?;
    println!("removed session {id}: {} file(s)", removed.len());
    for key in removed {
        println!("  {key}");
    }
    Ok(())
}

fn print_json(value: &impl serde::Serialize) -> CliResult {
    // Buffered: standard output flushes at every newline, and pretty JSON has one on
    // every line (a 100 MB context was hundreds of thousands of writes).
    let mut out = io::BufWriter::with_capacity(1 << 16, mneme_cli_stdout::lock());
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| e.to_string())?;
    writeln!(out).and_then(|()| out.flush()).map_err(|e| e.to_string())
}

/// Text from a transcript or a memory as it may reach a terminal: a control character
/// (an escape sequence a model or a tool wrote, which would clear the screen or retitle
/// the window) as its escape, `\x{1b}`; line breaks and tabs as they are.
pub(crate) fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    // The bidirectional overrides and isolates reorder what a terminal shows after
    // them (a "Trojan Source" line reads otherwise than it is): escaped with the rest.
    let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    let control = |c: char| (c.is_control() && c != '\n' && c != '\t') || bidi(c);
    if !text.chars().any(control) {
        return text.into();
    }
    text.chars().map(|c| if control(c) { format!("\\x{{{:x}}}", u32::from(c)) } else { c.to_string() }).collect::<String>().into()
}

fn print_sessions(sessions: &[SessionInfo]) -> CliResult {
    if sessions.is_empty() {
        println!("no sessions (append one with `mneme append <id> --role user --text ...`)");
        return Ok(());
    }
    println!(
        "{:<36}  {:<24}  {:>5}  {:>7}  {:>5}  {:>9}  {:<24}  {:<24}  TITLE",
        "ID", "PROJECT", "PARTS", "ENTRIES", "MSGS", "BYTES", "CREATED", "UPDATED"
    );
    for s in sessions {
        let chars = s.project.chars().count();
        let project = if chars > 24 { format!("…{}", s.project.chars().skip(chars - 23).collect::<String>()) } else { s.project.clone() };
        println!(
            "{:<36}  {:<24}  {:>5}  {:>7}  {:>5}  {:>9}  {:<24}  {:<24}  {}",
            s.id,
            project,
            s.parts,
            s.entry_count,
            s.message_count,
            s.bytes,
            s.created.as_deref().unwrap_or("-"),
            s.updated.as_deref().unwrap_or("-"),
            shown(s.title.as_deref().unwrap_or(""))
        );
    }
    Ok(())
}

/// The session `given` names: its id, or the start of exactly one session's id (as
/// git takes a commit's), `fe5e1c67` for `fe5e1c67-…`. Only an id that could be the
/// start of a UUID is looked up; one no session starts with is left for the command to
/// refuse, and one several start with is refused with theirs.
fn session_id(engine: &mut dyn Engine<Error>, given: String) -> Result<String, String> {
    if mneme_host::core::keys::validate_session_id(&given).is_err() {
        // A name an agent SDK gave (`user:42`): the session its adapter keeps it under,
        // when there is one; else the name as given, for the error to say what is wrong.
        let mapped = engine.session_id_of(&given).map_err(|e| e.to_string())?;
        let listing = engine.list().map_err(|e| e.to_string())?;
        return Ok(if listing.sessions.iter().any(|s| s.id == mapped) { mapped } else { given });
    }
    let could_be_short =
        (4..36).contains(&given.len()) && given.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c) || c == '-');
    if !could_be_short {
        return Ok(given);
    }
    let listing = engine.list().map_err(|e| e.to_string())?;
    if listing.sessions.iter().any(|s| s.id == given) {
        return Ok(given);
    }
    let mut started: Vec<&str> = listing.sessions.iter().map(|s| s.id.as_str()).filter(|id| id.starts_with(&given)).collect();
    started.sort_unstable();
    started.dedup();
    match started.as_slice() {
        [id] => Ok((*id).to_owned()),
        [] => Ok(given),
        ids => {
            let more = if ids.len() > 5 { ", …" } else { "" };
            Err(format!("`{given}` starts {} sessions' ids ({}{more}): give more of it", ids.len(), ids[..ids.len().min(5)].join(", ")))
        }
    }
}

fn print_entry(entry: &Entry, indent: &str) {
    let who = entry.role.as_deref().unwrap_or(&entry.type_);
    let side = if entry.is_sidechain { " (sidechain)" } else { "" };
    let place = if entry.part > 1 { format!("{}:{}", entry.part, entry.line) } else { entry.line.to_string() };
    println!("{indent}[{place}] {} {who}{side} {}", entry.timestamp.as_deref().unwrap_or("-"), entry.uuid.as_deref().unwrap_or(""));
    // A message of blocks shows as a context shows it: the tools its calls and results
    // name with them (`[tool_use Bash toolu_1]`), thinking left out.
    let content = serde_json::from_str::<serde_json::Value>(&entry.raw).ok().map(|raw| raw["message"]["content"].clone());
    let text = match content {
        Some(serde_json::Value::Array(blocks)) if entry.role.is_some() => {
            let text = mneme_host::core::message::shown_text(&serde_json::Value::Array(blocks.clone()));
            // A line of thinking alone (Claude Code writes a block per line) says what it holds.
            if text.is_empty() {
                blocks.iter().map(|block| mneme_host::core::message::marker(block["type"].as_str())).collect::<Vec<_>>().join(" ")
            } else {
                text
            }
        }
        _ => entry.text.clone(),
    };
    for line in text.lines() {
        println!("{indent}    {}", shown(line));
    }
}

fn print_transcript(transcript: &Transcript, all: bool, subagents: &[Subagent]) -> CliResult {
    if all {
        for entry in &transcript.entries {
            print_entry(entry, "");
        }
        for subagent in subagents {
            println!("\n--- sub-agent {} ({} entries)", subagent.key, subagent.transcript.entries.len());
            for entry in &subagent.transcript.entries {
                print_entry(entry, "  ");
            }
        }
    } else {
        let chain = transcript.chain.iter().filter_map(|&i| transcript.entries.get(i as usize));
        for entry in chain.filter(|e| e.role.is_some()) {
            print_entry(entry, "");
        }
    }
    print_report(&transcript.report);
    Ok(())
}

fn print_report(report: &LoadReport) {
    for skipped in &report.skipped {
        eprintln!("skipped part {} line {}: {}", skipped.part, skipped.line, skipped.reason);
    }
    if report.torn_tail {
        eprintln!("the last line is torn (cut off mid-write); the next append moves it aside, `mneme repair` removes it");
    }
    if report.recovered_glued > 0 {
        eprintln!("{} objects were recovered from glued lines; `mneme repair` writes them one per line", report.recovered_glued);
    }
    if report.invalid_utf8 > 0 {
        eprintln!("{} line(s) held invalid UTF-8 (read with U+FFFD in place of the bad bytes)", report.invalid_utf8);
    }
}

fn print_context(id: &str, context: &Context) -> CliResult {
    let from = if context.compacted { "from its last compaction" } else { "from the start" };
    println!("context of session {id}, {from}: {} message(s)\n", context.messages.len());
    for message in &context.messages {
        let summary = if message.is_compact_summary { " (compaction summary)" } else { "" };
        println!("{}{summary}:", message.role);
        for line in message.text.lines() {
            println!("    {}", shown(line));
        }
    }
    Ok(())
}

fn print_check(target: &str, report: &CheckReport) {
    let load = &report.load;
    println!("{target}: {} entries", load.entry_count);
    let types: Vec<String> =
        load.by_type.iter().map(|t| format!("{} {}", t.count, if t.type_.is_empty() { "(no type)" } else { &t.type_ })).collect();
    println!("  by type: {}", types.join(", "));
    println!("  skipped lines: {}", load.skipped.len());
    for skipped in &load.skipped {
        println!("    part {} line {}: {}", skipped.part, skipped.line, skipped.reason);
    }
    println!("  torn tail: {}", if load.torn_tail { "yes" } else { "no" });
    println!("  objects recovered from glued lines: {}", load.recovered_glued);
    println!("  lines with invalid UTF-8: {}", load.invalid_utf8);
    println!("  lines with a lone surrogate escape (read as U+FFFD; the API refuses them as sent): {}", load.lone_surrogates);
    println!("  tombstoned entries: {}", load.tombstoned);
    for (label, findings) in [
        ("dangling parents", &report.dangling_parents),
        ("tool calls without a result", &report.orphaned_tool_uses),
        ("tool results without a call", &report.orphaned_tool_results),
    ] {
        println!("  {label}: {}", findings.len());
        for finding in findings.iter().take(20) {
            println!("    part {} line {}: {}", finding.part, finding.line, finding.id);
        }
        if findings.len() > 20 {
            println!("    … and {} more (--json lists all)", findings.len() - 20);
        }
    }
    println!("{}", if report.has_problems() { "problems found" } else { "no problems found" });
}

fn print_repair(id: &str, report: &RepairReport) -> CliResult {
    if report.backups.is_empty() {
        println!("session {id} needs no repair");
        return Ok(());
    }
    println!("repaired session {id}:");
    for dropped in &report.dropped {
        println!("  removed unreadable part {} line {}: {}", dropped.part, dropped.line, dropped.reason);
    }
    for relinked in &report.relinked {
        let parent = relinked.parent.as_deref().unwrap_or("nothing (it begins the conversation now)");
        println!("  chained part {} line {} to {parent}: its parent was among the lines removed", relinked.part, relinked.line);
    }
    if report.dropped_torn_tail {
        println!("  removed the torn last line");
    }
    if report.split_glued > 0 {
        println!("  split {} glued objects onto lines of their own", report.split_glued);
    }
    if report.fixed_utf8 > 0 {
        println!("  replaced invalid UTF-8 on {} line(s) with U+FFFD", report.fixed_utf8);
    }
    if report.fixed_surrogates > 0 {
        println!("  wrote the lone surrogate escapes on {} line(s) as \\ufffd (the API refuses them)", report.fixed_surrogates);
    }
    for backup in &report.backups {
        println!("  original kept as {backup}");
    }
    Ok(())
}

const DEMO_SCRIPT: [(Role, &str); 6] = [
    (Role::User, "Hi! I keep losing my agent's context between runs. Can you remember things?"),
    (Role::Assistant, "Yes: every message we exchange is appended to a session transcript on disk, one JSON line each."),
    (Role::User, "What happens if my machine crashes mid-write?"),
    (
        Role::Assistant,
        "Each append is a single atomic write, so a crash leaves at most a torn last line, which the reader reports instead of losing the rest.",
    ),
    (Role::User, "And can Claude Code read these files?"),
    (Role::Assistant, "They are Claude Code's own JSONL format: same fields, same parentUuid chain, same folder layout."),
];

fn demo(dir: Option<PathBuf>, kind: EngineKind) -> CliResult {
    let root = match dir {
        Some(dir) => dir,
        None => std::env::temp_dir().join(format!("mneme-demo-{}", uuid::Uuid::new_v4().simple())),
    };
    if root.exists() && std::fs::read_dir(&root).map_err(|e| format!("cannot read {}: {e}", root.display()))?.next().is_some() {
        return Err(format!("{} is not empty; the demo needs a fresh folder", root.display()));
    }
    let how = match kind {
        EngineKind::Component => "the Mneme component (wasmtime)",
        EngineKind::Native => "the natively linked core",
    };
    println!("Mneme demo: a scripted conversation through {how}");
    println!("store: {}\n", root.display());
    let mut sessions = engine(kind, FsStorage::new(&root), Limits::default())?;
    let session_id = uuid::Uuid::new_v4().to_string();
    let cwd = root.join("workspace");
    let mut written: Vec<Entry> = Vec::new();
    for (role, text) in DEMO_SCRIPT {
        let entry = sessions.append(&session_id, new_entry(role, text.to_owned(), &cwd)).map_err(|e| e.to_string())?;
        println!(
            "appended line {}: {:<9} uuid {} parent {}",
            entry.line,
            role.as_str(),
            short(entry.uuid.as_deref()),
            short(entry.parent_uuid.as_deref())
        );
        written.push(entry);
    }
    let transcript = sessions.load(&session_id).map_err(|e| e.to_string())?;
    let intact = transcript.entries == written && transcript.report.skipped.is_empty() && !transcript.report.torn_tail;
    println!(
        "\nreloaded {} entries from disk: {}",
        transcript.entries.len(),
        if intact { "identical to what was written" } else { "DIFFERENT from what was written" }
    );
    if !intact {
        return Err("the reloaded transcript does not match what was appended".into());
    }

    // An agent at work: an offline model that calls two tools, each reply and its
    // results appended as one turn, the context window filling up and compacted by the
    // core's driver, as an agent runtime would run on Mneme.
    let settings = Settings { context_window: DEMO_WINDOW, keep: Keep::RecentTokens(DEMO_WINDOW / 4), ..Settings::default() };
    println!("\nan agent loop: {DEMO_TASKS} tasks, an offline model with two tools, a {DEMO_WINDOW}-token window, auto-compacting:");
    let mut compactions = 0;
    let mut model_turns = 0;
    // The agent's session stays open for writing while it works: one append per write.
    sessions.hold(&session_id).map_err(|e| e.to_string())?;
    for task in 1..=DEMO_TASKS {
        let prompt = format!("Task {task}: find where module {task} of the parser reports skipped lines, and check its tests.");
        sessions.append(&session_id, new_entry(Role::User, prompt, &cwd)).map_err(|e| e.to_string())?;
        let mut tools = 0;
        // The model's turn: it reads the context, replies; the host runs its tools.
        loop {
            let context = sessions.provider_context(&session_id, Provider::Anthropic, None, &[]).map_err(|e| e.to_string())?;
            let (reply, done) = demo_model(task, tools, context.tokens);
            model_turns += 1;
            let turn = Turn {
                uuid: uuid::Uuid::new_v4().to_string(),
                now_ms: now_ms(),
                cwd: cwd.to_string_lossy().into_owned(),
                provider: Provider::Anthropic,
                messages: reply.to_string(),
                parent: None,
                agent: None,
            };
            sessions.append_turn(&session_id, turn).map_err(|e| e.to_string())?;
            tools += 1;
            if done {
                break;
            }
        }
        let plan = sessions.plan_compaction(&session_id, &settings, Mode::Auto).map_err(|e| e.to_string())?;
        if !plan.has_work() {
            println!("  task {task:>2}: {} tool calls, {} tokens, below the trigger at {}", tools - 1, plan.tokens_before, plan.limit);
            continue;
        }
        let ids = CompactionIds { boundary: uuid::Uuid::new_v4().to_string(), summary: uuid::Uuid::new_v4().to_string() };
        let applied = mneme_core::compact_offline(&mut *sessions, &session_id, &plan, &ids, now_ms()).map_err(|e| e.to_string())??;
        compactions += 1;
        println!(
            "  task {task:>2}: {} tool calls, {} tokens reached the trigger at {}: compacted {} → {} tokens",
            tools - 1,
            plan.tokens_before,
            plan.limit,
            applied.tokens_before,
            applied.tokens_after
        );
    }
    sessions.release(&session_id).map_err(|e| e.to_string())?;
    let context = sessions.provider_context(&session_id, Provider::Anthropic, None, &[]).map_err(|e| e.to_string())?;
    let history = sessions.load(&session_id).map_err(|e| e.to_string())?;
    let ledger = sessions.usage(&session_id, None).map_err(|e| e.to_string())?;
    println!(
        "{model_turns} model turns, {compactions} auto-compaction(s). Resumed provider-ready: {} messages, ~{} tokens, {} bytes of request JSON (the summary first), while all {} entries stay on disk; the replies reported {} tokens in all",
        context.message_count,
        context.tokens,
        context.body.len(),
        history.entries.len(),
        ledger.total.total()
    );
    if compactions == 0 {
        return Err("the demo expected at least one auto-compaction".into());
    }
    println!();
    let listed = list_sessions(&mut *sessions)?.sessions;
    print_sessions(&listed)?;
    let info = listed.into_iter().find(|s| s.id == session_id);
    if let Some(info) = info {
        println!("\ntranscript file: {}", root.join(&info.key).display());
    }
    println!("see it again with: mneme --root {} sessions show {session_id}", root.display());
    println!("                or: mneme --root {} resume {session_id}", root.display());
    println!("                or: mneme --root {} context {session_id} --format openai", root.display());
    Ok(())
}

/// The demo's context window: small, so a few tasks fill it.
const DEMO_WINDOW: u64 = 1_200;
const DEMO_TASKS: u32 = 10;

/// The demo's offline model: for task `task`, after `calls` tool calls, with a context
/// of `context_tokens`, its reply (and the results of the tools it called, as the host
/// would run them) as Anthropic messages, and whether the task is done. Two tools:
/// `grep` then `read`, then an answer — four model turns per task.
fn demo_model(task: u32, calls: u32, context_tokens: u64) -> (serde_json::Value, bool) {
    let usage = serde_json::json!({ "input_tokens": context_tokens, "output_tokens": 40 });
    let id = format!("msg_demo_{task}_{calls}");
    let call = |name: &str, input: serde_json::Value, result: String| {
        let call_id = format!("toolu_demo_{task}_{calls}");
        let reply = serde_json::json!({
            "role": "assistant", "id": id, "model": "mneme-demo", "stop_reason": "tool_use", "usage": usage,
            "content": [
                { "type": "text", "text": format!("Looking with {name}.") },
                { "type": "tool_use", "id": call_id, "name": name, "input": input },
            ],
        });
        let results =
            serde_json::json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": call_id, "content": result }] });
        (serde_json::json!([reply, results]), false)
    };
    let file = format!("src/parser/module{task}.rs");
    match calls {
        0 => call(
            "grep",
            serde_json::json!({ "pattern": "skipped", "path": "src/parser" }),
            format!("{file}:42: report.skipped.push(line)\n{file}:87: // every skipped line has a reason"),
        ),
        1 => call(
            "read",
            serde_json::json!({ "path": file }),
            format!("fn read(&mut self) -> Report {{ /* 120 lines of module {task} */ }}").repeat(4),
        ),
        2 => call(
            "read",
            serde_json::json!({ "path": format!("tests/module{task}.rs") }),
            "#[test] fn torn_tail() { /* asserts the report */ }".repeat(4),
        ),
        _ => {
            let answer =
                format!("Module {task} pushes every skipped line with its reason at line 42, and tests/module{task}.rs covers torn tails.");
            let reply = serde_json::json!({ "role": "assistant", "id": id, "model": "mneme-demo", "stop_reason": "end_turn", "usage": usage,
                "content": [{ "type": "text", "text": answer }] });
            (reply, true)
        }
    }
}

fn short(id: Option<&str>) -> &str {
    id.map_or("(root)", |id| id.get(..8).unwrap_or(id))
}
