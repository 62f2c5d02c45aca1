// libfuse 3.14's low-level API at the 3.12 interface level (see notes/FUSE.md §1.3).
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
