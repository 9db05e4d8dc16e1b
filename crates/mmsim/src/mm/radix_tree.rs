//! The index of an address space's pages, offset -> frame, with a dirty tag per slot: what
//! `mapping->page_tree` (`lib/radix-tree.c`) and its `PAGECACHE_TAG_DIRTY` give the kernel,
//! for a file's page cache and for the swap cache (keyed by swap slot). Two levels, not a
//! tree: chunks of [`CHUNK`] slots, allocated when a page first lands in one and freed when
//! its last page leaves, so the index costs what the pages in it need and grows without
//! copying (a flat array or a hash table doubles, and holds both copies while it moves).
//! Writeback finds dirty pages by tag instead of reading every slot of the file.

use crate::mm::page::Pfn;

/// log2 of the slots in a chunk.
const SHIFT: u32 = 9;
/// Slots in a chunk.
const CHUNK: usize = 1 << SHIFT;
/// Tag words in a chunk.
const WORDS: usize = CHUNK / 64;

#[derive(Clone, Debug)]
struct Chunk {
    /// Frame number + 1 of each slot (0 = empty).
    slots: [u32; CHUNK],
    /// Dirty tags: set when the page is dirtied, cleared when it is cleaned or leaves. A tag
    /// may outlive the dirty bit (a page cleaned by a path that does not untag); lookups
    /// check the page itself.
    dirty: [u64; WORDS],
    /// Slots in use.
    used: u32,
}

/// One address space's index.
#[derive(Clone, Debug, Default)]
pub struct PageTree {
    chunks: Vec<Option<Box<Chunk>>>,
    /// Pages in the index.
    len: usize,
}

/// Chunk and slot of a page offset.
#[inline]
fn split(index: u64) -> (usize, usize) {
    ((index >> SHIFT) as usize, (index as usize) & (CHUNK - 1))
}

