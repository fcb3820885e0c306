//! Lease windows and per-action lease verdicts (analysis-rules §4). A window comes from
//! the strongest source present — recorded `bounded_lease_evidence`, a supplied lease
//! file, or inference from the actions that share a `scope_lease_id` — and the source
//! is always reported. Windows are half-open `[granted, expires)`.

use super::graph::{Graph, NodeId, NodeMap, groups_in_time_order};
use crate::load::{LoadError, load_file};
use crate::model::Record;
use crate::model::facts::ActionFacts;
use crate::model::json::{Json, KeySet};
use crate::model::time::parse_iso8601_ms;
use crate::verify::{InputKind, InputOut};
use compact_str::CompactString;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// Where a lease window came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeaseSource {
    Recorded,
    Supplied,
    Inferred,
}

impl LeaseSource {
    /// The kebab-case name (as serialised).
    pub fn name(self) -> &'static str {
        match self {
            LeaseSource::Recorded => "recorded",
            LeaseSource::Supplied => "supplied",
            LeaseSource::Inferred => "inferred",
        }
    }
}

/// The lease verdict for one execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeaseVerdict {
    Inside,
    BeforeGrant,
    AfterExpiry,
    OverBudget,
    Revoked,
    UnknownWindow,
}

impl LeaseVerdict {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            LeaseVerdict::Inside => "inside",
            LeaseVerdict::BeforeGrant => "before-grant",
            LeaseVerdict::AfterExpiry => "after-expiry",
            LeaseVerdict::OverBudget => "over-budget",
            LeaseVerdict::Revoked => "revoked",
            LeaseVerdict::UnknownWindow => "unknown-window",
        }
    }

    /// True for verdicts a reviewer must look at (F-LEASE-OUTSIDE).
    pub fn is_outside(self) -> bool {
        !matches!(self, LeaseVerdict::Inside | LeaseVerdict::UnknownWindow)
    }
}

/// A lease as a supplied file describes it (the gateway's ScopeLease / ApprovalReceipt).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SuppliedLease {
    pub lease_id: String,
    /// Earliest `approvedAt` of a receipt for this lease (a ScopeLease stores no grant time).
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub granted_ms: Option<f64>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub expires_ms: Option<f64>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub max_invocations: Option<f64>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub invocation_count: Option<f64>,
    pub granted_tools: Vec<String>,
    /// `file:line` of the objects it came from.
    pub from: Vec<String>,
}

/// An ApprovalReceipt bound to no lease (a one-shot approval): kept as the approval of
/// the action it matches — its tool, its window, its arguments digest (aep-fields §6).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SuppliedReceipt {
    pub receipt_id: String,
    pub tool: Option<String>,
    /// `argsDigest`: 16 hex of SHA-256 over `JSON.stringify(args)`.
    pub args_digest: Option<String>,
    pub approved_ms: f64,
    /// `expiresAt`, else the gateway's default TTL (60 s) after `approvedAt`.
    pub expires_ms: f64,
    pub expiry_given: bool,
    /// Where it is: the file and the line.
    pub path: String,
    pub line: usize,
}

/// The gateway's default receipt TTL (aep-fields §6).
const RECEIPT_TTL_MS: f64 = 60_000.0;

impl SuppliedReceipt {
    /// The receipt approves this action: the same tool, executed inside
    /// `[approvedAt, expiresAt]`, and — when both are recorded — an arguments digest that
    /// begins with the receipt's `argsDigest`.
    pub fn matches(&self, action: &ActionFacts) -> bool {
        let tool = self.tool.is_some() && action.tool() == self.tool.as_deref();
        let inside = action
            .time()
            .is_some_and(|t| self.approved_ms <= t && t <= self.expires_ms);
        let digest = match (&self.args_digest, action.arguments_digest()) {
            (Some(want), Some(recorded)) => {
                let mut text = String::new();
                recorded.push_to(&mut text);
                let hex = text.strip_prefix("sha256:").unwrap_or(&text);
                hex.starts_with(want.as_str())
            }
            _ => true,
        };
        tool && inside && digest
    }

