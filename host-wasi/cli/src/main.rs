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
use mneme_core::{
    AgentRef, CompactionIds, Engine, Error, Injection, Limits, Mirror, Mode, NewEntry, Place, Prices, Provider, Role, Settings, Speaker,
    Turn,
};

wit_bindgen::generate!({ path: "../../wit", world: "driver" });

mod engine;

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
struct Composed {
    store: sessions::Store,
}

impl Composed {
    fn new(limits: Limits) -> Self {
        Composed { store: sessions::Store::new(Some(limits.mirror())) }
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
fn open(cli: &Cli) -> Result<Composed, String> {
    let mut engine = Composed::new(Limits { part_bytes: cli.part_limit, total_bytes: cli.total_limit });
    if let Some(kinds) = mneme_core::redact::kinds_named(&cli.redact).map_err(|e| format!("--redact: {e}"))? {
        engine.set_redaction(&kinds).map_err(|e| format!("--redact: {e}"))?;
    }
    Ok(engine)
}

fn run(mut engine: Composed, command: Command) -> Result<ExitCode, String> {
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
                mneme_conformance::Subject { engine: Composed::new(limits), keys: Box::new(keys_here) }
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
