/*
 * ustack.c — user stack frames symbolized (see ustack.h).
 *
 * Objects are kept by (device, inode), so the processes of a --follow
 * tree and the threads of one process share one reading of each file;
 * processes are kept by pid with the load bias of each object they map.
 * Both live until ustack_syms_free: a trace is one session.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "elf.h"
#include "procmaps.h"
#include "symbols.h"
#include "ustack.h"

struct us_obj {
	char    *uo_path;       /* as the first process to map it names it */
	unsigned long uo_dev, uo_ino;
	struct elf_obj *uo_eo;  /* NULL: not readable, no frame resolves */
	struct func_syms uo_syms;
	char    *uo_build_id;   /* hex, NULL: none */
};

struct us_map {
	uint64_t um_bias;
	struct us_obj *um_obj;
};

#define US_MISSES 16

struct us_proc {
	pid_t    up_pid;
	struct us_map *up_v;
	size_t   up_n;
	/* Addresses no object held even after a fresh read ([uprobes]'s
	 * trampoline, [vdso], garbage of a stack without frame pointers):
	 * not worth reading every object of the process again for. */
	uint64_t up_miss[US_MISSES];
	unsigned up_nmiss;
};

struct ustack_syms {
	struct us_obj **uz_obj;
	size_t   uz_nobj;
	struct us_proc *uz_proc;
	size_t   uz_nproc;
};

int ustack_syms_new(struct ustack_syms **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void obj_free(struct us_obj *o)
{
	func_syms_free(&o->uo_syms);
	elf_obj_close(o->uo_eo);
	free(o->uo_build_id);
	free(o->uo_path);
	free(o);
}

void ustack_syms_free(struct ustack_syms *z)
{
	if (!z)
		return;
	for (size_t i = 0; i < z->uz_nobj; i++)
		obj_free(z->uz_obj[i]);
	for (size_t i = 0; i < z->uz_nproc; i++)
		free(z->uz_proc[i].up_v);
	free(z->uz_obj);
	free(z->uz_proc);
	free(z);
}

/* NT_GNU_BUILD_ID's bytes in hex into *out, NULL if the object has none;
 * 0 or -ENOMEM (a frame must not say "no build ID" for want of memory). */
static int build_id_hex(struct elf_obj *eo, char **out)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	GElf_Nhdr nh;
	Elf_Data *d;
	size_t name_off, desc_off;
	char *hex;

	if (elf_obj_find_section(eo, ".note.gnu.build-id", &sh, &scn) ||
	    !(d = elf_getdata(scn, NULL)) ||
	    !gelf_getnote(d, 0, &nh, &name_off, &desc_off) ||
	    nh.n_type != NT_GNU_BUILD_ID || !nh.n_descsz || nh.n_descsz > 64)
		return *out = NULL, 0;
	hex = malloc(2 * nh.n_descsz + 1);
	if (!hex)
		return -ENOMEM;
	for (size_t i = 0; i < nh.n_descsz; i++)
		sprintf(hex + 2 * i, "%02x",
			((const unsigned char *)d->d_buf)[desc_off + i]);
	*out = hex;
	return 0;
}

/* The object @po names, read once per file. */
static int obj_get(struct ustack_syms *z, const struct pm_object *po,
		   struct us_obj **out)
{
	struct us_obj *o, **v;
	int err;

