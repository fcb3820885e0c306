//! Argument drift, every dialect normalised to one view (aep-fields.md §4): the JS
//! per-action object, the RFC-final three-state check, the protocol schema's record-level
//! summary and open-agent-audit's string label.

use super::fields::{ActionFields, Key};
use super::json::{Json, KeySet};
use super::{Action, DecisionMembers, Record};
use serde::Serialize;
use std::borrow::Cow;

/// The check result, in RFC-final terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriftResult {
    Matched,
    Drifted,
    NotChecked,
    /// No check result recorded (absent object, or a label that is not a result).
    Absent,
}

impl DriftResult {
    /// The kebab-case name (as serialised).
    pub fn name(self) -> &'static str {
        match self {
            DriftResult::Matched => "matched",
            DriftResult::Drifted => "drifted",
            DriftResult::NotChecked => "not-checked",
            DriftResult::Absent => "absent",
        }
    }
}

/// Whether the check is bound to the authority artifact the action relied on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Binding {
    /// `approval_or_lease_id` equals the lease id (lease grant) or approval hash (one-shot).
    Holds,
    /// It names some other artifact.
    Mismatch,
    /// The check names no artifact (every dialect but RFC-final).
    Unbound,
    /// Nothing to bind: no check recorded.
    NotApplicable,
}

impl Binding {
    /// The kebab-case name (as serialised).
    pub fn name(self) -> &'static str {
        match self {
            Binding::Holds => "holds",
            Binding::Mismatch => "mismatch",
            Binding::Unbound => "unbound",
            Binding::NotApplicable => "not-applicable",
        }
    }
}

/// The members of a per-action drift object, RFC-final then JS v0.3.
static DRIFT_KEYS: KeySet = KeySet::new(&[
    "result",
    "approved_arg_digest",
    "observed_arg_digest",
    "args_equality_version",
    "approval_or_lease_id",
    "drift_reason",
    "detected",
    "resolution",
    "approved_args_digest",
    "observed_args_digest",
]);

/// What the drift normalisation reads from an action.
#[derive(Clone, Copy, Debug)]
pub struct DriftInputs<'a> {
    pub argument_drift: Option<&'a Json>,
    pub tool: Option<&'a str>,
    /// The authority shape ([`super::Decision::grant`]).
    pub grant: Option<&'a str>,
    pub scope_lease_id: Option<&'a str>,
    pub approval_context_hash: Option<&'a str>,
}

impl<'a> DriftInputs<'a> {
    /// The inputs among an action's indexed members, its grant read from the decision.
    pub fn of(fields: &ActionFields<'a>, grant: Option<&'a str>) -> DriftInputs<'a> {
        DriftInputs {
            argument_drift: fields.get(Key::ArgumentDrift),
            tool: fields.str(Key::ToolName),
            grant,
            scope_lease_id: fields.str(Key::ScopeLeaseId),
            approval_context_hash: fields.str(Key::ApprovalContextHash),
        }
    }
}

/// One action's drift evidence, normalised.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Drift<'a> {
    /// Which dialect the evidence came from, or None when there is none.
    pub dialect: Option<&'static str>,
    pub result: DriftResult,
    /// Digest of the approved arguments.
    pub approved_digest: Option<&'a str>,
    /// Digest of the arguments actually used.
    pub observed_digest: Option<&'a str>,
    /// RFC-final `args_equality_version`.
    pub equality_version: Option<&'a str>,
    /// RFC-final `approval_or_lease_id`: the authority artifact the check is bound to.
    pub bound_to: Option<&'a str>,
    pub binding: Binding,
    /// What `bound_to` should equal, given the grant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_binding: Option<&'a str>,
    /// `drift_reason` (RFC), `diff_summary` (protocol schema) or the JS resolution.
    pub reason: Option<&'a str>,
    /// How aeplens read the evidence, when that is an interpretation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interpretation: Option<Cow<'static, str>>,
}

