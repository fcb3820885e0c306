//! The stored JSON of a record, exactly as read: member order, duplicate keys, the raw
//! text of every number and lone surrogates all survive, because canonical bytes,
//! the Rust legacy signature and the raw view all need them.

use crate::model::sha256::Hasher;
use std::borrow::Cow;

/// A JSON string. Almost always valid UTF-8; a string holding a lone surrogate escape
/// (`"\ud800"`) is kept as WTF-8 bytes so canonicalisation can write it back as `\ud800`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum JStr {
    /// Valid Unicode text (short strings inline, no allocation).
    Utf8(compact_str::CompactString),
    /// WTF-8 bytes: UTF-8 plus three-byte encodings of lone surrogates.
    Wtf8(Box<[u8]>),
}

impl JStr {
    /// The text when it is valid Unicode.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JStr::Utf8(s) => Some(s),
            JStr::Wtf8(_) => None,
        }
    }

    /// The (WTF-8) bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            JStr::Utf8(s) => s.as_bytes(),
            JStr::Wtf8(b) => b,
        }
    }

    /// The text with any lone surrogate shown as U+FFFD (for display only).
    pub fn lossy(&self) -> Cow<'_, str> {
        match self {
            JStr::Utf8(s) => Cow::Borrowed(s),
            JStr::Wtf8(b) => String::from_utf8_lossy(b),
        }
    }
}

impl From<&str> for JStr {
    fn from(s: &str) -> Self {
        JStr::Utf8(compact_str::CompactString::new(s))
    }
}

/// A JSON number: the token as written and the IEEE-754 double JavaScript reads from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Num {
    /// The token exactly as it appeared in the input.
    pub raw: Box<str>,
    /// The double nearest to the token (ties to even), ±inf on overflow, as `JSON.parse`.
    pub value: f64,
}

/// A JSON object: members in stored order, duplicates included.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Obj {
    /// Members as stored. With duplicates, lookups and canonical bytes use the last one.
    pub members: Vec<(JStr, Json)>,
    /// True when some key occurs twice in `members`.
    pub has_duplicates: bool,
}

impl Obj {
    /// [`Json::equality_digest`] of this object.
    pub fn equality_digest(&self) -> [u8; 16] {
        digest_of(|h| self.feed(h))
    }

    fn feed(&self, h: &mut Hasher) {
        h.update([6]);
        h.update((self.members.len() as u64).to_le_bytes());
        for (k, v) in &self.members {
            feed_str(h, k);
            v.feed(h);
        }
    }

    /// The value of `key` (the last one when the key is repeated).
    pub fn get(&self, key: &str) -> Option<&Json> {
        let key = key.as_bytes();
        self.members
            .iter()
            .rev()
            .find(|(k, _)| same_key(k.bytes(), key))
            .map(|(_, v)| v)
    }

    /// Several fields in one pass over the members (last wins, as in [`Obj::get`]): for
    /// the small nested objects (decision, drift check, coverage) read field by field.
    /// `out[i]` receives `keys.names()[i]`.
    #[inline]
    pub fn get_many<const N: usize>(&self, keys: &KeySet) -> [Option<&Json>; N] {
        debug_assert_eq!(keys.names.len(), N);
        let mut out = [None; N];
        self.get_each(keys, &mut out);
        out
    }

    /// [`Obj::get_many`] into a slice (`out` as long as the set).
    #[inline]
    pub fn get_each<'a>(&'a self, keys: &KeySet, out: &mut [Option<&'a Json>]) {
        for (k, v) in &self.members {
            let k = k.bytes();
            // Only the names of this length are compared (usually none or one).
            let mut candidates = keys.by_len[k.len().min(LONG)];
            while candidates != 0 {
                let i = candidates.trailing_zeros() as usize;
                if same_bytes(keys.names[i].as_bytes(), k) {
                    out[i] = Some(v);
                    break;
                }
                candidates &= candidates - 1;
            }
        }
    }

