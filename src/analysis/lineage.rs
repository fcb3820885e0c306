//! Emitter chains (verification.md e.3): the chain each record lies on, so that an action
//! is known by (chain, action id), never by (run, action id) — sub-agents share their
//! parent's `run_id` and its default ids `action-0…`.
//!
//! A chain starts at a head of the link graph (a genesis that something links to, or a
//! record whose link resolves to nothing) and at each branch of a fork (two records
//! claiming one predecessor: each branch is a chain of its own from the fork point). A
//! chain sees the actions of the chain it continues: a fork's branch those before the
//! fork, the suffix of a gap (F-CHAIN-GAP) those of its emitter's records before the gap.
//! A record with no link that nothing links to falls back to (run, signer key id), and
//! says so ([`Start::Unlinked`]). Copies of one record (equal chain hash) share its chain.

use crate::model::{Link, Record};
use rustc_hash::FxHashMap;

/// Index of a chain in [`Lineages`].
pub type ChainId = u32;

/// How a chain starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Start {
    /// A record without a link that later records link to.
    Genesis,
    /// A branch of a fork, after the record two branches claim.
    Fork,
    /// A record whose link resolves to no loaded record (or is not a hash).
    Orphan,
    /// A record whose link resolves to nothing, after the last loaded record of its
    /// emitter (the near side of F-CHAIN-GAP).
    Gap,
    /// Records with no link that nothing links to, grouped by run and signer key id.
    Unlinked,
}

impl Start {
    /// How the chain is named in output: what its identity rests on.
    pub fn name(self) -> &'static str {
        match self {
            Start::Genesis => "genesis",
            Start::Fork => "fork branch",
            Start::Orphan => "orphan head",
            Start::Gap => "after a gap",
            Start::Unlinked => "no links: run and signer key",
        }
    }
}

/// An emitter chain as output names it: its first record's `file:line` and how it
/// starts (`show --chain` takes the place).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChainName {
    pub head: String,
    pub start: Start,
    /// The key id that signed its first record, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
}

impl ChainName {
    /// True when `given` names this chain: its first record's `file:line`, with the file
    /// as loaded or its last path component.
    pub fn is(&self, given: &str) -> bool {
        let short = self.head.rsplit_once(['/', '\\']).map(|(_, s)| s);
        self.head == given || short == Some(given)
    }
}

impl std::fmt::Display for ChainName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}", self.head, self.start.name())?;
        match &self.signer {
            Some(key) => write!(f, "; signed by {key})"),
            None => write!(f, ")"),
        }
    }
}

/// One emitter chain (or one branch of a fork).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    /// The chain whose actions it also sees (the fork point's, or the one before a gap).
    pub parent: Option<ChainId>,
    /// Its first record (flat index): the chain's name in output is this record's place.
    pub head: u32,
    pub start: Start,
}

/// The chain of every record.
#[derive(Clone, Debug, Default)]
pub struct Lineages {
    /// Per flat record index.
    of_record: Vec<ChainId>,
    pub chains: Vec<Chain>,
}

const NONE: u32 = u32::MAX;

impl Lineages {
    /// The chains of `records`, where `prev[i]` is the record `i`'s link names (the first
    /// record holding that hash, never `i`) and `vertex[i]` the first record holding
    /// `i`'s own hash.
    pub fn build(records: &[&Record], prev: &[Option<u32>], vertex: &[u32]) -> Lineages {
        let n = records.len();
        let mut successors = vec![0u32; n];
        for i in (0..n).filter(|&i| vertex[i] as usize == i) {
            if let Some(p) = prev[i] {
                successors[vertex[p as usize] as usize] += 1;
            }
        }
        let mut out = Lineages {
            of_record: vec![NONE; n],
            chains: Vec::new(),
        };
        let mut unlinked: FxHashMap<(&str, &str), ChainId> = FxHashMap::default();
        // What a record's chain follows from: the first copy of its hash, else its link.
        let depends_on = |i: usize| {
            let v = vertex[i] as usize;
            if v == i {
                prev[i].map(|p| p as usize)
            } else {
                Some(v)
            }
        };
        let mut on_stack = vec![false; n];
        let mut stack: Vec<usize> = Vec::new();
        for i in 0..n {
            let mut cur = Some(i);
            while let Some(c) = cur.filter(|&c| out.of_record[c] == NONE && !on_stack[c]) {
                on_stack[c] = true;
                stack.push(c);
                cur = depends_on(c);
            }
            // Dependencies first; one still on the stack would be a cycle (which hashes
            // cannot make): the record then starts a chain.
            while let Some(c) = stack.pop() {
                on_stack[c] = false;
                let dep = depends_on(c).filter(|&d| out.of_record[d] != NONE);
                let v = vertex[c] as usize;
                out.of_record[c] = match dep {
                    Some(d) if v != c => out.of_record[d],
                    Some(p) if successors[p] > 1 => out.start(c, Start::Fork, Some(p)),
                    Some(p) => out.of_record[p],
                    None => match records[c].link() {
                        Link::Null | Link::Absent if successors[c] == 0 => {
                            let key = (
                                records[c].run_id().unwrap_or(""),
                                records[c].key_id().unwrap_or(""),
                            );
                            *unlinked
                                .entry(key)
                                .or_insert_with(|| out.start(c, Start::Unlinked, None))
                        }
                        Link::Null | Link::Absent => out.start(c, Start::Genesis, None),
                        _ => out.start(c, Start::Orphan, None),
                    },
                };
            }
        }
        out.join_gaps(records, vertex);
        out
    }

