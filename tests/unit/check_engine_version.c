/* engine: versions read from container images (release tags, -postN, CUDA
 * and ROCm variants, dated builds, nightlies, dev images, unknown ones) and
 * the version-bound rules' ranges. */
#include "engine/engine.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static struct eng_version of(const char *engine, const char *image) {
  struct eng_version v;
  eng_version_of_image(eng_find(engine), image, &v);
  return v;
}

static void release_is(const char *engine, const char *image, int a, int b, int c, int post) {
  struct eng_version v = of(engine, image);
  ck_assert_msg(v.known && v.release, "%s: %s", image, v.text);
  ck_assert_msg(v.major == a && v.minor == b && v.patch == c && v.post == post,
                "%s: read %d.%d.%d post %d", image, v.major, v.minor, v.patch, v.post);
}

START_TEST(images_say_their_version) {
  release_is("sglang", "lmsysorg/sglang:v0.5.12", 0, 5, 12, 0);
  release_is("sglang", "lmsysorg/sglang:v0.5.10.post1", 0, 5, 10, 1);
  release_is("sglang", "lmsysorg/sglang:v0.5.12.post1-cu130", 0, 5, 12, 1);
  release_is("sglang", "lmsysorg/sglang:v0.5.9-rocm700-mi35x", 0, 5, 9, 0);
  release_is("sglang", "lmsysorg/sglang:v0.5.9-cu129-amd64", 0, 5, 9, 0);
  release_is("sglang", "docker.io/lmsysorg/sglang:v0.5.14-cu130", 0, 5, 14, 0);
  release_is("sglang", "lmsysorg/sglang:0.4.6-post5", 0, 4, 6, 5);
  release_is("sglang", "rocm/sgl-dev:sglang-0.5.9-rocm720-mi35x-mori-0227-2", 0, 5, 9, 0);
  release_is("vllm", "vllm/vllm-openai:v0.25.1", 0, 25, 1, 0);
  release_is("vllm", "vllm/vllm-openai-rocm:v0.22.0", 0, 22, 0, 0);
  /* a release's dated build: judged by its release number */
  struct eng_version v = of("sglang", "lmsysorg/sglang-rocm:v0.5.12-rocm720-mi35x-20260517");
  ck_assert(v.release && !v.nightly && v.minor == 5 && v.patch == 12 && v.date == 20260517);
  /* dated nightlies */
  v = of("sglang", "lmsysorg/sglang:nightly-dev-20260402");
  ck_assert(v.known && !v.release && v.nightly && v.date == 20260402);
  ck_assert_ptr_nonnull(strstr(v.text, "nightly of 2026-04-02"));
  v = of("sglang", "lmsysorg/sglang:nightly-dev-cu13-20260605-7dc73766");
  ck_assert(v.known && v.nightly && v.date == 20260605);
  /* an undated dev image of a release */
  v = of("sglang", "lmsysorg/sglang:sgl-dev-v0.5.2-rocm7.0-mi30x");
  ck_assert(v.release && v.nightly && v.patch == 2 && v.date == 0);
  /* enroot's '#' for the registry's '/' */
  release_is("sglang", "docker.io#lmsysorg/sglang:v0.5.11-cu130", 0, 5, 11, 0);
  /* unknown, and says so */
  static const char *const unknown[][2] = {
      {"sglang", "lmsysorg/sglang:latest"},
      {"sglang", "lmsysorg/sglang:dev-nightly-0820"},
      {"sglang", "lmsysorg/sglang:deepseek-v4-hopper@sha256:1bf5d508ab110cc0fe"},
      {"sglang", "docker.io/lmsysorg/sglang@sha256:5f1c0d2b8e7a4c3d9e6f"},
      {"sglang", "vllm/vllm-openai:v0.25.0"},          /* another engine's image */
      {"sglang", "/lustre/images/lmsysorg+sglang+v0.5.14.sqsh"},
      {"vllm", "vllm/vllm-openai:nightly-09663abde0f50944a8d5ea30120666024b503faa"},
      {"vllm", "vllm/vllm-openai:minimax-m3"},
      {"vllm", "nvcr.io#nvidia/vllm:25.09-py3"},
      {"sglang", ""},
  };
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    v = of(unknown[i][0], unknown[i][1]);
    ck_assert_msg(!v.known, "%s read as %s", unknown[i][1], v.text);
    ck_assert_msg(strncmp(v.text, "unknown", 7) == 0, "%s: %s", unknown[i][1], v.text);
  }
  eng_version_of_image(eng_find("sglang"), NULL, &v);
  ck_assert_str_eq(v.text, "unknown (no image)");
}
END_TEST

/* The SGLANG_SPEC_V2 rows: a warning up to v0.5.10.post1 and nightlies up to
 * 2026-04-14, a note from v0.5.13 and nightlies from 2026-06-12, nothing in
 * between (V2 the default, the variable still read). */
static const struct eng_version_rule *spec_v2_row(enum eng_vrule_level level) {
  for (size_t i = 0; i < eng_version_rule_count(); i++) {
    const struct eng_version_rule *r = eng_version_rule_at(i);
    if (strcmp(r->rule, "SGLANG_SPEC_V2") == 0 && r->level == level)
      return r;
  }
  ck_abort_msg("no SGLANG_SPEC_V2 row");
  return NULL;
}

