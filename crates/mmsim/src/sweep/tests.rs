use super::*;
use crate::scenario::load_sweep_str;
use std::path::PathBuf;

const BASE: &str = "\
# a small machine
[machine]
ram = \"256M\"
cpus = 2

[swap]
size = \"512M\"

[run]
duration = \"2s\"
seed = 7

[[workload]]
type = \"mem_eater\"
size = \"300M\"

[[workload]]
type = \"mem_eater\"
size = \"10M\"
start = \"1s\"
";

/// A directory of its own holding `base.toml`.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mmsim-sweep-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("base.toml"), BASE).unwrap();
    d
}

#[allow(clippy::result_large_err)]
fn load(test: &str, text: &str) -> Result<Sweep, ScenarioError> {
    load_sweep_str(text, "s.toml", &dir(test))
}

fn err(test: &str, text: &str) -> ScenarioError {
    load(test, text).expect_err("the sweep is bad")
}

#[test]
fn points_are_the_product_first_axis_slowest_seeds_fastest() {
    let sw = load(
        "product",
        "[sweep]\nscenario = \"base.toml\"\nkernels = [\"3.9\", \"mmotm-2013-07-18\"]\n\
         seeds = \"1..3\"\n[axes]\nvm.swappiness = [0, 100]\n",
    )
    .unwrap();
    assert_eq!(sw.points.len(), 12);
    assert_eq!(sw.axes, ["vm.swappiness"]);
    let got: Vec<(String, u64, Option<AxisValue>)> = sw
        .points
        .iter()
        .map(|p| (p.kernel.clone(), p.seed, p.axes[0].clone()))
        .collect();
    assert_eq!(got[0], ("3.9".into(), 1, Some(AxisValue::Int(0))));
    assert_eq!(got[1], ("3.9".into(), 2, Some(AxisValue::Int(0))));
    assert_eq!(got[3], ("3.9".into(), 1, Some(AxisValue::Int(100))));
    assert_eq!(
        got[11],
        ("mmotm-2013-07-18".into(), 3, Some(AxisValue::Int(100)))
    );
    for (i, p) in sw.points.iter().enumerate() {
        assert_eq!(p.index, i);
        let s = point_scenario(p).unwrap();
        assert_eq!(s.run.seed, p.seed);
        assert_eq!(s.kernel.preset.as_deref(), Some(p.kernel.as_str()));
    }
    let s = point_scenario(&sw.points[3]).unwrap();
    assert_eq!(s.vm.swappiness, 100);
    // The base's comment survives; every point has its own key.
    assert!(sw.points[0].scenario.starts_with("# a small machine"));
    let mut keys: Vec<&str> = sw.points.iter().map(|p| p.key.as_str()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 12);
}

#[test]
fn without_axes_a_sweep_is_the_scenario_once() {
    let sw = load("single", "[sweep]\nscenario = \"base.toml\"\n").unwrap();
    assert_eq!(sw.points.len(), 1);
    assert_eq!(sw.points[0].kernel, "3.9");
    assert_eq!(sw.points[0].seed, 7);
    assert_eq!(sw.points[0].scenario, BASE);
}

#[test]
fn listed_points_cross_the_axes_and_leave_unset_keys_null() {
    let sw = load(
        "listed",
        "[sweep]\nscenario = \"base.toml\"\nseeds = [1, 2]\n[axes]\nmachine.cpus = [1, 2]\n\
         [[point]]\nvm.swappiness = 10\n[[point]]\nvm.dirty_ratio = 40\nkernel = { preset = \
         \"mmotm-2013-07-18\" }\n",
    )
    .unwrap();
    assert_eq!(sw.axes, ["machine.cpus", "vm.swappiness", "vm.dirty_ratio"]);
    assert_eq!(sw.points.len(), 8);
    // cpus=1: point A seeds 1, 2; point B seeds 1, 2; then cpus=2.
    let p = &sw.points[2];
    assert_eq!(
        p.axes,
        [Some(AxisValue::Int(1)), None, Some(AxisValue::Int(40))]
    );
    assert_eq!((p.kernel.as_str(), p.seed), ("mmotm-2013-07-18", 1));
    assert_eq!(sw.points[1].kernel, "3.9");
    assert_eq!(point_scenario(p).unwrap().vm.dirty.dirty_ratio, 40);
}

