//! A small reader of BTF, the kernel's type information
//! (`/sys/kernel/btf/vmlinux`; format: Documentation/bpf/btf.rst): just
//! enough to find a function's parameters (FUNC → FUNC_PROTO), follow types
//! through typedef/const/volatile/restrict/type_tag, find struct and union
//! members (anonymous nested ones included) and name types for `-L`.
//! A module's BTF (`/sys/kernel/btf/<module>`) is split BTF on top of
//! vmlinux's: its type ids continue vmlinux's and its string offsets
//! continue vmlinux's string section (`Btf::parse_split`).
//!
//! The input is untrusted: every offset, length, type id and string is
//! checked; a bad blob gives `BtfError`, never a panic. Walks that could
//! cycle in a hostile blob (modifier chains, anonymous members) are bounded.
use std::collections::HashMap;
use thiserror::Error;

/// Where the running kernel publishes its BTF.
pub const VMLINUX_BTF: &str = "/sys/kernel/btf/vmlinux";
/// The directory of the kernel's BTF files: `vmlinux` and one per loaded
/// module that has BTF.
pub const BTF_DIR: &str = "/sys/kernel/btf";

const MAGIC: u16 = 0xeb9f;
/// Longest modifier/typedef chain followed.
const MAX_CHAIN: usize = 64;
/// Deepest nesting of anonymous members searched.
const MAX_ANON_DEPTH: usize = 16;

/// BTF kinds (`BTF_KIND_*`).
#[allow(missing_docs)]
pub mod kind {
    pub const INT: u8 = 1;
    pub const PTR: u8 = 2;
    pub const ARRAY: u8 = 3;
    pub const STRUCT: u8 = 4;
    pub const UNION: u8 = 5;
    pub const ENUM: u8 = 6;
    pub const FWD: u8 = 7;
    pub const TYPEDEF: u8 = 8;
    pub const VOLATILE: u8 = 9;
    pub const CONST: u8 = 10;
    pub const RESTRICT: u8 = 11;
    pub const FUNC: u8 = 12;
    pub const FUNC_PROTO: u8 = 13;
    pub const VAR: u8 = 14;
    pub const DATASEC: u8 = 15;
    pub const FLOAT: u8 = 16;
    pub const DECL_TAG: u8 = 17;
    pub const TYPE_TAG: u8 = 18;
    pub const ENUM64: u8 = 19;
}

/// Why a BTF blob cannot be used.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum BtfError {
    /// The header is short, has the wrong magic or bad section bounds.
    #[error("bad BTF header: {0}")]
    Header(&'static str),
    /// A type record runs past the type section or has an unknown kind.
    #[error("bad BTF type #{id}: {why}")]
    Type {
        /// The type id.
        id: u32,
        /// What is wrong.
        why: &'static str,
    },
    /// A type id out of range, or a walk that does not end.
    #[error("bad BTF type reference #{0}")]
    BadRef(u32),
}

/// One type record: its fixed part and where its trailing data starts.
#[derive(Debug, Clone, Copy)]
struct Rec {
    name_off: u32,
    info: u32,
    size_type: u32,
    /// Byte offset of the trailing data in `Btf::data`.
    extra: usize,
}

impl Rec {
    fn kind(&self) -> u8 {
        ((self.info >> 24) & 0x1f) as u8
    }
    fn vlen(&self) -> usize {
        (self.info & 0xffff) as usize
    }
    fn kflag(&self) -> bool {
        self.info >> 31 != 0
    }
}

/// A struct or union member, its offset summed over anonymous parents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    /// Offset from the start of the outer struct, in bits.
    pub bit_offset: u64,
    /// Bitfield size in bits (0: not a bitfield).
    pub bitfield: u32,
    /// Its type id.
    pub ty: u32,
}

/// A function parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Its name ("" when BTF has none).
    pub name: String,
    /// Its type id (0 for the `...` of a variadic function).
    pub ty: u32,
}

/// A parsed BTF blob.
#[derive(Debug)]
pub struct Btf {
    data: Vec<u8>,
    str_start: usize,
    str_end: usize,
    /// Index = type id; entry 0 is `void`.
    recs: Vec<Rec>,
    funcs: HashMap<String, u32>,
    /// Split BTF: the string section of the split part (start, end in
    /// `data`) and the length of the base's string section, where the
    /// split part's string offsets begin.
    split_strs: Option<(usize, usize, usize)>,
}

