//! vm-spec: the one source of truth for the stapvm ABI on the Rust side:
//! the header's structs and tables (`abi`, `tables`, `limits`), the program
//! model (`program`), the `.stpb` container (`container`), the kernel image
//! writer (`image`, with the stand-in symbols used where there is no
//! target), the disassembler (`disasm`), the decoding of ring records
//! (`records`, `hist`, `maps`), and, with the default `c-core` feature, the
//! user-space build of the C VM core (`core`: the module's verifier and
//! printf). The test kit (vm-testkit, vm-refvm) is a separate, dev-only
//! pair of crates.
pub mod abi;
pub mod container;
#[cfg(feature = "c-core")]
pub mod core;
pub mod disasm;
pub mod hist;
pub mod image;
pub mod limits;
pub mod maps;
pub mod program;
pub mod records;
pub mod tables;
