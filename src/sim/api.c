/* SGLang's HTTP endpoints: routing, generation requests and the streamed
 * responses (request bodies are parsed in request.c). The hot path (one SSE event per token chunk) formats into a
 * reused buffer from a per-request preformatted head. */
#include "sim/sim_internal.h"

#include <inttypes.h>
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

/* SGLang's /start_profile and /stop_profile: 200 with a text line (the sim
 * has nothing to profile; it logs the call). */
static void reply_profile(struct sim_server *srv, struct sim_conn *conn, bool start) {
  static const char started[] = "Start profiling.\n";
  static const char stopped[] = "Stop profiling. This will take some time.\n";
  const char *text = start ? started : stopped;
  size_t len = start ? sizeof started - 1 : sizeof stopped - 1;
  sim_log(srv, "%s (simulated: nothing is profiled)", start ? "Profiling starts" : "Profiling stops");
  sim_fmt_response_head(&conn->out, 200, "text/plain; charset=utf-8", (long)len, conn->keep_alive);
  sbuf_append(&conn->out, text, len);
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

/* data: [DONE], then the chunked body's terminator. */
static void end_stream(struct sim_conn *conn, struct sbuf *sb) {
  sbuf_reset(sb);
  sbuf_puts(sb, "data: [DONE]\n\n");
  emit_event(conn, sb);
  sbuf_puts(&conn->out, "0\r\n\r\n");
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
          "{\"id\":\"%s\",\"seq\":%" PRIu64 ",\"prompt_hash\":\"%016" PRIx64 "\",\"prompt_tokens\":%ld,\"completion_tokens\":%ld,"
          "\"received_us\":%" PRId64 ",\"finished_us\":%" PRId64 ",\"chunks\":[%s]}\n",
          req->rid, req->seq, req->prompt_hash, req->prompt_tokens, req->out_len, req->recv_ns / 1000, now / 1000,
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
    if (req->include_usage && req->kind != SIM_REQ_GENERATE && !req->fault_no_usage) {
      sbuf_printf(sb,
                  "data: {\"id\":\"%s\",\"object\":\"%s\",\"created\":%" PRId64
                  ",\"model\":\"%s\",\"choices\":[],\"usage\":",
                  req->rid, req->kind == SIM_REQ_CHAT ? "chat.completion.chunk" : "text_completion",
                  req->created_s, srv->model_name_json);
      append_usage(sb, req, req->out_len);
      sbuf_puts(sb, "}\n\n");
      emit_event(conn, sb);
    }
    end_stream(conn, sb);
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
    if (req->fault_error_event && req->sent_len == 0 && req->kind != SIM_REQ_GENERATE) {
      /* SGLang's streaming error response (create_streaming_error_response)
       * after a token: the error event, then [DONE], then the end. */
      sbuf_reset(sb);
      sbuf_puts(sb, "data: {\"error\": {\"object\": \"error\", \"message\": \"Simulated fault "
                    "error-event: the request was aborted mid-stream\", \"type\": "
                    "\"InternalServerError\", \"param\": null, \"code\": 500}}\n\n");
      emit_event(conn, sb);
      end_stream(conn, sb);
      req->sent_len = upto_len;
      observe_chunk(srv, req, tokens, now);
      sim_log(srv, "Simulated fault error-event: request %" PRIu64 " aborted after its first chunk",
              req->seq);
      conn->req = NULL;
      req->conn = NULL;
      sim_conn_response_done(srv, conn); /* the response is complete; keep-alive goes on */
      sim_engine_abort(srv, req);        /* as SGLang aborts the request */
      return false;
    }
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
  char why[768];
  struct sim_gen_params g;
  if (sim_request_parse(kind, hreq->body, hreq->body_len, srv->perf.context_length, &g, why,
                        sizeof why) < 0) {
    reply_error(srv, conn, 400, why);
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
  req->prompt_hash = g.prompt_hash;
  req->max_tokens = g.max_tokens;
  req->recv_ns = sim_now_ns();
  req->created_s = (int64_t)time(NULL);
  snprintf(req->rid, sizeof req->rid, "%016" PRIx64 "%016" PRIx64, sim_rng_next(&srv->rng), seq);
  req->fault_bad_json = fault_after(srv, SIM_FAULT_BAD_JSON_AFTER, seq);
  req->fault_reset = fault_after(srv, SIM_FAULT_RESET_AFTER, seq);
  req->fault_stall = fault_after(srv, SIM_FAULT_STALL_AFTER, seq);
  req->fault_error_event = fault_after(srv, SIM_FAULT_ERROR_EVENT_AFTER, seq);
  req->fault_no_usage = fault_after(srv, SIM_FAULT_NO_USAGE_AFTER, seq);
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
  else if (post && (sim_http_path_is(h, "/tokenize") || sim_http_path_is(h, "/v1/tokenize") ||
                    sim_http_path_is(h, "/detokenize") || sim_http_path_is(h, "/v1/detokenize"))) {
    int status;
    bool detok = sim_http_path_is(h, "/detokenize") || sim_http_path_is(h, "/v1/detokenize");
    char *json = sim_tokenizer_endpoint_alloc(srv, detok, h->body, h->body_len, &status);
    reply_json_owned(srv, conn, status, json);
  } else if ((get || post) &&
             (sim_http_path_is(h, "/start_profile") || sim_http_path_is(h, "/stop_profile")))
    reply_profile(srv, conn, sim_http_path_is(h, "/start_profile"));
  else if (sim_http_path_is(h, "/v1/completions") || sim_http_path_is(h, "/v1/chat/completions") ||
           sim_http_path_is(h, "/generate") || sim_http_path_is(h, "/flush_cache"))
    reply_json(srv, conn, 405, "{\"detail\":\"Method Not Allowed\"}");
  else if (get)
    serve_get(srv, conn, h);
  else
    reply_json(srv, conn, 404, "{\"detail\":\"Not Found\"}");
}
