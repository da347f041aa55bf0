#define _GNU_SOURCE
// Curlew — the GNU extensions the tests' process launcher needs.
#include "CTestSupportShims.h"
#include <fcntl.h>
#include <unistd.h>

int curlew_test_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int curlew_test_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
