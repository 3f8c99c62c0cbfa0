//! Held appends alone, for a profiler: `cargo build --release -p mneme-bench --example
//! held`, then `valgrind --tool=callgrind target/release/examples/held 5000` (or `perf
//! record`). The bench's "append to a held session" row without Cersei, the bare system
//! calls or the other rows around it: a 224-byte text appended N times (20,000 unless
//! told) to a session held in a folder store without fsync, each `NewEntry` made as the
//! bench makes it. With `--turns`, the bench's "turns of 10 entries" row instead: the
//! same N entries as turns of ten messages of that text, one write each. Prints the time
//! per entry. It allocates with the system's allocator (the bench's binary uses
//! mimalloc, whose calls cost fewer instructions): the counts in the README's Benchmark
//! section are this program's.

use std::time::Instant;

use mneme_core::{Limits, NewEntry, Provider, Role, Store, Turn, block_on};
use mneme_host::{Durability, FsStorage};

const USAGE: &str = "usage: held [ENTRIES] [--turns]   (a whole number of entries, 1 or more; 20000 unless told)";

fn main() {
    let mut entries: u32 = 20_000;
    let mut turns = false;
    for arg in std::env::args().skip(1) {
        match (arg.as_str(), arg.parse()) {
            ("--turns", _) => turns = true,
            (_, Ok(n)) if n > 0 => entries = n,
            _ => {
                eprintln!("{USAGE}");
                std::process::exit(2);
            }
        }
    }
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store = Store::with_limits(FsStorage::new(dir.path()).with_durability(Durability::Buffered), Limits::default());
    let text = "Please run the test suite again and tell me what fails. ".repeat(4);
    let role = |i: u32| if i.is_multiple_of(2) { Role::User } else { Role::Assistant };
    let entry = |i: u32, uuid: String| NewEntry {
        uuid,
        now_ms: 1_900_000_000_000 + i64::from(i),
        role: role(i),
        text: text.clone(),
        cwd: "/home/dev".into(),
    };
    block_on(store.sessions().append("appended", entry(0, "first".into()))).expect("create the session");
    block_on(store.sessions().hold("appended")).expect("hold the session");
    let started = Instant::now();
    if turns {
        let messages: Vec<String> = (0..10).map(|i| format!(r#"{{"role":"{}","content":{text:?}}}"#, role(i).as_str())).collect();
        let messages = format!("[{}]", messages.join(","));
        for i in 0..entries.div_ceil(10) {
            let turn = Turn {
                uuid: format!("turn-{i}"),
                now_ms: 1_950_000_000_000 + i64::from(i),
                cwd: "/home/dev".into(),
                provider: Provider::Anthropic,
                messages: messages.clone(),
                parent: None,
                agent: None,
            };
            block_on(store.sessions().append_turn("appended", turn)).expect("a held turn");
        }
        eprintln!("{} entries in turns of 10: {:?} each", entries.div_ceil(10) * 10, started.elapsed() / (entries.div_ceil(10) * 10));
    } else {
        for i in 0..entries {
            block_on(store.sessions().append("appended", entry(i, format!("held-{i}")))).expect("a held append");
        }
        eprintln!("{entries} held appends: {:?} each", started.elapsed() / entries);
    }
    block_on(store.sessions().release("appended")).expect("release the session");
}