    /// One line a reviewer reads: `receipt 9b7ba9fcc37a431a: rotate_credentials approved
    /// … until …, arguments digest d23a9084063cdc99…`.
    pub fn words(&self) -> String {
        use crate::model::time::format_ms;
        format!(
            "receipt {}: {} approved {} until {}{}{}",
            crate::model::text::sanitize(&self.receipt_id),
            crate::model::text::sanitize(self.tool.as_deref().unwrap_or("(no toolName)")),
            format_ms(self.approved_ms),
            format_ms(self.expires_ms),
            if self.expiry_given {
                ""
            } else {
                " (the default 60 s)"
            },
            (self.args_digest.as_deref())
                .map(|d| format!(", arguments digest {}…", crate::model::text::sanitize(d)))
                .unwrap_or_default()
        )
    }
}

/// Leases from `--leases` files, by lease id.
#[derive(Clone, Debug, Default)]
pub struct SuppliedLeases {
    pub leases: HashMap<String, SuppliedLease>,
    /// ApprovalReceipts bound to no lease, in file order.
    pub receipts: Vec<SuppliedReceipt>,
    /// The SHA-256 of each file added (`unreadable` for one that could not be read), in
    /// order: what the evidence index is keyed by.
    pub digests: Vec<String>,
    /// Each lease file added, as an input of the report (kind `leases`: path, SHA-256,
    /// size, objects, problems).
    pub inputs: Vec<InputOut>,
}

impl SuppliedLeases {
    /// The lease files `paths` (`--leases`), each read whole. A lease file is an input like
    /// a keyring: one that cannot be read is `Err` naming it (the caller exits 2), never
    /// dropped in silence with the findings it decides; the problems of the files read
    /// come back beside the leases.
    pub fn from_files(paths: &[String]) -> Result<(SuppliedLeases, Vec<LoadError>), String> {
        let mut leases = SuppliedLeases::default();
        let mut errors = Vec::new();
        for path in paths {
            let input = load_file(Path::new(path));
            if input.sha256.is_none() {
                let why = (input.errors.first()).map_or_else(String::new, LoadError::render);
                return Err(format!("cannot use --leases {why}"));
            }
            errors.extend(leases.add_input(input));
        }
        Ok((leases, errors))
    }

    /// Reads a lease file: one object, an array or NDJSON of ScopeLease / ApprovalReceipt
    /// objects. Objects that are neither become errors naming file and line.
    pub fn add_file(&mut self, path: &Path) -> Vec<LoadError> {
        self.add_input(load_file(path))
    }

    /// [`SuppliedLeases::add_file`] on a lease file's bytes, read elsewhere (`path` names
    /// it).
    pub fn add_bytes(&mut self, path: &str, bytes: &[u8]) -> Vec<LoadError> {
        self.add_input(crate::load::parse_input(path.into(), bytes))
    }

    fn add_input(&mut self, input: crate::load::Input) -> Vec<LoadError> {
        self.digests
            .push(input.sha256.clone().unwrap_or_else(|| "unreadable".into()));
        let mut listed = InputOut::of(&input, InputKind::Leases, &[]);
        let mut errors = input.errors;
        for record in &input.records {
            if let Err(message) = self.add_object(record) {
                errors.push(LoadError {
                    column: None,
                    excerpt: None,
                    path: record.source.path.clone(),
                    line: Some(record.source.line),
                    message,
                });
            }
        }
        listed.errors = errors.iter().map(crate::verify::ErrorOut::from).collect();
        self.inputs.push(listed);
        errors
    }

