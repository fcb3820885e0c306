//! The evidence index: each input file's per-record verdicts, kept in
//! `$XDG_CACHE_HOME/aeplens/index/` (never beside the evidence) so that opening the same
//! evidence again does not verify it again — and, for a store that has not changed by a
//! byte, does not parse it either.
//!
//! There is one entry per file and verifier configuration ([`Config`]: aeplens version
//! and build, profile, trusted keys, lease files). A verdict in it is used only when the
//! bytes the entry was made from still lead the file — SHA-256 compared: the same file, or
//! a store that only grew — for a record at the same line and position with the same answer to
//! "is it alone in its file?": everything a record's own verdicts depend on (they are
//! made from its JSON, its place and its company; a record on the old last line is the
//! same object, since bytes after a JSON object on its line either are whitespace or
//! make the line no record at all). So a changed key, lease file, version, build or byte
//! never reaches a cached verdict, a store that only grew is verified for its new records
//! alone, and an edited one is verified again whole. An entry that does not parse, names
//! another configuration or fails its own checksum is ignored and written anew; a
//! directory other users can write to is never read (they could plant verdicts there).
//! What needs the records together (chains, the link graph, confusable ids, timestamp
//! authorities) and the analysis are always recomputed.
//!
//! An entry is a header line (format, configuration digest, path, the file's size,
//! SHA-256 and BLAKE3, record count, the verdict lines' length, the body's checksum),
//! then the verdict lines — a line per record and, before its first use, one per distinct
//! rest of a record's verdicts (`verdicts`), read back on every core — and, for a store,
//! a line end and the store's summary: its load errors and each record's line, span and
//! facts ([`RecordFacts`](crate::model::facts::RecordFacts), binary,
//! [`crate::model::codec`]). When a
//! store's size and BLAKE3 are still the entry's, [`Index::known`] gives the store as
//! loaded from the summary: nothing is parsed, and a record's JSON is read from the file
//! (bound to its canonical hash) only when something asks for it.
//!
//! Per opening — the inputs as opened, each by path, size and SHA-256, in order — the
//! index also keeps what completing the analysis gave ([`Index::recall`],
//! [`Index::remember`]) and, in parts read one at a time ([`Index::remember_parts`],
//! [`Index::open_parts`]), each action's views for `show`, under the same configuration
//! and checks. Each is kept under its kind and the files' names ([`Index::kept_key`]),
//! not their bytes: what is kept for a store that grew replaces what its shorter self had.

mod kept;
pub use kept::Putter;
mod parts;
pub use parts::Parts;
mod summary;
mod verdicts;

use crate::canon::{hex, sha256_hex};
use crate::load::digest::Prefix;
use crate::load::spill::Spilled;
use crate::load::{Format, Input};
use crate::model::Record;
use crate::private::{private_dir, private_file, writable_by_others};
use crate::verify::encoding::decode_hex;
use crate::verify::prior::{Entry, Prior};
use crate::verify::{Keyring, Options, RecordResult};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use summary::{BODY_CHUNK, BodyReader, summarised, summary_head, summary_part};

/// The index file format's version: bumped whenever what an entry holds changes shape —
/// the verdicts, or the encoding of [`RecordFacts`](crate::model::facts::RecordFacts) in a store's summary.
const FORMAT: &str = "aeplens-index/19";

/// Everything a record's verdicts depend on besides the record itself. (Lease files do
/// not change a verdict today; they are in the key all the same, so an entry never
/// outlives the configuration it was made under.)
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Config {
    pub aeplens: String,
    /// A digest of the build's sources and lock file (`build.rs`): another build with
    /// the same version number is another configuration.
    pub build: String,
    pub profile: String,
    /// Every key a lookup can answer from ([`Keyring::fingerprints`]: keys held and the
    /// environment's key variables).
    pub keys: Vec<String>,
    /// SHA-256 of each lease file, in the order given.
    pub leases: Vec<String>,
}

impl Config {
    /// This build's configuration with these keys, options and lease-file digests.
    pub fn new(keys: &Keyring, options: &Options, leases: &[String]) -> Config {
        let keys = keys.fingerprints();
        Config {
            aeplens: env!("CARGO_PKG_VERSION").to_string(),
            build: env!("AEPLENS_BUILD").to_string(),
            profile: format!("{:?}", options.profile).to_lowercase(),
            keys,
            leases: leases.to_vec(),
        }
    }

