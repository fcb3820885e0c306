//! Canonical bytes and hashes, reproducing the reference recipe byte for byte:
//! "rebuild every object with sorted keys, then `JSON.stringify`" (verification.md §a).
//! Three key orders exist in the wild ([`Variant`]); numbers follow ECMAScript
//! `Number::toString`; strings follow `JSON.stringify` escaping.

mod number;

/// The digest type and its hex, at home in [`crate::model::sha256`]: the hash canon makes.
pub use crate::model::sha256::{Sha256Digest, hex};
pub use number::{PrecisionLoss, format_number, precision_loss};

use crate::model::json::{JStr, Json};
use std::cmp::Ordering;

/// Which canonicalisation: the three differ only in key order and `__proto__`. Written
/// by its [`Variant::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Variant {
    /// Old JS (every reference signature): UTF-16 code-unit order, index-like keys first,
    /// `__proto__` dropped.
    C1,
    /// Later JS: UTF-8 byte order, index-like keys still first, `__proto__` kept.
    C2,
    /// Bytewise (Rust BTreeMap, Python `sort_keys`): UTF-8 byte order, nothing special.
    C3,
}

impl Variant {
    /// The short name used in output (`C1`, `C2`, `C3`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::C1 => "C1",
            Variant::C2 => "C2",
            Variant::C3 => "C3",
        }
    }
}

/// Keys left out of the chain hash (`prev_record_hash` of the next record).
pub const CHAIN_EXCLUDED: &[&str] = &["signature", "dsse_envelope"];
/// Keys left out of what a legacy (S1) signature and a DSSE predicate cover.
pub const SIGNED_EXCLUDED: &[&str] = &["signature", "dsse_envelope", "timestamp_proof"];

/// Canonical bytes of `value` under `variant`.
pub fn canonical_bytes(value: &Json, variant: Variant) -> Vec<u8> {
    let mut out = Vec::with_capacity(1024);
    write_value(value, variant, &[], &mut out);
    out
}

/// Canonical bytes of a record object without the top-level keys in `excluded`.
pub fn canonical_bytes_without(record: &Json, excluded: &[&str], variant: Variant) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    write_value(record, variant, excluded, &mut out);
    out
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256Digest::of(bytes).0)
}

/// The chain hash `H(r)`: SHA-256 of C1(record − `signature` − `dsse_envelope`).
pub fn canonical_sha256(record: &Json) -> Sha256Digest {
    Sha256Digest::of(&canonical_bytes_without(
        record,
        CHAIN_EXCLUDED,
        Variant::C1,
    ))
}

/// True when the value holds a key on which the three variants can disagree
/// (index-like, `__proto__`, or containing an astral character): verification.md §a.2.
pub fn has_divergence_trigger(value: &Json) -> bool {
    match value {
        Json::Array(items) => items.iter().any(has_divergence_trigger),
        Json::Object(o) => o.members.iter().any(|(k, v)| {
            let b = k.bytes();
            is_index_like(b)
                || b == b"__proto__"
                || b.iter().any(|&c| c >= 0xf0)
                || has_divergence_trigger(v)
        }),
        _ => false,
    }
}

fn write_value(value: &Json, variant: Variant, excluded: &[&str], out: &mut Vec<u8>) {
    match value {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(true) => out.extend_from_slice(b"true"),
        Json::Bool(false) => out.extend_from_slice(b"false"),
        Json::Number(n) => format_number(n.value, out),
        Json::String(s) => write_string(s, out),
        Json::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, variant, &[], out);
            }
            out.push(b']');
        }
        Json::Object(o) => {
            let mut members: Vec<(KeyOrder<'_>, &JStr, &Json)> = o
                .effective_members()
                .into_iter()
                .filter(|(k, _)| {
                    let dropped_proto = variant == Variant::C1 && k.bytes() == b"__proto__";
                    let excluded = excluded.iter().any(|x| x.as_bytes() == k.bytes());
                    !dropped_proto && !excluded
                })
                .map(|(k, v)| (KeyOrder::new(k.bytes(), variant), k, v))
                .collect();
            members.sort_by(|a, b| a.0.cmp(&b.0));
            out.push(b'{');
            for (i, (_, k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(k, out);
                out.push(b':');
                write_value(v, variant, &[], out);
            }
            out.push(b'}');
        }
    }
}

/// How the Rust gateway's signed bytes treat the `signature` member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignatureSlot {
    /// `"signature":null` kept in place (the snapshot struct serialises `None` as null).
    NullInPlace,
    /// `signature` left out (later struct versions omit `None`).
    Removed,
}

