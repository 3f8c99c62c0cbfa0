//! Retention: expired sessions are archived (listed, restorable byte for byte), deleted
//! only when asked and after the retention period, and debris and the archive are kept
//! under a disk budget, oldest first. A dry run moves nothing.

use mneme_core::index::{ChatType, Field, Inbound, KeyPatch, RoutePolicy};
use mneme_core::interchange::{Import, Source};
use mneme_core::retention::{ARCHIVE, Retention};
use mneme_core::{Error, InMemoryStorage, NewEntry, Role, Storage, Store, block_on};

const DAY: i64 = 86_400_000;
/// 2026-11-01 00:00 UTC.
const NOW: i64 = 1_793_491_200_000;

fn say(store: &Store<&InMemoryStorage>, id: &str, at: i64, text: &str) {
    let entry = NewEntry { uuid: format!("{id}-{at}"), now_ms: at, role: Role::User, text: text.into(), cwd: "/work/app".into() };
    block_on(store.sessions().append(id, entry)).unwrap();
}

/// Every file under `prefix` with its bytes.
fn files(storage: &InMemoryStorage, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let mut keys = block_on(storage.list(prefix)).unwrap();
    keys.sort_by(|a, b| a.key.cmp(&b.key));
    keys.into_iter().map(|i| (i.key.clone(), block_on(storage.read(&i.key, 0, None)).unwrap())).collect()
}

fn ids(store: &Store<&InMemoryStorage>) -> Vec<String> {
    let mut ids: Vec<String> = block_on(store.sessions().list()).unwrap().sessions.into_iter().map(|s| s.id).collect();
    ids.sort();
    ids
}

