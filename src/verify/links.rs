//! The link graph over every loaded record at once (verification.md §e.2): records
//! indexed by their chain hash `H`, `prev_record_hash` followed to its target wherever
//! it was loaded from. It yields one path per emitter chain with its e.1 status in link
//! order, and names what file order cannot see: forks, duplicated records and gaps.
//!
//! A vertex is one distinct `H` (its first copy stands for it; later copies are
//! duplicates). Heads are records with no link (genesis) or a link that resolves to
//! nothing (orphan heads). Paths run from each head to each leaf, so the branches of a
//! fork share their prefix.

use super::chain::ChainStatus;
use crate::canon::Sha256Digest;
use crate::model::finding::{Finding, Location, Severity};
use crate::model::{Link, Record};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Where a record is: its file and its 0-based position in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecordAt {
    /// Its file, shared with the record's source (a path lists every record it holds).
    pub path: std::sync::Arc<str>,
    pub index: usize,
    /// 1-based line, for messages (not output: the pinned JSON is `{path, index}`).
    #[serde(skip)]
    pub line: usize,
}

impl RecordAt {
    /// `file:line`, with the file's last path component only.
    pub fn short(&self) -> String {
        format!(
            "{}:{}",
            crate::model::text::file_name(&self.path),
            self.line
        )
    }

    pub(super) fn of(record: &Record) -> RecordAt {
        RecordAt {
            path: record.source.path.clone(),
            index: record.source.index,
            line: record.source.line,
        }
    }
}

/// A chain path's records in link order, written as a list of [`RecordAt`] (file and
/// position) but kept as each record's position alone, the files once for each run of
/// records in one, and the first and last records whole (their lines name the path in
/// messages): four bytes a record where a `RecordAt` takes 32, and a store's paths list
/// every record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathRecords {
    /// Each record's position in its file.
    positions: Vec<u32>,
    /// The files in link order, each with how many consecutive records it holds.
    files: Vec<(std::sync::Arc<str>, u32)>,
    ends: Option<Box<[RecordAt; 2]>>,
}

impl PathRecords {
    fn of<'a>(records: impl ExactSizeIterator<Item = &'a Record>) -> PathRecords {
        let mut out = PathRecords {
            positions: Vec::with_capacity(records.len()),
            ..PathRecords::default()
        };
        let (mut first, mut last) = (None, None);
        for r in records {
            out.positions.push(r.source.index as u32);
            match out.files.last_mut() {
                Some((file, n)) if *file == r.source.path => *n += 1,
                _ => out.files.push((r.source.path.clone(), 1)),
            }
            first.get_or_insert(r);
            last = Some(r);
        }
        out.ends = (first.zip(last)).map(|(f, l)| Box::new([RecordAt::of(f), RecordAt::of(l)]));
        out
    }

    /// How many records the path lists.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// True when it lists none.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// The first record.
    pub fn first(&self) -> Option<&RecordAt> {
        self.ends.as_ref().map(|e| &e[0])
    }

    /// The last record.
    pub fn last(&self) -> Option<&RecordAt> {
        self.ends.as_ref().map(|e| &e[1])
    }

    /// The files the path runs through, in link order (a file again after another is
    /// named again).
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|(f, _)| &**f)
    }

    /// Each record's file and position in it, in link order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, usize)> {
        let files = (self.files.iter()).flat_map(|(f, n)| (0..*n).map(move |_| &**f));
        files.zip(self.positions.iter().map(|&p| p as usize))
    }
}

impl Serialize for PathRecords {
    /// As the list of [`RecordAt`] it stands for: `{path, index}` each.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct At<'a> {
            path: &'a str,
            index: usize,
        }
        s.collect_seq(self.iter().map(|(path, index)| At { path, index }))
    }
}

