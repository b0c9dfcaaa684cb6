//! The syntax tree of a SystemTap script, as the parser (`parse/`) builds it.
//!
//! Computes nothing; it is the data every later pass reads. Every node keeps
//! the byte span of the token stap would name in a message about it (its
//! "token": the operator of a binary expression, the name of a call, the
//! keyword of a statement), so diagnostics point where stap points.
//! The tree covers the whole language; `passes::resolve` turns every node
//! the later passes cannot handle yet into a `not supported yet: <feature>`
//! error at its token. Strings are raw bytes (`"\377"` is one byte).
//! Runs after: nothing (built by `parse::parse`); read by `passes::*`.

/// A byte range `[lo, hi)` in the script source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    /// First byte.
    pub lo: u32,
    /// One past the last byte.
    pub hi: u32,
}

impl Span {
    /// A span from byte offsets.
    pub fn new(lo: usize, hi: usize) -> Span {
        Span {
            lo: u32::try_from(lo).unwrap_or(u32::MAX),
            hi: u32::try_from(hi).unwrap_or(u32::MAX),
        }
    }
}

/// Index of an expression in the script, assigned in source order by the
/// parser; later passes keep per-expression facts in tables indexed by it.
pub type ExprId = u32;

/// A whole script file.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// Top-level declarations in source order.
    pub items: Vec<Item>,
    /// Number of expressions (one more than the largest `ExprId`).
    pub nexprs: u32,
}

/// A top-level declaration.
// A script has few items; boxing probes would only add indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Item {
    /// `probe POINTS { BODY }`.
    Probe(ProbeDecl),
    /// `global NAME [= literal]` (also `private global`).
    Global(GlobalDecl),
    /// `function NAME[:type](params)[:prio] { ... }`.
    Function(Box<FunctionDecl>),
    /// `probe NAME = POINTS { prologue } [, { epilogue }]` or
    /// `probe NAME += POINTS { epilogue }`.
    Alias(Box<AliasDecl>),
    /// Top-level `%{ ... %}` embedded C (parsed only in guru mode).
    Embedded(Span),
    /// A parsed declaration this compiler does not handle yet.
    Unsupported(Unsupported),
}

/// A declared type: `:long` or `:string`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeAnn {
    /// `long`
    Long,
    /// `string`
    Str,
}

/// One function parameter `name[:type]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The name.
    pub name: String,
    /// The name token.
    pub span: Span,
    /// Declared type.
    pub ty: Option<TypeAnn>,
}

/// `[private] function name[:type](params)[:priority] body`.
#[derive(Debug, Clone)]
pub struct FunctionDecl {
    /// The name.
    pub name: String,
    /// The name token.
    pub span: Span,
    /// Declared return type.
    pub ret: Option<TypeAnn>,
    /// Parameters.
    pub params: Vec<Param>,
    /// `:N` priority (overload order).
    pub priority: Option<i64>,
    /// The body; `None` for an embedded-C body (guru mode only).
    pub body: Option<Stmt>,
    /// Declared `private`: the `private` keyword.
    pub private: Option<Span>,
}

/// A probe alias definition.
#[derive(Debug, Clone)]
pub struct AliasDecl {
    /// The `probe` keyword.
    pub span: Span,
    /// The alias names (left of `=` / `+=`).
    pub names: Vec<ProbePoint>,
    /// `+=`: the body is an epilogue (appended to the user's body).
    pub epilogue_style: bool,
    /// What the alias expands to.
    pub points: Vec<ProbePoint>,
    /// The body (prologue for `=`, epilogue for `+=`).
    pub body: Stmt,
    /// The `, { epilogue }` block of the `=` form.
    pub epilogue: Option<Stmt>,
}

/// A feature that parses but is not lowered yet, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// Name of the feature, as shown after `not supported yet: `.
    pub feature: String,
    /// The token to point at.
    pub span: Span,
}

/// A probe declaration.
#[derive(Debug, Clone)]
pub struct ProbeDecl {
    /// The `probe` keyword.
    pub span: Span,
    /// Probe points, brace expansions already multiplied out.
    pub points: Vec<ProbePoint>,
    /// The handler body.
    pub body: Stmt,
}

/// One probe point such as `kernel.function("f").return?`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbePoint {
    /// The dotted components.
    pub components: Vec<Component>,
    /// `?` (or `!`) suffix.
    pub optional: bool,
    /// `!` suffix.
    pub sufficient: bool,
    /// Follows a `!` point of its declaration, directly or through the
    /// alias uses it was expanded from: the loader drops it once a
    /// sufficient point before it resolved (STP_PROBE_F_ALTERNATIVE).
    /// Alias expansion sets it; the parser leaves it false.
    pub alternative: bool,
    /// `if (expr)` condition, not supported yet: its `if` token.
    pub condition: Option<Span>,
    /// The condition expression.
    pub cond: Option<Box<Expr>>,
    /// Set on the points an alias or wildcard use expands to when the use
    /// adds a suffix or has a wildcard: the use's span. Such a point that
    /// does not accept its suffix is dropped; only when none of the
    /// points of one use resolves is the use an error (stap's rule).
    pub tentative: Option<Span>,
    /// Set on the points an alias use expands to: the use as the script
    /// wrote it, its wildcards replaced by the alias's name (`pn()`).
    pub script: Option<String>,
}

