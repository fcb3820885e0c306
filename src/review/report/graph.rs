//! The action graph of some runs — actions with their parent, re-approval and causal
//! edges — as Graphviz DOT and Mermaid (for `export` and the Markdown report). Evidence
//! text is escaped for each language: it can never close a label or inject markup.

use crate::analysis::chains::Role;
use crate::analysis::evidence::EvidenceRef;
use crate::analysis::graph::NodeId;
use crate::model::text::sanitize;
use crate::verify::verdict::RecordVerdict;
use std::collections::HashMap;
use std::fmt::Write as _;

/// How an action is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Plain,
    Denied,
    Reapproved,
}

/// An edge's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    Parent,
    ParentCrossRun,
    Reapproval,
    Causal,
}

/// An action as drawn: its node, two label lines (its record's verdict glyph and id;
/// tool · decision · result · its record's authenticity), class.
pub type Drawn = (NodeId, [String; 2], Class);

/// Which actions an export draws: those of the runs named (every run when none is) and,
/// under `--where`, only those the expression matched (per node).
#[derive(Clone, Copy, Debug, Default)]
pub struct Selection<'a> {
    pub runs: &'a [String],
    pub actions: Option<&'a [bool]>,
}

impl<'a> Selection<'a> {
    /// Every action of the runs named.
    pub fn runs(runs: &'a [String]) -> Self {
        Selection {
            runs,
            actions: None,
        }
    }

    /// The run is drawn.
    pub fn run(&self, id: &str) -> bool {
        self.runs.is_empty() || self.runs.iter().any(|r| r == id)
    }

    /// The action (of a run drawn) is drawn.
    pub fn action(&self, n: NodeId) -> bool {
        self.actions
            .is_none_or(|a| a.get(n as usize).copied().unwrap_or(false))
    }
}

/// The action graph of the selected runs, ready to print.
pub struct ActionGraph {
    /// Each run's id and its actions.
    pub runs: Vec<(String, Vec<Drawn>)>,
    pub edges: Vec<(NodeId, NodeId, Link)>,
}

impl ActionGraph {
    /// The graph of the runs named (every run when none is).
    pub fn of(ev: EvidenceRef, selection: Selection) -> ActionGraph {
        let g = &ev.analysis.graph;
        let roles = crate::analysis::chains::roles(&ev.analysis.chains);
        let mut out = ActionGraph {
            runs: Vec::new(),
            edges: Vec::new(),
        };
        let mut shown = vec![false; g.nodes.len()];
        for run in &g.runs {
            if !selection.run(&run.id) {
                continue;
            }
            let mut nodes = Vec::new();
            for &n in &run.nodes {
                let Some(facts) = g.facts(ev.corpus, n) else {
                    continue;
                };
                if !selection.action(n) {
                    continue;
                }
                let decision = facts.outcome();
                let class = match roles.get(&n) {
                    Some(Role::Reapproved) => Class::Reapproved,
                    _ if decision == Some("deny") => Class::Denied,
                    _ => Class::Plain,
                };
                // Its record's verdict leads: ✓ verified, ✗ failed, ○ not verified.
                let verdict = ev.verdict(n);
                let record = verdict.as_ref().map_or("not verified", |v| &v.authenticity);
                let glyph = verdict.as_ref().map_or('○', RecordVerdict::glyph);
                let record = format!("record {record}");
                let detail: Vec<&str> = [facts.tool(), decision, facts.observed()]
                    .into_iter()
                    .flatten()
                    .chain([record.as_str()])
                    .collect();
                let label = [
                    format!("{glyph} {}", facts.id().unwrap_or("(no action_id)")),
                    detail.join(" · "),
                ];
                shown[n as usize] = true;
                nodes.push((n, label, class));
            }
            // Under --where, a run with no matching action is left out.
            if !nodes.is_empty() || selection.actions.is_none() {
                out.runs.push((run.id.clone(), nodes));
            }
        }
        for (n, node) in g.nodes.iter().enumerate() {
            let n = n as NodeId;
            if let Some(p) = node.parent
                && shown[n as usize]
                && shown[p as usize]
            {
                let link = if roles.get(&n) == Some(&Role::Reapproved) {
                    Link::Reapproval
                } else if g.parent_is_cross_run(n) {
                    Link::ParentCrossRun
                } else {
                    Link::Parent
                };
                out.edges.push((p, n, link));
            }
        }
        for group in &g.causal {
            for w in group.nodes.windows(2) {
                if shown[w[0] as usize] && shown[w[1] as usize] {
                    out.edges.push((w[0], w[1], Link::Causal));
                }
            }
        }
        out
    }
}

/// A DOT double-quoted string's content: controls escaped, `\` and `"` backslashed.
fn dot_text(text: &str) -> String {
    sanitize(text).replace('\\', "\\\\").replace('"', "\\\"")
}

/// A Mermaid label's content: evidence text is never markup — every character outside a
/// plain set becomes a `#NNN;` entity code.
fn mermaid_text(text: &str) -> String {
    let mut out = String::new();
    for c in sanitize(text).chars() {
        if c.is_alphanumeric() || " _.:/-·@+=,()".contains(c) {
            out.push(c);
        } else {
            let _ = write!(out, "#{};", c as u32);
        }
    }
    out
}

