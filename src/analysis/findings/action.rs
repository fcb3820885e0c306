//! The findings about one action (node): what its own facts decide ([`check`], worked out
//! for every node while the analysis is built), its parent's denial, its lease and its
//! digests' coverage — its stored JSON read only for the nodes with something to say, and
//! not at all for F-UNAPPROVED-MUTATION and F-EXEC-AFTER-DENY when the facts hold what
//! they quote.

use super::{Timed, action_location, ev, finding, location_at, quoted_evidence};
use crate::analysis::Analysis;
use crate::analysis::comparability::CoverageFinding;
use crate::analysis::graph::NodeId;
use crate::analysis::lease::LeaseView;
use crate::load::Corpus;
use crate::model::drift::{Drift, DriftResult};
use crate::model::facts::{ActionFacts, EXEC_AFTER_DENY_QUOTES, StoredMembers};
use crate::model::fields::{ActionFields, Key};
use crate::model::finding::{Location, Severity};
use crate::model::json::Obj;
use crate::model::{Action, Record};
use serde_json::json;

/// The findings an action's own facts decide, one bit each, worked out for every node
/// while the analysis is built: [`analyse`](super::analyse) builds findings (and reads the stored JSON)
/// only for the actions with a bit set, a denied-and-drifted parent, or a lease or
/// coverage problem.
pub mod check {
    pub const EXEC_AFTER_DENY: u8 = 1;
    pub const UNAPPROVED_MUTATION: u8 = 2;
    pub const UNKNOWN_CLASS_ALLOWED: u8 = 4;
    pub const DRIFT_EXECUTED: u8 = 8;
    /// Not a finding: the action was denied after its arguments drifted, which makes a
    /// child that re-runs the same payload F-REAPPROVAL-SAME-PAYLOAD.
    pub const DENIED_DRIFTED: u8 = 16;
}

/// The [`check`] bits of one action.
pub fn checks(f: &ActionFacts) -> u8 {
    let mut bits = 0;
    let denied = f.outcome() == Some("deny");
    let class = f.side_effect_class();
    if denied
        && (f
            .result_outcome()
            .is_some_and(|o| matches!(o, "success" | "succeeded" | "ok" | "completed"))
            || f.exit_code() == Some(0.0)
            || f.has_result_digest)
    {
        bits |= check::EXEC_AFTER_DENY;
    }
    let changing = f.state_changing == Some(true) || class.is_some_and(|c| c != "read");
    if !f.has_decision && (changing || class.is_none()) {
        bits |= check::UNAPPROVED_MUTATION;
    }
    if matches!(class, None | Some("unknown"))
        && f.outcome() == Some("allow")
        && matches!(f.grant(), None | Some("none"))
    {
        bits |= check::UNKNOWN_CLASS_ALLOWED;
    }
    if f.drift == DriftResult::Drifted {
        bits |= if denied {
            check::DENIED_DRIFTED
        } else {
            check::DRIFT_EXECUTED
        };
    }
    bits
}

/// The findings about node `n`, reading its action's JSON only when there are some.
/// The findings of consecutive nodes first stored in one record, the record read once
/// for all of them (and not at all when none has anything to say, or all of it is said
/// from the facts: [`from_facts`]).
pub(super) fn per_record(
    corpus: &Corpus,
    an: &Analysis,
    nodes: std::ops::Range<NodeId>,
    out: &mut Vec<Timed>,
) {
    let concerned: Vec<(NodeId, Concerns)> =
        nodes.filter_map(|n| Some((n, concerns(an, n)?))).collect();
    let Some(&(first, _)) = concerned.first() else {
        return;
    };
    let made: Option<Vec<Vec<Timed>>> = (concerned.iter())
        .map(|(n, c)| from_facts(corpus, an, *n, c))
        .collect();
    if let Some(found) = made {
        out.extend(found.into_iter().flatten());
        return;
    }
    let record = an.graph.nodes[first as usize].record;
    corpus.record(record as usize).with_record(|record| {
        for (n, concerns) in &concerned {
            let pos = an.graph.nodes[*n as usize].pos;
            if let Some(a) = record.action_at(pos as usize) {
                action_findings(corpus, an, *n, record, &a, concerns, out);
            }
        }
    });
}

