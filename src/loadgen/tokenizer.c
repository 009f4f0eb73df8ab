/* The server's own tokenizer over HTTP: which endpoints a server has (one
 * table of wire shapes, "dialects"), detecting them by probing a base URL,
 * and running many tokenizer calls concurrently on one libcurl multi handle
 * (keep-alive connections, batched where the endpoint takes lists). Used
 * before a run only, never by the load loops. */
#include "loadgen/loadgen.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
  struct curl_slist *headers;
  CURLM *multi;
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
  CURL *easy;
  struct lg_tok_lane *lane;
  struct lg_tok_op *op;
  struct sbuf body, reply;
  char *url;
  bool busy;
};

static size_t collect(char *data, size_t size, size_t nmemb, void *userp) {
  sbuf_append(userp, data, size * nmemb);
  return size * nmemb;
}

static void slot_start(struct lg_tokenizer *t, struct slot *sl, struct lg_tok_op *op) {
  const char *path = op_request(t, op, &sl->body);
  free(sl->url);
  sl->url = path_join_alloc(t->base_url, path);
  sbuf_reset(&sl->reply);
  sl->op = op;
  sl->busy = true;
  CURL *e = sl->easy;
  curl_easy_setopt(e, CURLOPT_URL, sl->url);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, sl->body.data);
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)sl->body.len);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &sl->reply);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(t->timeout_s * 1000.0));
  curl_easy_setopt(e, CURLOPT_PRIVATE, sl);
  curl_multi_add_handle(t->multi, e);
  t->calls++;
}

int lg_tok_run(struct lg_tokenizer *t, struct lg_tok_lane *lanes, size_t n_lanes,
               const atomic_int *cancel, struct st_err *err) {
  size_t n_slots = n_lanes < (size_t)t->max_parallel ? n_lanes : (size_t)t->max_parallel;
  if (n_slots == 0)
    return 0;
  struct slot *slots = xcalloc(n_slots, sizeof(*slots));
  for (size_t i = 0; i < n_slots; i++) {
    slots[i].easy = curl_easy_init();
    if (!slots[i].easy)
      util_die_oom(0);
  }
  size_t next_lane = 0, active = 0;
  int rc = 0;
  /* Every slot serves one lane at a time; a finished lane hands its slot on. */
  for (size_t i = 0; i < n_slots; i++) {
    while (next_lane < n_lanes) {
      struct lg_tok_lane *lane = &lanes[next_lane++];
      struct lg_tok_op *op = lane->step(lane->ctx, NULL);
      if (op) {
        slots[i].lane = lane;
        slot_start(t, &slots[i], op);
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
    int running;
    curl_multi_perform(t->multi, &running);
    CURLMsg *msg;
    int left;
    while (rc == 0 && (msg = curl_multi_info_read(t->multi, &left))) {
      if (msg->msg != CURLMSG_DONE)
        continue;
      struct slot *sl = NULL;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&sl);
      CURLcode res = msg->data.result;
      curl_multi_remove_handle(t->multi, sl->easy);
      long status = 0;
      curl_easy_getinfo(sl->easy, CURLINFO_RESPONSE_CODE, &status);
      char why[256] = "";
      if (res != CURLE_OK) {
        rc = err_setf(err, "tokenizer %s: %s", sl->url, curl_easy_strerror(res));
        break;
      }
      if (status != 200) {
        rc = err_setf(err, "tokenizer %s: HTTP %ld: %.200s", sl->url, status,
                      sl->reply.data ? sl->reply.data : "");
        break;
      }
      if (!op_reply(t, sl->op, sl->reply.data, sl->reply.len, why, sizeof why)) {
        rc = err_setf(err, "tokenizer %s (%s dialect): %s", sl->url, t->d->name, why);
        break;
      }
      sl->busy = false;
      active--;
      /* The lane goes on, or the slot takes the next lane. */
      struct lg_tok_op *op = sl->lane->step(sl->lane->ctx, sl->op);
      while (!op && next_lane < n_lanes) {
        sl->lane = &lanes[next_lane++];
        op = sl->lane->step(sl->lane->ctx, NULL);
      }
      if (op) {
        slot_start(t, sl, op);
        active++;
      }
    }
    if (rc == 0 && active > 0)
      curl_multi_poll(t->multi, NULL, 0, 100, NULL);
  }
  for (size_t i = 0; i < n_slots; i++) {
    if (slots[i].busy)
      curl_multi_remove_handle(t->multi, slots[i].easy);
    curl_easy_cleanup(slots[i].easy);
    sbuf_free(&slots[i].body);
    sbuf_free(&slots[i].reply);
    free(slots[i].url);
  }
  free(slots);
  return rc;
}

/* ---------------------------------------------------------------- probing */
/* One blocking call: status, reply in out. */
static long call(struct lg_tokenizer *t, const char *method, const char *path, const char *body,
                 struct sbuf *out) {
  CURL *e = curl_easy_init();
  if (!e)
    return 0;
  char *url = path_join_alloc(t->base_url, path);
  sbuf_reset(out);
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
  if (strcmp(method, "POST") == 0) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
  }
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, out);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(t->timeout_s * 1000.0));
  long status = 0;
  if (curl_easy_perform(e) == CURLE_OK)
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(e);
  free(url);
  return status;
}

static cJSON *call_json(struct lg_tokenizer *t, const char *method, const char *path,
                        const char *body, long *status) {
  struct sbuf out = {0};
  *status = call(t, method, path, body, &out);
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
  if (t->multi)
    curl_multi_cleanup(t->multi);
  curl_slist_free_all(t->headers);
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
  long status = call(t, "POST", path, body.data, &reply);
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
  char *auth = xasprintf("Authorization: Bearer %s", cfg->api_key ? cfg->api_key : "None");
  t->headers = curl_slist_append(NULL, "Content-Type: application/json");
  t->headers = curl_slist_append(t->headers, auth);
  t->headers = curl_slist_append(t->headers, "Expect:");
  free(auth);
  t->multi = curl_multi_init();
  if (!t->multi)
    util_die_oom(0);

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
    if (any_tokens)
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
