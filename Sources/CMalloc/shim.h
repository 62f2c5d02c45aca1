// glibc's malloc_trim(3), which Swift's Glibc module leaves out: the daemon hands the memory a refresh freed back to
// the system (docs/performance.md, "Memory and order of a refresh"). Nothing to link: it is in the C library.
#include <malloc.h>
