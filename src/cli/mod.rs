//! The command line: argument definitions and the non-interactive commands.

pub mod anchor;
pub mod chains;
pub mod check;
pub mod command;
pub mod config;
pub mod diff;
pub mod explore;
pub mod export;
pub mod incident;
pub mod progress;
pub mod query;
pub mod report;
mod traces;
mod trust;
pub mod watch;

pub use query::{QueryArgs, QueryFormat, WhereArgs};
pub use traces::TraceArgs;
pub use trust::KeyArgs;

use crate::model::text::sanitize;
use crate::open::{Cache, Setting};
use clap::{Args, ValueEnum};

/// The bundled demo evidence, opened when no path is given.
pub const DEMO_EVIDENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo/evidence");
/// The demo's public test key.
pub const DEMO_KEYS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo/keys.json");
/// The demo's lease file (the gateway's ScopeLease / ApprovalReceipt objects).
pub const DEMO_LEASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo/leases.ndjson");
/// The demo agent's own OpenTelemetry traces (written by the OpenTelemetry Python SDK).
pub const DEMO_TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo/traces.jsonl");

/// Arguments of the explorer (no subcommand).
#[derive(Args, Debug, Clone, Default)]
pub struct ExploreArgs {
    #[command(flatten)]
    pub keys: KeyArgs,
    /// Lease file (ScopeLease / ApprovalReceipt JSON) to check lease windows against. Repeatable.
    #[arg(long = "leases", value_name = "FILE")]
    pub leases: Vec<String>,
    #[command(flatten)]
    pub traces: TraceArgs,
    #[command(flatten)]
    pub index: IndexArgs,
    /// Colour theme: dark, light, high-contrast or monochrome (NO_COLOR forces monochrome).
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// Enable the mouse (click to focus and select, wheel to scroll).
    #[arg(long)]
    pub mouse: bool,
    /// Reload when an input file grows (tail a store that is still being written).
    #[arg(long)]
    pub follow: bool,
    /// Keep marks, notes and the session in FILE (a file you can attach to a ticket)
    /// [default: $XDG_DATA_HOME/aeplens/reviews/EVIDENCE_SET_KEY.json]. Never an evidence file.
    #[arg(long, value_name = "FILE")]
    pub review: Option<String>,
    /// Start at the first action with no filter instead of where the review left off
    /// (marks and notes stay).
    #[arg(long)]
    pub fresh: bool,
    /// Open at one action: RUN/ACTION, or ACTION when one run holds it (e.g.
    /// `--goto run-deploy-0042/act-003`). Said in the hint bar when it names none or several.
    #[arg(long, value_name = "RUN/ACTION")]
    pub goto: Option<String>,
    /// Evidence files or directories to explore [default: the bundled demo incident].
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,
}

/// Shells `completions` writes for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ShellArg {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
    Nushell,
}

/// Arguments of `config`.
#[derive(Args, Debug)]
pub struct ConfigArgs {
    /// Print the effective configuration (defaults merged with the file) as TOML.
    #[arg(long)]
    pub print: bool,
}

/// Evidence to open, shared by the analysis commands.
#[derive(Args, Debug, Clone)]
pub struct EvidenceArgs {
    #[command(flatten)]
    pub keys: KeyArgs,
    /// Lease file (the gateway's ScopeLease / ApprovalReceipt JSON: one object, an array or
    /// NDJSON) to check lease windows against. Repeatable.
    #[arg(long = "leases", value_name = "FILE")]
    pub leases: Vec<String>,
    #[command(flatten)]
    pub traces: TraceArgs,
    #[command(flatten)]
    pub index: IndexArgs,
    /// Quiet: no notes on stderr (each load error, each skipped lease entry). Errors that
    /// stop the command still print; `check` keeps load errors in its report, the other
    /// commands say in one line how many there were.
    #[arg(short, long)]
    pub quiet: bool,
    /// Evidence files, directories, or - for stdin.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<String>,
}

