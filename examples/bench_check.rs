//! Times the phases of `aeplens check` on a store (release build):
//!
//! ```text
//! cargo run --release --example gen_store -- /tmp/store.ndjson 20000
//! cargo run --release --example bench_check -- /tmp/store.keys.json /tmp/store.ndjson
//! ```
//! Prints load, verify and report times and records per second, and what the link
//! graph (verification.md e.2, built inside verify) costs of the whole. Also times strict
//! Ed25519 alone on this machine, the floor under the verify phase.

use ed25519_dalek::{Signer, SigningKey};
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: bench_check KEYS.json PATH...");
        std::process::exit(2);
    }
    let mut keys = aeplens::verify::Keyring::default();
    keys.add_file(&args[0]).expect("keyring");
    let start = Instant::now();
    let inputs = aeplens::load::load_paths(&args[1..]);
    let load = start.elapsed();
    let t = Instant::now();
    let report =
        aeplens::verify::verify_inputs(&inputs, &keys, &aeplens::verify::Options::default(), None);
    let verify = t.elapsed();
    let t = Instant::now();
    let text = aeplens::cli::check::text_report(&report, &[], None);
    let output = t.elapsed();
    let total = start.elapsed();
    let n = report.records.len();
    let records: Vec<&aeplens::model::Record> = inputs.iter().flat_map(|i| &i.records).collect();
    let hashes: Vec<&str> = report
        .records
        .iter()
        .map(|r| r.canonical_sha256.as_str())
        .collect();
    let t = Instant::now();
    let graph = aeplens::verify::links::build(&records, &hashes);
    let links = t.elapsed();
    println!(
        "link graph {links:.2?} ({} paths) = {:.1} % of the whole check",
        graph.paths.len(),
        100.0 * links.as_secs_f64() / total.as_secs_f64()
    );
    println!(
        "records {n}  load {load:.2?}  verify {verify:.2?}  report {output:.2?} ({} bytes)",
        text.len()
    );
    println!(
        "total {total:.2?} = {:.0} records/s",
        n as f64 / total.as_secs_f64()
    );

    let key = SigningKey::from_bytes(&[7u8; 32]);
    let msg = vec![b'x'; 5000];
    let sig = key.sign(&msg);
    let vk = key.verifying_key();
    let rounds = 2000;
    let t = Instant::now();
    for _ in 0..rounds {
        vk.verify_strict(&msg, &sig).expect("verifies");
    }
    let per = t.elapsed() / rounds;
    println!(
        "strict Ed25519 on this machine: {per:.2?} per signature, one thread = floor of {:.0} records/s on 2 cores",
        2.0 / per.as_secs_f64()
    );
}
