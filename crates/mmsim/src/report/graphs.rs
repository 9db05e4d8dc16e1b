//! Graphs of a run's time series, drawn as SVG with `plotters`.
//!
//! [`graphs`] turns one run's samples into [`Graph`]s, MMTests-style (`mmtests.md` §7):
//! gauges (free, dirty, LRU pages) as their value at each sample; event counters (scan,
//! steal, swap) as the delta since the previous sample; reclaim efficiency as
//! 100·Δsteal/Δscan, 100 when nothing was scanned. Block devices add their `iostat -x`
//! figures (MMTests' 10 s monitor) and the writeback bandwidth the bdi estimated.
//!
//! [`render`] draws one graph of one kernel; kernels compared side by side are drawn on the
//! same axes ([`shared_axes`]). The SVG is a pure function of its input: pixel coordinates
//! are whole numbers and text is laid out by a fixed estimate, not by the host's fonts.

use super::timeseries::{TimeSeries, COLUMNS};
use super::DeviceReport;
use crate::calibration::PAGE_SIZE;
use plotters::prelude::*;
use std::ops::Range;

/// Size of one graph, pixels.
pub const WIDTH: u32 = 720;
pub const HEIGHT: u32 = 400;

/// How a line is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// Measured values: solid.
    Data,
    /// A threshold the data is read against (watermark, dirty limit): dashed.
    Threshold,
}

/// One line of a graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub name: String,
    /// (simulated seconds, value).
    pub points: Vec<(f64, f64)>,
    pub kind: LineKind,
    /// Whether the y axis is fitted to this line. A line that is not (a burst that would
    /// flatten the rest) is drawn clipped at the top.
    pub fit: bool,
}

/// The x axis of the time-series graphs.
const TIME_AXIS: &str = "time (s)";

/// One graph of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    /// Names the graph's files: lower case, digits and `-` only.
    pub id: String,
    pub title: String,
    pub y_label: String,
    /// The x axis: simulated time for every graph but a distribution's.
    pub x_label: String,
    /// Where each line comes from, in a sentence or two.
    pub about: String,
    /// Fixed y range (percentages); else from 0 to the largest value.
    pub y_max: Option<f64>,
    pub lines: Vec<Line>,
}

impl Graph {
    /// Whether any measured value is not zero (thresholds alone say nothing).
    pub fn has_data(&self) -> bool {
        self.lines
            .iter()
            .filter(|l| l.kind == LineKind::Data)
            .any(|l| l.points.iter().any(|&(_, y)| y != 0.0))
    }
}

/// The columns of a series by name.
struct Columns<'a> {
    ts: &'a TimeSeries,
}

impl Columns<'_> {
    fn index(&self, name: &str) -> usize {
        COLUMNS
            .iter()
            .position(|c| *c == name)
            .or_else(|| {
                self.ts
                    .device_columns
                    .iter()
                    .chain(&self.ts.cgroup_columns)
                    .position(|c| c == name)
                    .map(|i| COLUMNS.len() + i)
            })
            .unwrap_or_else(|| panic!("time-series column {name}"))
    }

    /// The value at each sample.
    fn gauge(&self, name: &str) -> Vec<(f64, f64)> {
        let c = self.index(name);
        self.ts.rows.iter().map(|r| (r[0], r[c])).collect()
    }

    /// The change since the previous sample, at each sample after the first.
    fn delta(&self, name: &str) -> Vec<(f64, f64)> {
        let c = self.index(name);
        self.ts
            .rows
            .windows(2)
            .map(|w| (w[1][0], w[1][c] - w[0][c]))
            .collect()
    }

    /// The change since the previous sample per second, times `scale`.
    fn rate(&self, name: &str, scale: f64) -> Vec<(f64, f64)> {
        let c = self.index(name);
        self.ts
            .rows
            .windows(2)
            .map(|w| (w[1][0], (w[1][c] - w[0][c]) * scale / (w[1][0] - w[0][0])))
            .collect()
    }

    /// 100·Δsteal/Δscan per interval, 100 when nothing was scanned (MonitorProcvmstat.pm).
    fn efficiency(&self, steal: &str, scan: &str) -> Vec<(f64, f64)> {
        self.delta(steal)
            .iter()
            .zip(self.delta(scan))
            .map(|(&(t, st), (_, sc))| (t, if sc == 0.0 { 100.0 } else { 100.0 * st / sc }))
            .collect()
    }

    /// The sampling interval as the axis labels say it, e.g. `1 s`.
    fn interval(&self) -> String {
        match self.ts.rows.as_slice() {
            [a, b, ..] => format!("{} s", trim_number(b[0] - a[0])),
            _ => "interval".into(),
        }
    }
}

