//! The stapvm compiler: a SystemTap script in, a `vm_spec::program::Program`
//! (bytecode the kernel's verifier checks) out.
//!
//! The passes, in the order `compile` runs them (`pass1` and `front` are
//! the parts `parse_only` and `check` share); each is a module, `parse`,
//! `passes::resolve` and `passes::lower` a directory of them:
//!
//! 1. `parse::lexer` — text to tokens (`$1`/`@1` pasted here, as in stap);
//! 2. `parse::preprocess` — `@define` macros expanded, `%( %? %: %)`
//!    conditionals evaluated for a `Target` (kernel version, arch ...);
//! 3. `parse` — tokens to the `ast` (nom over the token slice), the whole
//!    SystemTap grammar; parse errors, or a script left with no
//!    declaration, stop here with stap's "Pass 1: parse failed" summary;
//!    Then `passes::usertapset` adds the `-I` tapset files
//!    (`Target::tapset_files`) whose functions, globals or aliases the
//!    script uses;
//! 4. `tapset::kernel_aliases` — the kernel probe alias families
//!    (`tapset/kernel/*.stp`: `vfs`, `netdev`, `signal`, `kprocess` ...),
//!    rebuilt on BTF and tracepoints, added to a script that uses them;
//! 5. `passes::expand` — probe aliases (`=`, `+=`, suffixes, wildcard
//!    uses) replaced by probes on their points, prologue and epilogue
//!    around the body; the alias definitions are gone afterwards;
//! 6. `passes::prometheus` — `probe prometheus` points dropped with a
//!    warning (stapvm has no procfs probes);
//! 7. `tapset` — the built-in tapset as AST rewrites: syscall probe points
//!    and their alias variables, `@entry`, tapset functions
//!    (docs/tapset.md);
//! 8. `passes::resolve` — probe points, names (globals, locals, user
//!    functions), built-ins, target variables, statistics and arrays, the
//!    `syscall.open` warning; what the later passes cannot handle yet
//!    (conditional probe points, `*` components, user-space probes,
//!    embedded C ...) is reported here as `not supported yet: <feature>`;
//! 9. `passes::elide` — stap's `no probes found` when every probe reduced
//!    to nothing (after a resolution without errors); then, when the
//!    `Target` has a kernel symbol list (`stapvm check`), `symbols` checks
//!    the kernel function probe points against it;
//! 10. `passes::types` — long/string inference. N.B. needs every name
//!     resolved, so it runs only when the passes before found no error;
//!     with `Target::werror` (stap's `-W`) a warning fails here too;
//!     then `passes::setglobals` compiles in the `-G NAME=VALUE` initial
//!     values (`Target::global_inits`), by the globals' types;
//! 11. `passes::lower` — the handlers (one per probe and context of its
//!     points, one per user function called), the probes, and the
//!     constant, string, format, map and statistics tables. Runs only on a
//!     script without errors;
//! 12. `verify` — the program laid out as the module's image and checked
//!     by the module's own verifier (kmod/core/verify.c, built for user
//!     space), so `stapvm compile` never writes a program the module's
//!     verifier would refuse.
//!
//! With `Target::unelided` (stap `-u`) `elide` does not run and every
//! function is checked and lowered.
//!
//! Embedded C (`%{ %}`) is a parse error (`NO_GURU_EMBEDDED`, once per
//! script: stapvm has no guru mode; `guru` lists every guru-only construct
//! and how it is refused); with
//! `Target::guru` it parses (`parse_only` accepts it) and `resolve` refuses
//! it (`not supported yet: embedded C`).
//!
//! Diagnostics are data (`diag::Diagnostic`) until `diag::Renderer` prints
//! them in stap's layout. Used by the `stapvm` CLI (`compile`, `check`).
#![warn(missing_docs)]
pub mod ast;
pub mod diag;
pub mod dump;
pub mod glob;
pub mod guru;
pub mod parse;
pub mod passes;
pub mod printf;
pub mod regex;
pub mod suggest;
pub mod symbols;
pub mod tapset;
pub mod verify;

