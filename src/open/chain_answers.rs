//! `chains`' answers — the denied→re-approved and causal chains as JSON and as indented
//! text, each step with its record's verdict — gathered an analysed batch at a time
//! ([`ChainAnswers::add`]) and put in the order of the whole opening's graph
//! ([`ChainAnswers::finish`]): `check` keeps them for `chains` without the whole analysis
//! in memory, and `chains` prints them from one batch, the whole opening.

use super::cache::Index;
use crate::analysis::chains::{Chain, ChainKind};
use crate::analysis::gathered::{Batch, NodeAt, NodeNumbers, Placed};
use crate::analysis::lease::{LeaseVerdict, Leases};
use crate::load::spill::{Piece, Spill, Spilled};
use crate::load::{Corpus, LoadError};
use crate::model::text::sanitize;
use crate::verify::verdict::RecordVerdict;
use rayon::prelude::*;
use std::fmt::Write as _;

/// Chains rendered at once on every core before they go to the spill.
const CHAINS_AT_ONCE: usize = 256;

/// The chains of an opening, gathered batch by batch.
#[derive(Debug)]
pub struct ChainAnswers {
    spill: Spill,
    chains: Vec<Gathered>,
}

/// One chain as gathered: where it goes, its two renderings, and its steps' nodes (their
/// numbers in the JSON are the whole graph's, known once every batch is in).
#[derive(Debug)]
struct Gathered {
    /// Deny chains first, by their first node, then by path; then causal chains, by their
    /// earliest node.
    order: (bool, Option<NodeAt>, u32),
    /// The JSON as the document lists it, each step's node number cut out ([`node_holes`]).
    json: Piece,
    /// Where in `json` each step's node number goes, in step order.
    holes: Box<[u32]>,
    text: Piece,
    steps: Box<[NodeAt]>,
}

impl ChainAnswers {
    /// No chains yet, to be held in `spill`.
    pub fn new(spill: Spill) -> ChainAnswers {
        ChainAnswers {
            spill,
            chains: Vec::new(),
        }
    }

    /// Adds the chains of `batch` (whose nodes are `placed`).
    pub fn add(&mut self, batch: &Batch<'_>, placed: &Placed) -> std::io::Result<()> {
        self.add_where(batch, placed, &|_| true)
    }

    /// [`ChainAnswers::add`] of the chains holding an action `keep` lets through.
    pub fn add_where(
        &mut self,
        batch: &Batch<'_>,
        placed: &Placed,
        keep: &dyn Fn(crate::analysis::graph::NodeId) -> bool,
    ) -> std::io::Result<()> {
        let (g, leases) = (&batch.analysis.graph, &batch.analysis.leases);
        let verdict = |n: crate::analysis::graph::NodeId| {
            let record = batch.number(g.nodes[n as usize].record);
            (batch.verdicts.get(record as usize)).map(RecordVerdict::of)
        };
        // Each chain's place in the order first (a deny chain's path counts the ones
        // before it from the same start), then its two renderings, on every core.
        let mut path = 0;
        let mut last_start = None;
        let mut placed_chains = Vec::new();
        for chain in &batch.analysis.chains {
            let steps: Box<[NodeAt]> = chain.steps.iter().map(|s| placed.at(g, s.node)).collect();
            let order = match chain.kind {
                ChainKind::DenyReapproval => {
                    let start = steps.first().copied();
                    path = if start == last_start { path + 1 } else { 0 };
                    last_start = start;
                    (false, start, path)
                }
                ChainKind::Causal => (true, steps.iter().min().copied(), 0),
            };
            if chain.steps.iter().any(|s| keep(s.node)) {
                placed_chains.push((chain, order, steps));
            }
        }
        let rendered = |(chain, _, _): &(&Chain, _, _)| {
            let verdicts: Vec<Option<RecordVerdict>> =
                chain.steps.iter().map(|s| verdict(s.node)).collect();
            let json = listed(&ChainOut {
                chain,
                verdicts: &verdicts,
            })?;
            let (json, holes) = node_holes(&json, chain.steps.len())?;
            Ok((json, holes, chain_text(chain, &verdicts, leases)))
        };
        // A few at a time, so that no more than those wait in memory for the spill.
        for chunk in placed_chains.chunks_mut(CHAINS_AT_ONCE) {
            let made: Vec<std::io::Result<_>> = chunk.par_iter().map(rendered).collect();
            for ((_, order, steps), made) in chunk.iter_mut().zip(made) {
                let (json, holes, text) = made?;
                self.chains.push(Gathered {
                    order: *order,
                    json: self.spill.put(json.as_bytes())?,
                    holes,
                    text: self.spill.put(text.as_bytes())?,
                    steps: std::mem::take(steps),
                });
            }
        }
        Ok(())
    }

