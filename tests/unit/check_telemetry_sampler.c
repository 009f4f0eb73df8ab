/* telemetry: the sampler thread over a fake backend, backend choice and
 * "unavailable" reasons, the subprocess runner and the /proc process tree. */
#include "telemetry/telemetry_internal.h"

#include <check.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---------------------------------------------------------------- a fake backend */

struct fake_state {
  atomic_int calls;
  atomic_int fail_after;    /* sample() fails once calls exceed this (0 = never) */
  atomic_int sleep_ms;      /* each sample() takes this long (a slow or hung device) */
};

static struct fake_state fake;

static int fake_open(const struct tm_config *cfg, void **state_out, struct st_err *err) {
  (void)cfg;
  (void)err;
  *state_out = &fake;
  return 0;
}

static int fake_sample(void *state, struct tm_snapshot *out, struct st_err *err) {
  struct fake_state *st = state;
  int call = atomic_fetch_add(&st->calls, 1) + 1;
  int sleep_ms = atomic_load(&st->sleep_ms);
  if (sleep_ms > 0)
    clock_sleep_us((int64_t)sleep_ms * 1000);
  int fail_after = atomic_load(&st->fail_after);
  if (fail_after > 0 && call > fail_after)
    return err_setf(err, "fake: device lost");
  out->n_gpus = 1;
  out->gpus[0].index = 0;
  out->gpus[0].mem_used_bytes = (uint64_t)call; /* lets a test tell samples apart */
  out->gpus[0].valid = TM_GPU_MEM_USED;
  return 0;
}

static void fake_close(void *state) { (void)state; }

static const struct tm_backend_ops fake_ops = {
    .name = "fake", .open = fake_open, .sample = fake_sample, .close = fake_close};

static void fake_reset(void) {
  atomic_store(&fake.calls, 0);
  atomic_store(&fake.fail_after, 0);
  atomic_store(&fake.sleep_ms, 0);
}

/* Waits (bounded) until the published snapshot reaches seq. */
static void wait_for_seq(struct tm_sampler *tm, uint64_t seq, struct tm_snapshot *snap) {
  int64_t deadline = clock_mono_ns() + 5000000000LL;
  while (clock_mono_ns() < deadline) {
    if (tm_latest(tm, snap) && snap->seq >= seq)
      return;
    clock_sleep_us(5000);
  }
  ck_abort_msg("sampler did not reach seq %llu (at %llu)", (unsigned long long)seq,
               (unsigned long long)snap->seq);
}

START_TEST(sampler_publishes_snapshots) {
  fake_reset();
  struct tm_config cfg = {.interval_s = 0.02};
  struct st_err err = {{0}};
  struct tm_sampler *tm = tm_open_with_backend(&fake_ops, &cfg, &err);
  ck_assert_ptr_nonnull(tm);
  ck_assert_str_eq(tm_chosen_backend(tm), "fake");
  struct tm_snapshot *snap = xcalloc(1, sizeof *snap);
  ck_assert(!tm_latest(tm, snap)); /* nothing yet */
  ck_assert_int_eq(tm_start(tm, &err), 0);
  ck_assert_int_eq(tm_start(tm, &err), -1); /* only once */
  wait_for_seq(tm, 3, snap);
  ck_assert_str_eq(snap->backend, "fake");
  ck_assert(!snap->stale);
  ck_assert_uint_eq(snap->gpus[0].mem_used_bytes, snap->seq); /* one sample per seq */
  ck_assert(snap->taken_mono_ns > 0 && snap->taken_real_s > 1e9);
  tm_close(tm);
  free(snap);
}
END_TEST

START_TEST(sampler_failure_keeps_values_marks_stale) {
  fake_reset();
  atomic_store(&fake.fail_after, 2);
  struct tm_config cfg = {.interval_s = 0.02};
  struct st_err err = {{0}};
  struct tm_sampler *tm = tm_open_with_backend(&fake_ops, &cfg, &err);
  ck_assert_int_eq(tm_start(tm, &err), 0);
  struct tm_snapshot *snap = xcalloc(1, sizeof *snap);
  wait_for_seq(tm, 2, snap);
  int64_t deadline = clock_mono_ns() + 5000000000LL;
  while (clock_mono_ns() < deadline && (tm_latest(tm, snap), !snap->stale))
    clock_sleep_us(5000);
  ck_assert(snap->stale);
  ck_assert_str_eq(snap->error, "fake: device lost");
  ck_assert_uint_eq(snap->seq, 2);
  ck_assert_uint_eq(snap->gpus[0].mem_used_bytes, 2); /* the last good values */
  tm_close(tm);
  free(snap);
}
END_TEST

