//! The command line: argument definitions and the non-interactive commands.

pub mod anchor;
pub mod chains;
pub mod check;
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

pub use query::{QueryArgs, QueryFormat, WhereArgs};
pub use traces::{TraceArgs, join_telemetry};
pub use trust::KeyArgs;

use crate::model::text::sanitize;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// The bundled demo evidence, opened when no path is given.
pub const DEMO_EVIDENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo/evidence");
/// The demo's public test key.
pub const DEMO_KEYS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo/keys.json");
/// The demo's lease file (the gateway's ScopeLease / ApprovalReceipt objects).
pub const DEMO_LEASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo/leases.ndjson");
/// The demo agent's own OpenTelemetry traces (written by the OpenTelemetry Python SDK).
pub const DEMO_TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo/traces.jsonl");

/// aeplens: forensic explorer and independent verifier for AEP evidence records.
#[derive(Parser, Debug)]
#[command(
    name = "aeplens",
    version,
    about = "Forensic explorer and independent verifier for AEP (Agent Evidence Protocol) records",
    long_about = "Forensic explorer and independent verifier for AEP (Agent Evidence Protocol) records: \
the signed JSON receipts agent runtimes write after each run.\n\n\
aeplens reads evidence (never writes it), recomputes canonical bytes exactly as the reference \
emitter does, verifies Ed25519 signatures under all four historical constructions and the DSSE \
binding, rebuilds prev_record_hash chains and checks the protocol's cross-field invariants.",
    after_help = "Examples:\n  \
aeplens                                   open the bundled demo incident in the explorer\n  \
aeplens --keys keys.json store/           explore your own evidence\n  \
aeplens check --keys keys.json evidence.ndjson\n  \
aeplens check --format json --key ops-key-3=BASE64PUBKEY store/ > report.json\n  \
aeplens findings --min-severity high --keys keys.json store/\n  \
aeplens show act-003 --run run-deploy-0042 store/\n  \
cat run.jsonl | aeplens check --keys keys.json -",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub explore: ExploreArgs,
}

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

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Verify records: structure, invariants, signatures, DSSE binding and hash chains.
    #[command(
        long_about = "Verify records on five independent axes (structural, semantic, \
authenticity, chain, capture), each file's prev_record_hash chain in file order, and the \
link graph across every input (chain paths, forks, duplicates, gaps).\n\n\
Inputs: single-record .json files, JSON arrays of records, NDJSON stores (.ndjson/.jsonl), \
directories (recursively, in sorted path order; .json/.jsonl/.ndjson files) or - for stdin. \
The format is detected from the content.\n\n\
Exit codes:\n\n\
0: every signed record is valid, every chain path is intact or not-present (no fork, no \
conflicting duplicate) and no error-severity violation exists.\n\n\
1: something failed verification.\n\n\
2: usage error, an unreadable keyring, every input failed to load, or (with --strict) any \
load error.\n\n\
3: nothing to verify (no evidence file with a record)."
    )]
    Check(CheckArgs),
    /// List findings: what a post-incident reviewer is hunting for.
    #[command(
        long_about = "List every finding — drift executed, execution after deny, actions outside \
their lease, state gaps, rewritten snapshots, invalid signatures, invariant violations — sorted \
by severity, then time. Each names its run, actions and the fields that prove it."
    )]
    Findings(FindingsArgs),
    /// Show one action: authority available vs exercised, drift, lease and digest badges.
    #[command(
        long_about = "Show one action as the three post-run questions answer it: what authority \
was available, what authority was exercised, and what changed between approval and execution \
(argument drift, lease window, re-approval), plus the comparability badge of each state digest."
    )]
    Show(ShowArgs),
    /// Denied→re-approved chains and causal chains as indented trees.
    Chains(ChainsArgs),
    /// The actions a filter expression matches: by verdict, chain, proven time, findings, marks.
    #[command(
        long_about = query::fields_help(),
        after_help = "Examples:\n  \
aeplens query 'decision == \"deny\"' store/\n  \
aeplens query 'reapproved and lease.verdict != \"inside\"' --leases leases.ndjson store/\n  \
aeplens query 'record.authenticity != \"valid\" and state_changing' --keys keys.json store/\n  \
aeplens query 'severity >= \"medium\" and not marked' --review INC-7.json store/"
    )]
    Query(QueryArgs),
    /// One decision-envelope JSON object per action (NDJSON), as analysis-rules §8 projects it.
    Envelope(EvidenceArgs),
    /// The action graph (DOT, Mermaid) or timeline (Timesketch, Perfetto, OTLP) for other tools.
    #[command(
        long_about = "Write the action graph of the evidence as Graphviz DOT (`dot -Tsvg`) or \
Mermaid (rendered by GitHub and GitLab in Markdown): one cluster per run, an edge from each \
parent to its child (dashed across runs), a bold `re-approved` edge into each re-approved \
action, dotted causal-chain edges; denied actions red, re-approved ones amber. Labels are \
the action id, tool, decision and observed result, escaped for the target language.\n\n\
The timeline, for forensic and tracing tools: timesketch (JSONL, one event per timed \
action with message, datetime and timestamp_desc, for Timesketch import), chrome-trace \
(Trace Event JSON for Perfetto or chrome://tracing: a process per run, an event per action, \
lease windows on their own track, a flow arrow from each deny to its re-approval), otlp-json \
(OTLP/JSON: an `execute_tool` span per action with OpenTelemetry GenAI attributes and the \
decision as `aep.*` attributes; parents as parent spans, a trace per run — for Jaeger or \
Tempo through the collector's file receiver).\n\n\
Exit codes:\n\n0: written.\n\n2: usage error, unreadable evidence or output, or -o naming an \
evidence file.\n\n3: no action to export (nothing loaded, or --run matched no run).",
        after_help = "Examples:\n  \
aeplens export --format dot store/ | dot -Tsvg > actions.svg\n  \
aeplens export --format mermaid --run run-deploy-0042 store/ >> ticket.md\n  \
aeplens export --format chrome-trace store/ -o trace.json   (open in Perfetto)"
    )]
    Export(ExportArgs),
    /// What changed between two stores, or two runs of one.
    #[command(
        long_about = "Compare two bodies of evidence (`aeplens diff A B`: two files or directories) \
or two runs of one (`aeplens diff --run X --run Y PATH...`). Actions are aligned by action id \
(within the same run for two stores), then the rest by (tool, resource) in time order; each \
aligned pair that differs lists the members that differ canonically, and its decision and \
observed outcome when they changed; then actions only in A (removed) or only in B (added), \
and findings new in B or resolved since A (the same finding: same id, run and actions). \
Text on a terminal, versioned JSON when piped (schema/diff.schema.json).\n\n\
For two stores it also compares verification, record by record (the \
same canonical hash on both sides: the same signed content): records that stopped or started \
verifying, key ids and chain statuses that changed.\n\n\
Exit codes:\n\n0: compared.\n\n1: verification got worse (a record held by both stopped \
verifying, or its chain status got worse).\n\n2: usage error (not two paths and not two --run), \
unreadable evidence, or a --run not in the evidence."
    )]
    Diff(DiffArgs),
    /// The incident report: Markdown, self-contained HTML, JSON, SARIF 2.1.0 or JUnit XML.
    #[command(
        long_about = "Write the report a review hands over: the verification summary; the \
reviewer's marks and notes first (the explorer's review of this evidence set, or --review \
FILE), each with its action's three answers; findings \
grouped by id, each with where it is (file, line, JSON pointer) and its fingerprint; the three \
answers (authority available, exercised, changed between approval and execution) for every \
action a high finding names; denied→re-approved chains; chain paths; how the evidence was \
verified (trusted keys with fingerprints, keys no trusted key covers, what was not checked \
and why); the inputs with size and SHA-256; the command that reproduces it.\n\n\
Formats: md (GitHub-flavoured Markdown, for tickets and PRs; Mermaid for the marked runs), \
html (one self-contained file: no script, no request, a strict Content-Security-Policy, inline \
SVG waterfalls with lease windows and the chain graph, printable), json (schema/report.schema.json), \
sarif (SARIF 2.1.0 for code scanning: one rule per finding id, partialFingerprints, \
automationDetails), junit (a test suite per input, a test case per record and axis).\n\n\
Exit codes:\n\n0: written (whatever it found, unless --fail-on).\n\n1: --fail-on and a finding at \
or above that severity.\n\n2: usage error, unreadable keyring or output, every input failed to \
load, -o naming an evidence file, or a --review file that is missing, broken or not a review.\n\n\
3: nothing to report (no evidence file with a record).",
        after_help = "Examples:\n  \
aeplens report --keys keys.json store/ > incident.md\n  \
aeplens report --format html --review tickets/INC-7.json --keys keys.json store/ -o INC-7.html\n  \
aeplens report --format sarif --fail-on high --keys keys.json store/ -o aeplens.sarif"
    )]
    Report(ReportArgs),
    /// Anchor chain heads with an RFC 3161 timestamp authority (a cut tail is caught later).
    #[command(long_about = anchor::ABOUT)]
    Anchor(anchor::AnchorArgs),
    /// Show the configuration file's location and the effective settings.
    #[command(
        long_about = "The configuration file is $AEPLENS_CONFIG, else $XDG_CONFIG_HOME/aeplens/config.toml \
(~/.config/aeplens/config.toml). It may set `theme`, `keyrings` (keyring files always loaded) \
and a `[keymap]` table rebinding any command, e.g. `parent = [\"u\", \"alt-up\"]`. \
`aeplens config --print` shows every setting in effect, in the file's own format."
    )]
    Config(ConfigArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell, nushell).
    #[command(
        long_about = "Print a completion script for SHELL on stdout. For bash: \
`aeplens completions bash > ~/.local/share/bash-completion/completions/aeplens`; for zsh: \
`aeplens completions zsh > \"${fpath[1]}/_aeplens\"`; for fish: \
`aeplens completions fish > ~/.config/fish/completions/aeplens.fish`; for nushell: \
`aeplens completions nushell | save -f ($nu.default-config-dir | path join aeplens.nu)` and \
`use aeplens.nu *` in your config."
    )]
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: ShellArg,
    },
    /// Print a manual page (roff) on stdout: `aeplens man | man -l -`.
    #[command(
        long_about = "Print a manual page (roff) on stdout. Without PAGE: aeplens(1). With a \
command name (check, findings, show, chains, query, envelope, export, report, diff, config, completions): \
aeplens-COMMAND(1). With `explorer`: aeplens-explorer(1), the explorer's keys and glyphs. \
Read one with `aeplens man check | man -l -`."
    )]
    Man {
        /// A command's page, or `explorer` for the explorer's keys and glyphs.
        #[arg(value_name = "PAGE")]
        page: Option<String>,
    },
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
    /// The directory of the index to use for `paths`: none with `--no-index` or without a
    /// cache directory. An `--index-dir` inside the evidence is an error, ready to print;
    /// a default directory inside it is not used (and said so).
    pub fn dir(&self, paths: &[String]) -> Result<Option<std::path::PathBuf>, String> {
        if self.no_index {
            return Ok(None);
        }
        let (dir, given) = match &self.index_dir {
            Some(dir) => (std::path::PathBuf::from(dir), true),
            None => match crate::verify::index::Index::default_dir() {
                Some(dir) => (dir, false),
                None => return Ok(None),
            },
        };
        // The nearest directory that exists decides where the index would be.
        let existing = dir.ancestors().find(|a| a.is_dir()).unwrap_or(&dir);
        let inside = crate::load::is_evidence_file(paths, &dir)
            || crate::load::in_evidence_dir(paths, &existing.join("entry"));
        match (inside, given) {
            (false, _) if crate::verify::index::writable_by_others(&dir) => {
                note(&format!(
                    "evidence index not used: {} is writable by other users, who could plant verdicts there (chmod go-w it)",
                    sanitize(&dir.display().to_string())
                ));
                Ok(None)
            }
            (false, _) => Ok(Some(dir)),
            (true, true) => Err(format!(
                "refusing --index-dir {}: it is inside the evidence, where its entries would be read as evidence; keep the index apart",
                sanitize(&dir.display().to_string())
            )),
            (true, false) => {
                note(&format!(
                    "evidence index not used: its directory {} is inside the evidence",
                    sanitize(&dir.display().to_string())
                ));
                Ok(None)
            }
        }
    }
}

