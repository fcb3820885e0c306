//! Times the analysis layer on generated evidence (release build):
//!
//! ```text
//! cargo run --release --example bench_analysis -- 10000 100000 1000000
//! ```
//! For each action count: records of 10 actions each, 50 records a run, with parent
//! links (denied→re-approved pairs), causal chains, leases with recorded windows, RFC
//! drift checks and state digests. Times building the graph, lease windows, chains and
//! badges (canonical hashes given, as `check` computes them anyway), then every
//! per-action view (authority, drift, lease, digests, envelope) for every action, then
//! every finding (sorted by severity and time).

use aeplens::analysis::lease::SuppliedLeases;
use aeplens::analysis::{Analysis, findings};
use aeplens::load::{Corpus, parse_input};
use rayon::prelude::*;
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "support/synthetic.rs"]
mod synthetic;

fn main() {
    let counts = synthetic::counts_from_args();
    println!(
        "| actions | records | parse | graph + leases + chains + badges | all per-action views | findings | total analysis | per action |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for n in counts {
        let text = synthetic::generate(n);
        let t = Instant::now();
        let corpus = Corpus::new(vec![parse_input("bench.ndjson".into(), text.as_bytes())]);
        let parse = t.elapsed();
        drop(text);
        // Distinct stand-in hashes: no record links, like a store of independent emitters.
        let hashes: Vec<aeplens::canon::Sha256Digest> = (0..corpus.len())
            .map(|i| aeplens::canon::Sha256Digest::of(&i.to_le_bytes()))
            .collect();
        if std::env::var_os("PHASES").is_some() {
            let t = Instant::now();
            let (g, f) = aeplens::analysis::graph::Graph::build_with_facts(&corpus, &hashes);
            eprintln!("graph {:.2?}", t.elapsed());
            let t = Instant::now();
            let _l = aeplens::analysis::lease::Leases::build(&g, &f, &SuppliedLeases::default());
            eprintln!("leases {:.2?}", t.elapsed());
            let t = Instant::now();
            let _c = aeplens::analysis::chains::build(&g, &f);
            eprintln!("chains {:.2?}", t.elapsed());
        }
        let t = Instant::now();
        let analysis = Analysis::with_hashes(&corpus, hashes, &SuppliedLeases::default());
        let build = t.elapsed();
        let t = Instant::now();
        let fields: usize = (0..analysis.graph.nodes.len() as u32)
            .into_par_iter()
            .filter_map(|node| analysis.show(&corpus, node, &[], None))
            .map(|r| r.authority.available().len() + r.digests.len())
            .sum();
        let views = t.elapsed();
        let t = Instant::now();
        let findings = findings::dedupe_and_sort(findings::analyse(&corpus, &analysis));
        let finding = t.elapsed();
        let total = build + views + finding;
        println!(
            "| {n} | {} | {parse:.2?} | {build:.2?} | {views:.2?} | {finding:.2?} ({} findings) | **{total:.2?}** | {:.2} µs |",
            corpus.len(),
            findings.len(),
            total.as_secs_f64() * 1e6 / n as f64
        );
        assert!(fields > 0);
    }
}
