//! What the explorer shows, derived once from the analysis when evidence arrives: per-node
//! state flags (for glyphs and problem navigation), search haystacks, and the verification
//! report when the background worker has finished.

use crate::analysis::Analysis;
use crate::analysis::chains::Role;
use crate::analysis::graph::NodeId;
use crate::analysis::lease::LeaseVerdict;
use crate::load::Corpus;
use crate::model::drift::DriftResult;
use crate::model::facts::{ActionFacts, StateDigest};
use crate::model::finding::{Finding, Severity};
use crate::verify::chain::ChainStatus;
use crate::verify::{AuthStatus, Report};
use rayon::prelude::*;
use std::sync::Arc;

/// Per-node state bits.
pub mod flag {
    pub const DENIED: u16 = 1;
    pub const DRIFT: u16 = 1 << 1;
    pub const LEASE_OUT: u16 = 1 << 2;
    pub const LEASED: u16 = 1 << 3;
    pub const INVALID: u16 = 1 << 4;
    pub const HIGH: u16 = 1 << 5;
    /// Follows a denied step and is itself allowed (from `analysis::chains` roles).
    pub const REAPPROVED: u16 = 1 << 6;
    /// Executed despite a deny (F-EXEC-AFTER-DENY).
    pub const EXEC_AFTER_DENY: u16 = 1 << 7;
    /// An outcome was recorded (success or failure).
    pub const EXECUTED: u16 = 1 << 8;
    pub const MISSING_PARENT: u16 = 1 << 9;
    /// The recorded outcome is a failure (failed/error status or a non-zero exit).
    pub const FAILED: u16 = 1 << 10;
    /// The flags that make a node a "problem" for `e`/`E`.
    pub const PROBLEM: u16 = DENIED | DRIFT | LEASE_OUT | INVALID | HIGH | EXEC_AFTER_DENY;
}

/// Loaded evidence and everything derived from it for display.
#[derive(Debug)]
pub struct Data {
    pub corpus: Arc<Corpus>,
    pub analysis: Arc<Analysis>,
    /// The verification report, once the background worker has finished.
    pub report: Option<Arc<Report>>,
    /// Every finding (the analysis's first; all once verified).
    pub findings: Vec<Finding>,
    pub flags: Vec<u16>,
    /// Lower-cased search text per node: action id, tool, resource, digests.
    pub haystacks: Arc<Haystacks>,
    /// Position of each node in its run's time order (for run/time ordering).
    pub rank: Vec<u32>,
    /// Findings per severity (high, medium, low + info), for the header.
    pub finding_counts: [usize; 3],
    /// Report summary line values, for the header (computed once).
    pub summary: Option<crate::verify::Summary>,
    /// Chain paths that are neither intact nor vacuous, named `file:line` of their first
    /// record (at most [`CHAIN_TROUBLE_SHOWN`]), and how many there are in all.
    pub chain_trouble: (Vec<String>, usize),
    /// Per record (flat index): the link-graph path it lies on (`u32::MAX`: none — a
    /// later copy of a duplicated record).
    pub path_of: Vec<u32>,
    /// The union of the flags of each run's, chain's and lease's actions.
    pub group_flags: GroupFlags,
    /// (node, index into `findings`) for every action a finding names, sorted by node.
    finding_index: Vec<(NodeId, u32)>,
}

/// How many troubled chain paths the header names.
pub const CHAIN_TROUBLE_SHOWN: usize = 2;

/// Flags of everything inside a navigator group (shown even when it is folded).
#[derive(Debug, Default)]
pub struct GroupFlags {
    pub runs: Vec<u16>,
    pub chains: Vec<u16>,
    pub leases: Vec<u16>,
}

