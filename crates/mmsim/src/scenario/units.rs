//! Sizes ("4G", "512M", "4096") and times ("200s", "100ms").

/// Parse a size with an optional binary unit suffix (K, M, G, T; KiB/MiB... accepted) into bytes.
pub fn parse_size(_s: &str) -> Result<u64, String> {
    todo!()
}

/// Parse a duration with a unit (ns, us, ms, s, m, h) into nanoseconds.
pub fn parse_duration(_s: &str) -> Result<u64, String> {
    todo!()
}
