//! Reports rendered from hand-built journals.

mod beliefs;
mod lanes;
mod linear;