#[test]
fn workloads_are_picked_by_number_or_default_name() {
    let sw = load(
        "pick",
        "[sweep]\nscenario = \"base.toml\"\n[axes]\nworkload.mem_eater-2.size = [\"20M\"]\n\
         workload.0.chunk = [\"1M\"]\n",
    )
    .unwrap();
    let s = point_scenario(&sw.points[0]).unwrap();
    assert_eq!(s.workloads[1].name, "mem_eater-2");
    let crate::scenario::WorkloadKind::MemEater { size, .. } = &s.workloads[1].kind else {
        panic!("a mem_eater")
    };
    assert_eq!(*size, 20 << 20);
    let crate::scenario::WorkloadKind::MemEater { chunk, .. } = &s.workloads[0].kind else {
        panic!("a mem_eater")
    };
    assert_eq!(*chunk, 1 << 20);
}

#[test]
fn a_misspelt_axis_key_is_reported_at_the_key_with_a_suggestion() {
    let e = err(
        "misspelt",
        "[sweep]\nscenario = \"base.toml\"\n[axes]\nvm.swapiness = [0, 60]\n",
    );
    assert_eq!(
        (e.file.as_str(), e.line, e.column),
        ("s.toml", Some(4), Some(4))
    );
    assert_eq!(e.key, "axes.vm.swapiness");
    assert!(
        e.message.starts_with("unknown key 'swapiness'"),
        "{}",
        e.message
    );
    assert_eq!(e.suggestion.as_deref(), Some("swappiness"));
}

#[test]
fn a_value_out_of_range_is_reported_at_the_value() {
    let e = err(
        "range",
        "[sweep]\nscenario = \"base.toml\"\n[axes]\nvm.swappiness = [0, 600]\n",
    );
    assert_eq!((e.line, e.column), (Some(4), Some(21)));
    assert_eq!(e.key, "axes.vm.swappiness");
    assert!(e.message.contains("600"), "{}", e.message);
}

#[test]
fn unknown_kernels_and_switches_are_named_with_the_nearest() {
    let e = err(
        "kernel",
        "[sweep]\nscenario = \"base.toml\"\nkernels = [\"3.9\", \"mmotm-2013-07-19\"]\n",
    );
    assert_eq!((e.line, e.column), (Some(3), Some(19)));
    assert_eq!(e.suggestion.as_deref(), Some("mmotm-2013-07-18"));
    let e = err(
        "switch",
        "[sweep]\nscenario = \"base.toml\"\n[axes]\nkernel.switches.kswapd_shrink_zon = [true]\n",
    );
    assert!(e.message.starts_with("unknown switch"), "{}", e.message);
    assert_eq!(e.suggestion.as_deref(), Some("kswapd_shrink_zone"));
}