START_TEST(spec_v2_rows_cover_their_releases) {
  const struct eng_version_rule *warn = spec_v2_row(ENG_VRULE_WARNING),
                                *note = spec_v2_row(ENG_VRULE_NOTE);
  static const struct {
    const char *image;
    bool warn, note;
  } cases[] = {
      {"lmsysorg/sglang:v0.5.9-cu129-amd64", true, false},
      {"lmsysorg/sglang:v0.5.10.post1", true, false},
      {"lmsysorg/sglang:nightly-dev-20260402", true, false},
      {"lmsysorg/sglang:nightly-dev-20260414", true, false},
      {"lmsysorg/sglang:nightly-dev-20260429", true, false},
      {"lmsysorg/sglang:nightly-dev-20260430", false, false},
      {"lmsysorg/sglang:v0.5.11-cu130", false, false},
      {"lmsysorg/sglang:v0.5.12.post1-cu130", false, false},
      {"lmsysorg/sglang-rocm:v0.5.12-rocm720-mi35x-20260517", false, false},
      {"lmsysorg/sglang:nightly-dev-cu13-20260605-7dc73766", false, false},
      {"lmsysorg/sglang:nightly-dev-cu13-20260611-aaaa", false, false},
      {"lmsysorg/sglang:nightly-dev-cu13-20260612-aaaa", false, true},
      {"lmsysorg/sglang:v0.5.13-cu130", false, false},
      {"lmsysorg/sglang:v0.5.13.post1-cu130", false, false},
      {"lmsysorg/sglang:v0.5.14-cu130", false, true},
      {"lmsysorg/sglang:v0.5.17", false, true},
      {"lmsysorg/sglang:latest", false, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct eng_version v;
    eng_version_of_image(eng_find("sglang"), cases[i].image, &v);
    ck_assert_msg(eng_version_in_range(&v, &warn->applies) == cases[i].warn, "%s: warning",
                  cases[i].image);
    ck_assert_msg(eng_version_in_range(&v, &note->applies) == cases[i].note, "%s: note",
                  cases[i].image);
  }
  ck_assert(warn->when_unknown && !note->when_unknown);
  ck_assert_ptr_nonnull(strstr(note->source, "#27964"));
  /* the checks: the warning's wants EAGLE/NEXTN topk 1 without the variable,
   * the note's the variable set at all */
  char *eagle[] = {"--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "1"};
  char *env_on[] = {"SGLANG_ENABLE_SPEC_V2=1"};
  struct eng_vrule_hit hit;
  memset(&hit, 0, sizeof hit);
  ck_assert(warn->check(eagle, 4, NULL, 0, &hit));
  ck_assert(hit.at_launch);
  ck_assert_str_eq(hit.env_name, "SGLANG_ENABLE_SPEC_V2");
  memset(&hit, 0, sizeof hit);
  ck_assert(!warn->check(eagle, 4, env_on, 1, &hit));
  ck_assert(!note->check(eagle, 4, NULL, 0, &hit));
  ck_assert(note->check(eagle, 4, env_on, 1, &hit));
  ck_assert_ptr_nonnull(strstr(hit.what, "it can go"));
}
END_TEST

/* vLLM's --disable-log-requests: deprecated (a note) from v0.11.0, gone (a
 * warning: the server would refuse it) from v0.17.0, nothing before. */
START_TEST(vllm_disable_log_requests_rows) {
  char *argv[] = {"Qwen/Qwen3", "--disable-log-requests", "--tp", "8"};
  char *clean[] = {"Qwen/Qwen3", "--tp", "8"};
  static const struct {
    const char *image;
    int level; /* -1: no row applies */
  } cases[] = {
      {"vllm/vllm-openai:v0.10.1", -1},
      {"vllm/vllm-openai:v0.11.0", ENG_VRULE_NOTE},
      {"vllm/vllm-openai:v0.15.1", ENG_VRULE_NOTE},
      {"vllm/vllm-openai-rocm:v0.16.0", ENG_VRULE_NOTE},
      {"vllm/vllm-openai:v0.17.0", ENG_VRULE_WARNING},
      {"vllm/vllm-openai:v0.25.1", ENG_VRULE_WARNING},
      {"vllm/vllm-openai:minimax-m3", -1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    struct eng_version v;
    eng_version_of_image(eng_find("vllm"), cases[c].image, &v);
    int got = -1;
    for (size_t i = 0; i < eng_version_rule_count(); i++) {
      const struct eng_version_rule *r = eng_version_rule_at(i);
      if (strcmp(r->engine, "vllm") != 0 || !eng_version_in_range(&v, &r->applies))
        continue;
      struct eng_vrule_hit hit;
      memset(&hit, 0, sizeof hit);
      ck_assert(!r->check(clean, 3, NULL, 0, &hit));
      ck_assert(r->check(argv, 4, NULL, 0, &hit));
      ck_assert_str_eq(hit.flag, "disable-log-requests");
      ck_assert_int_eq(got, -1); /* one row per version */
      got = (int)r->level;
    }
    ck_assert_msg(got == cases[c].level, "%s: level %d", cases[c].image, got);
  }
}
END_TEST

/* Every row names an engine of the table, a range and its source. */
START_TEST(rule_rows_are_whole) {
  ck_assert_uint_gt(eng_version_rule_count(), 0);
  for (size_t i = 0; i < eng_version_rule_count(); i++) {
    const struct eng_version_rule *r = eng_version_rule_at(i);
    ck_assert_ptr_nonnull(eng_find(r->engine));
    ck_assert(r->rule && *r->rule && r->rule_id && *r->rule_id && r->applies.text &&
              *r->applies.text && r->source && *r->source && r->check);
  }
  ck_assert_ptr_null(eng_version_rule_at(eng_version_rule_count()));
}
END_TEST

int main(void) {
  Suite *s = suite_create("engine_version");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, images_say_their_version);
  tcase_add_test(tc, spec_v2_rows_cover_their_releases);
  tcase_add_test(tc, vllm_disable_log_requests_rows);
  tcase_add_test(tc, rule_rows_are_whole);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
