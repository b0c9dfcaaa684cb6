//! Lowering of `try { body } catch [(msg)] { handler }` (a child module
//! of `lower`, so it shares the handler generator `Gen`).
//!
//! The VM keeps one armed catch per frame (opcodes.h, TRY / TRYEND), so
//! the code keeps "the armed catch is the innermost enclosing try's"
//! everywhere:
//!
//! ```text
//!     TRY m, ->H          arm: s[m] := "", errors go to H
//!     body
//!     TRY outer / TRYEND  back to the enclosing try's catch (or none)
//!     JMP ->E
//! H:  TRY outer           the VM disarmed on catching: re-arm the outer
//!     SMOV msg, m         catch (msg) only
//!     handler
//! E:
//! ```
//!
//! `break` / `continue` leaving a loop from inside a try body re-arm the
//! catch of the innermost try around that loop first (`restore_for_jump`);
//! `next` and `return` end the frame, and its catch with it. The message
//! register `m` is a temporary of the whole statement, so `msg` keeps its
//! value when nothing fails (stap assigns it only on a catch).
use super::Gen;
use crate::ast::*;
use vm_spec::abi;

/// One `try` being lowered.
#[derive(Debug, Default)]
pub(super) struct TryCtx {
    /// Its message register.
    reg: u8,
    /// TRY instructions (its own and re-arms) whose target is its handler.
    arms: Vec<usize>,
    /// Loops open around it (`Gen::loops.len()` at its start).
    loops: usize,
}

impl Gen<'_> {
    /// Arms the catch of try `i` of `self.tries` (target patched later), or
    /// disarms when `i` is `None`.
    fn arm(&mut self, i: Option<usize>) {
        match i.and_then(|i| self.tries.get(i).map(|t| (i, t.reg))) {
            Some((i, reg)) => {
                let at = self.emit(abi::STP_OP_TRY, reg, 0, 0, 0);
                self.tries[i].arms.push(at);
            }
            None => {
                self.emit(abi::STP_OP_TRYEND, 0, 0, 0, 0);
            }
        }
    }

    /// The `try` statement (see the module comment).
    pub(super) fn try_stmt(&mut self, body: &Stmt, var: Option<&(String, Span)>, handler: &Stmt) {
        let mark = self.mark();
        let reg = self.alloc_s();
        let at = self.emit(abi::STP_OP_TRY, reg, 0, 0, 0);
        self.tries.push(TryCtx {
            reg,
            arms: vec![at],
            loops: self.loops.len(),
        });
        self.stmt(body);
        let me = self.tries.pop().unwrap_or_default();
        let outer = self.tries.len().checked_sub(1);
        self.arm(outer);
        let over = self.jump(abi::STP_OP_JMP, 0);
        self.patch_here(&me.arms);
        if outer.is_some() {
            self.arm(outer);
        }
        if let Some((name, _)) = var {
            let l = self
                .res
                .body_locals(self.probe)
                .iter()
                .position(|(n, _)| n == name);
            match l {
                Some(l) => {
                    let d = self.local(l);
                    self.emit(abi::STP_OP_SMOV, d, reg, 0, 0);
                }
                None => self.fail("internal error: catch variable not a local"),
            }
        }
        self.stmt(handler);
        self.patch_here(&[over]);
        self.release(mark);
    }

    /// Before a `break` / `continue` of the innermost loop: when it leaves
    /// try bodies opened inside that loop, arm the catch of the innermost
    /// try around the loop (or none).
    pub(super) fn restore_for_jump(&mut self) {
        let Some(lp) = self.loops.len().checked_sub(1) else {
            return;
        };
        if self.tries.last().is_some_and(|t| t.loops > lp) {
            let outside = self.tries.iter().rposition(|t| t.loops <= lp);
            self.arm(outside);
        }
    }
}
