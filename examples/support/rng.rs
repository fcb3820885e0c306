//! A tiny deterministic generator (xorshift) for the generated stores: a `#[path]`
//! module `rng` beside `incident.rs` and `reference.rs`, which use it.

/// A tiny deterministic generator (xorshift), so a store is reproducible.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A `sha256:` digest of four draws.
    pub fn digest(&mut self) -> String {
        format!(
            "sha256:{:016x}{:016x}{:016x}{:016x}",
            self.next(),
            self.next(),
            self.next(),
            self.next()
        )
    }
}
