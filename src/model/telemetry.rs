//! Telemetry beside the evidence (`--traces`): the tool-call spans of the agent's own
//! OpenTelemetry GenAI traces (aep-fields §17), the independent witness of what the runtime
//! did. Unsigned: a span can witness that a call happened, never vouch for a record.

use super::finding::Location;
use std::sync::Arc;

/// A span's status code (OTLP `Status.code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanStatus {
    Unset,
    Ok,
    Error,
}

impl SpanStatus {
    /// The OTLP name, lower-case.
    pub fn name(self) -> &'static str {
        match self {
            SpanStatus::Unset => "unset",
            SpanStatus::Ok => "ok",
            SpanStatus::Error => "error",
        }
    }
}

/// One tool-call span (`gen_ai.operation.name = execute_tool`, or a span carrying
/// `gen_ai.tool.name`), with where it was read.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSpan {
    /// Lower-case hex: 32 digits.
    pub trace_id: String,
    /// Lower-case hex: 16 digits.
    pub span_id: String,
    pub parent_span_id: Option<String>,
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub status: SpanStatus,
    pub status_message: String,
    /// `gen_ai.tool.name`.
    pub tool: Option<String>,
    /// `gen_ai.tool.call.id`, else `aep.action_id`.
    pub call_id: Option<String>,
    /// `gen_ai.agent.run.id`, else `aep.run_id`, on the span or else its resource.
    pub run_id: Option<String>,
    /// `service.name` of its resource.
    pub service: Option<String>,
    /// Every attribute of the span, its value as text, in the order given.
    pub attributes: Vec<(String, String)>,
    /// The file, the line its document starts on, and the JSON pointer of the span.
    pub path: Arc<str>,
    pub line: usize,
    pub pointer: String,
}

impl TraceSpan {
    /// The value of the span's attribute `key`, as text.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        (self.attributes.iter())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Its start in milliseconds since the epoch, as evidence times are given.
    pub fn start_ms(&self) -> f64 {
        ns_to_ms(self.start_ns)
    }

    /// Its end in milliseconds since the epoch (its start when the end is earlier).
    pub fn end_ms(&self) -> f64 {
        ns_to_ms(self.end_ns.max(self.start_ns))
    }

    /// Where it is, as a finding names it.
    pub fn location(&self) -> Location {
        Location {
            path: self.path.clone(),
            line: self.line,
            pointer: self.pointer.clone(),
        }
    }

    /// `file:line` of its document.
    pub fn place(&self) -> String {
        format!("{}:{}", self.path, self.line)
    }
}

/// Nanoseconds as milliseconds, whole milliseconds exact (a plain division by 1e6 is not).
fn ns_to_ms(ns: u64) -> f64 {
    (ns / 1_000_000) as f64 + (ns % 1_000_000) as f64 / 1e6
}
