//! The fields the analysis reads from an action, taken in one pass over its members:
//! with a million actions, one pass instead of one scan per field is what keeps the
//! graph, lease and badge passes fast.

use super::json::{Json, Obj};
use super::{Action, Decision};

/// One action's analysis-relevant fields, borrowed from the stored JSON.
#[derive(Clone, Copy, Debug, Default)]
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
    pub argument_drift: Option<&'a Json>,
    pub bounded_lease_evidence: Option<&'a Obj>,
    pub state_digest_kind: Option<&'a Json>,
    pub state_digest_coverage: Option<&'a Json>,
    pub pre_state_digest: Option<&'a Json>,
    pub post_state_digest: Option<&'a Json>,
}

impl<'a> ActionFacts<'a> {
    /// Reads the facts of one action.
    pub fn of(action: &Action<'a>) -> ActionFacts<'a> {
        let [
            id,
            tool,
            parent,
            causal,
            lease,
            approval,
            time,
            class,
            decision,
            drift,
            evidence,
            kind,
            coverage,
            pre,
            post,
        ] = action.0.get_many([
            "action_id",
            "tool_name",
            "parent_action_id",
            "causal_chain_id",
            "scope_lease_id",
            "approval_context_hash",
            "timestamp_ms",
            "side_effect_class",
            "capability_decision",
            "argument_drift",
            "bounded_lease_evidence",
            "state_digest_kind",
            "state_digest_coverage",
            "pre_state_digest",
            "post_state_digest",
        ]);
        let s = |v: Option<&'a Json>| v.and_then(Json::as_str);
        ActionFacts {
            id: s(id),
            tool: s(tool),
            parent: s(parent),
            causal_chain_id: s(causal),
            scope_lease_id: s(lease),
            approval_context_hash: s(approval),
            time: time.and_then(Json::as_f64),
            side_effect_class: s(class),
            decision: decision.and_then(Json::as_object),
            argument_drift: drift,
            bounded_lease_evidence: evidence.and_then(Json::as_object),
            state_digest_kind: kind,
            state_digest_coverage: coverage,
            pre_state_digest: pre,
            post_state_digest: post,
        }
    }

    /// The capability decision.
    pub fn decision(&self) -> Option<Decision<'a>> {
        self.decision.map(Decision)
    }

    /// `decision` of the capability decision (`allow`, `deny`, …).
    pub fn outcome(&self) -> Option<&'a str> {
        self.decision().and_then(|d| d.outcome())
    }

    /// True when the action carries a pre or post state digest.
    pub fn has_state_digest(&self) -> bool {
        self.pre_state_digest.is_some() || self.post_state_digest.is_some()
    }
}
