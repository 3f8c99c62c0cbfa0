//! `mneme keys …`: the session index — which session each conversation key (an agent's
//! main chat, a group, a cron job, a webhook) continues, resets, and the labels on it.
//! Runs on the engine `--engine` names, through the WIT `index` interface; `--json`
//! prints the values every host's API returns.

use clap::{Args, Subcommand};
use mneme_host::core::gates::ResetPolicy;
use mneme_host::core::index::{ChatType, DmScope, Field, Inbound, KeyEntry, KeyPatch, Origin, RoutePolicy};
use mneme_host::core::time;
use mneme_host::core::{CompactionIds, Keep, Mode, Settings};
use mneme_host::{Engine, Error};

type CliResult = Result<(), String>;

#[derive(Args)]
pub struct KeysArgs {
    #[command(subcommand)]
    command: KeysCommand,
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Route a message: print its key, the session it goes to and why (a new key, the
    /// same session, or a new one after /new, an idle or daily reset, an expiry), and
    /// record it
    Resolve(ResolveArgs),
    /// List keys, most recently active first
    List {
        /// Only keys with this metadata field (NAME=VALUE; repeat to require several)
        #[arg(long = "meta", value_name = "NAME=VALUE", value_parser = parse_field)]
        metadata: Vec<Field>,
        #[arg(long)]
        json: bool,
    },
    /// Show a key: its session, earlier sessions, labels, and the session's counters
    Show {
        /// The session key, such as agent:main:main (`keys list` shows them)
        key: String,
        #[arg(long)]
        json: bool,
    },
    /// Give a key a new session now (what /new does); the old session stays, listed in
    /// the key's history
    Reset {
        /// The session key, such as agent:main:main (`keys list` shows them)
        key: String,
        #[arg(long)]
        json: bool,
    },
    /// Set a key's title, model, toggles or metadata (an empty VALUE removes a field)
    Set {
        /// The session key, such as agent:main:main (`keys list` shows them)
        key: String,
        #[arg(long)]
        title: Option<String>,
        #[arg(long)]
        model: Option<String>,
        #[arg(long = "toggle", value_name = "NAME=VALUE", value_parser = parse_field)]
        toggles: Vec<Field>,
        #[arg(long = "meta", value_name = "NAME=VALUE", value_parser = parse_field)]
        metadata: Vec<Field>,
        #[arg(long)]
        json: bool,
    },
    /// Roll a long session over: when the key's session context holds --at tokens or
    /// more, summarise the whole session and move the key to a new session that starts
    /// from the summary (in the old session's format, linked to it); the old session
    /// stays in the store, listed in the key's history
    Rollover {
        /// The session key, such as agent:main:main (`keys list` shows them)
        key: String,
        /// The context size (tokens, from the last compaction on) at which the session
        /// rolls over
        #[arg(long, value_name = "TOKENS", default_value_t = 50_000, allow_negative_numbers = true)]
        at: u64,
        /// Roll over now, however small the session is
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        summarizer: crate::SummarizerFlags,
        #[arg(long)]
        json: bool,
    },
    /// Forget a key (its sessions stay in the store)
    Rm {
        /// The session key, such as agent:main:main (`keys list` shows them)
        key: String,
    },
    /// Write every key as an OpenClaw sessions.json (what OpenClaw's gateway loads),
    /// to stdout, or with --out into a folder with each key's current session as the pi
    /// transcript OpenClaw reads (<session id>.jsonl); existing files are not overwritten
    Export {
        /// The folder to write sessions.json and the transcripts into (created if missing)
        #[arg(long, short, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
    },
    /// What reading the index found: generation, sizes, damaged or torn lines skipped;
    /// with --rebuild, read every transcript again and save the index anew
    Check {
        /// Rebuild the index from the transcripts (key bindings are kept): say what was
        /// found before, what changed, and leave damaged or torn lines behind
        #[arg(long)]
        rebuild: bool,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct ResolveArgs {
    /// The message text (a leading /new or /reset starts a new session)
    #[arg(default_value = "")]
    text: String,
    /// The agent the message is for
    #[arg(long, default_value = "main")]
    agent: String,
    /// What kind of conversation it is
    /// (direct, group, channel, room, cron or hook)
    #[arg(long = "chat", value_name = "TYPE", default_value = "direct", value_parser = |t: &str| ChatType::parse(t).map_err(|e| e.to_string()))]
    chat: ChatType,
    /// The messaging provider (telegram, slack, discord, …): needed for groups,
    /// channels, rooms and --dm-scope per-provider-peer
    #[arg(long)]
    provider: Option<String>,
    /// The peer (direct), group, channel or room id; the cron job; the hook id
    #[arg(long, allow_hyphen_values = true)]
    id: Option<String>,
    /// A thread or topic inside the conversation
    #[arg(long)]
    thread: Option<String>,
    /// How direct chats are bucketed: main, per-peer or per-provider-peer
    #[arg(long, value_name = "SCOPE", default_value = "main", value_parser = |s: &str| DmScope::parse(s).map_err(|e| e.to_string()))]
    dm_scope: DmScope,
    /// The key of an agent's direct chats with --dm-scope main
    #[arg(long, default_value = "main")]
    main_key: String,
    /// Start a new session after this long without a message
    #[arg(long, value_name = "MINUTES")]
    idle_minutes: Option<u32>,
    /// Start a new session once a day at this hour (0–23, local time by --utc-offset) [default: 4]
    #[arg(long, value_name = "HOUR", value_parser = clap::value_parser!(u8).range(0..24), conflicts_with = "no_daily_reset")]
    daily_reset_hour: Option<u8>,
    /// No daily reset
    #[arg(long)]
    no_daily_reset: bool,
    /// The local time's offset from UTC in minutes, for the daily reset
    #[arg(long, value_name = "MINUTES", default_value_t = 0, allow_hyphen_values = true)]
    utc_offset: i32,
    /// Start a new session when the current one is older than this
    #[arg(long, value_name = "DAYS")]
    ttl_days: Option<u32>,
    /// A metadata field to set on the key (NAME=VALUE; repeatable)
    #[arg(long = "meta", value_name = "NAME=VALUE", value_parser = parse_field)]
    metadata: Vec<Field>,
    /// The conversation's subject line (a group's name)
    #[arg(long)]
    subject: Option<String>,
    /// The sender's or conversation's display name
    #[arg(long)]
    display_name: Option<String>,
    #[arg(long)]
    json: bool,
}

fn parse_field(text: &str) -> Result<Field, String> {
    let (name, value) = text.split_once('=').ok_or_else(|| format!("`{text}` is not NAME=VALUE"))?;
    if name.is_empty() {
        return Err(format!("`{text}` has no name before `=`"));
    }
    Ok(Field { name: name.to_owned(), value: value.to_owned() })
}

fn new_session_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

impl KeysArgs {
    /// Whether the command changes a key (the index's rebuild only caches what the
    /// transcripts say).
    pub fn changes_keys(&self) -> bool {
        matches!(
            self.command,
            KeysCommand::Resolve(_)
                | KeysCommand::Reset { .. }
                | KeysCommand::Set { .. }
                | KeysCommand::Rollover { .. }
                | KeysCommand::Rm { .. }
        )
    }
}

pub fn run(open: impl FnOnce() -> Result<Box<dyn Engine<Error>>, String>, args: KeysArgs, now_ms: i64) -> CliResult {
    let mut engine = open()?;
    let e = |e: Error| e.to_string();
    match args.command {
        KeysCommand::Resolve(args) => {
            let json = args.json;
            let (inbound, policy) = resolve_request(args);
            let resolution = engine.resolve(&inbound, &policy, now_ms, &new_session_id()).map_err(e)?;
            if json {
                return crate::print_json(&resolution);
            }
            println!("{}  {}  {}", resolution.key, resolution.session_id, action_name(resolution.action));
            println!("  {}", resolution.reason);
            if let Some(previous) = &resolution.previous_session_id {
                println!("  the key's previous session {previous} stays in the store");
            }
            Ok(())
        }
        KeysCommand::List { metadata, json } => {
            let keys = engine.keys(&metadata).map_err(e)?;
            if json {
                return crate::print_json(&keys);
            }
            if keys.is_empty() {
                println!("no keys (route a message with `mneme keys resolve`)");
                return Ok(());
            }
            println!("{:<44}  {:<36}  {:<8}  {:<24}  {:>6}  TITLE", "KEY", "SESSION", "CHAT", "ACTIVE", "RESETS");
            for key in &keys {
                println!(
                    "{:<44}  {:<36}  {:<8}  {:<24}  {:>6}  {}",
                    key.key,
                    key.session_id,
                    key.chat_type.as_str(),
                    time::format_millis(key.updated_ms),
                    key.previous_session_ids.len(),
                    key.title.as_deref().unwrap_or("")
                );
            }
            Ok(())
        }
        KeysCommand::Show { key, json } => {
            let view = engine.key(&key).map_err(e)?;
            if json {
                return crate::print_json(&view);
            }
            print_entry(&view.entry);
            match &view.session {
                Some(session) => println!(
                    "session     {} messages, {} bytes, updated {}{}",
                    session.message_count,
                    session.bytes,
                    session.updated.as_deref().unwrap_or("-"),
                    session.title.as_deref().map(|t| format!(" — {t}")).unwrap_or_default()
                ),
                None => println!("session     no messages yet"),
            }
            let c = &view.counters;
            println!(
                "tokens      {} in, {} out, {} cache read, {} cache written; context {}",
                c.input_tokens, c.output_tokens, c.cache_read_tokens, c.cache_creation_tokens, c.context_tokens
            );
            println!("compactions {}", c.compaction_count);
            if let Some(at) = c.memory_flush_ms {
                println!("flushed     {} (after {} compactions)", time::format_millis(at), c.memory_flush_compaction_count.unwrap_or(0));
            }
            if let Some(at) = c.extraction_ms {
                println!("extracted   {}", time::format_millis(at));
            }
            Ok(())
        }
        KeysCommand::Reset { key, json } => {
            let entry = engine.reset_key(&key, &new_session_id(), now_ms).map_err(e)?;
            if json {
                return crate::print_json(&entry);
            }
            let previous = entry.previous_session_ids.last().map(String::as_str).unwrap_or("-");
            println!("{} now continues session {}; {previous} stays in the store", entry.key, entry.session_id);
            Ok(())
        }
        KeysCommand::Set { key, title, model, toggles, metadata, json } => {
            let patch = KeyPatch { title, model, origin: None, toggles, metadata };
            let entry = engine.update_key(&key, &patch).map_err(e)?;
            if json {
                return crate::print_json(&entry);
            }
            print_entry(&entry);
            Ok(())
        }
        KeysCommand::Rollover { key, at, force, summarizer, json } => {
            rollover(engine.as_mut(), &key, if force { 0 } else { at }, &summarizer, json, now_ms)
        }
        KeysCommand::Rm { key } => {
            let entry = engine.remove_key(&key).map_err(e)?;
            let sessions = 1 + entry.previous_session_ids.len();
            println!("forgot {}; its {sessions} session(s) stay in the store", entry.key);
            Ok(())
        }
        KeysCommand::Export { out: None } => {
            let data = engine.export_openclaw_keys().map_err(e)?;
            std::io::Write::write_all(&mut mneme_cli_stdout::lock(), &data).map_err(|e| e.to_string())
        }
        KeysCommand::Export { out: Some(folder) } => export_openclaw(engine.as_mut(), &folder),
        KeysCommand::Check { rebuild: true, json } => {
            let report = engine.rebuild_index().map_err(e)?;
            if json {
                return crate::print_json(&report);
            }
            let before = &report.before;
            println!(
                "before: generation {}, {} keys, {} cached sessions; {} damaged lines, {} unreadable snapshots, {} torn bytes",
                before.generation,
                before.key_count,
                before.session_count,
                before.damaged_lines,
                before.damaged_snapshots,
                before.torn_bytes
            );
            println!(
                "rebuilt from {} transcripts: {} rows added, {} corrected, {} dropped (their transcripts are gone); {} keys kept",
                report.session_count, report.added, report.changed, report.dropped, report.key_count
            );
            for skipped in &report.skipped {
                eprintln!("skipped {}: {}", skipped.key, skipped.reason);
            }
            Ok(())
        }
        KeysCommand::Check { rebuild: false, json } => {
            let report = engine.index_report().map_err(e)?;
            if json {
                return crate::print_json(&report);
            }
            println!(
                "generation {}: {} keys, {} cached sessions, {} changes since the snapshot",
                report.generation, report.key_count, report.session_count, report.log_lines
            );
            if report.damaged_lines > 0 || report.damaged_snapshots > 0 || report.torn_bytes > 0 {
                println!(
                    "skipped: {} damaged lines, {} unreadable snapshots, {} torn bytes at the log's end (never acknowledged)",
                    report.damaged_lines, report.damaged_snapshots, report.torn_bytes
                );
            }
            Ok(())
        }
    }
}

/// The gate, then the whole session summarised (a manual compaction plan that keeps
/// nothing, through the summariser's driver), then the rollover.
fn rollover(engine: &mut dyn Engine<Error>, key: &str, at: u64, summarizer: &crate::SummarizerFlags, json: bool, now_ms: i64) -> CliResult {
    let e = |e: Error| e.to_string();
    let gate = engine.rollover_gate(key, at).map_err(e)?;
    if !gate.fire {
        if json {
            return crate::print_json(&serde_json::json!({ "gate": gate, "rolled_over": null }));
        }
        println!("not rolled over: {}", gate.reason);
        return Ok(());
    }
    // Asked for only now: a missing key is no failure when nothing is due.
    let summarizer = &summarizer.summarizer()?;
    let old = engine.key(key).map_err(e)?.entry.session_id;
    let settings = Settings { keep: Keep::RecentMessages(0), ..Settings::default() };
    let plan = engine.plan_compaction(&old, &settings, Mode::Manual).map_err(e)?;
    if plan.summarize.is_empty() && plan.turn_prefix.is_empty() {
        return Err(format!("session {old} has no message since its last compaction to summarise; nothing was changed"));
    }
    if !json {
        eprintln!("summarising session {old} ({} entries) with {}…", plan.summarize.len() + plan.turn_prefix.len(), summarizer.describe());
    }
    let summary = summarizer.summarize(engine, &old, &plan).map_err(|e| format!("the summary failed, nothing was changed: {e}"))?;
    let ids = CompactionIds { boundary: new_session_id(), summary: new_session_id() };
    let rolled = engine.rollover(key, &summary, &ids, &new_session_id(), now_ms).map_err(e)?;
    if json {
        return crate::print_json(&serde_json::json!({ "gate": gate, "rolled_over": rolled }));
    }
    println!("{key} rolled over: {}", gate.reason);
    println!(
        "  now session {} ({} format), starting from a summary of {}: {} → {} tokens",
        rolled.entry.session_id,
        rolled.format.as_str(),
        rolled.previous_session_id,
        rolled.tokens_before,
        rolled.tokens_after
    );
    println!("  {} stays in the store, listed in the key's history", rolled.previous_session_id);
    Ok(())
}

fn resolve_request(args: ResolveArgs) -> (Inbound, RoutePolicy) {
    let (chat_type, dm_scope) = (args.chat, args.dm_scope);
    let defaults = RoutePolicy::default();
    let daily_reset_hour = if args.no_daily_reset { None } else { args.daily_reset_hour.or(defaults.reset.daily_reset_hour) };
    let reset = ResetPolicy {
        idle_minutes: args.idle_minutes,
        daily_reset_hour,
        utc_offset_minutes: args.utc_offset,
        ttl_ms: args.ttl_days.map(|d| i64::from(d) * 86_400_000),
    };
    let inbound = Inbound {
        agent: Some(args.agent),
        chat_type,
        provider: args.provider.clone(),
        id: args.id,
        thread: args.thread,
        text: args.text,
        origin: Origin { provider: args.provider, subject: args.subject, room: None, display_name: args.display_name },
        metadata: args.metadata,
    };
    (inbound, RoutePolicy { main_key: args.main_key, dm_scope, reset, ..defaults })
}

fn action_name(action: mneme_host::core::index::ResolveAction) -> &'static str {
    use mneme_host::core::index::ResolveAction as A;
    match action {
        A::Created => "new key",
        A::Continued => "continued",
        A::Reset => "reset",
        A::Idle => "idle reset",
        A::Daily => "daily reset",
        A::Expired => "expired",
    }
}

fn print_entry(entry: &KeyEntry) {
    println!("key         {} ({})", entry.key, entry.chat_type.as_str());
    println!("session     {} since {} — {}", entry.session_id, time::format_millis(entry.session_started_ms), entry.reason);
    if !entry.previous_session_ids.is_empty() {
        println!("earlier     {}", entry.previous_session_ids.join(", "));
    }
    println!("created     {}", time::format_millis(entry.created_ms));
    println!("active      {}", time::format_millis(entry.updated_ms));
    for (label, value) in
        [("title", &entry.title), ("model", &entry.model), ("provider", &entry.origin.provider), ("subject", &entry.origin.subject)]
    {
        if let Some(value) = value {
            println!("{label:<11} {value}");
        }
    }
    for field in &entry.toggles {
        println!("toggle      {}={}", field.name, field.value);
    }
    for field in &entry.metadata {
        println!("meta        {}={}", field.name, field.value);
    }
}

/// `sessions.json` and each key's current session as a pi transcript in `folder`: an
/// OpenClaw agent's sessions folder. Nothing there is overwritten.
fn export_openclaw(engine: &mut dyn Engine<Error>, folder: &std::path::Path) -> CliResult {
    use mneme_host::core::interchange::ExportFormat;
    std::fs::create_dir_all(folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let write_new = |name: &str, data: &[u8]| -> CliResult {
        let path = folder.join(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| format!("cannot create {}: {e} (an existing file is not overwritten)", path.display()))?;
        std::io::Write::write_all(&mut file, data)
            .and_then(|()| file.sync_all())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let index = engine.export_openclaw_keys().map_err(|e| e.to_string())?;
    let keys = engine.keys(&[]).map_err(|e| e.to_string())?;
    let (mut written, mut missing) = (0usize, Vec::new());
    for entry in &keys {
        match engine.export_session(&entry.session_id, ExportFormat::Pi, &new_session_id()) {
            Ok(exported) => {
                write_new(&format!("{}.jsonl", entry.session_id), &exported.data)?;
                written += 1;
            }
            // A key resolved but never written to has no transcript yet; OpenClaw starts one.
            Err(Error::Session(mneme_host::core::Error::SessionNotFound { .. })) => missing.push(entry.session_id.as_str()),
            Err(error) => return Err(format!("session {} of key {}: {error}", entry.session_id, entry.key)),
        }
    }
    write_new("sessions.json", &index)?;
    println!("{}: sessions.json with {} keys and {written} transcripts", folder.display(), keys.len());
    if !missing.is_empty() {
        println!("{} keys have no transcript yet: {}", missing.len(), missing.join(", "));
    }
    Ok(())
}