/// One maximal path of the link graph (one emitter chain, or one branch of a fork).
#[derive(Clone, Debug, PartialEq)]
pub struct ChainPath {
    /// e.1 status computed in link order.
    pub status: ChainStatus,
    /// The records in link order (and the files they are in: [`PathRecords::files`]).
    pub records: PathRecords,
    /// The record whose link is not a hash string (the only way a path breaks).
    pub broken_at: Option<RecordAt>,
    /// Set when a branch is listed from its fork only, because listing every branch from
    /// its head would exceed the output budget (pathological fork combs): the record the
    /// branch's first listed record links to.
    pub continues: Option<RecordAt>,
    /// The first record on the path that two records claim as their predecessor: the
    /// path is one branch of a fork from there (an intact branch is still a fork).
    pub forked_at: Option<RecordAt>,
    /// The furthest record on the path a verified anchor covers (`--anchors`): the
    /// records after it are unanchored.
    pub anchored_through: Option<super::anchors::AnchoredThrough>,
    /// Flat indices of the records listed (not output).
    pub members: Vec<u32>,
}

impl Serialize for ChainPath {
    /// `status`, `records`, `files` (in link order), `broken_at`, and `continues`,
    /// `forked_at` and `anchored_through` when set.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("ChainPath", 7)?;
        out.serialize_field("status", &self.status)?;
        out.serialize_field("records", &self.records)?;
        out.serialize_field("files", &self.records.files().collect::<Vec<_>>())?;
        out.serialize_field("broken_at", &self.broken_at)?;
        match &self.continues {
            Some(c) => out.serialize_field("continues", c)?,
            None => out.skip_field("continues")?,
        }
        match &self.forked_at {
            Some(f) => out.serialize_field("forked_at", f)?,
            None => out.skip_field("forked_at")?,
        }
        match &self.anchored_through {
            Some(a) => out.serialize_field("anchored_through", a)?,
            None => out.skip_field("anchored_through")?,
        }
        out.end()
    }
}

/// What the link graph says about a set of records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkGraph {
    pub paths: Vec<ChainPath>,
    /// Per flat record index: the worst status of the paths through it.
    pub record_status: Vec<ChainStatus>,
    /// F-CHAIN-FORK, F-DUPLICATE-RECORD and F-CHAIN-GAP, each with the flat index of the
    /// record it is shown on.
    pub findings: Vec<(usize, Finding)>,
    /// The records two or more distinct records claim as their predecessor (flat
    /// indices, ascending): each a fork point.
    pub forks: Vec<u32>,
    /// Per flat record index, the fork point of a path through it ([`NONE`] when none);
    /// empty when nothing forked.
    fork_of: Vec<u32>,
    /// True when one `H` is held by records that differ in their other bytes.
    pub conflicting_duplicates: bool,
    /// True when an anchor shows a cut tail or does not verify ([`super::anchors`]).
    pub anchors_fail: bool,
    /// F-TAIL-TRUNCATED and F-ANCHOR-INVALID of anchors that concern no loaded record:
    /// the evidence's findings, on no record.
    pub unplaced: Vec<Finding>,
}

impl LinkGraph {
    /// True when some record has two distinct successors.
    pub fn forked(&self) -> bool {
        !self.forks.is_empty()
    }

    /// The fork point of a path through record `i` (flat index), when one forks.
    pub fn fork_of(&self, i: usize) -> Option<usize> {
        (self.fork_of.get(i).copied()).and_then(|f| (f != NONE).then_some(f as usize))
    }

    /// The chain part of `check` passes: every path intact or not-present, no fork, no
    /// `H` held by two different records, and no anchor failing.
    pub fn passes(&self) -> bool {
        !self.forked()
            && !self.conflicting_duplicates
            && !self.anchors_fail
            && self
                .paths
                .iter()
                .all(|p| matches!(p.status, ChainStatus::Intact | ChainStatus::NotPresent))
    }
}

/// How a head starts its path.
#[derive(Clone, Copy, PartialEq)]
enum Head {
    /// `null` or no `prev_record_hash`.
    Genesis,
    /// A hash that resolves to no loaded record.
    Dangling,
    /// A link that is not a string: present and mismatching.
    Malformed,
}

