//! `mneme mcp`: a store's memory and sessions as the tools of a Model Context Protocol
//! server on stdio (or streamable HTTP on 127.0.0.1), built on the official Rust SDK
//! (rmcp), so any MCP client (Claude Code, Claude Desktop, Cursor, an agent framework)
//! can recall memories and search and read past sessions.
//!
//! The engine is the CLI's (`--engine`, `--root`, `--claude-home`, `--store`), opened
//! once on a thread of its own: the engine is not `Send`, and one thread running the
//! requests in turn is what the store's locks expect of one process anyway.

use std::convert::Infallible;
use std::net::Ipv4Addr;
use std::sync::{Arc, mpsc};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioIo, TokioTimer};

use mneme_host::core::memory::store::{RecallHit, Scope};
use mneme_host::core::{Window, keys};
use mneme_host::{Engine, Error};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use crate::{CliResult, StoreArgs};

/// What a MEMORY.md is, in every listing and read of it.
const MARKDOWN: &str = "text/markdown";

/// The memory file index of each scope, as resources a client can read: the server's
/// scope (the one `recall` and `memory` use) and the global memories, listed, and any
/// project's through a template (its folder name percent-encoded where a URI needs it;
/// listing every project's would read the whole store on each `resources/list`).
const MEMORY_MD: &str = "mneme://memory/MEMORY.md";
const GLOBAL_MEMORY_MD: &str = "mneme://memory/global/MEMORY.md";
const PROJECT_MEMORY_MD: (&str, &str) = ("mneme://memory/projects/", "/MEMORY.md");

/// The scope a resource URI names, or why none.
fn scope_of(uri: &str, own: &Scope) -> Result<Scope, String> {
    let (start, end) = PROJECT_MEMORY_MD;
    match uri {
        MEMORY_MD => return Ok(own.clone()),
        GLOBAL_MEMORY_MD => return Ok(Scope::Global),
        _ => {}
    }
    let known = || format!("the resources are {MEMORY_MD}, {GLOBAL_MEMORY_MD} and {start}{{project}}{end}");
    let Some(encoded) = uri.strip_prefix(start).and_then(|rest| rest.strip_suffix(end)) else {
        return Err(format!("no resource `{uri}`: {}", known()));
    };
    let project = percent_encoding::percent_decode_str(encoded)
        .decode_utf8()
        .map_err(|_| format!("`{uri}` names no project: its name is not UTF-8 once decoded; {}", known()))?;
    keys::validate_project(&project).map_err(|e| format!("`{uri}` names no project: {e}"))?;
    // A name the store's keys cannot hold (a control character) is the request's fault.
    keys::check_key(&format!("{}{project}/memory", keys::PROJECTS)).map_err(|e| format!("`{uri}` names no project: {e}"))?;
    Ok(Scope::Project(project.into_owned()))
}

/// Which memories the tools recall (the sessions are the whole store's).
#[derive(clap::Args)]
pub struct McpArgs {
    /// The project whose memories `recall` searches: its folder name under projects/ (as
    /// Claude Code derives it), or its working directory (a path, e.g. ./app)
    /// [default: the current directory's project]
    #[arg(long, value_name = "PROJECT", allow_hyphen_values = true, conflicts_with = "global", value_parser = crate::project_arg)]
    project: Option<String>,
    /// Recall the global memories (memory/) instead of a project's
    #[arg(long)]
    global: bool,
    /// Serve streamable HTTP on 127.0.0.1, on this port (0: any free one), instead of
    /// stdio; the address is printed on standard error. Every client session shares the
    /// one store; Ctrl-C (or SIGTERM) stops the server
    #[arg(long, value_name = "PORT")]
    http: Option<u16>,
}

type Job = Box<dyn FnOnce(&mut dyn Engine<Error>) + Send>;

pub fn run(store: &StoreArgs, args: McpArgs) -> CliResult {
    let scope = if args.global {
        Scope::Global
    } else {
        let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
        let project = args.project.unwrap_or_else(|| keys::project_dir_name(&cwd.to_string_lossy()));
        keys::validate_project(&project).map_err(|e| format!("--project: {e}"))?;
        Scope::Project(project)
    };
    let (jobs, engine) = engine_thread(store)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server's runtime: {e}"))?;
    let server = Server { jobs, scope, store: Arc::new(store.clone()) };
    let served = runtime.block_on(async {
        match args.http {
            None => serve_stdio(server).await,
            Some(port) => serve_http(server, port).await,
        }
    });
    // Requests still running when the client left hold the server, and with it the
    // engine's queue: the runtime goes first, so the engine's thread finishes the job
    // it is on, sees the queue closed and closes the store.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    engine.join().map_err(|_| "the store's thread failed".to_owned())?;
    served
}

