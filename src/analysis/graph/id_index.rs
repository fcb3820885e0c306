//! Nodes by `(chain, action id)` (one each) and by `(run, action id)` (every emitter
//! chain's), runs by `run_id`: hash tables of numbers whose keys are read from the runs
//! and the nodes' facts — a few bytes a node, no copy of an id. Seeded per process, so
//! ids made to collide cannot slow it to a crawl.

use super::{ActionNode, NodeId, Run};
use crate::analysis::lineage::ChainId;
use crate::model::facts::ActionFacts;
use hashbrown::{DefaultHashBuilder, HashTable};
use std::hash::BuildHasher;

#[derive(Debug, Default)]
pub(super) struct IdIndex {
    by_chain: HashTable<NodeId>,
    by_run: HashTable<NodeId>,
    runs: HashTable<u32>,
    hasher: DefaultHashBuilder,
}

/// What nodes are looked up by, beside their action id.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Key {
    /// The emitter chain the node was first stored on: one node a key and id.
    Chain(ChainId),
    /// Its run: one node for each emitter chain of the run holding the id.
    Run(u32),
}

impl Key {
    /// The same kind of key, for `node`.
    fn of(self, node: &ActionNode) -> Key {
        match self {
            Key::Chain(_) => Key::Chain(node.chain),
            Key::Run(_) => Key::Run(node.run),
        }
    }
}

impl IdIndex {
    fn table(&self, key: Key) -> &HashTable<NodeId> {
        match key {
            Key::Chain(_) => &self.by_chain,
            Key::Run(_) => &self.by_run,
        }
    }

    /// Room for `n` more nodes in each table.
    pub(super) fn reserve(&mut self, n: usize) {
        self.by_chain.reserve(n, |_| 0);
        self.by_run.reserve(n, |_| 0);
    }

    /// The hash of `(key, id)` in `key`'s table, and whether a node is of them.
    fn look_up<'a, 'f: 'a>(
        &self,
        nodes: &'a [ActionNode],
        key: Key,
        id: &'a str,
        facts: impl Fn(NodeId) -> Option<&'f ActionFacts> + 'a,
    ) -> (u64, impl Fn(&NodeId) -> bool + 'a) {
        let is = move |n: &NodeId| {
            key.of(&nodes[*n as usize]) == key && facts(*n).and_then(ActionFacts::id) == Some(id)
        };
        (self.hasher.hash_one((key, id)), is)
    }

    /// Every node of `id` under `key`, in node order, reading a node's facts with `facts`.
    pub(super) fn nodes<'f>(
        &self,
        nodes: &[ActionNode],
        key: Key,
        id: &str,
        facts: impl Fn(NodeId) -> Option<&'f ActionFacts>,
    ) -> Vec<NodeId> {
        let (hash, is) = self.look_up(nodes, key, id, facts);
        let mut found: Vec<NodeId> = (self.table(key).iter_hash(hash).copied())
            .filter(|n| is(n))
            .collect();
        found.sort_unstable();
        found
    }

    /// The node of `id` first stored on chain `chain` (no more than one).
    pub(super) fn node<'f>(
        &self,
        nodes: &[ActionNode],
        chain: ChainId,
        id: &str,
        facts: impl Fn(NodeId) -> Option<&'f ActionFacts>,
    ) -> Option<NodeId> {
        let (hash, is) = self.look_up(nodes, Key::Chain(chain), id, facts);
        self.by_chain.find(hash, is).copied()
    }

    /// Adds node `n`, of `id` on chain `chain` of run `run` (not yet in the index).
    pub(super) fn insert_node<'f>(
        &mut self,
        nodes: &[ActionNode],
        (chain, run): (ChainId, u32),
        id: &str,
        n: NodeId,
        facts: impl Fn(NodeId) -> Option<&'f ActionFacts>,
    ) {
        let hasher = &self.hasher;
        let id_of = |m: &NodeId| facts(*m).and_then(ActionFacts::id).unwrap_or("");
        for (key, table) in [
            (Key::Chain(chain), &mut self.by_chain),
            (Key::Run(run), &mut self.by_run),
        ] {
            let rehash = |m: &NodeId| hasher.hash_one((key.of(&nodes[*m as usize]), id_of(m)));
            table.insert_unique(hasher.hash_one((key, id)), n, rehash);
        }
    }

    /// The run whose id is `run_id`.
    pub(super) fn run(&self, runs: &[Run], run_id: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(run_id);
        self.runs
            .find(hash, |r| runs[*r as usize].id == run_id)
            .copied()
    }

    /// Adds run `run` (not yet in the index).
    pub(super) fn insert_run(&mut self, runs: &[Run], run: u32) {
        let hasher = &self.hasher;
        let hash = |r: &u32| hasher.hash_one(runs[*r as usize].id.as_str());
        self.runs.insert_unique(hash(&run), run, hash);
    }
}
