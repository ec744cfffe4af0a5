//! markdown (in progress).
