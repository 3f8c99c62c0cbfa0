//! Claude's memory tool (`memory_20250818`) over a scope's memory files: what a model
//! writes under `/memories` is a memory MEMORY.md lists and recall finds, nothing it
//! deletes or renames is lost, and every path outside one flat folder is refused in
//! words the model can act on.

use mneme_core::memory::file::MemoryType;
use mneme_core::memory::store::{Filter, Scope};
use mneme_core::memory::tool::MemoryToolResult;
use mneme_core::storage::faulty::Faulty;
use mneme_core::{Error, InMemoryStorage, Storage, Store, block_on};
use serde_json::json;

const T0: i64 = 1_763_800_000_000;

fn scope() -> Scope {
    Scope::Project("-home-u-app".into())
}

/// The tool's answer, or the refusal it gave the model (`is_error`); an engine error
/// is no answer at all.
fn tool(store: &Store<impl Storage>, input: serde_json::Value) -> Result<String, String> {
    match block_on(store.memory().memory_tool(&scope(), &input.to_string(), T0)) {
        Ok(MemoryToolResult { content, is_error: false }) => Ok(content),
        Ok(MemoryToolResult { content, is_error: true }) => Err(content),
        Err(error) => panic!("{input} failed in the engine: {error:?}"),
    }
}

fn refusal(store: &Store<impl Storage>, input: serde_json::Value) -> String {
    tool(store, input.clone()).expect_err(&format!("{input} was not refused"))
}

fn file(storage: &InMemoryStorage, key: &str) -> Option<String> {
    block_on(storage.read(key, 0, None)).ok().map(|bytes| String::from_utf8(bytes).unwrap())
}

#[test]
fn a_file_the_model_creates_is_a_memory_memory_md_lists_and_recall_finds() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let created = tool(
        &store,
        json!({"command": "create", "path": "/memories/db_choice.md", "file_text": "We chose PostgreSQL over MySQL for the billing service.\nReason: row-level security.\n"}),
    );
    assert_eq!(created.unwrap(), "File created successfully at: /memories/db_choice.md");
    let memory = block_on(store.memory().memory_get(&scope(), "db_choice")).unwrap();
    assert_eq!((memory.name.as_str(), memory.type_), ("db_choice", Some(MemoryType::Reference)));
    assert_eq!(memory.description, "We chose PostgreSQL over MySQL for the billing service.");
    assert_eq!(
        file(&storage, "projects/-home-u-app/memory/MEMORY.md").unwrap(),
        "- [db_choice](db_choice.md) — We chose PostgreSQL over MySQL for the billing service.\n"
    );
    let recalled = block_on(store.memory().memory_recall(&scope(), "which database for billing", 5, false, Default::default(), None));
    assert_eq!(recalled.unwrap().hits[0].file, "db_choice");

    // A file with front matter keeps its own name, description and type.
    let text = "---\nname: Deploy day\ndescription: Deploys happen on Tuesdays\ntype: project\n---\n\nNever on Fridays.\n";
    tool(&store, json!({"command": "create", "path": "/memories/deploys.md", "file_text": text})).unwrap();
    let deploys = block_on(store.memory().memory_get(&scope(), "deploys")).unwrap();
    assert_eq!((deploys.name.as_str(), deploys.description.as_str()), ("Deploy day", "Deploys happen on Tuesdays"));
    assert_eq!((deploys.type_, deploys.body.as_str()), (Some(MemoryType::Project), "Never on Fridays.\n"));

    let again = refusal(&store, json!({"command": "create", "path": "/memories/deploys.md", "file_text": "x"}));
    assert_eq!(again, "File /memories/deploys.md already exists");

    // A file removed by hand, behind the store's back, frees its name.
    block_on(storage.remove("projects/-home-u-app/memory/deploys.md")).unwrap();
    let recreated =
        tool(&store, json!({"command": "create", "path": "/memories/deploys.md", "file_text": "Deploys moved to Wednesdays.\n"}));
    assert_eq!(recreated.unwrap(), "File created successfully at: /memories/deploys.md");
    assert_eq!(block_on(store.memory().memory_get(&scope(), "deploys")).unwrap().body, "Deploys moved to Wednesdays.\n");
}

