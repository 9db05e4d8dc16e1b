//! The MMTests "vmstat" summary rows and the 2013 compare-kernels table layouts.
//!
//! Everything here follows `reference/mmtests.md`: the row set, formulas and quirks of
//! `MonitorMmtestsvmstat.pm` @ a2802bbb (§2.1), the iostat table (§4) and the
//! compare-kernels layout (§5). The code is written from that description, not taken from
//! MMTests.
//!
//! - [`vmstat_summary`] turns `/proc/vmstat` deltas into the rows of "MMTests Statistics:
//!   vmstat", each as a [`Cell`] that knows its MMTests printf format.
//! - [`format_monitor_table`] prints such rows for several kernels (§5.6).
//! - [`format_compare_table`] prints a benchmark table with the `pdiff`/`pndiff`
//!   percentages (§5.3, §5.5); [`format_iostat_table`] prints the iostat table (§4).
//! - [`kernel_header`] builds the two header lines holding the kernel names (§5.2).

use std::fmt;

/// One value of a summary row, tagged with the printf format MMTests uses for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    /// `%d`: an integer (already truncated towards zero, as Perl's `%d` does).
    Int(i64),
    /// `%d%`: a truncated percentage.
    Percent(i64),
    /// `%.3f`: pages scanned per second.
    Velocity(f64),
    /// `%.3f` on a row that is not a velocity (the "Page writes by reclaim" quirk).
    Float3(f64),
    /// `%.2f`: durations, iostat and benchmark values.
    Float2(f64),
    /// Not MMTests': a ratio such as simulated/published, with 3 significant digits (2 for
    /// ratios of 100 and more); `-` when it is undefined (NaN).
    Ratio(f64),
    /// Not MMTests': a cell set by a calibrated constant, printed `input`.
    Input,
}

impl Cell {
    /// The cell right-aligned in `width` columns, as MMTests prints it: `%{width}d`,
    /// `%{width-1}d%%`, `%{width}.3f` or `%{width}.2f`.
    pub fn render(&self, width: usize) -> String {
        match *self {
            Cell::Int(v) => format!("{v:>width$}"),
            Cell::Percent(v) => format!("{v:>w$}%", w = width.saturating_sub(1)),
            Cell::Velocity(v) | Cell::Float3(v) => format!("{v:>width$.3}"),
            Cell::Float2(v) => format!("{v:>width$.2}"),
            Cell::Ratio(v) if v.is_nan() => format!("{:>width$}", "-"),
            Cell::Ratio(v) if v >= 100.0 || !v.is_finite() => format!("{v:>width$.0}"),
            Cell::Ratio(v) if v >= 10.0 => format!("{v:>width$.1}"),
            Cell::Ratio(v) => format!("{v:>width$.2}"),
            Cell::Input => format!("{:>width$}", "input"),
        }
    }
}

impl fmt::Display for Cell {
    /// The cell without padding: `%d`, `%d%`, `%.3f`, `%.3f` or `%.2f`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(0))
    }
}

/// The numeric value of a row for JSON: the truncated integer for the `%d` and `%d%` rows,
/// the unrounded value for the float rows.
pub fn json_value(cell: &Cell) -> f64 {
    match *cell {
        Cell::Int(v) | Cell::Percent(v) => v as f64,
        Cell::Velocity(v) | Cell::Float3(v) | Cell::Float2(v) | Cell::Ratio(v) => v,
        Cell::Input => f64::NAN,
    }
}

/// Zone suffixes of the per-zone scan counters, in the order MMTests sums them.
const SCAN_ZONES: [&str; 5] = ["dma", "dma32", "normal", "movable", "high"];

/// `(v / e)`, or 0 when the elapsed time is not positive (MMTests would die dividing by 0;
/// a velocity of 0 keeps the JSON finite).
fn per_second(v: i64, e: f64) -> f64 {
    if e > 0.0 {
        v as f64 / e
    } else {
        0.0
    }
}

/// `100 * num / den` truncated towards zero, as Perl's `%d` prints the quotient.
fn truncated_percent(num: i64, den: i64) -> i64 {
    ((num * 100) as f64 / den as f64).trunc() as i64
}

