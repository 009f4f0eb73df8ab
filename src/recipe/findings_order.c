/* recipe: the doctor's findings in the order people read them, problems first. */
#include "recipe/recipe.h"

#include "util/util.h"

#include <stdlib.h>
#include <string.h>

void recipe_findings_order(struct recipe_findings *f) {
  if (!f || f->n < 2)
    return;
  /* a counting pass per severity keeps the order found within each */
  struct recipe_finding *sorted = xcalloc(f->n, sizeof *sorted);
  size_t k = 0;
  static const enum recipe_severity order[] = {RECIPE_SEV_ERROR, RECIPE_SEV_WARNING,
                                               RECIPE_SEV_NOTE};
  for (size_t s = 0; s < ST_ARRAY_LEN(order); s++)
    for (size_t i = 0; i < f->n; i++)
      if (f->items[i].severity == order[s])
        sorted[k++] = f->items[i];
  for (size_t i = 0; i < f->n; i++) /* a severity not in the list keeps its place at the end */
    if (f->items[i].severity != RECIPE_SEV_ERROR && f->items[i].severity != RECIPE_SEV_WARNING &&
        f->items[i].severity != RECIPE_SEV_NOTE)
      sorted[k++] = f->items[i];
  memcpy(f->items, sorted, f->n * sizeof *sorted);
  free(sorted);
}
