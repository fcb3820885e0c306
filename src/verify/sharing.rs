//! Verdicts shared between records. A store's records are mostly judged the same on the
//! axes a record is judged on alone (a million `pass`/`valid` records signed with one key
//! differ in nothing there), so each distinct structural, semantic and authenticity axis
//! is held once and every record with it points to it.

use super::{RecordResult, SemanticAxis, StructuralAxis, signature::Authenticity};
use rustc_hash::FxHashSet as HashSet;
use std::hash::Hash;
use std::sync::Arc;

/// How many distinct values of one axis are looked for: past that, a new value is kept
/// by its record alone, so evidence whose every record differs costs no table that grows
/// with it.
const DISTINCT: usize = 4096;

/// The distinct axes seen so far.
#[derive(Default)]
pub struct Sharing {
    structural: HashSet<Arc<StructuralAxis>>,
    semantic: HashSet<Arc<SemanticAxis>>,
    authenticity: HashSet<Arc<Authenticity>>,
}

impl Sharing {
    /// Makes each of `results`' axes the one held for its value, when one is.
    pub fn share(&mut self, results: &mut [RecordResult]) {
        for r in results {
            share(&mut self.structural, &mut r.structural);
            share(&mut self.semantic, &mut r.semantic);
            share(&mut self.authenticity, &mut r.authenticity);
        }
    }
}

fn share<T: Hash + Eq>(held: &mut HashSet<Arc<T>>, value: &mut Arc<T>) {
    if let Some(same) = held.get(&**value) {
        *value = Arc::clone(same);
    } else if held.len() < DISTINCT {
        held.insert(Arc::clone(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fixture's verdicts, shared: equal to what they were, and equal axes are one.
    #[test]
    fn shared_verdicts_are_the_same_verdicts_held_once() {
        let report = crate::verify::fixture_report();
        let mut results = report.records.clone();
        // Unshared first: each record its own axes.
        for r in &mut results {
            r.authenticity = Arc::new((*r.authenticity).clone());
        }
        let distinct = |rs: &[RecordResult]| {
            let mut ptrs: Vec<*const Authenticity> =
                rs.iter().map(|r| Arc::as_ptr(&r.authenticity)).collect();
            ptrs.sort();
            ptrs.dedup();
            ptrs.len()
        };
        assert_eq!(distinct(&results), results.len());
        Sharing::default().share(&mut results);
        assert_eq!(results, report.records);
        let values: HashSet<&Authenticity> = results.iter().map(|r| &*r.authenticity).collect();
        assert_eq!(distinct(&results), values.len());
        assert!(
            values.len() < results.len() / 2,
            "{} distinct",
            values.len()
        );
    }

    /// Past [`DISTINCT`] values, a new one is kept as it is and not looked for.
    #[test]
    fn distinct_values_past_the_limit_are_not_held() {
        let mut held = HashSet::default();
        for n in 0..DISTINCT + 10 {
            let mut value = Arc::new(n);
            share(&mut held, &mut value);
        }
        assert_eq!(held.len(), DISTINCT);
        let mut again = Arc::new(3);
        share(&mut held, &mut again);
        assert!(held.iter().any(|v| Arc::ptr_eq(v, &again)));
    }
}