/// The rows of "MMTests Statistics: vmstat" as of a2802bbb (2013-05-23), in display order.
///
/// `v` reads a `/proc/vmstat` counter's change over the run (a counter the kernel does not
/// export reads 0). `elapsed_seconds` is MMTests' `E`, the divisor of every velocity.
/// `new_migration_counters` selects the compaction display variant: MMTests switches on the
/// presence of `pgmigrate_success` (kernel 3.8+); pass `true` for such kernels.
///
/// Quirks copied on purpose (reference §2.1 notes):
/// - efficiencies and "Percentage direct scans" are truncated, not rounded; an efficiency
///   is 100 when nothing was scanned;
/// - exactly three zone velocity rows (normal, dma32, dma), even for absent zones;
/// - "Page writes by reclaim" is printed with three decimals (the format shift);
/// - "Page migrate failure" is always 0 (MMTests read a counter name the kernel never had);
/// - the NUMA rows are always present.
///
/// Pre-3.5 kernels: `kswapd_steal` counts into "Kswapd pages reclaimed", and because their
/// `pgsteal_<zone>` counted kswapd and direct reclaim together, "Kswapd pages reclaimed" is
/// subtracted from "Direct pages reclaimed" when `kswapd_steal` is present (non-zero here:
/// when it reads 0 the subtraction would not change anything).
pub fn vmstat_summary(
    v: &dyn Fn(&str) -> u64,
    elapsed_seconds: f64,
    new_migration_counters: bool,
) -> Vec<(&'static str, Cell)> {
    let d = |name: &str| v(name) as i64;
    let e = elapsed_seconds;
    let sum = |prefix: &str| -> i64 { SCAN_ZONES.iter().map(|z| d(&format!("{prefix}{z}"))).sum() };

    let direct_scanned = sum("pgscan_direct_");
    let kswapd_scanned = sum("pgscan_kswapd_");
    let kswapd_reclaimed = d("kswapd_steal") + sum("pgsteal_kswapd_");
    let mut direct_reclaimed = sum("pgsteal_") + sum("pgsteal_direct_");
    if d("kswapd_steal") != 0 {
        direct_reclaimed -= kswapd_reclaimed;
    }
    let efficiency = |reclaimed: i64, scanned: i64| {
        if scanned == 0 {
            100
        } else {
            truncated_percent(reclaimed, scanned)
        }
    };
    let total_scanned = kswapd_scanned + direct_scanned;
    let direct_percentage = if total_scanned == 0 {
        0
    } else {
        truncated_percent(direct_scanned, total_scanned)
    };
    let zone_velocity = |zone: &str| {
        per_second(
            d(&format!("pgscan_kswapd_{zone}")) + d(&format!("pgscan_direct_{zone}")),
            e,
        )
    };

    // Compaction cost model (x86-64 access cost 56/8 = 7; page copy 2 * (7 + 4096/8) = 1038;
    // isolation 7 + 12 = 19; a migration failure 14; scanning a page 7), in units of 10^6.
    let compaction_cost = if new_migration_counters {
        // MMTests also adds 7 * compact_migrate_free and 14 * pgmigrate_fail, but it never
        // fills those keys in 2013, so both terms are 0.
        7.0 * d("compact_migrate_scanned") as f64
            + 19.0 * d("compact_isolated") as f64
            + 1038.0 * d("pgmigrate_success") as f64
    } else {
        7.0 * d("compact_blocks_moved") as f64 * 16384.0
            + 1038.0 * d("compact_pages_moved") as f64
            + 14.0 * d("compact_pagemigrate_failed") as f64
    } / 1e6;
    // AutoNUMA cost model: 7 per PTE update, 5000 per hinting fault, 19 per migrated page
    // (the isolation cost), in units of 10^6. The reference names the model without its
    // constants; they are read from MMTests' `MonitorMmtestsvmstat.pm` of 2013.
    let autonuma_cost = (7.0 * d("numa_pte_updates") as f64
        + 5000.0 * d("numa_hint_faults") as f64
        + 19.0 * d("numa_pages_migrated") as f64)
        / 1e6;

    let int = |name: &str| Cell::Int(d(name));
    let mut rows = vec![
        ("Minor Faults", Cell::Int(d("pgfault") - d("pgmajfault"))),
        ("Major Faults", int("pgmajfault")),
        ("Swap Ins", int("pswpin")),
        ("Swap Outs", int("pswpout")),
        ("Direct pages scanned", Cell::Int(direct_scanned)),
        ("Kswapd pages scanned", Cell::Int(kswapd_scanned)),
        ("Kswapd pages reclaimed", Cell::Int(kswapd_reclaimed)),
        ("Direct pages reclaimed", Cell::Int(direct_reclaimed)),
        (
            "Kswapd efficiency",
            Cell::Percent(efficiency(kswapd_reclaimed, kswapd_scanned)),
        ),
        (
            "Kswapd velocity",
            Cell::Velocity(per_second(kswapd_scanned, e)),
        ),
        (
            "Direct efficiency",
            Cell::Percent(efficiency(direct_reclaimed, direct_scanned)),
        ),
        (
            "Direct velocity",
            Cell::Velocity(per_second(direct_scanned, e)),
        ),
        ("Percentage direct scans", Cell::Percent(direct_percentage)),
        (
            "Zone normal velocity",
            Cell::Velocity(zone_velocity("normal")),
        ),
        (
            "Zone dma32 velocity",
            Cell::Velocity(zone_velocity("dma32")),
        ),
        ("Zone dma velocity", Cell::Velocity(zone_velocity("dma"))),
        (
            "Page writes by reclaim",
            Cell::Float3(d("nr_vmscan_write") as f64),
        ),
        (
            "Page writes file",
            Cell::Int(d("nr_vmscan_write") - d("pswpout")),
        ),
        ("Page writes anon", int("pswpout")),
        ("Page reclaim immediate", int("nr_vmscan_immediate_reclaim")),
        ("Sector Reads", int("pgpgin")),
        ("Sector Writes", int("pgpgout")),
        ("Page rescued immediate", int("pgrescued")),
        ("Slabs scanned", int("slabs_scanned")),
        ("Direct inode steals", int("pginodesteal")),
        ("Kswapd inode steals", int("kswapd_inodesteal")),
        ("Kswapd skipped wait", int("kswapd_skip_congestion_wait")),
        ("THP fault alloc", int("thp_fault_alloc")),
        ("THP collapse alloc", int("thp_collapse_alloc")),
        ("THP splits", int("thp_split")),
        ("THP fault fallback", int("thp_fault_fallback")),
        ("THP collapse fail", int("thp_collapse_alloc_failed")),
        ("Compaction stalls", int("compact_stall")),
        ("Compaction success", int("compact_success")),
        ("Compaction failures", int("compact_fail")),
    ];
    if new_migration_counters {
        rows.extend([
            ("Page migrate success", int("pgmigrate_success")),
            ("Page migrate failure", Cell::Int(0)),
            ("Compaction pages isolated", int("compact_isolated")),
            ("Compaction migrate scanned", int("compact_migrate_scanned")),
            ("Compaction free scanned", int("compact_free_scanned")),
        ]);
    } else {
        rows.extend([
            ("Compaction pages moved", int("compact_pages_moved")),
            ("Compaction move failure", int("compact_pagemigrate_failed")),
        ]);
    }
    rows.extend([
        ("Compaction cost", Cell::Int(compaction_cost.trunc() as i64)),
        ("NUMA PTE updates", int("numa_pte_updates")),
        ("NUMA hint faults", int("numa_hint_faults")),
        ("NUMA hint local faults", int("numa_hint_faults_local")),
        ("NUMA pages migrated", int("numa_pages_migrated")),
        ("AutoNUMA cost", Cell::Int(autonuma_cost.trunc() as i64)),
    ]);
    rows
}

