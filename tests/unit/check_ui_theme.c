/* ui theme: parser, fallbacks, colour mapping, lookup, and the bundled themes. */
#include "theme.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ui_util.h"

START_TEST(colour_tokens) {
  struct theme_color c;
  ck_assert_int_eq(theme_color_parse("#ff8000", &c), 0);
  ck_assert_int_eq(c.kind, THEME_COLOR_RGB);
  ck_assert_int_eq(c.r, 255);
  ck_assert_int_eq(c.g, 128);
  ck_assert_int_eq(c.b, 0);
  ck_assert_int_eq(theme_color_parse("#FF8000", &c), 0);
  ck_assert_int_eq(theme_color_parse("208", &c), 0);
  ck_assert_int_eq(c.kind, THEME_COLOR_INDEX);
  ck_assert_int_eq(c.index, 208);
  ck_assert_int_eq(theme_color_parse("cyan", &c), 0);
  ck_assert_int_eq(c.index, 6);
  ck_assert_int_eq(theme_color_parse("bright_red", &c), 0);
  ck_assert_int_eq(c.index, 9);
  ck_assert_int_eq(theme_color_parse("default", &c), 0);
  ck_assert_int_eq(c.kind, THEME_COLOR_DEFAULT);
  ck_assert_int_eq(theme_color_parse("256", &c), -1);
  ck_assert_int_eq(theme_color_parse("-1", &c), -1);
  ck_assert_int_eq(theme_color_parse("#ff80", &c), -1);
  ck_assert_int_eq(theme_color_parse("#ff80zz", &c), -1);
  ck_assert_int_eq(theme_color_parse("purple", &c), -1);
  ck_assert_int_eq(theme_color_parse("12px", &c), -1);
}
END_TEST

START_TEST(colour_mapping) {
  struct theme_color c;
  /* exact cube and grey entries map to themselves */
  theme_color_parse("#ff8700", &c);
  ck_assert_int_eq(theme_color_to_terminal(c, 256), 208);
  theme_color_parse("#808080", &c);
  ck_assert_int_eq(theme_color_to_terminal(c, 256), 244);
  theme_color_parse("#000000", &c);
  ck_assert_int_eq(theme_color_to_terminal(c, 256), 16);
  /* near values snap to the closest entry */
  theme_color_parse("#fe8801", &c);
  ck_assert_int_eq(theme_color_to_terminal(c, 256), 208);
  /* 8 colours: nearest basic colour */
  theme_color_parse("#e06c75", &c);
  ck_assert_int_eq(theme_color_to_terminal(c, 8), 1);
  theme_color_parse("#56b6c2", &c);
  ck_assert_int_eq(theme_color_to_terminal(c, 8), 6);
  /* an index beyond the terminal's range is matched by its RGB value */
  theme_color_parse("196", &c);
  ck_assert_int_eq(theme_color_to_terminal(c, 256), 196);
  ck_assert_int_eq(theme_color_to_terminal(c, 8), 1);
  ck_assert_int_eq(theme_color_to_terminal(c, 16), 9);
  theme_color_parse("bright_red", &c);
  ck_assert_int_eq(theme_color_to_terminal(c, 8), 1);
  /* default stays default; no colours means default */
  theme_color_parse("default", &c);
  ck_assert_int_eq(theme_color_to_terminal(c, 256), -1);
  theme_color_parse("#ff0000", &c);
  ck_assert_int_eq(theme_color_to_terminal(c, 0), -1);
  ck_assert_int_eq(theme_color_to_terminal(c, 2), -1);
}
END_TEST

