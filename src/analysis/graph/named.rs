//! The nodes a finding names, and the action identity (chain, tool) it is about.

use super::{ChainId, Graph, NodeId};
use crate::load::Corpus;
use crate::model::finding::Finding;

impl Graph {
    /// The findings naming each action (indices into `findings`, in order), by
    /// [`Graph::named_by`].
    pub fn findings_by_node(
        &self,
        corpus: &Corpus,
        findings: &[Finding],
    ) -> rustc_hash::FxHashMap<NodeId, Vec<u32>> {
        use rayon::prelude::*;
        let named: Vec<(NodeId, u32)> = (findings.par_iter().enumerate())
            .flat_map_iter(|(i, f)| {
                let nodes = self.named_by(corpus, f);
                nodes.into_iter().map(move |n| (n, i as u32))
            })
            .collect();
        let mut by_node = rustc_hash::FxHashMap::<NodeId, Vec<u32>>::default();
        for (n, i) in named {
            by_node.entry(n).or_default().push(i);
        }
        by_node
    }

    /// True when an action the finding names passes `passes`: its run's named nodes, or
    /// for a finding of no run, the first action holding each id it lists. What a filtered
    /// report and `findings --where` keep.
    pub fn names_passing(
        &self,
        corpus: &Corpus,
        finding: &Finding,
        passes: &dyn Fn(NodeId) -> bool,
    ) -> bool {
        match finding.run_id {
            Some(_) => self.named_by(corpus, finding).into_iter().any(passes),
            None => (finding.action_ids.iter()).any(|id| {
                self.find_all(corpus, id)
                    .first()
                    .copied()
                    .is_some_and(passes)
            }),
        }
    }

    /// The nodes a finding names: its run's nodes of each id it lists; where an id is
    /// held by several emitter chains of the run, only those held by a record the
    /// finding's locations name (all of them when it names none of theirs).
    pub fn named_by(&self, corpus: &Corpus, finding: &Finding) -> Vec<NodeId> {
        let mut nodes: Vec<NodeId> = (finding.action_ids.iter())
            .flat_map(|id| self.named_by_id(corpus, finding, id))
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }

    /// The nodes of the finding's run with the id `id`: where the id is held by several
    /// emitter chains, only those held by a record the finding's locations name (all of
    /// them when it names none of theirs).
    fn named_by_id(&self, corpus: &Corpus, finding: &Finding, id: &str) -> Vec<NodeId> {
        let Some(run) = finding.run_id.as_deref() else {
            return Vec::new();
        };
        let all = self.find_in_run(corpus, run, id);
        if all.len() > 1 {
            let chains: Vec<ChainId> = (finding.locations.iter())
                .filter_map(|l| corpus.index_at(&l.path, l.line))
                .map(|r| self.lineages.of(r))
                .collect();
            let held = |n: &NodeId| {
                let chain = self.nodes[*n as usize].chain;
                chains.iter().any(|&c| self.lineages.sees(c, chain))
            };
            if all.iter().any(held) {
                return all.into_iter().filter(held).collect();
            }
        }
        all
    }

    /// The action a finding is about — its first action id's node, when that is one — as
    /// (chain head, tool): what tells two actions of one id apart (verification.md e.3).
    /// `None` for a finding about no action, or when several chains hold the id and its
    /// locations do not tell which.
    pub fn identity_of(
        &self,
        corpus: &Corpus,
        finding: &Finding,
    ) -> Option<(String, Option<String>)> {
        let id = finding.action_ids.first()?;
        let [node] = self.named_by_id(corpus, finding, id)[..] else {
            return None;
        };
        let tool = (self.facts(corpus, node))
            .and_then(|f| f.tool())
            .map(str::to_string);
        Some((self.chain_name(corpus, node).head, tool))
    }
}