async fn serve_stdio(server: Server) -> CliResult {
    let service = server.serve(rmcp::transport::stdio()).await.map_err(|e| format!("the MCP client did not start a session: {e}"))?;
    service.waiting().await.map_err(|e| format!("the MCP session failed: {e}"))?;
    Ok(())
}

/// Serves rmcp's streamable HTTP service on 127.0.0.1 only, to requests that carry the
/// token (any other process or user of the machine can reach a loopback port), a task
/// per connection, until a signal to stop. rmcp's host check refuses a `Host` that is
/// not a loopback name (DNS rebinding).
async fn serve_http(server: Server, port: u16) -> CliResult {
    // Registered before the address is printed: a signal sent as soon as it is read
    // stops the server as it should, not by the signal's default action.
    let mut stop_signals = StopSignals::new()?;
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e} (is another server on that port? 0 takes any free one)"))?;
    let address = listener.local_addr().map_err(|e| format!("cannot read the address listened on: {e}"))?;
    let chosen = std::env::var_os(TOKEN_VARIABLE);
    let token: Arc<str> = match chosen.as_deref().map(|token| token.to_str()) {
        None => uuid::Uuid::new_v4().simple().to_string().into(),
        // What a header can carry as it is: hyper trims spaces, and a header of other
        // bytes is no text to compare.
        Some(Some(token)) if token.len() >= 16 && token.bytes().all(|b| b.is_ascii_graphic()) => token.into(),
        Some(_) => {
            return Err(format!(
                "${TOKEN_VARIABLE} cannot guard the store: give 16 or more visible ASCII characters (letters, digits, punctuation; no spaces)"
            ));
        }
    };
    let stop = CancellationToken::new();
    // A request from a web page carries an `Origin`: none is allowed, so a page the user
    // opens cannot reach their memories; MCP clients send none.
    let config = StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token()).enforce_origin_validation();
    let mcp = StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
    let expected = token.clone();
    let guarded = hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
        let (mut mcp, token) = (mcp.clone(), expected.clone());
        async move { if carries_token(request.headers(), &token) { mcp.call(request).await } else { Ok(unauthorized()) } }
    });
    let url = format!("http://{address}/mcp");
    // A token the user chose is theirs to know; one made here is said once, here.
    let header = match chosen {
        Some(_) => format!("Authorization: Bearer ${TOKEN_VARIABLE}"),
        None => format!("Authorization: Bearer {token}"),
    };
    eprintln!("mneme mcp: serving streamable HTTP at {url} (Ctrl-C stops it)");
    eprintln!("mneme mcp: every request must carry the header `{header}`; for Claude Code:");
    eprintln!("  claude mcp add --transport http mneme {url} --header \"{header}\"");
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    // Out of file descriptors, or a client gone before it was accepted:
                    // that client's failure, not the server's; a pause keeps the loop
                    // from spinning while it lasts.
                    Err(_) => {
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let guarded = guarded.clone();
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(std::time::Duration::from_secs(30))
                        .serve_connection(TokioIo::new(stream), guarded)
                        .await;
                });
            }
            signal = stop_signals.recv() => {
                stop.cancel();
                return signal;
            }
        }
    }
}

/// The variable that names the HTTP server's token, so a client's configuration stays
/// valid across restarts; without it each run makes one.
const TOKEN_VARIABLE: &str = "MNEME_MCP_TOKEN";

/// Whether `headers` carry `Authorization: Bearer <token>`, compared in a time that does
/// not depend on how much of it matches.
fn carries_token(headers: &http::HeaderMap, token: &str) -> bool {
    // The scheme's name in any case (RFC 9110), the token as given.
    let given = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .and_then(|(scheme, given)| scheme.eq_ignore_ascii_case("bearer").then_some(given));
    given.is_some_and(|given| {
        given.len() == token.len() && given.bytes().zip(token.bytes()).fold(0u8, |differ, (a, b)| differ | (a ^ b)) == 0
    })
}

fn unauthorized() -> http::Response<BoxBody<Bytes, Infallible>> {
    let mut response = http::Response::new(
        Full::new(Bytes::from_static(
            b"this MCP server wants the header `Authorization: Bearer <token>` that mneme mcp printed when it started\n",
        ))
        .boxed(),
    );
    *response.status_mut() = http::StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(http::header::WWW_AUTHENTICATE, http::HeaderValue::from_static("Bearer"));
    response
}

