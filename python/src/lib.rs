//! `aeplens._aeplens`: the steps of `aeplens::cli::export::parts` for Python, batches in
//! and out through the Arrow C data interface (PyCapsules), never row by row. The
//! package's `aeplens/__init__.py` is the documented surface.

use aeplens::cli::export::parts;
use aeplens::open::Setting;
use aeplens::verify::signature::Profile;
use aeplens::verify::{Keyring, Options};
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

/// What Python gives to verify with, as the command line's `--keys`, `--tsa-certs`,
/// `--anchors`, `--leases` and the environment: files' contents by name, the key
/// variables (name, value) of the environment the caller read, and the profile.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct Trust {
    keys: Vec<(String, Vec<u8>)>,
    leases: Vec<(String, Vec<u8>)>,
    tsa_certs: Vec<(String, Vec<u8>)>,
    anchors: Vec<(String, Vec<u8>)>,
    environment: Vec<(String, String)>,
    profile: String,
}

/// The one [`Setting`] from what Python gives (no cache: an engine's batches are not files).
fn setting(trust: Trust) -> PyResult<Setting> {
    let utf8 = |name: &str, bytes: Vec<u8>| {
        String::from_utf8(bytes)
            .map_err(|_| PyValueError::new_err(format!("{name}: expected UTF-8 text")))
    };
    let load_error = |e: aeplens::load::LoadError| PyValueError::new_err(e.render());
    let mut s = Setting {
        trust: Keyring::with_variables(trust.environment),
        ..Setting::default()
    };
    for (name, bytes) in trust.keys {
        s.trust
            .add_text(&name, &utf8(&name, bytes)?)
            .map_err(load_error)?;
    }
    for (name, bytes) in trust.tsa_certs {
        s.trust.add_tsa_pem(&name, &bytes).map_err(load_error)?;
    }
    for (name, bytes) in trust.anchors {
        s.trust
            .add_anchors_text(&name, &utf8(&name, bytes)?)
            .map_err(load_error)?;
    }
    for (name, bytes) in trust.leases {
        if let Some(e) = s.leases.add_bytes(&name, &bytes).first() {
            return Err(PyValueError::new_err(e.render()));
        }
    }
    s.options = Options {
        profile: match trust.profile.as_str() {
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
fn split_range(
    py: Python<'_>,
    path: &str,
    start: u64,
    end: u64,
    data: &[u8],
) -> PyResult<ArrowBatch> {
    py.detach(|| parts::split_range(path, start, end, data))
        .map(batch_out)
        .map_err(failed)
}

#[pyfunction]
fn ties_batch(pieces: &Bound<'_, PyAny>) -> PyResult<ArrowBatch> {
    let batch = batch_in(pieces)?;
    (pieces.py())
        .detach(|| parts::ties(&batch))
        .map(batch_out)
        .map_err(failed)
}

#[pyfunction]
fn ndjson_from_head(head: &[u8]) -> bool {
    aeplens::load::pieces::ndjson_from_head(head)
}

#[pyfunction]
fn verify_batch(pieces: &Bound<'_, PyAny>, trust: Trust) -> PyResult<ArrowBatch> {
    let (batch, setting) = (batch_in(pieces)?, setting(trust)?);
    (pieces.py())
        .detach(|| parts::verify(&batch, &setting))
        .map(batch_out)
        .map_err(failed)
}

#[pyfunction]
fn analyse_group(
    pieces: &Bound<'_, PyAny>,
    trust: Trust,
) -> PyResult<Vec<(&'static str, ArrowBatch)>> {
    let (batch, setting) = (batch_in(pieces)?, setting(trust)?);
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
fn manifest(
    inputs: &Bound<'_, PyAny>,
    tables: BTreeMap<String, (u64, Vec<String>)>,
    trust: Trust,
) -> PyResult<(String, String)> {
    let batch = batch_in(inputs)?;
    let setting = setting(trust)?;
    parts::manifest(&batch, &setting, tables).map_err(failed)
}

#[pyfunction]
fn keyring_fingerprints(trust: Trust) -> PyResult<String> {
    Ok(parts::keyring(&setting(trust)?))
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
    m.add_function(wrap_pyfunction!(split_range, m)?)?;
    m.add_function(wrap_pyfunction!(ties_batch, m)?)?;
    m.add_function(wrap_pyfunction!(ndjson_from_head, m)?)?;
    m.add_function(wrap_pyfunction!(verify_batch, m)?)?;
    m.add_function(wrap_pyfunction!(analyse_group, m)?)?;
    m.add_function(wrap_pyfunction!(groups, m)?)?;
    m.add_function(wrap_pyfunction!(manifest, m)?)?;
    m.add_function(wrap_pyfunction!(keyring_fingerprints, m)?)?;
    Ok(())
}
