//! The screen, as pure functions of `&State`: header, navigator, timeline, detail tabs,
//! hint bar and overlays. Only the visible slice of each list is turned into cells.

mod compare;
mod detail;
mod finding;
mod fork;
mod header;
mod inputs;
mod lease;
mod lines;
mod navigator;
mod overlay;
mod record;
mod review;
mod telemetry;
mod timeline;

use compare::*;
use detail::*;
use finding::*;
use header::*;
use inputs::*;
use lease::*;
use lines::*;
use navigator::*;
use overlay::*;
use record::*;
use review::*;
use telemetry::*;
use timeline::*;

pub use crate::tui::state::axis::{Axis, run_axis};
pub use lines::abbreviate;
pub use overlay::GLYPH_LEGEND;

use super::data::{Data, flag, glyphs};
use super::keymap::{Command, Scope};
use super::state::{
    Action, CopyTarget, DetailTab, NavList, Overlay, Pane, Row, State, chain_status, nav_text,
    raw_lines,
};
use crate::analysis::authority::ChangeStatus;
use crate::analysis::comparability::BadgeState;
use crate::analysis::graph::NodeId;
use crate::analysis::lease::{LeaseSource, LeaseView};
use crate::model::json::Json;
use crate::model::text::{sanitize, show_id, value_line};
use crate::model::time::{format_duration_ms, format_ms};
use crate::verify::Report;
use crate::verify::chain::{ChainStatus, LinkState};
use crate::verify::{AuthStatus, CheckStatus};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

/// Where each pane sits for a terminal size (also used for mouse hit-testing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Areas {
    pub header: Rect,
    /// None when the screen is narrow and the navigator folds into a tab bar.
    pub navigator: Option<Rect>,
    pub tab_bar: Option<Rect>,
    pub timeline: Rect,
    pub detail: Rect,
    pub hints: Rect,
}

/// Lays out the screen. Narrow screens (< 110 columns) fold the navigator into a
/// one-line tab bar; focusing the navigator then shows it in the timeline's place.
///
/// ```text
/// ≥ 110 columns                              < 110 columns
/// ┌ header (1 row) ───────────────────────┐  ┌ header ─────────────────────┐
/// ├ navigator (42) ┬ timeline ────────────┤  ├ tab bar (1 row) ────────────┤
/// │ header.rs      │ timeline.rs          │  │ timeline (or the navigator  │
/// │ navigator.rs   │ lease.rs (windows)   │  │ while it has the focus)     │
/// ├────────────────┴──────────── 50 % ────┤  ├─────────────────────────────┤
/// │ detail: tab bar + 1–6 (detail.rs,     │  │ detail                      │
/// │ lease.rs, record.rs)        50 %      │  │                             │
/// ├ hint bar (1 row) ─── ? help · q quit ─┤  ├ hint bar ───────────────────┤
/// └ overlays (overlay.rs) drawn on top    ┘  └ below 60×16: "too small"    ┘
/// ```
pub fn layout(area: Rect, state: &State) -> Areas {
    // A bad filter expression takes a second row for its caret and message.
    // A long message (a report's path) wraps onto a second row rather than being cut.
    let long_message = !state.search.is_active()
        && !state.filter.is_active()
        && message_lines(state, area.width).is_some_and(|l| l.len() > 1);
    let hint_rows = if state.filter.needs_second_row() || long_message {
        2
    } else {
        1
    };
    let [header, body, hints] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(4),
        Constraint::Length(hint_rows),
    ])
    .areas(area);
    let [top, detail] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body);
    if area.width >= 110 {
        let [nav, timeline] = Layout::horizontal([
            Constraint::Length(nav_width(area.width, state)),
            Constraint::Min(20),
        ])
        .areas(top);
        Areas {
            header,
            navigator: Some(nav),
            tab_bar: None,
            timeline,
            detail,
            hints,
        }
    } else {
        let [bar, rest] = Layout::vertical([Constraint::Length(1), Constraint::Min(2)]).areas(top);
        let nav_focused = state.focus == Pane::Navigator;
        Areas {
            header,
            navigator: nav_focused.then_some(rest),
            tab_bar: Some(bar),
            timeline: if nav_focused { Rect::default() } else { rest },
            detail,
            hints,
        }
    }
}

