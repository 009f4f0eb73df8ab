/* Shared by the C tests that read captured /metrics text (tests/unit/
 * check_metrics.c, check_engine_signals.c): a fixture of tests/data/metrics/
 * parsed. Include after <check.h> and metrics/metrics.h. */
#ifndef SERVETOP_TESTS_PROM_FIXTURE_H
#define SERVETOP_TESTS_PROM_FIXTURE_H

#include <stdlib.h>

/* tests/data/metrics/<name> parsed into set (the test fails when it cannot be read). */
static inline void prom_fixture_parse(const char *name, struct prom_set *set) {
  char *path = xasprintf("%s/metrics/%s", TEST_DATA_DIR, name);
  size_t len = 0;
  struct st_err err;
  char *text = file_read_all(path, &len, &err);
  ck_assert_msg(text != NULL, "%s", err.msg);
  prom_parse(text, len, set);
  free(text);
  free(path);
}

#endif
