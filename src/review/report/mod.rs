//! The incident report a review hands over: what was verified and how, the reviewer's
//! marks and notes first (each with its action's three answers), what was found (grouped
//! by finding id, each with where it is and its fingerprint), the three answers for every
//! action a high finding names, denied→re-approved chains and chain paths, and how to
//! reproduce it. One document ([`IncidentReport`]) written as JSON (versioned,
//! `schema/report.schema.json`, by the CLI), Markdown, self-contained HTML, SARIF 2.1.0
//! or JUnit XML.

pub mod graph;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod sarif;

use super::file::KeyRef;
use super::file::Review;
use super::marks::{Place, Target, Verdict};
use crate::analysis::ActionReport;
use crate::analysis::chains::{Chain, ChainKind};
use crate::analysis::evidence::EvidenceRef;
use crate::analysis::graph::NodeId;
use crate::model::finding::{Finding, Severity, describe};
use crate::model::text::{sanitize, value_line};
use crate::verify::links::ChainPath;
use crate::verify::siblings::EvidenceLink;
use crate::verify::verdict::RecordVerdict;
use crate::verify::{InputOut, Summary};
use serde::Serialize;

/// The formats a report is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// GitHub-flavoured Markdown.
    Md,
    /// One self-contained HTML file: no scripts, no requests, inline SVG, printable.
    Html,
    /// The versioned JSON document (schema/report.schema.json).
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// JUnit XML.
    Junit,
}

impl Format {
    /// Every format, in the order offered.
    pub const ALL: [Format; 5] = [
        Format::Md,
        Format::Html,
        Format::Json,
        Format::Sarif,
        Format::Junit,
    ];

    /// Its name on the command line (`--format NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Md => "md",
            Format::Html => "html",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Junit => "junit",
        }
    }

    /// The file extension of a report in it.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Md => "md",
            Format::Html => "html",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Junit => "xml",
        }
    }
}

/// `report` written in `format`.
pub fn render(format: Format, report: &IncidentReport<'_>, ev: EvidenceRef<'_>) -> String {
    match format {
        Format::Json => crate::model::contract::document("report", report),
        Format::Md => markdown::render(report, ev),
        Format::Html => html::render(report, ev),
        Format::Sarif => sarif::render(report, ev),
        Format::Junit => junit::render(report, ev.report),
    }
}

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
    /// The reviewer's marks and notes (absent: no review given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewOut<'a>>,
    /// The explorer's filter the report was made under (absent: the whole evidence).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Findings grouped by id, most severe first.
    pub findings: Vec<FindingGroup<'a>>,
    /// The three answers for each action a high finding names (at most [`ACTIONS_SHOWN`]).
    pub actions: Vec<ActionReport<'a>>,
    /// How many actions high findings name in all.
    pub actions_named: usize,
    /// Denied→re-approved chains.
    pub chains: Vec<&'a Chain>,
    pub chain_paths: &'a [ChainPath],
    /// The evidence beside the runs' records (aep-fields §16): checkpoints, forks, memory
    /// ops, replay attestations, events, seeds — each with its verdict and what it names.
    pub other_evidence: Vec<SiblingOut<'a>>,
    /// The agent's telemetry joined to the evidence (`--traces`): each traced run's
    /// capture state (`Capture::summary`); absent when no telemetry was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<serde_json::Value>,
    /// The same, one line a traced run and one for the telemetry (text formats).
    #[serde(skip)]
    pub capture_lines: Vec<String>,
}

/// One record of a sibling evidence type, as reported.
#[derive(Serialize)]
pub struct SiblingOut<'a> {
    pub kind: &'static str,
    pub verdict: RecordVerdict,
    pub links: &'a [EvidenceLink],
}

/// The reviewer's marks, most decisive verdict first.
#[derive(Serialize)]
pub struct ReviewOut<'a> {
    /// The review file, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub marks: Vec<MarkOut<'a>>,
}