/// Builds the link graph; `records[i]` has chain hash `hashes[i]` (flat order: input
/// order, then file order).
pub fn build(records: &[&Record], hashes: &[Sha256Digest]) -> LinkGraph {
    let n = records.len();
    let by_hash = ByHash::new(hashes);
    let vertex = by_hash.vertices();
    let mut graph = LinkGraph {
        record_status: vec![ChainStatus::NotPresent; n],
        ..LinkGraph::default()
    };
    duplicates(records, &vertex, &mut graph);

    // Each vertex's predecessor, and the heads, over vertices only.
    let mut predecessor: Vec<u32> = vec![NONE; n];
    let mut heads: Vec<(usize, Head)> = Vec::new();
    for v in (0..n).filter(|&i| vertex[i] as usize == i) {
        match records[v].link() {
            Link::Null | Link::Absent => heads.push((v, Head::Genesis)),
            Link::Malformed => heads.push((v, Head::Malformed)),
            Link::Hash(h) => match h.digest().and_then(|h| by_hash.first_of(&h)) {
                Some(p) if p != v => predecessor[v] = p as u32,
                _ => heads.push((v, Head::Dangling)),
            },
        }
    }
    let successors = Successors::from_predecessors(&predecessor);
    drop(predecessor);
    for p in 0..n {
        let next = successors.of(p);
        if next.len() > 1 {
            graph.forks.push(p as u32);
            let branches: Vec<usize> = next.iter().map(|&b| b as usize).collect();
            graph
                .findings
                .push((branches[1], fork(records, p, &branches)));
        }
    }
    if graph.forked() {
        graph.fork_of = vec![NONE; n];
    }
    let head_of = paths(records, &heads, &successors, &mut graph);
    let dangling: Vec<usize> = heads
        .iter()
        .filter(|(_, h)| *h == Head::Dangling)
        .map(|(v, _)| *v)
        .collect();
    if !dangling.is_empty() {
        let by_run = vertices_by_run(records, &vertex);
        for v in dangling {
            let own_path = |p: usize| head_of[p] as usize == v;
            if let Some(p) = last_before(records, v, &by_run, own_path) {
                graph.findings.push((v, gap(records, p, v)));
            }
        }
    }
    for (i, &v) in vertex.iter().enumerate() {
        graph.record_status[i] = graph.record_status[v as usize];
        if let Some(f) = graph.fork_of.get(v as usize).copied() {
            graph.fork_of[i] = f;
        }
    }
    graph
}

/// No record (in the `u32` record numbers the graph keeps: a few bytes a record, where a
/// store has hundreds of thousands).
const NONE: u32 = u32::MAX;

/// Record numbers in the order of their chain hashes (then of the records): finds the
/// first record holding a hash by a binary search, in 4 bytes a record where a hash table
/// of the hashes takes ~50.
struct ByHash<'a> {
    hashes: &'a [Sha256Digest],
    order: Vec<u32>,
}

impl<'a> ByHash<'a> {
    fn new(hashes: &'a [Sha256Digest]) -> ByHash<'a> {
        let mut order: Vec<u32> = (0..hashes.len() as u32).collect();
        order.sort_unstable_by_key(|&i| (hashes[i as usize], i));
        ByHash { hashes, order }
    }

    /// The first record holding `hash`.
    fn first_of(&self, hash: &Sha256Digest) -> Option<usize> {
        let at = self
            .order
            .partition_point(|&i| self.hashes[i as usize] < *hash);
        let first = *self.order.get(at)? as usize;
        (self.hashes[first] == *hash).then_some(first)
    }

    /// Per record, the first record holding its hash (the vertex standing for it).
    fn vertices(&self) -> Vec<u32> {
        let mut vertex = vec![NONE; self.hashes.len()];
        let mut first = NONE;
        for (k, &i) in self.order.iter().enumerate() {
            let hash = &self.hashes[i as usize];
            if k == 0 || self.hashes[self.order[k - 1] as usize] != *hash {
                first = i;
            }
            vertex[i as usize] = first;
        }
        vertex
    }
}

/// Each vertex's successors in record order, all in one list (`start[v]..start[v + 1]`).
struct Successors {
    start: Vec<u32>,
    next: Vec<u32>,
}

impl Successors {
    /// From each vertex's predecessor ([`NONE`] for a head or a duplicate).
    fn from_predecessors(predecessor: &[u32]) -> Successors {
        let mut start = vec![0u32; predecessor.len() + 1];
        for &p in predecessor.iter().filter(|&&p| p != NONE) {
            start[p as usize + 1] += 1;
        }
        for v in 0..predecessor.len() {
            start[v + 1] += start[v];
        }
        let mut filled = start.clone();
        let mut next = vec![0u32; start[predecessor.len()] as usize];
        for (v, &p) in predecessor.iter().enumerate().filter(|(_, p)| **p != NONE) {
            next[filled[p as usize] as usize] = v as u32;
            filled[p as usize] += 1;
        }
        Successors { start, next }
    }