#[test]
fn view_lists_the_folder_and_numbers_a_files_lines() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    tool(&store, json!({"command": "create", "path": "/memories/notes.md", "file_text": "alpha\nbeta\n"})).unwrap();
    let listing = tool(&store, json!({"command": "view", "path": "/memories"})).unwrap();
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines[0], "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:");
    assert!(lines[1].ends_with("\t/memories") && lines[2].ends_with("\t/memories/MEMORY.md"), "{listing}");
    assert!(lines[3].ends_with("\t/memories/notes.md") && lines.len() == 4, "{listing}");

    // The file is what the model wrote: the memory's body.
    let shown = tool(&store, json!({"command": "view", "path": "/memories/notes.md"})).unwrap();
    assert_eq!(shown, "Here's the content of /memories/notes.md with line numbers:\n     1\talpha\n     2\tbeta\n     3\t");
    let ranged = tool(&store, json!({"command": "view", "path": "/memories/notes.md", "view_range": [2, -1]})).unwrap();
    assert_eq!(ranged, "Here's the content of /memories/notes.md with line numbers:\n     2\tbeta\n     3\t");
    // As a Python slice reads them: an end below -1 counts back, ends past the file stop at it.
    let view =
        |range: serde_json::Value| tool(&store, json!({"command": "view", "path": "/memories/notes.md", "view_range": range})).unwrap();
    assert!(view(json!([1, -2])).ends_with(":\n     1\talpha"), "{}", view(json!([1, -2])));
    assert!(view(json!([2, 9_000_000_000i64])).ends_with(":\n     2\tbeta\n     3\t"));
    assert!(view(json!([9_000_000_000i64, -1])).ends_with(":\n"));
    assert!(view(json!([i64::MIN, i64::MIN])).ends_with(":\n"));

    let index = tool(&store, json!({"command": "view", "path": "/memories/MEMORY.md"})).unwrap();
    assert!(index.contains("\t- [notes](notes.md) — alpha"), "{index}");
    assert_eq!(
        refusal(&store, json!({"command": "view", "path": "/memories/missing.md"})),
        "The path /memories/missing.md does not exist. Please provide a valid path."
    );
}

