//! Every output checked by what reads it, on the demo, on a hostile store (validly signed
//! records whose ids, tool names, key ids and member names carry markup, controls, bidi
//! overrides, U+2028/U+2029/U+0085, the noncharacters U+FFFE/U+FFFF, link syntax and bare
//! URLs, and actions with unusable times) and on a 20,000-record incident-shaped store:
//! GitHub's SARIF rules, junitparser + lxml + Jenkins' `junit-10.xsd`, the OTLP protobuf
//! definitions, Timesketch's import client, Chrome's flow binding, Graphviz and Mermaid
//! SVG read as XML, the HTML report in headless Chromium. The Python consumers live in a
//! virtual environment `scripts/test` makes under `target/consumers-venv`.

mod common;
#[path = "../examples/support/incident.rs"]
mod incident;

use aeplens::model::json::Json;
use aeplens::verify::sign::{link_to, sign_legacy, signing_key};
use common::{DEMO, aeplens};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Every character class the consumers choke on, in one string.
pub const HOSTILE: &str = "<b>x</b>&\"'\u{1b}[2J\u{202e}rev\u{2028}ls\u{2029}ps\u{85}nel\u{fffe}\u{ffff}[link](https://evil.example/x) https://bare.example/y *em* |pipe| `tick`";

/// A directory of this test run's own.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("consumers-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The hostile store and its keyring: two chained records of run `run-HOSTILE` signed by
/// key `k-HOSTILE` (valid signatures), with hostile action ids, tool names and member names,
/// a denied call that executed, a failed call, and times of -1 ms and year 2603.
fn hostile() -> &'static (PathBuf, PathBuf) {
    static STORE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    STORE.get_or_init(|| {
        let dir = scratch("hostile");
        let key = signing_key(&[7u8; 32]);
        let key_id = format!("k-{HOSTILE}");
        let action = |i: usize, t: i64, decision: &str, outcome: &str| {
            json!({
                "action_id": format!("act-{i}-{HOSTILE}"),
                "tool_name": format!("tool-{HOSTILE}"),
                "state_changing": true,
                "side_effect_class": "mutate-external",
                "timestamp_ms": t,
                "outcome": outcome,
                "capability_decision": {
                    "decision": decision,
                    "capability": format!("cap-{HOSTILE}"),
                    "resource": format!("res://{HOSTILE}"),
                    "reason_code": "POLICY",
                    "approval_mode": "policy-allow-with-receipt",
                },
                format!("member-{HOSTILE}"): HOSTILE,
            })
        };
        let mut lines = Vec::new();
        let mut previous: Option<Json> = None;
        for (i, actions) in [
            vec![
                action(0, 1_780_000_000_000, "allow", "success"),
                action(1, 1_780_000_001_000, "deny", "success"),
            ],
            vec![
                action(2, 1_780_000_002_000, "allow", "failure"),
                action(3, -1, "allow", "success"),
                action(4, 20_000_000_000_000, "allow", "success"),
            ],
        ]
        .into_iter()
        .enumerate()
        {
            let record = json!({
                "schema_version": "aep/v0.5",
                "run_id": format!("run-{HOSTILE}"),
                "created_at_ms": 1_780_000_003_000i64 + i as i64,
                "actions": actions,
            });
            let mut record = Json::from_serde(&record);
            link_to(&mut record, previous.as_ref());
            sign_legacy(&mut record, &key_id, &key);
            lines.push(serde_json::to_string(&record).unwrap());
            previous = Some(record);
        }
        let evidence = dir.join(format!("evidence-{}.ndjson", "x\u{fffe}[y](z)"));
        std::fs::write(&evidence, lines.join("\n") + "\n").unwrap();
        let keys = dir.join("keys.json");
        let public = aeplens::canon::hex(key.verifying_key().as_bytes());
        std::fs::write(&keys, json!({ key_id: public }).to_string()).unwrap();
        (evidence, keys)
    })
}

