//! Two actions side by side: an action and its natural counterpart — the denied parent of
//! a re-approved action (or, from the deny, the action that re-approved it), or the first
//! copy of an action and a later snapshot's copy that differs from it (the V17 question).
//! Rows align by member; a row differs when the canonical bytes of its values differ. The
//! one home of "which members differ" (also used by `aeplens diff`).

use super::Analysis;
use super::chains::Role;
use super::graph::NodeId;
use super::lineage::{ChainId, Start};
use crate::canon::{Variant, canonical_bytes};
use crate::load::Corpus;
use crate::model::Action;
use crate::model::json::{Json, Obj};

/// One side of a comparison: what it is, where it is, and the action.
pub struct Side<'c> {
    pub label: String,
    pub action: Action<'c>,
    /// The node, when the side is an action node (a later copy is not one).
    pub node: Option<NodeId>,
}

/// One member, aligned across both sides.
pub struct Row<'c> {
    pub name: String,
    pub left: Option<&'c Json>,
    pub right: Option<&'c Json>,
    pub differs: bool,
}

/// A comparison and why these two are compared.
pub struct Pair<'c> {
    pub why: &'static str,
    pub left: Side<'c>,
    pub right: Side<'c>,
    pub rows: Vec<Row<'c>>,
}

/// Every member of either action, in order of first appearance (left, then right),
/// flagged where the canonical bytes differ (a member on one side only differs). A member
/// that is an object on both sides is shown member by member (`capability_decision.decision`),
/// so a difference deep in it is not hidden behind its first characters.
pub fn rows<'c>(a: &Action<'c>, b: &Action<'c>) -> Vec<Row<'c>> {
    let mut out = Vec::new();
    members(a.0, b.0, "", 1, &mut out);
    out
}

fn members<'c>(a: &'c Obj, b: &'c Obj, prefix: &str, depth: u8, out: &mut Vec<Row<'c>>) {
    let mut names: Vec<String> = Vec::new();
    for (k, _) in a
        .effective_members()
        .into_iter()
        .chain(b.effective_members())
    {
        let k = k.lossy().into_owned();
        if !names.contains(&k) {
            names.push(k);
        }
    }
    for name in names {
        let (left, right) = (a.get(&name), b.get(&name));
        let full = format!("{prefix}{name}");
        if depth > 0
            && let (Some(Json::Object(x)), Some(Json::Object(y))) = (left, right)
        {
            members(x, y, &format!("{full}."), depth - 1, out);
            continue;
        }
        let bytes = |v: Option<&Json>| v.map(|v| canonical_bytes(v, Variant::C1));
        let differs = bytes(left) != bytes(right);
        out.push(Row {
            name: full,
            left,
            right,
            differs,
        });
    }
}

/// The names of the members that differ.
pub fn differing(a: &Action, b: &Action) -> Vec<String> {
    rows(a, b)
        .into_iter()
        .filter(|r| r.differs)
        .map(|r| r.name)
        .collect()
}

fn side<'c>(an: &Analysis, corpus: &'c Corpus, node: NodeId, what: &str) -> Option<Side<'c>> {
    let (record, action) = an.graph.action(corpus, node)?;
    Some(Side {
        label: format!("{} ({what}, {})", action.id().unwrap_or("?"), record.source),
        action,
        node: Some(node),
    })
}

/// `other` (the action a reviewer chose) beside `node`.
pub fn chosen<'c>(
    an: &Analysis,
    corpus: &'c Corpus,
    other: NodeId,
    node: NodeId,
) -> Option<Pair<'c>> {
    let left = side(an, corpus, other, "chosen with v")?;
    let right = side(an, corpus, node, "selected")?;
    let rows = rows(&left.action, &right.action);
    Some(Pair {
        why: "the action chosen with v beside the selected one",
        left,
        right,
        rows,
    })
}

