#ifndef CNCURSESW_SHIM_H
#define CNCURSESW_SHIM_H

// The wide-character API (cchar_t, get_wch, ...). SwiftPM drops pkg-config's -D flags.
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif

#include <locale.h>
#include <wchar.h>
#include <ncurses.h>
#include <term.h>

// Macros Swift cannot import, and C globals Swift 6 rejects: stateless wrappers only.
static inline int ubiq_a_normal(void) { return (int)A_NORMAL; }
static inline int ubiq_a_bold(void) { return (int)A_BOLD; }
static inline int ubiq_a_reverse(void) { return (int)A_REVERSE; }
static inline int ubiq_a_underline(void) { return (int)A_UNDERLINE; }
static inline int ubiq_a_dim(void) { return (int)A_DIM; }
static inline int ubiq_a_italic(void) { return (int)A_ITALIC; }
static inline WINDOW *ubiq_stdscr(void) { return stdscr; }
static inline int ubiq_lines(void) { return LINES; }
static inline int ubiq_cols(void) { return COLS; }
static inline int ubiq_colors(void) { return COLORS; }
static inline int ubiq_color_pairs(void) { return COLOR_PAIRS; }
#endif
