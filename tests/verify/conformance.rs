//! Every target of the wasmagent-protocol conformance manifest gets its manifest verdict
//! on every axis the manifest names; historical records are identified by construction.

use crate::common;

use aeplens::verify::signature::Construction;
use aeplens::verify::{AuthStatus, BindingStatus, RecordResult};
use common::*;

fn corpus() -> std::path::PathBuf {
    fixtures().join("ecosystem/wasmagent-protocol-conformance")
}

fn word_for_pass(status: Option<&str>) -> &'static str {
    match status {
        Some("pass") => "valid",
        Some("fail") => "invalid",
        _ => "not-checked",
    }
}

/// Maps our authenticity axis to the manifest vocabulary.
fn authenticity_word(r: &RecordResult) -> &'static str {
    let a = &r.authenticity;
    match a.status.map(aeplens::verify::AuthStatus::name) {
        None => "not-checked",
        Some("unsigned") => "unsigned",
        Some("valid")
            if a.construction.map(Construction::name)
                == Some("aep-dsse-ed25519-decoded-body-v1") =>
        {
            "dsse-valid"
        }
        Some(_) => "invalid",
    }
}

#[test]
fn manifest_targets_get_their_verdicts() {
    let manifest = read_json(&corpus().join("manifest.json"));
    let keys = keyring(&fixtures().join("ecosystem/keyring.json"));
    let targets = manifest["conformance_target"].as_array().unwrap();
    assert_eq!(targets.len(), 24);
    for t in targets {
        let name = t["path"].as_str().unwrap();
        let report = verify_path(&corpus().join(name), &keys);
        assert!(
            report.inputs[0].errors.is_empty(),
            "{name}: {:?}",
            report.inputs[0].errors
        );
        assert!(!report.records.is_empty(), "{name}");
        for r in &report.records {
            if let Some(want) = t["structural"].as_str() {
                assert_eq!(
                    word_for_pass(r.structural.status.map(aeplens::verify::CheckStatus::name)),
                    want,
                    "{name} structural: {:?}",
                    r.structural
                );
            }
            if let Some(want) = t["semantic"].as_str() {
                assert_eq!(
                    word_for_pass(r.semantic.status.map(aeplens::verify::CheckStatus::name)),
                    want,
                    "{name} semantic: {:?}",
                    r.semantic
                );
            }
            if let Some(want) = t["authenticity"].as_str() {
                assert_eq!(
                    authenticity_word(r),
                    want,
                    "{name} authenticity: {:?}",
                    r.authenticity
                );
            }
        }
        if let Some(want) = t["chain"].as_str() {
            let got = report.chains[0]
                .status
                .map_or("not-checked", aeplens::verify::chain::ChainStatus::name);
            assert_eq!(got, want, "{name} chain");
            if want == "broken" {
                assert_eq!(report.chains[0].broken_at, Some(1), "{name}");
            }
        }
    }
}

#[test]
fn historical_records_are_identified_by_construction() {
    let keys = keyring(&fixtures().join("ecosystem/keyring.json"));
    let js = verify_path(
        &corpus().join("historical/js-canonical-ed25519.json"),
        &keys,
    );
    assert_eq!(
        js.records[0]
            .authenticity
            .status
            .map(aeplens::verify::AuthStatus::name),
        Some("valid")
    );
    assert_eq!(
        js.records[0]
            .authenticity
            .construction
            .map(Construction::name),
        Some("js-legacy-inline")
    );
    let rust = verify_path(&corpus().join("historical/rust-sha256-ed25519.json"), &keys);
    assert!(
        !rust.records[0].authenticity.evaluated,
        "{:?}",
        rust.records[0].authenticity
    );
    assert!(
        rust.records[0]
            .authenticity
            .reason
            .as_deref()
            .unwrap()
            .contains("legacy-sample-key")
    );
    let prefix = verify_path(
        &fixtures().join("ecosystem/wasmagent-proxy/wasmagent-js-dsse.json"),
        &keys,
    );
    let a = &prefix.records[0].authenticity;
    assert_eq!(
        (a.status, a.construction.map(Construction::name), a.binding),
        (
            Some(AuthStatus::Valid),
            Some("dsse-prefix-b64"),
            Some(BindingStatus::Exact)
        )
    );
    let bscode = verify_path(&fixtures().join("ecosystem/bscode/aep-shared.jsonl"), &keys);
    assert_eq!(
        bscode.records[0]
            .authenticity
            .construction
            .map(Construction::name),
        Some("js-legacy-inline")
    );
    assert_eq!(
        bscode.records[0]
            .authenticity
            .status
            .map(aeplens::verify::AuthStatus::name),
        Some("valid")
    );
}

