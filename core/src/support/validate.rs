//! The envelope scan's fast path: a line checked against JSON's grammar in one pass,
//! its top-level members handed out as it goes.
//!
//! `serde_json` validates a message body it skips at about four instructions a byte,
//! most of them in strings, stopping at every escaped newline of a tool's output. Here a
//! line with no control byte in it (which any line `serde_json` writes has, and JSON
//! allows only as whitespace) needs strings checked only for their quotes and escapes,
//! which `memchr2` finds a vector at a time.
//!
//! The check is sound, not complete: it accepts only text `serde_json` accepts, and
//! says "not sure" (`false`) for everything else — a control byte anywhere, nesting
//! deeper than 128 levels, invalid JSON. The caller then reads the line with
//! `serde_json`, which gives the same answer it always gave, and its error.

/// The deepest nesting walked here, one bit a level; deeper lines are left to `serde_json`.
const MAX_DEPTH: u32 = u128::BITS;

/// What [`object_members`] saw of a line it is sure of.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Checked {
    /// A string holds a `\u` escape of a UTF-16 surrogate (`\ud800` to `\udfff`), paired
    /// or not: only then may the line need its lone surrogates repaired.
    pub surrogate_escape: bool,
}

/// Checks `line` is one JSON object, calling `member` with each of its own keys (as
/// written, escapes and all) and the text of its value. `None` when the line is not
/// surely valid, or when `member` returns `false`.
pub(crate) fn object_members<'a>(line: &'a str, mut member: impl FnMut(&'a str, &'a str) -> bool) -> Option<Checked> {
    let bytes = line.as_bytes();
    if has_control(bytes) {
        return None;
    }
    let mut checked = Checked::default();
    let mut at = expect(bytes, skip_space(bytes, 0), b'{')?;
    at = skip_space(bytes, at);
    if bytes.get(at) == Some(&b'}') {
        return (skip_space(bytes, at + 1) == bytes.len()).then_some(checked);
    }
    loop {
        let key_end = string_end(bytes, expect(bytes, at, b'"')?, &mut checked)?;
        let start = skip_space(bytes, expect(bytes, skip_space(bytes, key_end), b':')?);
        let end = value_end(bytes, start, &mut checked)?;
        let (key, value) = (line.get(at + 1..key_end - 1)?, line.get(start..end)?);
        if !member(key, value) {
            return None;
        }
        at = skip_space(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b'}') => return (skip_space(bytes, at + 1) == bytes.len()).then_some(checked),
            _ => return None,
        }
    }
}

/// Whether any byte is below 0x20. Looked at 32 bytes at a time without stopping early,
/// eight to a word: `(x - 0x20…) & !x & 0x80…` is nonzero exactly when a byte of `x` is
/// below 0x20 (a borrow starts only at such a byte). Compilers turn it into vector adds
/// for x86-64 and WebAssembly alike, where a compare per byte became, in wasm, an
/// extraction per byte.
fn has_control(bytes: &[u8]) -> bool {
    const SPACES: u64 = u64::from_le_bytes([0x20; 8]);
    const HIGH_BITS: u64 = u64::from_le_bytes([0x80; 8]);
    let (chunks, rest) = bytes.as_chunks::<32>();
    chunks.iter().any(|chunk| {
        let (words, _) = chunk.as_chunks::<8>();
        words.iter().fold(0, |any, word| {
            let x = u64::from_le_bytes(*word);
            any | (x.wrapping_sub(SPACES) & !x & HIGH_BITS)
        }) != 0
    }) || rest.iter().any(|&b| b < 0x20)
}

/// Spaces only: a line with a tab or carriage return in it never gets this far.
fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at) == Some(&b' ') {
        at += 1;
    }
    at
}

/// One past `byte` at `at`.
fn expect(bytes: &[u8], at: usize, byte: u8) -> Option<usize> {
    (bytes.get(at) == Some(&byte)).then_some(at + 1)
}

