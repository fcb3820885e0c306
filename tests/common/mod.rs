//! Helpers shared by the integration tests.
#![allow(dead_code)]

#[cfg(feature = "tables")]
pub mod table_rows;

use aeplens::load::load_paths;
use aeplens::verify::{Keyring, Options, Report, verify_inputs};
use std::path::{Path, PathBuf};

/// `tests/fixtures/`: copies of the shared fixtures (see its README), so a fresh clone
/// tests itself.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Whether an outside program a test drives is there: in CI (`CI` set) it must be
/// (`scripts/test` installs it); elsewhere its absence skips the test, said on stderr.
pub fn present(ready: bool, what: &str) -> bool {
    if !ready {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} is required in CI (scripts/test installs it)"
        );
        eprintln!("{what} not installed: skipping");
    }
    ready
}

/// Runs a Python script (`python -c SCRIPT ARGS…`) that prints JSON, and reads it; the
/// script's failure fails the test with its stderr.
pub fn python_json(python: &Path, script: &str, args: &[&str]) -> serde_json::Value {
    let run = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_slice(&run.stdout).unwrap()
}

/// Reads a JSON file with serde_json.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Loads a keyring file without consulting the environment.
pub fn keyring(path: &Path) -> Keyring {
    let mut k = Keyring::default();
    k.add_file(path.to_str().unwrap()).unwrap();
    k
}

/// Every fixture set's trusted keys (and the demo's), without the environment.
pub fn fixture_keys() -> Keyring {
    let mut keys = Keyring::default();
    for file in [
        "reference/keys.json",
        "reference-stores/keys.json",
        "ecosystem/keyring.json",
        "rfc-final/keys.json",
        "../../assets/demo/keys.json",
    ] {
        keys.add_file(fixtures().join(file).to_str().unwrap())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    keys
}

/// Every evidence file under `dir`, depth first in name order (keyrings, lease files,
/// manifests, expected verdicts, schemas and the filter language's questions left out), each with the keyring nearest to
/// it (`keys.json` in its folder or a folder above, from `keys` down).
pub fn evidence_files(dir: &Path, keys: Option<PathBuf>) -> Vec<(PathBuf, Option<PathBuf>)> {
    let keys = Some(dir.join("keys.json")).filter(|k| k.is_file()).or(keys);
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    let mut out = Vec::new();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let json = p.extension().is_some_and(|e| {
            ["ndjson", "jsonl", "json"]
                .iter()
                .any(|x| e.eq_ignore_ascii_case(x))
        });
        let not_evidence = [
            "keys.json",
            "expected.json",
            "manifest.json",
            "canonical_texts.json",
            "questions.json",
        ]
        .contains(&name.as_str())
            || name.contains("leases")
            || name.contains("schema");
        if p.is_dir() {
            out.extend(evidence_files(&p, keys.clone()));
        } else if json && !not_evidence {
            out.push((p, keys.clone()));
        }
    }
    out
}

/// Loads and verifies one path.
pub fn verify_path(path: &Path, keys: &Keyring) -> Report {
    let inputs = load_paths(&[path.display().to_string()]);
    verify_inputs(&inputs, keys, &Options::default(), None)
}

/// What the analysis tests open: the corpus of `paths`, a keyring file, a lease file.
pub fn inputs(
    paths: &[&str],
    keys: Option<&str>,
    leases: Option<&str>,
) -> (
    aeplens::load::Corpus,
    Keyring,
    aeplens::analysis::lease::SuppliedLeases,
) {
    let keys = keys.map(|k| keyring(Path::new(k))).unwrap_or_default();
    let mut supplied = aeplens::analysis::lease::SuppliedLeases::default();
    if let Some(l) = leases {
        assert!(supplied.add_file(Path::new(l)).is_empty());
    }
    let paths: Vec<String> = paths.iter().map(std::string::ToString::to_string).collect();
    (
        aeplens::load::Corpus::new(load_paths(&paths)),
        keys,
        supplied,
    )
}

/// `aeplens export --format parquet -q --no-index --keys KEYS -o OUT STORE`: the exit
/// code, stdout and stderr.
pub fn export_parquet(keys: &Path, out: &Path, store: &Path) -> (i32, String, String) {
    aeplens(&[
        "export",
        "--format",
        "parquet",
        "-q",
        "--no-index",
        "--keys",
        keys.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        store.to_str().unwrap(),
    ])
}

/// Runs the real binary: (exit code, stdout, stderr). Its data and cache directories are
/// the test run's, so no review a person made on this machine enters a golden, and the
/// evidence index the run writes is the run's own (a second run of a command reads it).
pub fn aeplens(args: &[&str]) -> (i32, String, String) {
    let data = run_dir("data");
    let cache = run_dir("cache");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .args(args)
        .env_remove("NO_COLOR")
        .env("XDG_DATA_HOME", data)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// This test process's own `kind` directory for the binary it runs (under the build's
/// scratch directory, so that `cargo clean` takes them and `/tmp` is not littered).
pub fn run_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("aeplens-{kind}-{}", std::process::id()))
}

/// The demo's evidence with its keys and leases, as `report`/`export` arguments.
pub const DEMO: [&str; 5] = [
    "--keys",
    "assets/demo/keys.json",
    "--leases",
    "assets/demo/leases.ndjson",
    "assets/demo/evidence",
];

/// A drawn terminal as text (one line per row).
pub fn buffer_text(t: &ratatui::Terminal<ratatui::backend::TestBackend>) -> String {
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// The explorer's screen for a state, drawn at `w`×`h`, as text.
pub fn screen(s: &aeplens::tui::state::State, w: u16, h: u16) -> String {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(&aeplens::tui::view::Screen(s), f.area()))
        .unwrap();
    buffer_text(&t)
}

