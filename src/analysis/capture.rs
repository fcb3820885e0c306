//! Capture (analysis-rules §9): the agent's own OpenTelemetry tool-call spans joined to the
//! evidence's actions, to show what the runtime did that the evidence does not say.
//!
//! Join, per span, in this order: (1) its span id is an action id; (2) its
//! `gen_ai.tool.call.id` (or `aep.action_id`) is an action id of its run; (3) the same run
//! and tool, its start within the clock tolerance of the action's `timestamp_ms` once the
//! clock offset (the median of (1)–(2)) is taken off, nearest first. Each action is used
//! once. A run is *traced* when a span names it (or its trace is a record's `trace_id`).

use super::Analysis;
use super::graph::{Graph, NodeId};
use crate::load::Corpus;
use crate::load::traces::Telemetry;
use crate::model::finding::{Finding, Location, Severity};
use crate::model::telemetry::{SpanStatus, TraceSpan};
use crate::model::time::format_ms;
use rustc_hash::FxHashMap;
use serde::Serialize;
use serde_json::json;

/// The default clock tolerance of rule (3), in milliseconds (`--clock-skew`).
pub const DEFAULT_TOLERANCE_MS: f64 = 2000.0;

/// Which rule joined a span to its action (written by its [`JoinRule::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinRule {
    /// (1) The span id is the action id.
    SpanId,
    /// (2) `gen_ai.tool.call.id` / `aep.action_id` is the action id, in the span's run.
    CallId,
    /// (3) The same run and tool, at the same time within the tolerance.
    RunToolTime,
}

impl Serialize for JoinRule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl JoinRule {
    /// Every rule, in the order they are tried.
    pub const ALL: [JoinRule; 3] = [JoinRule::SpanId, JoinRule::CallId, JoinRule::RunToolTime];

    /// The name outputs give it.
    pub fn name(self) -> &'static str {
        match self {
            JoinRule::SpanId => "span-id",
            JoinRule::CallId => "call-id",
            JoinRule::RunToolTime => "run-tool-time",
        }
    }

    /// What the rule compared, for a reviewer.
    pub fn explain(self) -> &'static str {
        match self {
            JoinRule::SpanId => "span id = action id",
            JoinRule::CallId => "gen_ai.tool.call.id = action id, same run",
            JoinRule::RunToolTime => "same run and tool, start within the clock tolerance",
        }
    }
}

/// A span joined to an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Join {
    pub node: NodeId,
    pub rule: JoinRule,
}

/// What the telemetry says of one traced run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunCapture {
    pub run_id: String,
    /// `complete`: every span has its action and every action in the telemetry's window
    /// its span; `gaps` otherwise.
    pub status: &'static str,
    pub spans: usize,
    pub actions: usize,
    pub joined: usize,
    pub spans_without_action: usize,
    pub actions_without_span: usize,
    /// Actions outside the telemetry's time window (or without a time): not judged.
    pub not_judged: usize,
    /// The telemetry's window in evidence time (ms), the tolerance included.
    pub window_ms: (f64, f64),
}

/// The telemetry joined to the evidence.
#[derive(Debug, Default)]
pub struct Capture {
    pub spans: Vec<TraceSpan>,
    pub files: Vec<crate::load::traces::TraceFile>,
    /// Per span, the action it is joined to.
    pub joins: Vec<Option<Join>>,
    /// Per span, the graph run it belongs to (`None`: a run the evidence does not hold).
    pub span_runs: Vec<Option<u32>>,
    /// Per node, the span joined to it.
    span_of: FxHashMap<NodeId, u32>,
    /// Per graph run, its spans in file order.
    spans_by_run: Vec<Vec<u32>>,
    /// Per graph run, the extent of its own spans (`invoke_agent`, a trace's root), in
    /// telemetry time (ms), when the telemetry holds one.
    run_extent: Vec<Option<(f64, f64)>>,
    /// The traced runs, in graph order, and each by its id.
    pub runs: Vec<RunCapture>,
    run_index: FxHashMap<String, u32>,
    /// Telemetry time minus evidence time, the median over the id joins (ms).
    pub offset_ms: Option<f64>,
    pub tolerance_ms: f64,
    /// Lines or files of the telemetry that could not be read (each said where it was).
    pub load_errors: usize,
    /// Runs the telemetry names that the evidence does not hold, with their span counts
    /// (spans with no run and no known trace under `""`): ignored.
    pub ignored: Vec<(String, usize)>,
    /// The capture findings (F-CAPTURE-GAP, F-UNOBSERVED-ACTION, F-TELEMETRY-MISMATCH),
    /// each with its time.
    pub findings: Vec<super::findings::Timed>,
}

