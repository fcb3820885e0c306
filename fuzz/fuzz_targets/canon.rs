//! Canonicalisation of whatever parses: every variant, hashing, and a fixed point
//! (canonical bytes parse back to the same canonical bytes).
#![no_main]
use aeplens::canon::{Variant, canonical_bytes, canonical_sha256};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let input = aeplens::load::parse_input("fuzz.json".into(), data);
    for r in &input.records {
        for v in [Variant::C1, Variant::C2, Variant::C3] {
            let bytes = canonical_bytes(r.json(), v);
            let again = aeplens::load::parse_input("again.json".into(), &bytes);
            if let Some(back) = again.records.first() {
                assert_eq!(
                    canonical_bytes(back.json(), v),
                    bytes,
                    "{v:?} is not a fixed point"
                );
            }
        }
        let _ = canonical_sha256(r.json());
    }
});
