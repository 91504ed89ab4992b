public import AuthKernel

extension PasswordProvider {
    /// The password provider's operations in `GET /openapi.yaml`.
    public static let openAPI = [
        OpenAPIFragment(
            name: "password",
            yaml: #"""
tags:
  - { name: password, description: "Email and password, with reset by a mailed code or by another device's approval" }
paths:
  /api/v1/auth/password/register:
    post:
      operationId: registerWithPassword
      tags: [password]
      summary: Register; a code is mailed and nothing exists until it is verified
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, required: [email, password], properties: { email: { $ref: "#/components/schemas/EmailAddress" }, password: { type: string }, display_name: { $ref: "#/components/schemas/Label" } } }, example: { email: anna@example.com, password: correct horse battery } } }
      responses:
        "401": { $ref: "#/components/responses/Unauthorized" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "202": { description: Verification required, content: { application/json: { schema: { type: object, required: [status, email], properties: { status: { const: verification_required }, email: { type: string } } } } } }
        "400": { $ref: "#/components/responses/WeakPasswordOrEmail" }
        "409": { $ref: "#/components/responses/AccountExists" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/password/verify-email:
    post:
      operationId: verifyPasswordRegistration
      tags: [password]
      summary: Finish a registration with the mailed code and the password chosen at registration (with the same user's Bearer when register had one)
      requestBody:
        required: true
        content:
          application/json:
            schema:
              allOf:
                - { $ref: "#/components/schemas/Device" }
                - { type: object, required: [email, code, password], properties: { email: { $ref: "#/components/schemas/EmailAddress" }, code: { type: string }, password: { type: string } } }
            example: { email: anna@example.com, code: "123456", password: correct horse battery }
      responses:
        "403": { $ref: "#/components/responses/AccountDisabled" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/Session" }
        "202": { $ref: "#/components/responses/SecondFactorRequired" }
        "400": { $ref: "#/components/responses/InvalidEmail" }
        "401": { $ref: "#/components/responses/InvalidCode" }
        "409": { $ref: "#/components/responses/IdentityInUse" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/password/resend-verification:
    post:
      operationId: resendPasswordVerification
      tags: [password]
      summary: Mail the verification code again (the same answer whether or not anything is pending)
      requestBody: { $ref: "#/components/requestBodies/Email" }
      responses:
        "401": { $ref: "#/components/responses/Unauthorized" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/CodeSent" }
        "400": { $ref: "#/components/responses/InvalidEmail" }
        "429": { $ref: "#/components/responses/RateLimited" }
  /api/v1/auth/mfa/email-code:
    post:
      operationId: mailSecondFactorCode
      tags: [second-factor]
      summary: Mail a new code for a challenge that offers email_code (password.login_requires_email_code); the 202 already mailed one
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, required: [challenge], properties: { challenge: { type: string } } }, example: { challenge: 3q2-7wEAAAA } } }
      responses:
        "204": { description: Mailed }
        "400": { $ref: "#/components/responses/InvalidRequest" }
        "401": { $ref: "#/components/responses/InvalidChallenge" }
        "409": { $ref: "#/components/responses/InvalidState" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/password/login:
    post:
      operationId: signInWithPassword
      tags: [password]
      summary: Sign in with email and password
      requestBody:
        required: true
        content: { application/json: { schema: { allOf: [{ $ref: "#/components/schemas/Device" }, { type: object, required: [email, password], properties: { email: { $ref: "#/components/schemas/EmailAddress" }, password: { type: string } } }] }, example: { email: anna@example.com, password: correct horse battery } } }
      responses:
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/Session" }
        "202": { $ref: "#/components/responses/SecondFactorRequired" }
        "400": { $ref: "#/components/responses/InvalidEmail" }
        "401": { $ref: "#/components/responses/InvalidCredentials" }
        "403": { $ref: "#/components/responses/EmailNotVerifiedOrDisabled" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/password/change:
    post:
      operationId: changePassword
      tags: [password]
      summary: Change the password (with current_password), or add a first one (with a session signed in within auth.fresh_auth); every other session ends
      security: [{ bearer: [] }]
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, required: [new_password], properties: { current_password: { description: Required when the account has a password, type: [string, "null"] }, new_password: { type: string } } } } }
      responses:
        "403": { $ref: "#/components/responses/ReauthRequired" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "204": { description: Changed }
        "400": { $ref: "#/components/responses/WeakPasswordOrEmail" }
        "401": { $ref: "#/components/responses/InvalidCredentials" }
        "409": { $ref: "#/components/responses/InvalidState" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/password/reset/email/initiate:
    post:
      operationId: requestPasswordResetCode
      tags: [password]
      summary: Mail a reset code if the account exists (the same answer either way)
      requestBody: { $ref: "#/components/requestBodies/Email" }
      responses:
        "401": { $ref: "#/components/responses/Unauthorized" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200": { $ref: "#/components/responses/CodeSent" }
        "400": { $ref: "#/components/responses/InvalidEmail" }
        "429": { $ref: "#/components/responses/RateLimited" }
  /api/v1/auth/password/reset/email/verify:
    post:
      operationId: resetPasswordWithCode
      tags: [password]
      summary: "Set a new password with the reset code (every session ends); without new_password, trade the code for a reset_token (two steps)"
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, required: [email, code], properties: { email: { $ref: "#/components/schemas/EmailAddress" }, code: { type: string }, new_password: { type: string } } } } }
      responses:
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200":
          description: "Password changed; or, without new_password, the reset token (single use, 600 s)"
          content:
            application/json:
              schema:
                oneOf:
                  - { type: object, required: [message], properties: { message: { type: string } } }
                  - { type: object, required: [reset_token, expires_in], properties: { reset_token: { type: string }, expires_in: { type: integer } } }
        "400": { $ref: "#/components/responses/WeakPasswordOrEmail" }
        "401": { $ref: "#/components/responses/InvalidCode" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/password/reset/complete:
    post:
      operationId: completePasswordReset
      tags: [password]
      summary: "The two-step reset's second step: the reset_token and the new password; with sign_in, a session"
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [reset_token, new_password]
              properties:
                reset_token: { type: string }
                new_password: { type: string }
                sign_in: { type: boolean }
                device_name: { $ref: "#/components/schemas/Label" }
                platform: { $ref: "#/components/schemas/Label" }
      responses:
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "200":
          description: "Password changed (every session ended); with sign_in, the session response"
          content:
            application/json:
              schema:
                oneOf:
                  - { type: object, required: [message], properties: { message: { type: string } } }
                  - { $ref: "#/components/schemas/Session" }
        "202": { $ref: "#/components/responses/SecondFactorRequired" }
        "400": { $ref: "#/components/responses/WeakPasswordOrEmail" }
        "401": { $ref: "#/components/responses/InvalidCode" }
        "403": { $ref: "#/components/responses/AccountDisabled" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/password/reset/device/initiate:
    post:
      operationId: requestPasswordResetApproval
      tags: [password]
      summary: Ask the account's signed-in devices to approve a new password (the same answer for unknown emails)
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, required: [email, new_password], properties: { email: { $ref: "#/components/schemas/EmailAddress" }, new_password: { type: string }, device_name: { $ref: "#/components/schemas/Label" } } } } }
      responses:
        "401": { $ref: "#/components/responses/Unauthorized" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "202":
          description: Request made; show match_code to the person
          content: { application/json: { schema: { type: object, required: [request_id, expires_at, match_code], properties: { request_id: { type: string }, expires_at: { type: string, format: date-time }, match_code: { type: string } } } } }
        "400": { $ref: "#/components/responses/WeakPasswordOrEmail" }
        "429": { $ref: "#/components/responses/RateLimited" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /api/v1/auth/password/reset/device/{request_id}:
    get:
      operationId: getPasswordResetApproval
      tags: [password]
      summary: Where a device reset stands
      parameters: [{ name: request_id, in: path, required: true, schema: { type: string } }]
      responses:
        "401": { $ref: "#/components/responses/Unauthorized" }
        "200": { description: Status, content: { application/json: { schema: { type: object, required: [status, expires_at], properties: { status: { enum: [pending, approved, denied, expired, completed] }, expires_at: { type: string, format: date-time } } } } } }
        "404": { $ref: "#/components/responses/NotFound" }
  /api/v1/auth/password/reset/device/{request_id}/complete:
    post:
      operationId: completePasswordResetApproval
      tags: [password]
      summary: Apply an approved reset, once; every session ends
      parameters: [{ name: request_id, in: path, required: true, schema: { type: string } }]
      responses:
        "401": { $ref: "#/components/responses/Unauthorized" }
        "200": { $ref: "#/components/responses/Message" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409": { $ref: "#/components/responses/InvalidState" }
        "503": { $ref: "#/components/responses/Unavailable" }
components:
  responses:
    WeakPasswordOrEmail: { description: "WEAK_PASSWORD (details.reason: too_short, too_long, matches_email, too_common), INVALID_EMAIL or INVALID_REQUEST", content: { application/json: { schema: { $ref: "#/components/schemas/Error" }, example: { error: { code: WEAK_PASSWORD, message: Use at least 8 characters., details: { reason: too_short } } } } } }
    EmailNotVerifiedOrDisabled: { description: "EMAIL_NOT_VERIFIED (the code is mailed again), or ACCOUNT_DISABLED", content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
"""#)
    ]
}
