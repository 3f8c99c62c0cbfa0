//! Sessions in and out of a store: another agent's transcript imported as a session
//! (the original is only read; the new session says where it came from), and a
//! session exported in another agent's format.
//!
//! One rule per direction. An import keeps a transcript Mneme can write in its own
//! dialect as it is — a Claude Code file byte for byte, a pi file migrated to v3 as pi
//! migrates it — and converts any other (Codex CLI, Gemini CLI, OpenAI messages) to
//! canonical messages written as one Claude Code turn, each message at its own time.
//! An export gives a session in its own dialect as it is, and in any other as the
//! conversation it resumes to.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Value, json};

use crate::dialect::Header;
use crate::dialect::canonical;
use crate::error::Error;
use crate::format::{Format, Marker};
use crate::keys;
use crate::message::calls::{PendingCalls, without_unanswerable};
use crate::message::{Block, BlockKind, Message, Meta, Provider, Role, Usage, input};
use crate::scan::Line;
use crate::sessions::Sessions;
use crate::sessions::with_loaded;
use crate::storage::Storage;
use crate::support::time;
use crate::transcript::context::Sources;
use crate::transcript::render;

pub(crate) mod codex;
pub(crate) mod gemini;
pub(crate) mod markdown;
pub(crate) mod pi_versions;

/// What wrote a transcript being imported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Claude Code's session JSONL.
    Claude,
    /// pi-coding-agent's session JSONL, any version (v1 and v2 are migrated to v3).
    Pi,
    /// Codex CLI's rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    Codex,
    /// Gemini CLI's chat: the JSONL recording or the older single JSON file.
    Gemini,
    /// A JSON array of OpenAI chat messages (or `{"messages": [...]}`).
    Openai,
}

impl Source {
    pub const ALL: [Source; 5] = [Source::Claude, Source::Pi, Source::Codex, Source::Gemini, Source::Openai];

    pub fn as_str(self) -> &'static str {
        match self {
            Source::Claude => "claude",
            Source::Pi => "pi",
            Source::Codex => "codex",
            Source::Gemini => "gemini",
            Source::Openai => "openai",
        }
    }

    pub fn parse(text: &str) -> Result<Source, Error> {
        Source::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| Error::InvalidArgument(format!("unknown transcript source `{text}`: use claude, pi, codex, gemini or openai")))
    }
}

/// The format a session is exported in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// Claude Code's session JSONL (`claude --resume` reads it).
    Claude,
    /// pi's v3 session JSONL (`pi --session FILE` reads it).
    Pi,
    /// A JSON array of OpenAI chat messages: the resumed context.
    Openai,
    /// A readable Markdown transcript.
    Markdown,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 4] = [ExportFormat::Claude, ExportFormat::Pi, ExportFormat::Openai, ExportFormat::Markdown];

    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Claude => "claude",
            ExportFormat::Pi => "pi",
            ExportFormat::Openai => "openai",
            ExportFormat::Markdown => "markdown",
        }
    }

    pub fn parse(text: &str) -> Result<ExportFormat, Error> {
        ExportFormat::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| Error::InvalidArgument(format!("unknown export format `{text}`: use claude, pi, openai or markdown")))
    }
}

/// A transcript to import as a new session.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Import {
    /// The transcript's bytes, as the other tool wrote them.
    pub data: Vec<u8>,
    /// What wrote it; `None` to tell from the content.
    pub source: Option<Source>,
    /// The new session's id; `None` for the transcript's own (Claude Code resumes only
    /// UUIDs; Codex, Gemini and pi ids are UUIDs).
    pub id: Option<String>,
    /// The working directory the session is filed under; `None` for the transcript's
    /// own (Gemini CLI and OpenAI messages record none).
    pub cwd: Option<String>,
    /// Where the transcript came from (its path), recorded in the new session.
    pub origin: String,
    /// A fresh UUID from the host: the first new line's id, the others derived from it.
    pub uuid: String,
    /// When the import happens, Unix milliseconds.
    pub now_ms: i64,
}

/// What an import wrote.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Imported {
    pub id: String,
    pub project: String,
    pub source: Source,
    /// The dialect the new session is written in.
    pub format: Format,
    /// Messages in the new session's resumed context.
    pub message_count: u32,
    /// Records of the transcript that carry content but were not carried over (Codex
    /// reasoning and developer messages, Gemini thoughts and notices, system messages,
    /// results of calls the transcript never made, unreadable lines), each counted.
    pub skipped: u32,
    /// The pi format version the transcript was migrated from.
    pub migrated_from: Option<u32>,
    /// What the new session's last line records of its origin, as JSON text:
    /// `{"source", "origin", "migratedFrom"?}`.
    #[serde(with = "crate::support::json::as_value")]
    pub provenance: String,
}

