//! Verify one record file and print its five axes:
//!
//! ```text
//! cargo run --example verify_record -- assets/demo/keys.json assets/demo/evidence/incident.ndjson
//! ```

use aeplens::load::load_paths;
use aeplens::verify::{Keyring, Options, verify_inputs};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [keys, path] = args.as_slice() else {
        eprintln!("usage: verify_record KEYS.json RECORD.json");
        std::process::exit(2);
    };
    let mut keyring = Keyring::default();
    keyring.add_file(keys).expect("keyring");
    let inputs = load_paths(std::slice::from_ref(path));
    let report = verify_inputs(&inputs, &keyring, &Options::default(), None);
    for r in &report.records {
        println!(
            "{}:{} structural={:?} semantic={:?} authenticity={:?} ({}) chain={:?}",
            r.source.path,
            r.source.line,
            r.structural.status,
            r.semantic.status,
            r.authenticity.status,
            r.authenticity
                .construction
                .map_or("no construction", |c| c.name()),
            r.chain
                .status
                .map(aeplens::verify::chain::ChainStatus::name),
        );
    }
}
