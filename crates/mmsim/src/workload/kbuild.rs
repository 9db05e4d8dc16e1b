//! `kbuild`: `make -jN` of a kernel tree on a device, as the memory manager sees it
//! (`kernel-memcg.md` §9). Each of the N job slots takes the next compile unit and runs a
//! short-lived compiler process for it:
//! - exec maps the compiler's text (a file shared by every build on the device) and faults
//!   in its hot part;
//! - it reads the unit's source file and a draw of the tree's hot headers through the page
//!   cache (each opened and closed: dentries and inodes come and go);
//! - it computes (user time, log-normal) in slices over its heap (anonymous memory,
//!   log-normal in size), which grows through the first half and is read again in every
//!   slice, so a page reclaim swapped out faults back in;
//! - it writes its object file (dirty page cache) and exits, freeing its heap.
//!
//! When every unit is compiled, one slot links: each directory's objects are read into its
//! `built-in.o`, then every `built-in.o` into `vmlinux` by a linker with a large heap. With
//! `repeat`, `make clean` deletes the outputs and the build starts again.
//!
//! The tree's shape is the era's (3.0-3.10 trees, `kernel-memcg.md` §9); the figures below
//! that no source gives are marked as estimates.

use super::{
    access, access_range_now, access_slow, enter, exit, killed, uniform_k, CpuDebt, Phase,
};
use crate::calibration::{
    COPY_PAGE_NS, KBUILD_COMPILE_SIGMA, OPEN_CLOSE_NS, PAGE_SIZE, TOUCH_PAGE_NS,
};
use crate::engine::Nanos;
use crate::mm::memory::{self, Mm, VM_BRK, VM_EXEC};
use crate::mm::page::Pfn;
use crate::mm::page_writeback::{balance_dirty_pages_ratelimited_nr, DirtyTask};
use crate::mm::readahead::{read_page, RaState};
use crate::mm::{filemap, fork, namei, Kernel, World};
use crate::scenario::KbuildParams;
use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

/// Mean size of a `.c` file: 343 MB in 18,600 files of a 3.10 tree (`kernel-memcg.md` §9).
pub const SOURCE_BYTES: u64 = 18 << 10;
/// The hot headers (`include/linux`, `arch/x86/include`): ~3,900 files, ~20 MB (§9).
pub const HOT_HEADERS: u64 = 3900;
pub const HEADER_BYTES: u64 = 5 << 10;
/// Headers one compile reads: 100-300 (§9); the middle.
const HEADERS_PER_UNIT: u64 = 200;
/// The compiler binary: 10-20 MB (§9, estimate); the middle.
const CC1_BYTES: u64 = 15 << 20;
/// Share of the compiler's text one compile faults in. Estimate.
const CC1_HOT_SHARE: u64 = 4;
/// Median compiler heap: 25-60 MB typical (§9, estimate), log-normal with this σ, which
/// puts one compile in a hundred above ~200 MB (§9's tail).
const HEAP_MEDIAN: f64 = 32.0 * 1048576.0;
const HEAP_SIGMA: f64 = 0.8;
pub const HEAP_MAX: u64 = 256 << 20;
/// Slices of a compile's computing, and how many of the first its heap grows through.
/// Estimate: cc1 parses and lowers a unit (allocating) and then runs its passes over the
/// IR it built; every slice reads the whole heap again.
const COMPILE_SLICES: u32 = 8;
const GROW_SLICES: u32 = 4;
/// Median object file: "tens of KB to ~1 MB" (§9); log-normal.
const OBJECT_MEDIAN: f64 = 40.0 * 1024.0;
const OBJECT_SIGMA: f64 = 1.0;
/// Units per directory (one `built-in.o` each). Estimate: ~2,000 objects in ~50
/// directories of a defconfig.
const UNITS_PER_DIR: u32 = 40;
/// The final link's heap (`ld` on vmlinux; "~100-300 MB in later kernels, smaller in 3.x",
/// §9).
const LINK_HEAP: u64 = 100 << 20;

/// A whole linux-2.6.30 tree, the one MMTests' stress-highalloc copied until 2012-10:
/// about 27,000 files and 330 MB. Estimate: the 3.10 tree `kernel-memcg.md` §9 measured
/// (43,100 files, 505 MB) scaled by source lines, about 11 M in mid-2009 against 17 M
/// (the kernel passed 10 M lines in October 2008 and 15 M in January 2012, H Online's
/// Kernel Log).
pub const TREE_2_6_30_FILES: u64 = 27_000;
pub const TREE_2_6_30_BYTES: u64 = 330 << 20;

