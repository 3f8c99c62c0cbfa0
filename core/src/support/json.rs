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
        // Most strings are short (keys, block types, ids): their quote is found before a
        // `memchr` call would have paid for itself.
        let quote = at
            + match rest.iter().take(SHORT).position(|&b| b == b'"') {
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
/// [`crate::transcript::scan`]'s messages and blocks).
pub(crate) fn walk_object(json: &str, mut field: impl FnMut(&str, usize) -> Option<usize>) -> Option<usize> {
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
        field(&key, skip_space(bytes, colon + 1))
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
/// end of `out`. Runs of bytes that need no escape are copied whole, found eight bytes
/// at a time.
pub(crate) fn push_string(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        if let Some(&chunk) = bytes.get(at..).and_then(|rest| rest.first_chunk::<8>())
            && !needs_escape(u64::from_le_bytes(chunk))
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

/// Whether string `value` (of a validated line: no control byte in it) is exactly what
/// [`push_string`] writes for its text: every escape is the one [`ESCAPE`] gives the
/// byte it stands for, and no other byte is escaped.
pub(crate) fn escaped_as_written(value: &str) -> bool {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let Some(inner) = value.as_bytes().strip_prefix(b"\"").and_then(|v| v.strip_suffix(b"\"")) else { return false };
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'\\', inner.get(at..).unwrap_or_default()) {
        let escape = at + found;
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

/// Whether any of the eight bytes of `word` needs an escape: a control character, `"`
/// or `\` (the zero-byte tests of "Bit Twiddling Hacks", exact for "any").
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGH != 0;
    below_space || has_zero(word ^ (ONES * u64::from(b'"'))) || has_zero(word ^ (ONES * u64::from(b'\\')))
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
    use alloc::vec::Vec;

    use super::*;

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
        // Every ASCII byte at every place of an eight-byte word, and in the tail after it.
        for byte in 0u8..0x80 {
            for at in 0..20 {
                let text = alloc::format!("{}{}{}", "a".repeat(at), char::from(byte), "b".repeat(19 - at));
                assert_eq!(pushed(&text), serde_json::to_string(&text).unwrap(), "byte {byte:#x} at {at}");
            }
        }
        for text in ["", "é🎉\u{2028}\u{7f}", "\"\\\n", "plain"] {
            assert_eq!(pushed(text), serde_json::to_string(text).unwrap());
        }
    }

    proptest::proptest! {
        #[test]
        fn any_string_is_escaped_as_serde_json_escapes_it(text in ".*") {
            proptest::prop_assert_eq!(pushed(&text), serde_json::to_string(&text).unwrap());
        }
    }
}
