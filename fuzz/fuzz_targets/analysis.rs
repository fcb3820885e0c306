//! The whole pipeline on arbitrary stores: load, verify, graph, views, findings and the
//! explorer's display data; nothing panics or loops.
#![no_main]
use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, parse_input};
use aeplens::verify::{Keyring, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let corpus = Corpus::new(vec![parse_input("fuzz.ndjson".into(), data)]);
    let ev = Evidence::open(
        corpus,
        &Keyring::default(),
        &Options::default(),
        &SuppliedLeases::default(),
    );
    for node in 0..ev.analysis.graph.nodes.len() as u32 {
        let report = ev.analysis.show(&ev.corpus, node, &ev.findings, Some(&ev.report.records));
        let _ = serde_json::to_string(&report);
    }
    let _ = serde_json::to_string(&ev.analysis.chains);
    let _ = ev.analysis.envelopes(&ev.corpus);
    let _ = aeplens::cli::chains::chains_json(ev.as_ref());
    let _ = aeplens::cli::chains::chains_text(ev.as_ref());
});
