//! Times the analysis layer on generated evidence (release build):
//!
//! ```text
//! cargo run --release --example bench_analysis -- 10000 100000 1000000
//! ```
//! For each action count: records of 10 actions each, 50 records a run, with parent
//! links (denied→re-approved pairs), causal chains, leases with recorded windows, RFC
//! drift checks and state digests. Times building the graph, lease windows, chains and
//! badges (canonical hashes given, as `check` computes them anyway), then every
//! per-action view (authority, drift, lease, digests, envelope) for every action.

use aeplens::analysis::Analysis;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, parse_input};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const PER_RECORD: usize = 10;

/// NDJSON with `actions` actions.
pub fn generate(actions: usize) -> String {
    let mut s = String::with_capacity(actions * 700);
    let records = actions.div_ceil(PER_RECORD);
    for r in 0..records {
        let run = r / 50;
        let _ = write!(
            s,
            r#"{{"schema_version":"aep/v0.3","run_id":"run-{run}","created_at_ms":{},"actions":["#,
            1_780_000_000_000u64 + r as u64 * 10_000
        );
        for i in 0..PER_RECORD {
            let n = r * PER_RECORD + i;
            let t = 1_780_000_000_000u64 + n as u64 * 1_000;
            if i > 0 {
                s.push(',');
            }
            let denied = i == 3;
            let parent = if i == 4 {
                format!(r#","parent_action_id":"a{}""#, n - 1)
            } else {
                String::new()
            };
            let decision = if denied { "deny" } else { "allow" };
            let _ = write!(
                s,
                r#"{{"action_id":"a{n}","tool_name":"tool_{}","state_changing":true,"timestamp_ms":{t},"side_effect_class":"mutate-external","causal_chain_id":"cc-{}"{parent},"approval_context_hash":"sha256:{n:064x}","scope_lease_id":"lease-{}","capability_decision":{{"capability":"c{i}","subject":"agent","resource":"res","decision":"{decision}","approval_grant":"bounded-lease"}},"bounded_lease_evidence":{{"lease_id":"lease-{}","lease_granted_at_ms":{},"lease_expires_at_ms":{},"execution_started_at_ms":{t}}},"argument_drift":{{"result":"{}","approved_arg_digest":"x","observed_arg_digest":"{}","approval_or_lease_id":"lease-{}"}},"state_digest_kind":"db-rowset","state_digest_coverage":{{"database_id":"db","schema":"s","table":"t{}","query_hash":"q","snapshot_id":"s{n}"}},"pre_state_digest":"p{n}","post_state_digest":"q{n}","outcome":"success"}}"#,
                i % 3,
                n / 5,
                n / 20,
                n / 20,
                t - 5_000,
                t + 60_000,
                if denied { "drifted" } else { "matched" },
                if denied { "y" } else { "x" },
                n / 20,
                i % 4,
            );
        }
        s.push_str("]}\n");
    }
    s
}

fn main() {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let counts = if counts.is_empty() {
        vec![10_000, 100_000, 1_000_000]
    } else {
        counts
    };
    println!(
        "| actions | records | parse | graph + leases + chains + badges | all per-action views | total analysis | per action |"
    );
    println!("|---|---|---|---|---|---|---|");
    for n in counts {
        let text = generate(n);
        let t = Instant::now();
        let corpus = Corpus::new(vec![parse_input("bench.ndjson".into(), text.as_bytes())]);
        let parse = t.elapsed();
        drop(text);
        // Distinct stand-in hashes: no record links, like a store of independent emitters.
        let hashes: Vec<String> = (0..corpus.len()).map(|i| format!("{i:064x}")).collect();
        if std::env::var_os("PHASES").is_some() {
            let t = Instant::now();
            let (g, f) = aeplens::analysis::graph::Graph::build_with_facts(&corpus, &hashes);
            eprintln!("graph {:.2?}", t.elapsed());
            let t = Instant::now();
            let _l = aeplens::analysis::lease::Leases::build(&g, &f, &SuppliedLeases::default());
            eprintln!("leases {:.2?}", t.elapsed());
            let t = Instant::now();
            let _c = aeplens::analysis::chains::build(&corpus, &g, &f);
            eprintln!("chains {:.2?}", t.elapsed());
        }
        let t = Instant::now();
        let analysis = Analysis::with_hashes(&corpus, hashes, &SuppliedLeases::default());
        let build = t.elapsed();
        let t = Instant::now();
        let fields: usize = (0..analysis.graph.nodes.len() as u32)
            .into_par_iter()
            .filter_map(|node| analysis.show(&corpus, node, &[]))
            .map(|r| r.authority.available.len() + r.digests.len())
            .sum();
        let views = t.elapsed();
        let total = build + views;
        println!(
            "| {n} | {} | {parse:.2?} | {build:.2?} | {views:.2?} | **{total:.2?}** | {:.2} µs |",
            corpus.len(),
            total.as_secs_f64() * 1e6 / n as f64
        );
        assert!(fields > 0);
    }
}
