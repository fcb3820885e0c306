//! The review file: a reviewer's marks, notes and last session, as versioned JSON
//! (`schema/review.schema.json`), kept apart from the evidence — by default under
//! `$XDG_DATA_HOME/aeplens/reviews/`, named after the evidence set — or wherever
//! `--review FILE` says. Written atomically (a temporary file renamed over it), the
//! previous version kept as `FILE.bak`; a broken or foreign file is reported with
//! line:column and never overwritten.

use super::marks::{Mark, Target};
use crate::load::{Corpus, LoadError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What the `format` member of every review file says.
pub const FORMAT: &str = "aeplens-review";
/// The review file's schema version.
pub const REVIEW_VERSION: &str = "1";

/// A review: what it was made on, the marks, and where the reviewer left off.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Review {
    pub format: String,
    pub schema_version: String,
    /// The aeplens version that last wrote it.
    pub aeplens_version: String,
    /// The evidence it was last saved against: the key of the set and each input.
    pub evidence: EvidenceSet,
    /// The trusted keys in use when it was last saved (SHA-256 of the public key bytes).
    pub keyring: Vec<KeyRef>,
    pub marks: Vec<Mark>,
    /// Marks taken off, newest last, each with its note and when it was removed: no note
    /// is ever lost (the explorer's undo puts the last one back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<Removed>,
    /// Filter expressions kept by name (the explorer's `:save NAME`, `:filters`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<SavedFilter>,
    /// Where the reviewer left off (absent in a review never opened in the explorer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<Session>,
}

/// A filter expression kept by name (docs/query.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedFilter {
    pub name: String,
    pub expression: String,
    /// When it was last saved (RFC 3339, UTC).
    pub saved_at: String,
}

impl Review {
    /// The saved filter whose expression is `expression`, when one is.
    pub fn filter_named(&self, expression: &str) -> Option<&SavedFilter> {
        self.filters.iter().find(|f| f.expression == expression)
    }
}

/// A mark taken off, kept in the review's history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Removed {
    pub mark: Mark,
    /// When it was removed (RFC 3339, UTC).
    pub removed_at: String,
}

/// An evidence set: its key (SHA-256 over the sorted input SHA-256s, one per line) and
/// its inputs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceSet {
    pub key: String,
    pub inputs: Vec<InputRef>,
}

/// One input file as the review saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputRef {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

/// A trusted key by id and fingerprint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyRef {
    pub key_id: String,
    pub fingerprint: String,
}

/// The explorer's view when the reviewer left: restored on reopen unless `--fresh`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// The selected action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    /// The filter text (`f`; `is:marked` with `*`), empty for none.
    #[serde(default)]
    pub filter: String,
    /// The detail tab's name (`authority`, `drift`, …).
    #[serde(default)]
    pub tab: String,
    /// The navigator list's name (`runs`, `chains`, …).
    #[serde(default)]
    pub list: String,
    /// Folded actions in the timeline.
    #[serde(default)]
    pub folded: Vec<ActionRef>,
    /// Timeline zoom (1: the whole run) and pan (a fraction of the zoomed axis).
    pub zoom: f64,
    pub pan: f64,
}

/// An action by run and id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionRef {
    pub run_id: String,
    pub action_id: String,
}

impl KeyRef {
    /// Every trusted key, fingerprinted (`sha256:` + the SHA-256 of its 32 bytes).
    pub fn all(keys: &crate::verify::Keyring) -> Vec<KeyRef> {
        keys.iter()
            .map(|(id, k)| KeyRef {
                key_id: id.to_string(),
                fingerprint: format!("sha256:{}", crate::canon::sha256_hex(k.as_bytes())),
            })
            .collect()
    }
}

impl EvidenceSet {
    /// The evidence set of a loaded corpus (unreadable inputs have no hash and are left
    /// out: they hold no evidence to mark).
    pub fn of(corpus: &Corpus) -> EvidenceSet {
        let inputs: Vec<InputRef> = corpus
            .inputs
            .iter()
            .filter_map(|i| {
                Some(InputRef {
                    path: i.path.to_string(),
                    sha256: i.sha256.clone()?,
                    bytes: i.bytes?,
                })
            })
            .collect();
        let mut hashes: Vec<&str> = inputs.iter().map(|i| i.sha256.as_str()).collect();
        hashes.sort_unstable();
        hashes.dedup();
        let mut joined = hashes.join("\n");
        joined.push('\n');
        EvidenceSet {
            key: crate::canon::sha256_hex(joined.as_bytes()),
            inputs,
        }
    }
}

