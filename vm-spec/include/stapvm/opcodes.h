/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * opcodes.h - the stapvm instruction set: the only definition of every
 * opcode's number, name, operand kinds, cost and meaning.
 *
 * Included by the kernel module (kmod/core), by the user-space build of the
 * same C core, and turned into Rust by bindgen (vm-spec). Nothing else may
 * define an opcode.
 *
 * Instruction format: every instruction is one 64-bit word,
 *
 *   63            32 31      24 23      16 15       8 7        0
 *  +----------------+----------+----------+----------+----------+
 *  |    imm (s32)   |    c     |    b     |    a     |    op    |
 *  +----------------+----------+----------+----------+----------+
 *
 * (struct stp_insn, little-endian). a, b and c name registers; imm is an
 * immediate, a jump offset or an index into one of the image's tables.
 *
 * Registers come in two typed files, so no instruction can confuse a number
 * with a string: r[0..nregs) hold 64-bit integers, s[0..nsregs) hold strings
 * of at most MAXSTRINGLEN bytes. There are no pointers in the VM: kernel and
 * user memory is only read through helpers built on the *_nofault copies.
 *
 * Operand kinds (the verifier's rules, one per kind):
 *   NO   operand unused; must be 0
 *   RW   integer register, written          RR   integer register, read
 *   SW   string register, written           SR   string register, read
 *   RN   integer register base of a run read by the instruction (PRINTF)
 *   SN   string register base of a run read by the instruction (PRINTF)
 *   IMM  any 32-bit value
 *   JF   forward jump: target = pc + 1 + imm, imm >= 0, target < handler end
 *   JB   backward jump: target = pc + 1 + imm, imm < 0, target >= handler start
 *   K    index into the 64-bit constant table
 *   STR  index into the string table
 *   GLB  index of a global scalar
 *   FMT  index into the format table
 *   HLP  helper id (helpers.h); result and argument kinds come from there
 *
 * Cost is what the instruction charges against MAXACTION. Straight-line code
 * is bounded by the handler length, so only back edges charge.
 *
 * Columns: name, a, b, c, imm, cost, meaning.
 */
#ifndef STAPVM_OPCODES_H
#define STAPVM_OPCODES_H

#define STP_OPCODES(X)							\
	X(NOP,    NO, NO, NO, NO,  0, "do nothing")			\
	X(MOV,    RW, RR, NO, NO,  0, "r[a] := r[b]")			\
	X(LDI,    RW, NO, NO, IMM, 0, "r[a] := (s64)imm")			\
	X(LDK,    RW, NO, NO, K,   0, "r[a] := konst[imm]")		\
	X(ADD,    RW, RR, RR, NO,  0, "r[a] := r[b] + r[c] (wraps)")	\
	X(SUB,    RW, RR, RR, NO,  0, "r[a] := r[b] - r[c] (wraps)")	\
	X(MUL,    RW, RR, RR, NO,  0, "r[a] := r[b] * r[c] (wraps)")	\
	X(DIV,    RW, RR, RR, NO,  0, "r[a] := r[b] / r[c]; error if r[c] == 0") \
	X(MOD,    RW, RR, RR, NO,  0, "r[a] := r[b] % r[c]; error if r[c] == 0") \
	X(AND,    RW, RR, RR, NO,  0, "r[a] := r[b] & r[c]")		\
	X(OR,     RW, RR, RR, NO,  0, "r[a] := r[b] | r[c]")		\
	X(XOR,    RW, RR, RR, NO,  0, "r[a] := r[b] ^ r[c]")		\
	X(SHL,    RW, RR, RR, NO,  0, "r[a] := r[b] << (r[c] & 63)")	\
	X(SHR,    RW, RR, RR, NO,  0, "r[a] := r[b] >> (r[c] & 63), arithmetic") \
	X(ADDI,   RW, RR, NO, IMM, 0, "r[a] := r[b] + (s64)imm")		\
	X(NEG,    RW, RR, NO, NO,  0, "r[a] := -r[b]")			\
	X(NOT,    RW, RR, NO, NO,  0, "r[a] := ~r[b]")			\
	X(LNOT,   RW, RR, NO, NO,  0, "r[a] := r[b] == 0")		\
	X(EQ,     RW, RR, RR, NO,  0, "r[a] := r[b] == r[c]")		\
	X(NE,     RW, RR, RR, NO,  0, "r[a] := r[b] != r[c]")		\
	X(LT,     RW, RR, RR, NO,  0, "r[a] := r[b] < r[c], signed")	\
	X(LE,     RW, RR, RR, NO,  0, "r[a] := r[b] <= r[c], signed")	\
	X(GT,     RW, RR, RR, NO,  0, "r[a] := r[b] > r[c], signed")	\
	X(GE,     RW, RR, RR, NO,  0, "r[a] := r[b] >= r[c], signed")	\
	X(JMP,    NO, NO, NO, JF,  0, "pc := pc + 1 + imm")		\
	X(JZ,     RR, NO, NO, JF,  0, "if r[a] == 0: pc := pc + 1 + imm") \
	X(JNZ,    RR, NO, NO, JF,  0, "if r[a] != 0: pc := pc + 1 + imm") \
	X(LOOP,   NO, NO, NO, JB,  1, "charge MAXACTION; pc := pc + 1 + imm") \
	X(RET,    NO, NO, NO, NO,  0, "end the handler")			\
	X(LDG,    RW, NO, NO, GLB, 0, "r[a] := global[imm]")		\
	X(STG,    RR, NO, NO, GLB, 0, "global[imm] := r[a]")		\
	X(GADD,   RW, RR, NO, GLB, 0, "r[a] := (global[imm] += r[b]), atomic") \
	X(SMOV,   SW, SR, NO, NO,  0, "s[a] := s[b]")			\
	X(SLDK,   SW, NO, NO, STR, 0, "s[a] := strtab[imm]")		\
	X(SCAT,   SW, SR, SR, NO,  0, "s[a] := s[b] . s[c], cut at MAXSTRINGLEN") \
	X(SCMP,   RW, SR, SR, NO,  0, "r[a] := sign(strcmp(s[b], s[c]))") \
	X(SLEN,   RW, SR, NO, NO,  0, "r[a] := strlen(s[b])")		\
	X(CALLI,  RW, RR, NO, HLP, 0, "r[a] := helper[imm](r[b]) (integer result)") \
	X(CALLS,  SW, RR, NO, HLP, 0, "s[a] := helper[imm](r[b]) (string result)") \
	X(PRINTF, NO, RN, SN, FMT, 0, "emit format imm with r[b..], s[c..]") \
	X(EXIT,   NO, NO, NO, NO,  0, "request the end of the session (exit())")

/* Opcode numbers: STP_OP_NOP == 0, in table order. */
enum stp_opcode {
#define STP_X_OPCODE_ENUM(name, a, b, c, imm, cost, doc) STP_OP_##name,
	STP_OPCODES(STP_X_OPCODE_ENUM)
#undef STP_X_OPCODE_ENUM
	STP_OP__COUNT
};

/* Operand kinds used in the table above (see the header comment). */
enum stp_operand_kind {
	STP_OPND_NO,
	STP_OPND_RW,
	STP_OPND_RR,
	STP_OPND_SW,
	STP_OPND_SR,
	STP_OPND_RN,
	STP_OPND_SN,
	STP_OPND_IMM,
	STP_OPND_JF,
	STP_OPND_JB,
	STP_OPND_K,
	STP_OPND_STR,
	STP_OPND_GLB,
	STP_OPND_FMT,
	STP_OPND_HLP,
	STP_OPND__COUNT
};

/* Operand description of one opcode, as data for verifiers and disassemblers. */
struct stp_opcode_info {
	const char *name;
	const char *doc;
	unsigned char a, b, c, imm;	/* enum stp_operand_kind */
	unsigned char cost;
};

/*
 * STP_OPCODE_INFO_INIT expands to the initialiser of a
 * `struct stp_opcode_info [STP_OP__COUNT]` table. The C core defines the one
 * table (kmod/core/isa.c); Rust reads it through the user-space build.
 */
#define STP_X_OPCODE_INFO(name, a, b, c, imm, cost, doc)		\
	[STP_OP_##name] = { #name, doc, STP_OPND_##a, STP_OPND_##b,	\
			    STP_OPND_##c, STP_OPND_##imm, cost },
#define STP_OPCODE_INFO_INIT { STP_OPCODES(STP_X_OPCODE_INFO) }

#endif /* STAPVM_OPCODES_H */
