//! The Rust implementations of the core's `Engine` trait, derived by `cargo xtask
//! codegen` rather than written: the core itself over a synchronous storage, the
//! component under wasmtime, and the component a `wasmtime run` command is composed
//! with. Each is one call per operation and differs only in how a value crosses:
//!
//! - the trait (core/src/engine.rs) gives each operation's Rust signature;
//! - the WIT gives where it lives (a method of `store`, a function taking the store,
//!   or a function of no store), whether it can fail, and its parameters' WIT types;
//! - the store's view of the operation's interface (`store.sessions()`, …) gives
//!   whether the core's method is `async` and whether it returns a `Result`.
//!
//! A value the WIT names (a record, variant or enum) crosses by [`Mirror`]; a string,
//! a list of strings, a number or a flag crosses as it is.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use quote::ToTokens;
use wit_parser::{Function, FunctionKind, Handle, Resolve, Type, TypeDefKind, TypeOwner};

/// The core's `Engine` trait, the one hand-written Rust declaration of the operations.
const ENGINE: &str = "core/src/engine.rs";
const CORE_SOURCE: &str = "core/src";
/// What this module writes: the core's, the wasmtime host's and the WASI command's
/// implementation of the trait.
const STORE_ENGINE: &str = "core/src/engine/store.rs";
const COMPONENT_ENGINE: &str = "host-native/src/component/engine.rs";
const WASI_ENGINE: &str = "host-wasi/cli/src/engine.rs";
/// The interfaces whose functions are operations, each with the view of the store
/// that serves it: `store.<accessor>()` of type `<view>`.
const VIEWS: [(&str, &str, &str); 5] = [
    ("sessions", "sessions", "Sessions"),
    ("compaction", "compaction", "Compaction"),
    ("gates", "gates", "Gates"),
    ("memory", "memory", "Memories"),
    ("index", "index", "Index"),
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
    interface: &'static str,
    accessor: &'static str,
    receiver: Receiver,
    /// The WIT function returns a `result`.
    fallible: bool,
    params: Vec<Param<'a>>,
    output: syn::Type,
    view: ViewMethod,
}

/// A public method of one of the store's views.
#[derive(Clone, Copy)]
struct ViewMethod {
    is_async: bool,
    /// It returns a `Result`.
    fallible: bool,
}

/// A function of one of the engine's interfaces, and the view that serves it.
#[derive(Clone, Copy)]
struct WitFunction<'a> {
    interface: &'static str,
    accessor: &'static str,
    view: &'static str,
    function: &'a Function,
}

struct Param<'a> {
    name: String,
    core: syn::Type,
    wit: &'a Type,
}

/// The three implementations, as (path, text) pairs.
pub fn outputs(resolve: &Resolve, package: wit_parser::PackageId) -> Result<Vec<(String, String)>, String> {
    let source = read(ENGINE)?;
    let file = syn::parse_file(&source).map_err(|e| format!("{ENGINE}: {e}"))?;
    let imports = imports(&file);
    let trait_methods = engine_methods(&file).ok_or_else(|| format!("{ENGINE}: no `pub trait Engine`"))?;
    let views = view_methods(Path::new(CORE_SOURCE))?;
    let functions = wit_functions(resolve, package);
    let mut operations = Vec::new();
    for method in &trait_methods {
        let name = method.sig.ident.to_string();
        let wit = functions
            .get(&name)
            .copied()
            .ok_or_else(|| format!("{ENGINE}: `{name}` is named as no function of wit/'s engine interfaces (one name per operation)"))?;
        let view = views.get(&(wit.view.to_owned(), name.clone())).copied().ok_or_else(|| {
            format!("`{name}` has no method `{}::{name}` in {CORE_SOURCE}: each operation is a method of its interface's view", wit.view)
        })?;
        operations.push(operation(resolve, method, name, wit, view)?);
    }
    let named: BTreeSet<&str> = operations.iter().map(|op| op.name.as_str()).collect();
    let missing: Vec<&str> = functions
        .iter()
        .filter(|(name, wit)| takes_store(wit.function) && !named.contains(name.as_str()))
        .map(|(name, _)| name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!("{ENGINE}: the `Engine` trait has no method for {}, which wit/ declares on the store", missing.join(", ")));
    }
    Ok(vec![
        (STORE_ENGINE.to_owned(), rustfmt(&store_engine(&operations, &imports))?),
        (COMPONENT_ENGINE.to_owned(), rustfmt(&binding_engine(resolve, &operations, &imports, Binding::Wasmtime))?),
        (WASI_ENGINE.to_owned(), rustfmt(&binding_engine(resolve, &operations, &imports, Binding::Wasi))?),
    ])
}

