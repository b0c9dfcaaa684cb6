//! Parser tests: one or more per construct. Trees are compared as compact
//! S-expressions; errors as the rendered stap text.
use super::*;
use crate::diag::Renderer;

/// Compact S-expression of an expression.
fn sx(e: &Expr) -> String {
    let b = |op: &str, a: &Expr, c: &Expr| format!("({op} {} {})", sx(a), sx(c));
    match &e.kind {
        ExprKind::Num(n) => n.to_string(),
        ExprKind::Str(s) => format!("{:?}", String::from_utf8_lossy(s)),
        ExprKind::Var(v) | ExprKind::Target(v) => v.clone(),
        ExprKind::Call { name, args } => {
            let a: Vec<_> = args.iter().map(sx).collect();
            format!("({name} {})", a.join(" ")).replace(" )", ")")
        }
        ExprKind::Print { kind, format, args } => {
            let a: Vec<_> = args.iter().map(sx).collect();
            let f = format.as_deref().map(String::from_utf8_lossy);
            format!("({kind:?} {f:?} {})", a.join(" "))
        }
        ExprKind::Format { name, format, args } => {
            let a: Vec<_> = args.iter().map(sx).collect();
            let f = format.as_deref().map(String::from_utf8_lossy);
            format!("({name} {f:?} {})", a.join(" "))
        }
        ExprKind::Unary(op, a) => format!("({op:?} {})", sx(a)),
        ExprKind::Binary(op, a, c) => b(&format!("{op:?}"), a, c),
        ExprKind::Cmp(op, a, c) => b(&format!("{op:?}"), a, c),
        ExprKind::And(a, c) => b("&&", a, c),
        ExprKind::Or(a, c) => b("||", a, c),
        ExprKind::Concat(a, c) => b(".", a, c),
        ExprKind::Ternary(c, a, d) => format!("(? {} {} {})", sx(c), sx(a), sx(d)),
        ExprKind::Assign(op, a, c) => b(&format!("{op:?}"), a, c),
        ExprKind::PreIncr(up, a) => format!("(pre{} {})", if *up { "++" } else { "--" }, sx(a)),
        ExprKind::PostIncr(up, a) => {
            format!("(post{} {})", if *up { "++" } else { "--" }, sx(a))
        }
        ExprKind::Unsupported(f) => format!("<unsupported {f}>"),
        ExprKind::Index { base, keys } => format!("([] {} {})", sx(base), keys_sx(keys)),
        ExprKind::In { keys, array } => format!("(in {} {})", keys_sx(keys), sx(array)),
        ExprKind::Stat { op, args } | ExprKind::AtOp { op, args } => {
            let a: Vec<_> = args.iter().map(sx).collect();
            format!("({op} {})", a.join(" "))
        }
        ExprKind::Append(a, c) => b("<<<", a, c),
        ExprKind::Ushr(a, c) => b(">>>", a, c),
        ExprKind::Regex { negate, lhs, re } => format!(
            "({} {} {:?})",
            if *negate { "!~" } else { "=~" },
            sx(lhs),
            String::from_utf8_lossy(re)
        ),
        ExprKind::Deref { base, comps } => {
            let mut out = format!("(-> {}", sx(base));
            for c in comps {
                match c {
                    TargetComp::Field(f, _) => out.push_str(&format!(" .{f}")),
                    TargetComp::Index(e) => out.push_str(&format!(" [{}]", sx(e))),
                    TargetComp::Pretty(deep, _) => out.push_str(if *deep { " $$" } else { " $" }),
                }
            }
            out + ")"
        }
        ExprKind::AddrOf(a) => format!("(& {})", sx(a)),
    }
}

fn keys_sx(keys: &[Option<Expr>]) -> String {
    let k: Vec<_> = keys
        .iter()
        .map(|k| k.as_ref().map_or("*".to_string(), sx))
        .collect();
    format!("[{}]", k.join(" "))
}

