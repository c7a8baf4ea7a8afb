"""Renders a Helm chart with the Helm library (helm_sdkpy) and prints the manifests.

helm_sdkpy exposes no template or dry-run action, so the chart is installed for real into the
cluster the kubeconfig names; the caller points it at a throwaway API server (the chart tests use
a loopback server of their own) and applies the printed manifests wherever it wants to check them.

Usage: python3 render_chart.py KUBECONFIG NAMESPACE RELEASE CHART < values.json
Exit status: 0 with the manifests on stdout; 1 when Helm fails (its message on stderr, e.g. a
chart's `fail`); 2 when helm_sdkpy cannot be loaded.
"""

import asyncio
import json
import sys


def main() -> int:
    try:
        import helm_sdkpy
    except Exception as error:  # ImportError, or the bundled library failing to load
        print(
            f"cannot load helm_sdkpy ({error}): run scripts/test-tools.sh and put its venv on PATH",
            file=sys.stderr,
        )
        return 2
    kubeconfig, namespace, release, chart = sys.argv[1:5]
    values = json.load(sys.stdin)
    config = helm_sdkpy.Configuration(namespace=namespace, kubeconfig=kubeconfig)
    try:
        result = asyncio.run(
            helm_sdkpy.Install(config).run(
                release,
                chart,
                values=values,
                create_namespace=True,
                wait=False,
                timeout=120,
            )
        )
    except helm_sdkpy.HelmError as error:
        print(error, file=sys.stderr)
        return 1
    sys.stdout.write(result["manifest"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
