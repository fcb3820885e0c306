//! `aeplens report`: the incident report a review hands over — what was verified and how,
//! what was found (grouped by finding id, each with where it is and its fingerprint), the
//! three answers for every action a high finding names, denied→re-approved chains and
//! chain paths, and how to reproduce it. One document ([`IncidentReport`]) written as JSON
//! (versioned, `schema/report.schema.json`), Markdown, SARIF 2.1.0 or JUnit XML.

mod junit;
mod markdown;
mod sarif;

use super::contract::document;
use super::report::{emit, open};
use super::{ReportArgs, ReportFormat};
use crate::analysis::ActionReport;
use crate::analysis::chains::{Chain, ChainKind};
use crate::analysis::evidence::Evidence;
use crate::model::finding::{Finding, Severity, describe};
use crate::model::text::sanitize;
use crate::verify::links::ChainPath;
use crate::verify::{InputOut, Summary};
use serde::Serialize;

/// How many actions named by high findings get their three answers in full.
pub const ACTIONS_SHOWN: usize = 25;

/// Everything a report says, in the order it says it.
#[derive(Serialize)]
pub struct IncidentReport<'a> {
    pub tool: &'static str,
    pub version: &'static str,
    /// The command that produced it (escaped), to reproduce it.
    pub command: String,
    pub inputs: &'a [InputOut],
    pub verification: Verification,
    pub summary: Summary,
    /// Findings grouped by id, most severe first.
    pub findings: Vec<FindingGroup<'a>>,
    /// The three answers for each action a high finding names (at most [`ACTIONS_SHOWN`]).
    pub actions: Vec<ActionReport<'a>>,
    /// How many actions high findings name in all.
    pub actions_named: usize,
    /// Denied→re-approved chains.
    pub chains: Vec<&'a Chain>,
    pub chain_paths: &'a [ChainPath],
}

/// How the evidence was verified, and what could not be.
#[derive(Serialize)]
pub struct Verification {
    pub profile: &'static str,
    pub ed25519: &'static str,
    /// The trusted keys, each with the SHA-256 of its 32 public-key bytes.
    pub keys: Vec<KeyEntry>,
    /// Key ids records were signed under that no trusted key covers.
    pub unknown_keys: Vec<String>,
    /// Records whose signature was not checked, by reason.
    pub not_checked: Vec<Unchecked>,
}

/// A trusted key.
#[derive(Serialize)]
pub struct KeyEntry {
    pub key_id: String,
    pub fingerprint: String,
}

/// Records not checked for one reason.
#[derive(Serialize)]
pub struct Unchecked {
    pub reason: String,
    pub records: usize,
}

/// Every finding of one id.
#[derive(Serialize)]
pub struct FindingGroup<'a> {
    pub id: &'static str,
    pub severity: Severity,
    pub description: &'static str,
    pub count: usize,
    pub findings: Vec<&'a Finding>,
}

