//! `cargo xtask codegen`: what is derived from the engine's WIT (wit/*.wit), checked in;
//! `--check` (in the test command) fails when any of it is stale.
//!
//! - js/wit.js, the table the JavaScript API converts every value by. jco's transpiled
//!   component carries no types at run time; without this table each record's fields,
//!   each enum's cases and each integer's range were written again by hand in the API
//!   and drifted from the WIT.
//! - The method reference in each package's README: every method of the JavaScript API
//!   (js/api.js) and of the Python one (host-python/mneme/__init__.py) with the WIT
//!   function it calls and that function's doc comment, so what a method does is
//!   written once, in the WIT.
//! - The Rust bindings of every operation: the core's `Engine` trait's three
//!   implementations, the component's exports and the browser binding's operations
//!   (see `engines.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use wit_parser::{FunctionKind, Handle, InterfaceId, Resolve, Type, TypeDefKind, TypeId};

const WIT: &str = "wit";
pub const JS_TABLE: &str = "js/wit.js";
/// The Python package's value types.
const PY_TYPES: &str = "host-python/mneme/types.py";
/// The JavaScript packages' value types, as the WIT gives them.
const TS_TYPES: &str = "js/values.d.ts";
/// The browser package's declarations (written by hand but for the derived methods'),
/// and the test that holds each of their value types to the WIT's (type-checked by
/// host-node/test/typed.mjs).
pub const DTS: &str = "web/js/mneme.d.ts";
const SHAPES: &str = "host-node/test/shapes.ts";

/// The JavaScript API, whose methods the browser and Node READMEs list.
pub const JS_API: &str = "js/api.js";
pub const JS_OPTIONS: &str = "js/options.js";
/// The Python API, whose methods the Python README lists.
pub const PYTHON_API: &str = "host-python/mneme/__init__.py";
/// How the conformance runners call the operations whose methods are derived.
const JS_DERIVED_CALLS: &str = "tests/js/derived.js";
const PYTHON_DERIVED_CALLS: &str = "host-python/tests/derived.py";
/// Where each method reference goes, and from which API.
const REFERENCES: [(&str, Language); 3] =
    [("web/README.md", Language::JavaScript), ("host-node/README.md", Language::JavaScript), ("host-python/README.md", Language::Python)];
const BEGIN: &str = "<!-- methods: written by `cargo xtask codegen` from wit/ and the API's source; do not edit -->";
const END: &str = "<!-- end of methods -->";

#[derive(Clone, Copy)]
pub enum Language {
    JavaScript,
    Python,
}

/// Writes everything derived from the WIT, or with `check` only compares it with what
/// is checked in.
pub fn codegen(check: bool) -> Result<(), String> {
    let mut resolve = Resolve::default();
    let (package, _) = resolve.push_dir(WIT).map_err(|e| format!("cannot read {WIT}: {e:#}"))?;
    let mut outputs = vec![
        (JS_TABLE.to_owned(), js_table(&resolve, package)),
        (PY_TYPES.to_owned(), python_types(&resolve, package)),
        (TS_TYPES.to_owned(), ts_types(&resolve, package)),
        (SHAPES.to_owned(), shapes(&resolve, package, &read(DTS)?)),
    ];
    let sources = crate::engines::Sources::read()?;
    outputs.extend(crate::engines::outputs(&resolve, package, &sources)?);
    // The methods each API writes by hand, then those derived for the operations they
    // leave (the browser's declarations declare the JavaScript API's).
    use crate::wrappers::{JS_BEGIN, JS_END, PY_BEGIN, PY_END, hand_written};
    let called = |methods: Vec<Method>| methods.into_iter().filter_map(|method| method.key).collect::<std::collections::BTreeSet<_>>();
    let js_source = read(JS_API)?;
    let js_called = called(js_methods(&hand_written(&js_source, JS_BEGIN, JS_END)));
    let js_api = crate::wrappers::javascript(&resolve, package, &js_source, &js_called)?;
    outputs.push((DTS.to_owned(), crate::wrappers::typescript(&resolve, package, &read(DTS)?, &js_called)?));
    outputs.push((JS_OPTIONS.to_owned(), crate::wrappers::options_table(&resolve, package, &read(JS_OPTIONS)?, &js_called)?));
    let python_source = read(PYTHON_API)?;
    let python_called = called(python_methods(&hand_written(&python_source, PY_BEGIN, PY_END)));
    let python_api = crate::wrappers::python(&resolve, package, &python_source, &python_called)?;
    let calls = crate::wrappers::derived_calls(&resolve, package, &js_called, &python_called)?;
    outputs.push((JS_DERIVED_CALLS.to_owned(), calls.js));
    outputs.push((PYTHON_DERIVED_CALLS.to_owned(), calls.python));
    outputs.push(crate::engines::conformance_calls(&resolve, package, &sources, &calls.rows)?);
    let docs = function_docs(&resolve, package);
    let doc_names = crate::wrappers::DocNames::of(&resolve, package);
    let functions_by_key: BTreeMap<String, &wit_parser::Function> = functions(&resolve, package).into_iter().collect();
    for (readme, language) in REFERENCES {
        let (source, methods) = match language {
            Language::JavaScript => (JS_API, js_methods(&js_api)),
            Language::Python => (PYTHON_API, python_methods(&python_api)),
        };
        if let Language::Python = language {
            check_python_returns(&resolve, package, &methods)?;
        }
        check_names(&methods, &language).map_err(|e| format!("{source}: {e}"))?;
        let list = reference(&resolve, &methods, &docs, language, &doc_names, &functions_by_key).map_err(|e| format!("{source}: {e}"))?;
        outputs.push((readme.to_owned(), with_reference(&read(readme)?, &list).map_err(|e| format!("{readme}: {e}"))?));
    }
    outputs.push((JS_API.to_owned(), js_api));
    outputs.push((PYTHON_API.to_owned(), python_api));
    let stale: Vec<&(String, String)> = outputs.iter().filter(|(path, text)| read(path).ok().as_ref() != Some(text)).collect();
    if stale.is_empty() {
        eprintln!("xtask: what wit/ derives is up to date");
        return Ok(());
    }
    let names: Vec<&str> = stale.iter().map(|(path, _)| path.as_str()).collect();
    if check {
        return Err(format!(
            "{} do not match wit/, the APIs and the core's views: run `cargo xtask codegen` and commit what it writes",
            names.join(", ")
        ));
    }
    for (path, text) in stale {
        std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    eprintln!("xtask: wrote {}", names.join(", "));
    Ok(())
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))
}

