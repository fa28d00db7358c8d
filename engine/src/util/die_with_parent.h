/* A child process pario forks (a background loader, a bonnie seeker) must
 * not outlive the rank that forked it: killed with SIGKILL, the rank runs
 * no clean-up, and a loader or seeker left behind would go on loading the
 * storage every later run measures. */
#ifndef PARIO_DIE_WITH_PARENT_H
#define PARIO_DIE_WITH_PARENT_H

#include <sys/types.h>

/* Called in the child right after fork(), with the parent's pid taken
 * before it: the kernel sends SIGKILL when the parent ends, however it
 * ends; a parent already gone (it died between fork and here) ends the
 * child at once. */
void die_with_parent(pid_t parent);

#endif
