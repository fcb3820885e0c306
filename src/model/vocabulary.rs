//! The words of action texts that take few distinct values — tool names, side-effect
//! classes, decision outcomes, grants, result outcomes: each word is kept once for the
//! life of the process and an action's facts
//! ([`ActionFacts`](super::facts::ActionFacts)) keep its number, two bytes instead of the
//! text. The words come from records, so the vocabulary is bounded: at most [`CAPACITY`]
//! words of at most [`LONGEST`] bytes; any other text stays in the action's own buffer, as
//! every text did before.

use std::cell::RefCell;
use std::sync::{LazyLock, OnceLock, PoisonError, RwLock};

/// The most words the vocabulary holds.
pub const CAPACITY: usize = 4096;

/// The longest text kept as a word, in bytes.
pub const LONGEST: usize = 48;

/// The words, by number: read without a lock.
static WORDS: [OnceLock<&'static str>; CAPACITY] = [const { OnceLock::new() }; CAPACITY];

/// The numbers, by word: read when a thread meets a word the first time.
static NUMBERS: LazyLock<RwLock<hashbrown::HashMap<&'static str, u16>>> =
    LazyLock::new(RwLock::default);

thread_local! {
    /// The words this thread has looked up, with their numbers.
    static KNOWN: RefCell<hashbrown::HashMap<&'static str, u16>> = RefCell::default();
}

/// The number of `text` in the vocabulary, added when it is new and there is room;
/// `None` for a text too long, or new to a full vocabulary.
pub fn number(text: &str) -> Option<u16> {
    if text.len() > LONGEST {
        return None;
    }
    if let Some(n) = KNOWN.with(|known| known.borrow().get(text).copied()) {
        return Some(n);
    }
    let (word, n) = known_word(text).or_else(|| new_word(text))?;
    KNOWN.with(|known| known.borrow_mut().insert(word, n));
    Some(n)
}

/// `text` and its number, when the vocabulary has it (a read lock: threads do not wait
/// for each other here).
fn known_word(text: &str) -> Option<(&'static str, u16)> {
    let numbers = NUMBERS.read().unwrap_or_else(PoisonError::into_inner);
    numbers.get_key_value(text).map(|(&word, &n)| (word, n))
}

/// Adds `text` to the vocabulary when there is room (a full one is known without the
/// lock, so a store of many distinct names does not queue the cores on it).
fn new_word(text: &str) -> Option<(&'static str, u16)> {
    if WORDS[CAPACITY - 1].get().is_some() {
        return None;
    }
    let mut numbers = NUMBERS.write().unwrap_or_else(PoisonError::into_inner);
    if let Some((&word, &n)) = numbers.get_key_value(text) {
        return Some((word, n));
    }
    let n = numbers.len();
    let slot = WORDS.get(n)?;
    let word: &'static str = Box::leak(Box::from(text));
    slot.set(word).ok()?;
    numbers.insert(word, n as u16);
    Some((word, n as u16))
}

/// The word numbered `n` ([`number`] gave `n`).
pub fn word(n: u16) -> Option<&'static str> {
    WORDS.get(usize::from(n))?.get().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A word has one number wherever it is asked for and gives back its text; a text
    /// past the longest word is never a word.
    #[test]
    fn words_have_one_number_on_every_thread() {
        let here = number("vocabulary-test-tool").unwrap();
        let there = std::thread::spawn(|| number("vocabulary-test-tool"))
            .join()
            .unwrap();
        assert_eq!(Some(here), there);
        assert_eq!(word(here), Some("vocabulary-test-tool"));
        assert_ne!(number("vocabulary-test-other"), Some(here));
        assert_eq!(number(&"x".repeat(LONGEST + 1)), None);
        assert!(number(&"x".repeat(LONGEST)).is_some());
    }
}
