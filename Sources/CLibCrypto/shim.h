// The system's OpenSSL libcrypto (Debian: libssl-dev) for the module Digests: its one-shot digests and HMAC.
#include <openssl/evp.h>
#include <openssl/hmac.h>
