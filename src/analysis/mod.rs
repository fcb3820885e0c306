//! The forensic brain: the action graph, the per-action views that answer the three
//! post-run questions (authority, drift, lease, comparability), findings, chains and
//! the decision envelope (analysis-rules.md). Plain data, no terminal code.

pub mod authority;
pub mod capture;
pub mod chains;
pub mod comparability;
pub mod compare;
pub mod envelope;
pub mod evidence;
pub mod findings;
pub mod gathered;
pub mod graph;
pub mod groups;
pub mod lease;
pub mod lineage;

use crate::canon::{Sha256Digest, canonical_sha256};
use crate::load::Corpus;
use crate::model::drift::Drift;
use crate::model::facts::ActionFacts;
use crate::model::fields::{ActionFields, Key};
use crate::model::finding::Finding;
use crate::model::json::Json;
use crate::model::{Action, Record, Source};
use crate::verify::semantic::{RuleSeverity, Violation};
use authority::{AuthorityView, Sources};
use chains::Chain;
use comparability::{Comparability, CoverageFinding, PairVerdict};
use envelope::DecisionEnvelope;
use graph::{Graph, GraphProblem, NodeId, NodeMap};
use lease::{LeaseView, Leases, SuppliedLeases};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

pub(crate) fn serialize_display<S: serde::Serializer>(
    v: &impl std::fmt::Display,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// A state change between two recorded actions with nothing recorded in between.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateGap {
    /// The earlier action (its post digest).
    pub from: NodeId,
    /// The next action over the same equality tuple (its pre digest).
    pub to: NodeId,
    pub post: String,
    pub pre: String,
    /// The weaker assumption both badges share, if any.
    pub assumption: Option<Cow<'static, str>>,
}

/// Everything concluded about a corpus.
#[derive(Debug, Default)]
pub struct Analysis {
    /// Canonical SHA-256 per record (flat index).
    pub hashes: Vec<Sha256Digest>,
    pub graph: Graph,
    pub leases: Leases,
    pub chains: Vec<Chain>,
    /// The digest badge of each action that carries a state digest.
    pub badges: NodeMap<(Comparability, Option<CoverageFinding>)>,
    /// The [`findings::check`] bits of each node.
    pub checks: Vec<u8>,
    pub gaps: Vec<StateGap>,
    /// (node, index into `gaps`) for both ends of every gap, sorted by node.
    gap_index: Vec<(NodeId, u32)>,
}

/// One state digest of an action with its badge.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DigestView<'a> {
    /// `pre` or `post`.
    pub which: &'static str,
    pub kind: Option<&'a str>,
    pub digest: &'a Json,
    pub comparability: &'a Comparability,
}

/// Every view of one action: the answer to `aeplens show`.
#[derive(Debug, Serialize)]
pub struct ActionReport<'a> {
    pub run_id: &'a str,
    pub action_id: Option<&'a str>,
    /// The emitter chain the action was first stored on: with the id, what it is.
    pub chain: lineage::ChainName,
    /// The verdict of the record it is shown from (`null` while not yet verified).
    pub verdict: Option<crate::verify::verdict::RecordVerdict>,
    /// `file:line` of the first record holding the action, and how many records hold it.
    #[serde(serialize_with = "serialize_display")]
    pub source: &'a Source,
    pub copies: u32,
    pub authority: AuthorityView<'a>,
    pub drift: Drift<'a>,
    pub lease: Option<&'a LeaseView>,
    pub digests: Vec<DigestView<'a>>,
    /// Pre vs post within the action.
    pub pre_post: Option<PairVerdict>,
    pub state_gaps: Vec<&'a StateGap>,
    pub envelope: DecisionEnvelope<'a>,
    pub findings: Vec<&'a Finding>,
    /// What the agent's telemetry saw of it (`--traces`, a traced run only):
    /// [`capture::Capture::action_view`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<serde_json::Value>,
}

/// What an action's views take from the rest of the evidence: its run and emitter chain,
/// its copies, its parent, its lease, its digest badge, its state gaps and the findings
/// naming it.
pub struct Surroundings<'a> {
    pub run_id: &'a str,
    pub chain: lineage::ChainName,
    pub verdict: Option<crate::verify::verdict::RecordVerdict>,
    pub copies: u32,
    pub parent: Option<(&'a Record, Action<'a>)>,
    pub lease: Option<&'a LeaseView>,
    pub badge: Option<&'a Comparability>,
    pub state_gaps: Vec<&'a StateGap>,
    pub findings: Vec<&'a Finding>,
}