START_TEST(parse_roles_and_attributes) {
  struct theme t;
  struct st_err err = {{0}};
  const char *text = "# comment line\n"
                     "\n"
                     "title = #112233 on 4 bold underline   # trailing comment\n"
                     "  selected=reverse\n"
                     "main =\n";
  ck_assert_int_eq(theme_parse(&t, text, "x.theme", &err), 0);
  ck_assert_int_eq(t.n_warnings, 0);
  const struct theme_style *s = &t.style[THEME_TITLE];
  ck_assert_int_eq(s->fg.kind, THEME_COLOR_RGB);
  ck_assert_int_eq(s->fg.b, 0x33);
  ck_assert_int_eq(s->bg.kind, THEME_COLOR_INDEX);
  ck_assert_int_eq(s->bg.index, 4);
  ck_assert_uint_eq(s->attrs, THEME_ATTR_BOLD | THEME_ATTR_UNDERLINE);
  ck_assert_int_eq(t.style[THEME_SELECTED].fg.kind, THEME_COLOR_DEFAULT);
  ck_assert_uint_eq(t.style[THEME_SELECTED].attrs, THEME_ATTR_REVERSE);
  ck_assert_int_eq(t.style[THEME_MAIN].fg.kind, THEME_COLOR_DEFAULT);
  ck_assert(t.from_file[THEME_TITLE]);
  ck_assert(!t.from_file[THEME_ERROR]);
  theme_fini(&t);
}
END_TEST

START_TEST(errors_name_file_and_line) {
  struct theme t;
  struct st_err err = {{0}};
  ck_assert_int_eq(theme_parse(&t, "main =\n\ntitle = #12345z\n", "bad.theme", &err), -1);
  ck_assert_str_eq(err.msg, "bad.theme:3: title: '#12345z': not a colour or attribute "
                            "(bold, reverse, underline, dim)");
  theme_fini(&t);
  ck_assert_int_eq(theme_parse(&t, "title #fff\n", "b.theme", &err), -1);
  ck_assert_str_eq(err.msg, "b.theme:1: expected 'role = value'");
  theme_fini(&t);
  ck_assert_int_eq(theme_parse(&t, "title = red on\n", "b.theme", &err), -1);
  ck_assert(strstr(err.msg, "b.theme:1:") && strstr(err.msg, "without a background"));
  theme_fini(&t);
  ck_assert_int_eq(theme_parse(&t, "title = red blue\n", "b.theme", &err), -1);
  ck_assert(strstr(err.msg, "second foreground"));
  theme_fini(&t);
  ck_assert_int_eq(theme_parse(&t, "= red\n", "b.theme", &err), -1);
  ck_assert(strstr(err.msg, "missing role name"));
  /* after an error the theme is the built-in default */
  struct theme def;
  theme_init_default(&def);
  ck_assert_mem_eq(t.style, def.style, sizeof def.style);
  theme_fini(&t);
  theme_fini(&def);
}
END_TEST

START_TEST(unknown_role_warns) {
  struct theme t;
  struct st_err err = {{0}};
  ck_assert_int_eq(theme_parse(&t, "main = red\nsparkle = blue\n", "w.theme", &err), 0);
  ck_assert_int_eq(t.n_warnings, 1);
  ck_assert_str_eq(t.warnings[0], "w.theme:2: unknown role 'sparkle' (ignored)");
  theme_fini(&t);
  ck_assert_int_eq(t.n_warnings, 0);
}
END_TEST

START_TEST(missing_roles_follow_fallbacks) {
  struct theme t, def;
  struct st_err err = {{0}};
  theme_init_default(&def);
  /* chart_output is set, chart_total and arm_off (-> chart_total -> chart_output) are not */
  ck_assert_int_eq(theme_parse(&t, "chart_output = #010203\nwarning = green\n", "f", &err), 0);
  ck_assert_int_eq(t.style[THEME_CHART_TOTAL].fg.r, 1);
  ck_assert_int_eq(t.style[THEME_ARM_OFF].fg.b, 3);
  ck_assert_int_eq(t.style[THEME_CHART_MARK].fg.index, 2);
  /* a role whose chain reaches no role from the file keeps its own default */
  ck_assert_mem_eq(&t.style[THEME_TITLE], &def.style[THEME_TITLE], sizeof def.style[0]);
  ck_assert_mem_eq(&t.style[THEME_ERROR], &def.style[THEME_ERROR], sizeof def.style[0]);
  /* a role set in the file is not overridden by its fallback */
  ck_assert_int_eq(theme_parse(&t, "chart_output = red\nchart_total = blue\n", "f", &err), 0);
  ck_assert_int_eq(t.style[THEME_CHART_TOTAL].fg.index, 4);
  theme_fini(&t);
  theme_fini(&def);
}
END_TEST

