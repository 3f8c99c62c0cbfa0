//! What the fuzz targets (`fuzz/`) run, shared with the replay of every input that ever
//! crashed one (`fuzz/crashers/<target>/`, run by the test command): arbitrary bytes
//! through the core's reading paths, the turn input, the CLAUDE.md resolver and the
//! memory file parser. Each returns normally for any input; a panic is the defect.

use mneme_core::gates::ExtractionSettings;
use mneme_core::{InMemoryStorage, Mode, Provider, Settings, Storage, Store, Turn, block_on};

/// The reader alone: the load report and the structural check of a transcript.
pub fn reader(data: &[u8]) {
    let _ = mneme_core::load_report(data);
    let _ = mneme_core::check_bytes(data);
}

/// The bytes as a session file (Claude Code's, pi's or crab's, whatever they look like),
/// through every read: load, context (from its end and whole), provider contexts,
/// branches and the ledger, compaction plans and the offline summary, the gates.
pub fn session(data: &[u8]) {
    let storage = InMemoryStorage::new();
    if block_on(storage.append("projects/p/s.jsonl", data)).is_err() {
        return;
    }
    let store = Store::new(&storage);
    let _ = block_on(store.sessions().load("s"));
    let _ = block_on(store.sessions().context("s"));
    // The models a request may go to: none, one the bytes' replies may name, and names
    // that try the comparison (a dot, a date, a tag; non-ASCII around a tag and a date).
    for model in [None, Some("claude-sonnet-4-5"), Some("claude-sonnet-4.5-20250929[1m]"), Some("é@2025092ü]")] {
        for provider in [Provider::Anthropic, Provider::Openai] {
            let _ = block_on(store.sessions().provider_context("s", provider, model, &[]));
        }
    }
    let _ = block_on(store.sessions().usage("s", None));
    let _ = block_on(store.sessions().check("s"));
    for mode in [Mode::Auto, Mode::Manual, Mode::Overflow] {
        if let Ok(plan) =
            block_on(store.compaction().plan_compaction("s", &Settings { context_window: 2_000, ..Settings::default() }, mode))
        {
            let _ = block_on(store.compaction().summarize_offline("s", &plan));
        }
    }
    let _ = block_on(store.gates().extraction_gate("s", &ExtractionSettings::default()));
}

/// The bytes as a turn (the first byte picks the shape), appended to a fresh session
/// and to one that has a pending call, then resumed in both shapes.
pub fn turn(data: &[u8]) {
    let Some((&shape, rest)) = data.split_first() else { return };
    let provider = if shape % 2 == 0 { Provider::Anthropic } else { Provider::Openai };
    let messages = String::from_utf8_lossy(rest).into_owned();
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let call = r#"[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}]"#;
    let new_turn = |uuid: &str, messages: String, provider| Turn {
        uuid: uuid.into(),
        now_ms: 1_771_267_670_590,
        cwd: "/p".into(),
        provider,
        messages,
        parent: None,
        agent: None,
    };
    let _ = block_on(store.sessions().append_turn("fresh", new_turn("u1", messages.clone(), provider)));
    let _ = block_on(store.sessions().append_turn("pending", new_turn("u2", call.into(), Provider::Anthropic)));
    let _ = block_on(store.sessions().append_turn("pending", new_turn("u3", messages, provider)));
    for id in ["fresh", "pending"] {
        for (provider, model) in [(Provider::Anthropic, None), (Provider::Openai, None), (Provider::Anthropic, Some("claude-opus-4-5"))] {
            let _ = block_on(store.sessions().provider_context(id, provider, model, &[]));
        }
        let _ = block_on(store.sessions().branches(id));
    }
}