use diag::{Diags, ExtraFile, Renderer, Severity};
pub use guru::{NO_GURU, NO_GURU_EMBEDDED};
pub use parse::preprocess::{TapsetFile, Target};
use vm_spec::program::Program;

/// Compiler options from the command line.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `-D NAME=VAL`: values for the limits with stap's names
    /// (`MAXACTION`, `MAXSTRINGLEN` ...); other names have no effect (the
    /// C macros stap would pass them to do not exist here) and draw a
    /// warning ([`unknown_define_warning`]).
    pub defines: Vec<(String, String)>,
    /// Script arguments, pasted for `$1`, `@1`, `$#`, `@#`.
    pub args: Vec<String>,
}

/// A compiled script.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The program.
    pub program: Program,
    /// Warnings, each rendered in stap's layout (ends with a newline).
    pub warnings: Vec<String>,
}

/// A script that did not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rendered}")]
pub struct Failed {
    /// Every diagnostic (warnings included) in stap's layout, followed by
    /// stap's summary: `N parse error(s).` and `Pass 1: parse failed.
    /// [man error::pass1]`, or `Pass 2: analysis failed.  [man
    /// error::pass2]`. Print it to stderr as it is.
    pub rendered: String,
    /// Number of errors (warnings not counted).
    pub count: usize,
}

/// What a pass did, reported as it ends (the numbers of stap's `-v`
/// lines: `Pass 1: parsed user script and N library scripts ...`). A
/// caller that wants them passes a `PassHook` to `compile_observed`,
/// `check_observed` or `parse_only_observed`; a pass that fails reports
/// nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PassReport {
    /// The passes begin (on the compiler's thread, after the caller's
    /// preparations: pass 1's time starts here).
    Started,
    /// Pass 1, parsing: the script, and `library_files` tapset files
    /// parsed with it (the `-I` files, and the kernel alias files
    /// (`tapset/kernel/*.stp`) the script's probe points or calls need;
    /// the built-in function library is indexed at build time and its
    /// functions are parsed in pass 2, when called).
    Parsed {
        /// Tapset files parsed.
        library_files: usize,
    },
    /// Pass 2, elaboration: aliases expanded, the tapset added, names
    /// resolved, types inferred.
    Analyzed {
        /// Probe points that get a handler.
        probes: usize,
        /// User and tapset functions kept (called from a probe, or all
        /// with `-u`).
        functions: usize,
        /// Embedded-C blocks: always 0 (stapvm has no guru mode).
        embeds: usize,
        /// Global variables.
        globals: usize,
    },
    /// Pass 3, lowering to bytecode (where stap translates to C).
    Lowered {
        /// Handlers.
        handlers: usize,
        /// Instructions of all handlers.
        instructions: usize,
    },
    /// The verifier accepted the program (the compiler's part of pass 4).
    Verified,
}

/// Receives the `PassReport`s, on the compiler's thread.
pub type PassHook<'a> = &'a mut (dyn FnMut(&PassReport) + Send);

/// A hook that ignores the reports.
fn no_hook(_: &PassReport) {}

/// The compiler's version, recorded in every program.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The passes up to type inference, shared by `compile` and `check`.
struct Front {
    /// The script's tokens, then those of its `-I` tapset files.
    tokens: Vec<parse::lexer::Token>,
    /// The `-I` tapset files (`passes::usertapset`).
    files: Vec<ExtraFile>,
    script: ast::Script,
    resolved: passes::resolve::Resolved,
    types: passes::types::Types,
    diags: Diags,
}

