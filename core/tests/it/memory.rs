//! The memory tier over storage: Claude Code's memdir written as Claude Code writes it,
//! supersession that never loses a memory, and a recall index that catches up with
//! files it did not see written.

use mneme_core::memory::file::{LinkKind, Memory, MemoryType};
use mneme_core::memory::memory_md::Caps;
use mneme_core::memory::store::{Change, Filter, NewMemory, Scope};
use mneme_core::storage::faulty::Faulty;
use mneme_core::{Error, InMemoryStorage, KeyInfo, Storage, StorageError, Store, block_on};

const T0: i64 = 1_763_800_000_000;

fn project() -> Scope {
    Scope::Project("-home-u-app".into())
}

fn text(storage: &impl Storage, key: &str) -> String {
    String::from_utf8(block_on(storage.read(key, 0, None)).unwrap()).unwrap()
}

fn recall(store: &Store<impl Storage>, query: &str) -> Vec<String> {
    block_on(store.memory().memory_recall(&project(), query, 10, false, Default::default(), None))
        .unwrap()
        .hits
        .into_iter()
        .map(|hit| hit.file)
        .collect()
}

#[test]
fn add_writes_claude_codes_memdir_and_recall_finds_it() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let mut role = NewMemory::new("User role", MemoryType::User, "The user is a data scientist", "Works on observability dashboards.");
    role.topics = vec!["career".into()];
    let role = block_on(store.memory().memory_add(&project(), role, T0)).unwrap();
    assert_eq!(role.file, "user_role");
    let again =
        block_on(store.memory().memory_add(&project(), NewMemory::new("User role", MemoryType::User, "Second", "Another."), T0 + 1))
            .unwrap();
    assert_eq!(again.file, "user_role_2");

    let file = text(&storage, "projects/-home-u-app/memory/user_role.md");
    assert!(file.starts_with("---\nname: User role\ndescription: The user is a data scientist\ntype: user\n"), "{file}");
    assert!(file.ends_with("---\n\nWorks on observability dashboards.\n"), "{file}");
    assert_eq!(
        text(&storage, "projects/-home-u-app/memory/MEMORY.md"),
        "- [User role](user_role.md) — The user is a data scientist\n- [User role](user_role_2.md) — Second\n"
    );
    assert_eq!(recall(&store, "dashboards for observability"), ["user_role"]);
    let fresh = Store::new(&storage);
    let recalled = block_on(fresh.memory().memory_recall(&project(), "observability", 10, false, Default::default(), None)).unwrap();
    assert_eq!(recalled.report, None, "a fresh store reads the index as written");
    assert_eq!(recalled.hits[0].name, "User role");
    assert_eq!(recalled.hits[0].type_, Some(MemoryType::User));
}

/// A replacement that names only the new fact keeps what the old memory was about:
/// its description (MEMORY.md's hook, which recall reads) and its topics.
#[test]
fn a_replacement_without_a_description_or_topics_keeps_the_old_ones() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let mut first = NewMemory::new("Deploy target", MemoryType::Project, "Where releases go", "staging-eu");
    first.topics = vec!["deploys".into()];
    let old = block_on(store.memory().memory_add(&project(), first, T0)).unwrap();
    let new = block_on(store.memory().memory_supersede(
        &project(),
        &old.file,
        NewMemory::new("Deploy target", MemoryType::Project, "", "production-us"),
        T0 + 1,
    ))
    .unwrap();
    assert_eq!((new.description.as_str(), new.topics.as_slice()), ("Where releases go", ["deploys".to_string()].as_slice()));
    assert_eq!(recall(&store, "where do releases go"), [new.file.as_str()]);
    let index = text(&storage, "projects/-home-u-app/memory/MEMORY.md");
    assert!(index.contains("(deploy_target_2.md) — Where releases go"), "{index}");
    // Given ones win.
    let mut given = NewMemory::new("Deploy target", MemoryType::Project, "The release region", "production-ap");
    given.topics = vec!["regions".into()];
    let newest = block_on(store.memory().memory_supersede(&project(), &new.file, given, T0 + 2)).unwrap();
    assert_eq!((newest.description.as_str(), newest.topics.as_slice()), ("The release region", ["regions".to_string()].as_slice()));
    // The history is kept as it was: a superseded memory takes no update.
    let change = Change { body: Some("rewritten".into()), ..Change::default() };
    let refused = block_on(store.memory().memory_update(&project(), &old.file, change, T0 + 3));
    assert!(matches!(&refused, Err(Error::InvalidArgument(words)) if words.contains("update `deploy_target_2`")), "{refused:?}");
    assert_eq!(block_on(store.memory().memory_get(&project(), &old.file)).unwrap().body.trim_end(), "staging-eu");
}

#[test]
fn supersede_keeps_the_old_memory_out_of_the_index_file_and_default_recall_with_its_history() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let old = block_on(store.memory().memory_add(
        &project(),
        NewMemory::new("Deploy target", MemoryType::Project, "Where releases go", "Releases go to staging-eu."),
        T0,
    ))
    .unwrap();
    let new = block_on(store.memory().memory_supersede(
        &project(),
        &old.file,
        NewMemory::new("Deploy target", MemoryType::Project, "Where releases go", "Releases go to production-us since the migration."),
        T0 + 10,
    ))
    .unwrap();
    assert_eq!(recall(&store, "where do releases go"), [new.file.as_str()]);
    let all = block_on(store.memory().memory_recall(&project(), "staging", 10, true, Default::default(), None)).unwrap();
    assert_eq!(all.hits[0].file, old.file);
    assert!(!all.hits[0].current);
    let index = text(&storage, "projects/-home-u-app/memory/MEMORY.md");
    assert!(!index.contains("(deploy_target.md)") && index.contains("(deploy_target_2.md)"), "{index}");

    let kept = block_on(store.memory().memory_get(&project(), &old.file)).unwrap();
    assert_eq!(kept.superseded_by.as_deref(), Some(new.file.as_str()));
    assert_eq!(kept.invalid_at_ms, Some(T0 + 10));
    assert!(kept.body.contains("staging-eu"));
    let shown = block_on(store.memory().memory_show(&project(), &new.file)).unwrap();
    let history: Vec<&str> = shown.history.iter().map(|m| m.file.as_str()).collect();
    assert_eq!(history, [old.file.as_str(), new.file.as_str()]);
    assert_eq!(block_on(store.memory().memory_show(&project(), &old.file)).unwrap().history.len(), 2);
    assert_eq!(block_on(store.memory().memory_list(&project(), &Filter::default())).unwrap().len(), 1);
    assert_eq!(block_on(store.memory().memory_list(&project(), &Filter { all: true, ..Filter::default() })).unwrap().len(), 2);

    // The old one again: refused, naming the current version; nothing is written. A
    // second successor would make two current versions and cut the first out of the
    // history.
    let before = text(&storage, "projects/-home-u-app/memory/MEMORY.md");
    let again = block_on(store.memory().memory_supersede(
        &project(),
        &old.file,
        NewMemory::new("Deploy target", MemoryType::Project, "Where releases go", "Releases go to production-ap."),
        T0 + 20,
    ));
    assert!(
        matches!(&again, Err(Error::InvalidArgument(reason)) if reason.contains("superseded by `deploy_target_2` already: supersede `deploy_target_2`")),
        "{again:?}"
    );
    assert_eq!(text(&storage, "projects/-home-u-app/memory/MEMORY.md"), before);
    assert_eq!(block_on(store.memory().memory_list(&project(), &Filter { all: true, ..Filter::default() })).unwrap().len(), 2);
    let newest = block_on(store.memory().memory_supersede(
        &project(),
        &new.file,
        NewMemory::new("Deploy target", MemoryType::Project, "Where releases go", "Releases go to production-ap."),
        T0 + 20,
    ))
    .unwrap();
    let history: Vec<String> =
        block_on(store.memory().memory_show(&project(), &newest.file)).unwrap().history.into_iter().map(|m| m.file).collect();
    assert_eq!(history, [old.file.as_str(), new.file.as_str(), newest.file.as_str()]);
}

