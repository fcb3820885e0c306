//! Findings: what a reviewer is hunting for, each with an id, a severity and evidence.

use super::Source;
use super::codec::{Reader, Writer};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// How much a finding matters to a reviewer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    High,
    Medium,
    Low,
    Info,
}

impl Severity {
    /// The lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
            Severity::Info => "info",
        }
    }

    /// The mark lists show it with: ▲ high, ■ medium, · low and info.
    pub fn mark(self) -> &'static str {
        match self {
            Severity::High => "▲",
            Severity::Medium => "■",
            Severity::Low | Severity::Info => "·",
        }
    }

    /// Parses a name as given on the command line.
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "high" => Some(Severity::High),
            "medium" => Some(Severity::Medium),
            "low" => Some(Severity::Low),
            "info" => Some(Severity::Info),
            _ => None,
        }
    }
}

/// One finding about a record or its actions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable id, e.g. `F-DUPLICATE-KEY`.
    #[serde(deserialize_with = "super::name::interned")]
    pub id: crate::model::name::Name,
    pub severity: Severity,
    pub run_id: Option<String>,
    pub action_ids: Vec<String>,
    /// The emitter chain of the action it is about (verification.md e.3: an action is its
    /// chain and its id), named by the chain's first record, `file:line`; none for a
    /// finding about no action, or when which chain cannot be told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
    /// That action's `tool_name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub message: String,
    /// The fields that prove it.
    pub evidence: EvidenceText,
    /// Where it is: the records (and fields) it concerns, the first the main one.
    pub locations: Vec<Location>,
    /// The same finding on the same evidence has the same value on every run and machine;
    /// a finding about a different record never does (see [`fingerprint`]).
    pub fingerprint: String,
}

/// A finding's evidence, a JSON value, kept as its compact text — a large store has a
/// hundred thousand findings, and a `serde_json::Value` map of three fields takes some
/// 700 bytes — and read back ([`EvidenceText::value`]) when it is shown or written.
#[derive(Clone, PartialEq, Eq)]
pub struct EvidenceText(Box<str>);

impl EvidenceText {
    /// The value.
    pub fn value(&self) -> serde_json::Value {
        // The text is only ever made from a value, so it always reads back.
        serde_json::from_str(&self.0).unwrap_or_default()
    }
}

impl From<serde_json::Value> for EvidenceText {
    fn from(value: serde_json::Value) -> EvidenceText {
        EvidenceText(value.to_string().into_boxed_str())
    }
}

impl std::fmt::Debug for EvidenceText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for EvidenceText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for EvidenceText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_json::Value::deserialize(d).map(EvidenceText::from)
    }
}

/// Where a finding is in the evidence: the file, the line its record starts on, and the
/// JSON pointer (RFC 6901) of the field inside that record (`""`: the whole record).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// Its file, shared with the record's source.
    pub path: std::sync::Arc<str>,
    pub line: usize,
    pub pointer: String,
}

impl Location {
    /// The whole record at `source`.
    pub fn record(source: &Source) -> Location {
        Location::at(source, &[])
    }

    /// The field reached by `segments` (keys and array positions) in the record at `source`.
    pub fn at(source: &Source, segments: &[&str]) -> Location {
        Location {
            path: source.path.clone(),
            line: source.line,
            pointer: pointer(segments),
        }
    }
}

/// The files the findings packed by [`Finding::encode`] name, each once, by number.
#[derive(Debug, Default)]
pub struct FileNumbers {
    files: Vec<std::sync::Arc<str>>,
    numbers: rustc_hash::FxHashMap<std::sync::Arc<str>, u64>,
}

impl FileNumbers {
    fn number(&mut self, file: &std::sync::Arc<str>) -> u64 {
        if let Some(&n) = self.numbers.get(file) {
            return n;
        }
        self.files.push(file.clone());
        let n = self.files.len() as u64 - 1;
        self.numbers.insert(file.clone(), n);
        n
    }
}

impl Finding {
    /// ` (tool, chain file:line)`: which action of its id the finding is about (an action
    /// is its emitter chain and its id), when that is known; terminal-safe.
    pub fn identity_text(&self) -> String {
        use super::text::sanitize;
        match (&self.tool, &self.chain) {
            (Some(tool), Some(chain)) => {
                format!(" ({}, chain {})", sanitize(tool), sanitize(chain))
            }
            (None, Some(chain)) => format!(" (chain {})", sanitize(chain)),
            _ => String::new(),
        }
    }

