//! Code generation checked by listing the instructions of small snippets
//! (Lua's `testes/code.lua` style). Every program is also run through both
//! verifiers (`common::check`: `common::verify`, the Rust one, then
//! `common::image`, the C one).
mod common;
use common::*;

/// The assembly of the handler of `probe begin { BODY }`.
fn asm(body: &str) -> Vec<String> {
    let c = build(&format!("probe begin {{ {body} }}"));
    check(&c.program);
    disasm(c.program.handlers.last().unwrap())
}

fn ops(body: &str) -> Vec<&'static str> {
    let c = build(&format!("probe begin {{ {body} }}"));
    check(&c.program);
    names(c.program.handlers.last().unwrap())
}

#[test]
fn exit_and_next() {
    assert_eq!(asm("exit()"), ["EXIT", "RET"]);
    assert_eq!(asm("next"), ["RET", "RET"]);
}

#[test]
fn printf_arguments_go_to_consecutive_runs() {
    assert_eq!(
        asm("printf(\"%d %s %d %s\\n\", 1, \"a\", pid(), execname())"),
        [
            "LDI r0, 1",
            "SLDK s0, str0",
            "CALLI r1, r0, PID",
            "CALLS s1, r0, EXECNAME",
            "PRINTF r0, s0, fmt0",
            "RET"
        ]
    );
}

#[test]
fn printf_runs_start_above_locals() {
    assert_eq!(
        asm("x = 7; s = \"v\"; printf(\"%s=%d\", s, x + 1)"),
        [
            "LDI r0, 0",
            "SLDK s0, str0",
            "LDI r0, 7",
            "SLDK s1, str1",
            "SMOV s0, s1",
            "SMOV s1, s0",
            "LDI r2, 1",
            "ADD r1, r0, r2",
            "PRINTF r1, s1, fmt0",
            "RET"
        ]
    );
}

#[test]
fn print_and_println() {
    let c = build("probe begin { print(1); println(\"a\"); println() }");
    let f: Vec<_> = c.program.formats.iter().map(|f| f.text.as_str()).collect();
    assert_eq!(f, ["%d", "%s\n", "\n"]);
    assert_eq!(
        names(&c.program.handlers[0]),
        ["LDI", "PRINTF", "SLDK", "PRINTF", "PRINTF", "RET"]
    );
}

#[test]
fn arithmetic_and_compound_assignment() {
    assert_eq!(
        asm("x = 1; x += 2; x = -x * 3 % 4"),
        [
            "LDI r0, 0",
            "LDI r0, 1",
            "LDI r1, 2",
            "ADD r0, r0, r1",
            "NEG r1, r0",
            "LDI r2, 3",
            "MUL r1, r1, r2",
            "LDI r2, 4",
            "MOD r0, r1, r2",
            "RET"
        ]
    );
    assert_eq!(
        ops("x = 1 << 2 >> 3 & 4 | 5 ^ ~6 / 1 - !7"),
        [
            "LDI", "LDI", "LDI", "SHL", "LDI", "SHR", "LDI", "AND", "LDI", "LDI", "NOT", "LDI",
            "DIV", "LDI", "LNOT", "SUB", "XOR", "OR", "RET"
        ]
    );
}

#[test]
fn constants_small_and_large() {
    let c = build("probe begin { x = 2147483647; y = 2147483648; z = -1; w = 0x7fffffffffffffff }");
    check(&c.program);
    assert_eq!(
        disasm(&c.program.handlers[0])[4..],
        [
            "LDI r0, 2147483647",
            "LDK r1, k0",
            "LDI r4, 1",
            "NEG r2, r4",
            "LDK r3, k1",
            "RET"
        ]
    );
    assert_eq!(c.program.konsts, [2147483648, i64::MAX]);
}

#[test]
fn globals_use_ldg_stg_and_atomic_gadd() {
    let c = build("global n, m\nprobe begin { n++; n += 5; n -= 2; m = n; m *= 2 }");
    check(&c.program);
    assert_eq!(
        disasm(&c.program.handlers[0]),
        [
            "LDI r0, 1",
            "GADD r0, r0, g0",
            "LDI r0, 5",
            "GADD r1, r0, g0",
            "LDI r0, 2",
            "NEG r1, r0",
            "GADD r1, r1, g0",
            "LDG r0, g0",
            "STG r0, g1",
            "LDI r0, 2",
            "LDG r1, g1",
            "MUL r1, r1, r0",
            "STG r1, g1",
            "RET"
        ]
    );
}

#[test]
fn increments_as_values() {
    assert_eq!(
        asm("x = 5; y = x++; z = --x"),
        [
            "LDI r0, 0",
            "LDI r1, 0",
            "LDI r2, 0",
            "LDI r0, 5",
            "MOV r3, r0",
            "ADDI r0, r0, 1",
            "MOV r1, r3",
            "ADDI r0, r0, -1",
            "MOV r3, r0",
            "MOV r2, r3",
            "RET"
        ]
    );
}

#[test]
fn if_else_with_short_circuit_conditions() {
    assert_eq!(
        asm("if (pid() && tid() || !cpu()) exit(); else next"),
        [
            "CALLI r0, r0, PID",
            "JZ r0, ->4",
            "CALLI r0, r0, TID",
            "JNZ r0, ->6",
            "CALLI r0, r0, CPU",
            "JNZ r0, ->8",
            "EXIT",
            "JMP ->9",
            "RET",
            "RET"
        ]
    );
}

