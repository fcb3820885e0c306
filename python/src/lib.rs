//! `aeplens._aeplens`: the steps of `aeplens::cli::export::parts` for Python, batches in
//! and out through the Arrow C data interface (PyCapsules), never row by row. The
//! package's `aeplens/__init__.py` is the documented surface.

use aeplens::analysis::lease::SuppliedLeases;
use aeplens::cli::export::parts::{self, Setting};
use aeplens::verify::Options;
use aeplens::verify::signature::Profile;
use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema, from_ffi, to_ffi};
use arrow_array::{Array, RecordBatch, StructArray};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};
use std::collections::BTreeMap;

/// A record batch handed to Python: pyarrow (≥ 14) or any engine takes it through
/// `__arrow_c_array__` (`pyarrow.record_batch(batch)`).
#[pyclass(module = "aeplens._aeplens", frozen)]
struct ArrowBatch {
    batch: RecordBatch,
}

#[pymethods]
impl ArrowBatch {
    /// The batch as the C data interface's schema and array capsules.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema; // the batch is given in its own schema
        let data = StructArray::from(self.batch.clone()).into_data();
        let (array, schema) = to_ffi(&data).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let schema = PyCapsule::new_with_value(py, schema, c"arrow_schema")?;
        let array = PyCapsule::new_with_value(py, array, c"arrow_array")?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }

    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }
}

/// A Python object that speaks the C data interface for one batch (`__arrow_c_array__`:
/// a pyarrow RecordBatch, a Polars or DuckDB batch, …) as a record batch.
fn batch_in(obj: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    if !obj.hasattr("__arrow_c_array__")? {
        return Err(PyTypeError::new_err(
            "expected an Arrow record batch (an object with __arrow_c_array__, pyarrow >= 14)",
        ));
    }
    let pair = obj.call_method0("__arrow_c_array__")?;
    let (schema, array): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) = pair.extract()?;
    let schema_ptr = schema.pointer_checked(Some(c"arrow_schema"))?;
    let array_ptr = array.pointer_checked(Some(c"arrow_array"))?;
    // SAFETY: the capsules are the C data interface's, named as it says; the array is
    // moved out of its capsule (its release callback left null there), the schema only
    // read while its capsule lives.
    let data = unsafe {
        let array = FFI_ArrowArray::from_raw(array_ptr.as_ptr().cast());
        let schema = &*schema_ptr.as_ptr().cast::<FFI_ArrowSchema>();
        from_ffi(array, schema)
    }
    .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let array = StructArray::from(data);
    if array.null_count() > 0 {
        return Err(PyValueError::new_err(
            "a record batch has no null rows (this array has some: not a record batch)",
        ));
    }
    Ok(RecordBatch::from(array))
}

fn batch_out(batch: RecordBatch) -> ArrowBatch {
    ArrowBatch { batch }
}

/// The setting from what Python gives: keyring files' contents by name, lease files'
/// contents by name, the verification profile (`forensic` or `current`).
fn setting(
    keys: Vec<(String, Vec<u8>)>,
    leases: Vec<(String, Vec<u8>)>,
    profile: &str,
) -> PyResult<Setting> {
    let mut s = Setting::default();
    for (name, bytes) in keys {
        let text = String::from_utf8(bytes)
            .map_err(|_| PyValueError::new_err(format!("{name}: a keyring is UTF-8 JSON")))?;
        s.keys
            .add_text(&name, &text)
            .map_err(|e| PyValueError::new_err(e.render()))?;
    }
    let mut supplied = SuppliedLeases::default();
    for (name, bytes) in leases {
        if let Some(e) = supplied.add_bytes(&name, &bytes).first() {
            return Err(PyValueError::new_err(e.render()));
        }
    }
    s.leases = supplied;
    s.options = Options {
        profile: match profile {
            "forensic" => Profile::Forensic,
            "current" => Profile::Current,
            other => {
                return Err(PyValueError::new_err(format!(
                    "profile {other:?}: expected \"forensic\" or \"current\""
                )));
            }
        },
    };
    Ok(s)
}

