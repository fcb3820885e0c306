//! Every record of `tests/fixtures/reference/` gets the canonical hash, authenticity
//! verdict and chain verdict of `expected.json`, checked over the files themselves.

use crate::common;

use aeplens::canon::{CHAIN_EXCLUDED, Variant, canonical_bytes_without};
use aeplens::load::load_paths;
use aeplens::verify::chain::ChainStatus;
use aeplens::verify::signature::Construction;
use aeplens::verify::{BindingStatus, TimestampState};
use common::*;

fn reference() -> std::path::PathBuf {
    fixtures().join("reference")
}

#[test]
fn every_reference_record_matches_expected() {
    let expected = read_json(&reference().join("expected.json"));
    let keys = keyring(&reference().join("keys.json"));
    let files = expected["files"].as_object().unwrap();
    assert!(files.len() >= 16);
    let mut checked = 0;
    for (name, want) in files {
        let path = reference().join(name);
        let report = verify_path(&path, &keys);
        let records = want["records"].as_array().unwrap();
        assert_eq!(report.records.len(), records.len(), "{name}: record count");
        assert!(
            report.inputs[0].errors.is_empty(),
            "{name}: {:?}",
            report.inputs[0].errors
        );
        for (got, want) in report.records.iter().zip(records) {
            let at = format!("{name} #{}", want["index"]);
            assert_eq!(
                got.canonical_sha256,
                want["canonical_sha256"].as_str().unwrap(),
                "{at}: hash"
            );
            let status = got
                .authenticity
                .status
                .map(aeplens::verify::AuthStatus::name);
            match want["expected_signature"].as_str().unwrap() {
                "valid" => assert_eq!(status, Some("valid"), "{at}: {:?}", got.authenticity),
                "invalid" => assert!(
                    matches!(status, Some("invalid" | "binding-mismatch")),
                    "{at}: {:?}",
                    got.authenticity
                ),
                other => panic!("{at}: unexpected verdict {other}"),
            }
            checked += 1;
        }
        let chain = &report.chains[0];
        let status = chain.status.unwrap_or(ChainStatus::NotPresent);
        if want["chain"]["valid"].as_bool().unwrap() {
            assert_ne!(status, ChainStatus::Broken, "{name}: chain");
        } else {
            assert_eq!(status, ChainStatus::Broken, "{name}: chain");
            assert_eq!(
                chain.broken_at.map(|b| b as u64),
                want["chain"]["broken_at"].as_u64(),
                "{name}: broken_at"
            );
        }
    }
    assert_eq!(checked, 100);
}

#[test]
fn canonical_text_is_byte_exact() {
    let texts = read_json(&reference().join("canonical_texts.json"));
    let mut compared = 0;
    for (name, list) in texts.as_object().unwrap() {
        let Some(list) = list.as_array() else {
            continue;
        };
        let inputs = load_paths(&[reference().join(name).display().to_string()]);
        for (record, want) in inputs[0].records.iter().zip(list) {
            let want = want
                .as_str()
                .or_else(|| want["canonical"].as_str())
                .unwrap();
            let got = canonical_bytes_without(record.json(), CHAIN_EXCLUDED, Variant::C1);
            assert_eq!(
                String::from_utf8(got).unwrap(),
                want,
                "{name} #{}",
                record.source.index
            );
            compared += 1;
        }
    }
    assert!(compared >= 90, "compared {compared}");
}

#[test]
fn reference_gaps_get_the_stricter_verdict_with_reasons() {
    let keys = keyring(&reference().join("keys.json"));
    let outer = verify_path(&reference().join("tampered_dsse_outer_field.ndjson"), &keys);
    let a = &outer.records[0].authenticity;
    assert_eq!(
        a.status.map(aeplens::verify::AuthStatus::name),
        Some("binding-mismatch")
    );
    assert!(
        a.failures
            .iter()
            .any(|f| f.starts_with("D10") && f.contains("actions[0].tool_name")),
        "{a:?}"
    );
    let mirror = verify_path(&reference().join("tampered_dsse_legacy_sig.ndjson"), &keys);
    let a = &mirror.records[0].authenticity;
    assert_eq!(
        a.status.map(aeplens::verify::AuthStatus::name),
        Some("binding-mismatch")
    );
    assert!(a.failures.iter().any(|f| f.starts_with("D11")), "{a:?}");
    let stamped = verify_path(&reference().join("timestamped.ndjson"), &keys);
    for r in &stamped.records {
        assert_eq!(
            r.authenticity.timestamp,
            Some(TimestampState::LocalConsistent),
            "{:?}",
            r.authenticity
        );
    }
    let v04 = verify_path(&reference().join("v04_dsse.ndjson"), &keys);
    for r in &v04.records {
        assert_eq!(
            r.authenticity.construction.map(Construction::name),
            Some("dsse-prefix-b64")
        );
        assert_eq!(
            r.authenticity.binding,
            Some(BindingStatus::LegacyNormalized)
        );
    }
    let wrong = verify_path(&reference().join("tampered_wrong_key.ndjson"), &keys);
    for r in &wrong.records {
        assert!(
            r.findings.iter().any(|f| f.id == "F-KEY-MISLABELLED"),
            "{:?}",
            r.findings
        );
    }
}

#[test]
fn current_profile_reports_historical_constructions_as_unsupported() {
    let keys = keyring(&reference().join("keys.json"));
    let inputs = load_paths(&[reference().join("v03.ndjson").display().to_string()]);
    let options = aeplens::verify::Options {
        profile: aeplens::verify::Profile::Current,
    };
    let report = aeplens::verify::verify_inputs(&inputs, &keys, &options, None);
    for r in &report.records {
        assert_eq!(
            r.authenticity.status.map(aeplens::verify::AuthStatus::name),
            Some("unsupported-legacy")
        );
        assert_eq!(
            r.authenticity.construction.map(Construction::name),
            Some("js-legacy-inline")
        );
    }
}

#[test]
fn no_key_means_not_evaluated_never_valid() {
    let report = verify_path(
        &reference().join("chain.ndjson"),
        &aeplens::verify::Keyring::default(),
    );
    for r in &report.records {
        assert!(!r.authenticity.evaluated);
        assert_eq!(
            r.authenticity.status.map(aeplens::verify::AuthStatus::name),
            None
        );
        assert!(
            r.authenticity
                .reason
                .as_deref()
                .unwrap()
                .contains("unknown key")
        );
    }
    assert_eq!(report.exit_code(), 1);
}
