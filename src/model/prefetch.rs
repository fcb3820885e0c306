//! Load hints for passes over a million actions. A later pass over the actions finds
//! their JSON long gone from the cache, and each read of an action's text waits on
//! memory; when the pass walks a sequential list (facts, node order) it knows the
//! addresses a few actions ahead and can ask for them early, so the waits overlap.

/// How many items ahead a pass asks for.
pub const AHEAD: usize = 8;

#[allow(
    clippy::inline_always,
    reason = "a hint is only worth it inlined into the loop"
)]
/// Asks the CPU to start loading the cache line at `p`. Only a hint: it never faults,
/// whatever the address, and does nothing on targets without the instruction.
#[inline(always)]
pub fn at<T: ?Sized>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is a hint; it never faults and has no visible effect.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[allow(
    clippy::inline_always,
    reason = "a hint is only worth it inlined into the loop"
)]
/// [`at`] for the bytes of a string, if any.
#[inline(always)]
pub fn text(s: Option<&str>) {
    if let Some(s) = s {
        at(s.as_ptr());
    }
}