impl PageTree {
    /// Pages in the index.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the index holds no page.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn chunk(&self, c: usize) -> Option<&Chunk> {
        self.chunks.get(c).and_then(|ch| ch.as_deref())
    }

    #[inline]
    fn chunk_mut(&mut self, c: usize) -> Option<&mut Chunk> {
        self.chunks.get_mut(c).and_then(|ch| ch.as_deref_mut())
    }

    /// The page at `index`.
    #[inline]
    pub fn get(&self, index: u64) -> Option<Pfn> {
        let (c, s) = split(index);
        match self.chunk(c).map(|ch| ch.slots[s]) {
            Some(p) if p != 0 => Some(p - 1),
            _ => None,
        }
    }

    /// Put `pfn` in the empty slot `index`, untagged.
    pub fn insert(&mut self, index: u64, pfn: Pfn) {
        let (c, s) = split(index);
        if self.chunks.len() <= c {
            self.chunks.resize_with(c + 1, || None);
        }
        let ch = self.chunks[c].get_or_insert_with(|| {
            Box::new(Chunk {
                slots: [0; CHUNK],
                dirty: [0; WORDS],
                used: 0,
            })
        });
        debug_assert_eq!(ch.slots[s], 0, "page-cache slot {index} taken");
        ch.slots[s] = pfn + 1;
        ch.dirty[s / 64] &= !(1 << (s % 64));
        ch.used += 1;
        self.len += 1;
    }

    /// Put `new` in slot `index` in place of `old`, keeping the slot's tag
    /// (`radix_tree_replace_slot`, as page migration does it).
    pub fn replace(&mut self, index: u64, old: Pfn, new: Pfn) {
        let (c, s) = split(index);
        let ch = self
            .chunk_mut(c)
            .expect("replacing a page that is not cached");
        debug_assert_eq!(
            ch.slots[s],
            old + 1,
            "page-cache slot {index} holds another page"
        );
        ch.slots[s] = new + 1;
    }

    /// Empty slot `index`, which holds `pfn`, and its tag; a chunk left empty is freed.
    pub fn remove(&mut self, index: u64, pfn: Pfn) {
        let (c, s) = split(index);
        let ch = self
            .chunk_mut(c)
            .expect("removing a page that is not cached");
        debug_assert_eq!(
            ch.slots[s],
            pfn + 1,
            "page-cache slot {index} holds another page"
        );
        ch.slots[s] = 0;
        ch.dirty[s / 64] &= !(1 << (s % 64));
        ch.used -= 1;
        if ch.used == 0 {
            self.chunks[c] = None;
        }
        self.len -= 1;
    }

    /// Tag slot `index` dirty (nothing if no page is near it; a tag on an empty slot is
    /// cleared when a page lands there).
    #[inline]
    pub fn tag_dirty(&mut self, index: u64) {
        let (c, s) = split(index);
        if let Some(ch) = self.chunk_mut(c) {
            ch.dirty[s / 64] |= 1 << (s % 64);
        }
    }

    /// Clear the dirty tag of slot `index` if it holds `pfn`.
    #[inline]
    pub fn untag_dirty(&mut self, index: u64, pfn: Pfn) {
        let (c, s) = split(index);
        if let Some(ch) = self.chunk_mut(c) {
            if ch.slots[s] == pfn + 1 {
                ch.dirty[s / 64] &= !(1 << (s % 64));
            }
        }
    }

    /// Whether slot `index` is tagged dirty.
    pub fn tagged_dirty(&self, index: u64) -> bool {
        let (c, s) = split(index);
        self.chunk(c)
            .is_some_and(|ch| ch.dirty[s / 64] & (1 << (s % 64)) != 0)
    }

    /// The first tagged page at or after `from` for which `dirty` holds.
    pub fn next_dirty(&self, from: u64, dirty: impl Fn(Pfn) -> bool) -> Option<(u64, Pfn)> {
        let (first, mut s) = split(from);
        for c in first..self.chunks.len() {
            if let Some(ch) = self.chunk(c) {
                for wi in s / 64..WORDS {
                    // The first word drops the bits below `from`.
                    let mut bits = ch.dirty[wi];
                    if wi == s / 64 {
                        bits &= u64::MAX << (s % 64);
                    }
                    while bits != 0 {
                        let slot = wi * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        let p = ch.slots[slot];
                        if p != 0 && dirty(p - 1) {
                            return Some((((c as u64) << SHIFT) + slot as u64, p - 1));
                        }
                    }
                }
            }
            s = 0;
        }
        None
    }

    /// Cached (index, pfn) from page `from` on, in index order.
    pub fn iter_from(&self, from: u64) -> impl Iterator<Item = (u64, Pfn)> + '_ {
        let (first, s) = split(from);
        self.chunks
            .iter()
            .enumerate()
            .skip(first)
            .filter_map(|(c, ch)| ch.as_deref().map(|ch| (c, ch)))
            .flat_map(move |(c, ch)| {
                let base = (c as u64) << SHIFT;
                let start = if c == first { s } else { 0 };
                ch.slots[start..]
                    .iter()
                    .enumerate()
                    .filter(|(_, &p)| p != 0)
                    .map(move |(i, &p)| (base + (start + i) as u64, p - 1))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A chunk costs its slots' 4 bytes and a tag bit each, and a count: what the index
    /// adds to the heap per cached page.
    #[test]
    fn a_chunk_costs_four_bytes_and_a_bit_a_slot() {
        assert!(std::mem::size_of::<Chunk>() <= CHUNK * 4 + CHUNK / 8 + 8);
    }

    /// The index holds what a map of its pages would, finds the first tagged dirty page at
    /// or after any offset as a scan of the map would, and frees chunks it no longer needs.
    #[test]
    fn the_index_behaves_as_a_sorted_map_with_dirty_tags() {
        let mut idx = PageTree::default();
        let mut map: BTreeMap<u64, Pfn> = BTreeMap::new();
        let mut tagged = std::collections::BTreeSet::new();
        let mut next = crate::test_numbers(5);
        // Offsets cluster in a few chunks and reach past chunk edges.
        let span = 3 * CHUNK as u64 + 7;
        for step in 0..20_000 {
            let index = next(span);
            match next(5) {
                0 | 1 => {
                    if let std::collections::btree_map::Entry::Vacant(e) = map.entry(index) {
                        let pfn = next(1 << 20) as Pfn;
                        e.insert(pfn);
                        idx.insert(index, pfn);
                        tagged.remove(&index);
                    }
                }
                2 => {
                    if let Some(pfn) = map.remove(&index) {
                        idx.remove(index, pfn);
                        tagged.remove(&index);
                        assert!(!idx.tagged_dirty(index), "the tag leaves with the page");
                    }
                }
                3 => {
                    idx.tag_dirty(index);
                    if map.contains_key(&index) {
                        tagged.insert(index);
                    }
                }
                _ => {
                    // Untagging names the page; another page's slot keeps its tag.
                    let pfn = map.get(&index).copied().unwrap_or(7) ^ (next(2) as Pfn);
                    idx.untag_dirty(index, pfn);
                    if map.get(&index) == Some(&pfn) {
                        tagged.remove(&index);
                    }
                }
            }
            let from = next(span + 10);
            let odd = |p: Pfn| p % 2 == 1;
            let want = tagged
                .range(from..)
                .map(|&i| (i, map[&i]))
                .find(|&(_, p)| odd(p));
            assert_eq!(idx.next_dirty(from, odd), want, "step {step} from {from}");
            assert_eq!(idx.get(index), map.get(&index).copied());
            if map.contains_key(&index) {
                assert_eq!(idx.tagged_dirty(index), tagged.contains(&index));
            }
            assert_eq!((idx.len(), idx.is_empty()), (map.len(), map.is_empty()));
            if step % 500 == 0 {
                let all: Vec<_> = map.range(from..).map(|(&i, &p)| (i, p)).collect();
                assert_eq!(idx.iter_from(from).collect::<Vec<_>>(), all);
            }
        }
        for (i, p) in std::mem::take(&mut map) {
            idx.remove(i, p);
        }
        assert!(
            idx.chunks.iter().all(|c| c.is_none()),
            "empty chunks are freed"
        );
        assert!(idx.is_empty());
        assert_eq!(idx.iter_from(0).next(), None);
    }
}
