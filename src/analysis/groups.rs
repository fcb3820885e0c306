//! Evidence split into parts the analysis can take one at a time: every pass that reads
//! across records — a run's actions and copies, record links (V17 compares copies within
//! one record chain), leases, causal chains, parents found in another run — stays inside
//! one group, so analysing the groups apart finds what analysing everything at once does
//! (`evidence::complete_in_groups`).

use crate::canon::Sha256Digest;
use crate::load::Corpus;
use crate::model::{Link, Record};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::hash::BuildHasher;

/// Union–find over record numbers.
pub struct Components {
    parent: Vec<u32>,
}

impl Components {
    /// `n` records, each on its own.
    pub fn new(n: usize) -> Components {
        Components {
            parent: (0..n as u32).collect(),
        }
    }

    /// The representative of `x`'s component.
    pub fn root(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            self.parent[x as usize] = self.parent[self.parent[x as usize] as usize];
            x = self.parent[x as usize];
        }
        x
    }

    /// Puts `a` and `b` in one component.
    pub fn join(&mut self, a: u32, b: u32) {
        let (a, b) = (self.root(a), self.root(b));
        if a != b {
            self.parent[a as usize] = b;
        }
    }
}

/// What ties records together.
#[derive(Clone, Copy, Hash)]
enum Tie<'a> {
    Run(&'a str),
    /// A canonical hash, held or named by `prev_record_hash`.
    Hash(Sha256Digest),
    Lease(&'a str),
    Causal(&'a str),
    /// An action id some action in another run names as its parent.
    Id(&'a str),
}

/// Every tie of one record but the parents looked for in other runs: its run, its
/// canonical hash (`hash`) and the one it links to, its actions' leases and causal chains.
fn each_tie<'a>(record: &'a Record, hash: Sha256Digest, mut tie: impl FnMut(Tie<'a>)) {
    tie(Tie::Run(record.run_id().unwrap_or("")));
    tie(Tie::Hash(hash));
    if let Link::Hash(h) = record.link()
        && let Some(h) = h.digest()
    {
        tie(Tie::Hash(h));
    }
    for a in record.action_ids() {
        if let Some(lease) = a.scope_lease_id {
            tie(Tie::Lease(lease));
        }
        if let Some(causal) = a.causal_chain_id {
            tie(Tie::Causal(causal));
        }
    }
}

/// What ties one record to the others, for an engine that groups a store's records itself
/// ([`independent`]'s rule, spelled out): two records sharing one of `ties` (64-bit
/// hashes) are in one group; so are a record naming a parent in `parent_ids` that no
/// record of its run holds in its `action_ids`, and every record of another run holding
/// that id.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RecordTies<'a> {
    pub ties: Vec<u64>,
    /// The ids of its actions.
    pub action_ids: Vec<&'a str>,
    /// The parents its actions name that it does not hold itself (a parent it holds is
    /// in its run: it ties nothing).
    pub parent_ids: Vec<&'a str>,
}

/// The [`RecordTies`] of a record whose canonical hash is `hash`.
pub fn record_ties(record: &Record, hash: Sha256Digest) -> RecordTies<'_> {
    let mut out = RecordTies::default();
    each_tie(record, hash, |tie| {
        out.ties.push(rustc_hash::FxBuildHasher.hash_one(tie));
    });
    let actions = record.action_ids();
    out.action_ids.extend(actions.iter().filter_map(|a| a.id));
    let held: rustc_hash::FxHashSet<&str> = out.action_ids.iter().copied().collect();
    for a in &actions {
        out.parent_ids
            .extend(a.parent.filter(|p| !held.contains(p)));
    }
    out
}

/// Records joined by what they share: the first record of each tie, by the tie's 64-bit
/// hash (a store has a tie or two per record: the ties themselves would take ~50 bytes
/// each). Two ties with one hash join their records: more records analysed together,
/// never a difference in what is found.
struct Ties {
    components: Components,
    first: HashMap<u64, u32>,
}

impl Ties {
    /// Joins record `i` with every record tied by `tie` before it.
    fn tie(&mut self, tie: Tie<'_>, i: u32) {
        let key = rustc_hash::FxBuildHasher.hash_one(tie);
        let at = *self.first.entry(key).or_insert(i);
        self.components.join(i, at);
    }
}

/// The groups of records (flat indexes, ascending; groups in the order of their first
/// record) that no cross-record pass reads across. `hashes` are the records' canonical
/// hashes, in order. Ties are over-approximated (two records sharing a hash are grouped
/// even when no link reads it), which costs memory, never a difference in what is found.
pub fn independent(corpus: &Corpus, hashes: impl Iterator<Item = Sha256Digest>) -> Vec<Vec<u32>> {
    let mut ties = Ties {
        components: Components::new(corpus.len()),
        first: HashMap::default(),
    };
    // Parents not found in their own run: (record, run, parent id).
    let mut asked: Vec<(u32, &str, &str)> = Vec::new();
    for (i, (record, hash)) in corpus.records().zip(hashes).enumerate() {
        let i = i as u32;
        let run = record.run_id().unwrap_or("");
        each_tie(record, hash, |tie| ties.tie(tie, i));
        for a in record.action_ids() {
            if let Some(parent) = a.parent.filter(|p| Some(*p) != a.id) {
                asked.push((i, run, parent));
            }
        }
    }
    if !asked.is_empty() {
        // Which runs hold an action with each id asked for as a parent.
        let wanted: HashSet<&str> = asked.iter().map(|(_, _, p)| *p).collect();
        let mut held: HashSet<(&str, &str)> = HashSet::default();
        let mut holders: Vec<(u32, &str)> = Vec::new();
        for (i, record) in corpus.records().enumerate() {
            let run = record.run_id().unwrap_or("");
            for a in record.action_ids() {
                if let Some(id) = a.id.filter(|id| wanted.contains(id)) {
                    held.insert((run, id));
                    holders.push((i as u32, id));
                }
            }
        }
        // A parent missing from its run is looked for in every run: all of them join.
        let mut dangling: HashSet<&str> = HashSet::default();
        for (i, run, parent) in asked {
            if !held.contains(&(run, parent)) {
                dangling.insert(parent);
                ties.tie(Tie::Id(parent), i);
            }
        }
        for (i, id) in holders {
            if dangling.contains(id) {
                ties.tie(Tie::Id(id), i);
            }
        }
    }
    let mut number: HashMap<u32, usize> = HashMap::default();
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for i in 0..corpus.len() as u32 {
        let root = ties.components.root(i);
        let g = *number.entry(root).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    groups
}

/// Consecutive groups put together into batches of about `budget` records (a larger group
/// is a batch of its own), each batch's records ascending.
pub fn batches(groups: Vec<Vec<u32>>, budget: usize) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = Vec::new();
    let mut batch: Vec<u32> = Vec::new();
    for group in groups {
        if !batch.is_empty() && batch.len() + group.len() > budget {
            batch.sort_unstable();
            out.push(std::mem::take(&mut batch));
        }
        batch.extend(group);
    }
    if !batch.is_empty() {
        batch.sort_unstable();
        out.push(batch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_keep_groups_whole_and_records_ascending() {
        let groups = vec![vec![0, 3], vec![1], vec![2, 4, 5], vec![6]];
        assert_eq!(
            batches(groups.clone(), 3),
            vec![vec![0, 1, 3], vec![2, 4, 5], vec![6]]
        );
        assert_eq!(batches(groups.clone(), 1).len(), 4);
        assert_eq!(batches(groups, 100), vec![vec![0, 1, 2, 3, 4, 5, 6]]);
    }

    #[test]
    fn components_join_transitively() {
        let mut c = Components::new(5);
        c.join(0, 3);
        c.join(3, 4);
        assert_eq!(c.root(0), c.root(4));
        assert_ne!(c.root(0), c.root(1));
    }
}
