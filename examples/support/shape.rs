//! The statistics of a store's shape, by which a generated store is matched to the
//! reference emitter's (`tests/scale/reference_shape.rs`, `gen_store --shape reference`).
//! Computed from the lines alone: no verification, no analysis.

use std::collections::{HashMap, HashSet};

/// Each statistic of one or more stores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub records: usize,
    /// Mean bytes of a line.
    pub bytes_per_record: f64,
    pub actions_per_record: f64,
    /// Records per `run_id`, and emitters (run and key) per run.
    pub records_per_run: f64,
    pub emitters_per_run: f64,
    /// Share of records in a v0.4 DSSE envelope.
    pub dsse_share: f64,
    /// Median bytes of one action's JSON, and of one record-level capability decision.
    pub action_bytes: f64,
    pub decision_bytes: f64,
    /// Median bytes of a v0.3 line outside its actions and decisions (ids, refs, digests,
    /// the link and the signature).
    pub record_overhead: f64,
    /// Median of a DSSE line's bytes over the same record's without the envelope.
    pub dsse_expansion: f64,
    /// Mean share of an emitter's previous record's actions its next record repeats
    /// (1: cumulative snapshots).
    pub repeat_share: f64,
    /// Record-level decisions per action, and the share of actions carrying a decision.
    pub decisions_per_action: f64,
    pub decided_share: f64,
    /// Share of decisions with an `approval_extension`.
    pub extension_share: f64,
}

/// What the lines of one or more stores add up to.
#[derive(Default)]
pub struct Tally {
    records: usize,
    bytes: usize,
    actions: usize,
    dsse: usize,
    runs: HashMap<String, usize>,
    emitters: HashSet<(String, String)>,
    action_bytes: Vec<f64>,
    decision_bytes: Vec<f64>,
    overhead: Vec<f64>,
    expansion: Vec<f64>,
    repeats: Vec<f64>,
    decisions: usize,
    decided: usize,
    extended: usize,
}

fn text_len(v: &serde_json::Value) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.len())
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn ratio(a: usize, b: usize) -> f64 {
    a as f64 / b.max(1) as f64
}

impl Tally {
    /// Adds one store's text (lines that are not JSON objects are skipped).
    pub fn add(&mut self, text: &str) {
        let mut last: HashMap<(String, String), Vec<String>> = HashMap::new();
        for line in text.lines() {
            let line = line.trim_start_matches('\u{feff}').trim();
            let Ok(serde_json::Value::Object(r)) = serde_json::from_str(line) else {
                continue;
            };
            let empty = Vec::new();
            let actions = r
                .get("actions")
                .and_then(|a| a.as_array())
                .unwrap_or(&empty);
            let decisions =
                (r.get("capability_decisions").and_then(|a| a.as_array())).unwrap_or(&empty);
            self.records += 1;
            self.bytes += line.len();
            self.actions += actions.len();
            self.action_bytes
                .extend(actions.iter().map(|a| text_len(a) as f64));
            self.decision_bytes
                .extend(decisions.iter().map(|d| text_len(d) as f64));
            self.decisions += decisions.len();
            self.decided += (actions.iter())
                .filter(|a| a.get("capability_decision").is_some())
                .count();
            self.extended += (decisions.iter())
                .filter(|d| d.get("approval_extension").is_some())
                .count();
            let run = r.get("run_id").and_then(|v| v.as_str()).unwrap_or("");
            let key = (r.get("signature").and_then(|s| s.get("key_id")))
                .and_then(|v| v.as_str())
                .unwrap_or("");
            *self.runs.entry(run.to_string()).or_default() += 1;
            let emitter = (run.to_string(), key.to_string());
            self.emitters.insert(emitter.clone());
            if r.contains_key("dsse_envelope") {
                self.dsse += 1;
                let mut bare = r.clone();
                bare.remove("dsse_envelope");
                let bare = text_len(&serde_json::Value::Object(bare));
                self.expansion.push(line.len() as f64 / bare.max(1) as f64);
            } else {
                let inner = text_len(&serde_json::Value::Array(actions.clone()))
                    + text_len(&serde_json::Value::Array(decisions.clone()));
                self.overhead.push(line.len().saturating_sub(inner) as f64);
            }
            let ids: Vec<String> = (actions.iter())
                .filter_map(|a| a.get("action_id").and_then(|v| v.as_str()))
                .map(str::to_string)
                .collect();
            if let Some(previous) = last.get(&emitter).filter(|p| !p.is_empty()) {
                let kept = previous.iter().filter(|id| ids.contains(id)).count();
                self.repeats.push(ratio(kept, previous.len()));
            }
            last.insert(emitter, ids);
        }
    }

    /// The statistics of everything added.
    pub fn shape(&self) -> Shape {
        let runs = self.runs.len();
        Shape {
            records: self.records,
            bytes_per_record: ratio(self.bytes, self.records),
            actions_per_record: ratio(self.actions, self.records),
            records_per_run: ratio(self.records, runs),
            emitters_per_run: ratio(self.emitters.len(), runs),
            dsse_share: ratio(self.dsse, self.records),
            action_bytes: median(&self.action_bytes),
            decision_bytes: median(&self.decision_bytes),
            record_overhead: median(&self.overhead),
            dsse_expansion: median(&self.expansion),
            repeat_share: self.repeats.iter().sum::<f64>() / self.repeats.len().max(1) as f64,
            decisions_per_action: ratio(self.decisions, self.actions),
            decided_share: ratio(self.decided, self.actions),
            extension_share: ratio(self.extended, self.decisions),
        }
    }
}

/// The statistics of one store's text.
pub fn of(text: &str) -> Shape {
    let mut t = Tally::default();
    t.add(text);
    t.shape()
}
