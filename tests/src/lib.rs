//! Test support for stapvm: the hostile and valid images of the guest
//! harness (`hostile`), shared by the `gen-hostile` binary and the
//! user-space checks in `tests/hostile.rs`; the `runok-output` corpus's
//! expectations and comparison (`runok`), shared by `runok-cases` and
//! `compiler/tests/runok.rs`; SystemTap's example scripts as guest cases
//! (`examples`, for `example-cases`).
pub mod examples;
pub mod hostile;
pub mod runok;
