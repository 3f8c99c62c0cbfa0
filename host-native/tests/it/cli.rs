//! The `mneme` binary, run as a user would.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn mneme(args: &[&str]) -> Output {
    crate::mneme_command().args(args).output().expect("run mneme")
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "mneme failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

fn transcripts(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            found.extend(transcripts(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            found.push(path);
        }
    }
    found
}

#[test]
fn demo_writes_valid_claude_code_jsonl() {
    for engine in ["component", "native"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("demo");
        let out = stdout(&mneme(&["demo", "--engine", engine, "--dir", root.to_str().unwrap()]));
        assert!(out.contains("identical to what was written"), "{out}");

        let files = transcripts(&root.join("projects"));
        assert_eq!(files.len(), 1, "{files:?}");
        let text = fs::read_to_string(&files[0]).unwrap();
        assert!(text.ends_with('\n'));
        let mut seen = HashSet::new();
        let mut session_ids = HashSet::new();
        let mut compactions = 0;
        for (index, line) in text.lines().enumerate() {
            let entry: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {} is not JSON: {e}", index + 1));
            for field in ["type", "uuid", "sessionId", "timestamp", "cwd"] {
                assert!(!entry[field].is_null(), "line {} lacks {field}", index + 1);
            }
            assert!(entry.get("parentUuid").is_some(), "parentUuid must be present (null for the root)");
            match entry["parentUuid"].as_str() {
                // A compaction boundary starts a new root and names what it continues.
                None if entry["subtype"] == "compact_boundary" => {
                    let logical = entry["logicalParentUuid"].as_str().expect("a boundary names its logical parent");
                    assert!(seen.contains(logical), "line {}: logical parent {logical} is not an earlier uuid", index + 1);
                    compactions += 1;
                }
                None => assert_eq!(index, 0, "only the first entry is a root"),
                Some(parent) => assert!(seen.contains(parent), "line {}: parent {parent} is not an earlier uuid", index + 1),
            }
            if entry["type"] != "system" {
                assert_eq!(entry["message"]["role"], entry["type"]);
            }
            assert!(seen.insert(entry["uuid"].as_str().unwrap().to_owned()), "duplicate uuid");
            session_ids.insert(entry["sessionId"].as_str().unwrap().to_owned());
        }
        assert!(out.contains("40 model turns"), "{out}");
        assert!(compactions >= 1, "the demo compacts automatically");
        // The scripted 6, then 10 tasks: a prompt, three calls (text, call, result: 3
        // lines each) and an answer: 11 lines a task.
        assert_eq!(seen.len(), 6 + 10 * 11 + 2 * compactions);
        let context: Value =
            serde_json::from_str(&stdout(&mneme(&["context", "--root", root.to_str().unwrap(), &files_id(&files[0])]))).unwrap();
        let messages = context["messages"].as_array().unwrap();
        assert!(messages[0]["content"][0]["text"].as_str().unwrap().contains("continued from a previous conversation"), "{context}");
        assert!(out.contains(&format!("Resumed provider-ready: {} messages", messages.len())), "{out}");
        assert_eq!(session_ids.len(), 1);
        let id = session_ids.into_iter().next().unwrap();
        assert_eq!(files[0].file_stem().unwrap().to_str().unwrap(), id, "the file is named after the session");

        let listed: Value =
            serde_json::from_str(&stdout(&mneme(&["sessions", "list", "--json", "--root", root.to_str().unwrap()]))).unwrap();
        assert_eq!(listed["sessions"][0]["id"], id.as_str());
        assert_eq!(listed["sessions"][0]["message_count"], 6 + 10 * 11 + compactions);
    }
}

fn files_id(file: &std::path::Path) -> String {
    file.file_stem().unwrap().to_str().unwrap().to_owned()
}

#[test]
fn demo_refuses_a_folder_that_is_not_empty() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("precious.txt"), "keep").unwrap();
    let output = mneme(&["demo", "--dir", dir.path().to_str().unwrap()]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("not empty"));
    assert_eq!(fs::read_to_string(dir.path().join("precious.txt")).unwrap(), "keep");
}

#[test]
fn append_show_and_list_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let created = mneme(&["--root", root, "append", "chat-1", "--role", "user", "--text", "remember the milk", "--cwd", "/home/ada"]);
    stdout(&created);
    let note = "`claude --resume` opens only sessions whose id is a UUID, and `chat-1` is not one";
    assert!(String::from_utf8_lossy(&created.stderr).contains(note), "a session Claude Code cannot resume is said so when it is created");
    let given = "5e0a7c2d-1b4f-4c8e-9d3a-2f6b8c1e0a77";
    let appended = mneme(&["--root", root, "append", "chat-1", "--role", "assistant", "--text", "noted", "--json", "--uuid", given]);
    let entry: Value = serde_json::from_str(&stdout(&appended)).unwrap();
    assert_eq!((entry["line"].as_u64(), entry["uuid"].as_str()), (Some(2), Some(given)), "the entry has the uuid given");
    assert!(appended.stderr.is_empty(), "said once, not on every append: {}", String::from_utf8_lossy(&appended.stderr));
    let uuid = "0b6c1b8e-5d53-4f0e-9d0a-6a6f2c1e7d11";
    let resumable = mneme(&["--root", root, "append", uuid, "--role", "user", "--text", "hi", "--cwd", "/home/ada"]);
    stdout(&resumable);
    assert!(resumable.stderr.is_empty(), "{}", String::from_utf8_lossy(&resumable.stderr));
    let forked = mneme(&["--root", root, "fork", uuid, "--to", "my-fork"]);
    stdout(&forked);
    assert!(String::from_utf8_lossy(&forked.stderr).contains("`my-fork` is not one"), "{}", String::from_utf8_lossy(&forked.stderr));
    let shown = stdout(&mneme(&["--root", root, "sessions", "show", "chat-1"]));
    assert!(shown.contains("remember the milk") && shown.contains("noted"), "{shown}");
    let listed = stdout(&mneme(&["--root", root, "--engine", "native", "sessions", "list"]));
    assert!(listed.contains("chat-1") && listed.contains("remember the milk"), "{listed}");
    assert!(dir.path().join("projects/-home-ada/chat-1.jsonl").is_file());

    let missing = mneme(&["--root", root, "sessions", "show", "nope"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no session `nope`"));
}

#[test]
fn secrets_are_removed_before_writing_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let token = "ghp_aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xYaB3d";
    let text = format!("push with {token}\nOPENAI_API_KEY=abc123");
    let said = stdout(&mneme(&["--root", root, "append", "s", "--role", "user", "--text", &text, "--cwd", "/w"]));
    assert!(said.contains("(secrets removed: 1 github-token, 1 env-secret)"), "{said}");
    let file = fs::read_to_string(dir.path().join("projects/-w/s.jsonl")).unwrap();
    assert!(file.contains("push with [REDACTED:github-token]\\nOPENAI_API_KEY=[REDACTED:env-secret]") && !file.contains(token), "{file}");
    let said = stdout(&mneme(&["--root", root, "memory", "add", "--name", "Push", "--type", "reference", "--body", &text, "--cwd", "/w"]));
    assert!(said.contains("secrets removed"), "{said}");

    stdout(&mneme(&["--root", root, "--redact", "aws-access-key,private-key", "append", "s", "--role", "user", "--text", token]));
    stdout(&mneme(&[
        "--root",
        root,
        "--engine",
        "native",
        "--redact",
        "none",
        "append",
        "s",
        "--role",
        "user",
        "--text",
        "abc AKIAIOSFODNN7EXAMPLE",
    ]));
    let file = fs::read_to_string(dir.path().join("projects/-w/s.jsonl")).unwrap();
    assert!(file.contains(token) && file.contains("AKIAIOSFODNN7EXAMPLE"), "{file}");

    let refused = mneme(&["--root", root, "--redact", "gitlab-token", "append", "s", "--role", "user", "--text", "x"]);
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && error.contains("--redact") && error.contains("gitlab-token") && error.contains("github-token"),
        "{error}"
    );
}

#[test]
fn claude_home_is_read_only_and_lists_real_sessions() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/claude/04-v2.1.42-progress");
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("projects/-experiments-ideas");
    fs::create_dir_all(&project).unwrap();
    for file in transcripts(&corpus) {
        fs::copy(&file, project.join(file.file_name().unwrap())).unwrap();
    }
    let before = fs::read(project.join("03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl")).unwrap();
    let home_arg = home.path().to_str().unwrap();

    let listed: Value = serde_json::from_str(&stdout(&mneme(&["--claude-home", home_arg, "sessions", "list", "--json"]))).unwrap();
    let ids: HashSet<&str> = listed["sessions"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, HashSet::from(["03eb5929-52b3-4b13-ada3-b93ae35806b8", "a95fea4a-b88a-4e49-ac07-4cc323d8700c"]));

    let found: Value =
        serde_json::from_str(&stdout(&mneme(&["--claude-home", home_arg, "search", "struggled with clmail", "--json"]))).unwrap();
    assert_eq!(found[0]["id"], "03eb5929-52b3-4b13-ada3-b93ae35806b8", "{found}");
    assert_eq!(found[0]["uuid"], "9edc38e6-0ac0-42c0-b911-e24611af2a5b", "{found}");
    assert!(found[0]["text"].as_str().unwrap().contains("clmail project"), "{found}");
    assert!(stdout(&mneme(&["--claude-home", home_arg, "search", "zzyzxqq"])).contains("no message matches"));

    let refused = mneme(&["--claude-home", home_arg, "append", "03eb5929-52b3-4b13-ada3-b93ae35806b8", "--role", "user", "--text", "x"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("read-only"), "{}", String::from_utf8_lossy(&refused.stderr));
    assert_eq!(fs::read(project.join("03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl")).unwrap(), before);
    // Commands that change a store are refused before they start, saying what only looks
    // (gc said a file could not be written; keys recorded a key in the cache folder).
    for (args, looks) in [
        (&["gc"][..], "`gc --dry-run` only looks"),
        (&["keys", "resolve", "hi"][..], "`keys list` and `keys show` only look"),
        (&["compact", "03eb5929"][..], "`compact --plan` only looks"),
    ] {
        let refused = mneme(&[&["--claude-home", home_arg][..], args].concat());
        let told = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success() && told.contains("the store is read-only") && told.contains(looks), "{args:?}: {told}");
    }
    assert!(stdout(&mneme(&["--claude-home", home_arg, "keys", "list"])).contains("no keys"), "no key was recorded");
    assert!(stdout(&mneme(&["--claude-home", home_arg, "compact", "03eb5929", "--plan"])).contains("context:"), "a start of an id plans");
    assert!(stdout(&mneme(&["--claude-home", home_arg, "gc", "--dry-run"])).contains("nothing was changed"));
    assert_eq!(fs::read(project.join("03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl")).unwrap(), before);
    assert!(!home.path().join(".mneme").exists(), "nothing was written into the Claude home");
    assert!(!home.path().join("index").exists(), "the index is kept outside the home");
}

