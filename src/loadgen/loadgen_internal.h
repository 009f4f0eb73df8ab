/* loadgen internals shared between its files: tokenizer ops, the prompt
 * builder, numpy's random generator. */
#ifndef SERVETOP_LOADGEN_LOADGEN_INTERNAL_H
#define SERVETOP_LOADGEN_LOADGEN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loadgen/loadgen.h"

/* ---------------------------------------------------------------- tokenizer ops (tokenizer.c)
 * One op is one HTTP call; with a batching dialect an encode or decode op
 * carries up to lg_tok_batch_items() items, otherwise one. Outputs are heap
 * (the caller takes them or frees them with lg_tok_op_clear_outputs). */
enum lg_tok_op_kind {
  LG_TOK_ENCODE,          /* text -> ids, no special tokens added */
  LG_TOK_DECODE,          /* ids -> text, special tokens kept */
  LG_TOK_ENCODE_MESSAGES, /* one user message -> ids of the rendered chat template */
  LG_TOK_APPLY_TEMPLATE,  /* one user message -> the rendered chat template (llama.cpp) */
};
struct lg_tok_item {
  const char *text;       /* ENCODE, ENCODE_MESSAGES, APPLY_TEMPLATE */
  const int64_t *ids;     /* DECODE */
  size_t n_ids;
  int64_t *out_ids;       /* ENCODE, ENCODE_MESSAGES */
  size_t n_out;
  char *out_text;         /* DECODE, APPLY_TEMPLATE */
};
struct lg_tok_op {
  enum lg_tok_op_kind kind;
  struct lg_tok_item *items;
  size_t n_items;
};
void lg_tok_op_clear_outputs(struct lg_tok_op *op);
size_t lg_tok_batch_items(const struct lg_tokenizer *t);
/* A lane is a sequence of ops, one at a time: step(ctx, NULL) gives the
 * first, step(ctx, finished) the next after one finished (NULL: the lane is
 * done). lg_tok_run keeps up to max_parallel lanes' ops in flight and
 * returns 0, or -1 with err at the first failed call (or when *cancel). */
struct lg_tok_lane {
  void *ctx;
  struct lg_tok_op *(*step)(void *ctx, struct lg_tok_op *finished);
};
int lg_tok_run(struct lg_tokenizer *t, struct lg_tok_lane *lanes, size_t n_lanes,
               const atomic_int *cancel, struct st_err *err);

/* JSON string literal of s (quotes included) as json.dumps would read it back. */
void lg_json_escape_append(struct sbuf *sb, const char *s);

/* numpy's legacy RandomState (np.random.seed / RandomState), draw for draw. */
enum { LG_NP_STATE_WORDS = 624 };
struct lg_np {
  uint32_t key[LG_NP_STATE_WORDS]; /* np.random.get_state()[1] */
  int pos;
  bool has_gauss;
  double gauss;
};
void lg_np_seed(struct lg_np *np, uint32_t seed);                       /* np.random.seed(int) */
void lg_np_seed_array(struct lg_np *np, const uint32_t *key, size_t n); /* RandomState(list) */
uint32_t lg_np_next32(struct lg_np *np);
/* randint(low, high): high exclusive, int64 dtype (masked rejection). */
int64_t lg_np_randint(struct lg_np *np, int64_t low, int64_t high);
double lg_np_double(struct lg_np *np);                                  /* random_sample() */
double lg_np_gamma(struct lg_np *np, double shape, double scale);       /* np.random.gamma */

/* ---------------------------------------------------------------- prompts.c */
struct lg_prompts_args {
  struct lg_tokenizer *tokenizer;
  size_t n;
  const int64_t *prefix;        /* prefix_len shared ids */
  int prefix_len;
  const uint32_t *input_lens;
  const int64_t *offsets;
  int vocab;
  bool use_chat_template, dsv4;
  int random_num_workers;       /* 0: min(CPUs, 8) */
  const struct lg_np *local_rng;/* RandomState(np.random.get_state()[1][:4]) */
  const atomic_int *cancel;
};
/* The reference's prompt texts (heap, into texts[]) and client counts. */
int lg_prompts_build(const struct lg_prompts_args *a, char **texts, uint32_t *prompt_lens,
                     struct lg_prompts_info *info, struct st_err *err);
/* The reference's chat_template_len: len(encode(template("a"))) - 1. */
int lg_prompts_template_len(struct lg_tokenizer *tok, bool dsv4, int *len_out,
                            const atomic_int *cancel, struct st_err *err);

#endif
