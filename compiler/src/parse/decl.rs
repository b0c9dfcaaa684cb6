//! Declarations (the top level): probes and their points (brace groups
//! multiplied out, `?`/`!`/`if (...)` suffixes), probe alias definitions,
//! globals and functions.
use super::stmt::block;
use super::*;

fn point(components: Vec<Component>) -> ProbePoint {
    ProbePoint {
        components,
        optional: false,
        sufficient: false,
        alternative: false,
        condition: None,
        cond: None,
        tentative: None,
        script: None,
    }
}

/// One component, or a `{a, b}` group of probe points.
fn component(i: In) -> PResult<Vec<ProbePoint>> {
    let Some(t) = i.first() else {
        return Err(fail_at(i, "unexpected end-of-file"));
    };
    if t.is_op("{") {
        let (r, pps) = probe_points(&i[1..])?;
        let (r, _) = match r.first() {
            Some(t) if t.is_op("}") => (&r[1..], ()),
            _ => return Err(fail_at(r, "expected '}'")),
        };
        return Ok((r, pps));
    }
    if !(t.kind == TokKind::Ident || t.kind == TokKind::Keyword || t.is_op("*")) {
        return Err(fail_at(i, "expected identifier or '*' or '{'"));
    }
    // Glue adjacent pieces of a wildcard name (`sys_*_at`).
    let mut name = t.text.owned();
    let mut r = &i[1..];
    while let Some(u) = r.first() {
        if u.ws_before || !(u.kind == TokKind::Ident || u.kind == TokKind::Keyword || u.is_op("*"))
        {
            break;
        }
        name.push_str(&u.text);
        r = &r[1..];
    }
    let mut comp = Component {
        name,
        arg: None,
        span: t.span,
    };
    if peek_op(r, "(") {
        let (r2, lit) = literal(&r[1..])?;
        let (r2, _) = op(")")(r2)?;
        comp.arg = Some(lit);
        r = r2;
    }
    Ok((r, vec![point(vec![comp])]))
}

/// Dotted components with the optional `?`/`!`/`if (...)` suffix, brace
/// groups multiplied out (stap's `parse_components`).
fn components(mut i: In) -> PResult<Vec<ProbePoint>> {
    let mut pps: Vec<ProbePoint> = Vec::new();
    loop {
        let (r, suffix) = component(i)?;
        if pps.is_empty() {
            pps = suffix;
        } else {
            if pps
                .iter()
                .any(|p| p.optional || p.sufficient || p.condition.is_some())
            {
                return Err(fail_at(
                    r,
                    "'?', '!' or condition must only be specified in suffix",
                ));
            }
            if pps.len() == 1 && suffix.len() == 1 {
                // One point and one suffix (no brace group): the product
                // without copying the components.
                for (p, s) in pps.iter_mut().zip(suffix) {
                    p.components.extend(s.components);
                    p.optional = s.optional;
                    p.sufficient = s.sufficient;
                    p.condition = s.condition;
                    p.cond = s.cond;
                    p.tentative = None;
                    p.script = None;
                }
                i = r;
                if peek_op(i, ".") {
                    i = &i[1..];
                    continue;
                }
                return component_suffix(i, pps);
            }
            let mut product = Vec::new();
            for p in &pps {
                for s in &suffix {
                    let mut c = p.components.clone();
                    c.extend(s.components.iter().cloned());
                    product.push(ProbePoint {
                        components: c,
                        optional: s.optional,
                        sufficient: s.sufficient,
                        alternative: false,
                        condition: s.condition,
                        cond: s.cond.clone(),
                        tentative: None,
                        script: None,
                    });
                }
                if product.len() > 4096 {
                    return Err(fail_at(r, "too many probe points"));
                }
            }
            pps = product;
        }
        i = r;
        if peek_op(i, ".") {
            i = &i[1..];
            continue;
        }
        return component_suffix(i, pps);
    }
}

