//! The tables made in parts by an engine: the parts and the Spark job. One test binary
//! per area: each file under `tests/` would link its own copy of aeplens and every
//! dependency.

#[path = "../common/mod.rs"]
mod common;
#[cfg(feature = "tables")]
#[path = "../../examples/support/generated.rs"]
mod generated;
#[cfg(feature = "tables")]
#[path = "../../examples/support/incident.rs"]
mod incident;
#[cfg(feature = "tables")]
#[path = "../../examples/support/reference.rs"]
mod reference;

mod parts;
mod spark;
