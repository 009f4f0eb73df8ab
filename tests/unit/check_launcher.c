/* launcher: command lines, process groups, readiness, stop, and what is left
 * in the process table after a stop, an early exit or SIGKILL of the owner. */
#include "launcher/launcher.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define READY_LINE "The server is fired up and ready to roll!"

/* Processes whose environment holds SERVETOP_LAUNCH_ID=<id>. */
static int count_launch_processes(const char *launch_id) {
  char needle[64];
  int needle_len = snprintf(needle, sizeof(needle), "%s=%s", LAUNCH_ID_ENV, launch_id);
  DIR *dir = opendir("/proc");
  ck_assert_ptr_nonnull(dir);
  int count = 0;
  struct dirent *de;
  while ((de = readdir(dir)) != NULL) {
    if (de->d_name[0] < '1' || de->d_name[0] > '9')
      continue;
    char path[300];
    snprintf(path, sizeof(path), "/proc/%s/environ", de->d_name);
    size_t len = 0;
    char *env = file_read_all(path, &len, NULL);
    if (!env)
      continue;
    for (size_t off = 0; off < len; off += strlen(env + off) + 1) {
      if (strncmp(env + off, needle, (size_t)needle_len) == 0 && env[off + needle_len] == '\0') {
        /* a zombie still waiting for its reaper has no environ: not counted */
        count++;
        break;
      }
    }
    free(env);
  }
  closedir(dir);
  return count;
}

static bool wait_no_launch_processes(const char *launch_id, int timeout_ms) {
  for (int waited = 0; waited <= timeout_ms; waited += 20) {
    if (count_launch_processes(launch_id) == 0)
      return true;
    usleep(20 * 1000);
  }
  return false;
}

static void sh_cmd(struct launch_cmd *cmd, const char *script) {
  launch_cmd_init(cmd);
  launch_cmd_add_arg(cmd, "sh");
  launch_cmd_add_arg(cmd, "-c");
  launch_cmd_add_arg(cmd, script);
}

static struct launcher *start_sh(const char *script, int64_t grace_ms, struct launch_cmd *cmd,
                                 const char *log_path) {
  sh_cmd(cmd, script);
  struct launch_opts opts = {.cmd = cmd, .log_path = log_path, .port = 1, /* nothing listens */
                             .ready_line = READY_LINE, .stop_grace_ms = grace_ms};
  struct st_err err = {{0}};
  struct launcher *l = launcher_start(&opts, &err);
  ck_assert_msg(l != NULL, "%s", err.msg);
  return l;
}

START_TEST(free_port_is_bindable) {
  struct st_err err = {{0}};
  int port = launch_pick_free_port(&err);
  ck_assert_int_gt(port, 0);
  ck_assert_int_lt(port, 65536);
}
END_TEST

struct line_log {
  int n_lines;
  char last[256];
};

static void record_line(void *ctx, const char *line, int64_t mono_ns) {
  struct line_log *log = ctx;
  ck_assert_int_gt(mono_ns, 0);
  log->n_lines++;
  snprintf(log->last, sizeof(log->last), "%s", line);
}