    /// Adds one ScopeLease or ApprovalReceipt object.
    pub fn add_object(&mut self, record: &Record) -> Result<(), String> {
        let s = |k: &str| record.str_field(k);
        let n = |k: &str| record.get(k).and_then(Json::as_f64);
        let time = |k: &str| -> Result<Option<f64>, String> {
            match s(k) {
                None => Ok(None),
                Some(t) => parse_iso8601_ms(t)
                    .map(Some)
                    .ok_or_else(|| format!("{k} {t:?} is not an ISO-8601 time")),
            }
        };
        let Some(lease_id) = s("leaseId") else {
            // An ApprovalReceipt bound to no lease (a one-shot approval): kept as the
            // approval of the action it matches.
            let Some(receipt_id) = s("receiptId") else {
                return Err("neither a ScopeLease nor an ApprovalReceipt: skipped".into());
            };
            let Some(approved_ms) = time("approvedAt")? else {
                return Err(format!(
                    "ApprovalReceipt {receipt_id} has no approvedAt: it approves nothing it can be matched to"
                ));
            };
            let expires = time("expiresAt")?;
            self.receipts.push(SuppliedReceipt {
                receipt_id: receipt_id.to_string(),
                tool: s("toolName").map(str::to_string),
                args_digest: s("argsDigest").map(str::to_ascii_lowercase),
                approved_ms,
                expires_ms: expires.unwrap_or(approved_ms + RECEIPT_TTL_MS),
                expiry_given: expires.is_some(),
                path: record.source.path.to_string(),
                line: record.source.line,
            });
            return Ok(());
        };
        let lease = self
            .leases
            .entry(lease_id.to_string())
            .or_insert_with(|| SuppliedLease {
                lease_id: lease_id.to_string(),
                ..SuppliedLease::default()
            });
        lease.from.push(record.source.to_string());
        let expires = time("expiresAt")?;
        if s("receiptId").is_some() {
            if let Some(at) = time("approvedAt")? {
                lease.granted_ms = Some(lease.granted_ms.map_or(at, |g| g.min(at)));
            }
            if lease.expires_ms.is_none() {
                lease.expires_ms = expires;
            }
        } else {
            // A ScopeLease's own expiry wins over a receipt's.
            lease.expires_ms = expires.or(lease.expires_ms);
            lease.max_invocations = n("maxInvocations");
            lease.invocation_count = n("invocationCount");
            lease.granted_tools = record
                .get("grantedTools")
                .and_then(Json::as_array)
                .unwrap_or(&[])
                .iter()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect();
        }
        Ok(())
    }

    /// The receipts bound to no lease that no action of `corpus` matches: each said as a
    /// problem of its lease file (a line used for nothing), never dropped in silence.
    pub fn unused_receipts(&self, corpus: &crate::load::Corpus) -> Vec<LoadError> {
        // Without receipts no record's facts are read.
        if self.receipts.is_empty() {
            return Vec::new();
        }
        let mut used = vec![false; self.receipts.len()];
        for record in corpus.records() {
            for (_, action) in record.facts().actions.iter() {
                for (r, u) in self.receipts.iter().zip(used.iter_mut()) {
                    *u = *u || r.matches(action);
                }
            }
        }
        (self.receipts.iter().zip(used))
            .filter(|(_, u)| !u)
            .map(|(r, _)| LoadError {
                column: None,
                excerpt: None,
                path: r.path.as_str().into(),
                line: Some(r.line),
                message: format!(
                    "{}: no action in the evidence matches it (tool, time, arguments digest): used for nothing",
                    r.words()
                ),
            })
            .collect()
    }
}

/// The lease facts of one action under a lease.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaseView {
    pub lease_id: CompactString,
    pub source: LeaseSource,
    pub verdict: LeaseVerdict,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub granted_at_ms: Option<f64>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub expires_at_ms: Option<f64>,
    /// The time checked against the window: `execution_started_at_ms`, else the action's time.
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub executed_at_ms: Option<f64>,
    /// 1-based invocation number under this lease.
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub ordinal: Option<f64>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub max_invocations: Option<f64>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub revoked_at_ms: Option<f64>,
    /// A recorded `approval_decision` label (`expired`, `revoked`, …).
    pub label: Option<CompactString>,
    /// True when the recorded times contradict the label (F-LEASE-LABEL-CONTRADICTED).
    pub label_contradicted: bool,
    /// For an inferred window: the first and last use of the lease in the evidence.
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub first_use_ms: Option<f64>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub last_use_ms: Option<f64>,
    /// How the window, ordinal or budget were read when that is aeplens's choice.
    pub notes: LeaseNotes,
}

