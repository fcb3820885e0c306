//! The `aeplens` binary.

use clap::Parser;

/// mimalloc: records are parsed into many small allocations on both cores, where the
/// system allocator's arena locking and trimming cost more than the parse itself.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `purge_delay` option (`mi_option_purge_delay` in mimalloc.h; the sys crate
/// names no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() {
    // Keep freed memory instead of handing it back to the OS after 10 ms: a check frees
    // and allocates hundreds of megabytes in bursts, and every page handed back comes back
    // zeroed by the kernel — a third of the CPU time of `check` on a 20,000-record store
    // (BENCHMARKS.md). Memory is returned when the process ends.
    // SAFETY: called once, before any other thread exists; mimalloc reads options lazily.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    let cli = aeplens::cli::Cli::parse();
    std::process::exit(aeplens::cli::run(cli));
}
