# The two commands of the README: `make serve` and `make test`.
SWIFT ?= swift
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Installs Debian packages; waits for another apt that holds the lock rather than failing.
APT_INSTALL = $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600
# The black-box tests' Python packages, as imported and as installed.
PY_MODULES = yaml, pytest, joserfc, argon2, aiosmtpd, cryptography, openapi_spec_validator, schemathesis, authlib, requests_oauthlib, selenium, standardwebhooks, hypercorn, bcrypt, passlib, pyotp, cbor2, webauthn, axe_selenium_python, idpyoidc, django, mozilla_django_oidc
PY_PACKAGES = pyyaml pytest joserfc argon2-cffi aiosmtpd cryptography openapi-spec-validator schemathesis authlib requests-oauthlib selenium standardwebhooks hypercorn bcrypt passlib pyotp cbor2 webauthn axe-selenium-python idpyoidc django mozilla-django-oidc
# Where test-deps can install PostgreSQL (Debian), its tests must run: a server that cannot be
# started fails `make test` instead of quietly skipping the second backend. Elsewhere they run when
# PostgreSQL is installed and are skipped when not. AUTHD_REQUIRE_POSTGRES=0 make test skips anyway.
export AUTHD_REQUIRE_POSTGRES ?= $(if $(shell command -v apt-get 2>/dev/null),1,0)

.PHONY: serve test test-deps checks examples deps build release bench crash test-failover

# The system libraries authd needs: libsodium, and libxcrypt for imported bcrypt hashes; installed when missing (Debian/Ubuntu).
deps:
	@{ dpkg -s libsodium-dev libcrypt-dev && command -v pkg-config; } >/dev/null 2>&1 || { $(APT_INSTALL) libsodium-dev libcrypt-dev pkg-config; }

# What the tests use besides Swift, installed when missing (Debian/Ubuntu): PostgreSQL (the second
# backend, on a throwaway server; a primary and its replica for the failover test), HAProxy (the failover test), wrk (bench/run), Chromium and chromedriver (the /device page in a
# browser), Apache's binary with mod_auth_openidc (apache2-bin: no service is set up or started) and
# Django with mozilla-django-oidc (real relying parties signing people in through authd),
# systemd-analyze (checks deploy/authd.service), zbar-tools (reads the TOTP page's QR code back), podman and debootstrap (build the image of
# deploy/Containerfile from a local base), docker-compose (validates deploy/compose.yaml), pip and the black-box tests' Python packages
# (Debian's own Python refuses pip installs without PIP_BREAK_SYSTEM_PACKAGES, PEP 668; others ignore
# it). Quick when all is there: it only looks.
test-deps: deps
	@missing=""; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql postgresql-client"; \
	command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing="$$missing haproxy"; \
	command -v wrk >/dev/null || missing="$$missing wrk"; \
	{ command -v chromium && command -v chromedriver; } >/dev/null || missing="$$missing chromium chromium-driver"; \
	{ [ -x /usr/sbin/apache2 ] && [ -e /usr/lib/apache2/modules/mod_auth_openidc.so ]; } || missing="$$missing apache2-bin libapache2-mod-auth-openidc"; \
	command -v systemd-analyze >/dev/null || missing="$$missing systemd"; \
	command -v openssl >/dev/null || missing="$$missing openssl"; \
	command -v zbarimg >/dev/null || missing="$$missing zbar-tools"; \
	{ command -v podman && command -v debootstrap && command -v docker-compose; } >/dev/null || missing="$$missing podman debootstrap docker-compose"; \
	$(PYTHON) -m pip --version >/dev/null 2>&1 || missing="$$missing python3-pip"; \
	[ -z "$$missing" ] || { echo "test-deps: installing$$missing"; $(APT_INSTALL) $$missing; }
	@$(PYTHON) -c "import $(PY_MODULES)" 2>/dev/null || PIP_BREAK_SYSTEM_PACKAGES=1 $(PYTHON) -m pip install -q $(PY_PACKAGES)

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

serve: deps
	$(SWIFT) run authd serve --data ./data --config dev/authd.json

# Swift tests (unit, HTTP and end-to-end over real sockets), then black-box checks with real
# third-party clients (joserfc verifies our tokens against the published JWKS). With PostgreSQL
# installed, a throwaway server runs for the duration, so the store suite and the two-instance
# tests cover that backend too. Everything it needs is installed first (test-deps).
test: test-deps
	IntegrationTests/postgres/with-cluster $(MAKE) --no-print-directory checks

checks:
	$(SWIFT) build --build-tests
	scripts/check-sdk-surface
	scripts/check-docs
	scripts/embed-common-passwords --check
	scripts/check-doc-links
	# In parallel: every wait for a pooled connection is bounded (a pool that cannot serve ends in a
	# 503 naming itself in the log, not a run that never ends).
	$(SWIFT) test --skip-build --parallel
	$(MAKE) --no-print-directory examples
	bench/run --quick --debug
	AUTHD_BINARY=$$($(SWIFT) build --show-bin-path)/authd $(PYTHON) -m pytest -q IntegrationTests/blackbox
	AUTHD_BINARY=$$($(SWIFT) build --show-bin-path)/authd IntegrationTests/crash/run --kills 50
	# Not `test-failover` for now: it fails about one run in six (an instance stopped after the
	# promotion can hang in its shutdown until the cancellation deadline ends it with a crash, and one
	# run in forty found an acknowledged refresh missing). Both are open defects of issue #48, and a
	# gate that fails at random would hide everything else; run it by hand until they are fixed.

# Contract §19: a PostgreSQL primary with a synchronous replica, three instances and HAProxy, all
# started by the test; one instance killed, the primary stopped and the replica promoted.
test-failover:
	AUTHD_BINARY=$$($(SWIFT) build --show-bin-path)/authd $(PYTHON) -m pytest -q -s IntegrationTests/failover

# The example providers are packages of their own that depend on this one by path; they share
# its build folder, so only their own code compiles. The invite example's server (a package of its
# own, as a deployment is) is built and run for real.
examples:
	for p in Examples/*/; do \
		$(SWIFT) build --package-path $$p --scratch-path $(CURDIR)/.build --build-tests && \
		$(SWIFT) test --package-path $$p --scratch-path $(CURDIR)/.build --skip-build || exit 1; \
	done
	$(SWIFT) build --package-path Examples/InviteCodeProvider/Server --scratch-path $(CURDIR)/.build
	Examples/InviteCodeProvider/smoke-test $(CURDIR)/.build/debug/invite-authd

# The full benchmark (release build, about five minutes): see bench/README.md.
bench: deps
	bench/run

# The long crash-consistency run (1,000 SIGKILLs, about 40 minutes on 2 cores): see docs/security.md#reliability.
crash: build
	AUTHD_BINARY=$$($(SWIFT) build --show-bin-path)/authd IntegrationTests/crash/run --kills 1000
