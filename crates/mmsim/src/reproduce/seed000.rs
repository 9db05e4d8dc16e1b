//! The published results of seed 000 (the lessdisrupt-v7r10 cover letter), transcribed by
//! a script from `shared/seeds/000-kswapd-reclaim-stalls.txt`. Each row is (label as MMTests
//! prints it, [3.9 vanilla, mmotm-20130522, lessdisrupt-v7r10]); percentages without the `%`.

/// The parallelio table (the `Ops` rows, without the prefix).
pub const PARALLELIO: &[(&str, [f64; 3])] = &[
    ("memcachetest-0M", [23117.00, 22780.00, 22763.00]),
    ("memcachetest-715M", [23774.00, 23299.00, 22934.00]),
    ("memcachetest-2385M", [4208.00, 24154.00, 23765.00]),
    ("memcachetest-4055M", [4104.00, 25130.00, 24614.00]),
    ("io-duration-0M", [0.00, 0.00, 0.00]),
    ("io-duration-715M", [12.00, 7.00, 6.00]),
    ("io-duration-2385M", [116.00, 21.00, 21.00]),
    ("io-duration-4055M", [160.00, 36.00, 35.00]),
    ("swaptotal-0M", [0.00, 0.00, 0.00]),
    ("swaptotal-715M", [140138.00, 18.00, 18.00]),
    ("swaptotal-2385M", [385682.00, 0.00, 0.00]),
    ("swaptotal-4055M", [418029.00, 0.00, 0.00]),
    ("swapin-0M", [0.00, 0.00, 0.00]),
    ("swapin-715M", [144.00, 0.00, 0.00]),
    ("swapin-2385M", [134227.00, 0.00, 0.00]),
    ("swapin-4055M", [125618.00, 0.00, 0.00]),
    ("minorfaults-0M", [1536429.00, 1531632.00, 1533541.00]),
    ("minorfaults-715M", [1786996.00, 1612148.00, 1608832.00]),
    ("minorfaults-2385M", [1757952.00, 1614874.00, 1613541.00]),
    ("minorfaults-4055M", [1774460.00, 1633400.00, 1630881.00]),
    ("majorfaults-0M", [1.00, 0.00, 0.00]),
    ("majorfaults-715M", [184.00, 167.00, 166.00]),
    ("majorfaults-2385M", [24444.00, 155.00, 93.00]),
    ("majorfaults-4055M", [21357.00, 147.00, 134.00]),
];

/// The MMTests vmstat table.
pub const VMSTAT: &[(&str, [f64; 3])] = &[
    ("Minor Faults", [11160152.0, 10706748.0, 10622316.0]),
    ("Major Faults", [46305.0, 755.0, 678.0]),
    ("Swap Ins", [260249.0, 0.0, 0.0]),
    ("Swap Outs", [683860.0, 18.0, 18.0]),
    ("Direct pages scanned", [0.0, 678.0, 2520.0]),
    ("Kswapd pages scanned", [6046108.0, 8814900.0, 1639279.0]),
    ("Kswapd pages reclaimed", [1081954.0, 1172267.0, 1094635.0]),
    ("Direct pages reclaimed", [0.0, 566.0, 2304.0]),
    ("Kswapd efficiency", [17.0, 13.0, 66.0]),
    ("Kswapd velocity", [5217.560, 7618.953, 1414.879]),
    ("Direct efficiency", [100.0, 83.0, 91.0]),
    ("Direct velocity", [0.000, 0.586, 2.175]),
    ("Percentage direct scans", [0.0, 0.0, 0.0]),
    ("Zone normal velocity", [5105.086, 6824.681, 671.158]),
    ("Zone dma32 velocity", [112.473, 794.858, 745.896]),
    ("Zone dma velocity", [0.000, 0.000, 0.000]),
    (
        "Page writes by reclaim",
        [1929612.000, 6861768.000, 32821.000],
    ),
    ("Page writes file", [1245752.0, 6861750.0, 32803.0]),
    ("Page writes anon", [683860.0, 18.0, 18.0]),
    ("Page reclaim immediate", [7484.0, 40.0, 239.0]),
    ("Sector Reads", [1130320.0, 93996.0, 86900.0]),
    ("Sector Writes", [13508052.0, 10823500.0, 11804436.0]),
    ("Page rescued immediate", [0.0, 0.0, 0.0]),
    ("Slabs scanned", [33536.0, 27136.0, 18560.0]),
    ("Direct inode steals", [0.0, 0.0, 0.0]),
    ("Kswapd inode steals", [8641.0, 1035.0, 0.0]),
    ("Kswapd skipped wait", [0.0, 0.0, 0.0]),
    ("THP fault alloc", [8.0, 37.0, 33.0]),
    ("THP collapse alloc", [508.0, 552.0, 515.0]),
    ("THP splits", [24.0, 1.0, 1.0]),
    ("THP fault fallback", [0.0, 0.0, 0.0]),
    ("THP collapse fail", [0.0, 0.0, 0.0]),
];

/// The iostat table of the test disk, `sda`.
pub const IOSTAT: &[(&str, [f64; 3])] = &[
    ("Mean sda-avgqz", [166.99, 32.09, 33.44]),
    ("Mean sda-await", [853.64, 192.76, 185.43]),
    ("Mean sda-r_await", [6.31, 9.24, 5.97]),
    ("Mean sda-w_await", [2992.81, 202.65, 192.43]),
    ("Max sda-avgqz", [1409.91, 718.75, 698.98]),
    ("Max sda-await", [6665.74, 3538.00, 3124.23]),
    ("Max sda-r_await", [58.96, 111.95, 58.00]),
    ("Max sda-w_await", [28458.94, 3977.29, 3148.61]),
];
