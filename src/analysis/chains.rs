//! Denied→re-approved chains and causal chains as first-class objects
//! (analysis-rules §7): where a chain starts, each step and how it was authorised, and
//! how it ended.

use super::graph::{Graph, NodeId};
use crate::model::drift::DriftResult;
use crate::model::facts::ActionFacts;
use compact_str::CompactString;
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use serde::Serialize;

/// The two chain kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChainKind {
    DenyReapproval,
    Causal,
}

/// One step of a chain.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    pub node: NodeId,
    pub action_id: CompactString,
    pub tool: Option<CompactString>,
    pub decision: Option<CompactString>,
    /// `approval_grant`, else `approval_mode`.
    pub grant: Option<CompactString>,
    /// An approval hash present and different from every earlier step's.
    pub fresh_approval: bool,
    pub drift: DriftResult,
}

/// A denied→re-approved chain (one path from a deny to an action with no children)
/// or a causal chain (actions sharing a `causal_chain_id`, by time). Serialised with
/// `actions`, the action ids in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    pub kind: ChainKind,
    pub id: String,
    pub run_id: String,
    /// `executed`, `denied-again`, `re-approved-no-outcome` (re-approved, but no outcome
    /// recorded for the last step) or `abandoned` (nothing re-approved the deny) for deny
    /// chains; the last action's observed result for causal chains.
    pub ended: Option<String>,
    pub steps: Vec<Step>,
}

/// An action's role in the denied→re-approved chains (analysis-rules §7). Every consumer
/// (the `chains` command, the explorer's glyphs, reports) takes roles from here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A deny with no denied ancestor: where a chain starts.
    Start,
    /// Follows a denied step and is itself allowed.
    Reapproved,
}

impl Step {
    fn denied(&self) -> bool {
        self.decision.as_deref() == Some("deny")
    }

    /// This step re-approves `previous`: it follows a denied step and is itself allowed.
    fn reapproves(&self, previous: &Step) -> bool {
        previous.denied() && self.decision.as_deref() == Some("allow")
    }
}

/// The role of every action that has one, over all chains.
pub fn roles(chains: &[Chain]) -> std::collections::HashMap<NodeId, Role> {
    chains.iter().flat_map(Chain::roles).collect()
}

impl Chain {
    /// The roles of this chain's steps (none for a causal chain). A deny inside the
    /// chain continues it and is never re-approved.
    pub fn roles(&self) -> impl Iterator<Item = (NodeId, Role)> + '_ {
        let deny = self.kind == ChainKind::DenyReapproval;
        let start = self
            .steps
            .first()
            .filter(|_| deny)
            .map(|s| (s.node, Role::Start));
        let reapproved = self.steps.windows(2).filter_map(move |w| {
            (deny && w[1].reapproves(&w[0])).then_some((w[1].node, Role::Reapproved))
        });
        start.into_iter().chain(reapproved)
    }

    /// The action ids in order.
    pub fn actions(&self) -> Vec<&str> {
        self.steps.iter().map(|s| s.action_id.as_str()).collect()
    }
}

impl Serialize for Chain {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.serialize_with_steps(s, &self.steps)
    }
}

impl Chain {
    /// The chain as it serialises, its steps written as `steps` (the steps with what an
    /// output adds to each).
    pub fn serialize_with_steps<S: serde::Serializer>(
        &self,
        s: S,
        steps: &impl Serialize,
    ) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Chain", 6)?;
        st.serialize_field("kind", &self.kind)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("run_id", &self.run_id)?;
        st.serialize_field("actions", &self.actions())?;
        st.serialize_field("ended", &self.ended)?;
        st.serialize_field("steps", steps)?;
        st.end()
    }
}