impl ProbePoint {
    /// The point as stap prints it: `kernel.function("f").return?`.
    pub fn display(&self) -> String {
        let mut s = String::new();
        for (i, c) in self.components.iter().enumerate() {
            if i > 0 {
                s.push('.');
            }
            s.push_str(&c.name);
            match &c.arg {
                Some(Literal::Num(n, _)) => s.push_str(&format!("({n})")),
                Some(Literal::Str(v, _)) => {
                    s.push_str("(\"");
                    for ch in String::from_utf8_lossy(v).chars() {
                        match ch {
                            '"' => s.push_str("\\\""),
                            '\\' => s.push_str("\\\\"),
                            '\n' => s.push_str("\\n"),
                            '\t' => s.push_str("\\t"),
                            c => s.push(c),
                        }
                    }
                    s.push_str("\")");
                }
                None => {}
            }
        }
        if self.sufficient {
            s.push('!');
        } else if self.optional {
            s.push('?');
        }
        s
    }

    /// The span of the first component, where stap points for the point.
    pub fn span(&self) -> Span {
        self.components.first().map(|c| c.span).unwrap_or_default()
    }
}

/// One component `name` or `name(literal)` of a probe point.
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    /// The name, wildcard pieces glued (`sys_*`).
    pub name: String,
    /// The parameter literal.
    pub arg: Option<Literal>,
    /// The name token.
    pub span: Span,
}

/// A literal in a probe point or a global initialiser.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// A number (with its sign applied).
    Num(i64, Span),
    /// A string: raw bytes, escapes decoded, adjacent literals glued.
    Str(Vec<u8>, Span),
}

/// `global name [= literal]`, or an array declaration.
#[derive(Debug, Clone)]
pub struct GlobalDecl {
    /// The name.
    pub name: String,
    /// The name token.
    pub span: Span,
    /// Initialiser.
    pub init: Option<Literal>,
    /// Declared as an array (`name[N]` or `name%`): not supported yet.
    pub array: bool,
    /// `[N]`: the maximum number of elements.
    pub size: Option<i64>,
    /// `%`: a wrap-around array.
    pub wrap: bool,
    /// Declared `private`: the `private` keyword.
    pub private: Option<Span>,
}

/// A statement.
#[derive(Debug, Clone)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Its first token (keyword, `{`, or the expression's token).
    pub span: Span,
}

/// The statement forms.
#[derive(Debug, Clone)]
pub enum StmtKind {
    /// `;`
    Null,
    /// `{ ... }`
    Block(Vec<Stmt>),
    /// An expression evaluated for its effect.
    Expr(Expr),
    /// `if (cond) then [else els]`
    If {
        /// Condition.
        cond: Expr,
        /// Then branch.
        then: Box<Stmt>,
        /// Else branch.
        els: Option<Box<Stmt>>,
    },
    /// `while (cond) body` and `for (init; cond; incr) body` (boxed: its
    /// three expressions inline would make every statement 280 bytes).
    Loop(Box<LoopStmt>),
    /// `break`
    Break,
    /// `continue`
    Continue,
    /// `next`
    Next,
    /// `foreach (...) body`.
    Foreach(Box<Foreach>),
    /// `delete expr` (element, slice, array or scalar).
    Delete(Expr),
    /// `return [expr]` (functions only).
    Return(Option<Expr>),
    /// `try { body } catch [(var)] { handler }`.
    Try {
        /// The protected block.
        body: Box<Stmt>,
        /// The variable bound to the error message, and its token.
        var: Option<(String, Span)>,
        /// The handler block.
        handler: Box<Stmt>,
    },
    /// A statement that parses but is not lowered yet.
    Unsupported(Unsupported),
}

/// What a `foreach` sorts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    /// The value (marker on the value variable or on the array).
    Value,
    /// The key at this index.
    Key(usize),
}

/// The parts of a `while` / `for` loop.
#[derive(Debug, Clone)]
pub struct LoopStmt {
    /// Runs once before the loop.
    pub init: Option<Expr>,
    /// Tested before each iteration (`for(;;)` has a literal 1).
    pub cond: Expr,
    /// Runs after each iteration and on `continue`.
    pub incr: Option<Expr>,
    /// The body.
    pub body: Stmt,
}

