//! What heap data costs once allocated: the system allocator rounds every request up (glibc's
//! malloc: a 16-byte-aligned chunk with an 8-byte header, at least 32 bytes), and a B-tree map
//! allocates whole nodes. The checker's memory budget counts states by these figures, not by
//! their lengths: a map of a few short strings takes several times their bytes.

/// The bytes the allocator takes for a request of `bytes` (none for none).
pub(crate) const fn allocated(bytes: usize) -> usize {
    if bytes == 0 {
        0
    } else {
        let chunk = (bytes + 8 + 15) & !15;
        if chunk < 32 {
            32
        } else {
            chunk
        }
    }
}

/// Entries a `BTreeMap` node holds at most (the standard library's `B` is 6: `2 * B - 1`).
const NODE_CAPACITY: usize = 11;
/// Entries every node but the root holds at least.
const NODE_LEAST: usize = 5;

/// The bytes a `BTreeMap` of `entries` entries of `entry_bytes` inline bytes each takes in
/// nodes, at worst: one leaf up to 11 entries, past that every node at its least (leaves of 5
/// entries; an internal node adds its 12 edges).
pub(crate) fn btree_node_bytes(entries: usize, entry_bytes: usize) -> usize {
    if entries == 0 {
        return 0;
    }
    let leaf = allocated(NODE_CAPACITY * entry_bytes + 16);
    let internal = allocated(NODE_CAPACITY * entry_bytes + 16 + (NODE_CAPACITY + 1) * 8);
    // The root alone holds up to 11; past that, every node holds at least 5.
    let leaves = if entries <= NODE_CAPACITY {
        1
    } else {
        entries.div_ceil(NODE_LEAST)
    };
    let internals = if leaves > 1 {
        leaves.div_ceil(NODE_LEAST)
    } else {
        0
    };
    leaves * leaf + internals * internal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_up_to_whole_chunks() {
        assert_eq!(allocated(0), 0);
        assert_eq!(allocated(1), 32);
        assert_eq!(allocated(24), 32);
        assert_eq!(allocated(25), 48);
        assert_eq!(allocated(540), 560);
    }

    #[test]
    fn a_small_map_takes_a_whole_node() {
        let entry = 2 * std::mem::size_of::<String>();
        assert_eq!(btree_node_bytes(1, entry), allocated(11 * entry + 16));
        assert!(btree_node_bytes(100, entry) > 20 * allocated(11 * entry + 16));
    }
}
