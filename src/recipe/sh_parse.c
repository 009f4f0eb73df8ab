/* Static shell reader, part 1: bash text -> commands of raw words.
 * Joins backslash continuations, keeps quotes, $(...), ${...}, $((...)),
 * array bodies NAME=( ... ) and heredoc bodies inside single words, and
 * splits commands at newlines, ';', '&&', '||', '|' and '&'. */
#include "recipe/recipe_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lexer {
  const char *s;
  size_t len, i;
  int line, col;
  const char *file;
  struct st_err *err;
  struct sh_script *out;
  struct sh_cmd cur;
  struct sbuf word;
  bool in_word;
  int word_line;
  int next_connector;
  bool in_dbl_bracket;
  bool case_pattern;    /* after "case ... in" or ";;": '|' separates patterns */
  char *heredoc_delim;  /* pending heredoc: body starts at the next line */
  bool heredoc_strip_tabs;
  int span_line, span_col, span_end_line, span_end_col; /* the last quote that spanned lines */
};

/* A quoted string opened at (l, c) has just closed: one that ran over a line
 * end is remembered, as the likely place of a quote left open. */
static void quote_closed(struct lexer *lx, int l, int c) {
  if (lx->line == l)
    return;
  lx->span_line = l;
  lx->span_col = c;
  lx->span_end_line = lx->line;
  lx->span_end_col = lx->col;
}

static void adv(struct lexer *lx) {
  if (lx->s[lx->i] == '\n') {
    lx->line++;
    lx->col = 1;
  } else {
    lx->col++;
  }
  lx->i++;
}

static char peek(const struct lexer *lx, size_t k) {
  return lx->i + k < lx->len ? lx->s[lx->i + k] : '\0';
}

static void word_end(struct lexer *lx) {
  if (!lx->in_word)
    return;
  struct sh_cmd *c = &lx->cur;
  if (c->n_words == 0) {
    c->line = lx->word_line;
  }
  c->words = xreallocarray(c->words, c->n_words + 1, sizeof *c->words);
  c->words[c->n_words].raw = sbuf_take(&lx->word);
  c->words[c->n_words].line = lx->word_line;
  c->n_words++;
  if (strcmp(c->words[c->n_words - 1].raw, "[[") == 0)
    lx->in_dbl_bracket = true;
  else if (strcmp(c->words[c->n_words - 1].raw, "]]") == 0)
    lx->in_dbl_bracket = false;
  const char *last = c->words[c->n_words - 1].raw;
  if (lx->case_pattern && (str_ends_with(last, ")") || strcmp(last, "esac") == 0))
    lx->case_pattern = false;
  lx->in_word = false;
}

static void cmd_end(struct lexer *lx, int next_connector) {
  word_end(lx);
  if (lx->cur.n_words > 0) {
    if (strcmp(lx->cur.words[0].raw, "case") == 0)
      lx->case_pattern = true;
    struct sh_script *o = lx->out;
    o->cmds = xreallocarray(o->cmds, o->n_cmds + 1, sizeof *o->cmds);
    lx->cur.connector = lx->next_connector;
    o->cmds[o->n_cmds++] = lx->cur;
    memset(&lx->cur, 0, sizeof lx->cur);
    lx->next_connector = next_connector;
  } else if (next_connector) {
    lx->next_connector = next_connector;
  }
  lx->in_dbl_bracket = false;
}

static void put(struct lexer *lx, char c) {
  if (!lx->in_word) {
    lx->in_word = true;
    lx->word_line = lx->line;
  }
  struct sbuf *w = &lx->word;
  if (w->len + 1 < w->cap) { /* room: one byte, kept NUL-terminated */
    w->data[w->len++] = c;
    w->data[w->len] = '\0';
  } else {
    sbuf_putc(w, c);
  }
}

static int scan_error(struct lexer *lx, int line, int col, const char *what) {
  return err_setf(lx->err, "%s:%d:%d: %s", lx->file, line, col, what);
}

/* An unterminated quote at (l, c): where bash sees it open, unless an earlier
 * quoted string ran over a line end: that one is where the quote was most
 * likely left open (it closed on the quote meant to open the next string). */
static int unterminated(struct lexer *lx, int l, int c, const char *kind) {
  if (lx->span_line > 0 && lx->span_line < l)
    return err_setf(lx->err,
                    "%s:%d:%d: unterminated %s quote: the quote opened here runs to %d:%d, so "
                    "the one at %d:%d never closes",
                    lx->file, lx->span_line, lx->span_col, kind, lx->span_end_line,
                    lx->span_end_col - 1, l, c);
  char what[64];
  snprintf(what, sizeof what, "unterminated %s quote", kind);
  return scan_error(lx, l, c, what);
}