/// `foreach ([v =] keys in array[slice] [@stat] [+|-] [limit N]) body`.
#[derive(Debug, Clone)]
pub struct Foreach {
    /// `v =`: the value variable.
    pub value: Option<(String, Span)>,
    /// The key variables (one without brackets, or a `[k1, k2]` tuple).
    pub keys: Vec<(String, Span)>,
    /// The array (`Var`) or a histogram (`Stat`).
    pub array: Expr,
    /// `array[k, *]`: a slice (`None` = `*`).
    pub slice: Option<Vec<Option<Expr>>>,
    /// `@sum` etc. before the array's sort marker: the statistic to sort by.
    pub stat: Option<(String, Span)>,
    /// The one sort marker: what, and ascending (`+`) or not.
    pub sort: Option<(SortBy, bool)>,
    /// `limit N`.
    pub limit: Option<Expr>,
    /// The loop body.
    pub body: Box<Stmt>,
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// The token stap names for it.
    pub span: Span,
    /// Its index (see `ExprId`).
    pub id: ExprId,
}

/// Binary operators on integers (and, for comparisons, strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `+`
    Plus,
    /// `!`
    Not,
    /// `~`
    BitNot,
}

/// Assignment operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssignOp {
    /// `=`
    Set,
    /// `+=` and friends.
    Bin(BinOp),
    /// `.=`
    Concat,
}

/// The print family forms that are parsed specially.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrintKind {
    /// `print(x)`
    Print,
    /// `println(x)`
    Println,
    /// `printf(fmt, ...)`
    Printf,
}

/// A `->name`, `[expr]`, `$` or `$$` suffix of a target expression.
#[derive(Debug, Clone, PartialEq)]
pub enum TargetComp {
    /// `->name` (keywords allowed as names).
    Field(String, Span),
    /// `[expr]`.
    Index(Box<Expr>),
    /// `$` (shallow) or `$$` (deep, true) pretty printing.
    Pretty(bool, Span),
}

/// The expression forms.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// Integer literal.
    Num(i64),
    /// String literal: raw bytes (escapes decoded, adjacent literals glued).
    Str(Vec<u8>),
    /// A variable (global or local).
    Var(String),
    /// A target variable such as `$return`.
    Target(String),
    /// A call of a built-in function (`pid()`, `exit()` ...).
    Call {
        /// Function name.
        name: String,
        /// Arguments.
        args: Vec<Expr>,
    },
    /// `print`, `println`, `printf`.
    Print {
        /// Which one.
        kind: PrintKind,
        /// The format text (printf only), escapes decoded.
        format: Option<Vec<u8>>,
        /// Arguments after the format.
        args: Vec<Expr>,
    },
    /// `op e`
    Unary(UnOp, Box<Expr>),
    /// `l op r`
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `l op r` comparisons.
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    /// `l && r`
    And(Box<Expr>, Box<Expr>),
    /// `l || r`
    Or(Box<Expr>, Box<Expr>),
    /// `l . r`
    Concat(Box<Expr>, Box<Expr>),
    /// `c ? t : f`
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `lhs op rhs`
    Assign(AssignOp, Box<Expr>, Box<Expr>),
    /// `++e` (true) / `--e` (false)
    PreIncr(bool, Box<Expr>),
    /// `e++` (true) / `e--` (false)
    PostIncr(bool, Box<Expr>),
    /// The other print forms (`printd`, `sprint`, `sprintf` ...): the name,
    /// the format or delimiter, the values.
    Format {
        /// The function name.
        name: String,
        /// `sprintf`'s format or the `printd` delimiter, decoded.
        format: Option<Vec<u8>>,
        /// The values.
        args: Vec<Expr>,
    },
    /// `array[k1, k2]` (`None` = `*` in a slice), or `@hist_*(x)[bucket]`.
    Index {
        /// The array (`Var`) or histogram (`Stat`).
        base: Box<Expr>,
        /// The keys.
        keys: Vec<Option<Expr>>,
    },
    /// `k in array` / `[k1, k2] in array` (`None` = `*`).
    In {
        /// The keys.
        keys: Vec<Option<Expr>>,
        /// The array.
        array: Box<Expr>,
    },
    /// `@count(x)`, `@sum`, `@min`, `@max`, `@avg`, `@variance(x[, n])`,
    /// `@hist_log(x)`, `@hist_linear(x, lo, hi, width)`.
    Stat {
        /// The operator, with its `@`.
        op: String,
        /// The operands (the aggregate first).
        args: Vec<Expr>,
    },
    /// `x <<< v`
    Append(Box<Expr>, Box<Expr>),
    /// `s =~ "re"` (false) / `s !~ "re"` (true).
    Regex {
        /// `!~`.
        negate: bool,
        /// The string tested.
        lhs: Box<Expr>,
        /// The regular expression literal.
        re: Vec<u8>,
    },
    /// `a >>> b` (logical shift right).
    Ushr(Box<Expr>, Box<Expr>),
    /// `base->f[i]$` target-value suffixes (on `$var`, `@cast`, `@var`, or
    /// any value: autocast).
    Deref {
        /// The value dereferenced.
        base: Box<Expr>,
        /// The suffixes, in order.
        comps: Vec<TargetComp>,
    },
    /// `&expr`: the address of a target value.
    AddrOf(Box<Expr>),
    /// `@cast`, `@var`, `@defined`, `@entry`, `@probewrite`, `@const`,
    /// `@perf`, `@kregister` ...: the operator and its operands.
    AtOp {
        /// The operator, with its `@`.
        op: String,
        /// The operands (string literals as `Str`).
        args: Vec<Expr>,
    },
    /// Parsed but not lowered yet.
    Unsupported(String),
}