impl Capture {
    /// The span joined to `node`, and how.
    pub fn span_of(&self, node: NodeId) -> Option<(&TraceSpan, JoinRule)> {
        let s = *self.span_of.get(&node)?;
        let join = self.joins[s as usize]?;
        Some((&self.spans[s as usize], join.rule))
    }

    /// The capture as outputs give it (check's `telemetry` member, reports): the files,
    /// how many spans were joined by each rule, the clock offset and tolerance, each traced
    /// run and the runs ignored.
    pub fn summary(&self) -> serde_json::Value {
        let count = |rule| {
            (self.joins.iter().flatten())
                .filter(|j| j.rule == rule)
                .count()
        };
        let files: Vec<serde_json::Value> = (self.files.iter())
            .map(|f| {
                json!({"path": &*f.path, "documents": f.documents, "spans": f.spans, "tool_spans": f.tool_spans})
            })
            .collect();
        let joined: serde_json::Map<String, serde_json::Value> = (JoinRule::ALL.into_iter())
            .map(|r| (r.name().to_string(), count(r).into()))
            .collect();
        let ignored: Vec<serde_json::Value> = (self.ignored.iter())
            .map(|(run, spans)| json!({"run_id": (!run.is_empty()).then_some(run), "tool_spans": spans}))
            .collect();
        json!({
            "witness": "opentelemetry-traces",
            "files": files,
            "tool_spans": self.spans.len(),
            "joined": joined,
            "clock_offset_ms": self.offset_ms,
            "clock_tolerance_ms": self.tolerance_ms,
            "runs": self.runs,
            "ignored_runs": ignored,
            "load_errors": self.load_errors,
        })
    }

    /// One line a traced run, for text outputs: its status and counts.
    pub fn run_lines(&self) -> Vec<String> {
        let offset = self.offset_ms.map_or_else(
            || "no clock offset measured (no id joins)".to_string(),
            |o| format!("clock offset {:+.3} s", o / 1000.0),
        );
        let mut out: Vec<String> = (self.runs.iter())
            .map(|r| {
                format!(
                    "{}: {} · {} · {} · {} joined · {} without action · {} without span{}",
                    r.run_id,
                    r.status,
                    plural(r.spans, "tool-call span"),
                    plural(r.actions, "action"),
                    r.joined,
                    plural(r.spans_without_action, "span"),
                    plural(r.actions_without_span, "action"),
                    if r.not_judged > 0 {
                        format!(
                            " · {} outside the telemetry's window, not judged",
                            r.not_judged
                        )
                    } else {
                        String::new()
                    }
                )
            })
            .collect();
        out.push(format!(
            "telemetry: {} in {} · {offset}, tolerance ±{} s{}",
            plural(self.spans.len(), "tool-call span"),
            plural(self.files.len(), "file"),
            self.tolerance_ms / 1000.0,
            if self.load_errors > 0 {
                format!(" · {} (said above)", plural(self.load_errors, "load error"))
            } else {
                String::new()
            }
        ));
        out
    }

