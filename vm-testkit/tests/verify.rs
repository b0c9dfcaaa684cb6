//! The verifier (kmod/core/verify.c built for user space, through
//! `vm_spec::core::verify_image`: the code stapvm.ko runs on LOAD and the
//! compiler's last pass). A table of images, each refused for one reason
//! with its own `STP_VERR_*` code, in the manner of the eBPF selftests'
//! verifier cases; a check that every code of `STP_VERIFY_ERRORS` has a
//! case; accepted programs; generated programs and seeded mutations of
//! their images, where the verifier must reach its deep checks and every
//! image it accepts must run on the C core without harm.
mod common;
use common::*;
use vm_spec::abi::*;
use vm_spec::core::{host_fail_next_allocs, verify_image, VerifiedInfo, VerifyError};
use vm_spec::program::*;
use vm_spec::tables::imm_pack;
use vm_spec::tables::VERIFY_ERRORS;
use vm_testkit::host::HostSession;
use vm_testkit::HostEnv;

fn ok_image() -> Vec<u8> {
    build(&begin(1, 0, vec![i(STP_OP_LDI, 0, 0, 0, 1), RET]))
}

/// One verifier case: a name, the image, the expected code name and a
/// piece of the expected message.
struct Case {
    name: &'static str,
    image: Vec<u8>,
    code: &'static str,
    msg: &'static str,
}

fn case(name: &'static str, image: Vec<u8>, code: &'static str, msg: &'static str) -> Case {
    Case {
        name,
        image,
        code,
        msg,
    }
}

/// A byte mutation of the valid image, resealed (its checksum made right
/// again, so that the checks after the checksum are reached).
fn patched(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut img = ok_image();
    f(&mut img);
    vm_spec::image::seal(&mut img);
    img
}

/// A byte mutation of the valid image, not resealed.
fn corrupted(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut img = ok_image();
    f(&mut img);
    img
}

fn begin_code(nregs: u8, nsregs: u8, code: Vec<Insn>) -> Vec<u8> {
    build(&begin(nregs, nsregs, code))
}

