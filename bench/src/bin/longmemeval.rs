//! `cargo xtask bench-recall` (second part): session search on the LongMemEval_S
//! development quarter (`../shared/benchmarks/longmemeval/longmemeval-s-dev.json.gz`,
//! read in place: never copied into the repository), side by side with a plain BM25
//! computed in the same run over the same messages.
//!
//! Each question gets a store of its own holding its ~50 haystack sessions, each
//! imported as the OpenAI message array it is (`mneme import` of a chat export), at its
//! session's date; the question is given to `search` (`mneme search --limit 50`).
//! Measured, by question type: session-level recall_any@k (an evidence session among
//! the first k distinct sessions of the hits) and turn-level recall@10 (an evidence turn,
//! `has_answer`, among the first ten messages); abstention questions (`_abs`) have no
//! evidence to find and are left out, as in the benchmark's retrieval measures.

use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use mneme_core::interchange::{Import, Source};
use mneme_core::redact::Redaction;
use mneme_core::time;
use mneme_core::{InMemoryStorage, Store, block_on};
use serde_json::{Value, json};

const USAGE: &str = "\
usage: cargo run --release -p mneme-bench --bin longmemeval [LONGMEMEVAL.json.gz]

Session search on the LongMemEval_S development quarter, read in place
(../shared/benchmarks/longmemeval/longmemeval-s-dev.json.gz), side by side with a
plain BM25 over the same messages computed in the same run.

  -h, --help   this text
";

/// The ranks a retriever gave one question: sessions in the order their first
/// message came, and whether each of the first ten messages is an evidence turn.
struct Ranked {
    sessions: Vec<String>,
    evidence_in_top10: bool,
    micros: f64,
    /// Evidence turns the store's entries could not be matched to (each would count
    /// as not found): printed, so a mismatch cannot pass for a miss.
    unmatched: usize,
}

#[derive(Default)]
struct Tally {
    questions: usize,
    session_at_5: usize,
    session_at_10: usize,
    /// Questions with an evidence turn, and those whose turn was in the first ten.
    turn_questions: usize,
    turn_at_10: usize,
}

impl Tally {
    fn add(&mut self, ranked: &Ranked, answers: &HashSet<&str>, has_turns: bool) {
        let found = |k: usize| ranked.sessions.iter().take(k).any(|s| answers.contains(s.as_str()));
        self.questions += 1;
        self.session_at_5 += usize::from(found(5));
        self.session_at_10 += usize::from(found(10));
        if has_turns {
            self.turn_questions += 1;
            self.turn_at_10 += usize::from(ranked.evidence_in_top10);
        }
    }

    fn cells(&self) -> String {
        let pct = |n: usize, of: usize| if of == 0 { String::from("-") } else { format!("{:.1}", 100.0 * n as f64 / of as f64) };
        format!(
            "{} | {} | {}",
            pct(self.session_at_5, self.questions),
            pct(self.session_at_10, self.questions),
            pct(self.turn_at_10, self.turn_questions)
        )
    }
}

