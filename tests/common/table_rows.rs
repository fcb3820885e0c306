//! Tables' rows as text, to compare tables made apart (`--features tables`).

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

/// Every value of a row as text (floats by their bits: equal means identical).
pub fn cell(a: &dyn Array, i: usize) -> String {
    if a.is_null(i) {
        return "∅".into();
    }
    match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().value(i).to_string(),
        DataType::Int64 => a.as_primitive::<Int64Type>().value(i).to_string(),
        DataType::Float64 => format!("{:x}", a.as_primitive::<Float64Type>().value(i).to_bits()),
        DataType::Boolean => a.as_boolean().value(i).to_string(),
        other => panic!("no table column is {other}"),
    }
}

/// A table's rows as sorted text, leaving out the `keyring` and `lease_files` stamps.
pub fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        let schema = b.schema();
        let cols: Vec<usize> = (0..b.num_columns())
            .filter(|&c| !["keyring", "lease_files"].contains(&schema.field(c).name().as_str()))
            .collect();
        for i in 0..b.num_rows() {
            let row: Vec<String> = cols
                .iter()
                .map(|&c| cell(b.column(c).as_ref(), i))
                .collect();
            out.push(row.join(" | "));
        }
    }
    out.sort();
    out
}
