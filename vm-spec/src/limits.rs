//! The session limits (`STP_LIMITS` in abi.h) as a Rust table: name, default,
//! minimum, maximum. The values come from the header through a C table built
//! by build.rs, so they are written only there.
use crate::abi;

/// One limit as defined in abi.h.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// stap's name (`MAXACTION`).
    pub name: &'static str,
    /// Default value.
    pub default: u32,
    /// Smallest value the module accepts.
    pub min: u32,
    /// Largest value the module accepts.
    pub max: u32,
}

pub use crate::tables::LIMITS;

/// Looks a limit up by stap's name.
pub fn by_name(name: &str) -> Option<(usize, &'static Limit)> {
    LIMITS.iter().enumerate().find(|(_, l)| l.name == name)
}

const _: () = assert!(LIMITS.len() == abi::STP_LIM__COUNT as usize);