/// The evidence index `args` ask for, under this configuration (`None`: not used). `Err`
/// (ready to print) for an `--index-dir` inside the evidence.
pub fn evidence_index(
    paths: &[String],
    keys: &crate::verify::Keyring,
    options: &crate::verify::Options,
    leases: &crate::analysis::lease::SuppliedLeases,
    args: &IndexArgs,
) -> Result<Option<crate::verify::index::Index>, String> {
    use crate::verify::index::{Config, Index};
    let config = Config::new(keys, options, &leases.digests);
    Ok(args.dir(paths)?.map(|dir| Index::new(dir, &config)))
}

/// Opens `paths` as every command does: verified as they stream in, with `index`
/// ([`evidence_index`]), a progress meter on stderr, and what the index could not write
/// noted. `trees`: whether records keep their parsed JSON (commands that show every
/// action do; those that answer from the analysis let it go).
pub fn open_indexed(
    paths: &[String],
    keys: &crate::verify::Keyring,
    options: &crate::verify::Options,
    leases: &crate::analysis::lease::SuppliedLeases,
    index: Option<&crate::verify::index::Index>,
    trees: crate::verify::Trees,
) -> crate::analysis::evidence::Evidence {
    let mut meter = progress::Meter::new(paths);
    let ev = crate::analysis::evidence::Evidence::load(
        paths,
        keys,
        options,
        leases,
        index,
        trees,
        &mut |loading| meter.tick(loading),
    );
    meter.done();
    for problem in &ev.index.problems {
        note(problem);
    }
    ev
}

