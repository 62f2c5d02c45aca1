// Two calls of glibc that Swift's Glibc module leaves out, as it is built without _GNU_SOURCE:
// posix_spawn_file_actions_addclosefrom_np(3) (glibc 2.34; Debian 12 has 2.36), so that a child gets only the
// descriptors it is given, and pipe2(2), so that a pipe is close-on-exec from its first instant (no other thread's
// child inherits it). Nothing to link, they are in the C library.
#include <spawn.h>

extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int pipe2(int descriptors[2], int flags);
