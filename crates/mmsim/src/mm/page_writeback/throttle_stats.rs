//! What dirty throttling did to the writers: each sleep in `balance_dirty_pages`, and the
//! time each throttled call kept its task (sleeps plus, under 2.6.37, the pages it wrote).
//! These feed seed 003's pause-time figures; nothing in the model reads them.

use crate::engine::{Nanos, MSEC};

/// Durations counted in 1 ms buckets up to [`Durations::SPAN_MS`]; longer ones share the
/// last bucket, and the longest is kept exactly. The buckets are allocated at the first
/// duration, so a run that never throttles pays nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Durations {
    buckets: Vec<u64>,
    count: u64,
    total: Nanos,
    max: Nanos,
}

impl Durations {
    /// Milliseconds the buckets cover.
    pub const SPAN_MS: usize = 10_000;

    /// Count one duration.
    pub fn record(&mut self, d: Nanos) {
        if self.buckets.is_empty() {
            self.buckets = vec![0; Self::SPAN_MS + 1];
        }
        let ms = (d / MSEC) as usize;
        self.buckets[ms.min(Self::SPAN_MS)] += 1;
        self.count += 1;
        self.total += d;
        self.max = self.max.max(d);
    }

    /// How many were counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The longest.
    pub fn max(&self) -> Nanos {
        self.max
    }

    /// The mean, 0 when none was counted.
    pub fn mean(&self) -> Nanos {
        self.total.checked_div(self.count).unwrap_or(0)
    }

    /// How many fell in each 1 ms bucket, from 0 ms to the longest (the last bucket also
    /// holds those of [`Self::SPAN_MS`] ms and more). Empty when none was counted.
    pub fn per_ms(&self) -> &[u64] {
        let last = ((self.max / MSEC) as usize).min(Self::SPAN_MS);
        self.buckets.get(..=last).unwrap_or(&[])
    }

    /// The `q` quantile (0 < q ≤ 1), to the millisecond below: the smallest bucket with at
    /// least `q` of the durations at or under it. 0 when none was counted.
    pub fn quantile(&self, q: f64) -> Nanos {
        if self.count == 0 {
            return 0;
        }
        let want = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (ms, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= want {
                return if ms == Self::SPAN_MS {
                    self.max
                } else {
                    ms as Nanos * MSEC
                };
            }
        }
        self.max
    }

    /// How many lasted at least `d`, to the millisecond (past the span, how many are past it).
    pub fn at_least(&self, d: Nanos) -> u64 {
        let from = ((d / MSEC) as usize).min(Self::SPAN_MS);
        self.buckets.iter().skip(from).sum()
    }
}

/// The throttle's effect on every writer of the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThrottleStats {
    /// Each sleep (`io_schedule_timeout` of a pause).
    pub pauses: Durations,
    /// Each call of `balance_dirty_pages` that slept or wrote: from entry to return.
    pub calls: Durations,
}

#[cfg(test)]
mod tests {
    #[test]
    fn per_ms_counts_each_millisecond_up_to_the_longest() {
        let mut d = super::Durations::default();
        assert!(d.per_ms().is_empty());
        for ms in [0, 2, 2] {
            d.record(ms * super::MSEC + 1);
        }
        assert_eq!(d.per_ms(), &[1, 0, 2]);
        d.record(20 * crate::engine::SEC);
        assert_eq!(d.per_ms().len(), super::Durations::SPAN_MS + 1);
        assert_eq!(
            d.per_ms()[super::Durations::SPAN_MS],
            1,
            "the last holds the longer ones"
        );
    }

    use super::*;

    #[test]
    fn quantiles_come_from_millisecond_buckets_and_the_max_is_exact() {
        let mut d = Durations::default();
        assert_eq!((d.quantile(0.5), d.max(), d.mean()), (0, 0, 0));
        for ms in 1..=100 {
            d.record(ms * MSEC + 300_000);
        }
        assert_eq!(d.count(), 100);
        assert_eq!(d.quantile(0.5), 50 * MSEC);
        assert_eq!(d.quantile(0.99), 99 * MSEC);
        assert_eq!(d.quantile(1.0), 100 * MSEC);
        assert_eq!(d.max(), 100 * MSEC + 300_000);
        assert_eq!(d.mean(), 50 * MSEC + MSEC / 2 + 300_000);
        assert_eq!(d.at_least(91 * MSEC), 10);
    }

    #[test]
    fn very_long_durations_share_the_last_bucket_and_report_the_max() {
        let mut d = Durations::default();
        d.record(5 * MSEC);
        d.record(30_000 * MSEC);
        d.record(20_000 * MSEC);
        assert_eq!(d.quantile(1.0), 30_000 * MSEC);
        assert_eq!(
            d.quantile(0.5),
            30_000 * MSEC,
            "the bucket past the span reports the max"
        );
        assert_eq!(d.at_least(15_000 * MSEC), 2);
        assert_eq!(d.at_least(MSEC), 3);
    }
}
