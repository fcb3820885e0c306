//! The copy menu: what can be copied about the selection, and its text.

use super::*;

/// Something the copy menu offers; the text is produced only when chosen (a record may
/// be tens of megabytes).
#[derive(Clone, Debug, PartialEq)]
pub enum CopyTarget {
    /// A short value shown in full: (label, text).
    Value(String, String),
    ActionJson,
    RecordJson,
    CanonicalBytes,
}

impl CopyTarget {
    /// The menu label.
    pub fn label(&self) -> &str {
        match self {
            CopyTarget::Value(label, _) => label,
            CopyTarget::ActionJson => "action raw JSON",
            CopyTarget::RecordJson => "record raw JSON",
            CopyTarget::CanonicalBytes => "record canonical bytes (C1)",
        }
    }

    /// The text to copy, for the selected node.
    pub fn text(&self, state: &State) -> Option<String> {
        let d = state.data.as_ref()?;
        let node = state.timeline.node?;
        let (record, _) = d.analysis.graph.action(&d.corpus, node)?;
        Some(match self {
            CopyTarget::Value(_, v) => v.clone(),
            CopyTarget::ActionJson => {
                serde_json::to_string_pretty(d.analysis.raw(&d.corpus, node)?).ok()?
            }
            CopyTarget::RecordJson => serde_json::to_string_pretty(record.json()).ok()?,
            CopyTarget::CanonicalBytes => String::from_utf8_lossy(&canonical_bytes_without(
                record.json(),
                CHAIN_EXCLUDED,
                Variant::C1,
            ))
            .into_owned(),
        })
    }
}

pub(super) fn open_copy_menu(state: &mut State) {
    let Some(d) = state.data.as_ref() else { return };
    let Some(node) = state.timeline.node else {
        return;
    };
    let Some((_, a)) = d.analysis.graph.action(&d.corpus, node) else {
        return;
    };
    let mut items = Vec::new();
    if let Some(id) = a.id() {
        items.push(CopyTarget::Value("action id".into(), id.to_string()));
    }
    for key in [
        "arguments_digest",
        "pre_state_digest",
        "post_state_digest",
        "result_digest",
    ] {
        if let Some(v) = a.str_field(key) {
            items.push(CopyTarget::Value(key.replace('_', " "), v.to_string()));
        }
    }
    items.extend([
        CopyTarget::ActionJson,
        CopyTarget::RecordJson,
        CopyTarget::CanonicalBytes,
    ]);
    state.overlay = Overlay::Copy(items, 0);
}
