//! Claude Code's instruction hierarchy: which CLAUDE.md files, rules and `@` imports a
//! session starts with, in Claude Code's order and under its headers.
//!
//! The order is Claude Code's (`getMemoryFiles` in its `utils/claudemd.ts`): the managed
//! policy file, the user's `~/.claude/CLAUDE.md` and `~/.claude/rules/**/*.md`, then
//! for each directory from the one below the filesystem root down to the working
//! directory its `CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules/**/*.md` and
//! `CLAUDE.local.md`. The root itself is not searched: the docs say the walk goes "up
//! to (but not including) the root directory /", and the code stops there. Later files
//! weigh more with the model, so nearer files come last.
//!
//! Rules with `paths:` are loaded here when one of the request's paths matches;
//! Claude Code attaches them later, when it reads a matching file. An import outside
//! the working directory, made by a managed, project or local file (or by a file such
//! a file imports: a chain follows the file it started from), is external:
//! Claude Code loads it only once the user approved external imports (its
//! `hasClaudeMdExternalIncludesApproved`), and so does this resolver. Such files are
//! listed with `external` set whether loaded or not, so a host can ask first. Imports
//! made by the user's own files are never external.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::Memories;
use crate::error::Error;
use crate::keys;
use crate::storage::{Storage, StorageError};

/// How deep imports nest below the file that starts the chain. The docs said "a max
/// depth of 5 hops" and now say four; the code (`MAX_INCLUDE_DEPTH = 5`, refusing a
/// file at depth 5 or more, the top-level file being depth 0) loads CLAUDE.md → A → B
/// → C → D and not D's imports: four hops, five files. We follow the code.
const MAX_IMPORT_HOPS: usize = 4;

/// Header descriptions, as Claude Code's `getClaudeMds` writes them. Managed policy
/// falls through to the user description there, so it does here.
const PROJECT_LABEL: &str = " (project instructions, checked into the codebase)";
const LOCAL_LABEL: &str = " (user's private project instructions, not checked in)";
const GLOBAL_LABEL: &str = " (user's private global instructions for all projects)";

/// Claude Code imports only files with these extensions (or none), so an `@` naming an
/// image or a PDF does not pour binary into the context.
const TEXT_EXTENSIONS: &str = "md txt text json yaml yml toml xml csv html htm css scss sass less js ts tsx jsx mjs cjs mts cts py pyi pyw rb \
                               erb rake go rs java kt kts scala c cpp cc cxx h hpp hxx cs swift sh bash zsh fish ps1 bat cmd env ini cfg conf \
                               config properties sql graphql gql proto vue svelte astro ejs hbs pug jade php pl pm lua r dart ex exs erl hrl \
                               clj cljs cljc edn hs lhs elm ml mli f f90 f95 for cmake make makefile gradle sbt rst adoc asciidoc org tex \
                               latex lock log diff patch";

/// Brace expansion multiplies (`{a,b}{c,d}…`); past this many globs or steps a rule's
/// `paths:` stops expanding rather than exhaust memory.
const MAX_GLOBS: usize = 256;

/// Where the resolver reads files: the store's storage or a native filesystem. Paths
/// are absolute and `/`-separated.
#[allow(async_fn_in_trait)]
pub trait Source {
    /// The file's text, `None` if it does not exist (or is a directory).
    async fn read(&self, path: &str) -> Result<Option<String>, StorageError>;

    /// Paths of the files directly or recursively under `dir` ending in `.md` (for
    /// `.claude/rules/**/*.md`), sorted; empty if `dir` does not exist.
    async fn list_markdown(&self, dir: &str) -> Result<Vec<String>, StorageError>;
}

/// Where a session starts.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
pub struct Request {
    /// The working directory: absolute, `/`-separated.
    pub cwd: String,
    /// The user's home, for `~/` imports and `~/.claude`.
    pub home: String,
    /// The managed policy file, e.g. `/etc/claude-code/CLAUDE.md`.
    #[serde(default)]
    pub managed: Option<String>,
    /// The paths the agent is working on (absolute, or relative to `cwd`), which
    /// decide the rules that have `paths:`.
    #[serde(default)]
    pub paths: Vec<String>,
    /// The user approved external imports: load the imports outside `cwd` made by a
    /// managed, project or local file (Claude Code asks once per project).
    #[serde(default)]
    pub external_imports: bool,
}

/// What a session starts with.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Instructions {
    /// The loaded files in load order, each under Claude Code's header line.
    pub text: String,
    /// Every file considered, loaded or not, in the order considered.
    pub files: Vec<File>,
}

/// One file the resolver considered.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct File {
    pub path: String,
    pub kind: Kind,
    /// The file whose `@` named this one.
    pub imported_by: Option<String>,
    /// An import outside the working directory made by a managed, project or local
    /// file: loaded only when the request approves external imports.
    pub external: bool,
    pub loaded: bool,
    /// Why it was loaded or skipped, in plain words.
    pub reason: String,
}

/// Where a file sits in the hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Managed,
    User,
    UserRule,
    Project,
    ProjectRule,
    Local,
    Import,
}

impl Kind {
    /// The description in the header of a file of this kind and of what it imports:
    /// Claude Code gives imported files their importer's type.
    fn label(self) -> &'static str {
        match self {
            Kind::Project | Kind::ProjectRule => PROJECT_LABEL,
            Kind::Local => LOCAL_LABEL,
            Kind::Managed | Kind::User | Kind::UserRule | Kind::Import => GLOBAL_LABEL,
        }
    }

    fn reason(self) -> &'static str {
        match self {
            Kind::Managed => "managed policy",
            Kind::User => "user instructions",
            Kind::UserRule => "user rule",
            Kind::Project => "project instructions",
            Kind::ProjectRule => "project rule",
            Kind::Local => "local project instructions, not checked in",
            Kind::Import => "imported",
        }
    }
}

/// Instruction files kept in a store, for hosts without a filesystem: the file at
/// absolute path `/a/b/CLAUDE.md` is the key `files/a/b/CLAUDE.md` ([`keys::FILES`]).
struct StoredFiles<'s, S>(&'s S);

