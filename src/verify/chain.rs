//! `prev_record_hash` chains in file order (verification.md §e.1). An explicit
//! `prev_record_hash: null` starts a new segment: a store holds many emitters' chains
//! back to back. Each segment gets the five-valued status; the file gets the worst.

use crate::model::{Link, Record};
use serde::Serialize;

/// The five chain statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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

/// The chain verdict of one file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileChain {
    pub path: String,
    /// False for a lone record with no link: there is no chain to check
    /// (conformance manifest `not-checked`).
    pub evaluated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ChainStatus>,
    pub broken_at: Option<usize>,
    pub segments: Vec<Segment>,
}

/// The exact e.1 sequence status of `links` (each paired with whether it matches the
/// hash of the record before it). Returns the status and the index of the break.
pub fn sequence_status(links: &[(Link<'_>, bool)]) -> (ChainStatus, Option<usize>) {
    match links.len() {
        0 => return (ChainStatus::NotPresent, None),
        1 => {
            let status = if links[0].0.is_present() {
                ChainStatus::Orphaned
            } else {
                ChainStatus::NotPresent
            };
            return (status, None);
        }
        _ => {}
    }
    let (mut missing, mut linked) = (0, 0);
    for (i, (link, matches)) in links.iter().enumerate().skip(1) {
        if !link.is_present() {
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
    } else if links[0].0.is_present() {
        ChainStatus::Orphaned
    } else {
        ChainStatus::Intact
    };
    (status, None)
}

/// Checks the chain of one file. `hashes[i]` is the chain hash of `records[i]`.
/// Returns the file verdict and, per record, its link state and its segment's status.
pub fn check_file(
    path: &str,
    records: &[&Record],
    hashes: &[&str],
) -> (FileChain, Vec<(LinkState, ChainStatus)>) {
    let links: Vec<(Link<'_>, bool)> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let link = r.link();
            let matches = i > 0 && matches!(link, Link::Hash(h) if h == hashes[i - 1]);
            (link, matches)
        })
        .collect();
    let mut starts: Vec<usize> = (0..records.len())
        .filter(|&i| i == 0 || links[i].0 == Link::Null)
        .collect();
    starts.push(records.len());
    let mut segments = Vec::new();
    let mut per_record = Vec::with_capacity(records.len());
    for w in starts.windows(2) {
        let (start, end) = (w[0], w[1]);
        let (status, broken) = sequence_status(&links[start..end]);
        segments.push(Segment {
            start,
            records: end - start,
            status,
            broken_at: broken.map(|b| b + start),
        });
        for (i, (link, matches)) in links[start..end].iter().enumerate() {
            let state = match link {
                Link::Null => LinkState::Genesis,
                Link::Absent => LinkState::Absent,
                _ if i == 0 => LinkState::Dangling,
                _ if *matches => LinkState::Linked,
                _ => LinkState::Mismatch,
            };
            per_record.push((state, status));
        }
    }
    let (status, broken_at) = combine(&segments);
    let evaluated = records.len() != 1 || links[0].0.is_present();
    (
        FileChain {
            path: path.to_string(),
            evaluated,
            status: evaluated.then_some(status),
            broken_at,
            segments,
        },
        per_record,
    )
}

/// The file verdict: broken if any segment is; else the worst of orphaned, partial and
/// intact; a lone genesis record adds nothing, but an unlinked run of several records
/// beside linked ones makes the file partial.
fn combine(segments: &[Segment]) -> (ChainStatus, Option<usize>) {
    if let Some(b) = segments.iter().find(|s| s.status == ChainStatus::Broken) {
        return (ChainStatus::Broken, b.broken_at);
    }
    let any_linked = segments.iter().any(|s| s.status != ChainStatus::NotPresent);
    let unlinked_run = segments
        .iter()
        .any(|s| s.status == ChainStatus::NotPresent && s.records > 1);
    let worst = segments
        .iter()
        .map(|s| s.status)
        .max()
        .unwrap_or(ChainStatus::NotPresent);
    if any_linked && unlinked_run && worst < ChainStatus::Partial {
        (ChainStatus::Partial, None)
    } else {
        (worst, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(links: &[(Link<'_>, bool)]) -> ChainStatus {
        sequence_status(links).0
    }

    #[test]
    fn e1_statuses() {
        use Link::*;
        assert_eq!(st(&[]), ChainStatus::NotPresent);
        assert_eq!(st(&[(Null, false)]), ChainStatus::NotPresent);
        assert_eq!(st(&[(Hash("x"), false)]), ChainStatus::Orphaned);
        assert_eq!(st(&[(Null, false), (Hash("a"), true)]), ChainStatus::Intact);
        assert_eq!(
            st(&[(Absent, false), (Absent, false)]),
            ChainStatus::NotPresent
        );
        assert_eq!(
            st(&[(Null, false), (Hash("a"), true), (Absent, false)]),
            ChainStatus::Partial
        );
        assert_eq!(
            st(&[(Hash("z"), false), (Hash("a"), true)]),
            ChainStatus::Orphaned
        );
        assert_eq!(
            sequence_status(&[(Null, false), (Hash("a"), true), (Hash("b"), false)]),
            (ChainStatus::Broken, Some(2))
        );
        assert_eq!(
            sequence_status(&[(Null, false), (Malformed, false)]),
            (ChainStatus::Broken, Some(1))
        );
    }
}
