//! Search: exact and prefix matches of ids, tools, resources and digest prefixes first;
//! fuzzy (subsequence) matches only when nothing matches literally. Matches in the
//! selected run as you type, every run on Enter.

use super::*;
use crate::tui::data::Haystacks;

/// The search and what it matched. The fields are private: only this module changes
/// them, so the matches always belong to the text typed.
#[derive(Debug)]
pub struct Search {
    prompt: Prompt,
    /// Nodes of the current run matching (per keystroke), for highlighting.
    hits: HashSet<NodeId>,
    /// All matching nodes (on Enter).
    all: Vec<NodeId>,
    /// The matches are fuzzy (nothing matched literally).
    fuzzy: bool,
    /// An all-runs search running in the background.
    job: Option<SearchJob>,
    /// From how many actions Enter searches in the background.
    background_from: usize,
}

impl Default for Search {
    fn default() -> Search {
        Search {
            prompt: Prompt::default(),
            hits: HashSet::new(),
            all: Vec::new(),
            fuzzy: false,
            job: None,
            background_from: BACKGROUND_SEARCH_FROM,
        }
    }
}

impl Search {
    /// The prompt is open.
    pub fn is_active(&self) -> bool {
        self.prompt.active
    }

    /// The text typed.
    pub fn text(&self) -> &str {
        &self.prompt.text
    }

    /// The current run's matches.
    pub fn hits(&self) -> &HashSet<NodeId> {
        &self.hits
    }

    /// Every match, once Enter has searched all runs.
    pub fn all(&self) -> &[NodeId] {
        &self.all
    }

    /// The matches are fuzzy: nothing matched literally.
    pub fn is_fuzzy(&self) -> bool {
        self.fuzzy
    }

    /// The all-runs search running in the background, if any.
    pub fn job(&self) -> Option<&SearchJob> {
        self.job.as_ref()
    }

    /// Searches in the background from this many actions (default
    /// [`BACKGROUND_SEARCH_FROM`]).
    pub fn set_background_from(&mut self, actions: usize) {
        self.background_from = actions;
    }

    /// The job the event loop has not started yet, marked started.
    pub fn job_to_start(&mut self) -> Option<SearchJob> {
        let job = self.job.as_mut().filter(|j| !j.started)?;
        job.started = true;
        Some(job.clone())
    }

    /// Opens the prompt with no text and no matches.
    pub(super) fn open(&mut self) {
        self.prompt = Prompt {
            active: true,
            text: String::new(),
        };
        self.hits.clear();
    }

    /// Closes the prompt (the text and matches stay).
    pub(super) fn close(&mut self) {
        self.prompt.active = false;
    }

    /// Edits the text typed.
    pub(super) fn edit(&mut self, f: impl FnOnce(&mut String)) {
        f(&mut self.prompt.text);
    }

    /// Clears everything, cancelling a running job; true when one was cancelled.
    pub(super) fn clear(&mut self) -> bool {
        let cancelled = self
            .job
            .take()
            .inspect(|j| j.cancel.store(true, Ordering::Relaxed));
        *self = Search {
            background_from: self.background_from,
            ..Search::default()
        };
        cancelled.is_some()
    }
}

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
    state.search.hits.clear();
    state.search.fuzzy = false;
    let Some(d) = state.data.as_ref() else { return };
    let q = state.search.prompt.text.to_lowercase();
    if q.is_empty() {
        return;
    }
    let Some(run) = d.analysis.graph.runs.get(state.timeline.run) else {
        return;
    };
    let haystacks = d.haystacks();
    let texts: Vec<(NodeId, String)> = run
        .nodes
        .iter()
        .map(|&n| {
            let mut text = String::new();
            haystacks.write(n, &mut text);
            (n, text)
        })
        .collect();
    let literal: HashSet<NodeId> = texts
        .iter()
        .filter(|(_, text)| literal_tier(text, &q).is_some())
        .map(|(n, _)| *n)
        .collect();
    if !literal.is_empty() {
        state.search.hits = literal;
        return;
    }
    let m = SkimMatcherV2::default();
    state.search.hits = texts
        .iter()
        .filter(|(_, text)| m.fuzzy_match(text, &q).is_some())
        .map(|(n, _)| *n)
        .collect();
    state.search.fuzzy = !state.search.hits.is_empty();
}