/// One mark as reported: what it points at, the verdict and note, whether the evidence
/// still holds it unchanged, and the three answers when it is an action.
#[derive(Serialize)]
pub struct MarkOut<'a> {
    pub target: &'a Target,
    pub label: String,
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub note: &'a str,
    /// `current`, `changed` (the record's canonical bytes differ) or `gone`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<&'static str>,
    pub created_at: &'a str,
    pub updated_at: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<ActionReport<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<&'a Finding>,
    /// `file:line` of a marked record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// A marked record's verdict in short.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record_verdict: Option<RecordVerdict>,
}

/// A report limited to the actions a filter expression matches (`--where`, the
/// explorer's filter): what it shows of the evidence and what it leaves out.
#[derive(Clone, Debug, Serialize)]
pub struct Scope {
    pub filter: String,
    /// The name the filter is saved under in the review, when it is a saved one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved_as: Option<String>,
    /// Actions the filter matches, of all the evidence's actions.
    pub actions_shown: usize,
    pub actions: usize,
    /// Findings left out: none of the actions they name passes the filter.
    pub findings_left_out: usize,
    /// Those findings per severity.
    pub left_out: crate::verify::SeverityCounts,
}

impl Scope {
    /// One sentence: `only the actions the filter `…` matches: 2 of 9 actions shown;
    /// 5 findings left out (5 high, 0 medium, 0 low, 0 info)`.
    pub fn sentence(&self) -> String {
        let saved = (self.saved_as.as_deref())
            .map(|n| format!(" (saved as {n})"))
            .unwrap_or_default();
        let l = &self.left_out;
        format!(
            "only the actions the filter {}{saved} matches: {} of {} actions shown; {} finding{} on other actions left out ({} high, {} medium, {} low, {} info)",
            self.filter,
            self.actions_shown,
            self.actions,
            self.findings_left_out,
            if self.findings_left_out == 1 { "" } else { "s" },
            l.high,
            l.medium,
            l.low,
            l.info
        )
    }
}

