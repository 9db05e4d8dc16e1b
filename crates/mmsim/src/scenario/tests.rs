//! Tests of scenario loading: defaults, every validation error, a full round trip.

use super::super::{
    KernelSelection, Machine, MemEaterThen, MemcachetestParams, RunParams, Scenario, ScenarioError,
    SlabParams, Workload, WorkloadKind,
};
use super::{load_str, nearest};
use crate::mm::swapfile::SwapConfig;
use crate::mm::VmSysctls;

const K: u64 = 1024;
const M: u64 = 1024 * K;
const G: u64 = 1024 * M;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

#[allow(clippy::result_large_err)]
fn load(text: &str) -> Result<Scenario, ScenarioError> {
    load_str(text, "t.toml", "t")
}

fn ok(text: &str) -> Scenario {
    match load(text) {
        Ok(s) => s,
        Err(e) => panic!("expected the scenario to load, got: {e}"),
    }
}

fn err(text: &str) -> ScenarioError {
    match load(text) {
        Ok(s) => panic!("expected an error, got {s:?}"),
        Err(e) => e,
    }
}

/// Assert key path, line, and that the message contains `needle`.
#[track_caller]
fn assert_err(e: &ScenarioError, key: &str, line: usize, needle: &str) {
    assert_eq!(e.key, key, "key of: {e}");
    assert_eq!(e.line, Some(line), "line of: {e}");
    assert!(e.column.is_some(), "column of: {e}");
    assert!(
        e.message.contains(needle),
        "message of {e} should contain {needle:?}"
    );
    assert_eq!(e.file, "t.toml");
}

const MINIMAL: &str = "[machine]\nram = \"4G\"\n";

// ----------------------------------------------------------------------------------------
// Defaults.

#[test]
fn minimal_file_gets_every_default() {
    let s = ok(MINIMAL);
    assert_eq!(s.name, "t");
    assert_eq!(
        s.machine,
        Machine {
            ram: 4 * G,
            cpus: 4,
            devices: Vec::new(),
            swap: None,
            reclaim_costs: Default::default(),
            pci_hole: 0,
        }
    );
    assert_eq!(s.vm, VmSysctls::default());
    assert_eq!(s.vm.swappiness, 60);
    assert_eq!(s.vm.page_cluster, 3);
    assert_eq!(s.vm.lowmem_reserve_ratio, [256, 256, 32]);
    assert_eq!(s.vm.min_free_kbytes, None);
    assert!(!s.vm.laptop_mode);
    assert_eq!(
        s.run,
        RunParams {
            duration: 60 * S,
            seed: 1,
            end_when_done: false,
        }
    );
    assert_eq!(s.kernel, KernelSelection::default());
    assert_eq!(
        s.slab,
        SlabParams {
            files: 50_000,
            inode_size: 1024,
            page_cache: 0,
            page_cache_active: 0,
        }
    );
    assert!(s.workloads.is_empty());
}

#[test]
fn swap_defaults_latency_and_bandwidth() {
    let s = ok("[machine]\nram = \"1G\"\n[swap]\nsize = \"2G\"\n");
    assert_eq!(
        s.machine.swap,
        Some(SwapConfig {
            size: 2 * G,
            read_latency: 5 * MS,
            write_latency: 5 * MS,
            bandwidth: 100 * M,
            device: None,
            placement: Default::default(),
        })
    );
}

#[test]
fn memcachetest_defaults_to_80_percent_pool_and_mmtests_settings() {
    let s = ok("[machine]\nram = \"1G\"\n[[workload]]\ntype = \"memcachetest\"\n");
    assert_eq!(s.workloads.len(), 1);
    let w = &s.workloads[0];
    assert_eq!(w.name, "memcachetest");
    assert_eq!(w.start, 0);
    let WorkloadKind::Memcachetest(MemcachetestParams {
        pool,
        value_size,
        set_percent,
        threads,
        duration,
        populate,
    }) = w.kind
    else {
        panic!("expected memcachetest, got {w:?}");
    };
    assert_eq!(pool % 4096, 0);
    assert_eq!(pool, (G / 5 * 4) / 4096 * 4096);
    assert_eq!(value_size, 16 * K);
    assert_eq!(set_percent, 33);
    assert_eq!(threads, 1);
    assert_eq!(
        duration, None,
        "memcachetest runs to the end of the run by default"
    );
    assert!(
        populate,
        "memcachetest populates its data set first by default"
    );
}

#[test]
fn mem_eater_defaults_chunk_pause_and_hold() {
    let s = ok("[machine]\nram = \"1G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"512M\"\n");
    assert_eq!(
        s.workloads[0].kind,
        WorkloadKind::MemEater {
            size: 512 * M,
            chunk: 64 * M,
            pause: 0,
            then: MemEaterThen::Hold
        }
    );
}

#[test]
fn mem_eater_default_chunk_is_capped_at_its_size() {
    let s = ok("[machine]\nram = \"1G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"16M\"\n");
    let WorkloadKind::MemEater { chunk, .. } = s.workloads[0].kind else {
        panic!("not a mem_eater");
    };
    assert_eq!(chunk, 16 * M);
}

#[test]
fn retouch_gets_a_default_interval_of_10s() {
    let s = ok(
        "[machine]\nram = \"1G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"16M\"\nthen = \"retouch\"\n",
    );
    let WorkloadKind::MemEater { then, .. } = &s.workloads[0].kind else {
        panic!("not a mem_eater");
    };
    assert_eq!(*then, MemEaterThen::Retouch { interval: 10 * S });
}

