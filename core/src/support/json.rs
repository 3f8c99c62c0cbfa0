//! Reading JSON that the envelope scan already validated. A line is parsed once, in
//! full, when it is read; what is read from its message afterwards (the role, the
//! blocks, a tool call's id) is found by structure alone: strings are skipped by
//! looking for their closing quote with `memchr`, and nothing is decoded that is not
//! asked for. A tool's output is then skipped at memory speed instead of being parsed
//! again at every look.
//!
//! Nothing here validates: on text that is not valid JSON the answer is `None` or
//! meaningless, but nothing panics or reads past the end.
//!
//! [`push_string`] is the other direction: a string written into a line built by hand,
//! escaped as `serde_json` escapes it.

use alloc::borrow::Cow;
use alloc::string::String;

use crate::support::lenient::Str;
use crate::support::validate;

/// The text of a JSON value (not `null`) inside a validated line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    /// `json`, which the caller knows to be valid JSON (it serialised it).
    pub fn valid(json: &'a str) -> Self {
        Self(json)
    }

    pub fn get(self) -> &'a str {
        self.0
    }
}

/// Read by serde as a [`serde_json::value::RawValue`], which serde validates.
impl<'de: 'a, 'a> serde::Deserialize<'de> for Raw<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'de serde_json::value::RawValue>::deserialize(deserializer).map(|raw| Raw(raw.get()))
    }
}

/// Serde for a field that holds JSON the core wrote (a request body, a message's
/// blocks): serialised as the value it is, so no caller parses a string again, and
/// read back from that value. The WIT carries it as text; each binding gives the value.
pub mod as_value {
    use alloc::string::String;

    pub fn serialize<S: serde::Serializer, T: AsRef<str>>(json: &T, serializer: S) -> Result<S::Ok, S::Error> {
        let raw: &serde_json::value::RawValue = serde_json::from_str(json.as_ref()).map_err(serde::ser::Error::custom)?;
        serde::Serialize::serialize(raw, serializer)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>, T: From<String>>(deserializer: D) -> Result<T, D::Error> {
        let raw: alloc::boxed::Box<serde_json::value::RawValue> = serde::Deserialize::deserialize(deserializer)?;
        Ok(T::from(String::from(raw.get())))
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The end of the string whose opening quote is at `start - 1`: one past its closing
/// quote. Tool output escapes a newline every few dozen bytes but rarely has a quote:
/// quotes are looked for, and one after an odd run of backslashes is escaped.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start;
    loop {
        let rest = bytes.get(at..)?;
        // Most strings are short (keys, block types, ids): their quote is found, by one
        // vector compare or a look at each byte, before a `memchr` call would have paid
        // for itself.
        let near = match rest.first_chunk::<SHORT>().and_then(|chunk| validate::either_in(chunk, b'"', b'"')) {
            Some(marks) => (marks != 0).then(|| marks.trailing_zeros() as usize),
            None => rest.iter().take(SHORT).position(|&b| b == b'"'),
        };
        let quote = at
            + match near {
                Some(near) => near,
                None => SHORT + memchr::memchr(b'"', rest.get(SHORT..)?)?,
            };
        let backslashes = bytes[start..quote].iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(quote + 1);
        }
        at = quote + 1;
    }
}

/// How many bytes of a string are looked at one by one before `memchr` takes over.
const SHORT: usize = 16;

/// The end of the value starting at `at`.
pub(crate) fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut at = at;
            loop {
                match bytes.get(at)? {
                    b'"' => {
                        at = string_end(bytes, at + 1)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            let rest = bytes.get(at..)?;
            let len = rest.iter().position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')).unwrap_or(rest.len());
            (len > 0).then_some(at + len)
        }
    }
}

/// Walks the items of the object or array that `json` opens with `open` and closes
/// with `close`: `item` reads the item starting at a byte offset and returns its end.
/// Returns the end of the whole: one past `close`.
fn items(json: &str, open: u8, close: u8, mut item: impl FnMut(usize) -> Option<usize>) -> Option<usize> {
    let bytes = json.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&open) {
        return None;
    }
    at = skip_space(bytes, at + 1);
    if bytes.get(at) == Some(&close) {
        return Some(at + 1);
    }
    loop {
        at = skip_space(bytes, item(at)?);
        match *bytes.get(at)? {
            b',' => at = skip_space(bytes, at + 1),
            byte if byte == close => return Some(at + 1),
            _ => return None,
        }
    }
}

