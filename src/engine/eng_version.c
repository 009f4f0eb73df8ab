/* Engine versions from container images, and the one table of rules whose
 * truth depends on the version (the recipe doctor reads it). Every row says
 * the range it applies to and what says so; docs/recipes.md cites the same. */
#include "engine/engine_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- the table */
static const struct eng_version_rule rules[] = {
    /* SGLang Spec V2 (the overlap scheduler for EAGLE/NEXTN topk 1) was off
     * by default up to v0.5.10.post1 (2026-04-09): InferenceX #1017
     * (2026-04-14) turned it on by hand on lmsysorg/sglang:v0.5.10.post1 and
     * measured the gain; the seed review did the same on nightly-dev-20260402.
     * SGLang PR #21062 ("Use spec v2 by default", merged 2026-04-29, commit
     * 79dbfe45) made it the default; v0.5.11 (2026-05-05) is the first release
     * with it and lists it among its highlights. Nightlies up to the day of
     * the merge are judged as V1. */
    {
        .engine = "sglang",
        .rule = "SGLANG_SPEC_V2",
        .rule_id = "L06",
        .level = ENG_VRULE_WARNING,
        .applies = {.from = {0, 0, 0},
                    .until = {0, 5, 11},
                    .from_date = 0,
                    .until_date = 20260430,
                    .text = "SGLang up to v0.5.10.post1 and nightlies up to 2026-04-29, where Spec "
                            "V2 was not yet the default"},
        .when_unknown = true,
        .source = "SGLang PR #21062 (V2 the default, merged 2026-04-29; first release v0.5.11); "
                  "InferenceX #1017 (2026-04-14, v0.5.10.post1)",
        .check = eng_sglang_spec_v2_missing,
    },
    /* SGLang PR #27964 ("[Spec] Retire Spec V1", merged 2026-06-11, commit
     * c0480a88) removed the variable: a removal notice warns anyone still
     * setting it. v0.5.13 (published 2026-06-13) was cut from
     * release/v0.5.13 before the merge (its notes list no removal; v0.5.14's
     * list PRs merged that day before #27964), so v0.5.14 (2026-06-26) is the
     * first release without it. From v0.5.11 to v0.5.13 the variable is
     * merely redundant (V2 is the default): no finding. Nightlies from the day
     * after the merge. */
    {
        .engine = "sglang",
        .rule = "SGLANG_SPEC_V2",
        .rule_id = "L06",
        .level = ENG_VRULE_NOTE,
        .applies = {.from = {0, 5, 14},
                    .until = {0, 0, 0},
                    .from_date = 20260612,
                    .until_date = 0,
                    .text = "SGLang from v0.5.14 and nightlies from 2026-06-12, after "
                            "SGLANG_ENABLE_SPEC_V2 was retired (PR #27964, 2026-06-11)"},
        .when_unknown = false,
        .source = "SGLang PR #27964 (\"[Spec] Retire Spec V1\", merged 2026-06-11; first release "
                  "without the variable v0.5.14)",
        .check = eng_sglang_spec_v2_retired,
    },
    /* vLLM deprecated --disable-log-requests for --enable-log-requests, request
     * logging off by default (vLLM PR #21739, 2025; downstream projects dropped
     * the flag for v0.11 in September 2025: triton vllm_backend #95, kserve
     * #4883), and removed it in v0.17.0 (llm-d-benchmark #781, 2026-03-09).
     * InferenceX ran it on v0.15.1 and v0.16.0 until #1371 (2026-05-13). */
    {
        .engine = "vllm",
        .rule = "ENGINE_FLAG_RETIRED",
        .rule_id = "L23",
        .level = ENG_VRULE_NOTE,
        .applies = {.from = {0, 11, 0},
                    .until = {0, 17, 0},
                    .text = "vLLM v0.11.0 to v0.16.x, where the flag is deprecated"},
        .when_unknown = false,
        .source = "vLLM PR #21739 (deprecated for --enable-log-requests)",
        .check = eng_vllm_disable_log_requests,
    },
    {
        .engine = "vllm",
        .rule = "ENGINE_FLAG_RETIRED",
        .rule_id = "L23",
        .level = ENG_VRULE_WARNING,
        .applies = {.from = {0, 17, 0},
                    .until = {0, 0, 0},
                    .text = "vLLM from v0.17.0, which no longer has the flag"},
        .when_unknown = false,
        .source = "removed in vLLM v0.17.0 (vLLM PR #21739 deprecated it; llm-d-benchmark #781)",
        .check = eng_vllm_disable_log_requests,
    },
};

size_t eng_version_rule_count(void) {
  return ST_ARRAY_LEN(rules);
}

const struct eng_version_rule *eng_version_rule_at(size_t i) {
  return i < ST_ARRAY_LEN(rules) ? &rules[i] : NULL;
}

/* ---------------------------------------------------------------- reading tags */
/* Digits at s (at most max_digits): their value, and *end after them; -1: none. */
static long read_num(const char *s, const char **end, int max_digits) {
  long v = 0;
  int n = 0;
  while (isdigit((unsigned char)s[n]) && n < max_digits)
    v = v * 10 + (s[n++] - '0');
  *end = s + n;
  return n ? v : -1;
}

static bool is_sep(char c) {
  return c == '\0' || c == '-' || c == '_' || c == '.' || c == '+';
}