/// Renders `diags` and the summary for a failure in `pass` (1 or 2).
fn failed(
    source_name: &str,
    source: &str,
    front_tokens: &[parse::lexer::Token],
    files: &[ExtraFile],
    diags: &Diags,
    pass: u8,
) -> Failed {
    let mut r = Renderer::with_files(source_name, source, front_tokens, files);
    let mut out = String::new();
    let shown = Shown::of(&diags.list);
    for d in &shown.list {
        out.push_str(&r.render(d));
    }
    let mut count = shown
        .list
        .iter()
        .filter(|d| d.severity != Severity::Warning)
        .count();
    if count == 0 && pass == 2 {
        // Only warnings: the failure is stap -W's.
        count = shown.list.len();
    }
    if pass == 1 {
        let n = diags
            .list
            .iter()
            .filter(|d| d.severity == Severity::ParseError)
            .count();
        if n > 0 {
            out.push_str(&format!(
                "{n} parse error{}.\n",
                if n == 1 { "" } else { "s" }
            ));
        }
        out.push_str("Pass 1: parse failed.  [man error::pass1]\n");
    } else {
        out.push_str("Pass 2: analysis failed.  [man error::pass2]\n");
    }
    out.push_str(&shown.summary());
    Failed {
        rendered: out,
        count,
    }
}

/// The diagnostics stap prints: a semantic error whose text (notes
/// included) was already printed, or a warning whose message was, is
/// counted as suppressed instead (stap's duplicate elimination,
/// session.cxx print_error / print_warning; stap keys errors on the place
/// in its own source that raised them, which the text stands in for).
struct Shown<'a> {
    list: Vec<&'a diag::Diagnostic>,
    errors: usize,
    warnings: usize,
}

impl<'a> Shown<'a> {
    fn of(all: &'a [diag::Diagnostic]) -> Self {
        let mut seen = std::collections::HashSet::new();
        let mut s = Shown {
            list: Vec::new(),
            errors: 0,
            warnings: 0,
        };
        for d in all {
            let key = match d.severity {
                Severity::ParseError => {
                    s.list.push(d);
                    continue;
                }
                Severity::Warning => format!("W{}", d.message),
                Severity::SemanticError => {
                    let notes: Vec<&str> = d.notes.iter().map(|n| n.message.as_str()).collect();
                    format!("E{}\n{}", d.message, notes.join("\n"))
                }
            };
            if seen.insert(key) {
                s.list.push(d);
            } else if d.severity == Severity::Warning {
                s.warnings += 1;
            } else {
                s.errors += 1;
            }
        }
        s
    }

    /// stap's `report_suppression` text ("" when nothing was suppressed).
    fn summary(&self) -> String {
        let mut out = String::new();
        if self.errors > 0 {
            out.push_str(&format!(
                "Number of similar error messages suppressed: {}.\n",
                self.errors
            ));
        }
        if self.warnings > 0 {
            out.push_str(&format!(
                "Number of similar warning messages suppressed: {}.\n",
                self.warnings
            ));
        }
        if !out.is_empty() {
            out.push_str("Rerun with -v to see them.\n");
        }
        out
    }
}

/// The limit values: defaults overridden by `-D NAME=VAL`.
fn limits(opts: &Options) -> Result<Vec<u32>, String> {
    let mut limits = vm_spec::program::default_limits();
    for (name, val) in &opts.defines {
        if let Some((i, l)) = vm_spec::limits::by_name(name) {
            // A bare `-D NAME` of an on/off limit (`-D STP_NO_OVERLOAD`)
            // turns it on, as the C macro stap defines would.
            let val = if val.trim().is_empty() && l.min == 0 && l.max == 1 {
                "1"
            } else {
                val.as_str()
            };
            match val.trim().parse::<u64>() {
                Ok(v) if v >= u64::from(l.min) && v <= u64::from(l.max) => {
                    if let Some(slot) = limits.get_mut(i) {
                        *slot = v as u32;
                    }
                }
                _ => {
                    return Err(format!(
                        "ERROR: -D {name}={val}: must be a number in [{}, {}]\n",
                        l.min, l.max
                    ))
                }
            }
        }
    }
    Ok(limits)
}

