//! The explorer: its screens as snapshots, its journeys in tmux, the review. One test
//! binary per area: each file under `tests/` would link its own copy of aeplens and
//! every dependency.

#[path = "../common/mod.rs"]
mod common;

mod explorer_capture;
mod explorer_review;
mod explorer_time;
mod explorer_trust;
mod review;
mod tmux;
mod tui;
