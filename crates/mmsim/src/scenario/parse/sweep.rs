//! Sweep files: a base scenario and its axes, checked as scenario files are.
//!
//! ```toml
//! [sweep]
//! scenario = "../parallelio-step.toml"   # required; relative to this file
//! kernels = ["3.9", "lessdisrupt-v7r10"] # optional axis `kernel` (default: the scenario's)
//! seeds = "1..50"                        # optional axis `seed`: "A..B" (both included),
//!                                        # an integer, or an array of integers
//! output = "swappiness.parquet"          # optional; relative to this file
//! show = ["workloads.dd.io_duration"]    # optional: result columns the terminal shows
//!
//! [axes]                                 # optional: every combination of these values
//! vm.swappiness = [0, 30, 60, 100]       # a scenario key by its TOML path
//! workload.dd.size = ["1G", "2G"]        # [[workload]] elements by name or number
//! kernel.switches.kswapd_shrink_zone = [false, true]
//!
//! [[point]]                              # optional: an explicit list, crossed with the
//! vm.swappiness = 10                     # axes above; a point that leaves a key out
//! vm.dirty_ratio = 40                    # keeps the scenario's value
//! ```
//!
//! Each axis value is checked alone on the base scenario, so a misspelt key or a value out
//! of range is reported at its place in the sweep file. Values that are valid alone but not
//! together (a `min_free_kbytes` above a smaller `machine.ram`) fail in their point's row.

use super::check::{opt, with_suggestion, Cx, Res, Table};
use super::tree::{self, Entry, Node, Val};
use crate::presets::{self, PRESETS};
use crate::scenario::ScenarioError;
use crate::sweep::{self, AxisValue, Point, Sweep, TomlText};
use std::ops::Range;
use std::path::Path;
use toml_edit::DocumentMut;

const TOP_KEYS: &[&str] = &["sweep", "axes", "point"];
const SWEEP_KEYS: &[&str] = &["scenario", "kernels", "seeds", "output", "show"];

/// The most points a sweep may expand to.
pub const MAX_POINTS: usize = 1_000_000;

/// Load a sweep file and expand its points.
#[allow(clippy::result_large_err)]
pub fn load_sweep(path: &Path) -> Result<Sweep, ScenarioError> {
    let file = path.display().to_string();
    let text = super::read_file(path)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    load_sweep_str(&text, &file, dir)
}

/// Parse a sweep's text; `file` names it in messages and `dir` is where its relative
/// paths start.
#[allow(clippy::result_large_err)]
pub fn load_sweep_str(text: &str, file: &str, dir: &Path) -> Result<Sweep, ScenarioError> {
    let cx = Cx { file, text };
    let entries = tree::parse_tree(text).map_err(|e| super::syntax_error(&cx, &e))?;
    read(&cx, &entries, dir).map_err(|e| *e)
}

/// One axis: the scenario path it sets, its column name, and its values with where each is.
struct Axis {
    path: Vec<String>,
    column: String,
    key: String,
    key_span: Option<Range<usize>>,
    values: Vec<(AxisValue, Option<Range<usize>>)>,
}

/// A listed point: (axis column, path, value, where) per key it sets.
type Listed = Vec<(String, Vec<String>, AxisValue, Option<Range<usize>>)>;