/// One tree on its device: the files, and how far the current build has got.
#[derive(Debug)]
pub struct Tree {
    /// The device.
    pub bdi: usize,
    /// The tree's name (its files are named after it).
    pub name: String,
    /// One source file per compile unit.
    pub sources: Vec<usize>,
    /// The hot headers.
    pub headers: Vec<usize>,
    /// The rest of a whole tree, which no build reads (other architectures, drivers not
    /// configured, documentation): copied and deleted with the tree.
    pub others: Vec<usize>,
    /// The compiler binary (shared by the trees of a device).
    pub cc1: usize,
    /// The next unit to compile.
    next: u32,
    /// Units compiled in this build.
    done: u32,
    /// The build that is under way (0 = the first).
    build: u32,
    /// The build's link has finished.
    linked: bool,
    /// Job slots that have finished their part of the build, and the CPU time they used
    /// in it.
    slots_done: u32,
    user: Nanos,
    system: Nanos,
}

/// What a kbuild's builds took, as `/usr/bin/time` reports a `make` (children included).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KbuildStats {
    /// Each finished build: (elapsed, user, system) nanoseconds.
    pub builds: Vec<(Nanos, Nanos, Nanos)>,
    /// Units compiled in finished builds.
    pub units: u64,
}

/// The files of a tree of `units` compile units on device `bdi`, there at boot and not
/// cached; with `whole`, also the rest of a linux-2.6.30 tree. The compiler binary is
/// created with the device's first tree.
pub fn create_tree(
    w: &World,
    name: &str,
    bdi: usize,
    units: u32,
    whole: bool,
) -> Rc<RefCell<Tree>> {
    let tree = empty_tree(w, name, bdi);
    let sources = (0..units)
        .map(|u| super::cat::create_file(w, &source_name(name, u), bdi, SOURCE_BYTES))
        .collect();
    let headers = (0..HOT_HEADERS)
        .map(|h| super::cat::create_file(w, &header_name(name, h), bdi, HEADER_BYTES))
        .collect();
    let others = if whole {
        let (n, bytes) = other_files(units);
        (0..n)
            .map(|i| super::cat::create_file(w, &other_name(name, i), bdi, bytes))
            .collect()
    } else {
        Vec::new()
    };
    {
        let mut t = tree.borrow_mut();
        t.sources = sources;
        t.headers = headers;
        t.others = others;
    }
    tree
}

/// A tree of no files yet on `bdi` (the compiler binary found or created).
fn empty_tree(w: &World, name: &str, bdi: usize) -> Rc<RefCell<Tree>> {
    let cc1_name = "usr-libexec-gcc-cc1";
    let existing = namei::file_on_disk(&w.borrow(), bdi, cc1_name);
    let cc1 = existing.unwrap_or_else(|| super::cat::create_file(w, cc1_name, bdi, CC1_BYTES));
    Rc::new(RefCell::new(Tree {
        bdi,
        name: name.to_string(),
        sources: Vec::new(),
        headers: Vec::new(),
        others: Vec::new(),
        cc1,
        next: 0,
        done: 0,
        build: 0,
        linked: false,
        slots_done: 0,
        user: 0,
        system: 0,
    }))
}

fn source_name(tree: &str, u: u32) -> String {
    format!("{tree}/src{u}.c")
}

fn header_name(tree: &str, h: u64) -> String {
    format!("{tree}/include{h}.h")
}

fn other_name(tree: &str, i: u64) -> String {
    format!("{tree}/other{i}")
}

/// The files of a whole 2.6.30 tree besides `units` sources and the hot headers: (count,
/// bytes each).
fn other_files(units: u32) -> (u64, u64) {
    let n = TREE_2_6_30_FILES.saturating_sub(units as u64 + HOT_HEADERS);
    let built = units as u64 * SOURCE_BYTES + HOT_HEADERS * HEADER_BYTES;
    (n, TREE_2_6_30_BYTES.saturating_sub(built) / n.max(1))
}

