/* libFuzzer: the Prometheus parser must survive any bytes. Lookups run over
 * whatever was parsed so label and name handling are exercised too. */
#include "metrics/metrics.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct prom_set set;
  prom_parse((const char *)data, size, &set);
  double sum;
  for (size_t i = 0; i < set.n_samples; i++) {
    const struct prom_sample *s = &set.samples[i];
    (void)prom_sum(&set, s->name, NULL, &sum);
    if (s->n_labels > 0) {
      const char *match[] = {s->labels[0].name, s->labels[0].value, NULL};
      if (!prom_find(&set, s->name, match))
        __builtin_trap();
    }
    (void)prom_type_of(&set, s->name);
  }
  prom_set_free(&set);
  return 0;
}