fn read(cx: &Cx<'_>, entries: &[Entry], dir: &Path) -> Res<Sweep> {
    let root = Table {
        path: String::new(),
        entries,
        span: None,
    };
    root.check_keys(
        cx,
        TOP_KEYS,
        "a sweep file (expected [sweep], [axes], [[point]])",
    )?;
    let sweep_t = match opt(&root, "sweep") {
        Some(item) => super::check::sub_table(cx, &item, "a table [sweep]")?,
        None => {
            return Err(cx.fail(
                None,
                "sweep",
                "missing required table [sweep]: expected at least `[sweep]` with \
                 `scenario = \"FILE.toml\"`",
            ))
        }
    };
    sweep_t.check_keys(cx, SWEEP_KEYS, "[sweep]")?;
    let scenario_item = sweep_t.required(cx, "scenario", "the base scenario file, a string")?;
    let scenario_rel = super::values::string(cx, &scenario_item, "a file name (a string)")?;
    let scenario_path = dir.join(scenario_rel);
    let scenario_file = scenario_path.display().to_string();
    let base_text = std::fs::read_to_string(&scenario_path).map_err(|e| {
        scenario_item.fail(cx, format!("cannot read the scenario {scenario_file}: {e}"))
    })?;
    let name = scenario_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = super::load_str(&base_text, &scenario_file, &name).map_err(Box::new)?;
    let base_doc: DocumentMut = base_text.parse().expect("the scenario parsed once already");
    if let Some(p) = &base.kernel.preset {
        presets::resolve(p, &base.kernel.switches)
            .map_err(|e| scenario_item.fail(cx, format!("the scenario's kernel: {e}")))?;
    }

    let mut axes: Vec<Axis> = Vec::new();
    if let Some(item) = opt(&sweep_t, "kernels") {
        let values = match &item.node.val {
            Val::Str(s) => vec![(AxisValue::Str(s.clone()), item.span().cloned())],
            Val::Array(nodes) if !nodes.is_empty() => nodes
                .iter()
                .map(|n| match &n.val {
                    Val::Str(s) => Ok((AxisValue::Str(s.clone()), n.span.clone())),
                    _ => Err(cx.fail(
                        n.span.as_ref(),
                        &item.path,
                        format!(
                            "expected a kernel preset name (a string), found {}",
                            super::check::describe(&n.val)
                        ),
                    )),
                })
                .collect::<Res<_>>()?,
            _ => return Err(item.expected(cx, "a preset name or a non-empty array of them")),
        };
        axes.push(Axis {
            path: vec!["kernel".into(), "preset".into()],
            column: "kernel".into(),
            key: item.path.clone(),
            key_span: item.key_span.cloned(),
            values,
        });
    }
    if let Some(item) = opt(&root, "axes") {
        let Val::Table(entries) = &item.node.val else {
            return Err(item.expected(cx, "a table [axes]"));
        };
        collect_axes(cx, entries, &mut Vec::new(), &mut axes)?;
    }
    if let Some(item) = opt(&sweep_t, "seeds") {
        let values = seeds(cx, item.node, &item.path)?;
        axes.push(Axis {
            path: vec!["run".into(), "seed".into()],
            column: "seed".into(),
            key: item.path.clone(),
            key_span: item.key_span.cloned(),
            values,
        });
    }
    for (i, a) in axes.iter().enumerate() {
        if let Some(b) = axes[..i].iter().find(|b| b.path == a.path) {
            return Err(cx.fail(
                a.key_span.as_ref(),
                &a.key,
                format!(
                    "the scenario key '{}' is swept twice (also by '{}')",
                    a.path.join("."),
                    b.key
                ),
            ));
        }
    }

    let mut listed: Vec<Listed> = Vec::new();
    if let Some(item) = opt(&root, "point") {
        for t in super::check::array_of_tables(cx, &item, "point")? {
            let t = t?;
            let mut point = Listed::new();
            collect_point(cx, t.entries, &mut Vec::new(), &t.path, &mut point)?;
            for (_, path, _, span) in &point {
                if axes.iter().any(|a| &a.path == path) {
                    return Err(cx.fail(
                        span.as_ref(),
                        &format!("{}.{}", t.path, path.join(".")),
                        format!(
                            "the scenario key '{}' is both an axis and set by a listed point",
                            path.join(".")
                        ),
                    ));
                }
            }
            listed.push(point);
        }
    }

    // Every value alone on the base: errors land where the value is written.
    for a in &axes {
        for (v, span) in &a.values {
            check_alone(
                cx,
                &base_doc,
                &scenario_file,
                &name,
                &a.path,
                &a.key,
                v,
                span,
                a,
            )?;
        }
    }
    for (i, p) in listed.iter().enumerate() {
        for (column, path, v, span) in p {
            let key = format!("point[{i}].{column}");
            let a = Axis {
                path: path.clone(),
                column: column.clone(),
                key: key.clone(),
                key_span: span.clone(),
                values: Vec::new(),
            };
            check_alone(
                cx,
                &base_doc,
                &scenario_file,
                &name,
                path,
                &key,
                v,
                span,
                &a,
            )?;
        }
    }

    // Columns: the axes but kernel and seed, then the listed keys in first appearance.
    let mut columns: Vec<(String, Vec<String>)> = axes
        .iter()
        .filter(|a| !is_fixed(&a.path))
        .map(|a| (a.column.clone(), a.path.clone()))
        .collect();
    for p in &listed {
        for (column, path, _, _) in p {
            if !is_fixed(path) && !columns.iter().any(|(c, _)| c == column) {
                columns.push((column.clone(), path.clone()));
            }
        }
    }

    // The product, first axis slowest; the list sits after [axes] and before the seeds.
    let (before, seed_axis): (Vec<&Axis>, Vec<&Axis>) =
        axes.iter().partition(|a| a.path != ["run", "seed"]);
    let mut dims: Vec<usize> = before.iter().map(|a| a.values.len()).collect();
    if !listed.is_empty() {
        dims.push(listed.len());
    }
    dims.extend(seed_axis.iter().map(|a| a.values.len()));
    let total = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= MAX_POINTS)
        .ok_or_else(|| {
            cx.fail(
                None,
                "axes",
                format!(
                    "the sweep has more than {MAX_POINTS} points ({}); split it",
                    dims.iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(" x ")
                ),
            )
        })?;

    let base_preset = base
        .kernel
        .preset
        .clone()
        .unwrap_or_else(|| PRESETS[0].name.to_string());
    let mut points = Vec::with_capacity(total);
    let mut at = vec![0usize; dims.len()];
    for index in 0..total {
        let mut doc = base_doc.clone();
        let mut row: Vec<Option<AxisValue>> = vec![None; columns.len()];
        let mut kernel = base_preset.clone();
        let mut seed = base.run.seed;
        let mut set = |path: &[String], v: &AxisValue| {
            sweep::set_path(&mut doc, path, v.to_toml()).expect("checked alone on the base");
            match (path, v) {
                ([k, p], AxisValue::Str(s)) if k == "kernel" && p == "preset" => kernel = s.clone(),
                ([r, s], AxisValue::Int(i)) if r == "run" && s == "seed" => seed = *i as u64,
                _ => {
                    if let Some(c) = columns.iter().position(|(_, cp)| cp == path) {
                        row[c] = Some(v.clone());
                    }
                }
            }
        };
        let mut d = 0;
        for a in &before {
            set(&a.path, &a.values[at[d]].0);
            d += 1;
        }
        if !listed.is_empty() {
            for (_, path, v, _) in &listed[at[d]] {
                set(path, v);
            }
            d += 1;
        }
        for a in &seed_axis {
            set(&a.path, &a.values[at[d]].0);
        }
        let text = doc.to_string();
        points.push(Point {
            index,
            kernel,
            seed,
            axes: row,
            key: sweep::point_key(&name, &text),
            scenario: text,
            name: name.clone(),
            file: scenario_file.clone(),
        });
        // Odometer, last axis fastest.
        for d in (0..dims.len()).rev() {
            at[d] += 1;
            if at[d] < dims[d] {
                break;
            }
            at[d] = 0;
        }
    }

    let output = match opt(&sweep_t, "output") {
        Some(item) => Some(dir.join(super::values::string(cx, &item, "a file name (a string)")?)),
        None => None,
    };
    let show = match opt(&sweep_t, "show") {
        Some(item) => match &item.node.val {
            Val::Array(nodes) => nodes
                .iter()
                .map(|n| match &n.val {
                    Val::Str(s) => Ok(s.clone()),
                    _ => Err(cx.fail(
                        n.span.as_ref(),
                        &item.path,
                        "expected a column name (a string)",
                    )),
                })
                .collect::<Res<_>>()?,
            _ => return Err(item.expected(cx, "an array of column names")),
        },
        None => Vec::new(),
    };
    Ok(Sweep {
        file: cx.file.to_string(),
        scenario_file,
        scenario_name: name,
        axes: columns.into_iter().map(|(c, _)| c).collect(),
        points,
        output,
        show,
    })
}

