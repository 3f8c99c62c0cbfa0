//! `cargo xtask deps`: the core's top-level modules and the `crate::` paths between
//! them, and every cycle they form (a strongly connected component of more than one
//! module), each edge with the files and items that make it. A module that imports one
//! that imports it back cannot be read, tested or moved alone (issue "One source for
//! the surface", item 3). Comments and `#[cfg(test)]` items are not imports. A macro's
//! `$crate::` paths are left out on purpose: `support/mirror.rs` names every area's
//! types for the bindings that expand it, a table for them, not a dependency of the core.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const CORE: &str = "core/src";

/// Each module's imports: the module it names, and for each the `file: item` that does.
type Edges = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

pub fn deps() -> Result<(), String> {
    let edges = edges()?;
    let cycles = cycles(&edges);
    for cycle in &cycles {
        println!("cycle: {}", cycle.iter().cloned().collect::<Vec<_>>().join(", "));
        for from in cycle {
            for (to, why) in edges.get(from).into_iter().flatten().filter(|(to, _)| cycle.contains(*to)) {
                let why: Vec<&str> = why.iter().map(String::as_str).collect();
                println!("  {from} -> {to}: {}", why.join("; "));
            }
        }
    }
    if cycles.is_empty() {
        eprintln!("xtask: no module of the core imports one that imports it back");
        Ok(())
    } else {
        Err(format!("{} import cycle(s) among the core's modules, listed above", cycles.len()))
    }
}

fn edges() -> Result<Edges, String> {
    let lib = std::fs::read_to_string(format!("{CORE}/lib.rs")).map_err(|e| format!("cannot read {CORE}/lib.rs: {e}"))?;
    let lib = without_comments(&lib);
    let modules = modules(&lib);
    let exported = exported(&lib);
    let mut files = Vec::new();
    collect(Path::new(CORE), &mut files)?;
    let mut edges = Edges::new();
    for file in files {
        let relative = file.strip_prefix(CORE).map_err(|e| e.to_string())?.to_string_lossy().into_owned();
        let module = relative.split('/').next().unwrap_or_default().trim_end_matches(".rs").to_owned();
        if module == "lib" {
            continue;
        }
        let source = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let code = without_tests(&without_comments(&source));
        for (at, _) in code.match_indices("crate::") {
            if code[..at].ends_with('$') || code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let path = &code[at + "crate::".len()..];
            let end = path.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(path.len());
            let mut parts = path[..end].split("::");
            let first = parts.next().unwrap_or_default();
            // `crate::Error` is lib.rs's re-export: the module it re-exports is imported.
            let (target, item) = match exported.get(first) {
                Some(target) => (target.as_str(), first),
                None if path.starts_with('{') => {
                    return Err(format!("{relative}: name what `use crate::{{…}}` imports by its module's path"));
                }
                None => (first, parts.next().filter(|item| !item.is_empty()).unwrap_or("{…}")),
            };
            // lib.rs's own items (`crate::VERSION`, a macro) are in no module.
            if !modules.contains(target) {
                continue;
            }
            if target.is_empty() || target == module {
                continue;
            }
            edges.entry(module.clone()).or_default().entry(target.to_owned()).or_default().insert(format!("{relative}: {item}"));
        }
    }
    Ok(edges)
}

/// The modules lib.rs declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`).
fn modules(lib: &str) -> BTreeSet<String> {
    lib.split(';')
        .filter_map(|statement| {
            let words: Vec<&str> = statement.split_whitespace().filter(|word| !word.starts_with("#[")).collect();
            let at = words.iter().position(|word| *word == "mod")?;
            words.get(at + 1).map(|name| (*name).to_owned())
        })
        .collect()
}

/// lib.rs's re-exports (`pub use store::Store;`): each name, the module it is
/// from. A nested list (`a::{b::C}`) is named by its first module, as the check needs.
fn exported(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in lib.split(';') {
        // `pub use`, `pub(crate) use`, after any attributes.
        let statement = statement.trim();
        let Some(at) = statement.find(" use ").filter(|&at| statement[..at].trim_end().ends_with("pub") || statement[..at].ends_with(')'))
        else {
            continue;
        };
        let path = &statement[at + " use ".len()..];
        let module = path.split("::").next().unwrap_or_default().trim().to_owned();
        let listed = match (path.find('{'), path.rfind('}')) {
            (Some(open), Some(close)) => &path[open + 1..close],
            _ => path.rsplit("::").next().unwrap_or_default(),
        };
        for name in listed.split(',') {
            let name = name.split(" as ").last().unwrap_or_default().trim();
            let name = name.rsplit("::").next().unwrap_or_default().trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace());
            if !name.is_empty() {
                names.insert(name.to_owned(), module.clone());
            }
        }
    }
    names
}

fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files.sort();
    Ok(())
}

/// `source` without its `//` comments (doc comments name modules they do not import).
fn without_comments(source: &str) -> String {
    source
        .lines()
        .map(|line| {
            // A `//` inside a string (a URL) cuts the rest of that line only: no import is there.
            line.find("//").map_or(line, |at| &line[..at])
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `code` without each item `#[cfg(test)]` marks: up to its `;` (`mod tests;`, a
/// `use`), or its block's matching brace. Braces in string and character literals are
/// not counted.
fn without_tests(code: &str) -> String {
    let mut kept = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let mut depth = 0usize;
        let mut end = after.len();
        let mut chars = after.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    while let Some((_, c)) = chars.next() {
                        match c {
                            '\\' => {
                                chars.next();
                            }
                            '"' => break,
                            _ => {}
                        }
                    }
                }
                // A character literal ('{', '\'', '\u{7b}'), not a lifetime ('a).
                '\'' => {
                    let literal = if after[i + 1..].starts_with('\\') {
                        after[i + 3..].find('\'').map(|at| i + 3 + at)
                    } else {
                        after[i + 1..].chars().next().map(|c| i + 1 + c.len_utf8()).filter(|&at| after[at..].starts_with('\''))
                    };
                    if let Some(close) = literal {
                        while chars.next_if(|&(j, _)| j <= close).is_some() {}
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    kept.push_str(rest);
    kept
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(edges: &Edges) -> Vec<BTreeSet<String>> {
    struct Walk<'a> {
        edges: &'a Edges,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<BTreeSet<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, module: &'a str) {
            let at = self.index.len();
            self.index.insert(module, at);
            self.low.insert(module, at);
            self.stack.push(module);
            self.on_stack.insert(module);
            for target in self.edges.get(module).into_iter().flat_map(BTreeMap::keys) {
                let target = target.as_str();
                if !self.index.contains_key(target) {
                    self.visit(target);
                    let low = self.low[module].min(self.low[target]);
                    self.low.insert(module, low);
                } else if self.on_stack.contains(target) {
                    let low = self.low[module].min(self.index[target]);
                    self.low.insert(module, low);
                }
            }
            if self.low[module] == self.index[module] {
                let mut component = BTreeSet::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack.remove(member);
                    component.insert(member.to_owned());
                    if member == module {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk =
        Walk { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), on_stack: BTreeSet::new(), found: Vec::new() };
    for module in edges.keys() {
        if !walk.index.contains_key(module.as_str()) {
            walk.visit(module);
        }
    }
    walk.found.sort();
    walk.found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_items_are_left_out_to_their_end_and_nothing_after() {
        let code = "use crate::a::A;\n#[cfg(test)]\nmod tests;\nuse crate::b::B;\n#[cfg(test)]\nmod more {\n    const OPEN: char = '{';\n    const TEXT: &str = \"}}\";\n    fn f<'a>(x: &'a str) -> &'a str { x }\n    use crate::c::C;\n}\nuse crate::d::D;\n";
        let kept = without_tests(code);
        for (name, expected) in [("crate::a", true), ("crate::b", true), ("crate::c", false), ("crate::d", true)] {
            assert_eq!(kept.contains(name), expected, "{name} in {kept:?}");
        }
    }

    #[test]
    fn lib_rs_names_its_modules_and_what_it_re_exports() {
        let lib = "pub mod a;\n#[doc(hidden)]\npub(crate) mod b;\nmod c;\npub use a::{X, Y as Z};\npub(crate) use b::inner::W;\n#[doc(hidden)]\npub use c::{d::{V}};\n";
        assert_eq!(modules(lib).into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        let exported = exported(lib);
        assert_eq!(exported.get("Z").map(String::as_str), Some("a"));
        assert_eq!(exported.get("X").map(String::as_str), Some("a"));
        assert_eq!(exported.get("W").map(String::as_str), Some("b"));
        assert_eq!(exported.get("V").map(String::as_str), Some("c"));
    }
}
