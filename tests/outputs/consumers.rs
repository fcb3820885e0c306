//! Every output checked by what reads it, on the demo, on a hostile store (validly signed
//! records whose ids, tool names, key ids and member names carry markup, controls, bidi
//! overrides, U+2028/U+2029/U+0085, the noncharacters U+FFFE/U+FFFF, link syntax and bare
//! URLs, and actions with unusable times) and on a 20,000-record incident-shaped store:
//! GitHub's SARIF rules, junitparser + lxml + Jenkins' `junit-10.xsd`, the OTLP protobuf
//! definitions, Timesketch's import client, Chrome's flow binding, Graphviz and Mermaid
//! SVG read as XML, the HTML report in headless Chromium. The Python consumers live in a
//! virtual environment `scripts/test` makes under `target/consumers-venv`.

use crate::common;
use crate::incident;

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
    let (ev, keys) = common::open_evidence(
        &[&evidence.display().to_string()],
        Some(&keys.display().to_string()),
        None,
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

const OTLP_CHECK: &str = r"
import sys
from google.protobuf import json_format
from opentelemetry.proto.trace.v1.trace_pb2 import TracesData, Status
for path in sys.argv[1:]:
    spans = errors = lines = 0
    with open(path, encoding='utf-8') as f:
        for line in f:
            lines += 1
            data = json_format.Parse(line, TracesData())
            for rs in data.resource_spans:
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        spans += 1
                        assert span.start_time_unix_nano <= span.end_time_unix_nano
                        if span.status.code == Status.STATUS_CODE_ERROR:
                            errors += 1
    print(path, lines, spans, errors)
";

#[test]
fn otlp_lines_are_read_by_the_protobuf_definitions() {
    let Some(py) = python() else {
        return;
    };
    let dir = scratch("otlp");
    for (name, evidence) in evidence_sets() {
        let mut args = vec!["export", "--format", "otlp-json", "--no-index"];
        args.extend(evidence.iter().map(String::as_str));
        let (code, text, err) = aeplens(&args);
        assert_eq!(code, 0, "{err}");
        let path = dir.join(format!("{name}.jsonl"));
        std::fs::write(&path, &text).unwrap();
        let out = run_python(&py, OTLP_CHECK, &[&path.display().to_string()])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let counts: Vec<usize> = (out.split_whitespace().skip(1))
            .map(|n| n.parse().unwrap())
            .collect();
        let (lines, spans, errors) = (counts[0], counts[1], counts[2]);
        // What our own reading says: a line per run, ERROR exactly on failed/denied calls,
        // times in whole milliseconds as recorded (integer arithmetic).
        let docs: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let all: Vec<&Value> = (docs.iter())
            .flat_map(|d| {
                d["resourceSpans"][0]["scopeSpans"][0]["spans"]
                    .as_array()
                    .unwrap()
            })
            .collect();
        assert_eq!((lines, spans), (docs.len(), all.len()), "{name}");
        let attr = |s: &Value, key: &str| {
            (s["attributes"].as_array().unwrap().iter())
                .find(|a| a["key"] == key)
                .and_then(|a| a["value"]["stringValue"].as_str().map(str::to_string))
        };
        let failed = (all.iter())
            .filter(|s| {
                matches!(
                    attr(s, "aep.observed").as_deref(),
                    Some("failure" | "denied")
                )
            })
            .count();
        assert_eq!(
            errors, failed,
            "{name}: ERROR on every failed or denied call"
        );
        for s in &all {
            let nanos = s["startTimeUnixNano"].as_str().unwrap();
            if attr(s, "aep.time_unusable").is_none() {
                assert!(
                    nanos.ends_with("000000"),
                    "{name}: {nanos} is not the recorded ms"
                );
            }
        }
        let runs = (docs.iter())
            .map(|d| attr(&d["resourceSpans"][0]["resource"], "gen_ai.agent.run.id"))
            .collect::<std::collections::HashSet<_>>();
        assert_eq!(runs.len(), docs.len(), "{name}: one line per run");
        if name == "hostile" {
            assert_eq!(errors, 2, "the denied call that ran and the failed one");
            let clamped = (all.iter())
                .filter(|s| attr(s, "gen_ai.operation.name").is_some())
                .filter(|s| attr(s, "aep.time_unusable").is_some())
                .count();
            assert_eq!(clamped, 2, "-1 ms and year 2603");
            assert!(err.contains("clamped"), "said on stderr: {err}");
        }
    }
}

const TIMESKETCH_CHECK: &str = r"
import sys, pandas
from timesketch_import_client import importer
for path in sys.argv[1:]:
    streamer = importer.ImportStreamer()
    streamer._sketch = object()  # no server: the events stay in the streamer's buffer
    streamer._threshold_entry = 10**9
    streamer.add_file(path)
    events = streamer._data_lines
    with open(path, 'rb') as f:
        written = [l for l in f.read().split(b'\n') if l]
    assert len(events) == len(written), (path, len(events), len(written))
    for e in events:
        assert e.get('datetime'), e
    frame = streamer._fix_data_frame(pandas.DataFrame(events))
    assert frame['datetime'].notna().all(), path
    assert (frame['datetime'] != '').all(), path
    tagged = [e for e in events if e.get('tag')]
    print(path, len(events), len(tagged), sum(1 for e in events if 'time_unusable' in e))
";

#[test]
fn timesketch_reads_every_event_with_a_datetime_and_the_marks_as_tags() {
    use aeplens::review::file::{EvidenceSet, KeyRef, Review};
    use aeplens::review::marks::{Mark, Target, Verdict};
    let Some(py) = python() else {
        return;
    };
    let dir = scratch("timesketch");
    // A review of the demo: act-003 marked root cause, with a note.
    let (ev, keys) = common::open_evidence(
        &["assets/demo/evidence"],
        Some("assets/demo/keys.json"),
        Some("assets/demo/leases.ndjson"),
    );
    let node = ev
        .analysis
        .graph
        .find(&ev.corpus, "run-deploy-0042", "act-003")
        .unwrap();
    let mut review = Review::new(EvidenceSet::of(&ev.corpus), KeyRef::all(&keys));
    let mut mark = Mark::new(
        Target::action(&ev.corpus, &ev.analysis, node).unwrap(),
        Verdict::RootCause,
    );
    mark.note = format!("re-approved with drifted arguments {HOSTILE}");
    review.marks.push(mark);
    let review_path = dir.join("review.json");
    review.write(&review_path).unwrap();
    let mut files = Vec::new();
    for (name, mut evidence) in evidence_sets() {
        if name == "demo" {
            evidence.splice(
                0..0,
                ["--review".to_string(), review_path.display().to_string()],
            );
        } else {
            evidence.insert(0, "--no-review".into());
        }
        let path = dir.join(format!("{name}.jsonl"));
        std::fs::write(&path, output("export", "timesketch", &evidence)).unwrap();
        files.push(path.display().to_string());
    }
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let out = run_python(&py, TIMESKETCH_CHECK, &args).unwrap_or_else(|e| panic!("{e}"));
    let line = |name: &str| -> Vec<usize> {
        let l = out
            .lines()
            .find(|l| l.contains(&format!("{name}.jsonl")))
            .unwrap();
        l.split_whitespace()
            .skip(1)
            .map(|n| n.parse().unwrap())
            .collect()
    };
    assert_eq!(line("demo")[1], 1, "the marked action is tagged: {out}");
    assert_eq!(line("hostile")[2], 1, "year 2603 said unusable: {out}");
    let demo = std::fs::read_to_string(dir.join("demo.jsonl")).unwrap();
    assert!(demo.contains("\"tag\":[\"aeplens-root-cause\"]"), "{demo}");
    assert!(
        demo.contains("re-approved with drifted arguments"),
        "{demo}"
    );
    // The line separators are JSON escapes, never raw.
    let hostile = std::fs::read_to_string(dir.join("hostile.jsonl")).unwrap();
    for raw in ['\u{2028}', '\u{2029}', '\u{85}'] {
        assert!(!hostile.contains(raw) && !demo.contains(raw), "{raw:?} raw");
    }
}

/// Chrome's flow binding (the Trace Event Format, as DevTools and Perfetto apply it): a
/// flow step binds to the slice on its pid and tid that encloses its time, in its
/// category; the two ends of one flow share id and category.
#[test]
fn chrome_trace_flows_bind_to_their_slices() {
    for (name, evidence) in evidence_sets() {
        let mut args = vec!["export", "--format", "chrome-trace", "--no-index"];
        args.extend(evidence.iter().map(String::as_str));
        let (code, text, err) = aeplens(&args);
        assert_eq!(code, 0, "{err}");
        let trace: Value = serde_json::from_str(&text).unwrap();
        let events = trace["traceEvents"].as_array().unwrap();
        let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        let flows: Vec<&Value> = events
            .iter()
            .filter(|e| matches!(e["ph"].as_str(), Some("s" | "f")))
            .collect();
        for f in &flows {
            let ts = f["ts"].as_f64().unwrap();
            let bound = slices.iter().any(|s| {
                let (start, dur) = (s["ts"].as_f64().unwrap(), s["dur"].as_f64().unwrap());
                s["pid"] == f["pid"]
                    && s["tid"] == f["tid"]
                    && s["cat"] == f["cat"]
                    && start <= ts
                    && ts <= start + dur
            });
            assert!(bound, "{name}: flow step binds to no slice: {f}");
            let ends: Vec<&&Value> = flows.iter().filter(|g| g["id"] == f["id"]).collect();
            assert_eq!(ends.len(), 2, "{name}: {f}");
            assert!(ends.iter().all(|g| g["cat"] == f["cat"]), "{name}: {f}");
        }
        if name == "demo" {
            assert_eq!(flows.len(), 2, "the demo's deny→re-approval arrow");
        }
    }
}

/// The text of an SVG read as XML: `Err` with the parser's complaint.
fn xml_ok(svg: &str) -> Result<(), String> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(svg, options)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn graphviz_and_mermaid_render_svg_an_xml_parser_accepts() {
    let dir = scratch("svg");
    // Graphviz.
    if std::process::Command::new("dot").arg("-V").output().is_ok() {
        for (name, evidence) in evidence_sets() {
            let dot = output("export", "dot", &evidence);
            let path = dir.join(format!("{name}.dot"));
            std::fs::write(&path, dot).unwrap();
            // The layered layout of the 20,000-record store's 2,000 run clusters takes
            // Graphviz a minute and a half; `osage`, which lays clusters out side by side
            // (docs/commands.md), renders the same file, every label, in about a second.
            let layout = if name == "incident-20k" {
                "osage"
            } else {
                "dot"
            };
            let out = std::process::Command::new("dot")
                .arg(format!("-K{layout}"))
                .arg("-Tsvg")
                .arg(&path)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let svg = String::from_utf8(out.stdout).unwrap();
            xml_ok(&svg).unwrap_or_else(|e| panic!("{name}: dot's SVG: {e}"));
        }
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "Graphviz is required in CI"
        );
    }
    // Mermaid, rendered by mermaid.js in headless Chromium (SVG labels, no HTML).
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mermaid/mermaid.min.js");
    let Some(bin) = common::chromium() else {
        return;
    };
    if !script.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing: scripts/test fetches it",
            script.display()
        );
        eprintln!("skipped: no {}", script.display());
        return;
    }
    for (name, evidence) in evidence_sets() {
        let mermaid = output("export", "mermaid", &evidence);
        assert!(
            mermaid.len() < 50_000,
            "{name}: Mermaid refuses {} characters",
            mermaid.len()
        );
        let page = dir.join(format!("{name}-mermaid.html"));
        let text = serde_json::to_string(&mermaid)
            .unwrap()
            .replace("</", "<\\/");
        std::fs::write(
            &page,
            format!(
                "<!doctype html><html><body><pre id=\"out\">pending</pre><script src=\"file://{}\"></script><script>\
                 mermaid.initialize({{startOnLoad: false, securityLevel: 'strict', htmlLabels: false, flowchart: {{htmlLabels: false}}}});\
                 mermaid.render('g', {text}).then(r => {{ document.getElementById('out').textContent = r.svg; }},\
                 e => {{ document.getElementById('out').textContent = 'ERROR ' + e; }});</script></body></html>",
                script.display()
            ),
        )
        .unwrap();
        let dom = common::run_chromium(
            &bin,
            &dir.join(format!("profile-{name}")),
            &[
                "--dump-dom",
                "--allow-file-access-from-files",
                "--virtual-time-budget=10000",
            ],
            &page,
        );
        let inner = dom
            .split("<pre id=\"out\">")
            .nth(1)
            .and_then(|s| s.split("</pre>").next())
            .unwrap_or_default();
        let svg = inner
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&nbsp;", "\u{a0}")
            .replace("&amp;", "&");
        assert!(
            svg.starts_with("<svg"),
            "{name}: mermaid did not render: {inner}"
        );
        xml_ok(&svg).unwrap_or_else(|e| panic!("{name}: mermaid's SVG: {e}"));
    }
}

