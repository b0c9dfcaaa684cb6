//! Pretty-printing type nodes (`$var$`, `$var$$`, `$$parms$`): the
//! PRETTY nodes (abi.h `struct stp_pretty_node`, `vm_spec::program::PrettyNode`)
//! of one target value's type, built from the target's BTF at load time.
//!
//! stap decides at translation time, from DWARF, how each member prints
//! (tapsets.cxx, `dwarf_pretty_print`); stapvm's compiler has no kernel, so
//! the loader turns the BTF type of each `RelocKind::Pretty` use into a
//! small tree the module's PRETTY instruction walks (opcodes.h says how each
//! kind prints). The choices are stap's: a `char` (1-byte INT named `*char*`
//! or with `BTF_INT_CHAR`) prints as `'c'`, a pointer to one and an array of
//! them as a quoted string, any other pointer as `%p` (at the top a pointer
//! is followed to its pointee: `$task$` prints the task_struct), floats as
//! `?`, an enum as its number, a bitfield as a number; an anonymous union
//! member is labelled `<union>`, an anonymous struct `<class>` (sic, stap).
//!
//! A tree is built in post-order: every node's children come before it,
//! the root last, and a struct's members are consecutive. `$` needs only
//! the top level (nested aggregates print `{...}` / `[...]`); `$$` builds
//! nested aggregates down to `STP_PRETTY_MAX_DEPTH` levels, where the
//! module stops expanding, each struct type's member list once per level.
use crate::btf::{kind, Btf, BtfError};
use std::collections::HashMap;
use vm_spec::abi;
use vm_spec::program::PrettyNode;

/// How many times the top follows a pointer to a pointer.
const MAX_TOP_POINTERS: usize = 8;

/// The nodes of one value's type: `nodes.last()` is the root; a node's
/// `name` is an index into `names` or an `abi::STP_PRETTY_NAME_*` label,
/// `first` an index into `nodes`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    /// The nodes, children before parents.
    pub nodes: Vec<PrettyNode>,
    /// The member names the nodes use.
    pub names: Vec<String>,
}

/// Why a tree cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PrettyError {
    /// The BTF is malformed.
    #[error("{0}")]
    Btf(#[from] BtfError),
    /// More nodes or members than the module takes.
    #[error("{0} (the module's cap is {1})")]
    TooBig(&'static str, u32),
}

struct Builder<'a> {
    btf: &'a Btf,
    tree: Tree,
    names: HashMap<String, u32>,
    /// (struct type, levels left) -> (first member node, count).
    lists: HashMap<(u32, u32), (u32, u16)>,
}

/// The tree of a value of BTF type `ty` (`deep`: `$$`).
pub fn build(btf: &Btf, ty: u32, deep: bool) -> Result<Tree, PrettyError> {
    let mut b = Builder {
        btf,
        tree: Tree::default(),
        names: HashMap::new(),
        lists: HashMap::new(),
    };
    // At the top, pointers lead to what they point to (except void and
    // char: `%p`, a string).
    let mut t = btf.skip_mods(ty)?;
    for _ in 0..MAX_TOP_POINTERS {
        if btf.kind(t)? != kind::PTR {
            break;
        }
        let pointee = btf.skip_mods(btf.referenced(t)?)?;
        if pointee == 0 || is_char(btf, pointee)? {
            break;
        }
        t = pointee;
    }
    // A struct only declared here (FWD): its definition by name.
    if btf.kind(t)? == kind::FWD {
        if let Some(d) = definition(btf, t)? {
            t = d;
        }
    }
    // The module expands nested aggregates fewer than
    // STP_PRETTY_MAX_DEPTH levels down.
    let levels = if deep { abi::STP_PRETTY_MAX_DEPTH } else { 1 };
    let root = b.node(abi::STP_PRETTY_NAME_NONE, 0, t, levels, None)?;
    b.tree.nodes.push(root);
    if b.tree.nodes.len() > abi::STP_MAX_PRETTY_NODES as usize {
        return Err(PrettyError::TooBig(
            "pretty-printing nodes",
            abi::STP_MAX_PRETTY_NODES,
        ));
    }
    Ok(b.tree)
}