    /// Members with duplicates resolved last-wins, each key once, in first-seen order.
    pub fn effective_members(&self) -> Vec<(&JStr, &Json)> {
        if !self.has_duplicates {
            return self.members.iter().map(|(k, v)| (k, v)).collect();
        }
        let mut out: Vec<(&JStr, &Json)> = Vec::with_capacity(self.members.len());
        let mut slot_of: std::collections::HashMap<&JStr, usize> =
            std::collections::HashMap::default();
        for (k, v) in &self.members {
            if let Some(&i) = slot_of.get(k) {
                out[i].1 = v;
            } else {
                slot_of.insert(k, out.len());
                out.push((k, v));
            }
        }
        out
    }
}

/// Names of this length and longer share the last length bucket of a [`KeySet`].
const LONG: usize = 32;

/// A fixed list of member names read together from one object, with the names
/// bucketed by length, so each member is compared with at most the names of its length.
#[derive(Debug)]
pub struct KeySet {
    names: &'static [&'static str],
    /// For each name length, a bit per name of that length.
    by_len: [u32; LONG + 1],
}

impl KeySet {
    /// The set of `names` (at most 32).
    pub const fn new(names: &'static [&'static str]) -> KeySet {
        assert!(names.len() <= 32, "a key set holds at most 32 names");
        let mut by_len = [0u32; LONG + 1];
        let mut i = 0;
        while i < names.len() {
            let len = names[i].len();
            by_len[if len < LONG { len } else { LONG }] |= 1 << i;
            i += 1;
        }
        KeySet { names, by_len }
    }

    /// The names, in the order [`Obj::get_many`] returns them.
    pub const fn names(&self) -> &'static [&'static str] {
        self.names
    }

    /// Where `name` is in the set.
    pub fn position(&self, name: &str) -> Option<usize> {
        let mut candidates = self.by_len[name.len().min(LONG)];
        while candidates != 0 {
            let i = candidates.trailing_zeros() as usize;
            if same_bytes(self.names[i].as_bytes(), name.as_bytes()) {
                return Some(i);
            }
            candidates &= candidates - 1;
        }
        None
    }
}

/// An object's members named in a [`KeySet`], found in one pass over the object: for
/// code that reads most of a known list of fields one at a time.
pub struct Picked<'a> {
    obj: &'a Obj,
    keys: &'static KeySet,
    values: [Option<&'a Json>; 32],
}

impl<'a> Picked<'a> {
    /// Picks the members of `obj` that `keys` names.
    pub fn of(obj: &'a Obj, keys: &'static KeySet) -> Picked<'a> {
        let mut values = [None; 32];
        obj.get_each(keys, &mut values[..keys.names.len()]);
        Picked { obj, keys, values }
    }

    /// The value of `key`, as [`Obj::get`] gives it (from the object itself for a name
    /// the set does not hold).
    pub fn get(&self, key: &str) -> Option<&'a Json> {
        match self.keys.position(key) {
            Some(i) => self.values[i],
            None => self.obj.get(key),
        }
    }
}

/// Position of `name` in `names`, at compile time (a name not listed fails the build).
pub const fn index_of(names: &[&str], name: &str) -> usize {
    let mut i = 0;
    while i < names.len() {
        let (a, b) = (names[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("name not listed")
}

/// Key equality with a cheap first test (length and first byte) before the full compare:
/// field look-ups are the analysis's innermost loop.
#[inline]
fn same_key(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.first() == b.first() && same_bytes(a, b)
}

/// Equality of two slices; keys of up to 24 bytes (nearly all) are compared in a few
/// overlapping words without a call to `memcmp`.
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word =
        |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().unwrap_or_default());
    let half =
        |s: &[u8], at: usize| u32::from_ne_bytes(s[at..at + 4].try_into().unwrap_or_default());
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        17..=24 => {
            word(a, 0) == word(b, 0) && word(a, 8) == word(b, 8) && word(a, n - 8) == word(b, n - 8)
        }
        _ => a == b,
    }
}

/// A parsed JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(Num),
    String(JStr),
    Array(Vec<Json>),
    Object(Obj),
}

impl Json {
    /// A digest two values share exactly when they are equal (`==`: members in their
    /// order, duplicates kept, numbers as written): 16 bytes of SHA-256 over a tagged,
    /// length-prefixed walk of the value. What tells two copies of an action apart
    /// without keeping either's tree.
    pub fn equality_digest(&self) -> [u8; 16] {
        digest_of(|h| self.feed(h))
    }