#[test]
fn a_read_only_home_keeps_its_index_in_the_cache_folder_and_follows_the_home() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/claude/04-v2.1.42-progress");
    let home = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let project = home.path().join("projects/-experiments-ideas");
    fs::create_dir_all(&project).unwrap();
    for file in transcripts(&corpus) {
        fs::copy(&file, project.join(file.file_name().unwrap())).unwrap();
    }
    let session = project.join("03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl");
    let run = |args: &[&str]| {
        let output =
            crate::mneme_command().env("XDG_CACHE_HOME", cache.path()).arg("--claude-home").arg(home.path()).args(args).output().unwrap();
        stdout(&output)
    };
    let home_files = || {
        let mut files: Vec<(PathBuf, u64)> = walk(home.path()).into_iter().map(|p| (p.clone(), fs::metadata(&p).unwrap().len())).collect();
        files.sort();
        files
    };
    let before = home_files();
    // What the first command reads is reported (a multi-GB home takes seconds); the next
    // one answers from the cache and reads next to nothing.
    let with_progress = |args: &[&str]| {
        let output = crate::mneme_command()
            .env("XDG_CACHE_HOME", cache.path())
            .env("MNEME_PROGRESS", "always")
            .arg("--claude-home")
            .arg(home.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let read: usize = stderr
            .lines()
            .last()
            .and_then(|line| line.strip_prefix("mneme: read "))
            .and_then(|rest| rest.split(' ').next())
            .and_then(|count| count.parse().ok())
            .unwrap_or_else(|| panic!("no last line saying what was read: {stderr}"));
        (stdout(&output), read)
    };
    let transcripts_in_home = transcripts(&corpus).len();
    let (first, read) = with_progress(&["sessions", "list", "--json"]);
    assert_eq!(read, transcripts_in_home, "the first listing reads every transcript");
    let (again, read) = with_progress(&["sessions", "list", "--json"]);
    assert!(read < transcripts_in_home, "the cached listing read {read} transcripts of {transcripts_in_home}");
    assert_eq!(again, first, "the report goes to standard error only");
    let homes = cache.path().join("mneme/homes");
    let cached: Vec<PathBuf> = fs::read_dir(&homes).unwrap().flatten().map(|e| e.path()).collect();
    let [kept] = &cached[..] else { panic!("expected one cached home in {}: {cached:?}", homes.display()) };
    assert!(kept.file_name().unwrap().to_str().unwrap().starts_with("claude-"), "{}", kept.display());
    assert!(walk(&kept.join("index")).iter().any(|p| p.to_str().unwrap().contains("snapshot") || p.to_str().unwrap().contains("log")));
    assert_eq!(run(&["sessions", "list", "--json"]), first, "the cached index answers the same");
    assert!(run(&["search", "struggled with clmail", "--json"]).contains("clmail project"));
    assert!(kept.join("index/search.jsonl").exists(), "search keeps its index in the cache too");
    assert_eq!(home_files(), before, "nothing was written into the home");

    // Claude Code goes on writing the session: the next command sees it.
    let count = |listed: &str| {
        let listed: Value = serde_json::from_str(listed).unwrap();
        listed["sessions"].as_array().unwrap().iter().find(|s| s["id"] == "03eb5929-52b3-4b13-ada3-b93ae35806b8").unwrap()["message_count"]
            .as_u64()
            .unwrap()
    };
    let line = r#"{"type":"user","uuid":"c0ffee00-0000-4000-8000-000000000001","parentUuid":null,"sessionId":"03eb5929-52b3-4b13-ada3-b93ae35806b8","timestamp":"2026-12-01T00:00:00.000Z","message":{"role":"user","content":"zanzibar quokka"}}"#;
    let mut file = fs::OpenOptions::new().append(true).open(&session).unwrap();
    std::io::Write::write_all(&mut file, format!("{line}\n").as_bytes()).unwrap();
    assert_eq!(count(&run(&["sessions", "list", "--json"])), count(&first) + 1);
    assert!(run(&["search", "zanzibar quokka", "--json"]).contains("c0ffee00-0000-4000-8000-000000000001"));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn help_is_available_on_every_command() {
    let commands: [&[&str]; 25] = [
        &["--help"],
        &["sessions", "--help"],
        &["sessions", "list", "--help"],
        &["sessions", "show", "--help"],
        &["sessions", "rm", "--help"],
        &["sessions", "tombstone", "--help"],
        &["append", "--help"],
        &["resume", "--help"],
        &["check", "--help"],
        &["repair", "--help"],
        &["compact", "--help"],
        &["gates", "--help"],
        &["demo", "--help"],
        &["import", "--help"],
        &["export", "--help"],
        &["keys", "--help"],
        &["keys", "export", "--help"],
        &["keys", "rollover", "--help"],
        &["keys", "check", "--help"],
        &["crab", "--help"],
        &["crab", "start", "--help"],
        &["gc", "--help"],
        &["sessions", "archived", "--help"],
        &["sessions", "restore", "--help"],
        &["help", "compact"],
    ];
    for args in commands {
        let out = stdout(&mneme(args));
        assert!(out.contains("Usage:"), "{args:?}: {out}");
    }
    // A command's own options first; the store's (and memory's scope), which every
    // command takes, under their own headings after them.
    let help = stdout(&mneme(&["memory", "recall", "--help"]));
    let at = |words: &str| help.find(words).unwrap_or_else(|| panic!("no `{words}` in {help}"));
    assert!(at("--limit") < at("Memory scope (every memory command):"), "{help}");
    assert!(
        at("Memory scope (every memory command):") < at("--project") && at("--project") < at("Store options (every command):"),
        "{help}"
    );
    assert!(at("Store options (every command):") < at("--root"), "{help}");
}

fn status(output: &Output) -> i32 {
    output.status.code().expect("exit code")
}

#[test]
fn tombstone_resume_check_repair_and_rm() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let mut uuids = Vec::new();
    for (role, text) in [("user", "first question"), ("assistant", "first answer"), ("user", "second question")] {
        let entry: Value = serde_json::from_str(&stdout(&mneme(&[
            "--root", root, "append", "s", "--role", role, "--text", text, "--cwd", "/w", "--json",
        ])))
        .unwrap();
        uuids.push(entry["uuid"].as_str().unwrap().to_owned());
    }
    stdout(&mneme(&["--root", root, "sessions", "tombstone", "s", &uuids[1]]));
    let context: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "resume", "--latest", "--json"]))).unwrap();
    let messages = context["messages"].as_array().unwrap();
    // The libraries' context value: the readable text, and the blocks as values.
    let texts: Vec<&str> = messages.iter().map(|m| m["content"][0]["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["first question", "second question"]);
    assert!(messages.iter().all(|m| m["text"] == m["content"][0]["text"]), "{context}");
    let shown = stdout(&mneme(&["--root", root, "resume", "s"]));
    assert!(shown.contains("second question") && !shown.contains("first answer"), "{shown}");

    // A clean session checks clean; a broken one exits 3 and says why.
    assert_eq!(status(&mneme(&["--root", root, "check", "s"])), 0);
    let file = dir.path().join("projects/-w/s.jsonl");
    let mut bytes = fs::read(&file).unwrap();
    bytes.extend_from_slice(b"garbage\n{\"type\":\"user\",\"uuid\":\"g1\"}{\"type\":\"user\",\"uuid\":\"g2\"}\n{\"type\":\"assist");
    fs::write(&file, &bytes).unwrap();
    let checked = mneme(&["--root", root, "check", "s", "--json"]);
    assert_eq!(status(&checked), 3);
    let report: Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(report["load"]["torn_tail"], true);
    assert_eq!(report["load"]["recovered_glued"], 2);
    assert_eq!(report["load"]["skipped"].as_array().unwrap().len(), 1);
    assert_eq!(report["load"]["tombstoned"], 1);
    let by_file = mneme(&["check", file.to_str().unwrap(), "--json"]);
    assert_eq!(status(&by_file), 3, "a file path works without a store");
    assert_eq!(serde_json::from_slice::<Value>(&by_file.stdout).unwrap()["load"], report["load"]);

    let repaired = stdout(&mneme(&["--root", root, "repair", "s"]));
    assert!(repaired.contains("removed the torn last line") && repaired.contains("split 2 glued"), "{repaired}");
    assert!(repaired.contains(".bak-"), "{repaired}");
    assert_eq!(status(&mneme(&["--root", root, "check", "s"])), 0);
    assert!(stdout(&mneme(&["--root", root, "repair", "s"])).contains("needs no repair"));

    // Without a terminal to ask on, rm refuses unless told --yes.
    let refused = mneme(&["--root", root, "sessions", "rm", "s"]);
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("--yes"));
    assert!(file.exists());
    let removed = stdout(&mneme(&["--root", root, "sessions", "rm", "s", "--yes"]));
    assert!(removed.contains("projects/-w/s.jsonl"), "{removed}");
    assert!(!file.exists());
    assert!(fs::read_dir(dir.path().join("projects/-w")).unwrap().next().is_none(), "backups go with the session");
}

#[test]
fn show_all_includes_sidechains_and_subagents() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/claude/05-v2.1.17-subagents-dir/-src-experiments-claude_p");
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("projects/-src-experiments-claude-p");
    fs::create_dir_all(project.join("29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents")).unwrap();
    fs::copy(corpus.join("29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"), project.join("29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"))
        .unwrap();
    fs::copy(
        corpus.join("29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl"),
        project.join("29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl"),
    )
    .unwrap();
    let home_arg = home.path().to_str().unwrap();
    let all: Value = serde_json::from_str(&stdout(&mneme(&[
        "--claude-home",
        home_arg,
        "sessions",
        "show",
        "29ccd257-68b1-427f-ae5f-6524b7cb6f20",
        "--all",
        "--json",
    ])))
    .unwrap();
    let subagents = all["subagents"].as_array().unwrap();
    assert_eq!(subagents.len(), 1);
    let entries = subagents[0]["transcript"]["entries"].as_array().unwrap();
    assert!(!entries.is_empty() && entries.iter().all(|e| e["is_sidechain"] == true));
    let text = stdout(&mneme(&["--claude-home", home_arg, "sessions", "show", "29ccd257-68b1-427f-ae5f-6524b7cb6f20", "--all"]));
    assert!(
        text.contains(
            "--- sub-agent projects/-src-experiments-claude-p/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl"
        )
    );
}

#[test]
fn compact_plans_applies_and_resumes_from_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    for i in 0..12 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let text = format!("message {i}: {}", "words ".repeat(60));
        stdout(&mneme(&["--root", root, "append", "long", "--role", role, "--text", &text, "--cwd", "/w"]));
    }
    let plan: Value =
        serde_json::from_str(&stdout(&mneme(&["--root", root, "compact", "long", "--plan", "--json", "--keep-messages", "4"]))).unwrap();
    assert_eq!(plan["trigger"], "manual");
    assert_eq!(plan["summarize"].as_array().unwrap().len(), 8);
    assert_eq!(plan["keep"].as_array().unwrap().len(), 4);
    assert!(plan["tokens_before"].as_u64().unwrap() > 1000);
    let file = dir.path().join("projects/-w/long.jsonl");
    let before = fs::read(&file).unwrap();
    assert!(String::from_utf8_lossy(&before).lines().count() == 12, "--plan writes nothing");

    // --auto does nothing while the context is far below the trigger.
    let auto = stdout(&mneme(&["--root", root, "compact", "long", "--auto"]));
    assert!(auto.contains("below the trigger") && auto.matches("nothing to do").count() == 1, "{auto}");
    assert_eq!(fs::read(&file).unwrap(), before);

    let done = stdout(&mneme(&["--root", root, "compact", "long", "--keep-messages", "4"]));
    assert!(done.contains("summarised 8 entries, kept 4"), "{done}");
    let context: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "resume", "long", "--json"]))).unwrap();
    assert_eq!(context["compacted"], true);
    let messages = context["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5);
    assert_eq!(messages[0]["is_compact_summary"], true);
    assert!(messages[0]["content"][0]["text"].as_str().unwrap().contains("message 0"), "the offline summary carries the first request");
    // The whole history is still there, and a file path in the store works too.
    let shown: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "sessions", "show", "long", "--json"]))).unwrap();
    assert_eq!(shown["entries"].as_array().unwrap().len(), 14);
    let by_path: Value =
        serde_json::from_str(&stdout(&mneme(&["compact", file.to_str().unwrap(), "--plan", "--json", "--keep-messages", "2"]))).unwrap();
    assert_eq!(by_path["previous_summary"].as_str().map(|s| s.contains("message 0")), Some(true));

    // Asked for outright, a compaction with nothing to summarise fails and says why;
    // with --json the plan is printed all the same.
    for json in [false, true] {
        let args = ["--root", root, "compact", "long", "--keep-messages", "4", "--json"];
        let again = mneme(&args[..if json { 7 } else { 6 }]);
        let said = String::from_utf8_lossy(&again.stderr);
        assert!(!again.status.success() && said.contains("nothing was compacted"), "{said}");
        assert_eq!(json, serde_json::from_slice::<Value>(&again.stdout).is_ok_and(|v| v["applied"].is_null()));
    }
    assert_eq!(fs::read_to_string(&file).unwrap().lines().count(), 14);

    // A pi session of format v1 has no ids to compact from: refused, with what to do.
    let pi = dir.path().join("projects/-w/old-pi.jsonl");
    fs::copy(corpus("pi/v1/before-compaction.jsonl"), &pi).unwrap();
    let refused = mneme(&["--root", root, "compact", "old-pi", "--keep-messages", "2"]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && said.contains("format v1") && said.contains("open it in pi once"), "{said}");
}

