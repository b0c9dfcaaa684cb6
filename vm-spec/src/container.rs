//! The `.stpb` container: a file magic, the container version, the
//! payload's length (u64) and checksum (FNV-1a, 32 bits, over the payload),
//! then the payload, the `Program` serialised with postcard, to the end of
//! the file: a truncated file, bytes appended after it or any corruption of
//! one byte is refused before the payload is decoded (FNV-1a's steps are
//! bijections of its state, so one changed byte always changes the sum).
//! This is the user-space view; the kernel receives the flat image that
//! `image::build` makes from it.
use crate::program::Program;
use thiserror::Error;

/// First four bytes of every `.stpb` file.
pub const STPB_MAGIC: [u8; 4] = *b"STPB";
/// Version of the container layout; bumped on any change to `Program`.
pub const STPB_VERSION: u32 = 11;

/// Bytes before the payload: magic, version, length, checksum.
pub const HEADER: usize = 4 + 4 + 8 + 4;

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
    /// The payload is shorter than the header says.
    #[error("corrupt .stpb: truncated ({got} of {want} payload bytes)")]
    Short {
        /// Payload bytes present.
        got: u64,
        /// Payload bytes the header gives.
        want: u64,
    },
    /// Bytes after the payload.
    #[error("corrupt .stpb: {0} bytes after the program")]
    Trailing(u64),
    /// The payload's checksum differs from the header's.
    #[error("corrupt .stpb (checksum)")]
    Checksum,
    /// The payload does not decode.
    #[error("corrupt program: {0}")]
    Corrupt(#[from] postcard::Error),
}

/// FNV-1a (32 bits, abi.h's `STP_FNV1A_*`) of `data`.
pub fn fnv1a32(data: &[u8]) -> u32 {
    fnv1a32_from(crate::abi::STP_FNV1A_BASIS, data)
}

/// FNV-1a (32 bits) of `data`, continuing from the state `h`.
pub fn fnv1a32_from(mut h: u32, data: &[u8]) -> u32 {
    for &b in data {
        h ^= u32::from(b);
        h = h.wrapping_mul(crate::abi::STP_FNV1A_PRIME);
    }
    h
}

/// Serialises a program into `.stpb` bytes.
pub fn write(prog: &Program) -> Vec<u8> {
    let insns: usize = prog.handlers.iter().map(|h| h.code.len()).sum();
    // An instruction is 5 to 9 bytes, its place 2 to 6: room for most
    // programs without growing.
    let mut out = Vec::with_capacity(4096 + prog.source.len() + 12 * insns);
    out.extend_from_slice(&STPB_MAGIC);
    out.extend_from_slice(&STPB_VERSION.to_le_bytes());
    out.resize(HEADER, 0);
    // Serialising into a Vec cannot fail for this data model (if it did:
    // the header of an empty payload, which does not decode).
    let mut out = postcard::serialize_with_flavor(prog, Bytes(out)).unwrap_or_else(|_| {
        let mut head = STPB_MAGIC.to_vec();
        head.extend_from_slice(&STPB_VERSION.to_le_bytes());
        head.resize(HEADER, 0);
        head
    });
    fill_header(&mut out);
    out
}

/// `payload` as a `.stpb` file: the header with its length and checksum,
/// then the bytes as they are (whether they decode or not; the fuzzer's
/// way past the checksum into the decoder).
pub fn seal(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&STPB_MAGIC);
    out.extend_from_slice(&STPB_VERSION.to_le_bytes());
    out.resize(HEADER, 0);
    out.extend_from_slice(payload);
    fill_header(&mut out);
    out
}

/// Writes the payload's length and checksum into `file`'s header (its
/// first `HEADER` bytes, magic and version already there).
fn fill_header(file: &mut [u8]) {
    let len = (file.len() - HEADER) as u64;
    let sum = fnv1a32(&file[HEADER..]);
    file[8..16].copy_from_slice(&len.to_le_bytes());
    file[16..20].copy_from_slice(&sum.to_le_bytes());
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
    if bytes.len() < HEADER {
        return Err(ContainerError::Truncated(bytes.len()));
    }
    let word = |at: usize, n: usize| {
        bytes[at..at + n]
            .iter()
            .rev()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b))
    };
    let (want, sum) = (word(8, 8), word(16, 4) as u32);
    let payload = &bytes[HEADER..];
    let got = payload.len() as u64;
    if got < want {
        return Err(ContainerError::Short { got, want });
    }
    if got > want {
        return Err(ContainerError::Trailing(got - want));
    }
    if fnv1a32(payload) != sum {
        return Err(ContainerError::Checksum);
    }
    let (prog, rest) = postcard::take_from_bytes(payload)?;
    if !rest.is_empty() {
        return Err(ContainerError::Trailing(rest.len() as u64));
    }
    Ok(prog)
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

    #[test]
    fn refuses_appended_bytes_truncation_and_every_one_byte_corruption() {
        let prog = Program {
            source_name: "x.stp".into(),
            source: "probe begin { printf(\"hi\\n\") exit() }".into(),
            ..Default::default()
        };
        let bytes = write(&prog);
        assert_eq!(read(&bytes).unwrap(), prog);
        let mut long = bytes.clone();
        long.extend_from_slice(&[0u8; 4096]);
        assert_eq!(
            read(&long).unwrap_err().to_string(),
            "corrupt .stpb: 4096 bytes after the program"
        );
        let cut = &bytes[..bytes.len() - 1];
        assert!(matches!(read(cut), Err(ContainerError::Short { .. })));
        // The payload sealed again is the same file.
        assert_eq!(seal(&bytes[HEADER..]), bytes);
        // Every byte of the payload and of its sum, changed: refused by the
        // checksum (the length and header bytes by their own checks).
        for at in 16..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = bytes.clone();
                bad[at] ^= flip;
                assert!(
                    matches!(read(&bad), Err(ContainerError::Checksum)),
                    "byte {at} ^ {flip:#x}"
                );
            }
        }
        for at in 0..16 {
            let mut bad = bytes.clone();
            bad[at] ^= 0x01;
            assert!(read(&bad).is_err(), "header byte {at}");
        }
    }
}