impl GroupFlags {
    fn of(analysis: &Analysis, flags: &[u16]) -> GroupFlags {
        let union =
            |nodes: &mut dyn Iterator<Item = NodeId>| nodes.fold(0, |f, n| f | flags[n as usize]);
        GroupFlags {
            runs: analysis
                .graph
                .runs
                .iter()
                .map(|r| union(&mut r.nodes.iter().copied()))
                .collect(),
            chains: analysis
                .chains
                .iter()
                .map(|c| union(&mut c.steps.iter().map(|s| s.node)))
                .collect(),
            leases: analysis
                .leases
                .summaries
                .iter()
                .map(|l| union(&mut l.nodes.iter().copied()))
                .collect(),
        }
    }
}

/// Nodes whose flags and search text are made together on one core.
const HAY_BATCH: usize = 8192;

/// Every node's lower-cased search text, packed a batch of nodes to a string (a million
/// actions' texts in a hundred allocations, not a million): `hay[node]`.
#[derive(Debug, Default)]
pub struct Haystacks {
    /// Nodes `k * HAY_BATCH ..` in the k-th.
    batches: Vec<HayBatch>,
    len: usize,
}

/// The search texts of up to [`HAY_BATCH`] nodes.
#[derive(Debug, Default)]
struct HayBatch {
    text: String,
    /// Where each node's text ends in `text`.
    ends: Vec<u32>,
}

impl Haystacks {
    /// How many nodes there are.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True with no nodes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl HayBatch {
    /// Adds the next node's text (empty without facts): its id, tool, resource,
    /// arguments digest, lease and state digests, lower-cased, each followed by a space.
    fn push_node(&mut self, f: Option<&ActionFacts>) {
        let digests = f.and_then(|f| f.state_digest.as_deref());
        let parts = f.map(|f| {
            [
                f.id(),
                f.tool(),
                f.resource(),
                f.arguments_digest(),
                f.scope_lease_id(),
                digests.and_then(StateDigest::pre),
                digests.and_then(StateDigest::post),
            ]
        });
        for part in parts.into_iter().flatten().flatten() {
            if part.is_ascii() {
                let start = self.text.len();
                self.text.push_str(part);
                self.text[start..].make_ascii_lowercase();
            } else {
                self.text.push_str(&part.to_lowercase());
            }
            self.text.push(' ');
        }
        self.push_end();
    }

    fn push_end(&mut self) {
        // A batch's texts past 4 GiB are not a thing a store holds.
        self.ends
            .push(u32::try_from(self.text.len()).unwrap_or(u32::MAX));
    }
}

/// Haystacks of texts already lower-cased, one per node.
impl<S: AsRef<str>> FromIterator<S> for Haystacks {
    fn from_iter<I: IntoIterator<Item = S>>(texts: I) -> Haystacks {
        let mut hay = Haystacks::default();
        for text in texts {
            if hay.len.is_multiple_of(HAY_BATCH) {
                hay.batches.push(HayBatch::default());
            }
            if let Some(batch) = hay.batches.last_mut() {
                batch.text.push_str(text.as_ref());
                batch.push_end();
            }
            hay.len += 1;
        }
        hay
    }
}

impl std::ops::Index<usize> for Haystacks {
    type Output = str;

    fn index(&self, node: usize) -> &str {
        let batch = &self.batches[node / HAY_BATCH];
        let i = node % HAY_BATCH;
        let start = if i == 0 {
            0
        } else {
            batch.ends[i - 1] as usize
        };
        batch.text.get(start..batch.ends[i] as usize).unwrap_or("")
    }
}

/// The timeline flags of `node` (its facts `f`) the analysis alone decides.
fn node_flags(analysis: &Analysis, node: NodeId, f: &ActionFacts) -> u16 {
    let g = &analysis.graph;
    let mut bits = 0;
    if f.outcome() == Some("deny") {
        bits |= flag::DENIED;
    }
    if f.drift == DriftResult::Drifted {
        bits |= flag::DRIFT;
    }
    if let Some(l) = analysis.leases.by_node.get(&node) {
        bits |= flag::LEASED;
        if l.verdict.is_outside() && l.verdict != LeaseVerdict::UnknownWindow {
            bits |= flag::LEASE_OUT;
        }
    }
    if matches!(f.observed, Some("success" | "failure")) {
        bits |= flag::EXECUTED;
    }
    if f.observed == Some("failure") {
        bits |= flag::FAILED;
    }
    if f.parent().is_some() && g.nodes[node as usize].parent.is_none() {
        bits |= flag::MISSING_PARENT;
    }
    bits
}

