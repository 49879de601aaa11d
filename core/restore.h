/* Every change the runner makes to a system setting (a sysfs file) is
 * recorded before it is made and undone when the run ends: by main after
 * lua_close, by atexit (os.exit), and by a handler for SIGTERM, SIGHUP,
 * SIGQUIT and SIGPIPE that restores and then dies of the signal as it
 * would have. SIGKILL and crashes leave the changes in place.
 *
 * Everything that restores uses only open, read, write and close on a
 * fixed static table, so it is safe inside a signal handler. Functions
 * return 0 or an errno value.
 *
 * Two runs, and a killed run, are covered by a lock and a journal in a
 * directory only the user running ftrun can write: /run/ftrun for root
 * (made 0700), $XDG_RUNTIME_DIR/ftrun or /tmp/ftrun-UID for another user,
 * $FTRUN_LOCK_DIR for tests. A directory owned by another user, or one its
 * group or others can write, is refused and named: whoever could write
 * there would choose what a journal makes root write.
 * 1. Lock: flock on ftrun-settings.lock (0600), held until the process
 *    ends and never passed to children (FD_CLOEXEC). Exclusive before a
 *    run's first change (or by ft.lock_settings()); shared by every
 *    experiment (the harness), which measures under the THP settings. A
 *    run that cannot have it waits, naming the holder (pid and command);
 *    with NOWAIT=1 it is refused with EWOULDBLOCK (ft.set_folio returns
 *    nil, message, errno and the scripts exit 2).
 * 2. Children: an ftrun whose parent, grandparent, ... holds the lock (as
 *    /proc/locks names it) runs under that lock instead of waiting for it;
 *    a parent's shared lock does not let a child change settings (EDEADLK,
 *    said). A shell can pass its own descriptor on purpose:
 *      exec 9>/run/ftrun/ftrun-settings.lock; flock 9
 *      FTRUN_SETTINGS_LOCK_FD=9 ./ftrun ...
 * 3. Journal: before its first change of a file, a run appends
 *    "path<TAB>before" to ftrun-settings.journal/<pid>-<start time> and
 *    fsyncs it; the file is removed once every change is restored.
 * 4. Recovery: each ftrun start (and `ftrun --restore`), and each run when
 *    it takes the lock alone, writes back, last change first, what the
 *    journals of runs no longer alive name, says so on stderr and removes
 *    them. A live run's journal is never touched. Only regular files of
 *    this user's are read (no link followed, no FIFO waited on), and only
 *    lines naming a setting ftrun changes (ft_setting_allowed) with a value
 *    of a-z and 0-9 are written back; anything else is named and kept. A
 *    start that finds another restoring waits for it, then finds nothing
 *    left to do. */
#ifndef FT_RESTORE_H
#define FT_RESTORE_H

#include <signal.h>
#include <stdbool.h>
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
	char found[FT_SETTING_VALUE];       /* at the restore, when not `left` */
	char left[FT_SETTING_VALUE];        /* (what this run left there): */
	volatile sig_atomic_t foreign;      /* someone else changed the file */
};

/* A setting's value: the bracketed choice of "always [madvise] never",
 * else the file's first word ("512" of nr_hugepages). */
int ft_setting_read(const char *path, char *value, size_t len);

/* Records path's value (unless already recorded), then writes value.
 * *before (len bytes) gets the value it had just before this call. A
 * refused write leaves no record unless the file changed anyway. */
int ft_setting_write(const char *path, const char *value, char *before, size_t len);

/* After ft_setting_write failed: why it could not take the settings lock
 * (the lock directory or file refused, named), or NULL when the lock was
 * not what failed. */
const char *ft_setting_lock_problem(void);

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

/* Takes the settings lock (see above) unless this process holds it.
 * Returns 0, EWOULDBLOCK (held elsewhere and NOWAIT=1), EINTR (SIGINT
 * while waiting) or an errno from opening the lock file. */
int ft_settings_lock(void);

/* The same lock shared, for a run that measures under the THP settings
 * without changing them: shared holders run together, and a run changing
 * a setting waits for them (and they for it). A holder of the shared lock
 * that changes a setting converts it, which flock(2) does by letting go
 * first: another changer may go in between, before this run changes
 * anything. */
int ft_settings_lock_shared(void);

/* Whether a journal may name path: the settings ftrun changes (one table
 * in restore.c), or a test's stand-in, setting-* in the lock directory. */
bool ft_setting_allowed(const char *path);

/* Restores what the journals of dead runs name, one line on stderr per
 * file, and removes those journals. Runs only when the lock is free (or
 * held by this process or inherited); returns 0 or the first error, and
 * *left counts the files that could not be restored. say_held: also say
 * on stderr when another run's lock leaves a journal for a later start. */
int ft_settings_recover(int *restored, int *left, bool say_held);

/* Whether another process holds the lock (a parent, when inherited): its
 * run explains any setting that differs from the boot defaults. */
bool ft_settings_held_elsewhere(void);

#endif