fn operation<'a>(
    resolve: &Resolve,
    method: &syn::TraitItemFn,
    name: String,
    wit: WitFunction<'a>,
    view: ViewMethod,
) -> Result<Operation<'a>, String> {
    let WitFunction { interface, accessor, function, .. } = wit;
    let receiver = match function.kind {
        FunctionKind::Method(_) => Receiver::Method,
        _ if takes_store(function) => Receiver::Borrowed,
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
    let params = core_params.into_iter().zip(wit_params).map(|((name, core), wit)| Param { name, core, wit: &wit.ty }).collect();
    let output = result_ok_type(&method.sig.output).ok_or_else(|| format!("{ENGINE}: `{name}` does not return `Result<_, E>`"))?;
    let fallible = function.result.is_some_and(|ty| matches!(ty, Type::Id(id) if matches!(resolve.types[id].kind, TypeDefKind::Result(_))));
    Ok(Operation { name, interface, accessor, receiver, fallible, params, output, view })
}

/// The functions of the engine's interfaces by their Rust name, with the interface,
/// the view's accessor and type. Resource constructors and the methods of resources
/// other than `store` are not operations.
fn wit_functions(resolve: &Resolve, package: wit_parser::PackageId) -> BTreeMap<String, WitFunction<'_>> {
    let mut out = BTreeMap::new();
    for (interface_name, &id) in &resolve.packages[package].interfaces {
        let Some(&(interface, accessor, view)) = VIEWS.iter().find(|(name, _, _)| name == interface_name) else { continue };
        for function in resolve.interfaces[id].functions.values() {
            let operation = match function.kind {
                FunctionKind::Freestanding => true,
                FunctionKind::Method(resource) => resolve.types[resource].name.as_deref() == Some("store"),
                _ => false,
            };
            if operation {
                out.insert(function.item_name().replace('-', "_"), WitFunction { interface, accessor, view, function });
            }
        }
    }
    out
}

