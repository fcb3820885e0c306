//! The text members of an action's facts ([`ActionFacts`](super::facts::ActionFacts)),
//! packed in one allocation per action: a million actions' facts stay a few dozen bytes of
//! text each.

use super::codec::{Reader, Writer};
use super::vocabulary;

/// The text members of [`ActionFacts`], in the order they are packed.
pub(super) const TEXTS: usize = 13;

/// Where [`ActionFacts::arguments_digest`] is among the texts.
pub(super) const DIGEST: usize = 12;

/// In [`Texts::present`]: the arguments digest is packed (its 32 bytes, not its text).
const PACKED: u16 = 1 << 15;

/// In [`Texts::words`]: every length in the header is one character (every text is
/// shorter than 64 bytes, as nearly all are), so text `i`'s length is the header's
/// character at its rank among the present texts.
const SHORT: u16 = 1 << 15;

/// The texts kept as words of the [`vocabulary`] when they are in it: the tool name,
/// side-effect class, decision outcome, grant, approval decision and result outcome
/// (the order of [`ActionFacts`]'s accessors).
const WORD_TEXTS: u16 = 1 << 1 | 1 << 6 | 1 << 7 | 1 << 8 | 1 << 9 | 1 << 10;

/// Text members packed in one allocation: the length of each present text, then the
/// texts one after another (a million actions' facts stay a few dozen bytes each). The
/// arguments digest, when it is the usual `sha256:` and 64 lower-case hex digits, is kept
/// as its 32 bytes ([`pack`]): it is a third of an action's text, and only search reads
/// it. A text that takes few distinct values is kept as its number in the [`vocabulary`]
/// (two characters of seven bits), when it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Texts {
    /// The lengths ([`push_len`]: one character each below 64 bytes), then the texts.
    buf: Box<str>,
    /// Bit `i`: text `i` is present; [`PACKED`].
    present: u16,
    /// Bit `i`: text `i` is kept as a word ([`WORD_TEXTS`]).
    words: u16,
}

/// How [`Texts::assemble`] keeps one text.
enum Keep<'a> {
    /// Its number in the vocabulary.
    Word(u16),
    /// A digest's 32 bytes, to [`pack`].
    Packed([u8; 32]),
    /// As it is (a digest given already packed, too).
    Text(&'a str),
}

impl Keep<'_> {
    /// Its length in the buffer.
    fn len(&self) -> usize {
        match self {
            Keep::Word(_) => 2,
            Keep::Packed(_) => PACKED_LEN,
            Keep::Text(text) => text.len(),
        }
    }
}

/// Appends length `n` as ASCII characters of six bits each, low bits first, bit 6 set
/// on every character but the last: the header of [`Texts::buf`], which stays a `str`.
fn push_len(mut n: usize, out: &mut String) {
    loop {
        let low = (n & 0x3f) as u8;
        n >>= 6;
        if n == 0 {
            out.push(char::from(low));
            return;
        }
        out.push(char::from(low | 0x40));
    }
}

/// How many characters [`push_len`] writes for `n`.
fn len_chars(n: usize) -> usize {
    1 + (usize::BITS - n.leading_zeros()).saturating_sub(1) as usize / 6
}

/// The length [`push_len`] wrote at `bytes[*at..]`, moving `at` past it.
fn read_len(bytes: &[u8], at: &mut usize) -> Option<usize> {
    let mut n = 0;
    for shift in (0..usize::BITS).step_by(6) {
        let c = *bytes.get(*at)?;
        *at += 1;
        n |= usize::from(c & 0x3f) << shift;
        if c & 0x40 == 0 {
            return Some(n);
        }
    }
    None
}

/// The 32 bytes of `sha256:` and 64 lower-case hex digits (the text they pack back to).
fn packed_digest(text: &str) -> Option<[u8; 32]> {
    let hex = text.strip_prefix("sha256:")?.as_bytes();
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0; 32];
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        *o = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// A packed digest's length: 32 bytes as 37 ASCII characters of seven bits each, so the
/// texts stay one `str`.
const PACKED_LEN: usize = 37;