impl<'a> ActionReport<'a> {
    /// Every view of `action`, of `record`, in its `around`.
    pub fn of(record: &'a Record, action: Action<'a>, around: Surroundings<'a>) -> Self {
        let Surroundings {
            run_id,
            chain,
            verdict,
            copies,
            parent,
            lease,
            badge,
            state_gaps,
            findings,
        } = around;
        let fields = ActionFields::of(action.0);
        let mut digests = Vec::with_capacity(2);
        for (which, key) in [("pre", Key::PreStateDigest), ("post", Key::PostStateDigest)] {
            if let (Some(digest), Some(comparability)) = (fields.get(key), badge) {
                digests.push(DigestView {
                    which,
                    kind: fields.str(Key::StateDigestKind),
                    digest,
                    comparability,
                });
            }
        }
        let pre_post = match (
            fields.str(Key::PreStateDigest),
            fields.str(Key::PostStateDigest),
            badge,
        ) {
            (Some(pre), Some(post), Some(b)) => Some(comparability::compare((pre, b), (post, b))),
            _ => None,
        };
        let action_id = fields.str(Key::ActionId);
        let sources = Sources::of(record, fields);
        let drift = sources.drift();
        let authority = authority::view(&sources, &drift, lease, parent);
        let envelope = envelope::project(&sources, &drift, lease);
        ActionReport {
            chain,
            verdict,
            source: &record.source,
            copies,
            authority,
            drift,
            lease,
            digests,
            pre_post,
            state_gaps,
            envelope,
            findings,
            run_id,
            action_id,
            telemetry: None,
        }
    }
}

impl Analysis {
    /// Analyses a corpus, computing canonical hashes (in parallel) for the record links.
    pub fn build(corpus: &Corpus, supplied: &SuppliedLeases) -> Analysis {
        let records: Vec<_> = corpus.records().collect();
        let hashes = records
            .par_iter()
            .map(|r| canonical_sha256(r.json()))
            .collect();
        Analysis::with_hashes(corpus, hashes, supplied)
    }

    /// Analyses a corpus whose canonical hashes are known (e.g. from a verify report).
    pub fn with_hashes(
        corpus: &Corpus,
        hashes: Vec<Sha256Digest>,
        supplied: &SuppliedLeases,
    ) -> Analysis {
        // The badge of each action is computed beside the graph's serial part; leases,
        // chains and state gaps (each parallel inside) then run side by side.
        let (graph, facts, badges) = Graph::build_with(corpus, &hashes, |f| {
            f.state_digest
                .as_ref()
                .map(|d| comparability::badge(d.kind.as_ref(), d.coverage.as_ref()))
        });
        let (leases, (chains, gaps)) = rayon::join(
            || Leases::build(&graph, &facts, supplied),
            || {
                rayon::join(
                    || chains::build(&graph, &facts),
                    || state_gaps(&graph, &badges, &facts),
                )
            },
        );
        let checks = facts.par_iter().map(|f| findings::checks(f)).collect();
        let mut an = Analysis {
            hashes,
            graph,
            leases,
            chains,
            badges,
            checks,
            gaps,
            ..Analysis::default()
        };
        an.gap_index = an
            .gaps
            .iter()
            .enumerate()
            .flat_map(|(i, g)| [(g.from, i as u32), (g.to, i as u32)])
            .collect();
        an.gap_index.sort_unstable();
        an
    }

