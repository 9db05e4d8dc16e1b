//! `mmsim._core`: the simulator as the Python package sees it. Everything here is a thin
//! call into the `mmsim` library or the `mmsim` command line, so a result is the same
//! bytes whichever way it was asked for. Runs release the GIL: Python threads can run
//! several at once.

use mmsim::presets::{self, PRESETS};
use mmsim::report::json;
use mmsim::scenario;
use mmsim::sim::{self, RunOptions, SimError};
use mmsim::sweep::{self, store, Point, Record, Table};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::Value;

create_exception!(
    _core,
    MmsimError,
    PyException,
    "Something mmsim could not do; the message is the command line's."
);
create_exception!(
    _core,
    ScenarioError,
    MmsimError,
    "Bad input: a scenario or sweep file, a key, a preset or a switch (file, line, key, and \
     the nearest valid name)."
);
create_exception!(
    _core,
    SimulationError,
    MmsimError,
    "A run stopped: a broken page-state invariant names the invariant and the page."
);

fn bad(message: impl std::fmt::Display) -> PyErr {
    ScenarioError::new_err(message.to_string())
}

/// A JSON value as the TOML value it stands for (objects are inline tables).
fn toml_value(v: &Value) -> Result<toml_edit::Value, String> {
    Ok(match v {
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().ok_or("a number out of range")?.into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => {
            let mut a = toml_edit::Array::new();
            for i in items {
                a.push(toml_value(i)?);
            }
            a.into()
        }
        Value::Object(o) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, v) in o {
                t.insert(k, toml_value(v)?);
            }
            t.into()
        }
        Value::Null => return Err("None has no TOML form".into()),
    })
}

/// A scenario given as a dict (its JSON): tables as tables, lists of dicts as arrays of
/// tables (`[[workload]]`), the rest as values.
#[pyfunction]
fn toml_from_json(json_text: &str) -> PyResult<String> {
    let v: Value = serde_json::from_str(json_text).map_err(bad)?;
    let Value::Object(o) = v else {
        return Err(bad("a scenario dict must be a dict of tables"));
    };
    let mut doc = toml_edit::DocumentMut::new();
    fill(doc.as_table_mut(), &o).map_err(bad)?;
    Ok(doc.to_string())
}

fn fill(t: &mut toml_edit::Table, o: &serde_json::Map<String, Value>) -> Result<(), String> {
    for (k, v) in o {
        match v {
            Value::Object(inner) => {
                let mut sub = toml_edit::Table::new();
                fill(&mut sub, inner)?;
                t.insert(k, toml_edit::Item::Table(sub));
            }
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
                let mut array = toml_edit::ArrayOfTables::new();
                for item in items {
                    let mut sub = toml_edit::Table::new();
                    fill(&mut sub, item.as_object().expect("checked"))?;
                    array.push(sub);
                }
                t.insert(k, toml_edit::Item::ArrayOfTables(array));
            }
            other => {
                let value = toml_value(other).map_err(|e| format!("key '{k}': {e}"))?;
                t.insert(k, toml_edit::Item::Value(value));
            }
        }
    }
    Ok(())
}

/// Run a scenario once, as `mmsim run --json` does: returns the `--json` file's text, the
/// run's flat row (a sweep row's results) as JSON, and with `sample_interval` (ns) the time
/// series as `--timeseries` writes it. `set` is (TOML path, JSON value) pairs applied to
/// the scenario first.
#[pyfunction]
#[pyo3(signature = (text, file, name, kernel=None, seed=None, set=Vec::new(), sample_interval=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    text: &str,
    file: &str,
    name: &str,
    kernel: Option<String>,
    seed: Option<u64>,
    set: Vec<(Vec<String>, String)>,
    sample_interval: Option<u64>,
) -> PyResult<(String, String, Option<String>)> {
    // The text as written first: its own errors name its own lines.
    scenario::load_str(text, file, name).map_err(bad)?;
    let mut text = text.to_string();
    if !set.is_empty() {
        let mut doc: toml_edit::DocumentMut = text.parse().map_err(bad)?;
        for (path, value) in &set {
            // A bare switch name is that switch.
            let switch;
            let path = match path.as_slice() {
                [name] if presets::find_switch(name).is_some() => {
                    switch = vec!["kernel".to_string(), "switches".to_string(), name.clone()];
                    &switch
                }
                _ => path,
            };
            let v: Value = serde_json::from_str(value).map_err(bad)?;
            let key = path.join(".");
            let v = toml_value(&v).map_err(|e| bad(format!("{file}: set '{key}': {e}")))?;
            sweep::set_path(&mut doc, path, v)
                .map_err(|e| bad(format!("{file}: set '{key}': {}", e.message)))?;
        }
        text = doc.to_string();
    }
    let s = scenario::load_str(&text, file, name).map_err(bad)?;
    let preset = kernel
        .or_else(|| s.kernel.preset.clone())
        .unwrap_or_else(|| PRESETS[0].name.to_string());
    let k = presets::resolve(&preset, &s.kernel.switches).map_err(bad)?;
    let seed = seed.unwrap_or(s.run.seed);
    let outputs = sim::RunOutputs {
        sample_interval: sample_interval.map(|i| i.max(1_000_000)),
        keep_series: true,
        ..Default::default()
    };
    let (r, series) = py
        .detach(|| sim::run_with(&s, &k, seed, RunOptions::default(), outputs))
        .map_err(|e| match e {
            SimError::Config(m) => bad(format!("{}: {m}", s.name)),
            other => SimulationError::new_err(format!("kernel {}: {other}", k.label())),
        })?;
    let json_text = serde_json::to_string_pretty(&json::runs_to_json(std::slice::from_ref(&r)))
        .expect("JSON of plain data")
        + "\n";
    Ok((
        json_text,
        store::encode(&sweep::record_of(&r)),
        series.map(|t| t.to_csv()),
    ))
}