#[test]
fn dsse_failures_name_the_failed_check() {
    let keys = keyring(&fixtures().join("ecosystem/keyring.json"));
    for (file, check) in [
        ("dsse/wrong-payload-type-resigned.json", "D1"),
        ("dsse/multiple-signatures.json", "D2"),
        ("dsse/wrong-statement-type-resigned.json", "D5"),
        ("dsse/wrong-predicate-type-resigned.json", "D6"),
        ("dsse/missing-subject-name-resigned.json", "D8"),
        ("dsse/wrong-subject-name-resigned.json", "D8"),
        ("dsse/tampered-run-id.json", "D10"),
        ("dsse/tampered-created-at.json", "D10"),
    ] {
        let report = verify_path(&corpus().join(file), &keys);
        let a = &report.records[0].authenticity;
        assert!(
            a.failures.iter().any(|f| f.starts_with(check)),
            "{file}: {a:?}"
        );
        assert_ne!(
            a.status.map(aeplens::verify::AuthStatus::name),
            Some("valid"),
            "{file}"
        );
    }
}

#[test]
fn other_producers_records_are_judged_honestly() {
    let keys = keyring(&fixtures().join("ecosystem/keyring.json"));
    let oaa = verify_path(
        &fixtures().join("ecosystem/open-agent-audit/aep-v0.3-fixture.json"),
        &keys,
    );
    let s = &oaa.records[0].structural;
    assert_eq!(
        s.status.map(aeplens::verify::CheckStatus::name),
        Some("fail")
    );
    assert!(
        s.violations
            .iter()
            .any(|v| v.path.ends_with("side_effect_class"))
    );
    assert!(
        s.violations
            .iter()
            .any(|v| v.path.ends_with("argument_drift"))
    );
    let bad = fixtures().join("ecosystem/wasmagent-protocol-tests/invalid/aep-record");
    for entry in std::fs::read_dir(&bad).unwrap() {
        let path = entry.unwrap().path();
        let report = verify_path(&path, &keys);
        assert_eq!(
            report.records[0]
                .structural
                .status
                .map(aeplens::verify::CheckStatus::name),
            Some("fail"),
            "{}",
            path.display()
        );
    }
    let good = fixtures().join("ecosystem/wasmagent-protocol-tests/valid/aep-record");
    for entry in std::fs::read_dir(&good).unwrap() {
        let path = entry.unwrap().path();
        let report = verify_path(&path, &keys);
        assert_eq!(
            report.records[0]
                .structural
                .status
                .map(aeplens::verify::CheckStatus::name),
            Some("pass"),
            "{}: {:?}",
            path.display(),
            report.records[0].structural
        );
    }
}

/// The package that carries the protocol's own conformance corpus, pinned
/// (docs/conformance.md; `scripts/test` installs it).
const CORPUS_PACKAGE: &str = "wasmagent-protocol 0.1.11";
const CORPUS_TARGET: &str = "aep-certified-2026-09-16-01";

/// The installed corpus (`wasmagent_protocol/conformance/aep` of the pinned package in
/// the test environment); `None`, said, outside CI without it.
fn published_corpus() -> Option<std::path::PathBuf> {
    let py =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/consumers-venv/bin/python");
    let found = py.exists().then(|| {
        std::process::Command::new(&py)
            .args([
                "-c",
                "import importlib.metadata as m, pathlib, wasmagent_protocol as w; \
                 print(m.version('wasmagent-protocol')); \
                 print(pathlib.Path(w.__file__).parent / 'conformance' / 'aep')",
            ])
            .output()
            .ok()
            .filter(|o| o.status.success())
    });
    let out = found.flatten();
    if !present(out.is_some(), "the wasmagent-protocol package") {
        return None;
    }
    let out = String::from_utf8(out.unwrap().stdout).unwrap();
    let mut lines = out.lines();
    assert_eq!(
        Some(lines.next().unwrap()),
        CORPUS_PACKAGE.split(' ').nth(1),
        "the pinned version"
    );
    Some(lines.next().unwrap().into())
}