/// Walks the object `json` starts with: `field` gets each key (decoded) and the offset
/// its value starts at, reads the value where it lies and returns its end. Returns the
/// object's end, so a value is read in the same pass that finds it (see
/// [`crate::scan`]'s messages and blocks).
pub(crate) fn walk_object(json: &str, mut field: impl FnMut(&str, usize) -> Option<usize>) -> Option<usize> {
    walk_members(json, |key, start| field(&key, start))
}

/// [`walk_object`], each key handed over to keep: borrowed from `json` unless it has
/// escapes.
fn walk_members<'a>(json: &'a str, mut member: impl FnMut(Cow<'a, str>, usize) -> Option<usize>) -> Option<usize> {
    let bytes = json.as_bytes();
    items(json, b'{', b'}', |at| {
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, at + 1)?;
        let key_raw = json.get(at + 1..key_end - 1)?;
        let key: Cow<str> = if key_raw.contains('\\') {
            Cow::Owned(serde_json::from_str::<String>(json.get(at..key_end)?).ok()?)
        } else {
            Cow::Borrowed(key_raw)
        };
        let colon = skip_space(bytes, key_end);
        if bytes.get(colon) != Some(&b':') {
            return None;
        }
        member(key, skip_space(bytes, colon + 1))
    })
}

/// Walks the array `json` starts with, as [`walk_object`] walks an object.
pub(crate) fn walk_array(json: &str, element: impl FnMut(usize) -> Option<usize>) -> Option<usize> {
    items(json, b'[', b']', element)
}

/// A field's value as a lenient string: borrowed when it has no escapes, nothing
/// when it is no string.
pub(crate) fn str_value(value: &str) -> Str<'_> {
    match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) if memchr::memchr(b'\\', inner.as_bytes()).is_none() => Str(Some(Cow::Borrowed(inner))),
        Some(_) => Str(serde_json::from_str::<String>(value).ok().map(Cow::Owned)),
        None => Str(None),
    }
}

/// A field's value as raw JSON; nothing for `null`, as serde reads an absent value.
pub(crate) fn raw_value(value: &str) -> Option<Raw<'_>> {
    (value != "null").then_some(Raw(value))
}

/// The values (as text) of the members named `keys` of the object `json` starts with,
/// each `None` when absent, and the object's length; `None` when it is no object or
/// repeats one of `keys` (as serde refuses a duplicate field).
pub(crate) fn fields_named<'a, const N: usize>(json: &'a str, keys: [&str; N]) -> Option<([Option<&'a str>; N], usize)> {
    let mut fields = [None; N];
    let len = walk_object(json, |key, start| {
        let end = value_end(json.as_bytes(), start)?;
        if let Some(slot) = keys.iter().position(|k| *k == key) {
            once(&mut fields[slot], json.get(start..end)?)?;
        }
        Some(end)
    })?;
    Some((fields, len))
}

/// Sets `slot` to `value` the first time; `None` (a refusal, as serde refuses a
/// duplicate field) the second.
pub(crate) fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    match slot {
        Some(_) => None,
        None => {
            *slot = Some(value);
            Some(())
        }
    }
}

