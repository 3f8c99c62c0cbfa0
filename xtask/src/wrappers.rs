//! The API methods derived from the WIT: every operation of a store that the
//! JavaScript API (js/api.js) or the Python one (host-python/mneme/__init__.py) does
//! not write by hand is written here, between markers in the class, from the WIT
//! function alone. A method is written by hand only where it gives more than the
//! function's parameters: options of its own, defaults other than the rules below,
//! values parsed or checked further.
//!
//! The rules, one per kind of parameter, the same in both languages:
//! - the store is the object the method is called on;
//! - `now-ms: s64` is the last parameter, `now`, the clock's time when left out;
//! - a memory `scope` is `project`, a project's folder name or null for the global memory;
//! - a record the interface has defaults of (`default-settings: func() -> settings`)
//!   may be left out or given in part: what it leaves out is the core's default;
//! - an `option<…>` may be left out (null);
//! - a `fresh-id` (types.wit) may be left out: a random UUID;
//! - a parameter the function's doc says "`name` defaults to `value`" of may be left
//!   out: that value (a number, `true` or `false`, `[]`, an enum's case or text);
//! - a time `window` (types.wit) is `since` and `until`, each null for open;
//! - every other parameter is given, in the WIT's order, then those that may be left
//!   out: in JavaScript, when two or more of those (the window's ends counted, `now` and
//!   a record of defaults not) may be left out, or one is a flag, they are an options
//!   object's, `now` with them
//!   (`fork(id, { from = null, to = crypto.randomUUID(), now = Date.now() } = {})`);
//!   Python takes each by name or in that order.
//!
//! A method's doc adds what a rule means to a caller: a fresh id left out is a random
//! UUID, a window's ends are milliseconds since the epoch.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use wit_parser::{Function, FunctionKind, Resolve, Type, TypeDefKind};

use crate::codegen::{Language, PYTHON_PARAM, TypeNames, annotation, docstring, functions, is_keyword, jsdoc_of, ok_type, python_return};
use crate::engines::{is_option, takes_store};

pub const JS_BEGIN: &str = "  // <operations: written by `cargo xtask codegen` from wit/, each one no method above calls; do not edit>";
pub const JS_END: &str = "  // </operations>";
pub const DTS_BEGIN: &str = "  // <operations: written by `cargo xtask codegen` from wit/, as js/api.js has them; do not edit>";
pub const DTS_END: &str = "  // </operations>";
pub const OPTIONS_BEGIN: &str =
    "  // <operations: written by `cargo xtask codegen` from wit/, the options of the methods js/api.js derives; do not edit>";
pub const OPTIONS_END: &str = "  // </operations>";
pub const PY_BEGIN: &str = "    # <operations: written by `cargo xtask codegen` from wit/, each one no method above calls; do not edit>";
pub const PY_END: &str = "    # </operations>";

/// How a method takes one of its function's parameters.
enum Argument {
    /// The store: the method's object.
    Store,
    /// `now-ms`: last, the clock when left out.
    Now,
    /// A memory scope, as a project's folder name or null.
    Project,
    /// A record with the core's defaults for what the caller leaves out, from `defaults`
    /// (a function of the same interface).
    Overlay {
        defaults: String,
    },
    /// A trailing option: null when left out.
    Optional,
    /// An id for what the call creates: a random UUID when left out.
    Fresh,
    /// A value the doc comment gives when left out.
    Default(Literal),
    /// A time window, as its two ends.
    Window,
    Given,
}

/// A parameter's default, as a doc comment writes it ("`limit` defaults to `64`").
#[derive(Clone, Debug, PartialEq)]
enum Literal {
    Number(String),
    Bool(bool),
    EmptyList,
    /// Text, or an enum's case in mneme-core's spelling.
    Text(String),
}

impl Literal {
    fn javascript(&self) -> String {
        match self {
            Literal::Number(number) => number.clone(),
            Literal::Bool(value) => value.to_string(),
            Literal::EmptyList => "[]".to_owned(),
            Literal::Text(text) => crate::codegen::quote(text),
        }
    }

    fn python(&self) -> String {
        match self {
            Literal::Number(number) => number.clone(),
            Literal::Bool(true) => "True".to_owned(),
            Literal::Bool(false) => "False".to_owned(),
            Literal::EmptyList => "None".to_owned(),
            Literal::Text(text) => crate::codegen::quote(text),
        }
    }

    /// As JSON: what a runner's table and the Rust runner's `serde_json::json!` take.
    fn json(&self) -> String {
        self.javascript()
    }
}

/// The defaults `doc` states ("`name` defaults to `value`"), by parameter name.
fn stated_defaults(doc: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = doc;
    while let Some(at) = rest.find("` defaults to `") {
        let name = rest[..at].rsplit('`').next().unwrap_or_default();
        let after = &rest[at + "` defaults to `".len()..];
        let Some(end) = after.find('`') else { break };
        out.push((name, &after[..end]));
        rest = &after[end..];
    }
    out
}

/// `value` as a default of a parameter of type `ty`, or why it cannot be one.
fn literal(resolve: &Resolve, ty: Type, value: &str) -> Result<Literal, String> {
    // Written as every language reads it (no `+`, no leading zero) and within its type.
    let number = |low: i128, high: i128| match value.parse::<i128>() {
        Ok(number) if number.to_string() == value && (low..=high).contains(&number) => Ok(Literal::Number(value.to_owned())),
        _ => Err(format!("`{value}` is no number of its type: write a whole number from {low} to {high}")),
    };
    match ty {
        Type::U8 => number(0, u8::MAX.into()),
        Type::U16 => number(0, u16::MAX.into()),
        Type::U32 => number(0, u32::MAX.into()),
        Type::U64 => number(0, u64::MAX.into()),
        Type::S8 => number(i8::MIN.into(), i8::MAX.into()),
        Type::S16 => number(i16::MIN.into(), i16::MAX.into()),
        Type::S32 => number(i32::MIN.into(), i32::MAX.into()),
        Type::S64 => number(i64::MIN.into(), i64::MAX.into()),
        Type::Bool => match value {
            "true" => Ok(Literal::Bool(true)),
            "false" => Ok(Literal::Bool(false)),
            _ => Err(format!("`{value}` is no bool: write `true` or `false`")),
        },
        Type::String => Ok(Literal::Text(value.to_owned())),
        Type::Id(id) => match &resolve.types[id].kind {
            TypeDefKind::Type(target) => literal(resolve, *target, value),
            TypeDefKind::List(_) if value == "[]" => Ok(Literal::EmptyList),
            TypeDefKind::Enum(cases) if cases.cases.iter().any(|case| case.name == value) => Ok(Literal::Text(value.replace('-', "_"))),
            TypeDefKind::Enum(_) => Err(format!("`{value}` is no case of its enum")),
            _ => Err(format!(
                "a default `{value}` of this type is not one the APIs can write (a number, `true`, `false`, `[]`, an enum's case, text)"
            )),
        },
        _ => Err(format!("a default `{value}` of this type is not one the APIs can write")),
    }
}

struct Parameter<'a> {
    /// The WIT's name.
    name: &'a str,
    ty: Type,
    argument: Argument,
}

/// An operation of a store, as the generated method takes its arguments.
struct Operation<'a> {
    key: String,
    interface: String,
    function: &'a Function,
    parameters: Vec<Parameter<'a>>,
}

impl Operation<'_> {
    /// The WIT name of the function (a store method's name without its resource).
    fn wit_name(&self) -> &str {
        self.key.rsplit('.').next().unwrap_or_default()
    }

    fn is_method(&self) -> bool {
        matches!(self.function.kind, FunctionKind::Method(_))
    }

    /// The parameters in the order a caller gives them: those given, the records of
    /// defaults, then those that may be left out, `now` last.
    fn caller_order(&self) -> Vec<&Parameter<'_>> {
        let rank = |parameter: &&Parameter| match parameter.argument {
            Argument::Now => 3,
            Argument::Optional | Argument::Fresh | Argument::Default(_) | Argument::Window => 2,
            Argument::Overlay { .. } => 1,
            _ => 0,
        };
        let mut order: Vec<&Parameter> = self.parameters.iter().filter(|p| !matches!(p.argument, Argument::Store)).collect();
        order.sort_by_key(rank);
        order
    }

    /// Whether the JavaScript method takes what may be left out (and `now`) as an
    /// options object: two or more values, a window's ends counted, `now` and records
    /// of defaults not, or a flag (`{ dryRun: true }` says what `true` would not).
    fn takes_options(&self) -> bool {
        if self.parameters.iter().any(|parameter| matches!(parameter.argument, Argument::Default(Literal::Bool(_)))) {
            return true;
        }
        let values: usize = self
            .parameters
            .iter()
            .map(|parameter| match parameter.argument {
                Argument::Optional | Argument::Fresh | Argument::Default(_) => 1,
                Argument::Window => 2,
                _ => 0,
            })
            .sum();
        values >= 2
    }

    /// Whether `parameter` is one of the options object's.
    fn in_options(&self, parameter: &Parameter) -> bool {
        self.takes_options()
            && matches!(parameter.argument, Argument::Now | Argument::Optional | Argument::Fresh | Argument::Default(_) | Argument::Window)
    }

    /// The WIT function's doc comment, in `language`'s words.
    fn doc(&self, resolve: &Resolve, language: Language, names: &DocNames) -> String {
        let project = self.parameters.iter().any(|parameter| matches!(parameter.argument, Argument::Project));
        let parameters: Vec<&str> = self.parameters.iter().map(|parameter| parameter.name).collect();
        let doc = api_doc(self.function.docs.contents.as_deref().unwrap_or_default().trim(), language, names, &parameters, project);
        format!("{doc}{}", rule_notes(resolve, self.function, language, &parameters))
    }
}

