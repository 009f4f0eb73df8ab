/* The recipe browser: model, keys, mouse and rendering (pure; no ncurses). */
#include "browser.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/engine.h"
#include "problems.h"
#include "ui_util.h"

#define NO_PAIR SIZE_MAX

/* A list row: "> " + sequence tag (tag_cells, at most TAG_MAX) + off side +
 * MTP side + summary. A side is its label and one cell for the findings marker. */
enum { SIDE_W = 5, TAG_MAX = 10 };

/* The key table: `?` lists it, the footer shows the hints (each line fits
 * the help box at 80 columns, the hints the footer). */
enum { KEY_A = 1, KEY_PROBLEMS = 4 }; /* indexes of hints that can be inactive */
static const struct ui_key_help keys[] = {
    {"Enter", "run the selected recipe (pick conc, sweep, flags)", "run", NULL, UI_KEY_ENTER, 0},
    {"a", "run the row's off/MTP pair as an A/B comparison", "A/B", NULL, 'a', 3},
    {"Left/Right h/l Tab", "the row's off or MTP recipe", "off/mtp", "Tab", UI_KEY_TAB, 4},
    {"/", "filter: words match name, model, GPU, engine...", "filter", NULL, '/', 2},
    {"p", "problems: every load error and doctor's finding", "lint", NULL, 'p', 1},
    {"L", "open the A/B view's list of past runs", "past", NULL, 'L', 5},
    {"A", "attach to a server already running (its URL)", "attach", NULL, 'A', 6},
    {"t", "tune: search the knobs' best setting for an SLO", "tune", NULL, 't', 7},
    {"Up/Down k/j", "select a recipe row", NULL, NULL, 0, 0},
    {"PgUp/PgDn Home/End g/G", "page through the list, first / last row", NULL, NULL, 0, 0},
    {"J / K", "scroll the detail pane down / up", NULL, NULL, 0, 0},
    {"Enter/Esc/Bksp", "(filter) keep it / clear it / delete a character", NULL, NULL, 0, 0},
    {"Esc", "clear the filter", NULL, NULL, 0, 0},
    {"mouse", "click selects, wheel scrolls (findings: problems)", NULL, NULL, 0, 0},
    UI_KEY_HELP_ROW,
    {"q", "quit", "quit", NULL, 'q', 0},
};

/* ---------------------------------------------------------------- model */

static const char *str_or(const char *s, const char *fallback) {
  return s && *s ? s : fallback;
}

/* "qwen3.5 fp8 · h200 · sglang": what a group has in common. */
static char *group_title_alloc(const struct recipe *r, const char *sep) {
  return xasprintf("%s %s%s%s%s%s", str_or(r->model_prefix, str_or(r->model, "?")),
                   str_or(r->precision, "?"), sep, str_or(r->gpu, str_or(r->runner, "?")), sep,
                   str_or(r->engine, str_or(r->framework, "?")));
}

static const struct recipe *pair_first(const struct browser_pair *p) {
  return p->off ? p->off : p->spec;
}

/* Sort key of a pair: group title, then longer sequences first, then name. */
struct pair_sort {
  struct browser_pair pair;
  char *title;
};

static int cmp_pair_sort(const void *a, const void *b) {
  const struct pair_sort *x = a, *y = b;
  int c = strcmp(x->title, y->title);
  if (c)
    return c;
  const struct recipe *rx = pair_first(&x->pair), *ry = pair_first(&y->pair);
  if (rx->isl != ry->isl)
    return rx->isl > ry->isl ? -1 : 1;
  if (rx->osl != ry->osl)
    return rx->osl > ry->osl ? -1 : 1;
  return strcmp(rx->name, ry->name);
}

static bool finding_is_of(const struct recipe_finding *f, const struct recipe *r) {
  return f->recipe && (strcmp(f->recipe, r->name) == 0 || strcmp(f->recipe, r->entry) == 0);
}

/* The worst severity of r's findings (-1: none), and how many (errors). */
static int count_findings(const struct browser *b, const struct recipe *r, int *n, int *errors) {
  int worst = -1;
  *n = *errors = 0;
  if (!r)
    return worst;
  for (size_t i = 0; i < b->findings.n; i++) {
    const struct recipe_finding *f = &b->findings.items[i];
    if (!finding_is_of(f, r))
      continue;
    (*n)++;
    *errors += f->severity == RECIPE_SEV_ERROR;
    /* RECIPE_SEV_ERROR is 0: the lowest number is the worst */
    if (worst < 0 || (int)f->severity < worst)
      worst = (int)f->severity;
  }
  return worst;
}

