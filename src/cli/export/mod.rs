//! `aeplens export`: the evidence for the tools reviewers already use. The action graph as
//! Graphviz DOT (`dot -Tsvg`) and Mermaid (GitHub and GitLab render it in Markdown): one
//! cluster per run; parent edges (dashed across runs), a bold `re-approved` edge into each
//! re-approved action, dotted causal-chain edges; denied actions red, re-approved ones
//! amber; every label escaped for the target language. The timeline as a Timesketch JSONL,
//! a Chrome/Perfetto trace and OTLP/JSON spans (`timeline`).

#[cfg(feature = "tables")]
pub mod columns;
#[cfg(feature = "tables")]
pub mod parts;
#[cfg(feature = "tables")]
pub mod tables;
mod timeline;

use super::report::{emit, open};
use super::{ExportArgs, ExportFormat};
use crate::model::text::sanitize;
use crate::review::report::graph::{ActionGraph, Selection, dot, mermaid};
use crate::verify::Trees;
#[cfg(feature = "tables")]
use crate::{analysis::evidence::Evidence, open::Opened};

/// `aeplens export`.
pub fn run(args: &ExportArgs) -> i32 {
    if let Some(out) = &args.output
        && super::report::refuses_output(&args.evidence.paths, out)
    {
        return 2;
    }
    if args.format == ExportFormat::Parquet {
        return parquet(args);
    }
    let query = match args.filter.expression.as_deref().map(super::query::checked) {
        Some(Err(code)) => return code,
        Some(Ok(q)) => Some(q),
        None => None,
    };
    let ev = match open(&args.evidence, Trees::Held) {
        Ok(ev) => ev,
        Err(code) => return code,
    };
    let set = crate::review::file::EvidenceSet::of(&ev.corpus);
    let review = if query.is_some() || args.format == ExportFormat::Timesketch {
        match super::incident::review(&args.review, &set) {
            Ok(review) => review,
            Err(code) => return code,
        }
    } else {
        None
    };
    let review = review.as_ref().map(|r| &r.0);
    let passes = (query.as_ref()).map(|q| super::query::matching(q, ev.as_ref(), review));
    let selection = Selection {
        runs: &args.run,
        actions: passes.as_deref(),
    };
    let graph = ActionGraph::of(ev.as_ref(), selection);
    if graph.runs.is_empty() {
        let why = if query.is_some() {
            "--where matched no action"
        } else {
            "check --run"
        };
        eprintln!("aeplens: no action to export ({why})");
        return 3;
    }
    let text = match args.format {
        ExportFormat::Dot => dot(&graph),
        ExportFormat::Mermaid => {
            let (text, left_out) = mermaid(&graph);
            if left_out > 0 {
                super::note(&format!(
                    "{left_out} of {} runs left out of the Mermaid diagram: Mermaid refuses one over {} characters (--run picks runs; --format dot has no limit)",
                    graph.runs.len(),
                    crate::review::report::graph::MERMAID_MAX_TEXT
                ));
            }
            text
        }
        ExportFormat::Timesketch => timeline::timesketch(&ev, selection, review),
        ExportFormat::ChromeTrace => timeline::chrome_trace(&ev, selection),
        ExportFormat::OtlpJson => timeline::otlp_json(&ev, selection),
        ExportFormat::Parquet => return parquet(args),
    };
    match &args.output {
        None => emit(&text),
        Some(path) => match crate::private::write_private(path.as_ref(), text.as_bytes()) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("aeplens: cannot write {}: {e}", sanitize(path));
                2
            }
        },
    }
}

/// `export --format parquet -o OUT/`.
#[cfg(feature = "tables")]
fn parquet(args: &ExportArgs) -> i32 {
    let Some(out) = &args.output else {
        eprintln!("aeplens: --format parquet writes a directory of tables: give it with -o OUT/");
        return 2;
    };
    if !args.run.is_empty() || args.filter.expression.is_some() {
        eprintln!(
            "aeplens: --format parquet exports every action (--run and --where are for the graph and timeline formats; filter the tables in the engine: docs/query.md names each field's column)"
        );
        return 2;
    }
    let setting = match super::report::setting_of(&args.evidence) {
        Ok(setting) => setting,
        Err(code) => return code,
    };
    // Each batch's rows are written as it is analysed: the export holds no more of the
    // analysis than `check` does.
    let out = std::path::Path::new(out);
    let mut made = tables::Tables::new(Some(out));
    let paths = &args.evidence.paths;
    let budget = super::check::BUDGET;
    let (mut opened, trace_problems) =
        super::open_each_batch(&setting, paths, budget, &mut |b| made.add_batch(b));
    let to_keep = opened.take_to_keep();
    let (corpus, report, findings) = opened.parts();
    if let Err(code) = super::report::say_opened(&setting, corpus, trace_problems) {
        return code;
    }
    if report.records.is_empty() {
        eprintln!("aeplens: no record to export");
        return 3;
    }
    let whole = match &opened {
        Opened::Whole(ev) => Some(Evidence::as_ref(ev)),
        Opened::Batched(_) => None,
    };
    made.add_rest(report, findings, whole);
    // What is left to keep in the index is kept on the other core while the tables end.
    let keep = || {
        if let Some(to_keep) = to_keep {
            opened.keep(to_keep);
        }
    };
    match rayon::join(|| made.finish(corpus, &setting.trust, out), keep).0 {
        Ok(files) => {
            super::note(&format!(
                "wrote {} files under {} (docs/tables.md)",
                files.len(),
                sanitize(&out.display().to_string())
            ));
            0
        }
        Err(e) => {
            eprintln!("aeplens: {e}");
            2
        }
    }
}

#[cfg(not(feature = "tables"))]
fn parquet(_: &ExportArgs) -> i32 {
    eprintln!(
        "aeplens: this aeplens was built without Parquet support; install it with \
         `cargo install aeplens --features tables` (or build with --features tables)"
    );
    2
}
