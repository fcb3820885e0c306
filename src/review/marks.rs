//! Marks: a reviewer's verdict (and note) on an action, a record or a finding, kept by
//! what identifies it in the evidence — never by position — and resolved against the
//! evidence each time it is opened, saying when the evidence changed since.

use crate::analysis::Analysis;
use crate::analysis::graph::NodeId;
use crate::load::Corpus;
use crate::model::finding::Finding;
use serde::{Deserialize, Serialize};

/// What a reviewer concluded about a marked thing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Suspicious,
    RootCause,
    FollowUp,
    Benign,
}

impl Verdict {
    /// Every verdict, in the order `M` cycles through them (a new mark is `suspicious`).
    pub const ALL: [Verdict; 4] = [
        Verdict::Suspicious,
        Verdict::RootCause,
        Verdict::FollowUp,
        Verdict::Benign,
    ];

    /// The verdict after this one when cycling.
    pub fn next(self) -> Verdict {
        let i = Verdict::ALL.iter().position(|v| *v == self).unwrap_or(0);
        Verdict::ALL[(i + 1) % Verdict::ALL.len()]
    }

    /// Reports list marks by this: root causes first, benign last.
    pub fn weight(self) -> u8 {
        match self {
            Verdict::RootCause => 0,
            Verdict::Suspicious => 1,
            Verdict::FollowUp => 2,
            Verdict::Benign => 3,
        }
    }

    /// The name used in the review file and reports (`root-cause`).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Suspicious => "suspicious",
            Verdict::RootCause => "root-cause",
            Verdict::FollowUp => "follow-up",
            Verdict::Benign => "benign",
        }
    }

    /// A one-character mark for lists (ASCII-safe fallbacks are the theme's business).
    pub fn glyph(self) -> char {
        match self {
            Verdict::Suspicious => '?',
            Verdict::RootCause => '!',
            Verdict::FollowUp => '~',
            Verdict::Benign => '-',
        }
    }
}

/// What a mark points at, by what identifies it in the evidence.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Target {
    /// An action: its run and id, and the canonical SHA-256 (chain form, `H`) of the
    /// record it was seen in.
    Action {
        run_id: String,
        action_id: String,
        record_sha256: String,
    },
    /// A whole record, by its canonical SHA-256; `seen_at` (`file:line`) is a hint for
    /// people, never used to find it.
    Record {
        record_sha256: String,
        seen_at: String,
    },
    /// A finding, by its fingerprint; `id` names the rule for people.
    Finding {
        finding_id: String,
        fingerprint: String,
    },
}

/// One mark in a review.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mark {
    pub target: Target,
    pub verdict: Verdict,
    /// The reviewer's note (may span lines; empty: none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// When the mark was made and last changed (RFC 3339, UTC).
    pub created_at: String,
    pub updated_at: String,
}

impl Mark {
    /// A new mark, made now, with no note.
    pub fn new(target: Target, verdict: Verdict) -> Mark {
        let at = super::file::now();
        Mark {
            target,
            verdict,
            note: String::new(),
            created_at: at.clone(),
            updated_at: at,
        }
    }
}

/// Where a mark's target is in the opened evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The action, in the record it was marked in.
    Action(NodeId),
    /// The action is there, but its record's canonical bytes differ from when it was
    /// marked: shown on the action with a warning, never silently reattached.
    ActionChanged(NodeId),
    /// The record (flat index).
    Record(usize),
    /// The finding (index into the findings).
    Finding(usize),
    /// Nothing in the evidence matches any more.
    Gone,
    /// A finding mark while the evidence is still being verified: findings are not all
    /// known yet, so nothing is said of it.
    Pending,
}

impl Place {
    /// The action the mark is shown on, if any.
    pub fn node(self) -> Option<NodeId> {
        match self {
            Place::Action(n) | Place::ActionChanged(n) => Some(n),
            _ => None,
        }
    }

    /// Why the mark no longer matches the evidence exactly, for people.
    pub fn warning(self) -> Option<&'static str> {
        match self {
            Place::ActionChanged(_) => {
                Some("evidence changed since marked: the record's canonical SHA-256 differs")
            }
            Place::Gone => Some("not in this evidence: nothing matches what was marked"),
            _ => None,
        }
    }

    /// The status name used in reports (`current`, `changed`, `gone`, `pending`).
    pub fn status(self) -> &'static str {
        match self {
            Place::ActionChanged(_) => "changed",
            Place::Gone => "gone",
            Place::Pending => "pending",
            _ => "current",
        }
    }
}