fn takes_store(function: &Function) -> bool {
    matches!(function.kind, FunctionKind::Method(_))
        || function.params.first().is_some_and(|param| matches!(param.ty, Type::Id(_)) && param.name == "store")
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

/// Every public method of the store's views, by (view, name): whether it is `async`
/// and whether it returns a `Result`.
fn view_methods(dir: &Path) -> Result<BTreeMap<(String, String), ViewMethod>, String> {
    let mut out = BTreeMap::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?.flatten().collect();
    entries.sort_by_key(|entry| entry.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            out.extend(view_methods(&path)?);
            continue;
        }
        if path.extension().is_none_or(|extension| extension != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let file = syn::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        for item in &file.items {
            let syn::Item::Impl(block) = item else { continue };
            let syn::Type::Path(self_type) = &*block.self_ty else { continue };
            let Some(view) = self_type.path.segments.last().map(|segment| segment.ident.to_string()) else { continue };
            if block.trait_.is_some() || !VIEWS.iter().any(|(_, _, name)| *name == view) {
                continue;
            }
            for item in &block.items {
                let syn::ImplItem::Fn(method) = item else { continue };
                if matches!(method.vis, syn::Visibility::Public(_)) {
                    let fallible =
                        matches!(&method.sig.output, syn::ReturnType::Type(_, ty) if last_ident(ty).as_deref() == Some("Result"));
                    out.insert(
                        (view.clone(), method.sig.ident.to_string()),
                        ViewMethod { is_async: method.sig.asyncness.is_some(), fallible },
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

/// The `use` items the signatures need, with `crate` spelled `krate`.
fn signature_imports(operations: &[Operation], imports: &BTreeMap<String, String>, krate: &str) -> String {
    fn idents(stream: proc_macro2::TokenStream, out: &mut BTreeSet<String>) {
        for token in stream {
            match token {
                proc_macro2::TokenTree::Ident(ident) => {
                    out.insert(ident.to_string());
                }
                proc_macro2::TokenTree::Group(group) => idents(group.stream(), out),
                _ => {}
            }
        }
    }
    let mut used = BTreeSet::new();
    for operation in operations {
        idents(operation.output.to_token_stream(), &mut used);
        for param in &operation.params {
            idents(param.core.to_token_stream(), &mut used);
        }
    }
    // By module, as `use module::{A, B};`. Outside the core, `alloc`'s names are std's prelude.
    let mut modules: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in used.iter().filter_map(|ident| imports.get(ident)) {
        if krate != "crate" && path.starts_with("alloc::") {
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
    let mut out = format!(
        "{HEADER}\n//! The core itself as an [`Engine`], driving its futures to completion over a synchronous storage.\n\n\
         {}use super::{{Engine, EngineError}};\nuse crate::storage::Storage;\nuse crate::store::Store;\nuse crate::support::block_on;\n\n\
         impl<S: Storage, E: EngineError> Engine<E> for Store<S> {{\n",
        signature_imports(operations, imports, "crate")
    );
    for operation in operations {
        let args: Vec<&str> = operation.params.iter().map(|param| param.name.as_str()).collect();
        let mut call = format!("self.{}().{}({})", operation.accessor, operation.name, args.join(", "));
        if operation.view.is_async {
            call = format!("block_on({call})");
        }
        let body = if operation.view.fallible {
            format!("Ok({call}?)")
        } else if is_unit(&operation.output) {
            format!("{call};\nOk(())")
        } else {
            format!("Ok({call})")
        };
        let _ = writeln!(out, "{} {{\n{body}\n}}", signature(operation, "E"));
    }
    out.push_str("}\n");
    out
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
            if !names_a_type(resolve, param.wit) && core != "usize" {
                args.push(param.name.clone());
                continue;
            }
            let owned = owned(&param.core, &param.name, has_list(resolve, param.wit));
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
                let accessor = format!("e.mneme_engine_{}()", operation.interface);
                let (handle, call) = match operation.receiver {
                    Receiver::Method => ("h", format!("{accessor}.store().call_{}(s, h, {args})", operation.name)),
                    Receiver::Borrowed => ("h", format!("{accessor}.call_{}(s, h, {args})", operation.name)),
                    Receiver::Free => ("_", format!("{accessor}.call_{}(s, {args})", operation.name)),
                };
                let helper = if operation.fallible { "call" } else { "call_total" };
                format!("self.{helper}(|e, s, {handle}| {call})")
            }
            Binding::Wasi => {
                modules.insert(operation.interface);
                let call = match operation.receiver {
                    Receiver::Method => format!("self.store.{}({args})", operation.name),
                    Receiver::Borrowed => format!("{}::{}(&self.store, {args})", operation.interface, operation.name),
                    Receiver::Free => format!("{}::{}({args})", operation.interface, operation.name),
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
        signature_imports(operations, imports, "mneme_core"),
        modules.join(", ")
    )
}

/// The owned core value of a parameter, ready to mirror.
fn owned(core: &syn::Type, name: &str, has_list: bool) -> String {
    match core {
        syn::Type::Reference(reference) => match &*reference.elem {
            syn::Type::Slice(_) => format!("{name}.to_vec()"),
            _ if has_list => format!("{name}.clone()"),
            _ => format!("(*{name})"),
        },
        syn::Type::Path(path) if path.path.segments.last().is_some_and(|segment| segment.ident == "Option") => match option_inner(core) {
            Some(syn::Type::Reference(reference)) if matches!(*reference.elem, syn::Type::Slice(_)) => {
                format!("{name}.map(|{name}| {name}.to_vec())")
            }
            Some(syn::Type::Reference(_)) => format!("{name}.{}()", if has_list { "cloned" } else { "copied" }),
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

fn is_option(resolve: &Resolve, ty: &Type) -> bool {
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
                let module = ["types", "storage"].into_iter().chain(VIEWS.iter().map(|(name, _, _)| *name)).find(|name| *name == interface);
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
                TypeDefKind::Handle(Handle::Own(id) | Handle::Borrow(id)) => rust_type(resolve, &Type::Id(*id), modules),
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
        .args(["--edition", "2024", "--config-path", "rustfmt.toml", "--emit", "stdout"])
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