#[test]
fn logical_values() {
    assert_eq!(
        asm("x = pid() && 0"),
        [
            "LDI r0, 0",
            "LDI r1, 0",
            "CALLI r2, r0, PID",
            "JZ r2, ->7",
            "LDI r3, 0",
            "JZ r3, ->7",
            "LDI r1, 1",
            "MOV r0, r1",
            "RET"
        ]
    );
}

#[test]
fn while_loop_with_break_and_continue() {
    assert_eq!(
        asm("i = 0; while (i < 10) { i++; if (i == 3) continue; if (i == 5) break }"),
        [
            "LDI r0, 0",
            "LDI r0, 0",
            "LDI r2, 10",
            "LT r1, r0, r2",
            "JZ r1, ->15",
            "ADDI r0, r0, 1",
            "LDI r2, 3",
            "EQ r1, r0, r2",
            "JZ r1, ->10",
            "JMP ->14",
            "LDI r2, 5",
            "EQ r1, r0, r2",
            "JZ r1, ->14",
            "JMP ->15",
            "LOOP ->2",
            "RET"
        ]
    );
}

#[test]
fn for_loop_continue_runs_the_increment() {
    assert_eq!(
        asm("for (i = 0; i < 3; i++) { if (i) continue; x = i }"),
        [
            "LDI r0, 0",
            "LDI r1, 0",
            "LDI r0, 0",
            "LDI r3, 3",
            "LT r2, r0, r3",
            "JZ r2, ->11",
            "JZ r0, ->8",
            "JMP ->9",
            "MOV r1, r0",
            "ADDI r0, r0, 1",
            "LOOP ->3",
            "RET"
        ]
    );
    assert_eq!(ops("for (;;) break"), ["JMP", "LOOP", "RET"]);
}

#[test]
fn strings_concat_compare_and_append() {
    assert_eq!(
        asm("s = \"a\" . execname(); if (s < \"b\") s .= \"c\""),
        [
            "SLDK s0, str0",
            "SLDK s1, str1",
            "CALLS s2, r0, EXECNAME",
            "SCAT s1, s1, s2",
            "SMOV s0, s1",
            "SLDK s1, str2",
            "SCMP r0, s0, s1",
            "LDI r1, 0",
            "LT r0, r0, r1",
            "JZ r0, ->13",
            "SLDK s1, str3",
            "SCAT s2, s0, s1",
            "SMOV s0, s2",
            "RET"
        ]
    );
    assert_eq!(
        ops("n = strlen(\"abc\")"),
        ["LDI", "SLDK", "SLEN", "MOV", "RET"]
    );
}

#[test]
fn ternary_into_a_register() {
    assert_eq!(
        asm("x = pid() ? 1 : 2"),
        [
            "LDI r0, 0",
            "CALLI r2, r0, PID",
            "JZ r2, ->5",
            "LDI r1, 1",
            "JMP ->6",
            "LDI r1, 2",
            "MOV r0, r1",
            "RET"
        ]
    );
}

#[test]
fn time_helpers_divide() {
    assert_eq!(
        asm("x = gettimeofday_ms()"),
        [
            "LDI r0, 0",
            "CALLI r1, r0, GETTIMEOFDAY_NS",
            "LDI r2, 1000000",
            "DIV r1, r1, r2",
            "MOV r0, r1",
            "RET"
        ]
    );
    assert_eq!(ops("x = gettimeofday_s()")[1..4], ["CALLI", "LDI", "DIV"]);
    assert_eq!(
        ops("x = gettimeofday_us() + jiffies() + local_clock_ns()")[1..3],
        ["CALLI", "LDI"]
    );
}

#[test]
fn memory_helpers_take_an_integer_argument() {
    assert_eq!(
        asm("printf(\"%s %s %d\", kernel_string(1), user_string(2), kernel_long(3))"),
        [
            "LDI r1, 1",
            "CALLS s0, r1, KERNEL_STRING",
            "LDI r1, 2",
            "CALLS s1, r1, USER_STRING",
            "LDI r1, 3",
            "CALLI r0, r1, KERNEL_LONG",
            "PRINTF r0, s0, fmt0",
            "RET"
        ]
    );
}

#[test]
fn return_probes_read_retval() {
    let c = build("probe kernel.function(\"f\").return { x = $return + retval() }");
    check(&c.program);
    assert_eq!(
        disasm(&c.program.handlers[0]),
        [
            "LDI r0, 0",
            "CALLI r1, r0, RETVAL",
            "CALLI r2, r0, RETVAL",
            "ADD r0, r1, r2",
            "RET"
        ]
    );
}

#[test]
fn locations_point_at_the_source() {
    let c = build("probe begin {\n  x = 1\n  exit()\n}");
    let h = &c.program.handlers[0];
    let locs: Vec<(u32, u32)> = h.locs.iter().map(|l| (l.line, l.col)).collect();
    // Clearing x: its first use; `1`: the literal; exit(); RET: the '{'.
    assert_eq!(locs, [(2, 3), (2, 7), (3, 3), (1, 13)]);
}

#[test]
fn global_initialisers_run_first() {
    let c = build("global a = 5, b = 9999999999, c\nprobe begin { c = a + b } probe begin(-5) { }");
    check(&c.program);
    assert_eq!(
        disasm(&c.program.handlers[0]),
        ["LDI r0, 5", "STG r0, g0", "LDK r0, k0", "STG r0, g1", "RET"]
    );
    let order: Vec<u32> = c.program.probes.iter().map(|p| p.handler).collect();
    assert_eq!(order, [0, 2, 1]);
    let pae: Vec<bool> = c.program.globals.iter().map(|g| g.print_at_exit).collect();
    assert_eq!(pae, [false, false, true]);
}
