//! The evidence as a timeline for forensic and tracing tools: Timesketch JSONL, a Chrome /
//! Perfetto trace, OTLP/JSON spans. Records carry one time per action, so every event is an
//! instant (a span starts and ends at that time): no format claims a duration the evidence
//! does not hold. Actions without a `timestamp_ms` have no place on a timeline and are left
//! out, with a note saying how many.

use crate::analysis::chains::{ChainKind, Role};
use crate::analysis::evidence::Evidence;
use crate::analysis::graph::NodeId;
use crate::analysis::lease::LeaseSource;
use crate::analysis::lineage::ChainName;
use crate::model::Decision;
use crate::model::facts::ActionFacts;
use crate::model::time::format_ms;
use crate::verify::verdict::RecordVerdict;
use serde_json::{Value, json};

/// One timed action of the selected runs.
struct Event<'e> {
    node: NodeId,
    run: &'e str,
    /// Index of the run among the selected ones.
    track: usize,
    time: f64,
    facts: &'e ActionFacts,
    decision: Option<Decision<'e>>,
    source: String,
    /// Its record's verdict (absent when the record was not verified).
    verdict: Option<RecordVerdict>,
    /// The emitter chain it is on.
    chain: ChainName,
}

impl Event<'_> {
    /// The record's verdict as attributes: `(name, value)` for authenticity, key id,
    /// chain status and verdict in short.
    fn verdict_attributes(&self) -> Vec<(&'static str, String)> {
        let Some(v) = &self.verdict else {
            return vec![("record.authenticity", "not-verified".to_string())];
        };
        let mut out = vec![
            ("record.authenticity", v.authenticity.clone()),
            ("record.chain", v.chain.clone()),
            ("record.verdict", v.short()),
            ("chain.head", self.chain.head.clone()),
            ("chain.start", self.chain.start.name().to_string()),
        ];
        if let Some(k) = &v.key_id {
            out.push(("record.key_id", k.clone()));
        }
        out
    }
}

/// The timed actions of `runs` (every run when empty), in node order; notes the untimed.
fn events<'e>(ev: &'e Evidence, runs: &[String]) -> Vec<Event<'e>> {
    let g = &ev.analysis.graph;
    let mut out = Vec::new();
    let mut untimed = 0;
    let mut track = 0;
    for run in &g.runs {
        if !runs.is_empty() && !runs.contains(&run.id) {
            continue;
        }
        for &n in &run.nodes {
            let Some((record, action)) = g.action(&ev.corpus, n) else {
                continue;
            };
            let Some(facts) = g.facts(&ev.corpus, n) else {
                continue;
            };
            match facts.time() {
                Some(time) if time.is_finite() => out.push(Event {
                    node: n,
                    run: &run.id,
                    track,
                    time,
                    facts,
                    decision: action.decision(),
                    source: record.source.to_string(),
                    verdict: ev.as_ref().verdict(n),
                    chain: g.chain_name(&ev.corpus, n),
                }),
                _ => untimed += 1,
            }
        }
        track += 1;
    }
    if untimed > 0 {
        super::super::note(&format!(
            "{untimed} action{} without a timestamp_ms left out of the timeline",
            if untimed == 1 { "" } else { "s" }
        ));
    }
    out
}

/// The finding ids that name this action.
fn findings_of(ev: &Evidence, e: &Event) -> Vec<&'static str> {
    (ev.analysis
        .findings_naming(&ev.corpus, e.node, &ev.findings)
        .iter())
    .map(|f| f.id)
    .collect()
}

/// `object` with the record's verdict attributes added (`prefix` before each name).
fn with_verdict(mut object: Value, e: &Event, prefix: &str) -> Value {
    for (name, value) in e.verdict_attributes() {
        object[format!("{prefix}{name}")] = value.into();
    }
    object
}

fn lines(values: impl Iterator<Item = Value>) -> String {
    let mut s = String::new();
    for v in values {
        s.push_str(&v.to_string());
        s.push('\n');
    }
    s
}