#[test]
fn repeated_types_get_numbered_default_names() {
    let s = ok(r#"
[machine]
ram = "4G"
[[workload]]
type = "mem_eater"
size = "64M"
[[workload]]
type = "memcachetest"
pool = "64M"
[[workload]]
type = "mem_eater"
size = "64M"
[[workload]]
type = "mem_eater"
size = "64M"
"#);
    let names: Vec<&str> = s.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(
        names,
        ["mem_eater", "memcachetest", "mem_eater-2", "mem_eater-3"]
    );
}

#[test]
fn default_names_skip_names_taken_explicitly() {
    let s = ok(r#"
[machine]
ram = "4G"
[[workload]]
type = "mem_eater"
size = "64M"
[[workload]]
type = "mem_eater"
name = "mem_eater-2"
size = "64M"
[[workload]]
type = "mem_eater"
size = "64M"
"#);
    let names: Vec<&str> = s.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["mem_eater", "mem_eater-2", "mem_eater-3"]);
}

#[test]
fn empty_workload_list_is_allowed() {
    let s = ok("workload = []\n[machine]\nram = \"64M\"\n");
    assert!(s.workloads.is_empty());
}

#[test]
fn sizes_may_be_integers_and_percentages_of_ram() {
    let s = ok(r#"
[machine]
ram = 1073741824
[slab]
inode_size = "512"
[[workload]]
type = "mem_eater"
size = "25%"
chunk = 4096
[[workload]]
type = "memcachetest"
pool = "12.5%"
value_size = 100
"#);
    assert_eq!(s.machine.ram, G);
    assert_eq!(s.slab.inode_size, 512);
    let WorkloadKind::MemEater { size, chunk, .. } = s.workloads[0].kind else {
        panic!("not a mem_eater");
    };
    assert_eq!((size, chunk), (256 * M, 4096));
    let WorkloadKind::Memcachetest(MemcachetestParams {
        pool, value_size, ..
    }) = s.workloads[1].kind
    else {
        panic!("not memcachetest");
    };
    assert_eq!((pool, value_size), (128 * M, 100));
}

#[test]
fn percentage_rounds_down_to_whole_pages() {
    // 33% of 64M = 22145925.12 bytes -> 5406 pages.
    let s = ok("[machine]\nram = \"64M\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"33%\"\n");
    let WorkloadKind::MemEater { size, .. } = s.workloads[0].kind else {
        panic!("not a mem_eater");
    };
    assert_eq!(size, 5406 * 4096);
}

#[test]
fn kernel_switches_keep_file_order() {
    let s = ok(r#"
[machine]
ram = "4G"
[kernel]
preset = "3.9"
[kernel.switches]
zeta = true
alpha = false
mid = true
"#);
    assert_eq!(s.kernel.preset.as_deref(), Some("3.9"));
    assert_eq!(
        s.kernel.switches,
        vec![
            ("zeta".to_string(), true),
            ("alpha".to_string(), false),
            ("mid".to_string(), true)
        ]
    );
}

#[test]
fn kernel_switches_without_a_kernel_header_load() {
    // [kernel] is then an implicit table without a span of its own.
    let s = ok("[machine]\nram = \"4G\"\n[kernel.switches]\nb = true\na = false\n");
    assert_eq!(s.kernel.preset, None);
    assert_eq!(
        s.kernel.switches,
        vec![("b".to_string(), true), ("a".to_string(), false)]
    );
}

#[test]
fn dotted_keys_and_inline_tables_are_equivalent_to_headers() {
    let a = ok("machine.ram = \"1G\"\nmachine.cpus = 2\nvm = { swappiness = 10 }\n");
    let b = ok("[machine]\nram = \"1G\"\ncpus = 2\n[vm]\nswappiness = 10\n");
    assert_eq!(a, b);
}

#[test]
fn laptop_mode_nonzero_is_true() {
    let s = ok("[machine]\nram = \"1G\"\n[vm]\nlaptop_mode = 5\n");
    assert!(s.vm.laptop_mode);
}

// ----------------------------------------------------------------------------------------
// Full example round trip.

const FULL: &str = r#"# Everything, with non-default values.
[machine]
ram = "4G"
cpus = 8

[swap]
size = "8G"
read_latency = "7ms"
write_latency = "250us"
bandwidth = "200M"

[vm]
min_free_kbytes = 67584
swappiness = 100
lowmem_reserve_ratio = [128, 64, 16]
page-cluster = 0
vfs_cache_pressure = 50
laptop_mode = 1
extfrag_threshold = 700

[run]
duration = "200s"
seed = 42

[kernel]
preset = "3.9"
[kernel.switches]
kswapd_balance_fix = false
lumpy = true

[slab]
files = 5000
inode_size = "2K"

[[workload]]
type = "memcachetest"
name = "mc"
start = "1.5s"
pool = "80%"
value_size = "4K"
set_percent = 50
threads = 4

[[workload]]
type = "mem_eater"
start = "30s"
size = "6G"
chunk = "128M"
pause = "100ms"
then = "retouch"
retouch_interval = "2m"
"#;

#[test]
fn full_example_round_trips_every_value() {
    let s = load_str(FULL, "full.toml", "full").expect("FULL loads");
    let expected = Scenario {
        name: "full".into(),
        machine: Machine {
            reclaim_costs: Default::default(),
            pci_hole: 0,
            ram: 4 * G,
            cpus: 8,
            devices: Vec::new(),
            swap: Some(SwapConfig {
                size: 8 * G,
                read_latency: 7 * MS,
                write_latency: 250_000,
                bandwidth: 200 * M,
                device: None,
                placement: Default::default(),
            }),
        },
        vm: VmSysctls {
            min_free_kbytes: Some(67584),
            swappiness: 100,
            lowmem_reserve_ratio: [128, 64, 16],
            page_cluster: 0,
            vfs_cache_pressure: 50,
            laptop_mode: true,
            dirty: Default::default(),
            extfrag_threshold: 700,
        },
        transparent_hugepage: Default::default(),
        run: RunParams {
            duration: 200 * S,
            seed: 42,
            end_when_done: false,
        },
        kernel: KernelSelection {
            preset: Some("3.9".into()),
            switches: vec![("kswapd_balance_fix".into(), false), ("lumpy".into(), true)],
        },
        slab: SlabParams {
            files: 5000,
            inode_size: 2048,
            page_cache: 0,
            page_cache_active: 0,
        },
        workloads: vec![
            Workload {
                name: "mc".into(),
                start: 1_500 * MS,
                cgroup: None,
                cpus: Vec::new(),
                background: false,
                kind: WorkloadKind::Memcachetest(MemcachetestParams {
                    pool: (4 * G / 5 * 4) / 4096 * 4096,
                    value_size: 4 * K,
                    set_percent: 50,
                    threads: 4,
                    duration: None,
                    populate: true,
                }),
            },
            Workload {
                name: "mem_eater".into(),
                start: 30 * S,
                cgroup: None,
                cpus: Vec::new(),
                background: false,
                kind: WorkloadKind::MemEater {
                    size: 6 * G,
                    chunk: 128 * M,
                    pause: 100 * MS,
                    then: MemEaterThen::Retouch { interval: 120 * S },
                },
            },
        ],
        cgroups: Vec::new(),
    };
    assert_eq!(s, expected);
}

#[test]
fn loading_from_a_path_uses_the_file_stem_as_name() {
    let dir = std::env::temp_dir().join(format!("mmsim-scenario-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("my-run.toml");
    std::fs::write(&path, FULL).expect("write");
    let s = super::load(&path).expect("loads");
    assert_eq!(s.name, "my-run");
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir(&dir);
}

#[test]
fn unreadable_path_is_an_error_naming_the_file() {
    let e = super::load(std::path::Path::new("/nonexistent/dir/x.toml")).unwrap_err();
    assert_eq!(e.file, "/nonexistent/dir/x.toml");
    assert!(e.message.contains("cannot read"));
    assert_eq!(e.line, None);
}

// ----------------------------------------------------------------------------------------
// Syntax errors.

#[test]
fn toml_syntax_error_has_line_and_column() {
    let e = err("[machine]\nram = \"4G\"\ncpus = = 4\n");
    assert_eq!(e.key, "");
    assert_eq!(e.line, Some(3));
    assert!(e.column.is_some());
    assert!(e.message.starts_with("invalid TOML"), "{e}");
    assert!(!e.message.contains('\n'), "one line: {e:?}");
}

#[test]
fn duplicate_key_is_a_syntax_error() {
    let e = err("[machine]\nram = \"4G\"\nram = \"8G\"\n");
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.message.contains("invalid TOML"), "{e}");
}

#[test]
fn unterminated_string_is_a_syntax_error() {
    let e = err("[machine]\nram = \"4G\n");
    assert_eq!(e.line, Some(2), "{e}");
}

#[test]
fn display_has_file_line_column_key_and_suggestion() {
    let e = err("[machine]\nram = \"4G\"\n[vm]\nswapines = 10\n");
    assert_eq!(
        e.to_string(),
        "t.toml:4:1: key 'vm.swapines': unknown key 'swapines' in [vm]; expected one of: \
         min_free_kbytes, swappiness, lowmem_reserve_ratio, page-cluster, vfs_cache_pressure, \
         laptop_mode, dirty_ratio, dirty_background_ratio, dirty_bytes, dirty_background_bytes, \
         dirty_expire_centisecs, dirty_writeback_centisecs, extfrag_threshold (did you mean \
         'swappiness'?)"
    );
}

#[test]
fn column_counts_characters_not_bytes() {
    // "é" is two bytes; the value starts at character 12 of line 2.
    let e = err("[machine]\n\"é\" = 1   \nram = \"4G\"\n");
    assert_eq!(e.line, Some(2));
    assert_eq!(e.column, Some(1));
    let e = err("[machine]\nram = \"4G\" # é\ncpus = \"é\"\n");
    assert_eq!((e.line, e.column), (Some(3), Some(8)), "{e}");
}

// ----------------------------------------------------------------------------------------
// Unknown tables and keys.

#[test]
fn misspelt_table_suggests_the_nearest() {
    let e = err("[machin]\nram = \"4G\"\n");
    assert_err(&e, "machin", 1, "unknown key 'machin'");
    assert_eq!(e.suggestion.as_deref(), Some("machine"));
}

#[test]
fn misspelt_sysctl_suggests_swappiness() {
    let e = err("[machine]\nram = \"4G\"\n\n[vm]\nswapines = 10\n");
    assert_err(&e, "vm.swapines", 5, "unknown key");
    assert_eq!(e.suggestion.as_deref(), Some("swappiness"));
}

#[test]
fn underscore_page_cluster_suggests_the_hyphen() {
    let e = err("[machine]\nram = \"4G\"\n[vm]\npage_cluster = 3\n");
    assert_err(&e, "vm.page_cluster", 4, "unknown key");
    assert_eq!(e.suggestion.as_deref(), Some("page-cluster"));
}

#[test]
fn unknown_key_far_from_everything_has_no_suggestion() {
    let e = err("[machine]\nram = \"4G\"\nxyzzy = 1\n");
    assert_err(&e, "machine.xyzzy", 3, "unknown key 'xyzzy' in [machine]");
    assert_eq!(e.suggestion, None);
}

#[test]
fn unknown_keys_in_each_section_are_caught() {
    let cases = [
        (
            "[swap]\nsize = \"1G\"\nbandwith = \"1M\"\n",
            "swap.bandwith",
            "bandwidth",
        ),
        ("[run]\nduratoin = \"1s\"\n", "run.duratoin", "duration"),
        (
            "[kernel]\npreset = \"3.9\"\nswitchs = {}\n",
            "kernel.switchs",
            "switches",
        ),
        ("[slab]\nfile = 4\n", "slab.file", "files"),
        ("[machine.x]\n", "machine.x", ""),
    ];
    for (tail, key, sugg) in cases {
        let text = format!("[machine]\nram = \"4G\"\n{tail}");
        let e = err(&text);
        assert_eq!(e.key, key, "{e}");
        assert!(e.line.is_some(), "{e}");
        if sugg.is_empty() {
            assert_eq!(e.suggestion, None, "{e}");
        } else {
            assert_eq!(e.suggestion.as_deref(), Some(sugg), "{e}");
        }
    }
}

#[test]
fn unknown_top_level_key_suggests_workload() {
    let e = err("[machine]\nram = \"4G\"\n[[workloads]]\ntype = \"mem_eater\"\n");
    assert_err(&e, "workloads", 3, "unknown key");
    assert_eq!(e.suggestion.as_deref(), Some("workload"));
}

#[test]
fn unknown_workload_type_suggests_nearest_type() {
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"memcache\"\n");
    assert_err(
        &e,
        "workload[0].type",
        4,
        "unknown workload type \"memcache\"",
    );
    assert_eq!(e.suggestion.as_deref(), Some("memcachetest"));
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"memeater\"\nsize = \"1M\"\n");
    assert_eq!(e.suggestion.as_deref(), Some("mem_eater"));
}

#[test]
fn unknown_workload_key_suggests_nearest_key_of_that_type() {
    let e = err(
        "[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"1G\"\nchunks = \"1M\"\n",
    );
    assert_err(
        &e,
        "workload[0].chunks",
        6,
        "unknown key 'chunks' in a mem_eater workload",
    );
    assert_eq!(e.suggestion.as_deref(), Some("chunk"));
}

#[test]
fn key_of_the_other_workload_type_is_explained() {
    let e = err(
        "[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"1G\"\npool = \"1G\"\n",
    );
    assert_err(
        &e,
        "workload[0].pool",
        6,
        "belongs to memcachetest workloads",
    );
}

#[test]
fn misspelt_then_value_suggests_retouch() {
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"1G\"\nthen = \"retuch\"\n");
    assert_err(
        &e,
        "workload[0].then",
        6,
        "expected \"hold\" or \"retouch\"",
    );
    assert_eq!(e.suggestion.as_deref(), Some("retouch"));
}

#[test]
fn nearest_only_suggests_close_words() {
    assert_eq!(
        nearest("swapines", &["swappiness", "seed"]),
        Some("swappiness")
    );
    assert_eq!(nearest("RAM", &["ram", "cpus"]), Some("ram"));
    assert_eq!(nearest("qqqq", &["ram", "cpus"]), None);
    assert_eq!(nearest("x", &["machine", "swap"]), None);
}

// ----------------------------------------------------------------------------------------
// Missing required keys.

#[test]
fn missing_machine_table_is_an_error() {
    let e = err("[run]\nseed = 3\n");
    assert_eq!(e.key, "machine");
    assert!(
        e.message.contains("missing required table [machine]"),
        "{e}"
    );
}

#[test]
fn empty_file_is_missing_machine() {
    let e = err("");
    assert_eq!(e.key, "machine");
}

#[test]
fn missing_ram_points_at_the_machine_header() {
    let e = err("# comment\n[machine]\ncpus = 2\n");
    assert_err(
        &e,
        "machine.ram",
        2,
        "missing required key 'ram' in [machine]",
    );
}

#[test]
fn missing_swap_size_points_at_the_swap_header() {
    let e = err("[machine]\nram = \"4G\"\n\n[swap]\nbandwidth = \"10M\"\n");
    assert_err(&e, "swap.size", 4, "missing required key 'size' in [swap]");
}

#[test]
fn missing_workload_type_points_at_that_workload() {
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"1M\"\n[[workload]]\nname = \"x\"\n");
    assert_err(
        &e,
        "workload[1].type",
        6,
        "missing required key 'type' in workload[1]",
    );
}

#[test]
fn missing_mem_eater_size_is_an_error() {
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nchunk = \"1M\"\n");
    assert_err(&e, "workload[0].size", 3, "missing required key 'size'");
}

// ----------------------------------------------------------------------------------------
// Wrong types and bad values.

#[test]
fn string_where_integer_expected_names_both() {
    let e = err("[machine]\nram = \"4G\"\ncpus = \"four\"\n");
    assert_err(&e, "machine.cpus", 3, "expected a CPU count");
    assert!(e.message.contains("found the string \"four\""), "{e}");
}

#[test]
fn zero_cpus_is_rejected() {
    let e = err("[machine]\nram = \"4G\"\ncpus = 0\n");
    assert_err(&e, "machine.cpus", 3, "out of range");
}

#[test]
fn pci_hole_is_a_size_that_leaves_dma_below_it() {
    let s = ok("[machine]\nram = \"8G\"\npci_hole = \"1G\"\n");
    assert_eq!(s.machine.pci_hole, 1 << 30);
    assert_eq!(ok("[machine]\nram = \"8G\"\n").machine.pci_hole, 0);
    let e = err("[machine]\nram = \"8G\"\npci_hole = \"4G\"\n");
    assert_err(&e, "machine.pci_hole", 3, "at most 4080M");
    let e = err("[machine]\nram = \"8G\"\npci_hole = \"4095M\"\n");
    assert_err(&e, "machine.pci_hole", 3, "at most 4080M");
}

