//! `aeplens query EXPR`, and `--where EXPR` on `findings`, `chains`, `report` and
//! `export`: the filter language (`crate::query`) over the opened evidence.

use super::EvidenceArgs;
use super::report::{emit, terminal_width};
use crate::analysis::evidence::{Evidence, EvidenceRef};
use crate::analysis::graph::NodeId;
use crate::model::text::{sanitize, wrap_line};
use crate::model::time::format_ms;
use crate::query::{Columns, Ctx, FIELDS, Query};
use crate::review::file::Review;
use crate::verify::Trees;
use crate::verify::verdict::RecordVerdict;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;

/// `--where EXPR`: only what concerns the actions a filter expression matches.
#[derive(Args, Debug, Clone, Default)]
pub struct WhereArgs {
    /// Only what concerns the actions EXPR matches (the filter language: `aeplens query
    /// --help`, docs/query.md), e.g. `--where 'reapproved and lease.verdict != "inside"'`.
    #[arg(long = "where", value_name = "EXPR")]
    pub expression: Option<String>,
}

/// Arguments of `query`.
#[derive(Args, Debug)]
pub struct QueryArgs {
    /// The filter expression, e.g. `decision == "deny" and not verified`.
    #[arg(value_name = "EXPR")]
    pub expression: String,
    /// Output format [default: text on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<QueryFormat>,
    /// The review whose marks `marked`, `mark` and `note` read.
    #[arg(long, value_name = "FILE")]
    pub review: Option<String>,
    #[command(flatten)]
    pub evidence: EvidenceArgs,
}

/// Formats `query` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum QueryFormat {
    /// A table for people (default on a terminal).
    Text,
    /// One JSON document (schema/query.schema.json).
    Json,
    /// One JSON line per matching action.
    Ndjson,
}

/// Exit code of a bad expression (like grep's 2).
pub const EXIT_BAD_EXPRESSION: i32 = 2;

/// The expression `text`, checked; Err (after printing where and why) is exit 2.
pub fn checked(text: &str) -> Result<Query, i32> {
    Query::parse(text).map_err(|e| {
        eprintln!(
            "aeplens: bad expression at column {}:\n{}",
            e.column(),
            e.render(text)
        );
        EXIT_BAD_EXPRESSION
    })
}

/// The review's marks placed on the actions of `ev` (action → mark index).
pub fn marks_by_node(ev: EvidenceRef, review: &Review) -> HashMap<NodeId, usize> {
    (review.marks.iter().enumerate())
        .filter_map(|(i, m)| {
            let place = m.target.place(ev.corpus, ev.analysis, ev.findings);
            Some((place.node()?, i))
        })
        .collect()
}

/// Per action (graph node) of `ev`: `query` matches it, reading marks from `review`.
pub fn matching(query: &Query, ev: EvidenceRef, review: Option<&Review>) -> Vec<bool> {
    let by_node = review.map(|r| marks_by_node(ev, r)).unwrap_or_default();
    let mut ctx = Ctx::new(ev);
    if let Some(r) = review {
        ctx = ctx.with_marks(r, &by_node);
    }
    if review.is_none() && reads_marks(query) {
        super::note("no --review given: no action is marked");
    }
    query.matches(&ctx, &Columns::default())
}

/// The expression reads the review's fields.
fn reads_marks(query: &Query) -> bool {
    (query.fields().iter()).any(|&f| FIELDS[f].reads_review())
}

/// The findings naming an action that `passes` (query.md §2); a finding naming no
/// action is left out.
pub fn findings_where<'f>(
    ev: EvidenceRef<'f>,
    passes: &[bool],
) -> Vec<&'f crate::model::finding::Finding> {
    let passes = |n: NodeId| passes.get(n as usize).copied().unwrap_or(false);
    (ev.findings.iter())
        .filter(|f| ev.analysis.graph.names_passing(ev.corpus, f, &passes))
        .collect()
}