/// The 20,000-record incident-shaped store and its keyring.
fn incident_store() -> &'static (PathBuf, PathBuf) {
    static STORE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    STORE.get_or_init(|| {
        let dir = scratch("incident");
        let evidence = dir.join("incident.ndjson");
        let mut file = std::io::BufWriter::new(std::fs::File::create(&evidence).unwrap());
        incident::generate(20_000, &mut file).unwrap();
        drop(file);
        let keys = dir.join("keys.json");
        std::fs::write(&keys, incident::keys_json()).unwrap();
        (evidence, keys)
    })
}

/// The three evidence sets every consumer reads: (name, `--keys … PATH` arguments).
fn evidence_sets() -> Vec<(&'static str, Vec<String>)> {
    let args = |(evidence, keys): &(PathBuf, PathBuf)| {
        vec![
            "--keys".to_string(),
            keys.display().to_string(),
            evidence.display().to_string(),
        ]
    };
    vec![
        ("demo", DEMO.iter().map(|s| (*s).to_string()).collect()),
        ("hostile", args(hostile())),
        ("incident-20k", args(incident_store())),
    ]
}

/// `aeplens COMMAND --format FORMAT …evidence` (no index): its stdout.
fn output(command: &str, format: &str, evidence: &[String]) -> String {
    let mut args = vec![command, "--format", format, "--no-index"];
    args.extend(evidence.iter().map(String::as_str));
    let (code, out, err) = aeplens(&args);
    assert!(code < 2, "{command} --format {format} {evidence:?}: {err}");
    out
}

/// The Python of the consumers' virtual environment (`scripts/test` makes it).
fn python() -> Option<PathBuf> {
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/consumers-venv/bin/python");
    if py.exists() {
        return Some(py);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing: scripts/test makes it",
        py.display()
    );
    eprintln!("skipped: no {} (scripts/test makes it)", py.display());
    None
}

