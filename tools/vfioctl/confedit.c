// SPDX-License-Identifier: GPL-2.0-only
/*
 * devices.conf editing: temporary file in the same directory (so that
 * rename() is atomic), the old file's mode kept, the result validated
 * with the parser that apply uses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "confedit.h"

/* The line @line names the PCI address @addr (normalised) in its first word. */
static bool line_names(const char *line, const char *addr)
{
	char word[64], norm[PCI_ADDR_SIZE];
	size_t n;

	/* The byte-order mark the parser allows at the start of the file. */
	if (!strncmp(line, "\xef\xbb\xbf", 3))
		line += 3;
	n = strspn(line, " \t");

	if (sscanf(line + n, "%63[^ \t\r\n#]", word) != 1)
		return false;
	return parse_pci_addr(word, norm) && !strcmp(norm, addr);
}

int conf_edit_prepare(struct conf_edit *ed, const char *addr,
		      const char *opts)
{
	char line[CONF_MAX_LINE + 2];
	bool done = false;
	struct conf c;
	struct stat st;
	mode_t mode = 0644;
	FILE *in, *out;
	int fd, err = 0;

	ed->tmp[0] = '\0';
	in = fopen(ed->path, "re");
	if (!in && errno != ENOENT)
		return -errno;
	if (in && !fstat(fileno(in), &st))
		mode = st.st_mode & 07777;
	if ((size_t)snprintf(ed->tmp, sizeof(ed->tmp), "%s.vfioctl.XXXXXX",
			     ed->path) >= sizeof(ed->tmp)) {
		ed->tmp[0] = '\0';
		err = -ENAMETOOLONG;
		goto close_in;
	}
	fd = mkstemp(ed->tmp);
	if (fd < 0) {
		err = -errno;
		ed->tmp[0] = '\0';
		goto close_in;
	}
	out = fdopen(fd, "w");
	if (!out) {
		err = -errno;
		close(fd);
		goto fail;
	}
	while (in && fgets(line, sizeof(line), in)) {
		if (!line_names(line, addr)) {
			fputs(line, out);
			continue;
		}
		if (opts && !done)
			fprintf(out, "%s%s%s\n", addr, opts[0] ? "\t" : "",
				opts);
		done = true;
	}
	if (in && ferror(in))
		err = -EIO;
	if (opts && !done)
		fprintf(out, "%s%s%s\n", addr, opts[0] ? "\t" : "", opts);
	if (fflush(out) || fchmod(fileno(out), mode) || fsync(fileno(out)))
		err = err ? err : -errno;
	if (fclose(out) && !err)
		err = -errno;
	if (err)
		goto fail;
	/* What apply would refuse is never installed. */
	err = conf_load(&c, ed->tmp, stderr);
	if (!err && c.errors)
		err = -EINVAL;
	conf_free(&c);
	if (err)
		goto fail;
	if (in)
		fclose(in);
	return 0;
fail:
	conf_edit_abort(ed);
close_in:
	if (in)
		fclose(in);
	return err;
}

int conf_edit_commit(struct conf_edit *ed)
{
	int err = 0;

	if (rename(ed->tmp, ed->path))
		err = -errno;
	if (err)
		conf_edit_abort(ed);
	ed->tmp[0] = '\0';
	return err;
}

void conf_edit_abort(struct conf_edit *ed)
{
	if (ed->tmp[0])
		unlink(ed->tmp);
	ed->tmp[0] = '\0';
}
