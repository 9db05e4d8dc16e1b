//! glibc's `malloc`, as far as it decides which pages of a program's heap are written: the
//! main arena's top chunk, grown by `sbrk`, and what `calloc` clears (glibc 2.x
//! `malloc/malloc.c`: `_int_malloc`, `sysmalloc`, `__libc_calloc`; defaults from
//! `mallopt(3)`). Only requests below the mmap threshold, served from the top chunk, are
//! modelled: the heap of a program that allocates and never frees.

use crate::calibration::PAGE_SIZE as PAGE;
use std::ops::Range;

/// `SIZE_SZ` on 64-bit: a chunk's size field.
const SIZE_SZ: u64 = 8;
/// What comes before a chunk's memory (`prev_size`, `size`), mmap'd chunks included.
pub const CHUNK_HEADER: u64 = 2 * SIZE_SZ;
/// `MALLOC_ALIGN_MASK`: chunks are 16-byte aligned.
const ALIGN_MASK: u64 = 15;
/// `MINSIZE`: the smallest chunk, and what must stay of the top chunk after a split.
const MINSIZE: u64 = 32;
/// `M_TOP_PAD`'s default: what `sysmalloc` asks of `sbrk` beyond the request (the same
/// pad THP's view of a growing heap uses).
pub const TOP_PAD: u64 = crate::mm::memory::BRK_TOP_PAD_PAGES as u64 * PAGE;
/// `M_MMAP_THRESHOLD`'s default: larger requests get an mmap of their own (the threshold
/// rises only when such a chunk is freed).
pub const MMAP_THRESHOLD: u64 = 128 << 10;

/// The main arena of a heap that only grows: its top chunk, at byte offsets from the
/// heap's start (`sbrk_base`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MainArena {
    /// Where the top chunk begins.
    top: u64,
    /// The break: the end of what `sbrk` has given.
    end: u64,
}

/// One `calloc`'s chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Calloc {
    /// The memory returned to the program.
    pub mem: Range<u64>,
    /// What `calloc` cleared with `memset`: all of it, unless `sysmalloc` grew the heap for
    /// it, when only the part that was already top chunk (memory `sbrk` gave earlier, which
    /// may have been used) is cleared and the new part is known to be zero.
    pub cleared: Range<u64>,
}

impl MainArena {
    /// The break: bytes of heap `sbrk` has given so far.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// `calloc(bytes)` served from the top chunk.
    pub fn calloc(&mut self, bytes: u64) -> Calloc {
        debug_assert!(bytes < MMAP_THRESHOLD, "an mmap'd chunk is not modelled");
        // request2size
        let nb = ((bytes + SIZE_SZ + ALIGN_MASK) & !ALIGN_MASK).max(MINSIZE);
        let old_top_size = self.end - self.top;
        if old_top_size < nb + MINSIZE {
            // sysmalloc: the shortfall, the pad and a MINSIZE, in whole pages, contiguous
            // with the old top.
            let grow = (nb + TOP_PAD + MINSIZE - old_top_size).div_ceil(PAGE) * PAGE;
            self.end += grow;
        }
        let p = self.top;
        self.top += nb;
        let mem = p + CHUNK_HEADER;
        // __libc_calloc: `csz - SIZE_SZ` bytes from `mem`, csz capped at the old top's size
        // when the chunk reached into fresh memory.
        let csz = nb.min(old_top_size);
        let cleared_end = (mem + csz).saturating_sub(SIZE_SZ).max(mem);
        Calloc {
            mem: mem..mem + bytes,
            cleared: mem..cleared_end.min(mem + bytes),
        }
    }
}

/// The pages (4 KiB, from the heap's start) that bytes `r` lie on.
pub fn pages(r: &Range<u64>) -> Range<u64> {
    if r.is_empty() {
        return 0..0;
    }
    r.start / PAGE..r.end.div_ceil(PAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_calloc_grows_the_heap_by_the_request_and_the_pad_and_clears_nothing() {
        let mut a = MainArena::default();
        let c = a.calloc(80_000);
        // 80,016-byte chunk + 128 KiB + 32, in pages.
        assert_eq!(
            a.end(),
            (80_016u64 + (128 << 10) + 32).div_ceil(4096) * 4096
        );
        assert_eq!(c.mem, 16..80_016);
        assert!(c.cleared.is_empty(), "all of it is fresh from sbrk");
    }

    #[test]
    fn a_calloc_the_top_chunk_holds_is_cleared_whole() {
        let mut a = MainArena::default();
        a.calloc(80_000);
        let end = a.end();
        let c = a.calloc(80_000);
        assert_eq!(a.end(), end, "the pad served it");
        assert_eq!(c.mem, 80_032..160_032);
        assert_eq!(c.cleared, c.mem);
    }

    #[test]
    fn a_calloc_past_the_top_chunk_clears_only_what_was_top_before() {
        let mut a = MainArena::default();
        a.calloc(80_000);
        a.calloc(80_000);
        let (top, end) = (160_032, a.end());
        let c = a.calloc(80_000);
        assert!(a.end() > end, "sbrk grew the heap");
        assert_eq!(c.mem.start, top + 16);
        // memset from mem for the old top's size less SIZE_SZ.
        assert_eq!(c.cleared, c.mem.start..top + 16 + (end - top) - 8);
        assert!(c.cleared.end < c.mem.end);
    }

    #[test]
    fn the_top_chunk_serves_a_request_only_while_a_minsize_remains() {
        // _int_malloc splits the top chunk when it holds the chunk and MINSIZE more.
        let nb = 80_016;
        let mut a = MainArena {
            top: 0,
            end: nb + 32,
        };
        let c = a.calloc(80_000);
        assert_eq!(a.end(), nb + 32, "no sbrk");
        assert_eq!(c.cleared, c.mem);
        let mut a = MainArena {
            top: 0,
            end: nb + 31,
        };
        let c = a.calloc(80_000);
        assert!(a.end() > nb + 31, "sysmalloc grew the heap");
        assert_eq!(c.cleared, c.mem, "it lay within the old top: cleared whole");
    }

    #[test]
    fn sbrk_asks_for_the_chunk_the_pad_and_a_minsize_in_whole_pages() {
        // An 81,904-byte chunk: with the pad and MINSIZE, 16 bytes past 52 pages.
        let mut a = MainArena::default();
        a.calloc(81_896);
        assert_eq!(a.end(), 53 * 4096);
    }

    #[test]
    fn the_pages_of_a_range_cover_its_first_and_last_bytes() {
        assert_eq!(pages(&(16..80_016)), 0..20);
        assert_eq!(pages(&(4096..8192)), 1..2);
        assert_eq!(pages(&(5..5)), 0..0);
    }
}
