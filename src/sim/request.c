/* Generation request bodies (completions, chat, native generate): JSON in,
 * validated parameters or SGLang's 400 message out. Pure: no server state. */
#include "sim/sim_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int json_get_bool(const cJSON *obj, const char *key, bool *out, char *why, size_t why_len) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v || cJSON_IsNull(v))
    return 0;
  if (!cJSON_IsBool(v)) {
    snprintf(why, why_len, "%s: Input should be a valid boolean", key);
    return -1;
  }
  *out = cJSON_IsTrue(v);
  return 0;
}

/* An integer field; absent/null leaves *out. */
static int json_get_long(const cJSON *obj, const char *key, long *out, char *why, size_t why_len) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v || cJSON_IsNull(v))
    return 0;
  if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
      fabs(v->valuedouble) > 1e12) {
    snprintf(why, why_len, "%s: Input should be a valid integer", key);
    return -1;
  }
  *out = (long)v->valuedouble;
  return 0;
}

static int parse_common_fields(const cJSON *body, struct sim_gen_params *g, char *why,
                               size_t why_len) {
  if (json_get_bool(body, "stream", &g->stream, why, why_len) < 0)
    return -1;
  const cJSON *so = cJSON_GetObjectItemCaseSensitive(body, "stream_options");
  if (so && !cJSON_IsNull(so)) {
    if (!cJSON_IsObject(so)) {
      snprintf(why, why_len, "stream_options: Input should be a valid dictionary");
      return -1;
    }
    if (json_get_bool(so, "include_usage", &g->include_usage, why, why_len) < 0 ||
        json_get_bool(so, "continuous_usage_stats", &g->continuous_usage, why, why_len) < 0)
      return -1;
  }
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(body, "temperature");
  if (t && !cJSON_IsNull(t) && (!cJSON_IsNumber(t) || t->valuedouble < 0)) {
    snprintf(why, why_len, "temperature: Input should be a number >= 0");
    return -1;
  }
  bool ignore_eos = false;
  return json_get_bool(body, "ignore_eos", &ignore_eos, why, why_len);
}

/* A prompt as a string or a list of token ids. */
static int parse_prompt(const cJSON *p, struct sim_gen_params *g, char *why, size_t why_len) {
  if (cJSON_IsString(p)) {
    size_t len = strlen(p->valuestring);
    g->prompt_tokens = sim_count_tokens(p->valuestring, len);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
      h = (h ^ (unsigned char)p->valuestring[i]) * 1099511628211ull;
    g->prompt_hash = h;
    g->chat_prompt = sim_text_is_chat_formatted(p->valuestring, len);
    return 0;
  }
  if (cJSON_IsArray(p)) {
    long n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, p) {
      if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble != floor(it->valuedouble)) {
        snprintf(why, why_len,
                 "prompt: expected a string or a list of token ids (batched prompts are not "
                 "supported by servetop sim)");
        return -1;
      }
      n++;
    }
    g->prompt_tokens = n;
    return 0;
  }
  snprintf(why, why_len, "prompt: Input should be a valid string or list of token ids");
  return -1;
}

static int parse_completion(const cJSON *body, struct sim_gen_params *g, char *why,
                            size_t why_len) {
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(body, "prompt");
  if (!p) {
    snprintf(why, why_len, "prompt: Field required");
    return -1;
  }
  if (parse_prompt(p, g, why, why_len) < 0)
    return -1;
  g->max_tokens = 16; /* OpenAI's and SGLang's default for completions */
  return json_get_long(body, "max_tokens", &g->max_tokens, why, why_len);
}

static long content_tokens(const cJSON *content, bool *chat_ok) {
  if (cJSON_IsString(content))
    return sim_count_tokens(content->valuestring, strlen(content->valuestring));
  long n = 0;
  if (cJSON_IsArray(content)) {
    const cJSON *part;
    cJSON_ArrayForEach(part, content) {
      const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");
      if (cJSON_IsString(text))
        n += sim_count_tokens(text->valuestring, strlen(text->valuestring));
    }
    return n;
  }
  if (!cJSON_IsNull(content))
    *chat_ok = false;
  return 0;
}

