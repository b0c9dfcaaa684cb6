//! Test support for stapvm.
