//! Progress on stderr while evidence is read and verified: one line, redrawn in place,
//! only on a terminal, only once the work has taken a second, gone when it is done.

use crate::analysis::evidence::Loading;
use crate::model::text::grouped;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Shown after this long (a small store finishes first and shows nothing).
const AFTER: Duration = Duration::from_secs(1);
/// Redrawn at most this often.
const EVERY: Duration = Duration::from_millis(250);

/// The progress line of one load.
pub struct Meter {
    /// Bytes of evidence to read, when known (stdin is not).
    total: Option<u64>,
    shown: bool,
    enabled: bool,
    start: Instant,
    last: Instant,
}

impl Meter {
    /// A meter for reading `paths`: drawn when stderr is a terminal and `-q` was not given.
    pub fn new(paths: &[String]) -> Meter {
        let total = (!paths.iter().any(|p| p == "-")).then(|| {
            crate::load::evidence_files(paths)
                .iter()
                .filter_map(|f| std::fs::metadata(f).ok())
                .map(|m| m.len())
                .sum()
        });
        let now = Instant::now();
        Meter {
            total,
            shown: false,
            enabled: std::io::stderr().is_terminal() && !super::quiet(),
            start: now,
            last: now,
        }
    }

    /// Notes how far the load is.
    pub fn tick(&mut self, loading: Loading) {
        let now = Instant::now();
        let next_phase = matches!(loading, Loading::Analysing { .. });
        if !self.enabled
            || now - self.start < AFTER
            || (self.shown && now - self.last < EVERY && !next_phase)
        {
            return;
        }
        self.last = now;
        self.shown = true;
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{}", line(loading, self.total));
        let _ = err.flush();
    }

    /// Clears the line, if one was drawn.
    pub fn done(&mut self) {
        if self.shown {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
            self.shown = false;
        }
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.done();
    }
}

/// The progress text: how much is read (of how much) and how many records are verified,
/// then what runs after.
pub fn line(loading: Loading, total: Option<u64>) -> String {
    match (loading, total) {
        (Loading::Read { bytes, records }, Some(total)) if total > 0 => format!(
            "aeplens: reading and verifying: {} of {} ({} %), {} records",
            size(bytes),
            size(total),
            (bytes.min(total) * 100) / total,
            grouped(records as u64)
        ),
        (Loading::Read { bytes, records }, _) => format!(
            "aeplens: reading and verifying: {}, {} records",
            size(bytes),
            grouped(records as u64)
        ),
        (Loading::Analysing { records }, _) => format!(
            "aeplens: {} records read and verified; analysing (graph, leases, chains, findings)",
            grouped(records as u64)
        ),
    }
}

/// Bytes as MB or GB (decimal, one decimal place).
fn size(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else {
        format!("{:.1} MB", b / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_how_far_and_how_many() {
        let read = |bytes, records| Loading::Read { bytes, records };
        assert_eq!(
            line(read(512_000_000, 100_000), Some(2_034_863_175)),
            "aeplens: reading and verifying: 512.0 MB of 2.0 GB (25 %), 100,000 records"
        );
        assert_eq!(
            line(read(3_500_000, 7), None),
            "aeplens: reading and verifying: 3.5 MB, 7 records"
        );
        assert_eq!(
            line(Loading::Analysing { records: 400_000 }, None),
            "aeplens: 400,000 records read and verified; analysing (graph, leases, chains, findings)"
        );
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(999), "999");
    }
}
