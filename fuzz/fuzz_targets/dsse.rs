//! Authenticity on hostile signature material: arbitrary bytes become the DSSE payload,
//! signature and key id of an otherwise valid record; verification never panics and an
//! unknown key is never valid.
#![no_main]
use aeplens::verify::{Keyring, Options, verify_inputs};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (a, rest) = data.split_at(data.len() / 3);
    let (b, c) = rest.split_at(rest.len() / 2);
    let s = |x: &[u8]| serde_json::to_string(&String::from_utf8_lossy(x)).unwrap();
    let b64 = |x: &[u8]| aeplens::verify::encoding::encode_base64(x);
    let record = format!(
        r#"{{"schema_version":"aep/v0.4","run_id":"r","created_at_ms":1,"signature":{{"alg":"ed25519","key_id":{},"sig":{}}},"dsse_envelope":{{"payloadType":"application/vnd.in-toto+json","payload":"{}","signatures":[{{"keyid":{},"sig":"{}"}}]}}}}"#,
        s(c),
        s(b),
        b64(a),
        s(c),
        b64(b)
    );
    let input = aeplens::load::parse_input("fuzz.json".into(), record.as_bytes());
    let report = verify_inputs(&[input], &Keyring::default(), &Options::default(), None);
    for r in &report.records {
        assert_ne!(
            r.authenticity.status,
            Some(aeplens::verify::AuthStatus::Valid),
            "valid without any trusted key"
        );
    }
});