/// The points whose value is not 0: a figure the kernel has not computed yet (or has not
/// at all) is left out rather than drawn at 0.
fn known(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    points.into_iter().filter(|&(_, y)| y != 0.0).collect()
}

/// A number with at most 3 decimals and no trailing zeros.
fn trim_number(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

fn line(name: &str, points: Vec<(f64, f64)>, kind: LineKind) -> Line {
    Line {
        name: name.to_string(),
        points,
        kind,
        fit: true,
    }
}

/// A measured line the y axis is not fitted to.
fn unfitted(name: &str, points: Vec<(f64, f64)>) -> Line {
    Line {
        fit: false,
        ..data(name, points)
    }
}

fn data(name: &str, points: Vec<(f64, f64)>) -> Line {
    line(name, points, LineKind::Data)
}

/// A constant over the run.
fn level(name: &str, value: f64, ts: &TimeSeries) -> Line {
    let end = ts.rows.last().map_or(0.0, |r| r[0]);
    let start = ts.rows.first().map_or(0.0, |r| r[0]);
    line(
        name,
        vec![(start, value), (end, value)],
        LineKind::Threshold,
    )
}

/// The graphs of one run, in the order a report shows them. Every run of a scenario gives
/// the same ids in the same order, so kernels line up by id.
pub fn graphs(ts: &TimeSeries, devices: &[DeviceReport]) -> Vec<Graph> {
    let c = Columns { ts };
    let per = c.interval();
    let mut out = Vec::new();
    let graph = |id: &str, title: &str, y_label: &str, about: &str, lines| Graph {
        id: id.to_string(),
        title: title.to_string(),
        y_label: y_label.to_string(),
        x_label: TIME_AXIS.to_string(),
        about: about.to_string(),
        y_max: None,
        lines,
    };
    for (z, zone) in ts.zones.iter().enumerate() {
        if zone.managed_pages == 0 {
            continue;
        }
        let column = COLUMNS[1 + z];
        let mut lines = vec![data("free", c.gauge(column))];
        for (name, w) in ["min", "low", "high"].iter().zip(zone.watermarks) {
            lines.push(level(name, w as f64, ts));
        }
        out.push(graph(
            &format!("free-{}", zone.name.to_lowercase()),
            &format!("Free pages, zone {}", zone.name),
            "pages",
            &format!(
                "{column} at each sample, against the zone's min, low and high watermarks \
                 ({} pages managed). kswapd wakes below low and sleeps above high; below min \
                 only atomic and PF_MEMALLOC allocations succeed.",
                zone.managed_pages
            ),
            lines,
        ));
    }
    // nr_unstable last, when there is any: the other lines keep their colours.
    let mut dirty = vec![
        data("nr_dirty", c.gauge("nr_dirty")),
        data("nr_writeback", c.gauge("nr_writeback")),
        line(
            "background thresh",
            c.gauge("dirty_background_thresh"),
            LineKind::Threshold,
        ),
        line("dirty thresh", c.gauge("dirty_thresh"), LineKind::Threshold),
    ];
    let unstable = c.gauge("nr_unstable");
    if unstable.iter().any(|&(_, y)| y != 0.0) {
        dirty.push(data("nr_unstable", unstable));
    }
    out.push(graph(
        "dirty",
        "Dirty and writeback pages",
        "pages",
        "nr_dirty, nr_writeback (and nr_unstable, NFS pages written but not committed) at \
         each sample, against the global dirty thresholds global_dirty_limits() gives at \
         that moment: the flusher starts background writeback above the background \
         threshold, and dirtiers are throttled towards the dirty threshold.",
        dirty,
    ));
    let mib_per_page = PAGE_SIZE as f64 / (1 << 20) as f64;
    let mib_since_start = |name: &str| -> Vec<(f64, f64)> {
        let points = c.gauge(name);
        let start = points.first().map_or(0.0, |p| p.1);
        points
            .into_iter()
            .map(|(t, v)| (t, (v - start) * mib_per_page))
            .collect()
    };
    out.push(graph(
        "vmstat-written",
        "Pages dirtied and written",
        "MiB",
        "nr_dirtied and nr_written of /proc/vmstat since the start, in MiB: pages dirtied, \
         and pages whose writeback completed (Wu's vmstat-written graph). The slopes are \
         the dirty and write rates; the gap between the lines is the dirty and writeback \
         pages.",
        vec![
            data("dirtied", mib_since_start("nr_dirtied")),
            data("written", mib_since_start("nr_written")),
        ],
    ));
    out.push(graph(
        "lru",
        "Anon and file pages on the LRU lists",
        "pages",
        "nr_active_anon, nr_inactive_anon, nr_active_file and nr_inactive_file at each \
         sample.",
        vec![
            data("active anon", c.gauge("nr_active_anon")),
            data("inactive anon", c.gauge("nr_inactive_anon")),
            data("active file", c.gauge("nr_active_file")),
            data("inactive file", c.gauge("nr_inactive_file")),
        ],
    ));
    let per_interval = format!("pages per {per}");
    for (who, id, title) in [
        ("kswapd", "kswapd", "kswapd scan and steal"),
        ("direct", "direct", "Direct reclaim scan and steal"),
    ] {
        out.push(graph(
            id,
            title,
            &per_interval,
            &format!(
                "pgscan_{who} and pgsteal_{who} (all zones) since the previous sample: pages \
                 scanned and pages reclaimed per interval, as MMTests plots them."
            ),
            vec![
                data("scanned", c.delta(&format!("pgscan_{who}"))),
                data("reclaimed", c.delta(&format!("pgsteal_{who}"))),
            ],
        ));
    }
    // A reclaimer that never scanned has no efficiency to show (MMTests would draw 100):
    // its line stays in the legend, empty, so colours match across kernels.
    let efficiency = ["kswapd", "direct"]
        .map(|who| {
            let scanned = c
                .delta(&format!("pgscan_{who}"))
                .iter()
                .any(|&(_, y)| y > 0.0);
            let points = if scanned {
                c.efficiency(&format!("pgsteal_{who}"), &format!("pgscan_{who}"))
            } else {
                Vec::new()
            };
            data(who, points)
        })
        .to_vec();
    out.push(Graph {
        y_max: Some(100.0),
        ..graph(
            "efficiency",
            "Reclaim efficiency",
            "% of scanned pages reclaimed",
            "100 × Δpgsteal / Δpgscan per interval, 100 in an interval with nothing scanned \
             (MMTests' rule); a reclaimer that never scanned has no line.",
            efficiency,
        )
    });
    let groups: Vec<&str> = ts
        .cgroup_columns
        .iter()
        .filter_map(|col| col.strip_prefix("usage_in_bytes_"))
        .collect();
    if !groups.is_empty() {
        let mib = |points: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
            points
                .into_iter()
                .map(|(t, b)| (t, b / (1u64 << 20) as f64))
                .collect()
        };
        for (col, id, title, about) in [
            (
                "usage_in_bytes",
                "cgroup-usage",
                "Memory cgroups: memory.usage_in_bytes",
                "Each group's memory.usage_in_bytes at each sample: its page cache, anonymous \
                 and swap-cache pages, and the charges it holds ahead of use.",
            ),
            (
                "swap",
                "cgroup-swap",
                "Memory cgroups: pages in swap",
                "Each group's memory.stat swap at each sample: its pages swapped out and not \
                 yet back.",
            ),
        ] {
            let lines = groups
                .iter()
                .map(|g| data(g, mib(c.gauge(&format!("{col}_{g}")))))
                .collect();
            out.push(graph(id, title, "MiB", about, lines));
        }
    }
    out.push(graph(
        "allocstall",
        "Direct reclaim entries",
        &format!("allocstall per {per}"),
        "allocstall since the previous sample: allocations that entered direct reclaim.",
        vec![data("allocstall", c.delta("allocstall"))],
    ));
    out.push(graph(
        "swap",
        "Swap-ins and swap-outs",
        &per_interval,
        "pswpin and pswpout since the previous sample.",
        vec![
            data("swap in", c.delta("pswpin")),
            data("swap out", c.delta("pswpout")),
        ],
    ));
    out.extend(device_graphs(&c, devices));
    out
}