    /// The successors of vertex `v`.
    fn of(&self, v: usize) -> &[u32] {
        &self.next[self.start[v] as usize..self.start[v + 1] as usize]
    }
}

/// F-DUPLICATE-RECORD for every later copy of an `H`: info when the copy is the same
/// JSON member for member (a retried append), high when other bytes differ (signature
/// parts are outside `H`).
fn duplicates(records: &[&Record], vertex: &[u32], graph: &mut LinkGraph) {
    for (i, &v) in vertex.iter().enumerate() {
        let v = v as usize;
        if v == i {
            continue;
        }
        // Each tree read for the comparison alone: a store of retried appends must not
        // bring every record's tree back.
        let identical = records[v]
            .with_record(|first| records[i].with_record(|copy| first.json() == copy.json()));
        graph.conflicting_duplicates |= !identical;
        let (severity, what) = if identical {
            (Severity::Info, "an identical copy (a retried append)")
        } else {
            (
                Severity::High,
                "a different record with the same chain hash (its signature or envelope differs)",
            )
        };
        graph.findings.push((
            i,
            Finding {
                id: "F-DUPLICATE-RECORD",
                severity,
                run_id: records[i].run_id().map(str::to_string),
                action_ids: Vec::new(),
                message: format!(
                    "{} holds the chain hash of {}: {what}",
                    records[i].source, records[v].source
                ),
                evidence: serde_json::json!({
                    "first": RecordAt::of(records[v]),
                    "copy": RecordAt::of(records[i]),
                    "identical": identical,
                })
                .into(),
                locations: vec![
                    Location::record(&records[i].source),
                    Location::record(&records[v].source),
                ],
                fingerprint: String::new(),
                chain: None,
                tool: None,
            },
        ));
    }
}

fn fork(records: &[&Record], predecessor: usize, branches: &[usize]) -> Finding {
    let names: Vec<String> = branches
        .iter()
        .map(|&b| records[b].source.to_string())
        .collect();
    Finding {
        id: "F-CHAIN-FORK",
        severity: Severity::High,
        run_id: records[predecessor].run_id().map(str::to_string),
        action_ids: Vec::new(),
        message: format!(
            "{} distinct records claim {} as their predecessor: {} (a replayed or concurrent emitter, or a spliced history)",
            branches.len(),
            records[predecessor].source,
            names.join(" and ")
        ),
        evidence: serde_json::json!({
            "predecessor": RecordAt::of(records[predecessor]),
            "branches": branches.iter().map(|&b| RecordAt::of(records[b])).collect::<Vec<_>>(),
        })
        .into(),
        locations: branches
            .iter()
            .map(|&b| Location::at(&records[b].source, &["prev_record_hash"]))
            .chain([Location::record(&records[predecessor].source)])
            .collect(),
        fingerprint: String::new(),
        chain: None,
        tool: None,
    }
}

fn gap(records: &[&Record], before: usize, after: usize) -> Finding {
    Finding {
        id: "F-CHAIN-GAP",
        severity: Severity::High,
        run_id: records[after].run_id().map(str::to_string),
        action_ids: Vec::new(),
        message: format!(
            "the link of {} resolves to no loaded record, while earlier records of its emitter are loaded (last before the gap: {}): a lost append or a deleted or altered record",
            records[after].source, records[before].source
        ),
        evidence: serde_json::json!({
            "before": RecordAt::of(records[before]),
            "after": RecordAt::of(records[after]),
            "missing": match records[after].link() { Link::Hash(h) => h.to_string(), _ => String::new() },
        })
        .into(),
        locations: vec![
            Location::at(&records[after].source, &["prev_record_hash"]),
            Location::record(&records[before].source),
        ],
        fingerprint: String::new(),
        chain: None,
        tool: None,
    }
}

/// Vertices per run id, in time order (then load order): where [`last_before`] looks.
pub(crate) fn vertices_by_run<'a>(
    records: &[&'a Record],
    vertex: &[u32],
) -> FxHashMap<&'a str, Vec<(f64, usize)>> {
    let mut by_run: FxHashMap<&str, Vec<(f64, usize)>> = FxHashMap::default();
    for (i, r) in records.iter().enumerate() {
        if vertex[i] as usize == i
            && let Some(run) = r.run_id()
        {
            let t = r.created_at_ms().unwrap_or(f64::NEG_INFINITY);
            by_run.entry(run).or_default().push((t, i));
        }
    }
    for list in by_run.values_mut() {
        list.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    }
    by_run
}