/// Opens `paths` for `check` and `findings` ([`Checked::load`]): the analysis over
/// batches ([`crate::cli::check::BUDGET`]), with `index` when one is used, a progress
/// meter on stderr, and what the index could not write noted.
///
/// [`Checked::load`]: crate::analysis::evidence::Checked::load
pub fn open_in_batches(
    paths: &[String],
    keys: &crate::verify::Keyring,
    options: &crate::verify::Options,
    leases: &crate::analysis::lease::SuppliedLeases,
    index: Option<&crate::verify::index::Index>,
) -> crate::analysis::evidence::Checked {
    let mut meter = progress::Meter::new(paths);
    let checked = crate::analysis::evidence::Checked::load(
        paths,
        keys,
        options,
        leases,
        index,
        check::BUDGET,
        &mut |loading| meter.tick(loading),
    );
    meter.done();
    for problem in &checked.index.problems {
        note(problem);
    }
    checked
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

/// True when `-q` was given.
pub fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Runs the command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let quiet = match &cli.command {
        Some(Command::Check(a)) => a.quiet,
        Some(Command::Findings(a)) => a.evidence.quiet,
        Some(Command::Show(a)) => a.evidence.quiet,
        Some(Command::Chains(a)) => a.evidence.quiet,
        Some(Command::Query(a)) => a.evidence.quiet,
        Some(Command::Envelope(a)) => a.quiet,
        Some(Command::Export(a)) => a.evidence.quiet,
        Some(Command::Report(a)) => a.evidence.quiet,
        Some(Command::Diff(a)) => a.evidence.quiet,
        _ => false,
    };
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
    match cli.command {
        Some(Command::Check(args)) => check::run(&args),
        Some(Command::Findings(args)) => report::findings(&args),
        Some(Command::Show(args)) => report::show(&args),
        Some(Command::Chains(args)) => chains::chains(&args),
        Some(Command::Query(args)) => query::run(&args),
        Some(Command::Envelope(args)) => report::envelope(&args),
        Some(Command::Export(args)) => export::run(&args),
        Some(Command::Report(args)) => incident::run(&args),
        Some(Command::Diff(args)) => diff::run(&args),
        Some(Command::Anchor(args)) => anchor::run(&args),
        Some(Command::Config(args)) => {
            let path = config::config_path().map_or_else(
                || "(no HOME or XDG_CONFIG_HOME)".into(),
                |p| p.display().to_string(),
            );
            match config::Config::load() {
                Ok(c) if args.print => {
                    print!("{}", c.effective());
                    // A key bound twice runs only the first command: said, never silent.
                    let keymap = crate::tui::keymap::Keymap::with_overrides(&c.keymap);
                    for twice in keymap
                        .iter()
                        .flat_map(crate::tui::keymap::Keymap::bound_twice)
                    {
                        eprintln!("aeplens: warning: {twice}");
                    }
                    0
                }
                Ok(_) => {
                    println!(
                        "config file: {path}
(use --print to see the effective settings)"
                    );
                    0
                }
                Err(e) => {
                    eprintln!("aeplens: {e}");
                    2
                }
            }
        }
        Some(Command::Completions { shell }) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let out = &mut std::io::stdout();
            use clap_complete::Shell;
            match shell {
                ShellArg::Bash => clap_complete::generate(Shell::Bash, &mut cmd, "aeplens", out),
                ShellArg::Zsh => clap_complete::generate(Shell::Zsh, &mut cmd, "aeplens", out),
                ShellArg::Fish => clap_complete::generate(Shell::Fish, &mut cmd, "aeplens", out),
                ShellArg::Elvish => {
                    clap_complete::generate(Shell::Elvish, &mut cmd, "aeplens", out);
                }
                ShellArg::Powershell => {
                    clap_complete::generate(Shell::PowerShell, &mut cmd, "aeplens", out);
                }
                ShellArg::Nushell => clap_complete::generate(
                    clap_complete_nushell::Nushell,
                    &mut cmd,
                    "aeplens",
                    out,
                ),
            }
            0
        }
        Some(Command::Man { page }) => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let page = match page.as_deref() {
                None => cmd,
                Some("explorer") => explorer_page(),
                Some(name) => {
                    if let Some(sub) = cmd.find_subcommand(name) {
                        sub.clone().name(format!("aeplens-{name}"))
                    } else {
                        eprintln!(
                            "aeplens: no manual page {:?} (a command name, or explorer)",
                            crate::model::text::sanitize(name)
                        );
                        return 2;
                    }
                }
            };
            match clap_mangen::Man::new(page).render(&mut std::io::stdout()) {
                Ok(()) => 0,
                Err(_) => 2,
            }
        }
        None => explore::run(cli.explore),
    }
}