fn cases() -> Vec<Case> {
    let mut v = vec![
        case("ok", ok_image(), "OK", ""),
        case("truncated", vec![0u8; 16], "TRUNCATED", "header alone"),
        case(
            "too big",
            vec![0u8; (STP_MAX_IMAGE_SIZE + 8) as usize],
            "TOO_BIG",
            "the cap",
        ),
        case(
            "bad magic",
            patched(|m| m[0] = b'X'),
            "BAD_MAGIC",
            "bad magic",
        ),
        case(
            "bad version",
            patched(|m| put16(m, OFF_VERSION, 1)),
            "BAD_VERSION",
            "version 1",
        ),
        case(
            "bad header size",
            patched(|m| put16(m, OFF_HDR_SIZE, 104)),
            "BAD_HEADER",
            "header size 104",
        ),
        case(
            "flags set",
            patched(|m| put32(m, OFF_FLAGS, 1)),
            "BAD_HEADER",
            "must be 0",
        ),
        case(
            "checksum wrong",
            corrupted(|m| {
                let sum = get32(m, OFF_CHECKSUM);
                put32(m, OFF_CHECKSUM, sum.wrapping_add(1))
            }),
            "BAD_CHECKSUM",
            "corrupt image (checksum)",
        ),
        case(
            "a code byte changed, not resealed",
            corrupted(|m| {
                let o = get32(m, OFF_SEC + 8 * STP_SEC_CODE as usize) as usize;
                m[o] ^= 1
            }),
            "BAD_CHECKSUM",
            "the bytes sum to",
        ),
        case(
            "total size lies",
            patched(|m| {
                let t = get32(m, OFF_TOTAL);
                put32(m, OFF_TOTAL, t + 8)
            }),
            "BAD_SIZE",
            "buffer has",
        ),
        case(
            "trailing bytes",
            patched(|m| m.extend_from_slice(&[0; 8])),
            "BAD_SIZE",
            "buffer has",
        ),
        case(
            "misaligned section",
            patched(|m| {
                let o = OFF_SEC + 8 * STP_SEC_STRDATA as usize;
                let off = get32(m, o);
                put32(m, o, off + 4);
            }),
            "BAD_SECTION",
            "not 8-byte aligned",
        ),
        case(
            "section past the end",
            patched(|m| {
                let o = OFF_SEC + 8 * STP_SEC_CODE as usize;
                put32(m, o + 4, 0x10000);
            }),
            "BAD_SECTION",
            "outside",
        ),
        case(
            "section inside the header",
            patched(|m| put32(m, OFF_SEC + 8 * STP_SEC_KONSTS as usize, 8)),
            "BAD_SECTION",
            "outside",
        ),
        case(
            "section size not whole entries",
            patched(|m| {
                let o = OFF_SEC + 8 * STP_SEC_CODE as usize;
                put32(m, o + 4, 12);
            }),
            "BAD_SECTION",
            "not a multiple",
        ),
        case(
            "overlapping sections",
            patched(|m| {
                let (code_off, code_size) = section(m, STP_SEC_CODE);
                let o = OFF_SEC + 8 * STP_SEC_KONSTS as usize;
                put32(m, o, code_off as u32);
                put32(m, o + 4, code_size as u32);
            }),
            "BAD_SECTION",
            "overlaps",
        ),
        case(
            "limit below its minimum",
            patched(|m| put32(m, OFF_LIMITS + 4 * STP_LIM_MAXACTION as usize, 0)),
            "BAD_LIMIT",
            "MAXACTION = 0",
        ),
        case(
            "limit above its maximum",
            patched(|m| put32(m, OFF_LIMITS + 4 * STP_LIM_MAXSTRINGLEN as usize, 5000)),
            "BAD_LIMIT",
            "MAXSTRINGLEN = 5000",
        ),
        case(
            "overload threshold above its interval",
            patched(|m| {
                put32(
                    m,
                    OFF_LIMITS + 4 * STP_LIM_STP_OVERLOAD_THRESHOLD as usize,
                    2_000_000_000,
                )
            }),
            "BAD_LIMIT",
            "STP_OVERLOAD_THRESHOLD = 2000000000 is above STP_OVERLOAD_INTERVAL = 1000000000",
        ),
        case(
            "ring pages not a power of two",
            patched(|m| put32(m, OFF_LIMITS + 4 * STP_LIM_RING_PAGES as usize, 6)),
            "BAD_LIMIT",
            "power of two",
        ),
        case(
            "too many globals",
            patched(|m| put32(m, OFF_NGLOBALS, STP_MAX_GLOBALS + 1)),
            "TOO_MANY",
            "nglobals",
        ),
        case(
            "too many instructions",
            {
                let mut code = vec![i(STP_OP_NOP, 0, 0, 0, 0); STP_MAX_INSNS as usize];
                code.push(RET);
                begin_code(0, 0, code)
            },
            "TOO_MANY",
            "ninsns",
        ),
        case(
            "empty handler",
            begin_code(0, 0, vec![]),
            "BAD_HANDLER",
            "empty or outside",
        ),
        case(
            "too many registers",
            begin_code(65, 0, vec![RET]),
            "BAD_HANDLER",
            "65 integer",
        ),
        case(
            "too many string registers",
            begin_code(0, 17, vec![RET]),
            "BAD_HANDLER",
            "17 string",
        ),
        case(
            "unknown context",
            {
                let mut p = begin(0, 0, vec![RET]);
                p.handlers[0].ctx = STP_CTX__ALL as u8;
                p.probes.clear();
                build(&p)
            },
            "BAD_HANDLER",
            "unknown context 11",
        ),
        case(
            "handler reserved byte",
            patched(|m| {
                let (h, _) = section(m, STP_SEC_HANDLERS);
                m[h + 15] = 1;
            }),
            "BAD_HANDLER",
            "reserved byte 1",
        ),
        case(
            "parameters in a probe handler",
            patched(|m| {
                let (h, _) = section(m, STP_SEC_HANDLERS);
                m[h + 11] = 1;
            }),
            "BAD_HANDLER",
            "not a function",
        ),
        case(
            "overlapping handlers",
            {
                let p = program(vec![
                    handler(STP_CTX_BEGIN, 0, 0, vec![RET]),
                    handler(STP_CTX_END, 0, 0, vec![RET]),
                ]);
                let mut m = build(&p);
                let (h, _) = section(&m, STP_SEC_HANDLERS);
                put32(&mut m, h + 16, 0);
                vm_spec::image::seal(&mut m);
                m
            },
            "BAD_HANDLER",
            "inside or before",
        ),
        case(
            "unknown probe kind",
            {
                let mut p = begin(0, 0, vec![RET]);
                p.probes[0].kind = 200;
                build(&p)
            },
            "BAD_PROBE",
            "unknown kind 200",
        ),
        case(
            "unknown probe flag",
            {
                let mut p = begin(0, 0, vec![RET]);
                p.probes[0].flags = (STP_PROBE_F__ALL + 1) as u8;
                build(&p)
            },
            "BAD_PROBE",
            "unknown flags",
        ),
        case(
            "probe of a missing handler",
            {
                let mut p = begin(0, 0, vec![RET]);
                p.probes[0].handler = 1;
                build(&p)
            },
            "BAD_PROBE",
            "names handler 1",
        ),
        case(
            "probe kind against handler context",
            {
                let mut p = begin(0, 0, vec![RET]);
                p.probes[0] = probe(STP_PROBE_KRETPROBE, 0);
                build(&p)
            },
            "BAD_PROBE",
            "needs a handler of context",
        ),
        case(
            "timer too fast",
            {
                let mut p = program(vec![handler(STP_CTX_TIMER, 0, 0, vec![RET])]);
                p.probes[0].period_ns = 1000;
                build(&p)
            },
            "BAD_PROBE",
            "below",
        ),
        case(
            "jiffies timer of 1 and of STP_MAX_TIMER_JIFFIES jiffies",
            {
                let mut p = program(vec![
                    handler(STP_CTX_TIMER, 0, 0, vec![RET]),
                    handler(STP_CTX_TIMER, 0, 0, vec![RET]),
                ]);
                p.probes[0].flags = STP_PROBE_F_JIFFIES as u8;
                p.probes[0].period_ns = 1;
                p.probes[1].flags = STP_PROBE_F_JIFFIES as u8;
                p.probes[1].period_ns = u64::from(STP_MAX_TIMER_JIFFIES);
                build(&p)
            },
            "OK",
            "",
        ),
        case(
            "jiffies timer of 0 jiffies",
            {
                let mut p = program(vec![handler(STP_CTX_TIMER, 0, 0, vec![RET])]);
                p.probes[0].flags = STP_PROBE_F_JIFFIES as u8;
                p.probes[0].period_ns = 0;
                build(&p)
            },
            "BAD_PROBE",
            "timer period 0 jiffies is outside [1, 1000000]",
        ),
        case(
            "jiffies timer above STP_MAX_TIMER_JIFFIES",
            {
                let mut p = program(vec![handler(STP_CTX_TIMER, 0, 0, vec![RET])]);
                p.probes[0].flags = STP_PROBE_F_JIFFIES as u8;
                p.probes[0].period_ns = u64::from(STP_MAX_TIMER_JIFFIES) + 1;
                build(&p)
            },
            "BAD_PROBE",
            "timer period 1000001 jiffies is outside",
        ),
        case(
            "jiffies flag on a kprobe",
            {
                let mut p = program(vec![handler(STP_CTX_KPROBE, 0, 0, vec![RET])]);
                p.probes[0].flags = STP_PROBE_F_JIFFIES as u8;
                build(&p)
            },
            "BAD_PROBE",
            "the jiffies flag is only for timers",
        ),
        case(
            "jiffies flag with the profile flag",
            {
                let mut p = program(vec![handler(STP_CTX_TIMER, 0, 0, vec![RET])]);
                p.probes[0].flags = (STP_PROBE_F_JIFFIES | STP_PROBE_F_PROFILE) as u8;
                p.probes[0].period_ns = 5;
                build(&p)
            },
            "BAD_PROBE",
            "without the profile flag",
        ),
        case(
            "randomize up to the period, ns and jiffies",
            {
                let mut p = program(vec![
                    handler(STP_CTX_TIMER, 0, 0, vec![RET]),
                    handler(STP_CTX_TIMER, 0, 0, vec![RET]),
                ]);
                p.probes[0].period_ns = 1_000_000;
                p.probes[0].randomize = 1_000_000;
                p.probes[1].flags = STP_PROBE_F_JIFFIES as u8;
                p.probes[1].period_ns = 10;
                p.probes[1].randomize = 3;
                build(&p)
            },
            "OK",
            "",
        ),
        case(
            "randomize above the period",
            {
                let mut p = program(vec![handler(STP_CTX_TIMER, 0, 0, vec![RET])]);
                p.probes[0].period_ns = 1_000_000;
                p.probes[0].randomize = 1_000_001;
                build(&p)
            },
            "BAD_PROBE",
            "randomize 1000001 is above the timer period 1000000",
        ),
        case(
            "randomize above a jiffies period",
            {
                let mut p = program(vec![handler(STP_CTX_TIMER, 0, 0, vec![RET])]);
                p.probes[0].flags = STP_PROBE_F_JIFFIES as u8;
                p.probes[0].period_ns = 2;
                p.probes[0].randomize = 3;
                build(&p)
            },
            "BAD_PROBE",
            "randomize 3 is above the timer period 2",
        ),
        case(
            "randomize on a kprobe",
            {
                let mut p = program(vec![handler(STP_CTX_KPROBE, 0, 0, vec![RET])]);
                p.probes[0].randomize = 1;
                build(&p)
            },
            "BAD_PROBE",
            "randomize is only for timers",
        ),
        case(
            "randomize with the profile flag",
            {
                let mut p = program(vec![handler(STP_CTX_TIMER, 0, 0, vec![RET])]);
                p.probes[0].flags = STP_PROBE_F_PROFILE as u8;
                p.probes[0].period_ns = 1_000_000;
                p.probes[0].randomize = 1;
                build(&p)
            },
            "BAD_PROBE",
            "randomize is only for timers, without the profile flag",
        ),
        case(
            "bad symbol character",
            {
                let mut p = program(vec![handler(STP_CTX_KPROBE, 0, 0, vec![RET])]);
                p.probes[0].target = ProbeTarget::Symbol {
                    name: "vfs read".into(),
                    offset: 0,
                };
                build(&p)
            },
            "BAD_PROBE",
            "not in [A-Za-z0-9_.$]",
        ),
        case(
            "symbol too long",
            {
                let mut p = program(vec![handler(STP_CTX_KPROBE, 0, 0, vec![RET])]);
                p.probes[0].target = ProbeTarget::Symbol {
                    name: "a".repeat(128),
                    offset: 0,
                };
                build(&p)
            },
            "BAD_PROBE",
            "1 to 127",
        ),
        case(
            "string with a NUL",
            {
                let mut p = begin(0, 0, vec![RET]);
                p.strings.push(b"a\0b".to_vec());
                build(&p)
            },
            "BAD_STRING",
            "NUL",
        ),
        case(
            "string of MAXSTRINGLEN bytes (the NUL counts)",
            {
                let mut p = begin(0, 0, vec![RET]);
                p.strings.push(vec![b'x'; 512]);
                build(&p)
            },
            "BAD_STRING",
            "MAXSTRINGLEN is 512",
        ),
        case(
            "string outside STRDATA",
            {
                let mut p = begin(0, 0, vec![RET]);
                p.strings.push(b"abc".to_vec());
                let mut m = build(&p);
                let (s, _) = section(&m, STP_SEC_STRS);
                put32(&mut m, s, 6);
                vm_spec::image::seal(&mut m);
                m
            },
            "BAD_STRING",
            "outside STRDATA",
        ),
        case(
            "format with too many arguments",
            {
                let mut p = begin(0, 0, vec![RET]);
                p.formats.push(Format {
                    text: String::new(),
                    args: vec![ArgKind::Int; 33],
                });
                build(&p)
            },
            "BAD_FORMAT",
            "33 arguments",
        ),
        case(
            "format kind bit past its arguments",
            {
                let mut p = begin(0, 0, vec![RET]);
                p.formats.push(Format {
                    text: String::new(),
                    args: vec![ArgKind::Int; 2],
                });
                let mut m = build(&p);
                let (f, _) = section(&m, STP_SEC_FORMATS);
                put32(&mut m, f + 4, 4);
                vm_spec::image::seal(&mut m);
                m
            },
            "BAD_FORMAT",
            "bits past",
        ),
        case(
            "unknown opcode",
            begin_code(0, 0, vec![i(STP_OP__COUNT, 0, 0, 0, 0), RET]),
            "BAD_OPCODE",
            "unknown opcode",
        ),
        case(
            "opcode 255",
            begin_code(0, 0, vec![Insn { op: 255, ..RET }, RET]),
            "BAD_OPCODE",
            "unknown opcode 255",
        ),
        case(
            "unused register operand set",
            begin_code(2, 0, vec![i(STP_OP_NOP, 1, 0, 0, 0), RET]),
            "BAD_OPERAND",
            "unused operand a",
        ),
        case(
            "unused immediate set",
            begin_code(0, 0, vec![i(STP_OP_RET, 0, 0, 0, 7)]),
            "BAD_OPERAND",
            "unused immediate",
        ),
        case(
            "helper without argument given b",
            begin_code(
                2,
                0,
                vec![i(STP_OP_CALLI, 0, 1, 0, STP_HLP_PID as i32), RET],
            ),
            "BAD_OPERAND",
            "unused operand b",
        ),
        case(
            "register out of range",
            begin_code(2, 0, vec![i(STP_OP_LDI, 2, 0, 0, 0), RET]),
            "BAD_REGISTER",
            "r2, handler has 2",
        ),
        case(
            "string register out of range",
            begin_code(0, 1, vec![i(STP_OP_SMOV, 1, 0, 0, 0), RET]),
            "BAD_REGISTER",
            "s1",
        ),
        case(
            "read before write",
            begin_code(3, 0, vec![i(STP_OP_ADD, 0, 1, 2, 0), RET]),
            "UNINIT_REGISTER",
            "r1 read before",
        ),
        case(
            "read after a write on one branch only",
            begin_code(
                2,
                0,
                vec![
                    i(STP_OP_LDI, 0, 0, 0, 0),
                    i(STP_OP_JZ, 0, 0, 0, 1),
                    i(STP_OP_LDI, 1, 0, 0, 5),
                    i(STP_OP_MOV, 0, 1, 0, 0),
                    RET,
                ],
            ),
            "UNINIT_REGISTER",
            "r1 read before",
        ),
        case(
            "string read before write",
            begin_code(1, 1, vec![i(STP_OP_SLEN, 0, 0, 0, 0), RET]),
            "UNINIT_REGISTER",
            "s0 read before",
        ),
        case(
            "try/catch: the catch reads its message and what both paths write",
            begin_code(
                1,
                1,
                vec![
                    i(STP_OP_TRY, 0, 0, 0, 3),
                    i(STP_OP_LDI, 0, 0, 0, 1),
                    i(STP_OP_TRYEND, 0, 0, 0, 0),
                    i(STP_OP_JMP, 0, 0, 0, 1),
                    i(STP_OP_SLEN, 0, 0, 0, 0),
                    RET,
                ],
            ),
            "OK",
            "",
        ),
        case(
            "catch target reads a register only the try body writes",
            begin_code(
                2,
                1,
                vec![
                    i(STP_OP_TRY, 0, 0, 0, 2),
                    i(STP_OP_LDI, 0, 0, 0, 1),
                    i(STP_OP_TRYEND, 0, 0, 0, 0),
                    i(STP_OP_MOV, 1, 0, 0, 0),
                    RET,
                ],
            ),
            "UNINIT_REGISTER",
            "insn 3 (handler 0 pc 3): r0 read before",
        ),
        case(
            "two paths with different armed catches",
            begin_code(
                1,
                1,
                vec![
                    i(STP_OP_LDI, 0, 0, 0, 0),
                    i(STP_OP_JZ, 0, 0, 0, 1),
                    i(STP_OP_TRY, 0, 0, 0, 1),
                    i(STP_OP_NOP, 0, 0, 0, 0),
                    RET,
                ],
            ),
            "BAD_TRY",
            "insn 3 (handler 0 pc 3): reached with different armed catches",
        ),
        case(
            "loop back under another armed catch",
            begin_code(
                0,
                1,
                vec![
                    i(STP_OP_NOP, 0, 0, 0, 0),
                    i(STP_OP_TRY, 0, 0, 0, 1),
                    i(STP_OP_LOOP, 0, 0, 0, -2),
                    RET,
                ],
            ),
            "BAD_TRY",
            "loop back to pc 1 with another armed catch",
        ),
        case(
            "instruction at or after its armed catch target",
            begin_code(
                0,
                1,
                vec![i(STP_OP_TRY, 0, 0, 0, 0), i(STP_OP_NOP, 0, 0, 0, 0), RET],
            ),
            "BAD_TRY",
            "armed catch at pc 1 is not after it",
        ),
        case(
            "join of a jump and a fallthrough",
            begin_code(
                2,
                0,
                vec![
                    i(STP_OP_LDI, 0, 0, 0, 0),
                    i(STP_OP_JZ, 0, 0, 0, 2),
                    i(STP_OP_LDI, 1, 0, 0, 1),
                    i(STP_OP_JMP, 0, 0, 0, 1),
                    i(STP_OP_NOP, 0, 0, 0, 0),
                    i(STP_OP_MOV, 0, 1, 0, 0),
                    RET,
                ],
            ),
            "UNINIT_REGISTER",
            "insn 5 (handler 0 pc 5): r1 read before",
        ),
        case(
            "forward jump past the end",
            begin_code(0, 0, vec![i(STP_OP_JMP, 0, 0, 0, 1), RET]),
            "BAD_JUMP",
            "outside handler 0 [0, 2)",
        ),
        case(
            "forward jump backwards",
            begin_code(
                0,
                0,
                vec![i(STP_OP_NOP, 0, 0, 0, 0), i(STP_OP_JMP, 0, 0, 0, -2), RET],
            ),
            "BAD_JUMP",
            "forward jump",
        ),
        case(
            "LOOP forwards",
            begin_code(0, 0, vec![i(STP_OP_LOOP, 0, 0, 0, 0), RET]),
            "BAD_JUMP",
            "backward jump",
        ),
        case(
            "LOOP before the handler start",
            begin_code(0, 0, vec![i(STP_OP_LOOP, 0, 0, 0, -2), RET]),
            "BAD_JUMP",
            "backward jump to -1",
        ),
        case(
            "constant index out of range",
            begin_code(1, 0, vec![i(STP_OP_LDK, 0, 0, 0, 0), RET]),
            "BAD_INDEX",
            "constant index 0 out of range [0, 0)",
        ),
        case(
            "negative string index",
            begin_code(0, 1, vec![i(STP_OP_SLDK, 0, 0, 0, -1), RET]),
            "BAD_INDEX",
            "string index -1",
        ),
        case(
            "format index out of range",
            begin_code(0, 0, vec![i(STP_OP_PRINTF, 0, 0, 0, 0), RET]),
            "BAD_INDEX",
            "format index 0",
        ),
        case(
            "unknown helper",
            begin_code(
                1,
                0,
                vec![i(STP_OP_CALLI, 0, 0, 0, STP_HLP__COUNT as i32), RET],
            ),
            "BAD_INDEX",
            "helper index",
        ),
        case(
            "string helper called with CALLI",
            begin_code(
                1,
                0,
                vec![i(STP_OP_CALLI, 0, 0, 0, STP_HLP_EXECNAME as i32), RET],
            ),
            "BAD_HELPER",
            "helper EXECNAME returns a string",
        ),
        case(
            "RETVAL outside a return probe",
            begin_code(
                1,
                0,
                vec![i(STP_OP_CALLI, 0, 0, 0, STP_HLP_RETVAL as i32), RET],
            ),
            "BAD_CONTEXT",
            "helper RETVAL not allowed",
        ),
        case(
            "ARG in a return probe",
            build(&program(vec![handler(
                STP_CTX_KRETPROBE,
                2,
                0,
                vec![
                    i(STP_OP_LDI, 1, 0, 0, 0),
                    i(STP_OP_CALLI, 0, 1, 0, STP_HLP_ARG as i32),
                    RET,
                ],
            )])),
            "BAD_CONTEXT",
            "helper ARG",
        ),
        case(
            "no RET at the end",
            begin_code(0, 0, vec![i(STP_OP_NOP, 0, 0, 0, 0)]),
            "NO_RET",
            "ends in NOP",
        ),
    ];
    // PRINTF runs.
    let mut p = begin(
        2,
        1,
        vec![
            i(STP_OP_LDI, 0, 0, 0, 1),
            i(STP_OP_LDI, 1, 0, 0, 1),
            i(STP_OP_PRINTF, 0, 1, 0, 0),
            RET,
        ],
    );
    p.formats.push(Format {
        text: "%d %d".into(),
        args: vec![ArgKind::Int, ArgKind::Int],
    });
    v.push(case(
        "printf integer run past nregs",
        build(&p),
        "BAD_REGISTER",
        "needs r1..r2",
    ));
    p.handlers[0].code[2] = i(STP_OP_PRINTF, 0, 0, 0, 0);
    p.formats[0].args = vec![ArgKind::Int, ArgKind::Str];
    v.push(case(
        "printf string run not written",
        build(&p),
        "UNINIT_REGISTER",
        "s0 (printf argument)",
    ));
    p.formats[0].args = vec![ArgKind::Str];
    v.push(case(
        "printf with no integers and b set",
        {
            let mut q = p.clone();
            q.handlers[0].code[2] = i(STP_OP_PRINTF, 0, 1, 0, 0);
            build(&q)
        },
        "BAD_OPERAND",
        "b must be 0",
    ));
    v.extend(function_and_string_cases());
    v.extend(stat_cases());
    v.extend(stat_array_cases());
    v.extend(regex_cases());
    v.extend(pretty_cases());
    v.extend(usym_cases());
    v.extend(memory_cap_cases());
    v
}

