//! A strict JSON parser (RFC 8259) into [`Json`], keeping what a stock parser loses:
//! member order, repeated keys, number tokens and lone surrogates. Nesting is bounded
//! so hostile input cannot exhaust the stack.

use crate::model::json::{JStr, Json, Num, Obj};

/// Deepest nesting accepted (arrays and objects). Deeper input is a parse error.
pub const MAX_DEPTH: usize = 512;

/// A parse failure: what went wrong and the byte offset where it was noticed.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub message: String,
    pub offset: usize,
}

/// Parses one JSON value that must span `text` up to trailing whitespace.
pub fn parse(text: &str) -> Result<Json, ParseError> {
    let mut p = Parser::new(text);
    let value = p.value(0)?;
    p.skip_ws();
    if p.pos != p.src.len() {
        return Err(p.error("unexpected content after the JSON value"));
    }
    Ok(value)
}

/// Parses a top-level array, returning each element with the bytes it spans.
pub fn parse_array_elements(text: &str) -> Result<Vec<(std::ops::Range<usize>, Json)>, ParseError> {
    let mut p = Parser::new(text);
    p.skip_ws();
    p.expect(b'[')?;
    let mut out = Vec::new();
    p.skip_ws();
    if p.peek() == Some(b']') {
        p.pos += 1;
    } else {
        loop {
            p.skip_ws();
            let start = p.pos;
            let value = p.value(1)?;
            out.push((start..p.pos, value));
            p.skip_ws();
            match p.next() {
                Some(b',') => {}
                Some(b']') => break,
                _ => return Err(p.error_at(p.pos.saturating_sub(1), "expected ',' or ']'")),
            }
        }
    }
    p.skip_ws();
    if p.pos != p.src.len() {
        return Err(p.error("unexpected content after the JSON array"));
    }
    Ok(out)
}

