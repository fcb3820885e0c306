//! The structural axis (L0): required fields, JSON types and enumerations per dialect
//! (aep-fields.md). Unknown keys are allowed everywhere, as in the protocol schema.
//! The Rust gateway's explicit nulls are accepted on `aep/v0.1` records.

use crate::model::Record;
use crate::model::json::{Json, KeySet, Obj, Picked};
use serde::{Deserialize, Serialize};

/// One structural problem.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StructuralViolation {
    /// JSON path, e.g. `actions[2].side_effect_class`.
    pub path: String,
    pub message: String,
}

/// Known `schema_version` values.
pub const SCHEMA_VERSIONS: [&str; 5] = ["aep/v0.1", "aep/v0.2", "aep/v0.3", "aep/v0.4", "aep/v0.5"];
const SIDE_EFFECT: &[&str] = &[
    "read",
    "mutate-local",
    "mutate-external",
    "network-egress",
    "unknown",
];
const RECORDING_MODE: &[&str] = &["full", "delta", "validation"];
const DECISION: &[&str] = &["allow", "deny", "ask_user", "dry_run"];
const APPROVAL_MODE: &[&str] = &[
    "one-shot-payload",
    "bounded-lease",
    "policy-allow-with-receipt",
    "policy-deny-with-evidence",
    "re-approval-on-drift",
    "none",
];
const APPROVAL_GRANT: &[&str] = &[
    "one-shot-payload",
    "bounded-lease",
    "policy-allow-with-receipt",
    "none",
];
const APPROVAL_DECISION: &[&str] = &[
    "allow",
    "deny",
    "expired",
    "revoked",
    "drift-requires-reapproval",
];
const DENY_REASON: &[&str] = &[
    "tool-identity",
    "argument",
    "tainted-input",
    "resource-scope",
    "missing-delegation",
    "policy-rule",
    "other",
];
const DIGEST_KIND: &[&str] = &[
    "git-tree",
    "sandbox-fs",
    "db-rowset",
    "browser-dom",
    "kv-snapshot",
    "memory-bag",
    "other",
];
/// Attribution grades, weakest first (aep-fields.md §8).
pub const BACKING: &[&str] = &[
    "unknown",
    "operator_asserted",
    "principal_key_signed",
    "qualified_signature",
];
const AUTHORITY_ORIGIN: &[&str] = &["subject_consented", "admin_assigned", "org_wide", "unknown"];
const DRIFT_RESULT: &[&str] = &["matched", "drifted", "not-checked"];
const PERMISSION_GATE: &[&str] = &["approved", "denied", "auto_approved"];

#[derive(Clone, Copy, PartialEq)]
enum Ty {
    Str,
    Num,
    Bool,
    Obj,
    Arr,
    StrArr,
}

/// Where the checks read an object's members from: the object, or its members picked
/// in one pass (an action's thirty-odd fields).
trait Members {
    fn member(&self, key: &str) -> Option<&Json>;
}

impl Members for Obj {
    fn member(&self, key: &str) -> Option<&Json> {
        self.get(key)
    }
}

impl Members for Picked<'_> {
    fn member(&self, key: &str) -> Option<&Json> {
        self.get(key)
    }
}

/// What an action member must be.
#[derive(Clone, Copy)]
enum Rule {
    /// This type; then whether it is required and whether `null` is allowed.
    Is(Ty, bool, bool),
    /// When a string, one of these.
    OneOf(&'static [&'static str]),
}

