//! perfetto (in progress).