/// A session in another format.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Exported {
    pub format: ExportFormat,
    pub data: Vec<u8>,
    /// Messages exported (for a session in its own dialect: the resumed context's).
    pub message_count: u32,
    /// The session was given as it is stored, every branch and line included; else it
    /// was converted, as the conversation it resumes to.
    pub verbatim: bool,
}

/// A transcript another tool wrote, read as canonical messages.
#[derive(Default)]
pub(crate) struct Foreign {
    pub messages: Vec<Message>,
    pub id: Option<String>,
    pub cwd: Option<String>,
    pub skipped: u32,
    /// The current model, for the replies that follow.
    model: Option<String>,
}

impl Foreign {
    /// Adds a block to the conversation: to the last message when it has the same
    /// role (tool results first, as the APIs want them), else as a new message said at
    /// `at`.
    pub fn push(&mut self, role: Role, block: Block, at: Option<i64>) {
        match self.messages.last_mut() {
            Some(last) if last.role == role => {
                let is_result = |b: &Block| matches!(b.kind, BlockKind::ToolResult { .. });
                let at_index = if is_result(&block) { last.blocks.iter().take_while(|b| is_result(b)).count() } else { last.blocks.len() };
                last.blocks.insert(at_index, block);
            }
            _ => {
                let model = self.model.clone().filter(|_| role == Role::Assistant);
                self.messages.push(Message { role, blocks: alloc::vec![block], meta: Meta { at, model, ..Meta::default() } });
            }
        }
    }

    pub fn set_model(&mut self, model: Option<&str>) {
        if let Some(model) = model.filter(|m| !m.is_empty()) {
            self.model = Some(model.to_owned());
        }
    }

    /// Usage reported after a reply: the last reply's, when it has none yet.
    pub fn usage(&mut self, usage: Usage) {
        if let Some(last) = self.messages.iter_mut().rev().find(|m| m.role == Role::Assistant)
            && last.meta.usage.is_none()
        {
            last.meta.usage = Some(usage);
        }
    }
}

pub(crate) fn text_block(text: &str) -> Option<Block> {
    (!text.is_empty()).then(|| Block::text(text))
}

/// A call; arguments that are not a JSON object are kept under `input`.
pub(crate) fn tool_use(id: &str, name: &str, input: Value) -> Block {
    let input = if input.is_object() { input } else { json!({ "input": input }) };
    let value = json!({ "type": "tool_use", "id": id, "name": name, "input": input });
    Block { kind: BlockKind::ToolUse { id: id.to_owned(), name: name.to_owned() }, json: value.to_string() }
}

pub(crate) fn tool_result(id: &str, text: &str, is_error: bool) -> Block {
    let mut value = json!({ "type": "tool_result", "tool_use_id": id, "content": text });
    if is_error {
        value["is_error"] = true.into();
    }
    Block { kind: BlockKind::ToolResult { tool_use_id: id.to_owned() }, json: value.to_string() }
}

/// An image given as a `data:` URL or as base64 with its media type.
pub(crate) fn image(media_type: &str, data: &str) -> Block {
    let value = json!({ "type": "image", "source": { "type": "base64", "media_type": media_type, "data": data } });
    Block { kind: BlockKind::Image, json: value.to_string() }
}

pub(crate) fn data_url_image(url: &str) -> Option<Block> {
    let rest = url.strip_prefix("data:")?;
    let (media_type, data) = rest.split_once(";base64,")?;
    Some(image(media_type, data))
}

/// Token counts where the input includes the cached part (OpenAI's, Gemini's), in
/// Anthropic's terms, where it does not.
pub(crate) fn usage_with_cached_input(input: u64, cached: u64, output: u64) -> Usage {
    Usage { input: input.saturating_sub(cached), output, cache_read: cached, cache_creation: 0 }
}

/// The JSON objects of a JSONL text, one per line; an unreadable line is counted.
pub(crate) fn json_lines(text: &str, skipped: &mut u32) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| match serde_json::from_str::<Value>(l) {
            Ok(value @ Value::Object(_)) => Some(value),
            _ => {
                *skipped += 1;
                None
            }
        })
        .collect()
}

