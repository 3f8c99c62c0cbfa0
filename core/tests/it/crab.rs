//! crab's session files kept by Mneme: crab's naming, its latest session, titles that
//! rename the file, uptime that accumulates — and no line ever rewritten.

use mneme_core::{Error, InMemoryStorage, NewEntry, Role, Storage, Store, block_on};

const NOW: i64 = 1_771_200_000_000;

fn say(store: &Store<&InMemoryStorage>, id: &str, role: Role, text: &str) {
    let entry = NewEntry { uuid: format!("{id}-{text}"), now_ms: NOW, role, text: text.into(), cwd: "/".into() };
    block_on(store.sessions().append(id, entry)).unwrap();
}

#[test]
fn sessions_are_named_found_titled_and_timed_as_crab_does_without_rewriting() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    assert_eq!(block_on(store.index().crab_latest(None, "crab", "Tg 12345")).unwrap(), None);
    let first = block_on(store.index().crab_start(None, "crab", "Tg 12345", "user", NOW)).unwrap();
    assert_eq!((first.id.as_str(), first.sender.as_str(), first.seq), ("crab_tg-12345_1", "tg-12345", 1));
    assert_eq!(first.created_at, "2026-02-16T00:00:00.000Z");
    say(&store, &first.id, Role::User, "hello crab");
    say(&store, &first.id, Role::Assistant, "hi there");
    let second = block_on(store.index().crab_start(None, "crab", "tg 12345", "user", NOW + 1)).unwrap();
    assert_eq!(second.id, "crab_tg-12345_2");
    block_on(store.index().crab_start(None, "crab", "someone else", "user", NOW)).unwrap();
    let latest = block_on(store.index().crab_latest(None, "crab", "Tg 12345")).unwrap().unwrap();
    assert_eq!(latest.id, "crab_tg-12345_2");
    // The newest archived (a gc, after its idle time): the next starts past it, not
    // under its id, which would be refused as archived every time.
    block_on(store.sessions().archive("crab_tg-12345_2", NOW + 2)).unwrap();
    let third = block_on(store.index().crab_start(None, "crab", "tg 12345", "user", NOW + 3)).unwrap();
    assert_eq!(third.id, "crab_tg-12345_3");
    block_on(store.sessions().restore("crab_tg-12345_2")).unwrap();
    block_on(store.sessions().remove("crab_tg-12345_3")).unwrap();

    let before = block_on(storage.read("projects/crab/crab_tg-12345_1.jsonl", 0, None)).unwrap();
    let titled = block_on(store.index().crab_set_title("crab_tg-12345_1", "Plan the launch!")).unwrap();
    assert_eq!((titled.id.as_str(), titled.title.as_str(), titled.seq), ("crab_tg-12345_1_plan-the-launch", "Plan the launch!", 1));
    let timed = block_on(store.index().crab_add_uptime(&titled.id, 90)).unwrap();
    let timed = block_on(store.index().crab_add_uptime(&timed.id, 30)).unwrap();
    assert_eq!((timed.uptime_secs, timed.title.as_str(), timed.created_by.as_str()), (120, "Plan the launch!", "user"));
    let after = block_on(storage.read("projects/crab/crab_tg-12345_1_plan-the-launch.jsonl", 0, None)).unwrap();
    assert!(after.starts_with(&before), "every line before stays byte for byte; meta lines are appended");
    assert!(matches!(
        block_on(storage.read("projects/crab/crab_tg-12345_1.jsonl", 0, None)),
        Err(mneme_core::StorageError::NotFound { .. })
    ));

    // The conversation reads as it did, in crab's dialect, and a titled session still counts for its seq.
    let context = block_on(store.sessions().context(&timed.id)).unwrap();
    let texts: Vec<&str> = context.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["hello crab", "hi there"]);
    block_on(store.index().crab_set_title("crab_tg-12345_2", "zzz")).unwrap();
    let third = block_on(store.index().crab_start(None, "crab", "Tg 12345", "user", NOW + 2)).unwrap();
    assert_eq!(third.id, "crab_tg-12345_3");
}

#[test]
fn what_crab_cannot_name_is_refused() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    for (agent, sender) in [("my_agent", "user"), ("", "user"), ("crab", "!!!")] {
        let refused = block_on(store.index().crab_start(None, agent, sender, "user", NOW));
        assert!(matches!(refused, Err(Error::InvalidArgument(_))), "{agent:?} {sender:?}: {refused:?}");
    }
    say(&store, "not-a-crab-name", Role::User, "hi");
    assert!(matches!(block_on(store.index().crab_show("not-a-crab-name")), Err(Error::InvalidArgument(_))));
    assert!(matches!(block_on(store.index().crab_add_uptime("crab_user_9", 1)), Err(Error::SessionNotFound { .. })));

    // A title whose name another session has is refused before anything is written.
    let first = block_on(store.index().crab_start(None, "crab", "user", "user", NOW)).unwrap();
    say(&store, "crab_user_1_taken", Role::User, "already here");
    let before = block_on(storage.read("projects/crab/crab_user_1.jsonl", 0, None)).unwrap();
    let taken = block_on(store.index().crab_set_title(&first.id, "Taken"));
    assert!(matches!(taken, Err(Error::SessionExists { .. })), "{taken:?}");
    assert_eq!(block_on(storage.read("projects/crab/crab_user_1.jsonl", 0, None)).unwrap(), before);
}