#[test]
fn bad_sweep_tables_are_errors_with_their_place() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "[axes]\nvm.swappiness = [0]\n",
            "sweep",
            "missing required table [sweep]",
        ),
        (
            "[sweep]\nscenarios = \"base.toml\"\n",
            "sweep.scenarios",
            "unknown key",
        ),
        (
            "[sweep]\nscenario = \"none.toml\"\n",
            "sweep.scenario",
            "cannot read",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\nseeds = \"5..1\"\n",
            "sweep.seeds",
            "A <= B",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\nseeds = -1\n",
            "sweep.seeds",
            "integer >= 0",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\n[axes]\nvm.swappiness = 60\n",
            "axes.vm.swappiness",
            "expected an array",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\n[axes]\nvm.swappiness = []\n",
            "axes.vm.swappiness",
            "at least one value",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\nkernels = [\"3.9\"]\n[axes]\n\
             kernel.preset = [\"3.9\"]\n",
            "axes.kernel.preset",
            "swept twice",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\n[axes]\nvm.swappiness = [1]\n[[point]]\n\
             vm.swappiness = 2\n",
            "point[0].vm.swappiness",
            "both an axis",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\n[axes]\nworkload.dd.size = [\"1G\"]\n",
            "axes.workload.dd.size",
            "'workload' has no element 'dd': its elements are 'mem_eater', 'mem_eater-2'",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\n[axes]\nworkload.2.size = [\"1G\"]\n",
            "axes.workload.2.size",
            "'workload' has no element '2'",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\n[axes]\nworkload.size = [\"1G\"]\n",
            "axes.workload.size",
            "'workload' is an array of tables: name an element",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\n[axes]\nrun.duration.x = [1]\n",
            "axes.run.duration.x",
            "'run.duration' is a value, not a table",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\n[axes]\nmachine = [1]\n",
            "axes.machine",
            "'machine' is a table, not a value",
        ),
        (
            "[sweep]\nscenario = \"base.toml\"\nseeds = \"0..999\"\n[axes]\n\
             machine.cpus = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, \
             19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]\n\
             vm.swappiness = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, \
             19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33]\n",
            "axes",
            "more than 1000000 points",
        ),
    ];
    for (i, (text, key, message)) in cases.iter().enumerate() {
        let e = err(&format!("bad{i}"), text);
        assert_eq!(e.key, *key, "{text}: {e}");
        assert!(e.message.contains(message), "{text}: {e}");
        assert_eq!(e.file, "s.toml");
    }
}

#[test]
fn a_point_that_the_axes_make_invalid_fails_alone_in_its_row() {
    let sw = load(
        "combo",
        "[sweep]\nscenario = \"base.toml\"\n[axes]\nvm.min_free_kbytes = [1000, 100000]\n",
    )
    .unwrap();
    let ok = run_point(&sw.points[0]);
    let bad = run_point(&sw.points[1]);
    assert_eq!(ok.error, None);
    assert!(
        bad.error
            .as_deref()
            .is_some_and(|e| e.contains("too small")),
        "{:?}",
        bad.error
    );
    assert!(bad.columns.is_empty());
    let table = Table::build(&sw, &[ok, bad]);
    let error = table.column("error").unwrap();
    assert_eq!(error.cells[0], Cell::Null);
    assert!(matches!(&error.cells[1], Cell::Str(_)));
    let s = table.column("simulated_seconds").unwrap();
    assert_eq!(s.kind, Kind::Float);
    assert_eq!(s.cells[0], Cell::Float(2.0));
    assert_eq!(s.cells[1], Cell::Null);
}

#[test]
fn a_point_runs_to_the_same_record_every_time() {
    let sw = load(
        "determinism",
        "[sweep]\nscenario = \"base.toml\"\nseeds = [3]\n",
    )
    .unwrap();
    let a = run_point(&sw.points[0]);
    assert_eq!(a, run_point(&sw.points[0]));
    let names: Vec<&str> = a.columns.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[0], "simulated_seconds");
    assert_eq!(names[1], "workloads.mem_eater.pages_touched");
    assert!(names.contains(&"mmtests_vmstat.Swap Outs"));
    assert!(names.contains(&"vmstat.pswpout"));
    assert_eq!(names.last(), Some(&"oom_kills"));
    // MMTests' integer rows stay integers; its rates are floats.
    let cell = |n: &str| &a.columns.iter().find(|(c, _)| c == n).unwrap().1;
    assert!(matches!(cell("mmtests_vmstat.Swap Outs"), Cell::Int(_)));
    assert!(matches!(
        cell("mmtests_vmstat.Kswapd efficiency"),
        Cell::Int(_)
    ));
    assert!(matches!(
        cell("mmtests_vmstat.Kswapd velocity"),
        Cell::Float(_)
    ));
    // The run's own vmstat, as `mmsim run --json` gives it.
    let s = point_scenario(&sw.points[0]).unwrap();
    let k = crate::presets::resolve("3.9", &[]).unwrap();
    let r = sim::run(&s, &k, 3, RunOptions::default()).unwrap();
    let pswpout = a
        .columns
        .iter()
        .find(|(n, _)| n == "vmstat.pswpout")
        .unwrap();
    assert_eq!(pswpout.1, Cell::Int(r.vmstat("pswpout") as i64));
    assert!(r.vmstat("pswpout") > 0);
}

#[test]
fn json_scalars_become_cells_and_big_counts_saturate() {
    use serde_json::json;
    assert_eq!(Cell::from_json(&json!(3)), Some(Cell::Int(3)));
    assert_eq!(Cell::from_json(&json!(-3)), Some(Cell::Int(-3)));
    assert_eq!(Cell::from_json(&json!(u64::MAX)), Some(Cell::Int(i64::MAX)));
    assert_eq!(Cell::from_json(&json!(0.5)), Some(Cell::Float(0.5)));
    assert_eq!(Cell::from_json(&json!(null)), Some(Cell::Null));
    assert_eq!(Cell::from_json(&json!("x")), Some(Cell::Str("x".into())));
    assert_eq!(Cell::from_json(&json!(true)), Some(Cell::Bool(true)));
    assert_eq!(Cell::from_json(&json!([1])), None);
    assert_eq!(Cell::from_json(&json!({"a": 1})), None);
    assert_eq!(Cell::Float(f64::NAN).to_json(), serde_json::Value::Null);
}

#[test]
fn a_point_the_parser_rejects_names_the_key_without_a_line() {
    // Each value fits alone; together the workload no longer fits in RAM + swap.
    let sw = load(
        "parse-combo",
        "[sweep]\nscenario = \"base.toml\"\n[axes]\nswap.size = [\"64M\"]\n\
         workload.0.size = [\"700M\"]\n",
    )
    .unwrap();
    let r = run_point(&sw.points[0]);
    let e = r.error.expect("the point fails");
    assert!(
        e.starts_with("key 'workload[0].size': more memory asked than can exist"),
        "{e}"
    );
    assert!(!e.contains("base.toml:"), "{e}");
    assert_eq!(
        point_error(&ScenarioError {
            file: "f".into(),
            line: Some(3),
            column: Some(1),
            key: String::new(),
            message: "m".into(),
            suggestion: Some("s".into()),
        }),
        "m (did you mean 's'?)"
    );
}

#[test]
fn keys_cover_the_version_and_the_model_source() {
    // A rebuilt model never reuses the points of another: the model's hash is in the key.
    assert_eq!(crate::MODEL_HASH.len(), 16);
    assert!(crate::MODEL_HASH.bytes().all(|b| b.is_ascii_hexdigit()));
    let mut h = Sha256::new();
    for part in [
        "mmsim ",
        env!("CARGO_PKG_VERSION"),
        "\0",
        crate::MODEL_HASH,
        "\0",
        "a",
        "\0",
        "[machine]\n",
    ] {
        h.update(part.as_bytes());
    }
    let want: String = h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(point_key("a", "[machine]\n"), want);
}

#[test]
fn keys_depend_on_the_name_and_the_text_only() {
    let k = point_key("a", "[machine]\n");
    assert_eq!(k.len(), 32);
    assert!(k.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(k, point_key("a", "[machine]\n"));
    assert_ne!(k, point_key("b", "[machine]\n"));
    assert_ne!(k, point_key("a", "[machine] \n"));
    // The name and text are kept apart: moving a byte from one to the other changes it.
    assert_ne!(point_key("ab", "c"), point_key("a", "bc"));
}

#[test]
fn set_path_makes_tables_and_keeps_comments() {
    let mut doc: toml_edit::DocumentMut = "[vm]\nswappiness = 60 # the default\n".parse().unwrap();
    set_path(&mut doc, &["vm".into(), "swappiness".into()], 10.into()).unwrap();
    set_path(&mut doc, &["run".into(), "seed".into()], 3.into()).unwrap();
    let text = doc.to_string();
    assert!(text.contains("swappiness = 10 # the default"), "{text}");
    assert!(text.contains("[run]\nseed = 3"), "{text}");
    let e = set_path(&mut doc, &[], 1.into()).unwrap_err();
    assert!(e.message.contains("empty"));
}

#[test]
fn columns_take_the_widest_type_of_their_cells() {
    assert_eq!(
        kind_of(&[Cell::Int(1), Cell::Null, Cell::Float(0.5)]),
        Kind::Float
    );
    assert_eq!(kind_of(&[Cell::Int(1), Cell::Int(2)]), Kind::Int);
    assert_eq!(kind_of(&[Cell::Bool(true), Cell::Int(2)]), Kind::Str);
    assert_eq!(kind_of(&[Cell::Bool(true)]), Kind::Bool);
    assert_eq!(kind_of(&[Cell::Null]), Kind::Str);
}

fn two_row_table() -> Table {
    let col = |name: &str, kind, cells| Column {
        name: name.into(),
        kind,
        cells,
    };
    Table {
        columns: vec![
            col("point", Kind::Int, vec![Cell::Int(0), Cell::Int(1)]),
            col(
                "error",
                Kind::Str,
                vec![Cell::Null, Cell::Str("a \"bad\", point".into())],
            ),
            col("x", Kind::Float, vec![Cell::Float(0.5), Cell::Int(2)]),
            col("on", Kind::Bool, vec![Cell::Bool(true), Cell::Null]),
        ],
    }
}

#[test]
fn csv_quotes_what_needs_it_and_leaves_nulls_empty() {
    assert_eq!(
        two_row_table().to_csv(),
        "point,error,x,on\n0,,0.5,true\n1,\"a \"\"bad\"\", point\",2,\n"
    );
}

#[test]
fn row_json_and_its_hash_cover_every_column() {
    let t = two_row_table();
    assert_eq!(
        t.row_json(1),
        "{\"point\":1,\"error\":\"a \\\"bad\\\", point\",\"x\":2,\"on\":null}"
    );
    assert_eq!(row_hash(&t.row_json(0)), row_hash(&t.row_json(0)));
    assert_ne!(row_hash(&t.row_json(0)), row_hash(&t.row_json(1)));
    assert_eq!(row_hash("").len(), 64);
}

#[test]
fn nearest_column_goes_by_edit_distance_over_the_whole_name() {
    let col = |name: &str| Column {
        name: name.into(),
        kind: Kind::Int,
        cells: vec![],
    };
    let t = Table {
        columns: vec![
            col("workloads.dd.io_seconds"),
            col("workloads.dd.minor_faults"),
        ],
    };
    assert_eq!(
        t.nearest_column("workloads.dd.io_secs"),
        Some("workloads.dd.io_seconds")
    );
    assert_eq!(
        t.nearest_column("workloads.dd.io_duration"),
        Some("workloads.dd.io_seconds")
    );
    assert_eq!(t.nearest_column("zzz"), None);
    // Half the characters alike is close enough; a tie goes to the first column.
    let t = Table {
        columns: vec![col("abcd"), col("abce"), col("wxyz")],
    };
    assert_eq!(t.nearest_column("abxx"), Some("abcd"));
    assert_eq!(t.nearest_column("axxx"), None);
}

#[test]
fn parquet_reads_back_with_types_and_nulls() {
    use ::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};
    use arrow_array::Array;
    let path = dir("parquet").join("t.parquet");
    super::parquet::write(&two_row_table(), std::fs::File::create(&path).unwrap()).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<_> = reader.map(Result::unwrap).collect();
    assert_eq!(batches.len(), 1);
    let b = &batches[0];
    assert_eq!(b.num_rows(), 2);
    let names: Vec<String> = b
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["point", "error", "x", "on"]);
    let point = b.column(0).as_primitive::<Int64Type>();
    assert_eq!((point.value(0), point.value(1)), (0, 1));
    let error = b.column(1).as_string::<i32>();
    assert!(error.is_null(0));
    assert_eq!(error.value(1), "a \"bad\", point");
    let x = b.column(2).as_primitive::<Float64Type>();
    assert_eq!((x.value(0), x.value(1)), (0.5, 2.0));
    let on = b.column(3).as_boolean();
    assert!(on.value(0) && on.is_null(1));
}

