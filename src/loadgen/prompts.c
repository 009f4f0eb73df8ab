/* The reference's prompts through the server's own tokenizer
 * (sample_random_requests of benchmark_serving.py, step for step):
 *
 *   ids = prefix + [(offset_i + i + j) % vocab for j in range(input_len_i)]
 *   prompt = decode(ids)
 *   10 times: ids = encode(prompt); pad with rng.randint(0, vocab) ids when
 *             short, cut when long, stop when exact; prompt = decode(ids)
 *   [prompt = chat_template(prompt)]
 *   prompt_len = len(encode(prompt))
 *
 * The padding ids come from the reference's RNG streams: one per chunk of
 * prompts (its worker processes, each seeded from local_rng.randint(0, 2**31))
 * or local_rng itself when it runs serially, so within a stream prompts are
 * built in order. Three phases keep the calls concurrent: (A) decode and
 * encode every prompt's ids (no RNG), batched; (B) the rest of the loop, one
 * lane per RNG stream; (C) the template and the final count, batched. */
#include "loadgen/loadgen.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loadgen/loadgen_internal.h"

enum { MAX_RETRIES = 10, PHASE_A_LANES = 16 };

/* Memory: only the text lives for every prompt at once; the ids being
 * decoded exist while their call is in flight, the last encode (4 bytes a
 * token) only until the prompt's loop has checked it. */
struct pb_prompt {
  int64_t *ids;             /* the ids of the call in flight (decode), else NULL */
  size_t n_ids;
  char *text;               /* the last decoded text */
  int32_t *enc;             /* the last encode of text, until the loop checked it */
  size_t n_enc;
  uint32_t target;          /* prefix_len + input_len_i */
  int encodes;              /* encodes done in the loop */
  bool exact;               /* left the loop with an exact length */
  char *final_text;         /* after the template */
  uint32_t prompt_len;
};

struct pb {
  struct lg_tokenizer *tok;
  struct pb_prompt *p;
  size_t n;
  int vocab;
  const struct lg_prompts_args *args; /* the initial ids' recipe */
  const char *template_method; /* NULL: no template */
  bool dsv4;
};

/* ---------------------------------------------------------------- batched phases (A, C)
 * A lane walks its share of the prompts in batches; each batch is a short
 * fixed sequence of ops given by the phase. */
enum pb_step {
  STEP_DECODE_IDS,     /* p->ids -> p->text */
  STEP_ENCODE_TEXT,    /* p->text -> p->enc */
  STEP_RENDER,         /* p->text -> p->final_text (apply-template) */
  STEP_RENDER_IDS,     /* p->text -> p->ids (tokenize messages) */
  STEP_DECODE_RENDER,  /* p->ids -> p->final_text */
  STEP_COUNT_FINAL,    /* p->final_text -> p->prompt_len */
};

struct batch_lane {
  struct pb *pb;
  const enum pb_step *steps;
  size_t n_steps;
  size_t *todo;           /* prompt indexes of this lane */
  size_t n_todo, at, batch, step;
  struct lg_tok_item *items;
  struct lg_tok_op op;
};

/* Keeps an encode's ids as 4-byte values (vocabularies are far below 2^31). */
static void keep_encode(struct pb_prompt *p, struct lg_tok_item *it) {
  free(p->enc);
  p->enc = NULL;
  p->n_enc = it->n_out;
  if (p->n_enc == p->target) /* exact: the loop needs only the length */
    return;
  p->enc = xcalloc(p->n_enc + 1, sizeof(*p->enc));
  for (size_t j = 0; j < p->n_enc; j++)
    p->enc[j] = (int32_t)it->out_ids[j];
}

