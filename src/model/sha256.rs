//! A SHA-256 digest as its 32 bytes, and lower-case hex: the type of the chain hash `H`
//! (made by [`crate::canon`]) and of every `prev_record_hash` read.

use sha2::{Digest, Sha256};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes given to SHA-256 in this process, for `check --timings`: each thread adds what
/// it hashed in steps of `STEP` bytes (no shared counter touched per call).
static HASHED: AtomicU64 = AtomicU64::new(0);
const STEP: u64 = 1 << 16;

thread_local! {
    static NOT_YET_ADDED: Cell<u64> = const { Cell::new(0) };
}

fn count(bytes: usize) {
    NOT_YET_ADDED.with(|c| {
        let n = c.get() + bytes as u64;
        if n >= STEP {
            HASHED.fetch_add(n, Ordering::Relaxed);
            c.set(0);
        } else {
            c.set(n);
        }
    });
}

/// The bytes hashed with SHA-256 so far, every thread's (those of the other threads to
/// within 64 KiB each).
pub fn hashed() -> u64 {
    let own = NOT_YET_ADDED.with(|c| c.replace(0));
    HASHED.fetch_add(own, Ordering::Relaxed) + own
}

/// SHA-256 over bytes given piece by piece; every SHA-256 aeplens makes goes through it
/// or [`Sha256Digest::of`], so [`hashed`] counts them all.
#[derive(Clone, Default)]
pub struct Hasher(Sha256);

impl Hasher {
    /// Adds bytes.
    pub fn update(&mut self, bytes: impl AsRef<[u8]>) {
        let bytes = bytes.as_ref();
        count(bytes.len());
        self.0.update(bytes);
    }

    /// The digest of everything added.
    pub fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// A SHA-256 digest kept as its 32 bytes (a store's records hold one each) and written
/// — shown, serialised, compared with a `prev_record_hash` — as 64 lower-case hex digits.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sha256Digest(pub [u8; 32]);

impl Sha256Digest {
    /// The SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Sha256Digest {
        count(bytes.len());
        Sha256Digest(Sha256::digest(bytes).into())
    }

    /// The digest `text` spells, when it is exactly 64 lower-case hex digits: the one
    /// spelling [`hex`] writes, so a text equals a digest's hex exactly when this gives it.
    pub fn from_hex(text: &str) -> Option<Sha256Digest> {
        let digit = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let text = text.as_bytes();
        if text.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (byte, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
            *byte = digit(pair[0])? << 4 | digit(pair[1])?;
        }
        Some(Sha256Digest(out))
    }
}

impl std::fmt::Display for Sha256Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

impl std::fmt::Debug for Sha256Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl PartialEq<str> for Sha256Digest {
    fn eq(&self, text: &str) -> bool {
        Sha256Digest::from_hex(text) == Some(*self)
    }
}

impl PartialEq<&str> for Sha256Digest {
    fn eq(&self, text: &&str) -> bool {
        self == *text
    }
}

impl serde::Serialize for Sha256Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Sha256Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Sha256Digest::from_hex(&text)
            .ok_or_else(|| serde::de::Error::custom("not 64 lower-case hex digits"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_given_to_sha256_is_counted() {
        let before = hashed();
        let mut h = Hasher::default();
        h.update(vec![7u8; 100_000]);
        h.update(b"abc");
        let piecewise = h.finish();
        assert_eq!(
            Sha256Digest::of(&[&vec![7u8; 100_000][..], b"abc"].concat()).0,
            piecewise
        );
        // Both: 100,003 bytes each (other threads' tests may add more).
        let after = hashed();
        assert!(after - before >= 200_006, "{}", after - before);
    }
}
