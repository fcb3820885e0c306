//! `aeplens chains`: denied→re-approved and causal chains as indented trees or JSON, each
//! step with its record's verdict ([`crate::analysis::chain_answers`]); kept in the
//! evidence index per opening and format.

use super::report::{Setting, emit, kept_opening, resolve, terminal_width};
use super::{ChainsArgs, Format};
use crate::analysis::chain_answers::{self, Answer, Form};
use crate::analysis::evidence::{Evidence, EvidenceRef, Keeping};
use crate::verify::Trees;

/// `aeplens chains`.
pub fn chains(args: &ChainsArgs) -> i32 {
    let setting = match Setting::of(&args.evidence) {
        Ok(setting) => setting,
        Err(code) => return code,
    };
    let format = resolve(args.format);
    let form = match format {
        Format::Json => Form::Json,
        Format::Text => Form::Text,
    };
    let paths = &args.evidence.paths;
    let out = |text: &str| match format {
        Format::Json => emit(text),
        Format::Text => emit(&crate::model::text::wrap_lines(text, terminal_width(), 4)),
    };
    if let Some(text) = &args.filter.expression {
        let query = match super::query::checked(text) {
            Ok(q) => q,
            Err(code) => return code,
        };
        let ev = match setting.open(paths, Trees::OnDisk) {
            Ok(ev) => ev,
            Err(code) => return code,
        };
        let passes = super::query::matching(&query, ev.as_ref(), None);
        let keep = |n: crate::analysis::graph::NodeId| passes[n as usize];
        let code = match chain_answers::of_where(ev.as_ref(), form, &keep) {
            Ok(text) => out(&text),
            Err(e) => {
                eprintln!("aeplens: {e}");
                2
            }
        };
        return if ev.reread_failures() > 0 { 2 } else { code };
    }
    let index = setting.answers();
    let kept = index.and_then(|i| {
        let kept = Evidence::unchanged_opening(paths, i, &chain_answers::kind(form))?;
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
    let code = match chain_answers::of(ev.as_ref(), form) {
        Ok(text) => out(&text),
        Err(e) => {
            eprintln!("aeplens: {e}");
            2
        }
    };
    if ev.reread_failures() > 0 {
        return 2;
    }
    if let Some((index, opening)) = index.zip(kept_opening(&ev)) {
        // Not kept (a full disk, a read-only cache): the next run makes it again.
        Keeping::keep_all(index, &opening, ev.as_ref());
    }
    code
}

/// The chains as `chains --format text` writes them (before they are fitted to a
/// terminal).
pub fn chains_text(ev: EvidenceRef) -> String {
    chain_answers::of(ev, Form::Text).unwrap_or_default()
}