pub(crate) fn millis(value: &Value) -> Option<i64> {
    value.as_str().and_then(time::parse_millis)
}

/// What wrote `data`, told from its first record.
pub fn detect(data: &[u8]) -> Result<Source, Error> {
    let text = crate::scan::decode(data);
    let text = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    if text.starts_with('[') {
        return Ok(Source::Openai);
    }
    let first_line = text.lines().next().unwrap_or_default();
    let first: Value = match serde_json::from_str(first_line) {
        Ok(value) => value,
        // A pretty-printed JSON file: Gemini CLI's older chats, or `{"messages": [...]}`.
        Err(_) => serde_json::from_str(text).unwrap_or(Value::Null),
    };
    let has = |field: &str| first.get(field).is_some();
    let kind = first.get("type").and_then(Value::as_str);
    let source = if has("sessionId") && has("projectHash") {
        Source::Gemini
    } else if has("messages") && first["messages"].is_array() {
        Source::Openai
    } else if kind == Some("session") {
        Source::Pi
    } else if kind == Some("session_meta") || has("payload") || (has("instructions") && kind.is_none()) {
        Source::Codex
    } else if kind.is_some() {
        Source::Claude
    } else {
        return Err(Error::InvalidArgument(
            "cannot tell which agent wrote this transcript: name it (claude, pi, codex, gemini or openai)".into(),
        ));
    };
    Ok(source)
}

/// A transcript ready to be stored: kept in its own dialect, or converted.
enum Prepared {
    Kept { data: Vec<u8>, format: Format, skipped: u32, from: Option<u32> },
    Converted(Foreign),
}

/// What an import needs to know of a transcript in a dialect Mneme writes, from one
/// read of it.
#[derive(Default)]
struct Survey {
    /// The session id and working directory it records (pi: its header's).
    id: Option<String>,
    cwd: Option<String>,
    /// The newest leaf's id, which a line written after it chains to.
    leaf: Option<String>,
    /// Messages of the context it resumes to.
    messages: u32,
    /// It has a line with an id: a conversation, not only bookkeeping.
    has_entries: bool,
    /// Its entries are all a sub-agent's (Claude Code's `isSidechain`): a sub-agent's
    /// own file, whose `sessionId` is its parent's.
    only_sidechains: bool,
    /// Lines that could not be read, a torn last one included.
    unreadable: u32,
}

fn survey(data: &[u8]) -> Survey {
    with_loaded(&[data], |loaded| {
        let (id, cwd) = match loaded.lines.first().filter(|l| crate::dialect::pi::is_header(l)) {
            Some(header) => (header.env.uuid(), header.env.cwd.get()),
            None => (loaded.lines.iter().find_map(|l| l.env.session_id()), loaded.lines.iter().find_map(|l| l.env.cwd.get())),
        };
        let (id, cwd) = (id.map(String::from), cwd.map(String::from));
        Survey {
            id,
            cwd,
            leaf: loaded.leaf().and_then(|i| loaded.lines.get(i)).and_then(|l| l.env.uuid()).map(String::from),
            messages: loaded.context(Sources::default()).messages.len() as u32,
            has_entries: loaded.lines.iter().any(|l| l.env.uuid().is_some()),
            only_sidechains: loaded.lines.iter().any(|l| l.env.is_sidechain.0) && loaded.only_sidechains(),
            unreadable: (loaded.report.skipped.len() as u32).saturating_add(u32::from(loaded.report.torn_tail)),
        }
    })
}

