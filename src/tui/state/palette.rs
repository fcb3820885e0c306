//! `:`: the command line for what has no key of its own — go to a time or an action,
//! open the marks list, write a report, set the filter — completed as it is typed.

use super::*;
use crate::review::report::Format as ReportFormat;

/// The open command line: what is typed and the highlighted completion.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Palette {
    pub text: String,
    /// The completion ↑↓ highlighted (`None`: Enter runs the text as typed).
    pub selected: Option<usize>,
}

/// A completion: the whole command line it stands for, and what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    pub line: String,
    pub help: String,
}

/// The commands, what their argument is, and what they do.
pub const COMMANDS: [(&str, &str, &str); 9] = [
    (
        "goto",
        "ACTION | RUN/ACTION | TIME",
        "go to an action, or the first action at or after a time (ISO-8601 UTC or epoch ms)",
    ),
    ("marks", "", "open the list of your marks"),
    (
        "report",
        "md|html|json|sarif|junit [FILE]",
        "write the report (without FILE: ask where)",
    ),
    (
        "filter",
        "EXPR",
        "show only actions an expression matches (docs/query.md; tool:x is:problem is:marked still work); empty clears",
    ),
    (
        "save",
        "NAME",
        "keep the filter applied under NAME in the review file",
    ),
    (
        "filters",
        "[NAME]",
        "the saved filters; with NAME, apply that one",
    ),
    (
        "inputs",
        "",
        "every input file, its records and load errors",
    ),
    ("help", "", "the glyph legend and every key"),
    ("quit", "", "leave the explorer (the review is saved)"),
];

/// How many completions are listed.
pub const SHOWN: usize = 8;

/// Completions for `text`, best first (at most [`SHOWN`]).
pub fn suggestions(state: &State, text: &str) -> Vec<Suggestion> {
    let (word, rest) = match text.split_once(' ') {
        Some((w, r)) => (w, Some(r)),
        None => (text, None),
    };
    let Some(rest) = rest else {
        // The command itself.
        return COMMANDS
            .iter()
            .filter(|(name, ..)| name.starts_with(word))
            .map(|(name, arg, help)| Suggestion {
                line: if arg.is_empty() {
                    (*name).to_string()
                } else {
                    format!("{name} ")
                },
                help: format!("{arg}  {help}").trim().to_string(),
            })
            .collect();
    };
    let mut out = Vec::new();
    match word {
        "goto" => {
            if let Some(ms) = parse_time(rest) {
                out.push(Suggestion {
                    line: format!("goto {rest}"),
                    help: format!(
                        "the first action at or after {}",
                        crate::model::time::format_ms(ms)
                    ),
                });
            }
            out.extend(action_completions(state, rest));
        }
        "report" => {
            let (format, path) = rest.split_once(' ').unwrap_or((rest, ""));
            for f in ReportFormat::ALL {
                if f.name().starts_with(format) {
                    out.push(Suggestion {
                        line: format!("report {} {path}", f.name()).trim_end().to_string(),
                        help: if path.is_empty() {
                            format!("write the {} report (asks where)", f.name())
                        } else {
                            format!("write the {} report to {}", f.name(), sanitize(path))
                        },
                    });
                }
            }
        }
        "filter" => {
            let verdict = match compile(rest) {
                Ok(_) if rest.trim().is_empty() => "clear the filter".to_string(),
                Ok(_) => "apply this filter".to_string(),
                Err(e) => format!("column {}: {}", e.column(), e.message),
            };
            out.push(Suggestion {
                line: format!("filter {rest}"),
                help: verdict,
            });
            for c in completions(state, rest).into_iter().take(SHOWN - 1) {
                out.push(Suggestion {
                    line: format!("filter {c}"),
                    help: String::new(),
                });
            }
        }
        "filters" => {
            let saved = state.review.review.as_ref().map(|r| r.filters.as_slice());
            for f in saved.unwrap_or_default() {
                if f.name.starts_with(rest.trim()) {
                    out.push(Suggestion {
                        line: format!("filters {}", f.name),
                        help: f.expression.clone(),
                    });
                }
            }
        }
        _ => {}
    }
    out.truncate(SHOWN);
    out
}

