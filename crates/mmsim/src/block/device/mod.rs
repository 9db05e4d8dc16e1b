//! Device service-time models (`kernel-writeback.md` §9.3).
//!
//! A [`Device`] answers one question: if this request is handed to the device at `now`, when
//! is it done? Devices serve requests in the order they are given (no NCQ reordering): a
//! request given while an earlier one is still in service waits for it, so with a dispatch
//! depth above 1 the answer includes that wait. Everything is deterministic; the HDD's
//! rotational position follows from simulated time.
//!
//! One file per device model: `hdd`, `ssd`, `usb_stick`, `raid0` and `nfs`. Every default
//! names its source; "estimate" marks figures no source gives.

use std::fmt;

use super::elevator::ElevatorKind;
use super::request_queue::{QueueConfig, BLKDEV_MAX_RQ, BLK_DEF_MAX_SECTORS};
use super::{Dir, Io, SECTOR_SIZE};
use crate::engine::{Nanos, MSEC, SEC, USEC};

mod hdd;
mod nfs;
mod raid0;
mod ssd;
mod usb_stick;

pub use hdd::*;
pub use nfs::*;
pub use raid0::*;
pub use ssd::*;
pub use usb_stick::*;

/// A parameter with which a device could never complete an IO (or that makes no sense).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceError {
    /// The device's name, e.g. `sda`.
    pub device: String,
    /// What is wrong, e.g. "write bandwidth is zero".
    pub problem: String,
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "device '{}': {}", self.device, self.problem)
    }
}

impl std::error::Error for DeviceError {}

fn check(name: &str, ok: bool, problem: impl FnOnce() -> String) -> Result<(), DeviceError> {
    if ok {
        Ok(())
    } else {
        Err(DeviceError {
            device: name.to_string(),
            problem: problem(),
        })
    }
}

fn check_bw(name: &str, what: &str, bytes_per_sec: u64) -> Result<(), DeviceError> {
    check(name, bytes_per_sec > 0, || {
        format!("{what} bandwidth is zero: no IO could ever complete")
    })
}

/// Time to move `bytes` at `bytes_per_sec`, rounded up to a whole nanosecond.
fn transfer(bytes: u64, bytes_per_sec: u64) -> Nanos {
    let ns = u128::from(bytes) * u128::from(SEC);
    ns.div_ceil(u128::from(bytes_per_sec)) as Nanos
}

/// A block device's timing.
pub trait Device: fmt::Debug + Send {
    /// The device name (`sda`, `md0`, `server:/export`).
    fn name(&self) -> &str;

    /// Time from `now` until `io`, handed to the device at `now`, completes. Updates the
    /// device's state (head position, busy time, open erase blocks, ...).
    fn service_time(&mut self, io: &Io, now: Nanos) -> Nanos;

    /// Largest request the device takes, in sectors (the queue's `max_sectors`).
    fn max_sectors(&self) -> u32 {
        BLK_DEF_MAX_SECTORS
    }

    /// How many requests to hand it at once.
    fn queue_depth(&self) -> u32 {
        1
    }

    /// `queue/rotational`: whether seeks cost (CFQ's seek and idling rules use it).
    fn rotational(&self) -> bool {
        true
    }

    /// A deadline request queue shaped for this device.
    fn queue_config(&self) -> QueueConfig {
        QueueConfig {
            max_sectors: self.max_sectors(),
            depth: self.queue_depth(),
            rotational: self.rotational(),
            ..QueueConfig::default()
        }
    }

    /// The NFS model, if this is an NFS mount: its WRITE, COMMIT and READ RPCs are timed
    /// directly (`fs::nfs`), not as block requests.
    fn as_nfs(&mut self) -> Option<&mut Nfs> {
        None
    }
}

/// Helpers of the device models' tests.
#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    pub fn w(sector: u64, nr: u32) -> Io {
        Io {
            dir: Dir::Write,
            sector,
            nr_sectors: nr,
        }
    }

    /// Runs `ios` back to back (each handed over when the previous completes); total time.
    pub fn run(dev: &mut dyn Device, ios: impl IntoIterator<Item = Io>) -> Nanos {
        let mut now = 0;
        for io in ios {
            now += dev.service_time(&io, now);
        }
        now
    }

    pub struct Lcg(pub u64);
    impl Lcg {
        pub fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 2 // 62 bits: enough to cover a 2 TB disk uniformly
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_device_is_valid() {
        assert!(Hdd::new("sda", HddParams::laptop_5400()).is_ok());
        assert!(Hdd::desktop_7200("sda").is_ok());
        assert!(Ssd::sata_2012("sdb").is_ok());
        assert!(UsbStick::usb2_2009("sdc").is_ok());
        assert!(Raid0::of_hdds("md0", 4).is_ok());
        assert!(Nfs::gige("server:/export").is_ok());
        let hdd = Hdd::desktop_7200("sda").unwrap();
        assert_eq!(hdd.revolution(), 8_333_333); // 4.17 ms average latency
    }

    #[test]
    fn zero_bandwidth_is_a_constructor_error_naming_the_device() {
        let e = Ssd::new("sdb", SSD_OVERHEAD, SSD_READ_BW, 0).unwrap_err();
        assert_eq!(e.device, "sdb");
        assert_eq!(
            e.to_string(),
            "device 'sdb': write bandwidth is zero: no IO could ever complete"
        );
        let e = Hdd::new(
            "sda",
            HddParams {
                rpm: 0,
                ..HddParams::desktop_7200()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("'sda'") && e.to_string().contains("rpm"));
        assert!(Raid0::new("md0", Vec::new(), 1024)
            .unwrap_err()
            .to_string()
            .contains("md0"));
        assert!(Nfs::new("srv:/x", 0, NFS_RTT, 1, 0, 1024).is_err());
        assert!(UsbStick::new("sdc", 1, 0, 1, 0, 4096, 1).is_err());
        let e = Hdd::new(
            "sdd",
            HddParams {
                avg_seek: 2 * MSEC,
                ..HddParams::desktop_7200()
            },
        )
        .unwrap_err();
        assert!(e.problem.contains("average seek"), "{e}");
    }
}