impl<S: Storage> Sessions<'_, S> {
    /// Imports another agent's transcript as a new session: the original bytes are
    /// only read. A Claude Code transcript is kept byte for byte and a pi one migrated
    /// to pi's v3 as pi does; Codex CLI, Gemini CLI and OpenAI messages become a Claude
    /// Code session, each message at its own time, its secrets taken out as from every
    /// line Mneme writes. The session ends with a line that records where it came from.
    /// Refuses an id that a session already has.
    pub async fn import_session(&self, request: &Import) -> Result<Imported, Error> {
        if request.uuid.is_empty() {
            return Err(Error::InvalidArgument("the import's uuid is empty".into()));
        }
        let source = match request.source {
            Some(source) => source,
            None => detect(&request.data)?,
        };
        let prepared = match source {
            Source::Claude => Prepared::Kept { data: request.data.clone(), format: Format::Claude, skipped: 0, from: None },
            Source::Pi => {
                let migrated = pi_versions::to_current(&request.data, &request.uuid)?;
                Prepared::Kept { data: migrated.data, format: Format::Pi, skipped: migrated.skipped, from: migrated.from }
            }
            Source::Codex => Prepared::Converted(codex::read(&request.data)),
            Source::Gemini => Prepared::Converted(gemini::read(&request.data)?),
            Source::Openai => Prepared::Converted(openai(&request.data)?),
        };
        let kept = match &prepared {
            Prepared::Kept { data, .. } => Some(survey(data)),
            Prepared::Converted(_) => None,
        };
        if matches!(prepared, Prepared::Kept { format: Format::Claude, .. }) && kept.as_ref().is_some_and(|s| !s.has_entries) {
            return Err(Error::InvalidArgument("no Claude Code entry (a line with a `uuid`) in the transcript".into()));
        }
        // Under its own `sessionId` a sub-agent's file would become a session of its
        // parent's id holding only the sub-agent's side, and take that id from the parent.
        if request.id.is_none()
            && let Some(Survey { only_sidechains: true, id, .. }) = &kept
        {
            return Err(Error::InvalidArgument(format!(
                "this is a sub-agent's transcript (`agent-….jsonl`) of session `{}`: import that session's own file, or give this one an id of its own",
                id.as_deref().unwrap_or("?")
            )));
        }
        let (own_id, own_cwd) = match (&prepared, &kept) {
            (Prepared::Converted(foreign), _) => (foreign.id.clone(), foreign.cwd.clone()),
            (_, Some(kept)) => (kept.id.clone(), kept.cwd.clone()),
            (_, None) => (None, None),
        };
        let id = request.id.clone().or(own_id).ok_or_else(|| {
            Error::InvalidArgument(format!("the {} transcript names no session id: give the new session one", source.as_str()))
        })?;
        keys::validate_session_id(&id)?;
        let cwd = request.cwd.clone().or(own_cwd).filter(|c| !c.is_empty()).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "the {} transcript does not say which folder it belongs to: give the working directory (cwd) to file it under",
                source.as_str()
            ))
        })?;
        let project = keys::project_dir_name(&cwd);
        keys::validate_project(&project)?;
        let timestamp = time::format_millis(request.now_ms);
        let (mut content, format, skipped, from, surveyed) = match prepared {
            Prepared::Kept { data, format, skipped, from } => {
                let surveyed = match kept {
                    Some(surveyed) => surveyed,
                    None => survey(&data),
                };
                // Unreadable lines: counted by a migration, which leaves them out, else
                // by the survey of the bytes kept as they are.
                let skipped = skipped.max(surveyed.unreadable);
                (data, format, skipped, from, surveyed)
            }
            Prepared::Converted(foreign) => {
                let skipped = foreign.skipped;
                let (messages, unanswerable) = without_unanswerable(foreign.messages, &PendingCalls::default());
                if messages.is_empty() {
                    return Err(Error::InvalidArgument(format!("the {} transcript has no message to import", source.as_str())));
                }
                let header = Header {
                    session_id: &id,
                    parent: None,
                    sidechain: false,
                    uuid: &request.uuid,
                    now_ms: request.now_ms,
                    timestamp: &timestamp,
                    cwd: &cwd,
                    agent_id: None,
                    taken: None,
                };
                let lines = Format::Claude.dialect().turn(&header, &messages, &PendingCalls::default())?;
                // Converted lines are Mneme's own writing, not a copy: secrets go, as
                // from every line Mneme writes (a kept transcript stays byte for byte).
                let lines = self.base.redaction().json_lines(&lines).0.unwrap_or(lines);
                let content = format!("{lines}\n").into_bytes();
                let surveyed = survey(&content);
                (content, Format::Claude, skipped.saturating_add(unanswerable), None, surveyed)
            }
        };
        let provenance = provenance_text(source, request, from);
        if !content.is_empty() && !content.ends_with(b"\n") {
            content.push(b'\n');
        }
        let marker_id = crate::support::ids::nth_uuid(&request.uuid, u32::MAX);
        let header = Header {
            session_id: &id,
            parent: surveyed.leaf.as_deref(),
            sidechain: false,
            uuid: &marker_id,
            now_ms: request.now_ms,
            timestamp: &timestamp,
            cwd: &cwd,
            agent_id: None,
            taken: None,
        };
        let marker = format.dialect().marker(&header, Marker::Import, Some(&provenance))?;
        content.extend_from_slice(marker.as_bytes());
        content.push(b'\n');
        let key = keys::session_key(&project, &id);
        self.refuse_taken(&id, &key).await?;
        self.write_new_session(&id, &key, &content).await?;
        // The marker line is no message: the context is the one surveyed.
        Ok(Imported { id, project, source, format, message_count: surveyed.messages, skipped, migrated_from: from, provenance })
    }

    /// Session `id` in `format`: in its own dialect, as it is stored (every line and
    /// branch); in another, as the conversation it resumes to, each message at its own
    /// time (new line ids derive from `uuid`, the host's fresh UUID).
    pub async fn export_session(&self, id: &str, format: ExportFormat, uuid: &str) -> Result<Exported, Error> {
        let parts = self.require(id).await?;
        let raw = self.read_parts(&parts).await?;
        let (own, context, stamps, metas, cwd, created) = with_loaded(&raw, |loaded| {
            let context = loaded.context(Sources::default());
            let index = loaded.index();
            let first_lines: Vec<Option<usize>> = context.messages.iter().map(|m| index.get(m.uuid.as_str()).copied()).collect();
            let stamps: Vec<Option<String>> = first_lines
                .iter()
                .map(|&i| i.and_then(|i| loaded.lines.get(i)).and_then(|l| l.env.timestamp.get()).map(String::from))
                .collect();
            let metas: Vec<Meta> = context
                .messages
                .iter()
                .zip(&first_lines)
                .map(|(m, &i)| match i {
                    Some(i) if m.role == "assistant" => canonical::recorded_meta(&reply_lines(&loaded.lines, i)),
                    _ => Meta::default(),
                })
                .collect();
            let cwd = loaded.cwd().to_owned();
            let created = loaded.lines.iter().find_map(|l| l.env.timestamp.get()).unwrap_or_default().to_owned();
            (Format::detect(&loaded.lines), context, stamps, metas, cwd, created)
        });
        let verbatim = matches!((format, own), (ExportFormat::Claude, Format::Claude) | (ExportFormat::Pi, Format::Pi));
        if verbatim {
            return Ok(Exported { format, data: raw.concat(), message_count: context.messages.len() as u32, verbatim });
        }
        if uuid.is_empty() && matches!(format, ExportFormat::Claude | ExportFormat::Pi) {
            return Err(Error::InvalidArgument("the export's uuid is empty".into()));
        }
        let messages: Vec<Message> = context
            .messages
            .iter()
            .zip(&stamps)
            .zip(metas)
            .filter_map(|((m, stamp), meta)| {
                let role = Role::parse(&m.role).ok()?;
                let blocks = match serde_json::from_str::<Value>(&m.content).ok()? {
                    Value::String(text) => alloc::vec![Block::text(&text)],
                    Value::Array(blocks) => blocks.iter().map(input::recorded_block).collect(),
                    _ => return None,
                };
                let at = stamp.as_deref().and_then(time::parse_millis);
                let message = Message { role, blocks, meta: Meta { at, ..meta } };
                Some(if format == ExportFormat::Pi { crate::dialect::pi::with_markers(message) } else { message })
            })
            .collect();
        let count = messages.len() as u32;
        let data = match format {
            ExportFormat::Openai => {
                let body: Value =
                    serde_json::from_str(&render::render(context.clone(), own, Provider::Openai, None, &[]).body).unwrap_or_default();
                let mut text = crate::dialect::json(&body["messages"])?;
                text.push('\n');
                text.into_bytes()
            }
            ExportFormat::Markdown => markdown::render(id, &context, &stamps).into_bytes(),
            ExportFormat::Claude | ExportFormat::Pi => {
                let (dialect, mut out) = match format {
                    ExportFormat::Pi => {
                        let header = json!({ "type": "session", "version": 3, "id": id, "timestamp": created, "cwd": cwd });
                        (Format::Pi.dialect(), format!("{}\n", crate::dialect::json(&header)?))
                    }
                    _ => (Format::Claude.dialect(), String::new()),
                };
                if !messages.is_empty() {
                    let timestamp = created.clone();
                    let header = Header {
                        session_id: id,
                        parent: None,
                        sidechain: false,
                        uuid,
                        now_ms: time::parse_millis(&created).unwrap_or_default(),
                        timestamp: &timestamp,
                        cwd: &cwd,
                        agent_id: None,
                        taken: None,
                    };
                    out.push_str(&dialect.turn(&header, &messages, &PendingCalls::default())?);
                    out.push('\n');
                }
                out.into_bytes()
            }
        };
        Ok(Exported { format, data, message_count: count, verbatim })
    }
}