START_TEST(sampler_slow_backend_never_blocks_readers) {
  fake_reset();
  struct tm_config cfg = {.interval_s = 0.01};
  struct st_err err = {{0}};
  struct tm_sampler *tm = tm_open_with_backend(&fake_ops, &cfg, &err);
  ck_assert_int_eq(tm_start(tm, &err), 0);
  struct tm_snapshot *snap = xcalloc(1, sizeof *snap);
  wait_for_seq(tm, 1, snap);
  atomic_store(&fake.sleep_ms, 400); /* the next sample hangs for 400 ms */
  clock_sleep_us(30000);
  int64_t worst_ns = 0;
  bool saw_stale = false;
  for (int i = 0; i < 20; i++) {
    int64_t t0 = clock_mono_ns();
    tm_latest(tm, snap);
    int64_t took = clock_mono_ns() - t0;
    if (took > worst_ns)
      worst_ns = took;
    saw_stale |= snap->stale;
    clock_sleep_us(10000);
  }
  /* Reads are a copy under a short lock, not a wait on the device. */
  ck_assert_msg(worst_ns < 50000000, "tm_latest took %lld ns", (long long)worst_ns);
  ck_assert_msg(saw_stale, "a sample older than 3 intervals must read as stale");
  atomic_store(&fake.sleep_ms, 0);
  tm_close(tm); /* joins after the in-flight sample */
  free(snap);
}
END_TEST

START_TEST(sample_now_and_server_pid) {
  fake_reset();
  struct tm_config cfg = {.interval_s = 1, .server_pid = getpid()};
  struct st_err err = {{0}};
  struct tm_sampler *tm = tm_open_with_backend(&fake_ops, &cfg, &err);
  struct tm_snapshot *snap = xcalloc(1, sizeof *snap);
  ck_assert_int_eq(tm_sample_now(tm, snap, &err), 0);
  ck_assert_uint_eq(snap->seq, 1);
  ck_assert_int_eq(snap->server_pid, getpid());
  tm_set_server_pid(tm, 0);
  ck_assert_int_eq(tm_sample_now(tm, snap, &err), 0);
  ck_assert_int_eq(snap->server_pid, 0);
  tm_close(tm);
  free(snap);
}
END_TEST

/* ---------------------------------------------------------------- backend choice */

START_TEST(nvml_absent_reports_dlopen_reason) {
  struct tm_config cfg = {.backend = "nvml", .nvml_library = "/nonexistent/libnvidia-ml.so.1"};
  struct st_err err = {{0}};
  ck_assert_ptr_null(tm_open(&cfg, &err));
  ck_assert_msg(strstr(err.msg, "telemetry backend nvml: dlopen: /nonexistent/libnvidia-ml.so.1") &&
                    strstr(err.msg, "No such file"),
                "%s", err.msg);
}
END_TEST

START_TEST(nvml_default_sonames_on_a_machine_without_nvml) {
  struct tm_config cfg = {.backend = "nvml"};
  struct st_err err = {{0}};
  struct tm_sampler *tm = tm_open(&cfg, &err);
  if (tm) { /* this machine has a GPU driver: nothing to assert here */
    tm_close(tm);
    return;
  }
  /* Both sonames tried, the loader's reason for each kept. */
  ck_assert_msg(strstr(err.msg, "libnvidia-ml.so.1: cannot open shared object file") &&
                    strstr(err.msg, "libnvidia-ml.so: cannot open shared object file"),
                "%s", err.msg);
}
END_TEST

START_TEST(auto_without_any_backend_keeps_every_reason) {
  struct tm_config cfg = {
      .nvml_library = "/nonexistent/libnvidia-ml.so.1",
      .nvidia_smi_path = "/nonexistent/nvidia-smi",
      .amd_smi_path = "/nonexistent/amd-smi",
  };
  struct st_err err = {{0}};
  struct tm_sampler *tm = tm_open(&cfg, &err);
  ck_assert_ptr_nonnull(tm); /* auto never fails */
  ck_assert_str_eq(tm_chosen_backend(tm), "none");
  struct tm_backend_status st[8];
  size_t n = tm_backend_report(tm, st, 8);
  ck_assert_uint_eq(n, tm_backend_count());
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_eq(st[i].state, TM_BACKEND_UNAVAILABLE);
    ck_assert_str_eq(st[i].name, tm_backend_name(i));
  }
  ck_assert_msg(strstr(st[1].reason, "/nonexistent/nvidia-smi: not found"), "%s", st[1].reason);
  ck_assert_str_eq(st[3].reason, "no --telemetry-url given");
  struct tm_snapshot *snap = xcalloc(1, sizeof *snap);
  ck_assert_int_eq(tm_sample_now(tm, snap, &err), -1);
  ck_assert_str_eq(snap->backend, "none");
  ck_assert_uint_eq(snap->seq, 0);
  tm_close(tm);
  free(snap);
}
END_TEST