/// The graph as Graphviz DOT.
pub fn dot(graph: &ActionGraph) -> String {
    let mut s = String::from(
        "// aeplens export --format dot: the action graph (render with `dot -Tsvg`)\n\
         digraph actions {\n  rankdir=TB;\n  node [shape=box, style=rounded, fontname=\"monospace\"];\n",
    );
    for (i, (run, nodes)) in graph.runs.iter().enumerate() {
        let _ = writeln!(
            s,
            "  subgraph \"cluster_{i}\" {{\n    label=\"run {}\";",
            dot_text(run)
        );
        for (n, [id, detail], class) in nodes {
            let style = match class {
                Class::Plain => "",
                Class::Denied => ", color=\"#c62828\", fontcolor=\"#c62828\"",
                Class::Reapproved => ", color=\"#ef6c00\", penwidth=2",
            };
            let _ = writeln!(
                s,
                "    n{n} [label=\"{}\\n{}\"{style}];",
                dot_text(id),
                dot_text(detail)
            );
        }
        s.push_str("  }\n");
    }
    for (from, to, link) in &graph.edges {
        let style = match link {
            Link::Parent => "",
            Link::ParentCrossRun => " [style=dashed, label=\"cross-run parent\"]",
            Link::Reapproval => " [penwidth=2, color=\"#ef6c00\", label=\"re-approved\"]",
            Link::Causal => " [style=dotted, label=\"causal\"]",
        };
        let _ = writeln!(s, "  n{from} -> n{to}{style};");
    }
    s.push_str("}\n");
    s
}

/// The graph as a Mermaid flowchart.
/// The most text Mermaid renders (its default `maxTextSize`; GitHub keeps it): a larger
/// diagram is refused whole.
pub const MERMAID_MAX_TEXT: usize = 50_000;

/// The graph as Mermaid, runs in order for as long as the diagram stays under
/// [`MERMAID_MAX_TEXT`]; the runs left out are counted in a comment and returned.
pub fn mermaid(graph: &ActionGraph) -> (String, usize) {
    let head = "%% aeplens export --format mermaid: the action graph\nflowchart TD\n";
    let tail = "  classDef denied stroke:#c62828,color:#c62828\n  classDef reapproved stroke:#ef6c00,stroke-width:3px\n";
    // Room kept for the tail and the comment saying what was left out.
    let budget = MERMAID_MAX_TEXT - head.len() - tail.len() - 200;
    // An edge is drawn with the later of its two ends' runs.
    let mut run_of: HashMap<NodeId, usize> = HashMap::new();
    for (i, (_, nodes)) in graph.runs.iter().enumerate() {
        run_of.extend(nodes.iter().map(|d| (d.0, i)));
    }
    let mut edges_of: Vec<String> = vec![String::new(); graph.runs.len()];
    for (from, to, link) in &graph.edges {
        let (Some(a), Some(b)) = (run_of.get(from), run_of.get(to)) else {
            continue;
        };
        let arrow = match link {
            Link::Parent => "-->",
            Link::ParentCrossRun => "-. cross-run parent .->",
            Link::Reapproval => "== re-approved ==>",
            Link::Causal => "-. causal .->",
        };
        let _ = writeln!(edges_of[*a.max(b)], "  n{from} {arrow} n{to}");
    }
    let (mut blocks, mut edges) = (String::new(), String::new());
    let mut left_out = 0;
    for (i, (run, nodes)) in graph.runs.iter().enumerate() {
        let mut block = format!("  subgraph r{i}[\"run {}\"]\n", mermaid_text(run));
        for (n, [id, detail], class) in nodes {
            let class = match class {
                Class::Plain => "",
                Class::Denied => ":::denied",
                Class::Reapproved => ":::reapproved",
            };
            let _ = writeln!(
                block,
                "    n{n}[\"{}<br/>{}\"]{class}",
                mermaid_text(id),
                mermaid_text(detail)
            );
        }
        block.push_str("  end\n");
        let size = blocks.len() + edges.len() + block.len() + edges_of[i].len();
        if left_out > 0 || size > budget {
            left_out += 1;
            continue;
        }
        blocks.push_str(&block);
        edges.push_str(&edges_of[i]);
    }
    let mut s = String::from(head);
    s.push_str(&blocks);
    s.push_str(&edges);
    if left_out > 0 {
        let _ = writeln!(
            s,
            "%% {left_out} of {} runs left out: Mermaid refuses a diagram over {MERMAID_MAX_TEXT} characters (export --run RUN_ID draws the runs named)",
            graph.runs.len()
        );
    }
    s.push_str(tail);
    (s, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_text_cannot_break_out_of_a_label() {
        let hostile = "a\"]\n<script>x</script>\\ \u{1b}[2J";
        let dot = dot_text(hostile);
        assert!(!dot.contains('\n') && !dot.contains('\u{1b}'));
        assert!(!dot.replace("\\\"", "").contains('"'), "{dot}");
        let mermaid = mermaid_text(hostile);
        for bad in ['"', ']', '<', '>', '\n', '\u{1b}', '\\'] {
            assert!(!mermaid.contains(bad), "{bad:?} in {mermaid}");
        }
        assert!(mermaid.contains("#60;script#62;"), "{mermaid}");
    }
}
