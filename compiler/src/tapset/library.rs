//! Tapset functions written in the script language: `library.stp` and the
//! generated ones (`errno_str` from `errno_table`, `__sc_name` /
//! `syscall_name` / `__sc_argstr` from the syscall table). A function is
//! added to the script when something reachable from it calls it and the
//! script does not define a function of that name (a script's own
//! definition wins, as in stap); the globals those functions use come
//! with them. `argv_1` ... `argv_32` (argv.stp), when the script does not
//! declare them, are the script arguments as string literals;
//! the other arities of `user_string`, `ansi_set_color` and `ctime` call
//! library functions of their own.
use super::errno_table::ERRNOS;
use super::{bodies_mut, declared_globals, names_in, tree, walk_exprs_mut, Gen};
use crate::ast::*;
use crate::diag::{Diagnostic, Diags};
use std::collections::HashSet;

/// The hand-written part (library.stp, then library_ctx.stp: the context,
/// proc_mem, namespace, unwind and signal functions; library_user.stp: the
/// user-space stack and symbol functions; aux_syscalls1.stp and
/// aux_syscalls2.stp: the two halves of stap's syscall decoders;
/// aux_syscalls_extra.stp: decoders only the syscall alias variables use),
/// cut at its declarations by compiler/build.rs: `LIBRARY`,
/// `LIBRARY_CHUNKS`, `LIBRARY_NAMES`.
use super::index::{self, LIBRARY_CHUNKS, LIBRARY_NAMES};

/// `errno_str(e)`: the name of errno `e` (or `-e`), "" when unknown; the
/// binary search on `e` is built as AST (`tree`) into the `{ }`.
fn errno_function(g: &mut Gen, span: Span) -> Vec<Item> {
    let text =
        "function errno_str:string(err:long) { e = err < 0 ? -err : err\n{ }\nreturn \"\" }\n";
    let keys: Vec<i64> = ERRNOS.iter().map(|x| x.0).collect();
    g.items_patched(text, span, &mut |items| {
        let Some(body) = tree::function_body(items) else {
            return false;
        };
        if body.len() < 2 {
            return false;
        }
        body[1] = tree::search("e", &keys, 0, keys.len(), false, &mut |i| {
            tree::return_str(ERRNOS[i].1)
        });
        true
    })
}

/// The functions and globals a script can take from the library, parsed
/// as they are first wanted (the whole library is 5,000 lines; a script
/// wants a few functions).
struct Lib {
    funcs: Vec<FunctionDecl>,
    globals: Vec<GlobalDecl>,
    /// Whether each of `LIBRARY_CHUNKS` has been parsed.
    parsed: Vec<bool>,
}

/// The text of `LIBRARY_CHUNKS[i]`.
fn chunk_text(i: usize) -> &'static str {
    let (_, a, b) = LIBRARY_CHUNKS[i];
    index::LIBRARY.get(a..b).unwrap_or("")
}

/// The public functions the library defines (for `(similar: …)`
/// suggestions; internal names start with `_`).
pub(crate) fn function_names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = (0..LIBRARY_CHUNKS.len())
        .filter(|&i| chunk_text(i).starts_with("function "))
        .flat_map(|i| LIBRARY_CHUNKS[i].0.iter().copied())
        .filter(|n| !n.starts_with('_'))
        .collect();
    v.extend(["errno_str", "syscall_name"]);
    v
}

impl Lib {
    /// The library, nothing parsed yet.
    fn new() -> Lib {
        Lib {
            funcs: Vec::new(),
            globals: Vec::new(),
            parsed: vec![false; LIBRARY_CHUNKS.len()],
        }
    }

    /// Parses the declaration of `name` if there is one not parsed yet.
    fn load(&mut self, name: &str, g: &mut Gen, span: Span) {
        let Ok(at) = LIBRARY_NAMES.binary_search_by(|(n, _)| (*n).cmp(name)) else {
            return;
        };
        for &i in LIBRARY_NAMES[at].1 {
            let i = usize::from(i);
            if !self.parsed[i] {
                self.parsed[i] = true;
                let items = g.items(chunk_text(i), span);
                self.add(items);
            }
        }
    }

    fn add(&mut self, items: Vec<Item>) {
        for it in items {
            match it {
                Item::Function(f) => self.funcs.push(*f),
                Item::Global(g) => self.globals.push(g),
                _ => {}
            }
        }
    }
}