/// The lines of the reply whose first line is `lines[first]`: Claude Code writes one
/// per block, sharing the reply's `message.id`, with the results of calls it ran while
/// streaming between them; the next reply ends it.
fn reply_lines<'l, 'a>(lines: &'l [Line<'a>], first: usize) -> Vec<&'l Line<'a>> {
    let Some(line) = lines.get(first) else { return Vec::new() };
    let mut reply = alloc::vec![line];
    let Some(id) = canonical::activity(line).and_then(|a| a.id) else { return reply };
    for line in &lines[first + 1..] {
        match canonical::activity(line) {
            Some(next) if next.assistant && next.id.as_deref() == Some(id.as_str()) => reply.push(line),
            Some(next) if next.assistant => break,
            _ => {}
        }
    }
    reply
}

/// The import's record, as the new session's last line carries it.
fn provenance_text(source: Source, request: &Import, migrated_from: Option<u32>) -> String {
    let mut value = json!({ "source": source.as_str(), "origin": request.origin });
    if let Some(version) = migrated_from {
        value["migratedFrom"] = version.into();
    }
    value.to_string()
}

/// OpenAI chat messages: an array, or an object with `messages`. System and developer
/// messages are instructions, not conversation: counted and left out.
fn openai(data: &[u8]) -> Result<Foreign, Error> {
    let text = crate::scan::decode(data);
    let value: Value =
        serde_json::from_str(&text).map_err(|e| Error::InvalidArgument(format!("the chat messages are not valid JSON: {e}")))?;
    let list = match value {
        Value::Array(list) => list,
        Value::Object(mut map) => match map.remove("messages") {
            Some(Value::Array(list)) => list,
            _ => return Err(Error::InvalidArgument("expected a JSON array of chat messages, or an object with `messages`".into())),
        },
        _ => return Err(Error::InvalidArgument("expected a JSON array of chat messages".into())),
    };
    let total = list.len();
    let conversation: Vec<Value> = list
        .into_iter()
        .filter(|m| !matches!(m.get("role").and_then(Value::as_str), Some("system" | "developer")) && !says_nothing(m))
        .collect();
    let skipped = (total - conversation.len()) as u32;
    if conversation.is_empty() {
        return Err(Error::InvalidArgument(
            "the messages hold no conversation (only system or developer messages, or messages without content)".into(),
        ));
    }
    let messages = input::parse(Provider::Openai, &Value::Array(conversation).to_string())?;
    Ok(Foreign { messages, skipped, ..Foreign::default() })
}

