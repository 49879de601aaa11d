#include "reporting.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "restore.h"

const char *const ft_reporting_params[] = {
	"page_reporting_order", "min_free_ms", "max_waiting_mib", "free_bitmap_enable", NULL
};
const char *const ft_reporting_counters[] = { "reported_kib", "passes", "walked", NULL };

void ft_reporting_file(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", FT_REPORTING_DIR, name);
}

static int known(const char *const names[], const char *name)
{
	for (size_t i = 0; names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

int ft_reporting_read(const char *name, char *value, size_t len)
{
	if (!known(ft_reporting_params, name) && !known(ft_reporting_counters, name))
		return EINVAL;
	char path[FT_SETTING_PATH];
	ft_reporting_file(path, sizeof path, name);
	return ft_setting_read(path, value, len);
}

int ft_reporting_kib(int64_t *kib)
{
	char value[FT_SETTING_VALUE], *end;
	int err = ft_reporting_read("reported_kib", value, sizeof value);
	if (err)
		return err;
	errno = 0;
	long long v = strtoll(value, &end, 10);
	if (errno || end == value || *end)
		return EINVAL;
	*kib = v;
	return 0;
}

int ft_reporting_set(const char *name, const char *value, char *before, size_t len)
{
	if (!known(ft_reporting_params, name))
		return EINVAL;
	char path[FT_SETTING_PATH];
	ft_reporting_file(path, sizeof path, name);
	return ft_setting_write(path, value, before, len);
}