#[test]
fn expired_sessions_are_archived_restorable_and_only_a_dry_run_says_so_without_moving() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    say(&store, "old", NOW - 40 * DAY, "forty days ago");
    say(&store, "fresh", NOW - DAY, "yesterday");
    say(&store, "local", NOW - 10 * DAY, "ten days ago, on a local model");
    say(&store, "kept", NOW - 40 * DAY, "forty days ago, but its key keeps it 90 days");
    // Debris beside "old": a torn tail and a repair backup go with it.
    block_on(storage.append("projects/-work-app/old.jsonl.torn-17", b"{\"type\":\"us")).unwrap();
    block_on(storage.append("projects/-work-app/old/subagents/agent-a1.jsonl", b"{\"isSidechain\":true}\n")).unwrap();
    let inbound = |id: &str| Inbound { chat_type: ChatType::Cron, id: Some(id.into()), text: "run".into(), ..Inbound::default() };
    for (job, session, patch) in [
        ("local-job", "local", KeyPatch { model: Some("ollama/llama3.1".into()), ..KeyPatch::default() }),
        ("kept-job", "kept", KeyPatch { toggles: vec![Field { name: "ttl_days".into(), value: "90".into() }], ..KeyPatch::default() }),
    ] {
        let resolved = block_on(store.index().resolve(&inbound(job), &RoutePolicy::default(), NOW - 40 * DAY, session)).unwrap();
        block_on(store.index().update_key(&resolved.key, &patch)).unwrap();
    }
    // A time to live a pass cannot take is refused when set, not passed over (or, below
    // zero, archiving the key's sessions at once) by every pass after.
    for days in ["-3", "abc", "1.5"] {
        let patch = KeyPatch { toggles: vec![Field { name: "ttl_days".into(), value: days.into() }], ..KeyPatch::default() };
        match block_on(store.index().update_key("cron:kept-job", &patch)) {
            Err(Error::InvalidArgument(reason)) => assert!(reason.contains(&format!("the toggle ttl_days is `{days}`")), "{reason}"),
            other => panic!("ttl_days={days}: {other:?}"),
        }
    }
    let live_before = files(&storage, "projects/");

    let dry = block_on(store.sessions().gc(&Retention { dry_run: true, ..Retention::default() }, NOW)).unwrap();
    let mut expired: Vec<(&str, &str)> = dry.archived.iter().map(|e| (e.id.as_str(), e.reason.as_str())).collect();
    expired.sort();
    assert_eq!(expired, [("local", "the ollama class of key cron:local-job"), ("old", "the default")]);
    assert_eq!(files(&storage, "projects/"), live_before, "a dry run moves nothing");
    assert!(files(&storage, ARCHIVE).is_empty());

    let done = block_on(store.sessions().gc(&Retention::default(), NOW)).unwrap();
    assert_eq!(done.archived.len(), 2);
    assert!(done.removed.is_empty(), "nothing is deleted unless asked");
    assert_eq!(ids(&store), ["fresh", "kept"]);
    let archived = block_on(store.sessions().archived()).unwrap();
    let summary: Vec<(&str, &str, u32)> = archived.iter().map(|a| (a.id.as_str(), a.project.as_str(), a.files)).collect();
    assert_eq!(summary, [("local", "-work-app", 1), ("old", "-work-app", 3)]);
    assert!(archived.iter().all(|a| a.archived_ms == NOW));

    // Restored byte for byte, sub-agent and debris included.
    block_on(store.sessions().restore("old")).unwrap();
    assert_eq!(ids(&store), ["fresh", "kept", "old"]);
    let old_files: Vec<_> = live_before.iter().filter(|(k, _)| k.contains("/old")).cloned().collect();
    let restored: Vec<_> = files(&storage, "projects/").into_iter().filter(|(k, _)| k.contains("/old")).collect();
    assert_eq!(restored, old_files);
    // Live again, so not archived: said as that, not as a session that is not there.
    let again = block_on(store.sessions().restore("old"));
    assert!(matches!(&again, Err(Error::InvalidArgument(m)) if m.contains("`old` is not archived")), "{again:?}");
    assert!(matches!(block_on(store.sessions().restore("never")), Err(Error::SessionNotFound { .. })));

    // A new session under an archived id would hide the archived history: an append,
    // a fork and an import to it are refused, and write nothing.
    let entry = NewEntry { uuid: "new-life".into(), now_ms: NOW, role: Role::User, text: "new life".into(), cwd: "/work/app".into() };
    let refused = block_on(store.sessions().append("local", entry));
    assert!(matches!(&refused, Err(Error::SessionArchived { id }) if id == "local"), "{refused:?}");
    assert!(refused.unwrap_err().to_string().contains("restore it"));
    let forked = block_on(store.sessions().fork("fresh", None, "local", NOW));
    assert!(matches!(forked, Err(Error::SessionArchived { .. })), "{forked:?}");
    let import = Import {
        data: br#"[{"role":"user","content":"hi"}]"#.to_vec(),
        source: Some(Source::Openai),
        id: Some("local".into()),
        cwd: Some("/work/app".into()),
        origin: String::new(),
        uuid: "import-1".into(),
        now_ms: NOW,
    };
    let imported = block_on(store.sessions().import_session(&import));
    assert!(matches!(imported, Err(Error::SessionArchived { .. })), "{imported:?}");
    assert_eq!(ids(&store), ["fresh", "kept", "old"]);
    // A store that wrote the session before another archived it (a server's cached
    // session, a nightly gc in another process) does not begin it again either.
    say(&store, "server", NOW, "a long-lived process writes this");
    block_on(Store::new(&storage).sessions().archive("server", NOW + 1)).unwrap();
    let entry = NewEntry { uuid: "late".into(), now_ms: NOW + 2, role: Role::User, text: "back".into(), cwd: "/work/app".into() };
    let late = block_on(store.sessions().append("server", entry));
    assert!(matches!(late, Err(Error::SessionArchived { .. })), "{late:?}");
    block_on(store.sessions().restore("server")).unwrap();
    block_on(store.sessions().remove("server")).unwrap();
    // One another program wrote (Claude Code takes no notice of the archive) is not
    // overwritten by a restore.
    block_on(storage.append(
        "projects/-work-app/local.jsonl",
        b"{\"type\":\"user\",\"uuid\":\"x\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    ))
    .unwrap();
    assert!(matches!(block_on(store.sessions().restore("local")), Err(Error::SessionExists { .. })));
    assert_eq!(block_on(store.sessions().archived()).unwrap().len(), 1, "still archived");
}

#[test]
fn archived_sessions_are_deleted_only_when_asked_and_after_the_retention_period() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    say(&store, "a", NOW - 100 * DAY, "old");
    block_on(store.sessions().archive("a", NOW - 31 * DAY)).unwrap();
    say(&store, "b", NOW - 100 * DAY, "old too");
    block_on(store.sessions().archive("b", NOW - 5 * DAY)).unwrap();

    let kept = block_on(store.sessions().gc(&Retention::default(), NOW)).unwrap();
    assert!(kept.removed.is_empty() && kept.archived.is_empty(), "{kept:?}");
    let asked = block_on(store.sessions().gc(&Retention { delete_archived: true, ..Retention::default() }, NOW)).unwrap();
    let removed: Vec<(&str, &str)> = asked.removed.iter().map(|r| (r.key.as_str(), r.reason.as_str())).collect();
    let folder = format!("archive/{}-a", NOW - 31 * DAY);
    assert_eq!(removed, [(folder.as_str(), "archived 31 days ago, kept 30 days")]);
    let left: Vec<String> = block_on(store.sessions().archived()).unwrap().into_iter().map(|a| a.id).collect();
    assert_eq!(left, ["b"]);
}