void browser_init(struct browser *b, const struct recipe_set *set) {
  memset(b, 0, sizeof *b);
  b->set = set;
  recipe_lint(set, &b->findings);
  recipe_findings_order(&b->findings); /* the problems view: errors before warnings */
  size_t n = recipe_set_count(set);
  bool *used = xcalloc(n + 1, sizeof *used);
  struct pair_sort *sorted = xcalloc(n + 1, sizeof *sorted);
  size_t n_sorted = 0;
  for (size_t i = 0; i < n; i++) {
    if (used[i])
      continue;
    const struct recipe *r = recipe_set_at(set, i);
    const struct recipe *twin = recipe_set_twin(set, r);
    used[i] = true;
    if (twin) {
      for (size_t j = i + 1; j < n; j++)
        if (recipe_set_at(set, j) == twin) {
          if (used[j])
            twin = NULL;  /* already paired with another recipe */
          used[j] = true;
          break;
        }
    }
    struct browser_pair p = {0};
    if (r->spec == RECIPE_SPEC_NONE) {
      p.off = r;
      p.spec = twin;
    } else {
      p.spec = r;
      p.off = twin;
    }
    sorted[n_sorted].pair = p;
    sorted[n_sorted].title = group_title_alloc(r, "\t");
    n_sorted++;
  }
  qsort(sorted, n_sorted, sizeof *sorted, cmp_pair_sort);
  b->pairs = xcalloc(n_sorted + 1, sizeof *b->pairs);
  b->groups = xcalloc(n_sorted + 1, sizeof *b->groups);
  for (size_t i = 0; i < n_sorted; i++) {
    if (i == 0 || strcmp(sorted[i - 1].title, sorted[i].title) != 0)
      b->groups[b->n_groups++].first = pair_first(&sorted[i].pair);
    struct browser_pair *p = &b->pairs[b->n_pairs++];
    *p = sorted[i].pair;
    p->group = b->n_groups - 1;
    p->worst_off = count_findings(b, p->off, &p->findings[0], &p->errors[0]);
    p->worst_spec = count_findings(b, p->spec, &p->findings[1], &p->errors[1]);
  }
  for (size_t i = 0; i < n_sorted; i++)
    free(sorted[i].title);
  free(sorted);
  free(used);
  /* the tag column fits the longest tag ("8k1k", "1024_8192"), within reason */
  b->tag_cells = 4;
  for (size_t i = 0; i < b->n_pairs; i++) {
    int w = ui_text_cells(recipe_seq_tag(pair_first(&b->pairs[i])));
    b->tag_cells = w > b->tag_cells ? (w < TAG_MAX ? w : TAG_MAX) : b->tag_cells;
  }
  browser_set_filter(b, "");
}

static void detail_free(struct browser *b) {
  for (size_t i = 0; i < b->n_detail; i++)
    free(b->detail[i].text);
  free(b->detail);
  b->detail = NULL;
  b->n_detail = 0;
  b->detail_of = NULL;
}

void browser_fini(struct browser *b) {
  detail_free(b);
  free(b->groups);
  free(b->pairs);
  free(b->lines);
  recipe_findings_fini(&b->findings);
  memset(b, 0, sizeof *b);
}

static bool contains_ci(const char *hay, const char *needle) {
  if (!hay)
    return false;
  size_t n = strlen(needle);
  for (const char *p = hay; *p; p++)
    if (strncasecmp(p, needle, n) == 0)
      return true;
  return false;
}

static bool recipe_matches_word(const struct recipe *r, const char *word) {
  return contains_ci(r->name, word) || contains_ci(r->model, word) ||
         contains_ci(r->model_prefix, word) || contains_ci(r->precision, word) ||
         contains_ci(r->gpu, word) || contains_ci(r->runner, word) ||
         contains_ci(r->engine, word) || contains_ci(r->framework, word) ||
         contains_ci(recipe_spec_name(r->spec), word) || contains_ci(recipe_seq_tag(r), word);
}

static bool recipe_matches(const struct recipe *r, const char *filter) {
  if (!r)
    return false;
  char *words = xstrdup(filter);
  char *save = NULL;
  bool all = true;
  for (char *w = strtok_r(words, " \t", &save); w && all; w = strtok_r(NULL, " \t", &save))
    all = recipe_matches_word(r, w);
  free(words);
  return all;
}

void browser_set_filter(struct browser *b, const char *filter) {
  if (filter != b->filter)
    snprintf(b->filter, sizeof b->filter, "%s", filter);
  const struct recipe *was = browser_selected(b);
  free(b->lines);
  b->lines = xcalloc(b->n_pairs + b->n_groups + 1, sizeof *b->lines);
  b->n_lines = 0;
  size_t last_group = NO_PAIR;
  for (size_t i = 0; i < b->n_pairs; i++) {
    const struct browser_pair *p = &b->pairs[i];
    if (!recipe_matches(p->off, b->filter) && !recipe_matches(p->spec, b->filter))
      continue;
    if (p->group != last_group) {
      b->lines[b->n_lines++] = (struct browser_line){p->group, NO_PAIR};
      last_group = p->group;
    }
    b->lines[b->n_lines++] = (struct browser_line){p->group, i};
  }
  /* keep the selection on the same recipe when it is still shown, else the first row */
  b->sel_line = 0;
  for (size_t i = 0; i < b->n_lines; i++) {
    if (b->lines[i].pair == NO_PAIR)
      continue;
    const struct browser_pair *p = &b->pairs[b->lines[i].pair];
    if (b->lines[b->sel_line].pair == NO_PAIR)
      b->sel_line = i;
    if (was && (p->off == was || p->spec == was)) {
      b->sel_line = i;
      break;
    }
  }
  b->list_top = 0;
}