    /// What the telemetry saw of `node` of run `run_id`, as `show` gives it: the span
    /// joined to it and the rule that joined them, or that none was (`None`: the run is not
    /// traced, so nothing is claimed).
    pub fn action_view(&self, node: NodeId, run_id: &str) -> Option<serde_json::Value> {
        self.run(run_id)?;
        Some(match self.span_of(node) {
            Some((span, rule)) => json!({
                "span": span_json(span),
                "join": rule,
                "joined_by": rule.explain(),
            }),
            None => {
                json!({"span": null, "join": null, "joined_by": "no span of the run's telemetry"})
            }
        })
    }

    /// Span `s`'s start in evidence time: the clock offset taken off.
    pub fn evidence_time(&self, s: u32) -> f64 {
        self.spans[s as usize].start_ms() - self.offset_ms.unwrap_or(0.0)
    }

    /// What the telemetry says of run number `run` of the graph (`None`: not traced).
    pub fn run(&self, run_id: &str) -> Option<&RunCapture> {
        let i = *self.run_index.get(run_id)?;
        self.runs.get(i as usize)
    }

    /// The spans of graph run `run`, in file order.
    pub fn spans_in(&self, run: u32) -> &[u32] {
        self.spans_by_run
            .get(run as usize)
            .map_or(&[], Vec::as_slice)
    }

    /// The spans of graph run `run` without an action, in time order.
    pub fn gaps_in(&self, run: u32) -> Vec<u32> {
        let mut out: Vec<u32> = (self.spans_in(run).iter().copied())
            .filter(|&s| self.joins[s as usize].is_none())
            .collect();
        out.sort_by_key(|&s| self.spans[s as usize].start_ns);
        out
    }