START_TEST(unknown_backend_name) {
  struct tm_config cfg = {.backend = "rocm"};
  struct st_err err = {{0}};
  ck_assert_ptr_null(tm_open(&cfg, &err));
  ck_assert_msg(strstr(err.msg, "'rocm'") && strstr(err.msg, "nvidia-smi"), "%s", err.msg);
}
END_TEST

/* ---------------------------------------------------------------- nvidia-smi through a stand-in tool */

static char tmp_dir[64];

static void make_tmp_dir(void) {
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/check_tm_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmp_dir));
}

static void remove_tmp_dir(void) {
  char *cmd = xasprintf("rm -rf '%s'", tmp_dir);
  ck_assert_int_eq(system(cmd), 0);
  free(cmd);
}

/* Writes an executable shell script; returns its path (heap). */
static char *write_script(const char *name, const char *body) {
  char *path = xasprintf("%s/%s", tmp_dir, name);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "#!/bin/sh\n%s", body);
  fclose(f);
  chmod(path, 0755);
  return path;
}

static int count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  int n = 0, c;
  while ((c = fgetc(f)) != EOF)
    n += c == '\n';
  fclose(f);
  return n;
}

START_TEST(nvidia_smi_backend_runs_tool_and_caches) {
  make_tmp_dir();
  char *body = xasprintf("echo run >> '%s/runs'\n"
                         "case \"$1\" in\n"
                         "--query-gpu=*) cat '%s/telemetry/nvsmi_h200_held_gpu_noheader.csv';;\n"
                         "--query-compute-apps=*) cat '%s/telemetry/nvsmi_h200_held_apps_noheader.csv';;\n"
                         "*) exit 2;;\n"
                         "esac\n",
                         tmp_dir, TEST_DATA_DIR, TEST_DATA_DIR);
  char *tool = write_script("nvidia-smi", body);
  struct tm_config cfg = {.backend = "nvidia-smi", .nvidia_smi_path = tool};
  struct st_err err = {{0}};
  struct tm_sampler *tm = tm_open(&cfg, &err);
  ck_assert_msg(tm != NULL, "%s", err.msg);
  struct tm_snapshot *snap = xcalloc(1, sizeof *snap);
  ck_assert_msg(tm_sample_now(tm, snap, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(snap->n_gpus, 1);
  ck_assert_uint_eq(snap->gpus[0].mem_used_bytes, 5147ull << 20);
  ck_assert_int_eq(snap->n_procs, 2);
  ck_assert_int_eq(snap->procs[0].gpu_index, 0);
  ck_assert_int_eq(tm_sample_now(tm, snap, &err), 0);
  char *runs = xasprintf("%s/runs", tmp_dir);
  /* The probe's two queries serve the samples taken within the same second. */
  ck_assert_int_eq(count_lines(runs), 2);
  tm_close(tm);
  free(runs);
  free(snap);
  free(tool);
  free(body);
  remove_tmp_dir();
}
END_TEST

START_TEST(hung_tool_is_killed_at_the_deadline) {
  make_tmp_dir();
  /* The tool's child keeps stdout open too: the whole group must go. */
  char *tool = write_script("nvidia-smi", "sleep 30 &\nsleep 30\n");
  struct tm_config cfg = {.backend = "nvidia-smi", .nvidia_smi_path = tool, .timeout_ms = 300};
  struct st_err err = {{0}};
  int64_t t0 = clock_mono_ns();
  ck_assert_ptr_null(tm_open(&cfg, &err));
  int64_t took_ms = (clock_mono_ns() - t0) / 1000000;
  ck_assert_msg(took_ms >= 290 && took_ms < 2000, "took %lld ms", (long long)took_ms);
  ck_assert_msg(strstr(err.msg, "no answer within 300 ms (killed)"), "%s", err.msg);
  ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1); /* nothing left to reap */
  free(tool);
  remove_tmp_dir();
}
END_TEST

START_TEST(run_capture_reports_exit_status_and_missing_tool) {
  struct sbuf out = {0};
  struct st_err err = {{0}};
  const char *fails[] = {"sh", "-c", "echo 'NVIDIA-SMI has failed because it could not communicate'; exit 9", NULL};
  ck_assert_int_eq(tm_run_capture(fails, 2000, &out, &err), -1);
  ck_assert_str_eq(err.msg, "sh: exit status 9: NVIDIA-SMI has failed because it could not communicate");
  const char *missing[] = {"/nonexistent/tool", NULL};
  ck_assert_int_eq(tm_run_capture(missing, 2000, &out, &err), -1);
  ck_assert_str_eq(err.msg, "/nonexistent/tool: not found in PATH (or not executable)");
  /* No output at all (nvidia-smi --query-compute-apps with no process) is "". */
  const char *silent[] = {"true", NULL};
  struct sbuf fresh = {0};
  ck_assert_int_eq(tm_run_capture(silent, 2000, &fresh, &err), 0);
  ck_assert_uint_eq(fresh.len, 0);
  ck_assert_str_eq(fresh.data, "");
  sbuf_free(&fresh);
  const char *ok[] = {"printf", "a,b\n", NULL};
  ck_assert_int_eq(tm_run_capture(ok, 2000, &out, &err), 0);
  ck_assert_str_eq(out.data, "a,b\n");
  sbuf_free(&out);
}
END_TEST

/* ---------------------------------------------------------------- process tree */

static bool contains(const pid_t *pids, size_t n, pid_t pid) {
  for (size_t i = 0; i < n; i++)
    if (pids[i] == pid)
      return true;
  return false;
}

START_TEST(proc_tree_finds_descendants) {
  int ready[2];
  ck_assert_int_eq(pipe(ready), 0);
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    pid_t grandchild = fork();
    if (grandchild == 0) {
      close(ready[0]);
      ssize_t w = write(ready[1], "g", 1);
      (void)w;
      pause();
      _exit(0);
    }
    pause();
    _exit(0);
  }
  close(ready[1]);
  char c;
  ck_assert_int_eq(read(ready[0], &c, 1), 1); /* the grandchild exists now */
  close(ready[0]);

  pid_t *tree = NULL;
  size_t n = tm_proc_tree("/proc", getpid(), &tree);
  ck_assert_uint_ge(n, 3);
  ck_assert(contains(tree, n, getpid()));
  ck_assert(contains(tree, n, child));
  size_t n_child_only = 0;
  pid_t *sub = NULL;
  n_child_only = tm_proc_tree("/proc", child, &sub);
  ck_assert_uint_eq(n_child_only, 2); /* child and grandchild, not us */
  ck_assert(!contains(sub, n_child_only, getpid()));
  for (size_t i = 0; i < n_child_only; i++)
    ck_assert(contains(tree, n, sub[i]));
  pid_t grandchild = sub[0] == child ? sub[1] : sub[0];
  kill(grandchild, SIGKILL);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  free(tree);
  free(sub);

  ck_assert_uint_eq(tm_proc_tree("/proc", 0, &tree), 0);
  ck_assert_ptr_null(tree);
  ck_assert_uint_eq(tm_proc_tree("/nonexistent", getpid(), &tree), 0);
}
END_TEST

