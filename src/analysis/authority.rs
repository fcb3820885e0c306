//! The three post-run questions (analysis-rules §1): what authority was available,
//! what authority was exercised, and what changed between approval and execution.
//! Every field says which dialect it comes from, and absent fields say "not recorded".

use super::lease::{LeaseVerdict, LeaseView};
use crate::model::drift::{Binding, Drift, DriftInputs, DriftResult};
use crate::model::facts::observed;
use crate::model::fields::{ActionFields, Key};
use crate::model::json::{Json, KeySet, index_of};
use crate::model::{Action, DECISION_MEMBERS, DecisionMembers, Record};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::borrow::Cow;

/// One field of a view: its value as stored (None = not recorded) and its dialect.
#[derive(Clone, Debug, PartialEq)]
pub struct Field<'a> {
    pub name: &'static str,
    pub value: Option<&'a Json>,
    pub dialect: &'static str,
}

/// Available and exercised authority of one action, plus what changed in between.
/// Only the values are kept (names and dialects come from the field tables).
#[derive(Clone, Debug, PartialEq)]
pub struct AuthorityView<'a> {
    available: [Option<&'a Json>; AVAILABLE.len()],
    exercised: [Option<&'a Json>; EXERCISED.len()],
    pub changed: Vec<Change<'a>>,
}

impl<'a> AuthorityView<'a> {
    /// The available authority, field by field.
    pub fn available(&self) -> [Field<'a>; AVAILABLE.len()] {
        with_names(&AVAILABLE, &self.available)
    }

    /// The exercised authority, field by field.
    pub fn exercised(&self) -> [Field<'a>; EXERCISED.len()] {
        with_names(&EXERCISED, &self.exercised)
    }
}

fn with_names<'a, const N: usize>(
    table: &[Row; N],
    values: &[Option<&'a Json>; N],
) -> [Field<'a>; N] {
    std::array::from_fn(|i| Field {
        name: table[i].0,
        value: values[i],
        dialect: table[i].2,
    })
}

/// The answer to one "what changed?" question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeStatus {
    Unchanged,
    Changed,
    /// The evidence cannot tell.
    Unknown,
    /// The question does not arise for this action.
    NotApplicable,
}

impl ChangeStatus {
    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            ChangeStatus::Unchanged => "unchanged",
            ChangeStatus::Changed => "changed",
            ChangeStatus::Unknown => "unknown",
            ChangeStatus::NotApplicable => "not-applicable",
        }
    }
}

/// One answer to "what changed between approval and execution?".
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Change<'a> {
    #[serde(skip)]
    pub what: &'static str,
    pub status: ChangeStatus,
    #[serde(serialize_with = "super::serialize_display")]
    pub summary: Summary<'a>,
}

/// A one-line summary kept as the pieces it is made of and joined only when shown: a
/// million views are built without formatting a string for each change.
#[derive(Clone, Debug, PartialEq)]
pub enum Summary<'a> {
    /// Up to seven pieces, the unused ones empty.
    Pieces([&'a str; 7]),
    Text(String),
}

impl<'a> Summary<'a> {
    fn of(pieces: &[&'a str]) -> Summary<'a> {
        let mut all = [""; 7];
        all[..pieces.len()].copy_from_slice(pieces);
        Summary::Pieces(all)
    }
}

impl std::fmt::Display for Summary<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Summary::Pieces(pieces) => pieces.iter().try_for_each(|p| f.write_str(p)),
            Summary::Text(text) => f.write_str(text),
        }
    }
}

