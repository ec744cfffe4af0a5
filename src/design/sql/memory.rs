//! SQLite's memory, bounded per statement: the allocator SQLite uses
//! counts, on each thread, the bytes a user's statement holds while it runs
//! and refuses an allocation past [`MAX_MEMORY`], which SQLite turns into an
//! "out of memory" error for that statement alone.
//!
//! SQLite's own heap limits (`sqlite3_hard_heap_limit64`) are one figure
//! for the whole process, so whether a statement fits would depend on what
//! other seeds ran beside it. Counting on the statement's own thread, from
//! its first step to its last, gives every run of a seed the same answer.

use std::alloc::Layout;
use std::cell::Cell;
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

use rusqlite::ffi;

/// The most bytes one statement may hold at once (its sorter, temporary
/// tables and values; SQLite keeps them all in memory).
pub const MAX_MEMORY: usize = 64 << 20;

/// Bytes in front of each block: its size (16 keeps SQLite's 8-byte
/// alignment and any wider one a platform's `malloc` gives).
const HEADER: usize = 16;

thread_local! {
    /// While a statement runs on this thread: the bytes it may still take.
    static LEFT: Cell<Option<i64>> = const { Cell::new(None) };
    /// Whether an allocation was refused since the statement started.
    static REFUSED: Cell<bool> = const { Cell::new(false) };
}

/// Makes SQLite allocate through this module. It must run before SQLite
/// starts (the first connection); an error says it could not.
pub(super) fn install() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let methods = ffi::sqlite3_mem_methods {
                xMalloc: Some(x_malloc),
                xFree: Some(x_free),
                xRealloc: Some(x_realloc),
                xSize: Some(x_size),
                xRoundup: Some(x_roundup),
                xInit: Some(x_init),
                xShutdown: Some(x_shutdown),
                pAppData: std::ptr::null_mut(),
            };
            // SAFETY: SQLite copies the struct; its functions follow
            // SQLite's malloc contract (see each below).
            let rc = unsafe {
                ffi::sqlite3_config(
                    ffi::SQLITE_CONFIG_MALLOC,
                    &methods as *const ffi::sqlite3_mem_methods,
                )
            };
            if rc == ffi::SQLITE_OK {
                Ok(())
            } else {
                Err(
                    "SQLite was started in this process before fencesim's `sql` storage, \
                     so its memory cannot be bounded: open no other SQLite connection first"
                        .to_owned(),
                )
            }
        })
        .clone()
}

/// Runs `run` with at most [`MAX_MEMORY`] bytes more held by SQLite on this
/// thread; the flag says whether an allocation was refused.
pub(super) fn bounded<T>(run: impl FnOnce() -> T) -> (T, bool) {
    let outer = LEFT.with(|left| left.replace(Some(MAX_MEMORY as i64)));
    REFUSED.with(|r| r.set(false));
    let result = run();
    LEFT.with(|left| left.set(outer));
    (result, REFUSED.with(|r| r.replace(false)))
}

/// Takes `bytes` from the running statement's allowance, if one runs;
/// false when it has not that much left.
fn take(bytes: i64) -> bool {
    LEFT.try_with(|left| match left.get() {
        Some(n) if n < bytes => {
            let _ = REFUSED.try_with(|r| r.set(true));
            false
        }
        Some(n) => {
            left.set(Some(n - bytes));
            true
        }
        None => true,
    })
    .unwrap_or(true)
}

fn give_back(bytes: i64) {
    let _ = LEFT.try_with(|left| {
        if let Some(n) = left.get() {
            left.set(Some(n + bytes));
        }
    });
}

fn round_up(n: c_int) -> usize {
    (n.max(0) as usize + 7) & !7
}

fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(HEADER)?, HEADER).ok()
}

/// The block's size, from its header.
///
/// # Safety
/// `p` came from [`x_malloc`] or [`x_realloc`] and is not freed.
unsafe fn size_of(p: *mut c_void) -> usize {
    *(p as *mut u8).sub(HEADER).cast::<usize>()
}

unsafe extern "C" fn x_malloc(n: c_int) -> *mut c_void {
    let size = round_up(n);
    let Some(layout) = layout(size) else {
        return std::ptr::null_mut();
    };
    if !take(size as i64) {
        return std::ptr::null_mut();
    }
    let base = std::alloc::alloc(layout);
    if base.is_null() {
        give_back(size as i64);
        return std::ptr::null_mut();
    }
    base.cast::<usize>().write(size);
    base.add(HEADER).cast()
}

unsafe extern "C" fn x_free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    let size = size_of(p);
    give_back(size as i64);
    let base = (p as *mut u8).sub(HEADER);
    std::alloc::dealloc(base, layout(size).expect("a block's layout was valid"));
}

unsafe extern "C" fn x_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    if p.is_null() {
        return x_malloc(n);
    }
    let old = size_of(p);
    let new = round_up(n);
    let Some(new_layout) = layout(new) else {
        return std::ptr::null_mut();
    };
    let grows = new as i64 - old as i64;
    if grows > 0 && !take(grows) {
        // SQLite keeps the old block when a reallocation fails.
        return std::ptr::null_mut();
    }
    let base = (p as *mut u8).sub(HEADER);
    let moved = std::alloc::realloc(
        base,
        layout(old).expect("a block's layout was valid"),
        new_layout.size(),
    );
    if moved.is_null() {
        if grows > 0 {
            give_back(grows);
        }
        return std::ptr::null_mut();
    }
    if grows < 0 {
        give_back(-grows);
    }
    moved.cast::<usize>().write(new);
    moved.add(HEADER).cast()
}

unsafe extern "C" fn x_size(p: *mut c_void) -> c_int {
    if p.is_null() {
        0
    } else {
        size_of(p) as c_int
    }
}

unsafe extern "C" fn x_roundup(n: c_int) -> c_int {
    round_up(n).min(c_int::MAX as usize & !7) as c_int
}

unsafe extern "C" fn x_init(_: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_shutdown(_: *mut c_void) {}
