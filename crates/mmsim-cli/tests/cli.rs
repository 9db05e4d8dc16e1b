//! The command line: exit statuses, error messages, generated help.

use std::process::Command;

fn mmsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn bad_scenario(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("mmsim-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn validate_accepts_the_examples() {
    for ex in [
        "examples/anon-pressure.toml",
        "examples/kswapd-balance.toml",
        "examples/parallelio-step.toml",
        "examples/mmap-write.toml",
    ] {
        let (code, out, err) = mmsim(&["validate", ex]);
        assert_eq!(code, 0, "{ex}: {err}");
        assert!(out.contains(": ok"), "{out}");
    }
}

#[test]
fn a_misspelt_key_exits_2_naming_file_line_key_and_suggestion() {
    let f = bad_scenario(
        "misspelt.toml",
        "[machine]\nram = \"1G\"\n\n[vm]\nswapines = 60\n",
    );
    let (code, _, err) = mmsim(&["validate", &f]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("misspelt.toml:5"), "{err}");
    assert!(
        err.contains("swapines") && err.contains("swappiness"),
        "{err}"
    );
}

#[test]
fn a_bad_size_and_zero_cpus_exit_2() {
    let f = bad_scenario("size.toml", "[machine]\nram = \"4Q\"\n");
    let (code, _, err) = mmsim(&["validate", &f]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("machine.ram"), "{err}");
    let f = bad_scenario("cpus.toml", "[machine]\nram = \"1G\"\ncpus = 0\n");
    let (code, _, err) = mmsim(&["run", &f]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cpus"), "{err}");
}

#[test]
fn an_unknown_preset_or_switch_exits_2_with_a_suggestion() {
    let (code, _, err) = mmsim(&[
        "run",
        "examples/kswapd-balance.toml",
        "--kernel",
        "lessdisrupt-v7r1",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("lessdisrupt-v7r10"), "{err}");
    let (code, _, err) = mmsim(&[
        "run",
        "examples/kswapd-balance.toml",
        "--set",
        "stall_after_page_lists=true",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("stall_after_page_list'"), "{err}");
}

#[test]
fn kernels_lists_every_preset_and_switch_with_its_patch() {
    let (code, out, _) = mmsim(&["kernels"]);
    assert_eq!(code, 0);
    for p in mmsim::presets::PRESETS {
        assert!(out.contains(p.name), "{}", p.name);
    }
    for d in mmsim::presets::SWITCHES {
        assert!(out.contains(d.name) && out.contains(d.patch), "{}", d.name);
    }
}

#[test]
fn run_writes_json_with_the_documented_top_level_keys() {
    let dir = std::env::temp_dir().join(format!("mmsim-cli-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r.json");
    let (code, stdout, err) = mmsim(&[
        "run",
        "examples/kswapd-balance.toml",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("Kswapd pages scanned"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    for key in [
        "kernel",
        "seed",
        "simulated_seconds",
        "vmstat",
        "mmtests_vmstat",
        "workloads",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert!(v["vmstat"]["pgscan_kswapd_normal"].is_u64());
    assert!(v["mmtests_vmstat"]["Kswapd efficiency"].is_number());
}

#[test]
fn trace_writes_ftrace_lines_of_the_vmscan_tracepoints() {
    let dir = std::env::temp_dir().join(format!("mmsim-cli-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("t.txt");
    let (code, _, err) = mmsim(&[
        "run",
        "examples/kswapd-balance.toml",
        "--trace",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    for event in [
        "mm_vmscan_kswapd_sleep: nid=0",
        "mm_vmscan_wakeup_kswapd: nid=0 zid=",
        "mm_vmscan_kswapd_wake: nid=0 order=0",
        "mm_vmscan_lru_isolate: isolate_mode=0 order=0 nr_requested=",
        "mm_vmscan_lru_shrink_inactive: nid=0 zid=",
        "mm_vmscan_writepage: page=0xffffea",
        "mm_vmscan_direct_reclaim_begin: order=0 may_writepage=1 gfp_flags=GFP_HIGHUSER_MOVABLE",
        "mm_vmscan_direct_reclaim_end: nr_reclaimed=",
        "writeback_wait_iff_congested: usec_timeout=",
    ] {
        assert!(text.contains(event), "no '{event}' in the trace");
    }
    // "TASK-PID [CPU] SECONDS.MICROS: event: fields", time never going backwards per task.
    let line = text
        .lines()
        .find(|l| l.contains("mm_vmscan_kswapd_wake"))
        .unwrap();
    let (head, rest) = line.split_once(": ").unwrap();
    assert!(
        head.trim_start().starts_with("kswapd0-1 ") && head.contains(" [000] "),
        "{line}"
    );
    assert!(rest.starts_with("mm_vmscan_kswapd_wake: "), "{line}");
    let secs: f64 = head.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(secs > 0.0);
    // Several kernels: one file each, named after the kernel.
    let (code, _, err) = mmsim(&[
        "run",
        "examples/kswapd-balance.toml",
        "--kernel",
        "3.9",
        "--kernel",
        "lessdisrupt-v7r10",
        "--trace",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(dir.join("t.3.9.txt").exists() && dir.join("t.lessdisrupt-v7r10.txt").exists());
}

#[test]
fn reproduce_parallelio_fast_is_the_same_at_any_thread_count_and_judges_every_claim() {
    let dir = std::env::temp_dir().join(format!("mmsim-cli-repro-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let (code, one, err) = mmsim(&[
        "reproduce",
        "parallelio",
        "--fast",
        "--jobs",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, two, err) = mmsim(&["reproduce", "parallelio", "--fast", "--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(one, two, "output depends on the number of threads");
    for row in [
        "Ops memcachetest-0M",
        "Kswapd efficiency",
        "Max  sda-w_await",
    ] {
        assert!(one.contains(row), "no '{row}' row");
    }
    assert_eq!(
        one.lines()
            .filter(|l| l.starts_with('P') && (l.contains(" holds ") || l.contains(" FAILS ")))
            .count(),
        12
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["claims"].as_array().unwrap().len(), 12);
    assert_eq!(v["published"]["3.9"]["Ops memcachetest-2385M"], 4208.0);
    assert!(v["simulated"]["lessdisrupt-v7r10"]["Kswapd efficiency"].is_number());
    let (code, _, err) = mmsim(&["reproduce", "parallelo"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_dd_larger_than_its_filesystem_or_on_an_unknown_device_exits_2() {
    let base = "[machine]\nram = \"1G\"\n[[device]]\nname = \"sda\"\ntype = \"usb\"\nsize = \"1G\"\n[[workload]]\ntype = \"dd\"\n";
    let f = bad_scenario(
        "dd-big.toml",
        &format!("{base}device = \"sda\"\nsize = \"2G\"\n"),
    );
    let (code, _, err) = mmsim(&["validate", &f]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("dd-big.toml:10")
            && err.contains("workload[0].size")
            && err.contains("larger than the filesystem"),
        "{err}"
    );
    let f = bad_scenario(
        "dd-dev.toml",
        &format!("{base}device = \"sdb\"\nsize = \"1M\"\n"),
    );
    let (code, _, err) = mmsim(&["validate", &f]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("workload[0].device") && err.contains("sda"),
        "{err}"
    );
}