/* prefix + [(offset_i + i + j) % vocab for j in range(input_len_i)] */
static void initial_ids(const struct pb *pb, size_t i) {
  const struct lg_prompts_args *a = pb->args;
  struct pb_prompt *p = &pb->p[i];
  p->n_ids = p->target;
  p->ids = xcalloc(p->n_ids + 1, sizeof(*p->ids));
  memcpy(p->ids, a->prefix, (size_t)a->prefix_len * sizeof(*p->ids));
  for (uint32_t j = 0; j < a->input_lens[i]; j++)
    p->ids[a->prefix_len + j] = (a->offsets[i] + (int64_t)i + j) % a->vocab;
}

/* A step's text output becomes *text (the prompt's ids are done with). */
static void take_text(struct pb_prompt *p, char **text, struct lg_tok_item *it) {
  free(*text);
  *text = it->out_text;
  it->out_text = NULL;
  free(p->ids);
  p->ids = NULL;
}

static void take_outputs(struct batch_lane *l) {
  enum pb_step step = l->steps[l->step];
  for (size_t k = 0; k < l->op.n_items; k++) {
    struct pb_prompt *p = &l->pb->p[l->todo[l->at + k]];
    struct lg_tok_item *it = &l->items[k];
    switch (step) {
    case STEP_DECODE_IDS:
      take_text(p, &p->text, it);
      break;
    case STEP_ENCODE_TEXT:
      keep_encode(p, it);
      break;
    case STEP_RENDER:
    case STEP_DECODE_RENDER:
      take_text(p, &p->final_text, it);
      break;
    case STEP_RENDER_IDS:
      free(p->ids);
      p->ids = it->out_ids;
      p->n_ids = it->n_out;
      it->out_ids = NULL;
      break;
    case STEP_COUNT_FINAL:
      p->prompt_len = (uint32_t)it->n_out;
      break;
    }
  }
  lg_tok_op_clear_outputs(&l->op);
}

static struct lg_tok_op *batch_step(void *ctx, struct lg_tok_op *finished) {
  struct batch_lane *l = ctx;
  if (finished) {
    take_outputs(l);
    if (++l->step == l->n_steps) {
      l->step = 0;
      l->at += l->op.n_items;
    }
  }
  if (l->at >= l->n_todo)
    return NULL;
  size_t n = l->n_todo - l->at < l->batch ? l->n_todo - l->at : l->batch;
  enum pb_step step = l->steps[l->step];
  static const enum lg_tok_op_kind kinds[] = {
      [STEP_DECODE_IDS] = LG_TOK_DECODE,      [STEP_ENCODE_TEXT] = LG_TOK_ENCODE,
      [STEP_RENDER] = LG_TOK_APPLY_TEMPLATE,  [STEP_RENDER_IDS] = LG_TOK_ENCODE_MESSAGES,
      [STEP_DECODE_RENDER] = LG_TOK_DECODE,   [STEP_COUNT_FINAL] = LG_TOK_ENCODE};
  l->op = (struct lg_tok_op){.kind = kinds[step], .items = l->items, .n_items = n};
  for (size_t k = 0; k < n; k++) {
    struct pb_prompt *p = &l->pb->p[l->todo[l->at + k]];
    struct lg_tok_item *it = &l->items[k];
    memset(it, 0, sizeof(*it));
    switch (step) {
    case STEP_DECODE_IDS:
      initial_ids(l->pb, l->todo[l->at + k]);
      it->ids = p->ids;
      it->n_ids = p->n_ids;
      break;
    case STEP_DECODE_RENDER:
      it->ids = p->ids;
      it->n_ids = p->n_ids;
      break;
    case STEP_ENCODE_TEXT:
    case STEP_RENDER:
    case STEP_RENDER_IDS:
      it->text = p->text;
      break;
    case STEP_COUNT_FINAL:
      it->text = p->final_text;
      break;
    }
  }
  return &l->op;
}

