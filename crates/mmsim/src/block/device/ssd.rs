//! A SATA SSD of 2012-13: a fixed per-request cost plus size over bandwidth.

use super::*;

/// Per-request cost of a 2012-13 SATA SSD: "< 0.1 ms access" (`kernel-writeback.md` §9.3);
/// the bound is taken.
pub const SSD_OVERHEAD: Nanos = 100 * USEC;
/// Sequential read, 520 MB/s (AnandTech Samsung 830 review).
pub const SSD_READ_BW: u64 = 520_000_000;
/// Sequential write, 400 MB/s (Samsung 830/840 class, `kernel-writeback.md` §9.3).
pub const SSD_WRITE_BW: u64 = 400_000_000;

/// An SSD: `overhead + size / bw`, requests served one after another (internal parallelism
/// and write amplification are not modelled).
#[derive(Clone, Debug)]
pub struct Ssd {
    name: String,
    overhead: Nanos,
    read_bw: u64,
    write_bw: u64,
    busy_until: Nanos,
}

impl Ssd {
    pub fn new(
        name: &str,
        overhead: Nanos,
        read_bw: u64,
        write_bw: u64,
    ) -> Result<Self, DeviceError> {
        check_bw(name, "read", read_bw)?;
        check_bw(name, "write", write_bw)?;
        Ok(Ssd {
            name: name.to_string(),
            overhead,
            read_bw,
            write_bw,
            busy_until: 0,
        })
    }

    /// A Samsung 830 class SATA SSD.
    pub fn sata_2012(name: &str) -> Result<Self, DeviceError> {
        Ssd::new(name, SSD_OVERHEAD, SSD_READ_BW, SSD_WRITE_BW)
    }
}

impl Device for Ssd {
    fn name(&self) -> &str {
        &self.name
    }

    fn rotational(&self) -> bool {
        false
    }

    fn service_time(&mut self, io: &Io, now: Nanos) -> Nanos {
        let bw = match io.dir {
            Dir::Read => self.read_bw,
            Dir::Write => self.write_bw,
        };
        let start = now.max(self.busy_until);
        self.busy_until = start + self.overhead + transfer(io.bytes(), bw);
        self.busy_until - now
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::device::testutil::*;

    #[test]
    fn ssd_costs_overhead_plus_size_over_bandwidth() {
        let mut d = Ssd::sata_2012("sdb").unwrap();
        let t = d.service_time(&w(0, 1024), 0);
        assert_eq!(t, SSD_OVERHEAD + transfer(512 * 1024, SSD_WRITE_BW)); // ≈ 1.41 ms
        let r = Io {
            dir: Dir::Read,
            ..w(5_000_000, 8)
        };
        assert_eq!(
            d.service_time(&r, SEC),
            SSD_OVERHEAD + transfer(4096, SSD_READ_BW)
        );
    }
}
