//! Times the phases of `aeplens check` on a store (release build):
//!
//! ```text
//! cargo run --release --example gen_store -- /tmp/store.ndjson 20000
//! cargo run --release --example bench_check -- /tmp/store.keys.json /tmp/store.ndjson
//! ```
//! Prints load, verify and report times and records per second, and what the link
//! graph (verification.md e.2, built inside verify) costs of the whole. Also times strict
//! Ed25519 alone on this machine, and the floor: what no verifier can skip, on the same
//! store in the same run — read, parse, SHA-256 and one strict Ed25519 verification per
//! record on every core — against `check --format json` done the way the command does it
//! (and each of its phases: the verification alone, the analysis and findings);
//! and that floor with the canonical form every AEP verifier must make added (C1 bytes,
//! their SHA-256, the signature over them), to show how much of the gap is that.

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
    // As the binary does (src/main.rs, `PURGE_DELAY_MS`): mimalloc hands freed memory
    // back after 100 ms.
    // SAFETY: called once, before any other thread exists.
    unsafe { libmimalloc_sys::mi_option_set(15, 100) };
    let mut keys = aeplens::verify::Keyring::default();
    keys.add_file(&args[0]).expect("keyring");
    // First, in a fresh process: `check` against the floor.
    floor(&keys, &args[1..]);
    let start = Instant::now();
    let inputs = aeplens::load::load_paths(&args[1..]);
    let load = start.elapsed();
    let t = Instant::now();
    let report =
        aeplens::verify::verify_inputs(&inputs, &keys, &aeplens::verify::Options::default(), None);
    let verify = t.elapsed();
    let t = Instant::now();
    let text = aeplens::cli::check::text_report(&report, &[], None, None);
    let output = t.elapsed();
    let total = start.elapsed();
    let n = report.records.len();
    let records: Vec<&aeplens::model::Record> = inputs.iter().flat_map(|i| &i.records).collect();
    let hashes = report.canonical_hashes();
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

