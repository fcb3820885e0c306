//! Each action's views, kept in the evidence index for an opening so that `show` answers
//! for stores unchanged to the byte without opening them: what a view takes from the
//! rest of the evidence ([`Surroundings`]: run, copies, lease, badge, state gaps,
//! findings) is kept per action, in parts by action id ([`Index::remember_parts`]), and
//! where each record is, in parts by record number; the action's own record and its
//! parent's are read from their files, bound to the canonical hash they were verified
//! with. Reading one action's views reads four parts, whatever the size of the store.
//! A table is kept per set of files ([`Index::kept_key`]), for the bytes they had: the
//! table of a store that grew replaces the one of its shorter self.

use super::cache::{Index, Parts};
use crate::analysis::comparability::Comparability;
use crate::analysis::gathered::{Batch, NodeAt, NodeNumbers, Placed};
use crate::analysis::graph::NodeId;
use crate::analysis::lease::LeaseView;
use crate::analysis::{ActionReport, StateGap, Surroundings};
use crate::load::spill::{Piece, Spill};
use crate::load::{Corpus, LoadError};
use crate::model::finding::Finding;
use crate::model::{Record, Source, Span};
use crate::verify::RecordResult;
use crate::verify::encoding::decode_hex;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Actions in a part, about: a part is read whole for one action.
const ACTIONS_PER_PART: usize = 2048;

/// Records in a part.
const RECORDS_PER_PART: usize = 4096;

/// Parts made at a time (on every core), so the table is never all in memory.
const PARTS_AT_ONCE: usize = 16;

/// Part 0: what the table is of. Then `action_parts` parts of actions (by action id),
/// then the parts of record places (by record number).
#[derive(Serialize, Deserialize)]
struct Head {
    /// The inputs' paths, as loaded ([`RecordPlace::input`] indexes them).
    inputs: Vec<String>,
    /// How many records the opening has (checked against the index's entries).
    records: usize,
    /// The inputs' load errors, rendered ([`LoadError::render`]).
    errors: Vec<String>,
    action_parts: usize,
}

/// Where a record is: its line in its file.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RecordPlace {
    /// Index into [`Head::inputs`].
    input: u32,
    line: usize,
    /// The record's position in its file.
    index: usize,
    offset: u64,
    len: u32,
    /// The record's canonical SHA-256, hex: what is read again must still hash to it.
    canonical: String,
}

/// Where an action is: its record's number in the opening and its position in `actions`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Place {
    record: u32,
    pos: u32,
}

/// One action as kept: where it and its parent are, and its [`Surroundings`] (what is
/// absent or empty is left out: a table has an entry per action).
#[derive(Debug, Serialize, Deserialize)]
pub struct KeptAction {
    run_id: String,
    action_id: String,
    chain: crate::analysis::lineage::ChainName,
    /// Its record's verdict in short.
    verdict: crate::verify::verdict::RecordVerdict,
    at: Place,
    copies: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent: Option<Place>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lease: Option<LeaseView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    badge: Option<Comparability>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    state_gaps: Vec<StateGap>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    findings: Vec<Finding>,
}

/// Each action's views kept for an opening of stores unchanged to the byte
/// ([`Table::open`]).
pub struct Table {
    parts: Parts,
    head: Head,
}

/// The part `id`'s actions are in, of `parts` (parts of actions start at 1).
fn part_of(id: &str, parts: usize) -> usize {
    1 + (id_hash(id) % parts as u64) as usize
}

/// What chooses the part of the actions whose id is `id`.
fn id_hash(id: &str) -> u64 {
    let hash = blake3::hash(id.as_bytes());
    u64::from_le_bytes(hash.as_bytes()[..8].try_into().unwrap_or_default())
}

/// The kind of what this table is, kept in the index ([`Index::kept_key`]).
const ACTIONS: &str = "actions";

/// True when the table kept for the files of the opening `opening` of `corpus` was made
/// for that opening (whether it is sound is known only once it is read).
pub fn is_kept(index: &Index, corpus: &Corpus, opening: &str) -> bool {
    index.keeps(&Index::kept_key_of(ACTIONS, &corpus.inputs), opening)
}

