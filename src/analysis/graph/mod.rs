//! The action graph (analysis-rules §7): one node per action across every loaded file,
//! an action being (emitter chain, action id) (`analysis::lineage`, verification.md e.3),
//! never (run, action id); parent edges (the action's own chain first, then its run,
//! then unique cross-run), causal-chain groups and record-chain links rebuilt from
//! canonical hashes. Cycles, self-parents and dangling parents are reported; no
//! traversal here can loop.

mod id_index;
mod named;

use super::lineage::{ChainId, Lineages};
use crate::canon::Sha256Digest;
use crate::load::Corpus;
use crate::model::facts::{ActionFacts, Number};
use crate::model::json::Obj;
use crate::model::{Action, Link, Record};
use id_index::{IdIndex, Key};
use petgraph::Directed;
use petgraph::csr::Csr;
use petgraph::visit::EdgeRef;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use serde::Serialize;

/// Index of an action node (also its node index in [`Graph`]'s parent edges).
pub type NodeId = u32;

/// No node: what a located action that copies an earlier one made.
const NO_NODE: NodeId = NodeId::MAX;

/// One action, wherever it was first stored.
#[derive(Clone, Debug)]
pub struct ActionNode {
    /// Flat index of the first record that holds it.
    pub record: u32,
    /// Position in that record's `actions` array.
    pub pos: u32,
    /// Index into [`Graph::runs`].
    pub run: u32,
    /// The emitter chain it was first stored on ([`Graph::lineages`]).
    pub chain: ChainId,
    /// How many records hold a copy (the shipped emitter repeats earlier actions).
    pub copies: u32,
    /// `timestamp_ms` (read with [`ActionNode::time`]).
    time: Number,
    /// The resolved parent.
    pub parent: Option<NodeId>,
}

// A node is held per action of the corpus: keep it at 40 bytes.
const _: () = assert!(std::mem::size_of::<ActionNode>() == 40);

impl ActionNode {
    /// `timestamp_ms`, when it is a number.
    pub fn time(&self) -> Option<f64> {
        self.time.get()
    }
}

/// How a node's parent was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Edge {
    /// In the child's emitter chain, or the only one of that id in its run.
    Parent,
    /// In another run (the id is unique among all runs).
    ParentCrossRun,
}

/// The actions of one `run_id`, in time order (every emitter chain of the run).
#[derive(Clone, Debug)]
pub struct Run {
    pub id: String,
    pub nodes: Vec<NodeId>,
    /// Flat indices of the records of this run.
    pub records: Vec<u32>,
}

/// Actions sharing a `causal_chain_id`, in time order.
#[derive(Clone, Debug)]
pub struct CausalGroup {
    pub id: String,
    pub nodes: Vec<NodeId>,
}

/// Something wrong with the shape of the graph.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum GraphProblem {
    SelfParent {
        node: NodeId,
    },
    DanglingParent {
        node: NodeId,
        parent_id: String,
    },
    /// The parent id names actions of several other emitter chains of the run: none is
    /// picked.
    AmbiguousParent {
        node: NodeId,
        parent_id: String,
        candidates: Vec<NodeId>,
    },
    /// Nodes of a parent cycle, in parent order.
    Cycle {
        nodes: Vec<NodeId>,
    },
    /// A chained snapshot holds a copy that differs from the first (V17).
    Rewritten {
        node: NodeId,
        first_record: u32,
        record: u32,
        fields: Vec<String>,
    },
}

/// The graph over a corpus.
#[derive(Debug, Default)]
pub struct Graph {
    pub nodes: Vec<ActionNode>,
    pub runs: Vec<Run>,
    pub causal: Vec<CausalGroup>,
    /// For each record (flat index), the record its `prev_record_hash` names.
    pub prev_record: Vec<Option<u32>>,
    /// The emitter chain of each record: what an action's identity rests on.
    pub lineages: Lineages,
    pub problems: Vec<GraphProblem>,
    /// Parent → child, by how the parent was found: each node's children, read without
    /// a scan (a node's parent is [`ActionNode::parent`]; causal groups and record links
    /// are the lists above).
    children: Csr<(), Edge, Directed, u32>,
    /// Nodes by chain and action id, and by run and action id; runs by id.
    index: IdIndex,
}

