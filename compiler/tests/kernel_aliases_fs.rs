//! The storage and file-system kernel aliases (compiler/src/tapset/kernel/
//! vfs.stp, block.stp, scsi.stp, tty.stp): the points each alias arms,
//! the variables computed for what a script reads, the wildcards of the
//! buildok `-all-probes` files, and the pure helper functions run on the
//! C core in user space.
mod common;
use common::aliases::{points, vars};
use vm_spec::program::Program;

/// The program of `src`, or a panic with the rendered diagnostics.
fn build(src: &str) -> Program {
    common::build(src).program
}

/// The probe displays alone (without the `begin` probe that initializes
/// block.stp's globals).
fn displays(p: &Program) -> Vec<String> {
    points(p)
        .into_iter()
        .map(|x| x.0)
        .filter(|d| d != "begin")
        .collect()
}

/// The output of the begin probes of `src`, run on the C core.
fn run_begin(src: &str) -> String {
    let p = build(src);
    let r = common::run_program(&p, &Default::default()).expect("verifies");
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    r.output()
}

#[test]
fn vfs_points_and_renamed_functions() {
    let p = build("probe vfs.read, vfs.writev.return { print(name) }");
    assert_eq!(
        points(&p),
        [
            (
                "kernel.function(\"vfs_read\")".to_string(),
                "vfs_read".to_string()
            ),
            (
                "kernel.function(\"vfs_writev\").return".to_string(),
                "vfs_writev".to_string()
            ),
        ]
    );
    // One optional definition per name the kernel used: never both in a
    // kernel, so each resolves its own parameters.
    let p = build("probe vfs.__set_page_dirty_buffers { print(index) }");
    assert_eq!(
        displays(&p),
        [
            "kernel.function(\"__set_page_dirty_buffers\")?",
            "kernel.function(\"block_dirty_folio\")?"
        ]
    );
    let v = vars(&p);
    assert!(v.contains(&"$page".to_string()), "{v:?}");
    assert!(v.contains(&"$folio".to_string()), "{v:?}");
    let p = build("probe vfs.add_to_page_cache { print(index) }");
    assert_eq!(
        points(&p).into_iter().map(|x| x.1).collect::<Vec<_>>(),
        ["add_to_page_cache_locked", "filemap_add_folio"]
    );
    // do_sync_read is vfs_read when the file has read_iter and no read.
    let p = build("probe vfs.do_sync_read { print(bytes_to_read) }");
    let v = vars(&p);
    assert!(v.contains(&"@cast(file)->f_op->read".to_string()), "{v:?}");
    assert!(
        v.contains(&"@cast(file)->f_op->read_iter".to_string()),
        "{v:?}"
    );
}

#[test]
fn vfs_variables_are_computed_only_when_read() {
    let p = build("probe vfs.write { print(bytes_to_write) }");
    assert_eq!(vars(&p), ["$count"]);
    // pathname: the mount-tree walk (struct mount checked against the
    // vfsmount it embeds), dentry names; devname: the superblock's bdev.
    let p = build("probe vfs.write { printf(\"%s %s\\n\", pathname, devname) }");
    let v = vars(&p);
    for want in [
        "@cast(file)->f_path->mnt",
        "@cast(file)->f_path->dentry",
        "@cast(mount)->mnt->mnt_root",
        "@cast(mount)->mnt_parent",
        "@cast(mount)->mnt_mountpoint",
        "@cast(dentry)->d_parent",
        "@cast(dentry)->d_name->name",
        "@cast(inode)->i_sb->s_bdev",
    ] {
        assert!(v.contains(&want.to_string()), "{want} in {v:?}");
    }
    assert!(!v.iter().any(|x| x.contains("i_ino")), "{v:?}");
}

#[test]
fn vfs_wildcards_cover_every_alias() {
    // buildok vfs-all-probes.stp.
    let p = build("probe vfs.*, vfs.*.*, generic.*.*, generic.*.*.* {}");
    let d = displays(&p);
    for want in [
        "kernel.function(\"generic_file_llseek\")",
        "kernel.function(\"generic_file_llseek\").return",
        "kernel.function(\"iter_file_splice_write\")",
        "kernel.function(\"mpage_writepages\").return!",
        "kernel.function(\"__mpage_writepages\").return",
        "kernel.function(\"vfs_open\")?",
        "kernel.function(\"filemap_remove_folio\").return?",
    ] {
        assert!(d.contains(&want.to_string()), "{want} in {d:?}");
    }
    let p = build("probe _vfs.* {}");
    assert!(displays(&p).contains(&"kernel.function(\"__block_write_begin_int\")".to_string()));
}

#[test]
fn block_points_are_tracepoints_where_stap_uses_functions() {
    let p = build(
        "probe ioblock.request { printf(\"%s %d\\n\", devname, size) }\n\
         probe ioblock.end { print(bytes_done) }",
    );
    assert_eq!(
        displays(&p),
        [
            "kernel.trace(\"block_bio_queue\")",
            "kernel.function(\"bio_endio\")"
        ]
    );
    let v = vars(&p);
    assert!(v.contains(&"$bio->bi_iter->bi_size".to_string()), "{v:?}");
    // devname: bdevname of bi_bdev (5.12+), disk_name of bi_disk before.
    assert!(v.contains(&"@cast(bio)->bi_bdev".to_string()), "{v:?}");
    assert!(v.contains(&"@cast(bio)->bi_disk".to_string()), "{v:?}");
    // size only: no bi_opf, no bi_flags (the helpers' own names never keep
    // an alias variable).
    let p = build("probe ioblock.request { print(size) }");
    assert_eq!(vars(&p), ["$bio->bi_iter->bi_size"]);
    // bdev_contains: bd_contains (5.10) or the disk's part0.
    let p = build("probe ioblock_trace.request { print(bdev_contains) }");
    let v = vars(&p);
    assert!(
        v.contains(&"@cast(block_device)->bd_contains".to_string()),
        "{v:?}"
    );
    assert!(
        v.contains(&"@cast(block_device)->bd_disk->part0".to_string()),
        "{v:?}"
    );
}

