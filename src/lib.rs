//! # aeplens
//!
//! A forensic explorer and independent verifier for AEP (Agent Evidence Protocol)
//! records: the signed JSON receipts agent runtimes write after each run.
//!
//! The crate is layered; each layer only uses the ones above it:
//!
//! - [`model`]: the stored JSON ([`model::json::Json`]) and typed, dialect-normalised
//!   views of records and actions.
//! - [`load`]: files, directories and stdin → records with their source (file, line).
//! - [`canon`]: canonical bytes and hashes, byte-exact with the reference emitter.
//! - [`verify`]: signatures (four constructions), DSSE binding, chains, structural and
//!   semantic checks, and the verifier-result envelope.
//! - [`cli`]: the command-line front end.
//!
//! ```
//! use aeplens::load::parse_input;
//! use aeplens::verify::{verify_inputs, Keyring, Options};
//!
//! let text = br#"{"schema_version":"aep/v0.5","run_id":"r1","created_at_ms":1700000000000}"#;
//! let input = parse_input("example.json".into(), text);
//! let report = verify_inputs(&[input], &Keyring::default(), &Options::default(), None);
//! assert_eq!(report.records[0].structural.status, Some("pass"));
//! ```

pub mod analysis;
pub mod canon;
pub mod cli;
pub mod load;
pub mod model;
pub mod tui;
pub mod verify;