/// How the evidence was verified, and what could not be.
#[derive(Serialize)]
pub struct Verification {
    pub profile: &'static str,
    pub ed25519: &'static str,
    /// The trusted keys, each with the SHA-256 of its 32 public-key bytes.
    pub keys: Vec<KeyRef>,
    /// Key ids records were signed under that no trusted key covers.
    pub unknown_keys: Vec<String>,
    /// Records whose signature was not checked, by reason.
    pub not_checked: Vec<Unchecked>,
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
    /// The report of opened evidence, verified under `keys`; with a review, its marks
    /// come first; with a scope, only findings naming an action `passes` lets through.
    pub fn of(
        ev: EvidenceRef<'a>,
        keys: &crate::verify::Keyring,
        command: String,
        review: Option<(&'a Review, Option<String>)>,
        scope: Option<&(String, &dyn Fn(NodeId) -> bool)>,
    ) -> Self {
        let report = ev.report;
        let g = &ev.analysis.graph;
        let in_scope = |f: &Finding| -> bool {
            scope.is_none_or(|(_, passes)| g.names_passing(ev.corpus, f, *passes))
        };
        let kept: Vec<&'a Finding> = ev.findings.iter().filter(|f| in_scope(f)).collect();
        let saved_as = (scope.zip(review.as_ref()))
            .and_then(|((filter, _), (r, _))| r.filter_named(filter))
            .map(|f| f.name.clone());
        let mut groups: Vec<FindingGroup<'a>> = Vec::new();
        for f in &kept {
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
        let mut named: Vec<u32> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for f in kept.iter().filter(|f| f.severity == Severity::High) {
            // The actions in the finding's run (each emitter chain's it names); only a
            // finding with no run looks wider, and only when the id names one action.
            let nodes = match f.run_id {
                Some(_) => g.named_by(ev.corpus, f),
                None => (f.action_ids.iter())
                    .filter_map(|id| match g.find_all(ev.corpus, id).as_slice() {
                        [one] => Some(*one),
                        _ => None,
                    })
                    .collect(),
            };
            for n in nodes {
                if scope.is_none_or(|(_, passes)| passes(n)) && seen.insert(n) {
                    named.push(n);
                }
            }
        }
        let actions = named
            .iter()
            .take(ACTIONS_SHOWN)
            .filter_map(|n| {
                ev.analysis
                    .show(ev.corpus, *n, ev.findings, Some(&ev.report.records))
            })
            .collect();
        IncidentReport {
            tool: "aeplens",
            version: env!("CARGO_PKG_VERSION"),
            command,
            inputs: &report.inputs,
            verification: verification(report, keys),
            summary: report.summary_with(ev.findings),
            review: review.map(|(r, file)| ReviewOut {
                file,
                marks: marks(ev, r),
            }),
            scope: scope.map(|(filter, passes)| {
                let actions: Vec<NodeId> = (0..g.nodes.len() as NodeId)
                    .filter(|&n| g.facts(ev.corpus, n).is_some())
                    .collect();
                let mut left_out = crate::verify::SeverityCounts::default();
                for f in ev.findings.iter().filter(|f| !in_scope(f)) {
                    left_out.add(f.severity);
                }
                Scope {
                    filter: filter.clone(),
                    saved_as: saved_as.clone(),
                    actions_shown: actions.iter().filter(|&&n| passes(n)).count(),
                    actions: actions.len(),
                    findings_left_out: ev.findings.len() - kept.len(),
                    left_out,
                }
            }),
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
            other_evidence: (report.records.iter())
                .filter(|r| !r.kind.is_record())
                .map(|r| SiblingOut {
                    kind: r.kind.name(),
                    verdict: RecordVerdict::of(r),
                    links: &r.links,
                })
                .collect(),
            capture: ev.capture.map(crate::analysis::capture::Capture::summary),
            capture_lines: (ev.capture)
                .map(crate::analysis::capture::Capture::run_lines)
                .unwrap_or_default(),
        }
    }
}

/// The marks of a review, resolved against the evidence: root causes first, then
/// suspicious, follow-up and benign; within a verdict, in the order they were made.
fn marks<'a>(ev: EvidenceRef<'a>, review: &'a Review) -> Vec<MarkOut<'a>> {
    let mut out: Vec<MarkOut<'a>> = review
        .marks
        .iter()
        .map(|m| {
            let place = m.target.place(ev.corpus, ev.analysis, ev.findings);
            MarkOut {
                target: &m.target,
                label: m.target.label(),
                verdict: m.verdict,
                note: &m.note,
                status: place.status(),
                warning: place.warning(),
                created_at: &m.created_at,
                updated_at: &m.updated_at,
                action: place.node().and_then(|n| {
                    ev.analysis
                        .show(ev.corpus, n, ev.findings, Some(&ev.report.records))
                }),
                finding: match place {
                    Place::Finding(i) => ev.findings.get(i),
                    _ => None,
                },
                record: match place {
                    Place::Record(r) => {
                        let s = &ev.corpus.record(r).source;
                        Some(format!("{}:{}", s.path, s.line))
                    }
                    _ => None,
                },
                record_verdict: match place {
                    Place::Record(r) => ev.report.records.get(r).map(RecordVerdict::of),
                    _ => None,
                },
            }
        })
        .collect();
    out.sort_by_key(|m| m.verdict.weight());
    out
}

/// Counts by status as `N status` phrases (`3 intact`), the statuses counted at least once.
pub fn counts(by_status: &std::collections::BTreeMap<&'static str, usize>) -> Vec<String> {
    (by_status.iter().filter(|(_, v)| **v > 0))
        .map(|(k, v)| format!("{v} {k}"))
        .collect()
}

fn verification(report: &crate::verify::Report, keys: &crate::verify::Keyring) -> Verification {
    use std::collections::BTreeMap;
    let mut unknown = std::collections::BTreeSet::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for r in &report.records {
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
        ed25519: crate::verify::signature::Ed25519Rules::Strict.name(),
        keys: KeyRef::all(keys),
        unknown_keys: unknown.into_iter().collect(),
        not_checked: reasons
            .into_iter()
            .map(|(reason, records)| Unchecked { reason, records })
            .collect(),
    }
}

/// One action's answers as plain text (controls escaped; markup is each renderer's to
/// escape): what the Markdown and HTML reports print for it.
#[derive(Serialize)]
pub struct Answers {
    /// `act-003 · run r-1 · incident.ndjson:4`.
    pub title: String,
    /// Its record's verdict in short (`✓ valid (key k1) · chain intact · …`), or that it
    /// was not verified.
    pub record: String,
    /// The emitter chain it is on (`incident.ndjson:1 (genesis; signed by k1)`).
    pub chain: String,
    pub available: Vec<FieldText>,
    pub exercised: Vec<FieldText>,
    pub changed: Vec<ChangeText>,
    pub drift: String,
    pub lease: String,
    pub digests: Vec<String>,
    /// `high F-…: message`.
    pub findings: Vec<String>,
}

/// A recorded authority field.
#[derive(Serialize)]
pub struct FieldText {
    pub name: &'static str,
    pub value: String,
    pub dialect: &'static str,
}

/// What changed between approval and execution, for one aspect.
#[derive(Serialize)]
pub struct ChangeText {
    pub what: &'static str,
    /// `changed`, `unchanged`, or another `ChangeStatus` name (not comparable, …).
    pub status: &'static str,
    pub summary: String,
}

impl Answers {
    /// The answers of one action.
    pub fn of(act: &ActionReport) -> Answers {
        use crate::model::time::format_ms;
        let recorded = |fields: &[crate::analysis::authority::Field]| -> Vec<FieldText> {
            fields
                .iter()
                .filter_map(|f| {
                    Some(FieldText {
                        name: f.name,
                        value: value_line(f.name, f.value?),
                        dialect: f.dialect,
                    })
                })
                .collect()
        };
        let d = &act.drift;
        let none = |v: Option<&str>, empty: &str| sanitize(v.unwrap_or(empty)).into_owned();
        let drift = format!(
            "{} ({}) · approved {} · observed {} · bound to {} ({})",
            d.result.name(),
            d.dialect.unwrap_or("no evidence"),
            none(d.approved_digest, "not recorded"),
            none(d.observed_digest, "not recorded"),
            none(d.bound_to, "nothing"),
            d.binding.name(),
        );
        let t = |v: Option<f64>| v.map_or_else(|| "unknown".into(), format_ms);
        let lease = match act.lease {
            None => "not under a lease (no scope_lease_id)".to_string(),
            Some(l) => format!(
                "{} · {} window [{} → {}) · executed {} · {}",
                sanitize(&l.lease_id),
                l.source.name(),
                t(l.granted_at_ms),
                t(l.expires_at_ms),
                t(l.executed_at_ms),
                l.verdict.name()
            ),
        };
        let digests = act
            .digests
            .iter()
            .map(|dv| {
                let c = &dv.comparability;
                let why = c
                    .why()
                    .map(|w| format!(": {}", sanitize(w)))
                    .unwrap_or_default();
                format!(
                    "{} {} ({}) · {}{why}",
                    dv.which,
                    value_line("digest", dv.digest),
                    sanitize(dv.kind.unwrap_or("no kind")),
                    c.state.name()
                )
            })
            .collect();
        Answers {
            title: format!(
                "{} · run {} · {}",
                sanitize(act.action_id.unwrap_or("(no action_id)")),
                sanitize(act.run_id),
                sanitize(&act.source.to_string())
            ),
            record: (act.verdict.as_ref())
                .map_or_else(|| "not verified".to_string(), RecordVerdict::short),
            chain: sanitize(&act.chain.to_string()).into_owned(),
            available: recorded(&act.authority.available()),
            exercised: recorded(&act.authority.exercised()),
            changed: act
                .authority
                .changed
                .iter()
                .map(|c| ChangeText {
                    what: c.what,
                    status: c.status.name(),
                    summary: sanitize(&c.summary.to_string()).into_owned(),
                })
                .collect(),
            drift,
            lease,
            digests,
            findings: act
                .findings
                .iter()
                .map(|f| format!("{} {}: {}", f.severity.name(), f.id, sanitize(&f.message)))
                .collect(),
        }
    }
}