/// Names stap's runtime reads from `-D` that stapvm covers another way,
/// and what to do instead.
fn define_hint(name: &str) -> Option<String> {
    use vm_spec::abi;
    Some(match name {
        "KRETACTIVE" => "a kretprobe's instances are set per probe point, \
                         kernel.function(\"f\").return.maxactive(N); without it the kernel's \
                         default, max(10, 2 x CPUs)"
            .to_string(),
        "MAXBACKTRACE" => format!(
            "backtraces have at most {} frames, a fixed limit",
            abi::STP_MAX_BACKTRACE
        ),
        "TRYLOCKDELAY" => "the tries to lock an array are 10 us apart, a fixed delay; \
                           -D MAXTRYLOCK sets how many"
            .to_string(),
        "MAXACTION_INTERRUPTIBLE" => "-D MAXACTION bounds every handler".to_string(),
        "STP_PROCFS_BUFSIZE" => format!(
            "a procfs read file's size is set per probe point, \
             procfs(\"name\").read.maxsize(N), at most {}",
            abi::STP_MAX_PROCFS_SIZE
        ),
        "STP_OVERLOAD" => "the overload breaker is on unless -D STP_NO_OVERLOAD; \
                           -D STP_OVERLOAD_THRESHOLD and STP_OVERLOAD_INTERVAL tune it"
            .to_string(),
        _ => return None,
    })
}

/// The warning for a `-D NAME[=VAL]` stapvm has no use for (`None` for a
/// limit it knows): stap passes every `-D` to the C compiler of its
/// module, where stap's runtime reads the macros it knows; stapvm has no
/// C, only the limits of `vm_spec::limits`.
pub fn unknown_define_warning(name: &str, val: &str) -> Option<String> {
    if vm_spec::limits::by_name(name).is_some() {
        return None;
    }
    let given = if val.is_empty() {
        format!("-D {name}")
    } else {
        format!("-D {name}={val}")
    };
    let why = define_hint(name).unwrap_or_else(|| {
        let known: Vec<&str> = vm_spec::limits::LIMITS.iter().map(|l| l.name).collect();
        format!(
            "stap hands -D to the C compiler of its module; stapvm's -D sets only its limits: {}",
            known.join(", ")
        )
    });
    Some(format!("{given} has no effect in stapvm ({why})"))
}

/// Pass 1: lexing, preprocessing, parsing; a script with no declaration is
/// an error, as in stap.
fn pass1(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
) -> Result<(Vec<parse::lexer::Token>, ast::Script, Diags), Failed> {
    let mut diags = Diags::default();
    let tokens = parse::lexer::lex(source, &opts.args);
    let script = parse::parse_for(&tokens, target, &mut diags);
    if diags.has_errors() {
        return Err(failed(source_name, source, &tokens, &[], &diags, 1));
    }
    if script.items.is_empty() {
        let msg = if tokens.is_empty() {
            format!("Input file '{source_name}' is empty.\n")
        } else {
            format!("Input file '{source_name}' is empty after preprocessing.\n")
        };
        return Err(Failed {
            rendered: format!("{msg}Pass 1: parse failed.  [man error::pass1]\n"),
            count: 1,
        });
    }
    Ok((tokens, script, diags))
}