/* Runs steps over the prompts in todo (split over up to PHASE_A_LANES lanes). */
static int run_batched(struct pb *pb, const enum pb_step *steps, size_t n_steps, size_t *todo,
                       size_t n_todo, const atomic_int *cancel, struct st_err *err) {
  if (n_todo == 0)
    return 0;
  size_t batch = lg_tok_batch_items(pb->tok);
  for (size_t k = 0; k < n_steps; k++) /* the template calls take one message */
    if (steps[k] == STEP_RENDER || steps[k] == STEP_RENDER_IDS)
      batch = 1;
  size_t n_lanes = (n_todo + batch - 1) / batch;
  if (n_lanes > PHASE_A_LANES)
    n_lanes = PHASE_A_LANES;
  struct batch_lane *lanes = xcalloc(n_lanes, sizeof(*lanes));
  struct lg_tok_lane *tl = xcalloc(n_lanes, sizeof(*tl));
  size_t per = (n_todo + n_lanes - 1) / n_lanes;
  for (size_t k = 0; k < n_lanes; k++) {
    size_t from = k * per, to = from + per < n_todo ? from + per : n_todo;
    lanes[k] = (struct batch_lane){.pb = pb, .steps = steps, .n_steps = n_steps,
                                   .todo = todo + from, .n_todo = to > from ? to - from : 0,
                                   .batch = batch};
    lanes[k].items = xcalloc(batch, sizeof(struct lg_tok_item));
    tl[k] = (struct lg_tok_lane){.ctx = &lanes[k], .step = batch_step};
  }
  int rc = lg_tok_run(pb->tok, tl, n_lanes, cancel, err);
  for (size_t k = 0; k < n_lanes; k++) {
    lg_tok_op_clear_outputs(&lanes[k].op);
    free(lanes[k].items);
  }
  free(lanes);
  free(tl);
  return rc;
}

/* ---------------------------------------------------------------- the loop (B)
 * One lane per RNG stream: its prompts in order, each to the end of its loop
 * before the next draws from the stream. */
struct loop_lane {
  struct pb *pb;
  struct lg_np rng;
  size_t from, to, i;
  bool decoding;          /* the op in flight is a decode (else an encode) */
  struct lg_tok_item item;
  struct lg_tok_op op;
};

/* After an encode of prompt p: exact -> done; else the adjusted ids to decode. */
static bool loop_adjust(struct loop_lane *l, struct pb_prompt *p) {
  if (p->n_enc == p->target) {
    p->exact = true;
    return false;
  }
  size_t t = p->target;
  free(p->ids);
  p->ids = xcalloc(t + 1, sizeof(*p->ids));
  size_t keep = p->n_enc < t ? p->n_enc : t;
  for (size_t j = 0; j < keep; j++)
    p->ids[j] = p->enc[j];
  for (size_t j = keep; j < t; j++) /* rng.randint(0, vocab, size=num_extras) */
    p->ids[j] = lg_np_randint(&l->rng, 0, l->pb->vocab);
  p->n_ids = t;
  free(p->enc);
  p->enc = NULL;
  return true;
}

static struct lg_tok_op *loop_step(void *ctx, struct lg_tok_op *finished) {
  struct loop_lane *l = ctx;
  if (finished) {
    struct pb_prompt *p = &l->pb->p[l->i];
    if (l->decoding) {
      free(p->text);
      p->text = l->item.out_text;
      l->item.out_text = NULL;
      free(p->ids);
      p->ids = NULL;
      if (p->encodes == MAX_RETRIES) { /* out of retries: this text, unchecked */
        l->i++;
      } else {
        l->decoding = false;
        l->op = (struct lg_tok_op){.kind = LG_TOK_ENCODE, .items = &l->item, .n_items = 1};
        l->item = (struct lg_tok_item){.text = p->text};
        return &l->op;
      }
    } else {
      keep_encode(p, &l->item);
      lg_tok_op_clear_outputs(&l->op);
      p->encodes++;
      if (!loop_adjust(l, p)) {
        l->i++;
      } else {
        l->decoding = true;
        l->op = (struct lg_tok_op){.kind = LG_TOK_DECODE, .items = &l->item, .n_items = 1};
        l->item = (struct lg_tok_item){.ids = p->ids, .n_ids = p->n_ids};
        return &l->op;
      }
    }
  }
  /* The next prompt: its first encode is known from phase A. */
  for (; l->i < l->to; l->i++) {
    struct pb_prompt *p = &l->pb->p[l->i];
    p->encodes = 1;
    if (loop_adjust(l, p)) {
      l->decoding = true;
      l->op = (struct lg_tok_op){.kind = LG_TOK_DECODE, .items = &l->item, .n_items = 1};
      l->item = (struct lg_tok_item){.ids = p->ids, .n_ids = p->n_ids};
      return &l->op;
    }
  }
  return NULL;
}

