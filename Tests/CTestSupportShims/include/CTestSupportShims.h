// Curlew — the GNU extensions the tests' process launcher needs, which Swift's Glibc module leaves out.
#ifndef CURLEW_CTESTSUPPORTSHIMS_H
#define CURLEW_CTESTSUPPORTSHIMS_H

#include <spawn.h>

/// `pipe2(fds, O_CLOEXEC)`: both ends close-on-exec from the start.
int curlew_test_pipe_cloexec(int fds[2]);

/// `posix_spawn_file_actions_addclosefrom_np`: the child closes every descriptor from `lowest` on.
int curlew_test_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

#endif