/// The fixed notes a lease view can carry, in the order they are shown.
const NOTES: [&str; 5] = [
    "expiry computed as grant + lease_duration_ms",
    "invocation ordinal, budget and revocation read from invocation_ordinal, \
     max_invocations and revoked_at_ms: the RFC names no fields (interpretation)",
    "grant time not in the lease file (a ScopeLease stores none)",
    "window inferred from the actions sharing this scope_lease_id: its true bounds are unknown",
    "ordinal counted from the loaded evidence (interpretation)",
];

/// A set of fixed notes, one bit each (no allocation for a million lease views).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeaseNotes(u8);

impl LeaseNotes {
    const COMPUTED_EXPIRY: usize = 0;
    const INVOCATION_FIELDS: usize = 1;
    const NO_GRANT_IN_FILE: usize = 2;
    const INFERRED: usize = 3;
    const ORDINAL_COUNTED: usize = 4;

    fn add(&mut self, note: usize) {
        self.0 |= 1 << note;
    }

    /// The notes, in display order.
    pub fn iter(self) -> impl Iterator<Item = &'static str> {
        NOTES
            .into_iter()
            .enumerate()
            .filter(move |(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, n)| n)
    }
}

impl Serialize for LeaseNotes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for LeaseNotes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut notes = LeaseNotes::default();
        for note in Vec::<String>::deserialize(d)? {
            let bit = NOTES.iter().position(|n| *n == note);
            notes.add(bit.ok_or_else(|| serde::de::Error::custom("unknown lease note"))?);
        }
        Ok(notes)
    }
}

/// One lease and every action under it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LeaseSummary {
    pub lease_id: String,
    /// The strongest source among its actions.
    pub source: LeaseSource,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub granted_at_ms: Option<f64>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub expires_at_ms: Option<f64>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub max_invocations: Option<f64>,
    /// Time of the first and last action under the lease (the inferred span).
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub first_use_ms: Option<f64>,
    #[serde(serialize_with = "crate::model::json::opt_number")]
    pub last_use_ms: Option<f64>,
    /// Actions under the lease, in time order.
    pub nodes: Vec<NodeId>,
}

/// The `bounded_lease_evidence` members read, in one pass. The last six name the points
/// the RFC left unnamed (interpretation), two spellings each.
static EVIDENCE_FIELDS: KeySet = KeySet::new(&[
    "execution_started_at_ms",
    "lease_granted_at_ms",
    "lease_expires_at_ms",
    "lease_duration_ms",
    "invocation_ordinal",
    "invocation_index",
    "max_invocations",
    "invocation_budget",
    "revoked_at_ms",
    "revocation_at_ms",
]);

/// Lease summaries and the per-action views, indexed by node.
#[derive(Clone, Debug, Default)]
pub struct Leases {
    pub summaries: Vec<LeaseSummary>,
    pub by_node: NodeMap<LeaseView>,
    /// The supplied ApprovalReceipts bound to no lease, and each action one matches
    /// (an index into them).
    pub receipts: Vec<SuppliedReceipt>,
    pub receipt_of: rustc_hash::FxHashMap<NodeId, u32>,
}

impl Leases {
    /// The supplied receipt that approves `node`, when one matches it.
    pub fn receipt(&self, node: NodeId) -> Option<&SuppliedReceipt> {
        self.receipts.get(*self.receipt_of.get(&node)? as usize)
    }
}