/// Where a field of a view is read from.
#[derive(Clone, Copy)]
enum Path {
    /// A member of the action.
    Action(Key),
    /// A member of the action's `capability_decision` (index into [`DECISION_MEMBERS`]).
    Decision(usize),
    /// A member of the record (index into [`RECORD_NAMES`]), or a member of that member.
    Record(usize, Option<&'static str>),
}

/// The record members the views read, looked up in one pass.
const RECORD_NAMES: [&str; 6] = [
    "run_id",
    "policy_bundle_digest",
    "run_context",
    "authorized_by",
    "authority_origin",
    "attribution_backing",
];

static RECORD_KEYS: KeySet = KeySet::new(&RECORD_NAMES);

/// A table row: (name, where, dialect).
type Row = (&'static str, Path, &'static str);

/// A row for a member of the action.
const fn act(key: Key, dialect: &'static str) -> Row {
    (key.name(), Path::Action(key), dialect)
}

/// A row for a member of the decision.
const fn dec(name: &'static str, dialect: &'static str) -> Row {
    (
        name,
        Path::Decision(index_of(&DECISION_MEMBERS, name)),
        dialect,
    )
}

/// A row for a member of the record.
const fn rec(name: &'static str, dialect: &'static str) -> Row {
    (
        name,
        Path::Record(index_of(&RECORD_NAMES, name), None),
        dialect,
    )
}

/// A row for a member of the record's `run_context` (the agent holding the authority).
const fn ctx(name: &'static str) -> Row {
    (
        name,
        Path::Record(index_of(&RECORD_NAMES, "run_context"), Some(name)),
        "JS, protocol schema",
    )
}

/// Fields of the available authority.
const AVAILABLE: [Row; 21] = [
    dec("decision", "all"),
    dec("capability", "all"),
    dec("subject", "all"),
    dec("resource", "all"),
    dec("approval_grant", "RFC-final"),
    dec("approval_decision", "RFC-final"),
    dec("approval_mode", "JS v0.3"),
    dec("approval_extension", "JS v0.3"),
    dec("deny_reason_class", "JS v0.3"),
    dec("reason_code", "all"),
    act(Key::ApprovalContextHash, "JS v0.2"),
    act(Key::ScopeLeaseId, "JS v0.2"),
    act(Key::BoundedLeaseEvidence, "RFC-final"),
    act(Key::PermissionGate, "JS"),
    rec("policy_bundle_digest", "JS, protocol schema"),
    (
        "delegation_chain",
        Path::Record(
            index_of(&RECORD_NAMES, "run_context"),
            Some("delegation_chain"),
        ),
        "JS v0.2",
    ),
    ctx("agent_id"),
    ctx("subagent_id"),
    rec("authorized_by", "v0.5"),
    rec("authority_origin", "v0.5"),
    rec("attribution_backing", "v0.5"),
];

/// Fields of the exercised authority.
const EXERCISED: [Row; 19] = [
    act(Key::ToolName, "all"),
    dec("capability", "all"),
    dec("resource", "all"),
    act(Key::SideEffectClass, "JS v0.3"),
    act(Key::StateChanging, "all"),
    act(Key::ArgumentsDigest, "JS (#163)"),
    act(Key::Outcome, "JS (#163)"),
    act(Key::ExitCode, "JS (#163)"),
    act(Key::ResultDigest, "all"),
    act(Key::PreStateDigest, "JS v0.2"),
    act(Key::PostStateDigest, "JS v0.2"),
    act(Key::StateDigestKind, "JS v0.3"),
    act(Key::StateDigestCoverage, "JS v0.3 / RFC-final"),
    act(Key::InputTaintLabels, "JS v0.2"),
    act(Key::OutputTaintLabels, "JS v0.2"),
    act(Key::MemoryReadRefs, "JS v0.2"),
    act(Key::MemoryWriteRefs, "JS v0.2"),
    act(Key::TimestampMs, "all"),
    act(Key::McpHeaderRisk, "Rust gateway"),
];

/// The members the per-action views read: the action's, its decision's and its
/// record's, each object read in one pass and shared by every view.
#[derive(Clone, Copy, Debug)]
pub struct Sources<'a> {
    pub record: &'a Record,
    pub action: ActionFields<'a>,
    pub decision: DecisionMembers<'a>,
    top: [Option<&'a Json>; RECORD_NAMES.len()],
}

impl<'a> Sources<'a> {
    /// Reads the members of one action of `record`.
    pub fn of(record: &'a Record, action: ActionFields<'a>) -> Sources<'a> {
        Sources {
            record,
            decision: DecisionMembers::of(action.obj(Key::CapabilityDecision)),
            top: record.obj().get_many(&RECORD_KEYS),
            action,
        }
    }

    /// The record's `run_id`.
    pub fn run_id(&self) -> Option<&'a str> {
        self.top[RUN_ID].and_then(Json::as_str)
    }

    /// The record's `policy_bundle_digest`.
    pub fn policy_bundle_digest(&self) -> Option<&'a str> {
        self.top[POLICY].and_then(Json::as_str)
    }

    /// The normalised drift check of the action.
    pub fn drift(&self) -> Drift<'a> {
        Drift::from_inputs(
            self.record,
            &DriftInputs::of(&self.action, self.decision.grant()),
        )
    }

    /// What the action's recorded result says happened ([`observed`]).
    pub fn observed(&self) -> Option<&'static str> {
        observed(self.decision.outcome(), &self.action)
    }
}

const POLICY: usize = index_of(&RECORD_NAMES, "policy_bundle_digest");
const RUN_ID: usize = index_of(&RECORD_NAMES, "run_id");

fn values<'a, const N: usize>(sources: &Sources<'a>, table: &[Row; N]) -> [Option<&'a Json>; N] {
    let Sources {
        action,
        decision,
        top,
        ..
    } = sources;
    let mut out = [None; N];
    for (value, (_, path, _)) in out.iter_mut().zip(table) {
        *value = match *path {
            Path::Action(key) => action.get(key),
            Path::Decision(i) => decision.0[i],
            Path::Record(i, None) => top[i],
            Path::Record(i, Some(inner)) => top[i].and_then(|v| v.get(inner)),
        };
    }
    out
}

