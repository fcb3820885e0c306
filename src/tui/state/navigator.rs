//! The navigator: its lists (runs with their chains and leases, chains, findings,
//! leases; load errors first), folding, the cursor, and what each row says.

use super::*;
use crate::review::marks::Place;
use rustc_hash::{FxHashMap, FxHashSet};

/// The navigator: which list, its rows, the cursor, what is unfolded, how wide. The
/// fields are private: only this module changes them (rows are rebuilt by
/// [`rebuild_nav`]).
#[derive(Debug)]
pub struct Navigator {
    list: NavList,
    items: Vec<NavItem>,
    cursor: usize,
    unfolded: FxHashSet<NavTarget>,
    /// Columns added to (or taken from) the default width with `<`/`>`.
    width_delta: i16,
}

impl Default for Navigator {
    fn default() -> Navigator {
        Navigator {
            list: NavList::Runs,
            items: Vec::new(),
            cursor: 0,
            unfolded: FxHashSet::default(),
            width_delta: 0,
        }
    }
}

impl Navigator {
    /// The list shown.
    pub fn list(&self) -> NavList {
        self.list
    }

    /// Its rows.
    pub fn items(&self) -> &[NavItem] {
        &self.items
    }

    /// The row under the cursor (an index into [`Navigator::items`]).
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Columns added to the default width (negative: taken).
    pub fn width_delta(&self) -> i16 {
        self.width_delta
    }

    /// Moves the cursor to a row, if there is one.
    pub(super) fn set_cursor(&mut self, row: usize) -> bool {
        let ok = row < self.items.len();
        if ok {
            self.cursor = row;
        }
        ok
    }

    /// Shows another list (the cursor back at its top).
    pub(super) fn set_list(&mut self, list: NavList) {
        self.list = list;
        self.cursor = 0;
    }

    /// `<`/`>`: four columns narrower or wider, within bounds.
    pub(super) fn resize(&mut self, wider: bool) {
        self.width_delta = if wider {
            (self.width_delta + 4).min(80)
        } else {
            (self.width_delta - 4).max(-20)
        };
    }
}

/// The navigator's lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NavList {
    Runs,
    Chains,
    Findings,
    Leases,
    Marks,
}

impl NavList {
    /// All lists in order.
    pub const ALL: [NavList; 5] = [
        NavList::Runs,
        NavList::Chains,
        NavList::Findings,
        NavList::Leases,
        NavList::Marks,
    ];

    /// The tab title.
    pub fn title(self) -> &'static str {
        match self {
            NavList::Runs => "Runs",
            NavList::Chains => "Chains",
            NavList::Findings => "Findings",
            NavList::Leases => "Leases",
            NavList::Marks => "Marks",
        }
    }

    /// The tab title where columns are few.
    pub fn short(self) -> &'static str {
        match self {
            NavList::Findings => "Finds",
            NavList::Leases => "Lease",
            other => other.title(),
        }
    }
}

/// What a navigator row points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NavTarget {
    Run(usize),
    Chain(usize),
    Finding(usize),
    /// The findings sharing one id (index of its first finding), with their count.
    FindingGroup(usize),
    Lease(usize),
    /// An action inside a chain (the chain's index).
    Step(usize, NodeId),
    /// An action under a lease (the lease summary's index).
    LeaseUse(usize, NodeId),
    /// A load or lease-file error (index into `State::errors`), listed first under Runs.
    LoadError(usize),
    /// A reviewer's mark (index into the review's marks).
    Mark(usize),
}

/// One navigator row.
#[derive(Clone, Debug, PartialEq)]
pub struct NavItem {
    pub depth: u8,
    pub target: NavTarget,
    /// State flags of everything inside (shown even when folded).
    pub flags: u16,
    pub foldable: bool,
    pub folded: bool,
}

/// `L`/`H`: the next or previous list, focused.
pub(super) fn switch_list(state: &mut State, step: isize) {
    let i = NavList::ALL
        .iter()
        .position(|l| *l == state.nav.list)
        .unwrap_or(0) as isize;
    show_list(state, NavList::ALL[(i + step).rem_euclid(4) as usize]);
}

