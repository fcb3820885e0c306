//! Looking at a store: its files against how far they were verified (a file cut shorter,
//! verified bytes changed, a torn last line, a file gone), and what to open — the window
//! of the runs an append touched, or the store whole — then opening and judging it.

use super::alert::{Alert, dedupe_key};
use super::judge::{self, Judging};
use super::state::{BLOCK, FileMark};
use super::{Look, Monitor, WHOLE_EVERY, infra, sinks, tamper, window};
use crate::analysis::evidence::Evidence;
use crate::model::sha256::Sha256Digest;
use crate::model::text::sanitize;
use crate::open::Need;
use crate::verify::Trees;
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

impl Monitor {
    /// Looks at store `s`: unchanged, waiting for a torn line, or ready to be judged.
    pub(super) fn look_at(&mut self, s: usize) -> Looked {
        let store = self.watch.stores[s].clone();
        let mut infra_now = Vec::new();
        let mut alerts = Vec::new();
        if let Err(e) = std::fs::metadata(&store) {
            let key = dedupe_key(&["unreadable", &store, "", &store]);
            let what = format!("{}: {e}", sanitize(&store));
            infra_now.push(infra("unreadable", key, &store, Some((&store, None)), what));
            return Looked::Ready(Box::new(Ready {
                s,
                store,
                look: Vec::new(),
                readable: Vec::new(),
                torn_at: HashMap::new(),
                alerts,
                infra: infra_now,
                window: None,
            }));
        }
        let mut look: Look = Vec::new();
        let mut readable = Vec::new();
        for file in self.files_of(s) {
            let shown = file.display().to_string();
            match std::fs::File::open(&file).and_then(|f| f.metadata()) {
                Ok(m) => {
                    look.push((file.clone(), identity(&m), m.len(), m.modified().ok()));
                    readable.push(file);
                }
                Err(e) => {
                    let key = dedupe_key(&["unreadable", &store, "", &shown]);
                    let what = format!("{}: {e}", sanitize(&shown));
                    infra_now.push(infra("unreadable", key, &store, Some((&shown, None)), what));
                }
            }
        }
        let torn = readable.iter().any(|f| self.torn.contains_key(f));
        if self.looks[s].as_ref() == Some(&look) && !torn && !self.quiet_since_window(s) {
            return Looked::Same;
        }
        // A torn last line waits for `--settle` before the store is judged.
        let mut torn_at = HashMap::new();
        for (file, _, len, modified) in &look {
            match torn_tail(file, *len) {
                Some(start) => {
                    let since = match self.torn.get(file) {
                        Some(&(was, since)) if was == *len => since,
                        _ => Instant::now(),
                    };
                    self.torn.insert(file.clone(), (*len, since));
                    // Torn since it was last written, or since it was first seen so.
                    let written = modified.and_then(|m| m.elapsed().ok()).unwrap_or_default();
                    let waited = since.elapsed().max(written);
                    if waited < self.watch.settle {
                        return Looked::Wait(self.watch.settle.saturating_sub(waited));
                    }
                    torn_at.insert(file.clone(), start);
                }
                None => {
                    self.torn.remove(file);
                }
            }
        }
        // Each file against how far it was verified.
        let mut seen_ids = std::collections::HashSet::new();
        for (file, id, len, _) in &look {
            seen_ids.insert(id.clone());
            let shown = file.display().to_string();
            if let Some(key) = torn_at.get(file) {
                let offset = *key;
                let k = dedupe_key(&["partial-line", &store, id, &format!("{shown}@{offset}")]);
                let what = format!(
                    "{}: the last line (from byte {offset}) is still incomplete after {} s",
                    sanitize(&shown),
                    self.watch.settle.as_secs_f64()
                );
                let mut a = infra("partial-line", k, &store, Some((&shown, None)), what);
                if let Some(r) = a.record.as_mut() {
                    r.offset = Some(offset);
                }
                infra_now.push(a);
            }
            let Some(mark) = self.state.files.get(id) else {
                continue;
            };
            let changed = if *len < mark.verified {
                Some((
                    "file-shrunk",
                    format!(
                        "{} is {len} bytes, shorter than the {} bytes already verified",
                        sanitize(&shown),
                        mark.verified
                    ),
                ))
            } else if last_block(file, mark.verified).is_none_or(|b| b != mark.last_block) {
                Some((
                    "verified-bytes-changed",
                    format!(
                        "{}: bytes already verified (before byte {}) changed",
                        sanitize(&shown),
                        mark.verified
                    ),
                ))
            } else {
                None
            };
            if let Some((rule, what)) = changed {
                let subject = format!("{id}@{}:{}", mark.verified, mark.last_block);
                let key = dedupe_key(&[rule, &store, "", &subject]);
                alerts.push(tamper(rule, key, &store, &shown, what));
            }
        }
        for (id, mark) in &self.state.files {
            let here = look
                .iter()
                .any(|(p, ..)| p.display().to_string() == mark.path);
            if mark.store == store && !seen_ids.contains(id) && !here {
                let key =
                    dedupe_key(&["file-vanished", &store, "", &format!("{}@{id}", mark.path)]);
                let what = format!(
                    "{} is gone (it was verified up to byte {})",
                    sanitize(&mark.path),
                    mark.verified
                );
                alerts.push(infra(
                    "file-vanished",
                    key,
                    &store,
                    Some((&mark.path, None)),
                    what,
                ));
            }
        }
        let changed = self.looks[s].as_ref() != Some(&look);
        let window = self.window_of(s, &look, &torn_at, (alerts.is_empty(), changed));
        Looked::Ready(Box::new(Ready {
            s,
            store,
            look,
            readable,
            torn_at,
            alerts,
            infra: infra_now,
            window,
        }))
    }

