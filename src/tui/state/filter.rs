//! The navigator filter: `key:value` terms (`!` negates) narrowing what is listed.

use super::*;

/// The navigator filter and what passes it. The fields are private: only this module
/// changes them, so what passes always belongs to the text submitted.
#[derive(Debug, Default)]
pub struct Filter {
    prompt: Prompt,
    /// Per node: passes the submitted filter (`None`: no filter).
    pass: Option<Vec<bool>>,
    error: Option<String>,
}

impl Filter {
    /// The prompt is open.
    pub fn is_active(&self) -> bool {
        self.prompt.active
    }

    /// The text typed.
    pub fn text(&self) -> &str {
        &self.prompt.text
    }

    /// A filter is applied.
    pub fn is_applied(&self) -> bool {
        self.pass.is_some()
    }

    /// True when the node passes the filter (or there is none).
    pub fn passes(&self, node: NodeId) -> bool {
        self.pass
            .as_ref()
            .is_none_or(|p| p.get(node as usize).copied().unwrap_or(false))
    }

    /// Why the text submitted is not a filter.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    pub(super) fn open(&mut self) {
        self.prompt.active = true;
    }

    pub(super) fn close(&mut self) {
        self.prompt.active = false;
    }

    pub(super) fn edit(&mut self, f: impl FnOnce(&mut String)) {
        f(&mut self.prompt.text);
    }
}

/// One term of the filter language.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    pub negated: bool,
    pub key: Option<String>,
    pub value: String,
}

/// Parses `tool:x decision:deny !class:read lease:after-expiry finding:F-STATE run:r
/// is:problem is:marked word`.
pub fn parse_filter(text: &str) -> Result<Vec<Term>, String> {
    text.split_whitespace()
        .map(|w| {
            let (negated, w) = match w.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, w),
            };
            match w.split_once(':') {
                Some((k, v)) => {
                    if !["tool", "decision", "class", "lease", "finding", "run", "is"].contains(&k) {
                        return Err(format!(
                            "unknown filter key {k:?} (tool, decision, class, lease, finding, run, is)"
                        ));
                    }
                    if k == "is"
                        && !v.eq_ignore_ascii_case("problem")
                        && !v.eq_ignore_ascii_case("marked")
                    {
                        return Err(format!("unknown filter is:{v} (is:problem, is:marked)"));
                    }
                    Ok(Term {
                        negated,
                        key: Some(k.to_string()),
                        value: v.to_lowercase(),
                    })
                }
                None => Ok(Term {
                    negated,
                    key: None,
                    value: w.to_lowercase(),
                }),
            }
        })
        .collect()
}

/// The filter `P` toggles: only actions with a problem.
pub const PROBLEMS_ONLY: &str = "is:problem";

/// `P` / `*`: filters to the actions with a problem / marked, or clears that filter.
pub(super) fn toggle_only(state: &mut State, only: &str) {
    let on = state.filter.is_applied() && state.filter.text() == only;
    state.filter.prompt.text = if on { String::new() } else { only.into() };
    apply_filter(state);
    if on {
        state.message = Some("filter cleared: every action".into());
    }
}

pub(super) fn apply_filter(state: &mut State) {
    state.filter.error = None;
    let terms = match parse_filter(&state.filter.prompt.text) {
        Ok(t) => t,
        Err(e) => {
            state.filter.error = Some(e);
            return;
        }
    };
    let Some(d) = state.data.as_ref() else { return };
    if terms.is_empty() {
        state.filter.pass = None;
        rebuild_rows(state);
        rebuild_nav(state);
        return;
    }
    let g = &d.analysis.graph;
    let mut finding_ids: HashMap<NodeId, Vec<&str>> = HashMap::new();
    for f in &d.findings {
        for n in d.nodes_of(f) {
            finding_ids.entry(n).or_default().push(f.id);
        }
    }
    let haystacks = d.haystacks();
    let mut text = String::new();
    let pass: Vec<bool> = (0..g.nodes.len() as NodeId)
        .map(|n| {
            // The facts, not the record: a filter over a million actions must not read
            // every record again.
            let Some(a) = g.facts(&d.corpus, n) else {
                return false;
            };
            // The node's search text, made when a plain term first needs it.
            let mut made = false;
            terms.iter().all(|t| {
                let lower = |s: Option<&str>| s.map(str::to_lowercase).unwrap_or_default();
                let hit = match t.key.as_deref() {
                    Some("tool") => lower(a.tool()).contains(&t.value),
                    Some("decision") => lower(a.outcome()) == t.value,
                    Some("class") => {
                        lower(Some(a.side_effect_class().unwrap_or("unknown"))) == t.value
                    }
                    Some("lease") => d.analysis.leases.by_node.get(&n).is_some_and(|l| {
                        l.verdict.name() == t.value || l.lease_id.to_lowercase().contains(&t.value)
                    }),
                    Some("finding") => finding_ids.get(&n).is_some_and(|ids| {
                        ids.iter().any(|id| id.to_lowercase().contains(&t.value))
                    }),
                    Some("run") => g.runs[d.run_of(n)].id.to_lowercase().contains(&t.value),
                    // Denied, drifted, outside its lease, invalid, a high finding, executed
                    // after a deny: what `e` steps through.
                    Some("is") if t.value == "marked" => state.review.by_node.contains_key(&n),
                    Some("is") => d.flags[n as usize] & flag::PROBLEM != 0,
                    _ => {
                        if !made {
                            text.clear();
                            haystacks.write(n, &mut text);
                            made = true;
                        }
                        text.contains(&t.value)
                    }
                };
                hit != t.negated
            })
        })
        .collect();
    let count = pass.iter().filter(|p| **p).count();
    state.message = Some(format!("filter: {count} of {} actions", pass.len()));
    state.filter.pass = Some(pass);
    state.nav.set_cursor(0);
    rebuild_rows(state);
    keep_selection_in_view(state);
    rebuild_nav(state);
}

/// After the timeline's rows changed: the selection stays when it is still a row, else
/// the first row is selected.
fn keep_selection_in_view(state: &mut State) {
    if state.cursor_row().is_none()
        && let Some(first) = state.timeline.rows.first().map(|r| r.node)
    {
        select(state, first, false);
    }
}
