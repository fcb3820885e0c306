//! The report as JUnit XML, for CI dashboards: a test suite per input, a test case per
//! record and axis (structural, semantic, authenticity, chain) — failed, skipped when the
//! axis was not evaluated, passed otherwise — and a test case in error per load error.
//! Evidence text is XML-escaped, and every character XML 1.0 cannot hold (most controls,
//! U+FFFE, U+FFFF) or a terminal must not receive (bidi overrides) is written as a visible
//! escape. The attributes are those Jenkins' `junit-10.xsd` allows.

use super::IncidentReport;
use crate::verify::chain::{ChainStatus, LinkState};
use crate::verify::{AuthStatus, CheckStatus};
use std::fmt::Write as _;

/// Text safe in XML content and attributes: markup escaped; terminal controls and what
/// XML 1.0 forbids (U+FFFE, U+FFFF) shown as `\u{XXXX}` escapes by `sanitize`, never dropped.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in crate::model::text::sanitize(text).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// One test case's outcome: None passed, Some(Ok(reason)) skipped, Some(Err(message)) failed.
type Outcome = Option<Result<String, String>>;

/// Renders the report.
pub fn render(r: &IncidentReport, report: &crate::verify::Report) -> String {
    let mut suites = String::new();
    let (mut tests, mut failures, mut errors) = (0, 0, 0);
    let mut flat = 0;
    // A suite per evidence file (a lease file holds no record to test).
    let evidence = (r.inputs.iter()).filter(|i| i.kind == crate::verify::InputKind::Evidence);
    for input in evidence {
        let mut cases = String::new();
        let (mut t, mut f, mut sk) = (0, 0, 0);
        for _ in 0..input.records {
            let Some(rec) = report.records.get(flat) else {
                break;
            };
            flat += 1;
            let name = format!("{}:{}", rec.source.path, rec.source.line);
            let check = |status: Option<CheckStatus>, what: &str| -> Outcome {
                match status {
                    None => Some(Ok(format!("{what} not evaluated"))),
                    Some(CheckStatus::Pass) => None,
                    Some(CheckStatus::Fail) => Some(Err(format!("{what} failed"))),
                }
            };
            let auth = &rec.authenticity;
            let axes: [(&str, Outcome); 4] = [
                ("structural", check(rec.structural.status, "structure")),
                ("semantic", {
                    let v: Vec<String> = rec
                        .semantic
                        .violations
                        .iter()
                        .map(|v| format!("{}: {}", v.rule, v.message))
                        .collect();
                    match rec.semantic.status {
                        Some(CheckStatus::Fail) => Some(Err(v.join("; "))),
                        other => check(other, "invariants"),
                    }
                }),
                (
                    "authenticity",
                    match auth.status {
                        Some(AuthStatus::Valid) => None,
                        None | Some(AuthStatus::Unsigned) => Some(Ok(auth
                            .reason
                            .clone()
                            .unwrap_or_else(|| "not evaluated".into()))),
                        Some(s) => Some(Err(format!(
                            "{}: {}",
                            s.name(),
                            auth.reason.clone().unwrap_or_default()
                        ))),
                    },
                ),
                (
                    "chain",
                    match rec.chain.status {
                        None => Some(Ok("no chain to check".into())),
                        Some(ChainStatus::Intact | ChainStatus::NotPresent) => None,
                        Some(s) => Some(Err(format!(
                            "chain {} (link {})",
                            s.name(),
                            rec.chain.link.map_or("none", LinkState::name)
                        ))),
                    },
                ),
            ];
            for (axis, outcome) in axes {
                t += 1;
                let _ = write!(
                    cases,
                    "    <testcase classname=\"{}\" name=\"{} {axis}\"",
                    xml(&input.path),
                    xml(&name)
                );
                match outcome {
                    None => cases.push_str("/>\n"),
                    Some(Ok(reason)) => {
                        sk += 1;
                        let _ =
                            writeln!(cases, "><skipped message=\"{}\"/></testcase>", xml(&reason));
                    }
                    Some(Err(message)) => {
                        f += 1;
                        let _ = writeln!(
                            cases,
                            "><failure type=\"{axis}\" message=\"{}\"/></testcase>",
                            xml(&message)
                        );
                    }
                }
            }
        }
        // A load error is a test case in error: counted in `tests` and `errors`.
        let e = input.errors.len();
        let _ = write!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{f}\" errors=\"{e}\" skipped=\"{sk}\">\n{cases}",
            xml(&input.path),
            t + e
        );
        for e in &input.errors {
            let _ = writeln!(
                suites,
                "    <testcase classname=\"{}\" name=\"load line {}\"><error message=\"{}\"/></testcase>",
                xml(&input.path),
                e.line.map_or("-".into(), |l| l.to_string()),
                xml(&e.message)
            );
        }
        suites.push_str("  </testsuite>\n");
        tests += t + e;
        failures += f;
        errors += e;
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"aeplens {}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">\n{suites}</testsuites>\n",
        xml(r.version)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn xml_text_has_no_markup_and_no_controls() {
        let out = super::xml("a<b>&\"'\u{1b}[2J\u{0}\u{7}\u{202e}\u{fffe}\u{ffff}z");
        assert_eq!(
            out,
            "a&lt;b&gt;&amp;&quot;&apos;\\e[2J\\u{0000}\\u{0007}\\u{202E}\\u{FFFE}\\u{FFFF}z"
        );
    }
}
