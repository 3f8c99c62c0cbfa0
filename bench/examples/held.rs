//! Held appends alone, for a profiler: `cargo build --release -p mneme-bench --example
//! held`, then `valgrind --tool=callgrind target/release/examples/held 5000` (or `perf
//! record`). The bench's "append to a held session" row without Cersei, the bare system
//! calls or the other rows around it: a 224-byte text appended N times (20,000 unless
//! told) to a session held in a folder store without fsync, each `NewEntry` made as the
//! bench makes it. Prints the time per append. It allocates with the system's
//! allocator (the bench's binary uses mimalloc, whose calls cost fewer instructions):
//! the counts in the README's Benchmark section are this program's.

use std::time::Instant;

use mneme_core::{Limits, NewEntry, Role, Store, block_on};
use mneme_host::{Durability, FsStorage};

fn main() {
    let appends: u32 = match std::env::args().nth(1).map(|n| n.parse()) {
        None => 20_000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: held [APPENDS]   (a whole number of appends, 1 or more; 20000 unless told)");
            std::process::exit(2);
        }
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store = Store::with_limits(FsStorage::new(dir.path()).with_durability(Durability::Buffered), Limits::default());
    let text = "Please run the test suite again and tell me what fails. ".repeat(4);
    let entry = |i: u32, uuid: String| NewEntry {
        uuid,
        now_ms: 1_900_000_000_000 + i64::from(i),
        role: if i.is_multiple_of(2) { Role::User } else { Role::Assistant },
        text: text.clone(),
        cwd: "/home/dev".into(),
    };
    block_on(store.append("appended", entry(0, "first".into()))).expect("create the session");
    block_on(store.hold("appended")).expect("hold the session");
    let started = Instant::now();
    for i in 0..appends {
        block_on(store.append("appended", entry(i, format!("held-{i}")))).expect("a held append");
    }
    eprintln!("{appends} held appends: {:?} each", started.elapsed() / appends);
    block_on(store.release("appended")).expect("release the session");
}
