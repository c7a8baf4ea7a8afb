"""Runs cloudbox's Secret Manager emulator (PyPI cloudbox 0.2.3) alone on 127.0.0.1:PORT.

Usage: python cloudbox_launcher.py PORT

This launcher belongs to the project's tests, not to cloudbox. It changes, without touching the
installed package, exactly these defects of cloudbox 0.2.3 (each checked by hand on Python 3.11):

1. cloudbox declares Python >= 3.14 and relies on its deferred annotations: on 3.11
   `cloudbox/core/store.py` fails at import (`list[str]` inside a class that defines a method
   named `list`). An import hook compiles every `cloudbox.*` module with postponed annotations
   (`from __future__ import annotations`), which is what 3.14 does by default.
2. `...versions/{v}:access` is routed only for POST, while Google's clients (and the REST
   reference) use GET: a GET to it would reach "get version" with `{v}` = `latest:access`. A GET
   ending in `:access` is handed to the POST route.
3. `projects.secrets.list` ignores `filter`: the list route is replaced by one applying the
   documented filter terms the provider sends (`labels.KEY=VALUE`, `name:TEXT`, ANDed by
   spaces; anything else is refused with 400, as the real service refuses what it cannot parse).
4. `pageSize=0` (which the reference defines as "server default") yields empty pages whose next
   token never advances: 0 or absent means 25 here, and sizes are capped at 25000 as documented.
5. Accessing a disabled or destroyed version answers 403; the real service answers 400
   FAILED_PRECONDITION "... is in DISABLED state" / "DESTROYED state", and `latest` names the
   newest version whatever its state (cloudbox picked the newest enabled one). The access route
   is replaced by one with the real service's answers.

6. `projects.secrets.versions.list` understands only `filter=state=X`; the documented form,
   which upstream's provider sends, is `state:X`: such a filter is rewritten to cloudbox's.

Nothing else is changed: cloudbox still keeps no annotations, topics or etags, and serves no
regional (`locations/...`) secrets.
"""

import importlib.abc
import importlib.machinery
import sys

_FUTURE_ANNOTATIONS = 0x1000000  # __future__.annotations.compiler_flag


class _PostponedLoader(importlib.machinery.SourceFileLoader):
    # Compiles from source every time: the installed bytecode was compiled without the flag.
    def get_code(self, fullname):
        source = self.get_data(self.path)
        return compile(source, self.path, "exec", flags=_FUTURE_ANNOTATIONS, dont_inherit=True)


class _PostponedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != "cloudbox" and not fullname.startswith("cloudbox."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        spec.loader = _PostponedLoader(spec.loader.name, spec.loader.path)
        return spec


sys.meta_path.insert(0, _PostponedFinder())
sys.dont_write_bytecode = True  # the patched modules must not leave their bytecode behind

import uvicorn  # noqa: E402
from fastapi import Query  # noqa: E402
from starlette.routing import Route  # noqa: E402

from cloudbox.core.errors import GCPError  # noqa: E402
from cloudbox.services.secretmanager import app as sm  # noqa: E402
from cloudbox.services.secretmanager.models import (  # noqa: E402
    AccessSecretVersionResponse,
    ListSecretsResponse,
    SecretModel,
    SecretVersionState,
)

app = sm.app


def _matches(secret, terms):
    for term in terms:
        if term.startswith("labels.") and "=" in term:
            key, value = term[len("labels."):].split("=", 1)
            if secret.labels.get(key) != value:
                return False
        elif term.startswith("name:"):
            if term[len("name:"):] not in secret.name.rsplit("/", 1)[-1]:
                return False
        else:
            raise GCPError(400, f"Invalid filter: {term}")
    return True


async def list_secrets(
    project: str,
    pageSize: int = Query(default=0),
    pageToken: str = Query(default=""),
    filter: str = Query(default=""),
):
    if pageSize < 0:
        raise GCPError(400, "page_size must be non-negative")
    size = min(pageSize or 25, 25000)
    terms = filter.split()
    prefix = f"projects/{project}/secrets/"
    secrets = [SecretModel(**v) for v in sm._store().list("secrets") if v["name"].startswith(prefix)]
    secrets = sorted((s for s in secrets if _matches(s, terms)), key=lambda s: s.name)
    offset = int(pageToken) if pageToken else 0
    page = secrets[offset: offset + size]
    following = str(offset + size) if offset + size < len(secrets) else None
    return ListSecretsResponse(
        secrets=page, nextPageToken=following, totalSize=len(secrets)
    ).model_dump(exclude_none=True)


async def access_version(project: str, secret_id: str, version_id: str):
    secret_name = f"projects/{project}/secrets/{secret_id}"
    store = sm._store()
    if not store.exists("secrets", secret_name):
        raise GCPError(404, f"Secret [{secret_name}] not found or has no versions.")
    if version_id == "latest":
        numbers = [
            int(k.rsplit("/", 1)[1]) for k in store.keys("versions")
            if k.startswith(f"{secret_name}/versions/") and k.rsplit("/", 1)[1].isdigit()
        ]
        if not numbers:
            raise GCPError(404, f"Secret [{secret_name}] not found or has no versions.")
        version_id = str(max(numbers))
    key = f"{secret_name}/versions/{version_id}"
    version = store.get("versions", key)
    if version is None:
        raise GCPError(404, f"Secret Version [{key}] not found.")
    state = version.get("state")
    if state != SecretVersionState.ENABLED:
        raise GCPError(400, f"Secret Version [{key}] is in {state} state.", "FAILED_PRECONDITION")
    data = store.get("payloads", key) or ""
    return AccessSecretVersionResponse(name=key, payload={"data": data}).model_dump()


_REPLACED = {
    ("/v1/projects/{project}/secrets", "GET"),
    ("/v1/projects/{project}/secrets/{secret_id}/versions/{version_id}:access", "POST"),
}
app.router.routes[:] = [
    r for r in app.router.routes
    if not (isinstance(r, Route) and any(r.path == p and m in r.methods for p, m in _REPLACED))
]
app.add_api_route("/v1/projects/{project}/secrets", list_secrets, methods=["GET"])
app.add_api_route(
    "/v1/projects/{project}/secrets/{secret_id}/versions/{version_id}:access",
    access_version,
    methods=["POST"],
)


async def _patched(scope, receive, send):
    if scope["type"] == "http":
        if scope["method"] == "GET" and scope["path"].endswith(":access"):
            scope = dict(scope, method="POST")
        if scope["path"].endswith("/versions"):
            query = scope.get("query_string", b"").replace(b"state%3A", b"state%3D")
            scope = dict(scope, query_string=query.replace(b"state:", b"state="))
    await app(scope, receive, send)


if __name__ == "__main__":
    port = int(sys.argv[1])
    uvicorn.run(_patched, host="127.0.0.1", port=port, log_level="warning")