fn front(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
    hook: PassHook,
) -> Result<Front, Failed> {
    let (mut tokens, mut script, mut diags) = pass1(source_name, source, opts, target)?;
    let mut seen = std::collections::HashSet::new();
    for (name, val) in &opts.defines {
        if seen.insert(name.as_str()) {
            if let Some(w) = unknown_define_warning(name, val) {
                diags.push(diag::Diagnostic::warning_alone(w));
            }
        }
    }
    let files = passes::usertapset::include(
        &mut script,
        &mut tokens,
        source.len(),
        target,
        &opts.args,
        &mut diags,
    );
    let fail = |diags: &Diags, tokens: &[parse::lexer::Token]| {
        failed(source_name, source, tokens, &files, diags, 2)
    };
    if diags.has_errors() {
        return Err(fail(&diags, &tokens));
    }
    let alias_files = tapset::kernel_aliases::add(&mut script, target, &mut diags);
    hook(&PassReport::Parsed {
        library_files: target.tapset_files.len() + alias_files,
    });
    let script = passes::expand::run(script, &mut diags);
    let script = passes::prometheus::run(script, &mut diags);
    if diags.has_errors() {
        return Err(fail(&diags, &tokens));
    }
    let script = tapset::run(script, &opts.args, &mut diags);
    if diags.has_errors() {
        return Err(fail(&diags, &tokens));
    }
    let mut resolved = passes::resolve::run(&script, target.unelided, &mut diags);
    // stap warns of unused globals in the user's files only.
    let in_tapset = |d: &diag::Diagnostic| d.span.is_some_and(|s| s.lo as usize > source.len());
    diags.list.retain(|d| {
        !(d.severity == Severity::Warning
            && d.message.starts_with(passes::resolve::ELIDING_UNUSED)
            && in_tapset(d))
    });
    if !diags.has_errors() && !target.unelided {
        passes::elide::check(&script, &resolved, &mut diags);
    }
    if let Some(syms) = &target.kernel_symbols {
        symbols::check(&resolved, syms, &mut diags);
    }
    if diags.has_errors() {
        return Err(fail(&diags, &tokens));
    }
    if target.unelided {
        // stap -u: every function is checked and compiled, called or not.
        for f in &mut resolved.funcs {
            f.used = true;
        }
    }
    let types = passes::types::run(&script, &resolved, &mut diags);
    // stap -W: the warnings count as errors (session.h num_errors()).
    let werror = target.werror && diags.list.iter().any(|d| d.severity == Severity::Warning);
    if diags.has_errors() || werror {
        return Err(fail(&diags, &tokens));
    }
    passes::setglobals::apply(&target.global_inits, &mut resolved, &types)
        .map_err(|rendered| Failed { rendered, count: 1 })?;
    hook(&PassReport::Analyzed {
        probes: resolved.probes.iter().map(|p| p.points.len()).sum(),
        functions: resolved.funcs.iter().filter(|f| f.used).count(),
        embeds: 0,
        globals: resolved.globals.len(),
    });
    Ok(Front {
        tokens,
        files,
        script,
        resolved,
        types,
        diags,
    })
}

/// The warnings, rendered; stap's suppression summary last, if any.
fn render_warnings(source_name: &str, source: &str, f: &Front) -> Vec<String> {
    let shown = Shown::of(&f.diags.list);
    let mut r = Renderer::with_files(source_name, source, &f.tokens, &f.files);
    let mut out: Vec<String> = shown
        .list
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| r.render_alone(d))
        .collect();
    let summary = shown.summary();
    if !summary.is_empty() {
        out.push(summary);
    }
    out
}

/// Stack for the passes: nesting is bounded (`parse::MAX_DEPTH`), and this
/// covers the deepest nesting with room to spare even in debug builds.
const STACK_SIZE: usize = 64 << 20;

/// Runs `f` on a thread with `STACK_SIZE` of stack (directly if no thread
/// can be made).
fn with_stack<T: Send, F: FnOnce() -> T + Send>(f: F) -> T {
    let slot = std::sync::Mutex::new(Some(f));
    let take = || slot.lock().ok().and_then(|mut g| g.take());
    let spawned = std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .name("stapvm-compiler".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(s, || take().map(|f| f()))
            .ok()?;
        match h.join() {
            Ok(v) => v,
            Err(p) => std::panic::resume_unwind(p),
        }
    });
    match spawned {
        Some(v) => v,
        // No thread could be made: run here, on the caller's stack.
        None => match take() {
            Some(f) => f(),
            None => unreachable!("the compiler closure ran but returned nothing"),
        },
    }
}

/// Compiles `source` (named `source_name` in messages: a path, `-` or
/// `<input>`) into a program, or returns every diagnostic rendered.
pub fn compile(source_name: &str, source: &str, opts: &Options) -> Result<Compiled, Failed> {
    compile_for(source_name, source, opts, &Target::default())
}

/// `compile` for a given `Target` (what `%( %)` conditions test).
pub fn compile_for(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
) -> Result<Compiled, Failed> {
    compile_observed(source_name, source, opts, target, &mut no_hook)
}

