//! vm-spec: the one source of truth for the stapvm ABI on the Rust side:
//! the header's structs and tables (`abi`, `tables`, `limits`), the program
//! model (`program`), the `.stpb` container (`container`), the kernel image
//! writer (`image`), the disassembler (`disasm`), the user-space build of
//! the C VM core with a runner for tests (`core`), the decoding of ring
//! records (`records`), and the differential-testing kit: a reference
//! interpreter in Rust (`refvm`, with its own printf in `fmt`), a
//! generator of random verified programs (`gen`) and the comparison of
//! both VMs (`diff`). `verify` is the Rust verifier: the rules of the C
//! verifier (kmod/core/verify.c) with the same codes and messages;
//! `mutate` breaks valid images for the verifiers' tests.
pub mod abi;
pub mod container;
pub mod core;
pub mod diff;
pub mod disasm;
pub mod fmt;
pub mod gen;
pub mod hist;
pub mod image;
pub mod limits;
pub mod maps;
pub mod mutate;
pub mod program;
pub mod records;
pub mod refvm;
pub mod tables;
pub mod verify;