/* ---------------------------------------------------------------- entry */
static size_t *all_indexes(size_t n) {
  size_t *v = xcalloc(n + 1, sizeof(*v));
  for (size_t i = 0; i < n; i++)
    v[i] = i;
  return v;
}

/* The template around each prompt's text (or a copy of it), then its count. */
static int render_final(struct pb *pb, size_t *todo, size_t n_todo, const atomic_int *cancel,
                        struct st_err *err) {
  static const enum pb_step apply[] = {STEP_RENDER};
  static const enum pb_step messages[] = {STEP_RENDER_IDS, STEP_DECODE_RENDER};
  static const enum pb_step count[] = {STEP_COUNT_FINAL};
  if (pb->dsv4) {
    for (size_t k = 0; k < n_todo; k++) {
      struct pb_prompt *p = &pb->p[todo[k]];
      free(p->final_text);
      p->final_text = lg_dsv4_user_prompt_alloc(p->text);
    }
  } else if (pb->template_method) {
    bool by_apply = strstr(pb->template_method, "apply-template") != NULL;
    int rc = by_apply ? run_batched(pb, apply, 1, todo, n_todo, cancel, err)
                      : run_batched(pb, messages, 2, todo, n_todo, cancel, err);
    if (rc != 0)
      return rc;
  } else {
    for (size_t k = 0; k < n_todo; k++) {
      struct pb_prompt *p = &pb->p[todo[k]];
      free(p->final_text);
      p->final_text = xstrdup(p->text);
    }
  }
  return run_batched(pb, count, 1, todo, n_todo, cancel, err);
}

int lg_prompts_template_len(struct lg_tokenizer *tok, bool dsv4, int *len_out,
                            const atomic_int *cancel, struct st_err *err) {
  const char *method = dsv4 ? "encoding_dsv4 (DeepSeek-V4 framing, client side)"
                            : lg_tokenizer_template_method(tok);
  if (!method)
    return err_setf(err, "the server cannot render its chat template for servetop");
  struct pb_prompt p = {.text = xstrdup("a")};
  struct pb pb = {.tok = tok, .p = &p, .n = 1, .template_method = method, .dsv4 = dsv4};
  size_t idx = 0;
  int rc = render_final(&pb, &idx, 1, cancel, err);
  if (rc == 0) /* chat_template_len = len(encode(apply_chat_template("a"))) - 1 */
    *len_out = (int)p.prompt_len - 1;
  free(p.text);
  free(p.final_text);
  free(p.ids);
  return rc;
}

static void pb_free(struct pb *pb) {
  for (size_t i = 0; i < pb->n; i++) {
    free(pb->p[i].ids);
    free(pb->p[i].text);
    free(pb->p[i].enc);
    free(pb->p[i].final_text);
  }
  free(pb->p);
}

