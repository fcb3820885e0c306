//! The semantic axis (L1): cross-field invariants of analysis-rules.md §5 that can be
//! decided from one record. Each violation carries its rule id.

use super::structural::BACKING;
use crate::model::drift::{Binding, Drift, DriftResult};
use crate::model::json::Json;
use crate::model::{Action, Record, SIDE_EFFECT_ORDER, side_effect_rank};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// How much a violated invariant weighs: errors fail the axis, warnings do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleSeverity {
    Error,
    Warning,
}

/// One violated invariant.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Violation {
    /// Rule id, `V1` … `V18`.
    #[serde(deserialize_with = "crate::model::name::interned")]
    pub rule: crate::model::name::Name,
    pub severity: RuleSeverity,
    pub message: String,
    pub action_id: Option<String>,
}

struct Out(Vec<Violation>);

impl Out {
    fn push(
        &mut self,
        rule: &'static str,
        severity: RuleSeverity,
        action: Option<&Action<'_>>,
        message: String,
    ) {
        self.0.push(Violation {
            rule,
            severity,
            message,
            action_id: action
                .and_then(super::super::model::Action::id)
                .map(str::to_string),
        });
    }
}

/// Runs every per-record invariant.
pub fn check(record: &Record) -> Vec<Violation> {
    let mut out = Out(Vec::new());
    v1_side_effect_max(record, &mut out);
    for a in record.actions() {
        v3_digest_needs_coverage(&a, &mut out);
        v4_deny_reason_only_on_deny(&a, &mut out);
        v5_lease_grant_needs_lease(&a, &mut out);
        v2_state_changing_matches_class(&a, &mut out);
        v6_v7_lease_evidence(&a, &mut out);
        v8_to_v11_drift_and_grant(record, &a, &mut out);
        v13_v14_coverage(&a, &mut out);
    }
    for d in record.decisions() {
        if d.str_field("deny_reason_class").is_some() && d.outcome() != Some("deny") {
            out.push(
                "V4",
                RuleSeverity::Error,
                None,
                format!(
                    "record-level decision for {:?} has deny_reason_class but decision {:?}",
                    d.str_field("capability").unwrap_or("?"),
                    d.outcome().unwrap_or("?")
                ),
            );
        }
    }
    v15_attribution(record, &mut out);
    v16_ids_and_parents(record, &mut out);
    v12_v18_parent_child(record, &mut out);
    out.0
}

/// Marks rules over RFC-proposed fields (analysis-rules §5).
const RFC_FINAL: &str = " (RFC v0.3 final shape)";

/// 2001-01-01T00:00:00Z: earlier action times come from the `performance.now()` bug.
pub const PLAUSIBLE_EPOCH_MS: f64 = 978_307_200_000.0;

fn v2_state_changing_matches_class(a: &Action<'_>, out: &mut Out) {
    if let (Some(changing), Some(class)) = (
        a.get("state_changing").and_then(Json::as_bool),
        a.side_effect_class(),
    ) && changing != (class != "read")
    {
        out.push(
            "V2",
            RuleSeverity::Warning,
            Some(a),
            format!("state_changing={changing} but side_effect_class={class:?}"),
        );
    }
}

fn v6_v7_lease_evidence(a: &Action<'_>, out: &mut Out) {
    let Some(ev) = a.get("bounded_lease_evidence") else {
        return;
    };
    let grant = a.decision().and_then(|d| d.grant());
    if grant != Some("bounded-lease") {
        out.push(
            "V6",
            RuleSeverity::Error,
            Some(a),
            format!(
                "bounded_lease_evidence under grant {:?}, not bounded-lease{RFC_FINAL}",
                grant.unwrap_or("none recorded")
            ),
        );
    }
    let lease_id = ev.get("lease_id").and_then(Json::as_str);
    if lease_id != a.str_field("scope_lease_id") {
        out.push(
            "V6",
            RuleSeverity::Error,
            Some(a),
            format!(
                "bounded_lease_evidence.lease_id {lease_id:?} differs from scope_lease_id {:?}{RFC_FINAL}",
                a.str_field("scope_lease_id")
            ),
        );
    }
    let n = |k: &str| ev.get(k).and_then(Json::as_f64);
    if let (Some(granted), Some(expires)) = (n("lease_granted_at_ms"), n("lease_expires_at_ms")) {
        if expires <= granted {
            out.push(
                "V7",
                RuleSeverity::Error,
                Some(a),
                format!(
                    "lease expires at {expires} ms, not after its grant at {granted} ms{RFC_FINAL}"
                ),
            );
        }
        if let Some(duration) = n("lease_duration_ms")
            && duration != expires - granted
        {
            out.push(
                "V7",
                RuleSeverity::Error,
                Some(a),
                format!(
                    "lease_duration_ms {duration} ≠ expires − granted = {}{RFC_FINAL}",
                    expires - granted
                ),
            );
        }
    }
}

