//! Name and probe-point resolution.
//!
//! Computes: what every probe point means (probe kind, handler context,
//! symbolic target, timer period, flags), which names are globals and which
//! are probe locals, which built-in each call is, and how each global is
//! used (for stap's print-at-exit rule). Reports the semantic errors of this
//! stage (unknown probe points and functions, `$return` outside return
//! probes, `break` outside loops, non-lvalues, every `not supported yet`
//! feature) and the `syscall.open` warning.
//!
//! Needs: the parsed `Script`. Runs next: `passes::types`.
//!
//! This file holds the result (`Resolved` and its parts), the walk's state
//! (`Resolver`) and the entry point `run`, which walks the declarations
//! and then checks what needs the whole script (functions reachable from a
//! probe, unused globals, arrays against scalars and statistics). The rest
//! is in `probes.rs` (probe points), `walk.rs` (the expression and
//! statement walk), `builtins.rs` (the built-in functions), `targets.rs`
//! (target variables and `@cast`), `stats.rs` (statistics) and `arrays.rs`
//! (arrays, `foreach`, `delete`).
use crate::ast::*;
use crate::diag::{Diagnostic, Diags};
use crate::parse::STAT_EXTRACTORS;
use rustc_hash::{FxHashMap, FxHashSet};
use vm_spec::abi;
use vm_spec::program::{ProbeTarget, TargetCond, TargetSite};

mod arrays;
mod builtins;
pub mod netfilter;
pub mod perf;
mod probes;
mod stats;
mod targets;
mod walk;
mod watch;

pub use builtins::Builtin;

/// What a name or call in an expression refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ref {
    /// Nothing (not a name or call).
    #[default]
    None,
    /// `Resolved::globals[i]`.
    Global(usize),
    /// Local `i` of the enclosing probe.
    Local(usize),
    /// A built-in function.
    Builtin(Builtin),
    /// A user function: `Resolved::funcs[i]`.
    Func(usize),
}

/// One global variable.
#[derive(Debug, Clone)]
pub struct GlobalInfo {
    /// Name.
    pub name: String,
    /// Its declaration token.
    pub span: Span,
    /// Initialiser.
    pub init: Option<Literal>,
    /// Assigned or incremented somewhere.
    pub written: bool,
    /// Its value is used somewhere (stap's `read && used`).
    pub used: bool,
    /// An associative array: declared `[N]` / `%`, or used with keys.
    pub array: bool,
    /// `[N]`: the declared maximum number of elements.
    pub size: Option<i64>,
    /// `%`: a wrap-around array.
    pub wrap: bool,
}

/// One resolved probe point.
#[derive(Debug, Clone)]
pub struct Point {
    /// `abi::STP_PROBE_*`.
    pub kind: u8,
    /// `abi::STP_CTX_*` of its handler.
    pub ctx: u8,
    /// Symbolic target.
    pub target: ProbeTarget,
    /// Timer period.
    pub period_ns: u64,
    /// `.randomize(M)` of a timer, in `period_ns`'s unit (abi.h).
    pub randomize: u64,
    /// `perf.*` points: the event (`period_ns` is the sample period).
    pub perf: Option<vm_spec::program::PerfEvent>,
    /// `kernel.data(…)` points: the watchpoint.
    pub watch: Option<vm_spec::program::Watch>,
    /// `netfilter.hook(…).pf(…)` points: the hook.
    pub netfilter: Option<vm_spec::program::NfHook>,
    /// kretprobe maxactive.
    pub maxactive: u32,
    /// `abi::STP_PROBE_F_*`.
    pub flags: u8,
    /// The point as written.
    pub display: String,
    /// The script-level point, for `pn()` (`ast::ProbePoint::script`).
    pub script: String,
    /// Its first component.
    pub span: Span,
    /// `begin(N)` / `end(N)` sequence number (0 otherwise).
    pub sequence: i64,
    /// `oneshot`: a begin probe that calls exit() after its body.
    pub oneshot: bool,
}

