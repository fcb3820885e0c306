//! Findings (analysis-rules §6): what a post-incident reviewer is hunting for, each
//! with a severity, the actions it concerns and the fields that prove it.

use super::Analysis;
use super::graph::{GraphProblem, NodeId};
use crate::load::Corpus;
use crate::model::finding::{Finding, Location, Severity};
use crate::model::json::Obj;
use crate::model::{Action, Record, Source};
use crate::verify::RecordResult;
use crate::verify::semantic::{RuleSeverity, Violation};
use rayon::prelude::*;
use serde_json::json;
use std::collections::HashSet;

/// A finding and the time it is sorted by.
pub type Timed = (Finding, Option<f64>);

/// Findings kept packed ([`Finding::encode`]) between the batches of an analysis in
/// batches: a large store has a hundred thousand findings, ~540 bytes each as `Timed`
/// and about half that packed, and they would otherwise pile up beside each batch.
#[derive(Debug, Default)]
pub struct Packed {
    /// One allocation a batch, let go of as it is read back.
    batches: Vec<Box<[u8]>>,
    files: crate::model::finding::FileNumbers,
    count: usize,
}

impl Packed {
    /// Packs a batch's findings.
    pub fn push(&mut self, found: &[Timed]) {
        let mut w = crate::model::codec::Writer::default();
        for (finding, time) in found {
            finding.encode(&mut w, &mut self.files);
            w.opt_f64(*time);
        }
        self.count += found.len();
        // A copy of exactly its length (an allocator may keep a shrunk vector's block).
        self.batches.push(w.bytes[..].into());
    }

    /// Every finding packed, in the order pushed.
    pub fn unpack(self) -> Vec<Timed> {
        let mut out = Vec::with_capacity(self.count);
        for batch in self.batches {
            let mut r = crate::model::codec::Reader::new(&batch);
            while !r.is_empty() {
                let timed = Finding::decode(&mut r, &self.files)
                    .and_then(|f| Some((f, r.opt_f64()?)))
                    .expect("bytes Packed::push wrote");
                out.push(timed);
            }
        }
        out
    }
}

fn finding(
    id: &'static str,
    severity: Severity,
    record: &Record,
    actions: &[&Action<'_>],
    message: String,
    evidence: serde_json::Value,
) -> Timed {
    (
        Finding {
            id,
            severity,
            run_id: record.run_id().map(str::to_string),
            action_ids: actions
                .iter()
                .filter_map(|a| a.id().map(str::to_string))
                .collect(),
            message,
            evidence: evidence.into(),
            locations: action_locations(id, record, actions),
            fingerprint: String::new(),
            chain: None,
            tool: None,
        },
        actions
            .first()
            .and_then(|a| a.timestamp_ms())
            .or(record.created_at_ms()),
    )
}

/// Where a finding about `actions` of `record` is: each action, at the field the finding is
/// about when the action has it (the whole record when no action is named).
fn action_locations(id: &str, record: &Record, actions: &[&Action<'_>]) -> Vec<Location> {
    if actions.is_empty() {
        return vec![Location::record(&record.source)];
    }
    actions
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let field = match (id, i) {
                ("F-STATE-GAP", 0) => Some("post_state_digest"),
                ("F-STATE-GAP", _) => Some("pre_state_digest"),
                ("F-EXEC-AFTER-DENY", _) => Some("outcome"),
                ("F-DRIFT-EXECUTED", _) => Some("argument_drift"),
                ("F-COV-CREDENTIAL" | "F-COV-ROUTE-NOT-TEMPLATED", _) => {
                    Some("state_digest_coverage")
                }
                ("F-LEASE-OUTSIDE" | "F-LEASE-LABEL-CONTRADICTED", _) => {
                    Some("bounded_lease_evidence")
                }
                ("F-REAPPROVAL-SAME-PAYLOAD", _) => Some("approval_context_hash"),
                ("F-DECISION-SHADOWED", _) => Some("capability_decision"),
                ("F-UNKNOWN-CLASS-ALLOWED", _) => Some("side_effect_class"),
                _ => None,
            }
            .filter(|f| a.get(f).is_some());
            action_location(record, a, field)
        })
        .collect()
}

