// Wide-character classes (iswalnum(3)), which Swift's Glibc module leaves out: `campusfs grep -w` decides what a
// word character is as GNU grep does. Nothing to link, they are in the C library.
#include <wctype.h>
