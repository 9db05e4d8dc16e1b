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
    let mut examples: Vec<String> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"))
            .expect("the examples folder")
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".toml"))
            .map(|name| format!("examples/{name}"))
            .collect();
    examples.sort();
    assert!(examples.len() >= 10, "{examples:?}");
    for ex in &examples {
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
    // The README's count of them stays true.
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let count = format!(
        "`mmsim kernels` for the {} switches",
        mmsim::presets::SWITCHES.len()
    );
    assert!(readme.contains(&count), "the README should say {count}");
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
        "dirty_throttle",
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
        "mm_vmscan_writepage: page=ffffea",
        "mm_vmscan_direct_reclaim_begin: order=0 may_writepage=1 gfp_flags=GFP_HIGHUSER_MOVABLE",
        "mm_vmscan_direct_reclaim_end: nr_reclaimed=",
        "writeback_wait_iff_congested: usec_timeout=",
        "mm_shrink_slab_start: prune_super+0x0/0x1b0 ffff88007b0c2ec8: objects to shrink ",
        "mm_shrink_slab_end: prune_super+0x0/0x1b0 ffff88007b0c2ec8: unused scan count ",
        "mm_page_alloc: page=ffffea",
        "mm_page_free: page=ffffea",
        "mm_page_free_batched: page=ffffea",
    ] {
        assert!(text.contains(event), "no '{event}' in the trace");
    }
    assert!(!text.contains("GFP_WRITE"), "3.9 has no GFP_WRITE name");
    // 3.9's "%16s-%-5d [%03d] irq-info %5lu.%06lu: event: fields", kernel threads with
    // small pids (not 1), user tasks from 2000, CPUs other than 0 in use.
    let line = text
        .lines()
        .find(|l| l.contains("mm_vmscan_kswapd_wake"))
        .unwrap();
    let (head, rest) = line.split_once(": ").unwrap();
    assert_eq!(&head[..26], "         kswapd0-35    [00", "{line}");
    assert_eq!(&head[27..34], "] .... ", "{line}");
    assert!(rest.starts_with("mm_vmscan_kswapd_wake: "), "{line}");
    assert!(text
        .lines()
        .any(|l| l.contains("] d... ") && l.contains("mm_vmscan_lru_isolate")));
    assert!(
        text.lines().any(|l| l[17..].starts_with("20")),
        "no user pid from 2000"
    );
    assert!(
        text.lines().any(|l| !l.contains(" [000] ")),
        "every event on CPU 0"
    );
    let secs: f64 = head.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(secs > 0.0);
    // Direct reclaim takes time: the CPU of the pages it scans is spent between its begin
    // and end events, so no reclaim lasts zero time.
    let mut begun = std::collections::BTreeMap::new();
    let mut pairs = 0;
    for l in text.lines() {
        let Some((head, rest)) = l.split_once(": ") else {
            continue;
        };
        let task = head.split('[').next().unwrap().trim().to_string();
        let at: f64 = head.rsplit(' ').next().unwrap().parse().unwrap();
        if rest.starts_with("mm_vmscan_direct_reclaim_begin") {
            begun.insert(task, at);
        } else if rest.starts_with("mm_vmscan_direct_reclaim_end") {
            let start = begun.remove(&task).expect("an end follows a begin");
            assert!(at > start, "a direct reclaim of no time: {l}");
            pairs += 1;
        }
    }
    assert!(pairs > 0);
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
    // Sampling for the HTML report changes nothing the terminal shows.
    let site = dir.join("site");
    let (code, two, err) = mmsim(&[
        "reproduce",
        "parallelio",
        "--fast",
        "--jobs",
        "2",
        "--html",
        site.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        one, two,
        "output depends on the number of threads or on --html"
    );
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    for part in [
        "<h2 id=\"claims\">Claims</h2>",
        "<td class=\"holds\">holds</td>",
        "Ops memcachetest-0M",
        "graphs/procedure-dirty.3.9.svg",
        "graphs/procedure-sda-await.lessdisrupt-v7r10.svg",
    ] {
        assert!(index.contains(part), "no {part} in the index");
    }
    assert!(site.join("procedure-kswapd.html").exists());
    assert!(
        !one.contains("Seed 1 "),
        "the default seed is not announced"
    );
    // The report says when the seed is not the default.
    let (code, seeded, err) = mmsim(&["reproduce", "parallelio", "--fast", "--seed", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(seeded.contains("\nSeed 2 (the default is 1)"), "{seeded}");
    assert!(one.contains("(no MMIO hole below 4 GiB)"), "{one}");
    let (code, _, err) = mmsim(&["reproduce", "parallelio", "--pci-hole", "5G"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("up to 4080M"), "{err}");
    let (code, _, err) = mmsim(&["reproduce", "parallelio", "--page-cache", "2G"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("up to 1G"), "{err}");
    for (layout, gap, says) in [
        (
            "test-disk",
            "10G",
            "--swap-gap applies to --swap-on test-disk-start only",
        ),
        ("test-disk-start", "2T", "up to 1T"),
    ] {
        let args = [
            "reproduce",
            "parallelio",
            "--swap-on",
            layout,
            "--swap-gap",
            gap,
        ];
        let (code, _, err) = mmsim(&args);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(says), "{err}");
    }
    let (code, _, err) = mmsim(&["reproduce", "stress-highalloc", "--page-cache", "1M"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--page-cache"), "{err}");
    let (code, _, err) = mmsim(&["reproduce", "nowriteback", "--no-daemons"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--no-daemons does not apply"), "{err}");
    assert!(
        one.contains("(25 MiB active, the text the system's daemons run every 10 s)"),
        "{one}"
    );
    for row in [
        "Ops memcachetest-0M",
        "Kswapd efficiency",
        "Max  sda-w_await",
    ] {
        assert!(one.contains(row), "no '{row}' row");
    }
    let verdicts: Vec<&str> = one
        .lines()
        .filter(|l| l.starts_with('P'))
        .filter(|l| {
            [" holds ", " FAILS ", " not judged "]
                .iter()
                .any(|o| l.contains(o))
        })
        .collect();
    assert_eq!(verdicts.len(), 12, "{one}");
    // The claims name the steps the fast machine ran, say when they could not be judged,
    // and the report says the procedure is not the published one.
    let steps: Vec<&str> = one
        .lines()
        .filter_map(|l| l.strip_prefix("Ops memcachetest-"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(steps.len(), 4, "{one}");
    assert!(
        verdicts[0].contains(&format!("at {} and {}", steps[2], steps[3])),
        "{}",
        verdicts[0]
    );
    assert!(
        one.contains("Caveat: this is not the published procedure"),
        "{one}"
    );
    assert!(
        !one.contains(" holds      swaptotal"),
        "0 against 0 holds: {one}"
    );
    let summary = one.lines().last().unwrap();
    assert!(summary.contains(" of 12 claims hold"), "{summary}");
    for l in one.lines().filter(|l| l.starts_with("     ")) {
        for x in l.split(" = ").skip(1) {
            let num = x.split(',').next().unwrap();
            let decimals = num.split('.').nth(1).map_or(0, str::len);
            assert!(decimals <= 3, "{l}");
        }
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["claims"].as_array().unwrap().len(), 12);
    assert_eq!(v["published"]["3.9"]["Ops memcachetest-2385M"], 4208.0);
    assert!(v["simulated"]["lessdisrupt-v7r10"]["Kswapd efficiency"].is_number());
    assert_eq!(v["procedure"]["page_cache_bytes"], 100 << 20);
    assert!(
        v["procedure"]["ram_bytes"].as_u64().unwrap() < 7336 << 20,
        "--fast"
    );
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

// What a new user hits (issue 7): one test per item, each named after what it shows.

/// A scratch directory of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mmsim-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn an_idle_machine_runs_to_its_duration_and_velocities_divide_by_it() {
    // A mem_eater that fills and then holds: after the fill nothing is runnable and no
    // timer is pending, yet the run lasts its whole duration.
    let f = bad_scenario(
        "idle.toml",
        "[machine]\nram = \"1G\"\n[swap]\nsize = \"1G\"\n[run]\nduration = \"1000s\"\n\
         [[workload]]\ntype = \"mem_eater\"\nsize = \"90%\"\nchunk = \"32M\"\npause = \"0s\"\n\
         then = \"hold\"\n",
    );
    let json = scratch("idle").join("r.json");
    let (code, out, err) = mmsim(&["run", &f, "--json", json.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .next()
            .unwrap()
            .ends_with(", 1000.00 simulated seconds"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["simulated_seconds"], 1000.0);
    let scanned = v["mmtests_vmstat"]["Kswapd pages scanned"]
        .as_f64()
        .unwrap();
    let velocity = v["mmtests_vmstat"]["Kswapd velocity"].as_f64().unwrap();
    assert!(scanned > 0.0);
    assert!(
        (velocity - scanned / 1000.0).abs() < 1e-6,
        "{velocity} {scanned}"
    );
    assert_eq!(v["workload_states"]["mem_eater"]["state"], "holding");
}

#[test]
fn a_workload_short_of_its_measured_phase_says_so_instead_of_0_or_nan() {
    // Population of an 800 MiB pool cannot finish in 1 s; the mem_eater cannot finish its
    // first pass either.
    let f = bad_scenario(
        "short.toml",
        "[machine]\nram = \"1G\"\n[run]\nduration = \"1s\"\n\
         [[workload]]\ntype = \"memcachetest\"\npool = \"80%\"\n\
         [[workload]]\ntype = \"mem_eater\"\nsize = \"10%\"\nchunk = \"4M\"\npause = \"1s\"\n",
    );
    let json = scratch("short").join("r.json");
    let (code, out, err) = mmsim(&["run", &f, "--json", json.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains("NaN") && !out.contains("memcachetest ops"),
        "{out}"
    );
    assert!(
        out.contains("note: memcachetest (3.9) populating: population not finished"),
        "{out}"
    );
    assert!(
        out.contains("note: mem_eater (3.9) filling: first pass not finished"),
        "{out}"
    );
    let text = std::fs::read_to_string(&json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["workload_states"]["memcachetest"]["state"], "populating");
    assert!(v["workloads"]["memcachetest"].get("ops_per_sec").is_none());
    assert!(v["workloads"]["mem_eater"].get("fill_seconds").is_none());
    for (_, metrics) in v["workloads"].as_object().unwrap() {
        assert!(
            metrics.as_object().unwrap().values().all(|m| m.is_number()),
            "{metrics}"
        );
    }
    // The shipped re-touch example does re-touch.
    let (code, out, err) = mmsim(&["run", "examples/kswapd-balance.toml"]);
    assert_eq!(code, 0, "{err}");
    let passes = out
        .lines()
        .find(|l| l.starts_with("mem_eater retouch_passes"))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|x| x.parse::<f64>().ok())
        .unwrap();
    assert!(passes >= 2.0, "{out}");
}

#[test]
fn time_series_intervals_have_a_floor_and_a_large_file_is_announced() {
    let csv = scratch("series").join("s.csv");
    let csv = csv.to_str().unwrap();
    let (code, _, err) = mmsim(&[
        "run",
        "examples/kswapd-balance.toml",
        "--timeseries",
        csv,
        "--sample-interval",
        "1ns",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--sample-interval 1ns: at least 1ms"), "{err}");
    // A million simulated seconds at 1 ms would be a billion rows: say so before the run.
    // (The run itself ends as soon as its one workload has.)
    let f = bad_scenario(
        "long.toml",
        "[machine]\nram = \"1G\"\n[run]\nduration = \"1000000s\"\nend = \"workloads\"\n\
         [[workload]]\ntype = \"sync\"\n",
    );
    let (code, _, err) = mmsim(&["run", &f, "--timeseries", csv, "--sample-interval", "1ms"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning:") && err.contains("1000000001 samples"),
        "{err}"
    );
    let text = std::fs::read_to_string(csv).unwrap();
    assert!(
        text.starts_with("time_s,"),
        "the header, whenever the run ends: {text}"
    );
}

#[test]
fn output_paths_are_checked_before_the_run_and_exit_2() {
    let dir = scratch("paths");
    let missing = dir.join("no/such/dir/x.json");
    // A file where --html wants a directory.
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let (missing, dir, file) = (
        missing.to_str().unwrap(),
        dir.to_str().unwrap(),
        file.to_str().unwrap(),
    );
    let run = ["run", "examples/kswapd-balance.toml"];
    let reproduce = ["reproduce", "parallelio", "--fast"];
    for (command, option, path) in [
        (&run[..], "--json", missing),
        (&run[..], "--trace", dir),
        (&run[..], "--timeseries", missing),
        (&run[..], "--html", file),
        (&reproduce[..], "--json", missing),
        (&reproduce[..], "--html", file),
    ] {
        let mut args = command.to_vec();
        args.extend([option, path]);
        let (code, out, err) = mmsim(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(option) && err.contains(path), "{err}");
        assert!(out.is_empty(), "no run before the check: {out}");
    }
}

#[test]
fn run_shows_progress_on_a_terminal_and_check_takes_an_interval() {
    // `script` gives the run a terminal; without one (as here) no bar is drawn.
    let bin = env!("CARGO_BIN_EXE_mmsim");
    let out = Command::new("script")
        .args([
            "-qec",
            &format!("{bin} run examples/kswapd-balance.toml"),
            "/dev/null",
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("/60 simulated s"),
        "no progress bar: {shown}"
    );
    let (_, plain, err) = mmsim(&["run", "examples/kswapd-balance.toml"]);
    assert!(!plain.contains("/60 simulated s") && !err.contains("/60 simulated s"));
    let (code, out, err) = mmsim(&[
        "run",
        "examples/kswapd-balance.toml",
        "--check",
        "--check-interval",
        "100ms",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, plain, "checking changes nothing it computes");
    let (code, _, err) = mmsim(&[
        "run",
        "examples/kswapd-balance.toml",
        "--check-interval",
        "1s",
    ]);
    assert_eq!(code, 2, "--check-interval without --check: {err}");
}

#[test]
fn validate_predicts_host_memory_and_run_refuses_a_machine_that_cannot_fit() {
    let (code, out, err) = mmsim(&["validate", "examples/anon-pressure.toml"]);
    assert_eq!(code, 0, "{err}");
    let mib: u64 = out
        .split("needs about ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    // 6 GiB of frames at 24 bytes each is 36 MiB; the estimate errs high, not wildly.
    assert!((36..400).contains(&mib), "{out}");
    let f = bad_scenario(
        "huge.toml",
        "[machine]\nram = \"2T\"\n[swap]\nsize = \"2T\"\n[[workload]]\n\
         type = \"mem_eater\"\nsize = \"50%\"\n",
    );
    let (code, out, err) = mmsim(&["validate", &f]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("GiB") || out.contains("MiB"), "{out}");
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m
                .lines()
                .find(|l| l.starts_with("MemAvailable:"))?
                .to_string();
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map(|kib| kib << 10);
    // Three 2 TiB machines at once need far more than this project's 24 GiB hosts have.
    if available.is_some_and(|a| a < 48 << 30) {
        let (code, out, err) = mmsim(&[
            "run",
            &f,
            "--kernel",
            "3.9",
            "--kernel",
            "mmotm-20130522",
            "--kernel",
            "lessdisrupt-v7r10",
        ]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("host memory") && err.contains("--force"),
            "{err}"
        );
        assert!(out.is_empty());
    }
}

#[test]
fn the_readme_cites_only_files_that_exist_and_quotes_the_status_of_docs() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    for cited in readme.split('`').skip(1).step_by(2) {
        // Paths into this repository (or where a user might look for one); kernel source
        // paths such as `include/trace/events/vmscan.h` are citations, not files here.
        let first = cited.split('/').next().unwrap_or("");
        let looks_like_a_path = !cited.contains(' ')
            && (cited.ends_with(".md")
                || ["crates", "docs", "examples", "shared", ".ci"].contains(&first));
        if looks_like_a_path {
            assert!(
                std::path::Path::new(root).join(cited).exists(),
                "README cites `{cited}`, which is not in the repository"
            );
        }
    }
    // Each experiment's claim count and fidelity share, from its committed output, must be
    // what the README quotes in the seed's status bullet and in the experiment's section.
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    for (seed, experiment) in [
        ("000", "parallelio"),
        ("001", "memcg-softlimit"),
        ("002", "nowriteback"),
        ("003", "dirty-throttling"),
        ("004", "stress-highalloc"),
    ] {
        let docs =
            std::fs::read_to_string(format!("{root}/docs/reproduce-{experiment}.txt")).unwrap();
        let (held, fidelity) = docs_status(&docs);
        let bullet = flat
            .split(&format!("- **Seed {seed}**"))
            .nth(1)
            .unwrap_or_else(|| panic!("the README has no status line for seed {seed}"))
            .split(" - **")
            .next()
            .unwrap();
        let section = flat
            .split(&format!("## Reproduction: `mmsim reproduce {experiment}`"))
            .nth(1)
            .unwrap_or_else(|| panic!("the README has no section for {experiment}"))
            .split(" ## ")
            .next()
            .unwrap();
        let bold = format!("**{held}");
        assert!(
            bullet.contains(&held),
            "seed {seed}'s status line does not say docs' '{held}'"
        );
        assert!(
            section.contains(&bold),
            "the {experiment} section does not say docs' '{held}' in bold"
        );
        if let Some(percent) = fidelity {
            let share = format!("{percent} of the published cells");
            assert!(
                bullet.contains(&share),
                "seed {seed}'s status line does not say docs' '{share}'"
            );
            assert!(
                section.contains(&percent),
                "the {experiment} section does not quote docs' {percent}"
            );
        }
    }
}

/// A reproduction's "N of M claims hold" and, where it prints one, its fidelity share ("48%").
fn docs_status(docs: &str) -> (String, Option<String>) {
    let summary = docs
        .lines()
        .rev()
        .find(|l| l.contains(" claims hold"))
        .expect("the output ends with its claim count");
    let held = summary.split(" claims hold").next().unwrap().to_string() + " claims hold";
    let fidelity = docs.lines().find(|l| l.starts_with("Fidelity: ")).map(|l| {
        let open = l.find('(').unwrap();
        let close = l[open..].find(')').unwrap();
        l[open + 1..open + close].to_string()
    });
    (held, fidelity)
}

#[test]
fn headers_never_run_together_and_one_kernel_has_no_percentages() {
    // A long label from --set, beside a short one: every header line splits into one name
    // part per kernel.
    let (code, out, err) = mmsim(&[
        "run",
        "examples/kswapd-balance.toml",
        "--kernel",
        "3.9",
        "--kernel",
        "mmotm-20130522",
        "--set",
        "kswapd_block_on_writeback=false",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.trim_start().starts_with("3.9") {
            let parts = l.split_whitespace().count();
            assert_eq!(parts, 2, "header line runs together: {l:?}");
            let below = lines[i + 1].split_whitespace().count();
            assert!(below <= 2, "{:?}", lines[i + 1]);
        }
    }
    let (code, out, err) = mmsim(&["run", "examples/kswapd-balance.toml"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("0.00%)"), "{out}");
    let (code, _, err) = mmsim(&[
        "run",
        "examples/kswapd-balance.toml",
        "--kernel",
        "3.9",
        "--kernel",
        "3.9",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("given twice"), "{err}");
}

#[test]
fn messages_name_what_is_wrong() {
    let f = bad_scenario(
        "wl.toml",
        "[machine]\nram = \"1G\"\n[[workload]]\ntype = \"snyc\"\n",
    );
    let (code, _, err) = mmsim(&["validate", &f]);
    assert_eq!(code, 2);
    assert!(err.contains("\"sync\" or \"daemons\""), "{err}");
    let ex = "examples/kswapd-balance.toml";
    for (args, says) in [
        (
            vec!["--set", "lessdisrupt=maybe"],
            "unknown switch 'lessdisrupt'",
        ),
        (
            vec!["--set", "kswapd_block_on_writeback=1"],
            "must be true or false",
        ),
        (vec!["--seed", "-5"], "expected a whole number"),
        (
            vec!["--timeseries", "/tmp/x.csv", "--sample-interval", "0s"],
            "must be positive",
        ),
        (
            vec!["--sample-interval", "1s"],
            "--timeseries FILE or --html DIR",
        ),
    ] {
        let mut all = vec!["run", ex];
        all.extend(&args);
        let (code, _, err) = mmsim(&all);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let (code, _, err) = mmsim(&["reproduce", "parallelio", "--jobs", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--jobs"), "{err}");
    let (_, help, _) = mmsim(&["reproduce", "--help"]);
    assert!(help.contains("at least 1"), "{help}");
}

#[test]
fn nfs_mounts_report_rpc_counts_and_times_per_operation() {
    let json = scratch("nfs").join("r.json");
    let (code, out, err) = mmsim(&[
        "run",
        "examples/nfs-dd.toml",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("RTT-ms nfs0-WRITE") && out.contains("Ops    nfs0-COMMIT"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let write = &v["nfs"]["nfs0"]["WRITE"];
    let ops = write["ops"].as_u64().unwrap();
    assert!(ops > 0, "{write}");
    // 2 GiB of dd, every byte in a WRITE, and each WRITE's execution is queue + RTT.
    assert!(write["bytes_sent"].as_u64().unwrap() >= 2 << 30, "{write}");
    let (rtt, exe) = (
        write["rtt_ms"].as_f64().unwrap(),
        write["execute_ms"].as_f64().unwrap(),
    );
    assert!(rtt > 0.0 && exe >= rtt, "{write}");
    let avg = write["avg_rtt_ms"].as_f64().unwrap();
    assert!((avg - rtt / ops as f64).abs() < 1e-6, "{write}");
    assert!(v["nfs"]["nfs0"]["COMMIT"]["ops"].as_u64().unwrap() > 0);
}

/// `mmsim bench` prints every figure of each scenario (no timing is checked).
#[test]
fn bench_prints_each_named_figure_of_both_scenarios() {
    let (code, out, err) = mmsim(&["bench", "--runs", "2", "--quick"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("2 runs of each scenario after one warm-up run"),
        "{out}"
    );
    let sections: Vec<&str> = out.split("\n\n").skip(1).collect();
    assert_eq!(sections.len(), 2, "{out}");
    for (section, name) in sections.iter().zip(["anon:", "file:"]) {
        assert!(section.starts_with(name), "{section}");
        for figure in [
            "simulated s per wall s",
            "boot ",
            "run ",
            "page-table hits",
            "minor faults",
            "major faults",
            "pages scanned",
            "pages isolated",
            "pages reclaimed",
            "IO pages read",
            "IO pages written",
            "of which swap",
            "accesses, each counted once",
            "peak heap ",
            "peak RSS ",
            "bytes per frame",
        ] {
            assert!(
                section.contains(figure),
                "{figure} missing from:\n{section}"
            );
        }
    }
}

#[test]
fn bench_takes_one_scenario_and_refuses_an_unknown_one() {
    let (code, out, err) = mmsim(&["bench", "--runs", "1", "--quick", "--scenario", "file"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("\nfile: ") && !out.contains("\nanon: "),
        "{out}"
    );
    let (code, _, err) = mmsim(&["bench", "--scenario", "swap"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("anon") && err.contains("file"), "{err}");
    let (code, _, err) = mmsim(&["bench", "--runs", "0"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn reproduce_dirty_throttling_runs_a_case_under_both_kernels_alike_at_any_thread_count() {
    let json = scratch("dirty-throttling").join("r.json");
    let case = "ext4-1dd-1M-8p-187M";
    let (code, one, err) = mmsim(&[
        "reproduce",
        "dirty-throttling",
        "--case",
        case,
        "--jobs",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for kernel in ["2.6.37-rc5", "ioless-v3"] {
        assert!(
            one.lines()
                .any(|l| l.starts_with(case) && l.contains(kernel)),
            "{one}"
        );
    }
    // One 1-dd case on 256 MiB: no claim has its cases.
    assert!(one.contains("0 of 5 claims hold, 5 not judged"), "{one}");
    let site = scratch("dirty-throttling-html").join("site");
    let (code, two, err) = mmsim(&[
        "reproduce",
        "dirty-throttling",
        "--case",
        case,
        "--jobs",
        "2",
        "--html",
        site.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(one, two, "the same at any thread count, and with --html");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(index.contains(case), "{index}");
    for kernel in ["2.6.37-rc5", "ioless-v3"] {
        let svg = site
            .join("graphs")
            .join(format!("{case}-dirty.{kernel}.svg"));
        assert!(svg.exists(), "{}", svg.display());
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["cases"][0]["case"], case);
    assert!(v["cases"][0]["kernels"]["ioless-v3"]["pause_max_ms"].is_number());
    assert_eq!(v["claims"].as_array().unwrap().len(), 5);
}

#[test]
fn reproduce_dirty_throttling_names_a_misspelt_case_and_refuses_parallelio_flags() {
    let (code, _, err) = mmsim(&[
        "reproduce",
        "dirty-throttling",
        "--case",
        "xfs-1dd-1M-8p-2952M",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean 'xfs-1dd-1M-8p-"), "{err}");
    let (code, _, err) = mmsim(&["reproduce", "dirty-throttling", "--fresh"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--fresh applies to parallelio only"), "{err}");
    let (code, _, err) = mmsim(&["reproduce", "parallelio", "--full"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("dirty-throttling only"), "{err}");
}

#[test]
fn reproduce_stress_highalloc_refuses_other_experiments_flags() {
    for flag in [["--fresh", ""], ["--pci-hole", "1G"], ["--case", "x"]] {
        let mut args = vec!["reproduce", "stress-highalloc", flag[0]];
        if !flag[1].is_empty() {
            args.push(flag[1]);
        }
        let (code, out, err) = mmsim(&args);
        assert_eq!(code, 2, "{flag:?}: {err}");
        assert!(out.is_empty());
        assert!(
            err.contains(flag[0]) && err.contains("does not apply to stress-highalloc"),
            "{err}"
        );
    }
    for flag in ["--versions", "--trees-at-boot"] {
        let (code, _, err) = mmsim(&["reproduce", "parallelio", flag]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains(&format!("{flag} applies to stress-highalloc only")),
            "{err}"
        );
    }
}

#[test]
fn reproduce_stress_highalloc_fast_is_the_same_at_any_thread_count_and_judges_every_claim() {
    let (code, one, err) = mmsim(&["reproduce", "stress-highalloc", "--fast", "--jobs", "1"]);
    assert_eq!(code, 0, "{err}");
    let (code, two, err) = mmsim(&["reproduce", "stress-highalloc", "--fast", "--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(one, two, "the report does not depend on --jobs");
    assert!(
        one.contains("Caveat: this is not the published procedure"),
        "{one}"
    );
    assert!(one.contains("STRESS-HIGHALLOC"), "{one}");
    for row in ["Pass 1 ", "Pass 2 ", "while Rested ", "Kswapd velocity "] {
        assert!(one.lines().any(|l| l.starts_with(row)), "{row}: {one}");
    }
    for id in ["C1", "C2", "C3", "C4", "C5", "C6"] {
        assert!(
            one.lines().any(|l| l.starts_with(&format!("{id} "))),
            "{id}: {one}"
        );
    }
    assert!(one.contains("of 6 claims hold"), "{one}");
}

/// `mmsim reproduce EXPERIMENT --fast --jobs 2` with `--json` and `--html` into a new
/// directory: (the directory, the JSON file, the HTML directory, stdout).
fn reproduce_fast(
    experiment: &str,
) -> (
    std::path::PathBuf,
    std::path::PathBuf,
    std::path::PathBuf,
    String,
) {
    let dir = std::env::temp_dir().join(format!("mmsim-cli-{experiment}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("out.json");
    let html = dir.join("html");
    let (code, out, err) = mmsim(&[
        "reproduce",
        experiment,
        "--fast",
        "--jobs",
        "2",
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    (dir, json, html, out)
}

#[test]
fn reproduce_nowriteback_prints_the_letters_table_and_its_claims() {
    let (dir, json, html, out) = reproduce_fast("nowriteback");
    // The HTML report: the tables, the claims, and each run's graphs, kernels side by side.
    let index = std::fs::read_to_string(html.join("index.html")).unwrap();
    assert!(
        index.contains("Claims") && index.contains("of 6 claims hold"),
        "{index}"
    );
    for case in [
        "512m1p-xfs-fsmark",
        "1024m-xfs-simple-wb",
        "512m-xfs-mmap-strm",
    ] {
        assert!(html.join(format!("{case}-dirty.html")).exists(), "{case}");
        assert!(index.contains(case), "{case} linked from the index");
    }
    assert!(
        out.contains("Caveat: this is not the published procedure"),
        "{out}"
    );
    for row in [
        "512M1P-xfs     Files/s  mean                     32.69      34.44 ( 5.08%)",
        "1024M-16X-xfs  Kswapd efficiency mmap-strm",
        "MMTests Statistics: vmstat, mmap-strm (simulated)",
        "nr_vmscan_write_skip",
        "Fidelity: ",
    ] {
        assert!(out.contains(row), "missing {row:?} in {out}");
    }
    for id in ["E1", "E2", "E3", "E4", "E5", "E6"] {
        assert!(out.lines().any(|l| l.starts_with(id)), "{id} in {out}");
    }
    assert!(out.contains(" of 6 claims hold"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["experiment"], "nowriteback");
    assert_eq!(v["configurations"].as_array().unwrap().len(), 8);
    assert_eq!(v["claims"].as_array().unwrap().len(), 6);
    // The letter's own table holds E1-E4.
    let on_published: Vec<&str> = v["claims_on_published"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        on_published,
        [
            "holds",
            "holds",
            "holds",
            "holds",
            "not judged",
            "not judged"
        ]
    );
    assert_eq!(v["procedure"]["simple_wb_iterations"], 1, "--fast: one");
    // --iterations sets simple-wb's runs of each factor.
    let twice = dir.join("twice.json");
    let (code, _, err) = mmsim(&[
        "reproduce",
        "nowriteback",
        "--fast",
        "--iterations",
        "2",
        "--json",
        twice.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&twice).unwrap()).unwrap();
    assert_eq!(v2["procedure"]["simple_wb_iterations"], 2);
    let (code, _, err) = mmsim(&["reproduce", "nowriteback", "--fresh"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--fresh does not apply to nowriteback"),
        "{err}"
    );
    let (code, _, err) = mmsim(&["reproduce", "nowritebak"]);
    assert_eq!(code, 2);
    assert!(err.contains("nowriteback"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reproduce_memcg_softlimit_prints_the_letters_rows_and_its_claims() {
    let (dir, json, html, out) = reproduce_fast("memcg-softlimit");
    let index = std::fs::read_to_string(html.join("index.html")).unwrap();
    assert!(index.contains("of 7 claims hold"), "{index}");
    for case in ["test1-no-limit", "test1-0-limit", "test2"] {
        assert!(index.contains(case), "{case} linked from the index");
        assert!(
            html.join(format!("{case}-cgroup-usage.html")).exists(),
            "{case}"
        );
    }
    for row in [
        "Caveat: this is not the published procedure",
        "TEST 1, soft limit 0 on both groups",
        "Major\n  min                           170604",
        "Swap used (KB)\n  max                           123900",
        "User *",
        "Minor *",
        "Fidelity: ",
    ] {
        assert!(out.contains(row), "missing {row:?} in {out}");
    }
    for id in ["M1", "M2", "M3", "M4", "M5", "M6", "M7"] {
        assert!(out.lines().any(|l| l.starts_with(id)), "{id} in {out}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["experiment"], "memcg-softlimit");
    assert_eq!(v["claims"].as_array().unwrap().len(), 7);
    let cell = &v["configurations"]["test1-0-limit"]["mmotm-2013-07-18"]["Major"];
    assert_eq!(cell["published"]["avg"], 196081.83);
    assert!(cell["simulated"]["avg"].as_f64().is_some());
    let on_published: Vec<&str> = v["claims_on_published"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(on_published[..6], ["holds"; 6]);
    assert_eq!(on_published[6], "not judged");
    let (code, _, err) = mmsim(&["reproduce", "memcg-softlimit", "--fresh"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--fresh does not apply to memcg-softlimit"),
        "{err}"
    );
    let (code, _, err) = mmsim(&["reproduce", "memcg-softlimit", "--boots", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("'0' for '--boots"), "{err}");
    let (code, _, err) = mmsim(&["reproduce", "nowriteback", "--boots", "2"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--boots does not apply to nowriteback"),
        "{err}"
    );
    for experiment in ["parallelio", "dirty-throttling"] {
        let (code, _, err) = mmsim(&["reproduce", experiment, "--boots", "2"]);
        assert_eq!(code, 2);
        assert!(
            err.contains("--boots applies to memcg-softlimit only"),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