fn v8_to_v11_drift_and_grant(record: &Record, a: &Action<'_>, out: &mut Out) {
    let drift = Drift::of(record, a);
    let decision = a.decision();
    if drift.binding == Binding::Mismatch {
        out.push(
            "V8",
            RuleSeverity::Error,
            Some(a),
            format!(
                "argument_drift.approval_or_lease_id {:?} is not the authority artifact {:?}{RFC_FINAL}",
                drift.bound_to.unwrap_or(""),
                drift.expected_binding.unwrap_or("(none recorded)")
            ),
        );
    }
    if let Some(grant) = decision.and_then(|d| d.str_field("approval_grant"))
        && grant != "none"
        && a.get("argument_drift").is_none()
    {
        out.push(
            "V9",
            RuleSeverity::Error,
            Some(a),
            format!("grant {grant:?} without argument_drift: the check must be explicit (not-checked){RFC_FINAL}"),
        );
    }
    let denied_drift = match drift.dialect {
        Some("RFC-final") => drift.result == DriftResult::Drifted,
        Some("JS v0.3") => drift.reason == Some("denied"),
        _ => false,
    };
    if denied_drift && decision.and_then(|d| d.outcome()) != Some("deny") {
        out.push(
            "V10",
            RuleSeverity::Error,
            Some(a),
            format!(
                "drift {} sits on decision {:?}, not deny",
                if drift.dialect == Some("RFC-final") {
                    "result drifted"
                } else {
                    "resolution denied"
                },
                decision
                    .and_then(|d| d.outcome())
                    .unwrap_or("(none recorded)")
            ),
        );
    }
    if let Some(Json::Object(o)) = a.get("argument_drift") {
        let resolution = o
            .get("resolution")
            .or_else(|| o.get("result"))
            .and_then(Json::as_str);
        if o.get("detected").and_then(Json::as_bool) == Some(true) && resolution == Some("matched")
        {
            out.push(
                "V10",
                RuleSeverity::Error,
                Some(a),
                "argument_drift detected=true with resolution matched is contradictory".into(),
            );
        }
        if resolution == Some("matched")
            && let (Some(x), Some(y)) = (drift.approved_digest, drift.observed_digest)
            && x != y
        {
            out.push(
                "V10",
                RuleSeverity::Error,
                Some(a),
                format!("drift says matched but approved {x} ≠ observed {y}"),
            );
        }
    }
    if decision.and_then(|d| d.grant()) == Some("one-shot-payload")
        && a.str_field("approval_context_hash").is_none()
    {
        out.push(
            "V11",
            RuleSeverity::Warning,
            Some(a),
            "one-shot-payload grant without approval_context_hash".into(),
        );
    }
}

fn v13_v14_coverage(a: &Action<'_>, out: &mut Out) {
    let cov = a.get("state_digest_coverage").and_then(Json::as_object);
    let field = |k: &str| cov.and_then(|c| c.get(k)).and_then(Json::as_str);
    match a.str_field("state_digest_kind") {
        Some("other") => {
            let namespaced = field("other_kind").is_some_and(|k| k.contains('.'));
            if !namespaced || field("coverage_schema_version").is_none() {
                out.push(
                    "V13",
                    RuleSeverity::Warning,
                    Some(a),
                    "other coverage needs a namespaced other_kind and a coverage_schema_version"
                        .into(),
                );
            }
        }
        Some("memory-bag" | "kv-snapshot")
            if field("durable_vs_scratch") == Some("mixed")
                && cov.and_then(|c| c.get("mixed_partition")).is_none() =>
        {
            out.push(
                "V14",
                RuleSeverity::Warning,
                Some(a),
                "mixed durable/scratch digest without mixed_partition".into(),
            );
        }
        _ => {}
    }
}

