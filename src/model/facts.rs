//! What the analysis passes (graph, leases, chains, badges, finding checks, the
//! explorer's row markers) read from an action: typed and owned, read once from the
//! one-pass member index ([`ActionFields`]) so the passes never go back to the stored
//! JSON — the first step to an analysis that does not need every record's tree.

use super::drift::{Drift, DriftInputs, DriftResult};
use super::fields::{ActionFields, Key};
use super::json::{Json, Obj};
use super::{Action, DecisionMembers, Link, Record};
use compact_str::CompactString;

/// What the cross-record passes (the link graph, chains, confusable ids, the action
/// graph, findings) read of one record, owned: once these are taken, the record's tree is
/// needed only for what a finding or a view shows of it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordFacts {
    pub run_id: Option<CompactString>,
    pub created_at_ms: Option<f64>,
    pub link: LinkFacts,
    /// `signature.key_id`, when it is a string.
    pub key_id: Option<CompactString>,
    /// True when the record-level `capability_decisions` list holds an object.
    pub has_decisions: bool,
    /// The elements of `actions` that are objects: their position and facts.
    pub actions: Vec<(u32, ActionFacts)>,
}

/// `prev_record_hash`, owned ([`Link`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkFacts {
    Absent,
    Null,
    Hash(CompactString),
    Malformed,
}

impl LinkFacts {
    /// The link, borrowed.
    pub fn as_link(&self) -> Link<'_> {
        match self {
            LinkFacts::Absent => Link::Absent,
            LinkFacts::Null => Link::Null,
            LinkFacts::Hash(h) => Link::Hash(h),
            LinkFacts::Malformed => Link::Malformed,
        }
    }
}

impl RecordFacts {
    /// Reads the facts of a record from its JSON.
    pub fn of(record: &Record) -> RecordFacts {
        let obj = record.obj();
        let text = |v: Option<&Json>| v.and_then(Json::as_str).map(CompactString::from);
        let array = |key| obj.get(key).and_then(Json::as_array).unwrap_or(&[]);
        RecordFacts {
            run_id: text(obj.get("run_id")),
            created_at_ms: obj.get("created_at_ms").and_then(Json::as_f64),
            link: match obj.get("prev_record_hash") {
                None => LinkFacts::Absent,
                Some(Json::Null) => LinkFacts::Null,
                Some(Json::String(s)) => s
                    .as_str()
                    .map_or(LinkFacts::Malformed, |h| LinkFacts::Hash(h.into())),
                Some(_) => LinkFacts::Malformed,
            },
            key_id: text(obj.get("signature").and_then(|s| s.get("key_id"))),
            has_decisions: array("capability_decisions")
                .iter()
                .any(|d| d.as_object().is_some()),
            actions: array("actions")
                .iter()
                .enumerate()
                .filter_map(|(pos, a)| {
                    let a = a.as_object()?;
                    Some((pos as u32, ActionFacts::of(record, &Action(a))))
                })
                .collect(),
        }
    }
}

/// One action's analysis-relevant fields, copied out of the stored JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionFacts {
    pub id: Option<CompactString>,
    pub tool: Option<CompactString>,
    pub parent: Option<CompactString>,
    pub causal_chain_id: Option<CompactString>,
    pub scope_lease_id: Option<CompactString>,
    pub approval_context_hash: Option<CompactString>,
    pub time: Option<f64>,
    pub side_effect_class: Option<CompactString>,
    /// True when the action carries a `capability_decision` object.
    pub has_decision: bool,
    /// `decision` of the capability decision (`allow`, `deny`, …).
    pub outcome: Option<CompactString>,
    /// The authority shape: `approval_grant`, else `approval_mode`
    /// ([`Decision::grant`](super::Decision::grant)).
    pub grant: Option<CompactString>,
    /// The decision's RFC-final `approval_decision` label.
    pub approval_decision: Option<CompactString>,
    /// The drift check's result, every dialect normalised ([`Drift`]).
    pub drift: DriftResult,
    /// What the recorded result says happened ([`observed`]).
    pub observed: Option<&'static str>,
    /// `state_changing`, when it is a boolean.
    pub state_changing: Option<bool>,
    /// The action's own `outcome` text (not the decision's).
    pub result_outcome: Option<CompactString>,
    /// `exit_code`, when it is a number.
    pub exit_code: Option<f64>,
    /// True when `result_digest` is present.
    pub has_result_digest: bool,
    /// `bounded_lease_evidence`, when it is an object (rare: kept boxed).
    pub bounded_lease_evidence: Option<Box<Obj>>,
    /// The state digest members, when the action carries a pre or post digest.
    pub state_digest: Option<Box<StateDigest>>,
}

