//! The decision-envelope projection (analysis-rules §8, RFC Gap 5): materialised per
//! action from flat fields, never stored.

use super::comparability::identity_fields;
use super::lease::{LeaseSource, LeaseView};
use crate::model::drift::Drift;
use crate::model::json::Json;
use crate::model::{Action, Record};
use serde::Serialize;

/// One action's decision envelope; field order is the projection's key order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecisionEnvelope {
    pub action_class: String,
    pub target_boundary: Option<serde_json::Value>,
    pub principal_id: Option<String>,
    pub run_id: Option<String>,
    pub policy_id: Option<String>,
    pub policy_version: Option<String>,
    pub approval_or_lease_id: Option<String>,
    pub payload_digest: Option<String>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub expiry_ms: Option<f64>,
    pub observed_result: Option<&'static str>,
    pub action_id: Option<String>,
}

/// `denied`, `skipped`, `failure`, `success` or None (analysis-rules §8).
pub fn observed_result(a: &Action<'_>) -> Option<&'static str> {
    let decision = a.decision().and_then(|d| d.outcome());
    let outcome = a.str_field("outcome");
    let exit = a.get("exit_code").and_then(Json::as_f64);
    if decision == Some("deny") {
        Some("denied")
    } else if decision == Some("dry_run") {
        Some("skipped")
    } else if matches!(outcome, Some("failed" | "error" | "failure"))
        || exit.is_some_and(|c| c != 0.0)
    {
        Some("failure")
    } else if outcome.is_some() || exit.is_some() || a.get("result_digest").is_some() {
        Some("success")
    } else {
        None
    }
}

/// Projects one action.
pub fn project(record: &Record, a: &Action<'_>, lease: Option<&LeaseView>) -> DecisionEnvelope {
    let target_boundary = match (
        a.str_field("state_digest_kind"),
        a.get("state_digest_coverage").and_then(Json::as_object),
    ) {
        (Some(kind), Some(cov)) => {
            let mut m = serde_json::Map::new();
            m.insert("kind".into(), kind.into());
            for f in identity_fields(kind) {
                if let Some(v) = cov.get(f) {
                    m.insert((*f).into(), serde_json::to_value(v).unwrap_or_default());
                }
            }
            Some(serde_json::Value::Object(m))
        }
        _ => None,
    };
    let policy = record.str_field("policy_bundle_digest");
    // A digest carries a version only as `id@version` (the version not itself a digest).
    let (policy_id, policy_version) = match policy.and_then(|p| p.rsplit_once('@')) {
        Some((id, v)) if !id.is_empty() && !v.is_empty() && !v.contains(':') => {
            (Some(id.to_string()), Some(v.to_string()))
        }
        _ => (policy.map(str::to_string), None),
    };
    let drift = Drift::of(record, a);
    DecisionEnvelope {
        action_class: a.side_effect_class().unwrap_or("unknown").to_string(),
        target_boundary,
        principal_id: a
            .decision()
            .and_then(|d| d.str_field("subject"))
            .map(str::to_string),
        run_id: record.run_id().map(str::to_string),
        policy_id,
        policy_version,
        approval_or_lease_id: a
            .str_field("approval_context_hash")
            .or_else(|| a.str_field("scope_lease_id"))
            .map(str::to_string),
        payload_digest: drift.payload_digest(a).map(str::to_string),
        expiry_ms: lease
            .filter(|l| l.source != LeaseSource::Inferred)
            .and_then(|l| l.expires_at_ms),
        observed_result: observed_result(a),
        action_id: a.id().map(str::to_string),
    }
}