#[test]
fn edits_rewrite_the_memory_and_keep_what_the_model_has_no_say_in() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    tool(&store, json!({"command": "create", "path": "/memories/prefs.md", "file_text": "Tabs over spaces.\nDark theme.\n"})).unwrap();
    let edited =
        tool(&store, json!({"command": "str_replace", "path": "/memories/prefs.md", "old_str": "Dark theme.", "new_str": "Light theme."}));
    assert_eq!(
        edited.unwrap(),
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tTabs over spaces.\n     2\tLight theme.\n     3\t"
    );
    // The description taken from the first line follows it.
    tool(&store, json!({"command": "str_replace", "path": "/memories/prefs.md", "old_str": "Tabs over", "new_str": "Spaces over"}))
        .unwrap();
    assert_eq!(block_on(store.memory().memory_get(&scope(), "prefs")).unwrap().description, "Spaces over spaces.");
    let later = block_on(store.memory().memory_tool(
        &scope(),
        &json!({"command": "insert", "path": "/memories/prefs.md", "insert_line": 2, "insert_text": "Font: Iosevka\n"}).to_string(),
        T0 + 5,
    ));
    assert_eq!(later.unwrap().content, "The file /memories/prefs.md has been edited.");
    let memory = block_on(store.memory().memory_get(&scope(), "prefs")).unwrap();
    assert_eq!(memory.body, "Spaces over spaces.\nLight theme.\nFont: Iosevka\n");
    assert_eq!((memory.created_ms, memory.updated_ms), (Some(T0), Some(T0 + 5)), "created stays, updated moves");

    // Front matter the model writes names the memory; its own description stays, and
    // what it leaves out (topics a person gave) is kept.
    block_on(store.memory().memory_update(
        &scope(),
        "prefs",
        mneme_core::memory::store::Change { topics: Some(vec!["editor".into()]), ..Default::default() },
        T0 + 6,
    ))
    .unwrap();
    let fronted = "---\nname: Editor preferences\ndescription: How the user edits\ntype: user\nsecret_key: ghp_aB3dE5fG7haB3dE5fG7haB3dE5fG7hJ9kL2m\n---\n\nSpaces.\n";
    tool(&store, json!({"command": "str_replace", "path": "/memories/prefs.md", "old_str": memory.body, "new_str": fronted})).unwrap();
    let memory = block_on(store.memory().memory_get(&scope(), "prefs")).unwrap();
    assert_eq!((memory.name.as_str(), memory.description.as_str()), ("Editor preferences", "How the user edits"));
    assert_eq!((memory.type_, memory.body.as_str()), (Some(MemoryType::User), "Spaces.\n"));
    assert_eq!(memory.topics, ["editor"]);
    assert!(
        memory.extra.is_empty(),
        "a key Mneme does not know is not taken from the model (redaction reads no such value): {:?}",
        memory.extra
    );
    tool(&store, json!({"command": "str_replace", "path": "/memories/prefs.md", "old_str": "Spaces.", "new_str": "Tabs."})).unwrap();
    assert_eq!(block_on(store.memory().memory_get(&scope(), "prefs")).unwrap().description, "How the user edits");

    tool(&store, json!({"command": "create", "path": "/memories/twice.md", "file_text": "one\none\n"})).unwrap();
    let twice = refusal(&store, json!({"command": "str_replace", "path": "/memories/twice.md", "old_str": "one", "new_str": "two"}));
    assert_eq!(twice, "No replacement was performed. Multiple occurrences of old_str `one` in lines: 1, 2. Please ensure it is unique");
    let absent = refusal(&store, json!({"command": "str_replace", "path": "/memories/prefs.md", "old_str": "Vim", "new_str": "Emacs"}));
    assert_eq!(absent, "No replacement was performed, old_str `Vim` did not appear verbatim in /memories/prefs.md.");
    let far = refusal(&store, json!({"command": "insert", "path": "/memories/prefs.md", "insert_line": 99, "insert_text": "x"}));
    assert!(far.starts_with("Invalid `insert_line` parameter: 99. It should be within the range [0, "), "{far}");
}

