//! The loader on arbitrary bytes: never panics, every record is an object, errors name a
//! line; and the file cut into pieces (what an engine verifies apart, `load::pieces`)
//! gives the very records, at the same lines and positions, and as many errors.
#![no_main]
use aeplens::load::pieces;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for path in ["fuzz.ndjson", "fuzz.json"] {
        let input = aeplens::load::parse_input(path.into(), data);
        for r in &input.records {
            assert!(r.json().as_object().is_some());
        }
        for e in &input.errors {
            assert!(!e.message.is_empty());
        }
        let cut = pieces::split(path, data);
        assert_eq!(cut.input.format, input.format);
        let mut records = Vec::new();
        let mut errors = cut.input.errors.len();
        for p in &cut.pieces {
            let index = p.index.unwrap_or(records.len());
            match pieces::record(path.into(), p.line, index, &data[p.bytes.clone()]) {
                Ok(r) => records.push(r),
                Err(_) => errors += 1,
            }
        }
        assert_eq!(errors, input.errors.len());
        assert_eq!(records.len(), input.records.len());
        for (a, b) in records.iter().zip(&input.records) {
            assert_eq!(
                (a.source.line, a.source.index),
                (b.source.line, b.source.index)
            );
            assert!(a.json() == b.json(), "{path}:{}", a.source.line);
        }
    }
});