/// One matching action, as `query --format json` writes it.
#[derive(Serialize)]
struct Match<'a> {
    run_id: &'a str,
    action_id: Option<&'a str>,
    chain_head: String,
    tool_name: Option<&'a str>,
    decision: Option<&'a str>,
    observed: Option<&'a str>,
    time_ms: Option<f64>,
    lease_id: Option<&'a str>,
    lease_verdict: Option<&'static str>,
    record: RecordOut,
    findings: Vec<&'static str>,
}

#[derive(Serialize)]
struct RecordOut {
    path: String,
    line: usize,
    authenticity: String,
    chain: String,
    /// The verdict's glyph (`RecordVerdict::glyph`), for the text table.
    #[serde(skip)]
    glyph: char,
}

/// The document `query --format json` writes.
#[derive(Serialize)]
struct Document<'a> {
    schema_version: &'static str,
    expression: &'a str,
    matches: Vec<Match<'a>>,
    counts: Counts,
}

#[derive(Serialize)]
struct Counts {
    matched: usize,
    actions: usize,
}

fn match_of<'a>(ev: EvidenceRef<'a>, n: NodeId, named: &[&'static str]) -> Match<'a> {
    let g = &ev.analysis.graph;
    let node = &g.nodes[n as usize];
    let facts = g.facts(ev.corpus, n);
    let source = &ev.corpus.record(node.record as usize).source;
    let verdict = ev.verdict(n);
    let lease = ev.analysis.leases.by_node.get(&n);
    Match {
        run_id: &g.runs[node.run as usize].id,
        action_id: facts.and_then(|f| f.id()),
        chain_head: g.chain_name(ev.corpus, n).head,
        tool_name: facts.and_then(|f| f.tool()),
        decision: facts.and_then(|f| f.outcome()),
        observed: facts.and_then(crate::model::facts::ActionFacts::observed),
        time_ms: node.time(),
        lease_id: lease.map(|l| l.lease_id.as_str()),
        lease_verdict: lease.map(|l| l.verdict.name()),
        record: RecordOut {
            path: source.path.to_string(),
            line: source.line,
            authenticity: verdict
                .as_ref()
                .map_or("not-checked".into(), |v| v.authenticity.clone()),
            chain: verdict
                .as_ref()
                .map_or("not-checked".into(), |v| v.chain.clone()),
            glyph: verdict.as_ref().map_or('○', RecordVerdict::glyph),
        },
        findings: named.to_vec(),
    }
}

/// `aeplens query`.
pub fn run(args: &QueryArgs) -> i32 {
    let query = match checked(&args.expression) {
        Ok(q) => q,
        Err(code) => return code,
    };
    let ev = match super::report::open(&args.evidence, Trees::OnDisk) {
        Ok(ev) => ev,
        Err(code) => return code,
    };
    let review = match &args.review {
        None => None,
        Some(path) => match Review::read(std::path::Path::new(path)) {
            Ok(Some(r)) => Some(r),
            Ok(None) => {
                eprintln!("aeplens: no review file at {}", sanitize(path));
                return 2;
            }
            Err(e) => {
                eprintln!("aeplens: {}", e.render());
                return 2;
            }
        },
    };
    let code = out(args, &query, &ev, review.as_ref());
    if ev.reread_failures() > 0 { 2 } else { code }
}

fn out(args: &QueryArgs, query: &Query, ev: &Evidence, review: Option<&Review>) -> i32 {
    let ev = ev.as_ref();
    let passes = matching(query, ev, review);
    let all = crate::query::actions(ev);
    let named = ev.analysis.graph.findings_by_node(ev.corpus, ev.findings);
    let ids = |n: NodeId| -> Vec<&'static str> {
        let mut ids: Vec<&'static str> = (named.get(&n).into_iter().flatten())
            .filter_map(|&i| ev.findings.get(i as usize).map(|f| f.id))
            .collect();
        ids.dedup();
        ids
    };
    let matches: Vec<Match> = (all.iter())
        .filter(|&&n| passes[n as usize])
        .map(|&n| match_of(ev, n, &ids(n)))
        .collect();
    let counts = Counts {
        matched: matches.len(),
        actions: all.len(),
    };
    let found = !matches.is_empty();
    let format = args.format.unwrap_or(if terminal_width().is_some() {
        QueryFormat::Text
    } else {
        QueryFormat::Json
    });
    let code = match format {
        QueryFormat::Json => {
            let doc = Document {
                schema_version: crate::model::contract::SCHEMA_VERSION,
                expression: query.text(),
                matches,
                counts,
            };
            let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
            s.push('\n');
            emit(&s)
        }
        QueryFormat::Ndjson => {
            let mut s = String::new();
            for m in &matches {
                s.push_str(&crate::model::contract::ndjson_line(m));
            }
            emit(&s)
        }
        QueryFormat::Text => emit(&text(query, &matches, &counts, terminal_width())),
    };
    match code {
        0 if found => 0,
        0 => 1,
        other => other,
    }
}

