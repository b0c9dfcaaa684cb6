//! The parse tree printed back as SystemTap text (stap's `-p1` output:
//! `# parse tree dump`, then every declaration as script text).
//!
//! Reads the tree `parse::parse` built (preprocessor conditionals already
//! resolved, `@define` macros already expanded) and writes canonical text
//! that parses back to the same tree: strings escaped so they decode to the
//! same bytes, every compound operand of an operator parenthesized, every
//! simple statement ended by `;`. Embedded C (`%{ ... %}`) is copied from
//! the source when its token's span is known. Computes nothing else.
//! Runs after: `parse::parse`; used by `parse_tree` (`stapvm check
//! --parse-only`, `stapvm -p1`).

use crate::ast::*;

/// The dump of `script`, parsed from `source` (named `source_name` in the
/// header): stap's `# parse tree dump` / `# file NAME` header, then the
/// declarations in source order, one per line group.
pub fn script(script: &Script, source_name: &str, source: &str) -> String {
    let mut p = Printer {
        out: String::new(),
        source,
        indent: 0,
    };
    p.out.push_str("# parse tree dump\n");
    p.out.push_str("# file ");
    p.out.push_str(source_name);
    p.out.push('\n');
    for item in &script.items {
        p.item(item);
    }
    p.out
}

/// The text of one expression (fully parenthesized where needed).
pub fn expr(e: &Expr, source: &str) -> String {
    let mut p = Printer {
        out: String::new(),
        source,
        indent: 0,
    };
    p.expr(e);
    p.out
}

/// A string literal (with its quotes) that decodes to `bytes`: printable
/// ASCII as is, `"` and `\` escaped, `\n` `\t` `\r` by name, every other
/// byte as a three-digit octal escape.
pub fn quote(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('"');
    for &b in bytes {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            b'\r' => s.push_str("\\r"),
            0x20..=0x7e => s.push(char::from(b)),
            _ => s.push_str(&format!("\\{b:03o}")),
        }
    }
    s.push('"');
    s
}

/// A number as an expression operand: negative values (wrapped from
/// above 2^63-1, or folded) as their unsigned 64-bit text, which parses
/// back to the same value without a unary minus.
fn number(n: i64) -> String {
    if n >= 0 {
        n.to_string()
    } else {
        (n as u64).to_string()
    }
}

/// A literal where a leading `-` is part of it (globals, probe point
/// arguments, histogram bounds).
fn literal_number(n: i64) -> String {
    if n >= 0 {
        n.to_string()
    } else {
        format!("-{}", n.unsigned_abs())
    }
}

fn literal(l: &Literal) -> String {
    match l {
        Literal::Num(n, _) => literal_number(*n),
        Literal::Str(s, _) => quote(s),
    }
}

fn type_ann(t: Option<TypeAnn>) -> &'static str {
    match t {
        Some(TypeAnn::Long) => ":long",
        Some(TypeAnn::Str) => ":string",
        None => "",
    }
}

fn binop(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Mod => "%",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        BinOp::And => "&",
        BinOp::Or => "|",
        BinOp::Xor => "^",
    }
}

