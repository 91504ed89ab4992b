public import AuthKernel

extension EmailProvider {
    /// The email provider's operations in `GET /openapi.yaml`.
    public static let openAPI = [
        OpenAPIFragment(
            name: "email",
            yaml: #"""
tags:
  - { name: email, description: "Sign in with a code mailed to the address" }
paths:
  /api/v1/auth/email/send-code:
    post:
      operationId: sendEmailCode
      tags: [email]
      summary: Mail a sign-in code
      requestBody: { $ref: "#/components/requestBodies/Email" }
      responses:
        "401": { $ref: "#/components/responses/Unauthorized" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/CodeSent" }
        "400": { $ref: "#/components/responses/InvalidEmail" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/email/resend-code:
    post:
      operationId: resendEmailCode
      tags: [email]
      summary: Mail a new sign-in code
      requestBody: { $ref: "#/components/requestBodies/Email" }
      responses:
        "401": { $ref: "#/components/responses/Unauthorized" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/CodeSent" }
        "400": { $ref: "#/components/responses/InvalidEmail" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/email/verify:
    post:
      operationId: verifyEmailCode
      tags: [email]
      summary: Sign in with the mailed code (links to the caller with a Bearer token)
      requestBody:
        required: true
        content:
          application/json:
            schema:
              allOf:
                - { $ref: "#/components/schemas/Device" }
                - { type: object, required: [email, code], properties: { email: { $ref: "#/components/schemas/EmailAddress" }, code: { type: string } } }
            example: { email: anna@example.com, code: "123456" }
      responses:
        "403": { $ref: "#/components/responses/AccountDisabled" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/Session" }
        "202": { $ref: "#/components/responses/SecondFactorRequired" }
        "400": { $ref: "#/components/responses/InvalidEmail" }
        "401": { $ref: "#/components/responses/InvalidCode" }
        "409": { $ref: "#/components/responses/IdentityInUse" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
"""#)
    ]
}