impl<S: Storage> Source for StoredFiles<'_, S> {
    async fn read(&self, path: &str) -> Result<Option<String>, StorageError> {
        // A path no key can name (the root itself, a `..`) holds no file.
        let Ok(key) = keys::file_key(path) else { return Ok(None) };
        match self.0.read(&key, 0, None).await {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(StorageError::NotFound { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    async fn list_markdown(&self, dir: &str) -> Result<Vec<String>, StorageError> {
        let Ok(key) = keys::file_key(dir) else { return Ok(Vec::new()) };
        let listed = self.0.list(&format!("{key}/")).await?;
        Ok(listed.into_iter().filter(|k| k.key.ends_with(".md")).filter_map(|k| keys::file_path(&k.key)).collect())
    }
}

impl<S: Storage> Memories<'_, S> {
    /// The instructions a session in `request.cwd` starts with, from the files kept in
    /// the store ([`Memories::write_file`]); the native CLI reads the real filesystem instead.
    pub async fn instructions(&self, request: &Request) -> Result<Instructions, Error> {
        for path in [&request.cwd, &request.home] {
            if !path.starts_with('/') {
                return Err(Error::InvalidArgument(format!("`{path}` is not an absolute path; cwd and home are named from `/`")));
            }
        }
        Ok(resolve(&StoredFiles(&self.base.storage), request).await?)
    }

    /// Keeps an instruction file (a CLAUDE.md, a rule, an imported file) at absolute `path`.
    pub async fn write_file(&self, path: &str, text: &str) -> Result<(), Error> {
        Ok(self.base.storage.replace(&keys::file_key(path)?, text.as_bytes(), None).await?)
    }

    /// The instruction file at absolute `path`, if the store keeps one.
    pub async fn read_file(&self, path: &str) -> Result<Option<String>, Error> {
        keys::file_key(path)?;
        Ok(StoredFiles(&self.base.storage).read(path).await?)
    }

    /// Removes the instruction file at absolute `path`; removing one that is not there is fine.
    pub async fn remove_file(&self, path: &str) -> Result<(), Error> {
        match self.base.storage.remove(&keys::file_key(path)?).await {
            Ok(()) | Err(StorageError::NotFound { .. }) => Ok(()),
            Err(error) => Err(error.into()),
        }
    }
}

/// Resolves the instruction files a session in `request.cwd` starts with.
pub async fn resolve(source: &impl Source, request: &Request) -> Result<Instructions, StorageError> {
    let cwd = normalize(&request.cwd);
    let home = normalize(&request.home);
    let targets = request.paths.iter().map(|path| if path.starts_with('/') { normalize(path) } else { join(&cwd, path) }).collect();
    let user_file = join(&home, ".claude/CLAUDE.md");
    let user_rules = join(&home, ".claude/rules");
    let external_imports = request.external_imports;
    let mut walk =
        Walk { source, home, cwd: cwd.clone(), targets, external_imports, loaded: BTreeSet::new(), found: Instructions::default() };
    if let Some(managed) = &request.managed {
        walk.tree(normalize(managed), Kind::Managed, None).await?;
    }
    walk.tree(user_file, Kind::User, None).await?;
    // Claude Code matches user rules' globs against paths relative to the working directory.
    walk.rules(user_rules, Kind::UserRule, &cwd).await?;
    for dir in ancestors(&cwd) {
        walk.tree(join(dir, "CLAUDE.md"), Kind::Project, None).await?;
        walk.tree(join(dir, ".claude/CLAUDE.md"), Kind::Project, None).await?;
        walk.rules(join(dir, ".claude/rules"), Kind::ProjectRule, dir).await?;
        walk.tree(join(dir, "CLAUDE.local.md"), Kind::Local, None).await?;
    }
    Ok(walk.found)
}

struct Walk<'a, S> {
    source: &'a S,
    home: String,
    cwd: String,
    targets: Vec<String>,
    external_imports: bool,
    /// Each file loads once: a second reference, a diamond's or a cycle's, is skipped.
    loaded: BTreeSet<String>,
    found: Instructions,
}

struct Pending {
    path: String,
    imported_by: Option<String>,
    hops: usize,
}

impl<S: Source> Walk<'_, S> {
    /// Every rule under `dir`; globs in their `paths:` are relative to `base`.
    async fn rules(&mut self, dir: String, kind: Kind, base: &str) -> Result<(), StorageError> {
        for path in self.source.list_markdown(&dir).await? {
            self.tree(normalize(&path), kind, Some(base)).await?;
        }
        Ok(())
    }

    /// `path` and, depth first, what it imports. Each imported file follows the file
    /// that imports it as an entry of its own, not spliced in at the `@`: Claude
    /// Code's `processMemoryFile` returns "the main file first (parent before
    /// children)", and the docs say imports load "alongside the CLAUDE.md that
    /// references them".
    async fn tree(&mut self, path: String, kind: Kind, rule_base: Option<&str>) -> Result<(), StorageError> {
        let root = path.clone();
        let mut pending = vec![Pending { path, imported_by: None, hops: 0 }];
        while let Some(next) = pending.pop() {
            let this_kind = if next.imported_by.is_some() { Kind::Import } else { kind };
            let external =
                next.imported_by.is_some() && !matches!(kind, Kind::User | Kind::UserRule) && under(&next.path, &self.cwd).is_none();
            let skip = if self.loaded.contains(&next.path) {
                Some(String::from("skipped: already loaded"))
            } else if next.hops > MAX_IMPORT_HOPS {
                Some(format!("skipped: more than {MAX_IMPORT_HOPS} import hops below {root}"))
            } else if external && !self.external_imports {
                Some(format!(
                    "skipped: outside the working directory {}; Claude Code loads it once the user approves external imports (approve them to load it)",
                    self.cwd
                ))
            } else if !is_text(&next.path) {
                Some(String::from("skipped: not a text file"))
            } else {
                None
            };
            if let Some(reason) = skip {
                self.record(next, this_kind, external, false, reason);
                continue;
            }
            let Some(raw) = self.source.read(&next.path).await? else {
                self.record(next, this_kind, external, false, String::from("not found"));
                continue;
            };
            let (front, body) = split_frontmatter(&raw);
            let mut reason = match &next.imported_by {
                Some(by) => format!("imported by {by}"),
                None => String::from(this_kind.reason()),
            };
            // `paths:` scopes a rule file only; elsewhere Claude Code just strips it.
            let scope = if next.imported_by.is_none() { rule_base.zip(front.and_then(rule_globs)) } else { None };
            if let Some((base, globs)) = scope {
                match self.targets.iter().find(|target| under(target, base).is_some_and(|rel| globs.iter().any(|g| glob_matches(g, rel)))) {
                    Some(target) => reason = format!("{reason}; its paths match {target}"),
                    None => {
                        self.record(next, this_kind, external, false, String::from("skipped: rule paths do not match any given path"));
                        continue;
                    }
                }
            }
            let scanned = scan(body);
            let content = scanned.text.trim();
            if content.is_empty() {
                self.record(next, this_kind, external, false, String::from("skipped: empty"));
                continue;
            }
            self.loaded.insert(next.path.clone());
            if !self.found.text.is_empty() {
                self.found.text.push_str("\n\n");
            }
            self.found.text.push_str(&format!("Contents of {}{}:\n\n{content}", next.path, kind.label()));
            let dir = parent(&next.path);
            let mut named = BTreeSet::new();
            let imports: Vec<String> = scanned
                .imports
                .iter()
                .map(|import| resolve_import(import, dir, &self.home))
                .filter(|path| named.insert(path.clone()))
                .collect();
            for path in imports.into_iter().rev() {
                pending.push(Pending { path, imported_by: Some(next.path.clone()), hops: next.hops + 1 });
            }
            self.record(next, this_kind, external, true, reason);
        }
        Ok(())
    }

    fn record(&mut self, file: Pending, kind: Kind, external: bool, loaded: bool, reason: String) {
        self.found.files.push(File { path: file.path, kind, imported_by: file.imported_by, external, loaded, reason });
    }
}