/// Splits a run name for the two header lines (§5.2): before and after the first `-`.
///
/// When the text after that `-` starts with `rc` and a digit, the cut moves four characters
/// right (`3.9.0-rc3-vanilla` gives `3.9.0-rc3` / `vanilla`). The second part drops the
/// character at the cut if it is a `-`. A name without `-` goes whole on the first line.
pub fn split_kernel_name(name: &str) -> (&str, &str) {
    let Some(hyphen) = name.find('-') else {
        return (name, "");
    };
    let after = &name.as_bytes()[hyphen + 1..];
    let cut = if after.len() >= 3 && after.starts_with(b"rc") && after[2].is_ascii_digit() {
        hyphen + 4
    } else {
        hyphen
    };
    let (first, rest) = name.split_at(cut);
    (first, rest.strip_prefix('-').unwrap_or(rest))
}

/// The width of a table's kernel columns: `min`, or more where a part of a kernel name
/// ([`split_kernel_name`]) needs it, so that every part fits with a space before it.
/// MMTests prints a long part whole and lets it push the following cells right, which runs
/// names together and puts them over the wrong columns; mmsim widens the columns instead.
pub fn column_width(names: &[&str], min: usize) -> usize {
    names
        .iter()
        .map(|n| {
            let (a, b) = split_kernel_name(n);
            a.len().max(b.len()) + 1
        })
        .max()
        .unwrap_or(0)
        .max(min)
}

/// The two header lines naming the kernels (§5.2), each ending in `\n`: a blank cell
/// `label_width` wide, then per kernel a cell right-aligned in `cell_width` columns holding
/// the first (line 1) or second (line 2) part of [`split_kernel_name`]. A part longer than
/// the cell is printed whole; the tables size their cells with [`column_width`] so that
/// none is.
pub fn kernel_header(names: &[&str], label_width: usize, cell_width: usize) -> String {
    let columns: Vec<(&str, usize)> = names.iter().map(|n| (*n, cell_width)).collect();
    kernel_header_widths(&columns, label_width)
}

/// [`kernel_header`] with a width per column.
pub fn kernel_header_widths(columns: &[(&str, usize)], label_width: usize) -> String {
    let mut first = " ".repeat(label_width);
    let mut second = first.clone();
    for &(name, width) in columns {
        let (a, b) = split_kernel_name(name);
        first.push_str(&format!("{a:>width$}"));
        second.push_str(&format!("{b:>width$}"));
    }
    format!("{first}\n{second}\n")
}

