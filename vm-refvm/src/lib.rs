//! vm-refvm: the reference VM, the oracle of the differential test
//! (vm-testkit's `diff`) and of the fuzz targets. A second, independent
//! implementation of the stapvm ISA in safe Rust: the interpreter
//! ([`vm`]), its own printf ([`fmt`]) and the simulated environment both
//! VMs run against ([`env`]). It never calls the C core: the crate depends
//! on vm-spec without the `c-core` feature.
pub mod env;
pub mod fmt;
pub mod vm;

pub use env::HostEnv;
pub use vm::{Outcome, RefError, RefProgram, RefSession};