    /// Every view of one action (a node of the graph), with the `findings` that name it
    /// and its record's verdict from `verdicts` (per record; `None` while not verified).
    pub fn show<'a>(
        &'a self,
        corpus: &'a Corpus,
        node: NodeId,
        findings: &'a [Finding],
        verdicts: Option<&[crate::verify::RecordResult]>,
    ) -> Option<ActionReport<'a>> {
        let (record, action) = self.graph.action(corpus, node)?;
        let n = &self.graph.nodes[node as usize];
        let around = Surroundings {
            run_id: self.graph.runs[n.run as usize].id.as_str(),
            chain: self.graph.chain_name(corpus, node),
            verdict: verdicts
                .and_then(|v| v.get(n.record as usize))
                .map(crate::verify::verdict::RecordVerdict::of),
            copies: n.copies,
            parent: n.parent.and_then(|p| self.graph.action(corpus, p)),
            lease: self.leases.by_node.get(&node),
            badge: self.badges.get(&node).map(|(b, _)| b),
            state_gaps: self.gaps_of(node).collect(),
            findings: self.findings_naming(corpus, node, findings),
        };
        Some(ActionReport::of(record, action, around))
    }

    /// The findings among `findings` that name an action: those of its run listing its
    /// id, where several emitter chains hold that id only those whose records they name
    /// ([`Graph::named_by`]).
    pub fn findings_naming<'f>(
        &self,
        corpus: &Corpus,
        node: NodeId,
        findings: &'f [Finding],
    ) -> Vec<&'f Finding> {
        let n = &self.graph.nodes[node as usize];
        let run = self.graph.runs[n.run as usize].id.as_str();
        let Some(id) = self.graph.facts(corpus, node).and_then(ActionFacts::id) else {
            return Vec::new();
        };
        (findings.iter())
            .filter(|f| f.run_id.as_deref() == Some(run) && f.action_ids.iter().any(|x| x == id))
            .filter(|f| self.graph.named_by(corpus, f).contains(&node))
            .collect()
    }

    /// The state gaps an action is one end of.
    pub fn gaps_of(&self, node: NodeId) -> impl Iterator<Item = &StateGap> {
        graph::indices_of(&self.gap_index, node).map(|i| &self.gaps[i])
    }

    /// The decision envelope of every action, with its node, in node order.
    pub fn envelopes<'c>(&self, corpus: &'c Corpus) -> Vec<(NodeId, DecisionEnvelope<'c>)> {
        (0..self.graph.nodes.len() as NodeId)
            .filter_map(|n| {
                let (record, a) = self.graph.action(corpus, n)?;
                let sources = Sources::of(record, ActionFields::of(a.0));
                let lease = self.leases.by_node.get(&n);
                Some((n, envelope::project(&sources, &sources.drift(), lease)))
            })
            .collect()
    }

    /// V17 violations, for the semantic axis of the record holding the rewritten copy.
    pub fn rewritten(&self, corpus: &Corpus) -> Vec<(usize, Violation)> {
        self.graph
            .problems
            .iter()
            .filter_map(|p| match p {
                GraphProblem::Rewritten {
                    node,
                    first_record,
                    record,
                    fields,
                } => Some((
                    *record as usize,
                    Violation {
                        rule: "V17",
                        severity: RuleSeverity::Error,
                        message: format!(
                            "F-ACTION-REWRITTEN: differs from its copy in {} ({})",
                            corpus.record(*first_record as usize).source,
                            fields.join(", ")
                        ),
                        action_id: self
                            .graph
                            .facts(corpus, *node)
                            .and_then(|f| f.id().map(str::to_string)),
                    },
                )),
                _ => None,
            })
            .collect()
    }

    /// The raw JSON of an action, for display.
    pub fn raw<'c>(&self, corpus: &'c Corpus, node: NodeId) -> Option<&'c Json> {
        let n = &self.graph.nodes[node as usize];
        corpus
            .record(n.record as usize)
            .get("actions")?
            .as_array()?
            .get(n.pos as usize)
    }
}

/// Post of an action vs pre of the next action of the run over the same tuple.
fn state_gaps(
    graph: &Graph,
    badges: &NodeMap<(Comparability, Option<CoverageFinding>)>,
    facts: &[&ActionFacts],
) -> Vec<StateGap> {
    // Runs are independent: one pass per run, in parallel, kept in run order.
    graph
        .runs
        .par_iter()
        .flat_map_iter(|run| {
            let mut gaps = Vec::new();
            let mut last_post: HashMap<&[u8], (NodeId, &str, &Comparability)> = HashMap::default();
            for &n in &run.nodes {
                let Some((badge, _)) = badges.get(&n) else {
                    continue;
                };
                let Some(tuple) = badge.tuple.as_deref() else {
                    continue;
                };
                let Some(digest) = facts[n as usize].state_digest.as_deref() else {
                    continue;
                };
                if let Some(pre) = digest.pre()
                    && let Some((from, post, prev_badge)) = last_post.get(tuple)
                    && comparability::compare((post, prev_badge), (pre, badge)).verdict
                        == comparability::Comparison::Changed
                {
                    gaps.push(StateGap {
                        from: *from,
                        to: n,
                        post: post.to_string(),
                        pre: pre.to_string(),
                        assumption: badge.assumption.clone(),
                    });
                }
                if let Some(post) = digest.post() {
                    last_post.insert(tuple, (n, post, badge));
                }
            }
            gaps
        })
        .collect()
}
