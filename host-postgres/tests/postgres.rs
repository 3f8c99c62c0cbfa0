//! PgStorage against a real PostgreSQL server (a throwaway cluster per test): the
//! core's storage contract, the conformance vectors (outcomes identical to the native
//! host's, the core on a folder), eight processes appending to one session, and a
//! server crash in the middle of appends.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use mneme_conformance::{Subject, run_all};
use mneme_core::{Error, Limits, NewEntry, Role, Storage, Store, block_on};
use mneme_fs::{Durability, FsStorage};
use mneme_postgres::PgStorage;
use mneme_postgres::cluster::Cluster;

/// A schema no other store in this process uses.
fn fresh_schema() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("store_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A message stamped with the wall clock, as a real writer's would be (entries from
/// several processes must be in time order for a writer to follow the others' lines).
fn entry(text: String, n: i64) -> NewEntry {
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    NewEntry { uuid: uuid(n), now_ms, role: Role::User, text, cwd: "/w".into() }
}

/// A uuid-shaped id unique to this process and call.
fn uuid(n: i64) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "00000000-{:04x}-4000-8000-{:012x}",
        std::process::id() & 0xffff,
        (n as u64) << 16 | u64::from(NEXT.fetch_add(1, Ordering::Relaxed))
    )
}

#[test]
fn the_storage_contract_holds() {
    let cluster = Cluster::start().expect("start a PostgreSQL cluster");
    let schema = fresh_schema();
    let a = PgStorage::open(&cluster.url(), &schema).expect("open").with_lock_timeout(Duration::from_millis(50));
    let b = PgStorage::open(&cluster.url(), &schema).expect("open").with_lock_timeout(Duration::from_millis(50));
    let failures = block_on(mneme_core::storage::contract::run(&a, &b));
    assert!(failures.is_empty(), "the contract broke:\n{}", failures.join("\n"));
}

#[test]
fn every_vector_gives_the_outcomes_the_native_host_gives() {
    let cluster = Cluster::start().expect("start a PostgreSQL cluster");
    let url = cluster.url();
    let postgres = run_all::<Error, _>(|seed, limits: Limits| {
        let schema = fresh_schema();
        let storage = PgStorage::open(&url, &schema).expect("open");
        for (key, bytes) in seed {
            block_on(storage.replace(key, bytes, None)).expect("seed");
        }
        let lister = PgStorage::open(&url, &schema).expect("open");
        let keys = Box::new(move |prefix: &str| block_on(lister.list(prefix)).expect("list").into_iter().map(|i| i.key).collect());
        Subject { engine: Store::with_limits(storage, limits), keys }
    });
    // The native host: the core on a folder, as `mneme` runs it.
    let native = run_all::<Error, _>(|seed, limits: Limits| {
        let dir = tempfile::tempdir().expect("a temp dir");
        let storage = FsStorage::new(dir.path()).with_durability(Durability::Buffered);
        for (key, bytes) in seed {
            block_on(storage.replace(key, bytes, None)).expect("seed");
        }
        let lister = FsStorage::new(dir.path());
        let keys = Box::new(move |prefix: &str| {
            let _held = &dir;
            block_on(lister.list(prefix)).expect("list").into_iter().map(|i| i.key).collect()
        });
        Subject { engine: Store::with_limits(storage, limits), keys }
    });
    assert_eq!(postgres.len(), native.len());
    for ((name, on_postgres), (_, on_files)) in postgres.iter().zip(&native) {
        assert_eq!(on_postgres, on_files, "vector {name}: PostgreSQL and the folder differ");
    }
}

/// Run as a child process by the tests below (the test binary runs itself with
/// `MNEME_PG_WRITER` set): appends `count` messages `<name> <i>` to session `shared`,
/// printing each one's uuid once it is acknowledged. Does nothing in a normal run.
#[test]
fn writer_process() {
    let Ok(spec) = std::env::var("MNEME_PG_WRITER") else { return };
    let mut parts = spec.splitn(4, '\n');
    let (Some(url), Some(schema), Some(name), Some(count)) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        panic!("MNEME_PG_WRITER is url, schema, name and count on separate lines")
    };
    let store = Store::new(PgStorage::open(url, schema).expect("open"));
    let count: u32 = count.parse().expect("a count");
    // The test harness has printed "test writer_process ... " without a newline.
    println!();
    for i in 0..count {
        match block_on(store.sessions().append("shared", entry(format!("{name} {i}"), i64::from(i)))) {
            Ok(written) => println!("ack {}", written.uuid.unwrap_or_default()),
            Err(error) => {
                println!("error {error}");
                return;
            }
        }
    }
}

fn spawn_writer(url: &str, schema: &str, name: &str, count: u32) -> std::process::Child {
    Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "writer_process", "--nocapture", "--test-threads", "1"])
        .env("MNEME_PG_WRITER", format!("{url}\n{schema}\n{name}\n{count}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn a writer")
}