impl Data {
    /// Derives display data from an analysed corpus (no verification yet).
    pub fn new(corpus: Arc<Corpus>, analysis: Arc<Analysis>, findings: Vec<Finding>) -> Data {
        let g = &analysis.graph;
        let n = g.nodes.len();
        // A batch of nodes at a time on every core: each node's flags and search text.
        let batches: Vec<(Vec<u16>, HayBatch)> = (0..n.div_ceil(HAY_BATCH))
            .into_par_iter()
            .map(|b| {
                let nodes = (b * HAY_BATCH) as NodeId..((b + 1) * HAY_BATCH).min(n) as NodeId;
                let mut hay = HayBatch::default();
                let bits = nodes
                    .map(|node| {
                        let f = g.facts(&corpus, node);
                        hay.push_node(f);
                        f.map_or(0, |f| node_flags(&analysis, node, f))
                    })
                    .collect();
                (bits, hay)
            })
            .collect();
        let mut flags = Vec::with_capacity(n);
        let mut haystacks = Haystacks {
            batches: Vec::with_capacity(batches.len()),
            len: n,
        };
        for (bits, hay) in batches {
            flags.extend(bits);
            haystacks.batches.push(hay);
        }
        for chain in &analysis.chains {
            for (node, role) in chain.roles() {
                if role == Role::Reapproved {
                    flags[node as usize] |= flag::REAPPROVED;
                }
            }
        }
        let mut rank = vec![0u32; n];
        for run in &g.runs {
            for (i, node) in run.nodes.iter().enumerate() {
                rank[*node as usize] = i as u32;
            }
        }
        let mut data = Data {
            corpus,
            analysis,
            report: None,
            findings: Vec::new(),
            flags,
            haystacks: Arc::new(haystacks),
            rank,
            finding_counts: [0; 3],
            summary: None,
            chain_trouble: (Vec::new(), 0),
            path_of: Vec::new(),
            group_flags: GroupFlags::default(),
            finding_index: Vec::new(),
        };
        data.set_findings(findings);
        data
    }

    /// Loads, analyses and verifies synchronously (what the background worker does, for
    /// tests and benchmarks).
    pub fn open(
        corpus: Corpus,
        keys: &crate::verify::Keyring,
        leases: &crate::analysis::lease::SuppliedLeases,
    ) -> Data {
        let corpus = Arc::new(corpus);
        let analysis = Arc::new(Analysis::build(&corpus, leases));
        let report = crate::verify::verify_inputs(
            &corpus.inputs,
            keys,
            &crate::verify::Options::default(),
            None,
        );
        let (report, findings) = crate::analysis::evidence::complete(&corpus, &analysis, report);
        let mut data = Data::new(corpus, analysis, Vec::new());
        data.set_report(Arc::new(report), findings);
        data
    }

    /// Replaces the findings (marking nodes with a high finding).
    pub fn set_findings(&mut self, findings: Vec<Finding>) {
        for f in findings.iter().filter(|f| f.severity == Severity::High) {
            let exec_after_deny = f.id == "F-EXEC-AFTER-DENY";
            for node in self.nodes_of(f) {
                self.flags[node as usize] |= flag::HIGH;
                if exec_after_deny {
                    self.flags[node as usize] |= flag::EXEC_AFTER_DENY;
                }
            }
        }
        self.group_flags = GroupFlags::of(&self.analysis, &self.flags);
        self.finding_index = findings
            .iter()
            .enumerate()
            .flat_map(|(i, f)| self.nodes_of(f).into_iter().map(move |n| (n, i as u32)))
            .collect();
        self.finding_index.sort_unstable();
        self.finding_counts = [0; 3];
        for f in &findings {
            let i = match f.severity {
                Severity::High => 0,
                Severity::Medium => 1,
                _ => 2,
            };
            self.finding_counts[i] += 1;
        }
        self.findings = findings;
    }

