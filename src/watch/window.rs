//! Opening what an append needs instead of the whole store: the runs the new records belong
//! to. Each file's whole lines are numbered once, with the run each names; a window of a
//! file is its bytes with every line of a run not touched by the append blanked, so each
//! record keeps its line (and its chain, its run's earlier snapshots, its findings'
//! locations: what the dedupe keys are made of). What spans runs — a chain continued in
//! another run, a copy of a record far away — is left to the store's next opening whole.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// A blank line (no record).
const BLANK: u32 = u32::MAX;
/// A line with content that names no run (a load error, a sibling evidence type).
const NO_RUN: u32 = u32::MAX - 1;

/// The run ids seen, numbered.
#[derive(Debug, Default)]
pub struct Runs(HashMap<Box<str>, u32>);

impl Runs {
    fn number(&mut self, run: &str) -> u32 {
        let next = u32::try_from(self.0.len())
            .unwrap_or(NO_RUN - 1)
            .min(NO_RUN - 1);
        *self.0.entry(run.into()).or_insert(next)
    }
}

/// A file's whole lines read so far: where each starts and the run it names.
#[derive(Debug, Default)]
pub struct Lines {
    starts: Vec<u64>,
    runs: Vec<u32>,
    /// The end of the last whole line read.
    end: u64,
}

impl Lines {
    /// Lines read so far.
    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// The end of the last whole line read.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Reads the lines of `file` from where it was read up to `whole` (the end of its last
    /// whole line); gives the runs the new lines name.
    pub fn extend(
        &mut self,
        file: &Path,
        whole: u64,
        runs: &mut Runs,
    ) -> std::io::Result<Vec<u32>> {
        let mut f = std::fs::File::open(file)?;
        f.seek(SeekFrom::Start(self.end))?;
        let mut bytes = Vec::new();
        f.take(whole.saturating_sub(self.end))
            .read_to_end(&mut bytes)?;
        let mut touched = Vec::new();
        let mut at = 0usize;
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            if line.last() != Some(&b'\n') {
                break;
            }
            let run = run_of(line, runs);
            if run < NO_RUN {
                touched.push(run);
            }
            self.starts.push(self.end + at as u64);
            self.runs.push(run);
            at += line.len();
        }
        self.end += at as u64;
        Ok(touched)
    }

    /// The window of `file` for an append whose lines start at line index `first_new`:
    /// the lines of `touched` runs and every new line, the others blank. `None` when it
    /// holds none.
    pub fn window(
        &self,
        file: &Path,
        touched: &HashSet<u32>,
        first_new: usize,
    ) -> std::io::Result<Option<Vec<u8>>> {
        let keep = |i: usize| i >= first_new || touched.contains(&self.runs[i]);
        let Some(first) = (0..self.count()).find(|&i| keep(i)) else {
            return Ok(None);
        };
        let from = self.starts[first];
        let mut f = std::fs::File::open(file)?;
        f.seek(SeekFrom::Start(from))?;
        let mut bytes = Vec::new();
        f.take(self.end - from).read_to_end(&mut bytes)?;
        if (bytes.len() as u64) < self.end - from {
            return Err(std::io::Error::other(
                "the file is shorter than what was read of it",
            ));
        }
        let mut out = vec![b'\n'; first];
        for i in first..self.count() {
            let start = usize::try_from(self.starts[i] - from).unwrap_or(usize::MAX);
            let end = self.starts.get(i + 1).map_or(self.end, |&s| s);
            let end = usize::try_from(end - from).unwrap_or(usize::MAX);
            if keep(i) && self.runs[i] != BLANK {
                out.extend_from_slice(&bytes[start..end]);
            } else {
                out.push(b'\n');
            }
        }
        Ok(Some(out))
    }
}

/// The run `line` names: its top-level `run_id` (read without keeping the rest).
fn run_of(line: &[u8], runs: &mut Runs) -> u32 {
    #[derive(serde::Deserialize)]
    struct RunOnly<'a> {
        #[serde(borrow)]
        run_id: Option<std::borrow::Cow<'a, str>>,
    }
    if line.iter().all(|b| b" \t\r\n".contains(b)) {
        return BLANK;
    }
    match serde_json::from_slice::<RunOnly>(line) {
        Ok(RunOnly { run_id: Some(run) }) => runs.number(&run),
        _ => NO_RUN,
    }
}