    /// Every chain added, in order, each step numbered as `numbers` says.
    pub fn finish(self, numbers: &NodeNumbers) -> std::io::Result<Chains<'_>> {
        let ChainAnswers { spill, mut chains } = self;
        chains.sort_unstable_by_key(|c| c.order);
        Ok(Chains {
            spilled: spill.finish()?,
            in_order: chains,
            numbers,
        })
    }
}

/// The chains of an opening in order ([`ChainAnswers::finish`]).
pub struct Chains<'n> {
    spilled: Spilled,
    in_order: Vec<Gathered>,
    numbers: &'n NodeNumbers,
}

/// The formats of `chains`' answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Json,
    Text,
}

impl Chains<'_> {
    /// The answer in `form`, written to `out` piece by piece (`out` is called with each).
    pub fn write(
        &self,
        form: Form,
        out: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        match form {
            Form::Text if self.in_order.is_empty() => out(b"no chains\n"),
            Form::Text => {
                (self.in_order.iter()).try_for_each(|c| out(&self.spilled.read(c.text)?))
            }
            Form::Json if self.in_order.is_empty() => out(document_head(true).as_bytes()),
            Form::Json => {
                out(document_head(false).as_bytes())?;
                for (i, c) in self.in_order.iter().enumerate() {
                    out(if i == 0 { b"    " } else { b",\n    " })?;
                    out(&self.json(c)?)?;
                }
                out(DOCUMENT_TAIL.as_bytes())
            }
        }
    }

    /// The answer in `form`, whole.
    pub fn text(&self, form: Form) -> std::io::Result<String> {
        let mut all = Vec::new();
        self.write(form, &mut |piece| {
            all.extend_from_slice(piece);
            Ok(())
        })?;
        String::from_utf8(all).map_err(std::io::Error::other)
    }

    /// A chain as the JSON document lists it (two levels deep), its steps numbered.
    fn json(&self, chain: &Gathered) -> std::io::Result<Vec<u8>> {
        let nodes = (chain.steps.iter())
            .map(|at| self.numbers.of(*at))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| std::io::Error::other("a chain's step is of no batch gathered"))?;
        Ok(numbered(
            &self.spilled.read(chain.json)?,
            &chain.holes,
            &nodes,
        ))
    }

    /// Keeps both answers in `index` for the opening `opening` of `corpus` (whose load
    /// errors they carry), unless they are kept for it already.
    pub fn keep(&self, index: &Index, opening: &str, corpus: &Corpus) -> std::io::Result<()> {
        let errors: Vec<String> = corpus.errors().map(LoadError::render).collect();
        for form in [Form::Json, Form::Text] {
            let key = key(corpus, form);
            if index.keeps(&key, opening) {
                continue;
            }
            // As `Answer::read` reads it: the errors as one JSON line, then the text as is.
            index.remember_written(&key, opening, &mut |put| {
                put(&serde_json::to_vec(&errors)?)?;
                put(b"\n")?;
                self.write(form, put)
            })?;
        }
        Ok(())
    }
}

/// The chains of `ev` in `form`, from its whole analysis (one batch, held in memory).
pub fn of(ev: crate::analysis::evidence::EvidenceRef<'_>, form: Form) -> std::io::Result<String> {
    of_where(ev, form, &|_| true)
}

/// [`of`], only the chains holding an action `keep` lets through (`chains --where`).
pub fn of_where(
    ev: crate::analysis::evidence::EvidenceRef<'_>,
    form: Form,
    keep: &dyn Fn(crate::analysis::graph::NodeId) -> bool,
) -> std::io::Result<String> {
    let batch = Batch::whole(ev);
    let mut numbering = crate::analysis::gathered::Numbering::default();
    let placed = numbering.add(&batch);
    let mut chains = ChainAnswers::new(Spill::Memory(Vec::new()));
    chains.add_where(&batch, &placed, keep)?;
    let numbers = numbering.finish();
    chains.finish(&numbers)?.text(form)
}