/// Every action member the checks read with its rule, in the order problems are
/// reported (the nested objects are looked into after).
const ACTION_RULES: [(&str, Rule); 32] = [
    ("action_id", Rule::Is(Ty::Str, true, false)),
    ("tool_name", Rule::Is(Ty::Str, true, false)),
    ("state_changing", Rule::Is(Ty::Bool, true, false)),
    ("timestamp_ms", Rule::Is(Ty::Num, true, false)),
    ("precondition_digest", Rule::Is(Ty::Str, false, false)),
    ("result_digest", Rule::Is(Ty::Str, false, false)),
    ("parent_action_id", Rule::Is(Ty::Str, false, false)),
    ("causal_chain_id", Rule::Is(Ty::Str, false, false)),
    ("outcome", Rule::Is(Ty::Str, false, false)),
    ("arguments_digest", Rule::Is(Ty::Str, false, false)),
    ("tool_descriptor_digest", Rule::Is(Ty::Str, false, false)),
    ("server_card_digest", Rule::Is(Ty::Str, false, false)),
    ("scope_lease_id", Rule::Is(Ty::Str, false, false)),
    ("approval_context_hash", Rule::Is(Ty::Str, false, false)),
    ("pre_state_digest", Rule::Is(Ty::Str, false, false)),
    ("post_state_digest", Rule::Is(Ty::Str, false, false)),
    ("delta_ref", Rule::Is(Ty::Str, false, false)),
    ("mcp_header_risk", Rule::Is(Ty::Str, false, true)),
    ("exit_code", Rule::Is(Ty::Num, false, false)),
    ("evidence_refs", Rule::Is(Ty::StrArr, false, false)),
    ("input_taint_labels", Rule::Is(Ty::StrArr, false, false)),
    ("output_taint_labels", Rule::Is(Ty::StrArr, false, false)),
    ("memory_read_refs", Rule::Is(Ty::StrArr, false, false)),
    ("memory_write_refs", Rule::Is(Ty::StrArr, false, false)),
    ("state_digest_coverage", Rule::Is(Ty::Obj, false, false)),
    ("argument_drift", Rule::Is(Ty::Obj, false, false)),
    ("permission_gate", Rule::Is(Ty::Obj, false, false)),
    ("bounded_lease_evidence", Rule::Is(Ty::Obj, false, false)),
    ("capability_decision", Rule::Is(Ty::Obj, false, false)),
    ("side_effect_class", Rule::OneOf(SIDE_EFFECT)),
    ("recording_mode", Rule::OneOf(RECORDING_MODE)),
    ("state_digest_kind", Rule::OneOf(DIGEST_KIND)),
];

/// The names of [`ACTION_RULES`], picked from an action in one pass.
static ACTION_NAMES: [&str; ACTION_RULES.len()] = {
    let mut names = [""; ACTION_RULES.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = ACTION_RULES[i].0;
        i += 1;
    }
    names
};
static ACTION_FIELDS: KeySet = KeySet::new(&ACTION_NAMES);

struct Checker<'a> {
    out: &'a mut Vec<StructuralViolation>,
    /// Rust gateway dialect: `None` serialised as `null` is genuine output.
    nulls_ok: bool,
}

impl Checker<'_> {
    fn push(&mut self, path: String, message: impl Into<String>) {
        self.out.push(StructuralViolation {
            path,
            message: message.into(),
        });
    }

    fn field(
        &mut self,
        obj: &dyn Members,
        base: &str,
        key: &str,
        ty: Ty,
        required: bool,
        nullable: bool,
    ) {
        let path = || {
            if base.is_empty() {
                key.to_string()
            } else {
                format!("{base}.{key}")
            }
        };
        let Some(v) = obj.member(key) else {
            if required {
                self.push(path(), "required field is missing");
            }
            return;
        };
        if matches!(v, Json::Null) {
            if !(nullable || self.nulls_ok) {
                self.push(path(), "null is not allowed here");
            }
            return;
        }
        let ok = match ty {
            Ty::Str => matches!(v, Json::String(_)),
            Ty::Num => matches!(v, Json::Number(_)),
            Ty::Bool => matches!(v, Json::Bool(_)),
            Ty::Obj => matches!(v, Json::Object(_)),
            Ty::Arr => matches!(v, Json::Array(_)),
            Ty::StrArr => v
                .as_array()
                .is_some_and(|a| a.iter().all(|x| matches!(x, Json::String(_)))),
        };
        if !ok {
            let want = match ty {
                Ty::Str => "a string",
                Ty::Num => "a number",
                Ty::Bool => "a boolean",
                Ty::Obj => "an object",
                Ty::Arr => "an array",
                Ty::StrArr => "an array of strings",
            };
            self.push(path(), format!("expected {want}, found {}", v.type_name()));
        }
    }

    fn enumeration(&mut self, obj: &dyn Members, base: &str, key: &str, allowed: &[&str]) {
        if let Some(s) = obj.member(key).and_then(Json::as_str)
            && !allowed.contains(&s)
        {
            let path = if base.is_empty() {
                key.to_string()
            } else {
                format!("{base}.{key}")
            };
            self.push(path, format!("{s:?} is not one of {}", allowed.join(", ")));
        }
    }
}

