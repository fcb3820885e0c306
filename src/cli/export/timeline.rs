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
use crate::review::file::Review;
use crate::review::marks::Mark;
use crate::review::report::graph::Selection;
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

/// The timed actions selected, in node order; notes the untimed.
fn events<'e>(ev: &'e Evidence, selection: Selection) -> Vec<Event<'e>> {
    let g = &ev.analysis.graph;
    let mut out = Vec::new();
    let mut untimed = 0;
    let mut track = 0;
    for run in &g.runs {
        if !selection.run(&run.id) {
            continue;
        }
        for &n in &run.nodes {
            if !selection.action(n) {
                continue;
            }
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

/// JSON Lines: one value a line, with U+2028, U+2029 and U+0085 written as JSON escapes —
/// readers that split lines on them (Python's `str.splitlines`, codecs) would otherwise cut
/// an event in two and drop it. The values are the same.
pub(super) fn json_line(value: &Value, out: &mut String) {
    let text = value.to_string();
    for c in text.chars() {
        match c {
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            '\u{85}' => out.push_str("\\u0085"),
            c => out.push(c),
        }
    }
    out.push('\n');
}

fn lines(values: impl Iterator<Item = Value>) -> String {
    let mut s = String::new();
    for v in values {
        json_line(&v, &mut s);
    }
    s
}

/// The times pandas (and so Timesketch's importer) can hold: its nanosecond timestamps
/// reach from 1677-09-21 to 2262-04-11.
const TIMESKETCH_MS: std::ops::RangeInclusive<f64> = -9_223_372_036_854.0..=9_223_372_036_854.0;

/// Timesketch JSONL: one event per timed action, with the three fields Timesketch requires
/// (`message`, `datetime`, `timestamp_desc`) and the action's facts as attributes. A time
/// Timesketch cannot hold puts the event at 1970-01-01 and says so (`time_unusable`, the
/// recorded `timestamp_ms`). A marked action's event carries the mark: the tag
/// `aeplens-<verdict>` and the note.
pub fn timesketch(ev: &Evidence, selection: Selection, review: Option<&Review>) -> String {
    let marks = marks_by_node(ev, review);
    lines(events(ev, selection).iter().map(|e| {
        let f = &e.facts;
        let words: Vec<&str> = [f.id(), f.tool(), f.outcome(), f.observed()]
            .into_iter()
            .flatten()
            .collect();
        let usable = TIMESKETCH_MS.contains(&e.time);
        let time = if usable { e.time } else { 0.0 };
        let mut event = json!({
            "message": format!("{} (run {})", words.join(" · "), e.run),
            "datetime": format_ms(time),
            "timestamp": (time * 1000.0).round() as i64,
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
        if !usable {
            event["time_unusable"] = format!(
                "timestamp_ms {} is outside what Timesketch can hold (1677 to 2262): the event is placed at 1970-01-01",
                e.time
            )
            .into();
            event["recorded_timestamp_ms"] = e.time.into();
        }
        if let Some(mark) = marks.get(&e.node) {
            event["tag"] = json!([format!("aeplens-{}", mark.verdict.name())]);
            event["aeplens_verdict"] = mark.verdict.name().into();
            if !mark.note.is_empty() {
                event["aeplens_note"] = mark.note.clone().into();
            }
        }
        with_verdict(event, e, "")
    }))
}

/// The review's marks on actions, by the node they are on.
fn marks_by_node<'r>(
    ev: &Evidence,
    review: Option<&'r Review>,
) -> std::collections::HashMap<NodeId, &'r Mark> {
    (review.iter().flat_map(|r| &r.marks))
        .filter_map(|m| {
            let place = m.target.place(&ev.corpus, &ev.analysis, &ev.findings);
            Some((place.node()?, m))
        })
        .collect()
}

/// The category of every action slice and deny→re-approval flow in the Chrome trace.
const ACTION_CATEGORY: &str = "aep.action";

/// A Chrome / Perfetto trace (Trace Event JSON): a process per run, each action a slice of
/// no duration on its `actions` thread (flows bind to slices), each lease window with known bounds a slice on the
/// `leases` thread, and a flow arrow from each deny to the action that re-approved it.
pub fn chrome_trace(ev: &Evidence, selection: Selection) -> String {
    let events = events(ev, selection);
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
            // One category for every action: Chrome binds a flow to the slice with its
            // pid, tid, time and category, and both ends of a flow share one category.
            "cat": ACTION_CATEGORY,
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
                let mut v = json!({"name": "re-approved", "cat": ACTION_CATEGORY, "ph": ph, "id": flow, "ts": e.time * 1000.0, "pid": e.track + 1, "tid": 1});
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

/// An action's time in OTLP nanoseconds, computed in integers from the recorded
/// milliseconds; `Err` with why when OTLP's unsigned 64-bit nanoseconds (1970 to 2554)
/// cannot hold it, and the nearest time it can.
fn otlp_nanos(ms: f64) -> Result<u64, (u64, String)> {
    let nanos = decimal_nanos(ms).unwrap_or_else(|| (ms * 1_000_000.0).round() as i128);
    u64::try_from(nanos).map_err(|_| {
        let clamped = if nanos < 0 { 0 } else { u64::MAX };
        (
            clamped,
            format!("timestamp_ms {ms} is outside what OTLP can hold (1970 to 2554); the span's time is clamped"),
        )
    })
}

/// Nanoseconds of `ms` milliseconds read from the number's decimal text (ECMAScript's
/// shortest round trip, as the record wrote it): `1787216400123.4568` ms is
/// …123456800 ns, where a float product gives …123456768. Digits past the nanosecond are
/// rounded; `None` for a number ECMAScript writes with an exponent (beyond 1e21 ms, or
/// under 1e-6).
fn decimal_nanos(ms: f64) -> Option<i128> {
    let mut text = Vec::new();
    crate::canon::format_number(ms, &mut text);
    let text = std::str::from_utf8(&text).ok()?;
    if text.contains('e') || text == "null" {
        return None;
    }
    let (negative, text) = text.strip_prefix('-').map_or((false, text), |t| (true, t));
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let padded: String = fraction
        .chars()
        .chain(std::iter::repeat('0'))
        .take(6)
        .collect();
    let round_up = fraction.as_bytes().get(6).is_some_and(|d| *d >= b'5');
    let nanos = whole.parse::<i128>().ok()? * 1_000_000
        + padded.parse::<i128>().ok()?
        + i128::from(round_up);
    Some(if negative { -nanos } else { nanos })
}

/// OTLP/JSON: a trace per run, written as one `TracesData` line per run (the Collector's
/// file format); per timed action an `execute_tool` span (OpenTelemetry GenAI attributes
/// `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`) with an ERROR status
/// and `error.type` when the call failed or was denied, and, when the action records a
/// decision, a child `guardrail` span with the decision as `aep.*` attributes. A parent
/// action in the same run is the parent span. A time OTLP cannot hold is clamped, said in
/// `aep.time_unusable` and noted on stderr.
pub fn otlp_json(ev: &Evidence, selection: Selection) -> String {
    let events = events(ev, selection);
    let g = &ev.analysis.graph;
    let span_id = |n: NodeId| {
        let node = &g.nodes[n as usize];
        id_hex(&format!("span\0{}\0{n}", g.runs[node.run as usize].id), 8)
    };
    // Spans per run, in the order the runs come.
    let mut by_run: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut clamped = 0;
    for e in &events {
        let f = &e.facts;
        let (nanos, unusable) = match otlp_nanos(e.time) {
            Ok(n) => (n, None),
            Err((n, why)) => {
                clamped += 1;
                (n, Some(why))
            }
        };
        let nanos = nanos.to_string();
        let trace = id_hex(&format!("run\0{}", e.run), 16);
        let parent = g.nodes[e.node as usize]
            .parent
            .filter(|p| g.nodes[*p as usize].run == g.nodes[e.node as usize].run)
            .map(span_id);
        let verdict = e.verdict_attributes();
        // A failed or denied tool call is an error, as GenAI `execute_tool` spans say it.
        let error = f.observed().filter(|o| matches!(*o, "failure" | "denied"));
        let attributes: Vec<Value> = [
            attr("gen_ai.operation.name", Some("execute_tool")),
            attr("gen_ai.tool.name", f.tool()),
            attr("gen_ai.tool.call.id", f.id()),
            attr("error.type", error),
            attr("aep.run_id", Some(e.run)),
            attr("aep.observed", f.observed()),
            attr("aep.side_effect_class", f.side_effect_class()),
            attr("aep.source", Some(&e.source)),
            attr("aep.time_unusable", unusable.as_deref()),
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
        if let Some(kind) = error {
            span["status"] = json!({"code": 2, "message": format!("tool call {kind}")});
        }
        let mut spans = vec![span];
        if let Some(decision) = &e.decision {
            let attributes: Vec<Value> = [
                attr("aep.decision", decision.str_field("decision")),
                attr("aep.capability", decision.str_field("capability")),
                attr("aep.resource", decision.str_field("resource")),
                attr("aep.approval_grant", f.grant()),
                attr("aep.approval_decision", f.approval_decision()),
                attr("aep.time_unusable", unusable.as_deref()),
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
        match by_run.last_mut() {
            Some((run, list)) if *run == e.run => list.extend(spans),
            _ => by_run.push((e.run, spans)),
        }
    }
    if clamped > 0 {
        super::super::note(&format!(
            "{clamped} span time{} outside what OTLP can hold (1970 to 2554): clamped, and said in aep.time_unusable",
            if clamped == 1 { "" } else { "s" }
        ));
    }
    let mut s = String::new();
    for (run, spans) in by_run {
        let doc = json!({"resourceSpans": [{
            "resource": {"attributes": [
                {"key": "service.name", "value": {"stringValue": "aep-evidence"}},
                {"key": "telemetry.sdk.name", "value": {"stringValue": "aeplens"}},
                {"key": "gen_ai.agent.run.id", "value": {"stringValue": run}},
            ]},
            "scopeSpans": [{
                "scope": {"name": "aeplens", "version": env!("CARGO_PKG_VERSION")},
                "spans": spans,
            }],
        }]});
        json_line(&doc, &mut s);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{decimal_nanos, otlp_nanos};

    /// OTLP nanoseconds from the milliseconds' decimal text, never through a float product.
    #[test]
    fn otlp_nanoseconds_come_from_the_decimal_text() {
        assert_eq!(
            otlp_nanos(1_787_216_400_123.456_8),
            Ok(1_787_216_400_123_456_800)
        );
        assert_eq!(
            otlp_nanos(1_787_216_400_123.0),
            Ok(1_787_216_400_123_000_000)
        );
        assert_eq!(otlp_nanos(0.5), Ok(500_000));
        assert_eq!(
            decimal_nanos(0.123_456_7),
            Some(123_457),
            "past ns: rounded"
        );
        assert_eq!(decimal_nanos(-1.5), Some(-1_500_000));
        assert_eq!(decimal_nanos(1e21), None, "written with an exponent");
        assert!(otlp_nanos(-1.0).is_err(), "before 1970: clamped, said");
    }
}