impl Review {
    /// An empty review of an evidence set.
    pub fn new(evidence: EvidenceSet, keyring: Vec<KeyRef>) -> Review {
        Review {
            format: FORMAT.into(),
            schema_version: REVIEW_VERSION.into(),
            aeplens_version: env!("CARGO_PKG_VERSION").into(),
            evidence,
            keyring,
            marks: Vec::new(),
            removed: Vec::new(),
            filters: Vec::new(),
            session: None,
        }
    }

    /// Takes the mark at `i` off, into the history.
    pub fn remove(&mut self, i: usize) -> &Mark {
        let mark = self.marks.remove(i);
        self.removed.push(Removed {
            mark,
            removed_at: now(),
        });
        &self.removed[self.removed.len() - 1].mark
    }

    /// Puts the last mark taken off back (unless its target is marked again since).
    pub fn restore_last(&mut self) -> Option<&Mark> {
        let last = self.removed.last()?;
        if self.mark(&last.mark.target).is_some() {
            return None;
        }
        let removed = self.removed.pop()?;
        self.marks.push(removed.mark);
        self.marks.last()
    }

    /// The mark on a target, if any.
    pub fn mark(&self, target: &Target) -> Option<&Mark> {
        self.marks.iter().find(|m| &m.target == target)
    }

    /// The mark on a target, for changing it.
    pub fn mark_mut(&mut self, target: &Target) -> Option<&mut Mark> {
        self.marks.iter_mut().find(|m| &m.target == target)
    }

    /// Parses a review file's text; errors name `path:line:column` with the line.
    pub fn parse(text: &str, path: &str) -> Result<Review, LoadError> {
        let located = |e: &serde_json::Error| {
            let offset = crate::load::byte_offset(text, e.line(), e.column());
            let message = e.to_string();
            // serde_json appends " at line L column C": the place is shown already.
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(m, _)| m)
                .to_string();
            LoadError::located(path, text, offset, message)
        };
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| located(&e))?;
        let format = value.get("format").and_then(serde_json::Value::as_str);
        if format != Some(FORMAT) {
            return Err(LoadError::located(
                path,
                text,
                member_offset(text, "format"),
                format!(
                    "not an aeplens review file (its \"format\" is {}, expected {FORMAT:?})",
                    format.map_or("missing".to_string(), |f| format!("{f:?}"))
                ),
            ));
        }
        let version = value
            .get("schema_version")
            .and_then(serde_json::Value::as_str);
        if version != Some(REVIEW_VERSION) {
            return Err(LoadError::located(
                path,
                text,
                member_offset(text, "schema_version"),
                format!(
                    "review file schema_version {} is not one this aeplens reads ({REVIEW_VERSION:?}); \
                     a newer aeplens wrote it?",
                    version.map_or("missing".to_string(), |v| format!("{v:?}"))
                ),
            ));
        }
        serde_json::from_str(text).map_err(|e| located(&e))
    }

    /// Reads a review file: `Ok(None)` when there is none yet.
    pub fn read(path: &Path) -> Result<Option<Review>, LoadError> {
        let shown = path.display().to_string();
        match std::fs::read(path) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes)
                    .map_err(|e| LoadError::whole(&shown, format!("not UTF-8: {e}")))?;
                Review::parse(&text, &shown).map(Some)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(LoadError::whole(&shown, format!("cannot read: {e}"))),
        }
    }

    /// Writes the review atomically and privately (0600; a directory it creates 0700): a
    /// temporary file beside it, synced, then renamed over it; the version it replaces is
    /// kept as `FILE.bak`.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        use crate::private::{private_dir, private_file};
        if let Some(dir) = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty() && !d.exists())
        {
            private_dir(dir)?;
        }
        let mut text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        text.push('\n');
        let tmp = sibling(path, ".tmp");
        {
            use std::io::Write;
            let _ = std::fs::remove_file(&tmp);
            let mut f = private_file(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        if path.exists() {
            let bak = sibling(path, ".bak");
            let _ = std::fs::remove_file(&bak);
            if std::fs::hard_link(path, &bak).is_err() {
                std::fs::copy(path, &bak)?;
            }
        }
        std::fs::rename(&tmp, path)
    }
}

