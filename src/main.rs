//! The `aeplens` binary.

use clap::Parser;

/// mimalloc: records are parsed into many small allocations on both cores, where the
/// system allocator's arena locking and trimming cost more than the parse itself.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = aeplens::cli::Cli::parse();
    std::process::exit(aeplens::cli::run(cli));
}
