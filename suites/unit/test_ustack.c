/*
 * test_ustack.c — ustack_resolve on objects this process maps itself:
 * small ELF files written here (note_elfw.h) and mapped executable, so a
 * frame's object and build ID come from bytes the test chose.  A build ID
 * is printed whole or not at all: the longest one taken is 64 bytes (128
 * hex digits), a longer note gives none (never a cut one).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "unit.h"
#include "note_elfw.h"
#include "ustack.h"

#define OBJ_SIZE 0x2000

/* ET_DYN, one r-x PT_LOAD over the whole file, a note of type @type and
 * @idlen bytes (0x11, 0x12, ...) in .note.gnu.build-id at 0x1000.  Its
 * path in @path. */
static int write_obj(char *path, size_t idlen, uint32_t type)
{
	struct nw_buf nb = { .nb_n = 0 };
	unsigned char id[80], *img = NULL;
	struct nw_elf e;
	size_t n;
	int fd;

	for (size_t i = 0; i < sizeof(id); i++)
		id[i] = (unsigned char)(0x11 + i);
	nw_note_raw(&nb, "GNU", type, id, (uint32_t)idlen, idlen);
	memset(&e, 0, sizeof(e));
	e.nw_type = ET_DYN;
	e.nw_size = OBJ_SIZE;
	e.nw_nph = 1;
	e.nw_ph[0] = nw_load(PF_R | PF_X, 0, 0, OBJ_SIZE, OBJ_SIZE);
	nw_add_sec(&e, ".note.gnu.build-id", SHT_NOTE, SHF_ALLOC, 0x1000, 0x1000,
		   nb.nb_b, nb.nb_n);
	n = nw_image(&e, &img);
	fd = mkstemp(path);
	if (fd < 0 || !n || write(fd, img, n) != (ssize_t)n) {
		free(img);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	free(img);
	return fd;
}

/* The build ID ustack_resolve gives for an address in the object with an
 * @idlen-byte note of @type, mapped here: its hex into @out, "(none)" or
 * "(error)". */
static void resolved_note(size_t idlen, uint32_t type, char *out, size_t len)
{
	char path[] = "/tmp/pc-ustack.XXXXXX";
	struct ustack_syms *z = NULL;
	struct ustack_frame f = { 0 };
	int fd = write_obj(path, idlen, type);
	void *base;

	snprintf(out, len, "(error)");
	if (fd < 0)
		return;
	base = mmap(NULL, OBJ_SIZE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base != MAP_FAILED && !ustack_syms_new(&z) &&
	    !ustack_resolve(z, getpid(), (uint64_t)(uintptr_t)base + 0x100, &f) &&
	    f.uf_obj && !strcmp(f.uf_obj, path))
		snprintf(out, len, "%s", f.uf_build_id ? f.uf_build_id : "(none)");
	ustack_syms_free(z);
	if (base != MAP_FAILED)
		munmap(base, OBJ_SIZE);
	unlink(path);
}

static void resolved_id(size_t idlen, char *out, size_t len)
{
	resolved_note(idlen, NT_GNU_BUILD_ID, out, len);
}

/* The hex of @n bytes 0x11, 0x12, ... */
static void hex_of(size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", (unsigned)(0x11 + i));
}

int main(void)
{
	char got[200], want[200];

	resolved_id(20, got, sizeof(got));
	hex_of(20, want);
	UNIT_EQ_STR(got, want, "a 20-byte build ID (SHA-1): its 40 hex digits, the frame in the object");
	resolved_id(64, got, sizeof(got));
	hex_of(64, want);
	UNIT_EQ_STR(got, want, "a 64-byte build ID, the longest taken: whole");
	resolved_id(65, got, sizeof(got));
	UNIT_EQ_STR(got, "(none)", "a 65-byte build ID: none, never a cut one");
	resolved_id(1, got, sizeof(got));
	UNIT_EQ_STR(got, "11", "a 1-byte build ID: its 2 hex digits");
	resolved_id(0, got, sizeof(got));
	UNIT_EQ_STR(got, "(none)", "an empty build ID: none");
	resolved_note(20, NT_GNU_ABI_TAG, got, sizeof(got));
	UNIT_EQ_STR(got, "(none)", "a note of another type in the section: no build ID");
	return unit_done();
}
