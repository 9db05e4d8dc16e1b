//! Sweeps: one base scenario run at many points, one tidy row per run.
//!
//! A sweep file names a scenario and its axes (`docs/sweeps.md`): scenario keys by their
//! TOML path, the kernels, the seeds, and optionally an explicit list of points. Loading it
//! ([`crate::scenario::load_sweep`]) checks every axis value against the scenario parser and
//! expands the points; each [`Point`] carries the whole scenario text it runs, so a point
//! can be run anywhere (a thread here, a Dask worker elsewhere) and gives the same row.
//!
//! A point's result is keyed by a hash of what determines it (mmsim's version, the point's
//! scenario text and name); [`store`] keeps one file per key, so a sweep that is stopped
//! resumes where it was and a point given twice runs once.

mod edit;
pub mod parquet;
pub mod store;

pub use edit::{set_path, EditError};

use crate::report::{json, RunResult};
use crate::scenario::{self, Scenario, ScenarioError};
use crate::sim::{self, RunOptions};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// One value of a table cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Cell {
    /// The cell as JSON (a float that is not finite becomes null, as in `--json`).
    pub fn to_json(&self) -> Value {
        match self {
            Cell::Null => Value::Null,
            Cell::Bool(b) => Value::Bool(*b),
            Cell::Int(i) => Value::from(*i),
            Cell::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Cell::Str(s) => Value::from(s.as_str()),
        }
    }

    /// The cell a JSON scalar stands for; `None` for arrays and objects.
    pub fn from_json(v: &Value) -> Option<Cell> {
        Some(match v {
            Value::Null => Cell::Null,
            Value::Bool(b) => Cell::Bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => Cell::Int(i),
                (None, Some(u), _) => Cell::Int(i64::try_from(u).unwrap_or(i64::MAX)),
                (None, None, Some(f)) => Cell::Float(f),
                _ => Cell::Null,
            },
            Value::String(s) => Cell::Str(s.clone()),
            Value::Array(_) | Value::Object(_) => return None,
        })
    }

    /// How the cell reads in CSV and in the terminal (empty for null).
    pub fn text(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Bool(b) => b.to_string(),
            Cell::Int(i) => i.to_string(),
            Cell::Float(f) => f.to_string(),
            Cell::Str(s) => s.clone(),
        }
    }
}

/// A loaded sweep: its points, in the order they are numbered.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The sweep file, as given.
    pub file: String,
    /// The base scenario file (for messages) and its name (the file stem).
    pub scenario_file: String,
    pub scenario_name: String,
    /// The axis columns after `kernel` and `seed`, in file order: dotted scenario paths.
    pub axes: Vec<String>,
    /// Every point; a point's `axes` line up with `Sweep::axes`.
    pub points: Vec<Point>,
    /// `[sweep] output`, resolved against the sweep file's directory.
    pub output: Option<std::path::PathBuf>,
    /// `[sweep] show`: result columns printed after the axes in the terminal.
    pub show: Vec<String>,
}

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Point {
    /// Its number, 0-based, in expansion order.
    pub index: usize,
    /// The kernel preset and seed it runs under (the scenario's `kernel.preset` and
    /// `run.seed` after the axes are applied).
    pub kernel: String,
    pub seed: u64,
    /// The axis values, aligned with [`Sweep::axes`]; `None` where a listed point leaves
    /// the scenario's own value.
    pub axes: Vec<Option<AxisValue>>,
    /// The whole scenario it runs, as TOML.
    pub scenario: String,
    /// The scenario's name (the base file's stem) and file, for the run and its messages.
    pub name: String,
    pub file: String,
    /// The hash that keys its result (see [`point_key`]).
    pub key: String,
}

/// An axis value as the sweep file wrote it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum AxisValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// An array value (e.g. `lowmem_reserve_ratio`), shown as its TOML text.
    Toml(TomlText),
}