#[test]
fn a_disk_budget_collects_debris_and_the_archive_oldest_first_and_never_a_live_session() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    say(&store, "live", NOW, "still here");
    say(&store, "gone", NOW - 100 * DAY, "archived");
    block_on(store.sessions().archive("gone", NOW - 32 * DAY)).unwrap();
    let archived_bytes = block_on(store.sessions().archived()).unwrap()[0].bytes;
    block_on(storage.append("projects/-work-app/live.jsonl.torn-5", &[b'x'; 100])).unwrap();
    block_on(storage.append(&format!("projects/-work-app/live.jsonl.bak-{}", NOW - 33 * DAY), &[b'y'; 200])).unwrap();
    block_on(storage.append(&format!("projects/-work-app/live.jsonl.bak-{}", NOW - DAY), &[b'z'; 300])).unwrap();
    let live = files(&storage, "projects/-work-app/live.jsonl");

    // Room for the newest backup only: the torn tail, the older backup and the archived
    // session (older than the newest backup, kept its 30 days) go, in that order.
    let policy = Retention { max_disk_bytes: Some(300), ..Retention::default() };
    let dry = block_on(store.sessions().gc(&Retention { dry_run: true, ..policy.clone() }, NOW)).unwrap();
    let done = block_on(store.sessions().gc(&policy, NOW)).unwrap();
    assert_eq!(dry.removed, done.removed, "a dry run says what a run does");
    let order: Vec<&str> = done.removed.iter().map(|r| r.key.as_str()).collect();
    let older_backup = format!("projects/-work-app/live.jsonl.bak-{}", NOW - 33 * DAY);
    let archive_folder = format!("archive/{}-gone", NOW - 32 * DAY);
    assert_eq!(order, ["projects/-work-app/live.jsonl.torn-5", older_backup.as_str(), archive_folder.as_str()]);
    assert_eq!(done.removed[2].bytes, archived_bytes);
    assert_eq!(done.kept_bytes, 300);
    assert!(block_on(store.sessions().archived()).unwrap().is_empty());
    let left = files(&storage, "projects/-work-app/live.jsonl");
    assert_eq!(left.len(), live.len() - 2);
    assert_eq!(block_on(storage.read("projects/-work-app/live.jsonl", 0, None)).unwrap(), live[0].1, "the live session is untouched");
}

/// A budget takes no archived session before it has been kept its time, nor one the
/// same pass archived (it was live when the pass began), even with no time to keep:
/// they stay over the budget, and the report says how much is kept.
#[test]
fn a_disk_budget_never_takes_a_session_archived_recently_or_in_the_same_pass() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    say(&store, "recent", NOW - 100 * DAY, "archived two days ago");
    block_on(store.sessions().archive("recent", NOW - 2 * DAY)).unwrap();
    say(&store, "expiring", NOW - 40 * DAY, "archived by this pass");
    for keep_archived_ms in [30 * DAY, 0] {
        let policy = Retention { max_disk_bytes: Some(1), keep_archived_ms, ..Retention::default() };
        let dry = block_on(store.sessions().gc(&Retention { dry_run: true, ..policy.clone() }, NOW)).unwrap();
        let removed: Vec<&str> = dry.removed.iter().map(|r| r.key.as_str()).collect();
        let recent = format!("archive/{}-recent", NOW - 2 * DAY);
        let expected: &[&str] = if keep_archived_ms == 0 { &[recent.as_str()] } else { &[] };
        assert_eq!(removed, expected, "keeping archived sessions {keep_archived_ms} ms");
        assert_eq!(dry.archived.len(), 1, "the expired session is archived");
    }
    // Run with no time to keep, deleting archived sessions too: the one archived two
    // days ago goes; the one this pass archives stays.
    let policy = Retention { max_disk_bytes: Some(1), keep_archived_ms: 0, delete_archived: true, ..Retention::default() };
    let done = block_on(store.sessions().gc(&policy, NOW)).unwrap();
    let removed: Vec<&str> = done.removed.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(removed, [format!("archive/{}-recent", NOW - 2 * DAY).as_str()]);
    let archived: Vec<String> = block_on(store.sessions().archived()).unwrap().into_iter().map(|a| a.id).collect();
    assert_eq!(archived, ["expiring"]);
    assert!(done.kept_bytes > 1, "the report says the archive is over the budget");
}

