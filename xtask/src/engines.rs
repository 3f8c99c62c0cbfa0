//! The Rust bindings of the engine's operations, derived by `cargo xtask codegen`
//! rather than written: the `Engine` trait's three implementations (the core itself
//! over a synchronous storage, the component under wasmtime, the component a `wasmtime
//! run` command is composed with), the component's exports, and the browser binding's
//! operations. Each is one call per operation and differs only in how a value crosses:
//!
//! - the trait (core/src/engine.rs) gives each operation's Rust signature;
//! - the WIT gives where it lives (a method of `store`, a function taking the store,
//!   or a function of no store), whether it can fail, and its parameters' WIT types;
//! - the store's view of the operation's interface (`store.sessions()`, …) gives
//!   whether the core's method takes `self`, is `async` and returns a `Result`.
//!
//! A value the WIT names (a record, variant or enum) crosses by `Mirror`; a string,
//! a list of strings, a number or a flag crosses as it is. What the three disagree on
//! is refused here, in words, rather than left to rustc inside a generated file.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use quote::ToTokens;
use wit_parser::{Function, FunctionKind, Handle, Resolve, Type, TypeDefKind, TypeOwner};

/// The core's `Engine` trait, the one hand-written Rust declaration of the operations.
const ENGINE: &str = "core/src/engine.rs";
const CORE_SOURCE: &str = "core/src";
/// The trait's implementations: the core's, the wasmtime host's, the WASI command's.
const STORE_ENGINE: &str = "core/src/engine/store.rs";
const COMPONENT_ENGINE: &str = "host-native/src/component/engine.rs";
const WASI_ENGINE: &str = "host-wasi/cli/src/engine.rs";
/// The component's exports: each operation's export calls its view, like the core's
/// `Engine`; the exports that are no operation (constants, the storage contract) call
/// the function of the same name in `own`, written by hand, and the `store`
/// constructor calls `own::new_store`.
const COMPONENT_EXPORTS: &str = "component/src/operations.rs";
/// The browser binding's operations: each runs its view with arguments in mneme-core's
/// JSON and answers in it. An operation whose values hold `data` anywhere but as a
/// parameter of its own (an import's request, an export's result, the OpenClaw
/// export's bytes) is left to the binding's own dispatch, which must have it.
const BROWSER_OPERATIONS: &str = "web/src/operations.rs";
const BROWSER_BINDING: &str = "web/src/lib.rs";
/// The Rust conformance runner's calls of the derived operations.
const CONFORMANCE_CALLS: &str = "tests/src/derived.rs";
/// An interface whose functions are operations, and the view of the store that
/// serves it: `store.<accessor>()`, of type `<path>` in the core.
struct View {
    interface: &'static str,
    accessor: &'static str,
    name: &'static str,
    path: &'static str,
}

static VIEWS: [View; 5] = [
    View { interface: "sessions", accessor: "sessions", name: "Sessions", path: "sessions::Sessions" },
    View { interface: "compaction", accessor: "compaction", name: "Compaction", path: "sessions::Compaction" },
    View { interface: "gates", accessor: "gates", name: "Gates", path: "sessions::Gates" },
    View { interface: "memory", accessor: "memory", name: "Memories", path: "memory::Memories" },
    View { interface: "index", accessor: "index", name: "Index", path: "index::Index" },
];
const HEADER: &str = "// Written by `cargo xtask codegen` from wit/, the `Engine` trait in core/src/engine.rs\n\
                      // and the store's views; do not edit.\n";

/// Where a WIT function finds the store.
#[derive(Clone, Copy, PartialEq)]
enum Receiver {
    /// A method of the `store` resource.
    Method,
    /// A function whose first parameter is `borrow<store>`.
    Borrowed,
    /// A function of no store.
    Free,
}

struct Operation<'a> {
    name: String,
    view: &'static View,
    receiver: Receiver,
    function: &'a Function,
    /// The WIT function returns a `result`.
    fallible: bool,
    params: Vec<Param<'a>>,
    output: syn::Type,
    method: ViewMethod,
}

/// A public method of one of the store's views.
#[derive(Clone, Copy)]
struct ViewMethod {
    /// It takes `&self` (one that reads no store does not).
    has_self: bool,
    is_async: bool,
    /// It returns a `Result`.
    fallible: bool,
}

/// A function of one of the engine's interfaces, and the view that serves it.
#[derive(Clone, Copy)]
struct WitFunction<'a> {
    view: &'static View,
    function: &'a Function,
}

struct Param<'a> {
    name: String,
    core: syn::Type,
    wit: &'a Type,
}

/// The hand-written Rust the bindings are derived from, besides the WIT.
pub struct Sources {
    /// The `Engine` trait's file.
    engine: String,
    /// Every file of the core, as (path, text): the views' methods are among them.
    core: Vec<(String, String)>,
    /// The browser binding's own dispatch.
    browser_binding: String,
}

impl Sources {
    pub fn read() -> Result<Sources, String> {
        let mut core = Vec::new();
        rust_files(Path::new(CORE_SOURCE), &mut core)?;
        Ok(Sources { engine: read(ENGINE)?, core, browser_binding: read(BROWSER_BINDING)? })
    }
}

/// What is derived (the trait's implementations, the component's exports, the browser
/// binding's operations), as (path, text) pairs.
pub fn outputs(resolve: &Resolve, package: wit_parser::PackageId, sources: &Sources) -> Result<Vec<(String, String)>, String> {
    let (operations, imports) = operations(resolve, package, sources)?;
    Ok(vec![
        (COMPONENT_EXPORTS.to_owned(), rustfmt(&component_exports(resolve, package, &operations, &imports)?)?),
        (BROWSER_OPERATIONS.to_owned(), rustfmt(&browser_operations(resolve, &operations, &imports, &sources.browser_binding)?)?),
        (STORE_ENGINE.to_owned(), rustfmt(&store_engine(&operations, &imports))?),
        (COMPONENT_ENGINE.to_owned(), rustfmt(&binding_engine(resolve, &operations, &imports, Binding::Wasmtime))?),
        (WASI_ENGINE.to_owned(), rustfmt(&binding_engine(resolve, &operations, &imports, Binding::Wasi))?),
    ])
}