/// Each action's views, gathered an analysed batch at a time ([`Rows::add`]) into a
/// [`Spill`] until [`Rows::keep`] puts them in their parts, in the order of their
/// places: the same table however the opening was split into batches.
#[derive(Debug)]
pub struct Rows {
    spill: Spill,
    views: Vec<Row>,
    /// The rows with state gaps, by number, with each gap's two ends: the node numbers
    /// they are written with are known only once every batch is in.
    gap_ends: Vec<(u32, Box<[NodeAt]>)>,
}

/// One action's view in the spill, and what orders it.
#[derive(Debug)]
struct Row {
    /// What its part is chosen by ([`id_hash`]).
    hash: u64,
    at: Place,
    piece: Piece,
    /// Its number, in the order rows were added.
    number: u32,
}

/// Actions made at a time (on every core) by [`Rows::add`].
const ROWS_AT_ONCE: usize = 4096;

impl Rows {
    /// No rows yet, to be held in `spill`.
    pub fn new(spill: Spill) -> Rows {
        Rows {
            spill,
            views: Vec::new(),
            gap_ends: Vec::new(),
        }
    }

    /// Adds the view of each action of `batch` (whose nodes are `placed`). Err — and
    /// then nothing is to be kept — when a record has no line to be read again from (a
    /// document), a lease view would not read back as it is, or the spill cannot be
    /// written.
    pub fn add(&mut self, batch: &Batch<'_>, placed: &Placed) -> std::io::Result<()> {
        let (corpus, analysis) = (batch.corpus, batch.analysis);
        if !corpus.records().all(|r| r.span.is_some()) {
            return Err(not_kept());
        }
        let g = &analysis.graph;
        let nodes: Vec<(NodeId, &str)> = (0..g.nodes.len() as NodeId)
            .filter_map(|n| Some((n, g.facts(corpus, n)?.id()?)))
            .collect();
        let named = analysis.graph.findings_by_node(corpus, batch.findings);
        let place = |n: NodeId| {
            let node = &g.nodes[n as usize];
            Place {
                record: batch.number(node.record),
                pos: node.pos,
            }
        };
        let row = |&(n, id): &(NodeId, &str)| -> Option<(Vec<u8>, Vec<NodeAt>)> {
            let node = &g.nodes[n as usize];
            let lease = analysis.leases.by_node.get(&n).cloned();
            if lease.as_ref().is_some_and(|l| !reads_back(l)) {
                return None;
            }
            let verdict = batch.verdicts.get(place(n).record as usize)?;
            let state_gaps: Vec<StateGap> = analysis.gaps_of(n).cloned().collect();
            let ends = (state_gaps.iter())
                .flat_map(|gap| [placed.at(g, gap.from), placed.at(g, gap.to)])
                .collect();
            let kept = KeptAction {
                run_id: g.runs[node.run as usize].id.clone(),
                action_id: id.to_string(),
                chain: g.chain_name(corpus, n),
                verdict: crate::verify::verdict::RecordVerdict::of(verdict),
                at: place(n),
                copies: node.copies,
                parent: node.parent.map(place),
                lease,
                badge: analysis.badges.get(&n).map(|(b, _)| b.clone()),
                state_gaps,
                findings: (named.get(&n).into_iter().flatten())
                    .map(|i| batch.findings[*i as usize].clone())
                    .collect(),
            };
            Some((serde_json::to_vec(&kept).ok()?, ends))
        };
        for chunk in nodes.chunks(ROWS_AT_ONCE) {
            let made: Option<Vec<_>> = chunk.par_iter().map(row).collect();
            for (&(n, id), (bytes, ends)) in chunk.iter().zip(made.ok_or_else(not_kept)?) {
                let number = u32::try_from(self.views.len()).map_err(|_| not_kept())?;
                if !ends.is_empty() {
                    self.gap_ends.push((number, ends.into_boxed_slice()));
                }
                self.views.push(Row {
                    hash: id_hash(id),
                    at: place(n),
                    piece: self.spill.put(&bytes)?,
                    number,
                });
            }
        }
        Ok(())
    }

