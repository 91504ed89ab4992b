"""schemathesis hooks for test_schemathesis.py (loaded through SCHEMATHESIS_HOOKS).

`positive_data_acceptance` expects every request its schema allows to be accepted. authd's
schemas say everything a schema can (patterns for emails, PINs, user names and labels, lengths,
"user_id or username"), so the built-in check runs unchanged except for the refusals no schema
can express:

- WEAK_PASSWORD: whether a password is too common or too like the email;
- INVALID_REQUEST naming `current_pin` or `current_password`: required only once the account has
  a PIN or a password, which depends on what earlier requests did;
- INVALID_REQUEST naming `credential`: a passkey's registration that is well formed but does not
  verify (its signature, challenge and origin are beyond what a schema can say);
- the /oauth endpoints' answers about a device code or refresh token that does not exist or is in
  another state (RFC 8628 §3.5: invalid_grant, authorization_pending, slow_down, expired_token,
  access_denied): a schema can say what a code looks like, not whether it was issued.
"""
import json
import os

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData
from schemathesis.specs.openapi.checks import positive_data_acceptance

STATE_DEPENDENT_FIELDS = {"current_pin", "current_password", "credential"}


OAUTH_STATE_ERRORS = {"invalid_grant", "authorization_pending", "slow_down", "expired_token", "access_denied"}


def error_code(response):
    """The contract's `error.code`, or an OAuth error's `error`."""
    try:
        error = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        return None
    return error if isinstance(error, str) else error.get("code")


def domain_refusal(response):
    try:
        error = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    if isinstance(error, str):
        return error in OAUTH_STATE_ERRORS
    if error.get("code") == "WEAK_PASSWORD":
        return True
    return error.get("code") == "INVALID_REQUEST" and (error.get("details") or {}).get("field") in STATE_DEPENDENT_FIELDS


def mark(what):
    """Appends a line to $AUTHD_SCHEMATHESIS_MARK, so the test can tell the check ran and let things through."""
    path = os.environ.get("AUTHD_SCHEMATHESIS_MARK")
    if path:
        with open(path, "a") as f:
            f.write(what + "\n")


@schemathesis.check
def positive_data_acceptance_but_domain_rules(ctx, response, case):
    mark("checked")
    try:
        return positive_data_acceptance(ctx, response, case)
    except RejectedPositiveData:
        if domain_refusal(response):
            mark("allowed " + error_code(response))
            return None
        raise
