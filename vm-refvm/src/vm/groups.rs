//! REMATCHS's group pass, MATCHED and NGROUPS, written from opcodes.h and
//! abi.h (`STP_RX_*`, `struct stp_regex_sub`), not from vm_str.c: a Pike VM
//! whose threads carry their own slot vectors (cloned, where the C core
//! saves and restores one), in priority order.
use super::*;

/// One regex's group program as the image holds it: SET arguments index
/// the program-wide REGEXSETS.
#[derive(Debug, Clone)]
pub(super) struct RefGroups {
    pub(super) insns: Vec<u32>,
    pub(super) nslots: usize,
}

/// The match REMATCHS recorded in this run: the slots and the subject.
#[derive(Debug, Clone)]
pub(super) struct RefMatch {
    pub(super) slots: Vec<Option<usize>>,
    pub(super) subject: Vec<u8>,
}

/// A thread: its pc and slots.
type Thread = (usize, Vec<Option<usize>>);

impl RefGroups {
    fn insn(&self, pc: usize) -> Result<(u32, usize), String> {
        let w = self
            .insns
            .get(pc)
            .copied()
            .ok_or_else(|| format!("group program pc {pc} of {}", self.insns.len()))?;
        Ok((w & abi::STP_RX_OP_MASK, (w >> abi::STP_RX_OP_BITS) as usize))
    }

    /// Appends to `list` the threads reached from `pc` at `pos` without
    /// consuming a byte, in priority order: JMP, SPLIT (pc + 1 first),
    /// SAVE, BOL, EOL are followed; SET and MATCH end a thread. `seen`
    /// holds the pcs already visited at this position.
    fn closure(
        &self,
        list: &mut Vec<Thread>,
        seen: &mut [bool],
        start: Thread,
        pos: usize,
        len: usize,
    ) -> Result<(), String> {
        let mut todo = vec![start];
        while let Some((mut pc, mut slots)) = todo.pop() {
            loop {
                if *seen
                    .get(pc)
                    .ok_or_else(|| format!("group program pc {pc} outside"))?
                {
                    break;
                }
                seen[pc] = true;
                let (op, arg) = self.insn(pc)?;
                match op {
                    abi::STP_RX_JMP => pc = arg,
                    abi::STP_RX_SPLIT => {
                        todo.push((arg, slots.clone()));
                        pc += 1;
                    }
                    abi::STP_RX_SAVE => {
                        *slots
                            .get_mut(arg)
                            .ok_or_else(|| format!("slot {arg} of {}", self.nslots))? = Some(pos);
                        pc += 1;
                    }
                    abi::STP_RX_BOL if pos == 0 => pc += 1,
                    abi::STP_RX_EOL if pos == len => pc += 1,
                    abi::STP_RX_BOL | abi::STP_RX_EOL => break,
                    abi::STP_RX_SET | abi::STP_RX_MATCH => {
                        list.push((pc, slots));
                        break;
                    }
                    _ => return Err(format!("group operation {op}")),
                }
            }
        }
        Ok(())
    }

    /// The group pass over `s`: the recorded slots, or `None` when the
    /// program finds no match. Takes one unit of `fuel` per position
    /// (`Err(None)` when none is left); `Err(Some(_))` is a hole.
    pub(super) fn run(
        &self,
        sets: &[[u8; 32]],
        s: &[u8],
        fuel: &mut u64,
    ) -> Result<Option<Vec<Option<usize>>>, Option<String>> {
        let n = self.insns.len();
        let mut list: Vec<Thread> = Vec::new();
        // The pcs visited at this position (by the closures of the threads
        // stepped into it, then of the new start).
        let mut seen = vec![false; n];
        let mut best: Option<(usize, usize, Vec<Option<usize>>)> = None;
        for pos in 0..=s.len() {
            if *fuel == 0 {
                return Err(None);
            }
            *fuel -= 1;
            if best.is_none() {
                let fresh = (0, vec![None; self.nslots]);
                self.closure(&mut list, &mut seen, fresh, pos, s.len())
                    .map_err(Some)?;
            }
            let mut next: Vec<Thread> = Vec::new();
            let mut next_seen = vec![false; n];
            for (pc, slots) in list {
                // Slot 0 unset counts as after every position.
                let start = slots.first().copied().flatten().unwrap_or(usize::MAX);
                if matches!(&best, Some((b, _, _)) if start > *b) {
                    continue; // started after the known match
                }
                let (op, arg) = self.insn(pc).map_err(Some)?;
                if op == abi::STP_RX_MATCH {
                    let better = match &best {
                        None => true,
                        Some((b, e, _)) => start < *b || pos > *e,
                    };
                    if better {
                        best = Some((start, pos, slots));
                    }
                } else if let Some(&c) = s.get(pos) {
                    let set = sets
                        .get(arg)
                        .ok_or_else(|| Some(format!("set {arg} of {}", sets.len())))?;
                    if set[usize::from(c >> 3)] & (1 << (c & 7)) != 0 {
                        self.closure(&mut next, &mut next_seen, (pc + 1, slots), pos + 1, s.len())
                            .map_err(Some)?;
                    }
                }
            }
            list = next;
            seen = next_seen;
            if best.is_some() && list.is_empty() {
                break;
            }
        }
        Ok(best.map(|(_, _, slots)| slots))
    }
}

impl RefMatch {
    /// MATCHED: group `n`'s bytes, "" when it took no part; the error
    /// (SUBEXP_RANGE) when there is no such group.
    pub(super) fn group(&self, n: i64) -> Result<Vec<u8>, u32> {
        let k = usize::try_from(n)
            .ok()
            .filter(|&k| k < self.slots.len() / 2)
            .ok_or(abi::STP_RTE_SUBEXP_RANGE)?;
        Ok(match (self.slots[2 * k], self.slots[2 * k + 1]) {
            (Some(a), Some(b)) if a <= b => self.subject.get(a..b).unwrap_or_default().to_vec(),
            _ => Vec::new(),
        })
    }
}