/// A context whose handlers have `$value` (abi.h: procfs and input
/// probes).
pub(super) fn is_value_ctx(ctx: u8) -> bool {
    u32::from(ctx) == abi::STP_CTX_PROCFS_READ || u32::from(ctx) == abi::STP_CTX_PROCFS_WRITE
}

/// The procfs files of the script (abi.h: procfs files): a read and a
/// write probe on one file share its mode (stap's 0444 for a reader, 0222
/// for a writer, 0666 for both, each less its `.umask(M)`) and its size
/// (the read probe's `.maxsize(N)`); a second read or write probe on a
/// file is an error, and so are more than `STP_MAX_PROCFS_FILES` files.
fn procfs_files(probes: &mut [RProbe], diags: &mut Diags) {
    struct File {
        mode: u32,
        size: Option<u32>,
        read: bool,
        write: bool,
    }
    let mut files: Vec<(String, File)> = Vec::new();
    for pt in probes.iter().flat_map(|p| &p.points) {
        let ProbeTarget::File { name, mode } = &pt.target else {
            continue;
        };
        let read = u32::from(pt.kind) == abi::STP_PROBE_PROCFS_READ;
        let i = match files.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                if files.len() == abi::STP_MAX_PROCFS_FILES as usize {
                    diags.push(Diagnostic::semantic(
                        format!(
                            "more than {} procfs files (at \"{name}\")",
                            abi::STP_MAX_PROCFS_FILES
                        ),
                        pt.span,
                    ));
                    return;
                }
                files.push((
                    name.clone(),
                    File {
                        mode: 0,
                        size: None,
                        read: false,
                        write: false,
                    },
                ));
                files.len() - 1
            }
        };
        let f = &mut files[i].1;
        if (read && f.read) || (!read && f.write) {
            let what = if read { "read" } else { "write" };
            diags.push(Diagnostic::semantic(
                format!("only one procfs {what} probe is allowed on file \"{name}\""),
                pt.span,
            ));
            continue;
        }
        f.mode |= mode;
        if read {
            f.read = true;
            f.size = Some(pt.maxactive);
        } else {
            f.write = true;
            f.size.get_or_insert(pt.maxactive);
        }
    }
    for pt in probes.iter_mut().flat_map(|p| &mut p.points) {
        let ProbeTarget::File { name, mode } = &mut pt.target else {
            continue;
        };
        if let Some((_, f)) = files.iter().find(|(n, _)| n == name) {
            *mode = f.mode;
            pt.maxactive = f.size.unwrap_or(pt.maxactive);
        }
    }
}

impl Point {
    /// Makes this point of kind `kind` (`abi::STP_PROBE_*`), with the
    /// handler context abi.h's `STP_PROBE_KINDS` gives that kind.
    pub(super) fn set_kind(&mut self, kind: u32) {
        self.kind = kind as u8;
        self.ctx = vm_spec::tables::PROBE_KINDS
            .get(kind as usize)
            .map_or(0, |k| k.ctx as u8);
    }
}

/// One user function, resolved.
#[derive(Debug, Clone)]
pub struct RFunc {
    /// Index of the `Item::Function` in `Script::items`.
    pub item: usize,
    /// Its name.
    pub name: String,
    /// Number of parameters: `locals[..nparams]` are the parameters.
    pub nparams: usize,
    /// Its local variables (parameters first): name and first use.
    pub locals: Vec<(String, Span)>,
    /// Called, directly or not, from some probe (only these are checked
    /// and lowered, as stap elides the others).
    pub used: bool,
}

/// One probe declaration, resolved.
#[derive(Debug, Clone)]
pub struct RProbe {
    /// Index of the `Item::Probe` in `Script::items`.
    pub item: usize,
    /// Its points that get a handler (`never` has none).
    pub points: Vec<Point>,
    /// Its local variables: name and first use.
    pub locals: Vec<(String, Span)>,
}