    /// Reads the new whole lines of the store's files, and gives the window of each file
    /// to open — or `None`, to open the store whole: the first time, when bytes verified
    /// before changed (`clean` false), when the files `changed` but nothing was appended
    /// (an edit in place), with telemetry, for a file that is not NDJSON by name, when a
    /// file cannot be read; and, one store a pass, every [`WHOLE_EVERY`] and once quiet
    /// after a window.
    fn window_of(
        &mut self,
        s: usize,
        look: &Look,
        torn_at: &HashMap<PathBuf, u64>,
        (clean, changed): (bool, bool),
    ) -> Option<Vec<(String, Vec<u8>, usize)>> {
        let mut whole =
            !clean || self.whole_at[s].is_none() || !self.watch.setting.traces.files.is_empty();
        let complete = self.whole_at[s].is_some_and(|t| t.elapsed() >= WHOLE_EVERY)
            || self.quiet_since_window(s);
        let mut touched = std::collections::HashSet::new();
        let mut firsts = Vec::with_capacity(look.len());
        for (file, id, len, _) in look {
            let ndjson = file.extension().is_some_and(|e| {
                e.eq_ignore_ascii_case("ndjson") || e.eq_ignore_ascii_case("jsonl")
            });
            whole |= !ndjson;
            let end = torn_at.get(file).copied().unwrap_or(*len);
            let lines = self.lines.entry(id.clone()).or_default();
            if end < lines.end() {
                *lines = window::Lines::default();
                whole = true;
            }
            let first_new = lines.count();
            match lines.extend(file, end, &mut self.runs) {
                Ok(runs) => touched.extend(runs),
                Err(_) => whole = true,
            }
            firsts.push((file, id, first_new));
        }
        // A change that appended no line (an edit in place) is judged whole.
        let appended = firsts
            .iter()
            .any(|(_, id, first)| self.lines[*id].count() > *first);
        whole |= !appended && changed;
        if !whole && complete && self.whole_budget > 0 {
            self.whole_budget -= 1;
            whole = true;
        }
        if whole {
            return None;
        }
        let mut windows = Vec::new();
        for (file, id, first_new) in firsts {
            let lines = &self.lines[id];
            match lines.window(file, &touched, first_new) {
                Ok(Some(bytes)) => windows.push((file.display().to_string(), bytes, first_new)),
                Ok(None) => {}
                Err(_) => return None,
            }
        }
        Some(windows)
    }