#[test]
fn forget_archives_update_changes_in_place_link_relates_and_list_filters() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let mut a = NewMemory::new("Testing style", MemoryType::Feedback, "Real parts, not mocks", "Use a real database in tests.");
    a.session = Some("s1".into());
    let a = block_on(store.memory().memory_add(&project(), a, T0)).unwrap();
    let b = block_on(store.memory().memory_add(
        &project(),
        NewMemory::new("Grafana board", MemoryType::Reference, "Latency dashboard", "grafana.internal/d/api"),
        T0 + 1,
    ))
    .unwrap();

    let linked = block_on(store.memory().memory_link(&project(), &a.file, LinkKind::RelatesTo, &b.file, T0 + 2)).unwrap();
    assert_eq!(linked.links.relates_to, [b.file.as_str()]);
    assert_eq!(recall(&store, "database tests"), [a.file.clone(), b.file.clone()], "a link carries part of the score");

    let change = Change { description: Some("Integration tests hit a real database".into()), ..Change::default() };
    let updated = block_on(store.memory().memory_update(&project(), &a.file, change, T0 + 3)).unwrap();
    assert_eq!(updated.body, "Use a real database in tests.\n");
    assert!(text(&storage, "projects/-home-u-app/memory/MEMORY.md").contains("— Integration tests hit a real database"));

    block_on(store.memory().memory_forget(&project(), &b.file, T0 + 4)).unwrap();
    assert!(!text(&storage, "projects/-home-u-app/memory/MEMORY.md").contains("grafana_board"));
    assert!(recall(&store, "grafana latency").is_empty());
    let by_kind = Filter { type_: Some(MemoryType::Reference), all: true, ..Filter::default() };
    assert_eq!(block_on(store.memory().memory_list(&project(), &by_kind)).unwrap()[0].file, b.file);
    let by_session = Filter { session: Some("s1".into()), ..Filter::default() };
    assert_eq!(block_on(store.memory().memory_list(&project(), &by_session)).unwrap()[0].file, a.file);

    let missing = block_on(store.memory().memory_forget(&project(), "nope", T0));
    assert!(matches!(missing, Err(Error::MemoryNotFound { .. })), "{missing:?}");
    assert!(matches!(block_on(store.memory().memory_get(&project(), "../x")), Err(Error::MemoryNotFound { .. })));
    assert!(matches!(
        block_on(store.memory().memory_add(&project(), NewMemory::new(" ", MemoryType::User, "d", "b"), T0)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        block_on(store.memory().memory_list(&Scope::Project("a/b".into()), &Filter::default())),
        Err(Error::InvalidProject { .. })
    ));
}

#[test]
fn a_file_written_behind_the_index_is_found_and_reported() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(store.memory().memory_add(&project(), NewMemory::new("One", MemoryType::User, "first", "alpha"), T0)).unwrap();
    // Claude Code (or a crash between the file write and the index append) leaves a
    // memory file the index has not seen, and edits another.
    let claude = "---\nname: Build command\ndescription: How to build\ntype: project\n---\n\nRun make zeppelin.\n";
    block_on(storage.replace("projects/-home-u-app/memory/build.md", claude.as_bytes(), None)).unwrap();
    let edited = text(&storage, "projects/-home-u-app/memory/one.md").replace("alpha", "alphabet soup");
    block_on(storage.replace("projects/-home-u-app/memory/one.md", edited.as_bytes(), None)).unwrap();

    let fresh = Store::new(&storage);
    let recalled = block_on(fresh.memory().memory_recall(&project(), "zeppelin", 10, false, Default::default(), None)).unwrap();
    assert_eq!(recalled.hits.iter().map(|h| h.file.as_str()).collect::<Vec<_>>(), ["build"]);
    let report = recalled.report.expect("a report says the index caught up");
    assert_eq!(report.files, ["build", "one"]);
    assert_eq!(recall(&fresh, "soup"), ["one"]);
    assert_eq!(
        block_on(Store::new(&storage).memory().memory_recall(&project(), "zeppelin", 10, false, Default::default(), None)).unwrap().report,
        None,
        "caught up once"
    );

    block_on(storage.replace("projects/-home-u-app/memory/.mneme/recall.jsonl", b"{not json", None)).unwrap();
    let recalled =
        block_on(Store::new(&storage).memory().memory_recall(&project(), "zeppelin", 10, false, Default::default(), None)).unwrap();
    assert_eq!(recalled.hits.len(), 1);
    assert!(recalled.report.unwrap().reason.contains("unreadable"));

    block_on(storage.remove("projects/-home-u-app/memory/.mneme/recall.jsonl")).unwrap();
    let recalled =
        block_on(Store::new(&storage).memory().memory_recall(&project(), "zeppelin", 10, false, Default::default(), None)).unwrap();
    assert!(recalled.report.unwrap().reason.contains("missing"));
    assert_eq!(recalled.hits.len(), 1);
}

#[test]
fn another_store_sees_the_memories_this_one_wrote() {
    let storage = InMemoryStorage::new();
    let first = Store::new(&storage);
    let second = Store::new(&storage);
    assert!(recall(&second, "kiwi").is_empty());
    block_on(first.memory().memory_add(&project(), NewMemory::new("Fruit", MemoryType::User, "likes kiwi", "kiwi every day"), T0)).unwrap();
    assert_eq!(recall(&second, "kiwi"), ["fruit"], "the warm store reads the lines appended since");
}

#[test]
fn supersession_never_loses_a_memory_when_storage_fails_at_any_call() {
    for n in 1..60 {
        let storage = Faulty::new(InMemoryStorage::new(), 0);
        let store = Store::new(&storage);
        let old = block_on(store.memory().memory_add(&project(), NewMemory::new("Deploy", MemoryType::Project, "target", "staging"), T0))
            .unwrap();
        storage.calls.set(0);
        storage.fail_at.set(n);
        let outcome = block_on(store.memory().memory_supersede(
            &project(),
            &old.file,
            NewMemory::new("Deploy", MemoryType::Project, "target", "production"),
            T0 + 1,
        ));
        storage.fail_at.set(0);

        let reopened = Store::new(&storage);
        let all = block_on(reopened.memory().memory_list(&project(), &Filter { all: true, ..Filter::default() })).unwrap();
        let old_now = all.iter().find(|m| m.file == old.file).expect("the old memory is never lost");
        let found = recall(&reopened, "deploy target");
        match outcome {
            Ok(new) => {
                assert_eq!(old_now.superseded_by.as_deref(), Some(new.file.as_str()), "call {n}");
                assert_eq!(found, [new.file.as_str()], "call {n}");
            }
            Err(_) => {
                assert!(!found.is_empty(), "call {n}: the fact stays recallable");
                if old_now.superseded_by.is_some() {
                    assert!(all.iter().any(|m| Some(&m.file) == old_now.superseded_by.as_ref()), "call {n}: never superseded by nothing");
                }
            }
        }
        if storage.calls.get() < n {
            // The supersede made fewer calls than the one set to fail: every call was tried.
            return;
        }
    }
    panic!("the supersede never succeeded");
}

