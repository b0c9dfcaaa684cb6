//! `!` (sufficient) probe points: optional, and once one resolves the
//! loader does not try the following points of its declaration; the
//! compiler marks them with the loader's flags (abi.h), which never reach
//! the image.
use compiler::{compile, Options};
use vm_spec::abi;

fn flags(src: &str) -> Vec<(String, u32)> {
    let c = compile("x.stp", src, &Options::default()).unwrap_or_else(|e| panic!("{}", e.rendered));
    c.program
        .probes
        .iter()
        .map(|p| (p.display.clone(), u32::from(p.flags)))
        .collect()
}

const S: u32 = abi::STP_PROBE_F_SUFFICIENT | abi::STP_PROBE_F_OPTIONAL;
const A: u32 = abi::STP_PROBE_F_ALTERNATIVE;
const O: u32 = abi::STP_PROBE_F_OPTIONAL;

#[test]
fn points_after_a_sufficient_one_are_its_alternatives() {
    let f = flags(
        "probe kernel.function(\"no_such_fn\")!, kernel.function(\"vfs_read\") { }\n\
         probe kernel.function(\"a\")!, kernel.function(\"b\")?, kernel.function(\"c\")!, \
         kernel.function(\"d\") { }\n\
         probe kernel.function(\"e\"), kernel.function(\"f\") { }\n",
    );
    assert_eq!(
        f,
        [
            ("kernel.function(\"no_such_fn\")!".to_string(), S),
            ("kernel.function(\"vfs_read\")".to_string(), A),
            ("kernel.function(\"a\")!".to_string(), S),
            ("kernel.function(\"b\")?".to_string(), O | A),
            ("kernel.function(\"c\")!".to_string(), S | A),
            ("kernel.function(\"d\")".to_string(), A),
            ("kernel.function(\"e\")".to_string(), 0),
            ("kernel.function(\"f\")".to_string(), 0),
        ]
    );
}

#[test]
fn sufficient_timers_and_returns_compile() {
    // compile() ends with the module's verifier on the image: the loader's
    // flags are not in it.
    let f = flags("probe timer.ms(100)!, kernel.function(\"x\").return { }");
    assert_eq!(f[0].1, S);
    assert_eq!(f[1].1, A);
}

#[test]
fn alternatives_stay_alternatives_across_alias_bodies() {
    // Each alias point with its own body becomes a probe of its own: the
    // point after the `!` is still the `!` point's alternative (5.10 has
    // no send_signal_locked; scheduler.signal_send is `.tp !, .kp`).
    let f = flags(
        "probe __a.tp = kernel.trace(\"signal_generate\") { x = 1 }\n\
         probe __a.kp = kernel.function(\"send_signal_locked\") { x = 2 }\n\
         probe a = __a.tp !, __a.kp { }\n\
         probe a { }\n\
         probe kernel.function(\"g\")!, a { }\n",
    );
    let got: Vec<u32> = f.iter().map(|(_, fl)| *fl & (S | A)).collect();
    // After g's `!`, the alias's `!` point is both: tried only when g did
    // not resolve, and then sufficient for the point after it.
    assert_eq!(got, [S, A, S, S | A, A], "{f:?}");
}
