//! `cargo xtask bench-storage`: the same sessions through each storage a `mneme`
//! process can use, side by side in one run: a folder (FsStorage, fsync per write) and
//! PostgreSQL (PgStorage on a throwaway local cluster, a durable commit per write).
//! Prints a table; asserts nothing.
//!   cargo xtask bench-storage [appends]

use std::time::{Duration, Instant};

use mneme_core::{Limits, NewEntry, Role, Storage, Store, block_on};
use mneme_host::{Durability, FsStorage, HostStorage, PgStorage};
use mneme_postgres::cluster::Cluster;

fn entry(i: u64) -> NewEntry {
    NewEntry {
        uuid: format!("00000000-0000-4000-8000-{i:012x}"),
        now_ms: 1_700_000_000_000 + i as i64,
        role: if i.is_multiple_of(2) { Role::User } else { Role::Assistant },
        text: format!("message {i}: {}", "lorem ipsum dolor sit amet ".repeat(8)),
        cwd: "/bench".into(),
    }
}

/// Opens a fresh handle on one store.
type Opener<'a> = Box<dyn Fn() -> HostStorage + 'a>;

struct Row {
    operation: String,
    results: Vec<Duration>,
    per: u64,
}

fn per_call(d: Duration, per: u64) -> String {
    let micros = d.as_secs_f64() * 1e6 / per as f64;
    if micros >= 1000.0 { format!("{:.2} ms", micros / 1000.0) } else { format!("{micros:.1} µs") }
}

fn time(body: impl FnOnce()) -> Duration {
    let started = Instant::now();
    body();
    started.elapsed()
}

const USAGE: &str = "\
usage: cargo xtask bench-storage [APPENDS]

The same sessions through a folder (fsync per write) and through PostgreSQL (a
throwaway local cluster, a durable commit per write), side by side; prints a table.

  APPENDS      appends per row (1000)
  -h, --help   this text
";

/// Errors are printed as their text, not as a quoted Rust string.
fn main() {
    if let Err(error) = run() {
        eprintln!("bench-storage: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let appends: u64 = match (args.next(), args.next()) {
        (Some(help), _) if help == "-h" || help == "--help" => {
            print!("{USAGE}");
            return Ok(());
        }
        (None, _) => 1000,
        (Some(n), None) => match n.parse() {
            Ok(appends) if appends > 0 => appends,
            _ => return Err(format!("`{n}` is not a number of appends (1 or more)\n\n{USAGE}")),
        },
        (Some(_), Some(extra)) => return Err(format!("unexpected `{extra}`\n\n{USAGE}")),
    };
    let cluster = Cluster::start()?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let storages: Vec<(&str, Opener)> = vec![
        ("folder (fsync)", Box::new(|| FsStorage::new(dir.path()).with_durability(Durability::Fsync).into())),
        ("PostgreSQL (local socket)", Box::new(|| PgStorage::open(&cluster.url(), "bench").expect("open the PostgreSQL store").into())),
    ];
    let mut rows: Vec<Row> = Vec::new();
    let mut record = |operation: String, per: u64, d: Duration| match rows.iter_mut().find(|r| r.operation == operation) {
        Some(row) => row.results.push(d),
        None => rows.push(Row { operation, results: vec![d], per }),
    };
    for (_, open) in &storages {
        let store = Store::with_limits(open(), Limits::default());
        let d = time(|| (0..appends).for_each(|i| drop(block_on(store.sessions().append("appended", entry(i))).expect("append"))));
        record(format!("append {appends} entries, one call each"), appends, d);
        block_on(store.sessions().append("held", entry(0))).map_err(|e| e.to_string())?;
        block_on(store.sessions().hold("held")).map_err(|e| e.to_string())?;
        let d = time(|| (1..=appends).for_each(|i| drop(block_on(store.sessions().append("held", entry(i))).expect("append"))));
        block_on(store.sessions().release("held")).map_err(|e| e.to_string())?;
        record(format!("append {appends} entries to a held session"), appends, d);
        // A fresh store, so nothing is cached from the writes.
        let reader = Store::with_limits(open(), Limits::default());
        let d = time(|| drop(block_on(reader.sessions().load("appended")).expect("load")));
        record(format!("load a session of {appends} entries"), 1, d);
        let d = time(|| drop(block_on(reader.sessions().context("appended")).expect("context")));
        record(format!("resume context of {appends} entries"), 1, d);
        let d = time(|| drop(block_on(reader.sessions().list()).expect("list")));
        record("list 2 sessions".into(), 1, d);
        let storage = open();
        let size = block_on(storage.list("projects/")).map_err(|e| e.to_string())?.iter().map(|k| k.size).sum::<u64>();
        let d = time(|| drop(block_on(storage.read("projects/-bench/appended.jsonl", 0, None)).expect("read")));
        record(format!("read one file whole ({} KB)", size / 2048), 1, d);
    }
    println!("| operation | {} |", storages.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(" | "));
    println!("|---|{}", "---|".repeat(storages.len()));
    for row in rows {
        println!("| {} | {} |", row.operation, row.results.iter().map(|d| per_call(*d, row.per)).collect::<Vec<_>>().join(" | "));
    }
    Ok(())
}
