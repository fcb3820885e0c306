//! `export --format parquet OUT/`: the evidence as tables for DuckDB, Spark and Trino —
//! `inputs`, `records`, `actions`, `findings`, `edges`, `leases`, `spans` — documented in
//! `docs/tables.md` (schema version [`TABLES_VERSION`]), with a manifest. Every value
//! comes from aeplens's own loader and verifier: no generic JSON reader sees the evidence.
//!
//! The rows of a batch of records ([`Tables::add_batch`]: `records`, `actions`, `edges`,
//! `leases`) are made as the batch is analysed, the rest once the opening is complete
//! ([`Tables::add_rest`]), so an export holds no more of the analysis than `check` does.
//!
//! Layout: `OUT/<table>/set=<evidence set key, 16 hex>/part-<SHA-256 of the file, 16
//! hex>.parquet` and `OUT/manifest/set=<key>.json`. The same evidence gives the same
//! bytes, so re-running is idempotent; exports of disjoint inputs (shards) land in
//! different `set=` partitions of one `OUT/` and are read together.

use crate::analysis::evidence::EvidenceRef;
use crate::analysis::gathered::Batch;
use crate::analysis::graph::NodeId;
use crate::canon::Sha256Digest;
use crate::load::Corpus;
use crate::model::Record;
use crate::model::finding::Finding;
use crate::review::file::{EvidenceSet, KeyRef};
use crate::verify::signature::Construction;
use crate::verify::{RecordResult, Report};
use std::path::{Path, PathBuf};

/// The version of the table schemas (`docs/tables.md`).
pub const TABLES_VERSION: &str = "1";

use super::columns::{Kind, Table};
use Kind::{Bool, Float, Int, Str};

/// Every table's name and columns, in the order of `docs/tables.md`.
const TABLES: [(&str, &[(&str, Kind)]); 7] = [
    ("inputs", INPUTS),
    ("records", RECORDS),
    ("actions", ACTIONS),
    ("findings", FINDINGS),
    ("edges", EDGES),
    ("leases", LEASES),
    ("spans", SPANS),
];

/// Every table of an opened body of evidence, in memory.
pub fn tables(ev: EvidenceRef) -> Vec<Table> {
    let mut tables = Tables::new(None);
    tables.add_batch(&Batch::whole(ev));
    tables.add_rest(ev.report, ev.findings, Some(ev));
    tables.0
}

/// The tables of one opening being made, each kept in memory or written to its Parquet
/// file as its rows are made.
pub struct Tables(Vec<Table>);

impl Tables {
    /// Empty tables, kept in memory, or (`Some(out)`) written under `out`
    /// ([`Tables::finish`]).
    pub fn new(out: Option<&Path>) -> Tables {
        let table = |(name, columns): &(&'static str, &[(&'static str, Kind)])| {
            let t = Table::new(name, columns);
            match out {
                None => t,
                Some(out) => t.written_to(&out.join(name)),
            }
        };
        Tables(TABLES.iter().map(table).collect())
    }

    fn table(&mut self, name: &str) -> &mut Table {
        let at = TABLES.iter().position(|(n, _)| *n == name);
        &mut self.0[at.unwrap_or_else(|| unreachable!("no table {name}"))]
    }

    /// The rows of one analysed batch of records: its `records`, `actions`, `edges` and
    /// `leases` (a batch holds whole groups of records that no cross-record pass reads
    /// across: no row needs another batch).
    pub fn add_batch(&mut self, b: &Batch) {
        record_rows(b.records(), Scope::Whole, self.table("records"));
        actions(b, self.table("actions"));
        edges(b, self.table("edges"));
        leases(b, self.table("leases"));
    }

    /// The rows that need the whole opening: its `inputs` (`report`'s), its `findings`
    /// (every one, in order) and — from an opening analysed whole, with telemetry — its
    /// `spans`.
    pub fn add_rest(&mut self, report: &Report, all: &[Finding], whole: Option<EvidenceRef>) {
        inputs(report, self.table("inputs"));
        findings(all, self.table("findings"));
        if let Some(ev) = whole {
            spans(ev, self.table("spans"));
        }
    }

    /// Completes every written table's file in its directory for `corpus`'s evidence set
    /// (`OUT/<table>/set=<key16>/`), then the manifest; returns the files written.
    pub fn finish(
        self,
        corpus: &Corpus,
        keys: &crate::verify::Keyring,
        out: &Path,
    ) -> Result<Vec<PathBuf>, String> {
        let set = EvidenceSet::of(corpus);
        let partition = format!("set={}", &set.key[..16]);
        let mut written = Vec::new();
        let mut parts = serde_json::Map::new();
        for table in self.0 {
            let name = table.name;
            let file = table.finish(&out.join(name).join(&partition))?;
            parts.insert(
                name.into(),
                serde_json::json!({
                    "rows": file.rows,
                    "file": file.path.strip_prefix(out).unwrap_or(&file.path).display().to_string(),
                    "sha256": file.sha256,
                }),
            );
            written.push(file.path);
        }
        let manifest = manifest(&set, keys, &parts);
        let dir = out.join("manifest");
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let file = dir.join(format!("{partition}.json"));
        let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())? + "\n";
        std::fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        written.push(file);
        Ok(written)
    }
}

