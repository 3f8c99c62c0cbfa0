//! Helpers with no domain knowledge: driving futures, time, lenient field types.

mod executor;
pub(crate) mod hash;
pub(crate) mod ids;
pub(crate) mod json;
pub(crate) mod lenient;
mod mirror;
pub(crate) mod shared;
pub mod time;
pub(crate) mod validate;

pub use executor::block_on;
pub use mirror::{Mirror, MirrorBytes, MirrorText};
pub use shared::SharedStr;

/// `text` split at every `\n`, exactly as `text.split('\n')` splits it (an empty last
/// piece after a final newline), the newlines found by `memchr` a vector at a time:
/// every record written is split so, a line of a few hundred bytes each append.
pub(crate) fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', text.as_bytes()).map(Some).chain([None]).map(move |newline| {
        let end = newline.unwrap_or(text.len());
        let line = text.get(start..end).unwrap_or_default();
        start = end + 1;
        line
    })
}

/// Sums token counts that come from files and callers: a count near `u64::MAX` stays
/// there rather than wrapping to a small number (which would stop compaction firing).
pub(crate) fn saturating_sum(counts: impl IntoIterator<Item = u64>) -> u64 {
    counts.into_iter().fold(0, u64::saturating_add)
}

/// Every transcript (`.jsonl`) in the repository's corpus of files real tools wrote.
#[cfg(test)]
pub(crate) fn corpus_files() -> alloc::vec::Vec<std::path::PathBuf> {
    fn files(dir: &std::path::Path, out: &mut alloc::vec::Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            match entry.path() {
                path if path.is_dir() => files(&path, out),
                path if path.extension().is_some_and(|e| e == "jsonl") => out.push(path),
                _ => {}
            }
        }
    }
    let mut paths = alloc::vec::Vec::new();
    files(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus"), &mut paths);
    paths
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    #[test]
    fn lines_split_as_str_split_splits_them() {
        for text in ["", "\n", "a", "a\n", "\na", "a\nb", "a\n\nb\n", "é\n🎉\n\n", "\n\n\n"] {
            assert_eq!(super::split_lines(text).collect::<Vec<_>>(), text.split('\n').collect::<Vec<_>>(), "{text:?}");
        }
    }
}
