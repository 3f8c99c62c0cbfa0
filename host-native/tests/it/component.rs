//! Properties of the embedded component itself.

use mneme_host::{COMPONENT, Runtime};

#[test]
fn component_imports_only_mneme_interfaces() {
    let runtime = Runtime::new().expect("the embedded component loads");
    let imports = runtime.imports();
    assert!(!imports.is_empty(), "the component must import storage");
    let stray: Vec<&String> = imports.iter().filter(|name| !name.starts_with("mneme:engine/")).collect();
    assert!(stray.is_empty(), "unexpected imports (WASI or env leaked in?): {stray:?}; all: {imports:?}");
    assert!(imports.iter().any(|name| name.starts_with("mneme:engine/storage")), "{imports:?}");
}

#[test]
fn embedded_bytes_are_a_component_not_a_core_module() {
    // Component binaries carry layer 1 in the version field; core modules carry layer 0.
    assert_eq!(&COMPONENT[..4], b"\0asm");
    assert_eq!(&COMPONENT[6..8], &[1, 0], "the embedded wasm is a core module, not a component");
}

/// A session past wasmtime's default 128 MiB per-call limit resumes and lists through
/// the component, as it does natively (it failed with "fuel allocated for hostcalls
/// has been exhausted").
#[test]
fn sessions_larger_than_a_hostcall_limit_come_back() {
    use mneme_host::{Durability, Engine, FsStorage};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("projects/p/big.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let mut text =
        String::from("{\"type\":\"session\",\"version\":3,\"id\":\"big\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n");
    let body = "x".repeat(100_000);
    let mut parent = String::from("null");
    for i in 0..1_400u32 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        text += &format!(
            "{{\"type\":\"message\",\"id\":\"{i:08x}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"{role}\",\"content\":[{{\"type\":\"text\",\"text\":\"{body}\"}}]}}}}\n"
        );
        parent = format!("\"{i:08x}\"");
    }
    assert!(text.len() > 128 << 20);
    std::fs::write(&file, text).unwrap();
    let runtime = Runtime::new().expect("the embedded component loads");
    let limits = mneme_host::core::Limits { part_bytes: 1 << 30, total_bytes: 1 << 30 };
    let mut engine = runtime.instantiate(FsStorage::new(dir.path()).with_durability(Durability::Buffered), limits).unwrap();
    let context = engine.context("big").expect("resume through the component");
    assert_eq!(context.messages.len(), 1_400);
    let listed = engine.list().unwrap();
    assert_eq!(listed.sessions[0].message_count, 1_400);
}
