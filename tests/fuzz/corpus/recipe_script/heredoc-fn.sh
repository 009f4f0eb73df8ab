cat > c.yml <<EOF
speculative_config: {decoding_type: MTP}
EOF
f() { echo "${X:-a}" $((1+2*3)) `echo b`; }
f | tr a b && g || h
