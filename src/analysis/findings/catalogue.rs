use crate::analysis::evidence::Evidence;
use crate::analysis::lease::SuppliedLeases;
use crate::load::{Corpus, Input, load_paths, parse_input};
use crate::verify::{Keyring, Options};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Evidence as a case gives it: `lines` (raw NDJSON lines, kept byte for byte),
/// `records` (objects) or `paths` (fixture files under `tests/fixtures/`); `keys` (a
/// keyring object or a fixture path), `tsa_certs`, `anchors` and `leases` (fixture paths).
fn evidence(case: &Value) -> Evidence {
    let mut inputs: Vec<Input> = Vec::new();
    let mut text = String::new();
    for line in case["lines"].as_array().into_iter().flatten() {
        text.push_str(line.as_str().unwrap());
        text.push('\n');
    }
    for record in case["records"].as_array().into_iter().flatten() {
        text.push_str(&record.to_string());
        text.push('\n');
    }
    if !text.is_empty() {
        inputs.push(parse_input("case.ndjson".into(), text.as_bytes()));
    }
    let fixture = |p: &Value| format!("tests/fixtures/{}", p.as_str().unwrap());
    let paths: Vec<String> = case["paths"]
        .as_array()
        .into_iter()
        .flatten()
        .map(fixture)
        .collect();
    inputs.extend(load_paths(&paths));
    let mut keys = Keyring::default();
    match &case["keys"] {
        Value::String(_) => {
            keys.add_file(&root().join(fixture(&case["keys"])).display().to_string())
                .unwrap();
        }
        Value::Object(map) => {
            for (id, key) in map {
                keys.add(id, key.as_str().unwrap()).unwrap();
            }
        }
        _ => {}
    }
    if case["tsa_certs"].is_string() {
        keys.add_tsa_certs(&fixture(&case["tsa_certs"])).unwrap();
    }
    if case["anchors"].is_string() {
        keys.add_anchors(&fixture(&case["anchors"])).unwrap();
    }
    let mut leases = SuppliedLeases::default();
    if case["leases"].is_string() {
        let _ = leases.add_file(Path::new(&fixture(&case["leases"])));
    }
    let mut ev = Evidence::open(Corpus::new(inputs), &keys, &Options::default(), &leases);
    let traces: Vec<String> = (case["traces"].as_array().into_iter().flatten())
        .map(fixture)
        .collect();
    if !traces.is_empty() {
        let telemetry = crate::load::traces::load_traces(&traces);
        assert!(telemetry.errors.is_empty(), "{:?}", telemetry.errors);
        ev.add_capture(telemetry, crate::analysis::capture::DEFAULT_TOLERANCE_MS);
    }
    ev
}

/// The JSON at `line` of a telemetry file (a span's location).
fn telemetry_line(path: &str, line: usize) -> Option<Value> {
    let text = std::fs::read_to_string(root().join(path)).ok()?;
    serde_json::from_str(text.lines().nth(line - 1)?).ok()
}

/// The findings of `id`, each location checked: a loaded record starts at its line,
/// and its pointer resolves inside that record.
fn of_id(ev: &Evidence, id: &str) -> Value {
    let found: Vec<_> = ev.findings.iter().filter(|f| f.id == id).collect();
    for f in &found {
        assert!(!f.locations.is_empty(), "{id} has no location");
        for l in &f.locations {
            let record = ev
                .corpus
                .records()
                .find(|r| *r.source.path == *l.path && r.source.line == l.line);
            let json = match record {
                Some(record) => serde_json::to_value(record.json()).unwrap(),
                None => telemetry_line(&l.path, l.line)
                    .unwrap_or_else(|| panic!("{id}: no record or span at {}:{}", l.path, l.line)),
            };
            assert!(
                json.pointer(&l.pointer).is_some(),
                "{id}: {} not in its record",
                l.pointer
            );
        }
    }
    serde_json::to_value(found).unwrap()
}

/// Every `"F-…"` id written in the sources.
fn ids_in_code() -> std::collections::BTreeSet<String> {
    let mut ids = std::collections::BTreeSet::new();
    let mut dirs = vec![root().join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for part in text.split("\"F-").skip(1) {
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '-')
                    .collect();
                if part[name.len()..].starts_with('"') && !name.is_empty() {
                    ids.insert(format!("F-{name}"));
                }
            }
        }
    }
    ids
}

#[test]
fn every_finding_fires_on_its_case_and_stays_quiet_on_the_other() {
    let dir = root().join("tests/findings");
    let update = std::env::var_os("AEPLENS_UPDATE_CASES").is_some();
    let mut covered = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut case: Value = serde_json::from_str(&text).unwrap();
        let id = case["id"].as_str().unwrap().to_string();
        assert_eq!(
            crate::model::finding::describe(&id),
            case["rule"].as_str(),
            "{id}: the case's rule is the description reports give"
        );
        assert_eq!(
            path.file_stem().unwrap().to_string_lossy(),
            id,
            "file named by its id"
        );
        let fired = of_id(&evidence(&case["fires"]), &id);
        assert!(
            fired.as_array().is_some_and(|a| !a.is_empty()),
            "{id} does not fire"
        );
        if update {
            case["expected"] = fired;
            let mut out = serde_json::to_string_pretty(&case).unwrap();
            out.push('\n');
            std::fs::write(&path, out).unwrap();
        } else {
            assert_eq!(
                fired, case["expected"],
                "{id}: the findings differ from the case"
            );
        }
        let quiet = of_id(&evidence(&case["quiet"]), &id);
        assert_eq!(
            quiet,
            Value::Array(vec![]),
            "{id} fires on its quiet evidence"
        );
        covered.insert(id);
    }
    let missing: Vec<_> = ids_in_code().difference(&covered).cloned().collect();
    assert!(
        missing.is_empty(),
        "finding ids with no case in tests/findings/: {missing:?}"
    );
}