struct Table<'a> {
    resolve: &'a Resolve,
    /// Named types (records, variants, enums, flags, resources) by `interface.name`.
    named: BTreeMap<String, String>,
}

/// Each function's key (`interface.name`, `interface.resource.method`, as in js/wit.js)
/// and its WIT name, in the interfaces' order.
pub fn functions(resolve: &Resolve, package: wit_parser::PackageId) -> Vec<(String, &wit_parser::Function)> {
    let mut interfaces: Vec<(&String, InterfaceId)> = resolve.packages[package].interfaces.iter().map(|(name, &id)| (name, id)).collect();
    interfaces.sort();
    let mut out = Vec::new();
    for (interface_name, id) in interfaces {
        for function in resolve.interfaces[id].functions.values() {
            let name = match function.kind {
                FunctionKind::Constructor(_) => format!("{}.new", function.name.trim_start_matches("[constructor]")),
                _ => function.name.trim_start_matches("[method]").trim_start_matches("[static]").to_owned(),
            };
            out.push((format!("{interface_name}.{name}"), function));
        }
    }
    out
}

/// Each function's doc comment, as one paragraph, by key.
fn function_docs(resolve: &Resolve, package: wit_parser::PackageId) -> BTreeMap<String, String> {
    functions(resolve, package)
        .into_iter()
        .map(|(key, function)| {
            (key, function.docs.contents.as_deref().unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .collect()
}

fn js_table(resolve: &Resolve, package: wit_parser::PackageId) -> String {
    let mut table = Table { resolve, named: BTreeMap::new() };
    let mut interfaces: Vec<InterfaceId> = resolve.packages[package].interfaces.values().copied().collect();
    interfaces.sort_by_key(|&id| resolve.interfaces[id].name.clone());
    for id in interfaces {
        for &ty in resolve.interfaces[id].types.values() {
            let kind = &resolve.types[ty].kind;
            if matches!(
                kind,
                TypeDefKind::Record(_) | TypeDefKind::Variant(_) | TypeDefKind::Enum(_) | TypeDefKind::Flags(_) | TypeDefKind::Resource
            ) && !is_data(resolve, ty)
            {
                table.define(ty);
            }
        }
    }
    let mut functions_out = String::new();
    for (key, function) in functions(resolve, package) {
        let method = matches!(function.kind, FunctionKind::Method(_));
        let params: Vec<String> = function
            .params
            .iter()
            .skip(usize::from(method))
            .map(|param| format!("[{}, {}]", quote(&param.name), table.reference(param.ty)))
            .collect();
        let result = function.result.map_or("null".to_owned(), |ty| table.reference(ty));
        let _ = writeln!(functions_out, "  {}: {{ method: {method}, params: [{}], result: {result} }},", quote(&key), params.join(", "));
    }
    let mut out = String::from(
        "// Generated by `cargo xtask codegen` from wit/*.wit: do not edit. The test command\n\
         // runs `cargo xtask codegen --check`, which fails when this is not what wit/ says.\n\
         //\n\
         // A type is a primitive's name (\"string\", \"u32\", ...), \"json\" (types.wit's\n\
         // JSON text, which the API gives and takes as its value), \"data\" (types.wit's bytes that\n\
         // cross as text or bytes, which the API gives as bytes), a named type's \"interface.name\"\n\
         // (a key of TYPES), or {list}, {option}, {result: [ok, err]}, {tuple}, {borrow} or\n\
         // {own}.\n\n",
    );
    out.push_str("/** Records, variants, enums, flags and resources, by `interface.name`. */\nexport const TYPES = {\n");
    for (name, definition) in &table.named {
        let _ = writeln!(out, "  {}: {definition},", quote(name));
    }
    out.push_str(
        "};\n\n/** Every function, by `interface.name` (`interface.resource.method` for a resource's). */\nexport const FUNCTIONS = {\n",
    );
    out.push_str(&functions_out);
    out.push_str("};\n");
    out
}

impl Table<'_> {
    /// A use of `ty`: a named type by its key (defined on the way), anything else inline.
    fn reference(&mut self, ty: Type) -> String {
        let id = match ty {
            Type::Id(id) => id,
            primitive => return quote(primitive_name(primitive)),
        };
        let def = &self.resolve.types[id];
        match &def.kind {
            _ if is_json(self.resolve, ty) => quote("json"),
            TypeDefKind::Type(target) => self.reference(*target),
            TypeDefKind::List(item) => format!("{{ list: {} }}", self.reference(*item)),
            TypeDefKind::Option(item) => format!("{{ option: {} }}", self.reference(*item)),
            TypeDefKind::Result(result) => {
                let ok = result.ok.map_or("null".to_owned(), |ty| self.reference(ty));
                let err = result.err.map_or("null".to_owned(), |ty| self.reference(ty));
                format!("{{ result: [{ok}, {err}] }}")
            }
            TypeDefKind::Tuple(tuple) => {
                let items: Vec<String> = tuple.types.iter().map(|&ty| self.reference(ty)).collect();
                format!("{{ tuple: [{}] }}", items.join(", "))
            }
            TypeDefKind::Handle(Handle::Borrow(resource)) => format!("{{ borrow: {} }}", self.reference(Type::Id(*resource))),
            TypeDefKind::Handle(Handle::Own(resource)) => format!("{{ own: {} }}", self.reference(Type::Id(*resource))),
            _ if is_data(self.resolve, id) => quote("data"),
            _ => quote(&self.define(id)),
        }
    }

    /// Defines the named type `id` once; its key.
    fn define(&mut self, id: TypeId) -> String {
        let def = &self.resolve.types[id];
        if let TypeDefKind::Type(Type::Id(target)) = def.kind {
            return self.define(target);
        }
        let interface = match def.owner {
            wit_parser::TypeOwner::Interface(owner) => self.resolve.interfaces[owner].name.clone().unwrap_or_default(),
            _ => String::new(),
        };
        let key = format!("{interface}.{}", def.name.as_deref().unwrap_or("?"));
        if self.named.contains_key(&key) {
            return key;
        }
        // Reserved first: a record may refer to itself through a list.
        self.named.insert(key.clone(), String::new());
        let definition = match &def.kind {
            TypeDefKind::Record(record) => {
                let fields: Vec<String> =
                    record.fields.iter().map(|field| format!("[{}, {}]", quote(&field.name), self.reference(field.ty))).collect();
                format!("{{ record: [{}] }}", fields.join(", "))
            }
            TypeDefKind::Variant(variant) => {
                let cases: Vec<String> = variant
                    .cases
                    .iter()
                    .map(|case| format!("[{}, {}]", quote(&case.name), case.ty.map_or("null".to_owned(), |ty| self.reference(ty))))
                    .collect();
                format!("{{ variant: [{}] }}", cases.join(", "))
            }
            TypeDefKind::Enum(cases) => {
                let names: Vec<String> = cases.cases.iter().map(|case| quote(&case.name)).collect();
                format!("{{ enum: [{}] }}", names.join(", "))
            }
            TypeDefKind::Flags(flags) => {
                let names: Vec<String> = flags.flags.iter().map(|flag| quote(&flag.name)).collect();
                format!("{{ flags: [{}] }}", names.join(", "))
            }
            TypeDefKind::Resource => "{ resource: true }".to_owned(),
            // Maps, streams and futures: none in the engine's WIT, and no rule for them in the API.
            _ => "{ unsupported: true }".to_owned(),
        };
        self.named.insert(key.clone(), definition);
        key
    }
}

/// The WIT's `data` (types.wit): bytes that cross as text where they are UTF-8. Every
/// library gives and takes it as bytes, so it is written as bytes, not as a variant.
pub fn is_data(resolve: &Resolve, id: TypeId) -> bool {
    let def = &resolve.types[id];
    let owner = match def.owner {
        wit_parser::TypeOwner::Interface(owner) => resolve.interfaces[owner].name.as_deref(),
        _ => None,
    };
    def.name.as_deref() == Some("data") && owner == Some("types") && matches!(def.kind, TypeDefKind::Variant(_))
}

/// types.wit's `json` (a request body, a message's blocks, a session's items): every
/// library gives and takes the value the text holds.
pub fn is_json(resolve: &Resolve, ty: Type) -> bool {
    is_string_named(resolve, ty, "json")
}

/// A string types.wit names `name` (`json`, `fresh-id`), by its own name or one an
/// interface `use`s it by.
pub fn is_string_named(resolve: &Resolve, ty: Type, name: &str) -> bool {
    let Type::Id(id) = ty else { return false };
    let def = &resolve.types[id];
    let owner = match def.owner {
        wit_parser::TypeOwner::Interface(owner) => resolve.interfaces[owner].name.as_deref(),
        _ => None,
    };
    match def.kind {
        TypeDefKind::Type(Type::String) => def.name.as_deref() == Some(name) && owner == Some("types"),
        TypeDefKind::Type(target) => is_string_named(resolve, target, name),
        _ => false,
    }
}

fn primitive_name(ty: Type) -> &'static str {
    match ty {
        Type::Bool => "bool",
        Type::U8 => "u8",
        Type::U16 => "u16",
        Type::U32 => "u32",
        Type::U64 => "u64",
        Type::S8 => "s8",
        Type::S16 => "s16",
        Type::S32 => "s32",
        Type::S64 => "s64",
        Type::F32 => "f32",
        Type::F64 => "f64",
        Type::Char => "char",
        Type::String => "string",
        Type::ErrorContext => "error-context",
        Type::Id(_) => "id",
    }
}

pub fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A method of a package's API, as its source declares it.
struct Method {
    /// The name and parameters, as a caller writes them.
    signature: String,
    /// The return annotation, in Python.
    returns: Option<String>,
    /// The WIT function it calls (a key of js/wit.js), when it calls one.
    key: Option<String>,
    /// Its own doc comment, for a method that calls no one WIT function.
    doc: String,
}

/// The text from the `(` at `open` to its matching `)`, both included.
fn parenthesised(text: &str, open: usize) -> Option<&str> {
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[open..=open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The methods of `export class Mneme` in js/api.js: each line at the class's indent
/// that starts a public method, its JSDoc above it, and the first `invoke("key"` in it.
fn js_methods(source: &str) -> Vec<Method> {
    let Some(class) = source.find("\nexport class Mneme {") else { return Vec::new() };
    let body = &source[class..];
    let body = &body[..body.find("\n}\n").unwrap_or(body.len())];
    let lines: Vec<&str> = body.lines().collect();
    // Each definition at the class's indent (`name(`, `async name(`, `#name(`, `static name(`, ...).
    let name_of = |line: &str| -> Option<String> {
        let line = line.strip_prefix("  ").filter(|line| !line.starts_with(' '))?;
        let line = line.strip_prefix("async ").unwrap_or(line);
        let name = &line[..line.find('(')?];
        (!name.is_empty() && name.trim_start_matches(['#', '*']).chars().all(|c| c.is_ascii_alphanumeric() || c == ' '))
            .then(|| name.to_owned())
    };
    let definitions: Vec<(usize, String)> = (0..lines.len()).filter_map(|i| Some((i, name_of(lines[i])?))).collect();
    let mut methods = Vec::new();
    for (n, (start, name)) in definitions.iter().enumerate() {
        let start = *start;
        if !name.starts_with(|c: char| c.is_ascii_lowercase()) || name.contains(' ') || name == "constructor" {
            continue;
        }
        let end = definitions.get(n + 1).map_or(lines.len(), |(next, _)| *next);
        let text = lines[start..end].join("\n");
        let head = text.trim_start().trim_start_matches("async ");
        let Some(open) = head.find('(') else { continue };
        let Some(params) = parenthesised(head, open) else { continue };
        // `{ text: body }` renames for the method's own use; callers write `text`.
        let params = rename_free(params);
        let key = text.find("invoke(\"").map(|at| {
            let rest = &text[at + 8..];
            rest[..rest.find('"').unwrap_or(0)].to_owned()
        });
        methods.push(Method { signature: format!("{}{params}", &head[..open]), returns: None, key, doc: jsdoc(&lines[..start]) });
    }
    methods
}

/// `params` without the local names destructuring gives its fields (`text: body`).
fn rename_free(params: &str) -> String {
    let mut out = String::with_capacity(params.len());
    let mut rest = params;
    while let Some(at) = rest.find(": ") {
        let (before, after) = rest.split_at(at);
        let renamed = after[2..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len() - 2);
        out.push_str(before);
        rest = &after[2 + renamed..];
    }
    out.push_str(rest);
    out
}

/// The JSDoc comment that ends on the last of `above`, as one paragraph.
fn jsdoc(above: &[&str]) -> String {
    let Some(last) = above.last() else { return String::new() };
    if !last.trim_end().ends_with("*/") {
        return String::new();
    }
    let first = above.iter().rposition(|line| line.trim_start().starts_with("/**")).unwrap_or(above.len() - 1);
    let text: Vec<&str> = above[first..]
        .iter()
        .map(|line| line.trim().trim_start_matches("/**").trim_end_matches("*/").trim_start_matches('*').trim())
        .collect();
    text.join(" ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The public methods of `class Mneme` in the Python package, with the WIT function
/// each calls through its helpers (`_method`, `_memory`, `_gate`, `_compaction`, or
/// `_instance.call` with an interface).
fn python_methods(source: &str) -> Vec<Method> {
    let Some(class) = source.find("\nclass Mneme:") else { return Vec::new() };
    let lines: Vec<&str> = source[class + 1..].lines().collect();
    // A method's body runs to the next definition, private or not, at the class's indent.
    let definitions: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("    def ") || lines[i].starts_with("    @")).collect();
    let mut methods = Vec::new();
    for (n, &start) in definitions.iter().enumerate() {
        if !lines[start].starts_with("    def ") || lines[start].starts_with("    def _") {
            continue;
        }
        let end = definitions.get(n + 1).copied().unwrap_or(lines.len());
        let text = lines[start..end].join("\n");
        let head = &text["    def ".len()..];
        let Some(open) = head.find('(') else { continue };
        let Some(declared) = parenthesised(head, open) else { continue };
        // One line, as a signature written over several (black's style) reads in a list.
        let one_line = declared.split_whitespace().collect::<Vec<_>>().join(" ").replace("( ", "(").replace(", )", ")");
        let params = one_line.replacen("(self, ", "(", 1).replacen("(self)", "()", 1);
        let returns = head[open + declared.len()..].split_once("->").map(|(_, r)| r.split(':').next().unwrap_or("").trim().to_owned());
        let signature = match &returns {
            Some(returns) => format!("{}{params} -> {returns}", &head[..open]),
            None => format!("{}{params}", &head[..open]),
        };
        let key = python_key(&text);
        let doc = text.split_once("\"\"\"").and_then(|(_, rest)| rest.split_once("\"\"\"")).map(|(doc, _)| doc).unwrap_or_default();
        methods.push(Method { signature, returns, key, doc: doc.split_whitespace().collect::<Vec<_>>().join(" ") });
    }
    methods
}

/// The WIT function the body of a Python method calls: its first call but for the
/// core's defaults (`default-settings`), which a method overlaying them asks for too.
fn python_key(body: &str) -> Option<String> {
    let helpers = [
        ("self._method(\"", "sessions.store."),
        ("self._memory(\"", "memory."),
        ("self._gate(\"", "gates."),
        ("self._compaction(\"", "compaction."),
    ];
    let interfaces =
        [("_SESSIONS", "sessions"), ("_COMPACTION", "compaction"), ("_GATES", "gates"), ("_MEMORY", "memory"), ("_INDEX", "index")];
    let mut found: Vec<(usize, String)> = Vec::new();
    for (call, prefix) in helpers {
        for (at, _) in body.match_indices(call) {
            let rest = &body[at + call.len()..];
            found.push((at, format!("{prefix}{}", &rest[..rest.find('"').unwrap_or(0)])));
        }
    }
    for (constant, interface) in interfaces {
        let call = format!(".call({constant}, \"");
        for (at, _) in body.match_indices(&call) {
            let rest = &body[at + call.len()..];
            let name = &rest[..rest.find('"').unwrap_or(0)];
            // A driver of a resource of its own (compact steps `run`) is a method of its own.
            let key = match name.strip_prefix("[method]store.") {
                Some(method) => Some(format!("{interface}.store.{method}")),
                None => (!name.starts_with('[')).then(|| format!("{interface}.{name}")),
            };
            found.push((at, key.unwrap_or_default()));
        }
    }
    let is_defaults = |key: &str| key.rsplit('.').next().is_some_and(|name| name.starts_with("default-"));
    found.sort();
    let first = found.iter().find(|(_, key)| !is_defaults(key)).or(found.first());
    first.map(|(_, key)| key.clone()).filter(|key| !key.is_empty())
}

/// A WIT function's name (the last part of its key) spelled in `language`'s convention.
pub fn spelled(key: &str, language: &Language) -> String {
    let name = key.rsplit('.').next().unwrap_or(key);
    match language {
        Language::Python => name.replace('-', "_"),
        Language::JavaScript => {
            let mut out = String::with_capacity(name.len());
            let mut upper = false;
            for c in name.chars() {
                match c {
                    '-' => upper = true,
                    c if upper => {
                        out.push(c.to_ascii_uppercase());
                        upper = false;
                    }
                    c => out.push(c),
                }
            }
            out
        }
    }
}

/// One name per operation: each method that calls a WIT function is named as it is.
fn check_names(methods: &[Method], language: &Language) -> Result<(), String> {
    let misnamed: Vec<String> = methods
        .iter()
        .filter_map(|method| {
            let key = method.key.as_deref()?;
            let name = method.signature.split('(').next().unwrap_or_default();
            let expected = spelled(key, language);
            (name != expected).then(|| format!("`{name}` calls `{key}`: name it `{expected}`"))
        })
        .collect();
    if misnamed.is_empty() { Ok(()) } else { Err(format!("one name per operation:\n  {}", misnamed.join("\n  "))) }
}

/// The methods as a Markdown list: each signature, the WIT function it calls and that
/// function's doc comment (a method of its own, its own doc comment).
fn reference(
    resolve: &Resolve,
    methods: &[Method],
    docs: &BTreeMap<String, String>,
    language: Language,
    doc_names: &crate::wrappers::DocNames,
    functions: &BTreeMap<String, &wit_parser::Function>,
) -> Result<String, String> {
    let mut out = String::new();
    for method in methods {
        let line = match &method.key {
            Some(key) => {
                let doc = docs.get(key).ok_or_else(|| format!("`{}` calls `{key}`, which wit/ has no function of", method.signature))?;
                let function = functions.get(key);
                let project = function.is_some_and(|function| crate::wrappers::takes_scope(resolve, function));
                // The function's parameters the method takes as the WIT names them (a
                // hand-written method may name one otherwise: `export-session`'s `format` is `to`).
                let words: std::collections::BTreeSet<&str> =
                    method.signature.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
                let parameters: Vec<&str> = function
                    .into_iter()
                    .flat_map(|function| &function.params)
                    .map(|param| param.name.as_str())
                    .filter(|name| {
                        *name == "now-ms"
                            || words.contains(crate::wrappers::parameter_name(name, language).as_str())
                            || (*name == "window" && words.contains("since"))
                    })
                    .collect();
                let doc = if doc.is_empty() {
                    method.doc.clone()
                } else {
                    let notes =
                        function.map_or(String::new(), |function| crate::wrappers::rule_notes(resolve, function, language, &parameters));
                    format!("{}{notes}", crate::wrappers::api_doc(doc, language, doc_names, &parameters, project))
                };
                format!("- `{}` (`{key}`): {doc}", method.signature)
            }
            None => format!("- `{}`: {}", method.signature, method.doc),
        };
        out.push_str(line.trim_end());
        out.push('\n');
    }
    Ok(out)
}

/// `readme` with the list between its markers replaced by `list`.
fn with_reference(readme: &str, list: &str) -> Result<String, String> {
    let (Some(begin), Some(end)) = (readme.find(BEGIN), readme.find(END)) else {
        return Err(format!("no place for the method reference: put the lines `{BEGIN}` and `{END}` where it goes"));
    };
    if end < begin {
        return Err("the end of the method reference comes before its start".to_owned());
    }
    Ok(format!("{}{BEGIN}\n\n{list}\n{}", &readme[..begin], &readme[end..]))
}

/// The Python package's value types: a TypedDict per WIT record, a Literal per enum, a
/// Union per variant, each named as the d.ts names it (PascalCase; `memory`'s
/// `index-report` is `MemoryIndexReport`, as `index`'s is `IndexReport`), with the
/// WIT's doc comments as docstrings.
fn python_types(resolve: &Resolve, package: wit_parser::PackageId) -> String {
    let mut names = TypeNames::default();
    let mut interfaces: Vec<InterfaceId> = resolve.packages[package].interfaces.values().copied().collect();
    interfaces.sort_by_key(|&id| resolve.interfaces[id].name.clone());
    let mut aliases = String::new();
    let mut classes = String::new();
    for id in interfaces {
        let interface = &resolve.interfaces[id];
        let interface_name = interface.name.as_deref().unwrap_or_default();
        for &ty in interface.types.values() {
            let def = &resolve.types[ty];
            let Some(name) = def.name.as_deref() else { continue };
            if is_data(resolve, ty) {
                continue;
            }
            let class = names.of(resolve, interface_name, name);
            let doc = docstring(def.docs.contents.as_deref(), "    ");
            match &def.kind {
                TypeDefKind::Record(record) => {
                    let fields: Vec<(String, String, Option<&str>)> = record
                        .fields
                        .iter()
                        .map(|f| {
                            let ty = annotation(resolve, &mut names, f.ty, &PYTHON);
                            (f.name.replace('-', "_"), ty, f.docs.contents.as_deref())
                        })
                        .collect();
                    if fields.iter().any(|(field, _, _)| is_keyword(field)) {
                        // A field named like a keyword (`class`) needs TypedDict's call form.
                        let items: Vec<String> = fields.iter().map(|(field, ty, _)| format!("{field:?}: {ty:?}")).collect();
                        let _ = writeln!(classes, "{class} = TypedDict({class:?}, {{{}}})\n\n", items.join(", "));
                        continue;
                    }
                    let _ = writeln!(classes, "class {class}(TypedDict):");
                    classes.push_str(&doc);
                    if fields.is_empty() && doc.is_empty() {
                        classes.push_str("    pass\n");
                    }
                    for (field, ty, field_doc) in fields {
                        let _ = writeln!(classes, "    {field}: {ty}");
                        classes.push_str(&docstring(field_doc, "    "));
                    }
                    classes.push_str("\n\n");
                }
                TypeDefKind::Enum(cases) => {
                    let cases: Vec<String> = cases.cases.iter().map(|c| format!("{:?}", c.name.replace('-', "_"))).collect();
                    let _ = writeln!(aliases, "{class} = Literal[{}]", cases.join(", "));
                }
                TypeDefKind::Variant(variant) => {
                    let units: Vec<String> =
                        variant.cases.iter().filter(|c| c.ty.is_none()).map(|c| format!("{:?}", c.name.replace('-', "_"))).collect();
                    let mut parts: Vec<String> = variant
                        .cases
                        .iter()
                        .filter_map(|c| {
                            c.ty.map(|ty| {
                                format!(
                                    "Dict[Literal[{:?}], {}]",
                                    c.name.replace('-', "_"),
                                    quoted(&annotation(resolve, &mut names, ty, &PYTHON))
                                )
                            })
                        })
                        .collect();
                    if !units.is_empty() {
                        parts.insert(0, format!("Literal[{}]", units.join(", ")));
                    }
                    let _ = writeln!(aliases, "{class} = Union[{}]", parts.join(", "));
                }
                _ => {}
            }
        }
    }
    format!(
        "# Generated by `cargo xtask codegen` from wit/*.wit: do not edit. The test command\n\
         # runs `cargo xtask codegen --check`, which fails when this is not what wit/ says.\n\
         \"\"\"The values the package takes and returns, as mneme-core's JSON: a TypedDict per\n\
         WIT record (snake_case keys), a Literal per enum, a Union per variant (``\"case\"``\n\
         or ``{{\"case\": payload}}``). JSON the WIT carries as text (a request body, a\n\
         message's blocks, an import's provenance) is ``Any``: the package gives the value.\"\"\"\n\n\
         from __future__ import annotations\n\n\
         from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union\n\n\
         {aliases}\n\n{}",
        classes.trim_end_matches('\n').to_owned() + "\n"
    )
}

/// The names the Python and TypeScript types give WIT types: PascalCase, prefixed with
/// the interface when two share a name and the type's does not start with its
/// interface's (`memory`'s `index-report` is `MemoryIndexReport`).
#[derive(Default)]
pub struct TypeNames {
    shared: Option<std::collections::BTreeSet<String>>,
}

impl TypeNames {
    pub fn of(&mut self, resolve: &Resolve, interface: &str, name: &str) -> String {
        let shared = self.shared.get_or_insert_with(|| {
            let mut seen = std::collections::BTreeSet::new();
            let mut twice = std::collections::BTreeSet::new();
            // Defined, not `use`d: a type another interface uses is one type.
            for (_, def) in resolve.types.iter().filter(|(_, def)| !matches!(def.kind, TypeDefKind::Type(_))) {
                if let (Some(name), wit_parser::TypeOwner::Interface(_)) = (&def.name, def.owner)
                    && !seen.insert(name.clone())
                {
                    twice.insert(name.clone());
                }
            }
            twice
        });
        let name = if shared.contains(name) && !name.starts_with(&format!("{interface}-")) {
            format!("{interface}-{name}")
        } else {
            name.to_owned()
        };
        name.split('-').map(|word| word[..1].to_uppercase() + &word[1..]).collect()
    }
}

/// How a language writes the WIT's types (as mneme-core's JSON gives them).
pub struct Spelling {
    boolean: &'static str,
    integer: &'static str,
    float: &'static str,
    text: &'static str,
    unknown: &'static str,
    bytes: &'static str,
    /// types.wit's `json`: the value the text holds.
    json: &'static str,
    list: fn(String) -> String,
    option: fn(String) -> String,
    tuple: fn(Vec<String>) -> String,
}

const PYTHON: Spelling = Spelling {
    boolean: "bool",
    integer: "int",
    float: "float",
    text: "str",
    unknown: "Any",
    bytes: "bytes",
    json: "Any",
    list: |item| format!("List[{item}]"),
    option: |item| format!("Optional[{item}]"),
    tuple: |items| format!("Tuple[{}]", items.join(", ")),
};

/// Python's annotations of a parameter: a caller may give any sequence for a list.
pub const PYTHON_PARAM: Spelling = Spelling { json: "Json", list: |item| format!("Sequence[{item}]"), ..PYTHON };

const TYPESCRIPT: Spelling = Spelling {
    boolean: "boolean",
    integer: "number",
    float: "number",
    text: "string",
    unknown: "unknown",
    bytes: "Uint8Array",
    json: "any",
    list: |item| format!("Array<{item}>"),
    option: |item| format!("{item} | null"),
    tuple: |items| format!("[{}]", items.join(", ")),
};

/// A use of `ty` as `spelling` writes it, a named type by its name.
pub fn annotation(resolve: &Resolve, names: &mut TypeNames, ty: Type, spelling: &Spelling) -> String {
    let id = match ty {
        Type::Bool => return spelling.boolean.into(),
        Type::U8 | Type::U16 | Type::U32 | Type::U64 | Type::S8 | Type::S16 | Type::S32 | Type::S64 => return spelling.integer.into(),
        Type::F32 | Type::F64 => return spelling.float.into(),
        Type::Char | Type::String => return spelling.text.into(),
        Type::ErrorContext => return spelling.unknown.into(),
        Type::Id(id) => id,
    };
    let def = &resolve.types[id];
    match &def.kind {
        _ if is_json(resolve, ty) => spelling.json.into(),
        TypeDefKind::Type(target) => annotation(resolve, names, *target, spelling),
        TypeDefKind::List(Type::U8) => spelling.bytes.into(),
        _ if is_data(resolve, id) => spelling.bytes.into(),
        TypeDefKind::List(item) => (spelling.list)(annotation(resolve, names, *item, spelling)),
        TypeDefKind::Option(item) => (spelling.option)(annotation(resolve, names, *item, spelling)),
        TypeDefKind::Tuple(tuple) => (spelling.tuple)(tuple.types.iter().map(|&ty| annotation(resolve, names, ty, spelling)).collect()),
        TypeDefKind::Record(_) | TypeDefKind::Enum(_) | TypeDefKind::Variant(_) => {
            let interface = match def.owner {
                wit_parser::TypeOwner::Interface(owner) => resolve.interfaces[owner].name.clone().unwrap_or_default(),
                _ => String::new(),
            };
            names.of(resolve, &interface, def.name.as_deref().unwrap_or_default())
        }
        _ => spelling.unknown.into(),
    }
}

/// `annotation` quoted when it names a class defined below it (aliases are evaluated
/// at import, before the classes).
fn quoted(annotation: &str) -> String {
    if ["int", "float", "str", "bool", "bytes", "Any"].contains(&annotation) { annotation.to_owned() } else { format!("{annotation:?}") }
}

/// Python's keywords (`keyword.kwlist`): a field of one of these names cannot be a
/// class attribute.
pub fn is_keyword(name: &str) -> bool {
    [
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else",
        "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
        "return", "try", "while", "with", "yield",
    ]
    .contains(&name)
}

/// A docstring of `doc` at `indent`, or nothing.
pub fn docstring(doc: Option<&str>, indent: &str) -> String {
    let Some(doc) = doc.map(str::trim).filter(|doc| !doc.is_empty()) else { return String::new() };
    let doc = doc.replace('\\', "\\\\").replace("\"\"\"", "\\\"\\\"\\\"");
    let lines: Vec<&str> = doc.lines().map(str::trim_end).collect();
    if lines.len() == 1 {
        // A doc ending in a quote would run into the closing quotes.
        let space = if lines[0].ends_with('"') { " " } else { "" };
        return format!("{indent}\"\"\"{}{space}\"\"\"\n", lines[0]);
    }
    let mut out = format!("{indent}\"\"\"{}\n", lines[0]);
    for line in &lines[1..] {
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{indent}{line}");
        }
    }
    let _ = writeln!(out, "{indent}\"\"\"");
    out
}

/// What a call of `function` gives when it succeeds: its result's `ok`, or its result
/// when it cannot fail; `None` for nothing.
pub fn ok_type(resolve: &Resolve, function: &wit_parser::Function) -> Option<Type> {
    match function.result {
        Some(Type::Id(id)) => match &resolve.types[id].kind {
            TypeDefKind::Result(result) => result.ok,
            _ => function.result,
        },
        other => other,
    }
}

/// What a Python method calling `function` returns, as `types.py` names it: the
/// function's `ok`, `json` as the value it holds (a list of them when the function's doc
/// says it is a JSON array).
pub fn python_return(resolve: &Resolve, names: &mut TypeNames, function: &wit_parser::Function) -> String {
    let Some(ok) = ok_type(resolve, function) else { return "None".to_owned() };
    let doc = function.docs.contents.as_deref().unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ");
    let array = doc.contains("JSON array");
    let optional_json = matches!(ok, Type::Id(id) if matches!(resolve.types[id].kind, TypeDefKind::Option(item) if is_json(resolve, item)));
    match (is_json(resolve, ok), optional_json) {
        (true, _) if array => "List[Json]".to_owned(),
        (true, _) => "Json".to_owned(),
        (_, true) => "Optional[Json]".to_owned(),
        _ => annotation(resolve, names, ok, &PYTHON),
    }
}

/// Each Python method that calls a WIT function returns what the function gives, as
/// `types.py` names it: the annotation is written by hand, and checked here.
fn check_python_returns(resolve: &Resolve, package: wit_parser::PackageId, methods: &[Method]) -> Result<(), String> {
    let functions: BTreeMap<String, &wit_parser::Function> = functions(resolve, package).into_iter().collect();
    let mut names = TypeNames::default();
    let mut wrong = Vec::new();
    for method in methods {
        let Some(function) = method.key.as_ref().and_then(|key| functions.get(key).copied()) else { continue };
        let expected = python_return(resolve, &mut names, function);
        if method.returns.as_deref() != Some(expected.as_str()) {
            wrong.push(format!("`{}` should return `{expected}`", method.signature));
        }
    }
    if wrong.is_empty() {
        return Ok(());
    }
    Err(format!("{PYTHON_API}: annotate each method's result as types.py names the WIT's:\n  {}", wrong.join("\n  ")))
}

/// The JavaScript packages' value types as the WIT gives them (mneme-core's JSON):
/// an interface per record, a union of strings per enum, a union per variant, named
/// as the Python types are, with the WIT's doc comments.
fn ts_types(resolve: &Resolve, package: wit_parser::PackageId) -> String {
    let mut names = TypeNames::default();
    let mut out = String::from(
        "// Generated by `cargo xtask codegen` from wit/*.wit: do not edit. The test command\n\
         // runs `cargo xtask codegen --check`, which fails when this is not what wit/ says.\n\
         // The values the JavaScript packages take and give, as mneme-core's JSON: snake_case\n\
         // fields, null for none, an enum's case in snake_case, a variant as \"case\" or\n\
         // {case: payload}. JSON the WIT carries as text is `any` here: the packages give the\n\
         // value, which web/js/mneme.d.ts types further.\n",
    );
    let mut interfaces: Vec<InterfaceId> = resolve.packages[package].interfaces.values().copied().collect();
    interfaces.sort_by_key(|&id| resolve.interfaces[id].name.clone());
    for id in interfaces {
        let interface = &resolve.interfaces[id];
        let interface_name = interface.name.as_deref().unwrap_or_default();
        for &ty in interface.types.values() {
            let def = &resolve.types[ty];
            let Some(name) = def.name.as_deref() else { continue };
            if is_data(resolve, ty) {
                continue;
            }
            let doc = jsdoc_of(def.docs.contents.as_deref(), "");
            let declared = names.of(resolve, interface_name, name);
            match &def.kind {
                TypeDefKind::Record(record) => {
                    let _ = write!(out, "\n{doc}export interface {declared} {{\n");
                    for field in &record.fields {
                        let ty = annotation(resolve, &mut names, field.ty, &TYPESCRIPT);
                        let _ =
                            writeln!(out, "{}  {}: {ty};", jsdoc_of(field.docs.contents.as_deref(), "  "), field.name.replace('-', "_"));
                    }
                    out.push_str("}\n");
                }
                TypeDefKind::Enum(cases) => {
                    let cases: Vec<String> = cases.cases.iter().map(|c| format!("{:?}", c.name.replace('-', "_"))).collect();
                    let _ = write!(out, "\n{doc}export type {declared} = {};\n", cases.join(" | "));
                }
                TypeDefKind::Variant(variant) => {
                    let cases: Vec<String> = variant
                        .cases
                        .iter()
                        .map(|c| {
                            let tag = c.name.replace('-', "_");
                            c.ty.map_or(format!("{tag:?}"), |ty| {
                                format!("{{ {tag}: {} }}", annotation(resolve, &mut names, ty, &TYPESCRIPT))
                            })
                        })
                        .collect();
                    let _ = write!(out, "\n{doc}export type {declared} = {};\n", cases.join(" | "));
                }
                _ => {}
            }
        }
    }
    out
}

/// A JSDoc comment of `doc` at `indent`, or nothing.
pub fn jsdoc_of(doc: Option<&str>, indent: &str) -> String {
    let Some(doc) = doc.map(str::trim).filter(|doc| !doc.is_empty()) else { return String::new() };
    let doc = doc.replace("*/", "*\\/");
    let lines: Vec<&str> = doc.lines().map(str::trim_end).collect();
    if lines.len() == 1 {
        return format!("{indent}/** {} */\n", lines[0]);
    }
    let mut out = format!("{indent}/**\n");
    for line in lines {
        let _ = writeln!(out, "{indent} *{}{line}", if line.is_empty() { "" } else { " " });
    }
    let _ = writeln!(out, "{indent} */");
    out
}

/// The browser declarations' names for WIT types they name otherwise.
pub const DTS_NAMES: [(&str, &str); 3] = [("Change", "MemoryChange"), ("Settings", "CompactionSettings"), ("Source", "ImportSource")];

/// The type-level test that holds each value type of the browser's declarations
/// (`web/js/mneme.d.ts`, written by hand but for its derived methods, typed further than the WIT where the WIT
/// carries JSON: a message's blocks, a request's body) to the WIT's: every record, enum
/// and variant the declarations name (as the WIT does, or as `DTS_NAMES` maps). One only
/// ever given (a result) must be the WIT's both ways, field for field; one a caller
/// passes too must take every value the WIT's takes (the declarations may make fields
/// optional, as the API fills them in). A WIT type the declarations do not name is
/// not checked: the test lists the checked ones.
fn shapes(resolve: &Resolve, package: wit_parser::PackageId, dts: &str) -> String {
    let declared: std::collections::BTreeSet<&str> = dts
        .lines()
        .filter_map(|line| line.strip_prefix("export interface ").or_else(|| line.strip_prefix("export type ")))
        .filter_map(|rest| rest.split([' ', '<', '=', '{']).next())
        .collect();
    // What a parameter reaches: a caller writes it.
    let mut taken = std::collections::BTreeSet::new();
    for (_, function) in functions(resolve, package) {
        for param in &function.params {
            reachable(resolve, param.ty, &mut taken);
        }
    }
    let mut names = TypeNames::default();
    let mut checked: Vec<(String, String, &'static str)> = Vec::new();
    for (id, def) in resolve.types.iter() {
        let (Some(name), wit_parser::TypeOwner::Interface(owner)) = (&def.name, def.owner) else { continue };
        let record = matches!(def.kind, TypeDefKind::Record(_));
        if !record && !matches!(def.kind, TypeDefKind::Enum(_) | TypeDefKind::Variant(_)) {
            continue;
        }
        let interface = resolve.interfaces[owner].name.clone().unwrap_or_default();
        let wit_name = names.of(resolve, &interface, name);
        let api_name = DTS_NAMES.iter().find(|(wit, _)| *wit == wit_name).map_or(wit_name.as_str(), |(_, api)| api).to_owned();
        if !declared.contains(api_name.as_str()) {
            continue;
        }
        let check = match (record, taken.contains(&id)) {
            (true, true) => "Takes",
            (true, false) => "Same",
            (false, true) => "Accepts",
            (false, false) => "Alike",
        };
        checked.push((api_name, wit_name, check));
    }
    checked.sort();
    let mut checks = String::new();
    for (api, wit, check) in checked {
        let _ = writeln!(checks, "export const check{api}: {check}<Api.{api}, Wit.{wit}> = true;");
    }
    format!(
        "// Generated by `cargo xtask codegen` from wit/*.wit and web/js/mneme.d.ts: do not edit.\n\
         // Type-checked by host-node/test/typed.mjs: each record, enum and variant the browser's\n\
         // (and so the Node package's) declarations name is held to the WIT's (js/values.d.ts).\n\
         import type * as Api from \"../../web/js/mneme.d.ts\";\n\
         import type * as Wit from \"../../js/values.d.ts\";\n\n\
         /** The same field names, in both directions. */\n\
         type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;\n\
         /** `T` with every field, at any depth, present (a record a caller passes may leave some out). */\n\
         type Present<T> = T extends string | number | boolean | null | undefined | Uint8Array ? T : T extends readonly (infer U)[] ? Present<U>[] : T extends object ? {{ [K in keyof T]-?: Present<T[K]> }} : T;\n\
         /** Each assignable to the other. */\n\
         type Alike<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;\n\
         /** Takes every value of `B`. */\n\
         type Accepts<A, B> = [B] extends [A] ? true : false;\n\
         /** A record only ever given: the WIT's fields, each the WIT's type (none left out, none null where the WIT's is not, nor the reverse). */\n\
         type Same<A, B> = SameKeys<A, B> extends true ? ([Present<A>] extends [B] ? Accepts<A, B> : false) : false;\n\
         /** A record a caller passes too: its fields, taking every value the WIT's takes. */\n\
         type Takes<A, B> = SameKeys<A, B> extends true ? Accepts<A, B> : false;\n\n\
         // The checks themselves, each shown a difference it must see.\n\
         // @ts-expect-error a field left out\n\
         export const missing: Same<{{ a: number }}, {{ a: number; b: number }}> = true;\n\
         // @ts-expect-error a field the WIT has not\n\
         export const extra: Same<{{ a: number; b: number }}, {{ a: number }}> = true;\n\
         // @ts-expect-error never null where the WIT's may be\n\
         export const nullable: Same<{{ a: string }}, {{ a: string | null }}> = true;\n\
         // @ts-expect-error null where the WIT's is never\n\
         export const notNullable: Same<{{ a: string | null }}, {{ a: string }}> = true;\n\
         // @ts-expect-error a case the WIT has not\n\
         export const narrower: Alike<\"a\" | \"b\", \"a\" | \"b\" | \"c\"> = true;\n\
         // @ts-expect-error a nested field left out\n\
         export const nested: Same<{{ a: {{ b: number }} }}, {{ a: {{ b: number; c: number }} }}> = true;\n\
         // @ts-expect-error a field a caller cannot give null\n\
         export const refused: Takes<{{ a?: string }}, {{ a: string | null }}> = true;\n\n\
         {checks}"
    )
}

/// Every record, variant and enum `ty` reaches.
fn reachable(resolve: &Resolve, ty: Type, into: &mut std::collections::BTreeSet<TypeId>) {
    let Type::Id(id) = ty else { return };
    let def = &resolve.types[id];
    match &def.kind {
        TypeDefKind::Record(record) if into.insert(id) => {
            for field in &record.fields {
                reachable(resolve, field.ty, into);
            }
        }
        TypeDefKind::Type(target) | TypeDefKind::List(target) | TypeDefKind::Option(target) => reachable(resolve, *target, into),
        TypeDefKind::Variant(variant) if into.insert(id) => {
            for ty in variant.cases.iter().filter_map(|c| c.ty) {
                reachable(resolve, ty, into);
            }
        }
        TypeDefKind::Enum(_) => {
            into.insert(id);
        }
        TypeDefKind::Tuple(tuple) => {
            for ty in &tuple.types {
                reachable(resolve, *ty, into);
            }
        }
        _ => {}
    }
}