#[test]
fn delete_archives_and_rename_supersedes_so_nothing_is_lost() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    tool(&store, json!({"command": "create", "path": "/memories/old_name.md", "file_text": "The staging host is db-2.\n"})).unwrap();
    let renamed = tool(&store, json!({"command": "rename", "old_path": "/memories/old_name.md", "new_path": "/memories/staging.md"}));
    assert_eq!(renamed.unwrap(), "Successfully renamed /memories/old_name.md to /memories/staging.md");
    let old = block_on(store.memory().memory_get(&scope(), "old_name")).unwrap();
    assert_eq!(old.superseded_by.as_deref(), Some("staging"));
    let new = block_on(store.memory().memory_get(&scope(), "staging")).unwrap();
    assert_eq!(new.name, "staging", "a name that was the file's own follows it");
    assert_eq!((new.body.as_str(), new.links.derived_from.clone()), ("The staging host is db-2.\n", vec![String::from("old_name")]));
    assert_eq!(
        refusal(&store, json!({"command": "view", "path": "/memories/old_name.md"})),
        "/memories/old_name.md was replaced by /memories/staging.md: use that file"
    );

    let deleted = tool(&store, json!({"command": "delete", "path": "/memories/staging.md"})).unwrap();
    assert!(deleted.starts_with("Successfully deleted /memories/staging.md"), "{deleted}");
    let all = block_on(store.memory().memory_list(&scope(), &Filter { all: true, ..Filter::default() })).unwrap();
    assert_eq!(all.len(), 2, "both files kept, out of the current ones");
    assert!(block_on(store.memory().memory_list(&scope(), &Filter::default())).unwrap().is_empty());
    assert_eq!(file(&storage, "projects/-home-u-app/memory/MEMORY.md").unwrap(), "");
    assert_eq!(
        refusal(&store, json!({"command": "delete", "path": "/memories/staging.md"})),
        "The path /memories/staging.md does not exist. Please provide a valid path.",
        "deleted once"
    );
    // The names stay taken by the history they hold.
    assert_eq!(
        refusal(&store, json!({"command": "create", "path": "/memories/staging.md", "file_text": "x"})),
        "/memories/staging.md was deleted, and Mneme keeps it archived: choose another name"
    );
    assert_eq!(
        refusal(&store, json!({"command": "create", "path": "/memories/old_name.md", "file_text": "x"})),
        "/memories/old_name.md was replaced by /memories/staging.md and is kept as its history: choose another name"
    );
    assert_eq!(
        refusal(&store, json!({"command": "delete", "path": "/memories/nothing.md"})),
        "The path /memories/nothing.md does not exist. Please provide a valid path."
    );
}

#[test]
fn every_path_outside_one_flat_folder_of_markdown_files_is_refused() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let create = |path: &str| refusal(&store, json!({"command": "create", "path": path, "file_text": "x"}));
    assert_eq!(create("/etc/passwd"), "Path must start with /memories, got: /etc/passwd");
    assert_eq!(create("/memoriesX/a.md"), "Path must start with /memories/, got: /memoriesX/a.md");
    for path in ["/memories/../secrets.md", "/memories/a/../../b.md", "/memories/sub/a.md", "/memories/a\\b.md"] {
        assert!(create(path).contains("keep every memory directly in /memories"), "{path}: {}", create(path));
    }
    for path in ["/memories/.hidden.md", "/memories/Upper.md", "/memories/a b.md", "/memories/nul\0.md", "/memories/.md"] {
        assert!(create(path).contains("lower-case letters, digits, `-` and `_`"), "{path}: {}", create(path));
    }
    assert!(create("/memories/notes.txt").contains("is not a Markdown file"));
    assert!(create("/memories/con.md").contains("names a device on Windows"));
    assert!(create("/memories/lpt0.md").contains("names a device on Windows"));
    assert_eq!(
        create("/memories/ghp_ab3de5fg7hab3de5fg7hab3de5fg7hj9kl2m.md"),
        "The name of /memories/ghp_ab3de5fg7hab3de5fg7hab3de5fg7hj9kl2m.md looks like a secret: choose another name"
    );
    assert!(create(&format!("/memories/{}.md", "a".repeat(101))).contains("1 to 100"));
    assert!(create("/memories/MEMORY.md").contains("the index Mneme keeps"));
    assert!(create("/memories").contains("the memory folder itself"));
    let big = refusal(&store, json!({"command": "create", "path": "/memories/big.md", "file_text": "x".repeat(100_001)}));
    assert!(big.contains("more than the 100000 bytes a memory file may"), "{big}");
    let unknown = refusal(&store, json!({"command": "format", "path": "/memories"}));
    assert!(unknown.starts_with("the memory tool's input is not a command it knows (`format`)"), "{unknown}");
    assert_eq!(refusal(&store, json!({"command": "create", "path": "/memories/a.md"})), "`create` needs `file_text`");
    let stray = refusal(&store, json!({"command": "view", "path": "/memories", "mode": "all"}));
    assert!(stray.contains("unknown field `mode`"), "{stray}");
    assert_eq!(file(&storage, "projects/-home-u-app/memory/MEMORY.md"), None, "nothing was written");
    assert!(block_on(store.memory().memory_list(&scope(), &Filter { all: true, ..Filter::default() })).unwrap().is_empty());
}

