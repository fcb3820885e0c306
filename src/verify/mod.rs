//! Verification: five independent axes per record (structural, semantic, authenticity,
//! chain, capture) following the verifier-result contract (verification.md §f), a chain
//! verdict per file in file order (§e.1), and the link graph across every input (§e.2)
//! that the chain verdict follows. Records are verified in parallel.

pub mod anchors;
pub mod chain;
mod counts;
pub mod dsse;
pub mod encoding;
pub mod hygiene;
pub mod keys;
pub mod links;
pub mod memory;
mod paths;
pub mod prior;
pub mod semantic;
pub mod sharing;
pub mod siblings;
pub mod sign;
pub mod signature;
pub mod structural;
pub mod timestamp;
pub mod tsa;
pub mod verdict;

pub use counts::{AuthCounts, SeverityCounts, Summary};
pub use keys::Keyring;
pub use paths::{Trees, verify_paths, verify_paths_in_chunks};
pub use signature::{AuthStatus, BindingStatus, Profile, TimestampState};

use crate::canon::{CHAIN_EXCLUDED, Sha256Digest, Variant, canonical_bytes_without};
use crate::load::{Format, Input, LoadError};
use crate::model::Record;
use crate::model::finding::Finding;
use chain::{ChainStatus, FileChain, LinkState};
use compact_str::CompactString;
use links::LinkGraph;
use prior::{Prior, Reuse};
use rayon::prelude::*;
use semantic::{RuleSeverity, Violation};
use serde::{Deserialize, Serialize};
use sharing::Sharing;
use signature::Authenticity;
use std::sync::Arc;
use structural::StructuralViolation;

/// How to verify.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    pub profile: Profile,
}

/// Outcome of the structural and semantic axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    Pass,
    Fail,
}

impl CheckStatus {
    /// `Pass` when `ok`.
    pub fn from_ok(ok: bool) -> CheckStatus {
        if ok {
            CheckStatus::Pass
        } else {
            CheckStatus::Fail
        }
    }

    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            CheckStatus::Pass => "pass",
            CheckStatus::Fail => "fail",
        }
    }
}

/// The structural axis.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct StructuralAxis {
    pub evaluated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<CheckStatus>,
    pub violations: Vec<StructuralViolation>,
}

/// The semantic axis.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct SemanticAxis {
    pub evaluated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<CheckStatus>,
    pub violations: Vec<Violation>,
}

/// The chain axis of one record: the worst status of the link-graph paths through it
/// (§e.2), and its link relative to the record before it in its file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ChainAxis {
    pub evaluated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ChainStatus>,
    pub link: Option<LinkState>,
    /// The fork point of a path through it: the record two records claim as their
    /// predecessor (its own state, whatever the path's status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_at: Option<SourceOut>,
}

/// The capture axis: completeness is not provable from producer-signed records alone, so
/// it is evaluated only against an independent witness (contract rule 6): the agent's
/// OpenTelemetry traces (`--traces`, `analysis::capture`), for the records of a run they
/// name.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CaptureAxis {
    pub evaluated: bool,
    /// What the witness says of the record's run (absent when not evaluated).
    #[serde(default, flatten)]
    pub run: Option<Box<RunCaptured>>,
}

/// The capture of a record's run as its witness saw it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunCaptured {
    /// `complete` or `gaps`.
    pub status: String,
    /// The witness: `opentelemetry-traces`.
    pub witness: String,
    /// Tool-call spans of the run, and those with no action in the evidence.
    pub run_spans: usize,
    pub spans_without_action: usize,
    /// Actions of the run, those inside the telemetry's window with no span, and those
    /// outside it (or untimed), not judged.
    pub run_actions: usize,
    pub actions_without_span: usize,
    pub not_judged: usize,
}

/// Where a record came from, as output.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SourceOut {
    /// Its file, shared with the record's source.
    pub path: std::sync::Arc<str>,
    pub line: usize,
    pub index: usize,
}

