/* SGLang's tokenizer endpoints over the sim's tokenizer (tokenize.c):
 * POST /tokenize (/v1/tokenize) with `prompt` (a string or a list of them)
 * or, as newer SGLang, `messages` (the chat template rendered, then encoded);
 * POST /detokenize (/v1/detokenize) with `tokens` (a list of ids or a list of
 * lists) and `skip_special_tokens` (default true, as SGLang). Request and
 * response shapes are SGLang's (protocol.py TokenizeRequest/Response,
 * DetokenizeRequest/Response). Not hot: cJSON. */
#include "sim/sim_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t vocab_of(const struct sim_server *srv) {
  return srv->perf.model && srv->perf.model->vocab_size > 256 ? (uint32_t)srv->perf.model->vocab_size
                                                              : 32000u;
}

/* The ids of text as a JSON array (printed directly: a batch of 64 prompts
 * of 8k tokens is half a million numbers), and their count. */
static size_t put_encoded(struct sbuf *out, const char *text, uint32_t vocab) {
  size_t len = strlen(text);
  size_t n = sim_tokenize(text, len, vocab, NULL, 0);
  uint32_t *ids = xcalloc(n + 1, sizeof(*ids));
  sim_tokenize(text, len, vocab, ids, n);
  sbuf_reserve(out, n * 8 + 2);
  sbuf_putc(out, '[');
  for (size_t i = 0; i < n; i++) {
    char num[12];
    int k = snprintf(num, sizeof num, i ? ",%u" : "%u", ids[i]);
    sbuf_append(out, num, (size_t)k);
  }
  sbuf_putc(out, ']');
  free(ids);
  return n;
}

/* messages -> the template's text (ChatML, with the generation prompt, as
 * SGLang's chat path renders it), or NULL with why. */
static char *render_messages(const cJSON *msgs, char *why, size_t why_len) {
  if (!cJSON_IsArray(msgs) || cJSON_GetArraySize(msgs) == 0) {
    snprintf(why, why_len, "messages: Field required (a non-empty list)");
    return NULL;
  }
  struct sbuf sb = {0};
  const cJSON *m;
  cJSON_ArrayForEach(m, msgs) {
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
    if (!cJSON_IsString(role) || !(cJSON_IsString(content) || cJSON_IsNull(content))) {
      snprintf(why, why_len, "messages: each message needs a string role and string content");
      sbuf_free(&sb);
      return NULL;
    }
    sim_chat_render_append(&sb, role->valuestring,
                           cJSON_IsString(content) ? content->valuestring : "");
  }
  sim_chat_generation_prompt_append(&sb);
  return sbuf_take(&sb);
}

static char *tokenize(const struct sim_server *srv, const cJSON *body, int *status, char *why,
                      size_t why_len) {
  uint32_t vocab = vocab_of(srv);
  const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(body, "prompt");
  const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(body, "messages");
  bool has_prompt = prompt && !cJSON_IsNull(prompt), has_msgs = msgs && !cJSON_IsNull(msgs);
  if (has_prompt == has_msgs) {
    snprintf(why, why_len, "Exactly one of 'prompt' or 'messages' must be provided.");
    return NULL;
  }
  const cJSON *ast = cJSON_GetObjectItemCaseSensitive(body, "add_special_tokens");
  if (ast && !cJSON_IsBool(ast) && !cJSON_IsNull(ast)) {
    snprintf(why, why_len, "add_special_tokens: Input should be a valid boolean");
    return NULL;
  }
  if (has_prompt && cJSON_IsArray(prompt)) {
    const cJSON *p;
    cJSON_ArrayForEach(p, prompt) {
      if (!cJSON_IsString(p)) {
        snprintf(why, why_len, "Invalid prompt type: Expected str or List[str].");
        return NULL;
      }
    }
  } else if (has_prompt && !cJSON_IsString(prompt)) {
    snprintf(why, why_len, "Invalid prompt type: Expected str or List[str].");
    return NULL;
  }
  char *rendered = NULL;
  if (has_msgs && !(rendered = render_messages(msgs, why, why_len)))
    return NULL;
  struct sbuf out = {0};
  if (has_prompt && cJSON_IsArray(prompt)) { /* SGLang's batch: lists of ids and counts */
    struct sbuf counts = {0};
    sbuf_puts(&out, "{\"tokens\":[");
    sbuf_putc(&counts, '[');
    const cJSON *p;
    size_t k = 0;
    cJSON_ArrayForEach(p, prompt) {
      if (k)
        sbuf_putc(&out, ',');
      sbuf_printf(&counts, k ? ",%zu" : "%zu", put_encoded(&out, p->valuestring, vocab));
      k++;
    }
    sbuf_putc(&counts, ']');
    sbuf_printf(&out, "],\"count\":%s", counts.data);
    sbuf_free(&counts);
  } else {
    sbuf_puts(&out, "{\"tokens\":");
    size_t n = put_encoded(&out, rendered ? rendered : prompt->valuestring, vocab);
    sbuf_printf(&out, ",\"count\":%zu", n);
  }
  sbuf_printf(&out, ",\"max_model_len\":%d}", srv->perf.context_length);
  free(rendered);
  *status = 200;
  return sbuf_take(&out);
}