impl Expr {
    /// The direct sub-expressions, in source order.
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        let mut v = Vec::new();
        self.push_children_mut(&mut v);
        v
    }

    /// `children_mut` pushed onto `out` (a walk's work list: no vector
    /// per node).
    pub fn push_children_mut<'a>(&'a mut self, out: &mut Vec<&'a mut Expr>) {
        use ExprKind::*;
        match &mut self.kind {
            Num(_) | Str(_) | Var(_) | Target(_) | Unsupported(_) => {}
            Call { args, .. } | Print { args, .. } | Format { args, .. } => {
                out.extend(args.iter_mut())
            }
            Stat { args, .. } | AtOp { args, .. } => out.extend(args.iter_mut()),
            Unary(_, a) | PreIncr(_, a) | PostIncr(_, a) | AddrOf(a) => out.push(&mut **a),
            Regex { lhs, .. } => out.push(&mut **lhs),
            Binary(_, a, b)
            | Cmp(_, a, b)
            | And(a, b)
            | Or(a, b)
            | Concat(a, b)
            | Assign(_, a, b)
            | Append(a, b)
            | Ushr(a, b) => {
                out.push(&mut **a);
                out.push(&mut **b);
            }
            Ternary(a, b, c) => {
                out.push(&mut **a);
                out.push(&mut **b);
                out.push(&mut **c);
            }
            Index { base, keys } => {
                out.push(&mut **base);
                out.extend(keys.iter_mut().flatten());
            }
            In { keys, array } => {
                out.extend(keys.iter_mut().flatten());
                out.push(&mut **array);
            }
            Deref { base, comps } => {
                out.push(&mut **base);
                for c in comps {
                    if let TargetComp::Index(e) = c {
                        out.push(&mut **e);
                    }
                }
            }
        }
    }
}

impl Stmt {
    /// The direct sub-statements and expressions, in source order.
    pub fn children_mut(&mut self) -> (Vec<&mut Expr>, Vec<&mut Stmt>) {
        let (mut es, mut ss) = (Vec::new(), Vec::new());
        self.push_children_mut(&mut es, &mut ss);
        (es, ss)
    }

    /// `children_mut` appended to `es` and `ss` (walks reuse their work
    /// lists instead of allocating two per statement).
    pub fn push_children_mut<'a>(
        &'a mut self,
        es: &mut Vec<&'a mut Expr>,
        ss: &mut Vec<&'a mut Stmt>,
    ) {
        match &mut self.kind {
            StmtKind::Null
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Next
            | StmtKind::Unsupported(_) => {}
            StmtKind::Block(b) => ss.extend(b.iter_mut()),
            StmtKind::Expr(e) | StmtKind::Delete(e) => es.push(e),
            StmtKind::Return(e) => es.extend(e.iter_mut()),
            StmtKind::If { cond, then, els } => {
                es.push(cond);
                ss.push(&mut **then);
                if let Some(x) = els {
                    ss.push(&mut **x);
                }
            }
            StmtKind::Loop(l) => {
                let (init, cond, incr, body) = (&mut l.init, &mut l.cond, &mut l.incr, &mut l.body);
                es.extend(init.iter_mut());
                es.push(cond);
                es.extend(incr.iter_mut());
                ss.push(body);
            }
            StmtKind::Foreach(f) => {
                let Foreach {
                    array,
                    slice,
                    limit,
                    body,
                    ..
                } = &mut **f;
                es.push(array);
                if let Some(s) = slice {
                    es.extend(s.iter_mut().flatten());
                }
                es.extend(limit.iter_mut());
                ss.push(&mut **body);
            }
            StmtKind::Try { body, handler, .. } => {
                ss.push(&mut **body);
                ss.push(&mut **handler);
            }
        }
    }
}
