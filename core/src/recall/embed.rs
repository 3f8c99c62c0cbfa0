//! A static embedding table the host brings — one vector per word, as GloVe, word2vec
//! and fastText publish them — so recall finds a memory that shares no word with the
//! query but means the same ("car" for "automobile").
//!
//! The table is keyed by recall's own terms ([`text::for_each_term`]): every surface form
//! of a word ("paint", "painted", "painting") adds to its stem's vector, so a memory's
//! stored terms are all it takes to embed it, and the persisted index needs nothing new.
//! Vectors are centred on the table's mean (word vectors share a common direction that
//! makes every average look alike) and scaled to unit length.
//!
//! A text — a memory, a query — is the sum of its terms' vectors, each weighed by the
//! term's inverse document frequency in the recall index (see `recall`), so "like"
//! moves the vector less than "sunrise".

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use super::text;
use crate::error::Error;

/// Dimensions past this are refused: no published static table comes near it, and it
/// bounds what a hostile table can make each memory cost.
pub(crate) const MAX_DIMENSIONS: usize = 4096;

/// What [`Embeddings::parse`] read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EmbeddingsInfo {
    /// Lines of the table read as a word and its vector.
    pub words: u32,
    /// Distinct recall terms those words gave (stems; stopwords and multi-word entries
    /// have none).
    pub terms: u32,
    pub dimensions: u32,
    /// Lines that were neither a header nor a word with the table's number of values.
    pub skipped: u32,
}

/// The table, by recall term.
pub struct Embeddings {
    dimensions: usize,
    rows: BTreeMap<String, u32>,
    /// `rows.len() × dimensions`, each row centred and of unit length.
    vectors: Vec<f32>,
    info: EmbeddingsInfo,
}

impl core::fmt::Debug for Embeddings {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Embeddings").field("info", &self.info).finish_non_exhaustive()
    }
}

impl Embeddings {
    /// Reads a table in the text format static embeddings are published in: one word per
    /// line followed by its values, separated by spaces; an optional first line `<count> <dimensions>` (word2vec, fastText) is skipped.
    pub fn parse(bytes: &[u8]) -> Result<Embeddings, Error> {
        let mut dimensions = 0usize;
        let mut sums: Vec<f32> = Vec::new();
        let mut rows: BTreeMap<String, u32> = BTreeMap::new();
        let mut values: Vec<f32> = Vec::new();
        let (mut words, mut skipped) = (0u32, 0u32);
        for (number, line) in bytes.split(|b| *b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let Ok(line) = core::str::from_utf8(line) else {
                skipped += 1;
                continue;
            };
            let mut fields = line.split(' ').filter(|f| !f.is_empty());
            let Some(word) = fields.next() else { continue };
            values.clear();
            let numbers = fields.map(str::parse::<f32>).try_fold(&mut values, |values, value| {
                values.push(value.ok().filter(|v| v.is_finite())?);
                Some(values)
            });
            if numbers.is_none() {
                skipped += 1;
                continue;
            }
            if number == 0 && values.len() == 1 && word.parse::<u64>().is_ok() {
                continue;
            }
            if dimensions == 0 {
                if values.is_empty() || values.len() > MAX_DIMENSIONS {
                    skipped += 1;
                    continue;
                }
                dimensions = values.len();
            }
            if values.len() != dimensions {
                skipped += 1;
                continue;
            }
            words += 1;
            let Some(term) = single_term(word) else { continue };
            let norm = libm::sqrtf(values.iter().map(|v| v * v).sum());
            if norm == 0.0 {
                continue;
            }
            let row = match rows.get(&term) {
                Some(&row) => row as usize,
                None => {
                    let row = rows.len();
                    rows.insert(term, row as u32);
                    sums.resize(sums.len() + dimensions, 0.0);
                    row
                }
            };
            let start = row * dimensions;
            if let Some(sum) = sums.get_mut(start..start + dimensions) {
                for (total, value) in sum.iter_mut().zip(&values) {
                    *total += value / norm;
                }
            }
        }
        if rows.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "the embedding table has no word vectors ({words} lines read, {skipped} skipped): give its text form — one word per line followed by its values, separated by spaces, as GloVe, word2vec and fastText publish them"
            )));
        }
        let count = rows.len();
        let mut mean = alloc::vec![0.0f32; dimensions];
        for row in sums.chunks_exact(dimensions) {
            let norm = norm_of(row);
            for (m, v) in mean.iter_mut().zip(row) {
                *m += v / norm / count as f32;
            }
        }
        for row in sums.chunks_exact_mut(dimensions) {
            let norm = norm_of(row);
            for (v, m) in row.iter_mut().zip(&mean) {
                *v = *v / norm - m;
            }
            let centred = norm_of(row);
            for v in row.iter_mut() {
                *v /= centred;
            }
        }
        let info = EmbeddingsInfo { words, terms: count as u32, dimensions: dimensions as u32, skipped };
        Ok(Embeddings { dimensions, rows, vectors: sums, info })
    }

    pub fn info(&self) -> &EmbeddingsInfo {
        &self.info
    }

    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The row of a recall term, if the table has it.
    pub fn row(&self, term: &str) -> Option<u32> {
        self.rows.get(term).copied()
    }

    /// Adds `weight` times row `row`'s vector to `sum` (of [`Embeddings::dimensions`] values).
    pub fn add_row(&self, row: u32, weight: f32, sum: &mut [f32]) {
        let start = row as usize * self.dimensions;
        let Some(vector) = self.vectors.get(start..start + self.dimensions) else { return };
        for (total, value) in sum.iter_mut().zip(vector) {
            *total += weight * value;
        }
    }
}