/// `kernel.preset` and `run.seed` have columns of their own.
fn is_fixed(path: &[String]) -> bool {
    matches!(path, [a, b] if (a == "kernel" && b == "preset") || (a == "run" && b == "seed"))
}

/// The leaves of `[axes]`: each key whose value is an array is an axis.
fn collect_axes(
    cx: &Cx<'_>,
    entries: &[Entry],
    prefix: &mut Vec<String>,
    out: &mut Vec<Axis>,
) -> Res<()> {
    for e in entries {
        prefix.push(e.key.clone());
        let key = format!("axes.{}", prefix.join("."));
        match &e.node.val {
            Val::Table(inner) => collect_axes(cx, inner, prefix, out)?,
            Val::Array(nodes) if nodes.is_empty() => {
                return Err(cx.fail(
                    e.node.span.as_ref(),
                    &key,
                    "an axis needs at least one value",
                ))
            }
            Val::Array(nodes) => {
                let values = nodes
                    .iter()
                    .map(|n| Ok((axis_value(cx, n, &key)?, n.span.clone())))
                    .collect::<Res<_>>()?;
                out.push(Axis {
                    path: prefix.clone(),
                    column: column_name(prefix),
                    key,
                    key_span: e.key_span.clone(),
                    values,
                });
            }
            other => {
                return Err(cx.fail(
                    e.node.span.as_ref(),
                    &key,
                    format!(
                        "expected an array of the values to sweep, found {}; write [{}] for \
                         one value",
                        super::check::describe(other),
                        tree_text(&e.node)
                    ),
                ))
            }
        }
        prefix.pop();
    }
    Ok(())
}

