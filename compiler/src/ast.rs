//! The syntax tree of a SystemTap script, as the parser (`parse/`) builds it.
//!
//! Computes nothing; it is the data every later pass reads. Every node keeps
//! the byte span of the token stap would name in a message about it (its
//! "token": the operator of a binary expression, the name of a call, the
//! keyword of a statement), so diagnostics point where stap points.
//! Constructs of the full language that this compiler does not lower yet are
//! kept as `Unsupported` nodes carrying the feature name; `passes::resolve`
//! turns each into a `not supported yet: <feature>` error at its token.
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
#[derive(Debug, Clone)]
pub enum Item {
    /// `probe POINTS { BODY }`.
    Probe(ProbeDecl),
    /// `global NAME [= literal]`.
    Global(GlobalDecl),
    /// A parsed declaration this compiler does not handle yet (functions,
    /// probe aliases, `private`, embedded C ...).
    Unsupported(Unsupported),
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
    /// `if (expr)` condition, not supported yet: its `if` token.
    pub condition: Option<Span>,
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
                    for ch in v.chars() {
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
    /// A string, escapes decoded, adjacent literals glued.
    Str(String, Span),
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
    /// `while (cond) body` and `for (init; cond; incr) body`.
    Loop {
        /// Runs once before the loop.
        init: Option<Expr>,
        /// Tested before each iteration (`for(;;)` has a literal 1).
        cond: Expr,
        /// Runs after each iteration and on `continue`.
        incr: Option<Expr>,
        /// The body.
        body: Box<Stmt>,
    },
    /// `break`
    Break,
    /// `continue`
    Continue,
    /// `next`
    Next,
    /// A statement that parses but is not lowered yet (`foreach`,
    /// `delete`, `try`, `return`).
    Unsupported(Unsupported),
}

/// An expression.
#[derive(Debug, Clone)]
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

/// The expression forms.
#[derive(Debug, Clone)]
pub enum ExprKind {
    /// Integer literal.
    Num(i64),
    /// String literal (escapes decoded, adjacent literals glued).
    Str(String),
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
        format: Option<String>,
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
    /// Parsed but not lowered yet (arrays, statistics, `@cast`, ...).
    Unsupported(String),
}