/// What there is to say about node `n`, known before its JSON is read; `None`: nothing.
fn concerns(an: &Analysis, n: NodeId) -> Option<Concerns<'_>> {
    let bits = an.checks[n as usize];
    let parent = an.graph.nodes[n as usize]
        .parent
        .filter(|p| an.checks[*p as usize] & check::DENIED_DRIFTED != 0);
    let lease = an
        .leases
        .by_node
        .get(&n)
        .filter(|l| l.verdict.is_outside() || l.label_contradicted);
    let coverage = an.badges.get(&n).and_then(|(_, cf)| *cf);
    let own = check::EXEC_AFTER_DENY
        | check::UNAPPROVED_MUTATION
        | check::UNKNOWN_CLASS_ALLOWED
        | check::DRIFT_EXECUTED;
    if bits & own == 0 && parent.is_none() && lease.is_none() && coverage.is_none() {
        return None;
    }
    Some(Concerns {
        bits,
        parent,
        lease,
        coverage,
    })
}

/// What [`concerns`] finds there is to say about a node, before reading its JSON.
struct Concerns<'a> {
    bits: u8,
    /// Its parent, denied after its arguments drifted.
    parent: Option<NodeId>,
    lease: Option<&'a LeaseView>,
    coverage: Option<CoverageFinding>,
}

impl Concerns<'_> {
    /// True when all there is to say is F-EXEC-AFTER-DENY, F-UNAPPROVED-MUTATION or both:
    /// what [`from_facts`] can say.
    fn only_from_facts(&self) -> bool {
        let said = check::UNKNOWN_CLASS_ALLOWED | check::DRIFT_EXECUTED;
        self.bits & said == 0
            && self.parent.is_none()
            && self.lease.is_none()
            && self.coverage.is_none()
    }
}

/// The findings about node `n` for its `concerns` from its facts alone, as
/// [`action_findings`] makes them from its JSON; `None` when the facts do not hold what
/// they quote (its record is read then).
fn from_facts(
    corpus: &Corpus,
    an: &Analysis,
    n: NodeId,
    concerns: &Concerns<'_>,
) -> Option<Vec<Timed>> {
    if !concerns.only_from_facts() {
        return None;
    }
    let mut found = Vec::new();
    if concerns.bits & check::EXEC_AFTER_DENY != 0 {
        found.push(exec_after_deny_from_facts(corpus, an, n)?);
    }
    if concerns.bits & check::UNAPPROVED_MUTATION != 0 {
        found.push(unapproved_from_facts(corpus, an, n)?);
    }
    Some(found)
}

/// F-EXEC-AFTER-DENY about the action `id` of `record` (its `timestamp_ms`: `time`), at
/// `location`, with `evidence` (what it quotes, [`EXEC_AFTER_DENY_QUOTES`]): made the
/// same way from the stored JSON and from the facts.
fn exec_after_deny(
    record: &Record,
    id: Option<&str>,
    time: Option<f64>,
    evidence: serde_json::Value,
    location: Location,
) -> Timed {
    let message = format!(
        "{} was denied yet shows an executed result",
        id.unwrap_or("?")
    );
    let (mut found, _) = finding(
        "F-EXEC-AFTER-DENY",
        Severity::High,
        record,
        &[],
        message,
        evidence,
    );
    found.action_ids = id.map(str::to_string).into_iter().collect();
    found.locations = vec![location];
    (found, time.or(record.created_at_ms()))
}

/// The field of an action F-EXEC-AFTER-DENY points at (from what it quotes of the
/// action), when the action has it.
fn exec_after_deny_field(quoted: &Obj) -> Option<&'static str> {
    quoted.get("outcome").map(|_| "outcome")
}

/// F-EXEC-AFTER-DENY about node `n` from its facts alone ([`ActionFacts::denied_quoted`]).
fn exec_after_deny_from_facts(corpus: &Corpus, an: &Analysis, n: NodeId) -> Option<Timed> {
    let node = &an.graph.nodes[n as usize];
    let record = corpus.record(node.record as usize);
    let actions = &record.facts().actions;
    let facts = actions.at(node.pos)?;
    let quoted = facts.denied_quoted.as_deref()?;
    let location = location_at(
        &record.source,
        actions.index_of(node.pos)?,
        exec_after_deny_field(quoted),
    );
    Some(exec_after_deny(
        record,
        facts.id(),
        facts.time(),
        quoted_evidence(quoted),
        location,
    ))
}