#[test]
fn reclaim_costs_default_to_the_calibration_and_each_can_be_set() {
    use crate::calibration::ReclaimCosts;
    assert_eq!(ok(MINIMAL).machine.reclaim_costs, ReclaimCosts::default());
    let s = ok(
        "[machine]\nram = \"4G\"\n[machine.reclaim_costs]\nrmap_walk = \"1400ns\"\n\
                isolate_page = \"1us\"\n",
    );
    let want = ReclaimCosts {
        rmap_walk: 1400,
        isolate_page: 1000,
        ..ReclaimCosts::default()
    };
    assert_eq!(s.machine.reclaim_costs, want);
    let s = ok(
        "[machine]\nram = \"4G\"\nreclaim_costs = { shrink_page = \"600ns\", \
                deactivate_page = \"800ns\" }\n",
    );
    assert_eq!(s.machine.reclaim_costs.shrink_page, 600);
    assert_eq!(s.machine.reclaim_costs.deactivate_page, 800);
    let s = ok("[machine]\nram = \"4G\"\n[machine.reclaim_costs]\npageout = \"2us\"\n");
    let want = ReclaimCosts {
        pageout: 2000,
        ..ReclaimCosts::default()
    };
    assert_eq!(s.machine.reclaim_costs, want);
    let s = ok(
        "[machine]\nram = \"4G\"\n[machine.reclaim_costs]\nshrink_lruvec = \"2us\"\n\
                shrinker_call = \"50ns\"\n",
    );
    let want = ReclaimCosts {
        shrink_lruvec: 2000,
        shrinker_call: 50,
        ..ReclaimCosts::default()
    };
    assert_eq!(s.machine.reclaim_costs, want);
    let e = err("[machine]\nram = \"4G\"\n[machine.reclaim_costs]\nshrinker_call = \"0s\"\n");
    assert_err(&e, "machine.reclaim_costs.shrinker_call", 4, "per call");
    let e = err("[machine]\nram = \"4G\"\n[machine.reclaim_costs]\nrmap_walks = \"1us\"\n");
    assert_err(&e, "machine.reclaim_costs.rmap_walks", 4, "unknown key");
    assert_eq!(e.suggestion.as_deref(), Some("rmap_walk"));
    let e = err("[machine]\nram = \"4G\"\n[machine.reclaim_costs]\nrmap_walk = \"0ns\"\n");
    assert_err(&e, "machine.reclaim_costs.rmap_walk", 4, "");
    let e = err("[machine]\nram = \"4G\"\nreclaim_costs = 3\n");
    assert_err(&e, "machine.reclaim_costs", 3, "a table");
}

#[test]
fn negative_cpus_is_rejected_as_negative() {
    let e = err("[machine]\nram = \"4G\"\ncpus = -2\n");
    assert_err(&e, "machine.cpus", 3, "negative");
}

#[test]
fn unparsable_size_is_rejected() {
    let e = err("[machine]\nram = \"4Q\"\n");
    assert_err(&e, "machine.ram", 2, "unknown size suffix");
    assert_eq!(e.column, Some(7));
}

#[test]
fn negative_size_says_a_negative_size() {
    let e = err("[machine]\nram = -4096\n");
    assert_err(&e, "machine.ram", 2, "a negative size");
    let e = err("[machine]\nram = \"-4G\"\n");
    assert_err(&e, "machine.ram", 2, "a negative size");
}

#[test]
fn negative_bandwidth_says_a_negative_rate() {
    let e = err("[machine]\nram = \"4G\"\n[swap]\nsize = \"1G\"\nbandwidth = \"-5M\"\n");
    assert_err(&e, "swap.bandwidth", 5, "a negative rate");
    let e = err("[machine]\nram = \"4G\"\n[swap]\nsize = \"1G\"\nbandwidth = -5\n");
    assert_err(&e, "swap.bandwidth", 5, "a negative rate");
}

#[test]
fn zero_bandwidth_is_rejected() {
    let e = err("[machine]\nram = \"4G\"\n[swap]\nsize = \"1G\"\nbandwidth = 0\n");
    assert_err(&e, "swap.bandwidth", 5, "greater than 0");
}

#[test]
fn float_size_asks_for_a_string() {
    let e = err("[machine]\nram = 1.5\n");
    assert_err(&e, "machine.ram", 2, "found the float 1.5");
}

#[test]
fn boolean_size_is_a_type_error() {
    let e = err("[machine]\nram = true\n");
    assert_err(&e, "machine.ram", 2, "found the boolean true");
}

#[test]
fn section_that_is_not_a_table_is_a_type_error() {
    let e = err("machine = 5\n");
    assert_err(
        &e,
        "machine",
        1,
        "expected a table [machine], found the integer 5",
    );
}

#[test]
fn time_without_unit_says_times_need_a_unit() {
    let e = err("[machine]\nram = \"4G\"\n[run]\nduration = 200\n");
    assert_err(&e, "run.duration", 4, "times need a unit");
    let e = err("[machine]\nram = \"4G\"\n[run]\nduration = \"200\"\n");
    assert_err(&e, "run.duration", 4, "need a unit");
}

#[test]
fn negative_time_is_rejected() {
    let e = err("[machine]\nram = \"4G\"\n[swap]\nsize = \"1G\"\nread_latency = \"-1ms\"\n");
    assert_err(&e, "swap.read_latency", 5, "negative time");
}

#[test]
fn zero_duration_is_rejected() {
    let e = err("[machine]\nram = \"4G\"\n[run]\nduration = \"0s\"\n");
    assert_err(&e, "run.duration", 4, "greater than 0");
}

#[test]
fn negative_seed_is_rejected() {
    let e = err("[machine]\nram = \"4G\"\n[run]\nseed = -1\n");
    assert_err(&e, "run.seed", 4, "negative");
}

#[test]
fn ram_below_64m_is_too_small_for_zones() {
    let e = err("[machine]\nram = \"32M\"\n");
    assert_err(
        &e,
        "machine.ram",
        2,
        "RAM too small for the zones and watermarks: need at least 64M",
    );
}

#[test]
fn ram_above_4t_is_rejected() {
    let e = err("[machine]\nram = \"5T\"\n");
    assert_err(&e, "machine.ram", 2, "at most 4T");
}

#[test]
fn ram_not_page_multiple_is_rejected() {
    let e = err("[machine]\nram = 67112961\n");
    assert_err(&e, "machine.ram", 2, "whole number of 4096-byte pages");
}

#[test]
fn swap_not_page_multiple_is_rejected() {
    let e = err("[machine]\nram = \"4G\"\n[swap]\nsize = \"1.5K\"\n");
    assert_err(&e, "swap.size", 4, "whole number of 4096-byte pages");
}

#[test]
fn zero_swap_is_rejected() {
    let e = err("[machine]\nram = \"4G\"\n[swap]\nsize = 0\n");
    assert_err(&e, "swap.size", 4, "greater than 0");
}

#[test]
fn out_of_range_sysctls_are_rejected() {
    let cases = [
        ("swappiness = 101", "vm.swappiness", "from 0 to 100"),
        ("swappiness = -1", "vm.swappiness", "negative"),
        ("page-cluster = 11", "vm.page-cluster", "from 0 to 10"),
        (
            "extfrag_threshold = 1001",
            "vm.extfrag_threshold",
            "from 0 to 1000",
        ),
        (
            "vfs_cache_pressure = -5",
            "vm.vfs_cache_pressure",
            "negative",
        ),
        (
            "laptop_mode = true",
            "vm.laptop_mode",
            "found the boolean true",
        ),
        ("min_free_kbytes = -1", "vm.min_free_kbytes", "negative"),
        (
            "min_free_kbytes = 4194304",
            "vm.min_free_kbytes",
            "reserves all of RAM",
        ),
    ];
    for (line, key, needle) in cases {
        let e = err(&format!("[machine]\nram = \"4G\"\n[vm]\n{line}\n"));
        assert_err(&e, key, 4, needle);
    }
}

#[test]
fn lowmem_reserve_ratio_needs_exactly_three_positive_integers() {
    let e = err("[machine]\nram = \"4G\"\n[vm]\nlowmem_reserve_ratio = [1, 2]\n");
    assert_err(
        &e,
        "vm.lowmem_reserve_ratio",
        4,
        "found an array of 2 elements",
    );
    let e = err("[machine]\nram = \"4G\"\n[vm]\nlowmem_reserve_ratio = [1, 0, 2]\n");
    assert_err(&e, "vm.lowmem_reserve_ratio[1]", 4, "positive integer");
    assert_eq!(e.column, Some(28));
    let e = err("[machine]\nram = \"4G\"\n[vm]\nlowmem_reserve_ratio = [1, 2, \"x\"]\n");
    assert_err(
        &e,
        "vm.lowmem_reserve_ratio[2]",
        4,
        "found the string \"x\"",
    );
    let e = err("[machine]\nram = \"4G\"\n[vm]\nlowmem_reserve_ratio = 256\n");
    assert_err(&e, "vm.lowmem_reserve_ratio", 4, "found the integer 256");
}

#[test]
fn switch_value_must_be_boolean() {
    let e = err("[machine]\nram = \"4G\"\n[kernel.switches]\nfoo = 1\n");
    assert_err(&e, "kernel.switches.foo", 4, "expected true or false");
}

#[test]
fn preset_must_be_a_string() {
    let e = err("[machine]\nram = \"4G\"\n[kernel]\npreset = 3.9\n");
    assert_err(&e, "kernel.preset", 4, "found the float 3.9");
}

#[test]
fn slab_inode_size_is_limited_to_a_page() {
    let e = err("[machine]\nram = \"4G\"\n[slab]\ninode_size = \"8K\"\n");
    assert_err(&e, "slab.inode_size", 4, "from 1 to 4096");
    let e = err("[machine]\nram = \"4G\"\n[slab]\ninode_size = 0\n");
    assert_err(&e, "slab.inode_size", 4, "from 1 to 4096");
}

#[test]
fn slab_page_cache_is_a_size_or_share_of_ram_with_an_active_part() {
    let disk = "[[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext4\"\n";
    // (page_cache, page_cache_active) of a machine of `ram` with a disk and `keys` in [slab].
    let cache = |ram: &str, keys: &str| {
        let s = ok(&format!("[machine]\nram = \"{ram}\"\n{disk}[slab]\n{keys}"));
        (s.slab.page_cache, s.slab.page_cache_active)
    };
    let both = "page_cache = \"100M\"\npage_cache_active = \"25M\"\n";
    assert_eq!(cache("4G", both), (100 * M, 25 * M));
    assert_eq!(
        cache("4G", "page_cache = \"1%\"\n"),
        (4 * G / 100 / 4096 * 4096, 0)
    );
    assert_eq!(ok("[machine]\nram = \"4G\"\n").slab.page_cache, 0);
    // The bounds are inclusive: none without a disk, half of RAM, as many files as cached,
    // all of it active.
    let s = ok("[machine]\nram = \"4G\"\n[slab]\npage_cache = 0\n");
    assert_eq!(s.slab.page_cache, 0);
    let half = "page_cache = \"512M\"\npage_cache_active = \"512M\"\n";
    assert_eq!(cache("1G", half), (512 * M, 512 * M));
    assert_eq!(cache("4G", "files = 32\npage_cache = \"1M\"\n"), (M, 0));
}

#[test]
fn slab_page_cache_needs_a_disk_room_in_the_files_and_an_active_part_within_it() {
    let e = err("[machine]\nram = \"4G\"\n[slab]\npage_cache = \"100M\"\n");
    assert_err(
        &e,
        "slab.page_cache",
        4,
        "add a [[device]] with a filesystem",
    );
    let raw = "[[device]]\nname = \"sdb\"\ntype = \"hdd\"\nfilesystem = \"raw\"\n";
    let e = err(&format!(
        "[machine]\nram = \"4G\"\n{raw}[slab]\npage_cache = \"1M\"\n"
    ));
    assert_err(
        &e,
        "slab.page_cache",
        8,
        "add a [[device]] with a filesystem",
    );
    let disk = "[[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext4\"\n";
    let e = err(&format!(
        "[machine]\nram = \"4G\"\n{disk}[slab]\nfiles = 10\npage_cache = \"1M\"\n"
    ));
    assert_err(
        &e,
        "slab.page_cache",
        9,
        "32 files of 32 KiB, more than the 10",
    );
    let e = err(&format!(
        "[machine]\nram = \"1G\"\n{disk}[slab]\npage_cache = \"600M\"\n"
    ));
    assert_err(&e, "slab.page_cache", 8, "at most half of RAM");
    let e = err(&format!(
        "[machine]\nram = \"4G\"\n{disk}[slab]\npage_cache = \"1M\"\npage_cache_active = \"2M\"\n"
    ));
    assert_err(
        &e,
        "slab.page_cache_active",
        9,
        "at most `page_cache` (1048576 bytes)",
    );
}