/// The result of resolution.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    /// Global variables in declaration order.
    pub globals: Vec<GlobalInfo>,
    /// Probes in source order.
    pub probes: Vec<RProbe>,
    /// User functions in source order.
    pub funcs: Vec<RFunc>,
    /// What each expression refers to, indexed by `ExprId`.
    pub refs: Vec<Ref>,
    /// Globals used as statistics, in order of first use.
    pub stats: Vec<StatGlobal>,
    /// `delete x` of a global scalar: the `Var` expressions.
    pub delete_globals: Vec<ExprId>,
    /// Target variables (`$x`, `$x->a->b`; not `$return`): the `Target` or
    /// `Deref` expression, where its parameter comes from and the member
    /// chain.
    pub target_vars: FxHashMap<ExprId, (TargetSite, Vec<String>)>,
    /// `@defined(x)` decided at compile time (the probe has no target
    /// variables, or `x` is `$return`): the `AtOp` expression and the
    /// answer. Any other `@defined(x)` has `x` in `target_vars` and is
    /// answered at load time (`RelocKind::Exists`).
    pub defined_consts: FxHashMap<ExprId, bool>,
    /// Target variables guarded by a `@defined` that is 0 at every point of
    /// their probe (`@choose_defined($x, 0)` in a `begin` probe), and
    /// `@entry(x)` after a `@defined(@entry(x))` outside `.return` probes:
    /// never read, lowered as 0.
    pub dead_targets: FxHashSet<ExprId>,
    /// The `@defined` conditions a use of a target variable runs under
    /// (`@defined($x) ? $x : $y`: `$y` runs only where `$x` is absent);
    /// the loader does not resolve a use for a probe where one fails.
    pub target_conds: FxHashMap<ExprId, Vec<TargetCond>>,
    /// `$value` of a procfs or input probe (helpers.h VALUE): the `Target`
    /// expressions read, and those assigned (`$value = e`, `$value .= e`,
    /// VALUE_SET / VALUE_APPEND) in a procfs read probe.
    pub value_exprs: FxHashSet<ExprId>,
    /// `$verdict` of a netfilter probe (helpers.h VERDICT): the `Target`
    /// expressions read, and those assigned (`$verdict = e`, VERDICT_SET).
    pub verdict_exprs: FxHashSet<ExprId>,
}

impl Resolved {
    /// The locals of body `i`: probe `i`, or function `i - probes.len()`
    /// (the numbering `types` and `lower` use for bodies).
    pub fn body_locals(&self, i: usize) -> &[(String, Span)] {
        match self.probes.get(i) {
            Some(p) => &p.locals,
            None => self
                .funcs
                .get(i - self.probes.len())
                .map_or(&[], |f| f.locals.as_slice()),
        }
    }
}

/// The message of the `syscall.open` warning.
pub const SYSCALL_OPEN_WARNING: &str = "syscall.open only sees open(2); glibc's open() calls \
openat(2), so most programs call openat: probe syscall.open, syscall.openat to see both";

/// The warning about a global nothing uses (stap prints it for the
/// script's globals only, not for a tapset's: `lib.rs` drops the ones in
/// `-I` tapset files).
pub const ELIDING_UNUSED: &str = "Eliding unused variable";