    fn digest(&self) -> String {
        sha256_hex(&serde_json::to_vec(self).unwrap_or_default())
    }
}

/// A directory of index entries for one verifier configuration.
#[derive(Clone, Debug)]
pub struct Index {
    dir: PathBuf,
    config: String,
}

/// The header line of an entry.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    format: String,
    config: String,
    path: String,
    /// The file when the entry was made: its size and SHA-256.
    bytes: u64,
    sha256: String,
    /// Its BLAKE3, when it was taken (empty otherwise): [`Index::known`] compares it.
    blake3: String,
    /// Made from a one-document file: answers only for the same whole file.
    whole: bool,
    records: usize,
    /// Length of the verdict lines at the start of the body; after them, a line end and
    /// the store's summary ([`summarised`]; absent from entries of documents).
    lines: u64,
    /// The [`checksum`] of the body (every byte after the header line).
    body: String,
}

impl Header {
    /// True for a header this index may use for `path`.
    fn fits(&self, index: &Index, path: &str) -> bool {
        self.format == FORMAT && self.config == index.config && self.path == path
    }

    /// True for the entry of a store with its summary and BLAKE3, made from a file of
    /// `size` bytes: one [`Index::known`] can load when the file's BLAKE3 is the same.
    fn summarises(&self, size: u64) -> bool {
        !self.whole && !self.blake3.is_empty() && self.bytes == size && self.records > 0
    }
}

/// What the entry of a store says of its file, when the file's size is still the
/// entry's ([`Index::claim`]); [`Claim::holds`] says whether it is still byte for byte
/// that file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub bytes: u64,
    pub sha256: String,
    pub records: usize,
    blake3: String,
    slot: PathBuf,
}

impl Claim {
    /// True when the file at `path` is still byte for byte the one the entry was made
    /// from (its BLAKE3, on every core); marks the entry used.
    pub fn holds(&self, path: &str) -> bool {
        let same = file_blake3(path).is_some_and(|b| hex(&b) == self.blake3);
        if same {
            mark_used(&self.slot);
        }
        same
    }
}

/// The header line of what is kept for an opening ([`Index::opening_name`]).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpeningHeader {
    format: String,
    config: String,
    opening: String,
    /// The [`checksum`] of the body (every byte after the header line).
    body: String,
}

impl Index {
    /// Entries under `dir` for `config`.
    pub fn new(dir: PathBuf, config: &Config) -> Index {
        Index {
            dir,
            config: config.digest(),
        }
    }