/// Replaces an undeclared `argv_N` variable by the script argument.
fn argv_literal(e: &mut Expr, args: &[String], declared: &HashSet<String>) {
    let value = |name: &str| -> Option<Vec<u8>> {
        let n: usize = name.strip_prefix("argv_")?.parse().ok()?;
        if !(1..=32).contains(&n) || declared.contains(name) {
            return None;
        }
        Some(
            args.get(n - 1)
                .map(|a| a.as_bytes().to_vec())
                .unwrap_or_default(),
        )
    };
    if let ExprKind::Var(n) = &e.kind {
        if let Some(v) = value(n) {
            e.kind = ExprKind::Str(v);
        }
    }
}

/// The other arities of overloaded tapset functions (one function per
/// name here): `user_string(addr, err_msg)`, `kernel_string(addr,
/// err_msg)`, `user_string_n(addr, n, err_msg)`, `ansi_set_color(fg[,
/// bg])`, `ctime()`, `user_string_warn(addr, warn_msg)` call the
/// library's `__user_string2`, `__kernel_string2`, `__user_string_n3`,
/// `__ansi_set_color1/2`, `__ctime_now`, `__user_string_warn2`;
/// `proc_mem_size(pid)` ... `proc_mem_string(pid)` call the `_pid`
/// forms (library_ctx.stp); the
/// longer forms of `user_string_n_warn` and `user_string_n_quoted` call
/// `__user_string_n_warn3`, `__user_string_n_quoted3`, the `err_msg`
/// forms of the UTF-32/16 readers `__kernel_string_utf32_2` ...; the
/// deprecated `string(num)` calls `__string_deprecated`
/// and its span is returned (for the one-time warning).
fn two_argument_form(e: &mut Expr) -> Option<Span> {
    if let ExprKind::Call { name, args } = &mut e.kind {
        match (name.as_str(), args.len()) {
            ("string", 1) => {
                *name = "__string_deprecated".to_string();
                return Some(e.span);
            }
            ("user_string", 2) => *name = "__user_string2".to_string(),
            ("kernel_string", 2) => *name = "__kernel_string2".to_string(),
            ("user_string_n", 3) => *name = "__user_string_n3".to_string(),
            ("ansi_set_color", 1) => *name = "__ansi_set_color1".to_string(),
            ("ansi_set_color", 2) => *name = "__ansi_set_color2".to_string(),
            ("ctime", 0) => *name = "__ctime_now".to_string(),
            ("proc_mem_size", 1) => *name = "proc_mem_size_pid".to_string(),
            ("proc_mem_rss", 1) => *name = "proc_mem_rss_pid".to_string(),
            ("proc_mem_shr", 1) => *name = "proc_mem_shr_pid".to_string(),
            ("proc_mem_txt", 1) => *name = "proc_mem_txt_pid".to_string(),
            ("proc_mem_data", 1) => *name = "proc_mem_data_pid".to_string(),
            ("proc_mem_string", 1) => *name = "proc_mem_string_pid".to_string(),
            ("assert", 2) => *name = "__assert2".to_string(),
            ("user_string_warn", 2) => *name = "__user_string_warn2".to_string(),
            ("user_string_n_warn", 3) => *name = "__user_string_n_warn3".to_string(),
            ("user_string_n_quoted", 3) => *name = "__user_string_n_quoted3".to_string(),
            ("kernel_string_utf32", 2) => *name = "__kernel_string_utf32_2".to_string(),
            ("kernel_string_utf16", 2) => *name = "__kernel_string_utf16_2".to_string(),
            ("user_string_utf32", 2) => *name = "__user_string_utf32_2".to_string(),
            ("user_string_utf16", 2) => *name = "__user_string_utf16_2".to_string(),
            ("kernel_buffer_quoted", 3) => *name = "__kernel_buffer_quoted3".to_string(),
            ("task_utime", 1) => *name = "__task_utime1".to_string(),
            ("task_stime", 1) => *name = "__task_stime1".to_string(),
            _ => {}
        }
    }
    None
}

/// The warning for the first call of the removed `string(num)`, worded as
/// stap words its deprecation warnings.
pub const STRING_DEPRECATED_WARNING: &str = "function string() is deprecated (long removed \
     from the tapset); use sprint(num) or sprintf(\"%d\", num) instead";