impl Leases {
    /// Computes every lease window and verdict.
    pub fn build(graph: &Graph, facts: &[&ActionFacts], supplied: &SuppliedLeases) -> Leases {
        let mut out = Leases::default();
        let mut jobs: Vec<(usize, usize, NodeId)> = Vec::new();
        let groups = groups_in_time_order(&graph.nodes, facts, |f| f.scope_lease_id());
        for (id, nodes) in groups {
            let times: Vec<f64> = nodes
                .iter()
                .filter_map(|n| graph.nodes[*n as usize].time())
                .collect();
            let mut summary = LeaseSummary {
                lease_id: id.to_string(),
                source: LeaseSource::Inferred,
                granted_at_ms: None,
                expires_at_ms: None,
                max_invocations: None,
                first_use_ms: times.first().copied(),
                last_use_ms: times.last().copied(),
                nodes,
            };
            if let Some(s) = supplied.leases.get(id) {
                summary.source = LeaseSource::Supplied;
                summary.granted_at_ms = s.granted_ms;
                summary.expires_at_ms = s.expires_ms;
                summary.max_invocations = s.max_invocations;
            }
            let k = out.summaries.len();
            jobs.extend(
                summary
                    .nodes
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| (k, i + 1, n)),
            );
            out.summaries.push(summary);
        }
        let views: Vec<LeaseView> = jobs
            .par_iter()
            .map(|&(k, ordinal, n)| {
                let summary = &out.summaries[k];
                let id = summary.lease_id.as_str();
                let mut view = view(facts[n as usize], id, ordinal, supplied.leases.get(id));
                if view.source == LeaseSource::Inferred {
                    view.first_use_ms = summary.first_use_ms;
                    view.last_use_ms = summary.last_use_ms;
                }
                view
            })
            .collect();
        for (&(k, _, _), view) in jobs.iter().zip(&views) {
            let summary = &mut out.summaries[k];
            if view.source == LeaseSource::Recorded && summary.source != LeaseSource::Recorded {
                summary.source = LeaseSource::Recorded;
                summary.granted_at_ms = view.granted_at_ms;
                summary.expires_at_ms = view.expires_at_ms;
                summary.max_invocations = view.max_invocations;
            }
        }
        let nodes: Vec<NodeId> = jobs.iter().map(|&(_, _, n)| n).collect();
        out.by_node = NodeMap::from_parts(graph.nodes.len(), &nodes, views);
        if !supplied.receipts.is_empty() {
            out.receipts.clone_from(&supplied.receipts);
            for (n, f) in facts.iter().enumerate() {
                if let Some(r) = supplied.receipts.iter().position(|r| r.matches(f)) {
                    out.receipt_of.insert(n as NodeId, r as u32);
                }
            }
        }
        out
    }
}

