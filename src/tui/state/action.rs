//! What the explorer's one `update` reacts to: commands from the keymap, typed text,
//! clicks, and what the background worker sends.

use super::{NavList, Pane};
use crate::tui::data::Data;
use crate::tui::keymap::Command;
use crate::verify::Report;
use std::sync::Arc;

/// Loading and verification progress from the background worker.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub phase: String,
    pub done: usize,
    pub total: usize,
    pub finished: bool,
}

/// Input the state reacts to.
#[derive(Debug)]
pub enum Action {
    /// A command from the keymap.
    Command(Command),
    /// A typed character while a prompt is open.
    Char(char),
    Backspace,
    /// Tab in the filter prompt: complete a field name or a value.
    Complete,
    /// A key for the note editor (its text area reads cursor motions and editing keys).
    Edit(ratatui_textarea::Input),
    /// Text pasted into the terminal (bracketed paste).
    Paste(String),
    Submit,
    Resize(u16, u16),
    /// Evidence loaded and analysed (first frame comes before verification).
    Loaded(Box<Data>),
    /// Verification finished: the report, the full finding list, and the agent's
    /// telemetry joined to the evidence (`--traces`).
    Verified(
        Arc<Report>,
        Vec<crate::model::finding::Finding>,
        Option<Arc<crate::analysis::capture::Capture>>,
    ),
    Progress(Progress),
    /// The filter language's columns, made by the worker once the evidence was verified,
    /// and which evidence they are of (`filter::columns_key`).
    Columns(Box<crate::query::Columns>, (usize, bool, usize)),
    /// Problems to show (load errors, lease-file errors).
    Errors(Vec<String>),
    /// A mouse click on a pane row: (pane, row index in that pane's list).
    Click(Pane, usize),
    /// Give a pane the keyboard (a click on it, or a test).
    Focus(Pane),
    /// Show one of the navigator's lists and focus it (a click on its tab).
    ShowList(NavList),
    Scroll(Pane, i32),
    /// The event loop opened the review file (its path, when it can be saved; `Ok(None)`:
    /// no review yet; `Err`: the file's error, shown and never overwritten).
    ReviewOpened(
        Option<std::path::PathBuf>,
        Result<Option<Box<crate::review::file::Review>>, String>,
    ),
    /// A note written in `$EDITOR`, for this target.
    NoteEdited(crate::review::marks::Target, String),
    /// A background all-runs search finished (its query, its matches).
    SearchDone(String, super::AllMatches),
}
