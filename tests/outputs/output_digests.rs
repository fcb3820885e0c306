//! The commands' output on every fixture file alone is byte-identical to what is pinned in
//! `tests/output-digests.txt` (the SHA-256 of each output): a change made for speed or
//! memory changes no answer. A change meant to alter output rewrites the file with
//! `AEPLENS_UPDATE_DIGESTS=1 cargo test --all-features --test outputs output_digests` — review its diff.

use crate::common;

use sha2::{Digest, Sha256};
use std::fmt::Write as _;

const PINNED: &str = "tests/output-digests.txt";

#[test]
fn every_fixture_answers_as_pinned() {
    let mut files = common::evidence_files(&common::fixtures(), None);
    files.push((
        "assets/demo/evidence/incident.ndjson".into(),
        Some("assets/demo/keys.json".into()),
    ));
    files.sort();
    let mut now = String::new();
    for (file, keys) in &files {
        let rel = file
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(file)
            .display()
            .to_string();
        for command in ["check", "findings", "chains"] {
            let mut args = vec![command.to_string(), "--format".into(), "json".into()];
            args.push("--no-index".into());
            if let Some(k) = keys {
                let k = k.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(k);
                args.extend(["--keys".to_string(), k.display().to_string()]);
            }
            args.push(rel.clone());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, out, _) = common::aeplens(&args);
            let digest = Sha256::digest(out.as_bytes());
            let hex = aeplens::canon::hex(&digest);
            let _ = writeln!(now, "{hex} {code} {command} {rel}");
        }
    }
    if std::env::var_os("AEPLENS_UPDATE_DIGESTS").is_some() {
        std::fs::write(PINNED, &now).unwrap();
        return;
    }
    let pinned = std::fs::read_to_string(PINNED).unwrap_or_default();
    let differ: Vec<(&str, &str)> = (pinned.lines().zip(now.lines()))
        .filter(|(a, b)| a != b)
        .collect();
    assert!(
        differ.is_empty() && pinned.lines().count() == now.lines().count(),
        "{} outputs differ from {PINNED} (pinned, now): {:#?}",
        differ.len(),
        &differ[..differ.len().min(10)]
    );
}