/// A layer's word for one record of `check --format json`, in the manifest's vocabulary.
/// The semantic layer is the record's own invariants (V1–V16, V18): V17 compares chained
/// snapshots across records and is reported apart, as F-ACTION-REWRITTEN (docs/conformance.md).
fn layer_word(layer: &str, record: &serde_json::Value) -> String {
    let pass = |axis: &serde_json::Value| match axis["status"].as_str() {
        Some("pass") => "valid",
        Some("fail") => "invalid",
        _ => "not-checked",
    };
    match layer {
        "structural" => pass(&record["structural"]).into(),
        "semantic" => {
            let axis = &record["semantic"];
            if axis["status"].is_null() {
                return "not-checked".into();
            }
            let own_error = (axis["violations"].as_array().unwrap().iter())
                .any(|v| v["severity"] == "error" && v["rule"] != "V17");
            if own_error { "invalid" } else { "valid" }.into()
        }
        _ => {
            let a = &record["authenticity"];
            match a["status"].as_str() {
                None => "not-checked",
                Some("unsigned") => "unsigned",
                Some("valid") if a["construction"] == "aep-dsse-ed25519-decoded-body-v1" => {
                    "dsse-valid"
                }
                Some(_) => "invalid",
            }
            .into()
        }
    }
}

/// The protocol's newest packaged corpus, pinned: every `conformance_target` through
/// `check` with the manifest's verifying keys, the four layers compared; any mismatch
/// fails. The counts, the (empty) mismatch list and the external-evidence entry in
/// docs/conformance.md are what this run gives, and the entry is valid against the
/// corpus's own `schemas/external-evidence.schema.json`. The protocol's evaluators are
/// never called.
#[test]
fn the_published_corpus_gets_every_verdict_through_check() {
    let Some(corpus) = published_corpus() else {
        return;
    };
    let target = read_json(&corpus.join("certified-target.json"));
    assert_eq!(target["target_id"], CORPUS_TARGET);
    let manifest = read_json(&corpus.join("manifest.json"));
    let mut args: Vec<String> = ["check", "--format", "json", "--no-index"]
        .map(String::from)
        .into();
    for (id, file) in manifest["verifying_keys"]["by_keyid"].as_object().unwrap() {
        let hex = std::fs::read_to_string(corpus.join(file.as_str().unwrap())).unwrap();
        args.extend(["--key".into(), format!("{id}={}", hex.trim())]);
    }
    let targets = manifest["conformance_target"].as_array().unwrap();
    let layers = ["structural", "semantic", "authenticity", "chain"];
    let mut compared = std::collections::BTreeMap::<&str, usize>::new();
    let mut mismatches = Vec::new();
    for t in targets {
        let path = t["path"].as_str().unwrap();
        let mut run = args.clone();
        run.push(corpus.join(path).display().to_string());
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let (_, out, err) = aeplens(&run);
        let doc: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{path}: {e}: {err}"));
        assert!(!doc["records"].as_array().unwrap().is_empty(), "{path}");
        for layer in layers {
            let Some(want) = t[layer].as_str() else {
                continue;
            };
            *compared.entry(layer).or_default() += 1;
            let got: Vec<String> = if layer == "chain" {
                vec![
                    doc["chains"][0]["status"]
                        .as_str()
                        .unwrap_or("not-checked")
                        .into(),
                ]
            } else {
                (doc["records"].as_array().unwrap().iter())
                    .map(|r| layer_word(layer, r))
                    .collect()
            };
            if got.iter().any(|g| g != want) {
                mismatches.push(format!("{path} {layer}: {got:?}, manifest {want}"));
            }
        }
    }
    assert_eq!(targets.len(), 30);
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    // docs/conformance.md says what this run gives.
    let doc = std::fs::read_to_string("docs/conformance.md").unwrap();
    let entry = doc
        .split("```json\n")
        .nth(1)
        .unwrap()
        .split("\n```")
        .next()
        .unwrap();
    let entry: serde_json::Value = serde_json::from_str(entry).unwrap();
    let schema = read_json(&corpus.join("schemas/external-evidence.schema.json"));
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&entry)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(entry["target_id"], CORPUS_TARGET);
    let results = &entry["reported_results"];
    assert_eq!(results["corpus_package"], CORPUS_PACKAGE);
    assert_eq!(
        results["conformance_targets"],
        format!("{0}/{0}", targets.len())
    );
    for (layer, n) in &compared {
        assert_eq!(
            results[&format!("{layer}_verdicts")],
            format!("{n}/{n}"),
            "{layer}"
        );
    }
    assert_eq!(results["mismatches"], 0);
    for (layer, n) in &compared {
        assert!(
            doc.contains(&format!("| {layer} | {n} | {n} | 0 |")),
            "the counts table: {layer} {n}"
        );
    }
}