impl<'a> IncidentReport<'a> {
    /// The report of opened evidence, verified under `keys`.
    pub fn of(ev: &'a Evidence, keys: &crate::verify::Keyring, command: String) -> Self {
        let report = &ev.report;
        let mut groups: Vec<FindingGroup<'a>> = Vec::new();
        for f in &ev.findings {
            match groups.iter_mut().find(|g| g.id == f.id) {
                Some(g) => {
                    g.count += 1;
                    g.severity = g.severity.min(f.severity);
                    g.findings.push(f);
                }
                None => groups.push(FindingGroup {
                    id: f.id,
                    severity: f.severity,
                    description: describe(f.id).unwrap_or(""),
                    count: 1,
                    findings: vec![f],
                }),
            }
        }
        groups.sort_by(|a, b| a.severity.cmp(&b.severity).then(b.count.cmp(&a.count)));
        let g = &ev.analysis.graph;
        let mut named: Vec<u32> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for f in ev.findings.iter().filter(|f| f.severity == Severity::High) {
            for id in &f.action_ids {
                // The action in the finding's run; only a finding with no run looks
                // wider, and only when the id names one action.
                let node = match f.run_id.as_deref() {
                    Some(run) => g.find(run, id),
                    None => match g.find_all(id).as_slice() {
                        [one] => Some(*one),
                        _ => None,
                    },
                };
                if let Some(n) = node
                    && seen.insert(n)
                {
                    named.push(n);
                }
            }
        }
        let actions = named
            .iter()
            .take(ACTIONS_SHOWN)
            .filter_map(|n| ev.analysis.show(&ev.corpus, *n, &ev.findings))
            .collect();
        IncidentReport {
            tool: "aeplens",
            version: env!("CARGO_PKG_VERSION"),
            command,
            inputs: &report.inputs,
            verification: verification(ev, keys),
            summary: super::check::summary(report, &ev.findings),
            findings: groups,
            actions,
            actions_named: named.len(),
            chains: ev
                .analysis
                .chains
                .iter()
                .filter(|c| c.kind == ChainKind::DenyReapproval)
                .collect(),
            chain_paths: &report.links.paths,
        }
    }
}

fn verification(ev: &Evidence, keys: &crate::verify::Keyring) -> Verification {
    use std::collections::BTreeMap;
    let mut unknown = std::collections::BTreeSet::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for r in &ev.report.records {
        let a = &r.authenticity;
        if a.key_unknown
            && let Some(k) = &a.key_id
        {
            unknown.insert(k.clone());
        }
        if !a.evaluated {
            let reason = a.reason.clone().unwrap_or_else(|| "not evaluated".into());
            *reasons.entry(reason).or_default() += 1;
        }
    }
    Verification {
        profile: "forensic",
        ed25519: "strict",
        keys: keys
            .iter()
            .map(|(id, k)| KeyEntry {
                key_id: id.to_string(),
                fingerprint: format!("sha256:{}", crate::canon::sha256_hex(k.as_bytes())),
            })
            .collect(),
        unknown_keys: unknown.into_iter().collect(),
        not_checked: reasons
            .into_iter()
            .map(|(reason, records)| Unchecked { reason, records })
            .collect(),
    }
}

/// The command line that ran, each argument escaped and quoted when it needs to be.
fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, a)| {
            let a = if i == 0 {
                "aeplens".to_string()
            } else {
                sanitize(&a).into_owned()
            };
            if a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `aeplens report`.
pub fn run(args: &ReportArgs) -> i32 {
    if let Some(out) = &args.output
        && super::export::is_evidence(&args.evidence.paths, out)
    {
        eprintln!(
            "aeplens: refusing to write {}: it is one of the evidence files (aeplens never writes evidence)",
            sanitize(out)
        );
        return 2;
    }
    let keys = match args.evidence.keys.keyring() {
        Ok(k) => k,
        Err(e) => {
            eprintln!("aeplens: {e}");
            return 2;
        }
    };
    let ev = match open(&args.evidence) {
        Ok(ev) => ev,
        Err(code) => return code,
    };
    if ev.report.records.is_empty() {
        eprintln!("aeplens: nothing to report: no evidence file with a record");
        return super::check::EXIT_NOTHING_TO_VERIFY;
    }
    let report = IncidentReport::of(&ev, &keys, command_line());
    let text = match args.format {
        ReportFormat::Json => document("report", &report),
        ReportFormat::Md => markdown::render(&report),
        ReportFormat::Sarif => sarif::render(&report),
        ReportFormat::Junit => junit::render(&report, &ev),
    };
    let code = match &args.output {
        None => emit(&text),
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("aeplens: cannot write {}: {e}", sanitize(path));
                2
            }
        },
    };
    let gate = args
        .fail_on
        .is_some_and(|s| ev.findings.iter().any(|f| f.severity <= s.severity()));
    if code == 0 && gate { 1 } else { code }
}
