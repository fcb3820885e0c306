//! `aeplens report`: the incident report (`review::report`) in the format asked for,
//! with the reviewer's marks and notes when there is a review.

use super::report::{emit, open_with_keys, refuses_output};
use super::{ReportArgs, ReviewArgs};
use crate::model::text::sanitize;
use crate::review::file::{EvidenceSet, Review, default_path};
use crate::review::report::IncidentReport;
use crate::verify::Trees;

/// The command line that ran, each argument escaped and quoted when it needs to be.
pub fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, a)| {
            if i == 0 {
                "aeplens".to_string()
            } else {
                crate::model::text::shell_word(&a)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The review an output carries: `--review FILE` (which must exist), else the explorer's
/// review of this evidence set when there is one, else none. Err is an exit code.
pub fn review(args: &ReviewArgs, set: &EvidenceSet) -> Result<Option<(Review, String)>, i32> {
    if args.no_review {
        return Ok(None);
    }
    let (path, explicit) = match &args.review {
        Some(p) => (std::path::PathBuf::from(p), true),
        None => match default_path(set) {
            Some(p) => (p, false),
            None => return Ok(None),
        },
    };
    match Review::read(&path) {
        Ok(Some(r)) => {
            if !explicit {
                super::note(&format!(
                    "with the marks of {} (--no-review leaves them out)",
                    sanitize(&path.display().to_string())
                ));
            }
            Ok(Some((r, path.display().to_string())))
        }
        Ok(None) if explicit => {
            eprintln!(
                "aeplens: no review file at {}",
                sanitize(&path.display().to_string())
            );
            Err(2)
        }
        Ok(None) => Ok(None),
        Err(e) => {
            eprintln!("aeplens: {}", e.render());
            Err(2)
        }
    }
}

/// `aeplens report`.
pub fn run(args: &ReportArgs) -> i32 {
    if let Some(out) = &args.output
        && refuses_output(&args.evidence.paths, out)
    {
        return 2;
    }
    let query = match args.filter.expression.as_deref().map(super::query::checked) {
        Some(Err(code)) => return code,
        Some(Ok(q)) => Some(q),
        None => None,
    };
    let (ev, keys) = match open_with_keys(&args.evidence, Trees::Held) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    if ev.report.records.is_empty() {
        eprintln!("aeplens: nothing to report: no evidence file with a record");
        return super::check::EXIT_NOTHING_TO_VERIFY;
    }
    let review = match review(&args.review, &EvidenceSet::of(&ev.corpus)) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let passes = (query.as_ref())
        .map(|q| super::query::matching(q, ev.as_ref(), review.as_ref().map(|(r, _)| r)));
    let keep = |n: crate::analysis::graph::NodeId| {
        passes
            .as_ref()
            .is_none_or(|p| p.get(n as usize).copied().unwrap_or(false))
    };
    let scope = (query.as_ref()).map(|q| (q.text().to_string(), &keep as &dyn Fn(_) -> bool));
    let report = IncidentReport::of(
        ev.as_ref(),
        &keys,
        command_line(),
        review.as_ref().map(|(r, path)| (r, Some(path.clone()))),
        scope.as_ref(),
    );
    let text = crate::review::report::render(args.format, &report, ev.as_ref());
    let code = match &args.output {
        None => emit(&text),
        Some(path) => match crate::private::write_private(path.as_ref(), text.as_bytes()) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("aeplens: cannot write {}: {e}", sanitize(path));
                2
            }
        },
    };
    let gate = args
        .fail_on
        .is_some_and(|s| ev.findings.iter().any(|f| f.severity <= s.severity()));
    if code == 0 && gate { 1 } else { code }
}