    /// Opens and judges a store made ready by [`Monitor::look_at`]: its window, or whole.
    pub(super) fn judge_store(&self, r: &Ready) -> Judged {
        let mut judged = Judged {
            alerts: Vec::new(),
            records: 0,
            marks: marks_of(&r.store, &r.look, &r.torn_at, &self.state.files),
        };
        let opened = match &r.window {
            Some(windows) => Some(self.open_window(windows)),
            None => self.open_whole(r),
        };
        let Some((ev, records)) = opened else {
            return judged;
        };
        judged.records = records;
        let how = Judging {
            store: &r.store,
            fail_on: self.watch.fail_on,
            keys_given: !self.watch.setting.trust.is_empty(),
            rules: &self.watch.rules,
        };
        for a in judge::judge(&ev, &how) {
            (judged.alerts).extend(self.place_load_error(a, &r.torn_at, &r.look));
        }
        judged
    }

    /// Opens the windows of a store's files: the evidence, and how many of its records
    /// are new.
    fn open_window(&self, windows: &[(String, Vec<u8>, usize)]) -> (Box<Evidence>, usize) {
        let inputs = (windows.iter())
            .map(|(path, bytes, _)| crate::load::parse_input(path.as_str().into(), bytes))
            .collect();
        let corpus = crate::load::Corpus::new(inputs);
        let ev = crate::open::open_corpus(&self.watch.setting, corpus);
        let new = (ev.report.records.iter())
            .filter(|rec| {
                let window = windows.iter().find(|w| *w.0 == *rec.source.path);
                window.is_some_and(|w| rec.source.line > w.2)
            })
            .count();
        (Box::new(ev), new)
    }

    /// Opens the store whole, the way every command opens evidence: the evidence, and
    /// how many records it holds.
    fn open_whole(&self, r: &Ready) -> Option<(Box<Evidence>, usize)> {
        let paths: Vec<String> = (r.readable.iter())
            .map(|p| p.display().to_string())
            .collect();
        if paths.is_empty() {
            return None;
        }
        let need = Need::Whole(Trees::OnDisk);
        let (opened, _) = crate::open::open(&self.watch.setting, &paths, need, &mut |_| {});
        let ev = opened.into_whole()?;
        let records = ev.report.records.len();
        Some((Box::new(ev), records))
    }

    /// A load error as the watch says it: none for the torn last line (said as
    /// `partial-line`), tamper for a line inside bytes already verified (it was edited),
    /// infra otherwise.
    fn place_load_error(
        &self,
        alert: Alert,
        torn_at: &HashMap<PathBuf, u64>,
        look: &Look,
    ) -> Option<Alert> {
        if alert.rule != "load-error" {
            return Some(alert);
        }
        let record = alert.record.clone()?;
        let file = PathBuf::from(&record.path);
        let line = record.line.unwrap_or(0) as u64;
        let id = look.iter().find(|l| l.0 == file).map(|l| l.1.clone());
        // Keyed by the file's identity, not its name: a rotated file's bad line is the
        // same bad line.
        let key = dedupe_key(&[
            "load-error",
            &alert.store,
            id.as_deref().unwrap_or(&record.path),
            &line.to_string(),
            &alert.message,
        ]);
        let alert = Alert {
            dedupe_key: key,
            ..alert
        };
        if self.state.issued.contains(&alert.dedupe_key) {
            return Some(alert);
        }
        let verified_lines = id
            .as_ref()
            .and_then(|id| self.state.files.get(id))
            .map_or(0, |m| m.lines);
        if torn_at.contains_key(&file) && line > verified_lines {
            let whole = count_lines(&file);
            if line > whole {
                return None;
            }
        }
        if line > 0 && line <= verified_lines {
            let what = format!(
                "line {line} was verified before and no longer reads: {}",
                alert.message
            );
            let key = dedupe_key(&[
                "verified-bytes-changed",
                &alert.store,
                "",
                &alert.dedupe_key,
            ]);
            return Some(tamper(
                "verified-bytes-changed",
                key,
                &alert.store,
                &record.path,
                what,
            ));
        }
        Some(alert)
    }
}

