//! Pieces held out of memory until they are put where they go: an unnamed file in the
//! cache's directory, gone with the process whatever ends it — or, with no index to hold
//! them (or no positioned reads: not Unix), memory.

use std::io::Write;

/// Where a piece is in a [`Spill`].
#[derive(Clone, Copy, Debug)]
pub struct Piece {
    offset: u64,
    len: u32,
}

impl Piece {
    /// How many bytes it has.
    pub fn bytes(self) -> usize {
        self.len as usize
    }
}

/// Pieces held out of memory ([`Spill::in_dir`]) or in it.
#[derive(Debug)]
pub enum Spill {
    File {
        out: std::io::BufWriter<std::fs::File>,
        written: u64,
    },
    Memory(Vec<u8>),
}

impl Spill {
    /// A spill in a file in `dir` (made, private, when it is not there).
    pub fn in_dir(dir: &std::path::Path) -> std::io::Result<Spill> {
        if cfg!(not(unix)) {
            return Ok(Spill::Memory(Vec::new()));
        }
        crate::private::private_dir(dir)?;
        Ok(Spill::File {
            out: std::io::BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(dir)?),
            written: 0,
        })
    }

    /// Adds `bytes`; where they are.
    pub fn put(&mut self, bytes: &[u8]) -> std::io::Result<Piece> {
        let len = u32::try_from(bytes.len()).map_err(std::io::Error::other)?;
        let offset = match self {
            Spill::File { out, written } => {
                out.write_all(bytes)?;
                std::mem::replace(written, *written + u64::from(len))
            }
            Spill::Memory(held) => {
                held.extend_from_slice(bytes);
                (held.len() - bytes.len()) as u64
            }
        };
        Ok(Piece { offset, len })
    }

    /// Everything is put: the pieces can be read.
    pub fn finish(self) -> std::io::Result<Spilled> {
        Ok(match self {
            Spill::File { out, .. } => Spilled::File(
                out.into_inner()
                    .map_err(std::io::IntoInnerError::into_error)?,
            ),
            Spill::Memory(held) => Spilled::Memory(held),
        })
    }
}

/// A [`Spill`] whose pieces are all put, read in any order from any thread.
#[derive(Debug)]
pub enum Spilled {
    File(std::fs::File),
    Memory(Vec<u8>),
}

impl Spilled {
    /// The piece at `piece`.
    pub fn read(&self, piece: Piece) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(piece.len as usize);
        self.read_into(piece, &mut bytes)?;
        Ok(bytes)
    }

    /// Appends the piece at `piece` to `out`.
    pub fn read_into(&self, piece: Piece, out: &mut Vec<u8>) -> std::io::Result<()> {
        let start = out.len();
        out.resize(start + piece.len as usize, 0);
        match self {
            #[cfg(unix)]
            Spilled::File(file) => {
                std::os::unix::fs::FileExt::read_exact_at(file, &mut out[start..], piece.offset)
            }
            #[cfg(not(unix))]
            Spilled::File(_) => Err(std::io::Error::other("no positioned reads here")),
            Spilled::Memory(held) => {
                let from = usize::try_from(piece.offset).map_err(std::io::Error::other)?;
                let found = held.get(from..from + piece.len as usize);
                out[start..]
                    .copy_from_slice(found.ok_or_else(|| std::io::Error::other("no such piece"))?);
                Ok(())
            }
        }
    }

    /// Every piece, in the order they were put, handed to `out` a chunk at a time.
    pub fn copy_all(
        &self,
        out: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        match self {
            Spilled::File(file) => {
                use std::io::{Read, Seek};
                let mut file = file;
                file.seek(std::io::SeekFrom::Start(0))?;
                let mut chunk = vec![0; 1 << 20];
                loop {
                    match file.read(&mut chunk) {
                        Ok(0) => return Ok(()),
                        Ok(n) => out(&chunk[..n])?,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Spilled::Memory(held) => out(held),
        }
    }
}
