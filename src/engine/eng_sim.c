/* servetop sim: the simulated SGLang server, launched as `<servetop> sim`. It
 * takes SGLang's flags and prints, serves and counts what SGLang does, so
 * its readers are SGLang's; it also serves its own GPU memory figures. */
#include "engine/engine_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

/* This binary by its path, so the recorded command can be run again and a
 * wrapper of this process (valgrind) launches servetop, not itself;
 * /proc/self/exe when the path is gone (binary replaced or deleted). */
static char *self_exe_alloc(void) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) {
    path[n] = '\0';
    if (path[0] == '/' && access(path, X_OK) == 0)
      return xstrdup(path);
  }
  return xstrdup("/proc/self/exe");
}

/* servetop sim's own flags (src/cli/cmd_sim.c, checked by sim_config_validate
 * too), with the values it takes, so that --set sim-speed=0 is refused before
 * anything starts where the sim runs a recipe. */
const struct eng_flag eng_sim_own_flags[] = {
    {{"--sim-speed"}, ENG_KNOB_NONE, ENG_VALUE_POSITIVE},
    {{"--sim-fixed-ttft-ms"}, ENG_KNOB_NONE, ENG_VALUE_NONNEG},
    {{"--sim-fixed-tpot-ms"}, ENG_KNOB_NONE, ENG_VALUE_NONNEG},
    {{"--sim-health-delay-ms"}, ENG_KNOB_NONE, ENG_VALUE_NONNEG},
    {{"--sim-warmup-ms"}, ENG_KNOB_NONE, ENG_VALUE_NONNEG},
    {{"--sim-gpus"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--sim-accept-chat"}, ENG_KNOB_NONE, ENG_VALUE_PROBABILITY},
    {{"--sim-accept-random"}, ENG_KNOB_NONE, ENG_VALUE_PROBABILITY},
    {{"--sim-decode-efficiency"}, ENG_KNOB_NONE, ENG_VALUE_FRACTION},
    {{"--sim-prefill-efficiency"}, ENG_KNOB_NONE, ENG_VALUE_FRACTION},
    {{"--sim-gpu"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--sim-model"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--sim-seed"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--sim-fault"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--sim-trace"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--decode-log-interval"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{NULL}, ENG_KNOB_NONE, ENG_VALUE_ANY},
};

static int sim_program_words(struct launch_cmd *cmd, const struct eng_target *t,
                             struct st_err *err) {
  (void)err;
  if (t->servetop_exe) {
    launch_cmd_add_arg(cmd, t->servetop_exe);
  } else {
    char *self = self_exe_alloc();
    launch_cmd_add_arg(cmd, self);
    free(self);
  }
  launch_cmd_add_arg(cmd, "sim");
  return 0;
}

static bool sim_probe(char *why, size_t why_bytes) {
  (void)why, (void)why_bytes;
  return true; /* it is this binary */
}

const struct eng_ops eng_sim_ops = {
    .name = "sim",
    .title = "servetop sim",
    .simulated = true,
    .program = "servetop sim",
    .flags = eng_sglang_flags,
    .shared_flags = true,
    .program_words = sim_program_words,
    .model_flag = "--model-path",
    .probe = sim_probe,
    .ready_line = ENG_SGLANG_READY_LINE,
    .ready_timeout_ms = 120000,
    .parse_log_line = eng_sglang_parse_log_line,
    /* owns no /metrics names: a scrape of the sim reads as SGLang, as it should */
    .read_metrics = eng_sglang_read_metrics,
    .summarize = eng_sglang_summarize,
    .query_info = eng_sglang_query_info,
};