/// `compile_for`, with each pass's `PassReport` given to `hook` as the
/// pass ends.
pub fn compile_observed(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
    hook: PassHook,
) -> Result<Compiled, Failed> {
    with_stack(|| {
        hook(&PassReport::Started);
        compile_here(source_name, source, opts, target, hook)
    })
}

// Never inlined: the one frame profiles and the instruction measure of
// docs/performance.md attribute a compile to.
#[inline(never)]
fn compile_here(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
    hook: PassHook,
) -> Result<Compiled, Failed> {
    let limits = limits(opts).map_err(|rendered| Failed { rendered, count: 1 })?;
    let f = front(source_name, source, opts, target, hook)?;
    let program = back(source_name, source, &f, &limits, hook)?;
    Ok(Compiled {
        program,
        warnings: render_warnings(source_name, source, &f),
    })
}

/// The passes after `front`: lowering and the verifier. `check` runs them
/// too (and drops the program), so that it refuses what `compile` refuses
/// (an expression too complex for the register files, a handler too
/// large, …) with the same message.
fn back(
    source_name: &str,
    source: &str,
    f: &Front,
    limits: &[u32],
    hook: PassHook,
) -> Result<Program, Failed> {
    let mut program = match passes::lower::run(&f.script, &f.resolved, &f.types, source, limits) {
        Ok(p) => p,
        Err(errs) => {
            let mut diags = f.diags.clone();
            diags.list.extend(errs);
            return Err(failed(source_name, source, &f.tokens, &f.files, &diags, 2));
        }
    };
    program.source_name = source_name.to_string();
    program.source = source.to_string();
    program.compiler_version = VERSION.to_string();
    hook(&PassReport::Lowered {
        handlers: program.handlers.len(),
        instructions: program.handlers.iter().map(|h| h.code.len()).sum(),
    });
    if let Err(e) = verify::run(&program) {
        return Err(Failed {
            rendered: format!(
                "ERROR: the verifier refuses the compiled program: {e}\nPass 4: compilation failed.  [man error::pass4]\n"
            ),
            count: 1,
        });
    }
    hook(&PassReport::Verified);
    Ok(program)
}

/// Runs the parser only (stap's `-p1`: lexing, preprocessing, parsing; an
/// empty script is an error): `Ok` when the script parses, else the parse
/// errors rendered with stap's pass-1 summary. Runs on the compiler's own
/// large stack, like `compile`.
pub fn parse_only(source_name: &str, source: &str, opts: &Options) -> Result<(), Failed> {
    parse_only_for(source_name, source, opts, &Target::default())
}

/// `parse_only` for a given `Target`.
pub fn parse_only_for(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
) -> Result<(), Failed> {
    parse_only_observed(source_name, source, opts, target, &mut no_hook)
}

/// `parse_only_for`, reporting `PassReport::Parsed` (no tapset file is
/// parsed here: 0) to `hook`.
pub fn parse_only_observed(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
    hook: PassHook,
) -> Result<(), Failed> {
    parse_tree_observed(source_name, source, opts, target, hook).map(|_| ())
}

/// Runs the parser only, as `parse_only_for`, and returns the parse tree
/// printed back as script text (stap's `-p1` output: `# parse tree dump`,
/// `# file NAME`, then the declarations after preprocessing; see `dump`).
pub fn parse_tree(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
) -> Result<String, Failed> {
    parse_tree_observed(source_name, source, opts, target, &mut no_hook)
}

/// `parse_tree`, reporting `PassReport::Parsed` (no tapset file is parsed
/// here: 0) to `hook`.
pub fn parse_tree_observed(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
    hook: PassHook,
) -> Result<String, Failed> {
    with_stack(|| {
        hook(&PassReport::Started);
        let (_, script, _) = pass1(source_name, source, opts, target)?;
        hook(&PassReport::Parsed { library_files: 0 });
        Ok(dump::script(&script, source_name, source))
    })
}