/// A sweep file loaded and expanded: its axes, output, `show` and points, as JSON.
#[pyfunction]
fn load_sweep(path: &str) -> PyResult<String> {
    let sw = sweep::load(std::path::Path::new(path)).map_err(bad)?;
    let v = serde_json::json!({
        "file": sw.file,
        "scenario_file": sw.scenario_file,
        "axes": sw.axes,
        "output": sw.output.map(|p| p.display().to_string()),
        "show": sw.show,
        "points": sw.points,
    });
    Ok(v.to_string())
}

/// Run one point (the JSON of a point of `load_sweep`) to its record, as the store keeps
/// it. A failing point is a record with an error, not an exception.
#[pyfunction]
fn run_point(py: Python<'_>, point_json: &str) -> PyResult<String> {
    let p: Point = serde_json::from_str(point_json).map_err(bad)?;
    let r = py.detach(|| sweep::run_point(&p));
    Ok(store::encode(&r))
}

/// The sweep's table from its records (in point order) as `mmsim sweep` writes it:
/// Parquet, or CSV when `csv`.
#[pyfunction]
#[pyo3(signature = (path, records, csv=false))]
fn sweep_table<'py>(
    py: Python<'py>,
    path: &str,
    records: Vec<String>,
    csv: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let sw = sweep::load(std::path::Path::new(path)).map_err(bad)?;
    if records.len() != sw.points.len() {
        return Err(bad(format!(
            "{path}: {} records for {} points",
            records.len(),
            sw.points.len()
        )));
    }
    let records: Vec<Record> = records
        .iter()
        .map(|r| store::decode(r).ok_or_else(|| bad("a record that does not decode")))
        .collect::<PyResult<_>>()?;
    let table = Table::build(&sw, &records);
    let bytes = if csv {
        table.to_csv().into_bytes()
    } else {
        let mut out = Vec::new();
        sweep::parquet::write(&table, &mut out).map_err(|e| MmsimError::new_err(e.to_string()))?;
        out
    };
    Ok(PyBytes::new(py, &bytes))
}

/// The record kept under `key` in a points directory, if there is a whole one.
#[pyfunction]
fn store_get(dir: &str, key: &str) -> PyResult<Option<String>> {
    let s = store::Store::open(std::path::Path::new(dir))
        .map_err(|e| MmsimError::new_err(e.to_string()))?;
    Ok(s.get(key).map(|r| store::encode(&r)))
}

/// Keep a record under `key` in a points directory (written whole, then renamed).
#[pyfunction]
fn store_put(dir: &str, key: &str, record: &str) -> PyResult<()> {
    let s = store::Store::open(std::path::Path::new(dir))
        .map_err(|e| MmsimError::new_err(e.to_string()))?;
    let r = store::decode(record).ok_or_else(|| bad("a record that does not decode"))?;
    s.put(key, &r)
        .map_err(|e| MmsimError::new_err(e.to_string()))
}

/// Run the `mmsim` command line in this process (`args` without the program name) and
/// return its exit status; it prints to this process's stdout and stderr.
#[pyfunction]
fn cli(py: Python<'_>, args: Vec<String>) -> u8 {
    py.detach(|| mmsim_cli::main_with_args(std::iter::once("mmsim".to_string()).chain(args)))
}

/// mmsim's version: the one in every point key.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MmsimError", m.py().get_type::<MmsimError>())?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(toml_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(load_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(run_point, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table, m)?)?;
    m.add_function(wrap_pyfunction!(store_get, m)?)?;
    m.add_function(wrap_pyfunction!(store_put, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
