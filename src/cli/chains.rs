//! `aeplens chains`: denied→re-approved and causal chains as indented trees or JSON, each
//! step with its record's verdict ([`crate::open::chain_answers`]); kept in the
//! evidence index per opening and format.

use super::report::{emit, open_whole, resolve, say_problems, setting_of, terminal_width};
use super::{ChainsArgs, Format};
use crate::analysis::evidence::EvidenceRef;
use crate::open::chain_answers::{self, Form};
use crate::verify::Trees;

/// `aeplens chains`.
pub fn chains(args: &ChainsArgs) -> i32 {
    let setting = match setting_of(&args.evidence) {
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
        let ev = match open_whole(&setting, paths, Trees::OnDisk) {
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
    if let Some(kept) = crate::open::kept_chains(&setting, paths, form) {
        say_problems(&setting, kept.errors.into_iter());
        return out(&kept.text);
    }
    let ev = match open_whole(&setting, paths, Trees::OnDisk) {
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
    // Not kept (a full disk, a read-only cache): the next run makes it again.
    crate::open::keep_answers(&setting, &ev);
    code
}

/// The chains as `chains --format text` writes them (before they are fitted to a
/// terminal).
pub fn chains_text(ev: EvidenceRef) -> String {
    chain_answers::of(ev, Form::Text).unwrap_or_default()
}