/// Ctrl-C or, on Unix, SIGTERM (what a service manager sends), listened for from the
/// moment this is made.
struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(windows)]
    interrupt: tokio::signal::windows::CtrlC,
}

impl StopSignals {
    fn new() -> Result<StopSignals, String> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let listen = |kind: SignalKind, name: &str| signal(kind).map_err(|e| format!("cannot listen for {name}: {e}"));
            Ok(StopSignals {
                interrupt: listen(SignalKind::interrupt(), "Ctrl-C")?,
                terminate: listen(SignalKind::terminate(), "SIGTERM")?,
            })
        }
        #[cfg(windows)]
        Ok(StopSignals { interrupt: tokio::signal::windows::ctrl_c().map_err(|e| format!("cannot listen for Ctrl-C: {e}"))? })
    }

    async fn recv(&mut self) -> CliResult {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => Ok(()),
            _ = self.terminate.recv() => Ok(()),
        }
        #[cfg(windows)]
        {
            self.interrupt.recv().await;
            Ok(())
        }
    }
}

/// Opens the store on a thread that then runs each job it is sent, in turn, until the
/// server is gone; an error opening it is returned here, before the server starts.
fn engine_thread(store: &StoreArgs) -> Result<(mpsc::Sender<Job>, std::thread::JoinHandle<()>), String> {
    let (jobs, queue) = mpsc::channel::<Job>();
    let (opened, open_result) = mpsc::channel();
    let store = store.clone();
    let thread = std::thread::spawn(move || {
        let mut engine = match crate::open(&store) {
            Ok(engine) => {
                let _ = opened.send(Ok(()));
                engine
            }
            Err(error) => {
                let _ = opened.send(Err(error));
                return;
            }
        };
        for job in queue {
            job(engine.as_mut());
        }
    });
    open_result.recv().map_err(|_| "the store's thread ended before it opened the store".to_owned())??;
    Ok((jobs, thread))
}

#[derive(Clone)]
struct Server {
    jobs: mpsc::Sender<Job>,
    scope: Scope,
    /// Where the store is, for the commands that resume a session found.
    store: Arc<StoreArgs>,
}

impl Server {
    /// Runs `work` on the engine's thread and gives back what it returned.
    async fn on_engine<T: Send + 'static>(&self, work: impl FnOnce(&mut dyn Engine<Error>) -> T + Send + 'static) -> Result<T, ErrorData> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |engine| {
            let _ = answer.send(work(engine));
        });
        self.jobs.send(job).map_err(|_| ErrorData::internal_error("the store is closed", None))?;
        answered.await.map_err(|_| ErrorData::internal_error("the store's thread stopped", None))
    }

    /// A tool's answer: `work`'s value as JSON, or its engine error as a result marked
    /// as an error, in words the model can act on (not a protocol error).
    async fn call<T: serde::Serialize + Send + 'static>(
        &self,
        work: impl FnOnce(&mut dyn Engine<Error>) -> Result<T, Error> + Send + 'static,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.on_engine(work).await? {
            Ok(value) => {
                let text = serde_json::to_string(&value).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_string())]),
        })
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct RecallArgs {
    /// What to look for, in words (matched by stem; stopwords are ignored).
    query: String,
    /// How many memories to return, best first (default 10).
    #[schemars(range(min = 1))]
    limit: Option<u32>,
    /// Include superseded and archived memories (default false).
    include_superseded: Option<bool>,
}

