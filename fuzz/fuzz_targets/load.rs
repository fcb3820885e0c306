//! The loader on arbitrary bytes: never panics, every record is an object, errors name a line.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let input = aeplens::load::parse_input("fuzz.ndjson".into(), data);
    for r in &input.records {
        assert!(r.json().as_object().is_some());
    }
    for e in &input.errors {
        assert!(!e.message.is_empty());
    }
});
