//! The three post-run questions (analysis-rules §1): what authority was available,
//! what authority was exercised, and what changed between approval and execution.
//! Every field says which dialect it comes from, and absent fields say "not recorded".

use super::lease::LeaseView;
use crate::model::drift::{Binding, Drift, DriftResult};
use crate::model::json::Json;
use crate::model::{Action, Record};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// One field of a view: its value as stored (None = not recorded) and its dialect.
#[derive(Clone, Debug, PartialEq)]
pub struct Field<'a> {
    pub name: &'static str,
    pub value: Option<&'a Json>,
    pub dialect: &'static str,
}

/// Available and exercised authority of one action, plus what changed in between.
#[derive(Clone, Debug, PartialEq)]
pub struct AuthorityView<'a> {
    pub available: Vec<Field<'a>>,
    pub exercised: Vec<Field<'a>>,
    pub changed: Vec<Change>,
}

/// One answer to "what changed between approval and execution?".
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Change {
    #[serde(skip)]
    pub what: &'static str,
    /// `unchanged`, `changed`, `unknown` or `not-applicable`.
    pub status: &'static str,
    pub summary: String,
}

/// Action-level fields of the available authority: (name, path in the action, dialect).
const AVAILABLE: [(&str, &[&str], &str); 12] = [
    ("decision", &["capability_decision", "decision"], "all"),
    ("capability", &["capability_decision", "capability"], "all"),
    ("subject", &["capability_decision", "subject"], "all"),
    ("resource", &["capability_decision", "resource"], "all"),
    (
        "approval_grant",
        &["capability_decision", "approval_grant"],
        "RFC-final",
    ),
    (
        "approval_decision",
        &["capability_decision", "approval_decision"],
        "RFC-final",
    ),
    (
        "approval_mode",
        &["capability_decision", "approval_mode"],
        "JS v0.3",
    ),
    (
        "approval_extension",
        &["capability_decision", "approval_extension"],
        "JS v0.3",
    ),
    (
        "deny_reason_class",
        &["capability_decision", "deny_reason_class"],
        "JS v0.3",
    ),
    (
        "reason_code",
        &["capability_decision", "reason_code"],
        "all",
    ),
    (
        "approval_context_hash",
        &["approval_context_hash"],
        "JS v0.2",
    ),
    ("scope_lease_id", &["scope_lease_id"], "JS v0.2"),
];

const AVAILABLE_MORE: [(&str, &[&str], &str); 2] = [
    (
        "bounded_lease_evidence",
        &["bounded_lease_evidence"],
        "RFC-final",
    ),
    ("permission_gate", &["permission_gate"], "JS"),
];

/// Record-level fields of the available authority.
const AVAILABLE_RECORD: [(&str, &[&str], &str); 5] = [
    (
        "policy_bundle_digest",
        &["policy_bundle_digest"],
        "JS, protocol schema",
    ),
    (
        "delegation_chain",
        &["run_context", "delegation_chain"],
        "JS v0.2",
    ),
    ("authorized_by", &["authorized_by"], "v0.5"),
    ("authority_origin", &["authority_origin"], "v0.5"),
    ("attribution_backing", &["attribution_backing"], "v0.5"),
];

const EXERCISED: [(&str, &[&str], &str); 19] = [
    ("tool_name", &["tool_name"], "all"),
    ("capability", &["capability_decision", "capability"], "all"),
    ("resource", &["capability_decision", "resource"], "all"),
    ("side_effect_class", &["side_effect_class"], "JS v0.3"),
    ("state_changing", &["state_changing"], "all"),
    ("arguments_digest", &["arguments_digest"], "JS (#163)"),
    ("outcome", &["outcome"], "JS (#163)"),
    ("exit_code", &["exit_code"], "JS (#163)"),
    ("result_digest", &["result_digest"], "all"),
    ("pre_state_digest", &["pre_state_digest"], "JS v0.2"),
    ("post_state_digest", &["post_state_digest"], "JS v0.2"),
    ("state_digest_kind", &["state_digest_kind"], "JS v0.3"),
    (
        "state_digest_coverage",
        &["state_digest_coverage"],
        "JS v0.3 / RFC-final",
    ),
    ("input_taint_labels", &["input_taint_labels"], "JS v0.2"),
    ("output_taint_labels", &["output_taint_labels"], "JS v0.2"),
    ("memory_read_refs", &["memory_read_refs"], "JS v0.2"),
    ("memory_write_refs", &["memory_write_refs"], "JS v0.2"),
    ("timestamp_ms", &["timestamp_ms"], "all"),
    ("mcp_header_risk", &["mcp_header_risk"], "Rust gateway"),
];