/// Shows a list from its top, with the keyboard on the navigator.
pub(super) fn show_list(state: &mut State, list: NavList) {
    state.nav.list = list;
    state.nav.cursor = 0;
    state.focus = Pane::Navigator;
    rebuild_nav(state);
}

pub(super) fn nav_command(state: &mut State, c: Command) {
    let len = state.nav.items.len();
    match c {
        Command::Up => state.nav.cursor = state.nav.cursor.saturating_sub(1),
        Command::Down => state.nav.cursor = (state.nav.cursor + 1).min(len.saturating_sub(1)),
        Command::PageUp => state.nav.cursor = state.nav.cursor.saturating_sub(state.page),
        Command::PageDown => {
            state.nav.cursor = (state.nav.cursor + state.page).min(len.saturating_sub(1));
        }
        Command::Home => state.nav.cursor = 0,
        Command::End => state.nav.cursor = len.saturating_sub(1),
        Command::Left => switch_list(state, -1),
        Command::Right => switch_list(state, 1),
        Command::Toggle => activate_nav(state),
        _ => {}
    }
    if matches!(
        c,
        Command::Up
            | Command::Down
            | Command::PageUp
            | Command::PageDown
            | Command::Home
            | Command::End
    ) {
        follow_nav(state);
    }
}

/// Moving in the navigator selects what the row points at.
pub(super) fn follow_nav(state: &mut State) {
    let Some(item) = state.nav.items.get(state.nav.cursor) else {
        return;
    };
    if let Some(n) = target_node(state, item.target) {
        select(state, n, true);
    }
}

pub(super) fn target_node(state: &State, t: NavTarget) -> Option<NodeId> {
    let d = state.data.as_ref()?;
    let an = &d.analysis;
    match t {
        NavTarget::Run(r) => an.graph.runs.get(r)?.nodes.first().copied(),
        NavTarget::Chain(i) => {
            let c = an.chains.get(i)?;
            c.steps.first().map(|s| s.node)
        }
        NavTarget::Finding(i) | NavTarget::FindingGroup(i) => {
            let f = d.findings.get(i)?;
            // A finding on no action (a chain gap) goes to its record's first action.
            d.nodes_of(f).first().copied().or_else(|| {
                let at = f.locations.first()?;
                let record = (0..d.corpus.len()).find(|&r| {
                    let source = &d.corpus.record(r).source;
                    source.path == at.path && source.line == at.line
                })?;
                first_node_of_record(d, record)
            })
        }
        NavTarget::Lease(i) => an.leases.summaries.get(i)?.nodes.first().copied(),
        NavTarget::Step(_, n) | NavTarget::LeaseUse(_, n) => Some(n),
        NavTarget::Mark(i) => mark_node(state, i),
        NavTarget::LoadError(_) => None,
    }
}

pub(super) fn activate_nav(state: &mut State) {
    let Some(item) = state.nav.items.get(state.nav.cursor).cloned() else {
        return;
    };
    if item.foldable {
        if !state.nav.unfolded.remove(&item.target) {
            state.nav.unfolded.insert(item.target);
        }
        rebuild_nav(state);
    } else if let Some(n) = target_node(state, item.target) {
        select(state, n, true);
        state.focus = Pane::Timeline;
    }
}

/// Rebuilds the navigator list (respecting the filter and fold state).
pub fn rebuild_nav(state: &mut State) {
    // Into the rows' own buffer: a list of a million rows is not allocated at each switch.
    let mut items = std::mem::take(&mut state.nav.items);
    items.clear();
    nav_items(state, &mut items);
    state.nav.items = items;
    state.nav.cursor = state
        .nav
        .cursor
        .min(state.nav.items.len().saturating_sub(1));
}

