//! Stage one of scenario loading: the TOML as written, checked key by key.
//!
//! # The scenario file format
//!
//! ```toml
//! [machine]                 # required
//! ram = "4G"                # required; size; a multiple of 4096, 64M..=4T
//! cpus = 4                  # optional, default 4; integer 1..=4096
//!
//! [swap]                    # optional; no swap device if absent
//! size = "8G"               # required in [swap]; size; a multiple of 4096, > 0, <= 64T
//! read_latency = "5ms"      # time, default "5ms"
//! write_latency = "5ms"     # time, default "5ms"
//! bandwidth = "100M"        # bytes per second (size), default "100M"; > 0
//!
//! [vm]                      # sysctls under their /proc/sys/vm names
//! min_free_kbytes = 67584   # integer >= 0 and below RAM; default: the kernel's formula
//! swappiness = 60           # integer 0..=100, default 60
//! lowmem_reserve_ratio = [256, 256, 32]  # exactly 3 integers >= 1 (DMA, DMA32, Normal)
//! page-cluster = 3          # integer 0..=10, default 3 (note the hyphen)
//! vfs_cache_pressure = 100  # integer >= 0, default 100
//! laptop_mode = 0           # integer >= 0, default 0; non-zero means on
//! dirty_ratio = 20          # integer 0..=100, default 20
//! dirty_background_ratio = 10  # integer 0..=100, default 10
//! dirty_bytes = 0           # size, default 0 (use dirty_ratio); else at least 2 pages
//! dirty_background_bytes = 0   # size, default 0 (use dirty_background_ratio)
//! dirty_expire_centisecs = 3000     # integer >= 0, default 3000
//! dirty_writeback_centisecs = 500   # integer >= 0, default 500; 0 disables kupdate
//!
//! [run]
//! duration = "200s"         # time > 0, default "60s"
//! seed = 1                  # integer >= 0, default 1
//! end = "duration"         # "duration" (default) or "workloads": end when every
//!                           # workload has finished (duration is then the upper bound)
//!
//! [kernel]
//! preset = "3.9"            # optional string; checked against the presets at run time
//! [kernel.switches]         # optional: name = true|false, kept in file order
//!
//! [slab]
//! objects = 100000          # integer >= 0, default 100000
//! object_size = 1024        # size (integer bytes or string), 1..=4096, default 1024
//!
//! [[workload]]              # any number, including none
//! type = "memcachetest"     # required: memcachetest, mem_eater, dd, cat, mmap, parallelio
//!                           # or sync (one sync(2) at `start`, no other keys)
//! name = "mc"               # optional; default: the type name, then "-2", "-3"... for
//!                           # repeats; names must be unique
//! start = "0s"              # time, default "0s"
//! # memcachetest keys:
//! pool = "80%"              # size, or "N%" of RAM; default "80%" (as MMTests)
//! value_size = "16K"        # size, default "16K"; 1..=pool
//! set_percent = 33          # integer 0..=100, default 33
//! threads = 1               # integer 1..=4096, default 1
//! duration = "200s"         # time > 0; stop after it and exit (default: run to the end)
//! populate = true           # boolean, default true: set every item once first (no -S)
//! # mem_eater keys:
//! size = "2G"               # required; size, or "N%" of RAM; > 0
//! chunk = "64M"             # size, default the smaller of "64M" and size; 1..=size
//! pause = "100ms"           # time, default "0s"
//! then = "hold"             # "hold" (default) or "retouch"
//! retouch_interval = "10s"  # time > 0, only with then = "retouch"; default "10s"
//! # dd, cat and mmap keys (each works on one file of a [[device]] with a filesystem):
//! device = "sda"            # required; the name of a [[device]] whose filesystem is not raw
//! size = "1G"               # required; size, whole 4 KiB pages, > 0, at most the device size
//! # dd keys (writes a new file):
//! bs = "1M"                 # size, whole pages, default "1M"
//! conv = "fdatasync"        # "fdatasync", "fsync" or "none" (default)
//! truncate_to = "512M"      # size, whole pages, at most size: truncate the file after the sync
//! unlink = false            # boolean, default false: remove the file at the end
//! file = "largefile"        # no '/' or control characters; default: named after the
//!                           # workload; an existing file of that name is truncated
//! # mmap keys (maps a file that is on the device at boot, MAP_SHARED):
//! access = "read"           # "read" (default) or "write"
//! pattern = "seq"           # "seq" (default) or "random"
//! passes = 1                # integer 1..=1000000, default 1
//! msync = false             # boolean, default false: msync(MS_SYNC) after each pass
//! # parallelio keys (MMTests' driver; also memcachetest's value_size, threads):
//! device = "sda"            # required; a [[device]] with a filesystem
//! pool = "5600M"            # size or "N%" of RAM; default 4/5 of MemTotal
//! duration = "200s"         # each memcachetest run; time > 0, default "200s"
//! iterations = 5            # integer 1..=1000, default 5
//! increments = 3            # integer 1..=100, default 3 (MMTests' step sizes)
//! steps = [0, "1G"]         # dd sizes in whole MiB instead of increments
//! warmup = true             # boolean, default true
//! ```
//!
//! `[[device]]` tables (name, type, size, filesystem, members, nr_requests, scheduler) are
//! described in the README. `scheduler` is "cfq", "deadline" or "noop"; without it a
//! rotating disk (hdd, raid0) gets cfq and an ssd or usb stick deadline
//! ([`Scheduler::default_for`](super::Scheduler::default_for)); an NFS mount takes neither
//! `nr_requests` nor `scheduler`.
//!
//! Sizes are integers (bytes) or strings with an optional K/M/G/T suffix (powers of 1024;
//! see [`parse_size`]). Times are strings with a unit: ns, us, ms, s, m (minutes), h (see
//! [`parse_duration`]); a bare number is rejected. A percentage "N%" (decimals allowed) is of
//! the machine's RAM, rounded down to a whole number of 4 KiB pages.
//!
//! Whole-file checks: the memory of all workloads together (memcachetest `pool` plus
//! mem_eater `size`) must fit in RAM + swap. The slab is not checked against RAM (the default
//! 100000 objects of 1024 bytes take about 98M, more than a 64M machine has).
//!
//! Key paths in errors are dotted, with 0-based indexes for arrays: `workload[0].size`,
//! `vm.lowmem_reserve_ratio[2]`. The first problem found is reported.

use std::ops::Range;

use toml_edit::{ImDocument, TableLike, TomlError, Value};

use super::units::{parse_decimal, parse_duration, parse_size};
use super::{
    AccessPattern, BlockDevice, DdConv, DdParams, DeviceKind, DeviceParams, Filesystem,
    KernelSelection, Machine, MemEaterThen, MemcachetestParams, MmapAccess, MmapParams,
    ParallelioParams, RunParams, Scenario, ScenarioError, Scheduler, SlabParams, SwapDevice,
    VmSysctls, Workload, WorkloadKind,
};

/// Load and validate a scenario file.
// The signature is the module's interface; `ScenarioError` is returned unboxed on purpose.
#[allow(clippy::result_large_err)]
pub fn load(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: path.display().to_string(),
        line: None,
        column: None,
        key: String::new(),
        message: format!("cannot read the file: {e}"),
        suggestion: None,
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    load_str(&text, &path.display().to_string(), &stem)
}

/// Parse and validate scenario text; `file` is used in error messages, `name` is the scenario name.
#[allow(clippy::result_large_err)]
pub fn load_str(text: &str, file: &str, name: &str) -> Result<Scenario, ScenarioError> {
    let cx = Cx { file, text };
    let entries = parse_tree(text).map_err(|e| {
        // toml's messages span several lines; keep ours on one.
        let msg = e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        let message = if msg.is_empty() {
            "invalid TOML".to_string()
        } else {
            format!("invalid TOML: {msg}")
        };
        cx.error(e.span().as_ref(), "", message)
    })?;
    resolve(&cx, &entries, name).map_err(|e| *e)
}

// ---------------------------------------------------------------------------------------
// Limits.

