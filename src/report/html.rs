//! html (in progress).
