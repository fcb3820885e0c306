//! Input: a key or mouse event → an [`Action`], as a pure function of the event, the
//! state and the last drawn layout (no terminal here, so every mapping is unit-tested).

use super::keymap::Command;
use super::state::{Action, Pane, State};
use super::view::{Areas, tab_at, window};
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

/// The action a key press asks for: while a prompt is open, characters are typed into
/// it; otherwise the keymap decides. Key releases are ignored.
pub fn key_action(state: &State, key: &KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    if state.review.editor.is_some() {
        // The note editor: Ctrl-S saves, Esc cancels, every other key edits the text.
        return match key.code {
            KeyCode::Char('s') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(Action::Submit)
            }
            KeyCode::Esc => Some(Action::Command(Command::Cancel)),
            _ => Some(Action::Edit((*key).into())),
        };
    }
    if matches!(state.overlay, super::state::Overlay::Palette(_)) {
        // `:`: typed text, Tab completes, ↑↓ choose, Enter runs, Esc closes.
        return match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(Action::Char(c))
            }
            KeyCode::Backspace => Some(Action::Backspace),
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Up | KeyCode::BackTab => Some(Action::Command(Command::Up)),
            KeyCode::Down => Some(Action::Command(Command::Down)),
            KeyCode::Tab | KeyCode::Right => Some(Action::Command(Command::Right)),
            KeyCode::Esc => Some(Action::Command(Command::Cancel)),
            _ => None,
        };
    }
    if matches!(state.overlay, super::state::Overlay::Report(_)) {
        // `R`'s prompt: the path is typed, ←→ change the format, Enter writes, Esc cancels.
        return match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(Action::Char(c))
            }
            KeyCode::Backspace => Some(Action::Backspace),
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Left | KeyCode::BackTab => Some(Action::Command(Command::Left)),
            KeyCode::Right | KeyCode::Tab => Some(Action::Command(Command::Right)),
            KeyCode::Esc => Some(Action::Command(Command::Cancel)),
            _ => None,
        };
    }
    let editing = state.search.is_active() || state.filter.is_active();
    if editing {
        match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                return Some(Action::Char(c));
            }
            KeyCode::Backspace => return Some(Action::Backspace),
            KeyCode::Enter => return Some(Action::Submit),
            KeyCode::Tab if state.filter.is_active() => return Some(Action::Complete),
            _ => {}
        }
    }
    state.keymap.lookup(key).map(Action::Command)
}

