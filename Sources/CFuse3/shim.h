// libfuse 3.14's low-level API at the 3.12 interface level.
#define FUSE_USE_VERSION 312
// The fuse headers use NULL without including <stddef.h>; a modular build has no implicit definition.
#include <stddef.h>
#include <signal.h>
#include <string.h>
#include <sys/xattr.h>
#include <fuse_lowlevel.h>

// Small wrappers for what Swift cannot import: variadic functions, initializer macros and the sigaction union.

/// `fuse_log` is variadic; the message is already formatted on the Swift side.
static inline void cfuse_log(enum fuse_log_level level, const char *message) {
    fuse_log(level, "%s\n", message);
}

/// Installs `handler` for `signo` with every other signal blocked while it runs. Without `restart`
/// (SA_RESTART) an interrupted blocking call such as the loop's `sem_wait` returns EINTR, which is
/// what wakes libfuse 3.14's multi-threaded loop.
static inline int cfuse_install_signal_handler(int signo, void (*handler)(int), int restart) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = handler;
    sigfillset(&action.sa_mask);
    action.sa_flags = restart ? SA_RESTART : 0;
    return sigaction(signo, &action, NULL);
}

/// Restores the default disposition of `signo`.
static inline int cfuse_reset_signal_handler(int signo) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    return sigaction(signo, &action, NULL);
}

/// Answers a read with `size` bytes of `fd` at `offset`: libfuse splices them into /dev/fuse when the session
/// negotiated FUSE_CAP_SPLICE_WRITE, and otherwise reads them into one buffer of its own. `FUSE_BUFVEC_INIT` is a
/// compound-literal macro Swift cannot import.
static inline int cfuse_reply_fd_range(fuse_req_t request, int fd, off_t offset, size_t size) {
    struct fuse_bufvec buffers = FUSE_BUFVEC_INIT(size);
    buffers.buf[0].flags = (enum fuse_buf_flags)(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buffers.buf[0].fd = fd;
    buffers.buf[0].pos = offset;
    return fuse_reply_data(request, &buffers, (enum fuse_buf_copy_flags)0);
}