#[test]
fn memory_md_over_the_caps_loads_newest_first_and_names_what_it_left_out() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let batch: Vec<NewMemory> =
        (0..30).map(|i| NewMemory::new(&format!("Fact {i}"), MemoryType::Project, &format!("hook {i}"), &format!("body {i}"))).collect();
    let written = block_on(store.memory().memory_add_many(&project(), batch, T0)).unwrap();
    assert_eq!(written.len(), 30);
    // A correction written last is the one Claude Code's cut would lose.
    block_on(store.memory().memory_update(&project(), "fact_0", Change { body: Some("corrected".into()), ..Change::default() }, T0 + 5))
        .unwrap();
    let loaded = block_on(store.memory().memory_load(&project(), Caps { lines: 20, units: 25_000 })).unwrap();
    assert!(loaded.text.lines().count() <= 20);
    assert!(loaded.text.contains("(fact_0.md)"), "{}", loaded.text);
    assert!(!loaded.left_out.contains(&"fact_0".to_string()));
    assert!(loaded.text.contains("memories were left out"));
}

#[test]
fn a_claude_code_memdir_is_read_as_it_is() {
    let storage = InMemoryStorage::new();
    let files = [
        (
            "MEMORY.md",
            "# Memory index\n- [User role](user_role.md) — data scientist, observability\n- [No mocks](feedback_testing.md) — integration tests use a real database\n",
        ),
        (
            "user_role.md",
            "---\nname: User role\ndescription: data scientist, observability\ntype: user\n---\n\nThe user is a data scientist.\n",
        ),
        (
            "feedback_testing.md",
            "---\nname: No mocks\ndescription: integration tests use a real database\ntype: feedback\n---\n\nWhy: a mocked test passed while prod broke.\n",
        ),
    ];
    for (name, body) in files {
        block_on(storage.replace(&format!("projects/-home-u-app/memory/{name}"), body.as_bytes(), None)).unwrap();
    }
    let store = Store::new(&storage);
    let recalled = block_on(store.memory().memory_recall(&project(), "why no mocked tests", 10, false, Default::default(), None)).unwrap();
    assert_eq!(recalled.hits[0].file, "feedback_testing");
    assert!(recalled.report.unwrap().reason.contains("missing"));
    let loaded = block_on(store.memory().memory_load(&project(), Caps::default())).unwrap();
    assert_eq!(loaded.text, files[0].1, "a MEMORY.md within the caps is given as it is");
    block_on(store.memory().memory_add(&project(), NewMemory::new("Editor", MemoryType::User, "uses helix", "helix"), T0)).unwrap();
    assert!(text(&storage, "projects/-home-u-app/memory/MEMORY.md").starts_with(files[0].1), "Claude's lines stay in place");
    let parsed = Memory::parse("user_role", files[1].1);
    assert_eq!(block_on(store.memory().memory_get(&project(), "user_role")).unwrap(), parsed);
}

mod consolidation {
    use super::*;
    use mneme_core::memory::consolidate::StepKind;
    use mneme_core::{NewEntry, Role};

    const DIR: &str = "projects/-home-u-app/memory/";

    /// Three memories (two saying the same thing) and a session since.
    fn seeded(storage: &impl Storage) -> Store<&impl Storage> {
        let store = Store::new(storage);
        for (name, description, body) in [
            ("Editor", "The user's editor", "Uses vim."),
            ("Editor choice", "Which editor", "The user edits in vim."),
            ("Q3 deadline", "The release date", "Ships in Q3."),
        ] {
            block_on(store.memory().memory_add(&project(), NewMemory::new(name, MemoryType::User, description, body), T0)).unwrap();
        }
        let said = NewEntry {
            uuid: "u1".into(),
            now_ms: T0 + 1000,
            role: Role::User,
            text: "I moved to Helix yesterday.".into(),
            cwd: "/home/u/app".into(),
        };
        block_on(store.sessions().append("s1", said)).unwrap();
        store
    }