#[test]
fn secrets_are_taken_out_before_anything_is_written() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let key = "ghp_".to_string() + &"aB3dE5fG7h".repeat(3) + "J9kL2m";
    let created = tool(&store, json!({"command": "create", "path": "/memories/keys.md", "file_text": format!("The API key is {key}\n")}));
    let created = created.unwrap();
    // One key written once, counted once: the description the file takes from its first
    // line holds it too.
    assert_eq!(created, "File created successfully at: /memories/keys.md (secrets taken out before it was written: 1 github-token)");
    let written = file(&storage, "projects/-home-u-app/memory/keys.md").unwrap();
    assert!(!written.contains(&key), "{written}");
}

#[test]
fn a_refusal_is_the_models_answer_and_a_callers_mistake_or_a_failing_store_an_error() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let refused = block_on(store.memory().memory_tool(&scope(), r#"{"command": "view", "path": "/etc"}"#, T0)).unwrap();
    assert_eq!(refused, MemoryToolResult { content: "Path must start with /memories, got: /etc".into(), is_error: true });
    let elsewhere = Scope::Project("../elsewhere".into());
    let wrong_scope = block_on(store.memory().memory_tool(&elsewhere, r#"{"command": "view", "path": "/memories"}"#, T0));
    assert!(matches!(wrong_scope, Err(Error::InvalidProject { .. })), "{wrong_scope:?}");
    let failing = Faulty::new(InMemoryStorage::new(), 1).forever();
    let failed = block_on(Store::new(&failing).memory().memory_tool(
        &scope(),
        r#"{"command": "create", "path": "/memories/a.md", "file_text": "x"}"#,
        T0,
    ));
    assert!(matches!(failed, Err(Error::Storage(_))), "{failed:?}");
}

#[test]
fn a_name_is_taken_by_what_storage_holds_in_any_case_not_by_the_cache() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    tool(&store, json!({"command": "create", "path": "/memories/notes.md", "file_text": "First.\n"})).unwrap();
    // Another program writes a file whose name differs in case only, after the cache warmed.
    block_on(storage.replace("projects/-home-u-app/memory/Deploys.md", b"---\nname: Deploys\n---\n\nTuesdays.\n", None)).unwrap();
    assert_eq!(
        refusal(&store, json!({"command": "create", "path": "/memories/deploys.md", "file_text": "x"})),
        "/memories/Deploys.md exists, the same file as /memories/deploys.md where case is not told apart: choose another name"
    );
    // Removed by hand, it frees the name in every case; the store stops listing another
    // file removed by hand.
    block_on(storage.remove("projects/-home-u-app/memory/Deploys.md")).unwrap();
    block_on(storage.remove("projects/-home-u-app/memory/notes.md")).unwrap();
    tool(&store, json!({"command": "create", "path": "/memories/deploys.md", "file_text": "Wednesdays.\n"})).unwrap();
    let listed = block_on(store.memory().memory_list(&scope(), &Filter::default())).unwrap();
    assert_eq!(listed.iter().map(|m| m.file.as_str()).collect::<Vec<_>>(), ["deploys"]);
}

#[test]
fn an_input_that_is_no_object_is_the_callers_mistake_not_the_models() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    // The input given as its JSON text again, none, or a list: refused to the caller.
    for input in [json!("{\"command\": \"view\", \"path\": \"/memories\"}"), json!(null), json!([{"command": "view"}])] {
        match block_on(store.memory().memory_tool(&scope(), &input.to_string(), T0)) {
            Err(Error::InvalidArgument(message)) => assert!(message.contains("an object with `command`"), "{message}"),
            other => panic!("{input}: {other:?}"),
        }
    }
    // An object the tool cannot read is the model's, as before.
    assert!(refusal(&store, json!({"path": "/memories"})).starts_with("the memory tool's input is not a command it knows"));
}
