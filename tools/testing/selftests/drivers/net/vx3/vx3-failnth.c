// SPDX-License-Identifier: GPL-2.0
/*
 * vx3-failnth: run a command with the per-task fault injection counter
 * (/proc/<pid>/fail-nth, CONFIG_FAULT_INJECTION) armed, and tell whether
 * the fault was injected.
 *
 *   vx3-failnth N CMD [ARG...]
 *
 * The child writes N to /proc/self/fail-nth and execs CMD, as
 * "echo N > /proc/self/fail-nth; exec CMD" in a shell would: the N-th
 * fault injection check of that task from the exec on (failslab,
 * fail_page_alloc, ...) fails. A shell cannot read the counter back after
 * the exec; this parent waits for the child without reaping it
 * (WNOWAIT), reads /proc/<pid>/fail-nth of the zombie and only then
 * reaps it. CMD's output passes through; then one line goes to stderr:
 *
 *   vx3-failnth: n=N left=L injected=0|1 status=S
 *
 * left is what remained of the counter: 0 means the N-th check failed
 * (injected=1); otherwise CMD made N - L checks in all. The exit status
 * is CMD's (128 + signal if it was killed, 127 if it could not be run).
 * N=0 disarms the counter: the line then reports CMD's status only.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* CMD's path, resolved before the counter is armed: a PATH search would
 * spend checks on failed execs.
 */
static const char *resolve(const char *cmd, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	const char *p, *end;

	if (strchr(cmd, '/') || !path)
		return cmd;
	for (p = path; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		snprintf(buf, len, "%.*s/%s", (int)(end - p), p, cmd);
		if (!access(buf, X_OK))
			return buf;
	}
	return cmd;
}

int main(int argc, char **argv)
{
	char path[4096], proc[64], val[32];
	unsigned long n;
	const char *exe;
	siginfo_t si;
	ssize_t len;
	int fd, status;
	long left = -1;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: vx3-failnth N CMD [ARG...]\n");
		return 2;
	}
	n = strtoul(argv[1], NULL, 0);
	exe = resolve(argv[2], path, sizeof(path));
	fflush(stdout);

	pid = fork();
	if (pid < 0) {
		perror("vx3-failnth: fork");
		return 127;
	}
	if (!pid) {
		len = snprintf(val, sizeof(val), "%lu", n);
		fd = open("/proc/self/fail-nth", O_WRONLY);
		if (fd < 0 || write(fd, val, len) != len) {
			perror("vx3-failnth: /proc/self/fail-nth");
			_exit(127);
		}
		close(fd);
		execv(exe, argv + 2);
		fprintf(stderr, "vx3-failnth: exec %s: %s\n", exe,
			strerror(errno));
		_exit(127);
	}

	/* Exited, but not reaped: its /proc entry still reads */
	while (waitid(P_PID, pid, &si, WEXITED | WNOWAIT) < 0) {
		if (errno != EINTR) {
			perror("vx3-failnth: waitid");
			return 127;
		}
	}
	snprintf(proc, sizeof(proc), "/proc/%d/fail-nth", (int)pid);
	fd = open(proc, O_RDONLY);
	if (fd >= 0) {
		len = read(fd, val, sizeof(val) - 1);
		if (len > 0) {
			val[len] = 0;
			left = strtol(val, NULL, 10);
		}
		close(fd);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("vx3-failnth: waitpid");
		return 127;
	}
	status = WIFEXITED(status) ? WEXITSTATUS(status) :
		 128 + WTERMSIG(status);
	fprintf(stderr, "vx3-failnth: n=%lu left=%ld injected=%d status=%d\n",
		n, left, n && left == 0, status);
	return status;
}
