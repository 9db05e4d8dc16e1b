//! md RAID0 (`drivers/md/raid0.c`): chunks striped round robin over member disks.

use super::*;

/// md RAID0 chunk, 512 KiB (mdadm ≥ 3.1 default; 64 KiB before).
pub const RAID0_CHUNK_SECTORS: u32 = 1024;

/// md RAID0 over N members with equal-sized members (one strip zone).
///
/// Sector `s` lives in chunk `c = s / chunk` on member `c mod N` at member sector
/// `(c / N)·chunk + s mod chunk`. A request is split at chunk boundaries, each part goes to
/// its member at `now` (members serve their parts in order, in parallel with each other),
/// and the request completes when the last part does. Simplification: in the kernel md is
/// bio-based and each member has its own queue, elevator and request pool; here one queue
/// fronts the array (suggested `max_sectors` one full stripe, depth N).
#[derive(Debug)]
pub struct Raid0 {
    name: String,
    members: Vec<Box<dyn Device>>,
    chunk_sectors: u32,
}

impl Raid0 {
    pub fn new(
        name: &str,
        members: Vec<Box<dyn Device>>,
        chunk_sectors: u32,
    ) -> Result<Self, DeviceError> {
        check(name, !members.is_empty(), || {
            "RAID0 with 0 members: no IO could ever complete".into()
        })?;
        check(name, chunk_sectors >= 1, || "chunk size is zero".into())?;
        Ok(Raid0 {
            name: name.to_string(),
            members,
            chunk_sectors,
        })
    }

    /// N default 7200 rpm disks (`sdb`, `sdc`, ...) with a 512 KiB chunk.
    pub fn of_hdds(name: &str, n: usize) -> Result<Self, DeviceError> {
        let members = (0..n)
            .map(|i| {
                let member = format!("sd{}", (b'b' + (i % 25) as u8) as char);
                Hdd::desktop_7200(&member).map(|d| Box::new(d) as Box<dyn Device>)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Raid0::new(name, members, RAID0_CHUNK_SECTORS)
    }

    pub fn members(&self) -> &[Box<dyn Device>] {
        &self.members
    }

    /// The member IOs of `io`, in order: (member index, member IO).
    pub fn split(&self, io: &Io) -> Vec<(usize, Io)> {
        let n = self.members.len() as u64;
        let cs = u64::from(self.chunk_sectors);
        let mut parts = Vec::new();
        let (mut s, end) = (io.sector, io.end());
        while s < end {
            let chunk = s / cs;
            let off = s % cs;
            let len = (cs - off).min(end - s);
            parts.push((
                (chunk % n) as usize,
                Io {
                    dir: io.dir,
                    sector: (chunk / n) * cs + off,
                    nr_sectors: len as u32,
                },
            ));
            s += len;
        }
        parts
    }
}

impl Device for Raid0 {
    fn name(&self) -> &str {
        &self.name
    }

    fn service_time(&mut self, io: &Io, now: Nanos) -> Nanos {
        let mut longest = 0;
        for (m, part) in self.split(io) {
            longest = longest.max(self.members[m].service_time(&part, now));
        }
        longest
    }

    /// One chunk: md raid0 sets `max_hw_sectors` to the chunk size, so each request lives
    /// on one member (larger IOs given to [`Device::service_time`] are split anyway).
    fn max_sectors(&self) -> u32 {
        self.chunk_sectors
    }

    /// One request per member at a time.
    fn queue_depth(&self) -> u32 {
        self.members.len() as u32
    }

    /// Deadline, chunk-sized requests, depth N and `nr_requests` = N × 128: the array's
    /// pool stands for the N member pools, so it fills (and congests) when the members'
    /// pools would, for IO spread evenly over the members. (md's own congestion test is
    /// "any member congested"; uneven IO congests a member earlier than this.)
    fn queue_config(&self) -> QueueConfig {
        let n = self.members.len() as u32;
        QueueConfig {
            nr_requests: BLKDEV_MAX_RQ.saturating_mul(n),
            max_sectors: self.max_sectors(),
            depth: n,
            ..QueueConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::device::testutil::*;

    #[test]
    fn large_sequential_request_on_raid0_of_4_is_about_4x_faster_than_one_disk() {
        let mut single = Hdd::desktop_7200("sdb").unwrap();
        let mut raid = Raid0::of_hdds("md0", 4).unwrap();
        assert_eq!(raid.max_sectors(), RAID0_CHUNK_SECTORS);
        let cfg = raid.queue_config();
        assert_eq!((cfg.nr_requests, cfg.depth), (512, 4));
        let ios = |_| (0..50u64).map(|i| w(i * 4096, 4096)); // 50 × 2 MiB
        let t1 = run(&mut single, ios(())) as f64;
        let t4 = run(&mut raid, ios(())) as f64;
        let speedup = t1 / t4;
        assert!((3.8..=4.05).contains(&speedup), "speed-up {speedup:.2}");
    }

    #[test]
    fn raid0_maps_chunks_round_robin_over_members() {
        let raid = Raid0::of_hdds("md0", 3).unwrap();
        let parts = raid.split(&w(1000, 3100));
        let got: Vec<(usize, u64, u32)> = parts
            .iter()
            .map(|(m, io)| (*m, io.sector, io.nr_sectors))
            .collect();
        // chunks 0..3 of 1024 sectors: 1000-1023 on m0, 1024-2047 m1, 2048-3071 m2,
        // 3072-4095 → chunk 3 → m0 at member sector 1024.
        assert_eq!(
            got,
            vec![
                (0, 1000, 24),
                (1, 0, 1024),
                (2, 0, 1024),
                (0, 1024, 1024),
                (1, 1024, 4)
            ]
        );
    }
}