/// The action `a` of `record` (at `field`, when given).
fn action_location(record: &Record, a: &Action<'_>, field: Option<&str>) -> Location {
    match record.actions().position(|x| std::ptr::eq(x.0, a.0)) {
        Some(index) => location_at(&record.source, index, field),
        None => Location::record(&record.source),
    }
}

/// The `index`-th action object of the record at `source` (at `field`, when given).
fn location_at(source: &Source, index: usize, field: Option<&str>) -> Location {
    let index = index.to_string();
    let mut segments = vec!["actions", index.as_str()];
    segments.extend(field);
    Location::at(source, &segments)
}

/// Calls `f` with the record of node `a` and the actions of nodes `a` and `b`, `b`'s read
/// from the same copy of the record when they share one ([`Record::with_record`]).
fn with_two<R>(
    corpus: &Corpus,
    an: &Analysis,
    a: NodeId,
    b: NodeId,
    f: impl FnOnce(&Record, &Action<'_>, &Action<'_>) -> R,
) -> Option<R> {
    let (na, nb) = (&an.graph.nodes[a as usize], &an.graph.nodes[b as usize]);
    corpus.record(na.record as usize).with_record(|ra| {
        let x = ra.action_at(na.pos as usize)?;
        if na.record == nb.record {
            let y = ra.action_at(nb.pos as usize)?;
            return Some(f(ra, &x, &y));
        }
        corpus.record(nb.record as usize).with_record(|rb| {
            let y = rb.action_at(nb.pos as usize)?;
            Some(f(ra, &x, &y))
        })
    })
}

/// A finding's evidence: the members `keys` names of action `a`, as stored.
fn ev(a: &Action<'_>, keys: &[&str]) -> serde_json::Value {
    quoted_evidence(&a.quoted(keys))
}

/// A finding's evidence: the members an action has of those it quotes, as stored
/// ([`Action::quoted`]).
fn quoted_evidence(quoted: &Obj) -> serde_json::Value {
    (quoted.members.iter())
        .map(|(name, value)| {
            let name = name.lossy().into_owned();
            (name, serde_json::to_value(value).unwrap_or_default())
        })
        .collect()
}

/// Every finding the analysis makes (not those of the verifier).
pub fn analyse(corpus: &Corpus, an: &Analysis) -> Vec<Timed> {
    let g = &an.graph;
    // Actions are independent: checked in parallel, kept in node order. The nodes first
    // stored in one record are consecutive: they are checked together, so that a record
    // whose tree was let go is read again once, not once per finding.
    let mut groups: Vec<std::ops::Range<NodeId>> = Vec::new();
    for n in 0..g.nodes.len() as NodeId {
        match groups.last_mut() {
            Some(r) if g.nodes[r.start as usize].record == g.nodes[n as usize].record => {
                r.end = n + 1;
            }
            _ => groups.push(n..n + 1),
        }
    }
    let mut out: Vec<Timed> = groups
        .into_par_iter()
        .flat_map_iter(|nodes| {
            let mut found = Vec::new();
            per_record(corpus, an, nodes, &mut found);
            found
        })
        .collect();
    for gap in &an.gaps {
        let found = with_two(corpus, an, gap.from, gap.to, |record, from, to| {
            finding(
                "F-STATE-GAP",
                Severity::High,
                record,
                &[from, to],
                format!(
                    "state changed between {} and {} with nothing recorded in between",
                    from.id().unwrap_or("?"),
                    to.id().unwrap_or("?")
                ),
                json!({
                    "post_state_digest": gap.post,
                    "next_pre_state_digest": gap.pre,
                    "state_digest_kind": from.get("state_digest_kind"),
                }),
            )
        });
        out.extend(found);
    }
    for p in &g.problems {
        if let GraphProblem::Rewritten {
            node,
            first_record,
            record,
            fields,
        } = p
        {
            out.extend(rewritten(corpus, an, *node, *first_record, *record, fields));
        }
    }
    shadowed_decisions(corpus, an, &mut out);
    out
}

