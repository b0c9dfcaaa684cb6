//! The compiler's passes after parsing, run in the order
//! `lib.rs::compile` lists: `usertapset` (`-I` tapset files) → `expand` (probe aliases) → `prometheus` (its
//! probes dropped) → `resolve` (names, probe points) → `elide` (`no probes
//! found`) → `types` (long/string inference) → `setglobals` (`-G`) → `lower` (bytecode), with
//! the built-in tapset's rewrites (`crate::tapset`) between `prometheus`
//! and `resolve`. Each is a plain function from the previous pass's result
//! to its own, reporting into `diag::Diags`; `resolve` and `lower` are
//! directories, a file per part.
pub mod elide;
pub mod expand;
pub mod lower;
pub mod prometheus;
pub mod resolve;
pub mod setglobals;
pub mod types;
pub mod usertapset;