/// Width of the value cells of a monitor table.
const MONITOR_CELL_WIDTH: usize = 12;

/// A monitor table (the vmstat table of §5.6): the two header lines, then one line per
/// row with the label padded to the longest label and one 12-wide cell per kernel in the
/// cell's own format. No percentages. Every line ends in `\n`.
pub fn format_monitor_table(kernels: &[&str], rows: &[(String, Vec<Cell>)]) -> String {
    let label_width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    let width = column_width(kernels, MONITOR_CELL_WIDTH);
    let mut out = kernel_header(kernels, label_width, width);
    for (label, cells) in rows {
        out.push_str(&format!("{label:<label_width$}"));
        for cell in cells {
            out.push_str(&cell.render(width));
        }
        out.push('\n');
    }
    out
}

/// Which way is better for a benchmark row, choosing the percentage function (§5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Higher is better: `pdiff`, new·100/base − 100.
    Higher,
    /// Lower is better: `pndiff`, 100 − new·100/base.
    Lower,
}

/// The percentage of `new` against `base` as the 2013 code computes it (`VMR/Stat.pm`).
/// Positive always means better than the baseline. Edge cases: 0 when `new == base` or
/// `new == 0`; otherwise, when `base == 0`, 100 for [`Direction::Higher`] and −99 for
/// [`Direction::Lower`].
pub fn percent_diff(direction: Direction, base: f64, new: f64) -> f64 {
    if new == base || new == 0.0 {
        return 0.0;
    }
    match (direction, base == 0.0) {
        (Direction::Higher, true) => 100.0,
        (Direction::Lower, true) => -99.0,
        (Direction::Higher, false) => new * 100.0 / base - 100.0,
        (Direction::Lower, false) => 100.0 - new * 100.0 / base,
    }
}

/// Splits a row label at its first space into statistic name and operation.
fn split_label(label: &str) -> (&str, &str) {
    label.split_once(' ').unwrap_or((label, ""))
}

/// Pads the statistic names and operations of `labels` to their longest (§5.3, §4) and
/// returns the padded labels and their common width.
fn padded_labels<'a>(labels: impl Iterator<Item = &'a str> + Clone) -> (Vec<String>, usize) {
    let stat_width = labels
        .clone()
        .map(|l| split_label(l).0.len())
        .max()
        .unwrap_or(0);
    let op_width = labels
        .clone()
        .map(|l| split_label(l).1.len())
        .max()
        .unwrap_or(0);
    let padded = labels
        .map(|l| {
            let (stat, op) = split_label(l);
            format!("{stat:<stat_width$} {op:<op_width$}")
        })
        .collect();
    (padded, stat_width + 1 + op_width)
}

/// A benchmark comparison table in the 2013 layout (§5.3, §5.5).
///
/// Each label (`"Ops memcachetest-0M"`) is split at its first space into statistic name
/// and operation, each padded to its longest. Each kernel cell is the value as
/// `%{value_width}.2f` followed by ` (%6.2f%)`, the percentage against the first kernel
/// from [`percent_diff`] (the baseline always shows `(  0.00%)`). The header cells are
/// `value_width + 6 + 4` wide. Every line ends in `\n`.
pub fn format_compare_table(
    kernels: &[&str],
    rows: &[(String, Vec<f64>, Direction)],
    value_width: usize,
) -> String {
    let (labels, label_width) = padded_labels(rows.iter().map(|(l, _, _)| l.as_str()));
    // One kernel has nothing to compare with: its cells carry no percentage.
    let pct_width = if kernels.len() > 1 { PCT_WIDTH } else { 0 };
    let cell = column_width(kernels, value_width + pct_width);
    let value_width = cell - pct_width;
    let mut out = kernel_header(kernels, label_width, cell);
    for (label, (_, values, direction)) in labels.iter().zip(rows) {
        out.push_str(label);
        let base = values.first().copied().unwrap_or(0.0);
        for (i, &value) in values.iter().enumerate() {
            let pct = (i > 0).then(|| percent_diff(*direction, base, value));
            out.push_str(&compare_cell(value, pct, value_width, pct_width));
        }
        out.push('\n');
    }
    out
}

/// Width of a percentage after a value: ` (` + 6 + `%)`.
const PCT_WIDTH: usize = 10;

/// One benchmark cell: the value with 2 decimals, then its percentage unless `pct_width` is
/// 0 (0.00% for the baseline, `pct` None). A value that is missing (NaN: a metric the run
/// did not produce) prints as `-`, and a percentage against a missing value is left blank.
fn compare_cell(value: f64, pct: Option<f64>, value_width: usize, pct_width: usize) -> String {
    let v = if value.is_nan() {
        format!("{:>value_width$}", "-")
    } else {
        format!("{value:>value_width$.2}")
    };
    if pct_width == 0 {
        return v;
    }
    match pct.unwrap_or(0.0) {
        p if p.is_nan() || value.is_nan() => format!("{v}{:pct_width$}", ""),
        p => format!("{v} ({p:>6.2}%)"),
    }
}

