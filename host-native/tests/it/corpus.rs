//! Every corpus file through the natively linked core and through the component,
//! against counts computed independently by `tests/corpus/count.py` (Python's json).

use std::fs;
use std::path::Path;

use mneme_host::core::{CheckReport, Limits};
use mneme_host::{Engine, FsStorage, Runtime};
use serde_json::{Value, json};

fn counts(report: &CheckReport) -> Value {
    let load = &report.load;
    json!({
        "entries": load.entry_count,
        "by_type": load.by_type.iter().map(|t| (t.type_.clone(), json!(t.count))).collect::<serde_json::Map<_, _>>(),
        "skipped": load.skipped.len(),
        "torn_tail": load.torn_tail,
        "recovered_glued": load.recovered_glued,
        "invalid_utf8": load.invalid_utf8,
    })
}

#[test]
fn corpus_counts_match_an_independent_count_on_both_engines() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let expected: serde_json::Map<String, Value> =
        serde_json::from_str(&fs::read_to_string(corpus.join("expected-counts.json")).unwrap()).unwrap();
    assert!(expected.len() >= 40);
    let dir = tempfile::tempdir().unwrap();
    let mut native = mneme_host::native(FsStorage::new(dir.path()), Limits::default());
    let mut component = Runtime::new().unwrap().instantiate(FsStorage::new(dir.path()), Limits::default()).unwrap();
    for (file, want) in &expected {
        let bytes = fs::read(corpus.join(file)).unwrap();
        let native_report = native.check_bytes(&bytes).unwrap();
        assert_eq!(&counts(&native_report), want, "{file} (native)");
        assert_eq!(component.check_bytes(&bytes).unwrap(), native_report, "{file}: component and native differ");
    }
}
