/* telemetry parsers on captured tool output, attribution, and the JSON forms.
 * Fixtures: tests/data/telemetry/ (README.md there says where each came from). */
#include "telemetry/telemetry_internal.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t MIB = 1024ull * 1024ull;
static const char *const H200_UUID = "GPU-89d5a7b7-5469-7e75-39d8-59da08b87286";

static char *fixture(const char *name) {
  char *path = xasprintf("%s/telemetry/%s", TEST_DATA_DIR, name);
  struct st_err err;
  char *text = file_read_all(path, NULL, &err);
  ck_assert_msg(text != NULL, "%s: %s", path, err.msg);
  free(path);
  return text;
}

/* A fresh zeroed snapshot (large: keep it off the stack). */
static struct tm_snapshot *snap_new(void) { return xcalloc(1, sizeof(struct tm_snapshot)); }

static void parse_gpus_ok(const char *name, const char *query, struct tm_snapshot *snap) {
  char *text = fixture(name);
  struct st_err err = {{0}};
  int rc = tm_nvsmi_parse_gpus(text, query, snap, &err);
  ck_assert_msg(rc == 0, "%s: %s", name, err.msg);
  free(text);
}

static void parse_apps_ok(const char *name, struct tm_snapshot *snap) {
  char *text = fixture(name);
  struct st_err err = {{0}};
  int rc = tm_nvsmi_parse_apps(text, TM_NVSMI_APPS_QUERY, snap, &err);
  ck_assert_msg(rc == 0, "%s: %s", name, err.msg);
  free(text);
}

/* ---------------------------------------------------------------- nvidia-smi (captured on an H200) */

START_TEST(nvsmi_h200_gpu_noheader) {
  struct tm_snapshot *s = snap_new();
  parse_gpus_ok("nvsmi_h200_held_gpu_noheader.csv", TM_NVSMI_GPU_QUERY, s);
  ck_assert_int_eq(s->n_gpus, 1);
  const struct tm_gpu *g = &s->gpus[0];
  ck_assert_int_eq(g->index, 0);
  ck_assert_str_eq(g->name, "NVIDIA H200");
  ck_assert_str_eq(g->uuid, H200_UUID);
  ck_assert_uint_eq(g->mem_total_bytes, 143771 * MIB);
  ck_assert_uint_eq(g->mem_used_bytes, 5147 * MIB);
  ck_assert_uint_eq(g->mem_reserved_bytes, 616 * MIB);
  ck_assert_double_eq_tol(g->power_w, 121.82, 1e-9);
  ck_assert_double_eq_tol(g->power_limit_w, 700.0, 1e-9);
  ck_assert_double_eq_tol(g->util_pct, 0.0, 1e-9);
  uint32_t want = TM_GPU_MEM_USED | TM_GPU_MEM_TOTAL | TM_GPU_MEM_RESERVED | TM_GPU_UTIL |
                  TM_GPU_POWER | TM_GPU_POWER_LIMIT;
  ck_assert_uint_eq(g->valid, want); /* no energy from nvidia-smi: unknown, not 0 */
  free(s);
}
END_TEST

START_TEST(nvsmi_h200_gpu_header_forms_agree) {
  struct tm_snapshot *a = snap_new(), *b = snap_new(), *c = snap_new();
  parse_gpus_ok("nvsmi_h200_held_gpu_noheader.csv", TM_NVSMI_GPU_QUERY, a);
  /* A header (with units in brackets) overrides the query's column order. */
  parse_gpus_ok("nvsmi_h200_held_gpu_header_nounits.csv", "index,power.limit", b);
  parse_gpus_ok("nvsmi_h200_held_gpu_header_units.csv", TM_NVSMI_GPU_QUERY, c);
  for (int i = 0; i < 2; i++) {
    const struct tm_gpu *g = i == 0 ? &b->gpus[0] : &c->gpus[0];
    ck_assert_int_eq(i == 0 ? b->n_gpus : c->n_gpus, 1);
    ck_assert_uint_eq(g->valid, a->gpus[0].valid);
    ck_assert_uint_eq(g->mem_used_bytes, a->gpus[0].mem_used_bytes);
    ck_assert_uint_eq(g->mem_total_bytes, a->gpus[0].mem_total_bytes);
    ck_assert_uint_eq(g->mem_reserved_bytes, a->gpus[0].mem_reserved_bytes);
    ck_assert_str_eq(g->uuid, H200_UUID);
  }
  ck_assert_double_eq_tol(c->gpus[0].power_w, 121.87, 1e-9); /* "121.87 W" */
  free(a);
  free(b);
  free(c);
}
END_TEST