const PAGE: u64 = 4096;
const MIB: u64 = 1 << 20;
const TIB: u64 = 1 << 40;
const MIN_RAM: u64 = 64 * MIB;
const MAX_RAM: u64 = 4 * TIB;
const MAX_SWAP: u64 = 64 * TIB;
const MAX_CPUS: i64 = 4096;
const MAX_THREADS: i64 = 4096;

const TOP_KEYS: &[&str] = &[
    "machine", "swap", "device", "vm", "run", "kernel", "slab", "workload",
];
const DEVICE_KEYS: &[&str] = &[
    "name",
    "type",
    "size",
    "filesystem",
    "members",
    "nr_requests",
    "scheduler",
    "bandwidth",
    "read_bandwidth",
    "rpm",
    "seek",
    "latency",
    "server_bandwidth",
    "wsize",
];
const DEVICE_TYPES: &[&str] = &["hdd", "ssd", "usb", "raid0", "nfs"];
const FILESYSTEMS: &[&str] = &["ext4", "ext3", "xfs", "btrfs", "raw", "nfs"];
/// The device-model keys, and the types each applies to.
const DEVICE_PARAM_KEYS: &[(&str, &[&str])] = &[
    ("bandwidth", &["hdd", "ssd", "usb", "raid0", "nfs"]),
    ("read_bandwidth", &["ssd", "usb"]),
    ("rpm", &["hdd", "raid0"]),
    ("seek", &["hdd", "raid0"]),
    ("latency", &["nfs"]),
    ("server_bandwidth", &["nfs"]),
    ("wsize", &["nfs"]),
];
/// Largest NFS `wsize`: 1 MiB (`NFS_MAX_FILE_IO_SIZE`).
const MAX_WSIZE: u64 = MIB;
const SCHEDULERS: &[&str] = &["cfq", "deadline", "noop"];
const DD_KEYS: &[&str] = &[
    "device",
    "size",
    "bs",
    "conv",
    "truncate_to",
    "unlink",
    "file",
];
const PARALLELIO_KEYS: &[&str] = &[
    "device",
    "pool",
    "value_size",
    "threads",
    "duration",
    "iterations",
    "increments",
    "steps",
    "warmup",
];
const CAT_KEYS: &[&str] = &["device", "size"];
const MMAP_KEYS: &[&str] = &["device", "size", "access", "pattern", "passes", "msync"];
const MAX_PASSES: u32 = 1_000_000;
const MACHINE_KEYS: &[&str] = &["ram", "cpus"];
const SWAP_KEYS: &[&str] = &[
    "size",
    "read_latency",
    "write_latency",
    "bandwidth",
    "device",
];
const VM_KEYS: &[&str] = &[
    "min_free_kbytes",
    "swappiness",
    "lowmem_reserve_ratio",
    "page-cluster",
    "vfs_cache_pressure",
    "laptop_mode",
    "dirty_ratio",
    "dirty_background_ratio",
    "dirty_bytes",
    "dirty_background_bytes",
    "dirty_expire_centisecs",
    "dirty_writeback_centisecs",
];
const RUN_KEYS: &[&str] = &["duration", "seed", "end"];
const KERNEL_KEYS: &[&str] = &["preset", "switches"];
const SLAB_KEYS: &[&str] = &["objects", "object_size"];
const WORKLOAD_TYPES: &[&str] = &[
    "memcachetest",
    "mem_eater",
    "dd",
    "cat",
    "mmap",
    "parallelio",
    "sync",
];
/// `"a", "b" or "c"`.
fn quoted_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

const COMMON_WORKLOAD_KEYS: &[&str] = &["type", "name", "start"];
const MEMCACHETEST_KEYS: &[&str] = &[
    "pool",
    "value_size",
    "set_percent",
    "threads",
    "duration",
    "populate",
];
const MEM_EATER_KEYS: &[&str] = &["size", "chunk", "pause", "then", "retouch_interval"];
const THEN_VALUES: &[&str] = &["hold", "retouch"];

// ---------------------------------------------------------------------------------------
// A TOML tree that keeps the byte span of every key and value.
//
// `toml_edit` parses the text (it is the parser `toml` 0.8 runs, so syntax errors read as
// they always have) and its document keeps where each key and value stands; the tree
// copies what the checks need, in file order. A table made implicitly (`[kernel]` of a
// lone `[kernel.switches]`) has no span of its own; its key has.

#[derive(Clone, Debug)]
struct Node {
    span: Option<Range<usize>>,
    val: Val,
}

#[derive(Clone, Debug)]
enum Val {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime(String),
    Array(Vec<Node>),
    Table(Vec<Entry>),
}

#[derive(Clone, Debug)]
struct Entry {
    key: String,
    key_span: Option<Range<usize>>,
    node: Node,
}

/// The root table's entries.
fn parse_tree(text: &str) -> Result<Vec<Entry>, TomlError> {
    Ok(entries(ImDocument::parse(text)?.as_table()))
}

fn entries(t: &dyn TableLike) -> Vec<Entry> {
    t.iter()
        .map(|(key, item)| Entry {
            key: key.to_owned(),
            key_span: t.get_key_value(key).and_then(|(k, _)| k.span()),
            node: item_node(item),
        })
        .collect()
}

fn item_node(item: &toml_edit::Item) -> Node {
    let val = match item {
        toml_edit::Item::Value(v) => return value_node(v),
        toml_edit::Item::Table(t) => Val::Table(entries(t)),
        toml_edit::Item::ArrayOfTables(a) => Val::Array(
            a.iter()
                .map(|t| Node {
                    span: t.span(),
                    val: Val::Table(entries(t)),
                })
                .collect(),
        ),
        // An absent value: the parser makes none.
        toml_edit::Item::None => Val::Table(Vec::new()),
    };
    Node {
        span: item.span(),
        val,
    }
}

fn value_node(v: &Value) -> Node {
    let val = match v {
        Value::String(s) => Val::Str(s.value().clone()),
        Value::Integer(i) => Val::Int(*i.value()),
        Value::Float(f) => Val::Float(*f.value()),
        Value::Boolean(b) => Val::Bool(*b.value()),
        Value::Datetime(d) => Val::Datetime(d.value().to_string()),
        Value::Array(a) => Val::Array(a.iter().map(value_node).collect()),
        Value::InlineTable(t) => Val::Table(entries(t)),
    };
    Node {
        span: v.span(),
        val,
    }
}

// ---------------------------------------------------------------------------------------
// Errors with positions.

/// Errors travel boxed inside the module: `ScenarioError` is large.
type Res<T> = Result<T, Box<ScenarioError>>;

struct Cx<'a> {
    file: &'a str,
    text: &'a str,
}

impl Cx<'_> {
    /// 1-based line and column (in characters) of a byte offset.
    fn position(&self, offset: usize) -> (usize, usize) {
        let mut off = offset.min(self.text.len());
        while !self.text.is_char_boundary(off) {
            off -= 1;
        }
        let before = &self.text[..off];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        (line, column)
    }

    fn error(
        &self,
        span: Option<&Range<usize>>,
        key: &str,
        message: impl Into<String>,
    ) -> ScenarioError {
        let (line, column) = match span {
            Some(r) => {
                let (l, c) = self.position(r.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        ScenarioError {
            file: self.file.to_owned(),
            line,
            column,
            key: key.to_owned(),
            message: message.into(),
            suggestion: None,
        }
    }

    fn fail(
        &self,
        span: Option<&Range<usize>>,
        key: &str,
        message: impl Into<String>,
    ) -> Box<ScenarioError> {
        Box::new(self.error(span, key, message))
    }
}

fn with_suggestion(mut e: Box<ScenarioError>, s: Option<&str>) -> Box<ScenarioError> {
    e.suggestion = s.map(str::to_owned);
    e
}

/// The candidate nearest to `word`, if it is reasonably close.
fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    let mut best: Option<(f64, &'a str)> = None;
    for &c in candidates {
        let lev = strsim::normalized_damerau_levenshtein(&w, c);
        let jw = strsim::jaro_winkler(&w, c);
        let close = lev >= 0.5 || jw >= 0.88;
        let score = lev.max(jw);
        if close && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, c));
        }
    }
    best.map(|(_, c)| c)
}