START_TEST(resolve_mono_and_color) {
  struct theme t;
  struct theme_resolved r;
  theme_init_default(&t);
  theme_resolve(&t, 256, true, &r);
  ck_assert(r.use_color);
  ck_assert_int_ge(r.fg[THEME_TITLE], 16);
  ck_assert_int_eq(r.fg[THEME_MAIN], -1);
  theme_resolve(&t, 8, true, &r);
  ck_assert_int_le(r.fg[THEME_TITLE], 7);
  ck_assert_int_ge(r.fg[THEME_TITLE], 0);
  /* NO_COLOR / mono: no colours, and the selection still shows */
  theme_resolve(&t, 256, false, &r);
  ck_assert(!r.use_color);
  for (int i = 0; i < THEME_ROLE_COUNT; i++) {
    ck_assert_int_eq(r.fg[i], -1);
    ck_assert_int_eq(r.bg[i], -1);
  }
  ck_assert(r.attrs[THEME_SELECTED] & THEME_ATTR_REVERSE);
  ck_assert(r.attrs[THEME_ERROR] & THEME_ATTR_BOLD);
  /* a terminal without colours is the same as mono */
  theme_resolve(&t, 2, true, &r);
  ck_assert(!r.use_color);
  ck_assert(r.attrs[THEME_SELECTED] & THEME_ATTR_REVERSE);
  theme_fini(&t);
}
END_TEST

START_TEST(every_role_has_a_name_and_valid_default) {
  struct theme t;
  theme_init_default(&t);
  for (int i = 0; i < THEME_ROLE_COUNT; i++) {
    const char *name = theme_role_name((enum theme_role)i);
    ck_assert_ptr_nonnull(name);
    /* every non-main default names a colour: a typo in the table would zero it */
    if (i != THEME_MAIN)
      ck_assert_int_ne(t.style[i].fg.kind, THEME_COLOR_DEFAULT);
  }
  ck_assert_ptr_null(theme_role_name(THEME_ROLE_COUNT));
  theme_fini(&t);
}
END_TEST

/* The bundled themes parse without warnings and set every role explicitly. */
START_TEST(bundled_themes_are_complete) {
  const char *names[] = {"default", "light", "high-contrast", "mono"};
  for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
    struct st_err err = {{0}};
    char *path = xasprintf("%s/themes/%s.theme", PROJECT_DIR, names[n]);
    struct theme t;
    ck_assert_msg(theme_load_file(&t, path, &err) == 0, "%s", err.msg);
    ck_assert_msg(t.n_warnings == 0, "%s: %s", path, t.n_warnings ? t.warnings[0] : "");
    for (int i = 0; i < THEME_ROLE_COUNT; i++)
      ck_assert_msg(t.from_file[i], "%s does not set %s", path,
                    theme_role_name((enum theme_role)i));
    theme_fini(&t);
    free(path);
  }
  /* default.theme matches the built-in defaults */
  struct theme file, builtin;
  struct st_err err = {{0}};
  char *path = xasprintf("%s/themes/default.theme", PROJECT_DIR);
  ck_assert_int_eq(theme_load_file(&file, path, &err), 0);
  theme_init_default(&builtin);
  ck_assert_mem_eq(file.style, builtin.style, sizeof builtin.style);
  theme_fini(&file);
  theme_fini(&builtin);
  free(path);
}
END_TEST