/// F-UNAPPROVED-MUTATION about the action with `facts` of `record`, at `location`, with
/// `evidence` (its `tool_name`, `side_effect_class` and `state_changing` as stored): made
/// the same way from the stored JSON and from the facts.
fn unapproved_mutation(
    record: &Record,
    facts: &ActionFacts,
    evidence: serde_json::Value,
    location: Location,
) -> Timed {
    let class = facts.side_effect_class();
    let unknown = matches!(class, None | Some("unknown"));
    let severity = if unknown && facts.state_changing != Some(true) {
        Severity::Medium
    } else {
        Severity::High
    };
    let message = format!(
        "{} ({}) has no capability decision at all",
        facts.id().unwrap_or("?"),
        class.unwrap_or("class not recorded")
    );
    let (mut found, _) = finding(
        "F-UNAPPROVED-MUTATION",
        severity,
        record,
        &[],
        message,
        evidence,
    );
    found.action_ids = facts.id().map(str::to_string).into_iter().collect();
    found.locations = vec![location];
    (found, facts.time().or(record.created_at_ms()))
}

/// F-UNAPPROVED-MUTATION about node `n` from its facts alone, when they hold the members
/// its evidence quotes exactly as stored ([`StoredMembers::plain`]); `None` otherwise (its
/// record is read then).
fn unapproved_from_facts(corpus: &Corpus, an: &Analysis, n: NodeId) -> Option<Timed> {
    let node = &an.graph.nodes[n as usize];
    let record = corpus.record(node.record as usize);
    let actions = &record.facts().actions;
    let facts = actions.at(node.pos)?;
    let stored = facts.stored();
    if !stored.plain() {
        return None;
    }
    let mut evidence = serde_json::Map::new();
    let values = [
        facts.tool().map(serde_json::Value::from),
        facts.side_effect_class().map(serde_json::Value::from),
        facts.state_changing.map(serde_json::Value::from),
    ];
    for (i, (name, value)) in StoredMembers::NAMES.iter().zip(values).enumerate() {
        if stored.has(i) {
            evidence.insert((*name).into(), value?);
        }
    }
    let location = location_at(&record.source, actions.index_of(node.pos)?, None);
    Some(unapproved_mutation(
        record,
        facts,
        serde_json::Value::Object(evidence),
        location,
    ))
}

/// The findings about action `a` of `record` (node `n`), for its `concerns`.
fn action_findings(
    corpus: &Corpus,
    an: &Analysis,
    n: NodeId,
    record: &Record,
    a: &Action<'_>,
    concerns: &Concerns<'_>,
    out: &mut Vec<Timed>,
) {
    let Concerns {
        bits,
        parent,
        lease,
        coverage,
    } = *concerns;
    let fields = ActionFields::of(a.0);
    let (facts, drift) = ActionFacts::with_drift(record, a.0, &fields);
    let outcome = facts.outcome();
    if bits & check::EXEC_AFTER_DENY != 0 {
        let quoted = a.quoted(&EXEC_AFTER_DENY_QUOTES);
        let location = action_location(record, a, exec_after_deny_field(&quoted));
        out.push(exec_after_deny(
            record,
            a.id(),
            a.timestamp_ms(),
            quoted_evidence(&quoted),
            location,
        ));
    }
    if bits & check::UNAPPROVED_MUTATION != 0 {
        let location = action_location(record, a, None);
        let evidence = ev(a, &StoredMembers::NAMES);
        out.push(unapproved_mutation(record, &facts, evidence, location));
    }
    if bits & check::UNKNOWN_CLASS_ALLOWED != 0 {
        out.push(finding(
            "F-UNKNOWN-CLASS-ALLOWED",
            Severity::Medium,
            record,
            &[a],
            format!(
                "{}: class unknown allowed without an explicit approval grant",
                a.id().unwrap_or("?")
            ),
            ev(
                a,
                &[
                    "side_effect_class",
                    "capability_decision.decision",
                    "capability_decision.approval_mode",
                    "capability_decision.approval_grant",
                ],
            ),
        ));
    }
    if bits & check::DRIFT_EXECUTED != 0 {
        out.push(finding(
            "F-DRIFT-EXECUTED",
            Severity::High,
            record,
            &[a],
            format!(
                "{}: arguments drifted from the approval and the action was not denied",
                a.id().unwrap_or("?")
            ),
            json!({ "argument_drift": fields.get(Key::ArgumentDrift).or(record.get("argument_drift")), "decision": outcome }),
        ));
    }
    if let Some(p) = parent {
        let pn = &an.graph.nodes[p as usize];
        // The parent's action is read from the same copy of the record when it shares it.
        let found = if pn.record == an.graph.nodes[n as usize].record {
            same_payload(record, a, &fields, &drift, record, pn.pos)
        } else {
            corpus
                .record(pn.record as usize)
                .with_record(|prec| same_payload(record, a, &fields, &drift, prec, pn.pos))
        };
        out.extend(found);
    }
    if let Some(l) = lease {
        if l.verdict.is_outside() {
            out.push(finding(
                "F-LEASE-OUTSIDE",
                Severity::High,
                record,
                &[a],
                format!(
                    "{} executed {} lease {}",
                    a.id().unwrap_or("?"),
                    l.verdict.name(),
                    l.lease_id
                ),
                serde_json::to_value(l).unwrap_or_default(),
            ));
        }
        if l.label_contradicted {
            out.push(finding(
                "F-LEASE-LABEL-CONTRADICTED",
                Severity::Medium,
                record,
                &[a],
                format!(
                    "{}: approval_decision {:?} but the recorded times say {}",
                    a.id().unwrap_or("?"),
                    l.label.as_deref().unwrap_or(""),
                    l.verdict.name()
                ),
                serde_json::to_value(l).unwrap_or_default(),
            ));
        }
    }
    if let Some(cf) = coverage {
        let (id, severity, msg) = match cf {
            CoverageFinding::Credential => (
                "F-COV-CREDENTIAL",
                Severity::High,
                "db-rowset database_id looks like a connection string (credential in evidence)",
            ),
            CoverageFinding::RouteNotTemplated => (
                "F-COV-ROUTE-NOT-TEMPLATED",
                Severity::Low,
                "browser-dom route_path carries a concrete id segment (not templated)",
            ),
        };
        out.push(finding(
            id,
            severity,
            record,
            &[a],
            format!("{}: {msg}", a.id().unwrap_or("?")),
            json!({ "state_digest_coverage": fields.get(Key::StateDigestCoverage) }),
        ));
    }
}

