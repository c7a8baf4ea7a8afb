#!/usr/bin/env bash
# Renders charts/external-secrets with operator/operand-values.yaml (real Helm library, through
# the operand_render test) into operator/manifests/operand/, the manifests the operator embeds.
# Needs python3 with helm_sdkpy on PATH: `export PATH="$(bash scripts/test-tools.sh):$PATH"`.
set -euo pipefail
cd "$(dirname "$0")/.."
UPDATE_OPERAND=1 cargo test -p external-secrets-operator --test operand_render