/// `text` as a JSON string (quoted and escaped exactly as `serde_json` writes it) at the
/// end of `out`. Runs of bytes that need no escape are copied whole, found 32 bytes at
/// a time and then eight.
pub(crate) fn push_string(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut at = 0;
    // Prose and code go 32 bytes at a time (four words' tests joined, one branch), the
    // rest of a run eight at a time. Where 32 bytes hold an escape, the wide look waits
    // until it is written: text dense with escapes (a tool's output) pays for one
    // failed wide look per escape, not one per word.
    let mut wide = true;
    while at < bytes.len() {
        if wide && let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<32>) {
            if chunk.as_chunks::<8>().0.iter().fold(0, |any, word| any | escape_bits(u64::from_le_bytes(*word))) == 0 {
                at += 32;
                continue;
            }
            wide = false;
        }
        if let Some(&chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>)
            && escape_bits(u64::from_le_bytes(chunk)) == 0
        {
            at += 8;
            continue;
        }
        let byte = bytes[at];
        let escape = ESCAPE[byte as usize];
        if escape != 0 {
            out.push_str(&text[copied..at]);
            match escape {
                b'u' => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.push_str("\\u00");
                    out.push(char::from(HEX[usize::from(byte >> 4)]));
                    out.push(char::from(HEX[usize::from(byte & 0xf)]));
                }
                short => {
                    out.push('\\');
                    out.push(char::from(short));
                }
            }
            copied = at + 1;
            wide = true;
        }
        at += 1;
    }
    out.push_str(&text[copied..]);
    out.push('"');
}

/// The JSON string `value` (quotes and all) at the end of `out`, as [`push_string`]
/// writes its text: copied as it is when its escapes are the ones `push_string`
/// writes (as a JSON writer's are), else decoded and written again. `None` when it is
/// no string.
pub(crate) fn push_string_value(out: &mut String, value: &str) -> Option<()> {
    if escaped_as_written(value) {
        out.push_str(value);
    } else {
        push_string(out, &str_value(value).0?);
    }
    Some(())
}

/// The JSON value at the start of `json` (of a validated line) at the end of `out`,
/// written as `serde_json` writes it after reading it into a `Value`: compact, each
/// object's keys in byte order, strings as [`push_string`] writes them. A block stored
/// by Claude Code (its type first) is sent to a model in the form Mneme has always sent
/// it, without a tree of the block being built. Returns where the value ends in
/// `json`; `None`, with `out` partly written, for what a `Value` might write otherwise:
/// a number other than an integer of up to 18 digits (`1.50` becomes `1.5`, `-0`
/// becomes `-0.0`), a repeated key (the last one wins), an object keyed by
/// [`SERDE_RAW_VALUE_KEY`], nesting deeper than [`CANONICAL_DEPTH`] (`serde_json` stops
/// at 128), a string `serde_json` would refuse (a lone surrogate), or no JSON at all.
pub(crate) fn push_canonical(out: &mut String, json: &str) -> Option<usize> {
    let start = skip_space(json.as_bytes(), 0);
    canonical_at(out, json, start, CANONICAL_DEPTH)
}

/// How deep [`push_canonical`] follows containers.
const CANONICAL_DEPTH: u32 = 100;

/// The key by which `serde_json` (with its `raw_value` feature, which the workspace
/// turns on) marks an object as standing for the JSON in its string: read into a
/// `Value`, `{"$serde_json::private::RawValue": "1.50"}` becomes `1.5`.
pub(crate) const SERDE_RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

