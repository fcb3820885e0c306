//! The time axis of the selected run: where each time falls across the timeline, long
//! idle gaps compressed. State (centring the selection) and views (drawing) both read it.

use super::State;
use crate::tui::data::Data;

/// A time axis with long idle gaps compressed (and remembered, to mark them).
pub struct Axis {
    /// (time, position) anchors, sorted.
    anchors: Vec<(f64, f64)>,
    total: f64,
    /// (position, idle duration) of each compressed gap.
    pub gaps: Vec<(f64, f64)>,
}

impl Axis {
    /// Builds an axis over `times`; gaps longer than both 8× the median gap and 15 % of
    /// the span are drawn as a short `⋯`.
    pub fn new(mut times: Vec<f64>) -> Axis {
        times.retain(|t| t.is_finite());
        times.sort_by(f64::total_cmp);
        times.dedup();
        if times.len() < 2 {
            let t = times.first().copied().unwrap_or(0.0);
            return Axis {
                anchors: vec![(t, 0.0), (t + 1.0, 1.0)],
                total: 1.0,
                gaps: Vec::new(),
            };
        }
        let mut diffs: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        let span = times[times.len() - 1] - times[0];
        diffs.sort_by(f64::total_cmp);
        let median = diffs[diffs.len() / 2];
        let threshold = (median * 8.0).max(span * 0.15);
        let compressed = (span * 0.04).max(1.0);
        let mut anchors = vec![(times[0], 0.0)];
        let mut gaps = Vec::new();
        let mut pos = 0.0;
        for w in times.windows(2) {
            let d = w[1] - w[0];
            if d > threshold && times.len() > 2 {
                gaps.push((pos + compressed / 2.0, d));
                pos += compressed;
            } else {
                pos += d;
            }
            anchors.push((w[1], pos));
        }
        Axis {
            anchors,
            total: pos.max(1.0),
            gaps,
        }
    }

    /// Position of a time in [0, total] (extrapolated linearly outside the anchors).
    fn pos(&self, t: f64) -> f64 {
        let a = &self.anchors;
        let i = a.partition_point(|(x, _)| *x <= t);
        if i == 0 {
            return a[0].1 - (a[0].0 - t);
        }
        if i == a.len() {
            let (lt, lp) = a[a.len() - 1];
            return lp + (t - lt);
        }
        let ((t0, p0), (t1, p1)) = (a[i - 1], a[i]);
        p0 + (t - t0) / (t1 - t0) * (p1 - p0)
    }

    /// Where an axis position (a compressed gap's, [`Axis::gaps`]) falls, from 0 to 1.
    pub fn frac_at(&self, position: f64) -> f64 {
        position / self.total
    }

    /// Where a time falls on the whole axis, from 0 (first) to 1 (last).
    pub fn frac(&self, t: f64) -> f64 {
        self.pos(t) / self.total
    }

    /// Round tick times (1, 2 or 5 × 10ⁿ ms apart) for the visible window, at most one
    /// per `spacing` columns, each with its column; none inside a compressed gap.
    pub fn ticks(&self, width: u16, zoom: f64, pan: f64, spacing: u16) -> (f64, Vec<(f64, u16)>) {
        let lo = self.time_at(0, width, zoom, pan);
        let hi = self.time_at(width.saturating_sub(1), width, zoom, pan);
        // Axis units are milliseconds except in compressed gaps.
        let visible = (self.total / zoom).max(1.0);
        let wanted = (f64::from(width) / f64::from(spacing.max(1))).max(1.0);
        let step = round_step(visible / wanted);
        let mut out = Vec::new();
        let mut last_x: Option<u16> = None;
        let mut t = (lo / step).ceil() * step;
        while t <= hi && out.len() < 64 {
            let in_gap = self.gaps.iter().any(|(p, d)| {
                let pos = self.pos(t);
                (pos - p).abs() < (self.total * 0.02).max(1.0) && *d > step
            });
            if let Some(x) = self.x(t, width, zoom, pan)
                && !in_gap
                && last_x.is_none_or(|l| x >= l + spacing)
            {
                out.push((t, x));
                last_x = Some(x);
            }
            t += step;
        }
        (step, out)
    }

    /// Column of a time for a width, zoom and pan; None when off-screen.
    pub fn x(&self, t: f64, width: u16, zoom: f64, pan: f64) -> Option<u16> {
        let frac = (self.pos(t) / self.total - pan) * zoom;
        let x = (frac * f64::from(width.saturating_sub(1))).round();
        (0.0..f64::from(width)).contains(&x).then_some(x as u16)
    }

    /// Column (clamped) for drawing ranges.
    pub fn x_clamped(&self, t: f64, width: u16, zoom: f64, pan: f64) -> i32 {
        let frac = (self.pos(t) / self.total - pan) * zoom;
        (frac * f64::from(width.saturating_sub(1))).round() as i32
    }

    /// The time at a column (inverse of `x`).
    pub fn time_at(&self, x: u16, width: u16, zoom: f64, pan: f64) -> f64 {
        let frac = f64::from(x) / f64::from(width.saturating_sub(1).max(1)) / zoom + pan;
        let p = frac * self.total;
        let a = &self.anchors;
        let i = a.partition_point(|(_, q)| *q <= p).clamp(1, a.len() - 1);
        let ((t0, p0), (t1, p1)) = (a[i - 1], a[i]);
        if p1 > p0 {
            t0 + (p - p0) / (p1 - p0) * (t1 - t0)
        } else {
            t0
        }
    }
}

/// The smallest 1, 2 or 5 × 10ⁿ milliseconds that is at least `ms`.
pub fn round_step(ms: f64) -> f64 {
    let ms = ms.max(1.0);
    let mut unit = 10f64.powf(ms.log10().floor());
    loop {
        for m in [1.0, 2.0, 5.0] {
            if unit * m >= ms {
                return unit * m;
            }
        }
        unit *= 10.0;
    }
}

/// The axis of the selected run (action times and lease window bounds).
pub fn run_axis(s: &State, d: &Data) -> Axis {
    let g = &d.analysis.graph;
    let Some(run) = g.runs.get(s.timeline.run()) else {
        return Axis::new(Vec::new());
    };
    let mut times: Vec<f64> = run
        .nodes
        .iter()
        .filter_map(|n| g.nodes[*n as usize].time())
        .collect();
    for n in &run.nodes {
        if let Some(l) = d.analysis.leases.by_node.get(n) {
            times.extend(l.granted_at_ms);
            times.extend(l.expires_at_ms);
        }
    }
    // The telemetry lane's spans, at their evidence time.
    if let Some(c) = d.capture.as_deref() {
        let run = s.timeline.run() as u32;
        times.extend(c.spans_in(run).iter().map(|&i| c.evidence_time(i)));
    }
    Axis::new(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_steps_are_round() {
        for (want, ms) in [
            (1.0, 0.3),
            (5.0, 3.0),
            (10.0, 7.0),
            (2000.0, 1200.0),
            (50_000.0, 45_000.0),
        ] {
            assert_eq!(round_step(ms), want, "{ms}");
        }
    }
}