#[test]
fn ioscheduler_wildcards_drop_optional_points_that_do_not_fit() {
    // buildok ioscheduler-all-probes.stp: `.return` after an alias on a
    // tracepoint does not fit; optional, so it is dropped, as in stap.
    let p = build("probe ioscheduler.* ?, ioscheduler.*.return ? {}");
    let d = displays(&p);
    assert!(
        d.contains(&"kernel.function(\"blk_peek_request\").return?".to_string()),
        "{d:?}"
    );
    assert!(
        !d.iter()
            .any(|x| x.starts_with("kernel.trace") && x.contains(".return")),
        "{d:?}"
    );
    let e = common::fail("probe kernel.trace(\"block_rq_insert\").return { }");
    assert!(e.contains("probe point mismatch"), "{e}");
    let p = build("probe ioscheduler_trace.* {}");
    let d = displays(&p);
    for want in [
        "kernel.trace(\"block_rq_complete\")",
        "kernel.trace(\"block_rq_issue\")",
        "kernel.trace(\"block_rq_requeue\")",
        "kernel.trace(\"block_rq_abort\")?",
        "kernel.trace(\"block_plug\")",
        "kernel.trace(\"block_unplug\")",
    ] {
        assert!(d.contains(&want.to_string()), "{want} in {d:?}");
    }
    // The request's disk: rq_disk before 5.19, q->disk after.
    let p = build("probe ioscheduler_trace.elv_issue_request { print(disk_major) }");
    let v = vars(&p);
    assert!(v.contains(&"@cast(request)->rq_disk".to_string()), "{v:?}");
    assert!(v.contains(&"@cast(request)->q->disk".to_string()), "{v:?}");
}

#[test]
fn tty_and_scsi_points() {
    let p = build("probe tty.resize { printf(\"%d %d\\n\", new_row, old_col) }");
    assert_eq!(displays(&p), ["kernel.function(\"tty_do_resize\")"]);
    let v = vars(&p);
    assert!(v.contains(&"$ws->ws_row".to_string()), "{v:?}");
    assert!(v.contains(&"$tty->winsize->ws_col".to_string()), "{v:?}");
    let p = build("probe tty.* {}");
    assert_eq!(p.probes.len(), 12, "{:?}", displays(&p));
    // Every scsi point is optional; $cmd is asked about with @defined so
    // a kernel whose SCSI core is a module still loads the script.
    let p = build("probe scsi.iodispatching { print(host_no) }");
    assert_eq!(displays(&p), ["kernel.function(\"scsi_dispatch_cmd\")?"]);
    let p = build("probe scsi.* {}");
    assert!(displays(&p).iter().all(|d| d.ends_with('?')));
}

#[test]
fn helper_functions_give_stap_s_strings() {
    let out = run_begin(
        "probe ioblock.request { }\n\
         probe begin { printf(\"%s %s %d %d\\n\", bio_rw_str(0), bio_rw_str(1), \
         bio_rw_num(3), BIO_WRITE) }",
    );
    assert_eq!(out, "R W 1 1\n");
    let out = run_begin(
        "probe scsi.set_state { }\n\
         probe begin { printf(\"%s %s %s %s\\n\", describe_device_state(2), \
         describe_device_state(42), describe_data_direction(1), describe_data_direction(3)) }",
    );
    assert_eq!(out, "RUNNING [INVALID] TO_DEVICE NONE\n");
    let out = run_begin(
        "probe generic.fop.llseek { }\n\
         probe begin { printf(\"%s %s %s\\n\", _seek_whence_str(0), _seek_whence_str(4), \
         _seek_whence_str(9)) }",
    );
    // stap's _stp_lookup_str prints an unknown value in hex.
    assert_eq!(out, "SEEK_SET SEEK_HOLE 0x9\n");
}

#[test]
fn choose_defined_asks_about_its_alternative_too() {
    // The loader refuses a read of a member the kernel lacks unless the
    // program asks @defined about it: @choose_defined(new, old) asks about
    // both, so a kernel with only `new` loads (deviceseeks.stp's
    // `$bio->bi_bdev->...` / `$bio->bi_disk->...`).
    let p = build(
        "probe kernel.trace(\"block_bio_queue\") { \
         print(@choose_defined($bio->bi_bdev->bd_disk, $bio->bi_disk)) }",
    );
    let asked = |field: &str| {
        p.target_vars.iter().any(|t| {
            t.fields.first().map(String::as_str) == Some(field)
                && t.relocs
                    .iter()
                    .any(|r| matches!(r.kind, vm_spec::program::RelocKind::Exists))
        })
    };
    assert!(asked("bi_bdev") && asked("bi_disk"), "{:?}", vars(&p));
    // A constant alternative stays as it is.
    let p = build("probe kernel.function(\"vfs_read\") { print(@choose_defined($nope, 7)) }");
    assert_eq!(vars(&p), ["$nope", "$nope"]);
}