/// `path` with empty and `.` names dropped and `..` applied, as an absolute path.
fn normalize(path: &str) -> String {
    let mut names: Vec<&str> = Vec::new();
    for name in path.split('/') {
        match name {
            "" | "." => {}
            ".." => {
                names.pop();
            }
            _ => names.push(name),
        }
    }
    if names.is_empty() {
        return String::from("/");
    }
    let mut out = String::with_capacity(path.len() + 1);
    for name in names {
        out.push('/');
        out.push_str(name);
    }
    out
}

fn join(dir: &str, relative: &str) -> String {
    normalize(&format!("{dir}/{relative}"))
}

fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(at) => &path[..at],
    }
}

/// The directories from the one below the root down to `dir` itself.
fn ancestors(dir: &str) -> Vec<&str> {
    dir.match_indices('/').skip(1).map(|(at, _)| &dir[..at]).chain((dir != "/").then_some(dir)).collect()
}

/// `path` relative to `dir`, if it lies below it.
fn under<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    let rest = if dir == "/" { path.strip_prefix('/') } else { path.strip_prefix(dir)?.strip_prefix('/') }?;
    (!rest.is_empty()).then_some(rest)
}

fn resolve_import(import: &str, dir: &str, home: &str) -> String {
    match import.strip_prefix("~/") {
        Some(rest) => join(home, rest),
        None if import.starts_with('/') => normalize(import),
        None => join(dir, import),
    }
}

/// Whether the file's extension (as Node's `extname` finds it) is one Claude Code
/// imports.
fn is_text(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        None | Some(0) => true,
        Some(dot) => {
            let extension = &name[dot + 1..];
            TEXT_EXTENSIONS.split(' ').any(|known| known.eq_ignore_ascii_case(extension))
        }
    }
}

/// The YAML frontmatter (between a first line `---` and the next line `---`) and the
/// text after it. Without a closing line the whole text is body, as in Claude Code.
fn split_frontmatter(raw: &str) -> (Option<&str>, &str) {
    let Some((first, rest)) = raw.split_once('\n') else { return (None, raw) };
    if first.trim_end() != "---" {
        return (None, raw);
    }
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (Some(&rest[..offset]), &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    (None, raw)
}

/// The globs a rule's `paths:` scopes it to, `None` when it applies everywhere (no
/// `paths:`, nothing in it, or only `**`). Claude Code reads `paths:` as a list or a
/// comma-separated string, expands braces up front and drops a trailing `/**`, since
/// its matcher already takes a directory to cover everything in it.
fn rule_globs(front: &str) -> Option<Vec<String>> {
    let mut globs = Vec::new();
    for value in paths_values(front)? {
        for part in split_commas(&value) {
            let part = part.trim();
            if !part.is_empty() {
                expand_braces(part, &mut globs);
            }
        }
    }
    let globs: Vec<String> =
        globs.into_iter().map(|glob| String::from(glob.strip_suffix("/**").unwrap_or(&glob))).filter(|glob| !glob.is_empty()).collect();
    if globs.iter().all(|glob| glob == "**") { None } else { Some(globs) }
}

/// The values of the top-level `paths:` key: the subset of YAML rules use (an inline
/// string, a flow list `[a, b]`, or a block list of `- item` lines). Anything else
/// reads as no value rather than an error: Claude Code also loads a rule whose
/// frontmatter does not parse, as a rule without `paths:`.
fn paths_values(front: &str) -> Option<Vec<String>> {
    let mut lines = front.lines();
    while let Some(line) = lines.next() {
        let Some(value) = line.strip_prefix("paths").and_then(|rest| rest.trim_start_matches([' ', '\t']).strip_prefix(':')) else {
            continue;
        };
        let value = value.trim();
        if value.is_empty() {
            let items = lines
                .map(str::trim)
                .take_while(|line| line.is_empty() || line.starts_with('#') || line.starts_with('-'))
                .filter_map(|line| line.strip_prefix('-'))
                .map(|item| unquote(item.trim()))
                .collect();
            return Some(items);
        }
        if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            return Some(split_commas(inner).into_iter().map(|item| unquote(item.trim())).collect());
        }
        return Some(vec![unquote(value)]);
    }
    None
}

fn unquote(value: &str) -> String {
    if let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        return inner.replace("\\\"", "\"").replace("\\\\", "\\");
    }
    if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        return inner.replace("''", "'");
    }
    String::from(value)
}

