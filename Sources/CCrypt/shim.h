// libxcrypt (Debian's libcrypt-dev): crypt_r for bcrypt hashes brought over from another system.
#include <crypt.h>