    /// Keeps the rows added — their state gaps' ends numbered as `numbers` says — with
    /// where each record of `corpus` (the whole opening, verified with `verdicts`) is,
    /// for the opening `opening`.
    pub fn keep(
        self,
        index: &Index,
        opening: &str,
        corpus: &Corpus,
        verdicts: &[RecordResult],
        numbers: &NodeNumbers,
    ) -> std::io::Result<()> {
        let Rows {
            spill,
            views: mut rows,
            gap_ends,
        } = self;
        let spill = spill.finish()?;
        let action_parts = rows.len().div_ceil(ACTIONS_PER_PART).max(1);
        let part = |hash: u64| 1 + (hash % action_parts as u64) as usize;
        rows.par_sort_unstable_by_key(|r| (part(r.hash), r.at.record, r.at.pos));
        let mut in_part: Vec<&[Row]> = Vec::with_capacity(action_parts);
        let mut rest = &rows[..];
        for p in 1..=action_parts {
            let (these, after) = rest.split_at(rest.partition_point(|r| part(r.hash) == p));
            in_part.push(these);
            rest = after;
        }
        // A row with state gaps is written with the node numbers of their ends.
        let row_into = |r: &Row, out: &mut Vec<u8>| -> std::io::Result<()> {
            let Ok(at) = gap_ends.binary_search_by_key(&r.number, |(n, _)| *n) else {
                return spill.read_into(r.piece, out);
            };
            let mut kept: KeptAction = serde_json::from_slice(&spill.read(r.piece)?)?;
            for (gap, ends) in kept
                .state_gaps
                .iter_mut()
                .zip(gap_ends[at].1.chunks_exact(2))
            {
                gap.from = numbers.of(ends[0]).ok_or_else(not_kept)?;
                gap.to = numbers.of(ends[1]).ok_or_else(not_kept)?;
            }
            serde_json::to_writer(out, &kept)?;
            Ok(())
        };
        let actions = |rows: &&[Row]| -> std::io::Result<Vec<u8>> {
            let total: usize = rows.iter().map(|r| r.piece.bytes() + 1).sum();
            let mut part = Vec::with_capacity(total + 2);
            part.push(b'[');
            for (i, r) in rows.iter().enumerate() {
                if i > 0 {
                    part.push(b',');
                }
                row_into(r, &mut part)?;
            }
            part.push(b']');
            Ok(part)
        };
        let record_place = |i: usize| -> Option<RecordPlace> {
            let record = corpus.record(i);
            let span = record.span?;
            Some(RecordPlace {
                input: corpus.input_of(i) as u32,
                line: record.source.line,
                index: record.source.index,
                offset: span.offset,
                len: span.len,
                canonical: verdicts.get(i)?.canonical_sha256.to_string(),
            })
        };
        let records = |numbers: &std::ops::Range<usize>| -> std::io::Result<Vec<u8>> {
            let places: Option<Vec<RecordPlace>> = numbers.clone().map(record_place).collect();
            Ok(serde_json::to_vec(&places.ok_or_else(not_kept)?)?)
        };
        let head = Head {
            inputs: corpus.inputs.iter().map(|i| i.path.to_string()).collect(),
            records: corpus.len(),
            errors: corpus.errors().map(LoadError::render).collect(),
            action_parts,
        };
        let record_parts: Vec<std::ops::Range<usize>> = (0..corpus.len())
            .step_by(RECORDS_PER_PART)
            .map(|start| start..(start + RECORDS_PER_PART).min(corpus.len()))
            .collect();
        let count = 1 + action_parts + record_parts.len();
        let head = std::iter::once(serde_json::to_vec(&head).map_err(std::io::Error::from));
        let actions = in_part.chunks(PARTS_AT_ONCE).flat_map(|chunk| {
            let made: Vec<_> = chunk.par_iter().map(actions).collect();
            made
        });
        let records = record_parts.chunks(PARTS_AT_ONCE).flat_map(|chunk| {
            let made: Vec<_> = chunk.par_iter().map(records).collect();
            made
        });
        let key = Index::kept_key_of(ACTIONS, &corpus.inputs);
        index.remember_parts(&key, opening, count, head.chain(actions).chain(records))
    }
}

