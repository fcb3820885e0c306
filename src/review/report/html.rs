//! The report as one self-contained HTML file: no script, no request (a strict
//! Content-Security-Policy says so to the browser as well), inline SVG for the waterfall
//! of each marked run with its lease windows and for the denied→re-approved chains,
//! readable printed. Rendered by minijinja from `report.html` with HTML auto-escaping;
//! every value is first passed through [`sanitize`], so bidi, invisible and control
//! characters in evidence show as visible escapes instead of acting.

use super::{Answers, IncidentReport, Scope};
use crate::analysis::chains::Role;
use crate::analysis::evidence::EvidenceRef;
use crate::analysis::graph::NodeId;
use crate::model::text::sanitize;
use crate::model::time::format_ms;
use crate::verify::siblings::EvidenceLink;
use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, Value, escape_formatter};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// The template (HTML auto-escaped).
const TEMPLATE: &str = include_str!("report.html");

/// How many actions a waterfall draws before saying how many it left out.
pub const WATERFALL_ROWS: usize = 200;
/// How many runs get a waterfall, and how many chains the chain graph draws.
pub const WATERFALLS: usize = 10;
pub const CHAINS_DRAWN: usize = 50;
/// How many rows a table lists (findings of one id, chains, chain paths) before saying how
/// many more there are and which command lists them all: a report of a 20,000-record
/// store stays a document a reviewer reads, not a thousand printed pages.
pub const ROWS_LISTED: usize = 100;
/// How many runs not drawn the report names.
const RUNS_NAMED: usize = 50;

/// Renders the report.
pub fn render(r: &IncidentReport, ev: EvidenceRef) -> String {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    // Template output (a macro's, marked safe) passes; every other string is made
    // visible (controls, bidi, invisibles as escapes) before it is HTML-escaped.
    env.set_formatter(|out, state, value| match value.as_str() {
        Some(s) if !value.is_safe() => {
            escape_formatter(out, state, &Value::from(sanitize(s).as_ref()))
        }
        _ => escape_formatter(out, state, value),
    });
    env.add_filter("lines", |s: String| -> Vec<String> {
        s.lines().map(str::to_string).collect()
    });
    let marks: Option<Vec<Option<Answers>>> = r.review.as_ref().map(|rv| {
        rv.marks
            .iter()
            .map(|m| m.action.as_ref().map(Answers::of))
            .collect()
    });
    let at = |a: Option<&crate::verify::links::RecordAt>| {
        a.map_or("—".to_string(), |a| format!("{}:{}", a.path, a.line))
    };
    // Paths that are not intact first: what a reviewer reads when not all are listed.
    let mut ordered: Vec<&crate::verify::links::ChainPath> = r.chain_paths.iter().collect();
    ordered.sort_by_key(|p| p.status == crate::verify::chain::ChainStatus::Intact);
    let paths: Vec<[String; 5]> = ordered
        .into_iter()
        .map(|p| {
            [
                p.status.name().to_string(),
                p.records.len().to_string(),
                at(p.records.first()),
                at(p.records.last()),
                at(p.broken_at.as_ref()),
            ]
        })
        .collect();
    let other: Vec<Other> = (r.other_evidence.iter())
        .map(|o| Other {
            kind: o.kind,
            verdict: o.verdict.short(),
            links: o.links.iter().map(EvidenceLink::words).collect(),
        })
        .collect();
    let (drawn, not_drawn, unnamed) = waterfalls(r, ev);
    let ctx = minijinja::context! {
        r => Value::from(Serde(r)),
        marks => Value::from(Serde(marks)),
        actions => Value::from(Serde(r.actions.iter().map(Answers::of).collect::<Vec<_>>())),
        waterfalls => Value::from(Serde(drawn)),
        waterfalls_drawn => WATERFALLS,
        runs_not_drawn => Value::from(Serde(not_drawn)),
        runs_unnamed => unnamed,
        chains_drawn => CHAINS_DRAWN,
        listed => ROWS_LISTED,
        chains => Value::from(Serde(chain_graph(r))),
        path_counts => super::counts(&r.summary.chain_paths).join(", "),
        paths => Value::from(Serde(paths)),
        other => Value::from(Serde(other)),
        capture => Value::from(Serde(&r.capture_lines)),
        scope_sentence => r.scope.as_ref().map(Scope::sentence),
    };

    match env.template_from_str(TEMPLATE).and_then(|t| t.render(ctx)) {
        Ok(html) => html,
        // The template is ours and tested; should it ever fail, say so in the page.
        Err(e) => format!(
            "<!doctype html><meta charset=\"utf-8\"><title>aeplens report</title><p>aeplens could not render this report: {}</p>",
            html_escape(&e.to_string())
        ),
    }
}