/// The uuids a writer printed (each one acknowledged), and the error it stopped on.
fn acknowledged(child: &mut std::process::Child) -> (Vec<String>, Option<String>) {
    let stdout = child.stdout.take().expect("piped stdout");
    let mut uuids = Vec::new();
    let mut error = None;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        if let Some(message) = line.strip_prefix("error ") {
            error = Some(message.to_owned());
        } else if let Some(uuid) = line.strip_prefix("ack ") {
            uuids.push(uuid.to_owned());
        }
    }
    (uuids, error)
}

#[test]
fn eight_processes_append_to_one_session_and_nothing_is_lost_or_interleaved() {
    let cluster = Cluster::start().expect("start a PostgreSQL cluster");
    let (url, schema) = (cluster.url(), fresh_schema());
    let (writers, each) = (8, 1000);
    let mut children: Vec<_> = (0..writers).map(|w| spawn_writer(&url, &schema, &format!("w{w}"), each)).collect();
    for child in &mut children {
        let (uuids, error) = acknowledged(child);
        assert_eq!(error, None);
        assert_eq!(uuids.len(), each as usize);
        assert!(child.wait().expect("wait").success());
    }
    let store = Store::new(PgStorage::open(&url, &schema).expect("open"));
    let context = block_on(store.sessions().context("shared")).expect("context");
    // Without exclusion, two appends would have continued from the same entry and
    // forked the session: its main chain would be shorter than what was written.
    assert_eq!(context.messages.len(), (writers * each) as usize, "the main chain lost messages");
    for w in 0..writers {
        let mine: Vec<u32> =
            context.messages.iter().filter_map(|m| m.text.strip_prefix(&format!("w{w} ")).and_then(|n| n.parse().ok())).collect();
        assert_eq!(mine, (0..each).collect::<Vec<_>>(), "writer {w}'s messages are missing or out of order");
    }
    let report = block_on(store.sessions().check("shared")).expect("check");
    assert!(report.load.skipped.is_empty() && !report.load.torn_tail && report.dangling_parents.is_empty(), "{report:?}");
}

#[test]
fn a_server_crash_mid_append_loses_no_acknowledged_entry() {
    let cluster = Cluster::start().expect("start a PostgreSQL cluster");
    let (url, schema) = (cluster.url(), fresh_schema());
    let mut writer = spawn_writer(&url, &schema, "w", 1_000_000);
    let stdout = writer.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let mut acked: Vec<String> = lines.by_ref().filter_map(|line| line.strip_prefix("ack ").map(str::to_owned)).take(300).collect();
    cluster.crash().expect("crash the server");
    let mut stopped_on = None;
    for line in lines {
        if let Some(message) = line.strip_prefix("error ") {
            stopped_on = Some(message.to_owned());
        } else if let Some(uuid) = line.strip_prefix("ack ") {
            acked.push(uuid.to_owned());
        }
    }
    assert!(writer.wait().expect("wait").success());
    let stopped_on = stopped_on.expect("the writer saw the crash");
    assert!(stopped_on.contains("PostgreSQL"), "the error does not say where it failed: {stopped_on}");

    cluster.start_server().expect("restart the server");
    let store = Store::new(PgStorage::open(&url, &schema).expect("open after the crash"));
    let transcript = block_on(store.sessions().load("shared")).expect("load after the crash");
    let stored: std::collections::HashSet<_> = transcript.entries.iter().filter_map(|e| e.uuid.clone()).collect();
    let lost: Vec<_> = acked.iter().filter(|uuid| !stored.contains(*uuid)).collect();
    assert!(lost.is_empty(), "{} acknowledged entries were lost after the crash: {lost:?}", lost.len());
    assert!(transcript.report.skipped.is_empty() && !transcript.report.torn_tail, "{:?}", transcript.report);
    let next = block_on(store.sessions().append("shared", entry("after the crash".into(), 1))).expect("append after the crash");
    assert_eq!(next.parent_uuid, transcript.entries.last().and_then(|e| e.uuid.clone()), "the next append continues the chain");
}

/// A held session whose connection dies (a server restart, a proxy's timeout): each
/// call fails and says how to go on, and once the session is released it is written
/// again on a new connection, with nothing lost that was acknowledged.
#[test]
fn a_held_session_whose_connection_died_is_written_again_once_released() {
    let cluster = Cluster::start().expect("start a PostgreSQL cluster");
    let schema = fresh_schema();
    let store = Store::new(PgStorage::open(&cluster.url(), &schema).expect("open"));
    block_on(store.sessions().append("s", entry("first".into(), 0))).expect("an append");
    block_on(store.sessions().hold("s")).expect("hold the session");
    let mut admin = postgres::Client::connect(&cluster.url(), postgres::NoTls).expect("connect");
    let killed = admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'",
            &[],
        )
        .expect("terminate the store's connection");
    assert_eq!(killed, 1, "the store's one connection");
    let refused = block_on(store.sessions().append("s", entry("second".into(), 1))).expect_err("the lock went with the connection");
    assert!(refused.to_string().contains("release its session (`release`, or close the store) and `reopen` it"), "{refused}");
    block_on(store.sessions().release("s")).expect("release the session");
    store.sessions().reopen("s");
    block_on(store.sessions().append("s", entry("third".into(), 2))).expect("an append on a new connection");
    let texts: Vec<String> =
        block_on(store.sessions().context("s")).expect("context").messages.into_iter().map(|m| m.text.into()).collect();
    assert_eq!(texts, ["first", "third"]);
}

