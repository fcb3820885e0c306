//! What the analysis passes (graph, leases, chains, badges, finding checks, the
//! explorer's row markers) read from an action, typed, taken from the one-pass member
//! index ([`ActionFields`]) while the action is in cache.

use super::drift::{Drift, DriftInputs, DriftResult};
use super::fields::{ActionFields, Key};
use super::json::{Json, Obj};
use super::{Action, Decision, DecisionMembers, Record, prefetch};

/// One action's analysis-relevant fields, borrowed from the stored JSON.
#[derive(Clone, Copy, Debug)]
pub struct ActionFacts<'a> {
    pub id: Option<&'a str>,
    pub tool: Option<&'a str>,
    pub parent: Option<&'a str>,
    pub causal_chain_id: Option<&'a str>,
    pub scope_lease_id: Option<&'a str>,
    pub approval_context_hash: Option<&'a str>,
    pub time: Option<f64>,
    pub side_effect_class: Option<&'a str>,
    pub decision: Option<&'a Obj>,
    /// `decision` of the capability decision (`allow`, `deny`, …).
    pub outcome: Option<&'a str>,
    /// The authority shape: `approval_grant`, else `approval_mode` ([`Decision::grant`]).
    pub grant: Option<&'a str>,
    /// The decision's RFC-final `approval_decision` label.
    pub approval_decision: Option<&'a str>,
    /// The drift check's result, every dialect normalised ([`Drift`]).
    pub drift: DriftResult,
    /// What the recorded result says happened ([`observed`]).
    pub observed: Option<&'static str>,
    /// `state_changing`, when it is a boolean.
    pub state_changing: Option<bool>,
    /// The action's own `outcome` text (not the decision's).
    pub result_outcome: Option<&'a str>,
    /// `exit_code`, when it is a number.
    pub exit_code: Option<f64>,
    /// True when `result_digest` is present.
    pub has_result_digest: bool,
    pub argument_drift: Option<&'a Json>,
    pub bounded_lease_evidence: Option<&'a Obj>,
    pub state_digest_kind: Option<&'a Json>,
    pub state_digest_coverage: Option<&'a Json>,
    pub pre_state_digest: Option<&'a Json>,
    pub post_state_digest: Option<&'a Json>,
}

impl<'a> ActionFacts<'a> {
    /// Reads the facts of one action of `record`.
    pub fn of(record: &'a Record, action: &Action<'a>) -> ActionFacts<'a> {
        ActionFacts::from_fields(record, &ActionFields::of(action.0))
    }

    /// The facts among fields already indexed (`record` holds the action).
    pub fn from_fields(record: &'a Record, f: &ActionFields<'a>) -> ActionFacts<'a> {
        ActionFacts::with_drift(record, f).0
    }

    /// [`ActionFacts::from_fields`], with the whole normalised drift check.
    pub fn with_drift(record: &'a Record, f: &ActionFields<'a>) -> (ActionFacts<'a>, Drift<'a>) {
        let decision = f.obj(Key::CapabilityDecision);
        let members = DecisionMembers::of(decision);
        let mut facts = ActionFacts {
            id: f.str(Key::ActionId),
            tool: f.str(Key::ToolName),
            parent: f.str(Key::ParentActionId),
            causal_chain_id: f.str(Key::CausalChainId),
            scope_lease_id: f.str(Key::ScopeLeaseId),
            approval_context_hash: f.str(Key::ApprovalContextHash),
            time: f.get(Key::TimestampMs).and_then(Json::as_f64),
            side_effect_class: f.str(Key::SideEffectClass),
            decision,
            outcome: members.outcome(),
            grant: members.grant(),
            approval_decision: members.approval_decision(),
            drift: DriftResult::Absent,
            observed: observed(members.outcome(), f),
            state_changing: f.get(Key::StateChanging).and_then(Json::as_bool),
            result_outcome: f.str(Key::Outcome),
            exit_code: f.get(Key::ExitCode).and_then(Json::as_f64),
            has_result_digest: f.get(Key::ResultDigest).is_some(),
            argument_drift: f.get(Key::ArgumentDrift),
            bounded_lease_evidence: f.obj(Key::BoundedLeaseEvidence),
            state_digest_kind: f.get(Key::StateDigestKind),
            state_digest_coverage: f.get(Key::StateDigestCoverage),
            pre_state_digest: f.get(Key::PreStateDigest),
            post_state_digest: f.get(Key::PostStateDigest),
        };
        let drift = Drift::from_inputs(record, &DriftInputs::of(f, facts.grant));
        facts.drift = drift.result;
        (facts, drift)
    }

    /// The capability decision.
    pub fn decision(&self) -> Option<Decision<'a>> {
        self.decision.map(Decision)
    }

    /// Asks the CPU for the stored values the later passes read through these facts
    /// (digest kind, coverage, lease evidence; see [`prefetch`]).
    pub fn prefetch_values(&self) {
        for v in [self.state_digest_kind, self.state_digest_coverage]
            .into_iter()
            .flatten()
        {
            prefetch::at(v);
        }
        if let Some(o) = self.bounded_lease_evidence {
            prefetch::at(o);
        }
    }

    /// Asks for the members of the coverage and lease-evidence objects: call it some
    /// items after [`ActionFacts::prefetch_values`], once the objects themselves arrived.
    pub fn prefetch_members(&self) {
        if let Some(Json::Object(o)) = self.state_digest_coverage {
            prefetch::at(o.members.as_ptr());
        }
        if let Some(o) = self.bounded_lease_evidence {
            prefetch::at(o.members.as_ptr());
        }
    }

    /// True when the action carries a pre or post state digest.
    pub fn has_state_digest(&self) -> bool {
        self.pre_state_digest.is_some() || self.post_state_digest.is_some()
    }
}

/// `denied`, `skipped`, `failure`, `success` or None (analysis-rules §8): what the
/// action's recorded result says happened, given its decision's outcome.
pub fn observed(decision: Option<&str>, a: &ActionFields<'_>) -> Option<&'static str> {
    let outcome = a.str(Key::Outcome);
    let exit = a.get(Key::ExitCode).and_then(Json::as_f64);
    if decision == Some("deny") {
        Some("denied")
    } else if decision == Some("dry_run") {
        Some("skipped")
    } else if matches!(outcome, Some("failed" | "error" | "failure"))
        || exit.is_some_and(|c| c != 0.0)
    {
        Some("failure")
    } else if outcome.is_some() || exit.is_some() || a.get(Key::ResultDigest).is_some() {
        Some("success")
    } else {
        None
    }
}