/// A batch of pieces and the setting to verify it with.
fn prepared(
    pieces: &Bound<'_, PyAny>,
    keys: Vec<(String, Vec<u8>)>,
    leases: Vec<(String, Vec<u8>)>,
    profile: &str,
) -> PyResult<(RecordBatch, Setting)> {
    Ok((batch_in(pieces)?, setting(keys, leases, profile)?))
}

fn failed(e: String) -> PyErr {
    PyValueError::new_err(e)
}

#[pyfunction]
fn split_files(files: &Bound<'_, PyAny>) -> PyResult<ArrowBatch> {
    let batch = batch_in(files)?;
    let py = files.py();
    py.detach(|| parts::split(&batch))
        .map(batch_out)
        .map_err(failed)
}

#[pyfunction]
#[pyo3(signature = (pieces, keys, leases, profile))]
fn verify_batch(
    pieces: &Bound<'_, PyAny>,
    keys: Vec<(String, Vec<u8>)>,
    leases: Vec<(String, Vec<u8>)>,
    profile: &str,
) -> PyResult<ArrowBatch> {
    let (batch, setting) = prepared(pieces, keys, leases, profile)?;
    (pieces.py())
        .detach(|| parts::verify(&batch, &setting))
        .map(batch_out)
        .map_err(failed)
}

#[pyfunction]
#[pyo3(signature = (pieces, keys, leases, profile))]
fn analyse_group(
    pieces: &Bound<'_, PyAny>,
    keys: Vec<(String, Vec<u8>)>,
    leases: Vec<(String, Vec<u8>)>,
    profile: &str,
) -> PyResult<Vec<(&'static str, ArrowBatch)>> {
    let (batch, setting) = prepared(pieces, keys, leases, profile)?;
    let tables = (pieces.py())
        .detach(|| parts::analyse(&batch, &setting))
        .map_err(failed)?;
    Ok(parts::GROUP_TABLES
        .into_iter()
        .zip(tables.into_iter().map(batch_out))
        .collect())
}

#[pyfunction]
fn groups(ties: Vec<Bound<'_, PyAny>>) -> PyResult<ArrowBatch> {
    let batches = ties.iter().map(batch_in).collect::<PyResult<Vec<_>>>()?;
    parts::groups(&batches).map(batch_out).map_err(failed)
}

#[pyfunction]
#[pyo3(signature = (inputs, tables, keys, leases, profile))]
fn manifest(
    inputs: &Bound<'_, PyAny>,
    tables: BTreeMap<String, (u64, Vec<String>)>,
    keys: Vec<(String, Vec<u8>)>,
    leases: Vec<(String, Vec<u8>)>,
    profile: &str,
) -> PyResult<(String, String)> {
    let batch = batch_in(inputs)?;
    let setting = setting(keys, leases, profile)?;
    parts::manifest(&batch, &setting, tables).map_err(failed)
}

#[pyfunction]
fn keyring_fingerprints(keys: Vec<(String, Vec<u8>)>) -> PyResult<String> {
    Ok(setting(keys, Vec::new(), "forensic")?.keyring())
}

#[pymodule]
fn _aeplens(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "TABLES_VERSION",
        aeplens::cli::export::tables::TABLES_VERSION,
    )?;
    m.add_class::<ArrowBatch>()?;
    m.add_function(wrap_pyfunction!(split_files, m)?)?;
    m.add_function(wrap_pyfunction!(verify_batch, m)?)?;
    m.add_function(wrap_pyfunction!(analyse_group, m)?)?;
    m.add_function(wrap_pyfunction!(groups, m)?)?;
    m.add_function(wrap_pyfunction!(manifest, m)?)?;
    m.add_function(wrap_pyfunction!(keyring_fingerprints, m)?)?;
    Ok(())
}
