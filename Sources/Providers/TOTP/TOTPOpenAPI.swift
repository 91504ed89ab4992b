public import AuthKernel

extension TOTPProvider {
    /// The TOTP provider's operations in `GET /openapi.yaml`.
    public static let openAPI = [
        OpenAPIFragment(
            name: "totp",
            yaml: #"""
paths:
  /api/v1/auth/mfa/totp/enroll:
    post:
      operationId: enrollTOTP
      tags: [second-factor]
      summary: A new TOTP secret and its otpauth URI for an authenticator app; confirm it with the app's first code within 10 minutes; needs a session signed in within auth.fresh_auth
      security: [{ bearer: [] }]
      responses:
        "200":
          description: The secret (base32) and the otpauth URI
          content: { application/json: { schema: { type: object, required: [secret, otpauth_uri], properties: { secret: { type: string }, otpauth_uri: { type: string } } }, example: { secret: JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP, otpauth_uri: "otpauth://totp/authd:a%40b.c?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=authd&algorithm=SHA1&digits=6&period=30" } } }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/ReauthRequired" }
        "409": { $ref: "#/components/responses/InvalidState" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/mfa/totp/confirm:
    post:
      operationId: confirmTOTP
      tags: [second-factor]
      summary: Turn TOTP on with the app's first code; answers the ten recovery codes, shown only here
      security: [{ bearer: [] }]
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, required: [code], properties: { code: { type: string } } }, example: { code: "123456" } } }
      responses:
        "200": { $ref: "#/components/responses/RecoveryCodes" }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/InvalidCode" }
        "403": { $ref: "#/components/responses/Forbidden" }
        "409": { $ref: "#/components/responses/InvalidState" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/mfa/totp:
    delete:
      operationId: deleteTOTP
      tags: [second-factor]
      summary: Turn TOTP off, with the recovery codes; needs a session signed in within auth.fresh_auth
      security: [{ bearer: [] }]
      responses:
        "204": { description: Turned off }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/ReauthRequired" }
        "404": { $ref: "#/components/responses/NotFound" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/mfa/recovery-codes:
    post:
      operationId: replaceRecoveryCodes
      tags: [second-factor]
      summary: A new set of ten recovery codes (the old ones stop working); needs a second factor and a session signed in within auth.fresh_auth
      security: [{ bearer: [] }]
      responses:
        "200": { $ref: "#/components/responses/RecoveryCodes" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/ReauthRequired" }
        "409": { $ref: "#/components/responses/InvalidState" }
        "503": { $ref: "#/components/responses/Unavailable" }
components:
  responses:
    RecoveryCodes:
      description: Ten single-use recovery codes, shown once
      content: { application/json: { schema: { type: object, required: [recovery_codes], properties: { recovery_codes: { type: array, items: { type: string }, minItems: 10, maxItems: 10 } } }, example: { recovery_codes: [ABCDE-FGHIJ, KLMNO-PQRST, UVWXY-Z2345, "67ABC-DEFGH", IJKLM-NOPQR, STUVW-XYZ23, "4567A-BCDEF", GHIJK-LMNOP, QRSTU-VWXYZ, "23456-7ABCD"] } } }
"""#
        )
    ]
}
