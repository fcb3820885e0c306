//! The report as SARIF 2.1.0, for CI and code-scanning upload: one rule per finding id with
//! its help text and `security-severity`, one result per finding with a physical location
//! (evidence file, line) and the JSON pointer of the field as a logical location, stable
//! `partialFingerprints` (GitHub's `primaryLocationLineHash` among them), and
//! `automationDetails` naming the evidence set.
//!
//! GitHub code scanning refuses a run over 25,000 results and a file over 20 runs: the
//! results are split over as many runs as they need (each its own category, and each saying
//! which part it is); past 20 runs, the rest of each rule's results is one result that
//! counts them. Artifact URIs are relative to `%SRCROOT%` (the working directory, given in
//! `originalUriBaseIds`) or absolute `file:` URIs, never a path as typed.

use super::IncidentReport;
use crate::model::finding::Severity;
use serde_json::{Value, json};
use std::fmt::Write as _;

/// SARIF level and the `security-severity` score (0–10) of a severity.
fn level(s: Severity) -> (&'static str, &'static str) {
    match s {
        Severity::High => ("error", "8.0"),
        Severity::Medium => ("warning", "5.5"),
        Severity::Low => ("note", "3.0"),
        Severity::Info => ("note", "0.0"),
    }
}

/// GitHub code scanning's limits on one SARIF file.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub results_per_run: usize,
    pub runs: usize,
}

/// The limits GitHub documents ("SARIF support for code scanning": 25,000 results a run,
/// 20 runs a file).
pub const GITHUB: Limits = Limits {
    results_per_run: 25_000,
    runs: 20,
};

/// The base the relative artifact URIs resolve against: the working directory.
const SRCROOT: &str = "%SRCROOT%";

/// Percent-encodes what a URI path cannot hold (`/` kept).
fn encode(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The `artifactLocation` of an evidence path: relative to `%SRCROOT%` when the file is
/// under the working directory, else an absolute `file:` URI; standard input (`-`) is
/// named relative to `STDIN`, whose description says so.
fn artifact_location(path: &str, cwd: &std::path::Path) -> Value {
    if path == "-" {
        return json!({ "uri": "stdin", "uriBaseId": "STDIN" });
    }
    let given = std::path::Path::new(path);
    let absolute = std::path::absolute(given).unwrap_or_else(|_| given.to_path_buf());
    // `..` and `.` resolved by hand: the file may be gone, and links are not followed.
    let mut normal = std::path::PathBuf::new();
    for part in absolute.components() {
        match part {
            std::path::Component::ParentDir => {
                normal.pop();
            }
            std::path::Component::CurDir => {}
            other => normal.push(other),
        }
    }
    let slashed = |p: &std::path::Path| p.to_string_lossy().replace('\\', "/");
    match normal.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => {
            json!({ "uri": encode(&slashed(rel)), "uriBaseId": SRCROOT })
        }
        _ => {
            let abs = slashed(&normal);
            let abs = if abs.starts_with('/') {
                abs
            } else {
                format!("/{abs}")
            };
            json!({ "uri": format!("file://{}", encode(&abs)) })
        }
    }
}

/// Message text with `[` and `]` escaped: SARIF reads `[text](n)` in a message as a link.
fn message(text: &str) -> Value {
    json!({ "text": text.replace('[', "\\[").replace(']', "\\]") })
}

/// Every string of a JSON value with terminal controls and bidi overrides shown as escapes:
/// code-scanning UIs display these texts, and an override must not reorder what they show.
fn inert(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(crate::model::text::sanitize(&s).into_owned()),
        Value::Array(items) => Value::Array(items.into_iter().map(inert).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, inert(v))).collect()),
        other => other,
    }
}

/// Renders the report for GitHub's limits ([`render_within`]).
pub fn render(r: &IncidentReport, ev: crate::analysis::evidence::EvidenceRef) -> String {
    render_within(r, ev, GITHUB)
}