/// The `inputs` table's columns.
const INPUTS: &[(&str, Kind)] = &[
    ("path", Str),
    ("sha256", Str),
    ("format", Str),
    ("bytes", Int),
    ("records", Int),
    ("load_errors", Int),
];

/// The `inputs` rows: one per evidence file.
fn inputs(report: &Report, t: &mut Table) {
    // The evidence files: a lease file is an input of the reports (kind `leases`), and
    // this table is the evidence's, as the engine's job writes it.
    let evidence = (report.inputs.iter()).filter(|i| i.kind == crate::verify::InputKind::Evidence);
    for i in evidence {
        t.s("path", Some(&i.path));
        t.s("sha256", i.sha256.as_deref());
        t.s("format", Some(i.format));
        t.i("bytes", i.bytes.map(|b| b as i64));
        t.i("records", Some(i.records as i64));
        t.i("load_errors", Some(i.errors.len() as i64));
        t.end_row();
    }
}

/// What a set of records verified together is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// The whole evidence (or a group no cross-record pass reads across).
    Whole,
    /// Records verified each alone: what needs the others — the chain, V17's copies
    /// across records — is not evaluated (`semantic` says `fail` or `not-evaluated`).
    EachAlone,
}

/// The `records` table's columns.
pub(super) const RECORDS: &[(&str, Kind)] = &[
    ("path", Str),
    ("line", Int),
    ("record_index", Int),
    ("run_id", Str),
    ("schema_version", Str),
    ("canonical_sha256", Str),
    ("prev_record_hash", Str),
    ("structural", Str),
    ("semantic", Str),
    ("authenticity", Str),
    ("construction", Str),
    ("key_id", Str),
    ("key_unknown", Bool),
    ("chain", Str),
    ("chain_link", Str),
    ("timestamp", Str),
    ("proven_time_ms", Int),
    ("proven_by", Str),
    ("actions", Int),
];

/// The `records` rows of verified records, each with its verdict.
pub(super) fn record_rows<'a>(
    records: impl Iterator<Item = (&'a Record, &'a RecordResult)>,
    scope: Scope,
    t: &mut Table,
) {
    let name = |s: Option<&'static str>| s.unwrap_or("not-evaluated");
    for (record, r) in records {
        let prev = match record.link() {
            crate::model::Link::Hash(h) => Some(h.to_string()),
            _ => None,
        };
        t.s("path", Some(&r.source.path));
        t.i("line", Some(r.source.line as i64));
        t.i("record_index", Some(r.source.index as i64));
        t.s("run_id", r.run_id.as_deref());
        t.s("schema_version", r.schema_version.as_deref());
        t.s("canonical_sha256", Some(&r.canonical_sha256.to_string()));
        t.s("prev_record_hash", prev.as_deref());
        t.s(
            "structural",
            Some(name(
                r.structural.status.map(crate::verify::CheckStatus::name),
            )),
        );
        let semantic = match (scope, r.semantic.status) {
            (Scope::EachAlone, Some(crate::verify::CheckStatus::Pass)) => None,
            (_, status) => status,
        };
        t.s(
            "semantic",
            Some(name(semantic.map(crate::verify::CheckStatus::name))),
        );
        let a = &r.authenticity;
        t.s(
            "authenticity",
            Some(if a.evaluated {
                name(a.status.map(crate::verify::signature::AuthStatus::name))
            } else {
                "not-checked"
            }),
        );
        t.s("construction", a.construction.map(Construction::name));
        t.s("key_id", a.key_id.as_deref());
        t.b("key_unknown", Some(a.key_unknown));
        let chain = (scope == Scope::Whole).then_some(&r.chain);
        t.s(
            "chain",
            Some(name(chain.and_then(|c| {
                c.status.map(crate::verify::chain::ChainStatus::name)
            }))),
        );
        t.s(
            "chain_link",
            chain.and_then(|c| c.link.map(crate::verify::chain::LinkState::name)),
        );
        let (timestamp, proven) = timestamp_columns(a);
        t.s("timestamp", timestamp);
        t.i("proven_time_ms", proven.and_then(|token| token.gen_time_ms));
        t.s("proven_by", proven.and_then(|token| token.tsa.as_deref()));
        t.i("actions", Some(record.facts().actions.len() as i64));
        t.end_row();
    }
}

