//! The nfsd.*, sunrpc.* and nfs.* kernel aliases (compiler/src/tapset/
//! kernel/{nfsd,sunrpc,nfs}.stp): the module functions each alias arms,
//! the target variables and module-type `@cast`s a script's variables
//! need (and only those), the wildcards of the buildok `-all-probes`
//! files, and the family's helper functions on the C core in user space.
mod common;
use common::aliases::points;
use vm_spec::program::{Program, TargetSite};

fn build(src: &str) -> Program {
    common::build(src).program
}

/// The target variables as `$name->a->b` or `@cast(T)->a`.
fn vars(p: &Program) -> Vec<String> {
    let mut out: Vec<String> = p
        .target_vars
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
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn nfsd_dispatch_reads_only_what_the_script_uses() {
    let p = build("probe nfsd.dispatch { print(prog) }");
    assert_eq!(
        points(&p),
        [(
            "kernel.function(\"nfsd_dispatch\")".to_string(),
            "nfsd_dispatch".to_string()
        )]
    );
    assert_eq!(vars(&p), ["$rqstp->rq_prog"]);
    // client_ip: the family and address bytes of rq_addr, through the
    // svc_rqst type of the nfsd module's BTF.
    let p = build("probe nfsd.dispatch { print(client_ip) }");
    let v = vars(&p);
    assert!(
        v.contains(&"@cast(svc_rqst)->rq_addr->ss_family".to_string()),
        "{v:?}"
    );
    assert!(
        v.contains(&"@cast(svc_rqst)->rq_addr->__data".to_string()),
        "{v:?}"
    );
    assert!(v.contains(&"$rqstp".to_string()), "{v:?}");
    assert!(!v.iter().any(|x| x.contains("rq_xid")), "{v:?}");
}

#[test]
fn nfsd_vfs_level_and_proc_aliases() {
    let p = build("probe nfsd.unlink { printf(\"%s %d\\n\", filename, type) }");
    assert_eq!(points(&p)[0].1, "nfsd_unlink");
    assert_eq!(vars(&p), ["$flen", "$fname", "$type"]);
    // .return: retstr from $return; fh from the entry value of $fhp.
    let p = build("probe nfsd.rename.return { printf(\"%s %s\\n\", retstr, fh) }");
    // An entry probe saves $ffhp for the .return.
    let ds: Vec<String> = points(&p).into_iter().map(|x| x.0).collect();
    assert!(
        ds.contains(&"kernel.function(\"nfsd_rename\").return".to_string()),
        "{ds:?}"
    );
    let v = vars(&p);
    assert!(v.contains(&"$ffhp".to_string()), "{v:?}");
    assert!(
        v.contains(&"@cast(svc_fh)->fh_handle->fh_size".to_string()),
        "{v:?}"
    );
    // v3 arguments come from rq_argp, cast to the module's struct.
    let p = build("probe nfsd.proc3.lookup { print(filename) }");
    assert_eq!(points(&p)[0].1, "nfsd3_proc_lookup");
    let v = vars(&p);
    assert!(
        v.contains(&"@cast(nfsd3_diropargs)->name".to_string()),
        "{v:?}"
    );
    assert!(v.contains(&"$rqstp->rq_argp".to_string()), "{v:?}");
    // v4: the union argument.
    let p = build("probe nfsd.proc4.write { print(count) }");
    assert_eq!(vars(&p), ["$u->write->wr_buflen"]);
    // The v2 procedures and the removed functions are optional.
    let p = build("probe nfsd.proc.lookup { print(name) }");
    let mut got: Vec<String> = points(&p).into_iter().map(|x| x.1).collect();
    got.sort();
    assert_eq!(
        got,
        ["nfsd3_proc_lookup", "nfsd4_lookup", "nfsd_proc_lookup"]
    );
    assert_eq!(
        p.probes
            .iter()
            .filter(|x| u32::from(x.flags) & vm_spec::abi::STP_PROBE_F_OPTIONAL != 0)
            .count(),
        2
    );
}

#[test]
fn all_probes_wildcards_expand_to_functions_only() {
    for (src, at_least) in [
        ("probe nfsd.*, nfsd.*.*, nfsd.*.*.* { print(1) }", 60),
        ("probe sunrpc.*, sunrpc.*.*, sunrpc.*.*.* { print(1) }", 40),
        ("probe nfs.*.*, nfs.*.*.* { print(1) }", 25),
    ] {
        let p = build(src);
        let pts = points(&p);
        assert!(pts.len() >= at_least, "{src}: {} probes", pts.len());
        for (d, t) in &pts {
            assert!(d.starts_with("kernel.function(\""), "{src}: {d}");
            assert!(
                !t.contains('*') && !d.contains(".return.return"),
                "{src}: {d}"
            );
        }
    }
    // A wildcard past a leaf alias matches nothing under it.
    let e = common::fail("probe nfsd.return.* { }");
    assert!(e.contains("no match"), "{e}");
}

#[test]
fn sunrpc_and_nfs_variables() {
    let p = build("probe sunrpc.svc.register { printf(\"%d %d\\n\", prog, port) }");
    assert_eq!(points(&p)[0].1, "svc_register");
    // Both layouts are asked for (@choose_defined): sv_programs on 6.10+.
    assert_eq!(
        vars(&p),
        [
            "$port",
            "$serv->sv_program->pg_prog",
            "$serv->sv_programs->pg_prog"
        ]
    );
    let p = build("probe sunrpc.clnt.call_sync { print(prog) }");
    let v = vars(&p);
    assert!(v.contains(&"@cast(rpc_clnt)->cl_prog".to_string()), "{v:?}");
    let p = build("probe nfs.fop.write_iter { printf(\"%d %s\\n\", count, devname) }");
    assert_eq!(points(&p)[0].1, "nfs_file_write");
    assert_eq!(
        vars(&p),
        ["$from->count", "$iocb->ki_filp->f_inode->i_sb->s_id"]
    );
}

#[test]
fn nfsd_helpers_format_as_stap() {
    let src = "probe nfsd.dispatch { }\n\
               probe begin { printf(\"%s|%s|%s|%s|%s\\n\", nfsderror(htonl(0)), \
               nfsderror(htonl(2)), nfsderror(htonl(10013)), nfsderror(htonl(12345)), \
               ftype(0100644)) \
               printf(\"%s|%s|%s\\n\", ftype(040755), nfs3_cmode(2), nfs4_ctype(5)) }";
    let p = build(src);
    let r = common::run_program(&p, &Default::default()).expect("verifies");
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(
        r.output(),
        "nfsderr 0(NFS_OK)|nfsderr 2(NFSERR_NOENT)|nfsderr 10013(NFSERR_GRACE)|nfsderr 12345|0100644 (ISREG)\n\
         040755 (ISDIR)|EXCLUSIVE|NF4LNK\n"
    );
}
