public import AuthKernel

extension PasskeyProvider {
    /// The passkey provider's operations in `GET /openapi.yaml`. WebAuthn's own JSON (options,
    /// credentials) is described loosely: its specification defines it, camelCase.
    public static let openAPI = [
        OpenAPIFragment(
            name: "passkey",
            yaml: #"""
tags:
  - { name: passkey, description: "Passkeys (WebAuthn): registration, sign-in with a passkey alone, the passkey as a second factor" }
paths:
  /.well-known/apple-app-site-association:
    get:
      operationId: appleAppSiteAssociation
      tags: [passkey]
      summary: The webcredentials association for the iOS apps in passkeys.apple_app_ids (served only when it lists any)
      responses:
        "200": { description: The association, content: { application/json: { schema: { type: object, required: [webcredentials], properties: { webcredentials: { type: object, properties: { apps: { type: array, items: { type: string } } } } } }, example: { webcredentials: { apps: [ABCDE12345.org.example.app] } } } } }
  /api/v1/auth/passkeys/register/options:
    post:
      operationId: passkeyRegistrationOptions
      tags: [passkey]
      summary: PublicKeyCredentialCreationOptionsJSON for a new passkey (resident key and user verification required, attestation none); needs a session signed in within auth.fresh_auth
      security: [{ bearer: [] }]
      responses:
        "200": { description: "The creation options, to hand to the platform's passkey API", content: { application/json: { schema: { $ref: "#/components/schemas/WebAuthnJSON" } } } }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/ReauthRequired" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/passkeys/register:
    post:
      operationId: registerPasskey
      tags: [passkey]
      summary: Add the passkey the platform created (a RegistrationResponseJSON) with an optional name; needs a session signed in within auth.fresh_auth
      security: [{ bearer: [] }]
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, required: [credential], properties: { credential: { $ref: "#/components/schemas/RegistrationResponseJSON" }, name: { $ref: "#/components/schemas/Label" } } } } }
      responses:
        "201": { description: Added, content: { application/json: { schema: { $ref: "#/components/schemas/Passkey" } } } }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/ReauthRequired" }
        "409": { $ref: "#/components/responses/IdentityInUse" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/passkeys:
    get:
      operationId: listPasskeys
      tags: [passkey]
      summary: The user's passkeys
      security: [{ bearer: [] }]
      responses:
        "200": { description: The passkeys, content: { application/json: { schema: { type: object, required: [passkeys], properties: { passkeys: { type: array, items: { $ref: "#/components/schemas/Passkey" } } } } } } }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/Forbidden" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/passkeys/{id}:
    delete:
      operationId: deletePasskey
      tags: [passkey]
      summary: Remove a passkey by its credential id; needs a session signed in within auth.fresh_auth
      security: [{ bearer: [] }]
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses:
        "204": { description: Removed }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/ReauthRequired" }
        "404": { $ref: "#/components/responses/NotFound" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/passkeys/login/options:
    post:
      operationId: passkeySignInOptions
      tags: [passkey]
      summary: PublicKeyCredentialRequestOptionsJSON for signing in with a discoverable passkey (no allowCredentials)
      responses:
        "200": { description: The request options, content: { application/json: { schema: { $ref: "#/components/schemas/WebAuthnJSON" } } } }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/passkeys/login:
    post:
      operationId: signInWithPasskey
      tags: [passkey]
      summary: Sign in with a passkey's assertion (an AuthenticationResponseJSON); amr ["passkey","mfa"], no further factor
      requestBody:
        required: true
        content:
          application/json:
            schema:
              allOf:
                - { $ref: "#/components/schemas/Device" }
                - { type: object, required: [credential], properties: { credential: { $ref: "#/components/schemas/AuthenticationResponseJSON" } } }
      responses:
        "200": { $ref: "#/components/responses/Session" }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/InvalidCredentials" }
        "403": { $ref: "#/components/responses/AccountDisabled" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
components:
  schemas:
    WebAuthnJSON: { description: "A WebAuthn Level 3 JSON object (options), camelCase as the specification defines it", type: object, additionalProperties: true }
    RegistrationResponseJSON:
      description: "WebAuthn Level 3 RegistrationResponseJSON, as the platform returns it; base64url fields"
      type: object
      required: [id, type, response]
      properties:
        id: { type: string }
        rawId: { type: string }
        type: { type: string, enum: [public-key] }
        response: { type: object, required: [clientDataJSON, attestationObject], properties: { clientDataJSON: { type: string }, attestationObject: { type: string } } }
    AuthenticationResponseJSON:
      description: "WebAuthn Level 3 AuthenticationResponseJSON, as the platform returns it; base64url fields"
      type: object
      required: [id, type, response]
      properties:
        id: { type: string }
        rawId: { type: string }
        type: { type: string, enum: [public-key] }
        response: { type: object, required: [clientDataJSON, authenticatorData, signature], properties: { clientDataJSON: { type: string }, authenticatorData: { type: string }, signature: { type: string }, userHandle: { type: [string, "null"] } } }
    Passkey:
      type: object
      required: [id, name, created_at, backed_up]
      properties:
        id: { description: The credential id, base64url, type: string }
        name: { type: string }
        created_at: { type: string, format: date-time }
        last_used_at: { type: [string, "null"], format: date-time }
        backed_up: { description: Synced to the user's other devices (a multi-device passkey), type: boolean }
"""#
        )
    ]
}
