//! The last pass: lays the lowered program out as the kernel image the
//! loader will build (`vm_spec::image::build_stand_in`: the loader picks
//! the real symbols on the target, so stand-ins take their place) and runs
//! the module's own verifier on it (kmod/core/verify.c, built for user
//! space: `vm_spec::core::verify_image`), so that `stapvm compile` never
//! writes a program the module would refuse. A refusal here is either a
//! compiler bug or a script past a module cap (too many maps' entries,
//! MAXNESTING frames too large for the module): it is reported with the
//! verifier's code and message.
use vm_spec::program::Program;

/// Why the program was refused: the verifier's (or the image writer's)
/// error, one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// The image of `prog` the verifier sees at compile time.
pub fn image(prog: &Program) -> Result<Vec<u8>, Refused> {
    vm_spec::image::build_stand_in(prog, vm_spec::image::StandIns::Uniform)
        .map_err(|e| Refused(format!("image: {e}")))
}

/// Verifies `prog` as the module will: `Err` holds the verifier's code
/// name and message (`BAD_JUMP: insn 3 (handler 0 pc 3): ...`).
pub fn run(prog: &Program) -> Result<(), Refused> {
    let img = image(prog)?;
    vm_spec::core::verify_image(&img)
        .map(|_| ())
        .map_err(|e| Refused(format!("{}: {}", e.name, e.message)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use vm_spec::abi;
    use vm_spec::program::{default_limits, Handler, Insn, Probe, ProbeTarget, SrcLoc};

    fn prog(code: Vec<Insn>) -> Program {
        Program {
            limits: default_limits(),
            handlers: vec![Handler {
                ctx: abi::STP_CTX_KPROBE as u8,
                nregs: 1,
                nsregs: 0,
                locs: vec![SrcLoc::default(); code.len()],
                code,
                probe_point: String::new(),
            }],
            probes: vec![Probe {
                kind: abi::STP_PROBE_KPROBE as u8,
                flags: 0,
                handler: 0,
                target: ProbeTarget::Symbol {
                    name: "vfs_*".into(),
                    offset: 0,
                },
                maxactive: 0,
                period_ns: 0,
                randomize: 0,
                perf: None,
                watch: None,
                netfilter: None,
                uprobe: None,
                display: String::new(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn patterns_verify_with_a_stand_in() {
        let ret = Insn::new(abi::STP_OP_RET, 0, 0, 0, 0);
        assert_eq!(run(&prog(vec![ret])), Ok(()));
    }

    #[test]
    fn compile_refuses_what_the_module_would() {
        // MAXNESTING frames of MAXSTRINGLEN strings past the module's
        // STP_MAX_FRAME_BYTES: the limits are each in bounds, together not.
        let opts = crate::Options {
            defines: vec![
                ("MAXNESTING".into(), "64".into()),
                ("MAXSTRINGLEN".into(), "4096".into()),
            ],
            args: vec![],
        };
        let src = "function f(n) { return n + 1 }\nprobe begin { print(f(1)) }";
        let e = crate::compile("x.stp", src, &opts).unwrap_err();
        assert!(
            e.rendered.starts_with(
                "ERROR: the verifier refuses the compiled program: BAD_LIMIT: MAXNESTING 64 frames"
            ),
            "{}",
            e.rendered
        );
        assert!(e
            .rendered
            .ends_with("Pass 4: compilation failed.  [man error::pass4]\n"));
        // Without the function there are no frames: accepted.
        let ok = crate::compile("x.stp", "probe begin { print(1) }", &opts);
        assert!(ok.is_ok());
    }

    #[test]
    fn refusals_name_the_code() {
        let jmp = Insn::new(abi::STP_OP_JMP, 0, 0, 0, 5);
        let ret = Insn::new(abi::STP_OP_RET, 0, 0, 0, 0);
        let e = run(&prog(vec![jmp, ret])).unwrap_err();
        assert!(
            e.0.starts_with("BAD_JUMP: insn 0 (handler 0 pc 0): "),
            "{e}"
        );
    }
}
