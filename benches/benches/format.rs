//! Record formatting bench: what the `stapvm` CLI does with every PRINTF
//! record it takes from a ring (userspace/src/output.rs, `Renderer::render`):
//! decode it (`vm_spec::records::parse`) and format it with stap's printf
//! (`vm_spec::core::format`, the C formatter), then append the text to a
//! buffer. Records come from the C core running the printf handlers of
//! the interp bench. ns per record.
//!
//! `cargo bench -p stapvm-benches --bench format`
use stapvm_benches::{compile, image_of, printf_loop_script, selected, time_ns, RawCore};
use std::hint::black_box;
use std::time::Duration;
use vm_spec::core::format;
use vm_spec::records::FmtArg;
use vm_spec::records::{self, Record};

fn main() {
    println!("format: decode + format per record, user space; median of runs");
    let cases = [
        ("printf-int-str", printf_loop_script(1000)),
        (
            "printf-5-ints",
            "probe begin { for (i = 0; i < 1000; i++) printf(\"%d %d %x %d %d\\n\", i, i * 7, i, -i, 3) }"
                .to_owned(),
        ),
        (
            "printf-text",
            "probe begin { for (i = 0; i < 1000; i++) printf(\"%s: %s\\n\", execname(), \"a constant string of some length\") }"
                .to_owned(),
        ),
    ];
    println!(
        "{:<16} {:>8} {:>12} {:>12} {:>12}",
        "bench", "records", "decode", "format", "both"
    );
    for (name, src) in cases {
        if !selected(name) {
            continue;
        }
        let prog = compile(&src, &[]);
        let mut core = RawCore::new(&image_of(&prog), 1 << 20);
        let raws = core.run_and_collect(0);
        let n = raws.len() as f64;
        let formats = &prog.formats;
        let budget = Duration::from_millis(1000);
        let decode = time_ns(budget, 1, || {
            for r in &raws {
                black_box(records::parse(r, formats).expect("decode"));
            }
        });
        let decoded: Vec<Record> = raws
            .iter()
            .map(|r| records::parse(r, formats).expect("decode"))
            .collect();
        let fmt_only = time_ns(budget, 1, || {
            let mut out = Vec::with_capacity(64 * 1024);
            for rec in &decoded {
                if let Record::Printf { fmt, args, .. } = rec {
                    let a: Vec<FmtArg> = args.iter().map(|a| a.as_fmt_arg()).collect();
                    out.extend_from_slice(&format(&formats[usize::from(*fmt)].text, &a));
                }
            }
            black_box(out);
        });
        let both = time_ns(budget, 1, || {
            let mut out = Vec::with_capacity(64 * 1024);
            for r in &raws {
                if let Ok(Record::Printf { fmt, args, .. }) = records::parse(r, formats) {
                    let a: Vec<FmtArg> = args.iter().map(|a| a.as_fmt_arg()).collect();
                    out.extend_from_slice(&format(&formats[usize::from(fmt)].text, &a));
                }
            }
            black_box(out);
        });
        println!(
            "{:<16} {:>8} {:>9.1} ns {:>9.1} ns {:>9.1} ns   (per record)",
            name,
            raws.len(),
            decode / n,
            fmt_only / n,
            both / n
        );
    }
}
