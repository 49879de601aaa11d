/* Every change the runner makes to a system setting (a sysfs file) is
 * recorded before it is made and undone when the run ends: by main after
 * lua_close, by atexit (os.exit), and by a handler for SIGTERM, SIGHUP,
 * SIGQUIT and SIGPIPE that restores and then dies of the signal as it
 * would have. SIGKILL and crashes leave the changes in place.
 *
 * Everything that restores uses only open, read, write and close on a
 * fixed static table, so it is safe inside a signal handler. Functions
 * return 0 or an errno value. */
#ifndef FT_RESTORE_H
#define FT_RESTORE_H

#include <signal.h>
#include <stddef.h>

enum { FT_SETTING_PATH = 128, FT_SETTING_VALUE = 32, FT_SETTINGS_MAX = 64 };

/* One file: its value before the first change and after the last one. A
 * file changed many times keeps one entry; restoring writes `before`. */
struct ft_setting {
	char path[FT_SETTING_PATH];
	char before[FT_SETTING_VALUE];
	char after[FT_SETTING_VALUE];      /* as read back after the write */
	volatile sig_atomic_t restored;
	int err;                            /* why the last restore failed, or 0 */
};

/* A setting's value: the bracketed choice of "always [madvise] never",
 * else the file's first word ("512" of nr_hugepages). */
int ft_setting_read(const char *path, char *value, size_t len);

/* Records path's value (unless already recorded), then writes value.
 * *before (len bytes) gets the value it had just before this call. A
 * refused write leaves no record unless the file changed anyway. */
int ft_setting_write(const char *path, const char *value, char *before, size_t len);

/* Writes back every recorded value not yet restored, last change first,
 * and reads each back. Returns 0, or the first error (EAGAIN: the file
 * reads back otherwise); failed entries stay unrestored with their err.
 * Only the process that made the changes restores them. */
int ft_settings_restore(void);

size_t ft_settings_count(void);
const struct ft_setting *ft_setting_at(size_t i);

/* atexit and the signal handlers, installed once; a signal ignored at
 * start (nohup) stays ignored. */
void ft_settings_guard(void);

/* A signal handler: restores, says on stderr what it could not restore,
 * then dies of sig by its default action. */
void ft_settings_on_signal(int sig);

#endif
