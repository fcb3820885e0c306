//! The command line as a whole: its arguments (`Cli`, each subcommand) and what runs each.
//! Nothing in `cli` imports this file: the commands are below it, `main` above.

use super::*;
use clap::{Parser, Subcommand};

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
    /// Verify stores as they grow: alerts classed tamper / policy / infra, each once, as a signed log.
    #[command(
        long_about = "Follow evidence files and directories (new files, rotations) and verify \
each record as it lands, with the verdicts, chains and findings `check` gives. Each alert \
is classed: tamper (a signature, binding, chain, rewritten or cut record: the evidence \
fails), policy (a finding at or above --fail-on, a --rules rule matching a new action), \
infra (a file unreadable or gone, a line still torn after --settle, a keyring missing, a \
sink failing; said `resolved` once when it clears). Each alert is one JSON line, keyed by \
what it is about (dedupe_key) and issued once, across restarts too: the log and --state \
say what was issued. With --sign-key the log is chained and signed as AEP v0.3 records, \
and `aeplens check --keys MONITOR-KEYS ALERTS` verifies it (evidence type aeplens-alert).\n\n\
Exit codes:\n\n0: (with --once) no alert at or above --fail-on; without --once, stopped by \
SIGINT or SIGTERM after flushing.\n\n1: (with --once) an alert at or above --fail-on.\n\n\
2: usage error, an unreadable keyring, rules file or alert log.",
        after_help = "Examples:\n  \
aeplens watch --keys keys.json --alerts alerts.ndjson logs/\n  \
aeplens watch --keys keys.json --sign-key monitor.seed --alerts alerts.ndjson --ocsf ocsf.ndjson logs/\n  \
aeplens watch --sign-key monitor.seed --print-key > monitor-keys.json\n  \
aeplens check --keys monitor-keys.json alerts.ndjson\n  \
aeplens watch --once --keys keys.json --rules rules.txt --alerts alerts.ndjson logs/   (cron)"
    )]
    Watch(watch::WatchArgs),
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
    set_quiet(quiet);
    match cli.command {
        Some(Command::Check(args)) => check::run(&args),
        Some(Command::Findings(args)) => report::findings(&args),
        Some(Command::Show(args)) => report::show(&args),
        Some(Command::Chains(args)) => chains::chains(&args),
        Some(Command::Query(args)) => query::run(&args),
        Some(Command::Watch(args)) => watch::run(&args),
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