    /// `$XDG_CACHE_HOME/aeplens/index` (`~/.cache` when unset); `None` with neither set.
    pub fn default_dir() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".cache"))
            })?;
        Some(base.join("aeplens").join("index"))
    }

    /// The directory entries are kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry for `path` lives; `None` for stdin and for a path that cannot be
    /// looked at.
    fn slot(&self, path: &str) -> Option<PathBuf> {
        if path == "-" {
            return None;
        }
        let absolute = std::fs::canonicalize(path).ok()?;
        let name =
            sha256_hex(format!("{}\n{path}\n{}", self.config, absolute.display()).as_bytes());
        Some(self.dir.join(format!("{}.json", &name[..40])))
    }

    /// The entry for `path` opened, when there is one for this configuration (never from
    /// a directory others can write to: they could plant verdicts there): its slot, its
    /// header line, and the file read up to its body.
    fn open(&self, path: &str) -> Option<(PathBuf, Header, std::io::BufReader<std::fs::File>)> {
        if writable_by_others(&self.dir) {
            return None;
        }
        let slot = self.slot(path)?;
        let mut file = std::io::BufReader::new(std::fs::File::open(&slot).ok()?);
        let mut first = Vec::new();
        (&mut file)
            .take(64 * 1024)
            .read_until(b'\n', &mut first)
            .ok()?;
        let header: Header = serde_json::from_slice(first.strip_suffix(b"\n")?).ok()?;
        header.fits(self, path).then_some((slot, header, file))
    }

    /// The size of `path` when its entry was made (read from the entry's first line
    /// alone): the leading bytes to digest as the file is read ([`Input::asked`]).
    pub fn covered(&self, path: &str) -> Option<u64> {
        self.open(path).map(|(_, header, _)| header.bytes)
    }

    /// The entry for `path` as written, when there is a sound one for this configuration:
    /// its header and its body (verdict lines, then summary bytes). Marks the entry used.
    fn read(&self, path: &str) -> Option<(Header, Vec<u8>)> {
        let (slot, header, mut file) = self.open(path)?;
        let mut body = Vec::new();
        file.read_to_end(&mut body).ok()?;
        if header.body != checksum(&[&body]) {
            return None;
        }
        mark_used(&slot);
        Some((header, body))
    }

    /// The entry for `path`, when there is a sound one for this configuration.
    pub fn lookup(&self, path: &str) -> Option<Entry> {
        let (header, body) = self.read(path)?;
        let lines = body.get(..usize::try_from(header.lines).ok()?)?;
        let records = verdicts::Reader::default()
            .block(lines)
            .filter(|v| v.len() == header.records)?;
        let made_from = Prefix {
            bytes: header.bytes,
            sha256: decode_hex(&header.sha256)?.try_into().ok()?,
        };
        let summarised =
            header.whole || (!header.blake3.is_empty() && header.lines < body.len() as u64);
        Some(Entry::new(records, made_from, header.whole, summarised))
    }

    /// A store file loaded from its entry, without reading a record, when the file is
    /// still byte for byte the one the entry was made from (its size, then its BLAKE3 —
    /// taken as it was read for the entry, and again here): every record with its place,
    /// canonical hash and facts (its JSON read from the file only when asked for, bound
    /// to that hash), the file's load errors, and each record's verdicts. In a store of
    /// more than `only_ids_over` records, each record keeps only its ids
    /// ([`Record::keep_only_ids`]).
    pub fn known(&self, path: &str, only_ids_over: usize) -> Option<(Input, Vec<RecordResult>)> {
        self.known_in_chunks(path, BODY_CHUNK, only_ids_over)
    }

    /// [`Index::known`], reading the entry `chunk` bytes at a time.
    fn known_in_chunks(
        &self,
        path: &str,
        chunk: usize,
        only_ids_over: usize,
    ) -> Option<(Input, Vec<RecordResult>)> {
        let (slot, header, file) = self.open(path)?;
        if !header.summarises(std::fs::metadata(path).ok()?.len()) {
            return None;
        }
        let path: Arc<str> = path.into();
        let mut body = BodyReader::new(file, chunk);
        let (blake3, loaded) = rayon::join(
            || file_blake3(&path),
            || {
                let results = body.verdicts(header.lines, header.records)?;
                let only_ids = header.records > only_ids_over;
                let (errors, records) = body.summary(&path, &results, only_ids)?;
                Some((results, errors, records))
            },
        );
        // Used only when the entry is whole and sound and the file is still its bytes.
        let same = blake3.is_some_and(|b| hex(&b) == header.blake3);
        let sound = same && body.checksum().is_some_and(|sum| sum == header.body);
        let Some((results, errors, records)) = loaded.filter(|_| sound) else {
            if sound {
                // Whole and as written, yet not readable here (made by a build that wrote
                // it otherwise): removed, so that it is written anew.
                let _ = std::fs::remove_file(&slot);
            }
            return None;
        };
        mark_used(&slot);
        let input = Input {
            path,
            sha256: Some(header.sha256),
            bytes: Some(header.bytes),
            format: Format::Ndjson,
            records,
            errors,
            asked: None,
            blake3,
        };
        Some((input, results))
    }

    /// What the entry of the store at `path` says of the file (size, SHA-256, records),
    /// when the file still has the size it was made from — without reading the entry's
    /// body or the file: enough to name an opening of it ([`Index::opening_of`]) and,
    /// once [`Claim::holds`], to [`Index::recall`] what that gave.
    pub fn claim(&self, path: &str) -> Option<Claim> {
        let (slot, header, _) = self.open(path)?;
        if !header.summarises(std::fs::metadata(path).ok()?.len()) {
            return None;
        }
        Some(Claim {
            bytes: header.bytes,
            sha256: header.sha256,
            records: header.records,
            blake3: header.blake3,
            slot,
        })
    }

    /// Writes the entry for `input` (read whole, with its digest) and its records'
    /// verdicts, as [`crate::verify::verify_record`] made them, in place of the file's earlier
    /// one: atomically, so a reader never sees half of one. A store's summary of its
    /// records is `summary` when it was made as they were verified (they keep only their
    /// ids since), else made from them. False when the input has no entry to write
    /// (stdin, a file not read whole).
    pub fn store(
        &self,
        input: &Input,
        results: &[RecordResult],
        summary: Option<&Spilled>,
    ) -> std::io::Result<bool> {
        let (Some(sha256), Some(bytes), Some(slot)) =
            (&input.sha256, input.bytes, self.slot(&input.path))
        else {
            return Ok(false);
        };
        let header = |lines: u64, body: String| Header {
            format: FORMAT.to_string(),
            config: self.config.clone(),
            path: input.path.to_string(),
            bytes,
            sha256: sha256.clone(),
            blake3: input.blake3.as_ref().map(|b| hex(b)).unwrap_or_default(),
            whole: input.format != Format::Ndjson,
            records: results.len(),
            lines,
            body,
        };
        let room = serde_json::to_vec(&header(u64::MAX, checksum(&[])))?.len();
        let summarised = summarised(input, results);
        // The body: the verdict lines ([`verdicts`]), then (for a store) a line end and
        // the summary; made on every core a batch at a time, so it is never all in memory.
        let body = |out: &mut Body<'_>| -> std::io::Result<u64> {
            let mut verdicts = verdicts::Writer::default();
            for batch in results.chunks(BATCH) {
                for line in verdicts.lines(batch)? {
                    if out.len > 0 {
                        out.put(b"\n")?;
                    }
                    out.put(&line)?;
                }
            }
            let lines = out.len;
            if summarised {
                out.put(b"\n")?;
                out.put(&summary_head(input))?;
                match summary {
                    Some(made) => made.copy_all(&mut |bytes| out.put(bytes))?,
                    None => {
                        for batch in input.records.chunks(BATCH) {
                            let parts: Vec<Vec<u8>> = batch.par_iter().map(summary_part).collect();
                            for part in &parts {
                                out.put(part)?;
                            }
                        }
                    }
                }
            }
            Ok(lines)
        };
        self.write(&slot, room, body, |lines, sum| {
            Ok(serde_json::to_vec(&header(lines, sum))?)
        })?;
        self.forget_unused(&slot);
        Ok(true)
    }

    /// Writes an entry to `slot`, atomically (a reader never sees half of it), readable
    /// by its owner only: `body` writes the body, then `head` makes the header line from
    /// what `body` gave and the body's [`checksum`]. The header goes first, padded with
    /// spaces to `room` bytes (enough for any header `head` makes), so the body is
    /// written as it is made.
    fn write<T>(
        &self,
        slot: &Path,
        room: usize,
        body: impl FnOnce(&mut Body<'_>) -> std::io::Result<T>,
        head: impl FnOnce(T, String) -> std::io::Result<Vec<u8>>,
    ) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        private_dir(&self.dir)?;
        let tmp = slot.with_extension(format!("tmp.{}", std::process::id()));
        let written = private_file(&tmp)
            .and_then(|mut file| {
                let mut out = std::io::BufWriter::new(&mut file);
                out.write_all(&vec![b' '; room])?;
                out.write_all(b"\n")?;
                let mut b = Body {
                    out: &mut out,
                    hasher: blake3::Hasher::new(),
                    len: 0,
                };
                let made = body(&mut b)?;
                let mut line = head(made, hex(b.hasher.finalize().as_bytes()))?;
                if line.len() > room {
                    return Err(std::io::Error::other("index entry header too long"));
                }
                line.resize(room, b' ');
                out.flush()?;
                drop(out);
                // No fsync: after a crash a torn entry fails its checksum and is rebuilt.
                file.seek(SeekFrom::Start(0))?;
                file.write_all(&line)
            })
            .and_then(|()| std::fs::rename(&tmp, slot));
        if written.is_err() {
            // Nothing half-written stays behind (a full disk, a vanished directory).
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    /// The name of an opening of `inputs`, for [`Index::recall`]: every input in order,
    /// by path, size and SHA-256 — stricter than a review's evidence set
    /// ([`crate::review::file::EvidenceSet`], the same bytes anywhere in any order), since
    /// findings name paths and follow the input order. `None` when an input was not read
    /// whole from a file (stdin, an unreadable path): such an opening is never the same
    /// twice.
    pub fn opening_name(inputs: &[Input]) -> Option<String> {
        let files: Option<Vec<_>> = inputs
            .iter()
            .map(|i| Some((&*i.path, i.bytes?, i.sha256.as_deref()?)))
            .collect();
        Index::opening_of(files?)
    }

    /// [`Index::opening_name`] of files given as (path, size, SHA-256).
    pub fn opening_of<'a>(
        files: impl IntoIterator<Item = (&'a str, u64, &'a str)>,
    ) -> Option<String> {
        let mut digest = crate::model::sha256::Hasher::default();
        for (path, bytes, sha256) in files {
            if path == "-" {
                return None;
            }
            digest.update(format!("{path}\n{bytes}\n{sha256}\n").as_bytes());
        }
        Some(hex(&digest.finish()))
    }

    /// What is kept of kind `kind` for an opening of the files named `names` (as loaded,
    /// in order) is kept under: one place per kind and set of files, whatever their bytes,
    /// so what is kept for a store that grew replaces what was kept for it before (those
    /// bytes are gone) and the index does not grow with each append.
    pub fn kept_key<'a>(kind: &str, names: impl IntoIterator<Item = &'a str>) -> String {
        let mut key = kind.to_string();
        for name in names {
            key.push('\n');
            key.push_str(name);
        }
        key
    }

    /// [`Index::kept_key`] of the files `inputs` were loaded from.
    pub fn kept_key_of(kind: &str, inputs: &[Input]) -> String {
        Index::kept_key(kind, inputs.iter().map(|i| &*i.path))
    }

    /// Where what is kept under `key` ([`Index::kept_key`]) lives.
    fn opening_slot(&self, key: &str) -> PathBuf {
        let name = sha256_hex(format!("{}\nopening\n{key}", self.config).as_bytes());
        self.dir.join(format!("opened-{}.json", &name[..40]))
    }

    /// Removes entries nobody has read or written for [`UNUSED`] (files moved or deleted,
    /// keyrings retired), so the index does not grow without end. `keep` stays.
    fn forget_unused(&self, keep: &Path) {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        for entry in dir.flatten() {
            let path = entry.path();
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > UNUSED));
            if stale && path != keep && path.extension().is_some_and(|e| e == "json") {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// The checksum an entry's header holds of its body (the `parts` one after another):
/// BLAKE3 in hex, on every core — a torn or damaged entry fails it.
fn checksum(parts: &[&[u8]]) -> String {
    let mut hasher = blake3::Hasher::new();
    for part in parts {
        hasher.update_rayon(part);
    }
    hex(hasher.finalize().as_bytes())
}

/// Records written or encoded at a time.
const BATCH: usize = 4096;

/// An entry's body as it is written: its bytes go to the file and into its checksum.
struct Body<'a> {
    out: &'a mut dyn Write,
    hasher: blake3::Hasher,
    len: u64,
}

