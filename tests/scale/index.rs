//! The evidence index keeps each file's verdicts so a second open does not verify again.
//! A verdict from it must be exactly what verifying gives, and it must never outlive
//! what it was made from: the file's bytes, the trusted keys, the lease files, the
//! profile, the aeplens version. An entry that is damaged or foreign is not trusted.

use crate::common;

use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::cli::check::json_report;
use aeplens::load::{Corpus, evidence_files, load_paths, load_paths_asking};
use aeplens::open::cache::{Config, Index};
use aeplens::open::kept::COMPLETED;
use aeplens::verify::prior::{Prior, Reuse};
use aeplens::verify::{
    AuthStatus, Keyring, Options, Profile, Report, Trees, verify_inputs_with, verify_paths,
};
use common::{aeplens, fixture_keys, fixtures};
use std::path::{Path, PathBuf};

/// The index as verification sees it.
fn prior(index: Option<&Index>) -> Option<&dyn Prior> {
    index.map(|i| i as &dyn Prior)
}

/// A fresh directory of this test's.
fn scratch(name: &str) -> PathBuf {
    let dir = common::run_dir(&format!("index-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The files' entries in `dir` (not what is kept for openings), sorted.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("opened-")
        })
        .collect();
    files.sort();
    files
}

/// The one entry in `dir`.
fn only_entry(dir: &Path) -> PathBuf {
    let files = entries(dir);
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// Where what completing an opening of `paths` gave is kept.
fn completed_key(paths: &[String]) -> String {
    Index::kept_key_of(COMPLETED, &load_paths(paths))
}

/// `paths` opened as `check` opens them, with `index`: the JSON report and what the
/// index did.
fn open(paths: &[String], keys: &Keyring, index: Option<&Index>) -> (String, Reuse) {
    let options = Options::default();
    let leases = SuppliedLeases::default();
    let trees = Trees::OnDisk;
    let ev = aeplens::open::kept::whole(
        paths,
        &common::setting_of(keys, &options, &leases),
        index,
        trees,
        &mut |_| {},
    );
    let json = json_report(&ev.report, &ev.findings, Profile::Forensic);
    (json, ev.reuse)
}

#[test]
fn a_reopen_from_the_index_says_exactly_what_verifying_says_on_every_fixture() {
    let keys = fixture_keys();
    let dir = scratch("every-fixture");
    let index = Index::new(dir.clone(), &Config::new(&keys, &Options::default(), &[]));
    let root = fixtures().display().to_string();
    let files = evidence_files(std::slice::from_ref(&root));
    assert!(files.len() > 100, "fixtures missing: {}", files.len());
    let with_records = |paths: &[String]| {
        load_paths(paths)
            .iter()
            .filter(|i| !i.records.is_empty())
            .count()
    };
    for file in &files {
        let paths = [file.display().to_string()];
        let (plain, _) = open(&paths, &keys, None);
        let (first, written) = open(&paths, &keys, Some(&index));
        let (again, reused) = open(&paths, &keys, Some(&index));
        let files = with_records(&paths);
        let records = plain.matches("\"canonical_sha256\"").count();
        assert_eq!(
            (written.written, written.reused),
            (files, 0),
            "{}",
            paths[0]
        );
        assert_eq!(written.verified, records, "{}", paths[0]);
        assert_eq!((reused.written, reused.verified), (0, 0), "{}", paths[0]);
        assert_eq!(reused.reused, records, "{}", paths[0]);
        assert!(plain == first, "{}: first open differs", paths[0]);
        assert!(plain == again, "{}: reopen differs", paths[0]);
    }
    // Every fixture at once (chains and confusable ids across files) from the index.
    let (plain, _) = open(std::slice::from_ref(&root), &keys, None);
    let (again, used) = open(std::slice::from_ref(&root), &keys, Some(&index));
    assert_eq!((used.verified, used.written), (0, 0));
    assert_eq!(used.reused, plain.matches("\"canonical_sha256\"").count());
    assert!(plain == again, "every fixture at once differs");
    // The explorer's path (a corpus loaded whole) reads the same entries.
    let inputs = load_paths(std::slice::from_ref(&root));
    let (report, used) = verify_inputs_with(
        &inputs,
        &keys,
        &Options::default(),
        prior(Some(&index)),
        None,
    );
    assert_eq!((used.verified, used.written), (0, 0));
    let whole = Evidence::verified(
        Corpus::new(inputs),
        report,
        &SuppliedLeases::default(),
        Vec::new(),
    );
    assert!(json_report(&whole.report, &whole.findings, Profile::Forensic) == plain);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `paths` verified as the commands load them, with `index`: the report and what the
/// index did.
fn reopen(paths: &[String], keys: &Keyring, index: Option<&Index>) -> (Report, Reuse) {
    let options = Options::default();
    let (_, report, used) = verify_paths(
        paths,
        keys,
        &options,
        prior(index),
        Trees::OnDisk,
        &mut |_, _| {},
    );
    (report, used)
}

/// A copy of a signed reference store in `dir`, its keys, and its report verified plainly.
fn signed_store(dir: &Path) -> (Vec<String>, Keyring, Report) {
    let store = dir.join("chain.ndjson");
    std::fs::copy(fixtures().join("reference/chain.ndjson"), &store).unwrap();
    let paths = vec![store.display().to_string()];
    let keys = fixture_keys();
    let (report, _) = reopen(&paths, &keys, None);
    assert!(
        report.records.len() > 1
            && report
                .records
                .iter()
                .all(|r| r.authenticity.status == Some(AuthStatus::Valid)),
        "the fixture is a signed, valid store"
    );
    (paths, keys, report)
}

/// Plants an entry for `paths` under `config` whose verdicts all say `invalid`, so a
/// test can see which records a later open took from it.
fn plant(paths: &[String], keys: &Keyring, config: &Config, dir: &Path) {
    let inputs = load_paths(paths);
    let mut report = aeplens::verify::verify_inputs(&inputs, keys, &Options::default(), None);
    for r in &mut report.records {
        std::sync::Arc::make_mut(&mut r.authenticity).status = Some(AuthStatus::Invalid);
        // The index holds each record's own verdicts, before the cross-record part.
        r.findings.clear();
    }
    let index = Index::new(dir.to_path_buf(), config);
    assert!(index.store(&inputs[0], &report.records, None).unwrap());
}

/// The first record's authenticity when `paths` are opened with the index in `dir`.
fn first_status(paths: &[String], keys: &Keyring, leases: &[String], dir: &Path) -> AuthStatus {
    let config = Config::new(keys, &Options::default(), leases);
    let index = Index::new(dir.to_path_buf(), &config);
    let (report, _) = reopen(paths, keys, Some(&index));
    report.records[0].authenticity.status.unwrap()
}

#[test]
fn an_entry_is_used_only_for_the_configuration_and_bytes_it_was_made_from() {
    let dir = scratch("invalidation");
    let index_dir = dir.join("index");
    let (paths, keys, _) = signed_store(&dir);
    let config = Config::new(&keys, &Options::default(), &[]);
    plant(&paths, &keys, &config, &index_dir);
    // Same everything: the planted verdict is what the index gives.
    assert_eq!(
        first_status(&paths, &keys, &[], &index_dir),
        AuthStatus::Invalid
    );

    // A keyring change: one more trusted key.
    let mut more = keys.clone();
    let another = ed25519_dalek::SigningKey::from_bytes(&[5; 32]).verifying_key();
    more.add("another-key", &aeplens::canon::hex(another.as_bytes()))
        .unwrap();
    assert_eq!(
        first_status(&paths, &more, &[], &index_dir),
        AuthStatus::Valid
    );
    // That open wrote the other keyring's entry. The planted entry copied over it is
    // another configuration's, whatever its file is called: not trusted.
    let planted_bytes = {
        let files = entries(&index_dir);
        assert_eq!(files.len(), 2);
        files
            .iter()
            .map(|f| std::fs::read(f).unwrap())
            .find(|b| String::from_utf8_lossy(b).contains("\"status\":\"invalid\""))
            .unwrap()
    };
    for file in entries(&index_dir) {
        std::fs::write(file, &planted_bytes).unwrap();
    }
    assert_eq!(
        first_status(&paths, &more, &[], &index_dir),
        AuthStatus::Valid
    );
    // A lease file given (its digest is part of the configuration).
    plant(&paths, &keys, &config, &index_dir);
    let lease = vec!["sha256-of-a-lease-file".to_string()];
    assert_eq!(
        first_status(&paths, &keys, &lease, &index_dir),
        AuthStatus::Valid
    );
    // Another aeplens version.
    let mut other = config.clone();
    other.aeplens = "0.0.0-another".into();
    let index = Index::new(index_dir.clone(), &other);
    let (report, _) = reopen(&paths, &keys, Some(&index));
    assert_eq!(
        report.records[0].authenticity.status,
        Some(AuthStatus::Valid)
    );
    // Another build of the same version (other sources).
    let mut other = config.clone();
    other.build = "another-build".into();
    let index = Index::new(index_dir.clone(), &other);
    assert!(index.lookup(&paths[0]).is_none());
    // Another profile.
    let current = Options {
        profile: Profile::Current,
    };
    let index = Index::new(index_dir.clone(), &Config::new(&keys, &current, &[]));
    assert!(index.lookup(&paths[0]).is_none());
    // The configuration it was made for still finds it.
    assert_eq!(
        first_status(&paths, &keys, &[], &index_dir),
        AuthStatus::Invalid
    );

    // A store that only grew: its old records keep their (planted) verdicts, the new one
    // alone is verified — streamed as the commands read, and loaded whole as the explorer
    // does, asking for the digest of the size the entry was made from.
    let file = Path::new(&paths[0]);
    let original = std::fs::read(file).unwrap();
    let n = original
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    let mut bytes = original.clone();
    let first_line = original.split(|&b| b == b'\n').next().unwrap().to_vec();
    bytes.extend_from_slice(&first_line);
    bytes.push(b'\n');
    std::fs::write(file, &bytes).unwrap();
    let index = Index::new(index_dir.clone(), &config);
    let planted = |report: &Report| {
        report.records[..n]
            .iter()
            .all(|r| r.authenticity.status == Some(AuthStatus::Invalid))
    };
    let (indexed, used) = reopen(&paths, &keys, Some(&index));
    assert_eq!((used.reused, used.verified, used.written), (n, 1, 1));
    assert!(planted(&indexed));
    assert_eq!(indexed.records[n], reopen(&paths, &keys, None).0.records[n]);
    std::fs::write(file, &original).unwrap();
    plant(&paths, &keys, &config, &index_dir);
    std::fs::write(file, &bytes).unwrap();
    let mut asked = |p: &str| index.covered(p);
    let inputs = load_paths_asking(&paths, &mut asked);
    let (whole, used) = verify_inputs_with(
        &inputs,
        &keys,
        &Options::default(),
        prior(Some(&index)),
        None,
    );
    assert_eq!((used.reused, used.verified), (n, 1));
    assert!(planted(&whole));
    // The same when the old last record had no newline after it: bytes after a JSON
    // object on its line are whitespace or make it no record, so it is the same record.
    let unterminated = original.strip_suffix(b"\n").unwrap();
    std::fs::write(file, unterminated).unwrap();
    plant(&paths, &keys, &config, &index_dir);
    let mut grown = unterminated.to_vec();
    grown.extend_from_slice(b"  \n");
    grown.extend_from_slice(&first_line);
    std::fs::write(file, &grown).unwrap();
    let (indexed, used) = reopen(&paths, &keys, Some(&index));
    assert_eq!((used.reused, used.verified), (n, 1));
    assert!(planted(&indexed));
    // Loaded without asking, only the same file would be recognised: all verified.
    std::fs::write(file, &original).unwrap();
    plant(&paths, &keys, &config, &index_dir);
    std::fs::write(file, &bytes).unwrap();
    let inputs = load_paths(&paths);
    let (_, used) = verify_inputs_with(
        &inputs,
        &keys,
        &Options::default(),
        prior(Some(&index)),
        None,
    );
    assert_eq!((used.reused, used.verified), (0, n + 1));

    // One edited byte in the last record: the file no longer begins with the bytes the
    // entry was made from, so every record is verified again.
    std::fs::write(file, &original).unwrap();
    plant(&paths, &keys, &config, &index_dir);
    let mut bytes = original.clone();
    let last_line = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap();
    let at = last_line + bytes[last_line..].iter().position(|&b| b == b'_').unwrap();
    bytes[at] = b'-';
    std::fs::write(file, &bytes).unwrap();
    let plain = reopen(&paths, &keys, None).0;
    let (indexed, used) = reopen(&paths, &keys, Some(&index));
    assert_eq!((used.reused, used.verified, used.written), (0, n, 1));
    assert_eq!(indexed.records, plain.records);
    // A line inserted above every record: same bytes, other places — all verified.
    plant(&paths, &keys, &config, &index_dir);
    let mut moved = b"\n".to_vec();
    moved.extend_from_slice(&bytes);
    std::fs::write(file, &moved).unwrap();
    let (indexed, used) = reopen(&paths, &keys, Some(&index));
    assert_eq!((used.reused, used.verified), (0, n));
    let plain = reopen(&paths, &keys, None).0;
    assert_eq!(indexed.records, plain.records);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_or_foreign_entry_is_not_trusted_and_is_written_anew() {
    let dir = scratch("damaged");
    let index_dir = dir.join("index");
    let (paths, keys, plain) = signed_store(&dir);
    let config = Config::new(&keys, &Options::default(), &[]);
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage); 5] = [
        ("a flipped byte in the verdicts", |b| {
            let body = b.iter().position(|&c| c == b'\n').unwrap() + 1;
            let at = body + b[body..].iter().position(|&c| c == b'"').unwrap() + 1;
            b[at] ^= 1;
        }),
        ("a flipped byte in the records' summary", |b| {
            let last = b.len() - 1;
            b[last] ^= 1;
        }),
        ("a truncated entry", |b| b.truncate(b.len() / 2)),
        ("another format", |b| {
            let cut = b.iter().position(|&c| c == b'\n').unwrap();
            let header = String::from_utf8(b[..cut].to_vec()).unwrap();
            let header = header.replacen("aeplens-index/", "aeplens-index/0", 1);
            b.splice(..cut, header.into_bytes());
        }),
        ("not an entry at all", |b| *b = b"{}\n[]".to_vec()),
    ];
    for (what, damage) in damages {
        plant(&paths, &keys, &config, &index_dir);
        let entry = only_entry(&index_dir);
        let mut bytes = std::fs::read(&entry).unwrap();
        damage(&mut bytes);
        std::fs::write(&entry, bytes).unwrap();
        let index = Index::new(index_dir.clone(), &config);
        assert!(index.lookup(&paths[0]).is_none(), "{what}: trusted");
        assert!(
            index.known(&paths[0], usize::MAX).is_none(),
            "{what}: trusted"
        );
        let (report, used) = reopen(&paths, &keys, Some(&index));
        assert_eq!((used.reused, used.written), (0, 1), "{what}");
        assert_eq!(report.records, plain.records, "{what}");
        // Written anew: sound, and used by the next open.
        assert!(index.lookup(&paths[0]).is_some(), "{what}: not rewritten");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An entry whose summary this build cannot read, though whole and as written (another
/// build's), is not used and is written anew — not kept, making every open slow.
#[test]
fn an_entry_this_build_cannot_read_is_written_anew() {
    let dir = scratch("unreadable");
    let index_dir = dir.join("index");
    let (paths, keys, plain) = signed_store(&dir);
    let config = Config::new(&keys, &Options::default(), &[]);
    let index = Index::new(index_dir.clone(), &config);
    reopen(&paths, &keys, Some(&index));
    assert!(
        index.known(&paths[0], usize::MAX).is_some(),
        "a summarised entry"
    );
    let entry = only_entry(&index_dir);
    let bytes = std::fs::read(&entry).unwrap();
    let cut = bytes.iter().position(|&c| c == b'\n').unwrap();
    // The last record's facts cut short, and the body's checksum made to agree.
    let body = &bytes[cut + 1..bytes.len() - 1];
    let header = String::from_utf8(bytes[..cut].to_vec()).unwrap();
    let at = header.find("\"body\":\"").unwrap() + 8;
    let sum = blake3::hash(body).to_hex().to_string();
    let header = format!("{}{sum}{}", &header[..at], &header[at + 64..]);
    std::fs::write(&entry, [header.as_bytes(), b"\n", body].concat()).unwrap();
    assert!(
        index.lookup(&paths[0]).is_some(),
        "the damage is checksummed"
    );
    assert!(index.known(&paths[0], usize::MAX).is_none());
    let (report, used) = reopen(&paths, &keys, Some(&index));
    assert_eq!((used.reused, used.written), (0, 1));
    assert_eq!(report.records, plain.records);
    assert!(
        index.known(&paths[0], usize::MAX).is_some(),
        "not written anew"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_commands_keep_the_index_in_the_cache_directory_and_never_in_the_evidence() {
    let dir = scratch("cli");
    let evidence = dir.join("evidence");
    std::fs::create_dir_all(&evidence).unwrap();
    std::fs::copy(
        fixtures().join("reference/chain.ndjson"),
        evidence.join("chain.ndjson"),
    )
    .unwrap();
    let keys = fixtures().join("reference/keys.json");
    let keys = keys.to_str().unwrap();
    let ev = evidence.to_str().unwrap();
    let index = dir.join("index");
    let ix = index.to_str().unwrap();
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "--format", "json", "--timings", "--keys", keys];
        args.extend_from_slice(extra);
        args.push(ev);
        aeplens(&args)
    };
    let (code, plain, err) = check(&["--no-index"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("evidence index not used"), "{err}");
    let (_, first, err) = check(&["--index-dir", ix]);
    let n = plain.matches("\"canonical_sha256\"").count();
    let said = |reused: usize, verified: usize, written: usize| {
        format!("{reused} records' verdicts reused, {verified} verified, {written} file(s) written")
    };
    assert!(err.contains(&said(0, n, 1)), "{err}");
    let (_, again, err) = check(&["--index-dir", ix]);
    assert!(err.contains(&said(n, 0, 0)), "{err}");
    assert!(plain == first && plain == again);
    // A store that grew: only the new record is verified, and its entry is replaced.
    let store = evidence.join("chain.ndjson");
    let mut text = std::fs::read_to_string(&store).unwrap();
    let first_line = text.lines().next().unwrap().to_string();
    text.push_str(&first_line);
    text.push('\n');
    std::fs::write(&store, text).unwrap();
    let (_, grown, err) = check(&["--index-dir", ix]);
    assert!(err.contains(&said(n, 1, 1)), "{err}");
    let (_, grown_plain, _) = check(&["--no-index"]);
    assert!(grown != plain && grown == grown_plain);
    only_entry(&index);
    // Nothing was written beside the evidence.
    assert_eq!(entries(&evidence), [evidence.join("chain.ndjson")]);
    // An index directory inside the evidence is refused, before anything is read.
    let inside = evidence.join("cache");
    let (code, _, err) = check(&["--index-dir", inside.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("refusing --index-dir"), "{err}");
    assert!(!inside.exists());
    // A directory other users may write to is not used, and the command says so.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let shared = dir.join("shared");
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let (code, out, err) = check(&["--index-dir", shared.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("writable by other users"), "{err}");
        assert!(err.contains("evidence index not used"), "{err}");
        assert!(out == grown_plain);
        assert!(entries(&shared).is_empty());
    }
    // An index that cannot be written is said, and the command goes on.
    let not_a_dir = dir.join("a-file");
    std::fs::write(&not_a_dir, "x").unwrap();
    let (code, out, err) = check(&["--index-dir", not_a_dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("index not written for"), "{err}");
    assert!(out == grown_plain);
    // Without --index-dir, the index is under $XDG_CACHE_HOME/aeplens/index.
    let (_, _, err) = aeplens(&["findings", "--keys", keys, ev]);
    assert!(!err.contains("index"), "{err}");
    let cache = common::run_dir("cache");
    assert!(cache.join("aeplens/index").is_dir());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unchanged_store_is_reopened_from_its_entry_without_reading_a_record() {
    let dir = scratch("unchanged");
    let (paths, keys, _) = signed_store(&dir);
    // A broken line too: its load error comes back from the entry, file:line and all.
    let mut bytes = std::fs::read(&paths[0]).unwrap();
    bytes.extend_from_slice(b"{\"run_id\": oops}\n");
    std::fs::write(&paths[0], &bytes).unwrap();
    let index = Index::new(
        dir.join("index"),
        &Config::new(&keys, &Options::default(), &[]),
    );
    // Records handed over parsed, and what came back.
    let open = |index: Option<&Index>| {
        let mut parsed = 0;
        let (inputs, report, used) = verify_paths(
            &paths,
            &keys,
            &Options::default(),
            prior(index),
            Trees::OnDisk,
            &mut |_, n| {
                parsed = n;
            },
        );
        (inputs, report, used, parsed)
    };
    let (plain_inputs, plain, _, n) = open(None);
    assert!(n > 1 && plain_inputs[0].errors.len() == 1);
    let (_, first, used, _) = open(Some(&index));
    assert_eq!((used.verified, used.written), (n, 1));
    assert_eq!(first.records, plain.records);
    let (inputs, again, used, parsed) = open(Some(&index));
    assert_eq!((used.reused, used.verified, parsed), (n, 0, 0));
    assert_eq!(again.records, plain.records);
    assert_eq!(inputs[0].errors, plain_inputs[0].errors);
    assert_eq!(
        (inputs[0].sha256.as_ref(), inputs[0].bytes),
        (plain_inputs[0].sha256.as_ref(), plain_inputs[0].bytes)
    );
    for (known, read) in inputs[0].records.iter().zip(&plain_inputs[0].records) {
        assert!(!known.is_held());
        assert_eq!((&known.source, known.span), (&read.source, read.span));
        assert_eq!(known.facts(), read.facts());
        // Asked for, its JSON is read from the file, as verified.
        assert_eq!(known.json(), read.json());
    }
    // One byte changed in place (same size): the file is read and verified again whole.
    let at = bytes.iter().position(|&b| b == b'r').unwrap();
    bytes[at] = b'R';
    std::fs::write(&paths[0], &bytes).unwrap();
    let (_, edited, used, parsed) = open(Some(&index));
    assert_eq!((used.reused, used.verified, parsed), (0, n, n));
    assert_eq!(edited.records, open(None).1.records);
    // An entry without the summary (written from a file loaded whole, without its BLAKE3)
    // is written again with it by the next open, and the one after parses nothing.
    let inputs = load_paths(&paths);
    let report = aeplens::verify::verify_inputs(&inputs, &keys, &Options::default(), None);
    assert!(index.store(&inputs[0], &report.records, None).unwrap());
    let (_, _, used, parsed) = open(Some(&index));
    assert_eq!((used.reused, used.written, parsed), (n, 1, n));
    let (_, _, used, parsed) = open(Some(&index));
    assert_eq!((used.reused, used.written, parsed), (n, 0, 0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn findings_come_from_the_index_only_for_the_same_opening_and_configuration() {
    let dir = scratch("set");
    let (paths, keys, _) = signed_store(&dir);
    let config = Config::new(&keys, &Options::default(), &[]);
    let index = Index::new(dir.join("index"), &config);
    let evidence = |index: Option<&Index>, keys: &Keyring| {
        let leases = SuppliedLeases::default();
        let (options, trees) = (Options::default(), Trees::OnDisk);
        aeplens::open::kept::whole(
            &paths,
            &common::setting_of(keys, &options, &leases),
            index,
            trees,
            &mut |_| {},
        )
    };
    let plain = evidence(None, &keys);
    assert!(
        plain
            .report
            .records
            .iter()
            .all(|r| r.semantic.status == Some(aeplens::verify::CheckStatus::Pass))
    );
    evidence(Some(&index), &keys);
    let set = Index::opening_name(&load_paths(&paths)).unwrap();
    let key = completed_key(&paths);
    // What was kept is what completing gave.
    let kept: serde_json::Value = index.recall(&key, &set).unwrap();
    assert_eq!(kept["records"], plain.report.records.len());
    let own: Vec<&str> = (plain.report.records.iter().flat_map(|r| &r.findings))
        .map(|f| f.fingerprint.as_str())
        .collect();
    assert_eq!(kept["fingerprints"], serde_json::json!(own));
    assert_eq!(
        kept["rewritten"],
        serde_json::json!([]),
        "no copy rewritten"
    );
    assert_eq!(
        kept["findings"],
        serde_json::to_value(&plain.findings).unwrap()
    );
    // Plant a completion that says record 0's semantic axis failed: the next open of the
    // same set says so (so it was taken from the index) …
    let mut forged = kept.clone();
    forged["rewritten"] =
        serde_json::json!([[0, {"evaluated": true, "status": "fail", "violations": []}]]);
    index.remember(&key, &set, &forged).unwrap();
    let status = |ev: &Evidence| ev.report.records[0].semantic.status.unwrap().name();
    assert_eq!(status(&evidence(Some(&index), &keys)), "fail");
    // … under another configuration it is not used,
    let mut other_keys = keys.clone();
    let another = ed25519_dalek::SigningKey::from_bytes(&[5; 32]).verifying_key();
    other_keys
        .add("another-key", &aeplens::canon::hex(another.as_bytes()))
        .unwrap();
    let other = Index::new(
        dir.join("index"),
        &Config::new(&other_keys, &Options::default(), &[]),
    );
    assert_eq!(status(&evidence(Some(&other), &other_keys)), "pass");
    // … nor once a byte of the evidence changed (another set: completed anew).
    let mut bytes = std::fs::read(&paths[0]).unwrap();
    bytes.extend_from_slice(b"\n");
    std::fs::write(&paths[0], &bytes).unwrap();
    assert_eq!(status(&evidence(Some(&index), &keys)), "pass");
    // A damaged completion is not trusted.
    index.remember(&key, &set, &forged).unwrap();
    std::fs::write(&paths[0], &bytes[..bytes.len() - 1]).unwrap();
    let slot = std::fs::read_dir(dir.join("index"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("opened-")
        })
        .find(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains(r#""status":"fail""#)
        })
        .unwrap();
    let text = std::fs::read_to_string(&slot).unwrap();
    std::fs::write(
        &slot,
        text.replace(r#""status":"fail""#, r#""status":"fall""#),
    )
    .unwrap();
    assert_eq!(status(&evidence(Some(&index), &keys)), "pass");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of the signed reference chain whose last line is broken (a load error, said on
/// every run) in `evidence/` of a fresh scratch directory: the directory, the store and
/// its bytes.
fn store_with_a_load_error(name: &str) -> (PathBuf, PathBuf, Vec<u8>) {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("evidence")).unwrap();
    let store = dir.join("evidence/chain.ndjson");
    let mut bytes = std::fs::read(fixtures().join("reference/chain.ndjson")).unwrap();
    bytes.extend_from_slice(b"{\"broken\": \n");
    std::fs::write(&store, &bytes).unwrap();
    (dir, store, bytes)
}

/// `command` (`findings`, `chains`) run on `evidence` (a store, or a directory holding
/// one) with the index in `ix`, as JSON and as text, quiet or not: the same output, load
/// errors and exit code as without the index, on the run that keeps its answer and on the
/// one after, which reads it without reading the store's entry (damaged just before, it
/// is left as it is, not written anew).
fn answers_as_without_the_index(command: &[&str], evidence: &Path, ix: &Path) {
    let keys = fixtures().join("reference/keys.json");
    let run = |extra: &[&str]| {
        let mut args = command.to_vec();
        args.extend(["--keys", keys.to_str().unwrap()]);
        args.extend_from_slice(extra);
        args.push(evidence.to_str().unwrap());
        aeplens(&args)
    };
    for format in [&["--format", "json"][..], &["--format", "text"], &["-q"]] {
        let plain = run(&[format, &["--no-index"]].concat());
        assert!(plain.2.contains("chain.ndjson:12:12") || plain.2.contains("1 load error"));
        let with_index = [format, &["--index-dir", ix.to_str().unwrap()]].concat();
        assert_eq!(
            run(&with_index),
            plain,
            "{command:?} {format:?}: first open"
        );
        let entry = only_entry(ix);
        let mut damaged = std::fs::read(&entry).unwrap();
        *damaged.last_mut().unwrap() ^= 1;
        std::fs::write(&entry, &damaged).unwrap();
        assert_eq!(run(&with_index), plain, "{command:?} {format:?}: reopen");
        assert!(
            std::fs::read(&entry).unwrap() == damaged,
            "{command:?}: entry read"
        );
        *damaged.last_mut().unwrap() ^= 1;
        std::fs::write(&entry, &damaged).unwrap();
    }
}

#[test]
fn chains_of_an_unchanged_opening_are_answered_from_the_index_alone() {
    let (dir, _, _) = store_with_a_load_error("recall-chains");
    answers_as_without_the_index(&["chains"], &dir.join("evidence"), &dir.join("index"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn show_of_an_unchanged_opening_is_answered_from_the_index_alone() {
    let (dir, _, _) = store_with_a_load_error("recall-show");
    let (evidence, ix) = (dir.join("evidence"), dir.join("index"));
    answers_as_without_the_index(&["show", "C002"], &evidence, &ix);
    answers_as_without_the_index(
        &["show", "C002", "--run", "run-devfix-chain-1123"],
        &evidence,
        &ix,
    );
    // What is not there is said as without the index (no action; none in that run).
    answers_as_without_the_index(&["show", "C999"], &evidence, &ix);
    answers_as_without_the_index(&["show", "C002", "--run", "elsewhere"], &evidence, &ix);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn after_a_first_check_show_and_chains_answer_from_the_index_alone() {
    let (dir, _, _) = store_with_a_load_error("after-check");
    let (evidence, ix) = (dir.join("evidence"), dir.join("index"));
    let keys = fixtures().join("reference/keys.json");
    let run = |command: &[&str], index: &[&str]| {
        let mut args = command.to_vec();
        args.extend(["--format", "json", "--keys", keys.to_str().unwrap()]);
        args.extend_from_slice(index);
        args.push(evidence.to_str().unwrap());
        aeplens(&args)
    };
    let with_index = ["--index-dir", ix.to_str().unwrap()];
    let checked = run(&["check"], &with_index);
    assert!(checked.2.contains("chain.ndjson:12:12"), "{checked:?}");
    // The store's entry damaged: a command that opened the store would write it anew.
    let entry = only_entry(&ix);
    let mut damaged = std::fs::read(&entry).unwrap();
    *damaged.last_mut().unwrap() ^= 1;
    std::fs::write(&entry, &damaged).unwrap();
    for command in [&["show", "C003"][..], &["chains"]] {
        let plain = run(command, &["--no-index"]);
        assert!(plain.1.len() > 100, "{plain:?}");
        assert_eq!(run(command, &with_index), plain, "{command:?}");
    }
    assert!(std::fs::read(&entry).unwrap() == damaged, "entry read");
    // What is kept for the opening (its completion, chains as JSON and as text, each
    // action's views) is kept once per set of files: a store that grew replaces it.
    let kept = || {
        let all = std::fs::read_dir(&ix).unwrap().map(|e| e.unwrap().path());
        let opened = |p: &PathBuf| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("opened-")
        };
        all.filter(opened).count()
    };
    assert_eq!(kept(), 4);
    let store = evidence.join("chain.ndjson");
    let mut grown = std::fs::read(&store).unwrap();
    grown.extend_from_slice(b"{\"also\": \"broken\"\n");
    std::fs::write(&store, &grown).unwrap();
    assert!(run(&["check"], &with_index).2.contains("chain.ndjson:13"));
    assert_eq!(kept(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn findings_of_an_unchanged_opening_are_answered_from_the_index_alone() {
    let (dir, store, mut bytes) = store_with_a_load_error("recall-findings");
    let ix = dir.join("index");
    answers_as_without_the_index(&["findings"], &store, &ix);
    let keys_file = fixtures().join("reference/keys.json");
    let (keys, ev) = (keys_file.to_str().unwrap(), store.to_str().unwrap());
    let findings = |extra: &[&str]| {
        let mut args = vec!["findings", "--format", "json", "--keys", keys];
        args.extend_from_slice(extra);
        args.push(ev);
        aeplens(&args)
    };
    let with_index = ["--index-dir", ix.to_str().unwrap()];
    let plain = findings(&["--no-index"]);
    assert!(plain.1.contains("F-UNAPPROVED-MUTATION"), "{plain:?}");
    let gate = [&with_index[..], &["--fail-on", "high"]].concat();
    assert_eq!(findings(&gate).0, 1);
    // Planted findings show through, so the answer came from the index …
    let config = Config::new(&common::keyring(&keys_file), &Options::default(), &[]);
    let index = Index::new(ix.clone(), &config);
    let opening = Index::opening_name(&load_paths(&[ev.to_string()])).unwrap();
    let key = completed_key(&[ev.to_string()]);
    let mut kept: serde_json::Value = index.recall(&key, &opening).unwrap();
    kept["findings"][0]["message"] = "planted".into();
    index.remember(&key, &opening, &kept).unwrap();
    assert!(findings(&with_index).1.contains("planted"));
    let paths = [ev.to_string()];
    let recalled = aeplens::open::kept::recall_findings(&paths, &index).unwrap();
    assert_eq!(recalled.findings[0].message, "planted");
    assert!(recalled.errors[0].contains("chain.ndjson:12:12"));
    // … only while the file is byte for byte the same: not after a byte changed in place
    // (the size, and what the entry says of the file, are the same: its BLAKE3 is not).
    let colon = bytes.len() - 3;
    bytes[colon] = b' ';
    std::fs::write(&store, &bytes).unwrap();
    let edited = findings(&with_index);
    assert!(
        !edited.1.contains("planted") && edited.1 == plain.1,
        "{edited:?}"
    );
    let recalled = aeplens::open::kept::recall_findings(&paths, &index).unwrap();
    assert!(recalled.findings.iter().all(|f| f.message != "planted"));
    // A file changed since its last open has nothing to recall.
    bytes[colon] = b'!';
    std::fs::write(&store, &bytes).unwrap();
    assert!(aeplens::open::kept::recall_findings(&paths, &index).is_none());
    // Nor for another configuration, or an input that is not a store's file.
    let other = Index::new(
        ix.clone(),
        &Config::new(&Keyring::default(), &Options::default(), &[]),
    );
    assert!(aeplens::open::kept::recall_findings(&paths, &other).is_none());
    assert!(aeplens::open::kept::recall_findings(&["-".to_string()], &index).is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_record_alone_in_its_file_is_verified_again_once_it_has_company() {
    let dir = scratch("alone");
    let store = dir.join("one.ndjson");
    // A well-formed record without its signature: unsigned, judged on its own when alone.
    let signed = std::fs::read_to_string(fixtures().join("reference/chain.ndjson")).unwrap();
    let mut record: serde_json::Value =
        serde_json::from_str(signed.lines().next().unwrap()).unwrap();
    record.as_object_mut().unwrap().remove("signature");
    let line = format!("{record}\n");
    std::fs::write(&store, &line).unwrap();
    let paths = vec![store.display().to_string()];
    let keys = Keyring::default();
    let index = Index::new(
        dir.join("index"),
        &Config::new(&keys, &Options::default(), &[]),
    );
    let open = || reopen(&paths, &keys, Some(&index));
    let (alone, used) = open();
    assert_eq!((used.verified, used.written), (1, 1));
    std::fs::write(&store, line.repeat(2)).unwrap();
    let (together, used) = open();
    assert_eq!((used.reused, used.verified), (0, 2));
    let plain = reopen(&paths, &keys, None).0;
    assert_eq!(together.records, plain.records);
    // The verdict differs with company, which is why it had to be made again.
    assert_ne!(
        serde_json::to_value(&alone.records[0].authenticity).unwrap(),
        serde_json::to_value(&plain.records[0].authenticity).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_explorer_reopens_from_the_index_with_the_same_verdicts() {
    use aeplens::tui::state::Action;
    let dir = scratch("explorer");
    let paths = vec![fixtures().join("reference-stores").display().to_string()];
    let keys = fixture_keys();
    // The worker's verdicts and findings, and the phases it said it was in.
    let run = |index: Option<PathBuf>| {
        let (tx, rx) = std::sync::mpsc::channel();
        let setting = aeplens::open::Setting {
            trust: keys.clone(),
            cache: index.map_or(aeplens::open::Cache::Off, aeplens::open::Cache::Dir),
            ..Default::default()
        };
        aeplens::tui::worker::spawn_worker(paths.clone(), std::sync::Arc::new(setting), tx);
        let mut phases = Vec::new();
        loop {
            match rx.recv().unwrap() {
                Action::Progress(p) => phases.push(p.phase),
                Action::Verified(report, findings, _) => {
                    return (serde_json::to_value(&*report).unwrap(), findings, phases);
                }
                _ => {}
            }
        }
    };
    let (plain, plain_findings, _) = run(None);
    let (first, first_findings, phases) = run(Some(dir.clone()));
    assert!(
        !phases.iter().any(|p| p.contains("evidence index")),
        "{phases:?}"
    );
    assert!(entries(&dir).len() > 1);
    let (again, again_findings, phases) = run(Some(dir.clone()));
    assert!(
        phases.iter().any(|p| p.contains("evidence index")),
        "{phases:?}"
    );
    assert!(plain == first && plain == again);
    assert!(plain_findings == first_findings && plain_findings == again_findings);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn entries_are_private_and_unused_ones_are_forgotten() {
    let dir = scratch("housekeeping");
    let index_dir = dir.join("index");
    let (paths, keys, _) = signed_store(&dir);
    let config = Config::new(&keys, &Options::default(), &[]);
    let index = Index::new(index_dir.clone(), &config);
    let open = || reopen(&paths, &keys, Some(&index));
    open();
    let entry = only_entry(&index_dir);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&index_dir), 0o700);
        assert_eq!(mode(&entry), 0o600);
    }
    // An entry of a file nobody opened for longer than the index keeps one.
    let old = index_dir.join(format!("{}.json", "0".repeat(40)));
    std::fs::copy(&entry, &old).unwrap();
    let long_ago = std::time::SystemTime::now() - aeplens::open::cache::UNUSED * 2;
    let age = |p: &Path, t| {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    };
    age(&old, long_ago);
    // Reading an entry counts as using it: the store's own entry, aged too, survives.
    age(&entry, long_ago);
    let (_, used) = open();
    assert_eq!(used.written, 0);
    assert!(
        entry.exists() && old.exists(),
        "nothing is written, nothing removed"
    );
    // The next entry written clears the unused one away.
    std::fs::write(dir.join("other.ndjson"), std::fs::read(&paths[0]).unwrap()).unwrap();
    let other = vec![dir.join("other.ndjson").display().to_string()];
    let (_, used) = reopen(&other, &keys, Some(&index));
    assert_eq!(used.written, 1);
    assert!(!old.exists(), "an unused entry is forgotten");
    assert!(entry.exists(), "an entry just read is kept");
    // A directory others may write to is not read: they could plant verdicts there.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert!(index.lookup(&paths[0]).is_some());
        let shared = std::fs::Permissions::from_mode(0o777);
        std::fs::set_permissions(&index_dir, shared).unwrap();
        assert!(index.lookup(&paths[0]).is_none());
        let (_, used) = reopen(&paths, &keys, Some(&index));
        assert_eq!(used.reused, 0);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
