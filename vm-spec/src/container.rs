//! The `.stpb` container: a file magic, the container version, then the
//! `Program` serialised with postcard. This is the user-space view; the
//! kernel receives the flat image that `image::build` makes from it.
use crate::program::Program;
use thiserror::Error;

/// First four bytes of every `.stpb` file.
pub const STPB_MAGIC: [u8; 4] = *b"STPB";
/// Version of the container layout; bumped on any change to `Program`.
pub const STPB_VERSION: u32 = 10;

/// Why a `.stpb` file could not be read.
#[derive(Debug, Error)]
pub enum ContainerError {
    /// Shorter than the magic and version.
    #[error("file is truncated ({0} bytes)")]
    Truncated(usize),
    /// Not a `.stpb` file.
    #[error("not a stapvm program (bad magic)")]
    BadMagic,
    /// Written by another, incompatible version.
    #[error("unsupported .stpb version {found} (this stapvm reads version {STPB_VERSION})")]
    BadVersion {
        /// The version in the file.
        found: u32,
    },
    /// The payload does not decode.
    #[error("corrupt program: {0}")]
    Corrupt(#[from] postcard::Error),
}

/// Serialises a program into `.stpb` bytes.
pub fn write(prog: &Program) -> Vec<u8> {
    let insns: usize = prog.handlers.iter().map(|h| h.code.len()).sum();
    // An instruction is 5 to 9 bytes, its place 2 to 6: room for most
    // programs without growing.
    let mut out = Vec::with_capacity(4096 + prog.source.len() + 12 * insns);
    out.extend_from_slice(&STPB_MAGIC);
    out.extend_from_slice(&STPB_VERSION.to_le_bytes());
    // Serialising into a Vec cannot fail for this data model (if it did:
    // the magic and version alone, as before).
    postcard::serialize_with_flavor(prog, Bytes(out)).unwrap_or_else(|_| {
        let mut head = STPB_MAGIC.to_vec();
        head.extend_from_slice(&STPB_VERSION.to_le_bytes());
        head
    })
}

/// postcard's output into a `Vec`, as its `AllocVec`, except that the
/// few bytes of a varint are pushed one by one rather than copied (a
/// `memcpy` call for each field was most of the writer's time).
struct Bytes(Vec<u8>);

impl postcard::ser_flavors::Flavor for Bytes {
    type Output = Vec<u8>;

    #[inline(always)]
    fn try_extend(&mut self, data: &[u8]) -> postcard::Result<()> {
        match data {
            [b] => self.0.push(*b),
            _ if data.len() <= 16 => {
                for &b in data {
                    self.0.push(b);
                }
            }
            _ => self.0.extend_from_slice(data),
        }
        Ok(())
    }

    #[inline(always)]
    fn try_push(&mut self, data: u8) -> postcard::Result<()> {
        self.0.push(data);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<Vec<u8>> {
        Ok(self.0)
    }
}

/// Reads a program from `.stpb` bytes.
pub fn read(bytes: &[u8]) -> Result<Program, ContainerError> {
    if bytes.len() < 8 {
        return Err(ContainerError::Truncated(bytes.len()));
    }
    if bytes[0..4] != STPB_MAGIC {
        return Err(ContainerError::BadMagic);
    }
    let version = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    if version != STPB_VERSION {
        return Err(ContainerError::BadVersion { found: version });
    }
    Ok(postcard::from_bytes(&bytes[8..])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::*;

    #[test]
    fn round_trip_keeps_every_field() {
        let prog = Program {
            source_name: "x.stp".into(),
            source: "probe begin { exit() }".into(),
            compiler_version: "test".into(),
            limits: default_limits(),
            handlers: vec![Handler {
                ctx: 0,
                nregs: 1,
                nsregs: 0,
                code: vec![Insn::new(crate::abi::STP_OP_RET, 0, 0, 0, 0)],
                locs: vec![SrcLoc { line: 1, col: 1 }],
                probe_point: "begin".into(),
            }],
            ..Default::default()
        };
        let bytes = write(&prog);
        assert_eq!(read(&bytes).unwrap(), prog);
    }

    #[test]
    fn refuses_bad_magic_version_and_truncation() {
        let bytes = write(&Program::default());
        assert!(matches!(
            read(&bytes[..5]),
            Err(ContainerError::Truncated(5))
        ));
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(matches!(read(&bad), Err(ContainerError::BadMagic)));
        let mut bad = bytes.clone();
        bad[4] = 99;
        assert!(matches!(
            read(&bad),
            Err(ContainerError::BadVersion { found: 99 })
        ));
    }
}
