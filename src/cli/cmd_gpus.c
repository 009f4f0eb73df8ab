/* servetop gpus: GPUs and GPU processes from the telemetry backend, and why
 * each other backend is unavailable. */
#include "cli/cli.h"

/* telemetry.h brings util.h (whose option block has no include guard). */
#include "telemetry/telemetry.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) {
  (void)sig;
  interrupted = 1;
}

static void print_mib(FILE *out, bool valid, uint64_t bytes, int width) {
  if (valid)
    fprintf(out, " %*.0f", width, (double)bytes / (1024.0 * 1024.0));
  else
    fprintf(out, " %*s", width, "-");
}

static void print_num(FILE *out, bool valid, double v, int width, int decimals) {
  if (valid)
    fprintf(out, " %*.*f", width, decimals, v);
  else
    fprintf(out, " %*s", width, "-");
}

static const char *state_label(enum tm_backend_state s) {
  switch (s) {
  case TM_BACKEND_USED: return "used";
  case TM_BACKEND_AVAILABLE: return "available";
  case TM_BACKEND_UNAVAILABLE: return "unavailable";
  case TM_BACKEND_NOT_PROBED: return "not probed";
  }
  return "?";
}

static void print_text(FILE *out, const struct tm_snapshot *snap, const struct tm_backend_status *report,
                       size_t n_report) {
  bool none = strcmp(snap->backend, "none") == 0;
  if (none)
    fprintf(out, "telemetry: none (no backend is available; reasons below)\n");
  else
    fprintf(out, "telemetry: %s%s%s\n", snap->backend, snap->simulated ? " (SIMULATED values)" : "",
           snap->stale ? " (STALE)" : "");
  if (snap->error[0] && !none)
    fprintf(out, "error: %s\n", snap->error);
  if (snap->note[0])
    fprintf(out, "note: %s\n", snap->note);
  if (snap->n_gpus > 0) {
    fprintf(out, "%3s  %-26s %10s %10s %9s %10s %10s %6s %8s %8s\n", "GPU", "NAME", "USED MiB",
           "TOTAL MiB", "RSVD MiB", "SERVER MiB", "REST MiB", "UTIL%", "POWER W", "LIMIT W");
    for (int i = 0; i < snap->n_gpus; i++) {
      const struct tm_gpu *g = &snap->gpus[i];
      char name[TM_NAME_LEN + TM_HOST_LEN + 2];
      snprintf(name, sizeof name, "%s%s%s", g->host, g->host[0] ? ":" : "",
               g->name[0] ? g->name : "-");
      fprintf(out, "%3d  %-26.26s", g->index, name);
      print_mib(out, g->valid & TM_GPU_MEM_USED, g->mem_used_bytes, 10);
      print_mib(out, g->valid & TM_GPU_MEM_TOTAL, g->mem_total_bytes, 10);
      print_mib(out, g->valid & TM_GPU_MEM_RESERVED, g->mem_reserved_bytes, 9);
      print_mib(out, g->valid & TM_GPU_SERVER_MEM, g->server_mem_bytes, 10);
      print_mib(out, g->valid & TM_GPU_SERVER_MEM, g->other_mem_bytes, 10);
      print_num(out, g->valid & TM_GPU_UTIL, g->util_pct, 6, 0);
      print_num(out, g->valid & TM_GPU_POWER, g->power_w, 8, 1);
      print_num(out, g->valid & TM_GPU_POWER_LIMIT, g->power_limit_w, 8, 1);
      fprintf(out, "\n");
    }
  }
  if (snap->procs_listed) {
    fprintf(out, "processes:%s\n", snap->n_procs == 0 ? " none" : "");
    if (snap->n_procs > 0)
      fprintf(out, "%3s %9s  %-20s %10s  %s\n", "GPU", "PID", "NAME", "MEM MiB", "SERVER");
    for (int i = 0; i < snap->n_procs; i++) {
      const struct tm_proc *p = &snap->procs[i];
      if (p->gpu_index >= 0)
        fprintf(out, "%3d", p->gpu_index);
      else
        fprintf(out, "%3s", "-");
      fprintf(out, " %9ld  %-20.20s", (long)p->pid, p->name[0] ? p->name : "-");
      print_mib(out, p->mem_valid, p->mem_bytes, 10);
      fprintf(out, "  %s\n", snap->server_pid > 0 ? (p->in_server_tree ? "yes" : "no") : "-");
    }
    if (snap->procs_truncated)
      fprintf(out, "(more processes than listed)\n");
  }
  if (n_report > 0) {
    fprintf(out, "backends:\n");
    for (size_t i = 0; i < n_report; i++) {
      bool has_reason = report[i].state == TM_BACKEND_UNAVAILABLE ||
                        report[i].state == TM_BACKEND_NOT_PROBED;
      fprintf(out, "  %-11s %s%s%s\n", report[i].name, state_label(report[i].state),
             has_reason ? ": " : "", has_reason ? report[i].reason : "");
    }
  }
}

static void print_json(const struct tm_snapshot *snap, const struct tm_backend_status *report,
                       size_t n_report, bool compact) {
  cJSON *o = tm_snapshot_to_json(snap);
  cJSON_AddItemToObject(o, "backends", tm_backend_report_to_json(report, n_report));
  char *text = compact ? cJSON_PrintUnformatted(o) : cJSON_Print(o);
  if (text)
    printf("%s\n", text);
  free(text);
  cJSON_Delete(o);
}

/* Sleeps up to interval_s, returning early on Ctrl-C. */
static void sleep_interruptible(double interval_s) {
  int64_t until = clock_mono_us() + (int64_t)(interval_s * 1e6);
  while (!interrupted && clock_mono_us() < until)
    clock_sleep_us(50000);
}