/// `cp -r` of tree `src` to a new tree `name` on the same device: every file read through
/// the page cache and written anew, sources, headers and the rest, in that order. The new
/// tree is `dst` (empty when called), which holds what was copied if the task must exit
/// midway. False if it must.
pub async fn copy_tree(w: &World, src: &Rc<RefCell<Tree>>, dst: &Rc<RefCell<Tree>>) -> bool {
    let (bdi, name, sources, headers, others) = {
        let s = src.borrow();
        (
            s.bdi,
            dst.borrow().name.clone(),
            s.sources.clone(),
            s.headers.clone(),
            s.others.clone(),
        )
    };
    let mut debt = CpuDebt::default();
    let files = sources
        .iter()
        .enumerate()
        .map(|(u, &ino)| (ino, source_name(&name, u as u32), 0))
        .chain(
            headers
                .iter()
                .enumerate()
                .map(|(h, &ino)| (ino, header_name(&name, h as u64), 1)),
        )
        .chain(
            others
                .iter()
                .enumerate()
                .map(|(i, &ino)| (ino, other_name(&name, i as u64), 2)),
        );
    for (ino, new, kind) in files {
        if killed(w) || !read_whole(w, ino, &mut debt).await {
            return false;
        }
        let bytes = w.borrow().inodes[ino].size_pages * PAGE_SIZE;
        let Some(copy) = write_file(w, bdi, &new, bytes, &mut debt).await else {
            return false;
        };
        {
            let mut t = dst.borrow_mut();
            match kind {
                0 => t.sources.push(copy),
                1 => t.headers.push(copy),
                _ => t.others.push(copy),
            }
        }
        debt.maybe_flush(w).await;
    }
    debt.flush(w).await;
    true
}

/// A new empty tree `name` on `src`'s device, for [`copy_tree`].
pub fn new_copy(w: &World, src: &Rc<RefCell<Tree>>, name: &str) -> Rc<RefCell<Tree>> {
    let bdi = src.borrow().bdi;
    empty_tree(w, name, bdi)
}

/// A log-normal draw with median `median` and log-σ `sigma`, from the run's RNG
/// (Box-Muller on two uniform draws).
pub fn lognormal(k: &mut Kernel, median: f64, sigma: f64) -> f64 {
    const N: u64 = 1 << 53;
    let u1 = (uniform_k(k, N) + 1) as f64 / N as f64;
    let u2 = uniform_k(k, N) as f64 / N as f64;
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    median * (sigma * z).exp()
}

/// Read file `ino` whole through the page cache, opened and closed. False if the task
/// must exit.
pub(super) async fn read_whole(w: &World, ino: usize, debt: &mut CpuDebt) -> bool {
    let Some(f) = super::cat::open_file(w, ino).await else {
        return false;
    };
    debt.system(OPEN_CLOSE_NS);
    let pages = w.borrow().inodes[ino].size_pages;
    let mut ra = RaState::default();
    let mut ok = true;
    for i in 0..pages {
        if read_page(w, ino, &mut ra, i, pages - i).await.is_err() {
            ok = false;
            break;
        }
        debt.system(COPY_PAGE_NS);
    }
    namei::close(&mut w.borrow_mut(), f);
    ok
}

/// Write a new file `name` of `bytes` (rounded up to pages) on `bdi`, replacing one of the
/// name. Returns its inode, None if the task must exit.
pub(super) async fn write_file(
    w: &World,
    bdi: usize,
    name: &str,
    bytes: u64,
    debt: &mut CpuDebt,
) -> Option<usize> {
    let f = super::dd::open_trunc(w, bdi, name).await.ok()?;
    debt.system(OPEN_CLOSE_NS);
    let ino = f.ino;
    let mut task = DirtyTask::default();
    let mut ok = true;
    for index in 0..bytes.div_ceil(PAGE_SIZE) {
        match filemap::write_page(w, ino, index, &mut task).await {
            Ok((cpu, counts)) => {
                debt.system(cpu);
                if counts {
                    balance_dirty_pages_ratelimited_nr(w, ino, &mut task, 1).await;
                }
            }
            Err(_) => {
                ok = false;
                break;
            }
        }
    }
    namei::close(&mut w.borrow_mut(), f);
    ok.then_some(ino)
}

/// A process of the build (`fork` + `exec`): its kernel stack and its own address space,
/// owned by the job slot's task for the OOM killer.
struct Process {
    mm: usize,
    stack: Pfn,
}

