//! Whole runs with device parameters the scenario checks cannot call impossible, but whose
//! service times are: the run stops with an error naming the device, never hangs.

mod common;

use mmsim::presets;
use mmsim::scenario::{BlockDevice, DeviceKind};
use mmsim::sim::{self, RunOptions, SimError};

#[test]
fn a_device_too_slow_to_ever_finish_a_request_stops_the_run_and_is_named() {
    let mut s = common::single_dd(256, 64, 30);
    let mut ssd = BlockDevice::ext4_hdd("sda");
    ssd.kind = DeviceKind::Ssd;
    // One byte per second: a 512 KiB write would take six days.
    ssd.params.bandwidth = Some(1);
    ssd.model()
        .expect("a non-zero bandwidth passes the model's checks");
    s.machine.devices = vec![ssd];
    let k = presets::resolve("3.9", &[]).unwrap();
    let err = sim::run(&s, &k, 1, RunOptions::default()).expect_err("the run cannot go on");
    let SimError::Invariant(msg) = &err else {
        panic!("expected the run to stop, got {err:?}");
    };
    assert!(msg.contains("device \"sda\""), "{msg}");
    assert!(msg.contains("impossible"), "{msg}");
}