/// Claude's memory tool's input (`memory_20250818`), its fields named as the API names them.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct MemoryArgs {
    /// One of `view`, `create`, `str_replace`, `insert`, `delete`, `rename`.
    command: String,
    /// The file or folder: `/memories` or `/memories/<name>.md` (lower-case letters, digits, `-`, `_`).
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// view: the first and last line to show (-1: to the end).
    #[serde(skip_serializing_if = "Option::is_none")]
    view_range: Option<[i64; 2]>,
    /// create: the file's text (Markdown; front matter with name, description and type is kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    file_text: Option<String>,
    /// str_replace: the text to replace, found exactly once in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    old_str: Option<String>,
    /// str_replace: what replaces it.
    #[serde(skip_serializing_if = "Option::is_none")]
    new_str: Option<String>,
    /// insert: the line after which the text goes (0: at the top).
    #[serde(skip_serializing_if = "Option::is_none")]
    insert_line: Option<i64>,
    /// insert: the text to insert.
    #[serde(skip_serializing_if = "Option::is_none")]
    insert_text: Option<String>,
    /// rename: the file to rename.
    #[serde(skip_serializing_if = "Option::is_none")]
    old_path: Option<String>,
    /// rename: its new path.
    #[serde(skip_serializing_if = "Option::is_none")]
    new_path: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// What to look for in past messages.
    query: String,
    /// How many messages to return, best first (default 10).
    #[schemars(range(min = 1))]
    limit: Option<u32>,
    /// Only sessions of this project: its folder name under projects/, or its working
    /// directory as an absolute path.
    project: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ListArgs {
    /// Only sessions of this project: its folder name under projects/, or its working
    /// directory as an absolute path.
    project: Option<String>,
    /// How many sessions to return, most recently updated first (default 20).
    #[schemars(range(min = 1))]
    limit: Option<u32>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ShowArgs {
    /// The session's id, as `list_sessions` and `search_sessions` give it.
    id: String,
    /// How many of its last messages to return (default 50).
    #[schemars(range(min = 1))]
    limit: Option<u32>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct InstructionsArgs {
    /// The folder Claude Code would run in (an absolute path).
    cwd: String,
    /// Files being worked on, relative to `cwd`: rules whose `paths:` match them load too.
    #[serde(default)]
    paths: Vec<String>,
}

/// A memory recall found, with what it says.
#[derive(Serialize)]
struct Recalled {
    #[serde(flatten)]
    hit: RecallHit,
    body: String,
}

/// A message of a session as the model reads it.
#[derive(Serialize)]
struct Said {
    uuid: String,
    role: String,
    text: String,
    is_compact_summary: bool,
}

/// The last messages of a session, and how many came before them.
#[derive(Serialize)]
struct Shown {
    id: String,
    compacted: bool,
    earlier_messages: usize,
    messages: Vec<Said>,
}

/// A tool's `project`: its folder name, or its working directory as an absolute path
/// (as the CLI's `--project` takes one; a relative one would count from wherever the
/// client started this server). A path that names no project matched nothing before.
fn project_named(project: Option<String>) -> Option<String> {
    project.map(|project| match crate::project_arg(&project) {
        Ok(named) if std::path::Path::new(&project).is_absolute() => named,
        _ => project,
    })
}

/// A tool's `limit`, or its default; 0 asks for nothing and is refused rather than
/// taken as 1.
fn count(limit: Option<u32>, default: usize) -> Result<usize, Error> {
    match limit {
        Some(0) => {
            Err(mneme_host::core::Error::InvalidArgument("limit is 0: give 1 or more, or leave it out for the default".into()).into())
        }
        Some(n) => Ok(n as usize),
        None => Ok(default),
    }
}

#[tool_router]
impl Server {
    #[tool(description = "Recall long-term memories for a query: the best matching memories, each with its file, name, \
                          description, type, body, score, whether it is current, and whether it matched the query's words \
                          (else it was found through a memory it is linked or close to).")]
    async fn recall(&self, Parameters(args): Parameters<RecallArgs>) -> Result<CallToolResult, ErrorData> {
        let scope = self.scope.clone();
        self.call(move |engine| {
            let recalled = engine.memory_recall(
                &scope,
                &args.query,
                count(args.limit, 10)?,
                args.include_superseded.unwrap_or(false),
                Window::default(),
                None,
            )?;
            Ok(recalled
                .hits
                .into_iter()
                // A memory removed by hand since the index saw it keeps its place, without a body.
                .map(|hit| Recalled { body: engine.memory_show(&scope, &hit.file).map(|shown| shown.memory.body).unwrap_or_default(), hit })
                .collect::<Vec<_>>())
        })
        .await
    }

    #[tool(description = "Claude's memory tool over this project's long-term memories: a folder /memories of Markdown \
                          files, one memory each. view /memories lists them (MEMORY.md is their index); view a file to \
                          read it with line numbers; create, str_replace and insert write one; delete archives it; rename \
                          moves it. Check your memories before you start a task, and record what you learn that a later \
                          session should know.")]
    async fn memory(&self, Parameters(args): Parameters<MemoryArgs>) -> Result<CallToolResult, ErrorData> {
        let (scope, now) = (self.scope.clone(), crate::now_ms());
        let input = serde_json::to_string(&args).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(match self.on_engine(move |engine| engine.memory_tool(&scope, &input, now)).await? {
            Ok(result) if result.is_error => CallToolResult::error(vec![ContentBlock::text(result.content)]),
            Ok(result) => CallToolResult::success(vec![ContentBlock::text(result.content)]),
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_string())]),
        })
    }

    #[tool(description = "Search the messages of past sessions: each hit with its session id and project, the message's \
                          role, time and text, whether the message itself matched (else it was found through its \
                          session), and `resume`, the shell command that continues the session in its own client \
                          (Claude Code or pi) where one can. Read a whole session with show_session.")]
    async fn search_sessions(&self, Parameters(args): Parameters<SearchArgs>) -> Result<CallToolResult, ErrorData> {
        let store = self.store.clone();
        self.call(move |engine| {
            let project = project_named(args.project);
            let hits = engine.search(&args.query, count(args.limit, 10)?, project.as_deref(), Window::default())?;
            Ok(crate::client_resume::found(&store, hits))
        })
        .await
    }

    #[tool(description = "List sessions, most recently updated first: id, project, title, message count, first and last time.")]
    async fn list_sessions(&self, Parameters(args): Parameters<ListArgs>) -> Result<CallToolResult, ErrorData> {
        self.call(move |engine| {
            let mut sessions = engine.list()?.sessions;
            let project = project_named(args.project);
            sessions.retain(|s| project.as_ref().is_none_or(|project| &s.project == project));
            sessions.truncate(count(args.limit, 20)?);
            Ok(sessions)
        })
        .await
    }

    #[tool(description = "Show a session as a model would resume it: its last messages from its last compaction on, each \
                          with its role and text (tool calls and results as markers naming the tool), and how many came \
                          before them.")]
    async fn show_session(&self, Parameters(args): Parameters<ShowArgs>) -> Result<CallToolResult, ErrorData> {
        self.call(move |engine| {
            let context = engine.context(&args.id)?;
            let earlier_messages = context.messages.len().saturating_sub(count(args.limit, 50)?);
            let messages = context.messages[earlier_messages..]
                .iter()
                .map(|m| Said {
                    uuid: m.uuid.clone(),
                    role: m.role.clone(),
                    text: m.text.to_string(),
                    is_compact_summary: m.is_compact_summary,
                })
                .collect();
            Ok(Shown { id: args.id, compacted: context.compacted, earlier_messages, messages })
        })
        .await
    }

    #[tool(description = "The instructions Claude Code loads for a folder: its CLAUDE.md files up the tree, the user's and \
                          the managed one, rules (those whose paths match `paths`) and @imports, as one text, and each file \
                          with whether it loads and why.")]
    async fn instructions(&self, Parameters(args): Parameters<InstructionsArgs>) -> Result<CallToolResult, ErrorData> {
        // Read from this machine's disk, as Claude Code reads them, not from the store.
        let resolved = tokio::task::spawn_blocking(move || {
            crate::memory_cli::resolve_instructions(std::path::Path::new(&args.cwd), None, None, args.paths, false)
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(match resolved {
            Ok((instructions, _)) => {
                let text = serde_json::to_string(&instructions).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error)]),
        })
    }
}