impl Graph {
    /// Builds the graph (`hashes[i]` is the canonical SHA-256 of record `i`) and returns
    /// the facts of each node's action, by node index.
    pub fn build_with_facts<'c>(
        corpus: &'c Corpus,
        hashes: &[Sha256Digest],
    ) -> (Graph, Vec<&'c ActionFacts>) {
        let (graph, facts, _) = Graph::build_with(corpus, hashes, |_| None::<()>);
        (graph, facts)
    }

    /// [`Graph::build_with_facts`], also mapping `per_action` over the facts of every
    /// node (in parallel): the nodes it gives a value for. The graph's own work is mostly
    /// serial (node assignment, parents, causal groups); `per_action` runs beside it on
    /// the other cores instead of after it.
    pub fn build_with<'c, T: Send>(
        corpus: &'c Corpus,
        hashes: &[Sha256Digest],
        per_action: impl Fn(&ActionFacts) -> Option<T> + Sync,
    ) -> (Graph, Vec<&'c ActionFacts>, NodeMap<T>) {
        let records: Vec<&Record> = corpus.records().collect();
        // Each record's facts are read once, in parallel (verification usually has).
        records.par_iter().for_each(|r| {
            r.facts();
        });
        // Every object in an `actions` array: (record, position).
        let mut located: Vec<(u32, u32)> = Vec::new();
        let mut facts: Vec<&'c ActionFacts> = Vec::new();
        for (ri, r) in records.iter().enumerate() {
            for (pos, f) in r.facts().actions.iter() {
                located.push((ri as u32, pos));
                facts.push(f);
            }
        }
        // (position in `located`, value), for the actions that have one.
        let ((g, node_at, node_facts), mapped) = rayon::join(
            || Graph::from_facts(&records, hashes, &located, &facts),
            || {
                facts
                    .par_iter()
                    .enumerate()
                    .filter_map(|(i, f)| per_action(f).map(|v| (i, v)))
                    .collect::<Vec<(usize, T)>>()
            },
        );
        // A located action's node, unless it is a copy of an earlier one.
        let mut keys = Vec::with_capacity(mapped.len());
        let mut values = Vec::with_capacity(mapped.len());
        for (i, v) in mapped {
            if node_at[i] != NO_NODE {
                keys.push(node_at[i]);
                values.push(v);
            }
        }
        let map = NodeMap::from_parts(g.nodes.len(), &keys, values);
        (g, node_facts, map)
    }

    /// The graph over located actions and their facts (copies included), the node each
    /// located action made ([`NO_NODE`] for a copy of an earlier one), and the facts of
    /// the nodes.
    fn from_facts<'c>(
        records: &[&'c Record],
        hashes: &[Sha256Digest],
        located: &[(u32, u32)],
        all_facts: &[&'c ActionFacts],
    ) -> (Graph, Vec<NodeId>, Vec<&'c ActionFacts>) {
        let (vertex, prev_record) = record_links(records, hashes);
        let mut g = Graph {
            lineages: Lineages::build(records, &prev_record, &vertex),
            prev_record,
            nodes: Vec::with_capacity(located.len()),
            ..Graph::default()
        };
        let component = components(&g.prev_record);
        let (node_at, facts) = g.assign_nodes(records, located, all_facts, &component);
        g.resolve_parents(&facts);
        g.find_cycles();
        g.group_causal(&facts);
        let times: Vec<Option<f64>> = g.nodes.iter().map(ActionNode::time).collect();
        for run in &mut g.runs {
            run.nodes
                .sort_by(|a, b| time_order(times[*a as usize], times[*b as usize]));
        }
        (g, node_at, facts)
    }

    /// Assigns a node to each action not seen before on its emitter chain or a chain it
    /// continues, counts the copies and fills the index; returns the node each located
    /// action made ([`NO_NODE`] for a copy) and the facts of the nodes. Records are taken
    /// chains before the chains continuing them (a fork's shared prefix before its
    /// branches, whatever the load order), else in load order.
    fn assign_nodes<'c>(
        &mut self,
        records: &[&Record],
        located: &[(u32, u32)],
        facts: &[&'c ActionFacts],
        component: &[u32],
    ) -> (Vec<NodeId>, Vec<&'c ActionFacts>) {
        let mut node_at: Vec<NodeId> = vec![NO_NODE; located.len()];
        let mut node_facts: Vec<&ActionFacts> = Vec::with_capacity(located.len());
        self.index.reserve(located.len());
        // Where each record's located actions start.
        let mut starts = vec![0u32; records.len() + 1];
        for &(r, _) in located {
            starts[r as usize + 1] += 1;
        }
        for r in 0..records.len() {
            starts[r + 1] += starts[r];
        }
        // A sibling evidence type (a checkpoint, a memory op) is of no run.
        let run_of: Vec<u32> = (records.iter())
            .enumerate()
            .map(|(ri, record)| {
                if !record.kind().is_record() {
                    return u32::MAX;
                }
                let run = self.run_of(record.run_id().unwrap_or(""));
                self.runs[run as usize].records.push(ri as u32);
                run
            })
            .collect();
        for ri in self.lineages.ancestors_first() {
            let (run, chain) = (run_of[ri as usize], self.lineages.of(ri as usize));
            for i in starts[ri as usize] as usize..starts[ri as usize + 1] as usize {
                let (f, pos) = (facts[i], located[i].1);
                let n = self.nodes.len() as NodeId;
                if let Some(id) = f.id() {
                    let of_node = |m: NodeId| node_facts.get(m as usize).copied();
                    let seen = (self.lineages.seen_from(chain))
                        .find_map(|c| self.index.node(&self.nodes, c, id, of_node));
                    if let Some(first) = seen {
                        let same = node_facts[first as usize].copy_digest == f.copy_digest;
                        self.add_copy(first, records, component, ri, pos, same);
                        continue;
                    }
                    let key = (chain, run);
                    self.index.insert_node(&self.nodes, key, id, n, of_node);
                }
                node_at[i] = n;
                node_facts.push(f);
                self.nodes.push(ActionNode {
                    record: ri,
                    pos,
                    run,
                    chain,
                    copies: 1,
                    time: Number::new(f.time()),
                    parent: None,
                });
                self.runs[run as usize].nodes.push(n);
            }
        }
        (node_at, node_facts)
    }

    /// The run of `run_id`, made when it is new.
    fn run_of(&mut self, run_id: &str) -> u32 {
        if let Some(run) = self.index.run(&self.runs, run_id) {
            return run;
        }
        let run = self.runs.len() as u32;
        self.runs.push(Run {
            id: run_id.to_string(),
            nodes: Vec::new(),
            records: Vec::new(),
        });
        self.index.insert_run(&self.runs, run);
        run
    }

    /// Counts a copy of node `n` found at `pos` of record `ri`, and reports it when it
    /// differs from the first copy within one record chain (V17). `same`: the two copies'
    /// digests agree ([`ActionFacts::copy_digest`]), so neither record is read again.
    fn add_copy(
        &mut self,
        n: NodeId,
        records: &[&Record],
        component: &[u32],
        ri: u32,
        pos: u32,
        same: bool,
    ) {
        let node = &mut self.nodes[n as usize];
        node.copies += 1;
        let first_record = node.record;
        if same || component[first_record as usize] != component[ri as usize] {
            return;
        }
        // Both copies read for the comparison alone when their trees were let go.
        let differs = records[first_record as usize].with_record(|first| {
            records[ri as usize].with_record(|later| {
                let first = first.action_at(node.pos as usize)?;
                let later = later.action_at(pos as usize)?;
                (first.0 != later.0).then(|| changed_fields(first.0, later.0))
            })
        });
        if let Some(fields) = differs {
            self.problems.push(GraphProblem::Rewritten {
                node: n,
                first_record,
                record: ri,
                fields,
            });
        }
    }

    fn resolve_parents(&mut self, facts: &[&ActionFacts]) {
        // Action id → node when the id occurs in exactly one run (built when first needed).
        let mut unique: Option<HashMap<&str, Option<NodeId>>> = None;
        let mut edges: Vec<(NodeId, NodeId, Edge)> = Vec::new();
        for (n, f) in facts.iter().enumerate() {
            let node = &self.nodes[n];
            let Some(parent_id) = f.parent() else {
                continue;
            };
            if Some(parent_id) == f.id() {
                self.problems
                    .push(GraphProblem::SelfParent { node: n as NodeId });
                continue;
            }
            let of_node = |m: NodeId| facts.get(m as usize).copied();
            let in_chain = (self.lineages.seen_from(node.chain))
                .find_map(|c| self.index.node(&self.nodes, c, parent_id, of_node));
            let in_run = || {
                self.index
                    .nodes(&self.nodes, Key::Run(node.run), parent_id, of_node)
            };
            let found = match in_chain {
                Some(p) => Some(p),
                None => match in_run().as_slice() {
                    [] => None,
                    [p] => Some(*p),
                    several => {
                        self.problems.push(GraphProblem::AmbiguousParent {
                            node: n as NodeId,
                            parent_id: parent_id.to_string(),
                            candidates: several.to_vec(),
                        });
                        continue;
                    }
                },
            };
            let (parent, kind) = match found {
                Some(p) => (p, Edge::Parent),
                None => {
                    if let Some(Some(p)) = unique
                        .get_or_insert_with(|| {
                            let mut u: HashMap<&str, Option<NodeId>> = HashMap::default();
                            for (n, id) in facts.iter().enumerate() {
                                let Some(id) = id.id() else { continue };
                                u.entry(id)
                                    .and_modify(|v| *v = None)
                                    .or_insert(Some(n as NodeId));
                            }
                            u
                        })
                        .get(parent_id)
                    {
                        (*p, Edge::ParentCrossRun)
                    } else {
                        self.problems.push(GraphProblem::DanglingParent {
                            node: n as NodeId,
                            parent_id: parent_id.to_string(),
                        });
                        continue;
                    }
                }
            };
            self.nodes[n].parent = Some(parent);
            edges.push((parent, n as NodeId, kind));
        }
        edges.sort_unstable_by_key(|&(parent, child, _)| (parent, child));
        let children = Csr::from_sorted_edges(&edges);
        debug_assert!(
            children.is_ok(),
            "one edge per child: sorted, they are unique"
        );
        self.children = children.unwrap_or_default();
        while self.children.node_count() < self.nodes.len() {
            self.children.add_node(());
        }
    }

    /// Each node has at most one parent, so one walk per node, stopping at anything
    /// already visited, finds every cycle in linear time.
    fn find_cycles(&mut self) {
        const NEW: u8 = 0;
        const ON_PATH: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; self.nodes.len()];
        for start in 0..self.nodes.len() {
            let mut path = Vec::new();
            let mut cur = Some(start as NodeId);
            while let Some(n) = cur {
                match state[n as usize] {
                    DONE => break,
                    ON_PATH => {
                        let at = path.iter().position(|p| *p == n).unwrap_or(0);
                        self.problems.push(GraphProblem::Cycle {
                            nodes: path[at..].to_vec(),
                        });
                        break;
                    }
                    _ => {
                        state[n as usize] = ON_PATH;
                        path.push(n);
                        cur = self.nodes[n as usize].parent;
                    }
                }
            }
            for n in path {
                state[n as usize] = DONE;
            }
        }
    }

    fn group_causal(&mut self, facts: &[&ActionFacts]) {
        self.causal = groups_in_time_order(&self.nodes, facts, |f| f.causal_chain_id())
            .into_iter()
            .map(|(id, nodes)| CausalGroup {
                id: id.to_string(),
                nodes,
            })
            .collect();
    }

    /// The node of `(run_id, action_id)` in the graph over `corpus` when exactly one
    /// emitter chain of the run holds that id (never one picked of several:
    /// [`Graph::find_in_run`] lists them).
    pub fn find(&self, corpus: &Corpus, run_id: &str, action_id: &str) -> Option<NodeId> {
        match self.find_in_run(corpus, run_id, action_id).as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// Every node of `(run_id, action_id)`: one per emitter chain (and fork branch) of
    /// the run holding that id, in node order.
    pub fn find_in_run(&self, corpus: &Corpus, run_id: &str, action_id: &str) -> Vec<NodeId> {
        let Some(run) = self.index.run(&self.runs, run_id) else {
            return Vec::new();
        };
        let of_node = |n: NodeId| self.facts(corpus, n);
        self.index
            .nodes(&self.nodes, Key::Run(run), action_id, of_node)
    }

    /// The node of `(run_id, action_id)` first stored on the chain named `chain`.
    pub fn find_on_chain(
        &self,
        corpus: &Corpus,
        run_id: &str,
        action_id: &str,
        chain: &super::lineage::ChainName,
    ) -> Option<NodeId> {
        (self.find_in_run(corpus, run_id, action_id).into_iter())
            .find(|&n| self.chain_name(corpus, n) == *chain)
    }

    /// The node of `action_id` as record `record` (flat index) sees it: on its emitter
    /// chain or a chain it continues (what the record's own violations and decisions name).
    pub fn find_from_record(
        &self,
        corpus: &Corpus,
        record: usize,
        action_id: &str,
    ) -> Option<NodeId> {
        let of_node = |n: NodeId| self.facts(corpus, n);
        (self.lineages.seen_from(self.lineages.of(record)))
            .find_map(|c| self.index.node(&self.nodes, c, action_id, of_node))
    }

    /// Every node whose action id is `action_id`, in any run and chain, in node order.
    pub fn find_all(&self, corpus: &Corpus, action_id: &str) -> Vec<NodeId> {
        let mut found: Vec<NodeId> = (0..self.runs.len() as u32)
            .flat_map(|run| {
                let of_node = |n: NodeId| self.facts(corpus, n);
                self.index
                    .nodes(&self.nodes, Key::Run(run), action_id, of_node)
            })
            .collect();
        found.sort_unstable();
        found
    }

    /// The emitter chain of a node, as output names it.
    pub fn chain_name(&self, corpus: &Corpus, node: NodeId) -> super::lineage::ChainName {
        let chain = self.nodes[node as usize].chain;
        let head = corpus.record(self.lineages.head_of(chain) as usize);
        super::lineage::ChainName {
            head: head.source.to_string(),
            start: self.lineages.chains[chain as usize].start,
            signer: head.key_id().map(str::to_string),
        }
    }

    /// The children of a node (nodes whose parent it is), in time order.
    pub fn children(&self, node: NodeId) -> Vec<NodeId> {
        if node as usize >= self.children.node_count() {
            return Vec::new();
        }
        let mut kids = self.children.neighbors_slice(node).to_vec();
        kids.sort_by(|a, b| {
            time_order(
                self.nodes[*a as usize].time(),
                self.nodes[*b as usize].time(),
            )
            .then(a.cmp(b))
        });
        kids
    }

    /// True when the parent edge of `node` crosses runs.
    pub fn parent_is_cross_run(&self, node: NodeId) -> bool {
        let parent = self.nodes.get(node as usize).and_then(|n| n.parent);
        parent.is_some_and(|p| {
            self.children
                .edges(p)
                .any(|e| e.target() == node && *e.weight() == Edge::ParentCrossRun)
        })
    }

    /// The facts of a node's action (read without its record's JSON).
    pub fn facts<'c>(&self, corpus: &'c Corpus, node: NodeId) -> Option<&'c ActionFacts> {
        let n = self.nodes.get(node as usize)?;
        corpus.record(n.record as usize).facts().actions.at(n.pos)
    }

    /// The stored action of a node.
    pub fn action<'c>(&self, corpus: &'c Corpus, node: NodeId) -> Option<(&'c Record, Action<'c>)> {
        let n = &self.nodes[node as usize];
        let record = corpus.record(n.record as usize);
        record.action_at(n.pos as usize).map(|a| (record, a))
    }
}