/// [`push_canonical`] of the value starting at `at`: its end.
fn canonical_at(out: &mut String, json: &str, at: usize, depth: u32) -> Option<usize> {
    let bytes = json.as_bytes();
    match *bytes.get(at)? {
        b'"' => {
            let end = string_end(bytes, at + 1)?;
            push_string_value(out, json.get(at..end)?)?;
            Some(end)
        }
        b'[' => {
            let depth = depth.checked_sub(1)?;
            out.push('[');
            let mut first = true;
            let len = walk_array(json.get(at..)?, |start| {
                if !core::mem::take(&mut first) {
                    out.push(',');
                }
                canonical_at(out, json, at + start, depth).map(|end| end - at)
            })?;
            out.push(']');
            Some(at + len)
        }
        b'{' => {
            let depth = depth.checked_sub(1)?;
            let mut members: alloc::vec::Vec<(Cow<'_, str>, usize)> = alloc::vec::Vec::new();
            let object = json.get(at..)?;
            let len = walk_members(object, |key, value| {
                members.push((key, at + value));
                value_end(object.as_bytes(), value)
            })?;
            members.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            if members.windows(2).any(|pair| pair[0].0 == pair[1].0) || members.iter().any(|(key, _)| key == SERDE_RAW_VALUE_KEY) {
                return None;
            }
            out.push('{');
            for (n, (key, value)) in members.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                push_string(out, key);
                out.push(':');
                canonical_at(out, json, *value, depth)?;
            }
            out.push('}');
            Some(at + len)
        }
        b't' | b'f' | b'n' => {
            let end = value_end(bytes, at)?;
            let word = json.get(at..end)?;
            matches!(word, "true" | "false" | "null").then(|| out.push_str(word))?;
            Some(end)
        }
        _ => {
            let end = value_end(bytes, at)?;
            let number = json.get(at..end)?;
            let digits = number.strip_prefix('-').unwrap_or(number);
            let integer = digits.len() <= 18
                && digits.bytes().all(|b| b.is_ascii_digit())
                && (digits == "0" && number == digits || digits.as_bytes().first().is_some_and(|b| (b'1'..=b'9').contains(b)));
            integer.then(|| out.push_str(number))?;
            Some(end)
        }
    }
}

/// How many characters the JSON string `value` (quotes and all, of a validated line)
/// decodes to, counted without decoding it: a tool's output escapes a newline every
/// few dozen bytes, and decoding it only to count its characters cost more than
/// reading the rest of the context. `None` for what `serde_json` would refuse to
/// decode (an unknown escape, a lone surrogate) or no string at all.
pub(crate) fn string_chars(value: &str) -> Option<usize> {
    let inner = value.as_bytes().strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    let mut chars = inner.len() - continuation_bytes(inner);
    let hex = |at: usize| -> Option<u32> {
        let digits = inner.get(at..at + 4)?;
        digits.iter().try_fold(0, |code, &digit| Some(code * 16 + char::from(digit).to_digit(16)?))
    };
    let mut at = 0;
    // Inside a string every quote is escaped: the next special byte is a backslash.
    while let Some(escape) = validate::next_special(inner, at) {
        if inner.get(escape) != Some(&b'\\') {
            return None;
        }
        let len = match *inner.get(escape + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
            b'u' => match hex(escape + 2)? {
                0xd800..=0xdbff => match (inner.get(escape + 6..escape + 8), hex(escape + 8)) {
                    (Some(b"\\u"), Some(0xdc00..=0xdfff)) => 12,
                    _ => return None,
                },
                0xdc00..=0xdfff => return None,
                _ => 6,
            },
            _ => return None,
        };
        chars = chars.saturating_sub(len - 1);
        at = escape + len;
    }
    Some(chars)
}

/// How many bytes of `bytes` continue a UTF-8 sequence (`10xxxxxx`): the rest each
/// start a character. Eight at a time: a byte continues one when its top bit is set
/// and the next one down is not.
fn continuation_bytes(bytes: &[u8]) -> usize {
    const TOP_BITS: u64 = u64::from_le_bytes([0x80; 8]);
    let (words, rest) = bytes.as_chunks::<8>();
    let continuing = |x: u64| (x & !(x << 1) & TOP_BITS).count_ones() as usize;
    words.iter().map(|word| continuing(u64::from_le_bytes(*word))).sum::<usize>() + rest.iter().filter(|&&b| b & 0xc0 == 0x80).count()
}