/// Appends `bytes` to `out` seven bits to a character ([`PACKED_LEN`] of them).
fn pack(bytes: &[u8; 32], out: &mut String) {
    let (mut acc, mut bits) = (0u32, 0);
    for &b in bytes {
        acc = acc << 8 | u32::from(b);
        bits += 8;
        while bits >= 7 {
            bits -= 7;
            out.push(char::from((acc >> bits) as u8 & 0x7f));
        }
    }
    out.push(char::from((acc << (7 - bits)) as u8 & 0x7f));
}

/// The 32 bytes [`pack`] made `text` from.
fn unpack(text: &str) -> Option<[u8; 32]> {
    if text.len() != PACKED_LEN || !text.is_ascii() {
        return None;
    }
    let (mut out, mut n) = ([0u8; 32], 0);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes() {
        acc = acc << 7 | u32::from(c);
        bits += 7;
        if bits >= 8 && n < 32 {
            bits -= 8;
            out[n] = (acc >> bits) as u8;
            n += 1;
        }
    }
    // The bits after the last byte are the zeros `pack` put there.
    (n == 32 && acc & ((1 << bits) - 1) == 0).then_some(out)
}

/// An arguments digest as its facts keep it: its text, or its packed bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgumentsDigest<'a> {
    Text(&'a str),
    /// `sha256:` and these bytes in lower-case hex.
    Sha256([u8; 32]),
}

impl ArgumentsDigest<'_> {
    /// Appends the digest's text to `out`.
    pub fn push_to(&self, out: &mut String) {
        match self {
            ArgumentsDigest::Text(t) => out.push_str(t),
            ArgumentsDigest::Sha256(bytes) => {
                out.push_str("sha256:");
                let digit = |v: u8| char::from_digit(u32::from(v), 16).unwrap_or('?');
                for b in bytes {
                    out.push(digit(b >> 4));
                    out.push(digit(b & 15));
                }
            }
        }
    }
}

impl Texts {
    pub(super) fn new(texts: [Option<&str>; TEXTS]) -> Texts {
        Texts::assemble(texts, false)
    }

