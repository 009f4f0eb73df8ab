/* Shared by the C tests of the run API (tests/integration/it_run.c,
 * it_restart.c, it_llamacpp.c): a recipe folder loaded, a scratch results
 * folder made and removed, a run's configuration, snapshots polled until a
 * condition holds.
 * Include after <check.h> and run/run.h. */
#ifndef SERVETOP_TESTS_RUN_CHECK_H
#define SERVETOP_TESTS_RUN_CHECK_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The recipes of dir (the test fails when they do not load). */
static inline struct recipe_set *run_check_recipes(const char *dir) {
  struct recipe_set *set = recipe_set_new();
  struct st_err err = {{0}};
  ck_assert_msg(recipe_set_add_configs_dir(set, dir, &err) == 0, "%s: %s", dir, err.msg);
  return set;
}

/* A new empty folder /tmp/<name>_XXXXXX (heap; run_check_remove_dir frees it). */
static inline char *run_check_results_dir(const char *name) {
  char *dir = xasprintf("/tmp/%s_XXXXXX", name);
  ck_assert_ptr_nonnull(mkdtemp(dir));
  return dir;
}

static inline int run_check_remove_entry(const char *path, const struct stat *sb, int type,
                                         struct FTW *ftw) {
  (void)sb, (void)type, (void)ftw;
  return remove(path);
}

/* Removes dir and everything in it, and frees the name. */
static inline void run_check_remove_dir(char *dir) {
  nftw(dir, run_check_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  free(dir);
}

/* cfg for the recipe called name in set (the test fails when there is none),
 * its run folders under results; the engine is the recipe's. */
static inline void run_check_config(struct run_config *cfg, const struct recipe_set *set,
                                    const char *name, const char *results) {
  run_config_init(cfg);
  cfg->recipe = recipe_set_find(set, name);
  ck_assert_msg(cfg->recipe != NULL, "no recipe %s", name);
  cfg->engine = eng_find(cfg->recipe->engine);
  cfg->results_dir = results;
}

/* The run's server is `servetop sim` ($SERVETOP) whatever the recipe's engine. */
static inline void run_check_on_sim(struct run_config *cfg) {
  cfg->engine = eng_sim();
  cfg->servetop_exe = getenv("SERVETOP");
  ck_assert_msg(cfg->servetop_exe != NULL, "SERVETOP is not set");
}

/* Polls snapshots into s until pred holds (true) or timeout_ms passes (false). */
static inline bool run_check_wait(struct run *run, struct snap_run *s, int timeout_ms,
                                  bool (*pred)(const struct snap_run *)) {
  uint64_t seq = 0;
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    if (run_snapshot(run, s, &seq) && pred(s))
      return true;
    usleep(20 * 1000);
  }
  return false;
}

#endif
