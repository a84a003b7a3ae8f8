"""Run inside the deployment package, on its own virtual environment (tests/toolchain/test_package.py):
`python -I tests/package_smoke.py PACKAGE_DIR DATA_DIR STORES_BODY_FILE`.

As the Python worker does, it puts the package's root on sys.path, imports function_app and lists its
functions; then it calls the user code of GET /health and of one write (PUT /stores) with
func.HttpRequest objects, on the SQLite backend in DATA_DIR, with a partner, a store and a key made by
the package's own code. It prints one JSON object: what the app indexed, what it answered, and every
module it loaded from outside the package, its virtual environment and the standard library.

It imports nothing of the tests: -I keeps its own folder off sys.path.
"""

import json
import os
import sys
import sysconfig
import uuid
from pathlib import Path

package, data_dir, stores_body = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
os.environ.update(
    POS_BACKEND="sqlite", POS_DATA_DIR=str(data_dir), POS_CREATE_DEMO_PARTNER="false", RATE_LIMIT_PER_MINUTE="0"
)
os.environ.pop("APPLICATIONINSIGHTS_CONNECTION_STRING", None)
os.chdir(package)  # the worker's working directory is the app's root (/home/site/wwwroot)
sys.path.insert(0, str(package))

import azure.functions as func  # noqa: E402

import function_app  # noqa: E402

functions = {function.get_function_name(): function for function in function_app.app.get_functions()}


class Context(func.Context):
    def __init__(self, name: str) -> None:
        self._name, self._id = name, str(uuid.uuid4())

    invocation_id = property(lambda self: self._id)
    function_name = property(lambda self: self._name)
    function_directory = property(lambda self: str(package))
    trace_context = retry_context = thread_local_storage = property(lambda self: None)


def call(name: str, method: str, path: str, body: bytes = b"", headers: dict | None = None) -> dict:
    request = func.HttpRequest(method, f"http://localhost/pos/v1/{path}", headers=headers or {}, body=body)
    response = functions[name].get_user_function()(request, Context(name))
    return {"status": response.status_code, "body": json.loads(response.get_body() or b"null")}


# HQ's set-up, through the package's own code (hq/ is not deployed): a partner, its store, a key.
from core.clock import utc_now  # noqa: E402
from ingest.access import new_key  # noqa: E402
from triggers.composition import current_backend  # noqa: E402

body = json.loads(stores_body.read_text(encoding="utf-8"))
storage = current_backend().storage
partner_id = "partner-" + uuid.uuid4().hex[:8]
storage.add_partner(partner_id, "Партнёр 株式会社", utc_now())
storage.register_stores(partner_id, [store["store_id"] for store in body["stores"]], utc_now())
key = new_key()
storage.add_key(partner_id, key.key_id, key.key_hash, utc_now())

answers = {
    "health": call("health", "GET", "health"),
    "put_stores": call(
        "put_stores",
        "PUT",
        "stores",
        json.dumps(body).encode("utf-8"),
        {"x-functions-key": key.secret, "content-type": "application/json"},
    ),
    "unauthorized": call(
        "put_stores", "PUT", "stores", json.dumps(body).encode("utf-8"), {"content-type": "application/json"}
    ),
}
stored = storage.get_store(partner_id, body["stores"][0]["store_id"])

# Bearer tokens on the package's own PyJWT and cryptography: a JWKS read and a token checked by the app's code.
import time  # noqa: E402

import jwt  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402

from backends.openid_keys import signing_keys_of  # noqa: E402
from ingest.bearer_tokens import BearerTokens  # noqa: E402

signer = rsa.generate_private_key(public_exponent=65537, key_size=2048)
jwk = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(signer.public_key())), "kid": "k1", "use": "sig"}
published = signing_keys_of({"keys": [jwk]})


class PublishedKeys:
    def signing_key(self, issuer: str, key_id: str | None):
        return published.get(key_id)


issuer = "https://login.microsoftonline.com/0c1d2e3f-4a5b-4c6d-8e7f-90a1b2c3d4e5/v2.0"
claims = {"iss": issuer, "aud": "api://pos", "exp": int(time.time()) + 600, "azp": "client-1"}
token = jwt.encode(claims, signer, algorithm="RS256", headers={"kid": "k1"})
bearer_client = BearerTokens([issuer], ["api://pos"], PublishedKeys()).client_of(token).client_id

stdlib = sysconfig.get_paths()
allowed = [str(Path(root).resolve()) + os.sep for root in (package, sys.prefix, stdlib["stdlib"], stdlib["platstdlib"])]
foreign = sorted(
    name
    for name, module in list(sys.modules.items())
    if name != "__main__"
    and getattr(module, "__file__", None)  # __main__: this script
    and not any(str(Path(module.__file__).resolve()).startswith(root) for root in allowed)
)
print(
    json.dumps(
        {
            "functions": {name: json.loads(function.get_function_json()) for name, function in functions.items()},
            "answers": answers,
            "stored_store_name": stored.document.get("store_name") if stored else None,
            "bearer_client": bearer_client,
            "foreign_modules": foreign,
            "top_level_modules": sorted({name.split(".")[0] for name in sys.modules}),
            "prefix": sys.prefix,
        },
        ensure_ascii=False,
        default=str,
    )
)