/// The keys of one `[[point]]`: every leaf is a scenario key and its one value.
fn collect_point(
    cx: &Cx<'_>,
    entries: &[Entry],
    prefix: &mut Vec<String>,
    table_path: &str,
    out: &mut Listed,
) -> Res<()> {
    for e in entries {
        prefix.push(e.key.clone());
        if let Val::Table(inner) = &e.node.val {
            collect_point(cx, inner, prefix, table_path, out)?;
        } else {
            let key = format!("{table_path}.{}", prefix.join("."));
            let v = axis_value(cx, &e.node, &key)?;
            out.push((column_name(prefix), prefix.clone(), v, e.node.span.clone()));
        }
        prefix.pop();
    }
    Ok(())
}

fn column_name(path: &[String]) -> String {
    match path {
        [a, b] if a == "kernel" && b == "preset" => "kernel".into(),
        [a, b] if a == "run" && b == "seed" => "seed".into(),
        _ => path.join("."),
    }
}

fn axis_value(cx: &Cx<'_>, n: &Node, key: &str) -> Res<AxisValue> {
    Ok(match &n.val {
        Val::Str(s) => AxisValue::Str(s.clone()),
        Val::Int(i) => AxisValue::Int(*i),
        Val::Float(f) => AxisValue::Float(*f),
        Val::Bool(b) => AxisValue::Bool(*b),
        Val::Array(_) => AxisValue::Toml(TomlText { toml: tree_text(n) }),
        other => {
            return Err(cx.fail(
                n.span.as_ref(),
                key,
                format!(
                    "expected a string, number, boolean or array, found {}",
                    super::check::describe(other)
                ),
            ))
        }
    })
}