/// Every operation of a store the WIT declares, with how a generated method would take
/// each parameter, or why none can be generated.
fn operations(resolve: &Resolve, package: wit_parser::PackageId) -> Vec<(Operation<'_>, Option<String>)> {
    let all = functions(resolve, package);
    let mut out = Vec::new();
    for (key, function) in &all {
        if !takes_store(resolve, function) {
            continue;
        }
        let interface = key.split('.').next().unwrap_or_default().to_owned();
        let mut reasons = Vec::new();
        // A sentence a reflow broke across lines states its default all the same.
        let doc = function.docs.contents.as_deref().unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ");
        let stated = stated_defaults(&doc);
        for (name, _) in &stated {
            if !function.params.iter().skip(1).any(|param| param.name == *name) {
                reasons.push(format!("its doc gives a default of `{name}`, which is none of its parameters"));
            }
        }
        let mut parameters = Vec::new();
        for (i, param) in function.params.iter().enumerate() {
            let default = stated.iter().find(|(name, _)| *name == param.name).map(|(_, value)| *value);
            // Each operation's first parameter is the store (a method's own, or borrowed).
            let argument = if i == 0 {
                Argument::Store
            } else if param.name == "now-ms" && param.ty == Type::S64 {
                Argument::Now
            } else if named(resolve, param.ty) == Some(("memory", "scope")) {
                Argument::Project
            } else if let Some(defaults) = defaults_of(resolve, &all, &interface, param.ty) {
                Argument::Overlay { defaults }
            } else if is_option(resolve, &param.ty) {
                Argument::Optional
            } else if is_window(resolve, param.ty) {
                Argument::Window
            } else if is_fresh_id(resolve, param.ty) {
                Argument::Fresh
            } else if let Some(value) = default {
                match literal(resolve, param.ty, value) {
                    Ok(value) => Argument::Default(value),
                    Err(why) => {
                        reasons.push(format!("`{}`: {why}", param.name));
                        Argument::Given
                    }
                }
            } else {
                Argument::Given
            };
            if default.is_some() && !matches!(argument, Argument::Default(_) | Argument::Given) {
                reasons.push(format!("its doc gives a default of `{}`, which a rule defaults already", param.name));
            }
            parameters.push(Parameter { name: &param.name, ty: param.ty, argument });
        }
        // A parameter named as another one is named by the method, as a word reserved in
        // JavaScript or as a helper the method's body calls would not be what it means.
        let mut named_as = BTreeSet::new();
        for parameter in &parameters {
            let names = match parameter.argument {
                Argument::Store => continue,
                Argument::Now => vec!["now"],
                Argument::Project => vec!["project"],
                Argument::Window => vec!["since", "until"],
                _ => vec![parameter.name],
            };
            for name in names {
                if !named_as.insert(name) || ["self", "this", "time", "scope", "window"].contains(&name) || is_reserved_in_javascript(name)
                {
                    reasons.push(format!("a parameter would be named `{name}`, which the method cannot take it as"));
                }
            }
        }
        let why_not = (!reasons.is_empty()).then(|| reasons.join("; "));
        out.push((Operation { key: key.clone(), interface, function, parameters }, why_not));
    }
    out
}

/// JavaScript's reserved words that WIT allows as a name (as `%default`).
fn is_reserved_in_javascript(name: &str) -> bool {
    [
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "new",
        "null",
        "return",
        "super",
        "switch",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
        "let",
        "static",
        "await",
        // A class body is strict mode code.
        "implements",
        "interface",
        "package",
        "private",
        "protected",
        "public",
        "arguments",
        "eval",
    ]
    .contains(&name)
}

/// What a method's doc adds for the parameters of `function` among `taken` (the
/// method's, by their WIT names) that a rule takes: a `fresh-id` left out is a random
/// UUID; a `window` is `since` and `until`.
pub fn rule_notes(resolve: &Resolve, function: &Function, language: Language, taken: &[&str]) -> String {
    let mut notes = String::new();
    for param in function.params.iter().filter(|param| taken.contains(&param.name.as_str())) {
        if is_fresh_id(resolve, param.ty) {
            let _ = write!(notes, " `{}` left out is a new random UUID.", parameter_name(&param.name, language));
        } else if is_window(resolve, param.ty) {
            let none = match language {
                Language::JavaScript => "null",
                Language::Python => "None",
            };
            let _ = write!(
                notes,
                " `since` (included) and `until` (left out) bound `{}`, in milliseconds since the epoch ({none}: open).",
                param.name
            );
        }
    }
    notes
}

/// types.wit's `fresh-id`: an id for what the call creates.
fn is_fresh_id(resolve: &Resolve, ty: Type) -> bool {
    crate::codegen::is_string_named(resolve, ty, "fresh-id")
}

/// `ty` is `string`, or an alias of it.
fn is_string(resolve: &Resolve, ty: Type) -> bool {
    match ty {
        Type::String => true,
        Type::Id(id) => matches!(resolve.types[id].kind, TypeDefKind::Type(target) if is_string(resolve, target)),
        _ => false,
    }
}

/// types.wit's time `window`.
pub fn is_window(resolve: &Resolve, ty: Type) -> bool {
    named(resolve, ty) == Some(("types", "window"))
}

/// A named type's interface and name, through aliases.
fn named(resolve: &Resolve, ty: Type) -> Option<(&str, &str)> {
    let Type::Id(id) = ty else { return None };
    let def = &resolve.types[id];
    if let TypeDefKind::Type(target) = def.kind {
        return named(resolve, target);
    }
    let wit_parser::TypeOwner::Interface(owner) = def.owner else { return None };
    Some((resolve.interfaces[owner].name.as_deref()?, def.name.as_deref()?))
}

/// The function of `interface` that gives the core's defaults of record `ty`
/// (`default-…`, no parameters), as a key of js/wit.js.
fn defaults_of(resolve: &Resolve, all: &[(String, &Function)], interface: &str, ty: Type) -> Option<String> {
    let wanted = named(resolve, ty)?;
    let Type::Id(id) = ty else { return None };
    if !matches!(resolve.types[id].kind, TypeDefKind::Record(_) | TypeDefKind::Type(_)) {
        return None;
    }
    all.iter()
        .find(|(key, function)| {
            key.starts_with(&format!("{interface}.default-"))
                && function.params.is_empty()
                && function.result.is_some_and(|result| named(resolve, result) == Some(wanted))
        })
        .map(|(key, _)| key.clone())
}

/// A name spelled in `language`'s convention, safe as a parameter.
pub fn parameter_name(name: &str, language: Language) -> String {
    match language {
        Language::Python => {
            let snake = name.replace('-', "_");
            if is_keyword(&snake) { format!("{snake}_") } else { snake }
        }
        Language::JavaScript => crate::codegen::spelled(name, &language),
    }
}

/// The names a WIT doc comment uses that each language spells its own way.
pub struct DocNames {
    /// Every function's name (`memory-load`).
    functions: BTreeSet<String>,
    /// Every record's fields (`updated-ms`), but those that are also an error's kind.
    fields: BTreeSet<String>,
    /// The interfaces, which qualify a function's name (`sessions.search`).
    interfaces: BTreeSet<String>,
}