/// Runs the parse and semantic passes (`stapvm check`, stap's `-p2`), then
/// lowering and the verifier without keeping the program, so that `check`
/// accepts exactly what `compile` accepts; returns the rendered warnings.
pub fn check(source_name: &str, source: &str, opts: &Options) -> Result<Vec<String>, Failed> {
    check_for(source_name, source, opts, &Target::default())
}

/// `check` for a given `Target`.
pub fn check_for(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
) -> Result<Vec<String>, Failed> {
    check_observed(source_name, source, opts, target, &mut no_hook)
}

/// `check_for`, with each pass's `PassReport` given to `hook` as the pass
/// ends (all four: `check` lowers and verifies too).
pub fn check_observed(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
    hook: PassHook,
) -> Result<Vec<String>, Failed> {
    with_stack(|| {
        hook(&PassReport::Started);
        check_here(source_name, source, opts, target, hook)
    })
}

fn check_here(
    source_name: &str,
    source: &str,
    opts: &Options,
    target: &Target,
    hook: PassHook,
) -> Result<Vec<String>, Failed> {
    let limits = limits(opts).map_err(|rendered| Failed { rendered, count: 1 })?;
    let f = front(source_name, source, opts, target, hook)?;
    back(source_name, source, &f, &limits, hook)?;
    Ok(render_warnings(source_name, source, &f))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reports(src: &str, target: &Target) -> Vec<PassReport> {
        let mut got = Vec::new();
        let mut hook = |r: &PassReport| got.push(r.clone());
        compile_observed("t.stp", src, &Options::default(), target, &mut hook).unwrap();
        got
    }

    #[test]
    fn passes_report_in_order_with_their_counts() {
        let got = reports(
            "global n, m\nfunction f() { return 1 }\nfunction unused() { return 2 }\n\
             probe begin, end { n = f(); m++ }\nprobe timer.s(1) { exit() }\n",
            &Target::default(),
        );
        assert_eq!(got.len(), 5, "{got:?}");
        assert_eq!(got[0], PassReport::Started);
        let got = &got[1..];
        assert_eq!(got[0], PassReport::Parsed { library_files: 0 });
        assert_eq!(
            got[1],
            PassReport::Analyzed {
                probes: 3,
                functions: 1,
                embeds: 0,
                globals: 2
            }
        );
        let PassReport::Lowered {
            handlers,
            instructions,
        } = got[2]
        else {
            panic!("{got:?}")
        };
        assert!(handlers >= 3 && instructions > handlers, "{got:?}");
        assert_eq!(got[3], PassReport::Verified);
    }

    #[test]
    fn tapset_files_count_as_library_scripts() {
        let target = Target {
            tapset_files: vec![
                TapsetFile {
                    name: "a.stp".into(),
                    text: "function a() { return 1 }\n".into(),
                },
                TapsetFile {
                    name: "b.stp".into(),
                    text: "function b() { return 2 }\n".into(),
                },
            ],
            ..Target::default()
        };
        let got = reports("probe begin { println(a()) }\n", &target);
        assert_eq!(got[1], PassReport::Parsed { library_files: 2 });
        // A kernel alias file the script's probe points need.
        let got = reports(
            "probe vfs.read { println(bytes_to_read) }\n",
            &Target::default(),
        );
        assert_eq!(got[1], PassReport::Parsed { library_files: 1 });
    }

    #[test]
    fn a_failed_pass_reports_nothing_more() {
        let mut got = Vec::new();
        let mut hook = |r: &PassReport| got.push(r.clone());
        let r = check_observed(
            "t.stp",
            "probe begin { x = undefined_fn() }\n",
            &Options::default(),
            &Target::default(),
            &mut hook,
        );
        assert!(r.is_err());
        assert_eq!(
            got,
            vec![PassReport::Started, PassReport::Parsed { library_files: 0 }]
        );
        let mut got = Vec::new();
        let mut hook = |r: &PassReport| got.push(r.clone());
        assert!(parse_only_observed(
            "t.stp",
            "probe {",
            &Options::default(),
            &Target::default(),
            &mut hook
        )
        .is_err());
        assert_eq!(got, vec![PassReport::Started]);
    }
}
