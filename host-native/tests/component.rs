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
