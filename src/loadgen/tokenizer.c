/* The server's own tokenizer over HTTP: which endpoints a server has (one
 * table of wire shapes, "dialects"), detecting them by probing a base URL,
 * and running many tokenizer calls concurrently on one batch of the HTTP
 * helper (keep-alive connections, batched where the endpoint takes lists). Used
 * before a run only, never by the load loops. */
#include "loadgen/loadgen.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "loadgen/loadgen_internal.h"

/* ---------------------------------------------------------------- dialects
 * Each server's tokenizer endpoints, as data:
 * - SGLang (protocol.py TokenizeRequest/DetokenizeRequest): POST /tokenize
 *   {"model", "prompt": str | [str], "add_special_tokens"} -> {"tokens",
 *   "count", "max_model_len"}; POST /detokenize {"model", "tokens": [int] |
 *   [[int]], "skip_special_tokens" (default true)} -> {"text"}; newer
 *   versions take "messages" in /tokenize (the chat template applied).
 * - vLLM (TokenizeCompletionRequest/TokenizeChatRequest): POST /tokenize
 *   {"model", "prompt": str, "add_special_tokens"} or {"model", "messages",
 *   "add_generation_prompt", "add_special_tokens"} -> {"count",
 *   "max_model_len", "tokens"}; POST /detokenize {"model", "tokens"} ->
 *   {"prompt"}.
 * - llama.cpp (tools/server): POST /tokenize {"content", "add_special"} ->
 *   {"tokens"}; POST /detokenize {"tokens"} -> {"content"}; POST
 *   /apply-template {"messages"} -> {"prompt"}; GET /v1/models has
 *   data[0].meta.n_vocab. */
struct tok_dialect {
  const char *name;
  const char *text_key;          /* /tokenize: the text */
  const char *add_special_key;   /* /tokenize: sent false (the reference encodes without) */
  const char *skip_special_key;  /* /detokenize: sent false (HF decode keeps them); NULL: none */
  const char *decoded_key;       /* /detokenize reply: the text */
  bool sends_model;
  bool batch;                    /* lists of prompts / of token lists in one call */
  bool template_by_apply;        /* POST /apply-template {"messages"} -> {"prompt"} */
  bool template_by_messages;     /* POST /tokenize {"messages"} -> ids (may be absent: probed) */
  const char *template_method;   /* recorded in the result */
};

static const struct tok_dialect dialects[] = {
    {"sglang", "prompt", "add_special_tokens", "skip_special_tokens", "text", true, true, false,
     true, "server /tokenize with messages, then /detokenize"},
    {"vllm", "prompt", "add_special_tokens", NULL, "prompt", true, false, false, true,
     "server /tokenize with messages, then /detokenize"},
    {"llama.cpp", "content", "add_special", NULL, "content", false, false, true, false,
     "server /apply-template"},
};

enum { TOK_BATCH_ITEMS = 64, TOK_DEFAULT_PARALLEL = 8, PROBE_TIMEOUT_S = 15 };

struct lg_tokenizer {
  const struct tok_dialect *d;
  char *base_url, *model;
  char *api_key;             /* NULL: "Bearer None" */
  struct http_batch *batch;  /* max_parallel slots, kept between runs */
  struct st_err last_err;    /* why the last blocking call failed */
  double timeout_s;
  int max_parallel;
  bool messages_ok;          /* /tokenize took "messages" when probed */
  int vocab_size;            /* reported by the server; 0: not reported */
  uint64_t calls;
};

const char *lg_tokenizer_dialect(const struct lg_tokenizer *t) {
  return t->d->name;
}
int lg_tokenizer_vocab_size(const struct lg_tokenizer *t) {
  return t->vocab_size;
}
uint64_t lg_tokenizer_calls(const struct lg_tokenizer *t) {
  return t->calls;
}
const char *lg_tokenizer_template_method(const struct lg_tokenizer *t) {
  if (t->d->template_by_apply)
    return t->d->template_method;
  return t->messages_ok ? t->d->template_method : NULL;
}

