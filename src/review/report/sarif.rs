//! The report as SARIF 2.1.0, for CI and code-scanning upload: one rule per finding id with
//! its help text and `security-severity`, one result per finding with a physical location
//! (evidence file, line) and the JSON pointer of the field as a logical location, stable
//! `partialFingerprints`, and `automationDetails` naming the evidence set.

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

/// A SARIF artifact URI for an evidence path: relative paths as they are (resolved against
/// the run's base), `/`-separated, with what URIs cannot hold percent-encoded.
fn uri(path: &str) -> String {
    let mut out = String::new();
    for b in path.replace('\\', "/").bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
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

/// Renders the report; each result carries, in `properties.records`, the verdicts of the
/// records its locations name (the records its actions come from).
pub fn render(r: &IncidentReport, ev: crate::analysis::evidence::EvidenceRef) -> String {
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
    let mut results = Vec::new();
    for (index, g) in r.findings.iter().enumerate() {
        for f in &g.findings {
            let locations: Vec<Value> = f
                .locations
                .iter()
                .take(1)
                .map(|l| {
                    json!({
                        "physicalLocation": {
                            "artifactLocation": { "uri": uri(&l.path) },
                            "region": { "startLine": l.line },
                        },
                        "logicalLocations": [{
                            "fullyQualifiedName": l.pointer,
                            "kind": "member",
                        }],
                    })
                })
                .collect();
            let related: Vec<Value> = f
                .locations
                .iter()
                .skip(1)
                .enumerate()
                .map(|(i, l)| {
                    json!({
                        "id": i + 1,
                        "physicalLocation": {
                            "artifactLocation": { "uri": uri(&l.path) },
                            "region": { "startLine": l.line },
                        },
                        "message": { "text": format!("also at {}", if l.pointer.is_empty() { "the record" } else { &l.pointer }) },
                    })
                })
                .collect();
            let mut result = json!({
                "ruleId": f.id,
                "ruleIndex": index,
                "level": level(f.severity).0,
                "message": { "text": f.message },
                "locations": locations,
                "partialFingerprints": { "aeplensFinding/v1": f.fingerprint },
                "properties": { "run_id": f.run_id, "action_ids": f.action_ids, "evidence": f.evidence, "records": verdicts(f) },
            });
            if !related.is_empty() {
                result["relatedLocations"] = Value::Array(related);
            }
            results.push(result);
        }
    }
    // The evidence set: its inputs' digests, so two reports on the same evidence share it.
    let mut digests: Vec<&str> = r
        .inputs
        .iter()
        .filter_map(|i| i.sha256.as_deref())
        .collect();
    digests.sort_unstable();
    let set = crate::canon::sha256_hex(digests.join(",").as_bytes());
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "aeplens",
                "version": r.version,
                "semanticVersion": r.version,
                "rules": rules,
            }},
            "automationDetails": { "id": format!("aeplens/{}/", &set[..16]) },
            "artifacts": r.inputs.iter().map(|i| {
                let mut a = json!({ "location": { "uri": uri(&i.path) } });
                if let Some(h) = &i.sha256 { a["hashes"] = json!({ "sha-256": h }); }
                if let Some(b) = i.bytes { a["length"] = json!(b); }
                a
            }).collect::<Vec<_>>(),
            "invocations": [{ "executionSuccessful": true, "commandLine": r.command }],
            "results": results,
        }],
    });
    let mut s = serde_json::to_string_pretty(&inert(doc)).unwrap_or_default();
    s.push('\n');
    s
}