fn v12_v18_parent_child(record: &Record, out: &mut Out) {
    let actions: Vec<Action<'_>> = record.actions().collect();
    let by_id: HashMap<&str, &Action<'_>> = actions
        .iter()
        .filter_map(|a| a.id().map(|id| (id, a)))
        .collect();
    for a in &actions {
        if let Some(t) = a.timestamp_ms()
            && t < PLAUSIBLE_EPOCH_MS
        {
            out.push(
                "V18",
                RuleSeverity::Warning,
                Some(a),
                format!("timestamp_ms {t} is before 2001-01-01 (monotonic-clock bug?)"),
            );
        }
        let Some(parent) = a.parent().and_then(|p| by_id.get(p)) else {
            continue;
        };
        if let (Some(t), Some(pt)) = (a.timestamp_ms(), parent.timestamp_ms())
            && t < pt
        {
            out.push(
                "V18",
                RuleSeverity::Warning,
                Some(a),
                format!("child at {t} ms is earlier than its parent at {pt} ms"),
            );
        }
        let parent_denied_drift = parent.decision().and_then(|d| d.outcome()) == Some("deny")
            && Drift::of(record, parent).result == DriftResult::Drifted;
        if !parent_denied_drift {
            continue;
        }
        let parent_hash = parent.str_field("approval_context_hash");
        let own_hash = a.str_field("approval_context_hash");
        if own_hash.is_none() || own_hash == parent_hash {
            out.push(
                "V12",
                RuleSeverity::Warning,
                Some(a),
                format!(
                    "re-approved child of denied-drift {:?} carries no approval of its own",
                    parent.id().unwrap_or("?")
                ),
            );
        } else if let Some(bound) = Drift::of(record, a).bound_to
            && parent_hash == Some(bound)
        {
            out.push(
                "V12",
                RuleSeverity::Warning,
                Some(a),
                format!("drift check bound to the denied parent's approval {bound:?}{RFC_FINAL}"),
            );
        }
    }
}

fn v1_side_effect_max(record: &Record, out: &mut Out) {
    let Some(declared) = record.str_field("run_side_effect_class_max") else {
        return;
    };
    let max = record
        .actions()
        .map(|a| side_effect_rank(a.side_effect_class()))
        .max();
    if let Some(max) = max
        && side_effect_rank(Some(declared)) != max
    {
        out.push(
            "V1",
            RuleSeverity::Error,
            None,
            format!(
                "run_side_effect_class_max={declared}, max(actions)={}",
                SIDE_EFFECT_ORDER[max]
            ),
        );
    }
}

fn v3_digest_needs_coverage(a: &Action<'_>, out: &mut Out) {
    for which in ["pre_state_digest", "post_state_digest"] {
        if a.get(which).is_some() {
            let missing: Vec<&str> = ["state_digest_kind", "state_digest_coverage"]
                .into_iter()
                .filter(|k| a.get(k).is_none())
                .collect();
            if !missing.is_empty() {
                out.push(
                    "V3",
                    RuleSeverity::Error,
                    Some(a),
                    format!("{which} without {}", missing.join(" and ")),
                );
            }
        }
    }
}

fn v4_deny_reason_only_on_deny(a: &Action<'_>, out: &mut Out) {
    if let Some(d) = a.decision()
        && let Some(class) = d.str_field("deny_reason_class")
        && d.outcome() != Some("deny")
    {
        out.push(
            "V4",
            RuleSeverity::Error,
            Some(a),
            format!(
                "deny_reason_class {class:?} on decision {:?}",
                d.outcome().unwrap_or("?")
            ),
        );
    }
}

fn v5_lease_grant_needs_lease(a: &Action<'_>, out: &mut Out) {
    if let Some(d) = a.decision()
        && d.grant() == Some("bounded-lease")
        && a.str_field("scope_lease_id").is_none()
    {
        out.push(
            "V5",
            RuleSeverity::Error,
            Some(a),
            "bounded-lease grant without scope_lease_id".into(),
        );
    }
}