/// A begin handler with map 0 of `keys` (true: a string key) and
/// `capacity` entries, running `code` with 2 integer registers.
fn big_map(keys: &[bool], capacity: u32, code: Vec<Insn>) -> Program {
    let mut p = begin(2, 0, code);
    p.maps.push(MapDecl {
        name: "a".into(),
        keys: key_kinds(keys),
        value: MapValue::Long,
        capacity,
        ..Default::default()
    });
    p
}

/// The per-session memory caps: maps, iterators.
fn memory_cap_cases() -> Vec<Case> {
    let miter = |it: i32| {
        vec![
            i(STP_OP_LDI, 0, 0, 0, 0),
            i(STP_OP_MITER, 0, 0, 0, imm_pack(0, it as u16)),
            RET,
        ]
    };
    let mut huge = big_map(&[true; 9], STP_MAX_MAP_ENTRIES, vec![RET]);
    huge.limits[STP_LIM_MAXSTRINGLEN as usize] = 4096;
    vec![
        case(
            "iterators within STP_MAX_ITER_BYTES",
            build(&big_map(&[false], 1024, miter(7))),
            "OK",
            "",
        ),
        case(
            "iterators past STP_MAX_ITER_BYTES",
            build(&big_map(&[false], STP_MAX_MAP_ENTRIES, miter(7))),
            "TOO_MANY",
            "8 iterators over maps of 1048576 entries",
        ),
        case(
            "maps past STP_MAX_MAP_BYTES",
            build(&huge),
            "TOO_MANY",
            "maps take more than 536870912 bytes (at map 0)",
        ),
    ]
}

