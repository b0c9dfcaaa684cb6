//! Views of a compiled program for the kernel alias tests
//! (`kernel_aliases*.rs`): the points each probe arms and the target
//! variables the loader will resolve.
use vm_spec::program::{ProbeTarget, Program, TargetSite};

/// (probe display, target symbol) of every probe.
pub fn points(p: &Program) -> Vec<(String, String)> {
    p.probes
        .iter()
        .map(|pr| {
            let t = match &pr.target {
                ProbeTarget::Symbol { name, .. } => name.clone(),
                ProbeTarget::FirstOf(v) => v.join("|"),
                other => format!("{other:?}"),
            };
            (pr.display.clone(), t)
        })
        .collect()
}

/// The target variables as `$name->a->b` (or `@cast(T)->a`).
pub fn vars(p: &Program) -> Vec<String> {
    p.target_vars
        .iter()
        .map(|t| {
            let mut s = match &t.site {
                TargetSite::Cast(ty) => format!("@cast({ty})"),
                _ => format!("${}", t.name),
            };
            for f in &t.fields {
                s.push_str("->");
                s.push_str(f);
            }
            s
        })
        .collect()
}
