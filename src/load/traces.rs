//! Telemetry files (`--traces`) → the tool-call spans they hold. OTLP JSON as the OTLP/HTTP
//! JSON encoding and the Collector's file exporter write it: one `TracesData` /
//! `ExportTraceServiceRequest` object a line, or one object a file, read with the
//! OpenTelemetry project's own protobuf types and their JSON mapping. A bad document is a
//! [`LoadError`] naming file, line and column; the documents after it still load. Files
//! are only read.

use super::{LoadError, Origin, origins};
use crate::model::telemetry::{SpanStatus, TraceSpan};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value::Value};
use opentelemetry_proto::tonic::trace::v1::{Span, TracesData};
use std::sync::Arc;

/// What the telemetry files gave.
#[derive(Debug, Default)]
pub struct Telemetry {
    /// Every tool-call span, in file order.
    pub spans: Vec<TraceSpan>,
    /// The runs' own spans (`invoke_agent`, or a trace's root span that is no tool call),
    /// in file order: each run's time window (analysis-rules §9).
    pub run_spans: Vec<TraceSpan>,
    pub files: Vec<TraceFile>,
    pub errors: Vec<LoadError>,
    /// How long reading took (`check --timings`).
    pub read_time: std::time::Duration,
    /// Spans given again with the same trace and span id (at-least-once delivery exports
    /// a span twice): kept once, the first, and counted here.
    pub repeated: usize,
}

impl Telemetry {
    /// Keeps one span per (trace id, span id), the first given: a span exported twice is
    /// one tool call, never two (analysis-rules §9).
    fn drop_repeated(&mut self) {
        let mut seen = rustc_hash::FxHashSet::default();
        let before = self.spans.len();
        self.spans
            .retain(|s| seen.insert((s.trace_id.clone(), s.span_id.clone())));
        self.repeated += before - self.spans.len();
        self.run_spans
            .retain(|s| seen.insert((s.trace_id.clone(), s.span_id.clone())));
    }
}

/// One telemetry file and what it held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFile {
    pub path: Arc<str>,
    /// `TracesData` documents read.
    pub documents: usize,
    /// Spans of every kind.
    pub spans: usize,
    /// Tool-call spans among them.
    pub tool_spans: usize,
}

/// Reads every path (a file, or a directory's `.json`, `.jsonl` and `.ndjson` files in
/// sorted order). Never fails as a whole: each problem is an error of the result.
pub fn load_traces(paths: &[String]) -> Telemetry {
    let clock = std::time::Instant::now();
    let mut out = Telemetry::default();
    for origin in origins(paths) {
        match origin {
            Origin::Stdin => out.errors.push(LoadError::whole(
                "-",
                "telemetry cannot be read from stdin: give --traces a file or a directory".into(),
            )),
            Origin::Problem(input) => out.errors.extend(input.errors),
            Origin::File(path) => {
                let name: Arc<str> = path.display().to_string().into();
                match std::fs::read(&path) {
                    Ok(bytes) => read_file(&name, &bytes, &mut out),
                    Err(e) => out.errors.push(LoadError::whole(
                        &name,
                        format!("cannot read telemetry file: {e}"),
                    )),
                }
            }
        }
    }
    out.drop_repeated();
    out.read_time = clock.elapsed();
    out
}

/// The telemetry in `bytes`, as the file `path` would give it (the fuzz target's way in).
pub fn read_bytes(path: &str, bytes: &[u8]) -> Telemetry {
    let mut out = Telemetry::default();
    read_file(&Arc::from(path), bytes, &mut out);
    out.drop_repeated();
    out
}

/// Reads one file's documents into `out`.
fn read_file(path: &Arc<str>, bytes: &[u8], out: &mut Telemetry) {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let at = e.valid_up_to();
            let text = String::from_utf8_lossy(bytes);
            out.errors.push(LoadError::located(
                path,
                &text,
                at,
                "telemetry is not UTF-8 (OTLP JSON is)".into(),
            ));
            return;
        }
    };
    // Parts of about a megabyte, each starting on a line that opens a document, read on
    // every core and put back in order.
    use rayon::prelude::*;
    let parts = parts_of(text, 1 << 20);
    let read: Vec<Telemetry> = parts
        .par_iter()
        .map(|&(start, end, line)| read_part(path, text, start, end, line))
        .collect();
    let mut file = TraceFile {
        path: path.clone(),
        documents: 0,
        spans: 0,
        tool_spans: 0,
    };
    for part in read {
        for f in &part.files {
            file.documents += f.documents;
            file.spans += f.spans;
            file.tool_spans += f.tool_spans;
        }
        out.spans.extend(part.spans);
        out.run_spans.extend(part.run_spans);
        out.errors.extend(part.errors);
    }
    out.files.push(file);
}

