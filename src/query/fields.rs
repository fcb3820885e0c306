//! Every field of the filter language, in one table of (name, type, getter): the
//! language's checker, the docs, completion and an SQL binding later all read it.

use super::columns::{Ctx, Value};
use crate::analysis::graph::NodeId;
use std::borrow::Cow;

/// A field's type (query.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Str,
    Int,
    Time,
    Bool,
    /// Ordered `info < low < medium < high`.
    Severity,
    /// A set of strings (`finding`).
    Set,
}

impl Type {
    /// The type's name in messages and docs.
    pub fn name(self) -> &'static str {
        match self {
            Type::Str => "string",
            Type::Int => "int",
            Type::Time => "time",
            Type::Bool => "bool",
            Type::Severity => "severity",
            Type::Set => "set of strings",
        }
    }

    /// The type's name with its article: `a string`, `an int`.
    pub fn article(self) -> String {
        match self {
            Type::Int => "an int".into(),
            t => format!("a {}", t.name()),
        }
    }

    /// Values of this type order (`<`, ranges).
    pub fn orders(self) -> bool {
        matches!(self, Type::Int | Type::Time | Type::Severity)
    }
}

/// One field.
pub struct Field {
    pub name: &'static str,
    pub ty: Type,
    /// The Parquet `actions` column it matches (docs/tables.md), or "".
    pub column: &'static str,
    pub about: &'static str,
    /// Every value it can take, when that is a closed list (a value outside it is an
    /// error, not a silent "no match"); empty when open.
    pub values: &'static [&'static str],
    pub get: for<'c, 'a> fn(&'c Ctx<'a>, NodeId) -> Value<'c>,
}

impl Field {
    /// The field reads the review's marks (they change while the explorer runs, and
    /// need a review to mean anything).
    pub fn reads_review(&self) -> bool {
        matches!(self.name, "marked" | "mark" | "note")
    }
}

/// The severities, in order.
pub const SEVERITIES: [&str; 4] = ["info", "low", "medium", "high"];

const AUTHENTICITY: &[&str] = &[
    "valid",
    "invalid",
    "binding-mismatch",
    "unsupported-legacy",
    "unsigned",
    "not-checked",
];
const CHAIN: &[&str] = &[
    "intact",
    "not-present",
    "partial",
    "orphaned",
    "broken",
    "not-checked",
];
const AXIS: &[&str] = &["pass", "fail", "not-evaluated"];
const TIME_PROOF: &[&str] = &[
    "tsa-verified",
    "tsa-untrusted",
    "tsa-imprint-mismatch",
    "tsa-invalid",
    "tsa-malformed",
    "local-consistent",
    "local-inconsistent",
    "opaque",
];

fn s(v: Option<&str>) -> Value<'_> {
    v.map_or(Value::Null, |v| Value::Str(Cow::Borrowed(v)))
}

fn st(v: &'static str) -> Value<'static> {
    Value::Str(Cow::Borrowed(v))
}

fn b(v: Option<bool>) -> Value<'static> {
    v.map_or(Value::Null, Value::Bool)
}