fn v15_attribution(record: &Record, out: &mut Out) {
    let mut fail = |m: String| out.push("V15", RuleSeverity::Error, None, m);
    let floor = record.get("run_attribution_backing_floor");
    let observed = record.get("run_attribution_backing_observed");
    if let Some(v) = record.str_field("attribution_backing")
        && !BACKING.contains(&v)
    {
        fail(format!(
            "attribution_backing {v:?} is outside the grade vocabulary"
        ));
    }
    if let Some(count) = record.get("authorization_evidence_count")
        && !count.as_f64().is_some_and(|n| n >= 0.0 && n.fract() == 0.0)
    {
        fail("authorization_evidence_count must be a non-negative integer".into());
    }
    match (floor, observed) {
        (None, None) => {}
        (Some(_), None) => {
            fail("run_attribution_backing_floor without run_attribution_backing_observed".into());
        }
        (None, Some(_)) => {
            fail("run_attribution_backing_observed without run_attribution_backing_floor".into());
        }
        (Some(floor), Some(observed)) => {
            let grades: Vec<Option<&str>> = observed
                .as_array()
                .unwrap_or(&[])
                .iter()
                .map(Json::as_str)
                .collect();
            if grades.is_empty() {
                fail("run_attribution_backing_observed is empty".into());
                return;
            }
            let mut ranks = Vec::new();
            for g in &grades {
                match g.and_then(|g| BACKING.iter().position(|b| *b == g)) {
                    Some(r) => ranks.push(r),
                    None => fail(format!(
                        "observed grade {g:?} is outside the grade vocabulary"
                    )),
                }
            }
            let unique: HashSet<_> = grades.iter().collect();
            if unique.len() != grades.len() {
                fail("run_attribution_backing_observed repeats a grade".into());
            }
            match floor
                .as_str()
                .and_then(|f| BACKING.iter().position(|b| *b == f).map(|r| (f, r)))
            {
                None => {
                    fail("run_attribution_backing_floor is outside the grade vocabulary".into());
                }
                Some((f, rank)) => {
                    if !ranks.contains(&rank) {
                        fail(format!("floor {f:?} is not among the observed grades"));
                    } else if ranks.iter().min() != Some(&rank) {
                        fail(format!(
                            "floor {f:?} is stronger than the weakest observed grade {:?} (rounded up)",
                            BACKING[*ranks.iter().min().unwrap_or(&0)]
                        ));
                    }
                }
            }
        }
    }
}

fn v16_ids_and_parents(record: &Record, out: &mut Out) {
    let actions: Vec<Action<'_>> = record.actions().collect();
    let mut parent_of: HashMap<&str, Option<&str>> = HashMap::with_capacity(actions.len());
    for a in &actions {
        if let Some(id) = a.id()
            && parent_of.insert(id, a.parent()).is_some()
        {
            out.push(
                "V16",
                RuleSeverity::Error,
                Some(a),
                format!("action_id {id:?} repeats within the record"),
            );
        }
    }
    for a in &actions {
        let (Some(id), Some(parent)) = (a.id(), a.parent()) else {
            continue;
        };
        if parent == id {
            out.push(
                "V16",
                RuleSeverity::Error,
                Some(a),
                format!("action {id:?} is its own parent"),
            );
        } else if !parent_of.contains_key(parent) {
            out.push(
                "V16",
                RuleSeverity::Warning,
                Some(a),
                format!("parent_action_id {parent:?} is not in this record"),
            );
        }
    }
    // Cycles: each action has at most one parent, so one walk per unvisited action,
    // stopping at anything already visited, finds every cycle in linear time.
    let mut done: HashSet<&str> = HashSet::with_capacity(actions.len());
    for a in &actions {
        let Some(start) = a.id() else { continue };
        let mut path: Vec<&str> = Vec::new();
        let mut on_path: HashSet<&str> = HashSet::new();
        let mut cur = start;
        loop {
            if done.contains(cur) {
                break;
            }
            if !on_path.insert(cur) {
                let pos = path.iter().position(|s| *s == cur).unwrap_or(0);
                if path.len() - pos > 1 {
                    let mut cycle = path[pos..].to_vec();
                    cycle.push(cur);
                    out.push(
                        "V16",
                        RuleSeverity::Error,
                        Some(a),
                        format!("parent cycle: {}", cycle.join(" → ")),
                    );
                }
                break;
            }
            path.push(cur);
            match parent_of.get(cur) {
                Some(Some(p)) if *p != cur => cur = p,
                _ => break,
            }
        }
        done.extend(path);
    }
}

#[cfg(test)]
mod tests;