/// Where a review of an evidence set lives by default:
/// `$XDG_DATA_HOME/aeplens/reviews/<key>.json` (`~/.local/share` when unset).
pub fn default_path(set: &EvidenceSet) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(
        base.join("aeplens")
            .join("reviews")
            .join(format!("{}.json", set.key)),
    )
}

/// `path` with `suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// The offset of `"name"` as a member name, else 0.
fn member_offset(text: &str, name: &str) -> usize {
    text.find(&format!("\"{name}\"")).unwrap_or(0)
}

/// Now, as RFC 3339 UTC with milliseconds.
pub fn now() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_millis() as f64);
    crate::model::time::format_ms(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::marks::Verdict;

    fn sample() -> Review {
        let mut r = Review::new(
            EvidenceSet {
                key: "k".into(),
                inputs: vec![],
            },
            vec![],
        );
        r.marks.push(Mark {
            target: Target::Action {
                run_id: "run-1".into(),
                action_id: "act-003".into(),
                record_sha256: "ab".repeat(32),
            },
            verdict: Verdict::RootCause,
            note: "line one\nline two".into(),
            created_at: "2026-12-01T00:00:00.000Z".into(),
            updated_at: "2026-12-01T00:00:00.000Z".into(),
        });
        r
    }

    #[test]
    fn round_trips_and_keeps_the_previous_version_as_backup() {
        let dir = std::env::temp_dir().join(format!("aeplens-review-{}", std::process::id()));
        let path = dir.join("r.json");
        let _ = std::fs::remove_dir_all(&dir);
        let mut r = sample();
        r.write(&path).unwrap();
        assert_eq!(Review::read(&path).unwrap(), Some(r.clone()));
        assert!(!sibling(&path, ".bak").exists(), "nothing to back up yet");
        r.marks[0].verdict = Verdict::Benign;
        r.write(&path).unwrap();
        let bak = Review::read(&sibling(&path, ".bak")).unwrap().unwrap();
        assert_eq!(bak.marks[0].verdict, Verdict::RootCause);
        assert_eq!(
            Review::read(&path).unwrap().unwrap().marks[0].verdict,
            Verdict::Benign
        );
        assert!(!sibling(&path, ".tmp").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn broken_and_foreign_files_are_located() {
        let e =
            Review::parse("{\n  \"format\": \"aeplens-review\",\n  oops\n}", "r.json").unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(3)), "{e:?}");
        let e = Review::parse("{\"format\": \"something-else\"}", "r.json").unwrap_err();
        assert!(
            e.message.contains("not an aeplens review file"),
            "{}",
            e.message
        );
        assert_eq!(e.line, Some(1));
        let mut text = serde_json::to_string_pretty(&sample()).unwrap();
        text = text.replace("\"schema_version\": \"1\"", "\"schema_version\": \"9\"");
        let e = Review::parse(&text, "r.json").unwrap_err();
        assert!(e.message.contains("schema_version \"9\""), "{}", e.message);
        assert_eq!(e.line, Some(3));
        // An unknown member is refused (with its place), not dropped on the next save.
        let text = serde_json::to_string_pretty(&sample())
            .unwrap()
            .replace("\"marks\": [", "\"extra\": 1,\n  \"marks\": [");
        let e = Review::parse(&text, "r.json").unwrap_err();
        assert!(e.message.contains("unknown field `extra`"), "{}", e.message);
        assert!(e.line.is_some_and(|l| l > 1));
    }

    #[test]
    fn the_evidence_key_ignores_input_order_and_paths() {
        use crate::load::parse_input;
        let a = parse_input("a.json".into(), br#"{"run_id":"r"}"#);
        let b = parse_input("b.json".into(), br#"{"run_id":"s"}"#);
        let ab = EvidenceSet::of(&Corpus::new(vec![a, b]));
        let a = parse_input("elsewhere/a.json".into(), br#"{"run_id":"r"}"#);
        let b = parse_input("b.json".into(), br#"{"run_id":"s"}"#);
        let ba = EvidenceSet::of(&Corpus::new(vec![b, a]));
        assert_eq!(ab.key, ba.key);
        let c = parse_input("a.json".into(), br#"{"run_id":"t"}"#);
        assert_ne!(EvidenceSet::of(&Corpus::new(vec![c])).key, ab.key);
    }
}