/// The fields, in the order query.md lists them.
pub static FIELDS: &[Field] = &[
    Field {
        name: "run",
        ty: Type::Str,
        column: "run_id",
        about: "the run",
        values: &[],
        get: |c, n| s(Some(c.run_id(n))),
    },
    Field {
        name: "action",
        ty: Type::Str,
        column: "action_id",
        about: "the action id",
        values: &[],
        get: |c, n| s(c.facts(n).and_then(|f| f.id())),
    },
    Field {
        name: "tool",
        ty: Type::Str,
        column: "tool_name",
        about: "the tool",
        values: &[],
        get: |c, n| s(c.facts(n).and_then(|f| f.tool())),
    },
    Field {
        name: "parent",
        ty: Type::Str,
        column: "parent_action_id",
        about: "the recorded parent action id",
        values: &[],
        get: |c, n| s(c.facts(n).and_then(|f| f.parent())),
    },
    Field {
        name: "decision",
        ty: Type::Str,
        column: "decision",
        about: "the capability decision: allow, deny, …",
        values: &[],
        get: |c, n| s(c.facts(n).and_then(|f| f.outcome())),
    },
    Field {
        name: "approval",
        ty: Type::Str,
        column: "approval_grant",
        about: "the authority shape (approval_grant, else approval_mode)",
        values: &[],
        get: |c, n| s(c.facts(n).and_then(|f| f.grant())),
    },
    Field {
        name: "side_effect",
        ty: Type::Str,
        column: "side_effect_class",
        about: "the recorded side-effect class",
        values: &[],
        get: |c, n| s(c.facts(n).and_then(|f| f.side_effect_class())),
    },
    Field {
        name: "state_changing",
        ty: Type::Bool,
        column: "state_changing",
        about: "recorded state_changing",
        values: &[],
        get: |c, n| b(c.facts(n).and_then(|f| f.state_changing)),
    },
    Field {
        name: "time",
        ty: Type::Time,
        column: "time_ms",
        about: "the action's time",
        values: &[],
        get: |c, n| c.time(n).map_or(Value::Null, Value::Num),
    },
    Field {
        name: "observed",
        ty: Type::Str,
        column: "observed",
        about: "what its recorded result says happened: success, failure, denied, skipped, …",
        values: &[],
        get: |c, n| {
            s(c.facts(n)
                .and_then(crate::model::facts::ActionFacts::observed))
        },
    },
    Field {
        name: "drift",
        ty: Type::Str,
        column: "drift",
        about: "the argument-drift result, every dialect normalised",
        values: &["matched", "drifted", "not-checked", "absent"],
        get: |c, n| c.facts(n).map_or(Value::Null, |f| st(f.drift.name())),
    },
    Field {
        name: "lease",
        ty: Type::Str,
        column: "lease_id",
        about: "the lease id (scope_lease_id)",
        values: &[],
        get: |c, n| s(c.lease(n).map(|l| l.lease_id.as_str())),
    },
    Field {
        name: "lease.verdict",
        ty: Type::Str,
        column: "lease_verdict",
        about: "where the execution falls in its lease window",
        values: &[
            "inside",
            "before-grant",
            "after-expiry",
            "over-budget",
            "revoked",
            "unknown-window",
        ],
        get: |c, n| c.lease(n).map_or(Value::Null, |l| st(l.verdict.name())),
    },
    Field {
        name: "lease.source",
        ty: Type::Str,
        column: "lease_source",
        about: "where the lease window came from",
        values: &["recorded", "supplied", "inferred"],
        get: |c, n| c.lease(n).map_or(Value::Null, |l| st(l.source.name())),
    },
    Field {
        name: "copies",
        ty: Type::Int,
        column: "copies",
        about: "records holding a copy of the action",
        values: &[],
        get: |c, n| Value::Num(f64::from(c.node(n).copies)),
    },
    Field {
        name: "chain.head",
        ty: Type::Str,
        column: "chain_head",
        about: "its emitter chain: the chain's first record, file:line",
        values: &[],
        get: |c, n| Value::Str(Cow::Owned(c.chain_name(n).head)),
    },
    Field {
        name: "chain.start",
        ty: Type::Str,
        column: "chain_start",
        about: "how that chain starts",
        values: &[
            "genesis",
            "fork branch",
            "orphan head",
            "after a gap",
            "no links: run and signer key",
        ],
        get: |c, n| st(c.chain_name(n).start.name()),
    },
    Field {
        name: "chain",
        ty: Type::Str,
        column: "record_chain",
        about: "the status of the chain path the record lies on",
        values: CHAIN,
        get: |c, n| s(c.verdict(n).map(|v| v.chain.as_str())),
    },
    Field {
        name: "forked",
        ty: Type::Bool,
        column: "",
        about: "the record lies on a fork branch",
        values: &[],
        get: |c, n| b(c.verdict(n).map(|v| v.forked_at.is_some())),
    },
    Field {
        name: "record.authenticity",
        ty: Type::Str,
        column: "record_authenticity",
        about: "the record's signature: valid is the only verified value",
        values: AUTHENTICITY,
        get: |c, n| s(c.verdict(n).map(|v| v.authenticity.as_str())),
    },
    Field {
        name: "record.key",
        ty: Type::Str,
        column: "record_key_id",
        about: "the key id the record names",
        values: &[],
        get: |c, n| s(c.verdict(n).and_then(|v| v.key_id.as_deref())),
    },
    Field {
        name: "record.path",
        ty: Type::Str,
        column: "path",
        about: "the file of the record the action is shown from",
        values: &[],
        get: |c, n| s(Some(&c.source(n).path)),
    },
    Field {
        name: "record.line",
        ty: Type::Int,
        column: "line",
        about: "that record's line",
        values: &[],
        get: |c, n| Value::Num(c.source(n).line as f64),
    },
    Field {
        name: "record.structural",
        ty: Type::Str,
        column: "",
        about: "the record's structural axis",
        values: AXIS,
        get: |c, n| s(c.verdict(n).map(|v| v.structural.as_str())),
    },
    Field {
        name: "record.semantic",
        ty: Type::Str,
        column: "",
        about: "the record's semantic axis (V1–V18)",
        values: AXIS,
        get: |c, n| s(c.verdict(n).map(|v| v.semantic.as_str())),
    },
    Field {
        name: "verified",
        ty: Type::Bool,
        column: "",
        about: "record.authenticity == \"valid\" and chain == \"intact\"",
        values: &[],
        get: |c, n| {
            b(c.verdict(n)
                .map(|v| v.authenticity == "valid" && v.chain == "intact"))
        },
    },
    Field {
        name: "time.proof",
        ty: Type::Str,
        column: "",
        about: "the record's timestamp state (null: no proof)",
        values: TIME_PROOF,
        get: |c, n| s(c.time_proof(n)),
    },
    Field {
        name: "time.proven",
        ty: Type::Bool,
        column: "",
        about: "time.proof == \"tsa-verified\"",
        values: &[],
        get: |c, n| match c.report() {
            Some(_) => Value::Bool(c.time_proof(n) == Some("tsa-verified")),
            None => Value::Null,
        },
    },
    Field {
        name: "anchored",
        ty: Type::Bool,
        column: "",
        about: "the record lies on a chain path at or before a verified anchor",
        values: &[],
        get: |c, n| b(c.anchored(n)),
    },
    Field {
        name: "capture",
        ty: Type::Str,
        column: "",
        about: "the run's capture axis: complete, gaps, not-evaluated",
        values: &["complete", "gaps", "not-evaluated"],
        get: |c, n| s(c.verdict(n).map(|v| v.capture.as_str())),
    },
    Field {
        name: "span",
        ty: Type::Bool,
        column: "",
        about: "a telemetry span is joined to the action (null without --traces)",
        values: &[],
        get: |c, n| b(c.span(n)),
    },
    Field {
        name: "finding",
        ty: Type::Set,
        column: "",
        about: "ids of the findings naming the action",
        values: &[],
        get: |c, n| Value::Set(c.findings_of(n).map(|f| f.id).collect()),
    },
    Field {
        name: "severity",
        ty: Type::Severity,
        column: "",
        about: "the highest severity of a finding naming it (null: none)",
        values: &SEVERITIES,
        get: |c, n| {
            (c.findings_of(n).map(|f| f.severity).min())
                .map_or(Value::Null, |s| Value::Sev(severity_rank(s)))
        },
    },
    Field {
        name: "findings",
        ty: Type::Int,
        column: "",
        about: "how many findings name it",
        values: &[],
        get: |c, n| Value::Num(c.findings_of(n).count() as f64),
    },
    Field {
        name: "role",
        ty: Type::Str,
        column: "",
        about: "its place in a denied→re-approved chain: start, reapproved, member (null: none)",
        values: &["start", "reapproved", "member"],
        get: |c, n| s(c.role(n)),
    },
    Field {
        name: "reapproved",
        ty: Type::Bool,
        column: "",
        about: "role == \"reapproved\"",
        values: &[],
        get: |c, n| Value::Bool(c.role(n) == Some("reapproved")),
    },
    Field {
        name: "problem",
        ty: Type::Bool,
        column: "",
        about: "what the explorer's e steps through: denied, drifted, executed outside its lease window, its record's signature or binding fails, or a high finding names it",
        values: &[],
        get: |c, n| Value::Bool(c.problem(n)),
    },
    Field {
        name: "marked",
        ty: Type::Bool,
        column: "",
        about: "the review marks it (the explorer's review, or --review FILE)",
        values: &[],
        get: |c, n| Value::Bool(c.mark(n).is_some()),
    },
    Field {
        name: "mark",
        ty: Type::Str,
        column: "",
        about: "the mark's verdict",
        values: &["suspicious", "root-cause", "follow-up", "benign"],
        get: |c, n| s(c.mark(n).map(|m| m.verdict.name())),
    },
    Field {
        name: "note",
        ty: Type::Str,
        column: "",
        about: "the mark's note",
        values: &[],
        get: |c, n| s(c.mark(n).map(|m| m.note.as_str()).filter(|t| !t.is_empty())),
    },
];

/// 1 (info) to 4 (high).
pub fn severity_rank(s: crate::model::finding::Severity) -> u8 {
    use crate::model::finding::Severity;
    match s {
        Severity::Info => 1,
        Severity::Low => 2,
        Severity::Medium => 3,
        Severity::High => 4,
    }
}

/// The field named `name`.
pub fn field(name: &str) -> Option<usize> {
    FIELDS.iter().position(|f| f.name == name)
}

/// The field closest to a misspelt `name`, when one is close.
pub fn closest<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    names
        .map(|f| (strsim::damerau_levenshtein(name, f), f))
        .filter(|(d, f)| *d <= (f.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, f)| f)
}
