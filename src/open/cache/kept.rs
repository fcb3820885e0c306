//! What is kept for an opening as one value ([`Index::remember`], [`Index::recall`]):
//! under a key naming the files ([`Index::kept_key`]), for the opening it was made for,
//! under the index's configuration.

use super::{FORMAT, Index, OpeningHeader, checksum, mark_used, writable_by_others};
use crate::canon::hex;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Seek, Write};

impl Index {
    /// The opening ([`Index::opening_name`]) what is kept under `key` was kept for, under
    /// this configuration — its header line alone is read (whether what follows is sound
    /// is known only once it is read).
    pub fn kept_for(&self, key: &str) -> Option<String> {
        /// What every header of what is kept for an opening begins with.
        #[derive(Deserialize)]
        struct Which {
            format: String,
            config: String,
            opening: String,
        }
        if writable_by_others(&self.dir) {
            return None;
        }
        let file = std::fs::File::open(self.opening_slot(key)).ok()?;
        let mut line = Vec::new();
        std::io::BufReader::new(file)
            .read_until(b'\n', &mut line)
            .ok()?;
        let which: Which = serde_json::from_slice(&line).ok()?;
        (which.format == FORMAT && which.config == self.config).then_some(which.opening)
    }

    /// True when what is kept under `key` was kept for the opening `opening`
    /// ([`Index::kept_for`]).
    pub fn keeps(&self, key: &str, opening: &str) -> bool {
        self.kept_for(key).is_some_and(|kept| kept == opening)
    }

    /// What [`Index::remember`] kept under `key` for the opening `opening`
    /// ([`Index::opening_name`]) under this configuration, when it is sound.
    pub fn recall<T: DeserializeOwned>(&self, key: &str, opening: &str) -> Option<T> {
        self.recall_read(key, opening, |body: &mut dyn std::io::BufRead| {
            serde_json::from_reader(body).ok()
        })
    }

    /// [`Index::recall`] of a value `read` reads from its body (written with
    /// [`Index::remember_written`]).
    pub fn recall_read<T>(
        &self,
        key: &str,
        opening: &str,
        read: impl FnOnce(&mut dyn std::io::BufRead) -> Option<T>,
    ) -> Option<T> {
        if writable_by_others(&self.dir) {
            return None;
        }
        let slot = self.opening_slot(key);
        let mut file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&slot).ok()?);
        let mut line = Vec::new();
        file.read_until(b'\n', &mut line).ok()?;
        let header: OpeningHeader = serde_json::from_slice(&line).ok()?;
        let fits =
            header.format == FORMAT && header.config == self.config && header.opening == opening;
        if !fits {
            return None;
        }
        // The body's checksum first, a chunk at a time; then its value, parsed as it is
        // read again (the body is never whole in memory beside its value).
        let body_at = line.len() as u64;
        let mut hasher = blake3::Hasher::new();
        std::io::copy(&mut file, &mut hasher).ok()?;
        if hex(hasher.finalize().as_bytes()) != header.body {
            return None;
        }
        let mut file = file.into_inner();
        file.seek(std::io::SeekFrom::Start(body_at)).ok()?;
        let value = read(&mut std::io::BufReader::with_capacity(1 << 20, file))?;
        mark_used(&slot);
        Some(value)
    }

    /// Keeps `value` under `key` ([`Index::kept_key`]) for the opening `opening` under this
    /// configuration, in place of what was kept there for another opening.
    pub fn remember<T: Serialize>(
        &self,
        key: &str,
        opening: &str,
        value: &T,
    ) -> std::io::Result<()> {
        // Serialised straight into the entry, never whole in memory.
        self.remember_written(key, opening, &mut |put| {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, Put(put));
            serde_json::to_writer(&mut out, value)?;
            out.flush()
        })
    }

    /// [`Index::remember`] of a value whose `body` writes a piece at a time (with the
    /// function it is given): for a value too large to be held whole.
    pub fn remember_written(
        &self,
        key: &str,
        opening: &str,
        body: &mut dyn FnMut(&mut Putter<'_>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let header = |body: String| OpeningHeader {
            format: FORMAT.to_string(),
            config: self.config.clone(),
            opening: opening.to_string(),
            body,
        };
        let room = serde_json::to_vec(&header(checksum(&[])))?.len();
        let slot = self.opening_slot(key);
        self.write(
            &slot,
            room,
            |out| body(&mut |piece| out.put(piece)),
            |(), sum| Ok(serde_json::to_vec(&header(sum))?),
        )?;
        self.forget_unused(&slot);
        Ok(())
    }
}

/// What takes a value's bytes, a piece at a time ([`Index::remember_written`]).
pub type Putter<'a> = dyn FnMut(&[u8]) -> std::io::Result<()> + 'a;

/// Bytes written to a function that takes them.
struct Put<'a>(&'a mut dyn FnMut(&[u8]) -> std::io::Result<()>);

impl Write for Put<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        (self.0)(bytes)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