START_TEST(nvsmi_h200_odd_columns_and_na) {
  /* The query the capture was taken with; [N/A] fan, hex and text columns. */
  struct tm_snapshot *s = snap_new();
  parse_gpus_ok("nvsmi_h200_held_gpu_odd_noheader.csv",
                "index,uuid,name,memory.used,fan.speed,power.draw.instant,temperature.memory,"
                "clocks_event_reasons.active,ecc.errors.corrected.volatile.total,mig.mode.current,"
                "power.limit",
                s);
  const struct tm_gpu *g = &s->gpus[0];
  ck_assert_uint_eq(g->valid, TM_GPU_MEM_USED | TM_GPU_POWER | TM_GPU_POWER_LIMIT);
  ck_assert_uint_eq(g->mem_used_bytes, 5147 * MIB);
  ck_assert_double_eq_tol(g->power_w, 122.08, 1e-9);
  free(s);
}
END_TEST

START_TEST(nvsmi_h200_apps) {
  const char *files[] = {"nvsmi_h200_held_apps_noheader.csv", "nvsmi_h200_held_apps_header_units.csv"};
  for (size_t f = 0; f < 2; f++) {
    struct tm_snapshot *s = snap_new();
    parse_gpus_ok("nvsmi_h200_held_gpu_noheader.csv", TM_NVSMI_GPU_QUERY, s);
    parse_apps_ok(files[f], s);
    ck_assert(s->procs_listed);
    ck_assert_int_eq(s->n_procs, 2);
    ck_assert_int_eq(s->procs[0].pid, 452);
    ck_assert_int_eq(s->procs[0].gpu_index, 0);
    ck_assert_str_eq(s->procs[0].name, "python3");
    ck_assert(s->procs[0].mem_valid);
    ck_assert_uint_eq(s->procs[0].mem_bytes, 3590 * MIB);
    ck_assert_int_eq(s->procs[1].pid, 450);
    ck_assert_uint_eq(s->procs[1].mem_bytes, 1542 * MIB);
    free(s);
  }
}
END_TEST

START_TEST(nvsmi_h200_idle) {
  struct tm_snapshot *s = snap_new();
  parse_gpus_ok("nvsmi_h200_idle_gpu_noheader.csv", TM_NVSMI_GPU_QUERY, s);
  parse_apps_ok("nvsmi_h200_idle_apps_noheader.csv", s); /* empty output */
  ck_assert(s->gpus[0].valid & TM_GPU_MEM_USED);
  ck_assert_uint_eq(s->gpus[0].mem_used_bytes, 0); /* a measured 0 */
  ck_assert(s->procs_listed);
  ck_assert_int_eq(s->n_procs, 0);
  free(s);
}
END_TEST

START_TEST(nvsmi_mig_rows) {
  struct tm_snapshot *s = snap_new();
  parse_gpus_ok("nvsmi_mig_gpu_noheader.csv", TM_NVSMI_GPU_QUERY, s);
  ck_assert(!(s->gpus[0].valid & TM_GPU_UTIL)); /* [N/A] under MIG */
  parse_apps_ok("nvsmi_mig_apps_noheader.csv", s);
  ck_assert_int_eq(s->n_procs, 3);
  ck_assert(!s->procs[0].mem_valid);
  ck_assert_str_eq(s->procs[0].name, "python3");
  ck_assert_str_eq(s->procs[1].name, ""); /* [Not Found] */
  ck_assert(!s->procs[1].mem_valid);
  ck_assert_str_eq(s->procs[2].name, "python3 -m sglang.launch_server,worker");
  ck_assert(s->procs[2].mem_valid);
  ck_assert_uint_eq(s->procs[2].mem_bytes, 71234 * MIB);
  free(s);
}
END_TEST

