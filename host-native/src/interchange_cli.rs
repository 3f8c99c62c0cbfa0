//! `mneme import` and `mneme export`: another agent's transcripts in, a session out in
//! another agent's format. The files imported are only read; each new session's last
//! line records the file it came from.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use mneme_host::core::Error as CoreError;
use mneme_host::core::index::openclaw::KeysImported;
use mneme_host::core::interchange::{ExportFormat, Import, Source};
use mneme_host::{Engine, Error};

type CliResult = Result<(), String>;

fn parse_source(text: &str) -> Result<Source, String> {
    Source::parse(text).map_err(|e| e.to_string())
}

fn parse_format(text: &str) -> Result<ExportFormat, String> {
    ExportFormat::parse(text).map_err(|e| e.to_string())
}

#[derive(Args)]
pub struct ImportArgs {
    /// Transcript files, or folders to import every transcript under (such as
    /// ~/.codex/sessions, ~/.pi/agent/sessions or ~/.openclaw/agents/main/sessions,
    /// whose sessions.json brings OpenClaw's session keys too); `-` reads one from stdin
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// What wrote them: claude, pi, codex, gemini or openai [default: told from each
    /// file's first record]
    #[arg(long, value_name = "SOURCE", value_parser = parse_source)]
    from: Option<Source>,
    /// The new session's id [default: the transcript's own] (one file only)
    #[arg(long)]
    id: Option<String>,
    /// The working directory to file the sessions under [default: the transcript's
    /// own]; needed for Gemini CLI chats and OpenAI messages, which record none
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// Print a JSON array of {path, imported}, {path, keys} (a sessions.json) or {path, error}
    /// per file, then {path, skipped} per sub-agent transcript not imported
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ExportArgs {
    /// The session id
    id: String,
    /// The format: claude (Claude Code JSONL), pi (pi v3 JSONL), openai (a JSON array of
    /// chat messages) or markdown. A block the format has no place for (in pi: a
    /// tool_reference, a document, a server tool's block) goes as a text marker such as
    /// [document]
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    to: ExportFormat,
    /// Write to this file instead of stdout (an existing file is not overwritten; `-`
    /// is stdout)
    #[arg(long, short, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// The transcripts under `path`: the file itself, or every `.jsonl`/`.json` file below a
/// folder in name order; and apart, the sub-agent transcripts found there, which an
/// import does not bring (it takes a session's own conversation).
fn transcripts(path: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), String> {
    if !path.is_dir() {
        return Ok((vec![path.to_path_buf()], Vec::new()));
    }
    let root = path;
    let mut found = Vec::new();
    let mut subagents = Vec::new();
    let mut folders = vec![path.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = fs::read_dir(&folder).map_err(|e| format!("cannot read {}: {e}", folder.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("cannot read {}: {e}", folder.display()))?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if path.is_dir() {
                folders.push(path);
            } else if name.ends_with(".jsonl") || name.ends_with(".json") {
                // Below the folder given, `subagents/` holds a session's sub-agents: their
                // transcripts, and Claude Code's `.meta.json` about each (no transcript).
                let in_subagents = folder != root && folder.file_name().is_some_and(|folder| folder == "subagents");
                if in_subagents {
                    if name.ends_with(".jsonl") {
                        subagents.push(path);
                    }
                } else if is_subagent(&path) {
                    subagents.push(path);
                } else {
                    found.push(path);
                }
            }
        }
    }
    if found.is_empty() {
        return Err(format!("{} holds no transcript to import (a .jsonl or .json file, sub-agent transcripts aside)", root.display()));
    }
    found.sort();
    subagents.sort();
    Ok((found, subagents))
}

/// A Claude Code sub-agent transcript kept beside its session (`agent-<id>.jsonl`,
/// sidechain lines): part of that session, not one of its own.
fn is_subagent(path: &Path) -> bool {
    let named = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("agent-"));
    let first_line = || -> Option<String> {
        let mut line = String::new();
        io::BufRead::read_line(&mut io::BufReader::new(fs::File::open(path).ok()?), &mut line).ok()?;
        Some(line)
    };
    named && first_line().is_some_and(|line| line.contains("\"isSidechain\":true"))
}

pub fn import(engine: &mut dyn Engine<Error>, args: ImportArgs, now_ms: i64) -> CliResult {
    let mut files = Vec::new();
    let mut subagents = Vec::new();
    for path in &args.paths {
        if path.as_os_str() == "-" {
            files.push(path.clone());
        } else {
            let (found, beside) = transcripts(path)?;
            files.extend(found);
            subagents.extend(beside);
        }
    }
    if args.id.is_some() && files.len() != 1 {
        return Err(format!("--id names one session, but {} transcripts were given", files.len()));
    }
    let mut report = Vec::new();
    let mut failed = 0usize;
    for file in &files {
        if is_openclaw_index(file) {
            let outcome = import_keys(engine, file, args.json);
            failed += usize::from(outcome.is_err());
            let path = file.display().to_string();
            report.push(match outcome {
                Ok(keys) => serde_json::json!({ "path": path, "keys": keys }),
                Err(error) => serde_json::json!({ "path": path, "error": error }),
            });
            continue;
        }
        let data = if file.as_os_str() == "-" {
            let mut data = Vec::new();
            io::stdin().read_to_end(&mut data).map_err(|e| format!("cannot read stdin: {e}"))?;
            data
        } else {
            fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?
        };
        let origin = fs::canonicalize(file).unwrap_or_else(|_| file.clone()).to_string_lossy().into_owned();
        let id = args.id.clone().or_else(|| id_from_file_name(file, args.from, &data));
        // Absolute, as every other --cwd and the libraries take it: the project is named after it.
        let cwd =
            args.cwd.clone().map(|cwd| crate::working_dir(Some(cwd.into())).map(|dir| dir.to_string_lossy().into_owned())).transpose()?;
        let request = Import { data, source: args.from, id, cwd, origin, uuid: uuid::Uuid::new_v4().to_string(), now_ms };
        let outcome = engine.import_session(&request);
        match &outcome {
            Ok(done) if !args.json => {
                let migrated = done.migrated_from.map(|v| format!(", migrated from pi v{v}")).unwrap_or_default();
                let skipped = if done.skipped > 0 { format!(", {} records not carried over", done.skipped) } else { String::new() };
                println!(
                    "{}: imported as {} in {} ({}, {} messages in its context{migrated}{skipped})",
                    file.display(),
                    done.id,
                    done.project,
                    done.source.as_str(),
                    done.message_count
                );
            }
            // The transcript's own id taken: it was imported before. An id given with
            // --id says nothing of what holds it, so that is a failure.
            Err(Error::Session(CoreError::SessionExists { id })) if !args.json && args.id.is_none() => {
                println!("{}: already in the store as {id}; left as it is", file.display())
            }
            Err(Error::Session(CoreError::SessionArchived { id })) if !args.json && args.id.is_none() => {
                println!("{}: already in the store as {id}, archived; left as it is", file.display())
            }
            Err(error) if !args.json => eprintln!("error: {}: {error}", file.display()),
            _ => {}
        }
        let imported_before = matches!(outcome, Err(Error::Session(CoreError::SessionExists { .. } | CoreError::SessionArchived { .. })))
            && args.id.is_none();
        if outcome.is_err() && !imported_before {
            failed += 1;
        }
        let path = file.display().to_string();
        report.push(match outcome {
            Ok(imported) => serde_json::json!({ "path": path, "imported": imported }),
            Err(error) => serde_json::json!({ "path": path, "error": error.to_string() }),
        });
    }
    // Said, not dropped in silence: a session's sub-agents are not carried over.
    const NOT_CARRIED: &str = "a sub-agent transcript: an import brings a session's own conversation, not its sub-agents'";
    if !subagents.is_empty() && !args.json {
        eprintln!("note: {} sub-agent transcript(s) were not imported ({NOT_CARRIED}):", subagents.len());
        for path in &subagents {
            eprintln!("  {}", path.display());
        }
    }
    report.extend(subagents.iter().map(|path| serde_json::json!({ "path": path.display().to_string(), "skipped": NOT_CARRIED })));
    if args.json {
        let mut out = mneme_cli_stdout::lock();
        serde_json::to_writer_pretty(&mut out, &report).map_err(|e| e.to_string())?;
        writeln!(out).map_err(|e| e.to_string())?;
    }
    match failed {
        0 => Ok(()),
        n => Err(format!("{n} of {} files were not imported", files.len())),
    }
}

/// The session id of a transcript that names none itself (OpenAI message arrays): its
/// file's name, as `chat-42` for `chat-42.json`, when that is a valid id. Every other
/// source carries its session's id, which wins over a file's name.
fn id_from_file_name(file: &Path, from: Option<Source>, data: &[u8]) -> Option<String> {
    let source = from.or_else(|| mneme_host::core::interchange::detect(data).ok())?;
    let stem = file.file_stem()?.to_str()?;
    (source == Source::Openai && mneme_host::core::keys::validate_session_id(stem).is_ok()).then(|| stem.to_owned())
}

/// OpenClaw's key index (`~/.openclaw/agents/<id>/sessions/sessions.json`), which sits
/// beside the transcripts it points to.
fn is_openclaw_index(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == "sessions.json")
}

