//! Every target of the wasmagent-protocol conformance manifest gets its manifest verdict
//! on every axis the manifest names; historical records are identified by construction.

mod common;

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