/// The lease view of one action, `ordinal` being its place among the lease's actions.
fn view(
    action: &ActionFacts,
    lease_id: &str,
    ordinal: usize,
    supplied: Option<&SuppliedLease>,
) -> LeaseView {
    let evidence = action.bounded_lease_evidence.as_deref();
    let [
        started,
        granted,
        expires,
        duration,
        ordinal_field,
        index_field,
        budget,
        budget_alias,
        revoked,
        revoked_alias,
    ] = evidence
        .map_or([None; 10], |ev| ev.get_many(&EVIDENCE_FIELDS))
        .map(|v| v.and_then(Json::as_f64));
    let mut notes = LeaseNotes::default();
    let label = action.approval_decision().map(CompactString::from);
    let executed_at_ms = started.or(action.time());
    let mut v = LeaseView {
        lease_id: CompactString::from(lease_id),
        source: LeaseSource::Inferred,
        verdict: LeaseVerdict::UnknownWindow,
        granted_at_ms: None,
        expires_at_ms: None,
        executed_at_ms,
        ordinal: None,
        max_invocations: None,
        revoked_at_ms: None,
        label,
        label_contradicted: false,
        first_use_ms: None,
        last_use_ms: None,
        notes: LeaseNotes::default(),
    };
    if evidence.is_some() {
        v.source = LeaseSource::Recorded;
        v.granted_at_ms = granted;
        v.expires_at_ms = expires.or_else(|| {
            let d = duration?;
            notes.add(LeaseNotes::COMPUTED_EXPIRY);
            Some(v.granted_at_ms? + d)
        });
        v.ordinal = ordinal_field.or(index_field);
        v.max_invocations = budget.or(budget_alias);
        v.revoked_at_ms = revoked.or(revoked_alias);
        if v.ordinal.is_some() || v.max_invocations.is_some() || v.revoked_at_ms.is_some() {
            notes.add(LeaseNotes::INVOCATION_FIELDS);
        }
    } else if let Some(s) = supplied {
        v.source = LeaseSource::Supplied;
        v.granted_at_ms = s.granted_ms;
        v.expires_at_ms = s.expires_ms;
        v.max_invocations = s.max_invocations;
        if s.granted_ms.is_none() {
            notes.add(LeaseNotes::NO_GRANT_IN_FILE);
        }
    } else {
        notes.add(LeaseNotes::INFERRED);
    }
    if v.ordinal.is_none() && v.source != LeaseSource::Inferred {
        v.ordinal = Some(ordinal as f64);
        notes.add(LeaseNotes::ORDINAL_COUNTED);
    }
    v.verdict = match (v.source, executed_at_ms) {
        (LeaseSource::Inferred, _) | (_, None) => LeaseVerdict::UnknownWindow,
        (_, Some(t)) => {
            if v.revoked_at_ms.is_some_and(|r| r <= t) {
                LeaseVerdict::Revoked
            } else if v.granted_at_ms.is_some_and(|g| t < g) {
                LeaseVerdict::BeforeGrant
            } else if v.expires_at_ms.is_some_and(|e| t >= e) {
                LeaseVerdict::AfterExpiry
            } else if let (Some(o), Some(m)) = (v.ordinal, v.max_invocations)
                && o > m
            {
                LeaseVerdict::OverBudget
            } else if v.expires_at_ms.is_none() {
                LeaseVerdict::UnknownWindow
            } else {
                LeaseVerdict::Inside
            }
        }
    };
    v.label_contradicted = match v.label.as_deref() {
        Some("expired") => matches!(v.verdict, LeaseVerdict::Inside | LeaseVerdict::BeforeGrant),
        Some("revoked") => v.verdict != LeaseVerdict::Revoked && v.source == LeaseSource::Recorded,
        _ => false,
    };
    v.notes = notes;
    v
}

