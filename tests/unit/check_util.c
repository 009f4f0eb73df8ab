/* util: buffers, strict parsers, option tables, atomic files. */
#include "util/util.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

START_TEST(sbuf_grows_and_consumes) {
  struct sbuf sb = {0};
  for (int i = 0; i < 1000; i++)
    sbuf_printf(&sb, "%d,", i);
  ck_assert(str_starts_with(sb.data, "0,1,2,"));
  ck_assert(str_ends_with(sb.data, "998,999,"));
  sbuf_consume(&sb, 2);
  ck_assert(str_starts_with(sb.data, "1,2,"));
  char *s = sbuf_take(&sb);
  ck_assert_ptr_null(sb.data);
  free(s);
}
END_TEST

START_TEST(sbuf_reserve_gives_an_empty_string) {
  struct sbuf sb = {0};
  sbuf_reserve(&sb, 10);
  ck_assert_str_eq(sb.data, "");
  sbuf_free(&sb);
}
END_TEST

START_TEST(shell_words) {
  struct sbuf sb = {0};
  sbuf_put_shell_word(&sb, "--mem-fraction-static=0.85");
  sbuf_putc(&sb, ' ');
  sbuf_put_shell_word(&sb, "$(touch x); it's");
  sbuf_putc(&sb, ' ');
  sbuf_put_shell_word(&sb, "");
  sbuf_putc(&sb, ' ');
  sbuf_put_shell_assignment(&sb, "NOTE=a b");
  sbuf_putc(&sb, ' ');
  sbuf_put_shell_assignment(&sb, "1BAD=x y");
  ck_assert_str_eq(sb.data, "--mem-fraction-static=0.85 '$(touch x); it'\\''s' '' NOTE='a b' '1BAD=x y'");
  sbuf_free(&sb);
}
END_TEST

START_TEST(json_string_escapes) {
  struct sbuf sb = {0};
  const char in[] = "a\"b\\c\nd\re\tf\x01g\x1fh\0i";
  sbuf_put_json_escaped(&sb, in, sizeof in - 1); /* the NUL is escaped too */
  ck_assert_str_eq(sb.data, "a\\\"b\\\\c\\nd\\re\\tf\\u0001g\\u001fh\\u0000i");
  sbuf_reset(&sb);
  sbuf_put_json_escaped(&sb, "caf\xc3\xa9 /", 7); /* UTF-8 and '/' as they are */
  ck_assert_str_eq(sb.data, "caf\xc3\xa9 /");
  sbuf_free(&sb);
}
END_TEST

START_TEST(json_unknown_members_are_null) {
  cJSON *o = cJSON_CreateObject();
  json_add_string_or_null(o, "s", "x");
  json_add_string_or_null(o, "empty", "");
  json_add_string_or_null(o, "none", NULL);
  json_add_number_or_null(o, "n", true, 2.5);
  json_add_number_or_null(o, "invalid", false, 1);
  json_add_number_or_null(o, "nan", true, NAN);
  json_add_number_or_null(o, "inf", true, INFINITY);
  json_add_text_or_null(o, "t", "y");
  json_add_text_or_null(o, "t_empty", "");
  json_add_text_or_null(o, "t_none", NULL);
  char *text = cJSON_PrintUnformatted(o);
  ck_assert_str_eq(text, "{\"s\":\"x\",\"empty\":\"\",\"none\":null,\"n\":2.5,\"invalid\":null,"
                         "\"nan\":null,\"inf\":null,\"t\":\"y\",\"t_empty\":null,\"t_none\":null}");
  cJSON_free(text);
  cJSON_Delete(o);
}
END_TEST

static void *report_mask(void *arg) {
  sigset_t *mask = arg;
  pthread_sigmask(SIG_BLOCK, NULL, mask);
  return NULL;
}

/* A helper thread takes no signals; the starter's own mask stays as it was. */
START_TEST(helper_threads_leave_signals_to_the_starter) {
  sigset_t before, after, in_thread;
  sigemptyset(&in_thread);
  pthread_sigmask(SIG_BLOCK, NULL, &before);
  ck_assert(!sigismember(&before, SIGTERM));
  pthread_t t;
  ck_assert(thread_start_unsignalled(&t, report_mask, &in_thread));
  pthread_join(t, NULL);
  pthread_sigmask(SIG_BLOCK, NULL, &after);
  ck_assert(sigismember(&in_thread, SIGINT));
  ck_assert(sigismember(&in_thread, SIGTERM));
  ck_assert(!sigismember(&after, SIGINT));
  ck_assert(!sigismember(&after, SIGTERM));
}
END_TEST

