//! What the bench binaries share: the plain BM25 they set beside Mneme's recall.

use std::collections::HashMap;

use mneme_core::recall::text;

/// Okapi BM25 (k1 1.2, b 0.75) over `documents`, terms as Mneme's index makes them
/// (the same stemming and stopwords): what word matching alone gives. The first
/// `limit` documents that match a term of `query`, best first (ties in document
/// order), each as (score, index).
pub fn bm25(documents: &[&str], query: &str, limit: usize) -> Vec<(f64, usize)> {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    let counted: Vec<HashMap<String, u32>> = documents
        .iter()
        .map(|document| {
            let mut counts = HashMap::new();
            for term in text::terms(document) {
                *counts.entry(term).or_insert(0) += 1;
            }
            counts
        })
        .collect();
    let lengths: Vec<f64> = counted.iter().map(|d| d.values().sum::<u32>() as f64).collect();
    let average = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
    let total = counted.len() as f64;
    let mut terms: Vec<String> = text::terms(query);
    terms.sort();
    terms.dedup();
    let frequency: HashMap<&str, f64> =
        terms.iter().map(|term| (term.as_str(), counted.iter().filter(|d| d.contains_key(term)).count() as f64)).collect();
    let mut scored: Vec<(f64, usize)> = Vec::new();
    for (i, document) in counted.iter().enumerate() {
        let score: f64 = terms
            .iter()
            .filter_map(|term| {
                let tf = f64::from(*document.get(term)?);
                let df = frequency[term.as_str()];
                let idf = (1.0 + (total - df + 0.5) / (df + 0.5)).ln();
                Some(idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * lengths[i] / average.max(1.0))))
            })
            .sum();
        if score > 0.0 {
            scored.push((score, i));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(limit);
    scored
}