#[test]
fn workload_must_be_an_array_of_tables() {
    let e = err("[machine]\nram = \"4G\"\n[workload]\ntype = \"mem_eater\"\n");
    assert_err(
        &e,
        "workload",
        3,
        "expected an array of tables, written [[workload]]",
    );
    let e = err("workload = [1]\n[machine]\nram = \"4G\"\n");
    assert_err(&e, "workload[0]", 1, "found the integer 1");
}

#[test]
fn workload_type_must_be_a_string() {
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = 3\n");
    assert_err(&e, "workload[0].type", 4, "found the integer 3");
}

#[test]
fn chunk_larger_than_size_is_rejected() {
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"1M\"\nchunk = \"2M\"\n");
    assert_err(&e, "workload[0].chunk", 6, "up to the mem_eater's size");
    let e = err(
        "[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"1M\"\nchunk = 0\n",
    );
    assert_err(&e, "workload[0].chunk", 6, "found 0 bytes");
}

#[test]
fn retouch_interval_without_retouch_is_rejected() {
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"1M\"\nretouch_interval = \"1s\"\n");
    assert_err(
        &e,
        "workload[0].retouch_interval",
        6,
        "only applies with then = \"retouch\"",
    );
}

#[test]
fn set_percent_and_threads_are_range_checked() {
    let e =
        err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"memcachetest\"\nset_percent = 101\n");
    assert_err(&e, "workload[0].set_percent", 5, "from 0 to 100");
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"memcachetest\"\nthreads = 0\n");
    assert_err(&e, "workload[0].threads", 5, "from 1 to 4096");
}

#[test]
fn value_size_larger_than_pool_is_rejected() {
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"memcachetest\"\npool = \"1M\"\nvalue_size = \"2M\"\n");
    assert_err(&e, "workload[0].value_size", 6, "up to the pool size");
}

#[test]
fn percentage_is_only_allowed_for_workload_memory() {
    let e = err("[machine]\nram = \"50%\"\n");
    assert_err(&e, "machine.ram", 2, "a percentage is not allowed here");
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"x%\"\n");
    assert_err(&e, "workload[0].size", 5, "expected a percentage");
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"0%\"\n");
    assert_err(&e, "workload[0].size", 5, "less than one 4096-byte page");
}

#[test]
fn duplicate_workload_names_are_rejected() {
    let e = err(r#"[machine]
ram = "4G"
[[workload]]
type = "mem_eater"
name = "a"
size = "1M"
[[workload]]
type = "memcachetest"
name = "a"
pool = "1M"
"#);
    assert_err(&e, "workload[1].name", 9, "duplicate workload name \"a\"");
}

#[test]
fn empty_workload_name_is_rejected() {
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nname = \" \"\nsize = \"1M\"\n");
    assert_err(&e, "workload[0].name", 5, "non-empty workload name");
}

#[test]
fn start_needs_a_unit() {
    let e = err(
        "[machine]\nram = \"4G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"1M\"\nstart = 5\n",
    );
    assert_err(&e, "workload[0].start", 6, "times need a unit");
}

// ----------------------------------------------------------------------------------------
// More memory asked than can exist.