/* ---------------------------------------------------------------- request bodies */
static void put_ids(struct sbuf *sb, const int64_t *ids, size_t n) {
  sbuf_putc(sb, '[');
  for (size_t j = 0; j < n; j++) {
    if (j)
      sbuf_putc(sb, ',');
    sbuf_printf(sb, "%lld", (long long)ids[j]);
  }
  sbuf_putc(sb, ']');
}

static void put_model(const struct lg_tokenizer *t, struct sbuf *sb) {
  if (t->d->sends_model) {
    sbuf_puts(sb, "\"model\":");
    lg_json_escape_append(sb, t->model);
    sbuf_putc(sb, ',');
  }
}

static void put_user_messages(struct sbuf *sb, const char *text) {
  sbuf_puts(sb, "\"messages\":[{\"role\":\"user\",\"content\":");
  lg_json_escape_append(sb, text);
  sbuf_puts(sb, "}]");
}

/* The path and body of one op. */
static const char *op_request(const struct lg_tokenizer *t, const struct lg_tok_op *op,
                              struct sbuf *body) {
  sbuf_reset(body);
  sbuf_putc(body, '{');
  put_model(t, body);
  switch (op->kind) {
  case LG_TOK_ENCODE:
    sbuf_printf(body, "\"%s\":", t->d->text_key);
    if (t->d->batch) {
      sbuf_putc(body, '[');
      for (size_t i = 0; i < op->n_items; i++) {
        if (i)
          sbuf_putc(body, ',');
        lg_json_escape_append(body, op->items[i].text);
      }
      sbuf_putc(body, ']');
    } else {
      lg_json_escape_append(body, op->items[0].text);
    }
    sbuf_printf(body, ",\"%s\":false}", t->d->add_special_key);
    return "/tokenize";
  case LG_TOK_DECODE:
    sbuf_puts(body, "\"tokens\":");
    if (t->d->batch) {
      sbuf_putc(body, '[');
      for (size_t i = 0; i < op->n_items; i++) {
        if (i)
          sbuf_putc(body, ',');
        put_ids(body, op->items[i].ids, op->items[i].n_ids);
      }
      sbuf_putc(body, ']');
    } else {
      put_ids(body, op->items[0].ids, op->items[0].n_ids);
    }
    if (t->d->skip_special_key)
      sbuf_printf(body, ",\"%s\":false", t->d->skip_special_key);
    sbuf_putc(body, '}');
    return "/detokenize";
  case LG_TOK_ENCODE_MESSAGES:
    put_user_messages(body, op->items[0].text);
    sbuf_puts(body, ",\"add_generation_prompt\":true,\"add_special_tokens\":false}");
    return "/tokenize";
  case LG_TOK_APPLY_TEMPLATE:
    put_user_messages(body, op->items[0].text);
    sbuf_puts(body, ",\"add_generation_prompt\":true}");
    return "/apply-template";
  }
  return "/";
}

/* ---------------------------------------------------------------- replies */
static bool ids_from_json(const cJSON *arr, int64_t **out, size_t *n) {
  if (!cJSON_IsArray(arr))
    return false;
  size_t count = (size_t)cJSON_GetArraySize(arr), k = 0;
  int64_t *ids = xcalloc(count + 1, sizeof(*ids));
  const cJSON *v;
  cJSON_ArrayForEach(v, arr) {
    /* llama.cpp with_pieces: {"id": N, "piece": ...}; otherwise plain ids */
    const cJSON *num = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "id") : v;
    if (!cJSON_IsNumber(num) || num->valuedouble < 0 || num->valuedouble > 9e18 ||
        num->valuedouble != floor(num->valuedouble)) {
      free(ids);
      return false;
    }
    ids[k++] = (int64_t)num->valuedouble;
  }
  *out = ids;
  *n = k;
  return true;
}