    fn feed(&self, h: &mut Hasher) {
        match self {
            Json::Null => h.update([0]),
            Json::Bool(b) => h.update([1, u8::from(*b)]),
            Json::Number(n) => feed_bytes(h, 2, n.raw.as_bytes()),
            Json::String(s) => feed_str(h, s),
            Json::Array(items) => {
                h.update([5]);
                h.update((items.len() as u64).to_le_bytes());
                for v in items {
                    v.feed(h);
                }
            }
            Json::Object(o) => o.feed(h),
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Obj> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The string, if this is a valid-Unicode string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => s.as_str(),
            _ => None,
        }
    }

    /// The number's double value, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(n) => Some(n.value),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Member `key` of an object (`None` for non-objects and absent keys).
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.as_object().and_then(|o| o.get(key))
    }

    /// The JSON type name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Number(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    /// A copy of an object without the top-level keys in `excluded` (other values as is).
    pub fn without(&self, excluded: &[&str]) -> Json {
        match self {
            Json::Object(o) => Json::Object(Obj {
                members: o
                    .members
                    .iter()
                    .filter(|(k, _)| !excluded.iter().any(|x| x.as_bytes() == k.bytes()))
                    .cloned()
                    .collect(),
                has_duplicates: o.has_duplicates,
            }),
            other => other.clone(),
        }
    }

    /// Converts to a `serde_json::Value` for output (lone surrogates become U+FFFD,
    /// non-finite numbers become null, duplicates resolve last-wins).
    pub fn to_serde(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            // The token's own text where serde_json holds it exactly (an integer stays
            // `42`, never `42.0`, in what is printed of it), else its double.
            Json::Number(n) => serde_json::from_str::<serde_json::Number>(&n.raw)
                .ok()
                .filter(|number| number.as_f64() == Some(n.value))
                .or_else(|| serde_json::Number::from_f64(n.value))
                .map_or(Value::Null, Value::Number),
            Json::String(s) => Value::String(s.lossy().into_owned()),
            Json::Array(a) => Value::Array(a.iter().map(Json::to_serde).collect()),
            Json::Object(o) => Value::Object(
                o.effective_members()
                    .into_iter()
                    .map(|(k, v)| (k.lossy().into_owned(), v.to_serde()))
                    .collect(),
            ),
        }
    }

    /// Builds a value from a `serde_json::Value` (used by generators and tests).
    pub fn from_serde(v: &serde_json::Value) -> Json {
        use serde_json::Value;
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => {
                let raw = n.to_string();
                let value = raw.parse().unwrap_or(f64::NAN);
                Json::Number(Num {
                    raw: raw.into(),
                    value,
                })
            }
            Value::String(s) => Json::String(s.as_str().into()),
            Value::Array(a) => Json::Array(a.iter().map(Json::from_serde).collect()),
            Value::Object(o) => Json::Object(Obj {
                members: o
                    .iter()
                    .map(|(k, v)| (k.as_str().into(), Json::from_serde(v)))
                    .collect(),
                has_duplicates: false,
            }),
        }
    }
}

/// JSON output of a stored value: member order kept, the last of repeated keys (what
/// `Obj::get` reads), integers written without a fraction, invalid UTF-16 replaced.
impl serde::Serialize for Json {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n)
                if n.value.fract() == 0.0 && n.value.abs() < 9.007_199_254_740_992e15 =>
            {
                s.serialize_i64(n.value as i64)
            }
            Json::Number(n) if n.value.is_finite() => s.serialize_f64(n.value),
            // NaN and infinities have no JSON spelling: null, as JSON.stringify writes them.
            #[allow(clippy::match_same_arms, reason = "a separate case from Null")]
            Json::Number(_) => s.serialize_unit(),
            Json::String(v) => s.serialize_str(&v.lossy()),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(o) => {
                let members = o.effective_members();
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(&*k.lossy(), v)?;
                }
                map.end()
            }
        }
    }
}

/// Serialises an optional number the way JSON writers do: integers without a fraction
/// (serde would write `1773480418600.0` for an `f64`).
pub fn opt_number<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) if x.fract() == 0.0 && x.abs() < 9.007_199_254_740_992e15 => {
            s.serialize_i64(*x as i64)
        }
        Some(x) if x.is_finite() => s.serialize_f64(*x),
        _ => s.serialize_none(),
    }
}