/// F-ACTION-REWRITTEN: node `node`'s copy in record `record` differs from the first copy,
/// in record `first_record`, within one record chain (V17).
fn rewritten(
    corpus: &Corpus,
    an: &Analysis,
    node: NodeId,
    first_record: u32,
    record: u32,
    fields: &[String],
) -> Option<Timed> {
    let at = &an.graph.nodes[node as usize];
    corpus.record(at.record as usize).with_record(|r| {
        let a = r.action_at(at.pos as usize)?;
        let later = corpus.record(record as usize);
        let first = corpus.record(first_record as usize);
        let (first_at, later_at) = (first.source.to_string(), later.source.to_string());
        let mut rewritten = finding(
            "F-ACTION-REWRITTEN",
            Severity::High,
            later,
            &[&a],
            format!(
                "V17: {} differs between chained snapshots {first_at} and {later_at} ({})",
                a.id().unwrap_or("?"),
                fields.join(", ")
            ),
            json!({ "first": first_at, "rewritten": later_at, "fields": fields }),
        );
        // The rewritten copy, then the first one (each in its own record).
        let copy_in = |r: &Record| {
            let id = a.id();
            r.facts()
                .actions
                .iter()
                .position(|(_, x)| id.is_some() && x.id() == id)
                .map_or_else(
                    || Location::record(&r.source),
                    |i| location_at(&r.source, i, None),
                )
        };
        rewritten.0.locations = vec![copy_in(later), copy_in(first)];
        Some(rewritten)
    })
}

/// F-DECISION-SHADOWED: the record-level list keeps the first decision per
/// (capability, subject, resource); an action showing a different one was shadowed.
fn shadowed_decisions(corpus: &Corpus, an: &Analysis, out: &mut Vec<Timed>) {
    let mut reported: HashSet<NodeId> = HashSet::new();
    for &ri in an.graph.runs.iter().flat_map(|r| r.records.iter()) {
        let record = corpus.record(ri as usize);
        if !record.facts().decision_shadowed {
            continue;
        }
        let seen = |id: &str| an.graph.find_from_record(corpus, ri as usize, id);
        record.with_record(|record| shadowed_in(record, seen, &mut reported, out));
    }
}

/// [`shadowed_decisions`] within one record.
fn shadowed_in(
    record: &Record,
    node_of: impl Fn(&str) -> Option<NodeId>,
    reported: &mut HashSet<NodeId>,
    out: &mut Vec<Timed>,
) {
    for a in record.actions() {
        let Some(d) = a.decision() else { continue };
        let Some(listed) = record.listed_decision(&d) else {
            continue;
        };
        if listed.outcome() == d.outcome() && listed.grant() == d.grant() {
            continue;
        }
        let Some(node) = a.id().and_then(&node_of) else {
            continue;
        };
        if !reported.insert(node) {
            continue;
        }
        out.push(finding(
                "F-DECISION-SHADOWED",
                Severity::Medium,
                record,
                &[&a],
                format!(
                    "{}: the record-level list shows an earlier decision {:?} for ({}, {}, {}); the action's {:?} survives only inside the action",
                    a.id().unwrap_or("?"),
                    listed.outcome().unwrap_or("?"),
                    d.str_field("capability").unwrap_or("?"),
                    d.str_field("subject").unwrap_or("?"),
                    d.str_field("resource").unwrap_or("?"),
                    d.outcome().unwrap_or("?"),
                ),
                json!({ "record_list": listed.0.get("decision"), "action": d.0.get("decision") }),
            ));
    }
}

