/* bench_recipe_load: time to load and lint a full InferenceX checkout.
 *
 * Builds checkouts in a temp dir and times recipe_set_add_inferencex +
 * recipe_lint (best and median of several runs):
 *  1. synthetic: a ~10k-line master config of 240 single-node entries, five
 *     runner labels with their launchers, and one launch script per route;
 *  2. real: the master configs and runners.yaml from $SHARED_DIR/data/inferencex
 *     (symlinked, never copied) with a generated launcher per runner family and
 *     a generated script for every single-node route (skipped when absent);
 *  3. checkout: the real checkout itself, read in place: its own launchers,
 *     launch scripts and workflow (what `servetop lint --inferencex` reads).
 * Wall time and this process's CPU time (less noisy on a shared machine).
 * Usage: bench_recipe_load [runs]  (default 7). Prints one line per checkout. */
#include "recipe/recipe.h"
#include "util/util.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void write_file(const char *root, const char *rel, const char *text) {
  char *path = path_join_alloc(root, rel);
  char *dir = xstrdup(path);
  *strrchr(dir, '/') = '\0';
  struct st_err err;
  if (path_mkdir_p(dir, 0755, &err) < 0 ||
      file_write_atomic(path, text, strlen(text), 0644, &err) < 0) {
    fprintf(stderr, "bench_recipe_load: %s\n", err.msg);
    exit(1);
  }
  free(dir);
  free(path);
}

/* A tagged-first launcher with the legacy fallback, as b200/h200-dgxc write it. */
/* A format (a macro, so printf-format checking sees a literal). */
#define LAUNCHER_FMT \
    "#!/usr/bin/env bash\n" \
    "# generated launcher for %s runners\n" \
    "set -euo pipefail\n" \
    "export PORT=8888\n" \
    "MODEL_CODE=\"${EXP_NAME%%%%_*}\"\n" \
    "FRAMEWORK_SUFFIX=$([[ \"$FRAMEWORK\" == \"trt\" ]] && printf '_trt' || printf '')\n" \
    "SPEC_SUFFIX=$([[ \"$SPEC_DECODING\" == \"mtp\" ]] && printf '_mtp' || printf '')\n" \
    "if [[ \"$IS_MULTINODE\" == \"true\" ]]; then\n" \
    "  srtctl apply -f \"$CONFIG_FILE\"\n" \
    "else\n" \
    "  B=\"benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_%s\"\n" \
    "  if [[ -f \"${B}_${FRAMEWORK}${SPEC_SUFFIX}.sh\" ]]; then\n" \
    "    SCRIPT=\"${B}_${FRAMEWORK}${SPEC_SUFFIX}.sh\"\n" \
    "  else\n" \
    "    SCRIPT=\"${B}${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh\"\n" \
    "  fi\n" \
    "  srun --export=ALL --container-image=\"$IMAGE\" bash \"$SCRIPT\"\n" \
    "fi\n"

