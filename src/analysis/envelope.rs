//! The decision-envelope projection (analysis-rules §8, RFC Gap 5): materialised per
//! action from flat fields, never stored.

use super::authority::Sources;
use super::comparability::{identity_fields, tuple_values};
use super::lease::{LeaseSource, LeaseView};
use crate::model::drift::Drift;
use crate::model::fields::Key;
use crate::model::json::Json;
use serde::Serialize;

/// One action's decision envelope, borrowing from the record; field order is the
/// projection's key order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecisionEnvelope<'a> {
    pub action_class: &'a str,
    pub target_boundary: Option<TargetBoundary<'a>>,
    pub principal_id: Option<&'a str>,
    pub run_id: Option<&'a str>,
    pub policy_id: Option<&'a str>,
    pub policy_version: Option<&'a str>,
    pub approval_or_lease_id: Option<&'a str>,
    pub payload_digest: Option<&'a str>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub expiry_ms: Option<f64>,
    pub observed_result: Option<&'static str>,
    pub action_id: Option<&'a str>,
}

/// `{kind, identity fields}` of the state-digest coverage.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetBoundary<'a> {
    pub kind: &'a str,
    pub identity: Vec<(&'static str, &'a Json)>,
}

impl Serialize for TargetBoundary<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1 + self.identity.len()))?;
        m.serialize_entry("kind", self.kind)?;
        for (k, v) in &self.identity {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Projects one action (`drift` is its normalised drift check).
pub fn project<'a>(
    sources: &Sources<'a>,
    drift: &Drift<'a>,
    lease: Option<&LeaseView>,
) -> DecisionEnvelope<'a> {
    let a = &sources.action;
    let target_boundary = match (a.str(Key::StateDigestKind), a.obj(Key::StateDigestCoverage)) {
        (Some(kind), Some(cov)) => {
            let (names, values) = tuple_values(kind, cov);
            Some(TargetBoundary {
                kind,
                identity: names[..identity_fields(kind).len()]
                    .iter()
                    .zip(values)
                    .filter_map(|(f, v)| Some((*f, v?)))
                    .collect(),
            })
        }
        _ => None,
    };
    let policy = sources.policy_bundle_digest();
    // A digest carries a version only as `id@version` (the version not itself a digest).
    let (policy_id, policy_version) = match policy.and_then(|p| p.rsplit_once('@')) {
        Some((id, v)) if !id.is_empty() && !v.is_empty() && !v.contains(':') => (Some(id), Some(v)),
        _ => (policy, None),
    };
    DecisionEnvelope {
        action_class: a.str(Key::SideEffectClass).unwrap_or("unknown"),
        target_boundary,
        principal_id: sources.decision.subject(),
        run_id: sources.run_id(),
        policy_id,
        policy_version,
        approval_or_lease_id: a
            .str(Key::ApprovalContextHash)
            .or_else(|| a.str(Key::ScopeLeaseId)),
        payload_digest: drift.payload_digest(a.str(Key::ArgumentsDigest)),
        expiry_ms: lease
            .filter(|l| l.source != LeaseSource::Inferred)
            .and_then(|l| l.expires_at_ms),
        observed_result: sources.observed(),
        action_id: a.str(Key::ActionId),
    }
}
