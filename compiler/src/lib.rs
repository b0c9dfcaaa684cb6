//! The stapvm compiler.
