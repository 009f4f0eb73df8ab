#!/usr/bin/env bash
# servetop test data: an SGLang launch script.
python3 -m sglang.launch_server --model-path "$MODEL" --port 8888 --tp "$TP" --max-running-requests 64 &