/// A scalar or array node written back as TOML.
fn tree_text(n: &Node) -> String {
    match &n.val {
        Val::Str(s) => toml_edit::Value::from(s.as_str()).to_string(),
        Val::Int(i) => i.to_string(),
        Val::Float(f) => toml_edit::Value::from(*f).to_string(),
        Val::Bool(b) => b.to_string(),
        Val::Datetime(d) => d.clone(),
        Val::Array(items) => format!(
            "[{}]",
            items.iter().map(tree_text).collect::<Vec<_>>().join(", ")
        ),
        Val::Table(_) => "{...}".into(),
    }
}

/// `seeds`: "A..B" (both included), an integer, or an array of integers; 0..=2^63-1 (a
/// TOML integer holds the seed in the scenario).
fn seeds(cx: &Cx<'_>, n: &Node, key: &str) -> Res<Vec<(AxisValue, Option<Range<usize>>)>> {
    let one = |n: &Node| match n.val {
        Val::Int(i) if i >= 0 => Ok((AxisValue::Int(i), n.span.clone())),
        _ => Err(cx.fail(
            n.span.as_ref(),
            key,
            format!(
                "expected a seed, an integer >= 0, found {}",
                super::check::describe(&n.val)
            ),
        )),
    };
    match &n.val {
        Val::Int(_) => Ok(vec![one(n)?]),
        Val::Array(items) if !items.is_empty() => items.iter().map(one).collect(),
        Val::Str(s) => {
            let bad = || {
                cx.fail(
                    n.span.as_ref(),
                    key,
                    format!(
                        "expected a range of seeds \"A..B\" (both included, A <= B), found \
                         \"{s}\""
                    ),
                )
            };
            let (a, b) = s.split_once("..").ok_or_else(bad)?;
            let a: i64 = a.trim().parse().map_err(|_| bad())?;
            let b: i64 = b.trim().parse().map_err(|_| bad())?;
            if a < 0 || b < a {
                return Err(bad());
            }
            if (b - a) as u64 >= MAX_POINTS as u64 {
                return Err(cx.fail(
                    n.span.as_ref(),
                    key,
                    format!("more than {MAX_POINTS} seeds"),
                ));
            }
            Ok((a..=b)
                .map(|i| (AxisValue::Int(i), n.span.clone()))
                .collect())
        }
        other => Err(cx.fail(
            n.span.as_ref(),
            key,
            format!(
                "expected \"A..B\", an integer or a non-empty array of integers, found {}",
                super::check::describe(other)
            ),
        )),
    }
}

/// The base scenario with only `path = v`: must load and name a known kernel.
#[allow(clippy::too_many_arguments)]
fn check_alone(
    cx: &Cx<'_>,
    base: &DocumentMut,
    scenario_file: &str,
    name: &str,
    path: &[String],
    key: &str,
    v: &AxisValue,
    span: &Option<Range<usize>>,
    axis: &Axis,
) -> Res<()> {
    let mut doc = base.clone();
    if let Err(e) = sweep::set_path(&mut doc, path, v.to_toml()) {
        return Err(cx.fail(axis.key_span.as_ref().or(span.as_ref()), key, e.message));
    }
    let text = doc.to_string();
    let s = super::load_str(&text, scenario_file, name).map_err(|e| {
        let at = if e.message.starts_with("unknown key") {
            axis.key_span.as_ref().or(span.as_ref())
        } else {
            span.as_ref().or(axis.key_span.as_ref())
        };
        let suggestion = e.suggestion.clone();
        with_suggestion(cx.fail(at, key, e.message), suggestion.as_deref())
    })?;
    let preset = s.kernel.preset.as_deref().unwrap_or(PRESETS[0].name);
    presets::resolve(preset, &s.kernel.switches).map_err(|e| {
        let err = cx.fail(
            span.as_ref().or(axis.key_span.as_ref()),
            key,
            format!(
                "unknown {} '{}'; `mmsim kernels` lists them",
                e.what, e.name
            ),
        );
        with_suggestion(err, e.suggestion)
    })?;
    Ok(())
}