/// The HTML report in headless Chromium: no console message on any of the three, and the
/// 20,000-record report prints to a document, not a thousand pages.
#[test]
fn the_html_report_loads_without_a_console_error_and_prints_short() {
    let Some(bin) = common::chromium() else {
        return;
    };
    let dir = scratch("html");
    for (name, evidence) in evidence_sets() {
        let page = dir.join(format!("{name}.html"));
        std::fs::write(&page, output("report", "html", &evidence)).unwrap();
        let out = std::process::Command::new(&bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--enable-logging=stderr",
                "--v=0",
                "--virtual-time-budget=2000",
            ])
            .arg(format!(
                "--user-data-dir={}",
                dir.join(format!("p-{name}")).display()
            ))
            .arg(format!(
                "--print-to-pdf={}",
                dir.join(format!("{name}.pdf")).display()
            ))
            .arg(format!("file://{}", page.display()))
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&out.stderr);
        let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
        assert!(console.is_empty(), "{name}: {console:#?}");
        let pdf = std::fs::read(dir.join(format!("{name}.pdf"))).unwrap();
        // Page objects (`/Type /Page`, not `/Pages`).
        let pages = [&b"/Type /Page"[..], b"/Type/Page"]
            .iter()
            .map(|p| {
                (pdf.windows(p.len() + 1))
                    .filter(|w| w.starts_with(p) && w[p.len()] != b's')
                    .count()
            })
            .sum::<usize>();
        assert!(pages >= 1, "{name}: a PDF");
        if name == "incident-20k" {
            assert!(pages < 80, "{name}: {pages} pages");
        }
    }
}