impl DocNames {
    pub fn of(resolve: &Resolve, package: wit_parser::PackageId) -> DocNames {
        // The functions the APIs have a method of: a store's operations and the
        // functions of no store, not the storage contract the host serves nor the
        // defaults the APIs overlay.
        let functions = functions(resolve, package)
            .into_iter()
            .filter(|(key, function)| {
                let name = key.rsplit('.').next().unwrap_or_default();
                !key.starts_with("storage.")
                    && !name.starts_with("default-")
                    && (takes_store(resolve, function) || matches!(function.kind, FunctionKind::Freestanding))
            })
            .map(|(key, _)| key.rsplit('.').next().unwrap_or_default().to_owned())
            .collect();
        let mut fields = BTreeSet::new();
        let mut kinds = BTreeSet::new();
        for (_, def) in resolve.types.iter() {
            match &def.kind {
                TypeDefKind::Record(record) => fields.extend(record.fields.iter().map(|field| field.name.clone())),
                // An error's kind is written as the WIT writes it (`invalid-argument`).
                TypeDefKind::Variant(variant) if matches!(def.name.as_deref(), Some("error" | "storage-error")) => {
                    kinds.extend(variant.cases.iter().map(|case| case.name.clone()));
                }
                _ => {}
            }
        }
        let interfaces = resolve.packages[package].interfaces.keys().cloned().collect();
        DocNames { functions, fields: fields.difference(&kinds).cloned().collect(), interfaces }
    }
}

/// Whether `function` takes a memory scope (which the APIs take as `project`).
pub fn takes_scope(resolve: &Resolve, function: &Function) -> bool {
    function.params.iter().any(|param| named(resolve, param.ty) == Some(("memory", "scope")))
}

/// A WIT doc comment in a language's words: a function named in backticks by its
/// method's name (`memory-load` is `memoryLoad` in JavaScript, `memory_load` in Python;
/// `sessions.search` is `search`), one of `parameters` as the language names a
/// parameter, a record's field in mneme-core's JSON spelling (`updated-ms` is
/// `updated_ms`), and, for a method that takes a memory scope as `project`, `scope`
/// as `project`. An error's kind and anything else stays as written.
pub fn api_doc(doc: &str, language: Language, names: &DocNames, parameters: &[&str], project: bool) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(open) = rest.find('`') {
        let Some(close) = rest[open + 1..].find('`') else { break };
        let quoted = &rest[open + 1..open + 1 + close];
        out.push_str(&rest[..=open]);
        let (qualifier, function) = quoted.rsplit_once('.').unwrap_or(("", quoted));
        let qualified = qualifier.is_empty() || names.interfaces.contains(qualifier.strip_suffix(".store").unwrap_or(qualifier));
        // A name that is a function and a field too (`context-window`) stays as written.
        if qualified && names.functions.contains(function) && !(qualifier.is_empty() && names.fields.contains(function)) {
            out.push_str(&crate::codegen::spelled(function, &language));
        } else if project && quoted == "scope" {
            out.push_str("project");
        } else if parameters.contains(&quoted) {
            // The methods take `now-ms` as `now`.
            out.push_str(&if quoted == "now-ms" { "now".to_owned() } else { parameter_name(quoted, language) });
        } else if names.fields.contains(quoted) {
            out.push_str(&quoted.replace('-', "_"));
        } else if matches!(language, Language::Python) && matches!(quoted, "true" | "false") {
            // A default as Python writes it.
            out.push_str(if quoted == "true" { "True" } else { "False" });
        } else {
            out.push_str(quoted);
        }
        out.push('`');
        rest = &rest[open + 1 + close + 1..];
    }
    out.push_str(rest);
    out
}

/// `source` with what lies between `begin` and `end` replaced by `methods`.
fn with_region(source: &str, begin: &str, end: &str, methods: &str) -> Result<String, String> {
    let (Some(start), Some(stop)) = (source.find(begin), source.find(end)) else {
        return Err(format!("no place for the generated methods: put the lines `{begin}` and `{end}` in the class"));
    };
    if stop < start {
        return Err("the end of the generated methods comes before their start".to_owned());
    }
    Ok(format!("{}{begin}\n{methods}{}", &source[..start], &source[stop..]))
}

/// The names of what `source` defines at `indent` (`name(`, `async name(`, `static
/// name(`, `def name(`, `get name(`).
fn defined(source: &str, indent: &str) -> BTreeSet<String> {
    source
        .lines()
        .filter_map(|line| line.strip_prefix(indent))
        .filter(|line| !line.starts_with(' '))
        .map(|line| ["async ", "static ", "def ", "get "].iter().fold(line, |line, prefix| line.strip_prefix(prefix).unwrap_or(line)))
        .filter_map(|line| line.split_once('(').map(|(name, _)| name))
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .map(str::to_owned)
        .collect()
}

/// Refuses a generated method named as one `source` (without its generated part)
/// defines: the later definition would replace the earlier one without a word.
fn check_unique(names: &[String], hand_written: &BTreeSet<String>, api: &str) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    let twice: Vec<&String> = names.iter().filter(|name| hand_written.contains(*name) || !seen.insert(*name)).collect();
    if twice.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{api}: {} would be defined twice (a derived method named as another method): rename the WIT function or write the method by hand",
        twice.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
    ))
}

/// `source` without the generated region, for what its hand-written methods call.
pub fn hand_written(source: &str, begin: &str, end: &str) -> String {
    match (source.find(begin), source.find(end)) {
        (Some(start), Some(stop)) if start < stop => format!("{}{}", &source[..start], &source[stop..]),
        _ => source.to_owned(),
    }
}

/// The operations to generate for an API whose hand-written methods call `called`; an
/// operation neither written nor derivable is an error.
fn to_generate<'a>(
    all: &'a [(Operation<'a>, Option<String>)],
    called: &BTreeSet<String>,
    api: &str,
) -> Result<Vec<&'a Operation<'a>>, String> {
    let mut out = Vec::new();
    let mut refused = Vec::new();
    for (operation, why_not) in all {
        if called.contains(&operation.key) {
            continue;
        }
        match why_not {
            Some(why) => refused.push(format!("{}: {why}", operation.key)),
            None => out.push(operation),
        }
    }
    if refused.is_empty() {
        Ok(out)
    } else {
        Err(format!("{api}: no method calls these operations and none can be derived; write one by hand:\n  {}", refused.join("\n  ")))
    }
}

/// js/api.js with its generated methods.
pub fn javascript(resolve: &Resolve, package: wit_parser::PackageId, source: &str, called: &BTreeSet<String>) -> Result<String, String> {
    let all = operations(resolve, package);
    let doc_names = DocNames::of(resolve, package);
    let generate = to_generate(&all, called, crate::codegen::JS_API)?;
    let names: Vec<String> = generate.iter().map(|operation| crate::codegen::spelled(&operation.key, &Language::JavaScript)).collect();
    // The constructor and the fields it sets are no method `defined` sees.
    let mut taken = defined(&hand_written(source, JS_BEGIN, JS_END), "  ");
    taken.extend(["constructor", "engine", "storage"].map(str::to_owned));
    check_unique(&names, &taken, crate::codegen::JS_API)?;
    let mut methods = String::new();
    for operation in generate {
        methods.push_str(&jsdoc_of(Some(&operation.doc(resolve, Language::JavaScript, &doc_names)), "  "));
        let mut asynchronous = false;
        let mut signature = Vec::new();
        let mut options = Vec::new();
        for parameter in operation.caller_order() {
            let name = parameter_name(parameter.name, Language::JavaScript);
            let written = match &parameter.argument {
                Argument::Now => "now = Date.now()".to_owned(),
                Argument::Project => "project".to_owned(),
                Argument::Overlay { .. } => format!("{name} = {{}}"),
                Argument::Optional => format!("{name} = null"),
                Argument::Fresh => format!("{name} = crypto.randomUUID()"),
                Argument::Default(value) => format!("{name} = {}", value.javascript()),
                Argument::Window => "since = null, until = null".to_owned(),
                _ => name,
            };
            if operation.in_options(parameter) { options.push(written) } else { signature.push(written) }
        }
        if !options.is_empty() {
            signature.push(format!("{{ {} }} = {{}}", options.join(", ")));
        }
        let arguments: Vec<String> = operation
            .parameters
            .iter()
            .filter_map(|parameter| {
                let name = parameter_name(parameter.name, Language::JavaScript);
                Some(match &parameter.argument {
                    Argument::Store => return None,
                    Argument::Now => "time(\"now\", now)".to_owned(),
                    Argument::Project => "scope(project)".to_owned(),
                    Argument::Overlay { defaults } => {
                        asynchronous = true;
                        format!("await this.#overlay(\"{defaults}\", {name}, \"{name}\")")
                    }
                    Argument::Window => "window(since, until)".to_owned(),
                    _ => name,
                })
            })
            .collect();
        let _ = writeln!(
            methods,
            "  {}({}) {{ return this.#invoke(\"{}\", {}() => [{}]); }}",
            crate::codegen::spelled(&operation.key, &Language::JavaScript),
            signature.join(", "),
            operation.key,
            if asynchronous { "async " } else { "" },
            arguments.join(", ")
        );
    }
    with_region(source, JS_BEGIN, JS_END, &methods)
}

