//! Time series sampled during a run (`--timeseries FILE`), written as CSV: one row per
//! sample, gauges as their value at the sample, event counters cumulative (difference rows
//! to get per-interval counts, as MMTests' proc-vmstat graphs do). After the fixed
//! [`COLUMNS`] come two per block device: `write_bw_kbps_<dev>`, the writeback bandwidth
//! estimate (`bdi->avg_write_bandwidth`, KiB/s), and `written_<dev>`, pages written
//! (`BDI_WRITTEN`, cumulative).
//!
//! A series kept in memory also carries the zones' sizes and watermarks ([`ZoneInfo`]),
//! which the graphs draw; they are fixed at boot and are not written to the CSV.

/// The columns, in order. `time_s` is simulated seconds.
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
];

/// The per-device columns of device `name`, in order.
pub fn device_columns(name: &str) -> [String; 2] {
    [format!("write_bw_kbps_{name}"), format!("written_{name}")]
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
    /// The zones in `nr_free_pages_*` column order.
    pub zones: Vec<ZoneInfo>,
    /// One row per sample, values in [`COLUMNS`] then `device_columns` order.
    pub rows: Vec<Vec<f64>>,
}

impl TimeSeries {
    /// The CSV header line, `\n` included.
    pub fn header(&self) -> String {
        let mut out = COLUMNS.join(",");
        for c in &self.device_columns {
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
        ts.device_columns = device_columns("sda").to_vec();
        ts.rows[0].extend([2048.0, 7.0]);
        let csv = ts.to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("time_s,nr_free_pages_dma,"));
        assert!(lines[1].starts_with("1.500,42,0,"));
        assert!(lines[0].ends_with(",dirty_thresh,write_bw_kbps_sda,written_sda"));
        assert_eq!(lines[1].split(',').count(), COLUMNS.len() + 2);
        assert!(lines[1].ends_with(",2048,7"));
    }
}