/// A benchmark comparison table with two columns per kernel, e.g. the published and the
/// simulated figure side by side (`mmsim reproduce`). Column headers are
/// `<source>-<kernel>`, so the first header line names the source and the second the
/// kernel. Each percentage compares a cell with the first kernel *of the same source*, so
/// both halves keep MMTests' meaning. `rows` hold, per kernel, `[source 0, source 1]`.
/// With `ratio` named, a third column per kernel holds that cell of the row (e.g.
/// simulated/published), headed `<ratio>-<kernel>`, without a percentage.
pub fn format_paired_compare_table(
    kernels: &[&str],
    sources: [&str; 2],
    rows: &[(String, Vec<[f64; 2]>, Direction)],
    value_width: usize,
    ratio: Option<(&str, &[Vec<Cell>])>,
) -> String {
    let names: Vec<String> = kernels
        .iter()
        .flat_map(|k| sources.iter().map(move |s| format!("{s}-{k}")))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let ratio_names: Vec<String> = ratio
        .map(|(r, _)| kernels.iter().map(|k| format!("{r}-{k}")).collect())
        .unwrap_or_default();
    let ratio_names: Vec<&str> = ratio_names.iter().map(String::as_str).collect();
    let (labels, label_width) = padded_labels(rows.iter().map(|(l, _, _)| l.as_str()));
    let cell = column_width(&names, value_width + PCT_WIDTH);
    let value_width = cell - PCT_WIDTH;
    let ratio_width = column_width(&ratio_names, RATIO_WIDTH);
    let mut columns = Vec::new();
    for (k, pair) in names.chunks(2).enumerate() {
        columns.extend(pair.iter().map(|n| (*n, cell)));
        if let Some(r) = ratio_names.get(k) {
            columns.push((*r, ratio_width));
        }
    }
    let mut out = kernel_header_widths(&columns, label_width);
    for (row, (label, (_, values, direction))) in labels.iter().zip(rows).enumerate() {
        out.push_str(label);
        let base = values.first().copied().unwrap_or([0.0; 2]);
        for (i, pair) in values.iter().enumerate() {
            for src in 0..2 {
                let pct = (i > 0).then(|| percent_diff(*direction, base[src], pair[src]));
                out.push_str(&compare_cell(pair[src], pct, value_width, PCT_WIDTH));
            }
            if let Some((_, cells)) = ratio {
                out.push_str(&cells[row][i].render(ratio_width));
            }
        }
        out.push('\n');
    }
    out
}

/// Width of a ratio column.
const RATIO_WIDTH: usize = 9;

/// The cell kind MMTests prints a vmstat row with, by its label: efficiencies and the
/// direct-scan percentage as `%d%`, velocities with 3 decimals, "Page writes by reclaim"
/// with 3 decimals (quirk 2 of `mmtests.md` §2.1), everything else `%d`. For numbers that
/// were transcribed rather than computed.
pub fn vmstat_cell(label: &str, value: f64) -> Cell {
    if label.ends_with("efficiency") || label == "Percentage direct scans" {
        Cell::Percent(value as i64)
    } else if label.ends_with("velocity") {
        Cell::Velocity(value)
    } else if label == "Page writes by reclaim" {
        Cell::Float3(value)
    } else {
        Cell::Int(value as i64)
    }
}

/// The eight MMTests iostat rows of one device, Mean rows first (`mmtests.md` §4).
pub fn iostat_rows(dev: &str, s: &crate::block::IostatSummary) -> [(String, f64); 8] {
    [
        (format!("Mean {dev}-avgqz"), s.mean_avgqz),
        (format!("Mean {dev}-await"), s.mean_await),
        (format!("Mean {dev}-r_await"), s.mean_r_await),
        (format!("Mean {dev}-w_await"), s.mean_w_await),
        (format!("Max {dev}-avgqz"), s.max_avgqz),
        (format!("Max {dev}-await"), s.max_await),
        (format!("Max {dev}-r_await"), s.max_r_await),
        (format!("Max {dev}-w_await"), s.max_w_await),
    ]
}

/// The iostat table (§4): rows as given (MMTests puts the `Mean` rows before the `Max`
/// rows), the statistic name and the `<dev>-<field>` part each padded to their longest,
/// then one `%12.2f` cell per kernel, no percentages. Every line ends in `\n`.
pub fn format_iostat_table(kernels: &[&str], rows: &[(String, Vec<f64>)]) -> String {
    let cells: Vec<(String, Vec<Cell>)> = rows
        .iter()
        .map(|(l, v)| (l.clone(), v.iter().map(|&x| Cell::Float2(x)).collect()))
        .collect();
    format_iostat_cells(kernels, &cells)
}