impl SourceOut {
    /// Where `record` came from.
    pub fn of(record: &Record) -> SourceOut {
        SourceOut {
            path: record.source.path.clone(),
            line: record.source.line,
            index: record.source.index,
        }
    }
}

/// Everything verified about one record.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RecordResult {
    /// Which evidence type the record is (`aep-record`, or a sibling: `checkpoint`, `fork`,
    /// `memory-evidence`, …).
    #[serde(default)]
    pub kind: crate::model::kind::Kind,
    pub source: SourceOut,
    /// Short texts kept inline (no allocation up to 24 bytes): a store has one per record.
    pub run_id: Option<CompactString>,
    pub schema_version: Option<CompactString>,
    /// SHA-256 of C1(record − signature − dsse_envelope): the next record's link.
    pub canonical_sha256: Sha256Digest,
    /// The axes a record is judged on alone, each shared by the records it is the same
    /// for (a store's records mostly share them: [`sharing::Sharing`]).
    pub structural: Arc<StructuralAxis>,
    pub semantic: Arc<SemanticAxis>,
    pub authenticity: Arc<Authenticity>,
    pub chain: ChainAxis,
    pub capture: CaptureAxis,
    pub findings: Vec<Finding>,
    /// What it names among the other evidence (aep-fields §16): a fork's checkpoint, a
    /// checkpoint's run, an action's memory cells — found or not.
    #[serde(skip_deserializing, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<siblings::EvidenceLink>,
    /// The record carries signature material (`signature` object or `dsse_envelope`).
    #[serde(skip)]
    pub signed: bool,
}

/// What an input is to the verifier: evidence, or a file that decides findings about it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputKind {
    /// Records to verify (written without a `kind` member).
    #[default]
    Evidence,
    /// A `--leases` file: its ScopeLease and ApprovalReceipt objects decide lease windows.
    Leases,
}

impl InputKind {
    fn is_evidence(&self) -> bool {
        *self == InputKind::Evidence
    }
}

/// Per-input summary, as output.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct InputOut {
    pub path: String,
    /// `leases` for a lease file; absent for evidence.
    #[serde(skip_serializing_if = "InputKind::is_evidence")]
    pub kind: InputKind,
    pub format: &'static str,
    pub sha256: Option<String>,
    /// Size in bytes (absent when the file could not be read).
    pub bytes: Option<u64>,
    pub records: usize,
    pub errors: Vec<ErrorOut>,
}

impl InputOut {
    /// `input`, read as `kind`, with `errors` (its load errors, or more).
    pub fn of(input: &Input, kind: InputKind, errors: &[LoadError]) -> InputOut {
        InputOut {
            path: input.path.to_string(),
            kind,
            format: input.format.name(),
            sha256: input.sha256.clone(),
            bytes: input.bytes,
            records: input.records.len(),
            errors: errors.iter().map(ErrorOut::from).collect(),
        }
    }
}

/// A load error, as output.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ErrorOut {
    pub line: Option<usize>,
    /// 1-based column on the line, when the problem has one.
    pub column: Option<usize>,
    pub message: String,
    /// The error with its place and a caret under the offending column, for people.
    #[serde(skip)]
    pub rendered: String,
}

impl From<&LoadError> for ErrorOut {
    fn from(e: &LoadError) -> Self {
        ErrorOut {
            line: e.line,
            column: e.column,
            message: e.message.clone(),
            rendered: e.render(),
        }
    }
}

/// The result of verifying a set of inputs.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub inputs: Vec<InputOut>,
    /// In input order, then file order: `records[i]` belongs to the i-th loaded record.
    pub records: Vec<RecordResult>,
    /// File order, one entry per input.
    pub chains: Vec<FileChain>,
    /// The link graph over every input at once (§e.2); `chain_paths` in output.
    #[serde(skip)]
    pub links: LinkGraph,
    /// Each anchor's verdict (`--anchors`, d.7), in the order given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<anchors::AnchorOut>,
}