	for (size_t i = 0; i < z->uz_nobj; i++)
		if (z->uz_obj[i]->uo_dev == po->po_dev &&
		    z->uz_obj[i]->uo_ino == po->po_ino)
			return *out = z->uz_obj[i], 0;
	v = realloc(z->uz_obj, (z->uz_nobj + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	z->uz_obj = v;
	o = calloc(1, sizeof(*o));
	if (!o || !(o->uo_path = strdup(po->po_path))) {
		free(o);
		return -ENOMEM;
	}
	o->uo_dev = po->po_dev;
	o->uo_ino = po->po_ino;
	/* Not ELF, or no symbol table: the object still names its frames.
	 * Out of memory: nothing is kept, so that a later frame reads it
	 * again instead of naming no function for good. */
	err = elf_obj_open(po->po_open_path, ELF_QUIET, &o->uo_eo);
	if (!err && (err = func_syms_read(o->uo_eo, &o->uo_syms)) != -ENOMEM)
		err = build_id_hex(o->uo_eo, &o->uo_build_id);   /* no symbols on -ENOEXEC */
	if (err == -ENOMEM) {
		obj_free(o);
		return err;
	}
	z->uz_obj[z->uz_nobj++] = o;
	*out = o;
	return 0;
}

/* (Re)read what @up's process maps now. */
static int proc_read(struct ustack_syms *z, struct us_proc *up)
{
	struct pm_objects objs = { 0 };
	struct us_map *v;
	size_t n;
	int err = procmaps_read(up->up_pid, PM_QUIET, &objs);

	if (err)
		return err;
	n = objs.po_n;
	/* An exiting process (a zombie's maps are empty): what was read
	 * before stays, its frames can still be named. */
	if (!n && up->up_n) {
		procmaps_free(&objs);
		return -ESRCH;
	}
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		procmaps_free(&objs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !err; i++) {
		v[i].um_bias = objs.po_v[i].po_bias;
		err = obj_get(z, &objs.po_v[i], &v[i].um_obj);
	}
	procmaps_free(&objs);
	if (err) {
		free(v);
		return err;
	}
	free(up->up_v);
	up->up_v = v;
	up->up_n = n;
	return 0;
}

static struct us_proc *proc_find(struct ustack_syms *z, pid_t pid)
{
	for (size_t i = 0; i < z->uz_nproc; i++)
		if (z->uz_proc[i].up_pid == pid)
			return &z->uz_proc[i];
	return NULL;
}

/* A new process, read now: -ESRCH if it is gone (nothing kept). */
static int proc_add(struct ustack_syms *z, pid_t pid, struct us_proc **out)
{
	struct us_proc *v, up = { .up_pid = pid };
	int err = proc_read(z, &up);

	if (err)
		return err;
	v = realloc(z->uz_proc, (z->uz_nproc + 1) * sizeof(*v));
	if (!v) {
		free(up.up_v);
		return -ENOMEM;
	}
	z->uz_proc = v;
	v[z->uz_nproc] = up;
	*out = &v[z->uz_nproc++];
	return 0;
}

static int in_exec_segment(const struct elf_obj *eo, uint64_t v)
{
	for (size_t i = 0; i < eo->eo_nphdr; i++) {
		const GElf_Phdr *ph = &eo->eo_phdrs[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    v >= ph->p_vaddr && v - ph->p_vaddr < ph->p_memsz)
			return 1;
	}
	return 0;
}

/* The first (by name) sized function holding @v, or NULL. */
static const struct func_sym *sym_find(const struct func_syms *fss, uint64_t v)
{
	const struct func_sym *hit = NULL;
	size_t lo = 0, hi = fss->fss_n;

	while (lo < hi) {       /* the first symbol above @v */
		size_t mid = lo + (hi - lo) / 2;

		if (fss->fss_v[mid].fs_addr <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Backwards: a larger function may hold @v past a smaller one
	 * nested in it (a local alias); at one address the first name. */
	while (lo-- > 0) {
		const struct func_sym *fs = &fss->fss_v[lo];

		if (hit && fs->fs_addr != hit->fs_addr)
			break;
		if (fs->fs_size && v - fs->fs_addr < fs->fs_size)
			hit = fs;
	}
	return hit;
}

static int frame_fill(const struct us_proc *up, uint64_t addr,
		      struct ustack_frame *f)
{
	for (size_t i = 0; i < up->up_n; i++) {
		const struct us_obj *o = up->up_v[i].um_obj;
		uint64_t v = addr - up->up_v[i].um_bias;
		const struct func_sym *fs;

		if (!o->uo_eo || !in_exec_segment(o->uo_eo, v))
			continue;
		f->uf_obj = o->uo_path;
		f->uf_build_id = o->uo_build_id;
		fs = sym_find(&o->uo_syms, v);
		if (fs) {
			f->uf_sym = fs->fs_name;
			f->uf_off = v - fs->fs_addr;
		}
		return 1;
	}
	return 0;
}

int ustack_syms_note(struct ustack_syms *z, pid_t pid)
{
	struct us_proc *up = proc_find(z, pid);

	return up ? proc_read(z, up) : proc_add(z, pid, &up);
}

int ustack_resolve(struct ustack_syms *z, pid_t pid, uint64_t addr,
		   struct ustack_frame *f)
{
	struct us_proc *up = proc_find(z, pid);
	int err;

	memset(f, 0, sizeof(*f));
	f->uf_addr = addr;
	if (!up) {
		err = proc_add(z, pid, &up);
		return err ? err : (frame_fill(up, addr, f), 0);
	}
	if (frame_fill(up, addr, f))
		return 0;
	for (unsigned i = 0; i < up->up_nmiss && i < US_MISSES; i++)
		if (up->up_miss[i] == addr)
			return 0;
	/* Mapped since it was read, or nothing maps it: once more, and a
	 * process gone by now keeps what was read. */
	err = proc_read(z, up);
	if (err && err != -ESRCH)
		return err;
	if (err || !frame_fill(up, addr, f))
		up->up_miss[up->up_nmiss++ % US_MISSES] = addr;
	return 0;
}