/// [`format_iostat_table`] with cells of any kind (e.g. ratios beside the values).
pub fn format_iostat_cells(kernels: &[&str], rows: &[(String, Vec<Cell>)]) -> String {
    let (labels, label_width) = padded_labels(rows.iter().map(|(l, _)| l.as_str()));
    let width = column_width(kernels, MONITOR_CELL_WIDTH);
    let mut out = kernel_header(kernels, label_width, width);
    for (label, (_, cells)) in labels.iter().zip(rows) {
        out.push_str(label);
        for cell in cells {
            out.push_str(&cell.render(width));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(counters: &[(&str, u64)], e: f64) -> Vec<(&'static str, Cell)> {
        let lookup = |name: &str| {
            counters
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| *v)
                .unwrap_or(0)
        };
        vmstat_summary(&lookup, e, true)
    }

    fn row(rows: &[(&'static str, Cell)], label: &str) -> Cell {
        rows.iter()
            .find(|(l, _)| *l == label)
            .unwrap_or_else(|| panic!("no row {label}"))
            .1
    }

    #[test]
    fn efficiency_is_100_when_nothing_was_scanned() {
        let rows = summary(&[], 10.0);
        assert_eq!(row(&rows, "Kswapd efficiency"), Cell::Percent(100));
        assert_eq!(row(&rows, "Direct efficiency"), Cell::Percent(100));
        assert_eq!(row(&rows, "Percentage direct scans"), Cell::Percent(0));
    }

    #[test]
    fn efficiency_is_truncated_not_rounded() {
        // 656 / 1000 = 65.6% prints as 65%.
        let rows = summary(
            &[
                ("pgscan_direct_normal", 1000),
                ("pgsteal_direct_normal", 656),
                ("pgscan_kswapd_dma32", 3),
                ("pgsteal_kswapd_dma32", 2),
            ],
            10.0,
        );
        assert_eq!(row(&rows, "Direct efficiency"), Cell::Percent(65));
        assert_eq!(row(&rows, "Direct efficiency").to_string(), "65%");
        assert_eq!(row(&rows, "Kswapd efficiency"), Cell::Percent(66));
        // 1000 / 1003 = 99.7% -> 99%.
        assert_eq!(row(&rows, "Percentage direct scans"), Cell::Percent(99));
    }

    #[test]
    fn velocities_are_scans_per_elapsed_second() {
        let rows = summary(
            &[
                ("pgscan_kswapd_normal", 1500),
                ("pgscan_kswapd_dma32", 500),
                ("pgscan_direct_normal", 230),
                ("pgscan_kswapd_movable", 70),
            ],
            1000.0,
        );
        assert_eq!(row(&rows, "Kswapd velocity"), Cell::Velocity(2.07));
        assert_eq!(row(&rows, "Direct velocity"), Cell::Velocity(0.23));
        assert_eq!(row(&rows, "Zone normal velocity"), Cell::Velocity(1.73));
        assert_eq!(row(&rows, "Zone dma32 velocity"), Cell::Velocity(0.5));
        assert_eq!(row(&rows, "Zone dma velocity"), Cell::Velocity(0.0));
        assert_eq!(row(&rows, "Kswapd velocity").to_string(), "2.070");
    }

    #[test]
    fn velocity_is_zero_without_elapsed_time() {
        let rows = summary(&[("pgscan_kswapd_normal", 1500)], 0.0);
        assert_eq!(row(&rows, "Kswapd velocity"), Cell::Velocity(0.0));
    }

    #[test]
    fn page_writes_split_into_file_and_anon() {
        let rows = summary(&[("nr_vmscan_write", 2500), ("pswpout", 2000)], 1.0);
        assert_eq!(row(&rows, "Page writes by reclaim"), Cell::Float3(2500.0));
        assert_eq!(row(&rows, "Page writes by reclaim").to_string(), "2500.000");
        assert_eq!(row(&rows, "Page writes file"), Cell::Int(500));
        assert_eq!(row(&rows, "Page writes anon"), Cell::Int(2000));
        assert_eq!(row(&rows, "Swap Outs"), Cell::Int(2000));
    }

    #[test]
    fn minor_faults_exclude_major_faults() {
        let rows = summary(&[("pgfault", 5000000), ("pgmajfault", 300)], 1.0);
        assert_eq!(row(&rows, "Minor Faults"), Cell::Int(4999700));
        assert_eq!(row(&rows, "Major Faults"), Cell::Int(300));
    }

    #[test]
    fn pre_3_5_direct_reclaim_subtracts_kswapd_steal() {
        // pgsteal_<zone> counted kswapd and direct reclaim together before 3.5.
        let rows = summary(
            &[
                ("kswapd_steal", 700),
                ("pgsteal_normal", 900),
                ("pgsteal_dma32", 100),
                ("pgscan_kswapd_normal", 1000),
                ("pgscan_direct_normal", 400),
            ],
            1.0,
        );
        assert_eq!(row(&rows, "Kswapd pages reclaimed"), Cell::Int(700));
        assert_eq!(row(&rows, "Direct pages reclaimed"), Cell::Int(300));
        assert_eq!(row(&rows, "Kswapd efficiency"), Cell::Percent(70));
        assert_eq!(row(&rows, "Direct efficiency"), Cell::Percent(75));
    }

    #[test]
    fn split_counters_are_summed_over_zones() {
        let rows = summary(
            &[
                ("pgsteal_kswapd_normal", 10),
                ("pgsteal_kswapd_dma32", 20),
                ("pgsteal_kswapd_high", 1),
                ("pgsteal_direct_normal", 5),
                ("pgsteal_direct_movable", 6),
                ("pgscan_direct_dma", 7),
                ("pgscan_direct_high", 8),
            ],
            1.0,
        );
        assert_eq!(row(&rows, "Kswapd pages reclaimed"), Cell::Int(31));
        assert_eq!(row(&rows, "Direct pages reclaimed"), Cell::Int(11));
        assert_eq!(row(&rows, "Direct pages scanned"), Cell::Int(15));
    }

    #[test]
    fn migrate_failure_is_always_zero_and_cost_is_truncated() {
        let rows = summary(
            &[
                ("pgmigrate_success", 9000),
                ("pgmigrate_fail", 55),
                ("pgmigrate_failure", 55),
                ("compact_isolated", 20000),
                ("compact_migrate_scanned", 100000),
                ("compact_free_scanned", 400000),
            ],
            1.0,
        );
        assert_eq!(row(&rows, "Page migrate failure"), Cell::Int(0));
        // (7 * 100000 + 19 * 20000 + 1038 * 9000) / 10^6 = 10.422
        assert_eq!(row(&rows, "Compaction cost"), Cell::Int(10));
    }

    #[test]
    fn old_migration_counters_show_pages_moved() {
        let lookup = |name: &str| match name {
            "compact_blocks_moved" => 10,
            "compact_pages_moved" => 1000,
            "compact_pagemigrate_failed" => 3,
            _ => 0,
        };
        let rows = vmstat_summary(&lookup, 1.0, false);
        let labels: Vec<_> = rows.iter().map(|(l, _)| *l).collect();
        assert!(labels.contains(&"Compaction pages moved"));
        assert!(labels.contains(&"Compaction move failure"));
        assert!(!labels.contains(&"Page migrate success"));
        // (7 * 10 * 16384 + 1038 * 1000 + 14 * 3) / 10^6 = 2.22496
        assert_eq!(row(&rows, "Compaction cost"), Cell::Int(2));
    }

    #[test]
    fn numa_rows_are_always_present_with_their_cost() {
        let rows = summary(&[], 1.0);
        assert_eq!(row(&rows, "AutoNUMA cost"), Cell::Int(0));
        assert_eq!(rows.last().unwrap().0, "AutoNUMA cost");
        let rows = summary(
            &[("numa_hint_faults", 1000), ("numa_pte_updates", 200000)],
            1.0,
        );
        // (7 * 200000 + 5000 * 1000) / 10^6 = 6.4
        assert_eq!(row(&rows, "AutoNUMA cost"), Cell::Int(6));
    }

    #[test]
    fn row_set_has_46_rows_in_display_order() {
        let rows = summary(&[], 1.0);
        assert_eq!(rows.len(), 46);
        assert_eq!(rows[0].0, "Minor Faults");
        assert_eq!(rows[16].0, "Page writes by reclaim");
    }

    #[test]
    fn json_value_is_truncated_for_integers_and_exact_for_velocities() {
        assert_eq!(json_value(&Cell::Percent(65)), 65.0);
        assert_eq!(json_value(&Cell::Velocity(1.0 / 3.0)), 1.0 / 3.0);
        assert_eq!(json_value(&Cell::Float3(2500.0)), 2500.0);
    }

    #[test]
    fn cells_render_in_their_printf_formats() {
        assert_eq!(Cell::Int(-3).render(6), "    -3");
        assert_eq!(Cell::Percent(88).render(12), "         88%");
        assert_eq!(Cell::Velocity(19.2).render(12), "      19.200");
        assert_eq!(Cell::Float2(9.5).render(12), "        9.50");
        assert_eq!(Cell::Float2(9.5).to_string(), "9.50");
    }

    #[test]
    fn pdiff_and_pndiff_edge_cases() {
        use Direction::{Higher, Lower};
        assert_eq!(percent_diff(Higher, 5.0, 5.0), 0.0);
        assert_eq!(percent_diff(Lower, 5.0, 5.0), 0.0);
        assert_eq!(percent_diff(Higher, 5.0, 0.0), 0.0);
        assert_eq!(percent_diff(Lower, 5.0, 0.0), 0.0);
        assert_eq!(percent_diff(Higher, 0.0, 0.0), 0.0);
        assert_eq!(percent_diff(Higher, 0.0, 3.0), 100.0);
        assert_eq!(percent_diff(Lower, 0.0, 3.0), -99.0);
        assert_eq!(percent_diff(Higher, 200.0, 150.0), -25.0);
        assert_eq!(percent_diff(Lower, 200.0, 150.0), 25.0);
        // Seed: memcachetest-0M 23117 -> 22780 is -1.46%, swaptotal 140138 -> 18 is 99.99%.
        assert_eq!(
            format!("{:.2}", percent_diff(Higher, 23117.0, 22780.0)),
            "-1.46"
        );
        assert_eq!(
            format!("{:.2}", percent_diff(Lower, 140138.0, 18.0)),
            "99.99"
        );
    }

    #[test]
    fn kernel_names_split_at_first_hyphen_with_rc_rule() {
        assert_eq!(split_kernel_name("3.10.0-vanilla"), ("3.10.0", "vanilla"));
        assert_eq!(
            split_kernel_name("3.9.0-rc3-vanilla"),
            ("3.9.0-rc3", "vanilla")
        );
        assert_eq!(
            split_kernel_name("3.10.0-rc5-patched"),
            ("3.10.0-rc5", "patched")
        );
        assert_eq!(
            split_kernel_name("3.9.0-mm1-mmotm-20130522"),
            ("3.9.0", "mm1-mmotm-20130522")
        );
        assert_eq!(split_kernel_name("3.9.0-rcu-x"), ("3.9.0", "rcu-x"));
        assert_eq!(split_kernel_name("3.9"), ("3.9", ""));
        assert_eq!(split_kernel_name("3.9.0-rc3"), ("3.9.0-rc3", ""));
    }

    #[test]
    fn kernel_header_right_aligns_both_lines() {
        assert_eq!(
            kernel_header(&["3.10.0-vanilla", "3.10.0-rc5-patched"], 4, 12),
            "          3.10.0  3.10.0-rc5\n         vanilla     patched\n"
        );
    }

    #[test]
    fn compare_table_pads_statistic_and_operation() {
        let rows = vec![
            (
                "Min Files/sec".to_string(),
                vec![51.0, 48.4],
                Direction::Higher,
            ),
            (
                "TrueMean Files/sec".to_string(),
                vec![59.0, 56.03],
                Direction::Higher,
            ),
            (
                "Stddev Files/sec".to_string(),
                vec![4.32, 4.12],
                Direction::Lower,
            ),
        ];
        let text = format_compare_table(&["3.10.0-vanilla", "3.10.0-rc5-patched"], &rows, 12);
        let expected = "                                  3.10.0            3.10.0-rc5\n\
                        \x20                                vanilla               patched\n\
                        Min      Files/sec       51.00 (  0.00%)       48.40 ( -5.10%)\n\
                        TrueMean Files/sec       59.00 (  0.00%)       56.03 ( -5.03%)\n\
                        Stddev   Files/sec        4.32 (  0.00%)        4.12 (  4.63%)\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn iostat_table_matches_reference_example() {
        let rows: Vec<(String, Vec<f64>)> = [
            ("Mean sda-avgqz", 9.50, 4.75),
            ("Mean sda-await", 145.00, 72.50),
            ("Mean sda-r_await", 10.00, 5.00),
            ("Mean sda-w_await", 146.00, 73.00),
            ("Max sda-avgqz", 14.00, 7.00),
            ("Max sda-await", 190.00, 95.00),
            ("Max sda-r_await", 10.00, 5.00),
            ("Max sda-w_await", 191.00, 95.50),
        ]
        .iter()
        .map(|(l, a, b)| (l.to_string(), vec![*a, *b]))
        .collect();
        let expected = "                      3.10.0  3.10.0-rc5
                     vanilla     patched
Mean sda-avgqz          9.50        4.75
Mean sda-await        145.00       72.50
Mean sda-r_await       10.00        5.00
Mean sda-w_await      146.00       73.00
Max  sda-avgqz         14.00        7.00
Max  sda-await        190.00       95.00
Max  sda-r_await       10.00        5.00
Max  sda-w_await      191.00       95.50
";
        assert_eq!(
            format_iostat_table(&["3.10.0-vanilla", "3.10.0-rc5-patched"], &rows),
            expected
        );
    }
}
