//! Signature and key encodings (verification.md §b.4): base64 in either alphabet,
//! padded or not, with non-canonical spellings flagged; hex for the Rust gateway.

use base64::Engine;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
const STANDARD_LENIENT: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
const URL_SAFE_LENIENT: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);

/// Decoded bytes plus notes on a non-canonical spelling.
#[derive(Debug, PartialEq)]
pub struct Decoded {
    pub bytes: Vec<u8>,
    /// e.g. "URL-safe alphabet", "missing padding"; empty for canonical standard base64.
    pub notes: Vec<&'static str>,
}

/// Decodes base64 under our rule: standard or URL-safe alphabet, padded or not; any other
/// character (whitespace included) is an error.
pub fn decode_base64(text: &str) -> Result<Decoded, String> {
    let url = text.contains(['-', '_']);
    if url && text.contains(['+', '/']) {
        return Err("base64 mixes the standard and URL-safe alphabets".into());
    }
    let engine = if url {
        &URL_SAFE_LENIENT
    } else {
        &STANDARD_LENIENT
    };
    let bytes = engine
        .decode(text)
        .map_err(|e| format!("not valid base64: {e}"))?;
    let mut notes = Vec::new();
    if url {
        notes.push("URL-safe base64 alphabet");
    }
    if !text.is_empty() && !text.len().is_multiple_of(4) {
        notes.push("base64 without padding");
    }
    let canonical = base64::engine::general_purpose::STANDARD.encode(&bytes);
    if canonical.trim_end_matches('=')
        != text
            .trim_end_matches('=')
            .replace('-', "+")
            .replace('_', "/")
    {
        notes.push("base64 with non-zero trailing bits");
    }
    Ok(Decoded { bytes, notes })
}

/// Standard padded base64 (what JS signers emit).
pub fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes hex of either case.
pub fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// True for exactly 128 hex digits (a Rust-gateway hex signature).
pub fn is_hex_signature(text: &str) -> bool {
    text.len() == 128 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Decodes a public key written as 64 hex digits or as base64.
pub fn decode_key(text: &str) -> Result<Vec<u8>, String> {
    if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return decode_hex(text).ok_or_else(|| "invalid hex".to_string());
    }
    decode_base64(text).map(|d| d.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_spellings() {
        let canonical = decode_base64("+/8=").unwrap();
        assert_eq!(canonical.bytes, vec![0xfb, 0xff]);
        assert!(canonical.notes.is_empty());
        let url = decode_base64("-_8").unwrap();
        assert_eq!(url.bytes, vec![0xfb, 0xff]);
        assert_eq!(
            url.notes,
            vec!["URL-safe base64 alphabet", "base64 without padding"]
        );
        assert!(
            decode_base64("+/9=")
                .unwrap()
                .notes
                .contains(&"base64 with non-zero trailing bits")
        );
        for bad in ["ab cd", "ab\ncd", "a+b-", "a*b="] {
            assert!(decode_base64(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hex() {
        assert_eq!(decode_hex("0aFF"), Some(vec![0x0a, 0xff]));
        assert_eq!(decode_hex("0g"), None);
        assert_eq!(decode_hex("abc"), None);
        assert!(is_hex_signature(&"a".repeat(128)));
        assert!(!is_hex_signature(&"a".repeat(88)));
    }
}