/// How a value reads in an error message.
fn describe(v: &Val) -> String {
    match v {
        Val::Str(s) => {
            let shown: String = s.chars().take(40).collect();
            if shown.len() < s.len() {
                format!("the string \"{shown}...\"")
            } else {
                format!("the string \"{s}\"")
            }
        }
        Val::Int(i) => format!("the integer {i}"),
        Val::Float(f) => format!("the float {f}"),
        Val::Bool(b) => format!("the boolean {b}"),
        Val::Datetime(d) => format!("the date-time {d}"),
        Val::Array(_) => "an array".to_string(),
        Val::Table(_) => "a table".to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// Typed access to tables and values.

/// A value with its key path, for checking.
struct Item<'a> {
    path: String,
    node: &'a Node,
    key_span: Option<&'a Range<usize>>,
}

impl<'a> Item<'a> {
    /// Where the value is; its key when the value has no span.
    fn span(&self) -> Option<&'a Range<usize>> {
        self.node.span.as_ref().or(self.key_span)
    }

    fn fail(&self, cx: &Cx<'_>, message: impl Into<String>) -> Box<ScenarioError> {
        cx.fail(self.span(), &self.path, message)
    }

    fn expected(&self, cx: &Cx<'_>, what: &str) -> Box<ScenarioError> {
        self.fail(
            cx,
            format!("expected {what}, found {}", describe(&self.node.val)),
        )
    }
}

/// A table being checked: its path prefix, entries and where it is.
struct Table<'a> {
    path: String,
    entries: &'a [Entry],
    span: Option<&'a Range<usize>>,
}

impl<'a> Table<'a> {
    fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The first key not in `allowed` (checked in file order), as an error with a suggestion.
    fn check_keys(&self, cx: &Cx<'_>, allowed: &[&str], what: &str) -> Res<()> {
        for e in self.entries {
            if !allowed.contains(&e.key.as_str()) {
                return Err(unknown_key(cx, self, e, allowed, what));
            }
        }
        Ok(())
    }

    fn get(&self, key: &str) -> Option<&'a Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    fn missing(&self, cx: &Cx<'_>, key: &str, what: &str) -> Box<ScenarioError> {
        let where_ = if self.path.is_empty() {
            "the file".to_string()
        } else if self.path.ends_with(']') {
            self.path.clone()
        } else {
            format!("[{}]", self.path)
        };
        cx.fail(
            self.span,
            &self.key_path(key),
            format!("missing required key '{key}' in {where_}: expected {what}"),
        )
    }
}

fn unknown_key(
    cx: &Cx<'_>,
    t: &Table<'_>,
    e: &Entry,
    allowed: &[&str],
    what: &str,
) -> Box<ScenarioError> {
    let path = t.key_path(&e.key);
    let span = e.key_span.as_ref().or(e.node.span.as_ref());
    let err = cx.fail(
        span,
        &path,
        format!(
            "unknown key '{}' in {what}; expected one of: {}",
            e.key,
            allowed.join(", ")
        ),
    );
    with_suggestion(err, nearest(&e.key, allowed))
}

/// The value under `key`, if present.
fn opt<'a>(t: &Table<'a>, key: &str) -> Option<Item<'a>> {
    let e = t.get(key)?;
    Some(Item {
        path: t.key_path(key),
        node: &e.node,
        key_span: e.key_span.as_ref(),
    })
}

fn sub_table<'a>(cx: &Cx<'_>, item: &Item<'a>, what: &str) -> Res<Table<'a>> {
    match &item.node.val {
        Val::Table(entries) => Ok(Table {
            path: item.path.to_owned(),
            entries,
            span: item.key_span.or(item.node.span.as_ref()),
        }),
        _ => Err(item.expected(cx, what)),
    }
}