#[tool_handler]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("mneme", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Mneme keeps this user's agent sessions and long-term memories. Use recall for what is remembered about \
                 a topic, memory to read and write the memory files, search_sessions and show_session for what was said \
                 in past sessions.",
            )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let index = |uri: &str, name: &str, whose: &str| {
            Resource::new(uri, name)
                .with_description(format!("The memory index a session loads, of {whose}: one line per current memory"))
                .with_mime_type(MARKDOWN)
        };
        let resources = match &self.scope {
            Scope::Global => vec![index(MEMORY_MD, "MEMORY.md", "the global memories")],
            Scope::Project(project) => vec![
                index(MEMORY_MD, "MEMORY.md", &format!("project {project}, this server's")),
                index(GLOBAL_MEMORY_MD, "global MEMORY.md", "the global memories (every project's sessions load them)"),
            ],
        };
        Ok(ListResourcesResult { resources, ..Default::default() })
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let (start, end) = PROJECT_MEMORY_MD;
        let template = ResourceTemplate::new(format!("{start}{{project}}{end}"), "a project's MEMORY.md")
            .with_description(
                "The memory index a session of the project loads, one line per current memory; {project} is the project's \
                 folder name under projects/ (as list_sessions shows it), percent-encoded",
            )
            .with_mime_type(MARKDOWN);
        Ok(ListResourceTemplatesResult { resource_templates: vec![template], ..Default::default() })
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let scope = scope_of(&request.uri, &self.scope).map_err(|message| ErrorData::resource_not_found(message, None))?;
        let loaded = self.on_engine(move |engine| engine.memory_load(&scope, Default::default())).await?.map_err(|e| {
            // A store that cannot be read is the server's failure, not the request's.
            ErrorData::internal_error(e.to_string(), None)
        })?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(loaded.text, request.uri).with_mime_type(MARKDOWN)]).into())
    }
}