/// Fork a new process; None if the job slot must exit.
async fn fork_process(w: &World, name: &str) -> Option<Process> {
    let stack = fork::alloc_thread_info(w).await.ok()?;
    let mut k = w.borrow_mut();
    let task = k.sched.current();
    k.mms.push(Mm {
        name: name.to_string(),
        task: Some(task),
        ..Default::default()
    });
    Some(Process {
        mm: k.mms.len() - 1,
        stack,
    })
}

/// The process exits: its memory and its stack go, and its faults count towards the make
/// (`time` reports children's rusage).
fn exit_process(k: &mut Kernel, p: Process, parent: usize) {
    memory::exit_mmap(k, p.mm);
    fork::free_thread_info(k, p.stack);
    let (min, maj) = (k.mms[p.mm].min_flt, k.mms[p.mm].maj_flt);
    k.mms[parent].min_flt += min;
    k.mms[parent].maj_flt += maj;
}

/// Touch `pages` new anonymous pages of `mm` (a heap). False if the task must exit.
async fn touch_heap(w: &World, mm: usize, pages: u32, debt: &mut CpuDebt) -> bool {
    let start = w.borrow_mut().mms[mm].mmap_anon(pages, VM_BRK);
    touch_new(w, mm, start..start + pages, debt).await
}

/// Write pages `vpns` of `mm` for the first time. False if the task must exit.
async fn touch_new(w: &World, mm: usize, vpns: Range<u32>, debt: &mut CpuDebt) -> bool {
    let mut vpn = vpns.start;
    while vpn < vpns.end {
        let (next, pending) = touch_new_now(&mut w.borrow_mut(), mm, vpn..vpns.end, debt);
        match pending {
            Pending::Nothing => return true,
            Pending::Flush => debt.flush(w).await,
            Pending::Access => {
                if access_slow(w, mm, next, true, debt).await.is_err() {
                    return false;
                }
                debt.user(TOUCH_PAGE_NS);
                debt.maybe_flush(w).await;
                vpn = next + 1;
                continue;
            }
        }
        vpn = next;
    }
    true
}

/// What [`touch_new_now`] left to await.
enum Pending {
    Nothing,
    /// The access to the page it stopped at.
    Access,
    /// The charge of a quantum owed, before the page it stopped at.
    Flush,
}

/// [`touch_new`]'s pages in one borrow as far as none needs a wait: each page's access
/// ([`access_range_now`]), its user work, and the charge of a quantum owed
/// ([`CpuDebt::flush_now`]). Returns where it stopped and what is left to await there.
fn touch_new_now(
    k: &mut Kernel,
    mm: usize,
    vpns: Range<u32>,
    debt: &mut CpuDebt,
) -> (u32, Pending) {
    for vpn in vpns.clone() {
        if access_range_now(k, mm, vpn..vpn + 1, true, debt) == vpn {
            return (vpn, Pending::Access);
        }
        debt.user(TOUCH_PAGE_NS);
        if debt.due() && !debt.flush_now(k) {
            return (vpn + 1, Pending::Flush);
        }
    }
    (vpns.end, Pending::Nothing)
}

/// Read pages `vpns` of `mm` again, as far as they need no wait in one go. False if the
/// task must exit.
async fn reread(w: &World, mm: usize, vpns: Range<u32>, debt: &mut CpuDebt) -> bool {
    let mut vpn = vpns.start;
    while vpn < vpns.end {
        vpn = access_range_now(&mut w.borrow_mut(), mm, vpn..vpns.end, false, debt);
        if vpn < vpns.end {
            if access_slow(w, mm, vpn, false, debt).await.is_err() {
                return false;
            }
            vpn += 1;
        }
        debt.maybe_flush(w).await;
    }
    true
}

