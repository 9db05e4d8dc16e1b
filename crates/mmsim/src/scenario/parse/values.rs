//! Typed values: integers in a range, strings, one of a few words, booleans, sizes
//! ("4G", "80%" of RAM) and times ("200s"), each with the error that says what was expected.

use super::check::{nearest, opt, with_suggestion, Cx, Item, Res, Table};
use super::tree::Val;
use super::PAGE;
use crate::scenario::units::{parse_decimal, parse_duration, parse_size};
use crate::scenario::Nanos;

/// An integer in `lo..=hi`.
pub(super) fn int_in(cx: &Cx<'_>, item: &Item<'_>, lo: i64, hi: i64, what: &str) -> Res<i64> {
    match item.node.val {
        Val::Int(i) if i < 0 && lo >= 0 => {
            Err(item.fail(cx, format!("expected {what}, found {i}, a negative number")))
        }
        Val::Int(i) if i < lo || i > hi => Err(item.fail(
            cx,
            format!("expected {what}, found {i}, which is out of range"),
        )),
        Val::Int(i) => Ok(i),
        _ => Err(item.expected(cx, what)),
    }
}

pub(super) fn u32_in(cx: &Cx<'_>, item: &Item<'_>, lo: u32, hi: u32, what: &str) -> Res<u32> {
    let i = int_in(cx, item, i64::from(lo), i64::from(hi), what)?;
    u32::try_from(i).map_err(|_| item.expected(cx, what))
}

pub(super) fn u64_min(cx: &Cx<'_>, item: &Item<'_>, lo: u64, what: &str) -> Res<u64> {
    let lo_i = i64::try_from(lo).unwrap_or(i64::MAX);
    let i = int_in(cx, item, lo_i, i64::MAX, what)?;
    u64::try_from(i).map_err(|_| item.expected(cx, what))
}

pub(super) fn string<'a>(cx: &Cx<'_>, item: &Item<'a>, what: &str) -> Res<&'a str> {
    match &item.node.val {
        Val::Str(s) => Ok(s),
        _ => Err(item.expected(cx, what)),
    }
}

/// What the size is of, for the "negative" message: "a negative size" or "a negative rate".
#[derive(Clone, Copy, PartialEq)]
pub(super) enum SizeKind {
    Size,
    Rate,
}

impl SizeKind {
    fn noun(self) -> &'static str {
        match self {
            SizeKind::Size => "size",
            SizeKind::Rate => "rate",
        }
    }

    fn expected(self) -> &'static str {
        match self {
            SizeKind::Size => "a size (bytes as an integer, or a string such as \"4G\")",
            SizeKind::Rate => {
                "a rate in bytes per second (an integer, or a string such as \"100M\")"
            }
        }
    }
}

/// A size given as an integer or a size string. `percent_of` allows "N%" of that many bytes.
pub(super) fn size(
    cx: &Cx<'_>,
    item: &Item<'_>,
    kind: SizeKind,
    percent_of: Option<u64>,
) -> Res<u64> {
    let expected = match (kind, percent_of) {
        (SizeKind::Size, Some(_)) => {
            "a size (bytes as an integer, or a string such as \"4G\" or \"80%\" of RAM)"
        }
        _ => kind.expected(),
    };
    match &item.node.val {
        Val::Int(i) if *i < 0 => Err(item.fail(
            cx,
            format!("expected {expected}, found {i}, a negative {}", kind.noun()),
        )),
        Val::Int(i) => u64::try_from(*i).map_err(|_| item.expected(cx, expected)),
        Val::Str(s) => {
            let t = s.trim();
            if t.starts_with('-') {
                return Err(item.fail(
                    cx,
                    format!("expected {expected}, found \"{s}\", a negative {}", kind.noun()),
                ));
            }
            if let Some(num) = t.strip_suffix('%') {
                let Some(ram) = percent_of else {
                    return Err(item.fail(
                        cx,
                        format!("expected {expected}, found \"{s}\": a percentage is not allowed here"),
                    ));
                };
                return percent(cx, item, num.trim(), s, ram);
            }
            parse_size(s).map_err(|m| item.fail(cx, m))
        }
        Val::Float(f) => Err(item.fail(
            cx,
            format!(
                "expected {expected}, found the float {f}; write fractional sizes as a string with a suffix, e.g. \"1.5G\""
            ),
        )),
        _ => Err(item.expected(cx, expected)),
    }
}

