import AnonymousProvider
public import AuthKernel

extension PINProvider {
    /// The PIN provider's operations in `GET /openapi.yaml`, with anonymous sign-in's, which it brings along.
    public static let openAPI = [
        OpenAPIFragment(
            name: "pin",
            yaml: #"""
tags:
  - { name: pin, description: "A numeric PIN, and sign-in with user name or id and PIN" }
paths:
  /api/v1/auth/pin:
    put:
      operationId: setPIN
      tags: [pin]
      summary: Set the PIN, or change it with current_pin (other sessions end); needs a session signed in within auth.fresh_auth
      security: [{ bearer: [] }]
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, required: [pin], properties: { pin: { $ref: "#/components/schemas/PIN" }, current_pin: { description: Required when a PIN is set, type: [string, "null"] } } }, example: { pin: "4711" } } }
      responses:
        "403": { $ref: "#/components/responses/ReauthRequired" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "204": { description: Set }
        "400": { $ref: "#/components/responses/InvalidPIN" }
        "401": { $ref: "#/components/responses/InvalidCredentials" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/pin/verify:
    post:
      operationId: verifyPIN
      tags: [pin]
      summary: Sign in with user_id or username and the PIN (user_id wins when both are sent)
      requestBody:
        required: true
        content:
          application/json:
            schema:
              allOf:
                - { $ref: "#/components/schemas/Device" }
                - { type: object, required: [pin], properties: { user_id: { type: [string, "null"] }, username: { type: [string, "null"] }, pin: { type: string } } }
                - anyOf:
                    - { type: object, required: [user_id], properties: { user_id: { type: string } } }
                    - { type: object, required: [username], properties: { username: { type: string } } }
            example: { username: otto, pin: "4711" }
      responses:
        "403": { $ref: "#/components/responses/AccountDisabled" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/Session" }
        "202": { $ref: "#/components/responses/SecondFactorRequired" }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/InvalidCredentials" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
components:
  schemas:
    PIN: { description: 4 to 8 digits, type: string, pattern: "^[0-9]{4,8}$" }
  responses:
    InvalidPIN: { description: "INVALID_PIN (4–8 digits), or INVALID_REQUEST (current_pin missing while a PIN is set)", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
"""#)
    ] + AnonymousProvider.openAPI
}
