// zlib for the simulator's generated PDFs (FlateDecode content streams); Foundation on Linux has no zlib API.
#include <zlib.h>