/* The end of a quoted string opened at (l, c): its closing quote, or the
 * error when the text ends first. */
static int close_quote(struct lexer *lx, int l, int c, char quote, const char *kind) {
  if (lx->i >= lx->len)
    return unterminated(lx, l, c, kind);
  put(lx, quote);
  adv(lx);
  quote_closed(lx, l, c);
  return 0;
}

static int scan_single_quote(struct lexer *lx) {
  int l = lx->line, c = lx->col;
  put(lx, '\'');
  adv(lx);
  while (lx->i < lx->len && lx->s[lx->i] != '\'') {
    put(lx, lx->s[lx->i]);
    adv(lx);
  }
  return close_quote(lx, l, c, '\'', "single");
}

static int scan_nested(struct lexer *lx, char open, char close, int depth);

static int too_deep(struct lexer *lx, int line, int col) {
  return err_setf(lx->err, "%s:%d:%d: substitutions, arrays and groups nested more than %d deep "
                  "(servetop reads launch scripts only up to that depth)",
                  lx->file, line, col, SH_MAX_NESTING);
}

static int scan_double_quote(struct lexer *lx, int depth) {
  int l = lx->line, c = lx->col;
  put(lx, '"');
  adv(lx);
  while (lx->i < lx->len && lx->s[lx->i] != '"') {
    char ch = lx->s[lx->i];
    if (ch == '\\' && lx->i + 1 < lx->len) {
      if (lx->s[lx->i + 1] == '\n') { /* continuation inside quotes: joined */
        adv(lx);
        adv(lx);
        continue;
      }
      put(lx, ch);
      adv(lx);
      put(lx, lx->s[lx->i]);
      adv(lx);
      continue;
    }
    if (ch == '$' && (peek(lx, 1) == '(' || peek(lx, 1) == '{')) {
      put(lx, '$');
      adv(lx);
      char open = lx->s[lx->i];
      if (scan_nested(lx, open, open == '(' ? ')' : '}', depth + 1) < 0)
        return -1;
      continue;
    }
    put(lx, ch);
    adv(lx);
  }
  return close_quote(lx, l, c, '"', "double");
}

/* Copies a balanced (...) or {...} group, quotes inside respected. depth is
 * the nesting around it (groups and quotes); with its own levels it may reach
 * SH_MAX_NESTING, so that reading the script's bodies stays linear. */
static int scan_nested(struct lexer *lx, char open, char close, int depth) {
  int l = lx->line, c = lx->col;
  if (depth >= SH_MAX_NESTING)
    return too_deep(lx, l, c);
  int level = 0;
  while (lx->i < lx->len) {
    char ch = lx->s[lx->i];
    if (ch == '\'' && open == '(') {
      if (scan_single_quote(lx) < 0)
        return -1;
      continue;
    }
    if (ch == '"') {
      if (scan_double_quote(lx, depth + level) < 0)
        return -1;
      continue;
    }
    if (ch == '\\' && lx->i + 1 < lx->len) {
      put(lx, ch);
      adv(lx);
      put(lx, lx->s[lx->i]);
      adv(lx);
      continue;
    }
    if (ch == '#' && open == '(' && level > 0 &&
        (lx->i == 0 || isspace((unsigned char)lx->s[lx->i - 1]))) {
      /* a comment inside an array body or $( ): dropped up to the newline */
      while (lx->i < lx->len && lx->s[lx->i] != '\n')
        adv(lx);
      continue;
    }
    if (ch == open && depth + level >= SH_MAX_NESTING)
      return too_deep(lx, lx->line, lx->col);
    put(lx, ch);
    adv(lx);
    if (ch == open)
      level++;
    else if (ch == close && --level == 0)
      return 0;
  }
  return scan_error(lx, l, c, open == '(' ? "unterminated '(' (array or substitution)"
                                          : "unterminated '${'");
}

/* Reads a heredoc body after the newline that ends its command line; the body
 * becomes one word (redirect target) so static scans can see it. */
static void scan_heredoc_body(struct lexer *lx) {
  struct sbuf body = {0};
  while (lx->i < lx->len) {
    size_t start = lx->i;
    while (lx->i < lx->len && lx->s[lx->i] != '\n')
      adv(lx);
    size_t end = lx->i;
    if (lx->i < lx->len)
      adv(lx);
    const char *p = lx->s + start;
    size_t n = end - start;
    if (lx->heredoc_strip_tabs)
      while (n > 0 && *p == '\t') {
        p++;
        n--;
      }
    if (n == strlen(lx->heredoc_delim) && memcmp(p, lx->heredoc_delim, n) == 0)
      break;
    sbuf_append(&body, lx->s + start, end - start);
    sbuf_putc(&body, '\n');
  }
  /* attach to the last command as a trailing word */
  struct sh_script *o = lx->out;
  if (o->n_cmds > 0) {
    struct sh_cmd *c = &o->cmds[o->n_cmds - 1];
    c->words = xreallocarray(c->words, c->n_words + 1, sizeof *c->words);
    c->words[c->n_words].raw = xasprintf("<<HEREDOC:%s", body.data ? body.data : "");
    c->words[c->n_words].line = c->line;
    c->n_words++;
  }
  sbuf_free(&body);
  free(lx->heredoc_delim);
  lx->heredoc_delim = NULL;
}

