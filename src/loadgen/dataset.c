/* The `random` dataset of benchmark_serving.py (numpy's draws, the prompts
 * through the server's tokenizer in prompts.c, or token ids without one),
 * request bodies as the reference builds them, and chat-text calibration
 * against the server's own token count (the fallback without a tokenizer). */
#include "loadgen/loadgen.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "loadgen/loadgen_internal.h"

/* ---------------------------------------------------------------- body building */
void lg_json_escape_append(struct sbuf *sb, const char *s) {
  sbuf_putc(sb, '"');
  sbuf_put_json_escaped(sb, s, strlen(s));
  sbuf_putc(sb, '"');
}

static void append_uint(struct sbuf *sb, uint64_t v) {
  char buf[24];
  size_t n = 0;
  do {
    buf[sizeof(buf) - 1 - n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  sbuf_append(sb, buf + sizeof(buf) - n, n);
}

/* Key order and values as backend_request_func.py sends them (B.1): the
 * prompt as text (the reference's), or as a token-id array (no tokenizer). */
static char *completions_body_alloc(const char *model, const char *text, const int64_t *ids,
                                    size_t n_ids, uint32_t max_tokens, bool ignore_eos,
                                    size_t *len_out) {
  struct sbuf sb = {0};
  sbuf_reserve(&sb, 160 + (text ? strlen(text) + 16 : n_ids * 7));
  sbuf_puts(&sb, "{\"model\": ");
  lg_json_escape_append(&sb, model);
  sbuf_puts(&sb, ", \"prompt\": ");
  if (text) {
    lg_json_escape_append(&sb, text);
  } else {
    sbuf_putc(&sb, '[');
    for (size_t j = 0; j < n_ids; j++) {
      if (j)
        sbuf_puts(&sb, ", ");
      append_uint(&sb, (uint64_t)ids[j]);
    }
    sbuf_putc(&sb, ']');
  }
  sbuf_printf(&sb,
              ", \"temperature\": 0.0, \"best_of\": 1, \"max_tokens\": %u, \"logprobs\": null, "
              "\"stream\": true, \"stream_options\": {\"include_usage\": true, "
              "\"continuous_usage_stats\": true}%s}",
              max_tokens, ignore_eos ? ", \"ignore_eos\": true" : "");
  *len_out = sb.len;
  return sbuf_take(&sb);
}

static char *chat_body_alloc(const char *model, const char *text, uint32_t max_tokens,
                             bool ignore_eos, bool stream, size_t *len_out) {
  struct sbuf sb = {0};
  sbuf_puts(&sb, "{\"model\": ");
  lg_json_escape_append(&sb, model);
  sbuf_puts(&sb, ", \"messages\": [{\"role\": \"user\", \"content\": ");
  lg_json_escape_append(&sb, text);
  sbuf_printf(&sb, "}], \"temperature\": 0.0, \"max_completion_tokens\": %u", max_tokens);
  if (stream)
    sbuf_puts(&sb, ", \"stream\": true, \"stream_options\": {\"include_usage\": true, "
                   "\"continuous_usage_stats\": true}");
  else
    sbuf_printf(&sb, ", \"max_tokens\": %u, \"stream\": false", max_tokens);
  if (ignore_eos)
    sbuf_puts(&sb, ", \"ignore_eos\": true");
  sbuf_putc(&sb, '}');
  *len_out = sb.len;
  return sbuf_take(&sb);
}

/* Common English words that are one token (with their leading space) in the
 * BPE vocabularies of current models; the calibration measures the real cost,
 * this list only keeps it steady. The cycle always starts at the same word so
 * the count depends on n_words alone. */
static const char *const filler_words[] = {
    "time",  "year",  "people", "way",    "day",   "man",    "thing", "woman",
    "life",  "child", "world",  "school", "state", "family", "group", "country",
    "hand",  "part",  "place",  "case",   "week",  "system", "work",  "number",
    "night", "point", "home",   "water",  "room",  "mother", "area",  "money"};

char *lg_chat_text_alloc(uint32_t request_index, uint32_t n_prefix_words, uint32_t n_words) {
  struct sbuf sb = {0};
  sbuf_reserve(&sb, 16 + ((size_t)n_prefix_words + n_words) * 8);
  /* The shared prefix (--random-prefix-len), then a distinct fixed-width tag:
   * prompts share nothing past the prefix (as the reference's random ids),
   * and every tag costs the same number of tokens. */
  for (uint32_t w = 0; w < n_prefix_words; w++) {
    sbuf_puts(&sb, filler_words[(w + 7) % ST_ARRAY_LEN(filler_words)]);
    sbuf_putc(&sb, ' ');
  }
  sbuf_printf(&sb, "Request %07u:", request_index % 10000000u);
  for (uint32_t w = 0; w < n_words; w++) {
    sbuf_putc(&sb, ' ');
    sbuf_puts(&sb, filler_words[w % ST_ARRAY_LEN(filler_words)]);
  }
  return sbuf_take(&sb);
}

static uint32_t chat_words_for(const struct lg_chat_sizer *sizer, uint32_t target_tokens) {
  double words = ((double)target_tokens - sizer->overhead_tokens) / sizer->tokens_per_word;
  return words < 0 ? 0 : (uint32_t)llround(words);
}

char *lg_dsv4_user_prompt_alloc(const char *content) {
  /* bos_token + USER_SP_TOKEN + content + ASSISTANT_SP_TOKEN + thinking_start_token */
  return xasprintf("<\xef\xbd\x9c" "begin\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"
                   "<\xef\xbd\x9c" "User\xef\xbd\x9c>%s<\xef\xbd\x9c" "Assistant\xef\xbd\x9c><think>",
                   content);
}

/* ---------------------------------------------------------------- workloads */
/* sample_uniform: np.random.randint(int(L * ratio), L + 1, size=n). */
static void sample_uniform(struct lg_np *np, int len, double ratio, size_t n, uint32_t *out) {
  int64_t lower = (int64_t)((double)len * ratio);
  for (size_t i = 0; i < n; i++)
    out[i] = (uint32_t)lg_np_randint(np, lower, (int64_t)len + 1);
}

int lg_workload_random(const struct lg_dataset_config *cfg, struct lg_workload *out,
                       struct st_err *err) {
  memset(out, 0, sizeof(*out));
  if (cfg->num_prompts <= 0)
    return err_setf(err, "num-prompts must be positive (got %d)", cfg->num_prompts);
  if (cfg->input_len < 1 || cfg->output_len < 1)
    return err_setf(err, "random-input-len and random-output-len must be >= 1");
  if (!(cfg->range_ratio >= 0.0 && cfg->range_ratio <= 1.0))
    return err_setf(err, "random-range-ratio must be in [0, 1] (got %g)", cfg->range_ratio);
  if (cfg->prefix_len < 0 || cfg->vocab_size < 2)
    return err_setf(err, "random-prefix-len must be >= 0 and vocab size >= 2");
  if (cfg->seed > UINT32_MAX)
    return err_setf(err, "seed must be between 0 and 2**32 - 1 (numpy's rule; got %llu)",
                    (unsigned long long)cfg->seed);
  bool text_prompts = cfg->tokenizer != NULL;
  if (!text_prompts && cfg->api == LG_API_CHAT && !cfg->chat_sizer)
    return err_setf(err, "chat prompts without a tokenizer need a calibration (lg_chat_calibrate)");
  int64_t t0 = clock_mono_ns();

  /* np.random.seed(seed), then sample_random_requests' draws in its order. */
  struct lg_np *np = xmalloc(sizeof(*np));
  lg_np_seed(np, (uint32_t)cfg->seed);
  size_t n = (size_t)cfg->num_prompts;
  int vocab = cfg->vocab_size;
  int64_t *prefix = xcalloc((size_t)cfg->prefix_len + 1, sizeof(*prefix));
  for (int j = 0; j < cfg->prefix_len; j++)
    prefix[j] = lg_np_randint(np, 0, vocab);
  int input_len = cfg->input_len;
  bool template = text_prompts && (cfg->use_chat_template || cfg->dsv4);
  if (template) {
    int tlen = 0;
    if (lg_prompts_template_len(cfg->tokenizer, cfg->dsv4, &tlen, cfg->cancel, err) != 0) {
      free(prefix);
      free(np);
      return -1;
    }
    out->info.chat_template_len = tlen;
    input_len -= tlen; /* input_len = input_len - chat_template_len */
    if (input_len < 1) {
      free(prefix);
      free(np);
      return err_setf(err, "random-input-len %d is not longer than the chat template (%d tokens)",
                      cfg->input_len, tlen);
    }
  }
  uint32_t *in_lens = xcalloc(n, sizeof(*in_lens));
  uint32_t *out_lens = xcalloc(n, sizeof(*out_lens));
  int64_t *offsets = xcalloc(n, sizeof(*offsets));
  sample_uniform(np, input_len, cfg->range_ratio, n, in_lens);
  sample_uniform(np, cfg->output_len, cfg->range_ratio, n, out_lens);
  for (size_t i = 0; i < n; i++) {
    offsets[i] = lg_np_randint(np, 0, vocab);
    if (out_lens[i] == 0) /* ratio 0 can draw 0; max_tokens 0 asks for nothing */
      out_lens[i] = 1;
  }
  /* local_rng = RandomState(np.random.get_state()[1][:4]): does not advance np. */
  struct lg_np *local = xmalloc(sizeof(*local));
  lg_np_seed_array(local, np->key, 4);

  char **texts = NULL;
  uint32_t *prompt_lens = xcalloc(n, sizeof(*prompt_lens));
  int rc = 0;
  if (text_prompts) {
    texts = xcalloc(n, sizeof(*texts));
    struct lg_prompts_args a = {
        .tokenizer = cfg->tokenizer, .n = n, .prefix = prefix, .prefix_len = cfg->prefix_len,
        .input_lens = in_lens, .offsets = offsets, .vocab = vocab, .use_chat_template = template,
        .dsv4 = cfg->dsv4, .random_num_workers = cfg->random_num_workers, .local_rng = local,
        .cancel = cfg->cancel};
    rc = lg_prompts_build(&a, texts, prompt_lens, &out->info, err);
    out->info.path = "server_tokenizer";
    out->info.tokenizer = lg_tokenizer_dialect(cfg->tokenizer);
    out->info.chat_template =
        !template ? NULL
                  : cfg->dsv4 ? "encoding_dsv4 (DeepSeek-V4 framing, client side)"
                              : lg_tokenizer_template_method(cfg->tokenizer);
  } else {
    out->info.path = cfg->api == LG_API_CHAT ? "chat_calibrated" : "token_ids";
    for (size_t i = 0; i < n; i++)
      prompt_lens[i] = (uint32_t)cfg->prefix_len + in_lens[i];
  }

  if (rc == 0) {
    out->prompts = xcalloc(n, sizeof(*out->prompts));
    out->bodies = xcalloc(n, sizeof(*out->bodies));
    out->n_prompts = n;
    size_t ids_cap = (size_t)cfg->prefix_len + (size_t)input_len + 1;
    int64_t *ids = xcalloc(ids_cap, sizeof(*ids));
    for (size_t i = 0; i < n; i++) {
      struct lg_prompt *p = &out->prompts[i];
      size_t body_len;
      if (text_prompts && cfg->api == LG_API_COMPLETIONS) {
        out->bodies[i] = completions_body_alloc(cfg->model, texts[i], NULL, 0, out_lens[i],
                                                cfg->ignore_eos, &body_len);
      } else if (text_prompts) { /* backend openai-chat: the prompt is the user's content */
        out->bodies[i] =
            chat_body_alloc(cfg->model, texts[i], out_lens[i], cfg->ignore_eos, true, &body_len);
      } else if (cfg->api == LG_API_COMPLETIONS) {
        memcpy(ids, prefix, (size_t)cfg->prefix_len * sizeof(*ids));
        for (uint32_t j = 0; j < in_lens[i]; j++)
          ids[(size_t)cfg->prefix_len + j] = (offsets[i] + (int64_t)i + j) % vocab;
        out->bodies[i] = completions_body_alloc(cfg->model, NULL, ids, prompt_lens[i], out_lens[i],
                                                cfg->ignore_eos, &body_len);
      } else {
        /* The shared prefix is prefix_len tokens' worth of words; the rest of
         * the target goes to this prompt's own words. */
        uint32_t prefix_words =
            (uint32_t)llround((double)cfg->prefix_len / cfg->chat_sizer->tokens_per_word);
        uint32_t words = chat_words_for(cfg->chat_sizer, prompt_lens[i]);
        words = words > prefix_words ? words - prefix_words : 0;
        char *text = lg_chat_text_alloc((uint32_t)i, prefix_words, words);
        out->bodies[i] =
            chat_body_alloc(cfg->model, text, out_lens[i], cfg->ignore_eos, true, &body_len);
        free(text);
      }
      p->body = out->bodies[i];
      p->body_len = body_len;
      p->prompt_len = prompt_lens[i];
      p->output_len = out_lens[i];
    }
    /* The first request's prompt, for the /start_profile and /stop_profile bodies. */
    struct sbuf first = {0};
    if (texts) {
      lg_json_escape_append(&first, texts[0]);
    } else {
      memcpy(ids, prefix, (size_t)cfg->prefix_len * sizeof(*ids));
      for (uint32_t j = 0; j < in_lens[0]; j++)
        ids[(size_t)cfg->prefix_len + j] = (offsets[0] + j) % vocab;
      sbuf_putc(&first, '[');
      for (size_t j = 0; j < prompt_lens[0]; j++) {
        if (j)
          sbuf_puts(&first, ", ");
        append_uint(&first, (uint64_t)ids[j]);
      }
      sbuf_putc(&first, ']');
    }
    out->first_prompt_json = sbuf_take(&first);
    free(ids);
    /* get_request: request 0 at t = 0, then np.random.gamma(burstiness,
     * 1 / (rate * burstiness)) gaps from the global RNG, after the dataset. */
    if (cfg->request_rate > 0 && isfinite(cfg->request_rate)) {
      double burst = cfg->burstiness > 0 ? cfg->burstiness : 1.0;
      double theta = 1.0 / (cfg->request_rate * burst), t_s = 0.0;
      out->arrival_ns = xcalloc(n, sizeof(*out->arrival_ns));
      for (size_t i = 0; i < n; i++) {
        out->arrival_ns[i] = (int64_t)llround(t_s * 1e9);
        t_s += lg_np_gamma(np, burst, theta);
      }
    }
  }
  out->info.build_s = (double)(clock_mono_ns() - t0) / 1e9;
  if (texts)
    for (size_t i = 0; i < n; i++)
      free(texts[i]);
  free(texts);
  free(prompt_lens);
  free(local);
  free(np);
  free(prefix);
  free(in_lens);
  free(out_lens);
  free(offsets);
  if (rc != 0)
    lg_workload_free(out);
  return rc;
}

char *lg_workload_profile_body_alloc(const struct lg_workload *w, const char *model, bool start,
                                     bool ignore_eos) {
  /* backend_request_func's completions payload around the first request,
   * with start's extra_body merged at the top level. */
  struct sbuf sb = {0};
  sbuf_puts(&sb, "{\"model\": ");
  lg_json_escape_append(&sb, model);
  sbuf_printf(&sb,
              ", \"prompt\": %s, \"temperature\": 0.0, \"best_of\": 1, \"max_tokens\": %u, "
              "\"logprobs\": null, \"stream\": true, \"stream_options\": {\"include_usage\": true}",
              w->first_prompt_json ? w->first_prompt_json : "\"\"",
              w->n_prompts > 0 ? w->prompts[0].output_len : 1u);
  if (ignore_eos)
    sbuf_puts(&sb, ", \"ignore_eos\": true");
  if (start)
    sbuf_puts(&sb, ", \"num_steps\": 1, \"merge_profiles\": true, \"profile_by_stage\": true");
  sbuf_putc(&sb, '}');
  return sbuf_take(&sb);
}

void lg_workload_repeat_first(const struct lg_workload *src, size_t n, struct lg_workload *out) {
  memset(out, 0, sizeof(*out));
  if (src->n_prompts == 0 || n == 0)
    return;
  out->prompts = xcalloc(n, sizeof(*out->prompts));
  for (size_t i = 0; i < n; i++)
    out->prompts[i] = src->prompts[0];
  out->n_prompts = n;
}

void lg_workload_free(struct lg_workload *w) {
  if (!w)
    return;
  free(w->arrival_ns);
  free(w->first_prompt_json);
  if (w->bodies)
    for (size_t i = 0; i < w->n_prompts; i++)
      free(w->bodies[i]);
  free(w->bodies);
  free(w->prompts);
  memset(w, 0, sizeof(*w));
}

/* ---------------------------------------------------------------- chat calibration */
/* Sends one non-streaming chat request of n_words filler words; returns the
 * server's usage.prompt_tokens or -1 with err. */
static long probe_prompt_tokens(struct http_conn *conn, const char *url, const char *model,
                                const char *api_key, uint32_t n_words, struct st_err *err) {
  char *text = lg_chat_text_alloc(0, 0, n_words);
  size_t body_len;
  char *body = chat_body_alloc(model, text, 1, false, false, &body_len);
  free(text);
  struct http_request req = {.url = url, .body = body, .body_len = body_len, .api = true,
                             .api_key = api_key, .timeout_ms = 600000, .expect_status = 200};
  struct http_response resp = {0};
  struct st_err why = {{0}};
  int rc = http_conn_do(conn, &req, &resp, &why);
  long tokens = -1;
  if (rc != 0) {
    err_setf(err, "chat calibration probe: %s", why.msg);
  } else {
    cJSON *json = cJSON_ParseWithLength(resp.body.data, resp.body.len);
    cJSON *usage = cJSON_GetObjectItemCaseSensitive(json, "usage");
    cJSON *pt = cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens");
    if (cJSON_IsNumber(pt) && pt->valuedouble >= 0)
      tokens = (long)pt->valuedouble;
    else
      err_setf(err, "chat calibration probe to %s: no usage.prompt_tokens in the reply", url);
    cJSON_Delete(json);
  }
  http_response_fini(&resp);
  free(body);
  return tokens;
}

int lg_chat_calibrate(const char *url, const char *model, const char *api_key, int max_target_tokens,
                      struct lg_calibration *out, struct st_err *err) {
  memset(out, 0, sizeof(*out));
  struct http_conn *conn = http_conn_new(); /* the probes share a connection */
  int rc = -1;
  /* Two probes fix overhead and slope; a third at the largest target checks
   * it and, if off by more than 0.5%, becomes the second point of a refit. */
  uint32_t w1 = 16;
  uint32_t w2 = max_target_tokens > 64 ? (uint32_t)max_target_tokens : 64;
  long t1 = probe_prompt_tokens(conn, url, model, api_key, w1, err);
  if (t1 < 0)
    goto done;
  long t2 = probe_prompt_tokens(conn, url, model, api_key, w2, err);
  if (t2 < 0)
    goto done;
  out->n_probes = 2;
  for (int round = 0; round < 3; round++) {
    if (t2 == t1) {
      err_setf(err, "chat calibration: the server counts the same prompt_tokens (%ld) for %u and %u words",
               t1, w1, w2);
      goto done;
    }
    out->sizer.tokens_per_word = (double)(t2 - t1) / (double)(w2 - w1);
    out->sizer.overhead_tokens = (double)t1 - out->sizer.tokens_per_word * (double)w1;
    uint32_t target = (uint32_t)(max_target_tokens > 0 ? max_target_tokens : 1);
    uint32_t w = chat_words_for(&out->sizer, target);
    long t = probe_prompt_tokens(conn, url, model, api_key, w, err);
    if (t < 0)
      goto done;
    out->n_probes++;
    out->check_target_tokens = (int)target;
    out->check_server_tokens = (int)t;
    if (fabs((double)t - target) <= 0.005 * target || w == w2)
      break;
    w2 = w;
    t2 = t;
  }
  rc = 0;
done:
  http_conn_free(conn);
  return rc;
}