/// Every operation, as the `Engine` trait, the WIT and the views agree on it, and the
/// names the trait's file imports (for the `use` lines of what is derived).
fn operations<'a>(
    resolve: &'a Resolve,
    package: wit_parser::PackageId,
    sources: &Sources,
) -> Result<(Vec<Operation<'a>>, BTreeMap<String, String>), String> {
    let file = syn::parse_file(&sources.engine).map_err(|e| format!("{ENGINE}: {e}"))?;
    let imports = imports(&file);
    let trait_methods = engine_methods(&file).ok_or_else(|| format!("{ENGINE}: no `pub trait Engine`"))?;
    let views = view_methods(&sources.core)?;
    let functions = wit_functions(resolve, package)?;
    let mut operations = Vec::new();
    for method in &trait_methods {
        let name = method.sig.ident.to_string();
        let wit = functions
            .get(&name)
            .copied()
            .ok_or_else(|| format!("{ENGINE}: `{name}` is named as no function of wit/'s engine interfaces (one name per operation)"))?;
        let view = views.get(&(wit.view.name.to_owned(), name.clone())).copied().ok_or_else(|| {
            format!(
                "`{name}` has no method `{}::{name}` in {CORE_SOURCE}: each operation is a method of its interface's view",
                wit.view.name
            )
        })?;
        operations.push(operation(resolve, method, name, wit, view)?);
    }
    let named: BTreeSet<&str> = operations.iter().map(|op| op.name.as_str()).collect();
    let missing: Vec<&str> = functions
        .iter()
        .filter(|(name, wit)| takes_store(resolve, wit.function) && !named.contains(name.as_str()))
        .map(|(name, _)| name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!("{ENGINE}: the `Engine` trait has no method for {}, which wit/ declares on the store", missing.join(", ")));
    }
    Ok((operations, imports))
}

fn operation<'a>(
    resolve: &Resolve,
    method: &syn::TraitItemFn,
    name: String,
    wit: WitFunction<'a>,
    method_of_view: ViewMethod,
) -> Result<Operation<'a>, String> {
    let WitFunction { view, function } = wit;
    let interface = view.interface;
    let receiver = match function.kind {
        FunctionKind::Method(_) => Receiver::Method,
        _ if takes_store(resolve, function) => Receiver::Borrowed,
        _ => Receiver::Free,
    };
    let wit_params: Vec<&wit_parser::Param> = function.params.iter().skip(usize::from(receiver != Receiver::Free)).collect();
    let core_params: Vec<(String, syn::Type)> = method
        .sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(typed) => Some((typed.pat.to_token_stream().to_string(), (*typed.ty).clone())),
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    if core_params.len() != wit_params.len() {
        return Err(format!(
            "{ENGINE}: `{name}` takes {} parameters, and wit/'s `{interface}.{}` {}",
            core_params.len(),
            function.item_name(),
            wit_params.len()
        ));
    }
    // By name as well as by place: two parameters of one type swapped would compile.
    for ((core_name, _), wit) in core_params.iter().zip(&wit_params) {
        if *core_name != wit.name.replace('-', "_") {
            return Err(format!(
                "{ENGINE}: `{name}` names a parameter `{core_name}` where wit/'s `{interface}.{}` has `{}`: one name, in one place",
                function.item_name(),
                wit.name
            ));
        }
    }
    let params = core_params.into_iter().zip(wit_params).map(|((name, core), wit)| Param { name, core, wit: &wit.ty }).collect();
    let output = result_ok_type(&method.sig.output).ok_or_else(|| format!("{ENGINE}: `{name}` does not return `Result<_, E>`"))?;
    let fallible = function.result.is_some_and(|ty| matches!(ty, Type::Id(id) if matches!(resolve.types[id].kind, TypeDefKind::Result(_))));
    if method_of_view.fallible && !fallible {
        return Err(format!(
            "`{}::{name}` returns a `Result`, and wit/'s `{interface}.{}` cannot fail: make the WIT return `result<_, error>`, or the view not fail",
            view.name,
            function.item_name()
        ));
    }
    Ok(Operation { name, view, receiver, function, fallible, params, output, method: method_of_view })
}

/// The functions of the engine's interfaces by their Rust name, with the interface,
/// the view's accessor and type. Resource constructors and the methods of resources
/// other than `store` are not operations.
fn wit_functions(resolve: &Resolve, package: wit_parser::PackageId) -> Result<BTreeMap<String, WitFunction<'_>>, String> {
    let mut out: BTreeMap<String, WitFunction> = BTreeMap::new();
    for (interface_name, &id) in &resolve.packages[package].interfaces {
        let Some(view) = VIEWS.iter().find(|view| view.interface == interface_name) else { continue };
        for function in resolve.interfaces[id].functions.values() {
            let operation = match function.kind {
                FunctionKind::Freestanding => true,
                FunctionKind::Method(resource) => resolve.types[resource].name.as_deref() == Some("store"),
                _ => false,
            };
            if !operation {
                continue;
            }
            if let Some(other) = out.insert(function.item_name().replace('-', "_"), WitFunction { view, function }) {
                return Err(format!(
                    "wit/'s `{}` and `{}` share the name `{}`: an operation's name is unique across the interfaces",
                    other.view.interface,
                    view.interface,
                    function.item_name()
                ));
            }
        }
    }
    Ok(out)
}

pub fn takes_store(resolve: &Resolve, function: &Function) -> bool {
    let is_store = |id: wit_parser::TypeId| resolve.types[id].name.as_deref() == Some("store");
    match function.kind {
        FunctionKind::Method(resource) => is_store(resource),
        _ => function.params.first().is_some_and(|param| {
            matches!(param.ty, Type::Id(id) if matches!(resolve.types[id].kind, TypeDefKind::Handle(Handle::Borrow(store)) if is_store(store)))
        }),
    }
}