/// Timesketch JSONL: one event per timed action, with the three fields Timesketch requires
/// (`message`, `datetime`, `timestamp_desc`) and the action's facts as attributes.
pub fn timesketch(ev: &Evidence, runs: &[String]) -> String {
    lines(events(ev, runs).iter().map(|e| {
        let f = &e.facts;
        let words: Vec<&str> = [f.id(), f.tool(), f.outcome(), f.observed()]
            .into_iter()
            .flatten()
            .collect();
        let event = json!({
            "message": format!("{} (run {})", words.join(" · "), e.run),
            "datetime": format_ms(e.time),
            "timestamp": (e.time * 1000.0).round() as i64,
            "timestamp_desc": "AEP action timestamp_ms",
            "data_type": "aep:action",
            "run_id": e.run,
            "action_id": f.id(),
            "tool_name": f.tool(),
            "decision": f.outcome(),
            "observed": f.observed(),
            "side_effect_class": f.side_effect_class(),
            "source": e.source,
            "findings": findings_of(ev, e),
        });
        with_verdict(event, e, "")
    }))
}

/// A Chrome / Perfetto trace (Trace Event JSON): a process per run, each action a slice of
/// no duration on its `actions` thread (flows bind to slices), each lease window with known bounds a slice on the
/// `leases` thread, and a flow arrow from each deny to the action that re-approved it.
pub fn chrome_trace(ev: &Evidence, runs: &[String]) -> String {
    let events = events(ev, runs);
    let mut out: Vec<Value> = Vec::new();
    let mut seen_runs: Vec<&str> = Vec::new();
    for e in &events {
        if !seen_runs.contains(&e.run) {
            seen_runs.push(e.run);
            let pid = e.track + 1;
            out.push(json!({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": format!("run {}", e.run)}}));
            out.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": 1, "args": {"name": "actions"}}));
            out.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": 2, "args": {"name": "leases"}}));
        }
        let f = &e.facts;
        out.push(json!({
            "name": f.tool().or(f.id()).unwrap_or("action"),
            "cat": f.outcome().unwrap_or("no decision"),
            "ph": "X",
            "dur": 0,
            "ts": e.time * 1000.0,
            "pid": e.track + 1,
            "tid": 1,
            "args": with_verdict(json!({
                "action_id": f.id(),
                "decision": f.outcome(),
                "observed": f.observed(),
                "source": e.source,
                "findings": findings_of(ev, e),
            }), e, ""),
        }));
    }
    let track_of = |n: NodeId| events.iter().find(|e| e.node == n);
    for lease in &ev.analysis.leases.summaries {
        let (Some(from), Some(to)) = (lease.granted_at_ms, lease.expires_at_ms) else {
            continue;
        };
        let Some(e) = lease.nodes.iter().find_map(|n| track_of(*n)) else {
            continue;
        };
        if lease.source == LeaseSource::Inferred || to < from {
            continue;
        }
        out.push(json!({
            "name": format!("lease {}", lease.lease_id),
            "cat": lease.source.name(),
            "ph": "X",
            "ts": from * 1000.0,
            "dur": (to - from) * 1000.0,
            "pid": e.track + 1,
            "tid": 2,
            "args": {"lease_id": lease.lease_id, "source": lease.source.name(), "max_invocations": lease.max_invocations},
        }));
    }
    let mut flow = 0;
    for chain in ev
        .analysis
        .chains
        .iter()
        .filter(|c| c.kind == ChainKind::DenyReapproval)
    {
        for (n, role) in chain.roles() {
            if role != Role::Reapproved {
                continue;
            }
            let Some(pos) = chain.steps.iter().position(|s| s.node == n) else {
                continue;
            };
            let Some(prev) = pos.checked_sub(1).map(|p| chain.steps[p].node) else {
                continue;
            };
            let (Some(a), Some(b)) = (track_of(prev), track_of(n)) else {
                continue;
            };
            flow += 1;
            for (ph, e) in [("s", a), ("f", b)] {
                let mut v = json!({"name": "re-approved", "cat": "deny-reapproval", "ph": ph, "id": flow, "ts": e.time * 1000.0, "pid": e.track + 1, "tid": 1});
                if ph == "f" {
                    v["bp"] = "e".into();
                }
                out.push(v);
            }
        }
    }
    let mut s = serde_json::to_string_pretty(&json!({"traceEvents": out, "displayTimeUnit": "ms"}))
        .unwrap_or_default();
    s.push('\n');
    s
}

/// Hex of the first `n` bytes of SHA-256(`text`): stable trace and span ids.
fn id_hex(text: &str, n: usize) -> String {
    crate::canon::sha256_hex(text.as_bytes())[..2 * n].to_string()
}

fn attr(key: &str, value: Option<&str>) -> Option<Value> {
    value.map(|v| json!({"key": key, "value": {"stringValue": v}}))
}

/// OTLP/JSON: a trace per run; per timed action an `execute_tool` span (OpenTelemetry GenAI
/// attributes `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`) and, when
/// the action records a decision, a child `guardrail` span with the decision as `aep.*`
/// attributes. A parent action in the same run is the parent span.
pub fn otlp_json(ev: &Evidence, runs: &[String]) -> String {
    let events = events(ev, runs);
    let g = &ev.analysis.graph;
    let span_id = |n: NodeId| {
        let node = &g.nodes[n as usize];
        id_hex(&format!("span\0{}\0{n}", g.runs[node.run as usize].id), 8)
    };
    let mut spans = Vec::new();
    for e in &events {
        let f = &e.facts;
        let nanos = format!("{}", (e.time * 1_000_000.0).round() as i128);
        let trace = id_hex(&format!("run\0{}", e.run), 16);
        let parent = g.nodes[e.node as usize]
            .parent
            .filter(|p| g.nodes[*p as usize].run == g.nodes[e.node as usize].run)
            .map(span_id);
        let verdict = e.verdict_attributes();
        let attributes: Vec<Value> = [
            attr("gen_ai.operation.name", Some("execute_tool")),
            attr("gen_ai.tool.name", f.tool()),
            attr("gen_ai.tool.call.id", f.id()),
            attr("aep.run_id", Some(e.run)),
            attr("aep.observed", f.observed()),
            attr("aep.side_effect_class", f.side_effect_class()),
            attr("aep.source", Some(&e.source)),
        ]
        .into_iter()
        .flatten()
        .chain((verdict.iter()).filter_map(|(k, v)| attr(&format!("aep.{k}"), Some(v))))
        .collect();
        let mut span = json!({
            "traceId": trace,
            "spanId": span_id(e.node),
            "name": format!("execute_tool {}", f.tool().unwrap_or("unknown")),
            "kind": 1,
            "startTimeUnixNano": nanos,
            "endTimeUnixNano": nanos,
            "attributes": attributes,
        });
        if let Some(p) = &parent {
            span["parentSpanId"] = p.clone().into();
        }
        spans.push(span);
        if let Some(decision) = &e.decision {
            let attributes: Vec<Value> = [
                attr("aep.decision", decision.str_field("decision")),
                attr("aep.capability", decision.str_field("capability")),
                attr("aep.resource", decision.str_field("resource")),
                attr("aep.approval_grant", f.grant()),
                attr("aep.approval_decision", f.approval_decision()),
            ]
            .into_iter()
            .flatten()
            .collect();
            spans.push(json!({
                "traceId": trace,
                "spanId": id_hex(&format!("guardrail\0{}\0{}", e.run, e.node), 8),
                "parentSpanId": span_id(e.node),
                "name": format!("guardrail {}", f.outcome().unwrap_or("none")),
                "kind": 1,
                "startTimeUnixNano": nanos,
                "endTimeUnixNano": nanos,
                "attributes": attributes,
            }));
        }
    }
    let doc = json!({"resourceSpans": [{
        "resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": "aep-evidence"}},
            {"key": "telemetry.sdk.name", "value": {"stringValue": "aeplens"}},
        ]},
        "scopeSpans": [{
            "scope": {"name": "aeplens", "version": env!("CARGO_PKG_VERSION")},
            "spans": spans,
        }],
    }]});
    let mut s = serde_json::to_string(&doc).unwrap_or_default();
    s.push('\n');
    s
}