/* major.minor.patch[.postN|-postN|postN] starting at s (after an optional v). */
static bool read_release(const char *s, struct eng_version *v) {
  const char *p = s, *e;
  if (*p == 'v' || *p == 'V')
    p++;
  long a = read_num(p, &e, 4);
  if (a < 0 || *e != '.')
    return false;
  long b = read_num(e + 1, &e, 4);
  if (b < 0 || *e != '.')
    return false;
  long c = read_num(e + 1, &e, 4);
  if (c < 0)
    return false;
  long post = 0;
  const char *q = e;
  if (*q == '.' || *q == '-')
    q++;
  if (strncmp(q, "post", 4) == 0) {
    const char *pe;
    long n = read_num(q + 4, &pe, 4);
    if (n >= 0 && is_sep(*pe)) {
      post = n;
      e = pe;
    }
  }
  if (!is_sep(*e) || isdigit((unsigned char)*e))
    return false;
  v->release = true;
  v->major = (int)a, v->minor = (int)b, v->patch = (int)c, v->post = (int)post;
  return true;
}

/* A YYYYMMDD token (2020..2099, month and day in range) at s. */
static int read_date(const char *s) {
  const char *e;
  long d = read_num(s, &e, 9);
  if (e - s != 8 || !is_sep(*e))
    return 0;
  int y = (int)(d / 10000), m = (int)(d / 100 % 100), day = (int)(d % 100);
  return y >= 2020 && y <= 2099 && m >= 1 && m <= 12 && day >= 1 && day <= 31 ? (int)d : 0;
}

static bool owns_repo(const struct eng_ops *e, const char *repo) {
  if (!e)
    return false;
  for (const char *const *r = e->image_repos; r && *r; r++)
    if (strcmp(repo, *r) == 0)
      return true;
  return false;
}

void eng_version_of_image(const struct eng_ops *e, const char *image, struct eng_version *out) {
  memset(out, 0, sizeof *out);
  if (!image || !*image) {
    snprintf(out->text, sizeof out->text, "unknown (no image)");
    return;
  }
  /* repository and tag: enroot writes '#' for the registry's '/' */
  char repo[128], tag[128];
  const char *at = strchr(image, '@');
  size_t len = at ? (size_t)(at - image) : strlen(image);
  const char *slash = NULL;
  for (size_t i = 0; i < len; i++)
    if (image[i] == '/' || image[i] == '#')
      slash = image + i;
  const char *colon = memchr(slash ? slash : image, ':', len - (size_t)((slash ? slash : image) - image));
  size_t repo_len = colon ? (size_t)(colon - image) : len;
  snprintf(repo, sizeof repo, "%.*s", (int)(repo_len < sizeof repo ? repo_len : sizeof repo - 1),
           image);
  for (char *c = repo; *c; c++)
    if (*c == '#')
      *c = '/';
  const char *name = str_starts_with(repo, "docker.io/") ? repo + 10 : repo;
  size_t tag_len = colon ? len - repo_len - 1 : 0;
  snprintf(tag, sizeof tag, "%.*s", (int)(tag_len < sizeof tag ? tag_len : sizeof tag - 1),
           colon ? colon + 1 : "");
  if (!owns_repo(e, name) || !tag[0]) {
    snprintf(out->text, sizeof out->text, "unknown (%.80s)", image);
    return;
  }
  out->nightly = strstr(tag, "nightly") != NULL || strstr(tag, "dev") != NULL;
  /* the first release number and the first date token, at token starts */
  for (const char *p = tag; *p; p++) {
    bool start = p == tag || is_sep(p[-1]) || (p[-1] == 'v' && (p - 1 == tag || is_sep(p[-2])));
    if (!start)
      continue;
    if (!out->release && isdigit((unsigned char)*p) && read_release(p, out))
      continue;
    if (!out->date && isdigit((unsigned char)*p))
      out->date = read_date(p);
  }
  out->known = out->release || out->date;
  char ver[40] = "";
  if (out->release)
    snprintf(ver, sizeof ver, "v%d.%d.%d%s", out->major, out->minor, out->patch,
             out->post ? ".post" : "");
  if (out->release && out->post)
    snprintf(ver + strlen(ver), sizeof ver - strlen(ver), "%d", out->post);
  if (out->release && out->nightly)
    snprintf(out->text, sizeof out->text, "%s dev (%.60s)", ver, image);
  else if (out->release)
    snprintf(out->text, sizeof out->text, "%s (%.70s)", ver, image);
  else if (out->date)
    snprintf(out->text, sizeof out->text, "nightly of %04d-%02d-%02d (%.60s)", out->date / 10000,
             out->date / 100 % 100, out->date % 100, image);
  else
    snprintf(out->text, sizeof out->text, "unknown (%.80s)", image);
}

static int cmp3(const int a[3], int b0, int b1, int b2) {
  int b[3] = {b0, b1, b2};
  for (int i = 0; i < 3; i++)
    if (a[i] != b[i])
      return a[i] < b[i] ? -1 : 1;
  return 0;
}

static bool release_in(const struct eng_version *v, const struct eng_version_range *range) {
  bool open_until = range->until[0] == 0 && range->until[1] == 0 && range->until[2] == 0;
  return cmp3(range->from, v->major, v->minor, v->patch) <= 0 &&
         (open_until || cmp3(range->until, v->major, v->minor, v->patch) > 0);
}

bool eng_version_in_range(const struct eng_version *v, const struct eng_version_range *range) {
  if (!v->known)
    return false;
  if (v->date && (v->nightly || !v->release)) /* a nightly: its date is what counts */
    return (!range->from_date || v->date >= range->from_date) &&
           (!range->until_date || v->date < range->until_date);
  return release_in(v, range); /* a release (dated build or undated dev: its number) */
}
