//! What answers kept in the evidence index are gathered from when the analysis is made a
//! batch at a time (`check`; the whole opening is one batch otherwise): the batch
//! ([`Batch`]), where each of its nodes stands in the graph of the whole opening
//! ([`Numbering`]: node numbers are the whole graph's, whatever the batches); what is
//! gathered waits in a [`Spill`](crate::load::spill::Spill).

use super::Analysis;
use super::graph::{Graph, NodeId};
use crate::load::Corpus;
use crate::model::finding::Finding;
use crate::verify::RecordResult;

/// One analysed batch of an opening's records.
pub struct Batch<'a> {
    pub corpus: &'a Corpus,
    pub analysis: &'a Analysis,
    /// The findings of the batch as the opening's findings are: without repeats, in
    /// order, fingerprinted.
    pub findings: &'a [Finding],
    /// The opening's verdicts, one per record.
    pub verdicts: &'a [RecordResult],
    /// Each record of `corpus`'s number in the opening (`None`: the same numbers).
    pub numbers: Option<&'a [u32]>,
}

impl<'a> Batch<'a> {
    /// The whole of an opening analysed at once, as one batch.
    pub fn whole(ev: super::evidence::EvidenceRef<'a>) -> Batch<'a> {
        Batch {
            corpus: ev.corpus,
            analysis: ev.analysis,
            findings: ev.findings,
            verdicts: &ev.report.records,
            numbers: None,
        }
    }

    /// Each record of the batch with its verdict, in the batch's order.
    pub fn records(
        &self,
    ) -> impl Iterator<Item = (&'a crate::model::Record, &'a RecordResult)> + '_ {
        (self.corpus.records().enumerate()).filter_map(|(r, record)| {
            Some((record, self.verdicts.get(self.number(r as u32) as usize)?))
        })
    }

    /// The number in the opening of record `r` of the batch (`u32::MAX` if it has none).
    pub fn number(&self, r: u32) -> u32 {
        (self.numbers).map_or(r, |n| n.get(r as usize).map_or(u32::MAX, |n| *n))
    }
}

/// A node as the whole opening's graph orders it: the record that made it — by the
/// record's place in the order records make nodes in
/// ([`Lineages::order_keys`](super::lineage::Lineages::order_keys)), which ends with its
/// number in the opening — and its rank among that record's nodes. Orders as the whole
/// graph numbers nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NodeAt {
    maker: (u32, u32, u32),
    rank: u32,
}

/// Where each node of one batch stands in the whole opening's graph ([`Numbering::add`]).
#[derive(Debug)]
pub struct Placed {
    /// Per record of the batch: its place among the makers of nodes.
    makers: Vec<(u32, u32, u32)>,
    /// Per record of the batch: the number of its first node in the batch's graph.
    first: Vec<NodeId>,
}

impl Placed {
    /// Node `n` of the batch's graph `g`.
    pub fn at(&self, g: &Graph, n: NodeId) -> NodeAt {
        let record = g.nodes[n as usize].record as usize;
        NodeAt {
            maker: self.makers[record],
            rank: n - self.first[record],
        }
    }
}

/// The records that made nodes, over every batch of an opening, and how many each made:
/// once all batches are in, the node numbers of the whole opening's graph
/// ([`Numbering::finish`]).
#[derive(Debug, Default)]
pub struct Numbering {
    makers: Vec<((u32, u32, u32), u32)>,
}

impl Numbering {
    /// Adds the makers of `batch`'s nodes; where its nodes stand.
    pub fn add(&mut self, batch: &Batch<'_>) -> Placed {
        let g = &batch.analysis.graph;
        let records = batch.corpus.len();
        // A record's nodes are numbered one after another, in the order of their makers.
        let mut first = vec![NodeId::MAX; records];
        let mut made = vec![0u32; records];
        for (n, node) in g.nodes.iter().enumerate() {
            let r = node.record as usize;
            first[r] = first[r].min(n as NodeId);
            made[r] += 1;
        }
        let key = g.lineages.order_keys(|r| batch.number(r));
        let makers: Vec<(u32, u32, u32)> = (0..records as u32).map(&key).collect();
        let making = makers.iter().zip(&made).filter(|(_, m)| **m > 0);
        self.makers
            .extend(making.map(|(maker, made)| (*maker, *made)));
        Placed { makers, first }
    }

    /// The number of each node in the whole opening's graph.
    pub fn finish(mut self) -> NodeNumbers {
        self.makers.sort_unstable_by_key(|(maker, _)| *maker);
        let mut next: NodeId = 0;
        let firsts = (self.makers.into_iter())
            .map(|(maker, made)| {
                let first = next;
                next = next.saturating_add(made);
                (maker, first)
            })
            .collect();
        NodeNumbers { firsts }
    }
}

/// Node numbers of the whole opening's graph ([`Numbering::finish`]).
#[derive(Debug)]
pub struct NodeNumbers {
    /// Each maker of nodes, in order, with the number of its first node.
    firsts: Vec<((u32, u32, u32), NodeId)>,
}

impl NodeNumbers {
    /// The number of the node at `at`; `None` for a node of no batch added.
    pub fn of(&self, at: NodeAt) -> Option<NodeId> {
        let i = (self.firsts)
            .binary_search_by_key(&at.maker, |(maker, _)| *maker)
            .ok()?;
        self.firsts[i].1.checked_add(at.rank)
    }
}