fn fields<'a>(
    root: &'a crate::model::json::Obj,
    table: &[(&'static str, &[&str], &'static str)],
    out: &mut Vec<Field<'a>>,
) {
    // The parent of a nested path is looked up once per table, not once per field.
    let mut parent: Option<(&str, Option<&'a Json>)> = None;
    out.extend(table.iter().map(|(name, path, dialect)| {
        let value = match path {
            [key] => root.get(key),
            [first, rest @ ..] => {
                let p = match parent {
                    Some((k, v)) if k == *first => v,
                    _ => {
                        let v = root.get(first);
                        parent = Some((first, v));
                        v
                    }
                };
                p.and_then(|p| rest.iter().try_fold(p, |v, k| v.get(k)))
            }
            [] => None,
        };
        Field {
            name,
            value,
            dialect,
        }
    }));
}

/// Builds the authority view of one action (`drift` is its normalised drift check).
pub fn view<'a>(
    record: &'a Record,
    a: &Action<'a>,
    drift: &Drift<'_>,
    lease: Option<&LeaseView>,
    parent: Option<(&'a Record, Action<'a>)>,
) -> AuthorityView<'a> {
    let mut available = Vec::new();
    fields(a.0, &AVAILABLE, &mut available);
    fields(a.0, &AVAILABLE_MORE, &mut available);
    fields(record.obj(), &AVAILABLE_RECORD, &mut available);
    let mut exercised = Vec::new();
    fields(a.0, &EXERCISED, &mut exercised);
    AuthorityView {
        available,
        exercised,
        changed: changes(a, drift, lease, parent),
    }
}

fn changes(
    a: &Action<'_>,
    drift: &Drift<'_>,
    lease: Option<&LeaseView>,
    parent: Option<(&Record, Action<'_>)>,
) -> Vec<Change> {
    let mut out = Vec::new();
    let (status, summary) = match drift.result {
        DriftResult::Matched => (
            "unchanged",
            format!(
                "arguments matched the approval ({})",
                drift.dialect.unwrap_or("?")
            ),
        ),
        DriftResult::Drifted => (
            "changed",
            format!(
                "arguments drifted: approved {} → observed {}",
                drift.approved_digest.unwrap_or("not recorded"),
                drift.observed_digest.unwrap_or("not recorded")
            ),
        ),
        DriftResult::NotChecked => ("unknown", "drift check explicitly not performed".into()),
        DriftResult::Absent => (
            "unknown",
            drift
                .interpretation
                .clone()
                .unwrap_or_else(|| "no drift check recorded".into()),
        ),
    };
    out.push(Change {
        what: "argument_drift",
        status,
        summary,
    });
    let binding = match drift.binding {
        Binding::Holds => (
            "unchanged",
            format!("drift check bound to {}", drift.bound_to.unwrap_or("")),
        ),
        Binding::Mismatch => (
            "changed",
            format!(
                "drift check bound to {} but the action relied on {}",
                drift.bound_to.unwrap_or(""),
                drift.expected_binding.unwrap_or("(nothing recorded)")
            ),
        ),
        Binding::Unbound => ("unknown", "drift check names no approval or lease".into()),
        Binding::NotApplicable => ("not-applicable", "no drift check to bind".into()),
    };
    out.push(Change {
        what: "approval_binding",
        status: binding.0,
        summary: binding.1,
    });
    let approval = a.str_field("approval_context_hash");
    let payload = drift.payload_digest(a);
    out.push(Change {
        what: "approval_vs_payload",
        status: if approval.is_some() && payload.is_some() {
            "unknown"
        } else {
            "not-applicable"
        },
        summary: format!(
            "approval_context_hash {} · observed argument digest {}",
            approval.unwrap_or("not recorded"),
            payload.unwrap_or("not recorded")
        ),
    });
    if let Some(l) = lease {
        out.push(Change {
            what: "lease",
            status: match l.verdict.name() {
                "inside" => "unchanged",
                "unknown-window" => "unknown",
                _ => "changed",
            },
            summary: format!(
                "execution {} lease {} ({} window)",
                l.verdict.name(),
                l.lease_id,
                l.source.name()
            ),
        });
    }
    if let Some((_, p)) = parent
        && p.decision().and_then(|d| d.outcome()) == Some("deny")
    {
        let fresh = approval.is_some() && approval != p.str_field("approval_context_hash");
        out.push(Change {
            what: "re_approval",
            status: if fresh { "changed" } else { "unknown" },
            summary: format!(
                "follows denied {} ({}); {}",
                p.id().unwrap_or("?"),
                p.decision()
                    .and_then(|d| d.str_field("reason_code"))
                    .unwrap_or("no reason code"),
                if fresh {
                    "carries a new approval"
                } else {
                    "carries no new approval"
                }
            ),
        });
    }
    out
}

struct FieldMap<'v, 'a>(&'v [Field<'a>]);

impl Serialize for FieldMap<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Entry<'a> {
            recorded: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            value: Option<&'a Json>,
            dialect: &'static str,
        }
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for f in self.0 {
            m.serialize_entry(
                f.name,
                &Entry {
                    recorded: f.value.is_some(),
                    value: f.value,
                    dialect: f.dialect,
                },
            )?;
        }
        m.end()
    }
}

impl Serialize for AuthorityView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("available", &FieldMap(&self.available))?;
        m.serialize_entry("exercised", &FieldMap(&self.exercised))?;
        let changed: serde_json::Map<String, serde_json::Value> = self
            .changed
            .iter()
            .map(|c| {
                (
                    c.what.to_string(),
                    serde_json::to_value(c).unwrap_or_default(),
                )
            })
            .collect();
        m.serialize_entry("changed", &changed)?;
        m.end()
    }
}