impl Target {
    /// Finds the target in opened evidence.
    pub fn place(&self, corpus: &Corpus, analysis: &Analysis, findings: &[Finding]) -> Place {
        // A mark's record hash, as the analysis keeps hashes (none for a spelling aeplens
        // never writes: it names no record).
        let marked = |hex: &str| crate::canon::Sha256Digest::from_hex(hex);
        match self {
            Target::Action {
                run_id,
                action_id,
                record_sha256,
            } => {
                // Any record holding a copy of the action that still hashes the same is
                // the one it was marked in; of several emitter chains holding the id,
                // only that tells which was marked.
                let hash = marked(record_sha256);
                let same = |node: &NodeId| {
                    copies_of(corpus, analysis, *node)
                        .any(|r| hash.is_some() && analysis.hashes.get(r) == hash.as_ref())
                };
                let nodes = analysis.graph.find_in_run(corpus, run_id, action_id);
                match (nodes.iter().copied().find(same), nodes.as_slice()) {
                    (Some(node), _) => Place::Action(node),
                    (None, [node]) => Place::ActionChanged(*node),
                    (None, _) => Place::Gone,
                }
            }
            Target::Record { record_sha256, .. } => marked(record_sha256)
                .and_then(|hash| analysis.hashes.iter().position(|h| *h == hash))
                .map_or(Place::Gone, Place::Record),
            Target::Finding { fingerprint, .. } => findings
                .iter()
                .position(|f| &f.fingerprint == fingerprint)
                .map_or(Place::Gone, Place::Finding),
        }
    }

    /// The target for an action, seen in the record holding its first copy.
    pub fn action(corpus: &Corpus, analysis: &Analysis, node: NodeId) -> Option<Target> {
        let g = &analysis.graph;
        let (_, action) = g.action(corpus, node)?;
        let n = &g.nodes[node as usize];
        Some(Target::Action {
            run_id: g.runs[n.run as usize].id.clone(),
            action_id: action.id()?.to_string(),
            record_sha256: analysis.hashes.get(n.record as usize)?.to_string(),
        })
    }

    /// The target for a whole record.
    pub fn record(corpus: &Corpus, analysis: &Analysis, record: usize) -> Option<Target> {
        let source = &corpus.record(record).source;
        Some(Target::Record {
            record_sha256: analysis.hashes.get(record)?.to_string(),
            seen_at: format!("{}:{}", source.path, source.line),
        })
    }

    /// The target for a finding.
    pub fn finding(f: &Finding) -> Target {
        Target::Finding {
            finding_id: f.id.to_string(),
            fingerprint: f.fingerprint.clone(),
        }
    }

    /// A short name for people: `run-1/act-003`, `record at file:12`, `F-… 1a2b3c4d`.
    pub fn label(&self) -> String {
        match self {
            Target::Action {
                run_id, action_id, ..
            } => format!("{run_id}/{action_id}"),
            Target::Record { seen_at, .. } => format!("record at {seen_at}"),
            Target::Finding {
                finding_id,
                fingerprint,
            } => format!("{finding_id} {}", &fingerprint[..fingerprint.len().min(8)]),
        }
    }
}

/// The records holding copies of an action (its first record, then the records of its
/// emitter chain, or a chain continuing it, that repeat it in later snapshots).
fn copies_of<'a>(
    corpus: &'a Corpus,
    analysis: &'a Analysis,
    node: NodeId,
) -> impl Iterator<Item = usize> + 'a {
    let g = &analysis.graph;
    let n = &g.nodes[node as usize];
    let id = g
        .action(corpus, node)
        .and_then(|(_, a)| a.id())
        .map(str::to_string);
    g.runs[n.run as usize]
        .records
        .iter()
        .map(|r| *r as usize)
        .filter(move |r| {
            *r == n.record as usize
                || g.lineages.sees(g.lineages.of(*r), n.chain)
                    && id
                        .as_deref()
                        .is_some_and(|id| corpus.record(*r).actions().any(|a| a.id() == Some(id)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_cycle_through_all_four_and_back() {
        let mut v = Verdict::Suspicious;
        let mut seen = vec![v];
        for _ in 0..4 {
            v = v.next();
            seen.push(v);
        }
        assert_eq!(seen.first(), seen.last());
        let distinct: std::collections::HashSet<_> = seen.iter().collect();
        assert_eq!(distinct.len(), 4);
        assert_eq!(Verdict::RootCause.name(), "root-cause");
        let json = serde_json::to_string(&Verdict::RootCause).unwrap();
        assert_eq!(json, "\"root-cause\"");
    }
}
