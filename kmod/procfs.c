// SPDX-License-Identifier: GPL-2.0
/*
 * The probes user space fires through files and the session fd: stap's
 * procfs("name").read / .write (files in /proc/stapvm/<pid>/, abi.h:
 * procfs files) and input.char / input.line (STP_IOC_INPUT, fed by the
 * consumer from its standard input). Each runs its handler through
 * stp_probe_run_value() (probes.c), so with the same VM, accounting and
 * per-CPU nesting guard as every probe, with $value in the environment
 * (stp_env.h: struct stp_kvalue).
 *
 * Memory: everything is allocated at LOAD (stp_procfs_init): one buffer
 * of the file's size per file, the input chunk and the line. START
 * creates the directory and the files (stp_procfs_arm), disarming removes
 * them (stp_procfs_disarm), the session's destruction frees the rest.
 *
 * Locking: the session lock is never taken here, so STOP (which holds
 * it) can wait in proc_remove() for the file operations in flight. A
 * file's mutex serialises its operations (stap allows one open at a
 * time; another open waits for it, or fails with EAGAIN under O_NONBLOCK,
 * or with ENODEV once the file is going away); user copies happen under
 * it, never under the session lock or with preemption disabled. Input
 * has a mutex of its own. stp_procfs_names (a global mutex) guards the
 * list of directory names in use, so two sessions never register the
 * same one (proc_register() would warn).
 *
 * Teardown: stp_probes_disarm() clears the session's active flag first,
 * so no handler starts any more; stp_procfs_disarm() then wakes the
 * openers waiting, removes the directory (proc_remove() waits for every
 * operation in flight and releases the open files) and waits for an
 * INPUT handler in flight (synchronize_rcu(): handlers run with
 * preemption disabled).
 *
 * Left out: ownership of the files by the loader's user (stap's
 * proc_set_user; stapvm needs root to load), poll on the files.
 *
 * Contexts: all process context. The file operations and INPUT may sleep
 * (mutexes, user copies) outside the handler runs; init, arm, disarm and
 * free run under the session lock (LOAD, START, STOP, release, the
 * deadman's work).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/fs.h>
#include <linux/proc_fs.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <linux/rcupdate.h>

#include "session.h"
#include "compat.h"

#define STP_NO_PROBE	0xffffffffu

/* Write probes run on at most this many chunks per write(2) call. */
#define STP_PROCFS_WRITE_CHUNKS	64u

/* One file of the session's directory. */
struct stp_pfile {
	struct stp_session *sess;
	char name[STP_MAX_PROCFS_NAME + 1];
	u32 read_probe;		/* index into PROBES, or STP_NO_PROBE */
	u32 write_probe;
	umode_t mode;
	u32 size;		/* bytes of buf (the probe's maxsize) */
	char *buf;		/* the read content, or one written chunk */
	u32 count;		/* bytes of content in buf */
	bool needs_fill;	/* opened for reading: fill at the next read */
	bool open;		/* one open at a time */
	bool dying;		/* disarming: openers give up */
	struct mutex lock;	/* all of the above but dying */
	wait_queue_head_t waitq;	/* openers waiting for !open */
};

struct stp_procfs {
	struct list_head node;	/* on stp_procfs_dirs while registered */
	struct proc_dir_entry *dir;	/* NULL when not armed */
	char dirname[24];
	u32 nfiles;
	struct stp_pfile *files;
	/* input */
	u32 nchar, nline;
	u32 *char_probes;	/* nchar probe indexes */
	u32 *line_probes;	/* nline probe indexes */
	struct mutex in_lock;	/* the input state below */
	char *in_buf;		/* STP_INPUT_CHUNK bytes */
	char *line;		/* MAXSTRINGLEN - 1 bytes */
	u32 line_len;
	u32 line_cap;
};

static struct proc_dir_entry *stp_procfs_root;
static LIST_HEAD(stp_procfs_dirs);
static DEFINE_MUTEX(stp_procfs_names);

/* /proc/stapvm, at module load. */
int stp_procfs_module_init(void)
{
	stp_procfs_root = proc_mkdir("stapvm", NULL);
	return stp_procfs_root ? 0 : -ENOMEM;
}

void stp_procfs_module_exit(void)
{
	proc_remove(stp_procfs_root);
}

static bool stp_is_file_kind(u8 kind)
{
	return kind == STP_PROBE_PROCFS_READ || kind == STP_PROBE_PROCFS_WRITE;
}