    /// A new chain starting at record `head`, continuing the chain of record `after`.
    fn start(&mut self, head: usize, start: Start, after: Option<usize>) -> ChainId {
        self.chains.push(Chain {
            parent: after.map(|p| self.of_record[p]),
            head: head as u32,
            start,
        });
        self.chains.len() as ChainId - 1
    }

    /// An orphan head whose emitter's earlier records are loaded (F-CHAIN-GAP's near
    /// side) continues their chain: the lost record's actions are not new executions.
    fn join_gaps(&mut self, records: &[&Record], vertex: &[u32]) {
        let orphans: Vec<ChainId> = (0..self.chains.len() as ChainId)
            .filter(|&c| self.chains[c as usize].start == Start::Orphan)
            .filter(|&c| matches!(records[self.head(c)].link(), Link::Hash(_)))
            .collect();
        if orphans.is_empty() {
            return;
        }
        let by_run = crate::verify::links::vertices_by_run(records, vertex);
        for c in orphans {
            let head = self.head(c);
            let follows = |p: usize| self.sees(self.of_record[p], c);
            let before = crate::verify::links::last_before(records, head, &by_run, follows);
            if let Some(p) = before {
                let chain = &mut self.chains[c as usize];
                chain.parent = Some(self.of_record[p]);
                chain.start = Start::Gap;
            }
        }
    }

    fn head(&self, chain: ChainId) -> usize {
        self.chains[chain as usize].head as usize
    }

    /// The chain of a record.
    pub fn of(&self, record: usize) -> ChainId {
        self.of_record[record]
    }

    /// The emitter chain `chain` belongs to: itself, or for the suffix after a gap the
    /// chain it continues (what one emitter wrote, in one lane).
    pub fn emitter(&self, chain: ChainId) -> ChainId {
        // A chain after a gap is its emitter's, continued; a fork's branch is its own.
        self.seen_from(chain)
            .find(|&c| {
                self.chains
                    .get(c as usize)
                    .is_none_or(|x| x.start != Start::Gap)
            })
            .unwrap_or(chain)
    }

    /// A chain and every chain it continues, nearest first.
    pub fn seen_from(&self, chain: ChainId) -> impl Iterator<Item = ChainId> + '_ {
        // Parents are set only to chains made earlier or checked by `sees`: no cycle, but
        // never loop on one anyway.
        let mut left = self.chains.len() + 1;
        std::iter::successors(Some(chain), move |&c| {
            left = left.checked_sub(1)?;
            self.chains.get(c as usize)?.parent
        })
    }

    /// True when `from` is `chain` or continues it.
    pub fn sees(&self, from: ChainId, chain: ChainId) -> bool {
        self.seen_from(from).any(|c| c == chain)
    }

    /// Every record (flat index) in load order, except that a record of a chain comes
    /// after every record of the chains it continues (a fork's shared prefix before its
    /// branches, whatever the files' order).
    pub fn ancestors_first(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.of_record.len() as u32).collect();
        if self.chains.iter().all(|c| c.parent.is_none()) {
            return order;
        }
        let key = self.order_keys(|r| r);
        order.sort_by_cached_key(|&r| key(r));
        order
    }

    /// What places a record in [`Lineages::ancestors_first`]'s order, each record
    /// numbered by `number` (increasing with the flat index — its number in a larger
    /// opening these records are whole groups of, where they keep their order): when it
    /// is ready — the last record of every chain it continues, or itself if later —, how
    /// many chains deep it is, and its number.
    pub fn order_keys(&self, number: impl Fn(u32) -> u32) -> impl Fn(u32) -> (u32, u32, u32) {
        let mut last = vec![0u32; self.chains.len()];
        for (r, &c) in self.of_record.iter().enumerate() {
            last[c as usize] = r as u32;
        }
        move |r: u32| {
            let chain = self.of_record[r as usize];
            let before = self.seen_from(chain).skip(1).map(|c| last[c as usize]);
            (
                number(before.max().unwrap_or(0).max(r)),
                self.seen_from(chain).count() as u32,
                number(r),
            )
        }
    }

    /// The chain's first record (flat index).
    pub fn head_of(&self, chain: ChainId) -> u32 {
        self.chains[chain as usize].head
    }
}