/// The matches as a table a reviewer reads, wrapped at `width`.
fn text(query: &Query, matches: &[Match], counts: &Counts, width: Option<usize>) -> String {
    let mut s = String::new();
    for m in matches {
        let line = format!(
            "{} / {}  {}  {} → {}  {}  {} {} · chain {} · {}:{}{}",
            sanitize(m.run_id),
            sanitize(m.action_id.unwrap_or("—")),
            sanitize(m.tool_name.unwrap_or("—")),
            sanitize(m.decision.unwrap_or("—")),
            sanitize(m.observed.unwrap_or("—")),
            m.time_ms.map_or_else(|| "untimed".into(), format_ms),
            m.record.glyph,
            m.record.authenticity,
            m.record.chain,
            sanitize(&m.record.path),
            m.record.line,
            if m.findings.is_empty() {
                String::new()
            } else {
                format!("  {}", m.findings.join(", "))
            }
        );
        match width {
            Some(w) => {
                for l in wrap_line(&line, w, 4) {
                    let _ = writeln!(s, "{l}");
                }
            }
            None => {
                let _ = writeln!(s, "{line}");
            }
        }
    }
    let expression = if query.is_all() {
        "(the empty expression: every action)".into()
    } else {
        sanitize(query.text())
    };
    let _ = writeln!(
        s,
        "{} of {} actions match {expression}",
        counts.matched, counts.actions
    );
    s
}

/// The long help of `query`: the fields with their types, from the one table.
pub fn fields_help() -> String {
    let mut s = String::from(
        "Evaluate a filter expression (docs/query.md) over every action of the evidence — one \
per action identity (emitter chain and id; a fork's branches are two) — and print those that \
match, each with its record's verdict.\n\n\
Grammar: `field op value` tests (== != < <= > >=, `in {a, b, x..y}`, `contains \"…\"`, \
`matches \"regex\"`, `exists`, a bool field alone), joined by and/&&, or/||, not/!, with \
parentheses. Strings are double-quoted; times are 2026-06-06, 2026-06-06T10:02Z or \
2026-06-06T10:02:00Z (UTC) or epoch milliseconds. A missing value is null: only `== null`, \
`!= x` and `not …` are true of it.\n\n\
Exit codes:\n\n0: something matched.\n\n1: nothing matched.\n\n2: a bad expression (the \
column, a caret and what was expected are printed), a usage error, or unreadable evidence.\n\n\
Fields:\n",
    );
    for f in FIELDS {
        let _ = write!(s, "\n{} ({}): {}", f.name, f.ty.name(), f.about);
        if !f.values.is_empty() {
            let _ = write!(s, " [{}]", f.values.join(", "));
        }
        s.push('\n');
    }
    s
}
