//! Counts over a verification report: the summary line of `check` and the JSON `summary`.

use super::chain::ChainStatus;
use super::{AuthStatus, CheckStatus, Report};
use crate::model::finding::{Finding, Severity};
use serde::Serialize;

impl Report {
    /// The summary, with findings counted over `findings` (the verifier's per record and
    /// the analysis's across records) instead of the report's own.
    pub fn summary_with(&self, findings: &[Finding]) -> Summary {
        let mut sum = self.summary();
        sum.findings = SeverityCounts::default();
        for f in findings {
            sum.findings.add(f.severity);
        }
        sum
    }

    /// Counts for the summary line and JSON `summary`.
    pub fn summary(&self) -> Summary {
        // Every status is counted, zero or not: an absent count would read as "none seen"
        // to some readers and "not reported" to others.
        let statuses = || ChainStatus::ALL.iter().map(|c| (c.name(), 0));
        let mut s = Summary {
            inputs: self.inputs.len(),
            records: self.records.len(),
            load_errors: self.inputs.iter().map(|i| i.errors.len()).sum(),
            chains: statuses().chain([("not-checked", 0)]).collect(),
            chain_paths: statuses().collect(),
            ..Summary::default()
        };
        for r in &self.records {
            if r.authenticity.key_unknown {
                s.authenticity.unknown_key += 1;
            }
            match r.authenticity.status {
                None => s.authenticity.not_checked += 1,
                Some(AuthStatus::Valid) => s.authenticity.valid += 1,
                Some(AuthStatus::Unsigned) => s.authenticity.unsigned += 1,
                Some(AuthStatus::BindingMismatch) => s.authenticity.binding_mismatch += 1,
                Some(AuthStatus::UnsupportedLegacy) => s.authenticity.unsupported_legacy += 1,
                Some(AuthStatus::Invalid) => s.authenticity.invalid += 1,
            }
            if r.structural.status == Some(CheckStatus::Fail) {
                s.structural_fail += 1;
            }
            if r.semantic.status == Some(CheckStatus::Fail) {
                s.semantic_fail += 1;
            }
            for f in &r.findings {
                s.findings.add(f.severity);
            }
        }
        for c in &self.chains {
            let name = c.status.map_or("not-checked", ChainStatus::name);
            *s.chains.entry(name).or_default() += 1;
        }
        for p in &self.links.paths {
            *s.chain_paths.entry(p.status.name()).or_default() += 1;
        }
        s.forks = self.links.forks.len();
        s
    }
}

/// Counts over a report.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Summary {
    pub inputs: usize,
    pub records: usize,
    pub load_errors: usize,
    pub authenticity: AuthCounts,
    pub structural_fail: usize,
    pub semantic_fail: usize,
    /// Files per file-order status (every status, zero included).
    pub chains: std::collections::BTreeMap<&'static str, usize>,
    /// Link-graph paths per status (every status, zero included).
    pub chain_paths: std::collections::BTreeMap<&'static str, usize>,
    /// Fork points: records two or more records claim as their predecessor.
    pub forks: usize,
    pub findings: SeverityCounts,
}

/// Records per authenticity outcome.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct AuthCounts {
    pub valid: usize,
    pub invalid: usize,
    pub binding_mismatch: usize,
    pub unsupported_legacy: usize,
    pub unsigned: usize,
    pub not_checked: usize,
    /// Of `not_checked`: records whose key id has no trusted key.
    pub unknown_key: usize,
}

/// Findings per severity.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SeverityCounts {
    pub high: usize,
    pub medium: usize,
    pub low: usize,
    pub info: usize,
}

impl SeverityCounts {
    /// Counts one finding of `severity`.
    pub fn add(&mut self, severity: Severity) {
        match severity {
            Severity::High => self.high += 1,
            Severity::Medium => self.medium += 1,
            Severity::Low => self.low += 1,
            Severity::Info => self.info += 1,
        }
    }
}
