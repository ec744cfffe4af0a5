//! Lock services and storages, and the metadata that scenarios and the CLI
//! read about them.

pub mod catalog;
