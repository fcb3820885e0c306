//! The `aeplens` binary.

use clap::Parser;

fn main() {
    let cli = aeplens::cli::Cli::parse();
    std::process::exit(aeplens::cli::run(cli));
}