static int parse_chat(const cJSON *body, long context_length, struct sim_gen_params *g, char *why,
                      size_t why_len) {
  const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(body, "messages");
  if (!cJSON_IsArray(msgs) || cJSON_GetArraySize(msgs) == 0) {
    snprintf(why, why_len, "messages: Field required (a non-empty list)");
    return -1;
  }
  long tokens = SIM_CHAT_TOKENS_GENERATION_PROMPT;
  const cJSON *m;
  cJSON_ArrayForEach(m, msgs) {
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
    bool ok = cJSON_IsObject(m) && cJSON_IsString(role);
    const cJSON *content = ok ? cJSON_GetObjectItemCaseSensitive(m, "content") : NULL;
    long n = content ? content_tokens(content, &ok) : 0;
    if (!ok) {
      snprintf(why, why_len,
               "messages: each message needs a string role and string or list content");
      return -1;
    }
    tokens += n + SIM_CHAT_TOKENS_PER_MESSAGE;
  }
  g->prompt_tokens = tokens;
  g->chat_prompt = true;
  long unset = -1, mct = unset;
  g->max_tokens = unset;
  if (json_get_long(body, "max_completion_tokens", &mct, why, why_len) < 0 ||
      json_get_long(body, "max_tokens", &g->max_tokens, why, why_len) < 0)
    return -1;
  if (mct != unset)
    g->max_tokens = mct;
  if (g->max_tokens == unset) /* SGLang: until EOS or the context limit; the sim has no EOS */
    g->max_tokens = context_length - g->prompt_tokens;
  return 0;
}

static int parse_generate(const cJSON *body, struct sim_gen_params *g, char *why, size_t why_len) {
  const cJSON *text = cJSON_GetObjectItemCaseSensitive(body, "text");
  const cJSON *ids = cJSON_GetObjectItemCaseSensitive(body, "input_ids");
  if (text && !cJSON_IsNull(text)) {
    if (parse_prompt(text, g, why, why_len) < 0)
      return -1;
  } else if (ids && !cJSON_IsNull(ids)) {
    if (parse_prompt(ids, g, why, why_len) < 0)
      return -1;
  } else {
    snprintf(why, why_len, "Either text or input_ids should be provided.");
    return -1;
  }
  g->max_tokens = 128; /* SGLang's SamplingParams default */
  const cJSON *sp = cJSON_GetObjectItemCaseSensitive(body, "sampling_params");
  if (sp && !cJSON_IsNull(sp) &&
      json_get_long(sp, "max_new_tokens", &g->max_tokens, why, why_len) < 0)
    return -1;
  return json_get_bool(body, "stream", &g->stream, why, why_len);
}

int sim_request_parse(enum sim_req_kind kind, const char *body, size_t body_len,
                      long context_length, struct sim_gen_params *g, char *why, size_t why_len) {
  memset(g, 0, sizeof *g);
  cJSON *json = cJSON_ParseWithLength(body, body_len);
  if (!json || !cJSON_IsObject(json)) {
    cJSON_Delete(json);
    snprintf(why, why_len, "Invalid request body: expected a JSON object (JSON decode error)");
    return -1;
  }
  int rc = parse_common_fields(json, g, why, why_len);
  if (rc == 0)
    rc = kind == SIM_REQ_CHAT         ? parse_chat(json, context_length, g, why, why_len)
         : kind == SIM_REQ_COMPLETION ? parse_completion(json, g, why, why_len)
                                      : parse_generate(json, g, why, why_len);
  cJSON_Delete(json);
  if (rc < 0)
    return -1;
  if (g->prompt_tokens <= 0) {
    snprintf(why, why_len, "The prompt is empty.");
    return -1;
  }
  if (g->max_tokens < 1) {
    snprintf(why, why_len, "max_tokens must be at least 1 (servetop sim).");
    return -1;
  }
  if (g->prompt_tokens + g->max_tokens > context_length) {
    snprintf(why, why_len,
             "Requested token count exceeds the model's maximum context length of %ld tokens. "
             "You requested a total of %ld tokens: %ld tokens from the input messages and %ld "
             "tokens for the completion. Please reduce the number of tokens in the input "
             "messages or the completion to fit within the limit.",
             context_length, g->prompt_tokens + g->max_tokens, g->prompt_tokens, g->max_tokens);
    return -1;
  }
  return 0;
}