/// Where the evidence index is kept, shared by every command that opens evidence.
#[derive(Args, Debug, Clone, Default)]
pub struct IndexArgs {
    /// Keep the evidence index in DIR: each record's verdicts, used again only for a
    /// record at the same place in a file that still begins with the bytes they were made
    /// from (the same file, or a store that only grew), under the same trusted keys, lease
    /// files, profile and aeplens build; a store unchanged to the byte is not even parsed
    /// again, and the same set of files keeps its findings, chains and each action's views
    /// (`findings`, `chains` and `show` then answer from the index alone, after a `check`
    /// or their own first answer) [default: $XDG_CACHE_HOME/aeplens/index]. Never inside
    /// the evidence.
    #[arg(long, value_name = "DIR")]
    pub index_dir: Option<String>,
    /// Neither read nor write the evidence index: verify every record.
    #[arg(long, conflicts_with = "index_dir")]
    pub no_index: bool,
}

impl IndexArgs {
    /// Where the index for `paths` is: off with `--no-index` or without a cache
    /// directory. An `--index-dir` inside the evidence is an error, ready to print; a
    /// default directory inside it, or one other users can write to, is not used (and
    /// said so).
    pub fn cache(&self, paths: &[String]) -> Result<Cache, String> {
        use Cache::Off;
        if self.no_index {
            return Ok(Off);
        }
        let (dir, given) = match &self.index_dir {
            Some(dir) => (std::path::PathBuf::from(dir), true),
            None => match Cache::default_dir() {
                Some(dir) => (dir, false),
                None => return Ok(Off),
            },
        };
        // The nearest directory that exists decides where the index would be.
        let existing = dir.ancestors().find(|a| a.is_dir()).unwrap_or(&dir);
        let inside = crate::load::is_evidence_file(paths, &dir)
            || crate::load::in_evidence_dir(paths, &existing.join("entry"));
        match (inside, given) {
            (false, _) if crate::private::writable_by_others(&dir) => {
                note(&format!(
                    "evidence index not used: {} is writable by other users, who could plant verdicts there (chmod go-w it)",
                    sanitize(&dir.display().to_string())
                ));
                Ok(Off)
            }
            (false, _) => Ok(Cache::Dir(dir)),
            (true, true) => Err(format!(
                "refusing --index-dir {}: it is inside the evidence, where its entries would be read as evidence; keep the index apart",
                sanitize(&dir.display().to_string())
            )),
            (true, false) => {
                note(&format!(
                    "evidence index not used: its directory {} is inside the evidence",
                    sanitize(&dir.display().to_string())
                ));
                Ok(Off)
            }
        }
    }
}

/// The setting every command that opens evidence builds from its arguments: the trust
/// (`--keys`, `--key`, the environment, `--tsa-certs`, `--anchors`), the options, the
/// lease files, the telemetry and the index. The error is ready to print.
pub fn setting(
    paths: &[String],
    keys: &KeyArgs,
    leases: &[String],
    options: crate::verify::Options,
    traces: &TraceArgs,
    index: &IndexArgs,
) -> Result<Setting, String> {
    let trust = keys.keyring()?;
    let (leases, lease_errors) = crate::analysis::lease::SuppliedLeases::from_files(leases)?;
    Ok(Setting {
        trust,
        options,
        leases,
        lease_errors,
        traces: crate::open::Traces {
            files: traces.traces.clone(),
            tolerance_ms: traces.tolerance_ms(),
        },
        cache: index.cache(paths)?,
    })
}

/// Opens `paths` under `setting` for what `need` asks ([`crate::open::open`]), with a
/// progress meter on stderr and its notes said; what did not load is left to say.
pub fn open(
    setting: &Setting,
    paths: &[String],
    need: crate::open::Need,
) -> (crate::open::Opened, Vec<String>) {
    metered(paths, |progress| {
        crate::open::open(setting, paths, need, progress)
    })
}

