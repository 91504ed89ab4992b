"""docs/openapi.yaml is a valid OpenAPI 3.1 document, and the server serves exactly it."""
import os
import urllib.request

from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

SPEC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "openapi.yaml")


def test_the_spec_is_valid_openapi_3_1():
    document, _ = read_from_filename(SPEC)
    validate(document)
    assert document["openapi"].startswith("3.1")


def test_the_server_serves_the_spec(server):
    with urllib.request.urlopen(server.url + "/openapi.yaml", timeout=10) as resp:
        assert resp.status == 200
        assert "yaml" in resp.headers["Content-Type"]
        served = resp.read().decode()
    with open(SPEC) as f:
        assert served + "\n" == f.read()
