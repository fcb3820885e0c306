//! The `aeplens` binary.

use clap::Parser;

/// mimalloc: records are parsed into many small allocations on both cores, where the
/// system allocator's arena locking and trimming cost more than the parse itself.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `purge_delay` option (`mi_option_purge_delay` in mimalloc.h; the sys crate
/// names no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long mimalloc keeps freed memory before handing it back to the OS (10 ms by
/// default): a check frees and allocates in bursts, and every page handed back comes back
/// zeroed by the kernel (once a third of the CPU time of `check` on a 20,000-record store,
/// when it held ~490 MB). 100 ms keeps a burst's pages for
/// the next one at no measured cost and lets go of what a finished phase freed: 40–50 MB
/// less at the peak on the 20k and 2 GB stores (BENCHMARKS.md).
const PURGE_DELAY_MS: std::ffi::c_long = 100;

fn main() {
    // SAFETY: called once, before any other thread exists; mimalloc reads options lazily.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    let cli = aeplens::cli::command::Cli::parse();
    std::process::exit(aeplens::cli::command::run(cli));
}