/// Builds the authority view of one action (`drift` is its normalised drift check).
pub fn view<'a>(
    sources: &Sources<'a>,
    drift: &Drift<'a>,
    lease: Option<&'a LeaseView>,
    parent: Option<(&'a Record, Action<'a>)>,
) -> AuthorityView<'a> {
    AuthorityView {
        available: values(sources, &AVAILABLE),
        exercised: values(sources, &EXERCISED),
        changed: changes(&sources.action, drift, lease, parent),
    }
}

fn changes<'a>(
    a: &ActionFields<'a>,
    drift: &Drift<'a>,
    lease: Option<&'a LeaseView>,
    parent: Option<(&'a Record, Action<'a>)>,
) -> Vec<Change<'a>> {
    let mut out = Vec::with_capacity(5);
    let (status, summary) = match drift.result {
        DriftResult::Matched => (
            ChangeStatus::Unchanged,
            Summary::of(&[
                "arguments matched the approval (",
                drift.dialect.unwrap_or("?"),
                ")",
            ]),
        ),
        DriftResult::Drifted => (
            ChangeStatus::Changed,
            Summary::of(&[
                "arguments drifted: approved ",
                drift.approved_digest.unwrap_or("not recorded"),
                " → observed ",
                drift.observed_digest.unwrap_or("not recorded"),
            ]),
        ),
        DriftResult::NotChecked => (
            ChangeStatus::Unknown,
            Summary::of(&["drift check explicitly not performed"]),
        ),
        DriftResult::Absent => (
            ChangeStatus::Unknown,
            match &drift.interpretation {
                Some(Cow::Borrowed(text)) => Summary::of(&[text]),
                Some(Cow::Owned(text)) => Summary::Text(text.clone()),
                None => Summary::of(&["no drift check recorded"]),
            },
        ),
    };
    out.push(Change {
        what: "argument_drift",
        status,
        summary,
    });
    let (status, summary) = match drift.binding {
        Binding::Holds => (
            ChangeStatus::Unchanged,
            Summary::of(&["drift check bound to ", drift.bound_to.unwrap_or("")]),
        ),
        Binding::Mismatch => (
            ChangeStatus::Changed,
            Summary::of(&[
                "drift check bound to ",
                drift.bound_to.unwrap_or(""),
                " but the action relied on ",
                drift.expected_binding.unwrap_or("(nothing recorded)"),
            ]),
        ),
        Binding::Unbound => (
            ChangeStatus::Unknown,
            Summary::of(&["drift check names no approval or lease"]),
        ),
        Binding::NotApplicable => (
            ChangeStatus::NotApplicable,
            Summary::of(&["no drift check to bind"]),
        ),
    };
    out.push(Change {
        what: "approval_binding",
        status,
        summary,
    });
    let approval = a.str(Key::ApprovalContextHash);
    let payload = drift.payload_digest(a.str(Key::ArgumentsDigest));
    out.push(Change {
        what: "approval_vs_payload",
        status: if approval.is_some() && payload.is_some() {
            ChangeStatus::Unknown
        } else {
            ChangeStatus::NotApplicable
        },
        summary: Summary::of(&[
            "approval_context_hash ",
            approval.unwrap_or("not recorded"),
            " · observed argument digest ",
            payload.unwrap_or("not recorded"),
        ]),
    });
    if let Some(l) = lease {
        out.push(Change {
            what: "lease",
            status: match l.verdict {
                LeaseVerdict::Inside => ChangeStatus::Unchanged,
                LeaseVerdict::UnknownWindow => ChangeStatus::Unknown,
                _ => ChangeStatus::Changed,
            },
            summary: Summary::of(&[
                "execution ",
                l.verdict.name(),
                " lease ",
                &l.lease_id,
                " (",
                l.source.name(),
                " window)",
            ]),
        });
    }
    if let Some((_, p)) = parent
        && p.decision().and_then(|d| d.outcome()) == Some("deny")
    {
        let fresh = approval.is_some() && approval != p.str_field("approval_context_hash");
        out.push(Change {
            what: "re_approval",
            status: if fresh {
                ChangeStatus::Changed
            } else {
                ChangeStatus::Unknown
            },
            summary: Summary::of(&[
                "follows denied ",
                p.id().unwrap_or("?"),
                " (",
                p.decision()
                    .and_then(|d| d.str_field("reason_code"))
                    .unwrap_or("no reason code"),
                "); ",
                if fresh {
                    "carries a new approval"
                } else {
                    "carries no new approval"
                },
            ]),
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
        m.serialize_entry("available", &FieldMap(&self.available()))?;
        m.serialize_entry("exercised", &FieldMap(&self.exercised()))?;
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