    /// Joins `telemetry` to the actions of `graph`; `tolerance_ms` is rule (3)'s.
    pub fn join(
        corpus: &Corpus,
        analysis: &Analysis,
        telemetry: Telemetry,
        tolerance_ms: f64,
    ) -> Capture {
        let graph = &analysis.graph;
        let Telemetry {
            spans,
            run_spans,
            files,
            errors,
            ..
        } = telemetry;
        let facts = |n: NodeId| graph.facts(corpus, n);
        let time = |n: NodeId| graph.nodes[n as usize].time();
        // Runs by id, and by the trace ids their records carry.
        let runs: FxHashMap<&str, u32> = (graph.runs.iter().enumerate())
            .map(|(i, r)| (r.id.as_str(), i as u32))
            .collect();
        let mut traces: FxHashMap<&str, u32> = FxHashMap::default();
        for record in corpus.records() {
            let f = record.facts();
            if let (Some(t), Some(r)) = (f.trace_id.as_deref(), f.run_id.as_deref())
                && let Some(&run) = runs.get(r)
            {
                traces.entry(t).or_insert(run);
            }
        }
        let mut ignored: Vec<(String, usize)> = Vec::new();
        let mut ignored_at: FxHashMap<&str, usize> = FxHashMap::default();
        let span_runs: Vec<Option<u32>> = spans
            .iter()
            .map(|s| {
                let run = match s.run_id.as_deref() {
                    Some(id) => runs.get(id).copied(),
                    None => traces.get(s.trace_id.as_str()).copied(),
                };
                if run.is_none() {
                    let name = s.run_id.as_deref().unwrap_or("");
                    let i = *ignored_at.entry(name).or_insert_with(|| {
                        ignored.push((name.to_string(), 0));
                        ignored.len() - 1
                    });
                    ignored[i].1 += 1;
                }
                run
            })
            .collect();
        // Action ids, each to the nodes that carry it.
        let mut by_id: FxHashMap<&str, Vec<NodeId>> = FxHashMap::default();
        for n in 0..graph.nodes.len() as NodeId {
            if let Some(id) = facts(n).and_then(|f| f.id()) {
                by_id.entry(id).or_default().push(n);
            }
        }
        let mut used = vec![false; graph.nodes.len()];
        let mut joins: Vec<Option<Join>> = vec![None; spans.len()];
        // The unused node carrying the span's id in `run`: of several (emitters of one run
        // sharing default ids), the span's own emitter's — its agent id, then its tool —
        // before the nearest in time, which a large clock skew makes the wrong one.
        let pick = |span: &TraceSpan, id: &str, run: Option<u32>, used: &[bool]| {
            let at = span.start_ms();
            let agent = span.attribute("gen_ai.agent.id");
            let candidates: Vec<NodeId> = (by_id.get(id)?.iter().copied())
                .filter(|&n| !used[n as usize])
                .filter(|&n| run.is_none_or(|r| graph.nodes[n as usize].run == r))
                .collect();
            let several = candidates.len() > 1;
            let key = |n: NodeId| {
                let other_agent = several
                    && agent.is_some_and(|a| {
                        agent_of(corpus, graph.nodes[n as usize].record).is_some_and(|b| b != a)
                    });
                let other_tool =
                    span.tool.is_some() && facts(n).and_then(|f| f.tool()) != span.tool.as_deref();
                let d = time(n).map_or(f64::INFINITY, |t| (t - at).abs());
                (other_agent, other_tool, d)
            };
            candidates.into_iter().min_by(|&a, &b| {
                let (ka, kb) = (key(a), key(b));
                (ka.0, ka.1)
                    .cmp(&(kb.0, kb.1))
                    .then(ka.2.total_cmp(&kb.2))
                    .then(a.cmp(&b))
            })
        };
        for rule in [JoinRule::SpanId, JoinRule::CallId] {
            for (s, span) in spans.iter().enumerate() {
                if joins[s].is_some() {
                    continue;
                }
                let id = match rule {
                    JoinRule::SpanId => Some(span.span_id.as_str()),
                    _ => span.call_id.as_deref(),
                };
                // By call id only within the span's run; a span id is unique by itself.
                let run = match rule {
                    JoinRule::SpanId => None,
                    _ if span_runs[s].is_none() => continue,
                    _ => span_runs[s],
                };
                if let Some(n) = id.and_then(|id| pick(span, id, run, &used)) {
                    used[n as usize] = true;
                    joins[s] = Some(Join { node: n, rule });
                }
            }
        }
        let offset_ms = median(
            (spans.iter().zip(&joins))
                .filter_map(|(span, j)| Some(span.start_ms() - time(j.as_ref()?.node)?))
                .collect(),
        );
        let offset = offset_ms.unwrap_or(0.0);
        // (3): candidate pairs within the tolerance, nearest first.
        let mut pairs: Vec<(f64, u32, NodeId)> = Vec::new();
        for (s, span) in spans.iter().enumerate() {
            let (None, Some(run), Some(tool)) = (joins[s], span_runs[s], span.tool.as_deref())
            else {
                continue;
            };
            let at = span.start_ms() - offset;
            // A run's nodes are in time order (untimed last): only those in the window.
            let nodes = &graph.runs[run as usize].nodes;
            let from = nodes.partition_point(|&n| time(n).is_some_and(|t| t < at - tolerance_ms));
            for &n in &nodes[from..] {
                let Some(t) = time(n) else { break };
                if t > at + tolerance_ms {
                    break;
                }
                let d = (t - at).abs();
                if d <= tolerance_ms
                    && !used[n as usize]
                    && facts(n).and_then(|f| f.tool()) == Some(tool)
                {
                    pairs.push((d, s as u32, n));
                }
            }
        }
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        for (_, s, n) in pairs {
            if joins[s as usize].is_none() && !used[n as usize] {
                used[n as usize] = true;
                joins[s as usize] = Some(Join {
                    node: n,
                    rule: JoinRule::RunToolTime,
                });
            }
        }
        let span_of = (joins.iter().enumerate())
            .filter_map(|(s, j)| Some((j.as_ref()?.node, s as u32)))
            .collect();
        let mut spans_by_run = vec![Vec::new(); graph.runs.len()];
        for (s, run) in span_runs.iter().enumerate() {
            if let Some(r) = run {
                spans_by_run[*r as usize].push(s as u32);
            }
        }
        // Each run's own spans: by the run they name, else by their trace (a record's, or
        // that of the run's tool calls).
        let mut run_extent: Vec<Option<(f64, f64)>> = vec![None; graph.runs.len()];
        let tool_traces: FxHashMap<&str, u32> = (spans.iter().zip(&span_runs))
            .filter_map(|(s, r)| Some((s.trace_id.as_str(), (*r)?)))
            .collect();
        for s in &run_spans {
            let run = match s.run_id.as_deref() {
                Some(id) => runs.get(id).copied(),
                None => (traces.get(s.trace_id.as_str()))
                    .or_else(|| tool_traces.get(s.trace_id.as_str()))
                    .copied(),
            };
            if let Some(r) = run
                && s.start_ns > 0
            {
                let e = &mut run_extent[r as usize];
                let (from, to) = e.unwrap_or((f64::INFINITY, f64::NEG_INFINITY));
                *e = Some((from.min(s.start_ms()), to.max(s.end_ms())));
            }
        }
        let mut capture = Capture {
            spans,
            files,
            joins,
            span_runs,
            span_of,
            spans_by_run,
            run_extent,
            runs: Vec::new(),
            run_index: FxHashMap::default(),
            offset_ms,
            tolerance_ms,
            load_errors: errors.len(),
            ignored,
            findings: Vec::new(),
        };
        capture.judge(corpus, analysis);
        capture
    }

