//! The layering rule of ARCHITECTURE.md as a test: the order is read from its line
//! "Layers, lowest first: …", then every file of `src/` is read and each import of
//! another layer (`crate::LAYER`) must name one before its own; only `tui` imports
//! ratatui or crossterm. Comments and test modules are not code the library runs, so they
//! are left out.

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

/// The top-level modules of this crate a file's code names: `crate::NAME` and each
/// `NAME` of `crate::{NAME, …}`.
fn named_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        out.push(ident(&group[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest));
        }
    }
    out
}

/// Every import against `order` among `files` (the layer a file is in, its path, its
/// code), and every use of the terminal crates outside `tui`: one line each.
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
        for named in named_modules(code) {
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

#[test]
fn every_layer_imports_only_the_layers_before_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let order = stated_order(&architecture);
    assert!(order.len() >= 9, "{order:?}");
    let files = layered_files(&root.join("src"));
    assert!(files.len() > 100, "{} files", files.len());
    let found = violations(&order, &files);
    assert!(
        found.is_empty(),
        "against the layering:\n{}",
        found.join("\n")
    );
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
