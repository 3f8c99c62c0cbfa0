//! `mneme`: agent sessions on the filesystem, run through the Mneme component.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::{Args, Parser, Subcommand, ValueEnum};
use mneme_host::core::{Entry, NewEntry, Role, SessionInfo, Transcript};
use mneme_host::{FsStorage, NativeEngine, Runtime, Sessions};

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

#[derive(Args)]
struct StoreArgs {
    /// The store's root folder [default: $MNEME_ROOT, else the per-user data folder, e.g. ~/.local/share/mneme]
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        conflicts_with = "claude_home"
    )]
    root: Option<PathBuf>,
    /// Read a Claude Code home (such as ~/.claude) as the store, read-only
    #[arg(long, global = true, value_name = "DIR")]
    claude_home: Option<PathBuf>,
    /// How to run the core: inside the WebAssembly component, or linked natively
    #[arg(long, global = true, value_enum, default_value_t = EngineKind::Component)]
    engine: EngineKind,
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
    /// Append a message to a session, creating the session if it does not exist
    Append {
        /// The session id (letters, digits, '-' and '_'; Claude Code uses UUIDs)
        id: String,
        /// Who speaks
        #[arg(long, value_enum)]
        role: RoleArg,
        /// The message text
        #[arg(long)]
        text: String,
        /// The working directory recorded in the entry; a new session is filed under
        /// the project folder derived from it [default: the current directory]
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print the written entry as JSON
        #[arg(long)]
        json: bool,
    },
    /// Run a short scripted conversation into a fresh store and show what happened
    Demo {
        /// Where to create the demo store [default: a new folder in the system temp dir]
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum SessionsCommand {
    /// List the sessions in the store, most recently updated first
    List {
        /// Print JSON (an array of session objects; see the README)
        #[arg(long)]
        json: bool,
    },
    /// Show a session's messages and what the load had to skip
    Show {
        /// The session id
        id: String,
        /// Print JSON ({entries, report, lines}; see the README)
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum RoleArg {
    User,
    Assistant,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

type CliResult = Result<(), String>;

fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Demo { dir } => demo(dir, cli.store.engine),
        Command::Sessions(SessionsCommand::List { json }) => {
            let sessions = open(&cli.store)?.list().map_err(|e| e.to_string())?;
            if json {
                print_json(&sessions)
            } else {
                print_sessions(&sessions)
            }
        }
        Command::Sessions(SessionsCommand::Show { id, json }) => {
            let transcript = open(&cli.store)?.load(&id).map_err(|e| e.to_string())?;
            if json {
                print_json(&transcript)
            } else {
                print_transcript(&transcript)
            }
        }
        Command::Append {
            id,
            role,
            text,
            cwd,
            json,
        } => {
            let cwd = match cwd {
                Some(cwd) => cwd,
                None => std::env::current_dir()
                    .map_err(|e| format!("cannot read the current directory ({e}); pass --cwd"))?,
            };
            let role = match role {
                RoleArg::User => Role::User,
                RoleArg::Assistant => Role::Assistant,
            };
            let entry = open(&cli.store)?
                .append(&id, new_entry(role, text, &cwd))
                .map_err(|e| e.to_string())?;
            if json {
                print_json(&entry)
            } else {
                println!(
                    "appended {} to session {id} (line {})",
                    entry.uuid.as_deref().unwrap_or("?"),
                    entry.line
                );
                Ok(())
            }
        }
    }
}

fn default_root() -> Result<PathBuf, String> {
    if let Some(root) = std::env::var_os("MNEME_ROOT") {
        return Ok(PathBuf::from(root));
    }
    dirs::data_dir()
        .map(|dir| dir.join("mneme"))
        .ok_or_else(|| {
            "no per-user data folder is known on this system; pass --root DIR".to_owned()
        })
}

fn open(args: &StoreArgs) -> Result<Box<dyn Sessions>, String> {
    let storage = match (&args.claude_home, &args.root) {
        (Some(home), _) => {
            if !home.join("projects").is_dir() {
                return Err(format!(
                    "{} has no projects/ folder; is it a Claude Code home such as ~/.claude?",
                    home.display()
                ));
            }
            FsStorage::read_only(home)
        }
        (None, Some(root)) => FsStorage::new(root),
        (None, None) => FsStorage::new(default_root()?),
    };
    engine(args.engine, storage)
}

fn engine(kind: EngineKind, storage: FsStorage) -> Result<Box<dyn Sessions>, String> {
    Ok(match kind {
        EngineKind::Native => Box::new(NativeEngine::new(storage)),
        EngineKind::Component => Box::new(
            Runtime::new()
                .and_then(|rt| rt.instantiate(storage))
                .map_err(|e| e.to_string())?,
        ),
    })
}

fn new_entry(role: Role, text: String, cwd: &Path) -> NewEntry {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    NewEntry {
        uuid: uuid::Uuid::new_v4().to_string(),
        now_ms,
        role,
        text,
        cwd: cwd.to_string_lossy().into_owned(),
    }
}

fn print_json(value: &impl serde::Serialize) -> CliResult {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| e.to_string())?;
    writeln!(out).map_err(|e| e.to_string())
}

fn print_sessions(sessions: &[SessionInfo]) -> CliResult {
    if sessions.is_empty() {
        println!("no sessions (append one with `mneme append <id> --role user --text ...`)");
        return Ok(());
    }
    println!(
        "{:<36}  {:>7}  {:>5}  {:>9}  {:<24}  TITLE",
        "ID", "ENTRIES", "MSGS", "BYTES", "UPDATED"
    );
    for s in sessions {
        println!(
            "{:<36}  {:>7}  {:>5}  {:>9}  {:<24}  {}",
            s.id,
            s.entries,
            s.messages,
            s.bytes,
            s.updated.as_deref().unwrap_or("-"),
            s.title.as_deref().unwrap_or("")
        );
    }
    Ok(())
}

fn print_transcript(transcript: &Transcript) -> CliResult {
    for entry in transcript
        .entries
        .iter()
        .filter(|e| e.role.is_some() && !e.text.is_empty())
    {
        println!(
            "[{}] {} {}:",
            entry.line,
            entry.timestamp.as_deref().unwrap_or("-"),
            entry.role.as_deref().unwrap_or(&entry.kind)
        );
        for line in entry.text.lines() {
            println!("    {line}");
        }
    }
    let report = &transcript.report;
    for skipped in &report.skipped {
        eprintln!("skipped line {}: {}", skipped.line, skipped.reason);
    }
    if report.torn_tail {
        eprintln!("the last line is torn (no newline at the end): it was cut off mid-write");
    }
    Ok(())
}

const DEMO_SCRIPT: [(Role, &str); 6] = [
    (
        Role::User,
        "Hi! I keep losing my agent's context between runs. Can you remember things?",
    ),
    (
        Role::Assistant,
        "Yes: every message we exchange is appended to a session transcript on disk, one JSON line each.",
    ),
    (Role::User, "What happens if my machine crashes mid-write?"),
    (
        Role::Assistant,
        "Each append is a single atomic write, so a crash leaves at most a torn last line, which the reader reports instead of losing the rest.",
    ),
    (Role::User, "And can Claude Code read these files?"),
    (
        Role::Assistant,
        "They are Claude Code's own JSONL format: same fields, same parentUuid chain, same folder layout.",
    ),
];

fn demo(dir: Option<PathBuf>, kind: EngineKind) -> CliResult {
    let root = match dir {
        Some(dir) => dir,
        None => std::env::temp_dir().join(format!("mneme-demo-{}", uuid::Uuid::new_v4().simple())),
    };
    if root.exists()
        && std::fs::read_dir(&root)
            .map_err(|e| format!("cannot read {}: {e}", root.display()))?
            .next()
            .is_some()
    {
        return Err(format!(
            "{} is not empty; the demo needs a fresh folder",
            root.display()
        ));
    }
    let how = match kind {
        EngineKind::Component => "the Mneme component (wasmtime)",
        EngineKind::Native => "the natively linked core",
    };
    println!("Mneme demo: a scripted conversation through {how}");
    println!("store: {}\n", root.display());
    let mut sessions = engine(kind, FsStorage::new(&root))?;
    let session_id = uuid::Uuid::new_v4().to_string();
    let cwd = root.join("workspace");
    let mut written: Vec<Entry> = Vec::new();
    for (role, text) in DEMO_SCRIPT {
        let entry = sessions
            .append(&session_id, new_entry(role, text.to_owned(), &cwd))
            .map_err(|e| e.to_string())?;
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
    let intact = transcript.entries == written
        && transcript.report.skipped.is_empty()
        && !transcript.report.torn_tail;
    println!(
        "\nreloaded {} entries from disk: {}",
        transcript.entries.len(),
        if intact {
            "identical to what was written"
        } else {
            "DIFFERENT from what was written"
        }
    );
    println!();
    print_sessions(&sessions.list().map_err(|e| e.to_string())?)?;
    let info = sessions
        .list()
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|s| s.id == session_id);
    if let Some(info) = info {
        println!("\ntranscript file: {}", root.join(&info.key).display());
    }
    println!(
        "see it again with: mneme --root {} sessions show {session_id}",
        root.display()
    );
    if intact {
        Ok(())
    } else {
        Err("the reloaded transcript does not match what was appended".into())
    }
}

fn short(id: Option<&str>) -> &str {
    id.map_or("(root)", |id| id.get(..8).unwrap_or(id))
}