/// An integer in `lo..=hi`.
fn int_in(cx: &Cx<'_>, item: &Item<'_>, lo: i64, hi: i64, what: &str) -> Res<i64> {
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

fn u32_in(cx: &Cx<'_>, item: &Item<'_>, lo: u32, hi: u32, what: &str) -> Res<u32> {
    let i = int_in(cx, item, i64::from(lo), i64::from(hi), what)?;
    u32::try_from(i).map_err(|_| item.expected(cx, what))
}

fn u64_min(cx: &Cx<'_>, item: &Item<'_>, lo: u64, what: &str) -> Res<u64> {
    let lo_i = i64::try_from(lo).unwrap_or(i64::MAX);
    let i = int_in(cx, item, lo_i, i64::MAX, what)?;
    u64::try_from(i).map_err(|_| item.expected(cx, what))
}

fn string<'a>(cx: &Cx<'_>, item: &Item<'a>, what: &str) -> Res<&'a str> {
    match &item.node.val {
        Val::Str(s) => Ok(s),
        _ => Err(item.expected(cx, what)),
    }
}

/// What the size is of, for the "negative" message: "a negative size" or "a negative rate".
#[derive(Clone, Copy, PartialEq)]
enum SizeKind {
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
fn size(cx: &Cx<'_>, item: &Item<'_>, kind: SizeKind, percent_of: Option<u64>) -> Res<u64> {
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
fn time(cx: &Cx<'_>, item: &Item<'_>) -> Res<u64> {
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

// ---------------------------------------------------------------------------------------
// The sections.

fn resolve(cx: &Cx<'_>, entries: &[Entry], name: &str) -> Res<Scenario> {
    let root = Table {
        path: String::new(),
        entries,
        span: None,
    };
    root.check_keys(cx, TOP_KEYS, "the file (expected tables)")?;

    let machine_item = opt(&root, "machine").ok_or_else(|| {
        cx.fail(
            None,
            "machine",
            "missing required table [machine]: expected at least `[machine]` with `ram = \"4G\"`",
        )
    })?;
    let machine_t = sub_table(cx, &machine_item, "a table [machine]")?;
    let (ram, cpus) = machine(cx, &machine_t)?;

    let devices = match opt(&root, "device") {
        Some(item) => devices(cx, &item)?,
        None => Vec::new(),
    };

    let swap = match opt(&root, "swap") {
        Some(item) => Some(swap(
            cx,
            &sub_table(cx, &item, "a table [swap]")?,
            &devices,
        )?),
        None => None,
    };

    let vm = match opt(&root, "vm") {
        Some(item) => vm(cx, &sub_table(cx, &item, "a table [vm]")?, ram)?,
        None => VmSysctls::default(),
    };

    let run = match opt(&root, "run") {
        Some(item) => run(cx, &sub_table(cx, &item, "a table [run]")?)?,
        None => RunParams {
            duration: 60_000_000_000,
            seed: 1,
            end_when_done: false,
        },
    };

    let kernel = match opt(&root, "kernel") {
        Some(item) => kernel(cx, &sub_table(cx, &item, "a table [kernel]")?)?,
        None => KernelSelection::default(),
    };

    let slab = match opt(&root, "slab") {
        Some(item) => slab(cx, &sub_table(cx, &item, "a table [slab]")?)?,
        None => SlabParams::default(),
    };

    let swap_size = swap.as_ref().map_or(0, |s| s.size);
    let workloads = match opt(&root, "workload") {
        Some(item) => workloads(cx, &item, ram, swap_size, &devices)?,
        None => Vec::new(),
    };

    Ok(Scenario {
        name: name.to_owned(),
        machine: Machine {
            ram,
            cpus,
            swap,
            devices,
            reclaim_costs: Default::default(),
        },
        vm,
        run,
        kernel,
        slab,
        workloads,
    })
}

fn machine(cx: &Cx<'_>, t: &Table<'_>) -> Res<(u64, u32)> {
    t.check_keys(cx, MACHINE_KEYS, "[machine]")?;
    let item = opt(t, "ram")
        .ok_or_else(|| t.missing(cx, "ram", "the machine's RAM as a size such as \"4G\""))?;
    let ram = size(cx, &item, SizeKind::Size, None)?;
    if ram < MIN_RAM {
        return Err(item.fail(
            cx,
            format!(
                "RAM too small for the zones and watermarks: need at least 64M, found {ram} bytes"
            ),
        ));
    }
    if ram > MAX_RAM {
        return Err(item.fail(cx, format!("RAM too large: at most 4T, found {ram} bytes")));
    }
    if ram % PAGE != 0 {
        return Err(item.fail(
            cx,
            format!("RAM must be a whole number of 4096-byte pages, found {ram} bytes"),
        ));
    }
    let cpus = match opt(t, "cpus") {
        Some(item) => u32_in(
            cx,
            &item,
            1,
            MAX_CPUS as u32,
            "a CPU count, an integer from 1 to 4096",
        )?,
        None => 4,
    };
    Ok((ram, cpus))
}

fn swap(cx: &Cx<'_>, t: &Table<'_>, devices: &[BlockDevice]) -> Res<SwapDevice> {
    t.check_keys(cx, SWAP_KEYS, "[swap]")?;
    let item = opt(t, "size").ok_or_else(|| {
        t.missing(
            cx,
            "size",
            "the swap device's size such as \"8G\" (omit [swap] for no swap)",
        )
    })?;
    let size_b = size(cx, &item, SizeKind::Size, None)?;
    if size_b == 0 {
        return Err(item.fail(
            cx,
            "swap size must be greater than 0 (omit [swap] for no swap device)",
        ));
    }
    if size_b % PAGE != 0 {
        return Err(item.fail(
            cx,
            format!("swap size must be a whole number of 4096-byte pages, found {size_b} bytes"),
        ));
    }
    if size_b > MAX_SWAP {
        return Err(item.fail(
            cx,
            format!("swap size too large: at most 64T, found {size_b} bytes"),
        ));
    }
    let read_latency = match opt(t, "read_latency") {
        Some(item) => time(cx, &item)?,
        None => 5_000_000,
    };
    let write_latency = match opt(t, "write_latency") {
        Some(item) => time(cx, &item)?,
        None => 5_000_000,
    };
    let bandwidth = match opt(t, "bandwidth") {
        Some(item) => {
            let b = size(cx, &item, SizeKind::Rate, None)?;
            if b == 0 {
                return Err(item.fail(cx, "bandwidth must be greater than 0 bytes per second"));
            }
            b
        }
        None => 100 * MIB,
    };
    let device = match opt(t, "device") {
        Some(item) => {
            let name = string(
                cx,
                &item,
                "the name of a [[device]] (a raw disk, or a disk with a filesystem whose end holds the swap partition)",
            )?;
            let Some(dev) = devices.iter().find(|d| d.name == name) else {
                let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
                let e = item.fail(
                    cx,
                    format!("no [[device]] named \"{name}\" to hold the swap area"),
                );
                return Err(with_suggestion(e, nearest(name, &names)));
            };
            if size_b > dev.size / 2 && dev.filesystem != Filesystem::Raw {
                return Err(item.fail(cx, format!("the swap area ({size_b} bytes) would take more than half of device \"{name}\" ({} bytes), which also holds a filesystem", dev.size)));
            }
            if size_b > dev.size {
                return Err(item.fail(cx, format!("the swap area ({size_b} bytes) is larger than device \"{name}\" ({} bytes)", dev.size)));
            }
            for key in ["read_latency", "write_latency", "bandwidth"] {
                if let Some(other) = opt(t, key) {
                    return Err(other.fail(cx, format!("key '{key}' describes the simple swap model; with device = \"{name}\" the device's model applies")));
                }
            }
            Some(name.to_owned())
        }
        None => None,
    };
    Ok(SwapDevice {
        size: size_b,
        read_latency,
        write_latency,
        bandwidth,
        device,
    })
}

fn vm(cx: &Cx<'_>, t: &Table<'_>, ram: u64) -> Res<VmSysctls> {
    t.check_keys(cx, VM_KEYS, "[vm]")?;
    let mut vm = VmSysctls::default();
    if let Some(item) = opt(t, "min_free_kbytes") {
        let kb = u64_min(cx, &item, 0, "min_free_kbytes, an integer >= 0 (KiB)")?;
        if kb.saturating_mul(1024) >= ram {
            return Err(item.fail(
                cx,
                format!(
                    "min_free_kbytes = {kb} reserves all of RAM ({} KiB); expected less than RAM",
                    ram / 1024
                ),
            ));
        }
        vm.min_free_kbytes = Some(kb);
    }
    if let Some(item) = opt(t, "swappiness") {
        vm.swappiness = u32_in(cx, &item, 0, 100, "swappiness, an integer from 0 to 100")?;
    }
    if let Some(item) = opt(t, "lowmem_reserve_ratio") {
        vm.lowmem_reserve_ratio = lowmem_reserve_ratio(cx, &item)?;
    }
    if let Some(item) = opt(t, "page-cluster") {
        vm.page_cluster = u32_in(cx, &item, 0, 10, "page-cluster, an integer from 0 to 10")?;
    }
    if let Some(item) = opt(t, "vfs_cache_pressure") {
        vm.vfs_cache_pressure = u32_in(
            cx,
            &item,
            0,
            u32::MAX,
            "vfs_cache_pressure, an integer >= 0 (percent)",
        )?;
    }
    if let Some(item) = opt(t, "laptop_mode") {
        vm.laptop_mode = u32_in(
            cx,
            &item,
            0,
            u32::MAX,
            "laptop_mode, an integer >= 0 (0 = off)",
        )? != 0;
    }
    let d = &mut vm.dirty;
    for (key, field) in [
        ("dirty_ratio", &mut d.dirty_ratio),
        ("dirty_background_ratio", &mut d.dirty_background_ratio),
    ] {
        if let Some(item) = opt(t, key) {
            *field = u32_in(
                cx,
                &item,
                0,
                100,
                &format!("{key}, an integer from 0 to 100 (percent)"),
            )?;
        }
    }
    for (key, field) in [
        ("dirty_expire_centisecs", &mut d.dirty_expire_centisecs),
        (
            "dirty_writeback_centisecs",
            &mut d.dirty_writeback_centisecs,
        ),
    ] {
        if let Some(item) = opt(t, key) {
            *field = u32_in(
                cx,
                &item,
                0,
                u32::MAX,
                &format!("{key}, an integer >= 0 (hundredths of a second)"),
            )?;
        }
    }
    for (key, field) in [
        ("dirty_bytes", &mut d.dirty_bytes),
        ("dirty_background_bytes", &mut d.dirty_background_bytes),
    ] {
        if let Some(item) = opt(t, key) {
            *field = size(cx, &item, SizeKind::Size, None)?;
        }
    }
    if let Err(e) = vm.dirty.validate() {
        let key = match e {
            crate::mm::page_writeback::SysctlError::RatioOutOfRange { name, .. } => name,
            crate::mm::page_writeback::SysctlError::DirtyBytesTooSmall { .. } => "dirty_bytes",
        };
        return Err(match opt(t, key) {
            Some(item) => item.fail(cx, e.to_string()),
            None => Box::new(cx.error(None, &format!("vm.{key}"), e.to_string())),
        });
    }
    Ok(vm)
}

fn lowmem_reserve_ratio(cx: &Cx<'_>, item: &Item<'_>) -> Res<[u32; 3]> {
    const WHAT: &str =
        "an array of exactly 3 integers >= 1 (DMA, DMA32, Normal), e.g. [256, 256, 32]";
    let Val::Array(items) = &item.node.val else {
        return Err(item.expected(cx, WHAT));
    };
    if items.len() != 3 {
        return Err(item.fail(
            cx,
            format!(
                "expected {WHAT}, found an array of {} elements",
                items.len()
            ),
        ));
    }
    let mut out = [0u32; 3];
    for (i, n) in items.iter().enumerate() {
        let elem = Item {
            path: format!("{}[{i}]", item.path),
            node: n,
            key_span: item.span(),
        };
        out[i] = u32_in(cx, &elem, 1, u32::MAX, "a positive integer (a ratio >= 1)")?;
    }
    Ok(out)
}

fn run(cx: &Cx<'_>, t: &Table<'_>) -> Res<RunParams> {
    t.check_keys(cx, RUN_KEYS, "[run]")?;
    let duration = match opt(t, "duration") {
        Some(item) => {
            let d = time(cx, &item)?;
            if d == 0 {
                return Err(item.fail(cx, "the run duration must be greater than 0"));
            }
            d
        }
        None => 60_000_000_000,
    };
    let seed = match opt(t, "seed") {
        Some(item) => u64_min(cx, &item, 0, "a seed, an integer >= 0")?,
        None => 1,
    };
    let end_when_done = match opt(t, "end") {
        Some(item) => choice(cx, &item, &["duration", "workloads"])? == "workloads",
        None => false,
    };
    Ok(RunParams {
        duration,
        seed,
        end_when_done,
    })
}

fn kernel(cx: &Cx<'_>, t: &Table<'_>) -> Res<KernelSelection> {
    t.check_keys(cx, KERNEL_KEYS, "[kernel]")?;
    let mut sel = KernelSelection::default();
    if let Some(item) = opt(t, "preset") {
        sel.preset = Some(string(cx, &item, "a preset name as a string, e.g. \"3.9\"")?.to_owned());
    }
    if let Some(item) = opt(t, "switches") {
        let sw = sub_table(cx, &item, "a table [kernel.switches] of name = true|false")?;
        for e in sw.entries {
            let it = Item {
                path: sw.key_path(&e.key),
                node: &e.node,
                key_span: e.key_span.as_ref(),
            };
            match e.node.val {
                Val::Bool(b) => sel.switches.push((e.key.clone(), b)),
                _ => return Err(it.expected(cx, "true or false")),
            }
        }
    }
    Ok(sel)
}

fn slab(cx: &Cx<'_>, t: &Table<'_>) -> Res<SlabParams> {
    t.check_keys(cx, SLAB_KEYS, "[slab]")?;
    let mut s = SlabParams::default();
    if let Some(item) = opt(t, "objects") {
        s.objects = u64_min(cx, &item, 0, "an object count, an integer >= 0")?;
    }
    if let Some(item) = opt(t, "object_size") {
        let b = size(cx, &item, SizeKind::Size, None)?;
        if !(1..=PAGE).contains(&b) {
            return Err(item.fail(
                cx,
                format!("expected an object size from 1 to 4096 bytes, found {b} bytes"),
            ));
        }
        s.object_size = b;
    }
    Ok(s)
}

// ---------------------------------------------------------------------------------------
// Workloads.

fn workloads(
    cx: &Cx<'_>,
    item: &Item<'_>,
    ram: u64,
    swap: u64,
    devices: &[BlockDevice],
) -> Res<Vec<Workload>> {
    let Val::Array(items) = &item.node.val else {
        return Err(item.expected(cx, "an array of tables, written [[workload]]"));
    };
    let limit = u128::from(ram) + u128::from(swap);
    let mut total: u128 = 0;
    let mut out: Vec<Workload> = Vec::new();
    // The explicit name of each workload, if it has one.
    let mut explicit: Vec<Option<String>> = Vec::new();
    for (i, n) in items.iter().enumerate() {
        let path = format!("workload[{i}]");
        let it = Item {
            path: path.clone(),
            node: n,
            key_span: item.key_span,
        };
        let t = sub_table(cx, &it, "a table, written [[workload]]")?;
        let t = Table {
            span: n.span.as_ref().or(item.key_span),
            ..t
        };
        let (w, mem_item, mem, name) = workload(cx, &t, ram, devices)?;
        total += u128::from(mem);
        if total > limit {
            let (span, key) = match mem_item {
                Some((span, key)) => (span, key),
                None => (t.span, t.key_path("pool")),
            };
            return Err(cx.fail(
                span,
                &key,
                format!(
                    "more memory asked than can exist: the workloads up to {path} need {total} bytes, but RAM + swap is {limit} bytes"
                ),
            ));
        }
        out.push(w);
        let name = match name {
            Some((n, span)) => {
                if let Some(j) = explicit
                    .iter()
                    .position(|e| e.as_deref() == Some(n.as_str()))
                {
                    return Err(cx.fail(
                        span,
                        &t.key_path("name"),
                        format!("duplicate workload name \"{n}\": workload[{j}] already has it; names must be unique"),
                    ));
                }
                Some(n)
            }
            None => None,
        };
        explicit.push(name);
    }
    assign_names(&mut out, &explicit);
    Ok(out)
}

/// Unnamed workloads get their type name, then `-2`, `-3`... skipping names already taken.
fn assign_names(out: &mut [Workload], explicit: &[Option<String>]) {
    let mut used: Vec<String> = explicit.iter().flatten().cloned().collect();
    let mut next: Vec<(&'static str, u64)> = Vec::new();
    for (w, name) in out.iter_mut().zip(explicit) {
        if name.is_some() {
            continue;
        }
        let ty = match w.kind {
            WorkloadKind::MemEater { .. } => "mem_eater",
            WorkloadKind::Memcachetest(_) => "memcachetest",
            WorkloadKind::Dd(_) => "dd",
            WorkloadKind::Cat { .. } => "cat",
            WorkloadKind::Parallelio(_) => "parallelio",
            WorkloadKind::Sync => "sync",
            WorkloadKind::Mmap(_) => "mmap",
        };
        let idx = match next.iter().position(|(t, _)| *t == ty) {
            Some(i) => i,
            None => {
                next.push((ty, 1));
                next.len() - 1
            }
        };
        loop {
            let n = next[idx].1;
            next[idx].1 += 1;
            let candidate = if n == 1 {
                ty.to_string()
            } else {
                format!("{ty}-{n}")
            };
            if !used.contains(&candidate) {
                used.push(candidate.clone());
                w.name = candidate;
                break;
            }
        }
    }
}

/// Where a workload's memory figure came from: the value's span and its key path.
type MemSource<'a> = Option<(Option<&'a Range<usize>>, String)>;

/// An explicit workload name and where it is.
type NameSource<'a> = Option<(String, Option<&'a Range<usize>>)>;

/// One workload; also returns where its memory figure is, the memory, and its explicit name.
fn workload<'a>(
    cx: &Cx<'_>,
    t: &Table<'a>,
    ram: u64,
    devices: &[BlockDevice],
) -> Res<(Workload, MemSource<'a>, u64, NameSource<'a>)> {
    let ty_item = opt(t, "type").ok_or_else(|| {
        t.missing(
            cx,
            "type",
            &format!("the workload type, {}", quoted_list(WORKLOAD_TYPES)),
        )
    })?;
    let ty = string(
        cx,
        &ty_item,
        &format!(
            "the workload type as a string, {}",
            quoted_list(WORKLOAD_TYPES)
        ),
    )?;
    const TYPES: [(&str, &[&str]); 7] = [
        ("memcachetest", MEMCACHETEST_KEYS),
        ("mem_eater", MEM_EATER_KEYS),
        ("dd", DD_KEYS),
        ("cat", CAT_KEYS),
        ("mmap", MMAP_KEYS),
        ("parallelio", PARALLELIO_KEYS),
        ("sync", &[]),
    ];
    let Some(&(_, own)) = TYPES.iter().find(|(name, _)| *name == ty) else {
        let e = ty_item.fail(
            cx,
            format!(
                "unknown workload type \"{ty}\": expected {}",
                quoted_list(WORKLOAD_TYPES)
            ),
        );
        return Err(with_suggestion(e, nearest(ty, WORKLOAD_TYPES)));
    };
    // A key of another type (that this type does not share) gets a message naming its type.
    let other_type = |key: &str| -> Option<&str> {
        TYPES
            .iter()
            .find(|(name, keys)| *name != ty && keys.contains(&key) && !own.contains(&key))
            .map(|(name, _)| *name)
    };
    let allowed: Vec<&str> = COMMON_WORKLOAD_KEYS.iter().chain(own).copied().collect();
    for e in t.entries {
        if allowed.contains(&e.key.as_str()) {
            continue;
        }
        if let Some(other_name) = other_type(&e.key) {
            return Err(cx.fail(
                e.key_span.as_ref().or(e.node.span.as_ref()),
                &t.key_path(&e.key),
                format!(
                    "key '{}' belongs to {other_name} workloads, but this workload has type = \"{ty}\"; expected one of: {}",
                    e.key,
                    allowed.join(", ")
                ),
            ));
        }
        return Err(unknown_key(cx, t, e, &allowed, &format!("a {ty} workload")));
    }

    let name = match opt(t, "name") {
        Some(item) => {
            let s = string(cx, &item, "a workload name as a string")?;
            if s.trim().is_empty() || s.chars().any(char::is_control) {
                return Err(item.fail(
                    cx,
                    format!(
                        "expected a non-empty workload name without control characters, found {}",
                        describe(&item.node.val)
                    ),
                ));
            }
            Some((s.to_owned(), item.span()))
        }
        None => None,
    };
    let start = match opt(t, "start") {
        Some(item) => time(cx, &item)?,
        None => 0,
    };

    let (kind, mem_src, mem) = match ty {
        "memcachetest" => memcachetest(cx, t, ram)?,
        "mem_eater" => mem_eater(cx, t, ram)?,
        "cat" => (cat(cx, t, devices)?, None, 0),
        "mmap" => (mmap(cx, t, devices)?, None, 0),
        "parallelio" => parallelio(cx, t, ram, devices)?,
        "sync" => (WorkloadKind::Sync, None, 0),
        _ => (dd(cx, t, devices)?, None, 0),
    };
    let w = Workload {
        name: name.as_ref().map_or_else(String::new, |(n, _)| n.clone()),
        start,
        kind,
    };
    Ok((w, mem_src, mem, name))
}

fn memcachetest<'a>(
    cx: &Cx<'_>,
    t: &Table<'a>,
    ram: u64,
) -> Res<(WorkloadKind, MemSource<'a>, u64)> {
    let (pool, src) = match opt(t, "pool") {
        Some(item) => {
            let b = size(cx, &item, SizeKind::Size, Some(ram))?;
            if b == 0 {
                return Err(item.fail(cx, "the item pool must be greater than 0 bytes"));
            }
            (b, Some((item.span(), item.path.to_owned())))
        }
        // MMTests' default: 80% of RAM, in whole pages.
        None => (ram / 5 * 4 / PAGE * PAGE, None),
    };
    let value_size = match opt(t, "value_size") {
        Some(item) => {
            let b = size(cx, &item, SizeKind::Size, None)?;
            if b == 0 || b > pool {
                return Err(item.fail(
                    cx,
                    format!("expected a value size from 1 byte up to the pool size ({pool} bytes), found {b} bytes"),
                ));
            }
            b
        }
        None => (16 * 1024).min(pool),
    };
    let set_percent = match opt(t, "set_percent") {
        Some(item) => u32_in(
            cx,
            &item,
            0,
            100,
            "a percentage of sets, an integer from 0 to 100",
        )?,
        None => 33,
    };
    let threads = match opt(t, "threads") {
        Some(item) => u32_in(
            cx,
            &item,
            1,
            MAX_THREADS as u32,
            "a thread count, an integer from 1 to 4096",
        )?,
        None => 1,
    };
    let duration = match opt(t, "duration") {
        Some(item) => Some(positive_time(cx, &item, "memcachetest's run time")?),
        None => None,
    };
    let populate = match opt(t, "populate") {
        Some(item) => match item.node.val {
            Val::Bool(b) => b,
            _ => return Err(item.expected(cx, "true or false")),
        },
        None => true,
    };
    let kind = WorkloadKind::Memcachetest(MemcachetestParams {
        pool,
        value_size,
        set_percent,
        threads,
        duration,
        populate,
    });
    Ok((kind, src, pool))
}

fn mem_eater<'a>(cx: &Cx<'_>, t: &Table<'a>, ram: u64) -> Res<(WorkloadKind, MemSource<'a>, u64)> {
    let item = opt(t, "size").ok_or_else(|| {
        t.missing(
            cx,
            "size",
            "how much memory the mem_eater touches, e.g. \"2G\" or \"50%\"",
        )
    })?;
    let size_b = size(cx, &item, SizeKind::Size, Some(ram))?;
    if size_b == 0 {
        return Err(item.fail(cx, "a mem_eater's size must be greater than 0 bytes"));
    }
    let src = Some((item.span(), item.path.to_owned()));
    let chunk = match opt(t, "chunk") {
        Some(item) => {
            let c = size(cx, &item, SizeKind::Size, None)?;
            if c == 0 || c > size_b {
                return Err(item.fail(
                    cx,
                    format!("expected a chunk from 1 byte up to the mem_eater's size ({size_b} bytes), found {c} bytes"),
                ));
            }
            c
        }
        None => (64 * MIB).min(size_b),
    };
    let pause = match opt(t, "pause") {
        Some(item) => time(cx, &item)?,
        None => 0,
    };
    let then_item = opt(t, "then");
    let retouch = match then_item {
        Some(item) => {
            let s = string(cx, &item, "\"hold\" or \"retouch\"")?;
            match s {
                "hold" => false,
                "retouch" => true,
                _ => {
                    let e = item.fail(
                        cx,
                        format!("expected \"hold\" or \"retouch\", found \"{s}\""),
                    );
                    return Err(with_suggestion(e, nearest(s, THEN_VALUES)));
                }
            }
        }
        None => false,
    };
    let interval = match opt(t, "retouch_interval") {
        Some(item) if !retouch => {
            return Err(item.fail(
                cx,
                "retouch_interval only applies with then = \"retouch\"; this mem_eater holds its memory",
            ));
        }
        Some(item) => {
            let d = time(cx, &item)?;
            if d == 0 {
                return Err(item.fail(cx, "retouch_interval must be greater than 0"));
            }
            d
        }
        None => 10_000_000_000,
    };
    let then = if retouch {
        MemEaterThen::Retouch { interval }
    } else {
        MemEaterThen::Hold
    };
    let kind = WorkloadKind::MemEater {
        size: size_b,
        chunk,
        pause,
        then,
    };
    Ok((kind, src, size_b))
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

/// One of `choices`, as a string; a misspelt value gets a suggestion.
fn choice<'a>(cx: &Cx<'_>, item: &Item<'a>, choices: &[&str]) -> Res<&'a str> {
    let quoted: Vec<String> = choices.iter().map(|c| format!("\"{c}\"")).collect();
    let what = format!("one of {}", quoted.join(", "));
    let s = string(cx, item, &what)?;
    if choices.contains(&s) {
        return Ok(s);
    }
    let e = item.fail(cx, format!("expected {what}, found \"{s}\""));
    Err(with_suggestion(e, nearest(s, choices)))
}

/// The `[[device]]` tables.
fn devices(cx: &Cx<'_>, item: &Item<'_>) -> Res<Vec<BlockDevice>> {
    let Val::Array(items) = &item.node.val else {
        return Err(item.expected(cx, "an array of tables, written [[device]]"));
    };
    let mut out: Vec<BlockDevice> = Vec::new();
    for (i, n) in items.iter().enumerate() {
        let it = Item {
            path: format!("device[{i}]"),
            node: n,
            key_span: item.key_span,
        };
        let t = sub_table(cx, &it, "a table, written [[device]]")?;
        let t = Table {
            span: n.span.as_ref().or(item.key_span),
            ..t
        };
        t.check_keys(cx, DEVICE_KEYS, "a [[device]]")?;
        let name_item = opt(&t, "name")
            .ok_or_else(|| t.missing(cx, "name", "the device name, e.g. \"sda\""))?;
        let name = string(cx, &name_item, "a device name as a string, e.g. \"sda\"")?;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(name_item.fail(
                cx,
                format!("expected a device name of letters, digits, '-' or '_', found \"{name}\""),
            ));
        }
        if out.iter().any(|d| d.name == name) {
            return Err(name_item.fail(cx, format!("duplicate device name \"{name}\"")));
        }
        let ty_item = opt(&t, "type").ok_or_else(|| {
            t.missing(
                cx,
                "type",
                "the device type: \"hdd\", \"ssd\", \"usb\" or \"raid0\"",
            )
        })?;
        let ty = choice(cx, &ty_item, DEVICE_TYPES)?;
        let kind = match ty {
            "hdd" => DeviceKind::Hdd,
            "ssd" => DeviceKind::Ssd,
            "usb" => DeviceKind::Usb,
            "nfs" => DeviceKind::Nfs,
            _ => {
                let members = match opt(&t, "members") {
                    Some(m) => u32_in(cx, &m, 2, 64, "members, an integer from 2 to 64")?,
                    None => 4,
                };
                DeviceKind::Raid0 { members }
            }
        };
        if !matches!(kind, DeviceKind::Raid0 { .. }) {
            if let Some(m) = opt(&t, "members") {
                return Err(m.fail(cx, "key 'members' is only for type = \"raid0\""));
            }
        }
        let default_size: u64 = match kind {
            DeviceKind::Hdd | DeviceKind::Nfs => 2 << 40,
            DeviceKind::Ssd => 256 << 30,
            DeviceKind::Usb => 32 << 30,
            DeviceKind::Raid0 { members } => u64::from(members) * (2 << 40),
        };
        let size_b = match opt(&t, "size") {
            Some(s) => {
                let b = size(cx, &s, SizeKind::Size, None)?;
                if b < 64 * MIB || b % 4096 != 0 {
                    return Err(s.fail(cx, format!("expected a device size of at least 64M in whole 4 KiB pages, found {b} bytes")));
                }
                b
            }
            None => default_size,
        };
        let nfs = kind == DeviceKind::Nfs;
        let filesystem = match opt(&t, "filesystem") {
            Some(f) => {
                let fs = match choice(cx, &f, FILESYSTEMS)? {
                    "ext4" => Filesystem::Ext4,
                    "ext3" => Filesystem::Ext3,
                    "xfs" => Filesystem::Xfs,
                    "btrfs" => Filesystem::Btrfs,
                    "nfs" => Filesystem::Nfs,
                    _ => Filesystem::Raw,
                };
                if nfs && fs != Filesystem::Nfs {
                    return Err(f.fail(
                        cx,
                        format!("device \"{name}\" is an NFS mount: its filesystem is \"nfs\""),
                    ));
                }
                if !nfs && fs == Filesystem::Nfs {
                    return Err(f.fail(
                        cx,
                        format!(
                            "filesystem = \"nfs\" needs an NFS mount: type = \"nfs\", not \"{ty}\""
                        ),
                    ));
                }
                fs
            }
            None if nfs => Filesystem::Nfs,
            None => Filesystem::Ext4,
        };
        if nfs {
            for key in ["nr_requests", "scheduler"] {
                if let Some(item) = opt(&t, key) {
                    return Err(item.fail(
                        cx,
                        format!(
                            "key '{key}' is for block devices; an NFS mount has no request queue"
                        ),
                    ));
                }
            }
        }
        let nr_requests = match opt(&t, "nr_requests") {
            Some(r) => u32_in(cx, &r, 4, 65536, "nr_requests, an integer from 4 to 65536")?,
            None => 128,
        };
        let scheduler = match opt(&t, "scheduler") {
            Some(s) => match choice(cx, &s, SCHEDULERS)? {
                "noop" => Scheduler::Noop,
                "cfq" => Scheduler::Cfq,
                _ => Scheduler::Deadline,
            },
            None => Scheduler::default_for(kind),
        };
        let dev = BlockDevice {
            name: name.to_owned(),
            kind,
            size: size_b,
            filesystem,
            nr_requests,
            scheduler,
            params: DeviceParams::default(),
        };
        out.push(device_params(cx, &t, ty, dev, &ty_item)?);
    }
    Ok(out)
}

