#define _GNU_SOURCE 1
#include <locale.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <wchar.h>
#include "tui_support.h"

/* Widths come from the UTF-8 character tables whatever the process's locale is. */
int ubiq_scalar_width(unsigned int scalar) {
    static __thread locale_t utf8 = (locale_t)0;
    if (!utf8) utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (!utf8) return wcwidth((wchar_t)scalar);
    locale_t old = uselocale(utf8);
    int w = wcwidth((wchar_t)scalar);
    uselocale(old);
    return w;
}

static int winch_fd = -1;
static struct sigaction previous;

static void on_winch(int sig, siginfo_t *info, void *ctx) {
    if (winch_fd >= 0) { char b = 1; ssize_t r = write(winch_fd, &b, 1); (void)r; }
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction) previous.sa_sigaction(sig, info, ctx);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler) {
        previous.sa_handler(sig);
    }
}

void ubiq_install_winch(int fd) {
    winch_fd = fd;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_winch;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGWINCH, &sa, &previous);
}

void ubiq_ensure_utf8_locale(void) {
    setlocale(LC_ALL, "");
    const char *cs = setlocale(LC_CTYPE, NULL);
    if (!cs || (!strcasestr(cs, "utf-8") && !strcasestr(cs, "utf8"))) setlocale(LC_CTYPE, "C.UTF-8");
}

#include <termios.h>

static struct termios saved_termios;
static int have_termios = 0;

static void on_crash(int sig) {
    static const char reset[] = "\033[0m\033[?1049l\033[?25h\r\n";
    ssize_t r = write(STDOUT_FILENO, reset, sizeof reset - 1);
    (void)r;
    if (have_termios) tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
    signal(sig, SIG_DFL);
    raise(sig);
}

void ubiq_install_crash_restore(void) {
    if (tcgetattr(STDIN_FILENO, &saved_termios) == 0) have_termios = 1;
    int sigs[] = { SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE, SIGTRAP };
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], on_crash);
}

static volatile sig_atomic_t continued_count = 0;

static void on_continue(int sig) {
    (void)sig;
    continued_count++;
}

int ubiq_stop_until_continued(void) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_continue;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCONT, &sa, &old);
    sig_atomic_t before = continued_count;
    kill(getpid(), SIGSTOP);
    // Running time only: while stopped, the loop does not advance.
    for (int waited = 0; continued_count == before && waited < 2000; waited++) usleep(1000);
    sigaction(SIGCONT, &old, NULL);
    return continued_count != before ? 0 : -1;
}