#[test]
fn workloads_beyond_ram_plus_swap_name_the_tipping_workload() {
    let e = err(r#"[machine]
ram = "1G"
[swap]
size = "1G"
[[workload]]
type = "memcachetest"
pool = "1G"
[[workload]]
type = "mem_eater"
size = "512M"
[[workload]]
type = "mem_eater"
size = "513M"
"#);
    assert_err(
        &e,
        "workload[2].size",
        13,
        "more memory asked than can exist",
    );
    assert!(e.message.contains("RAM + swap is 2147483648 bytes"), "{e}");
}

#[test]
fn workloads_exactly_filling_ram_plus_swap_are_allowed() {
    let s = ok(r#"[machine]
ram = "1G"
[swap]
size = "1G"
[[workload]]
type = "memcachetest"
pool = "1G"
[[workload]]
type = "mem_eater"
size = "1G"
"#);
    assert_eq!(s.workloads.len(), 2);
}

#[test]
fn default_pool_can_tip_memory_over_and_points_at_the_workload() {
    let e = err(r#"[machine]
ram = "1G"
[[workload]]
type = "mem_eater"
size = "512M"
[[workload]]
type = "memcachetest"
"#);
    assert_err(
        &e,
        "workload[1].pool",
        6,
        "more memory asked than can exist",
    );
}

#[test]
fn without_swap_workloads_are_limited_to_ram() {
    let e = err("[machine]\nram = \"1G\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"101%\"\n");
    assert_err(
        &e,
        "workload[0].size",
        5,
        "more memory asked than can exist",
    );
}

#[test]
fn dirty_sysctls_default_to_the_kernel_values_and_parse_under_their_names() {
    let s = ok("[machine]\nram = \"1G\"\n");
    assert_eq!(
        s.vm.dirty,
        crate::mm::page_writeback::DirtySysctls::default()
    );
    let s = ok("[machine]\nram = \"1G\"\n[vm]\ndirty_ratio = 40\ndirty_background_ratio = 5\ndirty_bytes = \"64M\"\ndirty_expire_centisecs = 1000\ndirty_writeback_centisecs = 0\n");
    assert_eq!(s.vm.dirty.dirty_ratio, 40);
    assert_eq!(s.vm.dirty.dirty_background_ratio, 5);
    assert_eq!(s.vm.dirty.dirty_bytes, 64 << 20);
    assert_eq!(s.vm.dirty.dirty_expire_centisecs, 1000);
    assert_eq!(s.vm.dirty.dirty_writeback_centisecs, 0);
}

#[test]
fn a_dirty_ratio_above_100_or_dirty_bytes_below_two_pages_is_an_error() {
    let e = err("[machine]\nram = \"1G\"\n[vm]\ndirty_ratio = 120\n");
    assert_err(&e, "vm.dirty_ratio", 4, "0 to 100");
    let e = err("[machine]\nram = \"1G\"\n[vm]\ndirty_bytes = 4096\n");
    assert_err(&e, "vm.dirty_bytes", 4, "8192");
    let e = err("[machine]\nram = \"1G\"\n[vm]\ndirty_ration = 10\n");
    assert_eq!(e.suggestion.as_deref(), Some("dirty_ratio"), "{e}");
}

#[test]
fn swap_on_a_raw_device_is_accepted_and_misuse_is_reported() {
    let dev = "[[device]]\nname = \"sdb\"\ntype = \"hdd\"\nfilesystem = \"raw\"\nsize = \"8G\"\n";
    let s = ok(&format!(
        "[machine]\nram = \"1G\"\n{dev}[swap]\nsize = \"2G\"\ndevice = \"sdb\"\n"
    ));
    assert_eq!(s.machine.swap.unwrap().device.as_deref(), Some("sdb"));
    let e = err(&format!(
        "[machine]\nram = \"1G\"\n{dev}[swap]\nsize = \"2G\"\ndevice = \"sdc\"\n"
    ));
    assert_err(&e, "swap.device", 10, "no [[device]] named \"sdc\"");
    assert_eq!(e.suggestion.as_deref(), Some("sdb"));
    let e = err(&format!("[machine]\nram = \"1G\"\n{dev}[swap]\nsize = \"2G\"\ndevice = \"sdb\"\nbandwidth = \"10M\"\n"));
    assert_err(&e, "swap.bandwidth", 11, "simple swap model");
    let ext4 = dev.replace("raw", "ext4");
    let e = err(&format!(
        "[machine]\nram = \"1G\"\n{ext4}[swap]\nsize = \"5G\"\ndevice = \"sdb\"\n"
    ));
    assert_err(&e, "swap.device", 10, "more than half");
}

#[test]
fn a_swap_partition_beside_a_filesystem_is_placed_at_the_end_or_the_start() {
    use crate::mm::swapfile::SwapPlacement;
    let ext4 =
        "[[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext4\"\nsize = \"100G\"\n";
    let swap = |keys: &str| {
        format!("[machine]\nram = \"1G\"\n{ext4}[swap]\nsize = \"2G\"\ndevice = \"sda\"\n{keys}")
    };
    let placement = |keys: &str| ok(&swap(keys)).machine.swap.unwrap().placement;
    assert_eq!(placement(""), SwapPlacement::End);
    assert_eq!(placement("placement = \"end\"\n"), SwapPlacement::End);
    assert_eq!(
        placement("placement = \"start\"\n"),
        SwapPlacement::Start { gap: 0 }
    );
    assert_eq!(
        placement("placement = \"start\"\ngap = \"20G\"\n"),
        SwapPlacement::Start { gap: 20 * G }
    );
    let e = err(&swap("placement = \"strat\"\n"));
    assert_err(&e, "swap.placement", 11, "\"end\"");
    assert_eq!(e.suggestion.as_deref(), Some("start"));
    let e = err(&swap("gap = \"20G\"\n"));
    assert_err(&e, "swap.gap", 11, "placement = \"start\"");
    // With the swap area, the gap may take at most half of the disk.
    let e = err(&swap("placement = \"start\"\ngap = \"49G\"\n"));
    assert_err(&e, "swap.gap", 12, "at most half");
    assert_eq!(
        placement("placement = \"start\"\ngap = \"48G\"\n"),
        SwapPlacement::Start { gap: 48 * G }
    );
    // A raw swap disk, or none, holds no filesystem to place the partition against.
    let raw = swap("placement = \"start\"\n").replace("ext4", "raw");
    assert_err(&err(&raw), "swap.placement", 11, "also holds a filesystem");
    let simple = "[machine]\nram = \"1G\"\n[swap]\nsize = \"2G\"\ngap = \"1G\"\n";
    assert_err(&err(simple), "swap.gap", 5, "also holds a filesystem");
}

#[test]
fn the_placement_sets_where_swap_and_the_filesystem_begin_on_the_disk() {
    use crate::mm::swapfile::SwapPlacement;
    let (disk, swap) = (100 * G, 2 * G);
    assert_eq!(
        SwapPlacement::End.sectors(disk, swap),
        ((disk - swap) / 512, 0)
    );
    assert_eq!(
        SwapPlacement::Start { gap: 10 * G }.sectors(disk, swap),
        (0, (swap + 10 * G) / 512)
    );
    // And a booted machine starts them there.
    let ext4 =
        "[[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext4\"\nsize = \"100G\"\n";
    for (keys, want) in [
        ("", ((disk - swap) / 512, 0)),
        ("placement = \"start\"\ngap = \"10G\"\n", (0, 12 * G / 512)),
    ] {
        let s = ok(&format!(
            "[machine]\nram = \"1G\"\n{ext4}[swap]\nsize = \"2G\"\ndevice = \"sda\"\n{keys}"
        ));
        let kernel = crate::presets::resolve("3.9", &[]).unwrap();
        let w = crate::sim::boot(&s, &kernel, 1).unwrap();
        let k = w.borrow();
        let bdi = k.swap_bdi.unwrap();
        assert_eq!(
            (k.swap_sector_base, k.bdis[bdi].next_free_sector),
            want,
            "{keys}"
        );
    }
}

const PARALLELIO_MACHINE: &str = "[machine]\nram = \"7336M\"\n[swap]\nsize = \"8G\"\n[[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext4\"\n";

#[test]
fn parallelio_defaults_follow_mmtests_config() {
    let s = ok(&format!(
        "{PARALLELIO_MACHINE}[run]\nend = \"workloads\"\n[[workload]]\ntype = \"parallelio\"\ndevice = \"sda\"\n"
    ));
    assert!(s.run.end_when_done);
    let WorkloadKind::Parallelio(p) = &s.workloads[0].kind else {
        panic!("a parallelio workload")
    };
    assert_eq!(s.workloads[0].name, "parallelio");
    assert_eq!((p.iterations, p.duration, p.threads), (5, 200 * S, 1));
    assert_eq!(p.value_size, 16 * K);
    assert!(p.warmup);
    // Four steps: none, then about 0.1, 0.333 and 0.567 of MemTotal, in whole MiB.
    let labels: Vec<String> = p
        .steps
        .iter()
        .map(|&b| super::super::ParallelioParams::label(b))
        .collect();
    assert_eq!(labels, ["0M", "715M", "2385M", "4055M"]);
    // The pool is 4/5 of MemTotal (a little under 80% of RAM).
    assert!(
        p.pool < 7336 * M / 5 * 4 && p.pool > 7336 * M / 5 * 4 - 200 * M,
        "{}",
        p.pool
    );
}

#[test]
fn parallelio_takes_explicit_steps_but_not_with_increments() {
    let s = ok(&format!(
        "{PARALLELIO_MACHINE}[[workload]]\ntype = \"parallelio\"\ndevice = \"sda\"\nsteps = [0, \"1G\"]\niterations = 2\nwarmup = false\nduration = \"30s\"\n"
    ));
    let WorkloadKind::Parallelio(p) = &s.workloads[0].kind else {
        panic!("a parallelio workload")
    };
    assert_eq!(
        (p.steps.clone(), p.iterations, p.warmup, p.duration),
        (vec![0, G], 2, false, 30 * S)
    );
    let e = err(&format!(
        "{PARALLELIO_MACHINE}[[workload]]\ntype = \"parallelio\"\ndevice = \"sda\"\nsteps = [0]\nincrements = 2\n"
    ));
    assert_err(&e, "workload[0].steps", 12, "either steps or increments");
    let e = err(&format!(
        "{PARALLELIO_MACHINE}[[workload]]\ntype = \"parallelio\"\ndevice = \"sda\"\nsteps = [\"1000K\"]\n"
    ));
    assert_err(&e, "workload[0].steps[0]", 12, "whole MiB");
    let e = err(&format!(
        "{PARALLELIO_MACHINE}[[workload]]\ntype = \"parallelio\"\ndevice = \"sdx\"\n"
    ));
    assert_err(&e, "workload[0].device", 11, "no [[device]] named \"sdx\"");
}

#[test]
fn memcachetest_duration_dd_file_and_run_end_are_checked() {
    let s = ok(&format!(
        "{PARALLELIO_MACHINE}[[workload]]\ntype = \"memcachetest\"\nduration = \"200s\"\n[[workload]]\ntype = \"dd\"\ndevice = \"sda\"\nsize = \"1G\"\nfile = \"largefile\"\n"
    ));
    let WorkloadKind::Memcachetest(MemcachetestParams { duration, .. }) = &s.workloads[0].kind
    else {
        panic!("memcachetest")
    };
    assert_eq!(*duration, Some(200 * S));
    let WorkloadKind::Dd(dd) = &s.workloads[1].kind else {
        panic!("dd")
    };
    assert_eq!(dd.file.as_deref(), Some("largefile"));
    assert!(!s.run.end_when_done);
    let e = err(&format!(
        "{PARALLELIO_MACHINE}[[workload]]\ntype = \"dd\"\ndevice = \"sda\"\nsize = \"1G\"\nfile = \"a/b\"\n"
    ));
    assert_err(&e, "workload[0].file", 13, "without '/'");
    let e = err(&format!(
        "{PARALLELIO_MACHINE}[[workload]]\ntype = \"memcachetest\"\nduration = \"0s\"\n"
    ));
    assert_err(&e, "workload[0].duration", 11, "greater than 0");
    let e = err(&format!("{PARALLELIO_MACHINE}[run]\nend = \"workload\"\n"));
    assert_eq!(e.key, "run.end");
}

#[test]
fn a_swap_partition_may_share_a_disk_with_a_filesystem_but_not_most_of_it() {
    let disk =
        "[[device]]\nname = \"sda\"\ntype = \"hdd\"\nsize = \"100G\"\nfilesystem = \"ext4\"\n";
    let s = ok(&format!(
        "[machine]\nram = \"1G\"\n[swap]\nsize = \"8G\"\ndevice = \"sda\"\n{disk}"
    ));
    assert_eq!(s.machine.swap.unwrap().device.as_deref(), Some("sda"));
    let e = err(&format!(
        "[machine]\nram = \"1G\"\n[swap]\nsize = \"60G\"\ndevice = \"sda\"\n{disk}"
    ));
    assert_err(&e, "swap.device", 5, "more than half");
}

// ----------------------------------------------------------------------------------------
// dd's sync and truncation, and the mmap workload.

const DISK: &str = "[machine]\nram = \"1G\"\n[[device]]\nname = \"sda\"\ntype = \"hdd\"\nsize = \"8G\"\n[[workload]]\n";

#[test]
fn dd_takes_bs_or_ibs_and_obs_of_one_size_and_ibs_and_obs_make_two_buffers() {
    let dd = |keys: &str| format!("{DISK}type = \"dd\"\ndevice = \"sda\"\nsize = \"1G\"\n{keys}");
    let parsed = |keys: &str| {
        let s = ok(&dd(keys));
        let WorkloadKind::Dd(d) = &s.workloads[0].kind else {
            panic!("a dd workload")
        };
        (d.bs, d.two_buffers)
    };
    assert_eq!(parsed(""), (M, false));
    assert_eq!(parsed("bs = \"64K\"\n"), (64 * 1024, false));
    assert_eq!(parsed("ibs = \"1M\"\nobs = \"1M\"\n"), (M, true));
    let e = err(&dd("ibs = \"1M\"\n"));
    assert_err(&e, "workload[0].ibs", 11, "ibs and obs together");
    let e = err(&dd("obs = \"1M\"\n"));
    assert_err(&e, "workload[0].obs", 11, "ibs and obs together");
    let e = err(&dd("bs = \"1M\"\nobs = \"1M\"\n"));
    assert_err(&e, "workload[0].obs", 12, "not both");
    let e = err(&dd("ibs = \"1M\"\nobs = \"512K\"\n"));
    assert_err(&e, "workload[0].obs", 12, "equal to ibs");
    let e = err(&dd("ibs = \"3000\"\nobs = \"3000\"\n"));
    assert_err(&e, "workload[0].ibs", 11, "whole 4 KiB pages");
}

#[test]
fn dd_takes_conv_fsync_and_a_truncate_size_of_whole_pages_within_the_file() {
    use super::super::{DdConv, DdParams};
    let s = ok(&format!(
        "{DISK}type = \"dd\"\ndevice = \"sda\"\nsize = \"2G\"\nconv = \"fsync\"\ntruncate_to = \"1G\"\n"
    ));
    let WorkloadKind::Dd(DdParams {
        conv, truncate_to, ..
    }) = &s.workloads[0].kind
    else {
        panic!("a dd workload")
    };
    assert_eq!((*conv, *truncate_to), (DdConv::Fsync, Some(G)));
    let s = ok(&format!(
        "{DISK}type = \"dd\"\ndevice = \"sda\"\nsize = \"2G\"\n"
    ));
    let WorkloadKind::Dd(dd) = &s.workloads[0].kind else {
        panic!("a dd workload")
    };
    assert_eq!((dd.conv, dd.truncate_to), (DdConv::None, None));
    let e = err(&format!(
        "{DISK}type = \"dd\"\ndevice = \"sda\"\nsize = \"2G\"\nconv = \"fsyn\"\n"
    ));
    assert_err(&e, "workload[0].conv", 11, "\"fsync\"");
    assert_eq!(e.suggestion.as_deref(), Some("fsync"));
    let e = err(&format!(
        "{DISK}type = \"dd\"\ndevice = \"sda\"\nsize = \"2G\"\ntruncate_to = \"3G\"\n"
    ));
    assert_err(&e, "workload[0].truncate_to", 11, "up to the file size");
    let e = err(&format!(
        "{DISK}type = \"dd\"\ndevice = \"sda\"\nsize = \"2G\"\ntruncate_to = 100\n"
    ));
    assert_err(&e, "workload[0].truncate_to", 11, "whole 4 KiB pages");
}

#[test]
fn mmap_defaults_to_one_sequential_read_pass_without_msync() {
    use super::super::{AccessPattern, MmapAccess, MmapParams};
    let s = ok(&format!(
        "{DISK}type = \"mmap\"\ndevice = \"sda\"\nsize = \"1G\"\n"
    ));
    assert_eq!(s.workloads[0].name, "mmap");
    assert_eq!(
        s.workloads[0].kind,
        WorkloadKind::Mmap(MmapParams {
            device: "sda".into(),
            size: G,
            access: MmapAccess::Read,
            pattern: AccessPattern::Sequential,
            passes: 1,
            msync: false,
        })
    );
    let s = ok(&format!(
        "{DISK}type = \"mmap\"\ndevice = \"sda\"\nsize = \"1G\"\naccess = \"write\"\npattern = \"random\"\npasses = 3\nmsync = true\n"
    ));
    let WorkloadKind::Mmap(p) = &s.workloads[0].kind else {
        panic!("an mmap workload")
    };
    assert_eq!(
        (p.access, p.pattern, p.passes, p.msync),
        (MmapAccess::Write, AccessPattern::Random, 3, true)
    );
}

#[test]
fn a_dd_block_is_whole_pages_or_a_power_of_two_below_a_page() {
    let base = format!("{DISK}type = \"dd\"\ndevice = \"sda\"\nsize = \"1G\"\n");
    for (bs, bytes) in [("1K", 1024), ("512", 512), ("4K", 4096), ("8M", 8 << 20)] {
        let s = ok(&format!("{base}bs = \"{bs}\"\n"));
        let WorkloadKind::Dd(d) = &s.workloads[0].kind else {
            panic!("a dd")
        };
        assert_eq!(d.bs, bytes, "{bs}");
    }
    for bs in ["3K", "256", "6K"] {
        let e = err(&format!("{base}bs = \"{bs}\"\n"));
        assert_err(&e, "workload[0].bs", 11, "or 512, 1K or 2K");
    }
}

#[test]
fn mmap_keys_are_checked() {
    let base = format!("{DISK}type = \"mmap\"\ndevice = \"sda\"\nsize = \"1G\"\n");
    let e = err(&format!("{base}access = \"rw\"\n"));
    assert_err(&e, "workload[0].access", 11, "\"read\", \"write\"");
    let e = err(&format!("{base}pattern = \"sequential\"\n"));
    assert_err(&e, "workload[0].pattern", 11, "\"seq\", \"random\"");
    let e = err(&format!("{base}passes = 0\n"));
    assert_err(&e, "workload[0].passes", 11, "out of range");
    let e = err(&format!("{base}msync = \"yes\"\n"));
    assert_err(&e, "workload[0].msync", 11, "true or false");
    let e = err(&format!("{base}bs = \"1M\"\n"));
    assert_err(&e, "workload[0].bs", 11, "belongs to dd workloads");
    let e = err(&format!(
        "{DISK}type = \"mmap\"\ndevice = \"sda\"\nsize = \"9G\"\n"
    ));
    assert_err(&e, "workload[0].size", 10, "larger than the filesystem");
    let e = err(&format!("{DISK}type = \"mmpa\"\n"));
    assert_eq!(e.suggestion.as_deref(), Some("mmap"));
}

// ----------------------------------------------------------------------------------------
// NFS mounts and device parameters.

/// `[machine]` then one `[[device]]` named "sdb" of `ty` with `extra` keys (from line 5).
fn device(ty: &str, extra: &str) -> String {
    format!("[machine]\nram = \"4G\"\n[[device]]\nname = \"sdb\"\ntype = \"{ty}\"\n{extra}")
}

#[test]
fn an_nfs_mount_implies_filesystem_nfs_and_takes_its_network_keys() {
    use super::super::DeviceKind;
    use crate::fs::Filesystem;
    let s = ok(&device(
        "nfs",
        "bandwidth = \"10M\"\nlatency = \"1ms\"\nserver_bandwidth = \"50M\"\nwsize = \"256K\"\n",
    ));
    let d = &s.machine.devices[0];
    assert_eq!((d.kind, d.filesystem), (DeviceKind::Nfs, Filesystem::Nfs));
    assert_eq!(d.params.bandwidth, Some(10 * M));
    assert_eq!(d.params.latency, Some(1_000_000));
    assert_eq!(d.params.wsize, Some(256 * 1024));
    let model = d.model().expect("a valid mount");
    assert_eq!(model.max_sectors(), 512, "wsize in sectors");
}

/// Every filesystem of the format loads by its name; a misspelt one is an error listing them
/// all, with the nearest as a suggestion.
#[test]
fn each_filesystem_loads_by_name_and_a_misspelt_one_lists_them() {
    use crate::fs::Filesystem;
    for (name, fs) in [
        ("ext4", Filesystem::Ext4),
        ("ext3", Filesystem::Ext3),
        ("ext2", Filesystem::Ext2),
        ("xfs", Filesystem::Xfs),
        ("btrfs", Filesystem::Btrfs),
        ("raw", Filesystem::Raw),
    ] {
        let s = ok(&device("hdd", &format!("filesystem = \"{name}\"\n")));
        assert_eq!(s.machine.devices[0].filesystem, fs, "{name}");
    }
    let e = err(&device("hdd", "filesystem = \"ext5\"\n"));
    assert_err(
        &e,
        "device[0].filesystem",
        6,
        "expected one of \"ext4\", \"ext3\", \"ext2\", \"xfs\", \"btrfs\", \"raw\", \"nfs\", found \"ext5\"",
    );
    assert_eq!(e.suggestion.as_deref(), Some("ext4"));
}

/// Each (type, keys, error key, line, message part) is rejected as described.
fn device_errors(cases: &[(&str, &str, &str, usize, &str)]) {
    for &(ty, extra, key, line, needle) in cases {
        assert_err(&err(&device(ty, extra)), key, line, needle);
    }
}

#[test]
fn nfs_filesystem_and_nfs_type_go_together() {
    device_errors(&[
        (
            "nfs",
            "filesystem = \"ext4\"\n",
            "device[0].filesystem",
            6,
            "its filesystem is \"nfs\"",
        ),
        (
            "hdd",
            "filesystem = \"nfs\"\n",
            "device[0].filesystem",
            6,
            "type = \"nfs\"",
        ),
        (
            "nfs",
            "nr_requests = 64\n",
            "device[0].nr_requests",
            6,
            "no request queue",
        ),
        (
            "nfs",
            "scheduler = \"noop\"\n",
            "device[0].scheduler",
            6,
            "no request queue",
        ),
    ]);
}

#[test]
fn device_keys_apply_only_to_their_kinds() {
    device_errors(&[
        (
            "ssd",
            "rpm = 5400\n",
            "device[0].rpm",
            6,
            "only for type = \"hdd\" or \"raid0\"",
        ),
        (
            "hdd",
            "wsize = \"64K\"\n",
            "device[0].wsize",
            6,
            "only for type = \"nfs\"",
        ),
        (
            "nfs",
            "read_bandwidth = \"1G\"\n",
            "device[0].read_bandwidth",
            6,
            "only for type",
        ),
    ]);
}

/// Impossible values are caught by the device model's own checks (`block::DeviceError`)
/// and reported at the key, naming the device.
#[test]
fn impossible_device_parameters_name_the_device_and_the_key() {
    for ty in ["hdd", "ssd", "usb", "raid0", "nfs"] {
        let e = err(&device(ty, "bandwidth = 0\n"));
        assert_err(&e, "device[0].bandwidth", 6, "device \"sdb\": ");
        assert!(e.message.contains("bandwidth is zero"), "{ty}: {e}");
    }
    device_errors(&[
        (
            "hdd",
            "rpm = 0\n",
            "device[0].rpm",
            6,
            "device \"sdb\": rpm is zero",
        ),
        (
            "raid0",
            "seek = \"0s\"\n",
            "device[0].seek",
            6,
            "seek must be greater than 0",
        ),
        (
            "nfs",
            "server_bandwidth = 0\n",
            "device[0].server_bandwidth",
            6,
            "server disk bandwidth is zero",
        ),
        (
            "nfs",
            "wsize = \"3K\"\n",
            "device[0].wsize",
            6,
            "power of two from 4K to 1M",
        ),
        (
            "nfs",
            "wsize = \"2M\"\n",
            "device[0].wsize",
            6,
            "power of two from 4K to 1M",
        ),
        // The key that made the model impossible is the one named, here the second.
        (
            "ssd",
            "read_bandwidth = \"1G\"\nbandwidth = 0\n",
            "device[0].bandwidth",
            7,
            "write bandwidth is zero",
        ),
    ]);
}

#[test]
fn disk_parameters_scale_the_model() {
    let s = ok(&device(
        "hdd",
        "rpm = 5400\nseek = \"12ms\"\nbandwidth = \"100M\"\n",
    ));
    let p = s.machine.devices[0].params;
    assert_eq!((p.rpm, p.seek), (Some(5400), Some(12_000_000)));
    assert_eq!(p.bandwidth, Some(100 * M));
    // A 12 ms average seek is outside what the 7200 rpm seek curve can average; scaled
    // with it, the curve can.
    s.machine.devices[0].model().expect("a valid disk");
    let s = ok(&device("ssd", "bandwidth = \"200M\"\n"));
    assert_eq!(s.machine.devices[0].params.read_bandwidth, None);
}

/// `scheduler` takes the sysfs names; without it rotating disks get cfq and flash devices
/// keep deadline (README, "Elevators").
#[test]
fn scheduler_defaults_to_cfq_on_rotating_disks_and_takes_sysfs_names() {
    use super::super::Scheduler;
    let dev = |ty: &str, extra: &str| {
        let members = if ty == "raid0" { "members = 2\n" } else { "" };
        let s = ok(&format!(
            "[machine]\nram = \"4G\"\n[[device]]\nname = \"sdb\"\ntype = \"{ty}\"\nsize = \"8G\"\n{members}{extra}"
        ));
        s.machine.devices[0].scheduler
    };
    assert_eq!(dev("hdd", ""), Scheduler::Cfq);
    assert_eq!(dev("raid0", ""), Scheduler::Cfq);
    assert_eq!(dev("ssd", ""), Scheduler::Deadline);
    assert_eq!(dev("usb", ""), Scheduler::Deadline);
    assert_eq!(dev("ssd", "scheduler = \"cfq\"\n"), Scheduler::Cfq);
    assert_eq!(
        dev("hdd", "scheduler = \"deadline\"\n"),
        Scheduler::Deadline
    );
    assert_eq!(dev("hdd", "scheduler = \"noop\"\n"), Scheduler::Noop);
    let e = err("[machine]\nram = \"4G\"\n[[device]]\nname = \"sdb\"\ntype = \"hdd\"\nscheduler = \"bfq\"\n");
    assert_err(&e, "device[0].scheduler", 6, "cfq");
}

/// `data` is ext4's mount option: ordered by default, writeback on request, an error on
/// any other filesystem or value.
#[test]
fn data_is_ext4s_mount_option_and_defaults_to_ordered() {
    use super::super::DataMode;
    let dev = |extra: &str| {
        format!("[machine]\nram = \"4G\"\n[[device]]\nname = \"sdb\"\ntype = \"hdd\"\n{extra}")
    };
    assert_eq!(ok(&dev("")).machine.devices[0].data, DataMode::Ordered);
    assert_eq!(
        ok(&dev("data = \"writeback\"\n")).machine.devices[0].data,
        DataMode::Writeback
    );
    let e = err(&dev("data = \"writebak\"\n"));
    assert_err(&e, "device[0].data", 6, "writeback");
    let e = err(&dev("filesystem = \"xfs\"\ndata = \"ordered\"\n"));
    assert_err(&e, "device[0].data", 7, "ext4's mount option");
}

/// cat reads `files` files (default 1) sharing its size; each needs a page at least.
#[test]
fn cat_takes_a_file_count_of_at_least_one_page_each() {
    let s = ok(&format!(
        "{DISK}type = \"cat\"\ndevice = \"sda\"\nsize = \"40K\"\nfiles = 10\n"
    ));
    assert_eq!(
        s.workloads[0].kind,
        WorkloadKind::Cat {
            device: "sda".into(),
            size: 40960,
            files: 10
        }
    );
    let s = ok(&format!(
        "{DISK}type = \"cat\"\ndevice = \"sda\"\nsize = \"40K\"\n"
    ));
    assert!(matches!(
        s.workloads[0].kind,
        WorkloadKind::Cat { files: 1, .. }
    ));
    let e = err(&format!(
        "{DISK}type = \"cat\"\ndevice = \"sda\"\nsize = \"40K\"\nfiles = 11\n"
    ));
    assert_err(
        &e,
        "workload[0].files",
        11,
        "11 files cannot share 40960 bytes",
    );
    let e = err(&format!(
        "{DISK}type = \"cat\"\ndevice = \"sda\"\nsize = \"40K\"\nfiles = 0\n"
    ));
    assert_err(&e, "workload[0].files", 11, "integer >= 1");
}

#[test]
fn transparent_hugepage_enabled_takes_the_sysfs_values() {
    use crate::mm::huge_memory::ThpEnabled;
    let base = "[machine]\nram = \"4G\"\n";
    assert_eq!(ok(base).transparent_hugepage, ThpEnabled::Never);
    // Each value reads back under the name the reports print.
    for want in [ThpEnabled::Always, ThpEnabled::Madvise, ThpEnabled::Never] {
        let s = ok(&format!(
            "{base}[transparent_hugepage]\nenabled = \"{}\"\n",
            want.name()
        ));
        assert_eq!(s.transparent_hugepage, want);
    }
    assert_eq!(ThpEnabled::Madvise.name(), "madvise");
    let e = err(&format!(
        "{base}[transparent_hugepage]\nenabled = \"sometimes\"\n"
    ));
    assert_err(
        &e,
        "transparent_hugepage.enabled",
        4,
        "\"always\", \"madvise\", \"never\"",
    );
    let e = err(&format!(
        "{base}[transparent_hugepage]\nenable = \"always\"\n"
    ));
    assert_err(&e, "transparent_hugepage.enable", 4, "unknown key 'enable'");
    assert!(e.to_string().contains("did you mean 'enabled'"), "{e}");
    let e = err(&format!(
        "{base}[transparent_hugepages]\nenabled = \"always\"\n"
    ));
    assert!(e.to_string().contains("transparent_hugepage"), "{e}");
}

/// khugepaged's raise of min_free_kbytes at boot: on with `always` on 4 and 8 GiB machines, off
/// below 512 MiB, and never over a `[vm] min_free_kbytes` the scenario writes.
#[test]
fn thp_raises_min_free_kbytes_at_boot_unless_the_scenario_sets_it() {
    let boot = |toml: &str| {
        let s = ok(toml);
        let kernel = crate::presets::resolve("3.9", &[]).unwrap();
        let w = crate::sim::boot(&s, &kernel, 1).unwrap();
        let k = w.borrow();
        k.min_free_kbytes
    };
    let base = boot("[machine]\nram = \"4G\"\n");
    let thp = boot("[machine]\nram = \"4G\"\n[transparent_hugepage]\nenabled = \"always\"\n");
    assert!(base < 10_000, "{base}");
    // DMA and DMA32 only: 2 zones of 11 pageblocks.
    assert_eq!(thp, 45_056);
    let thp = boot("[machine]\nram = \"8G\"\n[transparent_hugepage]\nenabled = \"always\"\n");
    assert_eq!(thp, 67_584, "three zones");
    let small = "[machine]\nram = \"384M\"\n";
    let small_thp = format!("{small}[transparent_hugepage]\nenabled = \"always\"\n");
    assert_eq!(boot(small), boot(&small_thp), "THP is off below 512 MiB");
    let set = "[machine]\nram = \"4G\"\n[vm]\nmin_free_kbytes = 5000\n[transparent_hugepage]\nenabled = \"madvise\"\n";
    assert_eq!(boot(set), 5000);
}

#[test]
fn highalloc_defaults_to_mmtests_stress_highalloc_and_checks_its_ranges() {
    let s = ok("[machine]\nram = \"1G\"\n[[workload]]\ntype = \"highalloc\"\n");
    assert_eq!(
        s.workloads[0].kind,
        WorkloadKind::Highalloc(super::super::HighallocParams {
            order: 9,
            mb_per_sec: 16,
            percent: 95
        })
    );
    assert_eq!(s.workloads[0].name, "highalloc");
    let s = ok(
        "[machine]\nram = \"1G\"\n[[workload]]\ntype = \"highalloc\"\norder = 4\nmb_per_sec = 2\npercent = 50\n",
    );
    let WorkloadKind::Highalloc(p) = s.workloads[0].kind else {
        panic!("not a highalloc");
    };
    assert_eq!((p.order, p.mb_per_sec, p.percent), (4, 2, 50));
    let e = err("[machine]\nram = \"1G\"\n[[workload]]\ntype = \"highalloc\"\norder = 11\n");
    assert_err(&e, "workload[0].order", 5, "order");
    let e = err("[machine]\nram = \"1G\"\n[[workload]]\ntype = \"highalloc\"\npercent = 0\n");
    assert_err(&e, "workload[0].percent", 5, "percent");
    let e = err("[machine]\nram = \"1G\"\n[[workload]]\ntype = \"highalloc\"\nsize = \"1G\"\n");
    assert!(e.message.contains("belongs to"), "{e}");
}

#[test]
fn kbuild_needs_a_filesystem_and_defaults_to_make_j1_of_a_defconfig_again_and_again() {
    let dev = "[machine]\nram = \"1G\"\n[[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext3\"\n";
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"kbuild\"\ndevice = \"sda\"\n"
    ));
    assert_eq!(
        s.workloads[0].kind,
        WorkloadKind::Kbuild(super::super::KbuildParams {
            device: "sda".into(),
            jobs: 1,
            units: super::super::KbuildParams::DEFCONFIG_UNITS,
            repeat: true,
            compile_cpu: crate::calibration::KBUILD_COMPILE_NS,
        })
    );
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"kbuild\"\ndevice = \"sda\"\njobs = 8\nunits = 50\nrepeat = false\n"
    ));
    let WorkloadKind::Kbuild(p) = &s.workloads[0].kind else {
        panic!("not a kbuild");
    };
    assert_eq!((p.jobs, p.units, p.repeat), (8, 50, false));
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"kbuild\"\ndevice = \"sdb\"\n"
    ));
    assert_err(&e, "workload[0].device", 9, "no [[device]] named \"sdb\"");
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"kbuild\"\ndevice = \"sda\"\njobs = 0\n"
    ));
    assert_err(&e, "workload[0].jobs", 10, "job count");
    let e = err("[machine]\nram = \"1G\"\n[[workload]]\ntype = \"kbuild\"\n");
    assert!(e.message.contains("device"), "{e}");
}