int lg_prompts_build(const struct lg_prompts_args *a, char **texts, uint32_t *prompt_lens,
                     struct lg_prompts_info *info, struct st_err *err) {
  struct pb pb = {.tok = a->tokenizer, .n = a->n, .vocab = a->vocab, .dsv4 = a->dsv4, .args = a};
  if (a->use_chat_template)
    pb.template_method = a->dsv4 ? "encoding_dsv4 (DeepSeek-V4 framing, client side)"
                                 : lg_tokenizer_template_method(a->tokenizer);
  if (a->use_chat_template && !pb.template_method)
    return err_setf(err, "the server cannot render its chat template for servetop");
  pb.p = xcalloc(a->n + 1, sizeof(*pb.p));
  for (size_t i = 0; i < a->n; i++) {
    pb.p[i].target = (uint32_t)a->prefix_len + a->input_lens[i];
  }
  int64_t calls0 = (int64_t)lg_tokenizer_calls(a->tokenizer);
  size_t *all = all_indexes(a->n);
  /* A: decode(ids), encode(text) -- no RNG, every prompt at once. */
  static const enum pb_step phase_a[] = {STEP_DECODE_IDS, STEP_ENCODE_TEXT};
  int rc = run_batched(&pb, phase_a, 2, all, a->n, a->cancel, err);
  /* B: the rest of the loop, one lane per RNG stream (the reference's chunks). */
  size_t n_lanes = 0;
  struct loop_lane *lanes = NULL;
  if (rc == 0) {
    int workers = a->random_num_workers;
    if (workers <= 0) { /* min(cpu_count(), 8) */
      long cpus = sysconf(_SC_NPROCESSORS_ONLN);
      workers = cpus < 1 ? 1 : cpus > 8 ? 8 : (int)cpus;
    }
    struct lg_np local = *a->local_rng;
    if (workers > 1) {
      size_t chunk = (a->n + (size_t)workers - 1) / (size_t)workers;
      lanes = xcalloc((size_t)workers, sizeof(*lanes));
      for (int w = 0; w < workers; w++) {
        size_t from = (size_t)w * chunk;
        if (from >= a->n)
          break;
        struct loop_lane *l = &lanes[n_lanes++];
        l->pb = &pb;
        l->from = l->i = from;
        l->to = from + chunk < a->n ? from + chunk : a->n;
        /* RandomState(int(local_rng.randint(0, 2**31))) per chunk, in order */
        lg_np_seed(&l->rng, (uint32_t)lg_np_randint(&local, 0, (int64_t)1 << 31));
      }
    } else {
      lanes = xcalloc(1, sizeof(*lanes));
      lanes[0] = (struct loop_lane){.pb = &pb, .from = 0, .to = a->n, .i = 0, .rng = local};
      n_lanes = 1;
    }
    info->random_num_workers = workers;
    struct lg_tok_lane *tl = xcalloc(n_lanes, sizeof(*tl));
    for (size_t k = 0; k < n_lanes; k++)
      tl[k] = (struct lg_tok_lane){.ctx = &lanes[k], .step = loop_step};
    rc = lg_tok_run(a->tokenizer, tl, n_lanes, a->cancel, err);
    for (size_t k = 0; k < n_lanes; k++)
      lg_tok_op_clear_outputs(&lanes[k].op);
    free(tl);
    free(lanes);
  }
  /* C: the template and the client's count; an exact prompt without a
   * template already has it. */
  if (rc == 0) {
    size_t n_todo = 0;
    for (size_t i = 0; i < a->n; i++) {
      struct pb_prompt *p = &pb.p[i];
      if (!pb.template_method && p->exact) {
        p->prompt_len = p->target;
        p->final_text = p->text;
        p->text = NULL;
      } else {
        all[n_todo++] = i;
      }
    }
    rc = render_final(&pb, all, n_todo, a->cancel, err);
  }
  if (rc == 0) {
    double mismatch = 0;
    for (size_t i = 0; i < a->n; i++) {
      struct pb_prompt *p = &pb.p[i];
      texts[i] = p->final_text;
      p->final_text = NULL;
      prompt_lens[i] = p->prompt_len;
      mismatch += (double)p->prompt_len - (double)p->target;
      info->prompts_off_target += p->prompt_len != p->target;
    }
    info->avg_token_mismatch = a->n > 0 ? mismatch / (double)a->n : 0;
  }
  info->tokenizer_calls = (int64_t)lg_tokenizer_calls(a->tokenizer) - calls0;
  free(all);
  pb_free(&pb);
  return rc;
}