/// A size from 1 byte to `max`, the size of `limit`: `what` is what the size is of.
pub(super) fn size_up_to(
    cx: &Cx<'_>,
    item: &Item<'_>,
    max: u64,
    what: &str,
    limit: &str,
) -> Res<u64> {
    let b = size(cx, item, SizeKind::Size, None)?;
    if b == 0 || b > max {
        return Err(item.fail(
            cx,
            format!("expected {what} from 1 byte up to {limit} ({max} bytes), found {b} bytes"),
        ));
    }
    Ok(b)
}

/// `num` percent of `ram`, rounded down to whole pages; must be at least one page.
fn percent(cx: &Cx<'_>, item: &Item<'_>, num: &str, orig: &str, ram: u64) -> Res<u64> {
    let dec = parse_decimal(num).map_err(|m| {
        item.fail(
            cx,
            format!("expected a percentage such as \"80%\", found \"{orig}\" ({m})"),
        )
    })?;
    let bytes = dec
        .scaled_floor(u128::from(ram), 100)
        .ok_or_else(|| item.fail(cx, format!("percentage \"{orig}\" is too large")))?;
    let bytes = bytes / PAGE * PAGE;
    if bytes == 0 {
        return Err(item.fail(
            cx,
            format!("\"{orig}\" of RAM is less than one 4096-byte page"),
        ));
    }
    Ok(bytes)
}

/// A time: a string with a unit.
pub(super) fn time(cx: &Cx<'_>, item: &Item<'_>) -> Res<u64> {
    const WHAT: &str = "a time with a unit, such as \"200s\" or \"5ms\"";
    match &item.node.val {
        Val::Str(s) => parse_duration(s).map_err(|m| item.fail(cx, m)),
        Val::Int(i) if *i < 0 => Err(item.fail(
            cx,
            format!("expected {WHAT}, found {i}, a negative time"),
        )),
        Val::Int(i) => Err(item.fail(
            cx,
            format!(
                "expected {WHAT}, found the bare integer {i}; times need a unit (ns, us, ms, s, m, h), e.g. \"{i}s\""
            ),
        )),
        Val::Float(f) if *f < 0.0 => Err(item.fail(
            cx,
            format!("expected {WHAT}, found {f}, a negative time"),
        )),
        Val::Float(f) => Err(item.fail(
            cx,
            format!(
                "expected {WHAT}, found the bare number {f}; times need a unit (ns, us, ms, s, m, h), e.g. \"{f}s\""
            ),
        )),
        _ => Err(item.expected(cx, WHAT)),
    }
}

/// A time greater than zero.
pub(super) fn positive_time(cx: &Cx<'_>, item: &Item<'_>, what: &str) -> Res<Nanos> {
    let d = time(cx, item)?;
    if d == 0 {
        return Err(item.fail(cx, format!("{what} must be greater than 0")));
    }
    Ok(d)
}

/// One of `choices`, as a string; a misspelt value gets a suggestion.
pub(super) fn choice<'a>(cx: &Cx<'_>, item: &Item<'a>, choices: &[&str]) -> Res<&'a str> {
    let quoted: Vec<String> = choices.iter().map(|c| format!("\"{c}\"")).collect();
    let what = format!("one of {}", quoted.join(", "));
    let s = string(cx, item, &what)?;
    if choices.contains(&s) {
        return Ok(s);
    }
    let e = item.fail(cx, format!("expected {what}, found \"{s}\""));
    Err(with_suggestion(e, nearest(s, choices)))
}

/// `true` or `false`.
pub(super) fn bool_value(cx: &Cx<'_>, item: &Item<'_>) -> Res<bool> {
    match item.node.val {
        Val::Bool(b) => Ok(b),
        _ => Err(item.expected(cx, "true or false")),
    }
}

/// An optional `true`/`false` key.
pub(super) fn boolean(cx: &Cx<'_>, t: &Table<'_>, key: &str) -> Res<Option<bool>> {
    opt(t, key).map(|item| bool_value(cx, &item)).transpose()
}
