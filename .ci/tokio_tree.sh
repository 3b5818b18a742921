#!/usr/bin/env bash
# A tokio host's dependency tree: `mcpwire` built with `default-features = false` and the `tokio`
# feature (alone, and with oauth, schemas, skills and tracing) holds no crate of smol's family
# in its normal dependencies (`cargo tree -e normal`). Fails naming the crates that came in.
# Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

family='^(smol|async-io|async-process|async-executor|polling|blocking) '
status=0
for features in tokio tokio,oauth,schemas,skills,tracing; do
  tree="$(cargo tree -e normal -p mcpwire --no-default-features --features "$features" --locked --prefix none)"
  found="$(grep -E "$family" <<<"$tree" | sort -u || true)"
  if [[ -n "$found" ]]; then
    echo "mcpwire --no-default-features --features $features brings smol's family:"
    echo "$found"
    status=1
  else
    echo "mcpwire --no-default-features --features $features: no crate of smol's family ($(awk '{print $1}' <<<"$tree" | sort -u | wc -l) crates)"
  fi
done
exit "$status"