/// A begin handler matching s0 ("abc") against regex 0: a DFA of 3 states
/// (reject, accept, start) over 2 byte classes and the end column; `f`
/// may break the table.
fn regex_prog(f: impl FnOnce(&mut RegexTable)) -> Program {
    let mut rx = RegexTable {
        pattern: b"a".to_vec(),
        classes: (0..=255u8).map(|b| u8::from(b == b'a')).collect(),
        nclasses: 3,
        start: 2,
        trans: vec![0, 0, 0, 1, 1, 1, 2, 1, 0],
        groups: None,
    };
    f(&mut rx);
    let mut p = begin(
        1,
        1,
        vec![
            i(STP_OP_SLDK, 0, 0, 0, 0),
            i(STP_OP_REMATCH, 0, 0, 0, 0),
            RET,
        ],
    );
    p.strings.push(b"abc".to_vec());
    p.regexes.push(rx);
    p
}

/// The image of `p` with `bytes` written at byte `at` of descriptor `k`
/// (a `D`) of section `sec`.
fn desc_patched<D>(p: &Program, sec: stp_section, k: usize, at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut img = build(p);
    let (off, _) = section(&img, sec);
    let o = off + k * std::mem::size_of::<D>() + at;
    img[o..o + bytes.len()].copy_from_slice(bytes);
    vm_spec::image::seal(&mut img);
    img
}

/// Patches 32-bit word `word` of regex descriptor `k`.
fn regex_patched(p: &Program, k: usize, word: usize, v: u32) -> Vec<u8> {
    desc_patched::<stp_regex_desc>(p, STP_SEC_REGEXES, k, 4 * word, &v.to_le_bytes())
}

/// A begin handler printing PRETTY(0, node 1, imm) over a struct node
/// (1) of one named int member (0), with `f` applied to the nodes.
fn pretty_prog(imm: i32, f: impl FnOnce(&mut Vec<PrettyNode>)) -> Program {
    let member = PrettyNode {
        name: 0,
        offset: 0,
        first: 0,
        count: 0,
        kind: STP_PK_SIGNED as u8,
        size: 4,
        bit_off: 0,
        bit_size: 0,
    };
    let mut nodes = vec![
        member,
        PrettyNode {
            name: STP_PRETTY_NAME_NONE,
            first: 0,
            count: 1,
            kind: STP_PK_STRUCT as u8,
            size: 0,
            ..member
        },
    ];
    f(&mut nodes);
    let mut p = begin(
        2,
        1,
        vec![
            i(STP_OP_LDI, 0, 0, 0, 0),
            i(STP_OP_LDI, 1, 0, 0, 1),
            i(STP_OP_PRETTY, 0, 0, 1, imm),
            RET,
        ],
    );
    p.strings.push(b"a".to_vec());
    p.pretty = nodes;
    p
}

/// A begin handler and one user binary with two symbols, changed by `f`.
fn usym_prog(f: impl FnOnce(&mut UserSymbols)) -> Program {
    let mut p = begin(0, 0, vec![RET]);
    let mut u = UserSymbols {
        path: "/bin/true".into(),
        symbols: vec![(0x1000, "a".into()), (0x1010, "bb".into())],
    };
    f(&mut u);
    p.usyms = vec![u];
    p
}

