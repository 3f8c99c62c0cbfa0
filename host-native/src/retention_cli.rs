//! `mneme gc` and the archive (`mneme sessions archive|archived|restore`): sessions past
//! their time to live are archived, never deleted unless asked; debris and the archive
//! are kept under a disk budget. Run nightly (cron, a systemd timer).

use clap::Args;
use mneme_host::core::retention::{ClassTtl, Retention};
use mneme_host::core::time;
use mneme_host::{Engine, Error};

type CliResult = Result<(), String>;
const DAY_MS: i64 = 86_400_000;

#[derive(Args)]
pub struct GcArgs {
    /// Say what would be archived and deleted; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Archive sessions untouched for this long [default: 30] (a key's toggle
    /// ttl_days sets its sessions' own)
    #[arg(long, value_name = "DAYS")]
    ttl_days: Option<u32>,
    /// A time to live for a class of keys (the key's toggle `class`, else its model's
    /// provider: ollama/llama3 is ollama); repeatable [default: ollama=7]
    #[arg(long = "class", value_name = "NAME=DAYS", value_parser = parse_class)]
    classes: Vec<ClassTtl>,
    /// Delete archived sessions kept longer than --keep-archived-days (without this, only
    /// --max-disk deletes archived sessions, and only those kept that long)
    #[arg(long)]
    delete_archived: bool,
    /// How long archived sessions are kept before --delete-archived or --max-disk removes them [default: 30]
    #[arg(long, value_name = "DAYS")]
    keep_archived_days: Option<u32>,
    /// Keep torn tails, repair backups and the archive under this size, oldest first: bytes,
    /// or with KiB, MiB or GiB. Live sessions are never collected, nor archived ones kept
    /// less than --keep-archived-days or archived by this run
    #[arg(long, value_name = "SIZE", value_parser = mneme_host::core::parse_size)]
    max_disk: Option<u64>,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

fn parse_class(text: &str) -> Result<ClassTtl, String> {
    let (class, days) = text.split_once('=').filter(|(class, _)| !class.trim().is_empty()).ok_or("expected NAME=DAYS, such as ollama=7")?;
    let days: i64 = days.parse().map_err(|_| format!("`{days}` is not a number of days"))?;
    Ok(ClassTtl { class: class.to_owned(), ttl_ms: days.saturating_mul(DAY_MS) })
}

pub fn gc(engine: &mut dyn Engine<Error>, args: GcArgs, now_ms: i64) -> CliResult {
    let defaults = Retention::default();
    let policy = Retention {
        ttl_ms: args.ttl_days.map_or(defaults.ttl_ms, |d| i64::from(d) * DAY_MS),
        classes: if args.classes.is_empty() { defaults.classes } else { args.classes },
        keep_archived_ms: args.keep_archived_days.map_or(defaults.keep_archived_ms, |d| i64::from(d) * DAY_MS),
        delete_archived: args.delete_archived,
        max_disk_bytes: args.max_disk,
        dry_run: args.dry_run,
    };
    let report = engine.gc(&policy, now_ms).map_err(|e| e.to_string())?;
    if args.json {
        return crate::print_json(&report);
    }
    let (archive, remove) = if report.dry_run { ("would archive", "would delete") } else { ("archived", "deleted") };
    for expired in &report.archived {
        let idle = (now_ms - expired.last_active_ms) / DAY_MS;
        println!(
            "{archive} {} ({}): idle {idle} days since {}, time to live {} days ({})",
            expired.id,
            expired.project,
            time::format_millis(expired.last_active_ms),
            expired.ttl_ms / DAY_MS,
            expired.reason
        );
    }
    for removed in &report.removed {
        println!("{remove} {} ({} bytes): {}", removed.key, removed.bytes, removed.reason);
    }
    let freed: u64 = report.removed.iter().map(|r| r.bytes).sum();
    let (archived, removed) = (report.archived.len(), report.removed.len());
    if report.dry_run {
        println!("dry run: {archived} sessions would be archived and {removed} items deleted ({freed} bytes); nothing was changed");
    } else {
        println!(
            "{archived} sessions archived, {removed} items deleted ({freed} bytes); debris and archive now {} bytes",
            report.kept_bytes
        );
        if archived > 0 {
            println!("`mneme sessions archived` lists the archive; `mneme sessions restore ID` brings a session back");
        }
    }
    if let Some(budget) = args.max_disk.filter(|budget| report.kept_bytes > *budget) {
        println!(
            "over --max-disk {budget} bytes: sessions archived in the last {} days (or by this run) are kept; \
             --keep-archived-days lets the budget take them sooner",
            policy.keep_archived_ms / DAY_MS
        );
    }
    Ok(())
}

pub fn archive(engine: &mut dyn Engine<Error>, id: &str, now_ms: i64) -> CliResult {
    let archived = engine.archive(id, now_ms).map_err(|e| e.to_string())?;
    println!("archived session {id}: {} files, {} bytes (mneme sessions restore {id} brings it back)", archived.files, archived.bytes);
    Ok(())
}

pub fn archived(engine: &mut dyn Engine<Error>, json: bool) -> CliResult {
    let sessions = engine.archived().map_err(|e| e.to_string())?;
    if json {
        return crate::print_json(&sessions);
    }
    println!("{:<38}  {:<24}  {:>5}  {:>10}  PROJECT", "SESSION", "ARCHIVED", "FILES", "BYTES");
    for s in &sessions {
        println!("{:<38}  {:<24}  {:>5}  {:>10}  {}", s.id, time::format_millis(s.archived_ms), s.files, s.bytes, s.project);
    }
    Ok(())
}

pub fn restore(engine: &mut dyn Engine<Error>, id: &str) -> CliResult {
    let restored = engine.restore(id).map_err(|e| match e {
        Error::Session(mneme_host::core::Error::SessionNotFound { .. }) => {
            format!("no archived session `{id}`; `mneme sessions archived` lists the archive")
        }
        e => e.to_string(),
    })?;
    println!("restored session {id} into {}: {} files, {} bytes", restored.project, restored.files, restored.bytes);
    Ok(())
}
