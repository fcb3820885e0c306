//! Every output: the JSON contract, the exports, the reports, the filter language, and
//! each against the program that reads it. One test binary per area: each file under
//! `tests/` would link its own copy of aeplens and every dependency.

#[path = "../common/mod.rs"]
mod common;
#[path = "../../examples/support/generated.rs"]
mod generated;
#[path = "../../examples/support/incident.rs"]
mod incident;

mod cli_docs;
mod consumers;
mod contract;
mod export;
mod html;
mod output_digests;
mod query;
mod readme;
mod report;
mod tables;
