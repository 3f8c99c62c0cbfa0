//! The words recall compares: lower-cased alphanumeric runs, English stopwords out,
//! Porter stems. One tokenizer for memories, queries and transcripts, so a word
//! written one way is found when asked for another way ("painting", "painted", "paints").

use alloc::string::String;
use alloc::vec::Vec;

/// Calls `emit` with each indexable term of `text`, in order, repeats included.
pub fn for_each_term(text: &str, mut emit: impl FnMut(&str)) {
    let mut word = String::new();
    let mut stem = Vec::new();
    let mut flush = |word: &mut String| {
        if !word.is_empty() {
            if let Some(term) = term_of(word, &mut stem) {
                emit(term);
            }
            word.clear();
        }
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else {
            flush(&mut word);
        }
    }
    flush(&mut word);
}

/// The indexable terms of `text`, in order.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |term| out.push(String::from(term)));
    out
}

fn term_of<'a>(word: &'a str, scratch: &'a mut Vec<u8>) -> Option<&'a str> {
    let single_letter = word.len() == 1 && word.bytes().all(|b| b.is_ascii_alphabetic());
    if single_letter || is_stopword(word) {
        return None;
    }
    // Words that are not plain ASCII letters (names in other scripts, numbers, ids)
    // are compared as written: the stemmer only knows English.
    if word.len() > MAX_STEMMED || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return Some(word);
    }
    scratch.clear();
    scratch.extend_from_slice(word.as_bytes());
    porter::stem(scratch);
    core::str::from_utf8(scratch).ok()
}

/// Longer words are left whole: no English word that long has a suffix worth taking,
/// and it bounds the stemmer's work on hostile input.
const MAX_STEMMED: usize = 40;

/// English function words: frequent enough to carry no meaning for recall.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "ll",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "re",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "ve",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// Porter's 1980 suffix-stripping algorithm, on a lower-case ASCII word.
mod porter {
    use alloc::vec::Vec;

    pub fn stem(word: &mut Vec<u8>) {
        if word.len() <= 2 {
            return;
        }
        step1a(word);
        step1b(word);
        step1c(word);
        step2(word);
        step3(word);
        step4(word);
        step5(word);
    }

    fn is_consonant(w: &[u8], i: usize) -> bool {
        match w.get(i) {
            Some(b'a' | b'e' | b'i' | b'o' | b'u') => false,
            // A `y` after a consonant is a vowel ("happy"), after a vowel a consonant ("toy").
            Some(b'y') => i == 0 || !is_consonant(w, i - 1),
            Some(_) => true,
            None => false,
        }
    }

    /// Porter's m: how many vowel-consonant sequences the stem has.
    fn measure(stem: &[u8]) -> usize {
        let mut count = 0;
        let mut i = 0;
        while i < stem.len() && is_consonant(stem, i) {
            i += 1;
        }
        loop {
            while i < stem.len() && !is_consonant(stem, i) {
                i += 1;
            }
            if i >= stem.len() {
                return count;
            }
            while i < stem.len() && is_consonant(stem, i) {
                i += 1;
            }
            count += 1;
        }
    }

    fn has_vowel(stem: &[u8]) -> bool {
        (0..stem.len()).any(|i| !is_consonant(stem, i))
    }

    fn ends_double_consonant(w: &[u8]) -> bool {
        let n = w.len();
        n >= 2 && w[n - 1] == w[n - 2] && is_consonant(w, n - 1)
    }

    /// Consonant-vowel-consonant at the end, the last not w, x or y ("hop", not "how").
    fn ends_cvc(w: &[u8]) -> bool {
        let n = w.len();
        n >= 3 && is_consonant(w, n - 3) && !is_consonant(w, n - 2) && is_consonant(w, n - 1) && !matches!(w[n - 1], b'w' | b'x' | b'y')
    }

