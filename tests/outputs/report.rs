//! `aeplens report`: goldens for the demo in Markdown, SARIF and JUnit (JSON is pinned and
//! validated in `tests/outputs/contract.rs`), SARIF validated against the official SARIF 2.1.0
//! schema, JUnit parsed as XML, hostile evidence inert in every format, the CI gate, and
//! evidence never written.

use crate::common;

use common::{DEMO, aeplens};

use serde_json::Value;

fn report(format: &str, evidence: &[&str]) -> String {
    let mut args = vec!["report", "--format", format];
    args.extend_from_slice(evidence);
    let (code, out, err) = aeplens(&args);
    assert_eq!(code, 0, "{err}");
    out
}

/// The version in the output, so a release does not rewrite every golden.
fn unversioned(text: &str) -> String {
    text.replace(env!("CARGO_PKG_VERSION"), "[version]")
}

#[test]
fn demo_goldens_in_markdown_sarif_and_junit() {
    let md = report("md", &DEMO);
    // The review's answers are there: the re-approved action's three answers, the chain.
    for expected in [
        "# aeplens incident report",
        "### ▲ F-LEASE-OUTSIDE (high) × 1",
        "- **Authority available:**",
        "- **Changed between approval and execution:**",
        "## Denied → re-approved chains",
        "| demo\\-deploy\\-key\\-1 |",
        "Reproduce: `aeplens report --format md --keys assets/demo/keys.json",
    ] {
        assert!(
            md.contains(expected) || md.contains(&expected.replace("\\-", "-")),
            "{expected}\n{md}"
        );
    }
    insta::assert_snapshot!("demo_md", unversioned(&md));
    // The working directory is where relative URIs resolve: the golden names it [cwd].
    let cwd = std::env::current_dir().unwrap().display().to_string();
    let sarif = unversioned(&report("sarif", &DEMO)).replace(&cwd, "[cwd]");
    insta::assert_snapshot!("demo_sarif", sarif);
    insta::assert_snapshot!("demo_junit", unversioned(&report("junit", &DEMO)));
}

#[test]
fn sarif_validates_against_the_official_schema_on_every_fixture_set() {
    let Some(validator) = common::sarif_validator() else {
        return;
    };
    for evidence in [
        DEMO.to_vec(),
        vec![
            "--keys",
            "tests/fixtures/reference-stores/keys.json",
            "tests/fixtures/reference-stores",
        ],
        vec![
            "--keys",
            "tests/fixtures/reference/keys.json",
            "tests/fixtures/reference",
        ],
        vec!["tests/fixtures/rfc-final/evidence"],
        vec!["tests/fixtures/ecosystem"],
    ] {
        let doc: Value = serde_json::from_str(&report("sarif", &evidence)).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .take(5)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{evidence:?}: {errors:#?}");
        // One rule per finding id; every result names a rule, a place and a fingerprint.
        let run = &doc["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        let ids: std::collections::HashSet<&str> =
            rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), rules.len());
        for r in run["results"].as_array().unwrap() {
            let rule = &rules[r["ruleIndex"].as_u64().unwrap() as usize];
            assert_eq!(rule["id"], r["ruleId"]);
            assert!(rule["properties"]["security-severity"].is_string());
            assert!(
                r["locations"][0]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap()
                    >= 1
            );
            assert_eq!(
                r["partialFingerprints"]["aeplensFinding/v1"]
                    .as_str()
                    .unwrap()
                    .len(),
                32
            );
        }
    }
    // The validator does refuse a broken log.
    let mut broken: Value = serde_json::from_str(&report("sarif", &DEMO)).unwrap();
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!validator.is_valid(&broken));
}

#[test]
fn junit_is_xml_with_a_suite_per_input_and_a_case_per_record_and_axis() {
    let xml = report(
        "junit",
        &[
            "--keys",
            "tests/fixtures/reference/keys.json",
            "tests/fixtures/reference",
        ],
    );
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suites: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    let inputs = std::fs::read_dir("tests/fixtures/reference")
        .unwrap()
        .filter(|e| {
            let p = e.as_ref().unwrap().path();
            matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("json" | "ndjson")
            )
        })
        .count();
    assert_eq!(suites.len(), inputs);
    let cases = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .count();
    let failures = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    assert!(
        cases > 40 && failures > 0,
        "{cases} cases, {failures} failures"
    );
    let root = doc.root_element();
    assert_eq!(
        root.attribute("failures")
            .unwrap()
            .parse::<usize>()
            .unwrap(),
        failures
    );
}

#[test]
fn hostile_evidence_stays_inert_in_every_format() {
    let dir = common::run_dir("report");
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("evil.ndjson");
    let hostile = "x\"><img src=x onerror=alert(1)> <script>alert(2)</script> [l](http://e) | \u{1b}[2J\u{202e}";
    let record = serde_json::json!({
        "schema_version": "aep/v0.3",
        "run_id": hostile,
        "actions": [{"action_id": hostile, "tool_name": hostile, "state_changing": true,
                     "side_effect_class": "mutate-external", "timestamp_ms": 1_780_000_000_000u64}],
    });
    std::fs::write(&store, format!("{record}\n")).unwrap();
    let path = store.to_str().unwrap();
    // JSON keeps evidence exact (controls as JSON escapes); the others show it escaped.
    for format in ["md", "sarif", "junit", "json"] {
        let out = report(format, &[path]);
        assert!(!out.contains('\u{1b}'), "{format}: raw escape");
        if format != "json" {
            assert!(!out.contains('\u{202e}'), "{format}: raw bidi override");
        }
        if format == "md" || format == "junit" {
            assert!(
                !out.contains("<script>") && !out.contains("<img"),
                "{format}: {out}"
            );
        }
    }
    let xml = report("junit", &[path]);
    roxmltree::Document::parse(&xml).unwrap();
    let md = report("md", &[path]);
    assert!(
        md.contains("&lt;script&gt;") && md.contains("\\[l\\](http\\://e)"),
        "{md}"
    );
    // The gate, and no write over evidence.
    let before = std::fs::read(&store).unwrap();
    let (code, _, _) = aeplens(&["report", "--fail-on", "high", path]);
    assert_eq!(code, 1, "F-UNAPPROVED-MUTATION is high");
    let (code, _, err) = aeplens(&["report", "-o", path, path]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read(&store).unwrap(), before);
    let out = dir.join("r.md");
    assert_eq!(aeplens(&["report", "-o", out.to_str().unwrap(), path]).0, 0);
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .starts_with("# aeplens incident report")
    );
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert_eq!(aeplens(&["report", empty.to_str().unwrap()]).0, 3);
    let _ = std::fs::remove_dir_all(&dir);
}
