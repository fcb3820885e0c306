//! Walk every denied→re-approved chain: each step, how it was authorised, how it ended.
//!
//! ```text
//! cargo run --example walk_chain -- assets/demo/evidence
//! ```

use aeplens::analysis::Analysis;
use aeplens::analysis::chains::ChainKind;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, load_paths};

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let corpus = Corpus::new(load_paths(&paths));
    let analysis = Analysis::build(&corpus, &SuppliedLeases::default());
    for chain in analysis
        .chains
        .iter()
        .filter(|c| c.kind == ChainKind::DenyReapproval)
    {
        println!(
            "{} ended {}",
            chain.id,
            chain.ended.as_deref().unwrap_or("?")
        );
        for step in &chain.steps {
            println!(
                "  {} {} decision={} grant={} fresh approval={} drift={:?}",
                step.action_id,
                step.tool.as_deref().unwrap_or("?"),
                step.decision.as_deref().unwrap_or("none"),
                step.grant.as_deref().unwrap_or("none"),
                step.fresh_approval,
                step.drift,
            );
        }
    }
}