    /// The findings that name an action.
    pub fn findings_of(&self, node: NodeId) -> impl Iterator<Item = &Finding> {
        crate::analysis::graph::indices_of(&self.finding_index, node).map(|i| &self.findings[i])
    }

    /// Records the verification report: nodes whose record failed authenticity are marked.
    pub fn set_report(&mut self, report: Arc<Report>, findings: Vec<Finding>) {
        let g = &self.analysis.graph;
        for (node, n) in g.nodes.iter().enumerate() {
            let status = report
                .records
                .get(n.record as usize)
                .and_then(|r| r.authenticity.status);
            if matches!(status, Some(s) if !matches!(s, AuthStatus::Valid | AuthStatus::Unsigned)) {
                self.flags[node] |= flag::INVALID;
            }
        }
        self.summary = Some(report.summary());
        let bad: Vec<_> = report
            .links
            .paths
            .iter()
            .filter(|p| !matches!(p.status, ChainStatus::Intact | ChainStatus::NotPresent))
            .collect();
        let named = bad
            .iter()
            .take(CHAIN_TROUBLE_SHOWN)
            .filter_map(|p| p.records.first())
            .map(super::super::verify::links::RecordAt::short)
            .collect();
        self.chain_trouble = (named, bad.len());
        self.path_of = vec![u32::MAX; report.records.len()];
        for (i, p) in report.links.paths.iter().enumerate() {
            for &m in &p.members {
                if self.path_of[m] == u32::MAX {
                    self.path_of[m] = i as u32;
                }
            }
        }
        self.report = Some(report);
        self.set_findings(findings);
    }

    /// The nodes a finding names.
    pub fn nodes_of(&self, f: &Finding) -> Vec<NodeId> {
        let g = &self.analysis.graph;
        let Some(run) = f.run_id.as_deref() else {
            return Vec::new();
        };
        f.action_ids
            .iter()
            .filter_map(|id| g.find(run, id))
            .collect()
    }

    /// The run index of a node.
    pub fn run_of(&self, node: NodeId) -> usize {
        self.analysis.graph.nodes[node as usize].run as usize
    }
}

/// The glyphs of a node's state, in a fixed order (readable without colour).
pub fn glyphs(bits: u16) -> String {
    let mut s = String::new();
    for (bit, g) in [
        (flag::DENIED, '⊘'),
        (flag::EXEC_AFTER_DENY, '‼'),
        (flag::REAPPROVED, '↻'),
        (flag::DRIFT, '≠'),
        (flag::LEASED, '⧗'),
        (flag::LEASE_OUT, '⌛'),
        (flag::INVALID, '✗'),
        (flag::HIGH, '▲'),
        (flag::MISSING_PARENT, '?'),
    ] {
        if bits & bit != 0 {
            s.push(g);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each node's text reads back from the packed haystacks, empty ones included.
    #[test]
    fn packed_haystacks_give_each_nodes_text() {
        let texts: Vec<String> = (0..HAY_BATCH * 2 + 3)
            .map(|i| match i % 4 {
                0 => format!("act-{i} write_file "),
                1 => String::new(),
                2 => "ünïcode é ".into(),
                _ => "x ".into(),
            })
            .collect();
        let hay: Haystacks = texts.iter().collect();
        assert_eq!(hay.len(), texts.len());
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(&hay[i], *t);
        }
        assert!(Haystacks::default().is_empty());
    }
}