    fn files(storage: &impl Storage) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = block_on(storage.list(DIR))
            .unwrap()
            .into_iter()
            .filter(|k| k.key.ends_with(".md"))
            .map(|k| (k.key.clone(), text(storage, &k.key)))
            .collect();
        out.sort();
        out
    }

    const ANSWER: &str = "{\"op\":\"merge\",\"files\":[\"editor\",\"editor_choice\"],\"name\":\"Editor\",\"type\":\"user\",\"description\":\"The user's editor\",\"body\":\"Uses Helix since 2025-11-21 (vim before).\",\"reason\":\"the same fact, and it changed\"}\n{\"op\":\"archive\",\"file\":\"q3_deadline\",\"reason\":\"past\"}";

    #[test]
    fn the_plan_holds_the_memories_and_what_the_user_said_since() {
        let storage = InMemoryStorage::new();
        let store = seeded(&storage);
        let plan = block_on(store.memory().plan_consolidation(&project(), T0 + 2000)).unwrap();
        assert_eq!(plan.sessions, ["s1"]);
        assert_eq!(plan.known.len(), 3);
        assert!(plan.prompt.contains("## editor_choice — Editor choice"), "{}", plan.prompt);
        assert!(plan.prompt.contains("user: I moved to Helix yesterday."), "{}", plan.prompt);
        assert!(plan.prompt.contains("Today is 2025-11-22."), "{}", plan.prompt);
    }

    #[test]
    fn a_dry_run_writes_nothing_apply_writes_and_rollback_restores_every_file() {
        let storage = InMemoryStorage::new();
        let store = seeded(&storage);
        let original = files(&storage);
        let original_index = text(&storage, &format!("{DIR}MEMORY.md"));
        let plan = block_on(store.memory().plan_consolidation(&project(), T0 + 2000)).unwrap();

        let dry = block_on(store.memory().apply_consolidation(&project(), &plan, ANSWER, T0 + 3000, true)).unwrap();
        assert!(!dry.applied);
        let kinds: Vec<(StepKind, &str)> = dry.steps.iter().map(|s| (s.kind, s.file.as_str())).collect();
        assert_eq!(
            kinds,
            [
                (StepKind::Added, "editor_2"),
                (StepKind::Superseded, "editor"),
                (StepKind::Superseded, "editor_choice"),
                (StepKind::Archived, "q3_deadline")
            ]
        );
        assert_eq!(files(&storage), original, "a dry run writes nothing");
        assert!(block_on(store.memory().consolidations(&project())).unwrap().is_empty());

        let done = block_on(store.memory().apply_consolidation(&project(), &plan, ANSWER, T0 + 3000, false)).unwrap();
        assert_eq!(done.steps, dry.steps, "the dry run showed exactly what apply wrote");
        assert_eq!(text(&storage, &format!("{DIR}MEMORY.md")), "- [Editor](editor_2.md) — The user's editor\n");
        let all = block_on(store.memory().memory_list(&project(), &Filter { all: true, ..Filter::default() })).unwrap();
        assert_eq!(all.len(), 4, "nothing is deleted");
        assert_eq!(recall(&store, "editor"), ["editor_2"]);
        let merged = block_on(store.memory().memory_get(&project(), "editor_2")).unwrap();
        assert_eq!(merged.links.derived_from, ["editor", "editor_choice"]);

        assert!(
            matches!(
                block_on(store.memory().apply_consolidation(&project(), &plan, ANSWER, T0 + 3100, false)),
                Err(Error::InvalidArgument(_))
            ),
            "a plan is applied once"
        );
        let listed = block_on(store.memory().consolidations(&project())).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].steps, done.steps);

        let undone = block_on(store.memory().rollback_consolidation(&project(), &plan.id, T0 + 4000)).unwrap();
        assert_eq!(undone.rolled_back_ms, Some(T0 + 4000));
        let after: Vec<(String, String)> = files(&storage).into_iter().filter(|(k, _)| !k.ends_with("editor_2.md")).collect();
        assert_eq!(after, original, "every changed file is back as it was");
        assert!(
            block_on(store.memory().memory_get(&project(), "editor_2")).unwrap().archived_ms.is_some(),
            "the merged memory is archived, not deleted"
        );
        assert_eq!(text(&storage, &format!("{DIR}MEMORY.md")), original_index);
        assert_eq!(recall(&Store::new(&storage), "editor"), ["editor", "editor_choice"], "a fresh store's index agrees");
        assert!(matches!(block_on(store.memory().rollback_consolidation(&project(), &plan.id, T0 + 5000)), Err(Error::InvalidArgument(_))));
        assert_eq!(block_on(store.memory().consolidations(&project())).unwrap()[0].rolled_back_ms, Some(T0 + 4000));
    }

    #[test]
    fn rollback_refuses_to_overwrite_a_memory_changed_since() {
        let storage = InMemoryStorage::new();
        let store = seeded(&storage);
        let plan = block_on(store.memory().plan_consolidation(&project(), T0 + 2000)).unwrap();
        block_on(store.memory().apply_consolidation(&project(), &plan, ANSWER, T0 + 3000, false)).unwrap();
        let change = Change { body: Some("Uses Helix and Zed.".into()), ..Change::default() };
        block_on(store.memory().memory_update(&project(), "editor_2", change, T0 + 3500)).unwrap();
        let before = files(&storage);
        match block_on(store.memory().rollback_consolidation(&project(), &plan.id, T0 + 4000)) {
            Err(Error::InvalidArgument(message)) => assert!(message.contains("`editor_2` changed after"), "{message}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(files(&storage), before, "nothing was rolled back");
    }

    /// An update acknowledged while the model thought about the plan is never written
    /// over with what the model answered from the older text: apply refuses, writing
    /// nothing, and says so.
    #[test]
    fn apply_refuses_a_memory_changed_since_the_plan() {
        let storage = InMemoryStorage::new();
        let store = seeded(&storage);
        let plan = block_on(store.memory().plan_consolidation(&project(), T0 + 2000)).unwrap();
        let change = Change { body: Some("Uses Helix now; vim on servers.".into()), ..Change::default() };
        block_on(store.memory().memory_update(&project(), "editor_choice", change, T0 + 2500)).unwrap();
        let before = files(&storage);
        match block_on(store.memory().apply_consolidation(&project(), &plan, ANSWER, T0 + 3000, false)) {
            Err(Error::InvalidArgument(message)) => {
                assert!(message.contains("memory `editor_choice` changed since consolidation"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(files(&storage), before, "nothing was written");
        assert!(block_on(store.memory().consolidations(&project())).unwrap().is_empty());
        // Archived since the plan: its text reads the same, and it changed all the same.
        let plan = block_on(store.memory().plan_consolidation(&project(), T0 + 2600)).unwrap();
        block_on(store.memory().memory_forget(&project(), "editor_choice", T0 + 2700)).unwrap();
        match block_on(store.memory().apply_consolidation(&project(), &plan, ANSWER, T0 + 2800, false)) {
            Err(Error::InvalidArgument(message)) => assert!(message.contains("`editor_choice` changed since"), "{message}"),
            other => panic!("{other:?}"),
        }
        // A memory the answer does not touch may change: the rest applies.
        let plan = block_on(store.memory().plan_consolidation(&project(), T0 + 4000)).unwrap();
        let change = Change { body: Some("Ships in Q4.".into()), ..Change::default() };
        block_on(store.memory().memory_update(&project(), "editor", change, T0 + 4500)).unwrap();
        let answer = "{\"op\":\"archive\",\"file\":\"q3_deadline\",\"reason\":\"past\"}";
        assert!(block_on(store.memory().apply_consolidation(&project(), &plan, answer, T0 + 5000, false)).unwrap().applied);
    }

    #[test]
    fn a_rollback_cut_short_by_storage_is_finished_by_the_next() {
        for n in 1..60 {
            let storage = Faulty::new(InMemoryStorage::new(), 0);
            let store = seeded(&storage);
            let original = files(&storage);
            let plan = block_on(store.memory().plan_consolidation(&project(), T0 + 2000)).unwrap();
            block_on(store.memory().apply_consolidation(&project(), &plan, ANSWER, T0 + 3000, false)).unwrap();
            storage.calls.set(0);
            storage.fail_at.set(n);
            let first = block_on(store.memory().rollback_consolidation(&project(), &plan.id, T0 + 4000));
            storage.fail_at.set(0);
            let reopened = Store::new(&storage);
            if first.is_err() {
                block_on(reopened.memory().rollback_consolidation(&project(), &plan.id, T0 + 5000)).unwrap();
            }
            let back: Vec<(String, String)> = files(&storage).into_iter().filter(|(k, _)| !k.ends_with("editor_2.md")).collect();
            assert_eq!(back, original, "call {n}");
            assert!(block_on(reopened.memory().consolidations(&project())).unwrap()[0].rolled_back_ms.is_some(), "call {n}");
            if storage.calls.get() < n {
                return;
            }
        }
        panic!("the rollback never succeeded");
    }

    #[test]
    fn a_memory_is_never_named_like_the_index() {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        let memory = block_on(store.memory().memory_add(&project(), NewMemory::new("Memory", MemoryType::User, "", "x"), T0)).unwrap();
        assert_eq!(memory.file, "memory_2", "memory.md is MEMORY.md on a case-insensitive filesystem");
    }

    #[test]
    fn a_bad_answer_writes_nothing() {
        let storage = InMemoryStorage::new();
        let store = seeded(&storage);
        let original = files(&storage);
        let plan = block_on(store.memory().plan_consolidation(&project(), T0 + 2000)).unwrap();
        let answer = "{\"op\":\"archive\",\"file\":\"q3_deadline\"}\n{\"op\":\"archive\",\"file\":\"nope\"}";
        assert!(matches!(
            block_on(store.memory().apply_consolidation(&project(), &plan, answer, T0 + 3000, false)),
            Err(Error::InvalidAnswer { line: 2, .. })
        ));
        assert_eq!(files(&storage), original);
        assert!(block_on(store.memory().consolidations(&project())).unwrap().is_empty());
    }

    #[test]
    fn storage_failing_at_any_call_leaves_a_state_rollback_undoes() {
        for n in 1..80 {
            let storage = Faulty::new(InMemoryStorage::new(), 0);
            let store = seeded(&storage);
            let original = files(&storage);
            let plan = block_on(store.memory().plan_consolidation(&project(), T0 + 2000)).unwrap();
            storage.calls.set(0);
            storage.fail_at.set(n);
            let outcome = block_on(store.memory().apply_consolidation(&project(), &plan, ANSWER, T0 + 3000, false));
            storage.fail_at.set(0);

            let reopened = Store::new(&storage);
            let recorded = block_on(reopened.memory().consolidations(&project())).unwrap();
            if recorded.is_empty() {
                assert!(outcome.is_err(), "call {n}: applied without a record");
                assert_eq!(files(&storage), original, "call {n}: no record, no change");
            } else {
                block_on(reopened.memory().rollback_consolidation(&project(), &plan.id, T0 + 4000)).unwrap();
                let back: Vec<(String, String)> = files(&storage).into_iter().filter(|(k, _)| !k.ends_with("editor_2.md")).collect();
                assert_eq!(back, original, "call {n}: rolled back to the original");
            }
            assert!(!recall(&reopened, "vim").is_empty(), "call {n}: the fact stays recallable");
            if storage.calls.get() < n {
                return;
            }
        }
        panic!("the consolidation never succeeded");
    }
}

#[test]
fn instructions_resolve_from_files_kept_in_the_store() {
    use mneme_core::memory::instructions::{Kind as FileKind, Request};
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for (path, text) in [
        ("/home/u/.claude/CLAUDE.md", "Be terse.\n"),
        ("/w/app/CLAUDE.md", "Project rules.\n@docs/style.md\n```\n@not/imported.md\n```\n"),
        ("/w/app/docs/style.md", "Use tabs.\n"),
        ("/w/app/.claude/rules/rust.md", "---\npaths: src/**/*.rs\n---\nRun clippy.\n"),
        ("/w/app/.claude/rules/nested/always.md", "Always test.\n"),
        ("/w/app/CLAUDE.local.md", "My local notes.\n"),
    ] {
        block_on(store.memory().write_file(path, text)).unwrap();
    }
    assert_eq!(block_on(store.memory().read_file("/w/app/docs/style.md")).unwrap().as_deref(), Some("Use tabs.\n"));
    assert_eq!(text(&storage, "files/w/app/docs/style.md"), "Use tabs.\n");
    assert_eq!(block_on(store.memory().read_file("/w/app/none.md")).unwrap(), None);
    assert!(matches!(block_on(store.memory().write_file("w/app/CLAUDE.md", "x")), Err(Error::InvalidArgument(_))));
    assert!(matches!(block_on(store.memory().write_file("/w/../etc/x.md", "x")), Err(Error::InvalidArgument(_))));

    let request =
        |paths: Vec<String>| Request { cwd: "/w/app".into(), home: "/home/u".into(), managed: None, paths, external_imports: false };
    let loaded = block_on(store.memory().instructions(&request(vec!["src/main.rs".into()]))).unwrap();
    let seen: Vec<(&str, FileKind, bool)> = loaded.files.iter().map(|f| (f.path.as_str(), f.kind, f.loaded)).collect();
    assert_eq!(
        seen,
        [
            ("/home/u/.claude/CLAUDE.md", FileKind::User, true),
            ("/w/CLAUDE.md", FileKind::Project, false),
            ("/w/.claude/CLAUDE.md", FileKind::Project, false),
            ("/w/CLAUDE.local.md", FileKind::Local, false),
            ("/w/app/CLAUDE.md", FileKind::Project, true),
            ("/w/app/docs/style.md", FileKind::Import, true),
            ("/w/app/.claude/CLAUDE.md", FileKind::Project, false),
            ("/w/app/.claude/rules/nested/always.md", FileKind::ProjectRule, true),
            ("/w/app/.claude/rules/rust.md", FileKind::ProjectRule, true),
            ("/w/app/CLAUDE.local.md", FileKind::Local, true),
        ]
    );
    let order = ["Be terse.", "Project rules.", "Use tabs.", "Always test.", "Run clippy.", "My local notes."];
    let mut at = 0;
    for part in order {
        let found = loaded.text[at..].find(part).unwrap_or_else(|| panic!("{part} missing or out of order in {}", loaded.text));
        at += found;
    }
    assert!(!loaded.files.iter().any(|f| f.path.contains("not/imported")), "an @ inside a fence is not an import");
    let without = block_on(store.memory().instructions(&request(Vec::new()))).unwrap();
    assert!(!without.text.contains("Run clippy."), "a rule with paths: waits for a matching path");
    assert!(without.files.iter().any(|f| f.path == "/w/app/.claude/rules/rust.md" && !f.loaded));

    block_on(store.memory().remove_file("/w/app/CLAUDE.local.md")).unwrap();
    block_on(store.memory().remove_file("/w/app/CLAUDE.local.md")).unwrap();
    assert!(!block_on(store.memory().instructions(&request(Vec::new()))).unwrap().text.contains("My local notes."));
}

mod usefulness {
    use super::*;

    #[test]
    fn memories_marked_used_are_kept_over_the_caps_and_updated_stays() {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        let batch: Vec<NewMemory> = (0..30)
            .map(|i| NewMemory::new(&format!("Fact {i}"), MemoryType::Project, &format!("hook {i}"), &format!("body {i}")))
            .collect();
        block_on(store.memory().memory_add_many(&project(), batch, T0)).unwrap();
        let caps = Caps { lines: 20, units: 25_000 };
        let before = block_on(store.memory().memory_load(&project(), caps)).unwrap();
        assert!(before.left_out.contains(&"fact_29".to_string()), "{:?}", before.left_out);

        let used =
            block_on(store.memory().memory_used(&project(), &["fact_29".into(), "fact_28".into(), "fact_29".into()], T0 + 50)).unwrap();
        assert_eq!(used.iter().map(|m| m.file.as_str()).collect::<Vec<_>>(), ["fact_28", "fact_29"]);
        let fresh = Store::new(&storage);
        let memory = block_on(fresh.memory().memory_get(&project(), "fact_29")).unwrap();
        assert_eq!((memory.used_ms, memory.updated_ms), (Some(T0 + 50), Some(T0)), "a use is not an update");
        assert!(text(&storage, "projects/-home-u-app/memory/fact_29.md").contains("\nused: "));
        let after = block_on(fresh.memory().memory_load(&project(), caps)).unwrap();
        assert!(!after.left_out.contains(&"fact_29".to_string()), "{:?}", after.left_out);
        assert!(!after.left_out.contains(&"fact_28".to_string()));
        assert!(after.text.contains("(fact_29.md)") && after.text.contains("least recently useful"), "{}", after.text);

        block_on(store.memory().memory_used(&project(), &["fact_29".into()], T0 + 10)).unwrap();
        assert_eq!(
            block_on(store.memory().memory_get(&project(), "fact_29")).unwrap().used_ms,
            Some(T0 + 50),
            "an older use never moves it back"
        );
        assert!(matches!(block_on(store.memory().memory_used(&project(), &["nope".into()], T0)), Err(Error::MemoryNotFound { .. })));
    }
}

mod embeddings {
    use super::*;

    /// Three meanings in six dimensions, with words spread around them so the table's
    /// mean is near the origin, as a published table's is after centring.
    const TABLE: &str = "car 1 0 0 0 0 0\nautomobile 0.95 0.05 0 0 0 0\nvehicle 0.9 0.1 0 0 0 0\n\
        dog 0 0 1 0 0 0\npuppy 0 0 0.9 0.1 0 0\npizza 0 0 0 0 1 0\nlasagna 0 0 0 0 0.9 0.1\n\
        north -1 0 0 0 0 0\nsouth 0 0 -1 0 0 0\nwest 0 0 0 0 -1 0\nstone 0 -1 0 -1 0 -1\n";

    fn seeded(storage: &InMemoryStorage) -> Store<&InMemoryStorage> {
        let store = Store::new(storage);
        let memories = vec![
            NewMemory::new("Ride", MemoryType::User, "What the user drives", "The user bought a new car in May."),
            NewMemory::new("Pet", MemoryType::User, "The user's pet", "A puppy called Oscar."),
            NewMemory::new("Dinner", MemoryType::User, "Favourite food", "Lasagna on Sundays."),
        ];
        block_on(store.memory().memory_add_many(&project(), memories, T0)).unwrap();
        store
    }

    #[test]
    fn a_table_finds_memories_by_meaning_without_a_shared_word() {
        let storage = InMemoryStorage::new();
        let store = seeded(&storage);
        assert!(recall(&store, "automobile").is_empty(), "no word in common, no table: nothing");
        let info = store.memory().set_embeddings(Some(TABLE.as_bytes())).unwrap().unwrap();
        assert_eq!((info.words, info.terms, info.dimensions), (11, 11, 6));
        assert_eq!(recall(&store, "automobile")[0], "ride");
        assert_eq!(recall(&store, "which dog")[0], "pet");
        assert_eq!(recall(&store, "pizza")[0], "dinner");
        // Words still count: an exact match comes first, the table only adds.
        assert_eq!(recall(&store, "Oscar automobile")[..2], ["pet", "ride"]);
        store.memory().set_embeddings(None).unwrap();
        assert!(recall(&store, "automobile").is_empty());
    }

    #[test]
    fn memories_written_after_the_table_are_embedded_as_they_come() {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        store.memory().set_embeddings(Some(TABLE.as_bytes())).unwrap();
        assert!(recall(&store, "vehicle").is_empty());
        block_on(store.memory().memory_add(&project(), NewMemory::new("Ride", MemoryType::User, "", "A red automobile."), T0)).unwrap();
        assert_eq!(recall(&store, "vehicle"), ["ride"]);
        // Another store reading the files the first one wrote embeds them from the index.
        let fresh = Store::new(&storage);
        fresh.memory().set_embeddings(Some(TABLE.as_bytes())).unwrap();
        assert_eq!(recall(&fresh, "car"), ["ride"]);
    }

    #[test]
    fn a_table_that_does_not_read_is_refused_and_the_old_one_stays() {
        let storage = InMemoryStorage::new();
        let store = seeded(&storage);
        store.memory().set_embeddings(Some(TABLE.as_bytes())).unwrap();
        let error = store.memory().set_embeddings(Some(b"{\"words\": []}")).unwrap_err();
        assert!(error.to_string().contains("one word per line followed by its values"), "{error}");
        assert_eq!(recall(&store, "automobile")[0], "ride");
    }
}

/// An extraction planned while a memory was current, applied after another writer
/// superseded it: its supersede of that memory is refused and nothing of the answer is
/// written (the successor is the current fact).
#[test]
fn an_extraction_does_not_supersede_a_memory_superseded_since_its_plan() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for (i, (role, text)) in
        [(mneme_core::Role::User, "Deploys moved to Fridays."), (mneme_core::Role::Assistant, "Noted.")].into_iter().enumerate()
    {
        let entry =
            mneme_core::NewEntry { uuid: format!("e{i}"), now_ms: T0 + i as i64, role, text: text.into(), cwd: "/home/u/app".into() };
        block_on(store.sessions().append("s", entry)).unwrap();
    }
    let deploy = NewMemory::new("Deploy day", MemoryType::Project, "When releases go out", "Mondays.");
    let old = block_on(store.memory().memory_add(&project(), deploy.clone(), T0 + 5)).unwrap();
    let plan = block_on(store.memory().plan_extraction(&project(), "s")).unwrap();
    assert_eq!(plan.known, [old.file.as_str()]);
    block_on(store.memory().memory_supersede(&project(), &old.file, NewMemory { body: "Thursdays.".into(), ..deploy }, T0 + 6)).unwrap();
    let index = text(&storage, "projects/-home-u-app/memory/MEMORY.md");
    let answer = format!(
        "{{\"op\":\"add\",\"name\":\"Editor\",\"type\":\"user\",\"body\":\"Helix\"}}\n{{\"op\":\"supersede\",\"file\":\"{}\",\"name\":\"Deploy day\",\"type\":\"project\",\"body\":\"Fridays.\"}}",
        old.file
    );
    let applied = block_on(store.memory().apply_extraction(&project(), &plan, &answer, T0 + 7));
    assert!(
        matches!(&applied, Err(Error::InvalidAnswer { line: 2, reason }) if reason.contains("superseded by `deploy_day_2` already")),
        "{applied:?}"
    );
    assert_eq!(text(&storage, "projects/-home-u-app/memory/MEMORY.md"), index, "nothing of the answer was written");
    // An update of a superseded memory, or of one an earlier line supersedes, is refused
    // before anything is written too (it failed halfway, after the lines before it).
    let current = "deploy_day_2";
    let answers = [
        (
            format!(
                "{{\"op\":\"add\",\"name\":\"Editor\",\"type\":\"user\",\"body\":\"Helix\"}}\n{{\"op\":\"update\",\"file\":\"{}\",\"body\":\"Fridays.\"}}",
                old.file
            ),
            "superseded by `deploy_day_2` already: update that one",
        ),
        (
            format!(
                "{{\"op\":\"supersede\",\"file\":\"{current}\",\"name\":\"Deploy day\",\"type\":\"project\",\"body\":\"Fridays.\"}}\n{{\"op\":\"update\",\"file\":\"{current}\",\"body\":\"Saturdays.\"}}"
            ),
            "superseded by an earlier line of this answer",
        ),
    ];
    let replanned = block_on(store.memory().plan_extraction(&project(), "s")).unwrap();
    assert_eq!(replanned.known, [current]);
    for ((answer, said), plan) in answers.into_iter().zip([&plan, &replanned]) {
        let applied = block_on(store.memory().apply_extraction(&project(), plan, &answer, T0 + 8));
        assert!(matches!(&applied, Err(Error::InvalidAnswer { line: 2, reason }) if reason.contains(said)), "{applied:?}");
        assert_eq!(text(&storage, "projects/-home-u-app/memory/MEMORY.md"), index, "nothing of the answer was written");
    }
}

/// An update that changes nothing is refused, on every binding, and writes nothing.
#[test]
fn an_update_of_nothing_is_refused() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let memory =
        block_on(store.memory().memory_add(&project(), NewMemory::new("Editor", MemoryType::User, "Which editor", "Helix."), T0)).unwrap();
    let refused = block_on(store.memory().memory_update(&project(), &memory.file, Change::default(), T0 + 1));
    assert!(matches!(&refused, Err(Error::InvalidArgument(reason)) if reason.contains("say what to change")), "{refused:?}");
    assert_eq!(block_on(store.memory().memory_get(&project(), &memory.file)).unwrap(), memory);
}

const INDEX: &str = "projects/-home-u-app/memory/MEMORY.md";

/// A forget, supersede or update cut by a power failure at any storage call, between
/// the memory's file and MEMORY.md: the model is never given a memory the files say is
/// archived, and the next write of the scope brings MEMORY.md back to what they say.
#[test]
fn memory_md_comes_back_to_the_files_after_a_cut_between_them() {
    use mneme_core::storage::crash::Crashing;
    type Step = fn(&Store<&Crashing<&InMemoryStorage>>) -> Result<(), Error>;
    let steps: [(&str, Step); 2] = [
        ("forget", |store| block_on(store.memory().memory_forget(&project(), "grafana_board", T0 + 2)).map(drop)),
        ("supersede", |store| {
            let new = NewMemory::new("Grafana board", MemoryType::Reference, "Latency dashboard, moved", "grafana.new/d/api");
            block_on(store.memory().memory_supersede(&project(), "grafana_board", new, T0 + 2)).map(drop)
        }),
    ];
    let seed = |storage: &InMemoryStorage| {
        let store = Store::new(storage);
        block_on(store.memory().memory_add(
            &project(),
            NewMemory::new("Testing style", MemoryType::Feedback, "Real parts", "Real db."),
            T0,
        ))
        .unwrap();
        block_on(store.memory().memory_add(
            &project(),
            NewMemory::new("Grafana board", MemoryType::Reference, "Latency dashboard", "grafana"),
            T0 + 1,
        ))
        .unwrap();
    };
    let mut tried = 0;
    for (name, step) in steps {
        let calls = {
            let inner = InMemoryStorage::new();
            seed(&inner);
            let recording = Crashing::recording(&inner);
            step(&Store::new(&recording)).unwrap();
            recording.calls()
        };
        for (n, call) in calls.iter().enumerate() {
            for cut in call.cuts() {
                let context = format!("{name}: cut at call {} ({} {}) {cut:?}", n + 1, call.operation, call.key);
                let inner = InMemoryStorage::new();
                seed(&inner);
                let _ = step(&Store::new(&Crashing::new(&inner, n as u32 + 1, cut)));
                let store = Store::new(&inner);
                let current: Vec<String> = block_on(store.memory().memory_list(&project(), &Filter::default()))
                    .unwrap()
                    .into_iter()
                    .map(|m| format!("({}.md)", m.file))
                    .collect();
                let loaded = block_on(store.memory().memory_load(&project(), Caps::default())).unwrap().text;
                for line in loaded.lines().filter(|l| l.contains(".md)")) {
                    assert!(current.iter().any(|file| line.contains(file.as_str())), "{context}: the model is given {line}");
                }
                block_on(store.memory().memory_add(
                    &project(),
                    NewMemory::new("Next", MemoryType::Project, "the next memory", "after"),
                    T0 + 3,
                ))
                .unwrap_or_else(|e| panic!("{context}: {e}"));
                let index = text(&inner, INDEX);
                let current: Vec<String> = block_on(store.memory().memory_list(&project(), &Filter::default()))
                    .unwrap()
                    .into_iter()
                    .map(|m| format!("({}.md)", m.file))
                    .collect();
                assert_eq!(index.lines().count(), current.len(), "{context}: MEMORY.md is\n{index}");
                for file in &current {
                    assert!(index.contains(file.as_str()), "{context}: {file} not in\n{index}");
                }
                tried += 1;
            }
        }
    }
    assert!(tried > 5, "{tried}");
}

/// An add whose MEMORY.md cannot be written (a full disk) leaves no memory behind: a
/// retry writes the memory once, under its own name, not a second `_2`.
#[test]
fn a_failed_add_leaves_no_memory_behind() {
    let storage = Faulty::new(InMemoryStorage::new(), 0).only("replace").quota();
    let store = Store::new(&storage);
    block_on(store.memory().memory_add(&project(), NewMemory::new("First", MemoryType::User, "one", "1"), T0)).unwrap();
    // The add's replacements: the memory's file, then MEMORY.md (the second fails).
    storage.fail_at.set(storage.calls.get() + 2);
    let failed = block_on(store.memory().memory_add(&project(), NewMemory::new("Deploy", MemoryType::Project, "how", "run it"), T0 + 1));
    assert!(matches!(failed, Err(Error::Storage(_))), "{failed:?}");
    let files: Vec<String> = block_on(storage.inner.list("projects/-home-u-app/memory/")).unwrap().into_iter().map(|i| i.key).collect();
    assert!(!files.iter().any(|k| k.ends_with("deploy.md")), "{files:?}");
    let again = block_on(Store::new(&storage).memory().memory_add(
        &project(),
        NewMemory::new("Deploy", MemoryType::Project, "how", "run it"),
        T0 + 2,
    ))
    .unwrap();
    assert_eq!(again.file, "deploy");
    assert!(text(&storage.inner, INDEX).contains("(deploy.md)"));
}

/// A deterministic embedder: each text's vector counts its words on three axes of
/// meaning (vehicles, weather, anything else), so "car" is near "automobile" with no
/// word in common.
fn toy_embed(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0f32; 3];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let axis = match word.to_lowercase().as_str() {
            "car" | "automobile" | "vehicle" | "sedan" => 0,
            "sunny" | "rain" | "weather" | "forecast" => 1,
            _ => 2,
        };
        vector[axis] += if axis == 2 { 0.1 } else { 1.0 };
    }
    vector
}

fn embed_all(store: &Store<impl Storage>, model: &str) -> usize {
    let mut embedded = 0;
    loop {
        let plan = block_on(store.memory().plan_embedding(&project(), model, 1)).unwrap();
        if plan.files.is_empty() {
            return embedded;
        }
        let vectors: Vec<Vec<f32>> = plan.texts.iter().map(|text| toy_embed(text)).collect();
        embedded += block_on(store.memory().apply_embedding(&project(), &plan, &vectors)).unwrap() as usize;
    }
}

fn recall_near(store: &Store<impl Storage>, query: &str, model: &str) -> Vec<(String, bool)> {
    let near = mneme_core::memory::store::Near { model: model.into(), vector: toy_embed(query) };
    let recalled = block_on(store.memory().memory_recall(&project(), query, 10, false, Default::default(), Some(&near))).unwrap();
    recalled.hits.into_iter().map(|hit| (hit.file, hit.matched)).collect()
}

#[test]
fn a_hosts_embedder_finds_a_memory_by_meaning_and_its_vectors_are_kept_until_the_memory_changes() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let car = NewMemory::new("Ride", MemoryType::User, "The user drives an automobile", "A red sedan, bought in 2024.");
    block_on(store.memory().memory_add(&project(), car, T0)).unwrap();
    let weather = NewMemory::new("Forecast", MemoryType::Project, "Weather for the launch", "Sunny, no rain expected.");
    block_on(store.memory().memory_add(&project(), weather, T0 + 1)).unwrap();
    assert!(recall(&store, "car").is_empty(), "no word in common: words alone find nothing");

    let plan = block_on(store.memory().plan_embedding(&project(), "toy", 10)).unwrap();
    assert_eq!(plan.files, ["forecast", "ride"]);
    assert!(plan.texts[1].contains("A red sedan"), "the text embedded is what the memory says: {:?}", plan.texts);
    assert_eq!(embed_all(&store, "toy"), 2, "one memory per plan of limit 1, until none is left");
    assert_eq!(recall_near(&store, "car", "toy"), [("ride".to_owned(), true)]);
    assert!(text(&storage, "projects/-home-u-app/memory/.mneme/vectors.jsonl").starts_with("{\"mneme\":\"memory-vectors\""));

    // Read back by a new store: nothing to embed again.
    let fresh = Store::new(&storage);
    assert!(block_on(fresh.memory().plan_embedding(&project(), "toy", 10)).unwrap().files.is_empty());
    assert_eq!(recall_near(&fresh, "car", "toy"), [("ride".to_owned(), true)]);
    // Another model's vectors are its own.
    assert_eq!(block_on(fresh.memory().plan_embedding(&project(), "other", 10)).unwrap().files.len(), 2);

    // A memory written again loses its vector until it is embedded as it reads now;
    // vectors of a plan made before the write are not kept.
    let stale = block_on(fresh.memory().plan_embedding(&project(), "other", 10)).unwrap();
    let change = Change { body: Some("Now a blue sedan.".into()), ..Change::default() };
    block_on(fresh.memory().memory_update(&project(), "ride", change, T0 + 2)).unwrap();
    assert_eq!(block_on(fresh.memory().plan_embedding(&project(), "toy", 10)).unwrap().files, ["ride"]);
    let vectors: Vec<Vec<f32>> = stale.texts.iter().map(|text| toy_embed(text)).collect();
    assert_eq!(
        block_on(fresh.memory().apply_embedding(&project(), &stale, &vectors)).unwrap(),
        1,
        "only the memory unchanged since the plan"
    );
    assert_eq!(block_on(fresh.memory().plan_embedding(&project(), "other", 10)).unwrap().files, ["ride"]);
}

