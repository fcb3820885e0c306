//! The output contract: every JSON document and NDJSON line carries `schema_version`, and
//! validates against its JSON Schema in `schema/` — on every fixture set, for the pinned
//! goldens of the demo, and for every JSON golden under `tests/*/snapshots/` (`check`,
//! `findings`, `show`, `chains`, `envelope`, `report --format json`, `diff`).

use crate::common;

use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, load_paths};
use aeplens::model::contract::{SCHEMA_VERSION, versioned};
use aeplens::verify::Options;
use common::fixtures;
use serde_json::Value;
use std::process::Command;

const COMMANDS: [&str; 8] = [
    "check", "findings", "show", "chains", "envelope", "report", "diff", "review",
];

fn validator(command: &str) -> jsonschema::Validator {
    let path = format!(
        "{}/schema/{command}.schema.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn assert_valid(command: &str, doc: &Value, what: &str) {
    assert_eq!(doc["schema_version"], SCHEMA_VERSION, "{what}");
    let errors: Vec<String> = validator(command)
        .iter_errors(doc)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} breaks schema/{command}.schema.json:\n{errors:#?}"
    );
}

/// One body of evidence every command runs on.
struct Set {
    name: &'static str,
    keys: String,
    leases: Option<String>,
    path: String,
}

impl Set {
    /// The command-line arguments naming this evidence.
    fn args(&self) -> Vec<String> {
        let mut args = vec!["--keys".to_string(), self.keys.clone()];
        if let Some(l) = &self.leases {
            args.extend(["--leases".to_string(), l.clone()]);
        }
        args.push(self.path.clone());
        args
    }
}

fn evidence_sets() -> Vec<Set> {
    let f = |p: &str| fixtures().join(p).display().to_string();
    let set = |name, keys: String, leases: Option<String>, path: String| Set {
        name,
        keys,
        leases,
        path,
    };
    vec![
        set(
            "demo",
            "assets/demo/keys.json".into(),
            Some("assets/demo/leases.ndjson".into()),
            "assets/demo/evidence".into(),
        ),
        set("reference", f("reference/keys.json"), None, f("reference")),
        set(
            "reference-stores",
            f("reference-stores/keys.json"),
            Some(f("reference-stores/reapproval_after_denial.leases.ndjson")),
            f("reference-stores"),
        ),
        set("ecosystem", f("ecosystem/keys.json"), None, f("ecosystem")),
        set(
            "rfc-final",
            f("rfc-final/keys.json"),
            Some(f("rfc-final/leases.ndjson")),
            f("rfc-final/evidence"),
        ),
    ]
}

