//! Golden tests of the HTML report and its SVG graphs on a tiny run (a dd on a small
//! machine, two kernels), compared byte for byte with `tests/golden/html_*`. Accept a new
//! output with `MMSIM_BLESS=1 cargo test --release -p mmsim --test html_golden`.
//!
//! Besides the goldens: the site is the same every time it is made, every page's links and
//! images name files of the site, and nothing is fetched from elsewhere.

mod common;

use common::check_golden;
use mmsim::engine::SEC;
use mmsim::presets;
use mmsim::report::html::{self, Case, KernelRun, Report, Section};
use mmsim::report::terminal;
use mmsim::sim::{self, RunOptions, RunOutputs};

const SCENARIO: &str = r#"
[machine]
ram = "256M"
cpus = 2

[swap]
size = "256M"

[run]
duration = "25s"

[[device]]
name = "sda"
type = "hdd"
filesystem = "ext4"

[[workload]]
type = "dd"
device = "sda"
size = "1500M"
conv = "fdatasync"
"#;

/// The site of the tiny run under 3.9 and lessdisrupt-v7r10.
fn site() -> Vec<(String, String)> {
    let s = mmsim::scenario::load_str(SCENARIO, "tiny.toml", "tiny").unwrap();
    let runs: Vec<_> = ["3.9", "lessdisrupt-v7r10"]
        .iter()
        .map(|k| {
            let k = presets::resolve(k, &[]).unwrap();
            let outputs = RunOutputs {
                sample_interval: Some(SEC),
                ..Default::default()
            };
            let (r, ts) = sim::run_with(&s, &k, 1, RunOptions::default(), outputs).unwrap();
            (r, ts.unwrap())
        })
        .collect();
    let results: Vec<_> = runs.iter().map(|(r, _)| r.clone()).collect();
    let report = Report {
        title: "mmsim run tiny".into(),
        sections: vec![Section::Table {
            heading: "Summary".into(),
            text: terminal::summary(&results),
        }],
        cases: vec![Case {
            id: "run".into(),
            title: "tiny (seed 1)".into(),
            runs: runs
                .iter()
                .map(|(r, ts)| KernelRun {
                    kernel: &r.kernel,
                    series: ts,
                    devices: &r.devices,
                    pauses: &r.dirty_throttle.pauses,
                })
                .collect(),
        }],
    };
    html::site(&report)
}

fn file<'a>(files: &'a [(String, String)], path: &str) -> &'a str {
    &files
        .iter()
        .find(|(p, _)| p == path)
        .unwrap_or_else(|| panic!("no {path} in the site"))
        .1
}

/// The values of `attr="..."` in `html`.
fn attributes<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let key = format!(" {attr}=\"");
    html.split(key.as_str())
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect()
}

#[test]
fn the_tiny_site_matches_its_goldens_and_is_made_the_same_every_time() {
    let files = site();
    assert_eq!(files[0].0, "index.html");
    check_golden("html_index.html", file(&files, "index.html"));
    check_golden("html_run-dirty.html", file(&files, "run-dirty.html"));
    check_golden(
        "html_run-dirty.3.9.svg",
        file(&files, "graphs/run-dirty.3.9.svg"),
    );
    check_golden(
        "html_run-pauses.3.9.svg",
        file(&files, "graphs/run-pauses.3.9.svg"),
    );
    check_golden(
        "html_run-sda-await.lessdisrupt-v7r10.svg",
        file(&files, "graphs/run-sda-await.lessdisrupt-v7r10.svg"),
    );
    assert_eq!(files, site(), "a second run gives other bytes");
}

#[test]
fn every_link_and_image_is_a_file_of_the_site_and_nothing_is_fetched() {
    let files = site();
    let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    for (path, text) in files.iter().filter(|(p, _)| p.ends_with(".html")) {
        for target in attributes(text, "src")
            .into_iter()
            .chain(attributes(text, "href"))
        {
            let file = target.split('#').next().unwrap();
            assert!(
                file.is_empty() || paths.contains(&file),
                "{path} points at {target}, which the site does not have"
            );
        }
        assert!(!text.contains("<script"), "{path} has a script");
        assert!(!text.contains("://"), "{path} names another site");
    }
    for (path, text) in files.iter().filter(|(p, _)| p.ends_with(".svg")) {
        assert!(text.starts_with("<svg "), "{path}");
        // The SVG namespace is a name, not a fetch; nothing else may look like an address.
        let rest = text.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        assert!(!rest.contains("://"), "{path} names another site");
    }
    let index = file(&files, "index.html");
    assert!(index.contains("\ndd mb_per_sec "), "the summary table");
    assert!(index.contains("Not drawn, every value 0 in every kernel: "));
}