/// Per block device: throughput, queue, await and utilisation. The bdi columns are in every
/// series; iostat figures exist for devices with a request queue (not NFS mounts).
fn device_graphs(c: &Columns, devices: &[DeviceReport]) -> Vec<Graph> {
    let mut out = Vec::new();
    let mib = |kib: f64| kib / 1024.0;
    let names =
        c.ts.device_columns
            .iter()
            .filter_map(|col| col.strip_prefix("write_bw_kbps_"));
    for name in names {
        let dev = devices.iter().find(|d| d.name == name);
        let iostat = |f: &dyn Fn(&crate::block::IostatSample) -> f64| -> Vec<(f64, f64)> {
            dev.map_or(Vec::new(), |d| {
                d.iostat_times
                    .iter()
                    .zip(&d.iostat)
                    .map(|(&t, s)| (t, f(s)))
                    .collect()
            })
        };
        let mib_per_page = PAGE_SIZE as f64 / (1 << 20) as f64;
        let written = c.rate(&format!("written_{name}"), mib_per_page);
        let mut throughput = vec![
            data("bdi written", written),
            line(
                "bdi write bw estimate",
                known(
                    c.gauge(&format!("write_bw_kbps_{name}"))
                        .into_iter()
                        .map(|(t, k)| (t, mib(k)))
                        .collect(),
                ),
                LineKind::Threshold,
            ),
        ];
        if dev.is_some() {
            throughput.insert(0, data("iostat read", iostat(&|s| mib(s.rkb_s))));
            throughput.insert(1, data("iostat write", iostat(&|s| mib(s.wkb_s))));
        }
        let graph = |id: &str, title: &str, y_label: &str, about: &str, lines| Graph {
            id: format!("{}-{id}", file_safe(name)),
            title: format!("{name}: {title}"),
            y_label: y_label.to_string(),
            x_label: TIME_AXIS.to_string(),
            about: about.to_string(),
            y_max: None,
            lines,
        };
        out.push(graph(
            "throughput",
            "throughput",
            "MiB/s",
            "rkB/s and wkB/s of iostat -x every 10 s (MMTests' monitor interval), pages the \
             bdi wrote (BDI_WRITTEN) per sample interval, and the kernel's estimate of its \
             write bandwidth (dashed; 2.6.37 has none).",
            throughput,
        ));
        let col = |c: &str| format!("{c}_{name}");
        out.push(graph(
            "dirty-pages",
            "dirty pages and the throttle's limits",
            "pages",
            "The bdi's dirty (and unstable) pages with its pages under writeback, \
             BDI_RECLAIMABLE + BDI_WRITEBACK (what the throttle holds against the bdi's \
             limit), and BDI_WRITEBACK alone, at each sample, against what balance_dirty_pages last \
             computed (dashed, from the first throttled call on): the bdi's limit, bdi_thresh, \
             and the throttle's target, 3.x's bdi_setpoint or the last throttled task's own \
             limit under 2.6.37 and the IO-less series (Wu's dirty-pages graph).",
            vec![
                data(
                    "bdi dirty + writeback",
                    c.gauge(&col("bdi_reclaimable"))
                        .into_iter()
                        .zip(c.gauge(&col("bdi_writeback")))
                        .map(|((t, d), (_, wb))| (t, d + wb))
                        .collect(),
                ),
                data("bdi writeback", c.gauge(&col("bdi_writeback"))),
                line(
                    "bdi limit",
                    known(c.gauge(&col("bdi_thresh"))),
                    LineKind::Threshold,
                ),
                line(
                    "throttle target",
                    known(c.gauge(&col("bdi_target"))),
                    LineKind::Threshold,
                ),
            ],
        ));
        let mib_kbps = |k: &str| -> Vec<(f64, f64)> {
            known(
                c.gauge(&col(k))
                    .into_iter()
                    .map(|(t, v)| (t, mib(v)))
                    .collect(),
            )
        };
        out.push(graph(
            "dirty-bandwidth",
            "dirty rate, write bandwidth and rate limits",
            "MiB/s",
            "Pages the bdi dirtied (BDI_DIRTIED) and wrote (BDI_WRITTEN) per second over each \
             sample interval; the kernel's estimate of its write bandwidth; its base rate \
             limit, 3.x's dirty_ratelimit or the IO-less series' throttle_bandwidth; and the \
             last throttled task's rate limit (Wu's dirty-bandwidth graph). 2.6.37 estimates \
             no bandwidth and sets no rate, so it has only the measured lines. The axis is \
             fitted to the other lines: the dirty rate's bursts (free-run dirtying at the \
             start) may run off the top.",
            vec![
                unfitted("dirtied", c.rate(&col("dirtied"), mib_per_page)),
                data("written", c.rate(&col("written"), mib_per_page)),
                data("write bw estimate", mib_kbps("write_bw_kbps")),
                data("base rate limit", mib_kbps("base_rate_kbps")),
                data("task rate limit", mib_kbps("task_rate_kbps")),
            ],
        ));
        if dev.is_none() {
            out.push(graph(
                "nfs-commit",
                "NFS COMMITs",
                &format!("pages per {}", c.interval()),
                "Unstable pages the client sent in COMMITs, and pages the server's answers \
                 made stable, since the previous sample (Wu's nfs-commit graph).",
                vec![
                    data("sent to COMMIT", c.delta(&col("nfs_commit_sent"))),
                    data("made stable", c.delta(&col("nfs_committed"))),
                ],
            ));
            continue;
        }
        out.push(graph(
            "queue",
            "request queue",
            "avgqu-sz",
            "avgqu-sz of iostat -x every 10 s: the time-average number of requests in flight.",
            vec![data("avgqu-sz", iostat(&|s| s.avgqu_sz))],
        ));
        out.push(graph(
            "await",
            "await",
            "ms",
            "await, r_await and w_await of iostat -x every 10 s: the mean time from a \
             request's creation to its completion, queueing included.",
            vec![
                data("await", iostat(&|s| s.await_ms)),
                data("r_await", iostat(&|s| s.r_await_ms)),
                data("w_await", iostat(&|s| s.w_await_ms)),
            ],
        ));
        out.push(Graph {
            y_max: Some(100.0),
            ..graph(
                "util",
                "utilisation",
                "%util",
                "%util of iostat -x every 10 s: the share of the interval with a request in \
                 flight.",
                vec![data("%util", iostat(&|s| s.util))],
            )
        });
    }
    out
}