/* Fills the op's outputs from the reply body; false with why. */
static bool op_reply(const struct lg_tokenizer *t, struct lg_tok_op *op, const char *body,
                     size_t len, char *why, size_t why_len) {
  cJSON *json = cJSON_ParseWithLength(body ? body : "", len);
  bool ok = false;
  if (!cJSON_IsObject(json)) {
    snprintf(why, why_len, "reply is not a JSON object");
    goto out;
  }
  if (op->kind == LG_TOK_ENCODE || op->kind == LG_TOK_ENCODE_MESSAGES) {
    const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(json, "tokens");
    bool batched = op->kind == LG_TOK_ENCODE && t->d->batch;
    if (batched) {
      if (!cJSON_IsArray(tokens) || (size_t)cJSON_GetArraySize(tokens) != op->n_items) {
        snprintf(why, why_len, "reply has no \"tokens\" list of %zu lists", op->n_items);
        goto out;
      }
      size_t i = 0;
      const cJSON *list;
      cJSON_ArrayForEach(list, tokens) {
        if (!ids_from_json(list, &op->items[i].out_ids, &op->items[i].n_out)) {
          snprintf(why, why_len, "reply \"tokens\"[%zu] is not a list of token ids", i);
          goto out;
        }
        i++;
      }
    } else if (!ids_from_json(tokens, &op->items[0].out_ids, &op->items[0].n_out)) {
      snprintf(why, why_len, "reply has no \"tokens\" list of token ids");
      goto out;
    }
  } else {
    const char *key = op->kind == LG_TOK_APPLY_TEMPLATE ? "prompt" : t->d->decoded_key;
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(json, key);
    bool batched = op->kind == LG_TOK_DECODE && t->d->batch;
    if (batched) {
      if (!cJSON_IsArray(text) || (size_t)cJSON_GetArraySize(text) != op->n_items) {
        snprintf(why, why_len, "reply has no \"%s\" list of %zu strings", key, op->n_items);
        goto out;
      }
      size_t i = 0;
      const cJSON *s;
      cJSON_ArrayForEach(s, text) {
        if (!cJSON_IsString(s)) {
          snprintf(why, why_len, "reply \"%s\"[%zu] is not a string", key, i);
          goto out;
        }
        op->items[i++].out_text = xstrdup(s->valuestring);
      }
    } else if (cJSON_IsString(text)) {
      op->items[0].out_text = xstrdup(text->valuestring);
    } else {
      snprintf(why, why_len, "reply has no \"%s\" string", key);
      goto out;
    }
  }
  ok = true;
out:
  cJSON_Delete(json);
  return ok;
}

void lg_tok_op_clear_outputs(struct lg_tok_op *op) {
  for (size_t i = 0; i < op->n_items; i++) {
    free(op->items[i].out_ids);
    free(op->items[i].out_text);
    op->items[i].out_ids = NULL;
    op->items[i].out_text = NULL;
    op->items[i].n_out = 0;
  }
}

/* ---------------------------------------------------------------- the runner */
struct slot {
  struct lg_tok_lane *lane;
  struct lg_tok_op *op;
  struct sbuf body;
  char *url;
};

/* A POST of body to path, or a GET when body is NULL, as the tokenizer sends it. */
static struct http_request tok_request(const struct lg_tokenizer *t, const char *url,
                                       const char *body) {
  return (struct http_request){.url = url, .body = body, .api = true, .api_key = t->api_key,
                               .timeout_ms = (int64_t)(t->timeout_s * 1000.0),
                               .max_body_bytes = (size_t)1 << 30, /* 64 long prompts' ids */
                               .expect_status = 200};
}

static void slot_start(struct lg_tokenizer *t, struct slot *slots, size_t i,
                       struct lg_tok_op *op) {
  struct slot *sl = &slots[i];
  const char *path = op_request(t, op, &sl->body);
  free(sl->url);
  sl->url = path_join_alloc(t->base_url, path);
  sl->op = op;
  struct http_request req = tok_request(t, sl->url, sl->body.data);
  req.body_len = sl->body.len;
  http_batch_start(t->batch, i, &req); /* copies what it needs */
  t->calls++;
}

