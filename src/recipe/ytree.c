/* A YAML tree from libyaml events, keeping every node's start mark. */
#include "recipe/recipe_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Nesting deeper than this is refused: recipes are 6 levels deep, and a
 * bounded depth keeps recursion (free, lookups) safe on hostile input. */
enum { YTREE_MAX_DEPTH = 64 };

static struct ynode *node_new(enum ynode_kind kind, const yaml_mark_t *mark) {
  struct ynode *n = xcalloc(1, sizeof *n);
  n->kind = kind;
  n->line = (int)mark->line + 1;
  n->col = (int)mark->column + 1;
  return n;
}

static void node_add(struct ynode *parent, struct ynode *kid) {
  parent->kids = xreallocarray(parent->kids, parent->n_kids + 1, sizeof *parent->kids);
  parent->kids[parent->n_kids++] = kid;
}

void ytree_free(struct ynode *node) {
  if (!node)
    return;
  for (size_t i = 0; i < node->n_kids; i++)
    ytree_free(node->kids[i]);
  free(node->kids);
  free(node->scalar);
  free(node);
}

struct ynode *ytree_parse(const char *data, size_t len, const char *file, struct st_err *err) {
  return ytree_parse_ex(data, len, file, false, err);
}

struct ynode *ytree_parse_ex(const char *data, size_t len, const char *file,
                             bool alias_placeholders, struct st_err *err) {
  yaml_parser_t parser;
  yaml_event_t ev;
  struct ynode *stack[YTREE_MAX_DEPTH];
  size_t depth = 0;
  struct ynode *root = NULL;
  bool done = false;

  if (!yaml_parser_initialize(&parser))
    util_die_oom(0);
  yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
  while (!done) {
    if (!yaml_parser_parse(&parser, &ev)) {
      const yaml_mark_t *m = parser.problem_mark.line || parser.problem_mark.column
                                 ? &parser.problem_mark : &parser.context_mark;
      err_setf(err, "%s:%zu:%zu: YAML syntax: %s%s%s", file, m->line + 1, m->column + 1,
               parser.problem ? parser.problem : "error", parser.context ? " " : "",
               parser.context ? parser.context : "");
      goto fail;
    }
    struct ynode *n = NULL;
    switch (ev.type) {
    case YAML_STREAM_END_EVENT:
      done = true;
      break;
    case YAML_DOCUMENT_START_EVENT:
      if (root) {
        err_setf(err, "%s:%zu:%zu: more than one YAML document", file, ev.start_mark.line + 1,
                 ev.start_mark.column + 1);
        yaml_event_delete(&ev);
        goto fail;
      }
      break;
    case YAML_ALIAS_EVENT:
      if (alias_placeholders) {
        n = node_new(YN_SCALAR, &ev.start_mark);
        n->scalar = xasprintf("*%s", (const char *)ev.data.alias.anchor);
        n->quoted = true;
        break;
      }
      err_setf(err, "%s:%zu:%zu: YAML aliases are not supported", file, ev.start_mark.line + 1,
               ev.start_mark.column + 1);
      yaml_event_delete(&ev);
      goto fail;
    case YAML_SCALAR_EVENT:
      n = node_new(YN_SCALAR, &ev.start_mark);
      n->scalar = xstrndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
      n->quoted = ev.data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                  ev.data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE ||
                  ev.data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
                  ev.data.scalar.style == YAML_FOLDED_SCALAR_STYLE;
      break;
    case YAML_SEQUENCE_START_EVENT:
      n = node_new(YN_SEQ, &ev.start_mark);
      break;
    case YAML_MAPPING_START_EVENT:
      n = node_new(YN_MAP, &ev.start_mark);
      break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      depth--;
      break;
    default:
      break;
    }
    if (n) {
      if (depth > 0)
        node_add(stack[depth - 1], n);
      else if (!root)
        root = n;
      else
        ytree_free(n); /* unreachable: one document */
      if (n->kind != YN_SCALAR) {
        if (depth == YTREE_MAX_DEPTH) {
          err_setf(err, "%s:%d:%d: YAML nested too deeply", file, n->line, n->col);
          yaml_event_delete(&ev);
          goto fail;
        }
        stack[depth++] = n;
      }
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&parser);
  if (!root) {
    root = xcalloc(1, sizeof *root);
    root->kind = YN_MAP;
    root->line = root->col = 1;
  }
  return root;
fail:
  yaml_parser_delete(&parser);
  ytree_free(root);
  return NULL;
}

const struct ynode *ytree_map_get(const struct ynode *map, const char *key) {
  if (!map || map->kind != YN_MAP)
    return NULL;
  for (size_t i = 0; i + 1 < map->n_kids; i += 2)
    if (map->kids[i]->kind == YN_SCALAR && strcmp(map->kids[i]->scalar, key) == 0)
      return map->kids[i + 1];
  return NULL;
}

size_t ytree_map_len(const struct ynode *map) {
  return map && map->kind == YN_MAP ? map->n_kids / 2 : 0;
}

int ytree_scalar_long(const struct ynode *node, long *out) {
  if (!node || node->kind != YN_SCALAR || node->quoted)
    return -1;
  char buf[64];
  size_t j = 0;
  const char *s = node->scalar;
  if (!*s)
    return -1;
  for (size_t i = 0; s[i]; i++) {
    if (s[i] == '_' && i > 0 && s[i + 1])
      continue; /* YAML 1.1 digit separator: 3_091_589 */
    if (j + 1 >= sizeof buf)
      return -1;
    buf[j++] = s[i];
  }
  buf[j] = '\0';
  return parse_long(buf, out);
}