/// TOML text of an array value, kept apart from strings so it is not quoted twice.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TomlText {
    pub toml: String,
}

impl AxisValue {
    pub fn cell(&self) -> Cell {
        match self {
            AxisValue::Bool(b) => Cell::Bool(*b),
            AxisValue::Int(i) => Cell::Int(*i),
            AxisValue::Float(f) => Cell::Float(*f),
            AxisValue::Str(s) => Cell::Str(s.clone()),
            AxisValue::Toml(t) => Cell::Str(t.toml.clone()),
        }
    }

    /// The value as a TOML value, to write into the scenario.
    pub fn to_toml(&self) -> toml_edit::Value {
        match self {
            AxisValue::Bool(b) => (*b).into(),
            AxisValue::Int(i) => (*i).into(),
            AxisValue::Float(f) => (*f).into(),
            AxisValue::Str(s) => s.as_str().into(),
            AxisValue::Toml(t) => t
                .toml
                .parse::<toml_edit::Value>()
                .expect("array values are kept as the TOML they were parsed from"),
        }
    }
}

/// The key of a point's result: SHA-256 over mmsim's version, the hash of the model's
/// source ([`MODEL_HASH`](crate::MODEL_HASH)), the scenario's name and its text after the
/// axes were applied (which holds the kernel, the switches and the seed), as 32 hex
/// digits. Anything else that changes a run changes one of these.
pub fn point_key(name: &str, scenario_text: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"mmsim ");
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(b"\0");
    h.update(crate::MODEL_HASH.as_bytes());
    h.update(b"\0");
    h.update(name.as_bytes());
    h.update(b"\0");
    h.update(scenario_text.as_bytes());
    let digest = h.finalize();
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// What one point gave: an error, or the run's figures as (column, value) in a fixed
/// order. This is what [`store`] keeps under the point's key.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub error: Option<String>,
    pub columns: Vec<(String, Cell)>,
}

/// Run one point to its record. Never panics on a bad point: a scenario that the axes
/// made invalid, an unknown kernel, a stopped simulation or a panic in the model become
/// the record's error, so one point cannot stop the others.
pub fn run_point(p: &Point) -> Record {
    let outcome = std::panic::catch_unwind(|| -> Result<RunResult, String> {
        let s = scenario::load_str(&p.scenario, &p.file, &p.name).map_err(|e| point_error(&e))?;
        let kernel =
            crate::presets::resolve(&p.kernel, &s.kernel.switches).map_err(|e| e.to_string())?;
        sim::run(&s, &kernel, s.run.seed, RunOptions::default()).map_err(|e| e.to_string())
    });
    match outcome {
        Ok(Ok(r)) => record_of(&r),
        Ok(Err(e)) => Record {
            error: Some(e),
            columns: Vec::new(),
        },
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Record {
                error: Some(format!("the simulation panicked: {what}")),
                columns: Vec::new(),
            }
        }
    }
}

/// A scenario error inside a point: the key and message, without the line of a text the
/// user never saw.
fn point_error(e: &ScenarioError) -> String {
    let mut s = String::new();
    if !e.key.is_empty() {
        s.push_str(&format!("key '{}': ", e.key));
    }
    s.push_str(&e.message);
    if let Some(sug) = &e.suggestion {
        s.push_str(&format!(" (did you mean '{sug}'?)"));
    }
    s
}

/// The `--json` fields a row takes, in the order its columns come: the run's length, the
/// workloads' figures and where each workload ended, the MMTests vmstat rows in
/// compare-kernels order, /proc/vmstat in the kernel's order, then the devices, groups,
/// mounts, throttling and warnings. The rest identify the run (they are the point's own
/// columns) or are not one number per run (per-thread lists, text dumps).
const FIELDS: &[&str] = &[
    "simulated_seconds",
    "workloads",
    "workload_states",
    "mmtests_vmstat",
    "vmstat",
    "devices",
    "cgroups",
    "nfs",
    "dirty_throttle",
    "warnings",
];

