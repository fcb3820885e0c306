//! `--traces` and `--clock-skew`: the agent's own telemetry, read and joined to the
//! evidence by every command that opens it (analysis-rules §9).

use clap::Args;

/// The agent's own telemetry, joined to the evidence to judge its capture (analysis-rules §9).
#[derive(Args, Debug, Clone)]
pub struct TraceArgs {
    /// OpenTelemetry traces of the agent (OTLP JSON, as the OTLP/HTTP exporter and the
    /// Collector's file exporter write it: one TracesData object a line, or a whole file;
    /// a directory for its .json/.jsonl/.ndjson files). Each tool-call span is joined to
    /// its action; a span with no action is F-CAPTURE-GAP, and every record of a traced
    /// run gets its `capture` axis. Repeatable. Never written to.
    #[arg(long = "traces", value_name = "FILE")]
    pub traces: Vec<String>,
    /// How far apart, in seconds, a span's start and its action's timestamp_ms may be
    /// when they are joined by run, tool and time (after the clock offset measured from
    /// the id joins is taken off).
    #[arg(long = "clock-skew", value_name = "SECONDS", default_value_t = TraceArgs::default_skew(),
          value_parser = parse_skew)]
    pub clock_skew: f64,
}

fn parse_skew(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(s),
        _ => Err("a number of seconds, 0 or more (e.g. 2 or 0.5)".into()),
    }
}

impl Default for TraceArgs {
    fn default() -> TraceArgs {
        TraceArgs {
            traces: Vec::new(),
            clock_skew: TraceArgs::default_skew(),
        }
    }
}

impl TraceArgs {
    /// `--clock-skew`'s default: analysis-rules §9's ±2 s.
    pub const fn default_skew() -> f64 {
        crate::analysis::capture::DEFAULT_TOLERANCE_MS / 1000.0
    }

    /// The clock tolerance in milliseconds.
    pub fn tolerance_ms(&self) -> f64 {
        self.clock_skew * 1000.0
    }
}