fn u32_at(d: &[u8], off: usize) -> Option<u32> {
    let b = d.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl Btf {
    /// Parses a blob (native little-endian BTF only).
    pub fn parse(data: Vec<u8>) -> Result<Btf, BtfError> {
        Self::parse_on(data, None)
    }

    /// Parses a module's split BTF on top of `base` (vmlinux's): the result
    /// holds both, type ids and string offsets as the module's blob uses
    /// them (its ids start at `base.len()`).
    pub fn parse_split(base: &Btf, data: Vec<u8>) -> Result<Btf, BtfError> {
        if base.split_strs.is_some() {
            return Err(BtfError::Header("the base of split BTF is itself split"));
        }
        Self::parse_on(data, Some(base))
    }

    /// Reads and parses the split BTF of loaded module `module` on `base`.
    /// `Ok(None)`: the module is not loaded, or has no BTF.
    pub fn module(base: &Btf, module: &str) -> std::io::Result<Option<Result<Btf, BtfError>>> {
        if module.is_empty() || module.contains(['/', '.']) || module == "vmlinux" {
            return Ok(None);
        }
        match std::fs::read(format!("{BTF_DIR}/{module}")) {
            Ok(d) => Ok(Some(Btf::parse_split(base, d))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn parse_on(data: Vec<u8>, base: Option<&Btf>) -> Result<Btf, BtfError> {
        let d = &data;
        if d.len() < 24 {
            return Err(BtfError::Header("shorter than the header"));
        }
        if u16::from_le_bytes([d[0], d[1]]) != MAGIC {
            return Err(BtfError::Header("bad magic (not little-endian BTF)"));
        }
        let field = |i: usize| u32_at(d, 4 + 4 * i).map(|v| v as usize).unwrap_or(0);
        let (hdr_len, type_off, type_len, str_off, str_len) =
            (field(0), field(1), field(2), field(3), field(4));
        if hdr_len < 24 || hdr_len > d.len() {
            return Err(BtfError::Header("bad header length"));
        }
        let body = d.len() - hdr_len;
        let section = |off: usize, len: usize| -> Result<(usize, usize), BtfError> {
            match off.checked_add(len) {
                Some(end) if end <= body => Ok((hdr_len + off, hdr_len + end)),
                _ => Err(BtfError::Header("section outside the blob")),
            }
        };
        let (t_start, t_end) = section(type_off, type_len)?;
        let (s_start, s_end) = section(str_off, str_len)?;
        let mut recs = vec![Rec {
            name_off: 0,
            info: 0,
            size_type: 0,
            extra: 0,
        }];
        // Split BTF: this blob's records follow the base's, its bytes
        // after the base's in `data`.
        let shift = base.map_or(0, |b| b.data.len());
        if let Some(b) = base {
            recs = b.recs.clone();
        }
        let mut pos = t_start;
        while pos < t_end {
            let id = recs.len() as u32;
            let bad = |why| BtfError::Type { id, why };
            if pos + 12 > t_end {
                return Err(bad("record runs past the type section"));
            }
            let rec = Rec {
                name_off: u32_at(d, pos).ok_or(bad("truncated"))?,
                info: u32_at(d, pos + 4).ok_or(bad("truncated"))?,
                size_type: u32_at(d, pos + 8).ok_or(bad("truncated"))?,
                extra: pos + 12,
            };
            let vlen = rec.vlen();
            let extra = match rec.kind() {
                kind::INT | kind::VAR | kind::DECL_TAG => 4,
                kind::PTR
                | kind::FWD
                | kind::TYPEDEF
                | kind::VOLATILE
                | kind::CONST
                | kind::RESTRICT
                | kind::FUNC
                | kind::FLOAT
                | kind::TYPE_TAG => 0,
                kind::ARRAY => 12,
                kind::STRUCT | kind::UNION | kind::DATASEC | kind::ENUM64 => 12 * vlen,
                kind::ENUM | kind::FUNC_PROTO => 8 * vlen,
                _ => return Err(bad("unknown kind")),
            };
            pos = rec.extra + extra;
            if pos > t_end {
                return Err(bad("record runs past the type section"));
            }
            recs.push(Rec {
                extra: rec.extra + shift,
                ..rec
            });
        }
        let mut btf = match base {
            None => Btf {
                data,
                str_start: s_start,
                str_end: s_end,
                recs,
                funcs: HashMap::new(),
                split_strs: None,
            },
            Some(b) => {
                let mut all = Vec::with_capacity(b.data.len() + data.len());
                all.extend_from_slice(&b.data);
                all.extend_from_slice(&data);
                Btf {
                    data: all,
                    str_start: b.str_start,
                    str_end: b.str_end,
                    recs,
                    funcs: HashMap::new(),
                    split_strs: Some((shift + s_start, shift + s_end, b.str_end - b.str_start)),
                }
            }
        };
        // The split part's functions win over the base's of the same name.
        let first = base.map_or(1, |b| b.recs.len());
        let mut funcs = base.map(|b| b.funcs.clone()).unwrap_or_default();
        let mut own = HashMap::new();
        for (id, r) in btf.recs.iter().enumerate().skip(first) {
            if r.kind() == kind::FUNC {
                if let Some(n) = btf.str_at(r.name_off) {
                    own.entry(n.to_string()).or_insert(id as u32);
                }
            }
        }
        funcs.extend(own);
        btf.funcs = funcs;
        Ok(btf)
    }

    /// A BTF with no type but `void` (and no function).
    pub fn empty() -> Btf {
        Btf {
            data: Vec::new(),
            str_start: 0,
            str_end: 0,
            recs: vec![Rec {
                name_off: 0,
                info: 0,
                size_type: 0,
                extra: 0,
            }],
            funcs: HashMap::new(),
            split_strs: None,
        }
    }

    /// Reads and parses the running kernel's BTF.
    pub fn vmlinux() -> std::io::Result<Result<Btf, BtfError>> {
        Ok(Btf::parse(std::fs::read(VMLINUX_BTF)?))
    }

    /// The NUL-terminated string at `off` in the string section (of
    /// split BTF: the base's below its length, the split part's above).
    fn str_at(&self, off: u32) -> Option<&str> {
        let (sec_start, sec_end, off) = match self.split_strs {
            Some((s, e, base_len)) if off as usize >= base_len => (s, e, off as usize - base_len),
            _ => (self.str_start, self.str_end, off as usize),
        };
        let start = sec_start.checked_add(off)?;
        if start >= sec_end {
            return None;
        }
        let s = self.data.get(start..sec_end)?;
        let n = s.iter().position(|&c| c == 0)?;
        std::str::from_utf8(&s[..n]).ok()
    }

    fn rec(&self, id: u32) -> Result<&Rec, BtfError> {
        self.recs.get(id as usize).ok_or(BtfError::BadRef(id))
    }

    /// Number of types, `void` included.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// Whether there are no types at all (not even `void`: never, for a
    /// parsed blob).
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// The kind of type `id` (0 for void).
    pub fn kind(&self, id: u32) -> Result<u8, BtfError> {
        Ok(self.rec(id)?.kind())
    }

    /// The name of type `id` ("" for anonymous types and void).
    pub fn name(&self, id: u32) -> Result<&str, BtfError> {
        let r = self.rec(id)?;
        Ok(if id == 0 {
            ""
        } else {
            self.str_at(r.name_off).unwrap_or("")
        })
    }

    /// The size in bytes of an INT, ENUM, ENUM64, STRUCT, UNION or FLOAT.
    pub fn size(&self, id: u32) -> Result<u32, BtfError> {
        Ok(self.rec(id)?.size_type)
    }

    /// Whether an INT is signed, or an ENUM/ENUM64 is (its kind_flag).
    pub fn is_signed(&self, id: u32) -> Result<bool, BtfError> {
        let r = self.rec(id)?;
        Ok(match r.kind() {
            kind::INT => u32_at(&self.data, r.extra).ok_or(BtfError::BadRef(id))? & (1 << 24) != 0,
            kind::ENUM | kind::ENUM64 => r.kflag(),
            _ => false,
        })
    }

    /// The type a PTR, TYPEDEF, modifier, FUNC or ARRAY element refers to.
    pub fn referenced(&self, id: u32) -> Result<u32, BtfError> {
        let r = self.rec(id)?;
        let t = if r.kind() == kind::ARRAY {
            u32_at(&self.data, r.extra).ok_or(BtfError::BadRef(id))?
        } else {
            r.size_type
        };
        self.rec(t)?;
        Ok(t)
    }

    /// Follows typedef, const, volatile, restrict and type_tag to the
    /// underlying type.
    pub fn skip_mods(&self, mut id: u32) -> Result<u32, BtfError> {
        for _ in 0..MAX_CHAIN {
            match self.kind(id)? {
                kind::TYPEDEF | kind::VOLATILE | kind::CONST | kind::RESTRICT | kind::TYPE_TAG => {
                    id = self.referenced(id)?
                }
                _ => return Ok(id),
            }
        }
        Err(BtfError::BadRef(id))
    }

    /// The FUNC named `name`.
    pub fn find_func(&self, name: &str) -> Option<u32> {
        self.funcs.get(name).copied()
    }

    /// The type of the VAR named `name` (a kernel global variable; vmlinux
    /// BTF built by pahole before 1.26 describes only per-CPU ones), by a
    /// scan of the records: only `@var` asks, once per use.
    pub fn find_var(&self, name: &str) -> Option<u32> {
        (1..self.len() as u32)
            .find(|&id| self.kind(id).ok() == Some(kind::VAR) && self.name(id).ok() == Some(name))
            .and_then(|id| self.referenced(id).ok())
    }

    /// Every FUNC named `name` (BTF may have several: static functions of
    /// different files, or a stray record of the same name), `find_func`'s
    /// first.
    pub fn funcs_named(&self, name: &str) -> Vec<u32> {
        let Some(first) = self.find_func(name) else {
            return Vec::new();
        };
        let mut out = vec![first];
        for id in 1..self.len() as u32 {
            if id != first
                && self.kind(id).ok() == Some(kind::FUNC)
                && self.name(id).ok() == Some(name)
            {
                out.push(id);
            }
        }
        out
    }

    /// The parameters of FUNC `func` (from its FUNC_PROTO).
    pub fn params(&self, func: u32) -> Result<Vec<Param>, BtfError> {
        if self.kind(func)? != kind::FUNC {
            return Err(BtfError::BadRef(func));
        }
        self.proto_params(self.referenced(func)?)
    }

    /// The parameters of tracepoint `name` as its probe functions take
    /// them: `(void *__data, <the tracepoint's prototype>)`, named.
    ///
    /// The names are the event's own TP_PROTO names where the kernel has
    /// a function with them: the tracepoint's iterator
    /// `__traceiter_NAME(void *__data, proto)` (5.10+), or its probe stub
    /// `__probestub_NAME` (6.5+). Otherwise the BPF wrapper
    /// `__bpf_trace_CLASS` names them; CLASS is `name` for a TRACE_EVENT,
    /// else the event class (DEFINE_EVENT): the wrapper whose parameter
    /// types are those of `btf_trace_NAME`'s prototype (unnamed). That
    /// search by types is the last resort: it cannot tell the event's
    /// class from another wrapper with the same types (for
    /// `sched_process_exit(struct task_struct *p)` it can find a wrapper
    /// naming its parameter `t` or `tsk`). None when BTF has none of these.
    pub fn tracepoint_params(&self, name: &str) -> Result<Option<Vec<Param>>, BtfError> {
        for prefix in ["__traceiter_", "__probestub_", "__bpf_trace_"] {
            let Some(f) = self.find_func(&format!("{prefix}{name}")) else {
                continue;
            };
            let ps = self.params(f)?;
            // An event's function names every parameter; one without
            // names (or without `__data`) is no source of names.
            if !ps.is_empty() && ps.iter().all(|p| !p.name.is_empty()) {
                return Ok(Some(ps));
            }
        }
        let want = format!("btf_trace_{name}");
        let Some(td) = (1..self.len() as u32).find(|&id| {
            self.kind(id).ok() == Some(kind::TYPEDEF) && self.name(id).ok() == Some(want.as_str())
        }) else {
            return Ok(None);
        };
        let ptr = self.referenced(td)?;
        if self.kind(ptr)? != kind::PTR {
            return Ok(None);
        }
        let types: Vec<u32> = self
            .proto_params(self.referenced(ptr)?)?
            .iter()
            .map(|p| p.ty)
            .collect();
        let mut classes: Vec<(&String, u32)> = self
            .funcs
            .iter()
            .filter(|(n, _)| n.starts_with("__bpf_trace_"))
            .map(|(n, &id)| (n, id))
            .collect();
        classes.sort();
        for (_, f) in classes {
            let ps = self.params(f)?;
            if ps.iter().map(|p| p.ty).eq(types.iter().copied()) {
                return Ok(Some(ps));
            }
        }
        Ok(None)
    }

    /// The parameters of FUNC_PROTO `proto` (names empty where BTF has
    /// none).
    fn proto_params(&self, proto: u32) -> Result<Vec<Param>, BtfError> {
        let r = *self.rec(proto)?;
        if r.kind() != kind::FUNC_PROTO {
            return Err(BtfError::BadRef(proto));
        }
        let mut out = Vec::with_capacity(r.vlen());
        for i in 0..r.vlen() {
            let off = r.extra + 8 * i;
            let name_off = u32_at(&self.data, off).ok_or(BtfError::BadRef(proto))?;
            let ty = u32_at(&self.data, off + 4).ok_or(BtfError::BadRef(proto))?;
            self.rec(ty)?;
            out.push(Param {
                name: self.str_at(name_off).unwrap_or("").to_string(),
                ty,
            });
        }
        Ok(out)
    }

    /// Member `name` of STRUCT/UNION `id`, searching anonymous struct and
    /// union members too; the offset is from the start of `id`.
    pub fn member(&self, id: u32, name: &str) -> Result<Option<Member>, BtfError> {
        self.member_in(id, name, 0)
    }

    fn member_in(&self, id: u32, name: &str, depth: usize) -> Result<Option<Member>, BtfError> {
        if depth > MAX_ANON_DEPTH {
            return Err(BtfError::BadRef(id));
        }
        for (mname, m) in self.members(id)? {
            if mname == name {
                return Ok(Some(m));
            }
            if mname.is_empty() {
                let inner = self.skip_mods(m.ty)?;
                if let Some(found) = self.member_in(inner, name, depth + 1)? {
                    return Ok(Some(Member {
                        bit_offset: found.bit_offset + m.bit_offset,
                        ..found
                    }));
                }
            }
        }
        Ok(None)
    }

    /// The direct members of STRUCT/UNION `id` in declaration order (an
    /// anonymous member is one member, named ""), each with its offset
    /// from the start of `id`; empty for any other kind.
    pub fn members(&self, id: u32) -> Result<Vec<(String, Member)>, BtfError> {
        let r = *self.rec(id)?;
        if !matches!(r.kind(), kind::STRUCT | kind::UNION) {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(r.vlen());
        for i in 0..r.vlen() {
            let off = r.extra + 12 * i;
            let bad = || BtfError::BadRef(id);
            let name_off = u32_at(&self.data, off).ok_or_else(bad)?;
            let ty = u32_at(&self.data, off + 4).ok_or_else(bad)?;
            let raw = u32_at(&self.data, off + 8).ok_or_else(bad)?;
            let (bit_offset, bitfield) = if r.kflag() {
                (raw & 0xff_ffff, raw >> 24)
            } else {
                (raw, 0)
            };
            out.push((
                self.str_at(name_off).unwrap_or("").to_string(),
                Member {
                    bit_offset: u64::from(bit_offset),
                    bitfield,
                    ty,
                },
            ));
        }
        Ok(out)
    }

    /// The return type of FUNC `func` (0 for void).
    pub fn func_return(&self, func: u32) -> Result<u32, BtfError> {
        if self.kind(func)? != kind::FUNC {
            return Err(BtfError::BadRef(func));
        }
        let proto = self.referenced(func)?;
        self.referenced(proto)
    }

    /// The encoding bits of an INT (`BTF_INT_SIGNED` 1, `BTF_INT_CHAR` 2,
    /// `BTF_INT_BOOL` 4); 0 for any other kind.
    pub fn int_encoding(&self, id: u32) -> Result<u32, BtfError> {
        let r = self.rec(id)?;
        Ok(match r.kind() {
            kind::INT => (u32_at(&self.data, r.extra).ok_or(BtfError::BadRef(id))? >> 24) & 0xf,
            _ => 0,
        })
    }

    /// C's `sizeof` of type `id` in bytes: a pointer is 8, an array its
    /// length times its element's size, typedefs and modifiers their
    /// type's; `None` for void, functions and incomplete types.
    pub fn type_size(&self, id: u32) -> Result<Option<u64>, BtfError> {
        let mut id = id;
        let mut scale = 1u64;
        for _ in 0..MAX_CHAIN {
            let r = *self.rec(id)?;
            match r.kind() {
                kind::INT
                | kind::ENUM
                | kind::ENUM64
                | kind::STRUCT
                | kind::UNION
                | kind::FLOAT => return Ok(scale.checked_mul(u64::from(r.size_type))),
                kind::PTR => return Ok(scale.checked_mul(8)),
                kind::ARRAY => {
                    let n = u32_at(&self.data, r.extra + 8).ok_or(BtfError::BadRef(id))?;
                    scale = match scale.checked_mul(u64::from(n)) {
                        Some(s) => s,
                        None => return Ok(None),
                    };
                    id = self.referenced(id)?;
                }
                kind::TYPEDEF | kind::VOLATILE | kind::CONST | kind::RESTRICT | kind::TYPE_TAG => {
                    id = self.referenced(id)?
                }
                _ => return Ok(None),
            }
        }
        Err(BtfError::BadRef(id))
    }

    /// A C spelling of type `id` (`struct file *`, `const char *`, `u64`).
    pub fn type_name(&self, id: u32) -> String {
        self.type_name_in(id, 0)
            .unwrap_or_else(|_| "<bad type>".to_string())
    }

    fn type_name_in(&self, id: u32, depth: usize) -> Result<String, BtfError> {
        if depth > MAX_CHAIN {
            return Err(BtfError::BadRef(id));
        }
        let name = self.name(id)?;
        let named = |prefix: &str| {
            if name.is_empty() {
                format!("{prefix}<anonymous>")
            } else {
                format!("{prefix}{name}")
            }
        };
        Ok(match self.kind(id)? {
            0 => "void".to_string(),
            kind::INT | kind::TYPEDEF | kind::FLOAT => name.to_string(),
            kind::STRUCT => named("struct "),
            kind::UNION => named("union "),
            kind::ENUM | kind::ENUM64 => named("enum "),
            kind::FWD => named(if self.rec(id)?.kflag() {
                "union "
            } else {
                "struct "
            }),
            kind::PTR => {
                let inner = self.type_name_in(self.referenced(id)?, depth + 1)?;
                if inner.ends_with('*') {
                    format!("{inner}*")
                } else {
                    format!("{inner} *")
                }
            }
            kind::CONST => format!(
                "const {}",
                self.type_name_in(self.referenced(id)?, depth + 1)?
            ),
            kind::VOLATILE => format!(
                "volatile {}",
                self.type_name_in(self.referenced(id)?, depth + 1)?
            ),
            kind::RESTRICT | kind::TYPE_TAG => {
                self.type_name_in(self.referenced(id)?, depth + 1)?
            }
            kind::ARRAY => {
                let n = u32_at(&self.data, self.rec(id)?.extra + 8).unwrap_or(0);
                format!(
                    "{}[{n}]",
                    self.type_name_in(self.referenced(id)?, depth + 1)?
                )
            }
            kind::FUNC_PROTO => "function".to_string(),
            _ => named(""),
        })
    }

    /// The names `member` finds in STRUCT/UNION `id`: its named members
    /// and those of its anonymous struct and union members (for
    /// suggestions when a member is missing).
    pub fn member_names(&self, id: u32) -> Result<Vec<String>, BtfError> {
        let mut out = Vec::new();
        self.member_names_in(id, 0, &mut out)?;
        Ok(out)
    }

    fn member_names_in(
        &self,
        id: u32,
        depth: usize,
        out: &mut Vec<String>,
    ) -> Result<(), BtfError> {
        if depth > MAX_ANON_DEPTH {
            return Err(BtfError::BadRef(id));
        }
        for (n, m) in self.members(id)? {
            match n.as_str() {
                "" => self.member_names_in(self.skip_mods(m.ty)?, depth + 1, out)?,
                _ => out.push(n),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds a BTF blob from type records (each the 12-byte fixed part plus
    /// its trailing data) and a string section.
    pub(crate) struct Builder {
        types: Vec<u8>,
        strs: Vec<u8>,
        next: u32,
        /// Split BTF: where this blob's string offsets start.
        str_base: u32,
    }

    impl Builder {
        pub(crate) fn new() -> Self {
            Builder {
                types: Vec::new(),
                strs: vec![0],
                next: 1,
                str_base: 0,
            }
        }
        /// A split blob on a base of `types` types (void included) and a
        /// string section of `str_len` bytes (no leading NUL, as libbpf
        /// writes module BTF).
        pub(crate) fn split(types: u32, str_len: u32) -> Self {
            Builder {
                types: Vec::new(),
                strs: Vec::new(),
                next: types,
                str_base: str_len,
            }
        }
        /// Length of the string section so far.
        pub(crate) fn str_len(&self) -> u32 {
            self.strs.len() as u32
        }
        pub(crate) fn s(&mut self, name: &str) -> u32 {
            if name.is_empty() {
                return 0;
            }
            let off = self.str_base + self.strs.len() as u32;
            self.strs.extend_from_slice(name.as_bytes());
            self.strs.push(0);
            off
        }
        fn push(
            &mut self,
            name: &str,
            kind: u8,
            kflag: bool,
            vlen: usize,
            st: u32,
            extra: &[u32],
        ) -> u32 {
            let n = self.s(name);
            let info = (u32::from(kind) << 24) | vlen as u32 | if kflag { 1 << 31 } else { 0 };
            for w in [n, info, st].iter().chain(extra) {
                self.types.extend_from_slice(&w.to_le_bytes());
            }
            self.next += 1;
            self.next - 1
        }
        pub(crate) fn int(&mut self, name: &str, bytes: u32, signed: bool) -> u32 {
            let enc = if signed { 1 << 24 } else { 0 };
            self.push(name, kind::INT, false, 0, bytes, &[enc | (bytes * 8)])
        }
        pub(crate) fn ptr(&mut self, to: u32) -> u32 {
            self.push("", kind::PTR, false, 0, to, &[])
        }
        pub(crate) fn modifier(&mut self, k: u8, name: &str, to: u32) -> u32 {
            self.push(name, k, false, 0, to, &[])
        }
        pub(crate) fn fwd(&mut self, name: &str) -> u32 {
            self.push(name, kind::FWD, false, 0, 0, &[])
        }
        /// Members: (name, type, bit offset, bitfield size).
        pub(crate) fn compound(
            &mut self,
            union: bool,
            name: &str,
            size: u32,
            members: &[(&str, u32, u32, u32)],
        ) -> u32 {
            let kflag = members.iter().any(|m| m.3 != 0);
            let mut extra = Vec::new();
            for &(n, t, off, bf) in members {
                extra.push(self.s(n));
                extra.push(t);
                extra.push(if kflag { (bf << 24) | off } else { off });
            }
            let k = if union { kind::UNION } else { kind::STRUCT };
            self.push(name, k, kflag, members.len(), size, &extra)
        }
        pub(crate) fn array(&mut self, elem: u32, index: u32, n: u32) -> u32 {
            self.push("", kind::ARRAY, false, 0, 0, &[elem, index, n])
        }
        pub(crate) fn func(&mut self, name: &str, ret: u32, params: &[(&str, u32)]) -> u32 {
            let mut extra = Vec::new();
            for &(n, t) in params {
                extra.push(self.s(n));
                extra.push(t);
            }
            let proto = self.push("", kind::FUNC_PROTO, false, params.len(), ret, &extra);
            self.push(name, kind::FUNC, false, 1, proto, &[])
        }
        /// A VAR (global linkage) of type `ty`.
        pub(crate) fn var(&mut self, name: &str, ty: u32) -> u32 {
            self.push(name, kind::VAR, false, 0, ty, &[1])
        }
        pub(crate) fn build(&self) -> Vec<u8> {
            let mut out = Vec::new();
            out.extend_from_slice(&MAGIC.to_le_bytes());
            out.extend_from_slice(&[1, 0]);
            for w in [
                24u32,
                0,
                self.types.len() as u32,
                self.types.len() as u32,
                self.strs.len() as u32,
            ] {
                out.extend_from_slice(&w.to_le_bytes());
            }
            out.extend_from_slice(&self.types);
            out.extend_from_slice(&self.strs);
            out
        }
    }

    /// struct inode { u64 pad; unsigned long i_ino; }
    /// struct path { void *mnt; struct dentry *dentry; }
    /// struct file { union { int a; long b; }; struct path f_path;
    ///               struct inode *f_inode; unsigned int f_flags:3; }
    /// ssize_t vfs_read(struct file *file, char *buf, size_t count, int pos)
    /// struct task { int tgid; char comm[16]; struct task *parent; }
    /// typedef struct task task_t
    pub(crate) fn sample() -> Vec<u8> {
        let mut b = Builder::new();
        let ulong = b.int("long unsigned int", 8, false); // 1
        let int = b.int("int", 4, true); // 2
        let long = b.int("long int", 8, true); // 3
        let chr = b.int("char", 1, true); // 4
        let inode = b.compound(
            false,
            "inode",
            16,
            &[("pad", ulong, 0, 0), ("i_ino", ulong, 64, 0)],
        );
        let pinode = b.ptr(inode);
        let dentry = b.fwd("dentry");
        let pdentry = b.ptr(dentry);
        let pvoid = b.ptr(0);
        let path = b.compound(
            false,
            "path",
            16,
            &[("mnt", pvoid, 0, 0), ("dentry", pdentry, 64, 0)],
        );
        let anon = b.compound(true, "", 8, &[("a", int, 0, 0), ("b", long, 0, 0)]);
        let file = b.compound(
            false,
            "file",
            48,
            &[
                ("", anon, 0, 0),
                ("f_path", path, 64, 0),
                ("f_inode", pinode, 192, 0),
                ("f_flags", int, 256, 3),
            ],
        );
        let cfile = b.modifier(kind::CONST, "", file);
        let pfile = b.ptr(cfile);
        let pchar = b.ptr(chr);
        let size_t = b.modifier(kind::TYPEDEF, "size_t", ulong);
        b.func(
            "vfs_read",
            long,
            &[
                ("file", pfile),
                ("buf", pchar),
                ("count", size_t),
                ("pos", int),
            ],
        );
        // For @cast: struct task { int tgid; char comm[16];
        // struct task *parent; }, typedef struct task task_t.
        let comm = b.array(chr, int, 16);
        // The pointer refers forward to the struct, the next id after it.
        let ptask = b.ptr(b.next + 1);
        let task = b.compound(
            false,
            "task",
            32,
            &[
                ("tgid", int, 0, 0),
                ("comm", comm, 32, 0),
                ("parent", ptask, 192, 0),
            ],
        );
        b.modifier(kind::TYPEDEF, "task_t", task);
        // For @var: int counter; struct task init_thing; volatile
        // unsigned long loads[3].
        b.var("counter", int);
        b.var("init_thing", task);
        let loads = b.array(ulong, int, 3);
        let vloads = b.modifier(kind::VOLATILE, "", loads);
        b.var("loads", vloads);
        b.build()
    }

    /// A module's split BTF on `sample()`: struct svc_rqst { unsigned int
    /// rq_xid; struct file *rq_file; } (struct file from the base) and
    /// int nfsd_dispatch(struct svc_rqst *rqstp, int status).
    pub(crate) fn split_sample() -> Vec<u8> {
        let base_blob = sample();
        let base = Btf::parse(base_blob.clone()).unwrap();
        let str_len = u32_at(&base_blob, 20).unwrap();
        let file = (1..base.len() as u32)
            .find(|&i| base.kind(i).unwrap() == kind::STRUCT && base.name(i).unwrap() == "file")
            .unwrap();
        let int = 2;
        let mut b = Builder::split(base.len() as u32, str_len);
        let uint = b.int("unsigned int", 4, false);
        let pfile = b.ptr(file);
        let rqst = b.compound(
            false,
            "svc_rqst",
            16,
            &[("rq_xid", uint, 0, 0), ("rq_file", pfile, 64, 0)],
        );
        let prqst = b.ptr(rqst);
        b.func("nfsd_dispatch", int, &[("rqstp", prqst), ("status", int)]);
        assert!(b.str_len() > 0);
        b.build()
    }

    #[test]
    fn split_btf_continues_the_base_ids_and_strings() {
        let base = Btf::parse(sample()).unwrap();
        let m = Btf::parse_split(&base, split_sample()).unwrap();
        assert!(m.len() > base.len());
        let f = m.find_func("nfsd_dispatch").unwrap();
        assert!(f as usize >= base.len());
        let ps = m.params(f).unwrap();
        let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["rqstp", "status"]);
        assert_eq!(m.type_name(ps[0].ty), "struct svc_rqst *");
        assert_eq!(m.type_name(ps[1].ty), "int");
        let rq = m.skip_mods(m.referenced(ps[0].ty).unwrap()).unwrap();
        let rf = m.member(rq, "rq_file").unwrap().unwrap();
        assert_eq!(rf.bit_offset, 64);
        // Through the module's type into the base's struct file.
        let file = m.skip_mods(m.referenced(rf.ty).unwrap()).unwrap();
        assert!((file as usize) < base.len());
        assert_eq!(m.member(file, "f_inode").unwrap().unwrap().bit_offset, 192);
        // The base's functions stay visible.
        assert!(m.find_func("vfs_read").is_some());
        // Split BTF on split BTF is refused.
        assert!(Btf::parse_split(&m, split_sample()).is_err());
    }

    #[test]
    fn finds_params_members_and_names() {
        let btf = Btf::parse(sample()).unwrap();
        let f = btf.find_func("vfs_read").unwrap();
        let ps = btf.params(f).unwrap();
        let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["file", "buf", "count", "pos"]);
        assert_eq!(btf.type_name(ps[0].ty), "const struct file *");
        assert_eq!(btf.type_name(ps[1].ty), "char *");
        assert_eq!(btf.type_name(ps[2].ty), "size_t");
        let file = btf.skip_mods(btf.referenced(ps[0].ty).unwrap()).unwrap();
        assert_eq!(btf.kind(file).unwrap(), kind::STRUCT);
        // Anonymous union member.
        let b = btf.member(file, "b").unwrap().unwrap();
        assert_eq!(b.bit_offset, 0);
        let ino = btf.member(file, "f_inode").unwrap().unwrap();
        assert_eq!(ino.bit_offset, 192);
        let inode = btf.skip_mods(btf.referenced(ino.ty).unwrap()).unwrap();
        assert_eq!(btf.member(inode, "i_ino").unwrap().unwrap().bit_offset, 64);
        assert_eq!(btf.member(file, "f_flags").unwrap().unwrap().bitfield, 3);
        assert_eq!(btf.member(file, "nope").unwrap(), None);
        let size_t = btf.skip_mods(ps[2].ty).unwrap();
        assert_eq!(
            (btf.size(size_t).unwrap(), btf.is_signed(size_t).unwrap()),
            (8, false)
        );
        assert!(btf.is_signed(ps[3].ty).unwrap());
    }

    #[test]
    fn refuses_bad_headers() {
        assert!(Btf::parse(vec![]).is_err());
        let mut b = sample();
        b[0] ^= 0xff;
        assert!(Btf::parse(b).is_err());
        let mut b = sample();
        b[12] = 0xff; // type_len
        assert!(Btf::parse(b).is_err());
    }

    /// Random and mutated blobs never panic, whatever the queries.
    #[test]
    fn hostile_bytes_never_panic() {
        let base = sample();
        let mut x: u64 = 0x9e3779b97f4a7c15;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..4000 {
            let mut b = if round % 4 == 0 {
                (0..(rnd() % 200) as usize).map(|_| rnd() as u8).collect()
            } else {
                base.clone()
            };
            if !b.is_empty() {
                for _ in 0..1 + rnd() % 6 {
                    let i = (rnd() as usize) % b.len();
                    b[i] = rnd() as u8;
                }
            }
            if round % 4 == 0 && b.len() >= 2 {
                b[0] = 0x9f;
                b[1] = 0xeb;
            }
            if let Ok(btf) = Btf::parse(b) {
                for id in 0..btf.len() as u32 + 2 {
                    let _ = btf.type_name(id);
                    let _ = btf.skip_mods(id);
                    let _ = btf.member(id, "i_ino");
                    let _ = btf.member(id, "b");
                    let _ = btf.params(id);
                    let _ = btf.is_signed(id);
                    let _ = btf.referenced(id);
                }
            }
        }
    }

    /// A DEFINE_EVENT tracepoint `ev(struct task *p)`: BTF has its
    /// unnamed `btf_trace_ev` prototype, another event's wrapper
    /// `__bpf_trace_aaa(void *__data, struct task *t)` of the same types
    /// and, when `iter`, the event's own `__traceiter_ev(__data, p)`.
    fn shared_class_tracepoint(iter: bool) -> Btf {
        let mut b = Builder::new();
        let int = b.int("int", 4, true);
        let task = b.compound(false, "task", 4, &[("pid", int, 0, 0)]);
        let ptask = b.ptr(task);
        let pvoid = b.ptr(0);
        b.func("__bpf_trace_aaa", 0, &[("__data", pvoid), ("t", ptask)]);
        let proto = b.push("", kind::FUNC_PROTO, false, 2, 0, &[0, pvoid, 0, ptask]);
        let pproto = b.ptr(proto);
        b.modifier(kind::TYPEDEF, "btf_trace_ev", pproto);
        if iter {
            b.func("__traceiter_ev", int, &[("__data", pvoid), ("p", ptask)]);
        }
        Btf::parse(b.build()).unwrap()
    }

    fn tp_names(btf: &Btf, name: &str) -> Option<Vec<String>> {
        let ps = btf.tracepoint_params(name).unwrap()?;
        Some(ps.into_iter().map(|p| p.name).collect())
    }

    /// The event's own names win over a same-typed class wrapper's; the
    /// wrapper is the fallback when the kernel has no iterator.
    #[test]
    fn tracepoint_names_are_the_events_own() {
        let btf = shared_class_tracepoint(true);
        assert_eq!(tp_names(&btf, "ev").unwrap(), ["__data", "p"]);
        let btf = shared_class_tracepoint(false);
        assert_eq!(tp_names(&btf, "ev").unwrap(), ["__data", "t"]);
        assert_eq!(tp_names(&btf, "nope"), None);
    }

    /// Every loaded module's BTF on this machine parses as split BTF on
    /// vmlinux's and names its functions' parameters.
    #[test]
    fn parses_this_machines_module_btf() {
        let Ok(Ok(base)) = Btf::vmlinux() else { return };
        let Ok(dir) = std::fs::read_dir(BTF_DIR) else {
            return;
        };
        for e in dir.flatten().take(8) {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(Some(m)) = Btf::module(&base, &name) else {
                continue;
            };
            let m = m.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(m.len() >= base.len(), "{name}");
            let own = (base.len() as u32..m.len() as u32)
                .find(|&i| m.kind(i).unwrap() == kind::FUNC)
                .map(|f| m.params(f).unwrap());
            if let Some(ps) = own {
                for p in ps {
                    let _ = m.type_name(p.ty);
                }
            }
        }
    }

    /// The running machine's BTF, when it has one, parses and has the
    /// functions and structs every kernel has (no offsets asserted).
    #[test]
    fn parses_this_machines_vmlinux() {
        let Ok(Ok(btf)) = Btf::vmlinux() else { return };
        let f = btf.find_func("vfs_read").expect("vfs_read in BTF");
        let ps = btf.params(f).unwrap();
        assert_eq!(ps.first().map(|p| p.name.as_str()), Some("file"));
        let file = btf.skip_mods(btf.referenced(ps[0].ty).unwrap()).unwrap();
        assert!(btf.member(file, "f_inode").unwrap().is_some());
        // Anonymous union members of struct file (f_flags sits in one on
        // some kernels; f_path is direct on all).
        assert!(btf.member(file, "f_path").unwrap().is_some());
        // A DEFINE_EVENT of a shared class: the event's TP_PROTO names.
        if let Some(ps) = btf.tracepoint_params("sched_process_exit").unwrap() {
            // (6.16+ adds `group_dead`.)
            let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
            assert_eq!(names.get(..2), Some(&["__data", "p"][..]));
        }
    }
}
