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
 * of at most MAXSTRINGLEN - 1 bytes (MAXSTRINGLEN counts the terminating NUL,
 * as in stap). There are no pointers in the VM: kernel and
 * user memory is only read through helpers built on the *_nofault copies.
 *
 * Operand kinds (the verifier's rules, one per kind):
 *   NO   operand unused; must be 0
 *   RW   integer register, written          RR   integer register, read
 *   SW   string register, written           SR   string register, read
 *   RN   integer register base of a run read by the instruction; its
 *        length comes from the format (PRINTF, SPRINTF) or the called
 *        function's nparams (FCALL*); must be 0 for an empty run
 *   SN   string register base of a run read by the instruction, likewise
 *        (format string arguments, the function's nsparams)
 *   RP   integer register pair r[x], r[x+1], both read
 *   SP   string register pair s[x], s[x+1], both read
 *   IMM  any 32-bit value
 *   JF   forward jump: target = pc + 1 + imm, imm >= 0, target < handler end
 *   JB   backward jump: target = pc + 1 + imm, imm < 0, target >= handler start
 *   K    index into the 64-bit constant table
 *   STR  index into the string table
 *   GLB  index of a global scalar
 *   FMT  index into the format table
 *   HLP  helper id (helpers.h); result and argument kinds come from there
 *   FN   index into HANDLERS of a function (context STP_CTX_FUNCTION)
 *        whose result kind is the instruction's: FCALL none, FCALLI long,
 *        FCALLS string
 *   STAT index into the STATS section (statistics, abi.h); STHIST and
 *        STBKT need a statistic with a histogram, STVAR one with
 *        STP_STAT_F_VARIANCE
 *   MAP  index into the MAPS section (associative arrays, abi.h). With a
 *        MAP, MOP or MIT immediate, RN / SN (and RNW / SNW) are the
 *        map's key runs: as many integer registers from b as the map has
 *        long keys, as many string registers from c as it has string
 *        keys (base 0 for an empty run); the value operand's file must be
 *        the map's value kind (BAD_MAP)
 *   MOP  packed (STP_IMM_PACK, below): the map id, and in the high
 *        field the opcode of the arithmetic (ADD, SUB, MUL, DIV, MOD,
 *        AND, OR, XOR, SHL, SHR); the map's values must be longs
 *   MIT  packed: the map id, and an iterator (< STP_MAX_ITERS) in the
 *        high field
 *   RM   integer register read, then written
 *   RNW  integer register run written (the map's long keys)
 *   SNW  string register run written (the map's string keys)
 *   SORT foreach order: 0 insertion order; else bits 0..3 the column
 *        (1..nkeys: key column - 1; 15: the value), bit 7 descending,
 *        bits 4..6 zero, except on a statistics array's value column
 *        (15), where they may name an extractor order
 *        (enum stp_sort_extractor: @sum, @min, @max, @avg of each entry,
 *        merged over CPUs; 0, @count, is the stored value)
 *   RX   index into the REGEXES section (regular expressions, abi.h)
 *   MSX  packed: the map id, and in the high field the opcode of a
 *        scalar extractor (STCOUNT, STSUM, STMIN, STMAX, STAVG, STVAR);
 *        the map is a statistics array (STVAR: its statistic has
 *        STP_STAT_F_VARIANCE)
 *
 * Packed immediates (MOP, MIT, MSX: the opcodes MOPR, MITER, MNEXT and
 * MSTX) hold two fields, built with STP_IMM_PACK(lo, hi) and read with
 * STP_IMM_LO(imm) / STP_IMM_HI(imm): the map id in the low
 * STP_IMM_LO_BITS bits (0..15), the second operand above them, below
 * STP_IMM_HI_LIMIT (bits 16..23; bits 24..31 must be zero, BAD_MAP).
 *
 * Cost is what the instruction charges against MAXACTION. Straight-line code
 * is bounded by the handler length, so only back edges charge.
 *
 * Columns: name, a, b, c, imm, cost, meaning. The rows whose imm is of
 * kind MOP, MIT or MSX (MOPR, MITER, MNEXT, MSTX) take a packed
 * immediate: STP_IMM_PACK(map id, operand).
 *
 * What the one-line meanings leave out (the rules vm.c implements and the
 * reference interpreter, vm-spec/src/refvm.rs, was checked against):
 *  - Integers are 64-bit two's complement. ADD, SUB, MUL, NEG, ADDI and
 *    GADD wrap. EQ..GE and LNOT write 0 or 1.
 *  - DIV and MOD are signed and truncate towards zero (C99), so the sign of
 *    a MOD result is the sign of r[b]. r[c] == 0 ends the handler with
 *    STP_RTE_DIVZERO at this pc and r[a] is not written. r[c] == -1 never
 *    traps: DIV gives -r[b] (INT64_MIN / -1 == INT64_MIN), MOD gives 0.
 *  - SHL and SHR use r[c] & 63 as the count (a count of 64 shifts by 0).
 *  - Fuel: every run of a handler starts with MAXACTION units. A LOOP with
 *    fuel left takes one unit and jumps; a LOOP with none ends the handler
 *    with STP_RTE_MAXACTION at the LOOP's pc, without jumping. So a run
 *    takes at most MAXACTION back edges.
 *  - Strings are byte strings of at most MAXSTRINGLEN - 1 bytes (stap's
 *    MAXSTRINGLEN counts the terminating NUL; the VM keeps no NUL but holds
 *    the same bytes) and never hold a NUL (constants are NUL-free, helper
 *    copies stop at one). Every string result below, "cut at MAXSTRINGLEN",
 *    is cut at MAXSTRINGLEN - 1 bytes silently, as are string map keys and
 *    values, which come from string registers. SCAT cuts the result so.
 *    SCMP compares bytes as unsigned values, then lengths (a prefix is
 *    smaller), and writes -1, 0 or 1.
 *  - GADD writes the global's new value to r[a].
 *  - A run-time error ends the handler at the failing instruction: what it
 *    wrote before (globals, records) stays, and an STP_REC_ERROR record
 *    (id = error, payload handler, pc, faulting address or 0) follows if
 *    the ring has room.
 *  - EXIT does not end the handler: it sets the exit flag, writes an
 *    STP_REC_EXIT record and goes on.
 *  - ABORT does what EXIT does, then ends the run at once, as RET of the
 *    probe handler would, from any function depth: no catch sees it, no
 *    error record, the run succeeds. The verifiers treat it as falling
 *    through (the instructions after it are checked, never run).
 *  - PRINTF, EXIT and errors write one record each. A record that does not
 *    fit the ring is dropped and counted (stp_ring_prod.dropped); the
 *    handler goes on. The record clock is read only for a record that is
 *    written.
 *  - Registers are not zeroed between runs; the verifier proves that no
 *    register is read before it is written on any path, back edges
 *    (LOOP) included.
 *
 * User functions (STP_CTX_FUNCTION handlers, abi.h):
 *  - FCALL* charge one unit of fuel (MAXACTION exceeded at the call when
 *    none is left, the callee not entered), then push a frame: the callee
 *    runs on its own register files, a fresh set per nesting level, with
 *    its parameters copied from the caller's runs into r[0..nparams) and
 *    s[0..nsparams) (nothing else of the callee's files is defined). A
 *    call that would make more than MAXNESTING function frames active
 *    (or more than the caller of stp_run gave frames for) ends the run
 *    with STP_RTE_MAXNESTING at the call. Recursion is allowed.
 *  - In a function, RET / RETI / RETS (the one matching its result kind)
 *    pops the frame: RETI copies r[a] to the caller's r[a of the FCALLI],
 *    RETS copies s[a] to the caller's s[a of the FCALLS]; the caller goes
 *    on after the call. In a probe handler only RET is allowed, and it ends
 *    the run. A run-time error in a function ends the whole run; the error
 *    record names the function's handler and pc.
 *  - Fuel is per run, shared by all frames. A run executes at most
 *    (MAXACTION + 1) * (MAXNESTING + 1) * (longest handler) instructions.
 *  - Order at a call (vm.c, checked by refvm.rs): fuel first, then depth,
 *    so a call refused with MAXNESTING has still taken its unit (the
 *    reported fuel left is one lower). Both errors name the call's pc in
 *    the caller's handler. Arguments are copied before the callee runs, and
 *    the result is written to the caller's register only when the frame
 *    pops, so FCALLI/FCALLS may name one of their argument registers as a.
 *  - Only FCALL* enter a function: stp_run() must be given a probe
 *    handler (a function's RETI/RETS at depth 0 would pop a frame that
 *    does not exist; HostSession::run_handler refuses one).
 *
 * Strings (STP_OP_SPRINTF and after):
 *  - SPRINTF formats with stp_format() (format.c, stap's printf) the text
 *    of format imm, which the verifier requires; the result is cut at
 *    MAXSTRINGLEN. SPRINTF, SREPL and STEXT need s[a] distinct from every
 *    string register they read.
 *  - SPRINTF with arguments of the other kind (the compiler never emits
 *    them; the VM must still be defined): an integer conversion or a '*'
 *    of a string argument reads 0, %s of an integer prints it as %d, a
 *    missing argument is 0 / "". %c writes the low byte of its integer;
 *    the result is cut at its first NUL, as stap's C strings end there:
 *    sprintf("%c", 0) (also %c of a string or missing argument) is "",
 *    sprintf("a%cb", 0) is "a". So no string register holds a NUL.
 *  - SSUB: empty when r[c] is outside [0, strlen(s[b])) or r[c+1] <= 0,
 *    else the bytes from r[c] on, at most r[c+1] of them.
 *  - SFIND: the byte index of the first occurrence; an empty s[c] is at 0.
 *  - STOL is the kernel's simple_strtol: an optional '-', then for base 16
 *    an optional "0x"; base 0 picks 16 for "0x", 8 for a leading '0',
 *    else 10; digits 0-9, a-z, A-Z valued below the base (as unsigned)
 *    are taken until the first one that is not; no whitespace skipped,
 *    no error, wraps on overflow.
 *    Edges (vm.c str_tol): base 0 picks 16 only when a byte follows the
 *    "0x" ("0x" alone reads as octal 0); r[c] is not range-checked: base 1
 *    takes only '0' digits (value 0), a base above 36 takes every digit
 *    and letter, a negative base is a huge unsigned one; the value is
 *    accumulated as u64 (v * base + d, wrapping) and '-' negates it last.
 *  - SREPL: an empty s[c] leaves s[b] unchanged; matches are found left to
 *    right without overlap; the result is cut at MAXSTRINGLEN.
 *  - STEXT is STEXTN (below) with r[c] = 0 and r[c+1] = 0: stap's
 *    text_str.
 *  - STEXTN is stap's _stp_text_str (runtime/stp_string.c) with the input
 *    read whole: UTF-8 sequences of 2..4 bytes (not overlong, no
 *    surrogate, <= 0x10FFFF) become \uXXXX / \UXXXXXXXX (upper-case hex);
 *    \a \b \f \n \r \t \v \" \\ a backslash and a letter; other bytes outside
 *    0x20..0x7e \ooo; everything else itself. The output budget is r[c]
 *    when it is in [1, MAXSTRINGLEN - 1], else MAXSTRINGLEN - 1; an escape
 *    that does not fit ends the text. r[c+1] != 0 quotes: the budget is
 *    max(budget, 5) - 2 inside '"', and when input was left over the text
 *    is cut 3 bytes before the budget's end (at the start of an escape it
 *    would split) and '"...' follows. text_str(s) is STEXTN(s, 0, 0),
 *    string_quoted(s) STEXTN(s, 0, 1). s[a] may not be s[b].
 *  - STOK: stap's tokenize. Each CPU has one tokenizer (struct stp_vm: a
 *    copy of the input and a position, kept across runs, as stap keeps it
 *    in its per-CPU context): a non-empty s[b] is copied there and the
 *    position reset; then the next token (strsep with the bytes of s[c]
 *    as delimiters, empty tokens skipped) is s[a], or "" when none is
 *    left. s[a] may be s[b] or s[c].
 *  - SCHAR: r[c] outside [0, strlen(s[b])) gives 0 (stap raises an error);
 *    a byte reads as unsigned, 0..255.
 *  - ERROR ends the run with STP_RTE_USER; the error record carries s[b]
 *    (abi.h: struct stp_rec_error); an empty message gives addr 0 and no
 *    bytes after the struct.
 *  - SYSTEM (system(cmd)) writes one STP_REC_SYSTEM record carrying s[b]
 *    (abi.h; at most MAXSTRINGLEN - 1 bytes, as every string) and goes
 *    on; nothing runs in the kernel. User space runs the command with
 *    /bin/sh -c when it reaches the record, in order with the output
 *    records around it; dropped like any record when the ring is full.
 *
 * Statistics (STP_OP_STADD and after; abi.h: struct stp_stat_desc):
 *  - Each statistic has one copy per CPU (struct stp_stat_cpu plus its
 *    buckets). STADD updates the running CPU's copy only, with plain
 *    stores and no lock (one writer per copy: the per-CPU nesting guard),
 *    as stap's __stp_stat_add: count, sum (wrapping), min, max; with
 *    STP_STAT_F_VARIANCE Welford's update on values shifted left by the
 *    descriptor's shift, with stap's 32-bit delta; and the histogram
 *    bucket: LOG as stap's _stp_val_to_bucket (bucket 64 is 0, 65 + k
 *    holds [2^k, 2^(k+1)), 63 - k holds (-2^(k+1), -2^k]), LINEAR bucket 0
 *    for v < start, 1 + (v - start) / interval (unsigned division) up to
 *    nbuckets - 1, which also takes everything above.
 *  - The extractors merge every CPU's copy (a loop over the CPU ids the
 *    caller of stp_run gives, no fuel) as stap's _stp_stat_get: @count and
 *    @sum of an empty statistic are 0; STMIN, STMAX, STAVG, STVAR, STHIST
 *    and STBKT of an empty one end the run with STP_RTE_EMPTY_AGG. @avg is
 *    sum / count truncated; @variance is stap's total-variance merge,
 *    0 for a single sample. A copy being written on another CPU may be
 *    read half-updated (stap reads without a lock too).
 *  - STHIST writes one STP_REC_HIST record (struct stp_rec_hist and the
 *    merged buckets); user space draws it as stap does.
 *  - STHISTS (sprint(@hist_*(s))) draws the merged histogram into s[a]
 *    with stp_format_hist() (format.c), character for character what
 *    user space prints for STHIST's record, cut at MAXSTRINGLEN; empty
 *    as STHIST. The buckets are read as the drawing goes, so samples
 *    added on another CPU meanwhile may show in some rows and not others.
 *  - STBKT: r[b] outside [0, nbuckets) ends the run with
 *    STP_RTE_HIST_INDEX.
 *  - STCLR (`delete s` of a scalar statistic, stap's _stp_stat_clear)
 *    empties the copy of every CPU id the caller of stp_run gives (a loop
 *    over them, no fuel): afterwards the statistic is as if it had never
 *    had a sample (@count 0, the other extractors EMPTY_AGG, every bucket
 *    0). Clearing only the running CPU's copy would leave the other
 *    CPUs' samples in what the extractors merge. No lock, as STADD: a
 *    sample added on another CPU meanwhile may survive, vanish or leave
 *    that copy half-cleared (stap clears under its per-CPU stat lock).
 *  Edges (vm.c, checked by refvm.rs):
 *  - Order of the checks: no statistics copy for the running CPU (only in
 *    user space: HostSession::set_cpus below the run's CPU id) ends every
 *    statistic instruction with BADOP first; then EMPTY_AGG; STBKT reads
 *    r[b] as unsigned (a negative index is out of range) last. EMPTY_AGG
 *    and HIST_INDEX carry addr 0.
 *  - STADD arithmetic wraps (sum, v << shift, Welford's sums). With
 *    F_VARIANCE, for the n-th sample (n = count before it, n >= 1):
 *    delta = (s32)(vs - avg_s), avg_s += div64(delta, n + 1),
 *    m2 += delta * (vs - new avg_s), variance_s = div64(m2, n), where
 *    vs = v << shift and div64 is stap's (0 for a 0 divisor, -x for -1).
 *    The first sample sets avg_s = vs, m2 = 0 and leaves variance_s 0.
 *  - LOG: INT64_MIN falls in bucket 0. LINEAR: v - start is computed
 *    wrapping and then read as signed, so a value more than INT64_MAX
 *    above start (e.g. INT64_MAX with a negative start) lands in the
 *    underflow bucket 0, not the overflow one (stap's s64 arithmetic has
 *    the same overflow).
 *  - The merge visits CPU ids in order; min and max start from the first
 *    copy with samples. @variance: avg = div64((sum << shift), count)
 *    with the merged sum, then div64(sum over copies of
 *    count * (avg_s - avg)^2 + (count - 1) * variance_s, count - 1)
 *    >> ((2 * shift) & 63), arithmetic, all wrapping; 0 for one sample.
 *    @avg is div64(sum, count).
 *  - STHIST's record (id: the statistic's index) reads the clock only when
 *    it is written; a full ring drops it and the run goes on.
 *
 * Associative arrays (STP_OP_MGET and after; abi.h: struct stp_map_desc):
 *  - Every map instruction is one step under the map's lock, taken with
 *    at most MAXTRYLOCK attempts (attempt i polls 2^(i-1) times, at most
 *    1024, stp_env_cpu_relax() apart); when they all fail the run ends without
 *    an error as *skipped* (stp_run_ctx.skipped; the caller counts it
 *    against MAXSKIPPED, as stap does for lock contention). What the run
 *    did before stays.
 *  - MGET / MGETS of an absent key give 0 / "" and do not insert it.
 *  - MSET, MSETS and MOPR insert an absent key. Inserting into a full map
 *    ends the run with STP_RTE_ARRAY_OVERFLOW (STP_RTE_ARRAY_SIZE, addr
 *    the capacity, for a map declared with a size), except for a wrap map,
 *    which first deletes its oldest entry (the one inserted first).
 *  - MOPR: the entry (0 when absent) := entry op r[a], computed as the
 *    opcode of the same name, then r[a] := the new value. DIV / MOD by 0
 *    end the run with STP_RTE_DIVZERO and change nothing.
 *  - MITER fills iterator i (this CPU's) with the map's entries as they
 *    are now, in insertion order or sorted by c (ties in insertion
 *    order; strings compare as SCMP), keeping the first max(r[b], 0).
 *    Sorting is a heapsort: at most 2 * n * log2(n) comparisons.
 *  - MNEXT: r[a] := 1 and the next entry's keys into the key runs; or,
 *    when the iterator is exhausted, r[a] := 0 and the key runs 0 / "".
 *    Entries deleted (or replaced) since MITER are passed over. An
 *    iterator last filled for another map ends the run with STP_RTE_BADOP.
 *    The verifier requires an iterator to be filled by MITER on every
 *    path before MNEXT reads it.
 *  Edges (vm.c / map.c, checked by refvm.rs):
 *  - MOPR's division by zero is checked before the lock: an absent key is
 *    not inserted, the error carries addr 0.
 *  - A full insertion is only one of an absent key (MSET, MSETS, MOPR on
 *    a present key always succeed); ARRAY_OVERFLOW and ARRAY_SIZE both
 *    carry the capacity as addr, and the failing instruction changes
 *    nothing (r[a] of MOPR included). A wrap map evicts its oldest entry
 *    only for an absent key, before inserting it.
 *  - Insertion order: each insertion takes the next number of a per-map
 *    counter (MAP_READ's seq, from 1) that MDEL and MCLEAR never reset.
 *    Updating a present key keeps its place; deleting and inserting it
 *    again puts it last, as a new entry (an iterator filled before passes
 *    over it).
 *  - MITER: bit 7 reverses the column's comparison only; ties stay in
 *    ascending insertion order either way. String values and keys compare
 *    as SCMP, longs signed. The limit applies after the sort (the first
 *    r[b] entries of the sorted order); r[b] <= 0 gives an empty
 *    iteration.
 *  - MNEXT writes the key runs in key order, then r[a] (so an r[a] inside
 *    the key run ends up holding the flag); strings are copied cut at
 *    MAXSTRINGLEN. The BADOP check (iterator filled for another map) comes
 *    before the lock. Iterators are one set per CPU and frame level (the
 *    probe handler's, then one per function nesting depth) and outlive
 *    the run: a function's iterator i is not its caller's iterator i, so
 *    a function's foreach (recursive ones too) never disturbs a foreach
 *    of a caller. The verifier gives each level 1 + the largest iterator
 *    named anywhere, and MAXNESTING + 1 levels when a function uses one.
 *  - The lock is the only way to end a run *skipped*; in user space
 *    (HostSession, one thread) it is always taken, so no differential run
 *    ends skipped.
 *
 * Statistics arrays (STP_OP_MSTADD and after; a STP_MAPV_STAT map whose
 * descriptor names its STP_STAT_F_ARRAY statistic):
 *  - Entry slot i of the map owns copy i of the statistic on every CPU
 *    (the statistic's per-CPU block: capacity copies). The entry's stored
 *    value is its @count, kept under the lock, so the value order of
 *    MITER (column 15) is stap's default @count order for statistics
 *    arrays, and MAP_READ gives the count. MGET / MSET / MOPR refuse the
 *    map (BAD_MAP); MHAS, MDEL, MCLEAR, MITER and MNEXT work as on any map.
 *  - MSTADD: under the map's lock (as every map instruction), find or
 *    insert the key (ARRAY_OVERFLOW / ARRAY_SIZE as MSET; a wrap map
 *    evicts its oldest entry), zero the slot's copies on every CPU when
 *    the entry is new, add r[a] to this CPU's copy as STADD does and
 *    count it in the entry's value. Holding the lock for the update keeps
 *    a delete and re-insert of the slot on another CPU from mixing two
 *    keys' samples (the price: `<<<` on an array serialises on the map's
 *    lock; stap's per-CPU maps avoid it but need a merge of whole tables
 *    on every read).
 *  - MSTX (imm: STP_IMM_PACK(map, extractor opcode)) and MSTHIST: under
 *    the lock, look the key up and merge the slot's copies as the scalar
 *    extractor does; an absent key is an empty statistic (@count, @sum 0; the
 *    others, MSTHIST included, end the run with STP_RTE_EMPTY_AGG).
 *    MSTHIST's STP_REC_HIST record has the statistic's index as its id.
 *    MSTHISTS (sprint(@hist_*(a[k]))) draws the merged histogram into
 *    s[a] as STHISTS does, under the lock (the slot cannot be re-used
 *    meanwhile); an absent or empty key ends the run with EMPTY_AGG and
 *    leaves s[a] as it was.
 *    MSTBKT (@hist_*(a[k])[i], and `i in @hist_*(a[k])`, which is the
 *    same value in stap) reads bucket r[a] of the merged histogram of
 *    the key's slot under the lock and writes it to r[a]: an absent or
 *    empty key ends the run with EMPTY_AGG first (stap: "aggregate
 *    element not found"), then r[a] read as unsigned at or above the
 *    statistic's nbuckets with HIST_INDEX, both with addr 0 and r[a]
 *    left as it was.
 *    One difference from the scalar merge: when only one CPU's copy holds
 *    samples, @variance is that copy's own Welford variance (0 for one
 *    sample), shifted right by 2 * shift, not the merged formula (stap
 *    aggregates a pmap by copying the first CPU's node whole).
 *
 * Regular expressions (STP_OP_REMATCH; abi.h: struct stp_regex_desc):
 *  - REMATCH walks regex imm's DFA over the bytes of s[b] from its start
 *    state: for each byte, state := trans[state][classes[byte]], stopping
 *    early at state 0 (no match) or 1 (match); after the last byte a
 *    state >= 2 takes the end-of-string column once. r[a] := 1 when the
 *    walk ends in state 1, else 0. At most strlen(s[b]) + 1 steps (<=
 *    MAXSTRINGLEN), no fuel, no error. The compiler builds unanchored
 *    DFAs (the pattern may match anywhere; `^` and `$` anchor at the ends
 *    of the string), as stap's `=~`; `!~` is REMATCH then LNOT.
 *  - REMATCHS is REMATCH that also records the match's groups (stap's
 *    matched(), matched_str(), ngroups(): tapset/regex.stp); the
 *    compiler emits it instead of REMATCH only in scripts that call one
 *    of them. Its regex must have a group program (abi.h: struct
 *    stp_regex_sub, ninsn > 0). When the DFA says "match", the program
 *    runs as a Pike VM over s[b] (abi.h: STP_RX_*): threads in priority
 *    order, each with its slots (capture positions, unset at first); at
 *    each position 0..len, after the threads that SET stepped into it
 *    and while no match is known, a new thread starts at instruction 0
 *    with the lowest priority (the lazy ".*" pad of an unanchored
 *    match). A closure follows JMP, SPLIT (pc + 1 first, then arg), SAVE
 *    (slot arg := position), BOL (position 0), EOL (position len); each
 *    pc is visited once per position, by all closures into it together
 *    (the higher-priority thread keeps it); a SET or MATCH it reaches is
 *    a thread. Then the threads are taken in order: a thread's start is
 *    its slot 0 (unset: after every position); one that started after
 *    the known match is dropped; MATCH records the thread's slots when
 *    no match is known, when its start is earlier than the known one's,
 *    or when it has the same start and a later end (the position); SET
 *    of a byte in set arg steps into the next position. The pass ends
 *    after position len, or earlier once a match is known and no thread
 *    is left. So: leftmost start, longest end for that start, groups of
 *    the first thread in priority order (greedy closures, first
 *    alternative first). Each position takes one unit of fuel, before
 *    its work (none left: STP_RTE_MAXACTION at the REMATCHS). r[a] is
 *    the DFA's answer; the
 *    CPU's group state (struct stp_rx_state, kmod/core/stp_core.h: a copy
 *    of s[b], the slots, nslots) holds the match when the program found
 *    one, else "failed" (also when the DFA said no). Every run starts
 *    with "failed", so only a REMATCHS of the same run (functions
 *    included) is seen.
 *  - MATCHED: group n = r[b] of the recorded match, the bytes between
 *    slots 2n and 2n + 1 of the copy; "" when the group took no part (a
 *    slot unset). A failed (or absent) match ends the run with
 *    STP_RTE_SUBEXP_FAILED, n < 0 or n >= nslots / 2 with
 *    STP_RTE_SUBEXP_RANGE, the address being n. NGROUPS: nslots / 2, or
 *    STP_RTE_SUBEXP_COUNT after a failed match.
 *
 *  - TRY / TRYEND (stap's try/catch): each frame (the handler's, and each
 *    function call's) has at most one armed catch: a target pc in its own
 *    code and the string register that receives the message. TRY sets
 *    s[a] := "" and arms (target pc + 1 + imm, replacing any armed one);
 *    TRYEND disarms; a call starts its frame disarmed and the caller's
 *    catch is back when it returns. A run-time error other than MAXACTION
 *    and BADOP is caught by the innermost frame with an armed catch:
 *    frames above it are dropped, its catch is disarmed, catching charges
 *    one MAXACTION unit (none left: MAXACTION, uncaught, at the failing
 *    instruction), s[a] of that frame := stap's message of the error
 *    (the STP_RUNTIME_ERRORS text with the address in %llx / %llu, the
 *    error(msg) text for %s; no location), and it goes on at the target.
 *    A caught error writes no record and is not counted; with no armed
 *    catch the error ends the run as before. Verifier (BAD_TRY): the
 *    armed catch of every instruction is the same on every path to it
 *    (back edges included) and lies after it; the state at a target is
 *    what every instruction run under that catch has (plus s[a]). So a
 *    catch only ever jumps forward, and every way
 *    back still goes through LOOP or a call, which charge fuel.
 *
 * Pretty-printing (STP_OP_PRETTY; abi.h: struct stp_pretty_node), stap's
 * `$var$` / `$var$$` (tapsets.cxx, dwarf_pretty_print), into s[a]:
 *  - r[b] is the value of the target chain (an integer or pointer value,
 *    or the address of an embedded struct, union or array), r[c] the node
 *    of its type, following pointers at the top as stap does (a pointer
 *    to a struct has the struct's node: its members are read at r[b]).
 *    r[c] unsigned at or above the number of PRETTY nodes (no BTF: the
 *    stand-in image has none) gives "?", stap's text for a type it cannot
 *    print.
 *  - The node at the top: SIGNED "%i", UNSIGNED "%u", CHAR "'%#c'" of
 *    r[b] as it is; POINTER "%p", FUNC "<function>:%p" of r[b]; STRING and
 *    CHARS the string at r[b], quoted; STRUCT "{" members "}" read at
 *    r[b]; ARRAY "[" element at r[b] ", ...]"; UNKNOWN "?".
 *  - A member: ".name=" (or its anonymous label, then "="), ", " between
 *    members; scalars read at its address (size bytes, a bitfield's bits
 *    taken out, sign-extended for SIGNED), POINTER/FUNC/STRING 8 bytes; a
 *    STRUCT "{...}" and an ARRAY "[...]" unless imm is 1 ($$), when they
 *    are expanded as at the top, at most STP_PRETTY_MAX_DEPTH levels down
 *    (deeper: "{...}" / "[...]"). Before each member and array element,
 *    once STP_PRETTY_MAX_ARGS values have been printed, a struct prints
 *    "..." and closes, an array skips its element (stap's 32-argument
 *    sprintf limit).
 *  - A string is kernel_string(addr) else user_string(addr), then
 *    string_quoted (opcodes.h STEXTN's quoting with MAXSTRINGLEN).
 *  - Any read that faults (a member, a pointer, a string that neither
 *    copy can read) makes the whole result "ERROR", as stap's generated
 *    function catches it. The result is cut at MAXSTRINGLEN - 1 bytes.
 *  - Each node printed costs one MAXACTION unit (none left: MAXACTION).
 *    Two string registers serve as scratch: the verifier requires the
 *    handler's nsregs <= STP_MAX_SREGS - 2 (BAD_REGISTER), and PRETTY uses
 *    s[STP_MAX_SREGS - 2] and s[STP_MAX_SREGS - 1] of the current frame.
 *    imm other than 0 and 1 is refused (BAD_OPERAND).
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
	X(SCAT,   SW, SR, SR, NO,  0, "s[a] := s[b] . s[c], cut at MAXSTRINGLEN - 1") \
	X(SCMP,   RW, SR, SR, NO,  0, "r[a] := sign(strcmp(s[b], s[c]))") \
	X(SLEN,   RW, SR, NO, NO,  0, "r[a] := strlen(s[b])")		\
	X(CALLI,  RW, RR, NO, HLP, 0, "r[a] := helper[imm](r[b]) (integer result)") \
	X(CALLS,  SW, RR, NO, HLP, 0, "s[a] := helper[imm](r[b]) (string result)") \
	X(PRINTF, NO, RN, SN, FMT, 0, "emit format imm with r[b..], s[c..]") \
	X(EXIT,   NO, NO, NO, NO,  0, "request the end of the session (exit())") \
	X(FCALL,  NO, RN, SN, FN,  1, "call function imm(r[b..], s[c..]), no result") \
	X(FCALLI, RW, RN, SN, FN,  1, "r[a] := function imm(r[b..], s[c..])") \
	X(FCALLS, SW, RN, SN, FN,  1, "s[a] := function imm(r[b..], s[c..])") \
	X(RETI,   RR, NO, NO, NO,  0, "return r[a] from a function")	\
	X(RETS,   SR, NO, NO, NO,  0, "return s[a] from a function")	\
	X(SPRINTF, SW, RN, SN, FMT, 0, "s[a] := sprintf(format imm, r[b..], s[c..])") \
	X(SSUB,   SW, SR, RP, NO,  0, "s[a] := substr(s[b], start r[c], length r[c+1])") \
	X(SFIND,  RW, SR, SR, NO,  0, "r[a] := first index of s[c] in s[b], or -1") \
	X(STOL,   RW, SR, RR, NO,  0, "r[a] := strtol(s[b], base r[c])") \
	X(SREPL,  SW, SR, SP, NO,  0, "s[a] := s[b] with every s[c] replaced by s[c+1]") \
	X(STEXT,  SW, SR, NO, NO,  0, "s[a] := text_str(s[b]), as STEXTN with 0, 0") \
	X(SCHAR,  RW, SR, RR, NO,  0, "r[a] := byte r[c] of s[b] (stringat), 0 outside") \
	X(ERROR,  NO, SR, NO, NO,  0, "end the run with error(s[b]) (STP_RTE_USER)") \
	X(STADD,  RR, NO, NO, STAT, 0, "stat imm <<< r[a], this CPU's copy, no lock") \
	X(STCOUNT, RW, NO, NO, STAT, 0, "r[a] := @count(stat imm), merged over CPUs") \
	X(STSUM,  RW, NO, NO, STAT, 0, "r[a] := @sum(stat imm), merged over CPUs") \
	X(STMIN,  RW, NO, NO, STAT, 0, "r[a] := @min(stat imm); error if empty") \
	X(STMAX,  RW, NO, NO, STAT, 0, "r[a] := @max(stat imm); error if empty") \
	X(STAVG,  RW, NO, NO, STAT, 0, "r[a] := @avg(stat imm); error if empty") \
	X(STVAR,  RW, NO, NO, STAT, 0, "r[a] := @variance(stat imm); error if empty") \
	X(STHIST, NO, NO, NO, STAT, 0, "emit the merged histogram of stat imm; error if empty") \
	X(STBKT,  RW, RR, NO, STAT, 0, "r[a] := @hist_*(stat imm)[r[b]]; error if empty or out of range") \
	X(MGET,   RW, RN, SN, MAP,  0, "r[a] := map imm[r[b..], s[c..]], 0 if absent") \
	X(MGETS,  SW, RN, SN, MAP,  0, "s[a] := map imm[r[b..], s[c..]], \"\" if absent") \
	X(MSET,   RR, RN, SN, MAP,  0, "map imm[r[b..], s[c..]] := r[a]") \
	X(MSETS,  SR, RN, SN, MAP,  0, "map imm[r[b..], s[c..]] := s[a]") \
	X(MOPR,   RM, RN, SN, MOP,  0, "r[a] := (map[r[b..], s[c..]] op= r[a]), atomic") \
	X(MDEL,   NO, RN, SN, MAP,  0, "delete map imm[r[b..], s[c..]]") \
	X(MHAS,   RW, RN, SN, MAP,  0, "r[a] := [r[b..], s[c..]] in map imm") \
	X(MCLEAR, NO, NO, NO, MAP,  0, "delete every entry of map imm") \
	X(MITER,  NO, RR, SORT, MIT, 0, "iterator := map's entries sorted by c, first r[b]") \
	X(MNEXT,  RW, RNW, SNW, MIT, 0, "r[a] := 1, keys := next entry's; r[a] := 0 at the end") \
	X(MSTADD, RR, RN, SN, MAP, 0, "map imm[r[b..], s[c..]] <<< r[a] (statistics array)") \
	X(MSTX,   RW, RN, SN, MSX, 0, "r[a] := @count..@variance of map[r[b..], s[c..]]") \
	X(MSTHIST, NO, RN, SN, MAP, 0, "emit the merged histogram of map imm[r[b..], s[c..]]") \
	X(REMATCH, RW, SR, NO, RX, 0, "r[a] := s[b] =~ regex imm (1 or 0)") \
	X(STEXTN, SW, SR, RP, NO,  0, "s[a] := text_strn(s[b], len r[c], quoted r[c+1])") \
	X(STOK,   SW, SR, SR, NO,  0, "s[a] := tokenize(s[b], delimiters s[c]), this CPU's state") \
	X(STHISTS, SW, NO, NO, STAT, 0, "s[a] := the merged histogram of stat imm, drawn; error if empty") \
	X(TRY,    SW, NO, NO, JF,  0, "s[a] := \"\"; arm this frame's catch: pc + 1 + imm, message into s[a]") \
	X(TRYEND, NO, NO, NO, NO,  0, "disarm this frame's catch") \
	X(MSTHISTS, SW, RN, SN, MAP, 0, "s[a] := the merged histogram of map imm[r[b..], s[c..]], drawn") \
	X(ABORT,  NO, NO, NO, NO,  0, "request the end of the session and end the run now, uncaught (abort())") \
	X(STCLR,  NO, NO, NO, STAT, 0, "delete stat imm: every CPU's copy emptied") \
	X(SYSTEM, NO, SR, NO, NO,  0, "emit s[b] as an STP_REC_SYSTEM record: system(), run by user space") \
	X(MSTBKT, RM, RN, SN, MAP, 0, "r[a] := @hist_*(map imm[r[b..], s[c..]])[r[a]]; error if absent, empty or out of range") \
	X(REMATCHS, RW, SR, NO, RX, 0, "r[a] := s[b] =~ regex imm, recording its groups for MATCHED") \
	X(MATCHED, SW, RR, NO, NO, 0, "s[a] := group r[b] of this run's last REMATCHS; error if failed or absent") \
	X(NGROUPS, RW, NO, NO, NO, 0, "r[a] := groups of this run's last REMATCHS, group 0 included; error if failed") \
	X(PRETTY, SW, RR, RR, IMM, 0, "s[a] := value r[b] pretty-printed as PRETTY node r[c], nested aggregates expanded when imm is 1")

/* Opcode numbers: STP_OP_NOP == 0, in table order. */
enum stp_opcode {
#define STP_X_OPCODE_ENUM(name, a, b, c, imm, cost, doc) STP_OP_##name,
	STP_OPCODES(STP_X_OPCODE_ENUM)
#undef STP_X_OPCODE_ENUM
	STP_OP__COUNT
};

/*
 * Packed immediates (operand kinds MOP, MIT, MSX; see the header
 * comment): the map id in the low field, the arithmetic opcode, iterator
 * or extractor opcode in the high one. Values of the high field are below
 * STP_IMM_HI_LIMIT. The numbers carry no suffix: build.rs hands them to
 * Rust as they are (vm-spec/src/tables.rs: imm_pack, imm_lo, imm_hi).
 */
#define STP_IMM_LO_BITS		16
#define STP_IMM_LO_MASK		((1u << STP_IMM_LO_BITS) - 1)
#define STP_IMM_HI_LIMIT	256
#define STP_IMM_LO(imm)		((unsigned int)(imm) & STP_IMM_LO_MASK)
#define STP_IMM_HI(imm)		((unsigned int)(imm) >> STP_IMM_LO_BITS)
#define STP_IMM_PACK(lo, hi)						\
	((int)(((unsigned int)(hi) << STP_IMM_LO_BITS) |		\
	       ((unsigned int)(lo) & STP_IMM_LO_MASK)))

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
	STP_OPND_RP,
	STP_OPND_SP,
	STP_OPND_FN,
	STP_OPND_STAT,
	STP_OPND_MAP,
	STP_OPND_MOP,
	STP_OPND_MIT,
	STP_OPND_RM,
	STP_OPND_RNW,
	STP_OPND_SNW,
	STP_OPND_SORT,
	STP_OPND_MSX,
	STP_OPND_RX,
	STP_OPND__COUNT
};

/*
 * Extractor orders of a SORT operand (bits 4..6, column 15 of a
 * statistics array): MITER merges each entry's statistic once, keeps the
 * extractor's value as the entry's sort key (an entry always holds at
 * least one sample) and sorts by it, ties in insertion order. Such a
 * MITER is a statistic instruction: a run without a statistics copy for
 * its CPU ends with STP_RTE_BADOP there (before the lock), as MSTADD,
 * MSTX and MSTHIST do.
 */
enum stp_sort_extractor {
	STP_SORTX_COUNT,	/* the stored value: stap's default order */
	STP_SORTX_SUM,
	STP_SORTX_MIN,
	STP_SORTX_MAX,
	STP_SORTX_AVG,
	STP_SORTX__COUNT
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
 * table (kmod/core/isa.c); Rust expands STP_OPCODES itself (vm-spec/build.rs,
 * build/tables.rs.in: tables::OPCODES).
 */
#define STP_X_OPCODE_INFO(name, a, b, c, imm, cost, doc)		\
	[STP_OP_##name] = { #name, doc, STP_OPND_##a, STP_OPND_##b,	\
			    STP_OPND_##c, STP_OPND_##imm, cost },
#define STP_OPCODE_INFO_INIT { STP_OPCODES(STP_X_OPCODE_INFO) }

/*
 * The opcodes that read kernel memory at an address the program chooses
 * (PRETTY follows pointers through kernel memory); with helpers.h
 * STP_HELPERS_READ_KERNEL, what lockdown's confidentiality mode refuses
 * (kmod/lockdown.c).
 */
#define STP_OPS_READ_KERNEL(X) X(PRETTY)

#endif /* STAPVM_OPCODES_H */