const struct browser_pair *browser_selected_pair(const struct browser *b) {
  if (!b->lines || b->sel_line >= b->n_lines || b->lines[b->sel_line].pair == NO_PAIR)
    return NULL;
  return &b->pairs[b->lines[b->sel_line].pair];
}

const struct recipe *browser_selected(const struct browser *b) {
  const struct browser_pair *p = browser_selected_pair(b);
  if (!p)
    return NULL;
  const struct recipe *want = b->sel_side ? p->spec : p->off;
  return want ? want : pair_first(p);  /* a missing side selects the other */
}

/* ---------------------------------------------------------------- detail pane */

static void detail_add(struct browser *b, enum theme_role role, int indent, char *text_owned) {
  b->detail = xreallocarray(b->detail, b->n_detail + 1, sizeof *b->detail);
  b->detail[b->n_detail++] = (struct browser_text){text_owned, role, indent};
}

static void detail_heading(struct browser *b, const char *title) {
  detail_add(b, THEME_MAIN, 0, xstrdup(""));
  detail_add(b, THEME_TITLE, 0, xstrdup(title));
}

/* Server flags worth seeing at a glance, in this order. */
static const char *const knob_keys[] = {
    "tp", "ep", "dp", "mem-fraction-static", "max-running-requests", "chunked-prefill-size",
    "cuda-graph-max-bs", "max-total-tokens", "kv-cache-dtype", "quantization",
    "attention-backend", "speculative-algorithm", "speculative-num-steps",
    "speculative-eagle-topk", "speculative-num-draft-tokens", "gpu-memory-utilization",
    "max-num-seqs", "max-num-batched-tokens", "max-model-len",
    /* llama.cpp's (shown as the recipe spells them: -c, -np, -md) */
    "ctx-size", "parallel", "spec-draft-model", "spec-type", "spec-draft-n-max", "gpu-layers",
};

/* How the recipe's command spells knob key when it is a short flag ("-c" for
 * ctx-size); key itself otherwise. */
static const char *knob_spelling(const struct recipe_cmd *cmd, const char *key, char *buf,
                                 size_t buf_bytes) {
  const struct eng_ops *e = cmd->engine ? eng_find(cmd->engine) : NULL;
  for (size_t i = 0; e && i < cmd->argc; i++) {
    size_t prefix = 0;
    /* a short flag as written (-c, -np, -md); long ones keep the key=value form */
    if (str_starts_with(cmd->argv[i], "-") && !str_starts_with(cmd->argv[i], "--") &&
        eng_arg_matches(e, cmd->argv[i], key, &prefix)) {
      snprintf(buf, buf_bytes, "%.*s", (int)prefix, cmd->argv[i]);
      return buf;
    }
  }
  return key;
}

