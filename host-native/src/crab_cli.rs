//! `mneme crab …`: sessions kept as crab (seed 004) names them — `<agent>_<sender>_<seq>`,
//! `_<title>` once titled — with crab's meta line, never rewritten: a new meta line is
//! appended for a title or more uptime, and the newest one counts.

use clap::{Args, Subcommand};
use mneme_host::core::crab::CrabSession;
use mneme_host::{Engine, Error};

type CliResult = Result<(), String>;

#[derive(Args)]
pub struct CrabArgs {
    #[command(subcommand)]
    command: CrabCommand,
}

#[derive(Subcommand)]
enum CrabCommand {
    /// Start the next session of an agent with a sender: <agent>_<sender>_<seq>.jsonl,
    /// seq one past the latest, with crab's meta line
    Start {
        /// The agent's name, the first part of its session files' names
        agent: String,
        /// Who the agent talks to (slugged into the name: "Tg 12345" → tg-12345)
        sender: String,
        /// Who started it (the meta line's created_by)
        #[arg(long, default_value = "user")]
        created_by: String,
        #[command(flatten)]
        common: Common,
    },
    /// The newest session of an agent with a sender (crab's find_latest_session)
    Latest {
        /// The agent's name, the first part of its session files' names
        agent: String,
        /// Who the agent talks to, as given to `start`
        sender: String,
        #[command(flatten)]
        common: Common,
    },
    /// A session's name parts and its newest meta line
    Show {
        /// The session id: its file name without .jsonl (<agent>_<sender>_<seq>[_<title>])
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Title a session: its file is renamed <agent>_<sender>_<seq>_<title slug>.jsonl and
    /// a meta line with the title appended
    Title {
        /// The session id: its file name without .jsonl (<agent>_<sender>_<seq>[_<title>])
        id: String,
        /// The title (slugged into the file's name)
        title: String,
        #[arg(long)]
        json: bool,
    },
    /// Add active time to a session's uptime_secs (an appended meta line)
    Uptime {
        /// The session id: its file name without .jsonl (<agent>_<sender>_<seq>[_<title>])
        id: String,
        /// Seconds of active time to add
        #[arg(allow_negative_numbers = true)]
        secs: u64,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct Common {
    /// The project (folder) crab's sessions are kept in
    #[arg(long, default_value = mneme_host::core::crab::DEFAULT_PROJECT)]
    project: String,
    #[arg(long)]
    json: bool,
}

pub fn run(open: impl FnOnce() -> Result<Box<dyn Engine<Error>>, String>, args: CrabArgs, now_ms: i64) -> CliResult {
    let mut engine = open()?;
    let e = |e: Error| e.to_string();
    let (session, json) = match args.command {
        CrabCommand::Start { agent, sender, created_by, common } => {
            (engine.crab_start(Some(&common.project), &agent, &sender, &created_by, now_ms).map_err(e)?, common.json)
        }
        CrabCommand::Latest { agent, sender, common } => match engine.crab_latest(Some(&common.project), &agent, &sender).map_err(e)? {
            Some(session) => (session, common.json),
            None if common.json => return crate::print_json(&serde_json::Value::Null),
            None => return Err(format!("{agent} has no session with {sender} in {}; start one with `mneme crab start`", common.project)),
        },
        CrabCommand::Show { id, json } => (engine.crab_show(&id).map_err(e)?, json),
        CrabCommand::Title { id, title, json } => (engine.crab_set_title(&id, &title).map_err(e)?, json),
        CrabCommand::Uptime { id, secs, json } => (engine.crab_add_uptime(&id, secs).map_err(e)?, json),
    };
    if json {
        return crate::print_json(&session);
    }
    print_session(&session);
    Ok(())
}

fn print_session(session: &CrabSession) {
    println!("{}  (project {}, agent {}, sender {}, #{})", session.id, session.project, session.agent, session.sender, session.seq);
    if !session.title.is_empty() {
        println!("title       {}", session.title);
    }
    println!("created     {} by {}", session.created_at, session.created_by);
    println!("uptime      {} s", session.uptime_secs);
}
