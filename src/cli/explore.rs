//! `aeplens [PATH...]`: open the explorer (the bundled demo when no path is given).

use super::{DEMO_EVIDENCE, DEMO_KEYS, DEMO_LEASES, DEMO_TRACES, ExploreArgs};
use crate::model::text::sanitize;
use crate::tui::keymap::Keymap;
use crate::tui::theme::Theme;
use crate::tui::{ExplorerOptions, run as run_tui};
use std::io::IsTerminal;

/// Opens the explorer; returns the exit code.
pub fn run(mut args: ExploreArgs) -> i32 {
    let demo = args.paths.is_empty();
    if demo {
        args.paths = vec![DEMO_EVIDENCE.to_string()];
        args.keys.keys.push(DEMO_KEYS.to_string());
        if std::path::Path::new(DEMO_LEASES).exists() {
            args.leases.push(DEMO_LEASES.to_string());
        }
        if std::path::Path::new(DEMO_TRACES).exists() {
            args.traces.traces.push(DEMO_TRACES.to_string());
        }
    }
    if let Some(e) = crate::load::unopenable(&args.paths) {
        eprintln!("aeplens: {}", e.render());
        return 2;
    }
    // A lease file that cannot be read stops here, before the terminal is taken.
    if let Err(e) = crate::analysis::lease::SuppliedLeases::from_files(&args.leases) {
        eprintln!("aeplens: {e}");
        return 2;
    }
    if let Some(review) = &args.review {
        let at = std::path::Path::new(review);
        if crate::load::is_evidence_file(&args.paths, at) {
            eprintln!(
                "aeplens: refusing --review {}: it is one of the evidence files (aeplens never writes evidence)",
                sanitize(review)
            );
            return 2;
        }
        if crate::load::in_evidence_dir(&args.paths, at) {
            eprintln!(
                "aeplens: refusing --review {}: it is inside an evidence directory, where it would be read as evidence; keep reviews apart",
                sanitize(review)
            );
            return 2;
        }
        // A broken or foreign review file stops here, before the terminal is taken.
        if let Err(e) = crate::review::file::Review::read(std::path::Path::new(review)) {
            eprintln!("aeplens: {}", e.render());
            return 2;
        }
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        let what = if demo {
            format!("the bundled demo ({DEMO_EVIDENCE})")
        } else {
            sanitize(&args.paths.join(" ")).into_owned()
        };
        eprintln!(
            "aeplens: the explorer needs a terminal (stdout is not a TTY).\n\
             For {what} without one, use:\n  \
             aeplens check PATH...      verdicts per record and chain\n  \
             aeplens findings PATH...   what a reviewer is hunting for\n  \
             aeplens show ACTION_ID PATH...   one action's authority, drift, lease and digests\n  \
             aeplens chains PATH...     denied→re-approved and causal chains"
        );
        return 2;
    }
    let config = match super::config::Config::load() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("aeplens: {e}");
            return 2;
        }
    };
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let theme = match Theme::pick(args.theme.as_deref().or(config.theme.as_deref()), no_color) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("aeplens: {e}");
            return 2;
        }
    };
    let keymap = match Keymap::with_overrides(&config.keymap) {
        Ok(k) => k,
        Err(e) => {
            eprintln!(
                "aeplens: {}: {e}",
                config.path.as_deref().unwrap_or("config")
            );
            return 2;
        }
    };
    args.keys.keys.extend(config.keyrings.iter().cloned());
    let evidence_args = evidence_args(&args);
    // Lease files as the Reproduce line names them (absolute), so that a report written
    // here lists its inputs as `aeplens report` run from anywhere does.
    let leases: Vec<String> = (args.leases.iter())
        .map(|p| std::path::absolute(p).map_or_else(|_| p.clone(), |a| a.display().to_string()))
        .collect();
    let options = crate::verify::Options::default();
    let (paths, keys, traces) = (&args.paths, &args.keys, &args.traces);
    let setting = match super::setting(paths, keys, &leases, options, traces, &args.index) {
        Ok(setting) => setting,
        Err(e) => {
            eprintln!("aeplens: {e}");
            return 2;
        }
    };
    run_tui(&ExplorerOptions {
        paths: args.paths,
        setting: std::sync::Arc::new(setting),
        theme,
        keymap,
        mouse: args.mouse,
        follow: args.follow,
        review: args.review.map(std::path::PathBuf::from),
        fresh: args.fresh,
        goto: args.goto,
        evidence_args,
        editor: std::env::var("VISUAL")
            .or_else(|_| std::env::var("EDITOR"))
            .ok()
            .filter(|e| !e.trim().is_empty()),
        banner: demo.then(|| {
            "demo incident (public test key) · open your own: aeplens --keys KEYS.json PATH"
                .to_string()
        }),
    })
}

/// The arguments that name the evidence, files made absolute: what a report's Reproduce
/// line passes to `aeplens report` so that it runs as printed from any directory.
fn evidence_args(args: &ExploreArgs) -> Vec<String> {
    let absolute =
        |p: &String| std::path::absolute(p).map_or_else(|_| p.clone(), |a| a.display().to_string());
    let mut out = Vec::new();
    for (flag, values, files) in [
        ("--keys", &args.keys.keys, true),
        ("--key", &args.keys.key, false),
        ("--leases", &args.leases, true),
        ("--traces", &args.traces.traces, true),
    ] {
        for v in values {
            out.push(flag.to_string());
            out.push(if files { absolute(v) } else { v.clone() });
        }
    }
    if args.traces.clock_skew != super::TraceArgs::default_skew() {
        out.push("--clock-skew".into());
        out.push(args.traces.clock_skew.to_string());
    }
    out.extend(args.paths.iter().map(absolute));
    out
}
