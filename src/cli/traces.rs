//! `--traces` and `--clock-skew`: the agent's own telemetry, read and joined to the
//! evidence by every command that opens it (analysis-rules §9).

use super::note;
use crate::model::text::sanitize;
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

    /// The telemetry, when `--traces` was given; what could not be read is noted
    /// (ready-made lines for stderr in the second part).
    pub fn load(&self) -> Option<(crate::load::traces::Telemetry, Vec<String>)> {
        if self.traces.is_empty() {
            return None;
        }
        let telemetry = crate::load::traces::load_traces(&self.traces);
        let mut notes: Vec<String> = (telemetry.errors.iter())
            .map(crate::load::LoadError::render)
            .collect();
        if telemetry.repeated > 0 {
            let n = telemetry.repeated;
            let s = if n == 1 { "" } else { "s" };
            notes.push(format!(
                "{n} tool-call span{s} given again with the same trace and span id (exported twice): each counted once"
            ));
        }
        Some((telemetry, notes))
    }

    /// The clock tolerance in milliseconds.
    pub fn tolerance_ms(&self) -> f64 {
        self.clock_skew * 1000.0
    }
}

/// Joins `telemetry` to `ev` and says, once each, the runs the telemetry names that the
/// evidence does not hold (the clock offset found is in every output).
pub fn join_telemetry(
    ev: &mut crate::analysis::evidence::Evidence,
    telemetry: crate::load::traces::Telemetry,
    args: &TraceArgs,
) {
    ev.add_capture(telemetry, args.tolerance_ms());
    let Some(capture) = &ev.capture else {
        return;
    };
    for (run, spans) in &capture.ignored {
        let s = if *spans == 1 { "" } else { "s" };
        if run.is_empty() {
            note(&format!(
                "{spans} tool-call span{s} name no run and no trace the evidence holds: not judged"
            ));
        } else {
            note(&format!(
                "telemetry of run {} ({spans} tool-call span{s}) is not in the evidence: not judged",
                sanitize(run)
            ));
        }
    }
}
