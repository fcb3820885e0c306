//! Arbitrary telemetry files (`--traces`) read and joined to the demo's evidence: nothing
//! panics or loops, whatever the OTLP JSON holds.
#![no_main]
use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, parse_input};
use aeplens::verify::{Keyring, Options};
use libfuzzer_sys::fuzz_target;

const DEMO: &[u8] = include_bytes!("../../assets/demo/evidence/incident.ndjson");

fuzz_target!(|data: &[u8]| {
    let telemetry = aeplens::load::traces::read_bytes("fuzz.jsonl", data);
    let corpus = Corpus::new(vec![parse_input("demo.ndjson".into(), DEMO)]);
    let mut ev = Evidence::open(
        corpus,
        &Keyring::default(),
        &Options::default(),
        &SuppliedLeases::default(),
    );
    ev.add_capture(telemetry, 2000.0);
    if let Some(c) = &ev.capture {
        let _ = c.summary();
        let _ = c.run_lines();
        for node in 0..ev.analysis.graph.nodes.len() as u32 {
            let _ = c.action_view(node, "run-deploy-0042");
        }
    }
});
