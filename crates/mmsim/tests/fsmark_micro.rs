//! Whole runs of `type = "fsmark"` and `type = "micro"` on a shrunk version of seed 002's
//! machine: every iteration and test reports, fs_mark keeps its files, the sparse files of
//! the micro tests read nothing from disk until written, the runs are deterministic and
//! the page-state invariants hold throughout.

use mmsim::presets;
use mmsim::report::RunResult;
use mmsim::scenario::load_str;
use mmsim::sim::{self, RunOptions};

const MACHINE: &str = "[machine]\nram = \"128M\"\ncpus = 2\n\n\
    [[device]]\nname = \"md0\"\ntype = \"raid0\"\nmembers = 4\nfilesystem = \"xfs\"\n\n\
    [[device]]\nname = \"sde\"\ntype = \"hdd\"\nfilesystem = \"raw\"\n\n\
    [swap]\nsize = \"256M\"\ndevice = \"sde\"\n\n[vm]\ndirty_ratio = 40\n\n\
    [run]\nend = \"workloads\"\nduration = \"3600s\"\n\n";

fn run(workload: &str, preset: &str) -> RunResult {
    let text = format!("{MACHINE}[[workload]]\n{workload}");
    let s = load_str(&text, "t.toml", "t").expect("the scenario parses");
    let k = presets::resolve(preset, &[]).unwrap();
    let opts = RunOptions {
        check_every_batch: true,
        check_interval: 5_000_000_000,
    };
    sim::run(&s, &k, 1, opts).expect("the run ends cleanly")
}

fn metric(r: &RunResult, name: &str) -> f64 {
    r.metric(&r.workloads[0].0, name)
        .unwrap_or_else(|| panic!("{name} reported: {:?}", r.workloads[0].1))
}

const FSMARK: &str = "type = \"fsmark\"\ndevice = \"md0\"\nthreads_per_cpu = 2\nfiles = 24\n\
    file_size = \"4M\"\niterations = 4\n";

#[test]
fn fsmark_runs_every_iteration_and_keeps_its_files() {
    let r = run(FSMARK, "3.0");
    let rates: Vec<f64> = (1..=4)
        .map(|i| metric(&r, &format!("files_per_sec-{i}")))
        .collect();
    assert!(rates.iter().all(|&x| x > 0.0), "{rates:?}");
    assert!(r.metric("fsmark", "files_per_sec-5").is_none());
    let mean = rates.iter().sum::<f64>() / 4.0;
    assert!((metric(&r, "files_per_sec_mean") - mean).abs() < 1e-9);
    assert_eq!(
        metric(&r, "files_per_sec_max"),
        rates.iter().copied().fold(0.0, f64::max)
    );
    assert!((metric(&r, "elapsed") - r.simulated_seconds).abs() < 1e-9);
    // 4 iterations of 24 files of 4 MiB on a 128M machine: 384 MiB kept. Nothing was
    // removed, so every file page was either submitted for writing (pgpgout counts at
    // submission: pages still under writeback are in it) or is still dirty, and no page
    // cache was dropped by truncation.
    let vm = |name: &str| r.vmstat.iter().find(|(n, _)| n == name).unwrap().1;
    let written_kib = vm("pgpgout");
    let dirty_kib = 4 * vm("nr_dirty");
    assert_eq!(
        written_kib + dirty_kib,
        384 << 10,
        "{written_kib} KiB written, {dirty_kib} KiB dirty"
    );
}

#[test]
fn fsmark_threads_share_the_files_of_an_iteration() {
    // 24 files over 4 threads and over 1: both create 24 an iteration, so both write the
    // same data, submitted or still dirty at the end; a thread's rate is its files over
    // its own time.
    let four = run(FSMARK, "3.0");
    let one = run(&FSMARK.replace("threads_per_cpu = 2", "threads = 1"), "3.0");
    let vm = |r: &RunResult, name: &str| r.vmstat.iter().find(|(n, _)| n == name).unwrap().1;
    let total = |r: &RunResult| vm(r, "pgpgout") + 4 * vm(r, "nr_dirty");
    assert_eq!(total(&four), total(&one));
    assert_ne!(four.workloads, one.workloads);
}

#[test]
fn fsmark_and_micro_runs_are_functions_of_their_inputs() {
    assert_eq!(run(FSMARK, "nowriteback-v3"), run(FSMARK, "nowriteback-v3"));
    assert_eq!(run(MIXED, "3.0"), run(MIXED, "3.0"));
}

const FILE_ONLY: &str =
    "type = \"micro\"\ndevice = \"md0\"\ntests = [\"vmscan-file-mmap-write\"]\n";
const MIXED: &str = "type = \"micro\"\ndevice = \"md0\"\nmixed_size = \"256M\"\nmixed_iter = 2\n";

#[test]
fn writes_to_a_sparse_mapping_read_nothing_and_the_files_go() {
    let r = run(FILE_ONLY, "3.0");
    let vm = |name: &str| r.vmstat.iter().find(|(n, _)| n == name).unwrap().1;
    // 10 x MemTotal written once through the mappings: every page a hole when faulted.
    assert_eq!(vm("pgpgin"), 0, "a hole reads as zeroes");
    assert!(vm("pgmajfault") > 0);
    assert!(vm("pgpgout") > 0, "the dirtied pages are written back");
    assert!(metric(&r, "elapsed-vmscan-file-mmap-write") > 0.0);
    // rm sparse-*: what is left cached is far below what was written.
    assert!(
        vm("nr_file_pages") < (32 << 20) / 4096,
        "{}",
        vm("nr_file_pages")
    );
    assert_eq!(vm("nr_dirty") + vm("nr_writeback"), 0);
}

#[test]
fn the_mixed_test_swaps_and_reports_each_test() {
    let r = run(MIXED, "3.0");
    let a = metric(&r, "elapsed-vmscan-file-mmap-write");
    let b = metric(&r, "elapsed-vmscan-mixed-mmap-write");
    assert!(a > 0.0 && b > 0.0);
    assert!((metric(&r, "elapsed") - (a + b)).abs() < 1e-9);
    let vm = |name: &str| r.vmstat.iter().find(|(n, _)| n == name).unwrap().1;
    // 30% of 256M anonymous beside 180M of file mappings on a 128M machine.
    assert!(vm("pswpout") > 0, "the anonymous writers are swapped");
    // The second pass over written file pages reads them back.
    assert!(vm("pgpgin") > 0);
}