/// Whether string `value` (of a validated line: no control byte in it) is exactly what
/// [`push_string`] writes for its text: every escape is the one [`ESCAPE`] gives the
/// byte it stands for, and no other byte is escaped.
pub(crate) fn escaped_as_written(value: &str) -> bool {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let Some(inner) = value.as_bytes().strip_prefix(b"\"").and_then(|v| v.strip_suffix(b"\"")) else { return false };
    let mut at = 0;
    while let Some(escape) = validate::next_special(inner, at) {
        if inner.get(escape) != Some(&b'\\') {
            return false;
        }
        let (byte, len) = match inner.get(escape + 1) {
            Some(b'u') => match inner.get(escape + 2..escape + 6) {
                Some([b'0', b'0', high, low]) => match (HEX.iter().position(|h| h == high), HEX.iter().position(|h| h == low)) {
                    (Some(high), Some(low)) => ((high * 16 + low) as u8, 6),
                    _ => return false,
                },
                _ => return false,
            },
            Some(b'b') => (0x08, 2),
            Some(b't') => (0x09, 2),
            Some(b'n') => (0x0a, 2),
            Some(b'f') => (0x0c, 2),
            Some(b'r') => (0x0d, 2),
            Some(b'"') => (b'"', 2),
            Some(b'\\') => (b'\\', 2),
            _ => return false,
        };
        let written = ESCAPE[byte as usize];
        if written == 0 || (written == b'u') != (len == 6) {
            return false;
        }
        at = escape + len;
    }
    true
}

/// Nonzero when any of the eight bytes of `word` needs an escape: a control
/// character, `"` or `\` (the zero-byte tests of "Bit Twiddling Hacks", exact for
/// "any").
fn escape_bits(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |v: u64| v.wrapping_sub(ONES) & !v;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    (below_space | zero_bytes(word ^ (ONES * u64::from(b'"'))) | zero_bytes(word ^ (ONES * u64::from(b'\\')))) & HIGH
}

/// For each byte, what follows the backslash that escapes it (`u` for `\u00XX`), or 0
/// for a byte written as is.
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

#[cfg(test)]
mod tests {
    use alloc::string::ToString;
    use alloc::vec::Vec;

    use super::*;

    /// A string's end is its first quote no backslash escapes, wherever it falls: in
    /// the first sixteen bytes (looked at inline) or past them, after runs of
    /// backslashes of either parity.
    #[test]
    fn a_string_ends_at_its_first_unescaped_quote() {
        let naive = |bytes: &[u8]| {
            let mut at = 1;
            while at < bytes.len() {
                match bytes[at] {
                    b'\\' => at += 2,
                    b'"' => return Some(at + 1),
                    _ => at += 1,
                }
            }
            None
        };
        for len in 0..40 {
            for escapes in 0..4 {
                for at in 0..=len {
                    let mut text = alloc::vec![b'x'; len];
                    text.splice(at..at, core::iter::repeat_n(b'\\', escapes));
                    let mut bytes = alloc::vec![b'"'];
                    bytes.extend_from_slice(&text);
                    for tail in [&b""[..], b"\"", b"\",\"k\":\"v\""] {
                        let mut string = bytes.clone();
                        string.extend_from_slice(tail);
                        assert_eq!(string_end(&string, 1), naive(&string), "{}", String::from_utf8_lossy(&string));
                    }
                }
            }
        }
    }

    /// Calls `field` with each key (decoded) and value text of object `json`, in order;
    /// `None` if `json` is no object or `field` refuses one.
    fn fields<'a>(json: &'a str, mut field: impl FnMut(&str, &'a str) -> Option<()>) -> Option<()> {
        walk_object(json, |key, start| {
            let end = value_end(json.as_bytes(), start)?;
            field(key, json.get(start..end)?)?;
            Some(end)
        })
        .map(drop)
    }

    /// Calls `element` with the text of each element of array `json`, in order; `None` if
    /// `json` is no array or `element` refuses one.
    fn elements<'a>(json: &'a str, mut element: impl FnMut(&'a str) -> Option<()>) -> Option<()> {
        walk_array(json, |at| {
            let end = value_end(json.as_bytes(), at)?;
            element(json.get(at..end)?)?;
            Some(end)
        })
        .map(drop)
    }

    fn all_fields(json: &str) -> Option<Vec<(String, &str)>> {
        let mut found = Vec::new();
        fields(json, |key, value| {
            found.push((String::from(key), value));
            Some(())
        })
        .map(|()| found)
    }

