//! The types and function prototypes of a user-space binary's DWARF as a
//! BTF blob, as pahole converts the kernel's: what the target variables of
//! `process("PATH").function("F")` probes (`$param`, `$p->field`,
//! `$$parms`, `$return$`) are resolved against, by the same code that
//! resolves kernel probes' against vmlinux's BTF (`crate::targetvars`).
//!
//! Converted: base types (INT with size and signedness, `_Bool` as BOOL,
//! floats as FLOAT), pointers and C++ references (PTR), typedefs,
//! const/volatile/restrict (`_Atomic` as volatile), structs, classes and
//! unions with their members (bitfields included: DWARF 4's
//! `DW_AT_data_bit_offset` and DWARF 2's big-endian `DW_AT_bit_offset`),
//! declarations as FWD, enums (ENUM64 when a value needs it), arrays (one
//! ARRAY per dimension), subroutine types (FUNC_PROTO) and one FUNC per
//! named subprogram with code (`DW_AT_low_pc` or `DW_AT_ranges`) and its
//! formal parameters — for an out-of-line instance of an inlined function
//! those of its abstract origin, the declared list. A subprogram gcc marks
//! `DW_CC_nocall` (its calling convention was changed) gets no FUNC. Other
//! DIEs (C++ pointers to members, unspecified types, type units' `sig8`
//! references, dwz's alternate file) convert to `void`: a parameter of such
//! a type is refused by the loader as not in one integer register.
//!
//! The debuginfo is the binary's own `.debug_info`, else the file of its
//! build id (`DEBUG_ROOT/.build-id/xx/yyyy.debug`), else its
//! `.gnu_debuglink` file (next to it, in its `.debug/` directory, or below
//! `DEBUG_ROOT` at its directory). The DWARF is untrusted input: every
//! value is checked, a bad one gives an error (or a `void` type), never a
//! panic; the walk visits each DIE once, and chains through
//! `DW_AT_abstract_origin`/`DW_AT_specification` are bounded.
use crate::btf::{kind, Btf, BtfError};
use crate::debuginfo::{with_dwarf, DebuginfoError, Reader};
use gimli::{constants as dw, AttributeValue, DebugInfoOffset, Unit};
use object::{Object, ObjectSection};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Most BTF types a conversion makes (each DIE at most one, an array one
/// per dimension).
pub const MAX_TYPES: usize = 1 << 22;
/// Longest `DW_AT_abstract_origin`/`DW_AT_specification` chain followed.
const MAX_HOPS: usize = 4;
/// Most members, enumerators or parameters kept of one type (BTF's vlen).
const MAX_VLEN: usize = 0xffff;

/// Why a binary's types cannot be had.
#[derive(Debug, Error)]
pub enum DwarfError {
    /// Neither the binary nor a debug file for it has DWARF.
    #[error("{} has no DWARF debuginfo (looked in {tried}): install its debug symbols (Debian: the -dbgsym or -dbg package) or build it with -g", path.display())]
    NoDebuginfo {
        /// The binary.
        path: PathBuf,
        /// The places looked in.
        tried: String,
    },
    /// The binary is not an ELF file, or cannot be read.
    #[error("{}: {why}", path.display())]
    Binary {
        /// The binary.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The debug file cannot be read, or its DWARF does not parse.
    #[error(transparent)]
    Debuginfo(#[from] DebuginfoError),
    /// More types than a conversion makes.
    #[error("{}: more than {MAX_TYPES} DWARF types", path.display())]
    TooBig {
        /// The debug file.
        path: PathBuf,
    },
    /// The converted blob does not parse (a bug, or types past BTF's
    /// limits).
    #[error("{}: the converted types are not valid BTF: {source}", path.display())]
    Btf {
        /// The debug file.
        path: PathBuf,
        /// The parser's error.
        source: BtfError,
    },
}

/// A type reference: the `.debug_info` offset of a DIE (`None`: void).
type Ref = Option<u64>;

/// A subprogram's formal parameters (name, type) and whether it ends in
/// `...`.
type Params = (Vec<(String, Ref)>, bool);

/// A struct or union member: name, type, bit offset, bitfield size.
#[derive(Debug)]
struct Mem {
    name: String,
    ty: Ref,
    bit_off: u64,
    bits: u64,
}

/// One converted DIE, before its references become type ids.
#[derive(Debug)]
enum Node {
    Int {
        name: String,
        size: u32,
        enc: u32,
    },
    Float {
        name: String,
        size: u32,
    },
    Ptr(Ref),
    Typedef(String, Ref),
    Mod(u8, Ref),
    Composite {
        union: bool,
        name: String,
        size: u32,
        members: Vec<Mem>,
    },
    Fwd {
        union: bool,
        name: String,
    },
    Enum {
        name: String,
        size: u32,
        signed: bool,
        values: Vec<(String, i64)>,
    },
    /// One ARRAY per dimension (the outermost first), ids in a row.
    Array {
        elem: Ref,
        dims: Vec<u32>,
    },
    Proto {
        ret: Ref,
        params: Vec<(String, Ref)>,
        variadic: bool,
    },
    /// A FUNC of the FUNC_PROTO node `proto` (an index in `nodes`).
    Func {
        name: String,
        proto: usize,
        global: bool,
    },
    /// The `__ARRAY_SIZE_TYPE__` index type of every ARRAY.
    Index,
}

impl Node {
    /// How many type ids it takes.
    fn ids(&self) -> u32 {
        match self {
            Node::Array { dims, .. } => dims.len().max(1) as u32,
            _ => 1,
        }
    }
}

/// Where a binary's DWARF is: the binary itself, its build-id file or its
/// debuglink file under `root` (`crate::debuginfo::debug_root()`); the
/// error lists the places looked in.
pub fn find_debuginfo(binary: &Path, root: &Path) -> Result<PathBuf, DwarfError> {
    let bad = |why: String| DwarfError::Binary {
        path: binary.to_path_buf(),
        why,
    };
    let data = std::fs::read(binary).map_err(|e| bad(e.to_string()))?;
    let obj = object::File::parse(&*data).map_err(|e| bad(e.to_string()))?;
    if has_dwarf(&obj) {
        return Ok(binary.to_path_buf());
    }
    let mut tried = vec![binary.to_path_buf()];
    let own_id = obj.build_id().ok().flatten().map(<[u8]>::to_vec);
    if let Some(id) = own_id.as_deref().filter(|id| id.len() >= 2) {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let p = root
            .join(".build-id")
            .join(&hex[..2])
            .join(format!("{}.debug", &hex[2..]));
        if usable(&p, own_id.as_deref()) {
            return Ok(p);
        }
        tried.push(p);
    }
    if let Ok(Some((name, _crc))) = obj.gnu_debuglink() {
        let name = String::from_utf8_lossy(name).into_owned();
        if !name.is_empty() && !name.contains('/') {
            let dir = binary.parent().unwrap_or(Path::new("/"));
            let rel = dir.strip_prefix("/").unwrap_or(dir);
            for p in [
                dir.join(&name),
                dir.join(".debug").join(&name),
                root.join(rel).join(&name),
            ] {
                if p != binary && usable(&p, own_id.as_deref()) {
                    return Ok(p);
                }
                tried.push(p);
            }
        }
    }
    Err(DwarfError::NoDebuginfo {
        path: binary.to_path_buf(),
        tried: tried
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// Whether `obj` has a non-empty `.debug_info`.
fn has_dwarf(obj: &object::File<'_>) -> bool {
    obj.section_by_name(".debug_info")
        .is_some_and(|s| s.size() > 0)
}

/// Whether `p` is an ELF file with DWARF, of the same build as the binary
/// when both have a build id.
fn usable(p: &Path, build_id: Option<&[u8]>) -> bool {
    let Ok(data) = std::fs::read(p) else {
        return false;
    };
    let Ok(obj) = object::File::parse(&*data) else {
        return false;
    };
    let theirs = obj.build_id().ok().flatten();
    has_dwarf(&obj)
        && match (build_id, theirs) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
}

/// The BTF of binary `binary`'s DWARF (found with `find_debuginfo` under
/// `root`). With `funcs`, only those functions get a FUNC: each
/// (ELF name, address) the subprogram whose `DW_AT_low_pc` is that
/// address and whose DWARF name is that name (a compiler clone such as
/// `f.isra.0` has a different calling convention and gets none).
pub fn binary_btf(
    binary: &Path,
    root: &Path,
    funcs: Option<&[(String, u64)]>,
) -> Result<Btf, DwarfError> {
    let path = find_debuginfo(binary, root)?;
    let blob = convert(&path, funcs)?;
    Btf::parse(blob).map_err(|source| DwarfError::Btf { path, source })
}

/// The BTF blob of the DWARF in file `path` (see `binary_btf`).
pub fn convert(path: &Path, funcs: Option<&[(String, u64)]>) -> Result<Vec<u8>, DwarfError> {
    let mut too_big = false;
    let blob = with_dwarf(path, |dwarf, _| {
        let mut c = Converter {
            dwarf,
            units: Vec::new(),
            nodes: Vec::new(),
            ids: HashMap::new(),
            index: 0,
            wanted: funcs.map(|f| f.iter().map(|(n, a)| (*a, n.as_str())).collect()),
            named: HashSet::new(),
        };
        let mut headers = dwarf.units();
        while let Some(h) = headers.next()? {
            let start = h.offset().as_debug_info_offset().map_or(0, |o| o.0 as u64);
            c.units.push((start, dwarf.unit(h)?));
        }
        c.units.sort_by_key(|(s, _)| *s);
        c.index = c.add(Node::Index, None);
        for ui in 0..c.units.len() {
            c.walk(ui)?;
            if c.nodes.len() > MAX_TYPES {
                too_big = true;
                return Ok(Vec::new());
            }
        }
        match c.emit() {
            Some(blob) => Ok(blob),
            None => {
                too_big = true;
                Ok(Vec::new())
            }
        }
    })?;
    if too_big {
        return Err(DwarfError::TooBig {
            path: path.to_path_buf(),
        });
    }
    Ok(blob)
}

/// The conversion's state.
struct Converter<'a, 'd> {
    dwarf: &'a gimli::Dwarf<Reader<'d>>,
    /// Every unit, by the `.debug_info` offset of its header.
    units: Vec<(u64, Unit<Reader<'d>>)>,
    /// The converted DIEs, in type id order.
    nodes: Vec<Node>,
    /// DIE offset → its node (an index in `nodes`).
    ids: HashMap<u64, usize>,
    /// The node of the arrays' index type.
    index: usize,
    /// `funcs` of `convert`: address → ELF name.
    wanted: Option<HashMap<u64, &'a str>>,
    /// The wanted functions given a FUNC.
    named: HashSet<u64>,
}

/// A container being filled by the DIEs one level below it.
enum Open {
    /// Node index of a struct/union: its members.
    Members(usize),
    /// Node index of an enum: its enumerators.
    Enumerators(usize),
    /// Node index of an array: its subranges.
    Dims(usize),
    /// Node index of a FUNC_PROTO: its parameters.
    Params(usize),
    /// Anything else (its children are walked, not collected).
    Other,
}

/// The reference of `v` as a `.debug_info` offset.
fn ref_of(unit: &Unit<Reader<'_>>, v: &AttributeValue<Reader<'_>>) -> Ref {
    match v {
        AttributeValue::UnitRef(o) => o.to_debug_info_offset(&unit.header).map(|o| o.0 as u64),
        AttributeValue::DebugInfoRef(o) => Some(o.0 as u64),
        _ => None,
    }
}

/// The value of a `DW_OP_plus_uconst N` location expression (DWARF 2's
/// `DW_AT_data_member_location`).
fn plus_uconst(expr: &[u8]) -> Option<u64> {
    let (&op, rest) = expr.split_first()?;
    if op != dw::DW_OP_plus_uconst.0 {
        return None;
    }
    let mut v = 0u64;
    for (i, &b) in rest.iter().take(10).enumerate() {
        v |= u64::from(b & 0x7f).checked_shl(7 * i as u32)?;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

impl<'d> Converter<'_, 'd> {
    /// Appends `node` for DIE `off`; its index in `nodes`.
    fn add(&mut self, node: Node, off: Option<u64>) -> usize {
        let i = self.nodes.len();
        if let Some(o) = off {
            self.ids.insert(o, i);
        }
        self.nodes.push(node);
        i
    }

    /// The unit holding `.debug_info` offset `off` and the offset in it.
    fn unit_of(&self, off: u64) -> Option<(usize, gimli::UnitOffset)> {
        let i = self
            .units
            .partition_point(|(s, _)| *s <= off)
            .checked_sub(1)?;
        let o =
            DebugInfoOffset(usize::try_from(off).ok()?).to_unit_offset(&self.units[i].1.header)?;
        Some((i, o))
    }

    /// Attribute `at` of the DIE at `(ui, off)`, else of the DIEs its
    /// `DW_AT_abstract_origin`/`DW_AT_specification` lead to; with the
    /// unit it was found in.
    fn follow(
        &self,
        ui: usize,
        off: gimli::UnitOffset,
        at: dw::DwAt,
    ) -> gimli::Result<Option<(usize, AttributeValue<Reader<'d>>)>> {
        let (mut ui, mut off) = (ui, off);
        for _ in 0..MAX_HOPS {
            let unit = &self.units[ui].1;
            let e = unit.entry(off)?;
            if let Some(v) = e.attr_value(at)? {
                return Ok(Some((ui, v)));
            }
            let next = match e.attr_value(dw::DW_AT_abstract_origin)? {
                Some(v) => ref_of(unit, &v),
                None => match e.attr_value(dw::DW_AT_specification)? {
                    Some(v) => ref_of(unit, &v),
                    None => None,
                },
            };
            match next.and_then(|o| self.unit_of(o)) {
                Some((u, o)) => (ui, off) = (u, o),
                None => return Ok(None),
            }
        }
        Ok(None)
    }

    /// The string of attribute `at` (followed as `follow` does).
    fn string(&self, ui: usize, off: gimli::UnitOffset, at: dw::DwAt) -> gimli::Result<String> {
        Ok(match self.follow(ui, off, at)? {
            Some((u, v)) => self
                .dwarf
                .attr_string(&self.units[u].1, v)
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            None => String::new(),
        })
    }

    /// The type reference of the DIE (followed as `follow` does).
    fn type_of(&self, ui: usize, off: gimli::UnitOffset) -> gimli::Result<Ref> {
        Ok(self
            .follow(ui, off, dw::DW_AT_type)?
            .and_then(|(u, v)| ref_of(&self.units[u].1, &v)))
    }

    /// Whether the type at `r` is a signed base type (through typedefs
    /// and modifiers, a bounded chain).
    fn signed_base(&self, mut r: Ref) -> gimli::Result<bool> {
        for _ in 0..MAX_HOPS * 4 {
            let Some((ui, off)) = r.and_then(|o| self.unit_of(o)) else {
                return Ok(false);
            };
            let unit = &self.units[ui].1;
            let e = unit.entry(off)?;
            if e.tag() == dw::DW_TAG_base_type {
                return Ok(matches!(
                    e.attr_value(dw::DW_AT_encoding)?,
                    Some(AttributeValue::Encoding(
                        dw::DW_ATE_signed | dw::DW_ATE_signed_char
                    ))
                ));
            }
            r = e.attr_value(dw::DW_AT_type)?.and_then(|v| ref_of(unit, &v));
        }
        Ok(false)
    }

    /// The formal parameters (name, type) and whether there is a `...`,
    /// of the subprogram at `(ui, off)`'s abstract origin (the declared
    /// list); `None` when it has none to follow.
    fn origin_params(&self, ui: usize, off: gimli::UnitOffset) -> gimli::Result<Option<Params>> {
        let unit = &self.units[ui].1;
        let e = unit.entry(off)?;
        let Some(origin) = e
            .attr_value(dw::DW_AT_abstract_origin)?
            .and_then(|v| ref_of(unit, &v))
            .and_then(|o| self.unit_of(o))
        else {
            return Ok(None);
        };
        let (oui, ooff) = origin;
        let ounit = &self.units[oui].1;
        let mut tree = ounit.entries_tree(Some(ooff))?;
        let root = tree.root()?;
        let mut children = root.children();
        let mut params = Vec::new();
        let mut variadic = false;
        while let Some(child) = children.next()? {
            let c = child.entry();
            match c.tag() {
                dw::DW_TAG_formal_parameter if params.len() < MAX_VLEN => {
                    let name = self.string(oui, c.offset(), dw::DW_AT_name)?;
                    let ty = self.type_of(oui, c.offset())?;
                    params.push((name, ty));
                }
                dw::DW_TAG_unspecified_parameters => variadic = true,
                _ => {}
            }
        }
        Ok(Some((params, variadic)))
    }

    /// Converts the DIEs of unit `ui`.
    fn walk(&mut self, ui: usize) -> gimli::Result<()> {
        let mut open: Vec<(isize, Open)> = Vec::new();
        let mut depth: isize = 0;
        // The cursor borrows the unit: the DIEs' places first.
        let mut cursor = self.units[ui].1.entries();
        let mut dies = Vec::new();
        while let Some((delta, e)) = cursor.next_dfs()? {
            depth += delta;
            dies.push((depth, e.offset(), e.tag()));
        }
        for (depth, off, tag) in dies {
            while open.last().is_some_and(|(d, _)| *d >= depth) {
                open.pop();
            }
            let parent = match open.last() {
                Some((d, o)) if *d == depth - 1 => Some(o),
                _ => None,
            };
            let parent = match parent {
                Some(Open::Members(i)) => Some(Open::Members(*i)),
                Some(Open::Enumerators(i)) => Some(Open::Enumerators(*i)),
                Some(Open::Dims(i)) => Some(Open::Dims(*i)),
                Some(Open::Params(i)) => Some(Open::Params(*i)),
                _ => None,
            };
            if let Some(p) = parent {
                self.child(ui, off, tag, p)?;
            }
            let made = self.die(ui, off, tag)?;
            open.push((depth, made));
            if self.nodes.len() > MAX_TYPES {
                break;
            }
        }
        Ok(())
    }

    /// A DIE below a container.
    fn child(
        &mut self,
        ui: usize,
        off: gimli::UnitOffset,
        tag: dw::DwTag,
        p: Open,
    ) -> gimli::Result<()> {
        let unit = &self.units[ui].1;
        let e = unit.entry(off)?;
        match (p, tag) {
            (Open::Members(i), dw::DW_TAG_member) => {
                // Static members are variables, not part of the layout.
                if e.attr_value(dw::DW_AT_external)?.is_some()
                    || e.attr_value(dw::DW_AT_declaration)?.is_some()
                {
                    return Ok(());
                }
                let name = self.string(ui, off, dw::DW_AT_name)?;
                let ty = self.type_of(ui, off)?;
                let udata = |a: dw::DwAt| -> gimli::Result<Option<u64>> {
                    Ok(e.attr_value(a)?.and_then(|v| v.udata_value()))
                };
                let byte_off = match e.attr_value(dw::DW_AT_data_member_location)? {
                    Some(AttributeValue::Exprloc(x)) => plus_uconst(x.0.slice()),
                    Some(v) => v.udata_value(),
                    None => Some(0),
                };
                let Some(byte_off) = byte_off else {
                    return Ok(());
                };
                let bits = udata(dw::DW_AT_bit_size)?.unwrap_or(0);
                let bit_off = if let Some(b) = udata(dw::DW_AT_data_bit_offset)? {
                    Some(b)
                } else if let (Some(b), Some(storage)) =
                    (udata(dw::DW_AT_bit_offset)?, udata(dw::DW_AT_byte_size)?)
                {
                    // DWARF 2: from the storage unit's most significant bit.
                    storage
                        .checked_mul(8)
                        .and_then(|s| s.checked_sub(b))
                        .and_then(|s| s.checked_sub(bits))
                        .and_then(|s| byte_off.checked_mul(8)?.checked_add(s))
                } else {
                    byte_off.checked_mul(8)
                };
                let Some(bit_off) = bit_off else {
                    return Ok(());
                };
                if let Some(Node::Composite { members, .. }) = self.nodes.get_mut(i) {
                    if members.len() < MAX_VLEN {
                        members.push(Mem {
                            name,
                            ty,
                            bit_off,
                            bits,
                        });
                    }
                }
            }
            (Open::Enumerators(i), dw::DW_TAG_enumerator) => {
                let name = self.string(ui, off, dw::DW_AT_name)?;
                let v = e.attr_value(dw::DW_AT_const_value)?;
                let signed = match self.nodes.get(i) {
                    Some(Node::Enum { signed, .. }) => *signed,
                    _ => false,
                };
                let value = match v {
                    Some(AttributeValue::Sdata(x)) => x,
                    Some(AttributeValue::Udata(x)) => x as i64,
                    Some(
                        v @ (AttributeValue::Data1(_)
                        | AttributeValue::Data2(_)
                        | AttributeValue::Data4(_)
                        | AttributeValue::Data8(_)),
                    ) => {
                        if signed {
                            v.sdata_value().unwrap_or(0)
                        } else {
                            v.udata_value().unwrap_or(0) as i64
                        }
                    }
                    _ => 0,
                };
                if let Some(Node::Enum { values, .. }) = self.nodes.get_mut(i) {
                    if values.len() < MAX_VLEN {
                        values.push((name, value));
                    }
                }
            }
            (Open::Dims(i), dw::DW_TAG_subrange_type) => {
                let count = match e.attr_value(dw::DW_AT_count)?.and_then(|v| v.udata_value()) {
                    Some(c) => c,
                    None => {
                        let lower = e
                            .attr_value(dw::DW_AT_lower_bound)?
                            .and_then(|v| v.udata_value())
                            .unwrap_or(0);
                        match e
                            .attr_value(dw::DW_AT_upper_bound)?
                            .and_then(|v| v.udata_value())
                        {
                            Some(u) => u
                                .checked_sub(lower)
                                .and_then(|n| n.checked_add(1))
                                .unwrap_or(0),
                            None => 0,
                        }
                    }
                };
                if let Some(Node::Array { dims, .. }) = self.nodes.get_mut(i) {
                    if dims.len() < 64 {
                        dims.push(u32::try_from(count).unwrap_or(u32::MAX));
                    }
                }
            }
            (Open::Params(i), dw::DW_TAG_formal_parameter) => {
                let name = self.string(ui, off, dw::DW_AT_name)?;
                let ty = self.type_of(ui, off)?;
                if let Some(Node::Proto { params, .. }) = self.nodes.get_mut(i) {
                    if params.len() < MAX_VLEN {
                        params.push((name, ty));
                    }
                }
            }
            (Open::Params(i), dw::DW_TAG_unspecified_parameters) => {
                if let Some(Node::Proto { variadic, .. }) = self.nodes.get_mut(i) {
                    *variadic = true;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Converts one DIE; what its children fill.
    fn die(&mut self, ui: usize, off: gimli::UnitOffset, tag: dw::DwTag) -> gimli::Result<Open> {
        let unit = &self.units[ui].1;
        let e = unit.entry(off)?;
        let Some(goff) = off.to_debug_info_offset(&unit.header).map(|o| o.0 as u64) else {
            return Ok(Open::Other);
        };
        let name = || self.string(ui, off, dw::DW_AT_name);
        let ty = e.attr_value(dw::DW_AT_type)?.and_then(|v| ref_of(unit, &v));
        let size = e
            .attr_value(dw::DW_AT_byte_size)?
            .and_then(|v| v.udata_value())
            .map(|s| u32::try_from(s).unwrap_or(u32::MAX));
        let declaration = e.attr_value(dw::DW_AT_declaration)?.is_some();
        let node = match tag {
            dw::DW_TAG_base_type => {
                let size = size.unwrap_or(0);
                match e.attr_value(dw::DW_AT_encoding)? {
                    Some(AttributeValue::Encoding(
                        dw::DW_ATE_float | dw::DW_ATE_complex_float | dw::DW_ATE_decimal_float,
                    )) => Node::Float {
                        name: name()?,
                        size,
                    },
                    enc => {
                        let enc = match enc {
                            Some(AttributeValue::Encoding(dw::DW_ATE_signed)) => 1,
                            Some(AttributeValue::Encoding(dw::DW_ATE_signed_char)) => 1 | 2,
                            Some(AttributeValue::Encoding(dw::DW_ATE_unsigned_char)) => 2,
                            Some(AttributeValue::Encoding(dw::DW_ATE_boolean)) => 4,
                            _ => 0,
                        };
                        Node::Int {
                            name: name()?,
                            size,
                            enc,
                        }
                    }
                }
            }
            dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type => Node::Ptr(ty),
            dw::DW_TAG_typedef => Node::Typedef(name()?, ty),
            dw::DW_TAG_const_type => Node::Mod(kind::CONST, ty),
            dw::DW_TAG_volatile_type | dw::DW_TAG_atomic_type => Node::Mod(kind::VOLATILE, ty),
            dw::DW_TAG_restrict_type => Node::Mod(kind::RESTRICT, ty),
            dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type => {
                let union = tag == dw::DW_TAG_union_type;
                let name = name()?;
                match size {
                    Some(size) if !declaration => {
                        let i = self.add(
                            Node::Composite {
                                union,
                                name,
                                size,
                                members: Vec::new(),
                            },
                            Some(goff),
                        );
                        return Ok(Open::Members(i));
                    }
                    _ => Node::Fwd { union, name },
                }
            }
            dw::DW_TAG_enumeration_type => {
                let signed = self.signed_base(ty)?;
                let name = name()?;
                let i = self.add(
                    Node::Enum {
                        name,
                        size: size.unwrap_or(4),
                        signed,
                        values: Vec::new(),
                    },
                    Some(goff),
                );
                return Ok(Open::Enumerators(i));
            }
            dw::DW_TAG_array_type => {
                let i = self.add(
                    Node::Array {
                        elem: ty,
                        dims: Vec::new(),
                    },
                    Some(goff),
                );
                return Ok(Open::Dims(i));
            }
            dw::DW_TAG_subroutine_type => {
                let i = self.add(
                    Node::Proto {
                        ret: ty,
                        params: Vec::new(),
                        variadic: false,
                    },
                    Some(goff),
                );
                return Ok(Open::Params(i));
            }
            dw::DW_TAG_subprogram => return self.subprogram(ui, off),
            _ => return Ok(Open::Other),
        };
        self.add(node, Some(goff));
        Ok(Open::Other)
    }

    /// A subprogram: a FUNC_PROTO and a FUNC when it has code (and is one
    /// of the wanted functions, when some are).
    fn subprogram(&mut self, ui: usize, off: gimli::UnitOffset) -> gimli::Result<Open> {
        let unit = &self.units[ui].1;
        let e = unit.entry(off)?;
        let low = match e.attr_value(dw::DW_AT_low_pc)? {
            Some(v) => match self.dwarf.attr_address(unit, v)? {
                Some(a) => Some(a),
                None => return Ok(Open::Other),
            },
            None if e.attr_value(dw::DW_AT_ranges)?.is_some() => None,
            None => return Ok(Open::Other),
        };
        if matches!(
            e.attr_value(dw::DW_AT_calling_convention)?,
            Some(AttributeValue::CallingConvention(dw::DW_CC_nocall))
        ) {
            return Ok(Open::Other);
        }
        let name = self.string(ui, off, dw::DW_AT_name)?;
        if name.is_empty() {
            return Ok(Open::Other);
        }
        if let Some(w) = &self.wanted {
            // Matched by address; a function split in ranges (hot/cold)
            // by name.
            let hit = match low {
                Some(a) => w.get(&a).filter(|n| **n == name).map(|_| a),
                None => w.iter().find(|(_, n)| **n == name).map(|(a, _)| *a),
            };
            match hit {
                Some(a) if self.named.insert(a) => {}
                _ => return Ok(Open::Other),
            }
        }
        let global = self.follow(ui, off, dw::DW_AT_external)?.is_some();
        let ret = self.type_of(ui, off)?;
        let origin = self.origin_params(ui, off)?;
        let collect = origin.is_none();
        let (params, variadic) = origin.unwrap_or_default();
        let proto = self.add(
            Node::Proto {
                ret,
                params,
                variadic,
            },
            None,
        );
        self.add(
            Node::Func {
                name,
                proto,
                global,
            },
            None,
        );
        Ok(if collect {
            Open::Params(proto)
        } else {
            Open::Other
        })
    }

    /// The blob: header, type records, strings; `None` past `MAX_TYPES`.
    fn emit(&self) -> Option<Vec<u8>> {
        // Type ids: void is 0, each node's first id in order.
        let mut firsts = Vec::with_capacity(self.nodes.len());
        let mut next = 1usize;
        for n in &self.nodes {
            firsts.push(u32::try_from(next).ok()?);
            next += n.ids() as usize;
        }
        if next > MAX_TYPES + 1 {
            return None;
        }
        let node_id = |i: usize| firsts.get(i).copied().unwrap_or(0);
        let id = |r: &Ref| -> u32 { r.and_then(|o| self.ids.get(&o)).map_or(0, |&i| node_id(i)) };
        let mut strs = StrTab::default();
        let mut t: Vec<u8> = Vec::new();
        let rec = |t: &mut Vec<u8>, name: u32, k: u8, kflag: bool, vlen: usize, st: u32| {
            let info =
                (u32::from(k) << 24) | (u32::from(kflag) << 31) | (vlen.min(MAX_VLEN) as u32);
            for w in [name, info, st] {
                t.extend_from_slice(&w.to_le_bytes());
            }
        };
        let w = |t: &mut Vec<u8>, v: u32| t.extend_from_slice(&v.to_le_bytes());
        for (i, node) in self.nodes.iter().enumerate() {
            match node {
                Node::Int { name, size, enc } => {
                    rec(&mut t, strs.add(name), kind::INT, false, 0, *size);
                    let bits = size.saturating_mul(8).min(128);
                    w(&mut t, (enc << 24) | bits);
                }
                Node::Float { name, size } => {
                    rec(&mut t, strs.add(name), kind::FLOAT, false, 0, *size)
                }
                Node::Index => {
                    rec(
                        &mut t,
                        strs.add("__ARRAY_SIZE_TYPE__"),
                        kind::INT,
                        false,
                        0,
                        4,
                    );
                    w(&mut t, 32);
                }
                Node::Ptr(r) => rec(&mut t, 0, kind::PTR, false, 0, id(r)),
                Node::Typedef(name, r) => {
                    rec(&mut t, strs.add(name), kind::TYPEDEF, false, 0, id(r))
                }
                Node::Mod(k, r) => rec(&mut t, 0, *k, false, 0, id(r)),
                Node::Composite {
                    union,
                    name,
                    size,
                    members,
                } => {
                    let k = if *union { kind::UNION } else { kind::STRUCT };
                    let bitfields = members.iter().any(|m| m.bits != 0);
                    // A member at an offset BTF cannot hold is left out.
                    let fits = |m: &&Mem| {
                        if bitfields {
                            m.bit_off < 1 << 24 && m.bits < 256
                        } else {
                            m.bit_off <= u64::from(u32::MAX)
                        }
                    };
                    let kept: Vec<&Mem> = members.iter().filter(fits).collect();
                    rec(&mut t, strs.add(name), k, bitfields, kept.len(), *size);
                    for m in kept {
                        w(&mut t, strs.add(&m.name));
                        w(&mut t, id(&m.ty));
                        let raw = if bitfields {
                            ((m.bits as u32) << 24) | m.bit_off as u32
                        } else {
                            m.bit_off as u32
                        };
                        w(&mut t, raw);
                    }
                }
                Node::Fwd { union, name } => rec(&mut t, strs.add(name), kind::FWD, *union, 0, 0),
                Node::Enum {
                    name,
                    size,
                    signed,
                    values,
                } => {
                    let wide = *size > 4
                        || values
                            .iter()
                            .any(|(_, v)| i32::try_from(*v).is_err() && u32::try_from(*v).is_err());
                    let k = if wide { kind::ENUM64 } else { kind::ENUM };
                    rec(&mut t, strs.add(name), k, *signed, values.len(), *size);
                    for (vn, v) in values {
                        w(&mut t, strs.add(vn));
                        w(&mut t, *v as u32);
                        if wide {
                            w(&mut t, (*v >> 32) as u32);
                        }
                    }
                }
                Node::Array { elem, dims } => {
                    let dims: &[u32] = if dims.is_empty() { &[0] } else { dims };
                    // Dimension k's element is the array of dimension
                    // k + 1 (the next id), the innermost's the element type.
                    for (k, n) in dims.iter().enumerate() {
                        rec(&mut t, 0, kind::ARRAY, false, 0, 0);
                        let inner = if k + 1 < dims.len() {
                            node_id(i) + k as u32 + 1
                        } else {
                            id(elem)
                        };
                        w(&mut t, inner);
                        w(&mut t, node_id(self.index));
                        w(&mut t, *n);
                    }
                }
                Node::Proto {
                    ret,
                    params,
                    variadic,
                } => {
                    let dots = *variadic && params.len() < MAX_VLEN;
                    let n = params.len() + usize::from(dots);
                    rec(&mut t, 0, kind::FUNC_PROTO, false, n, id(ret));
                    for (pn, r) in params {
                        w(&mut t, strs.add(pn));
                        w(&mut t, id(r));
                    }
                    if dots {
                        w(&mut t, 0);
                        w(&mut t, 0);
                    }
                }
                Node::Func {
                    name,
                    proto,
                    global,
                } => rec(
                    &mut t,
                    strs.add(name),
                    kind::FUNC,
                    false,
                    usize::from(*global),
                    node_id(*proto),
                ),
            }
        }
        let tlen = u32::try_from(t.len()).ok()?;
        let slen = u32::try_from(strs.bytes.len()).ok()?;
        let mut out = Vec::with_capacity(24 + t.len() + strs.bytes.len());
        out.extend_from_slice(&0xeb9fu16.to_le_bytes());
        out.push(1);
        out.push(0);
        for v in [24u32, 0, tlen, tlen, slen] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&t);
        out.extend_from_slice(&strs.bytes);
        Some(out)
    }
}

/// A BTF string section, each string once.
struct StrTab {
    bytes: Vec<u8>,
    at: HashMap<String, u32>,
}

impl Default for StrTab {
    fn default() -> Self {
        StrTab {
            bytes: vec![0],
            at: HashMap::new(),
        }
    }
}

impl StrTab {
    /// The offset of `s` (0 for "").
    fn add(&mut self, s: &str) -> u32 {
        if s.is_empty() {
            return 0;
        }
        if let Some(&o) = self.at.get(s) {
            return o;
        }
        let o = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        self.at.insert(s.to_string(), o);
        o
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::process::Command;

    /// A program with a function taking an int, a pointer to a struct
    /// (bitfields, an array, a nested struct), a string and an enum;
    /// `PROG offsets` prints the struct's layout as the compiler laid it
    /// out, `PROG bytes` the bytes of the instance it passes.
    const SOURCE: &str = r#"
#include <stdio.h>
#include <stddef.h>
#include <string.h>
struct inner { short a; unsigned char b; };
struct rec {
    int id; long total; unsigned flag:3, mode:5; char name[12];
    struct inner in; struct rec *next; double ratio;
};
typedef struct rec rec_t;
enum color { RED, GREEN = 5, BLUE = -2 };
__attribute__((noinline)) long probe_me(int n, const rec_t *r, const char *s, enum color c)
{ return n + r->id + s[0] + c; }
__attribute__((noinline)) double takes_double(double d, int x) { return d * x; }
__attribute__((noinline)) int seven(int a, int b, int c, int d, int e, int f, int g)
{ return a + b + c + d + e + f + g; }
static rec_t r;
int main(int argc, char **argv) {
    r.id = 7; r.total = -9; r.flag = 5; r.mode = 19; strcpy(r.name, "nm");
    r.in.a = -4; r.in.b = 200; r.ratio = 0.5;
    if (argc > 1 && !strcmp(argv[1], "offsets")) {
        printf("%zu %zu %zu %zu %zu %zu %zu %zu\n", offsetof(rec_t, id), offsetof(rec_t, total),
               offsetof(rec_t, name), offsetof(rec_t, in), offsetof(rec_t, next),
               offsetof(rec_t, ratio), offsetof(struct inner, b), sizeof(rec_t));
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "bytes")) {
        for (size_t i = 0; i < sizeof r; i++) printf("%02x", ((unsigned char *)&r)[i]);
        printf("\n");
        return 0;
    }
    return (int)probe_me(argc, &r, argv[0], GREEN) + (int)takes_double(1.5, argc)
        + seven(argc, 1, 2, 3, 4, 5, 6);
}
"#;

    /// `SOURCE` built with `cc FLAGS` as `p` in a fresh directory; the
    /// program's path.
    pub(crate) fn build(tag: &str, flags: &[&str]) -> PathBuf {
        crate::testc::build_c(&format!("d2b-{tag}"), "p", SOURCE, flags)
    }

    /// What `PROG ARG` prints.
    pub(crate) fn run(prog: &Path, arg: &str) -> String {
        let out = Command::new(prog).arg(arg).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    }

    fn nowhere() -> PathBuf {
        PathBuf::from("/nonexistent-debug-root")
    }

    #[test]
    fn functions_and_struct_layouts_are_those_the_compiler_made() {
        for (tag, opt) in [("o0", "-O0"), ("o2", "-O2")] {
            let p = build(tag, &["-g", opt]);
            let btf = binary_btf(&p, &nowhere(), None).unwrap();
            let f = btf.find_func("probe_me").expect("probe_me");
            let ps = btf.params(f).unwrap();
            let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
            assert_eq!(names, ["n", "r", "s", "c"], "{opt}");
            let types: Vec<String> = ps.iter().map(|p| btf.type_name(p.ty)).collect();
            assert_eq!(types[0], "int");
            assert!(
                types[1].contains("rec_t") && types[1].ends_with('*'),
                "{types:?}"
            );
            assert!(
                types[2].contains("char") && types[2].ends_with('*'),
                "{types:?}"
            );
            let e = btf.skip_mods(ps[3].ty).unwrap();
            assert_eq!(btf.kind(e).unwrap(), kind::ENUM);
            assert!(btf.is_signed(e).unwrap(), "enum color has a negative value");
            assert_eq!(btf.type_name(btf.func_return(f).unwrap()), "long int");
            // takes_double's first parameter is a FLOAT.
            let d = btf.params(btf.find_func("takes_double").unwrap()).unwrap();
            assert_eq!(
                btf.kind(btf.skip_mods(d[0].ty).unwrap()).unwrap(),
                kind::FLOAT
            );
            // The struct behind `r`: every offset as offsetof says.
            let ptr = btf.skip_mods(ps[1].ty).unwrap();
            let rec = btf.skip_mods(btf.referenced(ptr).unwrap()).unwrap();
            assert_eq!(btf.kind(rec).unwrap(), kind::STRUCT);
            let want: Vec<u64> = run(&p, "offsets")
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            let bits = |s: u32, m: &str| btf.member(s, m).unwrap().unwrap().bit_offset;
            for (m, w) in ["id", "total", "name", "in", "next", "ratio"]
                .iter()
                .zip(&want)
            {
                assert_eq!(bits(rec, m), w * 8, "{opt} {m}");
            }
            let inner = btf
                .skip_mods(btf.member(rec, "in").unwrap().unwrap().ty)
                .unwrap();
            assert_eq!(bits(inner, "b"), want[6] * 8);
            assert_eq!(u64::from(btf.size(rec).unwrap()), want[7]);
            let flag = btf.member(rec, "flag").unwrap().unwrap();
            let mode = btf.member(rec, "mode").unwrap().unwrap();
            assert_eq!((flag.bitfield, mode.bitfield), (3, 5));
            assert_eq!(mode.bit_offset, flag.bit_offset + 3);
            let name = btf.member(rec, "name").unwrap().unwrap();
            assert_eq!(btf.type_size(name.ty).unwrap(), Some(12));
            // With a list, only the functions asked for, at their address.
            let addr = crate::ubinary::Binary::open(&p)
                .unwrap()
                .functions("probe_me")
                .unwrap()[0]
                .address;
            let only = binary_btf(&p, &nowhere(), Some(&[("probe_me".into(), addr)])).unwrap();
            assert!(only.find_func("probe_me").is_some());
            assert!(only.find_func("takes_double").is_none());
            let wrong = binary_btf(&p, &nowhere(), Some(&[("probe_me".into(), addr + 1)])).unwrap();
            assert!(wrong.find_func("probe_me").is_none());
            std::fs::remove_dir_all(p.parent().unwrap()).unwrap();
        }
    }

    #[test]
    fn debuginfo_is_found_by_build_id_and_debuglink_or_named_missing() {
        let p = build("split", &["-g", "-O0", "-Wl,--build-id=sha1"]);
        let dir = p.parent().unwrap().to_path_buf();
        let objcopy = |args: &[&str]| {
            let out = Command::new("objcopy")
                .current_dir(&dir)
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        objcopy(&["--only-keep-debug", "p", "p.debug"]);
        objcopy(&["--strip-debug", "p"]);
        // Stripped, no debug file anywhere: the error names the places.
        let e = find_debuginfo(&p, &dir.join("root"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("has no DWARF debuginfo") && e.contains(".build-id"),
            "{e}"
        );
        assert!(e.contains("-dbgsym") && e.contains("-g"), "{e}");
        // By build id, below the debug root.
        let data = std::fs::read(&p).unwrap();
        let id = object::File::parse(&*data)
            .unwrap()
            .build_id()
            .unwrap()
            .unwrap()
            .to_vec();
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let bdir = dir.join("root/.build-id").join(&hex[..2]);
        std::fs::create_dir_all(&bdir).unwrap();
        let by_id = bdir.join(format!("{}.debug", &hex[2..]));
        std::fs::copy(dir.join("p.debug"), &by_id).unwrap();
        assert_eq!(find_debuginfo(&p, &dir.join("root")).unwrap(), by_id);
        let btf = binary_btf(&p, &dir.join("root"), None).unwrap();
        assert_eq!(
            btf.params(btf.find_func("probe_me").unwrap())
                .unwrap()
                .len(),
            4
        );
        // By .gnu_debuglink, next to the binary.
        std::fs::remove_file(&by_id).unwrap();
        objcopy(&["--add-gnu-debuglink=p.debug", "p"]);
        assert_eq!(
            find_debuginfo(&p, &dir.join("root")).unwrap(),
            dir.join("p.debug")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn hostile_dwarf_gives_an_error_never_a_panic() {
        let p = build("hostile", &["-g", "-O0"]);
        let data = std::fs::read(&p).unwrap();
        let (start, len) = {
            let obj = object::File::parse(&*data).unwrap();
            let s = obj.section_by_name(".debug_info").unwrap();
            let (o, l) = s.file_range().unwrap();
            (o as usize, l as usize)
        };
        let bad = p.with_file_name("bad");
        let convert_with = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut d = data.clone();
            f(&mut d);
            std::fs::write(&bad, &d).unwrap();
            convert(&bad, None)
        };
        // A unit longer than the section, and an unknown DWARF version.
        let e =
            convert_with(&|d| d[start..start + 4].copy_from_slice(&0xffff_fff0u32.to_le_bytes()));
        assert!(e.is_err());
        let e = convert_with(&|d| d[start + 4..start + 6].copy_from_slice(&0x99u16.to_le_bytes()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad DWARF"), "{e}");
        // An abbreviation offset outside .debug_abbrev.
        assert!(convert_with(
            &|d| d[start + 8..start + 12].copy_from_slice(&u32::MAX.to_le_bytes())
        )
        .is_err());
        // Bytes overwritten all over the DIEs: an error or some types,
        // never a panic or a hang.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for round in 0..200 {
            let blob = convert_with(&|d| {
                let mut y = x;
                for _ in 0..1 + round % 8 {
                    y ^= y << 13;
                    y ^= y >> 7;
                    y ^= y << 17;
                    let at = start + 12 + (y as usize) % (len - 12);
                    d[at] = (y >> 32) as u8;
                }
            });
            if let Ok(b) = blob {
                // What converts is valid BTF.
                Btf::parse(b).unwrap();
            }
            x = x.wrapping_mul(6364136223846793005).wrapping_add(round);
        }
        std::fs::remove_dir_all(p.parent().unwrap()).unwrap();
    }
}
