//! vm-spec: the one source of truth for the stapvm ABI on the Rust side:
//! the header's structs and tables (`abi`, `tables`, `limits`), the program
//! model (`program`), the `.stpb` container (`container`), the kernel image
//! writer (`image`), the disassembler (`disasm`), the user-space build of
//! the C VM core with a runner for tests (`core`) and the decoding of ring
//! records (`records`).
pub mod abi;
pub mod container;
pub mod core;
pub mod disasm;
pub mod image;
pub mod limits;
pub mod program;
pub mod records;
pub mod tables;