/// One run of `check` ([`check`]).
struct Run {
    took: std::time::Duration,
    /// CPU time over wall time: how many cores were busy (`None`: not known here).
    cores: Option<f64>,
    /// Bytes of JSON written.
    json: usize,
    phases: Vec<(&'static str, std::time::Duration)>,
}

impl Run {
    /// How many cores were busy, in words.
    fn cores(&self) -> String {
        self.cores.map_or("cores busy not known".into(), |c| {
            format!("{c:.2} cores busy")
        })
    }
}

/// The CPU time this process has used (user and system), from `/proc/self/stat` (Linux,
/// in ticks of 1/100 s); `None` elsewhere.
fn cpu_time() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

/// `check --format json` as the command does it ([`aeplens::open::open`] for its report:
/// streamed load and verification, the analysis in batches, the report written out while
/// what is left to keep in the index `cache` names is kept).
fn check(keys: &aeplens::verify::Keyring, paths: &[String], cache: aeplens::open::Cache) -> Run {
    let setting = aeplens::open::Setting {
        trust: keys.clone(),
        cache,
        ..Default::default()
    };
    let cpu = cpu_time();
    let t = Instant::now();
    let need = aeplens::open::Need::Report(aeplens::cli::check::BUDGET);
    let (mut ev, _) = aeplens::open::open(&setting, paths, need, &mut |_| {});
    let to_keep = ev.take_to_keep();
    let write = || {
        let (_, report, findings) = ev.parts();
        let mut json = std::io::BufWriter::new(Counter(0));
        aeplens::cli::check::write_json_report(
            &mut json,
            report,
            findings,
            aeplens::verify::Profile::Forensic,
            None,
        )
        .expect("report");
        json.into_inner().expect("flush").0
    };
    let keep = || {
        if let Some(to_keep) = to_keep {
            ev.keep(to_keep);
        }
    };
    let (json, ()) = rayon::join(write, keep);
    let took = t.elapsed();
    let cores = cpu
        .zip(cpu_time())
        .map(|(a, b)| (b - a) / took.as_secs_f64());
    // The process ends here in the command: its memory is not freed piece by piece.
    let phases = ev.timings().to_vec();
    std::mem::forget(ev);
    Run {
        took,
        cores,
        json,
        phases,
    }
}

/// `check --format json` without the index, with it (first open, in a fresh index
/// directory), and again (reopen), then the floor on the same files; prints each and its
/// ratio to the floor (the targets: 1.3× without the index; 2.0× for a first open on
/// incident-shaped evidence).
fn floor(keys: &aeplens::verify::Keyring, paths: &[String]) {
    use rayon::prelude::*;
    use sha2::Digest;
    let plain = check(keys, paths, aeplens::open::Cache::Off);
    let dir = std::env::temp_dir().join(format!("aeplens-bench-index-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let first = check(keys, paths, aeplens::open::Cache::Dir(dir.clone()));
    let again = check(keys, paths, aeplens::open::Cache::Dir(dir.clone()));
    let _ = std::fs::remove_dir_all(&dir);
    let check = plain.took;
    // Signatures over each line, made before the clock starts (the floor verifies one each).
    let key = SigningKey::from_bytes(&[9u8; 32]);
    let vk = key.verifying_key();
    let bytes: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect();
    let sigs: Vec<Vec<ed25519_dalek::Signature>> = bytes
        .iter()
        .map(|b| b.par_split(|c| *c == b'\n').map(|l| key.sign(l)).collect())
        .collect();
    let (floor, verified) = over_lines(paths, &sigs, |line, sig| {
        let parsed = std::str::from_utf8(line)
            .ok()
            .and_then(|text| aeplens::load::parser::parse(text).ok())
            .is_some();
        std::hint::black_box(sha2::Sha256::digest(line));
        parsed && vk.verify_strict(line, sig).is_ok()
    });
    println!(
        "check --format json {check:.2?} ({} bytes of JSON, {}); floor {floor:.2?} (read + parse + SHA-256 + strict Ed25519 for {verified} records on {} threads); check = {:.2}x the floor",
        plain.json,
        plain.cores(),
        rayon::current_num_threads(),
        check.as_secs_f64() / floor.as_secs_f64()
    );
    for (phase, took) in &plain.phases {
        println!(
            "  check's {phase}: {took:.2?} = {:.2}x the floor",
            took.as_secs_f64() / floor.as_secs_f64()
        );
    }
    println!(
        "check with the index: first open {:.2?} ({}) = {:.2}x the floor; reopen {:.2?} ({})",
        first.took,
        first.cores(),
        first.took.as_secs_f64() / floor.as_secs_f64(),
        again.took,
        again.cores(),
    );
    // The same with the canonical form every AEP verifier must make: a record's signature
    // is over its canonical bytes, and a record written in the emitter's order is not
    // canonical as stored. Signatures made over those bytes before the clock starts.
    let canonical = |line: &[u8]| {
        let json = aeplens::load::parser::parse(std::str::from_utf8(line).ok()?).ok()?;
        let (excluded, c1) = (aeplens::canon::CHAIN_EXCLUDED, aeplens::canon::Variant::C1);
        Some(aeplens::canon::canonical_bytes_without(&json, excluded, c1))
    };
    let sigs: Vec<Vec<Option<ed25519_dalek::Signature>>> = bytes
        .iter()
        .map(|b| {
            b.par_split(|c| *c == b'\n')
                .map(|l| canonical(l).map(|c| key.sign(&c)))
                .collect()
        })
        .collect();
    let (with_canonical, verified) = over_lines(paths, &sigs, |line, sig| {
        std::hint::black_box(sha2::Sha256::digest(line));
        let Some(bytes) = canonical(line) else {
            return false;
        };
        std::hint::black_box(sha2::Sha256::digest(&bytes));
        sig.is_some_and(|sig| vk.verify_strict(&bytes, &sig).is_ok())
    });
    println!(
        "floor with the canonical form {with_canonical:.2?} (also C1 canonical bytes and their SHA-256, the Ed25519 over them, for {verified} records) = {:.2}x the floor; check = {:.2}x it",
        with_canonical.as_secs_f64() / floor.as_secs_f64(),
        check.as_secs_f64() / with_canonical.as_secs_f64()
    );
}

/// Reads each of `paths` and runs `check` on its lines on every core, each with its item
/// of `per_line` (made beforehand, line by line); how long it took and how many passed.
fn over_lines<S: Sync>(
    paths: &[String],
    per_line: &[Vec<S>],
    check: impl Fn(&[u8], &S) -> bool + Sync,
) -> (std::time::Duration, usize) {
    use rayon::prelude::*;
    let t = Instant::now();
    let mut passed = 0;
    for (path, items) in paths.iter().zip(per_line) {
        let data = std::fs::read(path).expect("read");
        let lines: Vec<&[u8]> = data.split(|c| *c == b'\n').collect();
        passed += lines
            .par_iter()
            .zip(items)
            .filter(|(line, item)| check(line, item))
            .count();
    }
    (t.elapsed(), passed)
}

/// A writer that only counts the bytes it is given (the report's destination, as
/// `> /dev/null` is the command's).
#[derive(Debug)]
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
