//! `prev_record_hash` chains in file order (verification.md §e.1): the file's status is
//! the exact e.1 status of its records in file order — what the reference verifier and
//! the conformance manifest report. File order is one witness only: the link graph
//! ([`super::links`]) follows links across every input and decides the chain verdict.
//! The segments (runs between explicit `null` links) show where emitters' chains start.

use crate::canon::Sha256Digest;
use crate::model::{Link, Record};
use serde::{Deserialize, Serialize};

/// A fork: two records claim one predecessor, so a path continues on two branches.
pub const FORK_GLYPH: char = '⋎';

/// The five chain statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChainStatus {
    /// No link to check: vacuous, never tamper evidence.
    NotPresent,
    /// Every link present and correct, starting at a genesis record.
    Intact,
    /// Some links present and correct, some missing; no mismatch.
    Partial,
    /// Consistent, but the first record claims a predecessor not in the set.
    Orphaned,
    /// A present link does not equal the hash of the record before it.
    Broken,
}

impl ChainStatus {
    /// Every status, in order of severity.
    pub const ALL: [ChainStatus; 5] = [
        ChainStatus::NotPresent,
        ChainStatus::Intact,
        ChainStatus::Partial,
        ChainStatus::Orphaned,
        ChainStatus::Broken,
    ];
    /// Its one glyph, everywhere: `✓` intact only, `○` nothing to check (a vacuous
    /// chain), `~` incomplete (partial, orphaned), `✗` broken.
    pub fn glyph(self) -> char {
        match self {
            ChainStatus::Intact => '✓',
            ChainStatus::NotPresent => '○',
            ChainStatus::Partial | ChainStatus::Orphaned => '~',
            ChainStatus::Broken => '✗',
        }
    }

    /// The glyph of a chain that may fork: `✗` when broken, else [`FORK_GLYPH`] when a
    /// path through it forks (an intact branch is still one of two histories), else
    /// [`ChainStatus::glyph`].
    pub fn glyph_forked(self, forked: bool) -> char {
        match self {
            ChainStatus::Broken => '✗',
            _ if forked => FORK_GLYPH,
            s => s.glyph(),
        }
    }

    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            ChainStatus::NotPresent => "not-present",
            ChainStatus::Intact => "intact",
            ChainStatus::Partial => "partial",
            ChainStatus::Orphaned => "orphaned",
            ChainStatus::Broken => "broken",
        }
    }
}

/// How one record links to the record before it in its segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkState {
    /// `prev_record_hash: null`: starts a chain.
    Genesis,
    /// No `prev_record_hash` key.
    Absent,
    /// Equals the hash of the record before it.
    Linked,
    /// A present link that does not match the record before it.
    Mismatch,
    /// The first record of a segment claims a predecessor that is not there.
    Dangling,
}

impl LinkState {
    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            LinkState::Genesis => "genesis",
            LinkState::Absent => "absent",
            LinkState::Linked => "linked",
            LinkState::Mismatch => "mismatch",
            LinkState::Dangling => "dangling",
        }
    }
}

/// One run of records between explicit `null` links.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Segment {
    /// Index of its first record in the file.
    pub start: usize,
    /// Number of records.
    pub records: usize,
    pub status: ChainStatus,
    /// File index of the first mismatching link.
    pub broken_at: Option<usize>,
}

/// The chain verdict of one file, in file order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileChain {
    pub path: String,
    /// False for a file that is a single JSON record rather than a store, and for a file
    /// nothing could be read from (conformance manifest `not-checked`).
    pub evaluated: bool,
    /// The e.1 status; `not-checked` in output when not evaluated.
    #[serde(serialize_with = "status_or_not_checked")]
    pub status: Option<ChainStatus>,
    pub broken_at: Option<usize>,
    pub segments: Vec<Segment>,
}

#[allow(
    clippy::ref_option,
    clippy::trivially_copy_pass_by_ref,
    reason = "the signature serde's serialize_with calls"
)]
fn status_or_not_checked<S: serde::Serializer>(
    status: &Option<ChainStatus>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(status.map_or("not-checked", ChainStatus::name))
}

/// What e.1 reads of a record's link: absent, `null`, or claiming a predecessor (a hash
/// string, or any other value: present and mismatching).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkKind {
    Absent,
    Null,
    Present,
}

impl LinkKind {
    /// The kind of `link`.
    pub fn of(link: Link<'_>) -> LinkKind {
        match link {
            Link::Absent => LinkKind::Absent,
            Link::Null => LinkKind::Null,
            Link::Hash(_) | Link::Malformed => LinkKind::Present,
        }
    }
}

/// A record's link to the record before it in its file (`previous`: that record's
/// canonical hash; `None` for the file's first record).
pub fn link_state(link: Link<'_>, previous: Option<Sha256Digest>) -> LinkState {
    let matches = previous.is_some_and(|p| matches!(link, Link::Hash(h) if h.digest() == Some(p)));
    state_of(LinkKind::of(link), previous.is_none(), matches)
}