    /// Writes the finding compactly (`codec`), its files by number in `files`: what
    /// [`Finding::decode`] reads back — about half the memory of the finding itself.
    pub fn encode(&self, w: &mut Writer, files: &mut FileNumbers) {
        w.bytes(self.id.as_bytes());
        w.uint(self.severity as u64);
        w.opt_str(self.run_id.as_deref());
        w.uint(self.action_ids.len() as u64);
        for a in &self.action_ids {
            w.bytes(a.as_bytes());
        }
        w.opt_str(self.chain.as_deref());
        w.opt_str(self.tool.as_deref());
        w.bytes(self.message.as_bytes());
        w.bytes(self.evidence.0.as_bytes());
        w.uint(self.locations.len() as u64);
        for l in &self.locations {
            w.uint(files.number(&l.path));
            w.uint(l.line as u64);
            w.bytes(l.pointer.as_bytes());
        }
        w.bytes(self.fingerprint.as_bytes());
    }

    /// The finding [`Finding::encode`] wrote; `None` when the bytes are not that.
    pub fn decode(r: &mut Reader<'_>, files: &FileNumbers) -> Option<Finding> {
        let id = super::name::intern(r.str()?);
        let severity = [
            Severity::High,
            Severity::Medium,
            Severity::Low,
            Severity::Info,
        ]
        .get(r.int::<usize>()?)
        .copied()?;
        let run_id = r.opt_str()?.map(str::to_string);
        let action_ids = (0..r.int::<usize>()?)
            .map(|_| r.str().map(str::to_string))
            .collect::<Option<_>>()?;
        let chain = r.opt_str()?.map(str::to_string);
        let tool = r.opt_str()?.map(str::to_string);
        let message = r.str()?.to_string();
        let evidence = EvidenceText(r.str()?.into());
        let locations = (0..r.int::<usize>()?)
            .map(|_| {
                Some(Location {
                    path: files.files.get(r.int::<usize>()?)?.clone(),
                    line: r.int()?,
                    pointer: r.str()?.to_string(),
                })
            })
            .collect::<Option<_>>()?;
        Some(Finding {
            id,
            severity,
            run_id,
            action_ids,
            chain,
            tool,
            message,
            evidence,
            locations,
            fingerprint: r.str()?.to_string(),
        })
    }
}

/// A JSON pointer from its segments (`~` and `/` escaped as RFC 6901 says).
pub fn pointer(segments: &[&str]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        out.push_str(&s.replace('~', "~0").replace('/', "~1"));
    }
    out
}

/// The fingerprint of a finding, from what it is about and never where the files lie: its
/// id, run, actions, and for each location the canonical SHA-256 of the record (`record_hash`
/// of the location) and the pointer. 32 hex digits (128 bits of SHA-256).
pub fn fingerprint(finding: &Finding, record_hash: impl Fn(&Location) -> Option<String>) -> String {
    let mut h = crate::model::sha256::Hasher::default();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_be_bytes());
        h.update(bytes);
    };
    field(finding.id.as_bytes());
    field(finding.run_id.as_deref().unwrap_or("").as_bytes());
    for a in &finding.action_ids {
        field(a.as_bytes());
    }
    for l in &finding.locations {
        field(record_hash(l).as_deref().unwrap_or("").as_bytes());
        field(l.pointer.as_bytes());
    }
    let digest = h.finish();
    digest[..16].iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// What each finding id means, one sentence: the help text of reports (SARIF rules,