/// The optional `?`/`!`/`if (...)` after the last component of `pps`.
fn component_suffix(mut i: In, mut pps: Vec<ProbePoint>) -> PResult<Vec<ProbePoint>> {
    if let Some(t) = i.first().filter(|t| t.is_op("?") || t.is_op("!")) {
        for p in &mut pps {
            if p.optional || p.sufficient {
                return Err(fail_at(i, "'?' or '!' respecified"));
            }
            p.optional = true;
            p.sufficient = t.text == "!";
        }
        i = &i[1..];
    }
    if let Some(t) = i.first().filter(|t| t.is_kw("if")) {
        let span = t.span;
        if !peek_op(&i[1..], "(") {
            return Err(fail_next(&i[1..], "expected '('"));
        }
        let (r, e) = expr(&i[2..])?;
        let (r, _) = match r.first() {
            Some(t) if t.is_op(")") => (&r[1..], ()),
            _ => return Err(fail_next(r, "expected ')'")),
        };
        for p in &mut pps {
            if p.condition.is_some() {
                return Err(fail_at(r, "condition respecified"));
            }
            p.condition = Some(span);
            p.cond = Some(Box::new(e.clone()));
        }
        i = r;
    }
    Ok((i, pps))
}

/// A comma list of probe points (stap's `parse_probe_points`).
fn probe_points(mut i: In) -> PResult<Vec<ProbePoint>> {
    let mut pps = Vec::new();
    loop {
        let (r, mut tail) = components(i)?;
        pps.append(&mut tail);
        if pps.len() > 4096 {
            return Err(fail_at(r, "too many probe points"));
        }
        i = r;
        match i.first() {
            Some(t) if t.is_op(",") => i = &i[1..],
            Some(t) if t.is_op("{") || t.is_op("=") || t.is_op("+=") || t.is_op("}") => {
                return Ok((i, pps))
            }
            _ => return Err(fail_next(i, "expected one of ', { } = +='")),
        }
    }
}

/// `probe POINTS BODY`, or an alias definition `probe NAMES = POINTS BODY
/// [, EPILOGUE]` / `probe NAMES += POINTS BODY`.
fn probe(i: In) -> PResult<Item> {
    let (i, span) = kw("probe")(i)?;
    let (i, points) = probe_points(i)?;
    if let Some(t) = i.first().filter(|t| t.is_op("=") || t.is_op("+=")) {
        let epilogue_style = t.text == "+=";
        if points.iter().any(|p| p.optional || p.sufficient) {
            return Err(fail_at(
                i,
                "probe point alias name cannot be optional nor sufficient",
            ));
        }
        if points.iter().any(|p| p.condition.is_some()) {
            return Err(fail_at(i, "probe point alias name cannot have a condition"));
        }
        let (r, targets) = probe_points(&i[1..])?;
        if !peek_op(r, "{") {
            return Err(fail_next(r, "expected '{'"));
        }
        let (mut r, body) = block(r)?;
        let mut epilogue = None;
        if !epilogue_style && peek_op(r, ",") {
            let (r2, e) = block(&r[1..])?;
            epilogue = Some(e);
            r = r2;
        }
        let a = AliasDecl {
            span,
            names: points,
            epilogue_style,
            points: targets,
            body,
            epilogue,
        };
        return Ok((r, Item::Alias(Box::new(a))));
    }
    if !peek_op(i, "{") {
        return Err(fail_next(i, "expected probe point specifier"));
    }
    let (i, body) = block(i)?;
    Ok((i, Item::Probe(ProbeDecl { span, points, body })))
}

/// `global a [= lit], b[N], c% ...` (stap's `do_parse_global`); after
/// `private`, one name without the `global` keyword is allowed.
fn global<'a>(i: In<'a>, seen: &mut Vec<String>, private: Option<Span>) -> PResult<'a, Vec<Item>> {
    let (mut i, one) = if private.is_some() && !peek_kw(i, "global") {
        (i, true)
    } else {
        (kw("global")(i)?.0, false)
    };
    let mut out = Vec::new();
    loop {
        let (r, (name, span)) = ident(i)?;
        if seen.contains(&name) {
            return Err(fail_at(&i[1..], "duplicate global name"));
        }
        seen.push(name.clone());
        let mut g = GlobalDecl {
            name,
            span,
            init: None,
            array: false,
            size: None,
            wrap: false,
            private,
        };
        i = r;
        if peek_op(i, "%") {
            g.array = true;
            g.wrap = true;
            i = &i[1..];
        }
        if peek_op(i, "[") {
            let (r, (size, _)) = number_tok(&i[1..], false)?;
            if size <= 0 || size > i64::from(i32::MAX) {
                return Err(fail_at(r, "array size out of range"));
            }
            let (r, _) = op("]")(r)?;
            g.array = true;
            g.size = Some(size);
            i = r;
        }
        if peek_op(i, "%") && !g.wrap {
            g.array = true;
            g.wrap = true;
            i = &i[1..];
        }
        if peek_op(i, "=") {
            if g.array {
                return Err(fail_at(&i[1..], "only scalar globals can be initialized"));
            }
            let (r, lit) = literal(&i[1..])?;
            g.init = Some(lit);
            i = r;
        }
        out.push(Item::Global(g));
        match i.first() {
            Some(t) if t.is_op(";") => return Ok((&i[1..], out)),
            Some(t) if t.is_op(",") && !one => i = &i[1..],
            _ => return Ok((i, out)),
        }
    }
}

