//! Arbitrary bytes as an RFC 3161 token (truncated DER, wrong OIDs, huge lengths,
//! certificate loops) and as a PEM root bundle: a verdict every time, never a panic or a
//! hang.
#![no_main]
use aeplens::verify::tsa::{Roots, Stamped, roots_from_pem, verify};
use libfuzzer_sys::fuzz_target;

const ROOT: &[u8] = include_bytes!("../../tests/fixtures/tsa/root.pem");

fuzz_target!(|data: &[u8]| {
    let roots = roots_from_pem(ROOT).expect("the fixture root");
    let _ = verify(data, Stamped::Bytes(b"stamped bytes"), &roots);
    let _ = verify(data, Stamped::Sha256(&[7; 32]), &Roots::default());
    let _ = roots_from_pem(data);
});