/// [`open`] for a report made in batches, `each` seeing every batch as it is analysed
/// ([`crate::open::open_each_batch`]).
pub fn open_each_batch(
    setting: &Setting,
    paths: &[String],
    budget: crate::open::Budget,
    each: &mut crate::open::EachBatch<'_>,
) -> (crate::open::Opened, Vec<String>) {
    metered(paths, |progress| {
        crate::open::open_each_batch(setting, paths, budget, each, progress)
    })
}

/// An opening with its progress on stderr; the notes said, the problems returned.
fn metered(
    paths: &[String],
    opening: impl FnOnce(
        &mut (dyn FnMut(crate::analysis::evidence::Loading) + Send),
    ) -> (crate::open::Opened, crate::open::Said),
) -> (crate::open::Opened, Vec<String>) {
    let mut meter = progress::Meter::new(paths);
    let (opened, said) = opening(&mut |loading| meter.tick(loading));
    meter.done();
    for n in &said.notes {
        note(n);
    }
    (opened, said.problems)
}

/// Arguments of `findings`.
#[derive(Args, Debug)]
pub struct FindingsArgs {
    #[command(flatten)]
    pub evidence: EvidenceArgs,
    /// Output format [default: text on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Only findings at least this severe.
    #[arg(long, value_enum, default_value = "info")]
    pub min_severity: SeverityArg,
    /// Exit 1 when a finding at or above this severity exists (for CI gates); without
    /// it `findings` exits 0 whatever it found.
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<SeverityArg>,
    #[command(flatten)]
    pub filter: WhereArgs,
}

/// Arguments of `show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The action_id to show.
    #[arg(value_name = "ACTION_ID")]
    pub action_id: String,
    /// The run the action belongs to, when the id occurs in several runs.
    #[arg(long = "run", value_name = "RUN_ID")]
    pub run: Option<String>,
    /// The emitter chain the action is on, named by its first record's FILE:LINE (the
    /// file as given or its last component), when several emitters of one run use the
    /// same id (sub-agents writing `action-0…` under their parent's run) or a fork's
    /// branches both hold it. Without it such an id lists its chains and nothing is
    /// picked.
    #[arg(long = "chain", value_name = "FILE:LINE")]
    pub chain: Option<String>,
    #[command(flatten)]
    pub evidence: EvidenceArgs,
    /// Output format [default: text on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<Format>,
}

/// Arguments of `chains`.
#[derive(Args, Debug)]
pub struct ChainsArgs {
    #[command(flatten)]
    pub evidence: EvidenceArgs,
    #[command(flatten)]
    pub filter: WhereArgs,
    /// Output format [default: text on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<Format>,
}

/// Arguments of `export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// What to write.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Only this run (repeatable); every run by default.
    #[arg(long = "run", value_name = "RUN_ID")]
    pub run: Vec<String>,
    /// Write to FILE instead of stdout (never one of the evidence files).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<String>,
    /// The reviewer's marks and notes (Timesketch: tags and a note on each marked event).
    #[command(flatten)]
    pub review: ReviewArgs,
    #[command(flatten)]
    pub filter: WhereArgs,
    #[command(flatten)]
    pub evidence: EvidenceArgs,
}

/// Arguments of `diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// Output format [default: text on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Compare these two runs of one body of evidence (give --run twice: A, then B).
    #[arg(long = "run", value_name = "RUN_ID")]
    pub run: Vec<String>,
    #[command(flatten)]
    pub evidence: EvidenceArgs,
}

/// Arguments of `report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// What to write.
    #[arg(long, value_enum, default_value = "md")]
    pub format: ReportFormat,
    /// Write to FILE instead of stdout (never one of the evidence files).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<String>,
    /// Exit 1 when a finding at or above this severity exists (for CI gates).
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<SeverityArg>,
    #[command(flatten)]
    pub review: ReviewArgs,
    #[command(flatten)]
    pub filter: WhereArgs,
    #[command(flatten)]
    pub evidence: EvidenceArgs,
}

