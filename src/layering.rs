//! The layering rule of ARCHITECTURE.md as a test: the order is read from its line
//! "Layers, lowest first: …", then every file of `src/` is read and each import of
//! another layer (`crate::LAYER`) must name one before its own; only `tui` imports
//! ratatui or crossterm; and no import circle joins files of sibling sub-modules (folders
//! neither of which holds the other, such as `tui/state` and `tui/view`: the state never
//! calls a view). A module's files, and a module and those nested in it, may use each other.
//! Comments and test modules are not code the library runs, so they are left out.

use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The layers, lowest first, as ARCHITECTURE.md states them.
fn stated_order(architecture: &str) -> Vec<String> {
    let line = (architecture.lines())
        .find(|l| l.starts_with("Layers, lowest first:"))
        .expect("ARCHITECTURE.md states the order on a line \"Layers, lowest first: …\"");
    line.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// A file's code: without comments, and cut where its test module begins.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            // The test module is the last item of a file, by this project's habit.
            break;
        }
        let line = line.split_once(" //").map_or(line, |(c, _)| c);
        if !line.trim_start().starts_with("//") {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}

/// The evidence index's module: named by `open` alone (every other layer opens evidence
/// through `open`'s functions).
const CACHE: [&str; 2] = ["open", "cache"];

