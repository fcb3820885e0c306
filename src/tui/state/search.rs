//! Fuzzy search: matches in the selected run as you type, every run on Enter.

use super::*;

/// Fuzzy matches of the search text among the current run's rows (per keystroke).
pub(super) fn search_run(state: &mut State) {
    state.search_hits.clear();
    let Some(d) = state.data.as_ref() else { return };
    let q = state.search.text.to_lowercase();
    if q.is_empty() {
        return;
    }
    let m = SkimMatcherV2::default();
    let Some(run) = d.analysis.graph.runs.get(state.run) else {
        return;
    };
    state.search_hits = run
        .nodes
        .iter()
        .copied()
        .filter(|n| m.fuzzy_match(&d.haystacks[*n as usize], &q).is_some())
        .collect();
}

/// Fuzzy matches among all actions (on submit), in parallel; returns the best match.
pub(super) fn search_all(state: &mut State) -> Option<NodeId> {
    state.search_all.clear();
    let d = state.data.as_ref()?;
    let q = state.search.text.to_lowercase();
    if q.is_empty() {
        return None;
    }
    let scored: Vec<(NodeId, i64)> = (0..d.haystacks.len() as NodeId)
        .into_par_iter()
        .filter_map(|n| {
            SkimMatcherV2::default()
                .fuzzy_match(&d.haystacks[n as usize], &q)
                .map(|score| (n, score))
        })
        .collect();
    let best = scored
        .iter()
        .max_by_key(|(n, score)| (*score, std::cmp::Reverse(*n)))
        .map(|(n, _)| *n);
    state.search_all = scored.into_iter().map(|(n, _)| n).collect();
    best
}
