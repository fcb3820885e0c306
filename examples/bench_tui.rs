//! Times the explorer on generated stores (release build):
//!
//! ```text
//! cargo run --release --example bench_tui -- 10000 100000 1000000 reference:20000
//! ```
//! For each action count (or `reference:RECORDS`, a store of that many records in the
//! reference emitter's shape, `support/reference.rs`): time to first frame (read the store from disk, parse,
//! analyse, derive the display data, render 160×48 — what happens before verification
//! ends), then redraw time per keypress (update + render) over a scripted session, and
//! fuzzy-search latency per keystroke (matches in the run) and on Enter (all actions).

use aeplens::analysis::Analysis;
use aeplens::analysis::findings;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, load_paths};
use aeplens::tui::data::Data;
use aeplens::tui::keymap::{Command, Keymap};
use aeplens::tui::state::{Action, Pane, State, update};
use aeplens::tui::theme::Theme;
use aeplens::tui::view::Screen;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "support/generated.rs"]
mod generated;
#[path = "support/reference.rs"]
mod reference;
#[path = "support/synthetic.rs"]
mod synthetic;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn draw(t: &mut Terminal<TestBackend>, s: &State) -> Duration {
    let start = Instant::now();
    t.draw(|f| f.render_widget(&Screen(s), f.area())).unwrap();
    start.elapsed()
}

fn stats(mut d: Vec<Duration>) -> String {
    d.sort();
    let mean = d.iter().sum::<Duration>() / d.len().max(1) as u32;
    format!(
        "mean {mean:.2?} · p95 {:.2?} · max {:.2?}",
        d[d.len() * 95 / 100],
        d[d.len() - 1]
    )
}

/// The stores to measure: the generated shape by action count (unsigned), or
/// `reference:RECORDS` (signed: with its keyring, verified as the explorer's worker does).
fn stores() -> Vec<(String, Vec<u8>, Option<String>)> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reference = (args.iter()).filter_map(|a| a.strip_prefix("reference:")?.parse().ok());
    // Only reference stores when only they are asked for; else the action counts given
    // (or the default ones).
    let only_reference = !args.is_empty() && args.iter().all(|a| a.starts_with("reference:"));
    let counts = if only_reference {
        Vec::new()
    } else {
        synthetic::counts_from_args()
    };
    let mut out: Vec<_> = (counts.into_iter())
        .map(|n| {
            (
                format!("{n} actions"),
                synthetic::generate(n).into_bytes(),
                None,
            )
        })
        .collect();
    for records in reference {
        let mut bytes = Vec::new();
        reference::generate(records, &mut bytes).unwrap();
        let name = format!("{records} records of the reference shape");
        out.push((name, bytes, Some(reference::keys_json())));
    }
    out
}