static void scan_heredoc_op(struct lexer *lx) {
  adv(lx);
  adv(lx); /* << */
  lx->heredoc_strip_tabs = false;
  if (peek(lx, 0) == '-') {
    lx->heredoc_strip_tabs = true;
    adv(lx);
  }
  while (peek(lx, 0) == ' ' || peek(lx, 0) == '\t')
    adv(lx);
  struct sbuf d = {0};
  while (lx->i < lx->len && !isspace((unsigned char)lx->s[lx->i]) && lx->s[lx->i] != ';' &&
         lx->s[lx->i] != '>' && lx->s[lx->i] != '|' && lx->s[lx->i] != '&') {
    char ch = lx->s[lx->i];
    if (ch != '\'' && ch != '"' && ch != '\\')
      sbuf_putc(&d, ch);
    adv(lx);
  }
  free(lx->heredoc_delim);
  lx->heredoc_delim = d.data ? sbuf_take(&d) : xstrdup("");
}

static int parse_at(const char *data, size_t len, const char *file, struct sh_script *out,
                    struct st_err *err, int depth) {
  struct lexer lx = {.s = data, .len = len, .line = 1, .col = 1, .file = file, .err = err,
                     .out = out};
  memset(out, 0, sizeof *out);
  out->file = xstrdup(file);
  while (lx.i < lx.len) {
    char ch = data[lx.i];
    if (ch == '\0') {
      scan_error(&lx, lx.line, lx.col, "NUL byte in script");
      goto fail;
    }
    if (ch == '\\') {
      if (peek(&lx, 1) == '\n') {
        /* joined; one before the end of the file just ends the command, as
         * bash reads it */
        adv(&lx);
        adv(&lx);
        continue;
      }
      if (lx.i + 1 >= lx.len) { /* a '\\' as the last byte: bash drops it */
        adv(&lx);
        continue;
      }
      put(&lx, ch);
      adv(&lx);
      put(&lx, data[lx.i]);
      adv(&lx);
      continue;
    }
    if (ch == '#' && !lx.in_word) {
      while (lx.i < lx.len && data[lx.i] != '\n')
        adv(&lx);
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\r') {
      word_end(&lx);
      adv(&lx);
      continue;
    }
    if (ch == '\n') {
      cmd_end(&lx, 0);
      adv(&lx);
      if (lx.heredoc_delim)
        scan_heredoc_body(&lx);
      continue;
    }
    if (ch == '\'') {
      if (scan_single_quote(&lx) < 0)
        goto fail;
      continue;
    }
    if (ch == '"') {
      if (scan_double_quote(&lx, 0) < 0)
        goto fail;
      continue;
    }
    if (ch == '`') {
      int l = lx.line, c = lx.col;
      put(&lx, ch);
      adv(&lx);
      while (lx.i < lx.len && data[lx.i] != '`') {
        put(&lx, data[lx.i]);
        adv(&lx);
      }
      if (lx.i >= lx.len) {
        scan_error(&lx, l, c, "unterminated backquote");
        goto fail;
      }
      put(&lx, '`');
      adv(&lx);
      continue;
    }
    if (ch == '$' && (peek(&lx, 1) == '(' || peek(&lx, 1) == '{')) {
      put(&lx, '$');
      adv(&lx);
      char open = data[lx.i];
      if (scan_nested(&lx, open, open == '(' ? ')' : '}', 0) < 0)
        goto fail;
      continue;
    }
    if (ch == '(') {
      bool array = lx.in_word && lx.word.len > 0 && lx.word.data[lx.word.len - 1] == '=';
      bool arith = !lx.in_word && peek(&lx, 1) == '(';
      if (array || arith) {
        if (scan_nested(&lx, '(', ')', 0) < 0)
          goto fail;
        continue;
      }
    }
    if (lx.in_dbl_bracket && (ch == '&' || ch == '|' || ch == '<' || ch == '>')) {
      put(&lx, ch); /* operators inside [[ ]] are words */
      adv(&lx);
      continue;
    }
    if (ch == ';') {
      if (peek(&lx, 1) == ';') {
        cmd_end(&lx, 0);
        put(&lx, ';');
        put(&lx, ';');
        adv(&lx);
        adv(&lx);
        if (peek(&lx, 0) == '&')
          adv(&lx);
        cmd_end(&lx, 0);
        lx.case_pattern = true;
        continue;
      }
      cmd_end(&lx, 0);
      adv(&lx);
      continue;
    }
    if (ch == '&' && peek(&lx, 1) == '&') {
      cmd_end(&lx, '&');
      adv(&lx);
      adv(&lx);
      continue;
    }
    if (ch == '|' && peek(&lx, 1) == '|') {
      cmd_end(&lx, '|');
      adv(&lx);
      adv(&lx);
      continue;
    }
    if (ch == '|' && lx.case_pattern) {
      put(&lx, ch); /* "4|8)" is one pattern word */
      adv(&lx);
      continue;
    }
    if (ch == '|') {
      cmd_end(&lx, 'p');
      adv(&lx);
      continue;
    }
    if (ch == '<' && peek(&lx, 1) == '<' && peek(&lx, 2) != '<') {
      word_end(&lx);
      scan_heredoc_op(&lx);
      continue;
    }
    if (ch == '>' || ch == '<' || (ch == '&' && peek(&lx, 1) == '>')) {
      /* redirection: "N>", ">>", "&>", ">&N" become one word starting with '>'
       * or '<' (the fd digits are dropped); its target is the next word */
      if (lx.in_word) {
        bool digits = true;
        for (size_t k = 0; k < lx.word.len; k++)
          digits = digits && isdigit((unsigned char)lx.word.data[k]);
        if (digits)
          sbuf_reset(&lx.word), lx.in_word = false;
        else
          word_end(&lx);
      }
      if (ch == '&')
        adv(&lx);
      struct sbuf op = {0};
      sbuf_putc(&op, data[lx.i]);
      adv(&lx);
      while (peek(&lx, 0) == '>' || peek(&lx, 0) == '|' || peek(&lx, 0) == '<')
        sbuf_putc(&op, data[lx.i]), adv(&lx);
      if (peek(&lx, 0) == '&' && (isdigit((unsigned char)peek(&lx, 1)) || peek(&lx, 1) == '-')) {
        adv(&lx);
        sbuf_puts(&op, "&");
        sbuf_putc(&op, data[lx.i]);
        adv(&lx);
      }
      lx.in_word = true;
      lx.word_line = lx.line;
      sbuf_free(&lx.word);
      lx.word = op;
      word_end(&lx);
      continue;
    }
    if (ch == '&') {
      lx.cur.background = true;
      cmd_end(&lx, 0);
      adv(&lx);
      continue;
    }
    put(&lx, ch);
    adv(&lx);
  }
  cmd_end(&lx, 0);
  if (lx.heredoc_delim)
    scan_heredoc_body(&lx);
  sbuf_free(&lx.word);
  sh_index_bodies(out, depth);
  return 0;
fail:
  for (size_t k = 0; k < lx.cur.n_words; k++)
    free(lx.cur.words[k].raw);
  free(lx.cur.words);
  sbuf_free(&lx.word);
  free(lx.heredoc_delim);
  sh_script_fini(out);
  return -1;
}