fn aeplens(args: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .args(args)
        .env(
            "XDG_DATA_HOME",
            std::env::temp_dir().join("aeplens-test-no-reviews"),
        )
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

fn run_json(command: &str, evidence: &[String]) -> String {
    let mut args = vec![command.to_string()];
    if command != "envelope" {
        args.extend(["--format".into(), "json".into()]);
    }
    args.extend_from_slice(evidence);
    aeplens(&args)
}

/// NDJSON split on `\n` only: a record's U+2028 stays inside its line.
fn ndjson(text: &str) -> Vec<Value> {
    text.split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_command_validates_on_every_fixture_set() {
    for set in evidence_sets() {
        let (evidence, name) = (set.args(), set.name);
        for command in ["check", "findings", "chains", "report"] {
            let doc: Value = serde_json::from_str(&run_json(command, &evidence)).unwrap();
            assert_valid(command, &doc, &format!("{command} on {name}"));
        }
        let lines = ndjson(&run_json("envelope", &evidence));
        assert!(!lines.is_empty(), "{name}: no envelope");
        for (i, line) in lines.iter().enumerate() {
            assert_valid(
                "envelope",
                line,
                &format!("envelope line {} on {name}", i + 1),
            );
        }
    }
}

/// With the agent's telemetry (`--traces`): the capture axes, the `telemetry` member and
/// the capture findings validate too.
#[test]
fn every_command_validates_with_telemetry() {
    let mut evidence = evidence_sets().remove(0).args();
    let path = evidence.pop().unwrap();
    evidence.extend(["--traces".into(), "assets/demo/traces.jsonl".into(), path]);
    for command in ["check", "findings", "chains", "report"] {
        let doc: Value = serde_json::from_str(&run_json(command, &evidence)).unwrap();
        assert_valid(command, &doc, &format!("{command} with --traces"));
        let text = doc.to_string();
        assert!(
            text.contains("F-CAPTURE-GAP") || command == "chains",
            "{command}"
        );
    }
    let doc: Value = serde_json::from_str(&run_json("check", &evidence)).unwrap();
    assert_eq!(doc["records"][0]["capture"]["status"], "gaps");
    for action in ["act-005", "act-006", "act-007"] {
        let mut args = vec![action.to_string(), "--run".into(), "run-deploy-0042".into()];
        args.extend(evidence.iter().cloned());
        let doc: Value = serde_json::from_str(&run_json("show", &args)).unwrap();
        assert_valid("show", &doc, &format!("show {action} with --traces"));
        assert!(
            doc["telemetry"]["span"]["span_id"].is_string(),
            "{action}: {doc}"
        );
    }
}

/// With RFC 3161 tokens and anchors (`--tsa-certs`, `--anchors`): each token state, the
/// token facts, `anchored_through`, the `anchors` member and their findings validate.
#[test]
fn every_command_validates_with_timestamps_and_anchors() {
    let tsa = |f: &str| format!("tests/fixtures/tsa/{f}");
    for (anchors, stores) in [
        (
            "anchors_mid.ndjson",
            ["stamped.ndjson", "moved.ndjson", "expired.ndjson"],
        ),
        (
            "anchors_bad.ndjson",
            ["stamped.ndjson", "malformed.ndjson", "claim.ndjson"],
        ),
        (
            "anchors.ndjson",
            ["truncated.ndjson", "order.ndjson", "stamped_ec.ndjson"],
        ),
    ] {
        let mut evidence: Vec<String> = [
            "--keys",
            "keys.json",
            "--tsa-certs",
            "root.pem",
            "--anchors",
            anchors,
        ]
        .iter()
        .enumerate()
        .map(|(i, a)| if i % 2 == 1 { tsa(a) } else { (*a).to_string() })
        .collect();
        evidence.extend(stores.iter().map(|s| tsa(s)));
        for command in ["check", "findings", "chains", "report"] {
            let doc: Value = serde_json::from_str(&run_json(command, &evidence)).unwrap();
            assert_valid(command, &doc, &format!("{command} with {anchors}"));
        }
        let mut args = vec![
            "act-000".to_string(),
            "--run".into(),
            "run-tsa-stamped".into(),
        ];
        args.extend(evidence.iter().cloned());
        if anchors != "anchors.ndjson" {
            let doc: Value = serde_json::from_str(&run_json("show", &args)).unwrap();
            assert_valid("show", &doc, "show of a stamped action");
            assert!(
                doc.to_string().contains("proven by aeplens RSA TSA"),
                "{doc}"
            );
        }
    }
}

#[test]
fn every_command_validates_on_every_fixture_file_alone() {
    // A file alone has statuses and counts a whole set never shows (no chain path of
    // some status, no load error, one kind of record): every count is still present.
    let mut files = common::evidence_files(&fixtures(), None);
    files.push((
        "assets/demo/evidence/incident.ndjson".into(),
        Some("assets/demo/keys.json".into()),
    ));
    let validators: Vec<(&str, jsonschema::Validator)> =
        ["check", "findings", "chains", "report", "envelope"]
            .into_iter()
            .map(|c| (c, validator(c)))
            .collect();
    for (file, keys) in &files {
        let mut evidence = vec!["--no-index".to_string()];
        if let Some(k) = keys {
            evidence.extend(["--keys".to_string(), k.display().to_string()]);
        }
        evidence.push(file.display().to_string());
        let file = file.display();
        for (command, validator) in &validators {
            let out = run_json(command, &evidence);
            let docs = match *command {
                "envelope" => ndjson(&out),
                _ => vec![
                    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{command} {file}: {e}")),
                ],
            };
            for doc in docs {
                let errors: Vec<String> = (validator.iter_errors(&doc).take(3))
                    .map(|e| format!("{} at {}", e, e.instance_path()))
                    .collect();
                assert!(errors.is_empty(), "{command} on {file} alone: {errors:#?}");
            }
        }
    }
    assert!(files.len() > 100, "{}", files.len());
}

#[test]
fn show_validates_for_every_action_of_every_fixture_set() {
    let mut shown = 0;
    for set in evidence_sets() {
        let ring = common::keyring(std::path::Path::new(&set.keys));
        let mut supplied = SuppliedLeases::default();
        if let Some(l) = &set.leases {
            // A lease file may hold entries that are not leases; they are skipped.
            let _ = supplied.add_file(std::path::Path::new(l));
        }
        let corpus = Corpus::new(load_paths(std::slice::from_ref(&set.path)));
        let ev = Evidence::open(corpus, &ring, &Options::default(), &supplied);
        for node in 0..ev.analysis.graph.nodes.len() as u32 {
            let report = ev
                .analysis
                .show(&ev.corpus, node, &ev.findings, Some(&ev.report.records))
                .unwrap();
            assert_valid(
                "show",
                &versioned("show", &report),
                &format!("show node {node} of {}", set.name),
            );
            shown += 1;
        }
    }
    assert!(shown > 100, "actions shown: {shown}");
    // And once through the binary.
    assert_valid("show", &show_act_003(), "aeplens show act-003");
}

/// `aeplens show act-003 --format json` on the demo.
fn show_act_003() -> Value {
    let mut args: Vec<String> = [
        "show",
        "act-003",
        "--run",
        "run-deploy-0042",
        "--format",
        "json",
    ]
    .map(String::from)
    .to_vec();
    args.extend(evidence_sets().remove(0).args());
    serde_json::from_str(&aeplens(&args)).unwrap()
}

/// The demo's outputs, pinned: a change to any field shows up as a snapshot diff.
#[test]
fn demo_goldens() {
    let demo = evidence_sets().remove(0).args();
    let redact = |mut doc: Value| {
        if doc.get("version").is_some() {
            doc["version"] = "[version]".into();
        }
        doc
    };
    for command in ["check", "findings", "chains", "report"] {
        let doc: Value = serde_json::from_str(&run_json(command, &demo)).unwrap();
        insta::assert_json_snapshot!(format!("{command}_demo"), redact(doc));
    }
    insta::assert_json_snapshot!("show_demo", show_act_003());
    insta::assert_snapshot!("envelope_demo", run_json("envelope", &demo));
}

/// Every JSON golden under `tests/*/snapshots/` validates against the schema its name
/// says.
#[test]
fn every_json_golden_validates() {
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let goldens = (std::fs::read_dir(&tests).unwrap())
        .map(|area| area.unwrap().path().join("snapshots"))
        .filter(|dir| dir.is_dir())
        .flat_map(|dir| std::fs::read_dir(dir).unwrap());
    let mut checked = 0;
    for entry in goldens {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let command = if name.starts_with("outputs__contract__") {
            COMMANDS
                .iter()
                .find(|c| name.starts_with(&format!("outputs__contract__{c}_")))
        } else if name.contains("_show_") && name.ends_with("_json.snap") {
            Some(&"show")
        } else {
            None
        };
        let Some(command) = command else { continue };
        let text = std::fs::read_to_string(&path).unwrap();
        // An insta file: a `---` header, then the snapshot body.
        let body = text.splitn(3, "---\n").nth(2).unwrap();
        let docs = if *command == "envelope" {
            ndjson(body)
        } else {
            vec![serde_json::from_str(body).unwrap()]
        };
        for doc in &docs {
            assert_valid(command, doc, &name);
        }
        checked += 1;
    }
    assert!(checked >= 8, "JSON goldens validated: {checked}");
}

/// The schemas are strict: a missing field, an unknown field, a wrong type or a foreign
/// version is refused (so the tests above can fail).
#[test]
fn schemas_refuse_what_the_contract_does_not_say() {
    let demo = evidence_sets().remove(0).args();
    let good: Value = serde_json::from_str(&run_json("check", &demo)).unwrap();
    let v = validator("check");
    assert!(v.is_valid(&good));
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("summary");
    let mut unknown = good.clone();
    unknown["records"][0]["surprise"] = true.into();
    let mut retyped = good.clone();
    retyped["records"][0]["source"]["line"] = "1".into();
    let mut foreign = good.clone();
    foreign["schema_version"] = "2".into();
    let mut bad_status = good;
    bad_status["chain_paths"][0]["status"] = "fine".into();
    for (what, doc) in [
        ("missing summary", missing),
        ("unknown field", unknown),
        ("line as a string", retyped),
        ("schema_version 2", foreign),
        ("unknown chain status", bad_status),
    ] {
        assert!(!v.is_valid(&doc), "{what} validates");
    }
}

/// Findings carry where they are (file, line, JSON pointer) and a fingerprint that follows
/// the evidence, not the file's name or place: the same store elsewhere keeps every
/// fingerprint; an edited record changes the fingerprints of the findings about it.
#[test]
fn findings_are_located_and_fingerprints_follow_the_evidence_not_the_path() {
    let dir = common::run_dir("fingerprints");
    std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
    let original = std::fs::read_to_string("assets/demo/evidence/incident.ndjson").unwrap();
    let copy = dir.join("elsewhere/renamed.ndjson");
    std::fs::write(&copy, &original).unwrap();
    let findings = |path: &str| -> Vec<Value> {
        let out = aeplens(&[
            "findings".into(),
            "--format".into(),
            "json".into(),
            path.into(),
        ]);
        let doc: Value = serde_json::from_str(&out).unwrap();
        doc["findings"].as_array().unwrap().clone()
    };
    let here = findings("assets/demo/evidence/incident.ndjson");
    let there = findings(copy.to_str().unwrap());
    let prints = |list: &[Value]| -> Vec<String> {
        list.iter()
            .map(|f| f["fingerprint"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!here.is_empty());
    assert_eq!(
        prints(&here),
        prints(&there),
        "a moved store keeps its fingerprints"
    );
    let distinct: std::collections::HashSet<_> = prints(&here).into_iter().collect();
    assert_eq!(distinct.len(), here.len(), "one fingerprint per finding");
    // Every location names the file, a line and a pointer that resolves in that record.
    let lines: Vec<&str> = original.split('\n').collect();
    for f in &here {
        let locations = f["locations"].as_array().unwrap();
        assert!(!locations.is_empty(), "{f}");
        for l in locations {
            assert_eq!(l["path"], "assets/demo/evidence/incident.ndjson");
            let line = l["line"].as_u64().unwrap() as usize;
            let record: Value = serde_json::from_str(lines[line - 1]).unwrap();
            let pointer = l["pointer"].as_str().unwrap();
            assert!(
                record.pointer(pointer).is_some(),
                "{pointer} not in line {line}: {f}"
            );
        }
    }
    // Editing the state gap's record changes that finding's fingerprint.
    let gap = |list: &[Value]| {
        list.iter()
            .find(|f| f["id"] == "F-STATE-GAP")
            .map(|f| f["fingerprint"].clone())
            .unwrap()
    };
    let edited = original.replacen("\"deploy-bot\"", "\"deploy-bot-2\"", 3);
    let edited_path = dir.join("edited.ndjson");
    std::fs::write(&edited_path, edited).unwrap();
    assert_ne!(gap(&here), gap(&findings(edited_path.to_str().unwrap())));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `diff` in both modes: pinned on the demo and the reference chain, validated, and it
/// sees an action rewritten in a later snapshot (every copy is compared, not only the first).
#[test]
fn diff_of_two_stores_and_of_two_runs() {
    let keys = fixtures().join("reference/keys.json").display().to_string();
    let chain = fixtures()
        .join("reference/chain.ndjson")
        .display()
        .to_string();
    let tampered = fixtures()
        .join("reference/tampered_action_byte.ndjson")
        .display()
        .to_string();
    let stores: Value = serde_json::from_str(&aeplens(&[
        "diff".into(),
        "--format".into(),
        "json".into(),
        "--keys".into(),
        keys,
        chain,
        tampered,
    ]))
    .unwrap();
    assert_valid("diff", &stores, "diff of two stores");
    assert_eq!(stores["mode"], "stores");
    let changed = stores["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{stores:#}");
    assert_eq!(changed[0]["action_a"], "C009");
    assert_eq!(changed[0]["fields"], serde_json::json!(["tool_name"]));
    let new: Vec<&str> = stores["findings_new"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(new.contains(&"F-ACTION-REWRITTEN"), "{new:?}");
    let diff_runs = |format: &str| {
        aeplens(
            &[
                "diff",
                "--format",
                format,
                "--run",
                "run-deploy-0043",
                "--run",
                "run-deploy-0044",
                "assets/demo/evidence",
            ]
            .map(String::from),
        )
    };
    let runs: Value = serde_json::from_str(&diff_runs("json")).unwrap();
    assert_valid("diff", &runs, "diff of two runs");
    assert_eq!(
        runs["changed"][0]["decision"],
        serde_json::json!(["allow", "deny"])
    );
    insta::assert_json_snapshot!("diff_demo_runs", runs);
    let text = diff_runs("text");
    assert!(
        text.contains("~ act-001 [id]") && text.contains("decision allow → deny"),
        "{text}"
    );
    // Neither two paths nor two runs: a usage error.
    let out = Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .args(["diff", "assets/demo/evidence"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A review file with a mark of every kind and a session validates against
/// `schema/review.schema.json`, and a report carrying its marks against the report's.
#[test]
fn review_files_and_reports_with_marks_validate() {
    use aeplens::review::file::{ActionRef, EvidenceSet, KeyRef, Review, Session};
    use aeplens::review::marks::{Mark, Target, Verdict};
    let demo = evidence_sets().remove(0).args();
    let paths: Vec<String> = demo
        .iter()
        .filter(|a| a.ends_with("evidence"))
        .cloned()
        .collect();
    let keys = common::keyring(std::path::Path::new("assets/demo/keys.json"));
    let ev = Evidence::open(
        Corpus::new(load_paths(&paths)),
        &keys,
        &Options::default(),
        &SuppliedLeases::default(),
    );
    let node = ev
        .analysis
        .graph
        .find(&ev.corpus, "run-deploy-0042", "act-003")
        .unwrap();
    let mut review = Review::new(EvidenceSet::of(&ev.corpus), KeyRef::all(&keys));
    for (target, verdict) in [
        (
            Target::action(&ev.corpus, &ev.analysis, node).unwrap(),
            Verdict::RootCause,
        ),
        (
            Target::record(&ev.corpus, &ev.analysis, 0).unwrap(),
            Verdict::Benign,
        ),
        (Target::finding(&ev.findings[0]), Verdict::FollowUp),
        (
            Target::Action {
                run_id: "run-gone".into(),
                action_id: "act-404".into(),
                record_sha256: "0".repeat(64),
            },
            Verdict::Suspicious,
        ),
    ] {
        review.marks.push(Mark {
            target,
            verdict,
            note: "why\nand more".into(),
            created_at: "2026-12-01T00:00:00.000Z".into(),
            updated_at: "2026-12-01T00:00:00.000Z".into(),
        });
    }
    review.session = Some(Session {
        run_id: Some("run-deploy-0042".into()),
        action_id: Some("act-003".into()),
        filter: "is:marked".into(),
        tab: "lease".into(),
        list: "findings".into(),
        folded: vec![ActionRef {
            run_id: "run-deploy-0042".into(),
            action_id: "act-001".into(),
        }],
        zoom: 2.0,
        pan: 0.25,
    });
    let dir = common::run_dir("contract-review");
    let file = dir.join("review.json");
    review.write(&file).unwrap();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_valid("review", &doc, "a saved review file");
    // The schema refuses what the reader refuses.
    let mut unknown = doc.clone();
    unknown["marks"][0]["colour"] = "red".into();
    assert!(!validator("review").is_valid(&unknown));
    let mut verdict = doc.clone();
    verdict["marks"][0]["verdict"] = "guilty".into();
    assert!(!validator("review").is_valid(&verdict));
    // The report with these marks, in input order of decisiveness, validates.
    let mut args = vec![
        "report".to_string(),
        "--format".into(),
        "json".into(),
        "--review".into(),
        file.display().to_string(),
    ];
    args.extend(demo);
    let report: Value = serde_json::from_str(&aeplens(&args)).unwrap();
    assert_valid("report", &report, "report with a review");
    let marks = report["review"]["marks"].as_array().unwrap();
    let statuses: Vec<&str> = marks
        .iter()
        .map(|m| m["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["current", "gone", "current", "current"],
        "{marks:#?}"
    );
    assert_eq!(marks[0]["verdict"], "root-cause");
    assert_eq!(marks[0]["action"]["action_id"], "act-003");
    assert!(marks[2]["finding"]["fingerprint"].is_string());
    assert!(
        marks[3]["record"]
            .as_str()
            .unwrap()
            .contains("incident.ndjson:")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
