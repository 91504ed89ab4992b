public import AuthKernel

extension AppleProvider {
    /// The Apple provider's operation in `GET /openapi.yaml`.
    public static let openAPI = [
        OpenAPIFragment(
            name: "apple",
            yaml: #"""
tags:
  - { name: apple, description: "Sign in with Apple" }
paths:
  /api/v1/auth/apple:
    post:
      operationId: signInWithApple
      tags: [apple]
      summary: Sign in with Apple (as every body, the camelCase spellings AuthenticationServices uses are accepted too)
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [identity_token]
              properties:
                identity_token: { type: string }
                authorization_code: { type: [string, "null"], maxLength: 1024 }
                nonce: { type: [string, "null"], maxLength: 256 }
                full_name: { $ref: "#/components/schemas/AppleFullName" }
                email: { description: Ignored (the address comes from the identity token), type: [string, "null"] }
                device_name: { $ref: "#/components/schemas/Label" }
                platform: { $ref: "#/components/schemas/Label" }
            example: { identity_token: eyJraWQiOi..., nonce: raw-nonce, full_name: { given_name: Ada, family_name: Lovelace } }
      responses:
        "403": { $ref: "#/components/responses/AccountDisabled" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/Session" }
        "202": { $ref: "#/components/responses/SecondFactorRequired" }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/InvalidAppleToken" }
        "409": { $ref: "#/components/responses/IdentityInUse" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
components:
  schemas:
    AppleFullName:
      description: The name Apple gives on the first sign-in; "given family" becomes the display name (at most 100 code points together)
      type: [object, "null"]
      properties:
        given_name: { $ref: "#/components/schemas/Label" }
        givenName: { $ref: "#/components/schemas/Label" }
        family_name: { $ref: "#/components/schemas/Label" }
        familyName: { $ref: "#/components/schemas/Label" }
  responses:
    InvalidAppleToken: { description: "INVALID_APPLE_TOKEN (or UNAUTHORIZED for a bad Bearer token)", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
"""#)
    ]
}