int sh_parse(const char *data, size_t len, const char *file, struct sh_script *out,
             struct st_err *err) {
  return parse_at(data, len, file, out, err, 0);
}

int sh_parse_body(const char *data, size_t len, const char *file, struct sh_script *out,
                  int depth) {
  if (depth > SH_MAX_NESTING)
    return -1;
  return parse_at(data, len, file, out, NULL, depth);
}

void sh_script_fini(struct sh_script *s) {
  for (size_t i = 0; i < s->n_subs; i++) {
    free(s->subs[i].text);
    sh_script_fini(&s->subs[i].parsed);
  }
  free(s->subs);
  free(s->sub_slots);
  for (size_t i = 0; i < s->n_cmds; i++) {
    for (size_t k = 0; k < s->cmds[i].n_words; k++)
      free(s->cmds[i].words[k].raw);
    free(s->cmds[i].words);
  }
  free(s->cmds);
  free(s->file);
  memset(s, 0, sizeof *s);
}

/* Capacity is implicit: a vector of n items has room for the next power of
 * two (at least 4), so a push reallocates only when n reaches one and is
 * amortized O(1) without a capacity field. Shrinking keeps the memory, so the
 * rule stays true. Every vector pushed here must only grow through here. */
void recipe_strv_push_owned(char ***v, size_t *n, char *s) {
  if (*n == 0 || (*n >= 4 && (*n & (*n - 1)) == 0))
    *v = xreallocarray(*v, *n < 4 ? 4 : *n * 2, sizeof **v);
  (*v)[(*n)++] = s;
}

void recipe_strv_push(char ***v, size_t *n, const char *s) {
  recipe_strv_push_owned(v, n, xstrdup(s));
}