int lg_tok_run(struct lg_tokenizer *t, struct lg_tok_lane *lanes, size_t n_lanes,
               const atomic_int *cancel, struct st_err *err) {
  size_t n_slots = n_lanes < (size_t)t->max_parallel ? n_lanes : (size_t)t->max_parallel;
  if (n_slots == 0)
    return 0;
  struct slot *slots = xcalloc(n_slots, sizeof(*slots));
  size_t next_lane = 0, active = 0;
  int rc = 0;
  /* Every slot serves one lane at a time; a finished lane hands its slot on. */
  for (size_t i = 0; i < n_slots; i++) {
    while (next_lane < n_lanes) {
      struct lg_tok_lane *lane = &lanes[next_lane++];
      struct lg_tok_op *op = lane->step(lane->ctx, NULL);
      if (op) {
        slots[i].lane = lane;
        slot_start(t, slots, i, op);
        active++;
        break;
      }
    }
  }
  while (active > 0 && rc == 0) {
    if (cancel && *cancel) {
      rc = err_setf(err, "interrupted while building the prompts");
      break;
    }
    struct http_done done;
    if (http_batch_wait(t->batch, 100, &done) == 0)
      continue;
    struct slot *sl = &slots[done.slot];
    active--;
    if (done.rc != 0) {
      rc = err_setf(err, "tokenizer: %s", done.err.msg);
      break;
    }
    char why[256] = "";
    if (!op_reply(t, sl->op, done.resp->body.data, done.resp->body.len, why, sizeof why)) {
      rc = err_setf(err, "tokenizer %s (%s dialect): %s", sl->url, t->d->name, why);
      break;
    }
    /* The lane goes on, or the slot takes the next lane. */
    struct lg_tok_op *op = sl->lane->step(sl->lane->ctx, sl->op);
    while (!op && next_lane < n_lanes) {
      sl->lane = &lanes[next_lane++];
      op = sl->lane->step(sl->lane->ctx, NULL);
    }
    if (op) {
      slot_start(t, slots, done.slot, op);
      active++;
    }
  }
  http_batch_abandon(t->batch); /* what still runs after an error */
  for (size_t i = 0; i < n_slots; i++) {
    sbuf_free(&slots[i].body);
    free(slots[i].url);
  }
  free(slots);
  return rc;
}

/* ---------------------------------------------------------------- probing */
/* One blocking call (a POST of body, or a GET when body is NULL): the
 * status, reply in out. */
static long call(struct lg_tokenizer *t, const char *path, const char *body, struct sbuf *out) {
  char *url = path_join_alloc(t->base_url, path);
  struct http_request req = tok_request(t, url, body);
  struct http_response resp = {.body = *out};
  /* the status as it came; 0: no answer, or a 200 cut short */
  long status =
      http_do(&req, &resp, &t->last_err) == 0 ? 200 : resp.status != 200 ? resp.status : 0;
  *out = resp.body;
  free(url);
  return status;
}

static cJSON *call_json(struct lg_tokenizer *t, const char *method, const char *path,
                        const char *body, long *status) {
  struct sbuf out = {0};
  *status = call(t, path, strcmp(method, "POST") == 0 ? body : NULL, &out);
  cJSON *json = *status == 200 ? cJSON_ParseWithLength(out.data ? out.data : "", out.len) : NULL;
  sbuf_free(&out);
  if (json && !cJSON_IsObject(json)) {
    cJSON_Delete(json);
    json = NULL;
  }
  return json;
}

static void tokenizer_free(struct lg_tokenizer *t) {
  if (!t)
    return;
  http_batch_free(t->batch);
  free(t->api_key);
  free(t->base_url);
  free(t->model);
  free(t);
}

void lg_tokenizer_close(struct lg_tokenizer *t) {
  tokenizer_free(t);
}

/* One op as a blocking call (probing); true when the reply parsed. *status
 * is 0 when the server did not answer at all. */
static bool call_op(struct lg_tokenizer *t, struct lg_tok_op *op, long *status_out) {
  struct sbuf body = {0}, reply = {0};
  const char *path = op_request(t, op, &body);
  long status = call(t, path, body.data ? body.data : "", &reply);
  if (status_out)
    *status_out = status;
  char why[256];
  bool ok = status == 200 && op_reply(t, op, reply.data, reply.len, why, sizeof why);
  sbuf_free(&body);
  sbuf_free(&reply);
  return ok;
}

