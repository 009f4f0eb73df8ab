/* run: a server servetop did not launch (servetop attach) — its URL and the
 * recipe that stands for the load it is measured with. */
#include "run/run_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int run_parse_http_url(const char *url, char *host, size_t host_bytes, int *port,
                       struct st_err *err) {
  static const char scheme[] = "http://";
  if (strncmp(url, scheme, sizeof scheme - 1) != 0)
    return err_setf(err, "'%s': expected an http:// URL (http://HOST:PORT)", url);
  const char *h = url + sizeof scheme - 1;
  size_t len = strcspn(h, ":/?#");
  if (len == 0 || len >= host_bytes)
    return err_setf(err, "'%s': no host after http://", url);
  for (size_t i = 0; i < len; i++)
    if (!isalnum((unsigned char)h[i]) && !strchr(".-_", h[i]))
      return err_setf(err, "'%s': '%c' cannot be in a host name", url, h[i]);
  memcpy(host, h, len);
  host[len] = '\0';
  *port = 80;
  if (h[len] == ':') {
    char *end;
    long p = strtol(h + len + 1, &end, 10);
    if (end == h + len + 1 || p < 1 || p > 65535 || (*end && *end != '/'))
      return err_setf(err, "'%s': the port must be a number from 1 to 65535", url);
    *port = (int)p;
  }
  return 0;
}

void run_base_url(const struct run *run, char *buf, size_t n) {
  snprintf(buf, n, "http://%s:%d", run->host, run->port);
}

/* A YAML double-quoted scalar. */
static void put_quoted(struct sbuf *sb, const char *s) {
  sbuf_putc(sb, '"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      sbuf_putc(sb, '\\');
    if ((unsigned char)*s >= 0x20)
      sbuf_putc(sb, *s);
  }
  sbuf_putc(sb, '"');
}

struct recipe_set *run_attach_recipes_alloc(const struct run_attach_load *load,
                                            struct st_err *err) {
  char host[128];
  int port;
  if (run_parse_http_url(load->url, host, sizeof host, &port, err) != 0)
    return NULL;
  struct sbuf y = {0};
  sbuf_printf(&y, "attach-%s-%d:\n  model: ", host, port);
  put_quoted(&y, load->model ? load->model : "attached");
  sbuf_puts(&y, "\n  model-prefix: attach\n  runner: attached\n  precision: unknown\n"
                "  framework: attached\n  multinode: false\n  description: ");
  char *what = xasprintf("a server servetop did not launch, at %s", load->url);
  put_quoted(&y, what);
  free(what);
  sbuf_printf(&y, "\n  scenarios:\n    fixed-seq-len:\n    - isl: %d\n      osl: %d\n"
                  "      search-space:\n      - { tp: 1, ep: 1, conc-list: [",
              run_workload_len(load->isl, 0, RUN_DEFAULT_ISL),
              run_workload_len(load->osl, 0, RUN_DEFAULT_OSL));
  if (load->n_concs == 0)
    sbuf_puts(&y, "1");
  for (size_t i = 0; i < load->n_concs; i++)
    sbuf_printf(&y, "%s%d", i ? ", " : "", load->concs[i]);
  /* the engine stands in for the recipe format only: nothing is launched */
  sbuf_printf(&y, "] }\n  server:\n    engine: sglang\n    argv: []\n  benchmark:\n"
                  "    random-range-ratio: 1.0\n    num-prompts-factor: %d\n    backend: %s\n",
              load->num_prompts_factor > 0 ? load->num_prompts_factor : 10,
              load->chat ? "openai-chat" : "vllm");
  struct recipe_set *set = recipe_set_new();
  recipe_set_add_yaml_buffer(set, "attach", y.data, y.len);
  sbuf_free(&y);
  if (recipe_set_count(set) != 1) {
    const struct recipe_diag *d = recipe_set_diag_count(set) ? recipe_set_diag_at(set, 0) : NULL;
    err_setf(err, "attach: the load's recipe does not load: %s", d ? d->message : "no recipe");
    recipe_set_free(set);
    return NULL;
  }
  return set;
}

int run_parse_conc_list(const char *text, int *concs, size_t max, size_t *n, struct st_err *err) {
  *n = 0;
  size_t len = strlen(text);
  if (len == 0 || text[0] == ',' || text[len - 1] == ',' || strstr(text, ",,"))
    return err_setf(err, "%.100s: an empty item (write 1,2,4)", text);
  char *copy = xstrdup(text), *save = NULL;
  int rc = 0;
  for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    int c;
    if (parse_int(w, &c) != 0 || c < 1 || *n == max) {
      rc = err_setf(err, "%.100s: expected up to %zu whole numbers >= 1, comma-separated (1,2,4)",
                    text, max);
      break;
    }
    concs[(*n)++] = c;
  }
  free(copy);
  if (rc == 0 && *n == 0)
    rc = err_setf(err, "empty");
  return rc;
}
