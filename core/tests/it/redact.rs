//! Secrets never reach disk: realistic fakes of every pattern are replaced before a line
//! or memory file is written, the write says what it removed, nothing else in the line
//! changes, and ordinary code, prose and every corpus transcript pass untouched.

use mneme_core::memory::file::MemoryType;
use mneme_core::memory::store::{NewMemory, Scope};
use mneme_core::redact::{Found, Redacted, Redaction, SecretKind};
use mneme_core::{Error, InMemoryStorage, Storage, Store, block_on};
use serde_json::json;

use crate::turns::turn;

const T0: i64 = 1_771_267_670_590;

/// Fakes shaped like the real thing (right prefix, length and alphabet), one per pattern.
fn fakes() -> Vec<(SecretKind, String)> {
    let alnum = |n: usize, seed: u32| -> String {
        let chars = b"aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY";
        (0..n).map(|i| chars[(i * 7 + seed as usize) % chars.len()] as char).collect()
    };
    vec![
        (SecretKind::AnthropicKey, format!("sk-ant-api03-{}-{}AA", alnum(80, 1), alnum(12, 2))),
        (SecretKind::OpenAiKey, format!("sk-proj-{}_{}", alnum(64, 3), alnum(60, 4))),
        (SecretKind::OpenAiKey, format!("sk-{}", alnum(48, 5))),
        (SecretKind::GoogleKey, format!("AIzaSy{}", alnum(33, 6))),
        (SecretKind::AwsAccessKey, "AKIAIOSFODNN7EXAMPLE".to_owned()),
        (SecretKind::AwsAccessKey, "ASIAY34FZKBOKMUTVV7A".to_owned()),
        (SecretKind::GithubToken, format!("ghp_{}", alnum(36, 7))),
        (SecretKind::GithubToken, format!("gho_{}", alnum(36, 8))),
        (SecretKind::GithubToken, format!("github_pat_11{}_{}", alnum(20, 9), alnum(59, 10))),
        (SecretKind::SlackToken, "xoxb-2402839102-5738291038475-Zq8vR2kLm9XwP4tYc7NbF3sJ".to_owned()),
        (SecretKind::SlackToken, format!("xapp-1-A05{}-{}", alnum(8, 11), alnum(40, 12))),
        (SecretKind::StripeKey, format!("sk_live_51{}", alnum(97, 13))),
        (SecretKind::StripeKey, format!("rk_live_51{}", alnum(97, 14))),
        (SecretKind::StripeKey, format!("sk_test_{}", alnum(24, 15))),
        (
            SecretKind::Jwt,
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
                .to_owned(),
        ),
    ]
}

fn redact(text: &str) -> (String, Vec<Redacted>) {
    let mut found = Found::default();
    let out = Redaction::all().text(text, &mut found).unwrap_or_else(|| text.to_owned());
    (out, found.report())
}

fn marker(kind: SecretKind) -> String {
    format!("[REDACTED:{}]", kind.as_str())
}

#[test]
fn every_token_pattern_is_replaced_in_prose_code_and_json() {
    for (kind, secret) in fakes() {
        for context in [
            format!("my key is {secret}, please use it"),
            format!("curl -H 'x-api-key: {secret}' https://api.example.com"),
            format!("const key = \"{secret}\";"),
            secret.clone(),
            format!("({secret})"),
        ] {
            let (out, report) = redact(&context);
            assert_eq!(out, context.replace(&secret, &marker(kind)), "{kind:?} in {context}");
            assert_eq!(report, vec![Redacted { kind: kind.as_str().to_owned(), count: 1 }], "{context}");
        }
    }
}