fn main() {
    for (i, (name, bytes, keys)) in stores().into_iter().enumerate() {
        println!("## {name}\n");
        let path = std::env::temp_dir().join(format!("aeplens-bench-tui-{i}.ndjson"));
        std::fs::write(&path, bytes).unwrap();
        let keys = keys.map(|json| {
            let file = path.with_extension("keys.json");
            std::fs::write(&file, json).unwrap();
            let mut keys = aeplens::verify::Keyring::default();
            keys.add_file(&file.display().to_string()).unwrap();
            keys
        });
        let size = std::fs::metadata(&path).unwrap().len();
        // Quick look: the first records of a large store, as the explorer shows them first.
        let start = Instant::now();
        if let Some(head) = aeplens::load::load_prefix(
            &[path.display().to_string()],
            aeplens::tui::worker::QUICK_LOOK_BYTES,
        ) {
            let corpus = Arc::new(Corpus::new(head));
            let analysis = Arc::new(Analysis::build(&corpus, &SuppliedLeases::default()));
            let early = findings::dedupe_and_sort(findings::analyse(&corpus, &analysis));
            let mut s = State::new(Keymap::default(), Theme::dark());
            update(
                &mut s,
                Action::Loaded(Box::new(Data::new(corpus, analysis, early))),
            );
            let mut term = Terminal::new(TestBackend::new(160, 48)).unwrap();
            draw(&mut term, &s);
            println!(
                "first frame with content (the first {} records, while the rest loads): {:.2?}",
                s.data.as_ref().map_or(0, |d| d.corpus.len()),
                start.elapsed()
            );
        }
        // Everything: load → analyse → display data → render.
        let start = Instant::now();
        let corpus = Arc::new(Corpus::new(load_paths(&[path.display().to_string()])));
        let loaded = start.elapsed();
        let analysis = Arc::new(Analysis::build(&corpus, &SuppliedLeases::default()));
        let analysed = start.elapsed();
        let early = findings::dedupe_and_sort(findings::analyse(&corpus, &analysis));
        let data = Data::new(corpus, analysis, early);
        let mut s = State::new(Keymap::default(), Theme::dark());
        update(&mut s, Action::Loaded(Box::new(data)));
        let mut term = Terminal::new(TestBackend::new(160, 48)).unwrap();
        draw(&mut term, &s);
        let first = start.elapsed();
        println!(
            "frame with everything {first:.2?} (read+parse {loaded:.2?}, analysis {:.2?}, display data + render {:.2?}) — {} actions, {:.0} MB, {} records\n",
            analysed.saturating_sub(loaded),
            first.saturating_sub(analysed),
            s.data.as_ref().map_or(0, |d| d.flags.len()),
            size as f64 / 1e6,
            s.data.as_ref().map_or(0, |d| d.corpus.len()),
        );
        // Signed evidence: verified, as the worker hands it over (untimed here).
        if let Some(keys) = &keys {
            let d = s.data.as_ref().unwrap();
            let options = aeplens::verify::Options::default();
            let report = aeplens::verify::verify_inputs(&d.corpus.inputs, keys, &options, None);
            let (report, findings) =
                aeplens::analysis::evidence::complete(&d.corpus, &d.analysis, report);
            update(&mut s, Action::Verified(Arc::new(report), findings, None));
            println!(
                "verified: {} findings\n",
                s.data.as_ref().map_or(0, |d| d.findings.len())
            );
        }
        // Keypresses: move, open problems, switch tabs and lists, fold, go to parent/child.
        let script: Vec<Command> = [
            vec![Command::Down; 40],
            vec![Command::NextProblem; 10],
            (1..=6).map(Command::Tab).collect(),
            vec![
                Command::Child,
                Command::Parent,
                Command::Toggle,
                Command::Toggle,
            ],
            vec![Command::PageDown; 5],
            vec![Command::ZoomIn, Command::Right, Command::ZoomOut],
            vec![
                Command::FocusPrev,
                Command::NextList,
                Command::Down,
                Command::NextList,
                // Zoom keys from the navigator (they belong to the timeline).
                Command::ZoomIn,
                Command::ZoomOut,
            ],
            vec![
                Command::FocusNext,
                Command::Up,
                Command::Back,
                Command::Forward,
            ],
        ]
        .concat();
        let mut times = Vec::new();
        let mut slowest = (Duration::ZERO, Command::Down);
        for c in &script {
            let t = Instant::now();
            update(&mut s, Action::Command(*c));
            draw(&mut term, &s);
            times.push(t.elapsed());
            if t.elapsed() > slowest.0 {
                slowest = (t.elapsed(), *c);
            }
        }
        println!(
            "redraw per keypress ({} keys): {} (slowest: {:?})",
            script.len(),
            stats(times),
            slowest.1
        );
        // `P` before any filter column is made (the first second after loading): its
        // field's values are made then.
        update(&mut s, Action::Focus(Pane::Navigator));
        let t = Instant::now();
        update(&mut s, Action::Command(Command::ProblemsOnly));
        draw(&mut term, &s);
        let cold = t.elapsed();
        update(&mut s, Action::Command(Command::ProblemsOnly));
        // The filter's columns, made beside the loop as the explorer's worker makes them.
        let made = Instant::now();
        let columns = aeplens::query::Columns::default();
        let key = {
            let d = s.data.as_ref().unwrap();
            let ctx = aeplens::query::Ctx::of(
                &d.corpus,
                &d.analysis,
                d.report.as_deref(),
                &d.findings,
                None,
            )
            .with_named(d.finding_index());
            columns.warm(&ctx);
            aeplens::tui::state::columns_key(d)
        };
        let made = made.elapsed();
        update(&mut s, Action::Columns(Box::new(columns), key));
        println!(
            "P before the filter's columns: {cold:.2?}; the columns, made beside the loop: {made:.2?}"
        );
        // Every command of the keymap from every pane (an overlay or prompt it opens is
        // closed again with Esc, untimed): the slowest of each pane.
        let keymap = Keymap::default();
        for pane in [Pane::Navigator, Pane::Timeline, Pane::Detail] {
            let mut times = Vec::new();
            let mut slowest = (Duration::ZERO, Command::Down);
            let mut over = Vec::new();
            for b in &keymap.bindings {
                // Leaving, and what hands the screen to another program or writes a file.
                if matches!(b.command, Command::Quit | Command::Note | Command::Report) {
                    continue;
                }
                update(&mut s, Action::Focus(pane));
                let t = Instant::now();
                update(&mut s, Action::Command(b.command));
                draw(&mut term, &s);
                times.push(t.elapsed());
                if t.elapsed() > slowest.0 {
                    slowest = (t.elapsed(), b.command);
                }
                if t.elapsed() >= Duration::from_millis(16) {
                    over.push(format!("{:?} {:.1?}", b.command, t.elapsed()));
                }
                update(&mut s, Action::Command(Command::Cancel));
            }
            println!(
                "every command from the {pane:?} ({} commands): {} (slowest: {:?}; 16 ms or more: {})",
                times.len(),
                stats(times),
                slowest.1,
                if over.is_empty() {
                    "none".to_string()
                } else {
                    over.join(", ")
                }
            );
        }
        // Search: each keystroke matches within the run; Enter searches every action.
        update(&mut s, Action::Command(Command::Search));
        let mut times = Vec::new();
        for c in "a1234".chars() {
            let t = Instant::now();
            update(&mut s, Action::Char(c));
            draw(&mut term, &s);
            times.push(t.elapsed());
        }
        println!("search per keystroke: {}", stats(times));
        // Enter: the frame after it (at once; on large evidence the search moves to the
        // background), then the whole search as the background job runs it.
        let t = Instant::now();
        update(&mut s, Action::Submit);
        draw(&mut term, &s);
        let frame = t.elapsed();
        let t = Instant::now();
        let matches = match s.search.job_to_start() {
            Some(job) => aeplens::tui::state::matches_all(
                job.haystacks.len(),
                &|n, buf| job.haystacks.write(n, buf),
                &job.query,
                &job.done,
                &job.cancel,
            )
            .map_or(0, |m| m.nodes.len()),
            None => s.search.all().len(),
        };
        println!(
            "search on Enter over all {} actions: frame after Enter {frame:.2?}, whole search {:.2?} ({matches} matches)\n",
            s.data.as_ref().map_or(0, |d| d.flags.len()),
            t.elapsed() + frame,
        );
        let _ = std::fs::remove_file(&path);
    }
}