/// Every deny chain, then every causal chain.
pub fn build(graph: &Graph, facts: &[&ActionFacts]) -> Vec<Chain> {
    // `observed` is "denied" exactly when the decision is a deny (read while the action
    // was in cache; comparing the decision text here would reload every action).
    let denied = |n: NodeId| facts[n as usize].observed() == Some("denied");
    // Each start and each causal group is independent: built in parallel, kept in order.
    let starts: Vec<NodeId> = (0..graph.nodes.len() as NodeId)
        .into_par_iter()
        .filter(|n| denied(*n) && !has_denied_ancestor(graph, *n, &denied))
        .collect();
    let mut chains: Vec<Chain> = starts
        .par_iter()
        .flat_map_iter(|&start| deny_chains(graph, facts, start))
        .collect();
    chains.par_extend(graph.causal.par_iter().map(|group| {
        let steps = steps(facts, &group.nodes);
        let ended = group
            .nodes
            .last()
            .and_then(|n| facts[*n as usize].observed())
            .map(str::to_string);
        let run_id = group
            .nodes
            .first()
            .map(|n| graph.runs[graph.nodes[*n as usize].run as usize].id.clone())
            .unwrap_or_default();
        Chain {
            kind: ChainKind::Causal,
            id: group.id.clone(),
            run_id,
            ended,
            steps,
        }
    }));
    chains
}

/// The denied→re-approved chains starting at one deny: one per path to a leaf.
fn deny_chains(graph: &Graph, facts: &[&ActionFacts], start: NodeId) -> Vec<Chain> {
    let mut paths = Vec::new();
    collect_paths(graph, vec![start], &mut paths);
    let many = paths.len() > 1;
    let run_id = &graph.runs[graph.nodes[start as usize].run as usize].id;
    paths
        .into_iter()
        .enumerate()
        .map(|(i, path)| {
            let steps = steps(facts, &path);
            let last = steps.last();
            // "abandoned" only when nothing re-approved the deny.
            let reapproved = steps.windows(2).any(|w| w[1].reapproves(&w[0]));
            let ended =
                if last.and_then(|s| s.decision.as_deref()) == Some("deny") && path.len() > 1 {
                    "denied-again"
                } else if last.is_some_and(|s| executed(facts, s.node)) && path.len() > 1 {
                    "executed"
                } else if reapproved {
                    "re-approved-no-outcome"
                } else {
                    "abandoned"
                };
            let start_id = steps
                .first()
                .map(|s| s.action_id.clone())
                .unwrap_or_default();
            Chain {
                kind: ChainKind::DenyReapproval,
                id: if many {
                    format!("deny:{run_id}/{start_id}#{}", i + 1)
                } else {
                    format!("deny:{run_id}/{start_id}")
                },
                run_id: run_id.clone(),
                ended: Some(ended.into()),
                steps,
            }
        })
        .collect()
}

/// True when some ancestor (cycle-safe walk) is a deny.
fn has_denied_ancestor(
    graph: &Graph,
    node: NodeId,
    denied: &(dyn Fn(NodeId) -> bool + Sync),
) -> bool {
    let mut cur = graph.nodes[node as usize].parent;
    let mut steps = 0;
    while let Some(p) = cur {
        if p == node || steps > graph.nodes.len() {
            return false;
        }
        if denied(p) {
            return true;
        }
        cur = graph.nodes[p as usize].parent;
        steps += 1;
    }
    false
}

/// Every path from the last node of `path` down to a node with no children (children
/// already on the path are skipped, so cycles end a path).
fn collect_paths(graph: &Graph, path: Vec<NodeId>, out: &mut Vec<Vec<NodeId>>) {
    let Some(&last) = path.last() else { return };
    let kids: Vec<NodeId> = graph
        .children(last)
        .into_iter()
        .filter(|k| !path.contains(k))
        .collect();
    if kids.is_empty() || out.len() > 10_000 {
        out.push(path);
        return;
    }
    for k in kids {
        let mut next = path.clone();
        next.push(k);
        collect_paths(graph, next, out);
    }
}

/// An outcome was recorded: an allow alone does not say the action ran.
fn executed(facts: &[&ActionFacts], node: NodeId) -> bool {
    matches!(facts[node as usize].observed(), Some("success" | "failure"))
}

fn steps(facts: &[&ActionFacts], nodes: &[NodeId]) -> Vec<Step> {
    let mut seen_hashes: FxHashSet<&str> = FxHashSet::default();
    nodes
        .iter()
        .map(|&n| {
            let f = &facts[n as usize];
            let fresh = f
                .approval_context_hash()
                .is_some_and(|h| seen_hashes.insert(h));
            Step {
                node: n,
                action_id: CompactString::from(f.id().unwrap_or("(no action_id)")),
                tool: f.tool().map(CompactString::from),
                decision: f.outcome().map(CompactString::from),
                grant: f.grant().map(CompactString::from),
                fresh_approval: fresh,
                drift: f.drift,
            }
        })
        .collect()
}
