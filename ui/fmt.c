/* Numbers with units, short enough for table cells (pure). */
#include "widgets.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Three significant digits: 1.23, 12.3, 123. */
static const char *fmt3(double v, const char *unit, char *buf, size_t n) {
  double a = fabs(v);
  int decimals = a < 9.995 ? 2 : a < 99.95 ? 1 : 0;
  snprintf(buf, n, "%.*f%s", decimals, v, unit);
  return buf;
}

const char *ui_fmt_si(double v, char *buf, size_t n) {
  if (isnan(v)) {
    snprintf(buf, n, "-");
    return buf;
  }
  double a = fabs(v);
  if (a < 999.5) {
    /* counts and rates below 1000: no needless decimals for whole numbers */
    if (v == floor(v))
      snprintf(buf, n, "%.0f", v);
    else
      fmt3(v, "", buf, n);
    return buf;
  }
  if (a < 999.5e3)
    return fmt3(v / 1e3, "k", buf, n);
  if (a < 999.5e6)
    return fmt3(v / 1e6, "M", buf, n);
  return fmt3(v / 1e9, "G", buf, n);
}

const char *ui_fmt_ms(double ms, char *buf, size_t n) {
  if (isnan(ms)) {
    snprintf(buf, n, "-");
    return buf;
  }
  if (ms < 1.0) {
    snprintf(buf, n, "%.0fus", ms * 1000.0);
    return buf;
  }
  if (ms < 999.5)
    return fmt3(ms, "ms", buf, n);
  return fmt3(ms / 1000.0, "s", buf, n);
}

const char *ui_fmt_bytes(double bytes, char *buf, size_t n) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (isnan(bytes) || bytes < 0) {
    snprintf(buf, n, "-");
    return buf;
  }
  int u = 0;
  while (bytes >= 1023.5 && u < 4) {
    bytes /= 1024.0;
    u++;
  }
  if (u == 0) {
    snprintf(buf, n, "%.0fB", bytes);
    return buf;
  }
  snprintf(buf, n, "%.1f%s", bytes, units[u]);
  return buf;
}

const char *ui_fmt_duration_s(double s, char *buf, size_t n) {
  if (isnan(s) || s < 0) {
    snprintf(buf, n, "-");
    return buf;
  }
  long total = lround(s);
  if (total < 60)
    snprintf(buf, n, "%lds", total);
  else if (total < 3600)
    snprintf(buf, n, "%ldm%02lds", total / 60, total % 60);
  else
    snprintf(buf, n, "%ldh%02ldm", total / 3600, total % 3600 / 60);
  return buf;
}

const char *ui_fmt_pct(double frac, char *buf, size_t n) {
  if (isnan(frac)) {
    snprintf(buf, n, "-");
    return buf;
  }
  snprintf(buf, n, "%.1f%%", frac * 100.0);
  return buf;
}

const char *ui_path_shown(const char *path) {
  static char cwd[4096];
  static int have = -1; /* the directory of the start: read once */
  if (have < 0)
    have = getcwd(cwd, sizeof cwd) != NULL && strcmp(cwd, "/") != 0;
  if (!path || !have)
    return path;
  size_t n = strlen(cwd);
  if (strncmp(path, cwd, n) == 0 && path[n] == '/' && path[n + 1])
    return path + n + 1;
  return path;
}