/// The device-model keys of a `[[device]]`. Each is applied in file order and the model
/// rebuilt through its own checks (`block::DeviceError`), so an impossible value is reported
/// at the key that made it so.
fn device_params(
    cx: &Cx<'_>,
    t: &Table<'_>,
    ty: &str,
    mut dev: BlockDevice,
    ty_item: &Item<'_>,
) -> Res<BlockDevice> {
    let name = dev.name.clone();
    let bad =
        |item: &Item<'_>, problem: &str| item.fail(cx, format!("device \"{name}\": {problem}"));
    for e in t.entries {
        let Some(&(key, types)) = DEVICE_PARAM_KEYS.iter().find(|(k, _)| *k == e.key) else {
            continue;
        };
        let item = opt(t, key).expect("the entry is in the table");
        if !types.contains(&ty) {
            let quoted: Vec<String> = types.iter().map(|t| format!("\"{t}\"")).collect();
            return Err(item.fail(
                cx,
                format!("key '{key}' is only for type = {}", quoted.join(" or ")),
            ));
        }
        let p = &mut dev.params;
        match key {
            "bandwidth" => p.bandwidth = Some(size(cx, &item, SizeKind::Rate, None)?),
            "read_bandwidth" => p.read_bandwidth = Some(size(cx, &item, SizeKind::Rate, None)?),
            "server_bandwidth" => p.server_bandwidth = Some(size(cx, &item, SizeKind::Rate, None)?),
            "rpm" => {
                p.rpm = Some(u32_in(
                    cx,
                    &item,
                    0,
                    1_000_000,
                    "a spindle speed in rpm, e.g. 7200",
                )?)
            }
            "seek" => {
                let v = time(cx, &item)?;
                if v == 0 {
                    return Err(bad(
                        &item,
                        "seek must be greater than 0: a disk's head always has to move",
                    ));
                }
                p.seek = Some(v);
            }
            "latency" => p.latency = Some(time(cx, &item)?),
            _ => {
                let v = size(cx, &item, SizeKind::Size, None)?;
                if !(PAGE..=MAX_WSIZE).contains(&v) || !v.is_power_of_two() {
                    return Err(bad(&item, &format!("wsize must be a power of two from 4K to 1M (the client rounds it so), found {v} bytes")));
                }
                p.wsize = Some(v);
            }
        }
        if let Err(e) = dev.model() {
            return Err(bad(&item, &e.problem));
        }
    }
    // The kind's defaults always build; checked anyway so no device reaches the simulator
    // unvalidated.
    if let Err(e) = dev.model() {
        return Err(bad(ty_item, &e.problem));
    }
    Ok(dev)
}