static char *script_text(const char *framework, bool mtp) {
  struct sbuf sb = {0};
  sbuf_puts(&sb, "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n"
                 "check_env_vars MODEL TP EP_SIZE CONC ISL OSL MAX_MODEL_LEN RESULT_FILENAME\n"
                 "case \"$CONC\" in\n  1|2|4) MAX_RUN=16 ;;\n  *) MAX_RUN=$CONC ;;\nesac\n"
                 "PARALLEL_ARGS=(--tp \"$TP\")\n"
                 "if [[ \"$EP_SIZE\" -gt 1 ]]; then\n  PARALLEL_ARGS+=(--ep-size \"$EP_SIZE\")\nfi\n");
  if (strcmp(framework, "vllm") == 0) {
    sbuf_puts(&sb, "vllm serve \"$MODEL\" --port \"$PORT\" \\\n"
                   "  --tensor-parallel-size \"$TP\" \\\n  --gpu-memory-utilization 0.9 \\\n"
                   "  --max-num-seqs \"$MAX_RUN\" \\\n  --max-model-len \"$MAX_MODEL_LEN\" \\\n");
    if (mtp)
      sbuf_puts(&sb, "  --speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":3}' \\\n");
    sbuf_puts(&sb, "  > /workspace/server.log 2>&1 &\n");
  } else {
    if (mtp)
      sbuf_puts(&sb, "export SGLANG_ENABLE_SPEC_V2=1\n"
                     "SPEC_ARGS=(--speculative-algorithm EAGLE --speculative-num-steps 3\n"
                     "  --speculative-eagle-topk 1 --speculative-num-draft-tokens 4)\n");
    else
      sbuf_puts(&sb, "SPEC_ARGS=()\n");
    sbuf_puts(&sb, "PYTHONNOUSERSITE=1 python3 -m sglang.launch_server \\\n"
                   "  --model-path \"$MODEL\" --port \"$PORT\" \\\n  \"${PARALLEL_ARGS[@]}\" \\\n"
                   "  --mem-fraction-static 0.85 \\\n  --max-running-requests \"$MAX_RUN\" \\\n"
                   "  --cuda-graph-max-bs \"$MAX_RUN\" \\\n  --chunked-prefill-size 16384 \\\n"
                   "  --context-length \"$MAX_MODEL_LEN\" \\\n  \"${SPEC_ARGS[@]}\" \\\n"
                   "  > /workspace/server.log 2>&1 &\n");
  }
  sbuf_puts(&sb, "wait_for_server_ready --port \"$PORT\" --server-log /workspace/server.log "
                 "--server-pid $!\n"
                 "run_benchmark_serving --model \"$MODEL\" --port \"$PORT\" --backend vllm \\\n"
                 "  --input-len \"$ISL\" --output-len \"$OSL\" --random-range-ratio "
                 "\"$RANDOM_RANGE_RATIO\" \\\n  --num-prompts \"$((CONC * 10))\" --max-concurrency "
                 "\"$CONC\" \\\n  --result-filename \"$RESULT_FILENAME\" --result-dir /workspace/");
  sbuf_puts(&sb, mtp ? " \\\n  --use-chat-template\n" : "\n");
  return sbuf_take(&sb);
}

static size_t n_scripts;

/* The script every launcher family resolves to for this recipe. */
static void write_script_for(const char *root, const struct recipe *r) {
  const char *gpu = r->gpu;
  char *rel = xasprintf("benchmarks/single_node/%s%s_%s_%s_%s%s.sh",
                        r->scenario == RECIPE_SCENARIO_AGENTIC ? "agentic/" : "fixed_seq_len/",
                        r->model_prefix, r->precision, gpu, r->framework,
                        r->spec == RECIPE_SPEC_MTP ? "_mtp" : "");
  char *path = path_join_alloc(root, rel);
  if (!path_exists(path)) {
    char *text = script_text(r->engine, r->spec != RECIPE_SPEC_NONE);
    write_file(root, rel, text);
    free(text);
    n_scripts++;
  }
  free(path);
  free(rel);
}