/// The natural counterpart of `node`, when it has one.
pub fn counterpart<'c>(an: &Analysis, corpus: &'c Corpus, node: NodeId) -> Option<Pair<'c>> {
    let g = &an.graph;
    let reapproved = |n: NodeId| {
        an.chains
            .iter()
            .flat_map(super::chains::Chain::roles)
            .any(|(m, r)| m == n && r == Role::Reapproved)
    };
    let pair = |why, left: Side<'c>, right: Side<'c>| {
        let rows = rows(&left.action, &right.action);
        Pair {
            why,
            left,
            right,
            rows,
        }
    };
    if reapproved(node)
        && let Some(parent) = g.nodes[node as usize].parent
    {
        return Some(pair(
            "re-approved after this denied parent",
            side(an, corpus, parent, "denied parent")?,
            side(an, corpus, node, "re-approved")?,
        ));
    }
    if let Some(child) = g.children(node).into_iter().find(|c| reapproved(*c)) {
        return Some(pair(
            "denied, then re-approved by this child",
            side(an, corpus, node, "denied")?,
            side(an, corpus, child, "re-approved")?,
        ));
    }
    // On a branch of a fork: the same id executed on the other branch (its twin).
    let (first_record, first) = g.action(corpus, node)?;
    let id = first.id()?;
    let run = &g.runs[g.nodes[node as usize].run as usize];
    let lineages = &g.lineages;
    let chain = g.nodes[node as usize].chain;
    let branch = |c: u32| {
        let c = &lineages.chains[c as usize];
        (c.start == super::lineage::Start::Fork).then_some(c.parent)
    };
    if let Some(fork) = branch(chain) {
        let twin = (g.find_in_run(corpus, &run.id, id).into_iter())
            .find(|&n| n != node && branch(g.nodes[n as usize].chain) == Some(fork));
        if let Some(twin) = twin {
            return Some(pair(
                "the same action on the other branch of a fork",
                side(an, corpus, node, "this branch")?,
                side(an, corpus, twin, "the other branch")?,
            ));
        }
    }
    // A later copy of the action (its own chain's later snapshots repeat it) that differs
    // from the first; another emitter's or branch's action of the same id is not a copy.
    for &r in &run.records {
        let record = corpus.record(r as usize);
        if std::ptr::eq(record, first_record) || !lineages.sees(lineages.of(r as usize), chain) {
            continue;
        }
        if let Some(copy) = record.actions().find(|a| a.id() == Some(id))
            && !differing(&first, &copy).is_empty()
        {
            return Some(pair(
                "rewritten in a later snapshot (V17)",
                Side {
                    label: format!("{id} (first copy, {})", first_record.source),
                    action: first,
                    node: Some(node),
                },
                Side {
                    label: format!("{id} (later copy, {})", record.source),
                    action: copy,
                    node: None,
                },
            ));
        }
    }
    None
}

/// A fork seen from one of its branches: the record both branches claim as their
/// predecessor, two branches side by side, and per action id where they part.
pub struct Fork {
    /// The fork point (flat record index), when its hash is among the records loaded.
    pub point: Option<u32>,
    /// The branch the action is on (or the first, seen from before the fork) and another.
    pub branches: [ChainId; 2],
    /// Further branches from the same point, not shown.
    pub more: usize,
    /// Every action id after the fork point on either branch, the left branch's first.
    pub rows: Vec<ForkRow>,
}

/// One action id across two branches of a fork.
pub struct ForkRow {
    pub id: String,
    pub left: Option<NodeId>,
    pub right: Option<NodeId>,
    /// The members that differ when both branches hold the id (empty: the same action).
    pub differs: Vec<String>,
}

/// The fork `node` is on: its branch and the next, or — from the chain before a fork —
/// its first two branches. `None` when no fork touches the node's chain.
pub fn fork(an: &Analysis, corpus: &Corpus, node: NodeId) -> Option<Fork> {
    let g = &an.graph;
    let chains = &g.lineages.chains;
    let n = &g.nodes[node as usize];
    let branches_of = |parent: ChainId| -> Vec<ChainId> {
        (0..chains.len() as ChainId)
            .filter(|&c| {
                let c = &chains[c as usize];
                c.start == Start::Fork && c.parent == Some(parent)
            })
            .collect()
    };
    let own = &chains[n.chain as usize];
    let mut branches = match (own.start, own.parent) {
        (Start::Fork, Some(parent)) => branches_of(parent),
        _ => branches_of(n.chain),
    };
    if let Some(at) = branches.iter().position(|&c| c == n.chain) {
        branches[..=at].rotate_right(1);
    }
    let [left, right, ..] = branches[..] else {
        return None;
    };
    let run = &g.runs[n.run as usize];
    // Ids from the facts; the JSON is read only for twins whose digests differ.
    let on = |chain: ChainId| -> Vec<(String, NodeId)> {
        (run.nodes.iter())
            .filter(|&&m| g.nodes[m as usize].chain == chain)
            .filter_map(|&m| Some((g.facts(corpus, m)?.id()?.to_string(), m)))
            .collect()
    };
    let digest = |m: NodeId| g.facts(corpus, m).map(|f| f.copy_digest);
    let (a, b) = (on(left), on(right));
    let mut rows: Vec<ForkRow> = (a.iter())
        .map(|(id, l)| {
            let r = b.iter().find(|(other, _)| other == id).map(|(_, r)| *r);
            let differs = match r {
                Some(r) if digest(*l) != digest(r) => {
                    match (g.action(corpus, *l), g.action(corpus, r)) {
                        (Some((_, x)), Some((_, y))) => differing(&x, &y),
                        _ => Vec::new(),
                    }
                }
                _ => Vec::new(),
            };
            ForkRow {
                id: id.clone(),
                left: Some(*l),
                right: r,
                differs,
            }
        })
        .collect();
    for (id, r) in &b {
        if !a.iter().any(|(other, _)| other == id) {
            rows.push(ForkRow {
                id: id.clone(),
                left: None,
                right: Some(*r),
                differs: Vec::new(),
            });
        }
    }
    // The fork point: the record the branches' first record links to.
    let head = corpus.record(chains[left as usize].head as usize);
    let point = match head.link() {
        crate::model::Link::Hash(crate::model::LinkHashRef::Digest(d)) => run
            .records
            .iter()
            .copied()
            .find(|&r| an.hashes[r as usize] == d),
        _ => None,
    };
    Some(Fork {
        point,
        branches: [left, right],
        more: branches.len() - 2,
        rows,
    })
}
