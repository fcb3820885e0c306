//! Property tests for canonicalisation (numbers, key order, escaping) and for the loader
//! (arbitrary bytes never panic).

use aeplens::canon::{Variant, canonical_bytes, compare_keys, format_number, is_index_like};
use aeplens::load::parse_input;
use aeplens::load::parser::parse;
use proptest::prelude::*;

fn js_number(x: f64) -> String {
    let mut out = Vec::new();
    format_number(x, &mut out);
    String::from_utf8(out).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn numbers_round_trip_in_the_ecmascript_layout(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assume!(x.is_finite());
        let s = js_number(x);
        prop_assert_eq!(s.parse::<f64>().unwrap(), if x == 0.0 { 0.0 } else { x });
        let a = x.abs();
        if a != 0.0 && !(1e-6..1e21).contains(&a) {
            prop_assert!(s.contains("e+") || s.contains("e-"), "{} → {}", x, s);
        } else {
            prop_assert!(!s.contains('e'), "{} → {}", x, s);
        }
        if a < 1e21 && x.fract() == 0.0 {
            prop_assert!(!s.contains('.'), "{} → {}", x, s);
        }
        prop_assert!(!s.starts_with("-0") || s.starts_with("-0."));
    }

    #[test]
    fn strings_escape_like_json_stringify(s in any::<String>()) {
        let json = aeplens::model::json::Json::String(s.as_str().into());
        let ours = String::from_utf8(canonical_bytes(&json, Variant::C1)).unwrap();
        // serde_json escapes exactly the set JSON.stringify does for valid Unicode.
        prop_assert_eq!(ours, serde_json::to_string(&s).unwrap());
    }

    #[test]
    fn key_orders(keys in proptest::collection::vec("[a-z0-9\u{e000}-\u{e010}\u{1f600}-\u{1f610}]{0,4}", 1..8)) {
        let utf16 = |k: &str| k.encode_utf16().collect::<Vec<u16>>();
        for a in &keys {
            for b in &keys {
                let (x, y) = (a.as_bytes(), b.as_bytes());
                let c3 = compare_keys(x, y, Variant::C3);
                prop_assert_eq!(c3, x.cmp(y));
                let c1 = compare_keys(x, y, Variant::C1);
                match (is_index_like(x), is_index_like(y)) {
                    (true, true) => prop_assert_eq!(c1, a.parse::<u64>().unwrap().cmp(&b.parse::<u64>().unwrap())),
                    (true, false) => prop_assert_eq!(c1, std::cmp::Ordering::Less),
                    (false, true) => prop_assert_eq!(c1, std::cmp::Ordering::Greater),
                    (false, false) => prop_assert_eq!(c1, utf16(a).cmp(&utf16(b))),
                }
            }
        }
    }

    #[test]
    fn canonical_form_is_a_fixed_point(v in arb_json()) {
        let text = serde_json::to_string(&v).unwrap();
        let once = canonical_bytes(&parse(&text).unwrap(), Variant::C1);
        let twice = canonical_bytes(&parse(std::str::from_utf8(&once).unwrap()).unwrap(), Variant::C1);
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn loader_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let input = parse_input("fuzz".into(), &bytes);
        prop_assert!(input.records.len() + input.errors.len() <= bytes.len() + 1);
    }

    #[test]
    fn loader_never_panics_on_json_like_text(text in "[\\[\\]{}\",:0-9a-z\\\\\n .eE+-]{0,200}") {
        let _ = parse_input("fuzz".into(), text.as_bytes());
    }
}

fn arb_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| serde_json::json!(f)),
        ".{0,6}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map(".{0,4}", inner, 0..5)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

#[test]
fn known_vectors() {
    for (input, want) in [
        ("1e21", "1e+21"),
        ("1e-7", "1e-7"),
        ("0.000001", "0.000001"),
        ("-0", "0"),
        ("9007199254740993", "9007199254740992"),
    ] {
        assert_eq!(js_number(input.parse().unwrap()), want);
    }
}
