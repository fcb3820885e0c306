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
        let report = ev
            .analysis
            .show(&ev.corpus, node, &ev.findings, Some(&ev.report.records));
        let _ = serde_json::to_string(&report);
    }
    let _ = serde_json::to_string(&ev.analysis.chains);
    let _ = ev.analysis.envelopes(&ev.corpus);
    use aeplens::open::chain_answers::{Form, of};
    let json = of(ev.as_ref(), Form::Json).expect("chains in memory");
    serde_json::from_str::<serde_json::Value>(&json).expect("the chains document is JSON");
    let _ = of(ev.as_ref(), Form::Text).expect("chains in memory");
});
