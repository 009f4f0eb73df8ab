#!/usr/bin/env bash
# servetop test data: the helpers the launch scripts call (never run by servetop).
check_env_vars() { :; }
wait_for_server_ready() { :; }
run_benchmark_serving() { :; }
run_eval() { :; }