#[test]
fn bearer_tokens_private_keys_and_env_lines_are_replaced() {
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let (out, report) = redact(&format!("Authorization: Bearer {jwt}\nnext line"));
    assert_eq!(out, "Authorization: Bearer [REDACTED:bearer-token]\nnext line");
    assert_eq!(report[0].kind, "bearer-token");

    let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAABAAAAMwAAAAtzc2gtZWQ\n-----END OPENSSH PRIVATE KEY-----";
    let (out, _) = redact(&format!("key:\n{pem}\ndone"));
    assert_eq!(out, "key:\n[REDACTED:private-key]\ndone");
    let rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\n";
    let (out, _) = redact(&format!("cut short: {rsa}"));
    assert_eq!(out, "cut short: [REDACTED:private-key]", "a block without its end runs to the end of the text");

    let (out, _) = redact(
        "DB_PASSWORD=\"correct horse battery\"\n     3→GITHUB_TOKEN=abc123\n\tHF_TOKEN=hf_x1\nAPI_KEY=yourself2024a\nX_API_KEY=YOUR_KEY_HERE\n",
    );
    assert_eq!(
        out,
        "DB_PASSWORD=\"[REDACTED:env-secret]\"\n     3→GITHUB_TOKEN=[REDACTED:env-secret]\n\tHF_TOKEN=[REDACTED:env-secret]\nAPI_KEY=[REDACTED:env-secret]\nX_API_KEY=YOUR_KEY_HERE\n",
        "quoted values run to their quote; a file shown with line numbers or indentation is read"
    );
    let env = "# .env\nOPENAI_API_KEY=abc123def456\nexport DB_PASSWORD='hunter2'\nSTRIPE_SECRET_KEY=\"rk_live_51Hx\"\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nDEBUG=true\nMAX_TOKENS=4096\n";
    let (out, report) = redact(env);
    assert_eq!(
        out,
        "# .env\nOPENAI_API_KEY=[REDACTED:env-secret]\nexport DB_PASSWORD='[REDACTED:env-secret]'\nSTRIPE_SECRET_KEY=\"[REDACTED:env-secret]\"\nAWS_SECRET_ACCESS_KEY=[REDACTED:env-secret]\nDEBUG=true\nMAX_TOKENS=4096\n"
    );
    assert_eq!(report, vec![Redacted { kind: "env-secret".into(), count: 4 }]);
}

/// A URL keeps its user and host; only the password goes. Found in every form a
/// transcript holds one: prose, a command, a config line, a JSON string.
#[test]
fn a_password_in_a_url_is_replaced_and_the_url_kept() {
    for (text, expected) in [
        (
            "connect to postgres://app:s3cret-Pa55@db.internal:5432/prod now",
            "connect to postgres://app:[REDACTED:url-password]@db.internal:5432/prod now",
        ),
        ("psql 'postgresql://user:password@localhost/db'", "psql 'postgresql://user:[REDACTED:url-password]@localhost/db'"),
        ("redis://:hunter2@cache:6379", "redis://:[REDACTED:url-password]@cache:6379"),
        ("https://bob:p%40ss@example.com/path?q=1", "https://bob:[REDACTED:url-password]@example.com/path?q=1"),
        // A token as the user is that token.
        (
            "git clone https://ghp_aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xYaB3d@github.com/o/r.git",
            "git clone https://[REDACTED:github-token]@github.com/o/r.git",
        ),
        // The value of an assignment is an env secret first: one marker, not two.
        ("DATABASE_URL=postgres://u:pw@h/db", "DATABASE_URL=[REDACTED:env-secret]"),
    ] {
        assert_eq!(redact(text).0, expected, "{text}");
    }
    let line = json!({ "type": "user", "message": { "content": "use\nmysql://root:toor@127.0.0.1:3306/app\n" } }).to_string();
    let clean = Redaction::all().json_line(&line, &mut Found::default()).unwrap();
    assert!(clean.contains(r"mysql://root:[REDACTED:url-password]@127.0.0.1:3306/app"), "{clean}");
}

/// AWS's credentials file and other INI files put spaces around the `=`.
#[test]
fn credentials_files_with_spaced_assignments_are_replaced() {
    let credentials = "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\naws_session_token=IQoJb3JpZ2luX2VjEJr\nregion = us-east-1\n";
    let (out, report) = redact(credentials);
    assert_eq!(
        out,
        "[default]\naws_access_key_id = [REDACTED:aws-access-key]\naws_secret_access_key = [REDACTED:env-secret]\naws_session_token=[REDACTED:env-secret]\nregion = us-east-1\n"
    );
    assert_eq!(report, vec![Redacted { kind: "aws-access-key".into(), count: 1 }, Redacted { kind: "env-secret".into(), count: 2 }]);
    let (out, _) = redact("password = \"hunter22\"\n");
    assert_eq!(out, "password = \"[REDACTED:env-secret]\"\n", "a literal assigned in code is a secret");
}

#[test]
fn in_a_json_string_an_escape_ends_a_word() {
    let github = fakes()[6].1.clone();
    let line =
        json!({ "type": "user", "message": { "content": format!("a\n{github}\tOPENAI_API_KEY=x\nOPENAI_API_KEY=abc\n") } }).to_string();
    let mut found = Found::default();
    let clean = Redaction::all().json_line(&line, &mut found).unwrap();
    assert!(clean.contains(r"a\n[REDACTED:github-token]\tOPENAI_API_KEY=x\nOPENAI_API_KEY=[REDACTED:env-secret]\n"), "{clean}");
    assert_eq!(found.report().len(), 2);
}