/// The rows of the list shown, into `out`.
fn nav_items(state: &State, out: &mut Vec<NavItem>) {
    let errors = (0..state.errors.len()).map(|i| NavItem {
        depth: 0,
        target: NavTarget::LoadError(i),
        flags: 0,
        foldable: false,
        folded: false,
    });
    let Some(d) = state.data.as_ref() else {
        if state.nav.list == NavList::Runs {
            out.extend(errors);
        }
        return;
    };
    let an = &d.analysis;
    let g = &an.graph;
    let filtered = state.filter.is_applied();
    let passing = state.filter.passing();
    let union = |nodes: &mut dyn Iterator<Item = NodeId>| union(d, passing, nodes);
    // A chain's flags and whether it is listed: under a filter, an action of it passes
    // (decided on both cores for the chains list, which may hold a million actions).
    let chain_state = |i: usize| -> (u16, bool) {
        if filtered {
            union(&mut d.group_flags.chain_nodes(i).iter().copied())
        } else {
            (d.group_flags.chains[i], true)
        }
    };
    let item = |depth, target, flags, foldable| NavItem {
        depth,
        target,
        flags,
        foldable,
        folded: foldable && !state.nav.unfolded.contains(&target),
    };
    let chain_item = |i: usize, depth: u8, (flags, pass): (u16, bool), out: &mut Vec<NavItem>| {
        let c = &an.chains[i];
        if pass {
            let it = item(depth, NavTarget::Chain(i), flags, true);
            let folded = it.folded;
            out.push(it);
            if !folded {
                for s in &c.steps {
                    out.push(item(
                        depth + 1,
                        NavTarget::Step(i, s.node),
                        d.flags[s.node as usize],
                        false,
                    ));
                }
            }
        }
    };
    let lease_item = |i: usize, depth: u8, out: &mut Vec<NavItem>| {
        let l = &an.leases.summaries[i];
        let (flags, pass) = if filtered {
            union(&mut l.nodes.iter().copied())
        } else {
            (d.group_flags.leases[i], true)
        };
        if pass {
            let it = item(depth, NavTarget::Lease(i), flags, true);
            let folded = it.folded;
            out.push(it);
            if !folded {
                for &n in &l.nodes {
                    out.push(item(
                        depth + 1,
                        NavTarget::LeaseUse(i, n),
                        d.flags[n as usize],
                        false,
                    ));
                }
            }
        }
    };
    match state.nav.list {
        NavList::Runs => {
            out.extend(errors);
            for (ri, run) in g.runs.iter().enumerate() {
                let (flags, pass) = if filtered {
                    union(&mut run.nodes.iter().copied())
                } else {
                    (d.group_flags.runs[ri], true)
                };
                if !pass {
                    continue;
                }
                let it = item(0, NavTarget::Run(ri), flags, true);
                let folded = it.folded;
                out.push(it);
                if !folded {
                    for (i, c) in an.chains.iter().enumerate() {
                        if c.steps.first().is_some_and(|s| d.run_of(s.node) == ri) {
                            chain_item(i, 1, chain_state(i), out);
                        }
                    }
                    for (i, l) in an.leases.summaries.iter().enumerate() {
                        if l.nodes.first().is_some_and(|n| d.run_of(*n) == ri) {
                            lease_item(i, 1, out);
                        }
                    }
                }
            }
        }
        NavList::Chains => {
            out.reserve(an.chains.len());
            let states: Vec<(u16, bool)> = (0..an.chains.len())
                .into_par_iter()
                .map(chain_state)
                .collect();
            for (i, state) in states.into_iter().enumerate() {
                chain_item(i, 0, state, out);
            }
        }
        NavList::Findings => {
            // Grouped by id (in severity order), each group foldable with its count. Under
            // a filter, a finding is listed when an action it names passes.
            let mut shown = vec![!filtered; d.findings.len()];
            if filtered {
                for &(n, i) in d.finding_index() {
                    if state.passes(n) {
                        shown[i as usize] = true;
                    }
                }
            }
            // The members of a folded group are not listed (a group may hold a million).
            let mut groups: Vec<(usize, bool, Vec<usize>)> = Vec::new();
            let mut group_of: FxHashMap<&str, usize> = FxHashMap::default();
            for (i, f) in d.findings.iter().enumerate().filter(|(i, _)| shown[*i]) {
                let g = *group_of.entry(f.id).or_insert_with(|| {
                    let unfolded = state.nav.unfolded.contains(&NavTarget::FindingGroup(i));
                    groups.push((i, unfolded, Vec::new()));
                    groups.len() - 1
                });
                if groups[g].1 {
                    groups[g].2.push(i);
                }
            }
            for (first, _, members) in groups {
                let it = item(0, NavTarget::FindingGroup(first), 0, true);
                let folded = it.folded;
                out.push(it);
                if !folded {
                    out.extend(
                        members
                            .into_iter()
                            .map(|i| item(1, NavTarget::Finding(i), 0, false)),
                    );
                }
            }
        }
        NavList::Leases => {
            for i in 0..an.leases.summaries.len() {
                lease_item(i, 0, out);
            }
        }
        NavList::Marks => {
            let marks = state.review.review.as_ref().map_or(0, |r| r.marks.len());
            for i in 0..marks {
                let flags = mark_node(state, i).map_or(0, |n| d.flags[n as usize]);
                out.push(item(0, NavTarget::Mark(i), flags, false));
            }
        }
    }
}

