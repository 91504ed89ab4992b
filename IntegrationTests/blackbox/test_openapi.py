"""docs/openapi.yaml is a valid OpenAPI 3.1 document; a server serves the document of the providers
it runs (exactly docs/openapi.yaml when it runs them all, valid OpenAPI without the others)."""
import os
import urllib.request

import yaml

from conftest import running_server

from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

SPEC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "openapi.yaml")


def test_the_spec_is_valid_openapi_3_1():
    document, _ = read_from_filename(SPEC)
    validate(document)
    assert document["openapi"].startswith("3.1")


def served(server):
    with urllib.request.urlopen(server.url + "/openapi.yaml", timeout=10) as resp:
        assert resp.status == 200
        assert "yaml" in resp.headers["Content-Type"]
        return resp.read().decode()


def test_a_server_with_every_provider_serves_the_spec():
    config = {"providers": ["email", "pin", "password", "apple", "anonymous", "totp", "passkey", "approval", "oidc"],
              "apple": {"audiences": ["com.example.app"], "jwks_url": "http://127.0.0.1:1/keys"},
              "passkeys": {"rp_id": "example.org", "apple_app_ids": ["ABCDE12345.org.example.app"]}}
    with running_server(config) as server:
        with open(SPEC) as f:
            assert served(server) == f.read()


def test_a_server_serves_only_the_operations_of_its_providers(server):
    document = yaml.safe_load(served(server))
    validate(document)
    paths = document["paths"]
    assert "/api/v1/auth/email/verify" in paths and "/api/v1/auth/pin/verify" in paths and "/api/v1/auth/anonymous" in paths
    assert "/api/v1/auth/apple" not in paths
    assert "InvalidAppleToken" not in document["components"]["responses"]
    with running_server({"providers": ["password"]}) as only_password:
        document = yaml.safe_load(served(only_password))
        validate(document)
        assert sorted({tag for operation in document["paths"].values() for o in operation.values() for tag in o["tags"]}) == [
            "account", "admin", "api-keys", "approvals", "device", "meta", "openid", "password", "second-factor", "sessions"]