/// `function name[:type](args)[:prio] body`.
fn function(i: In, private: Option<Span>) -> PResult<Item> {
    let (i, _) = kw("function")(i)?;
    let (mut i, (name, span)) = match i.first() {
        Some(t) if t.kind == TokKind::Ident => (&i[1..], (t.text.owned(), t.span)),
        _ => return Err(fail_next(i, "expected identifier")),
    };
    let type_ann = |i: In<'_>| -> Result<(usize, Option<TypeAnn>), nom::Err<PErr>> {
        if peek_op(i, ":") {
            match i.get(1) {
                Some(t) if t.is_kw("long") => Ok((2, Some(TypeAnn::Long))),
                Some(t) if t.is_kw("string") => Ok((2, Some(TypeAnn::Str))),
                _ => Err(fail_next(&i[1..], "expected 'string' or 'long'")),
            }
        } else {
            Ok((0, None))
        }
    };
    let (n, ret) = type_ann(i)?;
    i = &i[n..];
    let (mut r, _) = op("(")(i)?;
    let mut params: Vec<Param> = Vec::new();
    if peek_op(r, ")") {
        r = &r[1..];
    } else {
        loop {
            let (r2, (pname, pspan)) = ident(r)?;
            if params.iter().any(|p| p.name == pname) {
                return Err(fail_tok(r, "duplicate argument name"));
            }
            let (n, ty) = type_ann(r2)?;
            params.push(Param {
                name: pname,
                span: pspan,
                ty,
            });
            r = &r2[n..];
            match r.first() {
                Some(t) if t.is_op(")") => {
                    r = &r[1..];
                    break;
                }
                Some(t) if t.is_op(",") => r = &r[1..],
                _ => return Err(fail_next(r, "expected ',' or ')'")),
            }
        }
    }
    let mut priority = None;
    if peek_op(r, ":") {
        let (r2, (p, _)) = number_tok(&r[1..], false)?;
        if p < 1 {
            return Err(fail_at(&r[1..], "specified priority must be >= 1"));
        }
        priority = Some(p);
        r = r2;
    }
    let (r, body) = match r.first() {
        // Outside guru mode `parse_tokens` has already refused the script
        // once, at its first embedded-C block.
        Some(t) if t.kind == TokKind::Embedded => (&r[1..], None),
        _ => {
            IN_FUNCTION.with(|f| f.set(true));
            let res = block(r);
            IN_FUNCTION.with(|f| f.set(false));
            let (r, b) = res?;
            (r, Some(b))
        }
    };
    let f = FunctionDecl {
        name,
        span,
        ret,
        params,
        priority,
        body,
        private,
    };
    Ok((r, Item::Function(Box::new(f))))
}

/// One top-level declaration.
pub(super) fn item<'a>(i: In<'a>, globals: &mut Vec<String>) -> PResult<'a, Vec<Item>> {
    let Some(t) = i.first() else {
        return Ok((i, Vec::new()));
    };
    match (&t.kind, t.text.as_bytes()) {
        (TokKind::Keyword, b"probe") => probe(i).map(|(r, p)| (r, vec![p])),
        (TokKind::Keyword, b"global") => global(i, globals, None),
        (TokKind::Keyword, b"function") => function(i, None).map(|(r, f)| (r, vec![f])),
        (TokKind::Keyword, b"private") => {
            let rest = &i[1..];
            if peek_kw(rest, "function") {
                function(rest, Some(t.span)).map(|(r, f)| (r, vec![f]))
            } else if peek_kw(rest, "global")
                || rest.first().is_some_and(|u| u.kind == TokKind::Ident)
            {
                global(rest, globals, Some(t.span))
            } else {
                Err(fail_next(rest, "expected 'function' or identifier"))
            }
        }
        // Refused once per script by `parse_tokens` outside guru mode.
        (TokKind::Embedded, _) => Ok((&i[1..], vec![Item::Embedded(t.span)])),
        _ => Err(fail_at(
            i,
            "expected 'probe', 'global', 'private', 'function', or '%{'",
        )),
    }
}