const MARKDOWN_CHECK: &str = r"
import sys, cmarkgfm
for path in sys.argv[1:]:
    html = cmarkgfm.github_flavored_markdown_to_html(open(path, encoding='utf-8').read())
    links = html.count('<a ')
    print(path, links)
";

/// GitHub's Markdown (cmark-gfm with its extensions) makes no link of record text: bare
/// URLs, `www.` names and email addresses in evidence stay text.
#[test]
fn markdown_record_text_stays_text_on_github() {
    let Some(py) = python() else {
        return;
    };
    let dir = scratch("markdown");
    let mut files = Vec::new();
    for (name, evidence) in evidence_sets() {
        let path = dir.join(format!("{name}.md"));
        std::fs::write(&path, output("report", "md", &evidence)).unwrap();
        files.push(path.display().to_string());
    }
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let out = run_python(&py, MARKDOWN_CHECK, &args).unwrap_or_else(|e| panic!("{e}"));
    for line in out.lines() {
        assert!(line.ends_with(" 0"), "links made of record text: {line}");
    }
    let hostile = std::fs::read_to_string(dir.join("hostile.md")).unwrap();
    assert!(
        hostile.contains("bare.example"),
        "the URL is there, as text"
    );
}

/// The waterfall's axis labels are centred on their ticks: the last one needs half its
/// width right of the axis (8 characters of 11 px monospace, 0.6 em each), inside the SVG.
#[test]
fn the_waterfalls_last_axis_label_is_inside_its_svg() {
    let html = output("report", "html", &evidence_sets()[0].1);
    let svg_start = html
        .find("aria-label=\"waterfall of run")
        .expect("a waterfall");
    let svg = &html[html[..svg_start].rfind("<svg").unwrap()..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    let attr = |tag: &str, name: &str| -> f64 {
        let at = tag.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        tag[at..at + tag[at..].find('"').unwrap()].parse().unwrap()
    };
    let width = attr(svg, "width");
    let last_tick = svg
        .match_indices("<text x=")
        .map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap()])
        .filter(|t| t.contains("text-anchor=\"middle\""))
        .last()
        .expect("tick labels");
    let x = attr(last_tick, "x");
    assert!(
        x + 8.0 * 11.0 * 0.6 / 2.0 <= width,
        "label at {x} in an SVG {width} wide"
    );
}