static void detail_command(struct browser *b, const struct recipe *r) {
  if (r->n_points == 0) {
    detail_heading(b, "Server command");
    detail_add(b, THEME_INACTIVE, 2, xstrdup("no sweep point: nothing to resolve"));
    return;
  }
  const struct recipe_point *pt = &r->points[0];
  struct recipe_cmd cmd;
  struct st_err err = {{0}};
  char *heading = xasprintf("Server command (point 1 of %zu: tp%d ep%d conc %d)", r->n_points,
                            pt->tp, pt->ep, pt->conc);
  detail_heading(b, heading);
  free(heading);
  if (recipe_server_cmd(r, pt, &cmd, &err) != 0) {
    detail_add(b, THEME_ERROR, 2, xasprintf("cannot resolve: %s", err.msg));
    return;
  }
  if (cmd.file)
    detail_add(b, THEME_INACTIVE, 2, xasprintf("from %s:%d%s", ui_path_shown(cmd.file), cmd.line,
                                               cmd.conditional ? " (inside an undecided branch)" : ""));
  detail_add(b, THEME_MAIN, 2, xstrdup(str_or(cmd.program, "?")));
  /* one flag (with its value) per line reads better than one long wrapped line */
  for (size_t i = 0; i < cmd.argc; i++) {
    const char *a = cmd.argv[i];
    bool has_value = str_starts_with(a, "-") && i + 1 < cmd.argc && !str_starts_with(cmd.argv[i + 1], "-");
    char *line = has_value ? xasprintf("%s %s", a, cmd.argv[i + 1]) : xstrdup(a);
    enum theme_role role = strstr(line, "<unresolved") ? THEME_WARNING : THEME_MAIN;
    detail_add(b, role, 8, xasprintf("    %s", line));
    free(line);
    if (has_value)
      i++;
  }
  detail_heading(b, "Environment");
  if (cmd.n_env == 0)
    detail_add(b, THEME_INACTIVE, 2, xstrdup("  (none set by the recipe)"));
  for (size_t i = 0; i < cmd.n_env; i++)
    detail_add(b, THEME_MAIN, 4, xasprintf("  %s", cmd.env[i]));
  detail_heading(b, "Knobs");
  struct sbuf sb = {0};
  for (size_t k = 0; k < ST_ARRAY_LEN(knob_keys); k++) {
    const char *v = recipe_cmd_knob(&cmd, knob_keys[k]);
    if (!v)
      continue;
    char spelled[64];
    const char *name = knob_spelling(&cmd, knob_keys[k], spelled, sizeof spelled);
    const char *slash = strrchr(v, '/'); /* a model path: its file name says enough */
    sbuf_printf(&sb, "%s%s%s%s", sb.len ? "   " : "  ", name, *v ? (name[0] == '-' ? " " : "=") : "",
                slash && slash[1] ? slash + 1 : v);
  }
  if (sb.len)
    detail_add(b, THEME_MAIN, 4, sbuf_take(&sb));
  else
    detail_add(b, THEME_INACTIVE, 2, xstrdup("  (none)"));
  if (cmd.has_unresolved)
    detail_add(b, THEME_WARNING, 2,
               xstrdup("  parts of the command depend on the runner's environment (<unresolved>)"));
  recipe_cmd_fini(&cmd);
}

/* Sweep points grouped by parallelism: "tp8 ep8: conc 4 8 16 32 64". */
static void detail_sweep(struct browser *b, const struct recipe *r) {
  char *heading = xasprintf("Sweep (%zu point%s)", r->n_points, r->n_points == 1 ? "" : "s");
  detail_heading(b, heading);
  free(heading);
  struct sbuf sb = {0};
  for (size_t i = 0; i < r->n_points; i++) {
    const struct recipe_point *p = &r->points[i];
    bool same = i > 0 && p->tp == r->points[i - 1].tp && p->ep == r->points[i - 1].ep &&
                p->dp_attn == r->points[i - 1].dp_attn;
    if (!same) {
      if (sb.len)
        detail_add(b, THEME_MAIN, 6, sbuf_take(&sb));
      sbuf_printf(&sb, "  tp%d ep%d%s: conc", p->tp, p->ep, p->dp_attn ? " dp-attn" : "");
    }
    sbuf_printf(&sb, " %d", p->conc);
  }
  if (sb.len)
    detail_add(b, THEME_MAIN, 6, sbuf_take(&sb));
  sbuf_free(&sb);
}

static void detail_findings(struct browser *b, const struct recipe *r) {
  size_t n = 0;
  for (size_t i = 0; i < b->findings.n; i++) {
    const struct recipe_finding *f = &b->findings.items[i];
    if (!finding_is_of(f, r))
      continue;
    if (n++ == 0)
      detail_heading(b, "Doctor's findings");
    detail_add(b, ui_severity_role(f->severity), 4,
               xasprintf("  %s %s %s:%d: %s", recipe_severity_name(f->severity), f->rule,
                         str_or(ui_path_shown(f->file), "?"), f->line, str_or(f->message, "")));
  }
  if (n == 0) {
    detail_heading(b, "Doctor's findings");
    detail_add(b, THEME_OK, 2, xstrdup("  none"));
  }
}

static void detail_build(struct browser *b) {
  const struct recipe *r = browser_selected(b);
  if (r == b->detail_of && (b->detail || !r))
    return;
  detail_free(b);
  b->detail_of = r;
  b->detail_top = 0;
  if (!r)
    return;
  detail_add(b, THEME_HEADER, 2, xstrdup(r->name));
  detail_add(b, THEME_MAIN, 2, xasprintf("model %s  precision %s", str_or(r->model, "?"),
                                         str_or(r->precision, "?")));
  detail_add(b, THEME_MAIN, 2, xasprintf("GPU %s (runner %s)  engine %s (framework %s)",
                                         str_or(r->gpu, "?"), str_or(r->runner, "?"),
                                         str_or(r->engine, "?"), str_or(r->framework, "?")));
  if (r->scenario == RECIPE_SCENARIO_AGENTIC)
    detail_add(b, THEME_MAIN, 2, xasprintf("scenario %s  spec-decoding %s",
                                           recipe_scenario_name(r->scenario), recipe_spec_name(r->spec)));
  else
    detail_add(b, THEME_MAIN, 2, xasprintf("scenario %s isl %d osl %d  spec-decoding %s",
                                           recipe_scenario_name(r->scenario), r->isl, r->osl,
                                           recipe_spec_name(r->spec)));
  if (r->image)
    detail_add(b, THEME_INACTIVE, 2, xasprintf("image %s", r->image));
  detail_add(b, THEME_INACTIVE, 2, xasprintf("defined at %s:%d", str_or(ui_path_shown(r->file), "?"), r->line));
  if (r->script_path)
    detail_add(b, THEME_INACTIVE, 2, xasprintf("launch script %s", ui_path_shown(r->script_path)));
  const struct recipe *twin = recipe_set_twin(b->set, r);
  detail_add(b, twin ? THEME_MAIN : THEME_INACTIVE, 2,
             twin ? xasprintf("twin %s (press a for the A/B run)", twin->name)
                  : xstrdup(r->spec == RECIPE_SPEC_NONE ? "no MTP twin" : "no non-MTP twin"));
  detail_command(b, r);
  detail_sweep(b, r);
  detail_findings(b, r);
}