/// A user's or assistant's message with no content and no call (`""`, `null`, `[]`), as
/// exported chats (ShareGPT's among them) hold: nothing to carry over, and skipped
/// rather than refusing the file. A tool's empty result is a result, and is kept.
fn says_nothing(message: &Value) -> bool {
    let empty = match message.get("content") {
        None | Some(Value::Null) => true,
        Some(Value::String(text)) => text.trim().is_empty(),
        Some(Value::Array(parts)) => parts.is_empty(),
        Some(_) => false,
    };
    let calls = message.get("tool_calls").and_then(Value::as_array).is_some_and(|calls| !calls.is_empty());
    matches!(message.get("role").and_then(Value::as_str), Some("user" | "assistant")) && empty && !calls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_source_from_its_first_record() {
        let cases: [(&str, Source); 7] = [
            ("[{\"role\":\"user\",\"content\":\"hi\"}]", Source::Openai),
            ("{\"messages\":[]}", Source::Openai),
            ("{\"type\":\"session\",\"version\":3,\"id\":\"x\"}\n", Source::Pi),
            ("{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{}}\n", Source::Codex),
            ("{\"sessionId\":\"s\",\"projectHash\":\"h\",\"startTime\":\"t\"}\n", Source::Gemini),
            ("{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": []\n}", Source::Gemini),
            ("{\"type\":\"user\",\"uuid\":\"u\",\"message\":{}}\n", Source::Claude),
        ];
        for (text, source) in cases {
            assert_eq!(detect(text.as_bytes()).unwrap(), source, "{text}");
        }
        assert!(detect(b"hello").is_err());
        assert!(detect(b"").is_err());
    }
}
