//! Findings: what a reviewer is hunting for, each with an id, a severity and evidence.

use serde::Serialize;

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
}
