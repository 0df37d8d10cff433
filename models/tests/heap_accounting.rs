//! The checker's memory budget counts each state the model keeps by
//! [`Model::state_heap_bytes`]; this binary counts what the allocator really hands out for a
//! state (every chunk's usable size and its header, on the thread that asks) and checks the
//! model's figure covers it. Counted by length, a store state of a few thousand short keys took
//! twice what the budget thought (`check --one-partition` at 1.94 GiB with `--max-memory 1G`).

use models::kv::KvStore;
use models::model::Model;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeMap;

/// The system allocator, counting on each thread the bytes of the chunks it holds.
struct Counting;

thread_local! {
    static HELD: Cell<isize> = const { Cell::new(0) };
}

/// What a chunk at `ptr` takes: its usable size and glibc's 8-byte header.
fn chunk_bytes(ptr: *mut u8) -> isize {
    // SAFETY: `ptr` was returned by the system allocator and not yet freed.
    (unsafe { libc::malloc_usable_size(ptr.cast()) } + 8) as isize
}

// SAFETY: every call goes to the system allocator; the counting touches a const-initialised
// thread-local cell only, which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller's contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let _ = HELD.try_with(|held| held.set(held.get() + chunk_bytes(ptr)));
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = HELD.try_with(|held| held.set(held.get() - chunk_bytes(ptr)));
        // SAFETY: as the caller's contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The bytes this thread's allocations hold now.
fn held() -> isize {
    HELD.with(Cell::get)
}

/// A store state of `keys` keys, each value `value_bytes` long, made as the checker makes its
/// states: a clone of the state before, one key changed.
fn store_state(keys: usize, value_bytes: usize) -> BTreeMap<String, String> {
    let mut state = BTreeMap::new();
    for key in 0..keys {
        state.insert(format!("k{key}"), "v".repeat(value_bytes));
    }
    let mut next = state.clone();
    next.insert("k0".to_string(), "w".repeat(value_bytes));
    next
}

#[test]
fn the_budget_counts_at_least_what_a_store_state_holds_and_not_far_more() {
    for (keys, value_bytes) in [(1, 3), (8, 5), (100, 10), (2_000, 60), (50, 4_000)] {
        let original = store_state(keys, value_bytes);
        let before = held();
        let state = original.clone();
        let real = (held() - before) as usize;
        let counted = KvStore.state_heap_bytes(&state);
        println!("{keys} keys of {value_bytes} bytes: counted {counted}, held {real}");
        assert!(
            counted >= real,
            "{keys} keys of {value_bytes} bytes: counted {counted}, the allocator holds {real}"
        );
        assert!(
            counted <= 2 * real,
            "{keys} keys of {value_bytes} bytes: counted {counted}, over twice the {real} held"
        );
        drop(state);
    }
}
