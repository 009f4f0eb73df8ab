/* engine: the full flag lists a --set key is checked against (issue 19.6):
 * SGLang's and vLLM's from the engine table, llama.cpp's from --help of the
 * binary in use, kept on disk and never read by running the binary on a
 * thread that said so (the dashboard's UI thread). */
#include "engine/engine.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

START_TEST(sglang_and_vllm_lists) {
  const struct eng_ops *sg = eng_find("sglang"), *vl = eng_find("vllm");
  struct st_err err;
  const char *sg_ok[] = {"speculative-num-draft-tokens", "enable-dp-attention", "cuda-graph-max-bs",
                         "schedule-conservativeness", "tp", "kv-cache", "sim-speed"};
  for (size_t i = 0; i < sizeof sg_ok / sizeof sg_ok[0]; i++)
    ck_assert_msg(eng_check_knob_name(sg, sg_ok[i], NULL, 0, &err) == 0, "%s: %s", sg_ok[i],
                  err.msg);
  ck_assert_int_eq(eng_check_knob_name(sg, "enable-dp-atention", NULL, 0, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "did you mean enable-dp-attention"));
  ck_assert_int_eq(eng_check_knob_name(sg, "max-num-seqs", NULL, 0, &err), -1); /* vLLM's */
  const char *vl_ok[] = {"max-num-batched-tokens", "enable-chunked-prefill", "max_num_seqs",
                         "no-enable-prefix-caching", "compilation-config.level", "tp",
                         "max-batch"};
  for (size_t i = 0; i < sizeof vl_ok / sizeof vl_ok[0]; i++)
    ck_assert_msg(eng_check_knob_name(vl, vl_ok[i], NULL, 0, &err) == 0, "%s: %s", vl_ok[i],
                  err.msg);
  ck_assert_int_eq(eng_check_knob_name(vl, "enable-chunked-prefil", NULL, 0, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "did you mean enable-chunked-prefill"));
  ck_assert_int_eq(eng_check_knob_name(vl, "mem-fraction-static", NULL, 0, &err), -1);
  ck_assert_int_eq(eng_check_knob_name(vl, "no-such-flag-at-all", NULL, 0, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "--server-arg"));
}
END_TEST

static char dir[64];

static int help_runs(void) {
  char path[128];
  snprintf(path, sizeof path, "%s/runs", dir);
  FILE *f = fopen(path, "r");
  int n = 0;
  for (int c; f && (c = fgetc(f)) != EOF;)
    n += c == '\n';
  if (f)
    fclose(f);
  return n;
}

static void *read_list(void *arg) {
  (void)arg;
  return (void *)eng_find("llamacpp")->help_flags();
}

START_TEST(llamacpp_list_never_read_on_the_ui_thread) {
  snprintf(dir, sizeof dir, "/tmp/st-engflags-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char bin[128], script[512];
  snprintf(bin, sizeof bin, "%s/llama-server", dir);
  snprintf(script, sizeof script,
           "#!/bin/sh\n[ \"$1\" = --help ] || exit 1\necho x >>%s/runs\n"
           "echo '-c, --ctx-size N'; echo '-np, --parallel N'; echo '--slot-save-path PATH'\n",
           dir);
  FILE *f = fopen(bin, "w");
  ck_assert_ptr_nonnull(f);
  fputs(script, f);
  fclose(f);
  chmod(bin, 0755);
  setenv("XDG_CACHE_HOME", dir, 1);
  struct st_err err;
  ck_assert_int_eq(eng_set_program_path("llama-server", bin, &err), 0);
  const struct eng_ops *ll = eng_find("llamacpp");
  eng_help_flags_never_run_here(); /* this thread is the UI's */
  ck_assert_ptr_null(ll->help_flags());
  /* without the list only a near miss of a known row is refused */
  ck_assert_int_eq(eng_check_knob_name(ll, "ctx-szie", NULL, 0, &err), -1);
  ck_assert_int_eq(eng_check_knob_name(ll, "slot-save-pth", NULL, 0, &err), 0);
  ck_assert_int_eq(help_runs(), 0);
  pthread_t t; /* the probe's thread may run it, and keeps the list */
  void *list = NULL;
  ck_assert_int_eq(pthread_create(&t, NULL, read_list, NULL), 0);
  pthread_join(t, &list);
  ck_assert_ptr_nonnull(list);
  ck_assert_int_eq(help_runs(), 1);
  ck_assert_ptr_nonnull(ll->help_flags()); /* now kept: the UI thread reads it */
  ck_assert_int_eq(eng_check_knob_name(ll, "slot-save-pth", NULL, 0, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "did you mean slot-save-path"));
  ck_assert_int_eq(help_runs(), 1);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("engine_flags");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, sglang_and_vllm_lists);
  tcase_add_test(tc, llamacpp_list_never_read_on_the_ui_thread);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