/// Where the `instructions` target's files go, in the order the input's NUL-separated
/// pieces fill them: the hierarchy Claude Code loads for `/p/sub`, and files to import.
const INSTRUCTION_FILES: [&str; 8] = [
    "/p/CLAUDE.md",
    "/p/sub/CLAUDE.md",
    "/home/u/.claude/CLAUDE.md",
    "/p/.claude/rules/style.md",
    "/p/sub/CLAUDE.local.md",
    "/p/docs/a.md",
    "/home/u/b.md",
    "/etc/claude-code/CLAUDE.md",
];

/// The bytes as instruction files (pieces separated by NUL bytes), resolved as Claude
/// Code would for a session in `/p/sub`: `@` imports, rules with `paths:`, comments.
pub fn instructions(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let store = Store::new(InMemoryStorage::new());
    for (path, piece) in INSTRUCTION_FILES.iter().zip(text.split('\0')) {
        if block_on(store.memory().write_file(path, piece)).is_err() {
            return;
        }
    }
    let request = mneme_core::memory::instructions::Request {
        cwd: "/p/sub".into(),
        home: "/home/u".into(),
        managed: Some("/etc/claude-code/CLAUDE.md".into()),
        paths: vec!["/p/sub/src/main.rs".into(), "docs/a.md".into()],
        // Both ways: approved, the walk follows imports out of the project too.
        external_imports: text.len().is_multiple_of(2),
    };
    let _ = block_on(store.memory().instructions(&request));
}

/// The bytes as a memory file and as MEMORY.md: parsed, rendered and parsed again, the
/// index updated and loaded for a model, and the same through a store's scope (list,
/// show, recall, load, a write over it).
pub fn memory(data: &[u8]) {
    use mneme_core::memory::file::Memory;
    use mneme_core::memory::memory_md::{self, Caps};
    use mneme_core::memory::store::{Filter, Scope};
    let text = String::from_utf8_lossy(data);
    let parsed = Memory::parse("fuzzed", &text);
    let _ = Memory::parse("fuzzed", &parsed.render());
    let _ = memory_md::update(&text, &[&parsed]);
    let _ = memory_md::for_model(&text, Caps { lines: 20, units: 500 }, |_| None);
    for line in text.lines() {
        let _ = memory_md::linked_file(line);
    }
    let storage = InMemoryStorage::new();
    let dir = mneme_core::keys::memory_dir(Some("-p"));
    for key in ["fuzzed.md", "MEMORY.md"] {
        if block_on(storage.append(&format!("{dir}{key}"), data)).is_err() {
            return;
        }
    }
    let store = Store::new(&storage);
    let scope = Scope::Project("-p".into());
    let _ = block_on(store.memory().memory_list(&scope, &Filter { all: true, ..Filter::default() }));
    let _ = block_on(store.memory().memory_show(&scope, "fuzzed"));
    let _ = block_on(store.memory().memory_recall(&scope, "fuzzed memory text", 5, true, Default::default(), None));
    let _ = block_on(store.memory().memory_load(&scope, Caps::default()));
    let change = mneme_core::memory::store::Change { body: Some("rewritten".into()), ..Default::default() };
    let _ = block_on(store.memory().memory_update(&scope, "fuzzed", change, 1_771_267_670_590));
}

#[cfg(test)]
mod crashers {
    use std::path::Path;

    /// Every input that ever crashed a fuzz target runs again on every test run.
    #[test]
    fn every_recorded_crasher_runs_clean() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/crashers");
        type Target = fn(&[u8]);
        let targets: [(&str, Target); 5] = [
            ("reader", super::reader),
            ("session", super::session),
            ("turn", super::turn),
            ("instructions", super::instructions),
            ("memory", super::memory),
        ];
        let mut replayed = 0;
        for (name, target) in targets {
            let Ok(entries) = std::fs::read_dir(root.join(name)) else { continue };
            for entry in entries.flatten() {
                let data = std::fs::read(entry.path()).expect("a crasher file reads");
                target(&data);
                replayed += 1;
            }
        }
        assert!(root.is_dir(), "fuzz/crashers is where crashing inputs are kept");
        eprintln!("replayed {replayed} recorded fuzz crashers");
    }
}