/// The state of the walk over the script (`run`, `walk.rs`).
struct Resolver<'a> {
    diags: &'a mut Diags,
    /// The point being resolved is optional or tentative: a component
    /// that does not fit drops it without an error.
    quiet_mismatch: bool,
    globals: Vec<GlobalInfo>,
    refs: Vec<Ref>,
    /// Locals of the probe being walked.
    locals: Vec<(String, Span)>,
    /// Which of them are assigned somewhere.
    assigned: Vec<bool>,
    /// Contexts of the probe being walked.
    ctxs: Vec<u8>,
    /// Points of the probe being walked (none in a function).
    cur_points: Vec<Point>,
    /// The probe being walked is a procfs probe, whose `$value` stap lets
    /// any script write (the text a read returns): not a guru write.
    procfs: bool,
    /// See `Resolved::target_vars`.
    target_vars: FxHashMap<ExprId, (TargetSite, Vec<String>)>,
    /// See `Resolved::defined_consts`.
    defined_consts: FxHashMap<ExprId, bool>,
    /// See `Resolved::dead_targets`.
    dead_targets: FxHashSet<ExprId>,
    /// See `Resolved::value_exprs`.
    value_exprs: FxHashSet<ExprId>,
    /// See `Resolved::verdict_exprs`.
    verdict_exprs: FxHashSet<ExprId>,
    /// See `Resolved::target_conds`.
    target_conds: FxHashMap<ExprId, Vec<TargetCond>>,
    /// The `@defined` conditions around the expression being walked.
    conds: Vec<TargetCond>,
    /// The variables (name, chain) some `@defined` of the probe being
    /// walked asked about so far: their uses are guarded.
    guards: Vec<(String, Vec<String>)>,
    /// The probe being walked asked `@defined(@entry(...))` (0 outside
    /// `.return` probes): its `@entry` uses are dead code.
    entry_guarded: bool,
    /// Loop nesting of the statement being walked.
    loops: u32,
    /// Globals read anywhere (stap's "read", for "Eliding unused variable").
    read_globals: Vec<usize>,
    /// User functions by name: (name, item index, parameter names).
    func_names: Vec<(String, usize)>,
    /// The index in `func_names` of each name.
    func_idx: FxHashMap<String, usize>,
    /// The index in `globals` of each name (its first declaration).
    global_idx: FxHashMap<String, usize>,
    /// Functions the body being walked calls.
    calls: Vec<usize>,
    /// Walking a function body.
    in_func: bool,
    /// Parameters of the function being walked (`locals[..nparams]`): they
    /// shadow globals of the same name, as in stap (0 in a probe).
    nparams: usize,
    /// Statistics found so far (globals used with `<<<` or an extractor).
    stats: Vec<StatGlobal>,
    /// Plain (scalar) uses of globals: a statistic may have none.
    scalar_uses: Vec<(usize, Span)>,
    /// Arrays of the enclosing `foreach` loops.
    iterating: Vec<usize>,
    /// Arrays the body being walked writes.
    writes: Vec<usize>,
    /// Calls inside a `foreach`: function, array iterated, call token.
    iter_calls: Vec<(usize, usize, Span)>,
    /// `delete` of global scalars.
    delete_globals: Vec<ExprId>,
    /// Elements named as statistics (`a[k] <<< v`, `@count(a[k])`).
    stat_elems: Vec<(usize, Span)>,
    /// Elements used as values (`a[k]`, `a[k] = v`, `v = [k] in a`).
    value_elems: Vec<(usize, Span)>,
    /// `foreach (... in a @sum-)`: the array and the extractor.
    stat_sorts: Vec<(usize, String, Span)>,
}

/// A global used as a statistic (`s <<< v`, `@count(s)` ...).
#[derive(Debug, Clone)]
pub struct StatGlobal {
    /// Index into `Resolved::globals`.
    pub global: usize,
    /// The histogram the script draws, if any.
    pub hist: vm_spec::program::Hist,
    /// `@variance` is used.
    pub variance: bool,
    /// `@variance`'s bit shift.
    pub shift: u8,
    /// A statistics array (`a[k] <<< v`): the value of a global array.
    pub array: bool,
}

impl Resolver<'_> {
    fn err(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn unsupported(&mut self, feature: &str, span: Span) {
        self.err(Diagnostic::unsupported(feature, span));
    }

    fn set_ref(&mut self, id: ExprId, r: Ref) {
        if let Some(slot) = self.refs.get_mut(id as usize) {
            *slot = r;
        }
    }

    /// The global or local named `name` (a new local on first sight).
    fn var(&mut self, name: &str, span: Span) -> Ref {
        let nparams = self.nparams.min(self.locals.len());
        if let Some(l) = self.locals[..nparams].iter().position(|(n, _)| n == name) {
            return Ref::Local(l);
        }
        if let Some(&g) = self.global_idx.get(name) {
            return Ref::Global(g);
        }
        if let Some(l) = self.locals.iter().position(|(n, _)| n == name) {
            return Ref::Local(l);
        }
        self.locals.push((name.to_string(), span));
        self.assigned.push(false);
        Ref::Local(self.locals.len() - 1)
    }
}