/// `text` cut into parts of about `size` bytes, each starting on a line that begins with
/// `{` (one document a line, as the Collector's file exporter writes them; a whole-file
/// document is one part): (start, end, 1-based line of the start).
fn parts_of(text: &str, size: usize) -> Vec<(usize, usize, usize)> {
    let mut parts = Vec::new();
    let (mut start, mut line) = (0, 1);
    while start < text.len() {
        let mut end = text.len();
        let mut at = start + size;
        while at < text.len() {
            match text.as_bytes()[at..].iter().position(|&b| b == b'\n') {
                Some(nl) if text.as_bytes().get(at + nl + 1) == Some(&b'{') => {
                    end = at + nl + 1;
                    break;
                }
                Some(nl) => at += nl + 1,
                None => break,
            }
        }
        parts.push((start, end, line));
        line += count_lines(&text[start..end]);
        start = end;
    }
    parts
}

/// The documents of `text[start..end]`, which begins on 1-based `line`.
fn read_part(path: &Arc<str>, text: &str, start: usize, end: usize, mut line: usize) -> Telemetry {
    let mut out = Telemetry::default();
    let mut file = TraceFile {
        path: path.clone(),
        documents: 0,
        spans: 0,
        tool_spans: 0,
    };
    let mut offset = start;
    loop {
        let here = &text[offset..end];
        let skipped = here.len() - here.trim_start().len();
        line += count_lines(&here[..skipped]);
        offset += skipped;
        if offset >= end {
            break;
        }
        let rest = &text[offset..end];
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<TracesData>();
        match stream.next() {
            Some(Ok(doc)) => {
                file.documents += 1;
                spans_of(path, line, doc, &mut file, &mut out);
                let used = stream.byte_offset();
                line += count_lines(&rest[..used]);
                offset += used;
            }
            Some(Err(e)) => {
                let at = offset + super::byte_offset(rest, e.line(), e.column());
                out.errors.push(LoadError::located(
                    path,
                    text,
                    at,
                    format!(
                        "not an OTLP JSON TracesData document: {}",
                        without_place(&e)
                    ),
                ));
                // Go on at the next line that opens a document (one a line, as files of
                // the Collector's file exporter are).
                let next = next_document(text, offset, at).min(end);
                line += count_lines(&text[offset..next]);
                offset = next;
            }
            None => break,
        }
    }
    out.files.push(file);
    out
}

