//! What is kept for an opening in parts, each read back alone ([`Index::recall_part`]):
//! for what is too large to read whole for a question about a small piece of it (each
//! action's views, [`crate::analysis::action_table`]), under a key naming the files
//! ([`Index::kept_key`]) as everything kept for an opening is.

use super::{FORMAT, Index, checksum, mark_used, writable_by_others};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Seek, SeekFrom};

/// A file of parts, its header read.
struct PartsFile {
    file: std::io::BufReader<std::fs::File>,
    /// Where its first part starts.
    start: u64,
    slot: std::path::PathBuf,
}

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
    /// there for another opening); [`Index::recall_part`] reads one.
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

    /// The header of what is kept in parts under `key`, when it fits this configuration,
    /// and the file, read up to its first part.
    fn parts_header(&self, key: &str) -> Option<(PartsHeader, PartsFile)> {
        if writable_by_others(&self.dir) {
            return None;
        }
        let slot = self.opening_slot(key);
        let mut file = std::io::BufReader::new(std::fs::File::open(&slot).ok()?);
        let mut line = Vec::new();
        file.read_until(b'\n', &mut line).ok()?;
        let header: PartsHeader = serde_json::from_slice(&line).ok()?;
        let fits = header.format == FORMAT && header.config == self.config;
        let start = line.len() as u64;
        fits.then_some((header, PartsFile { file, start, slot }))
    }

    /// Part `part` of what [`Index::remember_parts`] kept under `key` for the opening
    /// `opening` under this configuration, when that part is sound (its length and
    /// checksum); the other parts are not read.
    pub fn recall_part<T: DeserializeOwned>(
        &self,
        key: &str,
        opening: &str,
        part: usize,
    ) -> Option<T> {
        let (header, found) = self.parts_header(key)?;
        let PartsFile {
            mut file,
            start,
            slot,
        } = found;
        let (len, sum) = (header.parts.get(part)).filter(|_| header.opening == opening)?;
        let before: u64 = header.parts[..part].iter().map(|(len, _)| len).sum();
        // A damaged header never makes a read larger than the file.
        let size = file.get_ref().metadata().ok()?.len();
        if start.saturating_add(before).saturating_add(*len) > size {
            return None;
        }
        file.seek(SeekFrom::Start(start + before)).ok()?;
        let mut body = vec![0; usize::try_from(*len).ok()?];
        file.read_exact(&mut body).ok()?;
        if checksum(&[&body]) != *sum {
            return None;
        }
        mark_used(&slot);
        serde_json::from_slice(&body).ok()
    }
}
