//! Time series sampled during a run (`--timeseries FILE`), written as CSV: one row per
//! sample, gauges as their value at the sample, event counters cumulative (difference rows
//! to get per-interval counts, as MMTests' proc-vmstat graphs do). After the fixed
//! [`COLUMNS`] come [`DEVICE_COLUMNS`] for each block device, named `<column>_<dev>`, then
//! with memory cgroups [`CGROUP_COLUMNS`] for each group below the root, named
//! `<column>_<path>` (`usage_in_bytes_A/B`).
//!
//! A series kept in memory also carries the zones' sizes and watermarks ([`ZoneInfo`]),
//! which the graphs draw; they are fixed at boot and are not written to the CSV.

/// The columns, in order. `time_s` is simulated seconds; `swap_used` is /proc/meminfo's
/// SwapTotal − SwapFree, in pages, as the others.
pub const COLUMNS: &[&str] = &[
    "time_s",
    "nr_free_pages_dma",
    "nr_free_pages_dma32",
    "nr_free_pages_normal",
    "nr_dirty",
    "nr_writeback",
    "nr_unstable",
    "nr_anon_pages",
    "nr_file_pages",
    "nr_slab_reclaimable",
    "nr_active_anon",
    "nr_inactive_anon",
    "nr_active_file",
    "nr_inactive_file",
    "pswpin",
    "pswpout",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "allocstall",
    "dirty_background_thresh",
    "dirty_thresh",
    "nr_dirtied",
    "nr_written",
    "swap_used",
];

/// The per-device columns, each named `<column>_<dev>`, in order:
/// - `write_bw_kbps`: the kernel's own estimate of the device's write bandwidth (3.x
///   `avg_write_bandwidth`, IO-less v3 `write_bandwidth`; 0 under 2.6.37, which has none),
///   KiB/s;
/// - `written`, `dirtied`: `BDI_WRITTEN` and `BDI_DIRTIED`, pages, cumulative;
/// - `bdi_reclaimable`, `bdi_writeback`: `BDI_RECLAIMABLE` (dirty and unstable) and
///   `BDI_WRITEBACK`, pages;
/// - `bdi_thresh`, `bdi_target`, `task_rate_kbps`: what `balance_dirty_pages` last computed
///   ([`ThrottleView`](crate::mm::backing_dev::ThrottleView)): the bdi's limit, the point it
///   steers the bdi's dirty pages to, and the task's rate limit (KiB/s); 0 before any
///   throttling;
/// - `base_rate_kbps`: the bdi's base rate limit (3.x `dirty_ratelimit`, v3
///   `throttle_bandwidth`; 0 under 2.6.37), KiB/s;
/// - `nfs_commit_sent`, `nfs_committed`: pages sent in COMMITs and pages COMMITs made stable,
///   cumulative (0 but on an NFS mount).
pub const DEVICE_COLUMNS: &[&str] = &[
    "write_bw_kbps",
    "written",
    "dirtied",
    "bdi_reclaimable",
    "bdi_writeback",
    "bdi_thresh",
    "bdi_target",
    "base_rate_kbps",
    "task_rate_kbps",
    "nfs_commit_sent",
    "nfs_committed",
];

/// The per-group columns, each named `<column>_<path>`: the group's
/// `memory.usage_in_bytes`, and `memory.stat`'s `swap` (its pages in swap), bytes.
pub const CGROUP_COLUMNS: &[&str] = &["usage_in_bytes", "swap"];

/// The per-group columns of memory cgroup `path` (`A`, `A/B`), in order.
pub fn cgroup_columns(path: &str) -> Vec<String> {
    CGROUP_COLUMNS
        .iter()
        .map(|c| format!("{c}_{path}"))
        .collect()
}

/// The per-device columns of device `name`, in order.
pub fn device_columns(name: &str) -> Vec<String> {
    DEVICE_COLUMNS
        .iter()
        .map(|c| format!("{c}_{name}"))
        .collect()
}

/// A zone as booted: its name, size and watermarks (they do not change during a run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ZoneInfo {
    /// `DMA`, `DMA32` or `Normal`.
    pub name: String,
    /// Pages handed to the buddy allocator; 0 for an empty zone.
    pub managed_pages: u64,
    /// min, low and high watermarks, pages.
    pub watermarks: [u64; 3],
}

