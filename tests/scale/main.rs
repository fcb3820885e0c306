//! Opening at scale: the evidence index equal to no index, batches equal to one
//! analysis, the reference shape. One test binary per area: each file under `tests/`
//! would link its own copy of aeplens and every dependency.

#[path = "../common/mod.rs"]
mod common;
#[path = "../../examples/support/generated.rs"]
mod generated;
#[path = "../../examples/support/incident.rs"]
#[allow(
    dead_code,
    reason = "the generator whole; this area writes unsigned stores"
)]
mod incident;
#[path = "../../examples/support/reference.rs"]
mod reference;
#[path = "../../examples/support/shape.rs"]
mod shape;

mod action_table;
mod index;
mod index_differential;
mod reference_shape;
mod streaming;
mod tables_streamed;
