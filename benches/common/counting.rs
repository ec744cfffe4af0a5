//! The benches' allocator: mimalloc, as the `fencesim` binary has it, with
//! every allocation counted. How many allocations a sweep makes per seed
//! is the same on every machine and at every load (the simulation is
//! deterministic), so it is a cost figure a check can hold exactly, where
//! seeds/s moves with the machine's mood. Two relaxed atomic additions per
//! allocation are all it adds.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU64, Ordering};

/// mimalloc, counting.
pub struct Counting;

/// Allocations (`alloc`, `alloc_zeroed` and `realloc` calls) so far.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// Bytes asked for by those calls (a `realloc` counts its new size).
static BYTES: AtomicU64 = AtomicU64::new(0);

fn count(size: usize) {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    BYTES.fetch_add(size as u64, Ordering::Relaxed);
}

// SAFETY: every call is mimalloc's own, with the caller's arguments.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        mimalloc::MiMalloc.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        mimalloc::MiMalloc.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        mimalloc::MiMalloc.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        mimalloc::MiMalloc.realloc(ptr, layout, new_size)
    }
}

/// Allocations and bytes allocated so far, on every thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct Allocated {
    pub allocations: u64,
    pub bytes: u64,
}

impl Allocated {
    /// The counts now.
    pub fn now() -> Allocated {
        Allocated {
            allocations: ALLOCATIONS.load(Ordering::Relaxed),
            bytes: BYTES.load(Ordering::Relaxed),
        }
    }

    /// What was allocated since `earlier`.
    pub fn since(earlier: Allocated) -> Allocated {
        let now = Allocated::now();
        Allocated {
            allocations: now.allocations - earlier.allocations,
            bytes: now.bytes - earlier.bytes,
        }
    }
}