/// The action a mouse event asks for, given where the panes were last drawn: a left
/// click on a list row selects that row, on a tab title shows that list or tab (other
/// borders and titles select nothing), the wheel scrolls the pane under it.
pub fn mouse_action(state: &State, areas: &Areas, mouse: &MouseEvent) -> Option<Action> {
    if mouse.kind == MouseEventKind::Down(MouseButton::Left)
        && let Some(tab) = tab_at(state, areas, mouse.column, mouse.row)
    {
        return Some(tab);
    }
    let pos = Position::new(mouse.column, mouse.row);
    let hit = |r: Rect| r.contains(pos);
    let pane = if areas.navigator.is_some_and(hit) {
        Pane::Navigator
    } else if hit(areas.timeline) {
        Pane::Timeline
    } else if hit(areas.detail) {
        Pane::Detail
    } else {
        return None;
    };
    match mouse.kind {
        MouseEventKind::Down(MouseButton::Left) => {
            let row = match pane {
                Pane::Navigator => {
                    // Border and list-tab title on the first row, border on the last.
                    let r = areas.navigator.unwrap_or_default();
                    let first = r.y + 1;
                    let last = (r.y + r.height).saturating_sub(2);
                    if mouse.row < first || mouse.row > last {
                        return None;
                    }
                    let off = window(
                        state.nav.cursor(),
                        state.nav.items().len(),
                        usize::from(r.height.saturating_sub(2)),
                    );
                    usize::from(mouse.row - first) + off
                }
                Pane::Timeline => {
                    // Border, then the column header; rows start on the third line.
                    let r = areas.timeline;
                    let first = r.y + 2;
                    let last = (r.y + r.height).saturating_sub(2);
                    if mouse.row < first || mouse.row > last {
                        return None;
                    }
                    let off = window(
                        state.cursor_row().unwrap_or(0),
                        state.timeline.rows().len(),
                        usize::from(r.height.saturating_sub(3)),
                    );
                    usize::from(mouse.row - first) + off
                }
                Pane::Detail => 0,
            };
            Some(Action::Click(pane, row))
        }
        MouseEventKind::ScrollUp => Some(Action::Scroll(pane, -3)),
        MouseEventKind::ScrollDown => Some(Action::Scroll(pane, 3)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keymap::{Command, Keymap};
    use crate::tui::state::update;
    use crate::tui::theme::Theme;
    use crate::tui::view::layout;

    fn click(column: u16, row: u16) -> MouseEvent {
        MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }
    }

    fn state() -> State {
        State::new(Keymap::default(), Theme::dark())
    }

    #[test]
    fn clicks_on_each_panes_first_and_last_row() {
        let s = state();
        for (w, h) in [(80u16, 24u16), (160, 48)] {
            let areas = layout(Rect::new(0, 0, w, h), &s);
            // Timeline: first list row is two below its top border.
            let t = areas.timeline;
            let first = mouse_action(&s, &areas, &click(t.x + 3, t.y + 2));
            assert!(
                matches!(first, Some(Action::Click(Pane::Timeline, 0))),
                "{w}x{h}: {first:?}"
            );
            let last_row = t.y + t.height - 2;
            let last = mouse_action(&s, &areas, &click(t.x + 3, last_row));
            let want = usize::from(last_row - (t.y + 2));
            assert!(
                matches!(last, Some(Action::Click(Pane::Timeline, r)) if r == want),
                "{w}x{h}: {last:?}"
            );
            // Borders and the column header select nothing.
            for row in [t.y, t.y + 1, t.y + t.height - 1] {
                assert!(mouse_action(&s, &areas, &click(t.x + 3, row)).is_none());
            }
            // Detail: any row is a click on the pane.
            let d = areas.detail;
            for row in [d.y + 1, d.y + d.height - 2] {
                assert!(matches!(
                    mouse_action(&s, &areas, &click(d.x + 2, row)),
                    Some(Action::Click(Pane::Detail, 0))
                ));
            }
            // Navigator: beside the timeline from 110 columns, folded below that.
            match areas.navigator {
                Some(n) => {
                    assert!(matches!(
                        mouse_action(&s, &areas, &click(n.x + 2, n.y + 1)),
                        Some(Action::Click(Pane::Navigator, 0))
                    ));
                    let last_row = n.y + n.height - 2;
                    let want = usize::from(last_row - (n.y + 1));
                    assert!(matches!(
                        mouse_action(&s, &areas, &click(n.x + 2, last_row)),
                        Some(Action::Click(Pane::Navigator, r)) if r == want
                    ));
                    assert!(mouse_action(&s, &areas, &click(n.x, n.y)).is_none());
                }
                None => assert!(w < 110),
            }
            // The header and the hint bar are no pane.
            assert!(mouse_action(&s, &areas, &click(1, 0)).is_none());
            assert!(mouse_action(&s, &areas, &click(1, h - 1)).is_none());
        }
    }

    #[test]
    fn clicks_on_tab_titles_switch_lists() {
        let s = state();
        let areas = layout(Rect::new(0, 0, 160, 48), &s);
        let n = areas.navigator.expect("wide layout");
        // " Runs│Chains│…" (short where columns are few) drawn after the corner:
        // "Chains" starts 7 columns in.
        assert!(matches!(
            mouse_action(&s, &areas, &click(n.x + 9, n.y)),
            Some(Action::ShowList(crate::tui::state::NavList::Chains))
        ));
        assert!(matches!(
            mouse_action(&s, &areas, &click(n.x + 2, n.y)),
            Some(Action::ShowList(crate::tui::state::NavList::Runs))
        ));
        // The separator between two tabs is no tab.
        assert!(mouse_action(&s, &areas, &click(n.x + 6, n.y)).is_none());
        // Narrow: the one-line tab bar.
        let areas = layout(Rect::new(0, 0, 80, 24), &s);
        let bar = areas.tab_bar.expect("narrow layout");
        assert!(matches!(
            mouse_action(&s, &areas, &click(bar.x + 1, bar.y)),
            Some(Action::ShowList(crate::tui::state::NavList::Runs))
        ));
    }

    #[test]
    fn the_wheel_scrolls_the_pane_under_it() {
        let s = state();
        let areas = layout(Rect::new(0, 0, 160, 48), &s);
        let mut m = click(areas.detail.x + 2, areas.detail.y + 2);
        m.kind = MouseEventKind::ScrollDown;
        assert!(matches!(
            mouse_action(&s, &areas, &m),
            Some(Action::Scroll(Pane::Detail, 3))
        ));
    }

    #[test]
    fn keys_type_into_an_open_prompt_and_follow_the_keymap_otherwise() {
        let mut s = state();
        let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        assert!(matches!(
            key_action(&s, &key('q')),
            Some(Action::Command(Command::Quit))
        ));
        update(&mut s, Action::Command(Command::Search));
        assert!(matches!(key_action(&s, &key('q')), Some(Action::Char('q'))));
        let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
        assert!(matches!(key_action(&s, &enter), Some(Action::Submit)));
        let mut release = key('x');
        release.kind = KeyEventKind::Release;
        assert!(key_action(&s, &release).is_none());
    }
}
