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

// The mouse: a click of the first button, and the wheel (buttons 4 and 5). Reports are read
// at once (no click interval: a press is the click).
static inline void ubiq_mouse_enable(void) {
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
}
/// The last mouse report: 1 a click at (x, y), 2 the wheel up, 3 down; 0 anything else.
static inline int ubiq_mouse_read(int *x, int *y) {
    MEVENT e;
    if (getmouse(&e) != OK) return 0;
    *x = e.x; *y = e.y;
    if (e.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) return 1;
    if (e.bstate & BUTTON4_PRESSED) return 2;
#ifdef BUTTON5_PRESSED
    if (e.bstate & BUTTON5_PRESSED) return 3;
#endif
    return 0;
}
#endif