/// Runs `script` with the consumers' Python, `args` after it; its stdout, or the failure.
fn run_python(py: &Path, script: &str, args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new(py)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// GitHub code scanning's documented rules for an upload ("SARIF support for code
/// scanning"): the problems found, none when it would be accepted.
fn github_refuses(doc: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let runs = doc["runs"].as_array().cloned().unwrap_or_default();
    if doc["version"] != "2.1.0" {
        problems.push("version is not 2.1.0".into());
    }
    if runs.is_empty() || runs.len() > 20 {
        problems.push(format!("{} runs (1 to 20)", runs.len()));
    }
    let mut categories = std::collections::HashSet::new();
    for (i, run) in runs.iter().enumerate() {
        let name = run["tool"]["driver"]["name"].as_str().unwrap_or("");
        let category = run["automationDetails"]["id"].as_str().unwrap_or("");
        if name.is_empty() || !categories.insert((name.to_string(), category.to_string())) {
            problems.push(format!("run {i}: tool and category not unique"));
        }
        let results = run["results"].as_array().cloned().unwrap_or_default();
        if results.len() > 25_000 {
            problems.push(format!(
                "run {i}: {} results (at most 25,000)",
                results.len()
            ));
        }
        let rules = run["tool"]["driver"]["rules"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if rules.len() > 25_000 {
            problems.push(format!("run {i}: {} rules", rules.len()));
        }
        for rule in &rules {
            if rule["properties"]["tags"]
                .as_array()
                .is_some_and(|t| t.len() > 20)
            {
                problems.push(format!("run {i}: a rule with over 20 tags"));
            }
        }
        let bases = &run["originalUriBaseIds"];
        let uri_ok = |loc: &Value| -> Result<(), String> {
            let uri = loc["uri"].as_str().ok_or("no uri")?;
            match loc["uriBaseId"].as_str() {
                Some(base) => {
                    if bases.get(base).is_none() {
                        return Err(format!("uriBaseId {base} not in originalUriBaseIds"));
                    }
                    if uri.starts_with('/') || uri.split('/').any(|p| p == ".." || p == ".") {
                        return Err(format!("relative uri {uri:?} is not a plain relative path"));
                    }
                }
                None if uri.starts_with("file:///") => {}
                None => return Err(format!("uri {uri:?} neither relative to a base nor file:")),
            }
            if uri
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || !c.is_ascii())
            {
                return Err(format!("uri {uri:?} is not percent-encoded"));
            }
            Ok(())
        };
        for a in run["artifacts"].as_array().cloned().unwrap_or_default() {
            if let Err(e) = uri_ok(&a["location"]) {
                problems.push(format!("run {i}: artifact: {e}"));
            }
        }
        for (j, r) in results.iter().enumerate() {
            let at = format!("run {i} result {j}");
            if r["ruleId"].as_str().is_none() {
                problems.push(format!("{at}: no ruleId"));
            }
            let text = r["message"]["text"].as_str().unwrap_or("");
            if text.is_empty() {
                problems.push(format!("{at}: no message.text"));
            }
            // A `[text](target)` the renderer would make a link of.
            let unescaped = text
                .char_indices()
                .any(|(k, c)| c == '[' && (k == 0 || !text[..k].ends_with('\\')));
            if unescaped {
                problems.push(format!("{at}: message.text has an unescaped ["));
            }
            let locations = r["locations"].as_array().cloned().unwrap_or_default();
            if locations.is_empty() || locations.len() > 1000 {
                problems.push(format!("{at}: {} locations", locations.len()));
            }
            for l in &locations {
                let p = &l["physicalLocation"];
                if let Err(e) = uri_ok(&p["artifactLocation"]) {
                    problems.push(format!("{at}: {e}"));
                }
                if p["region"]["startLine"].as_u64().unwrap_or(0) < 1 {
                    problems.push(format!("{at}: no startLine"));
                }
            }
            if r["partialFingerprints"]["primaryLocationLineHash"]
                .as_str()
                .is_none()
            {
                problems.push(format!("{at}: no primaryLocationLineHash"));
            }
        }
    }
    problems
}

#[test]
fn sarif_is_accepted_by_github_code_scanning_and_nothing_is_dropped() {
    let schema = common::sarif_validator();
    for (name, evidence) in evidence_sets() {
        let doc: Value = serde_json::from_str(&output("report", "sarif", &evidence)).unwrap();
        if let Some(v) = &schema {
            let errors: Vec<String> = (v.iter_errors(&doc).take(5))
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{name}: {errors:#?}");
        }
        let problems = github_refuses(&doc);
        assert!(
            problems.is_empty(),
            "{name}: {:#?}",
            &problems[..problems.len().min(8)]
        );
        // Every finding is a result (or counted in an aggregate).
        let findings: Value = serde_json::from_str(&output("findings", "json", &evidence)).unwrap();
        let expected = findings["findings"].as_array().unwrap().len();
        let runs = doc["runs"].as_array().unwrap();
        let listed: u64 = (runs.iter().flat_map(|r| r["results"].as_array().unwrap()))
            .map(|r| r["properties"]["aggregated"].as_u64().unwrap_or(1))
            .sum();
        assert_eq!(listed as usize, expected, "{name}");
    }
}

#[test]
fn sarif_split_over_runs_and_aggregated_past_the_last_says_so() {
    use aeplens::review::report::{IncidentReport, sarif};
    let (evidence, keys) = incident_store();
    let (corpus, keys, supplied) = common::inputs(
        &[&evidence.display().to_string()],
        Some(&keys.display().to_string()),
        None,
    );
    let ev = aeplens::analysis::evidence::Evidence::open(
        corpus,
        &keys,
        &aeplens::verify::Options::default(),
        &supplied,
    );
    let report = IncidentReport::of(ev.as_ref(), &keys, "aeplens report".into(), None, None);
    let total = ev.findings.len();
    assert!(total > 15_000, "{total}");
    // Runs of 6,000: every result listed over several runs, each its own category.
    let small = sarif::Limits {
        results_per_run: 6_000,
        runs: 20,
    };
    let doc: Value =
        serde_json::from_str(&sarif::render_within(&report, ev.as_ref(), small)).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), total.div_ceil(6_000));
    assert!(
        runs.iter()
            .all(|r| r["results"].as_array().unwrap().len() <= 6_000)
    );
    assert_eq!(runs[0]["properties"]["aeplens"]["parts"], runs.len());
    let categories: std::collections::HashSet<&str> = (runs.iter())
        .map(|r| r["automationDetails"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(categories.len(), runs.len());
    // Two runs of 5,000: what does not fit is counted, one result a rule, and said.
    let tight = sarif::Limits {
        results_per_run: 5_000,
        runs: 2,
    };
    let doc: Value =
        serde_json::from_str(&sarif::render_within(&report, ev.as_ref(), tight)).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let results: Vec<&Value> = runs
        .iter()
        .flat_map(|r| r["results"].as_array().unwrap())
        .collect();
    assert!(results.len() <= 10_000);
    let counted: u64 = results
        .iter()
        .map(|r| r["properties"]["aggregated"].as_u64().unwrap_or(1))
        .sum();
    assert_eq!(counted as usize, total, "nothing dropped");
    let aggregate = results
        .iter()
        .find(|r| r["properties"]["aggregated"].is_u64())
        .expect("an aggregate");
    assert!(
        aggregate["message"]["text"]
            .as_str()
            .unwrap()
            .contains("are not listed one by one"),
        "{aggregate}"
    );
}

/// The demo, the hostile store, the 20k store, and a store with a torn last line (a load
/// error), as `report` arguments.
fn sets_with_a_load_error() -> Vec<(&'static str, Vec<String>)> {
    let mut sets = evidence_sets();
    sets.push((
        "torn",
        vec![
            "--keys".into(),
            "tests/fixtures/reference-stores/keys.json".into(),
            "tests/fixtures/reference-stores/crash_partial_last_line.ndjson".into(),
        ],
    ));
    sets
}

const JUNIT_CHECK: &str = r"
import sys
from lxml import etree
from junitparser import JUnitXml
xsd = etree.XMLSchema(etree.parse(sys.argv[1]))
for path in sys.argv[2:]:
    doc = etree.parse(path)
    xsd.assertValid(doc)
    root = doc.getroot()
    cases = root.findall('.//testcase')
    assert int(root.get('tests')) == len(cases), (path, root.get('tests'), len(cases))
    errors = root.findall('.//testcase/error')
    assert int(root.get('errors')) == len(errors), (path, root.get('errors'), len(errors))
    for s in root.findall('testsuite'):
        assert int(s.get('tests')) == len(s.findall('testcase')), (path, s.get('name'))
        assert int(s.get('errors')) == len(s.findall('testcase/error')), (path, s.get('name'))
    parsed = JUnitXml.fromfile(path)
    assert sum(1 for suite in parsed for case in suite) == len(cases), path
    print(path, len(cases), len(errors))
";

#[test]
fn junit_is_read_by_junitparser_and_lxml_and_valid_for_jenkins() {
    let Some(py) = python() else {
        return;
    };
    let dir = scratch("junit");
    let mut files = Vec::new();
    for (name, evidence) in sets_with_a_load_error() {
        let path = dir.join(format!("{name}.xml"));
        std::fs::write(&path, output("report", "junit", &evidence)).unwrap();
        files.push(path.display().to_string());
    }
    let xsd = "tests/fixtures/consumers/junit-10.xsd";
    let mut args = vec![xsd];
    args.extend(files.iter().map(String::as_str));
    let out = run_python(&py, JUNIT_CHECK, &args).unwrap_or_else(|e| panic!("{e}"));
    // The torn store's load error is a test case in error.
    assert!(
        out.lines()
            .any(|l| l.contains("torn.xml") && l.ends_with(" 1")),
        "{out}"
    );
    // The hostile store's noncharacters are escapes a reader sees.
    let hostile = std::fs::read_to_string(dir.join("hostile.xml")).unwrap();
    assert!(
        hostile.contains("\\u{FFFE}") && !hostile.contains('\u{fffe}'),
        "{hostile}"
    );
}
