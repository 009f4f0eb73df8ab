#!/usr/bin/env bash
# fixture: a quote that never closes
python3 -m sglang.launch_server --model-path "$MODEL \
  --tp "$TP"