/// Adds the library functions `s` needs (see the module comment).
pub(crate) fn include(s: &mut Script, args: &[String], g: &mut Gen, diags: &mut Diags) {
    let declared = declared_globals(s);
    let defined: HashSet<String> = s
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Function(f) => Some(f.name.clone()),
            _ => None,
        })
        .collect();
    // One walk over the script: `argv_N`, the other arities, and the
    // functions called (after the renaming), in `names_in`'s order.
    let mut wanted: Vec<String> = Vec::new();
    let mut deprecated: Option<Span> = None;
    for b in bodies_mut(s) {
        walk_exprs_mut(b, &mut |e| {
            argv_literal(e, args, &declared);
            if let Some(span) = two_argument_form(e) {
                // The first call in the source (walk order is not).
                deprecated = match deprecated {
                    Some(d) if d.lo <= span.lo => Some(d),
                    _ => Some(span),
                };
            }
            if let ExprKind::Call { name, .. } = &e.kind {
                wanted.push(name.clone());
            }
        });
    }
    if let Some(span) = deprecated {
        diags.push(Diagnostic::warning(STRING_DEPRECATED_WARNING, span));
    }
    wanted.retain(|n| !defined.contains(n));
    if wanted.is_empty() {
        return;
    }
    let span = Span::default();
    let mut lib = Lib::new();
    let mut globals_added: HashSet<String> = HashSet::new();
    // Names already looked up (added, or not the library's: a script
    // calls `printf` or `kernel_long` thousands of times; a name the
    // library has not is not there the next time either).
    let mut tried: HashSet<String> = HashSet::new();
    while let Some(name) = wanted.pop() {
        if defined.contains(&name) || !tried.insert(name.clone()) {
            continue;
        }
        // The generated functions are large: made when first wanted.
        if let Some(items) = super::syscalls::generated_function(&name, g, span) {
            lib.add(items);
        } else if name == "errno_str" {
            lib.add(errno_function(g, span));
        }
        lib.load(&name, g, span);
        let Some(i) = lib.funcs.iter().position(|f| f.name == name) else {
            continue;
        };
        let mut f = lib.funcs.swap_remove(i);
        if let Some(b) = &mut f.body {
            let (vars, calls) = names_in(b);
            wanted.extend(calls);
            for v in vars {
                if declared.contains(&v) || globals_added.contains(&v) {
                    continue;
                }
                lib.load(&v, g, span);
                if let Some(gd) = lib.globals.iter().find(|x| x.name == v) {
                    globals_added.insert(v);
                    s.items.insert(0, Item::Global(gd.clone()));
                }
            }
        }
        s.items.push(Item::Function(Box::new(f)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cutting the library loses nothing: each chunk parses alone and
    /// declares exactly the names it is filed under, and together they
    /// declare what the whole library does.
    #[test]
    fn chunks_parse_alone_and_cover_the_library() {
        let parse = |text: &str| {
            let tokens = crate::parse::lexer::lex(text, &[]);
            let mut d = Diags::default();
            let script = crate::parse::parse(&tokens, &mut d);
            assert!(!d.has_errors(), "{text}: {:?}", d.list);
            let mut names: Vec<String> = Vec::new();
            for it in script.items {
                match it {
                    Item::Function(f) => names.push(f.name.clone()),
                    Item::Global(g) => names.push(g.name),
                    _ => panic!("not a function or global in {text}"),
                }
            }
            names
        };
        let mut all: Vec<String> = Vec::new();
        for (i, (names, _, _)) in LIBRARY_CHUNKS.iter().enumerate() {
            let text = chunk_text(i);
            let got = parse(text);
            assert_eq!(got, *names, "{text}");
            all.extend(got);
        }
        // Every name is filed under exactly the chunks declaring it.
        for (name, chunks) in LIBRARY_NAMES {
            for &i in *chunks {
                assert!(LIBRARY_CHUNKS[usize::from(i)].0.contains(name));
            }
        }
        assert!(LIBRARY_NAMES.windows(2).all(|w| w[0].0 < w[1].0));
        let mut whole = parse(index::LIBRARY);
        whole.sort();
        all.sort();
        assert_eq!(all, whole);
        assert!(all.len() > 100);
    }
}