/* One list of ids -> text; false (with why) when an element is not an id. */
static bool decode_list(const cJSON *list, uint32_t vocab, bool skip_special, struct sbuf *text,
                        char *why, size_t why_len) {
  const cJSON *t;
  cJSON_ArrayForEach(t, list) {
    if (!cJSON_IsNumber(t) || t->valuedouble < 0 || t->valuedouble != floor(t->valuedouble) ||
        t->valuedouble > 4294967295.0) {
      snprintf(why, why_len, "Invalid input: 'tokens' must be a list of integers.");
      return false;
    }
    sim_detokenize_append(text, (uint32_t)t->valuedouble, vocab, skip_special);
  }
  return true;
}

static char *detokenize(const struct sim_server *srv, const cJSON *body, int *status, char *why,
                        size_t why_len) {
  uint32_t vocab = vocab_of(srv);
  const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(body, "tokens");
  const cJSON *skip = cJSON_GetObjectItemCaseSensitive(body, "skip_special_tokens");
  bool skip_special = !cJSON_IsFalse(skip); /* SGLang's default: true */
  if (!cJSON_IsArray(tokens)) {
    snprintf(why, why_len, "tokens: Field required (a list of token ids or of lists)");
    return NULL;
  }
  cJSON *out = cJSON_CreateObject();
  struct sbuf text = {0};
  bool ok = true;
  if (cJSON_IsArray(tokens->child)) {
    cJSON *texts = cJSON_CreateArray();
    const cJSON *list;
    cJSON_ArrayForEach(list, tokens) {
      sbuf_reset(&text);
      if (!cJSON_IsArray(list) || !decode_list(list, vocab, skip_special, &text, why, why_len)) {
        snprintf(why, why_len, "Invalid input: Sublist in 'tokens' must contain only integers.");
        ok = false;
        break;
      }
      cJSON_AddItemToArray(texts, cJSON_CreateString(text.data ? text.data : ""));
    }
    cJSON_AddItemToObject(out, "text", texts);
  } else {
    ok = decode_list(tokens, vocab, skip_special, &text, why, why_len);
    cJSON_AddStringToObject(out, "text", text.data ? text.data : "");
  }
  sbuf_free(&text);
  if (!ok) {
    cJSON_Delete(out);
    return NULL;
  }
  *status = 200;
  return sim_json_take_alloc(out);
}

char *sim_tokenizer_endpoint_alloc(const struct sim_server *srv, bool detok, const char *body,
                                   size_t body_len, int *status) {
  char why[256] = "";
  *status = 400;
  cJSON *json = cJSON_ParseWithLength(body, body_len);
  char *reply = NULL;
  if (!cJSON_IsObject(json))
    snprintf(why, sizeof why, "Invalid request body: expected a JSON object (JSON decode error)");
  else
    reply = detok ? detokenize(srv, json, status, why, sizeof why)
                  : tokenize(srv, json, status, why, sizeof why);
  cJSON_Delete(json);
  if (!reply) {
    *status = 400;
    reply = sim_fmt_error_json_alloc(400, why);
  }
  return reply;
}