/// The flags of some actions together, and whether any passes the filter (`passing`;
/// all do when none is applied).
fn union(
    d: &Data,
    passing: Option<&[bool]>,
    nodes: &mut dyn Iterator<Item = NodeId>,
) -> (u16, bool) {
    let mut flags = 0;
    let mut any = passing.is_none();
    for n in nodes {
        flags |= d.flags[n as usize];
        any = any || passing.is_some_and(|p| p.get(n as usize).copied().unwrap_or(false));
    }
    (flags, any)
}

/// The action a mark is shown on: its own, its record's first, its finding's first.
pub(super) fn mark_node(state: &State, i: usize) -> Option<NodeId> {
    let d = state.data.as_ref()?;
    match *state.review.places.get(i)? {
        Place::Action(n) | Place::ActionChanged(n) => Some(n),
        Place::Record(r) => first_node_of_record(d, r),
        Place::Finding(f) => d.nodes_of(d.findings.get(f)?).first().copied(),
        Place::Gone | Place::Pending => None,
    }
}

/// The first action of record `record` (flat index), if it holds one.
fn first_node_of_record(d: &Data, record: usize) -> Option<NodeId> {
    let mut nodes = d.analysis.graph.nodes.iter();
    nodes
        .position(|n| n.record as usize == record)
        .map(|n| n as NodeId)
}