/// Each verdict under each window source: recorded (`bounded_lease_evidence`), supplied
/// (a lease file) and inferred (neither: the window is unknown whatever the times).
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// The lease view of one action executed at t=100, as the 2nd use of lease `L1`.
    fn view_of(action: Value, supplied: Option<&SuppliedLease>) -> LeaseView {
        let mut action = action;
        action["action_id"] = "a1".into();
        action["timestamp_ms"] = 100.into();
        let record = json!({"schema_version": "aep/v0.3", "run_id": "r", "actions": [action]});
        let input = crate::load::parse_input("t.ndjson".into(), record.to_string().as_bytes());
        let record = &input.records[0];
        let action = record.actions().next().unwrap();
        view(&ActionFacts::of(record, &action), "L1", 2, supplied)
    }

    fn recorded(evidence: Value) -> LeaseView {
        let mut action = json!({});
        action["bounded_lease_evidence"] = evidence;
        view_of(action, None)
    }

    fn supplied(granted: Option<f64>, expires: Option<f64>, max: Option<f64>) -> LeaseView {
        let lease = SuppliedLease {
            lease_id: "L1".into(),
            granted_ms: granted,
            expires_ms: expires,
            max_invocations: max,
            ..SuppliedLease::default()
        };
        view_of(json!({}), Some(&lease))
    }

    #[test]
    fn recorded_window_verdicts() {
        let v = recorded(json!({"lease_granted_at_ms": 50, "lease_expires_at_ms": 150}));
        assert_eq!(
            (v.source, v.verdict),
            (LeaseSource::Recorded, LeaseVerdict::Inside)
        );
        let v = recorded(json!({"lease_granted_at_ms": 150, "lease_expires_at_ms": 250}));
        assert_eq!(v.verdict, LeaseVerdict::BeforeGrant);
        // The expiry instant itself is outside (t >= expiry).
        let v = recorded(json!({"lease_granted_at_ms": 0, "lease_expires_at_ms": 100}));
        assert_eq!(v.verdict, LeaseVerdict::AfterExpiry);
        let v = recorded(json!({"lease_granted_at_ms": 0, "lease_duration_ms": 60}));
        assert_eq!(
            (v.verdict, v.expires_at_ms),
            (LeaseVerdict::AfterExpiry, Some(60.0))
        );
        assert!(v.notes.iter().any(|n| n.starts_with("expiry computed")));
        let v = recorded(
            json!({"lease_expires_at_ms": 500, "invocation_ordinal": 4, "max_invocations": 3}),
        );
        assert_eq!(v.verdict, LeaseVerdict::OverBudget);
        let v = recorded(json!({"lease_expires_at_ms": 500, "revoked_at_ms": 90}));
        assert_eq!(v.verdict, LeaseVerdict::Revoked);
        // execution_started_at_ms, not the action's time, is checked against the window.
        let v = recorded(json!({"lease_expires_at_ms": 150, "execution_started_at_ms": 200}));
        assert_eq!(
            (v.verdict, v.executed_at_ms),
            (LeaseVerdict::AfterExpiry, Some(200.0))
        );
        // No expiry recorded: the window is open-ended, so unknown, never inside.
        let v = recorded(json!({"lease_granted_at_ms": 50}));
        assert_eq!(v.verdict, LeaseVerdict::UnknownWindow);
    }

    #[test]
    fn supplied_window_verdicts() {
        let v = supplied(Some(50.0), Some(150.0), None);
        assert_eq!(
            (v.source, v.verdict),
            (LeaseSource::Supplied, LeaseVerdict::Inside)
        );
        assert_eq!(
            supplied(Some(150.0), Some(250.0), None).verdict,
            LeaseVerdict::BeforeGrant
        );
        assert_eq!(
            supplied(None, Some(90.0), None).verdict,
            LeaseVerdict::AfterExpiry
        );
        // The ordinal is counted from the evidence (2nd use) against the file's budget.
        let v = supplied(None, Some(500.0), Some(1.0));
        assert_eq!(
            (v.verdict, v.ordinal),
            (LeaseVerdict::OverBudget, Some(2.0))
        );
        assert!(v.notes.iter().any(|n| n.starts_with("ordinal counted")));
        assert!(
            v.notes
                .iter()
                .any(|n| n.starts_with("grant time not in the lease file"))
        );
        assert_eq!(
            supplied(None, None, None).verdict,
            LeaseVerdict::UnknownWindow
        );
    }

    #[test]
    fn inferred_window_is_always_unknown() {
        let v = view_of(json!({}), None);
        assert_eq!(
            (v.source, v.verdict),
            (LeaseSource::Inferred, LeaseVerdict::UnknownWindow)
        );
        assert!(v.ordinal.is_none());
        assert!(v.notes.iter().any(|n| n.starts_with("window inferred")));
    }

    #[test]
    fn recorded_evidence_wins_over_a_supplied_file() {
        let lease = SuppliedLease {
            lease_id: "L1".into(),
            expires_ms: Some(50.0),
            ..SuppliedLease::default()
        };
        let action = json!({"bounded_lease_evidence": {"lease_expires_at_ms": 150}});
        let v = view_of(action, Some(&lease));
        assert_eq!(
            (v.source, v.verdict),
            (LeaseSource::Recorded, LeaseVerdict::Inside)
        );
    }

    #[test]
    fn labels_contradicted_by_the_times() {
        let labelled = |label: &str, evidence: Value| {
            view_of(
                json!({
                    "capability_decision": {"decision": "allow", "approval_decision": label},
                    "bounded_lease_evidence": evidence,
                }),
                None,
            )
        };
        let v = labelled("expired", json!({"lease_expires_at_ms": 150}));
        assert_eq!(v.label.as_deref(), Some("expired"));
        assert!(v.label_contradicted, "expired, yet inside the window");
        assert!(!labelled("expired", json!({"lease_expires_at_ms": 90})).label_contradicted);
        assert!(labelled("revoked", json!({"lease_expires_at_ms": 150})).label_contradicted);
        let v = labelled(
            "revoked",
            json!({"lease_expires_at_ms": 150, "revoked_at_ms": 80}),
        );
        assert!(!v.label_contradicted);
    }
}