#[test]
fn embeddings_that_do_not_fit_the_plan_are_refused_and_a_torn_vectors_line_is_embedded_again() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for (n, name) in ["Ride", "Forecast"].into_iter().enumerate() {
        block_on(store.memory().memory_add(&project(), NewMemory::new(name, MemoryType::User, "A fact", "Body."), T0 + n as i64)).unwrap();
    }
    let plan = block_on(store.memory().plan_embedding(&project(), "toy", 10)).unwrap();
    let refused = |vectors: Vec<Vec<f32>>| match block_on(store.memory().apply_embedding(&project(), &plan, &vectors)) {
        Err(Error::InvalidArgument(message)) => message,
        other => panic!("{other:?}"),
    };
    assert!(refused(vec![vec![1.0, 0.0]]).contains("give one vector per text"));
    assert!(refused(vec![vec![1.0, 0.0], vec![1.0]]).contains("one model gives them all one length"));
    assert!(refused(vec![vec![1.0, f32::NAN], vec![1.0, 0.0]]).contains("not a finite number"));
    assert!(refused(vec![vec![], vec![]]).contains("an embedding has 1 to"));
    let near = mneme_core::memory::store::Near { model: " ".into(), vector: vec![1.0] };
    assert!(matches!(
        block_on(store.memory().memory_recall(&project(), "ride", 10, false, Default::default(), Some(&near))),
        Err(Error::InvalidArgument(message)) if message.contains("name the embedder's model")
    ));

    assert_eq!(block_on(store.memory().apply_embedding(&project(), &plan, &[vec![1.0, 0.0], vec![0.0, 1.0]])).unwrap(), 2);
    // A crash cut the last line short: that memory is embedded again, the other kept.
    let key = "projects/-home-u-app/memory/.mneme/vectors.jsonl";
    let whole = text(&storage, key);
    block_on(storage.replace(key, &whole.as_bytes()[..whole.len() - 5], None)).unwrap();
    let fresh = Store::new(&storage);
    let plan = block_on(fresh.memory().plan_embedding(&project(), "toy", 10)).unwrap();
    assert_eq!(plan.files, ["ride"]);
    assert_eq!(block_on(fresh.memory().apply_embedding(&project(), &plan, &[vec![0.0, 1.0]])).unwrap(), 1);
    assert!(
        block_on(Store::new(&storage).memory().plan_embedding(&project(), "toy", 10)).unwrap().files.is_empty(),
        "{}",
        text(&storage, key)
    );
}

