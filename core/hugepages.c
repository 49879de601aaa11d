#include "hugepages.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "restore.h"

void ft_folio_file(char *out, size_t len, size_t kb, const char *name)
{
	if (kb)
		snprintf(out, len, FT_THP_DIR "/hugepages-%zukB/%s", kb, name);
	else
		snprintf(out, len, FT_THP_DIR "/%s", name);
}

void ft_hugetlb_file(char *out, size_t len, size_t kb, const char *name)
{
	snprintf(out, len, FT_HUGETLB_DIR "/hugepages-%zukB/%s", kb, name);
}

static int ascending(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* The N of every hugepages-NkB entry in dir that holds the file `needs`. */
static int list_sizes(const char *dir, const char *needs, size_t kb[FT_SIZES_MAX], size_t *n)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno;
	*n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && *n < FT_SIZES_MAX) {
		size_t size;
		char tail[4], path[512];
		if (sscanf(de->d_name, "hugepages-%zu%3s", &size, tail) != 2 ||
		    strcmp(tail, "kB") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s/%s", dir, de->d_name, needs);
		if (access(path, F_OK) == 0)
			kb[(*n)++] = size;
	}
	closedir(d);
	qsort(kb, *n, sizeof *kb, ascending);
	return 0;
}

int ft_folio_sizes(size_t kb[FT_SIZES_MAX], size_t *n)
{
	return list_sizes(FT_THP_DIR, "enabled", kb, n);
}

int ft_hugetlb_sizes(size_t kb[FT_SIZES_MAX], size_t *n)
{
	return list_sizes(FT_HUGETLB_DIR, "nr_hugepages", kb, n);
}

int ft_folio_enabled(size_t kb, char *value, size_t len)
{
	char path[FT_SETTING_PATH];
	ft_folio_file(path, sizeof path, kb, "enabled");
	return ft_setting_read(path, value, len);
}

static int read_integer(const char *path, int64_t *v)
{
	char s[FT_SETTING_VALUE], *end;
	int err = ft_setting_read(path, s, sizeof s);
	if (err)
		return err;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return errno ? errno : EINVAL;
	*v = x;
	return 0;
}

int ft_folio_stats(size_t kb, ft_counter_fn fn, void *ctx)
{
	char dir[FT_SETTING_PATH];
	ft_folio_file(dir, sizeof dir, kb, "stats");
	DIR *d = opendir(dir);
	if (!d)
		return errno;
	int err = 0;
	struct dirent *de;
	while (!err && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[FT_SETTING_PATH + 256];
		int64_t v;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		err = read_integer(path, &v);
		if (!err)
			fn(de->d_name, v, ctx);
	}
	closedir(d);
	return err;
}

int ft_folio_set(size_t kb, const char *value, char *before, size_t len)
{
	char path[FT_SETTING_PATH];
	ft_folio_file(path, sizeof path, kb, "enabled");
	return ft_setting_write(path, value, before, len);
}

int ft_hugetlb_read(size_t kb, struct ft_hugetlb *h, const char **failed)
{
	static const char *const names[] = {
		"nr_hugepages", "free_hugepages", "resv_hugepages", "surplus_hugepages",
		"nr_overcommit_hugepages"
	};
	int64_t *fields[] = { &h->nr, &h->free, &h->resv, &h->surplus, &h->overcommit };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char path[FT_SETTING_PATH];
		ft_hugetlb_file(path, sizeof path, kb, names[i]);
		int err = read_integer(path, fields[i]);
		if (err) {
			*failed = names[i];
			return err;
		}
	}
	return 0;
}

int ft_hugetlb_set(size_t kb, int64_t nr, int64_t *before)
{
	char path[FT_SETTING_PATH], value[FT_SETTING_VALUE], was[FT_SETTING_VALUE] = "";
	ft_hugetlb_file(path, sizeof path, kb, "nr_hugepages");
	snprintf(value, sizeof value, "%" PRId64, nr);
	int err = ft_setting_write(path, value, was, sizeof was);
	*before = strtoll(was, NULL, 10);
	return err;
}

/* The PMD size in kB (2048 on x86-64), or 0. */
static size_t pmd_kb(void)
{
	char path[FT_SETTING_PATH], value[FT_SETTING_VALUE];
	ft_folio_file(path, sizeof path, 0, "hpage_pmd_size");
	return ft_setting_read(path, value, sizeof value) == 0 ? (size_t)strtoull(value, NULL, 10) / 1024 : 0;
}

/* A boot option that sets THP defaults: then they cannot be inferred. */
static bool boot_sets_thp(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/cmdline", "re");
	if (!f)
		return true;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n == 0 || strstr(buf, "thp_anon=") || strstr(buf, "transparent_hugepage");
}

int ft_folio_warn_unexpected(void)
{
	size_t kb[FT_SIZES_MAX], n, pmd = pmd_kb();
	if (ft_settings_held_elsewhere() || boot_sets_thp() || ft_folio_sizes(kb, &n) != 0)
		return 0; /* a live run explains any change; or nothing to compare with */
	int warned = 0;
	for (size_t i = 0; i < n; i++) {
		char path[FT_SETTING_PATH], value[FT_SETTING_VALUE];
		const char *boot = kb[i] == pmd ? "inherit" : "never";
		ft_folio_file(path, sizeof path, kb[i], "enabled");
		if (ft_setting_read(path, value, sizeof value) == 0 && strcmp(value, boot) != 0) {
			fprintf(stderr, "ftrun: warning: %s is %s, not %s as at boot, and no run holds the "
			        "settings lock: another program, or a killed run of an older ftrun, left it\n",
			        path, value, boot);
			warned++;
		}
	}
	return warned;
}