/// Why an action's views are not kept.
fn not_kept() -> std::io::Error {
    std::io::Error::other("an action's views cannot be kept as they are")
}

/// True when `lease` reads back from JSON as it is (a time that is not a finite number
/// would not): only then is it kept.
fn reads_back(lease: &LeaseView) -> bool {
    let back = serde_json::to_vec(lease).ok();
    back.and_then(|b| serde_json::from_slice::<LeaseView>(&b).ok())
        .as_ref()
        == Some(lease)
}

impl Table {
    /// What was kept for the opening of `paths` under the index's configuration, when
    /// every file `paths` name is unchanged to the byte ([`super::kept::unchanged_opening`])
    /// and what was kept is sound; `None` otherwise.
    pub fn open(index: &Index, paths: &[String]) -> Option<Table> {
        let kept = super::kept::unchanged_opening(paths, index, ACTIONS)?;
        let parts = index.open_parts(&kept.key, &kept.opening)?;
        let head: Head =
            (parts.read::<Head>(0)).filter(|h| h.records == kept.records && h.action_parts > 0)?;
        Some(Table { parts, head })
    }

    /// The inputs' load errors, rendered ([`LoadError::render`]).
    pub fn errors(&self) -> &[String] {
        &self.head.errors
    }

    /// Every action whose id is `action_id`, in any run (by record number and position);
    /// `None` when their part is not sound.
    pub fn find(&self, action_id: &str) -> Option<Vec<KeptAction>> {
        let part = part_of(action_id, self.head.action_parts);
        let actions: Vec<KeptAction> = self.parts.read(part)?;
        Some(
            (actions.into_iter())
                .filter(|a| a.action_id == action_id)
                .collect(),
        )
    }
}

/// An action's record and its parent's, read again from their files.
pub struct ReadAgain {
    record: Record,
    parent: Option<Record>,
}

impl Table {
    /// The records `action` needs, read again; `None` when one cannot be read as it was
    /// verified (its file changed since it was hashed) or its place is not sound.
    pub fn read(&self, action: &KeptAction) -> Option<ReadAgain> {
        Some(ReadAgain {
            record: self.read_record(action.at.record as usize)?,
            parent: match &action.parent {
                Some(p) => Some(self.read_record(p.record as usize)?),
                None => None,
            },
        })
    }

    /// Record number `number` of the opening, read again from its file.
    fn read_record(&self, number: usize) -> Option<Record> {
        let part = 1 + self.head.action_parts + number / RECORDS_PER_PART;
        let places: Vec<RecordPlace> = self.parts.read(part)?;
        let place = places.get(number % RECORDS_PER_PART)?;
        let source = Source {
            path: Arc::from(self.head.inputs.get(place.input as usize)?.as_str()),
            line: place.line,
            index: place.index,
        };
        let span = Span {
            offset: place.offset,
            len: place.len,
        };
        let canonical: [u8; 32] = decode_hex(&place.canonical)?.try_into().ok()?;
        let json = crate::load::reread(&source, span, Some(&canonical)).ok()?;
        Some(Record::new(source, Some(span), json))
    }
}

impl KeptAction {
    /// The run the action is in.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The emitter chain it was first stored on.
    pub fn chain(&self) -> &crate::analysis::lineage::ChainName {
        &self.chain
    }

    /// Every view of the action, from its records read again ([`Table::read`]).
    pub fn report<'a>(&'a self, read: &'a ReadAgain) -> Option<ActionReport<'a>> {
        let action = read.record.action_at(self.at.pos as usize)?;
        let parent = match (&read.parent, &self.parent) {
            (Some(record), Some(place)) => Some((record, record.action_at(place.pos as usize)?)),
            _ => None,
        };
        let around = Surroundings {
            run_id: &self.run_id,
            chain: self.chain.clone(),
            verdict: Some(self.verdict.clone()),
            copies: self.copies,
            parent,
            lease: self.lease.as_ref(),
            badge: self.badge.as_ref(),
            state_gaps: self.state_gaps.iter().collect(),
            findings: self.findings.iter().collect(),
        };
        Some(ActionReport::of(&read.record, action, around))
    }
}