#[test]
fn stress_highalloc_defaults_to_mmtests_driver_and_names_a_misspelt_key() {
    use super::super::{HighallocParams, KbuildParams, StressHighallocParams};
    let dev = "[machine]\nram = \"1G\"\n[[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext3\"\n";
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"stress-highalloc\"\ndevice = \"sda\"\n"
    ));
    assert_eq!(s.workloads[0].name, "stress-highalloc");
    assert_eq!(
        s.workloads[0].kind,
        WorkloadKind::StressHighalloc(StressHighallocParams {
            device: "sda".into(),
            trees: None,
            copy: true,
            jobs: 1,
            units: KbuildParams::DEFCONFIG_UNITS,
            warmup: 300 * crate::engine::SEC,
            alloc: HighallocParams::default(),
            rested: true,
            rest: 180 * crate::engine::SEC,
        })
    );
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"stress-highalloc\"\ndevice = \"sda\"\ntrees = 2\nunits = 40\nwarmup = \"10s\"\nrest = \"5s\"\nrested = false\npercent = 50\n"
    ));
    let WorkloadKind::StressHighalloc(p) = &s.workloads[0].kind else {
        panic!("not a stress-highalloc");
    };
    assert_eq!(
        (
            p.trees,
            p.units,
            p.warmup,
            p.rest,
            p.rested,
            p.alloc.percent
        ),
        (
            Some(2),
            40,
            10 * crate::engine::SEC,
            5 * crate::engine::SEC,
            false,
            50
        )
    );
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"stress-highalloc\"\ndevice = \"sda\"\ntres = 2\n"
    ));
    assert!(e.to_string().contains("did you mean 'trees'"), "{e}");
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"stress-highalloc\"\ndevice = \"sda\"\norder = 11\n"
    ));
    assert_err(&e, "workload[0].order", 10, "order");
    let e = err("[machine]\nram = \"1G\"\n[[workload]]\ntype = \"stress-highalloc\"\n");
    assert!(e.message.contains("device"), "{e}");
}