/// 16 bytes of the SHA-256 of what `feed` writes.
fn digest_of(feed: impl FnOnce(&mut Hasher)) -> [u8; 16] {
    let mut h = Hasher::default();
    feed(&mut h);
    let full = h.finish();
    let mut out = [0; 16];
    out.copy_from_slice(&full[..16]);
    out
}

/// A tag, the length, the bytes.
fn feed_bytes(h: &mut Hasher, tag: u8, bytes: &[u8]) {
    h.update([tag]);
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// A string, its two forms told apart.
fn feed_str(h: &mut Hasher, s: &JStr) {
    match s {
        JStr::Utf8(s) => feed_bytes(h, 3, s.as_bytes()),
        JStr::Wtf8(b) => feed_bytes(h, 4, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a schema message prints of a value is its JSON text: `42`, not `42.0`.
    #[test]
    fn numbers_reach_serde_as_their_text() {
        let json =
            crate::load::parser::parse(r#"{"a":42,"b":1.5,"c":-7,"d":1E2,"e":1e400}"#).unwrap();
        assert_eq!(
            json.to_serde().to_string(),
            r#"{"a":42,"b":1.5,"c":-7,"d":100.0,"e":null}"#
        );
    }

    #[test]
    fn same_bytes_agrees_with_slice_equality_at_every_length_and_position() {
        let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for n in 0..=base.len() {
            let a = &base[..n];
            assert!(same_bytes(a, a), "len {n}");
            for at in 0..n {
                let mut b = a.to_vec();
                b[at] ^= 0x20;
                assert!(!same_bytes(a, &b), "len {n}, differing at {at}");
            }
            if n > 0 {
                assert!(!same_bytes(a, &base[..n - 1]), "len {n} vs shorter");
            }
        }
    }

    #[test]
    fn key_sets_and_picked_members_find_each_name_last_one_winning() {
        static KEYS: KeySet = KeySet::new(&["result", "detected", "approved_arg_digest", "x"]);
        let parsed = crate::load::parser::parse(
            r#"{"detected":1,"result":"a","other":2,"result":"b","approved_args_digest":3}"#,
        )
        .unwrap();
        let obj = parsed.as_object().unwrap();
        let [result, detected, digest, x] = obj.get_many::<4>(&KEYS);
        assert_eq!(result.and_then(Json::as_str), Some("b"));
        assert_eq!(detected.and_then(Json::as_f64), Some(1.0));
        assert_eq!((digest, x), (None, None));
        // Picked: what `get` gives, for names in the set or not.
        let picked = Picked::of(obj, &KEYS);
        for key in [
            "result",
            "detected",
            "x",
            "other",
            "approved_args_digest",
            "",
        ] {
            assert_eq!(picked.get(key), obj.get(key), "{key}");
        }
        assert_eq!(KEYS.position("x"), Some(3));
        assert_eq!(KEYS.position("approved_args_digest"), None);
    }

    #[test]
    fn equality_digests_agree_exactly_when_values_are_equal() {
        let parse = |t: &str| crate::load::parser::parse(t).unwrap();
        let same = [
            (
                r#"{"a":1,"b":[true,null,"x"]}"#,
                r#"{"a":1,"b":[true,null,"x"]}"#,
            ),
            (r#"{"a":1.0}"#, r#"{"a":1.0}"#),
        ];
        let differ = [
            (r#"{"a":1,"b":2}"#, r#"{"b":2,"a":1}"#),
            (r#"{"a":1}"#, r#"{"a":1.0}"#),
            (r#"{"a":"1"}"#, r#"{"a":1}"#),
            (r#"{"a":1,"a":1}"#, r#"{"a":1}"#),
            (r#"{"a":["x","y"]}"#, r#"{"a":["xy"]}"#),
            (r#"{"ab":"c"}"#, r#"{"a":"bc"}"#),
            (r#"{"a":"\ud800"}"#, r#"{"a":"\ud801"}"#),
        ];
        for (a, b) in same.into_iter().chain(differ) {
            let (x, y) = (parse(a), parse(b));
            assert_eq!(
                x.equality_digest() == y.equality_digest(),
                x == y,
                "{a} against {b}"
            );
        }
    }
}