struct Parser<'a> {
    /// The text being parsed (valid UTF-8, so a slice between two ASCII delimiters is
    /// valid too: strings are not validated a second time).
    text: &'a str,
    src: &'a [u8],
    pos: usize,
    /// Members of the objects being parsed, innermost last: each object takes its own
    /// from the top when it closes, in a vector of exactly its size (no growth by
    /// doubling, so a record's tree is compact and read back with fewer cache misses).
    members: Vec<(JStr, Json)>,
    /// The same for array items.
    items: Vec<Json>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            text,
            src: text.as_bytes(),
            pos: 0,
            members: Vec::new(),
            items: Vec::new(),
        }
    }

    fn error(&self, message: &str) -> ParseError {
        self.error_at(self.pos, message)
    }

    #[allow(
        clippy::unused_self,
        reason = "a method beside `error`, for call sites that read alike"
    )]
    fn error_at(&self, offset: usize, message: &str) -> ParseError {
        ParseError {
            message: message.to_string(),
            offset,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek();
        self.pos += 1;
        b
    }

    fn expect(&mut self, b: u8) -> Result<(), ParseError> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected '{}'", b as char)))
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.skip_ws();
        match self.peek() {
            None => Err(self.error("unexpected end of input")),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, ParseError> {
        if self.src[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("invalid literal"))
        }
    }

    fn check_depth(&self, depth: usize) -> Result<(), ParseError> {
        if depth > MAX_DEPTH {
            Err(self.error(&format!("nesting deeper than {MAX_DEPTH} levels")))
        } else {
            Ok(())
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.check_depth(depth)?;
        self.pos += 1;
        let start = self.items.len();
        let result = self.array_items(depth);
        let items = self.items.drain(start..).collect();
        result.map(|()| Json::Array(items))
    }

    fn array_items(&mut self, depth: usize) -> Result<(), ParseError> {
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            let item = self.value(depth)?;
            self.items.push(item);
            self.skip_ws();
            match self.next() {
                Some(b',') => {}
                Some(b']') => return Ok(()),
                None => return Err(self.error_at(self.src.len(), "unexpected end of input")),
                _ => return Err(self.error_at(self.pos - 1, "expected ',' or ']'")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.check_depth(depth)?;
        self.pos += 1;
        let start = self.members.len();
        let result = self.object_members(depth, start);
        let members = self.members.drain(start..).collect();
        result.map(|has_duplicates| {
            Json::Object(Obj {
                members,
                has_duplicates,
            })
        })
    }

    /// Parses members onto the stack above `start`; returns whether a key repeats.
    fn object_members(&mut self, depth: usize, start: usize) -> Result<bool, ParseError> {
        let mut has_duplicates = false;
        // Keys seen so far, built only for large objects so duplicate detection stays linear.
        let mut seen: Option<std::collections::HashSet<JStr>> = None;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(false);
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key"));
            }
            let key = self.string()?;
            self.skip_ws();
            self.expect(b':')?;
            let value = self.value(depth)?;
            if !has_duplicates {
                let earlier = &self.members[start..];
                has_duplicates = if earlier.len() < 16 {
                    earlier.iter().any(|(k, _)| *k == key)
                } else {
                    let set = seen
                        .get_or_insert_with(|| earlier.iter().map(|(k, _)| k.clone()).collect());
                    !set.insert(key.clone())
                };
            }
            self.members.push((key, value));
            self.skip_ws();
            match self.next() {
                Some(b',') => {}
                Some(b'}') => return Ok(has_duplicates),
                None => return Err(self.error_at(self.src.len(), "unexpected end of input")),
                _ => return Err(self.error_at(self.pos - 1, "expected ',' or '}'")),
            }
        }
    }

    fn number(&mut self) -> Result<Json, ParseError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("invalid number: digit expected after '.'"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("invalid number: digit expected in exponent"));
            }
            self.digits();
        }
        // The slice is ASCII by construction.
        let raw = self.text.get(start..self.pos).unwrap_or("0");
        // Rust's parser rounds to nearest, ties to even, and overflows to ±inf: as JS.
        let value: f64 = raw.parse().unwrap_or(f64::NAN);
        Ok(Json::Number(Num {
            raw: raw.into(),
            value,
        }))
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    fn hex4(&mut self) -> Result<u16, ParseError> {
        let end = self.pos + 4;
        let hex = self
            .src
            .get(self.pos..end)
            .ok_or_else(|| self.error("truncated \\u escape"))?;
        let mut v: u16 = 0;
        for &h in hex {
            let d = (h as char)
                .to_digit(16)
                .ok_or_else(|| self.error("invalid \\u escape"))?;
            v = v * 16 + d as u16;
        }
        self.pos = end;
        Ok(v)
    }

    fn string(&mut self) -> Result<JStr, ParseError> {
        self.pos += 1; // opening quote
        let start = self.pos;
        // Fast path: the closing quote comes before any backslash and no control byte is
        // in between (one search and one branch-free pass, both vectorised).
        let rest = &self.src[start..];
        if let Some(end) = memchr::memchr2(b'"', b'\\', rest)
            && rest[end] == b'"'
            && rest[..end]
                .iter()
                .fold(0, |any, &b| any | u8::from(b < 0x20))
                == 0
        {
            let s = self.utf8(start, start + end)?;
            self.pos = start + end + 1;
            return Ok(JStr::Utf8(compact_str::CompactString::new(s)));
        }
        // Otherwise byte by byte (escapes, and errors at their place).
        while let Some(b) = self.peek() {
            match b {
                b'"' => {
                    let s = self.utf8(start, self.pos)?;
                    self.pos += 1;
                    return Ok(JStr::Utf8(compact_str::CompactString::new(s)));
                }
                b'\\' => break,
                0x00..=0x1f => return Err(self.error("control character inside a string")),
                _ => self.pos += 1,
            }
        }
        let mut buf: Vec<u8> = self.src[start..self.pos].to_vec();
        let mut lone = false;
        loop {
            match self.next() {
                None => return Err(self.error_at(self.src.len(), "unterminated string")),
                Some(b'"') => break,
                Some(b'\\') => {
                    let esc = self.next();
                    match esc {
                        Some(b'"') => buf.push(b'"'),
                        Some(b'\\') => buf.push(b'\\'),
                        Some(b'/') => buf.push(b'/'),
                        Some(b'b') => buf.push(0x08),
                        Some(b'f') => buf.push(0x0c),
                        Some(b'n') => buf.push(b'\n'),
                        Some(b'r') => buf.push(b'\r'),
                        Some(b't') => buf.push(b'\t'),
                        Some(b'u') => {
                            let unit = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&unit)
                                && self.src[self.pos..].starts_with(b"\\u")
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let low = self.hex4()?;
                                if (0xDC00..0xE000).contains(&low) {
                                    0x10000
                                        + ((u32::from(unit) - 0xD800) << 10)
                                        + (u32::from(low) - 0xDC00)
                                } else {
                                    self.pos = save;
                                    u32::from(unit)
                                }
                            } else {
                                u32::from(unit)
                            };
                            if (0xD800..0xE000).contains(&cp) {
                                lone = true;
                            }
                            push_wtf8(&mut buf, cp);
                        }
                        _ => return Err(self.error_at(self.pos - 1, "invalid escape")),
                    }
                }
                Some(0x00..=0x1f) => {
                    return Err(self.error_at(self.pos - 1, "control character inside a string"));
                }
                Some(b) => buf.push(b),
            }
        }
        if lone {
            return Ok(JStr::Wtf8(buf.into()));
        }
        match String::from_utf8(buf) {
            Ok(s) => Ok(JStr::Utf8(compact_str::CompactString::from(s))),
            Err(_) => Err(self.error_at(start, "invalid UTF-8 inside a string")),
        }
    }

    /// The text between `start` and `end`, both next to an ASCII quote.
    fn utf8(&self, start: usize, end: usize) -> Result<&'a str, ParseError> {
        self.text
            .get(start..end)
            .ok_or_else(|| self.error_at(start, "invalid UTF-8 inside a string"))
    }
}

