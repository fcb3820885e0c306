//! What ties a record to others — its run, time, link and key id and its actions' ids —
//! packed for the records that keep nothing else between their verification and their
//! batch's analysis.

use super::codec::{Reader, Writer};
use super::facts::{ActionFacts, RecordFacts};
use super::kind::Kind;
use super::{Link, LinkHashRef};

/// The ids of one action that tie its record to others: what `analysis::groups` joins
/// records by and what F-CONFUSABLE-ID compares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActionIds<'a> {
    pub id: Option<&'a str>,
    pub parent: Option<&'a str>,
    pub causal_chain_id: Option<&'a str>,
    pub scope_lease_id: Option<&'a str>,
}

impl<'a> ActionIds<'a> {
    pub(super) fn of(f: &'a ActionFacts) -> ActionIds<'a> {
        ActionIds {
            id: f.id(),
            parent: f.parent(),
            causal_chain_id: f.causal_chain_id(),
            scope_lease_id: f.scope_lease_id(),
        }
    }

    /// Writes the ids: a number saying which are present, then each present one.
    fn pack(&self, w: &mut Writer) {
        let texts = [
            self.id,
            self.parent,
            self.causal_chain_id,
            self.scope_lease_id,
        ];
        let present =
            (texts.iter().enumerate()).fold(0, |m, (i, t)| m | u64::from(t.is_some()) << i);
        w.uint(present);
        for text in texts.into_iter().flatten() {
            w.bytes(text.as_bytes());
        }
    }

    /// The ids [`ActionIds::pack`] wrote.
    fn unpack(r: &mut Reader<'a>) -> Option<ActionIds<'a>> {
        let present = r.uint()?;
        let mut texts = [None; 4];
        for (i, text) in texts.iter_mut().enumerate() {
            if present & 1 << i != 0 {
                *text = Some(r.str()?);
            }
        }
        let [id, parent, causal_chain_id, scope_lease_id] = texts;
        Some(ActionIds {
            id,
            parent,
            causal_chain_id,
            scope_lease_id,
        })
    }
}

/// What a record keeps of its facts between its verification and its batch's analysis
/// (`Record::keep_only_ids`), which reads them all again (`Record::with_facts_again`):
/// its run, time, link and key id and each action's ids (`action_id`,
/// `parent_action_id`, `causal_chain_id`, `scope_lease_id`) — what ties it to other
/// records (the link graph, `analysis::groups`) and what F-CONFUSABLE-ID compares —
/// packed in one allocation: a few dozen bytes an action instead of a few hundred.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordIds(Box<[u8]>);

/// The record-level part of [`RecordIds`], read.
struct IdsHead<'a> {
    kind: Kind,
    run_id: Option<&'a str>,
    created_at_ms: Option<f64>,
    link: Link<'a>,
    key_id: Option<&'a str>,
    /// The actions' ids ([`ActionIds::pack`]).
    actions: &'a [u8],
}

impl RecordIds {
    /// The ids of a record's facts.
    pub fn of(facts: &RecordFacts) -> RecordIds {
        let mut w = Writer::default();
        w.uint(u64::from(facts.kind.code()));
        w.opt_str(facts.run_id.as_deref());
        w.opt_f64(facts.created_at_ms);
        match facts.link.as_link() {
            Link::Absent => w.uint(0),
            Link::Null => w.uint(1),
            Link::Malformed => w.uint(2),
            Link::Hash(LinkHashRef::Digest(d)) => {
                w.uint(3);
                w.bytes.extend_from_slice(&d.0);
            }
            Link::Hash(LinkHashRef::Text(t)) => {
                w.uint(4);
                w.bytes(t.as_bytes());
            }
        }
        w.opt_str(facts.key_id.as_deref());
        for (_, f) in facts.actions.iter() {
            ActionIds::of(f).pack(&mut w);
        }
        // A copy of exactly its length (an allocator may keep a shrunk vector's block).
        RecordIds(w.bytes[..].into())
    }

    /// The record-level ids; `None` never happens for bytes [`RecordIds::of`] wrote.
    fn head(&self) -> Option<IdsHead<'_>> {
        let mut r = Reader::new(&self.0);
        let kind = Kind::from_code(r.uint()?)?;
        let run_id = r.opt_str()?;
        let created_at_ms = r.opt_f64()?;
        let link = match r.uint()? {
            0 => Link::Absent,
            1 => Link::Null,
            2 => Link::Malformed,
            3 => {
                let digest = r.take(32)?.try_into().ok()?;
                Link::Hash(LinkHashRef::Digest(crate::model::sha256::Sha256Digest(
                    digest,
                )))
            }
            4 => Link::Hash(LinkHashRef::Text(r.str()?)),
            _ => return None,
        };
        let key_id = r.opt_str()?;
        Some(IdsHead {
            kind,
            run_id,
            created_at_ms,
            link,
            key_id,
            actions: r.rest(),
        })
    }

    /// The record's evidence type.
    pub fn kind(&self) -> Kind {
        self.head().map_or(Kind::AepRecord, |h| h.kind)
    }

    /// `run_id` when it is a string.
    pub fn run_id(&self) -> Option<&str> {
        self.head()?.run_id
    }

    /// `created_at_ms` when it is a number.
    pub fn created_at_ms(&self) -> Option<f64> {
        self.head()?.created_at_ms
    }

    /// The `prev_record_hash` link.
    pub fn link(&self) -> Link<'_> {
        self.head().map_or(Link::Absent, |h| h.link)
    }

    /// `signature.key_id` when it is a string.
    pub fn key_id(&self) -> Option<&str> {
        self.head()?.key_id
    }

    /// Each action's ids, in order.
    pub fn actions(&self) -> Vec<ActionIds<'_>> {
        let mut r = Reader::new(self.head().map_or(&[][..], |h| h.actions));
        std::iter::from_fn(|| ActionIds::unpack(&mut r)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids of any length and alphabet, some absent, read back as packed.
    #[test]
    fn packed_ids_read_back() {
        let long = "ι".repeat(200);
        let all = [
            ActionIds::default(),
            ActionIds {
                id: Some(&long),
                parent: Some(""),
                causal_chain_id: None,
                scope_lease_id: Some("L\u{0}"),
            },
            ActionIds {
                id: Some("a"),
                ..ActionIds::default()
            },
        ];
        let mut w = Writer::default();
        for ids in &all {
            ids.pack(&mut w);
        }
        let mut r = Reader::new(&w.bytes);
        let read: Vec<_> = std::iter::from_fn(|| ActionIds::unpack(&mut r)).collect();
        assert_eq!(read, all);
        assert!(r.is_empty());
    }
}