impl<'a> Drift<'a> {
    fn none() -> Drift<'a> {
        Drift {
            dialect: None,
            result: DriftResult::Absent,
            approved_digest: None,
            observed_digest: None,
            equality_version: None,
            bound_to: None,
            binding: Binding::NotApplicable,
            expected_binding: None,
            reason: None,
            interpretation: None,
        }
    }

    /// Normalises the drift evidence of `action` (falling back to the record-level
    /// protocol-schema summary when it names the action's tool).
    pub fn of(record: &'a Record, action: &Action<'a>) -> Drift<'a> {
        let f = ActionFields::of(action.0);
        let grant = DecisionMembers::of(f.obj(Key::CapabilityDecision)).grant();
        Drift::from_inputs(record, &DriftInputs::of(&f, grant))
    }

    /// [`Drift::of`] from the members already read.
    pub fn from_inputs(record: &'a Record, action: &DriftInputs<'a>) -> Drift<'a> {
        let mut d = match action.argument_drift {
            Some(Json::Object(o)) => {
                let s = |v: Option<&'a Json>| v.and_then(Json::as_str);
                let [
                    result,
                    approved,
                    observed,
                    version,
                    bound,
                    reason,
                    detected,
                    resolution,
                    js_approved,
                    js_observed,
                ] = o.get_many(&DRIFT_KEYS);
                let mut d = Drift::none();
                if result.is_some() {
                    d.dialect = Some("RFC-final");
                    d.result = match s(result) {
                        Some("matched") => DriftResult::Matched,
                        Some("drifted") => DriftResult::Drifted,
                        Some("not-checked") => DriftResult::NotChecked,
                        _ => DriftResult::Absent,
                    };
                    d.approved_digest = s(approved);
                    d.observed_digest = s(observed);
                    d.equality_version = s(version);
                    d.bound_to = s(bound);
                    d.reason = s(reason);
                } else {
                    d.dialect = Some("JS v0.3");
                    d.result = match (detected.and_then(Json::as_bool), s(resolution)) {
                        (Some(true), _) | (None, Some("denied")) => DriftResult::Drifted,
                        (Some(false), _) | (None, Some("matched")) => DriftResult::Matched,
                        _ => DriftResult::Absent,
                    };
                    d.approved_digest = s(js_approved);
                    d.observed_digest = s(js_observed);
                    d.reason = s(resolution);
                    d.interpretation = Some(Cow::Borrowed(
                        "JS detected/resolution mapped to RFC terms: detected=false → matched, \
                         detected=true → drifted",
                    ));
                }
                d
            }
            Some(Json::String(label)) => {
                let mut d = Drift::none();
                d.dialect = Some("open-agent-audit");
                d.interpretation = Some(Cow::Owned(format!(
                    "open-agent-audit risk label {:?}: not a check result",
                    label.lossy()
                )));
                d
            }
            _ => Drift::record_level(record, action).unwrap_or_else(Drift::none),
        };
        if d.dialect.is_some() && d.result != DriftResult::Absent {
            d.expected_binding = match action.grant {
                Some("bounded-lease") => action.scope_lease_id,
                Some("one-shot-payload") => action.approval_context_hash,
                _ => None,
            };
            d.binding = match (d.bound_to, d.expected_binding) {
                (None, _) => Binding::Unbound,
                (Some(b), Some(e)) if b == e => Binding::Holds,
                (Some(b), None)
                    if Some(b) == action.approval_context_hash
                        || Some(b) == action.scope_lease_id =>
                {
                    Binding::Holds
                }
                _ => Binding::Mismatch,
            };
        }
        d
    }

    /// The protocol schema's record-level summary, when it names this action's tool.
    fn record_level(record: &'a Record, action: &DriftInputs<'a>) -> Option<Drift<'a>> {
        let o = record.get("argument_drift")?.as_object()?;
        let s = |k: &str| o.get(k).and_then(Json::as_str);
        if s("tool_name").is_some_and(|t| Some(t) != action.tool) {
            return None;
        }
        let mut d = Drift::none();
        d.dialect = Some("protocol schema (record level)");
        d.approved_digest = s("declared_digest");
        d.observed_digest = s("actual_digest");
        d.reason = s("diff_summary");
        let names_args = o
            .get("drifted_args")
            .and_then(Json::as_array)
            .is_some_and(|a| !a.is_empty());
        let differ = matches!((d.approved_digest, d.observed_digest), (Some(a), Some(b)) if a != b);
        d.result = if names_args || differ {
            DriftResult::Drifted
        } else {
            DriftResult::Matched
        };
        d.interpretation = Some(Cow::Borrowed(if o.members.is_empty() {
            "record-level argument_drift is empty: no drift detected for the run"
        } else {
            "record-level argument_drift applied to the action whose tool it names"
        }));
        Some(d)
    }

    /// The observed argument digest: the drift check's, else the action's
    /// `arguments_digest` (passed in).
    pub fn payload_digest(&self, arguments_digest: Option<&'a str>) -> Option<&'a str> {
        self.observed_digest.or(arguments_digest)
    }
}
