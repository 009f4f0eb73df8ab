/* SGLang's HTTP endpoints: request parsing (cJSON), routing, and the streamed
 * responses. The hot path (one SSE event per token chunk) formats into a
 * reused buffer from a per-request preformatted head. */
#include "sim/sim_internal.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- small responses */
static void reply_json(struct sim_server *srv, struct sim_conn *conn, int status,
                       const char *json) {
  sim_fmt_json_response(&conn->out, status, json, conn->keep_alive);
  if (!conn->keep_alive)
    conn->closing = true;
  sim_conn_flush(srv, conn);
}

static void reply_json_owned(struct sim_server *srv, struct sim_conn *conn, int status,
                             char *json) {
  reply_json(srv, conn, status, json);
  free(json);
}

static void reply_error(struct sim_server *srv, struct sim_conn *conn, int status,
                        const char *msg) {
  reply_json_owned(srv, conn, status, sim_fmt_error_json_alloc(status, msg));
}

static void reply_empty(struct sim_server *srv, struct sim_conn *conn, int status) {
  sim_fmt_response_head(&conn->out, status, "text/plain; charset=utf-8", 0, conn->keep_alive);
  if (!conn->keep_alive)
    conn->closing = true;
  sim_conn_flush(srv, conn);
}

void sim_api_reply_timer(struct sim_server *srv, struct sim_timer *t) {
  struct sim_conn *conn = SIM_CONTAINER_OF(t, struct sim_conn, reply_timer);
  if (conn->fd < 0)
    return;
  reply_empty(srv, conn, srv->ready ? 200 : 503);
  if (conn->fd >= 0)
    sim_conn_response_done(srv, conn);
}

/* ---------------------------------------------------------------- faults */
static const struct sim_fault *fault_find(const struct sim_server *srv, enum sim_fault_kind kind) {
  for (size_t i = 0; i < srv->cfg->n_faults; i++)
    if (srv->cfg->faults[i].kind == kind)
      return &srv->cfg->faults[i];
  return NULL;
}

/* An after=N fault applies to requests N+1, N+2, ... */
static bool fault_after(const struct sim_server *srv, enum sim_fault_kind kind, uint64_t seq) {
  const struct sim_fault *f = fault_find(srv, kind);
  return f && seq > (uint64_t)f->n;
}

/* An http-5xx fault hits every request (N <= 1) or every Nth one. */
static bool fault_every(const struct sim_server *srv, enum sim_fault_kind kind, uint64_t seq) {
  const struct sim_fault *f = fault_find(srv, kind);
  return f && (f->n <= 1 || seq % (uint64_t)f->n == 0);
}

/* ---------------------------------------------------------------- request parsing */
struct gen_params {
  long prompt_tokens;
  long max_tokens;
  bool stream, include_usage, continuous_usage, chat_prompt;
};

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

