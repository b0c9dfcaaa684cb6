//! Test support for stapvm: the hostile and valid images of the guest
//! harness (`hostile`), shared by the `gen-hostile` binary and the
//! user-space checks in `tests/hostile.rs`.
pub mod hostile;