START_TEST(ready_by_log_line_then_stop_kills_the_whole_group) {
  char log_path[] = "/tmp/check_launcher_log_XXXXXX";
  int fd = mkstemp(log_path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  struct launch_cmd cmd;
  struct line_log lines = {0};
  /* The server leaves children behind, one of them in a new session (out of
   * the process group): both must be gone after the stop. */
  sh_cmd(&cmd, "sleep 300 & setsid sleep 301 & echo starting; echo '" READY_LINE "'; wait");
  struct launch_opts opts = {.cmd = &cmd, .log_path = log_path, .port = 1,
                             .ready_line = READY_LINE, .stop_grace_ms = 2000,
                             .on_line = record_line, .on_line_ctx = &lines};
  struct st_err err = {{0}};
  struct launcher *l = launcher_start(&opts, &err);
  ck_assert_msg(l != NULL, "%s", err.msg);
  ck_assert_msg(launcher_wait_ready(l, 5000, &err) == 0, "%s", err.msg);
  struct launch_status st;
  launcher_get_status(l, &st);
  ck_assert_int_eq(st.state, LAUNCH_READY);
  ck_assert_int_eq(st.ready_by, LAUNCH_READY_LOG_LINE);
  ck_assert_int_ge(st.ready_after_ms, 0);
  ck_assert_int_gt(st.pid, 0);
  ck_assert_int_eq(getpgid(st.pid), st.pid);
  /* sh, sleep, setsid sleep (the supervisor is a fork of this process and
   * has no marker: the marker is set at exec).
   * A process being exec'd has no readable environ for a moment, so one scan
   * can miss it: wait until a scan sees all three. */
  int n_procs = 0;
  for (int i = 0; i < 300 && (n_procs = count_launch_processes(st.launch_id)) != 3; i++)
    usleep(10 * 1000);
  ck_assert_int_eq(n_procs, 3);

  ck_assert_int_eq(launcher_stop(l), 0);
  launcher_get_status(l, &st);
  ck_assert(st.exited);
  ck_assert(st.stop_requested);
  ck_assert_int_eq(st.exit_signal, SIGTERM);
  ck_assert_msg(wait_no_launch_processes(st.launch_id, 2000), "processes of the launch survived");
  ck_assert_int_eq(launcher_stop(l), 0); /* idempotent */

  char *tail = launcher_tail_alloc(l, 2);
  ck_assert_str_eq(tail, "starting\n" READY_LINE);
  free(tail);
  char rows[3][16];
  ck_assert_uint_eq(launcher_copy_tail(l, &rows[0][0], 3, sizeof(rows[0])), 2);
  ck_assert_str_eq(rows[0], "starting");
  ck_assert_str_eq(rows[1], "The server is f"); /* truncated to the row */
  ck_assert_int_eq(lines.n_lines, 2);
  ck_assert_str_eq(lines.last, READY_LINE);
  launcher_free(l);
  launch_cmd_fini(&cmd);

  char *logged = file_read_all(log_path, NULL, &err);
  ck_assert_ptr_nonnull(logged);
  ck_assert_str_eq(logged, "starting\n" READY_LINE "\n");
  free(logged);
  unlink(log_path);
}
END_TEST

START_TEST(early_exit_reports_status_and_last_lines) {
  struct launch_cmd cmd;
  struct launcher *l = start_sh("echo 'loading weights'; echo 'CUDA out of memory' >&2; exit 3",
                                1000, &cmd, NULL);
  struct st_err err = {{0}};
  ck_assert_int_eq(launcher_wait_ready(l, 5000, &err), -1);
  ck_assert_msg(strstr(err.msg, "exited with status 3") != NULL, "%s", err.msg);
  ck_assert_msg(strstr(err.msg, "CUDA out of memory") != NULL, "%s", err.msg);
  struct launch_status st;
  launcher_get_status(l, &st);
  ck_assert(st.exited);
  ck_assert(!st.stop_requested);
  ck_assert_int_eq(st.exit_code, 3);
  ck_assert_int_eq(st.state, LAUNCH_EXITED);
  launcher_free(l);
  ck_assert(wait_no_launch_processes(st.launch_id, 2000));
  launch_cmd_fini(&cmd);
}
END_TEST

START_TEST(environment_is_ours_plus_the_command_s_plus_the_marker) {
  setenv("CHECK_LAUNCHER_KEPT", "kept", 1);
  setenv("CHECK_LAUNCHER_REPLACED", "old", 1);
  struct launch_cmd cmd;
  sh_cmd(&cmd, "echo \"$CHECK_LAUNCHER_KEPT $CHECK_LAUNCHER_REPLACED $CHECK_LAUNCHER_ADDED "
               "$SERVETOP_LAUNCH_ID\"");
  launch_cmd_set_env(&cmd, "CHECK_LAUNCHER_REPLACED", "new");
  launch_cmd_set_env(&cmd, "CHECK_LAUNCHER_ADDED", "a b");
  struct launch_opts opts = {.cmd = &cmd, .port = 1, .ready_line = READY_LINE};
  struct st_err err = {{0}};
  struct launcher *l = launcher_start(&opts, &err);
  ck_assert_msg(l != NULL, "%s", err.msg);
  ck_assert(launcher_wait_exit(l, 5000));
  launcher_stop(l); /* the reader has drained the output once stopped */
  struct launch_status st;
  launcher_get_status(l, &st);
  char *want = xasprintf("kept new a b %s", st.launch_id);
  char *tail = launcher_tail_alloc(l, 1);
  ck_assert_str_eq(tail, want);
  free(tail);
  free(want);
  launcher_free(l);
  launch_cmd_fini(&cmd);
}
END_TEST

START_TEST(wait_exit_waits_and_times_out) {
  struct launch_cmd cmd;
  struct launcher *l = start_sh("sleep 0.3; exit 4", 1000, &cmd, NULL);
  int64_t t0 = clock_mono_ns();
  ck_assert(!launcher_wait_exit(l, 100)); /* still running after 100 ms */
  int64_t waited_ms = (clock_mono_ns() - t0) / 1000000;
  ck_assert_int_ge(waited_ms, 90);
  ck_assert(launcher_wait_exit(l, 5000));
  struct launch_status st;
  launcher_get_status(l, &st);
  ck_assert_int_eq(st.exit_code, 4);
  launcher_free(l);
  launch_cmd_fini(&cmd);
}
END_TEST

START_TEST(exec_failure_is_status_127_with_a_reason) {
  struct launch_cmd cmd;
  launch_cmd_init(&cmd);
  launch_cmd_add_arg(&cmd, "/nonexistent/servetop-no-such-server");
  struct launch_opts opts = {.cmd = &cmd, .port = 1, .ready_line = "Application startup complete."};
  struct st_err err = {{0}};
  struct launcher *l = launcher_start(&opts, &err);
  ck_assert_ptr_nonnull(l);
  ck_assert_int_eq(launcher_wait_ready(l, 5000, &err), -1);
  ck_assert_msg(strstr(err.msg, "status 127") != NULL, "%s", err.msg);
  ck_assert_msg(strstr(err.msg, "cannot run /nonexistent/servetop-no-such-server") != NULL, "%s",
                err.msg);
  launcher_free(l);
  launch_cmd_fini(&cmd);
}
END_TEST

START_TEST(readiness_timeout_names_the_wait) {
  struct launch_cmd cmd;
  /* uvicorn's line is not SGLang's ready line: SGLang warms up after it */
  struct launcher *l = start_sh("echo 'INFO:     Application startup complete.'; echo still "
                                "loading; sleep 30",
                                1000, &cmd, NULL);
  struct st_err err = {{0}};
  int64_t t0 = clock_mono_ns();
  ck_assert_int_eq(launcher_wait_ready(l, 400, &err), -1);
  ck_assert_int_lt(clock_mono_ns() - t0, 3000000000LL);
  ck_assert_msg(strstr(err.msg, "not ready after 0.4 s") != NULL, "%s", err.msg);
  ck_assert_msg(strstr(err.msg, "still loading") != NULL, "%s", err.msg);
  struct launch_status st;
  launcher_get_status(l, &st);
  launcher_free(l);
  ck_assert(wait_no_launch_processes(st.launch_id, 2000));
  launch_cmd_fini(&cmd);
}
END_TEST

START_TEST(sigterm_ignoring_server_gets_sigkill_after_grace) {
  struct launch_cmd cmd;
  struct launcher *l =
      start_sh("trap '' TERM; echo '" READY_LINE "'; while :; do sleep 0.05; done", 300, &cmd,
               NULL);
  struct st_err err = {{0}};
  ck_assert_msg(launcher_wait_ready(l, 5000, &err) == 0, "%s", err.msg);
  int64_t t0 = clock_mono_ns();
  launcher_stop(l);
  int64_t stop_ms = (clock_mono_ns() - t0) / 1000000;
  struct launch_status st;
  launcher_get_status(l, &st);
  ck_assert_int_eq(st.exit_signal, SIGKILL);
  ck_assert_int_ge(stop_ms, 250);
  ck_assert_int_lt(stop_ms, 3000);
  ck_assert(wait_no_launch_processes(st.launch_id, 2000));
  launcher_free(l);
  launch_cmd_fini(&cmd);
}
END_TEST

/* The owner of a launch is killed with SIGKILL: nothing it started survives. */
START_TEST(sigkill_of_the_owner_leaves_no_process) {
  int report[2];
  ck_assert_int_eq(pipe(report), 0);
  pid_t owner = fork();
  ck_assert_int_ge(owner, 0);
  if (owner == 0) {
    close(report[0]);
    struct launch_cmd cmd;
    struct launcher *l =
        start_sh("sleep 300 & setsid sh -c 'sleep 302 & wait' & echo '" READY_LINE "'; wait",
                 1000, &cmd, NULL);
    struct st_err err = {{0}};
    if (launcher_wait_ready(l, 5000, &err) != 0)
      _exit(2);
    struct launch_status st;
    launcher_get_status(l, &st);
    dprintf(report[1], "%s\n", st.launch_id);
    for (;;)
      pause(); /* until SIGKILL */
  }
  close(report[1]);
  char launch_id[64] = {0};
  ssize_t n = read(report[0], launch_id, sizeof(launch_id) - 1);
  close(report[0]);
  ck_assert_int_gt(n, 1);
  launch_id[strcspn(launch_id, "\n")] = '\0';
  for (int i = 0; i < 100 && count_launch_processes(launch_id) < 4; i++)
    usleep(10 * 1000); /* sh, sleep, setsid sh, its sleep */
  ck_assert_int_eq(count_launch_processes(launch_id), 4);
  kill(owner, SIGKILL);
  int status;
  waitpid(owner, &status, 0);
  ck_assert_msg(wait_no_launch_processes(launch_id, 4000), "%d processes survived SIGKILL",
                count_launch_processes(launch_id));
}
END_TEST

int main(void) {
  Suite *s = suite_create("launcher");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, free_port_is_bindable);
  tcase_add_test(tc, ready_by_log_line_then_stop_kills_the_whole_group);
  tcase_add_test(tc, early_exit_reports_status_and_last_lines);
  tcase_add_test(tc, exec_failure_is_status_127_with_a_reason);
  tcase_add_test(tc, wait_exit_waits_and_times_out);
  tcase_add_test(tc, environment_is_ours_plus_the_command_s_plus_the_marker);
  tcase_add_test(tc, readiness_timeout_names_the_wait);
  tcase_add_test(tc, sigterm_ignoring_server_gets_sigkill_after_grace);
  tcase_add_test(tc, sigkill_of_the_owner_leaves_no_process);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