/// A record's timestamp proof as the `records` table says it: an RFC 3161 token's state,
/// `claim` for any other proof (it proves no time; which kind is `check`'s to say, since
/// telling two of them apart reads the whole evidence), none without a proof — and the
/// token when it proves a time (`tsa-verified`: chained to a `--tsa-certs` root).
fn timestamp_columns(
    a: &crate::verify::signature::Authenticity,
) -> (Option<&'static str>, Option<&crate::verify::tsa::Token>) {
    use crate::verify::timestamp::TimestampState;
    match a.timestamp {
        None => (None, None),
        Some(TimestampState::Token(state)) => {
            let proven = a.timestamp.is_some_and(TimestampState::proves_time);
            (
                Some(state.name()),
                a.timestamp_token.as_deref().filter(|_| proven),
            )
        }
        Some(_) => (Some("claim"), None),
    }
}

/// The `actions` table's columns.
const ACTIONS: &[(&str, Kind)] = &[
    ("run_id", Str),
    ("action_id", Str),
    ("chain_head", Str),
    ("chain_start", Str),
    ("path", Str),
    ("line", Int),
    ("record_sha256", Str),
    ("record_authenticity", Str),
    ("record_key_id", Str),
    ("record_chain", Str),
    ("copies", Int),
    ("parent_action_id", Str),
    ("tool_name", Str),
    ("decision", Str),
    ("approval_grant", Str),
    ("side_effect_class", Str),
    ("state_changing", Bool),
    ("time_ms", Float),
    ("observed", Str),
    ("drift", Str),
    ("lease_id", Str),
    ("lease_source", Str),
    ("lease_verdict", Str),
];

/// The `actions` rows of a batch: one per action, with its record's verdict and lease.
fn actions(b: &Batch, t: &mut Table) {
    let g = &b.analysis.graph;
    for run in &g.runs {
        for &n in &run.nodes {
            let Some(f) = g.facts(b.corpus, n) else {
                continue;
            };
            let node = &g.nodes[n as usize];
            let record = b.corpus.record(node.record as usize);
            let lease = b.analysis.leases.by_node.get(&n);
            let chain = g.chain_name(b.corpus, n);
            let verdict = (b.verdicts.get(b.number(node.record) as usize))
                .map(crate::verify::verdict::RecordVerdict::of);
            t.s("run_id", Some(&run.id));
            t.s("action_id", f.id());
            t.s("chain_head", Some(&chain.head));
            t.s("chain_start", Some(chain.start.name()));
            t.s("path", Some(&record.source.path));
            t.i("line", Some(record.source.line as i64));
            t.s(
                "record_sha256",
                b.analysis
                    .hashes
                    .get(node.record as usize)
                    .map(ToString::to_string)
                    .as_deref(),
            );
            t.s(
                "record_authenticity",
                verdict.as_ref().map(|v| v.authenticity.as_str()),
            );
            t.s(
                "record_key_id",
                verdict.as_ref().and_then(|v| v.key_id.as_deref()),
            );
            t.s("record_chain", verdict.as_ref().map(|v| v.chain.as_str()));
            t.i("copies", Some(i64::from(node.copies)));
            t.s("parent_action_id", f.parent());
            t.s("tool_name", f.tool());
            t.s("decision", f.outcome());
            t.s("approval_grant", f.grant());
            t.s("side_effect_class", f.side_effect_class());
            t.b("state_changing", f.state_changing);
            t.f("time_ms", node.time());
            t.s("observed", f.observed());
            t.s("drift", Some(f.drift.name()));
            t.s("lease_id", lease.map(|l| l.lease_id.as_str()));
            t.s("lease_source", lease.map(|l| l.source.name()));
            t.s("lease_verdict", lease.map(|l| l.verdict.name()));
            t.end_row();
        }
    }
}

/// The `findings` table's columns.
const FINDINGS: &[(&str, Kind)] = &[
    ("finding_id", Str),
    ("severity", Str),
    ("fingerprint", Str),
    ("finding_key", Str),
    ("run_id", Str),
    ("action_id", Str),
    ("chain_head", Str),
    ("message", Str),
    ("path", Str),
    ("line", Int),
    ("pointer", Str),
];

