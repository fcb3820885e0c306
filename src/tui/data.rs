//! What the explorer shows, derived once from the analysis when evidence arrives: per-node
//! state flags (for glyphs and problem navigation), the search text (made from the facts
//! when read), and the verification report when the background worker has finished.

use crate::analysis::Analysis;
use crate::analysis::chains::Role;
use crate::analysis::graph::NodeId;
use crate::analysis::lease::LeaseVerdict;
use crate::load::Corpus;
use crate::model::drift::DriftResult;
use crate::model::facts::{ActionFacts, ArgumentsDigest, StateDigest};
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
    /// The agent's telemetry joined to the evidence (`--traces`), once verified.
    pub capture: Option<Arc<crate::analysis::capture::Capture>>,
    /// Every finding (the analysis's first; all once verified).
    pub findings: Vec<Finding>,
    pub flags: Vec<u16>,
    /// Position of each node in its run's time order (for run/time ordering).
    pub rank: Vec<u32>,
    /// Findings per severity (high, medium, low, info), for the header.
    pub finding_counts: [usize; 4],
    /// Report summary line values, for the header (computed once).
    pub summary: Option<crate::verify::Summary>,
    /// Chain paths that are neither intact nor vacuous, named `file:line` of their first
    /// record (at most [`CHAIN_TROUBLE_SHOWN`]), and how many there are in all.
    pub chain_trouble: (Vec<String>, usize),
    /// Fork points (records two records claim as their predecessor), named `file:line`
    /// (at most [`CHAIN_TROUBLE_SHOWN`]), and how many there are in all.
    pub forks: (Vec<String>, usize),
    /// Intact chain paths that do not go through a fork (what the header counts as ✓).
    pub intact_unforked: usize,
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
    /// Each chain's actions one after another (chain `i`'s from `chain_starts[i]` to
    /// `chain_starts[i + 1]`): read by the navigator's filter without the chains' steps.
    chain_nodes: Vec<NodeId>,
    chain_starts: Vec<u32>,
}

impl GroupFlags {
    fn of(analysis: &Analysis, flags: &[u16]) -> GroupFlags {
        let union =
            |nodes: &mut dyn Iterator<Item = NodeId>| nodes.fold(0, |f, n| f | flags[n as usize]);
        let mut out = GroupFlags {
            runs: (analysis.graph.runs.iter())
                .map(|r| union(&mut r.nodes.iter().copied()))
                .collect(),
            chains: Vec::new(),
            leases: (analysis.leases.summaries.iter())
                .map(|l| union(&mut l.nodes.iter().copied()))
                .collect(),
            chain_nodes: (analysis.chains.iter())
                .flat_map(|c| c.steps.iter().map(|s| s.node))
                .collect(),
            chain_starts: std::iter::once(0)
                .chain(analysis.chains.iter().scan(0u32, |at, c| {
                    *at += c.steps.len() as u32;
                    Some(*at)
                }))
                .collect(),
        };
        out.chains = (0..analysis.chains.len())
            .map(|i| union(&mut out.chain_nodes(i).iter().copied()))
            .collect();
        out
    }

    /// The actions of chain `i`, in its order.
    pub fn chain_nodes(&self, i: usize) -> &[NodeId] {
        let at = |i: usize| self.chain_starts.get(i).map_or(0, |a| *a as usize);
        self.chain_nodes.get(at(i)..at(i + 1)).unwrap_or(&[])
    }
}

/// Every node's lower-cased search text — action id, tool, resource, arguments digest,
/// lease and state digests — made from its facts when a search or filter reads it: held,
/// the texts of a million actions took 120 MB for the whole session.
#[derive(Clone, Debug)]
pub struct Haystacks {
    corpus: Arc<Corpus>,
    analysis: Arc<Analysis>,
}

impl Haystacks {
    /// How many nodes there are.
    pub fn len(&self) -> usize {
        self.analysis.graph.nodes.len()
    }

    /// True with no nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `node`'s text to `buf`: its words lower-cased, each followed by a space
    /// (nothing for a node without facts).
    pub fn write(&self, node: NodeId, buf: &mut String) {
        if let Some(f) = self.analysis.graph.facts(&self.corpus, node) {
            write_facts(f, buf);
        }
    }
}