/// A file path never opens a store for writing that the user did not name: nothing
/// is written beside the file, not even a lock folder.
#[test]
fn a_path_in_a_store_not_named_is_only_read() {
    let dir = tempfile::tempdir().unwrap();
    let claude = dir.path().join("claude");
    let file = claude.join("projects/-w/s.jsonl");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let mut text = String::new();
    for i in 0..10 {
        let (kind, content) = if i % 2 == 0 {
            ("user", serde_json::json!(format!("q{i} {}", "w ".repeat(80))))
        } else {
            ("assistant", serde_json::json!([{"type": "text", "text": "a ".repeat(80)}]))
        };
        let parent = if i == 0 { Value::Null } else { Value::from(format!("u{}", i - 1)) };
        text += &format!(
            "{}\n",
            serde_json::json!({"parentUuid": parent, "type": kind, "uuid": format!("u{i}"), "sessionId": "s", "message": {"role": kind, "content": content}})
        );
    }
    text += "{\"type\":\"user\",\"uu"; // a torn tail a writable open would move aside
    fs::write(&file, &text).unwrap();
    let path = file.to_str().unwrap();
    let refused = mneme(&["compact", path, "--keep-messages", "2"]);
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("--root") && message.contains("--plan"), "{message}");
    let other = dir.path().join("other");
    fs::create_dir_all(&other).unwrap();
    let wrong = mneme(&["--root", other.to_str().unwrap(), "compact", path, "--keep-messages", "2"]);
    assert!(!wrong.status.success() && String::from_utf8_lossy(&wrong.stderr).contains("but --root names"));
    stdout(&mneme(&["compact", path, "--plan", "--keep-messages", "2"]));
    // By id in the read-only home: refused before the summariser runs (a paid one's
    // summary would be thrown away).
    let home = claude.to_str().unwrap();
    let by_id = mneme(&["--claude-home", home, "compact", "s", "--keep-messages", "2"]);
    assert!(!by_id.status.success());
    let said = String::from_utf8_lossy(&by_id.stderr);
    assert!(said.contains("the store is read-only") && !said.contains("summarising"), "{said}");
    stdout(&mneme(&["--claude-home", home, "compact", "s", "--plan", "--keep-messages", "2"]));
    assert_eq!(fs::read_to_string(&file).unwrap(), text, "the file is untouched");
    assert!(!claude.join(".mneme").exists(), "no lock folder beside it");
    let done = stdout(&mneme(&["--root", claude.to_str().unwrap(), "compact", path, "--keep-messages", "2"]));
    assert!(done.contains("summarised 8 entries"), "{done}");
}

#[test]
fn a_failed_summariser_changes_nothing_and_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    for i in 0..6 {
        stdout(&mneme(&[
            "--root",
            root,
            "append",
            "s",
            "--role",
            if i % 2 == 0 { "user" } else { "assistant" },
            "--text",
            "hello there",
            "--cwd",
            "/w",
        ]));
    }
    let file = dir.path().join("projects/-w/s.jsonl");
    let failed = mneme(&[
        "--root",
        root,
        "compact",
        "s",
        "--keep-messages",
        "2",
        "--summarizer",
        "ollama",
        "--summarizer-url",
        "http://127.0.0.1:9",
    ]);
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stderr.contains("compaction failed, nothing was changed") && stderr.contains("cannot reach"), "{stderr}");
    let text = fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"type\":\"compaction-failure\"") && !text.contains("compact_boundary"));

    // Anthropic's own API without a key, or a key variable named that holds none, is
    // said before anything is sent or recorded.
    let keyless = |extra: &[&str]| {
        crate::mneme_command()
            .args([&["--root", root, "compact", "s", "--keep-messages", "2", "--summarizer", "anthropic"][..], extra].concat())
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("MNEME_SUMMARIZER_URL")
            .env_remove("MNEME_TEST_NO_KEY")
            .output()
            .unwrap()
    };
    for (extra, says) in [
        (&[][..], "no API key for https://api.anthropic.com: set ANTHROPIC_API_KEY"),
        (&["--api-key-env", "MNEME_TEST_NO_KEY"][..], "--api-key-env names MNEME_TEST_NO_KEY, which holds no API key"),
    ] {
        let refused = keyless(extra);
        assert_eq!(refused.status.code(), Some(1), "{refused:?}");
        assert!(String::from_utf8_lossy(&refused.stderr).contains(says), "{refused:?}");
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), text, "nothing more was recorded");
    // Nothing due, nothing sent: a missing key is no failure then.
    let idle = crate::mneme_command()
        .args(["--root", root, "memory", "--project", "-w", "consolidate", "--if-due", "--summarizer", "anthropic"])
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("MNEME_SUMMARIZER_URL")
        .output()
        .unwrap();
    assert!(stdout(&idle).contains("not consolidating"), "{idle:?}");
    // Due, without a key: refused, and the consolidation lock given back (the second
    // run is refused for the key again, not for a lock still held).
    for _ in 0..2 {
        let keyless = crate::mneme_command()
            .args(["--root", root, "memory", "--project", "-w", "consolidate", "--summarizer", "anthropic"])
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("MNEME_SUMMARIZER_URL")
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&keyless.stderr).contains("no API key for https://api.anthropic.com"), "{keyless:?}");
    }
}

#[test]
fn gates_report_each_decision_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    stdout(&mneme(&["--root", root, "append", "g", "--role", "user", "--text", "hi", "--cwd", "/w"]));
    let gates: Value = serde_json::from_str(&stdout(&mneme(&[
        "--root",
        root,
        "gates",
        "g",
        "--json",
        "--context-window",
        "30000",
        "--idle-minutes",
        "60",
    ])))
    .unwrap();
    for gate in ["memory_flush", "extraction", "reset", "dream"] {
        assert!(gates[gate]["fire"].is_boolean() && !gates[gate]["reason"].as_str().unwrap().is_empty(), "{gate}: {gates}");
    }
    assert_eq!(gates["memory_flush"]["fire"], false);
    assert_eq!(gates["extraction"]["fire"], false);
    assert_eq!(gates["reset"]["fire"], false);
    assert!(gates["dream"]["reason"].as_str().unwrap().contains("1 sessions"));
}

/// A file whose name is not UTF-8 cannot be a session; `list`, `resume --latest` and
/// `gates` still serve the rest of the store, and name the file on stderr.
#[cfg(unix)]
#[test]
fn a_file_that_cannot_be_a_session_is_skipped_and_named() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    stdout(&mneme(&["--root", root, "append", "chat-1", "--role", "user", "--text", "hello", "--cwd", "/p"]));
    let odd = dir.path().join("projects/-p").join(std::ffi::OsStr::from_bytes(b"bad\xff.jsonl"));
    fs::write(&odd, "{\"type\":\"user\"}\n").unwrap();
    for engine in ["component", "native"] {
        let listed = mneme(&["--root", root, "--engine", engine, "sessions", "list", "--json"]);
        let sessions: Value = serde_json::from_str(&stdout(&listed)).unwrap();
        assert_eq!(sessions["sessions"].as_array().map(Vec::len), Some(1), "{engine}: {sessions}");
        assert_eq!(sessions["skipped"][0]["key"], "projects/-p/bad\u{fffd}.jsonl", "{engine}: {sessions}");
        let warned = String::from_utf8_lossy(&listed.stderr);
        assert!(warned.contains("skipped projects/-p/bad\u{fffd}.jsonl") && warned.contains("not valid UTF-8"), "{engine}: {warned}");
        let resumed = stdout(&mneme(&["--root", root, "--engine", engine, "resume", "--latest"]));
        assert!(resumed.contains("hello"), "{engine}: {resumed}");
    }
}

/// A session is named by the start of its id, as git names a commit: `fe5e1c67` for
/// `fe5e1c67-…` when no other session's id starts so; an ambiguous start is refused
/// with the ids it starts.
#[test]
fn a_session_is_named_by_the_start_of_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let ids = ["fe5e1c67-0000-4000-8000-000000000001", "fe5e1c99-0000-4000-8000-000000000002", "0a1b2c3d-0000-4000-8000-000000000003"];
    for id in ids {
        stdout(&mneme(&["--root", root, "append", id, "--cwd", "/w", "--role", "user", "--text", &format!("hello from {id}")]));
    }
    let shown = stdout(&mneme(&["--root", root, "sessions", "show", "fe5e1c67"]));
    assert!(shown.contains("hello from fe5e1c67-0000-4000-8000-000000000001"), "{shown}");
    let exported = stdout(&mneme(&["--root", root, "export", "0a1b", "--to", "markdown"]));
    assert!(exported.contains("hello from 0a1b2c3d"), "{exported}");
    assert!(stdout(&mneme(&["--root", root, "check", "0a1b"])).contains("1 entries"));
    let resumed = stdout(&mneme(&["--root", root, "resume", "0a1b"]));
    assert!(resumed.contains("context of session 0a1b2c3d-0000-4000-8000-000000000003"), "{resumed}");
    let ambiguous = mneme(&["--root", root, "sessions", "show", "fe5e1c"]);
    let told = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(!ambiguous.status.success() && told.contains("`fe5e1c` starts 2 sessions' ids"), "{told}");
    assert!(told.contains(ids[0]) && told.contains(ids[1]), "{told}");
    let unknown = mneme(&["--root", root, "sessions", "show", "abcdef12"]);
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no session `abcdef12`"), "{unknown:?}");

    // The name an agent SDK gave a session its adapter keeps under `session-id-of` of it
    // (tests/vectors/sessions.json gives this one on every host).
    stdout(&mneme(&["--root", root, "append", "user-42_7a04d423390f5ca6", "--cwd", "/w", "--role", "user", "--text", "from the SDK"]));
    assert!(stdout(&mneme(&["--root", root, "sessions", "show", "user:42"])).contains("from the SDK"));
    assert!(stdout(&mneme(&["--root", root, "resume", "user:42"])).contains("from the SDK"));
    let unmapped = mneme(&["--root", root, "sessions", "show", "user:43"]);
    let told = String::from_utf8_lossy(&unmapped.stderr);
    assert!(!unmapped.status.success() && told.contains("invalid session id `user:43`"), "{told}");
}