#[test]
fn ordinary_code_and_prose_are_left_alone() {
    for text in [
        "The bearer of this letter is a friend. Bearer token authentication is RFC 6750.",
        "Use `Authorization: Bearer <token>` with your token.",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
        "pip install scikit-learn; from sklearn import svm; task-runner-configuration-file",
        "risk-assessment-2024-model-v2-final and desk-2024-a1b2c3d4e5f6g7h8i9",
        "sk-1234 is too short; sk-this-is-a-very-long-kebab-case-name-without-digits",
        "ghp_ alone, AKIA alone, AIza alone, xoxb- alone",
        "AKIAIOSFODNN7EXAMPLEMORE is not a key: it runs on",
        "export ANTHROPIC_API_KEY=sk-ant-...\nOPENAI_API_KEY=<your key>\nGITHUB_TOKEN=xxxxxxxx\nAPI_SECRET=your-secret-here",
        "export PATH=$PATH:/usr/local/bin\nOPENAI_API_KEY=$OPENAI_API_KEY\nGITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}\nMAX_TOKENS=4096\nTOKEN_LIMIT=100",
        "if api_key == \"\": raise ValueError('set OPENAI_API_KEY')",
        "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 uuid 3f2b6c1e-8d4a-4f7b-9c2e-1a5b7d9e0f12",
        "fn main() { let x: Vec<u8> = vec![1, 2, 3]; println!(\"{x:?}\"); }",
        "postgres://localhost:5432/db, https://bob@example.com/x, git@github.com:org/repo.git, me@example.com",
        "postgres://app:${DB_PASSWORD}@db/prod and postgres://app:$PGPASSWORD@db/prod and https://user:<password>@host",
        "eyJ alone; eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0. is unsigned; version 1.2.3.4",
        "pk_live_51HxYzAbCdEfGhIjKlMnOpQr is public; sk_live_ alone; desk_live_abcdefghijklmnopqrstuvwxyz",
        "API_KEY = os.environ[\"API_KEY\"]\npassword = getpass()\nSECRET_KEY = settings.get(\"secret\")",
        "    password = args.password\nAPI_KEY = settings.API_KEY\nSECRET_KEY = None\nif password == x:",
    ] {
        assert_eq!(redact(text), (text.to_owned(), vec![]), "{text}");
    }
}

#[test]
fn every_corpus_transcript_line_is_left_alone() {
    let mut lines = 0;
    for dir in ["../tests/corpus", "../../shared/corpus"] {
        let Ok(walk) = walk(std::path::Path::new(dir)) else { continue };
        for path in walk {
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            for line in text.lines() {
                let mut found = Found::default();
                assert_eq!(Redaction::all().json_line(line, &mut found), None, "{}: {:?}", path.display(), found.report());
                lines += 1;
            }
        }
    }
    assert!(lines > 1000, "the corpus was read ({lines} lines)");
    eprintln!("corpus lines left alone by redaction: {lines}");
}

fn walk(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            found.extend(walk(&path)?);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            found.push(path);
        }
    }
    Ok(found)
}

fn file(storage: &InMemoryStorage) -> String {
    String::from_utf8(block_on(storage.read("projects/-p/s.jsonl", 0, None)).unwrap()).unwrap()
}

