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

/// The sorted functions a script's probes arm.
fn funcs(p: &Program) -> Vec<String> {
    let mut got: Vec<String> = points(p).into_iter().map(|x| x.1).collect();
    got.sort();
    got
}

/// How many of a program's probes are optional (`?`).
fn optional(p: &Program) -> usize {
    p.probes
        .iter()
        .filter(|x| u32::from(x.flags) & vm_spec::abi::STP_PROBE_F_OPTIONAL != 0)
        .count()
}

#[test]
fn nfs_fop_read_write_aio_and_sendfile() {
    // read/write and aio_*: nfs_file_read/write on 5.10+.
    let p = build("probe nfs.fop.read { printf(\"%s %s\\n\", devname, argstr) }");
    assert_eq!(funcs(&p), ["nfs_file_read"]);
    assert_eq!(
        vars(&p),
        [
            "$iocb->ki_filp->f_inode->i_sb->s_id",
            "$iocb->ki_pos",
            "$to->count"
        ]
    );
    assert_eq!(optional(&p), 0);
    let p = build("probe nfs.fop.write.return { print(retstr) }");
    assert_eq!(funcs(&p), ["nfs_file_write"]);
    assert!(points(&p)[0].0.ends_with(".return"), "{:?}", points(&p));
    // aio_read's file_name / cache_valid: the dentry name and the
    // nfs_inode (container_of the inode) of the module's BTF.
    let p = build("probe nfs.fop.aio_read { printf(\"%s %d\\n\", file_name, cache_valid) }");
    assert_eq!(funcs(&p), ["nfs_file_read"]);
    let v = vars(&p);
    assert!(
        v.contains(&"$iocb->ki_filp->f_path->dentry->d_name->name".to_string()),
        "{v:?}"
    );
    assert!(
        v.contains(&"@cast(nfs_inode)->cache_validity".to_string()),
        "{v:?}"
    );
    // file_name is a string, cache_valid a long.
    let e = common::fail("probe nfs.fop.aio_write { x = file_name + 1 }");
    assert!(e.contains("type"), "{e}");
    let e = common::fail("probe nfs.fop.read_iter { x = cache_time . \"\" }");
    assert!(e.contains("type"), "{e}");
    // sendfile is gone: an optional point.
    let p = build("probe nfs.fop.sendfile { print(count) }");
    assert_eq!(funcs(&p), ["nfs_file_sendfile"]);
    assert_eq!(optional(&p), 1);
}

#[test]
fn nfs_aop_folio_successors() {
    // set_page_dirty: the first of the two functions that exists.
    let p = build("probe nfs.aop.set_page_dirty { print(__page) }");
    assert_eq!(
        points(&p).into_iter().map(|x| x.1).collect::<Vec<_>>(),
        ["__set_page_dirty_nobuffers", "filemap_dirty_folio"]
    );
    let f: Vec<u32> = p.probes.iter().map(|x| u32::from(x.flags)).collect();
    assert!(f[0] & vm_spec::abi::STP_PROBE_F_SUFFICIENT != 0, "{f:?}");
    assert!(f[1] & vm_spec::abi::STP_PROBE_F_ALTERNATIVE != 0, "{f:?}");
    assert_eq!(vars(&p), ["$folio", "$page"]);
    let p = build("probe nfs.aop.release_page { print(page_index) }");
    assert_eq!(funcs(&p), ["nfs_release_folio", "nfs_release_page"]);
    assert_eq!(optional(&p), 2);
    // readpage(s)/writepage: optional, on the old functions.
    let p = build("probe nfs.aop.readpage, nfs.aop.readpages, nfs.aop.writepage { print(size) }");
    assert_eq!(
        funcs(&p),
        ["nfs_readpage", "nfs_readpages", "nfs_writepage"]
    );
    assert_eq!(optional(&p), 3);
    let p = build("probe nfs.aop.writepage { print(for_reclaim) }");
    assert_eq!(vars(&p), ["$wbc->for_reclaim"]);
}

#[test]
fn nfs_proc_points_and_variables() {
    // lookup: the v2, v3 and v4 procedures, each optional.
    let p = build("probe nfs.proc.lookup { printf(\"%s %d %d\\n\", server_ip, prot, version) }");
    assert_eq!(
        funcs(&p),
        ["nfs3_proc_lookup", "nfs4_proc_lookup", "nfs_proc_lookup"]
    );
    assert_eq!(optional(&p), 3);
    let v = vars(&p);
    assert!(v.contains(&"$dir".to_string()), "{v:?}");
    assert!(v.contains(&"@cast(rpc_xprt)->prot".to_string()), "{v:?}");
    assert!(
        v.contains(&"@cast(nfs_server)->nfs_client->rpc_ops->version".to_string()),
        "{v:?}"
    );
    // server_ip is a string (stap >= 4.3), version a long.
    let e = common::fail("probe nfs.proc.lookup { x = server_ip + 1 }");
    assert!(e.contains("type"), "{e}");
    let p = build("probe nfs.proc.read_done { printf(\"%d %d %d\\n\", count, status, timestamp) }");
    assert_eq!(
        funcs(&p),
        ["nfs3_read_done", "nfs4_read_done", "nfs_read_done"]
    );
    assert_eq!(
        vars(&p),
        ["$hdr->res->count", "$hdr->timestamp", "$task->tk_status"]
    );
    let p = build("probe nfs.proc.write_setup { printf(\"%d %d\\n\", how, size) }");
    assert_eq!(vars(&p), ["$hdr->args->count", "$hdr->args->stable"]);
    let p = build("probe nfs.proc.commit_done { print(valid) }");
    assert_eq!(funcs(&p), ["nfs3_commit_done", "nfs4_commit_done"]);
    assert_eq!(vars(&p), ["$data->res->fattr->valid"]);
    let p = build("probe nfs.proc.open { print(filename) }");
    assert_eq!(funcs(&p), ["nfs_open"]);
    assert_eq!(optional(&p), 0);
    let p = build("probe nfs.proc.handle_exception { printf(\"%d %d\\n\", version, errorcode) }");
    assert_eq!(funcs(&p), ["nfs4_handle_exception"]);
    assert_eq!(vars(&p), ["$errorcode"]);
    let p = build("probe nfs.proc.remove { printf(\"%s %d\\n\", filename, filelen) }");
    assert_eq!(vars(&p), ["$dentry->d_name->len", "$dentry->d_name->name"]);
    // The synchronous procedures, rename and release are gone: optional.
    let p = build(
        "probe nfs.proc.read, nfs.proc.write, nfs.proc.commit, nfs.proc.rename, \
         nfs.proc.release { print(name) }",
    );
    assert_eq!(optional(&p), p.probes.len());
    assert!(p.probes.len() >= 10, "{}", p.probes.len());
}