static void write_synthetic(const char *root) {
  static const char *const gpus[] = {"h100", "h200", "b200", "b300", "mi355x"};
  struct sbuf runners = {0}, master = {0};
  sbuf_puts(&runners, "labels:\n");
  for (size_t g = 0; g < ST_ARRAY_LEN(gpus); g++) {
    sbuf_printf(&runners, "  %s:\n", gpus[g]);
    for (int k = 0; k < 3; k++)
      sbuf_printf(&runners, "    - %s-fam%d_%02d\n", gpus[g], k, k);
    for (int k = 0; k < 3; k++) {
      char *fam = xasprintf("runners/launch_%s-fam%d.sh", gpus[g], k);
      char *text = xasprintf(LAUNCHER_FMT, gpus[g], gpus[g]);
      write_file(root, fam, text);
      free(fam);
      free(text);
    }
  }
  write_file(root, "configs/runners.yaml", runners.data);
  static const char *const fws[] = {"sglang", "vllm"};
  static const char *const precs[] = {"fp8", "fp4"};
  for (int m = 0; m < 12; m++)
    for (size_t g = 0; g < ST_ARRAY_LEN(gpus); g++)
      for (size_t p = 0; p < 2; p++)
        for (size_t f = 0; f < 2; f++)
          for (int mtp = 0; mtp < 2; mtp++) {
            if ((m + (int)g) % 2)
              continue; /* 240 entries */
            sbuf_printf(&master,
                        "# model%d on %s, %s, %s%s: provenance notes as InferenceX keeps them\n"
                        "# upstream recipe: https://example.invalid/recipes/model%d/%s\n"
                        "# sweep: tp8/ep8 for throughput, tp4 and tp2 for latency; conc ranges\n"
                        "# double from conc-start and clamp at conc-end (generate_sweep_configs)\n"
                        "# image pinned to the release the sweep was proven on; bump it together\n"
                        "# with a perf-changelog entry; evals run at the highest conc >= 16\n"
                        "# reviewed: chat template on MTP, SPEC_V2 exported, max-running-requests\n"
                        "model%d-%s-%s-%s%s:\n  image: lmsysorg/sglang:v0.5.14-cu130\n"
                        "  model: org/Model%d-%s\n  model-prefix: model%d\n  runner: %s\n"
                        "  precision: %s\n  framework: %s\n  multinode: false\n  scenarios:\n"
                        "    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n"
                        "      search-space:\n"
                        "      - { tp: 8, ep: 8, conc-start: 4, conc-end: 64%s }\n"
                        "      - { tp: 4, ep: 1, conc-start: 1, conc-end: 16%s }\n"
                        "      - { tp: 2, conc-list: [4, 8, 16, 32]%s }\n"
                        "      - tp: 8\n        ep: 8\n        dp-attn: true\n"
                        "        conc-list: [64, 128, 256]\n%s"
                        "      - tp: 4\n        ep: 4\n        conc-start: 8\n"
                        "        conc-end: 128\n%s"
                        "      - tp: 2\n        ep: 2\n        dp-attn: false\n"
                        "        conc-start: 2\n        conc-end: 32\n%s"
                        "    - isl: 1024\n      osl: 8192\n      search-space:\n"
                        "      - { tp: 8, ep: 8, conc-start: 4, conc-end: 256%s }\n\n",
                        m, gpus[g], precs[p], fws[f], mtp ? " mtp" : "", m, gpus[g], m, precs[p],
                        gpus[g], fws[f], mtp ? "-mtp" : "", m, precs[p], m, gpus[g], precs[p],
                        fws[f], mtp ? ", spec-decoding: mtp" : "",
                        mtp ? ", spec-decoding: mtp" : "", mtp ? ", spec-decoding: mtp" : "",
                        mtp ? "        spec-decoding: mtp\n" : "",
                        mtp ? "        spec-decoding: mtp\n" : "",
                        mtp ? "        spec-decoding: mtp\n" : "", mtp ? ", spec-decoding: mtp" : "");
          }
  write_file(root, "configs/nvidia-master.yaml", master.data);
  sbuf_free(&runners);
  sbuf_free(&master);
}