int main(void) {
  Suite *suite = suite_create("telemetry_sampler");
  TCase *sampler = tcase_create("sampler");
  tcase_set_timeout(sampler, 20);
  tcase_add_test(sampler, sampler_publishes_snapshots);
  tcase_add_test(sampler, sampler_failure_keeps_values_marks_stale);
  tcase_add_test(sampler, sampler_slow_backend_never_blocks_readers);
  tcase_add_test(sampler, sample_now_and_server_pid);
  suite_add_tcase(suite, sampler);
  TCase *choice = tcase_create("choice");
  tcase_add_test(choice, nvml_absent_reports_dlopen_reason);
  tcase_add_test(choice, nvml_default_sonames_on_a_machine_without_nvml);
  tcase_add_test(choice, auto_without_any_backend_keeps_every_reason);
  tcase_add_test(choice, unknown_backend_name);
  suite_add_tcase(suite, choice);
  TCase *tools = tcase_create("tools");
  tcase_set_timeout(tools, 20);
  tcase_add_test(tools, nvidia_smi_backend_runs_tool_and_caches);
  tcase_add_test(tools, hung_tool_is_killed_at_the_deadline);
  tcase_add_test(tools, run_capture_reports_exit_status_and_missing_tool);
  tcase_add_test(tools, proc_tree_finds_descendants);
  suite_add_tcase(suite, tools);
  SRunner *runner = srunner_create(suite);
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