/// Appends a code point (surrogates included) in WTF-8.
fn push_wtf8(buf: &mut Vec<u8>, cp: u32) {
    match cp {
        0..=0x7f => buf.push(cp as u8),
        0x80..=0x7ff => {
            buf.push(0xc0 | (cp >> 6) as u8);
            buf.push(0x80 | (cp & 0x3f) as u8);
        }
        0x800..=0xffff => {
            buf.push(0xe0 | (cp >> 12) as u8);
            buf.push(0x80 | ((cp >> 6) & 0x3f) as u8);
            buf.push(0x80 | (cp & 0x3f) as u8);
        }
        _ => {
            buf.push(0xf0 | (cp >> 18) as u8);
            buf.push(0x80 | ((cp >> 12) & 0x3f) as u8);
            buf.push(0x80 | ((cp >> 6) & 0x3f) as u8);
            buf.push(0x80 | (cp & 0x3f) as u8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_duplicates_and_number_tokens() {
        let v = parse(r#"{"b":1.50,"a":[1e400,-0],"b":2}"#).unwrap();
        let o = v.as_object().unwrap();
        assert!(o.has_duplicates);
        assert_eq!(o.members[0].0.as_str(), Some("b"));
        assert_eq!(o.get("b").unwrap().as_f64(), Some(2.0));
        let a = o.get("a").unwrap().as_array().unwrap();
        assert!(a[0].as_f64().unwrap().is_infinite());
        match &a[1] {
            Json::Number(n) => assert_eq!(&*n.raw, "-0"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lone_surrogate_survives_and_pairs_combine() {
        let v = parse(r#"["\ud800","\ud83d\ude00","\u0073"]"#).unwrap();
        let a = v.as_array().unwrap();
        assert!(matches!(&a[0], Json::String(JStr::Wtf8(_))));
        assert_eq!(a[1].as_str(), Some("😀"));
        assert_eq!(a[2].as_str(), Some("s"));
    }

    #[test]
    fn rejects_malformed_input() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "-",
            "\"\u{1}\"",
            "tru",
            "{} x",
            "[1 2]",
            "\"\\x\"",
            "{1:2}",
        ] {
            assert!(parse(bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn strings_with_and_without_escapes_read_the_same_and_fail_where_they_fail() {
        let v = parse(r#"["plain é","a\"b","c\\","\u00e9",""]"#).unwrap();
        let texts: Vec<_> = v.as_array().unwrap().iter().map(|s| s.as_str()).collect();
        assert_eq!(
            texts,
            [
                Some("plain é"),
                Some("a\"b"),
                Some("c\\"),
                Some("é"),
                Some("")
            ]
        );
        // A control byte before the closing quote, with or without an escape before it:
        // the error is at the control byte.
        for (text, at) in [("[\"ab\u{1}c\"]", 4), ("[\"a\\nb\u{1f}\"]", 6)] {
            let e = parse(text).unwrap_err();
            assert_eq!(
                (e.offset, e.message.as_str()),
                (at, "control character inside a string")
            );
        }
        assert_eq!(parse("\"abc").unwrap_err().message, "unterminated string");
    }

    #[test]
    fn depth_is_bounded() {
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).unwrap_err().message.contains("nesting"));
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
        let very_deep = "[".repeat(100_000);
        assert!(parse(&very_deep).is_err());
    }

    #[test]
    fn array_elements_report_their_bytes() {
        let els = parse_array_elements("[\n {\"a\":1},\n {\"b\":2}\n]").unwrap();
        assert_eq!(els.len(), 2);
        assert_eq!(els[0].0, 3..10);
        assert_eq!(els[1].0, 13..20);
    }
}