/// One past the closing quote of the string whose content starts at `start`, its
/// escapes checked as JSON defines them (and a surrogate's noted in `checked`).
fn string_end(bytes: &[u8], start: usize, checked: &mut Checked) -> Option<usize> {
    let mut at = start;
    loop {
        let special = next_special(bytes, at)?;
        if bytes[special] == b'"' {
            return Some(special + 1);
        }
        at = match *bytes.get(special + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => special + 2,
            b'u' => {
                let hex = bytes.get(special + 2..special + 6)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                checked.surrogate_escape |= is_surrogate_escape(hex);
                special + 6
            }
            _ => return None,
        };
    }
}

/// Whether the hex digits of a `\u` escape (its first two at least) are a UTF-16
/// surrogate's: `d800` to `dfff`, in either case.
pub(crate) fn is_surrogate_escape(hex: &[u8]) -> bool {
    matches!(hex, [b'd' | b'D', b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F', ..])
}

/// Where the next quote or backslash is, at `at` or after.
pub(crate) fn next_special(bytes: &[u8], at: usize) -> Option<usize> {
    // Tool output escapes a newline every few dozen bytes: the next one is looked for
    // sixteen bytes at a time, inline (one vector compare), before a `memchr2` call,
    // whose cost per call exceeds such a search, takes over for long runs.
    let mut at = at;
    for _ in 0..4 {
        let Some(marks) = bytes.get(at..).and_then(<[u8]>::first_chunk).and_then(|chunk| either_in(chunk, b'"', b'\\')) else { break };
        if marks != 0 {
            return Some(at + marks.trailing_zeros() as usize);
        }
        at += 16;
    }
    Some(at + memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?)
}

/// Where the first byte of `chunk` that is `a` or `b` is, as the lowest set bit of a
/// mask (0: none; the other bits are any), found by one vector compare where the target
/// has one; `None` where it has not, and a search looks instead (a compare per byte
/// costs more than a `memchr` call).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn either_in(chunk: &[u8; 16], a: u8, b: u8) -> Option<u32> {
    let marks = u128::from_le_bytes(chunk.map(|byte| if byte == a || byte == b { 0xff } else { 0 }));
    Some(if marks == 0 { 0 } else { 1 << (marks.trailing_zeros() / 8) })
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline]
pub(crate) fn either_in(chunk: &[u8; 16], a: u8, b: u8) -> Option<u32> {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, u64x2, v128_or};
    // Two 8-byte loads make the vector (built from 16 bytes, it took a lane insert each).
    let word = u128::from_le_bytes(*chunk);
    let bytes = u64x2(word as u64, (word >> 64) as u64);
    Some(u32::from(u8x16_bitmask(v128_or(u8x16_eq(bytes, u8x16_splat(a)), u8x16_eq(bytes, u8x16_splat(b))))))
}

#[cfg(not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))))]
#[inline]
pub(crate) fn either_in(_: &[u8; 16], _: u8, _: u8) -> Option<u32> {
    None
}

