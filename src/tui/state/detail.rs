//! The detail pane: its tabs, scrolling, and the Raw tab's foldable JSON lines.

use super::*;

/// The detail pane: which tab, how far scrolled, the Raw tab's cursor and folds, raw or
/// canonical bytes. The fields are private: only this module changes them.
#[derive(Debug)]
pub struct Detail {
    tab: DetailTab,
    scroll: usize,
    raw_cursor: usize,
    raw_folded: HashSet<String>,
    canonical: bool,
}

impl Default for Detail {
    fn default() -> Detail {
        Detail {
            tab: DetailTab::Authority,
            scroll: 0,
            raw_cursor: 0,
            raw_folded: HashSet::new(),
            canonical: false,
        }
    }
}

impl Detail {
    /// The tab shown.
    pub fn tab(&self) -> DetailTab {
        self.tab
    }

    /// Lines scrolled down.
    pub fn scroll(&self) -> usize {
        self.scroll
    }

    /// The Raw tab's cursor line.
    pub fn raw_cursor(&self) -> usize {
        self.raw_cursor
    }

    /// The Raw tab shows canonical bytes instead of the stored JSON.
    pub fn canonical(&self) -> bool {
        self.canonical
    }

    /// Shows a tab from its top.
    pub(super) fn show(&mut self, tab: DetailTab) {
        self.tab = tab;
        self.scroll = 0;
        self.raw_cursor = 0;
    }

    /// Another action was selected: back to the top, folds cleared (the tab stays).
    pub(super) fn new_action(&mut self) {
        self.raw_folded.clear();
        self.raw_cursor = 0;
        self.scroll = 0;
    }

    pub(super) fn toggle_canonical(&mut self) {
        self.canonical = !self.canonical;
    }
}

/// The detail tabs, `1`–`6`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DetailTab {
    Authority,
    Drift,
    Lease,
    Digests,
    Record,
    Raw,
}

impl DetailTab {
    /// All tabs in key order.
    pub const ALL: [DetailTab; 6] = [
        DetailTab::Authority,
        DetailTab::Drift,
        DetailTab::Lease,
        DetailTab::Digests,
        DetailTab::Record,
        DetailTab::Raw,
    ];

    /// The tab title, shortened for a narrow pane.
    pub fn short_title(self) -> &'static str {
        match self {
            DetailTab::Authority => "Auth",
            DetailTab::Drift => "Drift",
            DetailTab::Lease => "Lease",
            DetailTab::Digests => "Dig",
            DetailTab::Record => "Rec",
            DetailTab::Raw => "Raw",
        }
    }

    /// The tab title.
    pub fn title(self) -> &'static str {
        match self {
            DetailTab::Authority => "Authority",
            DetailTab::Drift => "Drift",
            DetailTab::Lease => "Lease",
            DetailTab::Digests => "Digests",
            DetailTab::Record => "Record",
            DetailTab::Raw => "Raw",
        }
    }
}

pub(super) fn detail_command(state: &mut State, c: Command) {
    match c {
        Command::Up => {
            if state.detail.tab == DetailTab::Raw {
                state.detail.raw_cursor = state.detail.raw_cursor.saturating_sub(1);
            } else {
                state.detail.scroll = state.detail.scroll.saturating_sub(1);
            }
        }
        Command::Down => {
            if state.detail.tab == DetailTab::Raw {
                state.detail.raw_cursor += 1;
            } else {
                state.detail.scroll += 1;
            }
        }
        Command::PageUp => state.detail.scroll = state.detail.scroll.saturating_sub(state.page),
        Command::PageDown => state.detail.scroll += state.page,
        Command::Home => {
            state.detail.scroll = 0;
            state.detail.raw_cursor = 0;
        }
        Command::Left | Command::Right => {
            let i = DetailTab::ALL
                .iter()
                .position(|t| *t == state.detail.tab)
                .unwrap_or(0) as isize;
            let step = if c == Command::Right { 1 } else { -1 };
            state.detail.tab = DetailTab::ALL[(i + step).rem_euclid(6) as usize];
            state.detail.scroll = 0;
        }
        Command::Toggle if state.detail.tab == DetailTab::Raw => {
            let lines = raw_lines(state);
            if let Some(line) =
                lines.get(state.detail.raw_cursor.min(lines.len().saturating_sub(1)))
                && line.foldable
                && !state.detail.raw_folded.remove(&line.path)
            {
                state.detail.raw_folded.insert(line.path.clone());
            }
        }
        _ => {}
    }
}

/// One line of the Raw tab's JSON tree.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonLine {
    pub path: String,
    pub depth: usize,
    pub text: String,
    pub foldable: bool,
    pub folded: bool,
}