#[test]
fn the_store_keeps_a_record_whole_and_rejects_anything_else() {
    let d = dir("store");
    let store = store::Store::open(&d.join("points")).unwrap();
    let r = Record {
        error: None,
        columns: vec![
            ("a".into(), Cell::Int(3)),
            ("b".into(), Cell::Float(3.0)),
            ("c".into(), Cell::Str("x".into())),
            ("d".into(), Cell::Null),
            ("e".into(), Cell::Bool(false)),
        ],
    };
    assert_eq!(store.get("k"), None);
    store.put("k", &r).unwrap();
    assert_eq!(store.get("k"), Some(r));
    let failed = Record {
        error: Some("no".into()),
        columns: vec![],
    };
    store.put("k", &failed).unwrap();
    assert_eq!(store.get("k"), Some(failed));
    // Only the finished file is left.
    let files: Vec<_> = std::fs::read_dir(&store.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, ["k.json"]);
    // Every float reads back as the float written (a resumed table equals a fresh one).
    let floats: Vec<(String, Cell)> = (1..2000u64)
        .map(|i| {
            let bits = 0x3fb9_99a0_0000_0000 ^ (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 12);
            (i.to_string(), Cell::Float(f64::from_bits(bits) * i as f64))
        })
        .collect();
    let r = Record {
        error: None,
        columns: floats,
    };
    assert_eq!(store::decode(&store::encode(&r)), Some(r));
    for garbage in [
        "",
        "{",
        "{\"error\": 1, \"columns\": []}",
        "{\"error\": null}",
        "[1]",
    ] {
        assert_eq!(store::decode(garbage), None, "{garbage}");
    }
}
