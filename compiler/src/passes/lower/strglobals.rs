//! String globals (`global s`, `global s = "x"` used as a string): each one
//! is a one-entry map of the same name (one long key, always 0, a string
//! value), placed after the script's arrays in the MAPS section.
//!
//! Why a map and not a seqcount'ed slot (docs/design.md §7): the map's
//! bounded trylock already gives what a string shared between CPUs needs —
//! a reader never sees a half-written string, every wait is bounded by
//! `MAXTRYLOCK`, the storage is preallocated at LOAD — with no new opcode,
//! verifier rule or ioctl; and it is stap's own rule (every global is read-
//! or write-locked, a lock that cannot be taken skips the probe). An absent
//! entry reads as "" (MGETS), `delete s` is MCLEAR, and user space prints a
//! written-and-never-read string global at exit from MAP_READ as
//! `name="value"`.
//!
//! A child module of `lower`: it extends the lowering of one handler.
use super::*;

/// True when global `g` is a string scalar (not an array, not a statistic).
pub(super) fn is_string_scalar(res: &Resolved, types: &Types, g: usize) -> bool {
    res.globals.get(g).is_some_and(|x| !x.array)
        && types.globals.get(g) == Some(&Ty::Str)
        && !res.stats.iter().any(|s| s.global == g)
}

/// The map id of string scalar `g`: after every array, in declaration
/// order of the string scalars.
pub(super) fn map_id(res: &Resolved, types: &Types, g: usize) -> i32 {
    let arrays = res.globals.iter().filter(|x| x.array).count();
    let before = (0..g).filter(|&i| is_string_scalar(res, types, i)).count();
    (arrays + before) as i32
}

/// The map declarations of the string scalars, in map-id order.
pub(super) fn decls(res: &Resolved, types: &Types) -> Vec<MapDecl> {
    (0..res.globals.len())
        .filter(|&g| is_string_scalar(res, types, g))
        .map(|g| MapDecl {
            name: res.globals[g].name.clone(),
            keys: vec![ArgKind::Int],
            value: MapValue::Str,
            capacity: 1,
            sized: false,
            wrap: false,
            // Printed through the global's entry (GlobalType::Str).
            print_at_exit: false,
            stat: 0,
        })
        .collect()
}

/// The code of `global s = "text"` in the initialiser handler (registers
/// r0 and s0): SLDK, LDI, MSETS.
pub(super) fn init_code(map: i32, text_idx: i32) -> [Insn; 3] {
    [
        Insn::new(abi::STP_OP_SLDK, 0, 0, 0, text_idx),
        Insn::new(abi::STP_OP_LDI, 0, 0, 0, 0),
        Insn::new(abi::STP_OP_MSETS, 0, 0, 0, map),
    ]
}

impl Gen<'_> {
    /// The map of global `g` when it is a string scalar.
    pub(super) fn sglobal(&self, g: usize) -> Option<i32> {
        is_string_scalar(self.res, self.types, g).then(|| map_id(self.res, self.types, g))
    }

    /// A register holding the key 0 of a string global's entry.
    fn sglobal_key(&mut self) -> u8 {
        let k = self.alloc_r();
        self.load_int(k, 0);
        k
    }

    /// `dst := s` for string global `g` ("" when never written).
    pub(super) fn sglobal_load(&mut self, g: usize, dst: u8) {
        let Some(map) = self.sglobal(g) else {
            self.fail("internal error: not a string global");
            return;
        };
        let k = self.sglobal_key();
        self.emit(abi::STP_OP_MGETS, dst, k, 0, map);
    }

    /// `s = rhs` or `s .= rhs` for string global `g`; the register holding
    /// the value assigned. `.=` reads and writes in two locked steps, as
    /// for array elements.
    pub(super) fn sglobal_assign(&mut self, g: usize, op: AssignOp, rhs: &Expr) -> u8 {
        use abi::*;
        let Some(map) = self.sglobal(g) else {
            self.fail("internal error: not a string global");
            return 0;
        };
        let v = self.alloc_s();
        if op == AssignOp::Concat {
            let r = self.str(rhs);
            let k = self.sglobal_key();
            self.emit(STP_OP_MGETS, v, k, 0, map);
            let t = self.alloc_s();
            self.emit(STP_OP_SCAT, t, v, r, 0);
            self.emit(STP_OP_SMOV, v, t, 0, 0);
            self.emit(STP_OP_MSETS, v, k, 0, map);
        } else {
            self.str_into(rhs, v);
            let k = self.sglobal_key();
            self.emit(STP_OP_MSETS, v, k, 0, map);
        }
        v
    }

    /// `delete s` of string global `g`: the entry goes, reads give "".
    pub(super) fn sglobal_delete(&mut self, g: usize) -> bool {
        match self.sglobal(g) {
            Some(map) => {
                self.emit(abi::STP_OP_MCLEAR, 0, 0, 0, map);
                true
            }
            None => false,
        }
    }
}