/// Imports an OpenClaw `sessions.json` into the index; says what it did unless `quiet`.
fn import_keys(engine: &mut dyn Engine<Error>, file: &Path, quiet: bool) -> Result<KeysImported, String> {
    let data = fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let outcome = engine.import_openclaw_keys(&data).map_err(|e| e.to_string());
    match &outcome {
        Ok(keys) if !quiet => {
            println!(
                "{}: {} OpenClaw session keys imported, {} already in the index (left as they are)",
                file.display(),
                keys.imported.len(),
                keys.existing.len()
            );
            for refused in &keys.refused {
                eprintln!("mneme: {}: key {} not imported: {}", file.display(), refused.key, refused.reason);
            }
        }
        Err(error) if !quiet => eprintln!("error: {}: {error}", file.display()),
        _ => {}
    }
    outcome
}

pub fn export(engine: &mut dyn Engine<Error>, mut args: ExportArgs) -> CliResult {
    args.id = crate::session_id(engine, args.id)?;
    let exported = engine.export_session(&args.id, args.to, &uuid::Uuid::new_v4().to_string()).map_err(|e| e.to_string())?;
    if !exported.verbatim && matches!(exported.format, ExportFormat::Claude | ExportFormat::Pi) {
        eprintln!(
            "mneme: session {} is in another dialect: exported as the conversation it resumes to ({} messages)",
            args.id, exported.message_count
        );
    }
    match args.out.filter(|path| path.as_os_str() != "-") {
        Some(path) => {
            let mut file = fs::OpenOptions::new().write(true).create_new(true).open(&path).map_err(|e| {
                let kept = if e.kind() == io::ErrorKind::AlreadyExists { " (an existing file is not overwritten)" } else { "" };
                format!("cannot create {}: {e}{kept}", path.display())
            })?;
            file.write_all(&exported.data).and_then(|()| file.sync_all()).map_err(|e| format!("cannot write {}: {e}", path.display()))
        }
        None => mneme_cli_stdout::lock().write_all(&exported.data).map_err(|e| e.to_string()),
    }
}