/// F-REAPPROVAL-SAME-PAYLOAD: action `a` of `record` re-runs the drifted payload of its
/// denied parent (at `pos` of `prec`) without a new approval.
fn same_payload(
    record: &Record,
    a: &Action<'_>,
    fields: &ActionFields<'_>,
    drift: &Drift<'_>,
    prec: &Record,
    pos: u32,
) -> Option<Timed> {
    let parent = prec.action_at(pos as usize)?;
    let parent_drift = Drift::of(prec, &parent);
    let parent_payload = parent_drift.payload_digest(parent.str_field("arguments_digest"));
    let own_payload = drift.payload_digest(fields.str(Key::ArgumentsDigest));
    let own_approval = fields.str(Key::ApprovalContextHash);
    let new_approval =
        own_approval.is_some() && own_approval != parent.str_field("approval_context_hash");
    (own_payload.is_some() && own_payload == parent_payload && !new_approval).then(|| {
        finding(
            "F-REAPPROVAL-SAME-PAYLOAD",
            Severity::High,
            record,
            &[a, &parent],
            format!(
                "{} re-runs the drifted payload of denied {} without a new approval",
                a.id().unwrap_or("?"),
                parent.id().unwrap_or("?")
            ),
            json!({ "observed_digest": own_payload, "approval_context_hash": own_approval }),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One record a run for each of `actions` (the inside of its `actions` array),
    /// loaded and analysed.
    fn analysed(actions: &[impl std::fmt::Display]) -> (Corpus, Analysis) {
        let mut lines = String::new();
        for (i, a) in actions.iter().enumerate() {
            use std::fmt::Write as _;
            let _ = writeln!(
                lines,
                "{{\"schema_version\":\"aep/v0.3\",\"run_id\":\"r{i}\",\"created_at_ms\":1780000000000,\"actions\":[{a}]}}"
            );
        }
        let corpus = Corpus::new(vec![crate::load::parse_input(
            "x.ndjson".into(),
            lines.as_bytes(),
        )]);
        assert_eq!(corpus.len(), actions.len());
        let an = Analysis::build(&corpus, &crate::analysis::lease::SuppliedLeases::default());
        (corpus, an)
    }

    /// F-UNAPPROVED-MUTATION made from the facts is exactly the one made from the stored
    /// JSON — its evidence quoting the members as stored, its location counting action
    /// objects — and is not made from the facts when they do not hold the members as
    /// stored (a number for a name, a string for a boolean, a lone surrogate).
    #[test]
    fn unapproved_mutation_from_the_facts_is_the_one_from_the_json() {
        let actions = [
            r#"{"action_id":"a","tool_name":"sql_exec","state_changing":true,"side_effect_class":"mutate-external","timestamp_ms":1780000000001}"#,
            r#"{"action_id":"a","tool_name":5,"state_changing":true}"#,
            r#"{"action_id":"a","tool_name":"t","state_changing":"yes"}"#,
            r#"{"action_id":"a","tool_name":"first","tool_name":"last","side_effect_class":"mutate-local"}"#,
            r#"7, {"action_id":"a","tool_name":"t","side_effect_class":"unknown"}"#,
            r#"{"action_id":"a","state_changing":false}"#,
            r#"{"action_id":"a","tool_name":"\ud800","state_changing":true}"#,
            r#"{"tool_name":"t","side_effect_class":"delete"}"#,
        ];
        let (corpus, an) = analysed(&actions);
        let (mut from_facts, mut from_json) = (0, 0);
        for n in 0..an.graph.nodes.len() as NodeId {
            if !concerns(&an, n)
                .is_some_and(|c| c.only_from_facts() && c.bits == check::UNAPPROVED_MUTATION)
            {
                continue;
            }
            let node = &an.graph.nodes[n as usize];
            let stored = corpus.record(node.record as usize).with_record(|r| {
                let a = r.action_at(node.pos as usize)?;
                let evidence = ev(&a, &StoredMembers::NAMES);
                let facts = ActionFacts::of(r, &a);
                Some(unapproved_mutation(
                    r,
                    &facts,
                    evidence,
                    action_location(r, &a, None),
                ))
            });
            let stored = stored.expect("the action is read");
            match unapproved_from_facts(&corpus, &an, n) {
                Some(made) => {
                    assert_eq!(made, stored, "node {n}");
                    from_facts += 1;
                }
                None => from_json += 1,
            }
        }
        assert_eq!((from_facts, from_json), (5, 3));
    }

    /// F-EXEC-AFTER-DENY made from the facts is exactly the one made from the stored JSON
    /// (`action_findings`), whatever form the members it quotes are stored in: numbers as
    /// written, an object for a digest, a repeated member, a lone surrogate, no `outcome`
    /// to point at; and an action with more to say (its parent denied after its arguments
    /// drifted) is still read.
    #[test]
    fn exec_after_deny_from_the_facts_is_the_one_from_the_json() {
        let deny = r#""capability_decision":{"decision":"deny"}"#;
        let actions = [
            format!(
                r#"{{"action_id":"a",{deny},"outcome":"success","exit_code":0,"result_digest":"sha256:ab","timestamp_ms":1780000000001}}"#
            ),
            format!(r#"{{"action_id":"a",{deny},"exit_code":0.0}}"#),
            format!(r#"{{"action_id":"a",{deny},"exit_code":-0e3,"outcome":"failed"}}"#),
            format!(
                r#"{{"action_id":"a",{deny},"outcome":"ok","outcome":"completed","result_digest":{{"sha256":"ab"}}}}"#
            ),
            r#"{"action_id":"a","capability_decision":{"decision":"allow","decision":"deny"},"result_digest":"\ud800"}"#.to_string(),
            format!(r#"{{"action_id":7,{deny},"outcome":"success","timestamp_ms":"soon"}}"#),
            // A child re-run after its parent was denied with drifted arguments: read.
            format!(
                r#"{{"action_id":"p",{deny},"argument_drift":{{"result":"drifted"}}}},{{"action_id":"c","parent_action_id":"p",{deny},"outcome":"success"}}"#
            ),
            format!(r#"{{"action_id":"a",{deny},"outcome":"failed"}}"#),
        ];
        let (corpus, an) = analysed(&actions);
        let (mut from_the_facts, mut read) = (Vec::new(), 0);
        for n in 0..an.graph.nodes.len() as NodeId {
            let Some(c) = concerns(&an, n).filter(|c| c.bits & check::EXEC_AFTER_DENY != 0) else {
                continue;
            };
            let node = &an.graph.nodes[n as usize];
            let stored = corpus.record(node.record as usize).with_record(|r| {
                let a = r.action_at(node.pos as usize)?;
                let mut out = Vec::new();
                action_findings(&corpus, &an, n, r, &a, &c, &mut out);
                Some(out)
            });
            let stored = stored.expect("the action is read");
            match from_facts(&corpus, &an, n, &c) {
                Some(made) => {
                    assert_eq!(made, stored, "node {n}");
                    from_the_facts.push(made);
                }
                None => read += 1,
            }
        }
        assert_eq!((from_the_facts.len(), read), (6, 1));
        // What the first two quote, as stored.
        let evidence = |i: usize| serde_json::to_string(&from_the_facts[i][0].0.evidence).unwrap();
        assert_eq!(
            evidence(0),
            r#"{"capability_decision.decision":"deny","outcome":"success","exit_code":0,"result_digest":"sha256:ab"}"#
        );
        assert_eq!(
            evidence(1),
            r#"{"capability_decision.decision":"deny","exit_code":0}"#
        );
    }
}
