//! What is kept for an opening in parts, each read back alone ([`Parts::read`]):
//! for what is too large to read whole for a question about a small piece of it (each
//! action's views, [`crate::analysis::action_table`]), under a key naming the files
//! ([`Index::kept_key`]) as everything kept for an opening is.

use super::{FORMAT, Index, checksum, mark_used, writable_by_others};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Seek, SeekFrom};

/// The header line of what is kept in parts for an opening.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PartsHeader {
    format: String,
    config: String,
    opening: String,
    /// Each part's length and [`checksum`], in order; the parts follow the header line.
    parts: Vec<(u64, String)>,
}

impl Index {
    /// Keeps `count` parts (JSON, as `parts` gives them, one after another) for the
    /// opening `opening` under this configuration, under `key` (in place of what was kept
    /// there for another opening); [`Index::open_parts`] reads them.
    pub fn remember_parts(
        &self,
        key: &str,
        opening: &str,
        count: usize,
        parts: impl Iterator<Item = std::io::Result<Vec<u8>>>,
    ) -> std::io::Result<()> {
        let header = |parts: Vec<(u64, String)>| PartsHeader {
            format: FORMAT.to_string(),
            config: self.config.clone(),
            opening: opening.to_string(),
            parts,
        };
        let widest = header(vec![(u64::MAX, checksum(&[])); count]);
        let room = serde_json::to_vec(&widest)?.len();
        let slot = self.opening_slot(key);
        let body = |out: &mut super::Body<'_>| {
            let mut sums = Vec::with_capacity(count);
            for part in parts {
                let part = part?;
                sums.push((part.len() as u64, checksum(&[&part])));
                out.put(&part)?;
            }
            if sums.len() == count {
                Ok(sums)
            } else {
                Err(std::io::Error::other("not as many parts as announced"))
            }
        };
        self.write(&slot, room, body, |sums, _| {
            Ok(serde_json::to_vec(&header(sums))?)
        })?;
        self.forget_unused(&slot);
        Ok(())
    }

    /// What [`Index::remember_parts`] kept under `key` for the opening `opening` under
    /// this configuration, its header read once: [`Parts::read`] reads one part alone.
    /// Marks it used.
    pub fn open_parts(&self, key: &str, opening: &str) -> Option<Parts> {
        if writable_by_others(&self.dir) {
            return None;
        }
        let slot = self.opening_slot(key);
        let mut file = std::io::BufReader::new(std::fs::File::open(&slot).ok()?);
        let mut line = Vec::new();
        file.read_until(b'\n', &mut line).ok()?;
        let header: PartsHeader = serde_json::from_slice(&line).ok()?;
        let fits =
            header.format == FORMAT && header.config == self.config && header.opening == opening;
        if !fits {
            return None;
        }
        mark_used(&slot);
        let mut start = line.len() as u64;
        let mut parts = Vec::with_capacity(header.parts.len());
        for (len, sum) in header.parts {
            parts.push((start, len, sum));
            start = start.saturating_add(len);
        }
        Some(Parts { slot, parts })
    }
}

/// What is kept in parts for an opening ([`Index::open_parts`]).
pub struct Parts {
    slot: std::path::PathBuf,
    /// Each part's offset in the file, length and [`checksum`].
    parts: Vec<(u64, u64, String)>,
}

impl Parts {
    /// Part `part`, when it is sound (its length and checksum); no other part is read.
    pub fn read<T: DeserializeOwned>(&self, part: usize) -> Option<T> {
        let (offset, len, sum) = self.parts.get(part)?;
        let mut file = std::fs::File::open(&self.slot).ok()?;
        // A damaged header never makes a read larger than the file.
        if offset.saturating_add(*len) > file.metadata().ok()?.len() {
            return None;
        }
        file.seek(SeekFrom::Start(*offset)).ok()?;
        let mut body = vec![0; usize::try_from(*len).ok()?];
        file.read_exact(&mut body).ok()?;
        if checksum(&[&body]) != *sum {
            return None;
        }
        serde_json::from_slice(&body).ok()
    }
}