/// A store that refuses every write, as a Claude Code home opened read-only.
struct ReadOnly<'a>(&'a InMemoryStorage);

impl Storage for ReadOnly<'_> {
    async fn list(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        self.0.list(prefix).await
    }
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        self.0.read(key, offset, len).await
    }
    async fn append(&self, key: &str, _: &[u8]) -> Result<u64, StorageError> {
        Err(StorageError::ReadOnly { key: key.into() })
    }
    async fn replace(&self, key: &str, _: &[u8], _: Option<u64>) -> Result<(), StorageError> {
        Err(StorageError::ReadOnly { key: key.into() })
    }
    async fn truncate(&self, key: &str, _: u64, _: u64) -> Result<(), StorageError> {
        Err(StorageError::ReadOnly { key: key.into() })
    }
    async fn remove(&self, key: &str) -> Result<(), StorageError> {
        Err(StorageError::ReadOnly { key: key.into() })
    }
    async fn rename(&self, from: &str, _: &str) -> Result<(), StorageError> {
        Err(StorageError::ReadOnly { key: from.into() })
    }
    async fn lock(&self, _: &str) -> Result<(), StorageError> {
        Ok(())
    }
    async fn unlock(&self, _: &str) -> Result<(), StorageError> {
        Ok(())
    }
}