/// A memory is named on the command line by its file (with or without `.md`) or by its
/// name as added, in any case; a name two memories share is refused with their files.
#[test]
fn a_memory_is_named_by_its_file_or_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let base = ["--root", root, "memory", "--project", "p"];
    let run = |extra: &[&str]| mneme(&[&base[..], extra].concat());
    stdout(&run(&["add", "--name", "Db Choice", "--type", "project", "--description", "Billing on PostgreSQL", "--body", "x"]));
    stdout(&run(&["add", "--name", "editor", "--type", "user", "--description", "Helix", "--body", "y"]));
    for given in ["db_choice", "db_choice.md", "db choice", "DB CHOICE"] {
        assert!(stdout(&run(&["show", given])).contains("description: Billing on PostgreSQL"), "{given}");
    }
    stdout(&run(&["update", "db choice", "--description", "Billing on PostgreSQL 17"]));
    assert!(stdout(&run(&["show", "db_choice"])).contains("PostgreSQL 17"));
    stdout(&run(&["add", "--name", "db choice", "--type", "project", "--description", "another", "--body", "z"]));
    let shared = run(&["show", "db choice"]);
    assert!(!shared.status.success());
    assert!(String::from_utf8_lossy(&shared.stderr).contains("give one of their files (db_choice, db_choice_2)"), "{shared:?}");
    // A replacement that keeps its name is the one the name means, not the memory it replaced.
    stdout(&run(&["supersede", "editor", "--name", "editor", "--type", "user", "--description", "Helix, then Zed", "--body", "z"]));
    assert!(stdout(&run(&["show", "Editor"])).contains("Helix, then Zed"));
    let missing = run(&["forget", "nothing"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no memory `nothing` in"), "{missing:?}");
    stdout(&run(&["forget", "Editor"]));
    assert!(!stdout(&run(&["list"])).contains("editor"));
}

#[test]
fn memory_import_recall_supersede_and_instructions_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let root = root.to_str().unwrap();
    let lines = dir.path().join("memories.jsonl");
    fs::write(
        &lines,
        concat!(
            r#"{"name":"D1:1","type":"project","body":"How was the charity race?","time":"2023-05-08T13:56:00Z","session":"s1","topics":["Mel"]}"#,
            "\n",
            r#"{"name":"D1:2","type":"project","body":"It made me realize self-care matters.","time":"2023-05-08T13:57:00Z","session":"s1"}"#,
            "\n",
            r#"{"name":"D2:1","type":"user","body":"I adopted a dog named Oscar.","session":"s2"}"#,
            "\n"
        ),
    )
    .unwrap();
    let base = ["--root", root, "memory", "--project", "p"];
    let run = |extra: &[&str]| mneme(&[&base[..], extra].concat());
    let imported = run(&["import", lines.to_str().unwrap()]);
    assert!(stdout(&imported).contains("imported 3 memories"));
    // One batch: the closing line says it once, with no progress line before it.
    assert!(!String::from_utf8_lossy(&imported.stderr).contains("imported"), "{imported:?}");

    let hits: Value = serde_json::from_str(&stdout(&run(&["recall", "charity race", "--json"]))).unwrap();
    let names: Vec<&str> = hits.as_array().unwrap().iter().map(|h| h["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["D1:1", "D1:2"], "the answer comes with the turn it answers");
    assert!(hits[0]["score"].as_f64().unwrap() > hits[1]["score"].as_f64().unwrap());

    let queries = dir.path().join("queries.jsonl");
    fs::write(&queries, "{\"query\": \"dog\"}\n{\"query\": \"nothing matches zzz\"}\n").unwrap();
    let out = stdout(&run(&["recall", "--queries", queries.to_str().unwrap(), "--json"]));
    let arrays: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(arrays.len(), 2);
    assert_eq!(arrays[0][0]["name"], "D2:1");
    assert_eq!(arrays[1], Value::Array(vec![]));

    stdout(&run(&["supersede", "d2_1", "--name", "Dog", "--type", "user", "--body", "Oscar was rehomed; now a cat named Tom."]));
    let hits: Value = serde_json::from_str(&stdout(&run(&["recall", "Oscar", "--json"]))).unwrap();
    assert_eq!(hits[0]["name"], "Dog");
    assert_eq!(hits.as_array().unwrap().len(), 1, "the superseded memory is out of default recall");
    let all: Value = serde_json::from_str(&stdout(&run(&["list", "--all", "--json"]))).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 4, "nothing was deleted");
    // A listing reads no body: an empty one read as a blank memory.
    assert!(all.as_array().unwrap().iter().all(|memory| memory.get("body").is_none() && memory.get("name").is_some()), "{all}");
    let memory_md = fs::read_to_string(dir.path().join("store/projects/p/memory/MEMORY.md")).unwrap();
    assert!(memory_md.contains("(dog.md)") && !memory_md.contains("(d2_1.md)"), "{memory_md}");
    // Superseded already: refused, naming the current version.
    let again = run(&["supersede", "d2_1", "--name", "Dog", "--type", "user", "--body", "A parrot."]);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("supersede `dog`"));
    // An update that changes nothing says what it could change.
    let nothing = run(&["update", "dog"]);
    assert!(!nothing.status.success() && String::from_utf8_lossy(&nothing.stderr).contains("say what to change"));
    // A description of several lines is listed on one, as MEMORY.md has it.
    stdout(&run(&["update", "dog", "--description", "a pet\nnow a cat"]));
    let listed = stdout(&run(&["list"]));
    assert!(listed.lines().any(|line| line.starts_with("dog ") && line.contains("a pet now a cat")), "{listed}");

    let bad = run(&["forget", "nope"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no memory `nope` in p"));
    let bad_line = dir.path().join("bad.jsonl");
    fs::write(&bad_line, "{\"name\":\"x\",\"type\":\"opinion\",\"body\":\"b\"}\n").unwrap();
    let bad = run(&["import", bad_line.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("line 1: type `opinion` is not one of"));

    let project = dir.path().join("work/app");
    fs::create_dir_all(project.join(".claude")).unwrap();
    fs::write(dir.path().join("work/CLAUDE.md"), "Outer rules. @notes.md\n").unwrap();
    fs::write(dir.path().join("work/notes.md"), "Imported notes.\n").unwrap();
    fs::write(project.join("CLAUDE.md"), "Inner rules.\n```\n@not-imported.md\n```\n").unwrap();
    let home = dir.path().join("home");
    let instructions = |extra: &[&str]| {
        let (project, home, managed) = (project.to_str().unwrap(), home.to_str().unwrap(), dir.path().join("none"));
        let args = [&["memory", "instructions", "--cwd", project, "--home", home, "--managed", managed.to_str().unwrap()], extra].concat();
        mneme(&args)
    };
    // work/notes.md is outside the working directory work/app: Claude Code asks first.
    let asked: Value = serde_json::from_str(&stdout(&instructions(&["--json"]))).unwrap();
    let notes_file = asked["files"].as_array().unwrap().iter().find(|f| f["path"].as_str().unwrap().ends_with("work/notes.md")).unwrap();
    assert!(notes_file["external"] == true && notes_file["loaded"] == false, "{notes_file}");
    assert!(!asked["text"].as_str().unwrap().contains("Imported notes"), "{asked}");
    let listing = String::from_utf8_lossy(&instructions(&[]).stderr).into_owned();
    assert!(listing.lines().any(|l| l.starts_with("external ") && l.contains("approves external imports")), "{listing}");
    let resolved: Value = serde_json::from_str(&stdout(&instructions(&["--external-imports", "--json"]))).unwrap();
    let text = resolved["text"].as_str().unwrap();
    let outer = text.find("Outer rules").unwrap();
    let notes = text.find("Imported notes").unwrap();
    let inner = text.find("Inner rules").unwrap();
    assert!(outer < notes && notes < inner, "{text}");
    let loaded: Vec<&str> =
        resolved["files"].as_array().unwrap().iter().filter(|f| f["loaded"] == true).map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(loaded.len(), 3, "{loaded:?}");

    let nowhere = dir.path().join("no-such-folder");
    let refused = mneme(&["memory", "instructions", "--cwd", nowhere.to_str().unwrap(), "--home", home.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("does not exist: name a folder that does"), "{refused:?}");
    let empty = dir.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    let none = mneme(&[
        "memory",
        "instructions",
        "--cwd",
        empty.to_str().unwrap(),
        "--home",
        home.to_str().unwrap(),
        "--managed",
        dir.path().join("none").to_str().unwrap(),
    ]);
    assert!(none.status.success(), "{none:?}");
    assert!(String::from_utf8_lossy(&none.stderr).contains("no instructions"), "{none:?}");
}

#[test]
fn memory_recall_reads_a_claude_code_home_without_writing_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let memdir = dir.path().join("projects/-home-u-app/memory");
    fs::create_dir_all(&memdir).unwrap();
    fs::write(memdir.join("MEMORY.md"), "- [No mocks](feedback_testing.md) — integration tests use a real database\n").unwrap();
    fs::write(
        memdir.join("feedback_testing.md"),
        "---\nname: No mocks\ndescription: integration tests use a real database\ntype: feedback\n---\n\nA mocked test passed while prod broke.\n",
    )
    .unwrap();
    let home = dir.path().to_str().unwrap();
    let out = mneme(&["--claude-home", home, "memory", "--project", "-home-u-app", "recall", "mocked tests", "--json"]);
    let hits: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(hits[0]["file"], "feedback_testing");
    assert!(String::from_utf8_lossy(&out.stderr).contains("read-only"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!memdir.join(".mneme").exists(), "nothing was written into the Claude Code home");
}

/// The first fenced block in `language` under a README's "## Quickstart" heading, as
/// written.
pub(crate) fn quickstart(readme: &str, language: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(readme);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let section = text.split("\n## Quickstart\n").nth(1).unwrap_or_else(|| panic!("{readme} has no quickstart"));
    let section = section.split("\n## ").next().unwrap_or_default();
    let opening = format!("\n```{language}\n");
    let block = section.split_once(&opening).unwrap_or_else(|| panic!("{readme}'s quickstart has no {language} block")).1;
    block.split("\n```\n").next().unwrap_or_default().to_owned() + "\n"
}

#[test]
fn the_postgres_quickstart_runs_as_written() {
    let cluster = mneme_postgres::cluster::Cluster::start().expect("start a PostgreSQL cluster");
    let bin = Path::new(env!("CARGO_BIN_EXE_mneme")).parent().expect("the binary's folder").to_owned();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())))
        .expect("PATH");
    let dir = tempfile::tempdir().unwrap();
    let mut bash = std::process::Command::new("bash");
    // As `mneme_command` runs it: the shell's MNEME_* settings do not reach the test.
    for (name, _) in std::env::vars_os().filter(|(name, _)| name.to_string_lossy().starts_with("MNEME_")) {
        bash.env_remove(name);
    }
    let ran = bash
        .args(["-e", "-c", &quickstart("host-postgres/README.md", "sh")])
        .current_dir(dir.path())
        .env("DATABASE_URL", cluster.url())
        .env("PATH", path)
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&ran.stdout);
    assert!(ran.status.success(), "{ran:?}");
    assert!(said.contains("\"content\":\"hello\"") && said.contains("chat-1"), "{said}");
}

#[test]
fn a_postgres_store_is_shared_by_every_process_that_names_it() {
    let cluster = mneme_postgres::cluster::Cluster::start().expect("start a PostgreSQL cluster");
    let url = cluster.url();
    for (engine, text) in [("component", "from the component"), ("native", "from the native core")] {
        stdout(&mneme(&["--store", &url, "--engine", engine, "append", "shared", "--role", "user", "--text", text, "--cwd", "/w"]));
    }
    let listed: Value = serde_json::from_str(&stdout(&mneme(&["--store", &url, "sessions", "list", "--json"]))).expect("JSON");
    assert_eq!(listed["sessions"][0]["id"], "shared", "{listed}");
    assert_eq!(listed["sessions"][0]["message_count"], 2, "{listed}");
    let context: Value = serde_json::from_str(&stdout(&mneme(&["--store", &url, "context", "shared", "--json"]))).expect("JSON");
    assert!(context.to_string().contains("from the native core"), "{context}");
    stdout(&mneme(&[
        "--store",
        &url,
        "memory",
        "--project",
        "p",
        "add",
        "--name",
        "Deploys",
        "--type",
        "project",
        "--description",
        "how we deploy",
        "--body",
        "blue-green on fridays",
    ]));
    let recalled = stdout(&mneme(&["--store", &url, "memory", "--project", "p", "recall", "how do we deploy"]));
    assert!(recalled.contains("deploys") && recalled.contains("how we deploy"), "{recalled}");

    let refused = mneme(&["--store", "postgres://nobody@127.0.0.1:1/none", "sessions", "list"]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("cannot open the store in postgres://nobody@127.0.0.1:1/none"), "{said}");
    let both = mneme(&["--store", &url, "--root", "/tmp/x", "sessions", "list"]);
    assert!(!both.status.success(), "--store and --root together must be refused");
}

fn corpus(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus").join(path)
}

/// A folder of OpenAI message arrays (which name no session) imports each file as the
/// session its name gives, and an empty reply in one is skipped and said, not fatal.
#[test]
fn import_of_openai_arrays_names_each_session_by_its_file_and_skips_empty_messages() {
    for engine in ["component", "native"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        let chats = dir.path().join("chats");
        fs::create_dir(&chats).unwrap();
        fs::write(chats.join("chat-1.json"), r#"[{"role":"user","content":"first"},{"role":"assistant","content":"one"}]"#).unwrap();
        fs::write(
            chats.join("chat-2.json"),
            r#"[{"role":"user","content":"second"},{"role":"assistant","content":""},{"role":"user","content":"hello?"},{"role":"assistant","content":"two"}]"#,
        )
        .unwrap();
        let args = ["--engine", engine, "--root", root.to_str().unwrap(), "import", chats.to_str().unwrap(), "--cwd", "/work/chats"];
        let out = stdout(&mneme(&args));
        assert!(out.contains("chat-1.json: imported as chat-1 in -work-chats"), "{out}");
        assert!(out.contains("chat-2.json: imported as chat-2 in -work-chats") && out.contains("1 records not carried over"), "{out}");
        let shown = stdout(&mneme(&["--root", root.to_str().unwrap(), "sessions", "show", "chat-2"]));
        assert!(shown.contains("hello?") && shown.contains("two"), "{shown}");
        // A name that is no session id leaves the id to be given.
        fs::write(dir.path().join("bad name!.json"), r#"[{"role":"user","content":"x"}]"#).unwrap();
        let refused =
            mneme(&["--root", root.to_str().unwrap(), "import", dir.path().join("bad name!.json").to_str().unwrap(), "--cwd", "/w"]);
        assert_eq!(status(&refused), 1, "{refused:?}");
        assert!(String::from_utf8_lossy(&refused.stderr).contains("names no session id"), "{refused:?}");
        // A relative --cwd counts from the current directory, as every other --cwd does.
        let relative = crate::mneme_command()
            .current_dir(dir.path())
            .args(["--root", root.to_str().unwrap(), "import", chats.join("chat-1.json").to_str().unwrap(), "--id", "chat-3"])
            .args(["--cwd", "app/sub"])
            .output()
            .unwrap();
        let project = mneme_host::core::keys::project_dir_name(&dir.path().canonicalize().unwrap().join("app/sub").to_string_lossy());
        assert!(stdout(&relative).contains(&format!("imported as chat-3 in {project}")), "{relative:?}");
    }
}

/// A folder of Claude Code sessions imports each session, and says which sub-agent
/// transcripts (`<id>/subagents/agent-*.jsonl`, flat `agent-*.jsonl`) it did not bring.
#[test]
fn import_of_a_folder_names_the_sub_agent_transcripts_it_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let root = root.to_str().unwrap();
    let nested = corpus("claude/05-v2.1.17-subagents-dir");
    let flat = corpus("claude/07-v2.0.55-flat-agents");
    let out = mneme(&["--root", root, "import", nested.to_str().unwrap(), flat.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(stdout(&out).matches("imported as").count() == 2, "{out:?}");
    assert!(said.contains("2 sub-agent transcript(s) were not imported"), "{said}");
    assert!(said.contains("subagents/agent-a2271d1.jsonl") && said.contains("agent-c8d9b115.jsonl"), "{said}");
    let again: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "import", nested.to_str().unwrap(), "--json"]))).unwrap();
    let skipped: Vec<&str> =
        again.as_array().unwrap().iter().filter(|r| r["skipped"].is_string()).filter_map(|r| r["path"].as_str()).collect();
    assert!(skipped.len() == 1 && skipped[0].ends_with("subagents/agent-a2271d1.jsonl"), "{again}");
    // Claude Code's `agent-*.meta.json` beside each sub-agent transcript is no transcript.
    let attachments = corpus("claude/03-v2.1.114-attachments");
    let out = mneme(&["--root", root, "import", attachments.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("6 sub-agent transcript(s) were not imported") && !said.contains(".meta.json"), "{said}");
}

