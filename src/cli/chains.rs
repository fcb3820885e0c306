//! `aeplens chains`: denied→re-approved and causal chains as indented trees or JSON, each
//! step with its record's verdict; kept in the evidence index per opening and format.

use super::contract::list_document;
use super::report::{Setting, emit, fit_lines, kept_opening, resolve, terminal_width};
use super::{ChainsArgs, Format};
use crate::analysis::chains::{Chain, ChainKind};
use crate::analysis::evidence::{Evidence, EvidenceRef};
use crate::analysis::lease::LeaseVerdict;
use crate::load::LoadError;
use crate::model::text::sanitize;
use crate::verify::Trees;
use crate::verify::index::Index;
use crate::verify::verdict::RecordVerdict;
use std::fmt::Write as _;

/// `aeplens chains`.
pub fn chains(args: &ChainsArgs) -> i32 {
    let setting = match Setting::of(&args.evidence) {
        Ok(setting) => setting,
        Err(code) => return code,
    };
    let format = resolve(args.format);
    let paths = &args.evidence.paths;
    let out = |text: &str| match format {
        Format::Json => emit(text),
        Format::Text => emit(&fit_lines(text, terminal_width())),
    };
    let index = setting.answers();
    let kind = kind(format);
    let kept = index.and_then(|i| {
        let kept = Evidence::unchanged_opening(paths, i, &kind)?;
        i.recall::<Answer>(&kept.key, &kept.opening)
    });
    if let Some(kept) = kept {
        setting.say_problems(kept.errors.into_iter());
        return out(&kept.text);
    }
    let ev = match setting.open(paths, Trees::OnDisk) {
        Ok(ev) => ev,
        Err(code) => return code,
    };
    let answer = answer(&ev, format);
    let code = out(&answer.text);
    if ev.reread_failures() > 0 {
        return 2;
    }
    if let Some((index, opening)) = index.zip(kept_opening(&ev)) {
        // Not kept (a full disk, a read-only cache): the next run makes it again.
        let _ = index.remember(&key(&ev.corpus, format), &opening, &answer);
    }
    code
}

/// Keeps `chains`' answers (JSON and text) for the opening `opening` of `ev` in `index`,
/// when they are not kept yet (a full disk keeps nothing: `chains` opens the evidence).
pub(super) fn keep(index: &Index, opening: &str, ev: &Evidence) {
    for format in [Format::Json, Format::Text] {
        let key = key(&ev.corpus, format);
        if !index.keeps(&key, opening) {
            let _ = index.remember(&key, opening, &answer(ev, format));
        }
    }
}

/// The kind of `chains`' answer in `format` kept in the index ([`Index::kept_key`]): the
/// answer before text is fitted to a terminal.
fn kind(format: Format) -> String {
    format!("chains as {format:?}")
}

/// Where `chains`' answer in `format` for the files of `corpus` is kept.
fn key(corpus: &crate::load::Corpus, format: Format) -> String {
    Index::kept_key_of(&kind(format), &corpus.inputs)
}

/// What `chains` answers in `format` for `ev`, with the load errors it says.
fn answer(ev: &Evidence, format: Format) -> Answer {
    let text = match format {
        Format::Json => chains_json(ev.as_ref()),
        Format::Text => chains_text(ev.as_ref()),
    };
    let errors = ev.corpus.errors().map(LoadError::render).collect();
    Answer { errors, text }
}

/// A command's answer kept in the evidence index for an opening: the inputs' load
/// errors as printed, and the output (text before it is fitted to a terminal).
#[derive(serde::Serialize, serde::Deserialize)]
struct Answer {
    errors: Vec<String>,
    text: String,
}

/// A chain as `chains --format json` writes it: each step with its record's verdict.
struct ChainOut<'a> {
    chain: &'a Chain,
    verdicts: Vec<Option<RecordVerdict>>,
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
        let steps: Vec<StepOut> = (self.chain.steps.iter().zip(&self.verdicts))
            .map(|(step, verdict)| StepOut { step, verdict })
            .collect();
        self.chain.serialize_with_steps(s, &steps)
    }
}

/// The chains as `chains --format json` writes them.
pub fn chains_json(ev: EvidenceRef) -> String {
    let chains: Vec<ChainOut> = (ev.analysis.chains.iter())
        .map(|chain| ChainOut {
            chain,
            verdicts: chain.steps.iter().map(|s| ev.verdict(s.node)).collect(),
        })
        .collect();
    list_document("chains", &chains)
}

/// Chains as indented trees, each step led by its record's verdict glyph (`✓` verified,
/// `✗` failed, `○` not verified) and ending with that verdict in short.
pub fn chains_text(ev: EvidenceRef) -> String {
    let (chains, leases) = (&ev.analysis.chains, &ev.analysis.leases);
    let mut s = String::new();
    for c in chains {
        let kind = match c.kind {
            ChainKind::DenyReapproval => "denied→re-approved",
            ChainKind::Causal => "causal",
        };
        let _ = writeln!(
            s,
            "{} ({kind}, run {}) ended: {}",
            sanitize(&c.id),
            sanitize(&c.run_id),
            c.ended.as_deref().unwrap_or("unknown")
        );
        for (depth, step) in c.steps.iter().enumerate() {
            let verdict = ev.verdict(step.node);
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
                verdict.map_or_else(|| "not verified".to_string(), |v| v.words()),
            );
        }
    }
    if chains.is_empty() {
        s.push_str("no chains\n");
    }
    s
}