fn cmpop(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

/// A probe point as script text: components, `?`/`!`, `if (cond)`.
fn point(p: &ProbePoint, source: &str) -> String {
    let mut s = String::new();
    for (i, c) in p.components.iter().enumerate() {
        if i > 0 {
            s.push('.');
        }
        s.push_str(&c.name);
        if let Some(arg) = &c.arg {
            s.push('(');
            s.push_str(&literal(arg));
            s.push(')');
        }
    }
    if p.sufficient {
        s.push('!');
    } else if p.optional {
        s.push('?');
    }
    if let Some(c) = &p.cond {
        s.push_str(" if (");
        s.push_str(&expr(c, source));
        s.push(')');
    }
    s
}

fn points(ps: &[ProbePoint], source: &str) -> String {
    ps.iter()
        .map(|p| point(p, source))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `e` prints as one operand that no neighbouring operator can
/// split or extend (a name, literal, call or postfix form).
fn atomic(e: &Expr) -> bool {
    use ExprKind::*;
    matches!(
        &e.kind,
        Num(_)
            | Str(_)
            | Var(_)
            | Target(_)
            | Call { .. }
            | Print { .. }
            | Format { .. }
            | Index { .. }
            | Stat { .. }
            | AtOp { .. }
            | Deref { .. }
            | Unsupported(_)
    )
}

struct Printer<'a> {
    out: String,
    source: &'a str,
    indent: usize,
}

impl Printer<'_> {
    fn line_start(&mut self) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
    }

    /// An embedded-C token's text from the source, or an empty block
    /// when the span does not cover one (macro text).
    fn embedded(&mut self, span: Span) {
        let text = self
            .source
            .get(span.lo as usize..span.hi as usize)
            .filter(|t| t.starts_with("%{") && t.ends_with("%}") && t.len() >= 4);
        self.out.push_str(text.unwrap_or("%{ %}"));
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Probe(p) => {
                self.out.push_str("probe ");
                self.out.push_str(&points(&p.points, self.source));
                self.out.push(' ');
                self.stmt_inline(&p.body);
                self.out.push('\n');
            }
            Item::Global(g) => {
                if g.private.is_some() {
                    self.out.push_str("private ");
                }
                self.out.push_str("global ");
                self.out.push_str(&g.name);
                if let Some(n) = g.size {
                    self.out.push_str(&format!("[{n}]"));
                }
                if g.wrap {
                    self.out.push('%');
                }
                if let Some(l) = &g.init {
                    self.out.push_str(" = ");
                    self.out.push_str(&literal(l));
                }
                self.out.push('\n');
            }
            Item::Function(f) => {
                if f.private.is_some() {
                    self.out.push_str("private ");
                }
                self.out.push_str("function ");
                self.out.push_str(&f.name);
                self.out.push_str(type_ann(f.ret));
                self.out.push('(');
                let ps: Vec<String> = f
                    .params
                    .iter()
                    .map(|p| format!("{}{}", p.name, type_ann(p.ty)))
                    .collect();
                self.out.push_str(&ps.join(", "));
                self.out.push(')');
                if let Some(n) = f.priority {
                    self.out.push_str(&format!(":{n}"));
                }
                self.out.push(' ');
                match &f.body {
                    Some(b) => self.stmt_inline(b),
                    // The body's token is not kept in the tree.
                    None => self.out.push_str("%{ %}"),
                }
                self.out.push('\n');
            }
            Item::Alias(a) => {
                self.out.push_str("probe ");
                self.out.push_str(&points(&a.names, self.source));
                self.out
                    .push_str(if a.epilogue_style { " += " } else { " = " });
                self.out.push_str(&points(&a.points, self.source));
                self.out.push(' ');
                self.stmt_inline(&a.body);
                if let Some(e) = &a.epilogue {
                    self.out.push_str(", ");
                    self.stmt_inline(e);
                }
                self.out.push('\n');
            }
            Item::Embedded(span) => {
                self.embedded(*span);
                self.out.push('\n');
            }
            Item::Unsupported(u) => {
                self.out
                    .push_str(&format!("# unsupported declaration: {}\n", u.feature));
            }
        }
    }

    /// A statement starting at the current position (no indentation
    /// first), without a final newline.
    fn stmt_inline(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Null => self.out.push(';'),
            StmtKind::Block(b) => {
                self.out.push_str("{\n");
                self.indent += 1;
                for s in b {
                    self.line_start();
                    self.stmt_inline(s);
                    self.out.push('\n');
                }
                self.indent -= 1;
                self.line_start();
                self.out.push('}');
            }
            StmtKind::Expr(e) => {
                self.expr(e);
                self.out.push(';');
            }
            StmtKind::If { cond, then, els } => {
                self.out.push_str("if (");
                self.expr(cond);
                self.out.push_str(") ");
                self.stmt_inline(then);
                if let Some(e) = els {
                    self.out.push_str(" else ");
                    self.stmt_inline(e);
                }
            }
            StmtKind::Loop(l) => {
                if l.init.is_none() && l.incr.is_none() {
                    self.out.push_str("while (");
                    self.expr(&l.cond);
                } else {
                    self.out.push_str("for (");
                    if let Some(e) = &l.init {
                        self.expr(e);
                    }
                    self.out.push_str("; ");
                    self.expr(&l.cond);
                    self.out.push_str("; ");
                    if let Some(e) = &l.incr {
                        self.expr(e);
                    }
                }
                self.out.push_str(") ");
                self.stmt_inline(&l.body);
            }
            StmtKind::Break => self.out.push_str("break;"),
            StmtKind::Continue => self.out.push_str("continue;"),
            StmtKind::Next => self.out.push_str("next;"),
            StmtKind::Foreach(f) => self.foreach(f),
            StmtKind::Delete(e) => {
                self.out.push_str("delete ");
                self.expr(e);
                self.out.push(';');
            }
            StmtKind::Return(e) => {
                self.out.push_str("return");
                if let Some(e) = e {
                    self.out.push(' ');
                    self.expr(e);
                }
                self.out.push(';');
            }
            StmtKind::Try { body, var, handler } => {
                self.out.push_str("try ");
                self.stmt_inline(body);
                self.out.push_str(" catch ");
                if let Some((v, _)) = var {
                    self.out.push_str(&format!("({v}) "));
                }
                self.stmt_inline(handler);
            }
            StmtKind::Unsupported(u) => {
                self.out
                    .push_str(&format!("; # unsupported statement: {}", u.feature));
            }
        }
    }

    fn sort_mark(&mut self, sort: Option<(SortBy, bool)>, by: SortBy) {
        if let Some((b, asc)) = sort {
            if b == by {
                self.out.push(if asc { '+' } else { '-' });
            }
        }
    }

    fn foreach(&mut self, f: &Foreach) {
        self.out.push_str("foreach (");
        if let Some((v, _)) = &f.value {
            self.out.push_str(v);
            self.out.push_str(" = ");
        }
        self.out.push('[');
        for (i, (k, _)) in f.keys.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.out.push_str(k);
            self.sort_mark(f.sort, SortBy::Key(i));
        }
        self.out.push_str("] in ");
        self.expr(&f.array);
        if let Some(s) = &f.slice {
            self.keys(s, false);
        }
        if let Some((st, _)) = &f.stat {
            self.out.push(' ');
            self.out.push_str(st);
        }
        self.sort_mark(f.sort, SortBy::Value);
        if let Some(l) = &f.limit {
            self.out.push_str(" limit ");
            self.expr(l);
        }
        self.out.push_str(") ");
        self.stmt_inline(&f.body);
    }

    /// `[k1, *, k2]`; `operands`: each key as an operand (the keys of
    /// `in`, parsed at the comparison level).
    fn keys(&mut self, keys: &[Option<Expr>], operands: bool) {
        self.out.push('[');
        for (i, k) in keys.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            match k {
                None => self.out.push('*'),
                Some(e) if operands => self.operand(e),
                Some(e) => self.expr(e),
            }
        }
        self.out.push(']');
    }

    fn args(&mut self, name: &str, format: Option<&[u8]>, args: &[Expr]) {
        self.out.push_str(name);
        self.out.push('(');
        let mut first = true;
        if let Some(f) = format {
            self.out.push_str(&quote(f));
            first = false;
        }
        for a in args {
            if !first {
                self.out.push_str(", ");
            }
            first = false;
            self.expr(a);
        }
        self.out.push(')');
    }

    /// `e`, parenthesized unless `atomic`.
    fn operand(&mut self, e: &Expr) {
        if atomic(e) {
            self.expr(e);
        } else {
            self.out.push('(');
            self.expr(e);
            self.out.push(')');
        }
    }

    fn infix(&mut self, l: &Expr, op: &str, r: &Expr) {
        self.operand(l);
        self.out.push(' ');
        self.out.push_str(op);
        self.out.push(' ');
        self.operand(r);
    }

    fn deref(&mut self, base: &Expr, comps: &[TargetComp]) {
        // The base as `dwarf_value` reads it: a name followed by `[` would
        // be an array element, a nested `Deref` would absorb the suffixes.
        let wrap = match &base.kind {
            ExprKind::Var(_) | ExprKind::Stat { .. } => {
                matches!(comps.first(), Some(TargetComp::Index(_)))
            }
            ExprKind::Deref { .. } => true,
            _ => !atomic(base),
        };
        if wrap {
            self.out.push('(');
            self.expr(base);
            self.out.push(')');
        } else {
            self.expr(base);
        }
        for c in comps {
            match c {
                TargetComp::Field(f, _) => {
                    self.out.push_str("->");
                    self.out.push_str(f);
                }
                TargetComp::Index(e) => {
                    self.out.push('[');
                    self.expr(e);
                    self.out.push(']');
                }
                TargetComp::Pretty(deep, _) => self.out.push_str(if *deep { "$$" } else { "$" }),
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        use ExprKind::*;
        match &e.kind {
            Num(n) => self.out.push_str(&number(*n)),
            Str(s) => self.out.push_str(&quote(s)),
            Var(v) | Target(v) => self.out.push_str(v),
            Call { name, args } => self.args(name, None, args),
            Print { kind, format, args } => {
                let name = match kind {
                    PrintKind::Print => "print",
                    PrintKind::Println => "println",
                    PrintKind::Printf => "printf",
                };
                self.args(name, format.as_deref(), args);
            }
            Format { name, format, args } => self.args(name, format.as_deref(), args),
            Unary(op, a) => {
                self.out.push(match op {
                    UnOp::Neg => '-',
                    UnOp::Plus => '+',
                    UnOp::Not => '!',
                    UnOp::BitNot => '~',
                });
                self.operand(a);
            }
            Binary(op, l, r) => self.infix(l, binop(*op), r),
            Cmp(op, l, r) => self.infix(l, cmpop(*op), r),
            And(l, r) => self.infix(l, "&&", r),
            Or(l, r) => self.infix(l, "||", r),
            Concat(l, r) => self.infix(l, ".", r),
            Ushr(l, r) => self.infix(l, ">>>", r),
            Append(l, r) => {
                self.operand(l);
                self.out.push_str(" <<< ");
                self.expr(r);
            }
            Assign(op, l, r) => {
                let op = match op {
                    AssignOp::Set => "=".to_string(),
                    AssignOp::Bin(b) => format!("{}=", binop(*b)),
                    AssignOp::Concat => ".=".to_string(),
                };
                self.operand(l);
                self.out.push(' ');
                self.out.push_str(&op);
                self.out.push(' ');
                // The right side is a whole expression (right-associative).
                self.expr(r);
            }
            Ternary(c, a, b) => {
                self.operand(c);
                self.out.push_str(" ? ");
                self.operand(a);
                self.out.push_str(" : ");
                self.operand(b);
            }
            PreIncr(up, a) => {
                self.out.push_str(if *up { "++" } else { "--" });
                self.operand(a);
            }
            PostIncr(up, a) => {
                self.operand(a);
                self.out.push_str(if *up { "++" } else { "--" });
            }
            Index { base, keys } => {
                self.expr(base);
                self.keys(keys, false);
            }
            In { keys, array } => {
                self.keys(keys, true);
                self.out.push_str(" in ");
                self.expr(array);
            }
            Stat { op, args } => {
                self.out.push_str(op);
                self.out.push('(');
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    match &a.kind {
                        // Histogram bounds take a signed literal.
                        Num(n) if i > 0 => self.out.push_str(&literal_number(*n)),
                        _ => self.expr(a),
                    }
                }
                self.out.push(')');
            }
            Regex { negate, lhs, re } => {
                self.operand(lhs);
                self.out.push_str(if *negate { " !~ " } else { " =~ " });
                self.out.push_str(&quote(re));
            }
            Deref { base, comps } => self.deref(base, comps),
            AddrOf(a) => {
                self.out.push('&');
                self.operand(a);
            }
            AtOp { op, args } => self.args(op, None, args),
            Unsupported(_) => self.embedded(e.span),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse_tree, Options, Target};

    /// The dump of `src` (header dropped), checked to be a fixed point.
    fn dump_with(src: &str, target: &Target) -> String {
        let opts = Options::default();
        let first = match parse_tree("t.stp", src, &opts, target) {
            Ok(d) => d,
            Err(e) => panic!("{src}: {e}"),
        };
        let second = match parse_tree("t.stp", &first, &opts, target) {
            Ok(d) => d,
            Err(e) => panic!("dump does not parse:\n{first}\n{e}"),
        };
        assert_eq!(first, second, "not a fixed point");
        let header = "# parse tree dump\n# file t.stp\n";
        assert!(first.starts_with(header), "{first}");
        first[header.len()..].to_string()
    }

    fn dump(src: &str) -> String {
        dump_with(src, &Target::default())
    }

    /// The dump of one statement in `probe begin`.
    fn stmt(s: &str) -> String {
        let d = dump(&format!("probe begin {{ {s} }}"));
        let inner = d
            .strip_prefix("probe begin {\n")
            .and_then(|d| d.strip_suffix("}\n"))
            .unwrap_or(&d);
        inner.trim().to_string()
    }

    #[test]
    fn the_header_and_a_simple_script() {
        let d = parse_tree(
            "<input>",
            "global n probe begin { n = 1 printf(\"%d\\n\", n) }",
            &Options::default(),
            &Target::default(),
        );
        assert_eq!(
            d.as_deref(),
            Ok("# parse tree dump\n# file <input>\nglobal n\nprobe begin {\n  n = 1;\n  printf(\"%d\\n\", n);\n}\n")
        );
    }

    #[test]
    fn parse_errors_are_pass_1_failures() {
        let e = parse_tree(
            "t.stp",
            "probe begin {",
            &Options::default(),
            &Target::default(),
        );
        assert!(e.is_err_and(|f| f.rendered.contains("Pass 1: parse failed")));
    }

    #[test]
    fn strings_are_escaped_to_the_same_bytes() {
        assert_eq!(
            stmt(r#"s = "a\"b\\c\n\t\r\001\377é" "glued""#),
            r#"s = "a\"b\\c\n\t\r\001\377\303\251glued";"#
        );
        assert_eq!(super::quote(b"%d\x07"), r#""%d\007""#);
        assert_eq!(stmt(r#"s = "\x41\0""#), r#"s = "A\000";"#);
    }

    #[test]
    fn precedence_is_kept_by_parentheses() {
        assert_eq!(stmt("x = 1 + 2 * 3"), "x = 1 + (2 * 3);");
        assert_eq!(stmt("x = (1 + 2) * 3"), "x = (1 + 2) * 3;");
        assert_eq!(stmt("x = 1 - (2 - 3)"), "x = 1 - (2 - 3);");
        assert_eq!(stmt("x = 1 - 2 - 3"), "x = (1 - 2) - 3;");
        assert_eq!(stmt("x = -y . \"s\""), "x = (-y) . \"s\";");
        assert_eq!(stmt("x = a || b && !c"), "x = a || (b && (!c));");
        assert_eq!(stmt("x = a >>> 2 << 1"), "x = (a >>> 2) << 1;");
        assert_eq!(stmt("x = y = 2"), "x = y = 2;");
        assert_eq!(stmt("x += -(-1)"), "x += -(-1);");
        assert_eq!(stmt("x = 0xffffffffffffffff"), "x = 18446744073709551615;");
    }

    #[test]
    fn ternary_in_and_regex() {
        assert_eq!(stmt("x = a ? b : c ? d : e"), "x = a ? b : (c ? d : e);");
        assert_eq!(stmt("x = (a ? b : c) ? d : e"), "x = (a ? b : c) ? d : e;");
        assert_eq!(stmt("x = k + 1 in arr"), "x = [(k + 1)] in arr;");
        assert_eq!(stmt("x = [a, *] in arr"), "x = [a, *] in arr;");
        assert_eq!(stmt("x = !(k in arr)"), "x = !([k] in arr);");
        assert_eq!(
            stmt(r#"x = s =~ "^a.*\\.b$" || s !~ "c""#),
            r#"x = (s =~ "^a.*\\.b$") || (s !~ "c");"#
        );
    }

    #[test]
    fn foreach_with_sort_and_limit() {
        assert_eq!(
            stmt("foreach ([a-, b] in arr limit 10) print(a)"),
            "foreach ([a-, b] in arr limit 10) print(a);"
        );
        assert_eq!(
            stmt("foreach (v = k in arr+) {}"),
            "foreach (v = [k] in arr+) {\n  }"
        );
        assert_eq!(
            stmt("foreach (v- = [k] in arr[1, *]) next"),
            "foreach (v = [k] in arr[1, *]-) next;"
        );
        assert_eq!(
            stmt("foreach (k in h @count- limit n + 1) break"),
            "foreach ([k] in h @count- limit n + 1) break;"
        );
        assert_eq!(
            stmt("foreach (b in @hist_log(h)) continue"),
            "foreach ([b] in @hist_log(h)) continue;"
        );
    }

    #[test]
    fn statements() {
        assert_eq!(
            stmt("try { error(\"e\") } catch (m) { println(m) }"),
            "try {\n    error(\"e\");\n  } catch (m) {\n    println(m);\n  }"
        );
        assert_eq!(stmt("try { } catch { }"), "try {\n  } catch {\n  }");
        assert_eq!(stmt("delete a[1, *]"), "delete a[1, *];");
        assert_eq!(stmt("delete a"), "delete a;");
        assert_eq!(
            stmt("for (i = 0; i < 3; i++) ;"),
            "for (i = 0; i < 3; i++) ;"
        );
        assert_eq!(stmt("for (;;) break"), "while (1) break;");
        assert_eq!(
            stmt("if (x) y = 1 else if (z) next else {}"),
            "if (x) y = 1; else if (z) next; else {\n  }"
        );
        let d = dump("function f(a) { if (a) return; return a * 2 }");
        assert_eq!(d, "function f(a) {\n  if (a) return;\n  return a * 2;\n}\n");
    }

    #[test]
    fn statistics() {
        assert_eq!(stmt("s <<< x + 1"), "s <<< x + 1;");
        assert_eq!(
            stmt("print(@hist_log(s)); x = @count(s) + @variance(s, 2)"),
            "print(@hist_log(s));\n  x = @count(s) + @variance(s, 2);"
        );
        assert_eq!(
            stmt("x = @hist_linear(s, -10, 10, 2)[3]"),
            "x = @hist_linear(s, -10, 10, 2)[3];"
        );
    }

    #[test]
    fn target_values() {
        assert_eq!(
            stmt("x = $var->field[2]->next$$"),
            "x = $var->field[2]->next$$;"
        );
        assert_eq!(
            stmt("x = @cast(p, \"task_struct\", \"kernel\")->pid + &$y->z"),
            "x = @cast(p, \"task_struct\", \"kernel\")->pid + (&$y->z);"
        );
        assert_eq!(
            stmt("x = @entry($a) + @defined($b) + @var(\"v@f.c\")"),
            "x = (@entry($a) + @defined($b)) + @var(\"v@f.c\");"
        );
        assert_eq!(stmt("x = f()->a[1]"), "x = f()->a[1];");
        assert_eq!(stmt("x = (p)[1]"), "x = (p)[1];");
        assert_eq!(stmt("x = p[1]"), "x = p[1];");
        assert_eq!(stmt("x = ++a[1] + b--"), "x = (++a[1]) + (b--);");
        assert_eq!(stmt("x = @const(\"N\")"), "x = @const(\"N\");");
    }

    #[test]
    fn declarations() {
        assert_eq!(
            dump("global a[10], b%, c = -5, d = \"s\\n\" private global e"),
            "global a[10]\nglobal b%\nglobal c = -5\nglobal d = \"s\\n\"\nprivate global e\n"
        );
        assert_eq!(
            dump("private function f:string(a:long, b:string, c):3 { return b }"),
            "private function f:string(a:long, b:string, c):3 {\n  return b;\n}\n"
        );
        assert_eq!(
            dump(
                "probe kernel.function(\"vfs_*\").return?, timer.ms(100)!, \
                  process(\"/bin/ls\").statement(-1) if (n > 0) {}"
            ),
            "probe kernel.function(\"vfs_*\").return?, timer.ms(100)!, \
             process(\"/bin/ls\").statement(-1) if (n > 0) {\n}\n"
        );
        assert_eq!(dump("probe a.{b,c} { }"), "probe a.b, a.c {\n}\n");
    }

    #[test]
    fn probe_aliases() {
        assert_eq!(
            dump("probe my = kernel.function(\"x\") { a = 1 }, { b = 2 }"),
            "probe my = kernel.function(\"x\") {\n  a = 1;\n}, {\n  b = 2;\n}\n"
        );
        assert_eq!(
            dump("probe my.x += begin, end { c = 3 }"),
            "probe my.x += begin, end {\n  c = 3;\n}\n"
        );
    }

    #[test]
    fn preprocessing_is_resolved() {
        assert_eq!(
            dump("@define two %( 2 %) probe begin { x = %( 1 == 1 %? @two %: 3 %) }"),
            "probe begin {\n  x = 2;\n}\n"
        );
    }

    #[test]
    fn embedded_c_is_copied_in_guru_mode() {
        let guru = Target {
            guru: true,
            ..Target::default()
        };
        assert_eq!(
            dump_with(
                "%{ #include <x.h> %}\nfunction f:long() %{ STAP_RETURN(1); %}\n\
                 probe begin { x = %{ 1 %} }",
                &guru
            ),
            "%{ #include <x.h> %}\nfunction f:long() %{ %}\nprobe begin {\n  x = %{ 1 %};\n}\n"
        );
    }
}
