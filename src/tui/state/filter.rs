//! The navigator filter: an expression of the filter language (`crate::query`, `f` and
//! `:filter`), checked at every keystroke; the explorer's old `key:value` terms still
//! work as shorthand for the fields they meant.

use super::*;
use crate::query::{Columns, Ctx, Query, QueryError};

/// The navigator filter and what passes it. The fields are private: only this module
/// changes them, so what passes always belongs to the expression applied.
#[derive(Debug, Default)]
pub struct Filter {
    prompt: Prompt,
    /// The expression applied (the last good one) and, per node, whether it passes.
    applied: Option<(String, Vec<bool>)>,
    /// Why the text typed is not an expression (the last good filter stays).
    error: Option<QueryError>,
    /// What Tab offered when it could not choose (shown under the prompt until the next
    /// edit).
    offered: Option<String>,
    /// Each field's values over the actions, made once per loaded evidence.
    columns: Columns,
    /// Which evidence `columns` are of: its analysis, verified or not, its findings.
    columns_of: (usize, bool, usize),
    /// Which marks the review fields' columns are of ([`marks_key`]).
    marks_of: u64,
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

    /// The expression applied, when one is.
    pub fn applied(&self) -> Option<&str> {
        self.applied.as_ref().map(|(t, _)| t.as_str())
    }

    /// A filter is applied.
    pub fn is_applied(&self) -> bool {
        self.applied.is_some()
    }

    /// True when the node passes the filter (or there is none).
    pub fn passes(&self, node: NodeId) -> bool {
        self.passing()
            .is_none_or(|p| p.get(node as usize).copied().unwrap_or(false))
    }

    /// Whether each node passes the applied filter; none when no filter is applied.
    pub fn passing(&self) -> Option<&[bool]> {
        self.applied.as_ref().map(|(_, p)| p.as_slice())
    }

    /// Why the text typed is not an expression, in one line.
    pub fn error(&self) -> Option<String> {
        let e = self.error.as_ref()?;
        Some(format!(
            "filter not applied (column {}): {}",
            e.column(),
            e.message
        ))
    }

    /// What Tab offered, when it could not choose one completion.
    pub fn offered(&self) -> Option<&str> {
        self.offered.as_deref()
    }

    /// The prompt needs a second row (a fault to point at, or Tab's offer).
    pub fn needs_second_row(&self) -> bool {
        self.prompt.active && (self.error.is_some() || self.offered.is_some())
    }

    /// The fault in the text typed: where it is (byte offset, length) and why.
    pub fn fault(&self) -> Option<&QueryError> {
        self.error.as_ref()
    }

    pub(super) fn open(&mut self) {
        self.prompt.active = true;
    }

    pub(super) fn close(&mut self) {
        self.prompt.active = false;
    }

    pub(super) fn edit(&mut self, f: impl FnOnce(&mut String)) {
        f(&mut self.prompt.text);
        self.offered = None;
    }
}

/// The explorer's old terms, `key:value` (`!` negates).
const SHORTHAND_KEYS: [&str; 7] = ["tool", "decision", "class", "lease", "finding", "run", "is"];

/// The expression a filter text stands for: itself, or the old terms translated.
pub fn compile(text: &str) -> Result<Query, QueryError> {
    // An error points into the text typed, never into its translation.
    match shorthand(text).map(|expr| Query::parse(&expr)) {
        Some(Ok(query)) => Ok(query),
        _ => Query::parse(text),
    }
}