START_TEST(nvsmi_missing_columns) {
  struct tm_snapshot *s = snap_new();
  parse_gpus_ok("nvsmi_missing_columns_noheader.csv", TM_NVSMI_GPU_QUERY, s);
  ck_assert_int_eq(s->n_gpus, 2);
  ck_assert_uint_eq(s->gpus[0].valid, TM_GPU_MEM_TOTAL | TM_GPU_MEM_USED);
  ck_assert_uint_eq(s->gpus[0].mem_used_bytes, 5147 * MIB);
  ck_assert_uint_eq(s->gpus[1].valid,
                    TM_GPU_MEM_TOTAL | TM_GPU_MEM_USED | TM_GPU_UTIL | TM_GPU_POWER_LIMIT);
  ck_assert_uint_eq(s->gpus[1].mem_used_bytes, 12 * MIB);
  free(s);
}
END_TEST

START_TEST(nvsmi_errors_name_line_and_field) {
  struct tm_snapshot *s = snap_new();
  char *text = fixture("nvsmi_bad_value_noheader.csv");
  struct st_err err = {{0}};
  ck_assert_int_eq(tm_nvsmi_parse_gpus(text, TM_NVSMI_GPU_QUERY, s, &err), -1);
  ck_assert_msg(strstr(err.msg, "line 1") && strstr(err.msg, "memory.used") && strstr(err.msg, "lots"),
                "%s", err.msg);
  free(text);
  memset(s, 0, sizeof *s);
  text = fixture("nvsmi_no_devices.txt");
  ck_assert_int_eq(tm_nvsmi_parse_gpus(text, TM_NVSMI_GPU_QUERY, s, &err), -1);
  ck_assert_msg(strstr(err.msg, "index"), "%s", err.msg);
  free(text);
  memset(s, 0, sizeof *s);
  ck_assert_int_eq(tm_nvsmi_parse_gpus("", TM_NVSMI_GPU_QUERY, s, &err), -1);
  ck_assert_int_eq(tm_nvsmi_parse_apps("GPU-x, notapid, p, 3\n", TM_NVSMI_APPS_QUERY, s, &err), -1);
  ck_assert_msg(strstr(err.msg, "pid"), "%s", err.msg);
  free(s);
}
END_TEST

/* ---------------------------------------------------------------- amd-smi */