/// How many earlier records of a run are tried when looking for a gap's near side.
const GAP_CANDIDATES: usize = 64;

/// The last loaded record of the dangling head `v`'s emitter before it, if any: same
/// run, not later, and its action ids a prefix of `v`'s (an emitter's records are
/// snapshots that only grow, e.3), signed by the same key id or its actions a prefix of
/// `v`'s element for element (another emitter of the run using the same default ids
/// holds other actions under them); never `v` nor a record `own_path` says follows from
/// it. The near side of F-CHAIN-GAP, and where `analysis::lineage` joins a chain across
/// its gap.
pub(crate) fn last_before(
    records: &[&Record],
    v: usize,
    by_run: &FxHashMap<&str, Vec<(f64, usize)>>,
    own_path: impl Fn(usize) -> bool,
) -> Option<usize> {
    let list = by_run.get(records[v].run_id()?)?;
    let time = records[v].created_at_ms().unwrap_or(f64::INFINITY);
    let end = list.partition_point(|(t, _)| *t <= time);
    records[v].with_record(|after| {
        let later: Vec<_> = after.actions().collect();
        list[..end]
            .iter()
            .rev()
            .filter(|(_, p)| *p != v && !own_path(*p))
            .take(GAP_CANDIDATES)
            .find(|(_, p)| {
                let same_key = records[*p].key_id() == records[v].key_id();
                records[*p].with_record(|before| {
                    let mut count = 0;
                    before.actions().all(|a| {
                        count += 1;
                        (later.get(count - 1))
                            .is_some_and(|b| a.id() == b.id() && (same_key || a.0 == b.0))
                    })
                })
            })
            .map(|(_, p)| *p)
    })
}