/// js/options.js with the options of each method js/api.js derives with an options
/// object: where it is among the arguments and the names it takes. A method js/api.js
/// derives is refused in the hand-written part of the table.
pub fn options_table(resolve: &Resolve, package: wit_parser::PackageId, source: &str, called: &BTreeSet<String>) -> Result<String, String> {
    let all = operations(resolve, package);
    let written_by_hand = hand_written(source, OPTIONS_BEGIN, OPTIONS_END);
    let mut entries = String::new();
    for operation in to_generate(&all, called, crate::codegen::JS_OPTIONS)? {
        let method = crate::codegen::spelled(&operation.key, &Language::JavaScript);
        if written_by_hand.contains(&format!("  {method}: [")) {
            return Err(format!("{}: `{method}` is derived from the WIT: take it out of the table", crate::codegen::JS_OPTIONS));
        }
        if !operation.takes_options() {
            continue;
        }
        let order = operation.caller_order();
        let at = order.iter().filter(|parameter| !operation.in_options(parameter)).count();
        let names: Vec<String> = order
            .iter()
            .filter(|parameter| operation.in_options(parameter))
            .flat_map(|parameter| match parameter.argument {
                Argument::Now => vec!["now".to_owned()],
                Argument::Window => vec!["since".to_owned(), "until".to_owned()],
                _ => vec![parameter_name(parameter.name, Language::JavaScript)],
            })
            .map(|name| format!("\"{name}\""))
            .collect();
        let _ = writeln!(entries, "  {method}: [{at}, [{}]],", names.join(", "));
    }
    with_region(source, OPTIONS_BEGIN, OPTIONS_END, &entries)
}

