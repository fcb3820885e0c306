//! The evidence index: each input file's per-record verdicts, kept in
//! `$XDG_CACHE_HOME/aeplens/index/` (never beside the evidence) so that opening the same
//! evidence again parses it but does not re-verify it.
//!
//! An entry is found by the verifier configuration ([`Config`]: aeplens version, profile,
//! trusted keys, lease files) and the file's name, size and modification time, and used
//! only when the file read now has the SHA-256 and record count the entry was made from:
//! a changed key, lease file, version or byte never reaches a cached verdict. An entry
//! that does not parse, names another configuration or fails its own checksum is
//! ignored and written anew. What needs the records together (chains, the link graph,
//! confusable ids, timestamp authorities) and the analysis are always recomputed.

use super::keys::Keyring;
use super::{Options, RecordResult};
use crate::canon::sha256_hex;
use crate::load::Input;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The index file format's version: bumped whenever what an entry holds changes shape.
const FORMAT: &str = "aeplens-index/1";

/// Everything a record's verdicts depend on besides the record itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Config {
    pub aeplens: String,
    pub profile: String,
    /// `key_id=sha256:FINGERPRINT`, sorted.
    pub keys: Vec<String>,
    /// SHA-256 of each lease file, in the order given.
    pub leases: Vec<String>,
}

impl Config {
    /// This build's configuration with these keys, options and lease-file digests.
    pub fn new(keys: &Keyring, options: &Options, leases: &[String]) -> Config {
        let mut keys: Vec<String> = keys
            .iter()
            .map(|(id, key)| format!("{id}=sha256:{}", sha256_hex(key.as_bytes())))
            .collect();
        keys.sort();
        Config {
            aeplens: env!("CARGO_PKG_VERSION").to_string(),
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
    sha256: String,
    records: usize,
    /// SHA-256 of the body (every byte after the header line).
    body: String,
}

/// One record's verdicts with the two facts the report does not print.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored<R> {
    result: R,
    signed: bool,
    key_unknown: bool,
}

/// The verdicts an entry holds for one file, found before the file is read.
#[derive(Debug)]
pub struct Entry {
    sha256: String,
    results: Vec<RecordResult>,
}

impl Entry {
    /// The verdicts, when `input` (now read) is what they were made from.
    pub fn take_for(self, input: &Input) -> Option<Vec<RecordResult>> {
        (input.sha256.as_deref() == Some(self.sha256.as_str())
            && input.records.len() == self.results.len())
        .then_some(self.results)
    }
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

    /// Where the entry for `path` as it is on disk now lives, and the name every entry
    /// for that file under this configuration starts with; `None` for stdin and for a
    /// path that cannot be looked at.
    fn slot(&self, path: &str) -> Option<(String, PathBuf)> {
        if path == "-" {
            return None;
        }
        let meta = std::fs::metadata(path).ok()?;
        let absolute = std::fs::canonicalize(path).ok()?;
        let modified = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos();
        let file =
            sha256_hex(format!("{}\n{path}\n{}", self.config, absolute.display()).as_bytes());
        let state = sha256_hex(format!("{}\n{modified}", meta.len()).as_bytes());
        let file = file[..32].to_string();
        let name = format!("{file}-{}.json", &state[..32]);
        Some((file, self.dir.join(name)))
    }

    /// The entry for `path`, when there is a sound one for this configuration.
    pub fn lookup(&self, path: &str) -> Option<Entry> {
        let bytes = std::fs::read(self.slot(path)?.1).ok()?;
        let cut = bytes.iter().position(|&b| b == b'\n')?;
        let header: Header = serde_json::from_slice(&bytes[..cut]).ok()?;
        let body = &bytes[cut + 1..];
        let sound = header.format == FORMAT
            && header.config == self.config
            && header.path == path
            && header.body == sha256_hex(body);
        if !sound {
            return None;
        }
        let stored: Vec<Stored<RecordResult>> = serde_json::from_slice(body).ok()?;
        if stored.len() != header.records {
            return None;
        }
        let results = stored
            .into_iter()
            .map(|s| {
                let mut result = s.result;
                result.signed = s.signed;
                result.authenticity.key_unknown = s.key_unknown;
                result
            })
            .collect();
        Some(Entry {
            sha256: header.sha256,
            results,
        })
    }

    /// Writes the entry for `input` (read whole, with its digest) and its verdicts, as
    /// [`super::verify_record`] made them: atomically, so a reader never sees half of one.
    /// The file's earlier entries under this configuration are removed, so the index
    /// holds one per file and configuration. False when the input has no entry to write
    /// (stdin, a file not read whole).
    pub fn store(&self, input: &Input, results: &[RecordResult]) -> std::io::Result<bool> {
        let (Some(sha256), Some((file, slot))) = (&input.sha256, self.slot(&input.path)) else {
            return Ok(false);
        };
        let stored: Vec<Stored<&RecordResult>> = results
            .iter()
            .map(|r| Stored {
                result: r,
                signed: r.signed,
                key_unknown: r.authenticity.key_unknown,
            })
            .collect();
        let body = serde_json::to_vec(&stored)?;
        let header = Header {
            format: FORMAT.to_string(),
            config: self.config.clone(),
            path: input.path.to_string(),
            sha256: sha256.clone(),
            records: results.len(),
            body: sha256_hex(&body),
        };
        let mut bytes = serde_json::to_vec(&header)?;
        bytes.push(b'\n');
        bytes.extend_from_slice(&body);
        std::fs::create_dir_all(&self.dir)?;
        let tmp = slot.with_extension(format!("tmp.{}", std::process::id()));
        std::fs::write(&tmp, &bytes)?;
        std::fs::rename(&tmp, &slot).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })?;
        for entry in std::fs::read_dir(&self.dir)?.flatten() {
            let path = entry.path();
            let earlier = path != slot
                && path.extension().is_some_and(|e| e == "json")
                && entry
                    .file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with(&file));
            if earlier {
                let _ = std::fs::remove_file(path);
            }
        }
        Ok(true)
    }
}

/// What the index did for one opening of evidence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexUse {
    /// Files whose verdicts came from the index.
    pub reused: usize,
    /// Files verified and written to the index.
    pub written: usize,
    /// Entries that could not be written, ready to print.
    pub problems: Vec<String>,
}