/// Action ids of the shown run matching `typed` (exact first, then by fuzzy score),
/// as `goto RUN/ACTION` lines so that each names one action.
fn action_completions(state: &State, typed: &str) -> Vec<Suggestion> {
    /// Ids looked at in a very large run (the completion stays instant).
    const LOOKED_AT: usize = 50_000;
    let Some(d) = state.data.as_ref() else {
        return Vec::new();
    };
    let g = &d.analysis.graph;
    let Some(run) = g.runs.get(state.timeline.run()) else {
        return Vec::new();
    };
    let typed = typed.rsplit_once('/').map_or(typed, |(_, id)| id);
    let matcher = SkimMatcherV2::default();
    let mut scored: Vec<(i64, String, String)> = Vec::new();
    let mut seen = HashSet::new();
    // The facts, not the records: the completions are made at every frame, and a record
    // whose tree was let go would be read again for each.
    for &n in run.nodes.iter().take(LOOKED_AT) {
        let Some(action) = g.facts(&d.corpus, n) else {
            continue;
        };
        let Some(id) = action.id() else {
            continue;
        };
        if !seen.insert(id.to_string()) {
            continue;
        }
        let score = if id == typed {
            i64::MAX
        } else if typed.is_empty() {
            0
        } else {
            match matcher.fuzzy_match(id, typed) {
                Some(s) => s,
                None => continue,
            }
        };
        let mut about = action.tool().unwrap_or("(no tool)").to_string();
        if let Some(t) = g.nodes[n as usize].time() {
            about = format!("{about} · {}", crate::model::time::format_ms(t));
        }
        scored.push((score, id.to_string(), about));
    }
    // Best score first; ties in the run's order.
    scored.sort_by_key(|x| std::cmp::Reverse(x.0));
    scored
        .into_iter()
        .take(SHOWN)
        .map(|(_, id, about)| Suggestion {
            line: format!("goto {}/{}", run.id, id),
            help: about,
        })
        .collect()
}

/// A time as a reviewer types it: ISO-8601 (zone optional, UTC assumed; date alone is
/// midnight; seconds optional) or epoch milliseconds (11 digits or more: after 1973, so
/// that a short number stays an action id).
pub fn parse_time(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return (t.len() >= 11).then(|| t.parse::<f64>().ok()).flatten();
    }
    // The zone (Z or ±HH:MM) apart, UTC when none; the date and time completed.
    let (local, zone) = if let Some(l) = t.strip_suffix(['Z', 'z']) {
        (l, "Z")
    } else {
        match t
            .len()
            .checked_sub(6)
            .and_then(|i| Some((t.get(..i)?, t.get(i..)?)))
        {
            Some((l, z))
                if z.starts_with(['+', '-']) && z.as_bytes()[3] == b':' && l.len() >= 16 =>
            {
                (l, z)
            }
            _ => (t, "Z"),
        }
    };
    let full = match local.len() {
        10 => format!("{local}T00:00:00{zone}"),
        16 => format!("{local}:00{zone}"),
        _ => format!("{local}{zone}"),
    };
    crate::model::time::parse_iso8601_ms(&full)
}

/// `:` opens the command line.
pub(super) fn open(state: &mut State) {
    state.overlay = Overlay::Palette(Palette::default());
}

/// A key while the command line is open.
pub(super) fn command(state: &mut State, c: Command) {
    let Overlay::Palette(p) = &state.overlay else {
        return;
    };
    let n = suggestions(state, &p.text).len();
    let Overlay::Palette(p) = &mut state.overlay else {
        return;
    };
    match c {
        Command::Up => p.selected = p.selected.and_then(|i| i.checked_sub(1)),
        Command::Down if n > 0 => {
            p.selected = Some(p.selected.map_or(0, |i| (i + 1).min(n - 1)));
        }
        // Tab: the highlighted (or first) completion becomes the text.
        Command::Right => {
            let i = p.selected.unwrap_or(0);
            let text = p.text.clone();
            if let Some(s) = suggestions(state, &text).into_iter().nth(i)
                && let Overlay::Palette(p) = &mut state.overlay
            {
                p.text = s.line;
                p.selected = None;
            }
        }
        Command::Cancel => state.overlay = Overlay::None,
        _ => {}
    }
}

/// Typed text changes what is highlighted back to nothing.
pub(super) fn edit(p: &mut Palette, f: impl FnOnce(&mut String)) {
    f(&mut p.text);
    p.selected = None;
}

/// Enter: runs the highlighted completion, else the text as typed; when the text is not
/// a command, its first completion (`mar` runs `marks`).
pub(super) fn submit(state: &mut State) {
    let Overlay::Palette(p) = std::mem::replace(&mut state.overlay, Overlay::None) else {
        return;
    };
    state.message = None;
    let list = suggestions(state, &p.text);
    let line = match p.selected.and_then(|i| list.get(i)) {
        Some(s) => s.line.clone(),
        None => p.text.clone(),
    };
    if let Err(e) = run(state, line.trim()) {
        // Only a command's first letters stand for its first completion.
        let word_only = !line.trim().contains(' ');
        match list.first().filter(|s| s.line.trim() != line.trim()) {
            Some(first) if p.selected.is_none() && word_only => {
                let first = first.line.clone();
                if let Err(e) = run(state, first.trim()) {
                    state.message = Some(e);
                }
            }
            _ => state.message = Some(e),
        }
    }
}

