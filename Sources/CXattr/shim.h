// Extended-attribute system calls (getxattr(2) and friends), which Swift's Glibc module leaves out. The
// command line uses them on the mounted tree; nothing to link, they are in the C library.
#include <sys/types.h>
#include <sys/xattr.h>