/// [`link_state`] from what e.1 reads: the link's kind, whether the record is its file's
/// first, whether the link names the record before it.
fn state_of(kind: LinkKind, first: bool, matches: bool) -> LinkState {
    match kind {
        LinkKind::Null => LinkState::Genesis,
        LinkKind::Absent => LinkState::Absent,
        LinkKind::Present if first => LinkState::Dangling,
        LinkKind::Present if matches => LinkState::Linked,
        LinkKind::Present => LinkState::Mismatch,
    }
}

/// The exact e.1 sequence status of `links` (each paired with whether it matches the
/// hash of the record before it). Returns the status and the index of the break.
pub fn sequence_status(links: &[(LinkKind, bool)]) -> (ChainStatus, Option<usize>) {
    let present = |kind: LinkKind| kind == LinkKind::Present;
    match links.len() {
        0 => return (ChainStatus::NotPresent, None),
        1 => {
            let status = if present(links[0].0) {
                ChainStatus::Orphaned
            } else {
                ChainStatus::NotPresent
            };
            return (status, None);
        }
        _ => {}
    }
    let (mut missing, mut linked) = (0, 0);
    for (i, &(link, matches)) in links.iter().enumerate().skip(1) {
        if !present(link) {
            missing += 1;
        } else if !matches {
            return (ChainStatus::Broken, Some(i));
        } else {
            linked += 1;
        }
    }
    let status = if linked == 0 {
        ChainStatus::NotPresent
    } else if missing > 0 {
        ChainStatus::Partial
    } else if present(links[0].0) {
        ChainStatus::Orphaned
    } else {
        ChainStatus::Intact
    };
    (status, None)
}

/// Checks the chain of one file in file order. `hashes[i]` is the chain hash of
/// `records[i]`; `is_store` is false for a file holding a single JSON object. Returns
/// the file verdict and each record's link state relative to the record before it.
pub fn check_file(
    path: &str,
    records: &[&Record],
    hashes: &[Sha256Digest],
    is_store: bool,
) -> (FileChain, Vec<LinkState>) {
    // Two bytes a record (a store's file has hundreds of thousands).
    let links: Vec<(LinkKind, bool)> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let link = r.link();
            let matches =
                i > 0 && matches!(link, Link::Hash(h) if h.digest() == Some(hashes[i - 1]));
            (LinkKind::of(link), matches)
        })
        .collect();
    let mut starts: Vec<usize> = (0..records.len())
        .filter(|&i| i == 0 || links[i].0 == LinkKind::Null)
        .collect();
    starts.push(records.len());
    let mut segments = Vec::new();
    for w in starts.windows(2) {
        let (start, end) = (w[0], w[1]);
        let (status, broken) = sequence_status(&links[start..end]);
        segments.push(Segment {
            start,
            records: end - start,
            status,
            broken_at: broken.map(|b| b + start),
        });
    }
    // A segment starts at the file's first record or at a `null` link (genesis), so a
    // link present at a segment's start is the file's first record's.
    let per_record = (links.iter().enumerate())
        .map(|(i, &(kind, matches))| state_of(kind, i == 0, matches))
        .collect();
    let evaluated = is_store && !records.is_empty();
    let (status, broken_at) = sequence_status(&links);
    (
        FileChain {
            path: path.to_string(),
            evaluated,
            status: evaluated.then_some(status),
            broken_at: broken_at.filter(|_| evaluated),
            segments,
        },
        per_record,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(links: &[(LinkKind, bool)]) -> ChainStatus {
        sequence_status(links).0
    }

    #[test]
    fn e1_statuses() {
        use LinkKind::*;
        assert_eq!(st(&[]), ChainStatus::NotPresent);
        assert_eq!(st(&[(Null, false)]), ChainStatus::NotPresent);
        assert_eq!(st(&[(Present, false)]), ChainStatus::Orphaned);
        assert_eq!(st(&[(Null, false), (Present, true)]), ChainStatus::Intact);
        assert_eq!(
            st(&[(Absent, false), (Absent, false)]),
            ChainStatus::NotPresent
        );
        assert_eq!(
            st(&[(Null, false), (Present, true), (Absent, false)]),
            ChainStatus::Partial
        );
        assert_eq!(
            st(&[(Present, false), (Present, true)]),
            ChainStatus::Orphaned
        );
        assert_eq!(
            sequence_status(&[(Null, false), (Present, true), (Present, false)]),
            (ChainStatus::Broken, Some(2))
        );
        assert_eq!(
            sequence_status(&[(Null, false), (Present, false)]),
            (ChainStatus::Broken, Some(1))
        );
    }
}