/// Every finding — the verifier's, the invariants' and the analysis's — with its time,
/// unsorted ([`dedupe_and_sort`] orders them). `verdicts[i]` is record `i`'s.
pub fn all(corpus: &Corpus, verdicts: &[&RecordResult], an: &Analysis) -> Vec<Timed> {
    let mut timed: Vec<Timed> = analyse(corpus, an);
    for (i, result) in verdicts.iter().enumerate() {
        let record = corpus.record(i);
        let time = record.created_at_ms();
        timed.extend(result.findings.iter().map(|f| (f.clone(), time)));
        // V17's finding is F-ACTION-REWRITTEN, made by the analysis.
        let violations: Vec<_> = result
            .semantic
            .violations
            .iter()
            .filter(|v| v.rule != "V17")
            .collect();
        if violations.iter().any(|v| v.action_id.is_some()) {
            record.with_record(|record| push_violations(record, &violations, time, &mut timed));
        } else {
            // No action to find: the record's JSON is not read.
            push_violations(record, &violations, time, &mut timed);
        }
    }
    timed.extend(unsigned_among_signed(corpus, verdicts));
    identify(corpus, an, &mut timed);
    timed
}

/// The findings of a record's semantic violations (`time`: the record's), each at the
/// action it names.
fn push_violations(
    record: &Record,
    violations: &[&Violation],
    time: Option<f64>,
    timed: &mut Vec<Timed>,
) {
    for v in violations {
        let action = v
            .action_id
            .as_deref()
            .and_then(|id| record.actions().find(|a| a.id() == Some(id)));
        timed.push((
            Finding {
                id: v.rule,
                severity: match v.severity {
                    RuleSeverity::Error => Severity::Medium,
                    RuleSeverity::Warning => Severity::Low,
                },
                run_id: record.run_id().map(str::to_string),
                action_ids: v.action_id.iter().cloned().collect(),
                message: v.message.clone(),
                evidence: json!({ "record": record.source.to_string(), "rule": v.rule }).into(),
                locations: vec![action.map_or_else(
                    || Location::record(&record.source),
                    |a| action_location(record, &a, None),
                )],
                fingerprint: String::new(),
                chain: None,
                tool: None,
            },
            action.and_then(|a| a.timestamp_ms()).or(time),
        ));
    }
}

/// F-UNSIGNED-IN-SIGNED-RUN: a record with no signature in a run whose other records are
/// signed (whether or not their signatures verify). Nothing proves who wrote it, and an
/// appended or injected record looks exactly like this.
fn unsigned_among_signed(corpus: &Corpus, verdicts: &[&RecordResult]) -> Vec<Timed> {
    let mut signed: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, result) in verdicts.iter().enumerate() {
        if result.signed
            && let Some(run) = corpus.record(i).run_id()
        {
            *signed.entry(run).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    for (i, result) in verdicts.iter().enumerate() {
        let record = corpus.record(i);
        let Some(run) = record.run_id() else { continue };
        let Some(&others) = signed.get(run) else {
            continue;
        };
        if result.signed {
            continue;
        }
        out.push((
            Finding {
                id: "F-UNSIGNED-IN-SIGNED-RUN",
                severity: Severity::High,
                run_id: Some(run.to_string()),
                action_ids: Vec::new(),
                message: format!(
                    "{} carries no signature while {others} other record{} of its run {} signed: nothing proves who wrote it",
                    record.source,
                    if others == 1 { "" } else { "s" },
                    if others == 1 { "is" } else { "are" },
                ),
                evidence: json!({ "record": record.source.to_string(), "signed_records_in_run": others }).into(),
                locations: vec![Location::record(&record.source)],
                fingerprint: String::new(),
                chain: None,
                tool: None,
            },
            record.created_at_ms(),
        ));
    }
    out
}

/// The finding catalogue: `tests/findings/F-….json`, one case file per finding id — the
/// evidence that fires it, the findings of that id it must produce (pinned, message and
/// evidence included), and evidence that must not fire it. Every finding id the code can
/// produce has a case. `AEPLENS_UPDATE_CASES=1` rewrites `expected` from what the code does
/// (review the diff).
mod action;
use action::per_record;
pub use action::{check, checks};
pub mod fingerprints;
mod identity;
pub use identity::{dedupe_and_sort, identify};

#[cfg(test)]
mod catalogue;
