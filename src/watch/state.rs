//! What a watch keeps between runs (docs/watch.md §5), in `STATE/state.json`, replaced at
//! once after the alerts that depend on it are flushed: each file's identity and how far
//! it was verified, the dedupe keys issued, the infra conditions still open and how far
//! each sink got. The evidence index of the watched files is beside it (`STATE/index`).

use super::alert::Alert;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The `format` of a state file.
pub const FORMAT: &str = "aeplens-watch-state/1";

/// The state of one watched set.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    pub format: String,
    /// What the verdicts depend on (keys, TSA roots, anchors, leases, rules, profile,
    /// `--fail-on`): a state made under another is not reused.
    pub config: String,
    /// Each file verified, by `DEVICE:INODE` (a renamed file is the same file).
    pub files: BTreeMap<String, FileMark>,
    /// Every dedupe key issued (the alert log holds them too, when it is a file).
    pub issued: BTreeSet<String>,
    /// The chain hash of the last alert written (what a log on stdout continues from).
    pub last_alert: Option<String>,
    /// Infra conditions alerted and not yet cleared, by dedupe key.
    pub open_infra: BTreeMap<String, Alert>,
    /// How many lines of the alert log each sink (`exec`, `ocsf`) was given.
    pub delivered: BTreeMap<String, u64>,
}

/// How far one file was verified, and what its verified bytes end with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMark {
    /// Where it was last seen.
    pub path: String,
    /// The store it is in.
    pub store: String,
    /// Bytes verified: up to the end of the last whole line.
    pub verified: u64,
    /// Whole lines in them.
    pub lines: u64,
    /// SHA-256 of the last [`BLOCK`] bytes before `verified` (hex): an edit there, or a
    /// file cut shorter, is seen without reading it all again.
    pub last_block: String,
}

/// How many bytes at the end of a file's verified part are compared each time it changes.
pub const BLOCK: u64 = 4096;

impl State {
    /// The state in `dir` made under `config`: a fresh one when there is none, and — said
    /// in the second value — when the one there was made under another configuration or
    /// cannot be read.
    pub fn load(dir: &Path, config: &str) -> (State, Option<String>) {
        let fresh = State {
            format: FORMAT.into(),
            config: config.into(),
            ..State::default()
        };
        let path = Self::path(dir);
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (fresh, None),
            Err(e) => {
                return (
                    fresh,
                    Some(format!("state {}: {e}; starting over", path.display())),
                );
            }
        };
        match serde_json::from_slice::<State>(&text) {
            Ok(state) if state.format == FORMAT && state.config == config => (state, None),
            Ok(_) => (
                fresh,
                Some(format!(
                    "state {} was made with other keys, rules, anchors or leases: starting over",
                    path.display()
                )),
            ),
            Err(e) => (
                fresh,
                Some(format!(
                    "state {}: not readable ({e}); starting over",
                    path.display()
                )),
            ),
        }
    }

    /// Writes the state at once ([`crate::private::replace_private`]).
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        crate::private::private_dir(dir)?;
        let text = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        crate::private::replace_private(&Self::path(dir), &text)
    }

    fn path(dir: &Path) -> PathBuf {
        dir.join("state.json")
    }
}

/// The default state directory of a watched set: `$XDG_STATE_HOME/aeplens/watch/KEY`
/// (`~/.local/state` when unset), KEY naming the set of PATHs.
pub fn default_dir(paths: &[String]) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local").join("state"))
        })?;
    let mut absolute: Vec<String> = (paths.iter())
        .map(|p| {
            std::fs::canonicalize(p)
                .unwrap_or_else(|_| PathBuf::from(p))
                .display()
                .to_string()
        })
        .collect();
    absolute.sort();
    let refs: Vec<&str> = absolute.iter().map(String::as_str).collect();
    let key = super::alert::dedupe_key(&refs);
    let key = key.trim_start_matches("sha256:");
    Some(base.join("aeplens").join("watch").join(&key[..16]))
}
