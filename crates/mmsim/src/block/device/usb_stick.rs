//! A USB flash stick: usb-storage's small requests and the stick's erase-block
//! copy-on-write (open allocation units).

use super::*;

/// usb-storage's request limit: 240 sectors = 120 KiB (`drivers/usb/storage/scsiglue.c`).
pub const USB_MAX_SECTORS: u32 = 240;
/// Sequential write, 10 MB/s (Coding Horror 2009 survey: 10-22 MB/s; low end taken).
pub const USB_WRITE_BW: u64 = 10_000_000;
/// Sequential read, 20 MB/s (same survey, estimate within its range).
pub const USB_READ_BW: u64 = 20_000_000;
/// Erase block (allocation unit), 4 MiB (Linaro flashbench results: 4-8 MiB).
pub const USB_ERASE_BLOCK: u64 = 4 << 20;
/// Erase blocks the controller keeps open at once. Estimate (flashbench finds 1-5 on
/// cheap sticks).
pub const USB_OPEN_UNITS: usize = 2;
/// Internal copy rate when an erase block written out of order is closed (garbage
/// collection). Estimate, chosen so scattered 4 KiB writes land below 100 KB/s as the
/// reference reports ("pathological, sub-100 KB/s").
pub const USB_COPY_BW: u64 = 20_000_000;
/// Per-command cost of USB mass storage (command, data and status phases). Estimate.
pub const USB_OVERHEAD: Nanos = 500 * USEC;

#[derive(Clone, Copy, Debug)]
struct OpenUnit {
    unit: u64,
    /// Bytes written in order from the start of the unit.
    linear_end: u64,
    /// Written out of order: closing it copies the whole unit.
    scattered: bool,
}

/// A USB 2.0 flash stick: queue depth 1, 120 KiB requests, and an erase-block model.
///
/// The controller keeps `open_units` erase blocks open (least recently used first out).
/// Writing in order from the start of a unit costs only `size / write_bw`. A unit written
/// out of order, or left partly written, is garbage-collected when it is closed: the
/// write that forces the close pays for copying the unit's remaining (or whole) contents at
/// `copy_bw`. Sequential streams thus run at `write_bw`; scattered small writes pay one
/// erase-block copy each.
#[derive(Clone, Debug)]
pub struct UsbStick {
    name: String,
    read_bw: u64,
    write_bw: u64,
    copy_bw: u64,
    overhead: Nanos,
    erase_block: u64,
    open_units: usize,
    open: Vec<OpenUnit>,
    busy_until: Nanos,
}

impl UsbStick {
    pub fn new(
        name: &str,
        read_bw: u64,
        write_bw: u64,
        copy_bw: u64,
        overhead: Nanos,
        erase_block: u64,
        open_units: usize,
    ) -> Result<Self, DeviceError> {
        check_bw(name, "read", read_bw)?;
        check_bw(name, "write", write_bw)?;
        check_bw(name, "erase-block copy", copy_bw)?;
        check(
            name,
            erase_block >= SECTOR_SIZE && erase_block.is_multiple_of(SECTOR_SIZE),
            || "erase block must be a positive multiple of 512 bytes".into(),
        )?;
        check(name, open_units >= 1, || {
            "at least one erase block must be open".into()
        })?;
        Ok(UsbStick {
            name: name.to_string(),
            read_bw,
            write_bw,
            copy_bw,
            overhead,
            erase_block,
            open_units,
            open: Vec::new(),
            busy_until: 0,
        })
    }

    /// A 2009-era USB 2.0 stick with the defaults above.
    pub fn usb2_2009(name: &str) -> Result<Self, DeviceError> {
        UsbStick::new(
            name,
            USB_READ_BW,
            USB_WRITE_BW,
            USB_COPY_BW,
            USB_OVERHEAD,
            USB_ERASE_BLOCK,
            USB_OPEN_UNITS,
        )
    }

    /// Cost of closing a unit (garbage collection).
    fn close_cost(&self, u: &OpenUnit) -> Nanos {
        let copy = if u.scattered {
            self.erase_block
        } else {
            self.erase_block - u.linear_end
        };
        if copy == 0 {
            0
        } else {
            transfer(copy, self.copy_bw)
        }
    }

    /// Write `len` bytes at byte `offset` of `unit`; returns the extra cost (closing).
    fn write_piece(&mut self, unit: u64, offset: u64, len: u64) -> Nanos {
        if let Some(pos) = self.open.iter().position(|u| u.unit == unit) {
            let mut u = self.open.remove(pos);
            if offset == u.linear_end && !u.scattered {
                u.linear_end += len;
            } else {
                u.scattered = true;
            }
            self.open.push(u);
            return 0;
        }
        let mut cost = 0;
        if self.open.len() >= self.open_units {
            let lru = self.open.remove(0);
            cost = self.close_cost(&lru);
        }
        self.open.push(OpenUnit {
            unit,
            linear_end: if offset == 0 { len } else { 0 },
            scattered: offset != 0,
        });
        cost
    }
}

impl Device for UsbStick {
    fn name(&self) -> &str {
        &self.name
    }

    fn max_sectors(&self) -> u32 {
        USB_MAX_SECTORS
    }

    fn service_time(&mut self, io: &Io, now: Nanos) -> Nanos {
        let mut t = self.overhead;
        match io.dir {
            Dir::Read => t += transfer(io.bytes(), self.read_bw),
            Dir::Write => {
                let (mut pos, end) = (io.sector * SECTOR_SIZE, io.end() * SECTOR_SIZE);
                while pos < end {
                    let unit = pos / self.erase_block;
                    let offset = pos % self.erase_block;
                    let len = (self.erase_block - offset).min(end - pos);
                    t += self.write_piece(unit, offset, len);
                    pos += len;
                }
                t += transfer(io.bytes(), self.write_bw);
            }
        }
        let start = now.max(self.busy_until);
        self.busy_until = start + t;
        self.busy_until - now
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::device::testutil::*;

    #[test]
    fn usb_small_scattered_writes_are_much_slower_than_sequential() {
        let mut seq = UsbStick::usb2_2009("sdc").unwrap();
        assert_eq!(seq.max_sectors(), 240);
        let n = 200u64;
        let t_seq = run(&mut seq, (0..n).map(|i| w(i * 240, 240)));
        let seq_bps = (n * 240 * 512) as f64 / (t_seq as f64 / SEC as f64);
        let mut rnd = UsbStick::usb2_2009("sdc").unwrap();
        let mut rng = Lcg(7);
        let t_rnd = run(
            &mut rnd,
            (0..n).map(|_| w(rng.next() % 60_000_000 / 8 * 8, 8)),
        );
        let rnd_bps = (n * 4096) as f64 / (t_rnd as f64 / SEC as f64);
        assert!(seq_bps > 8e6, "sequential {seq_bps:.0} B/s");
        assert!(rnd_bps < 100e3, "scattered 4 KiB {rnd_bps:.0} B/s");
        assert!(seq_bps > 100.0 * rnd_bps);
    }
}
