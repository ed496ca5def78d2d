//! The modules of each library crate import one another without a circle:
//! each module's place in its crate can be read from what it imports.
//!
//! A module's imports are the first path segments after `crate::` in its
//! file and the files below it (`crate::grpc::client`, `use crate::{bus,
//! store::Database}`), comments and tests left out; `lib.rs`, which
//! declares them all, is left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module of the crate at `src` and the modules it imports.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let entries = std::fs::read_dir(src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    for entry in entries {
        let path = entry.expect("an entry").path();
        let name = path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        if matches!(name.as_str(), "lib" | "main") {
            continue;
        }
        let mut text = String::new();
        collect(&path, &mut text);
        let used = graph.entry(name.clone()).or_default();
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                for item in group.split(',') {
                    let first = item.trim().split("::").next().unwrap_or_default();
                    used.insert(first.to_owned());
                }
            } else {
                let first: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                used.insert(first);
            }
        }
        used.remove(&name);
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for used in graph.values_mut() {
        used.retain(|m| modules.contains(m));
    }
    graph
}

/// The text of a module: its file, or every file below its folder.
fn collect(path: &Path, out: &mut String) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("a folder") {
            collect(&entry.expect("an entry").path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("tests.rs") {
        // The module's own code: a doc link to another module is not an
        // import, nor is what its tests use.
        let text = std::fs::read_to_string(path).expect("a source file");
        let code = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        for line in code.lines() {
            if !line.trim_start().starts_with("//") {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
}

/// A circle of imports in `graph`, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        at: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| m == at) {
            let mut found = path[start..].to_vec();
            found.push(at.to_owned());
            return Some(found);
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.to_owned());
        for next in graph.get(at).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(at.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_library_crate_has_a_circle_of_module_imports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut crates = Vec::new();
    for parent in ["crates", "services"] {
        for entry in std::fs::read_dir(root.join(parent)).expect("a folder") {
            let src = entry.expect("an entry").path().join("src");
            if src.join("lib.rs").exists() {
                crates.push(src);
            }
        }
    }
    assert!(crates.len() >= 8, "{crates:?}");
    for src in crates {
        if let Some(found) = circle(&imports(&src)) {
            panic!("{}: {}", src.display(), found.join(" → "));
        }
    }
}

#[test]
fn a_circle_is_found_and_a_chain_is_not() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            g.entry((*from).to_owned())
                .or_default()
                .insert((*to).to_owned());
            g.entry((*to).to_owned()).or_default();
        }
        g
    };
    assert_eq!(circle(&graph(&[("a", "b"), ("b", "c")])), None);
    assert_eq!(
        circle(&graph(&[("a", "b"), ("b", "c"), ("c", "b")])),
        Some(vec!["b".to_owned(), "c".to_owned(), "b".to_owned()])
    );
}
