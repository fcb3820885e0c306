//! A plain binary encoding for the owned summaries the evidence index keeps (record
//! facts, stored JSON values): lengths and integers as LEB128 varints, numbers as their
//! eight IEEE-754 bytes, texts as their bytes. Reading never panics: anything short,
//! malformed or out of range reads as `None`, and the index is then rebuilt.

use super::json::{JStr, Json, Num, Obj};

/// Bytes being written.
#[derive(Debug, Default)]
pub struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    /// An unsigned integer.
    pub fn uint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.bytes.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.bytes.push(v as u8);
    }

    /// A byte string, length first.
    pub fn bytes(&mut self, b: &[u8]) {
        self.uint(b.len() as u64);
        self.bytes.extend_from_slice(b);
    }

    /// A number, exactly.
    pub fn f64(&mut self, v: f64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A text that may be absent.
    pub fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.uint(0),
            Some(s) => {
                self.uint(s.len() as u64 + 1);
                self.bytes.extend_from_slice(s.as_bytes());
            }
        }
    }

    /// A number that may be absent.
    pub fn opt_f64(&mut self, v: Option<f64>) {
        self.uint(u64::from(v.is_some()));
        if let Some(v) = v {
            self.f64(v);
        }
    }

    /// A stored JSON value, exactly as parsed: member order, duplicate keys, each
    /// number's token and lone surrogates.
    pub fn json(&mut self, v: &Json) {
        match v {
            Json::Null => self.uint(0),
            Json::Bool(b) => self.uint(1 + u64::from(*b)),
            Json::Number(n) => {
                self.uint(3);
                self.bytes(n.raw.as_bytes());
                self.f64(n.value);
            }
            Json::String(s) => {
                self.uint(4);
                self.jstr(s);
            }
            Json::Array(items) => {
                self.uint(5);
                self.uint(items.len() as u64);
                for item in items {
                    self.json(item);
                }
            }
            Json::Object(o) => {
                self.uint(6);
                self.obj(o);
            }
        }
    }

    /// A stored object ([`Writer::json`]).
    pub fn obj(&mut self, o: &Obj) {
        self.uint(o.members.len() as u64);
        self.uint(u64::from(o.has_duplicates));
        for (k, v) in &o.members {
            self.jstr(k);
            self.json(v);
        }
    }

    fn jstr(&mut self, s: &JStr) {
        self.uint(u64::from(matches!(s, JStr::Wtf8(_))));
        self.bytes(s.bytes());
    }
}

/// Bytes being read back, in the order [`Writer`] wrote them.
#[derive(Debug)]
pub struct Reader<'a> {
    rest: &'a [u8],
}

/// Nesting deeper than this is not something the index wrote.
const MAX_DEPTH: usize = 512;

impl<'a> Reader<'a> {
    /// Reads `bytes` from the start.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { rest: bytes }
    }

    /// True when everything has been read.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// An unsigned integer.
    pub fn uint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.rest.split_first()?;
            self.rest = rest;
            v |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// An integer that must fit `T`.
    pub fn int<T: TryFrom<u64>>(&mut self) -> Option<T> {
        T::try_from(self.uint()?).ok()
    }

    /// A flag written as 0 or 1.
    pub fn bool(&mut self) -> Option<bool> {
        match self.uint()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    /// `n` bytes as they are.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Some(head)
    }

    /// A byte string.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.int()?;
        self.take(n)
    }

    /// A text.
    pub fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }

    /// A number.
    pub fn f64(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A text that may be absent: `Some(None)` when it is.
    pub fn opt_str(&mut self) -> Option<Option<&'a str>> {
        match self.int::<usize>()? {
            0 => Some(None),
            n => std::str::from_utf8(self.take(n - 1)?).ok().map(Some),
        }
    }

    /// A number that may be absent: `Some(None)` when it is.
    pub fn opt_f64(&mut self) -> Option<Option<f64>> {
        if self.bool()? {
            self.f64().map(Some)
        } else {
            Some(None)
        }
    }

    /// A stored JSON value ([`Writer::json`]).
    pub fn json(&mut self) -> Option<Json> {
        self.json_at(0)
    }

    /// A stored object ([`Writer::obj`]).
    pub fn obj(&mut self) -> Option<Obj> {
        self.obj_at(0)
    }

    fn json_at(&mut self, depth: usize) -> Option<Json> {
        if depth > MAX_DEPTH {
            return None;
        }
        Some(match self.uint()? {
            0 => Json::Null,
            1 => Json::Bool(false),
            2 => Json::Bool(true),
            3 => Json::Number(Num {
                raw: self.str()?.into(),
                value: self.f64()?,
            }),
            4 => Json::String(self.jstr()?),
            5 => {
                let n: usize = self.int()?;
                // Each item takes at least a byte: a count past what is left is damage.
                if n > self.rest.len() {
                    return None;
                }
                let items = (0..n)
                    .map(|_| self.json_at(depth + 1))
                    .collect::<Option<_>>()?;
                Json::Array(items)
            }
            6 => Json::Object(self.obj_at(depth + 1)?),
            _ => return None,
        })
    }

    fn obj_at(&mut self, depth: usize) -> Option<Obj> {
        let n: usize = self.int()?;
        if n > self.rest.len() {
            return None;
        }
        let has_duplicates = self.bool()?;
        let members = (0..n)
            .map(|_| Some((self.jstr()?, self.json_at(depth + 1)?)))
            .collect::<Option<_>>()?;
        Some(Obj {
            members,
            has_duplicates,
        })
    }

    fn jstr(&mut self) -> Option<JStr> {
        let wtf8 = self.bool()?;
        let bytes = self.bytes()?;
        Some(if wtf8 {
            JStr::Wtf8(bytes.into())
        } else {
            JStr::Utf8(std::str::from_utf8(bytes).ok()?.into())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parser::parse;

    /// Values read back are the values written, and no cut of the bytes panics or reads
    /// as a whole value.
    #[test]
    fn json_reads_back_exactly() {
        let text = r#"{"a":1.50,"a":[true,false,null,"\ud800x","é",1e400],"b":{"c":-0}}"#;
        let value = parse(text).unwrap();
        let mut w = Writer::default();
        w.json(&value);
        w.uint(300);
        w.opt_str(Some("x"));
        w.opt_str(None);
        w.opt_f64(Some(-2.5));
        let mut r = Reader::new(&w.bytes);
        assert_eq!(r.json().as_ref(), Some(&value));
        assert_eq!(r.uint(), Some(300));
        assert_eq!(r.opt_str(), Some(Some("x")));
        assert_eq!(r.opt_str(), Some(None));
        assert_eq!(r.opt_f64(), Some(Some(-2.5)));
        assert!(r.is_empty());
        let mut only = Writer::default();
        only.json(&value);
        for cut in 0..only.bytes.len() {
            assert_eq!(Reader::new(&only.bytes[..cut]).json(), None, "cut at {cut}");
        }
    }
}