/// Which review's marks and notes an output carries.
#[derive(Args, Debug, Clone)]
pub struct ReviewArgs {
    /// The review whose marks and notes the output carries [default: the explorer's review
    /// of this evidence set, under $XDG_DATA_HOME/aeplens/reviews/, when there is one].
    #[arg(long, value_name = "FILE", conflicts_with = "no_review")]
    pub review: Option<String>,
    /// Leave the reviewer's marks and notes out.
    #[arg(long)]
    pub no_review: bool,
}

/// Formats `report` writes (the one list, the explorer's `R` offers it too).
pub use crate::review::report::Format as ReportFormat;

/// Formats `export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Graphviz DOT.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
    /// Timesketch JSONL: one event per action (message, datetime, timestamp_desc).
    Timesketch,
    /// A Chrome / Perfetto trace: a track per run, lease windows, deny→re-approval flows.
    ChromeTrace,
    /// OTLP/JSON: an `execute_tool` span per action (OpenTelemetry GenAI conventions).
    OtlpJson,
    /// Parquet tables (inputs, records, actions, findings, edges, leases) and a manifest,
    /// into the directory -o names (docs/tables.md; needs the `tables` feature).
    Parquet,
}

/// A minimum severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    High,
    Medium,
    Low,
    Info,
}

impl SeverityArg {
    /// The severity named.
    pub fn severity(self) -> crate::model::finding::Severity {
        use crate::model::finding::Severity;
        match self {
            SeverityArg::High => Severity::High,
            SeverityArg::Medium => Severity::Medium,
            SeverityArg::Low => Severity::Low,
            SeverityArg::Info => Severity::Info,
        }
    }
}

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A compact table for people (default on a terminal).
    Text,
    /// One JSON document for CI and scripts (default when piped).
    Json,
}

/// Which verdicts historical signing constructions get.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// Verify every historical construction and name it (S1–S4).
    Forensic,
    /// Only the current DSSE profile is valid; S1–S3 are unsupported-legacy.
    Current,
}

impl ProfileArg {
    /// The profile named.
    pub fn profile(self) -> crate::verify::Profile {
        match self {
            ProfileArg::Forensic => crate::verify::Profile::Forensic,
            ProfileArg::Current => crate::verify::Profile::Current,
        }
    }
}

/// Arguments of `check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub keys: KeyArgs,
    /// Output format [default: text on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Treat any load error (bad line, unreadable file) as fatal: exit code 2.
    #[arg(long)]
    pub strict: bool,
    /// Lease file (ScopeLease / ApprovalReceipt JSON) for the lease findings. Repeatable.
    #[arg(long = "leases", value_name = "FILE")]
    pub leases: Vec<String>,
    /// Verdicts for historical signing constructions.
    #[arg(long, value_enum, default_value = "forensic")]
    pub profile: ProfileArg,
    #[command(flatten)]
    pub traces: TraceArgs,
    #[command(flatten)]
    pub index: IndexArgs,
    /// Print how long each phase took (read, parse and verify — one pass —, analysis,
    /// findings, report) to stderr, and the bytes read and hashed with SHA-256.
    #[arg(long, short = 'v', alias = "verbose")]
    pub timings: bool,
    /// Quiet: no notes on stderr (each load error, each skipped lease entry). Errors that
    /// stop the command still print; `check` keeps load errors in its report, the other
    /// commands say in one line how many there were.
    #[arg(short, long)]
    pub quiet: bool,
    /// Evidence files, directories, or - for stdin.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<String>,
}

/// `-q` was given to the command: `note` prints nothing.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Prints a note on stderr — a load error, a skipped lease entry — unless `-q` was given.
/// `text` is printed as is: escape what comes from evidence before.
pub fn note(text: &str) {
    if !quiet() {
        eprintln!("aeplens: {text}");
    }
}

/// Says whether `-q` was given (once, before the command runs).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

/// True when `-q` was given.
pub fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}