/// An action's state digest members (each as stored, any JSON type).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StateDigest {
    pub kind: Option<Json>,
    pub coverage: Option<Json>,
    pub pre: Option<Json>,
    pub post: Option<Json>,
}

impl StateDigest {
    /// The pre digest, when it is a string.
    pub fn pre(&self) -> Option<&str> {
        self.pre.as_ref().and_then(Json::as_str)
    }

    /// The post digest, when it is a string.
    pub fn post(&self) -> Option<&str> {
        self.post.as_ref().and_then(Json::as_str)
    }
}

impl ActionFacts {
    /// Reads the facts of one action of `record`.
    pub fn of(record: &Record, action: &Action<'_>) -> ActionFacts {
        ActionFacts::from_fields(record, &ActionFields::of(action.0))
    }

    /// The facts among fields already indexed (`record` holds the action).
    pub fn from_fields(record: &Record, f: &ActionFields<'_>) -> ActionFacts {
        ActionFacts::with_drift(record, f).0
    }

    /// [`ActionFacts::from_fields`], with the whole normalised drift check.
    pub fn with_drift<'a>(record: &'a Record, f: &ActionFields<'a>) -> (ActionFacts, Drift<'a>) {
        let decision = f.obj(Key::CapabilityDecision);
        let members = DecisionMembers::of(decision);
        let text = |v: Option<&str>| v.map(CompactString::from);
        let grant = members.grant();
        let state_digest = (f.get(Key::PreStateDigest).is_some()
            || f.get(Key::PostStateDigest).is_some())
        .then(|| {
            Box::new(StateDigest {
                kind: f.get(Key::StateDigestKind).cloned(),
                coverage: f.get(Key::StateDigestCoverage).cloned(),
                pre: f.get(Key::PreStateDigest).cloned(),
                post: f.get(Key::PostStateDigest).cloned(),
            })
        });
        let drift = Drift::from_inputs(record, &DriftInputs::of(f, grant));
        let facts = ActionFacts {
            id: text(f.str(Key::ActionId)),
            tool: text(f.str(Key::ToolName)),
            parent: text(f.str(Key::ParentActionId)),
            causal_chain_id: text(f.str(Key::CausalChainId)),
            scope_lease_id: text(f.str(Key::ScopeLeaseId)),
            approval_context_hash: text(f.str(Key::ApprovalContextHash)),
            time: f.get(Key::TimestampMs).and_then(Json::as_f64),
            side_effect_class: text(f.str(Key::SideEffectClass)),
            has_decision: decision.is_some(),
            outcome: text(members.outcome()),
            grant: text(grant),
            approval_decision: text(members.approval_decision()),
            drift: drift.result,
            observed: observed(members.outcome(), f),
            state_changing: f.get(Key::StateChanging).and_then(Json::as_bool),
            result_outcome: text(f.str(Key::Outcome)),
            exit_code: f.get(Key::ExitCode).and_then(Json::as_f64),
            has_result_digest: f.get(Key::ResultDigest).is_some(),
            bounded_lease_evidence: f.obj(Key::BoundedLeaseEvidence).cloned().map(Box::new),
            state_digest,
        };
        (facts, drift)
    }

    /// True when the action carries a pre or post state digest.
    pub fn has_state_digest(&self) -> bool {
        self.state_digest.is_some()
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