/// `text` split at the commas outside braces, so `src/*.{ts,tsx}` stays whole.
fn split_commas(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Pushes `pattern` with its braces expanded, alternatives in order. Like Claude Code,
/// only a first `{` with a matching `}` and something inside expands; otherwise the
/// braces are literal.
fn expand_braces(pattern: &str, out: &mut Vec<String>) {
    let mut work = vec![String::from(pattern)];
    let mut steps = 0;
    while let Some(pattern) = work.pop() {
        if out.len() >= MAX_GLOBS || steps >= MAX_GLOBS {
            return;
        }
        steps += 1;
        let Some((open, close)) = first_brace_group(&pattern) else {
            out.push(pattern);
            continue;
        };
        let (prefix, inner, suffix) = (&pattern[..open], &pattern[open + 1..close], &pattern[close + 1..]);
        for alternative in split_commas(inner).into_iter().rev() {
            work.push(format!("{prefix}{}{suffix}", alternative.trim()));
        }
    }
}

fn first_brace_group(pattern: &str) -> Option<(usize, usize)> {
    let open = pattern.find('{')?;
    let mut depth = 0usize;
    for (at, c) in pattern[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return (at > 1).then_some((open, open + at));
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether `glob` matches `path` (relative, `/`-separated) under the gitignore rules
/// of Claude Code's matcher (the `ignore` package): a glob without a `/` matches a
/// name at any depth, one with a `/` is anchored at the base, a glob ending in `/`
/// matches directories only, and matching a directory matches everything in it. `*`
/// and `?` stay within a name; `**` as a whole name spans any number of names.
fn glob_matches(glob: &str, path: &str) -> bool {
    let directories_only = glob.ends_with('/');
    let glob = glob.trim_end_matches('/');
    let anchored = glob.contains('/');
    let glob = glob.strip_prefix('/').unwrap_or(glob);
    let pattern: Vec<&str> = glob.split('/').collect();
    let names: Vec<&str> = path.split('/').collect();
    let candidates = if directories_only { names.len().saturating_sub(1) } else { names.len() };
    (1..=candidates)
        .filter_map(|len| names.get(..len))
        .any(|prefix| if anchored { names_match(&pattern, prefix) } else { prefix.last().is_some_and(|name| name_matches(glob, name)) })
}

/// Glob names against path names, `**` matching any run of names. The classic
/// wildcard walk: on a mismatch, let the last `**` swallow one more name.
fn names_match(pattern: &[&str], names: &[&str]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < names.len() {
        match (pattern.get(p), names.get(n)) {
            (Some(&"**"), _) => {
                star = Some((p, n));
                p += 1;
            }
            (Some(glob), Some(name)) if name_matches(glob, name) => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern.get(p..).is_some_and(|rest| rest.iter().all(|glob| *glob == "**"))
}

/// One name against one glob name: `*` any run of characters, `?` one character.
fn name_matches(glob: &str, name: &str) -> bool {
    let glob: Vec<char> = glob.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut g, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match (glob.get(g), name.get(n)) {
            (Some('*'), _) => {
                star = Some((g, n));
                g += 1;
            }
            (Some(expected), Some(actual)) if *expected == '?' || expected == actual => {
                g += 1;
                n += 1;
            }
            _ => match star {
                Some((star_g, star_n)) => {
                    g = star_g + 1;
                    n = star_n + 1;
                    star = Some((star_g, star_n + 1));
                }
                None => return false,
            },
        }
    }
    glob.get(g..).is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

/// A file's text with its block comments taken out, and the `@` imports it makes.
struct Scanned {
    text: String,
    imports: Vec<String>,
}

/// Reads markdown the way Claude Code's lexer pass does, line by line: fenced code
/// blocks (``` or ~~~) are kept and import nothing; an HTML comment block (a line
/// starting `<!--`, up to the line holding `-->`) is dropped, except any text after
/// its `-->`, and imports nothing; an unclosed one is kept, since a typo must not
/// swallow the rest of the file. Comments inside a paragraph stay, as in Claude Code.
fn scan(body: &str) -> Scanned {
    let mut scanned = Scanned { text: String::with_capacity(body.len()), imports: Vec::new() };
    let mut paragraph = String::new();
    let mut fence: Option<Fence> = None;
    let mut comment: Option<String> = None;
    let mut after_dropped_comment = false;
    for line in body.split_inclusive('\n') {
        if let Some(raw) = &mut comment {
            raw.push_str(line);
            if line.contains("-->") {
                after_dropped_comment = comment_block(raw, &mut scanned);
                comment = None;
            }
            continue;
        }
        if let Some(open) = fence {
            scanned.text.push_str(line);
            if open.closed_by(line) {
                fence = None;
            }
            continue;
        }
        // A dropped comment takes its trailing blank lines with it, as the lexer's token does.
        if after_dropped_comment && line.trim().is_empty() {
            continue;
        }
        after_dropped_comment = false;
        if let Some(open) = Fence::opened_by(line) {
            imports_in(&paragraph, &mut scanned.imports);
            paragraph.clear();
            fence = Some(open);
            scanned.text.push_str(line);
            continue;
        }
        if let Some(after) = html_block_start(line).and_then(|rest| rest.strip_prefix("<!--")) {
            imports_in(&paragraph, &mut scanned.imports);
            paragraph.clear();
            if after.contains("-->") {
                after_dropped_comment = comment_block(line, &mut scanned);
            } else {
                comment = Some(String::from(line));
            }
            continue;
        }
        scanned.text.push_str(line);
        if line.trim().is_empty() {
            imports_in(&paragraph, &mut scanned.imports);
            paragraph.clear();
        } else {
            paragraph.push_str(line);
        }
    }
    if let Some(raw) = comment {
        scanned.text.push_str(&raw);
    }
    imports_in(&paragraph, &mut scanned.imports);
    scanned
}

/// Keeps what a closed comment block holds outside its comments; says whether the
/// block was dropped whole.
fn comment_block(raw: &str, scanned: &mut Scanned) -> bool {
    let residue = strip_comments(raw);
    if residue.trim().is_empty() {
        return true;
    }
    imports_in(&residue, &mut scanned.imports);
    scanned.text.push_str(&residue);
    false
}

fn strip_comments(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(start) = rest.find("<!--") {
        let (before, from) = rest.split_at(start);
        let Some(end) = from[4..].find("-->") else { break };
        out.push_str(before);
        rest = &from[4 + end + 3..];
    }
    out.push_str(rest);
    out
}

/// The line without the up to three spaces an HTML block may be indented by.
fn html_block_start(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches(' ');
    (line.len() - rest.len() <= 3).then_some(rest)
}

#[derive(Clone, Copy)]
struct Fence {
    marker: char,
    len: usize,
}

impl Fence {
    /// Indentation and list or quote markers before the fence are allowed, so fences
    /// inside list items and quotes count too.
    fn opened_by(line: &str) -> Option<Fence> {
        let rest = strip_containers(line);
        let marker = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
        let info = rest.trim_start_matches(marker);
        let len = rest.len() - info.len();
        // A backtick in the info string makes the line inline code, not a fence.
        (len >= 3 && !(marker == '`' && info.contains('`'))).then_some(Fence { marker, len })
    }

    fn closed_by(self, line: &str) -> bool {
        let rest = strip_containers(line);
        let after = rest.trim_start_matches(self.marker);
        rest.len() - after.len() >= self.len && after.trim().is_empty()
    }
}

fn strip_containers(line: &str) -> &str {
    let mut rest = line.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix('>') {
            rest = after.trim_start();
        } else if let Some(after) = list_marker(rest) {
            rest = after.trim_start();
        } else {
            return rest;
        }
    }
}

fn list_marker(line: &str) -> Option<&str> {
    let after = match line.strip_prefix(['-', '*', '+']) {
        Some(after) => after,
        None => {
            let digits = line.trim_start_matches(|c: char| c.is_ascii_digit());
            if digits.len() == line.len() {
                return None;
            }
            digits.strip_prefix(['.', ')'])?
        }
    };
    after.starts_with([' ', '\t']).then_some(after)
}

/// The imports of a paragraph: code spans and inline comments import nothing, and
/// each stretch between them reads like one of the lexer's text nodes.
fn imports_in(paragraph: &str, imports: &mut Vec<String>) {
    let mut stretch_start = 0;
    let mut from = 0;
    while let Some(found) = paragraph.get(from..).and_then(|rest| rest.find(['`', '<'])) {
        let at = from + found;
        let rest = &paragraph[at..];
        let skipped_to = if rest.starts_with('`') {
            let after = rest.trim_start_matches('`');
            let run = rest.len() - after.len();
            match closing_run(after, run) {
                Some(end) => Some(at + run + end),
                None => {
                    from = at + run;
                    continue;
                }
            }
        } else {
            rest.strip_prefix("<!--").and_then(|after| after.find("-->")).map(|end| at + 4 + end + 3)
        };
        match skipped_to {
            Some(end) => {
                imports_in_text(&paragraph[stretch_start..at], imports);
                stretch_start = end;
                from = end;
            }
            None => from = at + 1,
        }
    }
    imports_in_text(&paragraph[stretch_start..], imports);
}

/// Where a code span opened by `run` backticks ends in `text`: after the next run of
/// exactly as many. Without one the opening backticks are literal.
fn closing_run(text: &str, run: usize) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text.get(from..)?.find('`') {
        let start = from + found;
        let rest = &text[start..];
        let len = rest.len() - rest.trim_start_matches('`').len();
        if len == run {
            return Some(start + len);
        }
        from = start + len;
    }
    None
}

/// Claude Code's rule: `@` at the start or after whitespace, then a run of
/// non-space characters (`\ ` for a space), cut at `#`; a path if it starts with
/// `./`, `~/`, `/` or a letter, digit, `.`, `_` or `-`. So `a@b.com` and `@@x` are not
/// imports.
fn imports_in_text(text: &str, imports: &mut Vec<String>) {
    let mut from = 0;
    while let Some(found) = text.get(from..).and_then(|rest| rest.find('@')) {
        let at = from + found;
        from = at + 1;
        if !text[..at].chars().next_back().is_none_or(char::is_whitespace) {
            continue;
        }
        let (token, len) = import_token(&text[at + 1..]);
        // The next match starts after this token, as the pattern's would.
        from += len;
        let path = token.split_once('#').map_or(token.as_str(), |(path, _)| path);
        let is_path = path.starts_with("./")
            || path.starts_with("~/")
            || (path.starts_with('/') && path != "/")
            || path.starts_with(|c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if is_path {
            imports.push(String::from(path));
        }
    }
}

/// The path-like run after an `@` with `\ ` unescaped, and its length in `text`.
fn import_token(text: &str) -> (String, usize) {
    let mut token = String::new();
    let mut len = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&' ') {
            chars.next();
            token.push(' ');
            len += 2;
        } else if c == '\\' || c.is_whitespace() {
            break;
        } else {
            token.push(c);
            len += c.len_utf8();
        }
    }
    (token, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;
    use alloc::string::ToString;

    /// An in-memory filesystem: path → text.
    struct Files(BTreeMap<String, String>);

    impl Source for Files {
        async fn read(&self, path: &str) -> Result<Option<String>, StorageError> {
            Ok(self.0.get(path).cloned())
        }
        async fn list_markdown(&self, dir: &str) -> Result<Vec<String>, StorageError> {
            let prefix = format!("{dir}/");
            Ok(self.0.keys().filter(|path| path.starts_with(&prefix) && path.ends_with(".md")).cloned().collect())
        }
    }

    const MANAGED: &str = "/etc/claude-code/CLAUDE.md";

    /// Resolved with external imports approved, as the tests of how imports walk need.
    fn resolve_in(files: &[(&str, &str)], cwd: &str, paths: &[&str]) -> Instructions {
        resolve_approving(files, cwd, paths, true)
    }

    fn resolve_approving(files: &[(&str, &str)], cwd: &str, paths: &[&str], external_imports: bool) -> Instructions {
        let files = Files(files.iter().map(|(path, text)| (path.to_string(), text.to_string())).collect());
        let request = Request {
            cwd: cwd.into(),
            home: "/home/u".into(),
            managed: Some(MANAGED.into()),
            paths: paths.iter().map(|path| path.to_string()).collect(),
            external_imports,
        };
        crate::block_on(resolve(&files, &request)).unwrap()
    }

    fn loaded(found: &Instructions) -> Vec<(&str, Kind)> {
        found.files.iter().filter(|file| file.loaded).map(|file| (file.path.as_str(), file.kind)).collect()
    }

    fn file<'a>(found: &'a Instructions, path: &str) -> &'a File {
        found.files.iter().find(|file| file.path == path).unwrap_or_else(|| panic!("{path} was not considered: {:#?}", found.files))
    }

    #[test]
    fn the_hierarchy_loads_in_claude_codes_order() {
        let found = resolve_in(
            &[
                ("/w/app/CLAUDE.local.md", "local"),
                ("/w/app/.claude/rules/b.md", "rule b"),
                ("/w/app/.claude/rules/a/deep.md", "rule a/deep"),
                ("/w/app/.claude/CLAUDE.md", "dot claude"),
                ("/w/app/CLAUDE.md", "app"),
                ("/w/CLAUDE.md", "w"),
                ("/home/u/.claude/rules/style.md", "user rule"),
                ("/home/u/.claude/CLAUDE.md", "user"),
                (MANAGED, "policy"),
            ],
            "/w/app",
            &[],
        );
        assert_eq!(
            loaded(&found),
            [
                (MANAGED, Kind::Managed),
                ("/home/u/.claude/CLAUDE.md", Kind::User),
                ("/home/u/.claude/rules/style.md", Kind::UserRule),
                ("/w/CLAUDE.md", Kind::Project),
                ("/w/app/CLAUDE.md", Kind::Project),
                ("/w/app/.claude/CLAUDE.md", Kind::Project),
                ("/w/app/.claude/rules/a/deep.md", Kind::ProjectRule),
                ("/w/app/.claude/rules/b.md", Kind::ProjectRule),
                ("/w/app/CLAUDE.local.md", Kind::Local),
            ]
        );
        assert!(found.text.starts_with(
            "Contents of /etc/claude-code/CLAUDE.md (user's private global instructions for all projects):\n\npolicy\n\n\
             Contents of /home/u/.claude/CLAUDE.md (user's private global instructions for all projects):\n\nuser\n\n"
        ));
        assert!(
            found.text.contains("Contents of /w/app/.claude/rules/b.md (project instructions, checked into the codebase):\n\nrule b\n\n")
        );
        assert!(found.text.ends_with("Contents of /w/app/CLAUDE.local.md (user's private project instructions, not checked in):\n\nlocal"));
        assert_eq!(file(&found, "/home/u/.claude/CLAUDE.md").reason, "user instructions");
    }

    #[test]
    fn the_walk_covers_each_directory_from_below_the_root_to_the_cwd() {
        let found = resolve_in(
            &[
                ("/CLAUDE.md", "root"),
                ("/a/CLAUDE.md", "a"),
                ("/a/b/c/CLAUDE.md", "c"),
                ("/a/b/sibling/CLAUDE.md", "sibling"),
                ("/a/b/c/d/CLAUDE.md", "below the cwd"),
            ],
            "/a/./b//c/",
            &[],
        );
        assert_eq!(loaded(&found), [("/a/CLAUDE.md", Kind::Project), ("/a/b/c/CLAUDE.md", Kind::Project)]);
        let probed: Vec<&str> = found.files.iter().filter(|file| file.kind == Kind::Project).map(|file| file.path.as_str()).collect();
        assert_eq!(
            probed,
            [
                "/a/CLAUDE.md",
                "/a/.claude/CLAUDE.md",
                "/a/b/CLAUDE.md",
                "/a/b/.claude/CLAUDE.md",
                "/a/b/c/CLAUDE.md",
                "/a/b/c/.claude/CLAUDE.md"
            ]
        );
        assert_eq!(file(&found, "/a/b/CLAUDE.md").reason, "not found");
        assert_eq!(file(&found, MANAGED).reason, "not found");
    }

    #[test]
    fn imported_files_follow_the_file_that_imports_them() {
        let found = resolve_in(
            &[
                ("/p/CLAUDE.md", "see @docs/a.md and @./b.md then @/abs/c.md\n@../up.md @b.md,"),
                ("/p/docs/a.md", "a imports @sub/x.md"),
                ("/p/docs/sub/x.md", "x"),
                ("/p/b.md", "b"),
                ("/abs/c.md", "c"),
                ("/up.md", "up"),
                ("/p/CLAUDE.local.md", "local"),
            ],
            "/p",
            &[],
        );
        assert_eq!(
            loaded(&found),
            [
                ("/p/CLAUDE.md", Kind::Project),
                ("/p/docs/a.md", Kind::Import),
                ("/p/docs/sub/x.md", Kind::Import),
                ("/p/b.md", Kind::Import),
                ("/abs/c.md", Kind::Import),
                ("/up.md", Kind::Import),
                ("/p/CLAUDE.local.md", Kind::Local),
            ]
        );
        let x = file(&found, "/p/docs/sub/x.md");
        assert_eq!((x.imported_by.as_deref(), x.reason.as_str()), (Some("/p/docs/a.md"), "imported by /p/docs/a.md"));
        // An imported file is labelled like the file that started the chain.
        assert!(found.text.contains("Contents of /p/docs/sub/x.md (project instructions, checked into the codebase):\n\nx"));
        assert!(found.text.contains("see @docs/a.md"), "the @ stays in the importing file's text");
        // Claude Code's pattern keeps trailing punctuation, and `.md,` is no text extension.
        assert_eq!(file(&found, "/p/b.md,").reason, "skipped: not a text file");
    }

    /// Claude Code loads an import from outside the working directory, made by a
    /// managed, project or local file, only once the user approves external imports;
    /// the user's own files import from anywhere.
    #[test]
    fn imports_outside_the_working_directory_wait_for_approval() {
        let files = [
            ("/w/app/CLAUDE.md", "Project.\n@../shared.md\n@/etc/passwd.md\n@docs/inside.md"),
            ("/w/shared.md", "Shared."),
            ("/etc/passwd.md", "Not yours."),
            ("/w/app/docs/inside.md", "Inside.\n@../../chained.md"),
            ("/w/chained.md", "Chained."),
            ("/home/u/.claude/CLAUDE.md", "Mine.\n@~/notes/style.md"),
            ("/home/u/notes/style.md", "My style.\n@/etc/mine.md"),
            ("/etc/mine.md", "Also mine."),
        ];
        // An import's import follows the file its chain started from.
        let outside = ["/w/shared.md", "/etc/passwd.md", "/w/chained.md"];
        let asked = resolve_approving(&files, "/w/app", &[], false);
        for path in outside {
            let found = file(&asked, path);
            assert!(found.external && !found.loaded && found.reason.contains("approves external imports"), "{found:?}");
        }
        assert!(!asked.text.contains("Shared.") && !asked.text.contains("Not yours."), "{}", asked.text);
        for path in ["/w/app/docs/inside.md", "/home/u/notes/style.md", "/etc/mine.md"] {
            let found = file(&asked, path);
            assert!(!found.external && found.loaded, "{found:?}");
        }
        let approved = resolve_approving(&files, "/w/app", &[], true);
        for path in outside {
            let found = file(&approved, path);
            assert!(found.external && found.loaded, "{found:?}");
        }
        assert!(approved.text.contains("Shared.") && approved.text.contains("Not yours."), "{}", approved.text);
    }

    #[test]
    fn imports_stop_four_hops_below_the_importing_file() {
        let found = resolve_in(
            &[
                ("/p/CLAUDE.md", "@1.md"),
                ("/p/1.md", "@2.md"),
                ("/p/2.md", "@3.md"),
                ("/p/3.md", "@4.md"),
                ("/p/4.md", "@5.md"),
                ("/p/5.md", "five"),
            ],
            "/p",
            &[],
        );
        let chain: Vec<&str> = loaded(&found).into_iter().map(|(path, _)| path).collect();
        assert_eq!(chain, ["/p/CLAUDE.md", "/p/1.md", "/p/2.md", "/p/3.md", "/p/4.md"]);
        let five = file(&found, "/p/5.md");
        assert!(!five.loaded);
        assert_eq!(five.reason, "skipped: more than 4 import hops below /p/CLAUDE.md");
        assert_eq!(five.imported_by.as_deref(), Some("/p/4.md"));
        assert!(!found.text.contains("five"));
    }

    #[test]
    fn code_fences_code_spans_and_emails_do_not_import() {
        let text = "\
Mail me at someone@example.com or @ nobody, not @@twice, not @#heading.
Inline `@span.md` and ``double `@span2.md` ticks`` and `` `x` ``@glued.md

```sh
@fenced.md
```
~~~~
@tilde.md
```
still fenced @tilde2.md
~~~~
- item:
  ```
  @listfence.md
  ```
> quoted @quoted.md
An unmatched ` backtick then @after-tick.md#section
";
        let found = resolve_in(&[("/p/CLAUDE.md", text)], "/p", &[]);
        let imports: Vec<&str> = found.files.iter().filter(|file| file.kind == Kind::Import).map(|file| file.path.as_str()).collect();
        assert_eq!(imports, ["/p/glued.md", "/p/quoted.md", "/p/after-tick.md"]);
        assert!(found.text.contains("@fenced.md"), "fenced text is kept");
    }

    #[test]
    fn cycles_end_at_the_first_file_seen_again() {
        let found = resolve_in(&[("/p/CLAUDE.md", "@a.md"), ("/p/a.md", "@b.md @a.md"), ("/p/b.md", "@a.md @CLAUDE.md")], "/p", &[]);
        assert_eq!(loaded(&found).len(), 3);
        let again: Vec<(&str, Option<&str>)> = found
            .files
            .iter()
            .filter(|file| file.reason == "skipped: already loaded")
            .map(|file| (file.path.as_str(), file.imported_by.as_deref()))
            .collect();
        assert_eq!(again, [("/p/a.md", Some("/p/b.md")), ("/p/CLAUDE.md", Some("/p/b.md")), ("/p/a.md", Some("/p/a.md"))]);
        assert_eq!(found.text.matches("Contents of").count(), 3);
    }

    #[test]
    fn a_diamond_loads_its_shared_file_once() {
        let found = resolve_in(
            &[
                ("/p/CLAUDE.md", "@left.md @right.md @left.md"),
                ("/p/left.md", "@shared.md"),
                ("/p/right.md", "@shared.md"),
                ("/p/shared.md", "s"),
            ],
            "/p",
            &[],
        );
        let chain: Vec<&str> = loaded(&found).into_iter().map(|(path, _)| path).collect();
        assert_eq!(chain, ["/p/CLAUDE.md", "/p/left.md", "/p/shared.md", "/p/right.md"]);
        let shared: Vec<(&str, bool)> =
            found.files.iter().filter(|file| file.path == "/p/shared.md").map(|file| (file.reason.as_str(), file.loaded)).collect();
        assert_eq!(shared, [("imported by /p/left.md", true), ("skipped: already loaded", false)]);
        assert_eq!(found.files.iter().filter(|file| file.path == "/p/left.md").count(), 1, "a file naming an import twice imports it once");
    }

    #[test]
    fn rules_with_paths_load_only_for_matching_paths() {
        let files = [
            ("/p/.claude/rules/always.md", "# always\n"),
            ("/p/.claude/rules/api.md", "---\npaths:\n  - \"src/api/**/*.ts\"\n  - 'lib/**'\n---\napi rule"),
            ("/p/.claude/rules/braces.md", "---\npaths: src/**/*.{ts,tsx}\n---\nbraces rule"),
            ("/p/.claude/rules/list.md", "---\ndescription: x\npaths: [\"docs/*.md\", tests/**]\n---\nlist rule"),
            ("/p/.claude/rules/commas.md", "---\npaths: \"*.rs, Cargo.toml\"\n---\ncomma rule"),
            ("/p/.claude/rules/everything.md", "---\npaths: \"**\"\n---\neverywhere rule"),
            ("/home/u/.claude/rules/mine.md", "---\npaths: app/**/*.py\n---\nuser rule"),
        ];
        let found =
            resolve_in(&files, "/p", &["/p/src/api/v1/users.ts", "src/ui/button.tsx", "/p/crates/core/src/lib.rs", "/elsewhere/x.py"]);
        let rules: Vec<&str> = loaded(&found).into_iter().map(|(path, _)| path).collect();
        assert_eq!(
            rules,
            [
                "/p/.claude/rules/always.md",
                "/p/.claude/rules/api.md",
                "/p/.claude/rules/braces.md",
                "/p/.claude/rules/commas.md",
                "/p/.claude/rules/everything.md",
            ]
        );
        assert_eq!(file(&found, "/p/.claude/rules/api.md").reason, "project rule; its paths match /p/src/api/v1/users.ts");
        assert_eq!(file(&found, "/p/.claude/rules/list.md").reason, "skipped: rule paths do not match any given path");
        assert_eq!(file(&found, "/home/u/.claude/rules/mine.md").reason, "skipped: rule paths do not match any given path");
        assert_eq!(file(&found, "/p/.claude/rules/always.md").reason, "project rule");
        assert!(found.text.contains(":\n\napi rule") && !found.text.contains("paths:"), "frontmatter is stripped");

        let found = resolve_in(&files, "/p", &["app/models/user.py", "/p/lib/deep/x.c", "/p/docs/a.md", "/p/tests/unit/t.rs"]);
        for rule in ["/home/u/.claude/rules/mine.md", "/p/.claude/rules/api.md", "/p/.claude/rules/list.md", "/p/.claude/rules/commas.md"] {
            assert!(file(&found, rule).loaded, "{rule}");
        }
        assert!(!file(&found, "/p/.claude/rules/braces.md").loaded);
    }

    #[test]
    fn project_rule_globs_are_relative_to_the_directory_holding_dot_claude() {
        let files = [
            ("/p/.claude/rules/r.md", "---\npaths: src/*.ts\n---\nouter"),
            ("/p/sub/.claude/rules/r.md", "---\npaths: src/*.ts\n---\ninner"),
        ];
        let found = resolve_in(&files, "/p/sub", &["/p/sub/src/a.ts"]);
        assert_eq!(loaded(&found), [("/p/sub/.claude/rules/r.md", Kind::ProjectRule)]);
        let found = resolve_in(&files, "/p/sub", &["/p/src/a.ts"]);
        assert_eq!(loaded(&found), [("/p/.claude/rules/r.md", Kind::ProjectRule)]);
    }

    #[test]
    fn globs_follow_gitignore_rules() {
        for (glob, path, expected) in [
            ("**/*.ts", "a.ts", true),
            ("**/*.ts", "a/b/c.ts", true),
            ("src/**/*.ts", "src/a.ts", true),
            ("src/**/*.ts", "src/a/b/c.ts", true),
            ("src/**/*.ts", "lib/src/a.ts", false),
            ("*.ts", "deep/down/a.ts", true),
            ("src", "src/a/b.rs", true),
            ("src", "lib/src/b.rs", true),
            ("/src", "lib/src/b.rs", false),
            ("docs/", "docs/a.md", true),
            ("docs/", "docs", false),
            ("a?c.md", "abc.md", true),
            ("a?c.md", "a/c.md", false),
            ("src/*.ts", "src/a/b.ts", false),
            ("a/**/b", "a/b", true),
            ("a/**/b", "a/x/y/b", true),
            ("*.test.*", "x/y.test.tsx", true),
            ("é*", "éclair", true),
        ] {
            assert_eq!(glob_matches(glob, path), expected, "{glob} vs {path}");
        }
    }

    #[test]
    fn home_imports_resolve_under_the_home_directory() {
        let found = resolve_in(
            &[
                ("/p/CLAUDE.md", "- @~/.claude/mine.md\n- @~/notes/with\\ space.md"),
                ("/home/u/.claude/mine.md", "mine"),
                ("/home/u/notes/with space.md", "spaced"),
            ],
            "/p",
            &[],
        );
        let chain: Vec<&str> = loaded(&found).into_iter().map(|(path, _)| path).collect();
        assert_eq!(chain, ["/p/CLAUDE.md", "/home/u/.claude/mine.md", "/home/u/notes/with space.md"]);
    }

    #[test]
    fn block_html_comments_are_stripped_outside_code() {
        let text = "\
keep 1
<!-- a note @hidden.md -->

<!--
a maintainers' block
@hidden2.md
-->
keep 2 <!-- an inline comment stays -->
<!-- gone --> residue @shown.md
```
<!-- in a fence, kept -->
```
<!-- never closed
@hidden3.md
";
        let found = resolve_in(&[("/p/CLAUDE.md", text)], "/p", &[]);
        let imports: Vec<&str> = found.files.iter().filter(|file| file.kind == Kind::Import).map(|file| file.path.as_str()).collect();
        assert_eq!(imports, ["/p/shown.md"]);
        let expected = "\
keep 1
keep 2 <!-- an inline comment stays -->
 residue @shown.md
```
<!-- in a fence, kept -->
```
<!-- never closed
@hidden3.md";
        assert_eq!(found.text, format!("Contents of /p/CLAUDE.md (project instructions, checked into the codebase):\n\n{expected}"));
    }

    #[test]
    fn missing_empty_and_binary_files_are_recorded_not_loaded() {
        let found = resolve_in(
            &[
                ("/p/CLAUDE.md", "@gone.md @empty.md @logo.png @README"),
                ("/p/empty.md", "<!-- only a comment -->\n"),
                ("/p/README", "readme"),
            ],
            "/p",
            &[],
        );
        assert_eq!(file(&found, "/p/gone.md").reason, "not found");
        assert_eq!(file(&found, "/p/empty.md").reason, "skipped: empty");
        assert_eq!(file(&found, "/p/logo.png").reason, "skipped: not a text file");
        assert!(file(&found, "/p/README").loaded);
        assert_eq!(found.text.matches("Contents of").count(), 2);
    }

    #[test]
    fn malformed_frontmatter_does_not_stop_a_rule() {
        let files = [
            ("/p/.claude/rules/unclosed.md", "---\npaths: src/**\nno closing line"),
            ("/p/.claude/rules/garbage.md", "---\n: : [\n{{{\n---\ngarbage body"),
            ("/p/.claude/rules/bracket.md", "---\npaths: [src/**\n---\nbracket body"),
            ("/p/.claude/rules/braces.md", "---\npaths: \"{{{a,b}\"\n---\nbraces body"),
            ("/p/.claude/rules/empty.md", "---\npaths:\n---\nempty paths body"),
            ("/p/.claude/rules/nothing.md", "---\n---\n"),
        ];
        let found = resolve_in(&files, "/p", &["/p/x.rs"]);
        assert!(file(&found, "/p/.claude/rules/unclosed.md").loaded, "no closing line: all of it is body");
        assert!(found.text.contains("no closing line"));
        assert!(file(&found, "/p/.claude/rules/garbage.md").loaded && found.text.contains("garbage body") && !found.text.contains("{{{"));
        assert_eq!(file(&found, "/p/.claude/rules/bracket.md").reason, "skipped: rule paths do not match any given path");
        assert!(!file(&found, "/p/.claude/rules/braces.md").loaded);
        assert!(file(&found, "/p/.claude/rules/empty.md").loaded, "an empty paths: applies everywhere");
        assert_eq!(file(&found, "/p/.claude/rules/nothing.md").reason, "skipped: empty");
    }

    #[test]
    fn brace_expansion_is_bounded() {
        let mut globs = Vec::new();
        expand_braces(&"{a,b}".repeat(40), &mut globs);
        assert!(!globs.is_empty() && globs.len() <= MAX_GLOBS, "{}", globs.len());
        assert_eq!(
            rule_globs("paths: \"{a,b}/{c,d}, e/**\"\n"),
            Some(vec!["a/c".into(), "a/d".into(), "b/c".into(), "b/d".into(), "e".into()])
        );
    }

    proptest::proptest! {
        #[test]
        fn random_text_never_panics(text in "(\\PC|[-\\n@`~<!>{}\\[\\],*?/#\\\\ .:\"'])*") {
            let scanned = scan(&text);
            proptest::prop_assert!(scanned.text.len() <= text.len() + 1);
            let (front, body) = split_frontmatter(&text);
            if let Some(front) = front {
                for glob in rule_globs(front).unwrap_or_default() {
                    glob_matches(&glob, "src/a/b.ts");
                }
            }
            scan(body);
            rule_globs(&text);
            glob_matches(&text, "a/b");
            glob_matches("a/**/b", &text);
        }

        #[test]
        fn random_files_resolve(claude in "(\\PC|[-\\n@`~<!>{}*/#. ])*", rule in "(\\PC|[-\\n@`~<!>{}*/#. :])*") {
            let files = [("/p/CLAUDE.md", claude.as_str()), ("/p/.claude/rules/r.md", rule.as_str()), ("/p/a.md", "@CLAUDE.md @.claude/rules/r.md")];
            resolve_in(&files, "/p", &["/p/src/a.ts"]);
        }
    }
}