#[test]
fn a_read_only_store_keeps_the_vectors_it_was_given_in_memory_and_plans_each_memory_once() {
    let storage = InMemoryStorage::new();
    let writer = Store::new(&storage);
    for (n, (name, body)) in [("Ride", "A red sedan."), ("Forecast", "Sunny, no rain.")].into_iter().enumerate() {
        block_on(writer.memory().memory_add(&project(), NewMemory::new(name, MemoryType::User, "A fact", body), T0 + n as i64)).unwrap();
    }
    // No recall index saved (a Claude Code home): every call reads the scope again.
    block_on(storage.remove("projects/-home-u-app/memory/.mneme/recall.jsonl")).unwrap();
    let reader = Store::new(ReadOnly(&storage));
    assert_eq!(embed_all(&reader, "toy"), 2, "each memory once, then an empty plan");
    assert_eq!(recall_near(&reader, "car", "toy"), [("ride".to_owned(), true)]);
    assert!(block_on(storage.list("projects/-home-u-app/memory/.mneme/")).unwrap().is_empty(), "nothing written");
}

#[test]
fn a_vector_is_kept_while_the_memory_says_the_same_and_must_match_the_models_length() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(store.memory().memory_add(&project(), NewMemory::new("Ride", MemoryType::User, "A fact", "A red sedan."), T0)).unwrap();
    block_on(store.memory().memory_add(&project(), NewMemory::new("Forecast", MemoryType::User, "A fact", "Sunny."), T0)).unwrap();
    assert_eq!(embed_all(&store, "toy"), 2);
    // Marked used: its frontmatter changed, not what it says; the vector stays.
    block_on(store.memory().memory_used(&project(), &["ride".to_owned()], T0 + 1)).unwrap();
    assert!(block_on(store.memory().plan_embedding(&project(), "toy", 10)).unwrap().files.is_empty());
    assert!(block_on(Store::new(&storage).memory().plan_embedding(&project(), "toy", 10)).unwrap().files.is_empty(), "read back too");
    // Written again with other words of the same length: embedded again.
    let change = Change { body: Some("A red saloon".into()), ..Change::default() };
    block_on(store.memory().memory_update(&project(), "ride", change, T0 + 2)).unwrap();
    let plan = block_on(store.memory().plan_embedding(&project(), "toy", 10)).unwrap();
    assert_eq!(plan.files, ["ride"]);
    assert!(matches!(
        block_on(store.memory().apply_embedding(&project(), &plan, &[vec![1.0, 0.0]])),
        Err(Error::InvalidArgument(message)) if message.contains("have 3 values, these 2")
    ));
    assert!(matches!(block_on(store.memory().plan_embedding(&project(), "toy", 0)), Err(Error::InvalidArgument(_))));
    assert!(matches!(block_on(store.memory().plan_embedding(&Scope::Project("../x".into()), "toy", 1)), Err(Error::InvalidProject { .. })));
}