impl Body<'_> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.len += bytes.len() as u64;
        self.out.write_all(bytes)
    }
}

/// The BLAKE3 of the file at `path`, hashed on every core. Read, not memory-mapped: a
/// store truncated while mapped would kill the process.
fn file_blake3(path: &str) -> Option<[u8; 32]> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0; 16 << 20];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Some(*hasher.finalize().as_bytes()),
            Ok(n) => {
                hasher.update_rayon(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// Marks the entry at `slot` used: kept another [`UNUSED`] from now.
fn mark_used(slot: &Path) {
    if let Ok(file) = std::fs::File::options().write(true).open(slot) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// How long an entry nobody uses is kept.
pub const UNUSED: Duration = Duration::from_secs(30 * 24 * 3600);

impl Prior for Index {
    fn dir(&self) -> &Path {
        &self.dir
    }

    fn covered(&self, path: &str) -> Option<u64> {
        Index::covered(self, path)
    }

    fn lookup(&self, path: &str) -> Option<Entry> {
        Index::lookup(self, path)
    }

    fn known(&self, path: &str, only_ids_over: usize) -> Option<(Input, Vec<RecordResult>)> {
        Index::known(self, path, only_ids_over)
    }

    fn store(
        &self,
        input: &Input,
        results: &[RecordResult],
        summary: Option<&Spilled>,
    ) -> std::io::Result<bool> {
        Index::store(self, input, results, summary)
    }

    fn summary_part(&self, record: &Record) -> Vec<u8> {
        summary_part(record)
    }
}

#[cfg(test)]
mod tests;
