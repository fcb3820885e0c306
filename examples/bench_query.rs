//! Times the filter language (docs/query.md) on a generated store (release build):
//!
//! ```text
//! cargo run --release --example bench_query -- 1000000
//! ```
//! For each action count: each expression evaluated over every action, first with no
//! column made yet (`cold`: its fields' values are made from the evidence) and then as the
//! explorer re-filters (`warm`); then the explorer's filter prompt typed a key at a time —
//! the check, the re-filter and the redraw of each keystroke — with the columns its
//! worker makes once the evidence is verified.

use aeplens::load::{Corpus, load_paths};
use aeplens::query::{Columns, Ctx, Query};
use aeplens::tui::data::Data;
use aeplens::tui::keymap::{Command, Keymap};
use aeplens::tui::state::{Action, State, update};
use aeplens::tui::theme::Theme;
use aeplens::tui::view::Screen;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::{Duration, Instant};

#[path = "support/synthetic.rs"]
mod synthetic;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Expressions a reviewer types, from one field to a conjunction over record, finding and
/// lease fields.
const EXPRESSIONS: [&str; 6] = [
    "decision == \"deny\"",
    "tool matches \"^(sql|shell)_\" and not verified",
    "reapproved and lease.verdict != \"inside\"",
    "severity >= \"medium\" and time >= 2026-06-06T10:02Z",
    "record.authenticity != \"valid\" and state_changing",
    "finding == \"F-EXEC-AFTER-DENY\" or (copies > 1 and drift == \"drifted\")",
];

fn stats(mut d: Vec<Duration>) -> String {
    d.sort();
    let mean = d.iter().sum::<Duration>() / d.len().max(1) as u32;
    format!(
        "mean {mean:.2?} · p95 {:.2?} · max {:.2?}",
        d[(d.len() * 95 / 100).min(d.len() - 1)],
        d[d.len() - 1]
    )
}

fn main() {
    println!("cores: {}", rayon::current_num_threads());
    for n in synthetic::counts_from_args() {
        println!("## {n} actions\n");
        let path = std::env::temp_dir().join(format!("aeplens-bench-query-{n}.ndjson"));
        std::fs::write(&path, synthetic::generate(n)).unwrap();
        let corpus = Corpus::new(load_paths(&[path.display().to_string()]));
        let setting = aeplens::open::Setting::default();
        let data = Data::of(aeplens::open::open_corpus(&setting, corpus));
        let report = data.report.as_deref();
        let ctx = Ctx::of(&data.corpus, &data.analysis, report, &data.findings, None);
        println!("| expression | matched | cold (columns made) | warm |\n|---|---|---|---|");
        let columns = Columns::default();
        for text in EXPRESSIONS {
            let q = Query::parse(text).unwrap();
            let cold = Instant::now();
            let pass = q.matches(&ctx, &columns);
            let cold = cold.elapsed();
            let mut warm = Vec::new();
            for _ in 0..5 {
                let t = Instant::now();
                std::hint::black_box(q.matches(&ctx, &columns));
                warm.push(t.elapsed());
            }
            warm.sort();
            println!(
                "| `{text}` | {} | {cold:.1?} | {:.1?} |",
                pass.iter().filter(|p| **p).count(),
                warm[2]
            );
        }
        // The explorer's worker makes the columns once the evidence is verified.
        let key = aeplens::tui::state::columns_key(&data);
        let warm = Instant::now();
        let made = Columns::default();
        made.warm(&ctx);
        println!(
            "\nthe worker's columns, made once verified: {:.2?}",
            warm.elapsed()
        );
        let mut s = State::new(Keymap::default(), Theme::dark());
        update(&mut s, Action::Loaded(Box::new(data)));
        update(&mut s, Action::Columns(Box::new(made), key));
        let mut term = Terminal::new(TestBackend::new(160, 48)).unwrap();
        term.draw(|f| f.render_widget(&Screen(&s), f.area()))
            .unwrap();
        update(&mut s, Action::Command(Command::Filter));
        let typed = "decision == \"deny\" and not verified";
        let mut times = Vec::new();
        for c in typed.chars() {
            let t = Instant::now();
            update(&mut s, Action::Char(c));
            term.draw(|f| f.render_widget(&Screen(&s), f.area()))
                .unwrap();
            times.push(t.elapsed());
        }
        println!(
            "explorer filter prompt, {} keystrokes of `{typed}` (check + re-filter + redraw): {}\n",
            times.len(),
            stats(times)
        );
        let _ = std::fs::remove_file(&path);
    }
}