/// A run's figures: the fields of its `--json` object flattened into dotted column names
/// (`vmstat.pgscan_kswapd_normal`, `mmtests_vmstat.Swap Outs`,
/// `workloads.dd.io_seconds`), and the number of OOM kills as `oom_kills`.
pub fn record_of(r: &RunResult) -> Record {
    let mut columns = Vec::new();
    let Value::Object(o) = json::run_to_json(r) else {
        unreachable!("a run is a JSON object")
    };
    for field in FIELDS {
        match *field {
            // The JSON object sorts its keys; these keep the order the kernel and MMTests
            // print them in.
            "workloads" => {
                for (w, metrics) in &r.workloads {
                    for (m, v) in metrics {
                        columns.push((format!("workloads.{w}.{m}"), float_cell(*v)));
                    }
                }
            }
            "mmtests_vmstat" => {
                let rows = crate::report::mmtests::vmstat_summary(
                    &|name| r.vmstat(name),
                    r.simulated_seconds,
                    true,
                );
                for (label, cell) in rows {
                    let v = crate::report::mmtests::json_value(&cell);
                    let c = match cell {
                        crate::report::mmtests::Cell::Int(i)
                        | crate::report::mmtests::Cell::Percent(i) => Cell::Int(i),
                        _ => float_cell(v),
                    };
                    columns.push((format!("mmtests_vmstat.{label}"), c));
                }
            }
            "vmstat" => {
                for (n, v) in &r.vmstat {
                    columns.push((
                        format!("vmstat.{n}"),
                        Cell::Int(i64::try_from(*v).unwrap_or(i64::MAX)),
                    ));
                }
            }
            other => {
                if let Some(v) = o.get(other) {
                    flatten(other, v, &mut columns);
                }
            }
        }
    }
    columns.push(("oom_kills".to_string(), Cell::Int(r.oom_kills.len() as i64)));
    Record {
        error: None,
        columns,
    }
}

fn float_cell(v: f64) -> Cell {
    if v.is_finite() {
        Cell::Float(v)
    } else {
        Cell::Null
    }
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, Cell)>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        Value::Array(_) => {}
        scalar => out.push((
            prefix.to_string(),
            Cell::from_json(scalar).expect("a scalar"),
        )),
    }
}

/// A column of the sweep's table: its name, its type and a value per row.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    pub cells: Vec<Cell>,
}

/// A column's type: the widest of its cells (integers in a column with floats are floats;
/// anything mixed with strings is a string).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Bool,
    Int,
    Float,
    Str,
}

/// The sweep's table: one row per point, in point order.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
}

