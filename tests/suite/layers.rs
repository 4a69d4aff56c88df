//! The house: the library's top-level modules import only downwards. Every
//! `crate::<module>` path in `src/` (comments aside) is an edge; the edges make
//! no circle, and none goes up the layers DESIGN.md names. One level down, the files of
//! one module (siblings) name each other in no circle either (`sibling_files_import_in_no_circle`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The named layers, top first; a module may use only those after it. Modules not named
/// here (new ones) are held to the no-circle rule alone.
const LAYERS: &[&[&str]] = &[
    &["commands"],
    &["session"],
    &["transcript"],
    &["agent"],
    &["approve"],
    &["ui"],
    &["event"],
    &["tools"],
    &["tool_error"],
    &["settings"],
    &["policy", "exec", "model"],
    &["sandbox"],
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Top-level module → the modules its code names as `crate::<module>`.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap();
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let uses = edges.entry(module.clone()).or_default();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (at, _) in code.match_indices("crate::") {
                let name: String = code[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                // `crate::VERSION`, `crate::Result` …: the library root, above every module.
                if !name.is_empty()
                    && name.chars().all(|c| !c.is_ascii_uppercase())
                    && name != module
                {
                    uses.insert(name);
                }
            }
        }
    }
    edges
}

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn named_layers_import_only_downwards() {
    let mut upward = Vec::new();
    for (module, uses) in edges() {
        let Some(own) = layer(&module) else { continue };
        for used in uses {
            if layer(&used).is_some_and(|other| other <= own) {
                upward.push(format!("{module} → {used}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that go sideways or up the layers: {upward:?}"
    );
}

/// The first circle in a graph of named nodes, by depth-first search: a node met again while
/// on the path closes it.
fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_owned());
            return Some(circle);
        }
        if !done.insert(node.to_owned()) {
            return None;
        }
        path.push(node.to_owned());
        for used in edges.get(node).into_iter().flatten() {
            if let Some(circle) = visit(used, edges, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

#[test]
fn top_level_modules_import_in_no_circle() {
    let edges = edges();
    let found = circle(&edges);
    assert!(
        found.is_none(),
        "import circle: {}",
        found.unwrap().join(" → ")
    );
    assert!(
        edges.contains_key("agent") && edges.contains_key("ui"),
        "{edges:?}"
    );
}

#[test]
fn circle_search_finds_a_circle_and_only_a_circle() {
    let graph = |pairs: &[(&str, &str)]| {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in pairs {
            edges
                .entry((*from).to_owned())
                .or_default()
                .insert((*to).to_owned());
        }
        edges
    };
    assert_eq!(
        circle(&graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")])),
        Some(["a", "b", "c", "a"].map(String::from).to_vec())
    );
    assert_eq!(
        circle(&graph(&[("m::a", "m::b"), ("m::b", "m::a")])),
        Some(["m::a", "m::b", "m::a"].map(String::from).to_vec())
    );
    assert_eq!(
        circle(&graph(&[("a", "b"), ("b", "c"), ("a", "c"), ("d", "a")])),
        None
    );
}

/// A module's path from `src/` (`policy/inspect/mod.rs` → `policy::inspect`); `None` for the
/// crate roots.
fn module_of(relative: &Path) -> Option<Vec<String>> {
    let mut path: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    let root = matches!(
        path.first().map(String::as_str),
        Some("lib" | "main" | "bin")
    );
    (!root && !path.is_empty()).then_some(path)
}

fn without_visibility(code: &str) -> &str {
    ["pub ", "pub(crate) ", "pub(super) "]
        .iter()
        .find_map(|vis| code.strip_prefix(vis))
        .unwrap_or(code)
}

/// One file's code lines (comments aside), each with the module it is in: an inline
/// `mod name {` (rustfmt puts its closing `}` alone at the same indent) is a child.
fn code_lines(module: &[String], text: &str) -> Vec<(Vec<String>, String)> {
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut lines = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let indent = code.len() - code.trim_start().len();
        let trimmed = code.trim();
        if trimmed == "}" && inline.last().is_some_and(|(_, at)| *at == indent) {
            inline.pop();
            continue;
        }
        let mut here = module.to_vec();
        here.extend(inline.iter().map(|(name, _)| name.clone()));
        let declared = without_visibility(trimmed)
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(" {"));
        if let Some(name) = declared {
            inline.push((name.to_owned(), indent));
        }
        lines.push((here, code.to_owned()));
    }
    lines
}

/// The paths a `use` tree names, braces expanded (`super::{a, b::{C, d}}` → `super::a`,
/// `super::b::C`, `super::b::d`).
fn use_paths(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let close = tree.rfind('}').unwrap_or(tree.len());
    let prefix = &tree[..open];
    let inner = &tree[open + 1..close];
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0, 0);
    for (at, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[from..at]);
                from = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[from..]);
    parts
        .into_iter()
        .filter(|part| !part.is_empty())
        .flat_map(|part| use_paths(&format!("{prefix}{part}")))
        .collect()
}

/// The module a path names from inside `here`: `crate::`, `super::` and `self::` paths,
/// followed as far as they name modules that exist.
fn resolve(here: &[String], path: &str, modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut segments = path
        .split("::")
        .map(|s| s.split(" as ").next().unwrap_or(s))
        .peekable();
    let mut base = match segments.next()? {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => here[..here.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    while segments.next_if_eq(&"super").is_some() {
        base.pop()?;
    }
    for segment in segments {
        let mut next = base.clone();
        next.push(segment.to_owned());
        if !modules.contains(&next) {
            break;
        }
        base = next;
    }
    Some(base)
}

/// Sibling edges among the files (and inline modules) of one module: `from` names `to`, both
/// children of one parent. A parent naming its children, or a child its parent's items, is
/// no edge.
fn sibling_edges(files: &[(Vec<String>, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let mut lines = Vec::new();
    for (module, text) in files {
        lines.extend(code_lines(module, text));
    }
    let modules: BTreeSet<Vec<String>> = lines.iter().map(|(here, _)| here.clone()).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut statement = String::new();
    for (here, code) in &lines {
        let mut paths = Vec::new();
        // A `use` statement, perhaps over several lines, with its braces expanded.
        let trimmed = without_visibility(code.trim());
        let opens = trimmed.strip_prefix("use ").filter(|tree| {
            ["crate::", "super::", "self::"]
                .iter()
                .any(|start| tree.starts_with(start))
        });
        if !statement.is_empty() || opens.is_some() {
            statement.push_str(opens.unwrap_or(trimmed));
            if let Some(end) = statement.find(';') {
                paths.extend(use_paths(&statement[..end]));
                statement.clear();
            }
        }
        // Paths in the code itself (`super::x::f()`, `crate::m::x::T`).
        for start in ["crate::", "super::", "self::"] {
            for (at, _) in code.match_indices(start) {
                let before = code[..at].chars().next_back();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let path: String = code[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                paths.push(path);
            }
        }
        for path in paths {
            let Some(target) = resolve(here, &path, &modules) else {
                continue;
            };
            let common = here.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common < here.len() && common < target.len() {
                edges
                    .entry(here[..=common].join("::"))
                    .or_default()
                    .insert(target[..=common].join("::"));
            }
        }
    }
    edges
}

#[test]
fn sibling_files_import_in_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let files: Vec<(Vec<String>, String)> = paths
        .iter()
        .filter_map(|file| {
            let module = module_of(file.strip_prefix(&src).unwrap())?;
            Some((module, std::fs::read_to_string(file).unwrap()))
        })
        .collect();
    let edges = sibling_edges(&files);
    assert!(edges.contains_key("policy::tests"), "{edges:?}");
    let mut edges = edges;
    let mut circles = Vec::new();
    // Each circle found loses one edge, so the next search can find the next circle.
    while let Some(found) = circle(&edges) {
        edges.get_mut(&found[0]).unwrap().remove(&found[1]);
        circles.push(found.join(" → "));
    }
    assert!(
        circles.is_empty(),
        "files that import each other: {circles:#?}"
    );
}

#[test]
fn sibling_edges_are_read_from_use_trees_paths_and_inline_modules() {
    let file = |path: &str, text: &str| {
        let module = path.split("::").map(String::from).collect();
        (module, text.to_owned())
    };
    let files = [
        file("m", "mod a;\nmod b;\nmod c;\nmod d;\nuse self::a::X;\n"),
        file(
            "m::a",
            "use super::{Y, b::{B, self}};\nuse crate::m::c::C;\n",
        ),
        file("m::b", "fn f() {\n    super::super::m::a::g();\n}\n"),
        file(
            "m::c",
            "use super::Z; // super::d\nmod inner {\n    use super::super::d;\n}\n",
        ),
        file("m::d", "#[cfg(test)]\nmod tests {\n    use super::*;\n}\n"),
    ];
    let edges = sibling_edges(&files);
    let names = |list: &[&str]| {
        list.iter()
            .map(|s| (*s).to_owned())
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(
        edges.get("m::a"),
        Some(&names(&["m::b", "m::c"])),
        "{edges:?}"
    );
    assert_eq!(edges.get("m::b"), Some(&names(&["m::a"])), "{edges:?}");
    assert_eq!(edges.get("m::c"), Some(&names(&["m::d"])), "{edges:?}");
    assert_eq!(edges.get("m"), None, "{edges:?}");
    assert_eq!(edges.get("m::d"), None, "{edges:?}");
    let found = circle(&edges).map(|c| c.join(" → "));
    assert_eq!(found.as_deref(), Some("m::a → m::b → m::a"));
}