/// aeplens-explorer(1): every key of the default keymap and every glyph with its meaning.
fn explorer_page() -> clap::Command {
    use std::fmt::Write as _;
    let keymap = crate::tui::keymap::Keymap::default();
    let mut text = String::from(
        "Run `aeplens [--keys FILE] [PATH...]` on a terminal (the bundled demo without a \
         path). Every key below can be rebound in the configuration file (`aeplens man config`).\n\nKEYS\n",
    );
    // One paragraph per entry, so the page keeps one key (or glyph) a line.
    for b in &keymap.bindings {
        let _ = write!(text, "\n{}: {}\n", keymap.keys_of(b), b.help);
    }
    text.push_str(
        "\nCOMMAND LINE\n\n`:` opens it; Tab completes, Up/Down choose, Enter runs, Esc closes.\n",
    );
    for (name, arg, help) in crate::tui::state::COMMANDS {
        let _ = write!(text, "\n{}: {help}\n", format!("{name} {arg}").trim_end());
    }
    text.push_str("\nNOTE EDITOR\n\n`a` opens it on the selected action, record or finding (in $VISUAL or $EDITOR when set).\n");
    for (keys, help) in crate::tui::state::NOTE_EDITOR_KEYS {
        let _ = write!(text, "\n{keys}: {help}\n");
    }
    text.push_str("\nGLYPHS\n");
    for line in crate::tui::view::GLYPH_LEGEND {
        let _ = write!(text, "\n{line}\n");
    }
    clap::Command::new("aeplens-explorer")
        .about("the aeplens explorer: keys and glyphs")
        .long_about(text)
}