/// Resolves `script`, reporting errors and warnings into `diags`. With
/// `unelided` (stap `-u`) unused globals are kept without the "Eliding
/// unused variable" warning.
pub fn run(script: &Script, unelided: bool, diags: &mut Diags) -> Resolved {
    let mut r = Resolver {
        diags,
        quiet_mismatch: false,
        globals: Vec::new(),
        refs: vec![Ref::None; script.nexprs as usize],
        locals: Vec::new(),
        assigned: Vec::new(),
        ctxs: Vec::new(),
        cur_points: Vec::new(),
        procfs: false,
        target_vars: FxHashMap::default(),
        defined_consts: FxHashMap::default(),
        dead_targets: FxHashSet::default(),
        value_exprs: FxHashSet::default(),
        verdict_exprs: FxHashSet::default(),
        target_conds: FxHashMap::default(),
        conds: Vec::new(),
        guards: Vec::new(),
        entry_guarded: false,
        loops: 0,
        read_globals: Vec::new(),
        func_names: Vec::new(),
        func_idx: FxHashMap::default(),
        global_idx: FxHashMap::default(),
        calls: Vec::new(),
        in_func: false,
        nparams: 0,
        stats: Vec::new(),
        stat_elems: Vec::new(),
        value_elems: Vec::new(),
        stat_sorts: Vec::new(),
        scalar_uses: Vec::new(),
        iterating: Vec::new(),
        writes: Vec::new(),
        iter_calls: Vec::new(),
        delete_globals: Vec::new(),
    };
    for it in &script.items {
        match it {
            Item::Global(g) => {
                // `private` is file scope: the script is one file, and the
                // -I files' private names are made theirs (usertapset).
                r.global_idx
                    .entry(g.name.clone())
                    .or_insert(r.globals.len());
                r.globals.push(GlobalInfo {
                    name: g.name.clone(),
                    span: g.span,
                    init: g.init.clone(),
                    written: false,
                    used: false,
                    array: g.array,
                    size: g.size,
                    wrap: g.wrap,
                });
            }
            Item::Unsupported(u) => r.unsupported(&u.feature, u.span),
            Item::Function(f) => {
                if f.body.is_none() {
                    r.unsupported("embedded C functions", f.span);
                } else if r.func_idx.contains_key(&f.name) {
                    r.unsupported("function overloading", f.span);
                } else {
                    // `private` is file scope: one file here (the -I
                    // files' private names are made theirs, usertapset).
                    r.func_idx.insert(f.name.clone(), r.func_names.len());
                    r.func_names.push((f.name.clone(), f.params.len()));
                }
            }
            Item::Alias(a) => {
                let at = a.names.first().map_or(a.span, |p| p.span());
                r.unsupported("probe aliases", at);
            }
            Item::Embedded(span) => r.unsupported("embedded C", *span),
            Item::Probe(_) => {}
        }
    }
    // Function bodies: locals start with the parameters.
    let mut funcs = Vec::new();
    let mut fcalls: Vec<Vec<usize>> = Vec::new();
    let mut fwrites: Vec<Vec<usize>> = Vec::new();
    for (idx, it) in script.items.iter().enumerate() {
        let Item::Function(f) = it else { continue };
        let Some(body) = &f.body else { continue };
        if !r.func_idx.contains_key(&f.name) || funcs.iter().any(|x: &RFunc| x.name == f.name) {
            continue;
        }
        r.locals = f.params.iter().map(|p| (p.name.clone(), p.span)).collect();
        r.assigned = vec![true; f.params.len()];
        r.ctxs = vec![abi::STP_CTX_FUNCTION as u8];
        r.loops = 0;
        r.in_func = true;
        r.nparams = f.params.len();
        r.calls = Vec::new();
        r.writes = Vec::new();
        r.stmt(body);
        r.in_func = false;
        r.nparams = 0;
        fcalls.push(std::mem::take(&mut r.calls));
        fwrites.push(std::mem::take(&mut r.writes));
        funcs.push(RFunc {
            item: idx,
            name: f.name.clone(),
            nparams: f.params.len(),
            locals: std::mem::take(&mut r.locals),
            used: false,
        });
    }
    let mut probes = Vec::new();
    // Per tentative use (ast::ProbePoint::tentative): whether one of its
    // points resolved, and the first that did not.
    let mut uses: Vec<(Span, bool, Option<ProbePoint>)> = Vec::new();
    let mut open_at: Option<Span> = None;
    let mut saw_openat = false;
    for (idx, it) in script.items.iter().enumerate() {
        let Item::Probe(p) = it else { continue };
        let mut points = Vec::new();
        // After a '!' point, the rest of the declaration are alternatives
        // the loader drops once a sufficient point resolved (abi.h).
        let mut after_sufficient = false;
        for pp in &p.points {
            let names: Vec<&str> = pp.components.iter().map(|c| c.name.as_str()).collect();
            match names.as_slice() {
                ["syscall" | "nd_syscall", "open", ..] => {
                    open_at.get_or_insert(pp.span());
                }
                ["syscall" | "nd_syscall", "openat", ..] => saw_openat = true,
                _ => {}
            }
            let resolved = r.point(pp);
            if let Some(t) = pp.tentative {
                let i = match uses.iter().position(|u| u.0 == t) {
                    Some(i) => i,
                    None => {
                        uses.push((t, false, None));
                        uses.len() - 1
                    }
                };
                if resolved.is_some() {
                    uses[i].1 = true;
                } else if uses[i].2.is_none() && !pp.optional {
                    uses[i].2 = Some(pp.clone());
                }
            }
            if let Some(mut point) = resolved {
                if after_sufficient || pp.alternative {
                    point.flags |= abi::STP_PROBE_F_ALTERNATIVE as u8;
                }
                if pp.sufficient {
                    point.flags |= (abi::STP_PROBE_F_SUFFICIENT | abi::STP_PROBE_F_OPTIONAL) as u8;
                }
                points.push(point);
            }
            after_sufficient |= pp.sufficient;
        }
        if points.is_empty()
            && !p.points.is_empty()
            && p.points
                .iter()
                .all(|pp| pp.optional || pp.tentative.is_some())
        {
            // Every point was optional and dropped: no probe.
            continue;
        }
        r.locals = Vec::new();
        r.assigned = Vec::new();
        r.ctxs = points.iter().map(|p| p.ctx).collect();
        // The walk reads the points; they go back to the probe after it.
        r.cur_points = points;
        r.guards = Vec::new();
        r.entry_guarded = false;
        r.procfs = p
            .points
            .iter()
            .any(|pp| pp.components.first().is_some_and(|c| c.name == "procfs"))
            || r.cur_points.iter().any(|pt| is_value_ctx(pt.ctx));
        r.loops = 0;
        r.stmt(&p.body);
        r.procfs = false;
        let points = std::mem::take(&mut r.cur_points);
        // Functions reachable from this probe (bounded: each is marked once).
        let mut work = std::mem::take(&mut r.calls);
        while let Some(f) = work.pop() {
            if let Some(rf) = funcs.get_mut(f) {
                if !rf.used {
                    rf.used = true;
                    work.extend(fcalls.get(f).into_iter().flatten().copied());
                }
            }
        }
        for (l, (name, span)) in r.locals.iter().enumerate() {
            if !r.assigned.get(l).copied().unwrap_or(true) {
                r.diags.push(Diagnostic::warning(
                    format!("never-assigned local variable '{name}'"),
                    *span,
                ));
            }
        }
        probes.push(RProbe {
            item: idx,
            points,
            locals: std::mem::take(&mut r.locals),
        });
    }
    procfs_files(&mut probes, r.diags);
    // A use none of whose points resolved: the first point's own error.
    for (_, any, first) in uses {
        if let (false, Some(mut pp)) = (any, first) {
            pp.tentative = None;
            let _ = r.point(&pp);
        }
    }
    for (g, info) in r.globals.iter().enumerate() {
        if !unelided && !info.written && !r.read_globals.contains(&g) {
            r.diags.push(Diagnostic::warning(
                format!("{ELIDING_UNUSED} '{}'", info.name),
                info.span,
            ));
        }
    }
    if let (Some(span), false) = (open_at, saw_openat) {
        r.diags
            .push(Diagnostic::warning(SYSCALL_OPEN_WARNING, span));
    }
    // A function called inside a foreach must not write the array, even
    // through the functions it calls (stap: semko/thirteen, fourteen).
    for (f, g, span) in std::mem::take(&mut r.iter_calls) {
        let mut seen = vec![false; fcalls.len()];
        let mut work = vec![f];
        let mut hit = false;
        while let Some(x) = work.pop() {
            if x >= seen.len() || seen[x] {
                continue;
            }
            seen[x] = true;
            hit |= fwrites[x].contains(&g);
            work.extend(fcalls[x].iter().copied());
        }
        if hit {
            let name = r.globals[g].name.clone();
            r.diags.push(Diagnostic::semantic(
                format!("function call modifies var '{name}' during 'foreach' iteration"),
                span,
            ));
        }
    }
    // A global is an array or a scalar, not both; nor a statistic.
    for st in &r.stats {
        if r.globals[st.global].array && !st.array {
            let name = r.globals[st.global].name.clone();
            r.diags.push(Diagnostic::semantic(
                format!("array '{name}' used as a statistic"),
                r.globals[st.global].span,
            ));
        }
    }
    for (g, span) in r.scalar_uses.clone() {
        if r.globals[g].array {
            let name = r.globals[g].name.clone();
            r.diags.push(Diagnostic::semantic(
                format!("array '{name}' used as a scalar"),
                span,
            ));
        }
    }
    // A statistics array's elements are only `<<<`-ed and extracted, and a
    // plain array's are not statistics.
    for (g, span) in std::mem::take(&mut r.value_elems) {
        if r.stats.iter().any(|s| s.global == g && s.array) {
            r.diags
                .push(Diagnostic::semantic("invalid type stats", span));
        }
    }
    for (g, span) in std::mem::take(&mut r.stat_elems) {
        if !r.stats.iter().any(|s| s.global == g && s.array) {
            let name = r.globals[g].name.clone();
            r.diags.push(Diagnostic::semantic(
                format!("array '{name}' used as a statistic"),
                span,
            ));
        }
    }
    for (g, op, span) in std::mem::take(&mut r.stat_sorts) {
        if !r.stats.iter().any(|s| s.global == g && s.array) {
            r.diags.push(Diagnostic::semantic(
                format!("sort by {op} of an array that is not a statistic"),
                span,
            ));
        } else if !STAT_EXTRACTORS.contains(&op.as_str()) {
            // `@variance` parses and sorts by @count, as in stap 5.x
            // (translate.cxx maps sc_variance to SORT_COUNT; lower/foreach.rs).
            r.diags.push(Diagnostic::unsupported(
                &format!("foreach sorted by {op}"),
                span,
            ));
        }
    }
    // A statistic is only ever `<<<`-ed and extracted (stap's pe_stats).
    for (g, span) in std::mem::take(&mut r.scalar_uses) {
        if r.stats.iter().any(|s| s.global == g) {
            r.diags
                .push(Diagnostic::semantic("invalid type stats", span));
        }
    }
    Resolved {
        globals: r.globals,
        probes,
        funcs,
        refs: r.refs,
        stats: r.stats,
        delete_globals: r.delete_globals,
        target_vars: r.target_vars,
        defined_consts: r.defined_consts,
        dead_targets: r.dead_targets,
        value_exprs: r.value_exprs,
        verdict_exprs: r.verdict_exprs,
        target_conds: r.target_conds,
    }
}