    /// Each traced run's counts and the capture findings.
    fn judge(&mut self, corpus: &Corpus, analysis: &Analysis) {
        let graph = &analysis.graph;
        let offset = self.offset_ms.unwrap_or(0.0);
        for (r, run) in graph.runs.iter().enumerate() {
            let spans: Vec<usize> = (self.spans_in(r as u32).iter())
                .map(|&s| s as usize)
                .collect();
            if spans.is_empty() {
                continue;
            }
            let timed = spans.iter().filter(|&&s| self.spans[s].start_ns > 0);
            let start = timed
                .clone()
                .map(|&s| self.spans[s].start_ms())
                .fold(f64::INFINITY, f64::min);
            let end = timed
                .map(|&s| self.spans[s].end_ms())
                .fold(f64::NEG_INFINITY, f64::max);
            // The run's own span bounds its window when the telemetry holds one: an action at
            // its very start or end is judged like any other (analysis-rules §9).
            let (start, end) = self.run_extent[r]
                .map_or((start, end), |(from, to)| (from.min(start), to.max(end)));
            let window = (
                start - offset - self.tolerance_ms,
                end - offset + self.tolerance_ms,
            );
            let mut counts = RunCapture {
                run_id: run.id.clone(),
                status: "complete",
                spans: spans.len(),
                actions: run.nodes.len(),
                joined: 0,
                spans_without_action: 0,
                actions_without_span: 0,
                not_judged: 0,
                window_ms: window,
            };
            for &s in &spans {
                if let Some(join) = self.joins[s] {
                    counts.joined += 1;
                    if let Some(f) = self.mismatch(corpus, analysis, s, join) {
                        self.findings.push(f);
                    }
                } else {
                    counts.spans_without_action += 1;
                    self.findings.push(self.gap(s, &run.id, offset));
                }
            }
            for &n in &run.nodes {
                if self.span_of.contains_key(&n) {
                    continue;
                }
                match graph.nodes[n as usize].time() {
                    Some(t) if t >= window.0 && t <= window.1 => {
                        counts.actions_without_span += 1;
                        if let Some(f) = self.unobserved(corpus, analysis, n, &run.id, window) {
                            self.findings.push(f);
                        }
                    }
                    _ => counts.not_judged += 1,
                }
            }
            if counts.spans_without_action + counts.actions_without_span > 0 {
                counts.status = "gaps";
            }
            self.run_index
                .insert(run.id.clone(), self.runs.len() as u32);
            self.runs.push(counts);
        }
    }