/// The distribution of `balance_dirty_pages`' pauses (Wu's pause-time graph): the share of
/// all pauses in each jiffy (4 ms, the kernel's unit of sleep) from 0 to the longest. None
/// if the run never paused.
pub fn pause_graph(pauses: &crate::mm::page_writeback::Durations) -> Option<Graph> {
    let per_ms = pauses.per_ms();
    if per_ms.is_empty() {
        return None;
    }
    let step = (crate::engine::JIFFY / crate::engine::MSEC) as usize;
    let n = pauses.count() as f64;
    let points = per_ms
        .chunks(step)
        .enumerate()
        .map(|(j, c)| ((j * step) as f64, 100.0 * c.iter().sum::<u64>() as f64 / n))
        .collect();
    Some(Graph {
        id: "pauses".into(),
        title: "balance_dirty_pages pause times".into(),
        y_label: "% of pauses".into(),
        x_label: "pause (ms, in jiffies of 4 ms)".into(),
        about: "Each sleep of a throttled writer in balance_dirty_pages, counted by the jiffy \
                (4 ms) from 0 to the longest, as a share of all of its run's sleeps."
            .into(),
        y_max: None,
        lines: vec![data("pauses", points)],
    })
}

/// `name` with anything but ASCII letters, digits, `.`, `_` and `-` replaced by `_`.
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || matches!(ch, '.' | '_' | '-') {
                ch
            } else {
                '_'
            }
        })
        .collect()
}