/// The trait's methods.
fn engine_methods(file: &syn::File) -> Option<Vec<syn::TraitItemFn>> {
    file.items.iter().find_map(|item| match item {
        syn::Item::Trait(engine) if engine.ident == "Engine" => Some(
            engine
                .items
                .iter()
                .filter_map(|item| match item {
                    syn::TraitItem::Fn(method) => Some(method.clone()),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    })
}

/// What the file's `use` items name: each imported name and its path.
fn imports(file: &syn::File) -> BTreeMap<String, String> {
    fn walk(tree: &syn::UseTree, prefix: &str, out: &mut BTreeMap<String, String>) {
        match tree {
            syn::UseTree::Path(path) => walk(&path.tree, &format!("{prefix}{}::", path.ident), out),
            syn::UseTree::Name(name) => {
                out.insert(name.ident.to_string(), format!("{prefix}{}", name.ident));
            }
            syn::UseTree::Rename(rename) => {
                out.insert(rename.rename.to_string(), format!("{prefix}{} as {}", rename.ident, rename.rename));
            }
            syn::UseTree::Group(group) => group.items.iter().for_each(|tree| walk(tree, prefix, out)),
            syn::UseTree::Glob(_) => {}
        }
    }
    let mut out = BTreeMap::new();
    for item in &file.items {
        if let syn::Item::Use(item) = item {
            walk(&item.tree, "", &mut out);
        }
    }
    out
}

/// The Rust files under `dir`, as (path, text), in path order.
fn rust_files(dir: &Path, out: &mut Vec<(String, String)>) -> Result<(), String> {
    let mut entries: Vec<_> = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?.flatten().collect();
    entries.sort_by_key(|entry| entry.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            out.push((path.display().to_string(), text));
        }
    }
    Ok(())
}

/// Every public method of the store's views in `files`, by (view, name): whether it
/// takes `self`, is `async` and returns a `Result`.
fn view_methods(files: &[(String, String)]) -> Result<BTreeMap<(String, String), ViewMethod>, String> {
    let mut out = BTreeMap::new();
    for (path, text) in files {
        let file = syn::parse_file(text).map_err(|e| format!("{path}: {e}"))?;
        for item in &file.items {
            let syn::Item::Impl(block) = item else { continue };
            let syn::Type::Path(self_type) = &*block.self_ty else { continue };
            let Some(view) = self_type.path.segments.last().map(|segment| segment.ident.to_string()) else { continue };
            if block.trait_.is_some() || !VIEWS.iter().any(|known| known.name == view) {
                continue;
            }
            for item in &block.items {
                let syn::ImplItem::Fn(method) = item else { continue };
                if matches!(method.vis, syn::Visibility::Public(_)) {
                    let fallible =
                        matches!(&method.sig.output, syn::ReturnType::Type(_, ty) if last_ident(ty).as_deref() == Some("Result"));
                    out.insert(
                        (view.clone(), method.sig.ident.to_string()),
                        ViewMethod { has_self: method.sig.receiver().is_some(), is_async: method.sig.asyncness.is_some(), fallible },
                    );
                }
            }
        }
    }
    Ok(out)
}

fn last_ident(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(path) => path.path.segments.last().map(|segment| segment.ident.to_string()),
        _ => None,
    }
}

/// `T` of a `-> Result<T, E>`.
fn result_ok_type(output: &syn::ReturnType) -> Option<syn::Type> {
    let syn::ReturnType::Type(_, ty) = output else { return None };
    let syn::Type::Path(path) = &**ty else { return None };
    let segment = path.path.segments.last().filter(|segment| segment.ident == "Result")?;
    let syn::PathArguments::AngleBracketed(arguments) = &segment.arguments else { return None };
    arguments.args.iter().find_map(|argument| match argument {
        syn::GenericArgument::Type(ty) => Some(ty.clone()),
        _ => None,
    })
}

fn tokens(ty: &syn::Type) -> String {
    ty.to_token_stream().to_string()
}

/// The `use` items `code` needs of what core/src/engine.rs imports, `crate` spelled
/// `krate`, leaving out the names in `own` (the file's own imports) and, where `alloc`
/// is std's prelude, `alloc`'s.
fn use_items(code: &str, imports: &BTreeMap<String, String>, krate: &str, own: &[&str]) -> String {
    let words: BTreeSet<&str> = code.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
    let mut modules: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, path) in imports {
        // Types only: a module's name (`keys`) is also a method's (`.keys(`).
        let is_type = name.starts_with(|c: char| c.is_ascii_uppercase());
        if !is_type || !words.contains(name.as_str()) || own.contains(&name.as_str()) || (krate != "crate" && path.starts_with("alloc::")) {
            continue;
        }
        let path = path.strip_prefix("crate::").map_or_else(|| path.clone(), |rest| format!("{krate}::{rest}"));
        if let Some((module, name)) = path.rsplit_once("::") {
            modules.entry(module.to_owned()).or_default().push(name.to_owned());
        }
    }
    let mut out = String::new();
    for (module, names) in modules {
        let _ = writeln!(out, "use {module}::{{{}}};", names.join(", "));
    }
    out
}

fn signature(operation: &Operation, error: &str) -> String {
    let mut out = format!("fn {}(&mut self", operation.name);
    for param in &operation.params {
        let _ = write!(out, ", {}: {}", param.name, tokens(&param.core));
    }
    let _ = write!(out, ") -> Result<{}, {error}>", tokens(&operation.output));
    out
}

fn is_unit(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Tuple(tuple) if tuple.elems.is_empty())
}

/// The core itself: each operation is its view's method, driven to completion.
fn store_engine(operations: &[Operation], imports: &BTreeMap<String, String>) -> String {
    let mut methods = String::new();
    for operation in operations {
        let args: Vec<&str> = operation.params.iter().map(|param| param.name.as_str()).collect();
        let mut call = if operation.method.has_self {
            format!("self.{}().{}({})", operation.view.accessor, operation.name, args.join(", "))
        } else {
            format!("crate::{}::<S>::{}({})", operation.view.path, operation.name, args.join(", "))
        };
        if operation.method.is_async {
            call = format!("block_on({call})");
        }
        let body = if operation.method.fallible {
            format!("Ok({call}?)")
        } else if is_unit(&operation.output) {
            format!("{call};\nOk(())")
        } else {
            format!("Ok({call})")
        };
        let _ = writeln!(methods, "{} {{\n{body}\n}}", signature(operation, "E"));
    }
    format!(
        "{HEADER}\n//! The core itself as an [`Engine`], driving its futures to completion over a synchronous storage.\n\n\
         {}use super::{{Engine, EngineError}};\nuse crate::storage::Storage;\nuse crate::store::Store;\nuse crate::support::block_on;\n\n\
         impl<S: Storage, E: EngineError> Engine<E> for Store<S> {{\n{methods}}}\n",
        use_items(&methods, imports, "crate", &["Engine", "EngineError", "Storage", "Store", "block_on"])
    )
}

