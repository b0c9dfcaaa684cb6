//! The compiler's passes after parsing, one per file, run in the order
//! `lib.rs::compile` lists: `expand` (probe aliases) → `resolve` (names, probe points) → `types`
//! (long/string inference) → `lower` (bytecode). Each is a plain function
//! from the previous pass's result to its own, reporting into `diag::Diags`.
pub mod elide;
pub mod expand;
pub mod lower;
pub mod prometheus;
pub mod resolve;
pub mod types;