#[test]
fn a_turn_is_written_without_its_secrets_and_says_what_it_took_out() {
    let key = fakes()[0].1.clone();
    let github = fakes()[6].1.clone();
    let messages = json!([
        { "role": "user", "content": format!("deploy with {key}") },
        { "role": "assistant", "id": "msg_1", "content": [
            { "type": "thinking", "thinking": format!("signed text stays as the model wrote it: {github}"), "signature": format!("sig{github}") },
            { "type": "tool_use", "id": "toolu_a", "name": "Bash", "input": { "command": format!("GITHUB_TOKEN={github} gh pr list") } },
        ] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "toolu_a", "content": format!("OPENAI_API_KEY=abc123\nused {github}") },
        ] },
    ]);
    let on = Store::new(InMemoryStorage::new());
    let entries = block_on(on.sessions().append_turn("s", turn("u1", messages.clone()))).unwrap();
    let off = Store::new(InMemoryStorage::new());
    off.set_redaction(Redaction::off());
    block_on(off.sessions().append_turn("s", turn("u1", messages))).unwrap();

    let written = file(on.storage());
    assert!(!written.contains(&key[7..]) && !written.contains(&format!("={github}")) && !written.contains("abc123"));
    assert!(written.contains(&format!("\"signature\":\"sig{github}\"")), "signatures are opaque: left alone");
    assert!(written.contains(&format!("wrote it: {github}")), "signed thinking is left alone: an edited one is refused by the API");
    // Nothing but the secrets changed.
    let expected = file(off.storage())
        .replace(&key, "[REDACTED:anthropic-api-key]")
        .replace(&format!("GITHUB_TOKEN={github}"), "GITHUB_TOKEN=[REDACTED:env-secret]")
        .replace(&format!("used {github}"), "used [REDACTED:github-token]")
        .replace("OPENAI_API_KEY=abc123", "OPENAI_API_KEY=[REDACTED:env-secret]");
    assert_eq!(written, expected);
    let reports: Vec<Vec<Redacted>> = entries.iter().map(|e| e.redacted.clone()).collect();
    assert_eq!(
        reports,
        vec![
            vec![Redacted { kind: "anthropic-api-key".into(), count: 1 }],
            // The reply's thinking and its tool call are two lines, as Claude Code splits them.
            vec![],
            vec![Redacted { kind: "env-secret".into(), count: 1 }],
            vec![Redacted { kind: "github-token".into(), count: 1 }, Redacted { kind: "env-secret".into(), count: 1 }],
        ]
    );
    // Read back, the entries are what was written, and carry no report.
    let loaded = block_on(on.sessions().load("s")).unwrap();
    assert!(loaded.entries.iter().all(|e| e.redacted.is_empty()));
    assert!(loaded.entries[0].text.contains("[REDACTED:anthropic-api-key]"));
}

#[test]
fn summaries_and_memory_files_are_redacted_too() {
    let key = fakes()[3].1.clone();
    let store = Store::new(InMemoryStorage::new());
    block_on(store.sessions().append_turn("s", turn("u1", json!([{ "role": "user", "content": "hello" }])))).unwrap();
    let settings = mneme_core::Settings { keep: mneme_core::Keep::RecentMessages(0), ..mneme_core::Settings::default() };
    let plan = block_on(store.compaction().plan_compaction("s", &settings, mneme_core::Mode::Manual)).unwrap();
    let ids = mneme_core::CompactionIds { boundary: "b1".into(), summary: "s1".into() };
    block_on(store.compaction().apply_compaction("s", &plan, &format!("The user's Google key is {key}."), &ids, T0 + 1)).unwrap();
    assert!(!file(store.storage()).contains(&key));
    assert!(file(store.storage()).contains("[REDACTED:google-api-key]"));

    let scope = Scope::Project("-p".into());
    let memory = NewMemory::new(
        "Deploy credentials",
        MemoryType::Reference,
        &format!("the key {key}"),
        &format!("Deploy with:\nexport OPENAI_API_KEY=sk-{}\n", "a1".repeat(24)),
    );
    let written = block_on(store.memory().memory_add(&scope, memory, T0)).unwrap();
    assert_eq!(
        written.redacted,
        vec![Redacted { kind: "google-api-key".into(), count: 1 }, Redacted { kind: "env-secret".into(), count: 1 }]
    );
    let listing = block_on(store.storage().list("")).unwrap();
    for info in listing {
        let bytes = block_on(store.storage().read(&info.key, 0, None)).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(&key) && !text.contains(&"a1".repeat(24)), "{} holds a secret", info.key);
    }
}

#[test]
fn the_policy_chooses_the_kinds_and_refuses_unknown_ones() {
    let store = Store::new(InMemoryStorage::new());
    store.set_redaction(Redaction::named(&["github-token"]).unwrap());
    let github = fakes()[6].1.clone();
    let aws = "AKIAIOSFODNN7EXAMPLE";
    block_on(store.sessions().append_turn("s", turn("u1", json!([{ "role": "user", "content": format!("{github} {aws}") }])))).unwrap();
    let written = file(store.storage());
    assert!(!written.contains(&github) && written.contains(aws));
    let error = Redaction::named(&["gitlab-token"]).unwrap_err();
    assert!(matches!(&error, Error::InvalidArgument(m) if m.contains("gitlab-token") && m.contains("github-token")), "{error}");
    assert_eq!(Redaction::named::<&str>(&[]).unwrap(), Redaction::off());
}