/// Values for some of the nodes, looked up by node in O(1): a slot per node into the
/// values present, kept where they were made (never moved, never a room per node that
/// has none).
#[derive(Clone, Debug)]
pub struct NodeMap<T> {
    slot: Vec<u32>,
    values: Vec<T>,
}

impl<T> Default for NodeMap<T> {
    fn default() -> Self {
        NodeMap {
            slot: Vec::new(),
            values: Vec::new(),
        }
    }
}

impl<T> NodeMap<T> {
    /// A map over `nodes` nodes where `keys[i]` has `values[i]`; keys are distinct.
    pub fn from_parts(nodes: usize, keys: &[NodeId], values: Vec<T>) -> NodeMap<T> {
        debug_assert_eq!(keys.len(), values.len());
        let mut slot = vec![u32::MAX; nodes];
        for (i, &n) in keys.iter().enumerate() {
            if let Some(s) = slot.get_mut(n as usize) {
                *s = i as u32;
            }
        }
        NodeMap { slot, values }
    }

    /// The value of a node.
    pub fn get(&self, node: &NodeId) -> Option<&T> {
        self.values.get(*self.slot.get(*node as usize)? as usize)
    }

    /// Every value.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.values.iter()
    }

    /// Number of nodes with a value.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when no node has a value.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl<T> std::ops::Index<&NodeId> for NodeMap<T> {
    type Output = T;
    fn index(&self, node: &NodeId) -> &T {
        self.get(node).expect("no value for this node")
    }
}