    /// Packs `texts`, the arguments digest already packed when `packed`; each of
    /// [`WORD_TEXTS`] as its word's number when the vocabulary has (or takes) it.
    fn assemble(texts: [Option<&str>; TEXTS], packed: bool) -> Texts {
        let kept: [Option<Keep<'_>>; TEXTS] = std::array::from_fn(|i| {
            let text = texts[i]?;
            let word = (WORD_TEXTS & 1 << i != 0).then(|| vocabulary::number(text));
            if let Some(n) = word.flatten() {
                return Some(Keep::Word(n));
            }
            let digest = (i == DIGEST && !packed).then(|| packed_digest(text));
            Some(digest.flatten().map_or(Keep::Text(text), Keep::Packed))
        });
        // The buffer made at its length: no copy when it is boxed.
        let lens = kept.iter().flatten().map(Keep::len);
        let mut buf = String::with_capacity(lens.clone().map(|n| n + len_chars(n)).sum());
        let short = lens.clone().all(|n| n < 64);
        lens.for_each(|n| push_len(n, &mut buf));
        let (mut present, mut words) = (0, if short { SHORT } else { 0 });
        for (i, k) in kept.iter().enumerate() {
            match k {
                None => {}
                Some(Keep::Word(n)) => {
                    buf.push(char::from((n >> 7) as u8));
                    buf.push(char::from((n & 0x7f) as u8));
                    words |= 1 << i;
                }
                Some(Keep::Packed(bytes)) => {
                    pack(bytes, &mut buf);
                    present |= PACKED;
                }
                Some(Keep::Text(text)) => {
                    buf.push_str(text);
                    if i == DIGEST && packed {
                        present |= PACKED;
                    }
                }
            }
            if k.is_some() {
                present |= 1 << i;
            }
        }
        Texts {
            buf: buf.into_boxed_str(),
            present,
            words,
        }
    }

    /// The texts one after another (a word as its text) and where each ends: what the
    /// evidence index keeps.
    fn expanded(&self) -> (String, [u32; TEXTS]) {
        let mut buf = String::with_capacity(self.buf.len());
        let mut ends = [0; TEXTS];
        for (i, end) in ends.iter_mut().enumerate() {
            buf.push_str(self.kept(i).unwrap_or(""));
            // Texts past 4 GiB in one action are not a thing a store holds.
            *end = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        }
        (buf, ends)
    }

    /// Writes the texts for the evidence index ([`Texts::decode`] reads them back): a
    /// word as its text (the numbers are this process's own).
    pub(super) fn encode(&self, w: &mut Writer) {
        let (buf, ends) = self.expanded();
        w.uint(u64::from(self.present));
        w.bytes(buf.as_bytes());
        for end in ends {
            w.uint(u64::from(end));
        }
    }

    /// The texts [`Texts::encode`] wrote; `None` when the bytes are not that.
    pub(super) fn decode(r: &mut Reader<'_>) -> Option<Texts> {
        let present = r.int()?;
        let buf = r.str()?;
        let mut ends = [0u32; TEXTS];
        for end in &mut ends {
            *end = r.int()?;
        }
        Texts::from_parts(buf, ends, present)
    }

    /// Texts from the parts the index keeps, when they are sound: each text inside the
    /// buffer after the one before it, a packed digest one [`pack`] makes.
    fn from_parts(buf: &str, ends: [u32; TEXTS], present: u16) -> Option<Texts> {
        let mut parts = [None; TEXTS];
        let mut start = 0;
        for (i, (part, &end)) in parts.iter_mut().zip(&ends).enumerate() {
            let text = buf.get(start..end as usize)?;
            start = end as usize;
            *part = (present & 1 << i != 0).then_some(text);
        }
        let packed = present & PACKED != 0;
        if packed && parts[DIGEST].and_then(unpack).is_none() {
            return None;
        }
        Some(Texts::assemble(parts, packed))
    }

    fn packed(&self) -> bool {
        self.present & PACKED != 0
    }

    /// Text `i` as kept (a word as its text, a packed digest packed), when it is present.
    fn kept(&self, i: usize) -> Option<&str> {
        if self.present & (1 << i) == 0 {
            return None;
        }
        // The header: each present text's length; text `i` starts after those before it.
        let bytes = self.buf.as_bytes();
        let texts = self.present & ((1 << TEXTS) - 1);
        let (mut at, mut start, mut len) = (0, 0, 0);
        if self.words & SHORT != 0 {
            let header = bytes.get(..texts.count_ones() as usize)?;
            let (before, from) = header.split_at((texts & ((1 << i) - 1)).count_ones() as usize);
            start = before.iter().map(|&n| usize::from(n)).sum();
            len = usize::from(*from.first()?);
            at = header.len();
        } else {
            for j in (0..TEXTS).filter(|j| texts & (1 << j) != 0) {
                let n = read_len(bytes, &mut at)?;
                if j < i {
                    start += n;
                } else if j == i {
                    len = n;
                }
            }
        }
        let part = self.buf.get(at + start..at + start + len)?;
        if self.words & (1 << i) == 0 {
            return Some(part);
        }
        match part.as_bytes() {
            &[high, low] => vocabulary::word(u16::from(high) << 7 | u16::from(low)),
            _ => None,
        }
    }

    /// Text `i`, when it is present (a packed digest is no text: [`Texts::digest`]).
    pub(super) fn get(&self, i: usize) -> Option<&str> {
        if i == DIGEST && self.packed() {
            return None;
        }
        self.kept(i)
    }

    pub(super) fn digest(&self) -> Option<ArgumentsDigest<'_>> {
        let kept = self.kept(DIGEST)?;
        if self.packed() {
            unpack(kept).map(ArgumentsDigest::Sha256)
        } else {
            Some(ArgumentsDigest::Text(kept))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed texts give back each member as stored: absent, empty, non-ASCII, long
    /// (past what two bytes address) ones alike, whatever their neighbours; an arguments
    /// digest of `sha256:` and 64 lower-case hex digits is packed and gives back its text.
    #[test]
    fn packed_texts_read_back_as_stored() {
        let long = "x".repeat(300);
        let small = "y".repeat(10);
        let huge = "é".repeat(40_000);
        let digest = format!("sha256:{}", "0123456789abcdef".repeat(4));
        let upper = digest.to_uppercase().replace("SHA256", "sha256");
        let short = &digest[..70];
        let mut cases: Vec<[Option<&str>; TEXTS]> = vec![[None; TEXTS], [Some(""); TEXTS]];
        for (big, d) in [
            (&long, "sha256:ab"),
            (&huge, &digest),
            (&long, &upper),
            (&long, short),
            (&small, &digest),
        ] {
            cases.push([
                Some("act-1"),
                None,
                Some(""),
                Some("causal-é"),
                None,
                Some(big),
                Some("read"),
                Some("deny"),
                None,
                Some("revoked"),
                Some("ok"),
                None,
                Some(d),
            ]);
        }
        for texts in cases {
            let packed = Texts::new(texts);
            for (i, t) in texts.iter().enumerate().take(DIGEST) {
                assert_eq!(packed.get(i), *t, "{i} of {texts:?}");
            }
            let digest = packed.digest().map(|d| {
                let mut text = String::new();
                d.push_to(&mut text);
                text
            });
            assert_eq!(digest.as_deref(), texts[DIGEST]);
            let is_packed = matches!(packed.digest(), Some(ArgumentsDigest::Sha256(_)));
            assert_eq!(
                is_packed,
                texts[DIGEST].is_some_and(|d| d.len() == 71 && d == d.to_lowercase())
            );
            // The word texts are kept as words (this test process never fills the
            // vocabulary), and read back through the index's encoding as they were.
            let words = (0..TEXTS).filter(|i| {
                WORD_TEXTS & 1 << i != 0
                    && texts[*i].is_some_and(|t| t.len() <= vocabulary::LONGEST)
            });
            assert_eq!(packed.words & !SHORT, words.fold(0, |w, i| w | 1 << i));
            // One header character a length when every text as stored (a word two
            // characters, a packed digest 37) is shorter than 64 bytes.
            let stored = |i: usize, t: &str| {
                if packed.words & (1 << i) != 0 {
                    2
                } else if i == DIGEST && is_packed {
                    PACKED_LEN
                } else {
                    t.len()
                }
            };
            let short = (0..TEXTS).all(|i| texts[i].is_none_or(|t| stored(i, t) < 64));
            assert_eq!(packed.words & SHORT != 0, short, "{texts:?}");
            let mut w = Writer::default();
            packed.encode(&mut w);
            let mut r = Reader::new(&w.bytes);
            assert_eq!(Texts::decode(&mut r).as_ref(), Some(&packed));
            assert!(r.is_empty());
        }
        // A packed digest that is not one `pack` makes, or a text that ends inside a
        // character, is refused.
        let packed = Texts::new(cases_digest(&digest));
        let (buf, all) = packed.expanded();
        let mut ends = all;
        ends[DIGEST] -= 1;
        assert_eq!(Texts::from_parts(&buf, ends, packed.present), None);
        let mut changed = buf.clone();
        changed.replace_range(buf.len() - 1.., "é");
        assert_eq!(Texts::from_parts(&changed, all, packed.present), None);
        let texts = Texts::new([Some("é"); TEXTS]);
        let (buf, mut ends) = texts.expanded();
        ends[0] = 1;
        assert_eq!(Texts::from_parts(&buf, ends, texts.present), None);
        // Lengths of one, two and three header characters read back.
        for n in [0, 63, 64, 4095, 4096, 80_000] {
            let mut header = String::new();
            push_len(n, &mut header);
            assert_eq!(
                header.len(),
                1 + usize::from(n >= 64) + usize::from(n >= 4096)
            );
            assert_eq!(len_chars(n), header.len());
            let mut at = 0;
            assert_eq!(read_len(header.as_bytes(), &mut at), Some(n));
            assert_eq!(at, header.len());
        }
        let bytes: [u8; 32] = std::array::from_fn(|i| (i * 37 + 255) as u8);
        let mut text = String::new();
        pack(&bytes, &mut text);
        assert_eq!((text.len(), unpack(&text)), (PACKED_LEN, Some(bytes)));
        let last = text.pop().unwrap();
        text.push(char::from(last as u8 | 1));
        assert_eq!(unpack(&text), None, "padding bits set");
    }

    fn cases_digest(digest: &str) -> [Option<&str>; TEXTS] {
        let mut texts = [Some("a"); TEXTS];
        texts[DIGEST] = Some(digest);
        texts
    }
}