#[test]
fn simple_writeback_defaults_to_four_times_memtotal_and_factors_1_to_64() {
    use super::super::SimpleWritebackParams;
    let dev = "[machine]\nram = \"512M\"\n[[device]]\nname = \"md0\"\ntype = \"raid0\"\nmembers = 4\nfilesystem = \"xfs\"\n";
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"simple-writeback\"\ndevice = \"md0\"\n"
    ));
    assert_eq!(s.workloads[0].name, "simple-writeback");
    let mem_total = crate::mm::page_alloc::mem_total_pages((512 << 20) / 4096) * 4096;
    assert_eq!(
        s.workloads[0].kind,
        WorkloadKind::SimpleWriteback(SimpleWritebackParams {
            device: "md0".into(),
            size: 4 * mem_total,
            min_factor: 1,
            max_factor: 64,
            iterations: 1,
        })
    );
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"simple-writeback\"\ndevice = \"md0\"\nsize = \"1G\"\nmin_factor = 4\nmax_factor = 16\n"
    ));
    let WorkloadKind::SimpleWriteback(p) = &s.workloads[0].kind else {
        panic!("not a simple-writeback");
    };
    assert_eq!((p.size, p.factors()), (1 << 30, vec![4, 8, 16]));
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"simple-writeback\"\ndevice = \"md0\"\niterations = 4\n"
    ));
    let WorkloadKind::SimpleWriteback(p) = &s.workloads[0].kind else {
        panic!("not a simple-writeback");
    };
    assert_eq!(p.iterations, 4);
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"simple-writeback\"\ndevice = \"md0\"\niterations = 0\n"
    ));
    assert!(e.message.contains("an iteration count"), "{e}");
    // A min above the default max raises the default.
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"simple-writeback\"\ndevice = \"md0\"\nmin_factor = 128\n"
    ));
    let WorkloadKind::SimpleWriteback(p) = &s.workloads[0].kind else {
        panic!("not a simple-writeback");
    };
    assert_eq!(p.factors(), vec![128]);
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"simple-writeback\"\ndevice = \"md0\"\nmin_factor = 8\nmax_factor = 4\n"
    ));
    assert!(e.message.contains("at least min_factor (8)"), "{e}");
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"simple-writeback\"\ndevice = \"md0\"\nmax_facter = 4\n"
    ));
    assert!(e.to_string().contains("max_factor"), "{e}");
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"simple-writeback\"\ndevice = \"md0\"\nsize = \"1000\"\n"
    ));
    assert!(e.message.contains("whole 4 KiB pages"), "{e}");
}

#[test]
fn fsmark_defaults_to_the_letters_command_line_and_3x_memtotal_an_iteration() {
    use super::super::FsmarkParams;
    let dev = "[machine]\nram = \"512M\"\n[[device]]\nname = \"md0\"\ntype = \"raid0\"\nmembers = 4\nfilesystem = \"xfs\"\n";
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"fsmark\"\ndevice = \"md0\"\n"
    ));
    assert_eq!(s.workloads[0].name, "fsmark");
    let mem_total = crate::mm::page_alloc::mem_total_pages((512 << 20) / 4096) * 4096;
    let p = FsmarkParams {
        device: "md0".into(),
        threads: None,
        threads_per_cpu: 1,
        files: 3 * mem_total / (10 << 20),
        file_size: 10 << 20,
        write_size: 16 << 10,
        iterations: 25,
        dirs: 100,
        files_per_dir: 150,
    };
    assert_eq!(s.workloads[0].kind, WorkloadKind::Fsmark(p.clone()));
    assert_eq!(p.threads_on(4), 4);
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"fsmark\"\ndevice = \"md0\"\nthreads_per_cpu = 16\nfiles = 64\nfile_size = \"1M\"\niterations = 3\nwrite_size = \"4K\"\n"
    ));
    let WorkloadKind::Fsmark(q) = &s.workloads[0].kind else {
        panic!("not a fsmark");
    };
    assert_eq!(
        (
            q.threads_on(4),
            q.files,
            q.file_size,
            q.iterations,
            q.write_size
        ),
        (64, 64, 1 << 20, 3, 4096)
    );
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"fsmark\"\ndevice = \"md0\"\nthreads = 3\n"
    ));
    let WorkloadKind::Fsmark(q) = &s.workloads[0].kind else {
        panic!("not a fsmark");
    };
    assert_eq!(q.threads_on(4), 3);
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"fsmark\"\ndevice = \"md0\"\nthreads = 3\nthreads_per_cpu = 2\n"
    ));
    assert!(e.message.contains("not both"), "{e}");
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"fsmark\"\ndevice = \"md0\"\nfile_size = \"1000\"\n"
    ));
    assert!(e.message.contains("whole 4 KiB pages"), "{e}");
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"fsmark\"\ndevice = \"md0\"\niteratons = 3\n"
    ));
    assert!(e.to_string().contains("iterations"), "{e}");
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"fsmark\"\ndevice = \"md0\"\nfiles = 0\n"
    ));
    assert!(e.message.contains("at least 1"), "{e}");
}

