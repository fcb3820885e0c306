//! Which findings are one: a finding's action identity (its emitter chain and tool), and
//! the repeats of one finding dropped.

use super::Timed;
use crate::analysis::Analysis;
use crate::load::Corpus;
use crate::model::finding::Finding;

/// Names the action each finding is about by its identity — its emitter chain and tool —
/// so that one id on two chains (a fork's branches, two emitters of a run) is two findings,
/// while copies of one action in chained snapshots stay one ([`dedupe_and_sort`]).
pub fn identify(corpus: &Corpus, an: &Analysis, timed: &mut [Timed]) {
    for (f, _) in timed.iter_mut().filter(|(f, _)| f.chain.is_none()) {
        if let Some((chain, tool)) = an.graph.identity_of(corpus, f) {
            f.chain = Some(chain);
            f.tool = tool;
        }
    }
}

/// What two findings that are the same finding share (copies of one action in chained
/// snapshots give it more than once).
fn same_finding(f: &Finding) -> (&str, Option<&str>, &[String], Option<&str>, &str) {
    let (run, actions) = (f.run_id.as_deref(), f.action_ids.as_slice());
    (f.id, run, actions, f.chain.as_deref(), f.message.as_str())
}

/// Drops repeats (the same finding from copies of one action in chained snapshots: one
/// chain) and sorts by severity, then time, then what tells them apart (id, run, actions,
/// chain, message).
pub fn dedupe_and_sort(mut timed: Vec<Timed>) -> Vec<Finding> {
    // Which to keep: the first of each key, found by sorting the findings' numbers by key
    // (a large store has a hundred thousand findings; a set of their keys cost more
    // memory than anything else here).
    let key = |i: u32| same_finding(&timed[i as usize].0);
    let mut order: Vec<u32> = (0..timed.len() as u32).collect();
    order.sort_by(|&a, &b| key(a).cmp(&key(b)).then(a.cmp(&b)));
    let mut keep = vec![true; timed.len()];
    for pair in order.windows(2) {
        if key(pair[0]) == key(pair[1]) {
            keep[pair[1] as usize] = false;
        }
    }
    let mut keep = keep.into_iter();
    timed.retain(|_| keep.next().unwrap_or(true));
    // Ties are broken by the key, which the kept findings differ in: the order is the
    // same however the evidence was split up to find them (`evidence::complete_in_groups`).
    timed.sort_unstable_by(|(a, ta), (b, tb)| {
        a.severity
            .cmp(&b.severity)
            .then(crate::analysis::graph::time_order(*ta, *tb))
            .then_with(|| same_finding(a).cmp(&same_finding(b)))
    });
    timed.into_iter().map(|(f, _)| f).collect()
}