/// The `device` and `size` keys of a file workload: a [[device]] with a filesystem and a
/// file size in whole pages that fits on it.
fn file_on_device<'d>(
    cx: &Cx<'_>,
    t: &Table<'_>,
    devices: &'d [BlockDevice],
    what: &str,
) -> Res<(&'d BlockDevice, u64)> {
    let dev_item = opt(t, "device")
        .ok_or_else(|| t.missing(cx, "device", &format!("the name of the [[device]] {what}")))?;
    let dev_name = string(cx, &dev_item, "a device name as a string")?;
    let Some(dev) = devices.iter().find(|d| d.name == dev_name) else {
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        let e = dev_item.fail(
            cx,
            if names.is_empty() {
                format!("no [[device]] named \"{dev_name}\": the file declares no devices")
            } else {
                format!(
                    "no [[device]] named \"{dev_name}\"; expected one of: {}",
                    names.join(", ")
                )
            },
        );
        return Err(with_suggestion(e, nearest(dev_name, &names)));
    };
    if dev.filesystem == Filesystem::Raw {
        return Err(dev_item.fail(
            cx,
            format!("device \"{dev_name}\" has no filesystem to hold a file"),
        ));
    }
    let size_item =
        opt(t, "size").ok_or_else(|| t.missing(cx, "size", "the file size, e.g. \"4G\""))?;
    let size_b = size(cx, &size_item, SizeKind::Size, None)?;
    if size_b == 0 || size_b % 4096 != 0 {
        return Err(size_item.fail(
            cx,
            format!(
                "expected a file size of whole 4 KiB pages greater than 0, found {size_b} bytes"
            ),
        ));
    }
    if size_b > dev.size {
        return Err(size_item.fail(cx, format!("a file of {size_b} bytes is larger than the filesystem on \"{dev_name}\" ({} bytes)", dev.size)));
    }
    Ok((dev, size_b))
}