/// Renders the report; each result carries, in `properties.records`, the verdicts of the
/// records its locations name (the records its actions come from). No run holds more than
/// `limits.results_per_run` results and the file no more than `limits.runs` runs.
pub fn render_within(
    r: &IncidentReport,
    ev: crate::analysis::evidence::EvidenceRef,
    limits: Limits,
) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    // Each input's location made once: every finding's locations are in the inputs.
    let known: std::collections::HashMap<&str, Value> = (r.inputs.iter())
        .map(|i| (i.path.as_str(), artifact_location(&i.path, &cwd)))
        .collect();
    let locate = |path: &str| {
        known
            .get(path)
            .cloned()
            .unwrap_or_else(|| artifact_location(path, &cwd))
    };
    let verdicts = |f: &crate::model::finding::Finding| -> Vec<Value> {
        let mut seen: Vec<usize> = Vec::new();
        for l in &f.locations {
            if let Some(i) = ev.corpus.index_at(&l.path, l.line)
                && !seen.contains(&i)
            {
                seen.push(i);
            }
        }
        (seen.into_iter())
            .filter_map(|i| ev.report.records.get(i))
            .map(|v| json!(crate::verify::verdict::RecordVerdict::of(v)))
            .collect()
    };
    let rules: Vec<Value> = r
        .findings
        .iter()
        .map(|g| {
            let (_, score) = level(g.severity);
            json!({
                "id": g.id,
                "name": g.id.trim_start_matches("F-").replace('-', "_").to_lowercase(),
                "shortDescription": { "text": g.description },
                "fullDescription": { "text": g.description },
                "help": { "text": format!("{} (aeplens finding {}; severity {}).", g.description, g.id, g.severity.name()) },
                "defaultConfiguration": { "level": level(g.severity).0 },
                "properties": { "security-severity": score, "tags": ["security", "aep"] },
            })
        })
        .collect();
    let result_of = |index: usize, f: &crate::model::finding::Finding| {
        let place = |l: &crate::model::finding::Location| {
            json!({
                "artifactLocation": locate(&l.path),
                "region": { "startLine": l.line },
            })
        };
        let locations: Vec<Value> = (f.locations.iter().take(1))
            .map(|l| {
                json!({
                    "physicalLocation": place(l),
                    "logicalLocations": [{ "fullyQualifiedName": l.pointer, "kind": "member" }],
                })
            })
            .collect();
        // GitHub keeps a location's own related locations to 1,000 a result.
        let related: Vec<Value> = (f.locations.iter().skip(1).take(999).enumerate())
            .map(|(i, l)| {
                json!({
                    "id": i + 1,
                    "physicalLocation": place(l),
                    "message": message(&format!("also at {}", if l.pointer.is_empty() { "the record" } else { &l.pointer })),
                })
            })
            .collect();
        let mut result = json!({
            "ruleId": f.id,
            "ruleIndex": index,
            "level": level(f.severity).0,
            "message": message(&f.message),
            "locations": locations,
            "partialFingerprints": {
                "aeplensFinding/v1": f.fingerprint,
                // GitHub's own key (it reads no other): the stable fingerprint, occurrence 1.
                "primaryLocationLineHash": format!("{}:1", &f.fingerprint[..f.fingerprint.len().min(16)]),
            },
            "properties": { "run_id": f.run_id, "action_ids": f.action_ids, "evidence": f.evidence, "records": verdicts(f) },
        });
        if !related.is_empty() {
            result["relatedLocations"] = Value::Array(related);
        }
        result
    };
    // Results in rule order, cut into runs of at most `results_per_run`; past the last run
    // allowed, one result per rule counts what is left of it.
    let total: usize = r.findings.iter().map(|g| g.findings.len()).sum();
    let per_run = limits.results_per_run.max(1);
    // When all do not fit, room is kept for one result a rule counting the rest.
    let capacity = limits.runs.max(1) * per_run;
    let listable = if total <= capacity {
        total
    } else {
        capacity.saturating_sub(r.findings.len())
    };
    let mut runs: Vec<Vec<Value>> = Vec::new();
    // A result into the last run, or a new one when it is full.
    let push = |runs: &mut Vec<Vec<Value>>, result: Value| match runs.last_mut() {
        Some(run) if run.len() < per_run => run.push(result),
        _ => runs.push(vec![result]),
    };
    let mut listed = 0usize;
    let mut aggregated: Vec<Value> = Vec::new();
    for (index, g) in r.findings.iter().enumerate() {
        let mut left = 0usize;
        for f in &g.findings {
            if listed >= listable {
                left += 1;
                continue;
            }
            push(&mut runs, result_of(index, f));
            listed += 1;
        }
        if left > 0 {
            let first = &g.findings[g.findings.len() - left];
            let mut summary = result_of(index, first);
            summary["message"] = message(&format!(
                "{left} more {} findings are not listed one by one (GitHub takes at most {} runs of {} results); `aeplens findings` lists every one",
                g.id, limits.runs, per_run
            ));
            summary["partialFingerprints"]["aeplensFinding/v1"] =
                json!(format!("aggregate-{}", g.id));
            summary["partialFingerprints"]["primaryLocationLineHash"] =
                json!(format!("aggregate-{}:1", g.id));
            summary["properties"]["aggregated"] = json!(left);
            aggregated.push(summary);
        }
    }
    for summary in aggregated {
        push(&mut runs, summary);
    }
    // The evidence set: its inputs' digests, so two reports on the same evidence share it.
    let mut digests: Vec<&str> = r
        .inputs
        .iter()
        .filter_map(|i| i.sha256.as_deref())
        .collect();
    digests.sort_unstable();
    let set = crate::canon::sha256_hex(digests.join(",").as_bytes());
    let mut bases = json!({
        SRCROOT: { "uri": format!("file://{}/", encode(cwd.to_string_lossy().replace('\\', "/").trim_end_matches('/'))) },
    });
    if r.inputs.iter().any(|i| i.path == "-") {
        bases["STDIN"] = json!({ "description": { "text": "standard input: the evidence was piped to aeplens" } });
    }
    if runs.is_empty() {
        runs.push(Vec::new());
    }
    let parts = runs.len();
    let doc_runs: Vec<Value> = (runs.into_iter().enumerate())
        .map(|(i, results)| {
            // One category a run: GitHub refuses two runs of one tool and category.
            let category = if parts == 1 {
                format!("aeplens/{}/", &set[..16])
            } else {
                format!("aeplens/{}/part-{}-of-{parts}/", &set[..16], i + 1)
            };
            let mut run = json!({
                "tool": { "driver": {
                    "name": "aeplens",
                    "version": r.version,
                    "semanticVersion": r.version,
                    "rules": rules,
                }},
                "automationDetails": { "id": category },
                "originalUriBaseIds": bases,
                "artifacts": r.inputs.iter().map(|i| {
                    let mut a = json!({ "location": locate(&i.path) });
                    if let Some(h) = &i.sha256 { a["hashes"] = json!({ "sha-256": h }); }
                    if let Some(b) = i.bytes { a["length"] = json!(b); }
                    a
                }).collect::<Vec<_>>(),
                "invocations": [{ "executionSuccessful": true, "commandLine": r.command }],
                "properties": { "aeplens": {
                    "part": i + 1,
                    "parts": parts,
                    "findings": total,
                    "listed": listed,
                }},
                "results": results,
            });
            if let Some(capture) = &r.capture {
                run["properties"]["aeplens"]["capture"] = capture.clone();
            }
            run
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": doc_runs,
    });
    let mut s = serde_json::to_string_pretty(&inert(doc)).unwrap_or_default();
    s.push('\n');
    s
}