impl Table {
    /// Rows of `point`, `key`, `kernel`, `seed`, the axes, `error`, then every result
    /// column in the order it first appears (a column a row lacks is null there).
    pub fn build(sweep: &Sweep, records: &[Record]) -> Table {
        let n = sweep.points.len();
        let mut columns: Vec<Column> = Vec::new();
        let mut fixed = |name: &str, cells: Vec<Cell>| {
            columns.push(Column {
                name: name.to_string(),
                kind: Kind::Str,
                cells,
            })
        };
        let ps = &sweep.points;
        fixed(
            "point",
            ps.iter().map(|p| Cell::Int(p.index as i64)).collect(),
        );
        fixed("key", ps.iter().map(|p| Cell::Str(p.key.clone())).collect());
        fixed(
            "kernel",
            ps.iter().map(|p| Cell::Str(p.kernel.clone())).collect(),
        );
        fixed(
            "seed",
            ps.iter()
                .map(|p| Cell::Int(i64::try_from(p.seed).unwrap_or(i64::MAX)))
                .collect(),
        );
        for (a, name) in sweep.axes.iter().enumerate() {
            fixed(
                name,
                ps.iter()
                    .map(|p| p.axes[a].as_ref().map_or(Cell::Null, AxisValue::cell))
                    .collect(),
            );
        }
        fixed(
            "error",
            records
                .iter()
                .map(|r| r.error.clone().map_or(Cell::Null, Cell::Str))
                .collect(),
        );
        let mut index: std::collections::BTreeMap<String, usize> = Default::default();
        for (row, rec) in records.iter().enumerate() {
            for (name, cell) in &rec.columns {
                let c = *index.entry(name.clone()).or_insert_with(|| {
                    columns.push(Column {
                        name: name.clone(),
                        kind: Kind::Str,
                        cells: vec![Cell::Null; n],
                    });
                    columns.len() - 1
                });
                columns[c].cells[row] = cell.clone();
            }
        }
        for c in &mut columns {
            c.kind = kind_of(&c.cells);
        }
        Table { columns }
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.cells.len())
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The column whose name is nearest to `name`, for a misspelt `show`: by edit distance
    /// over the whole name (Jaro-Winkler would favour a shared prefix, and every column of
    /// a workload shares one), at least half the characters alike; the first on a tie.
    pub fn nearest_column(&self, name: &str) -> Option<&str> {
        let mut best: Option<(f64, &str)> = None;
        for c in &self.columns {
            let score = strsim::normalized_damerau_levenshtein(name, &c.name);
            if score >= 0.5 && best.is_none_or(|(b, _)| score > b) {
                best = Some((score, &c.name));
            }
        }
        best.map(|(_, n)| n)
    }

    /// The table as CSV (RFC 4180): a header, then a line per row; null is empty.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let line = |cells: Vec<String>| cells.join(",") + "\n";
        out.push_str(&line(
            self.columns.iter().map(|c| csv_field(&c.name)).collect(),
        ));
        for r in 0..self.rows() {
            out.push_str(&line(
                self.columns
                    .iter()
                    .map(|c| csv_field(&c.cells[r].text()))
                    .collect(),
            ));
        }
        out
    }

    /// Row `r` as one line of JSON (`{"column": value, ...}` in column order, nulls
    /// included): what `row_hash` digests, and what the Python package builds its frames from.
    pub fn row_json(&self, r: usize) -> String {
        let mut s = String::from("{");
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&Value::from(c.name.as_str()).to_string());
            s.push(':');
            s.push_str(&c.cells[r].to_json().to_string());
        }
        s.push('}');
        s
    }
}

/// SHA-256 of a row's JSON line, as 64 hex digits: two tables agree row by row when their
/// row hashes do.
pub fn row_hash(line: &str) -> String {
    Sha256::digest(line.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn kind_of(cells: &[Cell]) -> Kind {
    let mut kind: Option<Kind> = None;
    for c in cells {
        let k = match c {
            Cell::Null => continue,
            Cell::Bool(_) => Kind::Bool,
            Cell::Int(_) => Kind::Int,
            Cell::Float(_) => Kind::Float,
            Cell::Str(_) => Kind::Str,
        };
        kind = Some(match (kind, k) {
            (None, k) => k,
            (Some(a), b) if a == b => a,
            (Some(Kind::Int), Kind::Float) | (Some(Kind::Float), Kind::Int) => Kind::Float,
            _ => Kind::Str,
        });
    }
    // An all-null column (every point failed) reads as text.
    kind.unwrap_or(Kind::Str)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Load a sweep file and expand its points (see `docs/sweeps.md`).
#[allow(clippy::result_large_err)]
pub fn load(path: &std::path::Path) -> Result<Sweep, ScenarioError> {
    scenario::load_sweep(path)
}

/// The scenario a point runs, parsed (for host-memory estimates before running).
#[allow(clippy::result_large_err)]
pub fn point_scenario(p: &Point) -> Result<Scenario, ScenarioError> {
    scenario::load_str(&p.scenario, &p.file, &p.name)
}

#[cfg(test)]
mod tests;