fn html_escape(text: &str) -> String {
    sanitize(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A sibling evidence record's row.
#[derive(Serialize)]
struct Other {
    kind: &'static str,
    verdict: String,
    links: Vec<String>,
}

/// A run's actions on a time axis, with the lease windows they ran under.
#[derive(Serialize)]
struct Waterfall {
    run_id: String,
    /// Why this run is drawn (`marked`, `high finding`).
    why: &'static str,
    width: u32,
    height: u32,
    rows: Vec<Bar>,
    leases: Vec<Window>,
    ticks: Vec<Tick>,
    /// Actions not drawn (beyond [`WATERFALL_ROWS`]) and without a time.
    left_out: usize,
    untimed: usize,
}

#[derive(Serialize)]
struct Bar {
    y: u32,
    x: f64,
    label: String,
    /// `plain`, `denied`, `reapproved`, `outside` (ran outside its lease window).
    class: &'static str,
    marked: bool,
}

#[derive(Serialize)]
struct Window {
    x: f64,
    w: f64,
    y: u32,
    h: u32,
    label: String,
    /// True when only inferred from first and last use (drawn dashed).
    inferred: bool,
}

#[derive(Serialize)]
struct Tick {
    x: f64,
    label: String,
}

const LABEL_W: f64 = 230.0;
const PLOT_W: f64 = 640.0;
const ROW_H: u32 = 18;
const TOP: u32 = 34;
/// Half the width of a tick label (`HH:MM:SS`, 8 characters of 11 px monospace).
const TICK_LABEL_HALF: f64 = 8.0 * 11.0 * 0.6 / 2.0;

/// The waterfalls of the marked runs, else of the runs of actions behind high findings
/// (at most [`WATERFALLS`]), and the ids of the runs beyond that (at most [`RUNS_NAMED`]).
fn waterfalls(r: &IncidentReport, ev: EvidenceRef) -> (Vec<Waterfall>, Vec<String>, usize) {
    let g = &ev.analysis.graph;
    let marked: HashSet<NodeId> = r
        .review
        .iter()
        .flat_map(|rv| &rv.marks)
        .filter_map(|m| {
            let a = m.action.as_ref()?;
            g.find_on_chain(ev.corpus, a.run_id, a.action_id?, &a.chain)
        })
        .collect();
    let mut nodes: Vec<NodeId> = marked.iter().copied().collect();
    nodes.sort_unstable();
    let mut why = "marked";
    if nodes.is_empty() {
        why = "actions behind high findings";
        nodes = r
            .actions
            .iter()
            .filter_map(|a| g.find_on_chain(ev.corpus, a.run_id, a.action_id?, &a.chain))
            .collect();
    }
    let mut runs: Vec<(usize, &'static str)> = Vec::new();
    for n in nodes {
        let run = g.nodes[n as usize].run as usize;
        if !runs.iter().any(|(r, _)| *r == run) {
            runs.push((run, why));
        }
    }
    let roles = crate::analysis::chains::roles(&ev.analysis.chains);
    let not_drawn: Vec<String> = (runs.iter().skip(WATERFALLS).take(RUNS_NAMED))
        .map(|(run, _)| g.runs[*run].id.clone())
        .collect();
    let unnamed = runs.len().saturating_sub(WATERFALLS + not_drawn.len());
    let drawn = (runs.into_iter().take(WATERFALLS))
        .map(|(run, why)| waterfall(ev, run, why, &marked, &roles))
        .collect();
    (drawn, not_drawn, unnamed)
}

fn waterfall(
    ev: EvidenceRef,
    run: usize,
    why: &'static str,
    marked: &HashSet<NodeId>,
    roles: &HashMap<NodeId, Role>,
) -> Waterfall {
    let g = &ev.analysis.graph;
    let all = &g.runs[run].nodes;
    let timed: Vec<(NodeId, f64)> = all
        .iter()
        .filter_map(|n| g.nodes[*n as usize].time().map(|t| (*n, t)))
        .collect();
    let shown = &timed[..timed.len().min(WATERFALL_ROWS)];
    let leases = &ev.analysis.leases;
    // The axis spans the actions and the windows of the leases they ran under.
    let mut span: Vec<f64> = shown.iter().map(|(_, t)| *t).collect();
    let mut windows: Vec<(usize, f64, f64, bool, u32, u32)> = Vec::new();
    for (i, l) in leases.summaries.iter().enumerate() {
        let rows: Vec<u32> = shown
            .iter()
            .enumerate()
            .filter(|(_, (n, _))| l.nodes.contains(n))
            .map(|(row, _)| row as u32)
            .collect();
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
            continue;
        };
        let (from, to, inferred) = match (l.granted_at_ms, l.expires_at_ms) {
            (Some(a), Some(b)) => (a, b, false),
            _ => match (l.first_use_ms, l.last_use_ms) {
                (Some(a), Some(b)) => (a, b, true),
                _ => continue,
            },
        };
        span.extend([from, to]);
        windows.push((i, from, to, inferred, *first, *last));
    }
    let lo = span.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = span.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo.is_finite() {
        (lo, hi.max(lo + 1.0))
    } else {
        (0.0, 1.0)
    };
    let x = |t: f64| LABEL_W + (t - lo) / (hi - lo) * PLOT_W;
    let rows = shown
        .iter()
        .enumerate()
        .map(|(i, (n, t))| {
            let facts = g.facts(ev.corpus, *n);
            let id = facts.and_then(|f| f.id()).unwrap_or("(no action_id)");
            let tool = facts.and_then(|f| f.tool()).unwrap_or("?");
            let outside = leases
                .by_node
                .get(n)
                .is_some_and(|l| l.verdict.is_outside());
            let class = if outside {
                "outside"
            } else if roles.get(n) == Some(&Role::Reapproved) {
                "reapproved"
            } else if facts.and_then(|f| f.outcome()) == Some("deny") {
                "denied"
            } else {
                "plain"
            };
            Bar {
                y: TOP + i as u32 * ROW_H,
                x: round(x(*t)),
                label: format!("{id} {tool}"),
                class,
                marked: marked.contains(n),
            }
        })
        .collect();
    let windows = windows
        .into_iter()
        .map(|(i, from, to, inferred, first, last)| Window {
            x: round(x(from)),
            w: round((x(to) - x(from)).max(2.0)),
            y: TOP + first * ROW_H - 9,
            h: (last - first + 1) * ROW_H,
            label: format!("lease {}", leases.summaries[i].lease_id),
            inferred,
        })
        .collect();
    let ticks = (0..=4)
        .map(|k| {
            let t = lo + (hi - lo) * f64::from(k) / 4.0;
            Tick {
                x: round(x(t)),
                label: format_ms(t),
            }
        })
        .collect();
    Waterfall {
        run_id: g.runs[run].id.clone(),
        why,
        // Room right of the axis for half the last tick's label (centred on its tick).
        width: (LABEL_W + PLOT_W + TICK_LABEL_HALF) as u32 + 8,
        height: TOP + shown.len() as u32 * ROW_H + 10,
        rows,
        leases: windows,
        ticks,
        left_out: timed.len() - shown.len(),
        untimed: all.len() - timed.len(),
    }
}

/// Denied→re-approved chains as boxes joined by arrows, one chain a row.
#[derive(Serialize)]
struct ChainGraph {
    width: u32,
    height: u32,
    boxes: Vec<ChainBox>,
    arrows: Vec<(u32, u32, u32)>,
    left_out: usize,
}

#[derive(Serialize)]
struct ChainBox {
    x: u32,
    y: u32,
    id: String,
    detail: String,
    denied: bool,
}

const BOX_W: u32 = 170;
const BOX_H: u32 = 40;
const GAP: u32 = 36;

fn chain_graph(r: &IncidentReport) -> Option<ChainGraph> {
    if r.chains.is_empty() {
        return None;
    }
    let mut boxes = Vec::new();
    let mut arrows = Vec::new();
    let mut widest = 0;
    for (row, c) in r.chains.iter().take(CHAINS_DRAWN).enumerate() {
        let y = 10 + row as u32 * (BOX_H + 20);
        for (i, step) in c.steps.iter().enumerate() {
            let x = 10 + i as u32 * (BOX_W + GAP);
            if i > 0 {
                arrows.push((x - GAP, x, y + BOX_H / 2));
            }
            let decision = step.decision.as_deref().unwrap_or("?");
            boxes.push(ChainBox {
                x,
                y,
                id: step.action_id.to_string(),
                detail: format!("{} · {decision}", step.tool.as_deref().unwrap_or("?")),
                denied: decision == "deny",
            });
            widest = widest.max(x + BOX_W + 10);
        }
    }
    let drawn = r.chains.len().min(CHAINS_DRAWN) as u32;
    Some(ChainGraph {
        width: widest,
        height: 10 + drawn * (BOX_H + 20),
        boxes,
        arrows,
        left_out: r.chains.len().saturating_sub(CHAINS_DRAWN),
    })
}

fn round(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}
