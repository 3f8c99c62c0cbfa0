//! Reading Claude Code JSONL: tolerant, and never silent about what it skipped.

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::value::RawValue;

/// One line of a transcript, with the fields every consumer needs lifted out and the
/// line itself kept verbatim (fields Mneme does not know survive untouched).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// 1-based line number in the file.
    pub line: u32,
    /// The entry's `type` (`user`, `assistant`, `system`, `summary`, `progress`, ...).
    pub kind: String,
    pub uuid: Option<String>,
    pub parent_uuid: Option<String>,
    pub session_id: Option<String>,
    pub timestamp: Option<String>,
    /// `message.role`, for entries that carry a message.
    pub role: Option<String>,
    /// The message's text: a string content, or its `text` blocks joined by newlines.
    pub text: String,
    /// The line exactly as stored, without its newline.
    pub raw: String,
}

/// A line the reader could not use, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkippedLine {
    pub line: u32,
    pub reason: String,
}

/// What a load found besides the entries.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LoadReport {
    pub skipped: Vec<SkippedLine>,
    /// The file does not end in a newline: its last line was cut off mid-write.
    pub torn_tail: bool,
}

/// A loaded session: its entries in file order and the report of the load.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Transcript {
    pub entries: Vec<Entry>,
    pub report: LoadReport,
    /// Lines in the file, blank and skipped ones and a torn tail included.
    pub lines: u32,
}

/// The fields the core reads from every line. Strings borrow from the input where they
/// contain no escapes; the message body stays raw JSON until its text is asked for.
#[derive(Deserialize)]
pub(crate) struct Envelope<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub uuid: Option<Cow<'a, str>>,
    #[serde(rename = "parentUuid", alias = "parent_uuid", borrow)]
    pub parent_uuid: Option<Cow<'a, str>>,
    #[serde(rename = "sessionId", alias = "session_id", borrow)]
    pub session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub message: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow)]
    content: Option<Content<'a>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Content<'a> {
    #[serde(borrow)]
    Text(Cow<'a, str>),
    #[serde(borrow)]
    Blocks(Vec<Block<'a>>),
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

/// Splits `bytes` into lines, parses each, and reports every line it could not use.
/// Blank lines are ignored silently; nothing here panics on any input.
pub fn parse(bytes: &[u8]) -> Transcript {
    let mut transcript = Transcript::default();
    let mut start = 0;
    let mut line_no: u32 = 0;
    while start < bytes.len() {
        line_no += 1;
        let (line, next) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(at) => (&bytes[start..start + at], start + at + 1),
            None => {
                transcript.report.torn_tail = true;
                (&bytes[start..], bytes.len())
            }
        };
        start = next;
        transcript.lines = line_no;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match parse_line(line, line_no) {
            Ok(entry) => transcript.entries.push(entry),
            Err(reason) => transcript.report.skipped.push(SkippedLine {
                line: line_no,
                reason,
            }),
        }
    }
    transcript
}

fn parse_line(line: &[u8], line_no: u32) -> Result<Entry, String> {
    let text = core::str::from_utf8(line)
        .map_err(|e| alloc::format!("invalid UTF-8 at byte {}", e.valid_up_to()))?;
    entry_from_line(text, line_no)
}

pub(crate) fn entry_from_line(text: &str, line_no: u32) -> Result<Entry, String> {
    let envelope: Envelope =
        serde_json::from_str(text).map_err(|e| alloc::format!("not a transcript entry: {e}"))?;
    let (role, body) = match envelope.message {
        Some(raw) => message_text(raw),
        None => (None, String::new()),
    };
    Ok(Entry {
        line: line_no,
        kind: envelope.kind.map(Cow::into_owned).unwrap_or_default(),
        uuid: envelope.uuid.map(Cow::into_owned),
        parent_uuid: envelope.parent_uuid.map(Cow::into_owned),
        session_id: envelope.session_id.map(Cow::into_owned),
        timestamp: envelope.timestamp.map(Cow::into_owned),
        role,
        text: body,
        raw: text.to_string(),
    })
}

/// A message whose body is not the expected shape still loads; it just has no text.
fn message_text(raw: &RawValue) -> (Option<String>, String) {
    let Ok(message) = serde_json::from_str::<Message>(raw.get()) else {
        return (None, String::new());
    };
    let text = match message.content {
        Some(Content::Text(text)) => text.into_owned(),
        Some(Content::Blocks(blocks)) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.kind.as_deref() == Some("text"))
                .filter_map(|b| b.text.as_deref())
                .collect();
            texts.join("\n")
        }
        None => String::new(),
    };
    (message.role.map(Cow::into_owned), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_entries_and_reports_bad_lines() {
        let input = b"{\"type\":\"user\",\"uuid\":\"a\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n\
            not json\n\
            \n\
            {\"type\":\"assistant\",\"uuid\":\"b\",\"parentUuid\":\"a\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hello\"},{\"type\":\"tool_use\",\"id\":\"t\"}]}}\n\
            \xff\xfe\n\
            {\"type\":\"user\",\"uu";
        let t = parse(input);
        assert_eq!(t.entries.len(), 2);
        assert_eq!(t.entries[0].text, "hi");
        assert_eq!(t.entries[1].text, "hello");
        assert_eq!(t.entries[1].parent_uuid.as_deref(), Some("a"));
        assert_eq!(t.entries[1].line, 4);
        let lines: Vec<u32> = t.report.skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, [2, 5, 6]);
        assert!(t.report.skipped[1].reason.contains("UTF-8"));
        assert!(t.report.torn_tail);
    }

    #[test]
    fn reads_cersei_snake_case() {
        let t = parse(
            b"{\"type\":\"user\",\"uuid\":\"b\",\"parent_uuid\":\"a\",\"session_id\":\"s\"}\n",
        );
        assert_eq!(t.entries[0].parent_uuid.as_deref(), Some("a"));
        assert_eq!(t.entries[0].session_id.as_deref(), Some("s"));
        assert!(!t.report.torn_tail);
    }
}