int cmd_gpus_main(int argc, char **argv) {
  bool json = false, watch = false;
  const char *backend = NULL;
  struct opt_list urls = {0};
  double interval_s = 1.0;
  long pid = 0;
  int count = 0;
  const struct opt_spec specs[] = {
      {"json", OPT_FLAG, &json, NULL, "print JSON (null for unknown values)", NULL, NULL},
      {"watch", OPT_FLAG, &watch, NULL,
       "reprint every interval until Ctrl-C (with --json: one JSON object per line)", NULL, NULL},
      {"count", OPT_INT, &count, "N", "with --watch: stop after N prints (default: never)", NULL,
       NULL},
      {"telemetry", OPT_STRING, &backend, "NAME",
       "backend: auto (default), nvml, nvidia-smi, amd-smi, dcgm, sim", NULL, NULL},
      {"telemetry-url", OPT_LIST, &urls, "URL",
       "dcgm-exporter /metrics endpoint (repeatable) or the sim's base URL", NULL, NULL},
      {"telemetry-interval", OPT_DOUBLE, &interval_s, "SECONDS", "sampling period (default 1)",
       NULL, NULL},
      {"pid", OPT_LONG, &pid, "PID",
       "server root process: memory of it and its descendants is shown as SERVER", NULL, NULL},
  };
  const struct opt_parser parser = {
      .usage = "servetop gpus [--json] [--watch [--count N]] [--telemetry NAME] [--telemetry-url URL]... "
               "[--pid PID]",
      .description =
          "Lists GPUs (memory used/total/reserved, utilization, power) and the processes "
          "holding GPU memory, from the first telemetry backend that works (nvml, nvidia-smi, "
          "amd-smi, then dcgm and sim when a URL is given), and says why each other backend "
          "is unavailable. Unknown values print as '-' (null in JSON).",
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs),
  };
  struct st_err err = {{0}};
  size_t n_pos = 0;
  int prc = cli_parse_options(&parser, "gpus", argc - 1, argv + 1, NULL, 0, &n_pos);
  const char *bad = interval_s <= 0 ? "--telemetry-interval must be positive"
                    : pid < 0       ? "--pid must be positive"
                    : count < 0     ? "--count must not be negative"
                                    : NULL;
  if (prc == CLI_GO_ON && bad)
    prc = cli_usage_error("gpus", "%s", bad);
  if (prc != CLI_GO_ON) {
    free(urls.items);
    return prc;
  }

  bool known = !backend || strcmp(backend, "auto") == 0;
  for (size_t i = 0; i < tm_backend_count() && !known; i++)
    known = strcmp(backend, tm_backend_name(i)) == 0;
  if (!known) { /* an input error, before anything is probed */
    fprintf(stderr, "servetop gpus: --telemetry %s: unknown backend (auto", backend);
    for (size_t i = 0; i < tm_backend_count(); i++)
      fprintf(stderr, ", %s", tm_backend_name(i));
    fprintf(stderr, ")\n");
    free(urls.items);
    return EXIT_USAGE;
  }
  struct tm_config cfg = {
      .backend = backend,
      .urls = (const char *const *)urls.items,
      .n_urls = urls.n,
      .interval_s = interval_s,
      .server_pid = (pid_t)pid,
      .probe_all = true,
  };
  struct tm_sampler *tm = tm_open(&cfg, &err);
  free(urls.items);
  if (!tm) {
    fprintf(stderr, "servetop gpus: %s\n", err.msg);
    return EXIT_FINDINGS;
  }
  struct tm_backend_status report[8];
  size_t n_report = tm_backend_report(tm, report, ST_ARRAY_LEN(report));
  struct tm_snapshot *snap = xcalloc(1, sizeof *snap);

  int rc = 0;
  if (!watch) {
    tm_sample_now(tm, snap, NULL);
    if (json)
      print_json(snap, report, n_report, false);
    else
      print_text(stdout, snap, report, n_report);
  } else {
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    rc = tm_start(tm, &err);
    if (rc < 0)
      fprintf(stderr, "servetop gpus: %s\n", err.msg);
    bool clear = !json && isatty(STDOUT_FILENO);
    uint64_t printed_seq = 0;
    /* The first print waits for the first sample (bounded by the backend timeout). */
    for (int printed = 0; rc == 0 && !interrupted && (count == 0 || printed < count);) {
      if (!tm_latest(tm, snap) || (snap->seq == printed_seq && !snap->stale)) {
        clock_sleep_us(20000);
        continue;
      }
      printed_seq = snap->seq;
      if (json) {
        print_json(snap, report, n_report, true);
      } else if (clear) {
        /* in place: from the top, each line erased to its end, then what is
         * below; a whole-screen clear would push every frame into scrollback */
        char *frame = NULL;
        size_t frame_bytes = 0;
        FILE *mem = open_memstream(&frame, &frame_bytes);
        if (mem) {
          print_text(mem, snap, report, n_report);
          fclose(mem);
          fputs("\033[H", stdout);
          for (char *line = frame, *nl; line && *line; line = nl ? nl + 1 : NULL) {
            nl = strchr(line, '\n');
            fwrite(line, 1, nl ? (size_t)(nl - line) : strlen(line), stdout);
            fputs(nl ? "\033[K\n" : "\033[K", stdout);
            if (!nl)
              break;
          }
          fputs("\033[J", stdout);
        }
        free(frame);
      } else {
        print_text(stdout, snap, report, n_report);
      }
      fflush(stdout);
      printed++;
      if (count == 0 || printed < count)
        sleep_interruptible(interval_s);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
  }
  free(snap);
  tm_close(tm);
  return rc < 0 ? EXIT_FINDINGS : EXIT_OK;
}