static int parse_common_fields(const cJSON *body, struct gen_params *g, char *why, size_t why_len) {
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
static int parse_prompt(const cJSON *p, struct gen_params *g, char *why, size_t why_len) {
  if (cJSON_IsString(p)) {
    size_t len = strlen(p->valuestring);
    g->prompt_tokens = sim_count_tokens(p->valuestring, len);
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

static int parse_completion(const cJSON *body, struct gen_params *g, char *why, size_t why_len) {
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

static int parse_chat(const cJSON *body, const struct sim_server *srv, struct gen_params *g,
                      char *why, size_t why_len) {
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
    g->max_tokens = srv->perf.context_length - g->prompt_tokens;
  return 0;
}

static int parse_generate(const cJSON *body, struct gen_params *g, char *why, size_t why_len) {
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

/* ---------------------------------------------------------------- streamed output */
static void format_chunk_head(struct sim_server *srv, struct sim_req *req) {
  struct sbuf h = {0};
  if (req->kind == SIM_REQ_CHAT)
    sbuf_printf(
        &h,
        "data: {\"id\":\"%s\",\"object\":\"chat.completion.chunk\",\"created\":%" PRId64
        ",\"model\":\"%s\",\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":\"",
        req->rid, req->created_s, srv->model_name_json);
  else if (req->kind == SIM_REQ_COMPLETION)
    sbuf_printf(&h,
                "data: {\"id\":\"%s\",\"object\":\"text_completion\",\"created\":%" PRId64
                ",\"model\":\"%s\",\"choices\":[{\"index\":0,\"text\":\"",
                req->rid, req->created_s, srv->model_name_json);
  else
    return; /* /generate streams cumulative text: no fixed head */
  req->chunk_head_len = h.len;
  req->chunk_head = sbuf_take(&h);
}

static void append_token_text(struct sbuf *sb, long from, long to) {
  for (long i = from; i < to; i++) {
    size_t n;
    const char *w = sim_token_text((uint64_t)i, &n);
    sbuf_append(sb, w, n);
  }
}

static void append_usage(struct sbuf *sb, const struct sim_req *req, long completion) {
  sbuf_printf(sb, "{\"prompt_tokens\":%ld,\"total_tokens\":%ld,\"completion_tokens\":%ld}",
              req->prompt_tokens, req->prompt_tokens + completion, completion);
}

static void append_chat_tail(struct sbuf *sb, const struct sim_req *req, long completion,
                             const char *finish_reason) {
  sbuf_printf(sb, ",\"logprobs\":null,\"finish_reason\":%s%s%s,\"matched_stop\":null}],\"usage\":",
              finish_reason ? "\"" : "", finish_reason ? finish_reason : "null",
              finish_reason ? "\"" : "");
  if (req->continuous_usage)
    append_usage(sb, req, completion);
  else
    sbuf_puts(sb, "null");
  sbuf_puts(sb, "}\n\n");
}

static void emit_event(struct sim_conn *conn, const struct sbuf *ev) {
  sim_fmt_http_chunk(&conn->out, ev->data, ev->len);
}

static void observe_chunk(struct sim_server *srv, struct sim_req *req, long tokens, int64_t now) {
  struct sim_stats *st = &srv->stats;
  if (req->sent_len == 0) {
    req->first_token_ns = now;
    if (!req->is_warmup)
      sim_hist_observe(st->ttft_buckets, sim_ttft_bounds_s, sim_ttft_n_bounds, &st->ttft_sum_s,
                       &st->ttft_count, (double)(now - req->recv_ns) / 1e9);
  } else if (!req->is_warmup && tokens > 0) {
    /* SGLang: k observations of gap/k per streamed batch of k tokens */
    double per_token_s = (double)(now - req->last_chunk_ns) / 1e9 / (double)tokens;
    for (long i = 0; i < tokens; i++)
      sim_hist_observe(st->itl_buckets, sim_itl_bounds_s, sim_itl_n_bounds, &st->itl_sum_s,
                       &st->itl_count, per_token_s);
  }
  req->last_chunk_ns = now;
  if (srv->trace)
    sbuf_printf(&req->trace, "%s[%" PRId64 ",%ld]", req->trace.len ? "," : "", now / 1000, tokens);
}

static void write_trace(struct sim_server *srv, const struct sim_req *req, int64_t now) {
  if (!srv->trace || req->is_warmup)
    return;
  fprintf(srv->trace,
          "{\"id\":\"%s\",\"seq\":%" PRIu64 ",\"prompt_tokens\":%ld,\"completion_tokens\":%ld,"
          "\"received_us\":%" PRId64 ",\"finished_us\":%" PRId64 ",\"chunks\":[%s]}\n",
          req->rid, req->seq, req->prompt_tokens, req->out_len, req->recv_ns / 1000, now / 1000,
          req->trace.data ? req->trace.data : "");
  fflush(srv->trace);
}

static void finish_nonstream(struct sim_server *srv, struct sim_req *req, struct sbuf *body) {
  if (req->kind == SIM_REQ_GENERATE) {
    sbuf_puts(body, "{\"text\":\"");
    append_token_text(body, 0, req->out_len);
    sbuf_printf(
        body,
        "\",\"meta_info\":{\"id\":\"%s\",\"finish_reason\":{\"type\":\"length\",\"length\":%ld},"
        "\"prompt_tokens\":%ld,\"completion_tokens\":%ld,\"cached_tokens\":0,"
        "\"e2e_latency\":%.6f}}",
        req->rid, req->out_len, req->prompt_tokens, req->out_len,
        (double)(sim_now_ns() - req->recv_ns) / 1e9);
    return;
  }
  bool chat = req->kind == SIM_REQ_CHAT;
  sbuf_printf(body,
              "{\"id\":\"%s\",\"object\":\"%s\",\"created\":%" PRId64
              ",\"model\":\"%s\",\"choices\":[{\"index\":0,",
              req->rid, chat ? "chat.completion" : "text_completion", req->created_s,
              srv->model_name_json);
  sbuf_puts(body, chat ? "\"message\":{\"role\":\"assistant\",\"content\":\"" : "\"text\":\"");
  append_token_text(body, 0, req->out_len);
  sbuf_puts(body, chat ? "\",\"reasoning_content\":null,\"tool_calls\":null}" : "\"");
  sbuf_puts(body,
            ",\"logprobs\":null,\"finish_reason\":\"length\",\"matched_stop\":null}],\"usage\":");
  append_usage(body, req, req->out_len);
  sbuf_puts(body, "}");
}

/* The end of a request: stats, trace, the response's tail; frees req. */
static void finish_request(struct sim_server *srv, struct sim_req *req, int64_t now) {
  struct sim_stats *st = &srv->stats;
  req->phase = SIM_PHASE_DONE;
  if (req->is_warmup) {
    srv->warmup_req = NULL;
    srv->ready = true;
    sim_log(srv, "The server is fired up and ready to roll!");
    sim_req_free(req);
    return;
  }
  srv->n_active--;
  st->generation_tokens += (uint64_t)req->out_len;
  sim_hist_observe(st->e2e_buckets, sim_e2e_bounds_s, sim_e2e_n_bounds, &st->e2e_sum_s,
                   &st->e2e_count, (double)(now - req->recv_ns) / 1e9);
  write_trace(srv, req, now);
  struct sim_conn *conn = req->conn;
  if (!conn) {
    sim_req_free(req);
    return;
  }
  if (req->fault_stall)
    return; /* the connection keeps the request; no more bytes ever */
  struct sbuf *sb = &srv->scratch;
  sbuf_reset(sb);
  if (!req->stream) {
    finish_nonstream(srv, req, sb);
    sim_fmt_json_response(&conn->out, 200, sb->data, conn->keep_alive);
  } else {
    if (req->include_usage && req->kind != SIM_REQ_GENERATE) {
      sbuf_printf(sb,
                  "data: {\"id\":\"%s\",\"object\":\"%s\",\"created\":%" PRId64
                  ",\"model\":\"%s\",\"choices\":[],\"usage\":",
                  req->rid, req->kind == SIM_REQ_CHAT ? "chat.completion.chunk" : "text_completion",
                  req->created_s, srv->model_name_json);
      append_usage(sb, req, req->out_len);
      sbuf_puts(sb, "}\n\n");
      emit_event(conn, sb);
      sbuf_reset(sb);
    }
    sbuf_puts(sb, "data: [DONE]\n\n");
    emit_event(conn, sb);
    sbuf_puts(&conn->out, "0\r\n\r\n");
  }
  conn->req = NULL;
  req->conn = NULL;
  sim_req_free(req);
  sim_conn_response_done(srv, conn);
}

bool sim_api_send_chunk(struct sim_server *srv, struct sim_req *req, long upto_len, bool finished) {
  int64_t now = sim_now_ns();
  long tokens = upto_len - req->sent_len;
  struct sim_conn *conn = req->conn;
  if (!req->is_warmup && req->sent_len == 0 && fault_after(srv, SIM_FAULT_CRASH_AFTER, req->seq)) {
    sim_log(srv,
            "Simulated crash (--sim-fault crash-after): exiting while serving request %" PRIu64,
            req->seq);
    srv->crashed = true;
    srv->stopping = true;
    return false;
  }
  bool stalled = req->fault_stall && req->sent_len > 0; /* stall after the first chunk */
  if (req->stream && conn && !stalled) {
    struct sbuf *sb = &srv->scratch;
    if (req->kind == SIM_REQ_CHAT && !req->role_sent) {
      /* SGLang sends a role chunk right before the first content */
      sbuf_reset(sb);
      sbuf_printf(sb,
                  "data: {\"id\":\"%s\",\"object\":\"chat.completion.chunk\",\"created\":%" PRId64
                  ",\"model\":\"%s\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                  "\"content\":\"\",\"reasoning_content\":null,\"tool_calls\":null}",
                  req->rid, req->created_s, srv->model_name_json);
      append_chat_tail(sb, req, 0, NULL);
      emit_event(conn, sb);
      req->role_sent = true;
    }
    sbuf_reset(sb);
    if (req->chunk_head)
      sbuf_append(sb, req->chunk_head, req->chunk_head_len);
    if (req->kind != SIM_REQ_GENERATE)
      append_token_text(sb, req->sent_len, upto_len);
    if (req->kind == SIM_REQ_CHAT) {
      sbuf_puts(sb, "\",\"reasoning_content\":null,\"tool_calls\":null}");
      append_chat_tail(sb, req, upto_len, NULL);
      if (finished) {
        /* SGLang chat: a separate chunk carries finish_reason */
        emit_event(conn, sb);
        sbuf_reset(sb);
        sbuf_printf(sb,
                    "data: {\"id\":\"%s\",\"object\":\"chat.completion.chunk\",\"created\":%" PRId64
                    ",\"model\":\"%s\",\"choices\":[{\"index\":0,\"delta\":{\"role\":null,"
                    "\"content\":null,\"reasoning_content\":null,\"tool_calls\":null}",
                    req->rid, req->created_s, srv->model_name_json);
        append_chat_tail(sb, req, upto_len, "length");
      }
    } else if (req->kind == SIM_REQ_COMPLETION) {
      /* the hot path: fixed tails, no printf */
      static const char tail_open[] = "\",\"logprobs\":null,\"finish_reason\":null,"
                                      "\"matched_stop\":null}],\"usage\":";
      static const char tail_last[] = "\",\"logprobs\":null,\"finish_reason\":\"length\","
                                      "\"matched_stop\":null}],\"usage\":";
      if (finished)
        sbuf_append(sb, tail_last, sizeof tail_last - 1);
      else
        sbuf_append(sb, tail_open, sizeof tail_open - 1);
      if (req->continuous_usage)
        append_usage(sb, req, upto_len);
      else
        sbuf_append(sb, "null", 4);
      sbuf_append(sb, "}\n\n", 3);
    } else {
      /* native /generate streams the cumulative text */
      sbuf_puts(sb, "data: {\"text\":\"");
      append_token_text(sb, 0, upto_len);
      sbuf_printf(
          sb,
          "\",\"meta_info\":{\"id\":\"%s\",\"prompt_tokens\":%ld,\"completion_tokens\":%ld}}\n\n",
          req->rid, req->prompt_tokens, upto_len);
    }
    if (req->fault_bad_json && req->sent_len == 0) {
      /* a truncated JSON object: what a client must reject */
      sb->len = sb->len > 40 ? 40 : sb->len;
      sbuf_puts(sb, "\n\n");
    }
    emit_event(conn, sb);
    if (req->fault_reset && req->sent_len == 0) {
      req->sent_len = upto_len;
      observe_chunk(srv, req, tokens, now);
      sim_conn_flush(srv, conn);
      if (conn->fd >= 0) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0}; /* RST, not FIN */
        setsockopt(conn->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        sim_conn_close(srv, conn);
      }
      return false; /* the connection, and with it req, is gone */
    }
  }
  if (!stalled)
    observe_chunk(srv, req, tokens, now);
  req->sent_len = upto_len;
  if (finished) {
    finish_request(srv, req, now);
    return false;
  }
  return true;
}

void sim_req_free(struct sim_req *req) {
  if (!req)
    return;
  free(req->chunk_head);
  sbuf_free(&req->trace);
  free(req);
}

/* ---------------------------------------------------------------- generation requests */
static void start_generation(struct sim_server *srv, struct sim_conn *conn,
                             const struct sim_http_request *hreq, enum sim_req_kind kind) {
  char why[512] = "";
  cJSON *body = cJSON_ParseWithLength(hreq->body, hreq->body_len);
  if (!body || !cJSON_IsObject(body)) {
    cJSON_Delete(body);
    reply_error(srv, conn, 400, "Invalid request body: expected a JSON object (JSON decode error)");
    return;
  }
  struct gen_params g = {0};
  int rc = parse_common_fields(body, &g, why, sizeof why);
  if (rc == 0)
    rc = kind == SIM_REQ_CHAT         ? parse_chat(body, srv, &g, why, sizeof why)
         : kind == SIM_REQ_COMPLETION ? parse_completion(body, &g, why, sizeof why)
                                      : parse_generate(body, &g, why, sizeof why);
  cJSON_Delete(body);
  if (rc < 0) {
    reply_error(srv, conn, 400, why);
    return;
  }
  if (g.prompt_tokens <= 0) {
    reply_error(srv, conn, 400, "The prompt is empty.");
    return;
  }
  if (g.max_tokens < 1) {
    reply_error(srv, conn, 400, "max_tokens must be at least 1 (servetop sim).");
    return;
  }
  long ctx = srv->perf.context_length;
  if (g.prompt_tokens + g.max_tokens > ctx) {
    char msg[512];
    snprintf(msg, sizeof msg,
             "Requested token count exceeds the model's maximum context length of %ld tokens. "
             "You requested a total of %ld tokens: %ld tokens from the input messages and %ld "
             "tokens for the completion. Please reduce the number of tokens in the input "
             "messages or the completion to fit within the limit.",
             ctx, g.prompt_tokens + g.max_tokens, g.prompt_tokens, g.max_tokens);
    reply_error(srv, conn, 400, msg);
    return;
  }
  uint64_t seq = ++srv->next_req_seq;
  if (fault_every(srv, SIM_FAULT_HTTP_500, seq)) {
    reply_error(srv, conn, 500, "Internal server error (simulated fault http-500)");
    return;
  }
  if (fault_every(srv, SIM_FAULT_HTTP_503, seq)) {
    reply_error(srv, conn, 503, "Service unavailable (simulated fault http-503)");
    return;
  }

  struct sim_req *req = xcalloc(1, sizeof *req);
  req->seq = seq;
  req->conn = conn;
  req->kind = kind;
  req->stream = g.stream;
  req->include_usage = g.include_usage;
  req->continuous_usage = g.continuous_usage;
  req->chat_prompt = g.chat_prompt;
  req->prompt_tokens = g.prompt_tokens;
  req->max_tokens = g.max_tokens;
  req->recv_ns = sim_now_ns();
  req->created_s = (int64_t)time(NULL);
  snprintf(req->rid, sizeof req->rid, "%016" PRIx64 "%016" PRIx64, sim_rng_next(&srv->rng), seq);
  req->fault_bad_json = fault_after(srv, SIM_FAULT_BAD_JSON_AFTER, seq);
  req->fault_reset = fault_after(srv, SIM_FAULT_RESET_AFTER, seq);
  req->fault_stall = fault_after(srv, SIM_FAULT_STALL_AFTER, seq);
  sim_timer_init(&req->timer, NULL);
  format_chunk_head(srv, req);
  conn->req = req;
  srv->n_active++;
  srv->stats.num_requests++;
  srv->stats.prompt_tokens += (uint64_t)req->prompt_tokens;
  if (req->stream) {
    sim_fmt_response_head(&conn->out, 200, "text/event-stream; charset=utf-8", -1,
                          conn->keep_alive);
    sim_conn_flush(srv, conn);
    if (conn->fd < 0)
      return;
  }
  sim_engine_submit(srv, req);
}

/* ---------------------------------------------------------------- routing */
static void serve_get(struct sim_server *srv, struct sim_conn *conn,
                      const struct sim_http_request *h) {
  if (sim_http_path_is(h, "/health") || sim_http_path_is(h, "/health_generate")) {
    if (!srv->ready) {
      reply_empty(srv, conn, 503);
      return;
    }
    /* SGLang answers after a real 1-token generation: a short delay here */
    sim_timer_arm(&srv->timers, &conn->reply_timer,
                  sim_now_ns() + (int64_t)(srv->cfg->health_delay_ms * 1e6));
    return;
  }
  if (sim_http_path_is(h, "/ping")) {
    reply_empty(srv, conn, 200);
  } else if (sim_http_path_is(h, "/v1/models")) {
    reply_json_owned(srv, conn, 200, sim_info_models_json_alloc(srv));
  } else if (h->path_len > 11 && memcmp(h->target, "/v1/models/", 11) == 0) {
    size_t n = h->path_len - 11;
    if (n == strlen(srv->model_name) && memcmp(h->target + 11, srv->model_name, n) == 0)
      reply_json_owned(srv, conn, 200, sim_info_model_card_json_alloc(srv));
    else
      reply_json(srv, conn, 404,
                 "{\"object\":\"error\",\"message\":\"The model does not exist.\","
                 "\"type\":\"NotFoundError\",\"param\":\"model\",\"code\":404}");
  } else if (sim_http_path_is(h, "/get_model_info") || sim_http_path_is(h, "/model_info")) {
    reply_json_owned(srv, conn, 200, sim_info_model_info_json_alloc(srv));
  } else if (sim_http_path_is(h, "/get_server_info") || sim_http_path_is(h, "/server_info")) {
    reply_json_owned(srv, conn, 200, sim_info_server_json_alloc(srv));
  } else if (sim_http_path_is(h, "/sim/gpu_memory")) {
    reply_json_owned(srv, conn, 200, sim_info_gpu_memory_json_alloc(srv));
  } else if (sim_http_path_is(h, "/get_load")) {
    char json[160];
    snprintf(json, sizeof json,
             "[{\"dp_rank\":0,\"num_reqs\":%d,\"num_waiting_reqs\":%d,\"num_tokens\":%ld}]",
             srv->n_active, srv->n_waiting, sim_engine_kv_tokens(srv));
    reply_json(srv, conn, 200, json);
  } else if (sim_http_path_is(h, "/metrics") && srv->cfg->enable_metrics) {
    char *text = sim_info_metrics_text_alloc(srv);
    size_t len = strlen(text);
    sim_fmt_response_head(&conn->out, 200, "text/plain; version=0.0.4; charset=utf-8", (long)len,
                          conn->keep_alive);
    sbuf_append(&conn->out, text, len);
    free(text);
    if (!conn->keep_alive)
      conn->closing = true;
    sim_conn_flush(srv, conn);
  } else {
    reply_json(srv, conn, 404, "{\"detail\":\"Not Found\"}");
  }
}

void sim_api_dispatch(struct sim_server *srv, struct sim_conn *conn,
                      const struct sim_http_request *h) {
  bool get = sim_http_method_is(h, "GET");
  bool post = sim_http_method_is(h, "POST");
  if (post && sim_http_path_is(h, "/v1/completions"))
    start_generation(srv, conn, h, SIM_REQ_COMPLETION);
  else if (post && sim_http_path_is(h, "/v1/chat/completions"))
    start_generation(srv, conn, h, SIM_REQ_CHAT);
  else if (post && sim_http_path_is(h, "/generate"))
    start_generation(srv, conn, h, SIM_REQ_GENERATE);
  else if (post && sim_http_path_is(h, "/flush_cache"))
    reply_empty(srv, conn, 200);
  else if (sim_http_path_is(h, "/v1/completions") || sim_http_path_is(h, "/v1/chat/completions") ||
           sim_http_path_is(h, "/generate") || sim_http_path_is(h, "/flush_cache"))
    reply_json(srv, conn, 405, "{\"detail\":\"Method Not Allowed\"}");
  else if (get)
    serve_get(srv, conn, h);
  else
    reply_json(srv, conn, 404, "{\"detail\":\"Not Found\"}");
}