    /// F-CAPTURE-GAP for span `s` of `run`.
    fn gap(&self, s: usize, run: &str, offset: f64) -> super::findings::Timed {
        let span = &self.spans[s];
        let tool = span.tool.as_deref().unwrap_or("(no gen_ai.tool.name)");
        let at = span.start_ms() - offset;
        let finding = Finding {
            id: "F-CAPTURE-GAP",
            severity: Severity::High,
            run_id: Some(run.to_string()),
            action_ids: Vec::new(),
            message: format!(
                "the agent's telemetry saw a {tool} tool call at {}{} (span {}, trace {}, {}) that no action in the evidence records",
                format_ms(span.start_ms()),
                if offset == 0.0 {
                    String::new()
                } else {
                    format!(" by its clock, {} by the evidence's", format_ms(at))
                },
                span.span_id,
                span.trace_id,
                span.place()
            ),
            evidence: json!({
                "span": span_json(span),
                "clock_offset_ms": self.offset_ms,
            })
            .into(),
            locations: vec![span.location()],
            fingerprint: String::new(),
            chain: None,
            tool: None,
        };
        (fingerprinted(finding, Some(span), None), Some(at))
    }

    /// F-UNOBSERVED-ACTION for node `n` of `run`, inside the telemetry's `window`.
    fn unobserved(
        &self,
        corpus: &Corpus,
        analysis: &Analysis,
        n: NodeId,
        run: &str,
        window: (f64, f64),
    ) -> Option<super::findings::Timed> {
        let graph = &analysis.graph;
        let f = graph.facts(corpus, n)?;
        let (location, id) = action_place(corpus, graph, n)?;
        let time = graph.nodes[n as usize].time();
        let finding = Finding {
            id: "F-UNOBSERVED-ACTION",
            severity: Severity::Medium,
            run_id: Some(run.to_string()),
            action_ids: id.into_iter().collect(),
            message: format!(
                "action {} ({} at {}) has no span in the agent's telemetry, which covers the run from {} to {}: the evidence claims a call the runtime's tracing did not see, or tracing dropped it",
                f.id().unwrap_or("(no action_id)"),
                f.tool().unwrap_or("(no tool_name)"),
                time.map_or_else(|| "no time".to_string(), format_ms),
                format_ms(window.0),
                format_ms(window.1),
            ),
            evidence: json!({
                "action": {"action_id": f.id(), "tool_name": f.tool(), "timestamp_ms": time},
                "telemetry_window_ms": [window.0, window.1],
                "clock_offset_ms": self.offset_ms,
            })
            .into(),
            locations: vec![location],
            fingerprint: String::new(),
            chain: None,
            tool: None,
        };
        let hash = record_hash(analysis, n);
        Some((fingerprinted(finding, None, hash.as_deref()), time))
    }