/// Appends the searched words of one action's facts to `buf` (lower-cased, each followed
/// by a space): its id, tool, resource, arguments digest, lease and state digests.
pub fn write_facts(f: &ActionFacts, buf: &mut String) {
    let digests = f.state_digest.as_deref();
    for word in [f.id(), f.tool(), f.resource()].into_iter().flatten() {
        push_word(buf, word);
    }
    match f.arguments_digest() {
        Some(ArgumentsDigest::Text(text)) => push_word(buf, text),
        // `sha256:` and lower-case hex already.
        Some(packed) => {
            packed.push_to(buf);
            buf.push(' ');
        }
        None => {}
    }
    let rest = [
        f.scope_lease_id(),
        digests.and_then(StateDigest::pre),
        digests.and_then(StateDigest::post),
    ];
    for word in rest.into_iter().flatten() {
        push_word(buf, word);
    }
}

/// Appends `word` to `buf` lower-cased, and a space.
fn push_word(buf: &mut String, word: &str) {
    if word.is_ascii() {
        let start = buf.len();
        buf.push_str(word);
        buf[start..].make_ascii_lowercase();
    } else {
        buf.push_str(&word.to_lowercase());
    }
    buf.push(' ');
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
    if matches!(f.observed(), Some("success" | "failure")) {
        bits |= flag::EXECUTED;
    }
    if f.observed() == Some("failure") {
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
        let mut flags: Vec<u16> = (0..n as NodeId)
            .into_par_iter()
            .map(|node| {
                g.facts(&corpus, node)
                    .map_or(0, |f| node_flags(&analysis, node, f))
            })
            .collect();
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
            capture: None,
            findings: Vec::new(),
            flags,
            rank,
            finding_counts: [0; 4],
            summary: None,
            chain_trouble: (Vec::new(), 0),
            forks: (Vec::new(), 0),
            intact_unforked: 0,
            path_of: Vec::new(),
            group_flags: GroupFlags::default(),
            finding_index: Vec::new(),
        };
        data.set_findings(findings);
        data
    }

    /// The data of evidence opened whole ([`crate::open::open`] or
    /// [`crate::open::open_corpus`]), at once: what the background worker sends in
    /// stages, for tests and benchmarks.
    pub fn of(ev: crate::analysis::evidence::Evidence) -> Data {
        let mut data = Data::new(Arc::new(ev.corpus), Arc::new(ev.analysis), Vec::new());
        data.set_report(Arc::new(ev.report), ev.findings);
        data.capture = ev.capture.map(Arc::new);
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
        self.finding_counts = [0; 4];
        for f in &findings {
            let i = match f.severity {
                Severity::High => 0,
                Severity::Medium => 1,
                Severity::Low => 2,
                Severity::Info => 3,
            };
            self.finding_counts[i] += 1;
        }
        self.findings = findings;
    }

    /// (node, index into the findings) for every action a finding names, sorted by node.
    pub fn finding_index(&self) -> &[(NodeId, u32)] {
        &self.finding_index
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
        let forks = &report.links.forks;
        let fork_names = (forks.iter().take(CHAIN_TROUBLE_SHOWN))
            .map(|&f| {
                let at = &self.corpus.record(f as usize).source;
                format!("{}:{}", crate::model::text::file_name(&at.path), at.line)
            })
            .collect();
        self.forks = (fork_names, forks.len());
        self.intact_unforked = (report.links.paths.iter())
            .filter(|p| p.status == ChainStatus::Intact && p.forked_at.is_none())
            .count();
        self.path_of = vec![u32::MAX; report.records.len()];
        for (i, p) in report.links.paths.iter().enumerate() {
            for &m in &p.members {
                if self.path_of[m as usize] == u32::MAX {
                    self.path_of[m as usize] = i as u32;
                }
            }
        }
        self.report = Some(report);
        self.set_findings(findings);
    }

    /// Every node's search text, read from the facts when asked for.
    pub fn haystacks(&self) -> Haystacks {
        Haystacks {
            corpus: Arc::clone(&self.corpus),
            analysis: Arc::clone(&self.analysis),
        }
    }

    /// The nodes a finding names.
    pub fn nodes_of(&self, f: &Finding) -> Vec<NodeId> {
        self.analysis.graph.named_by(&self.corpus, f)
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
