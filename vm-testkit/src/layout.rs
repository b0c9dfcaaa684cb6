//! Byte offsets inside an image header (`struct stp_image_hdr` of abi.h,
//! through bindgen's struct), and little-endian field access, for the
//! tests that break images on purpose (the verifier cases, the hostile
//! images of the guest).
use std::mem::{offset_of, size_of};
use vm_spec::abi::{stp_image_hdr, stp_section, stp_section_desc};

/// Size of the header.
pub const HDR_SIZE: usize = size_of::<stp_image_hdr>();
/// `version`.
pub const OFF_VERSION: usize = offset_of!(stp_image_hdr, version);
/// `hdr_size`.
pub const OFF_HDR_SIZE: usize = offset_of!(stp_image_hdr, hdr_size);
/// `total_size`.
pub const OFF_TOTAL: usize = offset_of!(stp_image_hdr, total_size);
/// `flags`.
pub const OFF_FLAGS: usize = offset_of!(stp_image_hdr, flags);
/// `nglobals`.
pub const OFF_NGLOBALS: usize = offset_of!(stp_image_hdr, nglobals);
/// `checksum`.
pub const OFF_CHECKSUM: usize = offset_of!(stp_image_hdr, checksum);
/// `sec[0]`: the section table.
pub const OFF_SEC: usize = offset_of!(stp_image_hdr, sec);
/// Size of one section descriptor.
pub const SEC_DESC: usize = size_of::<stp_section_desc>();
/// `limits[0]`.
pub const OFF_LIMITS: usize = offset_of!(stp_image_hdr, limits);

/// The little-endian u32 at `off`.
pub fn get32(img: &[u8], off: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&img[off..off + 4]);
    u32::from_le_bytes(b)
}

/// Writes the little-endian u32 `v` at `off`.
pub fn put32(img: &mut [u8], off: usize, v: u32) {
    img[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

/// Writes the little-endian u16 `v` at `off`.
pub fn put16(img: &mut [u8], off: usize, v: u16) {
    img[off..off + 2].copy_from_slice(&v.to_le_bytes());
}

/// The offset of section `s`'s descriptor in the header.
pub fn sec_desc(s: stp_section) -> usize {
    OFF_SEC + SEC_DESC * s as usize
}

/// (offset, size) of section `s`.
pub fn section(img: &[u8], s: stp_section) -> (usize, usize) {
    let o = sec_desc(s);
    (
        get32(img, o + offset_of!(stp_section_desc, off)) as usize,
        get32(img, o + offset_of!(stp_section_desc, size)) as usize,
    )
}