/* Scripts for every recipe the loader found; launchers for every family. */
static void write_routes_for(const char *root) {
  struct recipe_set *set = recipe_set_new();
  struct st_err err;
  if (recipe_set_add_inferencex(set, root, &err) < 0) {
    fprintf(stderr, "bench_recipe_load: %s\n", err.msg);
    exit(1);
  }
  for (size_t i = 0; i < recipe_set_count(set); i++) {
    const struct recipe *r = recipe_set_at(set, i);
    write_script_for(root, r);
    for (size_t k = 0; k < r->n_routes; k++) {
      if (r->routes[k].launcher)
        continue;
      char *rel = xasprintf("runners/launch_%s.sh", r->routes[k].family);
      char *path = path_join_alloc(root, rel);
      if (!path_exists(path)) {
        char *text = xasprintf(LAUNCHER_FMT, r->routes[k].family, r->gpu);
        write_file(root, rel, text);
        free(text);
      }
      free(path);
      free(rel);
    }
  }
  recipe_set_free(set);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static size_t count_lines(const char *root, const char *rel) {
  char *path = path_join_alloc(root, rel);
  size_t len, n = 0;
  struct st_err err;
  char *data = file_read_all(path, &len, &err);
  for (size_t i = 0; data && i < len; i++)
    n += data[i] == '\n';
  free(data);
  free(path);
  return n;
}

static int64_t cpu_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void measure(const char *label, const char *root, int runs) {
  int64_t *load_us = xcalloc((size_t)runs, sizeof *load_us);
  int64_t *total_us = xcalloc((size_t)runs, sizeof *total_us);
  int64_t *cpu = xcalloc((size_t)runs, sizeof *cpu);
  size_t n_recipes = 0, n_findings = 0, n_errors = 0, n_diags = 0;
  for (int i = 0; i < runs; i++) {
    int64_t t0 = clock_mono_us(), c0 = cpu_us();
    struct recipe_set *set = recipe_set_new();
    struct st_err err;
    if (recipe_set_add_inferencex(set, root, &err) < 0) {
      fprintf(stderr, "bench_recipe_load: %s\n", err.msg);
      exit(1);
    }
    int64_t t1 = clock_mono_us();
    struct recipe_findings f;
    recipe_lint(set, &f);
    int64_t t2 = clock_mono_us();
    cpu[i] = cpu_us() - c0;
    load_us[i] = t1 - t0;
    total_us[i] = t2 - t0;
    n_recipes = recipe_set_count(set);
    n_diags = recipe_set_diag_count(set);
    n_findings = f.n;
    n_errors = recipe_findings_errors(&f);
    for (size_t k = 0; i == 0 && getenv("BENCH_VERBOSE") && k < f.n; k++)
      fprintf(stderr, "  %s:%d: %s %s\n", f.items[k].file, f.items[k].line, f.items[k].rule,
              f.items[k].message);
    recipe_findings_fini(&f);
    recipe_set_free(set);
  }
  qsort(load_us, (size_t)runs, sizeof *load_us, cmp_i64);
  qsort(total_us, (size_t)runs, sizeof *total_us, cmp_i64);
  qsort(cpu, (size_t)runs, sizeof *cpu, cmp_i64);
  size_t lines = count_lines(root, "configs/nvidia-master.yaml") +
                 count_lines(root, "configs/amd-master.yaml");
  printf("%-9s master %5zu lines, %3zu scripts, %3zu recipes: load %.1f ms, load+lint best %.1f ms "
         "median %.1f ms, CPU median %.1f ms (%d runs); %zu findings (%zu errors), %zu load "
         "diags\n",
         label, lines, n_scripts, n_recipes, (double)load_us[runs / 2] / 1000.0,
         (double)total_us[0] / 1000.0, (double)total_us[runs / 2] / 1000.0,
         (double)cpu[runs / 2] / 1000.0, runs, n_findings, n_errors, n_diags);
  free(load_us);
  free(total_us);
  free(cpu);
}

int main(int argc, char **argv) {
  int runs = 7;
  if (argc > 1 && (parse_int(argv[1], &runs) < 0 || runs < 1)) {
    fprintf(stderr, "usage: bench_recipe_load [runs]\n");
    return 2;
  }
  char tmpl[] = "/tmp/servetop-bench-recipe-XXXXXX";
  if (!mkdtemp(tmpl)) {
    perror("mkdtemp");
    return 1;
  }
  char *syn = path_join_alloc(tmpl, "synthetic");
  write_file(syn, "benchmarks/benchmark_lib.sh", "run_benchmark_serving() { :; }\n");
  write_synthetic(syn);
  n_scripts = 0;
  write_routes_for(syn);
  measure("synthetic", syn, runs);

  const char *shared = getenv("SHARED_DIR") ? getenv("SHARED_DIR") : SHARED_DIR;
  char *real_cfg = xasprintf("%s/data/inferencex", shared);
  char *nv = path_join_alloc(real_cfg, "configs/nvidia-master.yaml");
  if (path_exists(nv)) {
    char *real = path_join_alloc(tmpl, "real");
    char *cfg = path_join_alloc(real, "configs");
    struct st_err err;
    path_mkdir_p(cfg, 0755, &err);
    static const char *const files[] = {"nvidia-master.yaml", "amd-master.yaml", "runners.yaml"};
    for (size_t i = 0; i < ST_ARRAY_LEN(files); i++) {
      char *from = xasprintf("%s/configs/%s", real_cfg, files[i]);
      char *to = path_join_alloc(cfg, files[i]);
      if (symlink(from, to) < 0)
        perror(to);
      free(from);
      free(to);
    }
    n_scripts = 0;
    write_routes_for(real);
    measure("real", real, runs);
    free(cfg);
    free(real);
    n_scripts = 0;
    measure("checkout", real_cfg, runs);
  } else {
    printf("real      skipped: %s absent\n", nv);
  }
  nftw(tmpl, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  free(nv);
  free(real_cfg);
  free(syn);
  return 0;
}