/* ---------------------------------------------------------------- keys and mouse */

static int list_height(const struct ui_layout *l) {
  return ui_rect_inner(l->slot[UI_SLOT_LIST]).h;
}

static void keep_selection_visible(struct browser *b, const struct ui_layout *l) {
  int h = list_height(l);
  if (h <= 0)
    return;
  int sel = (int)b->sel_line;
  /* show the group heading above the first row of a group */
  int top_needed = sel > 0 && b->lines[sel - 1].pair == NO_PAIR ? sel - 1 : sel;
  if (top_needed < b->list_top)
    b->list_top = top_needed;
  if (sel >= b->list_top + h)
    b->list_top = sel - h + 1;
  int max_top = (int)b->n_lines - h;
  if (b->list_top > max_top)
    b->list_top = max_top > 0 ? max_top : 0;
  if (b->list_top < 0)
    b->list_top = 0;
}

/* Moves the selection by delta pair lines (headings are skipped). */
static void move_selection(struct browser *b, int delta) {
  int step = delta > 0 ? 1 : -1;
  int i = (int)b->sel_line;
  for (int moved = 0; moved != delta;) {
    int next = i + step;
    while (next >= 0 && next < (int)b->n_lines && b->lines[next].pair == NO_PAIR)
      next += step;
    if (next < 0 || next >= (int)b->n_lines)
      break;
    i = next;
    moved += step;
  }
  b->sel_line = (size_t)i;
}

static void scroll_detail(struct browser *b, int lines) {
  b->detail_top += lines;
  if (b->detail_top < 0)
    b->detail_top = 0;
  /* the upper bound depends on the wrap width: browser_render clamps it */
}

static bool filter_key(struct browser *b, int key) {
  size_t len = strlen(b->filter);
  if (key == UI_KEY_ENTER) {
    b->filter_editing = false;
  } else if (key == UI_KEY_ESCAPE) {
    b->filter_editing = false;
    browser_set_filter(b, "");
  } else if (key == UI_KEY_BACKSPACE) {
    if (len > 0) {
      b->filter[len - 1] = '\0';
      browser_set_filter(b, b->filter);
    }
  } else if (key >= 0x20 && key < 0x7f) {
    if (len + 1 < sizeof b->filter) {
      b->filter[len] = (char)key;
      b->filter[len + 1] = '\0';
      browser_set_filter(b, b->filter);
    }
  } else {
    return false;
  }
  return true;
}

