/* Table-driven long-option parser shared by every subcommand. */
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

bool opt_names_match(const char *names, const char *name, size_t name_len) {
  const char *s = names;
  while (*s) {
    const char *bar = strchr(s, '|');
    size_t n = bar ? (size_t)(bar - s) : strlen(s);
    if (n == name_len && memcmp(s, name, n) == 0)
      return true;
    if (!bar)
      break;
    s = bar + 1;
  }
  return false;
}

static const struct opt_spec *find_spec(const struct opt_parser *p, const char *name, size_t len) {
  for (size_t i = 0; i < p->n_specs; i++)
    if (opt_names_match(p->specs[i].names, name, len))
      return &p->specs[i];
  return NULL;
}

static int store_value(const struct opt_parser *p, const struct opt_spec *s, const char *name,
                       const char *value, struct st_err *err) {
  switch (s->kind) {
  case OPT_FLAG: {
    bool b = true;
    if (value && parse_bool(value, &b) < 0)
      return err_setf(err, "option --%s: expected true or false, got '%s'", name, value);
    *(bool *)s->target = b;
    break;
  }
  case OPT_STRING:
    *(const char **)s->target = value;
    break;
  case OPT_INT:
    if (parse_int(value, (int *)s->target) < 0)
      return err_setf(err, "option --%s: expected an integer, got '%s'", name, value);
    break;
  case OPT_LONG:
    if (parse_long(value, (long *)s->target) < 0)
      return err_setf(err, "option --%s: expected an integer, got '%s'", name, value);
    break;
  case OPT_DOUBLE:
    if (parse_double(value, (double *)s->target) < 0)
      return err_setf(err, "option --%s: expected a number, got '%s'", name, value);
    break;
  case OPT_LIST: {
    struct opt_list *l = s->target;
    l->items = xreallocarray(l->items, l->n + 1, sizeof *l->items);
    l->items[l->n++] = (char *)value;
    break;
  }
  case OPT_CALLBACK:
    if (s->callback(p->ctx, name, value, err) < 0)
      return -1;
    break;
  }
  if (s->seen)
    *s->seen = true;
  return 0;
}

int opt_parse(const struct opt_parser *p, int argc, char **argv, char **pos, size_t max_pos,
              size_t *n_pos, struct st_err *err) {
  size_t npos = 0;
  bool only_pos = false;
  for (int i = 0; i < argc; i++) {
    char *arg = argv[i];
    if (only_pos || arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (npos >= max_pos)
        return err_setf(err, "unexpected argument '%s'", arg);
      pos[npos++] = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      only_pos = true;
      continue;
    }
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)
      return OPT_HELP;
    if (arg[1] != '-')
      return err_setf(err, "unknown option '%s' (options are long: --name)", arg);
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
    char name_buf[128];
    snprintf(name_buf, sizeof name_buf, "%.*s", (int)name_len, name);
    const struct opt_spec *s = find_spec(p, name, name_len);
    if (!s) {
      if (!p->unknown)
        return err_setf(err, "unknown option --%s (see --help)", name_buf);
      const char *value = eq ? eq + 1 : NULL;
      bool next_is_value = !eq && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0;
      bool consumed = false;
      if (p->unknown(p->ctx, name_buf, value ? value : next_is_value ? argv[i + 1] : NULL,
                     &consumed) < 0)
        return err_setf(err, "unknown option --%s (see --help)", name_buf);
      if (consumed && next_is_value)
        i++;
      continue;
    }
    const char *value = NULL;
    bool takes_value = s->kind != OPT_FLAG;
    if (s->kind == OPT_CALLBACK && s->metavar == NULL)
      takes_value = false; /* a callback flag without a value */
    if (eq) {
      value = eq + 1;
    } else if (takes_value) {
      if (i + 1 >= argc)
        return err_setf(err, "option --%s needs a value", name_buf);
      value = argv[++i];
    }
    if (store_value(p, s, name_buf, value, err) < 0)
      return OPT_ERROR;
  }
  if (n_pos)
    *n_pos = npos;
  return OPT_OK;
}

/* Whether the line break at text[i] stays: before a blank or indented line,
 * and after a sentence (a line ending in '.' or ':'); other breaks are
 * blanks, so a paragraph is filled to the width. */
static bool break_stays(const char *text, size_t i) {
  char next = text[i + 1];
  if (next == '\0' || next == '\n' || next == ' ' || i == 0)
    return true;
  char prev = text[i - 1];
  return prev == '.' || prev == ':' || prev == '\n';
}

/* Writes text from column col (the cursor is there), wrapped at blanks
 * before OPT_HELP_COLS; lines after the first start at column indent. A
 * word longer than a line stays whole. Ends the line. */
static void print_wrapped(FILE *out, const char *text, int col, int indent) {
  int at = col;
  bool line_start = true;
  size_t i = 0, n = strlen(text);
  while (i < n) {
    if (text[i] == '\n') {
      if (break_stays(text, i)) {
        fprintf(out, "\n%*s", text[i + 1] ? indent : 0, "");
        at = indent;
        line_start = true;
        i++;
        continue;
      }
    }
    size_t w = i;
    while (w < n && (text[w] == ' ' || (text[w] == '\n' && !break_stays(text, w))))
      w++;
    size_t w_end = w;
    while (w_end < n && text[w_end] != ' ' && text[w_end] != '\n')
      w_end++;
    int gap = (int)(w - i), len = (int)(w_end - w);
    if (len == 0) {
      i = w;
      continue;
    }
    if (!line_start && at + gap + len > OPT_HELP_COLS) {
      fprintf(out, "\n%*s", indent, "");
      at = indent;
      gap = 0;
    }
    fprintf(out, "%*s%.*s", gap, "", len, text + w);
    at += gap + len;
    line_start = false;
    i = w_end;
  }
  fputc('\n', out);
}

void opt_print_wrapped(FILE *out, const char *text) {
  print_wrapped(out, text, 0, 0);
}

void opt_print_help(const struct opt_parser *p, FILE *out) {
  fputs("usage: ", out);
  print_wrapped(out, p->usage, 7, 7);
  if (p->description) {
    fputc('\n', out);
    print_wrapped(out, p->description, 0, 0);
  }
  if (p->n_specs)
    fprintf(out, "\noptions:\n");
  for (size_t i = 0; i < p->n_specs; i++) {
    const struct opt_spec *s = &p->specs[i];
    char left[160];
    size_t n = 0;
    const char *names = s->names;
    while (*names && n < sizeof left - 40) {
      const char *bar = strchr(names, '|');
      size_t len = bar ? (size_t)(bar - names) : strlen(names);
      n += (size_t)snprintf(left + n, sizeof left - n, "%s--%.*s", n ? ", " : "", (int)len, names);
      if (!bar)
        break;
      names = bar + 1;
    }
    if (s->metavar && n < sizeof left)
      snprintf(left + n, sizeof left - n, " %s", s->metavar);
    if (strlen(left) <= 30)
      fprintf(out, "  %-30s ", left);
    else
      fprintf(out, "  %s\n  %-30s ", left, "");
    print_wrapped(out, s->help ? s->help : "", 33, 33);
  }
  fprintf(out, "  %-30s %s\n", "-h, --help", "show this help and exit");
}