/// Compile unit `u` of the tree in a new process: exec, read, allocate, compute, write
/// the object, exit. False if the job slot must exit.
async fn compile(
    w: &World,
    tree: &Rc<RefCell<Tree>>,
    u: u32,
    parent: usize,
    compile_cpu: Nanos,
) -> bool {
    let (bdi, cc1, source, name, header_count) = {
        let t = tree.borrow();
        (
            t.bdi,
            t.cc1,
            t.sources[u as usize],
            t.name.clone(),
            t.headers.len() as u64,
        )
    };
    let Some(process) = fork_process(w, "cc1").await else {
        return false;
    };
    let mm = process.mm;
    let mut debt = CpuDebt::default();
    let ok = 'run: {
        // exec: the compiler's text, mapped and its hot part faulted in.
        let Some(text) = super::cat::open_file(w, cc1).await else {
            break 'run false;
        };
        let pages = (CC1_BYTES / PAGE_SIZE) as u32;
        let start = memory::mmap_file(&mut w.borrow_mut(), mm, cc1, 0, pages, VM_EXEC);
        namei::close(&mut w.borrow_mut(), text);
        for vpn in start..start + pages / CC1_HOT_SHARE as u32 {
            if access(w, mm, vpn, false, &mut debt).await.is_err() {
                break 'run false;
            }
        }
        if !read_whole(w, source, &mut debt).await {
            break 'run false;
        }
        for _ in 0..HEADERS_PER_UNIT {
            let h = uniform_k(&mut w.borrow_mut(), header_count) as usize;
            let ino = tree.borrow().headers[h];
            if !read_whole(w, ino, &mut debt).await {
                break 'run false;
            }
        }
        let (heap, cpu, object) = {
            let mut k = w.borrow_mut();
            let heap =
                (lognormal(&mut k, HEAP_MEDIAN, HEAP_SIGMA) as u64).clamp(PAGE_SIZE, HEAP_MAX);
            let cpu = lognormal(&mut k, compile_cpu as f64, KBUILD_COMPILE_SIGMA) as Nanos;
            let object = lognormal(&mut k, OBJECT_MEDIAN, OBJECT_SIGMA) as u64;
            (heap, cpu, object.clamp(PAGE_SIZE, 1 << 20))
        };
        // cc1 works on its IR for the whole compile: the heap grows through the first
        // half (parsing, lowering) and every slice of the computing re-reads what is there.
        let pages = (heap / PAGE_SIZE) as u32;
        let start = w.borrow_mut().mms[mm].mmap_anon(pages, VM_BRK);
        let mut grown = 0;
        for s in 1..=COMPILE_SLICES {
            let size = pages * s.min(GROW_SLICES) / GROW_SLICES;
            if !reread(w, mm, start..start + grown, &mut debt).await
                || !touch_new(w, mm, start + grown..start + size, &mut debt).await
            {
                break 'run false;
            }
            grown = size;
            debt.user(cpu / COMPILE_SLICES as Nanos);
            debt.flush(w).await;
        }
        let obj_name = format!("{name}/obj{u}.o");
        write_file(w, bdi, &obj_name, object, &mut debt)
            .await
            .is_some()
    };
    debt.flush(w).await;
    exit_process(&mut w.borrow_mut(), process, parent);
    ok && !killed(w)
}

/// The links once every unit is compiled: each directory's objects into its `built-in.o`,
/// then all of those into `vmlinux` by a linker with [`LINK_HEAP`]. False if the slot must
/// exit.
async fn link(w: &World, tree: &Rc<RefCell<Tree>>, parent: usize) -> bool {
    let (bdi, name, units) = {
        let t = tree.borrow();
        (t.bdi, t.name.clone(), t.sources.len() as u32)
    };
    let Some(process) = fork_process(w, "ld").await else {
        return false;
    };
    let mm = process.mm;
    let mut debt = CpuDebt::default();
    let ok = 'run: {
        let mut builtins = Vec::new();
        for dir in 0..units.div_ceil(UNITS_PER_DIR) {
            let mut bytes = 0;
            for u in dir * UNITS_PER_DIR..((dir + 1) * UNITS_PER_DIR).min(units) {
                let obj = format!("{name}/obj{u}.o");
                let ino = namei::file_on_disk(&w.borrow(), bdi, &obj);
                if let Some(ino) = ino {
                    bytes += w.borrow().inodes[ino].size_pages * PAGE_SIZE;
                    if !read_whole(w, ino, &mut debt).await {
                        break 'run false;
                    }
                }
            }
            let out = format!("{name}/dir{dir}/built-in.o");
            match write_file(w, bdi, &out, bytes, &mut debt).await {
                Some(ino) => builtins.push((ino, bytes)),
                None => break 'run false,
            }
        }
        if !touch_heap(w, mm, (LINK_HEAP / PAGE_SIZE) as u32, &mut debt).await {
            break 'run false;
        }
        let mut total = 0;
        for &(ino, bytes) in &builtins {
            total += bytes;
            if !read_whole(w, ino, &mut debt).await {
                break 'run false;
            }
        }
        write_file(w, bdi, &format!("{name}/vmlinux"), total / 2, &mut debt)
            .await
            .is_some()
    };
    debt.flush(w).await;
    exit_process(&mut w.borrow_mut(), process, parent);
    ok && !killed(w)
}