/* The file named like probe i's, or NULL (LOAD time). */
static struct stp_pfile *stp_find_file(struct stp_procfs *pf,
				       const char *name)
{
	u32 i;

	for (i = 0; i < pf->nfiles; i++)
		if (!strcmp(pf->files[i].name, name))
			return &pf->files[i];
	return NULL;
}

void stp_procfs_free(struct stp_session *s)
{
	struct stp_procfs *pf = s->procfs;
	u32 i;

	if (!pf)
		return;
	for (i = 0; i < pf->nfiles; i++) {
		kvfree(pf->files[i].buf);
		mutex_destroy(&pf->files[i].lock);
	}
	kfree(pf->files);
	kfree(pf->char_probes);
	kfree(pf->line_probes);
	kfree(pf->in_buf);
	kfree(pf->line);
	mutex_destroy(&pf->in_lock);
	kfree(pf);
	s->procfs = NULL;
}

/* Sets up file f for probe i (a verified descriptor: abi.h). */
static int stp_file_add(struct stp_procfs *pf, struct stp_session *s, u32 i,
			const char *name)
{
	const struct stp_probe_desc *pd = &s->prog.probes[i];
	struct stp_pfile *f = stp_find_file(pf, name);

	if (!f) {
		if (pf->nfiles >= STP_MAX_PROCFS_FILES)
			return -EINVAL;	/* verify.c refused it already */
		f = &pf->files[pf->nfiles++];
		f->sess = s;
		strscpy(f->name, name, sizeof(f->name));
		f->read_probe = STP_NO_PROBE;
		f->write_probe = STP_NO_PROBE;
		f->mode = pd->offset & STP_PROCFS_MODE_MASK;
		f->size = min_t(u32, pd->maxactive, STP_MAX_PROCFS_SIZE);
		mutex_init(&f->lock);
		init_waitqueue_head(&f->waitq);
		f->buf = kvzalloc(max_t(u32, f->size, 1), GFP_KERNEL_ACCOUNT);
		if (!f->buf)
			return -ENOMEM;
	}
	if (pd->kind == STP_PROBE_PROCFS_READ)
		f->read_probe = i;
	else
		f->write_probe = i;
	return 0;
}

/*
 * LOAD: the files, their buffers and the input state of the session's
 * procfs and input probes (none: s->procfs stays NULL). Verified
 * descriptors (verify.c: names, sizes, modes, one probe of each kind per
 * file); on failure the caller frees with stp_procfs_free().
 */
