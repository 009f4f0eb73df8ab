/* ui log view: the whole server log of a run (its run folder's server.log,
 * read as it grows) on a full screen, with search (`/`, `n` / `N`, matches
 * highlighted), follow mode and scrolling. Opened from the run view (`l`, or
 * a click on its log pane) and the A/B view. Pure but for reading the file:
 * no ncurses, no threads; the program calls the screen's tick, which reads
 * what the file grew by (at most LOGVIEW_READ_BYTES a call, so a long log
 * never stalls a frame). */
#ifndef SERVETOP_UI_LOGVIEW_H
#define SERVETOP_UI_LOGVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "screen.h"
#include "ui_util.h"

#define LOGVIEW_MAX_LINES 200000     /* beyond, the oldest tenth is dropped */
#define LOGVIEW_READ_BYTES (1 << 20) /* read per tick */

struct logview {
  char path[1100];       /* the file; "" = none */
  char title[160];       /* what it is the log of (the recipe) */
  int fd;                /* -1 until the file exists */
  uint64_t offset;       /* bytes read so far */
  struct sbuf partial;   /* the last line while it has no newline yet */
  char **lines;          /* oldest first, owned: escape sequences stripped, tabs expanded */
  size_t n_lines, cap;
  uint64_t dropped;      /* oldest lines dropped for LOGVIEW_MAX_LINES */
  size_t top;            /* first line shown */
  int left;              /* first column shown (long lines scroll sideways) */
  bool follow;           /* the newest lines stay in view */
  int page;              /* lines the body showed at the last frame */
  int width;             /* cells of a line it showed */
  bool searching;        /* `/` typed: keys go to the search text */
  char typed[128];       /* the search being typed */
  char pattern[128];     /* the search in force ("" none), matched in any case */
  size_t n_matches;      /* lines that match it */
  size_t match;          /* the current match (a line index; SIZE_MAX none) */
  char status[256];      /* footer status */
  enum theme_role status_role;
  char footer_text[256];
};

void logview_init(struct logview *lv);
/* Shows path (title names whose log it is). The same path again keeps what
 * was read and the position; another starts over. */
void logview_open(struct logview *lv, const char *path, const char *title);
void logview_fini(struct logview *lv);
/* Adds bytes as if the file had grown by them (split into lines). */
void logview_append(struct logview *lv, const char *data, size_t n);
/* Reads what the file grew by; true when lines were added. */
bool logview_poll(struct logview *lv);
/* Sets the search (as `/` + Enter does) and moves to the first match at or
 * after the top line (following the newest lines: to the latest match); ""
 * clears it. */
void logview_search(struct logview *lv, const char *pattern);

/* The role a server log line is drawn in (errors red, warnings yellow). */
enum theme_role ui_log_line_role(const char *line);

extern const struct ui_screen logview_screen;

#endif