/// What `chains` answers in one format, kept in the index for an opening: the inputs'
/// load errors as printed, and the output (text before it is fitted to a terminal).
#[derive(Debug)]
pub struct Answer {
    pub errors: Vec<String>,
    pub text: String,
}

impl Answer {
    /// The answer [`Chains::keep`] wrote: the errors as one JSON line, then the text as
    /// is (no JSON string to escape and unescape).
    pub fn read(kept: &mut dyn std::io::BufRead) -> Option<Answer> {
        let mut errors = Vec::new();
        kept.read_until(b'\n', &mut errors).ok()?;
        let mut text = String::new();
        kept.read_to_string(&mut text).ok()?;
        Some(Answer {
            errors: serde_json::from_slice(&errors).ok()?,
            text,
        })
    }
}

/// The kind of `chains`' answer in `form` kept in the index ([`Index::kept_key`]).
pub fn kind(form: Form) -> String {
    format!("chains as {form:?}")
}

/// Where `chains`' answer in `form` for the files of `corpus` is kept.
pub fn key(corpus: &Corpus, form: Form) -> String {
    Index::kept_key_of(&kind(form), &corpus.inputs)
}

/// The JSON document's beginning, up to its first chain (`[` when `empty` ends it too) —
/// as `serde_json::to_string_pretty` writes `{schema_version, chains}`.
fn document_head(empty: bool) -> String {
    let version = crate::model::contract::SCHEMA_VERSION;
    let list = if empty { "[]\n}\n" } else { "[\n" };
    format!("{{\n  \"schema_version\": \"{version}\",\n  \"chains\": {list}")
}

/// The JSON document's end, after its last chain.
const DOCUMENT_TAIL: &str = "\n  ]\n}\n";

/// A chain as `chains --format json` writes it: each step with its record's verdict.
struct ChainOut<'a> {
    chain: &'a Chain,
    verdicts: &'a [Option<RecordVerdict>],
}

/// A step of a [`ChainOut`].
#[derive(serde::Serialize)]
struct StepOut<'a> {
    #[serde(flatten)]
    step: &'a crate::analysis::chains::Step,
    verdict: &'a Option<RecordVerdict>,
}

impl serde::Serialize for ChainOut<'_> {
    /// As [`Chain`] serialises, each step with `verdict`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let steps: Vec<StepOut> = (self.chain.steps.iter().zip(self.verdicts))
            .map(|(step, verdict)| StepOut { step, verdict })
            .collect();
        self.chain.serialize_with_steps(s, &steps)
    }
}

/// `value` pretty-printed as the JSON document lists a chain: two levels deep.
fn listed(value: &impl serde::Serialize) -> serde_json::Result<String> {
    Ok(serde_json::to_string_pretty(value)?.replace('\n', "\n    "))
}

/// `cut` ([`node_holes`]) with the steps' node numbers, `nodes`, where they go (`holes`).
fn numbered(cut: &[u8], holes: &[u32], nodes: &[crate::analysis::graph::NodeId]) -> Vec<u8> {
    let mut json = Vec::with_capacity(cut.len() + 8 * holes.len());
    let mut from = 0;
    for (&hole, node) in holes.iter().zip(nodes) {
        json.extend_from_slice(&cut[from..hole as usize]);
        json.extend_from_slice(node.to_string().as_bytes());
        from = hole as usize;
    }
    json.extend_from_slice(&cut[from..]);
    json
}