/// The text of a navigator row (built only for the rows on screen), sanitised.
pub fn nav_text(state: &State, item: &NavItem) -> String {
    if let NavTarget::LoadError(i) = item.target {
        let e = state.errors.get(i).map_or("", String::as_str);
        return format!("⚠ {}", sanitize(e));
    }
    let Some(d) = state.data.as_ref() else {
        return String::new();
    };
    let an = &d.analysis;
    let g = &an.graph;
    let action_id = |n: NodeId| {
        let id = g.facts(&d.corpus, n).and_then(|a| a.id());
        crate::model::text::show_id(id.unwrap_or("(no id)")).into_owned()
    };
    let text = match item.target {
        NavTarget::LoadError(_) => String::new(),
        NavTarget::Mark(i) => {
            let (Some(r), Some(place)) = (state.review.review.as_ref(), state.review.places.get(i))
            else {
                return String::new();
            };
            let m = &r.marks[i];
            let note = match m.note.lines().next() {
                Some(first) if !first.trim().is_empty() => format!(" · {first}"),
                _ => " · no note".to_string(),
            };
            let status = match place.warning() {
                Some(_) => format!(" · {}", place.status()),
                None => String::new(),
            };
            format!(
                "⚑ {} {}{note}{status}",
                m.verdict.name().to_uppercase(),
                m.target.label()
            )
        }
        NavTarget::Run(ri) => {
            // The chain's glyph first: a cut row keeps it.
            let run = &g.runs[ri];
            let (glyph, chain) = chain_status(d, ri);
            format!(
                "{glyph} {} · {} rec · {} act · chain {chain}",
                if run.id.is_empty() {
                    "(no run_id)"
                } else {
                    &run.id
                },
                run.records.len(),
                run.nodes.len(),
            )
        }
        NavTarget::Chain(i) => {
            let c = &an.chains[i];
            match c.kind {
                ChainKind::DenyReapproval => format!(
                    "⊘→ {} ({}) {}",
                    c.actions().join(" → "),
                    c.steps.len(),
                    c.ended.as_deref().unwrap_or("")
                ),
                ChainKind::Causal => format!("causal {} ({})", c.id, c.steps.len()),
            }
        }
        NavTarget::Step(i, n) => {
            let step = an.chains[i].steps.iter().find(|s| s.node == n);
            format!(
                "{} {} {}",
                action_id(n),
                step.and_then(|s| s.tool.as_deref()).unwrap_or("?"),
                step.and_then(|s| s.decision.as_deref())
                    .unwrap_or("no decision")
            )
        }
        NavTarget::FindingGroup(first) => {
            let f = &d.findings[first];
            let count = d.findings.iter().filter(|x| x.id == f.id).count();
            format!("{} {} ×{count}", f.severity.mark(), f.id)
        }
        NavTarget::Finding(i) => {
            let f = &d.findings[i];
            let mark = f.severity.mark();
            let ids: Vec<_> = f.action_ids.iter().map(|a| show_id(a)).collect();
            if item.depth > 0 {
                // Under its group: the id is the group's.
                format!("{mark} {} {}", ids.join(","), f.message)
            } else {
                format!("{mark} {} {} {}", f.id, ids.join(","), f.message)
            }
        }
        NavTarget::Lease(i) => {
            let l = &an.leases.summaries[i];
            let outside = l
                .nodes
                .iter()
                .filter(|n| d.flags[**n as usize] & flag::LEASE_OUT != 0)
                .count();
            let source = l.source.name();
            format!(
                "⧗ {} ({} uses, {source}){}",
                l.lease_id,
                l.nodes.len(),
                if outside > 0 {
                    format!(" ⌛ {outside} outside")
                } else {
                    String::new()
                }
            )
        }
        NavTarget::LeaseUse(_, n) => {
            let verdict = an.leases.by_node.get(&n).map_or("?", |v| v.verdict.name());
            format!("{} {verdict}", action_id(n))
        }
    };
    sanitize(&text).into_owned()
}

/// The chain verdict of a run's records: its glyph ([`crate::verify::chain::ChainStatus::glyph_forked`]) and
/// its words (`intact, forked`; `…` while verifying, `—` when not evaluated).
pub fn chain_status(d: &Data, run: usize) -> (char, String) {
    let Some(report) = d.report.as_ref() else {
        return ('○', "…".into());
    };
    let run = &d.analysis.graph.runs[run];
    let mut worst: Option<crate::verify::chain::ChainStatus> = None;
    let mut forked = false;
    for &r in &run.records {
        let Some(axis) = report.records.get(r as usize).map(|x| &x.chain) else {
            continue;
        };
        if let Some(s) = axis.status {
            worst = Some(worst.map_or(s, |w| w.max(s)));
        }
        forked |= axis.forked_at.is_some();
    }
    match worst {
        None => ('○', "—".into()),
        Some(s) => (
            s.glyph_forked(forked),
            format!("{}{}", s.name(), if forked { ", forked" } else { "" }),
        ),
    }
}

/// `--goto RUN/ACTION` (or `ACTION` when one run holds it): selects that action, or says
/// why not (none, or several — nothing is picked of several).
pub fn goto(state: &mut State, spec: &str) {
    let Some(d) = state.data.as_ref() else {
        return;
    };
    let g = &d.analysis.graph;
    let found = match spec.split_once('/') {
        Some((run, id)) if !g.find_in_run(&d.corpus, run, id).is_empty() => {
            g.find_in_run(&d.corpus, run, id)
        }
        _ => g.find_all(&d.corpus, spec),
    };
    match found.as_slice() {
        [one] => {
            let n = *one;
            select(state, n, true);
            state.focus = Pane::Timeline;
        }
        [] => state.message = Some(format!("--goto: no action {}", sanitize(spec))),
        many => {
            state.message = Some(format!(
                "--goto: {} actions are {} (several runs or emitters): name one as RUN/ACTION",
                many.len(),
                sanitize(spec)
            ));
        }
    }
}
