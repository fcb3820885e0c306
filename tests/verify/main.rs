//! Verification: records, chains, the link graph, signatures, time, the corpus and the
//! analysis. One test binary per area: each file under `tests/` would link its own copy
//! of aeplens and every dependency.

#[path = "../../examples/support/authority.rs"]
mod authority;
#[path = "../common/mod.rs"]
mod common;
#[path = "../../examples/support/generated.rs"]
mod generated;
#[path = "../../examples/support/reference.rs"]
mod reference;

mod action_identity;
mod analysis;
mod canon_properties;
mod capture;
mod cli_check;
mod conformance;
mod evidence_types;
mod hostile;
mod link_graph_properties;
mod record_verdicts;
mod reference_fixtures;
mod reference_stores;
mod tsa;
mod watch;
