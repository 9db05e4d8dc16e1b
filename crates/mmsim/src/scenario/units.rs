//! Sizes ("4G", "512M", "4096") and times ("200s", "100ms").
//!
//! Both parsers do exact decimal arithmetic (no floating point): "1.5G" is exactly
//! 1610612736 bytes, and a value that is not a whole number of bytes (or nanoseconds) is
//! rejected rather than rounded.

/// Binary size suffixes, lower-cased, and their multipliers.
const SIZE_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("b", 1),
    ("k", 1 << 10),
    ("kb", 1 << 10),
    ("kib", 1 << 10),
    ("m", 1 << 20),
    ("mb", 1 << 20),
    ("mib", 1 << 20),
    ("g", 1 << 30),
    ("gb", 1 << 30),
    ("gib", 1 << 30),
    ("t", 1 << 40),
    ("tb", 1 << 40),
    ("tib", 1 << 40),
];

/// Time units and their length in nanoseconds.
const TIME_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// At most this many digits in a number; keeps the arithmetic inside `u128`.
const MAX_DIGITS: usize = 24;

/// A non-negative decimal number as written: `mantissa / 10^scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Decimal {
    pub mantissa: u128,
    pub scale: u32,
}

impl Decimal {
    /// `self * mult / div`, if that is a whole number that fits in a `u64`.
    /// `Err(true)` means "too large", `Err(false)` means "not a whole number".
    pub(crate) fn scaled(self, mult: u128, div: u128) -> Result<u64, bool> {
        let num = self.mantissa.checked_mul(mult).ok_or(true)?;
        let den = 10u128
            .checked_pow(self.scale)
            .and_then(|p| p.checked_mul(div))
            .ok_or(true)?;
        if den == 0 || num % den != 0 {
            return Err(false);
        }
        u64::try_from(num / den).map_err(|_| true)
    }

    /// `floor(self * mult / div)`, if it fits in a `u64`.
    pub(crate) fn scaled_floor(self, mult: u128, div: u128) -> Option<u64> {
        let num = self.mantissa.checked_mul(mult)?;
        let den = 10u128.checked_pow(self.scale)?.checked_mul(div)?;
        if den == 0 {
            return None;
        }
        u64::try_from(num / den).ok()
    }
}

/// Split `s` (already trimmed) into the leading number and the rest (trimmed).
fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.'))
        .map_or(s.len(), |(i, _)| i);
    (&s[..end], s[end..].trim())
}

/// Parse an unsigned decimal number: digits with at most one '.', at least one digit.
pub(crate) fn parse_decimal(num: &str) -> Result<Decimal, String> {
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return Err("no number".to_string());
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err("malformed number".to_string());
    }
    // Leading zeros of the integer part and trailing zeros of the fraction carry no value.
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    if int.len() + frac.len() > MAX_DIGITS {
        return Err("number too large".to_string());
    }
    let mut mantissa: u128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        mantissa = mantissa * 10 + u128::from(b - b'0');
    }
    Ok(Decimal {
        mantissa,
        scale: frac.len() as u32,
    })
}

/// Parse a size with an optional binary unit suffix (K, M, G, T; KiB/MiB... accepted) into bytes.
///
/// A plain number is bytes; `K`, `M`, `G`, `T` (also `KB`/`KiB` and so on, any case) are
/// powers of 1024. A decimal is allowed ("1.5G") when the result is a whole number of bytes.
/// Whitespace between the number and the suffix is allowed.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("expected a size such as \"4G\" or \"4096\", found an empty string".into());
    }
    if t.starts_with('-') {
        return Err(format!("\"{s}\" is a negative size; sizes must be >= 0"));
    }
    let (num, suffix) = split_number(t);
    if num.is_empty() {
        return Err(format!(
            "expected a size such as \"4G\" or \"4096\", found \"{s}\", which does not start with a number"
        ));
    }
    let lower = suffix.to_ascii_lowercase();
    let Some(&(_, mult)) = SIZE_UNITS.iter().find(|(u, _)| *u == lower) else {
        return Err(format!(
            "unknown size suffix \"{suffix}\" in \"{s}\": expected K, M, G or T (or KB/KiB..., any case), or none for bytes"
        ));
    };
    let dec = parse_decimal(num).map_err(|e| format!("{e} in size \"{s}\""))?;
    dec.scaled(u128::from(mult), 1).map_err(|too_large| {
        if too_large {
            format!("size \"{s}\" is too large")
        } else {
            format!("size \"{s}\" is not a whole number of bytes")
        }
    })
}