/// The x and y ranges that hold every graph of `graphs` (the same graph of several
/// kernels): x over the runs' time, y from 0 to the largest value plus a margin, or to the
/// graph's fixed maximum.
pub fn shared_axes(graphs: &[&Graph]) -> (Range<f64>, Range<f64>) {
    let points = || {
        graphs
            .iter()
            .flat_map(|g| g.lines.iter().flat_map(|l| l.points.iter()))
    };
    let x_max = points().map(|p| p.0).fold(0.0, f64::max);
    let fitted = || {
        graphs
            .iter()
            .flat_map(|g| g.lines.iter().filter(|l| l.fit))
            .flat_map(|l| l.points.iter())
    };
    let y_max = match graphs.first().and_then(|g| g.y_max) {
        Some(m) => m * 1.05,
        None => match fitted().map(|p| p.1).fold(0.0, f64::max) {
            0.0 => points().map(|p| p.1).fold(0.0, f64::max) * 1.08,
            m => m * 1.08,
        },
    };
    let y_min = points().map(|p| p.1).fold(0.0, f64::min) * 1.08;
    (
        0.0..if x_max > 0.0 { x_max } else { 1.0 },
        y_min..if y_max > 0.0 { y_max } else { 1.0 },
    )
}

/// Colour-blind-safe colours (Okabe and Ito), in line order.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// A tick label: whole numbers up to 99,999, then k, M, G with up to 2 decimals.
fn tick(v: f64) -> String {
    let a = v.abs();
    let (x, unit) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e5 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let digits = if x.abs() >= 100.0 || (unit.is_empty() && a >= 10.0) {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{x:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{unit}")
}

/// Legend rows below the plot: three entries a row.
const LEGEND_COLUMNS: usize = 3;
const LEGEND_ROW: u32 = 20;

/// One graph of one kernel as an SVG document, on the given axes.
pub fn render(graph: &Graph, kernel: &str, x: Range<f64>, y: Range<f64>) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, graph, kernel, x, y).expect("drawing to a string cannot fail");
    }
    svg.push('\n');
    svg
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw(
    root: &Area,
    graph: &Graph,
    kernel: &str,
    x: Range<f64>,
    y: Range<f64>,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    root.fill(&WHITE)?;
    let rows = graph.lines.len().div_ceil(LEGEND_COLUMNS).max(1) as u32;
    let (plot, legend) = root.split_vertically(HEIGHT - rows * LEGEND_ROW - 8);
    let mut chart = ChartBuilder::on(&plot)
        .caption(
            format!("{} ({kernel})", graph.title),
            ("sans-serif", 17).into_font(),
        )
        .margin(8)
        .margin_right(20)
        .x_label_area_size(38)
        .y_label_area_size(64)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(210, 210, 210))
        .x_desc(graph.x_label.as_str())
        .y_desc(graph.y_label.as_str())
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .draw()?;
    for (i, l) in graph.lines.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        match l.kind {
            LineKind::Data => {
                chart.draw_series(LineSeries::new(
                    l.points.iter().copied(),
                    colour.stroke_width(2),
                ))?;
            }
            LineKind::Threshold => {
                chart.draw_series(DashedLineSeries::new(
                    l.points.iter().copied(),
                    7,
                    5,
                    colour.stroke_width(2),
                ))?;
            }
        }
        // The legend entry: a sample of the line and its name.
        let col = (i % LEGEND_COLUMNS) as i32;
        let row = (i / LEGEND_COLUMNS) as i32;
        let (lx, ly) = (72 + col * 215, 10 + row * LEGEND_ROW as i32);
        let sample = vec![(lx, ly), (lx + 24, ly)];
        let style = colour.stroke_width(2);
        match l.kind {
            LineKind::Data => legend.draw(&PathElement::new(sample, style))?,
            LineKind::Threshold => {
                legend.draw(&PathElement::new(vec![(lx, ly), (lx + 9, ly)], style))?;
                legend.draw(&PathElement::new(vec![(lx + 15, ly), (lx + 24, ly)], style))?;
            }
        }
        legend.draw(&Text::new(
            l.name.clone(),
            (lx + 30, ly - 7),
            ("sans-serif", 13).into_font(),
        ))?;
    }
    root.present()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::timeseries::ZoneInfo;

    fn series() -> TimeSeries {
        let mut ts = TimeSeries {
            device_columns: vec![],
            cgroup_columns: vec![],
            zones: vec![
                ZoneInfo {
                    name: "DMA".into(),
                    managed_pages: 3900,
                    watermarks: [10, 12, 15],
                },
                ZoneInfo {
                    name: "DMA32".into(),
                    managed_pages: 100_000,
                    watermarks: [500, 600, 700],
                },
                ZoneInfo {
                    name: "Normal".into(),
                    managed_pages: 0,
                    watermarks: [0; 3],
                },
            ],
            rows: vec![],
        };
        for t in 0..4 {
            let mut row = vec![0.0; COLUMNS.len()];
            row[0] = t as f64;
            let col = |n: &str| COLUMNS.iter().position(|c| *c == n).unwrap();
            row[col("pgscan_kswapd")] = (t * 100) as f64;
            row[col("pgsteal_kswapd")] = (t * 50) as f64;
            row[col("nr_free_pages_dma32")] = 1000.0 - t as f64;
            ts.rows.push(row);
        }
        ts
    }

    #[test]
    fn counters_are_drawn_per_interval_and_gauges_as_sampled() {
        let g = graphs(&series(), &[]);
        let by_id = |id: &str| g.iter().find(|g| g.id == id).unwrap();
        assert!(
            g.iter().all(|g| g.id != "free-normal"),
            "an empty zone has no graph"
        );
        assert_eq!(
            by_id("free-dma32").lines[0].points,
            vec![(0.0, 1000.0), (1.0, 999.0), (2.0, 998.0), (3.0, 997.0)]
        );
        assert_eq!(
            by_id("free-dma32").lines[2].points,
            vec![(0.0, 600.0), (3.0, 600.0)]
        );
        let kswapd = by_id("kswapd");
        assert_eq!(kswapd.y_label, "pages per 1 s");
        assert_eq!(
            kswapd.lines[0].points,
            vec![(1.0, 100.0), (2.0, 100.0), (3.0, 100.0)]
        );
        let eff = by_id("efficiency");
        assert!(
            eff.lines[1].points.is_empty(),
            "direct reclaim never scanned"
        );
        assert_eq!(eff.lines[0].points[0], (1.0, 50.0));
        assert!(!by_id("swap").has_data());
        assert!(by_id("kswapd").has_data());
        assert!(
            g.iter().all(|g| !g.id.starts_with("cgroup-")),
            "no groups, no graph"
        );
    }

    #[test]
    fn each_memory_cgroup_gets_a_line_in_mib() {
        use crate::report::timeseries::cgroup_columns;
        let mut ts = series();
        ts.cgroup_columns = cgroup_columns("A");
        ts.cgroup_columns.extend(cgroup_columns("A/B"));
        for (t, row) in ts.rows.iter_mut().enumerate() {
            let t = t as f64;
            row.extend([t * 1048576.0, 0.0, 2097152.0, t * 4096.0]);
        }
        let g = graphs(&ts, &[]);
        let usage = g.iter().find(|g| g.id == "cgroup-usage").unwrap();
        assert_eq!(usage.y_label, "MiB");
        let names: Vec<&str> = usage.lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["A", "A/B"]);
        assert_eq!(usage.lines[0].points[3], (3.0, 3.0));
        assert_eq!(usage.lines[1].points[0], (0.0, 2.0));
        let swap = g.iter().find(|g| g.id == "cgroup-swap").unwrap();
        assert_eq!(swap.lines[1].points[2], (2.0, 8192.0 / 1048576.0));
    }

    #[test]
    fn kernels_share_axes_and_the_svg_is_the_same_every_time() {
        let a = graphs(&series(), &[]);
        let mut s = series();
        for r in &mut s.rows {
            r[0] *= 2.0;
        }
        let b = graphs(&s, &[]);
        let (x, y) = shared_axes(&[&a[1], &b[1]]);
        assert_eq!(x, 0.0..6.0);
        assert_eq!(y.start, 0.0);
        assert!(y.end > 1000.0);
        let svg = render(&a[1], "3.9", x.clone(), y.clone());
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("Free pages, zone DMA32 (3.9)"));
        assert_eq!(svg, render(&a[1], "3.9", x, y));
    }

    /// [`series`] with a block device `sda` and an NFS mount `nfs0`, whose throttle first
    /// computed its limits at 2 s.
    fn series_with_devices() -> TimeSeries {
        use crate::report::timeseries::{device_columns, DEVICE_COLUMNS};
        let mut ts = series();
        ts.device_columns = device_columns("sda");
        ts.device_columns.extend(device_columns("nfs0"));
        let dev = |name: &str| DEVICE_COLUMNS.iter().position(|c| *c == name).unwrap();
        let global = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap();
        for (t, row) in ts.rows.iter_mut().enumerate() {
            let t = t as f64;
            row[global("nr_dirtied")] = 1000.0 + 512.0 * t;
            row[global("nr_written")] = 1000.0 + 256.0 * t;
            let mut d = vec![0.0; DEVICE_COLUMNS.len()];
            d[dev("bdi_reclaimable")] = 100.0 * t;
            d[dev("bdi_writeback")] = 10.0;
            d[dev("dirtied")] = 256.0 * t * t;
            if t >= 2.0 {
                d[dev("bdi_thresh")] = 900.0;
                d[dev("bdi_target")] = 800.0;
                d[dev("write_bw_kbps")] = 1024.0;
            }
            let mut nfs = vec![0.0; DEVICE_COLUMNS.len()];
            nfs[dev("nfs_commit_sent")] = 40.0 * t;
            nfs[dev("nfs_committed")] = 30.0 * t;
            row.extend(d);
            row.extend(nfs);
        }
        ts
    }

    #[test]
    fn wus_graph_kinds_read_the_throttles_figures() {
        let g = graphs(&series_with_devices(), &[]);
        let by_id = |id: &str| g.iter().find(|g| g.id == id).unwrap();
        // vmstat-written: MiB since the first sample.
        let written = by_id("vmstat-written");
        assert_eq!(written.lines[0].points[0], (0.0, 0.0));
        assert_eq!(written.lines[0].points[3], (3.0, 6.0));
        assert_eq!(written.lines[1].points[3], (3.0, 3.0));
        // dirty-pages: dirty + writeback, and thresholds only once computed.
        let pages = by_id("sda-dirty-pages");
        assert_eq!(pages.lines[0].points[1], (1.0, 110.0));
        assert_eq!(pages.lines[1].points[1], (1.0, 10.0));
        assert_eq!(pages.lines[2].points, vec![(2.0, 900.0), (3.0, 900.0)]);
        assert_eq!(pages.lines[3].kind, LineKind::Threshold);
        assert_eq!(pages.lines[3].points, vec![(2.0, 800.0), (3.0, 800.0)]);
        // dirty-bandwidth: the dirty rate is not fitted; the rest are, in MiB/s.
        let bw = by_id("sda-dirty-bandwidth");
        assert_eq!(bw.lines[0].name, "dirtied");
        assert!(!bw.lines[0].fit && bw.lines[1..].iter().all(|l| l.fit));
        assert_eq!(bw.lines[0].points[2], (3.0, 5.0));
        assert_eq!(bw.lines[2].points, vec![(2.0, 1.0), (3.0, 1.0)]);
        let (_, y) = shared_axes(&[bw]);
        assert!(y.end < 2.0, "fitted to the estimate, not the 5 MiB/s burst");
        // With nothing fitted, the burst sets the range after all (8% headroom); a fixed
        // range gets 5%.
        let alone = Graph {
            lines: vec![bw.lines[0].clone()],
            ..bw.clone()
        };
        let (_, y) = shared_axes(&[&alone]);
        assert!((y.end - 5.0 * 1.08).abs() < 1e-9, "{y:?}");
        let (_, y) = shared_axes(&[by_id("efficiency")]);
        assert!((y.end - 105.0).abs() < 1e-9, "{y:?}");
        // nfs-commit only on the mount without a request queue.
        let devices = [crate::report::DeviceReport {
            name: "sda".into(),
            iostat: vec![],
            iostat_times: vec![],
            diskstats: Default::default(),
            bdi_written: 0,
            written_by_dirtiers: 0,
        }];
        let g = graphs(&series_with_devices(), &devices);
        assert!(g.iter().all(|g| g.id != "sda-nfs-commit"));
        let commit = g.iter().find(|g| g.id == "nfs0-nfs-commit").unwrap();
        assert_eq!(commit.lines[0].points[0], (1.0, 40.0));
        assert_eq!(commit.lines[1].points[0], (1.0, 30.0));
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(1500.0), "1500");
        assert_eq!(tick(25_000.0), "25k");
        assert_eq!(tick(1_800_000.0), "1.8M");
        assert_eq!(tick(250_000.0), "0.25M");
    }

    #[test]
    fn the_pause_graph_shares_the_pauses_out_by_the_jiffy() {
        use crate::engine::MSEC;
        let mut d = crate::mm::page_writeback::Durations::default();
        assert!(pause_graph(&d).is_none(), "a run that never paused");
        for ms in [4, 4, 5, 9] {
            d.record(ms * MSEC);
        }
        let g = pause_graph(&d).unwrap();
        assert_eq!(g.id, "pauses");
        assert_eq!(g.x_label, "pause (ms, in jiffies of 4 ms)");
        assert_eq!(
            g.lines[0].points,
            vec![(0.0, 0.0), (4.0, 75.0), (8.0, 25.0)]
        );
    }
}