    fn stem_of<'a>(w: &'a [u8], suffix: &[u8]) -> Option<&'a [u8]> {
        w.strip_suffix(suffix)
    }

    fn set_suffix(w: &mut Vec<u8>, suffix_len: usize, replacement: &[u8]) {
        w.truncate(w.len() - suffix_len);
        w.extend_from_slice(replacement);
    }

    /// The first rule whose suffix the word ends with decides: it applies if the stem's
    /// measure passes, and no later rule is tried either way. The tables list a suffix
    /// before any shorter suffix that ends it ("ational" before "tional", "ement" before
    /// "ment" before "ent"), so the first match is the longest, as Porter specifies.
    fn apply_rules(w: &mut Vec<u8>, rules: &[(&[u8], &[u8])], passes: impl Fn(&[u8], &[u8]) -> bool) {
        for (suffix, replacement) in rules {
            if let Some(stem) = stem_of(w, suffix) {
                if passes(stem, suffix) {
                    set_suffix(w, suffix.len(), replacement);
                }
                return;
            }
        }
    }

    fn step1a(w: &mut Vec<u8>) {
        if w.ends_with(b"sses") || w.ends_with(b"ies") {
            w.truncate(w.len() - 2);
        } else if w.ends_with(b"s") && !w.ends_with(b"ss") {
            w.pop();
        }
    }

    fn step1b(w: &mut Vec<u8>) {
        if let Some(stem) = stem_of(w, b"eed") {
            if measure(stem) > 0 {
                w.pop();
            }
            return;
        }
        let removed = if stem_of(w, b"ed").is_some_and(has_vowel) {
            w.truncate(w.len() - 2);
            true
        } else if stem_of(w, b"ing").is_some_and(has_vowel) {
            w.truncate(w.len() - 3);
            true
        } else {
            false
        };
        if !removed {
            return;
        }
        if w.ends_with(b"at") || w.ends_with(b"bl") || w.ends_with(b"iz") {
            w.push(b'e');
        } else if ends_double_consonant(w) && !matches!(w.last(), Some(b'l' | b's' | b'z')) {
            w.pop();
        } else if measure(w) == 1 && ends_cvc(w) {
            w.push(b'e');
        }
    }

    fn step1c(w: &mut Vec<u8>) {
        if let Some(stem) = stem_of(w, b"y")
            && has_vowel(stem)
        {
            w.pop();
            w.push(b'i');
        }
    }

    pub(super) const STEP2: &[(&[u8], &[u8])] = &[
        (b"ational", b"ate"),
        (b"tional", b"tion"),
        (b"enci", b"ence"),
        (b"anci", b"ance"),
        (b"izer", b"ize"),
        (b"bli", b"ble"),
        (b"alli", b"al"),
        (b"entli", b"ent"),
        (b"eli", b"e"),
        (b"ousli", b"ous"),
        (b"ization", b"ize"),
        (b"ation", b"ate"),
        (b"ator", b"ate"),
        (b"alism", b"al"),
        (b"iveness", b"ive"),
        (b"fulness", b"ful"),
        (b"ousness", b"ous"),
        (b"aliti", b"al"),
        (b"iviti", b"ive"),
        (b"biliti", b"ble"),
        (b"logi", b"log"),
    ];

    fn step2(w: &mut Vec<u8>) {
        apply_rules(w, STEP2, |stem, _| measure(stem) > 0);
    }

    pub(super) const STEP3: &[(&[u8], &[u8])] =
        &[(b"icate", b"ic"), (b"ative", b""), (b"alize", b"al"), (b"iciti", b"ic"), (b"ical", b"ic"), (b"ful", b""), (b"ness", b"")];

    fn step3(w: &mut Vec<u8>) {
        apply_rules(w, STEP3, |stem, _| measure(stem) > 0);
    }

    pub(super) const STEP4: &[(&[u8], &[u8])] = &[
        (b"al", b""),
        (b"ance", b""),
        (b"ence", b""),
        (b"er", b""),
        (b"ic", b""),
        (b"able", b""),
        (b"ible", b""),
        (b"ant", b""),
        (b"ement", b""),
        (b"ment", b""),
        (b"ent", b""),
        (b"ion", b""),
        (b"ou", b""),
        (b"ism", b""),
        (b"ate", b""),
        (b"iti", b""),
        (b"ous", b""),
        (b"ive", b""),
        (b"ize", b""),
    ];

    fn step4(w: &mut Vec<u8>) {
        apply_rules(w, STEP4, |stem, suffix| measure(stem) > 1 && (suffix != b"ion" || matches!(stem.last(), Some(b's' | b't'))));
    }

    fn step5(w: &mut Vec<u8>) {
        if let Some(stem) = stem_of(w, b"e") {
            let m = measure(stem);
            if m > 1 || (m == 1 && !ends_cvc(stem)) {
                w.pop();
            }
        }
        if measure(w) > 1 && w.ends_with(b"ll") {
            w.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_as_porter_does() {
        let cases = [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("hopping", "hop"),
            ("falling", "fall"),
            ("filing", "file"),
            ("happy", "happi"),
            ("relational", "relat"),
            ("conditional", "condit"),
            ("rational", "ration"),
            ("generalization", "gener"),
            ("hopefulness", "hope"),
            ("triplicate", "triplic"),
            ("adjustment", "adjust"),
            ("adoption", "adopt"),
            ("controlling", "control"),
            ("painting", "paint"),
            ("painted", "paint"),
            ("paints", "paint"),
            ("probate", "probat"),
            ("rate", "rate"),
            ("cease", "ceas"),
        ];
        for (word, stem) in cases {
            assert_eq!(terms(word), [stem], "{word}");
        }
    }

    #[test]
    fn tokenizes_words_drops_stopwords_keeps_numbers_and_other_scripts() {
        assert_eq!(terms("What did Caroline's kids paint in 2022?"), ["carolin", "kid", "paint", "2022"]);
        assert_eq!(terms("Ünïcode ÉCOLE 東京"), ["ünïcode", "école", "東京"]);
        assert!(terms("the a of and I").is_empty());
    }

    #[test]
    fn no_rule_hides_a_longer_suffix_behind_it() {
        for table in [porter::STEP2, porter::STEP3, porter::STEP4] {
            for (i, (earlier, _)) in table.iter().enumerate() {
                for (later, _) in &table[i + 1..] {
                    assert!(!later.ends_with(earlier), "{:?} comes before {:?}", earlier, later);
                }
            }
        }
    }

    #[test]
    fn the_stoplist_is_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|pair| pair[0] < pair[1]));
    }

    proptest::proptest! {
        #[test]
        fn any_text_tokenizes_without_panicking(text in ".{0,200}") {
            for term in terms(&text) {
                proptest::prop_assert!(!term.is_empty());
            }
        }

        #[test]
        fn any_ascii_word_stems_without_panicking(word in "[a-z]{0,45}") {
            let _ = terms(&word);
        }
    }
}