START_TEST(find_theme_in_search_path) {
  char tmpl[] = "/tmp/check_ui_theme.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(tmpl));
  char *a = xasprintf("%s/a", tmpl), *b = xasprintf("%s/b", tmpl);
  ck_assert_int_eq(mkdir(a, 0700), 0);
  ck_assert_int_eq(mkdir(b, 0700), 0);
  char *in_b = xasprintf("%s/ocean.theme", b);
  ck_assert_int_eq(file_write_atomic(in_b, "main =\n", 7, 0600, NULL), 0);
  char *env = xasprintf("%s:%s", a, b);
  struct st_err err = {{0}};

  char *found = theme_find_path_alloc("ocean", env, NULL, NULL, &err);
  ck_assert_ptr_nonnull(found);
  ck_assert_str_eq(found, in_b);
  free(found);
  /* a path is taken as is */
  found = theme_find_path_alloc(in_b, NULL, NULL, NULL, &err);
  ck_assert_str_eq(found, in_b);
  free(found);
  /* exe_dir/../themes */
  char *exe_dir = xasprintf("%s/bin", tmpl);
  char *themes_dir = xasprintf("%s/themes", tmpl);
  ck_assert_int_eq(mkdir(exe_dir, 0700), 0);
  ck_assert_int_eq(mkdir(themes_dir, 0700), 0);
  char *in_themes = xasprintf("%s/reef.theme", themes_dir);
  ck_assert_int_eq(file_write_atomic(in_themes, "", 0, 0600, NULL), 0);
  found = theme_find_path_alloc("reef", env, exe_dir, NULL, &err);
  ck_assert_ptr_nonnull(found);
  ck_assert(path_exists(found) && str_ends_with(found, "/../themes/reef.theme"));
  free(found);
  /* an installed binary: exe_dir/../share/servetop/themes, before ../themes */
  char *share = xasprintf("%s/share", tmpl), *share_st = xasprintf("%s/share/servetop", tmpl);
  char *installed = xasprintf("%s/share/servetop/themes", tmpl);
  ck_assert_int_eq(mkdir(share, 0700), 0);
  ck_assert_int_eq(mkdir(share_st, 0700), 0);
  ck_assert_int_eq(mkdir(installed, 0700), 0);
  char *in_installed = xasprintf("%s/reef.theme", installed);
  ck_assert_int_eq(file_write_atomic(in_installed, "", 0, 0600, NULL), 0);
  found = theme_find_path_alloc("reef", NULL, exe_dir, NULL, &err);
  ck_assert_ptr_nonnull(found);
  ck_assert(str_ends_with(found, "/../share/servetop/themes/reef.theme"));
  free(found);
  /* a build folder anywhere: the source tree's themes/ it was built from */
  found = theme_find_path_alloc("ocean", NULL, "/nonexistent/bin", b, &err);
  ck_assert_ptr_nonnull(found);
  ck_assert_str_eq(found, in_b);
  free(found);
  unlink(in_installed);
  rmdir(installed);
  rmdir(share_st);
  rmdir(share);
  free(in_installed);
  free(installed);
  free(share_st);
  free(share);
  /* not found: the message lists where it looked */
  ck_assert_ptr_null(theme_find_path_alloc("nope", env, NULL, NULL, &err));
  ck_assert(strstr(err.msg, "nope.theme") && strstr(err.msg, a) && strstr(err.msg, "./themes"));
  ck_assert_ptr_null(theme_find_path_alloc("/no/such.theme", NULL, NULL, NULL, &err));

  unlink(in_b);
  unlink(in_themes);
  rmdir(a);
  rmdir(b);
  rmdir(exe_dir);
  rmdir(themes_dir);
  rmdir(tmpl);
  free(a);
  free(b);
  free(in_b);
  free(env);
  free(exe_dir);
  free(themes_dir);
  free(in_themes);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_theme");
  TCase *tc = tcase_create("theme");
  tcase_add_test(tc, colour_tokens);
  tcase_add_test(tc, colour_mapping);
  tcase_add_test(tc, parse_roles_and_attributes);
  tcase_add_test(tc, errors_name_file_and_line);
  tcase_add_test(tc, unknown_role_warns);
  tcase_add_test(tc, missing_roles_follow_fallbacks);
  tcase_add_test(tc, resolve_mono_and_color);
  tcase_add_test(tc, every_role_has_a_name_and_valid_default);
  tcase_add_test(tc, bundled_themes_are_complete);
  tcase_add_test(tc, find_theme_in_search_path);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
