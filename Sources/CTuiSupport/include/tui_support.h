#ifndef UBIQ_TUI_SUPPORT_H
#define UBIQ_TUI_SUPPORT_H

/// Display width of one Unicode scalar in terminal cells (wcwidth; -1 for control characters).
int ubiq_scalar_width(unsigned int scalar);

/// Installs a SIGWINCH handler that writes one byte to `fd` (a wake pipe) and then chains to
/// the handler installed before it (ncurses' own, which updates LINES/COLS).
void ubiq_install_winch(int fd);

/// Switches the C library's character type to UTF-8 when the environment's locale is not.
void ubiq_ensure_utf8_locale(void);


/// Remembers the terminal's settings (before curses changes them) and installs handlers for
/// crash signals that put the terminal back (leave the alternate screen, show the cursor,
/// restore the settings) before the default action runs. Async-signal-safe.
void ubiq_install_crash_restore(void);

/// Stops the whole process (SIGSTOP, as Ctrl-Z does) and returns only once it has been
/// continued (SIGCONT, the shell's `fg`) — also when the stop takes hold a moment after `kill`
/// returns, which would otherwise let the caller redraw before the stop and never after it.
/// 0 when continued; -1 when the stop never took hold (after ~2 s of running).
int ubiq_stop_until_continued(void);
#endif