/// The indices paired with `node` in a list of (node, index) pairs sorted by node.
pub fn indices_of(pairs: &[(NodeId, u32)], node: NodeId) -> impl Iterator<Item = usize> + '_ {
    let start = pairs.partition_point(|(n, _)| *n < node);
    pairs[start..]
        .iter()
        .take_while(move |(n, _)| *n == node)
        .map(|(_, i)| *i as usize)
}

/// Nodes grouped by a key (`keys` has one per node, in node order): groups in order of
/// first appearance, each group's nodes in time order. Group numbers come from one
/// hash look-up per node; members are gathered with a counting sort and each group is
/// sorted in parallel.
pub fn groups_in_time_order<'a, T>(
    nodes: &[ActionNode],
    items: &'a [T],
    key: impl Fn(&'a T) -> Option<&'a str>,
) -> Vec<(&'a str, Vec<NodeId>)> {
    let mut index: HashMap<&str, u32> = HashMap::default();
    let mut names: Vec<&str> = Vec::new();
    let group_of: Vec<u32> = items
        .iter()
        .map(key)
        .map(|key| match key {
            Some(key) => *index.entry(key).or_insert_with(|| {
                names.push(key);
                names.len() as u32 - 1
            }),
            None => u32::MAX,
        })
        .collect();
    let mut start = vec![0usize; names.len() + 1];
    for &g in group_of.iter().filter(|g| **g != u32::MAX) {
        start[g as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut members = vec![0 as NodeId; start[names.len()]];
    let mut next = start.clone();
    for (n, &g) in group_of.iter().enumerate().filter(|(_, g)| **g != u32::MAX) {
        members[next[g as usize]] = n as NodeId;
        next[g as usize] += 1;
    }
    names
        .par_iter()
        .enumerate()
        .map(|(g, name)| {
            let mut group = members[start[g]..start[g + 1]].to_vec();
            group.sort_by(|a, b| time_order(nodes[*a as usize].time(), nodes[*b as usize].time()));
            (*name, group)
        })
        .collect()
}

/// Orders optional times: known times ascending (total order), unknown last.
pub fn time_order(a: Option<f64>, b: Option<f64>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}

/// For each record, the first record holding its canonical hash (itself, unless it is a
/// copy), and the record its `prev_record_hash` names (the first such record when
/// several share a hash).
fn record_links(records: &[&Record], hashes: &[Sha256Digest]) -> (Vec<u32>, Vec<Option<u32>>) {
    let mut by_hash: HashMap<Sha256Digest, u32> =
        HashMap::with_capacity_and_hasher(records.len(), rustc_hash::FxBuildHasher);
    let vertex: Vec<u32> = (hashes.iter().enumerate())
        .map(|(i, h)| *by_hash.entry(*h).or_insert(i as u32))
        .collect();
    let prev = records
        .iter()
        .enumerate()
        .map(|(i, r)| match r.link() {
            Link::Hash(h) => h
                .digest()
                .and_then(|h| by_hash.get(&h).copied())
                .filter(|p| *p as usize != i),
            _ => None,
        })
        .collect();
    (vertex, prev)
}

/// Connected components of the record-chain links.
fn components(prev: &[Option<u32>]) -> Vec<u32> {
    let mut c = super::groups::Components::new(prev.len());
    for (i, p) in prev.iter().enumerate() {
        if let Some(p) = p {
            c.join(i as u32, *p);
        }
    }
    (0..prev.len() as u32).map(|i| c.root(i)).collect()
}

/// Keys whose values differ between two copies of an action.
fn changed_fields(a: &Obj, b: &Obj) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for (k, _) in a
        .effective_members()
        .into_iter()
        .chain(b.effective_members())
    {
        let key = k.lossy();
        if a.get(&key) != b.get(&key) && !keys.iter().any(|x| *x == key) {
            keys.push(key.into_owned());
        }
    }
    keys
}