static bool on_key(void *self, int key, struct ui_ctx *ctx) {
  struct browser *b = self;
  const struct ui_layout *l = ctx->layout;
  if (b->filter_editing)
    return filter_key(b, key);
  int page = list_height(l) > 1 ? list_height(l) - 1 : 1;
  switch (key) {
  case 'q':
  case 'Q':
    ctx->cmd.kind = UI_CMD_QUIT;
    return true;
  case '/':
    b->filter_editing = true;
    break;
  case UI_KEY_ESCAPE:
    if (!b->filter[0])
      return false;
    browser_set_filter(b, "");
    break;
  case UI_KEY_UP:
  case 'k':
    move_selection(b, -1);
    break;
  case UI_KEY_DOWN:
  case 'j':
    move_selection(b, 1);
    break;
  case UI_KEY_PAGE_UP:
    move_selection(b, -page);
    break;
  case UI_KEY_PAGE_DOWN:
    move_selection(b, page);
    break;
  case UI_KEY_HOME:
  case 'g':
    move_selection(b, -(int)b->n_lines);
    break;
  case UI_KEY_END:
  case 'G':
    move_selection(b, (int)b->n_lines);
    break;
  case UI_KEY_LEFT:
  case 'h':
    b->sel_side = 0;
    break;
  case UI_KEY_RIGHT:
  case 'l':
    b->sel_side = 1;
    break;
  case UI_KEY_TAB:
    b->sel_side = !b->sel_side;
    break;
  case 'J':
    scroll_detail(b, 3);
    break;
  case 'K':
    scroll_detail(b, -3);
    break;
  case UI_KEY_ENTER:
  case 't': { /* the launch form, or the Tune form (with the twin: knob spec) */
    const struct browser_pair *p = browser_selected_pair(b);
    if (!browser_selected(b)) {
      snprintf(b->message, sizeof b->message, "no recipe selected");
      b->message_role = THEME_WARNING;
      return true;
    }
    ctx->cmd.kind = key == 't' ? UI_CMD_TUNE_FORM : UI_CMD_LAUNCH_FORM;
    ctx->cmd.recipe = browser_selected(b);
    if (key == 't' && p && p->off && p->spec)
      ctx->cmd.twin = ctx->cmd.recipe == p->off ? p->spec : p->off;
    return true;
  }
  case 'L':
    ctx->cmd.kind = UI_CMD_PAST_RUNS;
    ctx->cmd.column = 0;
    return true;
  case 'A':
    ctx->cmd.kind = UI_CMD_ATTACH_FORM;
    return true;
  case 'p':
    ctx->cmd.kind = UI_CMD_OPEN;
    ctx->cmd.screen = &problems_screen;
    return true;
  case 'a': {
    const struct browser_pair *p = browser_selected_pair(b);
    if (p && p->off && p->spec) {
      ctx->cmd.kind = UI_CMD_LAUNCH_FORM;
      ctx->cmd.recipe = p->off;
      ctx->cmd.twin = p->spec;
      return true;
    }
    snprintf(b->message, sizeof b->message, "%s has no %s twin: no A/B run",
             p ? pair_first(p)->name : "nothing selected", p && p->off ? "MTP" : "non-MTP");
    b->message_role = THEME_WARNING;
    break;
  }
  default:
    return false;
  }
  /* a message is about the last key; moving on clears it */
  if (key != 'a')
    b->message[0] = '\0';
  keep_selection_visible(b, l);
  return true;
}

/* Column where the spec side of a list row starts (see render_list). */
/* A list row: "> " + sequence tag (tag_w) + off side + MTP side + summary.
 * A side is its label and one cell for the findings marker. */


static int tag_width(const struct browser *b) {
  return 2 + b->tag_cells + 1;
}

static bool on_click(void *self, int x, int y, struct ui_ctx *ctx) {
  struct browser *b = self;
  const struct ui_layout *l = ctx->layout;
  struct ui_rect in = ui_rect_inner(l->slot[UI_SLOT_LIST]);
  struct ui_rect head = l->slot[UI_SLOT_HEADER];
  if (b->findings_w > 0 && y == head.y && x >= b->findings_x && x < b->findings_x + b->findings_w) {
    ctx->cmd.kind = UI_CMD_OPEN;
    ctx->cmd.screen = &problems_screen;
    return true;
  }
  if (!ui_rect_contains(in, x, y))
    return false;
  size_t line = (size_t)(b->list_top + (y - in.y));
  if (line >= b->n_lines || b->lines[line].pair == NO_PAIR)
    return false;
  b->sel_line = line;
  int col = x - in.x, tag_w = tag_width(b);
  if (col >= tag_w && col < tag_w + SIDE_W)
    b->sel_side = 0;
  else if (col >= tag_w + SIDE_W && col < tag_w + 2 * SIDE_W)
    b->sel_side = 1;
  return true;
}

static bool on_wheel(void *self, int x, int y, int lines, struct ui_ctx *ctx) {
  struct browser *b = self;
  const struct ui_layout *l = ctx->layout;
  if (ui_rect_contains(l->slot[UI_SLOT_DETAIL], x, y)) {
    scroll_detail(b, lines);
    return true;
  }
  if (ui_rect_contains(l->slot[UI_SLOT_LIST], x, y)) {
    move_selection(b, lines);
    keep_selection_visible(b, l);
    return true;
  }
  return false;
}

/* ---------------------------------------------------------------- rendering */

static enum theme_role marker_role(int sev) {
  return sev < 0 ? THEME_MAIN : ui_severity_role((enum recipe_severity)sev);
}

static void render_side(struct ui_grid *g, int x, int y, const struct recipe *r, int worst,
                        bool selected) {
  const char *label = !r ? "  - "
                      : r->spec == RECIPE_SPEC_NONE ? " off"
                      : r->spec == RECIPE_SPEC_MTP  ? " mtp"
                                                    : " dft";
  enum theme_role role = !r ? THEME_INACTIVE : selected ? THEME_SELECTED : THEME_MAIN;
  ui_grid_text(g, x, y, SIDE_W - 1, label, role, true);
  if (worst >= 0)
    ui_grid_put(g, x + SIDE_W - 1, y, worst == RECIPE_SEV_NOTE ? "*" : "!", marker_role(worst));
}