#[test]
fn import_reads_a_folder_of_transcripts_once_and_export_gives_them_back() {
    for engine in ["component", "native"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        let root = root.to_str().unwrap();
        let codex = corpus("codex");
        let pi = corpus("pi/v1/before-compaction.jsonl");
        let before = fs::read(&pi).unwrap();
        let out = stdout(&mneme(&["--engine", engine, "--root", root, "import", codex.to_str().unwrap(), pi.to_str().unwrap()]));
        assert!(out.contains("imported as 01996135-afde-7911-97f0-d863511eca56") && out.contains("migrated from pi v1"), "{out}");
        // The count is the context's (split replies merged, the main chain), not the
        // listing's count of message entries: the line says which.
        assert!(out.contains(" messages in its context"), "{out}");
        assert_eq!(fs::read(&pi).unwrap(), before, "the original is only read");
        let again = stdout(&mneme(&["--engine", engine, "--root", root, "import", codex.to_str().unwrap(), "--json"]));
        let report: Value = serde_json::from_str(&again).unwrap();
        assert!(report.as_array().unwrap().iter().all(|r| r["error"].as_str().is_some_and(|e| e.contains("exists already"))), "{again}");
        let sessions: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "sessions", "list", "--json"]))).unwrap();
        assert_eq!(sessions["sessions"].as_array().unwrap().len(), 3, "{sessions}");
        // An id given with --id that a session has already is a failure: what holds it
        // may be another conversation, and nothing was imported.
        let taken = "01996135-afde-7911-97f0-d863511eca56";
        let other = dir.path().join("other.json");
        fs::write(&other, r#"[{"role":"user","content":"a different conversation"}]"#).unwrap();
        for json in [false, true] {
            let args = [
                "--engine",
                engine,
                "--root",
                root,
                "import",
                other.to_str().unwrap(),
                "--from",
                "openai",
                "--id",
                taken,
                "--cwd",
                "/w",
                "--json",
            ];
            let refused = mneme(&args[..if json { 13 } else { 12 }]);
            assert_eq!(status(&refused), 1, "{refused:?}");
            let said = String::from_utf8_lossy(if json { &refused.stdout } else { &refused.stderr }).into_owned();
            assert!(said.contains("exists already"), "{said}");
        }

        let gemini = corpus("gemini/vibecodingtracker-gemini-legacy.json");
        let refused = mneme(&["--engine", engine, "--root", root, "import", gemini.to_str().unwrap()]);
        assert_eq!(status(&refused), 1);
        assert!(String::from_utf8_lossy(&refused.stderr).contains("working directory"), "{refused:?}");

        let empty = dir.path().join("empty");
        fs::create_dir_all(empty.join("subagents")).unwrap();
        fs::write(empty.join("notes.txt"), "not a transcript").unwrap();
        let nothing = mneme(&["--engine", engine, "--root", root, "import", empty.to_str().unwrap()]);
        assert_eq!(status(&nothing), 1);
        assert!(String::from_utf8_lossy(&nothing.stderr).contains("holds no transcript to import"), "{nothing:?}");

        let exported = dir.path().join("codex.pi.jsonl");
        let id = "01996135-afde-7911-97f0-d863511eca56";
        stdout(&mneme(&["--engine", engine, "--root", root, "export", id, "--to", "pi", "--out", exported.to_str().unwrap()]));
        let header: Value = serde_json::from_str(fs::read_to_string(&exported).unwrap().lines().next().unwrap()).unwrap();
        assert_eq!((header["type"].as_str(), header["version"].as_u64(), header["id"].as_str()), (Some("session"), Some(3), Some(id)));
        let twice = mneme(&["--root", root, "export", id, "--to", "pi", "--out", exported.to_str().unwrap()]);
        assert_eq!(status(&twice), 1, "an existing file is not overwritten");
        let markdown = stdout(&mneme(&["--engine", engine, "--root", root, "export", id, "--to", "markdown"]));
        assert!(markdown.starts_with(&format!("# Session {id}")), "{markdown}");
        // `-` is standard output, as for --turn and import, not a file of that name.
        let dashed = crate::mneme_command()
            .args(["--engine", engine, "--root", root, "export", id, "--to", "markdown", "--out", "-"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(stdout(&dashed), markdown);
        assert!(!dir.path().join("-").exists(), "a file named - was written");
    }
}

#[test]
fn an_openclaw_sessions_folder_moves_in_with_its_keys_and_back_out_as_one() {
    for engine in ["component", "native"] {
        let dir = tempfile::tempdir().unwrap();
        let (openclaw, root, out) = (dir.path().join("openclaw"), dir.path().join("store"), dir.path().join("out"));
        fs::create_dir_all(&openclaw).unwrap();
        let id = "019e963d-6bd6-7ade-8a49-256ac3391bdd";
        fs::copy(corpus("pi/v3/agent-history-session-01.jsonl"), openclaw.join(format!("{id}.jsonl"))).unwrap();
        let index = serde_json::json!({
            "agent:main:main": { "sessionId": id, "updatedAt": 1_771_200_500_000_i64, "thinkingLevel": "high", "contextTokens": 200_000 },
            "agent:main:telegram:group:-1001": { "sessionId": "aaaa1111-0000-4000-8000-000000000001", "updatedAt": 1_771_100_000_000_i64, "chatType": "group" },
            "agent:main:broken": { "updatedAt": 3 }
        });
        fs::write(openclaw.join("sessions.json"), serde_json::to_vec(&index).unwrap()).unwrap();
        let (root, openclaw_dir) = (root.to_str().unwrap(), openclaw.to_str().unwrap());

        let imported = mneme(&["--engine", engine, "--root", root, "import", openclaw_dir]);
        let said = stdout(&imported);
        assert!(said.contains(&format!("imported as {id}")) && said.contains("2 OpenClaw session keys imported"), "{said}");
        assert!(String::from_utf8_lossy(&imported.stderr).contains("key agent:main:broken not imported: the entry has no sessionId"));
        let show: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "keys", "show", "agent:main:main", "--json"]))).unwrap();
        assert_eq!(show["entry"]["session_id"], id);
        assert!(show["counters"]["input_tokens"].as_u64().unwrap() > 0, "the transcript's counters: {show}");

        stdout(&mneme(&["--engine", engine, "--root", root, "keys", "export", "--out", out.to_str().unwrap()]));
        let exported: Value = serde_json::from_slice(&fs::read(out.join("sessions.json")).unwrap()).unwrap();
        assert_eq!(exported["agent:main:main"]["thinkingLevel"], "high");
        assert_eq!(exported["agent:main:main"]["contextTokens"], 200_000);
        assert_eq!(exported["agent:main:main"]["inputTokens"], show["counters"]["input_tokens"]);
        assert_eq!(exported["agent:main:telegram:group:-1001"]["chatType"], "group");
        let transcript = fs::read_to_string(out.join(format!("{id}.jsonl"))).unwrap();
        assert!(transcript.starts_with(r#"{"type":"session","version":3"#), "a pi v3 transcript OpenClaw reads");
        let twice = mneme(&["--root", root, "keys", "export", "--out", out.to_str().unwrap()]);
        assert_eq!(status(&twice), 1, "nothing is overwritten");
        let stdout_export: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "keys", "export"]))).unwrap();
        assert_eq!(stdout_export, exported);
    }
}

#[test]
fn gc_archives_what_expired_and_restore_brings_it_back_byte_for_byte() {
    for engine in ["component", "native"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        for id in ["a", "b"] {
            stdout(&mneme(&["--root", root, "append", id, "--role", "user", "--text", "hello", "--cwd", "/w"]));
        }
        let transcript = dir.path().join("projects/-w/a.jsonl");
        let before = fs::read(&transcript).unwrap();
        fs::write(dir.path().join("projects/-w/a.jsonl.torn-9"), b"{\"ty").unwrap();

        let dry = stdout(&mneme(&["--engine", engine, "--root", root, "gc", "--dry-run", "--ttl-days", "0"]));
        assert!(dry.contains("would archive a (-w)") && dry.contains("nothing was changed"), "{dry}");
        assert_eq!(fs::read(&transcript).unwrap(), before, "a dry run moves nothing");

        let report: Value =
            serde_json::from_str(&stdout(&mneme(&["--engine", engine, "--root", root, "gc", "--ttl-days", "0", "--json"]))).unwrap();
        assert_eq!(report["archived"].as_array().unwrap().len(), 2, "{report}");
        assert!(report["removed"].as_array().unwrap().is_empty(), "nothing deleted unless asked: {report}");
        assert!(!transcript.exists());
        let listed: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "sessions", "list", "--json"]))).unwrap();
        assert!(listed["sessions"].as_array().unwrap().is_empty(), "{listed}");
        let archived: Value =
            serde_json::from_str(&stdout(&mneme(&["--engine", engine, "--root", root, "sessions", "archived", "--json"]))).unwrap();
        let a = archived.as_array().unwrap().iter().find(|s| s["id"] == "a").unwrap();
        assert_eq!((a["project"].as_str(), a["files"].as_u64()), (Some("-w"), Some(2)), "{archived}");

        let said = stdout(&mneme(&["--engine", engine, "--root", root, "sessions", "restore", "a"]));
        assert!(said.contains("restored session a into -w: 2 files"), "{said}");
        assert_eq!(fs::read(&transcript).unwrap(), before);
        assert_eq!(fs::read(dir.path().join("projects/-w/a.jsonl.torn-9")).unwrap(), b"{\"ty");
        let again = mneme(&["--root", root, "sessions", "restore", "a"]);
        assert_eq!(status(&again), 1);
        assert!(String::from_utf8_lossy(&again.stderr).contains("session `a` is not archived: it is in the store, live"), "{again:?}");
        let never = mneme(&["--root", root, "sessions", "restore", "never"]);
        assert!(String::from_utf8_lossy(&never.stderr).contains("no archived session `never`"), "{never:?}");

        // Under a budget of nothing, an archive just made stays (it has not been kept its
        // 30 days); with no time to keep it, it goes (the live session's torn tail first).
        let kept = stdout(&mneme(&["--engine", engine, "--root", root, "gc", "--max-disk", "0", "--dry-run"]));
        assert!(!kept.contains("-b (") && kept.contains("would delete projects/-w/a.jsonl.torn-9"), "{kept}");
        let budget = stdout(&mneme(&["--engine", engine, "--root", root, "gc", "--max-disk", "0", "--keep-archived-days", "0"]));
        assert!(
            budget.contains("deleted projects/-w/a.jsonl.torn-9") && budget.contains("-b (") && budget.contains("over the disk budget"),
            "{budget}"
        );
        assert_eq!(fs::read(&transcript).unwrap(), before, "a live session is never collected");
        let empty: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "sessions", "archived", "--json"]))).unwrap();
        assert!(empty.as_array().unwrap().is_empty());
    }
}

#[test]
fn a_long_session_rolls_over_into_a_new_one_seeded_with_its_summary() {
    for engine in ["component", "native"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        let resolved: Value = serde_json::from_str(&stdout(&mneme(&[
            "--engine", engine, "--root", root, "keys", "resolve", "--chat", "cron", "--id", "nightly", "--json",
        ])))
        .unwrap();
        let old = resolved["session_id"].as_str().unwrap().to_owned();
        for text in ["Draft the launch post for Friday.", "Here is the launch post draft, in three parts."] {
            stdout(&mneme(&["--root", root, "append", &old, "--role", "user", "--text", text]));
        }

        let early = stdout(&mneme(&["--engine", engine, "--root", root, "keys", "rollover", "cron:nightly"]));
        assert!(early.contains("not rolled over") && early.contains("of 50000 tokens"), "{early}");
        let rolled: Value = serde_json::from_str(&stdout(&mneme(&[
            "--engine",
            engine,
            "--root",
            root,
            "keys",
            "rollover",
            "cron:nightly",
            "--at",
            "10",
            "--json",
        ])))
        .unwrap();
        let new = rolled["rolled_over"]["entry"]["session_id"].as_str().unwrap().to_owned();
        assert_ne!(new, old);
        assert_eq!(rolled["rolled_over"]["previous_session_id"], old.as_str());
        assert_eq!(rolled["rolled_over"]["format"], "claude");
        let show: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "keys", "show", "cron:nightly", "--json"]))).unwrap();
        assert_eq!(show["entry"]["previous_session_ids"][0], old.as_str());
        let context = stdout(&mneme(&["--root", root, "context", &new, "--format", "anthropic"]));
        assert!(context.contains("launch post"), "the summary carries the old session: {context}");
        let bare = mneme(&["--engine", engine, "--root", root, "keys", "rollover", "cron:nightly", "--force"]);
        assert_eq!(status(&bare), 1);
        assert!(String::from_utf8_lossy(&bare.stderr).contains("no message since its last compaction"), "{bare:?}");
        stdout(&mneme(&["--root", root, "append", &new, "--role", "user", "--text", "Now the follow-up email."]));
        let again = stdout(&mneme(&["--engine", engine, "--root", root, "keys", "rollover", "cron:nightly", "--force"]));
        assert!(again.contains("rolled over") && again.contains(&format!("a summary of {new}")), "{again}");
        let rebuilt: Value =
            serde_json::from_str(&stdout(&mneme(&["--engine", engine, "--root", root, "keys", "check", "--rebuild", "--json"]))).unwrap();
        assert_eq!(
            (rebuilt["session_count"].as_u64(), rebuilt["key_count"].as_u64(), rebuilt["dropped"].as_u64()),
            (Some(3), Some(1), Some(0)),
            "{rebuilt}"
        );
        let said = stdout(&mneme(&["--engine", engine, "--root", root, "keys", "check", "--rebuild"]));
        assert!(said.contains("rebuilt from 3 transcripts") && said.contains("1 keys kept"), "{said}");
    }
}