#[test]
fn a_secret_in_a_memory_name_reaches_neither_its_file_name_nor_the_index() {
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let store = Store::new(InMemoryStorage::new());
    let scope = Scope::Project("-p".into());
    let memory = NewMemory::new(&format!("key {aws}"), MemoryType::Reference, "the deploy key", "see the vault\n");
    let written = block_on(store.memory().memory_add(&scope, memory, T0)).unwrap();
    assert!(!written.file.to_uppercase().contains(aws) && written.name == "key [REDACTED:aws-access-key]", "{written:?}");
    for info in block_on(store.storage().list("")).unwrap() {
        let text = String::from_utf8_lossy(&block_on(store.storage().read(&info.key, 0, None)).unwrap()).to_uppercase();
        assert!(!info.key.to_uppercase().contains(aws) && !text.contains(aws), "{} holds the key", info.key);
    }
}

/// Every byte in the store, as text, for a scan for secrets.
fn every_file(storage: &InMemoryStorage) -> String {
    let mut all = String::new();
    for info in block_on(storage.list("")).unwrap() {
        all.push_str(&info.key);
        all.push('\n');
        all.push_str(&String::from_utf8_lossy(&block_on(storage.read(&info.key, 0, None)).unwrap()));
    }
    all
}

/// The caller's words on a session key (a chat's subject, its display name, a title,
/// toggles, metadata), a memory's topics and a crab session's title (which names its
/// file) reach no file; the index read back is the one kept.
#[test]
fn labels_topics_and_titles_are_written_without_their_secrets() {
    use mneme_core::index::{ChatType, Field, Inbound, KeyPatch, Origin, RoutePolicy};
    let github = fakes()[6].1.clone();
    let jwt = fakes().last().unwrap().1.clone();
    let stripe = fakes()[11].1.clone();
    let storage = InMemoryStorage::new();
    let store = Store::new(&storage);
    let inbound = Inbound {
        chat_type: ChatType::Group,
        provider: Some("slack".into()),
        id: Some("c1".into()),
        text: "hi".into(),
        origin: Origin { subject: Some(format!("ops {github}")), display_name: Some(jwt.clone()), ..Origin::default() },
        metadata: vec![Field { name: "token".into(), value: stripe.clone() }],
        ..Inbound::default()
    };
    let resolved = block_on(store.index().resolve(&inbound, &RoutePolicy::default(), T0, "s1")).unwrap();
    let key = resolved.key.clone();
    let patch = KeyPatch {
        title: Some(format!("deploy with {github}")),
        toggles: vec![Field { name: "auth".into(), value: format!("Bearer {jwt}") }],
        ..KeyPatch::default()
    };
    block_on(store.index().update_key(&key, &patch)).unwrap();
    let kept = block_on(store.index().key(&key)).unwrap().entry;
    assert_eq!(kept.title.as_deref(), Some("deploy with [REDACTED:github-token]"));
    assert_eq!(kept.origin.subject.as_deref(), Some("ops [REDACTED:github-token]"));
    assert_eq!(kept.origin.display_name.as_deref(), Some("[REDACTED:jwt]"));
    assert_eq!(kept.metadata[0].value, "[REDACTED:stripe-key]");
    assert_eq!(kept.toggles[0].value, "Bearer [REDACTED:bearer-token]");
    assert_eq!(block_on(Store::new(&storage).index().key(&key)).unwrap().entry, kept, "a fresh load reads the index that was kept");

    let scope = Scope::Project("-p".into());
    let mut memory = NewMemory::new("Deploy", MemoryType::Reference, "how to deploy", "run the script");
    memory.topics = vec!["deploy".into(), format!("key {github}")];
    let written = block_on(store.memory().memory_add(&scope, memory, T0)).unwrap();
    assert_eq!(written.topics, ["deploy", "key [REDACTED:github-token]"]);
    assert_eq!(written.redacted, vec![Redacted { kind: "github-token".into(), count: 1 }]);

    let crab = block_on(store.index().crab_start(None, "crab", "tg 1", "user", T0)).unwrap();
    let titled = block_on(store.index().crab_set_title(&crab.id, &format!("rotate {github}"))).unwrap();
    assert_eq!(titled.title, "rotate [REDACTED:github-token]");

    let all = every_file(&storage);
    for secret in [&github, &jwt, &stripe] {
        assert!(!all.contains(secret.as_str()), "a file holds {secret}");
    }
    assert!(!all.to_lowercase().contains(&github.to_lowercase()), "a file name holds the token's slug");
}