/// One past the end of the JSON value starting at `at`. Containers are walked without
/// recursion: bit `d` of `objects` says whether the container at depth `d` is an object.
fn value_end(bytes: &[u8], mut at: usize, checked: &mut Checked) -> Option<usize> {
    let mut objects: u128 = 0;
    let mut depth = 0u32;
    loop {
        match *bytes.get(at)? {
            open @ (b'{' | b'[') => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                let object = open == b'{';
                objects = (objects & !(1 << depth)) | (u128::from(object) << depth);
                depth += 1;
                at = skip_space(bytes, at + 1);
                if bytes.get(at) == Some(if object { &b'}' } else { &b']' }) {
                    at += 1;
                    depth -= 1;
                } else {
                    if object {
                        at = member_value(bytes, at, checked)?;
                    }
                    continue;
                }
            }
            b'"' => at = string_end(bytes, at + 1, checked)?,
            b't' => at = literal(bytes, at, b"true")?,
            b'f' => at = literal(bytes, at, b"false")?,
            b'n' => at = literal(bytes, at, b"null")?,
            _ => at = number_end(bytes, at)?,
        }
        // After a value: close what it ends, or go on to the next one.
        loop {
            if depth == 0 {
                return Some(at);
            }
            at = skip_space(bytes, at);
            let object = objects & (1 << (depth - 1)) != 0;
            match (*bytes.get(at)?, object) {
                (b',', _) => {
                    at = skip_space(bytes, at + 1);
                    if object {
                        at = member_value(bytes, at, checked)?;
                    }
                    break;
                }
                (b'}', true) | (b']', false) => {
                    at += 1;
                    depth -= 1;
                }
                _ => return None,
            }
        }
    }
}

/// Where the value of the object member whose key starts at `at` starts.
fn member_value(bytes: &[u8], at: usize, checked: &mut Checked) -> Option<usize> {
    let key_end = string_end(bytes, expect(bytes, at, b'"')?, checked)?;
    Some(skip_space(bytes, expect(bytes, skip_space(bytes, key_end), b':')?))
}

fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    (bytes.get(at..at + word.len())? == word).then_some(at + word.len())
}

