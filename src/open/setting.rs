//! [`Setting`]: everything an opening of evidence is done with besides the evidence — the
//! trust (keys, the environment's keys, TSA roots, anchors), the options, the lease files,
//! the agent's telemetry and where the cache is. Plain data, built once by each front end
//! (the command line's arguments, the explorer, Python's keywords) the same way.

use super::cache::{Config, Index};
use crate::analysis::lease::SuppliedLeases;
use crate::load::LoadError;
use crate::verify::{Keyring, Options};
use std::path::PathBuf;

/// What opening evidence is done with.
#[derive(Debug, Default)]
pub struct Setting {
    /// Keys (with the environment's, read once by [`Keyring::with_environment`]), TSA
    /// roots and anchors.
    pub trust: Keyring,
    pub options: Options,
    pub leases: SuppliedLeases,
    /// What in the lease files could not be read (said by the front end).
    pub lease_errors: Vec<LoadError>,
    /// The agent's telemetry to join to the evidence.
    pub traces: Traces,
    /// Where answers of earlier openings are kept.
    pub cache: Cache,
}

/// The agent's telemetry to join to the evidence (`--traces`; none when empty) and the
/// clock tolerance of the join.
#[derive(Clone, Debug, Default)]
pub struct Traces {
    pub files: Vec<String>,
    pub tolerance_ms: f64,
}

/// Where the evidence index is kept: nowhere (`--no-index`), or a directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Cache {
    #[default]
    Off,
    Dir(PathBuf),
}

impl Cache {
    /// `$XDG_CACHE_HOME/aeplens/index` (`~/.cache` when unset); `None` with neither set.
    pub fn default_dir() -> Option<PathBuf> {
        Index::default_dir()
    }
}

impl Setting {
    /// The evidence index under this setting's configuration (the one place one is
    /// made): the trust's fingerprints, the profile and the lease files key it.
    pub(super) fn index(&self) -> Option<Index> {
        match &self.cache {
            Cache::Off => None,
            Cache::Dir(dir) => {
                let config = Config::new(&self.trust, &self.options, &self.leases.digests);
                Some(Index::new(dir.clone(), &config))
            }
        }
    }

    /// The index to answer from, and to keep answers in: none with telemetry (kept
    /// answers are made without it; each file's verdicts are still used).
    pub(super) fn answers(&self) -> Option<Index> {
        self.index().filter(|_| self.traces.files.is_empty())
    }
}