/// What looking at a store gave.
pub(super) enum Looked {
    /// Nothing changed since it was judged.
    Same,
    /// A torn line: look again after this long.
    Wait(Duration),
    /// To be opened and judged.
    Ready(Box<Ready>),
}

/// A store to open and judge, and what looking at its files found.
pub(super) struct Ready {
    pub(super) s: usize,
    store: String,
    pub(super) look: Look,
    /// The files that can be read.
    readable: Vec<PathBuf>,
    /// Files whose last line is torn past `--settle`: where that line starts.
    torn_at: HashMap<PathBuf, u64>,
    /// Bytes verified before that changed.
    pub(super) alerts: Vec<Alert>,
    /// The store's infra conditions.
    pub(super) infra: Vec<Alert>,
    /// What to open: each file's window (the runs an append touched, and the line
    /// number its new lines start after), or the whole store when `None`.
    pub(super) window: Option<Vec<(String, Vec<u8>, usize)>>,
}

/// What opening and judging a store gave.
pub(super) struct Judged {
    pub(super) alerts: Vec<Alert>,
    /// Records verified: all of the store's when it was opened whole, else the new ones.
    pub(super) records: usize,
    pub(super) marks: Vec<(String, FileMark)>,
}

/// Each file's mark after it was judged: verified up to its last whole line.
fn marks_of(
    store: &str,
    look: &Look,
    torn_at: &HashMap<PathBuf, u64>,
    before: &BTreeMap<String, FileMark>,
) -> Vec<(String, FileMark)> {
    look.iter()
        .filter_map(|(file, id, len, _)| {
            let verified = torn_at.get(file).copied().unwrap_or(*len);
            let lines = match before.get(id) {
                Some(m) if m.verified <= verified => {
                    m.lines + count_between(file, m.verified, verified)?
                }
                _ => count_between(file, 0, verified)?,
            };
            Some((
                id.clone(),
                FileMark {
                    path: file.display().to_string(),
                    store: store.to_string(),
                    verified,
                    lines,
                    last_block: last_block(file, verified)?,
                },
            ))
        })
        .collect()
}

/// `DEVICE:INODE` of a file (its path where there are none).
fn identity(m: &std::fs::Metadata) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        format!("{}:{}", m.dev(), m.ino())
    }
    #[cfg(not(unix))]
    {
        format!("{:?}", m.created().ok())
    }
}

/// Where the torn last line of `file` (`len` bytes) starts, when its last byte is not a
/// newline.
fn torn_tail(file: &Path, len: u64) -> Option<u64> {
    if len == 0 {
        return None;
    }
    let from = len.saturating_sub(1 << 20);
    let mut f = std::fs::File::open(file).ok()?;
    f.seek(SeekFrom::Start(from)).ok()?;
    let mut tail = Vec::new();
    f.take(len - from).read_to_end(&mut tail).ok()?;
    if tail.last() == Some(&b'\n') {
        return None;
    }
    Some(
        tail.iter()
            .rposition(|&b| b == b'\n')
            .map_or(from, |i| from + i as u64 + 1),
    )
}

/// SHA-256 (hex) of the [`BLOCK`] bytes of `file` before `end`.
fn last_block(file: &Path, end: u64) -> Option<String> {
    let from = end.saturating_sub(BLOCK);
    let mut f = std::fs::File::open(file).ok()?;
    f.seek(SeekFrom::Start(from)).ok()?;
    let mut block = Vec::new();
    f.take(end - from).read_to_end(&mut block).ok()?;
    (block.len() as u64 == end - from).then(|| Sha256Digest::of(&block).to_string())
}

/// Newlines in `file` between bytes `from` and `to`.
fn count_between(file: &Path, from: u64, to: u64) -> Option<u64> {
    let mut f = std::fs::File::open(file).ok()?;
    f.seek(SeekFrom::Start(from)).ok()?;
    let mut bytes = Vec::new();
    f.take(to.saturating_sub(from))
        .read_to_end(&mut bytes)
        .ok()?;
    Some(memchr::memchr_iter(b'\n', &bytes).count() as u64)
}

/// Whole lines in `file`.
fn count_lines(file: &Path) -> u64 {
    sinks::count_lines(file).unwrap_or(0)
}
