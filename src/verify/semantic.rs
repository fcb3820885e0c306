//! The semantic axis (L1): cross-field invariants of analysis-rules.md §5 that can be
//! decided from one record. Each violation carries its rule id.

use super::structural::BACKING;
use crate::model::json::Json;
use crate::model::{Action, Record, SIDE_EFFECT_ORDER, side_effect_rank};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// How much a violated invariant weighs: errors fail the axis, warnings do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleSeverity {
    Error,
    Warning,
}

/// One violated invariant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Violation {
    /// Rule id, `V1` … `V18`.
    pub rule: &'static str,
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
            action_id: action.and_then(|a| a.id()).map(str::to_string),
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
    out.0
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
            fail("run_attribution_backing_floor without run_attribution_backing_observed".into())
        }
        (None, Some(_)) => {
            fail("run_attribution_backing_observed without run_attribution_backing_floor".into())
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
                    fail("run_attribution_backing_floor is outside the grade vocabulary".into())
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
mod tests {
    use super::*;
    use crate::load::parse_input;

    fn rules(record: &str) -> Vec<(&'static str, RuleSeverity)> {
        let input = parse_input("t".into(), record.as_bytes());
        check(&input.records[0])
            .into_iter()
            .map(|v| (v.rule, v.severity))
            .collect()
    }

    fn with_actions(extra: &str, actions: &str) -> String {
        format!(
            r#"{{"schema_version":"aep/v0.3","run_id":"r","created_at_ms":1{extra},"actions":[{actions}]}}"#
        )
    }

    const READ: &str = r#"{"action_id":"a","tool_name":"t","state_changing":false,"timestamp_ms":1,"side_effect_class":"read"}"#;

    #[test]
    fn v1_side_effect_max() {
        assert!(
            rules(&with_actions(
                r#","run_side_effect_class_max":"read""#,
                READ
            ))
            .is_empty()
        );
        assert_eq!(
            rules(&with_actions(
                r#","run_side_effect_class_max":"unknown""#,
                READ
            )),
            vec![("V1", RuleSeverity::Error)]
        );
    }

    #[test]
    fn v3_digests_need_kind_and_coverage() {
        let bare = r#"{"action_id":"a","tool_name":"t","state_changing":true,"timestamp_ms":1,"post_state_digest":"x"}"#;
        assert_eq!(
            rules(&with_actions("", bare)),
            vec![("V3", RuleSeverity::Error)]
        );
        let full = r#"{"action_id":"a","tool_name":"t","state_changing":true,"timestamp_ms":1,"post_state_digest":"x","state_digest_kind":"git-tree","state_digest_coverage":{}}"#;
        assert!(rules(&with_actions("", full)).is_empty());
    }

    #[test]
    fn v4_and_v5_on_decisions() {
        let allow_with_reason = r#"{"action_id":"a","tool_name":"t","state_changing":true,"timestamp_ms":1,"capability_decision":{"capability":"c","subject":"s","resource":"r","decision":"allow","deny_reason_class":"argument"}}"#;
        assert_eq!(
            rules(&with_actions("", allow_with_reason)),
            vec![("V4", RuleSeverity::Error)]
        );
        let deny_with_reason = allow_with_reason.replace("\"allow\"", "\"deny\"");
        assert!(rules(&with_actions("", &deny_with_reason)).is_empty());
        let lease = r#"{"action_id":"a","tool_name":"t","state_changing":true,"timestamp_ms":1,"capability_decision":{"capability":"c","subject":"s","resource":"r","decision":"allow","approval_mode":"bounded-lease"}}"#;
        assert_eq!(
            rules(&with_actions("", lease)),
            vec![("V5", RuleSeverity::Error)]
        );
        let leased = lease.replace(
            "\"timestamp_ms\":1,",
            "\"timestamp_ms\":1,\"scope_lease_id\":\"l\",",
        );
        assert!(rules(&with_actions("", &leased)).is_empty());
    }

    #[test]
    fn v15_attribution() {
        let ok = r#","run_attribution_backing_floor":"operator_asserted","run_attribution_backing_observed":["operator_asserted","principal_key_signed"]"#;
        assert!(rules(&with_actions(ok, READ)).is_empty());
        for bad in [
            r#","run_attribution_backing_floor":"principal_key_signed","run_attribution_backing_observed":["operator_asserted","principal_key_signed"]"#,
            r#","run_attribution_backing_floor":"unknown","run_attribution_backing_observed":["operator_asserted"]"#,
            r#","run_attribution_backing_floor":"unknown""#,
            r#","run_attribution_backing_observed":["unknown"]"#,
            r#","run_attribution_backing_floor":"unknown","run_attribution_backing_observed":[]"#,
            r#","authorization_evidence_count":-1"#,
        ] {
            assert!(
                rules(&with_actions(bad, READ)).contains(&("V15", RuleSeverity::Error)),
                "{bad}"
            );
        }
    }

    #[test]
    fn v16_ids_parents_and_cycles() {
        let act = |id: &str, parent: &str| {
            format!(
                r#"{{"action_id":"{id}","tool_name":"t","state_changing":false,"timestamp_ms":1,"parent_action_id":"{parent}"}}"#
            )
        };
        assert_eq!(
            rules(&with_actions("", &act("a", "a"))),
            vec![("V16", RuleSeverity::Error)]
        );
        assert_eq!(
            rules(&with_actions("", &act("a", "zz"))),
            vec![("V16", RuleSeverity::Warning)]
        );
        let cycle = format!("{},{},{}", act("a", "b"), act("b", "c"), act("c", "a"));
        assert_eq!(
            rules(&with_actions("", &cycle)),
            vec![("V16", RuleSeverity::Error)]
        );
        let dup = format!("{READ},{READ}");
        assert_eq!(
            rules(&with_actions("", &dup)),
            vec![("V16", RuleSeverity::Error)]
        );
        let chain: Vec<String> = (0..50_000)
            .map(|i| act(&format!("n{i}"), &format!("n{}", i + 1)))
            .collect();
        let long = rules(&with_actions("", &chain.join(",")));
        assert_eq!(
            long,
            vec![("V16", RuleSeverity::Warning)],
            "a long parent chain is linear and ends dangling"
        );
    }
}