/// Samples of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeSeries {
    /// The per-device columns after [`COLUMNS`] ([`device_columns`] of each device).
    pub device_columns: Vec<String>,
    /// The per-group columns after those ([`cgroup_columns`] of each group).
    pub cgroup_columns: Vec<String>,
    /// The zones in `nr_free_pages_*` column order.
    pub zones: Vec<ZoneInfo>,
    /// One row per sample, values in [`COLUMNS`], `device_columns`, `cgroup_columns` order.
    pub rows: Vec<Vec<f64>>,
}

impl TimeSeries {
    /// The values of column `name` ([`COLUMNS`], then the device and group columns), one
    /// per sample; empty if there is no such column.
    pub fn column<'a>(&'a self, name: &str) -> impl Iterator<Item = f64> + 'a {
        let i = COLUMNS.iter().position(|c| *c == name).or_else(|| {
            self.device_columns
                .iter()
                .chain(&self.cgroup_columns)
                .position(|c| c == name)
                .map(|j| COLUMNS.len() + j)
        });
        self.rows
            .iter()
            .filter_map(move |r| i.and_then(|i| r.get(i).copied()))
    }

    /// The CSV header line, `\n` included.
    pub fn header(&self) -> String {
        let mut out = COLUMNS.join(",");
        for c in self.device_columns.iter().chain(&self.cgroup_columns) {
            out.push(',');
            out.push_str(c);
        }
        out.push('\n');
        out
    }

    /// One sample as a CSV line, `\n` included. Integers print without a fraction; the
    /// time with 3 decimals.
    pub fn line(row: &[f64]) -> String {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, v)| {
                if i == 0 {
                    format!("{v:.3}")
                } else {
                    format!("{v}")
                }
            })
            .collect();
        cells.join(",") + "\n"
    }

    /// The CSV text: [`header`](Self::header), then one [`line`](Self::line) per sample.
    pub fn to_csv(&self) -> String {
        let mut out = self.header();
        for row in &self.rows {
            out.push_str(&Self::line(row));
        }
        out
    }
}

/// Bytes a CSV line of `columns` columns is expected to take at most, for predicting a
/// file's size before a run: a counter of up to 10 digits and a comma per column.
pub const fn max_line_bytes(columns: usize) -> u64 {
    columns as u64 * 11
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_a_header_and_one_line_per_sample() {
        let mut row = vec![0.0; COLUMNS.len()];
        row[0] = 1.5;
        row[1] = 42.0;
        let mut ts = TimeSeries {
            rows: vec![row],
            ..Default::default()
        };
        ts.device_columns = device_columns("sda");
        ts.rows[0].extend([2048.0, 7.0]);
        ts.rows[0].extend(vec![0.0; DEVICE_COLUMNS.len() - 3]);
        ts.rows[0].push(9.0);
        let csv = ts.to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("time_s,nr_free_pages_dma,"));
        assert!(lines[1].starts_with("1.500,42,0,"));
        assert!(
            lines[0].contains(",nr_written,swap_used,write_bw_kbps_sda,written_sda,dirtied_sda,")
        );
        assert!(lines[0].ends_with(",nfs_commit_sent_sda,nfs_committed_sda"));
        assert_eq!(
            lines[1].split(',').count(),
            COLUMNS.len() + DEVICE_COLUMNS.len()
        );
        assert!(lines[1].contains(",2048,7,0,"));
        assert!(lines[1].ends_with(",0,9"));
        assert_eq!(ts.column("time_s").collect::<Vec<_>>(), [1.5]);
        assert_eq!(ts.column("written_sda").collect::<Vec<_>>(), [7.0]);
        assert_eq!(ts.column("nfs_committed_sda").collect::<Vec<_>>(), [9.0]);
        assert_eq!(ts.column("written_sdb").count(), 0);
        ts.cgroup_columns = cgroup_columns("A/B");
        ts.rows[0].extend([4096.0, 0.0]);
        let csv = ts.to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].ends_with(",nfs_committed_sda,usage_in_bytes_A/B,swap_A/B"));
        assert!(lines[1].ends_with(",0,9,4096,0"));
    }
}