#[test]
fn the_vectors_file_is_written_again_once_most_of_its_lines_are_out_of_date() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    block_on(store.memory().memory_add(&project(), NewMemory::new("Ride", MemoryType::User, "A fact", "A red sedan."), T0)).unwrap();
    block_on(store.memory().memory_add(&project(), NewMemory::new("Forecast", MemoryType::User, "A fact", "Sunny."), T0)).unwrap();
    let key = "projects/-home-u-app/memory/.mneme/vectors.jsonl";
    // Each rewording leaves the old vector's line behind.
    for n in 0..30 {
        let change = Change { body: Some(format!("A red sedan, version {n}.")), ..Change::default() };
        block_on(store.memory().memory_update(&project(), "ride", change, T0 + n)).unwrap();
        embed_all(&store, "toy");
    }
    assert!(text(&storage, key).lines().count() > 30, "a store appends while it runs");
    // A store that reads the file (a new process, another model) writes it again with
    // the current lines only, and reads back what it kept: nothing to embed again.
    let fresh = Store::new(&storage);
    assert!(block_on(fresh.memory().plan_embedding(&project(), "toy", 10)).unwrap().files.is_empty(), "{}", text(&storage, key));
    assert_eq!(text(&storage, key).lines().count(), 3, "the header and one line per memory: {}", text(&storage, key));
    assert_eq!(recall_near(&fresh, "sedan car", "toy")[0].0, "ride");
    assert!(block_on(Store::new(&storage).memory().plan_embedding(&project(), "toy", 10)).unwrap().files.is_empty());
}
