//! `lib/proportions.c` (2.6.24 – 3.4): event-clocked floating proportions, what 2.6.37 uses
//! for a bdi's share of writeback completions (`vm_completions`) and a task's share of page
//! dirtyings (`vm_dirties`), `kernel-writeback.md` §2.4 and §2.5.
//!
//! Time is counted in events: the global count runs on, and each `2^(shift-1)` events
//! begin a new half-period. A local count is halved once per half-period it missed, when it
//! is next looked at. The share is `local / (2^(shift-1) + global mod 2^(shift-1))`. mmsim
//! counts exactly (the kernel's per-CPU counters are approximate by a batch per CPU).

/// `PROP_MAX_SHIFT`: `3 × BITS_PER_LONG / 4` on 64-bit.
const PROP_MAX_SHIFT: u32 = 48;

/// `calc_period_shift()`: the period is about the dirty limit, rounded up to a power of
/// two, so that a half-period is about as many events as the limit has pages.
pub fn calc_period_shift(dirty_total: u64) -> u32 {
    2 + (dirty_total.max(2) - 1).ilog2()
}

/// A `prop_descriptor`'s global state (`prop_global`): the shift and the event count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropGlobal {
    shift: u32,
    events: u64,
}

/// One local count (`prop_local_percpu` of a bdi, `prop_local_single` of a task).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PropLocal {
    events: u64,
    /// The global half-period this count was last brought up to (a multiple of
    /// `2^(shift-1)`).
    period: u64,
}

impl PropGlobal {
    /// `prop_descriptor_init(pd, shift)`.
    pub fn new(shift: u32) -> Self {
        PropGlobal {
            shift: shift.clamp(1, PROP_MAX_SHIFT),
            events: 0,
        }
    }

    /// Events in half a period.
    fn period_2(&self) -> u64 {
        1 << (self.shift - 1)
    }

    /// `prop_norm_*`: halve `pl` once for each half-period it missed.
    fn norm(&self, pl: &mut PropLocal) {
        let global_period = self.events & !(self.period_2() - 1);
        if pl.period == global_period {
            return;
        }
        let missed = (global_period - pl.period) >> (self.shift - 1);
        pl.events = if missed < 64 { pl.events >> missed } else { 0 };
        pl.period = global_period;
    }

    /// `__prop_inc_percpu` / `prop_inc_single`: one event of `pl`.
    pub fn inc(&mut self, pl: &mut PropLocal) {
        self.norm(pl);
        pl.events += 1;
        self.events += 1;
    }

    /// `prop_fraction_*`: `(numerator, denominator)` of `pl`'s share.
    pub fn fraction(&self, pl: &mut PropLocal) -> (u64, u64) {
        self.norm(pl);
        let p2 = self.period_2();
        (pl.events, p2 + (self.events & (p2 - 1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_is_the_dirty_limit_rounded_up_to_a_power_of_two() {
        // 2 + ilog2(limit - 1): a half-period of 2^(shift-1) ≥ limit events.
        assert_eq!(calc_period_shift(1 << 16), 2 + 15);
        assert_eq!(calc_period_shift((1 << 16) + 1), 2 + 16);
        assert_eq!(calc_period_shift(150_000), 2 + 17);
        assert_eq!(calc_period_shift(0), 2);
    }

    #[test]
    fn a_lone_writer_approaches_the_whole_share() {
        let mut g = PropGlobal::new(4); // half-period of 8 events
        let mut a = PropLocal::default();
        for _ in 0..5 {
            g.inc(&mut a);
        }
        assert_eq!(g.fraction(&mut a), (5, 8 + 5));
        for _ in 0..3 {
            g.inc(&mut a);
        }
        // A new half-period: the count of 8 is halved, the denominator restarts at 8.
        assert_eq!(g.fraction(&mut a), (4, 8));
        // In steady state the count settles at 2^shift - 1 before each halving, so the share
        // runs from 7/8 just after a boundary up to 15/16 just before the next.
        for i in 0..1000 {
            g.inc(&mut a);
            let (n, d) = g.fraction(&mut a);
            if i > 100 {
                assert!(n * 8 >= d * 7 && n * 16 <= d * 15, "{n}/{d}");
            }
        }
    }

    #[test]
    fn an_idle_count_halves_once_per_half_period_it_missed() {
        let mut g = PropGlobal::new(4);
        let (mut a, mut b) = (PropLocal::default(), PropLocal::default());
        for _ in 0..8 {
            g.inc(&mut a);
        }
        assert_eq!(g.fraction(&mut a), (4, 8));
        // b writes 24 events: three half-periods pass, a is halved three more times.
        for _ in 0..24 {
            g.inc(&mut b);
        }
        assert_eq!(g.fraction(&mut a), (0, 8));
        // b's own count is halved at each boundary too: 8 → 4 + 8 → 6 + 8 → 7.
        assert_eq!(g.fraction(&mut b), (7, 8));
    }

    #[test]
    fn two_equal_writers_get_half_each() {
        let mut g = PropGlobal::new(10);
        let (mut a, mut b) = (PropLocal::default(), PropLocal::default());
        for _ in 0..10_000 {
            g.inc(&mut a);
            g.inc(&mut b);
        }
        let (na, d) = g.fraction(&mut a);
        let (nb, _) = g.fraction(&mut b);
        assert!(na.abs_diff(nb) <= 1);
        assert!((na * 100 / d).abs_diff(50) <= 2, "{na}/{d}");
    }
}
