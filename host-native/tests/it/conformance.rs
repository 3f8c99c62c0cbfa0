//! The conformance vectors through both ways of running the core on the filesystem:
//! natively linked, and inside the component under wasmtime. Both must meet every
//! expectation and give identical outcomes, step for step.

use std::fs;
use std::path::Path;

use mneme_conformance::{Keys, Seed, Subject, run_all};
use mneme_host::core::{Limits, Storage, Store, block_on};
use mneme_host::{ComponentEngine, Durability, Error, FsStorage, Runtime};

/// Lists the keys under a store's folder; holds the folder until the vector is done.
fn keys_of(dir: tempfile::TempDir) -> Keys {
    Box::new(move |prefix| {
        let storage = FsStorage::new(dir.path());
        block_on(storage.list(prefix)).expect("list the store").into_iter().map(|i| i.key).collect()
    })
}

fn seeded_storage(seed: &Seed) -> (FsStorage, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (key, bytes) in seed {
        let path = dir.path().join(key);
        fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).expect("create seed folder");
        fs::write(&path, bytes).expect("write seed file");
    }
    (FsStorage::new(dir.path()).with_durability(Durability::Buffered), dir)
}

#[test]
fn native_and_component_pass_every_vector_identically() {
    let native = run_all::<Error, _>(|seed, limits: Limits| {
        let (storage, dir) = seeded_storage(seed);
        Subject { engine: Store::with_limits(storage, limits), keys: keys_of(dir) }
    });
    let runtime = Runtime::new().expect("the embedded component loads");
    let component = run_all::<Error, _>(|seed, limits| {
        let (storage, dir) = seeded_storage(seed);
        let engine: ComponentEngine = runtime.instantiate(storage, limits).expect("instantiate");
        Subject { engine, keys: keys_of(dir) }
    });
    // The browser tests compare their outcomes with these (web/test/run.mjs).
    let outcomes = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("conformance-native.json");
    fs::write(&outcomes, serde_json::to_vec(&native).expect("outcomes are JSON")).expect("write the native outcomes");
    assert_eq!(native.len(), component.len());
    for ((name, native_steps), (_, component_steps)) in native.iter().zip(&component) {
        assert_eq!(native_steps, component_steps, "vector {name}: native and component differ");
    }
}
