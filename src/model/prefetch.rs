//! Load hints: a pass that knows the addresses it reads next (an action's nested objects,
//! while its members are indexed) asks for them early, so the waits on memory overlap.

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