/// Selects action `id` of run `run` in the explorer (it must exist).
pub fn go(s: &mut aeplens::tui::state::State, run: &str, id: &str) {
    let d = s.data.as_ref().unwrap();
    let n = d.analysis.graph.find(&d.corpus, run, id).unwrap();
    aeplens::tui::state::select(s, n, true);
}

/// The setting of `keys`, `options` and `leases` (no cache, no telemetry: a test hands
/// the index it means to the opening itself).
pub fn setting_of(
    keys: &aeplens::verify::Keyring,
    options: &aeplens::verify::Options,
    leases: &aeplens::analysis::lease::SuppliedLeases,
) -> aeplens::open::Setting {
    aeplens::open::Setting {
        trust: keys.clone(),
        options: *options,
        leases: leases.clone(),
        ..Default::default()
    }
}

/// The explorer's data of `corpus` opened whole under `keys` and `supplied` lease files
/// (their inputs listed, as the worker lists them), with `telemetry` joined.
pub fn data(
    corpus: aeplens::load::Corpus,
    keys: &aeplens::verify::Keyring,
    supplied: &aeplens::analysis::lease::SuppliedLeases,
    telemetry: Option<aeplens::load::traces::Telemetry>,
) -> aeplens::tui::data::Data {
    let setting = setting_of(keys, &aeplens::verify::Options::default(), supplied);
    let mut ev = aeplens::open::open_corpus(&setting, corpus);
    if let Some(telemetry) = telemetry {
        ev.add_capture(telemetry, aeplens::analysis::capture::DEFAULT_TOLERANCE_MS);
    }
    ev.report.inputs.extend(supplied.inputs.iter().cloned());
    aeplens::tui::data::Data::of(ev)
}

/// The explorer opened on `paths` (with keys and a lease file), as a user would see it
/// once loading is done: the inputs' load errors listed.
pub fn explorer(
    paths: &[&str],
    keys: Option<&str>,
    leases: Option<&str>,
) -> aeplens::tui::state::State {
    use aeplens::tui::state::{Action, State, update};
    let (corpus, keys, supplied) = inputs(paths, keys, leases);
    let errors: Vec<String> = corpus
        .errors()
        .map(std::string::ToString::to_string)
        .collect();
    let d = data(corpus, &keys, &supplied, None);
    let mut s = State::new(
        aeplens::tui::keymap::Keymap::default(),
        aeplens::tui::theme::Theme::dark(),
    );
    update(&mut s, Action::Loaded(Box::new(d)));
    update(&mut s, Action::Errors(errors));
    s
}

/// [`explorer`] with the agent's telemetry (`--traces`) joined to the evidence.
pub fn explorer_traced(
    paths: &[&str],
    keys: Option<&str>,
    leases: Option<&str>,
    traces: &[&str],
) -> aeplens::tui::state::State {
    use aeplens::tui::state::{Action, State, update};
    let (corpus, keys, supplied) = inputs(paths, keys, leases);
    let traces: Vec<String> = traces.iter().map(|t| (*t).to_string()).collect();
    let telemetry = aeplens::load::traces::load_traces(&traces);
    assert!(telemetry.errors.is_empty(), "{:?}", telemetry.errors);
    let d = data(corpus, &keys, &supplied, Some(telemetry));

    let mut s = State::new(
        aeplens::tui::keymap::Keymap::default(),
        aeplens::tui::theme::Theme::dark(),
    );
    update(&mut s, Action::Loaded(Box::new(d)));
    s
}

/// The official SARIF 2.1.0 schema (`scripts/test` fetches it into `target/`), as a
/// validator; `None` (a skip, said) outside CI when it is missing.
pub fn sarif_validator() -> Option<jsonschema::Validator> {
    let path = std::env::var("AEPLENS_SARIF_SCHEMA").unwrap_or_else(|_| {
        format!(
            "{}/target/sarif-schema/sarif-2.1.0-rtm.5.json",
            env!("CARGO_MANIFEST_DIR")
        )
    });
    let Ok(text) = std::fs::read_to_string(&path) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "the SARIF 2.1.0 schema is missing ({path}); scripts/test fetches it"
        );
        eprintln!("skipped: no SARIF schema at {path} (scripts/test fetches it)");
        return None;
    };
    // The published schema's `run.language` pattern has a stray `]` that a strict regex
    // engine refuses at compile time; it constrains only `language`, which aeplens never
    // writes, so it is replaced by the pattern it means.
    let text = text.replace(
        "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$",
        "^[a-zA-Z]{2}(-[a-zA-Z]{2})?$",
    );
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    Some(jsonschema::draft4::new(&schema).unwrap())
}

/// Debian's Chromium, headless, as the machine's probe runs it (no background
/// networking, a fresh profile); `None` when it is not installed outside CI.
pub fn chromium() -> Option<PathBuf> {
    for c in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(c).exists() {
            return Some(PathBuf::from(c));
        }
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "chromium is required in CI (scripts/test installs it)"
    );
    eprintln!("chromium not installed: skipping the browser test");
    None
}

/// Runs headless Chromium on a file; returns its stdout (the DOM, with `--dump-dom`).
pub fn run_chromium(bin: &Path, profile: &Path, args: &[&str], page: &Path) -> String {
    let out = std::process::Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The evidence of `paths` opened as every command opens it (verified, analysed), with
/// the keyring it was opened with.
pub fn open_evidence(
    paths: &[&str],
    keys: Option<&str>,
    leases: Option<&str>,
) -> (aeplens::analysis::evidence::Evidence, Keyring) {
    let (corpus, keys, supplied) = inputs(paths, keys, leases);
    let ev =
        aeplens::analysis::evidence::Evidence::open(corpus, &keys, &Options::default(), &supplied);
    (ev, keys)
}