/// Parse a duration with a unit (ns, us, ms, s, m, h) into nanoseconds.
///
/// The unit is required: "200" is rejected. `m` is minutes; `µs` is accepted for `us`.
/// A decimal is allowed ("1.5s") when the result is a whole number of nanoseconds.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("expected a time such as \"200s\" or \"100ms\", found an empty string".into());
    }
    if t.starts_with('-') {
        return Err(format!("\"{s}\" is a negative time; times must be >= 0"));
    }
    let (num, unit) = split_number(t);
    if num.is_empty() {
        return Err(format!(
            "expected a time such as \"200s\" or \"100ms\", found \"{s}\", which does not start with a number"
        ));
    }
    if unit.is_empty() {
        return Err(format!(
            "time \"{s}\" has no unit; times need a unit: ns, us, ms, s, m (minutes) or h, e.g. \"{num}s\""
        ));
    }
    let Some(&(_, mult)) = TIME_UNITS.iter().find(|(u, _)| *u == unit) else {
        return Err(format!(
            "unknown time unit \"{unit}\" in \"{s}\": expected ns, us, ms, s, m (minutes) or h"
        ));
    };
    let dec = parse_decimal(num).map_err(|e| format!("{e} in time \"{s}\""))?;
    dec.scaled(u128::from(mult), 1).map_err(|too_large| {
        if too_large {
            format!("time \"{s}\" is too large")
        } else {
            format!("time \"{s}\" is not a whole number of nanoseconds")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

    #[test]
    fn plain_integer_size_is_bytes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("  17 "), Ok(17));
        assert_eq!(parse_size("12B"), Ok(12));
    }

    #[test]
    fn size_single_letter_suffixes_are_powers_of_1024() {
        assert_eq!(parse_size("1K"), Ok(K));
        assert_eq!(parse_size("2M"), Ok(2 * K * K));
        assert_eq!(parse_size("4G"), Ok(4 * K * K * K));
        assert_eq!(parse_size("3T"), Ok(3 * K * K * K * K));
    }

    #[test]
    fn size_long_suffixes_and_case_are_accepted() {
        for s in ["16k", "16K", "16KB", "16kb", "16KiB", "16kib", "16 K"] {
            assert_eq!(parse_size(s), Ok(16 * K), "{s}");
        }
        for s in ["1MB", "1MiB", "1mib", "1m"] {
            assert_eq!(parse_size(s), Ok(K * K), "{s}");
        }
        for s in ["1GB", "1GiB", "1g"] {
            assert_eq!(parse_size(s), Ok(K * K * K), "{s}");
        }
        for s in ["1TB", "1TiB", "1t"] {
            assert_eq!(parse_size(s), Ok(K * K * K * K), "{s}");
        }
    }

    #[test]
    fn size_decimals_with_a_suffix_are_exact() {
        assert_eq!(parse_size("1.5G"), Ok(1536 * K * K));
        assert_eq!(parse_size("0.5K"), Ok(512));
        assert_eq!(parse_size("2.25M"), Ok(2304 * K));
        assert_eq!(parse_size(".5K"), Ok(512));
        assert_eq!(parse_size("1.000K"), Ok(K));
    }

    #[test]
    fn size_that_is_not_a_whole_number_of_bytes_is_rejected() {
        let e = parse_size("1.5").unwrap_err();
        assert!(e.contains("whole number of bytes"), "{e}");
        let e = parse_size("1.0001K").unwrap_err();
        assert!(e.contains("whole number of bytes"), "{e}");
    }

    #[test]
    fn bad_sizes_are_rejected_with_a_reason() {
        assert!(parse_size("").unwrap_err().contains("empty"));
        assert!(parse_size("G")
            .unwrap_err()
            .contains("does not start with a number"));
        assert!(parse_size("4X")
            .unwrap_err()
            .contains("unknown size suffix"));
        assert!(parse_size("4GG")
            .unwrap_err()
            .contains("unknown size suffix"));
        assert!(parse_size("1.2.3K").unwrap_err().contains("malformed"));
        assert!(parse_size(".").unwrap_err().contains("no number"));
        assert!(parse_size("1e3")
            .unwrap_err()
            .contains("unknown size suffix"));
        assert!(parse_size("-4G").unwrap_err().contains("negative size"));
    }

    #[test]
    fn huge_sizes_are_rejected_not_wrapped() {
        assert!(parse_size("99999999999T")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_size("18446744073709551616")
            .unwrap_err()
            .contains("too large"));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_size("1234567890123456789012345678901234567890")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn times_with_each_unit() {
        assert_eq!(parse_duration("7ns"), Ok(7));
        assert_eq!(parse_duration("7us"), Ok(7_000));
        assert_eq!(parse_duration("7µs"), Ok(7_000));
        assert_eq!(parse_duration("5ms"), Ok(5_000_000));
        assert_eq!(parse_duration("200s"), Ok(200_000_000_000));
        assert_eq!(parse_duration("2m"), Ok(120_000_000_000));
        assert_eq!(parse_duration("1h"), Ok(3_600_000_000_000));
        assert_eq!(parse_duration("0s"), Ok(0));
        assert_eq!(parse_duration(" 10 s "), Ok(10_000_000_000));
    }

    #[test]
    fn time_decimals_are_exact() {
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration("0.25ms"), Ok(250_000));
        let e = parse_duration("1.5ns").unwrap_err();
        assert!(e.contains("whole number of nanoseconds"), "{e}");
    }

    #[test]
    fn time_without_unit_is_rejected_saying_a_unit_is_needed() {
        let e = parse_duration("200").unwrap_err();
        assert!(e.contains("need a unit"), "{e}");
        assert!(e.contains("\"200s\""), "{e}");
    }

    #[test]
    fn bad_times_are_rejected_with_a_reason() {
        assert!(parse_duration("").unwrap_err().contains("empty"));
        assert!(parse_duration("-5s").unwrap_err().contains("negative time"));
        assert!(parse_duration("5S")
            .unwrap_err()
            .contains("unknown time unit"));
        assert!(parse_duration("5 days")
            .unwrap_err()
            .contains("unknown time unit"));
        assert!(parse_duration("s").unwrap_err().contains("does not start"));
        assert!(parse_duration("999999999999999h")
            .unwrap_err()
            .contains("too large"));
    }
}