    /// F-TELEMETRY-MISMATCH when span `s`, joined by `join`, disagrees with its action on
    /// the tool or on whether the call failed.
    fn mismatch(
        &self,
        corpus: &Corpus,
        analysis: &Analysis,
        s: usize,
        join: Join,
    ) -> Option<super::findings::Timed> {
        let graph = &analysis.graph;
        let span = &self.spans[s];
        let f = graph.facts(corpus, join.node)?;
        let tool_differs = (span.tool.as_deref())
            .zip(f.tool())
            .is_some_and(|(a, b)| a != b);
        let observed = f.observed();
        let failed = matches!(observed, Some("failure" | "denied"));
        let status_differs = (span.status == SpanStatus::Error && observed == Some("success"))
            || (span.status == SpanStatus::Ok && failed);
        if !tool_differs && !status_differs {
            return None;
        }
        let mut what = Vec::new();
        if tool_differs {
            what.push(format!(
                "the span's tool is {}, the action's {}",
                span.tool.as_deref().unwrap_or(""),
                f.tool().unwrap_or("")
            ));
        }
        if status_differs {
            what.push(format!(
                "the span's status is {}, the action's outcome {}",
                span.status.name().to_uppercase(),
                observed.unwrap_or("")
            ));
        }
        let (location, id) = action_place(corpus, graph, join.node)?;
        let time = graph.nodes[join.node as usize].time();
        let finding = Finding {
            id: "F-TELEMETRY-MISMATCH",
            severity: Severity::Medium,
            run_id: Some(graph.runs[graph.nodes[join.node as usize].run as usize].id.clone()),
            action_ids: id.into_iter().collect(),
            message: format!(
                "span {} ({}) joined to action {} by {}: {}",
                span.span_id,
                span.place(),
                f.id().unwrap_or("(no action_id)"),
                join.rule.explain(),
                what.join("; ")
            ),
            evidence: json!({
                "join": join.rule,
                "span": span_json(span),
                "action": {"action_id": f.id(), "tool_name": f.tool(), "observed": observed, "timestamp_ms": time},
            })
            .into(),
            locations: vec![location, span.location()],
            fingerprint: String::new(),
            chain: None,
            tool: None,
        };
        let hash = record_hash(analysis, join.node);
        Some((fingerprinted(finding, Some(span), hash.as_deref()), time))
    }
}

/// The canonical hash of the record node `n`'s action is first stored in.
fn record_hash(analysis: &Analysis, n: NodeId) -> Option<String> {
    let record = analysis.graph.nodes.get(n as usize)?.record;
    analysis
        .hashes
        .get(record as usize)
        .map(ToString::to_string)
}

/// `finding` with its fingerprint: a span location stands for its trace and span ids, any
/// other for the record `record_hash` is of (never a file's path: the same on every
/// machine).
fn fingerprinted(
    mut finding: Finding,
    span: Option<&TraceSpan>,
    record_hash: Option<&str>,
) -> Finding {
    finding.fingerprint = crate::model::finding::fingerprint(&finding, |l| {
        match span.filter(|s| s.path == l.path && s.line == l.line && s.pointer == l.pointer) {
            Some(s) => Some(format!("span {} {}", s.trace_id, s.span_id)),
            None => record_hash.map(str::to_string),
        }
    });
    finding
}

/// Where node `n`'s action is (its record, `/actions/N`) and its id.
fn action_place(corpus: &Corpus, graph: &Graph, n: NodeId) -> Option<(Location, Option<String>)> {
    let node = graph.nodes.get(n as usize)?;
    let record = corpus.record(node.record as usize);
    let id = graph.facts(corpus, n)?.id().map(str::to_string);
    let pos = node.pos.to_string();
    Some((Location::at(&record.source, &["actions", &pos]), id))
}

/// The agent a record names (`run_context.agent_id`; aep-fields maps it to the span's
/// `gen_ai.agent.id`).
fn agent_of(corpus: &Corpus, record: u32) -> Option<String> {
    corpus.record(record as usize).with_record(|r| {
        let context = r.get("run_context")?;
        Some(context.get("agent_id")?.as_str()?.to_string())
    })
}

/// A span as a finding's evidence names it.
pub fn span_json(span: &TraceSpan) -> serde_json::Value {
    json!({
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "name": span.name,
        "tool": span.tool,
        "call_id": span.call_id,
        "run_id": span.run_id,
        "start_time_unix_nano": span.start_ns.to_string(),
        "status": span.status.name(),
        "file": span.place(),
        "pointer": span.pointer,
    })
}

/// `n thing` or `n things`.
fn plural(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// The median of `values` (the mean of the middle two for an even count).
fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        f64::midpoint(values[mid - 1], values[mid])
    })
}
