"""Writes the agent's OpenTelemetry traces the capture tests read, with the official
OpenTelemetry Python SDK and its OTLP encoder (`encode_spans`), then protobuf's JSON
mapping with trace and span ids as hex (OTLP JSON): one ExportTraceServiceRequest a line,
as the Collector's file exporter writes them.

    python make_traces.py OUT_DIR
    python make_traces.py --store STORE.ndjson OUT.jsonl   (a span per action of a store)

Ids come from a counter, so every run writes the same bytes: `demo.jsonl` is the file
shipped as assets/demo/traces.jsonl (tests/capture.rs holds them equal).
"""

import base64
import hashlib
import json
import os
import sys

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

MS = 1_000_000  # nanoseconds in a millisecond


class CountingIds(IdGenerator):
    """Ids from a counter through SHA-256: the same on every run."""

    def __init__(self, seed):
        self.seed, self.n = seed, 0

    def _next(self, size):
        self.n += 1
        digest = hashlib.sha256(f"{self.seed}/{self.n}".encode()).digest()
        return int.from_bytes(digest[:size], "big") or 1

    def generate_span_id(self):
        return self._next(8)

    def generate_trace_id(self):
        return self._next(16)


class Keep(SpanExporter):
    def __init__(self):
        self.spans = []

    def export(self, spans):
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


def hex_ids(value):
    """protobuf's JSON mapping writes bytes as base64; OTLP JSON writes ids as hex."""
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") else hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [hex_ids(v) for v in value]
    return value


def run_trace(seed, run_id, calls, service="deploy-agent", covers=None):
    """One run's trace: an `invoke_agent` span and an `execute_tool` span per call.

    Each call is a dict: tool, start_ms, and optionally call_id, agent (gen_ai.agent.id),
    status ("error"/"ok"), duration_ms. The `invoke_agent` span covers `covers` (default: the calls): a run whose
    exporter dropped a tool span still has its own span over the whole run. Returns the
    OTLP JSON line."""
    keep = Keep()
    provider = TracerProvider(
        resource=Resource({"service.name": service}), id_generator=CountingIds(seed)
    )
    provider.add_span_processor(SimpleSpanProcessor(keep))
    tracer = provider.get_tracer("aeplens-tests.agent", "1.0.0")
    covers = covers or calls
    start = min(c["start_ms"] for c in covers) - 500
    end = max(c["start_ms"] + c.get("duration_ms", 250) for c in covers) + 500
    root = tracer.start_span(
        f"invoke_agent {service}",
        kind=SpanKind.INTERNAL,
        start_time=start * MS,
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.run.id": run_id},
    )
    ctx = set_span_in_context(root)
    for c in calls:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": c["tool"],
            "gen_ai.agent.run.id": run_id,
        }
        if c.get("call_id"):
            attributes["gen_ai.tool.call.id"] = c["call_id"]
        if c.get("agent"):
            attributes["gen_ai.agent.id"] = c["agent"]
        span = tracer.start_span(
            f"execute_tool {c['tool']}",
            context=ctx,
            kind=SpanKind.INTERNAL,
            start_time=c["start_ms"] * MS,
            attributes=attributes,
        )
        if c.get("status") == "error":
            span.set_status(Status(StatusCode.ERROR, "tool call failed"))
            span.set_attribute("error.type", "tool_error")
        elif c.get("status") == "ok":
            span.set_status(Status(StatusCode.OK))
        span.end(end_time=(c["start_ms"] + c.get("duration_ms", 250)) * MS)
    root.end(end_time=end * MS)
    request = encode_spans(keep.spans)
    doc = hex_ids(json_format.MessageToDict(request, use_integers_for_enums=True))
    return json.dumps(doc, separators=(",", ":"), sort_keys=True)


# The demo incident's actions (assets/demo/evidence/incident.ndjson), by run.
T0 = 1780740120000  # 2026-06-06T10:02:00Z
DEMO = {
    "run-deploy-0042": [
        {"call_id": "act-001", "tool": "read_file", "start_ms": T0},
        {"call_id": "act-002", "tool": "sql_exec", "start_ms": T0 + 4000, "status": "error"},
        {"call_id": "act-003", "tool": "sql_exec", "start_ms": T0 + 61000},
        {"call_id": "act-004", "tool": "http_post", "start_ms": T0 + 64000},
        # The runtime's instrumentation did not carry the call id on these two: they
        # are joined by run, tool and time.
        {"tool": "write_file", "start_ms": T0 + 65000},
        {"tool": "write_file", "start_ms": T0 + 130000},
        {"call_id": "act-007", "tool": "write_file", "start_ms": T0 + 390000},
    ],
    "run-deploy-0043": [{"call_id": "act-001", "tool": "http_get", "start_ms": 1780741000000}],
    "run-deploy-0044": [
        {"call_id": "act-001", "tool": "kubectl_rollout_undo", "start_ms": 1780741025000, "status": "error"}
    ],
}
# What the evidence never recorded: a shell command between the last two writes.
GAP = {"call_id": "call-9f2c", "tool": "shell_exec", "start_ms": T0 + 380000, "duration_ms": 1200}
# The runtime's clock runs 1.5 s ahead of the emitter's.
OFFSET_MS = 1500