/// Runs one command line; why not, when it is not one.
fn run(state: &mut State, line: &str) -> Result<(), String> {
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    match word {
        "goto" if rest.is_empty() => Err("goto what? an action id, RUN/ACTION or a time".into()),
        "goto" => {
            if let Some(ms) = parse_time(rest) {
                return goto_time(state, ms);
            }
            goto(state, rest);
            match state.message.as_deref() {
                Some(m) if m.starts_with("--goto:") => {
                    Err(m.trim_start_matches("--goto: ").to_string())
                }
                _ => Ok(()),
            }
        }
        "marks" => {
            show_list(state, NavList::Marks);
            Ok(())
        }
        "report" => {
            let (format, path) = rest.split_once(' ').unwrap_or((rest, ""));
            let Some(format) = ReportFormat::ALL.into_iter().find(|f| f.name() == format) else {
                return Err(format!(
                    "report as what? {}",
                    ReportFormat::ALL.map(ReportFormat::name).join(", ")
                ));
            };
            if state.data.as_ref().is_none_or(|d| d.report.is_none()) {
                return Err("the report waits for verification to finish".into());
            }
            review::open_report_prompt(state);
            if let Overlay::Report(p) = &mut state.overlay {
                p.set_format(format);
                if !path.trim().is_empty() {
                    p.path = path.trim().to_string();
                    state.review.report_requested = Some(p.clone());
                    state.overlay = Overlay::None;
                }
            }
            Ok(())
        }
        "filter" => {
            compile(rest).map_err(|e| format!("column {}: {}", e.column(), e.message))?;
            state.filter.edit(|t| *t = rest.to_string());
            apply_filter(state);
            if rest.is_empty() {
                state.message = Some("filter cleared: every action".into());
            }
            Ok(())
        }
        "save" => save_filter(state, rest.trim()),
        "filters" => {
            let name = rest.trim();
            let saved = state.review.review.as_ref().map(|r| r.filters.clone());
            let saved = saved.unwrap_or_default();
            if name.is_empty() {
                if saved.is_empty() {
                    return Err("no saved filter (:save NAME keeps the one applied)".into());
                }
                let names: Vec<&str> = saved.iter().map(|f| f.name.as_str()).collect();
                state.message = Some(format!(
                    "saved filters: {} (:filters NAME applies one)",
                    names.join(", ")
                ));
                return Ok(());
            }
            let f = (saved.iter().find(|f| f.name == name))
                .ok_or_else(|| format!("no saved filter {:?}", sanitize(name)))?;
            state.filter.edit(|t| t.clone_from(&f.expression));
            apply_filter(state);
            if let Some(e) = state.filter.error() {
                return Err(e);
            }
            Ok(())
        }
        "inputs" => {
            state.overlay = Overlay::Inputs(Scroll::default());
            Ok(())
        }
        "help" => {
            state.overlay = Overlay::Help(Scroll::default());
            Ok(())
        }
        "quit" => {
            state.quit = true;
            Ok(())
        }
        "" => Ok(()),
        other => Err(format!(
            "no command {:?} (goto, marks, report, filter, save, filters, inputs, help, quit)",
            sanitize(other)
        )),
    }
}

/// `:save NAME`: keeps the filter applied under NAME in the review (replacing one of
/// that name).
fn save_filter(state: &mut State, name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("save as what? :save NAME".into());
    }
    // Kept as the expression it stands for (the old terms translated): what `--where`
    // takes, and what a report names it by.
    let expression = super::expression(
        state
            .filter
            .applied()
            .ok_or("no filter applied to save (f sets one)")?,
    );
    let review = (state.review.review.as_mut()).ok_or("the review is not open yet")?;
    let saved = crate::review::file::SavedFilter {
        name: name.to_string(),
        expression: expression.clone(),
        saved_at: crate::review::file::now(),
    };
    match review.filters.iter_mut().find(|f| f.name == name) {
        Some(f) => *f = saved,
        None => review.filters.push(saved),
    }
    state.review.dirty = true;
    state.message = Some(format!(
        "saved filter {}: {}",
        sanitize(name),
        sanitize(&expression)
    ));
    Ok(())
}

/// Selects the first action at or after `ms` in any run (the shown run wins a tie), and
/// says which; the last action when every action is earlier.
fn goto_time(state: &mut State, ms: f64) -> Result<(), String> {
    let d = state.data.as_ref().ok_or("no evidence loaded yet")?;
    let g = &d.analysis.graph;
    let shown = state.timeline.run();
    let timed = g.runs.iter().enumerate().flat_map(|(r, run)| {
        run.nodes
            .iter()
            .filter_map(move |&n| Some((g.nodes[n as usize].time()?, r != shown, n)))
    });
    let after = timed
        .clone()
        .filter(|(t, ..)| *t >= ms)
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (t, node, note) = if let Some((t, _, n)) = after {
        (t, n, "first action at or after")
    } else {
        let (t, _, n) = timed
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
            .ok_or("no action has a time")?;
        (t, n, "every action is before")
    };
    select(state, node, true);
    state.focus = Pane::Timeline;
    state.message = Some(format!(
        "{note} {}: {}",
        crate::model::time::format_ms(ms),
        crate::model::time::format_ms(t)
    ));
    Ok(())
}