/// The Rust conformance runner's calls of the operations whose methods both APIs
/// derive (`derived`: each by its name in a vector's step, with its arguments as
/// `wrappers::derived_calls` gives them): each argument read from the step's JSON as
/// the `Engine` trait takes it, so the runner, like the JavaScript and Python ones,
/// needs no case of its own for them.
pub fn conformance_calls(
    resolve: &Resolve,
    package: wit_parser::PackageId,
    sources: &Sources,
    derived: &[crate::wrappers::DerivedCall],
) -> Result<(String, String), String> {
    let (operations, imports) = operations(resolve, package, sources)?;
    let mut arms = String::new();
    for crate::wrappers::DerivedCall { name, arguments, defaults, bytes, json } in derived {
        let operation = operations
            .iter()
            .find(|operation| operation.name == *name)
            .ok_or_else(|| format!("{ENGINE}: the `Engine` trait has no `{name}`"))?;
        let taken: Vec<String> = arguments.iter().map(|(argument, ..)| format!("\"{argument}\"")).collect();
        let mut body = format!("known(args, &[{}])?;\n", taken.join(", "));
        let mut passed = Vec::new();
        for param in &operation.params {
            let argument = if param.name == "scope" { "project" } else { param.name.as_str() };
            let (owned, borrowed) = owned_and_borrowed(&param.core, &param.name);
            // A step gives a window's ends (`since_ms`, `until_ms`) as arguments of their own.
            if crate::wrappers::is_window(resolve, *param.wit) {
                let _ = writeln!(body, "let {}: {owned} = window(args)?;", param.name);
                passed.push(borrowed);
                continue;
            }
            let how = arguments
                .iter()
                .find(|(given, ..)| given == argument)
                .map(|(_, how, _)| *how)
                .ok_or_else(|| format!("`{name}`'s parameter `{}` is not among its derived arguments", param.name))?;
            let read = match how {
                _ if crate::codegen::is_json(resolve, *param.wit) => format!("json_text(args, \"{argument}\")?"),
                "project" => "scope(args)".to_owned(),
                "overlay" => format!("overlaid(args, \"{argument}\")?"),
                "default" => {
                    let value = defaults.iter().find(|(given, _)| given == argument).map_or("null", |(_, value)| value.as_str());
                    format!("parse_or(args, \"{argument}\", serde_json::json!({value}))?")
                }
                _ if is_data(resolve, param.wit) => {
                    let _ = writeln!(body, "let {}: String = parse(args, \"{argument}\")?;", param.name);
                    passed.push(format!("{}.as_bytes()", param.name));
                    continue;
                }
                _ => format!("parse(args, \"{argument}\")?"),
            };
            let _ = writeln!(body, "let {}: {owned} = {read};", param.name);
            passed.push(borrowed);
        }
        let call = format!("host.{name}({})", passed.join(", "));
        let outcome = if *bytes {
            format!("text_outcome({call})")
        } else if *json {
            format!("json_outcome(\"{name}\", {call})?")
        } else {
            format!("to_outcome({call})")
        };
        let _ = writeln!(arms, "\"{name}\" => {{\n{body}{outcome}\n}}");
    }
    let code = format!(
        "{HEADER}\n//! The conformance runner's calls of the operations whose methods the JavaScript and\n\
         //! Python APIs derive from the WIT (xtask/src/wrappers.rs), by a vector step's names.\n\n\
         {}use mneme_core::{{Engine, EngineError}};\nuse serde_json::Value;\n\n\
         use crate::{{{}}};\n\n\
         /// Runs operation `op` with a step's `args`; `None` for an operation called otherwise.\n\
         pub(crate) fn call<E: EngineError, H: Engine<E>>(host: &mut H, op: &str, args: &Value) -> Option<Result<Value, String>> {{\n\
         let mut outcome = || -> Result<Option<Value>, String> {{\nOk(Some(match op {{\n{arms}_ => return Ok(None),\n}}))\n}};\noutcome().transpose()\n}}\n",
        use_items(&arms, &imports, "mneme_core", &["Engine", "EngineError"]),
        ["json_outcome", "json_text", "known", "overlaid", "parse", "parse_or", "scope", "text_outcome", "to_outcome", "window"]
            .into_iter()
            .filter(|helper| arms.contains(&format!("{helper}(")))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok((CONFORMANCE_CALLS.to_owned(), rustfmt(&code)?))
}

#[derive(Clone, Copy, PartialEq)]
enum Binding {
    /// host-native: wasmtime's bindings of the component's exports.
    Wasmtime,
    /// host-wasi: wit-bindgen's bindings of the imports a composed command calls.
    Wasi,
}

fn binding_engine(resolve: &Resolve, operations: &[Operation], imports: &BTreeMap<String, String>, binding: Binding) -> String {
    let mut modules = BTreeSet::new();
    let mut methods = String::new();
    for operation in operations {
        let mut body = String::new();
        let mut args = Vec::new();
        for param in &operation.params {
            let core = tokens(&param.core);
            // A string under an alias's name (types.wit's `fresh-id`) is the alias's
            // `&String` in wasmtime's bindings (wit-bindgen's take `&str`).
            if binding == Binding::Wasmtime && is_alias_of_string(resolve, param.wit) {
                args.push(format!("&{}.to_owned()", param.name));
                continue;
            }
            if !names_a_type(resolve, param.wit) && core != "usize" {
                args.push(param.name.clone());
                continue;
            }
            let owned = owned(&param.core, &param.name);
            let _ = writeln!(body, "let {}: {} = {owned}.mirror();", param.name, rust_type(resolve, param.wit, &mut modules));
            args.push(match (has_list(resolve, param.wit), is_option(resolve, param.wit)) {
                (true, true) => format!("{}.as_ref()", param.name),
                (true, false) => format!("&{}", param.name),
                (false, _) => param.name.clone(),
            });
        }
        let args = args.join(", ");
        let call = match binding {
            Binding::Wasmtime => {
                let accessor = format!("e.mneme_engine_{}()", operation.view.interface);
                let (handle, call) = match operation.receiver {
                    Receiver::Method => ("h", format!("{accessor}.store().call_{}(s, h, {args})", operation.name)),
                    Receiver::Borrowed => ("h", format!("{accessor}.call_{}(s, h, {args})", operation.name)),
                    Receiver::Free => ("_", format!("{accessor}.call_{}(s, {args})", operation.name)),
                };
                let helper = if operation.fallible { "call" } else { "call_total" };
                format!("self.{helper}(|e, s, {handle}| {call})")
            }
            Binding::Wasi => {
                modules.insert(operation.view.interface);
                let call = match operation.receiver {
                    Receiver::Method => format!("self.store.{}({args})", operation.name),
                    Receiver::Borrowed => format!("{}::{}(&self.store, {args})", operation.view.interface, operation.name),
                    Receiver::Free => format!("{}::{}({args})", operation.view.interface, operation.name),
                };
                if operation.fallible {
                    format!("{call}.mirror()")
                } else if is_unit(&operation.output) {
                    format!("{call};\nOk(())")
                } else {
                    format!("Ok({call}.mirror())")
                }
            }
        };
        let _ = writeln!(methods, "{} {{\n{body}{call}\n}}", signature(operation, "Error"));
    }
    let (what, this, error) = match binding {
        Binding::Wasmtime => {
            ("The component under wasmtime as an [`Engine`]: each operation calls its export.", "ComponentEngine", "crate::Error")
        }
        Binding::Wasi => {
            ("The engine this command is composed with as an [`Engine`]: each operation calls its import.", "Composed", "mneme_core::Error")
        }
    };
    let modules: Vec<&str> = modules.into_iter().collect();
    format!(
        "{HEADER}\n//! {what}\n\n{}use mneme_core::{{Engine, Mirror}};\n\nuse super::{{{this}, {}}};\nuse {error};\n\n\
         impl Engine<Error> for {this} {{\n{methods}}}\n",
        use_items(&methods, imports, "mneme_core", &["Engine", "Mirror", "Error", this]),
        modules.join(", ")
    )
}

/// The component's exports (see [`COMPONENT_EXPORTS`]).
fn component_exports(
    resolve: &Resolve,
    package: wit_parser::PackageId,
    operations: &[Operation],
    imports: &BTreeMap<String, String>,
) -> Result<String, String> {
    let by_name: BTreeMap<&str, &Operation> = operations.iter().map(|operation| (operation.name.as_str(), operation)).collect();
    let mut modules = BTreeSet::new();
    let mut blocks = String::new();
    // What converts the exports' arguments: the core types named there are imported.
    let mut conversions = String::new();
    for view in &VIEWS {
        let id = resolve.packages[package]
            .interfaces
            .get(view.interface)
            .copied()
            .ok_or_else(|| format!("wit/ has no interface `{}`", view.interface))?;
        modules.insert(view.interface);
        let interface = &resolve.interfaces[id];
        let mut free = String::new();
        for (name, &ty) in &interface.types {
            if matches!(resolve.types[ty].kind, TypeDefKind::Resource) {
                let pascal = pascal(name);
                let _ = writeln!(free, "type {pascal} = super::{pascal};");
            }
        }
        let mut on_store = String::new();
        for function in interface.functions.values() {
            let on_a_store = match function.kind {
                FunctionKind::Freestanding => false,
                FunctionKind::Method(resource) | FunctionKind::Constructor(resource)
                    if resolve.types[resource].name.as_deref() == Some("store") =>
                {
                    true
                }
                _ => continue,
            };
            let operation = by_name.get(function.item_name().replace('-', "_").as_str()).copied();
            let text = export(resolve, function, operation, &mut modules, &mut conversions);
            if on_a_store { on_store.push_str(&text) } else { free.push_str(&text) }
        }
        let _ = writeln!(blocks, "impl {}::Guest for Component {{\n{free}}}\n", view.interface);
        if !on_store.is_empty() {
            let _ = writeln!(blocks, "impl {}::GuestStore for Store {{\n{on_store}}}\n", view.interface);
        }
    }
    let modules: Vec<&str> = modules.into_iter().collect();
    Ok(format!(
        "{HEADER}\n//! The component's exports: each operation calls the store's view of its interface.\n\n\
         use alloc::string::String;\nuse alloc::vec::Vec;\n{}use mneme_core::Mirror;\n\n\
         use super::{{Component, ImportedStorage, Store, own, run, {}}};\n\n{blocks}",
        use_items(&conversions, imports, "mneme_core", &["String", "Vec"]),
        modules.join(", ")
    ))
}

fn pascal(name: &str) -> String {
    name.split('-').map(|word| word[..1].to_uppercase() + &word[1..]).collect()
}

/// One export: `operation`'s call of its view, or a call of `own`'s function.
fn export(
    resolve: &Resolve,
    function: &Function,
    operation: Option<&Operation>,
    modules: &mut BTreeSet<&'static str>,
    conversions: &mut String,
) -> String {
    let method = matches!(function.kind, FunctionKind::Method(_));
    let params: Vec<(String, &Type)> =
        function.params.iter().skip(usize::from(method)).map(|param| (param.name.replace('-', "_"), &param.ty)).collect();
    let mut signature = format!(
        "fn {}(",
        if matches!(function.kind, FunctionKind::Constructor(_)) { "new".to_owned() } else { function.item_name().replace('-', "_") }
    );
    let mut list: Vec<String> = Vec::new();
    if method {
        list.push("&self".into());
    }
    list.extend(params.iter().map(|(name, ty)| format!("{name}: {}", rust_type(resolve, ty, modules))));
    signature.push_str(&list.join(", "));
    signature.push(')');
    if matches!(function.kind, FunctionKind::Constructor(_)) {
        signature.push_str(" -> Self");
    } else if let Some(result) = &function.result {
        let _ = write!(signature, " -> {}", rust_type(resolve, result, modules));
    }
    let Some(operation) = operation else {
        let name = if matches!(function.kind, FunctionKind::Constructor(_)) {
            "new_store".to_owned()
        } else {
            function.item_name().replace('-', "_")
        };
        let mut args: Vec<String> = Vec::new();
        if method {
            args.push("self".into());
        }
        args.extend(params.iter().map(|(name, _)| name.clone()));
        return format!("{signature} {{\nown::{name}({})\n}}\n", args.join(", "));
    };
    let mut body = String::new();
    let store = match operation.receiver {
        Receiver::Method => "self.0".to_owned(),
        Receiver::Borrowed => format!("{}.get::<Store>().0", params[0].0),
        Receiver::Free => String::new(),
    };
    let skip = usize::from(operation.receiver == Receiver::Borrowed);
    let mut args = Vec::new();
    for ((name, wit), param) in params.iter().skip(skip).zip(&operation.params) {
        args.push(core_argument(resolve, name, wit, &param.core, &mut body));
    }
    let args = args.join(", ");
    let call = if operation.method.has_self {
        format!("{store}.{}().{}({args})", operation.view.accessor, operation.name)
    } else {
        format!("mneme_core::{}::<ImportedStorage>::{}({args})", operation.view.path, operation.name)
    };
    let call = match (operation.method.is_async, operation.method.fallible, operation.fallible) {
        (true, true, _) => format!("run({call})"),
        (true, false, true) => format!("Ok(mneme_core::block_on({call}).mirror())"),
        (true, false, false) => format!("mneme_core::block_on({call}).mirror()"),
        (false, true, _) => format!("{call}.mirror()"),
        (false, false, true) => format!("Ok({call}.mirror())"),
        (false, false, false) if is_unit(&operation.output) => call,
        (false, false, false) => format!("{call}.mirror()"),
    };
    conversions.push_str(&body);
    format!("{signature} {{\n{body}{call}\n}}\n")
}

/// The core argument an export passes for its parameter `name` (an owned WIT value),
/// with what converts it first written to `body`.
fn core_argument(resolve: &Resolve, name: &str, wit: &Type, core: &syn::Type, body: &mut String) -> String {
    if is_data(resolve, wit) {
        return format!("{name}.as_bytes()");
    }
    if is_data_or_option_of_data(resolve, wit) {
        return format!("{name}.as_ref().map(|{name}| {name}.as_bytes())");
    }
    let (owned, borrowed) = owned_and_borrowed(core, name);
    if names_a_type(resolve, wit) || tokens(core) == "usize" {
        let _ = writeln!(body, "let {name}: {owned} = {name}.mirror();");
    }
    borrowed
}

/// The browser binding's operations (see [`BROWSER_OPERATIONS`]).
fn browser_operations(
    resolve: &Resolve,
    operations: &[Operation],
    imports: &BTreeMap<String, String>,
    binding: &str,
) -> Result<String, String> {
    let mut arms = String::new();
    for operation in operations {
        let wit_name = operation.function.item_name();
        let key = match operation.receiver {
            Receiver::Method => format!("{}.store.{wit_name}", operation.view.interface),
            _ => format!("{}.{wit_name}", operation.view.interface),
        };
        let nested_data =
            operation.params.iter().any(|param| !is_data_or_option_of_data(resolve, param.wit) && holds_data(resolve, param.wit))
                || operation.function.result.as_ref().is_some_and(|ty| holds_data(resolve, ty));
        if nested_data {
            if !binding.contains(&format!("\"{key}\" =>")) {
                return Err(format!(
                    "{BROWSER_BINDING}: `{key}` carries bytes inside its values, which the browser binding passes beside the JSON: \
                     its dispatch must have an arm for it"
                ));
            }
            continue;
        }
        let mut body = String::new();
        let mut args = Vec::new();
        for param in &operation.params {
            let name = &param.name;
            if is_data(resolve, param.wit) {
                let _ = writeln!(body, "let {name} = a.bytes(\"{name}\")?;");
                args.push(format!("&{name}"));
                continue;
            }
            if is_data_or_option_of_data(resolve, param.wit) {
                let _ = writeln!(body, "let {name} = a.next(\"{name}\")?;\nlet {name} = a.bytes_at({name}, \"{name}\")?;");
                args.push(format!("{name}.as_deref()"));
                continue;
            }
            let (owned, borrowed) = owned_and_borrowed(&param.core, name);
            let _ = writeln!(body, "let {name}: {owned} = a.next(\"{name}\")?;");
            args.push(borrowed);
        }
        let args = args.join(", ");
        let mut call = if operation.method.has_self {
            format!("store.{}().{}({args})", operation.view.accessor, operation.name)
        } else {
            format!("mneme_core::{}::<JsStorage>::{}({args})", operation.view.path, operation.name)
        };
        if operation.method.is_async {
            call.push_str(".await");
        }
        if operation.method.fallible {
            call.push('?');
        }
        let _ = writeln!(arms, "\"{key}\" => {{\n{body}to_json(&{call})?\n}}");
    }
    Ok(format!(
        "{HEADER}\n//! The browser binding's operations: each takes its arguments in mneme-core's JSON, in order,\n\
         //! runs the store's view of its interface and answers in JSON.\n\n{}use mneme_core::{{Error, Store}};\nuse wasm_bindgen::JsValue;\n\n\
         use super::{{Args, JsStorage, to_json}};\n\n\
         /// Runs operation `key` (its `js/wit.js` key); `None` for a key that is no operation here.\n\
         pub(crate) async fn call(store: &Store<JsStorage>, key: &str, a: &mut Args) -> Option<Result<JsValue, Error>> {{\n\
         let result = async {{\nOk(Some(match key {{\n{arms}_ => return Ok(None),\n}}))\n}};\nresult.await.transpose()\n}}\n",
        use_items(&arms, imports, "mneme_core", &["Error", "Store"])
    ))
}

fn is_data(resolve: &Resolve, ty: &Type) -> bool {
    matches!(ty, Type::Id(id) if resolve.types[*id].name.as_deref() == Some("data"))
}

fn is_data_or_option_of_data(resolve: &Resolve, ty: &Type) -> bool {
    is_data(resolve, ty)
        || matches!(ty, Type::Id(id) if matches!(&resolve.types[*id].kind, TypeDefKind::Option(inner) if is_data(resolve, inner)))
}

/// Whether a value of `ty` holds `data` anywhere.
pub fn holds_data(resolve: &Resolve, ty: &Type) -> bool {
    let Type::Id(id) = ty else { return false };
    if is_data(resolve, ty) {
        return true;
    }
    match &resolve.types[*id].kind {
        TypeDefKind::Record(record) => record.fields.iter().any(|field| holds_data(resolve, &field.ty)),
        TypeDefKind::Variant(variant) => variant.cases.iter().any(|case| case.ty.as_ref().is_some_and(|ty| holds_data(resolve, ty))),
        TypeDefKind::Type(inner) | TypeDefKind::Option(inner) | TypeDefKind::List(inner) => holds_data(resolve, inner),
        TypeDefKind::Tuple(tuple) => tuple.types.iter().any(|ty| holds_data(resolve, ty)),
        TypeDefKind::Result(result) => {
            result.ok.as_ref().is_some_and(|ty| holds_data(resolve, ty)) || result.err.as_ref().is_some_and(|ty| holds_data(resolve, ty))
        }
        _ => false,
    }
}

/// For a core parameter type, the owned type its value is made as and how the call
/// passes it (`&str` is made a `String` and passed `&name`, and so on).
fn owned_and_borrowed(core: &syn::Type, name: &str) -> (String, String) {
    match core {
        syn::Type::Reference(reference) => match &*reference.elem {
            syn::Type::Slice(slice) => (format!("Vec<{}>", tokens(&slice.elem)), format!("&{name}")),
            syn::Type::Path(path) if path.path.is_ident("str") => ("String".to_owned(), format!("&{name}")),
            elem => (tokens(elem), format!("&{name}")),
        },
        syn::Type::Path(path) if path.path.segments.last().is_some_and(|segment| segment.ident == "Option") => match option_inner(core) {
            Some(syn::Type::Reference(reference)) if matches!(&*reference.elem, syn::Type::Path(path) if path.path.is_ident("str")) => {
                ("Option<String>".to_owned(), format!("{name}.as_deref()"))
            }
            Some(syn::Type::Reference(reference)) => (format!("Option<{}>", tokens(&reference.elem)), format!("{name}.as_ref()")),
            _ => (tokens(core), name.to_owned()),
        },
        _ => (tokens(core), name.to_owned()),
    }
}

/// The owned core value of a parameter, ready to mirror (cloned, so a core type need
/// not be `Copy` however plain its WIT type is).
fn owned(core: &syn::Type, name: &str) -> String {
    match core {
        syn::Type::Reference(reference) => match &*reference.elem {
            syn::Type::Slice(_) => format!("{name}.to_vec()"),
            _ => format!("{name}.to_owned()"),
        },
        syn::Type::Path(path) if path.path.segments.last().is_some_and(|segment| segment.ident == "Option") => match option_inner(core) {
            Some(syn::Type::Reference(reference)) if matches!(*reference.elem, syn::Type::Slice(_)) => {
                format!("{name}.map(|{name}| {name}.to_vec())")
            }
            Some(syn::Type::Reference(_)) => format!("{name}.cloned()"),
            _ => name.to_owned(),
        },
        _ => name.to_owned(),
    }
}

fn option_inner(ty: &syn::Type) -> Option<syn::Type> {
    let syn::Type::Path(path) = ty else { return None };
    let syn::PathArguments::AngleBracketed(arguments) = &path.path.segments.last()?.arguments else { return None };
    arguments.args.iter().find_map(|argument| match argument {
        syn::GenericArgument::Type(ty) => Some(ty.clone()),
        _ => None,
    })
}

/// Whether `ty` is a string under an alias's name.
fn is_alias_of_string(resolve: &Resolve, ty: &Type) -> bool {
    let Type::Id(id) = ty else { return false };
    match resolve.types[*id].kind {
        TypeDefKind::Type(Type::String) => true,
        TypeDefKind::Type(inner) => is_alias_of_string(resolve, &inner),
        _ => false,
    }
}

/// Whether a value of `ty` holds a record, variant or enum the WIT names (and so
/// crosses by `Mirror`).
fn names_a_type(resolve: &Resolve, ty: &Type) -> bool {
    let Type::Id(id) = ty else { return false };
    let def = &resolve.types[*id];
    match &def.kind {
        TypeDefKind::Record(_) | TypeDefKind::Variant(_) | TypeDefKind::Enum(_) | TypeDefKind::Flags(_) => true,
        TypeDefKind::Type(inner) | TypeDefKind::List(inner) | TypeDefKind::Option(inner) => names_a_type(resolve, inner),
        TypeDefKind::Tuple(tuple) => tuple.types.iter().any(|ty| names_a_type(resolve, ty)),
        _ => false,
    }
}

/// Whether a value of `ty` holds a string or a list: the bindings borrow such a
/// parameter and take any other by value.
fn has_list(resolve: &Resolve, ty: &Type) -> bool {
    let Type::Id(id) = ty else { return matches!(ty, Type::String) };
    match &resolve.types[*id].kind {
        TypeDefKind::List(_) => true,
        TypeDefKind::Record(record) => record.fields.iter().any(|field| has_list(resolve, &field.ty)),
        TypeDefKind::Variant(variant) => variant.cases.iter().any(|case| case.ty.as_ref().is_some_and(|ty| has_list(resolve, ty))),
        TypeDefKind::Type(inner) | TypeDefKind::Option(inner) => has_list(resolve, inner),
        TypeDefKind::Tuple(tuple) => tuple.types.iter().any(|ty| has_list(resolve, ty)),
        TypeDefKind::Result(result) => {
            result.ok.as_ref().is_some_and(|ty| has_list(resolve, ty)) || result.err.as_ref().is_some_and(|ty| has_list(resolve, ty))
        }
        _ => false,
    }
}

pub fn is_option(resolve: &Resolve, ty: &Type) -> bool {
    matches!(ty, Type::Id(id) if matches!(resolve.types[*id].kind, TypeDefKind::Option(_)))
}

/// `ty` as the bindings spell it, each named type in its interface's module.
fn rust_type(resolve: &Resolve, ty: &Type, modules: &mut BTreeSet<&'static str>) -> String {
    match ty {
        Type::Bool => "bool".into(),
        Type::U8 => "u8".into(),
        Type::U16 => "u16".into(),
        Type::U32 => "u32".into(),
        Type::U64 => "u64".into(),
        Type::S8 => "i8".into(),
        Type::S16 => "i16".into(),
        Type::S32 => "i32".into(),
        Type::S64 => "i64".into(),
        Type::F32 => "f32".into(),
        Type::F64 => "f64".into(),
        Type::Char => "char".into(),
        Type::String => "String".into(),
        Type::ErrorContext => "ErrorContext".into(),
        Type::Id(id) => {
            let def = &resolve.types[*id];
            if let (Some(name), TypeOwner::Interface(owner)) = (&def.name, def.owner) {
                let interface = resolve.interfaces[owner].name.as_deref().unwrap_or_default();
                let module =
                    ["types", "storage"].into_iter().chain(VIEWS.iter().map(|view| view.interface)).find(|name| *name == interface);
                if let Some(module) = module {
                    modules.insert(module);
                }
                let pascal: String = name.split('-').map(|word| word[..1].to_uppercase() + &word[1..]).collect();
                return format!("{interface}::{pascal}");
            }
            match &def.kind {
                TypeDefKind::List(inner) => format!("Vec<{}>", rust_type(resolve, inner, modules)),
                TypeDefKind::Option(inner) => format!("Option<{}>", rust_type(resolve, inner, modules)),
                TypeDefKind::Type(inner) => rust_type(resolve, inner, modules),
                TypeDefKind::Tuple(tuple) => {
                    format!("({})", tuple.types.iter().map(|ty| rust_type(resolve, ty, modules)).collect::<Vec<_>>().join(", "))
                }
                TypeDefKind::Handle(Handle::Own(id)) => rust_type(resolve, &Type::Id(*id), modules),
                TypeDefKind::Handle(Handle::Borrow(id)) => format!("{}Borrow<'_>", rust_type(resolve, &Type::Id(*id), modules)),
                TypeDefKind::Result(result) => {
                    let mut side = |ty: &Option<Type>| ty.as_ref().map_or_else(|| "()".to_owned(), |ty| rust_type(resolve, ty, modules));
                    format!("Result<{}, {}>", side(&result.ok), side(&result.err))
                }
                other => format!("/* {} */", other.as_str()),
            }
        }
    }
}

/// `text` as `cargo fmt` leaves it, so the check of formatting and the check of what
/// is derived agree.
fn rustfmt(text: &str) -> Result<String, String> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--config-path", concat!(env!("CARGO_MANIFEST_DIR"), "/../rustfmt.toml"), "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run rustfmt: {e}"))?;
    child.stdin.take().ok_or("rustfmt has no input")?.write_all(text.as_bytes()).map_err(|e| format!("cannot write to rustfmt: {e}"))?;
    let output = child.wait_with_output().map_err(|e| format!("rustfmt: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "rustfmt refused what codegen wrote (a bug in xtask/src/engines.rs):\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("rustfmt wrote no UTF-8: {e}"))
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> syn::Type {
        syn::parse_str(text).expect("a Rust type")
    }

    #[test]
    fn a_core_parameter_is_made_owned_and_passed_as_the_view_takes_it() {
        let cases = [
            ("&str", "String", "&x"),
            ("Option<&str>", "Option<String>", "x.as_deref()"),
            ("&[Field]", "Vec<Field>", "&x"),
            ("&Settings", "Settings", "&x"),
            ("Option<&Near>", "Option<Near>", "x.as_ref()"),
            ("NewEntry", "NewEntry", "x"),
            ("usize", "usize", "x"),
        ];
        for (core, owned, passed) in cases {
            let (made, given) = owned_and_borrowed(&ty(core), "x");
            assert_eq!((made.replace(' ', ""), given.as_str()), (owned.to_owned(), passed), "{core}");
        }
        assert_eq!(owned(&ty("&Settings"), "x"), "x.to_owned()");
        assert_eq!(owned(&ty("&[Field]"), "x"), "x.to_vec()");
        assert_eq!(owned(&ty("Option<&Prices>"), "x"), "x.cloned()");
        assert_eq!(owned(&ty("Option<&[u8]>"), "x"), "x.map(|x| x.to_vec())");
        assert_eq!(owned(&ty("Window"), "x"), "x");
    }

    #[test]
    fn the_bindings_borrow_what_holds_a_string_or_a_list_and_mirror_what_the_wit_names() {
        let mut resolve = Resolve::default();
        let wit = "package t:t;\ninterface types {\n  record plain { n: u32 }\n  record texty { s: string }\n  variant data { text(string), bytes(list<u8>) }\n  resource store;\n  f: func(a: plain, b: texty, c: option<plain>, d: list<string>, e: option<data>, s: borrow<store>);\n}\n";
        let package = resolve.push_str("t.wit", wit).expect("the test's WIT");
        let interface = resolve.packages[package].interfaces["types"];
        let function = &resolve.interfaces[interface].functions["f"];
        let params: Vec<&Type> = function.params.iter().map(|param| &param.ty).collect();
        let lists: Vec<bool> = params.iter().map(|ty| has_list(&resolve, ty)).collect();
        assert_eq!(lists, [false, true, false, true, true, false]);
        let named: Vec<bool> = params.iter().map(|ty| names_a_type(&resolve, ty)).collect();
        assert_eq!(named, [true, true, true, false, true, false]);
        let mut modules = BTreeSet::new();
        let spelled: Vec<String> = params.iter().map(|ty| rust_type(&resolve, ty, &mut modules)).collect();
        assert_eq!(
            spelled,
            ["types::Plain", "types::Texty", "Option<types::Plain>", "Vec<String>", "Option<types::Data>", "types::StoreBorrow<'_>"]
        );
        assert!(is_data_or_option_of_data(&resolve, params[4]) && !is_data(&resolve, params[4]));
        assert!(takes_store(&resolve, &Function { params: function.params[5..].to_vec(), ..function.clone() }));
        assert!(!takes_store(&resolve, function));
    }

    #[test]
    fn only_the_types_the_code_names_are_imported_from_the_engine_s_imports() {
        let imports: BTreeMap<String, String> = [
            ("Settings", "crate::compaction::Settings"),
            ("Plan", "crate::compaction::Plan"),
            ("Field", "crate::index::Field"),
            ("keys", "crate::keys"),
            ("String", "alloc::string::String"),
            ("Error", "crate::error::Error"),
        ]
        .into_iter()
        .map(|(name, path)| (name.to_owned(), path.to_owned()))
        .collect();
        let code =
            "fn keys(&mut self, filter: &[Field]) -> Result<Vec<KeyEntry>, Error> { self.index().keys(filter, Settings::x) } // String";
        assert_eq!(
            use_items(code, &imports, "mneme_core", &["Error"]),
            "use mneme_core::compaction::{Settings};\nuse mneme_core::index::{Field};\n"
        );
        assert_eq!(
            use_items(code, &imports, "crate", &[]),
            "use alloc::string::{String};\nuse crate::compaction::{Settings};\nuse crate::error::{Error};\nuse crate::index::{Field};\n"
        );
    }

    /// A WIT, a trait, views and a browser binding that agree: each refusal test breaks
    /// one of them in one place.
    const WIT: &str = "package t:engine;
interface sessions {
  variant error { refused(string) }
  variant data { text(string), bytes(list<u8>) }
  record imported { data: data }
  resource store {
    constructor();
    append: func(id: string, text: string) -> result<u32, error>;
    count: func() -> u32;
    import-session: func(request: imported) -> result<u32, error>;
  }
  project-of: func(cwd: string) -> string;
}
interface compaction {}
interface gates {}
interface memory {}
interface index {}
";
    const TRAIT: &str = "use crate::sessions::Imported;
pub trait Engine<E> {
    fn append(&mut self, id: &str, text: &str) -> Result<u32, E>;
    fn count(&mut self) -> Result<u32, E>;
    fn import_session(&mut self, request: Imported) -> Result<u32, E>;
    fn project_of(&mut self, cwd: &str) -> Result<String, E>;
}
";
    const VIEW: &str = "impl<S: Storage> Sessions<'_, S> {
    pub async fn append(&self, id: &str, text: &str) -> Result<u32, Error> { todo!() }
    pub fn count(&self) -> u32 { todo!() }
    pub async fn import_session(&self, request: Imported) -> Result<u32, Error> { todo!() }
    pub fn project_of(cwd: &str) -> String { todo!() }
}
";
    const BINDING: &str = "match key { \"sessions.store.import-session\" => todo!(), _ => None }";

    /// What codegen derives from the sources above with `edit` made to one of them
    /// (`edit` must change it).
    fn derived(
        wit: (&str, &str),
        engine: (&str, &str),
        view: (&str, &str),
        binding: (&str, &str),
    ) -> Result<Vec<(String, String)>, String> {
        let edited = |text: &str, (from, to): (&str, &str)| {
            assert!(from.is_empty() || text.contains(from), "the edit's `{from}` is not in the test's sources");
            text.replacen(from, to, 1)
        };
        let mut resolve = Resolve::default();
        let package = resolve.push_str("t.wit", &edited(WIT, wit)).expect("the test's WIT");
        let sources = Sources {
            engine: edited(TRAIT, engine),
            core: vec![("sessions.rs".to_owned(), edited(VIEW, view))],
            browser_binding: edited(BINDING, binding),
        };
        outputs(&resolve, package, &sources)
    }

    fn refused(wit: (&str, &str), engine: (&str, &str), view: (&str, &str), binding: (&str, &str)) -> String {
        match derived(wit, engine, view, binding) {
            Ok(_) => panic!("derived, where it should have been refused"),
            Err(message) => message,
        }
    }

    const SAME: (&str, &str) = ("", "");

    #[test]
    fn sources_that_agree_are_derived_into_every_binding() {
        let outputs = derived(SAME, SAME, SAME, SAME).expect("the test's sources agree");
        let text = |path: &str| outputs.iter().find(|(p, _)| p == path).map(|(_, text)| text.as_str()).expect(path);
        assert!(text(STORE_ENGINE).contains("Ok(block_on(self.sessions().append(id, text))?)"), "{}", text(STORE_ENGINE));
        assert!(text(STORE_ENGINE).contains("Ok(crate::sessions::Sessions::<S>::project_of(cwd))"), "{}", text(STORE_ENGINE));
        assert!(text(COMPONENT_ENGINE).contains("self.call_total(|e, s, h| e.mneme_engine_sessions().store().call_count(s, h))"));
        assert!(text(WASI_ENGINE).contains("Ok(sessions::project_of(cwd).mirror())"), "{}", text(WASI_ENGINE));
        // The import carries bytes inside its request: the binding's own arm serves it.
        assert!(text(BROWSER_OPERATIONS).contains("\"sessions.store.append\" =>"));
        assert!(!text(BROWSER_OPERATIONS).contains("import-session"));
    }

    #[test]
    fn an_operation_the_wit_does_not_name_is_refused() {
        let message = refused(SAME, ("fn count(", "fn tally("), SAME, SAME);
        assert!(message.contains("`tally` is named as no function of wit/'s engine interfaces"), "{message}");
    }

    #[test]
    fn a_store_function_the_trait_lacks_is_refused() {
        let message = refused(SAME, ("    fn count(&mut self) -> Result<u32, E>;\n", ""), SAME, SAME);
        assert!(message.contains("the `Engine` trait has no method for count"), "{message}");
    }

    #[test]
    fn parameters_not_the_wit_s_by_name_and_order_are_refused() {
        let message = refused(SAME, ("id: &str, text: &str", "text: &str, id: &str"), SAME, SAME);
        assert!(message.contains("`append` names a parameter `text` where wit/'s `sessions.append` has `id`"), "{message}");
        let message = refused(SAME, ("id: &str, text: &str", "id: &str"), SAME, SAME);
        assert!(message.contains("`append` takes 1 parameters, and wit/'s `sessions.append` 2"), "{message}");
    }

    #[test]
    fn an_operation_no_view_serves_is_refused() {
        let message = refused(SAME, SAME, ("pub fn count(", "fn count("), SAME);
        assert!(message.contains("`count` has no method `Sessions::count`"), "{message}");
    }

    #[test]
    fn a_view_that_fails_where_the_wit_cannot_is_refused() {
        let message = refused(SAME, SAME, ("pub fn count(&self) -> u32", "pub fn count(&self) -> Result<u32, Error>"), SAME);
        assert!(message.contains("`Sessions::count` returns a `Result`, and wit/'s `sessions.count` cannot fail"), "{message}");
    }

    #[test]
    fn one_name_in_two_interfaces_is_refused() {
        let message = refused(("interface index {}", "interface index { count: func() -> u32; }"), SAME, SAME, SAME);
        assert!(message.contains("share the name `count`"), "{message}");
    }

    #[test]
    fn bytes_inside_a_value_need_the_browser_binding_s_own_arm() {
        let message = refused(SAME, SAME, SAME, ("sessions.store.import-session", "sessions.store.import"));
        assert!(message.contains("`sessions.store.import-session` carries bytes inside its values"), "{message}");
    }
}