/// The old terms as the expression they meant, when `text` is made of them only:
/// `tool:x !decision:deny is:marked` → `tool contains "x" and not (decision == "deny")
/// and marked`.
pub fn shorthand(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    let mut terms = Vec::new();
    for w in words {
        let (negated, w) = w.strip_prefix('!').map_or((false, w), |r| (true, r));
        let (key, value) = w.split_once(':')?;
        if !SHORTHAND_KEYS.contains(&key) || value.is_empty() {
            return None;
        }
        let quoted = format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""));
        let lower = value.to_lowercase();
        let term = match key {
            "tool" => format!("tool contains {quoted}"),
            "decision" => format!("decision == {}", quoted.to_lowercase()),
            "class" => format!("side_effect == {}", quoted.to_lowercase()),
            "lease"
                if crate::query::FIELDS
                    .iter()
                    .any(|f| f.name == "lease.verdict" && f.values.contains(&lower.as_str())) =>
            {
                format!("lease.verdict == {}", quoted.to_lowercase())
            }
            "lease" => format!("lease contains {quoted}"),
            "finding" => format!("finding contains {quoted}"),
            "run" => format!("run contains {quoted}"),
            _ if lower == "marked" => "marked".into(),
            _ if lower == "problem" => "problem".into(),
            _ => return None,
        };
        terms.push(if negated {
            format!("not ({term})")
        } else {
            term
        });
    }
    Some(terms.join(" and "))
}

/// The expression the filter applied stands for (the old terms translated): what
/// `--where` takes to reproduce it.
pub fn expression(applied: &str) -> String {
    shorthand(applied).unwrap_or_else(|| applied.to_string())
}