#[test]
fn micro_runs_both_2011_tests_with_mmtests_sizes_unless_told() {
    use super::super::{MicroParams, MicroTest};
    let dev = "[machine]\nram = \"512M\"\n[swap]\nsize = \"1G\"\n[[device]]\nname = \"md0\"\ntype = \"raid0\"\nmembers = 4\nfilesystem = \"xfs\"\n";
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"micro\"\ndevice = \"md0\"\n"
    ));
    let mem_total = crate::mm::page_alloc::mem_total_pages((512 << 20) / 4096) * 4096;
    assert_eq!(
        s.workloads[0].kind,
        WorkloadKind::Micro(MicroParams {
            device: "md0".into(),
            tests: vec![MicroTest::FileMmapWrite, MicroTest::MixedMmapWrite],
            threads: None,
            file_mmap_size: 10 * mem_total,
            mixed_size: 3 * mem_total,
            mixed_anon_percent: 30,
            mixed_iter: 5,
        })
    );
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"micro\"\ndevice = \"md0\"\ntests = [\"vmscan-mixed-mmap-write\"]\nthreads = 2\nmixed_size = \"1G\"\nmixed_anon_percent = 50\nmixed_iter = 1\n"
    ));
    let WorkloadKind::Micro(p) = &s.workloads[0].kind else {
        panic!("not a micro");
    };
    assert_eq!(
        (
            p.tests.clone(),
            p.threads,
            p.mixed_size,
            p.mixed_anon_percent,
            p.mixed_iter
        ),
        (vec![MicroTest::MixedMmapWrite], Some(2), 1 << 30, 50, 1)
    );
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"micro\"\ndevice = \"md0\"\ntests = [\"vmscan-file-mmap-wrte\"]\n"
    ));
    assert!(e.to_string().contains("vmscan-file-mmap-write"), "{e}");
    assert_eq!(e.key, "workload[0].tests[0]");
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"micro\"\ndevice = \"md0\"\ntests = []\n"
    ));
    assert!(e.message.contains("array of micro tests"), "{e}");
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"micro\"\ndevice = \"md0\"\nmixed_anon_percent = 101\n"
    ));
    assert!(e.message.contains("0 to 100"), "{e}");
    // The anonymous part must fit in RAM + swap.
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"micro\"\ndevice = \"md0\"\nmixed_size = \"8G\"\nmixed_anon_percent = 50\n"
    ));
    assert!(e.to_string().contains("mixed_size"), "{e}");
}

const CGROUP_BASE: &str = "[machine]\nram = \"1G\"\n";

/// `[[cgroup]]`: cgroup file names as dotted keys, limits rounded up to pages, -1 for
/// unlimited, use_hierarchy inherited, and a workload placed by name.
#[test]
fn cgroups_take_their_file_names_and_workloads_join_them() {
    let s = ok(&format!(
        "{CGROUP_BASE}[[cgroup]]\nname = \"A\"\nmemory.limit_in_bytes = 5000\nmemory.use_hierarchy = 1\n\
         [[cgroup]]\nname = \"A/B\"\nmemory.soft_limit_in_bytes = 0\nmemory.swappiness = 10\n\
         [[cgroup]]\nname = \"C\"\nmemory.limit_in_bytes = -1\n\
         [[workload]]\ntype = \"mem_eater\"\nsize = \"1M\"\ncgroup = \"A/B\"\n\
         [[workload]]\ntype = \"mem_eater\"\nsize = \"1M\"\ncgroup = \"/\"\n"
    ));
    assert_eq!(s.cgroups.len(), 3);
    assert_eq!(
        s.cgroups[0].limit_in_bytes,
        Some(8192),
        "rounded up to whole pages"
    );
    assert_eq!(s.cgroups[1].parent, Some(0));
    assert!(s.cgroups[1].use_hierarchy, "inherited from A");
    assert_eq!(s.cgroups[1].soft_limit_in_bytes, Some(0));
    assert_eq!(s.cgroups[1].swappiness, Some(10));
    assert_eq!(s.cgroups[2].limit_in_bytes, None);
    assert!(!s.cgroups[2].use_hierarchy, "the root's default");
    assert_eq!(s.workloads[0].cgroup, Some(1));
    assert_eq!(s.workloads[1].cgroup, None, "\"/\" is the root");
}

#[test]
fn a_misspelt_cgroup_file_gets_a_suggestion() {
    let e = err(&format!(
        "{CGROUP_BASE}[[cgroup]]\nname = \"A\"\nmemory.limit_in_byte = \"1G\"\n"
    ));
    assert_err(
        &e,
        "cgroup[0].memory.limit_in_byte",
        5,
        "unknown memory cgroup file",
    );
    assert_eq!(e.suggestion.as_deref(), Some("limit_in_bytes"));
}

#[test]
fn a_cgroup_needs_its_parent_first() {
    let e = err(&format!("{CGROUP_BASE}[[cgroup]]\nname = \"A/B\"\n"));
    assert_err(&e, "cgroup[0].name", 4, "needs its parent \"A\"");
}

#[test]
fn a_cgroup_below_a_hierarchical_parent_cannot_clear_use_hierarchy() {
    let e = err(&format!(
        "{CGROUP_BASE}[[cgroup]]\nname = \"A\"\nmemory.use_hierarchy = 1\n[[cgroup]]\nname = \"A/B\"\nmemory.use_hierarchy = 0\n"
    ));
    assert_err(
        &e,
        "cgroup[1].memory.use_hierarchy",
        8,
        "cannot clear memory.use_hierarchy",
    );
}

#[test]
fn a_workload_in_an_unknown_cgroup_gets_a_suggestion() {
    let e = err(&format!(
        "{CGROUP_BASE}[[cgroup]]\nname = \"build\"\n[[workload]]\ntype = \"mem_eater\"\nsize = \"1M\"\ncgroup = \"biuld\"\n"
    ));
    assert_err(&e, "workload[0].cgroup", 8, "no [[cgroup]] named \"biuld\"");
    assert_eq!(e.suggestion.as_deref(), Some("build"));
}

#[test]
fn cgroup_names_are_paths_of_names() {
    for bad in ["\"\"", "\"A//B\"", "\"../A\"", "\"A/\""] {
        let e = err(&format!("{CGROUP_BASE}[[cgroup]]\nname = {bad}\n"));
        assert_err(&e, "cgroup[0].name", 4, "expected a path");
    }
    let e = err(&format!(
        "{CGROUP_BASE}[[cgroup]]\nname = \"A\"\n[[cgroup]]\nname = \"A\"\n"
    ));
    assert!(e.message.contains("duplicate cgroup"), "{e}");
}

/// `cpus` on a workload: taskset's CPU list, checked against the machine.
#[test]
fn a_workload_is_pinned_to_a_cpu_list_and_may_run_in_the_background() {
    let head =
        "[machine]\nram = \"1G\"\ncpus = 16\n[[workload]]\ntype = \"mem_eater\"\nsize = \"16M\"\n";
    let s = ok(&format!(
        "{head}cpus = \"8-11, 0,2,3-3\"\nbackground = true\n"
    ));
    assert_eq!(s.workloads[0].cpus, vec![0, 2, 3, 8, 9, 10, 11]);
    assert!(s.workloads[0].background);
    let s = ok(head);
    assert!(s.workloads[0].cpus.is_empty());
    assert!(!s.workloads[0].background);
    let e = err(&format!("{head}cpus = \"0-16\"\n"));
    assert_err(
        &e,
        "workload[0].cpus",
        7,
        "CPU 16 does not exist: the machine has 16 CPUs (0-15)",
    );
    let e = err(&format!("{head}cpus = \"7-3\"\n"));
    assert_err(&e, "workload[0].cpus", 7, "runs backwards");
    let e = err(&format!("{head}cpus = \"0-x\"\n"));
    assert_err(&e, "workload[0].cpus", 7, "expected a CPU list");
    let e = err(&format!("{head}cpus = 4\n"));
    assert_err(&e, "workload[0].cpus", 7, "expected a CPU list");
    let e = err(&format!("{head}background = \"yes\"\n"));
    assert_err(&e, "workload[0].background", 7, "true or false");
}

#[test]
fn kbuild_takes_the_median_cpu_time_of_a_compile() {
    let dev = "[machine]\nram = \"1G\"\n[[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext4\"\n";
    let s = ok(&format!(
        "{dev}[[workload]]\ntype = \"kbuild\"\ndevice = \"sda\"\ncompile_cpu = \"150ms\"\n"
    ));
    let WorkloadKind::Kbuild(p) = &s.workloads[0].kind else {
        panic!("not a kbuild");
    };
    assert_eq!(p.compile_cpu, 150_000_000);
    let e = err(&format!(
        "{dev}[[workload]]\ntype = \"kbuild\"\ndevice = \"sda\"\ncompile_cpu = \"0s\"\n"
    ));
    assert_err(&e, "workload[0].compile_cpu", 10, "greater than 0");
}

// ----------------------------------------------------------------------------------------
// The daemons.

const DAEMONS_MACHINE: &str = "[machine]\nram = \"4G\"\n[[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext4\"\n[slab]\npage_cache = \"100M\"\npage_cache_active = \"25M\"\n";

/// The (text, interval) of a daemons workload with `keys`, on [`DAEMONS_MACHINE`].
fn daemons_with(keys: &str) -> (u64, u64) {
    let s = ok(&format!(
        "{DAEMONS_MACHINE}[[workload]]\ntype = \"daemons\"\n{keys}"
    ));
    let w = &s.workloads[0];
    assert_eq!(w.name, "daemons");
    assert!(w.background, "the daemons never finish");
    match &w.kind {
        WorkloadKind::Daemons(p) => (p.text, p.interval),
        other => panic!("not daemons: {other:?}"),
    }
}

#[test]
fn daemons_run_all_of_the_active_page_cache_every_10s_in_the_background() {
    assert_eq!(daemons_with(""), (25 * M, 10 * S));
    let keys = "text = \"10M\"\ninterval = \"2s\"\nbackground = true\n";
    assert_eq!(daemons_with(keys), (10 * M, 2 * S));
    // All of the active part is the bound, inclusive; sizes round down to pages.
    assert_eq!(daemons_with("text = 26218495\n"), (25 * M, 10 * S));
}

#[test]
fn daemons_need_active_page_cache_a_positive_interval_and_the_background() {
    let daemons_err = |keys: &str| {
        err(&format!(
            "{DAEMONS_MACHINE}[[workload]]\ntype = \"daemons\"\n{keys}"
        ))
    };
    for (keys, key, says) in [
        (
            "text = \"26M\"\n",
            "text",
            "at most [slab] page_cache_active",
        ),
        ("text = \"1K\"\n", "text", "at least a page"),
        ("interval = \"0s\"\n", "interval", "greater than 0"),
        ("background = false\n", "background", "never finish"),
    ] {
        assert_err(&daemons_err(keys), &format!("workload[0].{key}"), 12, says);
    }
    let e = daemons_err("intervall = \"5s\"\n");
    assert_eq!(e.suggestion.as_deref(), Some("interval"), "{e}");
    let e = err("[machine]\nram = \"4G\"\n[[workload]]\ntype = \"daemons\"\n");
    assert_eq!(e.key, "workload[0].type", "{e}");
    assert!(e.message.contains("set [slab] page_cache"), "{e}");
    let e = err(&format!(
        "{DAEMONS_MACHINE}[[workload]]\ntype = \"deamons\"\n"
    ));
    assert_eq!(e.suggestion.as_deref(), Some("daemons"), "{e}");
}
