//! The house: the library's top-level modules import only downwards. Every
//! `crate::<module>` path in `src/` (comments aside) is an edge; the edges make
//! no circle, and none goes up the layers DESIGN.md names.

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

#[test]
fn top_level_modules_import_in_no_circle() {
    let edges = edges();
    // Depth-first search; a module met again while on the path closes a circle.
    fn visit(
        module: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut circle = path[at..].to_vec();
            circle.push(module.to_owned());
            return Some(circle);
        }
        if !done.insert(module.to_owned()) {
            return None;
        }
        path.push(module.to_owned());
        for used in edges.get(module).into_iter().flatten() {
            if let Some(circle) = visit(used, edges, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for module in edges.keys() {
        let circle = visit(module, &edges, &mut Vec::new(), &mut done);
        assert!(
            circle.is_none(),
            "import circle: {}",
            circle.unwrap().join(" → ")
        );
    }
    assert!(
        edges.contains_key("agent") && edges.contains_key("ui"),
        "{edges:?}"
    );
}