/// A role granted only SELECT reads a store, lists it and searches it (the search
/// index it cannot save is kept in memory), and its writes are refused as read-only,
/// not as a failed disk.
#[test]
fn a_role_that_may_only_read_searches_and_is_refused_writes_as_read_only() {
    let cluster = Cluster::start().expect("start a PostgreSQL cluster");
    let schema = fresh_schema();
    let writer = Store::new(PgStorage::open(&cluster.url(), &schema).expect("open"));
    block_on(writer.sessions().append("s", entry("the deploy goes to staging".into(), 0))).expect("an append");
    let mut admin = postgres::Client::connect(&cluster.url(), postgres::NoTls).expect("connect");
    admin
        .batch_execute(&format!(
            "CREATE ROLE reader LOGIN; GRANT USAGE ON SCHEMA {schema} TO reader; GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO reader;"
        ))
        .expect("a role that may only read");
    let as_reader = cluster.url().replace("user=postgres", "user=reader");
    let reader = Store::new(PgStorage::open(&as_reader, &schema).expect("a store there opens for a role that may read it"));
    assert_eq!(block_on(reader.sessions().list()).expect("list").sessions.len(), 1);
    let hits =
        block_on(reader.sessions().search("deploy", 10, None, Default::default())).expect("a search through a role that may only read");
    assert_eq!(hits.len(), 1, "{hits:?}");
    let refused = block_on(reader.sessions().append("s", entry("refused".into(), 1))).expect_err("the role writes nothing");
    assert!(matches!(refused, Error::Storage(mneme_core::StorageError::ReadOnly { .. })), "{refused:?}");
    // A role that may not even read is told which grant it lacks, not that the store is read-only.
    admin
        .batch_execute(&format!("CREATE ROLE stranger LOGIN; GRANT USAGE ON SCHEMA {schema} TO stranger;"))
        .expect("a role that may not read");
    let as_stranger = cluster.url().replace("user=postgres", "user=stranger");
    let stranger = Store::new(PgStorage::open(&as_stranger, &schema).expect("the schema's tables are there"));
    let denied = block_on(stranger.sessions().list()).expect_err("the role reads nothing").to_string();
    assert!(denied.contains("may not read the store's tables") && denied.contains("SELECT ON ALL TABLES"), "{denied}");
}

/// A read-only connection (a replica, a role that may only read) opens a store that
/// exists and reads it; its writes are refused as read-only. A store that does not
/// exist yet cannot be made through it, and the error says so.
#[test]
fn a_read_only_connection_reads_a_store_and_says_why_it_cannot_make_one() {
    let cluster = Cluster::start().expect("start a PostgreSQL cluster");
    let schema = fresh_schema();
    let writer = Store::new(PgStorage::open(&cluster.url(), &schema).expect("open"));
    block_on(writer.sessions().append("s", entry("written".into(), 0))).expect("an append");
    let read_only = format!("{} options='-c default_transaction_read_only=on'", cluster.url());
    let reader = Store::new(PgStorage::open(&read_only, &schema).expect("a store there already opens read-only"));
    let texts: Vec<String> =
        block_on(reader.sessions().context("s")).expect("context").messages.into_iter().map(|m| m.text.into()).collect();
    assert_eq!(texts, ["written"]);
    assert_eq!(block_on(reader.sessions().list()).expect("list").sessions.len(), 1);
    let refused = block_on(reader.sessions().append("s", entry("refused".into(), 1))).expect_err("a read-only connection writes nothing");
    assert!(matches!(refused, Error::Storage(mneme_core::StorageError::ReadOnly { .. })), "{refused:?}");
    let Err(missing) = PgStorage::open(&read_only, &fresh_schema()) else {
        panic!("a read-only connection opened a store that is not there")
    };
    let missing = missing.to_string();
    assert!(missing.contains("holds no Mneme store") && missing.contains("read-only"), "{missing}");
}

/// A store that cannot be reached says why in the server's and the system's words: the
/// driver's own text is only a category ("db error", "error connecting to server").
#[test]
fn a_store_that_cannot_be_reached_says_why_in_the_servers_words() {
    let cluster = Cluster::start().expect("start a PostgreSQL cluster");
    let as_nobody = cluster.url().replace("user=postgres", "user=nobody");
    let Err(refused) = PgStorage::open(&as_nobody, &fresh_schema()) else { panic!("an unknown role connected") };
    let refused = refused.to_string();
    assert!(refused.contains(r#"role "nobody" does not exist"#), "{refused}");
    drop(cluster);
    let Err(gone) = PgStorage::open("host=127.0.0.1 port=1 user=postgres dbname=postgres connect_timeout=5", &fresh_schema()) else {
        panic!("a server that is not there answered")
    };
    let gone = gone.to_string();
    assert!(gone.contains("Connection refused") || gone.contains("connection refused"), "{gone}");
}
