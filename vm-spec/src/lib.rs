//! vm-spec: the one source of truth for the stapvm ABI on the Rust side:
//! the header's structs and tables (`abi`, `tables`, `limits`), the program
//! model (`program`), the `.stpb` container (`container`), the kernel image
//! writer (`image`) and the disassembler (`disasm`).
pub mod abi;
pub mod container;
pub mod image;
pub mod limits;
pub mod program;
pub mod tables;