/* Which dialect answers: each dialect's own /tokenize body (a server given
 * another's keys answers 400, or -- llama.cpp -- an empty list), then its
 * /detokenize of the ids it got back, whose reply key must be its own. */
struct lg_tokenizer *lg_tokenizer_open(const struct lg_tokenizer_config *cfg, char *why,
                                       size_t why_len) {
  struct lg_tokenizer *t = xcalloc(1, sizeof(*t));
  t->base_url = xstrdup(cfg->base_url);
  t->model = xstrdup(cfg->model ? cfg->model : "default");
  t->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 600.0;
  t->max_parallel = cfg->max_parallel > 0 ? cfg->max_parallel : TOK_DEFAULT_PARALLEL;
  t->api_key = cfg->api_key ? xstrdup(cfg->api_key) : NULL;
  t->batch = http_batch_new((size_t)t->max_parallel);

  bool any_tokens = false, answered = true;
  double timeout_s = t->timeout_s;
  t->timeout_s = PROBE_TIMEOUT_S; /* a server that never answers is not waited on long */
  for (size_t i = 0; i < ST_ARRAY_LEN(dialects) && !t->d && answered; i++) {
    t->d = &dialects[i];
    struct lg_tok_item item = {.text = "a b"};
    struct lg_tok_op enc = {.kind = LG_TOK_ENCODE, .items = &item, .n_items = 1};
    long status;
    bool ok = call_op(t, &enc, &status) && item.n_out > 0;
    answered = status != 0;
    any_tokens = any_tokens || ok;
    if (ok) {
      struct lg_tok_item ditem = {.ids = item.out_ids, .n_ids = item.n_out};
      struct lg_tok_op dec = {.kind = LG_TOK_DECODE, .items = &ditem, .n_items = 1};
      ok = call_op(t, &dec, NULL) && ditem.out_text && ditem.out_text[0];
      lg_tok_op_clear_outputs(&dec);
    }
    lg_tok_op_clear_outputs(&enc);
    if (!ok)
      t->d = NULL;
  }
  if (!t->d) {
    if (!answered)
      snprintf(why, why_len, "the server does not answer its tokenizer endpoint (%s)",
               t->last_err.msg);
    else if (any_tokens)
      snprintf(why, why_len,
               "POST %s/tokenize answers, but /detokenize not in a known shape (SGLang, vLLM, "
               "llama.cpp)", cfg->base_url);
    else
      snprintf(why, why_len, "the server has no tokenizer endpoint (POST %s/tokenize, "
               "/detokenize in the SGLang, vLLM or llama.cpp shape)", cfg->base_url);
    tokenizer_free(t);
    return NULL;
  }
  t->timeout_s = PROBE_TIMEOUT_S;
  /* /tokenize with messages (newer SGLang, vLLM): the chat template on the server. */
  if (t->d->template_by_messages) {
    struct lg_tok_item item = {.text = "a"};
    struct lg_tok_op op = {.kind = LG_TOK_ENCODE_MESSAGES, .items = &item, .n_items = 1};
    t->messages_ok = call_op(t, &op, NULL) && item.n_out > 0;
    lg_tok_op_clear_outputs(&op);
  }
  /* The vocabulary size when the server says (llama.cpp: /v1/models meta.n_vocab). */
  long status;
  cJSON *models = call_json(t, "GET", "/v1/models", NULL, &status);
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(models, "data");
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(data, 0), "meta");
  const cJSON *n_vocab = cJSON_GetObjectItemCaseSensitive(meta, "n_vocab");
  if (cJSON_IsNumber(n_vocab) && n_vocab->valuedouble >= 2 && n_vocab->valuedouble < 1e9)
    t->vocab_size = (int)n_vocab->valuedouble;
  cJSON_Delete(models);
  t->calls = 0; /* probing is not part of building the prompts */
  t->timeout_s = timeout_s;
  return t;
}

size_t lg_tok_batch_items(const struct lg_tokenizer *t) {
  return t->d->batch ? TOK_BATCH_ITEMS : 1;
}