static void point_summary(const struct recipe *r, char *buf, size_t n) {
  if (r->n_points == 0) {
    snprintf(buf, n, "no points");
    return;
  }
  int lo = r->points[0].conc, hi = lo;
  for (size_t i = 1; i < r->n_points; i++) {
    lo = r->points[i].conc < lo ? r->points[i].conc : lo;
    hi = r->points[i].conc > hi ? r->points[i].conc : hi;
  }
  if (lo == hi)
    snprintf(buf, n, "tp%d c%d", r->points[0].tp, lo);
  else
    snprintf(buf, n, "tp%d c%d-%d", r->points[0].tp, lo, hi);
}

static void render_list(struct browser *b, struct ui_grid *g, const struct ui_layout *l,
                        const struct ui_glyphs *gl) {
  struct ui_rect box = l->slot[UI_SLOT_LIST];
  char title[64];
  size_t n_shown = 0, total = b->n_pairs ? recipe_set_count(b->set) : 0;
  for (size_t i = 0; i < b->n_lines; i++)
    if (b->lines[i].pair != NO_PAIR)
      n_shown += (b->pairs[b->lines[i].pair].off != NULL) + (b->pairs[b->lines[i].pair].spec != NULL);
  if (b->filter[0])
    snprintf(title, sizeof title, "Recipes %zu/%zu", n_shown, total);
  else
    snprintf(title, sizeof title, "Recipes %zu", total);
  struct ui_rect in = ui_pane(g, box, title, gl);
  if (b->n_lines == 0) {
    ui_grid_text(g, in.x + 1, in.y, in.w - 1,
                 b->filter[0] ? "no recipe matches the filter" : "no recipes loaded",
                 THEME_INACTIVE, gl->braille);
    return;
  }
  keep_selection_visible(b, l);
  for (int row = 0; row < in.h; row++) {
    size_t i = (size_t)(b->list_top + row);
    if (i >= b->n_lines)
      break;
    int y = in.y + row;
    const struct browser_line *line = &b->lines[i];
    if (line->pair == NO_PAIR) {
      char *group_title = group_title_alloc(b->groups[line->group].first, gl->separator);
      ui_grid_text(g, in.x, y, in.w, group_title, THEME_HEADER, gl->braille);
      free(group_title);
      continue;
    }
    const struct browser_pair *p = &b->pairs[line->pair];
    bool sel = i == b->sel_line;
    const struct recipe *first = pair_first(p);
    ui_grid_text(g, in.x, y, 2, sel ? ">" : " ", THEME_HOTKEY, gl->braille);
    int tag_w = tag_width(b);
    ui_grid_text(g, in.x + 2, y, b->tag_cells, recipe_seq_tag(first), sel ? THEME_TITLE : THEME_MAIN,
                 gl->braille);
    const struct recipe *shown = browser_selected(b);
    render_side(g, in.x + tag_w, y, p->off, p->worst_off, sel && shown == p->off);
    render_side(g, in.x + tag_w + SIDE_W, y, p->spec, p->worst_spec, sel && shown == p->spec);
    /* the numbers of the side the selection shows (the other where it is missing) */
    const struct recipe *side = b->sel_side ? p->spec : p->off;
    char summary[48];
    point_summary(side ? side : first, summary, sizeof summary);
    int sx = in.x + tag_w + 2 * SIDE_W;
    ui_grid_text(g, sx, y, in.x + in.w - sx, summary, THEME_INACTIVE, gl->braille);
  }
}

static void render_detail(struct browser *b, struct ui_grid *g, const struct ui_layout *l,
                          const struct ui_glyphs *gl) {
  struct ui_rect box = l->slot[UI_SLOT_DETAIL];
  struct ui_rect in = ui_pane(g, box, "Recipe", gl);
  in.x += 1;
  in.w -= 1;
  detail_build(b);
  if (!b->detail_of) {
    ui_grid_text(g, in.x, in.y, in.w, "select a recipe on the left", THEME_INACTIVE, gl->braille);
    return;
  }
  int total = 0;
  for (size_t i = 0; i < b->n_detail; i++)
    total += ui_wrap_text(NULL, 0, 0, 0, 0, in.w, b->detail[i].text, b->detail[i].indent, THEME_MAIN,
                       gl->braille);
  int max_top = total - in.h;
  if (b->detail_top > max_top)
    b->detail_top = max_top > 0 ? max_top : 0;
  int vline = 0;  /* visual line index across the whole pane */
  for (size_t i = 0; i < b->n_detail && vline < b->detail_top + in.h; i++) {
    const struct browser_text *t = &b->detail[i];
    /* the part of this text's visual lines that falls in the window */
    int first = b->detail_top - vline > 0 ? b->detail_top - vline : 0;
    int y0 = in.y + (vline + first) - b->detail_top;
    int rows_left = in.y + in.h - y0;
    vline += ui_wrap_text(g, in.x, y0, first, rows_left, in.w, t->text, t->indent, t->role,
                       gl->braille);
  }
  if (total > in.h) {
    char pos[32];
    snprintf(pos, sizeof pos, " %d-%d/%d ", b->detail_top + 1,
             b->detail_top + in.h < total ? b->detail_top + in.h : total, total);
    int w = ui_text_cells(pos);
    ui_grid_text(g, box.x + box.w - w - 2, box.y + box.h - 1, w, pos, THEME_INACTIVE, gl->braille);
  }
}