fn main() {
    if let Err(error) = run() {
        eprintln!("bench-recall (LongMemEval): {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut path = PathBuf::from("../shared/benchmarks/longmemeval/longmemeval-s-dev.json.gz");
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(());
            }
            option if option.starts_with('-') => return Err(format!("unknown option `{option}`\n\n{USAGE}")),
            _ => path = PathBuf::from(arg),
        }
    }
    let mut json_text = String::new();
    let file = std::fs::File::open(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    flate2::read::GzDecoder::new(file).read_to_string(&mut json_text).map_err(|e| format!("{} is not gzip: {e}", path.display()))?;
    let data: Value = serde_json::from_str(&json_text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    let questions = data.as_array().ok_or("the LongMemEval file is a JSON array of questions")?;

    let mut mneme: BTreeMap<String, Tally> = BTreeMap::new();
    let mut bm25: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut mneme_times, mut bm25_times) = (Vec::new(), Vec::new());
    let mut skipped_messages = 0u64;
    let mut unmatched = 0usize;
    let started = Instant::now();
    for (n, question) in questions.iter().enumerate() {
        let id = question["question_id"].as_str().unwrap_or_default();
        if id.ends_with("_abs") {
            continue;
        }
        let kind = question["question_type"].as_str().unwrap_or("?").to_owned();
        let asked = question["question"].as_str().ok_or("a question without its text")?;
        let answers: HashSet<&str> = question["answer_session_ids"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let haystack = Haystack::of(question)?;
        let has_turns = haystack.turns.iter().any(|turn| turn.evidence);

        let (ranked, skipped) = search_with_mneme(&haystack, asked, n)?;
        skipped_messages += skipped;
        unmatched += ranked.unmatched;
        mneme_times.push(ranked.micros);
        mneme.entry(kind.clone()).or_default().add(&ranked, &answers, has_turns);
        let ranked = search_with_bm25(&haystack, asked);
        bm25_times.push(ranked.micros);
        bm25.entry(kind).or_default().add(&ranked, &answers, has_turns);
    }

    let total = |tallies: &BTreeMap<String, Tally>| {
        tallies.values().fold(Tally::default(), |mut all, t| {
            all.questions += t.questions;
            all.session_at_5 += t.session_at_5;
            all.session_at_10 += t.session_at_10;
            all.turn_questions += t.turn_questions;
            all.turn_at_10 += t.turn_at_10;
            all
        })
    };
    let (all_mneme, all_bm25) = (total(&mneme), total(&bm25));
    println!(
        "LongMemEval_S development quarter ({} questions with evidence, {:.0} s in all; {skipped_messages} empty messages skipped on import; {unmatched} evidence turns not matched to an entry), search --limit 50",
        all_mneme.questions,
        started.elapsed().as_secs_f64()
    );
    println!("| question type | questions | Mneme session R@5 | R@10 | turn R@10 | plain BM25 session R@5 | R@10 | turn R@10 |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (kind, tally) in &mneme {
        println!("| {kind} | {} | {} | {} |", tally.questions, tally.cells(), bm25[kind].cells());
    }
    println!("| all | {} | {} | {} |", all_mneme.questions, all_mneme.cells(), all_bm25.cells());
    println!("(targets, on the held-out quarter: session R@5 ≥ 98, turn R@10 ≥ 92, single-session-preference session R@5 ≥ 85;");
    println!(" published offline anchors, session R@5, measured by their authors over sessions rather than messages: BM25 86.2,");
    println!(" BM25 + all-MiniLM-L6-v2 95.2, MiniLM vectors alone 96.6)");
    println!();
    println!("| search latency per question (~50 sessions) | median | p90 |");
    println!("|---|---:|---:|");
    for (name, times) in [
        ("Mneme `search` (in memory, first search builds the index)", &mut mneme_times),
        ("plain BM25 (index built per question)", &mut bm25_times),
    ] {
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times.get(((times.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0.0) / 1000.0;
        println!("| {name} | {:.1} ms | {:.1} ms |", at(0.5), at(0.9));
    }
    Ok(())
}

/// One evidence-marked message of a haystack.
struct Turn {
    session: String,
    text: String,
    evidence: bool,
}

/// A question's sessions: each as an OpenAI message array with its date, and every
/// non-empty message as a turn.
struct Haystack {
    sessions: Vec<(String, String, i64)>,
    turns: Vec<Turn>,
}

impl Haystack {
    fn of(question: &Value) -> Result<Haystack, String> {
        let ids = question["haystack_session_ids"].as_array().ok_or("no haystack_session_ids")?;
        let dates = question["haystack_dates"].as_array().ok_or("no haystack_dates")?;
        let sessions = question["haystack_sessions"].as_array().ok_or("no haystack_sessions")?;
        if ids.len() != dates.len() || ids.len() != sessions.len() {
            return Err(format!("{} session ids, {} dates and {} sessions: they go together", ids.len(), dates.len(), sessions.len()));
        }
        let mut haystack = Haystack { sessions: Vec::new(), turns: Vec::new() };
        let mut seen: HashSet<&str> = HashSet::new();
        for ((id, date), session) in ids.iter().zip(dates).zip(sessions) {
            let id = id.as_str().ok_or("a session id that is not text")?;
            // A few haystacks hold one session twice (the same id, the same turns).
            if !seen.insert(id) {
                continue;
            }
            let id = id.to_owned();
            let date = date.as_str().ok_or("a date that is not text")?;
            let messages: Vec<Value> =
                session.as_array().into_iter().flatten().map(|turn| json!({ "role": turn["role"], "content": turn["content"] })).collect();
            for turn in session.as_array().into_iter().flatten() {
                let text = turn["content"].as_str().unwrap_or_default();
                if !text.trim().is_empty() {
                    let evidence = turn["has_answer"].as_bool().unwrap_or(false);
                    haystack.turns.push(Turn { session: id.clone(), text: text.to_owned(), evidence });
                }
            }
            haystack.sessions.push((id, Value::Array(messages).to_string(), date_ms(date)?));
        }
        Ok(haystack)
    }
}

/// `2023/05/20 (Sat) 02:21`, LongMemEval's dates, in Unix milliseconds (UTC).
fn date_ms(date: &str) -> Result<i64, String> {
    let (day, rest) = date.split_once(' ').ok_or_else(|| format!("a date without a time: {date}"))?;
    let clock = rest.rsplit(' ').next().unwrap_or_default();
    time::parse_millis(&format!("{}T{clock}:00.000Z", day.replace('/', "-"))).ok_or_else(|| format!("an unreadable date: {date}"))
}

/// The haystack imported into a store of its own, then searched; the messages the
/// import skipped (empty ones) are counted.
fn search_with_mneme(haystack: &Haystack, question: &str, n: usize) -> Result<(Ranked, u64), String> {
    let store = Store::new(InMemoryStorage::new());
    // The benchmark's texts as they are: a redacted one would match no evidence turn.
    store.set_redaction(Redaction::off());
    let mut skipped = 0u64;
    let mut evidence_uuids: HashSet<String> = HashSet::new();
    let mut unmatched = 0;
    for (i, (id, messages, at_ms)) in haystack.sessions.iter().enumerate() {
        let request = Import {
            data: messages.clone().into_bytes(),
            source: Some(Source::Openai),
            id: Some(id.clone()),
            cwd: Some(String::from("/longmemeval")),
            origin: format!("{id}.json"),
            uuid: format!("{n:08x}-{i:04x}-4000-8000-000000000000"),
            now_ms: *at_ms,
        };
        let imported = block_on(store.sessions().import_session(&request)).map_err(|e| format!("importing session {id}: {e}"))?;
        skipped += u64::from(imported.skipped);
        let evidence: HashSet<&str> = haystack.turns.iter().filter(|t| t.evidence && t.session == *id).map(|t| t.text.trim()).collect();
        if !evidence.is_empty() {
            let mut matched: HashSet<String> = HashSet::new();
            for entry in block_on(store.sessions().load(id)).map_err(|e| e.to_string())?.entries {
                if let Some(uuid) = entry.uuid.filter(|_| evidence.contains(entry.text.trim())) {
                    matched.insert(entry.text.trim().to_owned());
                    evidence_uuids.insert(uuid);
                }
            }
            unmatched += evidence.len() - matched.len();
        }
    }
    let asked = Instant::now();
    let hits = block_on(store.sessions().search(question, 50, None, Default::default())).map_err(|e| e.to_string())?;
    let micros = asked.elapsed().as_secs_f64() * 1e6;
    let mut sessions: Vec<String> = Vec::new();
    for hit in &hits {
        if !sessions.contains(&hit.id) {
            sessions.push(hit.id.clone());
        }
    }
    let evidence_in_top10 = hits.iter().take(10).any(|hit| evidence_uuids.contains(&hit.uuid));
    Ok((Ranked { sessions, evidence_in_top10, micros, unmatched }, skipped))
}

/// Plain BM25 ([`mneme_bench::bm25`]) over the haystack's messages.
fn search_with_bm25(haystack: &Haystack, question: &str) -> Ranked {
    let asked = Instant::now();
    let documents: Vec<&str> = haystack.turns.iter().map(|turn| turn.text.as_str()).collect();
    let scored = mneme_bench::bm25(&documents, question, 50);
    let micros = asked.elapsed().as_secs_f64() * 1e6;
    let mut sessions: Vec<String> = Vec::new();
    for &(_, i) in &scored {
        let session = &haystack.turns[i].session;
        if !sessions.contains(session) {
            sessions.push(session.clone());
        }
    }
    let evidence_in_top10 = scored.iter().take(10).any(|&(_, i)| haystack.turns[i].evidence);
    Ranked { sessions, evidence_in_top10, micros, unmatched: 0 }
}