/// Markdown) and of the finding catalogue. Every id the code produces has an entry (tested).
pub const RULES: &[(&str, &str)] = &[
    (
        "F-ACTION-REWRITTEN",
        "V17: an action differs between two chained snapshots of its run (the emitter rewrote history).",
    ),
    (
        "F-ALERT-LOG-ORDER",
        "A line of an aeplens-alert log does not follow the line before it: the log was reordered or a line removed.",
    ),
    (
        "F-ANCHOR-INVALID",
        "An anchor (--anchors) whose RFC 3161 token does not verify or does not stamp its record_sha256: it proves nothing about the chain.",
    ),
    (
        "F-CAPTURE-GAP",
        "A tool-call span of a traced run has no action in the evidence: the agent did something the evidence does not record (--traces).",
    ),
    (
        "F-CHAIN-FORK",
        "Two distinct records name the same predecessor: the history forks (both branches named).",
    ),
    (
        "F-CHAIN-GAP",
        "A record's prev_record_hash resolves to no loaded record while earlier records of its emitter are loaded: a lost or removed append.",
    ),
    (
        "F-CONFUSABLE-ID",
        "Two ids a reviewer cannot tell apart (confusable scripts): here run-a and run-а (Cyrillic a).",
    ),
    (
        "F-COV-CREDENTIAL",
        "A state digest's coverage tuple carries a credential (here a password in a database URL).",
    ),
    (
        "F-COV-ROUTE-NOT-TEMPLATED",
        "A browser-dom coverage route holds a concrete id instead of a template, so digests of different pages look comparable.",
    ),
    (
        "F-DECISION-SHADOWED",
        "The record's decision list keeps an earlier deny for the same (capability, subject, resource) the action was allowed under.",
    ),
    (
        "F-DRIFT-EXECUTED",
        "Arguments drifted from what was approved, and the action executed.",
    ),
    (
        "F-DUPLICATE-KEY",
        "A JSON object repeats a key: parsers disagree on which value counts.",
    ),
    (
        "F-DUPLICATE-RECORD",
        "The same record (same chain hash) appears more than once: info for an identical retried append, high when the copies differ.",
    ),
    (
        "F-ED25519-LENIENT-ONLY",
        "A signature that only a lenient Ed25519 verifier accepts (here a small-order public key with R = identity, S = 0, which 'verifies' any message); strict verification rejects it.",
    ),
    (
        "F-EXEC-AFTER-DENY",
        "An action whose recorded decision is deny has an outcome other than denied: it executed anyway.",
    ),
    (
        "F-KEY-MISLABELLED",
        "A signature fails under its declared key but verifies under another trusted key, which the finding names.",
    ),
    (
        "F-KEYID-MISMATCH",
        "D12: signature.key_id differs from the DSSE envelope's keyid; the declared key decides.",
    ),
    (
        "F-LEASE-LABEL-CONTRADICTED",
        "The recorded approval_decision label (expired, revoked) contradicts the recorded lease times.",
    ),
    (
        "F-LEASE-OUTSIDE",
        "An action under a lease executed outside its window (before grant, after expiry, over budget or after revocation).",
    ),
    (
        "F-MEMORY-CHAIN-BROKEN",
        "A memory-evidence op's prior_digest is not the digest its cell's previous op left: a memory op lost or reordered, or a past write altered.",
    ),
    (
        "F-NUMBER-PRECISION",
        "A number beyond double precision: the value every JSON reader sees differs from the bytes.",
    ),
    (
        "F-REAPPROVAL-SAME-PAYLOAD",
        "A denied action re-approved under the same approval context hash: no fresh approval for the drifted payload.",
    ),
    (
        "F-SIG-ENCODING",
        "A signature that verifies only once its spelling is repaired (whitespace in base64, an S1 signature in hex): invalid, never a forgery.",
    ),
    (
        "F-STATE-GAP",
        "The post-state of one action differs from the pre-state of the next over the same coverage tuple, with nothing recorded in between.",
    ),
    (
        "F-TAIL-TRUNCATED",
        "A chain head a verified anchor covers is missing while records of its chain are loaded: the chain's tail was cut (--anchors).",
    ),
    (
        "F-TELEMETRY-MISMATCH",
        "A span joined to an action disagrees with it: another tool name, or an ERROR status where the action succeeded (or an OK status where it failed) (--traces).",
    ),
    (
        "F-TERMINAL-CONTROL",
        "A string holds terminal control, bidi or invisible characters (shown escaped, never sent to the terminal).",
    ),
    (
        "F-TIMESTAMP-CLAIM",
        "A record's claimed timestamp is further from its RFC 3161 token's genTime than the token's accuracy (1 s when it states none).",
    ),
    (
        "F-TIMESTAMP-IMPRINT",
        "A record's RFC 3161 token stamps other bytes: moved from another record, or the record edited after it was stamped.",
    ),
    (
        "F-TIMESTAMP-INVALID",
        "A record's RFC 3161 token fails its signature or certificate checks (signature, timeStamping usage, validity at genTime).",
    ),
    (
        "F-TIMESTAMP-MALFORMED",
        "A record's timestamp proof is DER but not an RFC 3161 token.",
    ),
    (
        "F-TIMESTAMP-ORDER",
        "A record's RFC 3161 genTime (less its accuracy) is later than the next record's created_at_ms on its chain: not the order an emitter stamps in.",
    ),
    (
        "F-UNAPPROVED-MUTATION",
        "A state-changing action with no capability decision at all.",
    ),
    (
        "F-UNKNOWN-CLASS-ALLOWED",
        "An action of unknown side-effect class allowed without any approval (approval_mode none).",
    ),
    (
        "F-UNOBSERVED-ACTION",
        "An action of a traced run has no span inside the telemetry's time window: the evidence claims a call the runtime's tracing did not see, or tracing dropped it (--traces).",
    ),
    (
        "F-UNSIGNED-IN-SIGNED-RUN",
        "A record with no signature in a run whose other records are signed (whether or not their signatures verify): nothing proves who wrote it, and an injected record looks exactly like this.",
    ),
    (
        "V1",
        "run_side_effect_class_max, when present, equals the highest side-effect class of the record's actions.",
    ),
    (
        "V2",
        "state_changing agrees with side_effect_class (false exactly for read).",
    ),
    (
        "V3",
        "A pre or post state digest comes with both state_digest_kind and state_digest_coverage.",
    ),
    (
        "V6",
        "bounded_lease_evidence appears only under a bounded-lease grant, for the same lease id.",
    ),
    (
        "V7",
        "Lease times agree: duration equals expiry minus grant, and expiry follows grant.",
    ),
    (
        "V8",
        "RFC-final drift is bound to the approval that covered the action (lease id or approval hash).",
    ),
    (
        "V9",
        "A grant other than none records an explicit drift check result (absence is ambiguous).",
    ),
    (
        "V10",
        "Drift evidence agrees with itself and with the decision (denied drift sits on a deny; matched means equal digests).",
    ),
    (
        "V11",
        "A one-shot-payload grant carries approval_context_hash.",
    ),
    (
        "V12",
        "A re-approved child of a denied, drifted action carries its own approval, not its parent's.",
    ),
    (
        "V13",
        "other coverage names a namespaced other_kind and a coverage_schema_version.",
    ),
    (
        "V14",
        "Mixed memory or key-value digests carry mixed_partition.",
    ),
    (
        "V15",
        "v0.5 attribution floor and observed grades are consistent.",
    ),
    (
        "V16",
        "action ids are unique within a record; parents resolve, with no cycles and no self-parent.",
    ),
    (
        "V17",
        "The same action in two chained snapshots of its run has identical content.",
    ),
    (
        "V18",
        "A child is not earlier than its parent; timestamps fall after 2001-01-01.",
    ),
];

