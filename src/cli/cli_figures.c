/* cli: the load's figures on one line, by the figures model's table. */
#include "cli/cli.h"

#include "metrics/metrics.h"

void cli_figures_line(struct sbuf *sb, const char *sep, const struct fig_set *window,
                      double window_span_s, bool window_estimated, const struct fig_set *point) {
  for (int i = 0; i < FIG_N; i++) {
    const struct fig_desc *d = fig_desc((enum fig_id)i);
    if (!(d->shown & FIG_SHOW_STATUS))
      continue;
    char w[32], p[32];
    if (d->kind == FIG_DIST) {
      fig_format(p, sizeof p, point, d->id, FIG_STAT_P50);
      sbuf_printf(sb, "%s%s p50 %s%s%s", sep, d->brief, p, *d->unit ? " " : "", d->unit);
    } else if (window) {
      fig_format(w, sizeof w, window, d->id, FIG_VALUE);
      fig_format(p, sizeof p, point, d->id, FIG_VALUE);
      sbuf_printf(sb, "%s%s %s %s%s (%.0fs), %s (point)", sep, d->brief, w, d->unit,
                  window_estimated && d->id == FIG_OUTPUT_TPUT ? " (est.)" : "", window_span_s, p);
    } else {
      fig_format(p, sizeof p, point, d->id, FIG_VALUE);
      sbuf_printf(sb, "%s%s %s %s", sep, d->brief, p, d->unit);
    }
  }
}
