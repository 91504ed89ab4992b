/// The kernel's part of `GET /openapi.yaml`: the document's header, the kernel's operations, and
/// the components providers' fragments reference. Each running provider's ``OpenAPIFragment``s
/// are appended to it (see ``OpenAPIDocument``); `authd openapi` prints the result, and
/// docs/openapi.yaml is that for the built-in providers.
package enum KernelOpenAPI {
    /// The YAML text.
    package static let yaml = #"""
openapi: 3.1.0
info:
  title: authd
  version: 0.1.0
  description: |
    The HTTP API of authd, a self-hosted authentication server (see ../shared/contract.md, which is binding).
    This document lists the kernel's operations and those of the providers this server runs.
    Bodies are JSON with snake_case fields (each top-level field also in camelCase: deviceName); unknown request fields are ignored. Every error is
    {"error": {"code", "message", "details"?}}; 429 answers carry details.retry_after and a Retry-After header.
    Protected operations take `Authorization: Bearer <access_token>`; on sign-in operations a Bearer token
    is optional and links the new identity to the caller. On every /api/v1/auth operation a Bearer header,
    when sent, must be valid: otherwise 401 UNAUTHORIZED. Bodies go as application/json (or without a
    Content-Type); other types get 415. A known path asked with another method gets 405 with Allow.
    An optional request field may be null, which means the same as leaving it out.
    A sign-in answers 202 second_factor_required instead of a session when a sign-in policy asks for a
    second factor; POST /api/v1/auth/mfa/verify completes it.
    GET /device is the web page where a person approves a device sign-in (HTML, not described here).
    A session made by an API key or the device flow (amr api_key or device) is limited: on every Bearer
    endpoint but GET and PATCH /api/v1/auth/me, GET /api/v1/auth/sessions, logout and refresh it gets 403 FORBIDDEN.
servers:
  - url: http://127.0.0.1:8080
security: []
tags:
  - { name: meta, description: "Health, this document, the token keys and the providers" }
  - { name: sessions, description: "Refresh, sign out and the user's sessions" }
  - { name: account, description: "The signed-in user" }
  - { name: approvals, description: "Requests waiting for another device's approval" }
  - { name: second-factor, description: "Completing a sign-in that needs a second factor" }
  - { name: api-keys, description: "Long-lived keys for devices, exchanged for short-lived access tokens" }
  - { name: device, description: "Device sign-in (RFC 8628): a box shows a code, a signed-in person approves it" }
  - { name: admin, description: "The app's backend, with a service key: users, their app_metadata and sessions" }
paths:
  /health:
    get:
      operationId: getHealth
      tags: [meta]
      summary: Liveness
      responses:
        "200": { description: Up, content: { application/json: { schema: { type: object, required: [status], properties: { status: { const: ok } } }, example: { status: ok } } } }
  /openapi.yaml:
    get:
      operationId: getOpenAPIDocument
      tags: [meta]
      summary: This document
      responses:
        "200": { description: The OpenAPI document, content: { application/yaml: { schema: { type: string } } } }
  /.well-known/jwks.json:
    get:
      operationId: getJWKS
      tags: [meta]
      summary: Public keys that verify access tokens
      responses:
        "200":
          description: JWKS
          content:
            application/json:
              schema: { $ref: "#/components/schemas/JWKS" }
              example: { keys: [{ kty: OKP, crv: Ed25519, x: 11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo, kid: kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k, alg: EdDSA, use: sig }] }
  /api/v1/auth/providers:
    get:
      operationId: listProviders
      tags: [meta]
      summary: Registered providers
      responses:
        "401": { $ref: "#/components/responses/Unauthorized" }
        "200": { description: Providers, content: { application/json: { schema: { type: object, required: [providers], properties: { providers: { type: array, items: { type: string } } } }, example: { providers: [email, pin, password] } } } }
  /api/v1/auth/refresh:
    post:
      operationId: refreshSession
      tags: [sessions]
      summary: Exchange a refresh token for a new pair (rotation)
      requestBody: { $ref: "#/components/requestBodies/Refresh" }
      responses:
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/Session" }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/RefreshRefused" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/logout:
    post:
      operationId: logout
      tags: [sessions]
      summary: "End this session: with its Bearer, whatever the body holds; or without one by {\"refresh_token\"} (204 for an unknown token too; 400 without it)"
      security: [{ bearer: [] }, {}]
      requestBody:
        required: false
        description: "Without a Bearer: {\"refresh_token\": string}. With one, the body is not read (contract §12), so any body is accepted."
        content: { application/json: { schema: {} } }
      responses:
        "204": { description: Ended }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/me:
    get:
      operationId: getMe
      tags: [account]
      summary: The signed-in user
      security: [{ bearer: [] }]
      responses:
        "200": { $ref: "#/components/responses/User" }
        "401": { $ref: "#/components/responses/Unauthorized" }
    patch:
      operationId: updateMe
      tags: [account]
      summary: Change the display name (null or blank clears it) and/or replace user_metadata (null clears it)
      security: [{ bearer: [] }]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              anyOf: [{ required: [display_name] }, { required: [user_metadata] }]
              not: { required: [app_metadata] }
              properties:
                display_name: { $ref: "#/components/schemas/Label" }
                user_metadata: { type: [object, "null"], description: "At most 4096 bytes of compact JSON; replaces the stored object" }
            example: { display_name: Anna, user_metadata: { theme: dark } }
      responses:
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/User" }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/account:
    delete:
      operationId: deleteAccount
      tags: [account]
      summary: Delete the account with its identities, sessions and codes (a fresh session, unless anonymous with nothing linked)
      security: [{ bearer: [] }]
      responses:
        "204": { description: Deleted }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/ForbiddenOrReauth" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/sessions:
    get:
      operationId: listSessions
      tags: [sessions]
      summary: The user's sessions
      security: [{ bearer: [] }]
      responses:
        "200":
          description: Sessions
          content:
            application/json:
              schema: { type: object, required: [sessions], properties: { sessions: { type: array, items: { $ref: "#/components/schemas/SessionInfo" } } } }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /api/v1/auth/sessions/{id}:
    delete:
      operationId: deleteSession
      tags: [sessions]
      summary: End one of the user's sessions (an API key's needs a fresh session)
      security: [{ bearer: [] }]
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses:
        "204": { description: Ended }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/ForbiddenOrReauth" }
        "404": { $ref: "#/components/responses/NotFound" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/sessions/current/push:
    put:
      operationId: registerPushToken
      tags: [sessions]
      summary: "This session's APNs device token: approval requests for the user push an alert to it (full sessions only)"
      security: [{ bearer: [] }]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [apns_token]
              properties:
                apns_token: { type: string, pattern: "^[0-9a-fA-F]{16,200}$", description: "The device token in hex" }
                environment: { enum: [production, sandbox, null], description: "Default production" }
                topic: { type: [string, "null"], maxLength: 200, description: "One of push.apns.topics (400 otherwise, when push is configured); default the first" }
            example: { apns_token: 8a1c1f0e5a0c4d2b9e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d, environment: production }
      responses:
        "204": { description: Registered }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/Forbidden" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "503": { $ref: "#/components/responses/Unavailable" }
    delete:
      operationId: removePushToken
      tags: [sessions]
      summary: Stop pushing to this session
      security: [{ bearer: [] }]
      responses:
        "204": { description: Removed }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/Forbidden" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/api-keys:
    post:
      operationId: createAPIKey
      tags: [api-keys]
      summary: Make an API key (needs a fresh, full session); the secret is shown only here
      security: [{ bearer: [] }]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: { allOf: [{ $ref: "#/components/schemas/Label" }], type: string, pattern: "[^\\t-\\r \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000]" }
                expires_in: { type: [integer, "null"], minimum: 60, maximum: 315360000, description: "Seconds; none: until revoked" }
            example: { name: Living-room frame, expires_in: 31536000 }
      responses:
        "201":
          description: "The key: keep `api_key` now, it is never shown again"
          headers: { Cache-Control: { schema: { const: no-store } } }
          content: { application/json: { schema: { $ref: "#/components/schemas/CreatedAPIKey" } } }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/ReauthRequired" }
        "409": { $ref: "#/components/responses/InvalidState" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "503": { $ref: "#/components/responses/Unavailable" }
    get:
      operationId: listAPIKeys
      tags: [api-keys]
      summary: The user's API keys (never their secrets)
      security: [{ bearer: [] }]
      responses:
        "200":
          description: Keys, oldest first
          content: { application/json: { schema: { type: object, required: [api_keys], properties: { api_keys: { type: array, items: { $ref: "#/components/schemas/APIKey" } } } } } }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/Forbidden" }
  /api/v1/auth/api-keys/{id}:
    delete:
      operationId: revokeAPIKey
      tags: [api-keys]
      summary: Revoke one of the user's API keys (a fresh session)
      security: [{ bearer: [] }]
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses:
        "204": { description: Revoked }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/ForbiddenOrReauth" }
        "404": { $ref: "#/components/responses/NotFound" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/api-keys/exchange:
    post:
      operationId: exchangeAPIKey
      tags: [api-keys]
      summary: An access token for an API key (amr api_key, api_keys.access_ttl long)
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, required: [api_key], properties: { api_key: { type: string } } } } }
      responses:
        "200":
          description: A short-lived access token; no refresh token
          headers: { Cache-Control: { schema: { const: no-store } } }
          content:
            application/json:
              schema: { type: object, required: [access_token, token_type, expires_in], properties: { access_token: { type: string }, token_type: { const: Bearer }, expires_in: { type: integer } } }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/InvalidAPIKey" }
        "403": { $ref: "#/components/responses/AccountDisabled" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/device/{user_code}:
    get:
      operationId: getDeviceRequest
      tags: [device]
      summary: The device sign-in waiting for this user code (a full session only)
      security: [{ bearer: [] }]
      parameters: [{ $ref: "#/components/parameters/UserCode" }]
      responses:
        "200":
          description: The request, with the labels the device reported
          content:
            application/json:
              schema:
                type: object
                required: [user_code, client_id, device_name, platform, created_at, expires_at]
                properties:
                  user_code: { type: string, pattern: "^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$" }
                  client_id: { type: [string, "null"] }
                  device_name: { type: [string, "null"] }
                  platform: { type: [string, "null"] }
                  created_at: { type: string, format: date-time }
                  expires_at: { type: string, format: date-time }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/Forbidden" }
        "404": { $ref: "#/components/responses/NotFound" }
        "429": { $ref: "#/components/responses/RateLimited" }
  /api/v1/auth/device/{user_code}/approve:
    post:
      operationId: approveDevice
      tags: [device]
      summary: Approve a device sign-in; its next poll gets a session of this user (amr device). A session that is not fresh sends its refresh token as proof.
      security: [{ bearer: [] }]
      parameters: [{ $ref: "#/components/parameters/UserCode" }]
      requestBody:
        required: false
        content: { application/json: { schema: { $ref: "#/components/schemas/ApprovalProof" } } }
      responses:
        "204": { description: Approved }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/ApprovalUnauthorized" }
        "403": { $ref: "#/components/responses/ForbiddenOrReauth" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409": { $ref: "#/components/responses/InvalidState" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/device/{user_code}/deny:
    post:
      operationId: denyDevice
      tags: [device]
      summary: Deny a device sign-in
      security: [{ bearer: [] }]
      parameters: [{ $ref: "#/components/parameters/UserCode" }]
      responses:
        "204": { description: Denied }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/Forbidden" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409": { $ref: "#/components/responses/InvalidState" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /oauth/device_authorization:
    post:
      operationId: startDeviceAuthorization
      tags: [device]
      summary: Start a device sign-in (RFC 8628 §3.1); OAuth's wire format, every answer no-store
      requestBody:
        required: false
        content:
          application/x-www-form-urlencoded: { schema: { $ref: "#/components/schemas/DeviceAuthorizationRequest" } }
          application/json: { schema: { $ref: "#/components/schemas/DeviceAuthorizationRequest" } }
      responses:
        "200":
          description: The codes to show and poll with
          content:
            application/json:
              schema:
                type: object
                required: [device_code, user_code, verification_uri, verification_uri_complete, expires_in, interval]
                properties:
                  device_code: { type: string }
                  user_code: { type: string, example: BDFG-HJKL }
                  verification_uri: { type: string }
                  verification_uri_complete: { type: string }
                  expires_in: { type: integer }
                  interval: { type: integer }
        "400": { $ref: "#/components/responses/OAuthError" }
        "413": { $ref: "#/components/responses/OAuthError" }
        "415": { $ref: "#/components/responses/OAuthError" }
        "429": { $ref: "#/components/responses/OAuthError" }
        "503": { $ref: "#/components/responses/OAuthError" }
  /oauth/introspect:
    post:
      operationId: introspectToken
      tags: [device]
      summary: "RFC 7662: whether an access token or an API key is still active (for your backend, with a service key)"
      security: [{ serviceKey: [] }]
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded: { schema: { $ref: "#/components/schemas/IntrospectionRequest" } }
          application/json: { schema: { $ref: "#/components/schemas/IntrospectionRequest" } }
      responses:
        "200":
          description: "{\"active\": false} once its session or key has ended; otherwise who and what it is"
          content:
            application/json:
              schema:
                type: object
                required: [active]
                properties:
                  active: { type: boolean }
                  sub: { type: string }
                  sid: { type: string }
                  amr: { type: array, items: { type: string } }
                  exp: { type: integer }
                  iat: { type: integer }
                  token_type: { enum: [Bearer, api_key] }
        "400": { $ref: "#/components/responses/OAuthError" }
        "401": { $ref: "#/components/responses/OAuthError" }
        "413": { $ref: "#/components/responses/OAuthError" }
        "415": { $ref: "#/components/responses/OAuthError" }
        "503": { $ref: "#/components/responses/OAuthError" }
  /oauth/token:
    post:
      operationId: requestToken
      tags: [device]
      summary: "Poll for the device's session (device_code grant), or refresh (refresh_token grant)"
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded: { schema: { $ref: "#/components/schemas/TokenRequest" } }
          application/json: { schema: { $ref: "#/components/schemas/TokenRequest" } }
      responses:
        "200":
          description: "The session response (RFC 6749 §5.1 fields plus user)"
          content: { application/json: { schema: { $ref: "#/components/schemas/Session" } } }
        "400": { $ref: "#/components/responses/OAuthError" }
        "413": { $ref: "#/components/responses/OAuthError" }
        "415": { $ref: "#/components/responses/OAuthError" }
        "429": { $ref: "#/components/responses/OAuthError" }
        "503": { $ref: "#/components/responses/OAuthError" }
  /api/v1/admin/users:
    get:
      operationId: adminListUsers
      tags: [admin]
      summary: Users in id order whose email or user name contains `query`, a page at a time
      security: [{ serviceKey: [] }]
      parameters:
        - { name: query, in: query, schema: { type: string, maxLength: 256 }, description: "Case-insensitive substring of the email or user name" }
        - { name: limit, in: query, schema: { type: integer, minimum: 1, maximum: 200, default: 50 } }
        - { name: cursor, in: query, schema: { type: string }, description: "next_cursor of the previous page" }
      responses:
        "200":
          description: One page
          content:
            application/json:
              schema:
                type: object
                required: [users, next_cursor]
                properties:
                  users: { type: array, items: { $ref: "#/components/schemas/AdminUser" } }
                  next_cursor: { type: [string, "null"] }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /api/v1/admin/users/{id}:
    get:
      operationId: adminGetUser
      tags: [admin]
      summary: One user
      security: [{ serviceKey: [] }]
      parameters: [{ $ref: "#/components/parameters/UserID" }]
      responses:
        "200": { $ref: "#/components/responses/AdminUser" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
    patch:
      operationId: adminUpdateUser
      tags: [admin]
      summary: "Set app_metadata (replaced whole; at most 1024 bytes), display_name or disabled (disabling ends every session and API key)"
      security: [{ serviceKey: [] }]
      parameters: [{ $ref: "#/components/parameters/UserID" }]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              anyOf: [{ required: [app_metadata] }, { required: [display_name] }, { required: [disabled] }]
              properties:
                app_metadata: { type: [object, "null"] }
                display_name: { $ref: "#/components/schemas/Label" }
                disabled: { type: boolean }
            example: { app_metadata: { couple_id: c-42 } }
      responses:
        "200": { $ref: "#/components/responses/AdminUser" }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "503": { $ref: "#/components/responses/Unavailable" }
    delete:
      operationId: adminDeleteUser
      tags: [admin]
      summary: Delete the user with its identities, sessions and codes
      security: [{ serviceKey: [] }]
      parameters: [{ $ref: "#/components/parameters/UserID" }]
      responses:
        "204": { description: Deleted }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/admin/users/{id}/sessions:
    get:
      operationId: adminListSessions
      tags: [admin]
      summary: The user's sessions and API keys
      security: [{ serviceKey: [] }]
      parameters: [{ $ref: "#/components/parameters/UserID" }]
      responses:
        "200":
          description: Sessions
          content:
            application/json:
              schema:
                type: object
                required: [sessions]
                properties:
                  sessions:
                    type: array
                    items:
                      type: object
                      required: [id, kind, device_name, platform, amr, key_prefix, created_at, last_used_at, expires_at]
                      properties:
                        id: { type: string, format: uuid }
                        kind: { enum: [session, api_key] }
                        device_name: { type: [string, "null"] }
                        platform: { type: [string, "null"] }
                        amr: { type: array, items: { type: string } }
                        key_prefix: { type: [string, "null"] }
                        created_at: { type: string, format: date-time }
                        last_used_at: { type: string, format: date-time }
                        expires_at: { type: [string, "null"], format: date-time }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
    delete:
      operationId: adminEndSessions
      tags: [admin]
      summary: End every session and API key of the user
      security: [{ serviceKey: [] }]
      parameters: [{ $ref: "#/components/parameters/UserID" }]
      responses:
        "204": { description: Ended }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/approvals:
    get:
      operationId: listApprovals
      tags: [approvals]
      summary: Requests waiting for this user's approval
      security: [{ bearer: [] }]
      responses:
        "200":
          description: Pending approvals (never the match code)
          content: { application/json: { schema: { type: object, required: [approvals], properties: { approvals: { type: array, items: { $ref: "#/components/schemas/Approval" } } } } } }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/Forbidden" }
  /api/v1/auth/approvals/stream:
    get:
      operationId: streamApprovals
      tags: [approvals]
      summary: Server-Sent Events, one `approval` event per new request, keep-alive comments
      security: [{ bearer: [] }]
      responses:
        "200": { description: An event stream, content: { text/event-stream: { schema: { type: string } } } }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/Forbidden" }
  /api/v1/auth/approvals/{id}/approve:
    post:
      operationId: approveRequest
      tags: [approvals]
      summary: Approve with the match code the requesting device shows (three wrong codes deny). A session that is not fresh sends its refresh token as proof.
      security: [{ bearer: [] }]
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, required: [match_code], properties: { match_code: { type: string }, refresh_token: { type: string, maxLength: 256 } } }, example: { match_code: "123" } } }
      responses:
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "204": { description: Approved }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/ApprovalUnauthorized" }
        "403": { $ref: "#/components/responses/ForbiddenOrReauth" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409": { $ref: "#/components/responses/InvalidState" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/approvals/{id}/deny:
    post:
      operationId: denyRequest
      tags: [approvals]
      summary: Deny a request
      security: [{ bearer: [] }]
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses:
        "204": { description: Denied }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/Forbidden" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409": { $ref: "#/components/responses/InvalidState" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/mfa/verify:
    post:
      operationId: verifySecondFactor
      tags: [second-factor]
      summary: Complete a sign-in that answered 202 second_factor_required, with the answer of one of the offered factors
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [challenge]
              properties:
                challenge: { type: string }
                totp: { type: [string, "null"] }
                recovery_code: { type: [string, "null"] }
                email_code: { type: [string, "null"] }
                credential: { type: [object, "null"] }
            example: { challenge: 3q2-7wEAAAA, totp: "123456" }
      responses:
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/Session" }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/InvalidChallenge" }
        "403": { $ref: "#/components/responses/AccountDisabled" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/mfa:
    get:
      operationId: listSecondFactors
      tags: [second-factor]
      summary: The second factors the user has set up (TOTP, passkeys) and how many recovery codes are left
      security: [{ bearer: [] }]
      responses:
        "200":
          description: The factors
          content:
            application/json:
              schema:
                type: object
                required: [factors, recovery_codes_left]
                properties:
                  factors: { type: array, items: { type: object, required: [type, created_at], properties: { type: { type: string }, created_at: { type: string, format: date-time } } } }
                  recovery_codes_left: { type: integer, minimum: 0 }
              example: { factors: [{ type: totp, created_at: "2026-01-01T10:00:00Z" }], recovery_codes_left: 9 }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/Forbidden" }
        "503": { $ref: "#/components/responses/Unavailable" }
components:
  securitySchemes:
    bearer: { type: http, scheme: bearer, bearerFormat: JWT }
    serviceKey: { type: http, scheme: bearer, description: "A service key (authd_sk_…) made with `authd service-keys create`" }
  schemas:
    ApprovalProof:
      type: object
      description: "The approving session's own refresh token (its current one, or its predecessor within tokens.refresh_reuse_grace): needed when the session is not fresh"
      properties: { refresh_token: { type: string, maxLength: 256 } }
    Error:
      type: object
      required: [error]
      properties:
        error:
          type: object
          required: [code, message]
          properties:
            code: { type: string, pattern: "^[A-Z_]+$" }
            message: { type: string }
            details: { type: object }
    User:
      type: object
      required: [id, email, email_verified, display_name, username, is_anonymous, auth_providers, created_at, updated_at, user_metadata, app_metadata]
      properties:
        id: { type: string, format: uuid }
        email: { type: [string, "null"] }
        email_verified: { type: boolean }
        display_name: { type: [string, "null"] }
        username: { type: [string, "null"] }
        is_anonymous: { type: boolean }
        auth_providers: { type: array, items: { type: string } }
        created_at: { type: string, format: date-time }
        updated_at: { type: string, format: date-time }
        user_metadata: { type: object, description: "The user's own object (PATCH /me), {} when none" }
        app_metadata: { type: object, description: "Set by the app's backend (admin API); also the access token's app_metadata claim" }
    AdminUser:
      allOf:
        - { $ref: "#/components/schemas/User" }
        - type: object
          required: [disabled, disabled_at]
          properties:
            disabled: { type: boolean }
            disabled_at: { type: [string, "null"], format: date-time }
    Session:
      type: object
      required: [access_token, refresh_token, token_type, expires_in, user]
      properties:
        access_token: { type: string }
        refresh_token: { type: string }
        token_type: { const: Bearer }
        expires_in: { type: integer }
        user: { $ref: "#/components/schemas/User" }
    SecondFactorRequired:
      type: object
      required: [status, challenge, factors, expires_in]
      properties:
        status: { const: second_factor_required }
        challenge: { type: string }
        factors: { type: array, items: { type: string } }
        expires_in: { type: integer }
    SessionInfo:
      type: object
      required: [id, device_name, platform, created_at, last_used_at, current, kind]
      properties:
        id: { type: string }
        device_name: { type: [string, "null"], description: "For an API key, its name" }
        platform: { type: [string, "null"] }
        created_at: { type: string, format: date-time }
        last_used_at: { type: string, format: date-time }
        current: { type: boolean }
        kind: { enum: [session, api_key] }
    DeviceAuthorizationRequest:
      type: object
      properties:
        client_id: { type: string, pattern: "^[!-~]{0,128}$", description: "Empty is omitted (RFC 6749 §3.1)" }
        device_name: { $ref: "#/components/schemas/Label" }
        platform: { $ref: "#/components/schemas/Label" }
    IntrospectionRequest:
      type: object
      required: [token]
      properties:
        token: { type: string, minLength: 1 }
        token_type_hint: { type: string }
    TokenRequest:
      oneOf:
        - type: object
          required: [grant_type, device_code]
          properties:
            grant_type: { const: "urn:ietf:params:oauth:grant-type:device_code" }
            device_code: { type: string, minLength: 1 }
            client_id: { type: string, pattern: "^[!-~]{0,128}$", description: "Empty is omitted (RFC 6749 §3.1)" }
        - type: object
          required: [grant_type, refresh_token]
          properties:
            grant_type: { const: refresh_token }
            refresh_token: { type: string, minLength: 1 }
    OAuthError:
      type: object
      required: [error, error_description]
      properties:
        error: { type: string, description: "RFC 6749 §5.2 / RFC 8628 §3.5: invalid_request, invalid_grant, unsupported_grant_type, authorization_pending, slow_down (also on 429), access_denied, expired_token, temporarily_unavailable, server_error" }
        error_description: { type: string }
    APIKey:
      type: object
      required: [id, name, prefix, created_at, last_used_at, expires_at]
      properties:
        id: { type: string }
        name: { type: string }
        prefix: { type: string, description: "The first 8 characters after authd_ak_" }
        created_at: { type: string, format: date-time }
        last_used_at: { type: [string, "null"], format: date-time }
        expires_at: { type: [string, "null"], format: date-time }
    CreatedAPIKey:
      type: object
      required: [id, name, api_key, prefix, created_at, expires_at]
      properties:
        id: { type: string }
        name: { type: string }
        api_key: { type: string, pattern: "^authd_ak_[A-Za-z0-9_-]{43,}$" }
        prefix: { type: string }
        created_at: { type: string, format: date-time }
        expires_at: { type: [string, "null"], format: date-time }
    Approval:
      type: object
      required: [id, kind, created_at, expires_at, device_name]
      properties:
        id: { type: string }
        kind: { type: string }
        created_at: { type: string, format: date-time }
        expires_at: { type: string, format: date-time }
        device_name: { type: [string, "null"] }
    JWKS:
      type: object
      required: [keys]
      properties:
        keys:
          type: array
          items: { type: object, required: [kty, crv, x, kid, alg, use], properties: { kty: { const: OKP }, crv: { const: Ed25519 }, x: { type: string }, kid: { type: string }, alg: { const: EdDSA }, use: { const: sig } } }
    Label:
      description: >-
        A short label a person reads (display_name, device_name, platform): at most 100 Unicode code points as sent; white space
        around it is trimmed; no control characters, line or paragraph separators, bidirectional controls or private-use
        characters inside; blank means none.
      type: [string, "null"]
      maxLength: 100
      pattern: "^[\\t-\\r \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000]*[^\\x00-\\x1F\\x7F-\\x9F\\u061C\\u200E\\u200F\\u2028\\u2029\\u202A-\\u202E\\u2066-\\u2069\\uE000-\\uF8FF\U000F0000-\U0010FFFF]*[\\t-\\r \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000]*$"
    EmailAddress:
      description: >-
        An email address: ASCII, a dot-atom local part of at most 64 characters, a domain of two or more labels whose last
        starts with a letter; at most 254 characters; spaces and tabs around it are ignored, and it compares ignoring case.
      type: string
      maxLength: 254
      allOf:
        - pattern: '^[ \t]*[A-Za-z0-9!#$%&''*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&''*+/=?^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])[ \t]*$'
        - pattern: '^[ \t]*[^@]{1,64}@'
    Device:
      type: object
      properties:
        device_name: { $ref: "#/components/schemas/Label" }
        platform: { $ref: "#/components/schemas/Label" }
  parameters:
    UserID: { name: id, in: path, required: true, schema: { type: string }, description: "The user's id (UUID)" }
    UserCode:
      name: user_code
      in: path
      required: true
      description: "The code the device shows, XXXX-XXXX; case and dashes are ignored"
      schema: { type: string, maxLength: 32 }
  requestBodies:
    Email:
      required: true
      content: { application/json: { schema: { type: object, required: [email], properties: { email: { $ref: "#/components/schemas/EmailAddress" } } }, example: { email: anna@example.com } } }
    Refresh:
      required: true
      content: { application/json: { schema: { type: object, required: [refresh_token], properties: { refresh_token: { type: string } } } } }
  responses:
    Session: { description: Signed in, content: { application/json: { schema: { $ref: "#/components/schemas/Session" } } } }
    SecondFactorRequired: { description: "A second factor is needed: answer the challenge with POST /api/v1/auth/mfa/verify", content: { application/json: { schema: { $ref: "#/components/schemas/SecondFactorRequired" } } } }
    User: { description: The user, content: { application/json: { schema: { $ref: "#/components/schemas/User" } } } }
    AdminUser: { description: "The user, as the admin API shows it", content: { application/json: { schema: { $ref: "#/components/schemas/AdminUser" } } } }
    CodeSent: { description: "A code was mailed (or, where the account may not exist, would have been)", content: { application/json: { schema: { type: object, required: [message], properties: { message: { type: string }, expires_in: { type: integer } } }, example: { message: Verification code sent, expires_in: 300 } } } }
    Message: { description: Done, content: { application/json: { schema: { type: object, required: [message], properties: { message: { type: string } } }, example: { message: Password changed } } } }
    InvalidRequest: { description: "INVALID_REQUEST: not JSON, a missing field or a field of the wrong type", content: { application/json: { schema: { $ref: "#/components/schemas/Error" }, example: { error: { code: INVALID_REQUEST, message: "The field `email` is required.", details: { field: email } } } } } }
    InvalidEmail: { description: "INVALID_EMAIL or INVALID_REQUEST", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    Unauthorized: { description: "UNAUTHORIZED: missing, malformed, expired or forged token, or an ended session", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    InvalidCode: { description: "INVALID_CODE with details.attempts_remaining (0 once the code is dead), or UNAUTHORIZED for a bad Bearer token", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    InvalidChallenge: { description: "INVALID_CHALLENGE (unknown, used, expired or dead), or INVALID_CODE with details.attempts_remaining", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    InvalidCredentials: { description: "INVALID_CREDENTIALS (or UNAUTHORIZED for a bad Bearer token)", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    RefreshRefused: { description: "INVALID_REFRESH_TOKEN, or REFRESH_TOKEN_REUSED (the session has been ended)", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    ReauthRequired: { description: "REAUTH_REQUIRED: adding or changing a credential needs a session signed in at most auth.fresh_auth seconds ago (the access token's auth_time)", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    AccountDisabled: { description: "ACCOUNT_DISABLED: an operator disabled the account (authd users disable), or FORBIDDEN: a sign-in policy asks for a second factor the account does not have", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    OAuthError:
      description: "RFC 6749 §5.2's error shape, Cache-Control: no-store"
      content: { application/json: { schema: { $ref: "#/components/schemas/OAuthError" }, example: { error: authorization_pending, error_description: The person has not approved this device yet. } } }
    Forbidden: { description: "FORBIDDEN: a session made by an API key or the device flow may not do this", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    ForbiddenOrReauth: { description: "FORBIDDEN for a session made by an API key or the device flow; REAUTH_REQUIRED for a session signed in longer ago than auth.fresh_auth (for an approval: that also does not send its own refresh token)", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    ApprovalUnauthorized: { description: "INVALID_CODE (a wrong match code, with details.attempts_remaining); REFRESH_TOKEN_REUSED (the proof was a refresh token rotated out longer ago than tokens.refresh_reuse_grace: the session has ended); UNAUTHORIZED", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    InvalidAPIKey: { description: "INVALID_API_KEY with details.reason unknown, revoked or expired", content: { application/json: { schema: { $ref: "#/components/schemas/Error" }, example: { error: { code: INVALID_API_KEY, message: The API key is revoked. Create a new one., details: { reason: revoked } } } } } }
    NotFound: { description: NOT_FOUND, content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    AccountExists: { description: "ACCOUNT_EXISTS, or IDENTITY_IN_USE when linking", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    IdentityInUse: { description: IDENTITY_IN_USE, content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    InvalidState: { description: INVALID_STATE, content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    UnsupportedMediaType: { description: "INVALID_REQUEST: the body was sent with a Content-Type other than application/json", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    PayloadTooLarge: { description: "PAYLOAD_TOO_LARGE: over 64 KiB", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
    RateLimited:
      description: RATE_LIMIT_EXCEEDED
      headers: { Retry-After: { schema: { type: integer, minimum: 1 } } }
      content: { application/json: { schema: { $ref: "#/components/schemas/Error" }, example: { error: { code: RATE_LIMIT_EXCEEDED, message: Too many requests. Try again later., details: { retry_after: 42 } } } } }
    Unavailable: { description: "UNAVAILABLE: the store cannot persist changes", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
"""#
}