/// `rm -rf` of the tree: its sources, headers, the rest and its outputs (the compiler
/// stays). False if the task must exit.
pub async fn delete_tree(w: &World, tree: &Rc<RefCell<Tree>>) -> bool {
    if !make_clean(w, tree).await {
        return false;
    }
    let (bdi, names) = {
        let t = tree.borrow();
        let k = w.borrow();
        let files = t.sources.iter().chain(&t.headers).chain(&t.others);
        (
            t.bdi,
            files
                .map(|&ino| k.inodes[ino].name.clone())
                .collect::<Vec<_>>(),
        )
    };
    for n in names {
        if namei::unlink(w, bdi, &n).await.is_err() {
            return false;
        }
    }
    true
}

/// `make clean`: every output of the build deleted.
async fn make_clean(w: &World, tree: &Rc<RefCell<Tree>>) -> bool {
    let (bdi, name, units) = {
        let t = tree.borrow();
        (t.bdi, t.name.clone(), t.sources.len() as u32)
    };
    let mut names: Vec<String> = (0..units).map(|u| format!("{name}/obj{u}.o")).collect();
    names.extend((0..units.div_ceil(UNITS_PER_DIR)).map(|d| format!("{name}/dir{d}/built-in.o")));
    names.push(format!("{name}/vmlinux"));
    for n in names {
        if namei::unlink(w, bdi, &n).await.is_err() {
            return false;
        }
    }
    true
}

/// Spawn job slots `from..jobs` of `make -j{jobs}` on `tree` as tasks called `name`,
/// counted on task slot `idx` (whose mm names the last as its owner), each starting
/// `delay` from now. Returns their tasks.
pub fn spawn_jobs(
    w: &World,
    idx: usize,
    name: &str,
    tree: &Rc<RefCell<Tree>>,
    p: &KbuildParams,
    from: u32,
    delay: Nanos,
) -> Vec<crate::engine::TaskId> {
    (from..p.jobs)
        .map(|job| {
            let (w2, tree, p) = (w.clone(), tree.clone(), p.clone());
            let t = w.borrow_mut().sched.spawn(name, async move {
                super::delay_start(&w2, idx, delay).await;
                enter(&mut w2.borrow_mut(), idx, Phase::Running, p.units as u64);
                job_slot(w2, idx, tree, p, job).await;
            });
            w.borrow_mut().mms[idx].task = Some(t);
            t
        })
        .collect()
}

/// One job slot of `make -jN` on `tree`: compile units until none is left; the slot that
/// compiles the last one links. Slot 0 reports each build once every slot is done with it
/// and, with `repeat`, runs `make clean` and starts the next.
pub async fn job_slot(w: World, idx: usize, tree: Rc<RefCell<Tree>>, p: KbuildParams, slot: u32) {
    let me = w.borrow().sched.current();
    let mut started = w.borrow().sched.now();
    loop {
        let build = tree.borrow().build;
        let (u0, s0) = w.borrow().sched.task_times(me);
        loop {
            if killed(&w) {
                return exit(&w, idx, idx);
            }
            let u = {
                let mut t = tree.borrow_mut();
                if t.next as usize >= t.sources.len() {
                    break;
                }
                t.next += 1;
                t.next - 1
            };
            if !compile(&w, &tree, u, idx, p.compile_cpu).await {
                return exit(&w, idx, idx);
            }
            let last = {
                let mut t = tree.borrow_mut();
                t.done += 1;
                t.done as usize == t.sources.len()
            };
            super::page_done(&w, idx);
            if last {
                if !link(&w, &tree, idx).await {
                    return exit(&w, idx, idx);
                }
                tree.borrow_mut().linked = true;
            }
        }
        {
            let (u1, s1) = w.borrow().sched.task_times(me);
            let mut t = tree.borrow_mut();
            t.slots_done += 1;
            t.user += u1 - u0;
            t.system += s1 - s0;
        }
        // make waits for every job of the build.
        let settled = |t: &Tree| t.build != build || (t.linked && t.slots_done == p.jobs);
        while !settled(&tree.borrow()) {
            if killed(&w) {
                return exit(&w, idx, idx);
            }
            crate::engine::sleep(&w, BUILD_POLL).await;
        }
        if slot == 0 {
            let now = w.borrow().sched.now();
            let (user, system, units) = {
                let t = tree.borrow();
                (t.user, t.system, t.sources.len() as u64)
            };
            {
                let mut k = w.borrow_mut();
                let st = super::stats(&mut k, idx);
                let kb = st.kbuild.get_or_insert_with(KbuildStats::default);
                kb.builds.push((now - started, user, system));
                kb.units += units;
            }
            if !p.repeat {
                super::finished(&mut w.borrow_mut(), idx);
                return;
            }
            if !make_clean(&w, &tree).await {
                return exit(&w, idx, idx);
            }
            {
                let mut t = tree.borrow_mut();
                t.next = 0;
                t.done = 0;
                t.build = build + 1;
                t.linked = false;
                t.slots_done = 0;
                t.user = 0;
                t.system = 0;
            }
            enter(&mut w.borrow_mut(), idx, Phase::Running, units);
            started = w.borrow().sched.now();
        } else {
            if !p.repeat {
                return;
            }
            while tree.borrow().build == build {
                if killed(&w) {
                    return exit(&w, idx, idx);
                }
                crate::engine::sleep(&w, BUILD_POLL).await;
            }
        }
    }
}