/// Every action's match of `query` (lower-cased) among `nodes` texts, which `text`
/// appends to an empty string: literal ones if any, else fuzzy ones; with the best
/// first-listed. `done` counts texts looked at; `cancel` stops early (then `None`).
pub fn matches_all(
    nodes: usize,
    text: &(dyn Fn(NodeId, &mut String) + Sync),
    query: &str,
    done: &AtomicUsize,
    cancel: &AtomicBool,
) -> Option<AllMatches> {
    let count = |n: usize| {
        if n.is_multiple_of(4096) {
            done.fetch_add(4096, Ordering::Relaxed);
        }
    };
    let all = 0..nodes as NodeId;
    // Each node's text made in a buffer of the core's own, then matched.
    let text_of = |buf: &mut String, n: NodeId| {
        buf.clear();
        text(n, buf);
    };
    let literal: Vec<(NodeId, u8)> = all
        .clone()
        .into_par_iter()
        .map_init(String::new, |buf, n| {
            count(n as usize);
            if cancel.load(Ordering::Relaxed) {
                return None;
            }
            text_of(buf, n);
            literal_tier(buf, query).map(|t| (n, t))
        })
        .flatten()
        .collect();
    if cancel.load(Ordering::Relaxed) {
        return None;
    }
    if !literal.is_empty() {
        let best = literal
            .iter()
            .min_by_key(|(n, t)| (*t, *n))
            .map(|(n, _)| *n);
        return Some(AllMatches {
            nodes: literal.into_iter().map(|(n, _)| n).collect(),
            best,
            fuzzy: false,
        });
    }
    let scored: Vec<(NodeId, i64)> = all
        .into_par_iter()
        .map_init(
            || (String::new(), SkimMatcherV2::default()),
            |(buf, matcher), n| {
                if cancel.load(Ordering::Relaxed) {
                    return None;
                }
                text_of(buf, n);
                matcher.fuzzy_match(buf, query).map(|score| (n, score))
            },
        )
        .flatten()
        .collect();
    if cancel.load(Ordering::Relaxed) {
        return None;
    }
    let best = scored
        .iter()
        .max_by_key(|(n, score)| (*score, std::cmp::Reverse(*n)))
        .map(|(n, _)| *n);
    Some(AllMatches {
        fuzzy: !scored.is_empty(),
        nodes: scored.into_iter().map(|(n, _)| n).collect(),
        best,
    })
}

/// The result of searching every action.
#[derive(Clone, Debug, PartialEq)]
pub struct AllMatches {
    pub nodes: Vec<NodeId>,
    pub best: Option<NodeId>,
    pub fuzzy: bool,
}

/// Below this many actions the all-runs search runs at once; above, in the background
/// with progress, and `Esc` cancels it.
pub const BACKGROUND_SEARCH_FROM: usize = 200_000;

/// A search over every action running in the background.
#[derive(Clone, Debug)]
pub struct SearchJob {
    pub query: String,
    pub haystacks: Haystacks,
    pub done: Arc<AtomicUsize>,
    pub cancel: Arc<AtomicBool>,
    /// Set by the event loop once it has handed the job to a thread.
    pub started: bool,
}

impl SearchJob {
    /// Percent of the actions looked at.
    pub fn percent(&self) -> usize {
        (self.done.load(Ordering::Relaxed) * 100 / self.haystacks.len().max(1)).min(100)
    }
}