/// Scales `vector` to unit length; false (and left as is) when it is all zeros.
pub fn normalise(vector: &mut [f32]) -> bool {
    let norm = libm::sqrtf(vector.iter().map(|v| v * v).sum());
    if norm == 0.0 || !norm.is_finite() {
        return false;
    }
    for v in vector.iter_mut() {
        *v /= norm;
    }
    true
}

/// The dot product of two vectors of one length, in eight lanes so the compiler can
/// vectorise it (a single running sum fixes the order of every addition).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a_chunks.remainder().iter().zip(b_chunks.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for ((lane, x), y) in lanes.iter_mut().zip(x).zip(y) {
            *lane += x * y;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

fn norm_of(row: &[f32]) -> f32 {
    let norm = libm::sqrtf(row.iter().map(|v| v * v).sum());
    if norm > 0.0 { norm } else { 1.0 }
}

/// The one recall term a table word stands for; none for stopwords and for entries
/// that are several words ("new_york", "e-mail").
fn single_term(word: &str) -> Option<String> {
    let mut term = None;
    let mut count = 0;
    text::for_each_term(word, |t| {
        count += 1;
        term = Some(String::from(t));
    });
    if count == 1 && word.chars().all(char::is_alphanumeric) { term } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn reads_glove_and_word2vec_text_keyed_by_stem() {
        let glove = b"the 0.1 0.2 0.3\npainting 1 0 0\npainted 0.9 0.1 0\ncar 0 1 0\nnew_york 0 0 1\nbad 1 2\n";
        let table = Embeddings::parse(glove).unwrap();
        assert_eq!(table.info(), &EmbeddingsInfo { words: 5, terms: 2, dimensions: 3, skipped: 1 });
        assert_eq!(table.row("paint"), Some(0));
        assert_eq!(table.row("car"), Some(1));
        assert_eq!(table.row("the"), None);

        let word2vec = b"2 2\nautomobile 1 0\ncar 0.9 0.1\n";
        assert_eq!(Embeddings::parse(word2vec).unwrap().info().terms, 2);
    }

    #[test]
    fn a_table_without_vectors_says_what_it_expects() {
        for bad in [&b""[..], b"just words here\n", b"\xff\xfe 1 2\n", b"x NaN 1\n"] {
            let error = Embeddings::parse(bad).unwrap_err().to_string();
            assert!(error.contains("one word per line followed by its values"), "{error}");
        }
    }
}