/// What a click on a tab title asks for: a navigator list (its title row, or the narrow
/// tab bar) or a detail tab (the detail pane's title row). Positions come from the same
/// spans the views draw.
pub fn tab_at(s: &State, areas: &Areas, column: u16, row: u16) -> Option<Action> {
    fn hit<T: Copy>(spans: &[Span<'_>], tabs: &[Option<T>], x0: u16, column: u16) -> Option<T> {
        let mut x = x0;
        for (span, tab) in spans.iter().zip(tabs) {
            let w = span.width() as u16;
            if column >= x && column < x + w {
                return *tab;
            }
            x += w;
        }
        None
    }
    let on_row = |r: Rect| row == r.y && column >= r.x && column < r.x + r.width;
    if let Some(n) = areas.navigator.filter(|n| on_row(*n)) {
        let (spans, lists) = nav_tabs(s, n.width.saturating_sub(6));
        return hit(&spans, &lists, n.x + 1, column).map(Action::ShowList);
    }
    if let Some(bar) = areas.tab_bar.filter(|b| on_row(*b)) {
        let (spans, lists) = nav_tabs(s, bar.width);
        return hit(&spans, &lists, bar.x, column).map(Action::ShowList);
    }
    if on_row(areas.detail) {
        let d = s.data.as_ref()?;
        let (title, tabs) = detail_title(s, d, s.timeline.node()?, areas.detail.width);
        let number = |t: DetailTab| {
            DetailTab::ALL
                .iter()
                .position(|x| *x == t)
                .map(|i| i as u8 + 1)
        };
        return hit(&title.spans, &tabs, areas.detail.x + 1, column)
            .and_then(number)
            .map(|n| Action::Command(Command::Tab(n)));
    }
    None
}

/// The smallest terminal (columns, rows) the explorer draws its panes in.
pub const MIN_SIZE: (u16, u16) = (60, 16);

/// The navigator's width beside the timeline: 42 columns up to 140, then a quarter of
/// the screen (at most 70), moved by `<`/`>`; the timeline keeps at least 40.
pub fn nav_width(width: u16, state: &State) -> u16 {
    let base = i32::from((width / 4).clamp(42, 70));
    let max = i32::from(width.saturating_sub(40));
    (base + i32::from(state.nav.width_delta())).clamp(24, max.max(24)) as u16
}

/// The whole screen.
pub struct Screen<'a>(pub &'a State);

impl Widget for &Screen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = self.0;
        buf.set_style(area, s.theme.base);
        if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
            Paragraph::new(format!(
                "terminal too small ({}×{}): aeplens needs at least {}×{}. Enlarge the window, or press q to quit.",
                area.width, area.height, MIN_SIZE.0, MIN_SIZE.1
            ))
            .style(s.theme.warn)
            .wrap(Wrap { trim: true })
            .render(area, buf);
            return;
        }
        let a = layout(area, s);
        header(s, a.header, buf);
        if let Some(bar) = a.tab_bar {
            tab_bar(s, bar, buf);
        }
        if let Some(nav) = a.navigator {
            navigator(s, nav, buf);
        }
        if a.timeline.area() > 0 {
            timeline(s, a.timeline, buf);
        }
        detail(s, a.detail, buf);
        hint_bar(s, a.hints, buf);
        match &s.overlay {
            Overlay::None => {}
            Overlay::Help(scroll) => help(s, scroll.top(), area, buf),
            Overlay::Inputs(scroll) => inputs(s, scroll.top(), area, buf),
            Overlay::Compare(scroll) => compare(s, scroll.top(), area, buf),
            Overlay::Fork(scroll) => fork::fork(s, scroll.top(), area, buf),
            Overlay::Copy(items, i) => copy_menu(s, items, *i, area, buf),
            Overlay::Report(p) => report_prompt(s, p, area, buf),
            Overlay::Palette(p) => palette(s, p, area, buf),
        }
        note_editor(s, area, buf);
    }
}

/// A pane's frame: its title on the left, the key that focuses it on the right.
fn pane_block<'a>(s: &State, pane: Pane, title: Line<'a>) -> Block<'a> {
    let style = if s.focus == pane {
        s.theme.focus_border
    } else {
        s.theme.border
    };
    let command = match pane {
        Pane::Navigator => Command::FocusNavigator,
        Pane::Timeline => Command::FocusTimeline,
        Pane::Detail => Command::FocusDetail,
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(style)
        .title(title);
    match s.keymap.key_for(command) {
        Some(key) => block.title_top(Line::styled(format!(" {key} "), s.theme.dim).right_aligned()),
        None => block,
    }
}

/// The first visible index so that `cursor` stays in a window of `height` rows.
pub fn window(cursor: usize, len: usize, height: usize) -> usize {
    if height == 0 || len <= height {
        return 0;
    }
    cursor.saturating_sub(height / 2).min(len - height)
}

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}
