//! The state of a scrolled overlay (help, inputs): its first visible line.

use super::super::keymap::Command;

/// Where a scrolled overlay is; views clamp it to their content.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scroll {
    top: usize,
}

impl Scroll {
    /// The first visible line (may exceed the content; views clamp it).
    pub fn top(self) -> usize {
        self.top
    }

    /// Moves with the movement keys; false when `c` closes the overlay (Esc, q, Enter, or
    /// the key that opened it).
    pub(super) fn command(&mut self, c: Command, page: usize, opener: Command) -> bool {
        let page = page.max(1);
        match c {
            Command::Cancel | Command::Quit | Command::Toggle => return false,
            c if c == opener => return false,
            Command::Down => self.top += 1,
            Command::Up => self.top = self.top.saturating_sub(1),
            Command::PageDown => self.top += page,
            Command::PageUp => self.top = self.top.saturating_sub(page),
            Command::Home => self.top = 0,
            Command::End => self.top = usize::MAX / 2,
            _ => {}
        }
        true
    }
}