/// A sibling evidence type (`model::kind`) checked against the protocol's JSON Schema of
/// its kind (`schema/aep/`): one violation per schema error, at the member it concerns.
pub fn check_sibling(record: &Record, kind: crate::model::kind::Kind) -> Vec<StructuralViolation> {
    use std::sync::OnceLock;
    static VALIDATORS: OnceLock<Vec<(crate::model::kind::Kind, jsonschema::Validator)>> =
        OnceLock::new();
    let validators = VALIDATORS.get_or_init(|| {
        (crate::model::kind::Kind::SIBLINGS.into_iter())
            .filter_map(|k| {
                let schema: serde_json::Value = serde_json::from_str(k.schema()?).ok()?;
                Some((k, jsonschema::draft202012::new(&schema).ok()?))
            })
            .collect()
    });
    let Some((_, validator)) = validators.iter().find(|(k, _)| *k == kind) else {
        return vec![StructuralViolation {
            path: String::new(),
            message: format!("no schema to check a {} against", kind.name()),
        }];
    };
    let instance = record.json().to_serde();
    (validator.iter_errors(&instance))
        .map(|e| StructuralViolation {
            path: e
                .instance_path()
                .to_string()
                .trim_start_matches('/')
                .replace('/', "."),
            message: format!("{} schema: {e}", kind.name()),
        })
        .collect()
}

/// Runs the structural checks on one record.
pub fn check(record: &Record) -> Vec<StructuralViolation> {
    let mut out = Vec::new();
    let obj = record.obj();
    let version = record.schema_version();
    let mut c = Checker {
        out: &mut out,
        nulls_ok: version == Some("aep/v0.1"),
    };
    c.field(obj, "", "schema_version", Ty::Str, true, false);
    if let Some(v) = version
        && !SCHEMA_VERSIONS.contains(&v)
    {
        c.push(
            "schema_version".into(),
            format!("unknown schema_version {v:?}"),
        );
    }
    c.field(obj, "", "run_id", Ty::Str, true, false);
    c.field(obj, "", "created_at_ms", Ty::Num, true, false);
    for key in [
        "user_id",
        "subject_id",
        "repo_commit",
        "runtime_version",
        "model_provider",
        "model_id",
        "policy_bundle_digest",
        "tool_manifest_digest",
        "authorized_by",
        "identity_source",
    ] {
        c.field(obj, "", key, Ty::Str, false, false);
    }
    for key in ["trace_id", "session_id"] {
        c.field(obj, "", key, Ty::Str, false, version == Some("aep/v0.1"));
    }
    for key in [
        "parent_trace_id",
        "mcp_server_card_digest",
        "prev_record_hash",
    ] {
        c.field(obj, "", key, Ty::Str, false, true);
    }
    for key in [
        "input_refs",
        "output_refs",
        "capability_decisions",
        "actions",
        "verifier_results",
    ] {
        c.field(obj, "", key, Ty::Arr, false, false);
    }
    for key in [
        "run_context",
        "budget_ledger",
        "timestamp_proof",
        "dsse_envelope",
        "argument_drift",
    ] {
        c.field(obj, "", key, Ty::Obj, false, false);
    }
    c.field(obj, "", "signature", Ty::Obj, false, false);
    c.enumeration(obj, "", "run_side_effect_class_max", SIDE_EFFECT);
    c.enumeration(obj, "", "side_effect_class", SIDE_EFFECT);
    c.enumeration(obj, "", "recording_mode", RECORDING_MODE);
    c.enumeration(obj, "", "authority_origin", AUTHORITY_ORIGIN);
    c.enumeration(obj, "", "attribution_backing", BACKING);
    c.enumeration(obj, "", "run_attribution_backing_floor", BACKING);
    if let Some(v) = obj.get("run_attribution_backing_observed") {
        match v.as_array() {
            None => c.push(
                "run_attribution_backing_observed".into(),
                "expected an array",
            ),
            Some(items) => {
                for (i, item) in items.iter().enumerate() {
                    let path = format!("run_attribution_backing_observed[{i}]");
                    match item.as_str() {
                        Some(s) if BACKING.contains(&s) => {
                            if items[..i].iter().any(|p| p.as_str() == Some(s)) {
                                c.push(
                                    path,
                                    format!("duplicate grade {s:?} (items must be unique)"),
                                );
                            }
                        }
                        _ => c.push(path, "not an attribution grade"),
                    }
                }
            }
        }
    }
    if let Some(v) = obj.get("authorization_evidence_count") {
        let ok = v.as_f64().is_some_and(|n| n >= 0.0 && n.fract() == 0.0);
        if !ok {
            c.push(
                "authorization_evidence_count".into(),
                "must be an integer >= 0",
            );
        }
    }
    if let Some(sig) = obj.get("signature").and_then(Json::as_object) {
        for key in ["alg", "key_id", "sig"] {
            c.field(sig, "signature", key, Ty::Str, true, false);
        }
    }
    if let Some(env) = obj.get("dsse_envelope").and_then(Json::as_object) {
        c.field(env, "dsse_envelope", "payloadType", Ty::Str, true, false);
        c.field(env, "dsse_envelope", "payload", Ty::Str, true, false);
        c.field(env, "dsse_envelope", "signatures", Ty::Arr, true, false);
    }
    if let Some(list) = obj.get("capability_decisions").and_then(Json::as_array) {
        for (i, d) in list.iter().enumerate() {
            decision(&mut c, d, &format!("capability_decisions[{i}]"));
        }
    }
    if let Some(list) = obj.get("actions").and_then(Json::as_array) {
        for (i, a) in list.iter().enumerate() {
            action(&mut c, a, &format!("actions[{i}]"));
        }
    }
    out
}