/// A cat workload's keys.
fn cat(cx: &Cx<'_>, t: &Table<'_>, devices: &[BlockDevice]) -> Res<WorkloadKind> {
    let (dev, size) = file_on_device(cx, t, devices, "the file is on")?;
    Ok(WorkloadKind::Cat {
        device: dev.name.clone(),
        size,
    })
}

/// A dd workload's keys.
fn dd(cx: &Cx<'_>, t: &Table<'_>, devices: &[BlockDevice]) -> Res<WorkloadKind> {
    let (dev, size_b) = file_on_device(cx, t, devices, "dd writes to")?;
    let dev_name = dev.name.as_str();
    let bs = match opt(t, "bs") {
        Some(b) => {
            let v = size(cx, &b, SizeKind::Size, None)?;
            if v == 0 || v % 4096 != 0 {
                return Err(b.fail(
                    cx,
                    format!("expected a block size of whole 4 KiB pages, found {v} bytes"),
                ));
            }
            v
        }
        None => MIB,
    };
    let conv = match opt(t, "conv") {
        Some(c) => match choice(cx, &c, &["fdatasync", "fsync", "none"])? {
            "fdatasync" => DdConv::Fdatasync,
            "fsync" => DdConv::Fsync,
            _ => DdConv::None,
        },
        None => DdConv::None,
    };
    let truncate_to = match opt(t, "truncate_to") {
        Some(item) => {
            let v = size(cx, &item, SizeKind::Size, None)?;
            if v % 4096 != 0 || v > size_b {
                return Err(item.fail(
                    cx,
                    format!("expected a size of whole 4 KiB pages up to the file size ({size_b} bytes), found {v} bytes"),
                ));
            }
            Some(v)
        }
        None => None,
    };
    Ok(WorkloadKind::Dd(DdParams {
        device: dev_name.to_owned(),
        size: size_b,
        bs,
        conv,
        truncate_to,
        unlink: boolean(cx, t, "unlink")?.unwrap_or(false),
        start_when_used: None,
        file: match opt(t, "file") {
            Some(item) => Some(file_name(cx, &item)?),
            None => None,
        },
    }))
}