/// The Raw tab's lines: the selected action's record as a foldable tree (other actions
/// folded by default), or its canonical bytes.
pub fn raw_lines(state: &State) -> Vec<JsonLine> {
    let Some(d) = state.data.as_ref() else {
        return Vec::new();
    };
    let Some(node) = state.timeline.node else {
        return Vec::new();
    };
    let n = &d.analysis.graph.nodes[node as usize];
    let record = d.corpus.record(n.record as usize);
    if state.detail.canonical {
        let bytes = crate::verify::chain_bytes(record);
        let text = String::from_utf8_lossy(&bytes);
        return text
            .as_bytes()
            .chunks(96)
            .enumerate()
            .map(|(i, c)| JsonLine {
                path: format!("#{i}"),
                depth: 0,
                text: sanitize(&String::from_utf8_lossy(c)).into_owned(),
                foldable: false,
                folded: false,
            })
            .collect();
    }
    let own = format!("$.actions[{}]", n.pos);
    let mut out = Vec::new();
    walk_json(
        record.json(),
        "$",
        None,
        0,
        &own,
        &state.detail.raw_folded,
        &mut out,
    );
    out
}

pub(super) fn walk_json(
    v: &Json,
    path: &str,
    key: Option<String>,
    depth: usize,
    own: &str,
    toggled: &HashSet<String>,
    out: &mut Vec<JsonLine>,
) {
    // Keys and strings as JSON writes them (quotes, backslashes and controls escaped),
    // then every invisible character as its escape: what is shown is what is stored.
    let quoted =
        |text: &str| sanitize(&serde_json::to_string(text).unwrap_or_default()).into_owned();
    let label = key.map(|k| format!("{}: ", quoted(&k))).unwrap_or_default();
    let (open, close, len) = match v {
        Json::Object(o) => ("{", "}", o.members.len()),
        Json::Array(a) => ("[", "]", a.len()),
        other => {
            let text = match other {
                Json::String(s) => format!("{label}{}", quoted(&s.lossy())),
                Json::Number(n) => format!("{label}{}", sanitize(&n.raw)),
                other => format!(
                    "{label}{}",
                    serde_json::to_string(other).unwrap_or_default()
                ),
            };
            out.push(JsonLine {
                path: path.to_string(),
                depth,
                text,
                foldable: false,
                folded: false,
            });
            return;
        }
    };
    // Default: everything open on the way to the selected action, other actions and
    // signature material folded; a toggle flips the default.
    let default_folded = depth >= 2 && !own.starts_with(path)
        || (depth == 1 && (path.ends_with(".signature") || path.ends_with(".dsse_envelope")));
    let folded = default_folded != toggled.contains(path);
    if folded || len == 0 {
        out.push(JsonLine {
            path: path.to_string(),
            depth,
            text: format!(
                "{label}{open}{}{close}",
                if len == 0 {
                    String::new()
                } else {
                    format!(" … {len} ")
                }
            ),
            foldable: len > 0,
            folded: len > 0,
        });
        return;
    }
    out.push(JsonLine {
        path: path.to_string(),
        depth,
        text: format!("{label}{open}"),
        foldable: true,
        folded: false,
    });
    match v {
        Json::Object(o) => {
            for (k, child) in &o.members {
                let key = k.lossy().into_owned();
                walk_json(
                    child,
                    &format!("{path}.{key}"),
                    Some(key),
                    depth + 1,
                    own,
                    toggled,
                    out,
                );
            }
        }
        Json::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                walk_json(
                    child,
                    &format!("{path}[{i}]"),
                    None,
                    depth + 1,
                    own,
                    toggled,
                    out,
                );
            }
        }
        _ => {}
    }
    out.push(JsonLine {
        path: format!("{path}#end"),
        depth,
        text: close.to_string(),
        foldable: false,
        folded: false,
    });
}

/// `o`: goes to the next action (after the selected one, cycling) that a violation of
/// the selected action's record names, so a record-level violation is read on the
/// action it concerns.
pub(super) fn jump_to_violation(state: &mut State) {
    let Some(d) = state.data.as_ref() else { return };
    let Some(node) = state.timeline.node else {
        return;
    };
    let g = &d.analysis.graph;
    let record = g.nodes[node as usize].record as usize;
    let Some(result) = d.report.as_ref().and_then(|r| r.records.get(record)) else {
        state.message = Some("verifying… (violations appear when done)".into());
        return;
    };
    let mut targets: Vec<NodeId> = result
        .semantic
        .violations
        .iter()
        .filter_map(|v| v.action_id.as_deref())
        .filter_map(|id| g.find_from_record(&d.corpus, record, id))
        .collect();
    targets.dedup();
    let next = targets
        .iter()
        .position(|n| *n == node)
        .map_or(0, |i| (i + 1) % targets.len().max(1));
    match targets.get(next).copied() {
        Some(target) => {
            select(state, target, true);
            state.detail.show(DetailTab::Record);
        }
        None => state.message = Some("no violation of this record names an action".into()),
    }
}