START_TEST(amdsmi_metric_csv) {
  struct tm_snapshot *s = snap_new();
  char *text = fixture("amdsmi_metric_mpu.csv");
  struct st_err err = {{0}};
  ck_assert_msg(tm_amdsmi_parse(text, s, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(s->n_gpus, 2);
  ck_assert_uint_eq(s->gpus[0].mem_used_bytes, 183210 * MIB);
  ck_assert_uint_eq(s->gpus[0].mem_total_bytes, 196592 * MIB);
  ck_assert_double_eq_tol(s->gpus[0].power_w, 712, 1e-9);
  ck_assert_double_eq_tol(s->gpus[0].util_pct, 97, 1e-9);
  ck_assert_uint_eq(s->gpus[1].valid, TM_GPU_MEM_USED | TM_GPU_MEM_TOTAL | TM_GPU_POWER | TM_GPU_UTIL);
  ck_assert(!s->procs_listed); /* amd-smi metric has no per-process memory */
  free(text);
  free(s);
}
END_TEST

START_TEST(amdsmi_watch_mode) {
  struct tm_snapshot *s = snap_new();
  char *text = fixture("amdsmi_watch.csv");
  struct st_err err = {{0}};
  ck_assert_msg(tm_amdsmi_parse(text, s, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(s->n_gpus, 2);
  ck_assert_double_eq_tol(s->gpus[0].util_pct, 99, 1e-9); /* the newest row wins */
  ck_assert_double_eq_tol(s->gpus[0].power_w, 745, 1e-9);
  ck_assert_uint_eq(s->gpus[0].mem_used_bytes, 151024 * MIB);
  ck_assert_uint_eq(s->gpus[1].valid, TM_GPU_MEM_USED | TM_GPU_MEM_TOTAL | TM_GPU_POWER | TM_GPU_UTIL);
  free(text);
  free(s);
}
END_TEST

START_TEST(amdsmi_bad_input) {
  struct tm_snapshot *s = snap_new();
  char *text = fixture("amdsmi_short_row.csv");
  struct st_err err = {{0}};
  ck_assert_int_eq(tm_amdsmi_parse(text, s, &err), -1);
  ck_assert_msg(strstr(err.msg, "line 2"), "%s", err.msg);
  free(text);
  memset(s, 0, sizeof *s);
  ck_assert_int_eq(tm_amdsmi_parse("amd-smi: command not found\n", s, &err), -1);
  free(s);
}
END_TEST

/* ---------------------------------------------------------------- dcgm-exporter */

START_TEST(dcgm_h200_node) {
  struct tm_snapshot *s = snap_new();
  char *text = fixture("dcgm_h200_node.prom");
  struct st_err err = {{0}};
  ck_assert_msg(tm_dcgm_parse(text, strlen(text), s, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(s->n_gpus, 2);
  const struct tm_gpu *g = &s->gpus[0];
  ck_assert_int_eq(g->index, 0);
  ck_assert_str_eq(g->host, "gpu-node-7");
  ck_assert_str_eq(g->name, "NVIDIA H200");
  ck_assert_str_eq(g->uuid, H200_UUID);
  ck_assert_uint_eq(g->mem_used_bytes, 130155 * MIB); /* not the MIG instance's 777 */
  ck_assert_uint_eq(g->mem_reserved_bytes, 616 * MIB);
  ck_assert_uint_eq(g->mem_total_bytes, (130155 + 13000 + 616) * MIB);
  ck_assert_double_eq_tol(g->power_w, 612.345, 1e-9);
  ck_assert_double_eq_tol(g->energy_j, 319159.391, 1e-6);
  ck_assert_double_eq_tol(g->util_pct, 100, 1e-9);
  ck_assert_uint_eq(s->gpus[1].mem_used_bytes, 0);
  ck_assert(s->gpus[1].valid & TM_GPU_MEM_USED);
  free(text);
  free(s);
}
END_TEST

START_TEST(dcgm_two_endpoints_append) {
  struct tm_snapshot *s = snap_new();
  char *a = fixture("dcgm_h200_node.prom"), *b = fixture("dcgm_docs_a100.prom");
  struct st_err err = {{0}};
  ck_assert_int_eq(tm_dcgm_parse(a, strlen(a), s, &err), 0);
  ck_assert_msg(tm_dcgm_parse(b, strlen(b), s, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(s->n_gpus, 3);
  const struct tm_gpu *g = &s->gpus[2];
  ck_assert_str_eq(g->host, "ub20-a100-k8s");
  ck_assert_int_eq(g->index, 0);
  ck_assert_str_eq(g->name, ""); /* no modelName label in that exporter version */
  ck_assert_uint_eq(g->mem_total_bytes, (4845 + 35690) * MIB);
  ck_assert(!(g->valid & TM_GPU_UTIL));
  ck_assert(!(g->valid & TM_GPU_MEM_RESERVED));
  ck_assert_int_eq(tm_dcgm_parse("up 1\n", 5, s, &err), -1);
  ck_assert_msg(strstr(err.msg, "DCGM_FI_DEV"), "%s", err.msg);
  free(a);
  free(b);
  free(s);
}
END_TEST

/* ---------------------------------------------------------------- sim */

START_TEST(sim_json) {
  struct tm_snapshot *s = snap_new();
  char *text = fixture("sim_gpu_memory.json");
  struct st_err err = {{0}};
  ck_assert_msg(tm_sim_parse(text, s, &err) == 0, "%s", err.msg);
  ck_assert(s->simulated);
  ck_assert_int_eq(s->n_gpus, 1);
  const struct tm_gpu *g = &s->gpus[0];
  ck_assert_str_eq(g->name, "NVIDIA H200 (simulated)");
  ck_assert_uint_eq(g->mem_used_bytes, 132070244352ull);
  ck_assert_uint_eq(g->sim_kv_pool_bytes, 57982058496ull);
  ck_assert(g->valid & TM_GPU_SIM_BREAKDOWN);
  ck_assert_double_eq_tol(g->util_pct, 87.5, 1e-9);
  ck_assert_int_eq(s->n_procs, 1);
  ck_assert_int_eq(s->procs[0].pid, 4242);
  ck_assert_uint_eq(s->procs[0].mem_bytes, 132070244352ull);
  memset(s, 0, sizeof *s);
  ck_assert_int_eq(tm_sim_parse("{\"simulated\": false, \"gpus\": []}", s, &err), -1);
  ck_assert_msg(strstr(err.msg, "simulated"), "%s", err.msg);
  ck_assert_int_eq(tm_sim_parse("<html>", s, &err), -1);
  ck_assert_int_eq(tm_sim_parse("{\"simulated\": true, \"gpus\": [{\"name\": \"x\"}]}", s, &err), -1);
  ck_assert_msg(strstr(err.msg, "gpus[0].index"), "%s", err.msg);
  /* Out-of-range numbers (found by fuzz_telemetry_parsers): refused or
   * ignored, never converted out of range. */
  memset(s, 0, sizeof *s);
  ck_assert_int_eq(tm_sim_parse("{\"simulated\": true, \"gpus\": [{\"index\": 1e10}]}", s, &err),
                   -1);
  ck_assert_msg(strstr(err.msg, "gpus[0].index"), "%s", err.msg);
  memset(s, 0, sizeof *s);
  ck_assert_int_eq(tm_sim_parse("{\"simulated\": true, \"pid\": 1e12, \"gpus\": [{\"index\": 0, "
                                "\"used_bytes\": 1e30, \"total_bytes\": 1e9}]}",
                                s, &err),
                   0);
  ck_assert_int_eq(s->n_procs, 0);
  ck_assert(!(s->gpus[0].valid & TM_GPU_MEM_USED));
  ck_assert(s->gpus[0].valid & TM_GPU_MEM_TOTAL);
  free(text);
  free(s);
}
END_TEST

/* ---------------------------------------------------------------- attribution and JSON */

START_TEST(attribution_sums_tree_and_rest) {
  struct tm_snapshot *s = snap_new();
  parse_gpus_ok("nvsmi_h200_held_gpu_noheader.csv", TM_NVSMI_GPU_QUERY, s);
  parse_apps_ok("nvsmi_h200_held_apps_noheader.csv", s);
  const pid_t tree[] = {449, 452}; /* the captured run: bash 449 → python3 452 */
  tm_attribute_server_memory(s, tree, 2);
  ck_assert(s->gpus[0].valid & TM_GPU_SERVER_MEM);
  ck_assert_uint_eq(s->gpus[0].server_mem_bytes, 3590 * MIB);
  ck_assert_uint_eq(s->gpus[0].other_mem_bytes, 1542 * MIB);
  ck_assert(s->procs[0].in_server_tree);
  ck_assert(!s->procs[1].in_server_tree);
  /* A process of unknown size on the GPU makes the split unknown. */
  struct tm_snapshot *mig = snap_new();
  parse_gpus_ok("nvsmi_mig_gpu_noheader.csv", TM_NVSMI_GPU_QUERY, mig);
  parse_apps_ok("nvsmi_mig_apps_noheader.csv", mig);
  const pid_t mig_tree[] = {4103};
  tm_attribute_server_memory(mig, mig_tree, 1);
  ck_assert(!(mig->gpus[0].valid & TM_GPU_SERVER_MEM));
  ck_assert(mig->procs[2].in_server_tree);
  free(mig);
  /* Without a process list, server memory stays unknown rather than 0. */
  s->procs_listed = false;
  s->gpus[0].valid &= ~(uint32_t)TM_GPU_SERVER_MEM;
  tm_attribute_server_memory(s, tree, 2);
  ck_assert(!(s->gpus[0].valid & TM_GPU_SERVER_MEM));
  free(s);
}
END_TEST

START_TEST(snapshot_json_nulls) {
  struct tm_snapshot *s = snap_new();
  parse_gpus_ok("nvsmi_missing_columns_noheader.csv", TM_NVSMI_GPU_QUERY, s);
  tm_copy_str(s->backend, sizeof s->backend, "nvidia-smi");
  s->seq = 1;
  cJSON *o = tm_snapshot_to_json(s);
  const cJSON *g0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "gpus"), 0);
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(g0, "power_w")));
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(g0, "mem_reserved_bytes")));
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(g0, "server_mem_bytes")));
  ck_assert_double_eq(cJSON_GetObjectItem(g0, "mem_used_bytes")->valuedouble, 5147.0 * MIB);
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "processes"))); /* not listed */
  ck_assert_str_eq(cJSON_GetObjectItem(o, "backend")->valuestring, "nvidia-smi");
  cJSON_Delete(o);
  free(s);
}
END_TEST