START_TEST(strict_numbers) {
  long l;
  int i;
  double d;
  bool b;
  ck_assert_int_eq(parse_long("42", &l), 0);
  ck_assert_int_eq(l, 42);
  ck_assert_int_eq(parse_long("42x", &l), -1);
  ck_assert_int_eq(parse_long("", &l), -1);
  ck_assert_int_eq(parse_int("99999999999", &i), -1);
  ck_assert_int_eq(parse_double("0.85", &d), 0);
  ck_assert(d == 0.85);
  ck_assert_int_eq(parse_double("inf", &d), 0);
  ck_assert_int_eq(parse_double("nan", &d), -1);
  ck_assert_int_eq(parse_bool("Yes", &b), 0);
  ck_assert(b);
  ck_assert_int_eq(parse_bool("maybe", &b), -1);
  ck_assert_int_eq(parse_duration_s("1h30m", &d), 0);
  ck_assert(d == 5400);
  ck_assert_int_eq(parse_duration_s("45", &d), 0);
  ck_assert(d == 45);
  ck_assert_int_eq(parse_duration_s("1h30", &d), -1);
  ck_assert_int_eq(parse_duration_s("0", &d), -1);
  ck_assert_int_eq(parse_duration_s("10x", &d), -1);
}
END_TEST

static int unknown_seen;
static int on_unknown(void *ctx, const char *name, const char *value, bool *consumed) {
  (void)ctx;
  unknown_seen++;
  if (strcmp(name, "attention-backend") == 0) {
    ck_assert_str_eq(value, "fa3");
    *consumed = true;
  }
  return 0;
}

START_TEST(options_table) {
  int tp = 1;
  double mem = 0.9;
  bool metrics = false;
  const char *model = NULL;
  struct opt_list faults = {0};
  const struct opt_spec specs[] = {
      {"tp|tensor-parallel-size", OPT_INT, &tp, "N", "tensor parallel", NULL, NULL},
      {"mem-fraction-static", OPT_DOUBLE, &mem, "F", "", NULL, NULL},
      {"enable-metrics", OPT_FLAG, &metrics, NULL, "", NULL, NULL},
      {"model", OPT_STRING, &model, "NAME", "", NULL, NULL},
      {"sim-fault", OPT_LIST, &faults, "KIND", "", NULL, NULL},
  };
  struct opt_parser p = {.usage = "t", .specs = specs, .n_specs = ST_ARRAY_LEN(specs),
                         .unknown = on_unknown};
  char *argv[] = {"--tensor-parallel-size", "8", "--mem-fraction-static=0.85", "--enable-metrics",
                  "--model", "Qwen/Qwen3.5", "--attention-backend", "fa3", "--trust-remote-code",
                  "--sim-fault", "http-500", "--sim-fault=trickle", "extra"};
  char *pos[2];
  size_t npos = 0;
  struct st_err err;
  ck_assert_int_eq(opt_parse(&p, ST_ARRAY_LEN(argv), argv, pos, 2, &npos, &err), OPT_OK);
  ck_assert_int_eq(tp, 8);
  ck_assert(mem == 0.85);
  ck_assert(metrics);
  ck_assert_str_eq(model, "Qwen/Qwen3.5");
  ck_assert_int_eq(unknown_seen, 2);
  ck_assert_uint_eq(faults.n, 2);
  ck_assert_str_eq(faults.items[1], "trickle");
  ck_assert_uint_eq(npos, 1);
  ck_assert_str_eq(pos[0], "extra");
  free(faults.items);

  p.unknown = NULL;
  char *bad[] = {"--tp", "eight"};
  ck_assert_int_eq(opt_parse(&p, 2, bad, NULL, 0, NULL, &err), OPT_ERROR);
  ck_assert_str_eq(err.msg, "option --tp: expected an integer, got 'eight'");
  char *unk[] = {"--nope"};
  ck_assert_int_eq(opt_parse(&p, 1, unk, NULL, 0, NULL, &err), OPT_ERROR);
  char *help[] = {"--help"};
  ck_assert_int_eq(opt_parse(&p, 1, help, NULL, 0, NULL, &err), OPT_HELP);
}
END_TEST

/* --help never passes 80 columns: descriptions and option help are filled
 * and wrapped, a sentence's line break and indented lines are kept. */
