//! Search: exact and prefix matches of ids, tools, resources and digest prefixes first;
//! fuzzy (subsequence) matches only when nothing matches literally. Matches in the
//! selected run as you type, every run on Enter.

use super::*;

/// How literally a query matches a haystack of space-separated, lower-cased words:
/// 0 a whole word, 1 a word's prefix (or the part after `sha256:`), 2 inside a word.
pub fn literal_tier(haystack: &str, query: &str) -> Option<u8> {
    haystack
        .split(' ')
        .filter(|w| !w.is_empty())
        .filter_map(|w| {
            let after_colon = w.split_once(':').map(|(_, rest)| rest);
            if w == query {
                Some(0)
            } else if w.starts_with(query) || after_colon.is_some_and(|r| r.starts_with(query)) {
                Some(1)
            } else if w.contains(query) {
                Some(2)
            } else {
                None
            }
        })
        .min()
}

/// Matches of the search text among the current run's rows (per keystroke): literal
/// ones, else fuzzy ones (`search_fuzzy` says which).
pub(super) fn search_run(state: &mut State) {
    state.search_hits.clear();
    state.search_fuzzy = false;
    let Some(d) = state.data.as_ref() else { return };
    let q = state.search.text.to_lowercase();
    if q.is_empty() {
        return;
    }
    let Some(run) = d.analysis.graph.runs.get(state.run) else {
        return;
    };
    let hay = |n: &NodeId| d.haystacks[*n as usize].as_str();
    let literal: HashSet<NodeId> = run
        .nodes
        .iter()
        .copied()
        .filter(|n| literal_tier(hay(n), &q).is_some())
        .collect();
    if !literal.is_empty() {
        state.search_hits = literal;
        return;
    }
    let m = SkimMatcherV2::default();
    state.search_hits = run
        .nodes
        .iter()
        .copied()
        .filter(|n| m.fuzzy_match(hay(n), &q).is_some())
        .collect();
    state.search_fuzzy = !state.search_hits.is_empty();
}

/// Matches among all actions (on submit), in parallel; returns the best: the most
/// literal match (earliest in load order among equals), else the best fuzzy score.
pub(super) fn search_all(state: &mut State) -> Option<NodeId> {
    state.search_all.clear();
    let d = state.data.as_ref()?;
    let q = state.search.text.to_lowercase();
    if q.is_empty() {
        return None;
    }
    let all = 0..d.haystacks.len() as NodeId;
    let literal: Vec<(NodeId, u8)> = all
        .clone()
        .into_par_iter()
        .filter_map(|n| literal_tier(&d.haystacks[n as usize], &q).map(|t| (n, t)))
        .collect();
    if !literal.is_empty() {
        let best = literal
            .iter()
            .min_by_key(|(n, t)| (*t, *n))
            .map(|(n, _)| *n);
        state.search_all = literal.into_iter().map(|(n, _)| n).collect();
        state.search_fuzzy = false;
        return best;
    }
    let scored: Vec<(NodeId, i64)> = all
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
    state.search_fuzzy = !state.search_all.is_empty();
    best
}

#[cfg(test)]
mod tests {
    use super::literal_tier;

    #[test]
    fn whole_words_then_prefixes_then_substrings() {
        let hay = "act-003 sql_exec db://prod/orders sha256:bd2f8bd76dc5";
        assert_eq!(literal_tier(hay, "act-003"), Some(0));
        assert_eq!(literal_tier(hay, "act-0"), Some(1));
        assert_eq!(
            literal_tier(hay, "bd2f8b"),
            Some(1),
            "digest prefix after sha256:"
        );
        assert_eq!(literal_tier(hay, "orders"), Some(2));
        assert_eq!(
            literal_tier(hay, "a3sq"),
            None,
            "a subsequence is not literal"
        );
    }
}