/// Completions of the filter text typed, best first: the text with its last word
/// completed — a field name, or after an operator a value the field takes (its closed
/// list, else the values seen in the evidence).
pub fn completions(state: &State, text: &str) -> Vec<String> {
    use crate::query::FIELDS;
    let start = text
        .rfind(|c: char| c.is_whitespace() || "(!{,".contains(c))
        .map_or(0, |i| i + 1);
    let (head, word) = text.split_at(start);
    let before = head.trim_end();
    let after_operator = ["==", "!=", "{", ",", "contains"]
        .iter()
        .any(|op| before.ends_with(op))
        || word.starts_with('"');
    if !after_operator {
        return (FIELDS.iter())
            .filter(|f| f.name.starts_with(word))
            .map(|f| format!("{head}{}", f.name))
            .collect();
    }
    let Some(f) = (before.split(|c: char| c.is_whitespace() || c == '(' || c == '!'))
        .rev()
        .find_map(crate::query::field_index)
    else {
        return Vec::new();
    };
    let typed = word.trim_start_matches('"');
    let quote = |v: &str| format!("{head}\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""));
    if !FIELDS[f].values.is_empty() {
        return (FIELDS[f].values.iter())
            .filter(|v| v.starts_with(typed))
            .map(|v| quote(v))
            .collect();
    }
    let Some(d) = state.data.as_ref() else {
        return Vec::new();
    };
    let ctx = ctx_of(d);
    // The filter's columns when they are of this evidence (a reload makes them stale).
    let fresh;
    let columns = if state.filter.columns_of == columns_key(d) {
        &state.filter.columns
    } else {
        fresh = Columns::default();
        &fresh
    };
    (columns.values(f, &ctx).into_iter())
        .filter(|v| v.starts_with(typed))
        .take(50)
        .map(quote)
        .collect()
}

/// Tab in the filter prompt: the one completion, or what all of them share (and the
/// first few said).
pub(super) fn complete(state: &mut State) {
    let text = state.filter.text().to_string();
    let all = completions(state, &text);
    let shared = all
        .iter()
        .skip(1)
        .fold(all.first().cloned().unwrap_or_default(), |acc, c| {
            acc.chars()
                .zip(c.chars())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect()
        });
    if shared.len() > text.len() {
        state.filter.edit(|t| t.clone_from(&shared));
        apply_filter(state);
    }
    state.filter.offered = match all.len() {
        0 => Some("Tab: no field or value starts so".to_string()),
        1 => None,
        n => {
            let start = text
                .rfind(|c: char| c.is_whitespace() || "(!{,".contains(c))
                .map_or(0, |i| i + 1);
            let shown: Vec<&str> = (all.iter().take(8))
                .map(|c| c.get(start..).unwrap_or(c))
                .collect();
            let more = if n > 8 { "  …" } else { "" };
            Some(format!("Tab: {n} completions: {}{more}", shown.join("  ")))
        }
    };
}

/// The filter `P` toggles: only actions with a problem.
pub const PROBLEMS_ONLY: &str = "is:problem";

/// `P` / `*`: filters to the actions with a problem / marked, or clears that filter.
pub(super) fn toggle_only(state: &mut State, only: &str) {
    let on = state.filter.applied() == Some(only);
    state.filter.prompt.text = if on { String::new() } else { only.into() };
    apply_filter(state);
    if on {
        state.message = Some("filter cleared: every action".into());
    }
}

/// Applies the text typed when it is an expression; else keeps the last good filter and
/// says why (at every keystroke while the prompt is open).
pub(super) fn apply_filter(state: &mut State) {
    let text = state.filter.prompt.text.clone();
    let query = match compile(&text) {
        Ok(q) => q,
        Err(e) => {
            state.filter.error = Some(e);
            return;
        }
    };
    state.filter.error = None;
    let Some(d) = state.data.as_ref() else { return };
    if query.is_all() {
        if state.filter.applied.take().is_some() {
            rebuild_rows(state);
            rebuild_nav(state);
        }
        return;
    }
    let of = columns_key(d);
    if state.filter.columns_of != of {
        state.filter.columns = Columns::default();
        state.filter.columns_of = of;
    }
    // Marks change while the explorer runs: their fields are made again when they did.
    let marks = marks_key(state);
    if state.filter.marks_of != marks {
        state.filter.columns.forget_marks();
        state.filter.marks_of = marks;
    }
    let mut ctx = ctx_of(d);
    if let Some(r) = state.review.review.as_ref() {
        ctx = ctx.with_marks(r, &state.review.by_node);
    }
    let pass = query.matches(&ctx, &state.filter.columns);
    let count = pass.iter().filter(|p| **p).count();
    let verifying = if d.report.is_none() {
        " (record fields wait for verification)"
    } else {
        ""
    };
    state.message = Some(format!(
        "filter: {count} of {} actions{verifying}",
        pass.len()
    ));
    state.filter.applied = Some((text, pass));
    state.nav.set_cursor(0);
    rebuild_rows(state);
    keep_selection_in_view(state);
    rebuild_nav(state);
}

/// The loaded evidence as the filter's fields read it (the findings each action is named
/// by from the index the explorer keeps).
fn ctx_of(d: &Data) -> Ctx<'_> {
    Ctx::of(
        &d.corpus,
        &d.analysis,
        d.report.as_deref(),
        &d.findings,
        d.capture.as_deref(),
    )
    .with_named(d.finding_index())
    .with_problems(&d.flags, crate::tui::data::flag::PROBLEM)
}

/// The review's marks as the filter's review fields read them (each mark and the action
/// it is placed on), hashed: when it changes, those fields are made again.
fn marks_key(state: &State) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    if let Some(r) = state.review.review.as_ref() {
        for m in &r.marks {
            (&m.target, m.verdict, &m.note).hash(&mut h);
        }
    }
    let mut placed: Vec<(NodeId, usize)> = (state.review.by_node.iter())
        .map(|(n, i)| (*n, *i))
        .collect();
    placed.sort_unstable();
    placed.hash(&mut h);
    h.finish()
}

/// Which evidence a set of columns is of: its analysis, verified or not, its findings.
pub fn columns_key(d: &Data) -> (usize, bool, usize) {
    (
        Arc::as_ptr(&d.analysis) as usize,
        d.report.is_some(),
        d.findings.len(),
    )
}

/// The columns the worker made once the evidence was verified, for `key`: kept when they
/// are of the evidence shown.
pub(super) fn columns_made(state: &mut State, columns: Columns, key: (usize, bool, usize)) {
    if state.data.as_ref().is_some_and(|d| columns_key(d) == key) {
        state.filter.columns = columns;
        state.filter.columns_of = key;
    }
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
