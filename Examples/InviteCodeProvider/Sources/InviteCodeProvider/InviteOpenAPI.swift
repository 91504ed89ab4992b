public import AuthKernel

extension InviteCodeProvider {
    /// The redeem operation in the server's `GET /openapi.yaml`, beside the kernel's and other providers' parts.
    public static let openAPI = [
        OpenAPIFragment(
            name: "invite",
            yaml: #"""
tags:
  - { name: invite, description: "Personal invite codes" }
paths:
  /api/v1/auth/invite/redeem:
    post:
      operationId: redeemInviteCode
      tags: [invite]
      summary: Sign in with a personal invite code (the first redeem creates the account)
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [code]
              properties:
                code: { type: string, minLength: 1, maxLength: 128 }
                display_name: { $ref: "#/components/schemas/Label" }
                device_name: { $ref: "#/components/schemas/Label" }
                platform: { $ref: "#/components/schemas/Label" }
            example: { code: 7d2f-93ac-41b8-e0c6, display_name: Ada }
      responses:
        "200": { $ref: "#/components/responses/Session" }
        "202": { $ref: "#/components/responses/SecondFactorRequired" }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/InvalidInvite" }
        "403": { $ref: "#/components/responses/AccountDisabled" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
components:
  responses:
    InvalidInvite: { description: INVALID_INVITE, content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
"""#)
    ]
}
