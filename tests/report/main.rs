//! Reports rendered from hand-built journals.

mod lanes;
mod linear;