/// A 1-byte character type (stap's DW_ATE_signed_char / unsigned_char).
fn is_char(btf: &Btf, t: u32) -> Result<bool, BtfError> {
    Ok(btf.kind(t)? == kind::INT
        && btf.size(t)? == 1
        && (btf.int_encoding(t)? & 2 != 0 || btf.name(t)?.contains("char")))
}

/// The STRUCT or UNION of FWD `t`'s name, if BTF has one.
fn definition(btf: &Btf, t: u32) -> Result<Option<u32>, BtfError> {
    let name = btf.name(t)?;
    if name.is_empty() {
        return Ok(None);
    }
    for id in 1..btf.len() as u32 {
        if matches!(btf.kind(id)?, kind::STRUCT | kind::UNION) && btf.name(id)? == name {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

impl Builder<'_> {
    fn name(&mut self, n: &str) -> u32 {
        if let Some(&i) = self.names.get(n) {
            return i;
        }
        let i = self.tree.names.len() as u32;
        self.tree.names.push(n.to_string());
        self.names.insert(n.to_string(), i);
        i
    }

    /// The node (not yet pushed) of type `ty` named `name` at `offset`,
    /// its children pushed first; `levels`: aggregates still expanded
    /// below it (0: none). `bits`: a bitfield's (first bit, width) from
    /// `offset`.
    fn node(
        &mut self,
        name: u32,
        offset: u32,
        ty: u32,
        levels: u32,
        bits: Option<(u32, u32)>,
    ) -> Result<PrettyNode, PrettyError> {
        let btf = self.btf;
        let t = btf.skip_mods(ty)?;
        let mut n = PrettyNode {
            name,
            offset,
            first: 0,
            count: 0,
            kind: abi::STP_PK_UNKNOWN as u8,
            size: 0,
            bit_off: 0,
            bit_size: 0,
        };
        let scalar = |n: &mut PrettyNode, kind: u32, size: u32| {
            if matches!(size, 1 | 2 | 4 | 8) {
                n.kind = kind as u8;
                n.size = size as u8;
            }
        };
        match btf.kind(t)? {
            kind::INT | kind::ENUM | kind::ENUM64 => {
                let size = btf.size(t)?;
                let k = if bits.is_none() && is_char(btf, t)? {
                    abi::STP_PK_CHAR
                } else if btf.is_signed(t)? || btf.int_encoding(t)? & 4 != 0 {
                    abi::STP_PK_SIGNED
                } else {
                    abi::STP_PK_UNSIGNED
                };
                scalar(&mut n, k, size);
                if let (Some((bit, width)), true) = (bits, n.size != 0) {
                    // verify.c: bit + width <= 8 * size.
                    if bit + width <= 8 * u32::from(n.size) && width > 0 {
                        n.bit_off = bit as u8;
                        n.bit_size = width as u8;
                    } else {
                        n.kind = abi::STP_PK_UNKNOWN as u8;
                        n.size = 0;
                    }
                }
            }
            kind::PTR => {
                let pointee = btf.skip_mods(btf.referenced(t)?)?;
                n.kind = if pointee != 0 && is_char(btf, pointee)? {
                    abi::STP_PK_STRING
                } else {
                    abi::STP_PK_POINTER
                } as u8;
            }
            kind::FUNC_PROTO => n.kind = abi::STP_PK_FUNC as u8,
            kind::ARRAY => {
                let elem = btf.skip_mods(btf.referenced(t)?)?;
                if is_char(btf, elem)? {
                    n.kind = abi::STP_PK_CHARS as u8;
                } else {
                    n.kind = abi::STP_PK_ARRAY as u8;
                    let e = self.node(
                        abi::STP_PRETTY_NAME_NONE,
                        0,
                        elem,
                        levels.saturating_sub(1),
                        None,
                    )?;
                    n.first = self.push(e)?;
                }
            }
            kind::STRUCT | kind::UNION | kind::FWD => {
                n.kind = abi::STP_PK_STRUCT as u8;
                let def = if btf.kind(t)? == kind::FWD {
                    definition(btf, t)?
                } else {
                    Some(t)
                };
                if let (Some(d), true) = (def, levels > 0) {
                    (n.first, n.count) = self.members(d, levels)?;
                }
            }
            _ => {}
        }
        Ok(n)
    }

    fn push(&mut self, n: PrettyNode) -> Result<u32, PrettyError> {
        let i = self.tree.nodes.len() as u32;
        if i >= abi::STP_MAX_PRETTY_NODES {
            return Err(PrettyError::TooBig(
                "pretty-printing nodes",
                abi::STP_MAX_PRETTY_NODES,
            ));
        }
        self.tree.nodes.push(n);
        Ok(i)
    }

    /// The member list of struct/union `t` (`levels` > 0): (first, count).
    fn members(&mut self, t: u32, levels: u32) -> Result<(u32, u16), PrettyError> {
        if let Some(&l) = self.lists.get(&(t, levels)) {
            return Ok(l);
        }
        let ms = self.btf.members(t)?;
        if ms.len() > abi::STP_MAX_PRETTY_MEMBERS as usize {
            return Err(PrettyError::TooBig(
                "members in one struct",
                abi::STP_MAX_PRETTY_MEMBERS,
            ));
        }
        // The members' own children first, then the members together.
        let mut nodes = Vec::with_capacity(ms.len());
        for (name, m) in &ms {
            let mt = self.btf.skip_mods(m.ty)?;
            let label = if !name.is_empty() {
                self.name(name)
            } else {
                match self.btf.kind(mt)? {
                    kind::UNION => abi::STP_PRETTY_NAME_UNION,
                    kind::STRUCT => abi::STP_PRETTY_NAME_STRUCT,
                    _ => abi::STP_PRETTY_NAME_NONE,
                }
            };
            // A bitfield: the bytes of its type holding it, aligned to
            // their size (one that straddles them prints `?`).
            let (offset, bits) = if m.bitfield != 0 || m.bit_offset % 8 != 0 {
                let size = self.btf.size(mt)?.clamp(1, 8);
                let width = match m.bitfield {
                    0 => size * 8,
                    w => w,
                };
                let unit = u64::from(size) * 8;
                let start = m.bit_offset / unit * unit;
                (start / 8, Some(((m.bit_offset - start) as u32, width)))
            } else {
                (m.bit_offset / 8, None)
            };
            let offset = u32::try_from(offset).unwrap_or(u32::MAX);
            let node = self.node(label, offset, m.ty, levels - 1, bits)?;
            nodes.push(node);
        }
        let first = self.tree.nodes.len() as u32;
        for n in nodes {
            self.push(n)?;
        }
        let l = (if ms.is_empty() { 0 } else { first }, ms.len() as u16);
        self.lists.insert((t, levels), l);
        Ok(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btf::tests::Builder;

    /// The root's kind, and each of its members' (label, kind, size).
    fn shape(t: &Tree) -> (u8, Vec<(String, u8, u8)>) {
        let root = t.nodes.last().expect("a root");
        let members = (root.first..root.first + u32::from(root.count))
            .map(|i| {
                let n = t.nodes[i as usize];
                let label = match n.name {
                    abi::STP_PRETTY_NAME_UNION => "<union>".to_string(),
                    abi::STP_PRETTY_NAME_STRUCT => "<class>".to_string(),
                    abi::STP_PRETTY_NAME_NONE => String::new(),
                    k => t.names[k as usize].clone(),
                };
                (label, n.kind, n.size)
            })
            .collect();
        (root.kind, members)
    }

    fn k(kind: u32) -> u8 {
        kind as u8
    }

    #[test]
    fn kinds_follow_stap() {
        let mut b = Builder::new();
        let int = b.int("int", 4, true);
        let uint = b.int("unsigned int", 4, false);
        let chr = b.int("char", 1, true);
        let u8t = b.int("unsigned char", 1, false);
        let pchar = b.ptr(chr);
        let pvoid = b.ptr(0);
        let arr = b.array(int, int, 4);
        let chars = b.array(u8t, int, 4);
        let inner = b.compound(false, "", 4, &[("x", int, 0, 0)]);
        let s = b.compound(
            false,
            "s",
            64,
            &[
                ("i", int, 0, 0),
                ("u", uint, 32, 0),
                ("c", chr, 64, 0),
                ("bf", uint, 72, 3),
                ("str", pchar, 128, 0),
                ("p", pvoid, 192, 0),
                ("a", arr, 256, 0),
                ("cs", chars, 384, 0),
                ("", inner, 416, 0),
            ],
        );
        let ps = b.ptr(s);
        let pps = b.ptr(ps);
        let btf = Btf::parse(b.build()).unwrap();
        let t = build(&btf, s, false).unwrap();
        let (root, members) = shape(&t);
        assert_eq!(root, k(abi::STP_PK_STRUCT));
        let want: Vec<(String, u8, u8)> = [
            ("i", abi::STP_PK_SIGNED, 4),
            ("u", abi::STP_PK_UNSIGNED, 4),
            ("c", abi::STP_PK_CHAR, 1),
            ("bf", abi::STP_PK_UNSIGNED, 4),
            ("str", abi::STP_PK_STRING, 0),
            ("p", abi::STP_PK_POINTER, 0),
            ("a", abi::STP_PK_ARRAY, 0),
            ("cs", abi::STP_PK_CHARS, 0),
            ("<class>", abi::STP_PK_STRUCT, 0),
        ]
        .iter()
        .map(|(n, kd, sz)| (n.to_string(), k(*kd), *sz))
        .collect();
        assert_eq!(members, want);
        // The bitfield: bits 8..11 of the int at byte 8; `$` leaves the
        // anonymous struct unexpanded (no members built).
        let bf = t.nodes[(t.nodes.last().unwrap().first + 3) as usize];
        assert_eq!((bf.offset, bf.bit_off, bf.bit_size), (8, 8, 3));
        let anon = t.nodes[(t.nodes.last().unwrap().first + 8) as usize];
        assert_eq!((anon.offset, anon.count), (52, 0));
        // `$$` builds it; children always come before their parent.
        let deep = build(&btf, s, true).unwrap();
        let anon = deep.nodes[(deep.nodes.last().unwrap().first + 8) as usize];
        assert_eq!(anon.count, 1);
        for (i, n) in deep.nodes.iter().enumerate() {
            if n.count != 0 || n.kind == k(abi::STP_PK_ARRAY) {
                assert!(n.first as usize + usize::from(n.count) <= i, "node {i}");
            }
        }
        // At the top, pointers lead to the struct; char * stays a string.
        assert_eq!(build(&btf, pps, false).unwrap(), t);
        assert_eq!(
            shape(&build(&btf, pchar, false).unwrap()).0,
            k(abi::STP_PK_STRING)
        );
        assert_eq!(
            shape(&build(&btf, pvoid, false).unwrap()).0,
            k(abi::STP_PK_POINTER)
        );
        assert_eq!(
            shape(&build(&btf, chars, false).unwrap()).0,
            k(abi::STP_PK_CHARS)
        );
    }

    #[test]
    fn the_running_kernel_s_task_struct() {
        // The host's BTF, when it has one (the loader reads the same file).
        let Ok(Ok(btf)) = Btf::vmlinux() else { return };
        let task = (1..btf.len() as u32)
            .find(|&id| {
                btf.kind(id).ok() == Some(kind::STRUCT) && btf.name(id).ok() == Some("task_struct")
            })
            .expect("task_struct in vmlinux BTF");
        let t = build(&btf, task, false).unwrap();
        let (root, members) = shape(&t);
        assert_eq!(root, k(abi::STP_PK_STRUCT));
        let find = |n: &str| members.iter().find(|m| m.0 == n).cloned();
        assert_eq!(find("comm"), Some(("comm".into(), k(abi::STP_PK_CHARS), 0)));
        assert_eq!(find("pid"), Some(("pid".into(), k(abi::STP_PK_SIGNED), 4)));
        assert_eq!(find("fs").map(|m| m.1), Some(k(abi::STP_PK_POINTER)));
        // `$$` of the whole task_struct stays inside the module's caps.
        let deep = build(&btf, task, true).unwrap();
        assert!(deep.nodes.len() > t.nodes.len());
        assert!(deep.nodes.len() <= abi::STP_MAX_PRETTY_NODES as usize);
    }
}
