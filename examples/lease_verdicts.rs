//! Print the lease verdict of every action of a run that used a lease:
//!
//! ```text
//! cargo run --example lease_verdicts -- assets/demo/leases.ndjson assets/demo/evidence
//! ```

use aeplens::analysis::Analysis;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, load_paths};
use aeplens::model::time::format_ms;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((lease_file, paths)) = args.split_first() else {
        eprintln!("usage: lease_verdicts LEASES.ndjson PATH...");
        std::process::exit(2);
    };
    let mut leases = SuppliedLeases::default();
    for e in leases.add_file(std::path::Path::new(lease_file)) {
        eprintln!("{e}");
    }
    let corpus = Corpus::new(load_paths(paths));
    let analysis = Analysis::build(&corpus, &leases);
    for lease in &analysis.leases.summaries {
        println!("{} ({:?} window)", lease.lease_id, lease.source);
        for node in &lease.nodes {
            let view = &analysis.leases.by_node[node];
            let id = analysis
                .graph
                .action(&corpus, *node)
                .and_then(|(_, a)| a.id())
                .unwrap_or("?");
            println!(
                "  {id} at {} → {}",
                view.executed_at_ms.map(format_ms).unwrap_or_default(),
                view.verdict.name()
            );
        }
    }
}