fn usym_cases() -> Vec<Case> {
    vec![
        case("usym ok", build(&usym_prog(|_| {})), "OK", ""),
        case(
            "usym same offset twice",
            build(&usym_prog(|u| u.symbols[1].0 = 0x1000)),
            "BAD_USYM",
            "user binary 0: symbol 1 is not after symbol 0",
        ),
        case(
            "usym relative path",
            build(&usym_prog(|u| u.path = "true".into())),
            "BAD_USYM",
            "user binary 0: path is not absolute",
        ),
        case(
            "usym name past USYMSTR",
            desc_patched::<stp_usym>(&usym_prog(|_| {}), STP_SEC_USYMS, 1, 12, &[2]),
            "BAD_USYM",
            "user binary 0: symbol 1 has a bad name [2, +2) of 3 bytes",
        ),
        case(
            "usym empty name",
            desc_patched::<stp_usym>(&usym_prog(|_| {}), STP_SEC_USYMS, 0, 16, &[0]),
            "BAD_USYM",
            "user binary 0: symbol 0 has a bad name [0, +0)",
        ),
        case(
            "usym slice past USYMS",
            desc_patched::<stp_usym_bin>(&usym_prog(|_| {}), STP_SEC_USYMBINS, 0, 4, &[1]),
            "BAD_USYM",
            "user binary 0: symbols [1, +2) outside the 2 of USYMS",
        ),
        case(
            "usym reserved word",
            desc_patched::<stp_usym>(&usym_prog(|_| {}), STP_SEC_USYMS, 0, 20, &[1]),
            "BAD_USYM",
            "user binary 0: symbol 0 has a bad name",
        ),
    ]
}

fn pretty_cases() -> Vec<Case> {
    vec![
        case("pretty ok", build(&pretty_prog(1, |_| {})), "OK", ""),
        case(
            "pretty member not before its struct",
            build(&pretty_prog(0, |n| n[1].first = 1)),
            "BAD_PRETTY",
            "pretty node 1: members [1, +1) not before it",
        ),
        case(
            "pretty name past the strings",
            build(&pretty_prog(0, |n| n[0].name = 5)),
            "BAD_PRETTY",
            "pretty node 0: name 5 of 2 strings",
        ),
        case(
            "pretty scalar of 3 bytes",
            build(&pretty_prog(0, |n| n[0].size = 3)),
            "BAD_PRETTY",
            "pretty node 0: size 3 for kind 1",
        ),
        case(
            "pretty bitfield past its bytes",
            build(&pretty_prog(0, |n| {
                n[0].bit_off = 30;
                n[0].bit_size = 3;
            })),
            "BAD_PRETTY",
            "pretty node 0: bitfield [30, +3) of 4 bytes",
        ),
        case(
            "pretty unknown kind",
            build(&pretty_prog(0, |n| n[0].kind = STP_PK__COUNT as u8)),
            "BAD_PRETTY",
            "unknown kind",
        ),
        case(
            "pretty array element not before it",
            build(&pretty_prog(0, |n| {
                n[1].kind = STP_PK_ARRAY as u8;
                n[1].count = 0;
                n[1].first = 1;
            })),
            "BAD_PRETTY",
            "pretty node 1: array element 1",
        ),
        case(
            "pretty reserved byte set",
            {
                let p = pretty_prog(0, |_| {});
                desc_patched::<stp_pretty_node>(&p, STP_SEC_PRETTY, 0, 18, &[1])
            },
            "BAD_PRETTY",
            "reserved byte set",
        ),
        case(
            "PRETTY depth 2",
            build(&pretty_prog(2, |_| {})),
            "BAD_OPERAND",
            "PRETTY depth 2, not 0 or 1",
        ),
        case(
            "PRETTY without its scratch registers",
            {
                let mut p = pretty_prog(0, |_| {});
                p.handlers[0].nsregs = STP_MAX_SREGS as u8 - 1;
                build(&p)
            },
            "BAD_REGISTER",
            "its scratch needs 2 free",
        ),
    ]
}

fn regex_cases() -> Vec<Case> {
    let ok = regex_prog(|_| {});
    vec![
        case("regex ok", build(&ok), "OK", ""),
        case(
            "regex of one state",
            build(&regex_prog(|rx| rx.trans.truncate(3))),
            "BAD_REGEX",
            "1 states of 3 classes",
        ),
        case(
            "regex of too many states",
            regex_patched(&ok, 0, 0, STP_MAX_REGEX_STATES + 1),
            "BAD_REGEX",
            "outside [2, 4096]",
        ),
        case(
            "regex of 258 classes",
            regex_patched(&ok, 0, 1, 258),
            "BAD_REGEX",
            "258 classes",
        ),
        case(
            "regex start state out of range",
            build(&regex_prog(|rx| rx.start = 3)),
            "BAD_REGEX",
            "start state 3 of 3",
        ),
        case(
            "regex table past REGEXDATA",
            regex_patched(&ok, 0, 3, 1),
            "BAD_REGEX",
            "outside REGEXDATA",
        ),
        case(
            "regex table offset overflows",
            regex_patched(&ok, 0, 3, u32::MAX),
            "BAD_REGEX",
            "outside REGEXDATA",
        ),
        case(
            "regex byte in the end column",
            build(&regex_prog(|rx| rx.classes[7] = 2)),
            "BAD_REGEX",
            "byte 7 in class 2 of 2",
        ),
        case(
            "regex transition out of range",
            build(&regex_prog(|rx| rx.trans[7] = 3)),
            "BAD_REGEX",
            "entry 7 goes to state 3 of 3",
        ),
        case(
            "regex index out of range",
            {
                let mut p = ok.clone();
                p.handlers[0].code[1].imm = 1;
                build(&p)
            },
            "BAD_INDEX",
            "regex index 1 out of range [0, 1)",
        ),
        case(
            "regex subject not written",
            {
                let mut p = ok.clone();
                p.handlers[0].code[0] = i(STP_OP_NOP, 0, 0, 0, 0);
                build(&p)
            },
            "UNINIT_REGISTER",
            "s0 read before",
        ),
    ]
}

/// A begin handler calling function `f` (added by `add`) with `code`.
fn with_fn(
    caller: Vec<Insn>,
    nregs: u8,
    nsregs: u8,
    add: impl FnOnce(&mut Program) -> i32,
) -> Program {
    let mut p = begin(nregs, nsregs, caller);
    add(&mut p);
    p
}

fn with_str(mut p: Program) -> Program {
    p.strings.push(b"abc".to_vec());
    p
}