/// One row per finding and action it names (`action_id` null for a finding naming none):
/// portable SQL counts findings with `COUNT(DISTINCT fingerprint)`.
fn findings(all: &[Finding], t: &mut Table) {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for f in all {
        let n = seen.entry(f.fingerprint.as_str()).or_default();
        *n += 1;
        let key = format!("{}:{n}", f.fingerprint);
        let at = f.locations.first();
        let ids: Vec<Option<&str>> = if f.action_ids.is_empty() {
            vec![None]
        } else {
            f.action_ids.iter().map(|a| Some(a.as_str())).collect()
        };
        for id in ids {
            t.s("finding_id", Some(f.id));
            t.s("severity", Some(f.severity.name()));
            t.s("fingerprint", Some(&f.fingerprint));
            t.s("finding_key", Some(&key));
            t.s("run_id", f.run_id.as_deref());
            t.s("action_id", id);
            t.s("chain_head", id.and(f.chain.as_deref()));
            t.s("message", Some(&f.message));
            t.s("path", at.map(|l| &*l.path));
            t.i("line", at.map(|l| l.line as i64));
            t.s("pointer", at.map(|l| l.pointer.as_str()));
            t.end_row();
        }
    }
}

/// The `edges` table's columns.
const EDGES: &[(&str, Kind)] = &[
    ("kind", Str),
    ("from_run_id", Str),
    ("from_action_id", Str),
    ("to_run_id", Str),
    ("to_action_id", Str),
    ("lease_id", Str),
    ("from_record_sha256", Str),
    ("to_record_sha256", Str),
];

/// Parent (within and across runs), deny→re-approval, causal, lease-member and
/// chain-link edges.
fn edges(b: &Batch, t: &mut Table) {
    let g = &b.analysis.graph;
    let key = |n: NodeId| {
        let run = g.runs[g.nodes[n as usize].run as usize].id.as_str();
        let id = g.facts(b.corpus, n).and_then(|f| f.id());
        (Some(run), id)
    };
    let roles = crate::analysis::chains::roles(&b.analysis.chains);
    for (n, node) in g.nodes.iter().enumerate() {
        let n = n as NodeId;
        if let Some(p) = node.parent {
            let kind = if g.parent_is_cross_run(n) {
                "parent-cross-run"
            } else {
                "parent"
            };
            let (from, to) = (key(p), key(n));
            EdgeRow::between(kind, from, to).push(t);
            if roles.get(&n) == Some(&crate::analysis::chains::Role::Reapproved) {
                EdgeRow::between("reapproval", from, to).push(t);
            }
        }
    }
    for group in &g.causal {
        for w in group.nodes.windows(2) {
            let (from, to) = (key(w[0]), key(w[1]));
            EdgeRow::between("causal", from, to).push(t);
        }
    }
    for l in &b.analysis.leases.summaries {
        for &n in &l.nodes {
            let to = key(n);
            let lease = Some(l.lease_id.as_str());
            EdgeRow {
                kind: "lease-member",
                to,
                lease,
                ..EdgeRow::default()
            }
            .push(t);
        }
    }
    // A chain link: the record a `prev_record_hash` names, when it is loaded (in the
    // batch, then: the name ties the two records into one group).
    let loaded: std::collections::HashSet<Sha256Digest> =
        (b.records()).map(|(_, r)| r.canonical_sha256).collect();
    for (record, r) in b.records() {
        if let crate::model::Link::Hash(h) = record.link()
            && h.digest().is_some_and(|h| loaded.contains(&h))
        {
            let own = r.canonical_sha256.to_string();
            let link = h.to_string();
            let records = (Some(link.as_str()), Some(own.as_str()));
            EdgeRow {
                kind: "chain-link",
                records,
                ..EdgeRow::default()
            }
            .push(t);
        }
    }
}

/// One row of `edges`: what a kind of edge leaves unset stays null.
#[derive(Clone, Copy, Default)]
struct EdgeRow<'a> {
    kind: &'a str,
    /// (run id, action id) at each end.
    from: (Option<&'a str>, Option<&'a str>),
    to: (Option<&'a str>, Option<&'a str>),
    lease: Option<&'a str>,
    /// (linked-to record, linking record), canonical SHA-256s.
    records: (Option<&'a str>, Option<&'a str>),
}