/// Verifies every record of every input; `progress`, when given, counts verified records.
pub fn verify_inputs(
    inputs: &[Input],
    keys: &Keyring,
    options: &Options,
    progress: Option<&std::sync::atomic::AtomicUsize>,
) -> Report {
    verify_inputs_with(inputs, keys, options, None, progress).0
}

/// [`verify_inputs`] with verdicts made before ([`Prior`]): a record whose verdicts it holds for
/// its place, in a file that still begins with the bytes they were made from, takes them
/// from there; every other record is verified (all of them together, on every core), and
/// each file with a record verified is kept there. A file that grew is found
/// to have only grown when it was loaded asking for its old size's digest
/// ([`crate::load::load_paths_asking`] with [`Prior::covered`]); otherwise only the
/// same file is.
pub fn verify_inputs_with(
    inputs: &[Input],
    keys: &Keyring,
    options: &Options,
    prior: Option<&dyn Prior>,
    progress: Option<&std::sync::atomic::AtomicUsize>,
) -> (Report, Reuse) {
    let mut used = Reuse {
        dir: prior.map(|p| p.dir().to_path_buf()),
        ..Reuse::default()
    };
    let all: Vec<(&Record, usize)> = inputs
        .iter()
        .flat_map(|i| i.records.iter().map(|r| (r, i.records.len())))
        .collect();
    let mut results: Vec<Option<RecordResult>> = Vec::with_capacity(all.len());
    // Per input: whether its entry is to be written (missing, or a record verified).
    let mut changed = Vec::with_capacity(inputs.len());
    for input in inputs {
        let mut entry = prior
            .and_then(|p| p.lookup(&input.path))
            .filter(|e| e.confirms(input));
        let n = input.records.len();
        let start = results.len();
        results.extend(
            input
                .records
                .iter()
                .map(|r| entry.as_mut().and_then(|e| e.take(r, n))),
        );
        changed.push(entry.is_none() || results[start..].iter().any(Option::is_none));
    }
    let mut results = fill(results, &all, keys, options, &mut used, &|| {
        if let Some(p) = progress {
            p.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    Sharing::default().share(&mut results);
    let mut start = 0;
    for (input, changed) in inputs.iter().zip(changed) {
        let end = start + input.records.len();
        if changed {
            paths::keep(prior, input, &results[start..end], None, &mut used);
        }
        start = end;
    }
    (assemble(inputs, results, keys), used)
}

/// `results` with every record no earlier verdict answered for (`None`) verified, on every
/// core; `records` are the records with the number in their file so far, in the same
/// order. Counted in `used`; `each` is called once per record.
fn fill(
    mut results: Vec<Option<RecordResult>>,
    records: &[(&Record, usize)],
    keys: &Keyring,
    options: &Options,
    used: &mut Reuse,
    each: &(dyn Fn() + Sync),
) -> Vec<RecordResult> {
    let reused = results.iter().filter(|r| r.is_some()).count();
    used.reused += reused;
    used.verified += records.len() - reused;
    results
        .par_iter_mut()
        .zip(records.par_iter())
        .for_each(|(result, (record, in_file))| {
            if result.is_none() {
                *result = Some(verify_record(record, *in_file, keys, options));
            }
            each();
        });
    results.into_iter().flatten().collect()
}

/// The report from every record's own verdicts: what needs the records together — the
/// chain axis and link graph, the anchors, confusable ids across records, timestamp
/// authorities and the order of stamped records.
fn assemble(inputs: &[Input], mut records: Vec<RecordResult>, keys: &Keyring) -> Report {
    let refs: Vec<&Record> = inputs.iter().flat_map(|i| &i.records).collect();
    let hashes = Report::hashes_of(&records);
    let mut links = links::build(&refs, &hashes);
    let anchors = anchors::apply(keys.anchors(), keys.tsa_roots(), &refs, &hashes, &mut links);
    links
        .findings
        .extend(timestamp::order_findings(&refs, &records, &links));
    let mut chains = Vec::with_capacity(inputs.len());
    let mut axes = Vec::with_capacity(records.len());
    let mut offset = 0;
    for input in inputs {
        let n = input.records.len();
        let is_store = input.format != Format::Object;
        let (file_chain, link_states) = chain::check_file(
            &input.path,
            &refs[offset..offset + n],
            &hashes[offset..offset + n],
            is_store,
        );
        for (i, link) in link_states.into_iter().enumerate() {
            axes.push(ChainAxis {
                evaluated: file_chain.evaluated,
                status: file_chain
                    .evaluated
                    .then_some(links.record_status[offset + i]),
                link: Some(link),
                forked_at: (links.fork_of(offset + i))
                    .filter(|_| file_chain.evaluated)
                    .map(|f| SourceOut::of(refs[f])),
            });
        }
        if let Some(at) = alert_log_out_of_order(&refs[offset..offset + n], &file_chain) {
            records[offset + at]
                .findings
                .push(alert_order_finding(refs[offset + at]));
        }
        chains.push(file_chain);
        offset += n;
    }
    for (record, axis) in records.iter_mut().zip(axes) {
        record.chain = axis;
    }
    for (i, finding) in &links.findings {
        records[*i].findings.push(finding.clone());
    }
    for (i, finding) in hygiene::confusable_ids(&refs) {
        records[i].findings.push(finding);
    }
    for (i, finding) in memory::broken_links(&refs, &records) {
        records[i].findings.push(finding);
    }
    let edges = siblings::resolve(&refs, &records);
    for (record, edges) in records.iter_mut().zip(edges) {
        record.links = edges;
    }
    timestamp::local_authorities(&mut records);
    for r in &mut records {
        r.findings.sort_by_key(|f| f.severity);
    }
    let inputs = (inputs.iter())
        .map(|i| InputOut::of(i, InputKind::Evidence, &i.errors))
        .collect();
    Report {
        inputs,
        records,
        chains,
        links,
        anchors,
    }
}

/// Where an alert log (a file of `aeplens-alert` lines, written by one monitor in chain
/// order) stops being in file order: a line moved. Other stores may interleave emitters;
/// an alert log may not.
fn alert_log_out_of_order(records: &[&Record], chain: &chain::FileChain) -> Option<usize> {
    let alerts = !records.is_empty()
        && (records.iter()).all(|r| r.kind() == crate::model::kind::Kind::AeplensAlert);
    chain.broken_at.filter(|_| alerts)
}

/// F-ALERT-LOG-ORDER on the first alert line out of chain order.
fn alert_order_finding(record: &Record) -> Finding {
    Finding {
        id: "F-ALERT-LOG-ORDER",
        severity: crate::model::finding::Severity::High,
        run_id: None,
        action_ids: Vec::new(),
        message: format!(
            "{}: this alert does not follow the line before it (prev_record_hash): the alert log was reordered or cut",
            record.source
        ),
        evidence: serde_json::json!({ "line": record.source.line }).into(),
        locations: vec![crate::model::finding::Location::record(&record.source)],
        fingerprint: String::new(),
        chain: None,
        tool: None,
    }
}

/// The bytes a record's canonical hash (`canonical_sha256`, what the next record's
/// `prev_record_hash` names) and its signature cover: its canonical form without the
/// chain's own fields.
pub fn chain_bytes(record: &Record) -> Vec<u8> {
    canonical_bytes_without(record.json(), CHAIN_EXCLUDED, Variant::C1)
}

/// Verifies one record on every axis but the chain (which needs its neighbours).
/// `records_in_file` decides whether an unsigned record is judged on its own.
pub fn verify_record(
    record: &Record,
    records_in_file: usize,
    keys: &Keyring,
    options: &Options,
) -> RecordResult {
    let chain_bytes = chain_bytes(record);
    let canonical_sha256 = Sha256Digest::of(&chain_bytes);
    // A sibling evidence type is checked against its own schema; V1–V18 are invariants
    // of records, not evaluated for it.
    let kind = record.kind();
    let structural_violations = match kind {
        crate::model::kind::Kind::AepRecord => structural::check(record),
        sibling => structural::check_sibling(record, sibling),
    };
    let semantic_violations = if kind.is_record() {
        semantic::check(record)
    } else {
        Vec::new()
    };
    let mut findings = hygiene::check(record);
    let mut authenticity =
        signature::authenticate(record, &chain_bytes, keys, options.profile, &mut findings);
    let structural_ok = structural_violations.is_empty();
    let semantic_ok = !semantic_violations
        .iter()
        .any(|v| v.severity == RuleSeverity::Error);
    if authenticity.status == Some(AuthStatus::Unsigned) && !record.is_signed() {
        // Conformance policy: "unsigned" is an outcome only for a well-formed standalone
        // record. An unsigned record inside a store is left to the chain axis, and one
        // that fails L0/L1 is not taken further (manifest `not-checked`).
        let why = if !(structural_ok && semantic_ok) {
            Some("unsigned record that failed structural or semantic checks")
        } else if records_in_file > 1 || record.link().is_present() {
            Some("unsigned record in a chain or store: the chain axis speaks for it")
        } else {
            None
        };
        if let Some(why) = why {
            authenticity.evaluated = false;
            authenticity.status = None;
            authenticity.reason = Some(format!("no signature; not evaluated ({why})"));
        }
    }
    findings.sort_by_key(|f| f.severity);
    RecordResult {
        kind,
        source: SourceOut::of(record),
        run_id: record.str_field("run_id").map(CompactString::from),
        schema_version: record.schema_version().map(CompactString::from),
        canonical_sha256,
        structural: Arc::new(StructuralAxis {
            evaluated: true,
            status: Some(CheckStatus::from_ok(structural_ok)),
            violations: structural_violations,
        }),
        semantic: Arc::new(SemanticAxis {
            evaluated: kind.is_record(),
            status: kind.is_record().then(|| CheckStatus::from_ok(semantic_ok)),
            violations: semantic_violations,
        }),
        authenticity: Arc::new(authenticity),
        chain: ChainAxis {
            evaluated: false,
            status: None,
            link: None,
            forked_at: None,
        },
        capture: CaptureAxis {
            evaluated: false,
            run: None,
        },
        findings,
        links: Vec::new(),
        signed: record.is_signed(),
    }
}

impl Report {
    /// Each record's chain hash `H`, in record order (what the analysis keys records by).
    pub fn canonical_hashes(&self) -> Vec<Sha256Digest> {
        Report::hashes_of(&self.records)
    }

    fn hashes_of(records: &[RecordResult]) -> Vec<Sha256Digest> {
        records.iter().map(|r| r.canonical_sha256).collect()
    }

    /// The `check` exit code: 0 when every signed record is valid, the link graph passes
    /// (every chain path intact or not-present, no fork, no conflicting duplicate — file
    /// order may still read `broken` on interleaved emitters), no error-severity
    /// violation exists and no RFC 3161 token present fails (d.6); 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        let bad_record = self.records.iter().any(|r| {
            let signed_not_valid = r.signed && r.authenticity.status != Some(AuthStatus::Valid);
            signed_not_valid
                || r.structural.status == Some(CheckStatus::Fail)
                || r.semantic.status == Some(CheckStatus::Fail)
                || r.authenticity.timestamp.is_some_and(TimestampState::fails)
        });
        let bad_chain = !self.links.passes()
            || (self.records.iter().flat_map(|r| &r.findings)).any(|f| f.id == "F-ALERT-LOG-ORDER");
        i32::from(bad_record || bad_chain)
    }
}

/// Every vendored fixture verified without keys: what tests of stored or shared verdicts
/// start from.
#[cfg(test)]
pub(crate) fn fixture_report() -> Report {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures").to_string();
    let inputs = crate::load::load_paths(&[root]);
    verify_inputs(&inputs, &Keyring::default(), &Options::default(), None)
}