fn function_and_string_cases() -> Vec<Case> {
    let f_long = |p: &mut Program| {
        add_function(
            p,
            1,
            0,
            (1, 0, STP_RET_LONG),
            vec![i(STP_OP_RETI, 0, 0, 0, 0)],
        )
    };
    let mut timer = program(vec![handler(STP_CTX_TIMER, 0, 0, vec![RET])]);
    timer.probes[0].period_ns = STP_MAX_TIMER_NS + 1;
    let mut kret = program(vec![handler(STP_CTX_KRETPROBE, 0, 0, vec![RET])]);
    kret.probes[0].maxactive = STP_MAX_MAXACTIVE + 1;
    let mut deep = with_fn(
        vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_FCALLI, 0, 0, 0, 1), RET],
        1,
        0,
        f_long,
    );
    deep.limits[STP_LIM_MAXNESTING as usize] = 64;
    deep.limits[STP_LIM_MAXSTRINGLEN as usize] = 4096;
    let mut sprintf = begin(
        1,
        2,
        vec![
            i(STP_OP_SLDK, 1, 0, 0, 0),
            i(STP_OP_SPRINTF, 1, 0, 1, 0),
            RET,
        ],
    );
    sprintf.strings.push(b"x".to_vec());
    sprintf.formats.push(Format {
        text: "<%s>".into(),
        args: vec![ArgKind::Str],
    });
    let mut no_text = sprintf.clone();
    no_text.handlers[0].code[1] = i(STP_OP_SPRINTF, 0, 0, 1, 0);
    let no_text = {
        let mut img = build(&no_text);
        let (off, _) = section(&img, STP_SEC_FORMATS);
        put32(&mut img, off + 8, STP_FMT_NO_TEXT);
        vm_spec::image::seal(&mut img);
        img
    };
    vec![
        case(
            "CALLS of an integer helper",
            begin_code(
                1,
                1,
                vec![i(STP_OP_CALLS, 0, 0, 0, STP_HLP_PID as i32), RET],
            ),
            "BAD_HELPER",
            "helper PID returns an integer",
        ),
        case(
            "timer period above the cap",
            build(&timer),
            "BAD_PROBE",
            "is above",
        ),
        case(
            "maxactive above the cap",
            build(&kret),
            "BAD_PROBE",
            "maxactive 4097 is above 4096",
        ),
        case(
            "call of a probe handler",
            begin_code(1, 0, vec![i(STP_OP_FCALL, 0, 0, 0, 0), RET]),
            "BAD_CALL",
            "not a function",
        ),
        case(
            "FCALLS of a long function",
            build(&with_fn(
                vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_FCALLS, 0, 0, 0, 1), RET],
                1,
                1,
                f_long,
            )),
            "BAD_CALL",
            "result kind is 1",
        ),
        case(
            "call with an unwritten argument",
            build(&with_fn(
                vec![i(STP_OP_FCALLI, 0, 0, 0, 1), RET],
                1,
                0,
                f_long,
            )),
            "UNINIT_REGISTER",
            "r0 (function argument)",
        ),
        case(
            "call with an argument run past nregs",
            build(&with_fn(
                vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_FCALLI, 0, 1, 0, 1), RET],
                1,
                0,
                f_long,
            )),
            "BAD_REGISTER",
            "needs r1..r1",
        ),
        case(
            "RETI in a probe handler",
            begin_code(
                1,
                0,
                vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_RETI, 0, 0, 0, 0)],
            ),
            "BAD_RETURN",
            "RETI in a handler that returns with RET",
        ),
        case(
            "RET in a long function",
            build(&with_fn(vec![RET], 1, 0, |p| {
                add_function(p, 1, 0, (1, 0, STP_RET_LONG), vec![RET])
            })),
            "BAD_RETURN",
            "returns with RETI",
        ),
        case(
            "function parameters beyond its registers",
            build(&with_fn(vec![RET], 1, 0, |p| {
                add_function(p, 1, 0, (2, 0, STP_RET_NONE), vec![RET])
            })),
            "BAD_HANDLER",
            "2/0 parameters",
        ),
        case(
            "frames beyond STP_MAX_FRAME_BYTES",
            build(&deep),
            "BAD_LIMIT",
            "MAXNESTING 64 frames",
        ),
        case(
            "SPRINTF into its own argument",
            build(&sprintf),
            "BAD_REGISTER",
            "SPRINTF writes s1",
        ),
        case(
            "SPRINTF of a format without text",
            no_text,
            "BAD_INDEX",
            "which has no text",
        ),
        case(
            "SREPL into its operand",
            build(&with_str(begin(
                0,
                3,
                vec![
                    i(STP_OP_SLDK, 0, 0, 0, 0),
                    i(STP_OP_SLDK, 1, 0, 0, 0),
                    i(STP_OP_SLDK, 2, 0, 0, 0),
                    i(STP_OP_SREPL, 2, 0, 1, 0),
                    RET,
                ],
            ))),
            "BAD_REGISTER",
            "SREPL writes s2",
        ),
        case(
            "SSUB with its pair past nregs",
            build(&with_str(begin(
                1,
                1,
                vec![
                    i(STP_OP_SLDK, 0, 0, 0, 0),
                    i(STP_OP_LDI, 0, 0, 0, 0),
                    i(STP_OP_SSUB, 0, 0, 0, 0),
                    RET,
                ],
            ))),
            "BAD_REGISTER",
            "r0 and the next",
        ),
        case(
            "SSUB with its pair half written",
            build(&with_str(begin(
                2,
                1,
                vec![
                    i(STP_OP_SLDK, 0, 0, 0, 0),
                    i(STP_OP_LDI, 0, 0, 0, 0),
                    i(STP_OP_SSUB, 0, 0, 0, 0),
                    RET,
                ],
            ))),
            "UNINIT_REGISTER",
            "r0 or r1 read",
        ),
    ]
}

/// A begin handler with statistics `stats` (one with a log histogram
/// and the variance flag unless given).
fn with_stats(stats: Vec<Stat>, code: Vec<Insn>) -> Program {
    let mut p = begin(2, 0, code);
    p.stats = stats;
    p
}

/// Patches byte `at` of statistic descriptor `k` (struct stp_stat_desc).
fn stat_patched(p: &Program, k: usize, at: usize, bytes: &[u8]) -> Vec<u8> {
    desc_patched::<stp_stat_desc>(p, STP_SEC_STATS, k, at, bytes)
}

/// A program with statistics array `a[long]` (map 0, statistic 0: log
/// histogram, variance iff `variance`) and scalar statistic 1, running
/// `code` in a begin handler of 4 integer registers.
fn stat_array(variance: bool, hist: Hist, code: Vec<Insn>) -> Program {
    let mut p = begin(4, 1, code);
    p.stats = vec![
        Stat {
            array: true,
            ..st(hist, variance, 0)
        },
        st(Hist::None, false, 0),
    ];
    p.maps = vec![stat_array_map(8)];
    p
}

/// Patches byte `at` of map descriptor `k` (struct stp_map_desc).
fn map_patched(p: &Program, k: usize, at: usize, bytes: &[u8]) -> Vec<u8> {
    desc_patched::<stp_map_desc>(p, STP_SEC_MAPS, k, at, bytes)
}

fn stat_array_cases() -> Vec<Case> {
    let ld = i(STP_OP_LDI, 0, 0, 0, 1);
    let ok = stat_array(true, Hist::Log, vec![ld, i(STP_OP_MSTADD, 0, 0, 0, 0), RET]);
    // MSX immediate: map 0, extractor opcode in bits 16..23.
    let x = |op: u32| imm_pack(0, op as u16);
    vec![
        case("statistics array", build(&ok), "OK", ""),
        case(
            "statistics array naming a scalar statistic",
            map_patched(&ok, 0, 12, &[1]),
            "BAD_MAP",
            "not an array statistic",
        ),
        case(
            "statistic index on a map of longs",
            map_patched(
                &{
                    let mut p = ok.clone();
                    p.maps[0].value = MapValue::Long;
                    p.stats[0].array = false;
                    p.handlers[0].code = vec![RET];
                    p
                },
                0,
                12,
                &[1],
            ),
            "BAD_MAP",
            "reserved field",
        ),
        case(
            "array statistic at the wrong offset",
            stat_patched(&ok, 0, 20, &[0]),
            "BAD_STAT",
            "at offset 0, must be 64",
        ),
        case(
            "STADD of an array statistic",
            build(&stat_array(
                true,
                Hist::Log,
                vec![ld, i(STP_OP_STADD, 0, 0, 0, 0), RET],
            )),
            "BAD_STAT",
            "is a statistics array's",
        ),
        case(
            "MGET on a statistics array",
            build(&stat_array(
                true,
                Hist::Log,
                vec![ld, i(STP_OP_MGET, 1, 0, 0, 0), RET],
            )),
            "BAD_MAP",
            "whose values are of kind 2",
        ),
        case(
            "MSTADD on a map of longs",
            build(&{
                let mut p = ok.clone();
                p.maps[0].value = MapValue::Long;
                p.stats[0].array = false;
                p
            }),
            "BAD_MAP",
            "whose values are of kind 0",
        ),
        case(
            "MSTX with an arithmetic as extractor",
            build(&stat_array(
                true,
                Hist::Log,
                vec![ld, i(STP_OP_MSTX, 1, 0, 0, x(STP_OP_ADD)), RET],
            )),
            "BAD_MAP",
            "bad extractor",
        ),
        case(
            "MSTX @variance without the variance flag",
            build(&stat_array(
                false,
                Hist::Log,
                vec![ld, i(STP_OP_MSTX, 1, 0, 0, x(STP_OP_STVAR)), RET],
            )),
            "BAD_STAT",
            "no variance flag",
        ),
        case(
            "MSTHIST without a histogram",
            build(&stat_array(
                true,
                Hist::None,
                vec![ld, i(STP_OP_MSTHIST, 0, 0, 0, 0), RET],
            )),
            "BAD_STAT",
            "no histogram",
        ),
        case(
            "MSTBKT without a histogram",
            build(&stat_array(
                true,
                Hist::None,
                vec![
                    ld,
                    i(STP_OP_LDI, 1, 0, 0, 64),
                    i(STP_OP_MSTBKT, 1, 0, 0, 0),
                    RET,
                ],
            )),
            "BAD_STAT",
            "no histogram",
        ),
        case(
            "MSTBKT with an unwritten bucket index",
            build(&stat_array(
                true,
                Hist::Log,
                vec![ld, i(STP_OP_MSTBKT, 1, 0, 0, 0), RET],
            )),
            "UNINIT_REGISTER",
            "r1",
        ),
        case(
            "MSTBKT on a map of longs",
            build(&{
                let mut p = stat_array(
                    true,
                    Hist::Log,
                    vec![
                        ld,
                        i(STP_OP_LDI, 1, 0, 0, 64),
                        i(STP_OP_MSTBKT, 1, 0, 0, 0),
                        RET,
                    ],
                );
                p.maps[0].value = MapValue::Long;
                p.stats[0].array = false;
                p
            }),
            "BAD_MAP",
            "whose values are of kind 0",
        ),
        case(
            "MSTX of an unwritten key",
            build(&stat_array(
                true,
                Hist::Log,
                vec![i(STP_OP_MSTX, 1, 0, 0, x(STP_OP_STCOUNT)), RET],
            )),
            "UNINIT_REGISTER",
            "r0",
        ),
        case(
            "statistics arrays past STP_MAX_STAT_BYTES",
            build(&{
                // 2^20 entries of 64 bytes: 64 MiB per CPU.
                let mut p = stat_array(false, Hist::None, vec![RET]);
                p.maps[0].capacity = STP_MAX_MAP_ENTRIES;
                p
            }),
            "BAD_STAT",
            "more than 16777216 bytes per CPU",
        ),
    ]
}