START_TEST(series_json) {
  struct tm_snapshot *s = snap_new();
  parse_gpus_ok("nvsmi_missing_columns_noheader.csv", TM_NVSMI_GPU_QUERY, s);
  tm_copy_str(s->backend, sizeof s->backend, "nvidia-smi");
  struct tm_series *series = tm_series_new();
  tm_series_append(series, s); /* seq 0: nothing sampled yet, ignored */
  s->seq = 1;
  s->taken_mono_ns = 5000000000;
  tm_series_append(series, s);
  tm_series_append(series, s); /* same seq: ignored */
  s->seq = 2;
  s->taken_mono_ns = 6000000000;
  s->gpus[0].mem_used_bytes = 6000 * MIB;
  tm_series_append(series, s);
  ck_assert_uint_eq(tm_series_len(series), 2);
  cJSON *o = tm_series_to_json(series);
  ck_assert_str_eq(cJSON_GetObjectItem(o, "backend")->valuestring, "nvidia-smi");
  const cJSON *gpus = cJSON_GetObjectItem(o, "gpus");
  ck_assert_int_eq(cJSON_GetArraySize(gpus), 2);
  ck_assert_double_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(gpus, 0), "mem_total_bytes")->valuedouble,
                      143771.0 * MIB);
  const cJSON *samples = cJSON_GetObjectItem(o, "samples");
  ck_assert_int_eq(cJSON_GetArraySize(samples), 2);
  const cJSON *p1 = cJSON_GetArrayItem(samples, 1);
  ck_assert_double_eq_tol(cJSON_GetObjectItem(p1, "t_s")->valuedouble, 1.0, 1e-9);
  const cJSON *g0 = cJSON_GetArrayItem(cJSON_GetObjectItem(p1, "gpus"), 0);
  ck_assert_double_eq(cJSON_GetObjectItem(g0, "mem_used_bytes")->valuedouble, 6000.0 * MIB);
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(g0, "power_w")));
  const cJSON *g1 = cJSON_GetArrayItem(cJSON_GetObjectItem(p1, "gpus"), 1);
  ck_assert_int_eq(cJSON_GetObjectItem(g1, "index")->valueint, 1);
  ck_assert_double_eq(cJSON_GetObjectItem(g1, "util_pct")->valuedouble, 0.0);
  cJSON_Delete(o);
  tm_series_free(series);
  free(s);
}
END_TEST

