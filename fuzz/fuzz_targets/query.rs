//! Arbitrary filter expressions: parsing and type-checking never panic, every error
//! points inside the expression, and an expression that checks is evaluated over the
//! demo's evidence without panicking.
#![no_main]
use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, parse_input};
use aeplens::query::{Columns, Ctx, Query};
use aeplens::verify::{Keyring, Options};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const DEMO: &[u8] = include_bytes!("../../assets/demo/evidence/incident.ndjson");

fn demo() -> &'static Evidence {
    static EV: OnceLock<Evidence> = OnceLock::new();
    EV.get_or_init(|| {
        let corpus = Corpus::new(vec![parse_input("demo.ndjson".into(), DEMO)]);
        Evidence::open(
            corpus,
            &Keyring::default(),
            &Options::default(),
            &SuppliedLeases::default(),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match Query::parse(&text) {
        Err(e) => {
            assert!(e.at < text.len(), "error at {} of {}: {text:?}", e.at, text.len());
            assert!(e.at + e.len <= text.len(), "error span past the end: {text:?}");
            assert!(text.is_char_boundary(e.at), "error inside a character: {text:?}");
            let _ = e.render(&text);
        }
        Ok(q) => {
            let ev = demo();
            let pass = q.matches(&Ctx::new(ev.as_ref()), &Columns::default());
            assert_eq!(pass.len(), ev.analysis.graph.nodes.len());
        }
    }
});