/// serde_json's message without its own " at line L column C" (relative to the document,
/// where the error names the file's).
fn without_place(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

fn count_lines(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count()
}

/// Where to go on after a bad document that starts at `offset` and fails at byte `at`: the
/// first line, from the one holding `at`, that begins with `{` and starts after `offset`;
/// the end when none. `at` may fall inside a character (serde_json counts columns in
/// bytes): the search is over bytes, and a line's start is always a character boundary.
fn next_document(text: &str, offset: usize, at: usize) -> usize {
    let bytes = text.as_bytes();
    let at = at.min(bytes.len());
    let mut pos = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
    loop {
        if pos > offset && bytes.get(pos) == Some(&b'{') {
            return pos;
        }
        match memchr::memchr(b'\n', &bytes[pos..]) {
            Some(nl) => pos += nl + 1,
            None => return text.len(),
        }
    }
}

/// The tool-call spans of one document (moved out of it: nothing is copied).
fn spans_of(
    path: &Arc<str>,
    line: usize,
    doc: TracesData,
    file: &mut TraceFile,
    out: &mut Telemetry,
) {
    for (r, resource_spans) in doc.resource_spans.into_iter().enumerate() {
        let resource: &[KeyValue] =
            (resource_spans.resource.as_ref()).map_or(&[], |res| &res.attributes);
        let from_resource = |key: &str| {
            (resource.iter())
                .find(|kv| kv.key == key)
                .map(|kv| value_text(kv.value.clone()))
        };
        let resource_run =
            from_resource("gen_ai.agent.run.id").or_else(|| from_resource("aep.run_id"));
        let service = from_resource("service.name");
        for (s, scope) in resource_spans.scope_spans.into_iter().enumerate() {
            for (k, span) in scope.spans.into_iter().enumerate() {
                file.spans += 1;
                let has = |key: &str, value: Option<&str>| {
                    span.attributes.iter().any(|kv| {
                        kv.key == key
                            && value.is_none_or(|v| {
                                matches!(kv.value.as_ref().and_then(|a| a.value.as_ref()),
                                    Some(Value::StringValue(s)) if s == v)
                            })
                    })
                };
                let tool_call = has("gen_ai.operation.name", Some("execute_tool"))
                    || has("gen_ai.tool.name", None);
                let run_span = has("gen_ai.operation.name", Some("invoke_agent"))
                    || span.parent_span_id.is_empty();
                if !tool_call && !run_span {
                    continue;
                }
                let pointer = format!("/resourceSpans/{r}/scopeSpans/{s}/spans/{k}");
                let read = tool_span(
                    span,
                    pointer,
                    path,
                    line,
                    resource_run.clone(),
                    service.clone(),
                );
                match read {
                    Ok(span) if tool_call => {
                        file.tool_spans += 1;
                        out.spans.push(span);
                    }
                    Ok(span) => out.run_spans.push(span),
                    // A run's own span only bounds its window: one that cannot be read is
                    // left out like the trace's other spans.
                    Err(_) if !tool_call => {}
                    Err(message) => out.errors.push(LoadError {
                        path: path.clone(),
                        line: Some(line),
                        column: None,
                        excerpt: None,
                        message,
                    }),
                }
            }
        }
    }
}

/// A tool-call span as aeplens keeps it, its ids as lower-case hex; `Err` says why the
/// span cannot be joined (ids of the wrong length).
fn tool_span(
    span: Span,
    pointer: String,
    path: &Arc<str>,
    line: usize,
    resource_run: Option<String>,
    service: Option<String>,
) -> Result<TraceSpan, String> {
    if span.trace_id.len() != 16 || span.trace_id.iter().all(|b| *b == 0) {
        return Err(format!(
            "span {pointer}: traceId must be 32 hex digits, not all zero (OTLP JSON); the span is left out"
        ));
    }
    if span.span_id.len() != 8 || span.span_id.iter().all(|b| *b == 0) {
        return Err(format!(
            "span {pointer}: spanId must be 16 hex digits, not all zero (OTLP JSON); the span is left out"
        ));
    }
    let attributes: Vec<(String, String)> = (span.attributes.into_iter())
        .map(|kv| (kv.key, value_text(kv.value)))
        .collect();
    let get = |key: &str| {
        (attributes.iter())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let (status, status_message) = match span.status {
        Some(s) => (s.code, s.message),
        None => (0, String::new()),
    };
    Ok(TraceSpan {
        trace_id: hex(&span.trace_id),
        span_id: hex(&span.span_id),
        parent_span_id: (!span.parent_span_id.is_empty()).then(|| hex(&span.parent_span_id)),
        name: span.name,
        start_ns: span.start_time_unix_nano,
        end_ns: span.end_time_unix_nano,
        status: match status {
            1 => SpanStatus::Ok,
            2 => SpanStatus::Error,
            _ => SpanStatus::Unset,
        },
        status_message,
        tool: get("gen_ai.tool.name"),
        call_id: get("gen_ai.tool.call.id").or_else(|| get("aep.action_id")),
        run_id: get("gen_ai.agent.run.id")
            .or_else(|| get("aep.run_id"))
            .or(resource_run),
        service,
        attributes,
        path: path.clone(),
        line,
        pointer,
    })
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(2 * bytes.len()), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// An attribute's value as text: strings as they are (moved), other values as JSON would
/// write them.
fn value_text(value: Option<AnyValue>) -> String {
    match value.and_then(|v| v.value) {
        None => String::new(),
        Some(Value::StringValue(s)) => s,
        Some(Value::BoolValue(b)) => b.to_string(),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        Some(Value::BytesValue(b)) => hex(&b),
        Some(Value::ArrayValue(a)) => {
            let items: Vec<String> = a.values.into_iter().map(|v| value_text(Some(v))).collect();
            format!("[{}]", items.join(", "))
        }
        Some(Value::KvlistValue(kv)) => {
            let items: Vec<String> = (kv.values.into_iter())
                .map(|kv| format!("{}={}", kv.key, value_text(kv.value)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Some(Value::StringValueStrindex(i)) => format!("(string table entry {i})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Telemetry {
        let mut out = Telemetry::default();
        read_file(&Arc::from("t.jsonl"), text.as_bytes(), &mut out);
        out
    }

    const SPAN: &str = r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"gen_ai.agent.run.id","value":{"stringValue":"run-1"}}]},"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"execute_tool read_file","kind":1,"startTimeUnixNano":"1780740120000000000","endTimeUnixNano":"1780740120500000000","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"read_file"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"act-001"}}],"status":{"code":2}},{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203332","name":"chat","kind":1,"startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}"#;

    #[test]
    fn one_document_a_line_and_a_bad_line_between() {
        let text = format!("{SPAN}\n{{\"resourceSpans\": [oops]}}\n{SPAN}\n");
        let t = read(&text);
        assert_eq!(t.spans.len(), 2, "the lines around the bad one load");
        assert_eq!((t.spans[0].line, t.spans[1].line), (1, 3));
        let s = &t.spans[0];
        assert_eq!(s.span_id, "b7ad6b7169203331");
        assert_eq!(s.tool.as_deref(), Some("read_file"));
        assert_eq!(s.call_id.as_deref(), Some("act-001"));
        assert_eq!(s.run_id.as_deref(), Some("run-1"), "from the resource");
        assert_eq!(s.status, SpanStatus::Error);
        assert_eq!(s.start_ms(), 1_780_740_120_000.0);
        assert_eq!(s.pointer, "/resourceSpans/0/scopeSpans/0/spans/0");
        assert_eq!(t.files[0].spans, 4, "the chat spans are counted, not kept");
        assert_eq!(t.errors.len(), 1);
        let e = &t.errors[0];
        assert_eq!((e.line, e.column), (Some(2), Some(20)), "{}", e.render());
        assert!(!e.message.contains("line 1"), "{}", e.message);
    }

    #[test]
    fn parts_start_on_document_lines_and_read_as_the_whole() {
        let mut text = String::new();
        for i in 0..40 {
            text.push_str(if i == 17 {
                "{\"resourceSpans\": 3}"
            } else {
                SPAN
            });
            text.push('\n');
        }
        let parts = parts_of(&text, 700);
        assert!(parts.len() > 10, "{}", parts.len());
        assert_eq!(parts[0].0, 0);
        for w in parts.windows(2) {
            assert_eq!(w[0].1, w[1].0, "contiguous");
            assert_eq!(text.as_bytes()[w[1].0], b'{');
        }
        let path = Arc::from("t.jsonl");
        let whole = read_part(&path, &text, 0, text.len(), 1);
        let mut spans = Vec::new();
        let mut errors = Vec::new();
        for &(start, end, line) in &parts {
            let part = read_part(&path, &text, start, end, line);
            spans.extend(part.spans);
            errors.extend(part.errors);
        }
        assert_eq!(spans, whole.spans);
        assert_eq!(errors, whole.errors);
        assert_eq!(whole.spans.len(), 39);
        assert_eq!(whole.spans[17].line, 19, "lines counted across parts");
        assert_eq!(errors[0].line, Some(18));
    }

    /// At-least-once delivery: the same span (trace and span id) given twice is one span,
    /// the first, and the repeat is counted.
    #[test]
    fn a_span_exported_twice_is_one_span() {
        let t = read_bytes("t.jsonl", format!("{SPAN}\n{SPAN}\n").as_bytes());
        assert_eq!(t.spans.len(), 1);
        assert_eq!(t.spans[0].line, 1, "the first is kept");
        assert_eq!(t.repeated, 1);
        assert_eq!(t.files[0].tool_spans, 2, "the file held two");
    }

    /// Found by the fuzz target: an error inside a multi-byte character, then a search
    /// for the next document from there.
    #[test]
    fn an_error_inside_a_multi_byte_character_is_reported_not_a_panic() {
        let text = "                        \"μη-αξιόπι\n{\"resourceSpans\":[]}\n";
        let t = read_bytes("t.jsonl", text.as_bytes());
        assert_eq!(t.errors.len(), 1, "{:?}", t.errors);
        assert_eq!(t.files[0].documents, 1, "the next line still loads");
        let crash = [
            32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32,
            32, 32, 34, 206, 188, 206, 183, 45, 206, 177, 206, 190, 206, 185, 207, 140, 207, 128,
            206, 185,
        ];
        assert_eq!(read_bytes("t.jsonl", &crash).errors.len(), 1);
    }

    #[test]
    fn a_whole_file_document_and_ids_of_the_wrong_length() {
        let pretty =
            serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(SPAN).unwrap())
                .unwrap();
        let t = read(&pretty);
        assert_eq!((t.spans.len(), t.errors.len()), (1, 0));
        let short = SPAN.replacen("b7ad6b7169203331", "b7ad", 1);
        let t = read(&short);
        assert_eq!(t.spans.len(), 0);
        assert!(t.errors[0].message.contains("spanId must be 16 hex digits"));
    }
}
