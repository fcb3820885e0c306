//! # aeplens
//!
//! A forensic explorer and independent verifier for AEP (Agent Evidence Protocol)
//! records: the signed JSON receipts agent runtimes write after each run.
//!
//! The crate is layered; each layer only uses the ones above it (ARCHITECTURE.md states
//! the order, and a test holds every file to it):
//!
//! - [`model`]: the stored JSON ([`model::json::Json`], member order, duplicate keys and
//!   raw numbers kept), typed, dialect-normalised views of records and actions, the
//!   digest type and the JSON output contract.
//! - [`canon`]: canonical bytes and hashes, byte-exact with the reference emitter.
//! - [`load`]: files, directories and stdin → records with their source (file, line).
//! - [`verify`]: signatures (four constructions), DSSE binding, chains, structural and
//!   semantic checks, and the verifier-result envelope.
//! - [`analysis`]: the action graph, the per-action views that answer the three post-run
//!   questions (authority, drift, lease, comparability), findings, chains and the
//!   decision envelope.
//! - [`review`]: what a review produces — marks and notes, the review file with the
//!   last session, and the incident report (Markdown, HTML, SARIF, JUnit).
//! - [`query`]: the filter language over actions (the explorer's `f`, `query`, `--where`).
//! - [`tui`]: the interactive explorer — the only module that uses ratatui/crossterm.
//! - [`cli`]: the command line.
//!
//! Verify and analyse evidence, then ask about one action:
//!
//! ```
//! use aeplens::analysis::evidence::Evidence;
//! use aeplens::analysis::lease::SuppliedLeases;
//! use aeplens::load::{parse_input, Corpus};
//! use aeplens::verify::{Keyring, Options};
//!
//! let text = br#"{"schema_version":"aep/v0.3","run_id":"r1","created_at_ms":1780000000000,
//!   "actions":[{"action_id":"a1","tool_name":"sql_exec","state_changing":true,
//!   "timestamp_ms":1780000000000,"side_effect_class":"mutate-external"}]}"#;
//! let corpus = Corpus::new(vec![parse_input("example.json".into(), text)]);
//! let ev = Evidence::open(corpus, &Keyring::default(), &Options::default(), &SuppliedLeases::default());
//! assert_eq!(ev.report.records[0].structural.status.map(|s| s.name()), Some("pass"));
//! // A state-changing action with no capability decision at all:
//! assert!(ev.findings.iter().any(|f| f.id == "F-UNAPPROVED-MUTATION"));
//! let node = ev.analysis.graph.find(&ev.corpus, "r1", "a1").unwrap();
//! let show = ev.analysis.show(&ev.corpus, node, &ev.findings, Some(&ev.report.records)).unwrap();
//! assert_eq!(show.envelope.action_class, "mutate-external");
//! ```

// The library never unwraps: bad input is an error or a finding, never a panic (tests
// and examples are exempt).
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod analysis;
pub mod canon;
pub mod cli;
#[cfg(test)]
mod layering;
pub mod load;
pub mod model;
pub mod open;
pub mod private;
pub mod query;
pub mod review;
pub mod tui;
pub mod verify;
pub mod watch;