/// The Rust gateway's signed JSON (verification.md §b.2): stored member order, raw number
/// tokens, compact, `JSON.stringify` escaping, with the top-level `signature` set to
/// null or removed.
pub fn stored_order_bytes(record: &Json, slot: SignatureSlot) -> Vec<u8> {
    fn write(value: &Json, out: &mut Vec<u8>) {
        match value {
            Json::Number(n) => out.extend_from_slice(n.raw.as_bytes()),
            Json::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write(item, out);
                }
                out.push(b']');
            }
            Json::Object(o) => {
                out.push(b'{');
                for (i, (k, v)) in o.effective_members().into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_string(k, out);
                    out.push(b':');
                    write(v, out);
                }
                out.push(b'}');
            }
            other => write_value(other, Variant::C1, &[], out),
        }
    }
    let mut out = Vec::with_capacity(4096);
    let Some(obj) = record.as_object() else {
        write(record, &mut out);
        return out;
    };
    out.push(b'{');
    let mut first = true;
    for (k, v) in obj.effective_members() {
        let is_sig = k.bytes() == b"signature";
        if is_sig && slot == SignatureSlot::Removed {
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        write_string(k, &mut out);
        out.push(b':');
        if is_sig {
            out.extend_from_slice(b"null");
        } else {
            write(v, &mut out);
        }
    }
    out.push(b'}');
    out
}

/// Orders two keys as the given variant does.
pub fn compare_keys(a: &[u8], b: &[u8], variant: Variant) -> Ordering {
    KeyOrder::new(a, variant).cmp(&KeyOrder::new(b, variant))
}

/// What a key's place in a variant's order depends on, read once per key rather than at
/// every comparison of a sort: its value when it is index-like and the variant puts those
/// first, and whether byte order is its code-unit order.
#[derive(Clone, Copy)]
struct KeyOrder<'a> {
    index: Option<u64>,
    /// Byte order orders it: the variant sorts bytes, or the key is ASCII (an ASCII key
    /// differs from any other at an ASCII or a lead byte, where the two orders agree).
    bytewise: bool,
    bytes: &'a [u8],
}

impl<'a> KeyOrder<'a> {
    fn new(bytes: &'a [u8], variant: Variant) -> KeyOrder<'a> {
        KeyOrder {
            index: (variant != Variant::C3)
                .then(|| index_value(bytes))
                .flatten(),
            bytewise: variant != Variant::C1 || bytes.is_ascii(),
            bytes,
        }
    }

    fn cmp(&self, other: &KeyOrder<'_>) -> Ordering {
        match (self.index, other.index) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) if self.bytewise || other.bytewise => self.bytes.cmp(other.bytes),
            (None, None) => compare_utf16(self.bytes, other.bytes),
        }
    }
}

/// An index-like key: a canonical decimal integer in 0 ..= 4294967294.
pub fn is_index_like(key: &[u8]) -> bool {
    index_value(key).is_some()
}

fn index_value(key: &[u8]) -> Option<u64> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key[0] == b'0') {
        return None;
    }
    let mut v: u64 = 0;
    for &c in key {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(c - b'0');
    }
    (v <= 4_294_967_294).then_some(v)
}

/// UTF-16 code-unit order over WTF-8 bytes. Byte order equals code-point order, and the
/// two orders differ only where an astral character meets one in U+E000..=U+FFFF.
fn compare_utf16(a: &[u8], b: &[u8]) -> Ordering {
    let mut ia = Wtf8Units::new(a);
    let mut ib = Wtf8Units::new(b);
    loop {
        match (ia.next(), ib.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x != y => return x.cmp(&y),
            _ => {}
        }
    }
}

/// Iterates the UTF-16 code units of WTF-8 bytes.
struct Wtf8Units<'a> {
    bytes: &'a [u8],
    pos: usize,
    pending_low: Option<u16>,
}

impl<'a> Wtf8Units<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Wtf8Units {
            bytes,
            pos: 0,
            pending_low: None,
        }
    }
}

impl Iterator for Wtf8Units<'_> {
    type Item = u16;
    fn next(&mut self) -> Option<u16> {
        if let Some(low) = self.pending_low.take() {
            return Some(low);
        }
        let (cp, len) = decode_wtf8(&self.bytes[self.pos..])?;
        self.pos += len;
        if cp >= 0x10000 {
            let c = cp - 0x10000;
            self.pending_low = Some(0xDC00 | (c & 0x3ff) as u16);
            Some(0xD800 | (c >> 10) as u16)
        } else {
            Some(cp as u16)
        }
    }
}

/// Decodes one code point (surrogates allowed) and its byte length; tolerant of bad input.
fn decode_wtf8(b: &[u8]) -> Option<(u32, usize)> {
    let first = *b.first()?;
    let cont = |i: usize| b.get(i).map_or(0, |c| u32::from(c & 0x3f));
    Some(match first {
        0x00..=0x7f => (u32::from(first), 1),
        0xc0..=0xdf => (u32::from(first & 0x1f) << 6 | cont(1), 2.min(b.len())),
        0xe0..=0xef => (
            u32::from(first & 0x0f) << 12 | cont(1) << 6 | cont(2),
            3.min(b.len()),
        ),
        0xf0..=0xf7 => (
            u32::from(first & 0x07) << 18 | cont(1) << 12 | cont(2) << 6 | cont(3),
            4.min(b.len()),
        ),
        _ => (0xfffd, 1),
    })
}