#[test]
fn pi_openclaw_and_crab_folders_are_read_as_they_are_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let pi_file = "2026-06-05T05-24-28-246Z_019e963d-6bd6-7ade-8a49-256ac3391bdd";
    let pi = dir.path().join("pi");
    let pi_folder = pi.join("sessions/--tmp-agent-history-real-agent-pi-workspace--");
    fs::create_dir_all(&pi_folder).unwrap();
    fs::copy(corpus("pi/v3/agent-history-session-01.jsonl"), pi_folder.join(format!("{pi_file}.jsonl"))).unwrap();
    let openclaw = dir.path().join("openclaw");
    let openclaw_id = "019e963d-6bd6-7ade-8a49-256ac3391bdd";
    fs::create_dir_all(openclaw.join("agents/main/sessions")).unwrap();
    fs::copy(corpus("pi/v3/agent-history-session-01.jsonl"), openclaw.join(format!("agents/main/sessions/{openclaw_id}.jsonl"))).unwrap();
    fs::write(openclaw.join("agents/main/sessions/sessions.json"), "{}").unwrap();
    let crab = dir.path().join("crab");
    fs::create_dir_all(crab.join("sessions")).unwrap();
    let crab_lines = concat!(
        r#"{"agent":"crab","created_by":"user","created_at":"2026-02-25T10:00:00Z","title":"","uptime_secs":0}"#,
        "\n",
        r#"{"role":"user","content":"hello crab"}"#,
        "\n",
        r#"{"role":"assistant","content":"hi there"}"#,
        "\n"
    );
    fs::write(crab.join("sessions/crab_user_1.jsonl"), crab_lines).unwrap();
    let before: Vec<Vec<u8>> = transcripts(dir.path()).iter().map(|p| fs::read(p).unwrap()).collect();

    for engine in ["component", "native"] {
        for (flag, home, id, project, text) in [
            ("--pi-home", &pi, pi_file, "--tmp-agent-history-real-agent-pi-workspace--", "REDACTED_PROMPT"),
            ("--openclaw-home", &openclaw, openclaw_id, "main", "REDACTED_PROMPT"),
            ("--crab-home", &crab, "crab_user_1", "crab", "hello crab"),
        ] {
            let home = home.to_str().unwrap();
            let listed: Value =
                serde_json::from_str(&stdout(&mneme(&["--engine", engine, flag, home, "sessions", "list", "--json"]))).unwrap();
            let sessions = listed["sessions"].as_array().unwrap();
            assert_eq!(sessions.len(), 1, "{flag}: {listed}");
            assert_eq!((sessions[0]["id"].as_str(), sessions[0]["project"].as_str()), (Some(id), Some(project)), "{flag}");
            let shown = stdout(&mneme(&["--engine", engine, flag, home, "sessions", "show", id]));
            assert!(shown.contains(text), "{flag}: {shown}");
            let refused = mneme(&["--engine", engine, flag, home, "append", id, "--role", "user", "--text", "x"]);
            assert_eq!(status(&refused), 1, "{flag}");
            assert!(String::from_utf8_lossy(&refused.stderr).contains("read-only"), "{flag}: {refused:?}");
        }
    }
    let after: Vec<Vec<u8>> = transcripts(dir.path()).iter().map(|p| fs::read(p).unwrap()).collect();
    assert_eq!(before, after, "no file was written");
    let wrong = mneme(&["--pi-home", crab.join("sessions").to_str().unwrap(), "sessions", "list"]);
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("has no sessions/ folder; is it a pi agent folder such as ~/.pi/agent?"),
        "{wrong:?}"
    );
}

#[test]
fn crab_sessions_are_started_found_titled_and_timed_from_the_command_line() {
    for engine in ["component", "native"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        let crab = |args: &[&str]| -> Value {
            let mut all = vec!["--engine", engine, "--root", root, "crab"];
            all.extend_from_slice(args);
            all.push("--json");
            serde_json::from_str(&stdout(&mneme(&all))).unwrap()
        };
        assert_eq!(crab(&["latest", "crab", "Tg 12345"]), Value::Null);
        let first = crab(&["start", "crab", "Tg 12345"]);
        assert_eq!(first["id"], "crab_tg-12345_1");
        stdout(&mneme(&["--root", root, "append", "crab_tg-12345_1", "--role", "user", "--text", "hello crab"]));
        assert_eq!(crab(&["start", "crab", "Tg 12345"])["seq"], 2);
        assert_eq!(crab(&["latest", "crab", "tg 12345"])["id"], "crab_tg-12345_2");
        let titled = crab(&["title", "crab_tg-12345_1", "Plan the launch"]);
        assert_eq!(titled["id"], "crab_tg-12345_1_plan-the-launch");
        assert_eq!(crab(&["uptime", "crab_tg-12345_1_plan-the-launch", "42"])["uptime_secs"], 42);
        let file = dir.path().join("projects/crab/crab_tg-12345_1_plan-the-launch.jsonl");
        let lines: Vec<Value> = fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 4, "meta, the message, then two appended meta lines");
        assert_eq!((lines[0]["agent"].as_str(), lines[0]["uptime_secs"].as_u64()), (Some("crab"), Some(0)), "the first line is as written");
        assert_eq!(lines[1]["content"], "hello crab");
        let shown = stdout(&mneme(&["--engine", engine, "--root", root, "crab", "show", "crab_tg-12345_1_plan-the-launch"]));
        assert!(shown.contains("title       Plan the launch") && shown.contains("uptime      42 s"), "{shown}");
        let refused = mneme(&["--engine", engine, "--root", root, "crab", "start", "my_agent", "user"]);
        assert_eq!(status(&refused), 1);
        assert!(String::from_utf8_lossy(&refused.stderr).contains("must be ASCII letters, digits and '-'"), "{refused:?}");
    }
}

#[test]
fn memories_marked_used_and_recall_by_meaning_with_a_word_vector_table() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let root = root.to_str().unwrap();
    let table = dir.path().join("vectors.txt");
    fs::write(
        &table,
        "11 6\ncar 1 0 0 0 0 0\nautomobile 0.95 0.05 0 0 0 0\nvehicle 0.9 0.1 0 0 0 0\ndog 0 0 1 0 0 0\npuppy 0 0 0.9 0.1 0 0\n\
         pizza 0 0 0 0 1 0\nlasagna 0 0 0 0 0.9 0.1\nnorth -1 0 0 0 0 0\nsouth 0 0 -1 0 0 0\nwest 0 0 0 0 -1 0\nstone 0 -1 0 -1 0 -1\n",
    )
    .unwrap();
    for engine in ["component", "native"] {
        let project = format!("p-{engine}");
        let base = ["--root", root, "--engine", engine, "memory", "--project", project.as_str()];
        let run = |extra: &[&str]| mneme(&[&base[..], extra].concat());
        stdout(&run(&["add", "--name", "Ride", "--type", "user", "--description", "What the user drives", "--body", "A new car."]));
        stdout(&run(&["add", "--name", "Pet", "--type", "user", "--description", "The pet", "--body", "A puppy called Oscar."]));

        let words: Value = serde_json::from_str(&stdout(&run(&["recall", "automobile", "--json"]))).unwrap();
        assert_eq!(words, Value::Array(vec![]), "{engine}: no word in common");
        let hybrid: Value =
            serde_json::from_str(&stdout(&run(&["recall", "automobile", "--json", "--embeddings", table.to_str().unwrap()]))).unwrap();
        assert_eq!(hybrid[0]["file"], "ride", "{engine}: {hybrid}");
        let missing = run(&["recall", "automobile", "--embeddings", "/nonexistent/vectors.txt"]);
        assert!(!missing.status.success());
        assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read the embedding table /nonexistent/vectors.txt"));
        let bad = dir.path().join("bad.json");
        fs::write(&bad, "{\"words\": []}").unwrap();
        let refused = run(&["recall", "automobile", "--embeddings", bad.to_str().unwrap()]);
        assert!(String::from_utf8_lossy(&refused.stderr).contains("one word per line followed by its values"), "{engine}");

        stdout(&run(&["add", "--name", "Dinner", "--type", "user", "--description", "Food", "--body", "Lasagna."]));
        let used: Value = serde_json::from_str(&stdout(&run(&["used", "pet", "--json"]))).unwrap();
        assert!(used[0]["used_ms"].as_i64().is_some(), "{engine}: {used}");
        let file = fs::read_to_string(dir.path().join(format!("store/projects/{project}/memory/pet.md"))).unwrap();
        assert!(file.contains("\nused: "), "{engine}: {file}");
        let loaded = stdout(&run(&["load", "--lines", "2"]));
        assert!(
            loaded.contains("(pet.md)") && !loaded.contains("(ride.md)") && !loaded.contains("(dinner.md)"),
            "{engine}: the used memory is kept, the newer unused one left out: {loaded}"
        );
        let unknown = run(&["used", "nope"]);
        assert!(!unknown.status.success());
    }
}

/// `mneme` with `input` on its standard input.
fn mneme_with_input(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = crate::mneme_command()
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run mneme");
    child.stdin.take().expect("a pipe").write_all(input.as_bytes()).expect("write stdin");
    child.wait_with_output().expect("mneme ends")
}