fn st(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Null => ";".into(),
        StmtKind::Block(b) => {
            let v: Vec<_> = b.iter().map(st).collect();
            format!("{{{}}}", v.join(" "))
        }
        StmtKind::Expr(e) => sx(e),
        StmtKind::If { cond, then, els } => match els {
            Some(e) => format!("(if {} {} {})", sx(cond), st(then), st(e)),
            None => format!("(if {} {})", sx(cond), st(then)),
        },
        StmtKind::Loop(l) => {
            let (init, cond, incr, body) = (&l.init, &l.cond, &l.incr, &l.body);
            format!(
                "(loop {} {} {} {})",
                init.as_ref().map(sx).unwrap_or("-".into()),
                sx(cond),
                incr.as_ref().map(sx).unwrap_or("-".into()),
                st(body)
            )
        }
        StmtKind::Break => "break".into(),
        StmtKind::Continue => "continue".into(),
        StmtKind::Next => "next".into(),
        StmtKind::Unsupported(u) => format!("<unsupported {}>", u.feature),
        StmtKind::Delete(e) => format!("(delete {})", sx(e)),
        StmtKind::Return(e) => format!("(return {})", e.as_ref().map_or("-".into(), sx)),
        StmtKind::Try { body, var, handler } => format!(
            "(try {} {} {})",
            st(body),
            var.as_ref().map_or("-", |v| v.0.as_str()),
            st(handler)
        ),
        StmtKind::Foreach(f) => {
            let keys: Vec<_> = f.keys.iter().map(|k| k.0.as_str()).collect();
            format!(
                "(foreach {}[{}] {}{} {:?} {:?} {} {})",
                f.value
                    .as_ref()
                    .map_or(String::new(), |v| format!("{}=", v.0)),
                keys.join(" "),
                sx(&f.array),
                f.slice.as_ref().map_or(String::new(), |s| keys_sx(s)),
                f.stat.as_ref().map(|s| s.0.as_str()),
                f.sort,
                f.limit.as_ref().map_or("-".into(), sx),
                st(&f.body)
            )
        }
    }
}

fn parse_src(src: &str) -> (Script, Diags, Vec<Token>) {
    let toks = lexer::lex(src, &[]);
    let mut d = Diags::default();
    let s = parse(&toks, &mut d);
    (s, d, toks)
}

/// The body of the first probe of `src`, as an S-expression.
fn body(src: &str) -> String {
    let (s, d, _) = parse_src(src);
    assert!(d.list.is_empty(), "{src}: {:?}", d.list);
    match s.items.first() {
        Some(Item::Probe(p)) => st(&p.body),
        other => panic!("no probe: {other:?}"),
    }
}

/// One expression, parsed as `probe begin { E }`.
fn ex(src: &str) -> String {
    let b = body(&format!("probe begin {{ {src} }}"));
    b[1..b.len() - 1].to_string()
}

/// The rendered parse errors of `src` (file `x.stp`).
fn errors(src: &str) -> String {
    let (_, d, toks) = parse_src(src);
    let mut r = Renderer::new("x.stp", src, &toks);
    d.list.iter().map(|d| r.render(d)).collect()
}

#[test]
fn precedence_follows_stap_not_c() {
    assert_eq!(
        ex("a || b && c | d ^ e & f == g << h . i + j * k"),
        "(|| a (&& b (Or c (Xor d (And e (Eq f (Shl g (. h (Add i (Mul j k))))))))))"
    );
    // `.` binds looser than `+`.
    assert_eq!(ex("\"x\" . 1 + 2"), "(. \"x\" (Add 1 2))");
    // Comparisons bind looser than shifts, tighter than `&`.
    assert_eq!(ex("a & b < c >> d"), "(And a (Lt b (Shr c d)))");
}

#[test]
fn left_and_right_associativity() {
    assert_eq!(ex("a - b - c"), "(Sub (Sub a b) c)");
    assert_eq!(ex("a . b . c"), "(. (. a b) c)");
    assert_eq!(ex("a = b += c"), "(Set a (Bin(Add) b c))");
    assert_eq!(ex("a ? b : c ? d : e"), "(? a b (? c d e))");
    assert_eq!(ex("x = a ? b : c"), "(Set x (? a b c))");
}

#[test]
fn unary_and_crement() {
    assert_eq!(ex("-x++"), "(Neg (post++ x))");
    assert_eq!(ex("! ~-+y"), "(Not (BitNot (Neg (Plus y))))");
    assert_eq!(ex("--x"), "(pre-- x)");
    assert_eq!(ex("a - -1"), "(Sub a (Neg 1))");
}

