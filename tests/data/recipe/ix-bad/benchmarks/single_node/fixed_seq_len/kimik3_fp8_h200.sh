#!/usr/bin/env bash
# fixture: the last continuation has nothing after it
python3 -m sglang.launch_server --model-path "$MODEL" \
  --tp "$TP" \