int stp_procfs_init(struct stp_session *s)
{
	const struct stp_prog *prog = &s->prog;
	u32 n = prog->nprobes, nfile = 0, nchar = 0, nline = 0, i;
	char name[STP_MAX_PROCFS_NAME + 1];
	struct stp_procfs *pf;
	int err;

	for (i = 0; i < n; i++) {
		u8 kind = prog->probes[i].kind;

		nfile += stp_is_file_kind(kind);
		nchar += kind == STP_PROBE_INPUT_CHAR;
		nline += kind == STP_PROBE_INPUT_LINE;
	}
	if (!nfile && !nchar && !nline)
		return 0;
	pf = kzalloc(sizeof(*pf), GFP_KERNEL_ACCOUNT);
	if (!pf)
		return -ENOMEM;
	s->procfs = pf;
	INIT_LIST_HEAD(&pf->node);
	mutex_init(&pf->in_lock);
	pf->files = kcalloc(max_t(u32, nfile, 1), sizeof(*pf->files),
			    GFP_KERNEL_ACCOUNT);
	pf->char_probes = kcalloc(max_t(u32, nchar, 1), sizeof(u32),
				  GFP_KERNEL_ACCOUNT);
	pf->line_probes = kcalloc(max_t(u32, nline, 1), sizeof(u32),
				  GFP_KERNEL_ACCOUNT);
	if (!pf->files || !pf->char_probes || !pf->line_probes)
		return -ENOMEM;
	if (nchar || nline) {
		pf->line_cap = prog->limits[STP_LIM_MAXSTRINGLEN] - 1;
		pf->in_buf = kmalloc(STP_INPUT_CHUNK, GFP_KERNEL_ACCOUNT);
		pf->line = kmalloc(max_t(u32, pf->line_cap, 1),
				   GFP_KERNEL_ACCOUNT);
		if (!pf->in_buf || !pf->line)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const struct stp_probe_desc *pd = &prog->probes[i];
		const struct stp_str_desc *sd;

		if (pd->kind == STP_PROBE_INPUT_CHAR)
			pf->char_probes[pf->nchar++] = i;
		if (pd->kind == STP_PROBE_INPUT_LINE)
			pf->line_probes[pf->nline++] = i;
		if (!stp_is_file_kind(pd->kind))
			continue;
		sd = &prog->strs[pd->symbol];
		if (!sd->len || sd->len > STP_MAX_PROCFS_NAME)
			return -EINVAL;	/* verify.c refused it already */
		memcpy(name, prog->strdata + sd->off, sd->len);
		name[sd->len] = '\0';
		err = stp_file_add(pf, s, i, name);
		if (err)
			return err;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* File operations                                                     */

static int stp_pfile_open(struct inode *inode, struct file *file)
{
	struct stp_pfile *f = pde_data(inode);
	int err;

	mutex_lock(&f->lock);
	/* Ends when the file is free, on a signal, or when it goes away. */
	while (f->open) {
		mutex_unlock(&f->lock);
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		err = wait_event_interruptible(f->waitq,
					       !READ_ONCE(f->open) ||
					       READ_ONCE(f->dying));
		if (err)
			return err;
		if (READ_ONCE(f->dying))
			return -ENODEV;
		mutex_lock(&f->lock);
	}
	f->open = true;
	if ((file->f_mode & FMODE_READ) && f->read_probe != STP_NO_PROBE) {
		f->count = 0;
		f->needs_fill = true;
	}
	file->private_data = f;
	mutex_unlock(&f->lock);
	return 0;
}

static int stp_pfile_release(struct inode *inode, struct file *file)
{
	struct stp_pfile *f = file->private_data;

	mutex_lock(&f->lock);
	f->open = false;
	mutex_unlock(&f->lock);
	wake_up(&f->waitq);
	return 0;
}

static ssize_t stp_pfile_read(struct file *file, char __user *ubuf,
			      size_t n, loff_t *ppos)
{
	struct stp_pfile *f = file->private_data;
	ssize_t ret;

	if (f->read_probe == STP_NO_PROBE)
		return -EIO;	/* root may open a write-only file to read */
	mutex_lock(&f->lock);
	if (f->needs_fill) {
		struct stp_kvalue v = { .buf = f->buf, .cap = f->size };

		f->needs_fill = false;
		stp_probe_run_value(f->sess, f->read_probe, &v);
		f->count = min(v.len, f->size);
	}
	ret = simple_read_from_buffer(ubuf, n, ppos, f->buf, f->count);
	mutex_unlock(&f->lock);
	return ret;
}

static ssize_t stp_pfile_write(struct file *file, const char __user *ubuf,
			       size_t n, loff_t *ppos)
{
	struct stp_pfile *f = file->private_data;
	u32 chunk = min(f->size,
			f->sess->prog.limits[STP_LIM_MAXSTRINGLEN] - 1);
	size_t done = 0;
	u32 i;

	if (f->write_probe == STP_NO_PROBE)
		return -EIO;	/* root may open a read-only file to write */
	mutex_lock(&f->lock);
	f->needs_fill = false;	/* buf holds what was written now */
	f->count = 0;
	for (i = 0; i < STP_PROCFS_WRITE_CHUNKS && done < n; i++) {
		struct stp_kvalue v;
		u32 len = min_t(size_t, n - done, chunk);

		if (copy_from_user(f->buf, ubuf + done, len))
			break;
		v.buf = f->buf;
		v.len = len;
		v.cap = len;
		stp_probe_run_value(f->sess, f->write_probe, &v);
		done += len;
		cond_resched();
	}
	mutex_unlock(&f->lock);
	if (!done && n)
		return -EFAULT;
	*ppos += done;
	return done;
}

static const struct proc_ops stp_pfile_ops = {
	.proc_open = stp_pfile_open,
	.proc_release = stp_pfile_release,
	.proc_read = stp_pfile_read,
	.proc_write = stp_pfile_write,
	.proc_lseek = default_llseek,
};

/* ------------------------------------------------------------------ */
/* Arming                                                              */

/*
 * START, after the other probes are armed: /proc/stapvm/<pid>/ and the
 * files. Fails with EEXIST when another session has that directory; on
 * any failure nothing of it is left and *failed_probe names the first
 * procfs probe.
 */
int stp_procfs_arm(struct stp_session *s, u32 *failed_probe)
{
	struct stp_procfs *pf = s->procfs, *o;
	struct proc_dir_entry *dir;
	int err = 0;
	u32 i;

	if (!pf || !pf->nfiles)
		return 0;
	snprintf(pf->dirname, sizeof(pf->dirname), "%d",
		 task_tgid_vnr(current));
	mutex_lock(&stp_procfs_names);
	list_for_each_entry(o, &stp_procfs_dirs, node)
		if (!strcmp(o->dirname, pf->dirname))
			err = -EEXIST;
	dir = err ? NULL : proc_mkdir(pf->dirname, stp_procfs_root);
	if (dir)
		list_add(&pf->node, &stp_procfs_dirs);
	mutex_unlock(&stp_procfs_names);
	if (!err && !dir)
		err = -ENOMEM;
	for (i = 0; !err && i < pf->nfiles; i++) {
		struct stp_pfile *f = &pf->files[i];

		WRITE_ONCE(f->dying, false);
		if (!proc_create_data(f->name, f->mode, dir, &stp_pfile_ops, f))
			err = -ENOMEM;
	}
	if (dir)
		pf->dir = dir;
	if (err) {
		pr_notice("procfs files of /proc/stapvm/%s: %d\n", pf->dirname,
			  err);
		stp_procfs_disarm(s);
		*failed_probe = pf->files[0].read_probe != STP_NO_PROBE ?
				pf->files[0].read_probe :
				pf->files[0].write_probe;
	}
	return err;
}

/*
 * Remove the directory (the session's active flag is already clear):
 * wake the openers waiting, then proc_remove(), which waits for the
 * operations in flight and releases the files still open; then wait for
 * an INPUT handler in flight. Idempotent.
 */
void stp_procfs_disarm(struct stp_session *s)
{
	struct stp_procfs *pf = s->procfs;
	u32 i;

	if (!pf)
		return;
	for (i = 0; i < pf->nfiles; i++) {
		WRITE_ONCE(pf->files[i].dying, true);
		wake_up_all(&pf->files[i].waitq);
	}
	if (pf->dir) {
		proc_remove(pf->dir);
		pf->dir = NULL;
		mutex_lock(&stp_procfs_names);
		list_del_init(&pf->node);
		mutex_unlock(&stp_procfs_names);
	}
	/* An INPUT (or file) handler checked active with preemption off. */
	synchronize_rcu();
}

/* The directory's name, for the START log; NULL without one. */
const char *stp_procfs_dirname(struct stp_session *s)
{
	return s->procfs && s->procfs->dir ? s->procfs->dirname : NULL;
}

/* ------------------------------------------------------------------ */
/* Input                                                               */

/*
 * One input byte: every input.char probe with it, then the line: kept
 * (up to line_cap bytes; the rest of a longer line is dropped), and on
 * '\n' every input.line probe with it. false when the session runs no
 * handlers any more. Under in_lock.
 */
static bool stp_input_byte(struct stp_session *s, struct stp_procfs *pf,
			   char c)
{
	struct stp_kvalue v = { .buf = &c, .len = 1, .cap = 1 };
	bool ran = true;
	u32 i;

	for (i = 0; i < pf->nchar && ran; i++)
		ran = stp_probe_run_value(s, pf->char_probes[i], &v);
	if (!pf->nline)
		return ran;
	if (pf->line_len < pf->line_cap)
		pf->line[pf->line_len++] = c;
	if (c != '\n')
		return ran;
	v.buf = pf->line;
	v.len = pf->line_len;
	v.cap = pf->line_len;
	for (i = 0; i < pf->nline && ran; i++)
		ran = stp_probe_run_value(s, pf->line_probes[i], &v);
	pf->line_len = 0;
	return ran;
}

/* STP_IOC_INPUT (abi.h), without the session lock. */
long stp_procfs_input(struct stp_session *s, void __user *uarg)
{
	struct stp_procfs *pf = s->procfs;
	struct stp_input_args a;
	u32 n, i;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags)
		return -EINVAL;
	if (!pf || (!pf->nchar && !pf->nline) || !READ_ONCE(s->active))
		return 0;
	n = min(a.len, STP_INPUT_CHUNK);
	if (mutex_lock_interruptible(&pf->in_lock))
		return -EINTR;
	if (copy_from_user(pf->in_buf, u64_to_user_ptr(a.buf), n)) {
		mutex_unlock(&pf->in_lock);
		return -EFAULT;
	}
	for (i = 0; i < n; i++) {
		if (!stp_input_byte(s, pf, pf->in_buf[i]))
			break;
		if (!(i & 63))
			cond_resched();
	}
	mutex_unlock(&pf->in_lock);
	return i;
}