#[test]
fn assignment_operators() {
    for (op, name) in [
        ("+=", "Bin(Add)"),
        ("-=", "Bin(Sub)"),
        ("*=", "Bin(Mul)"),
        ("/=", "Bin(Div)"),
        ("%=", "Bin(Mod)"),
        ("<<=", "Bin(Shl)"),
        (">>=", "Bin(Shr)"),
        ("&=", "Bin(And)"),
        ("|=", "Bin(Or)"),
        ("^=", "Bin(Xor)"),
        (".=", "Concat"),
        ("=", "Set"),
    ] {
        assert_eq!(ex(&format!("a {op} b")), format!("({name} a b)"));
    }
}

#[test]
fn numbers() {
    assert_eq!(ex("x = 0x1f + 017 + 10"), "(Set x (Add (Add 31 15) 10))");
    assert_eq!(ex("x = 18446744073709551615"), "(Set x -1)");
    assert_eq!(parse_number("0880", false), None);
    assert_eq!(parse_number("9223372036854775808", true), Some(i64::MIN));
    assert_eq!(parse_number("9223372036854775809", true), None);
    assert_eq!(parse_number("0x", false), None);
    assert_eq!(parse_number("12abc", false), None);
}

#[test]
fn strings_escapes_and_gluing() {
    assert_eq!(
        ex(r#"s = "a\tb\n\\\"\101\x41\q""#),
        r#"(Set s "a\tb\n\\\"AAq")"#
    );
    assert_eq!(ex("s = \"a\" /* c */ \"b\"  \"c\""), "(Set s \"abc\")");
}

#[test]
fn comments() {
    assert_eq!(
        body("# shell\nprobe begin { // c++\n x = 1 /* c */ }"),
        "{(Set x 1)}"
    );
}

#[test]
fn statements() {
    assert_eq!(
        body("probe begin { if (a) b = 1; else { c = 2 } ; }"),
        "{(if a (Set b 1) {(Set c 2)}) ;}"
    );
    assert_eq!(
        body("probe begin { while (i < 3) { i++; if (i) continue; break } next }"),
        "{(loop - (Lt i 3) - {(post++ i) (if i continue) break}) next}"
    );
    assert_eq!(
        body("probe begin { for (i = 0; i < 3; i++) x += i; for (;;) ; }"),
        "{(loop (Set i 0) (Lt i 3) (post++ i) (Bin(Add) x i)) (loop - 1 - ;)}"
    );
}

#[test]
fn calls_and_print_family() {
    assert_eq!(
        ex("printf(\"%s %d\\n\", execname(), pid())"),
        "(Printf Some(\"%s %d\\n\") (execname) (pid))"
    );
    assert_eq!(ex("println(1)"), "(Println None 1)");
    assert_eq!(ex("println()"), "(Println None )");
    assert_eq!(ex("print(\"a\" . \"b\")"), "(Print None (. \"a\" \"b\"))");
    assert_eq!(ex("kernel_string($return)"), "(kernel_string $return)");
    assert_eq!(ex("sprintf(\"%d\", 1)"), "(sprintf Some(\"%d\") 1)");
}

#[test]
fn probe_points() {
    let (s, d, _) = parse_src(
        "probe kernel.function(\"vfs_read\").return?, syscall.open, timer.ms(100) {}\n\
         probe kprobe.{function(\"a\"), function(\"b\")}.return, begin(-1) {}",
    );
    assert!(d.list.is_empty(), "{:?}", d.list);
    let shown: Vec<String> = s
        .items
        .iter()
        .flat_map(|it| match it {
            Item::Probe(p) => p.points.iter().map(|p| p.display()).collect(),
            _ => vec![],
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            "kernel.function(\"vfs_read\").return?",
            "syscall.open",
            "timer.ms(100)",
            "kprobe.function(\"a\").return",
            "kprobe.function(\"b\").return",
            "begin(-1)",
        ]
    );
}

#[test]
fn wildcard_names_are_glued_only_when_adjacent() {
    let (s, _, _) = parse_src("probe syscall.open*at {}");
    let Some(Item::Probe(p)) = s.items.first() else {
        panic!()
    };
    assert_eq!(p.points[0].display(), "syscall.open*at");
}

#[test]
fn globals() {
    let (s, d, _) = parse_src("global a, b = -5; global c = \"x\", d[10], e%");
    assert!(d.list.is_empty());
    let g: Vec<String> = s
        .items
        .iter()
        .map(|it| match it {
            Item::Global(g) => format!("{}:{:?}:{}", g.name, g.init, g.array),
            _ => "?".into(),
        })
        .collect();
    assert_eq!(g.len(), 5);
    assert!(g[1].starts_with("b:Some(Num(-5,"));
    assert!(g[3].ends_with(":true") && g[4].ends_with(":true"));
}

#[test]
fn full_grammar_trees() {
    assert_eq!(ex("a[1, \"x\"] = 2"), "(Set ([] a [1 \"x\"]) 2)");
    assert_eq!(ex("x = [1, *] in a"), "(Set x (in [1 *] a))");
    assert_eq!(ex("x = 1 + 2 in a"), "(Set x (in [(Add 1 2)] a))");
    // `in` binds looser than comparisons, tighter than `&`.
    assert_eq!(ex("x = 1 & 2 in a"), "(Set x (And 1 (in [2] a)))");
    assert_eq!(ex("s <<< 1"), "(<<< s 1)");
    assert_eq!(ex("x = @count(s[1])"), "(Set x (@count ([] s [1])))");
    assert_eq!(
        ex("print(@hist_linear(s, 0, 100, -10)[2])"),
        "(Print None ([] (@hist_linear s 0 100 -10) [2]))"
    );
    assert_eq!(ex("x = $var->f[2]$$"), "(Set x (-> $var .f [2] $$))");
    assert_eq!(ex("x = &$p->function"), "(Set x (& (-> $p .function)))");
    assert_eq!(ex("x = q->a->b"), "(Set x (-> q .a .b))");
    assert_eq!(
        ex("x = @cast(p, \"task_struct\", \"kernel\")->pid"),
        "(Set x (-> (@cast p \"task_struct\" \"kernel\") .pid))"
    );
    assert_eq!(ex("x = @var(\"a\" \"b\")"), "(Set x (@var \"ab\"))");
    assert_eq!(
        ex("x = @defined($a) ? @entry($a) : 0"),
        "(Set x (? (@defined $a) (@entry $a) 0))"
    );
    assert_eq!(ex("x = s =~ \"a.*\" == 1"), "(Set x (Eq (=~ s \"a.*\") 1))");
    // `.` binds tighter than the shifts.
    assert_eq!(ex("x = a >>> 2 . \"s\""), "(Set x (>>> a (. 2 \"s\")))");
    assert_eq!(
        ex("x = sprintf(\"%d\", 1) . sprint(2)"),
        "(Set x (. (sprintf Some(\"%d\") 1) (sprint None 2)))"
    );
    assert_eq!(
        body("probe begin { foreach (v- = [a, b] in x[*, 1] limit 5) print(a) }"),
        "{(foreach v=[a b] x[* 1] None Some((Value, false)) 5 (Print None a))}"
    );
    assert_eq!(
        body("probe begin { foreach (k in s @sum+) ; foreach ([a, b-] in x) ; }"),
        "{(foreach [k] s Some(\"@sum\") Some((Value, true)) - ;) \
         (foreach [a b] x None Some((Key(1), false)) - ;)}"
    );
    assert_eq!(
        body("probe begin { delete x[1]; delete x; try { } catch (e) { } }"),
        "{(delete ([] x [1])) (delete x) (try {} e {})}"
    );
    let (s, d, _) = parse_src(
        "function f:long(a:long, b) :2 { return a + b }\n\
         probe a.b = begin { } , { } probe b += end { }\n\
         private global g[10]% private h",
    );
    assert!(d.list.is_empty(), "{:?}", d.list);
    assert_eq!(s.items.len(), 5);
    assert!(matches!(&s.items[0], Item::Function(f)
        if f.name == "f" && f.params.len() == 2 && f.priority == Some(2)
            && f.ret == Some(TypeAnn::Long)));
    assert!(matches!(&s.items[1], Item::Alias(a) if !a.epilogue_style && a.epilogue.is_some()));
    assert!(matches!(&s.items[2], Item::Alias(a) if a.epilogue_style));
    assert!(matches!(&s.items[3], Item::Global(g)
        if g.wrap && g.size == Some(10) && g.private.is_some()));
    assert!(matches!(&s.items[4], Item::Global(g) if g.name == "h"));
}

#[test]
fn strings_keep_raw_bytes() {
    assert_eq!(
        body("probe begin { x = \"\\377a\\x41\\n\" }"),
        "{(Set x \"\u{fffd}aA\\n\")}"
    );
    let (s, _, _) = parse_src("probe begin { x = \"\\377\" }");
    let Some(Item::Probe(p)) = s.items.first() else {
        panic!("no probe")
    };
    let StmtKind::Block(b) = &p.body.kind else {
        panic!("no block")
    };
    let StmtKind::Expr(Expr {
        kind: ExprKind::Assign(_, _, rhs),
        ..
    }) = &b[0].kind
    else {
        panic!("no assignment")
    };
    assert_eq!(rhs.kind, ExprKind::Str(vec![0xff]));
}

#[test]
fn preprocessor_and_macros() {
    assert_eq!(
        body("probe begin { %( arch == \"x86_64\" %? x = 1 %: x = 2 %) }"),
        "{(Set x 1)}"
    );
    assert_eq!(
        body("@define foo(a) %( @a + 1 %)\nprobe begin { x = @foo(2) }"),
        "{(Set x (Add 2 1))}"
    );
    let (_, d, _) = parse_src("%( kernel_v < 2 %? probe begin {} %)");
    assert_eq!(d.list[0].message, "expected string literal");
}

#[test]
fn error_expected_paren() {
    assert_eq!(
        errors("probe begin {\n  x = (1 + 2;\n}\n"),
        "parse error: expected ')'\n\
         \x20       saw: operator ';' at x.stp:2:13\n\
         \x20    source:   x = (1 + 2;\n\
         \x20                        ^\n\n"
    );
}

#[test]
fn error_at_end_of_file() {
    assert_eq!(
        errors("probe begin {"),
        "parse error: expected statement\n        saw: x.stp EOF\n\n"
    );
    assert_eq!(
        errors("probe begin { x = "),
        "parse error: expected value\n        saw: x.stp EOF\n\n"
    );
}

#[test]
fn error_recovery_reports_each_declaration() {
    let e = errors("probe begin { x = }\nprobe end { if x }\nglobal 5\n");
    assert_eq!(e.matches("parse error:").count(), 3, "{e}");
    assert!(e.contains(
        "parse error: expected literal string or number\n        saw: operator '}' at x.stp:1:19"
    ));
    assert!(e.contains("parse error: expected '('\n        saw: identifier 'x' at x.stp:2:16"));
    assert!(e.contains("parse error: expected identifier\n        saw: number '5' at x.stp:3:8"));
}

#[test]
fn error_messages_of_stap() {
    let first_line = |src: &str| errors(src).lines().next().unwrap_or("").to_string();
    assert_eq!(
        first_line("x = 1"),
        "parse error: expected 'probe', 'global', 'private', 'function', or '%{'"
    );
    assert_eq!(
        first_line("probe begin x"),
        "parse error: expected one of ', { } = +='"
    );
    assert_eq!(
        first_line("probe begin { printf(\"%q\", 1) }"),
        "parse error: invalid or missing conversion specifier"
    );
    assert_eq!(
        first_line("probe begin { printf(x) }"),
        "parse error: expected literal string"
    );
    assert_eq!(
        first_line("probe begin { return 1 }"),
        "parse error: found 'return' not in function context"
    );
    assert_eq!(
        first_line("probe begin { x = 0880 }"),
        "parse error: number invalid or out of range"
    );
    assert_eq!(
        first_line("probe begin { x = @foo(1) }"),
        "parse error: unknown operator @foo"
    );
    assert_eq!(
        first_line("%{ int x; %}"),
        "parse error: embedded C cannot run: stapvm runs only verified bytecode and has no guru mode (there is no -g)"
    );
    assert_eq!(
        first_line("global a, a"),
        "parse error: duplicate global name"
    );
    // As in stap, a second suffix is not a suffix any more.
    assert_eq!(
        first_line("probe begin?? {}"),
        "parse error: expected one of ', { } = +='"
    );
}

#[test]
fn junk_tokens_give_the_lexer_message_at_the_token() {
    assert_eq!(
        errors("probe begin { x = \"abc\n}"),
        "parse error: Could not find matching closing quote\n\
         \x20        at: junk '\"abc' at x.stp:1:19\n\
         \x20    source: probe begin { x = \"abc\n\
         \x20                              ^\n\n"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // `compile` gives the passes a 64 MiB stack; so does this test.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(deep_nesting)
        .unwrap()
        .join()
        .unwrap();
}

fn deep_nesting() {
    let deep = format!(
        "probe begin {{ x = {}1{} }}",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    assert!(errors(&deep).contains("nested too deeply"));
    let unary = format!("probe begin {{ x = {}1 }}", "- ".repeat(100_000));
    assert!(errors(&unary).contains("nested too deeply"));
    let blocks = format!("probe begin {}{}", "{".repeat(5000), "}".repeat(5000));
    assert!(errors(&blocks).contains("nested too deeply"));
    let ifs = format!("probe begin {{ {} x = 1 }}", "if (1) ".repeat(5000));
    assert!(errors(&ifs).contains("nested too deeply"));
}

#[test]
fn expression_ids_are_dense_and_in_source_order() {
    let (s, _, _) = parse_src("probe begin { x = 1 + 2; y = x }");
    assert_eq!(s.nexprs, 8);
}
#[test]
fn print_family_match_is_the_list() {
    for p in expr::PRINT_FAMILY {
        assert!(expr::is_print_family(p.as_bytes()), "{p}");
    }
    for p in ["printx", "prin", "sprintfx", "Print", "@print"] {
        assert!(!expr::is_print_family(p.as_bytes()), "{p}");
    }
}

/// `number_exprs` visits the expressions in the order of
/// `Expr::children_mut` / `Stmt::children_mut` (the walk it replaced), on
/// every corpus script.
#[test]
fn number_exprs_follows_children_mut() {
    fn e(x: &mut Expr, n: &mut u32) {
        x.id = *n;
        *n = n.saturating_add(1);
        for c in x.children_mut() {
            e(c, n);
        }
    }
    fn s(x: &mut Stmt, n: &mut u32) {
        let (exprs, stmts) = x.children_mut();
        for x in exprs {
            e(x, n);
        }
        for x in stmts {
            s(x, n);
        }
    }
    // The same roots in the same order (`number_roots`); the node walks
    // are the old `children_mut` ones.
    fn reference(script: &mut Script) -> u32 {
        let mut n = 0;
        super::number_roots(script, &mut n, s, e);
        n
    }
    let mut dirs = vec![vm_testkit::paths::corpus_dir()];
    let mut files = 0;
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for p in rd.flatten().map(|e| e.path()) {
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            let Ok(src) = std::fs::read_to_string(&p) else {
                continue;
            };
            let mut d = Diags::default();
            let script = parse(&lexer::lex(&src, &[]), &mut d);
            let mut again = script.clone();
            let n = reference(&mut again);
            assert_eq!(n, script.nexprs, "{}", p.display());
            assert_eq!(
                format!("{again:?}"),
                format!("{script:?}"),
                "{}",
                p.display()
            );
            files += 1;
        }
    }
    assert!(files > 500, "{files} corpus files");
}

/// `parse_number` reads bytes as `from_str_radix` read the text.
#[test]
fn parse_number_as_from_str_radix() {
    fn old(s: &str, neg: bool) -> Option<i64> {
        let v: u64 = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            u64::from_str_radix(h, 16).ok()?
        } else if s.len() > 1 && s.starts_with('0') {
            u64::from_str_radix(&s[1..], 8).ok()?
        } else {
            s.parse::<u64>().ok()?
        };
        if neg {
            if v > 1u64 << 63 {
                return None;
            }
            Some((v as i64).wrapping_neg())
        } else {
            Some(v as i64)
        }
    }
    let cases = [
        "",
        "0",
        "1",
        "+",
        "+5",
        "-5",
        "0x",
        "0X1f",
        "0x+f",
        "0xg",
        "07",
        "08",
        "0+7",
        "00",
        "18446744073709551615",
        "18446744073709551616",
        "9223372036854775808",
        "0xffffffffffffffff",
        "0x10000000000000000",
        "01777777777777777777777",
        "02000000000000000000000",
        "12abc",
        "1_000",
        "١",
    ];
    for c in cases {
        for neg in [false, true] {
            assert_eq!(parse_number(c, neg), old(c, neg), "{c:?} {neg}");
        }
    }
}