/// The one-sentence meaning of a finding id.
pub fn describe(id: &str) -> Option<&'static str> {
    RULES.iter().find(|(i, _)| *i == id).map(|(_, d)| *d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Findings read back from their packing exactly — every severity, ids absent or not,
    /// locations across files (each file named once) — and a cut packing never reads.
    #[test]
    fn a_packed_finding_reads_back_as_it_was() {
        let (a, b): (std::sync::Arc<str>, std::sync::Arc<str>) =
            ("a.ndjson".into(), "b/é.json".into());
        let location = |path: &std::sync::Arc<str>, line, pointer: &str| Location {
            path: path.clone(),
            line,
            pointer: pointer.into(),
        };
        let findings: Vec<Finding> = [
            Severity::High,
            Severity::Medium,
            Severity::Low,
            Severity::Info,
        ]
        .into_iter()
        .enumerate()
        .map(|(i, severity)| Finding {
            id: RULES[i].0,
            severity,
            run_id: (i % 2 == 0).then(|| format!("run-{i}")),
            action_ids: (0..i).map(|n| format!("act-{n}\u{0}ι")).collect(),
            chain: (i % 2 == 1).then(|| format!("a.ndjson:{i}")),
            tool: (i > 1).then(|| "edit_file".to_string()),
            message: "m".repeat(i * 100),
            evidence: serde_json::json!({"k": i, "nested": [1.5, null]}).into(),
            locations: vec![
                location(&a, i, "/actions/0"),
                location(&b, 7, ""),
                location(&a, 1, ""),
            ],
            fingerprint: if i == 3 {
                String::new()
            } else {
                "f".repeat(32)
            },
        })
        .collect();
        let mut files = FileNumbers::default();
        let mut w = Writer::default();
        for f in &findings {
            f.encode(&mut w, &mut files);
        }
        assert_eq!(files.files.len(), 2, "each file once");
        let mut r = Reader::new(&w.bytes);
        let read: Vec<Finding> = (0..findings.len())
            .map_while(|_| Finding::decode(&mut r, &files))
            .collect();
        assert_eq!(read, findings);
        assert!(r.is_empty());
        let cut = &w.bytes[..w.bytes.len() - 1];
        let mut r = Reader::new(cut);
        let whole = (0..findings.len()).map_while(|_| Finding::decode(&mut r, &files));
        assert_eq!(whole.count(), findings.len() - 1);
    }
}