/// How often a job slot that has run out of units looks whether the build is over (a
/// model of `make`'s `wait` for its children).
const BUILD_POLL: Nanos = 100 * crate::engine::MSEC;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::boot_for_test;

    /// First-touching a heap in one borrow ([`touch_new`]) leaves what touching it page by
    /// page does (the access, a page's user work, the charge of a quantum owed, each
    /// awaited): the same counters, clock, CPU accounting and page tables, on a machine
    /// short enough of memory that faults reclaim and swap, with another task's timers in
    /// the way of charging on the spot.
    #[test]
    fn touch_new_does_what_access_does_page_by_page() {
        fn run(batched: bool) -> String {
            let w = boot_for_test(16, 32, "3.9");
            let mm = super::super::new_task(&mut w.borrow_mut(), "cc1");
            super::super::tests::spawn_ticker(&w, 37_000, 400_000);
            let out = Rc::new(RefCell::new(String::new()));
            let (w2, o) = (w.clone(), out.clone());
            crate::sim::run_task(&w, 600 * crate::engine::SEC, async move {
                let pages = 6 * 1024;
                let start = w2.borrow_mut().mms[mm].mmap_anon(pages, 0);
                let mut debt = CpuDebt::default();
                for chunk in 0..6 {
                    let r = start + chunk * 1024..start + (chunk + 1) * 1024;
                    if batched {
                        assert!(touch_new(&w2, mm, r, &mut debt).await);
                    } else {
                        for vpn in r {
                            access(&w2, mm, vpn, true, &mut debt).await.unwrap();
                            debt.user(TOUCH_PAGE_NS);
                            debt.maybe_flush(&w2).await;
                        }
                    }
                    let k = w2.borrow();
                    let ptes: Vec<_> = k.mms[mm].vmas.iter().map(|v| &v.ptes).collect();
                    o.borrow_mut().push_str(&format!(
                        "{:?} {:?} {:?} {} {:?}\n",
                        k.proc_vmstat(),
                        k.accesses,
                        k.sched.cpu_times(),
                        k.sched.now(),
                        ptes
                    ));
                }
            });
            out.take()
        }
        let (batched, by_page) = (run(true), run(false));
        assert_eq!(batched.lines().count(), 6, "the task ran to its end");
        assert_eq!(batched, by_page);
        let last = batched.lines().last().unwrap();
        assert!(
            last.contains("(\"pswpout\"") && !last.contains("(\"pswpout\", 0)"),
            "pages were swapped out"
        );
    }

    #[test]
    fn lognormal_draws_have_the_median_asked_for() {
        let w = boot_for_test(64, 0, "3.9");
        let mut k = w.borrow_mut();
        let mut v: Vec<f64> = (0..4001).map(|_| lognormal(&mut k, 10.0, 0.8)).collect();
        v.sort_by(f64::total_cmp);
        let median = v[2000];
        assert!((9.0..11.0).contains(&median), "{median}");
        // σ = 0.8: the 84th percentile is e^0.8 ≈ 2.2 times the median.
        let p84 = v[(4001.0 * 0.8413) as usize];
        assert!((1.9..2.6).contains(&(p84 / median)), "{}", p84 / median);
    }
}