/// An optional `true`/`false` key.
fn boolean(cx: &Cx<'_>, t: &Table<'_>, key: &str) -> Res<Option<bool>> {
    match opt(t, key) {
        Some(item) => match item.node.val {
            Val::Bool(b) => Ok(Some(b)),
            _ => Err(item.expected(cx, "true or false")),
        },
        None => Ok(None),
    }
}

/// An mmap workload's keys.
fn mmap(cx: &Cx<'_>, t: &Table<'_>, devices: &[BlockDevice]) -> Res<WorkloadKind> {
    let (dev, size) = file_on_device(cx, t, devices, "the file is on")?;
    if size / 4096 > u64::from(u32::MAX / 2) {
        let item = opt(t, "size").expect("file_on_device read it");
        return Err(item.fail(
            cx,
            format!("a mapping of {size} bytes is larger than mmsim's address spaces"),
        ));
    }
    let access = match opt(t, "access") {
        Some(item) => match choice(cx, &item, &["read", "write"])? {
            "write" => MmapAccess::Write,
            _ => MmapAccess::Read,
        },
        None => MmapAccess::Read,
    };
    let pattern = match opt(t, "pattern") {
        Some(item) => match choice(cx, &item, &["seq", "random"])? {
            "random" => AccessPattern::Random,
            _ => AccessPattern::Sequential,
        },
        None => AccessPattern::Sequential,
    };
    let passes = match opt(t, "passes") {
        Some(item) => u32_in(
            cx,
            &item,
            1,
            MAX_PASSES,
            "a number of passes, an integer from 1 to 1000000",
        )?,
        None => 1,
    };
    Ok(WorkloadKind::Mmap(MmapParams {
        device: dev.name.clone(),
        size,
        access,
        pattern,
        passes,
        msync: boolean(cx, t, "msync")?.unwrap_or(false),
    }))
}

/// A file name: non-empty, no '/', no control characters.
fn file_name(cx: &Cx<'_>, item: &Item<'_>) -> Res<String> {
    let s = string(cx, item, "a file name as a string")?;
    if s.is_empty() || s.contains('/') || s.chars().any(char::is_control) {
        return Err(item.fail(
            cx,
            format!("expected a file name without '/' or control characters, found \"{s}\""),
        ));
    }
    Ok(s.to_owned())
}

/// A time greater than zero.
fn positive_time(cx: &Cx<'_>, item: &Item<'_>, what: &str) -> Res<crate::engine::Nanos> {
    let d = time(cx, item)?;
    if d == 0 {
        return Err(item.fail(cx, format!("{what} must be greater than 0")));
    }
    Ok(d)
}

/// A parallelio workload's keys (MMTests' config-global-dhp__parallelio-memcachetest).
fn parallelio<'a>(
    cx: &Cx<'_>,
    t: &Table<'a>,
    ram: u64,
    devices: &[BlockDevice],
) -> Res<(WorkloadKind, MemSource<'a>, u64)> {
    let dev_item = opt(t, "device").ok_or_else(|| {
        t.missing(
            cx,
            "device",
            "the name of the [[device]] dd writes largefile to",
        )
    })?;
    let dev_name = string(cx, &dev_item, "a device name as a string")?;
    let Some(dev) = devices.iter().find(|d| d.name == dev_name) else {
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        let e = dev_item.fail(cx, format!("no [[device]] named \"{dev_name}\""));
        return Err(with_suggestion(e, nearest(dev_name, &names)));
    };
    if dev.filesystem == Filesystem::Raw {
        return Err(dev_item.fail(
            cx,
            format!("device \"{dev_name}\" has no filesystem to hold a file"),
        ));
    }
    let mem_total: u64 = crate::mm::page_alloc::build_zones(ram / PAGE)
        .iter()
        .map(|z| z.managed_pages)
        .sum::<u64>()
        * PAGE;
    // memcachetest's keys, with its defaults; the pool defaults to MEMCACHED_MEMPOOL,
    // 4/5 of MemTotal.
    let (mc, src, pool) = memcachetest(cx, t, ram)?;
    let pool = if opt(t, "pool").is_some() {
        pool
    } else {
        mem_total / 5 * 4 / PAGE * PAGE
    };
    let WorkloadKind::Memcachetest(MemcachetestParams {
        value_size,
        threads,
        ..
    }) = mc
    else {
        unreachable!("memcachetest() builds a memcachetest")
    };
    let duration = match opt(t, "duration") {
        Some(item) => positive_time(cx, &item, "memcachetest's run time")?,
        None => 200 * 1_000_000_000,
    };
    let iterations = match opt(t, "iterations") {
        Some(item) => u32_in(cx, &item, 1, 1000, "an iteration count from 1 to 1000")?,
        None => 5,
    };
    let steps = match opt(t, "steps") {
        Some(item) => {
            if opt(t, "increments").is_some() {
                return Err(item.fail(cx, "give either steps or increments, not both"));
            }
            let Val::Array(elems) = &item.node.val else {
                return Err(item.expected(cx, "an array of dd sizes, e.g. [0, \"1G\", \"2G\"]"));
            };
            let mut steps = Vec::new();
            for (i, n) in elems.iter().enumerate() {
                let elem = Item {
                    node: n,
                    path: format!("{}[{i}]", item.path),
                    key_span: item.key_span,
                };
                let b = size(cx, &elem, SizeKind::Size, None)?;
                if b % (1 << 20) != 0 || b > dev.size {
                    return Err(elem.fail(
                        cx,
                        format!("expected a dd size of whole MiB that fits on \"{dev_name}\" ({} bytes), found {b} bytes", dev.size),
                    ));
                }
                steps.push(b);
            }
            steps
        }
        None => {
            let increments = match opt(t, "increments") {
                Some(item) => u32_in(cx, &item, 1, 100, "an IO step count from 1 to 100")?,
                None => 3,
            };
            let steps = ParallelioParams::mmtests_steps(mem_total, pool, increments);
            let largest = steps.iter().copied().max().unwrap_or(0);
            if largest > dev.size {
                return Err(dev_item.fail(cx, format!("the largest IO step ({largest} bytes) is larger than the filesystem on \"{dev_name}\" ({} bytes)", dev.size)));
            }
            steps
        }
    };
    let warmup = match opt(t, "warmup") {
        Some(item) => match item.node.val {
            Val::Bool(b) => b,
            _ => return Err(item.expected(cx, "true or false")),
        },
        None => true,
    };
    let kind = WorkloadKind::Parallelio(ParallelioParams {
        device: dev_name.to_owned(),
        pool,
        value_size,
        threads,
        duration,
        iterations,
        steps,
        warmup,
    });
    Ok((kind, src, pool))
}