    #[test]
    fn finds_fields_by_structure() {
        let json =
            r#" { "role" : "user", "content":[{"type":"text","text":"a \"}] quote"},{"n":[1,{"x":null}]}], "k\u0065y":-1.5e3,"t":true}"#;
        let found = all_fields(json).unwrap();
        let keys: Vec<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["role", "content", "key", "t"]);
        assert_eq!(found[1].1, r#"[{"type":"text","text":"a \"}] quote"},{"n":[1,{"x":null}]}]"#);
        assert_eq!((found[2].1, found[3].1), ("-1.5e3", "true"));
        let mut texts = Vec::new();
        elements(found[1].1, |block| {
            texts.push(block);
            Some(())
        })
        .unwrap();
        assert_eq!(texts, [r#"{"type":"text","text":"a \"}] quote"}"#, r#"{"n":[1,{"x":null}]}"#]);
        assert_eq!(str_value(r#""a \"b\"""#).get(), Some("a \"b\""));
        assert_eq!((str_value("\"plain\"").get(), str_value("7").get()), (Some("plain"), None));
        assert_eq!(raw_value("null"), None);
        assert_eq!(all_fields("{}"), Some(Vec::new()));
    }

    #[test]
    fn refuses_what_is_not_an_object_and_never_reads_past_the_end() {
        let json = r#"{"a":"x","b":[1,{"c":"\\"}],"d":{"e":"f"}}"#;
        for cut in 0..json.len() {
            assert_eq!(all_fields(&json[..cut]), None, "cut at {cut}");
        }
        assert!(all_fields(json).is_some());
        assert_eq!(all_fields("[1]"), None);
        assert_eq!(elements("{}", |_| Some(())), None);
    }

    fn pushed(text: &str) -> String {
        let mut out = String::new();
        push_string(&mut out, text);
        out
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        // Every ASCII byte at every place of a 32-byte run, of an eight-byte word after
        // it, and in the tail after that; and a second one anywhere after the first
        // (the wide look resumes after an escape).
        for byte in 0u8..0x80 {
            for at in 0..48 {
                let text = alloc::format!("{}{}{}", "a".repeat(at), char::from(byte), "b".repeat(47 - at));
                assert_eq!(pushed(&text), serde_json::to_string(&text).unwrap(), "byte {byte:#x} at {at}");
            }
        }
        for first in 0..48 {
            for second in first + 1..96 {
                let mut text = alloc::vec![b'a'; 96];
                (text[first], text[second]) = (b'\n', b'"');
                let text = String::from_utf8(text).unwrap();
                assert_eq!(pushed(&text), serde_json::to_string(&text).unwrap(), "escapes at {first} and {second}");
            }
        }
        for text in ["", "é🎉\u{2028}\u{7f}", "\"\\\n", "plain"] {
            assert_eq!(pushed(text), serde_json::to_string(text).unwrap());
        }
    }

    fn canonical(json: &str) -> Option<(String, usize)> {
        let mut out = String::new();
        push_canonical(&mut out, json).map(|len| (out, len))
    }

    #[test]
    fn a_value_is_written_as_serde_json_writes_it_or_not_at_all() {
        let block = r#"{ "type":"tool_use","id":"t\u00e9\/1","input":{"z":[1,-2,0,true,null],"a":"\u001f\n"},"name":"Bash" } tail"#;
        let (written, len) = canonical(block).unwrap();
        assert_eq!(written, serde_json::from_str::<serde_json::Value>(&block[..len]).unwrap().to_string());
        assert_eq!(&block[len..], " tail");
        for unsure in [
            r#"{"a":1.5}"#,
            r#"{"a":1e3}"#,
            r#"[-0]"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a\u0062":1,"ab":2}"#,
            r#""\ud800""#,
            "[1234567890123456789]",
            r#"{"$serde_json::private::RawValue":"1.50"}"#,
            r#"[{"b":1,"$serde_json::private::Raw\u0056alue":"{}"}]"#,
        ] {
            assert_eq!(canonical(unsure), None, "{unsure}");
        }
        let deep = alloc::format!("{}1{}", "[".repeat(CANONICAL_DEPTH as usize), "]".repeat(CANONICAL_DEPTH as usize));
        assert!(canonical(&deep).is_some());
        assert_eq!(canonical(&alloc::format!("[{deep}]")), None);
    }

    /// Whether an object in `json` has a key twice (decoded).
    fn has_repeated_key(json: &str) -> bool {
        let bytes = json.as_bytes();
        let mut repeated = false;
        let mut keys: Vec<String> = Vec::new();
        let walked = walk_object(json, |key, start| {
            repeated |= keys.iter().any(|k| k == key);
            keys.push(String::from(key));
            let end = value_end(bytes, start)?;
            repeated |= has_repeated_key(&json[start..end]);
            Some(end)
        })
        .or_else(|| {
            walk_array(json, |start| {
                let end = value_end(bytes, start)?;
                repeated |= has_repeated_key(&json[start..end]);
                Some(end)
            })
        });
        walked.is_some() && repeated
    }

    /// JSON text as writers other than `serde_json` write it: keys in any order and
    /// sometimes repeated, spaces, escapes of every kind, numbers of every form.
    fn any_json() -> impl proptest::strategy::Strategy<Value = String> {
        use alloc::vec;
        use proptest::prelude::*;
        let string = "\"([a-z é🎉/]|\\\\[nt\"\\\\/bfr]|\\\\u00[01][0-9a-f]|\\\\u00e9|\\\\u2028|\\\\ud83c\\\\udf89|\\\\ud800){0,8}\"";
        let atom = prop_oneof![
            Just(String::from("0")),
            Just(String::from("-0")),
            Just(String::from("-17")),
            Just(String::from("123456789012345678")),
            Just(String::from("1234567890123456789")),
            Just(String::from("2.50")),
            Just(String::from("1e2")),
            Just(String::from("true")),
            Just(String::from("false")),
            Just(String::from("null")),
            string.prop_map(String::from),
        ];
        atom.prop_recursive(4, 48, 5, move |inner| {
            prop_oneof![
                (proptest::collection::vec(inner.clone(), 0..5), " ?")
                    .prop_map(|(items, space)| alloc::format!("[{space}{}]", items.join(","))),
                proptest::collection::vec(
                    ("\"(type|id|a|b|\\\\u0061|é|text|content|\\$serde_json::private::RawValue)\"", " ?", inner),
                    0..5
                )
                .prop_map(|members| {
                    let members: Vec<String> = members.into_iter().map(|(k, space, v)| alloc::format!("{k}{space}:{space}{v}")).collect();
                    alloc::format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn any_string_is_escaped_as_serde_json_escapes_it(text in ".*") {
            proptest::prop_assert_eq!(pushed(&text), serde_json::to_string(&text).unwrap());
        }

        /// A string's characters are counted as decoding it counts them, and not
        /// counted only where decoding it fails.
        #[test]
        fn a_string_is_counted_as_decoded(
            value in "\"([a-zé🎉]|\\\\[nt\"\\\\/bfr]|\\\\u00[0-9a-f]{2}|\\\\u[0-9a-fA-F]{4}|\\\\u[dD][89abAB][0-9a-f]{2}\\\\u[dD][c-fC-F][0-9a-f]{2}|\\\\x){0,12}\""
        ) {
            let decoded = serde_json::from_str::<String>(&value).ok().map(|text| text.chars().count());
            proptest::prop_assert_eq!(string_chars(&value), decoded);
        }

        /// Whatever the JSON, what is written is what a `Value` of it writes; and where
        /// nothing is written, only because the `Value` might write otherwise.
        #[test]
        fn any_value_is_written_as_a_value_of_it_writes_it(json in any_json()) {
            let read = serde_json::from_str::<serde_json::Value>(&json);
            match canonical(&json) {
                Some((written, len)) => {
                    proptest::prop_assert_eq!(len, json.len());
                    proptest::prop_assert_eq!(written, read.unwrap().to_string());
                }
                None => {
                    let doubtful = ["-0", "2.50", "1e2", "1234567890123456789", "\\ud800", "RawValue"].iter().any(|d| json.contains(d));
                    proptest::prop_assert!(doubtful || read.is_err() || has_repeated_key(&json), "refused {}", json);
                }
            }
        }
    }
}
