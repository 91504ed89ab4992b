public import AuthKernel

extension AnonymousProvider {
    /// Anonymous sign-in's and user names' operations in `GET /openapi.yaml`.
    public static let openAPI = [
        OpenAPIFragment(
            name: "anonymous",
            yaml: #"""
tags:
  - { name: anonymous, description: "Anonymous accounts and user names" }
paths:
  /api/v1/auth/anonymous:
    post:
      operationId: signInAnonymously
      tags: [anonymous]
      summary: A session for a new anonymous user (body optional)
      requestBody: { required: false, content: { application/json: { schema: { $ref: "#/components/schemas/Device" } } } }
      responses:
        "401": { $ref: "#/components/responses/Unauthorized" }
        "403": { $ref: "#/components/responses/AccountDisabled" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/Session" }
        "202": { $ref: "#/components/responses/SecondFactorRequired" }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/username:
    put:
      operationId: setUsername
      tags: [anonymous]
      summary: Choose a user name (unique ignoring case)
      security: [{ bearer: [] }]
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, required: [username], properties: { username: { $ref: "#/components/schemas/Username" } } }, example: { username: otto } } }
      responses:
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/User" }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "409": { $ref: "#/components/responses/UsernameTaken" }
        "503": { $ref: "#/components/responses/Unavailable" }
components:
  schemas:
    Username: { description: "3 to 32 of A–Z a–z 0–9 _ . -", type: string, pattern: "^[A-Za-z0-9_.-]{3,32}$" }
  responses:
    UsernameTaken: { description: USERNAME_TAKEN, content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
"""#)
    ]
}
