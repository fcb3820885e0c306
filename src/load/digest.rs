//! A file's SHA-256, taken as its bytes go by, with the digest of as many leading bytes
//! as were asked for when the file was opened: what the evidence index compares to tell
//! a store that only grew (its old bytes still lead it) from one that changed — and,
//! when asked, its BLAKE3, which tells the index an unchanged file fast.

use crate::model::sha256::Hasher;

/// Leading bytes of a file: how many, and their SHA-256.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix {
    pub bytes: u64,
    pub sha256: [u8; 32],
}

/// The running digest of one file.
pub(crate) struct FileDigest {
    hasher: Hasher,
    bytes: u64,
    asked: Option<u64>,
    asked_prefix: Option<Prefix>,
    blake3: Option<Box<blake3::Hasher>>,
}

/// A file's digests, once it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Digests {
    pub sha256: [u8; 32],
    /// The digest of the leading bytes asked for (`None` when nothing was asked or the
    /// file is shorter).
    pub asked: Option<Prefix>,
    /// Its BLAKE3, when asked for.
    pub blake3: Option<[u8; 32]>,
}

impl FileDigest {
    /// A digest that also keeps the one of the first `asked` bytes and, with `blake3`,
    /// the file's BLAKE3.
    pub(crate) fn new(asked: Option<u64>, blake3: bool) -> FileDigest {
        FileDigest {
            hasher: Hasher::default(),
            bytes: 0,
            asked,
            asked_prefix: None,
            blake3: blake3.then(Box::default),
        }
    }

    /// The next bytes of the file.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        if let Some(b) = &mut self.blake3 {
            b.update(bytes);
        }
        let split = self
            .asked
            .filter(|&at| self.asked_prefix.is_none() && at >= self.bytes)
            .map(|at| at - self.bytes)
            .filter(|&at| at <= bytes.len() as u64);
        let Some(at) = split else {
            self.hasher.update(bytes);
            self.bytes += bytes.len() as u64;
            return;
        };
        let (head, tail) = bytes.split_at(at as usize);
        self.hasher.update(head);
        self.bytes += head.len() as u64;
        self.asked_prefix = Some(Prefix {
            bytes: self.bytes,
            sha256: self.hasher.clone().finish(),
        });
        self.hasher.update(tail);
        self.bytes += tail.len() as u64;
    }

    /// The file's digests.
    pub(crate) fn finish(self) -> Digests {
        Digests {
            sha256: self.hasher.finish(),
            asked: self.asked_prefix,
            blake3: self.blake3.map(|b| *b.finalize().as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    /// Fed in pieces of every size, the digests are those of the bytes themselves.
    #[test]
    fn the_asked_prefix_is_the_digest_of_the_leading_bytes_however_they_arrive() {
        let text = b"{\"a\":1}\r\n{\"b\":2}\n\n{\"c\":";
        let sha = |b: &[u8]| -> [u8; 32] { Sha256::digest(b).into() };
        for asked in [None, Some(0), Some(9), Some(17), Some(text.len() as u64)] {
            for piece in 1..=text.len() {
                let mut d = FileDigest::new(asked, true);
                for chunk in text.chunks(piece) {
                    d.update(chunk);
                }
                let Digests {
                    sha256: all,
                    asked: prefix,
                    blake3,
                } = d.finish();
                assert_eq!(all, sha(text));
                assert_eq!(blake3, Some(*blake3::hash(text).as_bytes()));
                let want = asked.map(|n| Prefix {
                    bytes: n,
                    sha256: sha(&text[..n as usize]),
                });
                assert_eq!(prefix, want, "{asked:?} {piece}");
            }
        }
        // More asked than there is: nothing.
        let mut d = FileDigest::new(Some(text.len() as u64 + 1), false);
        d.update(text);
        assert_eq!(d.finish().asked, None);
    }
}