/// Matches among all actions (on submit): at once on small evidence; on large evidence
/// a [`SearchJob`] is left in `state.search_job` for the event loop to run. Returns the
/// best match when it was found at once.
pub(super) fn search_all(state: &mut State) -> Option<NodeId> {
    state.search.all.clear();
    let d = state.data.as_ref()?;
    let q = state.search.prompt.text.to_lowercase();
    if q.is_empty() {
        return None;
    }
    let haystacks = d.haystacks();
    if haystacks.len() >= state.search.background_from {
        if let Some(old) = &state.search.job {
            old.cancel.store(true, Ordering::Relaxed);
        }
        state.search.job = Some(SearchJob {
            query: q,
            haystacks,
            done: Arc::default(),
            cancel: Arc::default(),
            started: false,
        });
        return None;
    }
    let m = matches_all(
        haystacks.len(),
        &|n, buf| haystacks.write(n, buf),
        &q,
        &AtomicUsize::new(0),
        &AtomicBool::new(false),
    );
    // Nothing holds it literally: a rewritten copy that does comes before a fuzzy match.
    if m.as_ref().is_none_or(|m| m.fuzzy)
        && let Some((node, said)) = rewritten_match(d, &q)
    {
        state.search.all = vec![node];
        state.message = Some(said);
        return Some(node);
    }
    let m = m?;
    state.search.all = m.nodes;
    state.search.fuzzy = m.fuzzy;
    m.best
}

/// No action's own text holds `query` (lower-cased) literally: the copies
/// F-ACTION-REWRITTEN names — a later snapshot whose copy of an action differs from the
/// one shown — are searched too. A hit there is the action, with what to say of it: the
/// value is the rewritten copy's, never shown as the action's own.
fn rewritten_match(d: &Data, query: &str) -> Option<(NodeId, String)> {
    let rewritten: Vec<&crate::model::finding::Finding> = (d.findings.iter())
        .filter(|f| f.id == "F-ACTION-REWRITTEN")
        .collect();
    if rewritten.is_empty() {
        return None;
    }
    // The records the findings name, found in one pass over the records.
    let mut at: HashMap<(&str, usize), usize> = (rewritten.iter())
        .filter_map(|f| f.locations.first())
        .map(|l| ((&*l.path, l.line), usize::MAX))
        .collect();
    for i in 0..d.corpus.len() {
        let source = &d.corpus.record(i).source;
        if let Some(slot) = at.get_mut(&(&*source.path, source.line)) {
            *slot = i;
        }
    }
    let mut text = String::new();
    for f in rewritten {
        let (Some(loc), Some(id)) = (f.locations.first(), f.action_ids.first()) else {
            continue;
        };
        let Some(&record) = at
            .get(&(&*loc.path, loc.line))
            .filter(|r| **r != usize::MAX)
        else {
            continue;
        };
        let facts = d.corpus.record(record).facts();
        let Some((_, action)) = facts.actions.iter().find(|(_, a)| a.id() == Some(id)) else {
            continue;
        };
        text.clear();
        crate::tui::data::write_facts(action, &mut text);
        if !text.contains(query) {
            continue;
        }
        let Some(&node) = d.nodes_of(f).first() else {
            continue;
        };
        let said = format!(
            "{query:?} is only in a rewritten copy of {} at {}:{} (F-ACTION-REWRITTEN): the action shown is its first copy, which holds other values",
            crate::model::text::sanitize(id),
            crate::model::text::sanitize(&loc.path),
            loc.line
        );
        return Some((node, said));
    }
    None
}

/// A background search finished: its matches are taken when the query is still the one
/// typed, and the best is selected.
pub(super) fn search_done(state: &mut State, query: &str, result: AllMatches) {
    let current = state.search.job.as_ref().is_some_and(|j| j.query == query);
    if !current {
        return;
    }
    state.search.job = None;
    let rewritten = (result.best.is_none() || result.fuzzy)
        .then(|| state.data.as_ref().and_then(|d| rewritten_match(d, query)))
        .flatten();
    if let Some((node, said)) = rewritten {
        state.search.all = vec![node];
        select(state, node, true);
        state.message = Some(said);
        return;
    }
    state.search.all = result.nodes;
    state.search.fuzzy = result.fuzzy;
    match result.best {
        Some(best) => select(state, best, true),
        None => state.message = Some(format!("no match for {query:?}")),
    }
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