fn decision(c: &mut Checker<'_>, d: &Json, path: &str) {
    let Some(o) = d.as_object() else {
        c.push(
            path.into(),
            format!("expected an object, found {}", d.type_name()),
        );
        return;
    };
    for key in ["capability", "subject", "resource"] {
        c.field(o, path, key, Ty::Str, true, false);
    }
    c.field(o, path, "decision", Ty::Str, true, false);
    if !c.nulls_ok {
        c.enumeration(o, path, "decision", DECISION);
    }
    c.field(o, path, "reason_code", Ty::Str, false, false);
    c.enumeration(o, path, "approval_mode", APPROVAL_MODE);
    c.enumeration(o, path, "approval_grant", APPROVAL_GRANT);
    c.enumeration(o, path, "approval_decision", APPROVAL_DECISION);
    c.enumeration(o, path, "deny_reason_class", DENY_REASON);
    if let Some(ext) = o.get("approval_extension") {
        match ext.as_object() {
            Some(e) => {
                let p = format!("{path}.approval_extension");
                for key in ["namespace", "mode", "evidence_digest"] {
                    c.field(e, &p, key, Ty::Str, true, false);
                }
            }
            None => c.push(format!("{path}.approval_extension"), "expected an object"),
        }
    }
}

fn action(c: &mut Checker<'_>, a: &Json, path: &str) {
    let Some(o) = a.as_object() else {
        c.push(
            path.into(),
            format!("expected an object, found {}", a.type_name()),
        );
        return;
    };
    let o = &Picked::of(o, &ACTION_FIELDS);
    for (key, rule) in ACTION_RULES {
        match rule {
            Rule::Is(ty, required, nullable) => c.field(o, path, key, ty, required, nullable),
            Rule::OneOf(allowed) => c.enumeration(o, path, key, allowed),
        }
    }
    if let Some(d) = o
        .get("capability_decision")
        .filter(|d| d.as_object().is_some())
    {
        decision(c, d, &format!("{path}.capability_decision"));
    }
    if let Some(g) = o.get("permission_gate").and_then(Json::as_object) {
        let p = format!("{path}.permission_gate");
        c.field(g, &p, "decision", Ty::Str, true, false);
        c.enumeration(g, &p, "decision", PERMISSION_GATE);
        c.field(g, &p, "gate", Ty::Str, true, false);
    }
    if let Some(d) = o.get("argument_drift").and_then(Json::as_object) {
        let p = format!("{path}.argument_drift");
        if d.get("result").is_some() {
            c.enumeration(d, &p, "result", DRIFT_RESULT);
        } else if d.get("detected").is_some() || d.get("resolution").is_some() {
            c.field(d, &p, "detected", Ty::Bool, true, false);
            c.field(d, &p, "approved_args_digest", Ty::Str, true, false);
            c.field(d, &p, "observed_args_digest", Ty::Str, true, false);
            c.field(d, &p, "resolution", Ty::Str, true, false);
            c.enumeration(d, &p, "resolution", &["matched", "denied"]);
        }
    }
    if let Some(b) = o.get("bounded_lease_evidence").and_then(Json::as_object) {
        let p = format!("{path}.bounded_lease_evidence");
        c.field(b, &p, "lease_id", Ty::Str, true, false);
        c.field(b, &p, "lease_granted_at_ms", Ty::Num, true, false);
        c.field(b, &p, "lease_expires_at_ms", Ty::Num, true, false);
        c.field(b, &p, "lease_duration_ms", Ty::Num, false, false);
        c.field(b, &p, "execution_started_at_ms", Ty::Num, false, false);
    }
}