/// The Python package's `__init__.py` with its generated methods; the names of
/// mneme.types the methods' annotations use must be imported by the hand-written part.
pub fn python(resolve: &Resolve, package: wit_parser::PackageId, source: &str, called: &BTreeSet<String>) -> Result<String, String> {
    let all = operations(resolve, package);
    let doc_names = DocNames::of(resolve, package);
    let mut names = TypeNames::default();
    let mut methods = String::new();
    let mut used_types = BTreeSet::new();
    let generate = to_generate(&all, called, crate::codegen::PYTHON_API)?;
    let method_names: Vec<String> = generate.iter().map(|operation| operation.wit_name().replace('-', "_")).collect();
    let written_by_hand = hand_written(source, PY_BEGIN, PY_END);
    check_unique(&method_names, &defined(&written_by_hand, "    "), crate::codegen::PYTHON_API)?;
    for operation in generate {
        let mut signature = vec!["self".to_owned()];
        for parameter in operation.caller_order() {
            let name = parameter_name(parameter.name, Language::Python);
            signature.push(match &parameter.argument {
                Argument::Now => "now: Time = None".to_owned(),
                Argument::Project => "project: Optional[str]".to_owned(),
                Argument::Overlay { .. } => format!("{name}: Optional[Json] = None"),
                Argument::Optional => format!("{name}: {} = None", python_parameter(resolve, &mut names, parameter.ty)),
                Argument::Fresh => format!("{name}: Optional[str] = None"),
                // None for an empty list, as Python callers write it (a `()` default would refuse None).
                Argument::Default(Literal::EmptyList) => {
                    format!("{name}: Optional[{}] = None", python_parameter(resolve, &mut names, parameter.ty))
                }
                Argument::Default(value) => {
                    format!("{name}: {} = {}", python_parameter(resolve, &mut names, parameter.ty), value.python())
                }
                Argument::Window => "since: Time = None, until: Time = None".to_owned(),
                _ => format!("{name}: {}", python_parameter(resolve, &mut names, parameter.ty)),
            });
        }
        let nested = operation.parameters.iter().skip(1).any(|parameter| holds_json_within(resolve, parameter.ty))
            || ok_type(resolve, operation.function).is_some_and(|ty| holds_json_within(resolve, ty));
        if nested {
            return Err(format!(
                "{}: {} holds `json` inside a record or a list, which a derived method would give or take as text: write it by hand",
                crate::codegen::PYTHON_API,
                operation.key
            ));
        }
        let interface = format!("_{}", operation.interface.to_uppercase().replace('-', "_"));
        if !source.contains(&format!("\n{interface} = ")) {
            return Err(format!(
                "{}: define `{interface}`, the name of interface `{}`, which the derived methods call",
                crate::codegen::PYTHON_API,
                operation.interface
            ));
        }
        let mut arguments = Vec::new();
        for parameter in &operation.parameters {
            let name = parameter_name(parameter.name, Language::Python);
            arguments.push(match &parameter.argument {
                Argument::Store => continue,
                Argument::Now => "_now_ms(now)".to_owned(),
                Argument::Project => "_scope(project)".to_owned(),
                Argument::Overlay { defaults } => {
                    let function = defaults.rsplit('.').next().unwrap_or_default();
                    format!("_overlay(self._instance.call({interface}, \"{function}\"), {name}, \"{name}\")")
                }
                Argument::Fresh => format!("_text(\"{name}\", _fresh_id({name}))"),
                Argument::Default(Literal::EmptyList) if is_list_of_strings(resolve, parameter.ty) => {
                    format!("_texts(\"{name}\", [] if {name} is None else {name})")
                }
                Argument::Default(Literal::EmptyList) => format!("[] if {name} is None else {name}"),
                Argument::Window => "_window(since, until)".to_owned(),
                _ if crate::codegen::is_json(resolve, parameter.ty) => format!("_json(\"{name}\", {name})"),
                // A name given as text (an id, a key, a path) must reach the core as written.
                _ if is_string(resolve, parameter.ty) => format!("_text(\"{name}\", {name})"),
                _ if is_option_of_string(resolve, parameter.ty) => format!("_optional_text(\"{name}\", {name})"),
                _ if is_list_of_strings(resolve, parameter.ty) => format!("_texts(\"{name}\", {name})"),
                _ => name,
            });
        }
        let returns = python_return(resolve, &mut names, operation.function);
        let call = if operation.is_method() {
            format!("self._method(\"{}\"{})", operation.wit_name(), prefixed(&arguments))
        } else {
            format!("self._instance.call({interface}, \"{}\", self._store{})", operation.wit_name(), prefixed(&arguments))
        };
        let call = if gives_json(resolve, operation.function) { format!("_json_value({call})") } else { call };
        let _ = writeln!(methods, "    def {}({}) -> {returns}:", operation.wit_name().replace('-', "_"), signature.join(", "));
        methods.push_str(&docstring(Some(&operation.doc(resolve, Language::Python, &doc_names)), "        "));
        let _ = writeln!(methods, "        return {call}\n");
        for word in signature.iter().map(String::as_str).chain([returns.as_str()]) {
            used_types.extend(
                word.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                    .filter(|w| w.starts_with(char::is_uppercase))
                    .map(str::to_owned),
            );
        }
    }
    let known =
        ["Optional", "List", "Sequence", "Tuple", "Dict", "Union", "Any", "Json", "Time", "Folder", "None", "True", "False", "Callable"];
    let missing: Vec<&String> =
        used_types.iter().filter(|name| !known.contains(&name.as_str()) && !imports_name(&written_by_hand, name)).collect();
    if !missing.is_empty() {
        return Err(format!(
            "{}: the generated methods name {} from mneme.types: import them",
            crate::codegen::PYTHON_API,
            missing.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    with_region(source, PY_BEGIN, PY_END, &methods)
}

/// A parameter's annotation: a record a caller may give in part (one with an optional
/// field, whose key it may leave out) is a dict (`Json`); types.py's TypedDicts have
/// every key, as the package gives them.
fn python_parameter(resolve: &Resolve, names: &mut TypeNames, ty: Type) -> String {
    let Type::Id(id) = ty else { return annotation(resolve, names, ty, &PYTHON_PARAM) };
    if crate::codegen::is_json(resolve, ty) {
        return "Json".to_owned();
    }
    match &resolve.types[id].kind {
        TypeDefKind::Type(target) => python_parameter(resolve, names, *target),
        TypeDefKind::Record(record) if record.fields.iter().any(|field| is_option(resolve, &field.ty)) => "Json".to_owned(),
        TypeDefKind::Option(item) => format!("Optional[{}]", python_parameter(resolve, names, *item)),
        TypeDefKind::List(item) if *item != Type::U8 && !crate::codegen::is_data(resolve, id) => {
            format!("Sequence[{}]", python_parameter(resolve, names, *item))
        }
        _ => annotation(resolve, names, ty, &PYTHON_PARAM),
    }
}

/// Whether a value of `ty` holds `json` inside a record, list or variant (not `json`
/// itself, nor an option of it), which a derived Python method would give or take as
/// its text: Python's engine sees no alias.
fn holds_json_within(resolve: &Resolve, ty: Type) -> bool {
    fn holds(resolve: &Resolve, ty: Type) -> bool {
        if crate::codegen::is_json(resolve, ty) {
            return true;
        }
        let Type::Id(id) = ty else { return false };
        match &resolve.types[id].kind {
            TypeDefKind::Record(record) => record.fields.iter().any(|field| holds(resolve, field.ty)),
            TypeDefKind::Variant(variant) => variant.cases.iter().any(|case| case.ty.is_some_and(|ty| holds(resolve, ty))),
            TypeDefKind::Type(item) | TypeDefKind::List(item) | TypeDefKind::Option(item) => holds(resolve, *item),
            TypeDefKind::Tuple(tuple) => tuple.types.iter().any(|&ty| holds(resolve, ty)),
            TypeDefKind::Result(result) => {
                result.ok.is_some_and(|ty| holds(resolve, ty)) || result.err.is_some_and(|ty| holds(resolve, ty))
            }
            _ => false,
        }
    }
    let optional_json =
        matches!(ty, Type::Id(id) if matches!(resolve.types[id].kind, TypeDefKind::Option(item) if crate::codegen::is_json(resolve, item)));
    !crate::codegen::is_json(resolve, ty) && !optional_json && holds(resolve, ty)
}

/// Whether `function` gives `json`, or an `option` of it.
fn gives_json(resolve: &Resolve, function: &Function) -> bool {
    ok_type(resolve, function).is_some_and(|ok| {
        crate::codegen::is_json(resolve, ok)
            || matches!(ok, Type::Id(id) if matches!(resolve.types[id].kind, TypeDefKind::Option(item) if crate::codegen::is_json(resolve, item)))
    })
}

fn prefixed(arguments: &[String]) -> String {
    arguments.iter().map(|argument| format!(", {argument}")).collect()
}

fn is_option_of_string(resolve: &Resolve, ty: Type) -> bool {
    matches!(ty, Type::Id(id) if matches!(resolve.types[id].kind, TypeDefKind::Option(Type::String)))
}

/// Bytes: types.wit's `data`, or a `list<u8>`.
pub fn is_bytes(resolve: &Resolve, ty: Type) -> bool {
    match ty {
        Type::Id(id) => {
            crate::codegen::is_data(resolve, id)
                || match resolve.types[id].kind {
                    TypeDefKind::Type(target) => is_bytes(resolve, target),
                    TypeDefKind::List(Type::U8) => true,
                    _ => false,
                }
        }
        _ => false,
    }
}

fn is_list_of_strings(resolve: &Resolve, ty: Type) -> bool {
    matches!(ty, Type::Id(id) if matches!(resolve.types[id].kind, TypeDefKind::List(Type::String)))
}

/// Whether the `from .types import (...)` of `source` names `name`.
fn imports_name(source: &str, name: &str) -> bool {
    let Some(start) = source.find("from .types import (") else { return false };
    let block = &source[start..];
    let block = &block[..block.find(')').unwrap_or(block.len())];
    block.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|word| word == name)
}

/// The browser package's declarations with those of the methods js/api.js has
/// generated (`called`: what its hand-written methods call), each type named as the
/// declarations name it.
pub fn typescript(resolve: &Resolve, package: wit_parser::PackageId, source: &str, called: &BTreeSet<String>) -> Result<String, String> {
    let all = operations(resolve, package);
    let doc_names = DocNames::of(resolve, package);
    let hand_written_part = hand_written(source, DTS_BEGIN, DTS_END);
    let declared: BTreeSet<&str> = hand_written_part
        .lines()
        .filter_map(|line| line.strip_prefix("export interface ").or_else(|| line.strip_prefix("export type ")))
        .filter_map(|rest| rest.split([' ', '<', '=', '{']).next())
        .collect();
    let mut names = TypeNames::default();
    let mut methods = String::new();
    let sessions = hand_written_part
        .split_once("export interface Sessions {")
        .map(|(_, rest)| rest.split("\n}").next().unwrap_or_default())
        .ok_or_else(|| format!("{}: no `export interface Sessions {{`, where the store's methods are declared", crate::codegen::DTS))?;
    let declared_methods = defined(sessions, "  ");
    for operation in to_generate(&all, called, crate::codegen::DTS)? {
        let method = crate::codegen::spelled(&operation.key, &Language::JavaScript);
        // Declared by hand: typed further than the WIT (`SecretKind[]` for a `list<string>`).
        if declared_methods.contains(&method) {
            continue;
        }
        methods.push_str(&jsdoc_of(Some(&operation.doc(resolve, Language::JavaScript, &doc_names)), "  "));
        let mut parameters = Vec::new();
        let mut options = Vec::new();
        for parameter in operation.caller_order() {
            let name = parameter_name(parameter.name, Language::JavaScript);
            let into = if operation.in_options(parameter) { &mut options } else { &mut parameters };
            into.push(match parameter.argument {
                Argument::Now => "now?: number".to_owned(),
                Argument::Project => "project: string | null".to_owned(),
                Argument::Overlay { .. } => {
                    format!("{name}?: Partial<EitherSpelling<{}>>", ts_type(resolve, &mut names, &declared, parameter.ty, true)?)
                }
                Argument::Optional | Argument::Default(_) => {
                    format!("{name}?: {}", ts_type(resolve, &mut names, &declared, parameter.ty, true)?)
                }
                Argument::Fresh => format!("{name}?: string"),
                Argument::Window => "since?: number | null; until?: number | null".to_owned(),
                _ => format!("{name}: {}", ts_type(resolve, &mut names, &declared, parameter.ty, true)?),
            });
        }
        if !options.is_empty() {
            parameters.push(format!("options?: {{ {} }}", options.join("; ")));
        }
        let result = match ok_type(resolve, operation.function) {
            None => "null".to_owned(),
            Some(ty) => ts_type(resolve, &mut names, &declared, ty, false)?,
        };
        let _ = writeln!(methods, "  {method}({}): Promise<{result}>;", parameters.join(", "));
    }
    with_region(source, DTS_BEGIN, DTS_END, &methods)
}

/// A WIT type as the browser package's declarations write it: a named type by the name
/// they declare it under (which they must), bytes a caller gives as any of the three
/// forms the API takes.
fn ts_type(resolve: &Resolve, names: &mut TypeNames, declared: &BTreeSet<&str>, ty: Type, given: bool) -> Result<String, String> {
    let id = match ty {
        Type::Bool => return Ok("boolean".to_owned()),
        Type::Char | Type::String => return Ok("string".to_owned()),
        Type::ErrorContext => return Ok("unknown".to_owned()),
        Type::Id(id) => id,
        _ => return Ok("number".to_owned()),
    };
    let bytes = if given { "string | Uint8Array | ArrayBuffer" } else { "Uint8Array" };
    if crate::codegen::is_json(resolve, ty) {
        return Ok("any".to_owned());
    }
    if crate::codegen::is_data(resolve, id) {
        return Ok(bytes.to_owned());
    }
    let def = &resolve.types[id];
    Ok(match &def.kind {
        TypeDefKind::Type(target) => return ts_type(resolve, names, declared, *target, given),
        TypeDefKind::List(Type::U8) => bytes.to_owned(),
        TypeDefKind::List(item) => {
            let item = ts_type(resolve, names, declared, *item, given)?;
            if item.contains(' ') { format!("({item})[]") } else { format!("{item}[]") }
        }
        TypeDefKind::Option(item) => format!("{} | null", ts_type(resolve, names, declared, *item, given)?),
        TypeDefKind::Record(_) | TypeDefKind::Enum(_) | TypeDefKind::Variant(_) => {
            let (interface, name) = named(resolve, ty).ok_or("a named type without a name")?;
            let wit_name = names.of(resolve, interface, name);
            let name = crate::codegen::DTS_NAMES.iter().find(|(wit, _)| *wit == wit_name).map_or(wit_name.as_str(), |(_, api)| api);
            if !declared.contains(name) {
                return Err(format!(
                    "{}: declare `{name}` (WIT's `{interface}.{}`), which a generated method names",
                    crate::codegen::DTS,
                    def.name.as_deref().unwrap_or_default()
                ));
            }
            name.to_owned()
        }
        _ => return Err(format!("no TypeScript spelling of WIT type {:?}", def.kind)),
    })
}

/// The derived operations' calls: for the JavaScript runner, for the Python one, and
/// as rows (a step's name, its arguments) for the Rust one.
pub struct DerivedCalls {
    pub js: String,
    pub python: String,
    pub rows: Vec<DerivedCall>,
}

/// One operation a runner calls by its rule.
pub struct DerivedCall {
    /// Its name in a vector's step.
    pub name: String,
    /// Each argument by a step's name for it, how the method takes it, and the name of
    /// the option it is (JavaScript's options object, a Python keyword), if it is one.
    pub arguments: Vec<(String, &'static str, Option<String>)>,
    /// The JSON of what the method takes for each `default` argument a step leaves out.
    pub defaults: Vec<(String, String)>,
    /// It gives bytes.
    pub bytes: bool,
    /// It gives `json` (or an option of it), which the Rust runner parses.
    pub json: bool,
}

/// What the conformance runners of both APIs (tests/js/, host-python/tests/) call each
/// operation whose method both derive by: its arguments in the method's order, each
/// by the name a vector's step gives it (`now_ms` for `now`, `project` for a scope)
/// and how the method takes it. With it the runners dispatch those operations by
/// name, without a case of their own.
pub fn derived_calls(
    resolve: &Resolve,
    package: wit_parser::PackageId,
    js_called: &BTreeSet<String>,
    python_called: &BTreeSet<String>,
) -> Result<DerivedCalls, String> {
    let all = operations(resolve, package);
    let mut rows = Vec::new();
    for operation in to_generate(&all, js_called, crate::codegen::JS_API)? {
        // A plan is made by one step and applied by a later one: each runner carries it
        // from one to the other in a case of its own.
        let plans = operation.wit_name().starts_with("plan-") || operation.parameters.iter().any(|parameter| parameter.name == "plan");
        // Bytes inside a result (an export's `data`): each runner compares them as text
        // in a case of its own.
        let ok = ok_type(resolve, operation.function);
        let bytes_within = ok.is_some_and(|ty| !is_bytes(resolve, ty) && crate::engines::holds_data(resolve, &ty));
        if python_called.contains(&operation.key) || plans || bytes_within {
            continue;
        }
        let mut defaults = Vec::new();
        let mut arguments = Vec::new();
        for parameter in operation.caller_order() {
            let name = parameter.name.replace('-', "_");
            let option = |option: &str| operation.in_options(parameter).then(|| option.to_owned());
            arguments.extend(match &parameter.argument {
                Argument::Now => vec![("now_ms".to_owned(), "now", option("now"))],
                Argument::Project => vec![("project".to_owned(), "project", None)],
                Argument::Overlay { .. } => vec![(name, "overlay", None)],
                Argument::Optional => vec![(name.clone(), "optional", option(&name))],
                Argument::Default(value) => {
                    defaults.push((name.clone(), value.json()));
                    vec![(name.clone(), "default", option(&name))]
                }
                // A step gives a window's ends as the record names them.
                Argument::Window => {
                    vec![("since_ms".to_owned(), "optional", option("since")), ("until_ms".to_owned(), "optional", option("until"))]
                }
                // A fresh id is given: a vector's outcome must not depend on a random one.
                _ => vec![(name.clone(), "given", option(&name))],
            });
        }
        let bytes = ok.is_some_and(|ty| is_bytes(resolve, ty));
        let json = gives_json(resolve, operation.function);
        rows.push(DerivedCall { name: operation.wit_name().replace('-', "_"), arguments, defaults, bytes, json });
    }
    let header = "Generated by `cargo xtask codegen` from wit/ (xtask/src/wrappers.rs): do not edit.\n\
                  Each operation whose method the JavaScript and the Python API both derive from\n\
                  the WIT (but those that make or apply a plan), keyed by its name in a vector's\n\
                  step: its arguments in the method's order, each as a step names it and how the\n\
                  method takes it (`given`, `now`: a step gives it; `project`, `optional`: null\n\
                  when left out; `overlay`: the core's defaults for what it leaves out;\n\
                  `default`: the method's default when left out), the option it is (in\n\
                  JavaScript's options object; a Python keyword) or null, and\n\
                  whether it gives bytes (compared as text, as the Rust runner gives them).\n";
    let mut js: String = header.lines().map(|line| format!("// {line}\n")).collect();
    js.push_str("export const DERIVED = {\n");
    let mut python: String = header.lines().map(|line| format!("# {line}\n")).collect();
    python.push_str("DERIVED = {\n");
    for DerivedCall { name, arguments, bytes, .. } in &rows {
        let listed = |none: &str| -> String {
            let listed: Vec<String> = arguments
                .iter()
                .map(|(argument, how, option)| {
                    format!("[\"{argument}\", \"{how}\", {}]", option.as_ref().map_or(none.to_owned(), |option| format!("\"{option}\"")))
                })
                .collect();
            listed.join(", ")
        };
        let _ = writeln!(js, "  {name}: {{ arguments: [{}], bytes: {bytes} }},", listed("null"));
        let bytes = if *bytes { "True" } else { "False" };
        let _ = writeln!(python, "    \"{name}\": {{\"arguments\": [{}], \"bytes\": {bytes}}},", listed("None"));
    }
    js.push_str("};\n");
    python.push_str("}\n");
    Ok(DerivedCalls { js, python, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIT: &str = "package t:t;
interface sessions {
  resource store {
    /// Soft-deletes `uuid`.
    tombstone: func(id: string, uuid: string, now-ms: s64) -> result<_, string>;
    usage: func(id: string, prices: option<list<string>>) -> result<u32, string>;
    %export: func() -> result<list<u8>, string>;
  }
}
interface memory {
  use sessions.{store};
  variant scope { global, project(string) }
  record caps { lines: u64 }
  record request { n: u32 }
  default-caps: func() -> caps;
  answer: func(store: borrow<store>, request: request) -> result<u32, string>;
  memory-load: func(store: borrow<store>, scope: scope, caps: caps) -> result<string, string>;
  dream-gate: func(store: borrow<store>, now-ms: s64, caps: caps) -> result<bool, string>;
  link: func(store: borrow<store>, scope: scope, %from: string, now-ms: s64) -> result<u32, string>;
  plan: func(store: borrow<store>, caps: caps, model: string) -> result<u32, string>;
  plan-x: func(store: borrow<store>, id: string) -> result<u32, string>;
  clock: func(store: borrow<store>, time: s64) -> result<u32, string>;
  apply-x: func(store: borrow<store>, plan: request) -> result<u32, string>;
  lines: func() -> u32;
}
interface types {
  variant error { changed(string), stale-plan(string) }
  record stamp { changed: u32, updated-ms: s64 }
  type fresh-id = string;
  type json = string;
  record window { since-ms: option<s64>, until-ms: option<s64> }
}
interface index {
  use sessions.{store};
  use types.{fresh-id, window, json};
  enum mode { auto, dry-run }
  record field { name: string }
  /// Starts `key` afresh. `mode` defaults to `dry-run`; `limit` defaults to `64`; `filter` defaults to `[]`.
  reset: func(store: borrow<store>, key: string, new-id: fresh-id, mode: mode, limit: u32, filter: list<field>, now-ms: s64) -> result<u32, string>;
  find: func(store: borrow<store>, query: string, window: window) -> result<u32, string>;
  /// Runs `input`, giving a JSON array.
  run: func(store: borrow<store>, input: json) -> result<json, string>;
  pop: func(store: borrow<store>) -> result<option<json>, string>;
}
";

    fn resolve() -> (Resolve, wit_parser::PackageId) {
        let mut resolve = Resolve::default();
        let package = resolve.push_str("t.wit", WIT).expect("the test's WIT");
        (resolve, package)
    }

    fn region(begin: &str, end: &str) -> String {
        format!("\n_SESSIONS = \"t:t/sessions\"\n_MEMORY = \"t:t/memory\"\n_INDEX = \"t:t/index\"\nclass {{\n{begin}\n{end}\n}}\n")
    }

    /// The Python package's imports the test's methods name.
    const PY_IMPORTS: &str = "from .types import (\n    Field,\n    Mode,\n    Request,\n)\n";

    /// What the hand-written part writes: `clock` cannot be derived, `tombstone` is written
    /// by hand in the tests that say so.
    fn written(also: &[&str]) -> BTreeSet<String> {
        also.iter().map(|key| (*key).to_owned()).chain(["memory.clock".to_owned()]).collect()
    }

    #[test]
    fn each_kind_of_parameter_is_taken_by_its_rule() {
        let (resolve, package) = resolve();
        let js = javascript(&resolve, package, &region(JS_BEGIN, JS_END), &written(&[])).expect("derivable");
        assert!(js.contains("  /** Soft-deletes `uuid`. */\n  tombstone(id, uuid, now = Date.now()) { return this.#invoke(\"sessions.store.tombstone\", () => [id, uuid, time(\"now\", now)]); }"), "{js}");
        assert!(js.contains("usage(id, prices = null) { return this.#invoke(\"sessions.store.usage\", () => [id, prices]); }"), "{js}");
        assert!(js.contains("memoryLoad(project, caps = {}) { return this.#invoke(\"memory.memory-load\", async () => [scope(project), await this.#overlay(\"memory.default-caps\", caps, \"caps\")]); }"), "{js}");
        // `now` goes last whatever its place in the WIT.
        assert!(js.contains("dreamGate(caps = {}, now = Date.now()) { return this.#invoke(\"memory.dream-gate\", async () => [time(\"now\", now), await this.#overlay(\"memory.default-caps\", caps, \"caps\")]); }"), "{js}");

        let python = python(&resolve, package, &format!("{PY_IMPORTS}{}", region(PY_BEGIN, PY_END)), &written(&[])).expect("derivable");
        assert!(python.contains("    def tombstone(self, id: str, uuid: str, now: Time = None) -> None:\n        \"\"\"Soft-deletes `uuid`.\"\"\"\n        return self._method(\"tombstone\", _text(\"id\", id), _text(\"uuid\", uuid), _now_ms(now))"), "{python}");
        assert!(python.contains("def usage(self, id: str, prices: Optional[Sequence[str]] = None) -> int:"), "{python}");
        assert!(python.contains("return self._instance.call(_MEMORY, \"memory-load\", self._store, _scope(project), _overlay(self._instance.call(_MEMORY, \"default-caps\"), caps, \"caps\"))"), "{python}");
        // A Python keyword is a parameter with a `_`, which a refusal names as the caller wrote it.
        assert!(python.contains("def link(self, project: Optional[str], from_: str, now: Time = None) -> int:"), "{python}");
        assert!(python.contains("_text(\"from_\", from_)"), "{python}");
    }

    #[test]
    fn a_fresh_id_and_a_stated_default_may_be_left_out() {
        let (resolve, package) = resolve();
        let js = javascript(&resolve, package, &region(JS_BEGIN, JS_END), &written(&[])).expect("derivable");
        assert!(
            js.contains("reset(key, { newId = crypto.randomUUID(), mode = \"dry_run\", limit = 64, filter = [], now = Date.now() } = {}) { return this.#invoke(\"index.reset\", () => [key, newId, mode, limit, filter, time(\"now\", now)]); }"),
            "{js}"
        );
        let python = python(&resolve, package, &format!("{PY_IMPORTS}{}", region(PY_BEGIN, PY_END)), &written(&[])).expect("derivable");
        assert!(
            python.contains("def reset(self, key: str, new_id: Optional[str] = None, mode: Mode = \"dry_run\", limit: int = 64, filter: Optional[Sequence[Field]] = None, now: Time = None) -> int:"),
            "{python}"
        );
        // An empty list left out is None, as Python callers write it.
        assert!(
            python.contains("_text(\"new_id\", _fresh_id(new_id)), mode, limit, [] if filter is None else filter, _now_ms(now))"),
            "{python}"
        );
        // A stated default a reflow broke across lines is read all the same.
        let wrapped = WIT.replace("`limit` defaults to `64`", "`limit`\n  /// defaults to\n  /// `64`");
        let mut resolve = Resolve::default();
        let package = resolve.push_str("t.wit", &wrapped).expect("the test's WIT");
        let js = javascript(&resolve, package, &region(JS_BEGIN, JS_END), &written(&[])).expect("derivable");
        assert!(js.contains("limit = 64,"), "{js}");
        let calls = derived_calls(&resolve, package, &written(&[]), &written(&[])).expect("derivable");
        // A vector gives a fresh id: its outcome must not depend on a random one.
        assert!(
            calls.js.contains("  reset: { arguments: [[\"key\", \"given\", null], [\"new_id\", \"given\", \"new_id\"], [\"mode\", \"default\", \"mode\"], [\"limit\", \"default\", \"limit\"], [\"filter\", \"default\", \"filter\"], [\"now_ms\", \"now\", \"now\"]], bytes: false },"),
            "{}",
            calls.js
        );
        let row = calls.rows.iter().find(|row| row.name == "reset").expect("reset is called by rule");
        assert_eq!(
            row.defaults,
            [("mode", "\"dry_run\""), ("limit", "64"), ("filter", "[]")].map(|(name, value)| (name.to_owned(), value.to_owned()))
        );
    }

    #[test]
    fn a_window_is_its_two_ends_and_what_may_be_left_out_follows_what_is_given() {
        let (resolve, package) = resolve();
        let js = javascript(&resolve, package, &region(JS_BEGIN, JS_END), &written(&[])).expect("derivable");
        // Two values that may be left out: an options object.
        assert!(js.contains("find(query, { since = null, until = null } = {}) { return this.#invoke(\"index.find\", () => [query, window(since, until)]); }"), "{js}");
        // Given first, whatever the WIT's order; a record of defaults is no option.
        assert!(js.contains("plan(model, caps = {}) { return this.#invoke(\"memory.plan\", async () => [await this.#overlay(\"memory.default-caps\", caps, \"caps\"), model]); }"), "{js}");
        let python = python(&resolve, package, &format!("{PY_IMPORTS}{}", region(PY_BEGIN, PY_END)), &written(&[])).expect("derivable");
        assert!(python.contains("def find(self, query: str, since: Time = None, until: Time = None) -> int:"), "{python}");
        assert!(python.contains("_text(\"query\", query), _window(since, until))"), "{python}");
        let calls = derived_calls(&resolve, package, &written(&[]), &written(&[])).expect("derivable");
        assert!(
            calls.js.contains("  find: { arguments: [[\"query\", \"given\", null], [\"since_ms\", \"optional\", \"since\"], [\"until_ms\", \"optional\", \"until\"]], bytes: false },"),
            "{}",
            calls.js
        );
    }

    #[test]
    fn the_options_table_lists_the_derived_methods_options_and_refuses_one_written_by_hand() {
        let (resolve, package) = resolve();
        let table = format!("export const OPTIONS = {{\n  append: [1, [\"role\"]],\n{OPTIONS_BEGIN}\n{OPTIONS_END}\n}};\n");
        let written_table = options_table(&resolve, package, &table, &written(&[])).expect("derivable");
        assert!(written_table.contains("  reset: [1, [\"newId\", \"mode\", \"limit\", \"filter\", \"now\"]],\n"), "{written_table}");
        assert!(written_table.contains("  find: [1, [\"since\", \"until\"]],\n"), "{written_table}");
        // A method with one value that may be left out takes it by position.
        assert!(!written_table.contains("usage:"), "{written_table}");
        let error = options_table(&resolve, package, &table.replace("append:", "usage:"), &written(&[])).expect_err("usage is derived");
        assert!(error.contains("`usage` is derived from the WIT: take it out of the table"), "{error}");
    }

    #[test]
    fn json_is_given_and_taken_as_the_value_it_holds() {
        let (resolve, package) = resolve();
        // JavaScript's engines lower and lift `json` by its type (js/wit.js).
        let js = javascript(&resolve, package, &region(JS_BEGIN, JS_END), &written(&[])).expect("derivable");
        assert!(js.contains("run(input) { return this.#invoke(\"index.run\", () => [input]); }"), "{js}");
        let python = python(&resolve, package, &format!("{PY_IMPORTS}{}", region(PY_BEGIN, PY_END)), &written(&[])).expect("derivable");
        assert!(python.contains("def run(self, input: Json) -> List[Json]:"), "{python}");
        assert!(
            python.contains("return _json_value(self._instance.call(_INDEX, \"run\", self._store, _json(\"input\", input)))"),
            "{python}"
        );
        assert!(python.contains("def pop(self) -> Optional[Json]:"), "{python}");
        let calls = derived_calls(&resolve, package, &written(&[]), &written(&[])).expect("derivable");
        let json: Vec<&str> = calls.rows.iter().filter(|row| row.json).map(|row| row.name.as_str()).collect();
        assert_eq!(json, ["run", "pop"]);
        // A record's `json` field: Python's engine would give its text.
        let wit = WIT.replace(
            "  pop: func(store: borrow<store>) -> result<option<json>, string>;",
            "  record held { body: json }\n  pop: func(store: borrow<store>) -> result<held, string>;",
        );
        let mut nested = Resolve::default();
        let nested_package = nested.push_str("t.wit", &wit).expect("the test's WIT");
        let error = crate::wrappers::python(&nested, nested_package, &format!("{PY_IMPORTS}{}", region(PY_BEGIN, PY_END)), &written(&[]))
            .expect_err("json in a record");
        assert!(error.contains("index.pop holds `json` inside a record or a list"), "{error}");
        let dts = "export interface Sessions {\n  // <operations: written by `cargo xtask codegen` from wit/, as js/api.js has them; do not edit>\n  // </operations>\n}\nexport type Mode = \"auto\";\nexport interface Field { name: string }\nexport interface Request { n: number }\nexport interface Caps { lines: number }\n";
        let declared = typescript(&resolve, package, dts, &written(&[])).expect("declarable");
        assert!(declared.contains("  run(input: any): Promise<any>;"), "{declared}");
        assert!(declared.contains("  pop(): Promise<any | null>;"), "{declared}");
    }

    #[test]
    fn a_flag_is_an_option_by_name() {
        let wit = WIT.replace(
            "  clock: func(",
            "  /// `dry-run` defaults to `false`.\n  apply: func(store: borrow<store>, id: string, dry-run: bool) -> result<u32, string>;\n  clock: func(",
        );
        let mut resolve = Resolve::default();
        let package = resolve.push_str("t.wit", &wit).expect("the test's WIT");
        let js = javascript(&resolve, package, &region(JS_BEGIN, JS_END), &written(&[])).expect("derivable");
        assert!(js.contains("apply(id, { dryRun = false } = {}) { return this.#invoke(\"memory.apply\", () => [id, dryRun]); }"), "{js}");
        let python = python(&resolve, package, &format!("{PY_IMPORTS}{}", region(PY_BEGIN, PY_END)), &written(&[])).expect("derivable");
        assert!(python.contains("def apply(self, id: str, dry_run: bool = False) -> int:"), "{python}");
    }

    #[test]
    fn a_stated_default_that_cannot_be_written_is_refused() {
        for (doc, why) in [
            ("`mode` defaults to `never`.", "`mode`: `never` is no case of its enum"),
            ("`limit` defaults to `-1`.", "`limit`: `-1` is no number of its type"),
            (
                "`limit` defaults to `5000000000`.",
                "`limit`: `5000000000` is no number of its type: write a whole number from 0 to 4294967295",
            ),
            ("`limit` defaults to `064`.", "`limit`: `064` is no number of its type"),
            ("`limit` defaults to `+5`.", "`limit`: `+5` is no number of its type"),
            ("`filter` defaults to `[1]`.", "`filter`: a default `[1]` of this type is not one the APIs can write"),
            ("`count` defaults to `1`.", "its doc gives a default of `count`, which is none of its parameters"),
            ("`new-id` defaults to `x`.", "its doc gives a default of `new-id`, which a rule defaults already"),
        ] {
            let wit = WIT.replace("`mode` defaults to `dry-run`; `limit` defaults to `64`; `filter` defaults to `[]`.", doc);
            let mut resolve = Resolve::default();
            let package = resolve.push_str("t.wit", &wit).expect("the test's WIT");
            let error = javascript(&resolve, package, &region(JS_BEGIN, JS_END), &written(&[])).expect_err(doc);
            assert!(error.contains(&format!("index.reset: {why}")), "{doc}: {error}");
        }
    }

    #[test]
    fn a_method_written_by_hand_is_not_written_again_nor_named_twice() {
        let (resolve, package) = resolve();
        let js = javascript(&resolve, package, &region(JS_BEGIN, JS_END), &written(&["sessions.store.tombstone"])).expect("derivable");
        assert!(!js.contains("tombstone("), "{js}");
        assert!(js.contains("usage("), "{js}");
        // A hand-written `usage` that calls another function: the derived one would replace it.
        let source = format!("class {{\n  usage(id) {{ return this.#invoke(\"other\", () => [id]); }}\n{JS_BEGIN}\n{JS_END}\n}}\n");
        let error = javascript(&resolve, package, &source, &written(&[])).expect_err("`usage` twice");
        assert!(error.contains("`usage` would be defined twice"), "{error}");
    }

    #[test]
    fn an_operation_neither_written_nor_derivable_is_refused_by_name() {
        let (resolve, package) = resolve();
        let error = javascript(&resolve, package, &region(JS_BEGIN, JS_END), &BTreeSet::new()).expect_err("clock takes a `time`");
        assert!(error.contains("memory.clock: a parameter would be named `time`, which the method cannot take it as"), "{error}");
        let error = javascript(&resolve, package, "class {}\n", &written(&[])).expect_err("no markers");
        assert!(error.contains("no place for the generated methods"), "{error}");
    }

    #[test]
    fn a_python_annotation_names_only_what_the_package_imports() {
        let (resolve, package) = resolve();
        let error =
            python(&resolve, package, &format!("{}{}", PY_IMPORTS.replace("    Request,\n", ""), region(PY_BEGIN, PY_END)), &written(&[]))
                .expect_err("`Request` is not imported");
        assert!(error.contains("name `Request` from mneme.types: import them"), "{error}");
        let python = python(&resolve, package, &format!("{PY_IMPORTS}{}", region(PY_BEGIN, PY_END)), &written(&[])).expect("imported");
        assert!(python.contains("def answer(self, request: Request) -> int:"), "{python}");
    }

    #[test]
    fn the_declarations_name_the_types_as_declared_and_keep_a_hand_written_one() {
        let (resolve, package) = resolve();
        let dts = format!(
            "export interface Request {{ n: number }}\nexport interface Caps {{ lines: number }}\nexport type Mode = \"auto\" | \"dry_run\";\nexport interface Field {{ name: string }}\nexport interface Sessions {{\n  usage(id: string): Promise<number>;\n{DTS_BEGIN}\n{DTS_END}\n}}\n"
        );
        let declared = typescript(&resolve, package, &dts, &written(&[])).expect("declarable");
        assert!(declared.contains("  answer(request: Request): Promise<number>;"), "{declared}");
        assert!(
            declared.contains("  memoryLoad(project: string | null, caps?: Partial<EitherSpelling<Caps>>): Promise<string>;"),
            "{declared}"
        );
        assert!(declared.contains("  export(): Promise<Uint8Array>;"), "{declared}");
        assert!(
            declared.contains(
                "  reset(key: string, options?: { newId?: string; mode?: Mode; limit?: number; filter?: Field[]; now?: number }): Promise<number>;"
            ),
            "{declared}"
        );
        assert!(!declared.contains("usage(id: string, prices"), "the hand-written declaration is kept: {declared}");
        let error = typescript(&resolve, package, &dts.replace("export interface Request { n: number }\n", ""), &written(&[]))
            .expect_err("Request undeclared");
        assert!(error.contains("declare `Request`"), "{error}");
    }

    #[test]
    fn the_runners_call_what_both_apis_derive_but_plans() {
        let (resolve, package) = resolve();
        let calls = derived_calls(&resolve, package, &written(&[]), &written(&["memory.answer"])).expect("derivable");
        let names: Vec<&str> = calls.rows.iter().map(|row| row.name.as_str()).collect();
        assert!(!names.contains(&"answer"), "Python writes it by hand: {names:?}");
        // Derived, but a runner carries a plan from the step that makes it to the one that applies it.
        let js = javascript(&resolve, package, &region(JS_BEGIN, JS_END), &written(&[])).expect("derivable");
        assert!(js.contains("planX(id)") && js.contains("applyX(plan)"), "{js}");
        assert!(!names.contains(&"plan_x") && !names.contains(&"apply_x"), "{names:?}");
        assert!(names.contains(&"usage"), "{names:?}");
        assert!(
            calls.js.contains(
                "  link: { arguments: [[\"project\", \"project\", null], [\"from\", \"given\", null], [\"now_ms\", \"now\", null]], bytes: false },"
            ),
            "{}",
            calls.js
        );
        assert!(calls.js.contains("  export: { arguments: [], bytes: true },"), "{}", calls.js);
        assert!(
            calls.python.contains(
                "    \"dream_gate\": {\"arguments\": [[\"caps\", \"overlay\", None], [\"now_ms\", \"now\", None]], \"bytes\": False},"
            ),
            "{}",
            calls.python
        );
    }

    #[test]
    fn a_doc_names_functions_parameters_and_fields_as_each_language_does_and_error_kinds_as_the_wit() {
        let (resolve, package) = resolve();
        let names = DocNames::of(&resolve, package);
        assert!(names.fields.contains("updated-ms") && !names.fields.contains("changed"), "an error's kind is no field");
        let doc = "Calls `memory-load` and `memory.memory-load` with `now-ms` and `new-session-id` in `scope`; \
                   `updated-ms` and `lines` stay; not `message.memory-load`; else `changed`, `stale-plan` or `-`.";
        let parameters = ["new-session-id", "now-ms"];
        assert_eq!(
            api_doc(doc, Language::JavaScript, &names, &parameters, true),
            "Calls `memoryLoad` and `memoryLoad` with `now` and `newSessionId` in `project`; \
             `updated_ms` and `lines` stay; not `message.memory-load`; else `changed`, `stale-plan` or `-`."
        );
        assert_eq!(
            api_doc(doc, Language::Python, &names, &parameters, false),
            "Calls `memory_load` and `memory_load` with `now` and `new_session_id` in `scope`; \
             `updated_ms` and `lines` stay; not `message.memory-load`; else `changed`, `stale-plan` or `-`."
        );
    }
}
