//! Findings: what a reviewer is hunting for, each with an id, a severity and evidence.

use super::Source;
use serde::Serialize;
use std::fmt::Write as _;

/// How much a finding matters to a reviewer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// Stable id, e.g. `F-DUPLICATE-KEY`.
    pub id: &'static str,
    pub severity: Severity,
    pub run_id: Option<String>,
    pub action_ids: Vec<String>,
    pub message: String,
    /// The fields that prove it.
    pub evidence: serde_json::Value,
    /// Where it is: the records (and fields) it concerns, the first the main one.
    pub locations: Vec<Location>,
    /// The same finding on the same evidence has the same value on every run and machine;
    /// a finding about a different record never does (see [`fingerprint`]).
    pub fingerprint: String,
}

/// Where a finding is in the evidence: the file, the line its record starts on, and the
/// JSON pointer (RFC 6901) of the field inside that record (`""`: the whole record).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    pub path: String,
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
            path: source.path.to_string(),
            line: source.line,
            pointer: pointer(segments),
        }
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
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
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
    let digest = h.finalize();
    digest[..16].iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
