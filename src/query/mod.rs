//! The filter language (docs/query.md): one typed expression
//! over actions — their record's verdict, chain, proven time, anchors, capture, findings
//! and marks beside the tool, the decision and the lease — for the explorer's `f`,
//! `aeplens query` and `--where`.
//!
//! [`Query::parse`] reads and type-checks an expression (an error points at a byte with
//! a message naming what was expected); [`Query::matches`] evaluates it over every action
//! of the opened evidence, reading the columns it needs from [`Columns`], which keeps
//! each field's values once made (the explorer re-filters at every keystroke).

mod columns;
mod fields;
mod lex;
mod parse;

pub use columns::{Columns, Ctx};
pub use fields::{FIELDS, Field, Type, field as field_index};
pub use parse::Query;

use crate::analysis::evidence::EvidenceRef;
use crate::analysis::graph::NodeId;

/// Every action of `ev`, one per action identity (as the Parquet `actions` table): what
/// `aeplens query` lists and a watch rule is tested on.
pub fn actions(ev: EvidenceRef) -> Vec<NodeId> {
    let g = &ev.analysis.graph;
    (g.runs.iter())
        .flat_map(|r| r.nodes.iter().copied())
        .filter(|&n| g.action(ev.corpus, n).is_some() && g.facts(ev.corpus, n).is_some())
        .collect()
}

/// Why an expression is refused: where (a byte offset and length inside it) and what
/// was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryError {
    /// The first byte of the token at fault (0-based).
    pub at: usize,
    /// Its length in bytes (at least 1).
    pub len: usize,
    pub message: String,
}

impl QueryError {
    fn at(at: usize, len: usize, message: impl Into<String>) -> QueryError {
        QueryError {
            at,
            len: len.max(1),
            message: message.into(),
        }
    }

    /// The 1-based byte column of the fault.
    pub fn column(&self) -> usize {
        self.at + 1
    }

    /// The expression with a caret line under the fault and the message:
    /// `  tol == "x"` / `  ^^^ unknown field "tol" — did you mean "tool"?`. Control
    /// characters in the expression are shown escaped (the caret counts cells).
    pub fn render(&self, text: &str) -> String {
        use unicode_width::UnicodeWidthStr;
        let safe = |s: &str| crate::model::text::sanitize(s).into_owned();
        let before = text.get(..self.at).unwrap_or(text);
        let fault = text
            .get(self.at..(self.at + self.len).min(text.len()))
            .unwrap_or("");
        let pad = safe(before).width();
        let marks = safe(fault).width().max(1);
        format!(
            "  {}\n  {}{} {}",
            safe(text),
            " ".repeat(pad),
            "^".repeat(marks),
            self.message
        )
    }
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "column {}: {}", self.column(), self.message)
    }
}