int main(void) {
  Suite *suite = suite_create("telemetry");
  TCase *nv = tcase_create("nvidia-smi");
  tcase_add_test(nv, nvsmi_h200_gpu_noheader);
  tcase_add_test(nv, nvsmi_h200_gpu_header_forms_agree);
  tcase_add_test(nv, nvsmi_h200_odd_columns_and_na);
  tcase_add_test(nv, nvsmi_h200_apps);
  tcase_add_test(nv, nvsmi_h200_idle);
  tcase_add_test(nv, nvsmi_mig_rows);
  tcase_add_test(nv, nvsmi_missing_columns);
  tcase_add_test(nv, nvsmi_errors_name_line_and_field);
  suite_add_tcase(suite, nv);
  TCase *amd = tcase_create("amd-smi");
  tcase_add_test(amd, amdsmi_metric_csv);
  tcase_add_test(amd, amdsmi_watch_mode);
  tcase_add_test(amd, amdsmi_bad_input);
  suite_add_tcase(suite, amd);
  TCase *dcgm = tcase_create("dcgm");
  tcase_add_test(dcgm, dcgm_h200_node);
  tcase_add_test(dcgm, dcgm_two_endpoints_append);
  suite_add_tcase(suite, dcgm);
  TCase *sim = tcase_create("sim");
  tcase_add_test(sim, sim_json);
  suite_add_tcase(suite, sim);
  TCase *json = tcase_create("attribution-json");
  tcase_add_test(json, attribution_sums_tree_and_rest);
  tcase_add_test(json, snapshot_json_nulls);
  tcase_add_test(json, series_json);
  suite_add_tcase(suite, json);
  SRunner *runner = srunner_create(suite);
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