def shifted(calls, offset=OFFSET_MS):
    return [dict(c, start_ms=c["start_ms"] + offset) for c in calls]


def demo_runs(changes=None):
    runs = {run: shifted(calls) for run, calls in DEMO.items()}
    for run, edit in (changes or {}).items():
        runs[run] = edit(runs[run])
    return runs


def lines(runs, seed):
    return "".join(run_trace(f"{seed}/{run}", run, calls) + "\n" for run, calls in runs.items())


def main(out):
    os.makedirs(out, exist_ok=True)
    files = {}
    # The demo: every action seen, and one tool call the evidence does not record.
    files["demo.jsonl"] = lines(
        demo_runs({"run-deploy-0042": lambda c: sorted(c + shifted([GAP]), key=lambda x: x["start_ms"])}),
        "demo",
    )
    # Every action seen, nothing more.
    files["complete.jsonl"] = lines(demo_runs(), "complete")
    # A dropped span: act-006's write is not in the telemetry.
    files["dropped.jsonl"] = lines(
        demo_runs({"run-deploy-0042": lambda c: [x for x in c if x["start_ms"] != T0 + 130000 + OFFSET_MS]}),
        "dropped",
    )
    # The run's first tool span dropped (act-001): its `invoke_agent` span still covers it.
    files["dropped_first.jsonl"] = "".join(
        run_trace(
            f"dropped-first/{run}",
            run,
            [c for c in calls if not (run == "run-deploy-0042" and c.get("call_id") == "act-001")],
            covers=calls,
        )
        + "\n"
        for run, calls in demo_runs().items()
    )
    # Joined by call id, but the tool differs (act-004) and a success is an ERROR (act-003).
    def mismatched(calls):
        out = []
        for c in calls:
            if c.get("call_id") == "act-004":
                c = dict(c, tool="http_get")
            if c.get("call_id") == "act-003":
                c = dict(c, status="error")
            out.append(c)
        return out

    files["mismatch.jsonl"] = lines(demo_runs({"run-deploy-0042": mismatched}), "mismatch")
    # A trace of a run the evidence does not hold, beside the complete telemetry.
    files["foreign.jsonl"] = files["complete.jsonl"] + lines(
        {"run-deploy-0999": [{"call_id": "act-001", "tool": "read_file", "start_ms": T0}]}, "foreign"
    )
    # Three emitters in one run, each with the default action ids (action-0, action-1):
    # tests/fixtures/reference-stores/subagents_default_action_ids.ndjson.
    subagents = [
        {"call_id": "action-0", "tool": "assign_subtask", "start_ms": 1789634685000},
        {"call_id": "action-0", "tool": "web_search", "start_ms": 1789634760000},
        {"call_id": "action-0", "tool": "draft_section", "start_ms": 1789634835000},
        {"call_id": "action-1", "tool": "review_draft", "start_ms": 1789634910000},
        {"call_id": "action-1", "tool": "cite_source", "start_ms": 1789634985000},
        {"call_id": "action-1", "tool": "save_document", "start_ms": 1789635060000},
    ]
    files["subagents.jsonl"] = lines({"run-pub-atlas": subagents}, "subagents")
    # The same, and a call one of the sub-agents made that none of them recorded.
    extra = {"call_id": "action-2", "tool": "delete_document", "start_ms": 1789635070000}
    files["subagents_gap.jsonl"] = lines({"run-pub-atlas": subagents + [extra]}, "subagents-gap")
    # The same calls, each naming its agent (run_context.agent_id: lead, researcher,
    # writer), from a clock 80 s ahead: nearest in time, each lead call would join the
    # researcher's action-0 — the span's own emitter is preferred.
    agents = ["lead", "researcher", "writer", "lead", "researcher", "writer"]
    skewed = [dict(c, agent=a, start_ms=c["start_ms"] + 80000) for c, a in zip(subagents, agents)]
    files["subagents_skewed.jsonl"] = lines({"run-pub-atlas": skewed}, "subagents-skewed")
    for name, text in files.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(text)


def from_store(store, out):
    """The traces an agent would have written for every action of an NDJSON store: one
    `execute_tool` span per action (its call id, tool and time; an ERROR status for a
    failed or denied call), a trace per run: the benchmark's telemetry."""
    runs = {}
    seen = set()
    with open(store) as f:
        for line in f:
            record = json.loads(line)
            run = record.get("run_id")
            for a in record.get("actions") or []:
                key = (run, a.get("action_id"), a.get("tool_name"), a.get("timestamp_ms"))
                if run is None or a.get("timestamp_ms") is None or key in seen:
                    continue
                seen.add(key)
                failed = a.get("outcome") in ("failure", "error", "failed", "denied")
                call = {"call_id": a.get("action_id"), "tool": a.get("tool_name") or "unknown",
                        "start_ms": int(a["timestamp_ms"])}
                if failed:
                    call["status"] = "error"
                runs.setdefault(run, []).append(call)
    with open(out, "w") as f:
        for run, calls in runs.items():
            f.write(run_trace(f"store/{run}", run, calls, service="agent") + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "--store":
        from_store(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1])