#[test]
fn a_dry_run_counts_what_the_same_pass_archives_under_the_budget() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    say(&store, "live", NOW, "still here");
    say(&store, "old", NOW - 40 * DAY, "expires in this pass");
    block_on(storage.append("projects/-work-app/old.jsonl.torn-9", &[b'x'; 50])).unwrap();
    block_on(storage.append(&format!("projects/-work-app/live.jsonl.bak-{}", NOW - DAY), &[b'z'; 3_000])).unwrap();

    // The expired session, its torn tail with it, is archived now: newer than the
    // backup, so the backup goes first and the archive fits after it.
    let policy = Retention { max_disk_bytes: Some(1_000), ..Retention::default() };
    let dry = block_on(store.sessions().gc(&Retention { dry_run: true, ..policy.clone() }, NOW)).unwrap();
    let done = block_on(store.sessions().gc(&policy, NOW)).unwrap();
    assert_eq!(
        (&dry.archived, &dry.removed, dry.kept_bytes),
        (&done.archived, &done.removed, done.kept_bytes),
        "a dry run says what a run does"
    );
    let archived = block_on(store.sessions().archived()).unwrap();
    assert_eq!(archived.len(), 1);
    assert_eq!(archived[0].files, 2, "the torn tail moved with its session");
    let removed: Vec<&str> = done.removed.iter().map(|r| r.key.as_str()).collect();
    let backup = format!("projects/-work-app/live.jsonl.bak-{}", NOW - DAY);
    assert_eq!(removed, [backup.as_str()]);
    assert_eq!(done.kept_bytes, archived[0].bytes);
}

/// A negative time to live archived every session at once, as if asked to: refused,
/// and nothing moves.
#[test]
fn a_negative_time_to_live_is_refused_and_moves_nothing() {
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    say(&store, "fresh", NOW - DAY, "yesterday");
    let mut class = Retention::default();
    class.classes[0].ttl_ms = -1;
    for (policy, said) in [
        (Retention { ttl_ms: -1, ..Retention::default() }, "the time to live of the default is -1 ms"),
        (class, "the time to live of class `ollama` is -1 ms"),
        (Retention { keep_archived_ms: -5, ..Retention::default() }, "the time to keep archived sessions is -5 ms"),
    ] {
        match block_on(store.sessions().gc(&policy, NOW)) {
            Err(Error::InvalidArgument(reason)) => assert!(reason.contains(said), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(ids(&store), ["fresh"]);
}

/// A restore cut with a file at both places (on a filesystem a rename is a link, then
/// an unlink: a kill between the two leaves this) is finished by restoring again, on
/// any storage: a copy holding the same bytes is the move half done.
#[test]
fn a_restore_cut_with_files_at_both_places_is_finished_by_restoring_again() {
    for cut_at_the_session_itself in [false, true] {
        let storage = InMemoryStorage::new();
        let store = Store::new(&storage);
        say(&store, "s", NOW, "hello");
        block_on(storage.append("projects/-work-app/s.jsonl.torn-9", b"{\"ty")).unwrap();
        block_on(store.sessions().archive("s", NOW + 1)).unwrap();
        let archived = files(&storage, ARCHIVE);
        assert_eq!(archived.len(), 2, "{archived:?}");
        for (key, bytes) in &archived {
            let live = &key[key.find("projects/").unwrap()..];
            if cut_at_the_session_itself || live.ends_with(".torn-9") {
                block_on(storage.append(live, bytes)).unwrap();
            }
        }
        let fresh = Store::new(&storage);
        let restored = block_on(fresh.sessions().restore("s"))
            .unwrap_or_else(|e| panic!("cut at the session itself: {cut_at_the_session_itself}: {e}"));
        assert_eq!(restored.id, "s");
        assert!(files(&storage, ARCHIVE).is_empty(), "the archive's copies are gone");
        assert_eq!(ids(&fresh), ["s"]);
    }
    // A different session of that id in the store is never written over.
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    say(&store, "s", NOW, "hello");
    block_on(store.sessions().archive("s", NOW + 1)).unwrap();
    block_on(storage.append("projects/-work-app/s.jsonl", b"{\"type\":\"user\"}\n")).unwrap();
    assert!(matches!(block_on(Store::new(&storage).sessions().restore("s")), Err(Error::SessionExists { .. })));
}