/// Writes a string with `JSON.stringify` escaping (verification.md §a.4).
pub fn write_string(s: &JStr, out: &mut Vec<u8>) {
    let bytes = s.bytes();
    out.push(b'"');
    // Nearly every string needs no escape: one pass without branches finds out (it
    // vectorises), and the bytes are copied whole.
    let special = |c: u8| c < 0x20 || c == b'"' || c == b'\\' || c == 0xed;
    if !bytes.iter().fold(false, |any, &c| any | special(c)) {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let escape: Option<&[u8]> = match c {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            0x08 => Some(b"\\b"),
            b'\t' => Some(b"\\t"),
            b'\n' => Some(b"\\n"),
            0x0c => Some(b"\\f"),
            b'\r' => Some(b"\\r"),
            _ => None,
        };
        if let Some(e) = escape {
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(e);
            i += 1;
            start = i;
        } else if c < 0x20 {
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
            i += 1;
            start = i;
        } else if c == 0xed && bytes.get(i + 1).is_some_and(|&n| n >= 0xa0) {
            // A lone surrogate in WTF-8: written as a lower-case \udxxx escape.
            let (cp, len) = decode_wtf8(&bytes[i..]).unwrap_or((0xfffd, 1));
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(format!("\\u{cp:04x}").as_bytes());
            i += len;
            start = i;
        } else {
            i += 1;
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parser::parse;

    fn canon(text: &str, v: Variant) -> String {
        String::from_utf8(canonical_bytes(&parse(text).unwrap(), v)).unwrap()
    }

    #[test]
    fn the_three_variants_of_the_spec_example() {
        let input =
            r#"{"b":1,"a":[3,1],"10":true,"9":null,"__proto__":{"x":1.50},"｡":0,"😀":2,"é":"x"}"#;
        assert_eq!(
            canon(input, Variant::C1),
            r#"{"9":null,"10":true,"a":[3,1],"b":1,"é":"x","😀":2,"｡":0}"#
        );
        assert_eq!(
            canon(input, Variant::C2),
            r#"{"9":null,"10":true,"__proto__":{"x":1.5},"a":[3,1],"b":1,"é":"x","｡":0,"😀":2}"#
        );
        assert_eq!(
            canon(input, Variant::C3),
            r#"{"10":true,"9":null,"__proto__":{"x":1.5},"a":[3,1],"b":1,"é":"x","｡":0,"😀":2}"#
        );
    }

    #[test]
    fn index_like_keys() {
        for k in ["0", "7", "4294967294"] {
            assert!(is_index_like(k.as_bytes()), "{k}");
        }
        for k in ["-1", "01", "4294967295", "1.5", "1e3", " 7", "", "00", "+7"] {
            assert!(!is_index_like(k.as_bytes()), "{k}");
        }
    }

    #[test]
    fn escaping_follows_json_stringify() {
        let s = canon(
            r#"["\"\\\/\b\f\n\r\t\u0000\u001f\u007f\u2028\u000b","\ud800x","\uDBFF"]"#,
            Variant::C1,
        );
        assert_eq!(
            s,
            "[\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\u{7f}\u{2028}\\u000b\",\"\\ud800x\",\"\\udbff\"]"
        );
    }

    #[test]
    fn duplicates_resolve_last_wins_and_exclusions_apply_at_top_level_only() {
        let v = parse(r#"{"a":1,"signature":{"signature":1},"a":2,"x":{"signature":3}}"#).unwrap();
        let s =
            String::from_utf8(canonical_bytes_without(&v, CHAIN_EXCLUDED, Variant::C1)).unwrap();
        assert_eq!(s, r#"{"a":2,"x":{"signature":3}}"#);
    }

    #[test]
    fn a_digest_equals_exactly_the_hex_it_writes() {
        let d = Sha256Digest::of(b"abc");
        let hex = d.to_string();
        assert_eq!(
            hex,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Sha256Digest::from_hex(&hex), Some(d));
        assert!(d == hex.as_str());
        // Any other spelling of the same bytes names no record, as a string compare would.
        for other in [
            hex.to_uppercase(),
            format!("sha256:{hex}"),
            hex[1..].to_string(),
            format!("{hex}0"),
            format!("{}g", &hex[..63]),
        ] {
            assert_eq!(Sha256Digest::from_hex(&other), None, "{other}");
            assert!(d != other.as_str());
        }
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(json, format!("\"{hex}\""));
        assert_eq!(serde_json::from_str::<Sha256Digest>(&json).unwrap(), d);
        assert!(serde_json::from_str::<Sha256Digest>("\"\"").is_err());
    }
}