/// `json` (a chain as the document lists it, [`listed`], steps numbered in their batch) with each
/// step's node number cut out, and where each goes, in step order. A step's `node` is its
/// first member, on a line of its own at the steps' depth; a line break inside a string
/// is written `\\n`, so no string can end a line there.
fn node_holes(json: &str, steps: usize) -> std::io::Result<(String, Box<[u32]>)> {
    const KEY: &str = "\n          \"node\": ";
    let mut cut = String::with_capacity(json.len());
    let mut holes = Vec::with_capacity(steps);
    let mut rest = json;
    while let Some(at) = rest.find(KEY) {
        let (head, tail) = rest.split_at(at + KEY.len());
        cut.push_str(head);
        holes.push(u32::try_from(cut.len()).map_err(std::io::Error::other)?);
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    cut.push_str(rest);
    if holes.len() != steps {
        let found = holes.len();
        return Err(std::io::Error::other(format!(
            "a chain's JSON has {found} step numbers for {steps} steps"
        )));
    }
    Ok((cut, holes.into()))
}

/// A chain as an indented tree, each step led by its record's verdict glyph (`✓`
/// verified, `✗` failed, `○` not verified) and ending with that verdict in short.
fn chain_text(c: &Chain, verdicts: &[Option<RecordVerdict>], leases: &Leases) -> String {
    let kind = match c.kind {
        ChainKind::DenyReapproval => "denied→re-approved",
        ChainKind::Causal => "causal",
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} ({kind}, run {}) ended: {}",
        sanitize(&c.id),
        sanitize(&c.run_id),
        c.ended.as_deref().unwrap_or("unknown")
    );
    for (depth, (step, verdict)) in c.steps.iter().zip(verdicts).enumerate() {
        let glyph = verdict.as_ref().map_or('○', RecordVerdict::glyph);
        let indent = match c.kind {
            ChainKind::DenyReapproval => "  ".repeat(depth),
            ChainKind::Causal => String::new(),
        };
        let drift = step.drift.name();
        let _ = writeln!(
            s,
            "  {indent}{}{glyph} {} {} · {} · {}{}{}{} · record {}",
            if depth > 0 && c.kind == ChainKind::DenyReapproval {
                "└─ "
            } else {
                ""
            },
            sanitize(&step.action_id),
            sanitize(step.tool.as_deref().unwrap_or("?")),
            step.decision
                .as_deref()
                .map_or("no decision".into(), sanitize),
            step.grant.as_deref().map_or("no grant".into(), sanitize),
            if drift == "absent" {
                String::new()
            } else {
                format!(" · drift {drift}")
            },
            if step.fresh_approval && depth > 0 {
                " · fresh approval"
            } else {
                ""
            },
            // A step that ran outside its lease window says so.
            leases
                .by_node
                .get(&step.node)
                .filter(|l| l.verdict != LeaseVerdict::Inside)
                .map(|l| {
                    let glyph = if l.verdict == LeaseVerdict::UnknownWindow {
                        "?"
                    } else {
                        "⌛"
                    };
                    format!(
                        " · {glyph} lease {} {}",
                        sanitize(&l.lease_id),
                        l.verdict.name()
                    )
                })
                .unwrap_or_default(),
            verdict
                .as_ref()
                .map_or_else(|| "not verified".to_string(), RecordVerdict::words),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::chains::Step;
    use crate::model::drift::DriftResult;

    /// Ids and tools that hold what a step's node line looks like (a line break, the
    /// key, the indentation) still leave one hole a step, where its number goes: the
    /// chain filled in is the JSON with the numbers asked for.
    #[test]
    fn each_step_number_goes_where_the_step_has_it_whatever_its_strings_hold() {
        let tricky = "a\n          \"node\": 12\n";
        let step = |node, id: &str| Step {
            node,
            action_id: id.into(),
            tool: Some(tricky.into()),
            decision: Some("deny".into()),
            grant: None,
            fresh_approval: false,
            drift: DriftResult::Drifted,
        };
        let chain = Chain {
            kind: ChainKind::DenyReapproval,
            id: tricky.into(),
            run_id: "\"node\": 3".into(),
            ended: Some("abandoned".into()),
            steps: vec![
                step(4, tricky),
                step(9, "          \"node\": 5"),
                step(0, "b"),
            ],
        };
        let verdicts = vec![None; 3];
        let json = listed(&ChainOut {
            chain: &chain,
            verdicts: &verdicts,
        })
        .unwrap();
        let (cut, holes) = node_holes(&json, 3).unwrap();
        assert_eq!(holes.len(), 3);
        let filled = numbered(cut.as_bytes(), &holes, &[700, 8, 90_000]);
        let mut want: serde_json::Value = serde_json::from_str(&json).unwrap();
        for (step, number) in want["steps"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .zip([700, 8, 90_000])
        {
            step["node"] = number.into();
        }
        let want = listed(&want).unwrap();
        assert_eq!(String::from_utf8(filled).unwrap(), want);
        // A count that does not match the steps is an error, never a misplaced number.
        assert!(node_holes(&json, 2).is_err());
    }
}