impl<'a> EdgeRow<'a> {
    /// An edge from one action to another.
    fn between(
        kind: &'a str,
        from: (Option<&'a str>, Option<&'a str>),
        to: (Option<&'a str>, Option<&'a str>),
    ) -> EdgeRow<'a> {
        EdgeRow {
            kind,
            from,
            to,
            ..EdgeRow::default()
        }
    }

    fn push(self, t: &mut Table) {
        t.s("kind", Some(self.kind));
        t.s("from_run_id", self.from.0);
        t.s("from_action_id", self.from.1);
        t.s("to_run_id", self.to.0);
        t.s("to_action_id", self.to.1);
        t.s("lease_id", self.lease);
        t.s("from_record_sha256", self.records.0);
        t.s("to_record_sha256", self.records.1);
        t.end_row();
    }
}

/// The `leases` table's columns.
const LEASES: &[(&str, Kind)] = &[
    ("lease_id", Str),
    ("source", Str),
    ("granted_at_ms", Float),
    ("expires_at_ms", Float),
    ("max_invocations", Float),
    ("first_use_ms", Float),
    ("last_use_ms", Float),
    ("actions", Int),
];

/// The `leases` rows of a batch: one per lease its actions use.
fn leases(b: &Batch, t: &mut Table) {
    for l in &b.analysis.leases.summaries {
        t.s("lease_id", Some(&l.lease_id));
        t.s("source", Some(l.source.name()));
        t.f("granted_at_ms", l.granted_at_ms);
        t.f("expires_at_ms", l.expires_at_ms);
        t.f("max_invocations", l.max_invocations);
        t.f("first_use_ms", l.first_use_ms);
        t.f("last_use_ms", l.last_use_ms);
        t.i("actions", Some(l.nodes.len() as i64));
        t.end_row();
    }
}

/// The `spans` table's columns.
const SPANS: &[(&str, Kind)] = &[
    ("trace_id", Str),
    ("span_id", Str),
    ("parent_span_id", Str),
    ("name", Str),
    ("tool_name", Str),
    ("call_id", Str),
    ("run_id", Str),
    ("start_unix_nano", Int),
    ("end_unix_nano", Int),
    ("evidence_time_ms", Float),
    ("status", Str),
    ("service", Str),
    ("path", Str),
    ("line", Int),
    ("pointer", Str),
    ("join_rule", Str),
    ("action_id", Str),
    ("action_record_sha256", Str),
    ("run_capture", Str),
];

/// The agent's tool-call spans (`--traces`; no rows without), each with the action it is
/// joined to and the rule that joined them.
fn spans(ev: EvidenceRef, t: &mut Table) {
    let Some(c) = ev.capture else {
        return;
    };
    let g = &ev.analysis.graph;
    for (i, span) in c.spans.iter().enumerate() {
        let run = c.span_runs[i].map(|r| g.runs[r as usize].id.as_str());
        let join = c.joins[i];
        let node = join.map(|j| j.node);
        t.s("trace_id", Some(&span.trace_id));
        t.s("span_id", Some(&span.span_id));
        t.s("parent_span_id", span.parent_span_id.as_deref());
        t.s("name", Some(&span.name));
        t.s("tool_name", span.tool.as_deref());
        t.s("call_id", span.call_id.as_deref());
        t.s("run_id", run.or(span.run_id.as_deref()));
        t.i("start_unix_nano", i64::try_from(span.start_ns).ok());
        t.i("end_unix_nano", i64::try_from(span.end_ns).ok());
        t.f("evidence_time_ms", run.map(|_| c.evidence_time(i as u32)));
        t.s("status", Some(span.status.name()));
        t.s("service", span.service.as_deref());
        t.s("path", Some(&span.path));
        t.i("line", Some(span.line as i64));
        t.s("pointer", Some(&span.pointer));
        t.s("join_rule", join.map(|j| j.rule.name()));
        t.s("action_id", node.and_then(|n| g.facts(ev.corpus, n)?.id()));
        let hash = node.and_then(|n| ev.analysis.hashes.get(g.nodes[n as usize].record as usize));
        t.s(
            "action_record_sha256",
            hash.map(ToString::to_string).as_deref(),
        );
        t.s("run_capture", run.and_then(|r| c.run(r)).map(|r| r.status));
        t.end_row();
    }
}

/// The manifest of an evidence set's tables: what made them (tool, version, schema
/// versions, profile), the inputs with their SHA-256s, the keyring's fingerprints, and
/// `tables` (each table's rows and files).
pub fn manifest(
    set: &EvidenceSet,
    keys: &crate::verify::Keyring,
    tables: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    serde_json::json!({
        "schema_version": crate::model::contract::SCHEMA_VERSION,
        "tables_version": TABLES_VERSION,
        "tool": "aeplens",
        "version": env!("CARGO_PKG_VERSION"),
        "profile": "forensic",
        "evidence": set,
        "keyring": KeyRef::all(keys),
        "tables": tables,
    })
}