/// One past a number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn number_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    let digits = |from: usize| from + bytes.get(from..).map_or(0, |rest| rest.iter().take_while(|b| b.is_ascii_digit()).count());
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    at = match bytes.get(at)? {
        b'0' => at + 1,
        b'1'..=b'9' => digits(at + 1),
        _ => return None,
    };
    if bytes.get(at) == Some(&b'.') {
        let end = digits(at + 1);
        if end == at + 1 {
            return None;
        }
        at = end;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let end = digits(at);
        if end == at {
            return None;
        }
        at = end;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec::Vec;

    use super::*;

    fn members(line: &str) -> Option<Vec<(&str, &str)>> {
        let mut found = Vec::new();
        object_members(line, |key, value| {
            found.push((key, value));
            true
        })
        .map(|_| found)
    }

    fn serde_accepts(line: &str) -> bool {
        serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok()
    }

    #[test]
    fn hands_out_the_members_of_a_valid_line() {
        let line = r#"{ "type" : "user","message":{"content":[{"text":"a \"}\\ \u00e9\n"},-1.5e-3,0,true,null,[]]},"k\"ey":{} }"#;
        assert_eq!(
            members(line).unwrap(),
            [("type", r#""user""#), ("message", r#"{"content":[{"text":"a \"}\\ \u00e9\n"},-1.5e-3,0,true,null,[]]}"#), (r#"k\"ey"#, "{}")]
        );
        assert_eq!(members("{}").unwrap(), []);
    }

    #[test]
    fn is_never_sure_of_what_serde_refuses() {
        for line in [
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":1e}"#,
            r#"{"a":-}"#,
            r#"{"a":.5}"#,
            r#"{"a":+1}"#,
            r#"{"a":tru}"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"\u12g4"}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":{"b"}}"#,
            r#"{"a":{"b":1,}}"#,
            r#"{"a":[}"#,
            r#"{"a":1}x"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"[1]"#,
            "{\"a\":\"\t\"}",
            "{\"a\":\"x\u{1}\"}",
            r#"{"a":"unterminated}"#,
        ] {
            assert!(!serde_accepts(line) || line.starts_with('['), "serde accepts {line}");
            assert!(members(line).is_none(), "sure of {line}");
        }
    }

    #[test]
    fn leaves_deep_nesting_to_serde() {
        let deep = |levels: usize| alloc::format!("{{\"a\":{}1{}}}", "[".repeat(levels), "]".repeat(levels));
        assert!(members(&deep(MAX_DEPTH as usize)).is_some());
        assert!(members(&deep(MAX_DEPTH as usize + 1)).is_none());
        assert!(serde_accepts(&deep(MAX_DEPTH as usize + 1)));
    }

    /// JSON-ish text: valid pieces and near misses, so both answers come up.
    fn jsonish() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let atom = prop_oneof![
            Just(String::from("0")),
            Just(String::from("-12.5e+3")),
            Just(String::from("01")),
            Just(String::from("1.")),
            Just(String::from("true")),
            Just(String::from("nul")),
            Just(String::from("null")),
            "\"([a-z \\\\\"/]|\\\\[nu\"\\\\x]|\\\\u00[0-9a-fA-F]{2}|é|\t){0,12}\"",
        ];
        atom.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(|items| alloc::format!("[{}]", items.join(","))),
                proptest::collection::vec(("\"[a-z\\\\\"]{0,4}\"", inner.clone()), 0..5).prop_map(|members| {
                    let members: Vec<String> = members.into_iter().map(|(k, v)| alloc::format!("{k} : {v}")).collect();
                    alloc::format!("{{{}}}", members.join(","))
                }),
                (inner, "[ ,:\\]\\}\\[\\{]").prop_map(|(value, junk)| alloc::format!("{value}{junk}")),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// Whatever the text, a line is said to be valid exactly when serde_json reads it
        /// (nesting here is shallow), and then its members are serde_json's.
        #[test]
        fn agrees_with_serde_json(body in jsonish()) {
            let line = alloc::format!("{{\"m\":{body}}}");
            if let Some(found) = members(&line) {
                let read: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&line).unwrap();
                proptest::prop_assert_eq!(found.len(), 1);
                let value: serde_json::Value = serde_json::from_str(found[0].1).unwrap();
                proptest::prop_assert_eq!(&read["m"], &value);
            } else {
                proptest::prop_assert!(!serde_accepts(&line), "refused {line}");
            }
        }

        /// The word-at-a-time look finds a control byte exactly where a byte-by-byte
        /// one does: any byte, any place in a 32-byte chunk or the rest after them.
        #[test]
        fn finds_a_control_byte_as_a_byte_by_byte_look_does(bytes in proptest::collection::vec(
            proptest::prop_oneof![0x1fu8..=0x21, 0x7fu8..=0x81, 0xdfu8..=0xe1, proptest::prelude::any::<u8>()], 0..100)
        ) {
            proptest::prop_assert_eq!(super::has_control(&bytes), bytes.iter().any(|&b| b < 0x20));
        }
    }

    /// The inline look finds the next quote or backslash where `memchr2` does, from
    /// any place, in any of the first chunks or past them, the first of two.
    #[test]
    fn finds_the_next_quote_or_backslash_as_memchr2_does() {
        for len in 0..100 {
            for mark_at in 0..len {
                for mark in [b'"', b'\\'] {
                    let mut bytes = alloc::vec![b'x'; len];
                    bytes[mark_at] = mark;
                    // A second mark after the first, the one not to be found first.
                    if let Some(later) = bytes.get_mut(mark_at + 3) {
                        *later = b'"';
                    }
                    for from in 0..=len {
                        let expected = memchr::memchr2(b'"', b'\\', &bytes[from..]).map(|at| from + at);
                        assert_eq!(super::next_special(&bytes, from), expected, "{len} bytes, {mark} at {mark_at}, from {from}");
                    }
                }
            }
        }
    }

    /// Each byte value, alone among spaces and among bytes that borrow, at each place.
    #[test]
    fn tells_every_byte_value_at_every_place() {
        for filler in [b' ', 0xff, 0x80, 0x21] {
            for at in 0..70 {
                for byte in 0..=255u8 {
                    let mut bytes = [filler; 70];
                    bytes[at] = byte;
                    assert_eq!(super::has_control(&bytes), byte < 0x20, "byte {byte:#x} at {at} among {filler:#x}");
                }
            }
        }
    }
}