static void render_header(struct browser *b, struct ui_grid *g, const struct ui_layout *l,
                          const struct ui_glyphs *gl) {
  struct ui_rect r = l->slot[UI_SLOT_HEADER];
  ui_grid_fill(g, r, THEME_HEADER);
  /* what the filter shows: groups, rows, MTP twins, findings */
  size_t groups = 0, rows = 0, n_mtp = 0, n_draft = 0, findings = 0, errors = 0;
  for (size_t i = 0; i < b->n_lines; i++) {
    if (b->lines[i].pair == NO_PAIR) {
      groups++;
      continue;
    }
    const struct browser_pair *p = &b->pairs[b->lines[i].pair];
    rows++;
    n_mtp += p->spec && p->spec->spec != RECIPE_SPEC_DRAFT_MODEL;
    n_draft += p->spec && p->spec->spec == RECIPE_SPEC_DRAFT_MODEL;
    findings += (size_t)(p->findings[0] + p->findings[1]);
    errors += (size_t)(p->errors[0] + p->errors[1]);
  }
  if (!b->filter[0]) { /* every finding, those of no recipe (load errors) too */
    findings = b->findings.n;
    errors = recipe_findings_errors(&b->findings);
  }
  char text[256], drafts[48] = ""; /* twins with a draft model are not MTP */
  if (n_draft)
    snprintf(drafts, sizeof drafts, "%s%zu draft", gl->separator, n_draft);
  snprintf(text, sizeof text, " servetop " SERVETOP_VERSION "%srecipes%s%zu group%s%s%zu row%s%s%zu MTP%s",
           gl->separator, gl->separator, groups, groups == 1 ? "" : "s", gl->separator, rows,
           rows == 1 ? "" : "s", gl->separator, n_mtp, drafts);
  int w_left = ui_grid_text(g, r.x, r.y, r.w, text, THEME_HEADER, gl->braille);
  b->findings_w = 0;
  if (b->findings.n) {
    char of[32] = "";
    if (b->filter[0])
      snprintf(of, sizeof of, "/%zu", b->findings.n);
    snprintf(text, sizeof text, "%zu%s finding%s, %zu error%s", findings, of,
             findings == 1 && !of[0] ? "" : "s", errors, errors == 1 ? "" : "s");
    int w = ui_text_cells(text);
    if (w <= r.w - w_left - 1) {
      b->findings_x = r.x + r.w - w;
      b->findings_w = w;
      ui_grid_text(g, b->findings_x, r.y, w, text, errors ? THEME_ERROR : THEME_WARNING, gl->braille);
    }
  }
}

static void footer(void *self, struct ui_footer *f) {
  struct browser *b = self;
  if (b->filter_editing) {
    ui_footer_input(f, "filter: /", b->filter, "(Enter keeps, Esc clears)");
    return;
  }
  const struct browser_pair *p = browser_selected_pair(b);
  if (!p || !p->off || !p->spec)
    f->inactive |= 1u << KEY_A;
  if (b->findings.n == 0)
    f->inactive |= 1u << KEY_PROBLEMS;
  if (b->message[0]) {
    f->status = b->message;
    f->status_role = b->message_role;
  } else if (b->filter[0]) {
    snprintf(b->footer_text, sizeof b->footer_text, "filter: %s", b->filter);
    f->status = b->footer_text;
    f->status_role = THEME_WARNING;
  }
}

void browser_render(struct browser *b, struct ui_grid *g, const struct ui_layout *l,
                    const struct ui_glyphs *gl) {
  if (!ui_frame_begin(g, l, gl))
    return;
  render_header(b, g, l, gl);
  render_list(b, g, l, gl);
  render_detail(b, g, l, gl);
}

static void render(void *self, struct ui_grid *g, const struct ui_ctx *ctx) {
  browser_render(self, g, ctx->layout, ctx->gl);
}

const struct ui_screen browser_screen = {
    .name = "browser",
    .help_title = "Recipe browser keys",
    .keys = keys,
    .n_keys = ST_ARRAY_LEN(keys),
    .view = UI_VIEW_BROWSER,
    .key = on_key,
    .click = on_click,
    .wheel = on_wheel,
    .render = render,
    .footer = footer,
};
