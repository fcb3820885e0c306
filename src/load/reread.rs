//! Reading a record's line again, once its tree was let go: bound to what was verified
//! (its canonical hash, or the bytes the line had), so nothing is concluded from bytes
//! that were not verified.

use super::parser;
use crate::canon::Sha256Digest;
use crate::model::json::Json;
use crate::model::{Source, Span};

/// Reads a record's line again from its file and parses it (a [`Reread`](crate::model::Reread)):
/// what a record whose tree was let go gives when asked for. The JSON stands only if its
/// canonical SHA-256 is still `canonical` (when given), the hash it was verified with.
pub fn reread(source: &Source, span: Span, canonical: Option<&[u8; 32]>) -> Result<Json, String> {
    once_more(|| {
        let json = parse_again(&read_line(source, span)?)?;
        if let Some(canonical) = canonical {
            let bytes = crate::canon::canonical_bytes_without(
                &json,
                crate::canon::CHAIN_EXCLUDED,
                crate::canon::Variant::C1,
            );
            if Sha256Digest::of(&bytes).0 != *canonical {
                return Err(changed());
            }
        }
        Ok(json)
    })
}

/// [`reread`] for a record bound to the bytes of its line, as verified in this process
/// ([`line_digest`]): the line stands only if they are still the same — byte for byte,
/// which needs no canonical form made again.
pub fn reread_line(source: &Source, span: Span, line: Option<&[u8; 32]>) -> Result<Json, String> {
    let bytes = once_more(|| {
        let bytes = read_line(source, span)?;
        if line.is_some_and(|digest| line_digest(&bytes) != *digest) {
            return Err(changed());
        }
        Ok(bytes)
    })?;
    parse_again(&bytes)
}

/// `read`, and when it fails once more with the file opened anew: the file this thread
/// kept open may be one since replaced (a rotated store).
fn once_more<T>(read: impl Fn() -> Result<T, String>) -> Result<T, String> {
    read().or_else(|_| {
        forget_open();
        read()
    })
}

/// What binds a line to the bytes it had ([`reread_line`]): their SHA-256 (faster than
/// BLAKE3 on lines of a few kilobytes where the CPU has SHA extensions).
pub fn line_digest(bytes: &[u8]) -> [u8; 32] {
    Sha256Digest::of(bytes).0
}

/// Bytes of lines read again in this process (`check --timings`).
static READ_AGAIN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The bytes of lines read again so far.
pub fn read_again() -> u64 {
    READ_AGAIN.load(std::sync::atomic::Ordering::Relaxed)
}

/// A record's line, read again from its file. Each thread keeps the last file it read
/// open, so the records of a batch — read in file order — cost one `open` a file, not one
/// a record (the bytes are still checked against what was verified).
fn read_line(source: &Source, span: Span) -> Result<Vec<u8>, String> {
    READ_AGAIN.fetch_add(u64::from(span.len), std::sync::atomic::Ordering::Relaxed);
    let mut bytes = vec![0; span.len as usize];
    read_at(&source.path, span.offset, &mut bytes)
        .map_err(|e| format!("cannot read its line again: {e}"))?;
    Ok(bytes)
}

#[cfg(unix)]
thread_local! {
    /// The last file this thread read a line from, kept open.
    static OPEN: std::cell::RefCell<Option<(std::sync::Arc<str>, std::fs::File)>> =
        const { std::cell::RefCell::new(None) };
}

/// Closes the file this thread kept open.
fn forget_open() {
    #[cfg(unix)]
    OPEN.with_borrow_mut(|open| *open = None);
}

#[cfg(unix)]
fn read_at(path: &std::sync::Arc<str>, offset: u64, into: &mut [u8]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    OPEN.with_borrow_mut(|open| {
        let file = match open.take() {
            Some((p, file)) if p == *path => file,
            _ => std::fs::File::open(&**path)?,
        };
        let read = file.read_exact_at(into, offset);
        *open = Some((path.clone(), file));
        read
    })
}

#[cfg(not(unix))]
fn read_at(path: &std::sync::Arc<str>, offset: u64, into: &mut [u8]) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(&**path)?;
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(into)
}

/// A line read again, parsed.
fn parse_again(bytes: &[u8]) -> Result<Json, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| changed())?;
    parser::parse(text).map_err(|_| changed())
}

/// Why a line read again is not the one that was verified.
fn changed() -> String {
    "its line changed after it was verified".to_string()
}
