//! Synthetic evidence for the benchmarks: records of 10 actions each, 50 records a run,
//! with denied→re-approved pairs, causal chains, leases with recorded windows, RFC
//! drift checks and state digests. Unsigned, so only the analysis and the explorer are
//! measured. Shared by `bench_analysis` and `bench_tui` (`#[path]` module).

use std::fmt::Write as _;

const PER_RECORD: usize = 10;

/// NDJSON with about `actions` actions.
pub fn generate(actions: usize) -> String {
    let mut s = String::with_capacity(actions * 700);
    let records = actions.div_ceil(PER_RECORD);
    for r in 0..records {
        let run = r / 50;
        let _ = write!(
            s,
            r#"{{"schema_version":"aep/v0.3","run_id":"run-{run}","created_at_ms":{},"actions":["#,
            1_780_000_000_000u64 + r as u64 * 10_000
        );
        for i in 0..PER_RECORD {
            let n = r * PER_RECORD + i;
            let t = 1_780_000_000_000u64 + n as u64 * 1_000;
            if i > 0 {
                s.push(',');
            }
            let denied = i == 3;
            let parent = if i == 4 {
                format!(r#","parent_action_id":"a{}""#, n - 1)
            } else {
                String::new()
            };
            let decision = if denied { "deny" } else { "allow" };
            let _ = write!(
                s,
                r#"{{"action_id":"a{n}","tool_name":"tool_{}","state_changing":true,"timestamp_ms":{t},"side_effect_class":"mutate-external","causal_chain_id":"cc-{}"{parent},"approval_context_hash":"sha256:{n:064x}","scope_lease_id":"lease-{}","capability_decision":{{"capability":"c{i}","subject":"agent","resource":"res","decision":"{decision}","approval_grant":"bounded-lease"}},"bounded_lease_evidence":{{"lease_id":"lease-{}","lease_granted_at_ms":{},"lease_expires_at_ms":{},"execution_started_at_ms":{t}}},"argument_drift":{{"result":"{}","approved_arg_digest":"x","observed_arg_digest":"{}","approval_or_lease_id":"lease-{}"}},"state_digest_kind":"db-rowset","state_digest_coverage":{{"database_id":"db","schema":"s","table":"t{}","query_hash":"q","snapshot_id":"s{n}"}},"pre_state_digest":"p{n}","post_state_digest":"q{n}","outcome":"success"}}"#,
                i % 3,
                n / 5,
                n / 20,
                n / 20,
                t - 5_000,
                t + 60_000,
                if denied { "drifted" } else { "matched" },
                if denied { "y" } else { "x" },
                n / 20,
                i % 4,
            );
        }
        s.push_str("]}\n");
    }
    s
}

/// Action counts from the command line (default 10 k, 100 k, 1 M).
pub fn counts_from_args() -> Vec<usize> {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if counts.is_empty() {
        vec![10_000, 100_000, 1_000_000]
    } else {
        counts
    }
}