#[test]
fn an_agent_loop_from_the_command_line_turns_in_every_form_context_for_both_providers_rewind_branches_and_usage() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let run = |args: &[&str]| -> Value {
        let mut all = vec!["--root", root];
        all.extend_from_slice(args);
        all.push("--json");
        serde_json::from_str(&stdout(&mneme(&all))).expect("JSON output")
    };
    let prompt = run(&["append", "s1", "--message", r#"{"role":"user","content":"what is here?"}"#, "--cwd", "/w"]);
    let first = prompt[0]["uuid"].as_str().unwrap().to_owned();

    // A reply and its tool's result from a JSONL file, one message per line.
    let turn = dir.path().join("turn.jsonl");
    let reply = r#"{"role":"assistant","id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":100,"output_tokens":20}}"#;
    let result = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"notes.txt"}]}"#;
    fs::write(&turn, format!("{reply}\n\n{result}\n")).unwrap();
    let written = run(&["append", "s1", "--turn", turn.to_str().unwrap()]);
    assert_eq!(written.as_array().unwrap().len(), 2, "{written}");

    // An OpenAI reply on standard input.
    let output = mneme_with_input(
        &["--root", root, "append", "s1", "--turn", "-", "--provider", "openai", "--json"],
        r#"[{"role":"assistant","content":"There is notes.txt."}]"#,
    );
    let answer: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(answer[0]["parent_uuid"], written[1]["uuid"], "{answer}");

    let anthropic: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "context", "s1"]))).unwrap();
    let roles: Vec<&str> = anthropic["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert_eq!(anthropic["messages"][2]["content"][0]["tool_use_id"], "toolu_1");
    let openai: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "context", "s1", "--format", "openai"]))).unwrap();
    let messages = openai["messages"].as_array().unwrap();
    assert_eq!(messages[1]["tool_calls"][0]["id"], "toolu_1", "{openai}");
    assert_eq!(messages[1]["tool_calls"][0]["function"]["arguments"], r#"{"command":"ls"}"#);
    assert_eq!((messages[2]["role"].as_str(), messages[2]["tool_call_id"].as_str()), (Some("tool"), Some("toolu_1")));
    assert_eq!(messages[3]["content"], "There is notes.txt.");

    // Back to the prompt: the old branch stays, and the new one is current.
    let rewound = run(&["rewind", "s1", &first, "--role", "assistant", "--text", "Let me look again."]);
    assert_eq!(rewound[0]["parent_uuid"], first.as_str());
    let branches = run(&["branches", "s1"]);
    let branches = branches.as_array().unwrap();
    assert_eq!(branches.len(), 2, "{branches:?}");
    assert_eq!((branches[0]["current"].as_bool(), branches[0]["text"].as_str()), (Some(true), Some("Let me look again.")));
    assert_eq!(branches[1]["text"], "There is notes.txt.");

    let prices = ["--input-price", "3", "--output-price", "15", "--cache-read-price", "0.3", "--cache-write-price", "3.75"];
    let usage = run(&[&["usage", "s1"], &prices[..]].concat());
    assert_eq!((usage["total"]["input"].as_u64(), usage["total"]["output"].as_u64()), (Some(100), Some(20)), "{usage}");
    assert!((usage["cost"].as_f64().unwrap() - (100.0 * 3.0 + 20.0 * 15.0) / 1e6).abs() < 1e-12, "{usage}");
    // Prices left out would count tokens as free; a price of no number, no cost at all.
    let refused = |args: &[&str], words: &str| {
        let output = mneme(&[&["--root", root], args].concat());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success() && stderr.contains(words), "{args:?}: {stderr}");
    };
    // A price left out would count its tokens as free: the command line does not parse.
    let partial = mneme(&["--root", root, "usage", "s1", "--input-price", "3", "--output-price", "15"]);
    let told = String::from_utf8_lossy(&partial.stderr);
    assert!(partial.status.code() == Some(2) && told.contains("--cache-read-price") && told.contains("--cache-write-price"), "{told}");
    // Not a number, below zero (a negative number is read as one, not as a flag), or so
    // large its cost would be infinite.
    for price in ["nan", "-1", "1e308"] {
        refused(&[&["usage", "s1"], &prices[..6], &["--cache-write-price", price]].concat(), "a number from 0 to 1000000000000");
    }

    // One way to say what to append, not two.
    for both in [
        &["--role", "user", "--text", "hi", "--message", r#"{"role":"user","content":"hi"}"#][..],
        &["--role", "assistant", "--message", r#"{"role":"user","content":"hi"}"#][..],
        &["--message", r#"{"role":"user","content":"hi"}"#, "--turn", "-"][..],
    ] {
        let output = mneme(&[&["--root", root, "append", "s1"][..], both].concat());
        assert!(!output.status.success(), "{both:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("cannot be used with") || stderr.contains("required"), "{both:?}: {stderr}");
    }

    // Texts that start with a dash (a Markdown bullet of recalled memory) are texts.
    let dashed = run(&["append", "s1", "--role", "user", "--text", "-5 degrees outside"]);
    assert_eq!(dashed["text"], "-5 degrees outside");
    let injected = stdout(&mneme(&["--root", root, "context", "s1", "--inject", "- the user likes tabs", "--system", "- be brief"]));
    assert!(injected.contains("- the user likes tabs") && injected.contains("- be brief"), "{injected}");

    // A pretty-printed message is one message; a JSONL file's bad line is named by its number.
    let pretty = dir.path().join("pretty.json");
    fs::write(&pretty, "{\n  \"role\": \"assistant\",\n  \"content\": \"pretty\"\n}\n").unwrap();
    assert_eq!(run(&["append", "s1", "--turn", pretty.to_str().unwrap()])[0]["text"], "pretty");
    let broken = dir.path().join("broken.jsonl");
    fs::write(&broken, format!("{result}\n\n{{\"role\": \n")).unwrap();
    refused(&["append", "s1", "--turn", broken.to_str().unwrap()], "line 3 of");

    // A relative --cwd is recorded absolute, as Claude Code records it.
    stdout(&mneme(&["--root", root, "append", "s2", "--role", "user", "--text", "hi", "--cwd", "some/where"]));
    let file = transcripts(&dir.path().join("projects")).into_iter().find(|p| p.ends_with("s2.jsonl")).expect("s2's transcript");
    let line: Value = serde_json::from_str(fs::read_to_string(&file).unwrap().lines().next().unwrap()).unwrap();
    let cwd = line["cwd"].as_str().unwrap();
    assert!(Path::new(cwd).is_absolute() && cwd.ends_with("some/where"), "{line}");

    // The demo never writes into a store named with --root.
    refused(&["demo"], "--dir");
}

/// A store named by a relative path of one name that does not exist yet is created in
/// the current folder by the first write (its folder's parent is the current folder,
/// which the durable creation syncs).
#[test]
fn a_relative_root_is_created_by_the_first_append() {
    let dir = tempfile::tempdir().unwrap();
    let output = crate::mneme_command()
        .current_dir(dir.path())
        .args(["--root", "store", "append", "chat", "--role", "user", "--text", "hi", "--cwd", "/work"])
        .output()
        .expect("run mneme");
    stdout(&output);
    assert!(dir.path().join("store/projects/-work/chat.jsonl").is_file());
}

/// A read of a root that does not exist (mistyped) finds nothing, says why, and leaves
/// no folder behind (a search wrote its index there).
#[test]
fn a_read_of_a_root_that_does_not_exist_says_so_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("typo");
    let root = root.to_str().unwrap();
    for args in [vec!["--root", root, "sessions", "list"], vec!["--root", root, "search", "zebras"]] {
        let output = mneme(&args);
        assert!(output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&format!("the store's root {root} does not exist")), "{args:?}: {stderr}");
    }
    assert!(!Path::new(root).exists(), "a read made the root");
}

/// A root that is a file, and a target that reads as a path but names no file, are
/// refused for what they are (they were taken for an existing session, an empty store,
/// and a session id).
#[test]
fn a_root_that_is_a_file_and_a_missing_transcript_path_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notadir");
    fs::write(&file, "hello\n").unwrap();
    let root = file.to_str().unwrap();
    for args in
        [vec!["--root", root, "append", "s", "--role", "user", "--text", "hi", "--cwd", "/w"], vec!["--root", root, "sessions", "list"]]
    {
        let output = mneme(&args);
        assert!(!output.status.success(), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("is not a folder"), "{}", String::from_utf8_lossy(&output.stderr));
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "hello\n");
    let store = dir.path().join("store");
    let store = store.to_str().unwrap();
    let missing = dir.path().join("missing.jsonl");
    for (target, said) in [(missing.to_str().unwrap(), "no file"), (dir.path().to_str().unwrap(), "is a folder")] {
        for command in [vec!["--root", store, "check", target], vec!["--root", store, "compact", target, "--plan"]] {
            let output = mneme(&command);
            assert!(!output.status.success(), "{command:?}");
            assert!(String::from_utf8_lossy(&output.stderr).contains(said), "{command:?}: {}", String::from_utf8_lossy(&output.stderr));
        }
    }
    // A bare word is a session id, whatever the current directory holds under that name.
    stdout(&mneme(&["--root", store, "append", "notes", "--role", "user", "--text", "hi", "--cwd", "/w"]));
    for (name, make) in [("a folder", true), ("a file", false)] {
        let here = tempfile::tempdir().unwrap();
        let clash = here.path().join("notes");
        if make {
            fs::create_dir(&clash).unwrap()
        } else {
            fs::write(&clash, "not a transcript\n").unwrap()
        }
        for command in [vec!["--root", store, "check", "notes"], vec!["--root", store, "compact", "notes", "--plan"]] {
            let output = crate::mneme_command().args(&command).current_dir(here.path()).output().unwrap();
            assert!(output.status.success(), "{name} named notes here: {command:?}: {}", String::from_utf8_lossy(&output.stderr));
        }
    }
}

/// The compiled-component cache keeps the newest three: each build and upgrade of
/// `mneme` left one behind (~8 MB), and 36 had piled up here.
#[test]
fn the_compile_cache_keeps_the_newest_three_components() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    fs::create_dir(&cache).unwrap();
    for n in 0..5u64 {
        let file = fs::File::create(cache.join(format!("component-{n:016x}.cwasm"))).unwrap();
        file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + n)).unwrap();
    }
    fs::write(cache.join("notes.txt"), "mine").unwrap();
    let root = dir.path().join("store");
    let listed = crate::mneme_command()
        .args(["--root", root.to_str().unwrap(), "sessions", "list"])
        .env("MNEME_CACHE_DIR", &cache)
        .output()
        .unwrap();
    stdout(&listed);
    let mut left: Vec<String> = fs::read_dir(&cache).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    left.sort();
    assert_eq!(left.len(), 4, "{left:?}");
    assert!(
        left.contains(&"notes.txt".into())
            && left.contains(&format!("component-{:016x}.cwasm", 4))
            && left.contains(&format!("component-{:016x}.cwasm", 3)),
        "{left:?}"
    );
}

/// `sessions list --since`: an age ahead of now is refused, and a filter that leaves
/// nothing says so instead of "no sessions".
#[test]
fn sessions_list_since_takes_ages_before_now_and_says_when_it_filtered_all_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    stdout(&mneme(&["--root", root, "append", "s", "--role", "user", "--text", "hi", "--cwd", "/w"]));
    let ahead = mneme(&["--root", root, "sessions", "list", "--since=-5d"]);
    assert_eq!(status(&ahead), 2, "{ahead:?}");
    assert!(String::from_utf8_lossy(&ahead.stderr).contains("is not a date"), "{ahead:?}");
    assert!(stdout(&mneme(&["--root", root, "sessions", "list", "--since", "7d"])).contains("\ns "));
    let none = stdout(&mneme(&["--root", root, "sessions", "list", "--since", "9999-01-01"]));
    assert!(none.contains("none of the store's sessions (1) matches"), "{none}");
    assert_eq!(
        stdout(&mneme(&["--root", root, "sessions", "list", "--project", "nosuch", "--json"])).trim(),
        "{\n  \"sessions\": [],\n  \"skipped\": []\n}"
    );
}

/// Small words: a result count of 0 is refused (it showed nothing and said nothing
/// matched), one reply is "1 reply", and a crab line (which has no id) is named by its
/// line.
#[test]
fn counts_of_zero_one_reply_and_a_crab_line_are_said_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    for args in [&["search", "hi", "--limit", "0"][..], &["memory", "--project", "-w", "recall", "hi", "--limit", "0"]] {
        let refused = mneme(&[&["--root", root][..], args].concat());
        assert_eq!(status(&refused), 2, "{args:?}");
        assert!(String::from_utf8_lossy(&refused.stderr).contains("0 shows nothing"), "{refused:?}");
    }
    // A negative number reaches its option's check (clap took `-1` for a flag, and
    // offered to pass `-- -1`, which made it another argument).
    let negative = mneme(&["--root", root, "search", "hi", "--limit", "-1"]);
    assert!(String::from_utf8_lossy(&negative.stderr).contains("`-1` is not a whole number: give 1 or more"), "{negative:?}");
    let negative = mneme(&["--root", root, "crab", "uptime", "bot_ann_1", "-90"]);
    assert!(String::from_utf8_lossy(&negative.stderr).contains("invalid value '-90'"), "{negative:?}");
    let reply = r#"{"role":"assistant","content":"hi","usage":{"input_tokens":5,"output_tokens":1}}"#;
    stdout(&mneme(&["--root", root, "append", "u", "--message", reply, "--cwd", "/w"]));
    assert!(stdout(&mneme(&["--root", root, "usage", "u"])).contains("1 reply:"));
    let memory = ["--root", root, "memory", "--project", "-w"];
    stdout(&mneme(&[&memory[..], &["add", "--name", "Old", "--type", "user", "--body", "x"]].concat()));
    assert!(stdout(&mneme(&[&memory[..], &["forget", "old"]].concat())).starts_with("archived old"));
    assert!(stdout(&mneme(&[&memory[..], &["forget", "old"]].concat())).starts_with("old was archived already, at "));
    let empty_class = mneme(&["--root", root, "gc", "--class", "=3", "--dry-run"]);
    assert_eq!(status(&empty_class), 2, "{empty_class:?}");
    stdout(&mneme(&["--root", root, "crab", "start", "bot", "ann"]));
    let appended = stdout(&mneme(&["--root", root, "append", "bot_ann_1", "--role", "user", "--text", "hello"]));
    assert!(appended.starts_with("appended line 2 to session bot_ann_1"), "{appended}");
}

/// An empty --redact or $MNEME_REDACT is refused (it wrote every secret as it came), and
/// an empty $MNEME_ROOT is no root (it put the store in the current directory).
#[test]
fn empty_redaction_and_root_settings_are_not_taken_at_their_word() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let root = root.to_str().unwrap();
    let token = format!("ghp_{}", "a1B2".repeat(9));
    let append = |extra: &[&str], env: &[(&str, &str)]| {
        let mut command = crate::mneme_command();
        command.args(extra).args(["append", "r", "--role", "user", "--text", &token, "--cwd", "/w"]).current_dir(dir.path());
        command.env_remove("MNEME_REDACT").env_remove("MNEME_ROOT").envs(env.iter().copied());
        command.output().unwrap()
    };
    for (extra, env) in [(&["--root", root, "--redact", ""][..], &[][..]), (&["--root", root][..], &[("MNEME_REDACT", " ")][..])] {
        let refused = append(extra, env);
        assert_eq!(status(&refused), 1);
        assert!(String::from_utf8_lossy(&refused.stderr).contains("is empty"), "{refused:?}");
    }
    assert!(!Path::new(root).exists(), "a refused append wrote");
    let data = dir.path().join("data");
    stdout(&append(&[], &[("MNEME_ROOT", ""), ("XDG_DATA_HOME", data.to_str().unwrap())]));
    let written = fs::read_to_string(data.join("mneme/projects/-w/r.jsonl")).unwrap();
    assert!(written.contains("[REDACTED:github-token]") && !written.contains(&token), "{written}");
    assert!(!dir.path().join("projects").exists(), "the store went into the current directory");
}

