//! `mmsim sweep`: the table, resuming, and bad sweeps.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn mmsim(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A scratch directory holding `tiny.toml`, a machine that runs in milliseconds.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mmsim-sweep-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("tiny.toml"),
        "[machine]\nram = \"128M\"\ncpus = 1\n[swap]\nsize = \"64M\"\n[slab]\nfiles = 1000\n\
         [run]\nduration = \"1s\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"120M\"\n",
    )
    .unwrap();
    dir
}

fn finished(points: &Path) -> Vec<(String, std::time::SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(points)
        .map(|d| {
            d.map(|e| e.unwrap())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        e.metadata().unwrap().modified().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The count in "N finished earlier".
fn finished_earlier(stderr: &str) -> usize {
    let line = stderr
        .lines()
        .find(|l| l.contains("finished earlier"))
        .unwrap_or_else(|| panic!("no summary line in {stderr}"));
    let before = line.split(" finished earlier").next().unwrap();
    before.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn a_sweep_writes_one_row_per_point_and_resumes_without_running_again() {
    let dir = scratch("table");
    std::fs::write(
        dir.join("s.toml"),
        "[sweep]\nscenario = \"tiny.toml\"\nkernels = [\"3.9\", \"mmotm-2013-07-18\"]\n\
         show = [\"vmstat.pswpout\", \"workloads.mem_eater.minor_fault\"]\n\
         [axes]\nvm.swappiness = [10, 60]\n",
    )
    .unwrap();
    let (code, out, err) = mmsim(&dir, &["sweep", "s.toml", "--out", "t.csv"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("4 points, 0 finished earlier"), "{err}");
    assert!(
        err.contains("no column 'workloads.mem_eater.minor_fault' (did you mean 'workloads.mem_eater.minor_faults'?)"),
        "{err}"
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "point  kernel            seed  vm.swappiness  vmstat.pswpout  \
         workloads.mem_eater.minor_fault  error"
    );
    assert!(
        lines[4].starts_with("3      mmotm-2013-07-18  1     60"),
        "{out}"
    );
    assert!(out.contains("wrote t.csv (4 rows, "), "{out}");
    let csv = std::fs::read_to_string(dir.join("t.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5);
    assert!(
        csv.starts_with("point,key,kernel,seed,vm.swappiness,error,simulated_seconds,"),
        "{csv}"
    );
    let points = dir.join("t.points");
    let before = finished(&points);
    assert_eq!(before.len(), 4);

    // Again: nothing runs, the table is the same.
    let (code, _, err) = mmsim(&dir, &["sweep", "s.toml", "--out", "t.csv"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("4 finished earlier (t.points), 0 to run"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(dir.join("t.csv")).unwrap(), csv);
    assert_eq!(finished(&points), before);

    // One point lost: only it runs, to the same row.
    std::fs::remove_file(points.join(&before[2].0)).unwrap();
    let (_, _, err) = mmsim(&dir, &["sweep", "s.toml", "--out", "t.csv"]);
    assert!(
        err.contains("3 finished earlier (t.points), 1 to run"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(dir.join("t.csv")).unwrap(), csv);

    // Parquet from the same points, named by the default: the sweep's stem.
    let (code, _, err) = mmsim(&dir, &["sweep", "s.toml", "--points-dir", "t.points"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("4 finished earlier"), "{err}");
    let pq = std::fs::read(dir.join("s.parquet")).unwrap();
    assert_eq!(
        (&pq[..4], &pq[pq.len() - 4..]),
        (&b"PAR1"[..], &b"PAR1"[..])
    );

    // --list runs nothing and says what is done.
    let (code, out, _) = mmsim(&dir, &["sweep", "s.toml", "--out", "t.csv", "--list"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 5);
    assert!(out.lines().skip(1).all(|l| l.ends_with("yes")), "{out}");
}

#[test]
fn a_sweep_of_1000_points_killed_halfway_reruns_none_of_the_finished_ones() {
    let dir = scratch("kill");
    std::fs::write(
        dir.join("s.toml"),
        "[sweep]\nscenario = \"tiny.toml\"\nseeds = \"1..1000\"\n",
    )
    .unwrap();
    let points = dir.join("s.points");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(["sweep", "s.toml", "--out", "s.csv", "--jobs", "1"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while finished(&points).len() < 300 {
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = finished(&points);
    assert!(
        before.len() >= 300 && before.len() < 1000,
        "{}",
        before.len()
    );

    let (code, out, err) = mmsim(&dir, &["sweep", "s.toml", "--out", "s.csv"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(finished_earlier(&err), before.len(), "{err}");
    assert!(
        err.contains(&format!("{} to run", 1000 - before.len())),
        "{err}"
    );
    // Every point finished before the kill is untouched.
    let after = finished(&points);
    assert_eq!(after.len(), 1000);
    for f in &before {
        assert!(after.contains(f), "{} was written again", f.0);
    }
    assert!(out.contains("wrote s.csv (1000 rows, "), "{out}");
    let csv = std::fs::read_to_string(dir.join("s.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1001);
}

#[test]
fn a_bad_sweep_exits_2_naming_file_line_key_and_suggestion() {
    let dir = scratch("bad");
    std::fs::write(
        dir.join("s.toml"),
        "[sweep]\nscenario = \"tiny.toml\"\n[axes]\nvm.swapiness = [0, 60]\n",
    )
    .unwrap();
    let (code, _, err) = mmsim(&dir, &["sweep", "s.toml"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("mmsim: s.toml:4:4: key 'axes.vm.swapiness': unknown key 'swapiness'"),
        "{err}"
    );
    assert!(
        err.trim_end().ends_with("(did you mean 'swappiness'?)"),
        "{err}"
    );
    // Nothing was written.
    assert!(!dir.join("s.parquet").exists());
    assert!(!dir.join("s.points").exists());
}

#[test]
fn the_example_sweep_lists_its_eight_points() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let out_dir = scratch("example");
    let out = out_dir.join("x.parquet");
    let (code, out, err) = mmsim(
        root,
        &[
            "sweep",
            "examples/sweeps/swappiness.toml",
            "--list",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 9, "{out}");
    assert!(lines[0].starts_with("point  kernel             seed  vm.swappiness  key"));
    assert!(
        lines[8].starts_with("7      lessdisrupt-v7r10  1     100"),
        "{out}"
    );
}