fn stat_cases() -> Vec<Case> {
    let log = st(Hist::Log, true, 0);
    let plain = st(Hist::None, false, 0);
    let add = vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_STADD, 0, 0, 0, 0), RET];
    let all = vec![
        i(STP_OP_LDI, 0, 0, 0, 1),
        i(STP_OP_STADD, 0, 0, 0, 0),
        i(STP_OP_STCOUNT, 1, 0, 0, 0),
        i(STP_OP_STSUM, 1, 0, 0, 0),
        i(STP_OP_STMIN, 1, 0, 0, 0),
        i(STP_OP_STMAX, 1, 0, 0, 0),
        i(STP_OP_STAVG, 1, 0, 0, 0),
        i(STP_OP_STVAR, 1, 0, 0, 0),
        i(STP_OP_STHIST, 0, 0, 0, 0),
        i(STP_OP_STBKT, 1, 0, 0, 0),
        RET,
    ];
    let two = with_stats(vec![log.clone(), plain.clone()], add.clone());
    vec![
        case(
            "statistics ok",
            build(&with_stats(vec![log.clone()], all)),
            "OK",
            "",
        ),
        case(
            "linear ok, 3 buckets",
            build(&with_stats(
                vec![st(
                    Hist::Linear {
                        start: 0,
                        stop: 0,
                        interval: 1,
                    },
                    false,
                    0,
                )],
                add.clone(),
            )),
            "OK",
            "",
        ),
        case(
            "statistic index out of range",
            build(&with_stats(
                vec![log.clone()],
                vec![i(STP_OP_STCOUNT, 0, 0, 0, 1), RET],
            )),
            "BAD_INDEX",
            "statistic index 1",
        ),
        case(
            "STADD of an unwritten register",
            build(&with_stats(
                vec![log.clone()],
                vec![i(STP_OP_STADD, 1, 0, 0, 0), RET],
            )),
            "UNINIT_REGISTER",
            "r1 read",
        ),
        case(
            "MGETS on a map of longs",
            build(&{
                let mut p = begin(
                    2,
                    1,
                    vec![i(STP_OP_LDI, 0, 0, 0, 1), i(STP_OP_MGETS, 0, 0, 0, 0), RET],
                );
                p.maps = vec![MapDecl {
                    name: "m".into(),
                    keys: vec![ArgKind::Int],
                    capacity: 4,
                    ..Default::default()
                }];
                p
            }),
            "BAD_MAP",
            "whose values are of kind 0",
        ),
        case(
            "STHIST without a histogram",
            build(&with_stats(
                vec![plain.clone()],
                vec![i(STP_OP_STHIST, 0, 0, 0, 0), RET],
            )),
            "BAD_STAT",
            "has no histogram",
        ),
        case(
            "STBKT without a histogram",
            build(&with_stats(
                vec![plain.clone()],
                vec![i(STP_OP_LDI, 0, 0, 0, 0), i(STP_OP_STBKT, 1, 0, 0, 0), RET],
            )),
            "BAD_STAT",
            "has no histogram",
        ),
        case(
            "STVAR without the variance flag",
            build(&with_stats(
                vec![plain.clone()],
                vec![i(STP_OP_STVAR, 0, 0, 0, 0), RET],
            )),
            "BAD_STAT",
            "no variance flag",
        ),
        case(
            "unknown histogram kind",
            stat_patched(&two, 0, 0, &[3]),
            "BAD_STAT",
            "histogram kind 3",
        ),
        case(
            "log histogram with 127 buckets",
            stat_patched(&two, 0, 4, &127u32.to_le_bytes()),
            "BAD_STAT",
            "127 buckets",
        ),
        case(
            "no histogram but buckets",
            stat_patched(&two, 1, 4, &1u32.to_le_bytes()),
            "BAD_STAT",
            "1 buckets",
        ),
        case(
            "linear bucket count not stap's",
            stat_patched(
                &with_stats(
                    vec![st(
                        Hist::Linear {
                            start: 0,
                            stop: 100,
                            interval: 10,
                        },
                        false,
                        0,
                    )],
                    add.clone(),
                ),
                0,
                16,
                &20i32.to_le_bytes(),
            ),
            "BAD_STAT",
            "interval 20",
        ),
        case(
            "linear interval 0",
            stat_patched(
                &with_stats(
                    vec![st(
                        Hist::Linear {
                            start: 0,
                            stop: 100,
                            interval: 10,
                        },
                        false,
                        0,
                    )],
                    add.clone(),
                ),
                0,
                16,
                &0i32.to_le_bytes(),
            ),
            "BAD_STAT",
            "interval 0",
        ),
        case(
            "shift past 62",
            stat_patched(&two, 0, 1, &[63]),
            "BAD_STAT",
            "shift 63",
        ),
        case(
            "shift without the variance flag",
            stat_patched(&two, 1, 1, &[1]),
            "BAD_STAT",
            "shift 1",
        ),
        case(
            "unknown statistic flag",
            stat_patched(&two, 1, 2, &[4]),
            "BAD_STAT",
            "unknown flags 0x4",
        ),
        case(
            "statistic reserved byte",
            stat_patched(&two, 1, 3, &[1]),
            "BAD_STAT",
            "reserved field",
        ),
        case(
            "statistic not right after the previous one",
            stat_patched(&two, 1, 20, &0u32.to_le_bytes()),
            "BAD_STAT",
            "must be 1088",
        ),
        // STP_MAX_STAT_BYTES: only statistics arrays reach it now
        // (STP_MAX_STATS scalars of 1088 bytes stay below);
        // stat_array_cases has the case.
    ]
}

#[test]
fn each_case_is_refused_with_its_code() {
    for c in cases() {
        let got = verdict(&c.image);
        match (c.code, got) {
            ("OK", Ok(_)) => {}
            ("OK", Err(e)) => panic!("{}: refused: {e}", c.name),
            (_, Ok(_)) => panic!("{}: accepted, expected {}", c.name, c.code),
            (code, Err(e)) => {
                assert_eq!(e.name, code, "{}: {}", c.name, e.message);
                assert_eq!(VERIFY_ERRORS[e.code as usize].name, code);
                assert!(
                    e.message.contains(c.msg),
                    "{}: message {:?} lacks {:?}",
                    c.name,
                    e.message,
                    c.msg
                );
                assert!(e.to_string().starts_with("verifier: "));
            }
        }
    }
}

