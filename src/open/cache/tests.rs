use super::*;
use crate::verify::{Trees, verify_paths};

/// An entry read in chunks of any size — lines and record parts cut anywhere — gives
/// the store exactly as read whole; an entry cut short gives nothing.
#[test]
fn an_entry_reads_the_same_in_chunks_of_any_size() {
    let dir = std::env::temp_dir().join(format!("aeplens-index-chunks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("store.ndjson");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/reference/chain.ndjson"
    );
    let mut bytes = std::fs::read(fixture).unwrap();
    bytes.extend_from_slice(b"{broken\n");
    std::fs::write(&store, &bytes).unwrap();
    let paths = vec![store.display().to_string()];
    let (keys, options) = (Keyring::default(), Options::default());
    let index = Index::new(dir.join("index"), &Config::new(&keys, &options, &[]));
    let (inputs, report, _) = verify_paths(
        &paths,
        &keys,
        &options,
        Some(&index),
        Trees::OnDisk,
        &mut |_, _| {},
    );
    let (whole, results) = index.known(&paths[0], usize::MAX).unwrap();
    assert_eq!(results.len(), report.records.len());
    assert_eq!(whole.errors, inputs[0].errors);
    assert!(!whole.errors.is_empty() && whole.records.len() > 1);
    for (known, read) in whole.records.iter().zip(&inputs[0].records) {
        assert_eq!((&known.source, known.span), (&read.source, read.span));
        assert_eq!(known.facts(), read.facts());
    }
    for chunk in [1, 2, 7, 97, 1000] {
        let (input, again) = index.known_in_chunks(&paths[0], chunk, usize::MAX).unwrap();
        assert_eq!(again, results, "chunk {chunk}");
        assert_eq!(input.errors, whole.errors, "chunk {chunk}");
        for (a, b) in input.records.iter().zip(&whole.records) {
            assert_eq!((&a.source, a.span), (&b.source, b.span), "chunk {chunk}");
            assert_eq!(a.facts(), b.facts(), "chunk {chunk}");
        }
    }
    // A store of more records than `only_ids_over`: each keeps only its ids, the same.
    let (input, _) = index.known(&paths[0], 1).unwrap();
    assert!(input.records.iter().all(Record::keeps_only_ids));
    for (a, b) in input.records.iter().zip(&whole.records) {
        assert_eq!(a.action_ids(), b.action_ids());
        assert_eq!(a.run_id(), b.run_id());
    }
    let (input, _) = index.known(&paths[0], whole.records.len()).unwrap();
    assert!(input.records.iter().all(|r| !r.keeps_only_ids()));
    // Cut short anywhere, or one byte longer, the entry gives nothing.
    let slot = index.slot(&paths[0]).unwrap();
    let entry = std::fs::read(&slot).unwrap();
    for cut in [entry.len() - 1, entry.len() - 40, entry.len() / 2] {
        std::fs::write(&slot, &entry[..cut]).unwrap();
        assert!(
            index.known_in_chunks(&paths[0], 97, usize::MAX).is_none(),
            "cut at {cut}"
        );
    }
    std::fs::write(&slot, [&entry[..], b"\0"].concat()).unwrap();
    assert!(index.known_in_chunks(&paths[0], 97, usize::MAX).is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