START_TEST(help_is_wrapped_to_80_columns) {
  int n = 0;
  const struct opt_spec specs[] = {
      {"a-rather-long-option-name", OPT_INT, &n, "N",
       "a help text that goes on and on about what the option does, long past the eightieth "
       "column of any terminal, so that it must wrap", NULL, NULL},
      {"n", OPT_INT, &n, "N", "short", NULL, NULL},
  };
  struct opt_parser p = {
      .usage = "servetop thing ARG [options]",
      .description = "First line of a paragraph that was written with a break in the middle\n"
                     "of a sentence, which is filled again to the width of the terminal.\n"
                     "A new sentence on its own line.\n"
                     "  an indented line stays as it is\n",
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs)};
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  opt_print_help(&p, f);
  fclose(f);
  int width = 0;
  for (const char *line = text; *line;) {
    const char *nl = strchr(line, '\n');
    int w = nl ? (int)(nl - line) : (int)strlen(line);
    width = w > width ? w : width;
    line = nl ? nl + 1 : line + w;
  }
  ck_assert_msg(width <= 80, "a line of %d columns:\n%s", width, text);
  ck_assert_ptr_nonnull(strstr(text, "in the middle of a\nsentence, which")); /* filled */
  ck_assert_ptr_nonnull(strstr(text, "terminal.\nA new sentence"));     /* kept */
  ck_assert_ptr_nonnull(strstr(text, "\n  an indented line stays as it is\n"));
  ck_assert_ptr_nonnull(strstr(text, "\n                                 option does")); /* help indent */
  free(text);
}
END_TEST

START_TEST(atomic_write_replaces_and_refuses_planted_temp_symlink) {
  char dir[] = "/tmp/st_util_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char *path = path_join_alloc(dir, "r.json");
  struct st_err err;
  ck_assert_int_eq(file_write_atomic(path, "one", 3, 0644, &err), 0);
  ck_assert_int_eq(file_write_atomic(path, "two", 3, 0644, &err), 0);
  size_t len;
  char *data = file_read_all(path, &len, &err);
  ck_assert_str_eq(data, "two");
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0644);
  free(data);
  /* A symlink planted at the final name is replaced, its target untouched. */
  char *victim = path_join_alloc(dir, "victim");
  ck_assert_int_eq(file_write_atomic(victim, "keep", 4, 0644, &err), 0);
  unlink(path);
  ck_assert_int_eq(symlink(victim, path), 0);
  ck_assert_int_eq(file_write_atomic(path, "new", 3, 0644, &err), 0);
  data = file_read_all(victim, &len, &err);
  ck_assert_str_eq(data, "keep");
  free(data);
  ck_assert_ptr_null(file_read_all("/nonexistent/x", &len, &err));
  ck_assert(strstr(err.msg, "/nonexistent/x") != NULL);
  unlink(path);
  unlink(victim);
  rmdir(dir);
  free(path);
  free(victim);
}
END_TEST

START_TEST(write_or_rescue_keeps_the_data) {
  char dir[] = "/tmp/st_rescue_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("TMPDIR", dir, 1);
  struct st_err err;
  /* The target folder does not exist: the bytes land in $TMPDIR instead. */
  ck_assert_int_eq(file_write_or_rescue("/nonexistent-dir/r.json", "{}", 2, 0644, &err), -1);
  char *rescue = xasprintf("%s/servetop-rescue-%ld-r.json", dir, (long)getpid());
  ck_assert_msg(strstr(err.msg, rescue) != NULL, "%s", err.msg);
  size_t len;
  char *data = file_read_all(rescue, &len, &err);
  ck_assert_str_eq(data, "{}");
  free(data);
  unlink(rescue);
  free(rescue);
  /* Written where asked when it can be. */
  char *ok = path_join_alloc(dir, "ok.json");
  ck_assert_int_eq(file_write_or_rescue(ok, "[]", 2, 0644, &err), 0);
  unlink(ok);
  free(ok);
  rmdir(dir);
  unsetenv("TMPDIR");
}
END_TEST

START_TEST(paths) {
  char *j = path_join_alloc("/a/b/", "/c");
  ck_assert_str_eq(j, "/a/b/c");
  free(j);
  setenv("XDG_DATA_HOME", "/x/data", 1);
  char *d = path_data_dir_alloc();
  ck_assert_str_eq(d, "/x/data/servetop");
  free(d);
}
END_TEST

int main(void) {
  Suite *s = suite_create("util");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, sbuf_grows_and_consumes);
  tcase_add_test(tc, sbuf_reserve_gives_an_empty_string);
  tcase_add_test(tc, shell_words);
  tcase_add_test(tc, json_string_escapes);
  tcase_add_test(tc, json_unknown_members_are_null);
  tcase_add_test(tc, helper_threads_leave_signals_to_the_starter);
  tcase_add_test(tc, strict_numbers);
  tcase_add_test(tc, options_table);
  tcase_add_test(tc, help_is_wrapped_to_80_columns);
  tcase_add_test(tc, atomic_write_replaces_and_refuses_planted_temp_symlink);
  tcase_add_test(tc, write_or_rescue_keeps_the_data);
  tcase_add_test(tc, paths);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