/// A JSONL turn file's bad message is named by its line in the file, blank lines and
/// all, whether it is no JSON or no valid message; nothing of the turn is written.
#[test]
fn a_turn_files_bad_message_is_named_by_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let root = root.to_str().unwrap();
    for (text, line, said) in [
        ("\n{\"role\":\"user\",\"content\":\"a\"}\n\n{\"role\":\"assistant\",\"content\":\"b\"}\n{\"role\":\"user\"}\n", 5, "is invalid"),
        ("\n{\"role\":\"user\",\"content\":\"a\"}\n\n{\"role\":\"user\"\n", 4, "is not a JSON message"),
    ] {
        let file = dir.path().join("turn.jsonl");
        fs::write(&file, text).unwrap();
        let output = mneme(&["--root", root, "append", "t", "--turn", file.to_str().unwrap(), "--cwd", "/w"]);
        assert!(!output.status.success());
        let named = format!("line {line} of {} {said}", file.display());
        assert!(String::from_utf8_lossy(&output.stderr).contains(&named), "{}", String::from_utf8_lossy(&output.stderr));
    }
    assert!(!dir.path().join("store/projects").exists(), "nothing was written");
}

/// `check` says in words what its JSON says: a line with a lone surrogate escape (a cut
/// emoji, as Node writes one) is counted, and is a problem (exit status 3).
#[test]
fn check_counts_lone_surrogate_escapes_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cut.jsonl");
    let line = r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"cut","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"cut emoji \ud83d here"}}"#;
    fs::write(&file, format!("{line}\n")).unwrap();
    let output = mneme(&["check", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("lines with a lone surrogate escape (read as U+FFFD; the API refuses them as sent): 1"), "{text}");
    assert_eq!(status(&output), 3, "{text}");
}

/// Text a model or a tool wrote reaches the terminal without its control characters
/// (an escape sequence cleared the screen and retitled the window), and a reply of
/// calls alone is shown by what it holds (it was left out, the turn looking unanswered).
#[test]
fn text_output_escapes_control_characters_and_shows_replies_without_text() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    stdout(&mneme(&[
        "--root",
        root,
        "append",
        "esc",
        "--cwd",
        "/w",
        "--role",
        "user",
        "--text",
        "\u{1b}]0;pwned\u{7}\u{1b}[2Jhello \u{202e}dlrow",
    ]));
    let call = r#"{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}"#;
    stdout(&mneme(&["--root", root, "append", "esc", "--message", call]));
    for args in [&["sessions", "list"][..], &["resume", "esc"], &["sessions", "show", "esc"], &["search", "pwned"]] {
        let out = stdout(&mneme(&[&["--root", root][..], args].concat()));
        assert!(
            !out.contains('\u{1b}')
                && !out.contains('\u{7}')
                && !out.contains('\u{202e}')
                && out.contains("\\x{1b}]0;pwned\\x{7}\\x{1b}[2Jhello"),
            "{args:?}: {out}"
        );
    }
    let shown = stdout(&mneme(&["--root", root, "sessions", "show", "esc"]));
    assert!(shown.contains("assistant") && shown.contains("    [tool_use Bash t1]"), "{shown}");
    // A memory's words too: models write memories (extraction, consolidation).
    let hostile = "\u{1b}]0;pwned\u{7}\u{1b}[2J";
    let memory = ["--root", root, "memory", "--project", "-w"];
    let added = stdout(&mneme(
        &[&memory[..], &["add", "--name", &format!("Name {hostile}"), "--type", "user", "--description", hostile, "--body", hostile]]
            .concat(),
    ));
    let file = added.rsplit_once(" (").and_then(|(_, rest)| rest.split_once(".md)")).map(|(file, _)| file.to_owned()).unwrap();
    let file = file.as_str();
    for out in [added.clone(), stdout(&mneme(&[&memory[..], &["show", file]].concat())), stdout(&mneme(&[&memory[..], &["load"]].concat()))]
    {
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}') && out.contains("\\x{1b}"), "{out}");
    }
}

#[test]
fn a_compaction_that_does_not_shrink_the_context_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    for (role, text) in [("user", "hi"), ("assistant", "hello"), ("user", "ok"), ("assistant", "bye")] {
        stdout(&mneme(&["--root", root, "append", "s", "--role", role, "--text", text, "--cwd", "/w"]));
    }
    let compacted = mneme(&["--root", root, "compact", "s", "--keep-messages", "0"]);
    let said = stdout(&compacted);
    let tokens: Vec<u64> =
        said.rsplit_once(": ").unwrap().1.split(" tokens").next().unwrap().split(" → ").map(|n| n.parse().unwrap()).collect();
    assert!(tokens[1] >= tokens[0], "{said}");
    assert!(String::from_utf8_lossy(&compacted.stderr).contains("the context did not shrink"), "{compacted:?}");
}

#[test]
fn search_marks_a_message_found_through_its_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    for (role, text) in [("user", "What breed is your dog?"), ("assistant", "Oscar is a beagle, three years old.")] {
        stdout(&mneme(&["--root", root, "append", "s", "--role", role, "--text", text, "--cwd", "/w"]));
    }
    let said = stdout(&mneme(&["--root", root, "search", "dog"]));
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 2, "{said}");
    assert!(lines[0].ends_with("user: What breed is your dog?"), "{said}");
    assert!(lines[1].ends_with("assistant (context): Oscar is a beagle, three years old."), "{said}");
    let found: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "search", "dog", "--json"]))).unwrap();
    assert_eq!((found[0]["matched"].as_bool(), found[1]["matched"].as_bool()), (Some(true), Some(false)), "{found}");
}

/// `search --project` keeps to one project's sessions and `--since`/`--until` to a time
/// window, as `memory recall` and `memory list` do for memories (windows far from
/// today: no clock).
#[test]
fn search_and_recall_narrow_to_a_project_and_a_time_window() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    for (id, cwd, text) in [("a", "/w/app", "The deploy runs on Fridays."), ("b", "/w/site", "The site deploy waits for review.")] {
        stdout(&mneme(&["--root", root, "append", id, "--role", "user", "--text", text, "--cwd", cwd]));
    }
    let projects = |args: &[&str]| -> Vec<String> {
        let found: Value =
            serde_json::from_str(&stdout(&mneme(&[&["--root", root, "search", "deploy", "--json"], args].concat()))).unwrap();
        found.as_array().unwrap().iter().map(|hit| hit["project"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(projects(&[]).len(), 2);
    assert_eq!(projects(&["--project", "-w-site"]), ["-w-site"]);
    assert_eq!(projects(&["--since", "2000-01-01", "--until", "9999-01-01"]).len(), 2);
    assert!(projects(&["--until", "2000-01-01"]).is_empty());
    assert!(projects(&["--since", "9999-01-01"]).is_empty());
    let refused = mneme(&["--root", root, "search", "deploy", "--since", "soon"]);
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("is not a date"), "{refused:?}");

    let recall = |args: &[&str]| stdout(&mneme(&[&["--root", root, "memory", "--project", "-w-app", "recall", "deploy"], args].concat()));
    stdout(&mneme(&[
        "--root",
        root,
        "memory",
        "--project",
        "-w-app",
        "add",
        "--name",
        "Deploys",
        "--type",
        "project",
        "--body",
        "deploy on Fridays",
    ]));
    assert!(recall(&["--since", "2000-01-01"]).contains("deploys"));
    assert!(!recall(&["--until", "2000-01-01"]).contains("deploys"));
    let list = |args: &[&str]| stdout(&mneme(&[&["--root", root, "memory", "--project", "-w-app", "list"], args].concat()));
    assert!(list(&["--since", "2000-01-01", "--until", "9999-01-01"]).contains("deploys"));
    assert!(!list(&["--until", "2000-01-01"]).contains("deploys"));
}

/// With standard output on a full disk (`mneme gc >> log` from cron), a command says
/// its output was lost and fails; it never panics (exit 101) after its work is done.
/// `check` that finds problems keeps its status 3. (`/dev/full` is Linux's.)
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_under_standard_output_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    stdout(&mneme(&["--root", root, "append", "s", "--role", "user", "--text", "hello", "--cwd", "/w"]));
    for command in [&["sessions", "list"][..], &["gc"], &["sessions", "show", "s"], &["search", "hello"]] {
        let full = fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
        let output = crate::mneme_command().args(["--root", root]).args(command).stdout(full).output().unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{command:?}: {said}");
        assert!(said.contains("could not be written to standard output") && !said.contains("panicked"), "{command:?}: {said}");
    }
    let mut transcript = fs::OpenOptions::new().append(true).open(dir.path().join("projects/-w/s.jsonl")).unwrap();
    std::io::Write::write_all(&mut transcript, b"not json\n").unwrap();
    let full = fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    let output = crate::mneme_command().args(["--root", root, "check", "s"]).stdout(full).output().unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", String::from_utf8_lossy(&output.stderr));
}

/// A restore killed between a rename's link and its unlink (the state `kill -9` at its
/// first unlink leaves: a file back in `projects/` and still in `archive/`) is finished
/// by restoring again, whether it was cut at a first file or at the session's own.
#[cfg(unix)]
#[test]
fn a_restore_cut_between_link_and_unlink_is_finished_by_restoring_again() {
    for cut_at_the_session_itself in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        stdout(&mneme(&["--root", root, "append", "a", "--role", "user", "--text", "hello", "--cwd", "/w"]));
        fs::write(dir.path().join("projects/-w/a.jsonl.torn-9"), b"{\"ty").unwrap();
        stdout(&mneme(&["--root", root, "sessions", "archive", "a"]));
        let archive = fs::read_dir(dir.path().join("archive")).unwrap().next().unwrap().unwrap().path();
        let archived = |name: &str| archive.join("projects/-w").join(name);
        fs::hard_link(archived("a.jsonl.torn-9"), dir.path().join("projects/-w/a.jsonl.torn-9")).unwrap();
        if cut_at_the_session_itself {
            fs::hard_link(archived("a.jsonl"), dir.path().join("projects/-w/a.jsonl")).unwrap();
        }
        let said = stdout(&mneme(&["--root", root, "sessions", "restore", "a"]));
        assert!(said.contains("restored session a into -w"), "{said}");
        assert!(!archived("a.jsonl").exists() && !archived("a.jsonl.torn-9").exists(), "the archive's copies are gone");
        let shown = stdout(&mneme(&["--root", root, "sessions", "show", "a"]));
        assert!(shown.contains("hello"), "{shown}");
        let archived_now: Value = serde_json::from_str(&stdout(&mneme(&["--root", root, "sessions", "archived", "--json"]))).unwrap();
        assert!(archived_now.as_array().unwrap().is_empty(), "{archived_now}");
    }
}

/// A project is named by its folder under projects/ or, given with a `/`, by its working
/// directory, and a relative `--cwd` counts from the current directory: each names the
/// folder Claude Code would (a relative one was taken as it was written: `./app` filed
/// memories under `--app`).
#[cfg(unix)]
#[test]
fn a_project_is_named_by_its_folder_or_its_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path().canonicalize().unwrap();
    fs::create_dir(here.join("app")).unwrap();
    let root = here.join("store");
    let root = root.to_str().unwrap();
    let folder = mneme_host::core::keys::project_dir_name(&here.join("app").to_string_lossy());
    let run = |args: &[&str]| crate::mneme_command().args(args).current_dir(&here).output().unwrap();
    stdout(&run(&[
        "--root",
        root,
        "memory",
        "--cwd",
        "./app",
        "add",
        "--name",
        "db choice",
        "--type",
        "project",
        "--body",
        "We use Postgres.",
    ]));
    let projects: Vec<String> =
        fs::read_dir(here.join("store/projects")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(projects, std::slice::from_ref(&folder));
    let absolute = here.join("app");
    let folder_completed = format!("{folder}/");
    let up = format!("../{}/app", here.file_name().unwrap().to_str().unwrap());
    for project in [folder.as_str(), &folder_completed, "./app", "app/", &up, absolute.to_str().unwrap()] {
        let shown = stdout(&run(&["--root", root, "memory", "--project", project, "show", "db choice"]));
        assert!(shown.contains("We use Postgres."), "{project}: {shown}");
    }
    stdout(&run(&["--root", root, "append", "s1", "--role", "user", "--text", "deploy on friday", "--cwd", "app"]));
    for project in [folder.as_str(), "./app"] {
        assert!(stdout(&run(&["--root", root, "search", "friday", "--project", project])).contains("deploy on friday"), "{project}");
        assert!(stdout(&run(&["--root", root, "sessions", "list", "--project", project])).contains("s1"), "{project}");
    }
}
