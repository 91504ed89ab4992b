# The two commands of the README: `make serve` and `make test`.
SWIFT ?= swift
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: serve test checks examples deps build release bench crash

# The system libraries authd needs: libsodium, and libxcrypt for imported bcrypt hashes; installed when missing (Debian/Ubuntu).
deps:
	@dpkg -s libsodium-dev libcrypt-dev >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libsodium-dev libcrypt-dev pkg-config; }

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

serve: deps
	$(SWIFT) run authd serve --data ./data

# Swift tests (unit, HTTP and end-to-end over real sockets), then black-box checks with real
# third-party clients (joserfc verifies our tokens against the published JWKS). With PostgreSQL
# installed, a throwaway server runs for the duration, so the store suite and the two-instance
# tests cover that backend too.
test: deps
	IntegrationTests/postgres/with-cluster $(MAKE) --no-print-directory checks

checks:
	$(SWIFT) build --build-tests
	scripts/check-sdk-surface
	scripts/check-docs
	scripts/embed-common-passwords --check
	scripts/check-doc-links
	$(SWIFT) test --skip-build
	$(MAKE) --no-print-directory examples
	bench/run --quick --debug
	@$(PYTHON) -c "import pytest, joserfc, argon2, aiosmtpd, cryptography, openapi_spec_validator, schemathesis, authlib, requests_oauthlib, selenium, standardwebhooks, hypercorn, bcrypt, passlib, pyotp, cbor2, webauthn" 2>/dev/null || $(PYTHON) -m pip install -q pytest joserfc argon2-cffi aiosmtpd cryptography openapi-spec-validator schemathesis authlib requests-oauthlib selenium standardwebhooks hypercorn bcrypt passlib pyotp cbor2 webauthn
	AUTHD_BINARY=$$($(SWIFT) build --show-bin-path)/authd $(PYTHON) -m pytest -q IntegrationTests/blackbox
	AUTHD_BINARY=$$($(SWIFT) build --show-bin-path)/authd IntegrationTests/crash/run --kills 50

# The example providers are packages of their own that depend on this one by path; they share
# its build folder, so only their own code compiles. The invite example's server is run for real.
examples:
	for p in Examples/*/; do \
		$(SWIFT) build --package-path $$p --scratch-path $(CURDIR)/.build --build-tests && \
		$(SWIFT) test --package-path $$p --scratch-path $(CURDIR)/.build --skip-build || exit 1; \
	done
	Examples/InviteCodeProvider/smoke-test $(CURDIR)/.build/debug/invite-authd

# The full benchmark (release build, about five minutes): see bench/README.md.
bench: deps
	bench/run

# The long crash-consistency run (1,000 SIGKILLs, about 40 minutes on 2 cores): see docs/security.md#reliability.
crash: build
	AUTHD_BINARY=$$($(SWIFT) build --show-bin-path)/authd IntegrationTests/crash/run --kills 1000