/// The verifier's verdict: the accepted sizes, or the refusal.
fn verdict(img: &[u8]) -> Result<VerifiedInfo, VerifyError> {
    verify_image(img)
}

#[test]
fn no_memory_is_reported() {
    host_fail_next_allocs(1);
    let e = verify_image(&ok_image()).unwrap_err();
    host_fail_next_allocs(0);
    assert_eq!(e.name, "NO_MEMORY");
    assert!(verify_image(&ok_image()).is_ok());
}

/// Images of generated programs (`vm_testkit::gen`: maps, statistics,
/// functions, strings, every probe kind) and mutations of each.
fn generated_and_mutated(seeds: std::ops::Range<u64>, per: usize) -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    for seed in seeds {
        let img = build(&vm_testkit::gen::generate(seed).program);
        let mut rng = vm_testkit::gen::Rng::new(seed ^ 0x5eed);
        for n in 0..per {
            let m = vm_testkit::mutate::mutate(&img, &mut rng);
            v.push((format!("seed {seed} mutation {n} ({})", m.kind), m.image));
        }
        v.push((format!("seed {seed}"), img));
    }
    v
}

#[test]
fn generated_and_mutated_images_reach_the_deep_checks_and_run_safely() {
    let mut refused = std::collections::BTreeMap::<&str, usize>::new();
    let mut accepted = 0;
    // STAPVM_VERIFY_SEEDS=N runs a longer stream (default 300 seeds).
    let seeds = std::env::var("STAPVM_VERIFY_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300u64);
    let env = HostEnv::default();
    for (name, img) in generated_and_mutated(0..seeds, 20) {
        match verify_image(&img) {
            Ok(_) => {
                accepted += 1;
                // What the verifier accepts must run: every probe handler
                // once, ending normally or with a run-time error.
                let mut s = HostSession::new(&img).unwrap_or_else(|e| panic!("{name}: {e}"));
                for h in 0..s.handler_count() {
                    let _ = s.run_handler(h, &env);
                }
            }
            Err(e) => *refused.entry(e.name).or_default() += 1,
        }
    }
    eprintln!("{accepted} accepted, refused: {refused:?}");
    // The stream reaches the deep checks, not just the header's.
    assert!(accepted >= 300, "{accepted} accepted");
    for code in [
        "BAD_SECTION",
        "BAD_HANDLER",
        "BAD_JUMP",
        "BAD_OPCODE",
        "BAD_REGISTER",
        "UNINIT_REGISTER",
        "BAD_INDEX",
    ] {
        assert!(
            refused.contains_key(code),
            "no mutation refused with {code}: {refused:?}"
        );
    }
}

#[test]
fn every_verify_error_code_has_a_case() {
    let mut names: Vec<&str> = cases().iter().map(|c| c.code).collect();
    names.push("NO_MEMORY"); // no_memory_is_reported
    for e in VERIFY_ERRORS {
        assert!(names.contains(&e.name), "no verifier case for {}", e.name);
    }
}

#[test]
fn where_points_at_the_instruction() {
    let p = program(vec![
        handler(STP_CTX_BEGIN, 0, 0, vec![RET]),
        handler(
            STP_CTX_END,
            1,
            0,
            vec![i(STP_OP_NOP, 0, 0, 0, 0), i(STP_OP_MOV, 0, 0, 0, 0), RET],
        ),
    ]);
    let e = verdict(&build(&p)).unwrap_err();
    assert_eq!(e.name, "UNINIT_REGISTER");
    assert_eq!(e.at, 2);
    assert!(
        e.message.starts_with("insn 2 (handler 1 pc 1): "),
        "{}",
        e.message
    );
}

#[test]
fn accepts_well_formed_programs() {
    // Both branches write r1; a LOOP whose back edge is ignored; helpers
    // in their contexts; printf with runs; every probe kind.
    let code = vec![
        i(STP_OP_LDI, 0, 0, 0, 3),
        i(STP_OP_JZ, 0, 0, 0, 2),
        i(STP_OP_LDI, 1, 0, 0, 1),
        i(STP_OP_JMP, 0, 0, 0, 1),
        i(STP_OP_LDI, 1, 0, 0, 2),
        i(STP_OP_ADDI, 0, 0, 0, -1), // loop head (pc 5)
        i(STP_OP_JZ, 0, 0, 0, 1),
        i(STP_OP_LOOP, 0, 0, 0, -3),
        i(STP_OP_CALLS, 0, 0, 0, STP_HLP_EXECNAME as i32),
        i(STP_OP_PRINTF, 0, 1, 0, 0),
        i(STP_OP_EXIT, 0, 0, 0, 0),
        RET,
    ];
    let mut p = program(vec![
        handler(STP_CTX_BEGIN, 2, 1, code),
        handler(
            STP_CTX_KRETPROBE,
            1,
            0,
            vec![i(STP_OP_CALLI, 0, 0, 0, STP_HLP_RETVAL as i32), RET],
        ),
        handler(
            STP_CTX_KPROBE,
            1,
            0,
            vec![
                i(STP_OP_LDI, 0, 0, 0, 1),
                i(STP_OP_CALLI, 0, 0, 0, STP_HLP_ARG as i32),
                RET,
            ],
        ),
        handler(STP_CTX_TIMER, 0, 0, vec![RET]),
        handler(STP_CTX_END, 0, 0, vec![RET]),
    ]);
    p.formats.push(Format {
        text: "%d %s".into(),
        args: vec![ArgKind::Int, ArgKind::Str],
    });
    p.probes[0].flags = STP_PROBE_F_OPTIONAL as u8;
    let info = verdict(&build(&p)).unwrap();
    assert_eq!(info.nhandlers, 5);
    assert_eq!(info.nprobes, 5);
    assert_eq!(info.nformats, 1);
    assert_eq!(info.limits[STP_LIM_MAXACTION as usize], 10000);
    // Unreachable code may read anything: after RET, JMP and LOOP only
    // what jumps in reaches an instruction.
    let img = begin_code(2, 0, vec![RET, i(STP_OP_MOV, 0, 1, 0, 0), RET]);
    assert!(verdict(&img).is_ok());
    let img = begin_code(
        2,
        0,
        vec![
            i(STP_OP_JMP, 0, 0, 0, 1),
            i(STP_OP_MOV, 0, 1, 0, 0),
            i(STP_OP_NOP, 0, 0, 0, 0),
            i(STP_OP_LOOP, 0, 0, 0, -2),
            i(STP_OP_MOV, 0, 1, 0, 0),
            RET,
        ],
    );
    assert!(verdict(&img).is_ok());
}

#[test]
fn random_mutations_never_crash() {
    let base = ok_image();
    let mut x: u64 = 0x2545f4914f6cdd1d;
    for _ in 0..20000 {
        let mut m = base.clone();
        for _ in 0..3 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let pos = (x % m.len() as u64) as usize;
            m[pos] = (x >> 32) as u8;
        }
        // Half resealed, so that the checks past the checksum see them.
        if x & (1 << 40) != 0 {
            vm_spec::image::seal(&mut m);
        }
        let _ = verdict(&m);
    }
}

/// Every value of every byte of a small valid image, changed alone and not
/// resealed, is refused: by the checksum, or (in the magic, version, header
/// size and total size, checked before it) by that field's own check.
#[test]
fn every_one_byte_corruption_is_refused() {
    let base = ok_image();
    let before_sum = OFF_TOTAL + 4;
    let mut refused = 0u32;
    for pos in 0..base.len() {
        for v in 0..=255u8 {
            if v == base[pos] {
                continue;
            }
            let mut m = base.clone();
            m[pos] = v;
            let code = match verify_image(&m) {
                Ok(_) => panic!("byte {pos} set to {v:#x}: accepted"),
                Err(e) => e.code,
            };
            if pos >= before_sum {
                assert_eq!(
                    code, STP_VERR_BAD_CHECKSUM,
                    "byte {pos} set to {v:#x}: refused with code {code}, not by the checksum"
                );
            }
            refused += 1;
        }
    }
    assert_eq!(refused as usize, base.len() * 255);
}
