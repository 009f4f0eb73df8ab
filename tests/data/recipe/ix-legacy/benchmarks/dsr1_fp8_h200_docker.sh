#!/usr/bin/env bash
# Legacy launch script: one logical line.
python3 -m sglang.launch_server --model-path $MODEL --tp $TP --max-running-requests $CONC --cuda-graph-max-bs $CONC --port 8888 > server.log 2>&1 &