/// Every head-to-leaf path. Branches of a fork repeat their shared prefix unless the
/// listing would exceed a budget proportional to the input; past it a branch is listed
/// from the fork (with `continues`).
fn paths(
    records: &[&Record],
    heads: &[(usize, Head)],
    successors: &Successors,
    graph: &mut LinkGraph,
) -> Vec<u32> {
    let mut head_of = vec![NONE; records.len()];
    // Which vertices are on the path being walked (a cycle guard in O(1)).
    let mut on_path = vec![false; records.len()];
    let mut budget = 4 * records.len() + 10_000;
    for &(head, kind) in heads {
        // Depth-first, iterative: (vertex, its depth in the current path).
        let mut stack = vec![(head, 0usize)];
        let mut current: Vec<usize> = Vec::new();
        // The first depth of `current` that no earlier path of this head listed.
        let mut diverged_at = 0;
        // Where in `current` its first fork point is (kept as the walk goes: a path's
        // fork is known without walking it again).
        let mut fork_at: Option<usize> = None;
        while let Some((v, depth)) = stack.pop() {
            diverged_at = diverged_at.min(depth);
            for gone in current.drain(depth.min(current.len())..) {
                on_path[gone] = false;
            }
            if fork_at.is_some_and(|f| f >= current.len()) {
                fork_at = None;
            }
            if on_path[v] {
                continue; // a cycle cannot come from hashes; never loop on one anyway
            }
            on_path[v] = true;
            current.push(v);
            let next = successors.of(v);
            if next.len() > 1 && fork_at.is_none() {
                fork_at = Some(current.len() - 1);
            }
            if !next.is_empty() {
                stack.extend(next.iter().rev().map(|&s| (s as usize, depth + 1)));
                continue;
            }
            let from = if current.len() <= budget {
                0
            } else {
                diverged_at.min(current.len() - 1)
            };
            diverged_at = usize::MAX;
            let status = match (kind, current.len()) {
                (Head::Malformed, _) => ChainStatus::Broken,
                (Head::Dangling, _) => ChainStatus::Orphaned,
                (Head::Genesis, 1) => ChainStatus::NotPresent,
                (Head::Genesis, _) => ChainStatus::Intact,
            };
            let members = &current[from..];
            budget = budget.saturating_sub(members.len());
            let fork = fork_at.map(|f| current[f]);
            for &m in members {
                head_of[m] = head as u32;
                graph.record_status[m] = graph.record_status[m].max(status);
                if let Some(f) = fork
                    && graph.fork_of[m] == NONE
                {
                    graph.fork_of[m] = f as u32;
                }
            }
            graph.paths.push(ChainPath {
                status,
                records: PathRecords::of(members.iter().map(|&m| records[m])),
                broken_at: (kind == Head::Malformed).then(|| RecordAt::of(records[head])),
                continues: (from > 0).then(|| RecordAt::of(records[current[from - 1]])),
                forked_at: fork.map(|f| RecordAt::of(records[f])),
                anchored_through: None,
                members: members.iter().map(|&m| m as u32).collect(),
            });
        }
        for gone in current {
            on_path[gone] = false;
        }
    }
    head_of
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_input;
    use std::fmt::Write as _;

    /// Records `{"n": i, "prev_record_hash": "<hash of parent>"}`, record `i` with
    /// chain hash `hash(i)`.
    fn store(parents: &[Option<usize>]) -> (crate::load::Input, Vec<Sha256Digest>) {
        let hash = |i: usize| Sha256Digest::of(&i.to_le_bytes());
        let mut text = String::new();
        for (i, p) in parents.iter().enumerate() {
            let link = p.map_or("null".to_string(), |p| format!("\"{}\"", hash(p)));
            let _ = writeln!(text, "{{\"n\":{i},\"prev_record_hash\":{link}}}");
        }
        let hashes = (0..parents.len()).map(hash).collect();
        (parse_input("s.ndjson".into(), text.as_bytes()), hashes)
    }

    fn graph(parents: &[Option<usize>]) -> LinkGraph {
        let (input, hashes) = store(parents);
        let records: Vec<&Record> = input.records.iter().collect();
        build(&records, &hashes)
    }

    #[test]
    fn a_long_chain_is_one_intact_path() {
        let n: usize = 50_000;
        let parents: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
        let g = graph(&parents);
        assert_eq!(g.paths.len(), 1);
        assert_eq!(g.paths[0].records.len(), n);
        assert_eq!(g.paths[0].status, ChainStatus::Intact);
        assert!(g.passes());
    }

    #[test]
    fn a_fork_comb_stays_within_its_output_budget() {
        // r0 ← r1 ← … (the spine), and every spine record has a second child (a leaf):
        // listing every branch from the genesis would be quadratic.
        let spine: usize = 3_000;
        let mut parents: Vec<Option<usize>> = (0..spine).map(|i| i.checked_sub(1)).collect();
        parents.extend((0..spine - 1).map(Some));
        let g = graph(&parents);
        assert!(g.forked());
        assert_eq!(g.paths.len(), spine);
        let listed: usize = g.paths.iter().map(|p| p.records.len()).sum();
        assert!(
            listed <= 4 * parents.len() + 10_000 + parents.len(),
            "{listed}"
        );
        // Branches cut at their fork say where they continue; every record is on a path.
        assert!(g.paths.iter().any(|p| p.continues.is_some()));
        let on_paths: std::collections::HashSet<usize> = g
            .paths
            .iter()
            .flat_map(|p| p.members.iter().map(|&m| m as usize))
            .collect();
        assert_eq!(on_paths.len(), parents.len());
    }

    #[test]
    fn a_link_that_is_not_a_string_breaks_its_path() {
        let mut text = String::from("{\"n\":0,\"prev_record_hash\":null}\n");
        text.push_str("{\"n\":1,\"prev_record_hash\":42}\n");
        let input = parse_input("m.ndjson".into(), text.as_bytes());
        let records: Vec<&Record> = input.records.iter().collect();
        let g = build(&records, &[Sha256Digest::of(b"0"), Sha256Digest::of(b"1")]);
        let broken: Vec<_> = g
            .paths
            .iter()
            .filter(|p| p.status == ChainStatus::Broken)
            .collect();
        assert_eq!(broken.len(), 1);
        assert_eq!(broken[0].broken_at.as_ref().map(|r| r.index), Some(1));
        assert!(!g.passes());
    }
}