/// Every import against `order` among `files` (the layer a file is in, its path, its
/// code), every use of the terminal crates outside `tui`, and every mention of the
/// evidence index outside `open`: one line each.
fn violations(order: &[String], files: &[(String, String, String)]) -> Vec<String> {
    let rank = |layer: &str| order.iter().position(|l| l == layer);
    let mut out = Vec::new();
    for (layer, path, code) in files {
        let Some(own) = rank(layer) else {
            out.push(format!(
                "{path}: in `{layer}`, which ARCHITECTURE.md does not order"
            ));
            continue;
        };
        let named_paths = named_paths(&module_of(path), code);
        if layer != "open"
            && named_paths
                .iter()
                .any(|p| p.starts_with(&CACHE.map(String::from)))
        {
            out.push(format!(
                "{path}: `{layer}` names the evidence index, which only `open` knows"
            ));
        }
        let heads = named_paths.into_iter();
        for named in heads.filter_map(|p| p.into_iter().next()) {
            if rank(&named).is_some_and(|r| r > own) {
                out.push(format!(
                    "{path}: `{layer}` imports `{named}`, a later layer"
                ));
            }
        }
        if layer != "tui" && (code.contains("ratatui") || code.contains("crossterm")) {
            out.push(format!("{path}: `{layer}` uses ratatui or crossterm"));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The files of `src/` that belong to a layer (every module folder and its `.rs` twin;
/// `lib.rs`, `main.rs` and this test are not a layer), with their code.
fn layered_files(src: &Path) -> Vec<(String, String, String)> {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    let mut files = Vec::new();
    for path in paths {
        let relative = path.strip_prefix(src).unwrap_or(&path);
        let mut parts = relative.iter().map(|p| p.to_string_lossy().into_owned());
        let first = parts.next().unwrap_or_default();
        let is_folder = relative.components().count() > 1;
        let layer = first.trim_end_matches(".rs").to_string();
        if !is_folder && ["lib", "main", "layering"].contains(&layer.as_str()) {
            continue;
        }
        // A test-only file (`tests.rs`) is not code the library runs.
        if relative.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        files.push((layer, relative.display().to_string(), code_of(&text)));
    }
    files
}

/// A file's module path: `tui/state/axis.rs` is `tui::state::axis`, `tui/state/mod.rs`
/// is `tui::state`.
fn module_of(relative: &str) -> Vec<String> {
    let mut parts: Vec<String> = relative.split('/').map(str::to_string).collect();
    let last = parts.pop().unwrap_or_default();
    if last != "mod.rs" {
        parts.push(last.trim_end_matches(".rs").to_string());
    }
    parts
}

/// The module paths a file's code names: `crate::…`, `super::…`, `self::…` and its own
/// sub-modules' (`mod x;` then `x::…`), each element of a `{…}` group apart.
fn named_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let children: Vec<String> = (code.lines())
        .filter_map(|l| {
            let l = l.trim_start().trim_start_matches("pub ").trim_start();
            let name = l.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    // A path from `at`: identifiers joined by `::`, and a group's elements apart.
    fn walk(
        text: &str,
        base: Vec<String>,
        ident: &dyn Fn(&str) -> String,
        out: &mut Vec<Vec<String>>,
    ) {
        let mut path = base;
        let mut rest = text;
        loop {
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 0;
                let mut start = 0;
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            walk(group[start..i].trim_start(), path.clone(), ident, out);
                            return;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            walk(group[start..i].trim_start(), path.clone(), ident, out);
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            let name = ident(rest);
            if name.is_empty() {
                break;
            }
            rest = &rest[name.len()..];
            if name == "super" {
                path.pop();
            } else if name != "self" {
                path.push(name);
            }
            match rest.strip_prefix("::") {
                Some(r) => rest = r,
                None => break,
            }
        }
        out.push(path);
    }
    let mut out = Vec::new();
    let starts_word = |at: usize| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
    };
    for (at, _) in code.match_indices("::") {
        // The first segment of a path: the word just before this `::`.
        let head_start = code[..at]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
            .last()
            .map_or(at, |(i, _)| i);
        if head_start == at || !starts_word(head_start) {
            continue;
        }
        let head = &code[head_start..at];
        let base = match head {
            "crate" => Vec::new(),
            "super" | "self" => module.to_vec(),
            child if children.iter().any(|c| c == child) => module.to_vec(),
            _ => continue,
        };
        let text = if head == "crate" {
            &code[at + 2..]
        } else {
            &code[head_start..]
        };
        walk(text, base, &ident, &mut out);
    }
    out
}

/// Every import circle that joins files of sibling sub-modules among `files` (layer,
/// path, code): one line each.
fn circles(files: &[(String, String, String)]) -> Vec<String> {
    let modules: Vec<Vec<String>> = files.iter().map(|(_, p, _)| module_of(p)).collect();
    let file_of: HashMap<&[String], usize> = (modules.iter().enumerate())
        .map(|(i, m)| (m.as_slice(), i))
        .collect();
    let mut graph = petgraph::graph::DiGraph::<usize, ()>::new();
    let nodes: Vec<_> = (0..files.len()).map(|i| graph.add_node(i)).collect();
    for (i, (_, _, code)) in files.iter().enumerate() {
        let mut seen = HashSet::new();
        for path in named_paths(&modules[i], code) {
            // The file of the longest known module the path begins with.
            let target = (1..=path.len())
                .rev()
                .find_map(|n| file_of.get(&path[..n]).copied());
            if let Some(t) = target.filter(|t| *t != i && seen.insert(*t)) {
                graph.add_edge(nodes[i], nodes[t], ());
            }
        }
    }
    // A file's folder: its module's, where `x.rs` beside a folder `x/` is that module's root.
    let roots: HashSet<&[String]> = (modules.iter())
        .filter_map(|m| m.split_last().map(|(_, parent)| parent))
        .collect();
    let folder = |i: usize| -> &[String] {
        let m = modules[i].as_slice();
        let is_root = files[i].1.ends_with("mod.rs") || roots.contains(m);
        if is_root {
            m
        } else {
            &m[..m.len().saturating_sub(1)]
        }
    };
    let nested = |a: &[String], b: &[String]| a.starts_with(b) || b.starts_with(a);
    let mut out = Vec::new();
    for scc in petgraph::algo::tarjan_scc(&graph) {
        let members: Vec<usize> = scc.iter().map(|n| graph[*n]).collect();
        let siblings =
            (members.iter()).any(|&a| members.iter().any(|&b| !nested(folder(a), folder(b))));
        if siblings {
            let mut names: Vec<&str> = members.iter().map(|&i| files[i].1.as_str()).collect();
            names.sort_unstable();
            out.push(format!(
                "an import circle across sibling sub-modules: {}",
                names.join(" → ")
            ));
        }
    }
    out
}

#[test]
fn every_layer_imports_only_the_layers_before_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let order = stated_order(&architecture);
    assert!(order.len() >= 9, "{order:?}");
    let files = layered_files(&root.join("src"));
    assert!(files.len() > 100, "{} files", files.len());
    let mut found = violations(&order, &files);
    found.extend(circles(&files));
    assert!(
        found.is_empty(),
        "against the layering:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_circle_across_sibling_sub_modules_is_found_and_one_within_a_module_is_not() {
    let file = |path: &str, text: &str| ("x".to_string(), path.to_string(), code_of(text));
    let across = [
        file(
            "tui/state/mod.rs",
            "mod axis;\nuse crate::tui::view::draw;\n",
        ),
        file(
            "tui/view/mod.rs",
            "use super::state::{State, axis::Axis};\n",
        ),
        file("tui/state/axis.rs", "use super::State;\n"),
    ];
    assert_eq!(circles(&across).len(), 1, "{:?}", circles(&across));
    // A module and one nested in it use each other: allowed.
    let within = [
        file(
            "tui/state/mod.rs",
            "mod axis;\npub use axis::Axis;\nuse crate::tui::Options;\n",
        ),
        file("tui/state/axis.rs", "use super::State;\n"),
        file("tui/view/mod.rs", "use crate::tui::state::{State, Axis};\n"),
        file("tui/mod.rs", "mod state;\nuse state::State;\n"),
    ];
    assert_eq!(circles(&within), Vec::<String>::new());
}

#[test]
fn an_import_of_a_later_layer_is_found_and_a_comment_or_test_is_not() {
    let order: Vec<String> = ["model", "canon", "cli", "tui"].map(String::from).to_vec();
    let file = |layer: &str, text: &str| (layer.to_string(), "f.rs".to_string(), code_of(text));
    let bad = [
        file("model", "use crate::cli::check;\n"),
        file("canon", "use crate::{model::json, cli::contract};\n"),
        file("canon", "fn f() { crate::cli::run() }\n"),
        file("cli", "use ratatui::Frame;\n"),
        file("cli", "use crate::open::cache::Index;\n"),
    ];
    for f in &bad {
        assert_eq!(
            violations(&order, std::slice::from_ref(f)).len(),
            1,
            "{f:?}"
        );
    }
    let good = [
        file(
            "cli",
            "use crate::model::json::Json;\nuse crate::{canon, model};\n",
        ),
        file(
            "model",
            "/// See [`crate::cli::check`].\nfn f() {} // crate::cli\n",
        ),
        file(
            "model",
            "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::cli::x;\n}\n",
        ),
        file("tui", "use ratatui::Frame;\nuse crate::cli::x;\n"),
    ];
    for f in &good {
        assert_eq!(
            violations(&order, std::slice::from_ref(f)),
            Vec::<String>::new()
        );
    }
}
